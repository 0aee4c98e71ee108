//! The benchmark's bandwidth reference (compute): copies a buffer into another, as many bytes as the
//! skin pass streams (or touches), timed with timestamps. Copies past maxStorageBufferRange are split
//! into chunks, a source, a destination and a descriptor set each.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use crate::gpu::barrier::{self, side, Hazard};
use crate::gpu::commands::{self, CommandPool, Fence};
use crate::gpu::descriptors::{DescriptorPool, DescriptorSetLayout};
use crate::gpu::pipeline::Pipeline;
use crate::gpu::query::TimestampPool;
use crate::gpu::{self, Buffer, Check, Device};

pub const WORKGROUP_SIZE: u32 = 64;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CopyPush {
    count: u32,
    row_length: u32,
}

pub struct CopyPass {
    pipeline: Pipeline,
    set_layout: DescriptorSetLayout,
    device: Arc<Device>,
}

impl CopyPass {
    pub fn new(device: &Arc<Device>) -> gpu::Result<CopyPass> {
        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let compute = vk::ShaderStageFlags::COMPUTE;
        let set_layout = DescriptorSetLayout::new(device, "copy.set_layout", &[(0, storage, compute), (1, storage, compute)])?;
        let pipeline = Pipeline::compute(
            device,
            "copy",
            crate::render::shaders::COPY_COMP,
            &[&set_layout],
            std::mem::size_of::<CopyPush>() as u32,
            &[(0, WORKGROUP_SIZE)],
        )?;
        Ok(CopyPass { pipeline, set_layout, device: device.clone() })
    }

    /// Copies `bytes` (read `bytes`, written `bytes`) `repetitions` times, each its own submission,
    /// and returns each one's (GPU milliseconds from timestamps, wall milliseconds from submit to
    /// fence). On lavapipe the two agree on a fresh device; once graphics work has run on it, its
    /// timestamps around a lone dispatch read near zero while the wall clock does not, so the
    /// benchmark measures its copies first.
    pub fn measure(&self, bytes: u64, repetitions: u32) -> gpu::Result<Vec<(f64, f64)>> {
        let device = &self.device;
        let bytes = bytes.max(16).next_multiple_of(16);
        let alignment = device.limits().min_storage_buffer_offset_alignment.max(16);
        let chunk = (u64::from(device.limits().max_storage_buffer_range) / alignment * alignment).max(alignment);
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        // One source and one destination buffer per chunk: one binding's range each, and well under
        // maxMemoryAllocationSize (2 GiB on lavapipe), which a copy at 10,000 instances passes.
        let chunks: Vec<u64> = (0..bytes.div_ceil(chunk)).map(|index| (bytes - index * chunk).min(chunk)).collect();
        let mut sources = Vec::with_capacity(chunks.len());
        let mut destinations = Vec::with_capacity(chunks.len());
        for (index, &range) in chunks.iter().enumerate() {
            sources.push(Buffer::new(device, &format!("copy.source[{index}]"), range, usage, MemoryLocation::GpuOnly)?);
            destinations.push(Buffer::new(device, &format!("copy.destination[{index}]"), range, usage, MemoryLocation::GpuOnly)?);
        }
        let pool = DescriptorPool::for_sets(device, "copy.descriptor_pool", &[(&self.set_layout, chunks.len() as u32)])?;
        let mut sets = Vec::new();
        for (index, &range) in chunks.iter().enumerate() {
            let set = pool.allocate(&self.set_layout, &format!("copy.set[{index}]"))?;
            let infos = [[sources[index].descriptor()], [destinations[index].descriptor()]];
            let writes: Vec<_> = infos
                .iter()
                .enumerate()
                .map(|(binding, info)| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(set)
                        .dst_binding(binding as u32)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(info)
                })
                .collect();
            unsafe { device.raw.update_descriptor_sets(&writes, &[]) };
            sets.push((set, range));
        }

        let timestamps = TimestampPool::new(device, "copy.timestamps", 2)?;
        let command_pool = CommandPool::new(device, "copy.command_pool", vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER)?;
        let command_buffer = command_pool.allocate("copy.command_buffer", 1)?[0];
        let fence = Fence::new(device, "copy.fence", false)?;
        let max_groups_x = device.limits().max_compute_work_group_count[0].max(1);
        // copy.destination: the previous repetition's writes -> these writes (write-after-write).
        let writes = side("the copy's storage writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);
        let reuse = [Hazard::buffers("copy.destination", &destinations, writes, writes)];
        let mut milliseconds = Vec::with_capacity(repetitions as usize);
        for _ in 0..repetitions {
            unsafe { device.raw.reset_command_buffer(command_buffer, vk::CommandBufferResetFlags::empty()) }
                .check("vkResetCommandBuffer")?;
            commands::begin(device, command_buffer)?;
            timestamps.reset(command_buffer);
            barrier::issue(device, command_buffer, &reuse);
            timestamps.write(command_buffer, Stage::ALL_COMMANDS, 0);
            device.begin_label(command_buffer, c"copy");
            self.pipeline.bind(command_buffer);
            for &(set, range) in &sets {
                let count = (range / 16) as u32;
                let groups = count.div_ceil(WORKGROUP_SIZE);
                let groups_x = groups.min(max_groups_x);
                let rows = groups.div_ceil(groups_x);
                self.pipeline.bind_sets(command_buffer, 0, &[set]);
                let push = CopyPush { count, row_length: groups_x * WORKGROUP_SIZE };
                self.pipeline.push_constants(command_buffer, vk::ShaderStageFlags::COMPUTE, &push);
                device.cmd_dispatch(command_buffer, (groups_x, rows, 1));
            }
            device.end_label(command_buffer);
            timestamps.write(command_buffer, Stage::ALL_COMMANDS, 1);
            commands::end(device, command_buffer)?;
            let command_buffers = [command_buffer];
            let submit = vk::SubmitInfo::default().command_buffers(&command_buffers);
            let submitted = std::time::Instant::now();
            unsafe { device.raw.queue_submit(device.queue, &[submit], fence.raw) }.check("vkQueueSubmit")?;
            fence.wait()?;
            let wall = submitted.elapsed().as_secs_f64() * 1e3;
            fence.reset()?;
            let mut ticks = [0u64; 2];
            unsafe { device.raw.get_query_pool_results(timestamps.raw, 0, &mut ticks, vk::QueryResultFlags::TYPE_64) }
                .check("vkGetQueryPoolResults")?;
            milliseconds.push((ticks[1].saturating_sub(ticks[0]) as f64 * timestamps.period_ns / 1e6, wall));
        }
        Ok(milliseconds)
    }
}
