//! Which clip plays when the user names none. A Mixamo download holds an empty "Take 001" stack
//! before its dance, and a clip fetched with `--anim` is what the user came to see: the default is
//! the first clip from another file that moves something, else the model's first clip that moves
//! something, else its first clip (all of them hold the rest pose then, so any shows the same).

use glam::Vec4;

use super::Model;
use crate::anim::{JointPose, Property};

/// A translation this far from rest, in units of the model's extent, moves the joint.
const TRANSLATION_TOLERANCE: f32 = 1e-5;
/// A rotation this far from rest (radians), or a scale this far from it (relative), moves it.
const ROTATION_TOLERANCE: f32 = 1e-4;
const SCALE_TOLERANCE: f32 = 1e-5;
/// A morph weight this far from its default moves the target.
const WEIGHT_TOLERANCE: f32 = 1e-4;

impl Model {
    /// Whether clip `clip` moves anything: some joint away from its rest pose, or some morph
    /// target away from its default weight, at a key inside the clip's span or at either end.
    /// A clip without keys, or keyed at the rest pose throughout (an empty FBX stack, baked),
    /// moves nothing.
    pub fn clip_moves(&self, clip: usize) -> bool {
        let Some(clip) = self.clips.get(clip) else { return false };
        let Some(animation) = self.animations.get(clip.animation) else { return false };
        let (start, end) = (clip.start, clip.start + clip.duration.max(0.0));
        let extent = self.extent().max(f32::MIN_POSITIVE);
        let joint_moves = animation.channels.iter().any(|channel| {
            let Some(joint) = self.skeleton.joints.get(channel.joint) else { return false };
            let rest = joint.rest;
            let keys = (0..channel.times.count()).filter(|&key| (start..=end).contains(&channel.times.time(key)));
            let values = keys.map(|key| channel.key_value(key)).chain([channel.sample(start), channel.sample(end)]);
            values.into_iter().any(|value: Vec4| {
                let mut pose = rest;
                channel.set(value, &mut pose);
                moved(channel.property, &rest, &pose, extent)
            })
        });
        let defaults = self.default_weights();
        let weight_moves = animation.weights.iter().any(|channel| {
            let default = defaults.get(channel.target).copied().unwrap_or(0.0);
            let keys = (0..channel.times.count()).map(|key| channel.times.time(key)).filter(|time| (start..=end).contains(time));
            keys.chain([start, end]).any(|time| (channel.sample(time) - default).abs() > WEIGHT_TOLERANCE)
        });
        joint_moves || weight_moves
    }

    /// The clip played when none is named (see the module's text), or None without clips.
    pub fn default_clip(&self) -> Option<usize> {
        let from_another_file = (0..self.clips.len()).filter(|&clip| self.clip_source(clip).is_some());
        let first = (!self.clips.is_empty()).then_some(0);
        self.first_moving(from_another_file).or_else(|| self.first_moving(0..self.clips.len())).or(first)
    }

    /// The first of `clips` that moves something.
    pub fn first_moving(&self, mut clips: impl Iterator<Item = usize>) -> Option<usize> {
        clips.find(|&clip| self.clip_moves(clip))
    }

    /// The file a clip's animation came from, where it is not the model's own (`--anim`, MD5's
    /// .md5anim files).
    pub fn clip_source(&self, clip: usize) -> Option<&std::path::Path> {
        self.animations.get(self.clips.get(clip)?.animation)?.source.as_deref()
    }
}

fn moved(property: Property, rest: &JointPose, pose: &JointPose, extent: f32) -> bool {
    match property {
        Property::Translation => pose.translation.distance(rest.translation) > TRANSLATION_TOLERANCE * extent,
        Property::Rotation => crate::anim::curve::rotation_distance(pose.rotation, rest.rotation) > ROTATION_TOLERANCE,
        Property::Scale => {
            let difference = (pose.scale - rest.scale).abs().max_element();
            difference > SCALE_TOLERANCE * rest.scale.abs().max_element().max(f32::MIN_POSITIVE)
        }
    }
}
