//! Clips from one file played on another file's skeleton (`--anim FILE`): joints matched by name
//! ([`names`]), keys rewritten into the target's joint frames. Only keys change, never their times
//! or interpolation, so a retargeted clip is sampled on the GPU like any other.
//!
//! Rotations are carried through model space from a common reference pose, as engines'
//! retargeters do, because two exporters give the same bone different local axes (the three.js
//! Soldier and X Bot, both Mixamo rigs, differ at most joints) and copying local rotations then
//! turns every bone the wrong way:
//! - **The reference pose** is the target's rest with each driven joint turned, in model space, so
//!   that its bones (to the joints its children are matched to) point as the source's rest bones
//!   do: the shortest arc for one bone, the best fit (Horn's quaternion method) for several (the
//!   hips), the parent's turn for a joint without matched children. Where the two rests agree it
//!   is the target's rest; where they differ as poses (a T-pose clip on an A-pose model), the
//!   target takes the source's pose.
//! - **Rotation** keys: a joint the source turns in model space by `G × S⁻¹` from its rest `S` is
//!   turned by the same from the target's reference `R`: `G_target = G_source × S⁻¹ × R`. Through
//!   each side's parent frame (parent's rest or reference in model space, then `pre`), a key `k`
//!   becomes `A × k × B` with `A = frame(target)⁻¹ × frame(source)` and `B = S⁻¹ × R`. A driven
//!   joint its clip does not key holds the source's rest so converted. So every bone points where
//!   the source's bone points, whatever either file's axes, and only the characters' proportions
//!   differ. A Z-up file's clip stands up on a Y-up model (`pre` is in the frames).
//! - **Translation** keys are kept as motion: the source's offset from its rest, taken into model
//!   space through its parent's rest frame, scaled by the ratio of the two skeletons' heights, and
//!   added to the target's rest in the target's parent's reference frame. So a joint whose
//!   translation does not move keeps the target's bone length, the hips' motion grows with the
//!   target's height, and a skeleton of the same proportions takes the keys unchanged. Units
//!   follow (a centimetre FBX's clip on a metre glTF).
//! - **Scale** keys are copied.
//! - **Facing.** Two rigs may face opposite ways in their model spaces (the three.js X Bot faces
//!   -Z, the Soldier +Z). The caller passes the turn about +Y from the source's facing to the
//!   target's, and the source's model space is taken turned by it: its rest, its reference and
//!   its frames. So a clip turns the target from its own rest exactly as it turns the source from
//!   the source's, and a walk forward walks forward.
//!
//! [`compare`] measures the result as engines' users see it: the angle between each bone of the
//! source playing its clip and the same bone of the target playing the carried clip.

pub mod compare;
pub mod humanoid;
mod key;
mod names;

pub use key::joint_key;
use names::match_joints_counted;

use glam::{Mat3, Mat4, Quat, Vec3, Vec4};

use super::{Aabb, Animation, Channel, Interpolation, JointPose, KeyTimes, Property, Skeleton};

/// Clips rewritten for another skeleton, and what matched.
#[derive(Clone, Debug, PartialEq)]
pub struct Retargeted {
    /// Keyed on the target's joints.
    pub animations: Vec<Animation>,
    /// Source joints matched to a target joint.
    pub matched: usize,
    /// Of those, the ones their humanoid role matched rather than their name ([`humanoid`]).
    pub by_role: usize,
    /// Source joints the clips animate that no target joint matches (their keys are dropped).
    pub missing_in_target: Vec<String>,
    /// Target joints no source joint matches (they stay at rest).
    pub missing_in_source: Vec<String>,
}

impl Retargeted {
    /// One line: how many joints matched and which are missing on either side (the first few).
    pub fn report(&self, source_joints: usize) -> String {
        let list = |names: &[String]| {
            let shown: Vec<&str> =
                names.iter().take(5).map(|name| if name.is_empty() { "(unnamed)" } else { name.as_str() }).collect();
            let more = names.len().saturating_sub(shown.len());
            let more = if more > 0 { format!(" (+{more} more)") } else { String::new() };
            format!("{}{more}", shown.join(", "))
        };
        let mut line = format!("{} of {source_joints} joints matched by name", self.matched);
        if self.by_role > 0 {
            line += &format!(" or humanoid role ({} by role)", self.by_role);
        }
        if !self.missing_in_target.is_empty() {
            line += &format!("; animated but not in the model: {}", list(&self.missing_in_target));
        }
        if !self.missing_in_source.is_empty() {
            line += &format!("; model joints left at rest: {}", list(&self.missing_in_source));
        }
        line
    }
}

/// `animations` (keyed on `source`'s joints) rewritten for `target`, the source's model space turned
/// by `facing` (see the module's text); an error when no joint name matches. A source joint drives every target joint of its name (a glTF node in two skins is two
/// joints). Names left over are compared once more with a first word (`Skeleton_`, `Bip01 `) taken
/// off the other side's name, for exporters that prefix every joint with the rig's name.
pub fn retarget(source: &Skeleton, animations: &[Animation], target: &Skeleton, facing: Quat) -> Result<Retargeted, String> {
    let (map, by_role) = match_joints_counted(source, target);
    let matched = map.iter().filter(|targets| !targets.is_empty()).count();
    if matched == 0 {
        return Err("no joint name matches a joint of the model (names compared without namespaces and case)".into());
    }
    let (mut animated, mut moving) = (vec![false; source.len()], vec![false; source.len()]);
    for channel in animations.iter().flat_map(|animation| &animation.channels) {
        if let Some(animated) = animated.get_mut(channel.joint) {
            *animated = true;
            moving[channel.joint] |= varies(channel);
        }
    }
    // A joint named as a matched one is that joint again (a glTF node in both of a file's skins,
    // the Soldier's neck and head): its keys are the matched one's, not missing from the model.
    let matched_names: ahash::AHashSet<String> = source
        .joints
        .iter()
        .zip(&map)
        .filter(|(_, targets)| !targets.is_empty())
        .map(|(joint, _)| joint_key(&joint.name))
        .collect();
    let missing_in_target = source
        .joints
        .iter()
        .zip(&map)
        .zip(&animated)
        .filter(|((joint, targets), &animated)| {
            targets.is_empty() && animated && !matched_names.contains(&joint_key(&joint.name))
        })
        .map(|((joint, _), _)| joint.name.clone())
        .collect();
    let mut taken = vec![false; target.len()];
    for &index in map.iter().flatten() {
        taken[index] = true;
    }
    let missing_in_source =
        target.joints.iter().zip(&taken).filter(|(_, &taken)| !taken).map(|(joint, _)| joint.name.clone()).collect();

    let conversions = Conversions::new(source, target, &map, &moving, facing);
    let animations = animations.iter().map(|animation| conversions.animation(animation)).collect();
    Ok(Retargeted { animations, matched, by_role, missing_in_target, missing_in_source })
}

/// The turn about +Y that carries a clip from a rig facing `source_yaw` to one facing
/// `target_yaw` (each the turn from +Z to where the character faces, `Model::facing_yaw`): the
/// nearest quarter turn to their difference, and none where they are within 45° of each other or
/// either is unknown. Exporters differ by quarter turns (a model space facing -Z or +Z); a few
/// degrees between two rigs are their poses, which the reference pose handles.
pub fn facing_turn(source_yaw: Option<f32>, target_yaw: Option<f32>) -> Quat {
    let (Some(source), Some(target)) = (source_yaw, target_yaw) else { return Quat::IDENTITY };
    let apart = (target - source).sin().atan2((target - source).cos());
    let quarters = (apart / std::f32::consts::FRAC_PI_2).round();
    if quarters == 0.0 || !quarters.is_finite() {
        Quat::IDENTITY
    } else {
        Quat::from_rotation_y(quarters * std::f32::consts::FRAC_PI_2)
    }
}

/// Whether a channel's keys differ from its first (a still mesh node's are all alike).
fn varies(channel: &Channel) -> bool {
    let first = channel.key_value(0);
    (1..channel.times.count()).any(|key| !channel.key_value(key).abs_diff_eq(first, 1e-6))
}

/// Per source joint, how its keys become each target joint's it drives.
struct Conversions {
    joints: Vec<Vec<JointConversion>>,
    /// The source's rest pose (a driven joint its clip does not key holds it, converted).
    source_rest: Vec<JointPose>,
}

struct JointConversion {
    target: usize,
    /// A rotation key becomes `left × key × right`.
    left: Quat,
    right: Quat,
    /// `None` where the frames cannot be inverted: the translation keys are dropped.
    translation: Option<TranslationRule>,
    /// The target's own rest rotation: a converted hold that equals it needs no channel.
    target_rest: Quat,
}

/// `target rest + linear × (key − source rest)`.
struct TranslationRule {
    linear: Mat3,
    source_rest: Vec3,
    target_rest: Vec3,
}

/// A joint's frame at rest: its parent's model matrix (`root` for a root: the facing turn on the
/// source's side, the identity on the target's), then its `pre`.
fn frame(models: &[Mat4], skeleton: &Skeleton, joint: usize, root: Mat4) -> Mat4 {
    let joint = &skeleton.joints[joint];
    joint.parent.and_then(|parent| models.get(parent)).copied().unwrap_or(root) * joint.pre
}

/// The rotation a joint's keys are in, as the rotation of the other side's frame sees it: its
/// parent's reference rotation (`root` for a root), then its `pre`.
fn reference_frame(reference: &[Quat], skeleton: &Skeleton, joint: usize, root: Quat) -> Quat {
    let joint = &skeleton.joints[joint];
    joint.parent.and_then(|parent| reference.get(parent)).copied().unwrap_or(root) * rotation_of(joint.pre)
}

impl Conversions {
    fn new(source: &Skeleton, target: &Skeleton, map: &[Vec<usize>], moving: &[bool], facing: Quat) -> Conversions {
        let turn = Mat4::from_quat(facing);
        let source_rest: Vec<Mat4> = super::posed_models(source, None, 0.0).into_iter().map(|model| turn * model).collect();
        let target_rest = super::posed_models(target, None, 0.0);
        let mut driver = vec![None; target.len()];
        for (source_joint, targets) in map.iter().enumerate() {
            for &target_joint in targets {
                driver[target_joint] = Some(source_joint);
            }
        }
        // Reference rotations in model space: the source's rest, the target's turned to it.
        let source_reference: Vec<Quat> = source_rest.iter().map(|&model| rotation_of(model)).collect();
        let reference = reference_rotations(target, &target_rest, &source_rest, &driver, moving);
        // Heights over the matched joints alone: helper and mesh nodes elsewhere do not count.
        let pairs = || map.iter().enumerate().flat_map(|(source, targets)| targets.iter().map(move |&target| (source, target)));
        let height = |points: &mut dyn Iterator<Item = Vec3>| Aabb::from_points(points).extent();
        let source_height = height(&mut pairs().map(|(source, _)| source_rest[source].w_axis.truncate()));
        let target_height = height(&mut pairs().map(|(_, target)| target_rest[target].w_axis.truncate()));
        let ratio = if source_height > 1e-6 && target_height > 1e-6 { target_height / source_height } else { 1.0 };

        let joints = map
            .iter()
            .enumerate()
            .map(|(index, targets)| {
                let source_frame = reference_frame(&source_reference, source, index, facing);
                let source_linear = Mat3::from_mat4(frame(&source_rest, source, index, turn));
                targets
                    .iter()
                    .map(|&target_index| {
                        let target_frame = reference_frame(&reference, target, target_index, Quat::IDENTITY);
                        let left = snapped(target_frame.inverse() * source_frame);
                        let right = snapped(source_reference[index].inverse() * reference[target_index]);
                        // Offsets into model space through the source's rest frame (its scale
                        // included: a centimetre FBX's root), out through the target's frame
                        // turned to its reference, its scale kept.
                        let (target_scale, _, _) =
                            frame(&target_rest, target, target_index, Mat4::IDENTITY).to_scale_rotation_translation();
                        let into_target = Mat3::from_diagonal(target_scale.recip()) * Mat3::from_quat(target_frame.inverse());
                        let linear = into_target * ratio * source_linear;
                        let translation = linear.is_finite().then_some(TranslationRule {
                            linear,
                            source_rest: source.joints[index].rest.translation,
                            target_rest: target.joints[target_index].rest.translation,
                        });
                        let target_rest = target.joints[target_index].rest.rotation;
                        JointConversion { target: target_index, left, right, translation, target_rest }
                    })
                    .collect()
            })
            .collect();
        let source_rest = source.joints.iter().map(|joint| joint.rest).collect();
        Conversions { joints, source_rest }
    }

    /// `animation` keyed on the target: each channel for every target joint its joint drives, and
    /// a one-key rotation for a driven joint whose source the clip leaves at rest where the
    /// reference pose turns it.
    fn animation(&self, animation: &Animation) -> Animation {
        let mut channels: Vec<Channel> = animation.channels.iter().flat_map(|channel| self.convert(channel)).collect();
        let mut keyed = vec![false; self.joints.len()];
        for channel in animation.channels.iter().filter(|channel| channel.property == Property::Rotation) {
            if let Some(keyed) = keyed.get_mut(channel.joint) {
                *keyed = true;
            }
        }
        for (joint, conversions) in self.joints.iter().enumerate().filter(|(joint, _)| !keyed[*joint]) {
            let held = self.source_rest[joint].rotation;
            for conversion in conversions {
                let value = (conversion.left * held * conversion.right).normalize();
                if super::curve::rotation_distance(value, conversion.target_rest) > 1e-6 {
                    channels.push(Channel {
                        joint: conversion.target,
                        property: Property::Rotation,
                        interpolation: Interpolation::Step,
                        times: KeyTimes::from_list(vec![0.0]),
                        mask: 0b1111,
                        base: Vec4::ZERO,
                        implied_w: false,
                        wraps: false,
                        values: value.to_array().to_vec(),
                    });
                }
            }
        }
        Animation { channels, ..animation.clone() }
    }

    /// The channel for each target joint its joint drives, its keys rewritten (none for a
    /// translation whose keys are dropped).
    fn convert<'a>(&'a self, channel: &'a Channel) -> impl Iterator<Item = Channel> + 'a {
        self.joints.get(channel.joint).into_iter().flatten().filter_map(|conversion| conversion.convert(channel))
    }
}

/// The target's reference rotations in model space (see the module's text), parents first, from
/// both rests' model matrices. A bone leads to a child the clips move (`moving`, by source joint):
/// a mesh node hanging from a bone under the bone's name (Blender's robot), keyed still, sits
/// where each exporter put it and says nothing of the pose.
fn reference_rotations(
    target: &Skeleton,
    target_rest: &[Mat4],
    source_rest: &[Mat4],
    driver: &[Option<usize>],
    moving: &[bool],
) -> Vec<Quat> {
    let position = |models: &[Mat4], joint: usize| models[joint].w_axis.truncate();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); target.len()];
    for (index, joint) in target.joints.iter().enumerate() {
        if let Some(parent) = joint.parent.filter(|&parent| parent < index) {
            children[parent].push(index);
        }
    }
    let mut reference = vec![Quat::IDENTITY; target.len()];
    for (index, joint) in target.joints.iter().enumerate() {
        let Some(source_joint) = driver[index] else {
            reference[index] = (reference_frame(&reference, target, index, Quat::IDENTITY) * joint.rest.rotation).normalize();
            continue;
        };
        let (source_rotation, target_rotation) = (rotation_of(source_rest[source_joint]), rotation_of(target_rest[index]));
        // Each bone to a child matched to a moving source joint, in both rests: (target, source).
        let bones: Vec<(Vec3, Vec3)> = children[index]
            .iter()
            .filter_map(|&child| {
                let source_child = driver[child].filter(|&source_child| moving[source_child])?;
                let target_bone = position(target_rest, child) - position(target_rest, index);
                let source_bone = position(source_rest, source_child) - position(source_rest, source_joint);
                Some((target_bone.try_normalize()?, source_bone.try_normalize()?))
            })
            .collect();
        // The same axes: each bone leaves the joint the same way in both joints' own frames, and
        // the joints differ by a few degrees at most (the rests' poses, not the exporters' axes).
        // The source's rotation is then the target's reference, so its keys apply as they are.
        let same_axes = source_rotation.angle_between(target_rotation) < SAME_AXES
            && bones.iter().all(|&(target_bone, source_bone)| {
                let (target_local, source_local) =
                    (target_rotation.inverse() * target_bone, source_rotation.inverse() * source_bone);
                target_local.angle_between(source_local) < SAME_BONE
            });
        reference[index] = if same_axes {
            source_rotation
        } else {
            let turn = match bones.as_slice() {
                [] => {
                    reference_frame(&reference, target, index, Quat::IDENTITY)
                        * rotation_of(frame(target_rest, target, index, Mat4::IDENTITY)).inverse()
                }
                [(from, to)] => Quat::from_rotation_arc(*from, *to),
                several => best_rotation(several),
            };
            // Bones a degree or two apart are the characters' build, not another pose: the
            // target keeps its own (as an exporter's conversion of the same rig does).
            let turn = if bones.is_empty() || turn.angle_between(Quat::IDENTITY) >= SAME_BONE { turn } else { Quat::IDENTITY };
            (turn * target_rotation).normalize()
        };
    }
    reference
}

/// Two joints whose rest rotations in model space are this close (radians) can have the same
/// axes, the rests differing as poses (FBX2glTF's robot tilts its head 9° from Blender's);
/// exporters' axes differ by right angles (a bone along +Y or +X) or by the modeller's roll.
const SAME_AXES: f32 = 20.0 * std::f32::consts::PI / 180.0;
/// A bone leaving two joints within this angle (radians) of each other, each in its own frame,
/// leaves them the same way.
const SAME_BONE: f32 = 2.0 * std::f32::consts::PI / 180.0;

/// `rotation`, or exactly the identity within a millionth of a radian of it (the same rig on
/// both sides takes its keys unchanged, bit for bit).
fn snapped(rotation: Quat) -> Quat {
    if super::curve::rotation_distance(rotation, Quat::IDENTITY) < 1e-6 {
        Quat::IDENTITY
    } else {
        rotation.normalize()
    }
}

/// The rotation that best turns each `from` onto its `to` (unit vectors, least squares): Horn's
/// closed form, the eigenvector of the largest eigenvalue of his 4×4 matrix, found by power
/// iteration (a few joints, a few bones each). Hand-written: glam has no eigen solver, and a
/// linear-algebra crate for one 4×4 matrix is not worth its weight.
fn best_rotation(pairs: &[(Vec3, Vec3)]) -> Quat {
    let mut s = [[0.0f32; 3]; 3];
    for (from, to) in pairs {
        for (row, a) in from.to_array().into_iter().enumerate() {
            for (column, b) in to.to_array().into_iter().enumerate() {
                s[row][column] += a * b;
            }
        }
    }
    let [[xx, xy, xz], [yx, yy, yz], [zx, zy, zz]] = s;
    let n = [
        [xx + yy + zz, yz - zy, zx - xz, xy - yx],
        [yz - zy, xx - yy - zz, xy + yx, zx + xz],
        [zx - xz, xy + yx, -xx + yy - zz, yz + zy],
        [xy - yx, zx + xz, yz + zy, -xx - yy + zz],
    ];
    // Shifted by the largest magnitude an eigenvalue can have, so the wanted one dominates.
    let shift = pairs.len() as f32;
    // From the shortest arc of the first bone: close to the answer where the rests agree.
    let start = Quat::from_rotation_arc(pairs[0].0, pairs[0].1);
    let mut q = [start.w, start.x, start.y, start.z];
    for _ in 0..200 {
        let mut next = [0.0f32; 4];
        for (row, out) in next.iter_mut().enumerate() {
            *out = shift * q[row] + (0..4).map(|column| n[row][column] * q[column]).sum::<f32>();
        }
        let length = next.iter().map(|value| value * value).sum::<f32>().sqrt();
        // Also stops on NaN.
        if length.is_nan() || length <= 0.0 {
            break;
        }
        q = next.map(|value| value / length);
    }
    Quat::from_xyzw(q[1], q[2], q[3], q[0]).normalize()
}

impl JointConversion {
    fn convert(&self, channel: &Channel) -> Option<Channel> {
        let joint = self.target;
        let translation = match channel.property {
            Property::Translation => Some(self.translation.as_ref()?),
            _ => None,
        };
        let per_key = channel.interpolation.values_per_key();
        let slots = channel.times.count() * per_key;
        let mut values = Vec::with_capacity(slots * 4);
        for slot in 0..slots {
            let tangent = per_key == 3 && slot % 3 != 1;
            let value = channel.entry(slot, tangent);
            let converted = match channel.property {
                Property::Rotation => Vec4::from(self.left * Quat::from_vec4(value) * self.right),
                Property::Translation => {
                    let rule = translation?;
                    if tangent {
                        (rule.linear * value.truncate()).extend(0.0)
                    } else {
                        (rule.target_rest + rule.linear * (value.truncate() - rule.source_rest)).extend(0.0)
                    }
                }
                Property::Scale => value,
            };
            let components = if channel.property == Property::Rotation { 4 } else { 3 };
            values.extend_from_slice(&converted.to_array()[..components]);
        }
        let rotation = channel.property == Property::Rotation;
        // The conversion is linear (affine for translations), so every interpolation kind keeps
        // its meaning: tangents convert by the linear part alone.
        Some(Channel {
            joint,
            property: channel.property,
            interpolation: channel.interpolation,
            times: channel.times.clone(),
            mask: if rotation { 0b1111 } else { 0b0111 },
            base: Vec4::ZERO,
            implied_w: false,
            wraps: channel.wraps,
            values,
        })
    }
}

/// The rotation part of an affine matrix (scale and shear left out).
fn rotation_of(matrix: Mat4) -> Quat {
    let (_, rotation, _) = matrix.to_scale_rotation_translation();
    if rotation.is_finite() {
        rotation.normalize()
    } else {
        Quat::IDENTITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{local_to_model, Joint};

    /// Hips and spine, `scale` tall each, standing up in model space: with `pre`, the hips' rest
    /// undoes it (as a Z-up file's joints are oriented in its own axes).
    fn skeleton(scale: f32, pre: Mat4) -> Skeleton {
        let turn = Quat::from_mat4(&pre);
        let rest = JointPose::new(turn.inverse(), turn.inverse() * Vec3::Y * scale);
        let mut root = Joint::new("mixamorig:Hips", None, Mat4::IDENTITY, rest);
        root.pre = pre;
        let child = Joint::new("mixamorig:Spine", Some(0), Mat4::IDENTITY, JointPose::new(Quat::IDENTITY, Vec3::Y * scale));
        let mut skeleton = Skeleton { joints: vec![root, child] };
        let poses: Vec<JointPose> = skeleton.joints.iter().map(|joint| joint.rest).collect();
        let mut models = vec![Mat4::IDENTITY; 2];
        local_to_model(&skeleton, &poses, Mat4::IDENTITY, &mut models);
        for (joint, model) in skeleton.joints.iter_mut().zip(models) {
            joint.inverse_bind = model.inverse();
        }
        skeleton
    }

    fn channel(joint: usize, property: Property, keys: &[Vec4]) -> Channel {
        let components = if property == Property::Rotation { 4 } else { 3 };
        Channel {
            joint,
            property,
            interpolation: Interpolation::Linear,
            times: KeyTimes::from_list((0..keys.len()).map(|key| key as f32).collect()),
            mask: if components == 4 { 0b1111 } else { 0b0111 },
            base: Vec4::ZERO,
            implied_w: false,
            wraps: false,
            values: keys.iter().flat_map(|key| key.to_array()[..components].to_vec()).collect(),
        }
    }

    /// The model-space matrices of `skeleton` posed by `animation` at `time`.
    fn posed(skeleton: &Skeleton, animation: &Animation, time: f32) -> Vec<Mat4> {
        crate::anim::posed_models(skeleton, Some(animation), time)
    }

    #[test]
    fn a_z_up_clip_on_a_taller_y_up_skeleton_keeps_rotations_and_scales_root_motion() {
        // The source is Z-up (its root's pre stands it up) and half the target's size.
        let z_up = Mat4::from_rotation_x(-std::f32::consts::FRAC_PI_2);
        let (source, target) = (skeleton(0.5, z_up), skeleton(1.0, Mat4::IDENTITY));
        let hips = source.joints[0].rest;
        let animation = Animation {
            name: "walk".into(),
            duration: 1.0,
            frame_rate: None,
            channels: vec![
                channel(0, Property::Translation, &[hips.translation.extend(0.0), (hips.translation + Vec3::X).extend(0.0)]),
                channel(
                    0,
                    Property::Rotation,
                    &[Vec4::from(hips.rotation), Vec4::from(hips.rotation * Quat::from_rotation_y(0.4))],
                ),
                channel(1, Property::Rotation, &[Vec4::from(Quat::IDENTITY), Vec4::from(Quat::from_rotation_z(0.7))]),
                channel(1, Property::Translation, &[Vec4::new(0.0, 0.5, 0.0, 0.0); 2]),
            ],
            file_key_bytes: 0,
            source: None,
            weights: Vec::new(),
            compressed: None,
            motion: None,
        };
        let retargeted = retarget(&source, std::slice::from_ref(&animation), &target, Quat::IDENTITY).expect("names match");
        assert_eq!(retargeted.matched, 2);
        let converted = &retargeted.animations[0];
        // The spine's translation keys (its rest, unmoving) become the target's rest: its bone.
        assert_eq!(converted.channels.len(), 4);
        for time in [0.0, 0.5, 1.0] {
            let (source_posed, target_posed) = (posed(&source, &animation, time), posed(&target, converted, time));
            // Root motion: the source's hips move along model x, twice as far on the target.
            let moved = target_posed[0].w_axis.truncate() - Vec3::Y;
            assert!(moved.distance(Vec3::X * 2.0 * time) < 1e-5, "{moved}");
            for joint in 0..2 {
                let (_, source_rotation, _) = source_posed[joint].to_scale_rotation_translation();
                let (_, target_rotation, _) = target_posed[joint].to_scale_rotation_translation();
                assert!(source_rotation.dot(target_rotation).abs() > 1.0 - 1e-6, "joint {joint} at {time}");
            }
            let bone = target_posed[1].w_axis.truncate().distance(target_posed[0].w_axis.truncate());
            assert!((bone - 1.0).abs() < 1e-5, "the target's bone length");
        }
    }

    #[test]
    fn the_same_skeleton_takes_the_keys_unchanged_and_nothing_matched_is_an_error() {
        let source = skeleton(1.0, Mat4::IDENTITY);
        let keys = [Vec4::new(0.0, 1.0, 0.0, 0.0), Vec4::new(0.0, 2.0, 0.0, 0.0)];
        let animation = Animation {
            name: "stretch".into(),
            duration: 1.0,
            frame_rate: None,
            channels: vec![channel(1, Property::Translation, &keys)],
            file_key_bytes: 0,
            source: None,
            weights: Vec::new(),
            compressed: None,
            motion: None,
        };
        let retargeted = retarget(&source, std::slice::from_ref(&animation), &source, Quat::IDENTITY).expect("names match");
        assert_eq!(retargeted.animations[0].channels, animation.channels);
        assert!(retargeted.missing_in_source.is_empty() && retargeted.missing_in_target.is_empty());
        let mut other = source.clone();
        for joint in &mut other.joints {
            joint.name = format!("{}_x", joint.name);
        }
        assert!(retarget(&source, &[animation], &other, Quat::IDENTITY).is_err());
    }
}
