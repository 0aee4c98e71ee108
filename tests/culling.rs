//! GPU culling (validation on): the cull pass keeps exactly the instances the camera or the light
//! sees, by the CPU reference `cull::reference_visibility`; instances outside both volumes get no
//! skin-list entry and no draw command; one only the light sees is skinned and drawn into the
//! shadow map only. Checked by reading back the indirect arguments, the skin list and the draws.

mod common;

use std::collections::BTreeSet;

use glam::Vec3;

use common::{assert_no_validation_messages, default_model, validated_device};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::camera::OrbitCamera;
use vkskin::render::cull::{reference_visibility, Seen};
use vkskin::render::gpu::DrawCommand;
use vkskin::render::scene::reference_skinning;
use vkskin::render::{palette, skin, Strategy, VisibleCounts};

/// The instances named in the first `count` commands of each mesh's run of `capacity` slots; every
/// command must be a well-formed draw of that mesh for one instance.
fn drawn_instances(setup: &SceneSetup, commands: &[DrawCommand], count: u32, capacity: usize) -> BTreeSet<u32> {
    let model = &setup.model;
    let vertex_count = model.vertices.len() as i32;
    let mut per_mesh = Vec::new();
    for (mesh_index, mesh) in model.meshes.iter().enumerate() {
        let run = &commands[mesh_index * capacity..mesh_index * capacity + count as usize];
        for command in run {
            assert_eq!(command.index_count, mesh.index_count, "mesh {mesh_index}: {command:?}");
            assert_eq!(command.first_index, mesh.first_index, "mesh {mesh_index}: {command:?}");
            assert_eq!(command.instance_count, 1, "{command:?}");
            assert_eq!(command.vertex_offset, command.first_instance as i32 * vertex_count, "{command:?}");
        }
        let instances: BTreeSet<u32> = run.iter().map(|command| command.first_instance).collect();
        assert_eq!(instances.len(), count as usize, "mesh {mesh_index}: an instance drawn twice");
        per_mesh.push(instances);
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
    let device = validated_device();
    for strategy in [Strategy::Compute, Strategy::Vertex] {
        let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (160, 120), strategy).expect("renderer");
        let mut scene = setup.frame(0.6, headless.aspect());
        // Two instances far out of both volumes: culled entirely.
        scene.instances[0].position_yaw[0] += 1.0e4;
        scene.instances[24].position_yaw[1] -= 1.0e4;
        let seen = reference_visibility(&setup.model, &scene);
        let camera = indices_where(&seen, |seen| seen.camera);
        let light = indices_where(&seen, |seen| seen.light);
        let skinned = indices_where(&seen, |seen| seen.camera || seen.light);
        let light_only = indices_where(&seen, |seen| seen.light && !seen.camera);
        println!("{}: camera {camera:?}, light {light:?}", strategy.name());
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
        assert_eq!(counters.skin_dispatch[1] as usize, skinned.len());
        assert_eq!(counters.palette_dispatch[1] as usize, skinned.len());
        let model = &setup.model;
        assert_eq!(counters.skin_dispatch[0], (model.vertices.len() as u32).div_ceil(skin::WORKGROUP_SIZE));
        assert_eq!(counters.palette_dispatch[0], (model.skeleton.len() as u32).div_ceil(palette::WORKGROUP_SIZE));
        assert_eq!((counters.skin_dispatch[2], counters.palette_dispatch[2]), (1, 1));
        assert_eq!(counters.camera_draws as usize, camera.len());
        assert_eq!(counters.light_draws as usize, light.len());
        assert_eq!(culled.skin_list.iter().copied().collect::<BTreeSet<u32>>(), skinned);
        assert_eq!(culled.skin_list.len(), skinned.len(), "an instance listed twice");
        assert_eq!(drawn_instances(&setup, &culled.camera_draws, counters.camera_draws, count), camera);
        assert_eq!(drawn_instances(&setup, &culled.light_draws, counters.light_draws, count), light);
        let visible = headless.renderer.last_visible.expect("visible counts");
        assert_eq!(
            visible,
            VisibleCounts { skinned: skinned.len() as u32, camera: camera.len() as u32, light: light.len() as u32 }
        );

        // A light-only instance was still animated: its palette (and, for `compute`, its skinned
        // vertices) match the CPU reference.
        if strategy == Strategy::Compute {
            let (vertices, _) = headless.renderer.read_back_skinning().expect("read back");
            let tolerance = 1e-4 * model.extent();
            let vertex_count = model.vertices.len();
            for &instance in &light_only {
                let data = &scene.instances[instance as usize];
                for (index, reference) in reference_skinning(model, data).into_iter().enumerate() {
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
    let setup = SceneSetup::new(default_model(), 4);
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 64, 48).expect("renderer");
    let mut scene = setup.frame(0.2, headless.aspect());
    for instance in &mut scene.instances {
        instance.position_yaw[2] += 1.0e5;
    }
    headless.render(&scene).expect("frame");
    let culled = headless.renderer.read_back_culling().expect("read back");
    assert_eq!(culled.counters.skin_dispatch[1], 0);
    assert_eq!((culled.counters.camera_draws, culled.counters.light_draws), (0, 0));
    assert!(culled.skin_list.is_empty());
    assert_eq!(headless.renderer.last_visible, Some(VisibleCounts { skinned: 0, camera: 0, light: 0 }));
    assert_no_validation_messages(&device);
}
