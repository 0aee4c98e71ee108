//! The COLLADA import from text (bytes that are not UTF-8 are replaced), without touching the
//! file system: textures are looked for in a folder that does not exist.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(model) = vkskin::formats::collada::load_from_str(&text, Path::new("/nonexistent/fuzz.dae"), Path::new("/nonexistent")) {
        let _ = model.cell_bounds();
    }
});
