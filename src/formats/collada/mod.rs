//! COLLADA 1.4.1 / 1.5 (`.dae`) into the one [`Model`], on `roxmltree` (a maintained XML reader
//! that keeps every element's position, for errors that name the line and column).
//!
//! - `document`: ids, errors, number arrays through their accessors.
//! - `scene`: the `<visual_scene>` node tree and its rest transforms.
//! - `geometry`: meshes (`<triangles>`, `<polylist>`, `<polygons>`).
//! - `skin`: controllers (bind shape, joints, inverse binds, every influence).
//! - `material`: diffuse colours and textures.
//! - `animation`: matrix channels and clips.
//!
//! The skeleton is every node a skin names as a joint, and every node that instances a rigid
//! geometry (a joint of its own, like glTF's rigid meshes). A joint's parent is its nearest joint
//! ancestor; the nodes between go into its fixed `pre` transform, and for a root joint every
//! ancestor, with the up-axis and unit conversion (`<asset>`: Z_UP or X_UP to vkskin's Y-up,
//! `<unit meter>` to metres) in front. A skin's bind shape matrix is moved into its vertices.

mod animation;
mod clips;
mod document;
mod geometry;
mod keys;
mod material;
mod resample;
mod scene;
mod skin;

use std::collections::HashMap;
use std::path::Path;

use glam::{Mat3, Mat4, Vec3};

use super::{files, texture, FormatError};
use crate::anim::{Animation, Clip, Influence, Joint, JointPose, Skeleton};
use crate::model::{
    compute_normals, compute_tangents, normalize_influences, FileLayout, FileMesh, LoadStats, Mesh, Model, MorphTarget, Vertex,
};
use document::Document;

/// Candidate nodes tried for skin joint names in one load (see `Scene::find_under`).
const LOOKUP_STEPS: usize = 1 << 24;

/// Vertices, and triangles, that instances may add by drawing a geometry another instance already
/// draws: this many, plus one a [`BYTES_PER_REPEATED`] bytes of the file. A geometry's first
/// instance costs what the file holds; this leaves room for drawing props or parts again many
/// times over, while a file that repeats an instance thousands of times cannot ask for gigabytes.
const MAX_REPEATED_ALLOWANCE: usize = 1 << 18;
const BYTES_PER_REPEATED: usize = 16;

/// Keys that the animations made for clips may hold in all: this many, plus
/// [`MAX_CLIP_KEYS_PER_KEY`] times the keys the file's animations make. Clips that share their
/// animations share one copy; clips over overlapping sets (a walk, and the walk with a wave on
/// top) copy what they share, which a file of many such clips could turn into gigabytes.
const MAX_CLIP_KEYS_ALLOWANCE: usize = 1 << 21;
const MAX_CLIP_KEYS_PER_KEY: usize = 4;

/// Elements in one file (roxmltree's own cap; a file holds at most this many nodes).
const MAX_XML_NODES: u32 = 1 << 26;

/// Loads a `.dae` file, with its textures from the same folder.
/// Without culling cells: [`crate::formats::load_model`] adds them.
pub fn load(path: &Path) -> Result<Model, FormatError> {
    let text = files::read_text(path, files::MAX_MODEL_BYTES).map_err(|message| FormatError::in_file(path, message))?;
    load_from_str(&text, path, path.parent().unwrap_or(Path::new("")))
}

/// Loads COLLADA text; textures are looked for in `folder`. The fuzz target's entry.
pub fn load_from_str(text: &str, path: &Path, folder: &Path) -> Result<Model, FormatError> {
    check_nesting(text, path)?;
    let options = roxmltree::ParsingOptions { allow_dtd: false, nodes_limit: MAX_XML_NODES };
    let xml = roxmltree::Document::parse_with_options(text, options).map_err(|error| {
        let position = error.pos();
        FormatError::at_line(path, position.row as usize, format!("expected well-formed XML (column {}): {error}", position.col))
    })?;
    let root = xml.root_element();
    if !root.has_tag_name("COLLADA") {
        return Err(FormatError::at_line(
            path,
            xml.text_pos_at(root.range().start).row as usize,
            format!("expected a <COLLADA> root element, found <{}>", root.tag_name().name()),
        ));
    }
    let document = Document::new(&xml, path)?;
    let mut warnings = Vec::new();
    let convert = asset_conversion(&document)?;
    let scene = scene::read(&document, &mut warnings)?;

    // Instances: skinned meshes (controllers) and rigid ones (geometries), with their materials.
    struct Instance<'a, 'input> {
        /// The `<instance_controller>` or `<instance_geometry>` element.
        element: roxmltree::Node<'a, 'input>,
        node: usize,
        skin: Option<usize>,
        geometry: roxmltree::Node<'a, 'input>,
        bindings: HashMap<&'a str, roxmltree::Node<'a, 'input>>,
        /// A skinned instance's `<skeleton>` roots: where its joint names are looked up first.
        roots: Vec<usize>,
        /// The node of each of its skin's joints.
        joint_nodes: Vec<usize>,
        /// An unskinned `<morph>` controller's targets (a skinned one's are its skin's).
        morph: Option<skin::Morph<'a, 'input>>,
    }
    let mut skins: Vec<skin::Skin> = Vec::new();
    let mut skin_of: HashMap<roxmltree::NodeId, usize> = HashMap::new();
    let mut instances = Vec::new();
    // What makes two instances draw the same thing: the element's kind, what it instances, its
    // material bindings and skeleton roots, and for a rigid geometry the scene node that places it
    // (a skin places its mesh itself).
    type Sameness = (bool, roxmltree::NodeId, Vec<(String, u32)>, Vec<usize>, Option<usize>);
    let mut seen: std::collections::HashSet<Sameness> = std::collections::HashSet::new();
    for (index, node) in scene.nodes.iter().enumerate() {
        for element in node
            .element
            .children()
            .filter(|child| child.has_tag_name("instance_controller") || child.has_tag_name("instance_geometry"))
        {
            let target = document.lookup(element, document.attribute(element, "url")?)?;
            let mut bindings = HashMap::new();
            for binding in element.descendants().filter(|child| child.has_tag_name("instance_material")) {
                bindings.insert(
                    document.attribute(binding, "symbol")?,
                    document.lookup(binding, document.attribute(binding, "target")?)?,
                );
            }
            let controller = element.has_tag_name("instance_controller");
            let mut roots = Vec::new();
            for root in element.children().filter(|child| controller && child.has_tag_name("skeleton")) {
                let id = root.text().unwrap_or("").trim().trim_start_matches('#');
                roots.push(scene.by_id(id).ok_or_else(|| {
                    document.error(root, format!("expected a node with id {} in the scene, found none", files::quoted(id)))
                })?);
            }
            let mut sorted: Vec<(String, u32)> =
                bindings.iter().map(|(symbol, target)| (symbol.to_string(), target.id().get())).collect();
            sorted.sort();
            let placed_by = if controller { None } else { Some(index) };
            if !seen.insert((controller, target.id(), sorted, roots.clone(), placed_by)) {
                // The same mesh drawn again in the same place: once is what the file shows.
                document.warn("repeated instance", element, || {
                    format!(
                        "<{}> of {} repeated where it draws the same thing again: drawn once",
                        element.tag_name().name(),
                        files::quoted(target.attribute("id").unwrap_or(""))
                    )
                });
                continue;
            }
            if controller {
                if let Some(morph) = skin::morph(&document, target)? {
                    instances.push(Instance {
                        element,
                        node: index,
                        skin: None,
                        geometry: morph.base,
                        bindings,
                        roots: Vec::new(),
                        joint_nodes: Vec::new(),
                        morph: Some(morph),
                    });
                    continue;
                }
                let skin = match skin_of.get(&target.id()) {
                    Some(&skin) => skin,
                    None => {
                        skins.push(skin::read(&document, target)?);
                        skin_of.insert(target.id(), skins.len() - 1);
                        skins.len() - 1
                    }
                };
                let geometry = skins[skin].geometry;
                instances.push(Instance {
                    element,
                    node: index,
                    skin: Some(skin),
                    geometry,
                    bindings,
                    roots,
                    joint_nodes: Vec::new(),
                    morph: None,
                });
            } else {
                instances.push(Instance {
                    element,
                    node: index,
                    skin: None,
                    geometry: target,
                    bindings,
                    roots: Vec::new(),
                    joint_nodes: Vec::new(),
                    morph: None,
                });
            }
        }
    }

    // Names with spaces, written as words (3ds Max): put back together against the nodes.
    for skin in skins.iter_mut().filter(|skin| !skin.joint_words.is_empty()) {
        if let Some(names) = skin::regroup_names(&skin.joint_words, skin.joints.len(), |name| scene.knows(name)) {
            skin.joints = names;
        }
    }
    // The joints: skin joints by sid, id or name, and each rigid instance's node.
    let mut is_joint = vec![false; scene.nodes.len()];
    let mut steps = LOOKUP_STEPS;
    for instance in instances.iter_mut() {
        let Some(skin) = instance.skin else { continue };
        for name in &skins[skin].joints {
            let node = scene.find_under(name, &instance.roots, &mut steps).ok_or_else(|| {
                let reason =
                    if steps == 0 { "the joint lookups took too many steps" } else { "no node has that sid, id or name" };
                document.error(skins[skin].names_element, format!("the skin's joint {}: {reason}", files::quoted(name)))
            })?;
            is_joint[node] = true;
            instance.joint_nodes.push(node);
        }
    }
    for instance in instances.iter().filter(|instance| instance.skin.is_none()) {
        is_joint[instance.node] = true;
    }
    // An animated node above a joint becomes a joint too, so its motion reaches the joints below
    // (a fixed `pre` cannot carry it). Children come after their parents in the scene's order.
    let keys = animation::read(&document, &scene, &mut warnings)?;
    let mut animated = vec![false; scene.nodes.len()];
    for node_keys in &keys {
        animated[node_keys.node] = true;
    }
    // A scene of animated nodes and nothing to draw is a file of clips (`--anim`): its animated
    // nodes are the joints.
    if instances.is_empty() {
        if keys.is_empty() {
            return Err(document.error(
                root,
                "expected an <instance_controller> or <instance_geometry> in the scene, or animated nodes, found neither",
            ));
        }
        is_joint.clone_from(&animated);
    }
    let mut joint_below = vec![false; scene.nodes.len()];
    for index in (0..scene.nodes.len()).rev() {
        if animated[index] && joint_below[index] {
            is_joint[index] = true;
        }
        if let Some(parent) = scene.nodes[index].parent {
            joint_below[parent] |= is_joint[index] || joint_below[index];
        }
    }
    // Parents first (the scene's order), each joint's nearest joint ancestor and the transform of
    // the nodes between, in one pass down the tree.
    let mut joint_of_node = vec![None; scene.nodes.len()];
    let mut above: Vec<(Option<usize>, Mat4)> = Vec::with_capacity(scene.nodes.len());
    let mut skeleton = Skeleton::default();
    let mut joint_nodes = Vec::new();
    for (index, node) in scene.nodes.iter().enumerate() {
        let (parent_joint, between) = match node.parent {
            None => (None, convert),
            Some(parent) => match joint_of_node[parent] {
                Some(joint) => (Some(joint), Mat4::IDENTITY),
                None => (above[parent].0, above[parent].1 * scene.nodes[parent].local),
            },
        };
        above.push((parent_joint, between));
        if is_joint[index] {
            let bind = convert * scene.global[index];
            let mut joint = Joint::new(node.name.clone(), parent_joint, bind.inverse(), JointPose::IDENTITY);
            let (scale, rotation, translation) = node.local.to_scale_rotation_translation();
            joint.rest = JointPose { rotation, translation, scale };
            joint.pre = between;
            joint_of_node[index] = Some(skeleton.joints.len());
            skeleton.joints.push(joint);
            joint_nodes.push(index);
        }
    }
    // A skin's inverse bind matrices replace the rest-pose ones (they define the bind pose).
    let inverse_convert = convert.inverse();
    for instance in &instances {
        let Some(skin) = instance.skin.and_then(|skin| skins.get(skin)) else { continue };
        for (&node, inverse_bind) in instance.joint_nodes.iter().zip(&skin.inverse_binds) {
            if let Some(joint) = joint_of_node[node] {
                skeleton.joints[joint].inverse_bind = *inverse_bind * inverse_convert;
            }
        }
    }
    // Numbers past f32 on the way (a scale of 3e38 times 10, a singular node): refused at the node.
    if let Some((joint, &node)) = skeleton.joints.iter().zip(&joint_nodes).find(|(joint, _)| {
        !joint.inverse_bind.is_finite() || !joint.rest.translation.is_finite() || !joint.rest.rotation.is_finite()
    }) {
        return Err(document.error(
            scene.nodes[node].element,
            format!(
                "joint {}: expected a finite bind pose, found numbers past f32 (its transforms, the unit or its inverse \
                 bind matrix too large, or a transform that cannot be inverted)",
                files::quoted(&joint.name)
            ),
        ));
    }

    // Vertices and parts.
    let mut textures = texture::Library::default();
    let mut vertices = Vec::new();
    let mut influences = Vec::new();
    let mut indices = Vec::new();
    let mut meshes = Vec::new();
    let mut materials = Vec::new();
    let mut material_index: HashMap<Option<roxmltree::NodeId>, usize> = HashMap::new();
    let mut max_influences = 0;
    let mut needs_normals = false;
    // Each geometry is read once, however many instances draw it, and what drawing it again adds
    // stays in proportion to the file: neither memory nor the levels of detail get inputs out of
    // proportion to it.
    let mut meshes_read: HashMap<roxmltree::NodeId, geometry::MeshData> = HashMap::new();
    // Morph targets' geometries, each read once; and the offsets they add, in proportion to the file.
    let mut targets_read: HashMap<roxmltree::NodeId, geometry::MeshData> = HashMap::new();
    let mut morph_targets: Vec<MorphTarget> = Vec::new();
    let mut file_meshes: Vec<FileMesh> = Vec::new();
    let mut morph_offsets = 0usize;
    let limit = MAX_REPEATED_ALLOWANCE.saturating_add(text.len() / BYTES_PER_REPEATED);
    let (mut repeated_vertices, mut repeated_triangles) = (0usize, 0usize);
    for instance in &instances {
        let Some(data) = meshes_read.get(&instance.geometry.id()) else {
            meshes_read.insert(instance.geometry.id(), geometry::read(&document, instance.geometry)?);
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
    for instance in &instances {
        let data = &meshes_read[&instance.geometry.id()];
        let (to_model, joints_of_skin) = match instance.skin {
            Some(skin) => (convert * skins[skin].bind_shape, Some(&instance.joint_nodes)),
            None => (convert * scene.global[instance.node], None),
        };
        let normal_matrix = Mat3::from_mat4(to_model).inverse().transpose();
        let first_vertex = vertices.len() as u32;
        // Each position of the geometry's POSITION source: the first vertex split from it.
        let source_count = data.position_index.iter().map(|&index| index as usize + 1).max().unwrap_or(0);
        let name = scene.nodes[instance.node].name.clone();
        file_meshes.push(FileMesh::first_uses(name, source_count, first_vertex, &data.position_index));
        let normals_complete = data.normals.as_ref().is_some_and(|normals| normals.len() == data.positions.len());
        needs_normals |= !normals_complete;
        for (vertex, position) in data.positions.iter().enumerate() {
            let list: Vec<Influence> = match (instance.skin, joints_of_skin) {
                (Some(skin), Some(nodes)) => {
                    let given = skins[skin].weights.get(data.position_index[vertex] as usize).cloned().unwrap_or_default();
                    let mapped: Vec<Influence> = given
                        .iter()
                        .filter_map(|influence| {
                            let node = nodes.get(influence.joint as usize)?;
                            Some(Influence { joint: joint_of_node[*node]? as u32, weight: influence.weight })
                        })
                        .collect();
                    normalize_influences(&mapped).unwrap_or_default()
                }
                _ => joint_of_node[instance.node]
                    .map(|joint| vec![Influence { joint: joint as u32, weight: 1.0 }])
                    .unwrap_or_default(),
            };
            if list.is_empty() {
                let place = instance.skin.map_or(instance.element, |skin| skins[skin].weights_element);
                return Err(document.error(
                    place,
                    format!(
                        "vertex {vertex} of {}: expected a weight above 0 on a joint",
                        files::quoted(&scene.nodes[instance.node].name)
                    ),
                ));
            }
            let position = to_model.transform_point3(*position);
            if !position.is_finite() {
                return Err(document.error(
                    instance.element,
                    format!(
                        "vertex {vertex} of {}: expected a finite bind-pose position, found {position} (its numbers or \
                         transforms too large)",
                        files::quoted(&scene.nodes[instance.node].name)
                    ),
                ));
            }
            max_influences = max_influences.max(list.len());
            let normal =
                if normals_complete { data.normals.as_ref().map_or(Vec3::Y, |normals| normals[vertex]) } else { Vec3::Y };
            vertices.push(Vertex {
                position,
                normal: (normal_matrix * normal).normalize_or(Vec3::Y),
                tangent: glam::Vec4::X,
                uv: data.uvs[vertex],
                first_influence: influences.len() as u32,
                influence_count: list.len() as u32,
            });
            influences.extend(list);
        }
        let morph = instance.morph.as_ref().or_else(|| instance.skin.and_then(|skin| skins[skin].morph.as_ref()));
        if let Some(morph) = morph {
            for (index, (name, target)) in morph.targets.iter().enumerate() {
                let shape = match targets_read.entry(target.id()) {
                    std::collections::hash_map::Entry::Occupied(read) => read.into_mut(),
                    std::collections::hash_map::Entry::Vacant(slot) => slot.insert(geometry::read(&document, *target)?),
                };
                let target = morph_target(name, data, shape, morph.relative, Mat3::from_mat4(to_model))
                    .map_err(|message| document.error(instance.element, message))?;
                morph_offsets = morph_offsets.saturating_add(target.vertices.len());
                if morph_offsets > limit {
                    return Err(document.error(
                        instance.element,
                        format!(
                            "expected the morph targets to move at most {limit} vertices in all ({MAX_REPEATED_ALLOWANCE} \
                             plus one a {BYTES_PER_REPEATED} bytes of the file), found more"
                        ),
                    ));
                }
                let weight = morph.weights.get(index).copied().unwrap_or(0.0);
                morph_targets.push(MorphTarget {
                    vertices: target.vertices.iter().map(|&vertex| first_vertex + vertex).collect(),
                    default_weight: weight,
                    ..target
                });
            }
        }
        for part in &data.parts {
            let bound = part.material.as_deref().and_then(|symbol| instance.bindings.get(symbol)).copied();
            let material = match material_index.get(&bound.map(|node| node.id())) {
                Some(&material) => material,
                None => {
                    let made = match bound {
                        Some(node) => material::read(&document, node, folder, &mut textures, &mut warnings)?,
                        None => crate::model::Material::untextured("default"),
                    };
                    materials.push(made);
                    material_index.insert(bound.map(|node| node.id()), materials.len() - 1);
                    materials.len() - 1
                }
            };
            meshes.push(Mesh {
                name: scene.nodes[instance.node].name.clone(),
                first_index: indices.len() as u32,
                index_count: part.indices.len() as u32,
                material,
            });
            indices.extend(part.indices.iter().map(|&index| first_vertex + index));
        }
    }
    if needs_normals {
        compute_normals(&mut vertices, &indices);
    }
    compute_tangents(&mut vertices, &indices);

    // Animations: one of everything, or one per set of animations clips instance, each clip a
    // span of its set's (clips over the same animations share one: a thousand clips on one
    // timeline are a thousand spans, not a thousand copies).
    let clips = clips::clips(&document)?;
    let mut joint_channels: Vec<Option<[crate::anim::Channel; 3]>> = Vec::with_capacity(keys.len());
    for node_keys in &keys {
        joint_channels.push(match joint_of_node[node_keys.node] {
            Some(joint) => Some(clips::joint_channels(joint, node_keys, &mut warnings, &skeleton.joints[joint].name)),
            None => {
                document.warn("animated node not a joint", scene.nodes[node_keys.node].element, || {
                    format!(
                        "node {}: animated but not a joint; its animation is left out",
                        files::quoted(&scene.nodes[node_keys.node].name)
                    )
                });
                None
            }
        });
    }
    let mut animations: Vec<Animation> = Vec::new();
    let mut model_clips = Vec::new();
    let mut animation_of: HashMap<Vec<usize>, usize> = HashMap::new();
    let stem = path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    // Clips over overlapping sets of animations copy their keys: at most this many in all.
    let file_keys: usize = keys.iter().map(|node_keys| node_keys.times.len()).sum();
    let key_limit = MAX_CLIP_KEYS_ALLOWANCE.saturating_add(file_keys.saturating_mul(MAX_CLIP_KEYS_PER_KEY));
    let mut clip_keys = 0usize;
    for (clip, members) in clips::group(&keys, &clips) {
        let members: Vec<usize> = members.into_iter().filter(|&member| joint_channels[member].is_some()).collect();
        if members.is_empty() {
            continue;
        }
        let (name, start, end) = match clip {
            Some(clip) => (clip.name.clone(), clip.start, clip.end),
            None => (stem.clone(), 0.0, None),
        };
        let duration = members.iter().map(|&member| keys[member].times.last().copied().unwrap_or(0.0)).fold(0.0f32, f32::max);
        let end = end.unwrap_or(duration).max(start);
        let animation_index = match animation_of.get(&members) {
            Some(&index) => index,
            None => {
                clip_keys = clip_keys.saturating_add(members.iter().map(|&member| keys[member].times.len()).sum::<usize>());
                if let Some(clip) = clip.filter(|_| clip_keys > key_limit) {
                    return Err(document.error(
                        clip.element,
                        format!(
                            "expected the clips' animations to hold at most {key_limit} keys in all \
                             ({MAX_CLIP_KEYS_ALLOWANCE} plus {MAX_CLIP_KEYS_PER_KEY} times the {file_keys} keys of the file's \
                             animations; clips over overlapping animations copy them), found more"
                        ),
                    ));
                }
                let channels = members.iter().filter_map(|&member| joint_channels[member].clone()).flatten().collect();
                animations.push(Animation {
                    name: name.clone(),
                    duration,
                    frame_rate: None,
                    channels,
                    file_key_bytes: members.iter().map(|&member| keys[member].file_bytes).sum(),
                    source: None,
                    weights: Vec::new(),
                });
                animation_of.insert(members, animations.len() - 1);
                animations.len() - 1
            }
        };
        let animation = &mut animations[animation_index];
        animation.duration = animation.duration.max(end);
        if !clips.is_empty() {
            model_clips.push(Clip { name, animation: animation_index, start, duration: end - start });
        }
    }

    warnings.extend(document.warnings());
    let mut model = Model {
        name: stem,
        vertices,
        influences,
        indices,
        meshes,
        materials,
        skeleton,
        animations,
        clips: model_clips,
        bounds: Default::default(),
        levels: Vec::new(),
        stats: LoadStats { max_influences, warnings, ..LoadStats::default() },
        // Per drawn instance, its geometry's POSITION source in order (vertices split per normal
        // and UV from one position are reported once).
        layout: FileLayout { to_model: convert, joint_order: Vec::new(), meshes: file_meshes },
        morph_targets,
        influence_offsets: Vec::new(),
    };
    model.clip_each_animation();
    Ok(model)
}

/// Elements nested deeper than this are refused before parsing: the XML reader recurses per level
/// (20,000 levels overflowed the main thread's stack); real COLLADA files nest a few dozen deep.
const MAX_NESTING: usize = 1024;

/// A linear scan for the nesting depth of the elements (comments, CDATA, processing instructions
/// and declarations skipped; an upper bound is all that is needed).
fn check_nesting(text: &str, path: &Path) -> Result<(), FormatError> {
    let bytes = text.as_bytes();
    let (mut depth, mut line, mut at) = (0usize, 1usize, 0usize);
    let skip_to = |from: usize, end: &str| text[from..].find(end).map_or(bytes.len(), |found| from + found + end.len());
    while at < bytes.len() {
        match bytes[at] {
            b'\n' => {
                line += 1;
                at += 1;
            }
            b'<' => {
                let rest = &text[at..];
                let next = if rest.starts_with("<!--") {
                    skip_to(at, "-->")
                } else if rest.starts_with("<![CDATA[") {
                    skip_to(at, "]]>")
                } else if rest.starts_with("<?") {
                    skip_to(at, "?>")
                } else if rest.starts_with("<!") {
                    skip_to(at, ">")
                } else {
                    let end = skip_to(at, ">");
                    let tag = &text[at..end];
                    if tag.starts_with("</") {
                        depth = depth.saturating_sub(1);
                    } else if !tag.ends_with("/>") {
                        depth += 1;
                        if depth > MAX_NESTING {
                            return Err(FormatError::at_line(
                                path,
                                line,
                                format!("expected elements nested at most {MAX_NESTING} deep, found deeper"),
                            ));
                        }
                    }
                    end
                };
                line += text[at..next].matches('\n').count();
                at = next;
            }
            _ => at += 1,
        }
    }
    Ok(())
}

/// `<asset>`: the up axis to Y-up and the unit to metres, as one transform in front of everything.
fn asset_conversion(document: &Document<'_, '_>) -> Result<Mat4, FormatError> {
    let root = document.xml.root_element();
    let Some(asset) = document.child(root, "asset") else { return Ok(Mat4::IDENTITY) };
    let scale = match document.child(asset, "unit").and_then(|unit| unit.attribute("meter").map(|meter| (unit, meter))) {
        Some((unit, meter)) => match meter.trim().parse::<f32>() {
            Ok(meter) if meter.is_finite() && meter > 0.0 => meter,
            _ => {
                return Err(
                    document.error(unit, format!("expected meter to be a positive number, found {}", files::quoted(meter)))
                )
            }
        },
        None => 1.0,
    };
    let axis = match document.child(asset, "up_axis").and_then(|axis| axis.text()).map(str::trim) {
        None | Some("Y_UP") => Mat4::IDENTITY,
        // Z up: +Z becomes +Y, +Y becomes -Z.
        Some("Z_UP") => Mat4::from_cols(glam::Vec4::X, glam::Vec4::NEG_Z, glam::Vec4::Y, glam::Vec4::W),
        // X up: +X becomes +Y, +Y becomes -X.
        Some("X_UP") => Mat4::from_cols(glam::Vec4::Y, glam::Vec4::NEG_X, glam::Vec4::Z, glam::Vec4::W),
        Some(other) => {
            let node = document.child(asset, "up_axis").unwrap_or(asset);
            return Err(document.error(node, format!("expected X_UP, Y_UP or Z_UP, found {}", files::quoted(other))));
        }
    };
    Ok(Mat4::from_scale(Vec3::splat(scale)) * axis)
}

/// One morph target on an instance's vertices (numbered from 0): per vertex of `base`, the offset
/// of the same position in `shape` (its `POSITION` source read in the same order), or the shape's
/// value itself for a RELATIVE morph, into model space by `linear`; only the vertices it moves.
fn morph_target(
    name: &str,
    base: &geometry::MeshData,
    shape: &geometry::MeshData,
    relative: bool,
    linear: Mat3,
) -> Result<MorphTarget, String> {
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
