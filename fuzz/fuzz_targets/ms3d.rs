//! The Milkshape loader from bytes: parse, build the model (skeleton, keys), then its levels of
//! detail (meshoptimizer on whatever the loader accepted).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("/nonexistent/fuzz.ms3d");
    if let Ok(file) = vkskin::formats::ms3d::parse(data, path) {
        if let Ok(model) = vkskin::formats::ms3d::to_model(&file, path) {
            let _ = model.cell_bounds();
            let _ = vkskin::model::lod::with_levels(&model);
        }
    }
});
