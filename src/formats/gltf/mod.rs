//! glTF 2.0 (.gltf with its buffers and images, or one .glb) into the one [`Model`] type.
//!
//! glTF is Y-up, right-handed and in metres like vkskin, so nothing is converted. Every mesh
//! primitive of triangles becomes a [`Mesh`]. Every skin's joints become joints of one
//! [`Skeleton`], parents first; a mesh on a node without a skin gets a joint of its own, so rigid
//! parts follow their node. Every animation keeps its curves (STEP, LINEAR, CUBICSPLINE) as
//! channels of the joints' local translation, rotation and scale; the non-joint nodes between two
//! joints become the lower joint's fixed `pre` transform, and a non-joint ancestor that is animated
//! becomes a joint itself. [`Rig`] evaluates the curves directly on the node tree, by the spec's
//! formulas: the reference the fidelity tests hold the GPU to.
//!
//! The skinned mesh node's own transform is ignored, as the spec says: a skinned vertex goes
//! through `global(joint) × inverse bind` alone. Exporters often fold one transform common to all
//! of a skin's joints into its inverse bind matrices (a Z-up-to-Y-up turn, a "bind shape"); then
//! the skin's vertices are stored moved by it and its joints' inverse binds undo it, which changes
//! no skinned position at any pose but makes the stored vertices the rest pose, as a [`Model`]'s
//! bind pose must be (the bind palette is the identity).
//!
//! The file is trusted for nothing, and read through the `gltf` crate: its GLB splitter, JSON
//! types, validation, document and accessor iterators. Each is reached behind a preflight that
//! closes what makes it panic on a hostile file (gltf 1.4.1): the GLB header's length, the one
//! index its validation reads unchecked, and each accessor's count, stride and byte ranges
//! (`container.rs`, `accessors.rs`). Buffers are read here, not by `import_buffers`, which unwraps
//! the percent-decoding of a URI such as `%FF.bin`. Decoded data and vertices are capped, so a
//! small file cannot ask for gigabytes by pointing many primitives at one large accessor.
//!
//! `container.rs` (GLB chunks, JSON), `buffers.rs` (URIs), `accessors.rs`, `hierarchy.rs` (the node
//! tree), `skins.rs`, `meshes.rs`, `materials.rs`, `curves.rs` (animation samplers) and `rig.rs`
//! (direct evaluation and the joints' channels). Here: the entry points.

use accessors::Data;
use buffers::load_buffers;
use builder::Builder;
use container::{check_asset, parse_json, split_container, validate};
use curves::read_animations;
use gltf::accessor::DataType;
use hierarchy::Hierarchy;
use rig::{animated_nodes, set_local_frames};
use std::cell::Cell;
use std::path::Path;

use gltf::Document;

use crate::formats::{files, FormatError, Location};
use crate::model::{FileLayout, LoadStats, Model};

mod accessors;
mod buffers;
mod builder;
mod container;
mod curves;
mod hierarchy;
mod materials;
mod meshes;
mod rig;
mod skins;
pub use rig::Rig;

/// Decoded accessor data in all, in bytes. Real models need a few megabytes; the cap is what stops
/// a small file from reading one large accessor thousands of times.
const MAX_DECODED_BYTES: usize = 512 << 20;

/// Vertices in all (about 56 bytes each): far beyond a skinned sample model, far below memory.
const MAX_VERTICES: usize = 1 << 22;

const MAX_INDICES: usize = 1 << 24;

/// Skeleton joints in all, skins and rigid nodes together; the MD5 loader has the same limit.
const MAX_JOINTS: usize = 1 << 16;

/// How close (relative to the matrix's largest element) a skin's rest palettes must be to count as
/// one common bind-shape transform; exporters' float noise is around 1e-6.
const BIND_SHAPE_TOLERANCE: f32 = 1e-4;

/// Component types by use. Vertex attributes and animation outputs may be quantized
/// (KHR_mesh_quantization, and the core spec for rotations), so every type but UNSIGNED_INT
/// converts to floats; weights are floats or normalized unsigned integers.
const FLOAT: &[DataType] = &[DataType::F32];
const QUANTIZED: &[DataType] = &[DataType::F32, DataType::I8, DataType::U8, DataType::I16, DataType::U16];
const WEIGHT: &[DataType] = &[DataType::F32, DataType::U8, DataType::U16];
const JOINT: &[DataType] = &[DataType::U8, DataType::U16];
const INDEX: &[DataType] = &[DataType::U8, DataType::U16, DataType::U32];

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

/// Loads a .gltf or .glb; buffers and images named by relative URIs are read from its folder.
/// Without culling cells: [`crate::formats::load_model`] adds them.
pub fn load(path: &Path) -> Result<Model, FormatError> {
    load_with_rig(path).map(|(model, _)| model)
}

/// [`load`], also returning the rig: the curves evaluated directly on the node tree.
pub fn load_with_rig(path: &Path) -> Result<(Model, Rig), FormatError> {
    let bytes = files::read(path, files::MAX_MODEL_BYTES).map_err(|message| FormatError::in_file(path, message))?;
    let folder = path.parent().unwrap_or(Path::new(""));
    load_from_slice_with_rig(&bytes, path, Some(folder))
}

/// Loads glTF JSON or GLB bytes already in memory. `path` names the file in errors and the model;
/// external URIs are resolved against `base_dir`, and with `None` the file system is never touched
/// (an external buffer is then an error, an external image a warning). The fuzz target's entry.
pub fn load_from_slice(bytes: &[u8], path: &Path, base_dir: Option<&Path>) -> Result<Model, FormatError> {
    load_from_slice_with_rig(bytes, path, base_dir).map(|(model, _)| model)
}

/// [`load_from_slice`], also returning the rig: the curves evaluated directly on the node tree.
pub fn load_from_slice_with_rig(bytes: &[u8], path: &Path, base_dir: Option<&Path>) -> Result<(Model, Rig), FormatError> {
    let container = split_container(bytes, path)?;
    let root = parse_json(&container, path)?;
    let mut warnings = Vec::new();
    check_asset(&root, path, &mut warnings)?;
    validate(&root, path)?;
    let document = Document::from_json_without_validation(root);
    let buffers = load_buffers(&document, &container, base_dir, path)?;
    let in_bin = document.buffers().next().is_some_and(|buffer| matches!(buffer.source(), gltf::buffer::Source::Bin));
    let bin_offset = container.bin.as_ref().map(|&(_, offset)| offset).filter(|_| in_bin);
    let data = Data { path, document: &document, buffers: &buffers, bin_offset, budget: Cell::new(MAX_DECODED_BYTES) };
    let hierarchy = Hierarchy::build(&document, path)?;

    let mut builder = Builder::new(&data, &hierarchy, base_dir, warnings);
    let animations = read_animations(&data, &hierarchy, &mut builder.warnings)?;
    builder.add_skins()?;
    builder.add_meshes(!animations.is_empty())?;
    let animated = animated_nodes(&animations, hierarchy.parents.len());
    if builder.skeleton.is_empty() {
        builder.add_animated_nodes(&animated)?;
    }
    builder.promote_animated_ancestors(&animated)?;
    let Builder {
        mut skeleton,
        joint_nodes,
        vertices,
        influences,
        indices,
        meshes,
        file_meshes,
        materials,
        mut warnings,
        max_influences,
        morph_targets,
        morph_sources,
        rigid_joints,
        ..
    } = builder;
    // A rigid mesh's node became a joint for it to follow; its mesh is what it is.
    let mut mesh_nodes: Vec<usize> = rigid_joints.values().map(|&(joint, _)| joint as usize).collect();
    mesh_nodes.sort_unstable();
    // The file's joint order: by node (a node in two skins: its joints in skin order).
    let mut joint_order: Vec<u32> = (0..joint_nodes.len() as u32).collect();
    joint_order.sort_by_key(|&joint| joint_nodes[joint as usize]);
    set_local_frames(&mut skeleton, &joint_nodes, &hierarchy, &animated).map_err(|reason| error(path, reason))?;
    let mut model_animations: Vec<crate::anim::Animation> =
        animations.iter().map(|animation| animation.channels_for(&joint_nodes)).collect();
    for (model_animation, animation) in model_animations.iter_mut().zip(&animations) {
        for curve in &animation.weights {
            model_animation.weights.extend(weight_channels(curve, &morph_sources, path, &mut warnings)?);
        }
    }

    let rig = Rig::new(&hierarchy, joint_nodes, animations);
    let stats = LoadStats { max_influences, warnings, ..LoadStats::default() };
    let name = path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    let mut model = Model {
        name,
        vertices,
        influences,
        indices,
        meshes,
        materials,
        skeleton,
        animations: model_animations,
        clips: Vec::new(),
        bounds: Default::default(),
        levels: Vec::new(),
        stats,
        layout: FileLayout { to_model: glam::Mat4::IDENTITY, joint_order, meshes: file_meshes, mesh_nodes },
        morph_targets,
        influence_offsets: Vec::new(),
    };
    model.clip_each_animation();
    Ok((model, rig))
}

/// A node's `weights` curve as one weight channel per morph target of its mesh's primitives
/// (`sources`: per model target, its node and its index in the mesh). A curve on a node without
/// targets is skipped with a warning; one whose output is not keys × targets values is refused.
fn weight_channels(
    curve: &curves::WeightCurve,
    sources: &[(usize, usize)],
    path: &Path,
    warnings: &mut Vec<String>,
) -> Result<Vec<crate::anim::WeightChannel>, FormatError> {
    let targets: Vec<(usize, usize)> = sources
        .iter()
        .enumerate()
        .filter(|(_, &(node, _))| node == curve.node)
        .map(|(model, &(_, index))| (model, index))
        .collect();
    let Some(count) = targets.iter().map(|&(_, index)| index + 1).max() else {
        warnings.push(format!("a weights channel on node {} whose mesh has no morph targets: skipped", curve.node));
        return Ok(Vec::new());
    };
    let interpolation = match curve.interpolation {
        curves::Interpolation::Step => crate::anim::Interpolation::Step,
        curves::Interpolation::Linear => crate::anim::Interpolation::Linear,
        curves::Interpolation::CubicSpline => crate::anim::Interpolation::CubicSpline,
    };
    let per_key = interpolation.values_per_key();
    let expected = curve.times.len() * per_key * count;
    if curve.values.len() != expected {
        return Err(error(
            path,
            format!(
                "node {}'s weights channel: expected {expected} output values ({} keys x {count} targets x {per_key}), found {}",
                curve.node,
                curve.times.len(),
                curve.values.len()
            ),
        ));
    }
    let times = crate::anim::KeyTimes::from_list(curve.times.clone());
    Ok(targets
        .into_iter()
        .map(|(target, index)| crate::anim::WeightChannel {
            target,
            interpolation,
            times: times.clone(),
            values: (0..curve.times.len() * per_key).map(|slot| curve.values[slot * count + index]).collect(),
        })
        .collect())
}

fn error(path: &Path, message: impl Into<String>) -> FormatError {
    FormatError::in_file(path, message)
}

/// An error at a byte offset when there is one (data in a GLB's BIN chunk), otherwise in the file.
fn located(path: &Path, offset: Option<u64>, message: impl Into<String>) -> FormatError {
    match offset {
        Some(offset) => FormatError { file: path.to_path_buf(), location: Location::Byte(offset), message: message.into() },
        None => FormatError::in_file(path, message),
    }
}

// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::buffers::read_uri;
    use super::container::byte_of;
    use super::curves::{Curve, Interpolation};
    use super::*;
    use glam::{Quat, Vec4};
    use gltf::json::Root;

    fn curve(interpolation: Interpolation, times: &[f32], values: &[Vec4]) -> Curve {
        Curve { interpolation, times: times.to_vec(), values: values.to_vec() }
    }

    #[test]
    fn step_and_linear_clamp_outside_the_keys() {
        let values = [Vec4::new(1.0, 0.0, 0.0, 0.0), Vec4::new(3.0, 0.0, 0.0, 0.0)];
        let step = curve(Interpolation::Step, &[0.5, 1.0], &values);
        let linear = curve(Interpolation::Linear, &[0.5, 1.0], &values);
        assert_eq!(step.sample(0.0, false).x, 1.0, "before the first key: the first value");
        assert_eq!(step.sample(0.75, false).x, 1.0);
        assert_eq!(step.sample(1.0, false).x, 3.0, "a step takes the new value at its key");
        assert_eq!(linear.sample(0.75, false).x, 2.0);
        assert_eq!(linear.sample(9.0, false).x, 3.0, "after the last key: the last value");
    }

    #[test]
    fn cubic_spline_follows_the_hermite_form() {
        // Keys (in, value, out): value 0 with out-tangent 2, then value 1 with in-tangent -1.
        let values = [Vec4::ZERO, Vec4::ZERO, Vec4::splat(2.0), Vec4::splat(-1.0), Vec4::ONE, Vec4::ZERO];
        let cubic = curve(Interpolation::CubicSpline, &[1.0, 3.0], &values);
        let (s, span) = (0.25f32, 2.0f32);
        let (out_tangent, in_tangent) = (2.0, -1.0);
        let expected = (s.powi(3) - 2.0 * s * s + s) * span * out_tangent
            + (-2.0 * s.powi(3) + 3.0 * s * s)
            + (s.powi(3) - s * s) * span * in_tangent;
        assert!((cubic.sample(1.5, false).x - expected).abs() < 1e-6);
        assert_eq!(cubic.sample(1.0, false).x, 0.0);
        assert_eq!(cubic.sample(3.0, false).x, 1.0);
    }

    #[test]
    fn linear_rotation_takes_the_short_arc() {
        let a = Quat::from_rotation_y(0.2);
        let b = -Quat::from_rotation_y(0.6);
        let rotation = curve(Interpolation::Linear, &[0.0, 1.0], &[Vec4::from(a), Vec4::from(b)]);
        let mid = Quat::from_vec4(rotation.sample(0.5, true));
        assert!(mid.angle_between(Quat::from_rotation_y(0.4)) < 1e-5);
    }

    #[test]
    fn data_uris_and_percent_decoding() {
        let data_uri = |payload: &str| read_uri(&format!("data:application/octet-stream;base64,{payload}"), None, 64, true);
        assert_eq!(data_uri("aGVsbG8="), Ok((b"hello".to_vec(), None)));
        assert_eq!(data_uri("aGVsbG8"), Ok((b"hello".to_vec(), None)), "padding is optional");
        assert_eq!(data_uri(""), Ok((Vec::new(), None)));
        for broken in ["aGV*", "aGVsbG8=x", "a"] {
            assert!(data_uri(broken).is_err_and(|reason| reason.contains("base64")), "{broken}");
        }
        let percent = |payload: &str| read_uri(&format!("data:text/plain,{payload}"), None, 64, true);
        assert_eq!(percent("a%20b"), Ok((b"a b".to_vec(), None)));
        assert_eq!(percent("%FF"), Ok((vec![0xFF], None)), "decodes bytes; a path's UTF-8 is checked apart");
    }

    #[test]
    fn uris_without_a_folder_never_reach_the_file_system() {
        let error = read_uri("model.bin", None, 1 << 20, true).expect_err("no folder");
        assert!(error.contains("model.bin"), "{error}");
        assert!(read_uri("https://example.com/a.bin", Some(Path::new(".")), 1 << 20, true)
            .expect_err("a scheme")
            .contains("https"));
        assert!(read_uri("%FF.bin", Some(Path::new(".")), 1 << 20, true).expect_err("not UTF-8").contains("UTF-8"));
        assert_eq!(read_uri("data:application/octet-stream;base64,AAEC", None, 1 << 20, true), Ok((vec![0, 1, 2], None)));
    }

    #[test]
    fn glb_headers_are_checked_before_use() {
        let path = Path::new("header.glb");
        let mut glb = b"glTF".to_vec();
        glb.extend(2u32.to_le_bytes());
        glb.extend(4u32.to_le_bytes()); // shorter than the header itself
        let short = split_container(&glb, path).err().expect("a too-short length is an error");
        assert!(short.message.contains("at least 20"), "{}", short.message);
        assert_eq!(short.location, Location::Byte(8));
        assert!(split_container(b"glTF\x02\0\0", path).is_err());
        let magic = split_container(b"GLTF\x02\0\0\0\x14\0\0\0", path).err().expect("bad magic");
        assert_eq!(magic.location, Location::Byte(0));
        assert!(magic.message.contains("47 4C 54 46"), "{}", magic.message);
    }

    #[test]
    fn json_errors_in_a_glb_point_at_their_byte() {
        assert_eq!(byte_of(b"{\n  \"a\": x\n}", 2, 8), 9);
        assert_eq!(byte_of(b"{}", 1, 1), 0);
        assert_eq!(byte_of(b"{}", 9, 9), 2, "clamped to the text");
    }

    #[test]
    fn accessor_ranges_include_stride_and_offset() {
        let json = r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":32}],
            "bufferViews":[{"buffer":0,"byteOffset":4,"byteLength":28,"byteStride":12}],
            "accessors":[{"bufferView":0,"byteOffset":4,"componentType":5126,"count":2,"type":"VEC3"},
                         {"bufferView":0,"byteOffset":8,"componentType":5126,"count":2,"type":"VEC3"}]}"#;
        let root: Root = gltf::json::deserialize::from_str(json).expect("test JSON parses");
        validate(&root, Path::new("range.glb")).expect("valid indices");
        let document = Document::from_json_without_validation(root);
        let mut bytes = Vec::new();
        for value in 0..8u32 {
            bytes.extend((value as f32).to_le_bytes());
        }
        let buffers = [bytes];
        let data = Data {
            path: Path::new("range.glb"),
            document: &document,
            buffers: &buffers,
            bin_offset: Some(100),
            budget: Cell::new(MAX_DECODED_BYTES),
        };
        let accessor = |index| document.accessors().nth(index).expect("the test has it");
        // View starts at float 1; accessor 0 at float 2; elements 3 floats apart.
        assert_eq!(data.floats::<3>(&accessor(0), "test", FLOAT).ok(), Some(vec![[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]]));
        // 8 + 12 + 12 = 32 > 28: the second element runs past the view.
        let past = data.floats::<3>(&accessor(1), "test", FLOAT).expect_err("past the view");
        assert_eq!(past.location, Location::Byte(112));
        assert!(past.message.contains("accessor 1") && past.message.contains("bufferView 0"), "{}", past.message);
        assert!(data.floats::<3>(&accessor(0), "test", &[DataType::U16]).is_err(), "component type is checked");
        assert!(data.floats::<2>(&accessor(0), "test", FLOAT).is_err(), "type is checked");
    }
}
