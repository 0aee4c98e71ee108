//! Skins: the builder's state, every skin's joints parents first, and the nodes drawn.

use super::accessors::Data;
use super::buffers::external_buffer_bytes;
use super::hierarchy::Hierarchy;
use super::meshes::common_bind_shape;
use super::rig::invertible;
use super::{error, FLOAT, MAX_JOINTS};
use crate::anim::{Influence, Joint, JointPose, Skeleton};
use crate::formats::{files, FormatError};
use crate::model::{FileMesh, Material, Mesh, MorphTarget, Texture, Vertex};
use glam::Mat4;
use gltf::{Accessor, Primitive};
use std::collections::HashMap;
use std::path::Path;

// Skins, meshes and materials
// ---------------------------------------------------------------------------------------------

/// A skin's joints in the skeleton.
pub(super) struct SkinBinding {
    /// The skeleton joint of each entry of the skin's `joints`.
    pub(super) skeleton_joints: Vec<u32>,
    /// The transform the skin's inverse bind matrices put its mesh through at rest, when it is one
    /// transform for all joints (often the Z-up-to-Y-up turn of an exporter): the skin's vertices
    /// are stored moved by it and its joints' inverse binds undo it, so `palette × vertex` is
    /// unchanged at every pose and the bind palette (identity) shows the rest pose.
    pub(super) bind_shape: Option<Mat4>,
}

impl SkinBinding {
    pub(super) fn first(&self) -> u32 {
        self.skeleton_joints.first().copied().unwrap_or(0)
    }
}

/// One primitive to add, and where it comes from.
pub(super) struct PrimitiveSource<'r> {
    pub(super) node: usize,
    pub(super) skin: Option<usize>,
    pub(super) primitive: Primitive<'r>,
    /// "mesh 0 "Body" primitive 1", for errors and warnings.
    pub(super) label: String,
    pub(super) mesh_name: String,
    /// The morph targets' names (the mesh's `extras.targetNames`, as exporters write them) and
    /// default weights (the node's `weights`, else the mesh's, else 0).
    pub(super) target_names: Vec<String>,
    pub(super) default_weights: Vec<f32>,
}

/// JOINTS_n and WEIGHTS_n of one set.
pub(super) struct JointSet<'a> {
    pub(super) joints: Vec<[u32; 4]>,
    pub(super) weights: Vec<[f32; 4]>,
    pub(super) accessor: Accessor<'a>,
    pub(super) set: u32,
}

pub(super) struct Builder<'a> {
    pub(super) data: &'a Data<'a>,
    pub(super) hierarchy: &'a Hierarchy,
    pub(super) base_dir: Option<&'a Path>,
    pub(super) skeleton: Skeleton,
    /// The node of each skeleton joint.
    pub(super) joint_nodes: Vec<usize>,
    pub(super) skins: Vec<SkinBinding>,
    /// Per node with a rigid mesh: its joint and the rest transform its vertices were moved by.
    pub(super) rigid_joints: HashMap<usize, (u32, Mat4)>,
    pub(super) vertices: Vec<Vertex>,
    pub(super) influences: Vec<Influence>,
    pub(super) indices: Vec<u32>,
    pub(super) meshes: Vec<Mesh>,
    /// Each primitive's vertices, in its accessors' order (`inspect --pose`).
    pub(super) file_meshes: Vec<FileMesh>,
    /// Every primitive's morph targets, and per target the node and the target's index in its
    /// mesh (what a `weights` channel addresses).
    pub(super) morph_targets: Vec<MorphTarget>,
    pub(super) morph_sources: Vec<(usize, usize)>,
    pub(super) materials: Vec<Material>,
    /// The model material of each glTF material used so far; `None` the default's.
    pub(super) material_map: HashMap<Option<usize>, usize>,
    /// Described images (decoded at upload), or why they could not be had.
    pub(super) images: HashMap<usize, Result<Texture, String>>,
    /// What external image files may still read: `files::MAX_EXTERNAL_BYTES` less the buffers.
    pub(super) external_left: u64,
    pub(super) warnings: Vec<String>,
    pub(super) max_influences: usize,
}

impl<'a> Builder<'a> {
    pub(super) fn new(
        data: &'a Data<'a>,
        hierarchy: &'a Hierarchy,
        base_dir: Option<&'a Path>,
        warnings: Vec<String>,
    ) -> Builder<'a> {
        Builder {
            data,
            hierarchy,
            base_dir,
            skeleton: Skeleton::default(),
            joint_nodes: Vec::new(),
            skins: Vec::new(),
            rigid_joints: HashMap::new(),
            vertices: Vec::new(),
            influences: Vec::new(),
            indices: Vec::new(),
            meshes: Vec::new(),
            file_meshes: Vec::new(),
            morph_targets: Vec::new(),
            morph_sources: Vec::new(),
            materials: Vec::new(),
            material_map: HashMap::new(),
            images: HashMap::new(),
            external_left: files::MAX_EXTERNAL_BYTES.saturating_sub(external_buffer_bytes(data.document)),
            warnings,
            max_influences: 0,
        }
    }

    pub(super) fn path(&self) -> &'a Path {
        self.data.path
    }

    pub(super) fn push_joint(&mut self, joint: Joint, node: usize) -> Result<u32, FormatError> {
        let index = self.skeleton.joints.len();
        if index >= MAX_JOINTS {
            return Err(error(
                self.path(),
                format!("expected at most {MAX_JOINTS} joints in all (skins and rigid meshes), found more"),
            ));
        }
        self.skeleton.joints.push(joint);
        self.joint_nodes.push(node);
        Ok(index as u32)
    }

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
                    // The palette pass undoes a parent's inverse bind (render/model_buffers.rs: joint_infos).
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
