//! Morph targets (issue 29): read into the model, the model's targets at the weights its clips
//! give equal the files' own morph (evaluated here from the glTF accessors by the spec's formula),
//! and every strategy morphs before it skins as the CPU reference does, on the shared morph models.

use std::path::Path;

use glam::{Mat4, Vec3};
use vkskin::app::imagediff::LargestDifference;
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::formats::load_model;
use vkskin::model::Model;
use vkskin::render::reference::reference_skinning;
use vkskin::render::Strategy;

use crate::common::{assert_no_validation_messages, shared_models, validated_device, DIRECTION_TOLERANCE};

/// The spec's morph, straight from the file: per node with a mesh, each primitive's positions plus
/// the weighted target offsets, the weights sampled linearly from the node's `weights` channel in
/// the first animation (the mesh's default weights without one), moved by the node's global
/// transform; primitives in node order, vertices in accessor order.
fn file_morph(path: &Path, time: f32) -> Vec<Vec<Vec3>> {
    // The crate's `import` is not built (default features off): the buffers are read here.
    let document = gltf::Gltf::open(path).expect("parses").document;
    let buffers: Vec<Vec<u8>> = document
        .buffers()
        .map(|buffer| match buffer.source() {
            gltf::buffer::Source::Uri(uri) => std::fs::read(path.parent().expect("a folder").join(uri)).expect("the buffer"),
            gltf::buffer::Source::Bin => panic!("a .gltf with external buffers"),
        })
        .collect();
    let mut globals = vec![Mat4::IDENTITY; document.nodes().len()];
    let mut stack: Vec<(gltf::Node, Mat4)> =
        document.default_scene().expect("a scene").nodes().map(|node| (node, Mat4::IDENTITY)).collect();
    while let Some((node, parent)) = stack.pop() {
        let global = parent * Mat4::from_cols_array_2d(&node.transform().matrix());
        globals[node.index()] = global;
        stack.extend(node.children().map(|child| (child, global)));
    }
    let mut meshes = Vec::new();
    for node in document.nodes() {
        let Some(mesh) = node.mesh() else { continue };
        let targets = mesh.primitives().map(|primitive| primitive.morph_targets().len()).max().unwrap_or(0);
        let mut weights: Vec<f32> = (0..targets).map(|k| node.weights().or(mesh.weights()).map_or(0.0, |w| w[k])).collect();
        if let Some(animation) = document.animations().next() {
            for channel in animation.channels().filter(|channel| channel.target().node().index() == node.index()) {
                let reader = channel.reader(|buffer| Some(&buffers[buffer.index()]));
                let times: Vec<f32> = reader.read_inputs().expect("times").collect();
                let Some(gltf::animation::util::ReadOutputs::MorphTargetWeights(values)) = reader.read_outputs() else {
                    continue;
                };
                let values: Vec<f32> = values.into_f32().collect();
                let key = times.partition_point(|&key| key <= time).clamp(1, times.len().max(2) - 1) - 1;
                let next = (key + 1).min(times.len() - 1);
                let span = times[next] - times[key];
                let fraction = if span > 0.0 { ((time - times[key]) / span).clamp(0.0, 1.0) } else { 0.0 };
                for (k, weight) in weights.iter_mut().enumerate() {
                    let (a, b) = (values[key * targets + k], values[next * targets + k]);
                    *weight = a + (b - a) * fraction;
                }
            }
        }
        for primitive in mesh.primitives() {
            let reader = primitive.reader(|buffer| Some(&buffers[buffer.index()]));
            let mut positions: Vec<Vec3> = reader.read_positions().expect("positions").map(Vec3::from_array).collect();
            for (k, (target_positions, _, _)) in reader.read_morph_targets().enumerate() {
                let Some(offsets) = target_positions else { continue };
                for (position, offset) in positions.iter_mut().zip(offsets) {
                    *position += Vec3::from_array(offset) * weights[k];
                }
            }
            meshes.push(positions.into_iter().map(|position| globals[node.index()].transform_point3(position)).collect());
        }
    }
    meshes
}

#[test]
fn gltf_morph_targets_at_their_clips_weights_match_the_spec() {
    let Some(folder) = shared_models("gltf") else { return };
    for file in [
        "AnimatedMorphCube/glTF/AnimatedMorphCube.gltf",
        "SimpleMorph/glTF/SimpleMorph.gltf",
        "MorphStressTest/glTF/MorphStressTest.gltf",
    ] {
        let path = folder.join(file);
        let model = load_model(&path, &[]).expect("loads");
        assert!(!model.morph_targets.is_empty() && !model.animations[0].weights.is_empty(), "{file}");
        let extent = model.extent();
        let (mut worst, mut moved) = (0.0f32, 0.0f32);
        let duration = model.clips[0].duration;
        for fraction in [0.0, 0.13, 0.4, 0.77, 1.0] {
            let time = duration * fraction;
            let morphed = model.morphed_positions(&model.morph_weights(0, time));
            for (morphed, vertex) in morphed.iter().zip(&model.vertices) {
                moved = moved.max(morphed.distance(vertex.position));
            }
            let expected = file_morph(&path, time);
            assert_eq!(expected.len(), model.layout.meshes.len(), "{file}: one mesh a primitive");
            for (positions, mesh) in expected.iter().zip(&model.layout.meshes) {
                for (expected, vertex) in positions.iter().zip(&mesh.vertices) {
                    let found = morphed[vertex.expect("every vertex kept") as usize];
                    worst = worst.max(found.distance(*expected));
                }
            }
        }
        println!("{file}: the model's morph {worst:e} from the spec's, vertices moved up to {moved} (extent {extent})");
        assert!(moved > 1e-2 * extent, "{file}: the clip morphs");
        assert!(worst <= 1e-5 * extent, "{file}: {worst} against extent {extent}");
    }
}

/// RobotExpressive's head: its three expressions, read from each of the head's primitives, with
/// a weights channel in every one of its 14 clips.
#[test]
fn a_skinned_glb_keeps_its_named_expressions_and_their_channels() {
    let Some(folder) = shared_models("gltf/RobotExpressive") else { return };
    let model = load_model(&folder.join("RobotExpressive.glb"), &[]).expect("loads");
    let mut names: Vec<&str> = model.morph_targets.iter().map(|target| target.name.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names, ["Angry", "Sad", "Surprised"]);
    assert_eq!(model.animations.len(), 14);
    assert!(model.animations.iter().all(|animation| animation.weights.len() == model.morph_targets.len()));
}

/// The levels of detail reorder the vertices (MorphStressTest gets 7 levels); the targets follow
/// them: every file vertex morphs to the same place before and after.
#[test]
fn morph_targets_follow_the_levels_of_details_reordering() {
    let Some(folder) = shared_models("gltf/MorphStressTest") else { return };
    let model = load_model(&folder.join("glTF/MorphStressTest.gltf"), &[]).expect("loads");
    let levelled = vkskin::model::lod::with_levels(&model);
    assert!(!levelled.levels.is_empty(), "the model gets levels");
    let weights = vec![1.0; model.morph_targets.len()];
    let (before, after) = (model.morphed_positions(&weights), levelled.morphed_positions(&weights));
    let mut compared = 0;
    for (old, new) in model.layout.meshes.iter().zip(&levelled.layout.meshes) {
        for (old, new) in old.vertices.iter().zip(&new.vertices) {
            assert_eq!(before[old.expect("kept") as usize], after[new.expect("kept") as usize]);
            compared += 1;
        }
    }
    assert_eq!(compared, model.vertices.len());
    assert_ne!(before, after, "the order changed");
}

/// The shared models with morph targets the issue names (those present): the Khronos samples, the
/// skinned and morphed robot, the Blender blend-shape cube, and MorphStressTest with its levels of
/// detail (vertices reordered, the targets with them).
fn morph_models() -> Vec<(&'static str, Model)> {
    let files = [
        ("gltf", "AnimatedMorphCube/glTF/AnimatedMorphCube.gltf"),
        ("gltf", "SimpleMorph/glTF/SimpleMorph.gltf"),
        ("gltf", "MorphStressTest/glTF/MorphStressTest.gltf"),
        ("gltf", "RobotExpressive/RobotExpressive.glb"),
        ("fbx", "BlenderShapeAnim/blender440_shape_weight_anim_7400_binary.fbx"),
    ];
    let mut models = Vec::new();
    for (folder, file) in files {
        let Some(folder) = shared_models(folder) else { continue };
        let model = load_model(&folder.join(file), &[]).unwrap_or_else(|error| panic!("{file}: {error}"));
        if file.starts_with("MorphStressTest") {
            models.push(("MorphStressTest with levels of detail", vkskin::model::lod::with_levels(&model)));
        }
        models.push((file, model));
    }
    models
}

/// Every vertex of every instance as the GPU (`compute`) or the CPU (`cpu`) strategy left it, against
/// the CPU reference: three instances playing the first clip, one of them fading into the last, at
/// three times, the last with a target's weight set by hand. Positions within 1e-5 of the extent,
/// directions within a snorm16 rounding.
#[test]
fn every_strategy_morphs_then_skins_as_the_cpu_reference() {
    for (name, model) in morph_models() {
        let extent = model.extent();
        let last_clip = model.clips.len() - 1;
        let duration = model.clips[0].duration;
        let mut setup = SceneSetup::new(model, 3);
        setup.play(0, 0.0, 0.0);
        setup.instances[1].switch_clip(last_clip, 0.0, duration * 2.0);
        for strategy in [Strategy::Compute, Strategy::Cpu] {
            let device = validated_device();
            let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (96, 96), strategy).expect("renderer");
            let (mut worst, mut moved) = (0.0f32, 0.0f32);
            for (fraction, by_hand) in [(0.3, None), (0.65, None), (0.9, Some(0.7))] {
                setup.morph_overrides = vec![by_hand];
                let scene = setup.frame(f64::from(duration * fraction), headless.aspect());
                headless.render(&scene).expect("frame");
                let skinned = headless.renderer.read_back_skinned().expect("read back");
                let vertex_count = setup.model.vertices.len();
                // With levels of detail an instance is skinned at its level: a prefix of the
                // vertices, of which the coarsest level's is skinned at every level.
                let always_skinned = setup.model.levels.last().map_or(vertex_count, |level| level.vertex_count as usize);
                let unmorphed = vec![Some(0.0); setup.model.morph_targets.len()];
                for (instance, data) in scene.instance_data(&setup.model).iter().enumerate() {
                    let reference = reference_skinning(&setup.model, data, &scene.morph_overrides);
                    let base = reference_skinning(&setup.model, data, &unmorphed);
                    for (vertex, (expected, base)) in reference.iter().zip(&base).enumerate().take(always_skinned) {
                        let found = skinned[instance * vertex_count + vertex];
                        let error = Vec3::from_array(found.position).distance(expected.position);
                        worst = worst.max(error);
                        moved = moved.max(expected.position.distance(base.position));
                        assert!(
                            error <= 1e-5 * extent,
                            "{name}, {}: instance {instance} vertex {vertex} at {fraction}: {error:e} (extent {extent})",
                            strategy.name()
                        );
                        let (normal, tangent) =
                            (found.normal().distance(expected.normal), found.tangent().distance(expected.tangent));
                        // A moved tangent is made perpendicular to the moved normal again: where it
                        // leaned close to the normal, what is left is short, and normalizing it
                        // scales the rounding up (RobotExpressive: 3.1e-5).
                        assert!(
                            normal <= DIRECTION_TOLERANCE && tangent <= 2.0 * DIRECTION_TOLERANCE,
                            "{name}, {}: instance {instance} vertex {vertex}: normal {normal:e}, tangent {tangent:e}",
                            strategy.name()
                        );
                    }
                }
            }
            assert_no_validation_messages(&device);
            println!("{name}, {}: worst {worst:e} of extent {extent}; the morph moved vertices up to {moved}", strategy.name());
            assert!(moved > 1e-2 * extent, "{name}: the targets move the vertices");
        }
    }
}

/// The `vertex` strategy morphs in its vertex shaders what `compute` morphs in the skin pass: the
/// same image; and the image changes as the clip's weights do.
#[test]
fn the_vertex_strategy_draws_the_morph_the_skin_pass_does_and_it_moves() {
    let Some(folder) = shared_models("gltf/AnimatedMorphCube") else { return };
    let model = load_model(&folder.join("glTF/AnimatedMorphCube.gltf"), &[]).expect("loads");
    let duration = model.clips[0].duration;
    let mut setup = SceneSetup::new(model, 1);
    setup.play(0, 0.0, 0.0);
    let mut images = Vec::new();
    for strategy in [Strategy::Compute, Strategy::Vertex] {
        let device = validated_device();
        let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (160, 120), strategy).expect("renderer");
        for fraction in [0.05, 0.3] {
            images.push(headless.render(&setup.frame(f64::from(duration * fraction), headless.aspect())).expect("frame"));
        }
        assert_no_validation_messages(&device);
    }
    for (early, late) in [(0, 2), (1, 3)] {
        let difference = LargestDifference::between(&images[early], &images[late]);
        println!("compute vs vertex: {} far pixels of {}, mean {:.3}", difference.far, difference.pixels, difference.mean);
        assert!(difference.far * 200 <= difference.pixels && difference.mean < 1.0, "the strategies agree");
    }
    let over_time = LargestDifference::between(&images[0], &images[1]);
    println!("0.05 against 0.3 of the clip: {} pixels differ far", over_time.far);
    assert!(over_time.far > 100, "the morph changes the image over time");
}

/// A target without NORMAL offsets gets them from its moved triangles: SimpleMorph's two (which
/// slide its triangle within its plane: no turn), and one lifting a corner out of the plane, where
/// at weight 1 every morphed normal is the moved triangle's own. Targets with NORMAL
/// (MorphStressTest's) keep the file's.
#[test]
fn normals_follow_targets_the_file_gives_none_for() {
    let Some(folder) = shared_models("gltf") else { return };
    let mut model = load_model(&folder.join("SimpleMorph/glTF/SimpleMorph.gltf"), &[]).expect("loads");
    assert!(model.morph_targets.iter().all(|target| target.normals_recomputed));
    let lifted = &mut model.morph_targets[0];
    lifted.vertices = vec![0];
    lifted.position_deltas = vec![Vec3::new(0.0, 0.0, 0.8)];
    lifted.normal_deltas = vec![Vec3::ZERO];
    lifted.normals_recomputed = false;
    assert_eq!(model.recompute_morph_normals(), 1, "only the target without normal offsets");
    assert_eq!(model.morph_targets[0].vertices, [0, 1, 2], "the triangle's other corners turn too");
    for target in 0..model.morph_targets.len() {
        let mut weights = vec![0.0; model.morph_targets.len()];
        weights[target] = 1.0;
        let morphed = model.morphed_vertices(&weights, model.vertices.len());
        let [a, b, c] = [0, 1, 2].map(|corner| morphed[model.indices[corner] as usize].position);
        let face = (b - a).cross(c - a).normalize();
        for vertex in &morphed {
            println!("target {target}: normal {:?}, the moved triangle's {face:?}", vertex.normal);
            assert!(vertex.normal.distance(face) < 1e-5, "target {target}");
        }
    }
    assert!(model.morphed_vertices(&[1.0, 0.0], 1)[0].normal.distance(model.vertices[0].normal) > 0.1, "the lift turns it");
    let stress = load_model(&folder.join("MorphStressTest/glTF/MorphStressTest.gltf"), &[]).expect("loads");
    assert!(stress.morph_targets.iter().all(|target| !target.normals_recomputed));
}

/// The culling boxes hold the morphed, skinned vertices: on each morph model, every vertex of
/// the CPU reference lies in the box the cull pass tests (`animated_box`), for an instance playing
/// each clip at 40 times over it, one fading between two clips, one without a clip (the default
/// weights), and with a weight set by hand (the box then grown by the model's morph reach).
#[test]
fn culling_boxes_hold_the_morphed_vertices() {
    use vkskin::anim::{InstanceState, Playback};
    use vkskin::render::passes::cull::animated_box;
    use vkskin::render::shader_types::InstanceData;
    for (name, model) in morph_models() {
        let tolerance = 1e-5 * model.extent();
        let mut checked = 0;
        let state = InstanceState::default();
        let (mut worst_fill, mut worst_name) = (f32::INFINITY, String::new());
        for clip in 0..model.clips.len() {
            let animation = model.clips[clip].animation;
            let duration = model.animations[animation].duration;
            for step in 0..40 {
                let time = duration * step as f32 / 39.0;
                let other = (animation + 1) % model.animations.len();
                let playbacks = [
                    Playback { a: Some((animation, time)), ..Playback::default() },
                    Playback { a: Some((animation, time)), b: Some((other, time * 0.5)), blend: 0.4, ..Playback::default() },
                    Playback::default(),
                ];
                for playback in playbacks {
                    let data = InstanceData::of(&state, &playback);
                    for by_hand in [None, Some(1.0)] {
                        let overrides = vec![by_hand];
                        let bounds = animated_box(&model, &data, by_hand.is_some());
                        let grown = vkskin::anim::Aabb {
                            min: bounds.min - glam::Vec3::splat(tolerance),
                            max: bounds.max + glam::Vec3::splat(tolerance),
                        };
                        let skinned = reference_skinning(&model, &data, &overrides);
                        let held = vkskin::anim::Aabb::from_points(skinned.iter().map(|vertex| vertex.position));
                        for (vertex, skinned) in skinned.iter().enumerate() {
                            assert!(
                                skinned.position.cmpge(grown.min).all() && skinned.position.cmple(grown.max).all(),
                                "{name}: vertex {vertex} at {:?} outside {bounds:?} (clip {clip}, {time} s, by hand {by_hand:?})",
                                skinned.position
                            );
                        }
                        let fill = held.size().length() / bounds.size().length();
                        if fill < worst_fill && by_hand.is_none() {
                            (worst_fill, worst_name) = (fill, format!("clip {clip} at {time:.2} s"));
                        }
                        checked += 1;
                    }
                }
            }
        }
        println!("{name}: {checked} boxes hold their vertices; the loosest holds {worst_fill:.2} of its diagonal ({worst_name})");
    }
}

/// In the viewer, a target held by hand (`--drive morph=0:1`, what the panel's slider does) moves
/// the paused cube, and giving it back to the clip (`morph=0:clip`) puts it back.
#[test]
fn the_viewer_holds_a_target_by_hand_and_gives_it_back() {
    if !crate::common::xvfb_available() {
        return;
    }
    let Some(folder) = shared_models("gltf/AnimatedMorphCube") else { return };
    let shots = crate::common::scratch_in("morph", "by_hand");
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).expect("folder");
    let message = crate::common::run_validated(
        crate::common::view_under_xvfb()
            .arg(folder.join("glTF/AnimatedMorphCube.gltf"))
            .args([
                "--frames",
                "40",
                "--size",
                "320x240",
                "--no-ui",
                "--validate",
                "--drive",
                "1:pause;10:morph=0:1;20:morph=0:clip;30:pause",
            ])
            .arg("--screenshot")
            .arg(shots.join("shot.png")),
    );
    let shot = |name: &str| image::open(shots.join(name)).unwrap_or_else(|error| panic!("{name}: {error}\n{message}")).to_rgba8();
    let (clip, by_hand, back) = (shot("shot_10.png"), shot("shot_20.png"), shot("shot_30.png"));
    let held = LargestDifference::between(&clip, &by_hand);
    let returned = LargestDifference::between(&clip, &back);
    println!("by hand: {} pixels differ far; given back: {}", held.far, returned.far);
    assert!(held.far > 200, "the target held at 1 moves the cube");
    assert_eq!(returned.far, 0, "given back to the paused clip, the cube is where it was");
}
