//! The FBX loader from bytes: ufbx's parse under its memory limit, the model built from the scene
//! (joints, skins, baked stacks), then its culling cells and levels of detail.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(model) = vkskin::formats::fbx::from_bytes(data, Path::new("/nonexistent/fuzz.fbx")) {
        let _ = model.cell_bounds();
        let _ = vkskin::model::lod::with_levels(&model);
    }
});
