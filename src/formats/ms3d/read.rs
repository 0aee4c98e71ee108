//! The reader and the parser: bytes into the document types, every count checked against the bytes
//! that remain before it sizes anything, every error at its byte offset.

use super::layout::{validate, Layout};
use super::{
    byte_error, to_u64, FixedText, Ms3dComment, Ms3dComments, Ms3dFile, Ms3dGroup, Ms3dJoint, Ms3dJointExtras, Ms3dKey,
    Ms3dMaterial, Ms3dModelExtra, Ms3dTriangle, Ms3dVertex, Ms3dVertexExtra, Ms3dVertexExtras, COMMENT_MIN_SIZE, GROUP_MIN_SIZE,
    JOINT_EXTRA_SIZE, JOINT_MIN_SIZE, KEY_SIZE, MAGIC, MATERIAL_SIZE, MODEL_EXTRA_SIZE, SUPPORTED_VERSIONS, TRIANGLE_SIZE,
    VERTEX_SIZE,
};
use crate::formats::FormatError;
use glam::{Vec3, Vec4};
use std::fmt;
use std::path::Path;

// ---------------------------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------------------------

/// Reads little-endian fields in order. Every `what` finishes the sentence "expected ..." of the
/// error raised when the field is missing or unusable.
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) offset: usize,
    pub(super) path: &'a Path,
}

impl<'a> Reader<'a> {
    pub(super) fn error_at(&self, offset: usize, message: impl Into<String>) -> FormatError {
        byte_error(self.path, to_u64(offset), message)
    }

    pub(super) fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.offset)
    }

    pub(super) fn at_end(&self) -> bool {
        self.remaining() == 0
    }

    pub(super) fn take(&mut self, length: usize, what: fmt::Arguments<'_>) -> Result<&'a [u8], FormatError> {
        let start = self.offset;
        let bytes = self.bytes;
        match start.checked_add(length).and_then(|end| bytes.get(start..end).map(|slice| (slice, end))) {
            Some((slice, end)) => {
                self.offset = end;
                Ok(slice)
            }
            None => Err(self.error_at(
                start,
                format!("expected {what} ({length} bytes), found {} bytes before the end of the file", self.remaining()),
            )),
        }
    }

    pub(super) fn array<const N: usize>(&mut self, what: fmt::Arguments<'_>) -> Result<[u8; N], FormatError> {
        let start = self.offset;
        let slice = self.take(N, what)?;
        <[u8; N]>::try_from(slice).map_err(|_| self.error_at(start, format!("expected {what} ({N} bytes)")))
    }

    pub(super) fn u8(&mut self, what: fmt::Arguments<'_>) -> Result<u8, FormatError> {
        self.array::<1>(what).map(u8::from_le_bytes)
    }

    pub(super) fn i8(&mut self, what: fmt::Arguments<'_>) -> Result<i8, FormatError> {
        self.array::<1>(what).map(i8::from_le_bytes)
    }

    pub(super) fn u16(&mut self, what: fmt::Arguments<'_>) -> Result<u16, FormatError> {
        self.array::<2>(what).map(u16::from_le_bytes)
    }

    pub(super) fn i32(&mut self, what: fmt::Arguments<'_>) -> Result<i32, FormatError> {
        self.array::<4>(what).map(i32::from_le_bytes)
    }

    pub(super) fn u32(&mut self, what: fmt::Arguments<'_>) -> Result<u32, FormatError> {
        self.array::<4>(what).map(u32::from_le_bytes)
    }

    pub(super) fn f32(&mut self, what: fmt::Arguments<'_>) -> Result<f32, FormatError> {
        let start = self.offset;
        let value = f32::from_le_bytes(self.array::<4>(what)?);
        if value.is_finite() {
            Ok(value)
        } else {
            Err(self.error_at(start, format!("expected a finite number for {what}, found {value}")))
        }
    }

    pub(super) fn vec3(&mut self, what: fmt::Arguments<'_>) -> Result<Vec3, FormatError> {
        let x = self.f32(format_args!("{what} x"))?;
        let y = self.f32(format_args!("{what} y"))?;
        let z = self.f32(format_args!("{what} z"))?;
        Ok(Vec3::new(x, y, z))
    }

    pub(super) fn vec4(&mut self, what: fmt::Arguments<'_>) -> Result<Vec4, FormatError> {
        let xyz = self.vec3(what)?;
        let w = self.f32(format_args!("{what} w"))?;
        Ok(xyz.extend(w))
    }

    pub(super) fn text<const N: usize>(&mut self, what: fmt::Arguments<'_>) -> Result<FixedText<N>, FormatError> {
        self.array::<N>(what).map(FixedText)
    }

    /// Checks that `count` records of `size` bytes (at least, when `at_least`) can follow, before
    /// any is read or allocated. Errors point at `count_offset`: the count, or the subversion of a
    /// section whose record count is implied (one per vertex or joint).
    pub(super) fn expect_records(
        &self,
        count: usize,
        size: usize,
        count_offset: usize,
        at_least: bool,
        records: fmt::Arguments<'_>,
    ) -> Result<(), FormatError> {
        let needed = count.checked_mul(size);
        if needed.is_some_and(|needed| needed <= self.remaining()) {
            return Ok(());
        }
        let needed = needed.map_or_else(|| "more than addressable".to_string(), |needed| needed.to_string());
        let each = if at_least { format!("at least {size}") } else { size.to_string() };
        Err(self.error_at(
            count_offset,
            format!("expected {count} {records} ({each} bytes each, {needed} bytes) to follow, found {} bytes", self.remaining()),
        ))
    }

    /// A u16 count and the check that its records fit.
    pub(super) fn count(&mut self, what: &str, size: usize, at_least: bool, records: &str) -> Result<usize, FormatError> {
        let start = self.offset;
        let count = usize::from(self.u16(format_args!("the {what}"))?);
        self.expect_records(count, size, start, at_least, format_args!("{records}"))?;
        Ok(count)
    }
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

/// Parses a whole `.ms3d` file. `path` only names the file in errors.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Ms3dFile, FormatError> {
    let mut reader = Reader { bytes, offset: 0, path };
    let magic: [u8; 10] = reader.array(format_args!("the magic \"MS3D000000\""))?;
    if &magic != MAGIC {
        return Err(reader.error_at(0, format!("expected the magic \"MS3D000000\", found \"{}\"", magic.escape_ascii())));
    }
    let version_offset = reader.offset;
    let version = reader.i32(format_args!("the format version"))?;
    if !SUPPORTED_VERSIONS.contains(&version) {
        return Err(reader.error_at(version_offset, format!("expected format version 3 or 4, found {version}")));
    }

    let vertices = read_vertices(&mut reader)?;
    let triangles = read_triangles(&mut reader)?;
    let groups = read_groups(&mut reader)?;
    let materials = read_materials(&mut reader)?;
    let animation_fps = reader.f32(format_args!("the animation frame rate (fAnimationFPS)"))?;
    let current_time = reader.f32(format_args!("the current time (fCurrentTime)"))?;
    let total_frames = reader.i32(format_args!("the total frame count (iTotalFrames)"))?;
    let joints = read_joints(&mut reader)?;

    let mut file = Ms3dFile {
        version,
        vertices,
        triangles,
        groups,
        materials,
        animation_fps,
        current_time,
        total_frames,
        joints,
        comments: None,
        vertex_extras: None,
        joint_extras: None,
        model_extra: None,
        unparsed_tail: Vec::new(),
    };
    read_trailer(&mut reader, &mut file)?;
    validate(&file, &Layout::of(&file), path)?;
    Ok(file)
}

pub(super) fn read_vertices(reader: &mut Reader<'_>) -> Result<Vec<Ms3dVertex>, FormatError> {
    let count = reader.count("vertex count (nNumVertices)", VERTEX_SIZE, false, "vertices")?;
    let mut vertices = Vec::with_capacity(count);
    for index in 0..count {
        let flags = reader.u8(format_args!("vertex {index} flags"))?;
        let position = reader.vec3(format_args!("vertex {index} position"))?;
        let bone_id = reader.i8(format_args!("vertex {index} joint (boneId)"))?;
        let reference_count = reader.u8(format_args!("vertex {index} reference count"))?;
        vertices.push(Ms3dVertex { flags, position, bone_id, reference_count });
    }
    Ok(vertices)
}

pub(super) fn read_triangles(reader: &mut Reader<'_>) -> Result<Vec<Ms3dTriangle>, FormatError> {
    let count = reader.count("triangle count (nNumTriangles)", TRIANGLE_SIZE, false, "triangles")?;
    let mut triangles = Vec::with_capacity(count);
    for index in 0..count {
        let flags = reader.u16(format_args!("triangle {index} flags"))?;
        let mut vertex_indices = [0u16; 3];
        for (corner, slot) in vertex_indices.iter_mut().enumerate() {
            *slot = reader.u16(format_args!("triangle {index} vertex index {corner}"))?;
        }
        let mut normals = [Vec3::ZERO; 3];
        for (corner, slot) in normals.iter_mut().enumerate() {
            *slot = reader.vec3(format_args!("triangle {index} normal {corner}"))?;
        }
        let mut s = [0.0f32; 3];
        for (corner, slot) in s.iter_mut().enumerate() {
            *slot = reader.f32(format_args!("triangle {index} texture coordinate s {corner}"))?;
        }
        let mut t = [0.0f32; 3];
        for (corner, slot) in t.iter_mut().enumerate() {
            *slot = reader.f32(format_args!("triangle {index} texture coordinate t {corner}"))?;
        }
        let smoothing_group = reader.u8(format_args!("triangle {index} smoothing group"))?;
        let group_index = reader.u8(format_args!("triangle {index} group index"))?;
        triangles.push(Ms3dTriangle { flags, vertex_indices, normals, s, t, smoothing_group, group_index });
    }
    Ok(triangles)
}

pub(super) fn read_groups(reader: &mut Reader<'_>) -> Result<Vec<Ms3dGroup>, FormatError> {
    let count = reader.count("group count (nNumGroups)", GROUP_MIN_SIZE, true, "groups")?;
    let mut groups = Vec::with_capacity(count);
    for index in 0..count {
        let flags = reader.u8(format_args!("group {index} flags"))?;
        let name = reader.text(format_args!("group {index} name"))?;
        let count_offset = reader.offset;
        let triangle_count = usize::from(reader.u16(format_args!("group {index} triangle count"))?);
        reader.expect_records(triangle_count, 2, count_offset, false, format_args!("triangle indices of group {index}"))?;
        let mut triangle_indices = Vec::with_capacity(triangle_count);
        for triangle in 0..triangle_count {
            triangle_indices.push(reader.u16(format_args!("group {index} triangle index {triangle}"))?);
        }
        let material_index = reader.i8(format_args!("group {index} material index"))?;
        groups.push(Ms3dGroup { flags, name, triangle_indices, material_index });
    }
    Ok(groups)
}

pub(super) fn read_materials(reader: &mut Reader<'_>) -> Result<Vec<Ms3dMaterial>, FormatError> {
    let count = reader.count("material count (nNumMaterials)", MATERIAL_SIZE, false, "materials")?;
    let mut materials = Vec::with_capacity(count);
    for index in 0..count {
        materials.push(Ms3dMaterial {
            name: reader.text(format_args!("material {index} name"))?,
            ambient: reader.vec4(format_args!("material {index} ambient colour"))?,
            diffuse: reader.vec4(format_args!("material {index} diffuse colour"))?,
            specular: reader.vec4(format_args!("material {index} specular colour"))?,
            emissive: reader.vec4(format_args!("material {index} emissive colour"))?,
            shininess: reader.f32(format_args!("material {index} shininess"))?,
            transparency: reader.f32(format_args!("material {index} transparency"))?,
            mode: reader.u8(format_args!("material {index} mode"))?,
            texture: reader.text(format_args!("material {index} texture path"))?,
            alphamap: reader.text(format_args!("material {index} alpha map path"))?,
        });
    }
    Ok(materials)
}

pub(super) fn read_joints(reader: &mut Reader<'_>) -> Result<Vec<Ms3dJoint>, FormatError> {
    let count = reader.count("joint count (nNumJoints)", JOINT_MIN_SIZE, true, "joints")?;
    let mut joints = Vec::with_capacity(count);
    for index in 0..count {
        let flags = reader.u8(format_args!("joint {index} flags"))?;
        let name = reader.text(format_args!("joint {index} name"))?;
        let parent_name = reader.text(format_args!("joint {index} parent name"))?;
        let rotation = reader.vec3(format_args!("joint {index} rotation"))?;
        let position = reader.vec3(format_args!("joint {index} position"))?;
        let counts_offset = reader.offset;
        let rotation_count = usize::from(reader.u16(format_args!("joint {index} rotation key count"))?);
        let position_count = usize::from(reader.u16(format_args!("joint {index} position key count"))?);
        reader.expect_records(
            rotation_count.saturating_add(position_count),
            KEY_SIZE,
            counts_offset,
            false,
            format_args!("keys of joint {index} ({rotation_count} rotation, {position_count} position)"),
        )?;
        let rotation_keys = read_keys(reader, index, rotation_count, "rotation")?;
        let position_keys = read_keys(reader, index, position_count, "position")?;
        joints.push(Ms3dJoint { flags, name, parent_name, rotation, position, rotation_keys, position_keys });
    }
    Ok(joints)
}

pub(super) fn read_keys(reader: &mut Reader<'_>, joint: usize, count: usize, channel: &str) -> Result<Vec<Ms3dKey>, FormatError> {
    let mut keys = Vec::with_capacity(count);
    for index in 0..count {
        let time = reader.f32(format_args!("joint {joint} {channel} key {index} time"))?;
        let value = reader.vec3(format_args!("joint {joint} {channel} key {index} value"))?;
        keys.push(Ms3dKey { time, value });
    }
    Ok(keys)
}

/// The optional sections after the joints: each may be where the file ends.
pub(super) fn read_trailer(reader: &mut Reader<'_>, file: &mut Ms3dFile) -> Result<(), FormatError> {
    if reader.at_end() {
        return Ok(());
    }
    let start = reader.offset;
    let subversion = reader.i32(format_args!("the comment section subversion"))?;
    if subversion != 1 {
        return Err(reader.error_at(start, format!("expected comment section subversion 1, found {subversion}")));
    }
    let groups = read_comments(reader, "group")?;
    let materials = read_comments(reader, "material")?;
    let joints = read_comments(reader, "joint")?;
    let model_offset = reader.offset;
    let model = match reader.i32(format_args!("the model comment count (nHasModelComment)"))? {
        0 => None,
        1 => Some(read_comment_text(reader, format_args!("the model comment"))?),
        other => return Err(reader.error_at(model_offset, format!("expected a model comment count of 0 or 1, found {other}"))),
    };
    file.comments = Some(Ms3dComments { groups, materials, joints, model });

    if reader.at_end() {
        return Ok(());
    }
    let start = reader.offset;
    let subversion = reader.i32(format_args!("the vertex extra subversion"))?;
    let extra_count = match subversion {
        1..=3 => usize::try_from(subversion - 1).unwrap_or(0),
        _ => return Err(reader.error_at(start, format!("expected vertex extra subversion 1, 2 or 3, found {subversion}"))),
    };
    let record_size = 6 + 4 * extra_count;
    let vertex_count = file.vertices.len();
    reader.expect_records(
        vertex_count,
        record_size,
        start,
        false,
        format_args!("vertex extras (one per vertex, subversion {subversion})"),
    )?;
    let mut vertices = Vec::with_capacity(vertex_count);
    for index in 0..vertex_count {
        let bone_ids = reader.array::<3>(format_args!("vertex extra {index} joints"))?.map(|byte| i8::from_le_bytes([byte]));
        let weights = reader.array::<3>(format_args!("vertex extra {index} weights"))?;
        let mut extra = [0u32; 2];
        for (number, slot) in extra.iter_mut().take(extra_count).enumerate() {
            *slot = reader.u32(format_args!("vertex extra {index} value {number}"))?;
        }
        vertices.push(Ms3dVertexExtra { bone_ids, weights, extra });
    }
    file.vertex_extras = Some(Ms3dVertexExtras { subversion: subversion.unsigned_abs(), vertices });

    if reader.at_end() {
        return Ok(());
    }
    let start = reader.offset;
    if reader.i32(format_args!("the joint extra subversion"))? != 1 {
        return keep_tail(reader, file, start);
    }
    let joint_count = file.joints.len();
    reader.expect_records(joint_count, JOINT_EXTRA_SIZE, start, false, format_args!("joint colours (one per joint)"))?;
    let mut colors = Vec::with_capacity(joint_count);
    for index in 0..joint_count {
        colors.push(reader.vec3(format_args!("joint {index} colour"))?);
    }
    file.joint_extras = Some(Ms3dJointExtras { colors });

    if reader.at_end() {
        return Ok(());
    }
    let start = reader.offset;
    if reader.i32(format_args!("the model extra subversion"))? != 1 {
        return keep_tail(reader, file, start);
    }
    reader.expect_records(1, MODEL_EXTRA_SIZE, start, false, format_args!("model extra"))?;
    file.model_extra = Some(Ms3dModelExtra {
        joint_size: reader.f32(format_args!("the joint size"))?,
        transparency_mode: reader.i32(format_args!("the transparency mode"))?,
        alpha_ref: reader.f32(format_args!("the alpha reference"))?,
    });
    let end = reader.offset;
    keep_tail(reader, file, end)
}

pub(super) fn keep_tail(reader: &mut Reader<'_>, file: &mut Ms3dFile, start: usize) -> Result<(), FormatError> {
    file.unparsed_tail = reader.bytes.get(start..).unwrap_or_default().to_vec();
    reader.offset = reader.bytes.len();
    Ok(())
}

pub(super) fn read_comments(reader: &mut Reader<'_>, kind: &str) -> Result<Vec<Ms3dComment>, FormatError> {
    let start = reader.offset;
    let count = usize::try_from(reader.u32(format_args!("the {kind} comment count"))?).unwrap_or(usize::MAX);
    reader.expect_records(count, COMMENT_MIN_SIZE, start, true, format_args!("{kind} comments"))?;
    let mut comments = Vec::with_capacity(count);
    for number in 0..count {
        let index = reader.i32(format_args!("{kind} comment {number} index"))?;
        let text = read_comment_text(reader, format_args!("{kind} comment {number}"))?;
        comments.push(Ms3dComment { index, text });
    }
    Ok(comments)
}

pub(super) fn read_comment_text(reader: &mut Reader<'_>, what: fmt::Arguments<'_>) -> Result<Vec<u8>, FormatError> {
    let start = reader.offset;
    let length = reader.i32(format_args!("the length of {what}"))?;
    let Ok(length) = usize::try_from(length) else {
        return Err(reader.error_at(start, format!("expected a length of 0 or more for {what}, found {length}")));
    };
    Ok(reader.take(length, format_args!("the text of {what}"))?.to_vec())
}
