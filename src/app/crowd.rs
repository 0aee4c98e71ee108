//! Crowds: many instances of one or several models on a grid, each model scaled to the others,
//! each instance varied in phase, speed, size and colour, the models dealt out so that they mix.

use std::sync::Arc;

use glam::Vec3;

use super::staging::{Staged, Staging};
use crate::anim::InstanceState;
use crate::model::Model;

/// Instances of `models` in a grid centred on the origin, instance i of `models[of[i]]` playing
/// that model's default clip, spaced by the largest figure's footprint in its clip (and room for a
/// crowd's largest size). Of several models, each is scaled to the others' size
/// ([`crowd_sizes`]). A crowd with `variety` is varied ([`crowd_variety`]); otherwise each
/// instance is its model as made, out of step with the last by a fraction of its clip.
pub fn grid_instances(staging: &Staging, models: &[&Model], of: &[u32], variety: bool) -> Vec<InstanceState> {
    let count = of.len();
    // Chosen once a model: the choice samples every clip.
    let clips: Vec<Option<usize>> = models.iter().map(|model| model.default_clip()).collect();
    staging.prepare(models, clips.iter().copied().enumerate());
    let staged: Vec<Arc<Staged>> = clips.iter().enumerate().map(|(model, &clip)| staging.get(models, model, clip)).collect();
    let sizes = crowd_sizes(&staged);
    let room = if count > 1 { 1.0 + CROWD_SCALE } else { 1.0 };
    let footprint = |staged: &Staged| staged.in_place.size().x.max(staged.in_place.size().z);
    let widest = staged.iter().zip(&sizes).map(|(staged, size)| footprint(staged) * size).fold(0.0, f32::max);
    let spacing = (widest * 1.6 + 0.2) * room;
    let columns = (count as f32).sqrt().ceil().max(1.0) as usize;
    let rows = count.div_ceil(columns);
    of.iter()
        .enumerate()
        .map(|(index, &model_index)| {
            let (model, bounds, size) =
                (models[model_index as usize], staged[model_index as usize].in_place, sizes[model_index as usize]);
            let clip = clips[model_index as usize];
            let duration = clip.and_then(|clip| model.clips.get(clip)).map_or(1.0, |clip| clip.duration);
            let (row, column) = (index / columns, index % columns);
            let x = (column as f32 - (columns as f32 - 1.0) * 0.5) * spacing;
            let z = (row as f32 - (rows as f32 - 1.0) * 0.5) * spacing;
            let instance = InstanceState {
                position: Vec3::new(x, 0.0, z) - Vec3::new(bounds.center().x, 0.0, bounds.center().z) * size,
                clip,
                phase: duration * (index as f32 * 0.37).fract(),
                ..InstanceState::default()
            };
            let instance = if variety && count > 1 { crowd_variety(instance, index, duration) } else { instance };
            InstanceState { scale: instance.scale * size, ..instance }
        })
        .collect()
}

/// Each model's scale in a crowd of several, from its played clip ([`Staged`]): files come in their
/// tools' units (a glTF in metres, a Blender FBX in centimetres, a game's MD5 in inches), so each
/// is scaled until its size is the models' median, and a fox stands beside a man rather than a
/// hundred times his height. A figure's size is how tall it stands in its clip, or two thirds of
/// its length where that is more (a fox, a horse): not a box over every clip, which a long clip
/// or the culling cells' margins would swell. One model keeps its size.
pub fn crowd_sizes(staged: &[Arc<Staged>]) -> Vec<f32> {
    let size = |staged: &Staged| staged.height.max(staged.in_place.size().x.max(staged.in_place.size().z) * (2.0 / 3.0));
    let sizes: Vec<f32> = staged.iter().map(|staged| size(staged)).collect();
    let mut usable: Vec<f32> = sizes.iter().copied().filter(|size| size.is_finite() && *size > 0.0).collect();
    if staged.len() < 2 || usable.is_empty() {
        return vec![1.0; staged.len()];
    }
    usable.sort_by(f32::total_cmp);
    let median = usable[usable.len() / 2];
    sizes.iter().map(|&size| if size.is_finite() && size > 0.0 { median / size } else { 1.0 }).collect()
}

/// The model of instance `index` of a crowd of `models` models: each run of `models` instances
/// holds every model once, the first run in the order given (instance 0 is the first model, the
/// one a crowd is named and framed by) and every later one shuffled (seeded by the run), so the
/// models mix on the grid rather than form rows or columns, and each has as many instances as the
/// others, give or take one.
pub fn crowd_model(index: usize, models: usize) -> u32 {
    if models <= 1 {
        return 0;
    }
    let run = (index / models) as u64;
    if run == 0 {
        return index as u32;
    }
    let mut order: Vec<u32> = (0..models as u32).collect();
    // Fisher–Yates from a stream seeded by the run.
    let mut state = run.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(0x2545_F491_4F6C_DD1D);
    for last in (1..models).rev() {
        order.swap(last, (splitmix64(&mut state) % (last as u64 + 1)) as usize);
    }
    order[index % models]
}

/// The next number of a splitmix64 stream at `state`: a well-mixed stream from a counter, in a
/// few lines (no crate needed for this); the crowd's variety and its dealing of models draw on it.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How far a crowd's sizes stray from the model's, either way.
pub const CROWD_SCALE: f32 = 0.08;

/// Clothing-like hues a crowd's colours move toward (linear RGB).
const CROWD_HUES: [[f32; 3]; 8] = [
    [0.85, 0.25, 0.2],
    [0.2, 0.45, 0.85],
    [0.25, 0.7, 0.3],
    [0.9, 0.75, 0.2],
    [0.6, 0.3, 0.75],
    [0.2, 0.7, 0.75],
    [0.9, 0.5, 0.25],
    [0.5, 0.5, 0.5],
];

/// Instance `index` of a crowd, varied by a hash of its index: a phase anywhere in a clip of
/// `duration` seconds, a speed within 10 % of the clip's, a size within [`CROWD_SCALE`] of the
/// model's, and a tint: one of [`CROWD_HUES`], its colours moved 50 to 90 % of the way toward it
/// (brightness and texture kept: forward.frag).
pub fn crowd_variety(instance: InstanceState, index: usize, duration: f32) -> InstanceState {
    let mut state = (index as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut next = || (splitmix64(&mut state) >> 40) as f32 / (1u64 << 24) as f32;
    let phase = duration * next();
    let speed = 0.9 + 0.2 * next();
    let scale = 1.0 - CROWD_SCALE + 2.0 * CROWD_SCALE * next();
    let hue = CROWD_HUES[(next() * CROWD_HUES.len() as f32) as usize % CROWD_HUES.len()];
    let tint = [hue[0], hue[1], hue[2], 0.5 + 0.4 * next()];
    InstanceState { phase, speed, scale, tint, ..instance }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{default_animations, default_model_path, SceneSetup};

    /// A crowd varies within its bounds, the same way every run; one instance is the model as made.
    #[test]
    fn a_crowd_varies_within_its_bounds_and_one_figure_does_not() {
        let bundled = default_model_path();
        let model = crate::formats::load_model(&bundled, &default_animations(&bundled, &[])).expect("the bundled figure loads");
        let [one] = *SceneSetup::new(model.clone(), 1).instances else { panic!("one instance") };
        assert_eq!((one.phase, one.speed, one.scale, one.tint), (0.0, 1.0, 1.0, [1.0, 1.0, 1.0, 0.0]));
        let crowd = SceneSetup::new(model.clone(), 400).instances;
        assert_eq!(*crowd, *SceneSetup::new(model.clone(), 400).instances, "seeded by the index");
        let uniform = SceneSetup::uniform(model.clone(), 400).instances;
        assert!(uniform.iter().all(|instance| (instance.speed, instance.scale, instance.tint[3]) == (1.0, 1.0, 0.0)));
        assert!(uniform.iter().zip(&crowd).all(|(plain, varied)| plain.position == varied.position));
        let duration = model.clips[model.default_clip().expect("a clip")].duration;
        for instance in &crowd {
            assert!((0.0..duration).contains(&instance.phase), "{instance:?}");
            assert!((0.9..=1.1).contains(&instance.speed), "{instance:?}");
            assert!((1.0 - CROWD_SCALE..=1.0 + CROWD_SCALE).contains(&instance.scale), "{instance:?}");
            assert!(CROWD_HUES.iter().any(|hue| hue[..] == instance.tint[..3]), "{instance:?}");
            assert!((0.5..=0.9).contains(&instance.tint[3]), "{instance:?}");
        }
        // Spread over the ranges, not bunched: every hue used, sizes both sides of 1.
        assert!(CROWD_HUES.iter().all(|hue| crowd.iter().any(|instance| instance.tint[..3] == hue[..])));
        let (smaller, larger) =
            (crowd.iter().filter(|i| i.scale < 0.97).count(), crowd.iter().filter(|i| i.scale > 1.03).count());
        assert!(smaller > 100 && larger > 100, "{smaller} smaller, {larger} larger of 400");
        // Neighbours are never the same size: the sequence is mixed.
        assert!(crowd.windows(2).all(|pair| pair[0].scale != pair[1].scale));
    }
}
