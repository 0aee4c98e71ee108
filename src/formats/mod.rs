//! Model loaders. Each turns a file format into the one [`Model`](crate::model::Model) type.

pub mod md5;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::model::Model;

/// Where in a file something went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Line(usize),
    Byte(u64),
    File,
}

/// A load error that names the file, the place in it, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct FormatError {
    pub file: PathBuf,
    pub location: Location,
    pub message: String,
}

impl FormatError {
    pub fn at_line(file: &Path, line: usize, message: impl Into<String>) -> FormatError {
        FormatError { file: file.to_path_buf(), location: Location::Line(line), message: message.into() }
    }

    pub fn in_file(file: &Path, message: impl Into<String>) -> FormatError {
        FormatError { file: file.to_path_buf(), location: Location::File, message: message.into() }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Location::Line(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.message),
            Location::Byte(offset) => write!(f, "{} (byte {}): {}", self.file.display(), offset, self.message),
            Location::File => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// Loads a model by its extension, with optional separate animation files (MD5's .md5anim).
pub fn load_model(path: &Path, animations: &[PathBuf]) -> Result<Model, FormatError> {
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("md5mesh") => md5::load(path, animations),
        _ => Err(FormatError::in_file(path, "unsupported model format: expected .md5mesh")),
    }
}
