//! FBX meshes as the model's vertices, triangles and materials: each mesh put in the bind pose in
//! model space (through its skin's first cluster, or its node), its faces triangulated by
//! material, its blend shapes as sparse morph targets.

use ahash::AHashMap as HashMap;
use std::path::{Path, PathBuf};

use glam::{Mat3, Vec2, Vec3, Vec4};

use super::skeleton::Rig;
use super::{matrix, vec2, vec3};
use crate::anim::Influence;
use crate::formats::{files, texture};
use crate::model::{compute_normals, compute_tangents, normalize_influences, FileMesh, Material, Mesh, MorphTarget, Vertex};

/// What the meshes became.
#[derive(Default)]
pub(super) struct Geometry {
    pub vertices: Vec<Vertex>,
    pub influences: Vec<Influence>,
    pub indices: Vec<u32>,
    pub meshes: Vec<Mesh>,
    pub materials: Vec<Material>,
    pub file_meshes: Vec<FileMesh>,
    pub morph_targets: Vec<MorphTarget>,
    /// Each blend channel's target, by the channel's element id (what the baked weights name).
    pub target_of_channel: HashMap<u32, usize>,
    pub max_influences: usize,
}

/// Materials, by ufbx's order: the diffuse colour, and the diffuse (or PBR base colour) texture,
/// embedded in the file or found beside it.
fn materials(scene: &ufbx::Scene, folder: &Path, warnings: &mut Vec<String>) -> Vec<Material> {
    let mut textures = texture::Library::default();
    scene
        .materials
        .iter()
        .map(|material| {
            let mut out = Material::untextured(material.element.name.to_string());
            let color = &material.fbx.diffuse_color;
            if color.has_value {
                out.base_color = Vec4::new(color.value_vec4.x as f32, color.value_vec4.y as f32, color.value_vec4.z as f32, 1.0);
            }
            let map = [&material.fbx.diffuse_color, &material.pbr.base_color].into_iter().find(|map| map.texture.is_some());
            if let Some(found) = map.and_then(|map| map.texture.as_ref()) {
                out.texture = diffuse_texture(found, folder, &mut textures, &out.name, warnings);
                if out.texture.is_some() {
                    // The texture is the colour (FBX's diffuse colour is what shows without one).
                    out.base_color = Vec4::ONE;
                }
            }
            out
        })
        .collect()
}

/// Every mesh of the scene with a node that became a joint, in the bind pose in model space.
pub(super) fn read(scene: &ufbx::Scene, rig: &Rig, folder: &Path, warnings: &mut Vec<String>) -> Geometry {
    let mut materials = materials(scene, folder, warnings);
    let material_of: HashMap<u32, usize> =
        scene.materials.iter().enumerate().map(|(index, material)| (material.element.typed_id, index)).collect();
    let (mut vertices, mut influences, mut indices, mut meshes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut unnormalized = false;
    let mut max_influences = 0;
    let mut file_meshes = Vec::new();
    let mut morph_targets = Vec::new();
    // Each blend channel's target, by the channel's element id (what the baked weights name).
    let mut target_of_channel: HashMap<u32, usize> = HashMap::new();
    for mesh in scene.meshes.iter() {
        let Some(node) = mesh.element.instances.iter().next() else { continue };
        let Some(&node_joint) = rig.joint_of.get(&node.element.typed_id) else { continue };
        let mesh_first_vertex = vertices.len();
        if mesh.element.instances.len() > 1 {
            warnings.push(format!(
                "mesh \"{}\" is instanced {} times; vkskin draws the first",
                mesh.element.name,
                mesh.element.instances.len()
            ));
        }
        let skin = mesh.skin_deformers.iter().next().filter(|skin| !skin.clusters.is_empty());
        // Geometry space to the bind pose in model space.
        let to_model = match &skin {
            Some(skin) => matrix(&skin.clusters[0].geometry_to_world),
            None => rig.joints[node_joint].inverse_bind.inverse() * matrix(&node.geometry_to_node),
        };
        let normal_matrix = Mat3::from_mat4(to_model).inverse().transpose();
        let point_influences = control_point_influences(mesh, skin.map(|skin| &**skin), rig, node_joint, &mut unnormalized);
        // Each new vertex's control point, for the blend shapes (which move control points) and the
        // file layout.
        let mut vertex_points: Vec<u32> = Vec::new();
        let slots = mesh.materials.len().max(1);
        // Faces by material slot, in one pass (not a pass a slot: a file may have thousands).
        let mut slot_faces: Vec<Vec<ufbx::Face>> = vec![Vec::new(); slots];
        for (face_index, face) in mesh.faces.iter().enumerate() {
            let face_slot = mesh.face_material.get(face_index).copied().unwrap_or(0) as usize;
            slot_faces[face_slot.min(slots - 1)].push(*face);
        }
        let mut corners = vec![0u32; mesh.max_face_triangles.min(MAX_CLIPPED_CORNERS) * 3];
        let mut fanned = 0usize;
        for (slot, faces) in slot_faces.iter().enumerate() {
            let first_index = indices.len() as u32;
            let mut welded: HashMap<(u32, [u32; 3], [u32; 2]), u32> = HashMap::new();
            for face in faces {
                let triangles = if face.num_indices as usize > MAX_CLIPPED_CORNERS {
                    fanned += 1;
                    fan(face, &mut corners)
                } else {
                    mesh.triangulate_face(&mut corners, *face) as usize
                };
                for &corner in &corners[..triangles * 3] {
                    let corner = corner as usize;
                    let point = mesh.vertex_indices[corner];
                    let normal = if mesh.vertex_normal.exists { vec3(mesh.vertex_normal[corner]) } else { Vec3::ZERO };
                    let uv = if mesh.vertex_uv.exists { vec2(mesh.vertex_uv[corner]) } else { Vec2::ZERO };
                    let key = (point, normal.to_array().map(f32::to_bits), uv.to_array().map(f32::to_bits));
                    let index = *welded.entry(key).or_insert_with(|| {
                        let point_influences = &point_influences[point as usize];
                        max_influences = max_influences.max(point_influences.len());
                        let first_influence = influences.len() as u32;
                        influences.extend_from_slice(point_influences);
                        vertices.push(Vertex {
                            position: to_model.transform_point3(vec3(mesh.vertex_position[corner])),
                            normal: (normal_matrix * normal).normalize_or_zero(),
                            tangent: Vec4::ZERO,
                            // FBX counts v from the bottom, the renderer from the top.
                            uv: Vec2::new(uv.x, 1.0 - uv.y),
                            color: Vec4::ONE,
                            first_influence,
                            influence_count: point_influences.len() as u32,
                        });
                        vertices.len() as u32 - 1
                    });
                    if index as usize == vertex_points.len() + mesh_first_vertex {
                        vertex_points.push(point);
                    }
                    indices.push(index);
                }
            }
            let index_count = indices.len() as u32 - first_index;
            if index_count == 0 {
                continue;
            }
            let material = slot_material(mesh, slot, &material_of, &mut materials);
            meshes.push(Mesh { name: mesh.element.name.to_string(), first_index, index_count, material });
        }
        if fanned > 0 {
            warnings.push(format!(
                "mesh \"{}\": {fanned} faces of more than {MAX_CLIPPED_CORNERS} corners triangulated as fans",
                mesh.element.name
            ));
        }
        // `inspect --pose` reports each control point by the first vertex made from it.
        file_meshes.push(FileMesh::first_uses(
            mesh.element.name.to_string(),
            mesh.num_vertices,
            mesh_first_vertex as u32,
            &vertex_points,
        ));
        let linear = BlendSpace { positions: Mat3::from_mat4(to_model), normals: normal_matrix };
        for channel in mesh.blend_deformers.iter().flat_map(|deformer| deformer.channels.iter()) {
            let Some(target) = blend_channel(channel, mesh, mesh_first_vertex as u32, &vertex_points, &linear, warnings) else {
                continue;
            };
            target_of_channel.insert(channel.element.element_id, morph_targets.len());
            morph_targets.push(target);
        }
    }
    if unnormalized {
        warnings.push("skin weights that do not sum to 1 were normalized".to_string());
    }
    if vertices.iter().all(|vertex| vertex.normal == Vec3::ZERO) {
        compute_normals(&mut vertices, &indices);
    }
    compute_tangents(&mut vertices, &indices);

    Geometry { vertices, influences, indices, meshes, materials, file_meshes, morph_targets, target_of_channel, max_influences }
}

/// The material of `mesh`'s slot `slot` (an index into `materials`), or a plain one added for a
/// slot without one.
fn slot_material(mesh: &ufbx::Mesh, slot: usize, material_of: &HashMap<u32, usize>, materials: &mut Vec<Material>) -> usize {
    match mesh.materials.get(slot).and_then(|material| material_of.get(&material.element.typed_id)) {
        Some(&material) => material,
        None => {
            materials.push(Material::untextured(format!("{} (no material)", mesh.element.name)));
            materials.len() - 1
        }
    }
}

/// Each control point of `mesh` with its influences, normalized (`unnormalized` set where some
/// did not sum to 1); without a skin, or for a point the skin leaves out, its node's joint alone.
fn control_point_influences(
    mesh: &ufbx::Mesh,
    skin: Option<&ufbx::SkinDeformer>,
    rig: &Rig,
    node_joint: usize,
    unnormalized: &mut bool,
) -> Vec<Vec<Influence>> {
    (0..mesh.num_vertices)
        .map(|point| {
            let rigid = vec![Influence { joint: node_joint as u32, weight: 1.0 }];
            let Some(skin) = skin else { return rigid };
            let Some(entry) = skin.vertices.get(point) else { return rigid };
            let weights = &skin.weights.as_ref()[entry.weight_begin as usize..][..entry.num_weights as usize];
            let raw: Vec<Influence> = weights
                .iter()
                .filter_map(|weight| {
                    let bone = skin.clusters.get(weight.cluster_index as usize)?.bone_node.as_ref()?;
                    Some(Influence { joint: rig.joint(bone)? as u32, weight: weight.weight as f32 })
                })
                .collect();
            let sum: f32 = raw.iter().map(|influence| influence.weight).sum();
            *unnormalized |= !raw.is_empty() && (sum - 1.0).abs() > 1e-3;
            normalize_influences(&raw).unwrap_or(rigid)
        })
        .collect()
}

/// A blend channel of `mesh` as a morph target (its full shape; in-between shapes are warned
/// about), or none without a target shape.
fn blend_channel(
    channel: &ufbx::BlendChannel,
    mesh: &ufbx::Mesh,
    first_vertex: u32,
    vertex_points: &[u32],
    linear: &BlendSpace,
    warnings: &mut Vec<String>,
) -> Option<MorphTarget> {
    if channel.keyframes.len() > 1 {
        warnings.push(format!(
            "blend shape \"{}\" has {} in-between shapes; vkskin reads the full one",
            channel.element.name,
            channel.keyframes.len() - 1
        ));
    }
    let shape = channel.target_shape.as_ref()?;
    Some(blend_target(channel, shape, first_vertex, vertex_points, mesh.num_vertices, linear))
}

/// Faces with more corners than this are cut into a fan from their first corner instead of by
/// ufbx's ear clipping, whose time grows faster than the corners (a 200,000-corner face took 16 s).
const MAX_CLIPPED_CORNERS: usize = 1024;

/// `face` as a fan of triangles from its first corner into `corners` (mesh-wide corner indices);
/// returns the triangle count.
fn fan(face: &ufbx::Face, corners: &mut Vec<u32>) -> usize {
    let count = (face.num_indices as usize).saturating_sub(2);
    corners.resize(corners.len().max(count * 3), 0);
    for triangle in 0..count {
        let first = face.index_begin;
        corners[triangle * 3..triangle * 3 + 3].copy_from_slice(&[
            first,
            first + triangle as u32 + 1,
            first + triangle as u32 + 2,
        ]);
    }
    count
}

/// Geometry space to model space for a blend shape's offsets (linear parts only).
struct BlendSpace {
    positions: Mat3,
    normals: Mat3,
}

/// A blend channel's full shape as a morph target on the model vertices made from `mesh`'s control
/// points: the vertices from `first_vertex` on, `vertex_points[i]` the point of vertex
/// `first_vertex + i`. Every vertex split from a moved point moves with it; per-vertex shape
/// weights scale the offsets.
fn blend_target(
    channel: &ufbx::BlendChannel,
    shape: &ufbx::BlendShape,
    first_vertex: u32,
    vertex_points: &[u32],
    point_count: usize,
    space: &BlendSpace,
) -> MorphTarget {
    let mut copies: Vec<Vec<u32>> = vec![Vec::new(); point_count];
    for (offset, &point) in vertex_points.iter().enumerate() {
        if let Some(copies) = copies.get_mut(point as usize) {
            copies.push(first_vertex + offset as u32);
        }
    }
    let mut moved: Vec<(u32, Vec3, Vec3)> = Vec::new();
    for (index, &point) in shape.offset_vertices.iter().enumerate() {
        let weight = shape.offset_weights.get(index).map_or(1.0, |&weight| weight as f32);
        let position = shape.position_offsets.get(index).map_or(Vec3::ZERO, |&offset| space.positions * vec3(offset) * weight);
        let normal = shape.normal_offsets.get(index).map_or(Vec3::ZERO, |&offset| space.normals * vec3(offset) * weight);
        for &vertex in copies.get(point as usize).map_or(&[][..], Vec::as_slice) {
            moved.push((vertex, position, normal));
        }
    }
    let mut target = MorphTarget {
        name: channel.element.name.to_string(),
        vertices: moved.iter().map(|&(vertex, _, _)| vertex).collect(),
        position_deltas: moved.iter().map(|&(_, position, _)| position).collect(),
        normal_deltas: moved.iter().map(|&(_, _, normal)| normal).collect(),
        default_weight: channel.weight as f32,
        normals_recomputed: false,
    };
    // Ascending, a control point the shape names twice once.
    target.merge_repeated_vertices();
    target
}

/// A material's texture: embedded in the file (its `Content`), or the file it names, tried as a
/// relative path, then by name beside the model (an absolute path from the artist's machine),
/// as the other formats do.
fn diffuse_texture(
    found: &ufbx::Texture,
    folder: &Path,
    textures: &mut texture::Library,
    material: &str,
    warnings: &mut Vec<String>,
) -> Option<crate::model::Texture> {
    let written = [&found.relative_filename, &found.filename, &found.absolute_filename]
        .into_iter()
        .map(|name| name.to_string())
        .find(|name| !name.is_empty())
        .unwrap_or_default();
    if !found.content.is_empty() {
        return match texture::describe(found.content.to_vec(), PathBuf::from(&written)) {
            Ok(described) => Some(described),
            Err(reason) => {
                warnings.push(format!("material {}: embedded texture: {reason}; drawn without it", files::quoted(material)));
                None
            }
        };
    }
    if written.is_empty() {
        warnings.push(format!("material {}: a texture without a file name; drawn without it", files::quoted(material)));
        return None;
    }
    texture::find(&written, folder, textures, material, warnings)
}
