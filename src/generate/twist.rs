//! A cylinder twisted half a turn by its second joint: the case that shows linear blend skinning's
//! "candy wrapper" (the blended vertices collapse onto the axis) and dual-quaternion skinning
//! keeping the volume (`tests/it/dual_quaternion.rs`). Built in code, as a [`Model`].

use glam::{Mat4, Quat, Vec2, Vec3, Vec4};

use crate::anim::{Animation, Channel, Influence, Interpolation, Joint, JointPose, KeyTimes, Property, Skeleton};
use crate::model::{compute_tangents, Material, Mesh, Model, Vertex};

/// Its radius and height (along +Y); the second joint stands at half the height.
pub const RADIUS: f32 = 0.25;
pub const HEIGHT: f32 = 2.0;
/// Rings along the height and vertices around each.
const RINGS: usize = 33;
const SEGMENTS: usize = 32;

/// The cylinder: a closed surface (side and two caps), joint "base" at the foot and joint "tip" at
/// half the height, its one clip "twist" turning the tip about the axis from 0 to 180° over one
/// second (keys at 0°, 90°, 180°). With `hard` every vertex follows one joint (the upper half the
/// tip); otherwise the weights ramp from the base to the tip between a quarter and three quarters
/// of the height.
pub fn twisted_cylinder(hard: bool) -> Model {
    let tip_weight = |y: f32| {
        if hard {
            if y >= HEIGHT * 0.5 {
                1.0
            } else {
                0.0
            }
        } else {
            ((y / HEIGHT - 0.25) / 0.5).clamp(0.0, 1.0)
        }
    };
    let mut vertices = Vec::new();
    let mut influences = Vec::new();
    let mut push = |position: Vec3, normal: Vec3, uv: Vec2| {
        let weight = tip_weight(position.y);
        let first_influence = influences.len() as u32;
        // Heaviest first, as the loaders leave them; a weight of 0 is left out.
        let mut list = vec![Influence { joint: 0, weight: 1.0 - weight }, Influence { joint: 1, weight }];
        list.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        list.retain(|influence| influence.weight > 0.0);
        let influence_count = list.len() as u32;
        influences.extend(list);
        vertices.push(Vertex {
            position,
            normal,
            tangent: Vec4::new(1.0, 0.0, 0.0, 1.0),
            uv,
            color: Vec4::ONE,
            first_influence,
            influence_count,
        });
        vertices.len() as u32 - 1
    };
    let mut indices = Vec::new();
    // The side: rings of SEGMENTS + 1 vertices (the seam doubled for the texture coordinates).
    let ring = |index: usize| index * (SEGMENTS + 1);
    for r in 0..RINGS {
        let y = HEIGHT * r as f32 / (RINGS - 1) as f32;
        for s in 0..=SEGMENTS {
            let angle = std::f32::consts::TAU * s as f32 / SEGMENTS as f32;
            let out = Vec3::new(angle.cos(), 0.0, -angle.sin());
            push(out * RADIUS + Vec3::Y * y, out, Vec2::new(s as f32 / SEGMENTS as f32, y / HEIGHT));
        }
    }
    for r in 0..RINGS - 1 {
        for s in 0..SEGMENTS {
            let (a, b) = ((ring(r) + s) as u32, (ring(r) + s + 1) as u32);
            let (c, d) = ((ring(r + 1) + s) as u32, (ring(r + 1) + s + 1) as u32);
            indices.extend([a, b, d, a, d, c]);
        }
    }
    // The caps: a centre and a ring each, facing down and up.
    for (y, normal) in [(0.0, -Vec3::Y), (HEIGHT, Vec3::Y)] {
        let centre = push(Vec3::Y * y, normal, Vec2::splat(0.5));
        let first = centre + 1;
        for s in 0..SEGMENTS {
            let angle = std::f32::consts::TAU * s as f32 / SEGMENTS as f32;
            let out = Vec3::new(angle.cos(), 0.0, -angle.sin());
            push(out * RADIUS + Vec3::Y * y, normal, Vec2::new(0.5 + out.x * 0.5, 0.5 + out.z * 0.5));
        }
        for s in 0..SEGMENTS as u32 {
            let (a, b) = (first + s, first + (s + 1) % SEGMENTS as u32);
            // Counter-clockwise seen from outside.
            if normal.y > 0.0 {
                indices.extend([centre, a, b]);
            } else {
                indices.extend([centre, b, a]);
            }
        }
    }
    compute_tangents(&mut vertices, &indices);
    let middle = Vec3::Y * (HEIGHT * 0.5);
    let skeleton = Skeleton {
        joints: vec![
            Joint::new("base", None, Mat4::IDENTITY, JointPose::IDENTITY),
            Joint::new("tip", Some(0), Mat4::from_translation(-middle), JointPose::new(Quat::IDENTITY, middle)),
        ],
    };
    let turns = [0.0, 0.5, 1.0].map(|fraction: f32| Quat::from_rotation_y(std::f32::consts::PI * fraction));
    let twist = Channel {
        joint: 1,
        property: Property::Rotation,
        interpolation: Interpolation::Linear,
        times: KeyTimes::Listed(vec![0.0, 0.5, 1.0]),
        mask: 0b1111,
        base: Vec4::ZERO,
        implied_w: false,
        wraps: false,
        values: turns.iter().flat_map(|turn| turn.to_array()).collect(),
    };
    let animation = Animation {
        name: "twist".into(),
        duration: 1.0,
        frame_rate: None,
        file_key_bytes: 4 * (3 + 12),
        channels: vec![twist],
        source: None,
        weights: Vec::new(),
        compressed: None,
        motion: None,
    };
    let index_count = indices.len() as u32;
    let mut model = Model {
        name: if hard { "twisted_cylinder_hard".into() } else { "twisted_cylinder".into() },
        vertices,
        influences,
        indices,
        meshes: vec![Mesh { name: "cylinder".into(), first_index: 0, index_count, material: 0 }],
        materials: vec![Material::untextured("cylinder")],
        skeleton,
        animations: vec![animation],
        clips: Vec::new(),
        bounds: Default::default(),
        levels: Vec::new(),
        stats: Default::default(),
        layout: Default::default(),
        morph_targets: Vec::new(),
        influence_offsets: Vec::new(),
    };
    model.stats.max_influences = 2;
    model.clip_each_animation();
    model.compute_bounds();
    model
}

/// The volume a closed triangle mesh encloses (the divergence theorem: a signed tetrahedron from
/// the origin per triangle, counter-clockwise outward).
pub fn enclosed_volume(positions: &[Vec3], indices: &[u32]) -> f32 {
    let at = |index: u32| positions.get(index as usize).copied().unwrap_or(Vec3::ZERO);
    indices.chunks_exact(3).map(|triangle| at(triangle[0]).dot(at(triangle[1]).cross(at(triangle[2]))) / 6.0).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Closed, outward-facing: its volume is the cylinder's, less what the 32-gon cuts off.
    #[test]
    fn the_cylinder_is_closed_and_faces_out() {
        let model = twisted_cylinder(false);
        let positions: Vec<Vec3> = model.vertices.iter().map(|vertex| vertex.position).collect();
        let polygon = 0.5 * SEGMENTS as f32 * (std::f32::consts::TAU / SEGMENTS as f32).sin() * RADIUS * RADIUS;
        let volume = enclosed_volume(&positions, &model.indices);
        assert!((volume - polygon * HEIGHT).abs() < 1e-4, "{volume} against {}", polygon * HEIGHT);
    }
}
