//! Missing parts: no Vulkan device, an output that cannot be written, a missing texture, memory the
//! device does not have. Each gives one clear message (naming the package where installing one is
//! the fix) and a non-zero exit, or a warning and a fallback where rendering can go on; never a
//! panic or a hang. (No display: tests/it/cli.rs. No loader library: libvulkan1 is a dependency of
//! the window system here and cannot be hidden from a test; the message is `gpu::Error::Loader`.)

use crate::common::{scratch_in, text, vkskin};
use std::path::PathBuf;
use std::process::Output;

fn scratch(name: &str) -> PathBuf {
    scratch_in("missing", name)
}

fn assert_clear_failure(output: &Output, expected: &[&str]) {
    let message = text(output);
    assert!(!output.status.success(), "{message}");
    for needle in expected {
        assert!(message.contains(needle), "'{needle}' in: {message}");
    }
    assert!(!message.contains("panicked"), "{message}");
    assert_eq!(message.matches("vkskin: error:").count(), 1, "one message: {message}");
}

#[test]
fn no_vulkan_device_names_the_driver_package() {
    let output = vkskin()
        .args(["render", "--size", "32x24", "--out"])
        .arg(scratch("no-device.png"))
        .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
        .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
        .output()
        .expect("vkskin runs");
    assert_clear_failure(&output, &["mesa-vulkan-drivers"]);
}

#[test]
fn an_output_that_cannot_be_written_fails_before_rendering() {
    let output = vkskin().args(["render", "--size", "32x24", "--out", "/proc/vkskin/frame.png"]).output().expect("vkskin runs");
    assert_clear_failure(&output, &["cannot write /proc/vkskin/frame.png"]);
}

#[test]
fn a_missing_texture_warns_and_renders_with_the_default_colour() {
    let folder = scratch("no-texture");
    std::fs::create_dir_all(&folder).expect("folder");
    for file in ["figure.md5mesh", "figure_walk.md5anim"] {
        std::fs::copy(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets").join(file), folder.join(file)).expect("copy");
    }
    let _ = std::fs::remove_file(folder.join("figure_body.png"));
    let out = folder.join("frame.png");
    let output = vkskin()
        .arg("render")
        .arg(folder.join("figure.md5mesh"))
        .args(["--size", "64x48", "--validate", "--out"])
        .arg(&out)
        .output()
        .expect("vkskin runs");
    let message = text(&output);
    assert!(output.status.success(), "{message}");
    assert!(message.contains("figure_body") && message.to_lowercase().contains("texture"), "warns: {message}");
    assert!(image::open(&out).is_ok(), "the frame was written");
}

#[test]
fn out_of_device_memory_is_an_error_not_a_hang() {
    // 16384² at 4× MSAA is 4 GiB of colour alone: past lavapipe's 2 GiB heap (and most GPUs' one
    // allocation). The allocator's error surfaces with the resource's name. A device with more
    // memory (an H200's 141 GB heap) may render it; then it must succeed or fail just as cleanly.
    let colour_bytes = 16384u64 * 16384 * 4 * 4;
    let heap = vkskin::render::largest_heap(&crate::common::validated_device());
    let started = std::time::Instant::now();
    let output =
        vkskin().args(["render", "--size", "16384x16384", "--out"]).arg(scratch("huge.png")).output().expect("vkskin runs");
    if heap < colour_bytes || !output.status.success() {
        assert_clear_failure(&output, &["forward.color_msaa"]);
    } else {
        println!("the device's {heap}-byte heap holds the frame: it rendered");
    }
    assert!(started.elapsed().as_secs() < 120, "it gave up promptly");
}
