//! Palette pass (compute): one invocation per listed instance walks the skeleton parents first,
//! samples every joint's channels at the instance's time, blends a crossfade and a layer in local
//! space, composes each joint onto its parent's pose and writes `world × model pose × inverse bind`
//! (why this shape: the shader's header); for a model with morph targets it then samples their
//! weights alike and lists the non-zero ones in the instance's morph block after its joints.
//!
//! Reads: `model.channels`, `model.key_times`, `model.key_values`, `model.joints`,
//! `model.inverse_binds`, `model.morph_targets`, `instances.data`,
//! `frame.morph_overrides[slot]`, and the instances to animate from
//! `cull.palette_list` (every kept instance, or with animation LOD the near ones and half the far),
//! as many as `cull.counters` counted (the indirect dispatch covers them in workgroups of 64,
//! counted by the cull pass too).
//! Writes (and owns): `joint_palettes[c]` and, for the skeleton view, `joint_positions`. Its
//! hazards: [`PalettePass::hazards_before`], [`PalettePass::hazards_after`].

use std::sync::Arc;

use ash::vk;

use gpu_allocator::MemoryLocation;
use vk::{AccessFlags2 as Access, BufferUsageFlags as Usage, PipelineStageFlags2 as Stage};

use crate::gpu::barrier::{side, Hazard, Side};
use crate::gpu::descriptors::{DescriptorPool, DescriptorSetLayout, Resource};
use crate::gpu::pipeline::Pipeline;
use crate::gpu::{self, Buffer, Device};
use crate::render::chunks::InstanceSlots;
use crate::render::model_buffers::GpuModel;
use crate::render::shader_types::{PaletteMatrix, PalettePush};
use crate::render::{padded_chunks, Setup, FRAMES_IN_FLIGHT, MAX_CHUNKS};

/// Listed instances per workgroup, one invocation each (the cull pass counts the workgroups).
pub const WORKGROUP_SIZE: u32 = 64;

pub const BINDING_CHANNELS: u32 = 0;
pub const BINDING_KEY_TIMES: u32 = 1;
pub const BINDING_KEY_VALUES: u32 = 2;
pub const BINDING_JOINTS: u32 = 3;
pub const BINDING_INVERSE_BINDS: u32 = 4;
pub const BINDING_INSTANCES: u32 = 5;
pub const BINDING_PALETTES: u32 = 6;
pub const BINDING_PALETTE_LIST: u32 = 7;
pub const BINDING_JOINT_POSITIONS: u32 = 8;
pub const BINDING_COUNTERS: u32 = 9;
pub const BINDING_MORPH_TARGETS: u32 = 10;
pub const BINDING_MORPH_OVERRIDES: u32 = 11;
pub const BINDING_MOTIONS: u32 = 12;
pub const BINDING_MODELS: u32 = 13;
pub const BINDING_ANIMATIONS: u32 = 14;
pub const BINDING_INSTANCE_SLOTS: u32 = 15;

pub struct PalettePass {
    pub pipeline: Pipeline,
    pub set_layout: DescriptorSetLayout,
    /// One palette per kept instance, in chunks of instances (see `Chunking`).
    pub palettes: Vec<Buffer>,
    /// Each instance's joint positions (the skeleton view), written only when asked:
    /// `joint_stride` entries an instance.
    pub joint_positions: Buffer,
    pub joint_stride: u32,
    /// Its per-frame sets, one a frame in flight.
    frame_pool: DescriptorPool,
    device: Arc<Device>,
}

/// Palette writes, the earlier side of the hazards on its outputs.
const PALETTE_WRITES: Side = side("palette writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);

/// The buffers one palette dispatch binds.
pub struct PaletteInputs<'a> {
    pub channels: &'a Buffer,
    pub key_times: &'a Buffer,
    pub key_values: &'a Buffer,
    pub joints: &'a Buffer,
    pub inverse_binds: &'a Buffer,
    pub instances: &'a Buffer,
    pub palette_list: &'a Buffer,
    pub counters: &'a Buffer,
    pub morph_targets: &'a Buffer,
    /// The frame slot's weights set by hand.
    pub morph_overrides: &'a Buffer,
    /// The cull pass's `motions`: which instances keep their previous palette.
    pub motions: &'a Buffer,
    /// Each model's record (`ModelRecord`).
    pub models: &'a Buffer,
    /// Each animation's record (`AnimationRecord`): where its channels start.
    pub animations: &'a Buffer,
    /// Each instance's slot (`InstanceSlot`): where its palette slots start.
    pub instance_slots: &'a Buffer,
}

impl PalettePass {
    /// The pass's push constants; `write_joint_positions` for the skeleton view.
    pub fn push(&self, setup: &Setup, write_joint_positions: bool) -> PalettePush {
        PalettePush {
            chunk_instances: setup.chunking.instances_per_chunk,
            write_joint_positions: u32::from(write_joint_positions),
            joint_stride: self.joint_stride,
        }
    }

    /// The pass and its outputs for the instances `slots` places, of `model`'s parts: each chunk's
    /// palettes as many slots as its instances take (each its model's `palette_stride`: this
    /// frame's block and the previous one, common.glsl), and joint positions for the most joints
    /// a part has.
    pub fn new(device: &Arc<Device>, slots: &InstanceSlots, model: &GpuModel) -> gpu::Result<PalettePass> {
        let joint_stride = model.parts.iter().map(|part| part.joint_count()).max().unwrap_or(1).max(1);
        let usage = Usage::STORAGE_BUFFER | Usage::TRANSFER_SRC;
        let mut palettes = Vec::new();
        for (chunk, &palette_slots) in slots.chunk_palette_slots.iter().enumerate() {
            let size = (palette_slots * std::mem::size_of::<PaletteMatrix>() as u64).max(48);
            palettes.push(Buffer::new(device, &format!("joint_palettes[{chunk}]"), size, usage, MemoryLocation::GpuOnly)?);
        }
        let positions_size = crate::render::chunks::joint_positions_bytes(
            slots.slots.len() as u64,
            u64::from(joint_stride),
            u64::from(device.limits().max_storage_buffer_range),
        );
        let joint_positions = Buffer::new(device, "joint_positions", positions_size, usage, MemoryLocation::GpuOnly)?;
        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let compute = vk::ShaderStageFlags::COMPUTE;
        let set_layout = DescriptorSetLayout::with_counts(
            device,
            "palette.set_layout",
            &[
                (BINDING_CHANNELS, storage, compute, 1),
                (BINDING_KEY_TIMES, storage, compute, 1),
                (BINDING_KEY_VALUES, storage, compute, 1),
                (BINDING_JOINTS, storage, compute, 1),
                (BINDING_INVERSE_BINDS, storage, compute, 1),
                (BINDING_INSTANCES, storage, compute, 1),
                (BINDING_PALETTES, storage, compute, MAX_CHUNKS),
                (BINDING_PALETTE_LIST, storage, compute, 1),
                (BINDING_JOINT_POSITIONS, storage, compute, 1),
                (BINDING_COUNTERS, storage, compute, 1),
                (BINDING_MORPH_TARGETS, storage, compute, 1),
                (BINDING_MORPH_OVERRIDES, storage, compute, 1),
                (BINDING_MOTIONS, storage, compute, 1),
                (BINDING_MODELS, storage, compute, 1),
                (BINDING_ANIMATIONS, storage, compute, 1),
                (BINDING_INSTANCE_SLOTS, storage, compute, 1),
            ],
        )?;
        let pipeline = Pipeline::compute(
            device,
            "palette",
            crate::render::shaders::PALETTE_COMP,
            &[&set_layout],
            std::mem::size_of::<PalettePush>() as u32,
            &[(0, WORKGROUP_SIZE)],
        )?;
        let frame_pool = DescriptorPool::for_sets(device, "palette.pool", &[(&set_layout, FRAMES_IN_FLIGHT as u32)])?;
        Ok(PalettePass { pipeline, set_layout, palettes, joint_positions, joint_stride, frame_pool, device: device.clone() })
    }

    /// Frame slot `slot`'s set over its `inputs`.
    pub fn frame_set(&self, slot: usize, inputs: &PaletteInputs<'_>) -> gpu::Result<vk::DescriptorSet> {
        let set = self.frame_pool.allocate(&self.set_layout, &format!("palette.set[{slot}]"))?;
        crate::gpu::descriptors::write_set(
            &self.device,
            set,
            &[
                (BINDING_CHANNELS, Resource::StorageBuffer(inputs.channels)),
                (BINDING_KEY_TIMES, Resource::StorageBuffer(inputs.key_times)),
                (BINDING_KEY_VALUES, Resource::StorageBuffer(inputs.key_values)),
                (BINDING_JOINTS, Resource::StorageBuffer(inputs.joints)),
                (BINDING_INVERSE_BINDS, Resource::StorageBuffer(inputs.inverse_binds)),
                (BINDING_INSTANCES, Resource::StorageBuffer(inputs.instances)),
                (BINDING_PALETTES, Resource::StorageBuffers(padded_chunks(&self.palettes))),
                (BINDING_PALETTE_LIST, Resource::StorageBuffer(inputs.palette_list)),
                (BINDING_JOINT_POSITIONS, Resource::StorageBuffer(&self.joint_positions)),
                (BINDING_COUNTERS, Resource::StorageBuffer(inputs.counters)),
                (BINDING_MORPH_TARGETS, Resource::StorageBuffer(inputs.morph_targets)),
                (BINDING_MORPH_OVERRIDES, Resource::StorageBuffer(inputs.morph_overrides)),
                (BINDING_MOTIONS, Resource::StorageBuffer(inputs.motions)),
                (BINDING_MODELS, Resource::StorageBuffer(inputs.models)),
                (BINDING_ANIMATIONS, Resource::StorageBuffer(inputs.animations)),
                (BINDING_INSTANCE_SLOTS, Resource::StorageBuffer(inputs.instance_slots)),
            ],
        );
        Ok(set)
    }

    /// Before the pass: last frame's readers of the palettes (the skin pass, or the vertex
    /// shaders with the `vertex` strategy) and of the joint positions are done, and last frame's
    /// palette writes are visible to this frame's reads (a moving instance's copy into its
    /// previous block).
    pub fn hazards_before(&self) -> Vec<Hazard> {
        let readers =
            side("last frame's skin or vertex-shader reads", Stage::COMPUTE_SHADER | Stage::VERTEX_SHADER, Access::NONE);
        let last_frame = side(
            "last frame's palette writes; skin, vertex-shader or raster-resolve reads",
            Stage::COMPUTE_SHADER | Stage::VERTEX_SHADER | Stage::FRAGMENT_SHADER,
            Access::SHADER_STORAGE_WRITE,
        );
        let copy = side(
            "palette reads (the previous block's copy) and writes",
            Stage::COMPUTE_SHADER,
            Access::SHADER_STORAGE_READ | Access::SHADER_STORAGE_WRITE,
        );
        vec![
            Hazard::buffers("joint_palettes[c]", &self.palettes, last_frame, copy),
            Hazard::buffer("joint_positions", &self.joint_positions, readers, PALETTE_WRITES),
        ]
    }

    /// After the pass: the palettes to `reader` (the skin pass, or the shadow and forward vertex
    /// shaders), the joint positions to the skeleton view.
    pub fn hazards_after(&self, reader: Side) -> Vec<Hazard> {
        let skeleton_view = side("the skeleton view's vertex shader", Stage::VERTEX_SHADER, Access::SHADER_STORAGE_READ);
        vec![
            Hazard::buffers("joint_palettes[c]", &self.palettes, PALETTE_WRITES, reader),
            Hazard::buffer("joint_positions", &self.joint_positions, PALETTE_WRITES, skeleton_view),
        ]
    }

    /// Dispatches indirectly: `arguments` at `offset` holds (workgroups of kept instances, 1, 1).
    pub fn record(
        &self,
        command_buffer: vk::CommandBuffer,
        set: vk::DescriptorSet,
        push: PalettePush,
        (arguments, offset): (&Buffer, u64),
    ) {
        self.device.begin_label(command_buffer, c"palette");
        self.pipeline.bind(command_buffer);
        self.pipeline.bind_sets(command_buffer, 0, &[set]);
        self.pipeline.push_constants(command_buffer, vk::ShaderStageFlags::COMPUTE, &push);
        self.device.cmd_dispatch_indirect(command_buffer, arguments.raw, offset);
        self.device.end_label(command_buffer);
    }
}
