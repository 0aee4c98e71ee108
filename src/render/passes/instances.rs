//! The instances pass (instances.comp.glsl): the records the CPU changed this frame copied in from
//! the slot's upload buffer, then one invocation per instance making this frame's instance data
//! (clip times, crossfade, layer, motion flags) from its record and the frame's clock.
//!
//! Reads: `instances.records`, `instances.clips`, `instances.motion`, the slot's
//! `instances.upload[slot]` (copied).
//! Writes: `instances.records` (the copy; the pass clears a teleport's flag), `instances.data`
//! (read by cull, palette, the vertex stages and the forward pass: `frame.rs`).

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use crate::gpu::barrier::{self, side, Hazard};
use crate::gpu::descriptors::{DescriptorPool, DescriptorSetLayout, Resource};
use crate::gpu::pipeline::Pipeline;
use crate::gpu::{self, Buffer, Device};
use crate::render::instances::ClipTables;
use crate::render::shader_types::{InstanceData, InstanceRecord, InstancesPush};

const WORKGROUP_SIZE: u32 = 64;

/// The instances pass's writes: records (a teleport's flag cleared) and this frame's data.
const WRITES: barrier::Side = side(
    "the instances pass",
    Stage::COMPUTE_SHADER,
    Access::from_raw(Access::SHADER_STORAGE_READ.as_raw() | Access::SHADER_STORAGE_WRITE.as_raw()),
);

pub struct InstancePass {
    /// Each instance's record (`InstanceRecord`): what lives on the GPU between frames.
    pub records: Buffer,
    /// Each instance's data this frame (`InstanceData`), last frame's until the pass replaces it.
    pub data: Buffer,
    /// Every model's clips (`ClipRecord`), which the records name.
    pub clips: Buffer,
    /// Their animations' root motion samples (`ClipTables::motion`).
    pub motion: Buffer,
    pipeline: Pipeline,
    set: vk::DescriptorSet,
    _pool: DescriptorPool,
    _set_layout: DescriptorSetLayout,
    device: Arc<Device>,
}

impl InstancePass {
    pub fn new(device: &Arc<Device>, instance_count: u32, clips: &ClipTables) -> gpu::Result<InstancePass> {
        use vk::BufferUsageFlags as Usage;
        let count = u64::from(instance_count.max(1));
        let records = Buffer::new(
            device,
            "instances.records",
            count * std::mem::size_of::<InstanceRecord>() as u64,
            Usage::STORAGE_BUFFER | Usage::TRANSFER_DST | Usage::TRANSFER_SRC,
            MemoryLocation::GpuOnly,
        )?;
        let data = Buffer::new(
            device,
            "instances.data",
            count * std::mem::size_of::<InstanceData>() as u64,
            Usage::STORAGE_BUFFER | Usage::TRANSFER_SRC,
            MemoryLocation::GpuOnly,
        )?;
        let motion = Buffer::with_data(device, "instances.motion", Usage::STORAGE_BUFFER, bytemuck::cast_slice(&clips.motion))?;
        let clips = Buffer::with_data(device, "instances.clips", Usage::STORAGE_BUFFER, bytemuck::cast_slice(&clips.records))?;
        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let compute = vk::ShaderStageFlags::COMPUTE;
        let bindings = [(0, storage, compute), (1, storage, compute), (2, storage, compute), (3, storage, compute)];
        let set_layout = DescriptorSetLayout::new(device, "instances.set_layout", &bindings)?;
        let pipeline = Pipeline::compute(
            device,
            "instances",
            crate::render::shaders::INSTANCES_COMP,
            &[&set_layout],
            std::mem::size_of::<InstancesPush>() as u32,
            &[(0, WORKGROUP_SIZE)],
        )?;
        let resources = [
            (0, Resource::StorageBuffer(&records)),
            (1, Resource::StorageBuffer(&clips)),
            (2, Resource::StorageBuffer(&data)),
            (3, Resource::StorageBuffer(&motion)),
        ];
        let (pool, set) = DescriptorPool::with_one_set(device, "instances", &set_layout, &resources)?;
        Ok(InstancePass {
            records,
            data,
            clips,
            motion,
            pipeline,
            set,
            _pool: pool,
            _set_layout: set_layout,
            device: device.clone(),
        })
    }

    /// Before the upload: last frame's instances pass read the records (and cleared flags in them).
    pub fn upload_hazards(&self) -> Vec<Hazard> {
        vec![Hazard::buffer("instances.records", &self.records, WRITES, barrier::COPY_WRITES)]
    }

    /// Before the pass: the upload into the records; last frame's readers of the data (and this
    /// pass's own writes, which it reads back as last frame's).
    pub fn hazards_before(&self) -> Vec<Hazard> {
        let readers = side(
            "last frame's instances pass, cull, palette, vertex and fragment reads",
            Stage::COMPUTE_SHADER | Stage::VERTEX_SHADER | Stage::FRAGMENT_SHADER,
            Access::SHADER_STORAGE_WRITE,
        );
        vec![
            Hazard::buffer("instances.records", &self.records, barrier::COPY_WRITES, WRITES),
            Hazard::buffer("instances.data", &self.data, readers, WRITES),
        ]
    }

    /// After: the cull and palette passes, the vertex strategy's and the forward pass's shaders
    /// read the data.
    pub fn hazards_after(&self) -> Vec<Hazard> {
        let readers = side(
            "cull, palette, vertex and fragment reads",
            Stage::COMPUTE_SHADER | Stage::VERTEX_SHADER | Stage::FRAGMENT_SHADER,
            Access::SHADER_STORAGE_READ,
        );
        vec![Hazard::buffer("instances.data", &self.data, WRITES, readers)]
    }

    /// Copies the changed records (`regions`, from the slot's upload buffer) into `records`.
    pub fn record_upload(&self, command_buffer: vk::CommandBuffer, upload: &Buffer, regions: &[vk::BufferCopy]) {
        if !regions.is_empty() {
            unsafe { self.device.raw.cmd_copy_buffer(command_buffer, upload.raw, self.records.raw, regions) };
        }
    }

    /// One invocation per instance, in rows where the instances pass maxComputeWorkGroupCount[0]
    /// workgroups.
    /// `(clock, flags, area)`: the frame's clock from the epoch, `INSTANCES_*` flags, the walkers' area.
    pub fn record(&self, command_buffer: vk::CommandBuffer, count: u32, (clock, flags, area): (f32, u32, [f32; 4])) {
        let groups = count.div_ceil(WORKGROUP_SIZE).max(1);
        let groups_x = groups.min(self.device.limits().max_compute_work_group_count[0].max(1));
        let rows = groups.div_ceil(groups_x);
        let push = InstancesPush { count, row_length: groups_x * WORKGROUP_SIZE, clock, flags, area };
        self.device.begin_label(command_buffer, c"instances");
        self.pipeline.bind(command_buffer);
        self.pipeline.bind_sets(command_buffer, 0, &[self.set]);
        self.pipeline.push_constants(command_buffer, vk::ShaderStageFlags::COMPUTE, &push);
        self.device.cmd_dispatch(command_buffer, (groups_x, rows, 1));
        self.device.end_label(command_buffer);
    }
}
