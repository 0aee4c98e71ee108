//! Where a model's joints and vertices were in its file, and the file's units and axes: what
//! `inspect --pose` reports in.

use super::Model;

/// Where a model's joints and vertices are in its file, and the file's own units and axes: what
/// `inspect --pose` reports in, so other tools can hold vkskin's evaluation against their own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileLayout {
    /// Model space from the file's units and axes (the identity for glTF and Milkshape, which are
    /// Y-up like vkskin).
    pub to_model: glam::Mat4,
    /// The skeleton's joints in the file's order, as indices into it; empty: the skeleton's order
    /// is the file's.
    pub joint_order: Vec<u32>,
    /// The file's meshes in its order, each with its vertices in the file's order; empty (a model
    /// built in code): the model's meshes stand in, their vertices in the order their triangles
    /// first use them.
    pub meshes: Vec<FileMesh>,
    /// The joints that are the file's mesh nodes, not bones (FBX makes every node a joint, glTF a
    /// rigid mesh's node one): a rigid part or a skinned mesh's own node, which `inspect` lists
    /// apart and a carried clip does not report as left at rest. Sorted.
    pub mesh_nodes: Vec<usize>,
}

/// One mesh of a file and where its vertices went.
#[derive(Clone, Debug, PartialEq)]
pub struct FileMesh {
    pub name: String,
    /// Per vertex of the file, in its order, the model vertex it became (the first, where normals
    /// or UVs split it); `None` for one no triangle uses, which the model does not keep.
    pub vertices: Vec<Option<u32>>,
}

impl FileMesh {
    /// A file mesh from the point (control point, position) each of its vertices was made from:
    /// vertex `first_vertex + i` came from point `points[i]`, and each of the `point_count` points
    /// maps to the first vertex made from it.
    pub fn first_uses(name: String, point_count: usize, first_vertex: u32, points: &[u32]) -> FileMesh {
        let mut vertices: Vec<Option<u32>> = vec![None; point_count];
        for (offset, &point) in points.iter().enumerate() {
            if let Some(first) = vertices.get_mut(point as usize).filter(|first| first.is_none()) {
                *first = Some(first_vertex + offset as u32);
            }
        }
        FileMesh { name, vertices }
    }
}

impl FileLayout {
    /// The vertices renumbered (`new_index[old]`), after the levels of detail reorder them.
    pub fn renumber_vertices(&mut self, new_index: &[u32]) {
        for vertex in self.meshes.iter_mut().flat_map(|mesh| mesh.vertices.iter_mut()).flatten() {
            *vertex = new_index.get(*vertex as usize).copied().unwrap_or(*vertex);
        }
    }

    /// The joints in the file's order (indices into a skeleton of `joint_count`).
    pub fn joints(&self, joint_count: usize) -> Vec<usize> {
        if self.joint_order.len() == joint_count {
            self.joint_order.iter().map(|&joint| joint as usize).collect()
        } else {
            (0..joint_count).collect()
        }
    }
}

impl Model {
    /// The file's meshes with their vertices in its order ([`FileLayout::meshes`]), or, where the
    /// loader keeps none, each mesh's vertices in the order its triangles first use them.
    pub fn file_meshes(&self) -> Vec<FileMesh> {
        if !self.layout.meshes.is_empty() {
            return self.layout.meshes.clone();
        }
        self.meshes
            .iter()
            .map(|mesh| {
                let mut seen = std::collections::HashSet::new();
                let start = mesh.first_index as usize;
                let indices = self.indices.get(start..start + mesh.index_count as usize).unwrap_or(&[]);
                let vertices = indices.iter().filter(|&&index| seen.insert(index)).map(|&index| Some(index)).collect();
                FileMesh { name: mesh.name.clone(), vertices }
            })
            .collect()
    }
}
