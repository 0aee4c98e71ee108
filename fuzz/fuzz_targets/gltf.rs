//! The glTF import from bytes (.gltf JSON or .glb), without touching the file system.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = vkskin::formats::gltf::load_from_slice(data, Path::new("/nonexistent/fuzz.glb"), None);
});
