//! Skin pass (compute): every vertex of every instance, moved by the instance's active morph targets
//! and then blended by all of its influences (an offset and a count into `model.influences`),
//! written once into `skinned_vertices` in world space.
//!
//! Reads: `model.source_vertices`, `model.influences`, `model.morph_targets`, `model.morph_deltas`,
//! `joint_palettes` (with each instance's morph block), and the instances to skin
//! from the cull pass's skin table in `cull.work_groups`: one indirect dispatch over it
//! (`cull.counters`), a workgroup per entry, each a run of one instance's vertices at its level (a level's vertices are a prefix
//! of the model's). Writes (and
//! owns): `skinned_vertices[c]`, which the triangle, shadow and forward passes then read. Its
//! hazards: [`SkinPass::hazards_before`], [`SkinPass::hazards_after`].

use std::sync::Arc;

use ash::vk;

use gpu_allocator::MemoryLocation;
use vk::{AccessFlags2 as Access, BufferUsageFlags as Usage, PipelineStageFlags2 as Stage};

use crate::gpu::barrier::{side, Hazard, Side};
use crate::gpu::descriptors::{DescriptorPool, DescriptorSetLayout, Resource};
use crate::gpu::pipeline::Pipeline;
use crate::gpu::{self, Buffer, Device};
use crate::render::settings::SkinTuning;
use crate::render::shader_types::SkinPush;
use crate::render::{padded_chunks, Setup, MAX_CHUNKS};

pub const BINDING_SOURCE_VERTICES: u32 = 0;
pub const BINDING_INFLUENCES: u32 = 1;
pub const BINDING_PALETTES: u32 = 2;
pub const BINDING_SKINNED: u32 = 3;
pub const BINDING_WORK_GROUPS: u32 = 4;
pub const BINDING_MORPH_TARGETS: u32 = 5;
pub const BINDING_MORPH_DELTAS: u32 = 6;
pub const BINDING_INFLUENCE_OFFSETS: u32 = 7;
pub const BINDING_COUNTERS: u32 = 8;
pub const BINDING_MODELS: u32 = 9;

/// What the pass reads, made by the model's upload and the passes before it.
pub struct SkinInputs<'a> {
    pub source_vertices: &'a Buffer,
    pub influences: &'a Buffer,
    pub influence_offsets: &'a Buffer,
    /// The palette pass's output, a buffer a chunk.
    pub palettes: &'a [Buffer],
    /// The cull pass's work tables (the skin table among them) and its counters (where the table
    /// starts, and its length).
    pub work_groups: &'a Buffer,
    pub counters: &'a Buffer,
    /// Each model's record (`ModelRecord`), which the table's entries name.
    pub models: &'a Buffer,
    pub morph_targets: &'a Buffer,
    pub morph_deltas: &'a Buffer,
}

pub struct SkinPass {
    pub pipeline: Pipeline,
    pub tuning: SkinTuning,
    /// Its one set, over `SkinInputs` and `skinned`, from its own pool.
    set: vk::DescriptorSet,
    _pool: DescriptorPool,
    pub set_layout: DescriptorSetLayout,
    /// Every kept instance's skinned vertices, in chunks of instances (see `Chunking`).
    pub skinned: Vec<Buffer>,
    device: Arc<Device>,
}

/// Skin writes, the earlier side of the hazard on its output.
const SKIN_WRITES: Side = side("skin writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);

impl SkinPass {
    /// The push constants of its dispatch (what each instance's model says comes from its record).
    pub fn push(setup: &Setup) -> SkinPush {
        SkinPush { chunk_instances: setup.chunking.instances_per_chunk }
    }

    /// The layout `tuning` asks for, or (None) the one measured best for the device, as the
    /// variables amend it (`SkinTuning::from_env`).
    pub fn tuning(device: &Device, tuning: Option<SkinTuning>) -> gpu::Result<SkinTuning> {
        match tuning {
            Some(tuning) => Ok(tuning),
            None => SkinTuning::from_env(SkinTuning::for_device(device.properties.device_type)).map_err(gpu::Error::Other),
        }
    }

    /// The pass and its output: `chunk_vertices[c]` skinned vertices in chunk c. Only the
    /// `compute` strategy runs it (`runs`); the others keep one placeholder vertex a chunk so its
    /// set stays valid.
    pub fn new(
        device: &Arc<Device>,
        chunk_vertices: &[u64],
        runs: bool,
        tuning: SkinTuning,
        inputs: &SkinInputs<'_>,
    ) -> gpu::Result<SkinPass> {
        // TRANSFER_DST: zeroed before tracing; and acceleration-structure builds read them.
        let usage =
            Usage::STORAGE_BUFFER | Usage::VERTEX_BUFFER | Usage::TRANSFER_SRC | Usage::TRANSFER_DST | device.build_input_usage();
        let mut skinned = Vec::new();
        for (chunk, &vertices) in chunk_vertices.iter().enumerate() {
            let vertex_bytes = std::mem::size_of::<crate::render::shader_types::SkinnedVertex>() as u64;
            let size = if runs { vertices * vertex_bytes } else { 0 }.max(28);
            skinned.push(Buffer::new(device, &format!("skinned_vertices[{chunk}]"), size, usage, MemoryLocation::GpuOnly)?);
        }
        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let compute = vk::ShaderStageFlags::COMPUTE;
        let set_layout = DescriptorSetLayout::with_counts(
            device,
            "skin.set_layout",
            &[
                (BINDING_SOURCE_VERTICES, storage, compute, 1),
                (BINDING_INFLUENCES, storage, compute, 1),
                (BINDING_PALETTES, storage, compute, MAX_CHUNKS),
                (BINDING_SKINNED, storage, compute, MAX_CHUNKS),
                (BINDING_WORK_GROUPS, storage, compute, 1),
                (BINDING_MORPH_TARGETS, storage, compute, 1),
                (BINDING_MORPH_DELTAS, storage, compute, 1),
                (BINDING_INFLUENCE_OFFSETS, storage, compute, 1),
                (BINDING_COUNTERS, storage, compute, 1),
                (BINDING_MODELS, storage, compute, 1),
            ],
        )?;
        let pipeline = Pipeline::compute(
            device,
            "skin",
            crate::render::shaders::SKIN_COMP,
            &[&set_layout],
            std::mem::size_of::<SkinPush>() as u32,
            &[(0, tuning.workgroup_size), (1, u32::from(tuning.staged_stores))],
        )?;
        let (pool, set) = DescriptorPool::with_one_set(
            device,
            "skin",
            &set_layout,
            &[
                (BINDING_SOURCE_VERTICES, Resource::StorageBuffer(inputs.source_vertices)),
                (BINDING_INFLUENCES, Resource::StorageBuffer(inputs.influences)),
                (BINDING_PALETTES, Resource::StorageBuffers(padded_chunks(inputs.palettes))),
                (BINDING_SKINNED, Resource::StorageBuffers(padded_chunks(&skinned))),
                (BINDING_WORK_GROUPS, Resource::StorageBuffer(inputs.work_groups)),
                (BINDING_MORPH_TARGETS, Resource::StorageBuffer(inputs.morph_targets)),
                (BINDING_MORPH_DELTAS, Resource::StorageBuffer(inputs.morph_deltas)),
                (BINDING_INFLUENCE_OFFSETS, Resource::StorageBuffer(inputs.influence_offsets)),
                (BINDING_COUNTERS, Resource::StorageBuffer(inputs.counters)),
                (BINDING_MODELS, Resource::StorageBuffer(inputs.models)),
            ],
        )?;
        Ok(SkinPass { pipeline, tuning, set, _pool: pool, set_layout, skinned, device: device.clone() })
    }

    /// Before the pass: last frame's readers of the skinned vertices are done.
    /// `traced`: last frame's acceleration-structure builds read them too (`--shadows ray`).
    pub fn hazards_before(&self, traced: bool) -> Vec<Hazard> {
        let stages = Stage::VERTEX_ATTRIBUTE_INPUT | Stage::COMPUTE_SHADER | Stage::FRAGMENT_SHADER;
        let readers = match traced {
            false => side("last frame's vertex-attribute, triangle-, raster-pass and resolve reads", stages, Access::NONE),
            true => side(
                "last frame's vertex-attribute, triangle-, raster-pass, resolve and build reads",
                stages | Stage::ACCELERATION_STRUCTURE_BUILD_KHR,
                Access::NONE,
            ),
        };
        vec![Hazard::buffers("skinned_vertices[c]", &self.skinned, readers, SKIN_WRITES)]
    }

    /// After the pass: skin once, use everywhere (the triangle and raster passes, then shadow and
    /// forward, the raster resolve among its fragment shaders).
    pub fn hazards_after(&self) -> Vec<Hazard> {
        let readers = side(
            "triangle- and raster-pass reads; shadow and forward vertex input; the raster resolve's reads",
            Stage::COMPUTE_SHADER | Stage::VERTEX_ATTRIBUTE_INPUT | Stage::FRAGMENT_SHADER,
            Access::SHADER_STORAGE_READ | Access::VERTEX_ATTRIBUTE_READ,
        );
        vec![Hazard::buffers("skinned_vertices[c]", &self.skinned, SKIN_WRITES, readers)]
    }

    /// One indirect dispatch, whatever the levels: `arguments` at `offset` holds (workgroups a
    /// row, rows, 1) over the cull pass's skin table.
    pub fn record(&self, command_buffer: vk::CommandBuffer, push: &SkinPush, (arguments, offset): (&Buffer, u64)) {
        self.device.begin_label(command_buffer, c"skin");
        self.pipeline.bind(command_buffer);
        self.pipeline.bind_sets(command_buffer, 0, &[self.set]);
        self.pipeline.push_constants(command_buffer, vk::ShaderStageFlags::COMPUTE, push);
        self.device.cmd_dispatch_indirect(command_buffer, arguments.raw, offset);
        self.device.end_label(command_buffer);
    }
}
