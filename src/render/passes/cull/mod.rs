//! Cull pass (compute): per instance, its animated bounds at this frame against the camera frustum
//! and the light's shadow volume.
//!
//! Reads: `frame.uniforms[slot]` (planes), `instances.data`, `model.animations`, `model.cells`,
//! `model.mesh_ranges`. Writes (and owns): `cull.counters` (reset first; then the palette and skin
//! passes' indirect dispatch arguments and the draw counts), `cull.skin_list`, `cull.camera_draws`,
//! `cull.light_draws`, `cull.debug_boxes`, `cull.work_groups` (the work tables: each kept
//! instance's vertex and triangle groups at its levels), `cull.palette_list` (the instances whose
//! palettes are computed this frame), `cull.placements` (where each instance's skinned vertices
//! are this frame), `cull.pools` (the pools' fill and budget) and, where the triangle pass runs,
//! its views' culled draws; and reads and writes `cull.palette_frames` (the frame each
//! instance's palette is from: animation LOD). Where the skinned vertices are pooled it runs three
//! times (count, budget, place: cull.comp). Its hazards: [`CullPass::reset_hazards`],
//! [`CullPass::hazards_before`], [`CullPass::hazards_after`].

use std::sync::Arc;

use ash::vk;

mod animation_lod;
mod levels;

pub use animation_lod::{animation_interval, computes_palette, reference_interval, ANIMATION_LOD_STEPS};
pub use levels::{animated_box, box_in_volume, hand_set, reference_levels, reference_visibility, LevelChoice, Levels, Seen};

use crate::gpu::barrier::{side, Hazard, Side};
use crate::gpu::descriptors::{DescriptorPool, DescriptorSetLayout, Resource};
use crate::gpu::pipeline::Pipeline;
use crate::gpu::{self, Buffer, Device};
use crate::render::chunks::{InstanceSlots, Pools, ROW_WORKGROUPS};
use crate::render::passes::triangles;
use crate::render::shader_types::{CullCounters, CullPush, CullRun, Table, WorkGroup, DISTANCE_BANDS, MAX_CHUNKS};
use crate::render::{Setup, FRAMES_IN_FLIGHT};
use gpu_allocator::MemoryLocation;
use vk::{AccessFlags2 as Access, BufferUsageFlags as Usage, PipelineStageFlags2 as Stage};

/// Instances per workgroup.
pub const WORKGROUP_SIZE: u32 = 64;

pub const BINDING_FRAME_UNIFORMS: u32 = 0;
pub const BINDING_INSTANCES: u32 = 3;
pub const BINDING_ANIMATIONS: u32 = 4;
pub const BINDING_CELLS: u32 = 5;
pub const BINDING_MESH_RANGES: u32 = 6;
pub const BINDING_COUNTERS: u32 = 7;
pub const BINDING_SKIN_LIST: u32 = 8;
pub const BINDING_CAMERA_DRAWS: u32 = 9;
pub const BINDING_LIGHT_DRAWS: u32 = 10;
pub const BINDING_DEBUG_BOXES: u32 = 11;
pub const BINDING_WORK_GROUPS: u32 = 12;
pub const BINDING_PALETTE_FRAMES: u32 = 13;
pub const BINDING_PALETTE_LIST: u32 = 14;
pub const BINDING_MOTIONS: u32 = 15;
pub const BINDING_MODELS: u32 = 16;
pub const BINDING_INSTANCE_SLOTS: u32 = 17;
pub const BINDING_DRAW_COUNTS: u32 = 18;
pub const BINDING_TRACE_INSTANCES: u32 = 19;
pub const BINDING_POOLS: u32 = 20;
pub const BINDING_PLACEMENTS: u32 = 21;
pub const BINDING_CULLED_CAMERA_DRAWS: u32 = 22;
pub const BINDING_CULLED_LIGHT_DRAWS: u32 = 23;

/// Bytes of `cull.pools` (cull.comp: `Pools`): per chunk, three fills and two cutoffs; per chunk and
/// distance band, three demands.
const POOLS_BYTES: u64 = 4 * (5 * MAX_CHUNKS as u64 + 3 * (MAX_CHUNKS * DISTANCE_BANDS) as u64);

pub struct CullPass {
    pub pipeline: Pipeline,
    pub set_layout: DescriptorSetLayout,
    /// The counts as indirect arguments: palette and skin dispatches, per-chunk draw counts.
    pub counters: Buffer,
    /// The instances to animate and skin, in the order found.
    pub skin_list: Buffer,
    /// Draw commands, run by run and mesh by mesh (`DrawRun`: room for every instance).
    pub camera_draws: Buffer,
    pub light_draws: Buffer,
    /// Per run, the camera's and the light's live commands: the draws' counts (zeroed before the
    /// pass).
    pub draw_counts: Buffer,
    /// Each instance's slot (`InstanceSlot`), fixed at creation: where it lives in its chunk, its
    /// run. The palette pass and the vertex shaders read it too.
    pub instance_slots: Buffer,
    /// Each kept instance's world box, for the debug views.
    pub debug_boxes: Buffer,
    /// The work tables (`Table`), one section each with `Pools::table_entries`: what the skin pass
    /// and the triangle pass's runs each take in one dispatch.
    pub work_groups: Buffer,
    /// The pools it places instances in and the tables' lengths (`MemoryPlan::pools`).
    pub pools: Pools,
    /// The pools' fill, per chunk and distance band demand, and budget (zeroed before the pass).
    pub pool_state: Buffer,
    /// Per instance, where its skinned vertices are this frame and their level (`NOT_PLACED`: not
    /// skinned).
    pub placements: Buffer,
    /// Per instance, the frame (`CullPush::palette_frame`) whose palette its slots hold: zeroed at
    /// creation (none), then the cull pass's own across frames.
    pub palette_frames: Buffer,
    /// The kept instances whose palettes the palette pass computes this frame.
    pub palette_list: Buffer,
    /// Per instance, the frame it was last kept in and whether it moves by itself this frame
    /// (common.glsl: `MOTION_MOVING`): the cull pass's own across frames, read by the palette pass
    /// (which then keeps the previous palette) and the forward vertex shaders (which skin from it).
    pub motions: Buffer,
    /// What binding 19 holds with the shadow map, and bindings 22 and 23 without the triangle pass's
    /// view: a small buffer, never written (the pipeline's TRACE_SHADOWS constant is off; the
    /// push's `culled_views` bit is clear).
    pub unused: Buffer,
    /// Its per-frame sets, one a frame in flight.
    frame_pool: DescriptorPool,
    device: Arc<Device>,
}

/// The per-frame buffers one cull dispatch binds besides its own.
pub struct CullInputs<'a> {
    pub frame_uniforms: &'a Buffer,
    pub instances: &'a Buffer,
    pub animations: &'a Buffer,
    pub cells: &'a Buffer,
    pub mesh_ranges: &'a Buffer,
    /// Each model's record (`ModelRecord`).
    pub models: &'a Buffer,
    /// The trace pass's instance records (`--shadows ray`), or `CullPass::unused`.
    pub trace_instances: &'a Buffer,
    /// The triangle pass's views' culled draws (camera, light), or `CullPass::unused`.
    pub culled_draws: [&'a Buffer; 2],
}

/// The counters' reset (`vkCmdUpdateBuffer`: a transfer command, which sync2 files under the
/// clear stage; all transfer stages cover it on every layer version).
const RESET: Side = side("the reset", Stage::ALL_TRANSFER, Access::TRANSFER_WRITE);

/// Cull writes, the earlier side of every hazard on its outputs.
const CULL_WRITES: Side = side("cull writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);

/// The width of the rows of a work table's dispatch, for a table of at most `most_groups` groups:
/// as narrow as `dispatch_rows` rows allow (the last row's workgroups past the table start and
/// leave at once), and at least 64 (fewer rows). Past `ROW_WORKGROUPS` no table fits the
/// dispatch; `MemoryPlan` refuses such counts first.
pub fn table_row(most_groups: u64, dispatch_rows: u32) -> u32 {
    most_groups.div_ceil(u64::from(dispatch_rows.max(1))).clamp(64, u64::from(ROW_WORKGROUPS)) as u32
}

impl CullPass {
    /// The pass and its outputs, for the instances `slots` places, in `pools` (the work tables'
    /// lengths among them), and the skin pass's workgroups of `skin_workgroup` vertices.
    /// `tracing`: it writes the masks of the trace pass's instance records.
    pub fn new(
        device: &Arc<Device>,
        slots: &InstanceSlots,
        pools: Pools,
        skin_workgroup: u32,
        tracing: bool,
    ) -> gpu::Result<CullPass> {
        let instance_count = slots.slots.len() as u32;
        let command_bytes = slots.commands.max(1) * std::mem::size_of::<vk::DrawIndexedIndirectCommand>() as u64;
        // TRANSFER_SRC: tests and debugging read them back.
        let indirect_storage = Usage::STORAGE_BUFFER | Usage::INDIRECT_BUFFER | Usage::TRANSFER_SRC;
        let storage = Usage::STORAGE_BUFFER | Usage::TRANSFER_SRC;
        let buffer = |name: &str, size: u64, usage| Buffer::new(device, name, size, usage, MemoryLocation::GpuOnly);
        let counters =
            buffer("cull.counters", std::mem::size_of::<CullCounters>() as u64, indirect_storage | Usage::TRANSFER_DST)?;
        let skin_list = buffer("cull.skin_list", 4 * u64::from(instance_count), storage)?;
        let camera_draws = buffer("cull.camera_draws", command_bytes, indirect_storage)?;
        let light_draws = buffer("cull.light_draws", command_bytes, indirect_storage)?;
        let draw_counts = buffer("cull.draw_counts", 8 * slots.runs.len().max(1) as u64, indirect_storage | Usage::TRANSFER_DST)?;
        let instance_slots = Buffer::with_data(device, "cull.instance_slots", storage, bytemuck::cast_slice(&slots.slots))?;
        let debug_boxes = buffer("cull.debug_boxes", 32 * u64::from(instance_count), storage)?;
        let groups: u64 = pools.table_entries.iter().sum();
        let work_groups = buffer("cull.work_groups", groups.max(1) * std::mem::size_of::<WorkGroup>() as u64, storage)?;
        let zeros = vec![0u8; 4 * instance_count as usize];
        let palette_frames = Buffer::with_data(device, "cull.palette_frames", storage, &zeros)?;
        let palette_list = buffer("cull.palette_list", 4 * u64::from(instance_count), storage)?;
        let motions = Buffer::with_data(device, "cull.motions", storage, &zeros)?;
        let unused = buffer("cull.unused", crate::render::chunks::trace::INSTANCE_BYTES, storage)?;
        let pool_state = buffer("cull.pools", POOLS_BYTES, storage | Usage::TRANSFER_DST)?;
        let placements = buffer("cull.placements", 8 * u64::from(instance_count), storage)?;

        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let compute = vk::ShaderStageFlags::COMPUTE;
        let mut bindings = vec![(BINDING_FRAME_UNIFORMS, vk::DescriptorType::UNIFORM_BUFFER, compute)];
        for binding in BINDING_INSTANCES..=BINDING_CULLED_LIGHT_DRAWS {
            bindings.push((binding, storage, compute));
        }
        let set_layout = DescriptorSetLayout::new(device, "cull.set_layout", &bindings)?;
        let pipeline = Pipeline::compute(
            device,
            "cull",
            crate::render::shaders::CULL_COMP,
            &[&set_layout],
            std::mem::size_of::<CullPush>() as u32,
            &[
                (0, WORKGROUP_SIZE),
                (1, crate::render::passes::palette::WORKGROUP_SIZE),
                (2, skin_workgroup),
                (3, triangles::WORKGROUP_SIZE),
                (4, u32::from(tracing)),
                (5, u32::from(pools.pooled)),
            ],
        )?;
        let frame_pool = DescriptorPool::for_sets(device, "cull.pool", &[(&set_layout, FRAMES_IN_FLIGHT as u32)])?;
        Ok(CullPass {
            frame_pool,
            pipeline,
            set_layout,
            counters,
            skin_list,
            camera_draws,
            light_draws,
            draw_counts,
            instance_slots,
            debug_boxes,
            work_groups,
            pools,
            pool_state,
            placements,
            palette_frames,
            palette_list,
            motions,
            unused,
            device: device.clone(),
        })
    }

    /// Frame slot `slot`'s set over its `inputs`.
    pub fn frame_set(&self, slot: usize, inputs: &CullInputs<'_>) -> gpu::Result<vk::DescriptorSet> {
        let set = self.frame_pool.allocate(&self.set_layout, &format!("cull.set[{slot}]"))?;
        crate::gpu::descriptors::write_set(
            &self.device,
            set,
            &[
                (BINDING_FRAME_UNIFORMS, Resource::UniformBuffer(inputs.frame_uniforms)),
                (BINDING_INSTANCES, Resource::StorageBuffer(inputs.instances)),
                (BINDING_ANIMATIONS, Resource::StorageBuffer(inputs.animations)),
                (BINDING_CELLS, Resource::StorageBuffer(inputs.cells)),
                (BINDING_MESH_RANGES, Resource::StorageBuffer(inputs.mesh_ranges)),
                (BINDING_MODELS, Resource::StorageBuffer(inputs.models)),
                (BINDING_COUNTERS, Resource::StorageBuffer(&self.counters)),
                (BINDING_SKIN_LIST, Resource::StorageBuffer(&self.skin_list)),
                (BINDING_CAMERA_DRAWS, Resource::StorageBuffer(&self.camera_draws)),
                (BINDING_LIGHT_DRAWS, Resource::StorageBuffer(&self.light_draws)),
                (BINDING_DEBUG_BOXES, Resource::StorageBuffer(&self.debug_boxes)),
                (BINDING_WORK_GROUPS, Resource::StorageBuffer(&self.work_groups)),
                (BINDING_PALETTE_FRAMES, Resource::StorageBuffer(&self.palette_frames)),
                (BINDING_PALETTE_LIST, Resource::StorageBuffer(&self.palette_list)),
                (BINDING_MOTIONS, Resource::StorageBuffer(&self.motions)),
                (BINDING_INSTANCE_SLOTS, Resource::StorageBuffer(&self.instance_slots)),
                (BINDING_DRAW_COUNTS, Resource::StorageBuffer(&self.draw_counts)),
                (BINDING_TRACE_INSTANCES, Resource::StorageBuffer(inputs.trace_instances)),
                (BINDING_POOLS, Resource::StorageBuffer(&self.pool_state)),
                (BINDING_PLACEMENTS, Resource::StorageBuffer(&self.placements)),
                (BINDING_CULLED_CAMERA_DRAWS, Resource::StorageBuffer(inputs.culled_draws[0])),
                (BINDING_CULLED_LIGHT_DRAWS, Resource::StorageBuffer(inputs.culled_draws[1])),
            ],
        );
        Ok(set)
    }

    /// Before the counters' reset: last frame's readers are done with them.
    pub fn reset_hazards(&self) -> Vec<Hazard> {
        let readers = side(
            "last frame's indirect reads, palette read and copy-out",
            Stage::DRAW_INDIRECT | Stage::COMPUTE_SHADER | Stage::COPY,
            Access::NONE,
        );
        vec![
            Hazard::buffers("cull.counters, draw_counts", [&self.counters, &self.draw_counts], readers, RESET),
            Hazard::buffer(
                "cull.pools",
                &self.pool_state,
                side("last frame's cull runs", Stage::COMPUTE_SHADER, Access::NONE),
                RESET,
            ),
        ]
    }

    /// Zeroes the counts and the pools, and writes the constant parts of the indirect arguments.
    pub fn record_reset(&self, command_buffer: vk::CommandBuffer, reset: &CullCounters) {
        unsafe {
            self.device.raw.cmd_update_buffer(command_buffer, self.counters.raw, 0, bytemuck::bytes_of(reset));
            self.device.raw.cmd_fill_buffer(command_buffer, self.draw_counts.raw, 0, vk::WHOLE_SIZE, 0);
            self.device.raw.cmd_fill_buffer(command_buffer, self.pool_state.raw, 0, vk::WHOLE_SIZE, 0);
        }
    }

    /// Before the pass: the reset landed, and last frame's readers of the outputs are done.
    pub fn hazards_before(&self) -> Vec<Hazard> {
        let counting =
            side("cull's atomic counting", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_READ | Access::SHADER_STORAGE_WRITE);
        let readers = side(
            "last frame's compute, indirect and debug-view reads",
            Stage::COMPUTE_SHADER | Stage::DRAW_INDIRECT | Stage::VERTEX_SHADER,
            Access::NONE,
        );
        vec![
            Hazard::buffers(
                "cull.counters, draw_counts, pools",
                [&self.counters, &self.draw_counts, &self.pool_state],
                RESET,
                counting,
            ),
            Hazard::buffers(
                "cull.skin_list, camera_draws, light_draws, debug_boxes, work_groups, palette_list, placements",
                [
                    &self.skin_list,
                    &self.camera_draws,
                    &self.light_draws,
                    &self.debug_boxes,
                    &self.work_groups,
                    &self.palette_list,
                    &self.placements,
                ],
                readers,
                CULL_WRITES,
            ),
            // Read and written again each frame: last frame's writes are this frame's reads.
            Hazard::buffer(
                "cull.palette_frames",
                &self.palette_frames,
                side("last frame's cull writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE),
                side(
                    "cull's reads and writes",
                    Stage::COMPUTE_SHADER,
                    Access::SHADER_STORAGE_READ | Access::SHADER_STORAGE_WRITE,
                ),
            ),
            Hazard::buffer(
                "cull.motions",
                &self.motions,
                side(
                    "last frame's cull writes, palette, vertex-shader and raster-resolve reads",
                    Stage::COMPUTE_SHADER | Stage::VERTEX_SHADER | Stage::FRAGMENT_SHADER,
                    Access::SHADER_STORAGE_WRITE,
                ),
                side(
                    "cull's reads and writes",
                    Stage::COMPUTE_SHADER,
                    Access::SHADER_STORAGE_READ | Access::SHADER_STORAGE_WRITE,
                ),
            ),
        ]
    }

    /// After the pass: its outputs to every reader this frame.
    pub fn hazards_after(&self) -> Vec<Hazard> {
        let arguments = side(
            "indirect arguments, the palette pass's count, copies",
            Stage::DRAW_INDIRECT | Stage::COMPUTE_SHADER | Stage::COPY,
            Access::INDIRECT_COMMAND_READ | Access::SHADER_STORAGE_READ | Access::TRANSFER_READ,
        );
        let lists = side(
            "palette, skin and triangle reads; debug views; the raster resolve's motions",
            Stage::COMPUTE_SHADER | Stage::VERTEX_SHADER | Stage::FRAGMENT_SHADER,
            Access::SHADER_STORAGE_READ,
        );
        let draws = side("indirect draws", Stage::DRAW_INDIRECT, Access::INDIRECT_COMMAND_READ);
        vec![
            Hazard::buffers("cull.counters, draw_counts", [&self.counters, &self.draw_counts], CULL_WRITES, arguments),
            Hazard::buffers(
                "cull.skin_list, debug_boxes, work_groups, palette_list, motions, placements",
                [&self.skin_list, &self.debug_boxes, &self.work_groups, &self.palette_list, &self.motions, &self.placements],
                CULL_WRITES,
                lists,
            ),
            Hazard::buffers("cull.camera_draws, light_draws", [&self.camera_draws, &self.light_draws], CULL_WRITES, draws),
        ]
    }

    /// Copies the counts into a slot's host-visible buffer (read after its fence).
    pub fn record_counts_copy(&self, command_buffer: vk::CommandBuffer, readback: &Buffer) {
        let region = vk::BufferCopy::default().size(std::mem::size_of::<CullCounters>() as u64);
        unsafe { self.device.raw.cmd_copy_buffer(command_buffer, self.counters.raw, readback.raw, &[region]) };
    }

    /// The pass's runs in order, each with what it waits for after the one before (the first
    /// waits on `hazards_before`): where the vertices are pooled, the count run, the budget run
    /// (one workgroup) reading its demand, and the place run reading the budget; else the place
    /// run alone.
    pub fn runs(&self) -> Vec<(CullRun, &'static str, Vec<Hazard>)> {
        let pools = |from: Side, to: Side| vec![Hazard::buffer("cull.pools", &self.pool_state, from, to)];
        let counting = side("the count run's demand", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);
        let budget = side("the budget run", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_READ | Access::SHADER_STORAGE_WRITE);
        let placing = side("the place run's reads", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_READ);
        match self.pools.pooled {
            true => vec![
                (CullRun::Count, "cull's count run", Vec::new()),
                (CullRun::Budget, "cull's budget run", pools(counting, budget)),
                (CullRun::Place, "cull's place run", pools(budget, placing)),
            ],
            false => vec![(CullRun::Place, "cull's place run", Vec::new())],
        }
    }

    /// One run of the pass (`runs`): a dispatch over the instances, or one workgroup (the budget).
    pub fn record_run(&self, command_buffer: vk::CommandBuffer, set: vk::DescriptorSet, push: CullPush, run: CullRun) {
        self.device.begin_label(command_buffer, c"cull");
        self.pipeline.bind(command_buffer);
        self.pipeline.bind_sets(command_buffer, 0, &[set]);
        let push = CullPush { run: run as u32, ..push };
        self.pipeline.push_constants(command_buffer, vk::ShaderStageFlags::COMPUTE, &push);
        let groups = match run {
            CullRun::Budget => 1,
            CullRun::Count | CullRun::Place => push.instance_count.div_ceil(WORKGROUP_SIZE),
        };
        self.device.cmd_dispatch(command_buffer, (groups, 1, 1));
        self.device.end_label(command_buffer);
    }

    /// What the counters hold before the pass counts: zero counts, and the constant parts: each
    /// work table's row width (`table_row`) and place in `work_groups`.
    pub fn counter_reset(&self, joint_stride: u32, dispatch_rows: u32) -> CullCounters {
        let mut reset = CullCounters {
            skeleton_draw: [2 * joint_stride, 0, 0, 0],
            box_draw: [24, 0, 0, 0],
            palette_dispatch: [0, 1, 1, 0],
            kept: [0, 0, 1, 0],
            dispatches: [[0, 0, 1, 0]; 3],
            raster: [[0, 1, 1, 0]; 2],
            ..Default::default()
        };
        let mut start = 0;
        for (table, &entries) in self.pools.table_entries.iter().enumerate() {
            reset.tables[table] = [0, table_row(entries, dispatch_rows), start as u32, 0];
            start += entries;
        }
        reset
    }

    /// The pass's push constants this frame. `frames_rendered` numbers the palette frames;
    /// `skeleton_view`: the skeleton view reads every joint position every frame, so animation LOD
    /// skips no palette while it is on.
    /// `hand_set`: some morph weight is set by hand this frame. `motion_vectors`: the forward pass
    /// writes the velocity target. `tables`: the work tables some pass reads this frame (the
    /// triangle pass's views among them).
    pub fn push(
        setup: &Setup,
        choice: &LevelChoice,
        (frames_rendered, skeleton_view): (u64, bool),
        (hand_set, motion_vectors): (bool, bool),
        tables: &[Table],
    ) -> CullPush {
        CullPush {
            instance_count: setup.instance_count,
            chunk_instances: setup.chunking.instances_per_chunk,
            pixels_at_unit: choice.pixels_at_unit,
            light_error: choice.light_error,
            tables_written: tables.iter().map(|&table| 1 << table as u32).sum(),
            // Frames count from 2 so that palette_frames' zeros (none yet) are never last frame's.
            palette_frame: (frames_rendered as u32).wrapping_add(2).max(2),
            far_ratio: match setup.animation_lod {
                Some(pixels) if !skeleton_view => choice.far_ratio(pixels),
                _ => 0.0,
            },
            hand_set: u32::from(hand_set),
            motion_vectors: u32::from(motion_vectors),
            run: CullRun::Place as u32,
            vertex_room: setup.memory.pools.vertex_room.min(u64::from(u32::MAX)) as u32,
            index_room: setup.memory.pools.index_room.min(u64::from(u32::MAX)) as u32,
            culled_views: u32::from(tables.contains(&Table::Camera)) | (u32::from(tables.contains(&Table::Light)) << 1),
        }
    }
}
