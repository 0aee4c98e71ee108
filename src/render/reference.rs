//! The CPU reference of the palette and skin passes for one instance record: what the GPU-vs-CPU
//! tests and the `cpu` strategy compute.

use glam::Mat4;

use super::shader_types::{InstanceData, SkinnedVertex, NO_CLIP};
use crate::anim::{skin_vertex, JointPose, Skinned};
use crate::model::Model;

/// The CPU reference of the palette pass for one instance record: sample animation a (and b
/// while it fades in, and the layer), blend in local space, compose, and multiply by the inverse
/// binds: `world × model pose × inverse bind`.
pub fn reference_palette(model: &Model, data: &InstanceData) -> Vec<Mat4> {
    let joint_count = model.skeleton.len();
    let animation_at = |index: u32| model.animations.get(index as usize).filter(|_| index != NO_CLIP);
    let Some(animation_a) = animation_at(data.animation_a()) else {
        return crate::anim::bind_palette(&model.skeleton, data.world());
    };
    let mut poses = vec![JointPose::IDENTITY; joint_count];
    animation_a.sample(&model.skeleton, data.time_a, &mut poses);
    let mut other = vec![JointPose::IDENTITY; joint_count];
    if let (Some(animation_b), true) = (animation_at(data.animation_b()), data.fading()) {
        animation_b.sample(&model.skeleton, data.time_b, &mut other);
        crate::anim::blend_local(&mut poses, &other, data.blend, None);
    }
    if let (Some(layer), true) = (animation_at(data.layer_animation()), data.layered()) {
        layer.sample(&model.skeleton, data.time_layer, &mut other);
        let spans = model.skeleton.subtree_spans();
        let root = (data.layer_joint() as usize).min(joint_count.saturating_sub(1));
        crate::anim::blend_local(&mut poses, &other, data.layer_weight, Some((&spans, root)));
    }
    let mut models = vec![Mat4::IDENTITY; joint_count];
    crate::anim::local_to_model(&model.skeleton, &poses, data.world(), &mut models);
    let mut palette = vec![Mat4::IDENTITY; joint_count];
    crate::anim::palette(&model.skeleton, &models, &mut palette);
    palette
}

/// The CPU reference of the skin pass for one instance record: every vertex, world space.
pub fn reference_skinning(model: &Model, data: &InstanceData) -> Vec<Skinned> {
    let palette = reference_palette(model, data);
    model
        .vertices
        .iter()
        .map(|vertex| {
            skin_vertex(&palette, vertex.position, vertex.normal, vertex.tangent.truncate(), model.influences_of(vertex))
        })
        .collect()
}

/// Packs a unit vector (and a fourth value) as snorm16, rounding as GLSL's packSnorm2x16 does.
fn pack_snorm16(v: glam::Vec3, w: f32) -> [i16; 4] {
    [v.x, v.y, v.z, w].map(|component| (component.clamp(-1.0, 1.0) * 32767.0).round() as i16)
}

/// The `cpu` strategy, the tutorials' software skinning: every instance sampled, blended and skinned
/// on the CPU, split across all cores (whole instances per thread), packed as the skin pass packs.
pub fn cpu_skin_instances(model: &Model, instances: &[InstanceData]) -> Vec<SkinnedVertex> {
    let vertex_count = model.vertices.len();
    let mut out = vec![SkinnedVertex { position: [0.0; 3], normal: [0; 4], tangent: [0; 4] }; vertex_count * instances.len()];
    if vertex_count == 0 {
        return out;
    }
    let threads = std::thread::available_parallelism().map_or(1, |count| count.get()).min(instances.len().max(1));
    let per_thread = instances.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for (instances, out) in instances.chunks(per_thread.max(1)).zip(out.chunks_mut(per_thread.max(1) * vertex_count)) {
            scope.spawn(move || {
                for (data, out) in instances.iter().zip(out.chunks_mut(vertex_count)) {
                    let skinned = reference_skinning(model, data);
                    for ((skinned, vertex), out) in skinned.into_iter().zip(&model.vertices).zip(out) {
                        *out = SkinnedVertex {
                            position: skinned.position.to_array(),
                            normal: pack_snorm16(skinned.normal, 0.0),
                            tangent: pack_snorm16(skinned.tangent, vertex.tangent.w),
                        };
                    }
                }
            });
        }
    });
    out
}
