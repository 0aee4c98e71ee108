//! Buffers and URIs: the GLB binary chunk, data URIs, and files inside the model's folder, each
//! read up to its declared length within the external budget.

use super::*;

// Buffers and URIs
// ---------------------------------------------------------------------------------------------

pub(super) struct BufferData {
    /// Exactly the buffer's byteLength.
    pub(super) bytes: Vec<u8>,
    /// Where the buffer starts in the file: the GLB's BIN chunk.
    pub(super) file_offset: Option<u64>,
}

pub(super) fn load_buffers(
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
pub(super) fn external_buffer_bytes(root: &Root) -> u64 {
    root.buffers.iter().filter(|buffer| buffer.uri.is_some()).map(|buffer| buffer.byte_length.0).sum()
}

/// A URI's bytes, and the file they came from when they came from one. A relative path is read
/// from `base_dir` (never outside it: `files::inside`), at most `limit` bytes of it: the first
/// `limit` when `whole` is false, else a longer file is refused. With no `base_dir` the file
/// system is never touched.
pub(super) fn read_uri(
    uri: &str,
    base_dir: Option<&Path>,
    limit: u64,
    whole: bool,
) -> Result<(Vec<u8>, Option<PathBuf>), String> {
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
pub(super) fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
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
