//! Skin pass (compute): every vertex of every instance, blended by all of its influences (an offset
//! and a count into `model.influences`), written once into `skinned_vertices` in world space.
//!
//! Reads: `model.source_vertices`, `model.influences`, `joint_palettes`, and the instances to skin
//! from `cull.skin_list` (the dispatch's y size is their count, from `cull.counters`). Writes: `skinned_vertices`, which the shadow and
//! forward passes then bind as their vertex buffer. Expects before it: palette write -> read, and
//! last frame's vertex-attribute reads of `skinned_vertices` finished (write-after-read).

use std::sync::Arc;

use ash::vk as ash_vk;

use super::gpu::SkinPush;
use super::{padded_chunks, MAX_CHUNKS};
use crate::vk::descriptors::{DescriptorSetLayout, Resource};
use crate::vk::pipeline::Pipeline;
use crate::vk::{self, Buffer, Device};

/// Vertices per workgroup (x); the y dimension walks instances.
pub const WORKGROUP_SIZE: u32 = 64;

pub const BINDING_SOURCE_VERTICES: u32 = 0;
pub const BINDING_INFLUENCES: u32 = 1;
pub const BINDING_PALETTES: u32 = 2;
pub const BINDING_SKINNED: u32 = 3;
pub const BINDING_SKIN_LIST: u32 = 4;

pub struct SkinPass {
    pub pipeline: Pipeline,
    pub set_layout: DescriptorSetLayout,
    device: Arc<Device>,
}

impl SkinPass {
    pub fn new(device: &Arc<Device>) -> vk::Result<SkinPass> {
        let storage = ash_vk::DescriptorType::STORAGE_BUFFER;
        let compute = ash_vk::ShaderStageFlags::COMPUTE;
        let set_layout = DescriptorSetLayout::with_counts(
            device,
            "skin.set_layout",
            &[
                (BINDING_SOURCE_VERTICES, storage, compute, 1),
                (BINDING_INFLUENCES, storage, compute, 1),
                (BINDING_PALETTES, storage, compute, MAX_CHUNKS),
                (BINDING_SKINNED, storage, compute, MAX_CHUNKS),
                (BINDING_SKIN_LIST, storage, compute, 1),
            ],
        )?;
        let pipeline = Pipeline::compute(
            device,
            "skin",
            super::shaders::SKIN_COMP,
            &[&set_layout],
            std::mem::size_of::<SkinPush>() as u32,
            &[(0, WORKGROUP_SIZE)],
        )?;
        Ok(SkinPass { pipeline, set_layout, device: device.clone() })
    }

    pub fn write_set(
        &self,
        set: ash_vk::DescriptorSet,
        source_vertices: &Buffer,
        influences: &Buffer,
        palettes: &[Buffer],
        skinned: &[Buffer],
        skin_list: &Buffer,
    ) {
        crate::vk::descriptors::write_set(
            &self.device,
            set,
            &[
                (BINDING_SOURCE_VERTICES, Resource::StorageBuffer(source_vertices)),
                (BINDING_INFLUENCES, Resource::StorageBuffer(influences)),
                (BINDING_PALETTES, Resource::StorageBuffers(padded_chunks(palettes))),
                (BINDING_SKINNED, Resource::StorageBuffers(padded_chunks(skinned))),
                (BINDING_SKIN_LIST, Resource::StorageBuffer(skin_list)),
            ],
        );
    }

    /// Dispatches indirectly: `arguments` at `offset` holds (vertex groups, instances kept by the cull
    /// pass, 1).
    pub fn record(
        &self,
        command_buffer: ash_vk::CommandBuffer,
        set: ash_vk::DescriptorSet,
        push: SkinPush,
        (arguments, offset): (&Buffer, u64),
    ) {
        self.device.begin_label(command_buffer, c"skin");
        self.pipeline.bind(command_buffer);
        self.pipeline.bind_sets(command_buffer, 0, &[set]);
        self.pipeline.push_constants(command_buffer, ash_vk::ShaderStageFlags::COMPUTE, &push);
        unsafe { self.device.raw.cmd_dispatch_indirect(command_buffer, arguments.raw, offset) };
        self.device.end_label(command_buffer);
    }
}
