//! The Milkshape loader from bytes: parse, then build the model (skeleton, keys, baking).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("/nonexistent/fuzz.ms3d");
    if let Ok(file) = vkskin::formats::ms3d::parse(data, path) {
        let _ = vkskin::formats::ms3d::to_model(&file, path);
    }
});
