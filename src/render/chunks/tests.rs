//! The memory plan's unit tests: rooms, pools, chunks and the limit that binds.

use super::*;
use crate::render::shader_types::MAX_LEVELS;

fn compute() -> PlanChoices {
    PlanChoices::new(Strategy::Compute)
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
        coarsest_vertices: 2000,
        indices_per_vertex: 0,
        clip_bytes: 0,
    }
}

/// The bundled figure with its 8 levels of detail (`vkskin inspect`).
fn figure() -> Shape {
    Shape {
        vertices: 3724,
        joints: 23,
        morph_slots: 0,
        meshes: 2,
        indices: 20_844,
        levels: 8,
        level_indices: [20_844, 10_422, 5_208, 2_604, 1_302, 648, 324, 162],
        coarsest_vertices: 53,
        indices_per_vertex: 6,
        clip_bytes: 0,
    }
}

#[test]
fn the_clips_take_their_bytes_of_the_heap_before_any_instance() {
    let limits = PlanLimits { binding: 1 << 30, heap: 1 << 30, dispatch_rows: u32::MAX };
    let without = MemoryPlan::for_limits(figure_like(), compute(), 1, limits);
    assert!(without.limiting.contains("heap"), "{}", without.limiting);
    let half = ((1u64 << 30) as f64 * HEAP_SHARE / 2.0) as u64;
    let with = MemoryPlan::for_limits(Shape { clip_bytes: half, ..figure_like() }, compute(), 1, limits);
    assert!(with.max_instances < without.max_instances, "{} against {}", with.max_instances, without.max_instances);
    let unbindable = MemoryPlan::for_limits(Shape { clip_bytes: (1 << 30) + 1, ..figure_like() }, compute(), 1, limits);
    assert_eq!(unbindable.max_instances, 0);
    assert!(unbindable.limiting.contains("clips"), "{}", unbindable.limiting);
}

#[test]
fn chunks_fit_one_binding_and_cover_every_instance() {
    let range = 128 << 20;
    let limits = PlanLimits { binding: range, heap: 1 << 40, dispatch_rows: 65_535 };
    for choices in [compute(), PlanChoices { traced: true, ..compute() }, PlanChoices::new(Strategy::Vertex)] {
        let plan = MemoryPlan::for_limits(figure_like(), choices, 10_000, limits);
        let chunking = plan.chunking;
        assert!(u64::from(chunking.chunk_count) <= u64::from(MAX_CHUNKS));
        assert!(plan.pools.vertex_room * SKINNED_BYTES <= range, "{choices:?}: {:?}", plan.pools);
        assert!(u64::from(chunking.instances_per_chunk) * palette_bytes(figure_like()) <= range);
        let covered: u32 = (0..chunking.chunk_count).map(|chunk| chunking.range(chunk, 10_000).1).sum();
        assert_eq!(covered, 10_000);
        assert!(plan.max_instances >= 10_000);
    }
    // Unpooled (traced shadows), every instance keeps its full mesh: 2,000 vertices × 28 bytes,
    // 2,396 instances a 128 MiB chunk, 5 chunks of 2,000.
    let traced = MemoryPlan::for_limits(figure_like(), PlanChoices { traced: true, ..compute() }, 10_000, limits);
    assert_eq!((traced.chunking.chunk_count, traced.chunking.instances_per_chunk), (5, 2_000));
    assert_eq!(traced.pools.vertex_room, 2_000 * 2_000);
    assert!(!traced.pools.pooled);
}

#[test]
fn pools_hold_every_full_mesh_of_a_small_crowd_and_the_screen_of_a_large_one() {
    let limits = PlanLimits { binding: 128 << 20, heap: 1 << 40, dispatch_rows: 65_535 };
    // 1,000 figures: the pools take every full mesh (no frame can ask more), as the
    // unpooled plan does.
    let small = MemoryPlan::for_limits(figure(), compute(), 1_000, limits);
    let rooms = small.pools.vertex_room * u64::from(small.chunking.chunk_count);
    assert!(rooms >= 1_000 * 3_724, "{rooms}");
    // 100,000: the screen's vertices and every instance's coarsest level, not 100,000 full
    // meshes.
    let large = MemoryPlan::for_limits(figure(), compute(), 100_000, limits);
    let rooms = large.pools.vertex_room * u64::from(large.chunking.chunk_count);
    let budget = POOL_SCREEN_VERTICES + 100_000 * 53;
    assert!(rooms >= budget && rooms < budget + budget / 50, "{rooms} for a budget of {budget}");
    // Culled indices: six a vertex of the pool, for each view.
    assert_eq!(large.pools.index_room, large.pools.vertex_room * 6);
    assert_eq!(large.pools.index_views, 1);
    let unpooled = MemoryPlan::for_limits(figure(), PlanChoices { traced: true, ..compute() }, 100_000, limits);
    assert!(large.instance_bytes * 10 < unpooled.instance_bytes, "{} against {}", large.instance_bytes, unpooled.instance_bytes);
}

#[test]
fn a_million_figures_fit_lavapipes_heap_with_little_of_their_own() {
    // Mesa 25's lavapipe: 128 MiB bindings, its heap the machine's 23.5 GiB.
    let lavapipe = PlanLimits { binding: 128 << 20, heap: 47 << 29, dispatch_rows: 65_535 };
    let plan = MemoryPlan::for_limits(figure(), compute(), 1_000_000, lavapipe);
    assert!(plan.max_instances >= 1_000_000, "{} ({})", plan.max_instances, plan.limiting);
    assert!(plan.chunking.chunk_count <= MAX_CHUNKS);
    // What an instance keeps of its own besides its palettes: its record, data and upload room,
    // its slot, its list entries and draw commands, at most 512 bytes (440).
    let own = plan.fixed_bytes_per_instance - palette_bytes(figure());
    assert!(own <= 512, "{own}");
    // And on a 24 GiB GPU (4 GiB bindings) with the light's run, a million again.
    let gpu = PlanLimits { binding: u64::from(u32::MAX), heap: 24 << 30, dispatch_rows: 65_535 };
    let light = MemoryPlan::for_limits(figure(), PlanChoices { light_culling: true, ..compute() }, 1_000_000, gpu);
    assert!(light.max_instances >= 1_000_000, "{} ({})", light.max_instances, light.limiting);
    assert_eq!((light.light_culling, light.pools.index_views), (true, 2));
}

#[test]
fn the_smallest_limit_names_itself() {
    // A 256 MiB heap: 80 % of it is the limit, and the message names the pools' budget.
    let plan = MemoryPlan::for_limits(
        figure_like(),
        compute(),
        100_000,
        PlanLimits { binding: 128 << 20, heap: 256 << 20, dispatch_rows: 65_535 },
    );
    assert!(plan.limiting.contains("memory heap") && plan.limiting.contains("pool"), "{}", plan.limiting);
    assert!(plan.max_instances < 100_000);
    let fits = MemoryPlan::for_limits(
        figure_like(),
        compute(),
        plan.max_instances,
        PlanLimits { binding: 128 << 20, heap: 256 << 20, dispatch_rows: 65_535 },
    );
    assert!(fits.instance_bytes as f64 <= (256u64 << 20) as f64 * HEAP_SHARE);
    // A tiny binding range: the chunk count is the limit (each chunk's palettes: 4,800 bytes
    // an instance, 2 a chunk).
    let plan = MemoryPlan::for_limits(
        figure_like(),
        PlanChoices::new(Strategy::Vertex),
        100,
        PlanLimits { binding: 2 * 4_800, heap: 1 << 40, dispatch_rows: 65_535 },
    );
    assert_eq!(plan.max_instances, 2 * MAX_CHUNKS);
    assert!(plan.limiting.contains("chunks"), "{}", plan.limiting);
}
