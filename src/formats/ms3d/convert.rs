//! The document into the one `Model` type: geometry, weights by the SDK's rule, materials and
//! textures found beside the file, and each joint's keys as channels.

use super::animation::{animated_joints, bind_poses_into, timeline, AnimatedJoint};
use super::byte_error;
use super::layout::{validate, Layout};
use super::read::parse;
use super::{Ms3dFile, Ms3dMaterial, Ms3dVertex, Ms3dVertexExtra, JOINT_PARENT_NAME_OFFSET};
use crate::anim::{Animation, Channel, Influence, Interpolation, Joint, JointPose, KeyTimes, Property, Skeleton};
use crate::formats::{ranges, texture, FormatError};
use crate::model::{compute_tangents, normalize_influences, FileLayout, FileMesh, LoadStats, Material, Mesh, Model, Vertex};
use ahash::AHashMap as HashMap;
use glam::{Mat4, Vec2, Vec3, Vec4};
use std::path::Path;

// ---------------------------------------------------------------------------------------------
// Loading into a Model
// ---------------------------------------------------------------------------------------------

pub(super) fn file_stem(path: &Path) -> String {
    path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Reads, parses and converts a `.ms3d` file.
/// Without culling cells: [`crate::formats::load_model`] adds them.
pub fn load(path: &Path) -> Result<Model, FormatError> {
    let bytes = crate::formats::files::read(path, crate::formats::files::MAX_MODEL_BYTES)
        .map_err(|message| FormatError::in_file(path, message))?;
    let file = parse(&bytes, path)?;
    to_model(&file, path)
}

/// Converts a document into a [`Model`] named after the file stem (see the module notes for the
/// rules). `path` names the file in errors, names the model and its clip, and locates textures.
///
/// One mesh per non-empty group; a vertex is split where its triangle corners differ in normal or
/// texture coordinates. The skeleton is the file's joints, parents first; vertices without a joint
/// (and every vertex of a model without joints) follow one extra root joint named after the model,
/// with an identity bind. A model with joints gets one animation covering the whole timeline, its
/// keys kept (see [`joint_channels`]).
pub fn to_model(file: &Ms3dFile, path: &Path) -> Result<Model, FormatError> {
    let layout = Layout::of(file);
    let order = validate(file, &layout, path)?;
    let name = file_stem(path);
    let joints = animated_joints(file, &order);
    let mut bind = vec![JointPose::IDENTITY; joints.len()];
    bind_poses_into(&joints, &mut bind);
    let mut skeleton = Skeleton {
        joints: order
            .order
            .iter()
            .zip(joints.iter().zip(&bind))
            .map(|(&file_index, (joint, pose))| {
                let name = file.joints.get(file_index).map(|joint| joint.name.text().into_owned()).unwrap_or_default();
                let rest = JointPose::new(joint.bind_rotation, joint.bind_translation);
                Joint::new(name, joint.parent, pose.to_mat4().inverse(), rest)
            })
            .collect(),
    };
    let root_joint = u32::try_from(skeleton.len())
        .map_err(|_| byte_error(path, layout.animation.saturating_add(12), "expected at most 2^32 - 1 joints, found more"))?;

    let extras = file.vertex_extras.as_ref().map(|extras| extras.vertices.as_slice()).unwrap_or_default();
    let file_influences: Vec<Option<Vec<Influence>>> = file
        .vertices
        .iter()
        .enumerate()
        .map(|(index, vertex)| vertex_influences(vertex, extras.get(index), &order.skeleton_index))
        .collect();

    let mut stats = LoadStats::default();
    if let Some(&first) = order.orphans.first() {
        let joint = &file.joints[first];
        let more = match order.orphans.len() {
            1 => String::new(),
            count => format!(" ({} more like it)", count - 1),
        };
        stats.warnings.push(format!(
            "byte {}: joint {first} \"{}\" names the parent \"{}\", which is no joint's name: made a root{more}",
            layout.joint(first).saturating_add(JOINT_PARENT_NAME_OFFSET),
            joint.name.text(),
            joint.parent_name.text()
        ));
    }
    let geometry = build_geometry(file, &file_influences, root_joint, path, &layout)?;
    if file.joints.is_empty() || geometry.uses_root {
        skeleton.joints.push(Joint::new(name.clone(), None, Mat4::IDENTITY, JointPose::IDENTITY));
    }
    // The file's joints in its order, then the extra root where there is one.
    let mut joint_order: Vec<u32> = order.skeleton_index.iter().map(|&index| index as u32).collect();
    joint_order.extend(order.skeleton_index.len() as u32..skeleton.len() as u32);
    stats.max_influences = geometry.max_influences;

    let folder = path.parent().unwrap_or(Path::new(""));
    let mut textures = texture::Library::default();
    let mut materials: Vec<Material> =
        file.materials.iter().map(|material| load_material(material, folder, &mut textures, &mut stats.warnings)).collect();
    if geometry.uses_default_material {
        materials.push(Material::untextured("default"));
    }

    let mut animations = Vec::new();
    if !file.joints.is_empty() {
        let duration = timeline(file, &layout, path)?;
        let channels = joints.iter().enumerate().flat_map(|(index, joint)| joint_channels(index, joint)).collect();
        // Each key: a time and three floats.
        let file_key_bytes =
            file.joints.iter().map(|joint| joint.rotation_keys.len() + joint.position_keys.len()).sum::<usize>() * 16;
        animations.push(Animation {
            name: name.clone(),
            duration,
            frame_rate: Some(file.animation_fps),
            channels,
            file_key_bytes,
            source: None,
            weights: Vec::new(),
            compressed: None,
            motion: None,
        });
    }

    let mut model = Model {
        name,
        vertices: geometry.vertices,
        influences: geometry.influences,
        indices: geometry.indices,
        meshes: geometry.meshes,
        materials,
        skeleton,
        animations,
        clips: Vec::new(),
        bounds: Default::default(),
        levels: Vec::new(),
        stats,
        layout: FileLayout {
            to_model: glam::Mat4::IDENTITY,
            joint_order,
            // One vertex list shared by every group: one mesh.
            meshes: vec![FileMesh { name: "vertices".into(), vertices: geometry.file_vertices }],
            ..FileLayout::default()
        },
        morph_targets: Vec::new(),
        influence_offsets: Vec::new(),
    };
    model.clip_each_animation();
    // Some authors keep the clip table in the model's comment ("2,20,walk" lines).
    let comment = file.comments.as_ref().and_then(|comments| comments.model.as_deref());
    if let Some(table) = comment.and_then(|text| ranges::table_in(&String::from_utf8_lossy(text))) {
        ranges::cut_table(&mut model, &table, "the model's comment");
    }
    Ok(model)
}

/// A joint's keys as local-space channels. The SDK's animated local transform is
/// `T(bind position)·R(bind rotation)·T(key position)·R(key rotation)`, so the rotation keys become
/// `bind rotation × key` (slerp commutes with a fixed left factor) and the position keys
/// `bind position + bind rotation × key`, tangents turned alike (a Hermite curve commutes with an
/// affine map): the model's channels then replace the rest pose's parts, as glTF's do.
pub(super) fn joint_channels(index: usize, joint: &AnimatedJoint) -> Vec<Channel> {
    let mut channels = Vec::new();
    let times = |times: Vec<f32>| KeyTimes::from_list(times);
    if !joint.rotation_keys.is_empty() {
        let values =
            joint.rotation_keys.iter().flat_map(|&(_, key)| (joint.bind_rotation * key).normalize().to_array()).collect();
        channels.push(Channel {
            joint: index,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: times(joint.rotation_keys.iter().map(|key| key.0).collect()),
            mask: 0b1111,
            base: Vec4::ZERO,
            implied_w: false,
            wraps: false,
            values,
        });
    }
    if !joint.position_keys.is_empty() {
        let mut values = Vec::with_capacity(joint.position_keys.len() * 9);
        for (key, tangent) in joint.position_keys.iter().zip(&joint.tangents) {
            values.extend((joint.bind_rotation * tangent.incoming).to_array());
            values.extend((joint.bind_translation + joint.bind_rotation * key.value).to_array());
            values.extend((joint.bind_rotation * tangent.outgoing).to_array());
        }
        channels.push(Channel {
            joint: index,
            property: Property::Translation,
            interpolation: Interpolation::Hermite,
            times: times(joint.position_keys.iter().map(|key| key.time).collect()),
            mask: 0b0111,
            base: Vec4::ZERO,
            implied_w: false,
            wraps: false,
            values,
        });
    }
    channels
}

/// A vertex's influences by the SDK's rule (see the module notes), in skeleton indices; `None`
/// when it follows no joint.
pub(super) fn vertex_influences(
    vertex: &Ms3dVertex,
    extra: Option<&Ms3dVertexExtra>,
    skeleton_index: &[usize],
) -> Option<Vec<Influence>> {
    let (extra_ids, weights) = extra.map_or(([-1i8; 3], [0u8; 3]), |extra| (extra.bone_ids, extra.weights));
    let [first, second, third] = extra_ids;
    let ids = [vertex.bone_id, first, second, third];
    let [w0, w1, w2] = weights.map(i32::from);
    let percents = if w0 == 0 && w1 == 0 && w2 == 0 { [100, 0, 0, 0] } else { [w0, w1, w2, 100 - w0 - w1 - w2] };
    let joint_of =
        |id: i8| usize::try_from(id).ok().and_then(|id| skeleton_index.get(id)).and_then(|&joint| u32::try_from(joint).ok());
    let raw: Vec<Influence> = ids
        .iter()
        .zip(percents)
        .filter(|&(_, percent)| percent > 0)
        .filter_map(|(&id, percent)| Some(Influence { joint: joint_of(id)?, weight: percent as f32 }))
        .collect();
    normalize_influences(&raw).or_else(|| joint_of(vertex.bone_id).map(|joint| vec![Influence { joint, weight: 1.0 }]))
}

pub(super) struct Geometry {
    pub(super) vertices: Vec<Vertex>,
    pub(super) influences: Vec<Influence>,
    pub(super) indices: Vec<u32>,
    pub(super) meshes: Vec<Mesh>,
    pub(super) max_influences: usize,
    pub(super) uses_root: bool,
    pub(super) uses_default_material: bool,
    /// Per vertex of the file, the first model vertex it became (`None`: no triangle uses it).
    pub(super) file_vertices: Vec<Option<u32>>,
}

/// A triangle corner's identity for splitting: the file vertex, and the bit patterns of its normal
/// and texture coordinates.
pub(super) type CornerKey = (u16, [u32; 5]);

pub(super) fn build_geometry(
    file: &Ms3dFile,
    file_influences: &[Option<Vec<Influence>>],
    root_joint: u32,
    path: &Path,
    layout: &Layout,
) -> Result<Geometry, FormatError> {
    let too_many = || {
        byte_error(
            path,
            layout.groups.first().copied().unwrap_or(0),
            "expected fewer than 2^32 vertices and indices in all, found more",
        )
    };
    let root = [Influence { joint: root_joint, weight: 1.0 }];
    let mut geometry = Geometry {
        vertices: Vec::new(),
        influences: Vec::new(),
        indices: Vec::new(),
        meshes: Vec::new(),
        max_influences: 0,
        uses_root: false,
        uses_default_material: false,
        file_vertices: vec![None; file.vertices.len()],
    };
    let mut corners: HashMap<CornerKey, u32> = HashMap::new();
    for group in &file.groups {
        if group.triangle_indices.is_empty() {
            continue;
        }
        let first_index = u32::try_from(geometry.indices.len()).map_err(|_| too_many())?;
        for &triangle_index in &group.triangle_indices {
            // Checked by validate.
            let Some(triangle) = file.triangles.get(usize::from(triangle_index)) else { continue };
            let positions = triangle
                .vertex_indices
                .map(|index| file.vertices.get(usize::from(index)).map_or(Vec3::ZERO, |vertex| vertex.position));
            let [a, b, c] = positions;
            let face_normal = (b - a).cross(c - a);
            let corner_data = triangle.vertex_indices.iter().zip(&triangle.normals).zip(triangle.s.iter().zip(&triangle.t));
            for ((&vertex_index, &normal), (&s, &t)) in corner_data {
                let key = (vertex_index, [normal.x.to_bits(), normal.y.to_bits(), normal.z.to_bits(), s.to_bits(), t.to_bits()]);
                let index = match corners.get(&key) {
                    Some(&index) => index,
                    None => {
                        let index = u32::try_from(geometry.vertices.len()).map_err(|_| too_many())?;
                        let file_vertex = usize::from(vertex_index);
                        let influences = match file_influences.get(file_vertex).and_then(Option::as_ref) {
                            Some(influences) => influences.as_slice(),
                            None => {
                                geometry.uses_root = true;
                                root.as_slice()
                            }
                        };
                        let first_influence = u32::try_from(geometry.influences.len()).map_err(|_| too_many())?;
                        let influence_count = u32::try_from(influences.len()).map_err(|_| too_many())?;
                        geometry.influences.extend_from_slice(influences);
                        geometry.max_influences = geometry.max_influences.max(influences.len());
                        geometry.vertices.push(Vertex {
                            position: file.vertices.get(file_vertex).map_or(Vec3::ZERO, |vertex| vertex.position),
                            normal: normal.try_normalize().or_else(|| face_normal.try_normalize()).unwrap_or(Vec3::Y),
                            tangent: Vec4::X,
                            uv: Vec2::new(s, t),
                            color: Vec4::ONE,
                            first_influence,
                            influence_count,
                        });
                        corners.insert(key, index);
                        if let Some(first) = geometry.file_vertices.get_mut(file_vertex).filter(|first| first.is_none()) {
                            *first = Some(index);
                        }
                        index
                    }
                };
                geometry.indices.push(index);
            }
        }
        let index_count = u32::try_from(geometry.indices.len()).map_err(|_| too_many())?.saturating_sub(first_index);
        let material = match usize::try_from(group.material_index) {
            Ok(material) => material,
            Err(_) => {
                geometry.uses_default_material = true;
                file.materials.len()
            }
        };
        geometry.meshes.push(Mesh { name: group.name.text().into_owned(), first_index, index_count, material });
    }
    compute_tangents(&mut geometry.vertices, &geometry.indices);
    Ok(geometry)
}

// ---------------------------------------------------------------------------------------------
// Materials
// ---------------------------------------------------------------------------------------------

/// A material; a texture that cannot be had is a warning naming it and the paths tried.
pub(super) fn load_material(
    material: &Ms3dMaterial,
    folder: &Path,
    textures: &mut texture::Library,
    warnings: &mut Vec<String>,
) -> Material {
    let name = material.name.text().into_owned();
    // The SDK gives every colour the material's transparency as alpha.
    let base_color = material.diffuse.truncate().extend(material.transparency.clamp(0.0, 1.0));
    let written = material.texture.text();
    if written.trim().is_empty() {
        return Material { name, base_color, texture: None, normal_map: None };
    }
    let texture = texture::find(&written, folder, textures, &name, warnings);
    Material { name, base_color, texture, normal_map: None }
}
