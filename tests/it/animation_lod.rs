//! Animation LOD (`--animation-lod on`), validation on: the cull pass lists for the palette pass
//! the instances its CPU mirror lists (near ones every frame, far ones every 2nd, 4th or 8th frame
//! by their size on screen, on the frames of their phase, stale ones at once: every one in the
//! first frame), the palettes it skips stay as they were to the bit, and the ones it computes are
//! the CPU reference's at the new time.

use std::collections::BTreeSet;

use crate::common::{assert_no_validation_messages, default_model, validated_device};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::passes::cull::{computes_palette, reference_interval};
use vkskin::render::reference::reference_palette;

#[test]
fn far_palettes_are_computed_every_2nd_4th_or_8th_frame_as_the_mirror_says() {
    let mut setup = SceneSetup::new(default_model(), 40);
    // Sizes from 0.15 to 1.7 of the figure's: some near, some at every 8th frame.
    for (index, instance) in setup.instances.iter_mut().enumerate() {
        instance.scale = 0.15 + 0.04 * index as f32;
    }
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 320, 240).expect("renderer");
    let joints = setup.model.skeleton.len();
    // A first frame with every figure far: no palette is there yet, so each is computed.
    headless.renderer.setup.animation_lod = Some(1e9);
    let first = setup.frame(0.45, headless.aspect());
    headless.render(&first).expect("frame");
    headless.renderer.wait_all().expect("idle");
    let culled = headless.renderer.read_back_culling().expect("read back");
    assert_eq!(culled.palette_list.iter().copied().collect::<BTreeSet<u32>>(), (0..40).collect(), "stale palettes computed");
    let choice = headless.renderer.level_choice(&first);
    // A threshold with figures near and figures at every 4th frame or less often.
    let first_data = first.instance_data(&setup.model);
    let intervals_at = |pixels: f32| reference_interval(&setup.model, &first, &first_data, &choice, pixels);
    let threshold = (1..4000)
        .map(|pixels| pixels as f32)
        .find(|&pixels| {
            let intervals: Vec<u32> = intervals_at(pixels).into_iter().flatten().collect();
            let count = |wanted: fn(u32) -> bool| intervals.iter().filter(|&&interval| wanted(interval)).count();
            count(|interval| interval == 1) >= 3 && count(|interval| interval >= 4) >= 3
        })
        .expect("a threshold");
    headless.renderer.setup.animation_lod = Some(threshold);
    // The renderer numbers frames from 2: the first one rendered above was 2. Each instance's
    // palette is that frame's until the GPU lists it again.
    let mut kept_frame = [2u32; 40];
    let mut previous = headless.renderer.read_back_skinning().expect("read back").1;
    let mut listed_counts = Vec::new();
    let mut seen_coarsest = 1;
    for frame in 0..10 {
        let scene = setup.frame(0.5 + 0.05 * frame as f64, headless.aspect());
        headless.render(&scene).expect("frame");
        headless.renderer.wait_all().expect("idle");
        let culled = headless.renderer.read_back_culling().expect("read back");
        let (_, palettes) = headless.renderer.read_back_skinning().expect("read back");
        let choice = headless.renderer.level_choice(&scene);
        let palette_frame = frame as u32 + 3;
        let data = scene.instance_data(&setup.model);
        let intervals = reference_interval(&setup.model, &scene, &data, &choice, threshold);
        let expected: BTreeSet<u32> = (0..40u32)
            .filter(|&instance| {
                intervals[instance as usize].is_some_and(|interval| {
                    let stale = palette_frame - kept_frame[instance as usize] > interval;
                    computes_palette(instance, interval, stale, palette_frame)
                })
            })
            .collect();
        let listed: BTreeSet<u32> = culled.palette_list.iter().copied().collect();
        assert_eq!(listed.len(), culled.palette_list.len(), "an instance listed twice");
        let kept = intervals.iter().flatten().count();
        let mut by_interval = [0usize; 4];
        for interval in intervals.iter().flatten() {
            by_interval[interval.trailing_zeros() as usize] += 1;
        }
        println!("frame {frame}: {} palettes computed of {kept} kept (every 1, 2, 4, 8 frames: {by_interval:?})", listed.len());
        assert!(by_interval[0] > 0 && by_interval[0] < kept, "frame {frame}: {by_interval:?}");
        seen_coarsest = seen_coarsest.max(intervals.iter().flatten().copied().max().unwrap_or(1));
        // The GPU's matrix product rounds differently: a figure right at a threshold may go either way.
        let differing = listed.symmetric_difference(&expected).count();
        assert!(differing <= 1, "frame {frame}: {listed:?} listed, {expected:?} by the mirror");
        assert!(listed.len() < kept, "frame {frame}: some far palette kept");
        let tolerance = 1e-4 * setup.model.extent();
        for (instance, data) in data.iter().enumerate() {
            let slots = &palettes[instance * joints..(instance + 1) * joints];
            if listed.contains(&(instance as u32)) {
                kept_frame[instance] = palette_frame;
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
        listed_counts.push(listed.len());
        previous = palettes;
    }
    assert!(seen_coarsest >= 4, "no figure took its palette every 4th frame or less often");
    // Staggered: the work a frame is flat, not a burst every 8th frame.
    let (fewest, most) = (listed_counts.iter().min().copied().unwrap_or(0), listed_counts.iter().max().copied().unwrap_or(0));
    println!("palettes computed a frame: {listed_counts:?}");
    assert!(most <= 2 * fewest.max(1) + 2, "{listed_counts:?}");
    assert_no_validation_messages(&device);
}
