//! Layout and validation: which optional sections a file has, references between its parts, and
//! the joints ordered parents first.

use super::{byte_error, to_u64};
use super::{
    Ms3dComment, Ms3dFile, GROUP_MIN_SIZE, HEADER_SIZE, JOINT_MIN_SIZE, JOINT_PARENT_NAME_OFFSET, KEY_SIZE, MATERIAL_SIZE,
    TRIANGLE_SIZE, VERTEX_SIZE,
};
use crate::formats::FormatError;
use ahash::AHashMap as HashMap;
use std::path::Path;

// ---------------------------------------------------------------------------------------------
// Layout and validation
// ---------------------------------------------------------------------------------------------

/// Which trailer sections [`write`] puts out: every present one and every one before it.
pub(super) struct Sections {
    pub(super) comments: bool,
    pub(super) vertex_extras: bool,
    pub(super) joint_extras: bool,
    pub(super) model_extra: bool,
}

impl Sections {
    pub(super) fn of(file: &Ms3dFile) -> Sections {
        let model_extra = file.model_extra.is_some();
        let joint_extras = model_extra || file.joint_extras.is_some();
        let vertex_extras = joint_extras || file.vertex_extras.is_some();
        let comments = vertex_extras || file.comments.is_some();
        Sections { comments, vertex_extras, joint_extras, model_extra }
    }
}

/// Extras per vertex record beyond joints and weights: `subversion - 1`, 0 to 2.
pub(super) fn extra_value_count(subversion: u32) -> usize {
    usize::try_from(subversion.clamp(1, 3) - 1).unwrap_or(0)
}

/// Byte offsets of a document's records, as [`write`] lays them out and [`parse`] found them:
/// lets checks made after parsing (and on documents built in code) still point into the file.
pub(super) struct Layout {
    pub(super) vertices: u64,
    pub(super) triangles: u64,
    pub(super) groups: Vec<u64>,
    pub(super) animation: u64,
    pub(super) joints: Vec<u64>,
    /// The first vertex extra record (after the subversion).
    pub(super) vertex_extras: u64,
    /// The joint-extra subversion.
    pub(super) joint_extras: u64,
}

impl Layout {
    pub(super) fn of(file: &Ms3dFile) -> Layout {
        let size = |count: usize, each: u64| to_u64(count).saturating_mul(each);
        let mut offset = HEADER_SIZE + 2;
        let vertices = offset;
        offset = offset.saturating_add(size(file.vertices.len(), to_u64(VERTEX_SIZE))).saturating_add(2);
        let triangles = offset;
        offset = offset.saturating_add(size(file.triangles.len(), to_u64(TRIANGLE_SIZE))).saturating_add(2);
        let mut groups = Vec::with_capacity(file.groups.len());
        for group in &file.groups {
            groups.push(offset);
            offset = offset.saturating_add(to_u64(GROUP_MIN_SIZE)).saturating_add(size(group.triangle_indices.len(), 2));
        }
        offset = offset.saturating_add(2).saturating_add(size(file.materials.len(), to_u64(MATERIAL_SIZE)));
        let animation = offset;
        offset = offset.saturating_add(12 + 2);
        let mut joints = Vec::with_capacity(file.joints.len());
        for joint in &file.joints {
            joints.push(offset);
            let keys = joint.rotation_keys.len().saturating_add(joint.position_keys.len());
            offset = offset.saturating_add(to_u64(JOINT_MIN_SIZE)).saturating_add(size(keys, to_u64(KEY_SIZE)));
        }
        if let Some(comments) = &file.comments {
            let list = |comments: &[Ms3dComment]| {
                comments.iter().fold(4u64, |sum, comment| sum.saturating_add(8).saturating_add(to_u64(comment.text.len())))
            };
            let model = comments.model.as_ref().map_or(0, |text| 4u64.saturating_add(to_u64(text.len())));
            offset = offset
                .saturating_add(4)
                .saturating_add(list(&comments.groups))
                .saturating_add(list(&comments.materials))
                .saturating_add(list(&comments.joints))
                .saturating_add(4)
                .saturating_add(model);
        } else {
            // The empty section write() puts out when a later one exists.
            offset = offset.saturating_add(20);
        }
        let vertex_extras = offset.saturating_add(4);
        let subversion = file.vertex_extras.as_ref().map_or(1, |extras| extras.subversion);
        let record = to_u64(6 + 4 * extra_value_count(subversion));
        let joint_extras = vertex_extras.saturating_add(size(file.vertices.len(), record));
        Layout { vertices, triangles, groups, animation, joints, vertex_extras, joint_extras }
    }

    pub(super) fn vertex(&self, index: usize) -> u64 {
        self.vertices.saturating_add(to_u64(index).saturating_mul(to_u64(VERTEX_SIZE)))
    }

    pub(super) fn triangle(&self, index: usize) -> u64 {
        self.triangles.saturating_add(to_u64(index).saturating_mul(to_u64(TRIANGLE_SIZE)))
    }

    pub(super) fn group(&self, index: usize) -> u64 {
        self.groups.get(index).copied().unwrap_or(u64::MAX)
    }

    pub(super) fn joint(&self, index: usize) -> u64 {
        self.joints.get(index).copied().unwrap_or(u64::MAX)
    }

    pub(super) fn vertex_extra(&self, index: usize, subversion: u32) -> u64 {
        let record = to_u64(6 + 4 * extra_value_count(subversion));
        self.vertex_extras.saturating_add(to_u64(index).saturating_mul(record))
    }
}

/// The joint hierarchy resolved from parent names.
#[derive(Clone, Debug)]
pub(super) struct JointOrder {
    /// Per file joint, its parent's file index.
    pub(super) parents: Vec<Option<usize>>,
    /// Joints whose parent name names no joint (made roots): file indices.
    pub(super) orphans: Vec<usize>,
    /// Skeleton order, parents first: file indices.
    pub(super) order: Vec<usize>,
    /// Per file joint, its skeleton index.
    pub(super) skeleton_index: Vec<usize>,
}

/// Whether an i8 reference (joint or material) is -1 or names one of `count` items.
pub(super) fn reference_ok(id: i8, count: usize) -> bool {
    id == -1 || usize::try_from(id).is_ok_and(|id| id < count)
}

/// Every check that needs the whole document: indices against what they point into, the joint
/// hierarchy, key order. Run by [`parse`] and again by [`to_model`] for documents built in code.
pub(super) fn validate(file: &Ms3dFile, layout: &Layout, path: &Path) -> Result<JointOrder, FormatError> {
    let at = |offset: u64, message: String| byte_error(path, offset, message);
    let vertex_count = file.vertices.len();
    let joint_count = file.joints.len();
    for (index, triangle) in file.triangles.iter().enumerate() {
        for (corner, &vertex) in (0u64..).zip(&triangle.vertex_indices) {
            if usize::from(vertex) >= vertex_count {
                return Err(at(
                    layout.triangle(index).saturating_add(2 + 2 * corner),
                    format!("expected vertex index {corner} of triangle {index} to be below {vertex_count} (the vertex count), found {vertex}"),
                ));
            }
        }
    }
    let triangle_count = file.triangles.len();
    let material_count = file.materials.len();
    for (index, group) in file.groups.iter().enumerate() {
        for (number, &triangle) in (0u64..).zip(&group.triangle_indices) {
            if usize::from(triangle) >= triangle_count {
                return Err(at(
                    layout.group(index).saturating_add(35 + 2 * number),
                    format!(
                        "expected triangle index {number} of group {index} \"{}\" to be below {triangle_count} (the triangle count), found {triangle}",
                        group.name.text()
                    ),
                ));
            }
        }
        if !reference_ok(group.material_index, material_count) {
            let end =
                layout.group(index).saturating_add(35).saturating_add(to_u64(group.triangle_indices.len()).saturating_mul(2));
            return Err(at(
                end,
                format!(
                    "expected the material of group {index} \"{}\" to be -1 (none) or below {material_count} (the material count), found {}",
                    group.name.text(),
                    group.material_index
                ),
            ));
        }
    }
    for (index, vertex) in file.vertices.iter().enumerate() {
        if !reference_ok(vertex.bone_id, joint_count) {
            return Err(at(
                layout.vertex(index).saturating_add(13),
                format!(
                    "expected the joint of vertex {index} to be -1 (none) or below {joint_count} (the joint count), found {}",
                    vertex.bone_id
                ),
            ));
        }
    }
    if let Some(extras) = &file.vertex_extras {
        if extras.vertices.len() != vertex_count || !(1..=3).contains(&extras.subversion) {
            return Err(at(
                layout.vertex_extras.saturating_sub(4),
                format!(
                    "expected vertex extras of subversion 1, 2 or 3 for each of the {vertex_count} vertices, found {} of subversion {}",
                    extras.vertices.len(),
                    extras.subversion
                ),
            ));
        }
        for (index, extra) in extras.vertices.iter().enumerate() {
            for (slot, &id) in (0u64..).zip(&extra.bone_ids) {
                if !reference_ok(id, joint_count) {
                    return Err(at(
                        layout.vertex_extra(index, extras.subversion).saturating_add(slot),
                        format!(
                            "expected extra joint {slot} of vertex {index} to be -1 (none) or below {joint_count} (the joint count), found {id}"
                        ),
                    ));
                }
            }
        }
    }
    if let Some(extras) = &file.joint_extras {
        if extras.colors.len() != joint_count {
            return Err(at(
                layout.joint_extras,
                format!("expected a colour for each of the {joint_count} joints, found {}", extras.colors.len()),
            ));
        }
    }
    for (index, joint) in file.joints.iter().enumerate() {
        let keys_start = layout.joint(index).saturating_add(to_u64(JOINT_MIN_SIZE));
        let position_start = keys_start.saturating_add(to_u64(joint.rotation_keys.len()).saturating_mul(to_u64(KEY_SIZE)));
        for (channel, keys, start) in
            [("rotation", &joint.rotation_keys, keys_start), ("position", &joint.position_keys, position_start)]
        {
            for (number, pair) in (1u64..).zip(keys.windows(2)) {
                if let [previous, key] = pair {
                    if key.time < previous.time {
                        return Err(at(
                            start.saturating_add(number.saturating_mul(to_u64(KEY_SIZE))),
                            format!(
                                "expected {channel} key {number} of joint {index} \"{}\" at or after {} s (the key before it), found {} s",
                                joint.name.text(),
                                previous.time,
                                key.time
                            ),
                        ));
                    }
                }
            }
        }
    }
    resolve_joints(file, layout, path)
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Visit {
    Unvisited,
    OnChain,
    Placed,
}

/// Parents by name (the first joint of a name, as the SDK's FindJointByName), then an order with
/// parents first that keeps the file's order where it already is one.
pub(super) fn resolve_joints(file: &Ms3dFile, layout: &Layout, path: &Path) -> Result<JointOrder, FormatError> {
    let joint_count = file.joints.len();
    let mut by_name: HashMap<&[u8], usize> = HashMap::with_capacity(joint_count);
    for (index, joint) in file.joints.iter().enumerate() {
        by_name.entry(joint.name.bytes()).or_insert(index);
    }
    let mut parents = Vec::with_capacity(joint_count);
    let mut orphans = Vec::new();
    for (index, joint) in file.joints.iter().enumerate() {
        let parent_name = joint.parent_name.bytes();
        if parent_name.is_empty() {
            parents.push(None);
            continue;
        }
        // A parent name that names no joint ("none", a renamed bone): a root, where the SDK's
        // lookup by name (-1, not found) leaves it and as assimp opens it; `to_model` warns.
        let parent = by_name.get(parent_name).copied();
        if parent.is_none() {
            orphans.push(index);
        }
        parents.push(parent);
    }

    let mut visits = vec![Visit::Unvisited; joint_count];
    let mut order = Vec::with_capacity(joint_count);
    let mut chain = Vec::new();
    for start in 0..joint_count {
        chain.clear();
        let mut current = Some(start);
        while let Some(index) = current {
            match visits.get(index).copied() {
                Some(Visit::Unvisited) => {
                    if let Some(visit) = visits.get_mut(index) {
                        *visit = Visit::OnChain;
                    }
                    chain.push(index);
                    current = parents.get(index).copied().flatten();
                }
                Some(Visit::OnChain) => {
                    let loop_start = chain.iter().position(|&joint| joint == index).unwrap_or(0);
                    let names: Vec<String> = chain
                        .get(loop_start..)
                        .unwrap_or_default()
                        .iter()
                        .chain(std::iter::once(&index))
                        .map(|&joint| {
                            format!("\"{}\"", file.joints.get(joint).map(|joint| joint.name.text()).unwrap_or_default())
                        })
                        .collect();
                    let name = file.joints.get(index).map(|joint| joint.name.text()).unwrap_or_default();
                    return Err(byte_error(
                        path,
                        layout.joint(index).saturating_add(JOINT_PARENT_NAME_OFFSET),
                        format!(
                            "expected the parents of joint {index} \"{name}\" to lead to a root, found a cycle: {}",
                            names.join(" -> child of ")
                        ),
                    ));
                }
                Some(Visit::Placed) | None => break,
            }
        }
        for &index in chain.iter().rev() {
            if let Some(visit) = visits.get_mut(index) {
                *visit = Visit::Placed;
            }
            order.push(index);
        }
    }
    let mut skeleton_index = vec![0usize; joint_count];
    for (position, &index) in order.iter().enumerate() {
        if let Some(slot) = skeleton_index.get_mut(index) {
            *slot = position;
        }
    }
    Ok(JointOrder { parents, orphans, order, skeleton_index })
}
