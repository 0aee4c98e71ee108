//! Headless images on lavapipe (validation on): the character is there, it casts a shadow on the
//! ground, and time moves it.
//!
//! The character's pixels and its shadow's are found by rendering the same frame twice, once with the
//! instance moved far below the ground (same camera, same light matrix), and comparing, at places
//! the CPU reference predicts: its projected vertices, and those vertices cast along the light onto the ground.

use glam::{Mat4, Vec3};
use vkskin::app::{default_animations, default_model_path, headless_device, HeadlessRenderer, SceneSetup};
use vkskin::formats::load_model;
use vkskin::render::FrameScene;

const WIDTH: u32 = 320;
const HEIGHT: u32 = 240;

fn luminance(pixel: &image::Rgba<u8>) -> f32 {
    0.2126 * f32::from(pixel[0]) + 0.7152 * f32::from(pixel[1]) + 0.0722 * f32::from(pixel[2])
}

fn to_pixel(view_projection: Mat4, world: Vec3) -> Option<(u32, u32)> {
    let clip = view_projection * world.extend(1.0);
    if clip.w <= 0.0 {
        return None;
    }
    let ndc = clip.truncate() / clip.w;
    let x = ((ndc.x * 0.5 + 0.5) * WIDTH as f32).floor();
    let y = ((ndc.y * 0.5 + 0.5) * HEIGHT as f32).floor();
    ((0.0..WIDTH as f32).contains(&x) && (0.0..HEIGHT as f32).contains(&y)).then_some((x as u32, y as u32))
}

/// World-space skinned positions of instance 0, from the CPU reference.
fn cpu_skinned_positions(setup: &SceneSetup, scene: &FrameScene) -> Vec<Vec3> {
    vkskin::render::reference::reference_skinning(&setup.model, &scene.instance_data(&setup.model)[0], &scene.morph_overrides)
        .iter()
        .map(|vertex| vertex.position)
        .collect()
}

#[test]
fn the_character_is_drawn_and_casts_a_shadow_and_moves() {
    let path = default_model_path();
    let model = load_model(&path, &default_animations(&path, &[])).expect("the bundled model loads");
    let mut setup = SceneSetup::new(model, 1);
    let device = headless_device(true).expect("lavapipe with validation");
    let mut headless = HeadlessRenderer::new(&device, &setup, WIDTH, HEIGHT).expect("renderer");

    let scene = setup.frame(0.5, headless.aspect());
    let with_character = headless.render(&scene).expect("frame");
    setup.instances[0].position.y -= 1.0e4; // far below the ground: out of view and out of the light's volume
    let empty = FrameScene { ground: scene.ground, ..setup.frame(0.5, headless.aspect()) }; // the same ground
    let without_character = headless.render(&empty).expect("frame");
    setup.instances[0].position.y += 1.0e4;

    // The character: projected vertices bound a box; most of that box changed between the renders.
    let positions = cpu_skinned_positions(&setup, &scene);
    let pixels: Vec<(u32, u32)> = positions.iter().filter_map(|&p| to_pixel(scene.view_projection, p)).collect();
    assert!(pixels.len() > positions.len() * 9 / 10, "the character is in view");
    let (min_x, max_x) = (pixels.iter().map(|p| p.0).min().unwrap_or(0), pixels.iter().map(|p| p.0).max().unwrap_or(0));
    let (min_y, max_y) = (pixels.iter().map(|p| p.1).min().unwrap_or(0), pixels.iter().map(|p| p.1).max().unwrap_or(0));
    let box_area = (max_x - min_x + 1) * (max_y - min_y + 1);
    let inside_box = |x: u32, y: u32| (min_x..=max_x).contains(&x) && (min_y..=max_y).contains(&y);
    let changed = |x: u32, y: u32| {
        let (a, b) = (with_character.get_pixel(x, y), without_character.get_pixel(x, y));
        (0..3).any(|channel| a[channel].abs_diff(b[channel]) > 6)
    };
    let covered =
        (min_y..=max_y).flat_map(|y| (min_x..=max_x).map(move |x| (x, y))).filter(|&(x, y)| changed(x, y)).count() as u32;
    let image_area = WIDTH * HEIGHT;
    println!(
        "character box {box_area} px ({:.1}% of the image), {covered} px drawn",
        100.0 * box_area as f32 / image_area as f32
    );
    assert!(box_area > image_area / 50 && box_area < image_area * 9 / 10, "the character's box is a plausible size");
    assert!(covered > box_area / 5 && covered <= box_area, "the character covers a plausible part of its box");
    // The projected vertices themselves are drawn (allowing for the odd one hidden on an edge).
    let drawn = pixels.iter().filter(|&&(x, y)| changed(x, y)).count();
    assert!(drawn * 100 >= pixels.len() * 97, "{drawn} of {} projected vertices changed pixels", pixels.len());

    // The shadow: vertices cast along the light onto the ground, outside the character's box.
    let ground_height = scene.ground.y;
    let light = scene.light_direction;
    let mut darker = 0;
    let mut samples = 0;
    let mut seen = std::collections::HashSet::new();
    for &position in &positions {
        let on_ground = position - light * ((position.y - ground_height) / light.y);
        let Some((x, y)) = to_pixel(scene.view_projection, on_ground) else { continue };
        if inside_box(x, y) || !seen.insert((x, y)) {
            continue;
        }
        samples += 1;
        if luminance(with_character.get_pixel(x, y)) < 0.8 * luminance(without_character.get_pixel(x, y)) {
            darker += 1;
        }
    }
    println!("shadow: {darker} of {samples} ground pixels under the cast character are darker");
    assert!(samples >= 50, "the shadow falls in view, outside the character ({samples} pixels)");
    assert!(darker * 10 >= samples * 8, "the ground under the character is in shadow ({darker} of {samples} darker)");
    // Open ground far from both is untouched.
    let corner = (2, HEIGHT - 3);
    assert_eq!(with_character.get_pixel(corner.0, corner.1), without_character.get_pixel(corner.0, corner.1));

    // Time moves the character.
    let later = headless.render(&setup.frame(1.25, headless.aspect())).expect("frame");
    let differing = with_character.pixels().zip(later.pixels()).filter(|(a, b)| a != b).count();
    println!("t = 0.5 s vs 1.25 s: {differing} pixels differ");
    assert!(differing > (image_area / 200) as usize, "two times give different images");

    if let Ok(folder) = std::env::var("VKSKIN_TEST_IMAGES") {
        let _ = with_character.save(format!("{folder}/headless_with.png"));
        let _ = without_character.save(format!("{folder}/headless_without.png"));
    }
    let counts = device.instance.message_counts();
    assert_eq!((counts.errors, counts.warnings), (0, 0), "validation messages");
}
