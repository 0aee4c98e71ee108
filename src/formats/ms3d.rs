//! Milkshape 3D (`.ms3d`, versions 3 and 4): one little-endian binary file holding the mesh, its
//! materials, a joint hierarchy and one keyed timeline.
//!
//! Two layers, as for MD5. [`Ms3dFile`] mirrors the bytes field for field (fixed-size names keep
//! their whole buffers, left-over bytes after the NUL included), so `parse(write(file)) == file` and
//! a real file writes back byte for byte. [`to_model`] turns a document into the one [`Model`]
//! type, its keys kept as local-space channels; [`Ms3dAnimation`] evaluates the keyed joints
//! directly by the SDK's formulas, the reference the fidelity tests hold the GPU to.
//!
//! The parser trusts nothing: every read is bounds-checked and an error names the file, the byte
//! offset and what was expected there; every count is checked against the bytes left before
//! anything is allocated from it; every index is checked against what it points into; every float
//! must be finite. A file may end right after the joints; the trailer sections after them
//! (comments, vertex extras, joint extras, model extra) are each optional, in that order.
//!
//! # Layout
//!
//! `"MS3D000000"`, i32 version; u16 vertex count, vertices of 15 bytes (u8 flags, 3 × f32
//! position, i8 joint or -1, u8 reference count); u16 triangle count, triangles of 70 bytes (u16
//! flags, 3 × u16 vertex, 3 × 3 × f32 corner normals, 3 × f32 s, 3 × f32 t, u8 smoothing group,
//! u8 group); u16 group count, groups (u8 flags, 32-byte name, u16 count, that many u16 triangles,
//! i8 material or -1); u16 material count, materials of 361 bytes (32-byte name, ambient, diffuse,
//! specular, emissive as 4 × f32, f32 shininess, f32 transparency, u8 mode, 128-byte texture,
//! 128-byte alpha map); f32 frame rate, f32 current time, i32 total frames; u16 joint count,
//! joints (u8 flags, 32-byte name, 32-byte parent name, 3 × f32 Euler rotation, 3 × f32 position,
//! u16 rotation key count, u16 position key count, then the keys, each f32 time in seconds and
//! 3 × f32). Trailer: i32 comment subversion 1, three lists (u32 count; i32 index, i32 length,
//! bytes) for groups, materials and joints, i32 0 or 1 and then the model comment (i32 length,
//! bytes, no index); i32 vertex-extra subversion 1, 2 or 3, then per vertex 3 × i8 joints, 3 × u8
//! weights and 0, 1 or 2 u32 extras; i32 joint-extra subversion 1, 3 × f32 colour per joint; i32
//! model-extra subversion 1, f32 joint size, i32 transparency mode, f32 alpha reference. A joint-
//! or model-extra subversion this reader does not know, and anything after the model extra, is
//! kept as [`Ms3dFile::unparsed_tail`]: nothing the model needs lives there.
//!
//! # How MilkShape animates
//!
//! As the Milkshape SDK's viewer (msModel.cpp) does, which [`Ms3dAnimation::evaluate`] follows:
//! a joint's Euler angles (x, y, z, radians) are the rotation R = Rz·Ry·Rx (x applied first); its
//! local bind transform is T(position)·R(rotation) and its absolute bind is the parent's absolute
//! bind times that. Keys are relative to the local bind: animated local = T(position)·R(rotation)·
//! T(key position)·R(key rotation). Rotation keys are Euler angles turned into quaternions and
//! slerped along the shorter arc; position keys are a cubic Hermite curve. Before the first key a
//! channel holds the first key, from the last key on it holds the last.
//!
//! # Hermite tangents
//!
//! The SDK's `SetupTangents`, exactly. With three or more position keys, key k gets the direction
//! d = p[k+1] − p[k−1] and the intervals Δin = t[k] − t[k−1], Δout = t[k+1] − t[k]; its incoming
//! tangent is d·Δin/(Δin + Δout) and its outgoing one d·Δout/(Δin + Δout). On the normalized
//! parameter u ∈ [0, 1] of an interval this is the central-difference velocity
//! d/(Δin + Δout) times that interval's length, so the speed stays continuous across keys that are
//! unevenly spaced (for even spacing it is Catmull-Rom's d/2). The SDK treats the key list as a
//! loop at both ends (k−1 of the first key is the last key, k+1 of the last is the first); those two
//! tangents are kept as the SDK computes them, so the curve is the one MilkShape plays, even though
//! the opposite-signed intervals there make them point slightly backwards (scale Δ/(Δ − span)).
//! With one or two keys every tangent is zero, so two keys ease in and out rather than move
//! linearly. A zero-length interval sum gives a zero tangent instead of a division by zero.
//!
//! # Bone weights
//!
//! The SDK's `FillJointIndicesAndWeights` and the format's own comments: the vertex's joint and the
//! vertex extra's three joints are four slots; the extra's three weights are percentages for the
//! FIRST three slots (the vertex's own joint, then extra joints 0 and 1) and the fourth slot gets
//! 100 minus their sum. When all three weights are zero (what an exporter writes for a single
//! joint) the vertex's own joint gets 100. Every slot with a joint and a positive weight is kept,
//! then [`normalize_influences`] merges and scales them. If nothing positive is left the SDK's
//! fallback applies: the vertex's own joint at full weight. A slot of joint -1 is ignored, and a
//! vertex left with no joint at all is rigid: it follows the model's extra root joint (see
//! [`to_model`]). All subversions are read as percentages, as the SDK reads them (normalizing makes
//! the scale matter only for the remainder).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use glam::{Mat4, Quat, Vec2, Vec3, Vec4};

use super::{texture, FormatError, Location};
use crate::anim::{
    hermite, slerp_shortest, Animation, Channel, Influence, Interpolation, Joint, JointPose, KeyTimes, Property, Skeleton,
};
use crate::model::{compute_tangents, normalize_influences, LoadStats, Material, Mesh, Model, Vertex};

const MAGIC: &[u8; 10] = b"MS3D000000";

/// Milkshape 1.3 onwards wrote version 3, later ones 4; the layout is the same.
const SUPPORTED_VERSIONS: [i32; 2] = [3, 4];

const HEADER_SIZE: u64 = 14;
const VERTEX_SIZE: usize = 15;
const TRIANGLE_SIZE: usize = 70;
/// Flags, name, triangle count and material index, with no triangles.
const GROUP_MIN_SIZE: usize = 36;
const MATERIAL_SIZE: usize = 361;
/// Flags, name, parent name, rotation, position and the two key counts, with no keys.
const JOINT_MIN_SIZE: usize = 93;
const KEY_SIZE: usize = 16;
/// Index and length, with no text.
const COMMENT_MIN_SIZE: usize = 8;
const JOINT_EXTRA_SIZE: usize = 12;
const MODEL_EXTRA_SIZE: usize = 12;
/// Where in a joint record its parent name starts: after the flags byte and the 32-byte name.
const JOINT_PARENT_NAME_OFFSET: u64 = 33;

// ---------------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------------

/// A fixed-size, NUL-terminated text field, kept whole: the bytes after the terminator are often
/// left-over exporter memory, and keeping them lets a file be written back byte for byte.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FixedText<const N: usize>(pub [u8; N]);

impl<const N: usize> FixedText<N> {
    /// `text`, NUL-padded and cut (at a character boundary) to N − 1 bytes so a terminator follows.
    pub fn new(text: &str) -> FixedText<N> {
        let mut length = text.len().min(N.saturating_sub(1));
        while !text.is_char_boundary(length) {
            length = length.saturating_sub(1);
        }
        let mut bytes = [0u8; N];
        for (slot, &byte) in bytes.iter_mut().zip(text.as_bytes().iter().take(length)) {
            *slot = byte;
        }
        FixedText(bytes)
    }

    /// The text's bytes: up to the first NUL, or all N when there is none.
    pub fn bytes(&self) -> &[u8] {
        let end = self.0.iter().position(|&byte| byte == 0).unwrap_or(N);
        self.0.get(..end).unwrap_or(&self.0)
    }

    /// The text, with bytes that are not UTF-8 replaced.
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.bytes())
    }
}

impl<const N: usize> Default for FixedText<N> {
    fn default() -> FixedText<N> {
        FixedText([0; N])
    }
}

impl<const N: usize> fmt::Debug for FixedText<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text())?;
        let after = self.0.get(self.bytes().len()..).unwrap_or_default();
        if after.iter().any(|&byte| byte != 0) {
            write!(f, " (+ \"{}\" after the NUL)", after.escape_ascii())?;
        }
        Ok(())
    }
}

/// A `.ms3d` file, field for field.
#[derive(Clone, Debug, PartialEq)]
pub struct Ms3dFile {
    /// 3 or 4.
    pub version: i32,
    pub vertices: Vec<Ms3dVertex>,
    pub triangles: Vec<Ms3dTriangle>,
    pub groups: Vec<Ms3dGroup>,
    pub materials: Vec<Ms3dMaterial>,
    /// Frames per second of the timeline (fAnimationFPS).
    pub animation_fps: f32,
    /// Where the editor's time slider was (fCurrentTime); not used for playback.
    pub current_time: f32,
    /// Length of the timeline in frames (iTotalFrames).
    pub total_frames: i32,
    pub joints: Vec<Ms3dJoint>,
    /// The trailer sections, each present only when the file goes on that far. [`write`] fills a
    /// missing section that comes before a present one with an empty one (no comments, joints -1
    /// with zero weights, zero colours), so `parse(write(x)) == x` for documents whose present
    /// sections form a prefix of this list, as [`parse`] produces them.
    pub comments: Option<Ms3dComments>,
    pub vertex_extras: Option<Ms3dVertexExtras>,
    pub joint_extras: Option<Ms3dJointExtras>,
    pub model_extra: Option<Ms3dModelExtra>,
    /// Bytes from the first section this reader does not understand to the end of the file: a
    /// joint- or model-extra subversion other than 1, or anything after the model extra.
    pub unparsed_tail: Vec<u8>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ms3dVertex {
    /// SELECTED 1, HIDDEN 2, SELECTED2 4.
    pub flags: u8,
    pub position: Vec3,
    /// The joint that moves this vertex, or -1 for none.
    pub bone_id: i8,
    pub reference_count: u8,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ms3dTriangle {
    pub flags: u16,
    pub vertex_indices: [u16; 3],
    /// Per corner.
    pub normals: [Vec3; 3],
    /// Per corner texture coordinates, (s, t) with t = 0 at the top of the image.
    pub s: [f32; 3],
    pub t: [f32; 3],
    pub smoothing_group: u8,
    /// The group the editor keeps the triangle in; the groups' own lists decide what is drawn.
    pub group_index: u8,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ms3dGroup {
    pub flags: u8,
    pub name: FixedText<32>,
    pub triangle_indices: Vec<u16>,
    /// -1 for none.
    pub material_index: i8,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ms3dMaterial {
    pub name: FixedText<32>,
    pub ambient: Vec4,
    pub diffuse: Vec4,
    pub specular: Vec4,
    pub emissive: Vec4,
    /// 0 to 128.
    pub shininess: f32,
    /// 0 (invisible) to 1 (opaque): the SDK uses it as every colour's alpha.
    pub transparency: f32,
    pub mode: u8,
    /// A path as the author's machine wrote it: relative (`.\skin.jpg`) or absolute (`C:\..`).
    pub texture: FixedText<128>,
    pub alphamap: FixedText<128>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ms3dJoint {
    pub flags: u8,
    pub name: FixedText<32>,
    /// Empty for a root.
    pub parent_name: FixedText<32>,
    /// Euler angles in radians, relative to the parent: R = Rz·Ry·Rx.
    pub rotation: Vec3,
    /// Relative to the parent.
    pub position: Vec3,
    /// Euler angles relative to the joint's local bind rotation.
    pub rotation_keys: Vec<Ms3dKey>,
    /// Offsets in the joint's local bind frame.
    pub position_keys: Vec<Ms3dKey>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ms3dKey {
    /// Seconds. Keys of a channel come in non-decreasing time order.
    pub time: f32,
    pub value: Vec3,
}

/// The comment section (subversion 1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ms3dComments {
    pub groups: Vec<Ms3dComment>,
    pub materials: Vec<Ms3dComment>,
    pub joints: Vec<Ms3dComment>,
    /// The model comment has no index.
    pub model: Option<Vec<u8>>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ms3dComment {
    /// The group, material or joint commented on.
    pub index: i32,
    /// Without a terminating NUL.
    pub text: Vec<u8>,
}

/// The vertex-extra section: one entry per vertex.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ms3dVertexExtras {
    /// 1: joints and weights; 2 adds one u32 per vertex; 3 adds a second.
    pub subversion: u32,
    pub vertices: Vec<Ms3dVertexExtra>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ms3dVertexExtra {
    /// Three more joints, -1 for none.
    pub bone_ids: [i8; 3],
    /// Percentages for the vertex's own joint, `bone_ids[0]` and `bone_ids[1]`; `bone_ids[2]` gets
    /// the rest of 100 (see the module notes).
    pub weights: [u8; 3],
    /// Free for tools (MilkShape keeps colours here): only the first `subversion - 1` are in the
    /// file, the others stay zero.
    pub extra: [u32; 2],
}

/// The joint-extra section (subversion 1): one colour per joint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ms3dJointExtras {
    pub colors: Vec<Vec3>,
}

/// The model-extra section (subversion 1).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ms3dModelExtra {
    pub joint_size: f32,
    /// 0 simple, 1 depth-buffered with alpha reference, 2 depth-sorted triangles.
    pub transparency_mode: i32,
    pub alpha_ref: f32,
}

// ---------------------------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------------------------

fn byte_error(path: &Path, offset: u64, message: impl Into<String>) -> FormatError {
    FormatError { file: path.to_path_buf(), location: Location::Byte(offset), message: message.into() }
}

fn to_u64(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

/// Reads little-endian fields in order. Every `what` finishes the sentence "expected ..." of the
/// error raised when the field is missing or unusable.
struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    fn error_at(&self, offset: usize, message: impl Into<String>) -> FormatError {
        byte_error(self.path, to_u64(offset), message)
    }

    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.offset)
    }

    fn at_end(&self) -> bool {
        self.remaining() == 0
    }

    fn take(&mut self, length: usize, what: fmt::Arguments<'_>) -> Result<&'a [u8], FormatError> {
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

    fn array<const N: usize>(&mut self, what: fmt::Arguments<'_>) -> Result<[u8; N], FormatError> {
        let start = self.offset;
        let slice = self.take(N, what)?;
        <[u8; N]>::try_from(slice).map_err(|_| self.error_at(start, format!("expected {what} ({N} bytes)")))
    }

    fn u8(&mut self, what: fmt::Arguments<'_>) -> Result<u8, FormatError> {
        self.array::<1>(what).map(u8::from_le_bytes)
    }

    fn i8(&mut self, what: fmt::Arguments<'_>) -> Result<i8, FormatError> {
        self.array::<1>(what).map(i8::from_le_bytes)
    }

    fn u16(&mut self, what: fmt::Arguments<'_>) -> Result<u16, FormatError> {
        self.array::<2>(what).map(u16::from_le_bytes)
    }

    fn i32(&mut self, what: fmt::Arguments<'_>) -> Result<i32, FormatError> {
        self.array::<4>(what).map(i32::from_le_bytes)
    }

    fn u32(&mut self, what: fmt::Arguments<'_>) -> Result<u32, FormatError> {
        self.array::<4>(what).map(u32::from_le_bytes)
    }

    fn f32(&mut self, what: fmt::Arguments<'_>) -> Result<f32, FormatError> {
        let start = self.offset;
        let value = f32::from_le_bytes(self.array::<4>(what)?);
        if value.is_finite() {
            Ok(value)
        } else {
            Err(self.error_at(start, format!("expected a finite number for {what}, found {value}")))
        }
    }

    fn vec3(&mut self, what: fmt::Arguments<'_>) -> Result<Vec3, FormatError> {
        let x = self.f32(format_args!("{what} x"))?;
        let y = self.f32(format_args!("{what} y"))?;
        let z = self.f32(format_args!("{what} z"))?;
        Ok(Vec3::new(x, y, z))
    }

    fn vec4(&mut self, what: fmt::Arguments<'_>) -> Result<Vec4, FormatError> {
        let xyz = self.vec3(what)?;
        let w = self.f32(format_args!("{what} w"))?;
        Ok(xyz.extend(w))
    }

    fn text<const N: usize>(&mut self, what: fmt::Arguments<'_>) -> Result<FixedText<N>, FormatError> {
        self.array::<N>(what).map(FixedText)
    }

    /// Checks that `count` records of `size` bytes (at least, when `at_least`) can follow, before
    /// any is read or allocated. Errors point at `count_offset`: the count, or the subversion of a
    /// section whose record count is implied (one per vertex or joint).
    fn expect_records(
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
    fn count(&mut self, what: &str, size: usize, at_least: bool, records: &str) -> Result<usize, FormatError> {
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

fn read_vertices(reader: &mut Reader<'_>) -> Result<Vec<Ms3dVertex>, FormatError> {
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

fn read_triangles(reader: &mut Reader<'_>) -> Result<Vec<Ms3dTriangle>, FormatError> {
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

fn read_groups(reader: &mut Reader<'_>) -> Result<Vec<Ms3dGroup>, FormatError> {
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

fn read_materials(reader: &mut Reader<'_>) -> Result<Vec<Ms3dMaterial>, FormatError> {
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

fn read_joints(reader: &mut Reader<'_>) -> Result<Vec<Ms3dJoint>, FormatError> {
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

fn read_keys(reader: &mut Reader<'_>, joint: usize, count: usize, channel: &str) -> Result<Vec<Ms3dKey>, FormatError> {
    let mut keys = Vec::with_capacity(count);
    for index in 0..count {
        let time = reader.f32(format_args!("joint {joint} {channel} key {index} time"))?;
        let value = reader.vec3(format_args!("joint {joint} {channel} key {index} value"))?;
        keys.push(Ms3dKey { time, value });
    }
    Ok(keys)
}

/// The optional sections after the joints: each may be where the file ends.
fn read_trailer(reader: &mut Reader<'_>, file: &mut Ms3dFile) -> Result<(), FormatError> {
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

fn keep_tail(reader: &mut Reader<'_>, file: &mut Ms3dFile, start: usize) -> Result<(), FormatError> {
    file.unparsed_tail = reader.bytes.get(start..).unwrap_or_default().to_vec();
    reader.offset = reader.bytes.len();
    Ok(())
}

fn read_comments(reader: &mut Reader<'_>, kind: &str) -> Result<Vec<Ms3dComment>, FormatError> {
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

fn read_comment_text(reader: &mut Reader<'_>, what: fmt::Arguments<'_>) -> Result<Vec<u8>, FormatError> {
    let start = reader.offset;
    let length = reader.i32(format_args!("the length of {what}"))?;
    let Ok(length) = usize::try_from(length) else {
        return Err(reader.error_at(start, format!("expected a length of 0 or more for {what}, found {length}")));
    };
    Ok(reader.take(length, format_args!("the text of {what}"))?.to_vec())
}

// ---------------------------------------------------------------------------------------------
// Layout and validation
// ---------------------------------------------------------------------------------------------

/// Which trailer sections [`write`] puts out: every present one and every one before it.
struct Sections {
    comments: bool,
    vertex_extras: bool,
    joint_extras: bool,
    model_extra: bool,
}

impl Sections {
    fn of(file: &Ms3dFile) -> Sections {
        let model_extra = file.model_extra.is_some();
        let joint_extras = model_extra || file.joint_extras.is_some();
        let vertex_extras = joint_extras || file.vertex_extras.is_some();
        let comments = vertex_extras || file.comments.is_some();
        Sections { comments, vertex_extras, joint_extras, model_extra }
    }
}

/// Extras per vertex record beyond joints and weights: `subversion - 1`, 0 to 2.
fn extra_value_count(subversion: u32) -> usize {
    usize::try_from(subversion.clamp(1, 3) - 1).unwrap_or(0)
}

/// Byte offsets of a document's records, as [`write`] lays them out and [`parse`] found them:
/// lets checks made after parsing (and on documents built in code) still point into the file.
struct Layout {
    vertices: u64,
    triangles: u64,
    groups: Vec<u64>,
    animation: u64,
    joints: Vec<u64>,
    /// The first vertex extra record (after the subversion).
    vertex_extras: u64,
    /// The joint-extra subversion.
    joint_extras: u64,
}

impl Layout {
    fn of(file: &Ms3dFile) -> Layout {
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

    fn vertex(&self, index: usize) -> u64 {
        self.vertices.saturating_add(to_u64(index).saturating_mul(to_u64(VERTEX_SIZE)))
    }

    fn triangle(&self, index: usize) -> u64 {
        self.triangles.saturating_add(to_u64(index).saturating_mul(to_u64(TRIANGLE_SIZE)))
    }

    fn group(&self, index: usize) -> u64 {
        self.groups.get(index).copied().unwrap_or(u64::MAX)
    }

    fn joint(&self, index: usize) -> u64 {
        self.joints.get(index).copied().unwrap_or(u64::MAX)
    }

    fn vertex_extra(&self, index: usize, subversion: u32) -> u64 {
        let record = to_u64(6 + 4 * extra_value_count(subversion));
        self.vertex_extras.saturating_add(to_u64(index).saturating_mul(record))
    }
}

/// The joint hierarchy resolved from parent names.
#[derive(Clone, Debug)]
struct JointOrder {
    /// Per file joint, its parent's file index.
    parents: Vec<Option<usize>>,
    /// Skeleton order, parents first: file indices.
    order: Vec<usize>,
    /// Per file joint, its skeleton index.
    skeleton_index: Vec<usize>,
}

/// Whether an i8 reference (joint or material) is -1 or names one of `count` items.
fn reference_ok(id: i8, count: usize) -> bool {
    id == -1 || usize::try_from(id).is_ok_and(|id| id < count)
}

/// Every check that needs the whole document: indices against what they point into, the joint
/// hierarchy, key order. Run by [`parse`] and again by [`to_model`] for documents built in code.
fn validate(file: &Ms3dFile, layout: &Layout, path: &Path) -> Result<JointOrder, FormatError> {
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
enum Visit {
    Unvisited,
    OnChain,
    Placed,
}

/// Parents by name (the first joint of a name, as the SDK's FindJointByName), then an order with
/// parents first that keeps the file's order where it already is one.
fn resolve_joints(file: &Ms3dFile, layout: &Layout, path: &Path) -> Result<JointOrder, FormatError> {
    let joint_count = file.joints.len();
    let mut by_name: HashMap<&[u8], usize> = HashMap::with_capacity(joint_count);
    for (index, joint) in file.joints.iter().enumerate() {
        by_name.entry(joint.name.bytes()).or_insert(index);
    }
    let mut parents = Vec::with_capacity(joint_count);
    for (index, joint) in file.joints.iter().enumerate() {
        let parent_name = joint.parent_name.bytes();
        if parent_name.is_empty() {
            parents.push(None);
            continue;
        }
        match by_name.get(parent_name) {
            Some(&parent) => parents.push(Some(parent)),
            None => {
                return Err(byte_error(
                    path,
                    layout.joint(index).saturating_add(JOINT_PARENT_NAME_OFFSET),
                    format!(
                        "expected the parent of joint {index} \"{}\" to be empty (a root) or the name of a joint, found \"{}\", which names none",
                        joint.name.text(),
                        joint.parent_name.text()
                    ),
                ));
            }
        }
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
    Ok(JointOrder { parents, order, skeleton_index })
}

// ---------------------------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------------------------

struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    fn u8(&mut self, value: u8) {
        self.bytes.push(value);
    }

    fn i8(&mut self, value: i8) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    fn u16(&mut self, value: u16) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// A u16 record count; the format holds no more than 65,535.
    fn count16(&mut self, count: usize) {
        self.u16(u16::try_from(count).unwrap_or(u16::MAX));
    }

    fn i32(&mut self, value: i32) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    fn u32(&mut self, value: u32) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    fn length32(&mut self, length: usize) {
        self.i32(i32::try_from(length).unwrap_or(i32::MAX));
    }

    fn f32(&mut self, value: f32) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    fn vec3(&mut self, value: Vec3) {
        for component in value.to_array() {
            self.f32(component);
        }
    }

    fn vec4(&mut self, value: Vec4) {
        for component in value.to_array() {
            self.f32(component);
        }
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    fn comments(&mut self, comments: &[Ms3dComment]) {
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

// ---------------------------------------------------------------------------------------------
// Animation
// ---------------------------------------------------------------------------------------------

/// MilkShape's Euler angles (radians) as a rotation: R = Rz(z)·Ry(y)·Rx(x), x applied first, as
/// the SDK's `AngleMatrix` and `AngleQuaternion` build it.
pub fn euler_rotation(angles: Vec3) -> Quat {
    (Quat::from_rotation_z(angles.z) * Quat::from_rotation_y(angles.y) * Quat::from_rotation_x(angles.x)).normalize()
}

/// A position key's Hermite tangents on the normalized parameter of the interval before it
/// (`incoming`) and after it (`outgoing`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Tangent {
    incoming: Vec3,
    outgoing: Vec3,
}

/// The SDK's `SetupTangents` (see the module notes).
fn position_tangents(keys: &[Ms3dKey]) -> Vec<Tangent> {
    let count = keys.len();
    let mut tangents = vec![Tangent::default(); count];
    if count <= 2 {
        return tangents;
    }
    for (index, tangent) in tangents.iter_mut().enumerate() {
        let before = if index == 0 { count - 1 } else { index - 1 };
        let after = if index + 1 == count { 0 } else { index + 1 };
        let (Some(before), Some(key), Some(after)) = (keys.get(before), keys.get(index), keys.get(after)) else { continue };
        let direction = after.value - before.value;
        let incoming_interval = key.time - before.time;
        let outgoing_interval = after.time - key.time;
        let span = incoming_interval + outgoing_interval;
        if span != 0.0 && span.is_finite() {
            *tangent =
                Tangent { incoming: direction * (incoming_interval / span), outgoing: direction * (outgoing_interval / span) };
        }
    }
    tangents
}

/// The two keys around `time` and the fraction between them; `Err` holds the key to use as is
/// (before the first key, from the last key on). `None` for no keys.
fn bracket<T>(keys: &[T], time_of: impl Fn(&T) -> f32, time: f32) -> Option<Result<(usize, f32), usize>> {
    let first = keys.first()?;
    let last_index = keys.len().checked_sub(1)?;
    let last = keys.last()?;
    if time.is_nan() || time < time_of(first) {
        return Some(Err(0));
    }
    if time >= time_of(last) {
        return Some(Err(last_index));
    }
    // Keys are in non-decreasing time order: the last key at or before `time` starts the interval,
    // and the one after it is strictly later.
    let index = keys.partition_point(|key| time_of(key) <= time).saturating_sub(1);
    let (Some(start), Some(end)) = (keys.get(index), keys.get(index + 1)) else { return Some(Err(last_index)) };
    let interval = time_of(end) - time_of(start);
    let fraction = if interval > 0.0 { ((time - time_of(start)) / interval).clamp(0.0, 1.0) } else { 0.0 };
    Some(Ok((index, fraction)))
}

/// One joint, ready to evaluate.
#[derive(Clone, Debug)]
struct AnimatedJoint {
    /// Skeleton index, always below the joint's own.
    parent: Option<usize>,
    bind_rotation: Quat,
    bind_translation: Vec3,
    /// Times and the key rotations as quaternions.
    rotation_keys: Vec<(f32, Quat)>,
    position_keys: Vec<Ms3dKey>,
    tangents: Vec<Tangent>,
}

impl AnimatedJoint {
    fn key_rotation(&self, time: f32) -> Quat {
        match bracket(&self.rotation_keys, |key| key.0, time) {
            None => Quat::IDENTITY,
            Some(Err(index)) => self.rotation_keys.get(index).map_or(Quat::IDENTITY, |key| key.1),
            Some(Ok((index, fraction))) => match (self.rotation_keys.get(index), self.rotation_keys.get(index + 1)) {
                (Some(start), Some(end)) => slerp_shortest(start.1, end.1, fraction),
                _ => Quat::IDENTITY,
            },
        }
    }

    fn key_position(&self, time: f32) -> Vec3 {
        match bracket(&self.position_keys, |key| key.time, time) {
            None => Vec3::ZERO,
            Some(Err(index)) => self.position_keys.get(index).map_or(Vec3::ZERO, |key| key.value),
            Some(Ok((index, fraction))) => {
                let keys = (self.position_keys.get(index), self.position_keys.get(index + 1));
                let tangents = (self.tangents.get(index), self.tangents.get(index + 1));
                match (keys, tangents) {
                    ((Some(start), Some(end)), (Some(out), Some(into))) => {
                        hermite(start.value, out.outgoing, end.value, into.incoming, fraction)
                    }
                    _ => Vec3::ZERO,
                }
            }
        }
    }
}

/// A file's joints and keys, evaluated directly: model-space poses at any time, in skeleton order.
/// The fidelity tests hold the model's channels (sampled on the GPU) to this.
#[derive(Clone, Debug)]
pub struct Ms3dAnimation {
    joints: Vec<AnimatedJoint>,
    duration: f32,
}

impl Ms3dAnimation {
    /// Checks the document (as [`parse`] does) and its timeline: a positive frame rate and a
    /// frame count of 0 or more.
    pub fn new(file: &Ms3dFile, path: &Path) -> Result<Ms3dAnimation, FormatError> {
        let layout = Layout::of(file);
        let order = validate(file, &layout, path)?;
        let duration = timeline(file, &layout, path)?;
        Ok(Ms3dAnimation { joints: animated_joints(file, &order), duration })
    }

    /// Total frames / frame rate, in seconds.
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// The file's joints; a model may add one rigid root after them (see [`to_model`]).
    pub fn joint_count(&self) -> usize {
        self.joints.len()
    }

    /// Model-space poses at `time` seconds, in the skeleton's order (parents first). Slots of `out`
    /// past the file's joints (the model's rigid root) get the identity.
    pub fn evaluate(&self, time: f32, out: &mut [JointPose]) {
        for index in 0..out.len() {
            let pose = match self.joints.get(index) {
                Some(joint) => {
                    let key_rotation = joint.key_rotation(time);
                    let key_position = joint.key_position(time);
                    let rotation = joint.bind_rotation * key_rotation;
                    let translation = joint.bind_translation + joint.bind_rotation * key_position;
                    compose(parent_pose(joint.parent, index, out), rotation, translation)
                }
                None => JointPose::IDENTITY,
            };
            if let Some(slot) = out.get_mut(index) {
                *slot = pose;
            }
        }
    }

    /// Model-space bind poses (no keys applied), in skeleton order.
    pub fn bind_poses(&self) -> Vec<JointPose> {
        let mut poses = vec![JointPose::IDENTITY; self.joints.len()];
        bind_poses_into(&self.joints, &mut poses);
        poses
    }
}

fn parent_pose(parent: Option<usize>, index: usize, poses: &[JointPose]) -> Option<JointPose> {
    parent.filter(|&parent| parent < index).and_then(|parent| poses.get(parent)).copied()
}

fn compose(parent: Option<JointPose>, rotation: Quat, translation: Vec3) -> JointPose {
    match parent {
        Some(parent) => {
            JointPose::new((parent.rotation * rotation).normalize(), parent.translation + parent.rotation * translation)
        }
        None => JointPose::new(rotation.normalize(), translation),
    }
}

fn bind_poses_into(joints: &[AnimatedJoint], out: &mut [JointPose]) {
    for index in 0..out.len() {
        let Some(joint) = joints.get(index) else { break };
        let pose = compose(parent_pose(joint.parent, index, out), joint.bind_rotation, joint.bind_translation);
        if let Some(slot) = out.get_mut(index) {
            *slot = pose;
        }
    }
}

fn animated_joints(file: &Ms3dFile, order: &JointOrder) -> Vec<AnimatedJoint> {
    order
        .order
        .iter()
        .filter_map(|&file_index| {
            let joint = file.joints.get(file_index)?;
            let parent =
                order.parents.get(file_index).copied().flatten().and_then(|parent| order.skeleton_index.get(parent)).copied();
            Some(AnimatedJoint {
                parent,
                bind_rotation: euler_rotation(joint.rotation),
                bind_translation: joint.position,
                rotation_keys: joint.rotation_keys.iter().map(|key| (key.time, euler_rotation(key.value))).collect(),
                position_keys: joint.position_keys.clone(),
                tangents: position_tangents(&joint.position_keys),
            })
        })
        .collect()
}

/// The timeline's length in seconds: total frames / frame rate, both checked.
fn timeline(file: &Ms3dFile, layout: &Layout, path: &Path) -> Result<f32, FormatError> {
    let fps = file.animation_fps;
    if !(fps > 0.0 && fps.is_finite()) {
        return Err(byte_error(
            path,
            layout.animation,
            format!(
                "expected a positive animation frame rate (fAnimationFPS) for a model with {} joints, found {fps}",
                file.joints.len()
            ),
        ));
    }
    let total_frames = file.total_frames;
    let duration = total_frames as f32 / fps;
    if total_frames < 0 || !duration.is_finite() {
        return Err(byte_error(
            path,
            layout.animation.saturating_add(8),
            format!("expected a total frame count (iTotalFrames) of 0 or more and a finite length, found {total_frames} frames at {fps} fps"),
        ));
    }
    Ok(duration)
}

// ---------------------------------------------------------------------------------------------
// Loading into a Model
// ---------------------------------------------------------------------------------------------

fn file_stem(path: &Path) -> String {
    path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Reads, parses and converts a `.ms3d` file.
pub fn load(path: &Path) -> Result<Model, FormatError> {
    let bytes = super::files::read(path, super::files::MAX_MODEL_BYTES).map_err(|message| FormatError::in_file(path, message))?;
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
    let geometry = build_geometry(file, &file_influences, root_joint, path, &layout)?;
    if file.joints.is_empty() || geometry.uses_root {
        skeleton.joints.push(Joint::new(name.clone(), None, Mat4::IDENTITY, JointPose::IDENTITY));
    }
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
        stats,
    };
    model.compute_bounds();
    Ok(model)
}

/// A joint's keys as local-space channels. The SDK's animated local transform is
/// `T(bind position)·R(bind rotation)·T(key position)·R(key rotation)`, so the rotation keys become
/// `bind rotation × key` (slerp commutes with a fixed left factor) and the position keys
/// `bind position + bind rotation × key`, tangents turned alike (a Hermite curve commutes with an
/// affine map): the model's channels then replace the rest pose's parts, as glTF's do.
fn joint_channels(index: usize, joint: &AnimatedJoint) -> Vec<Channel> {
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
fn vertex_influences(vertex: &Ms3dVertex, extra: Option<&Ms3dVertexExtra>, skeleton_index: &[usize]) -> Option<Vec<Influence>> {
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

struct Geometry {
    vertices: Vec<Vertex>,
    influences: Vec<Influence>,
    indices: Vec<u32>,
    meshes: Vec<Mesh>,
    max_influences: usize,
    uses_root: bool,
    uses_default_material: bool,
}

/// A triangle corner's identity for splitting: the file vertex, and the bit patterns of its normal
/// and texture coordinates.
type CornerKey = (u16, [u32; 5]);

fn build_geometry(
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
                            first_influence,
                            influence_count,
                        });
                        corners.insert(key, index);
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
fn load_material(
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
    let candidates = texture_candidates(&written, folder);
    let mut failures = Vec::new();
    let texture =
        candidates.iter().filter(|candidate| candidate.is_file()).find_map(|candidate| match textures.describe_file(candidate) {
            Ok(texture) => Some(texture),
            Err(error) => {
                failures.push(format!("{}: {error}", candidate.display()));
                None
            }
        });
    if texture.is_none() {
        let tried = candidates.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(", ");
        warnings.push(if failures.is_empty() {
            format!("material \"{name}\": texture \"{written}\" not found; tried {tried}")
        } else {
            format!("material \"{name}\": texture \"{written}\" not decoded ({}); tried {tried}", failures.join("; "))
        });
    }
    Material { name, base_color, texture, normal_map: None }
}

/// Where a material's texture may be, in the order tried: a relative path (`.\skin.jpg`,
/// `textures\skin.jpg`) under the model's folder; the file name alone in that folder (all that is
/// left of an absolute path such as `C:\models\skin.jpg`); then a file in that folder whose name
/// matches ignoring ASCII case, since the paths were written on Windows.
fn texture_candidates(written: &str, folder: &Path) -> Vec<PathBuf> {
    let normalized = written.trim().replace('\\', "/");
    let drive = normalized.as_bytes().get(1) == Some(&b':');
    let absolute = normalized.starts_with('/') || drive;
    let file_name = normalized.rsplit('/').next().unwrap_or_default().to_string();
    let mut candidates: Vec<PathBuf> = Vec::new();
    let mut add = |candidate: PathBuf| {
        if !candidates.contains(&candidate) {
            candidates.push(candidate);
        }
    };
    if !absolute {
        let relative: PathBuf = Path::new(&normalized).components().filter(|component| *component != Component::CurDir).collect();
        add(folder.join(relative));
    }
    if !file_name.is_empty() {
        add(folder.join(&file_name));
        if let Ok(entries) = std::fs::read_dir(folder) {
            let mut matches: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|entry| entry.file_name().to_str().is_some_and(|name| name.eq_ignore_ascii_case(&file_name)))
                .map(|entry| entry.path())
                .collect();
            matches.sort();
            matches.into_iter().for_each(&mut add);
        }
    }
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(time: f32, value: Vec3) -> Ms3dKey {
        Ms3dKey { time, value }
    }

    #[test]
    fn fixed_text_keeps_its_bytes_and_reads_up_to_the_nul() {
        let text = FixedText::<8>::new("joint_with_a_long_name");
        assert_eq!(text.bytes(), b"joint_w", "cut to N - 1 bytes");
        assert_eq!(text.0[7], 0);
        let mut raw = [0u8; 8];
        raw[..3].copy_from_slice(b"abc");
        raw[5] = 0x7f;
        let left_over = FixedText(raw);
        assert_eq!(left_over.text(), "abc");
        assert_ne!(left_over, FixedText::new("abc"), "bytes after the NUL count for equality");
        assert!(format!("{left_over:?}").contains("after the NUL"));
        assert_eq!(FixedText::<4>([b'a'; 4]).bytes(), b"aaaa", "no terminator: all N bytes");
        assert_eq!(FixedText::<4>::new("ééé").bytes(), "é".as_bytes(), "cut at a character boundary");
    }

    /// The SDK's AngleMatrix, written out: rows of Rz·Ry·Rx from sines and cosines.
    fn angle_matrix(angles: Vec3) -> glam::Mat3 {
        let (sr, cr) = angles.x.sin_cos();
        let (sp, cp) = angles.y.sin_cos();
        let (sy, cy) = angles.z.sin_cos();
        glam::Mat3::from_cols(
            Vec3::new(cp * cy, cp * sy, -sp),
            Vec3::new(sr * sp * cy - cr * sy, sr * sp * sy + cr * cy, sr * cp),
            Vec3::new(cr * sp * cy + sr * sy, cr * sp * sy - sr * cy, cr * cp),
        )
    }

    #[test]
    fn euler_rotation_is_the_sdk_angle_matrix() {
        for angles in [Vec3::new(0.3, -1.2, 2.5), Vec3::new(-2.0, 0.7, 0.1), Vec3::new(1.5, 1.5, -1.5)] {
            let ours = glam::Mat3::from_quat(euler_rotation(angles));
            let sdk = angle_matrix(angles);
            assert!(ours.abs_diff_eq(sdk, 1e-6), "{angles}: {ours} vs {sdk}");
        }
        // x applies first.
        let quarter = std::f32::consts::FRAC_PI_2;
        let rotated = euler_rotation(Vec3::new(quarter, 0.0, quarter)) * Vec3::Y;
        assert!(rotated.abs_diff_eq(Vec3::Z, 1e-6), "x takes Y to Z, then z leaves Z: {rotated}");
    }

    #[test]
    fn tangents_follow_the_sdk_rule() {
        assert_eq!(position_tangents(&[key(0.0, Vec3::ZERO), key(1.0, Vec3::ONE)]), vec![Tangent::default(); 2]);
        // Uneven spacing: interior key 1 between t = 0 and t = 3.
        let keys = [key(0.0, Vec3::ZERO), key(1.0, Vec3::X), key(3.0, Vec3::new(4.0, 2.0, 0.0))];
        let tangents = position_tangents(&keys);
        let direction = Vec3::new(4.0, 2.0, 0.0);
        assert!(tangents[1].incoming.abs_diff_eq(direction / 3.0, 1e-6));
        assert!(tangents[1].outgoing.abs_diff_eq(direction * 2.0 / 3.0, 1e-6));
        // The first key loops back to the last: intervals (0 - 3) and (1 - 0).
        let first = (keys[1].value - keys[2].value) * (1.0 / (1.0 - 3.0));
        assert!(tangents[0].outgoing.abs_diff_eq(first, 1e-6), "{:?}", tangents[0]);
        // Equal times everywhere: no division by zero.
        let flat = position_tangents(&[key(1.0, Vec3::ZERO), key(1.0, Vec3::X), key(1.0, Vec3::Y)]);
        assert!(flat.iter().all(|tangent| *tangent == Tangent::default()));
    }

    #[test]
    fn channels_hold_their_ends_and_skip_zero_length_intervals() {
        let joint = AnimatedJoint {
            parent: None,
            bind_rotation: Quat::IDENTITY,
            bind_translation: Vec3::ZERO,
            rotation_keys: vec![(1.0, Quat::IDENTITY), (1.0, Quat::from_rotation_y(1.0)), (2.0, Quat::from_rotation_y(2.0))],
            position_keys: vec![key(1.0, Vec3::X), key(2.0, Vec3::Y)],
            tangents: vec![Tangent::default(); 2],
        };
        assert_eq!(joint.key_position(0.0), Vec3::X);
        assert_eq!(joint.key_position(5.0), Vec3::Y);
        assert_eq!(joint.key_position(f32::NAN), Vec3::X);
        // Zero tangents ease in and out: halfway in time is halfway in space by symmetry.
        assert!(joint.key_position(1.5).abs_diff_eq(Vec3::new(0.5, 0.5, 0.0), 1e-6));
        assert!(joint.key_position(1.25).x > 0.75, "smoothstep, not linear");
        // At t = 1 the interval [1, 1] is empty: the next one, starting at key 1, is used.
        assert!(joint.key_rotation(1.0).angle_between(Quat::from_rotation_y(1.0)) < 1e-6);
        assert!(joint.key_rotation(1.5).angle_between(Quat::from_rotation_y(1.5)) < 1e-5);
    }

    fn small_file() -> Ms3dFile {
        let vertex = |x: f32, bone_id: i8| Ms3dVertex { flags: 0, position: Vec3::new(x, 1.0, 0.0), bone_id, reference_count: 1 };
        let triangle = Ms3dTriangle { vertex_indices: [0, 1, 2], normals: [Vec3::Z; 3], ..Ms3dTriangle::default() };
        let joint = |name: &str, parent: &str| Ms3dJoint {
            name: FixedText::new(name),
            parent_name: FixedText::new(parent),
            position: Vec3::Y,
            rotation_keys: vec![key(0.0, Vec3::ZERO), key(1.0, Vec3::X)],
            ..Ms3dJoint::default()
        };
        Ms3dFile {
            version: 4,
            vertices: vec![vertex(0.0, 0), vertex(1.0, 1), vertex(2.0, -1)],
            triangles: vec![triangle],
            groups: vec![Ms3dGroup { name: FixedText::new("body"), triangle_indices: vec![0], material_index: -1, flags: 0 }],
            materials: Vec::new(),
            animation_fps: 24.0,
            current_time: 0.0,
            total_frames: 24,
            joints: vec![joint("root", ""), joint("arm", "root")],
            comments: None,
            vertex_extras: None,
            joint_extras: None,
            model_extra: None,
            unparsed_tail: Vec::new(),
        }
    }

    #[test]
    fn layout_offsets_point_at_the_written_fields() {
        let mut file = small_file();
        file.vertex_extras = Some(Ms3dVertexExtras { subversion: 3, vertices: vec![Ms3dVertexExtra::default(); 3] });
        file.joint_extras = Some(Ms3dJointExtras { colors: vec![Vec3::ONE; 2] });
        let bytes = write(&file);
        let layout = Layout::of(&file);
        let at = |offset: u64, length: usize| &bytes[offset as usize..offset as usize + length];
        assert_eq!(at(layout.vertex(2) + 13, 1), [0xff], "vertex 2's joint");
        assert_eq!(at(layout.triangle(0) + 2, 6), [0, 0, 1, 0, 2, 0], "triangle 0's vertices");
        assert_eq!(at(layout.group(0) + 1, 4), b"body");
        assert_eq!(at(layout.animation, 4), 24.0f32.to_le_bytes());
        assert_eq!(at(layout.joint(1) + JOINT_PARENT_NAME_OFFSET, 4), b"root");
        assert_eq!(at(layout.vertex_extras - 4, 4), 3u32.to_le_bytes());
        assert_eq!(at(layout.joint_extras, 4), 1i32.to_le_bytes());
        assert_eq!(layout.joint_extras as usize + 4 + 2 * 12, bytes.len());
    }

    #[test]
    fn reader_errors_name_the_offset_and_what_was_expected() {
        let path = Path::new("short.ms3d");
        let mut reader = Reader { bytes: &[1, 2, 3], offset: 1, path };
        let error = reader.i32(format_args!("the format version")).expect_err("two bytes are not an i32");
        assert_eq!(error.location, Location::Byte(1));
        assert!(
            error.to_string().contains("short.ms3d (byte 1): expected the format version (4 bytes), found 2 bytes"),
            "{error}"
        );
        let mut reader = Reader { bytes: &[0, 0, 0xc0, 0x7f], offset: 0, path };
        let error = reader.f32(format_args!("x")).expect_err("NaN");
        assert!(error.message.contains("expected a finite number for x, found NaN"), "{error}");
        let reader = Reader { bytes: &[0; 10], offset: 2, path };
        let error = reader.expect_records(usize::MAX, 15, 0, false, format_args!("vertices")).expect_err("overflow");
        assert!(error.message.contains("more than addressable"), "{error}");
    }

    #[test]
    fn influences_follow_the_sdk_slots() {
        let skeleton_index = [0, 1, 2, 3];
        let vertex = Ms3dVertex { bone_id: 0, ..Ms3dVertex::default() };
        let extra = |ids: [i8; 3], weights: [u8; 3]| Ms3dVertexExtra { bone_ids: ids, weights, extra: [0; 2] };
        let weights_of = |influences: Option<Vec<Influence>>| {
            let mut pairs: Vec<(u32, f32)> =
                influences.expect("some joint").into_iter().map(|influence| (influence.joint, influence.weight)).collect();
            pairs.sort_by_key(|pair| pair.0);
            pairs
        };
        let close = |a: &[(u32, f32)], b: &[(u32, f32)]| {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.0 == b.0 && (a.1 - b.1).abs() < 1e-6)
        };
        let got = weights_of(vertex_influences(&vertex, Some(&extra([1, 2, 3], [30, 20, 0])), &skeleton_index));
        assert!(close(&got, &[(0, 0.3), (1, 0.2), (3, 0.5)]), "{got:?}");
        let got = weights_of(vertex_influences(&vertex, Some(&extra([1, -1, -1], [0, 0, 0])), &skeleton_index));
        assert!(close(&got, &[(0, 1.0)]), "all-zero weights: the vertex's own joint: {got:?}");
        let got = weights_of(vertex_influences(&vertex, Some(&extra([-1, -1, -1], [0, 60, 40])), &skeleton_index));
        assert!(close(&got, &[(0, 1.0)]), "nothing positive left: the SDK's fallback: {got:?}");
        let rigid = Ms3dVertex { bone_id: -1, ..Ms3dVertex::default() };
        assert_eq!(vertex_influences(&rigid, None, &skeleton_index), None);
    }
}
