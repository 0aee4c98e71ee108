//! Hostile files (issue 12): small files that would cost minutes or gigabytes, and paths that are
//! not model files. Each is generated here at the size where the old code broke and must end in
//! one clean error (or a correct load) without reading what it should not. No wall-clock asserts:
//! what is checked is what was read and what was said.

use std::path::{Path, PathBuf};

use crate::collada_loader::{load_str, small, turning};
use crate::common::{scratch_in, text, vkskin};
use vkskin::formats::{self, collada, files, md5, FormatError, Location};
use vkskin::model::Model;

fn scratch(name: &str) -> PathBuf {
    scratch_in("hostile", name)
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let status = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success());
}

/// A glTF (JSON) with one triangle whose buffer is `uri` declaring `byte_length` bytes, repeated
/// `buffers` times.
pub(crate) fn gltf_with_buffers(uri: &str, byte_length: u64, buffers: usize) -> String {
    let buffer = format!(r#"{{"uri":"{uri}","byteLength":{byte_length}}}"#);
    let list = vec![buffer; buffers].join(",");
    format!(
        r#"{{"asset":{{"version":"2.0"}},"buffers":[{list}],
"bufferViews":[{{"buffer":0,"byteLength":36}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}}}}]}}],"nodes":[{{"mesh":0}}],"scenes":[{{"nodes":[0]}}],"scene":0}}"#
    )
}

#[test]
fn directories_are_refused_as_models_on_every_system() {
    let folder = scratch("directories");
    let directory = folder.join("dir.md5mesh");
    std::fs::create_dir_all(&directory).expect("dir");
    let error = formats::load_model(&directory, &[]).expect_err("a directory");
    assert!(error.to_string().contains("a directory"), "{error}");
    let output = vkskin().args(["inspect", "assets/figure.md5mesh", "--anim"]).arg(&directory).output().expect("vkskin runs");
    let message = text(&output);
    assert!(!output.status.success() && message.contains("a directory"), "{message}");
}

#[cfg(unix)]
#[test]
fn devices_and_fifos_are_refused_as_models_without_reading() {
    for (path, kind) in [(PathBuf::from("/dev/zero"), "a device"), (PathBuf::from("/dev/urandom"), "a device")] {
        let error = formats::load_model(&path, &[]).expect_err("not a model");
        assert!(error.to_string().contains(kind), "{error}");
    }
    let folder = scratch("not_regular");
    std::fs::create_dir_all(&folder).expect("folder");
    // Opening a FIFO blocks until a writer comes: format detection must not open it.
    let fifo = folder.join("x.glb");
    mkfifo(&fifo);
    let error = formats::load_model(&fifo, &[]).expect_err("a FIFO");
    assert!(error.to_string().contains("a FIFO"), "{error}");

    // An --anim that is a device, through the command line: one line, no hang.
    let output = vkskin().args(["inspect", "assets/figure.md5mesh", "--anim", "/dev/zero"]).output().expect("vkskin runs");
    let message = text(&output);
    assert!(!output.status.success() && message.contains("/dev/zero") && message.contains("a device"), "{message}");
    assert_eq!(message.lines().filter(|line| line.contains("error")).count(), 1, "{message}");
    // `inspect` of a FIFO ends at once with the same verdict.
    let output = vkskin().arg("inspect").arg(&fifo).output().expect("vkskin runs");
    assert!(!output.status.success() && text(&output).contains("a FIFO"), "{}", text(&output));
}

#[test]
fn gltf_buffers_read_at_most_what_they_declare_and_only_inside_the_folder() {
    let folder = scratch("buffers");
    std::fs::create_dir_all(&folder).expect("folder");
    // A buffer naming a device, an absolute path (as Unix and Windows write it), a path out of the
    // folder, a FIFO inside it.
    #[cfg(unix)]
    mkfifo(&folder.join("pipe.bin"));
    let fifo = cfg!(unix).then_some(("pipe.bin", "a FIFO"));
    let cases = [
        ("/dev/zero", "absolute path"),
        (r"C:\\Windows\\win.ini", "absolute path"),
        ("../../../../../../dev/zero", "inside the model's folder"),
        (r"..\\..\\..\\..\\..\\..\\dev\\zero", "inside the model's folder"),
    ];
    for (uri, expected) in cases.into_iter().chain(fifo) {
        let path = folder.join("model.gltf");
        std::fs::write(&path, gltf_with_buffers(uri, 36, 1)).expect("written");
        let error = formats::load_model(&path, &[]).expect_err(uri);
        assert!(error.to_string().contains(expected), "{uri}: {error}");
    }
    // A buffer file longer than declared: only the declared bytes are read, and the model loads.
    let mut bytes: Vec<u8> =
        [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]].iter().flatten().flat_map(|value| value.to_le_bytes()).collect();
    bytes.resize(1 << 20, 0xAB);
    std::fs::write(folder.join("long.bin"), &bytes).expect("written");
    let path = folder.join("long.gltf");
    std::fs::write(&path, gltf_with_buffers("long.bin", 36, 1)).expect("written");
    let model = formats::load_model(&path, &[]).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.vertices.len(), 3);
    // 100 buffers of 117 MB each in a small JSON: refused from the declarations, before any read.
    let path = folder.join("many.gltf");
    let json = gltf_with_buffers("long.bin", 117 << 20, 100);
    assert!(json.len() < 8 << 10, "a small file: {} bytes", json.len());
    std::fs::write(&path, json).expect("written");
    let error = formats::load_model(&path, &[]).expect_err("over the budget");
    assert!(error.to_string().contains(&format!("at most {}", files::MAX_EXTERNAL_BYTES)), "{error}");
}

#[test]
fn text_from_a_file_cannot_forge_a_line_or_drive_the_terminal() {
    let folder = scratch("forged");
    std::fs::create_dir_all(&folder).expect("folder");
    let path = folder.join("forged.gltf");
    // A URI holding a newline, a forged "error:" and a clear-screen escape (JSON escapes).
    std::fs::write(&path, gltf_with_buffers(r"x\nvkskin: error: forged\u001b[2J.bin", 36, 1)).expect("written");
    let output = vkskin().arg("inspect").arg(&path).output().expect("vkskin runs");
    let message = text(&output);
    assert!(!output.status.success());
    assert_eq!(message.matches("vkskin: error:").count(), 2, "the real one and the quoted one, on one line: {message}");
    assert_eq!(message.trim_end().lines().count(), 1, "{message}");
    assert!(!message.contains('\u{1b}'), "{message:?}");
}

#[test]
fn counts_times_and_outputs_from_the_command_line_get_one_clean_line() {
    let one_error = |args: &[&str], expected: &str| {
        let output = vkskin().args(args).output().expect("vkskin runs");
        let message = text(&output);
        assert!(!output.status.success(), "{args:?} must fail: {message}");
        assert!(message.contains(expected), "{args:?}: '{expected}' in {message}");
        // Ours start "vkskin: error:", clap's (a bad value) "error:": one either way.
        assert_eq!(message.matches("error:").count(), 1, "{message}");
        assert!(!message.contains("panicked") && !message.contains("memory allocation"), "{message}");
    };
    // Refused before a single instance is laid out (and before the viewer looks for a display).
    one_error(&["view", "--instances", "4294967295"], "exceed what any Vulkan device can bind");
    // Into the scratch folder: a clone whose build goes elsewhere (CARGO_TARGET_DIR) has no target/.
    let never = scratch("never.png");
    let never = never.to_str().expect("a UTF-8 scratch path");
    one_error(&["render", "--instances", "4294967295", "--out", never], "instances");
    one_error(&["render", "--time", "NaN", "--out", never], "finite number of seconds");
    one_error(&["view", "--fade", "inf"], "crossfade");
    // A write error is reported, not lost when a buffered writer drops.
    if cfg!(target_os = "linux") {
        one_error(&["render", "--size", "64x64", "--out", "/dev/full"], "/dev/full");
    }
    // The bench skips a count no device holds, row by row, with the reason.
    let out = scratch("bench_counts");
    let output = vkskin()
        .args([
            "bench",
            "--instances",
            "4294967295",
            "--strategy",
            "compute",
            "--measure",
            "1",
            "--warmup",
            "0",
            "--size",
            "32x24",
        ])
        .arg("--out-dir")
        .arg(&out)
        .output()
        .expect("vkskin runs");
    let message = text(&output);
    assert!(output.status.success(), "{message}");
    assert!(message.contains("skipped: 4294967295 instances"), "{message}");
}

#[test]
fn verdicts_follow_the_formats() {
    let folder = scratch("verdicts");
    std::fs::create_dir_all(&folder).expect("folder");
    let figure = std::fs::read_to_string("assets/figure.md5mesh").expect("bundled model");
    // A weight that overflows to infinity: refused, not a vertex at infinity.
    let huge = figure.replacen("weight 0 1 1 ( 0 -0.010463 -0.149635 )", "weight 0 1 3e38 ( 3e38 3e38 3e38 )", 1);
    assert_ne!(huge, figure, "the first weight is where the test expects it");
    let path = folder.join("huge_weight.md5mesh");
    std::fs::write(&path, huge).expect("written");
    let error = formats::load_model(&path, &[]).expect_err("a vertex at infinity");
    assert!(error.to_string().contains("expected a finite bind-pose position"), "{error}");
    // A UTF-8 byte-order mark before "MD5Version" is not part of the token.
    let path = folder.join("bom.md5mesh");
    std::fs::write(&path, format!("\u{feff}{figure}")).expect("written");
    let model = formats::load_model(&path, &[]).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.vertices.len(), 3724);
    // glTF `extras` may be any JSON value.
    let path = folder.join("extras.gltf");
    let json = gltf_with_buffers("data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA", 36, 1)
        .replacen(r#""asset":{"version":"2.0"}"#, r#""asset":{"version":"2.0","extras":"a string"},"extras":[1,"two"]"#, 1);
    std::fs::write(&path, json).expect("written");
    let model = formats::load_model(&path, &[]).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.vertices.len(), 3);
}

/// An MD5 mesh: `joints` joints in a chain (each the previous one's child), and one triangle whose
/// first vertex has `weights` weights on joint 0 (the others one each).
fn md5_bomb(joints: usize, weights: usize) -> String {
    let mut text = format!("MD5Version 10\ncommandline \"\"\n\nnumJoints {joints}\nnumMeshes 1\n\njoints {{\n");
    for joint in 0..joints {
        text += &format!("\t\"j{joint}\" {} ( 0 0 0.01 ) ( 0 0 0 )\n", joint as i64 - 1);
    }
    text += &format!("}}\n\nmesh {{\n\tshader \"\"\n\n\tnumverts 3\n\tvert 0 ( 0 0 ) 0 {weights}\n");
    text += &format!("\tvert 1 ( 0 0 ) {weights} 1\n\tvert 2 ( 0 0 ) {} 1\n", weights + 1);
    text += "\n\tnumtris 1\n\ttri 0 0 1 2\n\n";
    text += &format!("\tnumweights {}\n", weights + 2);
    for weight in 0..weights {
        text += &format!("\tweight {weight} 0 1 ( 0 0 0 )\n");
    }
    text += &format!("\tweight {weights} 0 1 ( 1 0 0 )\n\tweight {} 0 1 ( 0 1 0 )\n}}\n", weights + 1);
    text
}

#[test]
fn work_and_output_stay_in_proportion_to_the_file() {
    let folder = scratch("proportion");
    std::fs::create_dir_all(&folder).expect("folder");
    // 65,536 weights on one vertex: merged in O(n log n) (a linear search per weight took minutes).
    let path = folder.join("weights.md5mesh");
    std::fs::write(&path, md5_bomb(1, 65_536)).expect("written");
    let model = formats::load_model(&path, &[]).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.influences_of(&model.vertices[0]).len(), 1, "every weight is on joint 0: one influence");
    // A 65,536-deep chain: inspect's tree is indented up to a point, then numbered, so its output
    // grows with the joints, not with joints × depth (4.3 GB before).
    let path = folder.join("chain.md5mesh");
    let text = md5_bomb(65_536, 1);
    std::fs::write(&path, &text).expect("written");
    let model = formats::load_model(&path, &[]).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.skeleton.depth(), 65_536);
    let described = vkskin::app::inspect::describe(&model, None);
    println!("chain: {} bytes of file, {} bytes of inspect output", text.len(), described.len());
    assert!(described.len() < 4 * text.len(), "{} bytes of output for a {}-byte file", described.len(), text.len());
    assert!(described.contains("[depth 65536] j65535"));
}

#[test]
fn md5_joints_past_16_bits_are_refused_at_num_joints() {
    let error = md5::load_from_text(&md5_bomb(65_537, 1), Path::new("joints.md5mesh"), &[]).map(|_| ()).expect_err("too many");
    assert!(error.to_string().starts_with("joints.md5mesh:4: expected at most 65536 joints"), "{error}");
}

/// CRC-32 (PNG's), for patching a chunk.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// A 1×1 PNG whose header (CRC fixed up) claims `width` × `height`.
fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = Vec::new();
    image::RgbaImage::from_pixel(1, 1, image::Rgba([9, 9, 9, 255]))
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .expect("encoded");
    // Signature (8), IHDR length (4), "IHDR" (4), width, height, ..., CRC over type and data.
    bytes[16..20].copy_from_slice(&width.to_be_bytes());
    bytes[20..24].copy_from_slice(&height.to_be_bytes());
    let crc = crc32(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    bytes
}

/// An MD5 mesh of one joint and `parts` one-triangle parts, all with the shader `shader`.
fn md5_parts(parts: usize, shader: &str) -> String {
    let mut text = format!(
        "MD5Version 10\ncommandline \"\"\n\nnumJoints 1\nnumMeshes {parts}\n\njoints {{\n\t\"root\" -1 ( 0 0 0 ) ( 0 0 0 )\n}}\n"
    );
    for _ in 0..parts {
        text += &format!("\nmesh {{\n\tshader \"{shader}\"\n\tnumverts 3\n");
        text += "\tvert 0 ( 0 0 ) 0 1\n\tvert 1 ( 1 0 ) 1 1\n\tvert 2 ( 0 1 ) 2 1\n\tnumtris 1\n\ttri 0 0 1 2\n\tnumweights 3\n";
        text += "\tweight 0 0 1 ( 0 0 0 )\n\tweight 1 0 1 ( 1 0 0 )\n\tweight 2 0 1 ( 0 1 0 )\n}\n";
    }
    text
}

#[test]
fn textures_are_read_once_per_file_and_a_huge_one_is_a_warning() {
    let folder = scratch("textures");
    std::fs::create_dir_all(&folder).expect("folder");
    // Eight parts on one texture: one read, the bytes shared, not eight decoded copies.
    image::RgbaImage::from_pixel(4, 4, image::Rgba([10, 20, 30, 255])).save(folder.join("skin.png")).expect("written");
    let path = folder.join("eight.md5mesh");
    std::fs::write(&path, md5_parts(8, "skin")).expect("written");
    let model = formats::load_model(&path, &[]).unwrap_or_else(|error| panic!("{error}"));
    let textures: Vec<_> = model.materials.iter().map(|material| material.texture.as_ref().expect("textured")).collect();
    assert_eq!(textures.len(), 8);
    assert!(textures.iter().all(|texture| std::sync::Arc::ptr_eq(&texture.encoded, &textures[0].encoded)));
    // A 22000 × 22000 PNG in a few hundred bytes: refused from its header (no decode, no
    // reservation), with a warning naming the limit, and the default colour.
    std::fs::write(folder.join("huge.png"), png_claiming(22_000, 22_000)).expect("written");
    let path = folder.join("huge.md5mesh");
    std::fs::write(&path, md5_parts(2, "huge")).expect("written");
    let model = formats::load_model(&path, &[]).unwrap_or_else(|error| panic!("{error}"));
    assert!(model.materials.iter().all(|material| material.texture.is_none()));
    let warnings = model.stats.warnings.join("\n");
    assert!(warnings.contains("huge.png") && warnings.contains("8192"), "{warnings}");
}

/// A skinned glTF whose `joints` sibling joints hang under a chain of `depth` plain nodes.
fn joints_under_a_chain(depth: usize, joints: usize) -> String {
    let nodes: Vec<String> = (0..depth - 1)
        .map(|node| format!(r#"{{"children":[{}]}}"#, node + 1))
        .chain([format!(r#"{{"children":[{}]}}"#, (depth..depth + joints).map(|j| j.to_string()).collect::<Vec<_>>().join(","))])
        .chain((0..joints).map(|joint| format!(r#"{{"name":"j{joint}"}}"#)))
        .chain([r#"{"mesh":0,"skin":0}"#.to_string()])
        .collect();
    // Positions (36 bytes), JOINTS_0 as u8 VEC4 (12), WEIGHTS_0 (48): all on joint 0.
    let mut bytes: Vec<u8> = [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    bytes.extend([0u8; 12]);
    bytes.extend([1.0f32, 0.0, 0.0, 0.0].repeat(3).iter().flat_map(|v| v.to_le_bytes()));
    let data = format!("data:application/octet-stream;base64,{}", base64(&bytes));
    let skin_joints: Vec<String> = (depth..depth + joints).map(|j| j.to_string()).collect();
    format!(
        r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"uri":"{data}","byteLength":{}}}],
"bufferViews":[{{"buffer":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":12}},{{"buffer":0,"byteOffset":48,"byteLength":48}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},
{{"bufferView":1,"componentType":5121,"count":3,"type":"VEC4"}},{{"bufferView":2,"componentType":5126,"count":3,"type":"VEC4"}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2}}}}]}}],
"skins":[{{"joints":[{}]}}],"nodes":[{}],"scenes":[{{"nodes":[0,{}]}}],"scene":0}}"#,
        bytes.len(),
        skin_joints.join(","),
        nodes.join(","),
        depth + joints
    )
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::new();
    for chunk in bytes.chunks(3) {
        let value = chunk.iter().enumerate().fold(0u32, |value, (index, &byte)| value | u32::from(byte) << (16 - 8 * index));
        for index in 0..4 {
            text.push(if index <= chunk.len() { ALPHABET[(value >> (18 - 6 * index)) as usize & 63] as char } else { '=' });
        }
    }
    text
}

#[test]
fn walks_from_joints_to_their_parents_have_a_budget() {
    let folder = scratch("climb");
    std::fs::create_dir_all(&folder).expect("folder");
    // A few nodes between joints, as real rigs have: loads.
    let path = folder.join("shallow.gltf");
    std::fs::write(&path, joints_under_a_chain(8, 64)).expect("written");
    let model = formats::load_model(&path, &[]).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.skeleton.len(), 64);
    // 4,096 joints under 4,097 nodes: 16.8 million steps up, past the budget (at 32,768 × 32,768
    // the walks took 16.7 s): refused at once with the reason.
    let path = folder.join("deep.gltf");
    std::fs::write(&path, joints_under_a_chain(4097, 4096)).expect("written");
    let error = formats::load_model(&path, &[]).expect_err("past the budget");
    assert!(error.to_string().contains("walking up from the joints took more than 16777216 steps"), "{error}");
}

// COLLADA bombs (issue 26): the classes a 100,000-mutant campaign on real .dae files found, each
// at a size that keeps the test fast. Each must load in proportion to the file, or end in one
// line that names the limit and the place.

fn collada_text(text: &str, name: &str) -> Result<Model, FormatError> {
    collada::load_from_str(text, Path::new(name), Path::new("/nonexistent"))
}

fn collada_refused(text: &str, name: &str) -> FormatError {
    let error = collada_text(text, name).map(|_| ()).expect_err(name);
    assert!(matches!(error.location, Location::Line(line) if line > 0), "{name}: {error}");
    assert!(error.to_string().starts_with(&format!("{name}:")), "{error}");
    println!("{error}");
    error
}

#[test]
fn collada_input_offsets_are_checked() {
    let huge = "18446744073709551615"; // 2^64 - 1: `offset + 1` overflowed, then an index panicked
    let joint = r##"<input semantic="JOINT" source="#j" offset="0"/>"##;
    let vertex = r##"<input semantic="VERTEX" source="#v" offset="0"/>"##;
    let polylist = small()
        .replace(r#"<triangles count="1">"#, r#"<polylist count="1">"#)
        .replace("<p>0 1 2</p></triangles>", "<vcount>3</vcount><p>0 1 2</p></polylist>");
    let cases = [
        ("weights.dae", small().replace(joint, &joint.replace(r#"offset="0""#, &format!(r#"offset="{huge}""#)))),
        ("triangles.dae", small().replace(vertex, &vertex.replace(r#"offset="0""#, &format!(r#"offset="{huge}""#)))),
        ("polylist.dae", polylist.replace(vertex, &vertex.replace(r#"offset="0""#, &format!(r#"offset="{huge}""#)))),
        (
            "texcoord.dae",
            small().replace(vertex, &format!(r##"{vertex}<input semantic="TEXCOORD" source="#p" offset="{huge}"/>"##)),
        ),
    ];
    for (name, text) in cases {
        let error = collada_refused(&text, name);
        assert!(error.message.contains("<input> (column"), "{error}");
        assert!(error.message.contains(&format!("expected an offset of at most 65536, found {huge}")), "{error}");
    }
    let past = small().replace(joint, &joint.replace(r#"offset="0""#, r#"offset="18446744073709551616""#));
    let error = collada_refused(&past, "past.dae");
    assert!(error.message.contains("expected offset to be a count"), "{error}");
}

#[test]
fn collada_repeated_instances_draw_once_and_drawing_again_has_a_limit() {
    // One node repeating its instance 20,000 times (1.6 MB): past 10 s and a failed multi-GiB
    // allocation before; the same thing in the same place is drawn once, with one warning.
    let controller = r##"<instance_controller url="#c"><skeleton>#root</skeleton></instance_controller>"##;
    for (name, instance) in [("controllers.dae", controller), ("geometries.dae", r##"<instance_geometry url="#g"/>"##)] {
        let model =
            collada_text(&small().replace(controller, &instance.repeat(20_000)), name).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!((model.vertices.len(), model.meshes.len()), (3, 1), "{name}");
        assert_eq!(model.stats.warnings.len(), 1, "{name}: {:?}", model.stats.warnings);
        let warning = &model.stats.warnings[0];
        assert!(
            warning.contains("repeated where it draws the same thing again") && warning.contains("(19998 more like it)"),
            "{warning}"
        );
    }
    // A geometry of 21,000 vertices drawn from many nodes (each place differs): what the second
    // and later instances add is held to 2^18 vertices plus one a 16 bytes of the file.
    let positions = "0 0 0 ".repeat(21_000);
    let corners: Vec<String> = (0..21_000).map(|index| index.to_string()).collect();
    let big = small()
        .replace(
            r#"<float_array id="pa" count="9">0 0 0 1 0 0 0 1 0</float_array>"#,
            &format!(r#"<float_array id="pa" count="63000">{positions}</float_array>"#),
        )
        .replace(r##"<accessor source="#pa" count="3" stride="3"/>"##, r##"<accessor source="#pa" count="21000" stride="3"/>"##)
        .replace(r#"<triangles count="1">"#, r#"<triangles count="7000">"#)
        .replace("<p>0 1 2</p>", &format!("<p>{}</p>", corners.join(" ")))
        .replace(controller, "");
    let nodes = |count: usize| {
        (0..count)
            .map(|index| {
                format!(r##"<node id="n{index}"><translate>{index} 0 0</translate><instance_geometry url="#g"/></node>"##)
            })
            .collect::<String>()
    };
    let text = big.replace(r##"<node id="mesh">"##, &format!(r##"{}<node id="mesh">"##, nodes(12)));
    let model = collada_text(&text, "twelve.dae").unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.vertices.len(), 12 * 21_000);
    let text = big.replace(r##"<node id="mesh">"##, &format!(r##"{}<node id="mesh">"##, nodes(16)));
    let error = collada_refused(&text, "sixteen.dae");
    let limit = (1 << 18) + text.len() / 16;
    assert!(
        error.message.contains("<instance_geometry> (column")
            && error.message.contains(&format!(
                "at most {limit} vertices and {limit} triangles in all (262144 plus one a 16 bytes of the file)"
            )),
        "{error}"
    );
}

#[test]
fn collada_a_repeated_channel_is_read_once() {
    // 10,000 copies of one <channel> on a 300-key sampler (4.6 s and 480 MB before).
    let times: Vec<f32> = (0..300).map(|key| key as f32 / 30.0).collect();
    let angles: Vec<f32> = (0..300).map(|key| (key as f32 * 0.3).sin() * 60.0).collect();
    let once = turning(&times, &angles, &vec!["LINEAR"; 300], None);
    let channel = r##"<channel source="#key_s" target="root/rotationZ.ANGLE"/>"##;
    let many = once.replace(channel, &channel.repeat(10_000));
    let (once, many) = (load_str(&once, "once.dae"), load_str(&many, "many.dae"));
    assert!(once.stats.warnings.is_empty(), "{:?}", once.stats.warnings);
    assert_eq!(many.stats.warnings.len(), 1, "{:?}", many.stats.warnings);
    assert!(many.stats.warnings[0].contains("the later one is played (9998 more like it)"), "{}", many.stats.warnings[0]);
    assert!(many.animations[0].channels == once.animations[0].channels, "the same keys");
}

#[test]
fn collada_clips_share_their_animations_and_copies_have_a_limit() {
    // 1,000 clips over one animation (4.6 s and 760 MB on a 65-joint file before): one animation,
    // 1,000 spans of it.
    let clip = |index: usize| {
        format!(
            r##"<animation_clip id="c{index}" name="clip{index}" start="{}" end="1"><instance_animation url="#spin"/></animation_clip>"##,
            index as f32 / 1000.0
        )
    };
    let clips: String = (0..1000).map(clip).collect();
    let one = r##"<animation_clip id="c1" name="spin" start="0" end="1"><instance_animation url="#spin"/></animation_clip>"##;
    let text = crate::collada_loader::small_with_element_channels().replace(one, &clips);
    let model = load_str(&text, "clips.dae");
    assert!(model.stats.warnings.is_empty(), "{:?}", model.stats.warnings);
    assert_eq!((model.animations.len(), model.clips.len()), (1, 1000));
    assert_eq!((model.clips[999].name.as_str(), model.clips[999].start), ("clip999", 0.999));
    assert!(model.clips.iter().all(|clip| clip.animation == 0));

    // Clips over overlapping sets (one long animation, and each clip another of its own) copy
    // what they share: at most 2^21 keys plus 4 times the keys the file's animations make.
    let keys = 50_000;
    let long: Vec<String> = (0..keys).map(|key| format!("{}", key as f32 * 0.01)).collect();
    let source = |id: &str, values: &str, count: usize| {
        format!(
            r##"<source id="{id}"><float_array id="{id}a" count="{count}">{values}</float_array><technique_common><accessor source="#{id}a" count="{count}" stride="1"/></technique_common></source>"##
        )
    };
    let mut animations = format!(
        r##"<library_animations><animation id="long">{}<sampler id="ls"><input semantic="INPUT" source="#lt"/><input semantic="OUTPUT" source="#lt"/></sampler><channel source="#ls" target="root/transform(0)(3)"/></animation>
        <animation id="shared">{}<sampler id="ss"><input semantic="INPUT" source="#st"/><input semantic="OUTPUT" source="#st"/></sampler></animation>"##,
        source("lt", &long.join(" "), keys),
        source("st", "0 1", 2)
    );
    let mut clips = String::new();
    for index in 0..60 {
        animations +=
            &format!(r##"<animation id="own{index}"><channel source="#ss" target="tip/transform(0)(3)"/></animation>"##);
        clips += &format!(
            r##"<animation_clip id="o{index}"><instance_animation url="#long"/><instance_animation url="#own{index}"/></animation_clip>"##
        );
    }
    let text = crate::collada_loader::two_joints_with_matrix_keys(true).replace(
        "<library_visual_scenes>",
        &format!(
            "{animations}</library_animations><library_animation_clips>{clips}</library_animation_clips><library_visual_scenes>"
        ),
    );
    let error = collada_refused(&text, "overlapping.dae");
    assert!(
        error.message.contains("<animation_clip> (column") && error.message.contains("keys in all (2097152 plus 4 times the"),
        "{error}"
    );
}
