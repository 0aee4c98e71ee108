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
//! bind times that. The parent is the first joint of the parent name; a name that names no joint
//! ("none") makes a root, as the SDK's lookup leaves it and assimp opens it, with a warning. Keys are relative to the local bind: animated local = T(position)·R(rotation)·
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
//!
//! `read.rs`: bytes into the document types; `layout.rs`: sections, references and joint order;
//! `write.rs`: back to bytes; `animation.rs`: the SDK's evaluation; `convert.rs`: into the
//! `Model`. Here: the document types.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use glam::{Vec3, Vec4};

use crate::formats::{FormatError, Location};

mod animation;
mod convert;
mod layout;
mod read;
mod write;
pub use animation::{euler_rotation, Ms3dAnimation};
pub use convert::{load, to_model};
pub use read::parse;
pub use write::write;

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

fn byte_error(path: &Path, offset: u64, message: impl Into<String>) -> FormatError {
    FormatError { file: path.to_path_buf(), location: Location::Byte(offset), message: message.into() }
}

fn to_u64(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::animation::{position_tangents, AnimatedJoint, Tangent};
    use super::convert::vertex_influences;
    use super::layout::Layout;
    use super::read::Reader;
    use super::*;
    use crate::anim::Influence;
    use crate::formats::Location;
    use glam::Quat;
    use std::path::Path;

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
