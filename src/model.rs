//! The one model type every loader produces and the renderer consumes.
//!
//! Y-up, right-handed, metres-ish. Vertices are in the bind pose; clips are baked model-space poses.

use std::path::PathBuf;

use glam::{Vec2, Vec3, Vec4};

use crate::anim::{Aabb, Clip, Skeleton};

/// One joint's pull on a vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Influence {
    pub joint: u32,
    pub weight: f32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vertex {
    /// Bind-pose position, model space.
    pub position: Vec3,
    /// Bind-pose normal, model space, unit length.
    pub normal: Vec3,
    /// Bind-pose tangent (xyz, unit) and bitangent sign (w = ±1), for normal maps.
    pub tangent: Vec4,
    pub uv: Vec2,
    /// This vertex's influences are `Model::influences[first_influence..][..influence_count]`: every
    /// weight the file gave it, heaviest first, summing to 1. No cap: the skin pass walks the list.
    pub first_influence: u32,
    pub influence_count: u32,
}

/// A run of triangles drawn with one material.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    pub name: String,
    /// Into [`Model::indices`].
    pub first_index: u32,
    pub index_count: u32,
    pub material: usize,
}

/// Decoded RGBA8 pixels, rows top to bottom.
#[derive(Clone, Debug, PartialEq)]
pub struct Texture {
    pub path: PathBuf,
    pub width: u32,
    pub height: u32,
    pub rgba8: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    pub name: String,
    /// Multiplies the texture, or is the colour when there is none.
    pub base_color: Vec4,
    pub texture: Option<Texture>,
    /// Tangent-space normal map (MD5's `_local`/`_normal` images, glTF's normalTexture).
    pub normal_map: Option<Texture>,
}

/// What a loader noticed that the user may want to know.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadStats {
    /// The largest influence count any vertex has.
    pub max_influences: usize,
    /// Non-fatal problems, for example a texture that could not be found.
    pub warnings: Vec<String>,
    /// Clips baked from curves: (clip, rate in Hz, measured error relative to the model's extent).
    pub bake: Vec<(String, f32, f32)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub name: String,
    pub vertices: Vec<Vertex>,
    /// Every vertex's influence list, back to back (see [`Vertex::first_influence`]).
    pub influences: Vec<Influence>,
    /// Triangle list, indices into `vertices`.
    pub indices: Vec<u32>,
    pub meshes: Vec<Mesh>,
    pub materials: Vec<Material>,
    pub skeleton: Skeleton,
    pub clips: Vec<Clip>,
    pub stats: LoadStats,
}

impl Model {
    pub fn bind_bounds(&self) -> Aabb {
        Aabb::from_points(self.vertices.iter().map(|vertex| vertex.position))
    }

    /// Bounds over the bind pose and every frame of every clip.
    pub fn animated_bounds(&self) -> Aabb {
        self.clips.iter().fold(self.bind_bounds(), |acc, clip| acc.union(clip.total_bounds()))
    }

    /// The model's size scale that test tolerances are relative to.
    pub fn extent(&self) -> f32 {
        self.animated_bounds().extent()
    }

    /// Fills every clip's per-frame bounds by skinning the mesh on the CPU (formats that store no
    /// bounds: glTF, MS3D). MD5 clips keep the bounds their file gives.
    pub fn compute_clip_bounds(&mut self) {
        let joint_count = self.skeleton.len();
        for clip_index in 0..self.clips.len() {
            let mut bounds = Vec::with_capacity(self.clips[clip_index].frame_count());
            let mut palette = vec![glam::Mat4::IDENTITY; joint_count];
            for frame in 0..self.clips[clip_index].frame_count() {
                crate::anim::palette(&self.skeleton, self.clips[clip_index].frame(frame), glam::Mat4::IDENTITY, &mut palette);
                let points = self.vertices.iter().map(|vertex| {
                    crate::anim::skin_vertex(&palette, vertex.position, vertex.normal, Vec3::X, self.influences_of(vertex))
                        .position
                });
                bounds.push(Aabb::from_points(points));
            }
            self.clips[clip_index].bounds = bounds;
        }
    }

    /// A vertex's influences (empty if its range is out of bounds, which loaders never produce).
    pub fn influences_of(&self, vertex: &Vertex) -> &[Influence] {
        let start = vertex.first_influence as usize;
        self.influences.get(start..start.saturating_add(vertex.influence_count as usize)).unwrap_or(&[])
    }
}

/// Merges repeated joints, drops non-positive weights, sorts heaviest first and scales the weights
/// to sum to 1. `None` when nothing positive is left (the caller reports where).
pub fn normalize_influences(influences: &[Influence]) -> Option<Vec<Influence>> {
    let mut merged: Vec<Influence> = Vec::with_capacity(influences.len());
    for influence in influences.iter().filter(|influence| influence.weight > 0.0 && influence.weight.is_finite()) {
        match merged.iter_mut().find(|existing| existing.joint == influence.joint) {
            Some(existing) => existing.weight += influence.weight,
            None => merged.push(*influence),
        }
    }
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
