//! Each mode for 300 frames or more with the validation layer (synchronization validation
//! included) and zero messages of warning or error severity: the viewer under Xvfb with the debug
//! views on, `render --frames`, and `bench` with few instances.

use crate::common::{run_validated, text, view_under_xvfb, xvfb_available};
use std::process::Command;

/// Success (with --validate any message fails the run) and no message in the log.
#[test]
fn view_runs_300_frames_with_debug_views_under_xvfb() {
    if !xvfb_available() {
        return;
    }
    let message = run_validated(
        view_under_xvfb()
            .args(["--frames", "300", "--size", "160x120", "--instances", "3", "--validate"])
            .args(["--debug", "skeleton,shadowmap,wireframe,bounds"]),
    );
    assert!(message.contains("presented 300 frames"), "{message}");
}

#[test]
fn render_runs_300_frames() {
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("long-render.png");
    run_validated(
        Command::new(env!("CARGO_BIN_EXE_vkskin"))
            .env("VKSKIN_CACHE_DIR", crate::common::derived_cache())
            .args(["render", "--frames", "300", "--time", "5", "--size", "96x72", "--instances", "3", "--validate", "--out"])
            .arg(&out),
    );
    assert!(image::open(&out).is_ok());
}

#[test]
fn bench_runs_300_frames_a_strategy() {
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("long-bench");
    let output = Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .env("VKSKIN_CACHE_DIR", crate::common::derived_cache())
        .args(["bench", "--instances", "2", "--measure", "290", "--warmup", "10", "--size", "64x48", "--validate", "--out-dir"])
        .arg(&out)
        .env("RUST_LOG", "warn")
        .output()
        .expect("vkskin runs");
    let message = text(&output);
    assert!(output.status.success() && !message.contains("VALIDATION"), "{message}");
}

#[test]
fn a_window_storm_leaves_the_viewer_drawing_correctly() {
    if !xvfb_available() {
        return;
    }
    let screenshot = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("after-storm.png");
    let _ = std::fs::remove_file(&screenshot);
    // 300 events at the window, one a frame: resizes down to 1×1 and to thin strips, 0×0 as a
    // minimized window reports it, minimize and restore, focus, hide and show, forced
    // recreations; then 100 more frames, and the last one offscreen through the same renderer.
    // The panel is drawn through the storm and hidden before the end, so the image is the scene.
    let message = run_validated(
        view_under_xvfb()
            .args(["--storm", "300", "--frames", "400", "--size", "200x150", "--instances", "2", "--validate"])
            .args(["--drive", "390:panel=off", "--screenshot"])
            .arg(&screenshot),
    );
    assert!(message.contains("storm: 300 window events"), "{message}");
    let swapchains: u32 = message
        .split("window events, ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|count| count.parse().ok())
        .unwrap_or(0);
    assert!(swapchains >= 50, "the swapchain was recreated through the storm: {message}");
    // The image afterwards: sky at the top, and the figures (dark clothes) where they stand.
    let image = image::open(&screenshot).expect("screenshot written").to_rgba8();
    let sky = *image.get_pixel(image.width() / 2, 2);
    assert!(sky[2] > sky[0], "sky above: {sky:?}");
    let dark = image.pixels().filter(|pixel| u32::from(pixel[0]) + u32::from(pixel[1]) + u32::from(pixel[2]) < 200).count();
    let pixels = (image.width() * image.height()) as usize;
    println!("after the storm: {}x{}, {dark} dark pixels", image.width(), image.height());
    assert!(dark > pixels / 400 && dark < pixels / 4, "the figures are drawn: {dark} of {pixels}");
}
