//! The three skinning strategies draw the same image (validation on). `compute` skins once into a
//! buffer; `vertex` skins in both passes' vertex shaders; `cpu` skins on the CPU.
//!
//! Tolerance: `compute` and `cpu` store normals as snorm16 while `vertex` keeps them in f32, and the
//! CPU sums in another order, so shading may differ by a level or two and a silhouette pixel may
//! flip; at most 0.5 % of pixels may differ by more than 12 levels in any channel, and the mean
//! difference stays under one level.

use crate::common::{assert_no_validation_messages, default_model, validated_device};
use vkskin::app::imagediff::{LargestDifference, FAR_ABOVE};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::Strategy;

#[test]
fn every_strategy_draws_the_same_image() {
    let mut setup = SceneSetup::new(default_model(), 3);
    setup.play(1, 0.0, 0.0); // the wave clip on every instance
    setup.instances[2].switch_clip(0, 0.5, 1.0); // and one halfway through a crossfade
    strategies_agree(&setup, (200, 150));
}

/// With levels of detail, each strategy draws each instance's level: `cpu` skins the levels its
/// conservative CPU mirror picks, so no triangle the GPU draws finds a vertex unskinned.
#[test]
fn every_strategy_draws_the_same_levels_of_detail() {
    let mut setup = SceneSetup::new(vkskin::model::lod::with_levels(&default_model()), 300);
    setup.camera.distance *= 0.4; // from an arm's length to the far side of the grid, some out of view
    setup.camera.pitch = 0.15;
    strategies_agree(&setup, (480, 270));
}

fn strategies_agree(setup: &SceneSetup, (width, height): (u32, u32)) {
    let mut images = Vec::new();
    for strategy in Strategy::ALL {
        let device = validated_device();
        let mut headless = HeadlessRenderer::with_strategy(&device, setup, (width, height), strategy).expect("renderer");
        // A few frames first, so the frames-in-flight ring and every barrier are exercised.
        for frame in 0..6 {
            headless.submit(&setup.frame(0.8 + f64::from(frame) * 0.01, headless.aspect())).expect("frame");
        }
        let image = headless.render(&setup.frame(1.0, headless.aspect())).expect("frame");
        assert_no_validation_messages(&device);
        images.push((strategy, image));
    }
    let (_, reference) = &images[0];
    for (strategy, image) in &images[1..] {
        let difference = LargestDifference::between(reference, image);
        let (far, pixels, mean) = (difference.far, difference.pixels, difference.mean);
        println!(
            "{} vs compute: {far} pixels differ by more than {FAR_ABOVE} levels, mean difference {mean:.3}",
            strategy.name()
        );
        assert!(far * 200 <= pixels, "{}: {far} of {pixels} pixels differ", strategy.name());
        assert!(mean < 1.0, "{}: mean difference {mean}", strategy.name());
    }
    // And the images are not trivially equal because nothing was drawn.
    let background = reference.get_pixel(0, 0);
    assert!(reference.pixels().filter(|pixel| *pixel != background).count() > 1000);
}

/// A crowd's tint moves cloth toward its hue and leaves the brightness, in every strategy's
/// forward vertex shader (each reads the tint its own way); its scale makes the figure taller.
#[test]
fn every_strategy_tints_and_scales_an_instance() {
    let plain = SceneSetup::new(default_model(), 1);
    let mut varied = SceneSetup::new(default_model(), 1);
    varied.instances[0].tint = [1.0, 0.1, 0.1, 1.0];
    let mut taller = SceneSetup::new(default_model(), 1);
    taller.instances[0].scale = 1.2;
    // Rows the figure covers: its height on screen.
    let rows = |image: &image::RgbaImage| {
        let background = *image.get_pixel(0, 0);
        let covered: Vec<u32> = (0..image.height())
            .filter(|&y| {
                (0..image.width()).any(|x| {
                    let pixel = image.get_pixel(x, y);
                    pixel.0[..3].iter().zip(&background.0[..3]).any(|(a, b)| a.abs_diff(*b) > 40)
                })
            })
            .collect();
        covered.last().copied().unwrap_or(0) - covered.first().copied().unwrap_or(0)
    };
    for strategy in Strategy::ALL {
        let device = validated_device();
        let render = |setup: &SceneSetup| {
            let mut headless = HeadlessRenderer::with_strategy(&device, setup, (160, 120), strategy).expect("renderer");
            headless.render(&setup.frame(0.5, headless.aspect())).expect("frame")
        };
        let (before, after) = (render(&plain), render(&varied));
        // The pixels the tint changed: redder than they were, about as bright.
        let (mut changed, mut redder, mut luma_before, mut luma_after) = (0u32, 0i64, 0f64, 0f64);
        for (a, b) in before.pixels().zip(after.pixels()) {
            if a.0[..3].iter().zip(&b.0[..3]).any(|(x, y)| x.abs_diff(*y) > 8) {
                changed += 1;
                redder += (i64::from(b.0[0]) - i64::from(b.0[2])) - (i64::from(a.0[0]) - i64::from(a.0[2]));
                let luma = |pixel: &image::Rgba<u8>| {
                    0.2126 * f64::from(pixel.0[0]) + 0.7152 * f64::from(pixel.0[1]) + 0.0722 * f64::from(pixel.0[2])
                };
                luma_before += luma(a);
                luma_after += luma(b);
            }
        }
        let name = strategy.name();
        println!(
            "{name}: {changed} pixels tinted, red - blue up {} levels, brightness {:.2}x",
            redder / i64::from(changed.max(1)),
            luma_after / luma_before.max(1.0)
        );
        assert!(changed > 300, "{name}: the tint changed {changed} pixels");
        assert!(redder > 40 * i64::from(changed), "{name}: the tinted pixels are not redder");
        assert!((luma_after / luma_before - 1.0).abs() < 0.25, "{name}: the tint changed the brightness");
        let (height, scaled) = (rows(&before), rows(&render(&taller)));
        assert!(scaled as f32 > height as f32 * 1.1, "{name}: scale 1.2 drew {scaled} rows against {height}");
        assert_no_validation_messages(&device);
    }
}
