//! GPU culling (validation on): the cull pass keeps exactly the instances the camera or the light
//! sees, by the CPU reference `cull::reference_visibility`; instances outside both volumes get no
//! skin-list entry and no draw command; one only the light sees is skinned and drawn into the
//! shadow map only. Checked by reading back the indirect arguments, the skin list and the draws.

use std::collections::BTreeSet;

use glam::Vec3;

use crate::common::{assert_no_validation_messages, default_model, validated_device};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::camera::OrbitCamera;
use vkskin::render::passes::cull::{reference_visibility, Seen};
use vkskin::render::passes::palette;
use vkskin::render::reference::reference_skinning;
use vkskin::render::shader_types::{DrawCommand, SkinnedVertex, Table};
use vkskin::render::{RasterCounts, Renderer, Strategy, VisibleCounts};

/// The instances named in the live commands: per run (a chunk's instances: one model) and mesh m,
/// the first of its counts (`light`: the light's) from the run's first command + m × its
/// instances. Every command must be a well-formed draw of that mesh for one instance of that chunk.
fn drawn_instances(
    setup: &SceneSetup,
    renderer: &Renderer,
    (commands, counts): (&[DrawCommand], &[u32]),
    light: bool,
) -> BTreeSet<u32> {
    let model = &setup.model;
    let vertex_count = model.vertices.len() as u32;
    let per_chunk = renderer.setup.chunking.instances_per_chunk;
    // Where each instance's vertices are: placed from the pool this frame, or its slot's room.
    let placements = renderer.read_back_placements().expect("placements");
    let vertex_base = |instance: u32| match renderer.setup.memory.pools.pooled {
        true => placements[instance as usize].vertex_base,
        false => (instance % per_chunk) * vertex_count,
    };
    let mut per_mesh = vec![BTreeSet::new(); model.meshes.len()];
    for (index, run) in renderer.setup.runs.iter().enumerate() {
        let (chunk, count) = (run.chunk, counts[2 * index + usize::from(light)]);
        for (mesh_index, mesh) in model.meshes.iter().enumerate() {
            let start = (run.first_command + mesh_index as u32 * run.instances) as usize;
            for command in &commands[start..start + count as usize] {
                assert_eq!(command.index_count, mesh.index_count, "mesh {mesh_index}: {command:?}");
                assert_eq!(command.first_index, mesh.first_index, "mesh {mesh_index}: {command:?}");
                assert_eq!(command.instance_count, 1, "{command:?}");
                assert_eq!(command.first_instance / per_chunk, chunk, "{command:?} in chunk {chunk}");
                assert_eq!(command.vertex_offset as u32, vertex_base(command.first_instance), "{command:?}");
                assert!(per_mesh[mesh_index].insert(command.first_instance), "{command:?}: an instance drawn twice");
            }
        }
    }
    let first = per_mesh[0].clone();
    assert!(per_mesh.iter().all(|instances| *instances == first), "every mesh draws the same instances");
    first
}

fn indices_where(seen: &[Seen], keep: impl Fn(&Seen) -> bool) -> BTreeSet<u32> {
    seen.iter().enumerate().filter(|(_, seen)| keep(seen)).map(|(index, _)| index as u32).collect()
}

#[test]
fn culling_keeps_what_the_camera_or_the_light_sees() {
    let count = 25;
    let mut setup = SceneSetup::new(default_model(), count);
    // The camera frames the middle instance alone: its neighbours leave the frustum but stay in the
    // shadow volume (fitted to the whole grid), so they are light-only.
    let middle = &setup.instances[12];
    setup.camera = OrbitCamera::framing(setup.model.animated_bounds().transformed(middle.world()));
    // Two instances far out of both volumes (the light's stays fitted to the grid): culled entirely.
    setup.instances[0].position.x += 1.0e4;
    setup.instances[24].position.y -= 1.0e4;
    let device = validated_device();
    // Whole, and split into chunks of 4 instances (7 chunks).
    let chunk_of_four = 4 * (setup.model.vertices.len() * size_of::<SkinnedVertex>()) as u64;
    for (strategy, binding_limit) in
        [(Strategy::Compute, None), (Strategy::Vertex, None), (Strategy::Compute, Some(chunk_of_four))]
    {
        let mut headless =
            HeadlessRenderer::with_settings(&device, &setup, (160, 120), strategy, binding_limit.into()).expect("renderer");
        let chunking = headless.renderer.setup.chunking;
        let scene = setup.frame(0.6, headless.aspect());
        let data = scene.instance_data(&setup.model);
        let seen = reference_visibility(&setup.model, &scene, &data);
        let camera = indices_where(&seen, |seen| seen.camera);
        let light = indices_where(&seen, |seen| seen.light);
        let skinned = indices_where(&seen, |seen| seen.camera || seen.light);
        let light_only = indices_where(&seen, |seen| seen.light && !seen.camera);
        println!("{} in {} chunks: camera {camera:?}, light {light:?}", strategy.name(), chunking.chunk_count);
        // The scene holds every case.
        assert!(camera.contains(&12), "the framed instance is in view");
        assert!(!light_only.is_empty(), "some instances only the light sees");
        assert!(!skinned.contains(&0) && !skinned.contains(&24), "the moved instances are out of both volumes");

        for _ in 0..3 {
            headless.submit(&scene).expect("frame");
        }
        headless.render(&scene).expect("frame");
        let culled = headless.renderer.read_back_culling().expect("read back");
        let counters = culled.counters;
        assert_eq!(counters.kept[1] as usize, skinned.len());
        assert_eq!(counters.palette_dispatch[0], (skinned.len() as u32).div_ceil(palette::WORKGROUP_SIZE));
        let model = &setup.model;
        // No levels of detail: every kept instance is skinned whole, all its vertex groups in the
        // skin table (which only `compute` fills).
        let whole = (model.vertices.len() as u32).div_ceil(headless.renderer.passes.skin.tuning.workgroup_size);
        let in_table = if strategy == Strategy::Compute { whole * skinned.len() as u32 } else { 0 };
        assert_eq!(counters.tables[Table::Skin as usize][0], in_table, "{strategy:?}");
        assert_eq!(counters.level_counts[0] as usize, skinned.len());
        assert_eq!((counters.palette_dispatch[1], counters.palette_dispatch[2]), (1, 1));
        assert_eq!(counters.camera_draws.iter().sum::<u32>() as usize, camera.len());
        assert_eq!(counters.light_draws.iter().sum::<u32>() as usize, light.len());
        assert_eq!(culled.skin_list.iter().copied().collect::<BTreeSet<u32>>(), skinned);
        assert_eq!(culled.skin_list.len(), skinned.len(), "an instance listed twice");
        let renderer = &headless.renderer;
        assert_eq!(drawn_instances(&setup, renderer, (&culled.camera_draws, &culled.draw_counts), false), camera);
        assert_eq!(drawn_instances(&setup, renderer, (&culled.light_draws, &culled.draw_counts), true), light);
        let visible = headless.renderer.stats.visible.expect("visible counts");
        assert_eq!(
            (visible.skinned, visible.camera, visible.light, visible.coarser, visible.not_drawn),
            (skinned.len() as u32, camera.len() as u32, light.len() as u32, 0, 0)
        );

        // A light-only instance was still animated: its palette (and, for `compute`, its skinned
        // vertices) match the CPU reference.
        if strategy == Strategy::Compute {
            let (vertices, _) = headless.renderer.read_back_skinning().expect("read back");
            let tolerance = 1e-4 * model.extent();
            let vertex_count = model.vertices.len();
            for &instance in &light_only {
                let data = &data[instance as usize];
                for (index, reference) in reference_skinning(model, data, &[]).into_iter().enumerate() {
                    let gpu = Vec3::from_array(vertices[instance as usize * vertex_count + index].position);
                    let error = gpu.distance(reference.position);
                    assert!(error <= tolerance, "light-only instance {instance} vertex {index}: error {error:e}");
                }
            }
        }
        assert_no_validation_messages(&device);
    }
}

#[test]
fn nothing_in_view_draws_nothing() {
    let mut setup = SceneSetup::new(default_model(), 4);
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 64, 48).expect("renderer");
    for instance in &mut setup.instances {
        instance.position.z += 1.0e5;
    }
    let scene = setup.frame(0.2, headless.aspect());
    headless.render(&scene).expect("frame");
    let culled = headless.renderer.read_back_culling().expect("read back");
    assert_eq!(culled.counters.kept[1], 0);
    assert!(culled.counters.camera_draws.iter().chain(&culled.counters.light_draws).all(|&count| count == 0));
    assert!(culled.skin_list.is_empty());
    let visible = headless.renderer.stats.visible.expect("counts");
    // The hardware's samples are counted where the device counts them exactly: none here.
    assert_eq!(visible.raster.camera_hardware_samples.unwrap_or(0), 0);
    let raster = RasterCounts { camera_hardware_samples: None, ..visible.raster };
    assert_eq!(VisibleCounts { raster, ..visible }, VisibleCounts::default());
    assert_no_validation_messages(&device);
}
