//! The triangle pass (`compute` strategy), validation on: the triangles it keeps for the forward
//! pass, and where its commands put them, are the ones a CPU mirror of its test keeps from the same
//! skinned vertices, in one group and over groups and chunks; and its small-triangle test drops
//! nothing visible (the image is the same with it off). Its image is held to the `vertex`
//! strategy's, which draws every triangle, by tests/strategies.rs.

use std::collections::BTreeSet;

use crate::common::{assert_no_validation_messages, default_model, validated_device};
use glam::{Mat4, Vec2, Vec3, Vec4};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::shader_types::{DrawCommand, SkinnedVertex};
use vkskin::render::Strategy;

/// triangles.comp's `visible`, on the CPU.
fn visible(corners: [Vec4; 3], viewport: Vec2, facing_sign: f32, snap: f32) -> bool {
    let [a, b, c] = corners;
    let outside = |test: &dyn Fn(Vec4) -> bool| test(a) && test(b) && test(c);
    if outside(&|p| p.x < -p.w)
        || outside(&|p| p.x > p.w)
        || outside(&|p| p.y < -p.w)
        || outside(&|p| p.y > p.w)
        || outside(&|p| p.z < 0.0)
        || outside(&|p| p.z > p.w)
    {
        return false;
    }
    if corners.iter().any(|p| p.w <= 1e-6) {
        return true;
    }
    let screen = |p: Vec4| (p.truncate().truncate() / p.w * 0.5 + 0.5) * viewport;
    let (pa, pb, pc) = (screen(a), screen(b), screen(c));
    let area = (pb.x - pa.x) * (pc.y - pa.y) - (pc.x - pa.x) * (pb.y - pa.y);
    let scale = (pb - pa).abs().max_element().max((pc - pa).abs().max_element());
    if facing_sign * area > 4.0 * scale * snap + 1e-5 * scale * scale {
        return false;
    }
    let margin = (1.0f32 / 64.0).max(2.0 * snap);
    let holds = |low: f32, high: f32| ((high + margin) * 4.0 - 0.5).floor() >= ((low - margin) * 4.0 - 0.5).ceil();
    let (low, high) = (pa.min(pb).min(pc), pa.max(pb).max(pc));
    holds(low.x, high.x) && holds(low.y, high.y)
}

/// Renders one frame of `setup` with the `compute` strategy, its bindings held to `binding_limit`
/// bytes, and checks the triangle pass's commands and kept triangles against the CPU mirror.
/// Returns how many triangles were kept and how many there were.
fn check_against_the_mirror(setup: &SceneSetup, (width, height): (u32, u32), binding_limit: Option<u64>) -> (usize, usize) {
    let device = validated_device();
    let mut headless = HeadlessRenderer::with_binding_limit(&device, setup, (width, height), Strategy::Compute, binding_limit)
        .expect("renderer");
    let scene = setup.frame(0.4, headless.aspect());
    headless.render(&scene).expect("frame");
    headless.renderer.wait_all().expect("idle");
    let renderer = &headless.renderer;
    let triangles = renderer.passes.triangles.as_ref().expect("the compute strategy culls triangles for this model");
    let commands: Vec<DrawCommand> = renderer.read_back(&triangles.camera_draws).expect("read back");
    let culled: Vec<Vec<u16>> =
        triangles.camera_indices.iter().map(|buffer| renderer.read_back(buffer).expect("read back")).collect();
    let (skinned, _) = renderer.read_back_skinning().expect("read back");
    assert_no_validation_messages(&device);

    let model = &setup.model;
    let vertex_count = model.vertices.len() as u32;
    let index_count = model.indices.len() as u32;
    let mesh_count = model.meshes.len();
    let chunking = renderer.setup.chunking;
    let instance_count = setup.instances.len() as u32;
    // What the GPU kept: (instance, mesh, the triangle's corners as the model numbers them). The
    // commands are chunk-major, then group, then mesh.
    let mut kept = BTreeSet::new();
    for (at, command) in commands.iter().enumerate() {
        let mesh = at % mesh_count;
        let group = (at / mesh_count) as u32 % triangles.groups_per_chunk;
        let chunk = (at / mesh_count) as u32 / triangles.groups_per_chunk;
        let first_slot = group * triangles.group_size;
        if chunk * chunking.instances_per_chunk + first_slot >= instance_count {
            assert_eq!((command.index_count, command.instance_count), (0, 0), "command {at}: past the last instance");
            continue;
        }
        // Where the group's instances start, and where this mesh's survivors go.
        assert_eq!(command.first_instance, chunk * chunking.instances_per_chunk + first_slot, "command {at}");
        assert_eq!(command.vertex_offset, (first_slot * vertex_count) as i32, "command {at}");
        let expected_first = first_slot * index_count + triangles.group_size * model.meshes[mesh].first_index;
        assert_eq!(command.first_index, expected_first, "command {at}");
        assert_eq!(command.instance_count, 1, "command {at}");
        let first = command.first_index as usize;
        for triangle in culled[chunk as usize][first..first + command.index_count as usize].chunks_exact(3) {
            let corners = [0, 1, 2].map(|corner| u32::from(triangle[corner]));
            let instance = command.first_instance + corners[0] / vertex_count;
            assert!(corners.iter().all(|corner| command.first_instance + corner / vertex_count == instance));
            assert!(instance < command.first_instance + triangles.group_size, "command {at}: past its group");
            kept.insert((instance, mesh, corners.map(|corner| corner % vertex_count)));
        }
    }
    // What the CPU mirror keeps, from the same skinned vertices.
    let view_projection: Mat4 = scene.view_projection;
    let viewport = Vec2::new(width as f32, height as f32);
    let mut expected = BTreeSet::new();
    let mut total = 0usize;
    for instance in 0..instance_count {
        let position = |index: u32| -> Vec4 {
            let vertex: &SkinnedVertex = &skinned[(instance * vertex_count + index) as usize];
            view_projection * Vec3::from_array(vertex.position).extend(1.0)
        };
        for (mesh_index, mesh) in model.meshes.iter().enumerate() {
            let indices = &model.indices[mesh.first_index as usize..(mesh.first_index + mesh.index_count) as usize];
            for triangle in indices.chunks_exact(3) {
                total += 1;
                let corners = [triangle[0], triangle[1], triangle[2]];
                if visible(corners.map(position), viewport, triangles.facing_sign, triangles.snap) {
                    expected.insert((instance, mesh_index, corners));
                }
            }
        }
    }
    let differing = kept.symmetric_difference(&expected).count();
    println!(
        "{instance_count} instances in {} chunks, groups of {}: {} of {total} triangles kept by the GPU, {} by the CPU mirror, {differing} differ",
        chunking.chunk_count,
        triangles.group_size,
        kept.len(),
        expected.len()
    );
    // The GPU's matrix product rounds differently: a triangle on a threshold may go either way.
    assert!(differing * 1000 <= total, "{differing} triangles differ");
    (kept.len(), total)
}

#[test]
fn the_triangle_pass_keeps_what_its_cpu_mirror_keeps() {
    let mut setup = SceneSetup::new(default_model(), 6);
    setup.play(1, 0.0, 0.0);
    let (kept, total) = check_against_the_mirror(&setup, (320, 240), None);
    // Facing away alone removes about half.
    assert!(kept > 0 && kept * 2 < total, "{kept} of {total} kept");
}

#[test]
fn groups_and_chunks_place_every_survivor() {
    // Bindings held to 20 instances: 2 chunks of 20, each 2 groups (17 and a partial 3).
    let setup = SceneSetup::new(default_model(), 40);
    let limit = 20 * setup.model.vertices.len() as u64 * size_of::<SkinnedVertex>() as u64;
    let (kept, total) = check_against_the_mirror(&setup, (320, 240), Some(limit));
    assert!(kept > 0 && kept < total, "{kept} of {total} kept");
}

#[test]
fn the_sample_test_drops_nothing_that_shows() {
    // Many small figures: most of their triangles miss every sample. Drawing them anyway (the test
    // off) must give the same image.
    let setup = SceneSetup::new(default_model(), 200);
    let device = validated_device();
    let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (320, 240), Strategy::Compute).expect("renderer");
    let scene = setup.frame(0.7, headless.aspect());
    let with_test = headless.render(&scene).expect("frame");
    headless.renderer.passes.triangles.as_mut().expect("triangle pass").sample_test = false;
    let without_test = headless.render(&scene).expect("frame");
    assert_no_validation_messages(&device);
    let differing = with_test.pixels().zip(without_test.pixels()).filter(|(a, b)| a != b).count();
    println!("{differing} pixels differ with and without the sample test");
    assert!(differing * 10_000 <= with_test.pixels().len(), "{differing} pixels differ");
    let background = with_test.get_pixel(0, 0);
    assert!(with_test.pixels().filter(|pixel| *pixel != background).count() > 1000, "nothing was drawn");
}
