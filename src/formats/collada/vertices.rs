//! Vertices and parts: each instance's geometry in model space, with its influences, its morph
//! targets and its parts' materials, into the [`Model`](crate::model::Model)'s buffers.

use ahash::AHashMap as HashMap;
use std::path::Path;

use glam::{Mat3, Mat4, Vec3};
use roxmltree::NodeId;

use super::document::Document;
use super::geometry::{self, MeshData};
use super::instances::{Instance, Instanced};
use super::material;
use super::rig::Rig;
use super::scene::Scene;
use crate::anim::Influence;
use crate::formats::{files, texture, FormatError};
use crate::model::{compute_normals, compute_tangents, normalize_influences, FileMesh, Material, Mesh, MorphTarget, Vertex};

/// Vertices, and triangles, that instances may add by drawing a geometry another instance already
/// draws: this many, plus one a [`BYTES_PER_REPEATED`] bytes of the file. A geometry's first
/// instance costs what the file holds; this leaves room for drawing props or parts again many
/// times over, while a file that repeats an instance thousands of times cannot ask for gigabytes.
const MAX_REPEATED_ALLOWANCE: usize = 1 << 18;
const BYTES_PER_REPEATED: usize = 16;

/// What the instances draw, in the model's buffers.
#[derive(Default)]
pub struct Drawing {
    pub vertices: Vec<Vertex>,
    pub influences: Vec<Influence>,
    pub indices: Vec<u32>,
    pub meshes: Vec<Mesh>,
    pub materials: Vec<Material>,
    pub morph_targets: Vec<MorphTarget>,
    /// One an instance: its geometry's POSITION source and the vertices split from it.
    pub file_meshes: Vec<FileMesh>,
    pub max_influences: usize,
}

/// What drawing the instances reads, and what it has made so far.
struct Drawer<'l, 'a, 'input> {
    document: &'l Document<'a, 'input>,
    scene: &'l Scene<'a, 'input>,
    instanced: &'l Instanced<'a, 'input>,
    rig: &'l Rig,
    folder: &'l Path,
    warnings: &'l mut Vec<String>,
    /// The most vertices the morph targets may move in all (the repeated instances' limit too).
    limit: usize,
    textures: texture::Library,
    material_index: HashMap<Option<NodeId>, usize>,
    // Morph targets' geometries, each read once; and the offsets they add, in proportion to the file.
    targets_read: HashMap<NodeId, MeshData>,
    morph_offsets: usize,
    needs_normals: bool,
    drawing: Drawing,
}

/// Every instance's vertices, morph targets and parts, in the instances' order; normals made
/// where a geometry lacks them, and tangents. Textures are looked for in `folder`.
pub fn draw<'a, 'input>(
    document: &Document<'a, 'input>,
    scene: &Scene<'a, 'input>,
    instanced: &Instanced<'a, 'input>,
    rig: &Rig,
    convert: Mat4,
    folder: &Path,
    warnings: &mut Vec<String>,
) -> Result<Drawing, FormatError> {
    // In proportion to the file: the text the document was parsed from.
    let limit = MAX_REPEATED_ALLOWANCE.saturating_add(document.xml.input_text().len() / BYTES_PER_REPEATED);
    let meshes_read = read_geometries(document, &instanced.instances, limit)?;
    let mut drawer = Drawer {
        document,
        scene,
        instanced,
        rig,
        folder,
        warnings,
        limit,
        textures: texture::Library::default(),
        material_index: HashMap::new(),
        targets_read: HashMap::new(),
        morph_offsets: 0,
        needs_normals: false,
        drawing: Drawing::default(),
    };
    for instance in &instanced.instances {
        let data = &meshes_read[&instance.geometry.id()];
        let to_model = match instance.skin {
            Some(skin) => convert * instanced.skins[skin].bind_shape,
            None => convert * scene.global[instance.node],
        };
        let first_vertex = drawer.drawing.vertices.len() as u32;
        drawer.add_vertices(instance, data, to_model)?;
        drawer.add_morph_targets(instance, data, first_vertex, Mat3::from_mat4(to_model))?;
        drawer.add_parts(instance, data, first_vertex)?;
    }
    let Drawer { needs_normals, mut drawing, .. } = drawer;
    if needs_normals {
        compute_normals(&mut drawing.vertices, &drawing.indices);
    }
    compute_tangents(&mut drawing.vertices, &drawing.indices);
    Ok(drawing)
}

/// Each instance's geometry, within `limit` for what drawing one again adds.
///
/// Each geometry is read once, however many instances draw it, and what drawing it again adds
/// stays in proportion to the file: neither memory nor the levels of detail get inputs out of
/// proportion to it.
fn read_geometries<'a, 'input>(
    document: &Document<'a, 'input>,
    instances: &[Instance<'a, 'input>],
    limit: usize,
) -> Result<HashMap<NodeId, MeshData>, FormatError> {
    let mut meshes_read: HashMap<NodeId, MeshData> = HashMap::new();
    let (mut repeated_vertices, mut repeated_triangles) = (0usize, 0usize);
    for instance in instances {
        let Some(data) = meshes_read.get(&instance.geometry.id()) else {
            meshes_read.insert(instance.geometry.id(), geometry::read(document, instance.geometry)?);
            continue;
        };
        repeated_vertices = repeated_vertices.saturating_add(data.positions.len());
        repeated_triangles =
            repeated_triangles.saturating_add(data.parts.iter().map(|part| part.indices.len() / 3).sum::<usize>());
        if repeated_vertices.max(repeated_triangles) > limit {
            return Err(document.error(
                instance.element,
                format!(
                    "expected the instances that draw a geometry again to add at most {limit} vertices and \
                     {limit} triangles in all ({MAX_REPEATED_ALLOWANCE} plus one a {BYTES_PER_REPEATED} bytes of the file), found more"
                ),
            ));
        }
    }
    Ok(meshes_read)
}

impl<'a, 'input> Drawer<'_, 'a, 'input> {
    /// The instance's vertices, placed by `to_model`, each with its influences (normalized), or
    /// its node's joint for a rigid instance; refused where a vertex has no weight or leaves f32.
    fn add_vertices(&mut self, instance: &Instance<'a, 'input>, data: &MeshData, to_model: Mat4) -> Result<(), FormatError> {
        let node_name = &self.scene.nodes[instance.node].name;
        let normal_matrix = Mat3::from_mat4(to_model).inverse().transpose();
        let first_vertex = self.drawing.vertices.len() as u32;
        // Each position of the geometry's POSITION source: the first vertex split from it.
        let source_count = data.position_index.iter().map(|&index| index as usize + 1).max().unwrap_or(0);
        let mesh = FileMesh::first_uses(node_name.clone(), source_count, first_vertex, &data.position_index);
        self.drawing.file_meshes.push(mesh);
        let normals_complete = data.normals.as_ref().is_some_and(|normals| normals.len() == data.positions.len());
        self.needs_normals |= !normals_complete;
        // A skinned vertex without a weight follows its skin's root joint (the first of its joints
        // in the skeleton, which lists parents first), as engines keep such a vertex in place.
        let skin_root = instance
            .joint_nodes
            .iter()
            .filter_map(|&node| self.rig.joint_of_node[node])
            .min()
            .filter(|_| instance.skin.is_some());
        let mut unweighted = 0usize;
        for (vertex, position) in data.positions.iter().enumerate() {
            let mut list = self.influences(instance, data, vertex);
            if list.is_empty() {
                let Some(root) = skin_root else {
                    let place = instance.skin.map_or(instance.element, |skin| self.instanced.skins[skin].weights_element);
                    return Err(self.document.error(
                        place,
                        format!("vertex {vertex} of {}: expected a weight above 0 on a joint", files::quoted(node_name)),
                    ));
                };
                unweighted += 1;
                list = vec![Influence { joint: root as u32, weight: 1.0 }];
            }
            let position = to_model.transform_point3(*position);
            if !position.is_finite() {
                return Err(self.document.error(
                    instance.element,
                    format!(
                        "vertex {vertex} of {}: expected a finite bind-pose position, found {position} (its numbers or \
                         transforms too large)",
                        files::quoted(node_name)
                    ),
                ));
            }
            self.drawing.max_influences = self.drawing.max_influences.max(list.len());
            let normal =
                if normals_complete { data.normals.as_ref().map_or(Vec3::Y, |normals| normals[vertex]) } else { Vec3::Y };
            self.drawing.vertices.push(Vertex {
                position,
                normal: (normal_matrix * normal).normalize_or(Vec3::Y),
                tangent: glam::Vec4::X,
                uv: data.uvs[vertex],
                color: glam::Vec4::ONE,
                first_influence: self.drawing.influences.len() as u32,
                influence_count: list.len() as u32,
            });
            self.drawing.influences.extend(list);
        }
        if let (Some(root), true) = (skin_root, unweighted > 0) {
            self.warnings.push(format!(
                "{unweighted} vertices of {} have no weight on a joint: they follow its skin's root joint {}",
                files::quoted(node_name),
                files::quoted(&self.rig.skeleton.joints[root].name)
            ));
        }
        Ok(())
    }

    /// A vertex's influences on the skeleton's joints: its skin's weights on the joints found, or
    /// its node's joint, wholly, for a rigid instance; empty where none is left.
    fn influences(&self, instance: &Instance<'a, 'input>, data: &MeshData, vertex: usize) -> Vec<Influence> {
        let joint_of_node = &self.rig.joint_of_node;
        match instance.skin {
            Some(skin) => {
                let skin = &self.instanced.skins[skin];
                let given = skin.weights.get(data.position_index[vertex] as usize).cloned().unwrap_or_default();
                let mapped: Vec<Influence> = given
                    .iter()
                    .filter_map(|influence| {
                        let node = instance.joint_nodes.get(influence.joint as usize)?;
                        Some(Influence { joint: joint_of_node[*node]? as u32, weight: influence.weight })
                    })
                    .collect();
                normalize_influences(&mapped).unwrap_or_default()
            }
            None => {
                joint_of_node[instance.node].map(|joint| vec![Influence { joint: joint as u32, weight: 1.0 }]).unwrap_or_default()
            }
        }
    }

    /// The instance's morph targets (its own `<morph>`, or its skin's) on its vertices from
    /// `first_vertex`, their offsets into model space by `linear`; within the file's limit.
    fn add_morph_targets(
        &mut self,
        instance: &Instance<'a, 'input>,
        data: &MeshData,
        first_vertex: u32,
        linear: Mat3,
    ) -> Result<(), FormatError> {
        let morph = instance.morph.as_ref().or_else(|| instance.skin.and_then(|skin| self.instanced.skins[skin].morph.as_ref()));
        let Some(morph) = morph else { return Ok(()) };
        for (index, (name, target)) in morph.targets.iter().enumerate() {
            let shape = match self.targets_read.entry(target.id()) {
                std::collections::hash_map::Entry::Occupied(read) => read.into_mut(),
                std::collections::hash_map::Entry::Vacant(slot) => slot.insert(geometry::read(self.document, *target)?),
            };
            let target = morph_target(name, data, shape, morph.relative, linear)
                .map_err(|message| self.document.error(instance.element, message))?;
            self.morph_offsets = self.morph_offsets.saturating_add(target.vertices.len());
            let limit = self.limit;
            if self.morph_offsets > limit {
                return Err(self.document.error(
                    instance.element,
                    format!(
                        "expected the morph targets to move at most {limit} vertices in all ({MAX_REPEATED_ALLOWANCE} \
                         plus one a {BYTES_PER_REPEATED} bytes of the file), found more"
                    ),
                ));
            }
            let weight = morph.weights.get(index).copied().unwrap_or(0.0);
            self.drawing.morph_targets.push(MorphTarget {
                vertices: target.vertices.iter().map(|&vertex| first_vertex + vertex).collect(),
                default_weight: weight,
                ..target
            });
        }
        Ok(())
    }

    /// The instance's parts as meshes over its vertices from `first_vertex`, each with the material
    /// its symbol is bound to (read once per material), or an untextured default.
    fn add_parts(&mut self, instance: &Instance<'a, 'input>, data: &MeshData, first_vertex: u32) -> Result<(), FormatError> {
        for part in &data.parts {
            let bound = part.material.as_deref().and_then(|symbol| instance.bindings.get(symbol)).copied();
            let material = match self.material_index.get(&bound.map(|node| node.id())) {
                Some(&material) => material,
                None => {
                    let made = match bound {
                        Some(node) => material::read(self.document, node, self.folder, &mut self.textures, self.warnings)?,
                        None => Material::untextured("default"),
                    };
                    self.drawing.materials.push(made);
                    self.material_index.insert(bound.map(|node| node.id()), self.drawing.materials.len() - 1);
                    self.drawing.materials.len() - 1
                }
            };
            self.drawing.meshes.push(Mesh {
                name: self.scene.nodes[instance.node].name.clone(),
                first_index: self.drawing.indices.len() as u32,
                index_count: part.indices.len() as u32,
                material,
            });
            self.drawing.indices.extend(part.indices.iter().map(|&index| first_vertex + index));
        }
        Ok(())
    }
}

/// One morph target on an instance's vertices (numbered from 0): per vertex of `base`, the offset
/// of the same position in `shape` (its `POSITION` source read in the same order), or the shape's
/// value itself for a RELATIVE morph, into model space by `linear`; only the vertices it moves.
fn morph_target(name: &str, base: &MeshData, shape: &MeshData, relative: bool, linear: Mat3) -> Result<MorphTarget, String> {
    let mut source_positions: Vec<Option<Vec3>> = Vec::new();
    for (vertex, &index) in shape.position_index.iter().enumerate() {
        let index = index as usize;
        if source_positions.len() <= index {
            source_positions.resize(index + 1, None);
        }
        source_positions[index] = shape.positions.get(vertex).copied();
    }
    let (mut vertices, mut position_deltas) = (Vec::new(), Vec::new());
    for (vertex, (&index, &position)) in base.position_index.iter().zip(&base.positions).enumerate() {
        let Some(Some(target)) = source_positions.get(index as usize) else {
            return Err(format!(
                "morph target {}: expected position {index} as in its base geometry, found {} positions",
                files::quoted(name),
                source_positions.len()
            ));
        };
        let offset = if relative { *target } else { *target - position };
        if offset != Vec3::ZERO {
            vertices.push(vertex as u32);
            position_deltas.push(linear * offset);
        }
    }
    let normal_deltas = vec![Vec3::ZERO; vertices.len()];
    Ok(MorphTarget {
        name: name.to_string(),
        vertices,
        position_deltas,
        normal_deltas,
        default_weight: 0.0,
        normals_recomputed: false,
    })
}
