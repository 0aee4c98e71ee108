//! Synchronization2 barriers, declared as hazards and issued in batches.
//!
//! A [`Hazard`] names a resource and both sides of the dependency it needs, in words and as the
//! stages and accesses that say it to Vulkan:
//!
//! ```text
//! Hazard::buffer("cull.counters", &counters,
//!     side("cull writes", COMPUTE_SHADER, SHADER_STORAGE_WRITE),
//!     side("indirect arguments", DRAW_INDIRECT, INDIRECT_COMMAND_READ))
//! ```
//!
//! [`issue`] records any number of them as one `vkCmdPipelineBarrier2`: each barrier in the call
//! keeps its own stages and accesses, so batching costs no precision. The words are what
//! `render::frame` lists as the frame's barrier table.
//!
//! Buffer barriers rather than one global memory barrier: drivers treat them alike (a buffer
//! barrier is a memory barrier with a name), and the name lets synchronization validation and
//! RenderDoc say which buffer a hazard is on.

use ash::vk;
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use super::{Buffer, Device, Image};

/// One side of a hazard: the work, in words, and its stages and accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Side {
    pub words: &'static str,
    pub stage: Stage,
    pub access: Access,
}

pub const fn side(words: &'static str, stage: Stage, access: Access) -> Side {
    Side { words, stage, access }
}

/// A copy's writes: the earlier side of a read-back.
pub const COPY_WRITES: Side = side("the copy", Stage::COPY, Access::TRANSFER_WRITE);

/// The host reading mapped memory once the submission's fence has signalled.
pub const HOST_READS: Side = side("host reads after the fence", Stage::HOST, Access::HOST_READ);

/// Nothing to wait for: a fresh resource, or contents that are discarded.
pub const FRESH: Side = side("nothing (fresh or discarded contents)", Stage::NONE, Access::NONE);

/// What a hazard is on.
#[derive(Clone, Debug)]
pub enum Target {
    /// One logical buffer: a single buffer, or the chunks of one (a barrier each, in the same call).
    Buffers(Vec<vk::Buffer>),
    Image {
        raw: vk::Image,
        range: vk::ImageSubresourceRange,
        old_layout: vk::ImageLayout,
        new_layout: vk::ImageLayout,
    },
}

/// A dependency between earlier and later work on one resource.
#[derive(Clone, Debug)]
pub struct Hazard {
    pub resource: &'static str,
    pub target: Target,
    pub from: Side,
    pub to: Side,
}

impl Hazard {
    pub fn buffer(resource: &'static str, buffer: &Buffer, from: Side, to: Side) -> Hazard {
        Hazard { resource, target: Target::Buffers(vec![buffer.raw]), from, to }
    }

    /// One hazard over the chunks of one logical buffer.
    pub fn buffers<'b>(resource: &'static str, buffers: impl IntoIterator<Item = &'b Buffer>, from: Side, to: Side) -> Hazard {
        Hazard { resource, target: Target::Buffers(buffers.into_iter().map(|buffer| buffer.raw).collect()), from, to }
    }

    /// An image's whole range, moved from `layouts.0` to `layouts.1`.
    pub fn image(
        resource: &'static str,
        image: &Image,
        from: Side,
        to: Side,
        layouts: (vk::ImageLayout, vk::ImageLayout),
    ) -> Hazard {
        Hazard::raw_image(resource, image.raw, image.full_range(), from, to, layouts)
    }

    /// For images not owned as [`Image`] (swapchain images).
    pub fn raw_image(
        resource: &'static str,
        raw: vk::Image,
        range: vk::ImageSubresourceRange,
        from: Side,
        to: Side,
        (old_layout, new_layout): (vk::ImageLayout, vk::ImageLayout),
    ) -> Hazard {
        Hazard { resource, target: Target::Image { raw, range, old_layout, new_layout }, from, to }
    }

    /// The layout change, where there is one.
    pub fn layouts(&self) -> Option<(vk::ImageLayout, vk::ImageLayout)> {
        match self.target {
            Target::Image { old_layout, new_layout, .. } if old_layout != new_layout => Some((old_layout, new_layout)),
            _ => None,
        }
    }

    /// What the barrier prevents: reading before a write lands, or writing before earlier work is
    /// done with the resource. A layout change writes the image, so it counts as a write on the
    /// later side unless the earlier side already wrote.
    pub fn kind(&self) -> &'static str {
        let writes = |access: Access| {
            access.intersects(
                Access::SHADER_WRITE
                    | Access::SHADER_STORAGE_WRITE
                    | Access::TRANSFER_WRITE
                    | Access::COLOR_ATTACHMENT_WRITE
                    | Access::DEPTH_STENCIL_ATTACHMENT_WRITE
                    | Access::HOST_WRITE
                    | Access::ACCELERATION_STRUCTURE_WRITE_KHR
                    | Access::MEMORY_WRITE,
            )
        };
        let earlier = writes(self.from.access);
        let later = writes(self.to.access) || (self.layouts().is_some() && !earlier);
        match (earlier, later) {
            (true, true) => "write-after-write",
            (true, false) => "read-after-write",
            (false, true) => "write-after-read",
            (false, false) => "execution order",
        }
    }
}

/// Records `hazards` as one `vkCmdPipelineBarrier2` (nothing when there are none).
pub fn issue(device: &Device, command_buffer: vk::CommandBuffer, hazards: &[Hazard]) {
    let mut buffers = Vec::new();
    let mut images = Vec::new();
    for hazard in hazards {
        let (from, to) = (hazard.from, hazard.to);
        match &hazard.target {
            Target::Buffers(raws) => buffers.extend(raws.iter().map(|&raw| {
                vk::BufferMemoryBarrier2::default()
                    .src_stage_mask(from.stage)
                    .src_access_mask(from.access)
                    .dst_stage_mask(to.stage)
                    .dst_access_mask(to.access)
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .buffer(raw)
                    .offset(0)
                    .size(vk::WHOLE_SIZE)
            })),
            Target::Image { raw, range, old_layout, new_layout } => images.push(
                vk::ImageMemoryBarrier2::default()
                    .src_stage_mask(from.stage)
                    .src_access_mask(from.access)
                    .dst_stage_mask(to.stage)
                    .dst_access_mask(to.access)
                    .old_layout(*old_layout)
                    .new_layout(*new_layout)
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .image(*raw)
                    .subresource_range(*range),
            ),
        }
    }
    if buffers.is_empty() && images.is_empty() {
        return;
    }
    let dependency = vk::DependencyInfo::default().buffer_memory_barriers(&buffers).image_memory_barriers(&images);
    device.cmd_pipeline_barrier2(command_buffer, &dependency);
}
