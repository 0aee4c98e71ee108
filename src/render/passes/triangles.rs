//! Triangle pass (compute, `compute` strategy only): the skinned triangles the camera can see.
//!
//! Skinning once into a buffer means the skinned triangles exist before any rasterizer sees them.
//! This pass tests every triangle of every kept instance against the camera (outside the frustum,
//! facing away on a closed model, or too small to cover a sample) and compacts the survivors'
//! indices into `triangles.camera_indices[c]`, each instance's into its room there (the cull pass
//! places it by its level, from the chunk's pool), counted into its commands in
//! `triangles.camera_draws` (laid out as the cull pass's draw lists, which writes them with no
//! indices yet). The forward pass draws those; the debug views still draw whole instances, and so
//! does the shadow pass unless the light's run (`--light-culling on`) kept its triangles the same way.
//!
//! Reads: `model.indices`, `model.mesh_ranges`, `skinned_vertices[c]`, and the cull pass's camera
//! work table in `cull.work_groups` (each instance the camera sees, its level's triangles in
//! groups); one indirect dispatch over it (`cull.counters`), whatever the levels. Writes:
//! `triangles.camera_draws`' index counts and `triangles.camera_indices[c]`; with
//! `--light-culling on`, the light's run likewise over the light's table into
//! `triangles.light_draws` and `triangles.light_indices[c]`. Its hazards: [`TriangleCulling::cull_hazards`],
//! [`TriangleCulling::hazards_before`], [`TriangleCulling::hazards_after`].

use std::sync::Arc;

use ash::vk;

use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use gpu_allocator::MemoryLocation;

use crate::gpu::barrier::{side, Hazard, Side};
use crate::gpu::descriptors::{DescriptorPool, DescriptorSetLayout, Resource};
use crate::gpu::pipeline::Pipeline;
use crate::gpu::{self, Buffer, Device};
use crate::render::chunks::Chunking;
use crate::render::draw::DrawList;
use crate::render::model_buffers::GpuModel;
use crate::render::shader_types::{DrawCommand, Table, TrianglesPush};
use crate::render::{padded_chunks, Setup, MAX_CHUNKS};

/// Triangles per workgroup: one entry of a work table.
pub const WORKGROUP_SIZE: u32 = crate::render::chunks::TRIANGLE_WORKGROUP;

pub const BINDING_INDICES: u32 = 0;
pub const BINDING_MESH_RANGES: u32 = 1;
pub const BINDING_SKINNED: u32 = 2;
pub const BINDING_WORK_GROUPS: u32 = 3;
pub const BINDING_DRAWS: u32 = 4;
pub const BINDING_CULLED_INDICES: u32 = 5;
pub const BINDING_COUNTERS: u32 = 6;
pub const BINDING_MODELS: u32 = 7;
pub const BINDING_INSTANCE_SLOTS: u32 = 8;
/// The view's list for the raster pass (`RasterPass::lists`; a placeholder where there is none).
pub const BINDING_RASTER_TRIANGLES: u32 = 9;

/// Whether the triangle pass can serve `model` on `device`: 16-bit storage, subgroup ballots, room
/// for its 2 × 64 + 8 storage-buffer bindings, and a model whose instance-relative indices fit 16 bits.
pub fn serves(device: &Device, model: &crate::model::Model) -> bool {
    device.storage_buffer_16bit
        && device.subgroup_ballot
        && device.limits().max_per_stage_descriptor_storage_buffers >= 2 * MAX_CHUNKS + 8
        && crate::render::chunks::culls_triangles(crate::render::chunks::Shape::of(model))
}

/// The sign of a hidden triangle's doubled screen-space area, as triangles.comp computes it (x right,
/// y down in framebuffer pixels), for the forward pipeline's cull mode; 0 when nothing is culled.
/// With a counter-clockwise front face, front-facing triangles have a negative area there.
pub fn facing_sign(cull_mode: vk::CullModeFlags) -> f32 {
    match cull_mode {
        vk::CullModeFlags::BACK => 1.0,
        vk::CullModeFlags::FRONT => -1.0,
        _ => 0.0,
    }
}

/// What one view's run of the triangle pass writes: the instances' commands (the cull pass writes
/// them, the pass counts the survivors into them) and, per chunk, the survivors' instance-relative
/// 16-bit indices; and the set the run binds.
pub struct CulledOutput {
    pub view: View,
    pub draws: Buffer,
    pub indices: Vec<Buffer>,
    pub set: vk::DescriptorSet,
}

/// Whose triangles a run of the triangle pass keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// The camera's, for the forward pass.
    Camera,
    /// The shadow map's, for the shadow pass.
    Light,
}

impl View {
    fn name(self) -> &'static str {
        match self {
            View::Camera => "camera",
            View::Light => "light",
        }
    }

    /// The outputs' names, for the barrier table.
    fn buffer_names(self) -> (&'static str, &'static str) {
        match self {
            View::Camera => ("triangles.camera_draws", "triangles.camera_indices[c]"),
            View::Light => ("triangles.light_draws", "triangles.light_indices[c]"),
        }
    }

    /// Who draws the outputs: their indirect draws and index reads.
    fn readers(self) -> (Side, Side) {
        match self {
            View::Camera => (
                side("forward's indirect draws", Stage::DRAW_INDIRECT, Access::INDIRECT_COMMAND_READ),
                side("forward's index reads", Stage::INDEX_INPUT, Access::INDEX_READ),
            ),
            View::Light => (
                side("shadow's indirect draws", Stage::DRAW_INDIRECT, Access::INDIRECT_COMMAND_READ),
                side("shadow's index reads", Stage::INDEX_INPUT, Access::INDEX_READ),
            ),
        }
    }
}

/// What the triangle pass reads and how much it writes: the model's buffers, the skin pass's
/// output, the cull pass's work tables, counters and instance slots; the draw lists' commands
/// (`InstanceSlots::commands`) and a chunk's culled indices (`Pools::index_room`).
pub struct TriangleInputs<'a> {
    pub model: &'a GpuModel,
    pub skinned: &'a [Buffer],
    pub work_groups: &'a Buffer,
    pub counters: &'a Buffer,
    pub instance_slots: &'a Buffer,
    pub commands: u64,
    pub index_room: u64,
    pub chunking: Chunking,
    /// The raster pass's lists, camera's and light's, where it runs.
    pub raster_lists: Option<(&'a Buffer, Option<&'a Buffer>)>,
}

impl CulledOutput {
    /// `view`'s outputs and their set from `pool`.
    fn new(
        pass: &TrianglePass,
        pool: &DescriptorPool,
        inputs: &TriangleInputs<'_>,
        (view, raster_list): (View, &Buffer),
    ) -> gpu::Result<CulledOutput> {
        use vk::BufferUsageFlags as Usage;
        let device = &pass.device;
        let name = view.name();
        let draws = Buffer::new(
            device,
            &format!("triangles.{name}_draws"),
            inputs.commands.max(1) * std::mem::size_of::<DrawCommand>() as u64,
            Usage::STORAGE_BUFFER | Usage::INDIRECT_BUFFER | Usage::TRANSFER_SRC,
            MemoryLocation::GpuOnly,
        )?;
        let mut indices = Vec::new();
        for chunk in 0..inputs.chunking.chunk_count {
            indices.push(Buffer::new(
                device,
                &format!("triangles.{name}_indices[{chunk}]"),
                (inputs.index_room * 2).max(4).next_multiple_of(4),
                Usage::STORAGE_BUFFER | Usage::INDEX_BUFFER | Usage::TRANSFER_SRC,
                MemoryLocation::GpuOnly,
            )?);
        }
        let set = pool.allocate(&pass.set_layout, &format!("triangles.{name}_set"))?;
        pass.write_set(set, inputs, (&draws, &indices), raster_list);
        Ok(CulledOutput { view, draws, indices, set })
    }

    /// The forward or shadow pass's draws from these outputs: the cull pass's list for the view
    /// (`runs` and `counts`, the camera's or the light's) over these commands and indices.
    pub fn draws<'a>(&'a self, list: DrawList<'a>) -> CulledDraws<'a> {
        CulledDraws { list: DrawList { commands: &self.draws, ..list }, indices: &self.indices }
    }
}

/// The triangle pass and what it writes: for the camera (the forward pass draws it) and, where
/// memory allows, for the light (the shadow pass draws it).
pub struct TriangleCulling {
    pub camera: CulledOutput,
    /// None where the memory plan leaves no room for the light's copy (`MemoryPlan::light_level`).
    pub light: Option<CulledOutput>,
    pub pass: TrianglePass,
    /// Owns the sets; held, never read again.
    _pool: DescriptorPool,
    pub facing_sign: f32,
    /// The forward pass's 4× MSAA samples sit at the standard positions, so the small-triangle
    /// test holds for the camera (tests turn it off to check it drops nothing visible). The shadow
    /// map's one sample a texel sits at its centre: the light's test always holds.
    pub sample_test: bool,
    /// The rasterizer's sub-pixel grid in pixels (2^-subPixelPrecisionBits).
    pub snap: f32,
    /// Bound as the raster lists where no raster pass runs: nothing is written there (its room is 0).
    _no_raster: Buffer,
}

/// What one run of the pass tests against: the camera's frame (its 4× MSAA samples, or none when
/// `sample_test` is off) or the shadow map (one sample a texel, at its centre).
#[derive(Clone, Copy, Debug)]
pub struct RunView {
    pub view_projection: glam::Mat4,
    /// Framebuffer or shadow-map size in pixels.
    pub viewport: [f32; 2],
    /// Samples a pixel row holds on a regular lattice: 4 (4× MSAA), 1 (centres), 0 (no test).
    pub sample_step: u32,
}

impl TriangleCulling {
    /// The push constants of one dispatch of a run over `table`.
    /// `raster`: the raster pass's threshold (`Raster::pixels`) and its lists' room, or (0, 0).
    pub fn push(&self, model: &GpuModel, setup: &Setup, view: &RunView, (table, raster): (Table, (f32, u32))) -> TrianglesPush {
        TrianglesPush {
            view_projection: view.view_projection.to_cols_array(),
            viewport: view.viewport,
            mesh_count: setup.mesh_draws.len() as u32,
            vertex_count: model.single().vertex_count(),
            chunk_instances: setup.chunking.instances_per_chunk,
            facing_sign: self.facing_sign,
            sample_step: view.sample_step,
            snap: self.snap,
            table: table as u32,
            raster_pixels: raster.0,
            raster_room: raster.1,
        }
    }

    /// The pass and its outputs for the model's instances (the light's too, with
    /// `light_culling`), and their sets over the skin pass's output and the cull pass's tables.
    /// `cull_mode` and `forward_samples`: the forward pass's, for the facing and sample tests.
    pub fn new(
        device: &Arc<Device>,
        inputs: &TriangleInputs<'_>,
        cull_mode: vk::CullModeFlags,
        forward_samples: vk::SampleCountFlags,
        light_culling: bool,
    ) -> gpu::Result<TriangleCulling> {
        let pass = TrianglePass::new(device)?;
        let pool = DescriptorPool::for_sets(device, "triangles.pool", &[(&pass.set_layout, 2)])?;
        let no_raster = Buffer::new(
            device,
            "triangles.no_raster",
            std::mem::size_of::<crate::render::shader_types::RasterTriangle>() as u64,
            vk::BufferUsageFlags::STORAGE_BUFFER,
            MemoryLocation::GpuOnly,
        )?;
        let (camera_list, light_list) = inputs.raster_lists.unwrap_or((&no_raster, None));
        let camera = CulledOutput::new(&pass, &pool, inputs, (View::Camera, camera_list))?;
        let light = match light_culling {
            true => Some(CulledOutput::new(&pass, &pool, inputs, (View::Light, light_list.unwrap_or(&no_raster)))?),
            false => None,
        };
        let sample_test =
            device.limits().standard_sample_locations == vk::TRUE && forward_samples == vk::SampleCountFlags::TYPE_4;
        let snap = 0.5f32.powi(device.limits().sub_pixel_precision_bits as i32);
        Ok(TriangleCulling {
            camera,
            light,
            pass,
            _pool: pool,
            facing_sign: facing_sign(cull_mode),
            sample_test,
            snap,
            _no_raster: no_raster,
        })
    }

    /// Every view's outputs: the camera's, then the light's where there is one.
    fn outputs(&self) -> impl Iterator<Item = &CulledOutput> {
        std::iter::once(&self.camera).chain(&self.light)
    }

    /// The views' culled draws as the cull pass binds them (camera, light; `unused` for none).
    pub fn culled_draws<'a>(&'a self, unused: &'a Buffer) -> [&'a Buffer; 2] {
        [&self.camera.draws, self.light.as_ref().map_or(unused, |light| &light.draws)]
    }
}

/// The pass's writes, the earlier side of the hazards on its outputs.
pub const TRIANGLE_WRITES: Side = side("triangle-pass writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);

impl TriangleCulling {
    /// Before the cull pass writes the views' commands: last frame's draws from them are done.
    pub fn cull_hazards(&self) -> Vec<Hazard> {
        let indirect = side("last frame's indirect reads", Stage::DRAW_INDIRECT, Access::NONE);
        let cull_writes = side("cull writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);
        self.outputs().map(|output| Hazard::buffer(output.view.buffer_names().0, &output.draws, indirect, cull_writes)).collect()
    }

    /// Before the pass: the cull pass's commands and counters landed (the pass counts into both),
    /// and last frame's index reads are done.
    pub fn hazards_before(&self, counters: &Buffer) -> Vec<Hazard> {
        let counting =
            side("the pass's atomic counting", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_READ | Access::SHADER_STORAGE_WRITE);
        let cull_writes = side("cull writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);
        let index_reads = side("last frame's index reads", Stage::INDEX_INPUT, Access::NONE);
        let mut hazards = vec![Hazard::buffer("cull.counters", counters, cull_writes, counting)];
        for output in self.outputs() {
            let (draws, indices) = output.view.buffer_names();
            hazards.push(Hazard::buffer(draws, &output.draws, cull_writes, counting));
            hazards.push(Hazard::buffers(indices, &output.indices, index_reads, TRIANGLE_WRITES));
        }
        hazards
    }

    /// After the pass: the forward (camera) and shadow (light) passes' indirect draws and index
    /// reads; the counts it added, copied out for the CPU.
    pub fn hazards_after(&self, counters: &Buffer) -> Vec<Hazard> {
        let copy = side("the counts' copy-out", Stage::COPY, Access::TRANSFER_READ);
        let mut hazards = vec![Hazard::buffer("cull.counters", counters, TRIANGLE_WRITES, copy)];
        for output in self.outputs() {
            let ((draws, indices), (draw_reads, index_reads)) = (output.view.buffer_names(), output.view.readers());
            hazards.push(Hazard::buffer(draws, &output.draws, TRIANGLE_WRITES, draw_reads));
            hazards.push(Hazard::buffers(indices, &output.indices, TRIANGLE_WRITES, index_reads));
        }
        hazards
    }
}

pub struct TrianglePass {
    pub pipeline: Pipeline,
    pub set_layout: DescriptorSetLayout,
    device: Arc<Device>,
}

impl TrianglePass {
    pub fn new(device: &Arc<Device>) -> gpu::Result<TrianglePass> {
        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let compute = vk::ShaderStageFlags::COMPUTE;
        let set_layout = DescriptorSetLayout::with_counts(
            device,
            "triangles.set_layout",
            &[
                (BINDING_INDICES, storage, compute, 1),
                (BINDING_MESH_RANGES, storage, compute, 1),
                (BINDING_SKINNED, storage, compute, MAX_CHUNKS),
                (BINDING_WORK_GROUPS, storage, compute, 1),
                (BINDING_DRAWS, storage, compute, 1),
                (BINDING_CULLED_INDICES, storage, compute, MAX_CHUNKS),
                (BINDING_COUNTERS, storage, compute, 1),
                (BINDING_MODELS, storage, compute, 1),
                (BINDING_INSTANCE_SLOTS, storage, compute, 1),
                (BINDING_RASTER_TRIANGLES, storage, compute, 1),
            ],
        )?;
        let pipeline = Pipeline::compute(
            device,
            "triangles",
            crate::render::shaders::TRIANGLES_COMP,
            &[&set_layout],
            std::mem::size_of::<TrianglesPush>() as u32,
            &[(0, WORKGROUP_SIZE)],
        )?;
        Ok(TrianglePass { pipeline, set_layout, device: device.clone() })
    }

    /// A view's set: what the pass reads (`inputs`) and that view's outputs.
    fn write_set(
        &self,
        set: vk::DescriptorSet,
        inputs: &TriangleInputs<'_>,
        (draws, culled_indices): (&Buffer, &[Buffer]),
        raster_list: &Buffer,
    ) {
        crate::gpu::descriptors::write_set(
            &self.device,
            set,
            &[
                (BINDING_INDICES, Resource::StorageBuffer(&inputs.model.indices)),
                (BINDING_MESH_RANGES, Resource::StorageBuffer(&inputs.model.mesh_ranges)),
                (BINDING_SKINNED, Resource::StorageBuffers(padded_chunks(inputs.skinned))),
                (BINDING_WORK_GROUPS, Resource::StorageBuffer(inputs.work_groups)),
                (BINDING_DRAWS, Resource::StorageBuffer(draws)),
                (BINDING_CULLED_INDICES, Resource::StorageBuffers(padded_chunks(culled_indices))),
                (BINDING_COUNTERS, Resource::StorageBuffer(inputs.counters)),
                (BINDING_MODELS, Resource::StorageBuffer(&inputs.model.models)),
                (BINDING_INSTANCE_SLOTS, Resource::StorageBuffer(inputs.instance_slots)),
                (BINDING_RASTER_TRIANGLES, Resource::StorageBuffer(raster_list)),
            ],
        );
    }

    /// Each run (a view's set, its push constants, and the offset in `arguments` of its
    /// dispatch over its work table) in turn: one indirect dispatch a run, whatever the levels.
    /// Each view's commands must hold the cull pass's, every index count 0.
    pub fn record(
        &self,
        command_buffer: vk::CommandBuffer,
        runs: &[(vk::DescriptorSet, TrianglesPush, u64)],
        arguments: &Buffer,
    ) {
        self.device.begin_label(command_buffer, c"triangles");
        self.pipeline.bind(command_buffer);
        for (set, push, offset) in runs {
            self.pipeline.bind_sets(command_buffer, 0, &[*set]);
            self.pipeline.push_constants(command_buffer, vk::ShaderStageFlags::COMPUTE, push);
            self.device.cmd_dispatch_indirect(command_buffer, arguments.raw, *offset);
        }
        self.device.end_label(command_buffer);
    }
}

/// What the forward (or shadow) pass draws with the `compute` strategy: the cull pass's draw list
/// for the view over the triangle pass's commands, and per chunk the culled indices.
pub struct CulledDraws<'a> {
    pub list: DrawList<'a>,
    pub indices: &'a [Buffer],
}

impl CulledDraws<'_> {
    /// Binds run `run`'s chunk's culled indices and draws its instances' `mesh` (an instance whose
    /// triangles all failed draws nothing).
    pub fn draw(&self, device: &Device, command_buffer: vk::CommandBuffer, run: usize, mesh: u32) {
        let Some(indices) = self.list.runs.get(run).and_then(|run| self.indices.get(run.chunk as usize)) else { return };
        unsafe { device.raw.cmd_bind_index_buffer(command_buffer, indices.raw, 0, vk::IndexType::UINT16) };
        self.list.draw(device, command_buffer, run, mesh);
    }
}
