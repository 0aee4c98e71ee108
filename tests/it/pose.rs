//! `vkskin inspect FILE --pose TIME --clip C --json` (`src/app/pose.rs`): what the GPU passes
//! evaluate, read back and reported in the file's own units, axes, joint order and vertex order,
//! held against the authoring tools' posed meshes and against the CPU reference.

use std::path::Path;

use glam::{Mat4, Vec3};
use serde_json::Value;
use vkskin::formats::load_model;
use vkskin::model::Model;

use crate::common::shared_models;
use crate::fbx_loader::{obj_points, set_distance};

/// The JSON `inspect --pose` prints for `file`, run with validation (which must stay silent).
fn pose_json(file: &Path, clip: Option<&str>, time: f64, extra: &[&str]) -> Value {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_vkskin"));
    command
        .env("VKSKIN_CACHE_DIR", crate::common::derived_cache())
        .arg("inspect")
        .arg(file)
        .args(["--pose", &time.to_string(), "--json"])
        .args(extra);
    if let Some(clip) = clip {
        command.args(["--clip", clip]);
    }
    let output = command.env("VKSKIN_VALIDATION", "1").env("RUST_LOG", "warn").output().expect("vkskin runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("validation: 0 errors, 0 warnings"), "{stderr}");
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

fn positions(mesh: &Value) -> Vec<Option<Vec3>> {
    mesh["positions"]
        .as_array()
        .expect("positions")
        .iter()
        .map(|position| {
            position.as_array().map(|xyz| Vec3::from_array([0, 1, 2].map(|axis| xyz[axis].as_f64().expect("number") as f32)))
        })
        .collect()
}

fn matrix(joint: &Value) -> Mat4 {
    let values: Vec<f32> =
        joint["model"].as_array().expect("16 floats").iter().map(|value| value.as_f64().expect("number") as f32).collect();
    Mat4::from_cols_slice(&values)
}

/// The sausage and the Max skin posed on the GPU are Maya's and Max's own posed meshes: the OBJs
/// are in the file's units and axes, and the sausage's in its control points' order, as the JSON.
/// Played from the files' keys: this holds the reading of the files (compressed clips are held to
/// the keys by compression.rs, within a bound of the same order as this test's).
#[test]
fn fbx_poses_are_the_authoring_tools_meshes_in_file_units_and_order() {
    let Some(folder) = shared_models("fbx") else { return };
    let sausage = folder.join("MayaSausage/maya_game_sausage_7500_binary_combined.fbx");
    for (clip, frame, reference) in
        [("wiggle", 9.0, "maya_game_sausage_wiggle_10.obj"), ("deform", 15.0, "maya_game_sausage_deform_15.obj")]
    {
        let json = pose_json(&sausage, Some(clip), frame / 24.0, &["--clip-compression", "off"]);
        assert_eq!(json["clip"], clip);
        let expected = obj_points(&folder.join("MayaSausage/reference").join(reference));
        let found: Vec<Vec3> = positions(&json["meshes"][0]).into_iter().map(|p| p.expect("every point used")).collect();
        assert_eq!(found.len(), expected.len(), "one position per control point");
        let extent = crate::common::extent_of(&expected);
        let worst = found.iter().zip(&expected).map(|(a, b)| a.distance(*b)).fold(0.0f32, f32::max);
        println!("sausage {clip} frame {frame}: {worst:e} from {reference} in order (extent {extent})");
        assert!(worst <= 1e-4 * extent, "{worst} against {extent}");
        let names: Vec<&str> =
            json["joints"].as_array().expect("joints").iter().map(|joint| joint["name"].as_str().expect("name")).collect();
        assert_eq!(&names[..2], ["pCube1", "joint1"], "the file's node order");
    }
    // Z-up, 3ds Max: the OBJ lists the points in another order, so as point sets.
    let max = folder.join("MaxSkin/max_transformed_skin_7500_binary.fbx");
    let json = pose_json(&max, Some("Take 001"), 15.0 / 30.0, &["--clip-compression", "off"]);
    let expected = obj_points(&folder.join("MaxSkin/reference/max_transformed_skin_15.obj"));
    let found: Vec<Vec3> = json["meshes"].as_array().expect("meshes").iter().flat_map(positions).flatten().collect();
    let distance = set_distance(&found, &expected);
    let extent = crate::common::extent_of(&expected);
    println!("Max skin frame 15: {distance:e} from the OBJ (extent {extent})");
    assert!(distance <= 1e-4 * extent, "{distance} against {extent}");
}

/// The CPU reference of `model` at `time` into `clip`: joints' model matrices and skinned vertices.
fn cpu_pose(model: &Model, clip: usize, time: f32) -> (Vec<Mat4>, Vec<Vec3>) {
    let clip = &model.clips[clip];
    let joints = model.joint_matrices(clip.animation, clip.animation_time(f64::from(time)));
    let mut palette = vec![Mat4::IDENTITY; model.skeleton.len()];
    model.palette_at(clip.animation, clip.animation_time(f64::from(time)), &mut palette);
    let vertices = model.vertices.iter().map(|vertex| model.skinned_position(vertex, Some(&palette))).collect();
    (joints, vertices)
}

/// glTF (accessor order, joints by node), MD5 (Z-up: the JSON turns back into it), Milkshape
/// (its one vertex list) and COLLADA (Z-up, each instance's POSITION source): the JSON is the CPU
/// reference mapped back to the file, joint by joint and vertex by vertex, within 1e-4 of the
/// extent, with the clips' keys as the files give them.
#[test]
fn gltf_md5_ms3d_and_collada_poses_follow_the_files_order_and_axes() {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut cases = vec![(assets.join("figure.md5mesh"), "wave", 0.4f32)];
    if let Some(models) = shared_models("") {
        cases.push((models.join("gltf/CesiumMan/CesiumMan.glb"), "0", 0.7));
        cases.push((models.join("gltf/RobotExpressive/RobotExpressive.glb"), "Dance", 1.3));
        cases.push((models.join("ms3d/ninja/ninja.ms3d"), "0", 2.5));
        cases.push((models.join("collada/RiggedFigure/RiggedFigure.dae"), "0", 0.6));
    }
    for (file, clip, time) in cases {
        let model = load_model(&file, &vkskin::app::default_animations(&file, &[])).expect("loads");
        let clip_index = vkskin::app::find_clip(&model, clip).expect("the clip");
        // The files' keys: exactness holds for them (compressed clips: compressed_poses_stay_within_the_bound).
        let json = pose_json(&file, Some(clip), f64::from(time), &["--clip-compression", "off"]);
        let (joints, vertices) = cpu_pose(&model, clip_index, time);
        let to_file = model.layout.to_model.inverse();
        let extent = model.extent();
        let tolerance = 1e-4 * extent.max(1e-3);
        // Joints: the file's order (the layout's), names and matrices.
        let order = model.layout.joints(model.skeleton.len());
        let found = json["joints"].as_array().expect("joints");
        assert_eq!(found.len(), order.len());
        for (entry, &joint) in found.iter().zip(&order) {
            assert_eq!(entry["name"], model.skeleton.joints[joint].name.as_str());
            let expected = to_file * joints[joint];
            let off = (matrix(entry) - expected).to_cols_array().iter().fold(0.0f32, |worst, value| worst.max(value.abs()));
            assert!(off <= tolerance.max(1e-4), "{}: joint {joint} off by {off}", file.display());
        }
        // Vertices: every file mesh, in its order.
        let meshes = json["meshes"].as_array().expect("meshes");
        let file_meshes = model.file_meshes();
        assert_eq!(meshes.len(), file_meshes.len());
        let mut worst = 0.0f32;
        for (entry, mesh) in meshes.iter().zip(&file_meshes) {
            assert_eq!(entry["name"], mesh.name.as_str());
            for (found, vertex) in positions(entry).iter().zip(&mesh.vertices) {
                match (found, vertex) {
                    (Some(found), Some(vertex)) => {
                        worst = worst.max(found.distance(to_file.transform_point3(vertices[*vertex as usize])));
                    }
                    (None, None) => {}
                    _ => panic!("{}: a vertex used in one and not the other", file.display()),
                }
            }
        }
        println!("{}: GPU pose {worst:e} from the CPU reference in the file's order (extent {extent})", file.display());
        assert!(worst <= tolerance, "{}: {worst} against {tolerance}", file.display());
    }
}

/// The file's order where the format has one: CesiumMan's one primitive has the accessor's
/// 3,273 vertices; the figure's first MD5 mesh its verts, Z-up; the ninja its file's vertex list.
#[test]
fn the_file_layouts_keep_the_formats_counts() {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let figure = load_model(&assets.join("figure.md5mesh"), &[]).expect("loads");
    let text = std::fs::read_to_string(assets.join("figure.md5mesh")).expect("text");
    let numverts: usize =
        text.lines().find_map(|line| line.trim().strip_prefix("numverts ")).expect("numverts").trim().parse().expect("a count");
    assert_eq!(figure.layout.meshes[0].vertices.len(), numverts);
    let up = figure.layout.to_model.inverse().transform_vector3(Vec3::Y);
    assert!(up.distance(Vec3::Z) < 1e-6, "MD5 is Z-up: {up}");
    let Some(models) = shared_models("") else { return };
    let cesium = load_model(&models.join("gltf/CesiumMan/CesiumMan.glb"), &[]).expect("loads");
    assert_eq!(cesium.layout.meshes.iter().map(|mesh| mesh.vertices.len()).sum::<usize>(), 3273);
    let ninja = load_model(&models.join("ms3d/ninja/ninja.ms3d"), &[]).expect("loads");
    let file = vkskin::formats::ms3d::parse(
        &std::fs::read(models.join("ms3d/ninja/ninja.ms3d")).expect("bytes"),
        Path::new("ninja.ms3d"),
    )
    .expect("parses");
    assert_eq!(ninja.layout.meshes.len(), 1);
    assert_eq!(ninja.layout.meshes[0].vertices.len(), file.vertices.len());
    // The levels of detail reorder the vertices; the layout follows them.
    let levelled = vkskin::model::lod::with_levels(&cesium);
    for (before, after) in cesium.layout.meshes[0].vertices.iter().zip(&levelled.layout.meshes[0].vertices).take(500) {
        let (before, after) = (before.expect("used"), after.expect("used"));
        assert_eq!(cesium.vertices[before as usize].position, levelled.vertices[after as usize].position);
    }
}

/// With compression on (the default), the joints `inspect --pose` reads back from the palette pass
/// are within ACL's bound (scaled to the figure) of the raw keys' CPU reference: every joint's
/// virtual vertices at the shell, at a time on a sample and one between samples.
#[test]
fn compressed_poses_stay_within_the_bound() {
    use vkskin::anim::compress::{shell_error, Precision};
    let mut cases = vec![(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/figure.md5mesh"), "wave", [0.5f32, 0.43])];
    if let Some(models) = shared_models("") {
        cases.push((models.join("gltf/CesiumMan/CesiumMan.glb"), "0", [0.75, 0.71]));
        // Curves that kink and bend sharply (ufbx's Hermite keys), compressed at uneven times:
        // the palette pass searches them; 1.0354 s is inside a bend sampled a few ms apart.
        cases.push((models.join("fbx/QuaterniusMan/Male_Casual.fbx"), "HumanArmature|Man_Walk", [0.3, 1.0354]));
    }
    if let Some(clips) = crate::common::shared_clips("cmu") {
        cases.push((clips.join("bvh/131_01.bvh"), "0", [2.5, 3.3041]));
    }
    for (file, clip, times) in cases {
        let model = load_model(&file, &vkskin::app::default_animations(&file, &[])).expect("loads");
        let clip_index = vkskin::app::find_clip(&model, clip).expect("the clip");
        let precision = Precision::for_figure(model.extent());
        let slack = 2e-6 * model.extent();
        for time in times {
            let json = pose_json(&file, Some(clip), f64::from(time), &[]);
            let (joints, _) = cpu_pose(&model, clip_index, time);
            let order = model.layout.joints(model.skeleton.len());
            let mut worst = 0.0f32;
            for (entry, &joint) in json["joints"].as_array().expect("joints").iter().zip(&order) {
                let found = model.layout.to_model * matrix(entry);
                worst = worst.max(shell_error(&found, &joints[joint], precision.shell));
            }
            println!("{} at {time}: {worst:e} from the raw keys (bound {:e})", file.display(), precision.error);
            assert!(worst <= precision.error + slack, "{}: {worst:e} over {:e}", file.display(), precision.error);
            assert!(worst > 0.0, "{}: compressed, so not exactly the keys", file.display());
        }
    }
}
