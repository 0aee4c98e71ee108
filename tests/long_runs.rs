//! Each mode for 300 frames or more with the validation layer (synchronization validation
//! included) and zero messages of warning or error severity: the viewer under Xvfb with the debug
//! views on, `render --frames`, and `bench` with few instances.

use std::process::{Command, Output};

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// Success (with --validate any message fails the run) and no message in the log.
fn assert_clean(output: &Output) {
    let message = text(output);
    assert!(output.status.success(), "{message}");
    assert!(!message.contains("VALIDATION"), "{message}");
}

#[test]
fn view_runs_300_frames_with_debug_views_under_xvfb() {
    if Command::new("xvfb-run").arg("--help").output().is_err() {
        println!("skipped: xvfb-run is not installed (apt-get install xvfb xauth)");
        return;
    }
    let output = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 640x480x24"])
        .arg(env!("CARGO_BIN_EXE_vkskin"))
        .args(["view", "--frames", "300", "--size", "160x120", "--instances", "3", "--validate"])
        .args(["--debug", "skeleton,shadowmap,wireframe,bounds"])
        .env("RUST_LOG", "warn")
        .output()
        .expect("xvfb-run runs");
    assert_clean(&output);
    assert!(text(&output).contains("presented 300 frames"), "{}", text(&output));
    assert!(text(&output).contains("validation: 0 errors, 0 warnings"), "{}", text(&output));
}

#[test]
fn render_runs_300_frames() {
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("long-render.png");
    let output = Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .args(["render", "--frames", "300", "--time", "5", "--size", "96x72", "--instances", "3", "--validate", "--out"])
        .arg(&out)
        .env("RUST_LOG", "warn")
        .output()
        .expect("vkskin runs");
    assert_clean(&output);
    assert!(text(&output).contains("validation: 0 errors, 0 warnings"), "{}", text(&output));
    assert!(image::open(&out).is_ok());
}

#[test]
fn bench_runs_300_frames_a_strategy() {
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("long-bench");
    let output = Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .args(["bench", "--counts", "2", "--frames", "290", "--warmup", "10", "--size", "64x48", "--validate", "--out"])
        .arg(&out)
        .env("RUST_LOG", "warn")
        .output()
        .expect("vkskin runs");
    assert_clean(&output);
}
