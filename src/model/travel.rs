//! How far a clip carries the figure (issue 57, root motion): the joint whose horizontal motion is
//! the figure's (its root, or the hips where the root stays put), and how far, how fast and how
//! much it turns over the clip; and, where it carries the figure, that motion taken out of the
//! clip ([`Model::extract_root_motion`]): the clip then plays in place and the instance is moved by
//! the motion (`anim::motion`). `inspect` prints both.

use std::sync::Arc;

use glam::{Mat4, Quat, Vec3};

use super::Model;
use crate::anim::{local_to_model, Channel, JointPose, KeyTimes, Motion, Property, RootMotion};

/// A clip carries the figure where it ends this share of the figure's extent from where it
/// started, or turned by [`CARRIES_TURN`] degrees: an idle's sway or a step on the spot does not.
const CARRIES_DISTANCE: f32 = 0.1;
const CARRIES_TURN: f32 = 20.0;
/// Root motion is sampled at the carrying joint's own keys where they are even and linear; where
/// they are curves, four times as often, and otherwise at least this often, never more often than
/// [`MOTION_RATE_MAX`], in samples a second.
const MOTION_RATE_MIN: f32 = 30.0;
const MOTION_RATE_MAX: f32 = 240.0;

/// Samples over a clip for its travel.
const SAMPLES: usize = 64;

/// How far a clip carries the figure, model units on the ground plane (x, z; y is up).
#[derive(Clone, Debug, PartialEq)]
pub struct Travel {
    /// The joint that carries the figure: its root, or the hips where the root stays put.
    pub joint: usize,
    /// From the clip's start to its end, on the ground.
    pub distance: f32,
    /// Along its path, on the ground.
    pub path: f32,
    /// `distance` over the clip's duration, units a second.
    pub speed: f32,
    /// Its heading's change from start to end, degrees (counter-clockwise seen from above).
    pub turn: f32,
}

impl Model {
    /// Animation `index`'s travel; None for one without channels or a model without joints.
    /// Where its root motion was taken out, the travel of that motion.
    pub fn clip_travel(&self, index: usize) -> Option<Travel> {
        let animation = self.animations.get(index)?;
        if let Some(motion) = &animation.motion {
            return Some(motion.travel(animation.duration));
        }
        if animation.channels.is_empty() || self.skeleton.is_empty() {
            return None;
        }
        let joints = self.skeleton.len();
        let (mut poses, mut models) = (vec![JointPose::IDENTITY; joints], vec![Mat4::IDENTITY; joints]);
        let duration = animation.duration.max(0.0);
        let placements: Vec<Vec<Mat4>> = (0..=SAMPLES)
            .map(|sample| {
                animation.sample(&self.skeleton, duration * sample as f32 / SAMPLES as f32, &mut poses);
                local_to_model(&self.skeleton, &poses, Mat4::IDENTITY, &mut models);
                models.clone()
            })
            .collect();
        let path_of = |joint: usize| {
            let ground = |at: &Vec<Mat4>| at[joint].w_axis.truncate() * Vec3::new(1.0, 0.0, 1.0);
            placements.windows(2).map(|pair| ground(&pair[0]).distance(ground(&pair[1]))).sum::<f32>()
        };
        let (first, last) = (placements.first()?, placements.last()?);
        let distance_of = |joint: usize| {
            let ground = |at: &Vec<Mat4>| at[joint].w_axis.truncate() * Vec3::new(1.0, 0.0, 1.0);
            ground(first).distance(ground(last))
        };
        // The root, unless it stays put (under 1 % of the figure across the clip): then of the
        // joints below it with translation keys that carry half the skeleton or more (not a
        // hand: COLLADA keys every joint's matrix), those that end nearly as far from where they
        // began as the furthest, the hips by name where they are among them, else the nearest
        // the root; where none ends away (a turn on the spot), the hips by name, else the
        // nearest that moves.
        let root = self.skeleton.joints.iter().position(|joint| joint.parent.is_none()).unwrap_or(0);
        let small = 0.01 * self.extent();
        let hips = |joint: &usize| {
            let name = self.skeleton.joints[*joint].name.to_lowercase();
            name.contains("hips") || name.contains("pelvis")
        };
        // Each joint's subtree, itself included (parents come first).
        let mut carried = vec![1usize; joints];
        for joint in (0..joints).rev() {
            if let Some(parent) = self.skeleton.joints[joint].parent.filter(|&parent| parent < joint) {
                carried[parent] += carried[joint];
            }
        }
        let moving: Vec<usize> = (0..joints)
            .filter(|&joint| self.skeleton.joints[joint].parent.is_some() && 2 * carried[joint] >= joints)
            .filter(|&joint| {
                animation.channels.iter().any(|channel| channel.joint == joint && channel.property == Property::Translation)
            })
            .filter(|&joint| path_of(joint) >= small)
            .collect();
        let furthest = moving.iter().map(|&joint| distance_of(joint)).fold(0.0, f32::max);
        let far: Vec<usize> = moving.iter().copied().filter(|&joint| distance_of(joint) >= 0.9 * furthest).collect();
        // Joints come parents first: the first of a list is the nearest the root.
        let joint = match path_of(root) >= small {
            true => root,
            false if furthest >= small => far.iter().copied().find(hips).or(far.first().copied()).unwrap_or(root),
            false => moving.iter().copied().find(hips).or(moving.first().copied()).unwrap_or(root),
        };
        let ground = |at: &Vec<Mat4>| at[joint].w_axis.truncate() * Vec3::new(1.0, 0.0, 1.0);
        let distance = ground(first).distance(ground(last));
        // The heading: the joint's turn about +Y since the start, unwrapped sample to sample.
        let rotation = |at: &Vec<Mat4>| at[joint].to_scale_rotation_translation().1;
        let start = rotation(first);
        let turn = placements.iter().fold(0.0, |last, at| unwrapped(last, heading_since(rotation(at), start)));
        let speed = if duration > 0.0 { distance / duration } else { 0.0 };
        Some(Travel { joint, distance, path: path_of(joint), speed, turn: turn.to_degrees() })
    }

    /// Root motion: every animation that carries the figure ([`Travel::carries`]) is made to play
    /// in place, its carrying joint's (`joint`, else [`Travel::joint`]) ground motion and heading
    /// taken out of its keys into [`crate::anim::Animation::motion`], and every clip of it given
    /// that motion. Run before the clips are compressed and the culling cells built (both read the
    /// keys). Returns the animations it took motion from.
    pub fn extract_root_motion(&mut self, joint: Option<usize>) -> Vec<usize> {
        let extent = self.extent();
        let mut extracted = Vec::new();
        for index in 0..self.animations.len() {
            if self.animations[index].motion.is_some() {
                continue;
            }
            let Some(travel) = self.clip_travel(index).filter(|travel| travel.carries(extent)) else { continue };
            let joint = joint.filter(|&joint| joint < self.skeleton.len()).unwrap_or(travel.joint);
            if let Some(motion) = self.take_motion(index, joint) {
                self.animations[index].motion = Some(Arc::new(motion));
                self.animations[index].compressed = None;
                extracted.push(index);
            }
        }
        for clip in &mut self.clips {
            clip.motion = self.animations.get(clip.animation).and_then(|animation| animation.motion.clone());
        }
        extracted
    }

    /// Root motion turned on (taken out of the travelling clips) or off (put back) on a model
    /// already prepared: its culling cells made again; the clips it changed lose their
    /// compression (the viewer's worker compresses them again). Returns whether anything changed.
    pub fn set_root_motion(&mut self, on: bool) -> bool {
        let changed = match on {
            true => !self.extract_root_motion(None).is_empty(),
            false => self.restore_root_motion(),
        };
        if changed {
            self.bounds = self.cell_bounds();
        }
        changed
    }

    /// Puts the root motion back into the keys (the panel's root motion turned off): each
    /// carrying joint's keys, on the grid they were taken on, made to carry the figure again (its
    /// motion no longer in the clips). Returns whether any animation had motion.
    pub fn restore_root_motion(&mut self) -> bool {
        let mut restored = false;
        for index in 0..self.animations.len() {
            let Some(motion) = self.animations[index].motion.take() else { continue };
            // The grid the motion was taken on: the carrying joint's translation keys.
            let own = self.animations[index]
                .channels
                .iter()
                .find(|channel| channel.joint == motion.joint && channel.property == Property::Translation);
            let Some((times, wraps)) = own.map(|channel| (channel.times.clone(), channel.wraps)) else { continue };
            for joint in std::iter::once(motion.joint).chain(motion.beside(&self.skeleton)) {
                self.rekey(index, joint, (times.clone(), wraps), |_, time, placed| motion_matrix(motion.at(time)) * placed);
            }
            self.animations[index].compressed = None;
            restored = true;
        }
        for clip in &mut self.clips {
            clip.motion = None;
        }
        restored
    }

    /// Animation `index`'s motion of `joint` on the ground, taken out of its keys: sampled on an
    /// even grid (the joint's keys where they are even), the joint's translation and rotation
    /// channels replaced by linear keys on that grid that hold it over the model's origin, facing
    /// as it started. None for an animation without length.
    fn take_motion(&mut self, index: usize, joint: usize) -> Option<RootMotion> {
        let animation = &self.animations[index];
        let duration = animation.duration;
        if duration.is_nan() || duration <= 0.0 || joint >= self.skeleton.len() {
            return None;
        }
        let own: Vec<&Channel> = animation.channels.iter().filter(|channel| channel.joint == joint).collect();
        // MD5's channels run from their last key back to the first over one more step; so do the new ones.
        let wraps = own.iter().any(|channel| channel.wraps);
        let even = own.iter().find_map(|channel| match channel.times {
            KeyTimes::Uniform { start, step, count } if start.abs() < step * 1e-3 && count > 1 => Some((step, count)),
            _ => None,
        });
        // Curves between the keys are followed by linear keys four times as close.
        let curved = own.iter().any(|channel| channel.interpolation.values_per_key() == 3);
        let (step, keys) = match even {
            Some((step, count)) if wraps => (step, count),
            // Linear keys on an even grid stay on it, however sparse or dense: the clip's other
            // channels lie on it too, so its compressed samples remain its keys (a 24 Hz capture
            // keyed anew at 30 Hz had to be sampled at 120 Hz, or not at all).
            Some((step, count)) if !curved => (step, count.max((duration / step - 1e-3).ceil() as usize + 1)),
            _ => {
                let step = even.map_or(1.0 / MOTION_RATE_MIN, |(step, _)| step) / if curved { 4.0 } else { 1.0 };
                let wanted = step.clamp(1.0 / MOTION_RATE_MAX, 1.0 / MOTION_RATE_MIN);
                let steps = (duration / wanted).ceil().max(1.0);
                (duration / steps, steps as usize + 1)
            }
        };
        let mut samples: Vec<[f32; 3]> = Vec::with_capacity(keys + 1);
        let (mut first, mut last_yaw) = (None, 0.0f32);
        let mut frames = Vec::with_capacity(keys);
        let times = KeyTimes::Uniform { start: 0.0, step, count: keys };
        self.rekey(index, joint, (times.clone(), wraps), |_, _, placed| {
            let (_, rotation, translation) = placed.to_scale_rotation_translation();
            let start_rotation = *first.get_or_insert(rotation);
            let yaw = unwrapped(last_yaw, heading_since(rotation, start_rotation));
            last_yaw = yaw;
            samples.push([translation.x, translation.z, yaw]);
            // The joint's frame on the ground: under it, turned as it has turned since the start;
            // the placement seen from it. The turn as a quaternion, not through its angle: the
            // keys then come out the same bits on every platform (no sine or arctangent).
            let frame =
                Mat4::from_rotation_translation(twist_since(rotation, start_rotation), translation * Vec3::new(1.0, 0.0, 1.0));
            let seen_from = frame.inverse();
            frames.push(seen_from);
            seen_from * placed
        });
        let mut carriers = vec![joint];
        while let Some(parent) = carriers.last().and_then(|&last| self.skeleton.joints[last].parent) {
            carriers.push(parent);
        }
        let mut motion = RootMotion { joint, carriers, step, samples };
        if wraps {
            // The move over the last step, from the last key back round to the first, is the one
            // before it again: the loop's end is reached walking on, not by running back.
            let end = match keys {
                1 => motion.sample(0),
                _ => motion.sample(keys - 1).then(motion.sample(keys - 2).inverse().then(motion.sample(keys - 1))),
            };
            motion.samples.push([end.offset.x as f32, end.offset.y as f32, end.yaw as f32]);
        }
        // The joints beside the carrying one (a rig's IK targets and poles under its root) are
        // seen from the same frame, so that the whole skeleton stands where the file has it.
        for beside in motion.beside(&self.skeleton) {
            self.rekey(index, beside, (times.clone(), wraps), |key, _, placed| frames[key] * placed);
        }
        Some(motion)
    }

    /// Animation `index`'s `joint` keyed anew at `times` (wrapping or not), linearly: at each
    /// key and its time, its model placement as the animation has it made into
    /// `place(key, time, placement)`, made local again under its parent. Its scale channel stays.
    fn rekey(
        &mut self,
        index: usize,
        joint: usize,
        (times, wraps): (KeyTimes, bool),
        mut place: impl FnMut(usize, f32, Mat4) -> Mat4,
    ) {
        let joints = self.skeleton.len();
        let (mut poses, mut models) = (vec![JointPose::IDENTITY; joints], vec![Mat4::IDENTITY; joints]);
        let (parent, pre) = (self.skeleton.joints[joint].parent, self.skeleton.joints[joint].pre);
        let keys = times.count();
        let (mut translations, mut rotations) = (Vec::with_capacity(keys * 3), Vec::with_capacity(keys * 4));
        let mut last_rotation = Quat::IDENTITY;
        let animation = &self.animations[index];
        for key in 0..keys {
            let time = times.time(key);
            animation.sample(&self.skeleton, time, &mut poses);
            local_to_model(&self.skeleton, &poses, Mat4::IDENTITY, &mut models);
            let above = parent.map_or(Mat4::IDENTITY, |parent| models[parent]) * pre;
            let (_, rotation, translation) = (above.inverse() * place(key, time, models[joint])).to_scale_rotation_translation();
            // Each key on the side of the last, so the keys slerp the short way.
            let rotation = if rotation.dot(last_rotation) < 0.0 { -rotation } else { rotation };
            last_rotation = rotation;
            translations.extend_from_slice(&translation.to_array());
            rotations.extend_from_slice(&rotation.to_array());
        }
        let channel =
            |property: Property, values: Vec<f32>| Channel { wraps, ..Channel::linear(joint, property, times.clone(), values) };
        let animation = &mut self.animations[index];
        animation.channels.retain(|channel| channel.joint != joint || channel.property == Property::Scale);
        animation.channels.push(channel(Property::Translation, translations));
        animation.channels.push(channel(Property::Rotation, rotations));
    }
}

/// A ground move as a model-space matrix: the turn about +Y, then the offset along x and z.
fn motion_matrix(motion: Motion) -> Mat4 {
    let offset = Vec3::new(motion.offset.x as f32, 0.0, motion.offset.y as f32);
    Mat4::from_rotation_translation(Quat::from_rotation_y(motion.yaw as f32), offset)
}

/// The turn about +Y in `rotation` since `start`: the twist of the difference (a figure's
/// heading, whatever way its joint's own axes point).
fn twist_since(rotation: Quat, start: Quat) -> Quat {
    let turn = rotation * start.inverse();
    let twist = Quat::from_xyzw(0.0, turn.y, 0.0, turn.w);
    // No twist to speak of where the turn is half round a level axis.
    if twist.length_squared() > 1e-12 {
        twist.normalize()
    } else {
        Quat::IDENTITY
    }
}

/// [`twist_since`] as an angle in (−π, π].
fn heading_since(rotation: Quat, start: Quat) -> f32 {
    let twist = twist_since(rotation, start);
    unwrapped(0.0, 2.0 * twist.y.atan2(twist.w))
}

/// `angle` moved by whole turns to within half a turn of `last`: a heading followed past ±π.
fn unwrapped(last: f32, angle: f32) -> f32 {
    last + (angle - last + std::f32::consts::PI).rem_euclid(std::f32::consts::TAU) - std::f32::consts::PI
}

impl RootMotion {
    /// The joints beside the carrying one: the other roots, and the children of its ancestors
    /// that are not themselves on the way down to it.
    pub fn beside(&self, skeleton: &crate::anim::Skeleton) -> Vec<usize> {
        let above = &self.carriers[1..];
        (0..skeleton.len())
            .filter(|&joint| !self.carriers.contains(&joint))
            .filter(|&joint| skeleton.joints[joint].parent.is_none_or(|parent| above.contains(&parent)))
            .collect()
    }

    /// The travel of this motion over `duration` seconds: the instance's, which its place moves by.
    pub fn travel(&self, duration: f32) -> Travel {
        let ground = |[x, z, _]: [f32; 3]| glam::Vec2::new(x, z);
        let (first, last) = (self.samples.first().copied().unwrap_or_default(), self.samples.last().copied().unwrap_or_default());
        let distance = ground(first).distance(ground(last));
        // Along the path as `clip_travel` walks it, SAMPLES steps (not every sample's sway).
        let count = self.samples.len().saturating_sub(1);
        let along = |step: usize| self.samples[step * count / SAMPLES];
        let path = (0..SAMPLES).map(|step| ground(along(step)).distance(ground(along(step + 1)))).sum();
        let speed = if duration > 0.0 { distance / duration } else { 0.0 };
        Travel { joint: self.joint, distance, path, speed, turn: (last[2] - first[2]).to_degrees() }
    }
}

impl Travel {
    /// Whether the clip carries the figure: it ends [`CARRIES_DISTANCE`] of `extent` from where it
    /// started, or facing [`CARRIES_TURN`] degrees away (a spin of whole turns, a dancer's or a
    /// turntable's, ends facing as it began: played as it is, it loops without a jump).
    pub fn carries(&self, extent: f32) -> bool {
        let facing = (self.turn + 180.0).rem_euclid(360.0) - 180.0;
        self.distance >= CARRIES_DISTANCE * extent || facing.abs() >= CARRIES_TURN
    }
}
