//! Memory by level (issue 55), validation on: the `compute` strategy's skinned vertices and culled
//! indices come from per-chunk pools the cull pass places each kept instance in, by its level. A
//! frame that asks a pool for more than it holds draws its farthest instances coarser, counts them,
//! and every instance it draws is still skinned as the CPU reference skins it.

use std::collections::BTreeMap;

use glam::Vec3;

use crate::common::{assert_no_validation_messages, default_model, spread_crowd, validated_device};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::chunks::{MemoryPlan, Shape};
use vkskin::render::passes::cull::reference_levels;
use vkskin::render::reference::reference_skinning;
use vkskin::render::shader_types::NOT_PLACED;
use vkskin::render::{RenderSettings, Strategy};

#[test]
fn a_pool_too_small_draws_the_farthest_coarser_and_every_drawn_instance_as_the_reference_skins_it() {
    // A crowd with levels of detail, spread so that its instances take many levels and bands.
    let setup = spread_crowd(48, 4.0);
    let model = &setup.model;
    let coarsest = u64::from(model.levels.last().expect("levels").vertex_count);
    let device = validated_device();
    // What the frame asks for, with the pools as large as every full mesh.
    let mut roomy = HeadlessRenderer::with_strategy(&device, &setup, (320, 240), Strategy::Compute).expect("renderer");
    let scene = setup.frame(0.6, roomy.aspect());
    roomy.render(&scene).expect("frame");
    roomy.renderer.wait_all().expect("idle");
    let asked = roomy.renderer.stats.visible.expect("counts");
    assert_eq!((asked.coarser, asked.not_drawn), (0, 0), "pools of every full mesh are never short");
    // Pools of every instance's coarsest level and two thirds of what the frame asked beyond it.
    let beyond = u64::from(asked.placed_vertices) - u64::from(asked.skinned) * coarsest;
    let settings = RenderSettings { pool_vertices: Some(beyond * 2 / 3), ..RenderSettings::default() };
    let mut short = HeadlessRenderer::with_settings(&device, &setup, (320, 240), Strategy::Compute, settings).expect("renderer");
    assert_eq!(short.renderer.setup.chunking.chunk_count, 1);
    short.render(&scene).expect("frame");
    short.renderer.wait_all().expect("idle");
    let counts = short.renderer.stats.visible.expect("counts");
    println!("asked {} vertices; with a pool for 2/3 of {beyond} beyond the coarsest levels: {counts:?}", asked.placed_vertices);
    assert_eq!(counts.skinned, asked.skinned, "every kept instance is still drawn");
    assert!(counts.coarser > 0 && counts.coarser < counts.skinned && counts.not_drawn == 0, "{counts:?}");
    let rooms = short.renderer.setup.memory.pools.vertex_room;
    assert!(u64::from(counts.placed_vertices) <= rooms, "{} placed in a pool of {rooms}", counts.placed_vertices);

    // Which instances went coarser: the farthest, by the cull pass's bands (six an octave).
    let choice = short.renderer.level_choice(&scene);
    let data = scene.instance_data(model);
    let levels = reference_levels(model, &scene, &data, &choice, 0.0);
    let placements = short.renderer.read_back_placements().expect("placements");
    let distance = |instance: usize| {
        let data = &data[instance];
        let world = vkskin::render::passes::cull::animated_box(model, data, false).transformed(data.world());
        world.distance_to(scene.camera_position) / data.scale
    };
    let (mut coarser, mut kept) = (Vec::new(), Vec::new());
    for (instance, (placement, level)) in placements.iter().zip(&levels).enumerate() {
        let Some(level) = level else {
            assert_eq!(placement.level, NOT_PLACED, "instance {instance}: culled, not placed");
            continue;
        };
        assert!(placement.level >= level.skinned, "instance {instance}: placed finer than its level");
        match placement.level > level.skinned {
            true => coarser.push(distance(instance)),
            false if level.skinned + 1 < model.levels.len() as u32 + 1 => kept.push(distance(instance)),
            false => {}
        }
    }
    assert_eq!(coarser.len() as u32, counts.coarser);
    let nearest_coarser = coarser.iter().copied().fold(f32::INFINITY, f32::min);
    let farthest_kept = kept.iter().copied().fold(0.0, f32::max);
    // One band's width (2^(1/6)) of slack: the GPU's distance rounds differently.
    assert!(
        nearest_coarser * 1.13 >= farthest_kept,
        "the nearest instance drawn coarser ({nearest_coarser}) is nearer than one kept at its level ({farthest_kept})"
    );

    // Every drawn instance's vertices at its placed level are the reference's.
    let (skinned, _) = short.renderer.read_back_skinning().expect("read back");
    let vertex_count = model.vertices.len();
    let tolerance = 1e-4 * model.extent();
    let mut checked = BTreeMap::new();
    for (instance, placement) in placements.iter().enumerate().filter(|(_, placement)| placement.level != NOT_PLACED) {
        let level_vertices = match placement.level {
            0 => vertex_count,
            level => model.levels[level as usize - 1].vertex_count as usize,
        };
        let reference = reference_skinning(model, &data[instance], &[]);
        for (index, expected) in reference.iter().enumerate().take(level_vertices) {
            let gpu = Vec3::from_array(skinned[instance * vertex_count + index].position);
            let error = gpu.distance(expected.position);
            assert!(error <= tolerance, "instance {instance} vertex {index} at level {}: error {error:e}", placement.level);
        }
        *checked.entry(placement.level).or_insert(0) += 1;
    }
    println!("instances checked by placed level: {checked:?}");
    assert_no_validation_messages(&device);
}

#[test]
fn the_frames_barriers_and_dispatches_do_not_grow_with_the_count() {
    let device = validated_device();
    let mut tables = Vec::new();
    for count in [10, 1_000] {
        let setup = SceneSetup::new(default_model(), count);
        let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (160, 120), Strategy::Compute).expect("renderer");
        let scene = setup.frame(0.3, headless.aspect());
        headless.render(&scene).expect("frame");
        tables.push(vkskin::render::recorder::barrier_table(&headless.renderer.stats.barriers));
    }
    assert_eq!(tables[0], tables[1], "the barrier calls of 10 and of 1,000 instances");
    assert_no_validation_messages(&device);
}

#[test]
fn a_million_figures_fit_this_devices_plan() {
    let device = validated_device();
    let model = vkskin::model::lod::with_levels(&default_model());
    let plan = MemoryPlan::new(&device, &[&model], Strategy::Compute, 1_000_000, RenderSettings::default())
        .expect("a million figures fit");
    let shape = Shape::of(&model);
    println!(
        "a million figures: {} chunks of {}, {} B an instance on average ({} of its own), pools of {} vertices a chunk",
        plan.chunking.chunk_count,
        plan.chunking.instances_per_chunk,
        plan.bytes_per_instance,
        plan.fixed_bytes_per_instance,
        plan.pools.vertex_room
    );
    assert!(plan.pools.pooled);
    // Far less than every instance's full mesh.
    assert!(plan.bytes_per_instance * 10 < shape.vertices * 28, "{} bytes an instance", plan.bytes_per_instance);
}
