//! Real third-party models from ../shared/models (skipped, with a message, when that folder is
//! absent): each loads, `inspect` describes it, it renders headless with the validation layer
//! clean, and for animated ones the GPU skinning equals the CPU reference at three times.

use std::path::PathBuf;

use crate::common::{assert_no_validation_messages, check_skinning, skin_on_gpu, validated_device};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::formats::load_model;
use vkskin::model::Model;

fn shared_models() -> Option<PathBuf> {
    crate::common::shared_models("")
}

/// Loads, describes, renders and, when animated, checks skinning at three times.
fn conform(relative: &str, expect: impl FnOnce(&Model)) {
    let Some(folder) = shared_models() else { return };
    let path = folder.join(relative);
    let model = load_model(&path, &[]).unwrap_or_else(|error| panic!("{relative} loads: {error}"));
    expect(&model);

    let description = vkskin::app::inspect::describe(&model, None);
    assert!(description.contains(&format!("{} vertices", model.vertices.len())), "{description}");
    assert!(description.contains(&format!("clips: {}", model.clips.len())), "{description}");
    println!(
        "{relative}: {} vertices, {} joints, {} clips, up to {} influences",
        model.vertices.len(),
        model.skeleton.len(),
        model.clips.len(),
        model.stats.max_influences
    );
    for warning in &model.stats.warnings {
        println!("  warning: {warning}");
    }

    let setup = SceneSetup::new(model, 2);
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 96, 72).expect("renderer");
    let duration = setup.model.clips.first().map_or(1.0, |clip| f64::from(clip.duration));
    for fraction in [0.0, 0.37, 0.81] {
        let scene = setup.frame(duration * fraction, headless.aspect());
        let (skinned, _) = skin_on_gpu(&mut headless, &scene);
        let (position, normal) = check_skinning(&setup.model, &scene, &skinned);
        println!(
            "  t = {:.3} s: worst position error {position:e}, normal {normal:e} (extent {:.3})",
            duration * fraction,
            setup.model.extent()
        );
    }
    let image = headless.render(&setup.frame(duration * 0.5, headless.aspect())).expect("frame");
    let background = image.get_pixel(0, 0);
    assert!(image.pixels().any(|pixel| pixel != background), "{relative}: something is drawn");
    assert_no_validation_messages(&device);
}

#[test]
fn md5_boarman_many_meshes_some_empty() {
    conform("md5/boarman/BoarMan.md5mesh", |model| {
        // 14 mesh sections, 13 of them empty: those are skipped, not drawn or refused.
        assert_eq!(model.meshes.len(), 1);
        assert_eq!(model.vertices.len(), 1552);
        assert!(model.clips.is_empty());
    });
}

#[test]
fn md5_simplecube_comments_integers_negative_uvs() {
    conform("md5/simplecube/SimpleCube.md5mesh", |model| assert!(!model.vertices.is_empty()));
}

#[test]
fn gltf_rigged_simple() {
    conform("gltf/RiggedSimple/RiggedSimple.glb", |model| {
        assert_eq!(model.clips.len(), 1);
    });
}

#[test]
fn gltf_rigged_figure() {
    conform("gltf/RiggedFigure/RiggedFigure.glb", |model| {
        assert!(model.skeleton.len() >= 19);
        assert_eq!(model.clips.len(), 1);
    });
}

#[test]
fn gltf_cesium_man() {
    conform("gltf/CesiumMan/CesiumMan.glb", |model| {
        assert_eq!(model.vertices.len(), 3273);
        assert!(model.materials.iter().any(|material| material.texture.is_some()), "the embedded JPEG is decoded");
        assert!((model.clips[0].duration - 2.0).abs() < 0.1);
    });
}

#[test]
fn gltf_fox_three_clips_without_normals() {
    conform("gltf/Fox/Fox.glb", |model| {
        let names: Vec<&str> = model.clips.iter().map(|clip| clip.name.as_str()).collect();
        assert_eq!(names, ["Survey", "Walk", "Run"]);
        assert!(model.vertices.iter().all(|vertex| (vertex.normal.length() - 1.0).abs() < 1e-3), "normals computed");
    });
}

#[test]
fn gltf_simple_skin_data_uris_interleaved() {
    conform("gltf/SimpleSkin/SimpleSkin.gltf", |model| {
        assert_eq!(model.clips.len(), 1);
    });
}

#[test]
fn ms3d_ninja() {
    conform("ms3d/ninja/ninja.ms3d", |model| {
        assert!(model.skeleton.len() >= 28, "{} joints", model.skeleton.len());
        // The 20 ranges of "ninja animation ranges.txt" first, then the whole timeline.
        assert_eq!(model.clips.len(), 21);
        assert_eq!(model.clips[0].name, "Walk (normal)");
        assert!((model.clips[0].start - 1.0 / 30.0).abs() < 1e-6 && (model.clips[0].duration - 13.0 / 30.0).abs() < 1e-6);
        assert_eq!(model.clips[19].name, "Idle 3");
        assert!((model.clips[20].duration - 10.0).abs() < 0.05, "300 frames at 30 fps");
    });
}

#[test]
fn ms3d_jeep_static_with_relative_texture() {
    conform("ms3d/jeep1/jeep1.ms3d", |model| {
        assert!(model.clips.is_empty());
        assert!(model.materials.iter().any(|material| material.texture.is_some()), ".\\jeep1.jpg is found");
    });
}

#[test]
fn ms3d_wuson_static_without_materials() {
    conform("ms3d/wuson/Wuson.ms3d", |model| assert!(model.clips.is_empty()));
}

#[test]
fn collada_rigged_simple() {
    conform("collada/RiggedSimple/riggedSimple.dae", |model| {
        assert_eq!((model.vertices.len(), model.skeleton.len(), model.clips.len()), (96, 2, 1));
    });
}

#[test]
fn collada_rigged_figure_every_influence_kept() {
    conform("collada/RiggedFigure/RiggedFigure.dae", |model| {
        assert_eq!((model.skeleton.len(), model.stats.max_influences, model.clips.len()), (19, 8, 1));
    });
}

#[test]
fn fbx_mixamo_style_character_eleven_stacks_unnormalized_weights() {
    conform("fbx/QuaterniusMan/Male_Casual.fbx", |model| {
        assert_eq!(model.clips.len(), 11);
        assert!(model.clips.iter().any(|clip| clip.name == "HumanArmature|Man_Walk"));
        // Blender's weights sum to 0.91-1.05 here: normalized, with one warning.
        assert!(model.stats.warnings.iter().any(|warning| warning.contains("normalized")));
        assert!(model.stats.max_influences >= 4);
    });
}

#[test]
fn fbx_robot_rigid_parts_beside_skinned_ones() {
    conform("fbx/QuaterniusRobot/Robot.fbx", |model| {
        assert_eq!(model.clips.len(), 14);
        assert!(model.meshes.len() >= 14);
    });
}

#[test]
fn fbx_more_than_four_influences_stay_exact() {
    conform("fbx/AssimpArmature/animation_with_skeleton.fbx", |model| {
        assert_eq!(model.clips.len(), 1);
        assert_eq!(model.stats.max_influences, 6);
    });
}

#[test]
fn fbx_maya_stacks_on_one_timeline_binary_ascii_and_6_1_alike() {
    let mut poses = Vec::new();
    for file in [
        "fbx/MayaSausage/maya_game_sausage_7500_binary_combined.fbx",
        "fbx/MayaSausage/maya_game_sausage_7500_ascii_combined.fbx",
        "fbx/MayaSausage/maya_game_sausage_6100_ascii_combined.fbx",
    ] {
        conform(file, |model| {
            let names: Vec<&str> = model.clips.iter().map(|clip| clip.name.as_str()).collect();
            assert_eq!(names, ["wiggle", "spin", "deform"], "{file}");
            // Each stack's clip starts at its stack's start: 0.8333 s long each.
            for clip in &model.clips {
                assert!(
                    (clip.duration - 0.8333).abs() < 1e-3 || (clip.duration - 0.7917).abs() < 1e-3,
                    "{file}: {}",
                    clip.duration
                );
            }
            // Between frames (0.3 s) and at a frame (7 / 24 s) into spin.
            let spin = &model.clips[1];
            let pose = |time: f32| {
                let mut palette = vec![glam::Mat4::IDENTITY; model.skeleton.len()];
                model.palette_at(spin.animation, spin.start + time, &mut palette);
                model.vertices.iter().map(|vertex| model.skinned_position(vertex, Some(&palette))).collect::<Vec<_>>()
            };
            poses.push((pose(0.3), pose(7.0 / 24.0)));
        });
    }
    // The same scene in three encodings gives the same pose (skipped models give none): binary and
    // ASCII 7.5 at any time; 6.1, whose takes store the curves' tangents otherwise, at frames.
    let farthest = |a: &[glam::Vec3], b: &[glam::Vec3]| a.iter().zip(b).map(|(a, b)| a.distance(*b)).fold(0.0f32, f32::max);
    if let [binary, ascii, old] = &poses[..] {
        assert!(farthest(&ascii.0, &binary.0) < 1e-6, "7.5 ASCII and binary differ by {}", farthest(&ascii.0, &binary.0));
        assert!(farthest(&old.1, &binary.1) < 1e-6, "6.1 and 7.5 differ at a frame by {}", farthest(&old.1, &binary.1));
        println!("6.1 and 7.5 between frames: {:e}", farthest(&old.0, &binary.0));
    }
}

#[test]
fn fbx_skinned_model_without_animation_and_z_up_max_scene() {
    conform("fbx/MayaSausage/maya_game_sausage_7500_binary.fbx", |model| assert!(model.clips.is_empty()));
    conform("fbx/MaxSkin/max_transformed_skin_7500_binary.fbx", |model| {
        assert_eq!(model.clips.len(), 1);
        // Z-up in the file, standing up (Y) here.
        let size = model.bind_bounds().size();
        assert!(size.y > size.z, "{size}");
    });
}
