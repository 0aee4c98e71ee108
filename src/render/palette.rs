//! Palette pass (compute): per instance and joint, sample the clip, interpolate the two baked frames
//! and write `world × pose × inverse bind`.
//!
//! Reads: `model.poses`, `model.clips`, `model.inverse_binds`, `frame.instances[slot]`, and the
//! instances to animate from `cull.skin_list` (the dispatch's y size is their count, from `cull.counters`).
//! Writes: `joint_palettes`. Expects: last frame's skin-pass reads of the palettes finished
//! (write-after-read barrier before it). The skin pass needs a write -> read barrier after it.

use std::sync::Arc;

use ash::vk as ash_vk;

use super::gpu::PalettePush;
use super::{padded_chunks, MAX_CHUNKS};
use crate::vk::descriptors::{DescriptorSetLayout, Resource};
use crate::vk::pipeline::Pipeline;
use crate::vk::{self, Buffer, Device};

/// Joints per workgroup (the x size); the y dimension walks instances.
pub const WORKGROUP_SIZE: u32 = 64;

pub const BINDING_POSES: u32 = 0;
pub const BINDING_CLIPS: u32 = 1;
pub const BINDING_INVERSE_BINDS: u32 = 2;
pub const BINDING_INSTANCES: u32 = 3;
pub const BINDING_PALETTES: u32 = 4;
pub const BINDING_SKIN_LIST: u32 = 5;
pub const BINDING_JOINT_POSITIONS: u32 = 6;

pub struct PalettePass {
    pub pipeline: Pipeline,
    pub set_layout: DescriptorSetLayout,
    device: Arc<Device>,
}

/// The buffers one palette dispatch binds.
pub struct PaletteInputs<'a> {
    pub poses: &'a Buffer,
    pub clips: &'a Buffer,
    pub inverse_binds: &'a Buffer,
    pub instances: &'a Buffer,
    /// The palette chunks (see `Chunking`).
    pub palettes: &'a [Buffer],
    pub skin_list: &'a Buffer,
    pub joint_positions: &'a Buffer,
}

impl PalettePass {
    pub fn new(device: &Arc<Device>) -> vk::Result<PalettePass> {
        let storage = ash_vk::DescriptorType::STORAGE_BUFFER;
        let compute = ash_vk::ShaderStageFlags::COMPUTE;
        let set_layout = DescriptorSetLayout::with_counts(
            device,
            "palette.set_layout",
            &[
                (BINDING_POSES, storage, compute, 1),
                (BINDING_CLIPS, storage, compute, 1),
                (BINDING_INVERSE_BINDS, storage, compute, 1),
                (BINDING_INSTANCES, storage, compute, 1),
                (BINDING_PALETTES, storage, compute, MAX_CHUNKS),
                (BINDING_SKIN_LIST, storage, compute, 1),
                (BINDING_JOINT_POSITIONS, storage, compute, 1),
            ],
        )?;
        let pipeline = Pipeline::compute(
            device,
            "palette",
            super::shaders::PALETTE_COMP,
            &[&set_layout],
            std::mem::size_of::<PalettePush>() as u32,
            &[(0, WORKGROUP_SIZE)],
        )?;
        Ok(PalettePass { pipeline, set_layout, device: device.clone() })
    }

    pub fn write_set(&self, set: ash_vk::DescriptorSet, inputs: &PaletteInputs<'_>) {
        crate::vk::descriptors::write_set(
            &self.device,
            set,
            &[
                (BINDING_POSES, Resource::StorageBuffer(inputs.poses)),
                (BINDING_CLIPS, Resource::StorageBuffer(inputs.clips)),
                (BINDING_INVERSE_BINDS, Resource::StorageBuffer(inputs.inverse_binds)),
                (BINDING_INSTANCES, Resource::StorageBuffer(inputs.instances)),
                (BINDING_PALETTES, Resource::StorageBuffers(padded_chunks(inputs.palettes))),
                (BINDING_SKIN_LIST, Resource::StorageBuffer(inputs.skin_list)),
                (BINDING_JOINT_POSITIONS, Resource::StorageBuffer(inputs.joint_positions)),
            ],
        );
    }

    /// Dispatches indirectly: `arguments` at `offset` holds (joint groups, instances kept by the cull
    /// pass, 1).
    pub fn record(
        &self,
        command_buffer: ash_vk::CommandBuffer,
        set: ash_vk::DescriptorSet,
        push: PalettePush,
        (arguments, offset): (&Buffer, u64),
    ) {
        self.device.begin_label(command_buffer, c"palette");
        self.pipeline.bind(command_buffer);
        self.pipeline.bind_sets(command_buffer, 0, &[set]);
        self.pipeline.push_constants(command_buffer, ash_vk::ShaderStageFlags::COMPUTE, &push);
        unsafe { self.device.raw.cmd_dispatch_indirect(command_buffer, arguments.raw, offset) };
        self.device.end_label(command_buffer);
    }
}
