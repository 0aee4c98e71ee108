//! The first look, III (issue 54): feet on the ground, carried clips that face forward, the clip a
//! user expects, clip tables where authors put them, sizes in a mixed crowd and in the frame.
//! Measured on the CPU, every vertex, independently of the sampling the scene stages with.

use std::path::Path;

use glam::{Mat4, Quat, Vec3};
use vkskin::anim::retarget::{facing_turn, retarget};
use vkskin::app::{default_animations, SceneSetup};
use vkskin::formats::load_model;
use vkskin::model::{Model, Vertex, VertexOffsets};

use crate::common::{default_model, fresh_folder, shared_clips, shared_models};

/// Instance `index`'s surface over its clip, every vertex (morphed and skinned) at `per_second`
/// times a second of the clip (24 at least), in world space: the lowest point and the tallest
/// pose's height.
fn lowest_and_height(setup: &SceneSetup, index: usize, per_second: f32) -> (f32, f32) {
    let model = setup.model_of(index);
    let instance = &setup.instances[index];
    let world = instance.world();
    let clip = instance.clip.and_then(|clip| model.clips.get(clip));
    let samples = clip.map_or(1, |clip| ((clip.duration * per_second) as usize).max(24));
    let (offsets, mut weights) = (VertexOffsets::of(model), model.default_weights());
    let mut palette = vec![Mat4::IDENTITY; model.skeleton.len()];
    let (mut lowest, mut height) = (f32::INFINITY, 0.0f32);
    for sample in 0..samples {
        if let Some(clip) = clip {
            let time = clip.start + clip.duration * sample as f32 / samples as f32;
            model.palette_at(clip.animation, time, &mut palette);
            weights = model.morph_weights(clip.animation, time);
        }
        let palette = clip.is_some().then_some(palette.as_slice());
        let (mut low, mut high) = (f32::INFINITY, f32::NEG_INFINITY);
        for (vertex_index, vertex) in model.vertices.iter().enumerate() {
            let morphed = Vertex { position: offsets.moved(vertex_index as u32, vertex.position, &weights), ..*vertex };
            let y = world.transform_point3(model.skinned_position(&morphed, palette)).y;
            (low, high) = (low.min(y), high.max(y));
        }
        lowest = lowest.min(low);
        height = height.max(high - low);
    }
    (lowest, height)
}

/// Issue 54's test: the figure's lowest skinned vertex over its walk is within 1 % of its height
/// of the ground, alone and in a crowd (where no figure sinks into the one ground either). The
/// culling cells the ground stood on before reach 0.24 m below its feet.
#[test]
fn the_figure_stands_on_the_ground_over_its_walk() {
    let model = default_model();
    for count in [1, 9] {
        let setup = SceneSetup::new(model.clone(), count);
        let ground = setup.ground().y;
        let measured: Vec<(f32, f32)> = (0..count).map(|index| lowest_and_height(&setup, index, 120.0)).collect();
        let lowest = measured.iter().map(|&(lowest, _)| lowest).fold(f32::INFINITY, f32::min);
        let height = measured.iter().map(|&(_, height)| height).fold(0.0, f32::max);
        println!("{count} figures: lowest vertex {lowest:.4} m, ground {ground:.4} m, height {height:.3} m");
        assert!((lowest - ground).abs() <= 0.01 * height, "{count}: the feet {:.4} m from the ground", lowest - ground);
        for (index, &(lowest, height)) in measured.iter().enumerate() {
            assert!(lowest >= ground - 0.01 * height, "figure {index} sinks {:.4} m into the ground", ground - lowest);
        }
        assert!(model.animated_bounds().min.y < ground - 0.1, "the cells reach below the feet, the ground does not");
    }
}

/// Every shared model stands on its ground: its lowest point over the clip it plays within 1 % of
/// its height of it (the culling cells reach 3.2 units below the ninja's feet).
#[test]
fn every_shared_model_stands_on_its_ground() {
    let Some(folder) = shared_models("") else { return };
    for file in [
        "ms3d/ninja/ninja.ms3d",
        "gltf/Fox/Fox.glb",
        "gltf/RobotExpressive/RobotExpressive.glb",
        "gltf/CesiumMan/CesiumMan.glb",
        "fbx/QuaterniusMan/Male_Casual.fbx",
        "gltf/MorphStressTest/glTF/MorphStressTest.gltf",
    ] {
        let path = folder.join(file);
        let model = load_model(&path, &default_animations(&path, &[])).unwrap_or_else(|error| panic!("{error}"));
        let setup = SceneSetup::new(model, 1);
        let (lowest, height) = lowest_and_height(&setup, 0, 60.0);
        let gap = lowest - setup.ground().y;
        println!("{file}: lowest point {gap:+.5} from the ground, {:.2} % of its height", gap / height * 100.0);
        assert!(gap.abs() <= 0.01 * height, "{file}: {gap} from the ground, height {height}");
    }
}

/// `model` turned about +Y by `turn` in its own model space: its vertices, its roots' rests and
/// its inverse binds, so that it faces another way and poses the same otherwise.
fn turned(model: &Model, turn: Quat) -> Model {
    let mut turned = model.clone();
    for vertex in &mut turned.vertices {
        vertex.position = turn * vertex.position;
        vertex.normal = turn * vertex.normal;
        vertex.tangent = (turn * vertex.tangent.truncate()).extend(vertex.tangent.w);
    }
    let (rotate, unrotate) = (Mat4::from_quat(turn), Mat4::from_quat(turn.inverse()));
    for joint in &mut turned.skeleton.joints {
        if joint.parent.is_none() {
            joint.pre = rotate * joint.pre;
        }
        joint.inverse_bind *= unrotate;
    }
    turned.animations.clear();
    turned.clips.clear();
    turned
}

/// A clip carried to a rig that faces the other way in its model space (the three.js Soldier
/// faces +Z, X Bot -Z) turns the target from its own rest as it turns the source from the
/// source's: every joint of the target is where the source's is, turned with the rig. Carried
/// without the turn (the rule before issue 54), the target walks backwards.
#[test]
fn a_clip_carried_to_a_rig_facing_the_other_way_faces_forward() {
    let Some(folder) = shared_models("gltf") else { return };
    for (file, clip) in [("CesiumMan/CesiumMan.glb", 0), ("Fox/Fox.glb", 1)] {
        let source = load_model(&folder.join(file), &[]).expect("loads");
        let half_turn = Quat::from_rotation_y(std::f32::consts::PI);
        let target = turned(&source, half_turn);
        let (from, to) = (source.facing_yaw().expect("a front"), target.facing_yaw().expect("a front"));
        let facing = facing_turn(Some(from), Some(to));
        assert!(facing.angle_between(half_turn) < 1e-4, "{file}: faces {from} and {to}: a half turn apart");
        let animation = &source.animations[source.clips[clip].animation];
        let worst = |facing: Quat| {
            let carried =
                retarget(&source.skeleton, std::slice::from_ref(animation), &target.skeleton, facing).expect("names match");
            let mut worst = 0.0f32;
            for step in 0..12 {
                let time = animation.duration * step as f32 / 12.0;
                let (source_posed, target_posed) = (
                    vkskin::anim::posed_models(&source.skeleton, Some(animation), time),
                    vkskin::anim::posed_models(&target.skeleton, Some(&carried.animations[0]), time),
                );
                for (a, b) in source_posed.iter().zip(&target_posed) {
                    let a = a.w_axis.truncate();
                    worst = worst.max((half_turn * a).distance(b.w_axis.truncate()));
                }
            }
            worst
        };
        let (with_turn, without) = (worst(facing), worst(Quat::IDENTITY));
        let extent = source.extent();
        println!(
            "{file}: joints {with_turn:e} from the source's, turned ({without:e} carried without the turn), extent {extent}"
        );
        assert!(with_turn <= 1e-4 * extent, "{file}: {with_turn} off");
        assert!(without > 0.05 * extent, "{file}: the test tells the two apart");
    }
}

/// The clip a user expects plays: a walk before a run, a dance or an idle, those before other
/// names, and never a blink, a pain, a pose or a death where something else exists.
#[test]
fn the_clip_a_user_expects_plays() {
    let Some(folder) = shared_models("") else { return };
    for (file, expected) in [
        ("gltf/Fox/Fox.glb", "Walk"),
        ("gltf/RobotExpressive/RobotExpressive.glb", "Walking"),
        ("fbx/QuaterniusMan/Male_Casual.fbx", "HumanArmature|Man_Walk"),
        ("fbx/QuaterniusRobot/Robot.fbx", "RobotArmature|Robot_Walking"),
        ("ms3d/ninja/ninja.ms3d", "Walk (normal)"),
    ] {
        let path = folder.join(file);
        let model = load_model(&path, &default_animations(&path, &[])).expect("loads");
        let played = model.default_clip().map(|clip| model.clips[clip].name.as_str());
        assert_eq!(played, Some(expected), "{file}");
    }
    // The figure's two clips renamed: what a name says comes before how much a clip moves.
    let mut model = default_model();
    for (names, expected) in [(["Death", "agree"], "agree"), (["Blink", "Idle"], "Idle"), (["T-Pose", "pain"], "T-Pose")] {
        for (clip, name) in model.clips.iter_mut().zip(names) {
            clip.name = name.to_string();
        }
        let played = model.default_clip().map(|clip| model.clips[clip].name.clone());
        assert_eq!(played.as_deref(), Some(expected), "{names:?}");
    }
}

/// The ninja, written with its clip table where other authors put it: in the model's comment
/// (`2,20,walk` lines), or in a readme named after the model among prose; each is read, and the
/// model says where its clips came from.
#[test]
fn a_clip_table_in_the_model_or_beside_it_cuts_the_clips() {
    let Some(folder) = shared_models("ms3d/ninja") else { return };
    let bytes = std::fs::read(folder.join("ninja.ms3d")).expect("the ninja reads");
    let mut file = vkskin::formats::ms3d::parse(&bytes, Path::new("ninja.ms3d")).expect("parses");
    let scratch = fresh_folder("first_look", "clip_tables");

    // In the model's comment.
    let comments = file.comments.get_or_insert_with(Default::default);
    comments.model = Some(b"ninja by Psionic\r\n1,14,walk\r\n15,30,stealth walk\r\n251,300,idle\r\n".to_vec());
    let commented = scratch.join("commented").join("ninja.ms3d");
    std::fs::create_dir_all(commented.parent().expect("a folder")).expect("a folder");
    std::fs::write(&commented, vkskin::formats::ms3d::write(&file)).expect("written");
    let model = load_model(&commented, &[]).expect("loads");
    let names: Vec<&str> = model.clips.iter().map(|clip| clip.name.as_str()).collect();
    assert_eq!(names, ["walk", "stealth walk", "idle", "ninja"], "the comment's clips, then the whole timeline");
    assert!(
        model.stats.notes.iter().any(|note| note.starts_with("3 clips from the table in the model's comment")),
        "{:?}",
        model.stats.notes
    );
    assert!((model.clips[0].start - 1.0 / 30.0).abs() < 1e-5 && (model.clips[0].duration - 13.0 / 30.0).abs() < 1e-5);
    assert_eq!(model.default_clip(), Some(0), "the walk plays");

    // In a readme named after the model, among prose.
    file.comments = None;
    let beside = scratch.join("beside").join("ninja.ms3d");
    std::fs::create_dir_all(beside.parent().expect("a folder")).expect("a folder");
    std::fs::write(&beside, vkskin::formats::ms3d::write(&file)).expect("written");
    let readme = "The ninja, free for any use.\n\nIts frames:\n\n1-14\t\tWalk cycle\n184-205\t\tIdle 1 - breathe\n\
                  166-173\t\tDeath\n\nEnjoy, and let us know (2003-2004 tour dates below).\n";
    std::fs::write(scratch.join("beside").join("Ninja.TXT"), readme).expect("written");
    let model = load_model(&beside, &[]).expect("loads");
    let names: Vec<&str> = model.clips.iter().map(|clip| clip.name.as_str()).collect();
    assert_eq!(names, ["Walk cycle", "Idle 1 - breathe", "Death", "ninja"]);
    assert!(
        model.stats.notes.iter().any(|note| note.starts_with("3 clips from the table in Ninja.TXT")),
        "{:?}",
        model.stats.notes
    );
    assert_eq!(model.default_clip(), Some(0), "the walk plays, not the death");
}

/// In a mixed crowd each model stands as tall as the others in the clip it plays (the ninja stood
/// a third as tall, scaled by boxes that took in the cells' margins); and a crowd of them, and a
/// single figure under a long motion-capture clip, fill 40-90 % of the frame.
#[test]
fn a_mixed_crowd_stands_as_tall_and_fills_the_frame() {
    let Some(folder) = shared_models("") else { return };
    let files = [
        "ms3d/ninja/ninja.ms3d",
        "gltf/CesiumMan/CesiumMan.glb",
        "fbx/QuaterniusMan/Male_Casual.fbx",
        "gltf/RobotExpressive/RobotExpressive.glb",
    ];
    let models: Vec<Model> = files
        .iter()
        .map(|file| {
            let path = folder.join(file);
            load_model(&path, &default_animations(&path, &[])).expect("loads")
        })
        .collect();
    let setup = SceneSetup::with_models(models, 14, false);
    let heights: Vec<f32> = (0..files.len()).map(|index| lowest_and_height(&setup, index, 30.0).1).collect();
    let (shortest, tallest) = heights.iter().fold((f32::INFINITY, 0.0f32), |(low, high), &h| (low.min(h), high.max(h)));
    println!("heights {heights:?}: tallest {:.3}x the shortest", tallest / shortest);
    assert!(tallest / shortest <= 1.25, "{heights:?}");

    // The crowd in the frame: every figure's vertices at one time, projected.
    let scene = setup.frame(0.5, 16.0 / 9.0);
    let (mut low, mut high) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
    for (index, instance) in setup.instances.iter().enumerate() {
        let model = setup.model_of(index);
        let clip = instance.clip.and_then(|clip| model.clips.get(clip));
        let mut palette = vec![Mat4::IDENTITY; model.skeleton.len()];
        if let Some(clip) = clip {
            model.palette_at(
                clip.animation,
                clip.animation_time(0.5 * f64::from(instance.speed) + f64::from(instance.phase)),
                &mut palette,
            );
        }
        for vertex in model.vertices.iter().step_by(3) {
            let world = instance.world().transform_point3(model.skinned_position(vertex, clip.map(|_| palette.as_slice())));
            let projected = scene.view_projection.project_point3(world);
            (low, high) = (low.min(projected), high.max(projected));
        }
    }
    let fill = ((high.x - low.x) * 0.5).max((high.y - low.y) * 0.5);
    println!(
        "a crowd of 14: {:.0} % of the frame, from {:.0} % to {:.0} % down",
        fill * 100.0,
        (low.y + 1.0) * 50.0,
        (high.y + 1.0) * 50.0
    );
    assert!((0.4..=0.9).contains(&fill), "the crowd fills {:.0} %", fill * 100.0);
    assert!(high.y > 0.3, "the lower part of the frame is empty: the crowd ends {:.0} % down", (high.y + 1.0) * 50.0);

    // A single figure under a motion-capture walk that crosses the room: the camera follows it.
    let Some(clips) = shared_clips("cmu/bvh") else { return };
    let path = vkskin::app::default_model_path();
    let mut animations = default_animations(&path, &[]);
    animations.push(clips.join("131_01.bvh"));
    let mut setup = SceneSetup::new(load_model(&path, &animations).expect("the figure with the clip"), 1);
    let clip = setup.model.clips.iter().position(|clip| clip.name == "131_01").expect("the carried clip");
    setup.play(clip, 0.0, 0.0);
    setup.frame_played();
    let fill = setup.played_fill();
    println!("the figure under CMU 131_01 fills {:.0} % of the frame", fill * 100.0);
    assert!((0.4..=0.9).contains(&fill), "{:.0} %", fill * 100.0);
    assert_ne!(setup.camera_at(2.0).target, setup.camera.target, "the camera follows the walker");
}
