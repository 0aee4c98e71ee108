//! The whole MD5 load from text: tokenizer, parser, checks, bind pose, clip baking. An input with a
//! NUL byte is split there into a .md5mesh and a .md5anim, so the mesh/anim checks are reached too.
#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (mesh, anim) = text.split_once('\0').unwrap_or((&text, ""));
    let mesh_path = Path::new("/nonexistent/fuzz.md5mesh");
    let anims = if anim.is_empty() { Vec::new() } else { vec![(anim.to_string(), PathBuf::from("/nonexistent/fuzz.md5anim"))] };
    if let Ok(model) = vkskin::formats::md5::load_from_text(mesh, mesh_path, &anims) {
        let _ = model.cell_bounds();
    }
    let _ = vkskin::formats::md5::parse_anim(&text, Path::new("/nonexistent/fuzz.md5anim"));
});
