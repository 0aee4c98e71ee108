//! Synchronization2 barriers, called in the open between the passes that need them.
//!
//! Each takes the source and destination as `(stage, access)` pairs, so a call reads like the
//! hazard it resolves: `buffer(.., (COMPUTE_SHADER, SHADER_STORAGE_WRITE), (VERTEX_ATTRIBUTE_INPUT, VERTEX_ATTRIBUTE_READ))`.

use ash::vk;

use super::{Buffer, Device, Image};

pub type Scope = (vk::PipelineStageFlags2, vk::AccessFlags2);

/// Nothing to wait for (a fresh resource, or contents we discard).
pub const NONE: Scope = (vk::PipelineStageFlags2::NONE, vk::AccessFlags2::NONE);

pub fn buffer(device: &Device, command_buffer: vk::CommandBuffer, buffer: &Buffer, source: Scope, destination: Scope) {
    buffers(device, command_buffer, &[buffer], source, destination);
}

/// One hazard over several buffers (the chunks of one logical buffer), in one barrier call.
pub fn buffers(device: &Device, command_buffer: vk::CommandBuffer, buffers: &[&Buffer], source: Scope, destination: Scope) {
    let barriers: Vec<_> = buffers
        .iter()
        .map(|buffer| {
            vk::BufferMemoryBarrier2::default()
                .src_stage_mask(source.0)
                .src_access_mask(source.1)
                .dst_stage_mask(destination.0)
                .dst_access_mask(destination.1)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .buffer(buffer.raw)
                .offset(0)
                .size(vk::WHOLE_SIZE)
        })
        .collect();
    device.cmd_pipeline_barrier2(command_buffer, &vk::DependencyInfo::default().buffer_memory_barriers(&barriers));
}

pub fn image(
    device: &Device,
    command_buffer: vk::CommandBuffer,
    image: &Image,
    source: Scope,
    destination: Scope,
    old_layout: vk::ImageLayout,
    new_layout: vk::ImageLayout,
) {
    image_raw(device, command_buffer, image.raw, image.full_range(), source, destination, old_layout, new_layout);
}

/// For images we do not own as `Image` (swapchain images).
#[allow(clippy::too_many_arguments)]
pub fn image_raw(
    device: &Device,
    command_buffer: vk::CommandBuffer,
    image: vk::Image,
    range: vk::ImageSubresourceRange,
    source: Scope,
    destination: Scope,
    old_layout: vk::ImageLayout,
    new_layout: vk::ImageLayout,
) {
    let barriers = [vk::ImageMemoryBarrier2::default()
        .src_stage_mask(source.0)
        .src_access_mask(source.1)
        .dst_stage_mask(destination.0)
        .dst_access_mask(destination.1)
        .old_layout(old_layout)
        .new_layout(new_layout)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(range)];
    device.cmd_pipeline_barrier2(command_buffer, &vk::DependencyInfo::default().image_memory_barriers(&barriers));
}
