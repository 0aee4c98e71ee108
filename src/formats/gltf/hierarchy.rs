//! The node tree: parents, global transforms, and the budgeted walks from a joint up to its
//! parent joint.

use super::error;
use crate::anim::JointPose;
use crate::formats::FormatError;
use glam::{Mat4, Quat, Vec3, Vec4};
use gltf::Document;
use std::cell::Cell;
use std::path::Path;

// Node hierarchy
// ---------------------------------------------------------------------------------------------

pub(super) struct Hierarchy {
    pub(super) parents: Vec<Option<usize>>,
    pub(super) children: Vec<Vec<usize>>,
    /// Every node, parents before children.
    pub(super) order: Vec<usize>,
    pub(super) depth: Vec<usize>,
    /// Each node's local transform at rest, exactly as given (a matrix may shear).
    pub(super) rest_local: Vec<Mat4>,
    /// The same as translation, rotation and scale, whose parts animation channels replace.
    pub(super) rest_trs: Vec<JointPose>,
    pub(super) rest_global: Vec<Mat4>,
    pub(super) has_matrix: Vec<bool>,
    pub(super) names: Vec<String>,
    /// Steps left for the walks from a joint up to its parent joint (see `climb`).
    pub(super) climb_budget: Cell<u64>,
}

/// Steps that the walks from each joint up through non-joint nodes to its parent joint may take in
/// all, in one load. Real rigs have a few nodes between joints (a few steps a joint); a file that
/// hangs 32,768 joints under a 32,768-node chain would take 10⁹ steps (each a matrix product in
/// `set_local_frames`): 16.7 s on this machine for a 1.8 MB file. The budget (about a second of
/// work) keeps a load's time in proportion to the file, and the error says why.
pub(super) const CLIMB_STEPS: u64 = 1 << 24;

impl Hierarchy {
    /// One step up from `node`: its parent, or an error once the load's walks have taken
    /// `CLIMB_STEPS` steps.
    pub(super) fn climb(&self, node: usize) -> Result<Option<usize>, String> {
        let left = self.climb_budget.get();
        if left == 0 {
            return Err(format!(
                "expected joints at most a few nodes below their parent joints: walking up from the joints took \
                 more than {CLIMB_STEPS} steps (nodes between joints × joints)"
            ));
        }
        self.climb_budget.set(left - 1);
        Ok(self.parents.get(node).copied().flatten())
    }

    pub(super) fn build(document: &Document, path: &Path) -> Result<Hierarchy, FormatError> {
        let count = document.nodes().len();
        let mut parents: Vec<Option<usize>> = vec![None; count];
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); count];
        for node in document.nodes() {
            let index = node.index();
            // Validation put every child index in range; a tree is checked here.
            for child in node.children().map(|child| child.index()) {
                if child == index {
                    return Err(error(path, format!("node {index} lists itself as a child: expected a tree")));
                }
                if let Some(other) = parents[child] {
                    return Err(error(
                        path,
                        format!("node {child} is a child of both node {other} and node {index}: expected a tree"),
                    ));
                }
                parents[child] = Some(index);
                children[index].push(child);
            }
        }

        let mut order = Vec::with_capacity(count);
        let mut depth = vec![0usize; count];
        let mut stack: Vec<(usize, usize)> =
            parents.iter().enumerate().rev().filter(|(_, parent)| parent.is_none()).map(|(index, _)| (index, 0)).collect();
        while let Some((node, node_depth)) = stack.pop() {
            order.push(node);
            if let Some(slot) = depth.get_mut(node) {
                *slot = node_depth;
            }
            stack.extend(children.get(node).into_iter().flatten().rev().map(|&child| (child, node_depth + 1)));
        }
        if order.len() < count {
            // With one parent each, nodes not reached from a root are on a cycle.
            let mut reached = vec![false; count];
            for &node in &order {
                if let Some(slot) = reached.get_mut(node) {
                    *slot = true;
                }
            }
            let stuck = reached.iter().position(|&reached| !reached).unwrap_or(0);
            return Err(error(path, format!("node {stuck} is on a cycle of children: expected a tree")));
        }

        let mut rest_local = Vec::with_capacity(count);
        let mut rest_trs = Vec::with_capacity(count);
        let mut has_matrix = Vec::with_capacity(count);
        let mut names = Vec::with_capacity(count);
        for (index, node) in document.as_json().nodes.iter().enumerate() {
            let name = node.name.clone().unwrap_or_else(|| format!("node_{index}"));
            let (local, trs) =
                node_transform(node).map_err(|part| error(path, format!("node {index} (\"{name}\"): expected {part}")))?;
            rest_local.push(local);
            rest_trs.push(trs);
            has_matrix.push(node.matrix.is_some());
            names.push(name);
        }
        let mut rest_global = rest_local.clone();
        for &node in &order {
            let parent = parents.get(node).copied().flatten().and_then(|parent| rest_global.get(parent)).copied();
            if let (Some(parent), Some(slot)) = (parent, rest_global.get_mut(node)) {
                *slot = parent * *slot;
            }
        }
        Ok(Hierarchy {
            parents,
            children,
            order,
            depth,
            rest_local,
            rest_trs,
            rest_global,
            has_matrix,
            names,
            climb_budget: Cell::new(CLIMB_STEPS),
        })
    }

    pub(super) fn name(&self, node: usize) -> &str {
        self.names.get(node).map_or("", String::as_str)
    }
}

/// A node's local matrix and its translation/rotation/scale; the error finishes "expected ...".
pub(super) fn node_transform(node: &gltf::json::Node) -> Result<(Mat4, JointPose), String> {
    if let Some(matrix) = node.matrix {
        if !matrix.iter().all(|value| value.is_finite()) {
            return Err("finite numbers in its matrix".to_string());
        }
        let local = Mat4::from_cols_array(&matrix);
        // Used only if the node is animated, which the spec forbids for a node with a matrix.
        return Ok((local, pose_from_matrix(local)));
    }
    let translation = Vec3::from_array(node.translation.unwrap_or([0.0; 3]));
    let scale = Vec3::from_array(node.scale.unwrap_or([1.0; 3]));
    let rotation = Vec4::from_array(node.rotation.map_or([0.0, 0.0, 0.0, 1.0], |rotation| rotation.0));
    if !(translation.is_finite() && scale.is_finite()) {
        return Err("a finite translation and scale".to_string());
    }
    let Some(rotation) = rotation.try_normalize() else {
        return Err(format!("a unit quaternion rotation, found {:?}", rotation.to_array()));
    };
    let pose = JointPose { rotation: Quat::from_vec4(rotation), translation, scale };
    Ok((pose.to_mat4(), pose))
}

/// A model-space matrix as a pose; a degenerate one (zero scale) keeps a valid rotation.
pub(super) fn pose_from_matrix(matrix: Mat4) -> JointPose {
    let (scale, rotation, translation) = matrix.to_scale_rotation_translation();
    let rotation = Vec4::from(rotation).try_normalize().map_or(Quat::IDENTITY, Quat::from_vec4);
    JointPose { rotation, translation, scale }
}

// ---------------------------------------------------------------------------------------------
