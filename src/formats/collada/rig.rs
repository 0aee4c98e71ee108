//! The skeleton: which scene nodes are joints, each joint's parent and fixed `pre` transform, its
//! rest pose and inverse bind matrix.

use glam::Mat4;

use super::animation::NodeKeys;
use super::document::Document;
use super::instances::Instanced;
use super::scene::Scene;
use crate::anim::{Joint, JointPose, Skeleton};
use crate::formats::{files, FormatError};

/// The skeleton, and the joint each scene node became.
pub struct Rig {
    pub skeleton: Skeleton,
    /// Indexed by scene node; None for a node folded into a joint's `pre` transform.
    pub joint_of_node: Vec<Option<usize>>,
}

/// The skeleton of the joints the instances and the animations need, in the scene's order, bound
/// as the skins' inverse bind matrices say; `convert` is the asset conversion in front of the roots.
pub fn build(
    document: &Document<'_, '_>,
    scene: &Scene<'_, '_>,
    instanced: &Instanced<'_, '_>,
    keys: &[NodeKeys<'_, '_>],
    convert: Mat4,
) -> Result<Rig, FormatError> {
    let is_joint = choose_joints(document, scene, instanced, keys)?;
    let (mut rig, joint_nodes) = skeleton(scene, &is_joint, convert);
    // A skin's inverse bind matrices replace the rest-pose ones (they define the bind pose).
    let inverse_convert = convert.inverse();
    for instance in &instanced.instances {
        let Some(skin) = instance.skin.and_then(|skin| instanced.skins.get(skin)) else { continue };
        for (&node, inverse_bind) in instance.joint_nodes.iter().zip(&skin.inverse_binds) {
            if let Some(joint) = rig.joint_of_node[node] {
                rig.skeleton.joints[joint].inverse_bind = *inverse_bind * inverse_convert;
            }
        }
    }
    // Numbers past f32 on the way (a scale of 3e38 times 10, a singular node): refused at the node.
    if let Some((joint, &node)) = rig.skeleton.joints.iter().zip(&joint_nodes).find(|(joint, _)| {
        !joint.inverse_bind.is_finite() || !joint.rest.translation.is_finite() || !joint.rest.rotation.is_finite()
    }) {
        return Err(document.error(
            scene.nodes[node].element,
            format!(
                "joint {}: expected a finite bind pose, found numbers past f32 (its transforms, the unit or its inverse \
                 bind matrix too large, or a transform that cannot be inverted)",
                files::quoted(&joint.name)
            ),
        ));
    }
    Ok(rig)
}

/// Per scene node, whether it is a joint: what the instances draw with, and the animated nodes
/// whose motion must reach them.
fn choose_joints(
    document: &Document<'_, '_>,
    scene: &Scene<'_, '_>,
    instanced: &Instanced<'_, '_>,
    keys: &[NodeKeys<'_, '_>],
) -> Result<Vec<bool>, FormatError> {
    // The joints: skin joints by sid, id or name, and each rigid instance's node.
    let mut is_joint = vec![false; scene.nodes.len()];
    for instance in &instanced.instances {
        if instance.skin.is_some() {
            for &node in &instance.joint_nodes {
                is_joint[node] = true;
            }
        } else {
            is_joint[instance.node] = true;
        }
    }
    // An animated node above a joint becomes a joint too, so its motion reaches the joints below
    // (a fixed `pre` cannot carry it). Children come after their parents in the scene's order.
    let mut animated = vec![false; scene.nodes.len()];
    for node_keys in keys {
        animated[node_keys.node] = true;
    }
    // A scene of animated nodes and nothing to draw is a file of clips (`--anim`): its animated
    // nodes are the joints.
    if instanced.instances.is_empty() {
        if keys.is_empty() {
            return Err(document.error(
                document.xml.root_element(),
                "expected an <instance_controller> or <instance_geometry> in the scene, or animated nodes, found neither",
            ));
        }
        is_joint.clone_from(&animated);
    }
    let mut joint_below = vec![false; scene.nodes.len()];
    for index in (0..scene.nodes.len()).rev() {
        if animated[index] && joint_below[index] {
            is_joint[index] = true;
        }
        if let Some(parent) = scene.nodes[index].parent {
            joint_below[parent] |= is_joint[index] || joint_below[index];
        }
    }
    Ok(is_joint)
}

/// The joints in the scene's order, at their rest pose and bound where the scene puts them, and
/// the scene node of each joint.
fn skeleton(scene: &Scene<'_, '_>, is_joint: &[bool], convert: Mat4) -> (Rig, Vec<usize>) {
    // Parents first (the scene's order), each joint's nearest joint ancestor and the transform of
    // the nodes between, in one pass down the tree.
    let mut joint_of_node = vec![None; scene.nodes.len()];
    let mut above: Vec<(Option<usize>, Mat4)> = Vec::with_capacity(scene.nodes.len());
    let mut skeleton = Skeleton::default();
    let mut joint_nodes = Vec::new();
    for (index, node) in scene.nodes.iter().enumerate() {
        let (parent_joint, between) = match node.parent {
            None => (None, convert),
            Some(parent) => match joint_of_node[parent] {
                Some(joint) => (Some(joint), Mat4::IDENTITY),
                None => (above[parent].0, above[parent].1 * scene.nodes[parent].local),
            },
        };
        above.push((parent_joint, between));
        if is_joint[index] {
            let bind = convert * scene.global[index];
            let mut joint = Joint::new(node.name.clone(), parent_joint, bind.inverse(), JointPose::IDENTITY);
            let (scale, rotation, translation) = node.local.to_scale_rotation_translation();
            joint.rest = JointPose { rotation, translation, scale };
            joint.pre = between;
            joint_of_node[index] = Some(skeleton.joints.len());
            skeleton.joints.push(joint);
            joint_nodes.push(index);
        }
    }
    (Rig { skeleton, joint_of_node }, joint_nodes)
}
