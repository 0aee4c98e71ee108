//! What loaders compute that a file may lack: influences merged and normalized, normals and
//! tangents from the triangles.

use glam::Vec3;

use super::Vertex;
use crate::anim::Influence;

/// Merges repeated joints, drops non-positive weights, sorts heaviest first and scales the weights
/// to sum to 1. `None` when nothing positive is left (the caller reports where).
pub fn normalize_influences(influences: &[Influence]) -> Option<Vec<Influence>> {
    // Weights on the same joint are summed: sorted by joint (then file order) and merged in runs,
    // in O(n log n); a linear search per weight took minutes for 65,536 weights on one vertex.
    let mut kept: Vec<(usize, Influence)> = influences
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, influence)| influence.weight > 0.0 && influence.weight.is_finite())
        .collect();
    kept.sort_by_key(|(index, influence)| (influence.joint, *index));
    let mut runs: Vec<(usize, Influence)> = Vec::with_capacity(kept.len());
    for (index, influence) in kept {
        match runs.last_mut() {
            Some((_, last)) if last.joint == influence.joint => last.weight += influence.weight,
            _ => runs.push((index, influence)),
        }
    }
    // Back to the order of each joint's first weight in the file.
    runs.sort_by_key(|(index, _)| *index);
    let mut merged: Vec<Influence> = runs.into_iter().map(|(_, influence)| influence).collect();
    let total: f32 = merged.iter().map(|influence| influence.weight).sum();
    if !(total > 0.0 && total.is_finite()) {
        return None;
    }
    // Stable: equal weights keep the file's order.
    merged.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    for influence in &mut merged {
        influence.weight /= total;
    }
    Some(merged)
}

/// Per-vertex tangents from UV gradients (Lengyel's method): accumulated per triangle,
/// Gram-Schmidt-orthogonalized against the normal, w = handedness. Call after the normals are set.
/// A vertex without usable UVs gets any unit vector perpendicular to its normal.
pub fn compute_tangents(vertices: &mut [Vertex], indices: &[u32]) {
    let mut tangents = vec![Vec3::ZERO; vertices.len()];
    let mut bitangents = vec![Vec3::ZERO; vertices.len()];
    for triangle in indices.chunks_exact(3) {
        let [a, b, c] = [triangle[0], triangle[1], triangle[2]].map(|index| index as usize);
        if a >= vertices.len() || b >= vertices.len() || c >= vertices.len() {
            continue;
        }
        let (edge1, edge2) = (vertices[b].position - vertices[a].position, vertices[c].position - vertices[a].position);
        let (uv1, uv2) = (vertices[b].uv - vertices[a].uv, vertices[c].uv - vertices[a].uv);
        let determinant = uv1.x * uv2.y - uv2.x * uv1.y;
        if determinant.abs() < 1e-12 {
            continue;
        }
        let tangent = (edge1 * uv2.y - edge2 * uv1.y) / determinant;
        let bitangent = (edge2 * uv1.x - edge1 * uv2.x) / determinant;
        for index in [a, b, c] {
            tangents[index] += tangent;
            bitangents[index] += bitangent;
        }
    }
    for ((vertex, tangent), bitangent) in vertices.iter_mut().zip(tangents).zip(bitangents) {
        let normal = vertex.normal;
        let orthogonal =
            (tangent - normal * normal.dot(tangent)).try_normalize().unwrap_or_else(|| normal.any_orthonormal_vector());
        let handedness = if normal.cross(orthogonal).dot(bitangent) < 0.0 { -1.0 } else { 1.0 };
        vertex.tangent = orthogonal.extend(handedness);
    }
}

/// Computes smooth vertex normals from triangles: area-weighted face normals, accumulated, normalized.
/// A vertex on no triangle (or only degenerate ones) gets +Y.
pub fn compute_normals(vertices: &mut [Vertex], indices: &[u32]) {
    let mut sums = vec![Vec3::ZERO; vertices.len()];
    for triangle in indices.chunks_exact(3) {
        let [a, b, c] = [triangle[0], triangle[1], triangle[2]].map(|index| index as usize);
        if a >= vertices.len() || b >= vertices.len() || c >= vertices.len() {
            continue;
        }
        let face = (vertices[b].position - vertices[a].position).cross(vertices[c].position - vertices[a].position);
        for index in [a, b, c] {
            sums[index] += face;
        }
    }
    for (vertex, sum) in vertices.iter_mut().zip(sums) {
        vertex.normal = sum.try_normalize().unwrap_or(Vec3::Y);
    }
}
