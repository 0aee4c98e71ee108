//! The layers, enforced by reading the sources (outside `#[cfg(test)]` items, comments and
//! strings): each folder of `src/` may name only the crate's modules below it.
//!
//! ```text
//! gpu/      Vulkan through ash; nothing of vkskin's own
//! anim/     skeletons, clips, curves, playback: plain Rust on glam; nothing of vkskin's own
//! model/    the one Model type and its levels of detail: anim
//! formats/  loaders into Model: anim, model
//! render/   the passes: gpu, anim, model
//! ```
//! Above them, `app/` (the viewer, bench, inspect, ...), `generate/` and the binary may use
//! everything.

use std::path::Path;

use crate::no_panics::{code_only, rust_files};

/// The crate's top-level modules a layer may name (besides its own).
const ALLOWED: [(&str, &[&str]); 5] = [
    ("src/gpu", &[]),
    ("src/anim", &[]),
    ("src/model", &["anim"]),
    ("src/formats", &["anim", "model"]),
    ("src/render", &["gpu", "anim", "model"]),
];

/// Every `crate::name` a source names, with its line number.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            // `super::` and `self::` paths stay inside the module; `$crate` is a macro's.
            if !rest[..at].ends_with('$') && !name.is_empty() {
                found.push((number + 1, name));
            }
            rest = after;
        }
    }
    found
}

#[test]
fn each_layer_names_only_the_layers_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offences = Vec::new();
    let mut checked = 0;
    for (layer, allowed) in ALLOWED {
        let path = root.join(layer);
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path);
        }
        let own = Path::new(layer).file_stem().and_then(|stem| stem.to_str()).unwrap_or(layer);
        for file in files {
            let source = std::fs::read_to_string(&file).expect("readable source");
            checked += 1;
            for (line, name) in crate_paths(&code_only(&source)) {
                if name != own && !allowed.contains(&name.as_str()) {
                    offences.push(format!("{}:{line}: {layer} names crate::{name}", file.display()));
                }
            }
        }
    }
    assert!(checked >= 30, "found the sources ({checked} files)");
    assert!(offences.is_empty(), "imports against the layering:\n{}", offences.join("\n"));
}

#[test]
fn the_scan_finds_crate_paths_in_uses_and_expressions() {
    let code = "use crate::render::Renderer;\nlet x = crate::anim::palette(a, b);\nmacro_rules! m { () => { $crate::gpu::x } }";
    let names: Vec<(usize, String)> = crate_paths(code);
    assert_eq!(names, vec![(1, "render".to_string()), (2, "anim".to_string())]);
}
