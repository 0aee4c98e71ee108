//! The compute rasterizer (`--raster`, `passes::raster`) draws what the hardware draws: to the
//! sample on a closed mesh (the fill rule), within the strategies' tolerance on the figure, its
//! crowd (shadows from the light's small triangles too) and every shared model, and with the same
//! motion vectors. Validation on.
//!
//! Tolerance (as tests/it/strategies.rs): at most 0.5 % of pixels may differ by more than 12
//! levels in any channel, and the mean difference stays under one level. The raster pass snaps
//! corners to the hardware's 1/256-pixel grid and keeps the top-left rule, but the two compute
//! depth and barycentrics in other orders, so a sample on an edge or a depth tie may go the other way.

use glam::{Vec2, Vec3};

use crate::common::{assert_no_validation_messages, default_model, shared_models, validated_device};
use vkskin::app::imagediff::{LargestDifference, FAR_ABOVE};
use vkskin::app::{default_animations, HeadlessRenderer, SceneSetup};
use vkskin::formats::load_model;
use vkskin::model::{Facing, Mesh, Model};
use vkskin::render::{Raster, RasterCounts, RenderSettings, Strategy};

/// The standard 4× sample positions' rows, in eighths of a pixel (raster.comp: SAMPLE_OFFSETS).
const SAMPLE_X_EIGHTHS: [u32; 4] = [3, 7, 1, 5];

/// The figure's vertices replaced by a sphere (an icosahedron split twice: 320 triangles sharing
/// their edges, wound outward) around its first vertex, riding that vertex's joints: a closed,
/// convex, animated mesh.
fn sphere_model() -> Model {
    let mut model = default_model();
    let anchor = model.vertices[0];
    let radius = model.extent() * 0.2;
    let t = (1.0 + 5.0f32.sqrt()) / 2.0;
    let mut points: Vec<Vec3> = [
        (-1.0, t, 0.0),
        (1.0, t, 0.0),
        (-1.0, -t, 0.0),
        (1.0, -t, 0.0),
        (0.0, -1.0, t),
        (0.0, 1.0, t),
        (0.0, -1.0, -t),
        (0.0, 1.0, -t),
        (t, 0.0, -1.0),
        (t, 0.0, 1.0),
        (-t, 0.0, -1.0),
        (-t, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| Vec3::new(x, y, z).normalize())
    .collect();
    let mut triangles: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..2 {
        let mut midpoints = std::collections::HashMap::new();
        let mut midpoint = |a: u32, b: u32, points: &mut Vec<Vec3>| {
            *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
                points.push(((points[a as usize] + points[b as usize]) * 0.5).normalize());
                points.len() as u32 - 1
            })
        };
        let mut split = Vec::new();
        for [a, b, c] in triangles {
            let (ab, bc, ca) = (midpoint(a, b, &mut points), midpoint(b, c, &mut points), midpoint(c, a, &mut points));
            split.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        triangles = split;
    }
    model.vertices = points
        .iter()
        .map(|&direction| {
            let mut vertex = anchor;
            vertex.position = anchor.position + direction * radius;
            vertex.normal = direction;
            vertex
        })
        .collect();
    model.indices = triangles.iter().flatten().copied().collect();
    let material = model.meshes[0].material;
    model.meshes = vec![Mesh { name: "sphere".into(), first_index: 0, index_count: model.indices.len() as u32, material }];
    model.morph_targets.clear();
    model.levels.clear();
    model.compute_bounds();
    model
}

/// Every sample the raster pass covered is covered once, and none is missed: a closed convex mesh
/// drawn in compute (its back faces culled, so its front faces never overlap) covers exactly the
/// samples its visibility buffer holds, and on every row of samples those form one run (a hole
/// where two triangles share an edge would split it).
#[test]
fn the_compute_rasterizer_covers_a_closed_mesh_once_without_holes() {
    let model = sphere_model();
    assert_eq!(model.facing(), Facing::Outward, "the sphere is closed");
    let setup = SceneSetup::new(model, 1);
    let device = validated_device();
    let (width, height) = (160, 120);
    let settings = RenderSettings { raster: Raster::Compute, ..RenderSettings::default() };
    let mut headless =
        HeadlessRenderer::with_settings(&device, &setup, (width, height), Strategy::Compute, settings).expect("renderer");
    if headless.renderer.passes.raster.is_none() {
        println!("skipped: this device has no compute rasterizer");
        return;
    }
    headless.render(&setup.frame(0.4, headless.aspect())).expect("frame");
    assert_no_validation_messages(&device);
    let visibility = headless.renderer.read_back_visibility().expect("visibility");
    let counters = headless.renderer.read_back_culling().expect("counters").counters;
    let covered = counters.raster_counts[0] as usize;
    let filled = visibility.iter().filter(|&&sample| sample != u64::MAX).count();
    println!(
        "{filled} samples filled, {covered} covered, triangles: {} compute, {} hardware",
        counters.raster[0][3], counters.raster_counts[2]
    );
    assert!(filled > 2000, "the sphere covers a good part of the frame: {filled} samples");
    assert_eq!(covered, filled, "a sample covered twice (or a coverage counted without a write)");
    assert_eq!(counters.raster_counts[2], 0, "compute takes every triangle in front of the eye");
    // Each row of samples (a pixel row, one of its 4 sample rows) holds one run of filled samples.
    for y in 0..height {
        for sample in 0..4 {
            let mut filled_x: Vec<u32> = (0..width)
                .filter(|&x| visibility[((y * width + x) * 4 + sample) as usize] != u64::MAX)
                .map(|x| x * 8 + SAMPLE_X_EIGHTHS[sample as usize])
                .collect();
            filled_x.sort();
            let gaps = filled_x.windows(2).filter(|pair| pair[1] - pair[0] > 8).count();
            assert_eq!(gaps, 0, "row {y}, sample {sample}: a hole in {filled_x:?}");
        }
    }
}

/// One frame of `setup` after a few (the frames in flight, the velocity's history), each
/// rasterizer in its own renderer; the counts of its last frame.
fn images(setup: &SceneSetup, size: (u32, u32), settings: RenderSettings) -> Vec<(Raster, image::RgbaImage, RasterCounts)> {
    let mut images = Vec::new();
    for raster in Raster::ALL {
        let device = validated_device();
        let settings = RenderSettings { raster, ..settings };
        let mut headless = HeadlessRenderer::with_settings(&device, setup, size, Strategy::Compute, settings).expect("renderer");
        for frame in 0..4 {
            headless.submit(&setup.frame(0.8 + f64::from(frame) * 0.02, headless.aspect())).expect("frame");
        }
        let image = headless.render(&setup.frame(0.9, headless.aspect())).expect("frame");
        assert_no_validation_messages(&device);
        let counts = headless.renderer.stats.visible.expect("counts").raster;
        images.push((raster, image, counts));
    }
    images
}

/// Within the strategies' tolerance; returns the difference.
fn assert_agree(what: &str, hardware: &image::RgbaImage, other: &image::RgbaImage) -> LargestDifference {
    let difference = LargestDifference::between(hardware, other);
    let (far, pixels, mean) = (difference.far, difference.pixels, difference.mean);
    println!("{what}: {far} pixels differ by more than {FAR_ABOVE} levels, mean difference {mean:.4}");
    assert!(far * 200 <= pixels, "{what}: {far} of {pixels} pixels differ");
    assert!(mean < 1.0, "{what}: mean difference {mean}");
    difference
}

#[test]
fn every_rasterizer_draws_the_figure_and_its_crowd_alike() {
    let figure = SceneSetup::new(default_model(), 1);
    // The crowd: most of it a few pixels tall, with motion blur (the velocity the resolve writes)
    // and the light's run (its small triangles rasterized into the shadow map).
    let mut crowd = SceneSetup::new(default_model(), 300);
    // Low inside the grid: figures from an arm's length (triangles larger than auto's threshold)
    // to the far side (a few pixels tall).
    crowd.camera.distance *= 0.3;
    crowd.camera.pitch = 0.1;
    let settings = RenderSettings { light_culling: true, motion_blur: true, ..RenderSettings::default() };
    for (name, setup, size) in [("figure", &figure, (200, 150)), ("crowd", &crowd, (480, 270))] {
        let images = images(setup, size, settings);
        let (_, hardware, counts) = &images[0];
        assert_eq!((counts.camera_compute, counts.light_compute), (0, 0), "{name}: hardware takes every triangle");
        // (Its samples, from an occlusion query, are printed, not held: lavapipe's reads 0 on this
        // crowd from an arm's length, and right on the same crowd from farther.)
        println!("{name}, hardware: {counts:?}");
        let background = hardware.get_pixel(0, 0);
        assert!(hardware.pixels().filter(|pixel| *pixel != background).count() > 1000, "{name}: nothing was drawn");
        for (raster, image, counts) in &images[1..] {
            println!("{name}, {}: {counts:?}", raster.name());
            assert!(
                counts.camera_compute > 0 && counts.camera_samples > 0,
                "{name}, {}: the compute path drew nothing",
                raster.name()
            );
            assert_agree(&format!("{name}, {} vs hardware", raster.name()), hardware, image);
        }
        if name == "crowd" {
            let (_, _, auto) = &images[2];
            assert!(auto.camera_hardware > 0, "crowd, auto: the near figures' larger triangles stay the hardware's");
            assert!(
                auto.light_compute > 0 && auto.light_texels > 0,
                "crowd, auto: the shadow map's small triangles go to compute"
            );
        }
    }
}

/// The shared models' files, each with its clips (`default_animations`).
const SHARED_FILES: [&str; 21] = [
    "collada/RiggedFigure/RiggedFigure.dae",
    "collada/RiggedSimple/riggedSimple.dae",
    "fbx/AssimpArmature/animation_with_skeleton.fbx",
    "fbx/BlenderShapeAnim/blender440_shape_weight_anim_7400_binary.fbx",
    "fbx/MaxSkin/max_transformed_skin_7500_binary.fbx",
    "fbx/MayaSausage/maya_game_sausage_7500_binary.fbx",
    "fbx/QuaterniusMan/Male_Casual.fbx",
    "fbx/QuaterniusRobot/Robot.fbx",
    "gltf/AnimatedMorphCube/glTF/AnimatedMorphCube.gltf",
    "gltf/CesiumMan/CesiumMan.glb",
    "gltf/Fox/Fox.glb",
    "gltf/MorphStressTest/glTF/MorphStressTest.gltf",
    "gltf/RiggedFigure/RiggedFigure.glb",
    "gltf/RiggedSimple/RiggedSimple.glb",
    "gltf/RobotExpressive/RobotExpressive.glb",
    "gltf/SimpleSkin/SimpleSkin.gltf",
    "md5/boarman/BoarMan.md5mesh",
    "md5/simplecube/SimpleCube.md5mesh",
    "ms3d/jeep1/jeep1.ms3d",
    "ms3d/ninja/ninja.ms3d",
    "ms3d/wuson/Wuson.ms3d",
];

/// Every shared model, hardware against compute in one renderer (the rasterizer changes between
/// two frames of the same scene), a crowd of 4 so that some of it is small.
#[test]
fn every_shared_model_draws_alike_with_either_rasterizer() {
    let Some(folder) = shared_models("") else { return };
    let device = validated_device();
    let mut compared = 0;
    for file in SHARED_FILES {
        let path = folder.join(file);
        assert!(path.is_file(), "{} is missing", path.display());
        let model = load_model(&path, &default_animations(&path, &[])).unwrap_or_else(|error| panic!("{error}"));
        let setup = SceneSetup::new(model, 4);
        let settings = RenderSettings { light_culling: true, ..RenderSettings::default() };
        let mut headless =
            HeadlessRenderer::with_settings(&device, &setup, (160, 120), Strategy::Compute, settings).expect("renderer");
        if headless.renderer.passes.raster.is_none() {
            println!("{file}: no raster pass (no triangle pass for it, or no compute rasterizer on this device)");
            continue;
        }
        let scene = setup.frame(0.5, headless.aspect());
        let hardware = headless.render(&scene).expect("frame");
        headless.renderer.raster = Raster::Compute;
        let compute = headless.render(&scene).expect("frame");
        let counts = headless.renderer.stats.visible.expect("counts").raster;
        assert!(counts.camera_compute > 0, "{file}: the compute path drew nothing: {counts:?}");
        assert_agree(file, &hardware, &compute);
        compared += 1;
    }
    assert_no_validation_messages(&device);
    assert!(compared >= 15, "only {compared} models had a raster pass");
}

/// The resolve writes the velocity the forward pass would: the walking figure's motion vectors
/// agree between the rasterizers (a silhouette sample may go the other way).
#[test]
fn motion_vectors_agree_between_rasterizers() {
    let setup = SceneSetup::new(default_model(), 1);
    let mut velocities = Vec::new();
    for raster in [Raster::Hardware, Raster::Compute] {
        let device = validated_device();
        let settings = RenderSettings { raster, ..RenderSettings::default() };
        let mut headless =
            HeadlessRenderer::with_settings(&device, &setup, (200, 150), Strategy::Compute, settings).expect("renderer");
        headless.renderer.write_velocity = true;
        headless.render(&setup.frame(0.5, headless.aspect())).expect("frame");
        headless.render(&setup.frame(0.55, headless.aspect())).expect("frame");
        velocities.push(headless.renderer.read_velocity().expect("velocity"));
        assert_no_validation_messages(&device);
    }
    let (hardware, compute) = (&velocities[0], &velocities[1]);
    let moving = hardware.iter().filter(|motion| motion.length() > 0.1).count();
    let differences: Vec<f32> = hardware.iter().zip(compute).map(|(a, b)| (*a - *b).length()).collect();
    let far = differences.iter().filter(|&&difference| difference > 0.05).count();
    let mean = differences.iter().sum::<f32>() / differences.len() as f32;
    println!("{moving} pixels move; {far} differ by more than 0.05 pixels, mean difference {mean:.5}");
    assert!(moving > 200, "the walk moves the figure");
    assert!(far * 100 <= moving, "{far} of {moving} moving pixels' motion differs");
    assert!(mean < 0.01, "mean difference {mean} pixels");
    assert!(compute.iter().any(|motion| *motion != Vec2::ZERO));
}
