//! Clips from one file played on a model from another (`--anim`, `src/anim/retarget.rs`): the
//! same rig in two files or two formats poses alike, a file with joints and clips but no mesh
//! loads as clips, and names that match nothing are refused with the file named.

use std::path::{Path, PathBuf};

use glam::{Mat4, Quat, Vec3};
use vkskin::anim::retarget::compare::bone_angles;
use vkskin::anim::retarget::retarget;
use vkskin::anim::{local_to_model, Joint, JointPose, Skeleton};
use vkskin::formats::{load_model, read_clips};
use vkskin::model::Model;

use crate::common::{scratch_in, shared_models};
use crate::fbx_loader::{conversion, obj_points, set_distance, skinned};

/// The sausage without animation takes the clips of its animated twins (binary 7.5, ASCII 7.5,
/// ASCII 6.1): skinned at the frames Maya posed in `reference/`, it is Maya's mesh within 1e-4 of
/// the extent. Not `deform`: it scales joints whose children compensate the scale (Maya's segment
/// scale compensation), which ufbx carries on helper joints that only the animated files have; the
/// report names them as animated joints the model lacks.
#[test]
fn the_unanimated_sausage_plays_its_twins_clips_as_maya_posed_them() {
    let Some(folder) = shared_models("fbx/MayaSausage") else { return };
    let model_path = folder.join("maya_game_sausage_7500_binary.fbx");
    let to_model = conversion(&model_path);
    for source in [
        "maya_game_sausage_7500_binary_combined.fbx",
        "maya_game_sausage_7500_ascii_combined.fbx",
        "maya_game_sausage_6100_ascii_combined.fbx",
    ] {
        let model = load_model(&model_path, &[folder.join(source)]).expect("loads with the clips");
        assert_eq!(model.clips.len(), 3, "{source}");
        let report = model.stats.warnings.iter().find(|warning| warning.contains(source)).expect("the report");
        assert!(report.contains("5 of 8 joints matched by name; animated but not in the model: joint1 scale helper"), "{report}");
        assert!(model.animations.iter().all(|animation| animation.source.as_deref() == Some(folder.join(source).as_path())));
        for (clip, frame, reference) in [
            ("wiggle", 9.0, "maya_game_sausage_wiggle_10.obj"),
            ("spin", 15.0, "maya_game_sausage_spin_15.obj"),
            ("spin", 7.0, "maya_game_sausage_spin_7.obj"),
        ] {
            let expected: Vec<Vec3> =
                obj_points(&folder.join("reference").join(reference)).iter().map(|p| to_model.transform_point3(*p)).collect();
            let distance = set_distance(&skinned(&model, clip, frame / 24.0), &expected);
            println!("{source} {clip} frame {frame}: {distance:e} from {reference} (extent {})", model.extent());
            assert!(distance <= 1e-4 * model.extent(), "{source} {clip}: {distance} from {reference}");
        }
    }
}

/// The joints' model-space positions of `model` in `clip` at `time`.
fn joint_positions(model: &Model, clip: usize, time: f32) -> Vec<Vec3> {
    let clip = &model.clips[clip];
    model.joint_matrices(clip.animation, clip.start + time).iter().map(|matrix: &Mat4| matrix.w_axis.truncate()).collect()
}

/// RiggedFigure exported by Blender as COLLADA (Z-up, matrix keys) and converted to glTF (Y-up,
/// T/R/S keys): the COLLADA clip played on the glTF model moves every joint where the glTF's own
/// clip moves it, within 1e-3 of the extent, across axes and formats.
#[test]
fn a_collada_clip_on_the_gltf_twin_poses_like_its_own() {
    let Some(models) = shared_models("") else { return };
    let glb = models.join("gltf/RiggedFigure/RiggedFigure.glb");
    let dae = models.join("collada/RiggedFigure/RiggedFigure.dae");
    let model = load_model(&glb, &[dae]).expect("loads with the COLLADA clip");
    assert_eq!(model.clips.len(), 2);
    let extent = model.extent();
    let mut worst = 0.0f32;
    for fraction in [0.0, 0.2, 0.45, 0.7, 0.95] {
        let time = model.clips[0].duration * fraction;
        let own = joint_positions(&model, 0, time);
        let carried = joint_positions(&model, 1, time);
        for (a, b) in own.iter().zip(&carried) {
            worst = worst.max(a.distance(*b));
        }
    }
    println!("RiggedFigure: COLLADA clip on the glTF model, joints {worst:e} from the glTF clip (extent {extent})");
    assert!(worst <= 1e-3 * extent, "{worst} against extent {extent}");
}

/// Quaternius's robot as Blender's FBX and as FBX2glTF's glTF (which adds morph targets): the FBX's
/// 14 clips play on the glTF model as its own clips of the same names do. Names repeat in both
/// files (mesh nodes named as the bones they hang from, and in the glTF each bone is in two skins),
/// which the parents' names tell apart. Skinned, the two clips agree within 1e-2 of the extent:
/// the glTF's body rests 0.036 lower than the FBX's (0.8 % of the extent), which the target keeps.
#[test]
fn the_fbx_robots_clips_play_on_its_gltf_conversion() {
    let Some(models) = shared_models("") else { return };
    let model =
        load_model(&models.join("gltf/RobotExpressive/RobotExpressive.glb"), &[models.join("fbx/QuaterniusRobot/Robot.fbx")])
            .expect("loads with the FBX clips");
    let report = model.stats.warnings.iter().find(|warning| warning.starts_with("clips of Robot.fbx")).expect("the report");
    assert!(report.contains("55 of 73 joints matched by name; animated but not in the model: RobotArmature"), "{report}");
    let extent = model.extent();
    let mut worst = (0.0f32, String::new());
    for name in ["Dance", "Wave", "Running", "Punch", "ThumbsUp"] {
        let own = model.clips.iter().position(|clip| clip.name == name).expect("the glTF's clip");
        let carried = model.clips.iter().position(|clip| clip.name == format!("RobotArmature|Robot_{name}")).expect("the FBX's");
        let own_name = &model.clips[own].name;
        for fraction in [0.1, 0.35, 0.6, 0.85] {
            let time = model.clips[own].duration * fraction;
            let (a, b) = (skinned(&model, own_name, time), skinned(&model, &model.clips[carried].name, time));
            let off = a.iter().zip(&b).map(|(a, b)| a.distance(*b)).fold(0.0f32, f32::max);
            if off > worst.0 {
                worst = (off, format!("{name} at {time:.3} s"));
            }
        }
    }
    println!(
        "RobotExpressive with Robot.fbx's clips: worst vertex {:e} from its own clip ({}), extent {extent}",
        worst.0, worst.1
    );
    assert!(worst.0 <= 1e-2 * extent, "{worst:?} against extent {extent}");
}

/// A .md5anim read alone (its hierarchy and baseframe as the skeleton) and matched by name onto
/// the bundled figure poses every joint as the MD5 loader's own path does.
#[test]
fn a_lone_md5anim_matched_by_name_equals_the_md5_path() {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let walk = assets.join("figure_walk.md5anim");
    let own = load_model(&assets.join("figure.md5mesh"), std::slice::from_ref(&walk)).expect("loads");
    let source = read_clips(&walk).expect("a lone .md5anim");
    assert!(source.vertices.is_empty() && source.clips.len() == 1);
    let mut bare = load_model(&assets.join("figure.md5mesh"), &[]).expect("loads");
    bare.animations.clear();
    bare.clips.clear();
    let retargeted = retarget(&source.skeleton, &source.animations, &bare.skeleton, Quat::IDENTITY).expect("names match");
    assert!(retargeted.missing_in_source.is_empty() && retargeted.missing_in_target.is_empty());
    bare.animations = retargeted.animations;
    bare.clip_each_animation();
    let extent = own.extent();
    for time in [0.0, 0.13, 0.5, 0.77, 1.1] {
        let expected = own.joint_matrices(0, time);
        let found = bare.joint_matrices(0, time);
        for (joint, (a, b)) in expected.iter().zip(&found).enumerate() {
            let off = (*a - *b).to_cols_array().iter().fold(0.0f32, |worst, value| worst.max(value.abs()));
            assert!(off <= 1e-5 * extent.max(1.0), "joint {joint} at {time}: {off}");
        }
    }
}

/// RiggedSimple.glb with its mesh, skin and materials cut away: joints and a clip, nothing to
/// draw. It loads as clips (a "without skin" download), and played on the full file it poses the
/// joints as the file's own clip does.
#[test]
fn a_gltf_without_mesh_loads_as_clips_and_plays_on_the_full_model() {
    let Some(models) = shared_models("gltf/RiggedSimple") else { return };
    let full = models.join("RiggedSimple.glb");
    let clips_only = without_meshes(&full, &scratch_in("retarget", "RiggedSimple_clips.glb"));
    let source = load_model(&clips_only, &[]).expect("a file of clips loads");
    assert!(source.vertices.is_empty() && !source.skeleton.is_empty() && source.clips.len() == 1);
    assert!(vkskin::formats::is_clips_only(&clips_only) && !vkskin::formats::is_clips_only(&full));
    let model = load_model(&full, std::slice::from_ref(&clips_only)).expect("loads with the clips");
    assert_eq!(model.clips.len(), 2);
    let extent = model.extent();
    for time in [0.1, 0.5, 1.0, 1.9] {
        let (own, carried) = (joint_positions(&model, 0, time), joint_positions(&model, 1, time));
        for (a, b) in own.iter().zip(&carried) {
            assert!(a.distance(*b) <= 1e-5 * extent, "at {time}: {a} against {b}");
        }
    }
}

/// riggedSimple.dae, the glTF's COLLADA source, with its controller and geometry instances cut
/// out: a scene of animated nodes. Its nodes load as joints with a clip, and on the glTF model the
/// clip poses the joints as the glTF's own within 1e-4 of the extent.
#[test]
fn a_collada_scene_without_instances_loads_as_clips() {
    let Some(models) = shared_models("") else { return };
    let text = std::fs::read_to_string(models.join("collada/RiggedSimple/riggedSimple.dae")).expect("COLLADA");
    let mut cut = text.clone();
    for tag in ["instance_controller", "instance_geometry"] {
        while let Some(start) = cut.find(&format!("<{tag}")) {
            let end = cut[start..].find(&format!("</{tag}>")).expect("closed") + start + tag.len() + 3;
            cut.replace_range(start..end, "");
        }
    }
    let clips_only = scratch_in("retarget", "riggedSimple_clips.dae");
    std::fs::write(&clips_only, cut).expect("written");
    let source = load_model(&clips_only, &[]).expect("a scene of animated nodes loads");
    assert!(source.vertices.is_empty() && source.skeleton.len() == 2 && source.clips.len() == 1);
    let model = load_model(&models.join("gltf/RiggedSimple/RiggedSimple.glb"), &[clips_only]).expect("loads with the clips");
    let extent = model.extent();
    for fraction in [0.1, 0.4, 0.7, 0.95] {
        let time = model.clips[0].duration * fraction;
        let (own, carried) = (joint_positions(&model, 0, time), joint_positions(&model, 1, time));
        for (a, b) in own.iter().zip(&carried) {
            assert!(a.distance(*b) <= 1e-4 * extent, "at {time}: {a} against {b}");
        }
    }
}

/// `path` (a GLB) with its meshes, skins and materials removed, written to `out`.
pub(crate) fn without_meshes(path: &Path, out: &Path) -> PathBuf {
    let bytes = std::fs::read(path).expect("GLB");
    let json_length = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")) as usize;
    let mut json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + json_length]).expect("JSON");
    let root = json.as_object_mut().expect("an object");
    for key in ["meshes", "skins", "materials", "textures", "images", "samplers"] {
        root.remove(key);
    }
    for node in root.get_mut("nodes").and_then(|nodes| nodes.as_array_mut()).expect("nodes") {
        let node = node.as_object_mut().expect("a node");
        node.remove("mesh");
        node.remove("skin");
    }
    let mut text = serde_json::to_vec(&json).expect("JSON");
    while text.len() % 4 != 0 {
        text.push(b' ');
    }
    let bin = &bytes[20 + json_length..];
    let mut glb = Vec::new();
    glb.extend_from_slice(&bytes[..8]);
    glb.extend_from_slice(&((12 + 8 + text.len() + bin.len()) as u32).to_le_bytes());
    glb.extend_from_slice(&(text.len() as u32).to_le_bytes());
    glb.extend_from_slice(b"JSON");
    glb.extend_from_slice(&text);
    glb.extend_from_slice(bin);
    std::fs::write(out, glb).expect("written");
    out.to_path_buf()
}

/// Clips whose joint names match nothing in the model are refused with the file named; a file
/// with no animation is refused as a source of clips.
#[test]
fn clips_that_match_nothing_are_refused_with_the_file_named() {
    let Some(models) = shared_models("") else { return };
    let sausage = models.join("fbx/MayaSausage/maya_game_sausage_7500_binary.fbx");
    let fox = models.join("gltf/Fox/Fox.glb");
    let error = load_model(&sausage, std::slice::from_ref(&fox)).expect_err("no joint matches").to_string();
    assert!(error.contains("Fox.glb") && error.contains("no joint name matches"), "{error}");
    let error = load_model(&fox, std::slice::from_ref(&sausage)).expect_err("no animation").to_string();
    assert!(error.contains("maya_game_sausage_7500_binary.fbx") && error.contains("expected animations"), "{error}");
}

/// `vkskin inspect MODEL --anim FILE` says where each clip came from and what matched.
#[test]
fn inspect_lists_where_each_clip_came_from() {
    let Some(folder) = shared_models("fbx/MayaSausage") else { return };
    let source = folder.join("maya_game_sausage_7500_ascii_combined.fbx");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .env("VKSKIN_CACHE_DIR", crate::common::derived_cache())
        .arg("inspect")
        .arg(folder.join("maya_game_sausage_7500_binary.fbx"))
        .arg("--anim")
        .arg(&source)
        .args(["--lod", "off"])
        .output()
        .expect("runs");
    let output = crate::common::text(&output);
    assert!(output.contains(&format!("[0] wiggle: 0.792 s from 0.000 s of animation 0, from {}", source.display())), "{output}");
    assert!(output.contains("5 of 8 joints matched by name"), "{output}");
}

/// `skeleton` rebuilt as another exporter might give the same rig: every joint's local axes
/// turned (10-40° about an axis of its own, under the 45° within which the old rule copied local
/// rotations) and every bone scaled by 1.3, the rest pose the same in model space and bound there:
/// each bone points the same way, only the axes and size differ. No `pre`. (Bones scaled each by its own
/// factor would change the directions a translation key gives, as on real characters.)
fn turned_and_scaled(skeleton: &Skeleton) -> Skeleton {
    let rest: Vec<JointPose> = skeleton.joints.iter().map(|joint| joint.rest).collect();
    let mut models = vec![Mat4::IDENTITY; skeleton.len()];
    local_to_model(skeleton, &rest, Mat4::IDENTITY, &mut models);
    let mut positions: Vec<Vec3> = Vec::new();
    let mut rotations: Vec<Quat> = Vec::new();
    let mut joints = Vec::new();
    for (index, joint) in skeleton.joints.iter().enumerate() {
        let seed = index as f32 * 2.399_963;
        let axis = Vec3::new(seed.sin(), (seed * 1.7).cos(), (seed * 0.6).sin() + 0.3).normalize();
        let turn = Quat::from_axis_angle(axis, (10.0 + 30.0 * (seed * 3.1).sin().abs()).to_radians());
        let scale = 1.3;
        let (_, rotation, position) = models[index].to_scale_rotation_translation();
        let rotation = rotation.normalize() * turn;
        let (local, position) = match joint.parent {
            Some(parent) => {
                let (_, _, parent_position) = models[parent].to_scale_rotation_translation();
                let position = positions[parent] + (position - parent_position) * scale;
                let inverse = rotations[parent].inverse();
                (JointPose::new(inverse * rotation, inverse * (position - positions[parent])), position)
            }
            None => (JointPose::new(rotation, position * scale), position * scale),
        };
        positions.push(position);
        rotations.push(rotation);
        joints.push(Joint::new(
            joint.name.clone(),
            joint.parent,
            Mat4::from_rotation_translation(rotation, position).inverse(),
            local,
        ));
    }
    Skeleton { joints }
}

/// Issue 39: a clip carried to a skeleton whose joints have other local axes and other bone
/// lengths (same rest pose in model space) points every bone where the source's points, within
/// 0.5°, on CesiumMan's walk and the Fox's run (1° on the robot's dance, whose `pre`s the rebuilt
/// skeleton drops). Copying local rotations, as the rule before it did for joints whose axes differ
/// by under 45°, was tens of degrees off.
#[test]
fn a_clip_carried_to_other_joint_axes_points_every_bone_the_same_way() {
    let Some(models) = shared_models("gltf") else { return };
    for (file, clip) in [("CesiumMan/CesiumMan.glb", 0), ("Fox/Fox.glb", 2), ("RobotExpressive/RobotExpressive.glb", 0)] {
        let source = load_model(&models.join(file), &[]).expect("loads");
        let target = turned_and_scaled(&source.skeleton);
        let animation = &source.animations[source.clips[clip].animation];
        let carried = retarget(&source.skeleton, std::slice::from_ref(animation), &target, Quat::IDENTITY).expect("names match");
        let times: Vec<f32> = (0..24).map(|step| animation.duration * step as f32 / 24.0).collect();
        let angles = bone_angles(&source.skeleton, animation, &target, &carried.animations[0], &times).expect("bones to compare");
        println!("{file} {}: {angles:?}", animation.name);
        assert!(angles.rest_worst < 0.1, "{file}: the rebuilt rest points every bone the same way: {angles:?}");
        // The robot's hips (Bone → Body, whose translation keys bounce) come out 0.70° off,
        // not yet understood (CesiumMan and the Fox, 0.04° at worst); held to 1°.
        let bound = if file.starts_with("RobotExpressive") { 1.0 } else { 0.5 };
        assert!(angles.worst <= bound, "{file}: {angles:?}");
    }
}

/// The real pairs of one rig family in the shared models (the robot as Blender's FBX and as
/// FBX2glTF's glTF; the sausage with and without its clips): every bone within issue 39's goal
/// (median ≤ 3°, worst ≤ 10° beyond what the two rests differ).
#[test]
fn real_pairs_of_one_rig_carry_within_the_goal() {
    let Some(models) = shared_models("") else { return };
    let pairs = [
        ("fbx/QuaterniusRobot/Robot.fbx", "gltf/RobotExpressive/RobotExpressive.glb"),
        ("fbx/MayaSausage/maya_game_sausage_7500_binary_combined.fbx", "fbx/MayaSausage/maya_game_sausage_7500_binary.fbx"),
    ];
    for (source, target) in pairs {
        let source = load_model(&models.join(source), &[]).expect("the source loads");
        let target = load_model(&models.join(target), &[]).expect("the target loads");
        let carried = retarget(&source.skeleton, &source.animations, &target.skeleton, Quat::IDENTITY).expect("names match");
        for (animation, converted) in source.animations.iter().zip(&carried.animations) {
            let times: Vec<f32> = (0..16).map(|step| animation.duration * step as f32 / 16.0).collect();
            let angles = bone_angles(&source.skeleton, animation, &target.skeleton, converted, &times).expect("bones");
            println!("{} {}: {angles:?}", target.name, animation.name);
            assert!(angles.median <= 3.0, "{}: {angles:?}", animation.name);
            assert!(angles.worst <= angles.rest_worst + 10.0, "{}: {angles:?}", animation.name);
        }
    }
}
