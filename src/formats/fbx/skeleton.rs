//! FBX nodes as joints: every node but the scene root, parents first, each skin's clusters giving
//! their bones' inverse binds.

use ahash::AHashMap as HashMap;

use glam::Mat4;

use super::{matrix, quat, vec3};
use crate::anim::{Joint, JointPose};

/// The joints, and which joint each ufbx node became.
pub(super) struct Rig<'a> {
    /// The scene's nodes in joint order (parents first).
    pub nodes: Vec<&'a ufbx::Node>,
    pub joints: Vec<Joint>,
    /// A node's `typed_id` to its joint.
    pub joint_of: HashMap<u32, usize>,
    /// ufbx's conversion to Y-up metres (the scene root's transform): the top joints' `pre`.
    pub conversion: Mat4,
}

impl Rig<'_> {
    /// The joint a node became, if any.
    pub fn joint(&self, node: &ufbx::Node) -> Option<usize> {
        self.joint_of.get(&node.element.typed_id).copied()
    }
}

pub(super) fn read(scene: &ufbx::Scene) -> Rig<'_> {
    let mut nodes: Vec<&ufbx::Node> = scene.nodes.iter().map(|node| &**node).filter(|node| !node.is_root).collect();
    nodes.sort_by_key(|node| node.node_depth);
    let joint_of: HashMap<u32, usize> = nodes.iter().enumerate().map(|(index, node)| (node.element.typed_id, index)).collect();
    let conversion = matrix(&scene.root_node.node_to_world);
    let mut joints: Vec<Joint> = nodes
        .iter()
        .map(|node| {
            let parent = node.parent.as_ref().and_then(|parent| joint_of.get(&parent.element.typed_id).copied());
            let transform = &node.local_transform;
            // ufbx's unnamed helper below a Maya joint that compensates its parent's scale: named
            // after that joint, so helpers match between files (`--anim`) and show in `inspect`.
            let name = match (&node.parent, node.is_scale_helper) {
                (Some(parent), true) => format!("{} scale helper", parent.element.name),
                _ => node.element.name.to_string(),
            };
            Joint {
                name,
                parent,
                inverse_bind: matrix(&node.node_to_world).inverse(),
                rest: JointPose {
                    translation: vec3(transform.translation),
                    rotation: quat(transform.rotation),
                    scale: vec3(transform.scale),
                },
                pre: if parent.is_none() { conversion } else { Mat4::IDENTITY },
            }
        })
        .collect();
    // A skin's vertices go into model space by its first cluster's geometry-to-world (see
    // `meshes`), and each bone's inverse bind is the cluster's geometry-to-bone from there:
    // skinning then gives what ufbx's own evaluation gives even where the clusters disagree on
    // the geometry's bind pose (3ds Max's geometric transforms).
    for skin in scene.skin_deformers.iter() {
        let Some(first) = skin.clusters.iter().next() else { continue };
        let model_to_geometry = matrix(&first.geometry_to_world).inverse();
        for cluster in skin.clusters.iter() {
            if let Some(joint) = cluster.bone_node.as_ref().and_then(|bone| joint_of.get(&bone.element.typed_id)) {
                joints[*joint].inverse_bind = matrix(&cluster.geometry_to_bone) * model_to_geometry;
            }
        }
    }
    Rig { nodes, joints, joint_of, conversion }
}
