//! The glTF loader's state as it builds the model: the skeleton so far, every skin's binding, the
//! primitives' vertices and parts, materials and images. `skins.rs`, `meshes.rs` and `rig.rs` add
//! to it, each in an `impl Builder` of its own; this file depends on none of them.

use super::accessors::Data;
use super::buffers::external_buffer_bytes;
use super::hierarchy::Hierarchy;
use super::{error, MAX_JOINTS};
use crate::anim::{Influence, Joint, Skeleton};
use crate::formats::{files, FormatError};
use crate::model::{FileMesh, Material, Mesh, MorphTarget, Texture, Vertex};
use ahash::AHashMap as HashMap;
use glam::Mat4;
use gltf::{Accessor, Primitive};
use std::path::Path;

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
}

/// Whether a matrix has a finite inverse (an inverse bind matrix must).
pub(super) fn invertible(matrix: &Mat4) -> bool {
    matrix.is_finite() && matrix.determinant().is_normal() && matrix.inverse().is_finite()
}
