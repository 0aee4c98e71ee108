//! Dual-quaternion skinning (Kavan, Collins, Žára and O'Sullivan, "Skinning with Dual Quaternions",
//! 2007): each joint's palette matrix as a unit dual quaternion, blended per vertex, so that a
//! twist between two joints turns the vertices about the axis instead of pulling them through it
//! (linear blending's "candy wrapper"). Mirrors `dual_quaternion_entry` in palette.comp.glsl and
//! `skin_dual_quaternion` in skinning.glsl.
//!
//! **Scale.** A dual quaternion holds a rotation and a translation, nothing that stretches. A
//! palette matrix whose linear part is a rotation times a **uniform** scale (every joint of most
//! rigs, a unit-converting root scale included) keeps that scale beside its dual quaternion: the
//! scales are blended linearly and applied first, then the blended rigid motion. A joint whose
//! matrix stretches unevenly or shears cannot be split that way without a polar decomposition per
//! joint per frame and a second blend per vertex (the full "scale before" scheme), so a vertex with
//! any such influence is skinned linearly instead: those few vertices keep linear blending's
//! behaviour, every other vertex keeps its volume.

use glam::{Mat3, Mat4, Quat, Vec3, Vec4};

use super::{Influence, Skinned};

/// How far a palette matrix's columns may be from equal lengths and right angles, relative to
/// their length, and still count as a rotation times a uniform scale.
pub const RIGID_TOLERANCE: f32 = 1e-3;

/// A palette matrix as dual-quaternion skinning reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualQuaternion {
    /// The rotation, unit length (xyzw).
    pub real: Vec4,
    /// Half the translation times the rotation: `0.5 × (t, 0) × real`.
    pub dual: Vec4,
    /// The uniform scale applied before the rigid motion.
    pub scale: f32,
    /// The matrix was a rotation times a uniform scale; false: the vertex falls back to linear.
    pub rigid: bool,
}

impl DualQuaternion {
    /// `matrix` (an affine palette entry) split into a uniform scale and a rigid motion.
    pub fn from_affine(matrix: &Mat4) -> DualQuaternion {
        let linear = Mat3::from_mat4(*matrix);
        let (x, y, z) = (linear.x_axis, linear.y_axis, linear.z_axis);
        let scale = (x.length() + y.length() + z.length()) / 3.0;
        let tolerance = RIGID_TOLERANCE * scale;
        let rigid = scale > 0.0
            && [x, y, z].iter().all(|axis| (axis.length() - scale).abs() <= tolerance)
            && [x.dot(y), y.dot(z), z.dot(x)].iter().all(|&dot| dot.abs() <= tolerance * scale)
            && linear.determinant() > 0.0;
        let rotation = if rigid { Quat::from_mat3(&(linear * (1.0 / scale))).normalize() } else { Quat::IDENTITY };
        let real = Vec4::from(rotation);
        let translation = matrix.w_axis.truncate();
        let dual = Vec4::from(Quat::from_xyzw(translation.x, translation.y, translation.z, 0.0) * rotation) * 0.5;
        DualQuaternion { real, dual, scale: if rigid { scale } else { 1.0 }, rigid }
    }
}

/// Skins one vertex by blending its influences' dual quaternions (each turned to the hemisphere of
/// the first influence's, so that q and -q, the same rotation, do not cancel), or linearly where an
/// influence is not rigid ([`super::skin_vertex`]).
pub fn skin_vertex_dual_quaternion(
    palette: &[Mat4],
    entries: &[DualQuaternion],
    position: Vec3,
    normal: Vec3,
    tangent: Vec3,
    influences: &[Influence],
) -> Skinned {
    let used = || influences.iter().filter_map(|influence| Some((entries.get(influence.joint as usize)?, influence.weight)));
    if used().any(|(entry, _)| !entry.rigid) {
        return super::skin_vertex(palette, position, normal, tangent, influences);
    }
    let Some((first, _)) = used().next() else {
        return super::skin_vertex(palette, position, normal, tangent, influences);
    };
    let (mut real, mut dual, mut scale) = (Vec4::ZERO, Vec4::ZERO, 0.0);
    for (entry, weight) in used() {
        let weight = if entry.real.dot(first.real) < 0.0 { -weight } else { weight };
        real += entry.real * weight;
        dual += entry.dual * weight;
        scale += entry.scale * weight.abs();
    }
    transform_dual_quaternion(real, dual, scale, position, normal, tangent)
}

/// A vertex moved by a blended (not yet unit) dual quaternion and scale: scaled, turned by the
/// normalized real part, moved by the translation the dual part holds, `2 × dual × conj(real)`.
pub fn transform_dual_quaternion(real: Vec4, dual: Vec4, scale: f32, position: Vec3, normal: Vec3, tangent: Vec3) -> Skinned {
    let length = real.length();
    if length <= 0.0 {
        return Skinned { position: Vec3::ZERO, normal: Vec3::ZERO, tangent: Vec3::ZERO };
    }
    let (real, dual) = (real / length, dual / length);
    let rotation = Quat::from_vec4(real);
    // The translation of a unit dual quaternion: 2 (w_r d - w_d r + r × d), vector parts r and d.
    let (r, d) = (real.truncate(), dual.truncate());
    let translation = 2.0 * (real.w * d - dual.w * r + r.cross(d));
    Skinned {
        position: rotation * (position * scale) + translation,
        normal: (rotation * normal).normalize_or_zero(),
        tangent: (rotation * tangent).normalize_or_zero(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rigid matrix with a uniform scale comes back as itself; an uneven scale is not rigid.
    #[test]
    fn a_rotation_times_a_uniform_scale_round_trips() {
        let matrix = Mat4::from_scale_rotation_translation(
            Vec3::splat(0.01),
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.2, 2.0),
            Vec3::new(1.0, -2.0, 3.0),
        );
        let entry = DualQuaternion::from_affine(&matrix);
        assert!(entry.rigid && (entry.scale - 0.01).abs() < 1e-6);
        let (point, normal) = (Vec3::new(0.5, 7.0, -2.0), Vec3::new(0.0, 0.6, 0.8));
        let moved = transform_dual_quaternion(entry.real, entry.dual, entry.scale, point, normal, Vec3::X);
        assert!(moved.position.distance(matrix.transform_point3(point)) < 1e-5);
        assert!(moved.normal.distance(matrix.transform_vector3(normal).normalize()) < 1e-5);
        let stretched = Mat4::from_scale(Vec3::new(1.0, 2.0, 1.0));
        assert!(!DualQuaternion::from_affine(&stretched).rigid);
    }

    /// Two joints half a turn apart about the bone, a vertex weighed half to each: linear blending
    /// pulls it onto the axis, dual quaternions keep it at its radius.
    #[test]
    fn a_half_turn_keeps_the_radius() {
        let palette = [Mat4::IDENTITY, Mat4::from_rotation_y(std::f32::consts::PI)];
        let entries: Vec<DualQuaternion> = palette.iter().map(DualQuaternion::from_affine).collect();
        let influences = [Influence { joint: 0, weight: 0.5 }, Influence { joint: 1, weight: 0.5 }];
        let point = Vec3::new(1.0, 0.0, 0.0);
        let linear = super::super::skin_vertex(&palette, point, Vec3::X, Vec3::Z, &influences);
        let dual = skin_vertex_dual_quaternion(&palette, &entries, point, Vec3::X, Vec3::Z, &influences);
        assert!(linear.position.length() < 1e-5, "linear collapses: {:?}", linear.position);
        assert!((dual.position.length() - 1.0).abs() < 1e-5, "dual quaternions keep the radius: {:?}", dual.position);
    }
}
