//! Every character opens well framed: on every model in ../shared/models (and the bundled figure),
//! the culling cells are held to the box of the vertices morphed and skinned on the CPU over each cell's time
//! (`Model::cell_tightness`: box diagonals, six times a cell), and the default camera shows the
//! clip being played at 40-90 % of a 16:9 frame. Skipped, with a message, without that folder.

use std::path::{Path, PathBuf};

use vkskin::app::{default_animations, default_model_path, SceneSetup};
use vkskin::formats::load_model;
use vkskin::model::Model;

/// Every model file under ../shared/models that vkskin reads, and the bundled figure.
fn models() -> Vec<PathBuf> {
    let mut found = vec![default_model_path()];
    let Some(folder) = crate::common::shared_models("") else { return found };
    let mut stack = vec![folder];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).expect("the models folder reads").flatten() {
            let path = entry.path();
            let extension = path.extension().and_then(|extension| extension.to_str()).map(str::to_ascii_lowercase);
            if path.is_dir() {
                stack.push(path);
            } else if matches!(extension.as_deref(), Some("glb" | "gltf" | "dae" | "ms3d" | "md5mesh" | "fbx")) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn load(path: &Path) -> Model {
    load_model(path, &default_animations(path, &[])).unwrap_or_else(|error| panic!("{} loads: {error}", path.display()))
}

/// The cells hold the skinned vertices loosely by at most 2x on any model's worst cell, the bundled
/// figure's included, and by at most 1.25x in the median of the third-party models' worst cells
/// (issue 26's bar, over the formats it had; the sphere-per-joint cells before them were up to 19x
/// on Milkshape files). The bundled figure is not in that median: its 1.27x would be the whole
/// median of a clone without the third-party models. The FBX files came later and are held to the
/// 2x per model; with them the median is printed (1.27x: their baked keys and the Maya sausage's
/// twist leave worst cells of 1.45-1.68x), not asserted.
#[test]
fn culling_cells_are_within_a_quarter_of_the_skinned_box() {
    let (mut worsts, mut with_fbx) = (Vec::new(), Vec::new());
    let bundled = default_model_path();
    for path in models() {
        let model = load(&path);
        let Some(tightness) = model.cell_tightness(50_000_000) else {
            println!("{}: no animation", path.display());
            continue;
        };
        println!(
            "{}: {} of {} cells, median {:.3}x, worst {:.3}x",
            path.display(),
            tightness.cells,
            tightness.of,
            tightness.median,
            tightness.worst
        );
        assert_eq!(tightness.cells, tightness.of, "{}: every cell measured", path.display());
        assert!(tightness.median >= 1.0 - 1e-3, "{}: a cell smaller than what it holds", path.display());
        assert!(tightness.worst <= 2.0, "{}: worst cell {:.2}x the skinned box", path.display(), tightness.worst);
        if path == bundled {
            continue;
        }
        with_fbx.push(tightness.worst);
        if !path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("fbx")) {
            worsts.push(tightness.worst);
        }
    }
    if worsts.is_empty() {
        return; // models() said why: no third-party models here
    }
    with_fbx.sort_by(f32::total_cmp);
    println!("with the FBX files: median of the worst cells {:.3}x over {} models", with_fbx[with_fbx.len() / 2], with_fbx.len());
    worsts.sort_by(f32::total_cmp);
    let median = worsts[worsts.len() / 2];
    println!("median of the third-party models' worst cells: {median:.3}x over {} models", worsts.len());
    assert!(median <= 1.25, "median of the worst cells {median:.3}x");
}

#[test]
fn the_default_camera_frames_the_played_clip_at_40_to_90_percent() {
    for path in models() {
        let model = load(&path);
        let clips = model.clips.len();
        let mut setup = SceneSetup::new(model, 1);
        let share = setup.played_fill();
        println!("{}: the first clip fills {:.0} % of the frame", path.display(), share * 100.0);
        assert!((0.4..=0.9).contains(&share), "{}: {:.0} % of the frame", path.display(), share * 100.0);
        // `render --clip N` frames the clip asked for.
        if clips > 1 {
            setup.play(clips - 1, 0.0, 0.0);
            setup.frame_played();
            let share = setup.played_fill();
            println!("  its last clip fills {:.0} %", share * 100.0);
            assert!((0.4..=0.9).contains(&share), "{}, last clip: {:.0} % of the frame", path.display(), share * 100.0);
        }
    }
}

/// The angle between two yaws (radians), 0 to π.
fn yaw_apart(a: f32, b: f32) -> f32 {
    (a - b).sin().atan2((a - b).cos()).abs()
}

fn toes_yaw(model: &Model) -> Option<f32> {
    model.feet_yaw(&model.bind_joint_positions())
}

fn names_yaw(model: &Model) -> Option<f32> {
    model.named_sides_yaw(&model.bind_joint_positions())
}

/// The camera opens in front of the character (`Model::facing_yaw`), and its cues are held to each
/// other. The bundled figure's names and toes agree; with its left and right names swapped (a rig
/// whose `.L` joints sit on the character's right, as Blender's Bob.md5mesh) the toes in the pose
/// that plays face it the same way as before; renamed `Joint0`, `Joint1`, ... (the Milkshape
/// ninja's names) its toes alone do. On the shared models names and toes agree within 15°
/// wherever both tell, and the ninja faces -Z.
#[test]
fn the_camera_opens_in_front_by_the_names_or_the_toes() {
    let figure = load(&default_model_path());
    let yaw = figure.facing_yaw().expect("the bundled figure's names tell its left from its right");
    let fifteen = 15f32.to_radians();
    let toes = toes_yaw(&figure).expect("the bundled figure's toes tell");
    assert!(yaw_apart(yaw, toes) < fifteen, "names {yaw}, toes {toes}");

    let mut swapped = figure.clone();
    for joint in &mut swapped.skeleton.joints {
        joint.name = joint.name.replace("left", "LEFT").replace("right", "left").replace("LEFT", "right");
    }
    let mirrored = names_yaw(&swapped).expect("swapped names still tell");
    assert!(yaw_apart(mirrored, yaw) > 165f32.to_radians(), "swapped names give {mirrored}, not the opposite of {yaw}");
    let decided = swapped.facing_yaw().expect("the swapped figure faces somewhere");
    assert!(yaw_apart(decided, yaw) < fifteen, "swapped names: {decided} against {yaw}");

    let mut unnamed = figure.clone();
    for (index, joint) in unnamed.skeleton.joints.iter_mut().enumerate() {
        joint.name = format!("Joint{index}");
    }
    assert!(names_yaw(&unnamed).is_none());
    let by_toes = unnamed.facing_yaw().expect("the toes tell without the names");
    assert!(yaw_apart(by_toes, yaw) < fifteen, "toes alone: {by_toes} against {yaw}");

    for path in models() {
        let model = load(&path);
        if let (Some(names), Some(toes)) = (names_yaw(&model), toes_yaw(&model)) {
            assert!(yaw_apart(names, toes) < fifteen, "{}: names {names}, toes {toes}", path.display());
        }
        if path.ends_with("ninja.ms3d") {
            let ninja = model.facing_yaw().expect("the ninja's toes tell");
            assert!(yaw_apart(ninja, std::f32::consts::PI) < 10f32.to_radians(), "the ninja faces {ninja}, not -Z");
        }
    }
}
