//! The CPU reference of the palette and skin passes for one instance record: what the GPU-vs-CPU
//! tests and the `cpu` strategy compute.

use bytemuck::Zeroable;
use glam::{Affine3A, Mat4, Vec3, Vec3A, Vec4};

use super::shader_types::{InstanceData, SkinnedVertex, NO_CLIP};
use crate::anim::{offset_correction, skin_vertex, skin_vertex_dual_quaternion, DualQuaternion, JointPose, Skinned};
use crate::model::{Model, Vertex};

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

/// The CPU reference of the palette pass's morph weights for one instance record, per target: the
/// weight animation a's channel gives (its default where a keys none, or there is no a), faded
/// toward b's as the joints are, toward the layer's where the layer keys the target, and a weight
/// set by hand (`overrides`) over all. Mirrors `write_morph_weights` in palette.comp.glsl.
pub fn reference_weights(model: &Model, data: &InstanceData, overrides: &[Option<f32>]) -> Vec<f32> {
    // Per target, the animation's weight where it keys the target (NO_CLIP keys none).
    let keyed = |index: u32, time: f32| model.keyed_weights(if index == NO_CLIP { usize::MAX } else { index as usize }, time);
    let defaults = model.default_weights();
    let or_defaults =
        |keyed: Vec<Option<f32>>| keyed.iter().zip(&defaults).map(|(keyed, &default)| keyed.unwrap_or(default)).collect();
    let mut weights: Vec<f32> = or_defaults(keyed(data.animation_a(), data.time_a));
    if data.fading() {
        let other: Vec<f32> = or_defaults(keyed(data.animation_b(), data.time_b));
        for (weight, other) in weights.iter_mut().zip(other) {
            *weight += (other - *weight) * data.blend;
        }
    }
    if data.layered() {
        for (weight, layer) in weights.iter_mut().zip(keyed(data.layer_animation(), data.time_layer)) {
            if let Some(layer) = layer {
                *weight += (layer - *weight) * data.layer_weight;
            }
        }
    }
    for (weight, set_by_hand) in weights.iter_mut().zip(overrides) {
        if let Some(set_by_hand) = set_by_hand {
            *weight = *set_by_hand;
        }
    }
    weights
}

/// The CPU reference of the skin pass for one instance record: every vertex morphed at the
/// instance's weights, then skinned (linearly, or as dual quaternions), world space.
pub fn reference_skinning(model: &Model, data: &InstanceData, overrides: &[Option<f32>]) -> Vec<Skinned> {
    let palette = reference_palette(model, data);
    let vertices = model.morphed_vertices(&reference_weights(model, data, overrides), model.vertices.len());
    skin_vertices(model, &palette, data.dual_quaternion(), &vertices).collect()
}

/// `vertices` (the model's, maybe morphed) skinned by `palette`, as dual quaternions when `dual`.
fn skin_vertices<'a>(
    model: &'a Model,
    palette: &'a [Mat4],
    dual: bool,
    vertices: &'a [Vertex],
) -> impl Iterator<Item = Skinned> + 'a {
    let entries: Vec<DualQuaternion> = if dual { palette.iter().map(DualQuaternion::from_affine).collect() } else { Vec::new() };
    vertices.iter().map(move |vertex| {
        let (position, normal, tangent) = (vertex.position, vertex.normal, vertex.tangent.truncate());
        let influences = model.influences_of(vertex);
        let mut skinned = if dual {
            skin_vertex_dual_quaternion(palette, &entries, position, normal, tangent, influences)
        } else {
            skin_vertex(palette, position, normal, tangent, influences)
        };
        skinned.position += offset_correction(palette, influences, model.influence_offsets_of(vertex));
        skinned
    })
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
/// strategy's inner loop, [`skin_vertex`]'s maths on SIMD registers. On x86-64, [`x86`]'s kernels
/// (256-bit with FMA where the CPU has AVX and FMA, found at run time; SSE2 otherwise); elsewhere
/// [`skin_portable`].
pub fn skin_packed(model: &Model, vertices: &[Vertex], palette: &[Affine3A], out: &mut [SkinnedVertex]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has AVX and FMA, checked just above.
            unsafe { x86::skin_avx(model, vertices, palette, out) }
        } else {
            x86::skin_sse2(model, vertices, palette, out);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    skin_portable(model, vertices, palette, out);
}

/// [`skin_packed`] in glam's SIMD affine type, for any CPU: a blended matrix is three columns and
/// a translation of `Vec3A` (four lanes each), so an influence adds four multiply-adds, and a
/// vertex's position, normal and tangent take three each. No matrix row the transforms never
/// read, no intermediate vertex list.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn skin_portable(model: &Model, vertices: &[Vertex], palette: &[Affine3A], out: &mut [SkinnedVertex]) {
    for (vertex, out) in vertices.iter().zip(out) {
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

/// The x86-64 kernels, written in intrinsics because glam's own operations leave four costs on the
/// table: glam picks AVX and FMA at compile time only (so a binary built for any x86-64 keeps to
/// 128-bit registers and never fuses), a blended matrix's four columns fill two 256-bit registers
/// where glam's Affine3A takes four 128-bit ones, `normalize_or_zero` takes a square root and a division
/// where a reciprocal square-root estimate and one Newton step give 23 bits, and packing a Vec4
/// lane by lane where `cvtps2dq` rounds four lanes to even at once and `packssdw` narrows them.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use glam::Affine3A;

    use crate::model::{Model, Vertex};
    use crate::render::shader_types::SkinnedVertex;

    /// [`super::skin_packed`] in 256-bit registers with fused multiply-adds: a blended matrix is
    /// two registers (x and y axes; z axis and translation), so an influence adds two multiply-adds
    /// where SSE2 takes four, and the normal and the tangent share one register through the
    /// transform, the normalization and the packing.
    ///
    /// # Safety
    /// The CPU must have AVX and FMA (`is_x86_feature_detected!`).
    #[target_feature(enable = "avx,fma")]
    pub unsafe fn skin_avx(model: &Model, vertices: &[Vertex], palette: &[Affine3A], out: &mut [SkinnedVertex]) {
        for (vertex, out) in vertices.iter().zip(out) {
            let (mut xy, mut zt) = (_mm256_setzero_ps(), _mm256_setzero_ps());
            for influence in model.influences_of(vertex) {
                let Some(matrix) = palette.get(influence.joint as usize) else { continue };
                // Affine3A is four 16-byte columns in a row: x, y, z axes, then the translation.
                let columns = (matrix as *const Affine3A).cast::<f32>();
                let weight = _mm256_set1_ps(influence.weight);
                xy = _mm256_fmadd_ps(_mm256_loadu_ps(columns), weight, xy);
                zt = _mm256_fmadd_ps(_mm256_loadu_ps(columns.add(8)), weight, zt);
            }
            let halves = |low: f32, high: f32| _mm256_setr_m128(_mm_set1_ps(low), _mm_set1_ps(high));
            // Position: x·px + y·py in the two halves, plus z·pz + t, then the halves added.
            let (p, n, t) = (vertex.position, vertex.normal, vertex.tangent);
            let sum = _mm256_fmadd_ps(zt, halves(p.z, 1.0), _mm256_mul_ps(xy, halves(p.x, p.y)));
            let position = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
            // Normal in the low half, tangent in the high half: each axis doubled across the halves.
            let x = _mm256_permute2f128_ps(xy, xy, 0x00);
            let y = _mm256_permute2f128_ps(xy, xy, 0x11);
            let z = _mm256_permute2f128_ps(zt, zt, 0x00);
            let directions =
                _mm256_fmadd_ps(z, halves(n.z, t.z), _mm256_fmadd_ps(y, halves(n.y, t.y), _mm256_mul_ps(x, halves(n.x, t.x))));
            let unit = normalize_pair(directions);
            // Fourth lanes: 0 for the normal, the bitangent sign for the tangent.
            let lanes = _mm256_blend_ps::<0b1000_1000>(unit, _mm256_setr_ps(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, t.w));
            let clamped = _mm256_min_ps(_mm256_max_ps(lanes, _mm256_set1_ps(-1.0)), _mm256_set1_ps(1.0));
            let rounded = _mm256_cvtps_epi32(_mm256_mul_ps(clamped, _mm256_set1_ps(32767.0)));
            let packed = _mm_packs_epi32(_mm256_castsi256_si128(rounded), _mm256_extractf128_si256(rounded, 1));
            // Two overlapping stores: 16 bytes of position (its fourth lane lands on the normal),
            // then the normal and tangent's 16 bytes over bytes 12 to 28.
            let bytes = (out as *mut SkinnedVertex).cast::<u8>();
            _mm_storeu_ps(bytes.cast(), position);
            _mm_storeu_si128(bytes.add(12).cast(), packed);
        }
    }

    /// Each half of `v` (x, y, z) at unit length, or zero where its length is zero or not finite:
    /// [`normalize`] in 256-bit registers.
    #[inline(always)]
    unsafe fn normalize_pair(v: __m256) -> __m256 {
        let squares = _mm256_mul_ps(v, v);
        let sum = _mm256_add_ps(_mm256_add_ps(squares, _mm256_permute_ps::<0b01>(squares)), _mm256_permute_ps::<0b10>(squares));
        let length2 = _mm256_permute_ps::<0>(sum);
        let estimate = _mm256_rsqrt_ps(length2);
        let half_x = _mm256_mul_ps(_mm256_set1_ps(0.5), length2);
        let refined = _mm256_mul_ps(estimate, _mm256_fnmadd_ps(half_x, _mm256_mul_ps(estimate, estimate), _mm256_set1_ps(1.5)));
        let usable = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_GT_OQ>(length2, _mm256_setzero_ps()),
            _mm256_cmp_ps::<_CMP_LT_OQ>(length2, _mm256_set1_ps(f32::MAX)),
        );
        _mm256_and_ps(_mm256_mul_ps(v, refined), usable)
    }

    /// [`super::skin_packed`] in 128-bit registers, for x86-64 CPUs without AVX and FMA.
    pub fn skin_sse2(model: &Model, vertices: &[Vertex], palette: &[Affine3A], out: &mut [SkinnedVertex]) {
        // SAFETY: SSE2 intrinsics on values in registers; stores go to local arrays.
        unsafe {
            for (vertex, out) in vertices.iter().zip(out) {
                let zero = _mm_setzero_ps();
                let (mut x, mut y, mut z, mut t) = (zero, zero, zero, zero);
                for influence in model.influences_of(vertex) {
                    let Some(matrix) = palette.get(influence.joint as usize) else { continue };
                    let weight = _mm_set1_ps(influence.weight);
                    x = madd(matrix.matrix3.x_axis.into(), weight, x);
                    y = madd(matrix.matrix3.y_axis.into(), weight, y);
                    z = madd(matrix.matrix3.z_axis.into(), weight, z);
                    t = madd(matrix.translation.into(), weight, t);
                }
                let linear = |v: glam::Vec3, plus: __m128| {
                    madd(z, _mm_set1_ps(v.z), madd(y, _mm_set1_ps(v.y), madd(x, _mm_set1_ps(v.x), plus)))
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

    /// a × b + c.
    #[inline(always)]
    unsafe fn madd(a: __m128, b: __m128, c: __m128) -> __m128 {
        _mm_add_ps(_mm_mul_ps(a, b), c)
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
/// on the CPU, packed as the skin pass packs, into `out` (the frame slot's mapped buffer: each
/// instance's vertices after the one before's, instance i of `models[of[i]]`). Whole instances are shared out over rayon's threads, the
/// pool the caller runs this in (`ThreadPool::install`; rayon's global one, a thread per core,
/// otherwise): a pool lives between frames, where spawning threads each frame cost 27 µs a thread
/// here, 4 % of a 64-instance frame on two cores. Instance i's first `skinned[i]` vertices are
/// skinned (its level of detail's; 0: culled, not even sampled); the rest of its vertices are left
/// as they were, as the skin pass leaves them, since no pass reads them.
///
/// `positions` (laid out as `out`), where given, gets each skinned vertex's position too, for the
/// motion vectors. `out` is only ever written: on a GPU it is write-combined memory, and reading
/// the positions back from it made an H100 machine's CPU part of a frame 115× slower (10,000
/// figures). So such an instance is skinned into a scratch copy first, then copied to both; so is
/// one of a model with influence offsets (MD5), whose vertices' positions are corrected after the
/// packed kernel.
pub fn cpu_skin_instances(
    (models, of): (&[&Model], &[u32]),
    instances: &[InstanceData],
    overrides: &[Option<f32>],
    skinned: &[u32],
    out: &mut [SkinnedVertex],
    positions: Option<&mut [[f32; 3]]>,
) {
    use rayon::prelude::*;
    // Each instance's span of `out` (and of `positions`): its model's vertices, instance after
    // instance, as the renderer's slots lay a chunk out and the chunks follow one another.
    let mut spans = Vec::with_capacity(instances.len());
    let (mut rest, mut rest_positions) = (out, positions);
    for index in 0..instances.len() {
        let Some(&model) = models.get(of.get(index).copied().unwrap_or(0) as usize) else { return };
        let length = model.vertices.len().min(rest.len());
        let (span, tail) = std::mem::take(&mut rest).split_at_mut(length);
        rest = tail;
        let sink = rest_positions.take().map(|positions| {
            let (sink, tail) = positions.split_at_mut(length.min(positions.len()));
            rest_positions = Some(tail);
            sink
        });
        spans.push((model, span, sink));
    }
    spans.into_par_iter().zip(instances).zip(skinned).for_each_init(
        || (Vec::new(), Vec::new(), Vec::new()),
        |(palette, morphed, scratch), (((model, out, sink), data), &count)| {
            if count == 0 || out.is_empty() {
                return;
            }
            let matrices = reference_palette(model, data);
            palette.clear();
            palette.extend(matrices.iter().map(|&matrix| Affine3A::from_mat4(matrix)));
            let count = (count as usize).min(out.len());
            // Morphed into a copy of the level's vertices where a target is active; else straight
            // from the model's.
            let weights = reference_weights(model, data, overrides);
            let vertices = if weights.iter().any(|&weight| weight != 0.0) {
                morphed.clear();
                morphed.extend_from_slice(&model.vertices[..count]);
                model.morph_in_place(&weights, morphed);
                &morphed[..]
            } else {
                &model.vertices[..count]
            };
            let offsets = !model.influence_offsets.is_empty();
            let target: &mut [SkinnedVertex] = match sink.is_some() || offsets {
                true => {
                    scratch.resize(count, SkinnedVertex::zeroed());
                    scratch
                }
                false => &mut out[..count],
            };
            if data.dual_quaternion() {
                // Dual quaternions on the CPU: the reference's maths, packed as the skin pass packs.
                let skinned = skin_vertices(model, &matrices, true, vertices);
                for ((target, vertex), skinned) in target.iter_mut().zip(vertices).zip(skinned) {
                    *target = SkinnedVertex {
                        position: skinned.position.to_array(),
                        normal: pack_snorm16(skinned.normal.into(), 0.0),
                        tangent: pack_snorm16(skinned.tangent.into(), vertex.tangent.w),
                    };
                }
            } else {
                skin_packed(model, vertices, palette, target);
            }
            if offsets {
                for (target, vertex) in target.iter_mut().zip(vertices).filter(|(_, vertex)| model.has_influence_offsets(vertex))
                {
                    let correction =
                        offset_correction(&matrices, model.influences_of(vertex), model.influence_offsets_of(vertex));
                    target.position = (Vec3::from_array(target.position) + correction).to_array();
                }
            }
            if sink.is_some() || offsets {
                out[..count].copy_from_slice(scratch);
            }
            if let Some(sink) = sink {
                for (position, vertex) in sink[..count].iter_mut().zip(scratch.iter()) {
                    *position = vertex.position;
                }
            }
        },
    );
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
        type Kernel = fn(&Model, &[Vertex], &[Affine3A], &mut [SkinnedVertex]);
        let mut kernels: Vec<(&str, Kernel)> = vec![("portable", skin_portable)];
        #[cfg(target_arch = "x86_64")]
        {
            kernels.push(("sse2", x86::skin_sse2));
            if std::arch::is_x86_feature_detected!("avx") && std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU has AVX and FMA, checked just above.
                kernels.push(("avx", |model, vertices, palette, out| unsafe { x86::skin_avx(model, vertices, palette, out) }));
            }
        }
        for (name, kernel) in kernels {
            let mut out = blank.clone();
            kernel(&model, &model.vertices, &affine, &mut out);
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
