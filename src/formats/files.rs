//! Reading what a model names: only regular files, never more bytes than a budget, and never
//! outside the model's folder for a path that comes from inside a file.
//!
//! A model is something people download and double-click. Its path, an `--anim`, a glTF buffer or
//! image URI or a texture found beside it may be a device (`/dev/zero` never ends), a FIFO (opening
//! one blocks until a writer comes), a directory, or a huge file. So every read here checks the
//! file type before it opens (a FIFO is refused without being opened) and again on the open handle,
//! and stops at a stated number of bytes.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A model or animation file: far beyond any sample model (the long mocap test clip is 5.3 MB),
/// small enough that parsing it stays within a few GiB.
pub const MAX_MODEL_BYTES: u64 = 512 << 20;

/// One texture file, encoded.
pub const MAX_TEXTURE_BYTES: u64 = 128 << 20;

/// A glTF's external buffers and images together.
pub const MAX_EXTERNAL_BYTES: u64 = 512 << 20;

/// What a path that is not a regular file is, in the words of the error: what `std` can tell on
/// this system (on Windows: a directory or something else, such as a device or a pipe).
fn kind(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        } else if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        } else if file_type.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// The file's size, when `path` is a regular file (symbolic links followed).
fn regular_file_size(path: &Path) -> Result<u64, String> {
    let metadata = std::fs::metadata(path).map_err(|error| format!("cannot read: {error}"))?;
    if !metadata.is_file() {
        return Err(format!("expected a regular file, found {}", kind(metadata.file_type())));
    }
    Ok(metadata.len())
}

/// Opens a regular file, checking the type before (a FIFO is never opened) and after (on the handle).
fn open_regular(path: &Path) -> Result<File, String> {
    regular_file_size(path)?;
    let file = File::open(path).map_err(|error| format!("cannot read: {error}"))?;
    let metadata = file.metadata().map_err(|error| format!("cannot read: {error}"))?;
    if !metadata.is_file() {
        return Err(format!("expected a regular file, found {}", kind(metadata.file_type())));
    }
    Ok(file)
}

/// A regular file's bytes, at most `limit` of them: a longer file is refused before it is read.
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    read_prefix(path, limit, true)
}

/// The first `length` bytes of a regular file (all of it when `whole` and it is no longer); a file
/// shorter than `length` yields what it has.
pub fn read_prefix(path: &Path, length: u64, whole: bool) -> Result<Vec<u8>, String> {
    let file = open_regular(path)?;
    let size = file.metadata().map_err(|error| format!("cannot read: {error}"))?.len();
    if whole && size > length {
        return Err(format!("the file is {size} bytes; at most {length} are read"));
    }
    let mut bytes = Vec::with_capacity(size.min(length) as usize);
    // `take` bounds the read even if the file grows while it is read.
    file.take(length).read_to_end(&mut bytes).map_err(|error| format!("cannot read: {error}"))?;
    Ok(bytes)
}

/// A regular file's text (bytes that are not UTF-8 become U+FFFD), at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    read(path, limit).map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// `relative`, a path written inside a file, joined to the folder it is read from. Refused when it
/// is absolute or climbs out of that folder with `..`: a downloaded model has no business reading
/// `/etc` or a neighbour's files. A path is read the same way on every system: `\` separates
/// folders as `/` does (exporters on Windows write it), and a drive letter (`C:`) makes it absolute.
pub fn inside(folder: &Path, relative: &str) -> Result<PathBuf, String> {
    let written = written_path(relative);
    if written.starts_with('/') || has_drive_letter(&written) {
        return Err(format!("expected a relative path, found the absolute path {}", quoted(relative)));
    }
    let mut depth = 0usize;
    let mut joined = folder.to_path_buf();
    for part in written.split('/') {
        match part {
            "" | "." => {}
            ".." if depth > 0 => {
                depth -= 1;
                joined.push("..");
            }
            ".." => return Err(format!("expected a path inside the model's folder, found {}", quoted(relative))),
            part => {
                depth += 1;
                joined.push(part);
            }
        }
    }
    Ok(joined)
}

/// A path as a file wrote it, with `\` turned into `/`: the separator on Windows, and no name on
/// any system would hold one in a model's folder.
pub fn written_path(text: &str) -> String {
    text.trim().replace('\\', "/")
}

/// The last name in a path as a file wrote it (`C:\art\skin.png` -> `skin.png`): what is left of
/// an absolute path from the artist's machine, on every system.
pub fn written_file_name(text: &str) -> String {
    written_path(text).rsplit('/').next().unwrap_or_default().to_string()
}

/// `C:` or `C:/...`, after [`written_path`].
pub fn has_drive_letter(written: &str) -> bool {
    let bytes = written.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// Text from a file, quoted for a one-line message: control characters (a newline, an escape
/// sequence) are escaped, so a file cannot forge a second line or drive the terminal.
pub fn quoted(text: &str) -> String {
    format!("\"{}\"", one_line(text))
}

/// `text` with its control characters escaped (`\n`, `\u{1b}`), everything else kept: what every
/// error and warning goes through before it is printed.
pub fn one_line(text: &str) -> String {
    let mut line = String::with_capacity(text.len());
    for character in text.chars() {
        if character.is_control() {
            line.extend(character.escape_debug());
        } else {
            line.push(character);
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_refused_on_every_system() {
        let error = read(&std::env::temp_dir(), 1 << 20).unwrap_err();
        assert!(error.contains("a directory"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_without_reading() {
        let error = read(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(error.contains("a device"), "{error}");
        let folder = std::env::temp_dir().join(format!("vkskin_files_{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let fifo = folder.join("model.glb");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        // Opening a FIFO with no writer would block forever: the type check comes first.
        let error = read(&fifo, 1 << 20).unwrap_err();
        assert!(error.contains("a FIFO"), "{error}");
        std::fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn a_file_past_the_limit_is_refused_and_a_prefix_reads_only_its_length() {
        let path = std::env::temp_dir().join(format!("vkskin_limit_{}", std::process::id()));
        std::fs::write(&path, [7u8; 100]).unwrap();
        let error = read(&path, 99).unwrap_err();
        assert!(error.contains("100 bytes") && error.contains("99"), "{error}");
        assert_eq!(read(&path, 100).unwrap().len(), 100);
        assert_eq!(read_prefix(&path, 10, false).unwrap(), vec![7u8; 10]);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn paths_from_files_stay_in_the_folder_and_are_quoted() {
        let folder = Path::new("/models/fox");
        assert_eq!(inside(folder, "textures/../fox.png").unwrap(), folder.join("textures/../fox.png"));
        assert!(inside(folder, "../secret.bin").unwrap_err().contains("inside the model's folder"));
        assert!(inside(folder, "a/../../b").unwrap_err().contains("inside"));
        assert!(inside(folder, "/etc/passwd").unwrap_err().contains("absolute"));
        // Written on Windows: the same paths, on every system.
        assert_eq!(inside(folder, ".\\textures\\fox.png").unwrap(), folder.join("textures").join("fox.png"));
        assert_eq!(inside(folder, "a\\..\\fox.bin").unwrap(), folder.join("a").join("..").join("fox.bin"));
        assert!(inside(folder, "..\\secret.bin").unwrap_err().contains("inside the model's folder"));
        assert!(inside(folder, "C:\\art\\fox.png").unwrap_err().contains("absolute"));
        assert!(inside(folder, "c:fox.png").unwrap_err().contains("absolute"));
        assert!(inside(folder, "\\\\server\\share\\fox.png").unwrap_err().contains("absolute"));
        assert_eq!(written_file_name("C:\\Users\\Zoë\\Desktop\\skin.PNG"), "skin.PNG");
        assert_eq!(written_file_name("textures/skin.png"), "skin.png");
        assert_eq!(inside(folder, "текстуры/кожа.png").unwrap(), folder.join("текстуры").join("кожа.png"));
        assert_eq!(quoted("a\nerror: b\u{1b}[2J"), "\"a\\nerror: b\\u{1b}[2J\"");
        assert_eq!(one_line("café × 2\r"), "café × 2\\r");
    }
}
