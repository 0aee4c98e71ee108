//! Buffers and URIs: the GLB binary chunk, data URIs, and files inside the model's folder, each
//! read up to its declared length within the external budget.

use super::container::Container;
use super::{error, located};
use crate::formats::{files, FormatError};
use base64::alphabet::STANDARD;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use gltf::Document;
use percent_encoding::percent_decode_str;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Standard base64 as data URIs use it; some writers leave the padding out.
const BASE64: GeneralPurpose =
    GeneralPurpose::new(&STANDARD, GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent));

// Buffers and URIs
// ---------------------------------------------------------------------------------------------

/// Each buffer's bytes, exactly its byteLength, from the GLB's BIN chunk, a data URI or a file.
/// The crate's `import_buffers` is not used: it unwraps the percent-decoding of a URI such as
/// `%FF.bin`, and reads a file whole whatever its length.
pub(super) fn load_buffers(
    document: &Document,
    container: &Container<'_>,
    base_dir: Option<&Path>,
    path: &Path,
) -> Result<Vec<Vec<u8>>, FormatError> {
    // The budget for everything outside the file, checked before a byte is read: a small JSON
    // must not read gigabytes by naming a large file many times.
    let external = external_buffer_bytes(document);
    if external > files::MAX_EXTERNAL_BYTES {
        return Err(error(
            path,
            format!(
                "its buffers declare {external} bytes in external files; expected at most {} in all",
                files::MAX_EXTERNAL_BYTES
            ),
        ));
    }
    let mut buffers = Vec::with_capacity(document.buffers().len());
    for buffer in document.buffers() {
        let (index, declared) = (buffer.index(), buffer.length());
        let (bytes, file_offset) = match (buffer.source(), &container.bin) {
            (gltf::buffer::Source::Uri(uri), _) => {
                // Only the declared bytes are read; a shorter file is the error below.
                let (bytes, _) = read_uri(uri, base_dir, declared as u64, false)
                    .map_err(|reason| error(path, format!("buffer {index}: {reason}")))?;
                (Cow::Owned(bytes), None)
            }
            (gltf::buffer::Source::Bin, Some((bin, offset))) if index == 0 => (Cow::Borrowed(&bin[..]), Some(*offset)),
            (gltf::buffer::Source::Bin, Some(_)) => {
                return Err(error(
                    path,
                    format!("buffer {index} has no uri: expected one (only buffer 0 may be the GLB's BIN chunk)"),
                ));
            }
            (gltf::buffer::Source::Bin, None) => {
                return Err(error(
                    path,
                    format!("buffer {index} has no uri and the file has no BIN chunk: expected its {declared} bytes somewhere"),
                ));
            }
        };
        let Some(bytes) = bytes.get(..declared) else {
            return Err(located(
                path,
                file_offset,
                format!("buffer {index}: expected byteLength {declared} bytes, found {}", bytes.len()),
            ));
        };
        buffers.push(bytes.to_vec());
    }
    Ok(buffers)
}

/// The bytes the buffers with a URI declare (data: URIs count too: they are decoded).
pub(super) fn external_buffer_bytes(document: &Document) -> u64 {
    document
        .buffers()
        .filter(|buffer| matches!(buffer.source(), gltf::buffer::Source::Uri(_)))
        .fold(0u64, |total, buffer| total.saturating_add(buffer.length() as u64))
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
        let bytes = if header.ends_with(";base64") {
            BASE64.decode(payload).map_err(|reason| format!("expected base64 data after the data URI's ',': {reason}"))?
        } else {
            percent_decode_str(payload).collect()
        };
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
        percent_decode_str(uri).decode_utf8().map_err(|_| format!("expected a UTF-8 path in {}", files::quoted(uri)))?;
    let file = files::inside(base_dir, &relative)?;
    let bytes = files::read_prefix(&file, limit, whole).map_err(|reason| format!("{}: {reason}", file.display()))?;
    Ok((bytes, Some(file)))
}

// ---------------------------------------------------------------------------------------------
