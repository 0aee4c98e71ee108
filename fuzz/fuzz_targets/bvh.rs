//! The BVH reader from text (bytes that are not UTF-8 are replaced), then its model's culling cells.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(parsed) = vkskin::formats::bvh::parse(&text, Path::new("fuzz.bvh")) {
        let _ = vkskin::formats::bvh::to_model(&parsed, Path::new("fuzz.bvh")).cell_bounds();
    }
});
