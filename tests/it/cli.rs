//! The `vkskin` binary as a user runs it: headless render, errors on bad input and missing parts,
//! and the viewer under Xvfb. Validation is on wherever Vulkan runs.

use crate::common::{
    largest_that_fits, run_validated, scratch_in, text, view_under_xvfb, vkskin, vkskin_under_xvfb, xvfb_available,
};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    scratch_in("cli", name)
}

#[test]
fn render_writes_a_png_of_the_asked_size() {
    let out = scratch("render.png");
    let _ = std::fs::remove_file(&out);
    let output = vkskin()
        .args(["render", "--time", "0.75", "--size", "200x150", "--validate", "--out"])
        .arg(&out)
        .output()
        .expect("vkskin runs");
    assert!(output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("validation: 0 errors, 0 warnings"), "{}", text(&output));
    let image = image::open(&out).expect("a PNG was written").to_rgba8();
    assert_eq!(image.dimensions(), (200, 150));
}

/// `--variety off` draws copies of the model; the default varies them, so the two images differ.
/// One instance is the model as made either way.
#[test]
fn variety_off_draws_copies_and_one_instance_is_the_model_either_way() {
    let render = |name: &str, arguments: &[&str]| {
        let out = scratch(name);
        let output = vkskin()
            .args(["render", "--time", "0.75", "--size", "160x120", "--validate", "--out"])
            .arg(&out)
            .args(arguments)
            .output()
            .expect("vkskin runs");
        assert!(output.status.success(), "{}", text(&output));
        image::open(&out).expect("a PNG was written").to_rgba8()
    };
    let varied = render("varied.png", &["--instances", "4"]);
    let copies = render("copies.png", &["--instances", "4", "--variety", "off"]);
    let changed = varied.pixels().zip(copies.pixels()).filter(|(a, b)| a != b).count();
    assert!(changed > 200, "--variety off changed {changed} pixels of 4 figures");
    let one = render("one.png", &["--instances", "1"]);
    assert_eq!(one, render("one-off.png", &["--instances", "1", "--variety", "off"]));
}

#[test]
fn a_count_past_the_device_is_refused_up_front() {
    let output = vkskin()
        .args(["render", "--instances", "100000000", "--size", "64x48", "--out"])
        .arg(scratch("never-crowd.png"))
        .output()
        .expect("vkskin runs");
    assert!(!output.status.success());
    let message = text(&output);
    // The limit named, and the largest count that fits.
    assert!(message.contains("100000000 instances") && message.contains("exceed"), "{message}");
    let fits = largest_that_fits(&message).unwrap_or_else(|| panic!("names the largest count that fits: {message}"));
    assert!((1000..100_000_000).contains(&fits), "{message}");
    assert!(!message.contains("panicked"), "{message}");
}

#[test]
fn a_missing_model_is_a_clear_error() {
    let output =
        vkskin().args(["render", "no/such/model.md5mesh", "--out"]).arg(scratch("never.png")).output().expect("vkskin runs");
    assert!(!output.status.success());
    let message = text(&output);
    assert!(message.contains("no/such/model.md5mesh"), "names the file: {message}");
    assert!(!message.contains("panicked"), "{message}");
}

#[test]
fn an_unknown_format_lists_the_supported_ones() {
    let path = scratch("model.obj");
    std::fs::write(&path, "v 0 0 0\n").expect("write");
    let out = scratch("unknown-format.png");
    let output = vkskin().arg("render").arg(&path).arg("--out").arg(&out).output().expect("vkskin runs");
    assert!(!output.status.success());
    assert!(text(&output).contains(".md5mesh"), "{}", text(&output));
    // The output was opened early (to fail fast when unwritable) but nothing was rendered into it.
    assert!(!out.exists(), "a failed render left {} behind", out.display());
}

#[test]
fn an_unwritable_output_is_a_clear_error() {
    let output = vkskin().args(["render", "--size", "32x32", "--out", "/proc/vkskin/denied.png"]).output().expect("vkskin runs");
    assert!(!output.status.success());
    let message = text(&output);
    assert!(message.contains("cannot write /proc/vkskin/denied.png"), "{message}");
    assert!(!message.contains("panicked"), "{message}");
}

#[test]
fn a_bad_size_is_refused() {
    let output = vkskin().args(["render", "--size", "0x10"]).output().expect("vkskin runs");
    assert!(!output.status.success());
    assert!(text(&output).contains("WxH"), "{}", text(&output));
}

#[test]
fn view_without_a_display_points_at_render() {
    let output = vkskin()
        .args(["view", "--frames", "1"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("vkskin runs");
    assert!(!output.status.success());
    let message = text(&output);
    assert!(message.contains("vkskin render"), "{message}");
    assert!(!message.contains("panicked"), "{message}");
}

#[test]
fn view_runs_under_xvfb_with_validation_clean() {
    if !xvfb_available() {
        return;
    }
    let message =
        run_validated(view_under_xvfb().args(["--frames", "120", "--size", "320x240", "--instances", "2", "--validate"]));
    assert!(message.contains("presented 120 frames"), "{message}");
}

/// The viewer is the default command: a file and the viewer's options, with no `view` before them.
#[test]
fn a_model_file_or_view_options_alone_open_the_viewer() {
    if !xvfb_available() {
        return;
    }
    let model = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/figure.md5mesh");
    // Levels of detail are built on a worker thread; with a set number of frames the second frame
    // waits for them, so they are in place at the end.
    let message = run_validated(vkskin_under_xvfb().arg(&model).args(["--frames", "3", "--size", "160x120", "--validate"]));
    assert!(message.contains("presented 3 frames of figure, 2 clips, 8 levels of detail"), "{message}");
    let message =
        run_validated(vkskin_under_xvfb().arg(&model).args(["--frames", "3", "--size", "160x120", "--lod", "off", "--validate"]));
    assert!(message.contains("presented 3 frames of figure, 2 clips\n"), "{message}");
    let message =
        run_validated(vkskin_under_xvfb().args(["--instances", "2", "--frames", "2", "--size", "160x120", "--validate"]));
    assert!(message.contains("presented 2 frames of figure"), "{message}");
    // A file that is not there is named, not taken for a command.
    let output = vkskin().arg("no/such/character.glb").output().expect("vkskin runs");
    let message = text(&output);
    assert!(!output.status.success() && message.contains("no/such/character.glb"), "{message}");
    assert!(!message.contains("unrecognized subcommand"), "{message}");
}

/// One vocabulary: bench takes `--instances` and `--strategy` as lists, every `--out` is a file
/// and every folder is `--out-dir`; the help of options that take any format names them all.
#[test]
fn the_commands_share_one_vocabulary() {
    for (command, expected, gone) in [
        ("bench", &["--instances", "--strategy", "--measure", "--out-dir"][..], &["--counts", "--strategies", "--frames"][..]),
        ("render", &["--instances", "--strategy", "--frames", "--out <FILE>"][..], &["--out-dir"][..]),
        ("soak", &["--instances", "--strategy", "--frames", "--out <FILE>"][..], &["--report"][..]),
        ("generate", &["--out-dir <DIR>"][..], &["--out <"][..]),
        ("inspect", &["--anim <FILE>", ".gltf, .glb, .ms3d, .dae or .fbx"][..], &[][..]),
    ] {
        let output = vkskin().args([command, "--help"]).output().expect("vkskin runs");
        let help = text(&output);
        assert!(output.status.success(), "{help}");
        for flag in expected {
            assert!(help.contains(flag), "`{command} --help` lacks {flag}:\n{help}");
        }
        for flag in gone {
            assert!(!help.contains(flag), "`{command} --help` still has {flag}:\n{help}");
        }
        assert!(!help.contains("(.md5mesh)") && !help.contains("(.md5anim). Default"), "{help}");
    }
}

#[test]
fn inspect_describes_the_bundled_model_without_vulkan() {
    let output = vkskin()
        .args(["inspect", "assets/figure.md5mesh"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("VK_DRIVER_FILES", "/nonexistent.json") // no Vulkan driver: inspect must not need one
        .output()
        .expect("vkskin runs");
    let message = text(&output);
    assert!(output.status.success(), "{message}");
    for expected in [
        "skeleton: 23 joints",
        "clips: 2",
        "[0] walk: 2.000 s, 24 fps",
        "compressed, decoded by the palette pass",
        "compressed: ",
        "on a 1.8 m figure",
        "culling cells",
        "[1] wave",
        "up to 6 a vertex",
        "figure_body.png",
    ] {
        assert!(message.contains(expected), "missing '{expected}' in:\n{message}");
    }
}

#[test]
fn a_clip_is_chosen_by_name_or_index_and_an_unknown_one_is_listed() {
    let output = vkskin().args(["render", "--clip", "jump", "--out"]).arg(scratch("never.png")).output().expect("vkskin runs");
    assert!(!output.status.success());
    let message = text(&output);
    assert!(message.contains("no clip 'jump'") && message.contains("[0] walk") && message.contains("[1] wave"), "{message}");

    let out = scratch("wave.png");
    let output = vkskin().args(["render", "--clip", "1", "--size", "64x48", "--out"]).arg(&out).output().expect("vkskin runs");
    assert!(output.status.success(), "{}", text(&output));
    assert!(out.exists());
}

#[test]
fn bench_writes_complete_json_csv_and_plots() {
    let out = scratch("bench");
    let _ = std::fs::remove_dir_all(&out);
    let output = vkskin()
        .args(["bench", "--instances", "1,10", "--lod", "off,on", "--animation-lod", "off,on", "--measure", "3", "--warmup", "2"])
        .args(["--size", "96x64"])
        .args(["--validate", "--out-dir"])
        .arg(&out)
        .output()
        .expect("vkskin runs");
    let message = text(&output);
    assert!(output.status.success(), "{message}");
    assert!(message.contains("device: ") && message.contains("96x64"), "prints the device and resolution: {message}");
    // The table: the settings every row shares on one line (no light culling, the default, one
    // skinning mode), a column only for what some row has, and what each column means.
    let every_row = message.lines().find(|line| line.starts_with("every row: ")).expect("the shared settings");
    assert!(every_row.contains("skinning linear") && every_row.contains("motion blur off"), "{every_row}");
    let header = message.lines().find(|line| line.starts_with("strategy ")).expect("the header");
    assert!(header.contains(" lod ") && header.contains("animation lod") && !header.contains("motion blur"), "{header}");
    assert!(!header.split_whitespace().any(|word| word == "motion"), "no row ran the motion pass: {header}");
    assert!(message.contains("columns: frame ms: wall time a frame"), "{message}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bench.json")).expect("bench.json")).expect("valid JSON");
    assert!(json["device"].as_str().is_some_and(|device| !device.is_empty()));
    // The clips' keys beside each row's bytes per instance: the figure's two clips, which
    // `Animation::gpu_bytes` counts for the palette pass.
    let mut figure = crate::common::default_model();
    figure.compress_clips();
    let bytes = |compressed: bool| -> u64 {
        let joints = figure.skeleton.len();
        let each = |animation: &vkskin::anim::Animation| match compressed {
            true => animation.gpu_bytes(joints, 0),
            false => animation.key_gpu_bytes(joints, 0),
        };
        figure.animations.iter().map(each).sum::<usize>() as u64
    };
    assert!(bytes(true) < bytes(false), "the figure's clips compress");
    assert_eq!(
        (json["clips"].as_u64(), json["clip_bytes"].as_u64(), json["clip_key_bytes"].as_u64()),
        (Some(2), Some(bytes(true)), Some(bytes(false))),
        "{json}"
    );
    let rows = json["rows"].as_array().expect("rows");
    // Levels of detail off and on; animation LOD off and on but for `cpu`, which has no palette pass.
    assert_eq!(rows.len(), 2 * (4 + 4 + 2), "3 strategies × 2 counts × the variants");
    for row in rows {
        let strategy = row["strategy"].as_str().expect("strategy");
        let lod = row["lod"].as_bool().expect("lod");
        let animation_lod = row["animation_lod"].as_bool().expect("animation_lod");
        assert!(!(animation_lod && strategy == "cpu"), "{row}");
        assert_eq!(row["status"], "ok", "{row}");
        for field in ["frame_wall_ms", "frame_gpu_ms", "copy_reference_ms", "copy_reference_wall_ms", "copy_touched_reference_ms"]
        {
            assert!(row[field]["median"].as_f64().is_some_and(|value| value > 0.0), "{strategy}: {field} in {row}");
            assert!(row[field]["p95"].as_f64().is_some(), "{strategy}: {field} p95 in {row}");
        }
        // The benchmark draws no panel: no overlay pass.
        for pass in vkskin::render::Pass::ALL
            .into_iter()
            .filter(|&pass| pass != vkskin::render::Pass::Overlay)
            .map(vkskin::render::Pass::name)
        {
            assert!(row["pass_ms"][pass]["median"].as_f64().is_some(), "{strategy}: pass {pass} in {row}");
        }
        assert!(row["vertices_per_second"].as_f64().is_some_and(|value| value > 0.0));
        assert!(row["bytes_per_instance"].as_u64().is_some_and(|value| value > 0));
        // The default scene is framed whole: the cull pass keeps every instance.
        let instances = row["instances"].as_u64().expect("instances");
        for seen_by in ["skinned", "camera", "light"] {
            assert_eq!(row["visible"][seen_by].as_u64(), Some(instances), "{strategy}: visible {seen_by} in {row}");
        }
        // Fields that belong to one strategy are filled there and null elsewhere.
        // The copy references count every vertex: levels of detail off only.
        assert_eq!(row["skin_copy_ratio"].as_f64().is_some(), strategy == "compute" && !lod, "{row}");
        assert_eq!(row["skin_copy_touched_ratio"].as_f64().is_some(), strategy == "compute" && !lod, "{row}");
        // With levels of detail or animation LOD, the image difference against the same frame at
        // full detail.
        let changed = row["image_vs_full_detail"]["changed_share"].as_f64();
        assert_eq!(changed.is_some(), lod || animation_lod, "{row}");
        assert!(changed.is_none_or(|share| (0.0..=1.0).contains(&share)), "{row}");
        assert_eq!(row["cpu_skinning_ms"]["median"].as_f64().is_some(), strategy == "cpu", "{row}");
    }

    let csv = std::fs::read_to_string(out.join("bench.csv")).expect("bench.csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 21, "a header and 20 rows");
    let columns = lines[0].split(',').count();
    assert!(lines.iter().all(|line| line.split(',').count() == columns), "every row has every column");
    for name in ["frame_time.png", "skin_pass.png", "vertices_per_second.png", "skin_copy_ratio.png"] {
        let plot = image::open(out.join(name)).unwrap_or_else(|error| panic!("{name}: {error}"));
        assert_eq!((plot.width(), plot.height()), (900, 560));
    }
}

/// `vkskin soak` logs a row every `--every` frames and the last one, each with every column filled:
/// RSS (and its anonymous part, at most the whole) and gpu-allocator's bytes, which stay the same
/// from the first frame on, since the renderer allocates everything up front.
#[test]
fn soak_logs_memory_every_few_frames() {
    let report = scratch("soak.csv");
    let output = vkskin()
        .args(["soak", "--instances", "3", "--frames", "25", "--every", "10", "--switch-every", "7", "--size", "64x48"])
        .args(["--validate", "--out"])
        .arg(&report)
        .output()
        .expect("vkskin runs");
    let message = text(&output);
    assert!(output.status.success(), "{message}");
    assert!(message.contains("validation: 0 errors, 0 warnings"), "{message}");
    let csv = std::fs::read_to_string(&report).expect("soak.csv");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("frame,seconds,rss_kib,gpu_allocated_bytes,gpu_capacity_bytes,rss_anon_kib"));
    let rows: Vec<Vec<f64>> =
        lines.map(|line| line.split(',').map(|field| field.parse::<f64>().expect("a number")).collect()).collect();
    assert_eq!(rows.iter().map(|row| row[0]).collect::<Vec<_>>(), [0.0, 10.0, 20.0, 24.0]);
    for row in &rows {
        assert_eq!(row.len(), 6, "{row:?}");
        let [_, _, rss, allocated, capacity, anonymous] = row[..] else { unreachable!() };
        assert!(rss > 0.0 && anonymous > 0.0 && anonymous <= rss, "{row:?}");
        assert!(allocated > 0.0 && allocated <= capacity, "{row:?}");
        assert_eq!(allocated, rows[0][3], "gpu-allocator's bytes moved: {rows:?}");
    }
}

#[test]
fn a_skeleton_only_file_shows_its_animated_skeleton() {
    // The bundled mesh with its meshes cut away: joints and keys, no vertices.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mesh = std::fs::read_to_string(root.join("figure.md5mesh")).expect("bundled mesh");
    let joints_only = mesh[..mesh.find("mesh {").expect("a mesh block")].replace("numMeshes 2", "numMeshes 0");
    assert!(joints_only.contains("numMeshes 0"), "the header counts no meshes");
    let mesh_path = scratch("bones.md5mesh");
    std::fs::write(&mesh_path, joints_only).expect("scratch mesh");
    std::fs::copy(root.join("figure_walk.md5anim"), scratch("bones_walk.md5anim")).expect("scratch anim");
    let out = scratch("bones.png");
    let output = vkskin()
        .arg("render")
        .arg(&mesh_path)
        .args(["--time", "0.5", "--size", "160x120", "--validate", "--out"])
        .arg(&out)
        .output()
        .expect("vkskin runs");
    assert!(output.status.success(), "{}", text(&output));
    // The skeleton view's joint lines are yellow and orange; ground and sky have no such pixels.
    let image = image::open(&out).expect("a PNG").to_rgba8();
    let bones = image.pixels().filter(|pixel| pixel[0] > 200 && pixel[1] > 100 && pixel[2] < 120).count();
    assert!(bones > 20, "{bones} skeleton pixels");
}
