//! Levels of detail on the GPU (validation on): the cull pass picks each instance's levels as the
//! CPU mirror `cull::reference_levels` does, the skin and triangle passes work from its work
//! tables, and the image stays within the stated difference of the one drawn at full detail.

use crate::common::{assert_no_validation_messages, default_model, validated_device};
use vkskin::app::imagediff::ImageDifference;
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::chunks::triangle_groups;
use vkskin::render::passes::cull::{reference_levels, Levels};
use vkskin::render::shader_types::{CullCounters, Table, WorkGroup, MAX_LEVELS};
use vkskin::render::{FrameScene, Strategy};

/// The bound README and docs state for levels of detail against full detail, at 1280×720: at most
/// this share of the pixels changes by more than `imagediff::CHANGED_ABOVE` in a channel...
const CHANGED_SHARE: f64 = 0.01;
/// ...and the image keeps at least this PSNR.
const PSNR_DB: f64 = 35.0;

/// Per instance, the level a work table of the cull pass holds it at: each instance there once,
/// as all of its level's groups (`level_groups`: vertex or triangle groups a level).
fn table_levels(
    counters: &CullCounters,
    work: &[WorkGroup],
    table: Table,
    level_groups: &[u32],
    count: usize,
) -> Vec<Option<u32>> {
    let [length, _, start, _] = counters.tables[table as usize];
    let mut groups = vec![Vec::new(); count];
    for entry in &work[start as usize..][..length as usize] {
        // A skin table's entry carries the dual-quaternion bit (LIST_DUAL_QUATERNION).
        groups[(entry.instance & 0x7FFF_FFFF) as usize].push((entry.group >> 24, entry.group & 0xFF_FFFF));
    }
    groups
        .iter_mut()
        .enumerate()
        .map(|(instance, groups)| {
            let level = groups.first()?.0;
            groups.sort();
            let want: Vec<(u32, u32)> = (0..level_groups[level as usize]).map(|group| (level, group)).collect();
            assert_eq!(*groups, want, "instance {instance} in the {table:?} table: its level's groups, each once");
            Some(level)
        })
        .collect()
}

/// Per instance, the level the camera drew it at, read from the cull pass's camera draw commands
/// (each takes its level's index range; mesh 0's is the level's first).
fn drawn_levels(headless: &HeadlessRenderer, count: usize) -> Vec<Option<u32>> {
    let culled = headless.renderer.read_back_culling().expect("read back");
    let (model, setup) = (&headless.renderer.model, &headless.renderer.setup);
    let (mesh_count, per_chunk) = (setup.mesh_draws.len() as u32, setup.chunking.instances_per_chunk);
    let mut levels = vec![None; count];
    for chunk in 0..setup.chunking.chunk_count {
        let start = (chunk * mesh_count * per_chunk) as usize;
        for command in &culled.camera_draws[start..][..culled.counters.camera_draws[chunk as usize] as usize] {
            let level =
                model.single().ranges.iter().step_by(mesh_count as usize).position(|&(first, _)| first == command.first_index);
            assert!(levels[command.first_instance as usize].is_none(), "{command:?}: drawn twice");
            levels[command.first_instance as usize] = Some(level.expect("a level's range") as u32);
        }
    }
    levels
}

/// Per instance, the level the GPU skinned it at (None with `vertex`, which fills no work table:
/// its vertex shaders skin what they draw) and the level the camera drew it at, read from the
/// cull pass's draw commands and work tables (the skin table, and the triangle pass's camera
/// table, which must agree with the draws).
fn gpu_levels(headless: &HeadlessRenderer, count: usize) -> (Option<Vec<Option<u32>>>, Vec<Option<u32>>) {
    let renderer = &headless.renderer;
    let counters: Vec<CullCounters> = renderer.read_back(&renderer.passes.cull.counters).expect("counters");
    let counters = counters[0];
    let camera = drawn_levels(headless, count);
    if renderer.setup.strategy != Strategy::Compute {
        return (None, camera);
    }
    let work: Vec<WorkGroup> = renderer.read_back(&renderer.passes.cull.work_groups).expect("work tables");
    // Each level's vertex groups (skin) and triangle groups (camera), as the model's record gives them.
    let (levels, workgroup) = (&renderer.model.single().levels, renderer.passes.skin.tuning.workgroup_size);
    let vertex_groups: Vec<u32> = levels.iter().map(|level| level.vertex_count.div_ceil(workgroup)).collect();
    let triangle_groups: Vec<u32> = levels.iter().map(|level| triangle_groups(u64::from(level.index_count)) as u32).collect();
    let skinned = table_levels(&counters, &work, Table::Skin, &vertex_groups, count);
    assert_eq!(table_levels(&counters, &work, Table::Camera, &triangle_groups, count), camera);
    for level in 0..renderer.model.single().levels.len() {
        for (levels, counted) in [(&skinned, counters.level_counts[level]), (&camera, counters.level_counts[MAX_LEVELS + level])]
        {
            let at_level = levels.iter().filter(|&&at| at == Some(level as u32)).count();
            assert_eq!(at_level, counted as usize, "level {level}'s count");
        }
    }
    (Some(skinned), camera)
}

/// Whether the mirror's choice for this instance sits within float error of a level's threshold,
/// where the GPU's rounding may pick the neighbour.
fn near_threshold(headless: &HeadlessRenderer, setup: &SceneSetup, scene: &FrameScene, instance: usize) -> bool {
    let choice = headless.renderer.level_choice(scene);
    let data = &scene.instance_data(&setup.model)[instance];
    let world = vkskin::render::passes::cull::animated_box(&setup.model, data, false).transformed(data.world());
    let distance = world.distance_to(scene.camera_position);
    choice.errors.iter().any(|&error| (error * choice.pixels_at_unit - distance).abs() <= 1e-3 * distance.max(1e-3))
}

#[test]
fn the_cull_pass_picks_levels_as_the_cpu_mirror_does() {
    let device = validated_device();
    let model = vkskin::model::lod::with_levels(&default_model());
    assert!(model.levels.len() >= 4);
    let count = 400;
    let mut setup = SceneSetup::new(model, count);
    // Low, inside the grid's edge: instances from an arm's length to the far side, and some behind.
    setup.camera.distance *= 0.3;
    setup.camera.pitch = 0.1;
    // Whole, split into chunks of 64 instances, with `vertex` (whose frames fill no work table: only
    // the level counts are compared), and with the work tables' dispatches in at most 64 rows (as
    // 100,000 instances' tables are in 65,535).
    let chunk = 64 * (setup.model.vertices.len() * 28) as u64;
    let mut whole_image = None;
    for (strategy, binding_limit, rows) in [
        (Strategy::Compute, None, None),
        (Strategy::Compute, Some(chunk), None),
        (Strategy::Vertex, None, None),
        (Strategy::Compute, None, Some(64)),
    ] {
        let mut headless =
            HeadlessRenderer::with_settings(&device, &setup, (640, 360), strategy, binding_limit.into()).expect("renderer");
        if let Some(rows) = rows {
            headless.renderer.setup.dispatch_rows = rows as u32;
        }
        let scene = setup.frame(0.4, headless.aspect());
        let image = headless.render(&scene).expect("frame");
        match (&whole_image, rows) {
            (None, _) => whole_image = Some(image),
            (Some(whole), Some(rows)) => {
                let difference = ImageDifference::between(whole, &image).expect("same size");
                assert_eq!(difference.changed, 0, "dispatches of {rows} rows: {difference}");
                // Each table's dispatch covers it in rows of its width, the last one partly, within
                // the rows allowed.
                let counters: Vec<CullCounters> =
                    headless.renderer.read_back(&headless.renderer.passes.cull.counters).expect("counters");
                let counters = counters[0];
                for table in [Table::Skin, Table::Camera] {
                    let ([width, height, 1, _], [groups, row, ..]) =
                        (counters.dispatches[table as usize], counters.tables[table as usize])
                    else {
                        panic!("the {table:?} dispatch's z is 1: {counters:?}")
                    };
                    assert!(width <= row && (height - 1) * row < groups && groups <= width * height, "{table:?}: {counters:?}");
                    assert!(height <= rows as u32 && height > 1, "{table:?}: {groups} groups in {height} rows of {width}");
                }
            }
            _ => {}
        }
        let data = scene.instance_data(&setup.model);
        let expected = reference_levels(&setup.model, &scene, &data, &headless.renderer.level_choice(&scene), 0.0);
        let (skinned, camera) = gpu_levels(&headless, count);
        let mut compared = 0;
        let mut levels_seen = std::collections::BTreeSet::new();
        for (instance, expected) in expected.iter().enumerate() {
            if near_threshold(&headless, &setup, &scene, instance) {
                continue;
            }
            let (want_skinned, want_camera) = match expected {
                Some(Levels { camera, skinned, .. }) => (Some(*skinned), *camera),
                None => (None, None),
            };
            let skinned = skinned.as_ref().map_or(want_skinned, |skinned| skinned[instance]);
            assert_eq!((skinned, camera[instance]), (want_skinned, want_camera), "instance {instance}, {strategy:?}");
            levels_seen.extend(want_camera);
            compared += 1;
        }
        assert!(compared >= count * 9 / 10, "only {compared} instances away from a threshold");
        // The grid runs from near the camera to far from it: the full mesh and coarser levels.
        assert!(levels_seen.len() >= 4 && levels_seen.contains(&0), "camera levels {levels_seen:?}");
        assert!(camera.iter().filter(|level| level.is_none()).count() > 0, "every instance in view");
    }
    assert_no_validation_messages(&device);
}

#[test]
fn levels_of_detail_stay_within_the_stated_difference_of_full_detail() {
    let device = validated_device();
    let full = default_model();
    let levelled = vkskin::model::lod::with_levels(&full);
    for count in [1, 100, 1000] {
        let render = |model: &vkskin::model::Model| {
            let mut setup = SceneSetup::new(model.clone(), count);
            // The scene this bound was set for: the figures 2.54 m apart (the grid's spacing
            // before issue 54 spaced it by the figures' footprint in their clip, 2.0 m) and the
            // crowd's sphere seen from 1.3 times the distance that just holds it (the default
            // camera frames the figures closer since).
            for instance in &mut setup.instances {
                instance.position *= 2.54 / 2.0;
            }
            setup.fit_bounds();
            let fov_y = setup.camera.fov_y;
            setup.camera.target = setup.bounds.center();
            setup.camera.distance = setup.bounds.size().length() * 0.5 / (fov_y * 0.5).sin() * 1.3;
            let mut headless = HeadlessRenderer::new(&device, &setup, 1280, 720).expect("renderer");
            let image = headless.render(&setup.frame(0.75, headless.aspect())).expect("frame");
            (image, headless.renderer.stats.visible)
        };
        let (with_levels, _) = render(&levelled);
        let (without, visible) = render(&full);
        let difference = ImageDifference::between(&with_levels, &without).expect("same size");
        println!("{count} instances: {difference}");
        assert!(visible.is_some_and(|visible| visible.camera as usize == count), "every instance in view");
        if count == 1 {
            // Near enough to need every triangle: the same image.
            assert_eq!(difference.changed, 0, "one instance: {difference}");
        }
        assert!(difference.changed_share() <= CHANGED_SHARE && difference.psnr >= PSNR_DB, "{count} instances: {difference}");
        // Not the same image: the levels were used.
        if count > 1 {
            assert!(difference.changed > 0, "{count} instances drew no coarser level");
        }
    }
    assert_no_validation_messages(&device);
}
