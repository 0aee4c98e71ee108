//! Step 3 of the encoder (`encode.rs`): each moving track's bit width in one segment, against
//! ACL's error metric at the segment's samples. Each track starts at the fewest bits whose own
//! error, carried to the farthest virtual vertex it moves, stays under the target; then, while some
//! joint's virtual vertices are off by more, the track on that joint's chain to the root that
//! moves it most gets a bit more (only that joint's subtree is recomposed), and where every track
//! on the chain is at [`MAX_BITS`], the one that moves it most stores its values as they are
//! ([`RAW_BITS`]).

use glam::{Mat4, Vec3, Vec4};

use super::super::{set_property, Precision, MAX_BITS, RAW_BITS, SEGMENT_SAMPLES};
use super::Context;
use crate::anim::{compose_joint, local_to_model, JointPose, Property, Skeleton};

impl Context<'_> {
    /// Each moving track's bit width in `segment` so that no virtual vertex is off by more than
    /// `target` at the segment's samples.
    pub(super) fn allocate(&self, segment: usize, count: usize, target: f32) -> Result<(Vec<u32>, f32), String> {
        let samples = segment * SEGMENT_SAMPLES..((segment + 1) * SEGMENT_SAMPLES).min(count);
        let skeleton = self.skeleton;
        let precision = &self.precision;
        let ranges: Vec<[(u32, u32); 3]> = self.moving.iter().map(|track| track.segment_range(samples.clone())).collect();
        // The raw object-space transforms at the segment's samples.
        let mut poses = self.base.clone();
        let raw: Vec<Vec<Mat4>> = samples
            .clone()
            .map(|sample| {
                for track in &self.moving {
                    set_property(&mut poses[track.joint], track.property, track.samples[sample]);
                }
                let mut models = vec![Mat4::IDENTITY; skeleton.len()];
                local_to_model(skeleton, &poses, Mat4::IDENTITY, &mut models);
                models
            })
            .collect();
        let positions: Vec<glam::Vec3> = raw[0].iter().map(|model| model.w_axis.truncate()).collect();
        // How far each joint's farthest virtual vertex below it is, along the chain.
        let reach = reach_from(skeleton, &raw[0], precision);
        // A track's own error at a bit width: how far its stored values stray (rotations: the angle).
        let own_error = |track: usize, bits: u32| {
            let moving = &self.moving[track];
            let scale = if moving.property == Property::Rotation { 2.0 } else { 1.0 };
            samples
                .clone()
                .filter(|&sample| moving.stored[sample])
                .map(|sample| moving.stray(sample, moving.decoded(sample, &ranges[track], bits)) * scale)
                .fold(0.0, f32::max)
        };
        // How far a track's error moves the virtual vertices of `joint` (itself or below it).
        let leverage = |track: usize, joint: Option<usize>| {
            let moving = &self.moving[track];
            match (moving.property, joint) {
                (Property::Translation, _) => 1.0,
                (_, None) => reach[moving.joint],
                (_, Some(joint)) => {
                    (positions[joint] - positions[moving.joint]).length() + object_shell(precision, joint, &raw[0][joint])
                }
            }
        };
        // The fewest bits whose own error stays under the target at the track's reach: from a
        // guess (a range of R quantized at b bits strays up to R / (2 (2^b − 1))) a bit below, up.
        let mut bits: Vec<u32> = (0..self.moving.len())
            .map(|track| {
                let moving = &self.moving[track];
                let tolerance = target / leverage(track, None);
                let range = Vec3::from_array(
                    [0, 1, 2].map(|component| moving.extent[component] * ranges[track][component].1 as f32 / 255.0),
                )
                .length();
                let scale = if moving.property == Property::Rotation { 2.0 } else { 1.0 };
                let guess = libm::log2f(range * scale / (2.0 * tolerance) + 1.0).ceil();
                let first = if guess.is_finite() { (guess as u32).clamp(1, MAX_BITS) - 1 } else { 0 };
                (first..=MAX_BITS).find(|&bits| own_error(track, bits) <= tolerance).unwrap_or(MAX_BITS)
            })
            .collect();
        let decode_all =
            |track: usize, bits: u32| -> Vec<Vec4> { self.moving[track].decoded_all(samples.clone(), &ranges[track], bits) };
        // Per sample, the local poses with each track decoded at `width(track)` bits.
        let decode_poses = |width: &dyn Fn(usize) -> u32| -> Vec<Vec<JointPose>> {
            let mut poses = vec![self.base.clone(); raw.len()];
            for (track, moving) in self.moving.iter().enumerate() {
                for (index, value) in decode_all(track, width(track)).into_iter().enumerate() {
                    set_property(&mut poses[index][moving.joint], moving.property, value);
                }
            }
            poses
        };
        let everything: Vec<usize> = (0..skeleton.len()).collect();
        let recompose = |joints: &[usize], poses: &[Vec<JointPose>], models: &mut [Vec<Mat4>], errors: &mut [f32]| {
            for &joint in joints {
                errors[joint] = 0.0;
            }
            for (index, raw_models) in raw.iter().enumerate() {
                for &joint in joints {
                    models[index][joint] = compose_joint(skeleton, &models[index], joint, poses[index][joint], Mat4::IDENTITY);
                    errors[joint] = errors[joint].max(precision.joint_error(joint, &raw_models[joint], &models[index][joint]));
                }
            }
        };
        // Per sample, the object-space transforms of decoded poses; per joint, its largest error
        // over the segment's samples.
        let compose_all = |poses: &[Vec<JointPose>]| -> (Vec<Vec<Mat4>>, Vec<f32>) {
            let mut models = vec![vec![Mat4::IDENTITY; skeleton.len()]; raw.len()];
            let mut errors = vec![0.0; skeleton.len()];
            recompose(&everything, poses, &mut models, &mut errors);
            (models, errors)
        };
        // The decoded poses, their transforms and errors at the current widths: a track's new
        // width recomputes only its joint's subtree.
        let mut decoded_poses = decode_poses(&|track| bits[track]);
        let (mut models, mut errors) = compose_all(&decoded_poses);
        let mut own: Vec<f32> = (0..self.moving.len()).map(|track| own_error(track, bits[track])).collect();
        // Whether the segment is held with every track's values as they are: asked once the raises
        // pass two a track, so that a segment no width holds is refused then, not after raising
        // every track a bit at a time (assimp's full-rotations FBX took 2.3 s to refuse its clip).
        // Only where the segment stores every sample: a removed one lies between its stored
        // neighbours as decoded, and fewer bits can happen to land it closer (two of Mixamo's
        // clips have such segments, held on the way up and not at RAW_BITS).
        let all_stored = self.moving.iter().all(|moving| moving.stored[samples.clone()].iter().all(|&stored| stored));
        let held_as_they_are = || compose_all(&decode_poses(&|_| RAW_BITS)).1.iter().all(|&error| error <= target);
        for raise in 0..=self.moving.len() * (MAX_BITS as usize + 1) {
            let Some((worst, &error)) = errors.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)) else {
                return Ok((bits, 0.0));
            };
            if error <= target {
                return Ok((bits, error));
            }
            if all_stored && raise == 2 * self.moving.len() && !held_as_they_are() {
                break;
            }
            // The tracks on the worst joint's chain to the root; the one that moves it most gets a
            // bit; only where every one is at MAX_BITS, the one that moves it most is stored as it is.
            let mut best: Option<(usize, f32)> = None;
            for widest in [MAX_BITS, RAW_BITS] {
                let mut joint = Some(worst);
                while let Some(current) = joint {
                    for &track in &self.tracks_of[current] {
                        if bits[track] < widest {
                            let contribution = own[track] * leverage(track, Some(worst));
                            if best.is_none_or(|(_, most)| contribution > most) {
                                best = Some((track, contribution));
                            }
                        }
                    }
                    joint = skeleton.joints[current].parent.filter(|&parent| parent < current);
                }
                if best.is_some() {
                    break;
                }
            }
            let Some((track, _)) = best else { break };
            bits[track] = if bits[track] < MAX_BITS { bits[track] + 1 } else { RAW_BITS };
            own[track] = own_error(track, bits[track]);
            let moving = &self.moving[track];
            for (index, value) in decode_all(track, bits[track]).into_iter().enumerate() {
                set_property(&mut decoded_poses[index][moving.joint], moving.property, value);
            }
            // The joint and those below it: later in the list (parents first), inside its span.
            let (enter, exit) = self.spans[moving.joint];
            let below: Vec<usize> =
                (moving.joint..skeleton.len()).filter(|&joint| (enter..exit).contains(&self.spans[joint].0)).collect();
            recompose(&below, &decoded_poses, &mut models, &mut errors);
        }
        Err(format!(
            "kept as keys: its values stored as they are (f32) do not keep it within {:.4} cm on a 1.8 m figure",
            self.precision.as_reference_centimetres(target)
        ))
    }
}

/// Joint `joint`'s shell in object space: a shell is in its joint's own frame, which may be scaled
/// (Mixamo's joints are in centimetres inside a model in metres), so it reaches its length times
/// that frame's (`model`'s) largest stretch.
pub(super) fn object_shell(precision: &Precision, joint: usize, model: &Mat4) -> f32 {
    let stretch = [model.x_axis, model.y_axis, model.z_axis].map(|axis| axis.truncate().length());
    precision.shell_of(joint) * stretch[0].max(stretch[1]).max(stretch[2])
}

/// [`reach`] from the joints' object-space transforms.
pub(super) fn reach_from(skeleton: &Skeleton, models: &[Mat4], precision: &Precision) -> Vec<f32> {
    let mut reach: Vec<f32> = (0..skeleton.len()).map(|joint| object_shell(precision, joint, &models[joint])).collect();
    for joint in (0..skeleton.len()).rev() {
        if let Some(parent) = skeleton.joints[joint].parent.filter(|&parent| parent < joint) {
            let length = (models[joint].w_axis - models[parent].w_axis).truncate().length();
            reach[parent] = reach[parent].max(reach[joint] + length);
        }
    }
    reach
}
