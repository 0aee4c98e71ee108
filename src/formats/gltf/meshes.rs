//! Meshes: each triangle primitive's vertices, indices and influences, skinned or rigid, and the
//! bind shape folded out of inverse binds.

use super::builder::{Builder, JointSet, PrimitiveSource};
use super::{error, located, INDEX, JOINT, MAX_INDICES, MAX_VERTICES, QUANTIZED, WEIGHT};
use crate::anim::{Influence, Joint, JointPose};
use crate::formats::FormatError;
use crate::model::{compute_normals, compute_tangents, normalize_influences, FileMesh, Mesh, MorphTarget, Vertex};
use glam::{Mat3, Mat4, Vec2, Vec3, Vec4};
use gltf::mesh::{Mode, Semantic};
use gltf::{Accessor, Primitive};

impl<'a> Builder<'a> {
    /// Every drawn mesh's primitives. A file with no mesh at all is refused unless `clips_only`
    /// (it has animations: a "without skin" download, whose joints and clips go onto another
    /// model).
    pub(super) fn add_meshes(&mut self, clips_only: bool) -> Result<(), FormatError> {
        let (document, path) = (self.data.document, self.path());
        let drawn = self.drawn_nodes();
        let mut mesh_nodes = 0;
        for node in document.nodes() {
            let node_index = node.index();
            let Some(mesh) = node.mesh() else { continue };
            if !drawn.get(node_index).copied().unwrap_or(false) {
                continue;
            }
            let (mesh_index, skin) = (mesh.index(), node.skin().map(|skin| skin.index()));
            mesh_nodes += 1;
            let mesh_name = mesh.name().map_or_else(|| format!("mesh_{mesh_index}"), str::to_string);
            let targets = mesh.primitives().map(|primitive| primitive.morph_targets().len()).max().unwrap_or(0);
            let target_names = target_names(&mesh, targets);
            let default_weights: Vec<f32> = (0..targets)
                .map(|target| {
                    let given = node.weights().or(mesh.weights());
                    given.and_then(|weights| weights.get(target)).copied().unwrap_or(0.0)
                })
                .collect();
            let single = mesh.primitives().len() == 1;
            for primitive in mesh.primitives() {
                let primitive_index = primitive.index();
                let source = PrimitiveSource {
                    node: node_index,
                    skin,
                    primitive,
                    label: format!("mesh {mesh_index} (\"{mesh_name}\") primitive {primitive_index}"),
                    mesh_name: if single { mesh_name.clone() } else { format!("{mesh_name}.{primitive_index}") },
                    target_names: target_names.clone(),
                    default_weights: default_weights.clone(),
                };
                self.add_primitive(&source)?;
            }
        }
        if mesh_nodes == 0 && clips_only && document.meshes().len() == 0 {
            return Ok(());
        }
        if mesh_nodes == 0 {
            return Err(error(path, "expected at least one node with a mesh in the scene, found none"));
        }
        if self.meshes.is_empty() {
            return Err(error(path, "expected at least one mesh primitive of triangles, found none"));
        }
        Ok(())
    }

    /// COLOR_0: RGB or RGBA, float or normalized unsigned bytes or shorts (the spec's types, as
    /// for weights), linear; alpha 1 where the file gives RGB.
    fn colors(&self, accessor: &Accessor<'_>, what: &str) -> Result<Vec<Vec4>, FormatError> {
        Ok(match accessor.dimensions() {
            gltf::accessor::Dimensions::Vec3 => {
                self.data.floats::<3>(accessor, what, WEIGHT)?.into_iter().map(|rgb| Vec3::from_array(rgb).extend(1.0)).collect()
            }
            _ => self.data.floats::<4>(accessor, what, WEIGHT)?.into_iter().map(Vec4::from_array).collect(),
        })
    }

    pub(super) fn same_count(
        &self,
        accessor: &Accessor<'_>,
        what: &str,
        found: usize,
        expected: usize,
    ) -> Result<(), FormatError> {
        if found == expected {
            Ok(())
        } else {
            Err(error(
                self.path(),
                format!(
                    "accessor {} ({what}): expected {expected} elements, as many as POSITION, found {found}",
                    accessor.index()
                ),
            ))
        }
    }

    pub(super) fn add_primitive(&mut self, source: &PrimitiveSource<'a>) -> Result<(), FormatError> {
        let (data, path, label, primitive) = (self.data, self.path(), source.label.as_str(), &source.primitive);
        if primitive.mode() != Mode::Triangles {
            let mode = primitive.mode().as_gl_enum();
            self.warnings.push(format!("skipped {label}: expected mode TRIANGLES (4), found {mode}"));
            return Ok(());
        }
        let Some(position_accessor) = primitive.get(&Semantic::Positions) else {
            return Err(error(path, format!("{label}: expected a POSITION attribute, found none")));
        };
        let positions = data.floats::<3>(&position_accessor, &format!("POSITION of {label}"), QUANTIZED)?;
        let vertex_count = positions.len();
        if self.vertices.len().saturating_add(vertex_count) > MAX_VERTICES {
            return Err(error(path, format!("{label}: expected at most {MAX_VERTICES} vertices in all, found more")));
        }
        let optional = |semantic: Semantic, name: &str| -> Option<(Accessor<'_>, String)> {
            primitive.get(&semantic).map(|accessor| (accessor, format!("{name} of {label}")))
        };
        let normals = match optional(Semantic::Normals, "NORMAL") {
            Some((accessor, what)) => {
                let normals = data.floats::<3>(&accessor, &what, QUANTIZED)?;
                self.same_count(&accessor, &what, normals.len(), vertex_count)?;
                Some(normals)
            }
            None => None,
        };
        let tangents = match optional(Semantic::Tangents, "TANGENT") {
            Some((accessor, what)) => {
                let tangents = data.floats::<4>(&accessor, &what, QUANTIZED)?;
                self.same_count(&accessor, &what, tangents.len(), vertex_count)?;
                Some(tangents)
            }
            None => None,
        };
        let uvs = match optional(Semantic::TexCoords(0), "TEXCOORD_0") {
            Some((accessor, what)) => {
                let uvs = data.floats::<2>(&accessor, &what, QUANTIZED)?;
                self.same_count(&accessor, &what, uvs.len(), vertex_count)?;
                Some(uvs)
            }
            None => None,
        };
        let colors = match optional(Semantic::Colors(0), "COLOR_0") {
            Some((accessor, what)) => {
                let colors = self.colors(&accessor, &what)?;
                self.same_count(&accessor, &what, colors.len(), vertex_count)?;
                Some(colors)
            }
            None => None,
        };
        let mut indices: Vec<u32> = match primitive.indices() {
            Some(accessor) => {
                let meaning = format!("the POSITION count of {label}");
                data.uints::<1>(&accessor, &format!("indices of {label}"), INDEX, Some((vertex_count as u64, &meaning)))?
                    .into_iter()
                    .map(|[index]| index)
                    .collect()
            }
            // Vertex counts are capped far below u32::MAX.
            None => (0..vertex_count as u32).collect(),
        };
        let leftover = indices.len() % 3;
        if leftover != 0 {
            self.warnings.push(format!(
                "{label}: {} indices is not a whole number of triangles; the last {leftover} are ignored",
                indices.len()
            ));
            indices.truncate(indices.len() - leftover);
        }
        if self.indices.len().saturating_add(indices.len()) > MAX_INDICES {
            return Err(error(path, format!("{label}: expected at most {MAX_INDICES} indices in all, found more")));
        }

        let mut vertices: Vec<Vertex> = positions
            .iter()
            .enumerate()
            .map(|(index, &position)| {
                let normal = normals
                    .as_ref()
                    .and_then(|normals| normals.get(index))
                    .map_or(Vec3::Y, |&normal| Vec3::from_array(normal).normalize_or(Vec3::Y));
                let tangent = tangents.as_ref().and_then(|tangents| tangents.get(index)).map_or(Vec4::X, |&[x, y, z, w]| {
                    let direction = Vec3::new(x, y, z).normalize_or(normal.any_orthonormal_vector());
                    direction.extend(if w < 0.0 { -1.0 } else { 1.0 })
                });
                let uv = uvs.as_ref().and_then(|uvs| uvs.get(index)).map_or(Vec2::ZERO, |&uv| Vec2::from_array(uv));
                let color = colors.as_ref().and_then(|colors| colors.get(index)).copied().unwrap_or(Vec4::ONE);
                Vertex {
                    position: Vec3::from_array(position),
                    normal,
                    tangent,
                    uv,
                    color,
                    first_influence: 0,
                    influence_count: 0,
                }
            })
            .collect();
        if normals.is_none() {
            compute_normals(&mut vertices, &indices);
        }
        if tangents.is_none() {
            compute_tangents(&mut vertices, &indices);
        }

        let sets = match source.skin {
            Some(_) => self.joint_sets(primitive, label, vertex_count)?,
            None => Vec::new(),
        };
        // What the vertices go through on the way to model space: the bind shape of a skin, or a
        // rigid node's rest transform. Morph offsets take its linear part.
        let applied = match source.skin.filter(|_| !sets.is_empty()) {
            Some(skin) => {
                self.bind_skinned(&mut vertices, &sets, skin, label)?;
                let shape = self.skins.get(skin).and_then(|binding| binding.bind_shape).unwrap_or(Mat4::IDENTITY);
                transform_vertices(&mut vertices, &mut indices, shape);
                shape
            }
            None => {
                if source.skin.is_some() {
                    self.warnings.push(format!(
                        "{label} is on skinned node {} but has no JOINTS_0/WEIGHTS_0: it moves rigidly with that node",
                        source.node
                    ));
                }
                self.bind_rigid(&mut vertices, &mut indices, source.node)?
            }
        };
        let material = self.material(primitive.material());
        let first_vertex = self.vertices.len() as u32;
        self.add_morph_targets(source, first_vertex, vertex_count, applied)?;
        let first_index = self.indices.len() as u32;
        self.indices.extend(indices.iter().map(|&index| first_vertex + index));
        let file_vertices = (first_vertex..).take(vertices.len()).map(Some).collect();
        self.file_meshes.push(FileMesh { name: source.mesh_name.clone(), vertices: file_vertices });
        self.vertices.extend(vertices);
        self.meshes.push(Mesh { name: source.mesh_name.clone(), first_index, index_count: indices.len() as u32, material });
        Ok(())
    }

    /// JOINTS_n with WEIGHTS_n for n = 0, 1, .. as long as both are there.
    pub(super) fn joint_sets(
        &self,
        primitive: &Primitive<'a>,
        label: &str,
        vertex_count: usize,
    ) -> Result<Vec<JointSet<'a>>, FormatError> {
        let mut sets = Vec::new();
        for set in 0u32.. {
            let joints = primitive.get(&Semantic::Joints(set));
            let weights = primitive.get(&Semantic::Weights(set));
            let (joint_accessor, weight_accessor) = match (joints, weights) {
                (None, None) => break,
                (Some(joints), Some(weights)) => (joints, weights),
                _ => {
                    return Err(error(
                        self.path(),
                        format!("{label}: expected JOINTS_{set} and WEIGHTS_{set} together, found only one"),
                    ))
                }
            };
            let joint_what = format!("JOINTS_{set} of {label}");
            let weight_what = format!("WEIGHTS_{set} of {label}");
            let joints = self.data.uints::<4>(&joint_accessor, &joint_what, JOINT, None)?;
            self.same_count(&joint_accessor, &joint_what, joints.len(), vertex_count)?;
            let weights = self.data.floats::<4>(&weight_accessor, &weight_what, WEIGHT)?;
            self.same_count(&weight_accessor, &weight_what, weights.len(), vertex_count)?;
            sets.push(JointSet { joints, weights, accessor: joint_accessor, set });
        }
        Ok(sets)
    }

    /// Every positive weight of every set becomes an influence (exact, not capped at four).
    pub(super) fn bind_skinned(
        &mut self,
        vertices: &mut [Vertex],
        sets: &[JointSet<'_>],
        skin: usize,
        label: &str,
    ) -> Result<(), FormatError> {
        let Some(binding) = self.skins.get(skin) else {
            return Err(error(self.path(), format!("{label}: expected skin {skin} to exist")));
        };
        let first_joint = binding.first();
        let mut lists = Vec::with_capacity(vertices.len());
        let mut unweighted = 0usize;
        for vertex_index in 0..vertices.len() {
            let mut raw = Vec::with_capacity(4 * sets.len());
            for set in sets {
                let (Some(joints), Some(weights)) = (set.joints.get(vertex_index), set.weights.get(vertex_index)) else {
                    continue;
                };
                for (&joint, &weight) in joints.iter().zip(weights) {
                    if weight <= 0.0 {
                        // Unused slots often hold any index, even one past the skin's joints.
                        continue;
                    }
                    let Some(&skeleton_joint) = binding.skeleton_joints.get(joint as usize) else {
                        return Err(located(
                            self.path(),
                            self.data.element_offset(&set.accessor, vertex_index),
                            format!(
                                "accessor {} (JOINTS_{} of {label}): vertex {vertex_index} has weight {weight} on joint {joint}: \
                                 expected a joint index below {} (the joints of skin {skin})",
                                set.accessor.index(),
                                set.set,
                                binding.skeleton_joints.len()
                            ),
                        ));
                    };
                    raw.push(Influence { joint: skeleton_joint, weight });
                }
            }
            lists.push(normalize_influences(&raw).unwrap_or_else(|| {
                unweighted += 1;
                vec![Influence { joint: first_joint, weight: 1.0 }]
            }));
        }
        if unweighted > 0 {
            self.warnings.push(format!(
                "{label}: {unweighted} vertices have no positive weight; each is bound wholly to the first joint of skin {skin}"
            ));
        }
        for (vertex, list) in vertices.iter_mut().zip(lists) {
            self.push_influences(vertex, list)?;
        }
        Ok(())
    }

    /// A mesh without a skin follows its node through a joint of its own. Its vertices move to
    /// model space by the node's rest transform, and the joint's inverse bind undoes that, so the
    /// palette is the identity at rest and the node's motion when animated.
    /// Hangs the vertices on `node`'s joint (made on first use), moved by its rest transform, which
    /// is returned.
    pub(super) fn bind_rigid(&mut self, vertices: &mut [Vertex], indices: &mut [u32], node: usize) -> Result<Mat4, FormatError> {
        let (joint, transform) = match self.rigid_joints.get(&node) {
            Some(&known) => known,
            None => {
                let global = self.hierarchy.rest_global.get(node).copied().unwrap_or(Mat4::IDENTITY);
                let inverse = global.inverse();
                let (transform, inverse_bind) = if global.determinant().is_normal() && inverse.is_finite() {
                    (global, inverse)
                } else {
                    self.warnings.push(format!(
                        "node {node} (\"{}\") has a degenerate rest transform: its mesh keeps node space until animated",
                        self.hierarchy.name(node)
                    ));
                    (Mat4::IDENTITY, Mat4::IDENTITY)
                };
                let name = self.hierarchy.name(node).to_string();
                let joint = self.push_joint(Joint::new(name, None, inverse_bind, JointPose::IDENTITY), node)?;
                self.rigid_joints.insert(node, (joint, transform));
                (joint, transform)
            }
        };
        transform_vertices(vertices, indices, transform);
        for vertex in vertices.iter_mut() {
            self.push_influences(vertex, vec![Influence { joint, weight: 1.0 }])?;
        }
        Ok(transform)
    }

    /// The primitive's morph targets, sparse (the vertices a target moves), in model space.
    fn add_morph_targets(
        &mut self,
        source: &PrimitiveSource<'a>,
        first_vertex: u32,
        vertex_count: usize,
        applied: Mat4,
    ) -> Result<(), FormatError> {
        let (data, label) = (self.data, source.label.as_str());
        let linear = Mat3::from_mat4(applied);
        let normal_matrix = linear.inverse().transpose();
        for (index, target) in source.primitive.morph_targets().enumerate() {
            let read = |accessor: Option<Accessor<'_>>, what: &str| -> Result<Option<Vec<[f32; 3]>>, FormatError> {
                let Some(accessor) = accessor else { return Ok(None) };
                let what = format!("morph target {index} {what} of {label}");
                let values = data.floats::<3>(&accessor, &what, QUANTIZED)?;
                self.same_count(&accessor, &what, values.len(), vertex_count)?;
                Ok(Some(values))
            };
            let positions = read(target.positions(), "POSITION")?;
            let normals = read(target.normals(), "NORMAL")?;
            let (mut vertices, mut position_deltas, mut normal_deltas) = (Vec::new(), Vec::new(), Vec::new());
            for vertex in 0..vertex_count {
                let position = positions.as_ref().map_or(Vec3::ZERO, |positions| Vec3::from_array(positions[vertex]));
                let normal = normals.as_ref().map_or(Vec3::ZERO, |normals| Vec3::from_array(normals[vertex]));
                if position != Vec3::ZERO || normal != Vec3::ZERO {
                    vertices.push(first_vertex + vertex as u32);
                    position_deltas.push(linear * position);
                    normal_deltas.push(normal_matrix * normal);
                }
            }
            // A target that moves nothing in this primitive (it moves another one) is left out.
            if vertices.is_empty() {
                continue;
            }
            self.morph_targets.push(MorphTarget {
                name: match source.target_names.get(index) {
                    Some(name) if !name.is_empty() => name.clone(),
                    _ => format!("{}.{index}", source.mesh_name),
                },
                vertices,
                position_deltas,
                normal_deltas,
                default_weight: source.default_weights.get(index).copied().unwrap_or(0.0),
                normals_recomputed: false,
            });
            self.morph_sources.push((source.node, index));
        }
        Ok(())
    }

    pub(super) fn push_influences(&mut self, vertex: &mut Vertex, list: Vec<Influence>) -> Result<(), FormatError> {
        let first = u32::try_from(self.influences.len())
            .map_err(|_| error(self.path(), "expected at most 2^32 influences in all, found more"))?;
        vertex.first_influence = first;
        vertex.influence_count = list.len() as u32;
        self.max_influences = self.max_influences.max(list.len());
        self.influences.extend(list);
        Ok(())
    }
}

/// Moves vertices by an affine transform: positions as points, normals by the inverse transpose,
/// tangents by the linear part with their handedness kept. A mirroring transform turns the
/// triangles over, so their winding is reversed to keep them front-facing, as the spec does.
pub(super) fn transform_vertices(vertices: &mut [Vertex], indices: &mut [u32], transform: Mat4) {
    if transform == Mat4::IDENTITY {
        return;
    }
    let linear = Mat3::from_mat4(transform);
    let normal_matrix = linear.inverse().transpose();
    let handedness = if linear.determinant() < 0.0 { -1.0 } else { 1.0 };
    for vertex in vertices.iter_mut() {
        vertex.position = transform.transform_point3(vertex.position);
        vertex.normal = (normal_matrix * vertex.normal).normalize_or(Vec3::Y);
        let tangent = (linear * vertex.tangent.truncate()).normalize_or(vertex.normal.any_orthonormal_vector());
        vertex.tangent = tangent.extend(vertex.tangent.w * handedness);
    }
    if handedness < 0.0 {
        for triangle in indices.chunks_exact_mut(3) {
            if let [_, second, third] = triangle {
                std::mem::swap(second, third);
            }
        }
    }
}

/// The names exporters give a mesh's morph targets (`extras.targetNames`, as Blender and three.js
/// write them), `count` of them; unnamed ones are left empty for the caller to name.
fn target_names(mesh: &gltf::Mesh<'_>, count: usize) -> Vec<String> {
    let extras = mesh.extras().as_ref().and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok());
    let names = extras.as_ref().and_then(|extras| extras.get("targetNames")).and_then(|names| names.as_array());
    (0..count)
        .map(|index| names.and_then(|names| names.get(index)).and_then(|name| name.as_str()).unwrap_or_default().to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
