//! glTF 2.0 (.gltf, .glb). Being written.

use std::path::Path;

use super::FormatError;
use crate::model::Model;

pub fn load(path: &Path) -> Result<Model, FormatError> {
    Err(FormatError::in_file(path, "glTF loading is not written yet"))
}
