//! The writer: the document types back into bytes, so that `parse(write(file)) == file`.

use super::layout::{extra_value_count, Sections};
use super::{Ms3dComment, Ms3dComments, Ms3dFile, MAGIC};
use glam::{Vec3, Vec4};

// ---------------------------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------------------------

pub(super) struct Writer {
    pub(super) bytes: Vec<u8>,
}

impl Writer {
    pub(super) fn u8(&mut self, value: u8) {
        self.bytes.push(value);
    }

    pub(super) fn i8(&mut self, value: i8) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    pub(super) fn u16(&mut self, value: u16) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// A u16 record count; the format holds no more than 65,535.
    pub(super) fn count16(&mut self, count: usize) {
        self.u16(u16::try_from(count).unwrap_or(u16::MAX));
    }

    pub(super) fn i32(&mut self, value: i32) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    pub(super) fn u32(&mut self, value: u32) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    pub(super) fn length32(&mut self, length: usize) {
        self.i32(i32::try_from(length).unwrap_or(i32::MAX));
    }

    pub(super) fn f32(&mut self, value: f32) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    pub(super) fn vec3(&mut self, value: Vec3) {
        for component in value.to_array() {
            self.f32(component);
        }
    }

    pub(super) fn vec4(&mut self, value: Vec4) {
        for component in value.to_array() {
            self.f32(component);
        }
    }

    pub(super) fn raw(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    pub(super) fn comments(&mut self, comments: &[Ms3dComment]) {
        self.u32(u32::try_from(comments.len()).unwrap_or(u32::MAX));
        for comment in comments {
            self.i32(comment.index);
            self.length32(comment.text.len());
            self.raw(&comment.text);
        }
    }
}

/// The file's bytes. Counts past the format's limits (65,535 vertices, triangles, groups,
/// materials, joints or keys) are not representable and are written saturated; vertex and joint
/// extras are written one per vertex and joint as listed. See [`Ms3dFile::comments`] for missing
/// sections.
pub fn write(file: &Ms3dFile) -> Vec<u8> {
    let mut out = Writer { bytes: Vec::new() };
    out.raw(MAGIC);
    out.i32(file.version);

    out.count16(file.vertices.len());
    for vertex in &file.vertices {
        out.u8(vertex.flags);
        out.vec3(vertex.position);
        out.i8(vertex.bone_id);
        out.u8(vertex.reference_count);
    }
    out.count16(file.triangles.len());
    for triangle in &file.triangles {
        out.u16(triangle.flags);
        for index in triangle.vertex_indices {
            out.u16(index);
        }
        for normal in triangle.normals {
            out.vec3(normal);
        }
        for value in triangle.s.iter().chain(&triangle.t) {
            out.f32(*value);
        }
        out.u8(triangle.smoothing_group);
        out.u8(triangle.group_index);
    }
    out.count16(file.groups.len());
    for group in &file.groups {
        out.u8(group.flags);
        out.raw(&group.name.0);
        out.count16(group.triangle_indices.len());
        for &index in &group.triangle_indices {
            out.u16(index);
        }
        out.i8(group.material_index);
    }
    out.count16(file.materials.len());
    for material in &file.materials {
        out.raw(&material.name.0);
        for colour in [material.ambient, material.diffuse, material.specular, material.emissive] {
            out.vec4(colour);
        }
        out.f32(material.shininess);
        out.f32(material.transparency);
        out.u8(material.mode);
        out.raw(&material.texture.0);
        out.raw(&material.alphamap.0);
    }
    out.f32(file.animation_fps);
    out.f32(file.current_time);
    out.i32(file.total_frames);
    out.count16(file.joints.len());
    for joint in &file.joints {
        out.u8(joint.flags);
        out.raw(&joint.name.0);
        out.raw(&joint.parent_name.0);
        out.vec3(joint.rotation);
        out.vec3(joint.position);
        out.count16(joint.rotation_keys.len());
        out.count16(joint.position_keys.len());
        for key in joint.rotation_keys.iter().chain(&joint.position_keys) {
            out.f32(key.time);
            out.vec3(key.value);
        }
    }

    let sections = Sections::of(file);
    if sections.comments {
        let empty = Ms3dComments::default();
        let comments = file.comments.as_ref().unwrap_or(&empty);
        out.i32(1);
        out.comments(&comments.groups);
        out.comments(&comments.materials);
        out.comments(&comments.joints);
        match &comments.model {
            Some(text) => {
                out.i32(1);
                out.length32(text.len());
                out.raw(text);
            }
            None => out.i32(0),
        }
    }
    if sections.vertex_extras {
        match &file.vertex_extras {
            Some(extras) => {
                out.u32(extras.subversion);
                let extra_count = extra_value_count(extras.subversion);
                for extra in &extras.vertices {
                    for id in extra.bone_ids {
                        out.i8(id);
                    }
                    out.raw(&extra.weights);
                    for &value in extra.extra.iter().take(extra_count) {
                        out.u32(value);
                    }
                }
            }
            None => {
                out.u32(1);
                for _ in &file.vertices {
                    out.raw(&[0xff, 0xff, 0xff, 0, 0, 0]);
                }
            }
        }
    }
    if sections.joint_extras {
        out.i32(1);
        match &file.joint_extras {
            Some(extras) => extras.colors.iter().for_each(|&colour| out.vec3(colour)),
            None => file.joints.iter().for_each(|_| out.vec3(Vec3::ZERO)),
        }
    }
    if sections.model_extra {
        let extra = file.model_extra.unwrap_or_default();
        out.i32(1);
        out.f32(extra.joint_size);
        out.i32(extra.transparency_mode);
        out.f32(extra.alpha_ref);
    }
    out.raw(&file.unparsed_tail);
    out.bytes
}
