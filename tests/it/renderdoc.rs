//! A headless frame captured with RenderDoc on lavapipe reads like the code: every pass labelled
//! with its file's name, and the skinned-vertex buffer named. The capture is taken the way the
//! docs/profiling.md shows (`renderdoccmd capture` around `vkskin render --capture-frame N`) and converted to
//! XML with `renderdoccmd convert`. Needs the Debian package `renderdoc` (scripts/install-deps
//! installs it).

use crate::common::{scratch_in, text};
use std::path::PathBuf;
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    scratch_in("renderdoc", name)
}

/// Whether RenderDoc's command line is installed: the tests that capture skip with a message where
/// it is not (on Windows, RenderDoc's installer puts it on PATH), or fail under VKSKIN_REQUIRE_MODELS.
fn renderdoc_available() -> bool {
    let found = Command::new("renderdoccmd").arg("version").output().is_ok_and(|output| output.status.success());
    if !found {
        crate::common::skip("renderdoccmd is not installed (Debian package 'renderdoc'; scripts/install-deps installs it)");
    }
    found
}

fn renderdoccmd() -> Command {
    let found = Command::new("renderdoccmd").arg("version").output();
    assert!(
        found.is_ok_and(|output| output.status.success()),
        "renderdoccmd not found: install the Debian package 'renderdoc' (scripts/install-deps does)"
    );
    Command::new("renderdoccmd")
}

/// The .rdc path vkskin printed as "captured frame N: PATH".
fn captured_path(output: &str, frame: u64) -> PathBuf {
    let prefix = format!("captured frame {frame}: ");
    let line = output.lines().find_map(|line| line.strip_prefix(prefix.as_str()));
    PathBuf::from(line.unwrap_or_else(|| panic!("vkskin printed no capture path: {output}")).trim())
}

/// A capture as RenderDoc's XML (`renderdoccmd convert`), written beside it in `folder`.
fn as_xml(capture: &std::path::Path, folder: &std::path::Path) -> String {
    let xml = folder.join("capture.xml");
    let output = renderdoccmd()
        .args(["convert", "-f"])
        .arg(capture)
        .arg("-o")
        .arg(&xml)
        .args(["-c", "xml"])
        .output()
        .expect("renderdoccmd convert runs");
    assert!(output.status.success(), "{}", text(&output));
    std::fs::read_to_string(&xml).expect("the XML")
}

#[test]
fn a_headless_capture_holds_the_pass_labels_and_the_named_skinned_buffer() {
    if !renderdoc_available() {
        return;
    }
    let folder = scratch("frame");
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("capture folder");
    let output = renderdoccmd()
        .args(["capture", "-w", "-c"])
        .arg(folder.join("vkskin"))
        .arg(env!("CARGO_BIN_EXE_vkskin"))
        // The figure named: one model, so the triangle pass runs (the default crowd mixes its variants).
        .arg("render")
        .arg(vkskin::app::default_model_path())
        .args(["--instances", "2", "--size", "160x120", "--light-culling", "on", "--capture-frame", "2", "--out"])
        .arg(folder.join("frame.png"))
        .env("RUST_LOG", "warn")
        .output()
        .expect("renderdoccmd runs");
    let message = text(&output);
    assert!(output.status.success(), "{message}");
    let capture = captured_path(&message, 2);
    assert!(capture.extension().is_some_and(|extension| extension == "rdc"), "{}", capture.display());
    assert!(std::fs::metadata(&capture).is_ok_and(|metadata| metadata.len() > 10_000), "{} written", capture.display());

    let xml = as_xml(&capture, &folder);
    // Each pass's label, as a string of the capture's label calls.
    for label in ["cull", "palette", "skin", "shadow", "forward", "resolve", "ground", "model"] {
        assert!(xml.contains(&format!(">{label}<")), "label '{label}' in the capture");
    }
    assert!(xml.contains("vkCmdBeginDebugUtilsLabelEXT"), "labels recorded as debug-utils labels");
    // The skinned buffer, named, and bound as the vertex input of the shadow and forward draws.
    for name in ["skinned_vertices[0]", "joint_palettes[0]", "cull.counters", "shadow.depth", "model.indices"] {
        assert!(xml.contains(&format!(">{name}<")), "object name '{name}' in the capture");
    }
    assert!(xml.contains("vkCmdBindVertexBuffers"), "vertex buffers bound in the frame");
    // The shadow and forward passes draw the triangle pass's light and camera runs: a command per
    // (group of instances, mesh).
    assert!(xml.contains("vkCmdDrawIndexedIndirect"), "the culled indirect draws");
    for name in ["triangles.camera_draws", "triangles.light_draws", "triangles.light_indices[0]"] {
        assert!(xml.contains(&format!(">{name}<")), "object name '{name}' in the capture");
    }
}

#[test]
fn capture_without_renderdoc_says_so_plainly() {
    // Not started by RenderDoc, and the library to load pointed at nothing: as on a machine without
    // the renderdoc package.
    let output = Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .env("VKSKIN_CACHE_DIR", crate::common::derived_cache())
        .args(["render", "--size", "32x24", "--capture-frame", "0", "--out"])
        .arg(scratch("plain.png"))
        .env("VKSKIN_RENDERDOC_LIBRARY", "/nonexistent/librenderdoc.so")
        .output()
        .expect("vkskin runs");
    let message = text(&output);
    assert!(!output.status.success(), "{message}");
    assert!(message.contains("renderdoc") && message.contains("install"), "{message}");
    assert!(!message.contains("panicked"), "{message}");
}

#[test]
fn the_panels_capture_button_captures_the_next_frame_with_its_overlay() {
    if !crate::common::xvfb_available() || !renderdoc_available() {
        return;
    }
    let folder = scratch("viewer");
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("capture folder");
    // Started by RenderDoc, the viewer offers the button; `--drive 20:capture` presses it.
    let output = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24", "renderdoccmd", "capture", "-w", "-c"])
        .arg(folder.join("vkskin"))
        .arg(env!("CARGO_BIN_EXE_vkskin"))
        // Tall enough for the whole panel (about 700 points with its timings), so that it is copied from
        // its cache: a panel cut by the window's edge is drawn each frame instead.
        .args(["view", "--frames", "30", "--size", "640x800", "--drive", "20:capture"])
        .env("RUST_LOG", "warn")
        .output()
        .expect("xvfb-run and renderdoccmd run");
    let message = text(&output);
    assert!(output.status.success(), "{message}");
    let capture = captured_path(&message, 20);
    let xml = as_xml(&capture, &folder);
    for label in ["cull", "forward", "overlay", "resolve"] {
        assert!(xml.contains(&format!(">{label}<")), "label '{label}' in the viewer's capture");
    }
    assert!(xml.contains(">overlay.cache<"), "the panel's cache, named");
}
