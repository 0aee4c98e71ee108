//! The compute rasterizer's GPU types (`passes::raster`): the triangles the triangle pass hands
//! it, its push constants, and what the resolve and the shadow merge push and read.

use bytemuck::{Pod, Zeroable};

/// `RasterTriangle` in common.glsl: a triangle the raster pass takes, 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct RasterTriangle {
    pub instance: u32,
    /// Where the instance's skinned vertices start in its chunk.
    pub vertex_base: u32,
    /// Its first index in the model's indices.
    pub first_index: u32,
    /// Its mesh among the model's (the resolve's material).
    pub mesh: u32,
}

/// Push constants of raster.comp.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct RasterPush {
    pub view_projection: [f32; 16],
    /// The target's pixels (the frame's, or the shadow map's texels).
    pub size: [u32; 2],
    /// The sign of a hidden triangle's area (`triangles::facing_sign`); 0: none hidden.
    pub facing_sign: f32,
    pub chunk_instances: u32,
    /// Entries the view's list holds.
    pub room: u32,
    /// The shadow build's depth bias: the shadow pipeline's (constant, slope).
    pub bias_constant: f32,
    pub bias_slope: f32,
    pub unused: u32,
}

/// `MeshMaterial` in raster_resolve.frag: a mesh's material, as the resolve shades it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct MeshMaterial {
    pub base_color: [f32; 4],
    /// x: the material's index (its textures' place in the resolve's arrays).
    pub material: [u32; 4],
}
