//! What a scene needs to know of each clip it plays, read off the clip's surface sampled on the CPU
//! ([`Model::pose_samples`]) once per model and clip: where the feet are (the ground), the box the
//! figure fills (the camera, a crowd's spacing), how tall it stands (a mixed crowd's sizes) and how
//! far the clip carries it (a camera that follows a walker). The culling cells are conservative
//! (a hand's width below the bundled figure's feet, 3.2 units below the ninja's) and serve culling
//! and the shadow map's fit, not these.

use std::sync::{Arc, Mutex};

use glam::Vec3;
use rayon::prelude::*;

use crate::anim::{Aabb, InstanceState};
use crate::model::Model;
use crate::render::camera::OrbitCamera;

/// Poses a second of a clip sampled (at least [`MIN_POSES`], at most [`MAX_POSES`])...
const POSES_PER_SECOND: f32 = 15.0;
const MIN_POSES: usize = 12;
const MAX_POSES: usize = 1000;
/// ...and points in all, at most: fewer points a pose, spread evenly over the model's vertices.
const SAMPLED_POINTS: usize = 100_000;
/// Points of a clip kept for the camera to frame (its outline over the clip).
const OUTLINE_POINTS: usize = 20_000;

/// Instances up to this many, of one model, are framed by their outlines; more, by their boxes.
const FRAMED_INSTANCES: usize = 16;

/// One clip of one model, as the scene stages it (model space, no instance's world).
#[derive(Clone, Debug, PartialEq)]
pub struct Staged {
    /// The lowest point over the clip: where the feet are.
    pub lowest: f32,
    /// The box of every point over the clip, its travel included.
    pub bounds: Aabb,
    /// The same with the clip's travel taken out: where the figure stands.
    pub in_place: Aabb,
    /// How tall the figure stands in the clip (`PoseSamples::standing_height`).
    pub height: f32,
    /// Whether the clip carries the figure along the ground.
    pub travels: bool,
    /// Points spread over the clip's poses, its travel taken out: what the camera frames.
    pub outline: Vec<Vec3>,
    /// The sampled times (the clip's own seconds) and the travel at each.
    times: Vec<f32>,
    travel: Vec<Vec3>,
}

impl Staged {
    /// `clip` of `model` (None: its rest pose) sampled and read.
    pub fn of(model: &Model, clip: Option<usize>) -> Staged {
        let duration = clip.and_then(|clip| model.clips.get(clip)).map_or(0.0, |clip| clip.duration);
        let poses = ((duration * POSES_PER_SECOND).ceil() as usize).clamp(MIN_POSES, MAX_POSES);
        let samples = model.pose_samples(clip, poses, SAMPLED_POINTS / poses, true);
        let travel_at = |time: f32| travel_between(&samples.times, &samples.travel, time);
        let mut outline: Vec<Vec3> = samples.extremes.iter().map(|&(time, point)| point - travel_at(time)).collect();
        // The poses' points too, thinned: the extremes are the frame's edges, these its middle.
        let per_pose = samples.poses.first().map_or(0, Vec::len);
        let every = (samples.poses.len() * per_pose).div_ceil(OUTLINE_POINTS).max(1);
        outline.extend(
            samples
                .poses
                .iter()
                .zip(&samples.travel)
                .flat_map(|(points, &offset)| points.iter().map(move |&point| point - offset))
                .step_by(every),
        );
        Staged {
            lowest: samples.lowest,
            bounds: samples.bounds(),
            in_place: samples.bounds_in_place(),
            height: samples.standing_height(),
            travels: samples.travels(),
            outline,
            times: samples.times.clone(),
            travel: samples.travel.clone(),
        }
    }

    /// How far the clip has carried the figure at `time` (the clip's own seconds from its start),
    /// between the samples; zero for a clip that stays in place.
    pub fn travel_at(&self, time: f32) -> Vec3 {
        travel_between(&self.times, &self.travel, time)
    }
}

/// The travel sampled at `times` (`travel`), at `time`: between the samples, linearly.
fn travel_between(times: &[f32], travel: &[Vec3], time: f32) -> Vec3 {
    if travel.iter().all(|offset| *offset == Vec3::ZERO) {
        return Vec3::ZERO;
    }
    let after = times.partition_point(|&sample| sample <= time);
    match after {
        0 => travel[0],
        after if after >= times.len() => travel[travel.len() - 1],
        after => {
            let (before, next) = (times[after - 1], times[after]);
            let fraction = ((time - before) / (next - before).max(f32::MIN_POSITIVE)).clamp(0.0, 1.0);
            travel[after - 1].lerp(travel[after], fraction)
        }
    }
}

/// A model's index in its scene and one of its clips (None: its rest pose).
type ClipKey = (usize, Option<usize>);

/// The staged clips of a scene's models, made when first asked for: (model index, clip) each.
#[derive(Debug, Default)]
pub struct Staging {
    entries: Mutex<Vec<(ClipKey, Arc<Staged>)>>,
}

impl Staging {
    /// Clip `clip` of model `model` of `models`, staged.
    pub fn get(&self, models: &[&Model], model: usize, clip: Option<usize>) -> Arc<Staged> {
        self.prepare(models, [(model, clip)]);
        let entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let found = entries.iter().find(|(key, _)| *key == (model, clip)).map(|(_, staged)| staged.clone());
        found.unwrap_or_else(|| Arc::new(Staged::of(models[model], clip)))
    }

    /// Stages those of `wanted` not staged yet, side by side.
    pub fn prepare(&self, models: &[&Model], wanted: impl IntoIterator<Item = ClipKey>) {
        let mut missing: Vec<ClipKey> = {
            let entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            wanted.into_iter().filter(|key| key.0 < models.len() && !entries.iter().any(|(have, _)| have == key)).collect()
        };
        missing.sort();
        missing.dedup();
        if missing.is_empty() {
            return;
        }
        let staged: Vec<_> =
            missing.into_par_iter().map(|(model, clip)| ((model, clip), Arc::new(Staged::of(models[model], clip)))).collect();
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend(staged);
    }

    /// Every staged clip, for many look-ups under one lock.
    fn all(&self) -> Vec<(ClipKey, Arc<Staged>)> {
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// An instance placed in a scene: its model's index, the model and its state.
pub type Placed<'a> = (usize, &'a Model, &'a InstanceState);

/// The height of the ground under `placed`: the lowest any instance's clips take its surface (the
/// clip it plays and the one it fades out of), so that every figure stands on one ground and
/// none sinks into it.
pub fn ground_height(staging: &Staging, models: &[&Model], placed: &[Placed]) -> f32 {
    let clips = |instance: &InstanceState| [Some(instance.clip), instance.fade.map(|fade| Some(fade.from_clip))];
    staging.prepare(
        models,
        placed.iter().flat_map(|&(model, _, instance)| clips(instance).into_iter().flatten().map(move |clip| (model, clip))),
    );
    let staged = staging.all();
    let lowest = |key: ClipKey| staged.iter().find(|(have, _)| *have == key).map(|(_, staged)| staged.lowest);
    let height = placed
        .iter()
        .flat_map(|&(model, _, instance)| {
            clips(instance)
                .into_iter()
                .flatten()
                .filter_map(move |clip| Some(instance.position.y + instance.scale * lowest((model, clip))?))
        })
        .fold(f32::INFINITY, f32::min);
    if height.is_finite() {
        height
    } else {
        0.0
    }
}

/// Whether the camera follows `placed`: a single instance whose clip carries it along the ground,
/// or moves it by its root motion.
pub fn follows(staging: &Staging, models: &[&Model], placed: &[Placed]) -> bool {
    match placed {
        [(model_index, model, instance)] => {
            instance.clip.and_then(|clip| model.clips.get(clip)).is_some_and(|clip| clip.motion.is_some())
                || staging.get(models, *model_index, instance.clip).travels
        }
        _ => false,
    }
}

/// What the camera frames, in world space. One model's few instances: their outlines over the
/// clips they play; a single instance whose clip walks it away, its outline where it stands (the
/// camera then follows it: [`follow_offset`]). A crowd, or several models: each instance's box
/// over its clip. A camera framing these shows the figures, not the conservative cells around them.
pub fn framed_points(staging: &Staging, models: &[&Model], placed: &[Placed]) -> Vec<Vec3> {
    staging.prepare(models, placed.iter().map(|&(model, _, instance)| (model, instance.clip)));
    let one_model = placed.windows(2).all(|pair| pair[0].0 == pair[1].0);
    let follow = follows(staging, models, placed);
    let mut points = Vec::new();
    for &(model, _, instance) in placed {
        let staged = staging.get(models, model, instance.clip);
        let world = instance.world();
        if placed.len() <= FRAMED_INSTANCES && one_model && (follow || !staged.travels) {
            points.extend(staged.outline.iter().map(|&point| world.transform_point3(point)));
        } else {
            let local = if follow { staged.in_place } else { staged.bounds };
            points.extend(local.transformed(world).corners());
        }
    }
    points
}

/// Where a followed instance ([`follows`]) has walked to at `seconds` on the shared clock, from
/// where the camera framed it: its clip's travel at that time, in world space.
pub fn follow_offset(staging: &Staging, models: &[&Model], placed: &[Placed], seconds: f64) -> Vec3 {
    if !follows(staging, models, placed) {
        return Vec3::ZERO;
    }
    let &(model_index, model, instance) = &placed[0];
    let Some(clip) = instance.clip.and_then(|clip| model.clips.get(clip)) else { return Vec3::ZERO };
    if clip.motion.is_some() {
        return instance.placement(&model.clips, seconds).0 - instance.position;
    }
    let local = seconds * f64::from(instance.speed) + f64::from(instance.phase);
    let time = clip.animation_time(local) - clip.start;
    let travel = staging.get(models, model_index, instance.clip).travel_at(time);
    instance.world().transform_vector3(travel)
}

/// A camera in front of the character (the first instance's model's `Model::facing_yaw`) that
/// frames `placed` ([`framed_points`]).
pub fn framing_camera(staging: &Staging, models: &[&Model], placed: &[Placed]) -> OrbitCamera {
    let facing = placed.first().and_then(|(_, model, _)| model.facing_yaw()).unwrap_or(0.0);
    let framing =
        OrbitCamera::framing_points_from(&framed_points(staging, models, placed), crate::render::camera::FRAMING_YAW + facing);
    match placed.len() >= FIELD_INSTANCES {
        true => field_camera(framing, world_bounds(placed)),
        false => framing,
    }
}

/// Crowds of this many instances or more are seen from within, as a field (`field_camera`)
/// rather than framed whole: whole, a hundred thousand figures are each a few pixels.
pub const FIELD_INSTANCES: usize = 100_000;

/// A crowd seen from its near edge, on the side the figures face (turned a little, `FIELD_YAW`),
/// three figures high and looking across it: the nearest are characters, the rest a moving
/// texture to the far side. The target lies an eighteenth of the field's diagonal ahead (at least
/// twenty figures), so that the far plane (twenty times the camera's distance) reaches past the
/// far side.
pub fn field_camera(framing: OrbitCamera, bounds: crate::anim::Aabb) -> OrbitCamera {
    let yaw = framing.yaw - crate::render::camera::FRAMING_YAW + FIELD_YAW;
    let figure = bounds.size().y.max(1e-3);
    let back = glam::Vec3::new(yaw.sin(), 0.0, yaw.cos());
    let half = bounds.size() * 0.5;
    // From the centre to the field's edge along `back`.
    let reach = (half.x / back.x.abs().max(1e-6)).min(half.z / back.z.abs().max(1e-6));
    let ground = glam::Vec3::new(bounds.center().x, bounds.min.y, bounds.center().z);
    let height = 3.0 * figure;
    let ahead = (glam::Vec2::new(bounds.size().x, bounds.size().z).length() / 18.0).max(20.0 * figure);
    // From the ground under the eye, just outside the edge, `ahead` into the crowd.
    let target = ground + back * (reach + figure) - back * ahead;
    OrbitCamera { target, distance: ahead.hypot(height), yaw, pitch: (height / ahead).atan(), ..framing }
}

/// How far round from the figures' front the field camera stands (radians).
const FIELD_YAW: f32 = 0.15;

/// World bounds of all instances, each with its model, over everything any clip can do (the
/// shadow map's fit), so a clip switch never walks out of the shadow volume.
pub fn world_bounds(placed: &[Placed]) -> Aabb {
    placed.iter().fold(Aabb::EMPTY, |acc, (_, model, instance)| acc.union(model.animated_bounds().transformed(instance.world())))
}
