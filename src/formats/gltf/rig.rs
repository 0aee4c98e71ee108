//! The rig: the curves evaluated directly on the node tree by the spec's formulas (the fidelity
//! tests' reference), and the joints' channels.

use super::builder::{invertible, Builder};
use super::curves::{Animation, Interpolation, Property};
use super::hierarchy::Hierarchy;
use super::{error, MAX_JOINTS};
use crate::anim;
use crate::anim::{Joint, JointPose, KeyTimes, Skeleton};
use crate::formats::FormatError;
use ahash::AHashMap as HashMap;
use glam::{Mat4, Vec4};

// Rig: direct evaluation, and baking
// ---------------------------------------------------------------------------------------------

/// The node hierarchy and animation curves behind a loaded model's skeleton and animations,
/// evaluated directly on the node tree by the spec's formulas. Animation `i` is the model's
/// animation `i`.
#[derive(Clone, Debug)]
pub struct Rig {
    parents: Vec<Option<usize>>,
    rest_local: Vec<Mat4>,
    rest_trs: Vec<JointPose>,
    /// The joint nodes and their ancestors, parents first: all a pose depends on.
    relevant: Vec<usize>,
    joint_nodes: Vec<usize>,
    animations: Vec<Animation>,
}

impl Rig {
    pub(super) fn new(hierarchy: &Hierarchy, joint_nodes: Vec<usize>, animations: Vec<Animation>) -> Rig {
        let mut marked = vec![false; hierarchy.parents.len()];
        for &node in &joint_nodes {
            let mut current = Some(node);
            while let Some(ancestor) = current {
                match marked.get_mut(ancestor) {
                    Some(mark) if !*mark => *mark = true,
                    _ => break,
                }
                current = hierarchy.parents.get(ancestor).copied().flatten();
            }
        }
        let relevant = hierarchy.order.iter().copied().filter(|&node| marked.get(node).copied().unwrap_or(false)).collect();
        Rig {
            parents: hierarchy.parents.clone(),
            rest_local: hierarchy.rest_local.clone(),
            rest_trs: hierarchy.rest_trs.clone(),
            relevant,
            joint_nodes,
            animations,
        }
    }

    /// The glTF node of each skeleton joint.
    pub fn joint_nodes(&self) -> &[usize] {
        &self.joint_nodes
    }

    pub fn animation_count(&self) -> usize {
        self.animations.len()
    }

    /// An animation's last key time, which is its clip's duration.
    pub fn duration(&self, animation: usize) -> Option<f32> {
        self.animations.get(animation).map(|animation| animation.duration)
    }

    /// A node's local translation, rotation and scale at `time` in an animation: its rest values
    /// with the animated ones replaced. An unknown animation or node gives the rest pose (identity).
    pub fn local_transform(&self, animation: usize, node: usize, time: f32) -> JointPose {
        let mut pose = self.rest_trs.get(node).copied().unwrap_or(JointPose::IDENTITY);
        for channel in self.animations.get(animation).into_iter().flat_map(|animation| &animation.channels) {
            if channel.node == node {
                channel.apply(time, &mut pose);
            }
        }
        pose
    }

    /// Every skeleton joint's model-space matrix at `time`, evaluated from the curves on the node
    /// tree. An unknown animation gives the rest pose.
    pub fn evaluate(&self, animation: usize, time: f32, out: &mut [Mat4]) {
        let mut animated: Vec<Option<JointPose>> = vec![None; self.parents.len()];
        for channel in self.animations.get(animation).into_iter().flat_map(|animation| &animation.channels) {
            let rest = self.rest_trs.get(channel.node).copied().unwrap_or(JointPose::IDENTITY);
            if let Some(slot) = animated.get_mut(channel.node) {
                channel.apply(time, slot.get_or_insert(rest));
            }
        }
        let mut global = vec![Mat4::IDENTITY; self.parents.len()];
        for &node in &self.relevant {
            let local = match animated.get(node).copied().flatten() {
                Some(pose) => pose.to_mat4(),
                None => self.rest_local.get(node).copied().unwrap_or(Mat4::IDENTITY),
            };
            let parent = self.parents.get(node).copied().flatten().and_then(|parent| global.get(parent)).copied();
            if let Some(slot) = global.get_mut(node) {
                *slot = parent.map_or(local, |parent| parent * local);
            }
        }
        for (matrix, &node) in out.iter_mut().zip(&self.joint_nodes) {
            *matrix = global.get(node).copied().unwrap_or(Mat4::IDENTITY);
        }
    }

    /// Every joint's model-space matrix with no animation: the file's rest pose. With the file's
    /// inverse bind matrices this places the mesh where the spec says it is at rest.
    pub fn rest_pose(&self, out: &mut [Mat4]) {
        self.evaluate(usize::MAX, 0.0, out);
    }
}

/// Which nodes some animation drives.
pub(super) fn animated_nodes(animations: &[Animation], node_count: usize) -> Vec<bool> {
    let mut animated = vec![false; node_count];
    for channel in animations.iter().flat_map(|animation| &animation.channels) {
        if let Some(slot) = animated.get_mut(channel.node) {
            *slot = true;
        }
    }
    animated
}

impl Animation {
    /// The curves as channels of the skeleton joints on their nodes (a node in two skins drives
    /// both joints); curves on other nodes move nothing a joint carries and are left out.
    pub(super) fn channels_for(&self, joint_nodes: &[usize]) -> anim::Animation {
        let mut joints_of: HashMap<usize, Vec<usize>> = HashMap::new();
        for (joint, &node) in joint_nodes.iter().enumerate() {
            joints_of.entry(node).or_default().push(joint);
        }
        let mut channels = Vec::new();
        for channel in &self.channels {
            for &joint in joints_of.get(&channel.node).into_iter().flatten() {
                let (property, mask, width) = match channel.property {
                    Property::Translation => (anim::Property::Translation, 0b0111, 3),
                    Property::Rotation => (anim::Property::Rotation, 0b1111, 4),
                    Property::Scale => (anim::Property::Scale, 0b0111, 3),
                };
                let interpolation = match channel.curve.interpolation {
                    Interpolation::Step => anim::Interpolation::Step,
                    Interpolation::Linear => anim::Interpolation::Linear,
                    Interpolation::CubicSpline => anim::Interpolation::CubicSpline,
                };
                channels.push(anim::Channel {
                    joint,
                    property,
                    interpolation,
                    times: KeyTimes::from_list(channel.curve.times.clone()),
                    mask,
                    base: Vec4::ZERO,
                    implied_w: false,
                    wraps: false,
                    values: channel.curve.values.iter().flat_map(|value| value.to_array()[..width].to_vec()).collect(),
                });
            }
        }
        anim::Animation {
            name: self.name.clone(),
            duration: self.duration,
            frame_rate: None,
            channels,
            file_key_bytes: self.file_key_bytes,
            source: None,
            weights: Vec::new(),
            compressed: None,
            motion: None,
        }
    }
}

/// Gives every joint its local frame: `rest` is its node's translation, rotation and scale (a
/// node given by a matrix that no curve drives goes whole into `pre` instead, shear and all), and
/// `pre` the rest transforms of the nodes between its parent joint's node and its own (every
/// ancestor, for a root). Those nodes are not animated: animated ones were made joints first.
pub(super) fn set_local_frames(
    skeleton: &mut Skeleton,
    joint_nodes: &[usize],
    hierarchy: &Hierarchy,
    animated: &[bool],
) -> Result<(), String> {
    let parent_nodes: Vec<Option<usize>> =
        skeleton.joints.iter().map(|joint| joint.parent.and_then(|parent| joint_nodes.get(parent).copied())).collect();
    for ((joint, &node), stop) in skeleton.joints.iter_mut().zip(joint_nodes).zip(parent_nodes) {
        let mut pre = Mat4::IDENTITY;
        let mut ancestor = hierarchy.climb(node)?;
        while let Some(current) = ancestor.filter(|&current| Some(current) != stop) {
            pre = hierarchy.rest_local.get(current).copied().unwrap_or(Mat4::IDENTITY) * pre;
            ancestor = hierarchy.climb(current)?;
        }
        let fixed_matrix =
            hierarchy.has_matrix.get(node).copied().unwrap_or(false) && !animated.get(node).copied().unwrap_or(false);
        if fixed_matrix {
            joint.pre = pre * hierarchy.rest_local.get(node).copied().unwrap_or(Mat4::IDENTITY);
            joint.rest = JointPose::IDENTITY;
        } else {
            joint.pre = pre;
            joint.rest = hierarchy.rest_trs.get(node).copied().unwrap_or(JointPose::IDENTITY);
        }
    }
    Ok(())
}

impl Builder<'_> {
    /// A file of clips without skins or meshes: every animated node is a joint, bound at its rest
    /// pose ([`Builder::promote_animated_ancestors`] then links them parents first).
    pub(super) fn add_animated_nodes(&mut self, animated: &[bool]) -> Result<(), FormatError> {
        let hierarchy = self.hierarchy;
        for node in (0..animated.len()).filter(|&node| animated[node]) {
            let global = hierarchy.rest_global.get(node).copied().unwrap_or(Mat4::IDENTITY);
            let inverse_bind = if invertible(&global) { global.inverse() } else { Mat4::IDENTITY };
            self.push_joint(Joint::new(hierarchy.name(node), None, inverse_bind, JointPose::IDENTITY), node)?;
        }
        Ok(())
    }

    /// Makes every animated node between a joint and its parent joint (or above a root joint) a
    /// joint of its own, so its motion reaches the joints below: a fixed `pre` cannot carry it.
    /// Joints stay parents first; influences are renumbered. Joints under the same parent joint
    /// share the promoted joint of a node they both hang from.
    pub(super) fn promote_animated_ancestors(&mut self, animated: &[bool]) -> Result<(), FormatError> {
        let hierarchy = self.hierarchy;
        let count = self.skeleton.len();
        // The first joint on each node: an animated ancestor that is one already is reused.
        let mut joint_of: HashMap<usize, usize> = HashMap::new();
        for (index, &node) in self.joint_nodes.iter().enumerate() {
            joint_of.entry(node).or_insert(index);
        }
        // Per joint, its animated in-between nodes (nearest first) and the joint it hangs from.
        let mut chains: Vec<(Vec<usize>, Option<usize>)> = Vec::with_capacity(count);
        for (index, joint) in self.skeleton.joints.iter().enumerate() {
            let stop = joint.parent.and_then(|parent| self.joint_nodes.get(parent).copied());
            let climbed = |node| hierarchy.climb(node).map_err(|reason| error(self.data.path, reason));
            let mut ancestor = match self.joint_nodes.get(index) {
                Some(&node) => climbed(node)?,
                None => None,
            };
            let (mut chain, mut top) = (Vec::new(), joint.parent);
            while let Some(current) = ancestor.filter(|&current| Some(current) != stop) {
                if animated.get(current).copied().unwrap_or(false) {
                    if let Some(&existing) = joint_of.get(&current) {
                        top = Some(existing);
                        break;
                    }
                    chain.push(current);
                }
                ancestor = climbed(current)?;
            }
            chains.push((chain, top));
        }
        if chains.iter().zip(&self.skeleton.joints).all(|((chain, top), joint)| chain.is_empty() && *top == joint.parent) {
            return Ok(());
        }
        // New joints (after the old ones, for now): one per (parent joint, node).
        let mut joints = self.skeleton.joints.clone();
        let mut nodes = self.joint_nodes.clone();
        let mut promoted: HashMap<(Option<usize>, usize), usize> = HashMap::new();
        for (index, (chain, top_parent)) in chains.iter().enumerate() {
            let mut parent = *top_parent;
            for &node in chain.iter().rev() {
                let next = *promoted.entry((*top_parent, node)).or_insert_with(|| {
                    let global = hierarchy.rest_global.get(node).copied().unwrap_or(Mat4::IDENTITY);
                    let inverse = global.inverse();
                    let inverse_bind = if inverse.is_finite() { inverse } else { Mat4::IDENTITY };
                    joints.push(Joint::new(hierarchy.name(node), parent, inverse_bind, JointPose::IDENTITY));
                    nodes.push(node);
                    joints.len() - 1
                });
                parent = Some(next);
            }
            joints[index].parent = parent;
        }
        if joints.len() == count
            && joints.iter().enumerate().all(|(index, joint)| joint.parent.is_none_or(|parent| parent < index))
        {
            self.skeleton.joints = joints; // still parents first: nothing to renumber
            return Ok(());
        }
        if joints.len() > MAX_JOINTS {
            return Err(error(
                self.path(),
                format!(
                    "expected at most {MAX_JOINTS} joints in all (skins, rigid meshes and animated nodes above them), found more"
                ),
            ));
        }
        // Parents first again: a pre-order walk from the roots.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); joints.len()];
        let mut order = Vec::with_capacity(joints.len());
        let mut stack = Vec::new();
        for (index, joint) in joints.iter().enumerate().rev() {
            match joint.parent {
                Some(parent) => children[parent].push(index),
                None => stack.push(index),
            }
        }
        while let Some(index) = stack.pop() {
            order.push(index);
            stack.extend(children[index].iter().copied());
        }
        let mut new_index = vec![0u32; joints.len()];
        for (position, &old) in order.iter().enumerate() {
            new_index[old] = position as u32;
        }
        self.skeleton.joints = order
            .iter()
            .map(|&old| {
                let mut joint = joints[old].clone();
                joint.parent = joint.parent.map(|parent| new_index[parent] as usize);
                joint
            })
            .collect();
        self.joint_nodes = order.iter().map(|&old| nodes[old]).collect();
        for influence in &mut self.influences {
            influence.joint = new_index.get(influence.joint as usize).copied().unwrap_or(influence.joint);
        }
        Ok(())
    }
}
