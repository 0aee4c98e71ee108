//! Replays every input the fuzzers ever crashed on (tests/corpus/FORMAT/), plus hand-made nasty
//! ones: each must load or fail with an error naming the file, and never panic; a model that loads
//! gets its culling cells and levels of detail built too, as the fuzz targets do.

use std::path::{Path, PathBuf};

use vkskin::formats::{collada, gltf, md5, ms3d};

fn corpus(format: &str) -> Vec<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(format);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .map(|entries| entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).filter(|path| path.is_file()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn check(path: &Path, result: Result<vkskin::model::Model, vkskin::formats::FormatError>) {
    match result {
        Ok(model) => {
            let _ = model.cell_bounds();
            let _ = vkskin::model::lod::with_levels(&model);
        }
        Err(error) => {
            let message = error.to_string();
            assert!(message.contains("fuzz"), "{}: the error names the file: {message}", path.display());
        }
    }
}

#[test]
fn md5_crash_inputs_fail_cleanly() {
    for path in corpus("md5") {
        let data = std::fs::read(&path).expect("corpus file");
        let text = String::from_utf8_lossy(&data);
        let (mesh, anim) = text.split_once('\0').unwrap_or((&text, ""));
        let anims = if anim.is_empty() { Vec::new() } else { vec![(anim.to_string(), PathBuf::from("fuzz.md5anim"))] };
        check(&path, md5::load_from_text(mesh, Path::new("fuzz.md5mesh"), &anims));
    }
}

#[test]
fn ms3d_crash_inputs_fail_cleanly() {
    for path in corpus("ms3d") {
        let data = std::fs::read(&path).expect("corpus file");
        match ms3d::parse(&data, Path::new("fuzz.ms3d")) {
            Ok(file) => check(&path, ms3d::to_model(&file, Path::new("fuzz.ms3d"))),
            Err(error) => check(&path, Err(error)),
        }
    }
}

#[test]
fn collada_crash_inputs_fail_cleanly() {
    let corpus = corpus("collada");
    assert!(!corpus.is_empty(), "the hand-made COLLADA inputs are there");
    for path in corpus {
        let data = std::fs::read(&path).expect("corpus file");
        let text = String::from_utf8_lossy(&data);
        check(&path, collada::load_from_str(&text, Path::new("fuzz.dae"), Path::new("/nonexistent")));
    }
}

#[test]
fn gltf_crash_inputs_fail_cleanly() {
    for path in corpus("gltf") {
        let data = std::fs::read(&path).expect("corpus file");
        check(&path, gltf::load_from_slice(&data, Path::new("fuzz.glb"), None));
    }
}
