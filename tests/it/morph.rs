//! Morph targets read into the model (issue 28 for FBX, the first part of issue 29 for glTF): the
//! model's targets at the weights its clips give equal the files' own morph, evaluated here from
//! the glTF accessors by the spec's formula. The renderer does not morph yet (issue 29).

use std::path::Path;

use glam::{Mat4, Vec3};
use vkskin::formats::load_model;

use crate::common::shared_models;

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
