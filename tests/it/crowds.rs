//! Several models in one frame (issue 42), validation on: one renderer holds every model's data in
//! shared buffers, each instance's record names its model and its slot places it in its chunk, and
//! the frame stays one cull, one palette and one skin dispatch whatever the number of models.
//!
//! In a clone the models are the bundled figure and its generated variants (`generate::variants`:
//! other proportions, the same rig); with `../shared/models`, characters from other tools too.

use glam::Vec3;

use crate::common::{assert_no_validation_messages, shared_models, validated_device, DIRECTION_TOLERANCE};
use vkskin::app::{default_animations, default_model_path, HeadlessRenderer, SceneSetup};
use vkskin::formats::{load_model, read_model};
use vkskin::generate::variants::crowd_variants;
use vkskin::model::Model;
use vkskin::render::reference::reference_skinning;
use vkskin::render::{RenderSettings, Strategy};

/// The bundled figure and its three variants, each with its culling cells.
fn figure_and_variants() -> Vec<Model> {
    let path = default_model_path();
    let figure = read_model(&path, &default_animations(&path, &[])).expect("the bundled figure");
    let mut models = vec![figure.clone()];
    models.extend(crowd_variants(&figure));
    for model in &mut models {
        model.compute_bounds();
    }
    models
}

/// A renderer holding models A and B that draws only B's instances gives the image a renderer of
/// B alone gives: B's part of the shared buffers (vertices, influences, joints, channels, keys,
/// cells, indices, materials) is found through its record's offsets, wherever A's data puts it.
#[test]
fn two_models_drawing_only_the_seconds_instances_draw_what_the_second_alone_draws() {
    let models = figure_and_variants();
    let (figure, broad) = (models[0].clone(), models[1].clone());
    let alone = SceneSetup::with_models(vec![broad.clone()], 5, true);
    // The same instances, camera and light, in a scene of both models whose instances are all B's.
    let mut both = SceneSetup::with_models(vec![figure, broad], 5, true);
    (both.instances, both.camera, both.light_direction, both.bounds) =
        (alone.instances.clone(), alone.camera, alone.light_direction, alone.bounds);
    both.instance_models = vec![1; alone.instances.len()];
    let device = validated_device();
    for strategy in [Strategy::Compute, Strategy::Vertex] {
        let mut images = Vec::new();
        for setup in [&alone, &both] {
            let mut headless = HeadlessRenderer::with_strategy(&device, setup, (160, 120), strategy).expect("renderer");
            assert_eq!(headless.renderer.model.parts.len(), setup.models().len());
            images.push(headless.render(&setup.frame(0.7, headless.aspect())).expect("frame"));
        }
        let background = images[0].get_pixel(0, 0);
        assert!(images[0].pixels().filter(|pixel| *pixel != background).count() > 500, "the figures are drawn");
        let differing = images[0].pixels().zip(images[1].pixels()).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "{}: B's image changed beside A's data", strategy.name());
    }
    assert_no_validation_messages(&device);
}

/// Every instance of a mixed crowd skinned by the skin pass (and by the `cpu` strategy) is where
/// the CPU reference puts its own model's vertices: each found its model's sources, influences, joints and clips, and its slot's
/// palette and skinned bases, in chunks split small enough that several models share a chunk and
/// a model's instances span chunks.
#[test]
fn a_mixed_crowd_skins_each_instance_from_its_own_model() {
    let mut models = figure_and_variants();
    // Where the shared models are, characters from other tools join: a glTF with morph targets
    // beside its skin, a Blender FBX with up to 5 influences a vertex.
    if let Some(gltf) = shared_models("gltf") {
        models.push(load_model(&gltf.join("RobotExpressive/RobotExpressive.glb"), &[]).expect("RobotExpressive"));
    }
    if let Some(fbx) = shared_models("fbx") {
        models.push(load_model(&fbx.join("QuaterniusMan/Male_Casual.fbx"), &[]).expect("Male_Casual"));
    }
    let mut setup = SceneSetup::with_models(models, 24, true);
    setup.play_every_clip();
    let materials_used = |model: &Model| {
        let mut used: Vec<usize> = model.meshes.iter().map(|mesh| mesh.material).collect();
        used.sort();
        used.dedup();
        used.len() as u32
    };
    // Chunks of at most 5 of the largest instances: every chunk holds several models.
    let largest = setup.models().iter().map(|model| model.vertices.len()).max().unwrap_or(1) as u64;
    let binding = 5 * largest * std::mem::size_of::<vkskin::render::shader_types::SkinnedVertex>() as u64;
    let device = validated_device();
    let settings = RenderSettings { binding: Some(binding), ..RenderSettings::default() };
    // Far enough that every instance is kept (nothing culled: all are skinned).
    setup.camera.distance *= 3.0;
    let mut worst = vec![0.0f32; setup.models().len()];
    // The skin pass's chunks, and the `cpu` strategy's buffer laid out alike.
    for strategy in [Strategy::Compute, Strategy::Cpu] {
        let mut headless = HeadlessRenderer::with_settings(&device, &setup, (160, 120), strategy, settings).expect("renderer");
        // (The `cpu` strategy binds no skinned vertices as storage: its palettes, far smaller than
        // five instances' vertices, fit one chunk.)
        let chunks = headless.renderer.setup.chunking.chunk_count;
        assert!(chunks >= 4 || strategy == Strategy::Cpu, "{:?}", headless.renderer.setup.chunking);
        // Each model is drawn a command a material an instance (its meshes grouped by material).
        for (model, part) in setup.models().iter().zip(&headless.renderer.model.parts) {
            assert_eq!(part.record.mesh_count, materials_used(model), "{}: draw groups", model.name);
        }
        let scene = setup.frame(0.9, headless.aspect());
        headless.render(&scene).expect("frame");
        let skinned = headless.renderer.read_back_skinned().expect("read back");
        assert_no_validation_messages(&device);
        let mut at = 0;
        for (index, data) in setup.instance_data(scene.seconds).iter().enumerate() {
            let model = setup.model_of(index);
            let which = setup.instance_models[index] as usize;
            let tolerance = 1e-4 * model.extent();
            for (vertex, reference) in reference_skinning(model, data, &[]).into_iter().enumerate() {
                let gpu = skinned[at + vertex];
                let error = Vec3::from_array(gpu.position).distance(reference.position);
                let name = (strategy.name(), &model.name);
                assert!(error <= tolerance, "{name:?}: instance {index} vertex {vertex}: error {error:e}");
                let normal_error = gpu.normal().distance(reference.normal);
                assert!(
                    normal_error <= DIRECTION_TOLERANCE,
                    "{name:?}: instance {index} vertex {vertex}: normal {normal_error:e}"
                );
                worst[which] = worst[which].max(error / model.extent());
            }
            at += model.vertices.len();
        }
        assert_eq!(at, skinned.len(), "{}: every instance's vertices and nothing else", strategy.name());
    }
    for (model, worst) in setup.models().iter().zip(&worst) {
        println!("{}: worst position error {worst:e} of its extent", model.name);
    }
}

/// The recipe does not grow with the models: 2 and 20 models (the figure's variants, again and
/// again) take the same passes, dispatches and barriers; one model takes no fewer (it has the
/// triangle pass besides).
#[test]
fn dispatches_and_barriers_do_not_grow_with_the_models() {
    let variants = figure_and_variants();
    let device = validated_device();
    let mut frames = Vec::new();
    for count in [1, 2, 20] {
        let models: Vec<Model> = (0..count).map(|index| variants[index % variants.len()].clone()).collect();
        let setup = SceneSetup::with_models(models, 400, true);
        let mut headless =
            HeadlessRenderer::with_settings(&device, &setup, (320, 180), Strategy::Compute, RenderSettings::default())
                .expect("renderer");
        let scene = setup.frame(0.4, headless.aspect());
        headless.render(&scene).expect("frame");
        let (dispatched, barriers) = (device.dispatch_calls(), device.barrier_calls());
        headless.render(&scene).expect("frame");
        let (dispatched, barriers) = (device.dispatch_calls() - dispatched, device.barrier_calls() - barriers);
        let passes: Vec<&str> = headless.renderer.stats.barriers.iter().map(|call| call.before).collect();
        let runs = headless.renderer.setup.runs.len();
        println!("{count} models, {runs} draw runs: {dispatched} dispatches, {barriers} barriers before {passes:?}");
        frames.push((dispatched, barriers, passes));
    }
    let (one, two, twenty) = (&frames[0], &frames[1], &frames[2]);
    // instances, cull (its count, budget and place runs), palette, skin: the triangle pass serves
    // one model.
    assert_eq!(two.0, 6, "instances, cull, palette and skin");
    assert_eq!(twenty, two, "dispatches, barriers and boundaries, 2 models against 20");
    assert!(one.0 >= two.0 && one.1 >= two.1, "one model: {one:?}");
    assert_no_validation_messages(&device);
}

/// Every strategy draws the same mixed frame: `vertex` skins each instance in its vertex shaders
/// from its slot's palette and its model's record, `cpu` each from its own model into a buffer laid
/// out as the slots lay the chunks (the tolerance of `strategies.rs`: snorm16 normals against f32,
/// the CPU's sums in another order).
#[test]
fn every_strategy_draws_the_same_mixed_frame() {
    use vkskin::app::imagediff::LargestDifference;
    let setup = SceneSetup::with_models(figure_and_variants(), 8, true);
    let device = validated_device();
    let mut images = Vec::new();
    for strategy in Strategy::ALL {
        let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (240, 135), strategy).expect("renderer");
        for frame in 0..3 {
            headless.submit(&setup.frame(0.5 + f64::from(frame) * 0.02, headless.aspect())).expect("frame");
        }
        images.push((strategy, headless.render(&setup.frame(0.6, headless.aspect())).expect("frame")));
    }
    assert_no_validation_messages(&device);
    let (_, reference) = &images[0];
    for (strategy, image) in &images[1..] {
        let difference = LargestDifference::between(reference, image);
        println!(
            "{} vs compute, 8 instances of 4 models: {} of {} pixels far, mean {:.3}",
            strategy.name(),
            difference.far,
            difference.pixels,
            difference.mean
        );
        assert!(
            difference.far * 200 <= difference.pixels && difference.mean < 1.0,
            "{}: {} far, mean {}",
            strategy.name(),
            difference.far,
            difference.mean
        );
    }
    let background = reference.get_pixel(0, 0);
    assert!(reference.pixels().filter(|pixel| *pixel != background).count() > 1000, "the crowd is drawn");
}

/// A mixed crowd's motion vectors: each instance's previous positions are skinned from its slot's
/// previous palette block and its own model (forward.vert), so paused nothing moves, walking every
/// strategy measures the same motion (`motion.rs`'s bound: 0.05 pixels).
#[test]
fn a_mixed_crowds_motion_is_measured_alike_in_every_strategy() {
    let setup = SceneSetup::with_models(figure_and_variants(), 4, true);
    let (width, height) = (200, 120);
    let aspect = width as f32 / height as f32;
    let scenes = [setup.frame(0.5, aspect), setup.frame(0.5 + 1.0 / 30.0, aspect), setup.frame(0.5 + 1.0 / 30.0, aspect)];
    let device = validated_device();
    let mut measured = Vec::new();
    for strategy in Strategy::ALL {
        let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (width, height), strategy).expect("renderer");
        headless.renderer.write_velocity = true;
        let mut velocities: Vec<Vec<glam::Vec2>> = scenes
            .iter()
            .map(|scene| {
                headless.render(scene).expect("frame");
                headless.renderer.read_velocity().expect("velocity")
            })
            .collect();
        let longest = |velocity: &[glam::Vec2]| velocity.iter().map(|motion| motion.length()).fold(0.0, f32::max);
        assert!(longest(&velocities[1]) > 0.1, "{}: the crowd walks", strategy.name());
        assert_eq!(longest(&velocities[2]), 0.0, "{}: paused, nothing moves", strategy.name());
        measured.push((strategy, velocities.swap_remove(1)));
    }
    assert_no_validation_messages(&device);
    let (_, reference) = &measured[0];
    for (strategy, velocity) in &measured[1..] {
        // Where both measured motion (the figures' pixels; an edge pixel may show another surface).
        let both: Vec<f32> = reference
            .iter()
            .zip(velocity)
            .filter(|(a, b)| **a != glam::Vec2::ZERO && **b != glam::Vec2::ZERO)
            .map(|(a, b)| a.distance(*b))
            .collect();
        let within = both.iter().filter(|&&difference| difference <= 0.05).count();
        println!("{} against compute: {within} of {} moving pixels within 0.05", strategy.name(), both.len());
        assert!(both.len() > 100 && within * 100 >= both.len() * 99, "{}: {within} of {}", strategy.name(), both.len());
    }
}
