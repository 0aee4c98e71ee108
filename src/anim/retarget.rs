//! Clips from one file played on another file's skeleton (`--anim FILE`): joints matched by name,
//! keys rewritten into the target's joint frames. Only keys change, never their times or
//! interpolation, so a retargeted clip is sampled on the GPU like any other.
//!
//! The rule, joint by matched joint (an unmatched target joint stays at its rest pose):
//! - **Rotation** keys become `A × key × B`. A joint's *frame* is its parent's rest pose in model
//!   space, then its `pre`. Where the joint rests turned alike in both files (within 45° in model
//!   space: the same axes, the rests at most a pose apart, as Blender's robot and FBX2glTF's differ
//!   by up to 9°), the local rotation is copied: `B = 1`, and `A` turns the source's `pre` into
//!   the target's, or for a *top* joint (no matched ancestor) the source's frame into the target's,
//!   so a Z-up file's clip stands up on a Y-up model. Where the rests differ more, the files gave
//!   the bone other axes (COLLADA2GLTF turned RiggedSimple's by 120°), and the turn from the rest
//!   in model space is carried instead: a joint the source turns by `Q` from its rest is turned by
//!   `Q` from the target's, with `A = frame(target)⁻¹ × frame(source)` and `B = source rest⁻¹ ×
//!   target rest` (rotations in model space); the source's rest then gives the target's.
//! - **Translation** keys are kept as motion: the source's offset from its rest, taken into model
//!   space through its parent's rest pose, scaled by the ratio of the two skeletons' heights, and
//!   added to the target's rest in the target's parent frame. So a joint whose translation does
//!   not move keeps the target's bone length, the hips' motion grows with the target's height, and
//!   a skeleton of the same proportions takes the keys unchanged. Units follow (a centimetre FBX's
//!   clip on a metre glTF).
//! - **Scale** keys are copied.

use std::collections::HashMap;

use glam::{Mat3, Mat4, Quat, Vec3, Vec4};

use super::{local_to_model, Aabb, Animation, Channel, JointPose, Property, Skeleton};

/// A joint name as compared: the part after the last namespace separator (`mixamorig:`,
/// `Armature|`), without a `Character1_` or `mixamorig_` prefix, lower case, without spaces,
/// underscores, hyphens and dots.
pub fn joint_key(name: &str) -> String {
    let last = name.rsplit([':', '|']).next().unwrap_or(name);
    let lower = last.to_lowercase();
    let mut rest = lower.as_str();
    for prefix in ["mixamorig", "character"] {
        if let Some(after) = rest.strip_prefix(prefix) {
            let after = after.trim_start_matches(|c: char| c.is_ascii_digit());
            if let Some(after) = after.strip_prefix(['_', ' ']).filter(|after| !after.is_empty()) {
                rest = after;
            }
        }
    }
    rest.chars().filter(|c| !matches!(c, ' ' | '_' | '-' | '.')).collect()
}

/// Clips rewritten for another skeleton, and what matched.
#[derive(Clone, Debug, PartialEq)]
pub struct Retargeted {
    /// Keyed on the target's joints.
    pub animations: Vec<Animation>,
    /// Source joints matched to a target joint.
    pub matched: usize,
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
        if !self.missing_in_target.is_empty() {
            line += &format!("; animated but not in the model: {}", list(&self.missing_in_target));
        }
        if !self.missing_in_source.is_empty() {
            line += &format!("; model joints left at rest: {}", list(&self.missing_in_source));
        }
        line
    }
}

/// `animations` (keyed on `source`'s joints) rewritten for `target`; an error when no joint name
/// matches. A source joint drives every target joint of its name (a glTF node in two skins is two
/// joints). Names left over are compared once more with a first word (`Skeleton_`, `Bip01 `) taken
/// off the other side's name, for exporters that prefix every joint with the rig's name.
pub fn retarget(source: &Skeleton, animations: &[Animation], target: &Skeleton) -> Result<Retargeted, String> {
    let map = match_joints(source, target);
    let matched = map.iter().filter(|targets| !targets.is_empty()).count();
    if matched == 0 {
        return Err("no joint name matches a joint of the model (names compared without namespaces and case)".into());
    }
    let mut animated = vec![false; source.len()];
    for channel in animations.iter().flat_map(|animation| &animation.channels) {
        if let Some(animated) = animated.get_mut(channel.joint) {
            *animated = true;
        }
    }
    let missing_in_target = source
        .joints
        .iter()
        .zip(&map)
        .zip(&animated)
        .filter(|((_, targets), &animated)| targets.is_empty() && animated)
        .map(|((joint, _), _)| joint.name.clone())
        .collect();
    let mut taken = vec![false; target.len()];
    for &index in map.iter().flatten() {
        taken[index] = true;
    }
    let missing_in_source =
        target.joints.iter().zip(&taken).filter(|(_, &taken)| !taken).map(|(joint, _)| joint.name.clone()).collect();

    let conversions = Conversions::new(source, target, &map);
    let animations = animations
        .iter()
        .map(|animation| Animation {
            channels: animation.channels.iter().flat_map(|channel| conversions.convert(channel)).collect(),
            ..animation.clone()
        })
        .collect();
    Ok(Retargeted { animations, matched, missing_in_target, missing_in_source })
}

/// Per source joint, the target joints it drives (see [`retarget`]). Where names repeat (an FBX
/// mesh node named as the bone it hangs from, a glTF node in two skins), a joint first takes those
/// whose parent has its parent's name too, then those of its name left over. Target joints wait in
/// buckets by name that are emptied as they are handed out, so each is looked at a bounded number
/// of times: linear, also for a file of a hundred thousand joints named alike.
fn match_joints(source: &Skeleton, target: &Skeleton) -> Vec<Vec<usize>> {
    let keys = |skeleton: &Skeleton| -> Vec<(String, String)> {
        let names: Vec<String> = skeleton.joints.iter().map(|joint| joint_key(&joint.name)).collect();
        let parent = |joint: &super::Joint| joint.parent.and_then(|parent| names.get(parent)).cloned().unwrap_or_default();
        skeleton.joints.iter().zip(&names).map(|(joint, name)| (name.clone(), parent(joint))).collect()
    };
    let (source_keys, target_keys) = (keys(source), keys(target));
    let mut taken = vec![false; target.len()];
    let mut map: Vec<Vec<usize>> = vec![Vec::new(); source.len()];
    // Unnamed joints (an exporter's helper nodes) match nothing.
    let named: Vec<usize> = (0..source.len()).filter(|&index| !source_keys[index].0.is_empty()).collect();
    let mut by_pair: HashMap<&(String, String), Vec<usize>> = HashMap::new();
    for (index, key) in target_keys.iter().enumerate() {
        by_pair.entry(key).or_default().push(index);
    }
    let mut sources_by_pair: Vec<(&(String, String), Vec<usize>)> = Vec::new();
    let mut group_of: HashMap<&(String, String), usize> = HashMap::new();
    for &index in &named {
        let group = *group_of.entry(&source_keys[index]).or_insert_with(|| {
            sources_by_pair.push((&source_keys[index], Vec::new()));
            sources_by_pair.len() - 1
        });
        sources_by_pair[group].1.push(index);
    }
    for (pair, sources) in &sources_by_pair {
        if let Some(bucket) = by_pair.remove(pair) {
            share(sources, bucket, &mut taken, &mut map);
        }
    }
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for index in by_pair.into_values().flatten() {
        by_name.entry(target_keys[index].0.as_str()).or_default().push(index);
    }
    let mut sources_by_name: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut name_group: HashMap<&str, usize> = HashMap::new();
    for &index in named.iter().filter(|&&index| map[index].is_empty()) {
        let name = source_keys[index].0.as_str();
        let group = *name_group.entry(name).or_insert_with(|| {
            sources_by_name.push((name, Vec::new()));
            sources_by_name.len() - 1
        });
        sources_by_name[group].1.push(index);
    }
    for (name, sources) in &sources_by_name {
        if let Some(bucket) = by_name.remove(name) {
            share(sources, bucket, &mut taken, &mut map);
        }
    }
    // The last look, at what is left: one side's names without the rig's name in front.
    let (source_prefix, target_prefix) = (rig_prefix(source), rig_prefix(target));
    let mut by_shorter: HashMap<String, Vec<usize>> = HashMap::new();
    if let Some(prefix) = target_prefix.as_deref() {
        for index in by_name.values().flatten() {
            if let Some(shorter) = without_prefix(&target.joints[*index].name, prefix) {
                by_shorter.entry(shorter).or_default().push(*index);
            }
        }
    }
    for &index in &named {
        if map[index].is_empty() {
            if let Some(bucket) = by_shorter.remove(&source_keys[index].0) {
                share(&[index], bucket, &mut taken, &mut map);
            }
            let shorter = source_prefix.as_deref().and_then(|prefix| without_prefix(&source.joints[index].name, prefix));
            if let Some(shorter) = shorter.filter(|_| map[index].is_empty()) {
                if let Some(bucket) = by_name.remove(shorter.as_str()) {
                    share(&[index], bucket, &mut taken, &mut map);
                }
            }
        }
    }
    map
}

/// A bucket of target joints shared among the source joints of one name: one source joint takes
/// them all (a glTF node in two skins is two joints, both driven); several take them in turn, in
/// order (the same file's two skins, or a chain of joints named alike, pair up one to one).
fn share(sources: &[usize], bucket: Vec<usize>, taken: &mut [bool], map: &mut [Vec<usize>]) {
    let free = bucket.into_iter().filter(|&index| !taken[index]);
    for (turn, index) in free.collect::<Vec<_>>().into_iter().enumerate() {
        taken[index] = true;
        map[sources[turn % sources.len()]].push(index);
    }
}

/// The first word (before `_` or a space) that more than half of a skeleton's joint names start
/// with: the rig's name an exporter put in front of every joint (`Skeleton_torso_joint_1`).
fn rig_prefix(skeleton: &Skeleton) -> Option<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for joint in &skeleton.joints {
        if let Some((word, _)) = joint.name.split_once(['_', ' ']) {
            *counts.entry(word).or_default() += 1;
        }
    }
    counts.into_iter().filter(|&(_, count)| count * 2 > skeleton.len()).map(|(word, _)| word.to_string()).next()
}

/// A name's key without `prefix` and its separator in front, when it has them.
fn without_prefix(name: &str, prefix: &str) -> Option<String> {
    let rest = name.strip_prefix(prefix)?.strip_prefix(['_', ' '])?;
    Some(joint_key(rest)).filter(|key| !key.is_empty())
}

/// How far apart (radians, in model space) two joints' rests may turn and still count as one set of
/// axes: their local rotations are then copied (see the module's rule).
const SAME_AXES: f32 = std::f32::consts::FRAC_PI_4;

/// Per source joint, how its keys become each target joint's it drives.
struct Conversions {
    joints: Vec<Vec<JointConversion>>,
}

struct JointConversion {
    target: usize,
    /// A rotation key becomes `left × key × right`.
    left: Quat,
    right: Quat,
    /// `None` where the frames cannot be inverted: the translation keys are dropped.
    translation: Option<TranslationRule>,
}

/// `target rest + linear × (key − source rest)`.
struct TranslationRule {
    linear: Mat3,
    source_rest: Vec3,
    target_rest: Vec3,
}

impl Conversions {
    fn new(source: &Skeleton, target: &Skeleton, map: &[Vec<usize>]) -> Conversions {
        let rest_models = |skeleton: &Skeleton| {
            let poses: Vec<JointPose> = skeleton.joints.iter().map(|joint| joint.rest).collect();
            let mut models = vec![Mat4::IDENTITY; skeleton.len()];
            local_to_model(skeleton, &poses, Mat4::IDENTITY, &mut models);
            models
        };
        let (source_models, target_models) = (rest_models(source), rest_models(target));
        // Heights over the matched joints alone: helper and mesh nodes elsewhere do not count.
        let pairs = || map.iter().enumerate().flat_map(|(source, targets)| targets.iter().map(move |&target| (source, target)));
        let height = |points: &mut dyn Iterator<Item = Vec3>| Aabb::from_points(points).extent();
        let source_height = height(&mut pairs().map(|(source, _)| source_models[source].w_axis.truncate()));
        let target_height = height(&mut pairs().map(|(_, target)| target_models[target].w_axis.truncate()));
        let ratio = if source_height > 1e-6 && target_height > 1e-6 { target_height / source_height } else { 1.0 };

        // Whether a joint has a matched ancestor, parents first (joints are stored that way).
        let mut matched_above = vec![false; source.len()];
        for (index, joint) in source.joints.iter().enumerate() {
            if let Some(parent) = joint.parent.filter(|&parent| parent < index) {
                matched_above[index] = matched_above[parent] || !map[parent].is_empty();
            }
        }
        let joints = source
            .joints
            .iter()
            .enumerate()
            .map(|(index, joint)| {
                let top = !matched_above[index];
                map[index]
                    .iter()
                    .map(|&target_index| {
                        let target_joint = &target.joints[target_index];
                        // The frame a joint's keys are in: its parent's rest pose in model space,
                        // then its `pre`.
                        let frame = |models: &[Mat4], joint: &super::Joint| {
                            joint.parent.and_then(|parent| models.get(parent)).copied().unwrap_or(Mat4::IDENTITY) * joint.pre
                        };
                        let (source_frame, target_frame) = (frame(&source_models, joint), frame(&target_models, target_joint));
                        let across_frames = rotation_of(target_frame).inverse() * rotation_of(source_frame);
                        let (source_rest, target_rest) =
                            (rotation_of(source_models[index]), rotation_of(target_models[target_index]));
                        let (left, right) = if source_rest.angle_between(target_rest) <= SAME_AXES {
                            let across_pre = rotation_of(target_joint.pre).inverse() * rotation_of(joint.pre);
                            (if top { across_frames } else { across_pre }, Quat::IDENTITY)
                        } else {
                            (across_frames, source_rest.inverse() * target_rest)
                        };
                        let (left, right) = (left.normalize(), right.normalize());
                        let linear = Mat3::from_mat4(target_frame.inverse()) * ratio * Mat3::from_mat4(source_frame);
                        let translation = linear.is_finite().then_some(TranslationRule {
                            linear,
                            source_rest: joint.rest.translation,
                            target_rest: target_joint.rest.translation,
                        });
                        JointConversion { target: target_index, left, right, translation }
                    })
                    .collect()
            })
            .collect();
        Conversions { joints }
    }

    /// The channel for each target joint its joint drives, its keys rewritten (none for a
    /// translation whose keys are dropped).
    fn convert<'a>(&'a self, channel: &'a Channel) -> impl Iterator<Item = Channel> + 'a {
        self.joints.get(channel.joint).into_iter().flatten().filter_map(|conversion| conversion.convert(channel))
    }
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
    use crate::anim::{Interpolation, Joint, KeyTimes};

    #[test]
    fn repeated_names_go_by_their_parents_then_in_turn() {
        let joint = |name: &str, parent| Joint::new(name, parent, Mat4::IDENTITY, JointPose::IDENTITY);
        // A chain of joints all named alike pairs up one to one.
        let chain = Skeleton { joints: vec![joint("j", None), joint("j", Some(0)), joint("j", Some(1)), joint("j", Some(2))] };
        assert_eq!(match_joints(&chain, &chain), vec![vec![0], vec![1], vec![2], vec![3]]);
        // One source joint drives both of the target's (a glTF node in two skins).
        let one = Skeleton { joints: vec![joint("Hips", None)] };
        let two = Skeleton { joints: vec![joint("Hips", None), joint("Hips", None)] };
        assert_eq!(match_joints(&one, &two), vec![vec![0, 1]]);
        // A mesh node named as a bone, under another parent, leaves the bone to the bone.
        let source = Skeleton {
            joints: vec![joint("Body", None), joint("Torso", Some(0)), joint("Abdomen", Some(0)), joint("Torso", Some(2))],
        };
        let target = Skeleton { joints: vec![joint("Body", None), joint("Abdomen", Some(0)), joint("Torso", Some(1))] };
        assert_eq!(match_joints(&source, &target), vec![vec![0], vec![], vec![1], vec![2]]);
    }

    #[test]
    fn names_match_across_namespaces_and_case() {
        assert_eq!(joint_key("mixamorig:LeftArm"), "leftarm");
        assert_eq!(joint_key("mixamorig1:LeftArm"), "leftarm");
        assert_eq!(joint_key("mixamorig_LeftArm"), "leftarm");
        assert_eq!(joint_key("Armature|Left_Arm"), "leftarm");
        assert_eq!(joint_key("Character1_LeftArm"), "leftarm");
        assert_eq!(joint_key("left arm"), "leftarm");
        assert_eq!(joint_key("Character"), "character", "a prefix alone is the name");
        assert_ne!(joint_key("LeftArm"), joint_key("RightArm"));
    }

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
        let mut poses = vec![JointPose::IDENTITY; skeleton.len()];
        animation.sample(skeleton, time, &mut poses);
        let mut models = vec![Mat4::IDENTITY; skeleton.len()];
        local_to_model(skeleton, &poses, Mat4::IDENTITY, &mut models);
        models
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
        };
        let retargeted = retarget(&source, std::slice::from_ref(&animation), &target).expect("names match");
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
        };
        let retargeted = retarget(&source, std::slice::from_ref(&animation), &source).expect("names match");
        assert_eq!(retargeted.animations[0].channels, animation.channels);
        assert!(retargeted.missing_in_source.is_empty() && retargeted.missing_in_target.is_empty());
        let mut other = source.clone();
        for joint in &mut other.joints {
            joint.name = format!("{}_x", joint.name);
        }
        assert!(retarget(&source, &[animation], &other).is_err());
    }
}
