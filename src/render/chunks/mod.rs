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
    DrawCommand, InstanceData, InstanceSlot, PaletteMatrix, SkinnedVertex, WorkGroup, MAX_CHUNKS, MAX_LEVELS,
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

/// Per work table (`Table`), the most groups one instance appends to it: its vertex groups in
/// workgroups of `skin_workgroup` vertices (where the skin pass runs), and its triangle groups for
/// `triangles`' index counts, the full mesh's and the light run's level's (where the triangle pass
/// runs, the light's where it has room); 0 where no pass reads the table.
pub fn table_rooms(vertices: u64, skin_workgroup: Option<u32>, triangles: Option<(u64, Option<u64>)>) -> [u64; 3] {
    let (camera, light) = triangles.map_or((0, None), |(full, light)| (triangle_groups(full), light));
    [skin_workgroup.map_or(0, |size| vertices.div_ceil(u64::from(size))), camera, light.map_or(0, triangle_groups)]
}

/// Of the largest memory heap, what the per-instance buffers may take: the rest is left for the
/// model, the shadow map, the render targets and the driver.
pub const HEAP_SHARE: f64 = 0.8;

/// What `instance_count` instances of a model cost with a strategy, and the most that would fit.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryPlan {
    pub chunking: Chunking,
    /// GPU-visible bytes one instance adds: skinned vertices (`compute`: one copy; `cpu`: a
    /// host-visible copy per frame in flight), palettes, per-frame parameters, its skin-list slot
    /// and its draw commands.
    pub bytes_per_instance: u64,
    /// `bytes_per_instance × instance_count`.
    pub instance_bytes: u64,
    /// The largest instance count this device takes, and the limit that sets it.
    pub max_instances: u32,
    pub limiting: String,
    /// The triangle pass keeps the light's triangles too, with room for this level's (the finest
    /// whose copy of the culled indices still lets the count fit; None: no room, or no triangle
    /// pass). The light's run happens in frames whose shadow map takes this level or a coarser one.
    pub light_level: Option<u32>,
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

impl MemoryPlan {
    /// The plan for `instance_count` instances of `models` (each counted as the largest:
    /// `Shape::of_models`), or an error naming the limit they exceed and the largest count that
    /// fits. `settings`: room for the light's run; lowered limits (tests).
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
        let shape = Shape::largest(&shapes);
        let limits = PlanLimits { binding: binding_range(device, settings), heap, dispatch_rows: rows };
        let plan = match (models, settings.light_culling) {
            ([_, _, ..], _) => MemoryPlan::for_mix(&shapes, strategy, instance_count, limits),
            (_, true) => MemoryPlan::with_light_culling(shape, strategy, instance_count, limits),
            (_, false) => MemoryPlan::for_limits(shape, strategy, instance_count, limits),
        };
        if instance_count > plan.max_instances {
            return Err(gpu::Error::Other(format!(
                "{instance_count} instances of {} ({} vertices, {} joints) with the {} strategy exceed {}: at most \
                 {} instances fit (each needs {} bytes)",
                models.iter().map(|model| model.name.as_str()).collect::<Vec<_>>().join(", "),
                shape.vertices,
                shape.joints,
                strategy.name(),
                plan.limiting,
                plan.max_instances,
                plan.bytes_per_instance
            )));
        }
        Ok(plan)
    }

    /// Refuses, before any device exists, a count that no Vulkan device could hold: the plan with
    /// the widest limits the API's types allow (a 4 GiB binding range, an unbounded heap, 2³²
    /// dispatch rows). The viewer and the bench check this before laying out a single instance;
    /// `new` then checks the device's own limits.
    pub fn check_any_device(models: &[&Model], strategy: Strategy, instance_count: u32) -> Result<(), String> {
        let plan = MemoryPlan::for_limits(
            Shape::of_models(models),
            strategy,
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

    /// The plan from the numbers alone.
    pub fn for_limits(shape: Shape, strategy: Strategy, instance_count: u32, limits: PlanLimits) -> MemoryPlan {
        MemoryPlan::with_light_room(shape, strategy, instance_count, limits, (None, None))
    }

    /// The plan for an even mix of models of `shapes` (as `SceneSetup::with_models` lays them out):
    /// chunks and per-instance rooms (work tables, joint positions, draw commands) sized for the
    /// largest, as the renderer makes them; an instance's own skinned vertices and palettes
    /// (the renderer fills chunks by bytes) counted at the mix's mean.
    /// A chunk holds whole rounds of the mix (each model once a round, as `crowd_model` deals
    /// them), as many as one binding holds.
    pub fn for_mix(shapes: &[Shape], strategy: Strategy, instance_count: u32, limits: PlanLimits) -> MemoryPlan {
        let largest = Shape::largest(shapes);
        let round = |bytes: fn(Shape) -> u64| shapes.iter().map(|&shape| bytes(shape)).sum::<u64>();
        let models = shapes.len().max(1) as u64;
        let mix = Mix {
            data: shapes.iter().map(|&shape| instance_data_bytes(shape, strategy)).sum::<u64>() / models,
            skinned: round(|shape| shape.vertices.max(1) * size_of::<SkinnedVertex>() as u64),
            palettes: round(palette_bytes),
            models,
        };
        MemoryPlan::with_light_room(largest, strategy, instance_count, limits, (None, Some(mix)))
    }

    /// `for_limits`, with room for the triangle pass's light run of the finest level whose copy
    /// still lets the count fit; without, where none does.
    pub fn with_light_culling(shape: Shape, strategy: Strategy, instance_count: u32, limits: PlanLimits) -> MemoryPlan {
        let without = MemoryPlan::with_light_room(shape, strategy, instance_count, limits, (None, None));
        (0..shape.levels.min(MAX_LEVELS as u64) as u32)
            .map(|level| MemoryPlan::with_light_room(shape, strategy, instance_count, limits, (Some(level), None)))
            .find(|plan| plan.light_level.is_some() && instance_count <= plan.max_instances)
            .unwrap_or(without)
    }

    /// `for_limits` with room for the light's culled triangles of `light_level` or none (only the
    /// `compute` strategy's triangle pass keeps them); `mix`: an instance's own data
    /// (`instance_data_bytes`) at a mix's mean rather than `shape`'s, and chunks of whole rounds.
    fn with_light_room(
        shape: Shape,
        strategy: Strategy,
        instance_count: u32,
        limits: PlanLimits,
        (light_level, mix): (Option<u32>, Option<Mix>),
    ) -> MemoryPlan {
        let PlanLimits { binding: range, heap, dispatch_rows: max_dispatch_rows } = limits;
        let vertices = shape.vertices.max(1);
        let joints = shape.joints.max(1);
        let meshes = shape.meshes.max(1);
        let skinned = vertices * size_of::<SkinnedVertex>() as u64;
        // Each joint's matrix and dual quaternion, a header, the morph block (common.glsl: the slots),
        // twice: this frame's and the previous block, for the motion vectors.
        let palettes = 2 * (2 * joints + 1 + shape.morph_slots) * size_of::<PaletteMatrix>() as u64;
        let frames = FRAMES_IN_FLIGHT as u64;
        // Parameters per frame in flight, its slot, a skin-list slot, a debug box, a palette-list
        // slot and its palette's frame (animation LOD), its motion word, and draw commands.
        let fixed = size_of::<InstanceData>() as u64 * frames
            + size_of::<InstanceSlot>() as u64
            + 4
            + 32
            + 4
            + 4
            + 4
            + 2 * meshes * size_of::<DrawCommand>() as u64;
        // The palette pass's joint positions (the skeleton debug view), with the palettes.
        let joint_positions = joints * 16;
        // The triangle pass's output (`compute`): a copy of the index buffer in 16-bit indices and a
        // command per mesh, for models whose instance-relative indices fit 16 bits.
        let culled_indices = match strategy {
            Strategy::Compute if culls_triangles(shape) => shape.indices * 2,
            _ => 0,
        };
        let culled_commands = if culled_indices > 0 { meshes * size_of::<DrawCommand>() as u64 } else { 0 };
        // The light's run keeps another copy of both, for its level's indices.
        let light_level = light_level.filter(|_| culled_indices > 0);
        let light_bytes = light_level.map_or(0, |level| shape.level_indices[level as usize] * 2 + culled_commands);
        // The cull pass's work tables (`compute`): an entry per vertex group for the skin pass (at
        // the narrowest workgroup a tuning may pick), and per triangle group for the triangle
        // pass's camera run (the full mesh's) and light run (its level's).
        let table_groups = table_rooms(
            vertices,
            (strategy == Strategy::Compute).then_some(MIN_SKIN_WORKGROUP),
            (culled_indices > 0).then(|| (shape.indices, light_level.map(|level| shape.level_indices[level as usize]))),
        );
        let table_bytes = table_groups.iter().sum::<u64>() * size_of::<WorkGroup>() as u64;
        let bytes_per_instance = fixed
            + table_bytes
            + match strategy {
                Strategy::Compute => skinned + palettes + joint_positions + culled_indices + culled_commands + light_bytes,
                Strategy::Vertex => palettes + joint_positions,
                // Per frame in flight, the skinned vertices and (the motion vectors) their
                // positions last frame, 12 bytes a vertex.
                Strategy::Cpu => (skinned + vertices * 12) * frames + joint_positions,
            }
            - instance_data_bytes(shape, strategy)
            + mix.map_or_else(|| instance_data_bytes(shape, strategy), |mix| mix.data);

        // Instances per chunk: as many as one binding holds of the skinned vertices, the palettes and
        // the culled indices, and no more than there are.
        let mut per_chunk = match mix {
            // Whole rounds of the mix: what each chunk holds is then known to the byte.
            Some(mix) => ((range / mix.skinned).min(range / mix.palettes) * mix.models).min(u64::from(u32::MAX)) as u32,
            None => (range / skinned).min(range / palettes).min(range / culled_indices.max(1)).min(u64::from(u32::MAX)) as u32,
        };
        // The culled indices are laid out in whole groups ([`group_size`]): where rounding a
        // chunk up to whole groups would overflow the binding, the chunk holds whole groups only.
        if culled_indices > 0 && per_chunk > 0 {
            let group = group_size(vertices.min(u64::from(u32::MAX)) as u32, per_chunk);
            if u64::from(per_chunk.div_ceil(group) * group) * culled_indices > range {
                per_chunk = per_chunk / group * group;
            }
        }
        let instances_per_chunk = per_chunk.clamp(1, instance_count.max(1));

        let candidates: Vec<(u64, String)> = vec![
            (
                u64::from(per_chunk) * u64::from(MAX_CHUNKS),
                format!(
                    "{MAX_CHUNKS} chunks of {per_chunk} instances (maxStorageBufferRange {range} bytes per chunk; \
                     {skinned} bytes of skinned vertices and {palettes} of palettes per instance)"
                ),
            ),
            (
                ((heap as f64 * HEAP_SHARE) as u64).saturating_sub(shape.clip_bytes) / bytes_per_instance,
                format!(
                    "{:.0}% of the largest memory heap ({} MiB), less the clips' {} bytes",
                    HEAP_SHARE * 100.0,
                    heap >> 20,
                    shape.clip_bytes
                ),
            ),
            // The clips' keys and tracks are one binding (`key_values`): past its range, nothing fits.
            (
                if shape.clip_bytes > range { 0 } else { u64::MAX },
                format!("maxStorageBufferRange {range} bytes for the clips' {} bytes", shape.clip_bytes),
            ),
            (range / joint_positions, format!("maxStorageBufferRange {range} bytes for the joint positions ({joints} joints)")),
            (
                (u64::from(ROW_WORKGROUPS) * u64::from(max_dispatch_rows))
                    .checked_div(table_groups.iter().copied().max().unwrap_or(0))
                    .unwrap_or(u64::MAX),
                format!(
                    "maxComputeWorkGroupCount[1] = {max_dispatch_rows} rows of at most 65,535 workgroups for a work table \
                     ({} groups per instance at most)",
                    table_groups.iter().max().unwrap_or(&0)
                ),
            ),
            (
                range.checked_div(table_bytes).unwrap_or(u64::MAX),
                format!("maxStorageBufferRange {range} bytes for the work tables ({table_bytes} bytes per instance)"),
            ),
            (
                range / (meshes * size_of::<DrawCommand>() as u64),
                format!("maxStorageBufferRange {range} bytes for the draw commands ({meshes} meshes per instance)"),
            ),
        ];
        let (max_instances, limiting) = candidates
            .into_iter()
            .min_by_key(|(count, _)| *count)
            .map(|(count, why)| (count.min(u64::from(u32::MAX)) as u32, why))
            .unwrap_or((0, String::new()));
        let chunk_count = instance_count.max(1).div_ceil(instances_per_chunk);
        MemoryPlan {
            chunking: Chunking { instances_per_chunk, chunk_count },
            bytes_per_instance,
            instance_bytes: bytes_per_instance * u64::from(instance_count),
            max_instances,
            limiting,
            light_level,
            trace: None,
        }
    }
}

/// A mix's sizes for the plan (`MemoryPlan::for_mix`).
#[derive(Clone, Copy, Debug)]
struct Mix {
    /// An instance's own data (`instance_data_bytes`), on average.
    data: u64,
    /// One instance of each model: skinned vertices and palette bytes.
    skinned: u64,
    palettes: u64,
    models: u64,
}

/// An instance's palette slots in bytes: each joint's matrix and dual quaternion, a header, the
/// morph block (common.glsl: the slots), twice (this frame's and the previous block).
fn palette_bytes(shape: Shape) -> u64 {
    2 * (2 * shape.joints.max(1) + 1 + shape.morph_slots) * size_of::<PaletteMatrix>() as u64
}

/// What one instance of `shape` takes of its own, which the renderer packs by bytes into chunks:
/// its skinned vertices (`compute`; `cpu`: a copy per frame in flight, and last frame's positions)
/// and its palette slots (not `cpu`).
fn instance_data_bytes(shape: Shape, strategy: Strategy) -> u64 {
    let vertices = shape.vertices.max(1);
    let skinned = vertices * size_of::<SkinnedVertex>() as u64;
    let palettes = palette_bytes(shape);
    match strategy {
        Strategy::Compute => skinned + palettes,
        Strategy::Vertex => palettes,
        Strategy::Cpu => (skinned + vertices * 12) * FRAMES_IN_FLIGHT as u64,
    }
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
mod tests {
    use super::*;

    #[test]
    fn the_clips_take_their_bytes_of_the_heap_before_any_instance() {
        let limits = PlanLimits { binding: 1 << 30, heap: 1 << 30, dispatch_rows: u32::MAX };
        let without = MemoryPlan::for_limits(figure_like(), Strategy::Compute, 1, limits);
        assert!(without.limiting.contains("heap"), "{}", without.limiting);
        let half = ((1u64 << 30) as f64 * HEAP_SHARE / 2.0) as u64;
        let with = MemoryPlan::for_limits(Shape { clip_bytes: half, ..figure_like() }, Strategy::Compute, 1, limits);
        assert!(
            with.max_instances.abs_diff(without.max_instances / 2) <= 1,
            "{} against {}",
            with.max_instances,
            without.max_instances
        );
        let unbindable =
            MemoryPlan::for_limits(Shape { clip_bytes: (1 << 30) + 1, ..figure_like() }, Strategy::Compute, 1, limits);
        assert_eq!(unbindable.max_instances, 0);
        assert!(unbindable.limiting.contains("clips"), "{}", unbindable.limiting);
    }

    fn figure_like() -> Shape {
        // No triangles: the triangle pass adds nothing, so the figures below are the skinned ones.
        Shape {
            vertices: 2000,
            joints: 24,
            morph_slots: 0,
            meshes: 1,
            indices: 0,
            levels: 1,
            level_indices: [0; MAX_LEVELS],
            clip_bytes: 0,
        }
    }

    #[test]
    fn chunks_fit_one_binding_and_cover_every_instance() {
        let model = figure_like();
        let range = 128 << 20;
        let plan = MemoryPlan::for_limits(
            model,
            Strategy::Compute,
            10_000,
            PlanLimits { binding: range, heap: 2 << 30, dispatch_rows: 65_535 },
        );
        let chunking = plan.chunking;
        // 2,000 vertices × 28 bytes = 56,000 bytes an instance: 2,396 instances in 128 MiB.
        assert_eq!(chunking.instances_per_chunk, 2396);
        assert_eq!(chunking.chunk_count, 5);
        assert!(u64::from(chunking.instances_per_chunk) * 56_000 <= range);
        let covered: u32 = (0..chunking.chunk_count).map(|chunk| chunking.range(chunk, 10_000).1).sum();
        assert_eq!(covered, 10_000);
        assert_eq!(chunking.range(4, 10_000), (4 * 2396, 10_000 - 4 * 2396));
        assert!(plan.max_instances >= 10_000);
    }

    #[test]
    fn culled_indices_fill_a_chunk_in_whole_groups() {
        // 60,000 indices: 120,000 bytes of culled indices an instance, more than the 56,000 of
        // skinned vertices, so they bound the chunk: 1,118 instances, not a whole number of the
        // 32-instance groups (65,536 / 2,000 vertices), whose last would overflow the binding.
        let mut level_indices = [0; MAX_LEVELS];
        level_indices[0] = 60_000;
        let shape = Shape {
            vertices: 2000,
            joints: 24,
            morph_slots: 0,
            meshes: 1,
            indices: 60_000,
            levels: 1,
            level_indices,
            clip_bytes: 0,
        };
        let range = 128 << 20;
        let plan = MemoryPlan::with_light_culling(
            shape,
            Strategy::Compute,
            5_000,
            PlanLimits { binding: range, heap: 1 << 40, dispatch_rows: 65_535 },
        );
        assert_eq!(plan.chunking.instances_per_chunk, 1_088);
        assert_eq!(plan.chunking.instances_per_chunk % 32, 0);
        assert!(u64::from(plan.chunking.instances_per_chunk) * 120_000 <= range);
        // Other strategies keep no culled indices; `compute` keeps the camera's and the light's.
        let vertex = MemoryPlan::for_limits(
            shape,
            Strategy::Vertex,
            5_000,
            PlanLimits { binding: range, heap: 1 << 40, dispatch_rows: 65_535 },
        );
        assert_eq!((plan.light_level, vertex.light_level), (Some(0), None));
        // Their work tables too: 63 skin groups of 32 vertices, and 313 triangle groups of 64 for
        // each run.
        let tables = 20 * (63 + 2 * 313);
        assert_eq!(plan.bytes_per_instance - vertex.bytes_per_instance, 56_000 + 2 * (120_000 + 20) + tables);
    }

    #[test]
    fn a_hundred_thousand_figures_fit_a_24_gib_gpu() {
        // The bundled figure with its 8 levels of detail, on NVIDIA-like limits: a 4 GiB binding
        // range, a 24 GiB heap, 65,535 rows a dispatch.
        let level_indices = [20_844, 10_422, 5_208, 2_604, 1_302, 648, 324, 162];
        let figure = Shape {
            vertices: 3724,
            joints: 23,
            morph_slots: 0,
            meshes: 2,
            indices: 20_844,
            levels: 8,
            level_indices,
            clip_bytes: 0,
        };
        let plan = MemoryPlan::with_light_culling(
            figure,
            Strategy::Compute,
            100_000,
            PlanLimits { binding: u64::from(u32::MAX), heap: 24 << 30, dispatch_rows: 65_535 },
        );
        // Room for the light's copy of the full mesh's culled indices (41,688 bytes and 2 commands)
        // and its work table (109 triangle groups).
        assert_eq!((plan.bytes_per_instance, plan.light_level), (155_688 + 41_728 + 2_180, Some(0)));
        assert!(plan.max_instances >= 100_000, "{} ({})", plan.max_instances, plan.limiting);
        assert!(plan.limiting.contains("memory heap"), "{}", plan.limiting);
        // On lavapipe's 2 GiB heap, 10,000 fit with room for the third level's light copy only.
        let lavapipe = MemoryPlan::with_light_culling(
            figure,
            Strategy::Compute,
            10_000,
            PlanLimits { binding: 128 << 20, heap: 2 << 30, dispatch_rows: 65_535 },
        );
        assert_eq!((lavapipe.bytes_per_instance, lavapipe.light_level), (155_688 + 10_416 + 40 + 560, Some(2)));
        // 11,536 fit with none.
        let full = MemoryPlan::with_light_culling(
            figure,
            Strategy::Compute,
            11_536,
            PlanLimits { binding: 128 << 20, heap: 2 << 30, dispatch_rows: 65_535 },
        );
        assert_eq!((full.bytes_per_instance, full.light_level), (155_688, None));
        // Without the light's run asked for, no room for it.
        let unasked = MemoryPlan::for_limits(
            figure,
            Strategy::Compute,
            100_000,
            PlanLimits { binding: u64::from(u32::MAX), heap: 24 << 30, dispatch_rows: 65_535 },
        );
        assert_eq!((unasked.bytes_per_instance, unasked.light_level), (155_688, None));
        // With memory to spare, the chunks bound the count, well past the 65,535 rows a dispatch
        // has: the work tables' rows are as wide as that takes.
        let rows = MemoryPlan::for_limits(
            figure,
            Strategy::Compute,
            1,
            PlanLimits { binding: u64::from(u32::MAX), heap: 1 << 50, dispatch_rows: 65_535 },
        );
        assert!(
            rows.max_instances > 4 * 65_535 && rows.limiting.contains("chunks"),
            "{} ({})",
            rows.max_instances,
            rows.limiting
        );
        // Rows of at most 65,535 workgroups: a table of 117 groups an instance stops at 36.7 M.
        let few_rows = MemoryPlan::for_limits(
            figure,
            Strategy::Compute,
            1,
            PlanLimits { binding: u64::from(u32::MAX), heap: 1 << 50, dispatch_rows: 16 },
        );
        assert_eq!(few_rows.max_instances, 65_535 * 16 / 117, "{}", few_rows.limiting);
    }

    #[test]
    fn the_smallest_limit_names_itself() {
        let model = figure_like();
        // A 256 MiB heap: 80 % of it at about 57 KB an instance is the limit.
        let plan = MemoryPlan::for_limits(
            model,
            Strategy::Compute,
            100_000,
            PlanLimits { binding: 128 << 20, heap: 256 << 20, dispatch_rows: 65_535 },
        );
        assert!(plan.limiting.contains("memory heap"), "{}", plan.limiting);
        assert_eq!(u64::from(plan.max_instances), ((256u64 << 20) as f64 * 0.8) as u64 / plan.bytes_per_instance);
        // A tiny binding range: the chunk count is the limit.
        let plan = MemoryPlan::for_limits(
            model,
            Strategy::Compute,
            100,
            PlanLimits { binding: 56_000 * 2, heap: 1 << 40, dispatch_rows: 65_535 },
        );
        assert_eq!((plan.chunking.instances_per_chunk, plan.max_instances), (2, 2 * MAX_CHUNKS));
        assert!(plan.limiting.contains("chunks"), "{}", plan.limiting);
        // The vertex strategy keeps no skinned vertices.
        let vertex = MemoryPlan::for_limits(
            model,
            Strategy::Vertex,
            1,
            PlanLimits { binding: 128 << 20, heap: 1 << 40, dispatch_rows: 65_535 },
        );
        let compute = MemoryPlan::for_limits(
            model,
            Strategy::Compute,
            1,
            PlanLimits { binding: 128 << 20, heap: 1 << 40, dispatch_rows: 65_535 },
        );
        // (and no skin table: 63 groups of 32 vertices)
        assert_eq!(compute.bytes_per_instance - vertex.bytes_per_instance, 56_000 + 20 * 63);
    }
}
