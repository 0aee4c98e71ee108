//! Skins: every skin's joints parents first, its bind shape, and the nodes drawn.

use super::builder::{invertible, Builder, SkinBinding};
use super::{error, BIND_SHAPE_TOLERANCE, FLOAT};
use crate::anim::{Joint, JointPose};
use crate::formats::FormatError;
use ahash::AHashMap as HashMap;
use glam::Mat4;

impl<'a> Builder<'a> {
    /// Every skin's joints, each skin's parents first. A joint's parent is its nearest ancestor
    /// node that is a joint of the same skin; a node in two skins is two joints.
    pub(super) fn add_skins(&mut self) -> Result<(), FormatError> {
        let (hierarchy, path) = (self.hierarchy, self.path());
        for skin in self.data.document.skins() {
            let skin_index = skin.index();
            let nodes: Vec<usize> = skin.joints().map(|joint| joint.index()).collect();
            if nodes.is_empty() {
                return Err(error(path, format!("skin {skin_index}: expected at least one joint, found none")));
            }
            let mut position_of: HashMap<usize, usize> = HashMap::with_capacity(nodes.len());
            for (position, &node) in nodes.iter().enumerate() {
                if let Some(earlier) = position_of.insert(node, position) {
                    return Err(error(
                        path,
                        format!(
                            "skin {skin_index} lists node {node} twice (joints {earlier} and {position}): expected each once"
                        ),
                    ));
                }
            }
            let inverse_binds: Vec<Mat4> = match skin.inverse_bind_matrices() {
                Some(accessor) => {
                    let what = format!("inverseBindMatrices of skin {skin_index}");
                    let matrices = self.data.floats::<16>(&accessor, &what, FLOAT)?;
                    if matrices.len() < nodes.len() {
                        return Err(error(
                            path,
                            format!(
                                "accessor {} ({what}): expected {} matrices, one per joint, found {}",
                                accessor.index(),
                                nodes.len(),
                                matrices.len()
                            ),
                        ));
                    }
                    let matrices: Vec<Mat4> = matrices.iter().map(Mat4::from_cols_array).collect();
                    // The palette pass undoes a parent's inverse bind (render/model_buffers/mod.rs: joint_infos).
                    if let Some((index, matrix)) =
                        matrices.iter().enumerate().take(nodes.len()).find(|(_, matrix)| !invertible(matrix))
                    {
                        return Err(error(
                            path,
                            format!(
                                "accessor {} ({what}): matrix {index} has determinant {}; expected an invertible matrix \
                                 (the inverse of a joint's bind transform)",
                                accessor.index(),
                                matrix.determinant()
                            ),
                        ));
                    }
                    matrices
                }
                None => vec![Mat4::IDENTITY; nodes.len()],
            };

            let rest_palettes: Vec<Mat4> = nodes
                .iter()
                .zip(&inverse_binds)
                .map(|(&node, &inverse_bind)| hierarchy.rest_global.get(node).copied().unwrap_or(Mat4::IDENTITY) * inverse_bind)
                .collect();
            let bind_shape = match common_bind_shape(&rest_palettes) {
                Ok(shape) => shape,
                Err(()) => {
                    self.warnings.push(format!(
                        "skin {skin_index}: its inverse bind matrices do not match its rest pose: clips play as the file says, \
                         but with no clip its mesh shows as stored, not in the rest pose"
                    ));
                    None
                }
            };
            let undo_shape = bind_shape.map_or(Mat4::IDENTITY, |shape| shape.inverse());

            let mut positions: Vec<usize> = (0..nodes.len()).collect();
            // Ancestors are shallower, so sorting by depth puts every parent first.
            positions
                .sort_by_key(|&position| nodes.get(position).and_then(|&node| hierarchy.depth.get(node)).copied().unwrap_or(0));
            let mut skeleton_joints = vec![0u32; nodes.len()];
            for position in positions {
                let Some(&node) = nodes.get(position) else { continue };
                let climbed = |node| hierarchy.climb(node).map_err(|reason| error(path, format!("skin {skin_index}: {reason}")));
                let mut ancestor = climbed(node)?;
                let mut parent = None;
                while let Some(candidate) = ancestor {
                    if let Some(&ancestor_position) = position_of.get(&candidate) {
                        parent = skeleton_joints.get(ancestor_position).map(|&joint| joint as usize);
                        break;
                    }
                    ancestor = climbed(candidate)?;
                }
                let inverse_bind = inverse_binds.get(position).copied().unwrap_or(Mat4::IDENTITY) * undo_shape;
                let joint = self.push_joint(Joint::new(hierarchy.name(node), parent, inverse_bind, JointPose::IDENTITY), node)?;
                if let Some(slot) = skeleton_joints.get_mut(position) {
                    *slot = joint;
                }
            }
            self.skins.push(SkinBinding { skeleton_joints, bind_shape });
        }
        Ok(())
    }

    /// The nodes drawn: those of the default scene (or the first), or every node without scenes.
    pub(super) fn drawn_nodes(&self) -> Vec<bool> {
        let document = self.data.document;
        let count = document.nodes().len();
        let Some(scene) = document.default_scene().or_else(|| document.scenes().next()) else {
            return vec![true; count];
        };
        let mut drawn = vec![false; count];
        let mut stack: Vec<usize> = scene.nodes().map(|node| node.index()).collect();
        while let Some(node) = stack.pop() {
            match drawn.get_mut(node) {
                Some(slot) if !*slot => *slot = true,
                _ => continue,
            }
            stack.extend(self.hierarchy.children.get(node).into_iter().flatten().copied());
        }
        drawn
    }
}

/// The one transform that every rest palette (global rest × inverse bind) of a skin equals, when
/// there is one and it is not the identity; `Err(())` when they differ.
pub(super) fn common_bind_shape(rest_palettes: &[Mat4]) -> Result<Option<Mat4>, ()> {
    let Some(&first) = rest_palettes.first() else { return Ok(None) };
    let largest = first.to_cols_array().iter().fold(1.0f32, |largest, value| largest.max(value.abs()));
    let tolerance = BIND_SHAPE_TOLERANCE * largest;
    let near = |a: Mat4, b: Mat4| (a - b).to_cols_array().iter().all(|difference| difference.abs() <= tolerance);
    if !rest_palettes.iter().all(|&palette| near(palette, first)) {
        return Err(());
    }
    if near(first, Mat4::IDENTITY) || !first.determinant().is_normal() || !first.inverse().is_finite() {
        return Ok(None);
    }
    Ok(Some(first))
}
