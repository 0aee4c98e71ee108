//! The per-frame-in-flight resources: what the CPU writes for a frame (uniforms, the instance
//! records that changed, the `cpu` strategy's vertices), the sets that point at them, the command buffer,
//! its fence and semaphore, its timestamps and the cull counts copied back for it.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use super::instances::Upload;
use super::model_buffers::GpuModel;
use super::passes::cull::CullInputs;
use super::passes::palette::PaletteInputs;
use super::shader_types::{CullCounters, FrameUniforms, InstanceRecord};
use super::{Pass, Passes, Strategy};
use crate::gpu::commands::{Fence, Semaphore};
use crate::gpu::query::{SamplesQuery, TimestampPool};
use crate::gpu::{self, Buffer, Device};

/// The per-frame-in-flight resources.
pub struct FrameSlot {
    pub uniforms: Buffer,
    /// The instance records that changed for this slot's frame (`upload`; none in a steady
    /// scene), copied into `instances.records` by the instances pass. Grown to what a frame
    /// writes: every record on the first frame.
    pub upload: Buffer,
    /// Where each run of them goes in `instances.records`.
    pub upload_regions: Vec<vk::BufferCopy>,
    /// The instances pass's clock (seconds from the renderer's epoch), flags and walkers' area
    /// (`WalkArea::packed`) for this frame.
    pub instances_push: (f32, u32, [f32; 4]),
    /// Per morph target, a weight set by hand: (weight, 1 when it holds), as the palette pass reads it.
    pub morph_overrides: Buffer,
    pub command_buffer: vk::CommandBuffer,
    /// Signalled when this slot's last submission finished; its buffers may then be rewritten.
    pub fence: Fence,
    pub image_available: Semaphore,
    pub timestamps: TimestampPool,
    /// The samples the forward pass's model draws wrote (the hardware rasterizer's share, for the
    /// bench), where the device counts them exactly.
    pub samples: Option<SamplesQuery>,
    /// The `cpu` strategy's skinned vertices for this slot, written by the CPU after the fence.
    pub cpu_skinned: Option<Buffer>,
    /// Beside it, where each of those vertices was last frame (12 bytes a vertex), for the motion
    /// vectors (`history::FrameHistory::cpu_previous_positions`).
    pub cpu_previous: Option<Buffer>,
    pub cull_set: vk::DescriptorSet,
    /// `cull.counters` copied out at the end of this slot's frame, read after its fence.
    pub counts_readback: Buffer,
    pub palette_set: vk::DescriptorSet,
    pub frame_set: vk::DescriptorSet,
}

/// The bytes a slot's upload buffer holds at first (1,024 records); it grows where a frame's
/// records need more (the first frame's, every record).
const UPLOAD_ROOM: u64 = 64 * 1024;

/// Which slot, and what its buffers are sized for.
pub struct SlotSetup {
    pub slot: usize,
    pub command_buffer: vk::CommandBuffer,
    pub strategy: Strategy,
    /// Every instance's vertices in all (the `cpu` strategy's buffers).
    pub vertices: u64,
}

impl FrameSlot {
    pub fn new(device: &Arc<Device>, setup: &SlotSetup, gpu_model: &GpuModel, passes: &Passes) -> gpu::Result<FrameSlot> {
        let Passes { cull, palette, forward, shadow, trace, .. } = passes;
        use vk::BufferUsageFlags as Usage;
        let SlotSetup { slot, command_buffer, strategy, vertices } = *setup;
        let uniforms = Buffer::new(
            device,
            &format!("frame.uniforms[{slot}]"),
            std::mem::size_of::<FrameUniforms>() as u64,
            Usage::UNIFORM_BUFFER,
            MemoryLocation::CpuToGpu,
        )?;
        let instances = &passes.instances.data;
        let mut morph_overrides = Buffer::new(
            device,
            &format!("frame.morph_overrides[{slot}]"),
            u64::from(gpu_model.most_targets()) * 8,
            Usage::STORAGE_BUFFER,
            MemoryLocation::CpuToGpu,
        )?;
        morph_overrides.write(0, &override_records(&[], gpu_model.most_targets()))?;
        let palette_set = palette.frame_set(
            slot,
            &PaletteInputs {
                channels: &gpu_model.channels,
                key_times: &gpu_model.key_times,
                key_values: &gpu_model.key_values,
                joints: &gpu_model.joints,
                inverse_binds: &gpu_model.inverse_binds,
                instances,
                palette_list: &cull.palette_list,
                counters: &cull.counters,
                morph_targets: &gpu_model.morph_targets,
                morph_overrides: &morph_overrides,
                motions: &cull.motions,
                models: &gpu_model.models,
                animations: &gpu_model.animations,
                instance_slots: &cull.instance_slots,
            },
        )?;
        let cull_set = cull.frame_set(
            slot,
            &CullInputs {
                frame_uniforms: &uniforms,
                instances,
                animations: &gpu_model.animations,
                cells: &gpu_model.cells,
                mesh_ranges: &gpu_model.mesh_ranges,
                models: &gpu_model.models,
                // The records whose masks the cull pass writes, with `--shadows ray`.
                trace_instances: trace.as_ref().map_or(&cull.unused, |trace| &trace.instances),
                // The triangle pass's views' commands, which the cull pass writes.
                culled_draws: passes
                    .triangles
                    .as_ref()
                    .map_or([&cull.unused, &cull.unused], |triangles| triangles.culled_draws(&cull.unused)),
            },
        )?;
        let frame_set = forward.frame_set(
            slot,
            (&uniforms, &shadow.depth, trace.as_ref().map(|trace| trace.tlas.raw)),
            (&gpu_model.surfaces, instances),
            (&gpu_model.models, &cull.instance_slots),
        )?;
        let mut cpu_skinned = match strategy {
            Strategy::Cpu => Some(Buffer::new(
                device,
                &format!("cpu_skinned_vertices[{slot}]"),
                vertices.max(1) * std::mem::size_of::<crate::render::shader_types::SkinnedVertex>() as u64,
                Usage::VERTEX_BUFFER | device.build_input_usage(),
                MemoryLocation::CpuToGpu,
            )?),
            _ => None,
        };
        // Zeros until the CPU first writes them: acceleration structures built from them stay valid.
        if let (Some(buffer), Some(_)) = (&mut cpu_skinned, trace) {
            buffer.mapped_values::<u32>()?.fill(0);
        }
        let cpu_previous = match strategy {
            Strategy::Cpu => Some(Buffer::new(
                device,
                &format!("cpu_previous_positions[{slot}]"),
                vertices.max(1) * 12,
                Usage::VERTEX_BUFFER,
                MemoryLocation::CpuToGpu,
            )?),
            _ => None,
        };
        let counts_readback = Buffer::new(
            device,
            &format!("cull.counters_readback[{slot}]"),
            std::mem::size_of::<CullCounters>() as u64,
            Usage::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
        )?;
        Ok(FrameSlot {
            cpu_skinned,
            cpu_previous,
            cull_set,
            counts_readback,
            uniforms,
            // Room for 1,024 records from the start: a frame's edits seldom need more.
            upload: Buffer::new(
                device,
                &format!("instances.upload[{slot}]"),
                UPLOAD_ROOM,
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
            )?,
            upload_regions: Vec::new(),
            instances_push: (0.0, 0, [0.0; 4]),
            morph_overrides,
            command_buffer,
            fence: Fence::new(device, &format!("frame.fence[{slot}]"), true)?,
            image_available: Semaphore::new(device, &format!("frame.image_available[{slot}]"))?,
            timestamps: TimestampPool::new(device, &format!("frame.timestamps[{slot}]"), Pass::ALL.len() as u32 + 1)?,
            samples: match device.occlusion_query_precise {
                true => Some(SamplesQuery::new(device, &format!("frame.samples[{slot}]"))?),
                false => None,
            },
            palette_set,
            frame_set,
        })
    }
}

impl FrameSlot {
    /// Writes `upload`'s records into the slot's upload buffer (grown where they do not fit; after
    /// the slot's fence) and notes where each run goes.
    pub fn write_upload(&mut self, device: &Arc<Device>, slot: usize, upload: &Upload) -> gpu::Result<()> {
        let record = std::mem::size_of::<InstanceRecord>() as u64;
        let bytes = upload.records.len() as u64 * record;
        self.upload_regions.clear();
        // Grown for a frame that writes more than it holds (the first: every record), and back to
        // its first size on the slot's next frame that fits that: a million records' 64 MB are
        // not kept for the rare frame that writes them all.
        let room = bytes.next_power_of_two().max(UPLOAD_ROOM);
        if self.upload.size < bytes || (room == UPLOAD_ROOM && self.upload.size > UPLOAD_ROOM) {
            self.upload = Buffer::new(
                device,
                &format!("instances.upload[{slot}]"),
                room,
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
            )?;
        }
        if bytes == 0 {
            return Ok(());
        }
        self.upload.write(0, &upload.records)?;
        let mut offset = 0;
        for &(first, count) in &upload.runs {
            let size = u64::from(count) * record;
            self.upload_regions.push(vk::BufferCopy { src_offset: offset, dst_offset: u64::from(first) * record, size });
            offset += size;
        }
        Ok(())
    }
}

/// The palette pass's override records for `target_count` targets: (weight, 1) where one is set by
/// hand, (0, 0) where the clips hold.
pub fn override_records(overrides: &[Option<f32>], target_count: u32) -> Vec<[f32; 2]> {
    (0..target_count as usize)
        .map(|target| match overrides.get(target).copied().flatten() {
            Some(weight) => [weight, 1.0],
            None => [0.0, 0.0],
        })
        .collect()
}
