//! The glTF import from bytes (.gltf JSON or .glb), without touching the file system, then what
//! loading does after it (the morph targets' normal offsets, the culling cells) and the model's
//! levels of detail (meshoptimizer on whatever the loader accepted).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut model) = vkskin::formats::gltf::load_from_slice(data, Path::new("/nonexistent/fuzz.glb"), None) {
        model.recompute_morph_normals();
        let _ = model.cell_bounds();
        let _ = vkskin::model::lod::with_levels(&model);
    }
});
