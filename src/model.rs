//! The one model type every loader produces and the renderer consumes.
//!
//! Y-up, right-handed, metres-ish. Vertices are in the bind pose; clips are baked model-space poses.

use std::path::PathBuf;

use glam::{Vec2, Vec3, Vec4};

use crate::anim::{Aabb, Clip, Skeleton};

/// Influences per vertex the skin pass reads. MD5 vertices with more keep their heaviest four,
/// renormalized, and the loader counts them in [`LoadStats::influences_cut`].
pub const MAX_INFLUENCES: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vertex {
    /// Bind-pose position, model space.
    pub position: Vec3,
    /// Bind-pose normal, model space, unit length.
    pub normal: Vec3,
    pub uv: Vec2,
    /// Joint indices; unused slots have weight 0 (and joint 0).
    pub joints: [u16; MAX_INFLUENCES],
    /// Weights summing to 1, heaviest first.
    pub weights: [f32; MAX_INFLUENCES],
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
}

/// What a loader noticed that the user may want to know.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadStats {
    /// Vertices that had more than [`MAX_INFLUENCES`] weights and lost the lightest ones.
    pub influences_cut: usize,
    /// The largest influence count any vertex had in the file.
    pub max_influences: usize,
    /// Non-fatal problems, for example a texture that could not be found.
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub name: String,
    pub vertices: Vec<Vertex>,
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
