//! Chunked skinned vertices and palettes (validation on). With storage-buffer bindings held to a
//! few instances' worth, the instances spread over several chunk buffers; skinning, culling and
//! the image must not change, and a count past the chunks is refused up front.

use crate::common::{assert_no_validation_messages, check_skinning, default_model, skin_on_gpu, validated_device};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::shader_types::{PaletteMatrix, SkinnedVertex};
use vkskin::render::{Strategy, VisibleCounts, MAX_CHUNKS};

/// Binding bytes that hold exactly three instances of `model`'s skinned vertices.
fn three_instances(setup: &SceneSetup) -> u64 {
    let skinned = setup.model.vertices.len() * size_of::<SkinnedVertex>();
    let palettes = setup.model.skeleton.len() * size_of::<PaletteMatrix>();
    assert!(palettes < skinned);
    3 * skinned as u64
}

#[test]
fn chunked_instances_skin_and_draw_as_one_buffer_does() {
    let setup = SceneSetup::new(default_model(), 10);
    let limit = three_instances(&setup);
    let device = validated_device();
    let (width, height) = (160, 120);
    for strategy in Strategy::ALL {
        let scene_at = |headless: &HeadlessRenderer, time| setup.frame(time, headless.aspect());
        let mut whole = HeadlessRenderer::with_strategy(&device, &setup, (width, height), strategy).expect("renderer");
        let mut chunked =
            HeadlessRenderer::with_settings(&device, &setup, (width, height), strategy, Some(limit).into()).expect("renderer");
        assert_eq!(whole.renderer.setup.chunking.chunk_count, 1);
        assert_eq!((chunked.renderer.setup.chunking.instances_per_chunk, chunked.renderer.setup.chunking.chunk_count), (3, 4));
        for frame in 0..3 {
            let time = 0.3 + f64::from(frame) * 0.05;
            whole.submit(&scene_at(&whole, time)).expect("frame");
            chunked.submit(&scene_at(&chunked, time)).expect("frame");
        }
        let scene = scene_at(&whole, 0.5);
        let reference = whole.render(&scene).expect("frame");
        let image = chunked.render(&scene).expect("frame");
        let all = VisibleCounts { skinned: 10, camera: 10, light: 10 };
        assert_eq!(chunked.renderer.stats.visible, Some(all), "{}", strategy.name());
        let differing = reference.pixels().zip(image.pixels()).filter(|(a, b)| a != b).count();
        println!("{}: {differing} pixels differ between one buffer and 4 chunks", strategy.name());
        assert!(differing * 1000 <= (width * height) as usize, "{}: {differing} pixels differ", strategy.name());
        if strategy == Strategy::Compute {
            let (skinned, _) = skin_on_gpu(&mut chunked, &scene);
            assert_eq!(skinned.len(), 10 * setup.model.vertices.len());
            let (position, normal) = check_skinning(&setup.model, &scene, &skinned);
            println!("chunked worst errors: position {position:e}, normal {normal:e}");
        }
        assert_no_validation_messages(&device);
    }
}

#[test]
fn a_count_past_the_chunks_is_refused_with_the_largest_that_fits() {
    let setup = SceneSetup::new(default_model(), 3 * MAX_CHUNKS as usize + 1);
    let limit = three_instances(&setup);
    let device = validated_device();
    let error = HeadlessRenderer::with_settings(&device, &setup, (64, 48), Strategy::Compute, Some(limit).into())
        .err()
        .expect("too many instances");
    let message = error.to_string();
    assert!(message.contains(&format!("at most {} instances fit", 3 * MAX_CHUNKS)), "{message}");
    assert!(message.contains("maxStorageBufferRange"), "{message}");
    // One fewer fits.
    let setup = SceneSetup::new(default_model(), 3 * MAX_CHUNKS as usize);
    let headless = HeadlessRenderer::with_settings(&device, &setup, (64, 48), Strategy::Compute, Some(limit).into());
    assert_eq!(headless.expect("fits").renderer.setup.chunking.chunk_count, MAX_CHUNKS);
    assert_no_validation_messages(&device);
}
