//! Milkshape 3D (.ms3d v3/v4). Being written.

use std::path::Path;

use super::FormatError;
use crate::model::Model;

pub fn load(path: &Path) -> Result<Model, FormatError> {
    Err(FormatError::in_file(path, "MS3D loading is not written yet"))
}
