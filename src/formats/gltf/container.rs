//! The container and the JSON: a .glb split into its chunks by the gltf crate once the header's
//! length is checked (gltf 1.4.1 subtracts 12 from it unchecked), or a .gltf's text; the JSON
//! parsed with its line and column; the document validated by the crate (every index in range,
//! every enum one the spec knows: its wrapper types unwrap both) after the one index its
//! validation reads unchecked; and the asset's version and required extensions.

use super::{error, located};
use crate::formats::FormatError;
use gltf::binary::{ChunkType, Error as GlbError};
use gltf::json::validation::Checked;
use gltf::json::validation::{Error as Invalid, Validate};
use gltf::json::Root;
use gltf::mesh::Semantic;
use std::borrow::Cow;
use std::path::Path;

// Container and JSON
// ---------------------------------------------------------------------------------------------

/// The JSON text and the binary chunk of a file.
pub(super) struct Container<'a> {
    pub(super) json: Cow<'a, [u8]>,
    /// Where the JSON starts in the file, for a GLB, whose errors are byte offsets.
    pub(super) json_offset: Option<u64>,
    /// A GLB's BIN chunk and where it starts in the file.
    pub(super) bin: Option<(Cow<'a, [u8]>, u64)>,
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

pub(super) fn split_container<'a>(bytes: &'a [u8], path: &Path) -> Result<Container<'a>, FormatError> {
    if bytes.starts_with(b"glTF") {
        return split_glb(bytes, path);
    }
    // The spec forbids a byte-order mark; some tools write one anyway.
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(bytes);
    match text.iter().find(|byte| !byte.is_ascii_whitespace()) {
        Some(b'{') => Ok(Container { json: Cow::Borrowed(text), json_offset: None, bin: None }),
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

/// The GLB header and chunks: the header's length is checked here, the chunks by `gltf::Glb`.
pub(super) fn split_glb<'a>(bytes: &'a [u8], path: &Path) -> Result<Container<'a>, FormatError> {
    let at = |offset: usize, message: String| located(path, Some(offset as u64), message);
    let Some(length) = read_u32(bytes, 8) else {
        return Err(at(bytes.len(), format!("expected a 12-byte GLB header, found only {} bytes", bytes.len())));
    };
    let length = length as usize;
    if length < 20 {
        return Err(at(8, format!("expected a GLB length of at least 20 bytes (header and a chunk header), found {length}")));
    }
    let Some(file) = bytes.get(..length) else {
        return Err(at(
            8,
            format!("expected {length} bytes as the GLB header says, found only {} (the file is truncated)", bytes.len()),
        ));
    };
    // The BIN chunk's header follows the JSON chunk (its length at byte 12 includes its padding).
    let bin_header = read_u32(file, 12).map_or(length, |json_length| 20usize.saturating_add(json_length as usize));
    let glb = gltf::Glb::from_slice(file).map_err(|glb_error| match glb_error {
        gltf::Error::Binary(GlbError::Version(version)) => at(4, format!("expected GLB version 2, found {version}")),
        gltf::Error::Binary(GlbError::ChunkLength { ty, length: chunk_length, length_read }) => {
            let (name, offset) = if matches!(ty, ChunkType::Json) { ("JSON", 12) } else { ("BIN", bin_header) };
            at(offset, format!("expected the {name} chunk's {chunk_length} bytes to fit in the GLB, found {length_read} left"))
        }
        gltf::Error::Binary(GlbError::ChunkType(ty)) => {
            let (expected, found, offset) =
                if matches!(ty, ChunkType::Bin) { ("JSON", "BIN", 16) } else { ("BIN", "JSON", bin_header + 4) };
            at(offset, format!("expected a {expected} chunk, found {found}"))
        }
        gltf::Error::Binary(GlbError::UnknownChunkType(ty)) => {
            let offset = if read_u32(file, 16) == Some(0x4E4F_534A) { bin_header + 4 } else { 16 };
            at(offset, format!("expected a JSON or BIN chunk type, found {:?}", String::from_utf8_lossy(&ty)))
        }
        gltf::Error::Binary(GlbError::Io(_)) => at(bin_header, "expected an 8-byte chunk header, found the end".to_string()),
        other => at(0, format!("expected a GLB: {other}")),
    })?;
    let bin_offset = 20 + glb.json.len() as u64 + 8;
    Ok(Container { json: glb.json, json_offset: Some(20), bin: glb.bin.map(|bin| (bin, bin_offset)) })
}

pub(super) fn parse_json(container: &Container<'_>, path: &Path) -> Result<Root, FormatError> {
    gltf::json::deserialize::from_slice::<Root>(&container.json).map_err(|json_error| {
        let (line, column) = (json_error.line(), json_error.column());
        let text = json_error.to_string();
        let message = text.strip_suffix(&format!(" at line {line} column {column}")).unwrap_or(&text);
        let message = format!("expected valid glTF JSON: {message}");
        match container.json_offset {
            Some(offset) => located(
                path,
                Some(offset + byte_of(&container.json, line, column)),
                format!("{message} (JSON line {line}, column {column})"),
            ),
            None if line > 0 => FormatError::at_line(path, line, format!("{message} (column {column})")),
            None => error(path, message),
        }
    })
}

/// The byte offset of a 1-based line and column in `text`.
pub(super) fn byte_of(text: &[u8], line: usize, column: usize) -> u64 {
    let line_start = match line.checked_sub(2) {
        None => 0,
        Some(newlines) => {
            text.iter().enumerate().filter(|&(_, &byte)| byte == b'\n').nth(newlines).map_or(text.len(), |(at, _)| at + 1)
        }
    };
    line_start.saturating_add(column.saturating_sub(1)).min(text.len()) as u64
}

pub(super) fn check_asset(root: &Root, path: &Path, warnings: &mut Vec<String>) -> Result<(), FormatError> {
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

/// Every index in range and every enum one the spec knows, by the crate's validation, so the
/// document's wrapper types (which unwrap both) are safe to use. Its own check of a primitive's
/// POSITION min and max indexes the accessors unchecked, so that index is checked first, and it
/// skips animation channels' targets, which are checked here too. Left
/// out: a missing POSITION min or max and an accessor without a bufferView (zeros, which
/// [`Data`] reads), which vkskin does not need, and required extensions, which [`check_asset`]
/// judges.
pub(super) fn validate(root: &Root, path: &Path) -> Result<(), FormatError> {
    for (mesh_index, mesh) in root.meshes.iter().enumerate() {
        for (primitive_index, primitive) in mesh.primitives.iter().enumerate() {
            let position = primitive.attributes.get(&Checked::Valid(Semantic::Positions)).map(|index| index.value());
            if let Some(index) = position.filter(|&index| index >= root.accessors.len()) {
                return Err(error(
                    path,
                    format!(
                        "meshes[{mesh_index}].primitives[{primitive_index}].attributes.POSITION: expected an accessor index \
                         below {} (the accessor count), found accessor {index}",
                        root.accessors.len()
                    ),
                ));
            }
        }
    }
    // Animation channels' targets, which the crate's validation skips (gltf-json 1.4.1 validates
    // an animation's samplers and its channels' sampler indices, not what a channel targets).
    for (animation_index, animation) in root.animations.iter().enumerate() {
        for (channel_index, channel) in animation.channels.iter().enumerate() {
            let place = format!("animations[{animation_index}].channels[{channel_index}].target");
            let node = channel.target.node.value();
            if node >= root.nodes.len() {
                let count = root.nodes.len();
                return Err(error(
                    path,
                    format!("{place}.node: expected a node index below {count} (the node count), found {node}"),
                ));
            }
            if channel.target.path == Checked::Invalid {
                return Err(error(
                    path,
                    format!("{place}.path: expected translation, rotation, scale or weights, found another"),
                ));
            }
        }
    }
    let mut first: Option<String> = None;
    root.validate(root, gltf::json::Path::new, &mut |place: &dyn Fn() -> gltf::json::Path, problem| {
        if first.is_some() {
            return;
        }
        let place = place().to_string();
        let expected = match problem {
            Invalid::IndexOutOfBounds => {
                let found = found_at(root, &place).map_or_else(String::new, |value| format!(", found {value}"));
                first = Some(format!("{place}: expected the index of an element the file has{found}"));
                return;
            }
            Invalid::Invalid => "a value the glTF 2.0 spec defines, found another",
            Invalid::Missing if place.ends_with(".min") || place.ends_with(".max") || place.ends_with(".bufferView") => return,
            Invalid::Missing => "it to be given, found none",
            Invalid::Oversize => "a size this machine can address, found a larger one",
            Invalid::Unsupported => return,
        };
        first = Some(format!("{place}: expected {expected}"));
    });
    first.map_or(Ok(()), |message| Err(error(path, message)))
}

/// The JSON value at a validation path such as `skins[0].joints[1]`, for the error (only then is
/// the document turned back into JSON).
fn found_at(root: &Root, place: &str) -> Option<serde_json::Value> {
    let pointer: String = place.replace("[\"", "/").replace("\"]", "").replace(['[', '.'], "/").replace(']', "");
    serde_json::to_value(root).ok()?.pointer(&format!("/{pointer}")).cloned()
}

// ---------------------------------------------------------------------------------------------
