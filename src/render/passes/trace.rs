//! Trace pass (`--shadows ray`): the skinned buffer's triangles into acceleration structures each
//! frame, for the forward pass's shadow rays (ray query in its fragment shaders).
//!
//! - **blas**: one bottom-level structure an instance, over its skinned vertices (the skin pass's
//!   `skinned_vertices[c]`, or the `cpu` strategy's frame-slot buffer) and its model's indices at
//!   the shadow's level of detail. All instances' builds go in one `vkCmdBuildAccelerationStructuresKHR`:
//!   a structure whose level is unchanged is **refit** in place (`UPDATE`: the same triangles,
//!   moved), one whose level changed (or that was never built) is **rebuilt**; each has its own
//!   scratch, planned at creation ([`TracePlan`]).
//! - **tlas**: one top-level structure over every instance's record (`trace.instances`: its BLAS,
//!   an identity transform since the vertices are in world space), rebuilt each frame. The cull
//!   pass writes each record's mask: 0xFF for an instance the light sees (its level's vertices are
//!   skinned this frame), 0 for one it culled, which rays then pass through.
//!
//! Reads: the skinned vertices, `model.indices`, `trace.instances`. Writes (and owns): `trace.blas[k]`
//! (the bottom levels, in buffers of at most 512 MiB), `trace.tlas`, `trace.scratch[k]`. Its hazards: [`TracePass::blas_hazards_before`],
//! [`TracePass::tlas_hazards_before`], [`TracePass::hazards_after`].

use std::sync::Arc;

use ash::vk;
use glam::Vec3;
use gpu_allocator::MemoryLocation;
use vk::{AccessFlags2 as Access, BufferUsageFlags as Usage, PipelineStageFlags2 as Stage};

use crate::gpu::barrier::{side, Hazard, Side};
use crate::gpu::{self, AccelerationStructure, Buffer, Device};
use crate::render::chunks::trace::{room_size, StructureSize, TracePlan, STRUCTURE_ALIGNMENT};
use crate::render::model_buffers::GpuModel;
use crate::render::passes::cull::LevelChoice;
use crate::render::shader_types::{InstanceSlot, SkinnedVertex};
use crate::render::FrameScene;

/// The word of an instance record that holds its custom index (24 bits) and mask (the top 8),
/// which the cull pass writes each frame (cull.comp: TRACE_MASK_WORD).
pub const MASK_WORD: usize = 12;
/// Skinned characters change every frame: their structures favour a fast build (and may be
/// refit); the top level, built once a frame over few records, favours fast tracing.
const BLAS_FLAGS: vk::BuildAccelerationStructureFlagsKHR = vk::BuildAccelerationStructureFlagsKHR::from_raw(
    vk::BuildAccelerationStructureFlagsKHR::ALLOW_UPDATE.as_raw()
        | vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_BUILD.as_raw(),
);
const TLAS_FLAGS: vk::BuildAccelerationStructureFlagsKHR = vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE;

/// One instance's bottom-level structure and where its inputs and scratch are.
struct InstanceStructure {
    structure: AccelerationStructure,
    /// Its model, and its chunk and first vertex there (`InstanceSlot`).
    model: u32,
    chunk: u32,
    vertex_base: u32,
    /// Its scratch's address.
    scratch: vk::DeviceAddress,
    /// The level it holds; None before its first build.
    built: Option<u32>,
}

/// One frame's build of an instance's structure: at `level`, refit or rebuilt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Build {
    pub instance: u32,
    pub level: u32,
    pub refit: bool,
}

pub struct TracePass {
    // Field order is drop order: the structures before the buffers that hold them.
    pub plan: TracePlan,
    instances_structures: Vec<InstanceStructure>,
    pub tlas: AccelerationStructure,
    /// Every instance's bottom-level structure, one after another, in buffers of at most
    /// `ARENA_BYTES` (`trace.blas[k]`).
    pub blas: Vec<Buffer>,
    /// Each instance's record (`VkAccelerationStructureInstanceKHR`), the cull pass's masks in them.
    pub instances: Buffer,
    pub tlas_storage: Buffer,
    /// Every build's scratch: the instances' then the top level's (`trace.scratch[k]`).
    pub scratch: Vec<Buffer>,
    tlas_scratch: vk::DeviceAddress,
    /// Each model's levels: (first index in `model.indices`, index count, vertex count).
    levels: Vec<Vec<(u32, u32, u32)>>,
    /// Each model's levels' errors (model units; 0 for the full mesh).
    errors: Vec<Vec<f32>>,
    /// Each model's reach from its origin, unscaled: its rest box's farthest corner, grown by its
    /// blend and morph reaches (`ModelRecord`) and doubled for the poses its clips take it to.
    reaches: Vec<f32>,
    /// This frame's builds (`prepare`), which `record_blas` records.
    builds: Vec<Build>,
    /// `VKSKIN_TRACE_REBUILD=1`: every structure rebuilt every frame, never refit (to measure one
    /// against the other).
    rebuild_always: bool,
    /// Frames prepared so far: which instances' structures this frame rebuilds in any case
    /// (`REBUILD_PERIOD`).
    frames: u64,
    /// This frame's farthest a traced triangle strays from the surface, beyond the shadow map's
    /// texel: the largest of the room levels' errors at the instances' scales (0 where every room
    /// is the full mesh), which the shadow ray's offset must clear (`FrameUniforms::shadow_params`).
    pub room_error: f32,
    /// This frame some instance traces a level coarser than its shadow map's because a pixel at its
    /// distance allows it: then its triangles stray by up to that pixel's footprint, which the
    /// shadow ray's offset must clear on the models (`FrameUniforms::shadow_params`).
    pub pixel_coarsened: bool,
    device: Arc<Device>,
}

/// A refit keeps a structure's tree and moves its boxes: as the pose drifts from the one it was
/// built from (or from the zeros of an instance not yet skinned when it was built), the boxes
/// overlap more and rays open more of them. Each frame rebuilds every `REBUILD_PERIOD`-th
/// instance's structure, a different slice each frame: every tree is at most that many frames old.
pub const REBUILD_PERIOD: u64 = 32;

/// The most bytes one buffer of structures or scratch holds (`arena`): half the least
/// maxMemoryAllocationSize the API allows.
const ARENA_BYTES: u64 = 1 << 29;

/// Where each item of an arena lies: (its buffer, its offset there).
type Places = Vec<(usize, u64)>;

/// Buffers `NAME[k]` holding items of `sizes` one after another, each starting at a multiple of
/// `alignment` and none crossing a buffer's end, each buffer at most `ARENA_BYTES` (or one item,
/// where an item is larger); and each item's (buffer, offset). A buffer has `alignment` bytes more
/// than its items, so that its items may start from its address rounded up to `alignment`.
fn arena(
    device: &Arc<Device>,
    name: &str,
    usage: vk::BufferUsageFlags,
    sizes: impl IntoIterator<Item = u64>,
    alignment: u64,
) -> gpu::Result<(Vec<Buffer>, Places)> {
    let mut places = Vec::new();
    let mut lengths = vec![0u64];
    for size in sizes {
        let size = size.next_multiple_of(alignment).max(alignment);
        let last = lengths.len() - 1;
        if lengths[last] > 0 && lengths[last] + size > ARENA_BYTES {
            lengths.push(0);
        }
        let last = lengths.len() - 1;
        places.push((last, lengths[last]));
        lengths[last] += size;
    }
    let buffers = lengths
        .iter()
        .enumerate()
        .map(|(index, &length)| {
            Buffer::new(device, &format!("{name}[{index}]"), length.max(alignment) + alignment, usage, MemoryLocation::GpuOnly)
        })
        .collect::<gpu::Result<Vec<Buffer>>>()?;
    Ok((buffers, places))
}

/// The triangles of one instance at one level, as a build reads them.
fn triangles(
    vertices: vk::DeviceAddress,
    indices: vk::DeviceAddress,
    vertex_count: u32,
) -> vk::AccelerationStructureGeometryKHR<'static> {
    let data = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
        .vertex_format(vk::Format::R32G32B32_SFLOAT)
        .vertex_data(vk::DeviceOrHostAddressConstKHR { device_address: vertices })
        .vertex_stride(std::mem::size_of::<SkinnedVertex>() as u64)
        .max_vertex(vertex_count.saturating_sub(1))
        .index_type(vk::IndexType::UINT32)
        .index_data(vk::DeviceOrHostAddressConstKHR { device_address: indices });
    vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
        .geometry(vk::AccelerationStructureGeometryDataKHR { triangles: data })
        .flags(vk::GeometryFlagsKHR::OPAQUE)
}

/// The top level's one geometry: the instance records at `records`.
fn instance_geometry(records: vk::DeviceAddress) -> vk::AccelerationStructureGeometryKHR<'static> {
    let data = vk::AccelerationStructureGeometryInstancesDataKHR::default()
        .array_of_pointers(false)
        .data(vk::DeviceOrHostAddressConstKHR { device_address: records });
    vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::INSTANCES)
        .geometry(vk::AccelerationStructureGeometryDataKHR { instances: data })
        .flags(vk::GeometryFlagsKHR::OPAQUE)
}

/// The device's sizes for a structure of `geometry` with `primitives` primitives.
fn build_size(
    device: &Device,
    (kind, flags): (vk::AccelerationStructureTypeKHR, vk::BuildAccelerationStructureFlagsKHR),
    geometry: vk::AccelerationStructureGeometryKHR<'_>,
    primitives: u32,
) -> StructureSize {
    let Some(ray_query) = &device.ray_query else { return StructureSize::default() };
    let geometries = [geometry];
    let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
        .ty(kind)
        .flags(flags)
        .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
        .geometries(&geometries);
    let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
    unsafe {
        ray_query.loader.get_acceleration_structure_build_sizes(
            vk::AccelerationStructureBuildTypeKHR::DEVICE,
            &info,
            &[primitives],
            &mut sizes,
        )
    };
    StructureSize {
        structure: sizes.acceleration_structure_size,
        scratch: sizes.build_scratch_size.max(sizes.update_scratch_size),
    }
}

/// The parts of a renderer the trace pass is made from.
pub struct TraceInputs<'a> {
    pub model: &'a GpuModel,
    pub slots: &'a [InstanceSlot],
    pub instances_per_chunk: u32,
    /// Bytes of device memory left for tracing after the plan's instances.
    pub budget: u64,
}

impl TracePass {
    /// Each instance's structure with room for its model's level in the plan, the instance records
    /// pointing at them, the top level and the scratch; an error where the device has no ray query
    /// or the structures do not fit.
    pub fn new(device: &Arc<Device>, inputs: &TraceInputs<'_>) -> gpu::Result<TracePass> {
        let Some(ray_query) = &device.ray_query else {
            return Err(gpu::Error::Other(format!(
                "--shadows ray needs VK_KHR_acceleration_structure and VK_KHR_ray_query, which {} does not offer here \
                 (lavapipe has them from Mesa 24.1: scripts/install-deps; a capture layer that cannot record them, \
                 as RenderDoc 1.24, hides them)",
                device.name()
            )));
        };
        let alignment = ray_query.scratch_alignment;
        let model = inputs.model;
        let levels: Vec<Vec<(u32, u32, u32)>> = model
            .parts
            .iter()
            .map(|part| part.levels.iter().map(|level| (level.first_index, level.index_count, level.vertex_count)).collect())
            .collect();
        let errors: Vec<Vec<f32>> =
            model.parts.iter().map(|part| part.levels.iter().map(|level| level.error).collect()).collect();
        let reaches: Vec<f32> = model
            .parts
            .iter()
            .map(|part| {
                let (low, high) = (Vec3::from_slice(&part.record.bind_min[..3]), Vec3::from_slice(&part.record.bind_max[..3]));
                2.0 * (low.abs().max(high.abs()).length() + part.record.bind_min[3] + part.record.bind_max[3])
            })
            .collect();
        let blas_kind = (vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL, BLAS_FLAGS);
        let sizes: Vec<Vec<StructureSize>> = levels
            .iter()
            .map(|levels| {
                levels
                    .iter()
                    .map(|&(_, indices, vertices)| build_size(device, blas_kind, triangles(0, 0, vertices), indices / 3))
                    .collect()
            })
            .collect();
        let instance_count = inputs.slots.len() as u32;
        let tlas_kind = (vk::AccelerationStructureTypeKHR::TOP_LEVEL, TLAS_FLAGS);
        let tlas_size = build_size(device, tlas_kind, instance_geometry(0), instance_count);
        let instance_models: Vec<u32> = inputs.slots.iter().map(|slot| slot.model).collect();
        let plan = TracePlan::new(&sizes, &instance_models, tlas_size, (inputs.budget, alignment)).map_err(gpu::Error::Other)?;

        let rooms: Vec<StructureSize> = instance_models
            .iter()
            .map(|&model| room_size(&sizes[model as usize], plan.room_levels[model as usize], alignment))
            .collect();
        let (structure_bytes, scratch_bytes) =
            rooms.iter().fold((0, 0), |(structures, scratch), size| (structures + size.structure, scratch + size.scratch));
        // The structures and the scratch in buffers of at most `ARENA_BYTES` each (an allocation
        // may not be larger than maxMemoryAllocationSize, at least 1 GiB), the top level's scratch
        // after the instances'.
        let usage = Usage::ACCELERATION_STRUCTURE_STORAGE_KHR | Usage::SHADER_DEVICE_ADDRESS;
        let (blas, structure_places) =
            arena(device, "trace.blas", usage, rooms.iter().map(|size| size.structure), STRUCTURE_ALIGNMENT)?;
        let scratch_usage = Usage::STORAGE_BUFFER | Usage::SHADER_DEVICE_ADDRESS;
        let scratch_sizes = rooms.iter().map(|size| size.scratch).chain([tlas_size.scratch.next_multiple_of(alignment)]);
        let (scratch, scratch_places) = arena(device, "trace.scratch", scratch_usage, scratch_sizes, alignment)?;
        let scratch_address =
            |(buffer, offset): (usize, u64)| scratch[buffer].device_address().next_multiple_of(alignment) + offset;
        let tlas_storage =
            Buffer::new(device, "trace.tlas", tlas_size.structure.max(STRUCTURE_ALIGNMENT), usage, MemoryLocation::GpuOnly)?;

        let mut structures = Vec::with_capacity(inputs.slots.len());
        for (index, slot) in inputs.slots.iter().enumerate() {
            let (buffer, offset) = structure_places[index];
            let structure = AccelerationStructure::new(
                device,
                &format!("trace.blas[{index}]"),
                vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
                &blas[buffer],
                (offset, rooms[index].structure),
            )?;
            structures.push(InstanceStructure {
                structure,
                model: slot.model,
                chunk: index as u32 / inputs.instances_per_chunk.max(1),
                vertex_base: slot.vertex_base,
                scratch: scratch_address(scratch_places[index]),
                built: None,
            });
        }
        let tlas_scratch = scratch_address(scratch_places[inputs.slots.len()]);
        let tlas = AccelerationStructure::new(
            device,
            "trace.tlas[0]",
            vk::AccelerationStructureTypeKHR::TOP_LEVEL,
            &tlas_storage,
            (0, tlas_size.structure),
        )?;
        let records: Vec<[u32; 16]> = structures.iter().enumerate().map(|(index, each)| record(index as u32, each)).collect();
        let instances = Buffer::with_data(
            device,
            "trace.instances",
            Usage::STORAGE_BUFFER | Usage::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR | Usage::SHADER_DEVICE_ADDRESS,
            bytemuck::cast_slice(&records),
        )?;
        log::info!(
            "trace: {instance_count} bottom-level structures ({structure_bytes} bytes, {scratch_bytes} of scratch), room levels {:?}",
            plan.room_levels
        );
        Ok(TracePass {
            plan,
            blas,
            instances_structures: structures,
            instances,
            tlas_storage,
            tlas,
            scratch,
            tlas_scratch,
            levels,
            errors,
            reaches,
            builds: Vec::new(),
            rebuild_always: std::env::var("VKSKIN_TRACE_REBUILD").is_ok_and(|value| value == "1"),
            frames: 0,
            room_error: 0.0,
            pixel_coarsened: false,
            device: device.clone(),
        })
    }

    /// This frame's builds, each instance at the coarsest of three levels:
    /// - its shadow map's, the coarsest whose error at its scale is within a texel (`choice`'s), as
    ///   the cull pass picks it to the bit: the instance is skinned at that level or a finer one
    ///   whenever the light sees it, so its structure's vertices are there;
    /// - the coarsest whose error is within a pixel on screen at the instance's distance (its
    ///   shadow falls beside it): where the camera is far, fewer triangles than the texel allows.
    ///   The distance is to a sphere around the instance's rest pose grown by its reaches
    ///   (`reaches`), no farther than its animated box's nearest point in practice, so that the
    ///   level is no coarser than the camera's own;
    /// - the finest its room holds (the memory plan's).
    ///
    /// Refit where its structure holds that level already; rebuilt where not, and where its slice's
    /// turn has come (`REBUILD_PERIOD`).
    pub fn prepare(&mut self, scene: &FrameScene, choice: &LevelChoice) {
        self.builds.clear();
        let mut room_error = 0.0f32;
        let mut pixel_coarsened = false;
        let states = scene.instances.states();
        for (index, (each, instance)) in self.instances_structures.iter_mut().zip(states).enumerate() {
            let model = each.model as usize;
            let errors = &self.errors[model];
            let shadow = LevelChoice::coarsest_within(errors, instance.scale, choice.light_error);
            let scale = instance.scale.max(1e-6);
            let distance = ((instance.position - scene.camera_position).length() - self.reaches[model] * scale).max(0.0) / scale;
            let on_screen = choice.camera_level_of(errors, distance);
            let room = self.plan.room_levels[model];
            let level = shadow.max(on_screen).max(room);
            let due = (index as u64 + self.frames) % REBUILD_PERIOD == 0;
            let refit = each.built == Some(level) && !due && !self.rebuild_always;
            self.builds.push(Build { instance: index as u32, level, refit });
            each.built = Some(level);
            room_error = room_error.max(errors[room as usize] * instance.scale);
            pixel_coarsened |= on_screen > shadow.max(room);
        }
        self.room_error = room_error;
        self.pixel_coarsened = pixel_coarsened;
        self.frames += 1;
    }

    /// The last frame's builds (`prepare`).
    pub fn builds(&self) -> &[Build] {
        &self.builds
    }

    /// The bottom levels' builds, one call: `vertices` is each chunk's skinned-vertex buffer and
    /// where in it the chunk starts.
    pub fn record_blas(&self, command_buffer: vk::CommandBuffer, vertices: &[(&Buffer, u64)], indices: &Buffer) {
        let Some(ray_query) = &self.device.ray_query else { return };
        let chunk_addresses: Vec<vk::DeviceAddress> =
            vertices.iter().map(|(buffer, offset)| buffer.device_address() + offset).collect();
        let index_address = indices.device_address();
        let vertex_bytes = std::mem::size_of::<SkinnedVertex>() as u64;
        let mut geometries = Vec::with_capacity(self.builds.len());
        let mut ranges = Vec::with_capacity(self.builds.len());
        for build in &self.builds {
            let each = &self.instances_structures[build.instance as usize];
            let (first_index, index_count, vertex_count) = self.levels[each.model as usize][build.level as usize];
            let vertex_address = chunk_addresses[each.chunk as usize] + u64::from(each.vertex_base) * vertex_bytes;
            geometries.push([triangles(vertex_address, index_address + u64::from(first_index) * 4, vertex_count)]);
            ranges.push([vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(index_count / 3)]);
        }
        let infos: Vec<vk::AccelerationStructureBuildGeometryInfoKHR> = self
            .builds
            .iter()
            .zip(&geometries)
            .map(|(build, geometry)| {
                let each = &self.instances_structures[build.instance as usize];
                let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
                    .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL)
                    .flags(BLAS_FLAGS)
                    .dst_acceleration_structure(each.structure.raw)
                    .geometries(geometry)
                    .scratch_data(vk::DeviceOrHostAddressKHR { device_address: each.scratch });
                match build.refit {
                    true => {
                        info.mode(vk::BuildAccelerationStructureModeKHR::UPDATE).src_acceleration_structure(each.structure.raw)
                    }
                    false => info.mode(vk::BuildAccelerationStructureModeKHR::BUILD),
                }
            })
            .collect();
        let range_slices: Vec<&[vk::AccelerationStructureBuildRangeInfoKHR]> = ranges.iter().map(|range| &range[..]).collect();
        self.device.begin_label(command_buffer, c"trace.blas: refit or rebuild every instance's");
        unsafe { ray_query.loader.cmd_build_acceleration_structures(command_buffer, &infos, &range_slices) };
        self.device.end_label(command_buffer);
    }

    /// The top level's build over every instance record.
    pub fn record_tlas(&self, command_buffer: vk::CommandBuffer) {
        let Some(ray_query) = &self.device.ray_query else { return };
        let geometry = [instance_geometry(self.instances.device_address())];
        let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(vk::AccelerationStructureTypeKHR::TOP_LEVEL)
            .flags(TLAS_FLAGS)
            .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
            .dst_acceleration_structure(self.tlas.raw)
            .geometries(&geometry)
            .scratch_data(vk::DeviceOrHostAddressKHR { device_address: self.tlas_scratch });
        let range =
            [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(self.instances_structures.len() as u32)];
        self.device.begin_label(command_buffer, c"trace.tlas: build over every instance");
        unsafe { ray_query.loader.cmd_build_acceleration_structures(command_buffer, &[info], &[&range[..]]) };
        self.device.end_label(command_buffer);
    }

    /// Triangles this frame's bottom-level builds take, refit and rebuilt: (refit, rebuilt).
    pub fn triangles_built(&self) -> (u64, u64) {
        self.builds.iter().fold((0, 0), |(refit, rebuilt), build| {
            let model = self.instances_structures[build.instance as usize].model as usize;
            let triangles = u64::from(self.levels[model][build.level as usize].1 / 3);
            if build.refit {
                (refit + triangles, rebuilt)
            } else {
                (refit, rebuilt + triangles)
            }
        })
    }

    /// Before the bottom levels: the skin pass's writes (`compute`: `skinned`, its chunks), and
    /// last frame's ray queries and builds done with the structures and the scratch.
    pub fn blas_hazards_before(&self, skinned: Option<&[Buffer]>) -> Vec<Hazard> {
        let mut hazards = Vec::new();
        if let Some(skinned) = skinned {
            let skin_writes = side("skin writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);
            hazards.push(Hazard::buffers("skinned_vertices[c]", skinned, skin_writes, BUILD_INPUT_READS));
        }
        let queries = side("last frame's ray queries", Stage::FRAGMENT_SHADER, Access::NONE);
        hazards.push(Hazard::buffers("trace.blas[k]", &self.blas, queries, BUILD_WRITES));
        hazards.push(Hazard::buffers(
            "trace.scratch[k]",
            &self.scratch,
            side("last frame's builds", BUILD_STAGE, Access::ACCELERATION_STRUCTURE_WRITE_KHR),
            BUILD_WRITES,
        ));
        hazards
    }

    /// Before the top level: the bottom levels built, the cull pass's masks written, and last
    /// frame's ray queries done with the top level.
    pub fn tlas_hazards_before(&self) -> Vec<Hazard> {
        let cull_writes = side("cull writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);
        let queries = side("last frame's ray queries", Stage::FRAGMENT_SHADER, Access::NONE);
        vec![
            Hazard::buffers(
                "trace.blas[k]",
                &self.blas,
                BLAS_WRITES,
                side("the top level's build reads", BUILD_STAGE, Access::ACCELERATION_STRUCTURE_READ_KHR),
            ),
            Hazard::buffers("trace.scratch[k]", &self.scratch, BLAS_WRITES, BUILD_WRITES),
            Hazard::buffer("trace.instances", &self.instances, cull_writes, BUILD_INPUT_READS),
            Hazard::buffer("trace.tlas", &self.tlas_storage, queries, BUILD_WRITES),
        ]
    }

    /// After the top level: the forward pass's fragment shaders query both levels.
    pub fn hazards_after(&self) -> Vec<Hazard> {
        let built = side("the builds' writes", BUILD_STAGE, Access::ACCELERATION_STRUCTURE_WRITE_KHR);
        let queries = side("forward's ray queries", Stage::FRAGMENT_SHADER, Access::ACCELERATION_STRUCTURE_READ_KHR);
        vec![Hazard::buffers("trace.blas[k], tlas", self.blas.iter().chain([&self.tlas_storage]), built, queries)]
    }

    /// Last frame's top-level build read the records the cull pass writes again.
    pub fn records_hazard(&self) -> Hazard {
        let reads = side("last frame's top-level build", BUILD_STAGE, Access::NONE);
        let cull_writes = side("cull writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);
        Hazard::buffer("trace.instances", &self.instances, reads, cull_writes)
    }
}

const BUILD_STAGE: Stage = Stage::ACCELERATION_STRUCTURE_BUILD_KHR;
/// A build reading its vertices, indices or instance records.
const BUILD_INPUT_READS: Side = side("acceleration-structure build reads", BUILD_STAGE, Access::SHADER_READ);
/// A build writing its structure and using its scratch.
const BUILD_WRITES: Side = side(
    "build writes",
    BUILD_STAGE,
    Access::from_raw(Access::ACCELERATION_STRUCTURE_READ_KHR.as_raw() | Access::ACCELERATION_STRUCTURE_WRITE_KHR.as_raw()),
);
const BLAS_WRITES: Side = side("the bottom levels' builds", BUILD_STAGE, Access::ACCELERATION_STRUCTURE_WRITE_KHR);

/// Instance `index`'s record: an identity transform (its vertices are in world space), its index
/// as the custom index with mask 0 (the cull pass sets it), both sides of every triangle opaque
/// to shadow rays, and its structure's address.
fn record(index: u32, each: &InstanceStructure) -> [u32; 16] {
    let mut words = [0u32; 16];
    let identity: [f32; 12] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    for (word, value) in words.iter_mut().zip(identity) {
        *word = value.to_bits();
    }
    words[MASK_WORD] = index & 0x00FF_FFFF;
    let flags = vk::GeometryInstanceFlagsKHR::TRIANGLE_FACING_CULL_DISABLE | vk::GeometryInstanceFlagsKHR::FORCE_OPAQUE;
    words[13] = (flags.as_raw() & 0xFF) << 24;
    words[14] = each.structure.address as u32;
    words[15] = (each.structure.address >> 32) as u32;
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::chunks::trace::INSTANCE_BYTES;

    #[test]
    fn records_name_their_instance_and_structure_with_the_mask_clear() {
        assert_eq!(std::mem::size_of::<vk::AccelerationStructureInstanceKHR>() as u64, INSTANCE_BYTES);
        // The mask word's place: after the 3×4 transform.
        assert_eq!(std::mem::offset_of!(vk::AccelerationStructureInstanceKHR, instance_custom_index_and_mask), MASK_WORD * 4);
    }
}
