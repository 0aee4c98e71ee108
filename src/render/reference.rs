//! The CPU reference of the palette and skin passes for one instance record: what the GPU-vs-CPU
//! tests and the `cpu` strategy compute.

use glam::{Affine3A, Mat4, Vec3, Vec3A, Vec4};

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

/// 1.5 × 2²³: a float of magnitude below 2²² added to it keeps its nearest integer (ties to even)
/// in the low bits of the sum's mantissa.
const ROUNDING: f32 = 12_582_912.0;

/// Packs a unit vector (and a fourth value) as snorm16 as GLSL's packSnorm2x16 does: clamped,
/// scaled by 32767 and rounded (ties to even, which GLSL leaves to the implementation). The
/// rounding is [`ROUNDING`]'s addition in four lanes and a read of the bits: `f32::round` is a
/// library call without SSE4.1, and a float-to-int `as` checks its range lane by lane; together
/// they made packing cost more than skinning.
fn pack_snorm16(v: Vec3A, w: f32) -> [i16; 4] {
    let scaled = Vec4::from((Vec3::from(v), w)).clamp(Vec4::splat(-1.0), Vec4::ONE) * 32767.0;
    let biased = (scaled + Vec4::splat(ROUNDING)).to_array();
    biased.map(|lane| (lane.to_bits() as i32 - ROUNDING.to_bits() as i32) as i16)
}

/// One instance's vertices skinned by `palette` and packed as the skin pass packs them: the `cpu`
/// strategy's inner loop, [`skin_vertex`]'s maths on SIMD registers. On x86-64, [`x86`]'s kernel
/// (with FMA where the CPU has it, found at run time); elsewhere [`skin_portable`].
pub fn skin_packed(model: &Model, palette: &[Affine3A], out: &mut [SkinnedVertex]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has FMA, checked just above.
            unsafe { x86::skin_fma(model, palette, out) }
        } else {
            x86::skin_sse2(model, palette, out);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    skin_portable(model, palette, out);
}

/// [`skin_packed`] in glam's SIMD affine type, for any CPU: a blended matrix is three columns and
/// a translation of `Vec3A` (four lanes each), so an influence adds four multiply-adds, and a
/// vertex's position, normal and tangent take three each. No matrix row the transforms never
/// read, no intermediate vertex list.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn skin_portable(model: &Model, palette: &[Affine3A], out: &mut [SkinnedVertex]) {
    for (vertex, out) in model.vertices.iter().zip(out) {
        let (mut x, mut y, mut z, mut t) = (Vec3A::ZERO, Vec3A::ZERO, Vec3A::ZERO, Vec3A::ZERO);
        for influence in model.influences_of(vertex) {
            let Some(matrix) = palette.get(influence.joint as usize) else { continue };
            // Multiply, then add: `mul_add` is a library call per lane without the FMA target feature.
            let weight = Vec3A::splat(influence.weight);
            x += matrix.matrix3.x_axis * weight;
            y += matrix.matrix3.y_axis * weight;
            z += matrix.matrix3.z_axis * weight;
            t += matrix.translation * weight;
        }
        let linear = |v: Vec3| x * v.x + y * v.y + z * v.z;
        let position = linear(vertex.position) + t;
        *out = SkinnedVertex {
            position: position.to_array(),
            normal: pack_snorm16(linear(vertex.normal).normalize_or_zero(), 0.0),
            tangent: pack_snorm16(linear(vertex.tangent.truncate()).normalize_or_zero(), vertex.tangent.w),
        };
    }
}

/// The x86-64 kernel, written in SSE2 intrinsics (every x86-64 CPU has them) because glam's own
/// operations leave three costs on the table: glam picks FMA at compile time only (so a binary
/// built for any x86-64 never fuses), `normalize_or_zero` takes a square root and a division
/// where a reciprocal square-root estimate and one Newton step give 23 bits, and packing a Vec4
/// lane by lane where `cvtps2dq` rounds four lanes to even at once and `packssdw` narrows them.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use glam::Affine3A;

    use crate::model::Model;
    use crate::render::shader_types::SkinnedVertex;

    /// [`super::skin_packed`] with fused multiply-adds.
    ///
    /// # Safety
    /// The CPU must have FMA (`is_x86_feature_detected!("fma")`).
    #[target_feature(enable = "fma")]
    pub unsafe fn skin_fma(model: &Model, palette: &[Affine3A], out: &mut [SkinnedVertex]) {
        skin::<true>(model, palette, out)
    }

    /// [`super::skin_packed`] with a multiply and an add.
    pub fn skin_sse2(model: &Model, palette: &[Affine3A], out: &mut [SkinnedVertex]) {
        skin::<false>(model, palette, out)
    }

    /// a × b + c, fused when `FMA` (only ever inlined into [`skin_fma`], which enables it).
    #[inline(always)]
    fn madd<const FMA: bool>(a: __m128, b: __m128, c: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64; FMA is taken only inside `skin_fma`, whose caller checked it.
        unsafe {
            if FMA {
                _mm_fmadd_ps(a, b, c)
            } else {
                _mm_add_ps(_mm_mul_ps(a, b), c)
            }
        }
    }

    #[inline(always)]
    fn skin<const FMA: bool>(model: &Model, palette: &[Affine3A], out: &mut [SkinnedVertex]) {
        // SAFETY: SSE2 intrinsics on values in registers; stores go to local arrays.
        unsafe {
            for (vertex, out) in model.vertices.iter().zip(out) {
                let zero = _mm_setzero_ps();
                let (mut x, mut y, mut z, mut t) = (zero, zero, zero, zero);
                for influence in model.influences_of(vertex) {
                    let Some(matrix) = palette.get(influence.joint as usize) else { continue };
                    let weight = _mm_set1_ps(influence.weight);
                    x = madd::<FMA>(matrix.matrix3.x_axis.into(), weight, x);
                    y = madd::<FMA>(matrix.matrix3.y_axis.into(), weight, y);
                    z = madd::<FMA>(matrix.matrix3.z_axis.into(), weight, z);
                    t = madd::<FMA>(matrix.translation.into(), weight, t);
                }
                let linear = |v: glam::Vec3, plus: __m128| {
                    madd::<FMA>(z, _mm_set1_ps(v.z), madd::<FMA>(y, _mm_set1_ps(v.y), madd::<FMA>(x, _mm_set1_ps(v.x), plus)))
                };
                let mut position = [0.0f32; 4];
                _mm_storeu_ps(position.as_mut_ptr(), linear(vertex.position, t));
                *out = SkinnedVertex {
                    position: [position[0], position[1], position[2]],
                    normal: pack(normalize(linear(vertex.normal, zero)), 0.0),
                    tangent: pack(normalize(linear(vertex.tangent.truncate(), zero)), vertex.tangent.w),
                };
            }
        }
    }

    /// `v` (x, y, z) at unit length, or zero where its length is zero or not finite (glam's
    /// `normalize_or_zero`): the reciprocal square-root estimate refined by one Newton step.
    #[inline(always)]
    unsafe fn normalize(v: __m128) -> __m128 {
        let squares = _mm_mul_ps(v, v);
        let sum = _mm_add_ss(_mm_add_ss(squares, _mm_shuffle_ps(squares, squares, 0b01)), _mm_shuffle_ps(squares, squares, 0b10));
        let length2 = _mm_shuffle_ps(sum, sum, 0);
        let estimate = _mm_rsqrt_ps(length2);
        // r' = r (1.5 - 0.5 x r²)
        let half_x = _mm_mul_ps(_mm_set1_ps(0.5), length2);
        let refined = _mm_mul_ps(estimate, _mm_sub_ps(_mm_set1_ps(1.5), _mm_mul_ps(half_x, _mm_mul_ps(estimate, estimate))));
        let usable = _mm_and_ps(_mm_cmpgt_ps(length2, _mm_setzero_ps()), _mm_cmplt_ps(length2, _mm_set1_ps(f32::MAX)));
        _mm_and_ps(_mm_mul_ps(v, refined), usable)
    }

    /// (v.x, v.y, v.z, w) as snorm16: clamped, scaled by 32767, rounded to even (the default
    /// rounding mode) and narrowed with signed saturation, as GLSL's packSnorm2x16.
    #[inline(always)]
    unsafe fn pack(v: __m128, w: f32) -> [i16; 4] {
        let lanes = _mm_movelh_ps(v, _mm_unpackhi_ps(v, _mm_set1_ps(w)));
        let clamped = _mm_min_ps(_mm_max_ps(lanes, _mm_set1_ps(-1.0)), _mm_set1_ps(1.0));
        let rounded = _mm_cvtps_epi32(_mm_mul_ps(clamped, _mm_set1_ps(32767.0)));
        let narrowed = _mm_packs_epi32(rounded, rounded);
        let mut packed = [0i16; 8];
        _mm_storeu_si128(packed.as_mut_ptr().cast(), narrowed);
        [packed[0], packed[1], packed[2], packed[3]]
    }
}

/// The `cpu` strategy, the tutorials' software skinning: every instance sampled, blended and skinned
/// on the CPU, split across all cores (whole instances per thread), packed as the skin pass packs.
/// Instance i's first `skinned[i]` vertices are skinned (its level of detail's; 0: culled, not
/// even sampled), the rest left zero. `threads`: how many to split the instances over (the
/// renderer passes the cores there are).
pub fn cpu_skin_instances(model: &Model, instances: &[InstanceData], skinned: &[u32], threads: usize) -> Vec<SkinnedVertex> {
    let vertex_count = model.vertices.len();
    // Zeroed by the allocator (pages the threads then fault in), not by one thread writing every byte.
    let mut out: Vec<SkinnedVertex> = bytemuck::zeroed_vec(vertex_count * instances.len());
    if vertex_count == 0 {
        return out;
    }
    let threads = threads.clamp(1, instances.len().max(1));
    let per_thread = instances.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let per_thread = per_thread.max(1);
        let work = instances.chunks(per_thread).zip(skinned.chunks(per_thread)).zip(out.chunks_mut(per_thread * vertex_count));
        for ((instances, skinned), out) in work {
            scope.spawn(move || {
                let mut palette = Vec::with_capacity(model.skeleton.len());
                for ((data, &count), out) in instances.iter().zip(skinned).zip(out.chunks_mut(vertex_count)) {
                    if count == 0 {
                        continue;
                    }
                    palette.clear();
                    palette.extend(reference_palette(model, data).iter().map(|&matrix| Affine3A::from_mat4(matrix)));
                    skin_packed(model, &palette, &mut out[..(count as usize).min(vertex_count)]);
                }
            });
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    /// The packed SIMD loop is the reference's maths on the bundled figure in a made-up pose: the
    /// same positions, and directions within one snorm16 step.
    #[test]
    fn the_cpu_strategys_loop_is_the_reference() {
        let path = crate::app::default_model_path();
        let model = crate::formats::load_model(&path, &crate::app::default_animations(&path, &[])).expect("the bundled figure");
        let palette: Vec<Mat4> = (0..model.skeleton.len())
            .map(|joint| {
                let turn = Quat::from_euler(glam::EulerRot::XYZ, joint as f32 * 0.3, -0.2, joint as f32 * 0.11);
                Mat4::from_scale_rotation_translation(Vec3::splat(1.0 + joint as f32 * 0.01), turn, Vec3::splat(joint as f32))
            })
            .collect();
        let affine: Vec<Affine3A> = palette.iter().map(|&matrix| Affine3A::from_mat4(matrix)).collect();
        let blank = vec![SkinnedVertex { position: [0.0; 3], normal: [0; 4], tangent: [0; 4] }; model.vertices.len()];
        // Every kernel this CPU can run: the portable one, and on x86-64 the SSE2 and FMA ones.
        type Kernel = fn(&Model, &[Affine3A], &mut [SkinnedVertex]);
        let mut kernels: Vec<(&str, Kernel)> = vec![("portable", skin_portable)];
        #[cfg(target_arch = "x86_64")]
        {
            kernels.push(("sse2", x86::skin_sse2));
            if std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU has FMA, checked just above.
                kernels.push(("fma", |model, palette, out| unsafe { x86::skin_fma(model, palette, out) }));
            }
        }
        for (name, kernel) in kernels {
            let mut out = blank.clone();
            kernel(&model, &affine, &mut out);
            check(&model, &palette, &out, name);
        }
    }

    fn check(model: &Model, palette: &[Mat4], out: &[SkinnedVertex], kernel: &str) {
        for (vertex, packed) in model.vertices.iter().zip(out) {
            let expected =
                skin_vertex(palette, vertex.position, vertex.normal, vertex.tangent.truncate(), model.influences_of(vertex));
            let reach = 1.0 + expected.position.abs().max_element();
            assert!(Vec3::from_array(packed.position).distance(expected.position) < 1e-5 * reach, "{kernel}");
            let step = |packed: [i16; 4], expected: Vec3| {
                (0..3).all(|axis| (f32::from(packed[axis]) - (expected[axis] * 32767.0).round()).abs() <= 1.0)
            };
            assert!(
                step(packed.normal, expected.normal) && step(packed.tangent, expected.tangent),
                "{kernel}: {packed:?} {expected:?}"
            );
            assert_eq!(packed.tangent[3], if vertex.tangent.w < 0.0 { -32767 } else { 32767 });
        }
    }
}
