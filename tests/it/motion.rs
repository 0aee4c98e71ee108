//! Motion vectors (issue 30): the velocity target holds each pixel's motion since last frame, in
//! pixels. A still scene and a paused animation give zero; an instance moved by a known offset
//! moves its pixels by that offset's projection, which is also how far its silhouette moved in the
//! image; a moving camera moves the ground's pixels as reprojecting them says; a teleport or a clip
//! switched without a crossfade gives no motion (no streak), and the motion blur then leaves the
//! image as it is; the three strategies agree; the blur changes only pixels that move; with
//! animation LOD a far figure moves only on the frames its palette is computed; morph targets
//! move pixels as their weights change.

use glam::{Mat4, Vec2, Vec3, Vec4Swizzles};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::formats::load_model;
use vkskin::render::{FrameScene, RenderSettings, Strategy};

use crate::common::{assert_no_validation_messages, default_model, shared_models, validated_device};

const WIDTH: u32 = 160;
const HEIGHT: u32 = 120;
/// A 60th of a second: the frames' step.
const STEP: f64 = 1.0 / 60.0;

/// The bundled figure, walking, one instance.
fn walking() -> SceneSetup {
    let mut setup = SceneSetup::new(default_model(), 1);
    setup.play(0, 0.0, 0.0);
    setup
}

/// One frame's velocity target and image.
struct Frame {
    velocity: Vec<Vec2>,
    image: image::RgbaImage,
}

impl Frame {
    /// The longest motion in the frame, pixels.
    fn longest(&self) -> f32 {
        self.velocity.iter().map(|motion| motion.length()).fold(0.0, f32::max)
    }

    /// The pixels whose motion and all their neighbours' two pixels around are not zero: inside a
    /// moving surface, away from the edges whose samples the resolve averages with the
    /// background's (a gap between two limbs a pixel wide has moving neighbours all round).
    fn interior(&self) -> Vec<(u32, u32)> {
        let moving = |x: i64, y: i64| {
            (0..i64::from(WIDTH)).contains(&x)
                && (0..i64::from(HEIGHT)).contains(&y)
                && self.velocity[(y * i64::from(WIDTH) + x) as usize] != Vec2::ZERO
        };
        let mut pixels = Vec::new();
        for y in 0..HEIGHT {
            for x in 0..WIDTH {
                let (x64, y64) = (i64::from(x), i64::from(y));
                if (-2..=2).all(|dy| (-2..=2).all(|dx| moving(x64 + dx, y64 + dy))) {
                    pixels.push((x, y));
                }
            }
        }
        pixels
    }

    fn at(&self, (x, y): (u32, u32)) -> Vec2 {
        self.velocity[(y * WIDTH + x) as usize]
    }
}

/// Renders the scenes in order with one renderer, reading each frame's velocity target back.
fn frames(setup: &SceneSetup, scenes: &[FrameScene], strategy: Strategy, motion_blur: bool) -> Vec<Frame> {
    frames_with(setup, scenes, strategy, RenderSettings { motion_blur, ..RenderSettings::default() })
}

fn frames_with(setup: &SceneSetup, scenes: &[FrameScene], strategy: Strategy, settings: RenderSettings) -> Vec<Frame> {
    let device = validated_device();
    let mut headless = HeadlessRenderer::with_settings(&device, setup, (WIDTH, HEIGHT), strategy, settings).expect("renderer");
    headless.renderer.write_velocity = true;
    let frames = scenes
        .iter()
        .map(|scene| {
            let image = headless.render(scene).expect("frame");
            Frame { velocity: headless.renderer.read_velocity().expect("velocity"), image }
        })
        .collect();
    assert_no_validation_messages(&device);
    frames
}

fn aspect() -> f32 {
    WIDTH as f32 / HEIGHT as f32
}

/// Where a world point lands, in pixels (the viewport's convention: y down).
fn pixel(view_projection: Mat4, point: Vec3) -> Vec2 {
    let clip = view_projection * point.extend(1.0);
    (clip.xy() / clip.w * 0.5 + 0.5) * Vec2::new(WIDTH as f32, HEIGHT as f32)
}

#[test]
fn a_still_scene_and_a_paused_animation_show_no_motion_in_any_strategy() {
    let setup = walking();
    // The first frame (no history), a walking frame, then the same time twice: paused.
    let times = [0.5, 0.5 + 6.0 * STEP, 0.8, 0.8];
    let scenes: Vec<FrameScene> = times.iter().map(|&time| setup.frame(time, aspect())).collect();
    for strategy in Strategy::ALL {
        let frames = frames(&setup, &scenes, strategy, false);
        let longest: Vec<f32> = frames.iter().map(Frame::longest).collect();
        println!("{}: the longest motion of each frame: {longest:?} pixels", strategy.name());
        assert_eq!(longest[0], 0.0, "{}: the first frame has nothing to move from", strategy.name());
        assert!(longest[1] > 0.3, "{}: the walk moves the figure: {longest:?}", strategy.name());
        assert!(longest[2] > 0.3, "{}: a jump in time moves it too: {longest:?}", strategy.name());
        assert_eq!(longest[3], 0.0, "{}: paused, nothing moves", strategy.name());
    }
}

/// An orthographic camera looking down -z at the figure: a translation moves every point of it by
/// the same number of pixels, whatever its depth.
fn orthographic(setup: &SceneSetup) -> Mat4 {
    let bounds = setup.bounds;
    let (center, half) = (bounds.center(), bounds.extent() * 0.9);
    let view = glam::camera::rh::view::look_at_mat4(center + Vec3::Z * half * 4.0, center, Vec3::Y);
    // Vulkan's clip space: y down, depth 0..1.
    glam::camera::rh::proj::vulkan::orthographic(-half * aspect(), half * aspect(), -half, half, 0.0, half * 8.0) * view
}

/// The centroid of the pixels whose motion is not zero.
fn centroid(frame: &Frame) -> Vec2 {
    let mut sum = Vec2::ZERO;
    let mut count = 0.0;
    for (index, motion) in frame.velocity.iter().enumerate() {
        if *motion != Vec2::ZERO {
            sum += Vec2::new((index as u32 % WIDTH) as f32 + 0.5, (index as u32 / WIDTH) as f32 + 0.5);
            count += 1.0;
        }
    }
    sum / count
}

#[test]
fn an_instance_moved_by_a_known_offset_moves_its_pixels_by_that_offset() {
    let mut setup = walking();
    let view_projection = orthographic(&setup);
    let extent = setup.bounds.extent();
    // Across the image, up a little, and away from the camera (which an orthographic one ignores).
    let offset = Vec3::new(0.06, 0.02, -0.1) * extent;
    let start = setup.instances[0].position;
    // Paused mid-stride; moved by the offset each frame.
    let mut scenes = Vec::new();
    for step in 0..3 {
        setup.instances[0].position = start + offset * step as f32;
        let mut scene = setup.frame(0.4, aspect());
        scene.view_projection = view_projection;
        scenes.push(scene);
    }
    let expected = pixel(view_projection, offset) - pixel(view_projection, Vec3::ZERO);
    assert!(expected.length() > 4.0, "the offset is a few pixels: {expected}");
    for strategy in Strategy::ALL {
        let name = strategy.name();
        let frames = frames(&setup, &scenes, strategy, false);
        // A pixel the figure covers in k of its 4 samples resolves to k/4 of the motion (the
        // background's is zero): every moving pixel holds one of those within half a pixel.
        let nearest = |motion: Vec2| (1..=4).map(|k| motion.distance(expected * k as f32 / 4.0)).fold(f32::MAX, f32::min);
        let worst =
            frames[2].velocity.iter().filter(|motion| **motion != Vec2::ZERO).map(|&motion| nearest(motion)).fold(0.0, f32::max);
        // Inside the figure, away from its edges, nearly every pixel is covered whole.
        let interior = frames[2].interior();
        let whole = interior.iter().filter(|&&pixel| frames[2].at(pixel).distance(expected) <= 0.5).count();
        // The silhouette moved by as much in the image: its centroid, from frame 1 to frame 2.
        let moved = centroid(&frames[2]) - centroid(&frames[1]);
        println!(
            "{name}: expected {expected} pixels; every moving pixel within {worst:.4} of a sample fraction of it; \
             {whole} of {} interior pixels within half a pixel of it; the silhouette moved {moved}",
            interior.len()
        );
        assert!(worst <= 0.5, "{name}: a pixel's motion is {worst} from any fraction of {expected}");
        assert!(interior.len() > 100, "{name}: {} interior pixels", interior.len());
        assert!(whole * 20 >= interior.len() * 19, "{name}: {whole} of {} interior pixels move by {expected}", interior.len());
        assert!(moved.distance(expected) <= 0.5, "{name}: the silhouette moved {moved}, not {expected}");
    }
}

#[test]
fn a_moving_camera_moves_the_ground_as_reprojection_says() {
    let mut setup = walking();
    // The figure far out of sight along the ground (the ground stays under its feet): only the
    // ground shows.
    let away = setup.bounds.extent() * 100.0;
    setup.instances[0].position += Vec3::new(away, 0.0, away);
    let first = setup.frame(0.0, aspect());
    setup.camera.orbit(6.0, 3.0);
    setup.camera.zoom(0.3);
    let second = setup.frame(0.0, aspect());
    let frames = frames(&setup, &[first.clone(), second.clone()], Strategy::Compute, false);
    let ground = second.ground;
    let inverse = second.view_projection.inverse();
    let (mut checked, mut worst) = (0, 0.0f32);
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            // The ray through the pixel's centre, to the ground plane.
            let ndc = Vec2::new((x as f32 + 0.5) / WIDTH as f32, (y as f32 + 0.5) / HEIGHT as f32) * 2.0 - 1.0;
            let near = inverse.project_point3(ndc.extend(0.0));
            let far = inverse.project_point3(ndc.extend(1.0));
            let t = (ground.y - near.y) / (far.y - near.y);
            let point = near + (far - near) * t;
            let inside = (point.x - ground.x).abs() < ground.w * 0.95 && (point.z - ground.z).abs() < ground.w * 0.95;
            if !(0.0..=1.0).contains(&t) || !inside {
                continue;
            }
            let expected = pixel(second.view_projection, point) - pixel(first.view_projection, point);
            worst = worst.max(frames[1].at((x, y)).distance(expected));
            checked += 1;
        }
    }
    println!("{checked} ground pixels within {worst:.4} pixels of the reprojection");
    assert!(checked > (WIDTH * HEIGHT / 4) as usize, "{checked} ground pixels");
    assert!(frames[1].longest() > 2.0, "the camera moved the ground by {} pixels at most", frames[1].longest());
    assert!(worst <= 0.5, "a ground pixel is {worst} pixels from its reprojection");
}

#[test]
fn a_teleport_or_a_clip_switch_leaves_no_streak() {
    let mut setup = walking();
    assert!(setup.model.clips.len() >= 2, "the bundled figure has two clips");
    let start = setup.instances[0].position;
    let walk = setup.frame(0.5, aspect());
    // Teleported: told, and not told.
    setup.instances[0].position = start + Vec3::X * setup.bounds.extent() * 0.2;
    let untold = setup.frame(0.5 + STEP, aspect());
    setup.instances.restart_motion(0);
    let teleported = setup.frame(0.5 + STEP, aspect());
    // A clip switched without a crossfade (the renderer finds it), then played on.
    setup.instances[0].position = start;
    setup.play(1, 0.5 + 2.0 * STEP, 0.0);
    let switched = setup.frame(0.5 + 2.0 * STEP, aspect());
    let played_on = setup.frame(0.5 + 3.0 * STEP, aspect());

    for strategy in Strategy::ALL {
        let name = strategy.name();
        let scenes = [walk.clone(), teleported.clone(), switched.clone(), played_on.clone()];
        let blurred = frames(&setup, &scenes, strategy, true);
        assert_eq!(blurred[1].longest(), 0.0, "{name}: the teleport's frame shows no motion");
        assert_eq!(blurred[2].longest(), 0.0, "{name}: the clip switch's frame shows no motion");
        assert!(blurred[3].longest() > 0.2, "{name}: the next frame moves again");
        // With no motion the blur leaves the image as the forward pass drew it.
        let sharp = frames(&setup, &scenes[..2], strategy, false);
        assert!(blurred[1].image == sharp[1].image, "{name}: the blur changed a frame without motion");
        // Not told of the teleport, the figure streaks across the jump: the check can fail.
        let streaked = frames(&setup, &[walk.clone(), untold.clone()], strategy, false);
        assert!(streaked[1].longest() > 5.0, "{name}: an untold teleport moves {} pixels", streaked[1].longest());
    }
    // A cut of the whole view: the camera jumps and the clock with it; Renderer::cut_motion says so.
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, WIDTH, HEIGHT).expect("renderer");
    headless.renderer.write_velocity = true;
    headless.render(&walk).expect("frame");
    setup.camera.orbit(120.0, 20.0);
    let cut = setup.frame(2.0, aspect());
    headless.renderer.cut_motion();
    headless.render(&cut).expect("frame");
    let after_cut = headless.renderer.read_velocity().expect("velocity");
    assert!(after_cut.iter().all(|motion| *motion == Vec2::ZERO), "the frame after a cut shows motion");
    headless.render(&setup.frame(2.0 + STEP, aspect())).expect("frame");
    assert!(headless.renderer.read_velocity().expect("velocity").iter().any(|motion| *motion != Vec2::ZERO));
    assert_no_validation_messages(&device);
}

#[test]
fn the_motion_blur_changes_only_the_pixels_that_move() {
    let mut setup = walking();
    // Walking, and carried across the image by a tenth of its size a frame.
    let first = setup.frame(0.5, aspect());
    setup.instances[0].position += Vec3::X * setup.bounds.extent() * 0.1;
    let scenes = [first, setup.frame(0.5 + STEP, aspect())];
    let sharp = frames(&setup, &scenes, Strategy::Compute, false);
    let blurred = frames(&setup, &scenes, Strategy::Compute, true);
    let (mut changed, mut moving) = (0, 0);
    for (index, motion) in blurred[1].velocity.iter().enumerate() {
        let (x, y) = (index as u32 % WIDTH, index as u32 / WIDTH);
        let same = sharp[1].image.get_pixel(x, y) == blurred[1].image.get_pixel(x, y);
        // Under half a pixel of streak (the shutter is half the frame) a pixel stays as drawn.
        if motion.length() * vkskin::render::passes::motion::SHUTTER < 0.5 {
            assert!(same, "pixel ({x}, {y}) moves {motion} and was blurred");
        } else {
            moving += 1;
            changed += usize::from(!same);
        }
    }
    println!("{moving} pixels streak, {changed} of them changed");
    assert!(moving > 20, "{moving} pixels move a pixel or more");
    assert!(changed * 2 > moving, "the blur changed only {changed} of {moving} streaking pixels");
}

#[test]
fn the_strategies_measure_the_same_motion() {
    let setup = walking();
    let scenes = [setup.frame(0.5, aspect()), setup.frame(0.5 + STEP, aspect())];
    let reference = frames(&setup, &scenes, Strategy::Compute, false);
    for strategy in [Strategy::Vertex, Strategy::Cpu] {
        let other = frames(&setup, &scenes, strategy, false);
        let interior = reference[1].interior();
        let worst = interior.iter().map(|&pixel| other[1].at(pixel).distance(reference[1].at(pixel))).fold(0.0, f32::max);
        println!("{} against compute: {} interior pixels within {worst:.5}", strategy.name(), interior.len());
        assert!(interior.len() > 100);
        assert!(worst <= 0.05, "{}: a pixel's motion differs by {worst}", strategy.name());
    }
}

#[test]
fn with_animation_lod_a_far_figure_moves_only_when_its_palette_is_computed() {
    let mut setup = walking();
    // Seen from four times as far, the figure is under 48 pixels across: far, its palette computed
    // every 2nd, 4th or 8th frame by its size. Between, it is skinned from its last palette: drawn
    // where it was, no motion.
    setup.camera.distance *= 4.0;
    let scenes: Vec<FrameScene> = (0..8).map(|frame| setup.frame(0.5 + frame as f64 * STEP, aspect())).collect();
    let settings = RenderSettings { animation_lod: Some(vkskin::render::ANIMATION_LOD_PIXELS), ..RenderSettings::default() };
    for strategy in [Strategy::Compute, Strategy::Vertex] {
        let frames = frames_with(&setup, &scenes, strategy, settings);
        let longest: Vec<f32> = frames.iter().map(Frame::longest).collect();
        println!("{}: {longest:?}", strategy.name());
        // The first frames compute every palette (none is there yet); then it moves on every
        // interval-th frame alone, the same interval throughout.
        let moving: Vec<usize> = (2..longest.len()).filter(|&frame| longest[frame] > 0.0).collect();
        let steps: Vec<usize> = moving.windows(2).map(|pair| pair[1] - pair[0]).collect();
        assert!(!steps.is_empty() && steps.iter().all(|&step| step == steps[0] && step >= 2), "{}: {longest:?}", strategy.name());
        assert!(longest[2..].iter().any(|&longest| longest > 0.05), "{}: {longest:?}", strategy.name());
    }
    // Teleported across the view, on a frame whose parity would skip the far figure's palette: the
    // restart takes a new palette now, so no later frame streaks from the old place.
    let mut moved = setup;
    let mut scenes = scenes;
    moved.instances[0].position += Vec3::X * moved.bounds.extent();
    moved.instances.restart_motion(0);
    for (frame, scene) in scenes.iter_mut().enumerate().skip(3) {
        *scene = moved.frame(0.5 + frame as f64 * STEP, aspect());
    }
    let mut last_images = Vec::new();
    for strategy in [Strategy::Compute, Strategy::Vertex] {
        let frames = frames_with(&moved, &scenes, strategy, settings);
        let longest: Vec<f32> = frames.iter().map(Frame::longest).collect();
        println!("{}, teleported at the fourth frame: {longest:?}", strategy.name());
        assert!(longest[3..].iter().all(|&longest| longest < 0.5), "{}: {longest:?}", strategy.name());
        last_images.extend(frames.last().map(|frame| frame.image.clone()));
    }
    // Both draw the teleported figure (the `compute` strategy once lost it between the triangle
    // pass's commands and the forward pass's draws): their last images differ in far fewer pixels
    // than the figure covers (the vertex strategy's image against one with the figure gone).
    let [compute, vertex] = &last_images[..] else { panic!("two strategies") };
    let differ = |a: &image::RgbaImage, b: &image::RgbaImage| {
        a.pixels().zip(b.pixels()).filter(|(a, b)| a.0.iter().zip(b.0).any(|(&x, y)| x.abs_diff(y) > 16)).count()
    };
    moved.instances[0].position.x += 1.0e5;
    let gone = moved.frame(scenes.last().expect("frames").seconds, aspect());
    let empty = frames_with(&moved, &[gone], Strategy::Vertex, settings).remove(0).image;
    let (figure, differing) = (differ(vertex, &empty), differ(compute, vertex));
    println!("the teleported figure covers {figure} pixels; compute and vertex differ in {differing}");
    assert!(figure > 20 && differing * 4 <= figure, "compute and vertex differ in {differing} of the figure's {figure} pixels");
}

#[test]
fn morph_targets_move_pixels_as_their_weights_change() {
    let Some(folder) = shared_models("gltf/AnimatedMorphCube") else { return };
    let model = load_model(&folder.join("glTF/AnimatedMorphCube.gltf"), &[]).expect("loads");
    let mut setup = SceneSetup::new(model, 1);
    setup.play(0, 0.0, 0.0);
    setup.frame_played();
    // The cube's only motion is its two targets' weights: half a second on, then paused.
    let scenes = [setup.frame(0.3, aspect()), setup.frame(0.8, aspect()), setup.frame(0.8, aspect())];
    for strategy in Strategy::ALL {
        let frames = frames(&setup, &scenes, strategy, false);
        let longest: Vec<f32> = frames.iter().map(Frame::longest).collect();
        println!("{}: {longest:?}", strategy.name());
        assert!(longest[1] > 1.0, "{}: the weights moved the cube's faces: {longest:?}", strategy.name());
        assert_eq!(longest[2], 0.0, "{}: paused, nothing moves", strategy.name());
    }
}

#[test]
fn the_velocity_target_is_written_only_when_read_and_turning_it_on_needs_no_warm_up() {
    let setup = walking();
    let scenes: Vec<FrameScene> = (0..3).map(|frame| setup.frame(0.5 + frame as f64 * 6.0 * STEP, aspect())).collect();
    let device = validated_device();
    for strategy in [Strategy::Compute, Strategy::Vertex] {
        let name = strategy.name();
        // Off (the default): no target, and no instance moves on the GPU.
        let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (WIDTH, HEIGHT), strategy).expect("renderer");
        headless.render(&scenes[0]).expect("frame");
        headless.render(&scenes[1]).expect("frame");
        assert!(headless.renderer.read_velocity().is_err(), "{name}: a frame without the target has none to read");
        // On from the third frame: its motion is already what a renderer with it on all along sees,
        // since last frame's palette is still in the slots the new one overwrites.
        headless.renderer.write_velocity = true;
        headless.render(&scenes[2]).expect("frame");
        let turned_on = headless.renderer.read_velocity().expect("velocity");
        let all_along = frames(&setup, &scenes, strategy, false);
        let longest = turned_on.iter().map(|motion| motion.length()).fold(0.0, f32::max);
        println!("{name}: turned on, the longest motion is {longest} pixels; on all along, {}", all_along[2].longest());
        assert!(longest > 0.3, "{name}: {longest}");
        assert!(turned_on == all_along[2].velocity, "{name}: the first frame with the target differs from one with it all along");
    }
    assert_no_validation_messages(&device);
}
