//! What the draw passes (shadow, forward, the debug views) share: where skinned vertices come from,
//! the cull pass's draw lists, the skinned vertex format, and the viewport.

use std::sync::Arc;

use ash::vk;

use super::chunks::DrawRun;
use super::model_buffers::GpuModel;
use super::shader_types::SkinnedVertex;
use super::{padded_chunks, MAX_CHUNKS};
use crate::gpu::descriptors::{DescriptorPool, DescriptorSetLayout, Resource};
use crate::gpu::pipeline::GraphicsDesc;
use crate::gpu::{Buffer, Device};

/// The skin-inputs set (`shaders/skin_inputs.glsl`): the source vertices, their influences, the
/// palettes chunk by chunk, the morph targets, the cull pass's motions, the influence offsets,
/// the model records and the instance slots (read by the shadow pass's skinning shader; the
/// forward shaders have theirs in the frame set). The `vertex` strategy's
/// shadow and forward vertex shaders skin from it; the `compute` strategy's forward vertex shader
/// skins a moving vertex's previous position from it (the previous block), for the motion vectors.
pub const SKIN_INPUTS_SOURCE_VERTICES: u32 = 0;
pub const SKIN_INPUTS_INFLUENCES: u32 = 1;
pub const SKIN_INPUTS_PALETTES: u32 = 2;
pub const SKIN_INPUTS_MORPH_TARGETS: u32 = 3;
pub const SKIN_INPUTS_MORPH_DELTAS: u32 = 4;
pub const SKIN_INPUTS_MOTIONS: u32 = 5;
pub const SKIN_INPUTS_INFLUENCE_OFFSETS: u32 = 6;
pub const SKIN_INPUTS_MODELS: u32 = 7;
pub const SKIN_INPUTS_INSTANCE_SLOTS: u32 = 8;

/// The skin-inputs set (see [`SKIN_INPUTS_SOURCE_VERTICES`]): its layout, which the pipelines that
/// skin in a vertex shader take as a set, and the set over the model's vertices and influences, the
/// palette pass's chunk buffers and the cull pass's motions, from its own pool.
pub struct SkinInputSet {
    pub layout: DescriptorSetLayout,
    pub set: vk::DescriptorSet,
    _pool: DescriptorPool,
}

impl SkinInputSet {
    pub fn new(
        device: &Arc<Device>,
        model: &GpuModel,
        palettes: &[Buffer],
        (motions, instance_slots): (&Buffer, &Buffer),
    ) -> crate::gpu::Result<SkinInputSet> {
        // Vertex shaders skin from it; the raster resolve (fragment) skins its previous corners.
        let (storage, vertex) =
            (vk::DescriptorType::STORAGE_BUFFER, vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT);
        let layout = DescriptorSetLayout::with_counts(
            device,
            "skin_inputs.set_layout",
            &[
                (SKIN_INPUTS_SOURCE_VERTICES, storage, vertex, 1),
                (SKIN_INPUTS_INFLUENCES, storage, vertex, 1),
                (SKIN_INPUTS_PALETTES, storage, vertex, MAX_CHUNKS),
                (SKIN_INPUTS_MORPH_TARGETS, storage, vertex, 1),
                (SKIN_INPUTS_MORPH_DELTAS, storage, vertex, 1),
                (SKIN_INPUTS_MOTIONS, storage, vertex, 1),
                (SKIN_INPUTS_INFLUENCE_OFFSETS, storage, vertex, 1),
                (SKIN_INPUTS_MODELS, storage, vertex, 1),
                (SKIN_INPUTS_INSTANCE_SLOTS, storage, vertex, 1),
            ],
        )?;
        let (pool, set) = DescriptorPool::with_one_set(
            device,
            "skin_inputs",
            &layout,
            &[
                (SKIN_INPUTS_SOURCE_VERTICES, Resource::StorageBuffer(&model.source_vertices)),
                (SKIN_INPUTS_INFLUENCES, Resource::StorageBuffer(&model.influences)),
                (SKIN_INPUTS_PALETTES, Resource::StorageBuffers(padded_chunks(palettes))),
                (SKIN_INPUTS_MORPH_TARGETS, Resource::StorageBuffer(&model.morph_targets)),
                (SKIN_INPUTS_MORPH_DELTAS, Resource::StorageBuffer(&model.morph_deltas)),
                (SKIN_INPUTS_MOTIONS, Resource::StorageBuffer(motions)),
                (SKIN_INPUTS_INFLUENCE_OFFSETS, Resource::StorageBuffer(&model.influence_offsets)),
                (SKIN_INPUTS_MODELS, Resource::StorageBuffer(&model.models)),
                (SKIN_INPUTS_INSTANCE_SLOTS, Resource::StorageBuffer(instance_slots)),
            ],
        )?;
        Ok(SkinInputSet { layout, set, _pool: pool })
    }
}

/// Where the shadow and forward passes get skinned vertices from.
#[derive(Clone, Copy)]
pub enum VertexSource<'a> {
    /// Skinned vertices bound as the vertex buffer, one (buffer, byte offset) per chunk of
    /// instances: the skin pass's chunk buffers (`compute`), or ranges of the frame slot's
    /// CPU-written buffer (`cpu`).
    Skinned(&'a [(&'a Buffer, u64)]),
    /// No vertex buffer: the vertex shader skins from the palettes (`vertex`), reading the
    /// skin-inputs set.
    /// Each instance's model and palette slots come from its records (the set's models and
    /// instance slots); its chunk from `chunk_instances`.
    SkinInVertexShader { skin_inputs: vk::DescriptorSet, chunk_instances: u32 },
}

impl VertexSource<'_> {
    /// Binds chunk `chunk`'s vertices (nothing to bind when the vertex shader skins).
    pub fn bind_chunk(&self, device: &Device, command_buffer: vk::CommandBuffer, chunk: u32) {
        if let VertexSource::Skinned(chunks) = self {
            if let Some(&(buffer, offset)) = chunks.get(chunk as usize) {
                unsafe { device.raw.cmd_bind_vertex_buffers(command_buffer, 0, &[buffer.raw], &[offset]) };
            }
        }
    }
}

/// The cull pass's draws for one view, run by run (`DrawRun`: a chunk's instances of one model):
/// each run's list for its model's mesh m holds `run.instances` indexed-indirect commands from
/// `run.first_command + m × run.instances`, of which the count at `count_offset + 8 × run` in
/// `counts` are live this frame.
#[derive(Clone, Copy)]
pub struct DrawList<'a> {
    pub commands: &'a Buffer,
    pub counts: &'a Buffer,
    /// 0: the camera's counts; 4: the light's.
    pub count_offset: u64,
    pub runs: &'a [DrawRun],
}

impl DrawList<'_> {
    /// Run `run`'s draws of its model's mesh `mesh` (the vertex and index buffers bound).
    pub fn draw(&self, device: &Device, command_buffer: vk::CommandBuffer, run: usize, mesh: u32) {
        let Some(draws) = self.runs.get(run) else { return };
        let stride = std::mem::size_of::<vk::DrawIndexedIndirectCommand>() as u32;
        let first = u64::from(draws.first_command) + u64::from(mesh) * u64::from(draws.instances);
        unsafe {
            device.raw.cmd_draw_indexed_indirect_count(
                command_buffer,
                self.commands.raw,
                first * u64::from(stride),
                self.counts.raw,
                self.count_offset + 8 * run as u64,
                draws.instances,
                stride,
            )
        };
    }

    /// Every run's draws of every mesh, binding each run's chunk's vertices first (the index
    /// buffer and the pipeline are the caller's).
    pub fn draw_all(&self, device: &Device, command_buffer: vk::CommandBuffer, vertices: &VertexSource<'_>) {
        for (run, draws) in self.runs.iter().enumerate() {
            vertices.bind_chunk(device, command_buffer, draws.chunk);
            for mesh in 0..draws.mesh_count {
                self.draw(device, command_buffer, run, mesh);
            }
        }
    }
}

/// Vertex input shared by the passes that read the skinned buffer: position (location 0), the
/// snorm16 normal (location 1) and tangent (location 2), 28 bytes a vertex.
pub fn skinned_vertex_input() -> ([vk::VertexInputBindingDescription; 1], [vk::VertexInputAttributeDescription; 3]) {
    let binding = vk::VertexInputBindingDescription::default()
        .binding(0)
        .stride(std::mem::size_of::<SkinnedVertex>() as u32)
        .input_rate(vk::VertexInputRate::VERTEX);
    let position = vk::VertexInputAttributeDescription::default()
        .location(0)
        .binding(0)
        .format(vk::Format::R32G32B32_SFLOAT)
        .offset(std::mem::offset_of!(SkinnedVertex, position) as u32);
    let normal = vk::VertexInputAttributeDescription::default()
        .location(1)
        .binding(0)
        .format(vk::Format::R16G16B16A16_SNORM)
        .offset(std::mem::offset_of!(SkinnedVertex, normal) as u32);
    let tangent = vk::VertexInputAttributeDescription::default()
        .location(2)
        .binding(0)
        .format(vk::Format::R16G16B16A16_SNORM)
        .offset(std::mem::offset_of!(SkinnedVertex, tangent) as u32);
    ([binding], [position, normal, tangent])
}

/// Full-target viewport and scissor. The projections are Vulkan's (y down), so the viewport is the
/// plain one.
/// A pipeline of one triangle over the target (shaders/fullscreen.vert, no vertex input) running
/// `fragment` with `set_layouts` and `push_bytes` of fragment push constants: single-sampled, no
/// attachment, no depth test. The motion pass, the raster resolve and the shadow merge start from
/// it and name their attachments.
pub fn fullscreen<'a>(fragment: &'a [u8], set_layouts: &'a [&'a DescriptorSetLayout], push_bytes: u32) -> GraphicsDesc<'a> {
    GraphicsDesc {
        vertex_shader: super::shaders::FULLSCREEN_VERT,
        geometry_shader: None,
        fragment_shader: Some(fragment),
        vertex_bindings: &[],
        vertex_attributes: &[],
        topology: vk::PrimitiveTopology::TRIANGLE_LIST,
        polygon_mode: vk::PolygonMode::FILL,
        cull_mode: vk::CullModeFlags::NONE,
        depth_bias: None,
        samples: vk::SampleCountFlags::TYPE_1,
        color_format: None,
        second_color: None,
        depth_format: None,
        depth_write: false,
        depth_compare: vk::CompareOp::ALWAYS,
        set_layouts,
        push_constants: Some((vk::ShaderStageFlags::FRAGMENT, push_bytes)),
    }
}

pub fn set_viewport(device: &Device, command_buffer: vk::CommandBuffer, extent: vk::Extent2D) {
    let viewport =
        vk::Viewport { x: 0.0, y: 0.0, width: extent.width as f32, height: extent.height as f32, min_depth: 0.0, max_depth: 1.0 };
    let scissor = vk::Rect2D { offset: vk::Offset2D::default(), extent };
    unsafe {
        device.raw.cmd_set_viewport(command_buffer, 0, &[viewport]);
        device.raw.cmd_set_scissor(command_buffer, 0, &[scissor]);
    }
}
