//! Animation LOD (`--animation-lod on`), validation on: the cull pass lists for the palette pass
//! the instances its CPU mirror lists (near ones every frame, far ones on the frames of their
//! parity, stale ones at once: every one in the first frame), the palettes it skips stay last
//! frame's to the bit, and the ones it computes are the CPU reference's at the new time.

use std::collections::BTreeSet;

use crate::common::{assert_no_validation_messages, default_model, validated_device};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::passes::cull::{computes_palette, reference_far};
use vkskin::render::reference::reference_palette;

#[test]
fn far_palettes_are_computed_every_second_frame_as_the_mirror_says() {
    let setup = SceneSetup::new(default_model(), 40);
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 320, 240).expect("renderer");
    let joints = setup.model.skeleton.len();
    // A first frame with every figure far: no palette is last frame's yet, so each is computed.
    headless.renderer.setup.animation_lod = Some(1e9);
    let first = setup.frame(0.45, headless.aspect());
    headless.render(&first).expect("frame");
    headless.renderer.wait_all().expect("idle");
    let culled = headless.renderer.read_back_culling().expect("read back");
    assert_eq!(culled.palette_list.iter().copied().collect::<BTreeSet<u32>>(), (0..40).collect(), "stale palettes computed");
    let choice = headless.renderer.level_choice(&first);
    // A threshold with about half the figures far: some near, some far.
    let kept = reference_far(&setup.model, &first, &choice, 0.0).iter().flatten().count();
    let far_at = |pixels: f32| reference_far(&setup.model, &first, &choice, pixels).iter().flatten().filter(|&&far| far).count();
    let threshold = (1..2000).map(|pixels| pixels as f32).find(|&pixels| 2 * far_at(pixels) >= kept).expect("a threshold");
    headless.renderer.setup.animation_lod = Some(threshold);
    let mut previous = headless.renderer.read_back_skinning().expect("read back").1;
    for (frame, seconds) in [0.5, 0.55, 0.6].into_iter().enumerate() {
        let scene = setup.frame(seconds, headless.aspect());
        headless.render(&scene).expect("frame");
        headless.renderer.wait_all().expect("idle");
        let culled = headless.renderer.read_back_culling().expect("read back");
        let (_, palettes) = headless.renderer.read_back_skinning().expect("read back");
        let choice = headless.renderer.level_choice(&scene);
        // The renderer numbers frames from 2: the first one rendered above was 2.
        let palette_frame = frame as u32 + 3;
        let far = reference_far(&setup.model, &scene, &choice, threshold);
        let expected: BTreeSet<u32> = (0..40u32)
            .filter(|&instance| far[instance as usize].is_some_and(|far| computes_palette(instance, far, false, palette_frame)))
            .collect();
        let listed: BTreeSet<u32> = culled.palette_list.iter().copied().collect();
        assert_eq!(listed.len(), culled.palette_list.len(), "an instance listed twice");
        let (far_count, kept) = (far.iter().flatten().filter(|&&far| far).count(), far.iter().flatten().count());
        println!("frame {frame}: {} palettes computed of {kept} kept ({far_count} far)", listed.len());
        assert!(far_count > 0 && far_count < kept, "frame {frame}: {far_count} of {kept} far");
        // The GPU's matrix product rounds differently: a figure right at the threshold may go either way.
        let differing = listed.symmetric_difference(&expected).count();
        assert!(differing <= 1, "frame {frame}: {listed:?} listed, {expected:?} by the mirror");
        assert!(listed.len() < kept, "frame {frame}: some far palette kept");
        let tolerance = 1e-4 * setup.model.extent();
        for (instance, data) in scene.instances.iter().enumerate() {
            let slots = &palettes[instance * joints..(instance + 1) * joints];
            if listed.contains(&(instance as u32)) {
                for (joint, expected) in reference_palette(&setup.model, data).iter().enumerate() {
                    let gpu = slots[joint].to_mat4();
                    assert!(gpu.abs_diff_eq(*expected, tolerance), "frame {frame}, instance {instance} joint {joint}");
                }
            } else {
                let before = &previous[instance * joints..][..joints];
                assert_eq!(
                    bytemuck::cast_slice::<_, u8>(slots),
                    bytemuck::cast_slice::<_, u8>(before),
                    "instance {instance} kept"
                );
            }
        }
        previous = palettes;
    }
    assert_no_validation_messages(&device);
}
