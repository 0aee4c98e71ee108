//! Ray-traced shadows (issue 43, `--shadows ray`), validation on: the skinned buffer feeds one
//! bottom-level acceleration structure an instance each frame (refit at an unchanged level), a top
//! level over them, and a ray query per shaded sample in the forward pass.
//!
//! They need a device with ray query (lavapipe from Mesa 24.1: scripts/install-deps); without one
//! they skip with a message, and fail under `VKSKIN_REQUIRE_RT=1` (which `.ci/run` sets).

use std::sync::Arc;

use glam::{Mat4, Vec3, Vec4};

use crate::common::{assert_no_validation_messages, default_model, scratch_in, shared_models, traces, validated_device};
use vkskin::anim::Aabb;
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::formats::load_model;
use vkskin::gpu::Device;
use vkskin::render::passes::cull::reference_levels;
use vkskin::render::passes::shadow;
use vkskin::render::reference::reference_skinning;
use vkskin::render::{RenderSettings, Shadows, Strategy};

/// The validated device, or None (skipped, or failing under `VKSKIN_REQUIRE_RT=1`) without ray query.
#[track_caller]
fn tracing_device() -> Option<Arc<Device>> {
    let device = validated_device();
    traces(&device).then_some(device)
}

fn settings(shadows: Shadows) -> RenderSettings {
    RenderSettings { shadows, ..RenderSettings::default() }
}

/// A flat square plate, 1 unit across, raised above the ground: an occluder whose shadow is a
/// known polygon.
fn plate() -> vkskin::model::Model {
    let folder = scratch_in("ray", "plate");
    std::fs::create_dir_all(&folder).expect("scratch folder");
    let path = folder.join("plate.md5mesh");
    let mut text = String::from(
        "MD5Version 10\ncommandline \"\"\n\nnumJoints 1\nnumMeshes 1\n\njoints {\n\t\"root\" -1 ( 0 0 0 ) ( 0 0 0 )\n}\n\n\
         mesh {\n\tshader \"plate\"\n\tnumverts 4\n",
    );
    for (index, (u, v)) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)].into_iter().enumerate() {
        text += &format!("\tvert {index} ( {u} {v} ) {index} 1\n");
    }
    text += "\tnumtris 2\n\ttri 0 0 1 2\n\ttri 1 0 2 3\n\tnumweights 4\n";
    // MD5 is z-up: a plate in x and y at height 2.
    for (index, (x, y)) in [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)].into_iter().enumerate() {
        text += &format!("\tweight {index} 0 1.0 ( {x} {y} 2 )\n");
    }
    text += "}\n";
    std::fs::write(&path, text).expect("plate written");
    load_model(&path, &[]).expect("the plate loads")
}

/// Where pixel (x, y)'s centre of a `width`×`height` image meets the plane y = `height_of_plane`.
fn ground_point(view_projection: Mat4, (x, y): (u32, u32), (width, height): (u32, u32), plane: f32) -> Vec3 {
    let inverse = view_projection.inverse();
    let ndc = |depth: f32| {
        let point = inverse
            * Vec4::new((x as f32 + 0.5) / width as f32 * 2.0 - 1.0, (y as f32 + 0.5) / height as f32 * 2.0 - 1.0, depth, 1.0);
        point.truncate() / point.w
    };
    let (near, far) = (ndc(0.0), ndc(1.0));
    near + (far - near) * ((plane - near.y) / (far.y - near.y))
}

/// Whether `point` lies inside the convex polygon `corners` (xz, in order), and its distance to the
/// nearest edge.
fn inside_convex(point: Vec3, corners: &[Vec3]) -> (bool, f32) {
    let mut signs = (0, 0);
    let mut nearest = f32::MAX;
    for (index, &a) in corners.iter().enumerate() {
        let b = corners[(index + 1) % corners.len()];
        let (edge, to) = (glam::Vec2::new(b.x - a.x, b.z - a.z), glam::Vec2::new(point.x - a.x, point.z - a.z));
        let cross = edge.perp_dot(to);
        if cross > 0.0 {
            signs.0 += 1;
        } else {
            signs.1 += 1;
        }
        let along = (to.dot(edge) / edge.length_squared()).clamp(0.0, 1.0);
        nearest = nearest.min((to - edge * along).length());
    }
    (signs.0 == 0 || signs.1 == 0, nearest)
}

/// A plate over the ground, seen from straight above through an orthographic camera, lit from the
/// side: every ground pixel the traced shadow darkens lies in the plate's shadow worked out on the
/// CPU (its corners moved along the light onto the ground), and every pixel in it is dark, but for
/// pixels within one pixel of its edge.
#[test]
fn a_plate_over_the_ground_casts_the_analytic_shadow_edge() {
    let Some(device) = tracing_device() else { return };
    let model = plate();
    let setup = SceneSetup::new(model, 1);
    let (width, height) = (192u32, 128u32);
    let mut headless =
        HeadlessRenderer::with_settings(&device, &setup, (width, height), Strategy::Compute, settings(Shadows::Ray))
            .expect("renderer");
    let mut scene = setup.frame(0.0, headless.aspect());
    // The plate's corners where the renderer puts them.
    let corners: Vec<Vec3> = reference_skinning(&setup.model, &scene.instance_data(&setup.model)[0], &[])
        .iter()
        .map(|vertex| vertex.position)
        .collect();
    let top = corners.iter().map(|corner| corner.y).fold(f32::MIN, f32::max);
    let bottom = corners.iter().map(|corner| corner.y).fold(f32::MAX, f32::min);
    assert!(top - bottom < 1e-4, "the plate is flat: {corners:?}");
    let centre = corners.iter().copied().sum::<Vec3>() / corners.len() as f32;
    let side = (corners[0] - corners[1]).length();
    // The ground two plate-widths below; the light from +x and above, at 45°: the shadow falls
    // two widths to −x, clear of the plate.
    let ground_y = top - 2.0 * side;
    let light = Vec3::new(1.0, 1.0, 0.0).normalize();
    let ground = Vec4::new(centre.x, ground_y, centre.z, 4.0 * side);
    let receiver = Aabb {
        min: Vec3::new(centre.x - 4.0 * side, ground_y, centre.z - 4.0 * side),
        max: Vec3::new(centre.x + 4.0 * side, ground_y, centre.z + 4.0 * side),
    };
    let bounds =
        Aabb { min: Vec3::new(centre.x - side, bottom, centre.z - side), max: Vec3::new(centre.x + side, top, centre.z + side) };
    let half_width = 3.0 * side;
    let half_height = half_width * height as f32 / width as f32;
    let view = glam::camera::rh::view::look_at_mat4(centre + Vec3::Y * 5.0 * side, centre, Vec3::NEG_Z);
    let projection =
        glam::camera::rh::proj::vulkan::orthographic(-half_width, half_width, -half_height, half_height, 0.1, 20.0 * side);
    scene.view_projection = projection * view;
    scene.camera_position = centre + Vec3::Y * 5.0 * side;
    scene.light_direction = light;
    scene.light_view_projection = shadow::light_view_projection(light, bounds, receiver);
    scene.ground = ground;
    headless.renderer.cut_motion();
    let image = headless.render(&scene).expect("frame");

    let shadow_corners: Vec<Vec3> = corners.iter().map(|&corner| corner - light * ((corner.y - ground_y) / light.y)).collect();
    let pixel = 2.0 * half_width / width as f32;
    let luminance = |x: u32, y: u32| {
        let [r, g, b, _] = image.get_pixel(x, y).0;
        0.2126 * f32::from(r) + 0.7152 * f32::from(g) + 0.0722 * f32::from(b)
    };
    // The ground's lit and shadowed brightness: a threshold halfway between.
    let mut ground_pixels = Vec::new();
    for y in 0..height {
        for x in 0..width {
            let point = ground_point(scene.view_projection, (x, y), (width, height), ground_y);
            let under_plate = inside_convex(point, &corners).0 || inside_convex(point, &corners).1 < 2.0 * pixel;
            if !under_plate && (point.x - centre.x).abs() < 3.5 * side && (point.z - centre.z).abs() < 3.5 * side {
                ground_pixels.push((x, y, point));
            }
        }
    }
    let (darkest, brightest) = ground_pixels
        .iter()
        .map(|&(x, y, _)| luminance(x, y))
        .fold((f32::MAX, f32::MIN), |(low, high), value| (low.min(value), high.max(value)));
    assert!(brightest - darkest > 60.0, "lit and shadowed ground differ: {darkest}..{brightest}");
    let threshold = (darkest + brightest) * 0.5;
    let (mut wrong, mut shadowed, mut near_edge) = (Vec::new(), 0, 0);
    for &(x, y, point) in &ground_pixels {
        let (inside, distance) = inside_convex(point, &shadow_corners);
        let dark = luminance(x, y) < threshold;
        shadowed += usize::from(inside);
        if distance < pixel {
            near_edge += 1;
            continue;
        }
        if dark != inside {
            wrong.push((x, y, inside));
        }
    }
    println!("{} ground pixels, {shadowed} in the analytic shadow, {near_edge} within a pixel of its edge", ground_pixels.len());
    let expected_area = (side / pixel).powi(2);
    assert!(shadowed as f32 > 0.8 * expected_area, "the shadow lies on the ground in view: {shadowed} pixels");
    assert!(
        wrong.is_empty(),
        "{} pixels off the analytic shadow by more than a pixel, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(8)]
    );
    assert_no_validation_messages(&device);
}

/// Share of pixels whose colour differs by more than `tolerance` (of 255) in some channel.
fn differing_share(a: &image::RgbaImage, b: &image::RgbaImage, tolerance: u8) -> f64 {
    let differing =
        a.pixels().zip(b.pixels()).filter(|(p, q)| p.0.iter().zip(q.0).any(|(&x, y)| x.abs_diff(y) > tolerance)).count();
    differing as f64 / f64::from(a.width() * a.height())
}

/// The traced and the mapped shadows agree where the map resolves them: of the pixels of a
/// 256×192 frame, at most 1 % differ by more than 16/255. The rest is the map's 3×3 PCF
/// penumbra (a texel and a half each side of every edge) and detail under a texel of its 2048².
const AGREEMENT: (u8, f64) = (16, 0.01);

/// `setup`'s frame at `seconds` with the shadow map and traced, and with the shadow map under a
/// light turned 30° about the vertical: how much moving the shadows changes the image, which the
/// traced shadow's difference must stay well under for the comparison to mean something.
fn traced_and_mapped(device: &Arc<Device>, setup: &SceneSetup, seconds: f64, strategy: Strategy) -> [image::RgbaImage; 3] {
    let render = |shadows: Shadows, turn: f32| {
        let mut headless =
            HeadlessRenderer::with_settings(device, setup, (256, 192), strategy, settings(shadows)).expect("renderer");
        let mut scene = setup.frame(seconds, headless.aspect());
        scene.light_direction = glam::Quat::from_rotation_y(turn.to_radians()) * scene.light_direction;
        headless.render(&scene).expect("frame")
    };
    [render(Shadows::Map, 0.0), render(Shadows::Ray, 0.0), render(Shadows::Map, 30.0)]
}

/// Each shared model's traced shadow agrees with its mapped one (`AGREEMENT`), and so does the
/// bundled figure's (a clone has no shared models).
#[test]
fn traced_and_mapped_shadows_agree_on_every_model() {
    let Some(device) = tracing_device() else { return };
    let mut models = vec![("figure".to_string(), default_model())];
    if let Some(folder) = shared_models("") {
        for relative in [
            "md5/boarman/BoarMan.md5mesh",
            "gltf/CesiumMan/CesiumMan.glb",
            "gltf/Fox/Fox.glb",
            "gltf/RiggedFigure/RiggedFigure.glb",
            "ms3d/ninja/ninja.ms3d",
            "collada/RiggedFigure/RiggedFigure.dae",
            "fbx/QuaterniusMan/Male_Casual.fbx",
            "fbx/QuaterniusRobot/Robot.fbx",
        ] {
            let model = load_model(&folder.join(relative), &[]).unwrap_or_else(|error| panic!("{relative}: {error}"));
            models.push((relative.to_string(), model));
        }
    }
    let (mut worst, mut differences, mut sensitivity) = (0.0f64, 0.0, 0.0);
    for (name, model) in models {
        let duration = model.clips.first().map_or(1.0, |clip| f64::from(clip.duration));
        let setup = SceneSetup::new(model, 3);
        let [mapped, traced, turned] = traced_and_mapped(&device, &setup, duration * 0.4, Strategy::Compute);
        let share = differing_share(&mapped, &traced, AGREEMENT.0);
        let moved = differing_share(&mapped, &turned, AGREEMENT.0);
        println!(
            "{name}: {:.3} % of pixels differ by more than {}/255 (the light turned 30°: {:.3} %)",
            share * 100.0,
            AGREEMENT.0,
            moved * 100.0
        );
        worst = worst.max(share);
        assert!(share <= AGREEMENT.1, "{name}: {:.3} % of pixels differ", share * 100.0);
        differences += share;
        sensitivity += moved;
    }
    println!("worst: {:.3} %", worst * 100.0);
    // Over the models, the traced shadows are much closer to the maps than the maps are to
    // themselves under a light turned 30° (some models' shadows fall mostly out of view).
    assert!(
        differences < sensitivity / 2.0,
        "the traced shadows differ from the maps by {:.3} % in all, turning the light by {:.3} %",
        differences * 100.0,
        sensitivity * 100.0
    );
    assert_no_validation_messages(&device);
}

/// A walking figure's traced shadow moves with its skinned pose, frame after frame with the
/// structures refit in place: at each of several times it agrees with the shadow map drawn from
/// the same skinned vertices, while the shadow itself changes between the times; with the
/// `compute` strategy and the `cpu` strategy alike (the two fill the skinned buffer). The `vertex`
/// strategy has no skinned buffer: `--shadows ray` is refused with the reason.
#[test]
fn a_moving_figures_traced_shadow_follows_its_skinned_pose() {
    let Some(device) = tracing_device() else { return };
    let setup = SceneSetup::new(default_model(), 1);
    let times = [0.0, 0.35, 0.7];
    for strategy in [Strategy::Compute, Strategy::Cpu] {
        let mut traced =
            HeadlessRenderer::with_settings(&device, &setup, (256, 192), strategy, settings(Shadows::Ray)).expect("renderer");
        let mut mapped =
            HeadlessRenderer::with_settings(&device, &setup, (256, 192), strategy, settings(Shadows::Map)).expect("renderer");
        let mut images = Vec::new();
        for (frame, &seconds) in times.iter().enumerate() {
            let scene = setup.frame(seconds, traced.aspect());
            let image = traced.render(&scene).expect("frame");
            let trace = traced.renderer.passes.trace.as_ref().expect("the trace pass");
            let builds = trace.builds();
            assert_eq!(builds.len(), 1);
            assert_eq!(builds[0].refit, frame > 0, "{}: frame {frame} refits the structure built at the first", strategy.name());
            let share = differing_share(&mapped.render(&scene).expect("frame"), &image, AGREEMENT.0);
            assert!(share <= AGREEMENT.1, "{} at {seconds} s: {:.3} % differ from the map", strategy.name(), share * 100.0);
            images.push(image);
        }
        for pair in images.windows(2) {
            let moved = differing_share(&pair[0], &pair[1], AGREEMENT.0);
            assert!(moved > 0.002, "{}: the frames differ as the figure walks ({:.3} %)", strategy.name(), moved * 100.0);
        }
    }
    let refused = HeadlessRenderer::with_settings(&device, &setup, (64, 48), Strategy::Vertex, settings(Shadows::Ray));
    let message = refused.err().expect("refused").to_string();
    assert!(message.contains("vertex strategy") && message.contains("compute or cpu"), "{message}");
    assert_no_validation_messages(&device);
}

/// The memory plan counts the structures: a heap too small for them refuses the count and says how
/// many instances would trace.
#[test]
fn structures_past_the_heap_refuse_the_count_and_say_how_many_trace() {
    let Some(device) = tracing_device() else { return };
    let setup = SceneSetup::new(default_model(), 40);
    let fits =
        HeadlessRenderer::with_settings(&device, &setup, (64, 48), Strategy::Compute, settings(Shadows::Ray)).expect("renderer");
    let plan = fits.renderer.setup.memory.trace.clone().expect("the plan counts the structures");
    assert!(plan.bytes > 0 && plan.max_instances >= 40, "{plan:?}");
    drop(fits);
    // A heap that holds the instances (about 156 kB each) and little else.
    let heap = ((40 * 170_000) as f64 / 0.8) as u64;
    let short = RenderSettings { heap: Some(heap), ..settings(Shadows::Ray) };
    let refused = HeadlessRenderer::with_settings(&device, &setup, (64, 48), Strategy::Compute, short);
    let message = refused.err().expect("refused").to_string();
    assert!(message.contains("instances trace"), "{message}");
    assert_no_validation_messages(&device);
}

/// With levels of detail, each instance traces the coarser of its shadow map's level and the
/// level within a pixel at its distance: never finer than the map's (whose vertices the cull pass
/// skins), never coarser than the camera's own level for it (as the CPU mirror of the cull pass
/// picks it), and for a crowd seen from afar coarser than the map's for most instances (fewer
/// triangles to build), while the traced shadows still agree with the map.
#[test]
fn far_instances_trace_coarser_levels_where_a_pixel_allows() {
    let Some(device) = tracing_device() else { return };
    let model = vkskin::model::lod::with_levels(&default_model());
    assert!(model.levels.len() >= 4, "the figure has levels of detail");
    let mut setup = SceneSetup::new(model, 64);
    setup.camera.distance *= 2.5;
    let [mapped, traced, turned] = traced_and_mapped(&device, &setup, 0.4, Strategy::Compute);
    let share = differing_share(&mapped, &traced, AGREEMENT.0);
    println!(
        "far crowd: {:.3} % of pixels differ from the map (the light turned 30°: {:.3} %)",
        share * 100.0,
        differing_share(&mapped, &turned, AGREEMENT.0) * 100.0
    );
    assert!(share <= AGREEMENT.1, "{:.3} % of pixels differ from the map", share * 100.0);

    let mut headless = HeadlessRenderer::with_settings(&device, &setup, (256, 192), Strategy::Compute, settings(Shadows::Ray))
        .expect("renderer");
    let scene = setup.frame(0.4, headless.aspect());
    headless.render(&scene).expect("frame");
    let choice = headless.renderer.level_choice(&scene);
    let data = scene.instance_data(&setup.model);
    let levels = reference_levels(&setup.model, &scene, &data, &choice, 0.0);
    let trace = headless.renderer.passes.trace.as_ref().expect("the trace pass");
    let mut coarser = 0;
    for (build, levels) in trace.builds().iter().zip(&levels) {
        let shadow = choice.light_level_at(data[build.instance as usize].scale);
        assert!(build.level >= shadow, "instance {}: traced at {}, finer than its map's {shadow}", build.instance, build.level);
        if let Some(camera) = levels.and_then(|levels| levels.camera) {
            assert!(
                build.level <= shadow.max(camera),
                "instance {}: traced at {}, coarser than the camera's {camera}",
                build.instance,
                build.level
            );
        }
        coarser += usize::from(build.level > shadow);
    }
    let (refit, rebuilt) = trace.triangles_built();
    let full = setup.model.indices.len() as u64 / 3 * 64;
    println!("far crowd: {coarser} of 64 traced coarser than the texel asks; {} triangles built of {full}", refit + rebuilt);
    assert!(coarser > 32, "most of a far crowd traces coarser than the texel asks ({coarser} of 64)");
    assert!(refit + rebuilt < full / 2, "{} triangles built of the full meshes' {full}", refit + rebuilt);
    assert_no_validation_messages(&device);
}
