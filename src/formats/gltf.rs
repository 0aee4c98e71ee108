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
//! The file is trusted for nothing. The JSON is read with gltf-json's serde types, but the `gltf`
//! crate's own entry points are not used, because they panic on hostile files (gltf 1.4.1):
//! `Gltf::from_slice`'s validation indexes a primitive's POSITION accessor without checking it,
//! its GLB parser subtracts 12 from a header length it has not checked (an overflow panic in
//! debug builds, which fuzzers run), and `import_buffers` unwraps the percent-decoding of a URI
//! such as `%FF.bin`. So the container, the URIs and every accessor are handled here: every index
//! is looked up with `get`, every accessor's byte range is checked against its bufferView and
//! buffer before a byte is read, and decoded data and vertices are capped, so a small
//! file cannot ask for gigabytes by pointing many primitives at one large accessor.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::{Mat3, Mat4, Quat, Vec2, Vec3, Vec4};
use gltf::json::accessor::{ComponentType, GenericComponentType, IndexComponentType, Type};
use gltf::json::animation::{Interpolation as JsonInterpolation, Property as JsonProperty};
use gltf::json::mesh::{Mode, Primitive, Semantic};
use gltf::json::validation::Checked;
use gltf::json::Root;

use super::{files, FormatError, Location};
use crate::anim::{self, slerp_shortest, Influence, Joint, JointPose, KeyTimes, Skeleton};
use crate::model::{compute_normals, compute_tangents, normalize_influences, LoadStats, Material, Mesh, Model, Texture, Vertex};

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

const GLB_MAGIC: &[u8; 4] = b"glTF";
const GLB_HEADER_BYTES: usize = 12;
const CHUNK_HEADER_BYTES: usize = 8;
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// Component types by use. Vertex attributes and animation outputs may be quantized
/// (KHR_mesh_quantization, and the core spec for rotations), so every type but UNSIGNED_INT
/// converts to floats; weights are floats or normalized unsigned integers.
const FLOAT: &[ComponentType] = &[ComponentType::F32];
const QUANTIZED: &[ComponentType] =
    &[ComponentType::F32, ComponentType::I8, ComponentType::U8, ComponentType::I16, ComponentType::U16];
const WEIGHT: &[ComponentType] = &[ComponentType::F32, ComponentType::U8, ComponentType::U16];
const JOINT: &[ComponentType] = &[ComponentType::U8, ComponentType::U16];
const INDEX: &[ComponentType] = &[ComponentType::U8, ComponentType::U16, ComponentType::U32];

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

/// Loads a .gltf or .glb; buffers and images named by relative URIs are read from its folder.
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
    let buffers = load_buffers(&root, &container, base_dir, path)?;
    let data = Data { path, root: &root, buffers: &buffers, budget: Cell::new(MAX_DECODED_BYTES) };
    let hierarchy = Hierarchy::build(&root, path)?;

    let mut builder = Builder::new(&data, &hierarchy, base_dir, warnings);
    let animations = read_animations(&data, &hierarchy, &mut builder.warnings)?;
    builder.add_skins()?;
    builder.add_meshes()?;
    let animated = animated_nodes(&animations, hierarchy.parents.len());
    builder.promote_animated_ancestors(&animated)?;
    let Builder { mut skeleton, joint_nodes, vertices, influences, indices, meshes, materials, warnings, max_influences, .. } =
        builder;
    set_local_frames(&mut skeleton, &joint_nodes, &hierarchy, &animated).map_err(|reason| error(path, reason))?;
    let model_animations = animations.iter().map(|animation| animation.channels_for(&joint_nodes)).collect();

    let rig = Rig::new(&hierarchy, joint_nodes, animations);
    let stats = LoadStats { max_influences, warnings };
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
        stats,
    };
    model.compute_bounds();
    Ok((model, rig))
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
// Container and JSON
// ---------------------------------------------------------------------------------------------

/// The JSON text and the binary chunk of a file.
struct Container<'a> {
    json: &'a [u8],
    /// Where the JSON starts in the file, for a GLB, whose errors are byte offsets.
    json_offset: Option<u64>,
    /// A GLB's BIN chunk and where it starts in the file.
    bin: Option<(&'a [u8], u64)>,
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let field = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(field.try_into().ok()?))
}

fn split_container<'a>(bytes: &'a [u8], path: &Path) -> Result<Container<'a>, FormatError> {
    if bytes.starts_with(GLB_MAGIC) {
        return split_glb(bytes, path);
    }
    // The spec forbids a byte-order mark; some tools write one anyway.
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(bytes);
    match text.iter().find(|byte| !byte.is_ascii_whitespace()) {
        Some(b'{') => Ok(Container { json: text, json_offset: None, bin: None }),
        _ if bytes.is_empty() => Err(located(path, Some(0), "expected a glTF file, found an empty file")),
        _ => {
            let head: Vec<String> = bytes.iter().take(4).map(|byte| format!("{byte:02X}")).collect();
            Err(located(
                path,
                Some(0),
                format!(
                    "expected a binary glTF (magic \"glTF\") or glTF JSON (starting with '{{'), found bytes {} (\"{}\")",
                    head.join(" "),
                    String::from_utf8_lossy(bytes.get(..4).unwrap_or(bytes)).escape_debug()
                ),
            ))
        }
    }
}

fn split_glb<'a>(bytes: &'a [u8], path: &Path) -> Result<Container<'a>, FormatError> {
    let at = |offset: usize, message: String| located(path, Some(offset as u64), message);
    let (Some(version), Some(length)) = (read_u32(bytes, 4), read_u32(bytes, 8)) else {
        return Err(at(bytes.len(), format!("expected a {GLB_HEADER_BYTES}-byte GLB header, found only {} bytes", bytes.len())));
    };
    if version != 2 {
        return Err(at(4, format!("expected GLB version 2, found {version}")));
    }
    let length = usize::try_from(length).unwrap_or(usize::MAX);
    if length < GLB_HEADER_BYTES + CHUNK_HEADER_BYTES {
        return Err(at(8, format!("expected a GLB length of at least 20 bytes (header and a chunk header), found {length}")));
    }
    let Some(file) = bytes.get(..length) else {
        return Err(at(
            8,
            format!("expected {length} bytes as the GLB header says, found only {} (the file is truncated)", bytes.len()),
        ));
    };

    let mut json: Option<(&[u8], usize)> = None;
    let mut bin: Option<(&[u8], u64)> = None;
    let mut offset = GLB_HEADER_BYTES;
    while offset < length {
        let (Some(chunk_length), Some(chunk_type)) = (read_u32(file, offset), read_u32(file, offset + 4)) else {
            return Err(at(offset, format!("expected an 8-byte chunk header, found {} bytes before the end", length - offset)));
        };
        let start = offset + CHUNK_HEADER_BYTES;
        let end = usize::try_from(chunk_length).ok().and_then(|chunk_length| start.checked_add(chunk_length));
        let Some(chunk) = end.and_then(|end| file.get(start..end)) else {
            return Err(at(
                offset,
                format!(
                    "expected the chunk's {chunk_length} bytes to fit in the GLB, found {} left",
                    length.saturating_sub(start)
                ),
            ));
        };
        match chunk_type {
            CHUNK_JSON if json.is_none() => json = Some((chunk, start)),
            _ if json.is_none() => {
                return Err(at(
                    offset + 4,
                    format!("expected the first chunk to be JSON (0x{CHUNK_JSON:08X}), found 0x{chunk_type:08X}"),
                ));
            }
            CHUNK_BIN if bin.is_none() => bin = Some((chunk, start as u64)),
            // Unknown chunks are to be skipped, says the spec.
            _ => {}
        }
        // Chunks start 4-byte aligned; be lenient with a writer that forgot the padding.
        offset = start.saturating_add(chunk.len()).saturating_add(3) & !3;
    }
    let Some((json, json_start)) = json else {
        return Err(at(GLB_HEADER_BYTES, "expected a JSON chunk, found none".to_string()));
    };
    Ok(Container { json, json_offset: Some(json_start as u64), bin })
}

fn parse_json(container: &Container<'_>, path: &Path) -> Result<Root, FormatError> {
    gltf::json::deserialize::from_slice::<Root>(container.json).map_err(|json_error| {
        let (line, column) = (json_error.line(), json_error.column());
        let text = json_error.to_string();
        let message = text.strip_suffix(&format!(" at line {line} column {column}")).unwrap_or(&text);
        let message = format!("expected valid glTF JSON: {message}");
        match container.json_offset {
            Some(offset) => located(
                path,
                Some(offset + byte_of(container.json, line, column)),
                format!("{message} (JSON line {line}, column {column})"),
            ),
            None if line > 0 => FormatError::at_line(path, line, format!("{message} (column {column})")),
            None => error(path, message),
        }
    })
}

/// The byte offset of a 1-based line and column in `text`.
fn byte_of(text: &[u8], line: usize, column: usize) -> u64 {
    let line_start = match line.checked_sub(2) {
        None => 0,
        Some(newlines) => {
            text.iter().enumerate().filter(|&(_, &byte)| byte == b'\n').nth(newlines).map_or(text.len(), |(at, _)| at + 1)
        }
    };
    line_start.saturating_add(column.saturating_sub(1)).min(text.len()) as u64
}

fn check_asset(root: &Root, path: &Path, warnings: &mut Vec<String>) -> Result<(), FormatError> {
    let version = root.asset.version.as_str();
    if version.split('.').next() != Some("2") {
        return Err(error(path, format!("expected asset.version 2.x (glTF 2.0), found \"{version}\"")));
    }
    for extension in &root.extensions_required {
        match extension.as_str() {
            // Quantized attributes convert like any other component type.
            "KHR_mesh_quantization" => {}
            "KHR_draco_mesh_compression" | "EXT_meshopt_compression" => {
                return Err(error(
                    path,
                    format!(
                        "expected uncompressed geometry, found the required extension {extension}, which vkskin does not decode"
                    ),
                ));
            }
            other => warnings.push(format!("the file requires extension {other}, which vkskin ignores: it may look different")),
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Buffers and URIs
// ---------------------------------------------------------------------------------------------

struct BufferData {
    /// Exactly the buffer's byteLength.
    bytes: Vec<u8>,
    /// Where the buffer starts in the file: the GLB's BIN chunk.
    file_offset: Option<u64>,
}

fn load_buffers(
    root: &Root,
    container: &Container<'_>,
    base_dir: Option<&Path>,
    path: &Path,
) -> Result<Vec<BufferData>, FormatError> {
    // The budget for everything outside the file, checked before a byte is read: a small JSON
    // must not read gigabytes by naming a large file many times.
    let external = external_buffer_bytes(root);
    if external > files::MAX_EXTERNAL_BYTES {
        return Err(error(
            path,
            format!(
                "its buffers declare {external} bytes in external files; expected at most {} in all",
                files::MAX_EXTERNAL_BYTES
            ),
        ));
    }
    let mut buffers = Vec::with_capacity(root.buffers.len());
    for (index, buffer) in root.buffers.iter().enumerate() {
        let declared = buffer.byte_length.0;
        let (bytes, file_offset) = match (&buffer.uri, container.bin) {
            (Some(uri), _) => {
                // Only the declared bytes are read; a shorter file is the error below.
                let (bytes, _) = read_uri(uri, base_dir, declared, false)
                    .map_err(|reason| error(path, format!("buffer {index}: {reason}")))?;
                (bytes, None)
            }
            (None, Some((bin, offset))) if index == 0 => (bin.to_vec(), Some(offset)),
            (None, Some(_)) => {
                return Err(error(
                    path,
                    format!("buffer {index} has no uri: expected one (only buffer 0 may be the GLB's BIN chunk)"),
                ));
            }
            (None, None) => {
                return Err(error(
                    path,
                    format!("buffer {index} has no uri and the file has no BIN chunk: expected its {declared} bytes somewhere"),
                ));
            }
        };
        let Some(bytes) = usize::try_from(declared).ok().and_then(|declared| bytes.get(..declared)) else {
            return Err(located(
                path,
                file_offset,
                format!("buffer {index}: expected byteLength {declared} bytes, found {}", bytes.len()),
            ));
        };
        buffers.push(BufferData { bytes: bytes.to_vec(), file_offset });
    }
    Ok(buffers)
}

/// The bytes the buffers with a URI declare (data: URIs count too: they are decoded).
fn external_buffer_bytes(root: &Root) -> u64 {
    root.buffers.iter().filter(|buffer| buffer.uri.is_some()).map(|buffer| buffer.byte_length.0).sum()
}

/// A URI's bytes, and the file they came from when they came from one. A relative path is read
/// from `base_dir` (never outside it: `files::inside`), at most `limit` bytes of it: the first
/// `limit` when `whole` is false, else a longer file is refused. With no `base_dir` the file
/// system is never touched.
fn read_uri(uri: &str, base_dir: Option<&Path>, limit: u64, whole: bool) -> Result<(Vec<u8>, Option<PathBuf>), String> {
    if let Some(rest) = uri.strip_prefix("data:") {
        let Some((header, payload)) = rest.split_once(',') else {
            return Err("expected a data URI with a ',' before its data, found none".to_string());
        };
        let bytes = if header.ends_with(";base64") { decode_base64(payload)? } else { files::percent_decode(payload)? };
        return Ok((bytes, None));
    }
    let scheme = uri.split_once(':').map(|(scheme, _)| scheme).filter(|scheme| {
        // A one-letter "scheme" is a Windows drive letter, which a relative reference cannot have either.
        scheme.len() > 1 && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    if let Some(scheme) = scheme {
        return Err(format!("expected a relative path or a data: URI, found the {scheme}: URI {}", files::quoted(uri)));
    }
    let Some(base_dir) = base_dir else {
        return Err(format!("it names the external file {}, and no folder was given to read it from", files::quoted(uri)));
    };
    let relative =
        String::from_utf8(files::percent_decode(uri)?).map_err(|_| format!("expected a UTF-8 path in {}", files::quoted(uri)))?;
    let file = files::inside(base_dir, &relative)?;
    let bytes = files::read_prefix(&file, limit, whole).map_err(|reason| format!("{}: {reason}", file.display()))?;
    Ok((bytes, Some(file)))
}

/// Standard or URL-safe base64, padding optional, whitespace ignored.
fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::with_capacity(text.len() / 4 * 3 + 3);
    let (mut bits, mut bit_count) = (0u32, 0u32);
    let mut padding = 0usize;
    for (position, character) in text.bytes().enumerate() {
        let value = match character {
            b'A'..=b'Z' => character - b'A',
            b'a'..=b'z' => character - b'a' + 26,
            b'0'..=b'9' => character - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => {
                padding += 1;
                continue;
            }
            _ if character.is_ascii_whitespace() => continue,
            _ => {
                return Err(format!(
                    "expected base64 data, found '{}' at character {position}",
                    char::from(character).escape_default()
                ))
            }
        };
        if padding > 0 {
            return Err(format!("expected base64 data to end after its '=' padding, found more at character {position}"));
        }
        bits = (bits << 6) | u32::from(value);
        bit_count += 6;
        if bit_count >= 8 {
            bit_count -= 8;
            bytes.push((bits >> bit_count) as u8);
            bits &= (1 << bit_count) - 1;
        }
    }
    // A lone sixth character carries fewer than 8 bits: no whole byte.
    if bit_count >= 6 {
        return Err("expected base64 data of a whole number of bytes, found a dangling character".to_string());
    }
    Ok(bytes)
}

// ---------------------------------------------------------------------------------------------
// Accessors
// ---------------------------------------------------------------------------------------------

/// The parsed document and its buffers, with checked accessor reads.
struct Data<'a> {
    path: &'a Path,
    root: &'a Root,
    buffers: &'a [BufferData],
    /// Decoded bytes still allowed (see [`MAX_DECODED_BYTES`]).
    budget: Cell<usize>,
}

/// The bytes an accessor's elements lie in, range-checked: element i starts at `i × stride`.
struct ElementRange<'b> {
    bytes: &'b [u8],
    stride: usize,
    file_offset: Option<u64>,
}

impl ElementRange<'_> {
    fn offset_of(&self, element: usize) -> Option<u64> {
        self.file_offset.map(|offset| offset.saturating_add(element.saturating_mul(self.stride) as u64))
    }
}

/// How raw components become values: the raw number, its component type and the normalized flag,
/// to a value or the end of the sentence "expected ...".
type Convert<'c, T> = &'c dyn Fn(f64, ComponentType, bool) -> Result<T, String>;

/// A bufferView's bytes, range-checked against its buffer.
struct ViewBytes<'b> {
    bytes: &'b [u8],
    /// Where the view starts in the file, when its buffer is the GLB's BIN chunk.
    file_offset: Option<u64>,
    stride: Option<usize>,
}

impl<'a> Data<'a> {
    fn view(&self, view_index: usize, what: &str) -> Result<ViewBytes<'a>, FormatError> {
        let views = &self.root.buffer_views;
        let view = views.get(view_index).ok_or_else(|| {
            error(self.path, format!("{what}: expected bufferView {view_index} to exist, found {} bufferViews", views.len()))
        })?;
        let buffer_index = view.buffer.value();
        let buffer = self.buffers.get(buffer_index).ok_or_else(|| {
            error(
                self.path,
                format!("bufferView {view_index}: expected buffer {buffer_index} to exist, found {} buffers", self.buffers.len()),
            )
        })?;
        let offset = view.byte_offset.map_or(0, |offset| offset.0);
        let end = u128::from(offset) + u128::from(view.byte_length.0);
        let file_offset = buffer.file_offset.map(|start| start.saturating_add(offset));
        let range = usize::try_from(offset).ok().zip(usize::try_from(end).ok());
        let Some(bytes) = range.and_then(|(start, end)| buffer.bytes.get(start..end)) else {
            return Err(located(
                self.path,
                file_offset,
                format!(
                    "bufferView {view_index} ({what}): expected bytes {offset}..{end} to lie within buffer {buffer_index} ({} bytes)",
                    buffer.bytes.len()
                ),
            ));
        };
        Ok(ViewBytes { bytes, file_offset, stride: view.byte_stride.map(|stride| stride.0) })
    }

    /// Checks that `count` elements from `byte_offset` fit in the bufferView. `packed` ignores
    /// the view's byteStride (sparse indices and values are always tightly packed).
    fn element_range(
        &self,
        name: &str,
        view_index: usize,
        byte_offset: u64,
        count: usize,
        element_size: usize,
        packed: bool,
    ) -> Result<ElementRange<'a>, FormatError> {
        let ViewBytes { bytes: view_bytes, file_offset: view_offset, stride: view_stride } = self.view(view_index, name)?;
        let stride = match view_stride {
            Some(stride) if !packed => stride,
            _ => element_size,
        };
        if stride < element_size {
            return Err(located(
                self.path,
                view_offset,
                format!("{name}: expected bufferView {view_index}'s byteStride to be at least the element size {element_size}, found {stride}"),
            ));
        }
        let needed = match count.checked_sub(1) {
            None => u128::from(byte_offset),
            Some(last) => {
                (stride as u128).saturating_mul(last as u128).saturating_add(u128::from(byte_offset) + element_size as u128)
            }
        };
        let file_offset = view_offset.map(|offset| offset.saturating_add(byte_offset));
        let bytes = usize::try_from(byte_offset).ok().and_then(|start| view_bytes.get(start..));
        match bytes {
            Some(bytes) if needed <= view_bytes.len() as u128 => Ok(ElementRange { bytes, stride, file_offset }),
            _ => Err(located(
                self.path,
                file_offset,
                format!(
                    "{name}: expected {count} elements of {element_size} bytes (stride {stride}) from byte {byte_offset} to fit in \
                     bufferView {view_index} ({} bytes), but they need {needed}",
                    view_bytes.len()
                ),
            )),
        }
    }

    fn charge(&self, bytes: usize, name: &str) -> Result<(), FormatError> {
        let left = self.budget.get();
        if bytes > left {
            return Err(error(
                self.path,
                format!(
                    "{name}: expected at most {} MiB of accessor data in all, found this accessor would pass it ({bytes} bytes more)",
                    MAX_DECODED_BYTES >> 20
                ),
            ));
        }
        self.budget.set(left - bytes);
        Ok(())
    }

    /// Reads an accessor of `N` components per element (SCALAR, VEC2..4, or MAT4 for 16).
    fn decode<T: Copy + Default, const N: usize>(
        &self,
        index: usize,
        what: &str,
        allowed: &[ComponentType],
        convert: Convert<'_, T>,
    ) -> Result<Vec<[T; N]>, FormatError> {
        let accessors = &self.root.accessors;
        let accessor = accessors.get(index).ok_or_else(|| {
            error(self.path, format!("{what}: expected accessor {index} to exist, found {} accessors", accessors.len()))
        })?;
        let name = format!("accessor {index} ({what})");
        let expected = type_of_width(N);
        match accessor.type_ {
            Checked::Valid(found) if Some(found) == expected => {}
            Checked::Valid(found) => {
                return Err(error(self.path, format!("{name}: expected type {}, found {}", width_name(N), type_name(found))));
            }
            Checked::Invalid => {
                return Err(error(self.path, format!("{name}: expected type {}, found an unknown type", width_name(N))))
            }
        }
        let allowed_names = allowed.iter().map(|component| component_name(*component)).collect::<Vec<_>>().join(", ");
        let component = match accessor.component_type {
            Checked::Valid(GenericComponentType(component)) if allowed.contains(&component) => component,
            Checked::Valid(GenericComponentType(component)) => {
                return Err(error(
                    self.path,
                    format!("{name}: expected componentType {allowed_names}, found {}", component_name(component)),
                ));
            }
            Checked::Invalid => {
                return Err(error(self.path, format!("{name}: expected componentType {allowed_names}, found an unknown one")));
            }
        };
        let count = usize::try_from(accessor.count.0).unwrap_or(usize::MAX);
        let element_size = N * component.size();
        let range = match accessor.buffer_view {
            Some(view) => Some(self.element_range(
                &name,
                view.value(),
                accessor.byte_offset.map_or(0, |offset| offset.0),
                count,
                element_size,
                false,
            )?),
            None => None,
        };
        self.charge(count.saturating_mul(N).saturating_mul(std::mem::size_of::<T>()), &name)?;

        let mut values = match &range {
            Some(range) => {
                let mut values = Vec::with_capacity(count);
                for element in 0..count {
                    values.push(self.decode_element(range, element, component, accessor.normalized, convert, &name)?);
                }
                values
            }
            // No bufferView: zeros, as the spec says, unless sparse values replace some.
            None => vec![[T::default(); N]; count],
        };
        if let Some(sparse) = &accessor.sparse {
            let sparse_count = usize::try_from(sparse.count.0).unwrap_or(usize::MAX);
            if sparse_count > count {
                return Err(error(
                    self.path,
                    format!("{name}: expected sparse.count at most count ({count}), found {sparse_count}"),
                ));
            }
            let index_component = match sparse.indices.component_type {
                Checked::Valid(IndexComponentType(component)) if INDEX.contains(&component) => component,
                _ => {
                    return Err(error(
                        self.path,
                        format!("{name}: expected sparse indices of UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT"),
                    ));
                }
            };
            let index_name = format!("{name} sparse indices");
            let indices = self.element_range(
                &index_name,
                sparse.indices.buffer_view.value(),
                sparse.indices.byte_offset.0,
                sparse_count,
                index_component.size(),
                true,
            )?;
            let value_name = format!("{name} sparse values");
            let replacements = self.element_range(
                &value_name,
                sparse.values.buffer_view.value(),
                sparse.values.byte_offset.0,
                sparse_count,
                element_size,
                true,
            )?;
            for entry in 0..sparse_count {
                let at = entry.saturating_mul(index_component.size());
                let target = read_component(indices.bytes, at, index_component).map_or(usize::MAX, |raw| raw as usize);
                let value = self.decode_element(&replacements, entry, component, accessor.normalized, convert, &value_name)?;
                let Some(slot) = values.get_mut(target) else {
                    return Err(located(
                        self.path,
                        indices.offset_of(entry),
                        format!("{index_name}: entry {entry}: expected an element index below {count}, found {target}"),
                    ));
                };
                *slot = value;
            }
        }
        Ok(values)
    }

    fn decode_element<T: Copy + Default, const N: usize>(
        &self,
        range: &ElementRange<'_>,
        element: usize,
        component: ComponentType,
        normalized: bool,
        convert: Convert<'_, T>,
        name: &str,
    ) -> Result<[T; N], FormatError> {
        let start = element.saturating_mul(range.stride);
        let mut value = [T::default(); N];
        for (slot_index, slot) in value.iter_mut().enumerate() {
            let at = start.saturating_add(slot_index * component.size());
            let Some(raw) = read_component(range.bytes, at, component) else {
                return Err(located(
                    self.path,
                    range.offset_of(element),
                    format!("{name}: element {element} lies outside its bufferView"),
                ));
            };
            *slot = convert(raw, component, normalized).map_err(|expected| {
                located(self.path, range.offset_of(element), format!("{name}: element {element}: {expected}"))
            })?;
        }
        Ok(value)
    }

    fn floats<const N: usize>(&self, index: usize, what: &str, allowed: &[ComponentType]) -> Result<Vec<[f32; N]>, FormatError> {
        self.decode::<f32, N>(index, what, allowed, &|raw, component, normalized| {
            let value = if normalized { dequantize(raw, component) } else { raw } as f32;
            if value.is_finite() {
                Ok(value)
            } else {
                Err(format!("expected a finite number, found {value}"))
            }
        })
    }

    /// Unsigned integers; with `below`, each must be less than its first part, which its second
    /// part explains in errors.
    fn uints<const N: usize>(
        &self,
        index: usize,
        what: &str,
        allowed: &[ComponentType],
        below: Option<(u64, &str)>,
    ) -> Result<Vec<[u32; N]>, FormatError> {
        self.decode::<u32, N>(index, what, allowed, &|raw, _, _| match below {
            Some((limit, meaning)) if raw >= limit as f64 => {
                Err(format!("expected a value below {limit} ({meaning}), found {raw}"))
            }
            _ => Ok(raw as u32),
        })
    }

    /// Where an element of a plain (not sparse) accessor lies in the file, if in a GLB's BIN chunk.
    fn element_offset(&self, index: usize, element: usize) -> Option<u64> {
        let accessor = self.root.accessors.get(index)?;
        if accessor.sparse.is_some() {
            return None;
        }
        let view = self.root.buffer_views.get(accessor.buffer_view?.value())?;
        let start = self.buffers.get(view.buffer.value())?.file_offset?;
        let width = match accessor.type_ {
            Checked::Valid(found) => found.multiplicity(),
            Checked::Invalid => return None,
        };
        let element_size = match accessor.component_type {
            Checked::Valid(GenericComponentType(component)) => width * component.size(),
            Checked::Invalid => return None,
        };
        let stride = view.byte_stride.map_or(element_size, |stride| stride.0) as u64;
        let offset = start
            .saturating_add(view.byte_offset.map_or(0, |offset| offset.0))
            .saturating_add(accessor.byte_offset.map_or(0, |offset| offset.0));
        Some(offset.saturating_add(stride.saturating_mul(element as u64)))
    }
}

fn read_component(bytes: &[u8], at: usize, component: ComponentType) -> Option<f64> {
    let field = bytes.get(at..at.checked_add(component.size())?)?;
    Some(match component {
        ComponentType::I8 => f64::from(i8::from_le_bytes(field.try_into().ok()?)),
        ComponentType::U8 => f64::from(u8::from_le_bytes(field.try_into().ok()?)),
        ComponentType::I16 => f64::from(i16::from_le_bytes(field.try_into().ok()?)),
        ComponentType::U16 => f64::from(u16::from_le_bytes(field.try_into().ok()?)),
        ComponentType::U32 => f64::from(u32::from_le_bytes(field.try_into().ok()?)),
        ComponentType::F32 => f64::from(f32::from_le_bytes(field.try_into().ok()?)),
    })
}

/// A normalized integer's value, as the spec defines it (signed ones clamp at -1).
fn dequantize(raw: f64, component: ComponentType) -> f64 {
    match component {
        ComponentType::I8 => (raw / 127.0).max(-1.0),
        ComponentType::U8 => raw / 255.0,
        ComponentType::I16 => (raw / 32767.0).max(-1.0),
        ComponentType::U16 => raw / 65535.0,
        ComponentType::U32 => raw / f64::from(u32::MAX),
        ComponentType::F32 => raw,
    }
}

fn type_of_width(width: usize) -> Option<Type> {
    match width {
        1 => Some(Type::Scalar),
        2 => Some(Type::Vec2),
        3 => Some(Type::Vec3),
        4 => Some(Type::Vec4),
        16 => Some(Type::Mat4),
        _ => None,
    }
}

fn width_name(width: usize) -> &'static str {
    type_of_width(width).map_or("?", type_name)
}

fn type_name(found: Type) -> &'static str {
    match found {
        Type::Scalar => "SCALAR",
        Type::Vec2 => "VEC2",
        Type::Vec3 => "VEC3",
        Type::Vec4 => "VEC4",
        Type::Mat2 => "MAT2",
        Type::Mat3 => "MAT3",
        Type::Mat4 => "MAT4",
    }
}

fn component_name(component: ComponentType) -> &'static str {
    match component {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

// ---------------------------------------------------------------------------------------------
// Node hierarchy
// ---------------------------------------------------------------------------------------------

struct Hierarchy {
    parents: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
    /// Every node, parents before children.
    order: Vec<usize>,
    depth: Vec<usize>,
    /// Each node's local transform at rest, exactly as given (a matrix may shear).
    rest_local: Vec<Mat4>,
    /// The same as translation, rotation and scale, whose parts animation channels replace.
    rest_trs: Vec<JointPose>,
    rest_global: Vec<Mat4>,
    has_matrix: Vec<bool>,
    names: Vec<String>,
    /// Steps left for the walks from a joint up to its parent joint (see `climb`).
    climb_budget: Cell<u64>,
}

/// Steps that the walks from each joint up through non-joint nodes to its parent joint may take in
/// all, in one load. Real rigs have a few nodes between joints (a few steps a joint); a file that
/// hangs 32,768 joints under a 32,768-node chain would take 10⁹ steps (each a matrix product in
/// `set_local_frames`): 16.7 s on this machine for a 1.8 MB file. The budget (about a second of
/// work) keeps a load's time in proportion to the file, and the error says why.
const CLIMB_STEPS: u64 = 1 << 24;

impl Hierarchy {
    /// One step up from `node`: its parent, or an error once the load's walks have taken
    /// `CLIMB_STEPS` steps.
    fn climb(&self, node: usize) -> Result<Option<usize>, String> {
        let left = self.climb_budget.get();
        if left == 0 {
            return Err(format!(
                "expected joints at most a few nodes below their parent joints: walking up from the joints took \
                 more than {CLIMB_STEPS} steps (nodes between joints × joints)"
            ));
        }
        self.climb_budget.set(left - 1);
        Ok(self.parents.get(node).copied().flatten())
    }

    fn build(root: &Root, path: &Path) -> Result<Hierarchy, FormatError> {
        let count = root.nodes.len();
        let mut parents: Vec<Option<usize>> = vec![None; count];
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); count];
        for (index, node) in root.nodes.iter().enumerate() {
            for child in node.children.iter().flatten().map(|child| child.value()) {
                let Some(parent) = parents.get_mut(child) else {
                    return Err(error(
                        path,
                        format!("node {index}: expected child indices below {count} (the node count), found {child}"),
                    ));
                };
                if child == index {
                    return Err(error(path, format!("node {index} lists itself as a child: expected a tree")));
                }
                if let Some(other) = parent {
                    return Err(error(
                        path,
                        format!("node {child} is a child of both node {other} and node {index}: expected a tree"),
                    ));
                }
                *parent = Some(index);
                if let Some(list) = children.get_mut(index) {
                    list.push(child);
                }
            }
        }

        let mut order = Vec::with_capacity(count);
        let mut depth = vec![0usize; count];
        let mut stack: Vec<(usize, usize)> =
            parents.iter().enumerate().rev().filter(|(_, parent)| parent.is_none()).map(|(index, _)| (index, 0)).collect();
        while let Some((node, node_depth)) = stack.pop() {
            order.push(node);
            if let Some(slot) = depth.get_mut(node) {
                *slot = node_depth;
            }
            stack.extend(children.get(node).into_iter().flatten().rev().map(|&child| (child, node_depth + 1)));
        }
        if order.len() < count {
            // With one parent each, nodes not reached from a root are on a cycle.
            let mut reached = vec![false; count];
            for &node in &order {
                if let Some(slot) = reached.get_mut(node) {
                    *slot = true;
                }
            }
            let stuck = reached.iter().position(|&reached| !reached).unwrap_or(0);
            return Err(error(path, format!("node {stuck} is on a cycle of children: expected a tree")));
        }

        let mut rest_local = Vec::with_capacity(count);
        let mut rest_trs = Vec::with_capacity(count);
        let mut has_matrix = Vec::with_capacity(count);
        let mut names = Vec::with_capacity(count);
        for (index, node) in root.nodes.iter().enumerate() {
            let name = node.name.clone().unwrap_or_else(|| format!("node_{index}"));
            let (local, trs) =
                node_transform(node).map_err(|part| error(path, format!("node {index} (\"{name}\"): expected {part}")))?;
            rest_local.push(local);
            rest_trs.push(trs);
            has_matrix.push(node.matrix.is_some());
            names.push(name);
        }
        let mut rest_global = rest_local.clone();
        for &node in &order {
            let parent = parents.get(node).copied().flatten().and_then(|parent| rest_global.get(parent)).copied();
            if let (Some(parent), Some(slot)) = (parent, rest_global.get_mut(node)) {
                *slot = parent * *slot;
            }
        }
        Ok(Hierarchy {
            parents,
            children,
            order,
            depth,
            rest_local,
            rest_trs,
            rest_global,
            has_matrix,
            names,
            climb_budget: Cell::new(CLIMB_STEPS),
        })
    }

    fn name(&self, node: usize) -> &str {
        self.names.get(node).map_or("", String::as_str)
    }
}

/// A node's local matrix and its translation/rotation/scale; the error finishes "expected ...".
fn node_transform(node: &gltf::json::Node) -> Result<(Mat4, JointPose), String> {
    if let Some(matrix) = node.matrix {
        if !matrix.iter().all(|value| value.is_finite()) {
            return Err("finite numbers in its matrix".to_string());
        }
        let local = Mat4::from_cols_array(&matrix);
        // Used only if the node is animated, which the spec forbids for a node with a matrix.
        return Ok((local, pose_from_matrix(local)));
    }
    let translation = Vec3::from_array(node.translation.unwrap_or([0.0; 3]));
    let scale = Vec3::from_array(node.scale.unwrap_or([1.0; 3]));
    let rotation = Vec4::from_array(node.rotation.map_or([0.0, 0.0, 0.0, 1.0], |rotation| rotation.0));
    if !(translation.is_finite() && scale.is_finite()) {
        return Err("a finite translation and scale".to_string());
    }
    let Some(rotation) = rotation.try_normalize() else {
        return Err(format!("a unit quaternion rotation, found {:?}", rotation.to_array()));
    };
    let pose = JointPose { rotation: Quat::from_vec4(rotation), translation, scale };
    Ok((pose.to_mat4(), pose))
}

/// A model-space matrix as a pose; a degenerate one (zero scale) keeps a valid rotation.
fn pose_from_matrix(matrix: Mat4) -> JointPose {
    let (scale, rotation, translation) = matrix.to_scale_rotation_translation();
    let rotation = Vec4::from(rotation).try_normalize().map_or(Quat::IDENTITY, Quat::from_vec4);
    JointPose { rotation, translation, scale }
}

// ---------------------------------------------------------------------------------------------
// Skins, meshes and materials
// ---------------------------------------------------------------------------------------------

/// A skin's joints in the skeleton.
struct SkinBinding {
    /// The skeleton joint of each entry of the skin's `joints`.
    skeleton_joints: Vec<u32>,
    /// The transform the skin's inverse bind matrices put its mesh through at rest, when it is one
    /// transform for all joints (often the Z-up-to-Y-up turn of an exporter): the skin's vertices
    /// are stored moved by it and its joints' inverse binds undo it, so `palette × vertex` is
    /// unchanged at every pose and the bind palette (identity) shows the rest pose.
    bind_shape: Option<Mat4>,
}

impl SkinBinding {
    fn first(&self) -> u32 {
        self.skeleton_joints.first().copied().unwrap_or(0)
    }
}

/// One primitive to add, and where it comes from.
struct PrimitiveSource<'r> {
    node: usize,
    skin: Option<usize>,
    primitive: &'r Primitive,
    /// "mesh 0 "Body" primitive 1", for errors and warnings.
    label: String,
    mesh_name: String,
}

/// JOINTS_n and WEIGHTS_n of one set.
struct JointSet {
    joints: Vec<[u32; 4]>,
    weights: Vec<[f32; 4]>,
    accessor: usize,
    set: u32,
}

struct Builder<'a> {
    data: &'a Data<'a>,
    hierarchy: &'a Hierarchy,
    base_dir: Option<&'a Path>,
    skeleton: Skeleton,
    /// The node of each skeleton joint.
    joint_nodes: Vec<usize>,
    skins: Vec<SkinBinding>,
    /// Per node with a rigid mesh: its joint and the rest transform its vertices were moved by.
    rigid_joints: HashMap<usize, (u32, Mat4)>,
    vertices: Vec<Vertex>,
    influences: Vec<Influence>,
    indices: Vec<u32>,
    meshes: Vec<Mesh>,
    materials: Vec<Material>,
    /// The model material of each glTF material used so far; `None` the default's.
    material_map: HashMap<Option<usize>, usize>,
    /// Described images (decoded at upload), or why they could not be had.
    images: HashMap<usize, Result<Texture, String>>,
    /// What external image files may still read: `files::MAX_EXTERNAL_BYTES` less the buffers.
    external_left: u64,
    warnings: Vec<String>,
    max_influences: usize,
}

impl<'a> Builder<'a> {
    fn new(data: &'a Data<'a>, hierarchy: &'a Hierarchy, base_dir: Option<&'a Path>, warnings: Vec<String>) -> Builder<'a> {
        Builder {
            data,
            hierarchy,
            base_dir,
            skeleton: Skeleton::default(),
            joint_nodes: Vec::new(),
            skins: Vec::new(),
            rigid_joints: HashMap::new(),
            vertices: Vec::new(),
            influences: Vec::new(),
            indices: Vec::new(),
            meshes: Vec::new(),
            materials: Vec::new(),
            material_map: HashMap::new(),
            images: HashMap::new(),
            external_left: files::MAX_EXTERNAL_BYTES.saturating_sub(external_buffer_bytes(data.root)),
            warnings,
            max_influences: 0,
        }
    }

    fn path(&self) -> &'a Path {
        self.data.path
    }

    fn push_joint(&mut self, joint: Joint, node: usize) -> Result<u32, FormatError> {
        let index = self.skeleton.joints.len();
        if index >= MAX_JOINTS {
            return Err(error(
                self.path(),
                format!("expected at most {MAX_JOINTS} joints in all (skins and rigid meshes), found more"),
            ));
        }
        self.skeleton.joints.push(joint);
        self.joint_nodes.push(node);
        Ok(index as u32)
    }

    /// Every skin's joints, each skin's parents first. A joint's parent is its nearest ancestor
    /// node that is a joint of the same skin; a node in two skins is two joints.
    fn add_skins(&mut self) -> Result<(), FormatError> {
        let (root, hierarchy, path) = (self.data.root, self.hierarchy, self.path());
        let node_count = root.nodes.len();
        for (skin_index, skin) in root.skins.iter().enumerate() {
            let nodes: Vec<usize> = skin.joints.iter().map(|joint| joint.value()).collect();
            if nodes.is_empty() {
                return Err(error(path, format!("skin {skin_index}: expected at least one joint, found none")));
            }
            let mut position_of: HashMap<usize, usize> = HashMap::with_capacity(nodes.len());
            for (position, &node) in nodes.iter().enumerate() {
                if node >= node_count {
                    return Err(error(
                        path,
                        format!("skin {skin_index}: joint {position} is node {node}: expected a node index below {node_count} (the node count)"),
                    ));
                }
                if let Some(earlier) = position_of.insert(node, position) {
                    return Err(error(
                        path,
                        format!(
                            "skin {skin_index} lists node {node} twice (joints {earlier} and {position}): expected each once"
                        ),
                    ));
                }
            }
            let inverse_binds: Vec<Mat4> = match skin.inverse_bind_matrices {
                Some(accessor) => {
                    let what = format!("inverseBindMatrices of skin {skin_index}");
                    let matrices = self.data.floats::<16>(accessor.value(), &what, FLOAT)?;
                    if matrices.len() < nodes.len() {
                        return Err(error(
                            path,
                            format!(
                                "accessor {} ({what}): expected {} matrices, one per joint, found {}",
                                accessor.value(),
                                nodes.len(),
                                matrices.len()
                            ),
                        ));
                    }
                    let matrices: Vec<Mat4> = matrices.iter().map(Mat4::from_cols_array).collect();
                    // The palette pass undoes a parent's inverse bind (scene.rs: joint_infos).
                    if let Some((index, matrix)) =
                        matrices.iter().enumerate().take(nodes.len()).find(|(_, matrix)| !invertible(matrix))
                    {
                        return Err(error(
                            path,
                            format!(
                                "accessor {} ({what}): matrix {index} has determinant {}; expected an invertible matrix \
                                 (the inverse of a joint's bind transform)",
                                accessor.value(),
                                matrix.determinant()
                            ),
                        ));
                    }
                    matrices
                }
                None => vec![Mat4::IDENTITY; nodes.len()],
            };

            let rest_palettes: Vec<Mat4> = nodes
                .iter()
                .zip(&inverse_binds)
                .map(|(&node, &inverse_bind)| hierarchy.rest_global.get(node).copied().unwrap_or(Mat4::IDENTITY) * inverse_bind)
                .collect();
            let bind_shape = match common_bind_shape(&rest_palettes) {
                Ok(shape) => shape,
                Err(()) => {
                    self.warnings.push(format!(
                        "skin {skin_index}: its inverse bind matrices do not match its rest pose: clips play as the file says, \
                         but with no clip its mesh shows as stored, not in the rest pose"
                    ));
                    None
                }
            };
            let undo_shape = bind_shape.map_or(Mat4::IDENTITY, |shape| shape.inverse());

            let mut positions: Vec<usize> = (0..nodes.len()).collect();
            // Ancestors are shallower, so sorting by depth puts every parent first.
            positions
                .sort_by_key(|&position| nodes.get(position).and_then(|&node| hierarchy.depth.get(node)).copied().unwrap_or(0));
            let mut skeleton_joints = vec![0u32; nodes.len()];
            for position in positions {
                let Some(&node) = nodes.get(position) else { continue };
                let climbed = |node| hierarchy.climb(node).map_err(|reason| error(path, format!("skin {skin_index}: {reason}")));
                let mut ancestor = climbed(node)?;
                let mut parent = None;
                while let Some(candidate) = ancestor {
                    if let Some(&ancestor_position) = position_of.get(&candidate) {
                        parent = skeleton_joints.get(ancestor_position).map(|&joint| joint as usize);
                        break;
                    }
                    ancestor = climbed(candidate)?;
                }
                let inverse_bind = inverse_binds.get(position).copied().unwrap_or(Mat4::IDENTITY) * undo_shape;
                let joint = self.push_joint(Joint::new(hierarchy.name(node), parent, inverse_bind, JointPose::IDENTITY), node)?;
                if let Some(slot) = skeleton_joints.get_mut(position) {
                    *slot = joint;
                }
            }
            self.skins.push(SkinBinding { skeleton_joints, bind_shape });
        }
        Ok(())
    }

    /// The nodes drawn: those of the default scene (or the first), or every node without scenes.
    fn drawn_nodes(&self) -> Result<Vec<bool>, FormatError> {
        let root = self.data.root;
        let count = root.nodes.len();
        let scene_index = root.scene.map(|scene| scene.value()).or(if root.scenes.is_empty() { None } else { Some(0) });
        let Some(scene_index) = scene_index else {
            return Ok(vec![true; count]);
        };
        let scene = root.scenes.get(scene_index).ok_or_else(|| {
            error(self.path(), format!("expected the default scene {scene_index} to exist, found {} scenes", root.scenes.len()))
        })?;
        let mut drawn = vec![false; count];
        let mut stack = Vec::new();
        for node in scene.nodes.iter().map(|node| node.value()) {
            if node >= count {
                return Err(error(
                    self.path(),
                    format!("scene {scene_index}: expected node indices below {count}, found {node}"),
                ));
            }
            stack.push(node);
        }
        while let Some(node) = stack.pop() {
            match drawn.get_mut(node) {
                Some(slot) if !*slot => *slot = true,
                _ => continue,
            }
            stack.extend(self.hierarchy.children.get(node).into_iter().flatten().copied());
        }
        Ok(drawn)
    }

    fn add_meshes(&mut self) -> Result<(), FormatError> {
        let (root, path) = (self.data.root, self.path());
        let drawn = self.drawn_nodes()?;
        let mut mesh_nodes = 0;
        for (node_index, node) in root.nodes.iter().enumerate() {
            let Some(mesh_index) = node.mesh.map(|mesh| mesh.value()) else { continue };
            if !drawn.get(node_index).copied().unwrap_or(false) {
                continue;
            }
            let mesh = root.meshes.get(mesh_index).ok_or_else(|| {
                error(path, format!("node {node_index}: expected mesh {mesh_index} to exist, found {} meshes", root.meshes.len()))
            })?;
            let skin = match node.skin.map(|skin| skin.value()) {
                Some(skin) if skin >= self.skins.len() => {
                    return Err(error(
                        path,
                        format!("node {node_index}: expected skin {skin} to exist, found {} skins", self.skins.len()),
                    ));
                }
                skin => skin,
            };
            mesh_nodes += 1;
            let mesh_name = mesh.name.clone().unwrap_or_else(|| format!("mesh_{mesh_index}"));
            if mesh.primitives.iter().any(|primitive| primitive.targets.is_some()) {
                self.warnings.push(format!("mesh {mesh_index} (\"{mesh_name}\") has morph targets; vkskin draws its base shape"));
            }
            let single = mesh.primitives.len() == 1;
            for (primitive_index, primitive) in mesh.primitives.iter().enumerate() {
                let source = PrimitiveSource {
                    node: node_index,
                    skin,
                    primitive,
                    label: format!("mesh {mesh_index} (\"{mesh_name}\") primitive {primitive_index}"),
                    mesh_name: if single { mesh_name.clone() } else { format!("{mesh_name}.{primitive_index}") },
                };
                self.add_primitive(&source)?;
            }
        }
        if mesh_nodes == 0 {
            return Err(error(path, "expected at least one node with a mesh in the scene, found none"));
        }
        if self.meshes.is_empty() {
            return Err(error(path, "expected at least one mesh primitive of triangles, found none"));
        }
        Ok(())
    }

    fn attribute(primitive: &Primitive, semantic: Semantic) -> Option<usize> {
        primitive.attributes.get(&Checked::Valid(semantic)).map(|index| index.value())
    }

    fn same_count(&self, accessor: usize, what: &str, found: usize, expected: usize) -> Result<(), FormatError> {
        if found == expected {
            Ok(())
        } else {
            Err(error(
                self.path(),
                format!("accessor {accessor} ({what}): expected {expected} elements, as many as POSITION, found {found}"),
            ))
        }
    }

    fn add_primitive(&mut self, source: &PrimitiveSource<'_>) -> Result<(), FormatError> {
        let (data, path, label, primitive) = (self.data, self.path(), source.label.as_str(), source.primitive);
        match primitive.mode {
            Checked::Valid(Mode::Triangles) => {}
            Checked::Valid(mode) => {
                self.warnings.push(format!("skipped {label}: expected mode TRIANGLES (4), found {}", mode.as_gl_enum()));
                return Ok(());
            }
            Checked::Invalid => {
                self.warnings.push(format!("skipped {label}: expected mode TRIANGLES (4), found an unknown mode"));
                return Ok(());
            }
        }
        let Some(position_accessor) = Self::attribute(primitive, Semantic::Positions) else {
            return Err(error(path, format!("{label}: expected a POSITION attribute, found none")));
        };
        let positions = data.floats::<3>(position_accessor, &format!("POSITION of {label}"), QUANTIZED)?;
        let vertex_count = positions.len();
        if self.vertices.len().saturating_add(vertex_count) > MAX_VERTICES {
            return Err(error(path, format!("{label}: expected at most {MAX_VERTICES} vertices in all, found more")));
        }
        let optional = |semantic: Semantic, name: &str| -> Option<(usize, String)> {
            Self::attribute(primitive, semantic).map(|accessor| (accessor, format!("{name} of {label}")))
        };
        let normals = match optional(Semantic::Normals, "NORMAL") {
            Some((accessor, what)) => {
                let normals = data.floats::<3>(accessor, &what, QUANTIZED)?;
                self.same_count(accessor, &what, normals.len(), vertex_count)?;
                Some(normals)
            }
            None => None,
        };
        let tangents = match optional(Semantic::Tangents, "TANGENT") {
            Some((accessor, what)) => {
                let tangents = data.floats::<4>(accessor, &what, QUANTIZED)?;
                self.same_count(accessor, &what, tangents.len(), vertex_count)?;
                Some(tangents)
            }
            None => None,
        };
        let uvs = match optional(Semantic::TexCoords(0), "TEXCOORD_0") {
            Some((accessor, what)) => {
                let uvs = data.floats::<2>(accessor, &what, QUANTIZED)?;
                self.same_count(accessor, &what, uvs.len(), vertex_count)?;
                Some(uvs)
            }
            None => None,
        };
        let mut indices: Vec<u32> = match primitive.indices.map(|indices| indices.value()) {
            Some(accessor) => {
                let meaning = format!("the POSITION count of {label}");
                data.uints::<1>(accessor, &format!("indices of {label}"), INDEX, Some((vertex_count as u64, &meaning)))?
                    .into_iter()
                    .map(|[index]| index)
                    .collect()
            }
            // Vertex counts are capped far below u32::MAX.
            None => (0..vertex_count as u32).collect(),
        };
        let leftover = indices.len() % 3;
        if leftover != 0 {
            self.warnings.push(format!(
                "{label}: {} indices is not a whole number of triangles; the last {leftover} are ignored",
                indices.len()
            ));
            indices.truncate(indices.len() - leftover);
        }
        if self.indices.len().saturating_add(indices.len()) > MAX_INDICES {
            return Err(error(path, format!("{label}: expected at most {MAX_INDICES} indices in all, found more")));
        }

        let mut vertices: Vec<Vertex> = positions
            .iter()
            .enumerate()
            .map(|(index, &position)| {
                let normal = normals
                    .as_ref()
                    .and_then(|normals| normals.get(index))
                    .map_or(Vec3::Y, |&normal| Vec3::from_array(normal).normalize_or(Vec3::Y));
                let tangent = tangents.as_ref().and_then(|tangents| tangents.get(index)).map_or(Vec4::X, |&[x, y, z, w]| {
                    let direction = Vec3::new(x, y, z).normalize_or(normal.any_orthonormal_vector());
                    direction.extend(if w < 0.0 { -1.0 } else { 1.0 })
                });
                let uv = uvs.as_ref().and_then(|uvs| uvs.get(index)).map_or(Vec2::ZERO, |&uv| Vec2::from_array(uv));
                Vertex { position: Vec3::from_array(position), normal, tangent, uv, first_influence: 0, influence_count: 0 }
            })
            .collect();
        if normals.is_none() {
            compute_normals(&mut vertices, &indices);
        }
        if tangents.is_none() {
            compute_tangents(&mut vertices, &indices);
        }

        let sets = match source.skin {
            Some(_) => self.joint_sets(primitive, label, vertex_count)?,
            None => Vec::new(),
        };
        match source.skin.filter(|_| !sets.is_empty()) {
            Some(skin) => {
                self.bind_skinned(&mut vertices, &sets, skin, label)?;
                if let Some(shape) = self.skins.get(skin).and_then(|binding| binding.bind_shape) {
                    transform_vertices(&mut vertices, &mut indices, shape);
                }
            }
            None => {
                if source.skin.is_some() {
                    self.warnings.push(format!(
                        "{label} is on skinned node {} but has no JOINTS_0/WEIGHTS_0: it moves rigidly with that node",
                        source.node
                    ));
                }
                self.bind_rigid(&mut vertices, &mut indices, source.node)?;
            }
        }

        let material = self.material(primitive.material.map(|material| material.value()), label)?;
        let first_vertex = self.vertices.len() as u32;
        let first_index = self.indices.len() as u32;
        self.indices.extend(indices.iter().map(|&index| first_vertex + index));
        self.vertices.extend(vertices);
        self.meshes.push(Mesh { name: source.mesh_name.clone(), first_index, index_count: indices.len() as u32, material });
        Ok(())
    }

    /// JOINTS_n with WEIGHTS_n for n = 0, 1, .. as long as both are there.
    fn joint_sets(&self, primitive: &Primitive, label: &str, vertex_count: usize) -> Result<Vec<JointSet>, FormatError> {
        let mut sets = Vec::new();
        for set in 0u32.. {
            let joints = Self::attribute(primitive, Semantic::Joints(set));
            let weights = Self::attribute(primitive, Semantic::Weights(set));
            let (joint_accessor, weight_accessor) = match (joints, weights) {
                (None, None) => break,
                (Some(joints), Some(weights)) => (joints, weights),
                _ => {
                    return Err(error(
                        self.path(),
                        format!("{label}: expected JOINTS_{set} and WEIGHTS_{set} together, found only one"),
                    ))
                }
            };
            let joint_what = format!("JOINTS_{set} of {label}");
            let weight_what = format!("WEIGHTS_{set} of {label}");
            let joints = self.data.uints::<4>(joint_accessor, &joint_what, JOINT, None)?;
            self.same_count(joint_accessor, &joint_what, joints.len(), vertex_count)?;
            let weights = self.data.floats::<4>(weight_accessor, &weight_what, WEIGHT)?;
            self.same_count(weight_accessor, &weight_what, weights.len(), vertex_count)?;
            sets.push(JointSet { joints, weights, accessor: joint_accessor, set });
        }
        Ok(sets)
    }

    /// Every positive weight of every set becomes an influence (exact, not capped at four).
    fn bind_skinned(&mut self, vertices: &mut [Vertex], sets: &[JointSet], skin: usize, label: &str) -> Result<(), FormatError> {
        let Some(binding) = self.skins.get(skin) else {
            return Err(error(self.path(), format!("{label}: expected skin {skin} to exist")));
        };
        let first_joint = binding.first();
        let mut lists = Vec::with_capacity(vertices.len());
        let mut unweighted = 0usize;
        for vertex_index in 0..vertices.len() {
            let mut raw = Vec::with_capacity(4 * sets.len());
            for set in sets {
                let (Some(joints), Some(weights)) = (set.joints.get(vertex_index), set.weights.get(vertex_index)) else {
                    continue;
                };
                for (&joint, &weight) in joints.iter().zip(weights) {
                    if weight <= 0.0 {
                        // Unused slots often hold any index, even one past the skin's joints.
                        continue;
                    }
                    let Some(&skeleton_joint) = binding.skeleton_joints.get(joint as usize) else {
                        return Err(located(
                            self.path(),
                            self.data.element_offset(set.accessor, vertex_index),
                            format!(
                                "accessor {} (JOINTS_{} of {label}): vertex {vertex_index} has weight {weight} on joint {joint}: \
                                 expected a joint index below {} (the joints of skin {skin})",
                                set.accessor,
                                set.set,
                                binding.skeleton_joints.len()
                            ),
                        ));
                    };
                    raw.push(Influence { joint: skeleton_joint, weight });
                }
            }
            lists.push(normalize_influences(&raw).unwrap_or_else(|| {
                unweighted += 1;
                vec![Influence { joint: first_joint, weight: 1.0 }]
            }));
        }
        if unweighted > 0 {
            self.warnings.push(format!(
                "{label}: {unweighted} vertices have no positive weight; each is bound wholly to the first joint of skin {skin}"
            ));
        }
        for (vertex, list) in vertices.iter_mut().zip(lists) {
            self.push_influences(vertex, list)?;
        }
        Ok(())
    }

    /// A mesh without a skin follows its node through a joint of its own. Its vertices move to
    /// model space by the node's rest transform, and the joint's inverse bind undoes that, so the
    /// palette is the identity at rest and the node's motion when animated.
    fn bind_rigid(&mut self, vertices: &mut [Vertex], indices: &mut [u32], node: usize) -> Result<(), FormatError> {
        let (joint, transform) = match self.rigid_joints.get(&node) {
            Some(&known) => known,
            None => {
                let global = self.hierarchy.rest_global.get(node).copied().unwrap_or(Mat4::IDENTITY);
                let inverse = global.inverse();
                let (transform, inverse_bind) = if global.determinant().is_normal() && inverse.is_finite() {
                    (global, inverse)
                } else {
                    self.warnings.push(format!(
                        "node {node} (\"{}\") has a degenerate rest transform: its mesh keeps node space until animated",
                        self.hierarchy.name(node)
                    ));
                    (Mat4::IDENTITY, Mat4::IDENTITY)
                };
                let name = self.hierarchy.name(node).to_string();
                let joint = self.push_joint(Joint::new(name, None, inverse_bind, JointPose::IDENTITY), node)?;
                self.rigid_joints.insert(node, (joint, transform));
                (joint, transform)
            }
        };
        transform_vertices(vertices, indices, transform);
        for vertex in vertices.iter_mut() {
            self.push_influences(vertex, vec![Influence { joint, weight: 1.0 }])?;
        }
        Ok(())
    }

    fn push_influences(&mut self, vertex: &mut Vertex, list: Vec<Influence>) -> Result<(), FormatError> {
        let first = u32::try_from(self.influences.len())
            .map_err(|_| error(self.path(), "expected at most 2^32 influences in all, found more"))?;
        vertex.first_influence = first;
        vertex.influence_count = list.len() as u32;
        self.max_influences = self.max_influences.max(list.len());
        self.influences.extend(list);
        Ok(())
    }

    /// The model material for a glTF material (or the default), made on first use.
    fn material(&mut self, index: Option<usize>, label: &str) -> Result<usize, FormatError> {
        if let Some(&known) = self.material_map.get(&index) {
            return Ok(known);
        }
        let material = match index {
            None => Material::untextured("default"),
            Some(index) => {
                let materials = &self.data.root.materials;
                let Some(json) = materials.get(index) else {
                    return Err(error(
                        self.path(),
                        format!("{label}: expected material {index} to exist, found {} materials", materials.len()),
                    ));
                };
                let name = json.name.clone().unwrap_or_else(|| format!("material_{index}"));
                let what = format!("material {index} (\"{name}\")");
                let factor = Vec4::from_array(json.pbr_metallic_roughness.base_color_factor.0);
                let base_color = if factor.is_finite() { factor } else { Vec4::ONE };
                let color_info =
                    json.pbr_metallic_roughness.base_color_texture.as_ref().map(|info| (info.index.value(), info.tex_coord));
                let normal_info = json.normal_texture.as_ref().map(|info| (info.index.value(), info.tex_coord));
                let texture = color_info.and_then(|(texture, set)| self.texture(texture, set, "base colour", &what));
                let normal_map = normal_info.and_then(|(texture, set)| self.texture(texture, set, "normal", &what));
                Material { name, base_color, texture, normal_map }
            }
        };
        let model_index = self.materials.len();
        self.materials.push(material);
        self.material_map.insert(index, model_index);
        Ok(model_index)
    }

    /// A texture's pixels, or a warning saying why not.
    fn texture(&mut self, texture_index: usize, set: u32, role: &str, material: &str) -> Option<Texture> {
        if set != 0 {
            self.warnings.push(format!("{material}: the {role} texture uses TEXCOORD_{set}; vkskin reads TEXCOORD_0 for it"));
        }
        let root = self.data.root;
        let image_index = match root.textures.get(texture_index) {
            Some(texture) => texture.source.value(),
            None => {
                self.warnings.push(format!(
                    "{material}: {role} texture {texture_index} does not exist ({} textures); drawn without it",
                    root.textures.len()
                ));
                return None;
            }
        };
        if !self.images.contains_key(&image_index) {
            let described = self.read_image(image_index);
            self.images.insert(image_index, described);
        }
        match self.images.get(&image_index) {
            Some(Ok(texture)) => Some(texture.clone()),
            Some(Err(reason)) => {
                let image = root.images.get(image_index);
                let named = image.and_then(|image| image.name.clone().or_else(|| image.uri.clone()));
                let named =
                    named.filter(|name| !name.starts_with("data:")).map(|name| format!(" \"{name}\"")).unwrap_or_default();
                self.warnings.push(format!(
                    "{material}: {role} texture {texture_index} (image {image_index}{named}) not loaded: {reason}; drawn without it"
                ));
                None
            }
            None => None,
        }
    }

    /// An image's bytes, described (its pixels are decoded at upload: `formats::texture`).
    fn read_image(&mut self, image_index: usize) -> Result<Texture, String> {
        let root = self.data.root;
        let image = root
            .images
            .get(image_index)
            .ok_or_else(|| format!("expected image {image_index} to exist, found {} images", root.images.len()))?;
        let embedded = PathBuf::from(format!("{}#images[{image_index}]", self.path().display()));
        let (bytes, path): (Cow<'_, [u8]>, PathBuf) = match (&image.buffer_view, &image.uri) {
            (Some(view), _) => {
                let view =
                    self.data.view(view.value(), &format!("image {image_index}")).map_err(|view_error| view_error.message)?;
                (Cow::Borrowed(view.bytes), embedded)
            }
            (None, Some(uri)) => {
                let limit = files::MAX_TEXTURE_BYTES.min(self.external_left);
                let (bytes, file) = read_uri(uri, self.base_dir, limit, true)?;
                self.external_left -= bytes.len() as u64;
                (Cow::Owned(bytes), file.unwrap_or(embedded))
            }
            (None, None) => return Err("expected a bufferView or a uri, found neither".to_string()),
        };
        super::texture::describe(bytes.into_owned(), path)
    }
}

/// Moves vertices by an affine transform: positions as points, normals by the inverse transpose,
/// tangents by the linear part with their handedness kept. A mirroring transform turns the
/// triangles over, so their winding is reversed to keep them front-facing, as the spec does.
fn transform_vertices(vertices: &mut [Vertex], indices: &mut [u32], transform: Mat4) {
    if transform == Mat4::IDENTITY {
        return;
    }
    let linear = Mat3::from_mat4(transform);
    let normal_matrix = linear.inverse().transpose();
    let handedness = if linear.determinant() < 0.0 { -1.0 } else { 1.0 };
    for vertex in vertices.iter_mut() {
        vertex.position = transform.transform_point3(vertex.position);
        vertex.normal = (normal_matrix * vertex.normal).normalize_or(Vec3::Y);
        let tangent = (linear * vertex.tangent.truncate()).normalize_or(vertex.normal.any_orthonormal_vector());
        vertex.tangent = tangent.extend(vertex.tangent.w * handedness);
    }
    if handedness < 0.0 {
        for triangle in indices.chunks_exact_mut(3) {
            if let [_, second, third] = triangle {
                std::mem::swap(second, third);
            }
        }
    }
}

/// The one transform that every rest palette (global rest × inverse bind) of a skin equals, when
/// there is one and it is not the identity; `Err(())` when they differ.
fn common_bind_shape(rest_palettes: &[Mat4]) -> Result<Option<Mat4>, ()> {
    let Some(&first) = rest_palettes.first() else { return Ok(None) };
    let largest = first.to_cols_array().iter().fold(1.0f32, |largest, value| largest.max(value.abs()));
    let tolerance = BIND_SHAPE_TOLERANCE * largest;
    let near = |a: Mat4, b: Mat4| (a - b).to_cols_array().iter().all(|difference| difference.abs() <= tolerance);
    if !rest_palettes.iter().all(|&palette| near(palette, first)) {
        return Err(());
    }
    if near(first, Mat4::IDENTITY) || !first.determinant().is_normal() || !first.inverse().is_finite() {
        return Ok(None);
    }
    Ok(Some(first))
}

// ---------------------------------------------------------------------------------------------
// Animation curves
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Interpolation {
    Step,
    Linear,
    CubicSpline,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Property {
    Translation,
    Rotation,
    Scale,
}

/// One sampler's keys. Values are xyz (translation, scale) or xyzw (rotation); CUBICSPLINE stores
/// three per key: in-tangent, value, out-tangent.
#[derive(Clone, Debug)]
struct Curve {
    interpolation: Interpolation,
    /// Non-empty and non-decreasing.
    times: Vec<f32>,
    values: Vec<Vec4>,
}

impl Curve {
    fn entry(&self, slot: usize) -> Vec4 {
        self.values.get(slot).copied().unwrap_or(Vec4::ZERO)
    }

    fn value(&self, key: usize) -> Vec4 {
        match self.interpolation {
            Interpolation::CubicSpline => self.entry(key * 3 + 1),
            _ => self.entry(key),
        }
    }

    /// The curve at `time`, clamped to its first and last keys. Rotations come back unnormalized
    /// from CUBICSPLINE; the caller normalizes.
    fn sample(&self, time: f32, rotation: bool) -> Vec4 {
        let (Some(&first), Some(&last)) = (self.times.first(), self.times.last()) else {
            return Vec4::ZERO;
        };
        if time <= first {
            return self.value(0);
        }
        if time >= last {
            return self.value(self.times.len() - 1);
        }
        // first < time < last, so 1 <= next <= len - 1 and times[key] <= time < times[next].
        let next = self.times.partition_point(|&key_time| key_time <= time);
        let key = next.saturating_sub(1);
        let (Some(&start), Some(&end)) = (self.times.get(key), self.times.get(next)) else {
            return self.value(key);
        };
        let span = end - start;
        let s = (time - start) / span;
        match self.interpolation {
            Interpolation::Step => self.value(key),
            Interpolation::Linear if rotation => {
                Vec4::from(slerp_shortest(Quat::from_vec4(self.value(key)), Quat::from_vec4(self.value(next)), s))
            }
            Interpolation::Linear => self.value(key).lerp(self.value(next), s),
            Interpolation::CubicSpline => {
                let (s2, s3) = (s * s, s * s * s);
                let out_tangent = self.entry(key * 3 + 2);
                let in_tangent = self.entry(next * 3);
                (2.0 * s3 - 3.0 * s2 + 1.0) * self.value(key)
                    + (s3 - 2.0 * s2 + s) * span * out_tangent
                    + (-2.0 * s3 + 3.0 * s2) * self.value(next)
                    + (s3 - s2) * span * in_tangent
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Channel {
    node: usize,
    property: Property,
    curve: Curve,
}

impl Channel {
    fn apply(&self, time: f32, pose: &mut JointPose) {
        let value = self.curve.sample(time, self.property == Property::Rotation);
        match self.property {
            Property::Translation => pose.translation = value.truncate(),
            Property::Scale => pose.scale = value.truncate(),
            Property::Rotation => pose.rotation = value.try_normalize().map_or(Quat::IDENTITY, Quat::from_vec4),
        }
    }
}

#[derive(Clone, Debug)]
struct Animation {
    name: String,
    /// The animation's input and output accessors as f32, each accessor counted once.
    file_key_bytes: usize,
    /// The last key time over all channels (0 when there are none).
    duration: f32,
    channels: Vec<Channel>,
}

fn read_animations(data: &Data<'_>, hierarchy: &Hierarchy, warnings: &mut Vec<String>) -> Result<Vec<Animation>, FormatError> {
    let (root, path) = (data.root, data.path);
    let node_count = root.nodes.len();
    let mut animated_matrices: Vec<usize> = Vec::new();
    let mut animations = Vec::with_capacity(root.animations.len());
    for (animation_index, animation) in root.animations.iter().enumerate() {
        let name =
            animation.name.clone().filter(|name| !name.is_empty()).unwrap_or_else(|| format!("animation_{animation_index}"));
        let mut channels = Vec::with_capacity(animation.channels.len());
        let mut accessors_counted: Vec<usize> = Vec::new();
        let mut file_key_bytes = 0;
        let mut skipped_weights = false;
        for (channel_index, channel) in animation.channels.iter().enumerate() {
            let label = format!("animation {animation_index} (\"{name}\") channel {channel_index}");
            let node = channel.target.node.value();
            if node >= node_count {
                return Err(error(
                    path,
                    format!("{label}: expected a target node below {node_count} (the node count), found {node}"),
                ));
            }
            let property = match channel.target.path {
                Checked::Valid(JsonProperty::Translation) => Property::Translation,
                Checked::Valid(JsonProperty::Rotation) => Property::Rotation,
                Checked::Valid(JsonProperty::Scale) => Property::Scale,
                Checked::Valid(JsonProperty::MorphTargetWeights) => {
                    skipped_weights = true;
                    continue;
                }
                Checked::Invalid => {
                    warnings.push(format!("{label}: skipped, its target path is not translation, rotation, scale or weights"));
                    continue;
                }
            };
            let sampler_index = channel.sampler.value();
            let Some(sampler) = animation.samplers.get(sampler_index) else {
                return Err(error(
                    path,
                    format!("{label}: expected sampler {sampler_index} to exist, found {} samplers", animation.samplers.len()),
                ));
            };
            let sampler_label = format!("animation {animation_index} (\"{name}\") sampler {sampler_index}");
            let curve = read_curve(data, sampler, property, &sampler_label)?;
            for (accessor, floats) in [
                (sampler.input.value(), curve.times.len()),
                (sampler.output.value(), curve.values.len() * if property == Property::Rotation { 4 } else { 3 }),
            ] {
                if !accessors_counted.contains(&accessor) {
                    accessors_counted.push(accessor);
                    file_key_bytes += floats * 4;
                }
            }
            if hierarchy.has_matrix.get(node).copied().unwrap_or(false) && !animated_matrices.contains(&node) {
                animated_matrices.push(node);
                warnings.push(format!(
                    "node {node} (\"{}\") is animated but given by a matrix: its matrix is taken apart into translation, rotation and scale",
                    hierarchy.name(node)
                ));
            }
            channels.push(Channel { node, property, curve });
        }
        if skipped_weights {
            warnings.push(format!(
                "animation {animation_index} (\"{name}\"): morph-target weight channels skipped (vkskin does not morph)"
            ));
        }
        let duration = channels.iter().filter_map(|channel| channel.curve.times.last().copied()).fold(0.0f32, f32::max);
        animations.push(Animation { name, file_key_bytes, duration, channels });
    }
    Ok(animations)
}

fn read_curve(
    data: &Data<'_>,
    sampler: &gltf::json::animation::Sampler,
    property: Property,
    label: &str,
) -> Result<Curve, FormatError> {
    let path = data.path;
    let interpolation = match sampler.interpolation {
        Checked::Valid(JsonInterpolation::Step) => Interpolation::Step,
        Checked::Valid(JsonInterpolation::Linear) => Interpolation::Linear,
        Checked::Valid(JsonInterpolation::CubicSpline) => Interpolation::CubicSpline,
        Checked::Invalid => {
            return Err(error(path, format!("{label}: expected interpolation LINEAR, STEP or CUBICSPLINE, found another")))
        }
    };
    let input = sampler.input.value();
    let input_what = format!("input of {label}");
    let times: Vec<f32> = data.floats::<1>(input, &input_what, FLOAT)?.into_iter().map(|[time]| time).collect();
    if times.is_empty() {
        return Err(error(path, format!("accessor {input} ({input_what}): expected at least one key time, found none")));
    }
    for (key, pair) in times.windows(2).enumerate() {
        if let [before, after] = pair {
            if after < before {
                return Err(located(
                    path,
                    data.element_offset(input, key + 1),
                    format!(
                        "accessor {input} ({input_what}): expected increasing key times, found {after} after {before} at key {}",
                        key + 1
                    ),
                ));
            }
        }
    }
    let output = sampler.output.value();
    let output_what = format!("output of {label}");
    let mut values: Vec<Vec4> = match property {
        Property::Rotation => data.floats::<4>(output, &output_what, QUANTIZED)?.into_iter().map(Vec4::from_array).collect(),
        Property::Translation | Property::Scale => data
            .floats::<3>(output, &output_what, QUANTIZED)?
            .into_iter()
            .map(|value| Vec3::from_array(value).extend(0.0))
            .collect(),
    };
    let per_key = if interpolation == Interpolation::CubicSpline { 3 } else { 1 };
    let needed = times.len() * per_key;
    if values.len() < needed {
        return Err(error(
            path,
            format!(
                "accessor {output} ({output_what}): expected {needed} values for {} keys, found {}",
                times.len(),
                values.len()
            ),
        ));
    }
    values.truncate(needed);
    // Slerp assumes unit keys; CUBICSPLINE tangents are not rotations, and its result is normalized.
    if property == Property::Rotation && interpolation != Interpolation::CubicSpline {
        for (key, value) in values.iter_mut().enumerate() {
            *value = value.try_normalize().ok_or_else(|| {
                located(
                    path,
                    data.element_offset(output, key),
                    format!("accessor {output} ({output_what}): key {key}: expected a unit quaternion, found zero"),
                )
            })?;
        }
    }
    Ok(Curve { interpolation, times, values })
}

// ---------------------------------------------------------------------------------------------
// Rig: direct evaluation, and baking
// ---------------------------------------------------------------------------------------------

/// The node hierarchy and animation curves behind a loaded model's skeleton and animations,
/// evaluated directly on the node tree by the spec's formulas. Animation `i` is the model's
/// animation `i`.
#[derive(Clone, Debug)]
pub struct Rig {
    parents: Vec<Option<usize>>,
    rest_local: Vec<Mat4>,
    rest_trs: Vec<JointPose>,
    /// The joint nodes and their ancestors, parents first: all a pose depends on.
    relevant: Vec<usize>,
    joint_nodes: Vec<usize>,
    animations: Vec<Animation>,
}

impl Rig {
    fn new(hierarchy: &Hierarchy, joint_nodes: Vec<usize>, animations: Vec<Animation>) -> Rig {
        let mut marked = vec![false; hierarchy.parents.len()];
        for &node in &joint_nodes {
            let mut current = Some(node);
            while let Some(ancestor) = current {
                match marked.get_mut(ancestor) {
                    Some(mark) if !*mark => *mark = true,
                    _ => break,
                }
                current = hierarchy.parents.get(ancestor).copied().flatten();
            }
        }
        let relevant = hierarchy.order.iter().copied().filter(|&node| marked.get(node).copied().unwrap_or(false)).collect();
        Rig {
            parents: hierarchy.parents.clone(),
            rest_local: hierarchy.rest_local.clone(),
            rest_trs: hierarchy.rest_trs.clone(),
            relevant,
            joint_nodes,
            animations,
        }
    }

    /// The glTF node of each skeleton joint.
    pub fn joint_nodes(&self) -> &[usize] {
        &self.joint_nodes
    }

    pub fn animation_count(&self) -> usize {
        self.animations.len()
    }

    /// An animation's last key time, which is its clip's duration.
    pub fn duration(&self, animation: usize) -> Option<f32> {
        self.animations.get(animation).map(|animation| animation.duration)
    }

    /// A node's local translation, rotation and scale at `time` in an animation: its rest values
    /// with the animated ones replaced. An unknown animation or node gives the rest pose (identity).
    pub fn local_transform(&self, animation: usize, node: usize, time: f32) -> JointPose {
        let mut pose = self.rest_trs.get(node).copied().unwrap_or(JointPose::IDENTITY);
        for channel in self.animations.get(animation).into_iter().flat_map(|animation| &animation.channels) {
            if channel.node == node {
                channel.apply(time, &mut pose);
            }
        }
        pose
    }

    /// Every skeleton joint's model-space matrix at `time`, evaluated from the curves on the node
    /// tree. An unknown animation gives the rest pose.
    pub fn evaluate(&self, animation: usize, time: f32, out: &mut [Mat4]) {
        let mut animated: Vec<Option<JointPose>> = vec![None; self.parents.len()];
        for channel in self.animations.get(animation).into_iter().flat_map(|animation| &animation.channels) {
            let rest = self.rest_trs.get(channel.node).copied().unwrap_or(JointPose::IDENTITY);
            if let Some(slot) = animated.get_mut(channel.node) {
                channel.apply(time, slot.get_or_insert(rest));
            }
        }
        let mut global = vec![Mat4::IDENTITY; self.parents.len()];
        for &node in &self.relevant {
            let local = match animated.get(node).copied().flatten() {
                Some(pose) => pose.to_mat4(),
                None => self.rest_local.get(node).copied().unwrap_or(Mat4::IDENTITY),
            };
            let parent = self.parents.get(node).copied().flatten().and_then(|parent| global.get(parent)).copied();
            if let Some(slot) = global.get_mut(node) {
                *slot = parent.map_or(local, |parent| parent * local);
            }
        }
        for (matrix, &node) in out.iter_mut().zip(&self.joint_nodes) {
            *matrix = global.get(node).copied().unwrap_or(Mat4::IDENTITY);
        }
    }

    /// Every joint's model-space matrix with no animation: the file's rest pose. With the file's
    /// inverse bind matrices this places the mesh where the spec says it is at rest.
    pub fn rest_pose(&self, out: &mut [Mat4]) {
        self.evaluate(usize::MAX, 0.0, out);
    }
}

/// Which nodes some animation drives.
fn animated_nodes(animations: &[Animation], node_count: usize) -> Vec<bool> {
    let mut animated = vec![false; node_count];
    for channel in animations.iter().flat_map(|animation| &animation.channels) {
        if let Some(slot) = animated.get_mut(channel.node) {
            *slot = true;
        }
    }
    animated
}

impl Animation {
    /// The curves as channels of the skeleton joints on their nodes (a node in two skins drives
    /// both joints); curves on other nodes move nothing a joint carries and are left out.
    fn channels_for(&self, joint_nodes: &[usize]) -> anim::Animation {
        let mut joints_of: HashMap<usize, Vec<usize>> = HashMap::new();
        for (joint, &node) in joint_nodes.iter().enumerate() {
            joints_of.entry(node).or_default().push(joint);
        }
        let mut channels = Vec::new();
        for channel in &self.channels {
            for &joint in joints_of.get(&channel.node).into_iter().flatten() {
                let (property, mask, width) = match channel.property {
                    Property::Translation => (anim::Property::Translation, 0b0111, 3),
                    Property::Rotation => (anim::Property::Rotation, 0b1111, 4),
                    Property::Scale => (anim::Property::Scale, 0b0111, 3),
                };
                let interpolation = match channel.curve.interpolation {
                    Interpolation::Step => anim::Interpolation::Step,
                    Interpolation::Linear => anim::Interpolation::Linear,
                    Interpolation::CubicSpline => anim::Interpolation::CubicSpline,
                };
                channels.push(anim::Channel {
                    joint,
                    property,
                    interpolation,
                    times: KeyTimes::from_list(channel.curve.times.clone()),
                    mask,
                    base: Vec4::ZERO,
                    implied_w: false,
                    wraps: false,
                    values: channel.curve.values.iter().flat_map(|value| value.to_array()[..width].to_vec()).collect(),
                });
            }
        }
        anim::Animation {
            name: self.name.clone(),
            duration: self.duration,
            frame_rate: None,
            channels,
            file_key_bytes: self.file_key_bytes,
        }
    }
}

/// Gives every joint its local frame: `rest` is its node's translation, rotation and scale (a
/// node given by a matrix that no curve drives goes whole into `pre` instead, shear and all), and
/// `pre` the rest transforms of the nodes between its parent joint's node and its own (every
/// ancestor, for a root). Those nodes are not animated: animated ones were made joints first.
fn set_local_frames(
    skeleton: &mut Skeleton,
    joint_nodes: &[usize],
    hierarchy: &Hierarchy,
    animated: &[bool],
) -> Result<(), String> {
    let parent_nodes: Vec<Option<usize>> =
        skeleton.joints.iter().map(|joint| joint.parent.and_then(|parent| joint_nodes.get(parent).copied())).collect();
    for ((joint, &node), stop) in skeleton.joints.iter_mut().zip(joint_nodes).zip(parent_nodes) {
        let mut pre = Mat4::IDENTITY;
        let mut ancestor = hierarchy.climb(node)?;
        while let Some(current) = ancestor.filter(|&current| Some(current) != stop) {
            pre = hierarchy.rest_local.get(current).copied().unwrap_or(Mat4::IDENTITY) * pre;
            ancestor = hierarchy.climb(current)?;
        }
        let fixed_matrix =
            hierarchy.has_matrix.get(node).copied().unwrap_or(false) && !animated.get(node).copied().unwrap_or(false);
        if fixed_matrix {
            joint.pre = pre * hierarchy.rest_local.get(node).copied().unwrap_or(Mat4::IDENTITY);
            joint.rest = JointPose::IDENTITY;
        } else {
            joint.pre = pre;
            joint.rest = hierarchy.rest_trs.get(node).copied().unwrap_or(JointPose::IDENTITY);
        }
    }
    Ok(())
}

impl Builder<'_> {
    /// Makes every animated node between a joint and its parent joint (or above a root joint) a
    /// joint of its own, so its motion reaches the joints below: a fixed `pre` cannot carry it.
    /// Joints stay parents first; influences are renumbered. Joints under the same parent joint
    /// share the promoted joint of a node they both hang from.
    fn promote_animated_ancestors(&mut self, animated: &[bool]) -> Result<(), FormatError> {
        let hierarchy = self.hierarchy;
        let count = self.skeleton.len();
        // The first joint on each node: an animated ancestor that is one already is reused.
        let mut joint_of: HashMap<usize, usize> = HashMap::new();
        for (index, &node) in self.joint_nodes.iter().enumerate() {
            joint_of.entry(node).or_insert(index);
        }
        // Per joint, its animated in-between nodes (nearest first) and the joint it hangs from.
        let mut chains: Vec<(Vec<usize>, Option<usize>)> = Vec::with_capacity(count);
        for (index, joint) in self.skeleton.joints.iter().enumerate() {
            let stop = joint.parent.and_then(|parent| self.joint_nodes.get(parent).copied());
            let climbed = |node| hierarchy.climb(node).map_err(|reason| error(self.data.path, reason));
            let mut ancestor = match self.joint_nodes.get(index) {
                Some(&node) => climbed(node)?,
                None => None,
            };
            let (mut chain, mut top) = (Vec::new(), joint.parent);
            while let Some(current) = ancestor.filter(|&current| Some(current) != stop) {
                if animated.get(current).copied().unwrap_or(false) {
                    if let Some(&existing) = joint_of.get(&current) {
                        top = Some(existing);
                        break;
                    }
                    chain.push(current);
                }
                ancestor = climbed(current)?;
            }
            chains.push((chain, top));
        }
        if chains.iter().zip(&self.skeleton.joints).all(|((chain, top), joint)| chain.is_empty() && *top == joint.parent) {
            return Ok(());
        }
        // New joints (after the old ones, for now): one per (parent joint, node).
        let mut joints = self.skeleton.joints.clone();
        let mut nodes = self.joint_nodes.clone();
        let mut promoted: HashMap<(Option<usize>, usize), usize> = HashMap::new();
        for (index, (chain, top_parent)) in chains.iter().enumerate() {
            let mut parent = *top_parent;
            for &node in chain.iter().rev() {
                let next = *promoted.entry((*top_parent, node)).or_insert_with(|| {
                    let global = hierarchy.rest_global.get(node).copied().unwrap_or(Mat4::IDENTITY);
                    let inverse = global.inverse();
                    let inverse_bind = if inverse.is_finite() { inverse } else { Mat4::IDENTITY };
                    joints.push(Joint::new(hierarchy.name(node), parent, inverse_bind, JointPose::IDENTITY));
                    nodes.push(node);
                    joints.len() - 1
                });
                parent = Some(next);
            }
            joints[index].parent = parent;
        }
        if joints.len() == count
            && joints.iter().enumerate().all(|(index, joint)| joint.parent.is_none_or(|parent| parent < index))
        {
            self.skeleton.joints = joints; // still parents first: nothing to renumber
            return Ok(());
        }
        if joints.len() > MAX_JOINTS {
            return Err(error(
                self.path(),
                format!(
                    "expected at most {MAX_JOINTS} joints in all (skins, rigid meshes and animated nodes above them), found more"
                ),
            ));
        }
        // Parents first again: a pre-order walk from the roots.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); joints.len()];
        let mut order = Vec::with_capacity(joints.len());
        let mut stack = Vec::new();
        for (index, joint) in joints.iter().enumerate().rev() {
            match joint.parent {
                Some(parent) => children[parent].push(index),
                None => stack.push(index),
            }
        }
        while let Some(index) = stack.pop() {
            order.push(index);
            stack.extend(children[index].iter().copied());
        }
        let mut new_index = vec![0u32; joints.len()];
        for (position, &old) in order.iter().enumerate() {
            new_index[old] = position as u32;
        }
        self.skeleton.joints = order
            .iter()
            .map(|&old| {
                let mut joint = joints[old].clone();
                joint.parent = joint.parent.map(|parent| new_index[parent] as usize);
                joint
            })
            .collect();
        self.joint_nodes = order.iter().map(|&old| nodes[old]).collect();
        for influence in &mut self.influences {
            influence.joint = new_index.get(influence.joint as usize).copied().unwrap_or(influence.joint);
        }
        Ok(())
    }
}

/// Whether a matrix has a finite inverse (an inverse bind matrix must).
fn invertible(matrix: &Mat4) -> bool {
    matrix.is_finite() && matrix.determinant().is_normal() && matrix.inverse().is_finite()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn base64_and_percent_decoding() {
        assert_eq!(decode_base64("aGVsbG8=").as_deref(), Ok(b"hello".as_slice()));
        assert_eq!(decode_base64("aGVsbG8").as_deref(), Ok(b"hello".as_slice()), "padding is optional");
        assert_eq!(decode_base64("").as_deref(), Ok(b"".as_slice()));
        assert!(decode_base64("aGV*").is_err());
        assert!(decode_base64("aGVsbG8=x").is_err());
        assert!(decode_base64("a").is_err());
        assert_eq!(files::percent_decode("a%20b.bin").as_deref(), Ok(b"a b.bin".as_slice()));
        assert!(files::percent_decode("bad%2").is_err());
        assert_eq!(
            files::percent_decode("%FF").as_deref(),
            Ok([0xFFu8].as_slice()),
            "decodes bytes; UTF-8 is checked by the caller"
        );
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
        let mut bytes = Vec::new();
        for value in 0..8u32 {
            bytes.extend((value as f32).to_le_bytes());
        }
        let buffers = [BufferData { bytes, file_offset: Some(100) }];
        let data = Data { path: Path::new("range.glb"), root: &root, buffers: &buffers, budget: Cell::new(MAX_DECODED_BYTES) };
        // View starts at float 1; accessor 0 at float 2; elements 3 floats apart.
        assert_eq!(data.floats::<3>(0, "test", FLOAT).ok(), Some(vec![[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]]));
        // 8 + 12 + 12 = 32 > 28: the second element runs past the view.
        let past = data.floats::<3>(1, "test", FLOAT).expect_err("past the view");
        assert_eq!(past.location, Location::Byte(112));
        assert!(past.message.contains("accessor 1") && past.message.contains("bufferView 0"), "{}", past.message);
        assert!(data.floats::<3>(0, "test", &[ComponentType::U16]).is_err(), "component type is checked");
        assert!(data.floats::<2>(0, "test", FLOAT).is_err(), "type is checked");
    }
}
