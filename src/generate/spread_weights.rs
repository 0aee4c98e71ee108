//! An MD5 mesh whose vertices' weights disagree, as id's own files' do (in the Doom 3 hellknight a
//! weight puts a vertex up to 4 % of the model's height from where its other weights do): each
//! vertex with weights on two joints or more keeps its bind position, while its first and last
//! weights are moved apart, to `spread` from each other, each by the other's share so that their
//! weighted sum stays. Skinned with
//! one bind position, such a mesh comes out wrong once the joints turn apart; what the tests and the
//! bench skin MD5's way with (`Model::influence_offsets`).

use std::collections::HashSet;

use glam::{Quat, Vec3};

use crate::formats::md5::{orientation_from_xyz, Md5Mesh};

/// `mesh` with its weights spread `spread` apart (model units), in a direction of its own per vertex.
/// A vertex sharing a weight with another, or with its weights on one joint, is left as it is.
pub fn spread_weights(mesh: &Md5Mesh, spread: f32) -> Md5Mesh {
    let rotations: Vec<Quat> = mesh.joints.iter().map(|joint| orientation_from_xyz(joint.orientation)).collect();
    let mut out = mesh.clone();
    let mut seed = 0x9e37_79b9_u32;
    for part in &mut out.meshes {
        let mut seen = HashSet::new();
        let shared: HashSet<usize> = part
            .verts
            .iter()
            .flat_map(|vert| (vert.start_weight as usize..).take(vert.weight_count as usize))
            .filter(|&weight| !seen.insert(weight))
            .collect();
        for vert in &part.verts {
            let range = (vert.start_weight as usize..).take(vert.weight_count as usize);
            let (first, last) = (vert.start_weight as usize, (vert.start_weight + vert.weight_count) as usize - 1);
            let Some(weights) = part.weights.get(first..=last.max(first)) else { continue };
            let (a, b) = (&weights[0], &weights[weights.len() - 1]);
            if vert.weight_count < 2
                || a.joint == b.joint
                || b.bias.is_nan()
                || b.bias <= 0.0
                || range.clone().any(|w| shared.contains(&w))
            {
                continue;
            }
            let (Some(&turn_a), Some(&turn_b)) = (rotations.get(a.joint as usize), rotations.get(b.joint as usize)) else {
                continue;
            };
            let direction = next_direction(&mut seed);
            let share = spread / (a.bias + b.bias);
            let (moved_a, moved_b) = (direction * share * b.bias, -direction * share * a.bias);
            part.weights[first].position += turn_a.inverse() * moved_a;
            part.weights[last].position += turn_b.inverse() * moved_b;
        }
    }
    out
}

/// A unit vector from a xorshift sequence.
fn next_direction(seed: &mut u32) -> Vec3 {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 17;
        *seed ^= *seed << 5;
        (*seed as f32 / u32::MAX as f32) * 2.0 - 1.0
    };
    Vec3::new(next(), next(), next()).try_normalize().unwrap_or(Vec3::X)
}
