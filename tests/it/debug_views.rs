//! The debug views (validation on): each one drawn over the same frame changes the image the way it
//! should, views a strategy cannot draw are refused with a reason, and a view the device cannot
//! draw is turned off with one.

use crate::common::{assert_no_validation_messages, default_model, render_with_views, validated_device};
use std::sync::Arc;

use image::{Rgba, RgbaImage};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::passes::debug::DebugViews;
use vkskin::render::Strategy;

fn count(image: &RgbaImage, test: impl Fn(&Rgba<u8>) -> bool) -> usize {
    image.pixels().filter(|pixel| test(pixel)).count()
}

#[test]
fn each_debug_view_draws_what_it_shows() {
    let setup = SceneSetup::new(default_model(), 2);
    let device = validated_device();
    let (width, height) = (240, 180);
    let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (width, height), Strategy::Compute).expect("renderer");
    let scene = setup.frame(0.6, headless.aspect());
    let mut render = |views: &str| render_with_views(&mut headless, &scene, views);
    let plain = render("");
    let changed = |image: &RgbaImage| plain.pixels().zip(image.pixels()).filter(|(a, b)| a != b).count();

    // Skeleton: yellow and orange lines on top.
    let skeleton = render("skeleton");
    let yellow = |pixel: &Rgba<u8>| pixel[0] > 200 && pixel[1] > 100 && pixel[2] < 90;
    println!("skeleton: {} yellow pixels (plain: {})", count(&skeleton, yellow), count(&plain, yellow));
    assert!(count(&skeleton, yellow) > count(&plain, yellow) + 40);

    // Bounds: green boxes (both instances are in view).
    let bounds = render("bounds");
    // Thin lines come out of the 4× MSAA resolve blended with what is behind them.
    let green = |pixel: &Rgba<u8>| pixel[1] > 140 && pixel[1] > pixel[0] + 50 && pixel[1] > pixel[2] + 30;
    println!("bounds: {} green pixels (plain: {})", count(&bounds, green), count(&plain, green));
    assert!(count(&bounds, green) > count(&plain, green) + 60);

    // Wireframe: dark edges over the model.
    let wireframe = render("wireframe");
    let brightness = |pixel: &Rgba<u8>| u32::from(pixel[0]) + u32::from(pixel[1]) + u32::from(pixel[2]);
    let darkened = plain.pixels().zip(wireframe.pixels()).filter(|(a, b)| brightness(b) + 60 < brightness(a)).count();
    let brightened = plain.pixels().zip(wireframe.pixels()).filter(|(a, b)| brightness(b) > brightness(a) + 60).count();
    println!("wireframe: {darkened} pixels darkened, {brightened} brightened");
    assert!(darkened > 200 && brightened < darkened / 10);

    // Normals: blue lines.
    if device.geometry_shader {
        let normals = render("normals");
        let blue = |pixel: &Rgba<u8>| pixel[2] > 180 && pixel[0] < 140;
        println!("normals: {} blue pixels (plain: {})", count(&normals, blue), count(&plain, blue));
        assert!(count(&normals, blue) > count(&plain, blue) + 100);
    } else {
        println!("normals: skipped, no geometry shaders on this device");
    }

    // Shadow map: the bottom-left third-of-height square changes, nothing outside it.
    let shadowmap = render("shadowmap");
    let side = height / 3;
    let (mut inside, mut outside) = (0, 0);
    for (x, y, pixel) in shadowmap.enumerate_pixels() {
        if pixel != plain.get_pixel(x, y) {
            if x < side + 10 && y + side + 10 >= height {
                inside += 1;
            } else {
                outside += 1;
            }
        }
    }
    println!("shadowmap: {inside} pixels changed in the corner, {outside} outside");
    // Outside the corner at most a few pixels, none on lavapipe: on a GPU the triangle pass's
    // lists are appended with atomics, so where two triangles meet at one depth the order that
    // picks the colour changes from frame to frame (an H100 changed 1 pixel).
    assert!(inside > (side * side / 2) as usize && outside <= 4);

    // All at once still draws, and turning them off gives the plain image back.
    let all = render("skeleton,normals,shadowmap,wireframe,bounds");
    assert!(changed(&all) > changed(&skeleton));
    // The same draw-order noise: an H100 changed 1 pixel here too.
    let again = changed(&render(""));
    println!("all views off again: {again} pixels changed");
    assert!(again <= 4);
    assert_no_validation_messages(&device);
}

#[test]
fn views_a_strategy_cannot_draw_are_refused() {
    let setup = SceneSetup::new(default_model(), 1);
    let device = validated_device();
    let mut vertex = HeadlessRenderer::with_strategy(&device, &setup, (32, 24), Strategy::Vertex).expect("renderer");
    let error = vertex.renderer.set_debug(DebugViews::parse("wireframe").expect("views")).expect_err("no skinned buffer");
    assert!(error.contains("vertex strategy"), "{error}");
    assert!(vertex.renderer.set_debug(DebugViews::parse("skeleton,bounds,shadowmap").expect("views")).is_ok());
    let mut cpu = HeadlessRenderer::with_strategy(&device, &setup, (32, 24), Strategy::Cpu).expect("renderer");
    let error = cpu.renderer.set_debug(DebugViews::parse("skeleton").expect("views")).expect_err("no palette pass");
    assert!(error.contains("cpu strategy"), "{error}");
    let error = DebugViews::parse("skeleton,bones").expect_err("unknown view");
    assert!(error.contains("bones") && error.contains("wireframe"), "{error}");
    assert_no_validation_messages(&device);
}

#[test]
fn a_view_the_device_cannot_draw_is_turned_off_with_the_reason() {
    // As on MoltenVK (macOS), which has no geometry shaders: the device says it has none, so the
    // normals view's pipeline is never built.
    let mut device = validated_device();
    Arc::get_mut(&mut device).expect("the one handle").geometry_shader = false;
    let setup = SceneSetup::new(default_model(), 1);
    let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (96, 72), Strategy::Compute).expect("renderer");
    let scene = setup.frame(0.6, headless.aspect());
    let missing = headless.renderer.set_debug(DebugViews::parse("normals,skeleton").expect("views")).expect("not an error");
    let missing = missing.expect("a reason");
    assert!(missing.contains("normals") && missing.contains("geometry shaders"), "{missing}");
    assert!(!headless.renderer.debug.normals && headless.renderer.debug.skeleton);
    headless.submit(&scene).expect("frame");
    let without_normals = headless.render(&scene).expect("frame");
    // The frame is the skeleton view's alone.
    let skeleton = render_with_views(&mut headless, &scene, "skeleton");
    assert!(without_normals == skeleton, "the frame shows the skeleton and nothing of the normals");
    assert_no_validation_messages(&device);
}
