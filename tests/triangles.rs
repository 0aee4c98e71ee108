//! The triangle pass (`compute` strategy): the triangles it keeps for the forward pass are exactly
//! the ones a CPU mirror of its test keeps, from the same skinned vertices (validation on). Its
//! image is held to the `vertex` strategy's, which draws every triangle, by tests/strategies.rs.

mod common;

use std::collections::BTreeSet;

use common::{assert_no_validation_messages, default_model, validated_device};
use glam::{Mat4, Vec2, Vec3, Vec4};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::gpu::{DrawCommand, SkinnedVertex};
use vkskin::render::Strategy;

/// triangles.comp's `visible`, on the CPU.
fn visible(corners: [Vec4; 3], viewport: Vec2, facing_sign: f32) -> bool {
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
    if facing_sign * area > 1e-5 * scale * scale {
        return false;
    }
    let margin = 1.0 / 64.0;
    let holds = |low: f32, high: f32| ((high + margin) * 4.0 - 0.5).floor() >= ((low - margin) * 4.0 - 0.5).ceil();
    let (low, high) = (pa.min(pb).min(pc), pa.max(pb).max(pc));
    holds(low.x, high.x) && holds(low.y, high.y)
}

#[test]
fn the_triangle_pass_keeps_what_its_cpu_mirror_keeps() {
    let model = default_model();
    let mut setup = SceneSetup::new(model, 6);
    setup.play(1, 0.0, 0.0);
    let (width, height) = (320, 240);
    let device = validated_device();
    let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (width, height), Strategy::Compute).expect("renderer");
    let scene = setup.frame(0.4, headless.aspect());
    headless.render(&scene).expect("frame");
    headless.renderer.wait_all().expect("idle");
    let renderer = &headless.renderer;
    let triangles = renderer.triangles.as_ref().expect("the compute strategy culls triangles for this model");
    assert_eq!(renderer.chunking.chunk_count, 1);
    let commands: Vec<DrawCommand> = renderer.read_back(&triangles.camera_draws).expect("read back");
    let culled: Vec<u16> = renderer.read_back(&triangles.camera_indices[0]).expect("read back");
    let (skinned, _) = renderer.read_back_skinning().expect("read back");
    assert_no_validation_messages(&device);

    let model = &setup.model;
    let vertex_count = model.vertices.len() as u32;
    // What the GPU kept: (instance, the triangle's corners as the model numbers them).
    let mut kept = BTreeSet::new();
    for command in &commands {
        let first = command.first_index as usize;
        for triangle in culled[first..first + command.index_count as usize].chunks_exact(3) {
            let corners = [0, 1, 2].map(|corner| u32::from(triangle[corner]));
            let instance = command.first_instance + corners[0] / vertex_count;
            assert!(corners.iter().all(|corner| command.first_instance + corner / vertex_count == instance));
            kept.insert((instance, corners.map(|corner| corner % vertex_count)));
        }
    }
    // What the CPU mirror keeps, from the same skinned vertices.
    let view_projection: Mat4 = scene.view_projection;
    let viewport = Vec2::new(width as f32, height as f32);
    let mut expected = BTreeSet::new();
    let mut total = 0usize;
    for instance in 0..6u32 {
        let position = |index: u32| -> Vec4 {
            let vertex: &SkinnedVertex = &skinned[(instance * vertex_count + index) as usize];
            view_projection * Vec3::from_array(vertex.position).extend(1.0)
        };
        for mesh in &model.meshes {
            let indices = &model.indices[mesh.first_index as usize..(mesh.first_index + mesh.index_count) as usize];
            for triangle in indices.chunks_exact(3) {
                total += 1;
                let corners = [triangle[0], triangle[1], triangle[2]];
                if visible(corners.map(position), viewport, triangles.facing_sign) {
                    expected.insert((instance, corners));
                }
            }
        }
    }
    let differing = kept.symmetric_difference(&expected).count();
    println!("{} of {total} triangles kept by the GPU, {} by the CPU mirror, {differing} differ", kept.len(), expected.len());
    // The GPU's matrix product rounds differently: a triangle on a threshold may go either way.
    assert!(differing * 1000 <= total, "{differing} triangles differ");
    // Facing away alone removes about half; the figures are small here, so tiny triangles go too.
    assert!(!kept.is_empty() && kept.len() * 2 < total, "{} of {total} kept", kept.len());
}
