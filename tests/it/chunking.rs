//! Chunked skinned vertices and palettes (validation on). With storage-buffer bindings held to a
//! few instances' worth, the instances spread over several chunk buffers; skinning, culling and
//! the image must not change, and a count past the chunks is refused up front.

use crate::common::{
    assert_no_validation_messages, check_skinning, default_model, largest_that_fits, skin_on_gpu, validated_device,
};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::shader_types::{PaletteMatrix, SkinnedVertex};
use vkskin::render::{Strategy, MAX_CHUNKS};

/// Binding bytes that hold exactly three instances of `model`'s skinned vertices (`compute`:
/// what bounds its chunks), or four of its palettes (`vertex` and `cpu`, which keep no skinned
/// vertices in storage buffers; four, as the clips' keys take more than three).
fn chunk_of_a_few(setup: &SceneSetup, strategy: Strategy) -> u64 {
    let skinned = setup.model.vertices.len() * size_of::<SkinnedVertex>();
    // Each joint's matrix and dual quaternion and a header, twice (common.glsl).
    let palettes = 2 * (2 * setup.model.skeleton.len() + 1) * size_of::<PaletteMatrix>();
    assert!(palettes < skinned);
    if strategy == Strategy::Compute {
        3 * skinned as u64
    } else {
        4 * palettes as u64
    }
}

#[test]
fn chunked_instances_skin_and_draw_as_one_buffer_does() {
    let setup = SceneSetup::new(default_model(), 10);
    let device = validated_device();
    let (width, height) = (160, 120);
    for strategy in Strategy::ALL {
        let limit = chunk_of_a_few(&setup, strategy);
        let scene_at = |headless: &HeadlessRenderer, time| setup.frame(time, headless.aspect());
        let mut whole = HeadlessRenderer::with_strategy(&device, &setup, (width, height), strategy).expect("renderer");
        let mut chunked =
            HeadlessRenderer::with_settings(&device, &setup, (width, height), strategy, Some(limit).into()).expect("renderer");
        assert_eq!(whole.renderer.setup.chunking.chunk_count, 1);
        let chunking = chunked.renderer.setup.chunking;
        let expected = if strategy == Strategy::Compute { (3, 4) } else { (4, 3) };
        assert_eq!((chunking.instances_per_chunk, chunking.chunk_count), expected, "{}", strategy.name());
        for frame in 0..3 {
            let time = 0.3 + f64::from(frame) * 0.05;
            whole.submit(&scene_at(&whole, time)).expect("frame");
            chunked.submit(&scene_at(&chunked, time)).expect("frame");
        }
        let scene = scene_at(&whole, 0.5);
        let reference = whole.render(&scene).expect("frame");
        let image = chunked.render(&scene).expect("frame");
        let visible = chunked.renderer.stats.visible.expect("counts");
        let counts = (visible.skinned, visible.camera, visible.light, visible.coarser, visible.not_drawn);
        assert_eq!(counts, (10, 10, 10, 0, 0), "{}", strategy.name());
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
    // Bindings held to four instances' palettes: the vertex strategy's chunks hold four each.
    let setup = SceneSetup::new(default_model(), 4 * MAX_CHUNKS as usize + 1);
    let limit = chunk_of_a_few(&setup, Strategy::Vertex);
    let device = validated_device();
    let error = HeadlessRenderer::with_settings(&device, &setup, (64, 48), Strategy::Vertex, Some(limit).into())
        .err()
        .expect("too many instances");
    let message = error.to_string();
    assert!(message.contains(&format!("at most {} instances fit", 4 * MAX_CHUNKS)), "{message}");
    assert!(message.contains("chunks of maxStorageBufferRange"), "{message}");
    // One fewer fits.
    let setup = SceneSetup::new(default_model(), 4 * MAX_CHUNKS as usize);
    let headless = HeadlessRenderer::with_settings(&device, &setup, (64, 48), Strategy::Vertex, Some(limit).into());
    assert_eq!(headless.expect("fits").renderer.setup.chunking.chunk_count, MAX_CHUNKS);
    // With the compute strategy, what bounds the count there is named, and the largest it allows fits.
    let limit = chunk_of_a_few(&setup, Strategy::Compute);
    let error = HeadlessRenderer::with_settings(&device, &setup, (64, 48), Strategy::Compute, Some(limit).into())
        .err()
        .expect("too many instances");
    let message = error.to_string();
    let most = largest_that_fits(&message).unwrap_or_else(|| panic!("{message}")) as usize;
    assert!(message.contains("maxStorageBufferRange") && most < 4 * MAX_CHUNKS as usize, "{message}");
    let setup = SceneSetup::new(default_model(), most);
    HeadlessRenderer::with_settings(&device, &setup, (64, 48), Strategy::Compute, Some(limit).into()).expect("the largest fits");
    assert_no_validation_messages(&device);
}
