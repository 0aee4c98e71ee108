//! FBX (binary and ASCII, 6.1 to 7.7) through the `ufbx` crate: FBX is a large, loosely specified
//! format that ufbx reads as the authoring tools write it (pivots, pre-rotations, geometric
//! transforms, takes), so this loader only maps its scene onto a [`Model`].
//!
//! - Every node but the scene root is a joint, parents first. The scene root carries ufbx's
//!   conversion to Y-up metres, which becomes the top-level joints' `pre`.
//! - Skinned meshes are put in the bind pose in world space through each skin's clusters, whose
//!   bind matrices give their bones' inverse binds; other joints bind at their rest pose, and an
//!   unskinned mesh follows its own node.
//! - Every animation stack is baked by ufbx into linear translation, rotation and scale keys per
//!   node, which the GPU samples like any other format's keys. A clip's time 0 is its stack's start.
//!
//! - Each material's diffuse colour, and its diffuse (or PBR base colour) texture: embedded, or
//!   the file it names found as the other formats find theirs.
//!
//! - Blend shapes become morph targets on the model's vertices (sparse, model space) and their
//!   animated DeformPercent each stack's weight channels, which the skin pass morphs by.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::{Mat3, Mat4, Quat, Vec2, Vec3, Vec4};

use crate::anim::{
    Aabb, Animation, Channel, Influence, Interpolation, Joint, JointPose, KeyTimes, Property, Skeleton, WeightChannel,
};
use crate::formats::{files, texture, FormatError};
use crate::model::{
    compute_normals, compute_tangents, normalize_influences, FileLayout, FileMesh, LoadStats, Material, Mesh, Model, MorphTarget,
    Vertex,
};

/// ufbx may use this many bytes for each byte of the file (and at least [`MIN_MEMORY`]): time and
/// memory stay in proportion to the file.
const MEMORY_PER_BYTE: usize = 64;
const MIN_MEMORY: usize = 64 << 20;

pub fn load(path: &Path) -> Result<Model, FormatError> {
    let bytes = files::read(path, files::MAX_MODEL_BYTES).map_err(|message| FormatError::in_file(path, message))?;
    from_bytes(&bytes, path)
}

/// [`load`] from the file's bytes (`path` names it in errors and the model).
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Model, FormatError> {
    let error = |message: String| FormatError::in_file(path, message);
    let limit = bytes.len().saturating_mul(MEMORY_PER_BYTE).max(MIN_MEMORY);
    let mut options = ufbx::LoadOpts {
        target_axes: ufbx::CoordinateAxes::right_handed_y_up(),
        target_unit_meters: 1.0,
        generate_missing_normals: true,
        // Maya's segment scale compensation and other inheritance that is not plain parent *
        // child: scale helper nodes (joints here) make it plain, so the GPU composes as ufbx does.
        inherit_mode_handling: ufbx::InheritModeHandling::Compensate,
        ..Default::default()
    };
    options.result_allocator.memory_limit = limit;
    options.temp_allocator.memory_limit = limit;
    let scene = ufbx::load_memory(bytes, options).map_err(|problem| {
        error(format!("expected an FBX file (binary or ASCII, 6.1 to 7.7) ufbx can read: {}", reason(&problem)))
    })?;
    let mut warnings = Vec::new();

    // Joints: every node but the root, parents before children.
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
    // A skin's vertices go into model space by its first cluster's geometry-to-world (`to_model`
    // below), and each bone's inverse bind is the cluster's geometry-to-bone from there: skinning
    // then gives what ufbx's own evaluation gives even where the clusters disagree on the
    // geometry's bind pose (3ds Max's geometric transforms).
    for skin in scene.skin_deformers.iter() {
        let Some(first) = skin.clusters.iter().next() else { continue };
        let model_to_geometry = matrix(&first.geometry_to_world).inverse();
        for cluster in skin.clusters.iter() {
            if let Some(joint) = cluster.bone_node.as_ref().and_then(|bone| joint_of.get(&bone.element.typed_id)) {
                joints[*joint].inverse_bind = matrix(&cluster.geometry_to_bone) * model_to_geometry;
            }
        }
    }

    // Materials, by ufbx's order: the diffuse colour, and the diffuse (or PBR base colour) texture,
    // embedded in the file or found beside it.
    let folder = path.parent().unwrap_or(Path::new(""));
    let mut textures = texture::Library::default();
    let material_of: HashMap<u32, usize> =
        scene.materials.iter().enumerate().map(|(index, material)| (material.element.typed_id, index)).collect();
    let mut materials: Vec<Material> = scene
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
                out.texture = diffuse_texture(found, folder, &mut textures, &out.name, &mut warnings);
                if out.texture.is_some() {
                    // The texture is the colour (FBX's diffuse colour is what shows without one).
                    out.base_color = Vec4::ONE;
                }
            }
            out
        })
        .collect();

    let (mut vertices, mut influences, mut indices, mut meshes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut unnormalized = false;
    let mut max_influences = 0;
    let mut file_meshes = Vec::new();
    let mut morph_targets = Vec::new();
    // Each blend channel's target, by the channel's element id (what the baked weights name).
    let mut target_of_channel: HashMap<u32, usize> = HashMap::new();
    for mesh in scene.meshes.iter() {
        let Some(node) = mesh.element.instances.iter().next() else { continue };
        let Some(&node_joint) = joint_of.get(&node.element.typed_id) else { continue };
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
            None => joints[node_joint].inverse_bind.inverse() * matrix(&node.geometry_to_node),
        };
        let normal_matrix = Mat3::from_mat4(to_model).inverse().transpose();
        // Each control point's influences, normalized.
        let point_influences: Vec<Vec<Influence>> = (0..mesh.num_vertices)
            .map(|point| {
                let rigid = vec![Influence { joint: node_joint as u32, weight: 1.0 }];
                let Some(skin) = &skin else { return rigid };
                let Some(entry) = skin.vertices.get(point) else { return rigid };
                let weights = &skin.weights.as_ref()[entry.weight_begin as usize..][..entry.num_weights as usize];
                let raw: Vec<Influence> = weights
                    .iter()
                    .filter_map(|weight| {
                        let bone = skin.clusters.get(weight.cluster_index as usize)?.bone_node.as_ref()?;
                        Some(Influence { joint: *joint_of.get(&bone.element.typed_id)? as u32, weight: weight.weight as f32 })
                    })
                    .collect();
                let sum: f32 = raw.iter().map(|influence| influence.weight).sum();
                unnormalized |= !raw.is_empty() && (sum - 1.0).abs() > 1e-3;
                normalize_influences(&raw).unwrap_or(rigid)
            })
            .collect();
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
            let material = match mesh.materials.get(slot).and_then(|material| material_of.get(&material.element.typed_id)) {
                Some(&material) => material,
                None => {
                    materials.push(Material::untextured(format!("{} (no material)", mesh.element.name)));
                    materials.len() - 1
                }
            };
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
            if channel.keyframes.len() > 1 {
                warnings.push(format!(
                    "blend shape \"{}\" has {} in-between shapes; vkskin reads the full one",
                    channel.element.name,
                    channel.keyframes.len() - 1
                ));
            }
            let Some(shape) = channel.target_shape.as_ref() else { continue };
            target_of_channel.insert(channel.element.element_id, morph_targets.len());
            morph_targets.push(blend_target(
                channel,
                shape,
                mesh_first_vertex as u32,
                &vertex_points,
                mesh.num_vertices,
                &linear,
            ));
        }
    }
    if unnormalized {
        warnings.push("skin weights that do not sum to 1 were normalized".to_string());
    }
    if vertices.iter().all(|vertex| vertex.normal == Vec3::ZERO) {
        compute_normals(&mut vertices, &indices);
    }
    compute_tangents(&mut vertices, &indices);

    // The bind pose's extent (`Model::extent`), which the baking's key reduction is measured in.
    let extent = Aabb::from_points(vertices.iter().map(|vertex| vertex.position)).extent().max(f32::MIN_POSITIVE);
    let mut animations = Vec::new();
    for stack in scene.anim_stacks.iter() {
        let baked = ufbx::bake_anim(&scene, &stack.anim, bake_options(extent))
            .map_err(|problem| error(format!("animation stack \"{}\": {}", stack.element.name, problem.description)))?;
        let start = stack.time_begin;
        let (mut channels, mut key_bytes) = (Vec::new(), 0);
        let mut add = |joint: usize, property: Property, mask: u8, times: Vec<f32>, values: Vec<f32>| {
            if times.is_empty() {
                return;
            }
            key_bytes += 4 * (times.len() + values.len());
            let times = KeyTimes::from_list(times);
            let channel = Channel {
                joint,
                property,
                interpolation: Interpolation::Linear,
                times,
                mask,
                base: Vec4::ZERO,
                implied_w: false,
                wraps: false,
                values,
            };
            channels.push(channel);
        };
        let seconds = |time: f64| (time - start) as f32;
        for baked_node in baked.nodes.iter() {
            let Some(&joint) = joint_of.get(&baked_node.typed_id) else { continue };
            let vectors = |keys: &[ufbx::BakedVec3]| {
                let times = keys.iter().map(|key| seconds(key.time)).collect();
                (times, keys.iter().flat_map(|key| vec3(key.value).to_array()).collect())
            };
            let (times, values) = vectors(&baked_node.translation_keys);
            add(joint, Property::Translation, 0b0111, times, values);
            let rotations = &baked_node.rotation_keys;
            let times = rotations.iter().map(|key| seconds(key.time)).collect();
            add(joint, Property::Rotation, 0b1111, times, rotations.iter().flat_map(|key| quat(key.value).to_array()).collect());
            let (times, values) = vectors(&baked_node.scale_keys);
            add(joint, Property::Scale, 0b0111, times, values);
        }
        // Blend channels' DeformPercent, 0 to 100, as weights.
        let mut weights = Vec::new();
        for element in baked.elements.iter() {
            let Some(&target) = target_of_channel.get(&element.element_id) else { continue };
            let Some(percent) = element.props.iter().find(|prop| prop.name.as_ref() == "DeformPercent") else { continue };
            key_bytes += 8 * percent.keys.len();
            weights.push(WeightChannel {
                target,
                interpolation: Interpolation::Linear,
                times: KeyTimes::from_list(percent.keys.iter().map(|key| seconds(key.time)).collect()),
                values: percent.keys.iter().map(|key| key.value.x as f32 / 100.0).collect(),
            });
        }
        let duration = (stack.time_end - stack.time_begin).max(0.0) as f32;
        animations.push(Animation {
            name: stack.element.name.to_string(),
            duration,
            frame_rate: Some(scene.settings.frames_per_second as f32).filter(|rate| *rate > 0.0),
            channels,
            file_key_bytes: key_bytes,
            source: None,
            weights,
        });
    }

    let name = path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    let mut model = Model {
        name,
        vertices,
        influences,
        indices,
        meshes,
        materials,
        skeleton: Skeleton { joints },
        animations,
        clips: Vec::new(),
        bounds: Default::default(),
        levels: Vec::new(),
        stats: LoadStats { max_influences, warnings },
        layout: FileLayout {
            to_model: conversion,
            // ufbx's node order is the file's; the joints sorted by depth from it.
            joint_order: {
                let mut order: Vec<u32> = (0..nodes.len() as u32).collect();
                order.sort_by_key(|&joint| nodes[joint as usize].element.typed_id);
                order
            },
            meshes: file_meshes,
        },
        morph_targets,
    };
    model.clip_each_animation();
    Ok(model)
}

/// What ufbx says went wrong: its description, its detail, and where in its reading it was (the
/// innermost frames of its error stack: "Failed to load" alone says nothing).
fn reason(problem: &ufbx::Error) -> String {
    let mut text = problem.description.to_string();
    if !problem.info().is_empty() {
        text += &format!(" ({})", problem.info());
    }
    let frames: Vec<String> = problem
        .stack
        .iter()
        .take(problem.stack_size as usize)
        .map(|frame| frame.description.to_string())
        .filter(|description| !description.is_empty() && *description != text)
        .take(2)
        .collect();
    if !frames.is_empty() {
        text += &format!(": {}", frames.join(", in "));
    }
    text
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

/// How stacks are baked: every curve resampled at [`RESAMPLE_RATE`] (dense files included: their
/// cubic curves between frames are not linear either), then the keys that linear interpolation
/// reproduces within 1e-5 of the model's `extent` (1e-5 for rotations, at most) dropped again.
/// Measured against ufbx's own evaluation between frames: at 240 Hz without reduction the
/// Quaternius characters were 2.7e-4 of their extent off; at 480 Hz they are within 1e-4
/// (`tests/it/fbx_loader.rs`).
fn bake_options(extent: f32) -> ufbx::BakeOpts {
    ufbx::BakeOpts {
        resample_rate: RESAMPLE_RATE,
        minimum_sample_rate: RESAMPLE_RATE,
        maximum_sample_rate: RESAMPLE_RATE,
        key_reduction_enabled: true,
        key_reduction_rotation: true,
        key_reduction_threshold: 1e-5 * f64::from(extent.min(1.0)),
        ..Default::default()
    }
}

const RESAMPLE_RATE: f64 = 480.0;

/// ufbx's 3×4 matrix (column-major, f64) as glam's.
pub fn matrix(m: &ufbx::Matrix) -> Mat4 {
    Mat4::from_cols(
        Vec4::new(m.m00 as f32, m.m10 as f32, m.m20 as f32, 0.0),
        Vec4::new(m.m01 as f32, m.m11 as f32, m.m21 as f32, 0.0),
        Vec4::new(m.m02 as f32, m.m12 as f32, m.m22 as f32, 0.0),
        Vec4::new(m.m03 as f32, m.m13 as f32, m.m23 as f32, 1.0),
    )
}

fn vec3(v: ufbx::Vec3) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

fn vec2(v: ufbx::Vec2) -> Vec2 {
    Vec2::new(v.x as f32, v.y as f32)
}

fn quat(q: ufbx::Quat) -> Quat {
    Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32).normalize()
}
