//! Files written on Windows read the same way on every system (issue 40): CRLF line ends, `\`
//! between folders in the paths a file names, drive letters, and names outside ASCII, in the
//! folder and in the file names. Each is checked here on the system the tests run on, against the
//! same file written the other way.

use std::path::{Path, PathBuf};

use crate::common::{scratch_in, shared_models};
use crate::hostile::gltf_with_buffers;
use vkskin::formats::load_model;
use vkskin::model::Model;

/// A fresh folder with a name outside ASCII.
fn scratch(test: &str) -> PathBuf {
    let folder = scratch_in("portable", test).join("Modèles ü 模型");
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("scratch folder");
    folder
}

/// `text` with every line ended by CR LF.
fn crlf(text: &str) -> String {
    text.lines().map(|line| format!("{line}\r\n")).collect()
}

/// The same model, whichever way it was written: vertices, triangles, joints, keys, clips.
fn assert_same(a: &Model, b: &Model) {
    assert_eq!(a.vertices, b.vertices);
    assert_eq!(a.indices, b.indices);
    let names = |model: &Model| model.skeleton.joints.iter().map(|joint| joint.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(a), names(b));
    // Everything of the keys but where they were read from.
    let keys = |model: &Model| {
        let mut animations = model.animations.clone();
        animations.iter_mut().for_each(|animation| animation.source = None);
        animations
    };
    assert_eq!(keys(a), keys(b));
    assert_eq!(a.clips, b.clips);
    assert_eq!(a.bounds, b.bounds);
}

#[test]
fn md5_files_with_crlf_line_ends_in_a_folder_named_outside_ascii_load_the_same() {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let folder = scratch("md5");
    let mut animations = (Vec::new(), Vec::new());
    for name in ["figure.md5mesh", "figure_walk.md5anim", "figure_wave.md5anim"] {
        let text = std::fs::read_to_string(assets.join(name)).expect("bundled asset");
        assert!(!text.contains('\r'));
        let copy = folder.join(name);
        std::fs::write(&copy, crlf(&text)).expect("written");
        if name.ends_with(".md5anim") {
            animations.0.push(assets.join(name));
            animations.1.push(copy);
        }
    }
    std::fs::copy(assets.join("figure_body.png"), folder.join("figure_body.png")).expect("texture");
    let original = load_model(&assets.join("figure.md5mesh"), &animations.0).unwrap_or_else(|error| panic!("{error}"));
    let copy = load_model(&folder.join("figure.md5mesh"), &animations.1).unwrap_or_else(|error| panic!("{error}"));
    assert_same(&original, &copy);
    assert!(copy.materials[0].texture.is_some(), "the texture beside the mesh is found");
    assert_eq!(copy.clips.len(), 2);
}

#[test]
fn gltf_buffers_named_with_backslashes_and_outside_ascii_are_found_on_every_system() {
    let folder = scratch("gltf");
    let data = folder.join("données").join("sous dossier");
    std::fs::create_dir_all(&data).expect("folder");
    let bytes: Vec<u8> =
        [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]].iter().flatten().flat_map(|value| value.to_le_bytes()).collect();
    std::fs::write(data.join("треугольник.bin"), &bytes).expect("written");
    let written = [
        ("forward.gltf", "données/sous dossier/треугольник.bin".to_string()),
        // As Windows exporters write it (a JSON `\\` is one backslash).
        ("backslash.gltf", r"données\\sous dossier\\треугольник.bin".to_string()),
        (
            "escaped.gltf",
            "donn%C3%A9es%5Csous%20dossier/%D1%82%D1%80%D0%B5%D1%83%D0%B3%D0%BE%D0%BB%D1%8C%D0%BD%D0%B8%D0%BA.bin".to_string(),
        ),
        ("dotted.gltf", r".\\données\\.\\sous dossier\\треугольник.bin".to_string()),
    ];
    let mut models = Vec::new();
    for (name, uri) in written {
        let path = folder.join(name);
        std::fs::write(&path, crlf(&gltf_with_buffers(&uri, 36, 1))).expect("written");
        let model = load_model(&path, &[]).unwrap_or_else(|error| panic!("{name} ({uri}): {error}"));
        assert_eq!(model.vertices.len(), 3, "{name}");
        models.push(model);
    }
    for model in &models[1..] {
        assert_same(&models[0], model);
    }
    // A drive letter is an absolute path on every system, and is refused as one.
    let path = folder.join("drive.gltf");
    std::fs::write(&path, gltf_with_buffers(r"D:\\art\\треугольник.bin", 36, 1)).expect("written");
    let error = load_model(&path, &[]).expect_err("absolute");
    assert!(error.to_string().contains("absolute path"), "{error}");
}

#[test]
fn a_milkshape_ranges_file_with_crlf_line_ends_cuts_the_same_clips() {
    let Some(ninja) = shared_models("ms3d/ninja") else { return };
    let folder = scratch("ms3d");
    for entry in std::fs::read_dir(&ninja).expect("the ninja's folder") {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, folder.join(path.file_name().expect("a name"))).expect("copied");
    }
    let ranges = folder.join("ninja animation ranges.txt");
    let text = std::fs::read_to_string(&ranges).expect("ranges");
    assert!(!text.contains('\r'), "the shared copy has LF line ends");
    std::fs::write(&ranges, crlf(&text)).expect("written");
    let original = load_model(&ninja.join("ninja.ms3d"), &[]).unwrap_or_else(|error| panic!("{error}"));
    let copy = load_model(&folder.join("ninja.ms3d"), &[]).unwrap_or_else(|error| panic!("{error}"));
    assert!(original.clips.len() > 10, "the ranges cut clips: {}", original.clips.len());
    assert_same(&original, &copy);
}
