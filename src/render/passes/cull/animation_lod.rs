//! Animation LOD's CPU mirror of cull.comp: how often an instance's palette is computed, by its
//! size on screen, and on which frames.

use super::levels::reference_boxes;
use super::LevelChoice;
use crate::model::Model;
use crate::render::shader_types::InstanceData;
use crate::render::FrameScene;

/// Under animation LOD, an instance under the threshold over the first of these takes its palette
/// every 4th frame, under the threshold over the second every 8th (cull.comp's
/// `animation_interval`): 48, 8 and 2 pixels at `ANIMATION_LOD_PIXELS`. Measured at 10,000
/// figures (docs/results.md): 0.72 % of pixels changed against animation LOD off, where halving
/// the threshold each step changed 2.0 % (the 1 % line `--animation-lod`'s default is held to).
pub const ANIMATION_LOD_STEPS: [f32; 2] = [6.0, 24.0];

/// Per instance, the frames between its palettes under animation LOD at a threshold of `pixels`
/// (cull.comp's `animation_interval`: 1, 2, 4 or 8), or None where neither the camera nor the
/// light sees it.
pub fn reference_interval(
    model: &Model,
    scene: &FrameScene,
    instances: &[InstanceData],
    choice: &LevelChoice,
    pixels: f32,
) -> Vec<Option<u32>> {
    let far_ratio = choice.far_ratio(pixels);
    reference_boxes(model, scene, instances, 0.0)
        .map(|(world, seen)| {
            let distance = world.distance_to(scene.camera_position);
            (seen.camera || seen.light).then(|| animation_interval(world.size().length(), distance, far_ratio, seen.camera))
        })
        .collect()
}

/// cull.comp's `animation_interval`: 1 at least `far_ratio` × `distance` across, then 2, 4 and 8
/// under it, a sixth of it and a 24th ([`ANIMATION_LOD_STEPS`]); at least 2 unseen by the camera;
/// 1 with `far_ratio` 0 (off).
pub fn animation_interval(diameter: f32, distance: f32, far_ratio: f32, camera_sees: bool) -> u32 {
    if far_ratio <= 0.0 {
        return 1;
    }
    let threshold = far_ratio * distance;
    let interval = match diameter {
        d if d >= threshold => 1,
        d if d >= threshold / ANIMATION_LOD_STEPS[0] => 2,
        d if d >= threshold / ANIMATION_LOD_STEPS[1] => 4,
        _ => 8,
    };
    if camera_sees {
        interval
    } else {
        interval.max(2)
    }
}

/// Whether cull.comp lists an instance for the palette pass in frame `frame`
/// (`CullPush::palette_frame`) at `interval` (`animation_interval`): its palette `stale` (none,
/// older than the interval, or its record restarting), or the frame of its phase.
pub fn computes_palette(instance: u32, interval: u32, stale: bool, frame: u32) -> bool {
    stale || instance.wrapping_add(frame) & (interval - 1) == 0
}
