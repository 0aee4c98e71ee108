//! Helpers shared by the GPU test suites (each `mod common;`).
#![allow(dead_code)] // each suite uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use glam::Vec3;

use vkskin::app::{default_animations, default_model_path, headless_device, HeadlessRenderer};
use vkskin::formats::load_model;
use vkskin::gpu::Device;
use vkskin::model::Model;
use vkskin::render::passes::debug::DebugViews;
use vkskin::render::reference::reference_skinning;
use vkskin::render::shader_types::{InstanceData, PaletteMatrix, SkinnedVertex};
use vkskin::render::FrameScene;

pub fn default_model() -> Model {
    let path = default_model_path();
    load_model(&path, &default_animations(&path, &[])).expect("the bundled model loads")
}

pub fn validated_device() -> Arc<Device> {
    // Validation messages go to the log: show them (warn and up) in the failing test's output.
    let _ = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).is_test(true).try_init();
    let device =
        headless_device(true).expect("lavapipe with the validation layer (mesa-vulkan-drivers, vulkan-validationlayers)");
    assert!(device.instance.validation);
    device
}

pub fn assert_no_validation_messages(device: &Device) {
    let counts = device.instance.message_counts();
    assert_eq!((counts.errors, counts.warnings), (0, 0), "validation layer reported messages (see the log above)");
}

/// Turns on the debug `views` (comma separated; "" for none), then renders `scene` twice (the second
/// frame reuses the first one's slot state) and returns the image.
pub fn render_with_views(headless: &mut HeadlessRenderer, scene: &FrameScene, views: &str) -> image::RgbaImage {
    let missing = headless.renderer.set_debug(DebugViews::parse(views).expect("views")).expect("drawable");
    assert_eq!(missing, None, "every view drawn on this device");
    headless.submit(scene).expect("frame");
    headless.render(scene).expect("frame")
}

/// Renders `scene` and returns what the GPU skinned, per instance.
pub fn skin_on_gpu(headless: &mut HeadlessRenderer, scene: &FrameScene) -> (Vec<SkinnedVertex>, Vec<PaletteMatrix>) {
    headless.render(scene).expect("frame renders");
    headless.renderer.read_back_skinning().expect("read back")
}

/// Renders `scene` and returns the farthest any skinned position is from the CPU reference's
/// (`reference_skinning`), over every instance and vertex, each at the time the instances pass
/// worked out on the GPU: the curves' sampling and the skinning alone (how far those times may be
/// from the CPU's f64 clock is `instances::the_instances_pass_plays_what_the_cpu_plays`).
pub fn worst_position_against_reference(headless: &mut HeadlessRenderer, model: &Model, scene: &FrameScene) -> f32 {
    let (skinned, _) = skin_on_gpu(headless, scene);
    let (gpu_data, _) = headless.renderer.read_back_instances().expect("read back");
    let vertex_count = model.vertices.len();
    let mut worst = 0.0f32;
    for (instance, data) in gpu_data.iter().map(InstanceData::without_flags).enumerate() {
        for (vertex, reference) in reference_skinning(model, &data, &[]).iter().enumerate() {
            let gpu = Vec3::from_array(skinned[instance * vertex_count + vertex].position);
            worst = worst.max(gpu.distance(reference.position));
        }
    }
    worst
}

/// How far a skinned unit normal or tangent may be from the CPU reference's, whatever the model's
/// size: the skin pass stores each component as a 16-bit snorm, rounded by up to half a step
/// (1 / 65,534), so up to √3 / 65,534 ≈ 2.6e-5 in all; single-precision blending and
/// normalization in another order on the GPU add a few 1e-7.
pub const DIRECTION_TOLERANCE: f32 = 3e-5;

/// Every skinned position, normal and tangent against the CPU reference; returns the worst position
/// and normal errors. Positions are held to 1e-4 of the model's extent (the float error of a
/// palette product grows with the coordinates); directions to [`DIRECTION_TOLERANCE`].
pub fn check_skinning(model: &Model, scene: &FrameScene, skinned: &[SkinnedVertex]) -> (f32, f32) {
    let extent = model.extent();
    let tolerance = 1e-4 * extent;
    let vertex_count = model.vertices.len();
    let (mut worst_position, mut worst_normal) = (0.0f32, 0.0f32);
    for (instance_index, data) in scene.instance_data(model).iter().enumerate() {
        for (vertex_index, reference) in reference_skinning(model, data, &scene.morph_overrides).into_iter().enumerate() {
            let (position, normal) = (reference.position, reference.normal);
            let tangent_error = skinned[instance_index * vertex_count + vertex_index].tangent().distance(reference.tangent);
            assert!(
                tangent_error <= DIRECTION_TOLERANCE,
                "instance {instance_index} vertex {vertex_index}: tangent error {tangent_error:e}"
            );
            let gpu = skinned[instance_index * vertex_count + vertex_index];
            let position_error = Vec3::from_array(gpu.position).distance(position);
            let normal_error = gpu.normal().distance(normal);
            worst_position = worst_position.max(position_error);
            worst_normal = worst_normal.max(normal_error);
            assert!(
                position_error <= tolerance && normal_error <= DIRECTION_TOLERANCE,
                "instance {instance_index} vertex {vertex_index}: GPU position {:?} normal {:?}, CPU {position:?} {normal:?} \
                 (errors {position_error:e}, {normal_error:e}; tolerances {tolerance:e}, {DIRECTION_TOLERANCE:e})",
                gpu.position,
                gpu.normal()
            );
        }
    }
    (worst_position, worst_normal)
}

/// `count` figures with their levels of detail on the grid spread `spread` times wider, framed
/// anew: the shadow map's texels coarse, and the instances at many levels and distances.
pub fn spread_crowd(count: usize, spread: f32) -> vkskin::app::SceneSetup {
    let mut setup = vkskin::app::SceneSetup::new(vkskin::model::lod::with_levels(&default_model()), count);
    for instance in &mut setup.instances {
        instance.position *= spread;
    }
    setup.fit_bounds();
    setup.camera = vkskin::render::camera::OrbitCamera::framing(setup.bounds);
    setup
}

/// The largest count a refusal names ("... at most N instances fit"), or None.
pub fn largest_that_fits(message: &str) -> Option<u64> {
    message.split("at most ").nth(1).and_then(|rest| rest.split(' ').next()).and_then(|count| count.parse().ok())
}

/// A process's stdout and stderr together (the CLI suites' messages).
pub fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// `name` in the suite's scratch folder under the target's tmp dir (the folder is created).
pub fn scratch_in(suite: &str, name: &str) -> PathBuf {
    let folder = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(suite);
    std::fs::create_dir_all(&folder).expect("scratch folder");
    folder.join(name)
}

/// `vkskin` as a user runs it, from the repository's folder, warnings shown; its derived-data
/// cache in the target's tmp folder rather than the user's.
pub fn vkskin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vkskin"));
    command.env("RUST_LOG", "warn").env("VKSKIN_CACHE_DIR", derived_cache()).current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

/// The derived-data cache the suite's `vkskin` runs share.
pub fn derived_cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("derived-cache")
}

/// `scratch_in(suite, name)` as an empty folder.
pub fn fresh_folder(suite: &str, name: &str) -> PathBuf {
    let folder = scratch_in(suite, name);
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("folder");
    folder
}

/// `vkskin` on a fresh Xvfb display, whose screen holds every window the tests open; the caller
/// adds the arguments.
pub fn vkskin_under_xvfb() -> Command {
    let mut command = Command::new("xvfb-run");
    command.args(["-a", "-s", "-screen 0 1400x900x24"]).arg(env!("CARGO_BIN_EXE_vkskin"));
    command.env("VKSKIN_CACHE_DIR", derived_cache());
    command
}

/// `vkskin view` under Xvfb (see [`vkskin_under_xvfb`]).
pub fn view_under_xvfb() -> Command {
    let mut command = vkskin_under_xvfb();
    command.arg("view");
    command
}

/// Runs a vkskin command given `--validate`: it must succeed with no validation message and say
/// so; what it printed.
pub fn run_validated(command: &mut Command) -> String {
    let output = command.env("RUST_LOG", "warn").output().expect("the command runs");
    let message = text(&output);
    assert!(output.status.success() && !message.contains("VALIDATION"), "{message}");
    assert!(message.contains("validation: 0 errors, 0 warnings"), "{message}");
    message
}

/// Set to 1 (CI's `.ci/run` does), a test that would skip for want of `../shared/models` or of
/// `xvfb-run` fails instead: a run where they are missing must not pass by testing nothing.
pub const REQUIRE: &str = "VKSKIN_REQUIRE_MODELS";

/// Skips visibly (the message on the test's output), or fails under [`REQUIRE`].
#[track_caller]
pub fn skip(why: &str) {
    assert!(std::env::var(REQUIRE).map_or(true, |value| value != "1"), "{REQUIRE}=1 and {why}");
    println!("skipped: {why}");
}

/// Set to 1, a device without ray query fails the ray-tracing tests rather than skipping them
/// (`.ci/run` sets it: scripts/install-deps takes a Mesa whose lavapipe has it).
pub const REQUIRE_RT: &str = "VKSKIN_REQUIRE_RT";

/// Whether `device` traces rays; without, says so on the test's output (a skip), or fails under
/// [`REQUIRE_RT`].
#[track_caller]
pub fn traces(device: &Device) -> bool {
    if device.ray_query.is_some() {
        return true;
    }
    let why = format!("{} has no ray query (lavapipe has it from Mesa 24.1: scripts/install-deps)", device.name());
    assert!(std::env::var(REQUIRE_RT).map_or(true, |value| value != "1"), "{REQUIRE_RT}=1 and {why}");
    println!("skipped: {why}");
    false
}

/// Names the folder of the third-party conformance models when they are not at `../shared/models`
/// beside the repository (README.md, "Models": where the set comes from).
pub const MODELS: &str = "VKSKIN_MODELS";

/// `<models>/<folder>`, the models being `$VKSKIN_MODELS` or else `../shared/models` beside the
/// repository, or None when it is absent (see [`skip`]).
#[track_caller]
pub fn shared_models(folder: &str) -> Option<PathBuf> {
    let models = std::env::var_os(MODELS)
        .filter(|value| !value.is_empty())
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/models"), PathBuf::from);
    let path = models.join(folder);
    if path.is_dir() {
        return Some(path);
    }
    skip(&format!("{} is absent (the third-party models live there; {MODELS}=DIR names another copy)", path.display()));
    None
}

/// `../shared/clips/<folder>` (motion capture and ACL's clips), or None (see [`skip`]) without it.
#[track_caller]
pub fn shared_clips(folder: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/clips").join(folder);
    if path.is_dir() {
        return Some(path);
    }
    skip(&format!("{} is absent (the shared clips live there)", path.display()));
    None
}

/// `source`'s first clip carried onto `target`'s skeleton, and the angles between each bone of the
/// two playing it at 48 times (`anim::retarget::compare`): what matched, and how well.
pub fn carried_first_clip(
    source: &Model,
    target: &Model,
) -> (vkskin::anim::retarget::Retargeted, vkskin::anim::retarget::compare::BoneAngles) {
    // As `--anim` carries them: turned from the source's front to the target's.
    let facing = vkskin::anim::retarget::facing_turn(source.facing_yaw(), target.facing_yaw());
    let carried =
        vkskin::anim::retarget::retarget(&source.skeleton, &source.animations, &target.skeleton, facing).expect("carried");
    let clip = &source.clips[0];
    let times: Vec<f32> = (0..48).map(|step| clip.start + clip.duration * step as f32 / 48.0).collect();
    let animation = clip.animation;
    let angles = vkskin::anim::retarget::compare::bone_angles(
        &source.skeleton,
        &source.animations[animation],
        &target.skeleton,
        &carried.animations[animation],
        &times,
    )
    .expect("bones on both sides");
    println!(
        "{}; {} bones: median {:.2}°, worst {:.2}° ({})",
        carried.report(source.skeleton.len()),
        angles.bones,
        angles.median,
        angles.worst,
        angles.worst_bone
    );
    (carried, angles)
}

/// Whether `xvfb-run` is installed (see [`skip`]).
#[track_caller]
pub fn xvfb_available() -> bool {
    let found = Command::new("xvfb-run").arg("--help").output().is_ok();
    if !found {
        skip("xvfb-run is not installed (apt-get install xvfb xauth)");
    }
    found
}

/// Deterministic mutants of `text`: at every `stride`-th site, a number replaced by values a
/// hostile or broken exporter writes, a `#reference` pointed at nothing, an attribute emptied, an
/// element's line removed.
pub fn mutants(text: &str, stride: usize) -> Vec<String> {
    let mut sites: Vec<(usize, usize, &[&str])> = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        if bytes[at].is_ascii_digit() || (bytes[at] == b'-' && bytes.get(at + 1).is_some_and(u8::is_ascii_digit)) {
            at += 1;
            while at < bytes.len() && (bytes[at].is_ascii_digit() || matches!(bytes[at], b'.' | b'e' | b'E' | b'-' | b'+')) {
                at += 1;
            }
            sites.push((start, at, &["-1", "0", "7", "4294967296", "3e38", "1e-39", "x", ""]));
        } else if bytes[at] == b'#' {
            at += 1;
            sites.push((start, at, &["#missing_", ""]));
        } else if text[at..].starts_with("=\"") {
            let end = text[at + 2..].find('"').map_or(bytes.len(), |end| at + 2 + end + 1);
            sites.push((at, end, &["=\"\"", "=\"1e39\""]));
            at = end;
        } else if bytes[at] == b'\n' {
            let end = text[at + 1..].find('\n').map_or(bytes.len(), |end| at + 1 + end);
            sites.push((at, end, &[""]));
            at += 1;
        } else {
            at += text[at..].chars().next().map_or(1, char::len_utf8);
        }
    }
    let mut out = Vec::new();
    for (index, (start, end, replacements)) in sites.iter().enumerate().filter(|(index, _)| index % stride == 0) {
        let replacement = replacements[(index / stride) % replacements.len()];
        out.push(format!("{}{replacement}{}", &text[..*start], &text[*end..]));
    }
    out
}

/// The largest side of the box around `points`.
pub fn extent_of(points: &[Vec3]) -> f32 {
    vkskin::anim::Aabb::from_points(points.iter().copied()).extent()
}
