//! Animation as the SDK plays it: Euler rotation keys slerped, position keys on Hermite curves
//! with the SDK's tangents, evaluated directly (the reference the fidelity tests hold the
//! model's channels to).

use super::byte_error;
use super::layout::{validate, JointOrder, Layout};
use super::{Ms3dFile, Ms3dKey};
use crate::anim::{bracket, hermite, slerp_shortest, JointPose};
use crate::formats::FormatError;
use glam::{Quat, Vec3};
use std::path::Path;

// ---------------------------------------------------------------------------------------------
// Animation
// ---------------------------------------------------------------------------------------------

/// MilkShape's Euler angles (radians) as a rotation: R = Rz(z)·Ry(y)·Rx(x), x applied first, as
/// the SDK's `AngleMatrix` and `AngleQuaternion` build it.
pub fn euler_rotation(angles: Vec3) -> Quat {
    (Quat::from_rotation_z(angles.z) * Quat::from_rotation_y(angles.y) * Quat::from_rotation_x(angles.x)).normalize()
}

/// A position key's Hermite tangents on the normalized parameter of the interval before it
/// (`incoming`) and after it (`outgoing`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Tangent {
    pub(super) incoming: Vec3,
    pub(super) outgoing: Vec3,
}

/// The SDK's `SetupTangents` (see the module notes).
pub(super) fn position_tangents(keys: &[Ms3dKey]) -> Vec<Tangent> {
    let count = keys.len();
    let mut tangents = vec![Tangent::default(); count];
    if count <= 2 {
        return tangents;
    }
    for (index, tangent) in tangents.iter_mut().enumerate() {
        let before = if index == 0 { count - 1 } else { index - 1 };
        let after = if index + 1 == count { 0 } else { index + 1 };
        let (Some(before), Some(key), Some(after)) = (keys.get(before), keys.get(index), keys.get(after)) else { continue };
        let direction = after.value - before.value;
        let incoming_interval = key.time - before.time;
        let outgoing_interval = after.time - key.time;
        let span = incoming_interval + outgoing_interval;
        if span != 0.0 && span.is_finite() {
            *tangent =
                Tangent { incoming: direction * (incoming_interval / span), outgoing: direction * (outgoing_interval / span) };
        }
    }
    tangents
}

/// One joint, ready to evaluate.
#[derive(Clone, Debug)]
pub(super) struct AnimatedJoint {
    /// Skeleton index, always below the joint's own.
    pub(super) parent: Option<usize>,
    pub(super) bind_rotation: Quat,
    pub(super) bind_translation: Vec3,
    /// Times and the key rotations as quaternions.
    pub(super) rotation_keys: Vec<(f32, Quat)>,
    pub(super) position_keys: Vec<Ms3dKey>,
    pub(super) tangents: Vec<Tangent>,
}

impl AnimatedJoint {
    pub(super) fn key_rotation(&self, time: f32) -> Quat {
        match bracket(&self.rotation_keys, |key| key.0, time) {
            None => Quat::IDENTITY,
            Some(at) => match (self.rotation_keys.get(at.key), self.rotation_keys.get(at.next)) {
                (Some(start), Some(end)) => slerp_shortest(start.1, end.1, at.fraction),
                _ => Quat::IDENTITY,
            },
        }
    }

    pub(super) fn key_position(&self, time: f32) -> Vec3 {
        match bracket(&self.position_keys, |key| key.time, time) {
            None => Vec3::ZERO,
            Some(at) if at.key == at.next => self.position_keys.get(at.key).map_or(Vec3::ZERO, |key| key.value),
            Some(at) => {
                let keys = (self.position_keys.get(at.key), self.position_keys.get(at.next));
                let tangents = (self.tangents.get(at.key), self.tangents.get(at.next));
                match (keys, tangents) {
                    ((Some(start), Some(end)), (Some(out), Some(into))) => {
                        hermite(start.value, out.outgoing, end.value, into.incoming, at.fraction)
                    }
                    _ => Vec3::ZERO,
                }
            }
        }
    }
}

/// A file's joints and keys, evaluated directly: model-space poses at any time, in skeleton order.
/// The fidelity tests hold the model's channels (sampled on the GPU) to this.
#[derive(Clone, Debug)]
pub struct Ms3dAnimation {
    joints: Vec<AnimatedJoint>,
    duration: f32,
}

impl Ms3dAnimation {
    /// Checks the document (as [`parse`] does) and its timeline: a positive frame rate and a
    /// frame count of 0 or more.
    pub fn new(file: &Ms3dFile, path: &Path) -> Result<Ms3dAnimation, FormatError> {
        let layout = Layout::of(file);
        let order = validate(file, &layout, path)?;
        let duration = timeline(file, &layout, path)?;
        Ok(Ms3dAnimation { joints: animated_joints(file, &order), duration })
    }

    /// Total frames / frame rate, in seconds.
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// The file's joints; a model may add one rigid root after them (see [`to_model`]).
    pub fn joint_count(&self) -> usize {
        self.joints.len()
    }

    /// Model-space poses at `time` seconds, in the skeleton's order (parents first). Slots of `out`
    /// past the file's joints (the model's rigid root) get the identity.
    pub fn evaluate(&self, time: f32, out: &mut [JointPose]) {
        for index in 0..out.len() {
            let pose = match self.joints.get(index) {
                Some(joint) => {
                    let key_rotation = joint.key_rotation(time);
                    let key_position = joint.key_position(time);
                    let rotation = joint.bind_rotation * key_rotation;
                    let translation = joint.bind_translation + joint.bind_rotation * key_position;
                    compose(parent_pose(joint.parent, index, out), rotation, translation)
                }
                None => JointPose::IDENTITY,
            };
            if let Some(slot) = out.get_mut(index) {
                *slot = pose;
            }
        }
    }

    /// Model-space bind poses (no keys applied), in skeleton order.
    pub fn bind_poses(&self) -> Vec<JointPose> {
        let mut poses = vec![JointPose::IDENTITY; self.joints.len()];
        bind_poses_into(&self.joints, &mut poses);
        poses
    }
}

pub(super) fn parent_pose(parent: Option<usize>, index: usize, poses: &[JointPose]) -> Option<JointPose> {
    parent.filter(|&parent| parent < index).and_then(|parent| poses.get(parent)).copied()
}

pub(super) fn compose(parent: Option<JointPose>, rotation: Quat, translation: Vec3) -> JointPose {
    match parent {
        Some(parent) => {
            JointPose::new((parent.rotation * rotation).normalize(), parent.translation + parent.rotation * translation)
        }
        None => JointPose::new(rotation.normalize(), translation),
    }
}

pub(super) fn bind_poses_into(joints: &[AnimatedJoint], out: &mut [JointPose]) {
    for index in 0..out.len() {
        let Some(joint) = joints.get(index) else { break };
        let pose = compose(parent_pose(joint.parent, index, out), joint.bind_rotation, joint.bind_translation);
        if let Some(slot) = out.get_mut(index) {
            *slot = pose;
        }
    }
}

pub(super) fn animated_joints(file: &Ms3dFile, order: &JointOrder) -> Vec<AnimatedJoint> {
    order
        .order
        .iter()
        .filter_map(|&file_index| {
            let joint = file.joints.get(file_index)?;
            let parent =
                order.parents.get(file_index).copied().flatten().and_then(|parent| order.skeleton_index.get(parent)).copied();
            Some(AnimatedJoint {
                parent,
                bind_rotation: euler_rotation(joint.rotation),
                bind_translation: joint.position,
                rotation_keys: joint.rotation_keys.iter().map(|key| (key.time, euler_rotation(key.value))).collect(),
                position_keys: joint.position_keys.clone(),
                tangents: position_tangents(&joint.position_keys),
            })
        })
        .collect()
}

/// The timeline's length in seconds: total frames / frame rate, both checked.
pub(super) fn timeline(file: &Ms3dFile, layout: &Layout, path: &Path) -> Result<f32, FormatError> {
    let fps = file.animation_fps;
    if !(fps > 0.0 && fps.is_finite()) {
        return Err(byte_error(
            path,
            layout.animation,
            format!(
                "expected a positive animation frame rate (fAnimationFPS) for a model with {} joints, found {fps}",
                file.joints.len()
            ),
        ));
    }
    let total_frames = file.total_frames;
    let duration = total_frames as f32 / fps;
    if total_frames < 0 || !duration.is_finite() {
        return Err(byte_error(
            path,
            layout.animation.saturating_add(8),
            format!("expected a total frame count (iTotalFrames) of 0 or more and a finite length, found {total_frames} frames at {fps} fps"),
        ));
    }
    Ok(duration)
}
