//! What N instances cost in GPU memory, how they are split into chunks that each fit one
//! storage-buffer binding, and the largest N a device can take.
//!
//! One storage-buffer binding reaches at most `maxStorageBufferRange` bytes (128 MiB on lavapipe:
//! about 4.8 M skinned vertices of 28 bytes), so the skinned vertices and the palettes are split
//! into chunks of `instances_per_chunk` instances, each its own buffer, bound as an array
//! (`MAX_CHUNKS` in common.glsl). The instance count is then bounded by memory and by the number
//! of chunks, not by one binding; a count past either is refused before anything is allocated.

mod shape;
mod slots;
pub mod trace;

pub use shape::Shape;
pub use slots::{group_size, padded_chunks, Chunking, DrawRun, InstanceSlots, SlotSize, MAX_VERTICES};

use ash::vk;

use super::settings::RenderSettings;
use super::shader_types::{
    DrawCommand, InstanceData, InstanceRecord, InstanceSlot, PaletteMatrix, SkinnedVertex, WorkGroup, MAX_CHUNKS,
};
use super::{Strategy, FRAMES_IN_FLIGHT};
use crate::gpu::{self, Device};
use crate::model::Model;

/// The narrowest skin workgroup a tuning may choose (`SkinTuning`): the skin table's room per
/// instance assumes it.
pub const MIN_SKIN_WORKGROUP: u32 = 32;

/// Triangles a workgroup of the triangle pass tests (its `WORKGROUP_SIZE`): the plan sizes the
/// pass's work tables by it.
pub const TRIANGLE_WORKGROUP: u32 = 64;

/// The most workgroups a dispatch's row may have: the least maxComputeWorkGroupCount[0] a device
/// has. A work table's dispatch makes its rows at most this wide (`cull::table_row`).
pub const ROW_WORKGROUPS: u32 = 65_535;

/// The triangle pass's workgroups for `index_count` indices.
pub fn triangle_groups(index_count: u64) -> u64 {
    (index_count / 3).div_ceil(u64::from(TRIANGLE_WORKGROUP))
}

/// Of the largest memory heap, what the per-instance buffers may take: the rest is left for the
/// model, the shadow map, the render targets and the driver.
pub const HEAP_SHARE: f64 = 0.8;

/// The pools' screen term: skinned vertices a frame may need for the instances drawn finer than
/// their coarsest levels, one a pixel of a 3840 × 2160 screen. The cull pass picks the coarsest
/// level whose error covers at most a pixel, so the vertices of what is drawn grow with the pixels
/// it covers, not with the instance count; a frame that needs more (a crowd packed close to the
/// camera, overlapping many times) draws its farthest instances coarser (`cull.comp`: the budget).
pub const POOL_SCREEN_VERTICES: u64 = 3840 * 2160;

/// Bytes of one skinned vertex, of one culled index and of one draw command.
const SKINNED_BYTES: u64 = size_of::<SkinnedVertex>() as u64;
const CULLED_INDEX_BYTES: u64 = 2;
const COMMAND_BYTES: u64 = size_of::<DrawCommand>() as u64;

/// What a memory plan is made for besides the models and the count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanChoices {
    pub strategy: Strategy,
    /// The triangle pass's light run has its own pool of culled indices (`--light-culling on`).
    pub light_culling: bool,
    /// `--shadows ray`: each instance's structure is built from fixed rooms, so its skinned
    /// vertices keep their room rather than take one from the pool each frame.
    pub traced: bool,
    /// The vertex pools' budget over the coarsest levels (`POOL_SCREEN_VERTICES`; tests lower it).
    pub screen_vertices: u64,
}

impl PlanChoices {
    pub fn new(strategy: Strategy) -> PlanChoices {
        PlanChoices { strategy, light_culling: false, traced: false, screen_vertices: POOL_SCREEN_VERTICES }
    }

    /// Whether the skinned vertices come from pools: the `compute` strategy without traced shadows.
    pub fn pooled(&self) -> bool {
        self.strategy == Strategy::Compute && !self.traced
    }
}

/// Where the instances' per-frame data lives: per chunk, a pool of skinned vertices (or, unpooled,
/// every instance's full mesh) and a pool of culled indices per view of the triangle pass; the
/// work tables' lengths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pools {
    /// Skinned vertices placed by level each frame (false: each instance keeps its room).
    pub pooled: bool,
    /// Skinned vertices one chunk's buffer holds.
    pub vertex_room: u64,
    /// Culled indices one chunk's buffer holds, per view of the triangle pass (0: no triangle pass).
    pub index_room: u64,
    /// Views with culled indices: the camera's, and the light's with `--light-culling on`.
    pub index_views: u32,
    /// Each work table's entries (`Table`): the skin table's and the triangle pass's runs'.
    pub table_entries: [u64; 3],
}

/// What `instance_count` instances of a model cost with a strategy, and the most that would fit.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryPlan {
    pub chunking: Chunking,
    pub pools: Pools,
    /// GPU-visible bytes each instance has of its own: palettes, per-frame parameters, its slot,
    /// list entries and draw commands (`cpu`: its host-visible skinned vertices; unpooled
    /// `compute`: its room of skinned vertices).
    pub fixed_bytes_per_instance: u64,
    /// `instance_bytes` over the count: what an instance costs on average, the pools included.
    pub bytes_per_instance: u64,
    /// Every instance's own bytes, the pools and the work tables.
    pub instance_bytes: u64,
    /// The largest instance count this device takes, and the limit that sets it.
    pub max_instances: u32,
    pub limiting: String,
    /// The triangle pass keeps the light's triangles too (a pool of its own).
    pub light_culling: bool,
    /// `--shadows ray`: the acceleration structures' rooms and bytes, and how many instances trace
    /// (the renderer fills it in from the device's sizes).
    pub trace: Option<trace::TracePlan>,
}

/// The device limits a plan must keep within.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanLimits {
    /// Bytes one storage-buffer binding may hold (maxStorageBufferRange).
    pub binding: u64,
    /// Bytes of the largest device-local heap.
    pub heap: u64,
    /// Rows one dispatch may have (maxComputeWorkGroupCount[1]).
    pub dispatch_rows: u32,
}

/// One count's layout: its chunks, pools and bytes, and the limits it breaks.
struct Layout {
    chunking: Chunking,
    pools: Pools,
    fixed: u64,
    total: u64,
    broken: Vec<String>,
}

impl MemoryPlan {
    /// The plan for `instance_count` instances of `models` (a mix counted as `for_mix` says), or an
    /// error naming the limit they exceed and the largest count that fits. `settings`: the light's
    /// run, traced shadows, a lowered pool or device limits (tests).
    pub fn new(
        device: &Device,
        models: &[&Model],
        strategy: Strategy,
        instance_count: u32,
        settings: RenderSettings,
    ) -> gpu::Result<MemoryPlan> {
        let heap = largest_heap(device).min(settings.heap.unwrap_or(u64::MAX));
        let rows = device.limits().max_compute_work_group_count[1];
        let shapes: Vec<Shape> = models.iter().map(|model| Shape::of(model)).collect();
        let limits = PlanLimits { binding: binding_range(device, settings), heap, dispatch_rows: rows };
        let choices = PlanChoices {
            strategy,
            light_culling: settings.light_culling,
            traced: settings.shadows == super::Shadows::Ray,
            screen_vertices: settings.pool_vertices.unwrap_or(POOL_SCREEN_VERTICES),
        };
        let plan = MemoryPlan::for_mix(&shapes, choices, instance_count, limits);
        if instance_count > plan.max_instances {
            let shape = Shape::largest(&shapes);
            return Err(gpu::Error::Other(format!(
                "{instance_count} instances of {} ({} vertices, {} joints) with the {} strategy exceed {}: at most \
                 {} instances fit",
                models.iter().map(|model| model.name.as_str()).collect::<Vec<_>>().join(", "),
                shape.vertices,
                shape.joints,
                strategy.name(),
                plan.limiting,
                plan.max_instances,
            )));
        }
        Ok(plan)
    }

    /// Refuses, before any device exists, a count that no Vulkan device could hold: the plan with
    /// the widest limits the API's types allow (a 4 GiB binding range, an unbounded heap, 2³²
    /// dispatch rows). The viewer and the bench check this before laying out a single instance;
    /// `new` then checks the device's own limits.
    pub fn check_any_device(models: &[&Model], strategy: Strategy, instance_count: u32) -> Result<(), String> {
        let shapes: Vec<Shape> = models.iter().map(|model| Shape::of(model)).collect();
        let plan = MemoryPlan::for_mix(
            &shapes,
            PlanChoices::new(strategy),
            instance_count,
            PlanLimits { binding: u64::from(u32::MAX), heap: u64::MAX, dispatch_rows: u32::MAX },
        );
        if instance_count > plan.max_instances {
            return Err(format!(
                "{instance_count} instances of {} with the {} strategy exceed what any Vulkan device can bind: at most {} \
                 ({})",
                models.iter().map(|model| model.name.as_str()).collect::<Vec<_>>().join(", "),
                strategy.name(),
                plan.max_instances,
                plan.limiting
            ));
        }
        Ok(())
    }

    /// The plan for one model's instances.
    pub fn for_limits(shape: Shape, choices: PlanChoices, instance_count: u32, limits: PlanLimits) -> MemoryPlan {
        MemoryPlan::for_mix(&[shape], choices, instance_count, limits)
    }

    /// The plan for an even mix of models of `shapes` (as `SceneSetup::with_models` lays them out):
    /// rooms and pools sized for the largest (`Shape::largest`), each instance's own palettes at
    /// the mix's mean. The largest count that fits is found by bisection over the layouts.
    pub fn for_mix(shapes: &[Shape], choices: PlanChoices, instance_count: u32, limits: PlanLimits) -> MemoryPlan {
        let layout = |count: u32| Layout::new(shapes, choices, count, limits);
        let (mut fits, mut breaks) = (0u32, u32::MAX);
        if layout(u32::MAX).broken.is_empty() {
            fits = u32::MAX;
        }
        while breaks - fits > 1 && fits < u32::MAX {
            let middle = fits + (breaks - fits) / 2;
            match layout(middle).broken.is_empty() {
                true => fits = middle,
                false => breaks = middle,
            }
        }
        let limiting = if fits == u32::MAX { String::new() } else { layout(fits + 1).broken.join("; ") };
        let Layout { chunking, pools, fixed, total, .. } = layout(instance_count.max(1));
        MemoryPlan {
            chunking,
            pools,
            fixed_bytes_per_instance: fixed,
            bytes_per_instance: total / u64::from(instance_count.max(1)),
            instance_bytes: total,
            max_instances: fits,
            limiting,
            light_culling: pools.index_views > 1,
            trace: None,
        }
    }
}

impl MemoryPlan {
    /// The skinned-vertex pools' room in all chunks; None where the vertices are not pooled.
    pub fn pooled_vertices(&self) -> Option<u64> {
        self.pools.pooled.then(|| self.pools.vertex_room * u64::from(self.chunking.chunk_count))
    }
}

impl Layout {
    fn new(shapes: &[Shape], choices: PlanChoices, instance_count: u32, limits: PlanLimits) -> Layout {
        let range = limits.binding;
        let shape = Shape::largest(shapes);
        let count = u64::from(instance_count.max(1));
        let vertices = shape.vertices.max(1);
        let joints = shape.joints.max(1);
        let meshes = shape.meshes.max(1);
        let frames = FRAMES_IN_FLIGHT as u64;
        let strategy = choices.strategy;
        let palettes = shapes.iter().map(|&shape| palette_bytes(shape)).sum::<u64>() / shapes.len().max(1) as u64;
        let triangle_views = match strategy {
            Strategy::Compute if culls_triangles(shape) => 1 + u64::from(choices.light_culling),
            _ => 0,
        };
        let tables_read = u64::from(strategy == Strategy::Compute) + triangle_views;
        let own = own_bytes(meshes, triangle_views, tables_read);
        let skinned_room = vertices * SKINNED_BYTES;
        let fixed = own
            + match strategy {
                Strategy::Compute => palettes + if choices.pooled() { 0 } else { skinned_room },
                Strategy::Vertex => palettes,
                // Per frame in flight, the skinned vertices and (the motion vectors) their
                // positions last frame, 12 bytes a vertex.
                Strategy::Cpu => (skinned_room + vertices * 12) * frames,
            };

        // A pool of skinned vertices for `per_chunk` instances, one of `chunks`: every instance's
        // full mesh at most; pooled, the chunk's share of the screen's vertices and every
        // instance's coarsest level.
        let room_of = |per_chunk: u64, chunks: u64| match (strategy, choices.pooled()) {
            (Strategy::Compute, true) => {
                (per_chunk * vertices).min(choices.screen_vertices.div_ceil(chunks) + per_chunk * shape.coarsest_vertices.max(1))
            }
            (Strategy::Compute, false) => per_chunk * vertices,
            _ => 0,
        };
        let skinned_vertices = room_of(count, 1);
        // Chunks: as few as the palettes, the skinned vertices and the culled indices allow, each
        // holding at most one binding's range of each.
        let per_vertex_indices = shape.indices_per_vertex.max(1);
        let pooled_bytes = skinned_vertices * SKINNED_BYTES;
        let index_bytes = if triangle_views > 0 { skinned_vertices * per_vertex_indices * CULLED_INDEX_BYTES } else { 0 };
        let chunk_count = [count * palettes, pooled_bytes, index_bytes]
            .iter()
            .map(|&bytes| bytes.div_ceil(range.max(1)))
            .max()
            .unwrap_or(1)
            .max(1);
        // An instance's palettes or room never straddle a chunk: add chunks until each holds its
        // share in whole instances (past MAX_CHUNKS the count is refused anyway).
        let fits = |per_chunk: u64, vertex_room: u64| {
            per_chunk * palettes <= range
                && vertex_room * SKINNED_BYTES <= range
                && vertex_room * per_vertex_indices * CULLED_INDEX_BYTES * u64::from(triangle_views > 0) <= range
        };
        let mut chunks = chunk_count;
        let (per_chunk, vertex_room) = loop {
            let per_chunk = count.div_ceil(chunks);
            let vertex_room = room_of(per_chunk, chunks);
            if fits(per_chunk, vertex_room) || per_chunk == 1 || chunks > 2 * u64::from(MAX_CHUNKS) {
                break (per_chunk, vertex_room);
            }
            chunks += 1;
        };
        let mut broken = Vec::new();
        if !fits(per_chunk, vertex_room) {
            broken.push(format!(
                "maxStorageBufferRange {range} bytes for a chunk of {per_chunk} instances' palettes ({palettes} bytes \
                 each) and {vertex_room} skinned vertices"
            ));
        }
        let chunk_count = count.div_ceil(per_chunk);
        let index_room = match triangle_views {
            0 => 0,
            _ => (vertex_room * per_vertex_indices).min(per_chunk * shape.indices),
        };
        // Work tables: a chunk's pool in full groups, and a partial group an instance.
        let skin_entries = match strategy {
            Strategy::Compute => chunk_count * vertex_room / u64::from(MIN_SKIN_WORKGROUP) + count,
            _ => 0,
        };
        let triangle_entries = chunk_count * index_room / (3 * u64::from(TRIANGLE_WORKGROUP)) + count;
        let table_entries = [
            skin_entries,
            if triangle_views > 0 { triangle_entries } else { 0 },
            if triangle_views > 1 { triangle_entries } else { 0 },
        ];
        let pools =
            Pools { pooled: choices.pooled(), vertex_room, index_room, index_views: triangle_views as u32, table_entries };
        // Unpooled rooms are the instances' own (in `fixed`).
        let pooled_room = if choices.pooled() { vertex_room * SKINNED_BYTES } else { 0 };
        let pool_bytes = chunk_count * (pooled_room + triangle_views * index_room * CULLED_INDEX_BYTES);
        // The table entries an instance's partial groups take are in `fixed`; the pools' full groups here.
        let table_bytes = table_entries.iter().sum::<u64>().saturating_sub(tables_read * count) * size_of::<WorkGroup>() as u64;
        let positions = joint_positions_bytes(count, joints, range);
        let total = fixed * count + pool_bytes + table_bytes + positions;

        let sizes = Sizes {
            count,
            per_chunk,
            chunk_count,
            vertex_room,
            index_room,
            palettes,
            fixed,
            skinned_vertices,
            pool_bytes,
            table_bytes,
            total,
        };
        broken.extend(sizes.limits_broken(shape, choices, &table_entries, limits));
        Layout {
            chunking: Chunking { instances_per_chunk: per_chunk as u32, chunk_count: chunk_count as u32 },
            pools,
            fixed,
            total,
            broken,
        }
    }
}

/// A layout's sizes, as its limits are checked against them (`Sizes::limits_broken`).
#[derive(Clone, Copy)]
struct Sizes {
    count: u64,
    per_chunk: u64,
    chunk_count: u64,
    vertex_room: u64,
    index_room: u64,
    palettes: u64,
    fixed: u64,
    skinned_vertices: u64,
    pool_bytes: u64,
    table_bytes: u64,
    /// Every instance's own bytes, the pools, the tables and the joint positions.
    total: u64,
}

impl Sizes {
    /// The limits of `limits` these sizes break, each in words: the chunks, the heap (with the
    /// pools' budget), the clips', instance records', draw commands' and work tables' bindings,
    /// the work tables' dispatch rows and the cull pass's 32-bit sums.
    fn limits_broken(&self, shape: Shape, choices: PlanChoices, table_entries: &[u64; 3], limits: PlanLimits) -> Vec<String> {
        let PlanLimits { binding: range, heap, dispatch_rows } = limits;
        let Sizes {
            count,
            per_chunk,
            chunk_count,
            vertex_room,
            index_room,
            palettes,
            fixed,
            skinned_vertices,
            pool_bytes,
            table_bytes,
            total,
        } = *self;
        let (vertices, meshes) = (shape.vertices.max(1), shape.meshes.max(1));
        let mut broken = Vec::new();
        if chunk_count > u64::from(MAX_CHUNKS) {
            broken.push(format!(
                "{MAX_CHUNKS} chunks of maxStorageBufferRange {range} bytes (each chunk's palettes at {palettes} bytes an \
                 instance, its skinned-vertex pool of {vertex_room} vertices, its culled-index pool of {index_room})"
            ));
        }
        let heap_share = ((heap as f64 * HEAP_SHARE) as u64).saturating_sub(shape.clip_bytes);
        if total > heap_share {
            broken.push(format!(
                "{:.0}% of the largest memory heap ({} MiB) less the clips' {} bytes: {fixed} bytes an instance, and \
                 pools of {} bytes (the skinned-vertex pool's budget: {skinned_vertices} vertices, a {} pixel screen's \
                 and each instance's coarsest level's)",
                HEAP_SHARE * 100.0,
                heap >> 20,
                shape.clip_bytes,
                pool_bytes + table_bytes,
                choices.screen_vertices
            ));
        }
        if shape.clip_bytes > range {
            broken.push(format!("maxStorageBufferRange {range} bytes for the clips' {} bytes", shape.clip_bytes));
        }
        // One binding each: the instance records, the draw commands, the work tables.
        let bindings = [
            ("the instances' records and data", count * size_of::<InstanceData>() as u64),
            ("the draw commands", count * meshes * COMMAND_BYTES),
            ("the work tables", table_entries.iter().sum::<u64>() * size_of::<WorkGroup>() as u64),
        ];
        for (what, bytes) in bindings {
            if bytes > range {
                broken.push(format!("maxStorageBufferRange {range} bytes for {what} ({bytes} bytes)"));
            }
        }
        let most_entries = table_entries.iter().copied().max().unwrap_or(0);
        if most_entries > u64::from(ROW_WORKGROUPS) * u64::from(dispatch_rows) {
            broken.push(format!(
                "maxComputeWorkGroupCount[1] = {dispatch_rows} rows of at most 65,535 workgroups for a work table of \
                 {most_entries} groups"
            ));
        }
        // The cull pass sums a chunk's vertices in 32 bits.
        if per_chunk * vertices > u64::from(u32::MAX) {
            broken.push(format!("32-bit counts of a chunk's vertices ({per_chunk} instances of {vertices})"));
        }
        broken
    }
}

/// Bytes of the skeleton view's joint positions (16 a joint, `joint_stride` an instance) for
/// `instances` instances: one binding's worth (`range`) of whole instances at most; the view shows
/// the instances they hold (`PalettePass::new` makes them so).
pub fn joint_positions_bytes(instances: u64, joint_stride: u64, range: u64) -> u64 {
    let instance = 16 * joint_stride.max(1);
    (instances * instance).min(range / instance * instance)
}

/// What an instance keeps of its own besides palettes and vertex rooms: its record, its data this
/// frame, its record's room in an upload (the first frame writes every record), its slot, a skin-list entry, a debug box, a palette-list entry and its palette's frame
/// (animation LOD), its motion word, its placement, the draw commands of both views (and the
/// triangle pass's of its `triangle_views`), and an entry of each of the `tables` work tables it
/// reads for its last, partial group.
fn own_bytes(meshes: u64, triangle_views: u64, tables: u64) -> u64 {
    2 * size_of::<InstanceRecord>() as u64
        + size_of::<InstanceData>() as u64
        + size_of::<InstanceSlot>() as u64
        + 4
        + 32
        + 4
        + 4
        + 4
        + 8
        + (2 + triangle_views) * meshes * COMMAND_BYTES
        + tables * size_of::<WorkGroup>() as u64
}

/// An instance's palette slots in bytes: each joint's matrix and dual quaternion, a header, the
/// morph block (common.glsl: the slots), twice (this frame's and the previous block).
fn palette_bytes(shape: Shape) -> u64 {
    2 * (2 * shape.joints.max(1) + 1 + shape.morph_slots) * size_of::<PaletteMatrix>() as u64
}

/// Whether the `compute` strategy's triangle pass serves this model: its culled indices are
/// instance-relative 16-bit values.
pub fn culls_triangles(shape: Shape) -> bool {
    shape.meshes > 0 && shape.indices > 0 && shape.vertices <= u64::from(MAX_VERTICES)
}

/// Bytes one storage-buffer binding may hold on `device` (maxStorageBufferRange), or fewer where
/// `settings` lower it (tests).
pub fn binding_range(device: &Device, settings: RenderSettings) -> u64 {
    u64::from(device.limits().max_storage_buffer_range).min(settings.binding.unwrap_or(u64::MAX))
}

/// The size of the device's largest memory heap (device-local on a GPU; system memory on lavapipe).
pub fn largest_heap(device: &Device) -> u64 {
    let properties = unsafe { device.instance.raw.get_physical_device_memory_properties(device.physical) };
    properties.memory_heaps[..properties.memory_heap_count as usize]
        .iter()
        .filter(|heap| heap.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
        .map(|heap| heap.size)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
