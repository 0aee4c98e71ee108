//! The container and the JSON: a .gltf's text or a .glb's chunks, each length checked before it is
//! used, and the asset's version.

use super::*;

// Container and JSON
// ---------------------------------------------------------------------------------------------

/// The JSON text and the binary chunk of a file.
pub(super) struct Container<'a> {
    pub(super) json: &'a [u8],
    /// Where the JSON starts in the file, for a GLB, whose errors are byte offsets.
    pub(super) json_offset: Option<u64>,
    /// A GLB's BIN chunk and where it starts in the file.
    pub(super) bin: Option<(&'a [u8], u64)>,
}

pub(super) fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let field = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(field.try_into().ok()?))
}

pub(super) fn split_container<'a>(bytes: &'a [u8], path: &Path) -> Result<Container<'a>, FormatError> {
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

pub(super) fn split_glb<'a>(bytes: &'a [u8], path: &Path) -> Result<Container<'a>, FormatError> {
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

pub(super) fn parse_json(container: &Container<'_>, path: &Path) -> Result<Root, FormatError> {
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

// ---------------------------------------------------------------------------------------------
