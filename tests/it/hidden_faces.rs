//! Culling the hidden side of a closed model (`Model::facing`, `render::hidden_side`) leaves the
//! frame as it was: the depth test kept the nearest, front-facing triangles anyway. The same figure
//! is drawn twice, once as loaded (closed: back faces culled) and once with one triangle doubled
//! in reverse on top of itself, which opens the surface to the edge check (two-sided: nothing
//! culled) while adding nothing visible. Validation on.
//!
//! Tolerance: rasterization rules may give a silhouette sample to a back face where the front face
//! just misses it, so at most 0.1 % of pixels may differ by more than 12 levels in any channel,
//! and the mean difference stays under a fifth of a level.

use crate::common::{assert_no_validation_messages, default_model, render_with_views, validated_device};
use ash::vk;
use glam::Vec3;
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::model::{Facing, Model};
use vkskin::render::{hidden_side, Strategy};

fn render(model: Model, strategy: Strategy) -> image::RgbaImage {
    let mut setup = SceneSetup::new(model, 3);
    setup.play(1, 0.0, 0.0);
    let device = validated_device();
    let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (240, 180), strategy).expect("renderer");
    for frame in 0..3 {
        headless.submit(&setup.frame(0.5 + f64::from(frame) * 0.01, headless.aspect())).expect("frame");
    }
    let image = headless.render(&setup.frame(0.7, headless.aspect())).expect("frame");
    assert_no_validation_messages(&device);
    // The pipelines got the model's verdict.
    assert_eq!(headless.renderer.setup.cull_mode, hidden_side(setup.model.facing()));
    image
}

/// The figure with one triangle doubled in reverse on top of itself: the same picture, but the
/// surface is no longer closed, so nothing is culled.
fn two_sided_figure() -> Model {
    let mut two_sided = default_model();
    let last = two_sided.meshes.len() - 1;
    let end = (two_sided.meshes[last].first_index + two_sided.meshes[last].index_count) as usize;
    let first = two_sided.meshes[last].first_index as usize;
    let [a, b, c] = [two_sided.indices[first], two_sided.indices[first + 1], two_sided.indices[first + 2]];
    two_sided.indices.splice(end..end, [a, c, b]);
    two_sided.meshes[last].index_count += 3;
    two_sided
}

#[test]
fn culling_the_hidden_side_keeps_the_image() {
    let closed = default_model();
    assert_eq!(closed.facing(), Facing::Outward);
    assert_eq!(hidden_side(closed.facing()), vk::CullModeFlags::BACK);

    let two_sided = two_sided_figure();
    assert_eq!(two_sided.facing(), Facing::TwoSided);
    assert_eq!(hidden_side(two_sided.facing()), vk::CullModeFlags::NONE);

    for strategy in [Strategy::Compute, Strategy::Vertex] {
        let culled = render(closed.clone(), strategy);
        let both_sides = render(two_sided.clone(), strategy);
        let (mut far, mut total) = (0usize, 0u64);
        for (a, b) in culled.pixels().zip(both_sides.pixels()) {
            let difference = (0..3).map(|channel| a[channel].abs_diff(b[channel])).max().unwrap_or(0);
            total += u64::from(difference);
            far += usize::from(difference > 12);
        }
        let pixels = culled.pixels().len();
        let mean = total as f64 / pixels as f64;
        println!("{}: {far} pixels differ by more than 12 levels, mean difference {mean:.4}", strategy.name());
        assert!(far * 1000 <= pixels, "{}: {far} of {pixels} pixels differ", strategy.name());
        assert!(mean < 0.2, "{}: mean difference {mean}", strategy.name());
        let background = culled.get_pixel(0, 0);
        assert!(culled.pixels().filter(|pixel| *pixel != background).count() > 1000, "nothing was drawn");
    }
}

/// The wireframe view hides the side the forward pass hides. The camera sits inside the figure's
/// chest, where every triangle in sight turns its back: over the closed figure (back faces culled)
/// the forward pass shows the scene through the chest and the wireframe must add almost nothing;
/// over the same figure drawn two-sided, both show the chest's inside. Both in the cpu strategy,
/// whose forward pass draws whole instances (no triangle pass), so only the pipelines' cull mode
/// differs.
#[test]
fn the_wireframe_hides_what_the_forward_pass_hides() {
    let darkened = |model: Model| {
        let mut setup = SceneSetup::new(model, 1);
        // The bind pose at the origin, the camera in the middle of its chest, looking at its back.
        (setup.instances[0].clip, setup.instances[0].position) = (None, Vec3::ZERO);
        let body = setup.model.bind_bounds();
        setup.camera.target = Vec3::new(body.center().x, body.min.y + 0.72 * body.size().y, body.center().z);
        (setup.camera.distance, setup.camera.yaw, setup.camera.pitch) = (0.03, 0.0, 0.0);
        let device = validated_device();
        let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (320, 240), Strategy::Cpu).expect("renderer");
        let scene = setup.frame(0.6, headless.aspect());
        let plain = render_with_views(&mut headless, &scene, "");
        let wireframe = render_with_views(&mut headless, &scene, "wireframe");
        assert_no_validation_messages(&device);
        let brightness = |pixel: &image::Rgba<u8>| u32::from(pixel[0]) + u32::from(pixel[1]) + u32::from(pixel[2]);
        plain.pixels().zip(wireframe.pixels()).filter(|(a, b)| brightness(b) + 60 < brightness(a)).count()
    };
    let closed = darkened(default_model());
    let two_sided = darkened(two_sided_figure());
    println!("wireframe: {closed} pixels darkened over the closed figure, {two_sided} over the two-sided one");
    assert!(two_sided > 300, "the two-sided wireframe drew almost nothing: {two_sided} pixels");
    assert!(closed * 10 < two_sided, "back edges were drawn: {closed} vs {two_sided} pixels");
}
