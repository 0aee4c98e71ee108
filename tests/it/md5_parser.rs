//! The MD5 parser and loader: the bundled figure round-trips and meets its brief, and small files
//! broken on purpose each give an error that names the file, the line and what was expected.
//!
//! To regenerate the committed assets after changing src/generate/:
//! `cargo test --test md5_parser -- --ignored regenerate_assets`.

use std::path::{Path, PathBuf};

use glam::{Mat4, Quat, Vec3};
use vkskin::anim::{palette, skin_vertex};
use vkskin::formats::md5;
use vkskin::generate;
use vkskin::model::Model;

fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
}

/// A fresh folder for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("md5_parser").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch folder can be created");
    dir
}

fn load_figure() -> Model {
    let anims = [assets().join("figure_walk.md5anim"), assets().join("figure_wave.md5anim")];
    vkskin::formats::load_model(&assets().join("figure.md5mesh"), &anims).expect("the bundled figure loads")
}

/// MD5 is Z-up; vkskin is Y-up: (x, y, z) -> (x, z, -y), a -90° turn about X.
fn y_up(point: Vec3) -> Vec3 {
    Vec3::new(point.x, point.z, -point.y)
}

fn y_up_rotation() -> Quat {
    Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2)
}

/// The format's rule, written out again here rather than borrowed from the loader.
fn implied_quaternion(xyz: Vec3) -> Quat {
    let w = -(1.0 - xyz.x * xyz.x - xyz.y * xyz.y - xyz.z * xyz.z).max(0.0).sqrt();
    Quat::from_xyzw(xyz.x, xyz.y, xyz.z, w)
}

// ---------------------------------------------------------------------------------------------
// The bundled figure
// ---------------------------------------------------------------------------------------------

#[test]
fn generated_documents_round_trip() {
    let figure = generate::figure();
    let mesh_text = md5::write_mesh(&figure.mesh);
    let anim_text = md5::write_anim(&figure.anim);
    assert_eq!(md5::parse_mesh(&mesh_text, Path::new("figure.md5mesh")).expect("written mesh parses"), figure.mesh);
    assert_eq!(md5::parse_anim(&anim_text, Path::new("figure_walk.md5anim")).expect("written anim parses"), figure.anim);
    let wave_text = md5::write_anim(&figure.wave);
    assert_eq!(md5::parse_anim(&wave_text, Path::new("figure_wave.md5anim")).expect("written anim parses"), figure.wave);
    assert!(anim_text.len() < 1_500_000, "the animation stays small: {} bytes", anim_text.len());
}

#[test]
fn committed_assets_are_what_the_generator_writes() {
    let figure = generate::figure();
    let read = |name: &str| {
        std::fs::read_to_string(assets().join(name)).unwrap_or_else(|error| panic!("assets/{name} is readable: {error}"))
    };
    // Compared as whole strings, but reported by first differing line to keep a failure readable.
    for (name, expected) in [
        ("figure.md5mesh", md5::write_mesh(&figure.mesh)),
        ("figure_walk.md5anim", md5::write_anim(&figure.anim)),
        ("figure_wave.md5anim", md5::write_anim(&figure.wave)),
    ] {
        let committed = read(name);
        if committed != expected {
            let line = committed.lines().zip(expected.lines()).position(|(a, b)| a != b).map_or(0, |index| index + 1);
            panic!(
                "assets/{name} differs from the generator (first at line {line}); regenerate with --ignored regenerate_assets"
            );
        }
    }
    let texture = image::open(assets().join("figure_body.png")).expect("the body texture decodes").to_rgba8();
    assert!(texture == figure.texture, "assets/figure_body.png differs from the generator's pixels");
}

#[test]
#[ignore = "writes assets/; run it after changing src/generate/"]
fn regenerate_assets() {
    let written = generate::write_assets(&assets()).expect("the assets can be written");
    assert_eq!(written.len(), 4);
}

#[test]
fn bundled_figure_meets_its_brief() {
    let model = load_figure();
    assert_eq!(model.name, "figure");
    assert!(model.skeleton.len() >= 20, "{} joints", model.skeleton.len());
    assert!(model.skeleton.depth() >= 4, "depth {}", model.skeleton.depth());
    assert!(model.vertices.len() >= 2000, "{} vertices", model.vertices.len());
    // A few vertices carry 5 or 6 weights on purpose: the skin pass walks every one of them.
    assert!((5..=6).contains(&model.stats.max_influences), "max influences {}", model.stats.max_influences);
    let over_four = model.vertices.iter().filter(|vertex| vertex.influence_count > 4).count();
    assert!(over_four > 0, "some vertices carry more than 4 weights");
    assert!(model.stats.warnings.is_empty(), "{:?}", model.stats.warnings);

    assert_eq!(model.meshes.len(), 2);
    let body = &model.materials[model.meshes[0].material];
    let texture = body.texture.as_ref().expect("the body's texture is found next to the mesh");
    assert_eq!((texture.width, texture.height, texture.decode().expect("decodes").len()), (256, 256, 256 * 256 * 4));
    let head = &model.materials[model.meshes[1].material];
    assert!(head.texture.is_none());
    assert_eq!(head.base_color.to_array(), [0.8, 0.8, 0.8, 1.0]);

    for vertex in &model.vertices {
        assert!((vertex.normal.length() - 1.0).abs() < 1e-4, "normal {}", vertex.normal);
        let influences = model.influences_of(vertex);
        assert!(!influences.is_empty());
        let sum: f32 = influences.iter().map(|influence| influence.weight).sum();
        assert!((sum - 1.0).abs() < 1e-5, "weights {influences:?}");
        assert!(influences.windows(2).all(|pair| pair[0].weight >= pair[1].weight), "heaviest first: {influences:?}");
        assert!((vertex.tangent.truncate().length() - 1.0).abs() < 1e-4 && vertex.tangent.w.abs() == 1.0);
    }

    let clip = &model.clips[0];
    assert_eq!(clip.name, "walk");
    assert_eq!(model.clips.len(), 2);
    assert_eq!(model.clips[1].name, "wave");
    let walk = &model.animations[0];
    assert_eq!(walk.frame_rate, Some(24.0));
    let frames = walk.channels[0].times.count();
    assert_eq!(frames, 48);
    assert!(walk.channels.iter().all(|channel| channel.times.is_uniform() && channel.wraps), "MD5 frames are uniform and loop");
    assert!(clip.duration >= 1.0);
    let frame = |frame: usize| model.joint_matrices(0, frame as f32 / 24.0);
    let root = |index: usize| frame(index)[0].w_axis.truncate();
    assert!(root(0).distance(root(12)) > 0.005, "the root moves: {} vs {}", root(0), root(12));
    let thigh = model.skeleton.joints.iter().position(|joint| joint.name == "thigh_left").expect("a left thigh");
    let turn = |index: usize| Quat::from_mat4(&frame(index)[thigh]);
    let swing = (0..frames).map(|index| turn(0).angle_between(turn(index))).fold(0.0f32, f32::max);
    assert!(swing > 20f32.to_radians(), "the thigh swings {}°", swing.to_degrees());
}

#[test]
fn bundled_figure_stands_up_faces_the_camera_and_winds_outward() {
    let model = load_figure();
    let bounds = model.bind_bounds();
    assert!(bounds.min.y.abs() < 0.01, "stands on y = 0: {:?}", bounds);
    assert!((bounds.max.y - 1.8).abs() < 0.02, "about 1.8 tall: {:?}", bounds);
    // MD5 -Y (the figure's front) becomes +Z: the nose reaches further forward than the back of
    // the head reaches back.
    let head = &model.meshes[1];
    let head_depths: Vec<f32> = model.indices[head.first_index as usize..(head.first_index + head.index_count) as usize]
        .iter()
        .map(|&index| model.vertices[index as usize].position.z)
        .collect();
    let front = head_depths.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let back = head_depths.iter().copied().fold(f32::INFINITY, f32::min);
    assert!(front > 0.1 && front > -back + 0.01, "head from z {back} to {front}");
    // Closed surfaces wound counter-clockwise seen from outside enclose a positive volume.
    for mesh in &model.meshes {
        let indices = &model.indices[mesh.first_index as usize..(mesh.first_index + mesh.index_count) as usize];
        let volume: f32 = indices
            .chunks_exact(3)
            .map(|triangle| {
                let [a, b, c] = [0, 1, 2].map(|corner| model.vertices[triangle[corner] as usize].position);
                a.dot(b.cross(c)) / 6.0
            })
            .sum();
        assert!(volume > 0.0, "{}: volume {volume}", mesh.name);
    }
}

#[test]
fn bundled_figure_bind_pose_is_the_weighted_sum() {
    let model = load_figure();
    let text = std::fs::read_to_string(assets().join("figure.md5mesh")).expect("the mesh is readable");
    let document = md5::parse_mesh(&text, Path::new("figure.md5mesh")).expect("the mesh parses");
    let joints: Vec<(Vec3, Quat)> = document
        .joints
        .iter()
        .map(|joint| (y_up(joint.position), (y_up_rotation() * implied_quaternion(joint.orientation)).normalize()))
        .collect();
    let expected: Vec<Vec3> = document
        .meshes
        .iter()
        .flat_map(|part| {
            let joints = &joints;
            part.verts.iter().map(move |vert| {
                let start = vert.start_weight as usize;
                part.weights[start..start + vert.weight_count as usize]
                    .iter()
                    .map(|weight| {
                        let (position, orientation) = joints[weight.joint as usize];
                        weight.bias * (position + orientation * weight.position)
                    })
                    .sum()
            })
        })
        .collect();
    assert_eq!(expected.len(), model.vertices.len());
    for (index, (expected, vertex)) in expected.iter().zip(&model.vertices).enumerate() {
        assert!(expected.distance(vertex.position) < 1e-5, "vertex {index}: {expected} vs {}", vertex.position);
    }
    // The skeleton's inverse bind matrices undo the same converted joints.
    for (joint, (position, orientation)) in model.skeleton.joints.iter().zip(&joints) {
        let bind = Mat4::from_rotation_translation(*orientation, *position);
        assert!((joint.inverse_bind * bind).abs_diff_eq(Mat4::IDENTITY, 1e-5), "{}", joint.name);
    }
}

#[test]
fn bundled_figure_bounds_hold_the_skinned_mesh() {
    let model = load_figure();
    let mut matrices = vec![Mat4::IDENTITY; model.skeleton.len()];
    // The culling cells are computed from the keys, not the file's per-frame boxes: they must hold
    // every vertex at any time, between frames too (a thousand times a clip, frames included).
    for (index, animation) in model.animations.iter().enumerate() {
        let cells = &model.bounds.animations[index];
        for step in 0..1000 {
            let time = animation.duration * step as f32 / 1000.0;
            palette(&model.skeleton, &model.joint_matrices(index, time), &mut matrices);
            let bounds = cells.at(time);
            for vertex in &model.vertices {
                let position =
                    skin_vertex(&matrices, vertex.position, vertex.normal, Vec3::X, model.influences_of(vertex)).position;
                assert!(
                    position.cmpge(bounds.min - 1e-4).all() && position.cmple(bounds.max + 1e-4).all(),
                    "{} at {time} s: {position} outside {bounds:?}",
                    animation.name
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Small files, valid and broken
// ---------------------------------------------------------------------------------------------

const SMALL_MESH: &str = r#"MD5Version 10
commandline "small"

numJoints 2
numMeshes 1

joints {
	"root"	-1 ( 0 0 0 ) ( 0 0 0 )
	"child"	0 ( 0 0 1 ) ( 0 0 0.5 )		// root
}

mesh {
	shader ""

	numverts 3
	vert 0 ( 0 0 ) 0 1
	vert 1 ( 1 0 ) 1 1
	vert 2 ( 0 1 ) 2 2

	numtris 1
	tri 0 0 1 2

	numweights 4
	weight 0 0 1 ( 0 0 0 )
	weight 1 0 1 ( 1 0 0 )
	weight 2 0 0.5 ( 0 1 0 )
	weight 3 1 0.5 ( 0 1 -1 )
}
"#;

const SMALL_ANIM: &str = r#"MD5Version 10
commandline "small"

numFrames 2
numJoints 2
frameRate 24
numAnimatedComponents 3

hierarchy {
	"root"	-1 1 0
	"child"	0 40 1
}

bounds {
	( -1 -1 -1 ) ( 1 1 1 )
	( -1 -1 -1 ) ( 1 1 2 )
}

baseframe {
	( 0 0 5 ) ( 0 0 0.6 )
	( 1 0 0 ) ( 0 0.5 0 )
}

frame 0 {
	2
	0 0
}

frame 1 {
	3
	0.6 0
}
"#;

/// q and -q are the same rotation.
fn same_rotation(a: Quat, b: Quat) -> bool {
    a.dot(b).abs() > 1.0 - 1e-6
}

fn edited(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the test's edit finds {from:?}");
    text.replacen(from, to, 1)
}

fn mesh_error(text: &str) -> String {
    match md5::parse_mesh(text, Path::new("small.md5mesh")) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(error) => error.to_string(),
    }
}

fn anim_error(text: &str) -> String {
    match md5::parse_anim(text, Path::new("small.md5anim")) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(error) => error.to_string(),
    }
}

/// The message names the file and line, and says what was expected.
fn assert_names(message: &str, file: &str, line: usize, words: &[&str]) {
    let place = format!("{file}:{line}: ");
    assert!(message.contains(&place), "{message:?} should name {place:?}");
    assert!(message.contains("expected"), "{message:?} should say what was expected");
    for word in words {
        assert!(message.contains(word), "{message:?} should mention {word:?}");
    }
}

#[test]
fn small_files_parse_and_round_trip() {
    let mesh = md5::parse_mesh(SMALL_MESH, Path::new("small.md5mesh")).expect("the small mesh parses");
    assert_eq!(mesh.joints.len(), 2);
    assert_eq!(mesh.joints[1].orientation, Vec3::new(0.0, 0.0, 0.5));
    assert_eq!(mesh.meshes[0].tris, vec![[0, 1, 2]]);
    assert_eq!(mesh.meshes[0].weights[3].position, Vec3::new(0.0, 1.0, -1.0));
    assert_eq!(md5::parse_mesh(&md5::write_mesh(&mesh), Path::new("again.md5mesh")).as_ref(), Ok(&mesh));
    let anim = md5::parse_anim(SMALL_ANIM, Path::new("small.md5anim")).expect("the small anim parses");
    assert_eq!(anim.frames, vec![vec![2.0, 0.0, 0.0], vec![3.0, 0.6, 0.0]]);
    assert_eq!(anim.hierarchy[1].flags, 40);
    assert_eq!(md5::parse_anim(&md5::write_anim(&anim), Path::new("again.md5anim")).as_ref(), Ok(&anim));

    // CRLF line ends and comments anywhere change nothing.
    let crlf = SMALL_MESH.replace('\n', "\r\n");
    assert_eq!(md5::parse_mesh(&crlf, Path::new("crlf.md5mesh")).as_ref(), Ok(&mesh));
    let commented = SMALL_ANIM
        .replace("{\n", "{ // opens\n")
        .replace("( 0 0.5 0 )\n", "( 0 0.5 0 )// trailing\n")
        .replace("0.6 0\n", "0.6 0// glued\n");
    assert_eq!(md5::parse_anim(&commented, Path::new("commented.md5anim")).as_ref(), Ok(&anim));
}

#[test]
fn broken_meshes_name_the_file_line_and_expectation() {
    let truncated = &SMALL_MESH[..SMALL_MESH.find("( 0 1 0 )").expect("the weight is there") + 5];
    assert_names(&mesh_error(truncated), "small.md5mesh", 26, &["end of file"]);

    let cases: &[(&str, &str, usize, &[&str])] = &[
        // Declared counts against what is there.
        ("numverts 3", "numverts 4", 20, &["'vert' 3", "numverts"]),
        ("numverts 3", "numverts 2", 18, &["'numtris'", "numverts"]),
        ("numtris 1", "numtris 2", 23, &["'tri' 1", "numtris"]),
        ("numweights 4", "numweights 5", 28, &["'weight' 4", "numweights"]),
        ("numweights 4", "numweights 3", 27, &["'}'", "numweights"]),
        ("numJoints 2", "numJoints 3", 10, &["joint 2", "numJoints"]),
        ("numJoints 2", "numJoints 1", 9, &["'}'", "numJoints"]),
        ("numMeshes 1", "numMeshes 2", 28, &["'mesh' 1", "end of file"]),
        ("numMeshes 1", "numMeshes 0", 12, &["end of file", "numMeshes"]),
        // Numbers.
        ("( 1 0 0 )", "( 1.2.3 0 0 )", 25, &["number", "'1.2.3'"]),
        ("( 0 0 1 )", "( 0 0 nan )", 9, &["finite", "'nan'"]),
        ("( 0 0 1 )", "( 0 0 inf )", 9, &["finite"]),
        ("weight 2 0 0.5", "weight 2 0 0.5x", 26, &["number", "'0.5x'"]),
        ("vert 1 ( 1 0 ) 1 1", "vert 1 ( 1 0 ) 1.5 1", 17, &["integer", "startWeight"]),
        ("numverts 3", "numverts -3", 15, &["numverts", "-3"]),
        ("MD5Version 10", "MD5Version 11", 1, &["MD5Version 10"]),
        // Brackets and braces.
        ("joints {", "joints", 8, &["'{'"]),
        ("( 0 1 -1 )", "( 0 1 -1", 28, &["')' after weight 3 position", "'}'"]),
        ("vert 2 ( 0 1 )", "vert 2 0 1 )", 18, &["'('"]),
        ("\"child\"", "\"child", 9, &["'\"'"]),
        // Indices out of range.
        ("\"child\"\t0", "\"child\"\t1", 9, &["parent", "found 1"]),
        ("\"child\"\t0", "\"child\"\t-2", 9, &["parent", "found -2"]),
        ("\"root\"\t-1", "\"root\"\t0", 8, &["parent", "found 0"]),
        ("weight 3 1 0.5", "weight 3 2 0.5", 27, &["joint", "numJoints", "found 2"]),
        ("tri 0 0 1 2", "tri 0 0 1 3", 21, &["numverts", "found 3"]),
        ("vert 2 ( 0 1 ) 2 2", "vert 2 ( 0 1 ) 2 3", 18, &["numweights", "2 + 3"]),
        ("vert 1 ( 1 0 ) 1 1", "vert 1 ( 1 0 ) 4294967295 1", 17, &["numweights"]),
        ("vert 1 (", "vert 7 (", 17, &["vert index 1", "found 7"]),
        // Absurd counts with a tiny body: an error, not an allocation.
        ("numverts 3", "numverts 2147483647", 20, &["'vert' 3", "2147483647"]),
        ("numJoints 2", "numJoints 2147483647", 10, &["joint 2"]),
        ("numweights 4", "numweights 4294967295", 28, &["'weight' 4"]),
        ("numMeshes 1", "numMeshes 2147483647", 28, &["'mesh' 1"]),
        ("numverts 3", "numverts 99999999999999999999", 15, &["integer", "numverts"]),
    ];
    for &(from, to, line, words) in cases {
        let message = mesh_error(&edited(SMALL_MESH, from, to));
        assert_names(&message, "small.md5mesh", line, words);
    }
    // A missing closing brace at the very end points at the last line with text.
    let unclosed = SMALL_MESH.trim_end().trim_end_matches('}');
    assert_names(&mesh_error(unclosed), "small.md5mesh", 27, &["'}'", "end of file"]);
}

#[test]
fn broken_anims_name_the_file_line_and_expectation() {
    let truncated = &SMALL_ANIM[..SMALL_ANIM.find("0.6 0").expect("the frame is there")];
    assert_names(&anim_error(truncated), "small.md5anim", 30, &["end of file"]);

    let cases: &[(&str, &str, usize, &[&str])] = &[
        // Frame data shorter and longer than numAnimatedComponents.
        ("0.6 0\n", "0.6\n", 32, &["3 values", "numAnimatedComponents", "found 2"]),
        ("0.6 0\n", "0.6 0 7\n", 31, &["'}'", "numAnimatedComponents", "'7'"]),
        ("numFrames 2", "numFrames 3", 17, &["bounds 2", "numFrames"]),
        ("numFrames 2", "numFrames 1", 16, &["'}'", "numFrames"]),
        ("numFrames 2", "numFrames 0", 4, &["at least 1 frame"]),
        ("numJoints 2", "numJoints 3", 12, &["joint 2", "numJoints"]),
        ("numJoints 2", "numJoints 1", 11, &["'}'", "numJoints"]),
        ("frame 1 {", "frame 2 {", 29, &["frame number 1", "found 2"]),
        ("frameRate 24", "frameRate 0", 6, &["positive frameRate"]),
        ("frameRate 24", "frameRate nan", 6, &["finite", "frameRate"]),
        ("\t2\n", "\t2.0.0\n", 25, &["number", "frame 0 value 0"]),
        // Hierarchy checks.
        ("\"child\"\t0 40 1", "\"child\"\t0 40 2", 11, &["numAnimatedComponents", "2 + 2"]),
        ("\"child\"\t0 40 1", "\"child\"\t0 64 1", 11, &["flags", "64"]),
        ("\"child\"\t0 40 1", "\"child\"\t1 40 1", 11, &["parent", "found 1"]),
        ("baseframe {\n\t( 0 0 5 )", "baseframe {\n\t( 0 0 5", 20, &["')' after baseframe 0 position", "'('"]),
        ("bounds {", "bounds", 15, &["'{'"]),
        // Absurd counts.
        ("numAnimatedComponents 3", "numAnimatedComponents 4294967295", 27, &["4294967295 values", "found 3"]),
        ("numFrames 2", "numFrames 2147483647", 17, &["bounds 2"]),
        ("numJoints 2", "numJoints 4294967295", 12, &["joint 2"]),
    ];
    for &(from, to, line, words) in cases {
        let message = anim_error(&edited(SMALL_ANIM, from, to));
        assert_names(&message, "small.md5anim", line, words);
    }
}

#[test]
fn no_prefix_or_dropped_token_panics() {
    for (text, path) in [(SMALL_MESH, "small.md5mesh"), (SMALL_ANIM, "small.md5anim")] {
        let parse = |text: &str| {
            if path.ends_with("md5mesh") {
                md5::parse_mesh(text, Path::new(path)).map(|_| ())
            } else {
                md5::parse_anim(text, Path::new(path)).map(|_| ())
            }
        };
        let last_line = text.lines().count();
        for end in (0..=text.len()).filter(|&end| text.is_char_boundary(end)) {
            let prefix = &text[..end];
            match parse(prefix) {
                Ok(()) => assert!(text[end..].trim().is_empty(), "a prefix ending at byte {end} parsed"),
                Err(error) => match error.location {
                    vkskin::formats::Location::Line(line) => {
                        assert!((1..=last_line).contains(&line), "line {line} at byte {end}: {error}")
                    }
                    _ => panic!("a parse error has a line: {error}"),
                },
            }
        }
        // Dropping any one token must not panic either (whether it errors depends on the token).
        let tokens: Vec<&str> = text.split_whitespace().collect();
        for skip in 0..tokens.len() {
            let shorter: Vec<&str> =
                tokens.iter().enumerate().filter(|&(index, _)| index != skip).map(|(_, token)| *token).collect();
            let _ = parse(&shorter.join(" "));
        }
    }
    // A sample of the bundled figure's prefixes too.
    let mesh = md5::write_mesh(&generate::figure().mesh);
    for end in (0..mesh.len()).step_by(4099) {
        assert!(md5::parse_mesh(&mesh[..end], Path::new("figure.md5mesh")).is_err());
    }
}

// ---------------------------------------------------------------------------------------------
// Loading small files
// ---------------------------------------------------------------------------------------------

fn write_pair(test: &str, mesh: &str, anim: &str) -> (PathBuf, PathBuf) {
    let dir = scratch(test);
    let (mesh_path, anim_path) = (dir.join("small.md5mesh"), dir.join("small.md5anim"));
    std::fs::write(&mesh_path, mesh).expect("the scratch mesh is written");
    std::fs::write(&anim_path, anim).expect("the scratch anim is written");
    (mesh_path, anim_path)
}

fn load_error(test: &str, mesh: &str, anim: &str) -> String {
    let (mesh_path, anim_path) = write_pair(test, mesh, anim);
    match md5::load(&mesh_path, &[anim_path]) {
        Ok(_) => panic!("expected {test} to fail"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn anim_frames_compose_as_the_format_defines() {
    let (mesh_path, anim_path) = write_pair("compose", SMALL_MESH, SMALL_ANIM);
    let model = md5::load(&mesh_path, &[anim_path]).expect("the small pair loads");
    assert_eq!(model.stats.max_influences, 2);
    let clip = &model.clips[0];
    assert_eq!((clip.name.as_str(), model.animations[0].channels[0].times.count(), model.skeleton.len()), ("small", 2, 2));
    let frame_rate = model.animations[0].frame_rate.expect("MD5 counts frames");
    let pose = |frame: usize| -> Vec<(Vec3, Quat)> {
        model
            .joint_matrices(0, frame as f32 / frame_rate)
            .iter()
            .map(|matrix| (matrix.w_axis.truncate(), Quat::from_mat4(matrix)))
            .collect()
    };

    // By hand, in MD5 space. Root: baseframe orientation (0, 0, 0.6) so w = -0.8, a turn of
    // -73.74° about Z taking X to (0.28, -0.96, 0); its Tx comes from the frame. Child: Qx and Qz
    // from the frame, Qy = 0.5 from the baseframe; position (1, 0, 0) in the root's frame.
    let root_rotation = Quat::from_xyzw(0.0, 0.0, 0.6, -0.8);
    let expected_root = [Vec3::new(2.0, 0.0, 5.0), Vec3::new(3.0, 0.0, 5.0)];
    let expected_child = [Vec3::new(2.28, -0.96, 5.0), Vec3::new(3.28, -0.96, 5.0)];
    let child_rotation = [Quat::from_xyzw(0.0, 0.5, 0.0, -0.75f32.sqrt()), Quat::from_xyzw(0.6, 0.5, 0.0, -0.39f32.sqrt())];
    for frame in 0..2 {
        let joints = pose(frame);
        let [(root_at, root_turn), (child_at, child_turn)] = [joints[0], joints[1]];
        assert!(root_at.distance(y_up(expected_root[frame])) < 1e-5, "frame {frame}: root at {root_at}");
        assert!(child_at.distance(y_up(expected_child[frame])) < 1e-5, "frame {frame}: child at {child_at}");
        assert!(same_rotation(root_turn, y_up_rotation() * root_rotation), "frame {frame}: root turned {root_turn}");
        let expected = y_up_rotation() * root_rotation * child_rotation[frame];
        assert!(same_rotation(child_turn, expected), "frame {frame}: child turned {child_turn}");
    }
    // Where the frame-0 rotations send X, worked out by hand: the root's (0.28, -0.96, 0) and the
    // child's -60° about Y then the root's turn, (0.14, -0.48, 0.866), each then taken to Y-up.
    let frame0 = pose(0);
    assert!((frame0[0].1 * Vec3::X).distance(Vec3::new(0.28, 0.0, 0.96)) < 1e-5);
    assert!((frame0[1].1 * Vec3::X).distance(Vec3::new(0.14, 0.75f32.sqrt(), 0.48)) < 1e-5);
}

#[test]
fn mismatched_animations_name_the_anim_file_the_line_and_the_joint() {
    let renamed = load_error("renamed", SMALL_MESH, &edited(SMALL_ANIM, "\"child\"", "\"kid\""));
    assert_names(&renamed, "small.md5anim", 11, &["\"child\"", "\"kid\"", "small.md5mesh"]);

    let reparented = load_error("reparented", SMALL_MESH, &edited(SMALL_ANIM, "\"child\"\t0", "\"child\"\t-1"));
    assert_names(&reparented, "small.md5anim", 11, &["parent 0", "parent -1"]);

    let three_joints =
        edited(&edited(SMALL_MESH, "numJoints 2", "numJoints 3"), "}\n\nmesh", "\t\"extra\"\t1 ( 0 0 2 ) ( 0 0 0 )\n}\n\nmesh");
    let counted = load_error("counted", &three_joints, SMALL_ANIM);
    assert_names(&counted, "small.md5anim", 5, &["numJoints 3", "found 2"]);

    let weightless = load_error("weightless", &edited(SMALL_MESH, "vert 0 ( 0 0 ) 0 1", "vert 0 ( 0 0 ) 0 0"), SMALL_ANIM);
    assert_names(&weightless, "small.md5mesh", 16, &["weight", "found 0"]);

    let missing = md5::load(Path::new("no/such/figure.md5mesh"), &[]).expect_err("a missing file is an error");
    assert!(missing.to_string().contains("no/such/figure.md5mesh"), "{missing}");
}

#[test]
fn textures_are_found_by_the_documented_rules_or_warned_about() {
    let dir = scratch("textures");
    let second_part = &SMALL_MESH[SMALL_MESH.find("mesh {").expect("a mesh section")..];
    let two_parts = format!(
        "{}\n{}",
        edited(&edited(SMALL_MESH, "numMeshes 1", "numMeshes 2"), "shader \"\"", "shader \"textures/skin.tga\""),
        edited(second_part, "shader \"\"", "shader \"missing/nothing\"")
    );
    std::fs::write(dir.join("small.md5mesh"), two_parts).expect("the mesh is written");
    // Found by its file name alone with .png in place of .tga.
    image::RgbaImage::from_pixel(2, 3, image::Rgba([10, 20, 30, 255]))
        .save(dir.join("skin.png"))
        .expect("the texture is written");

    let model = md5::load(&dir.join("small.md5mesh"), &[]).expect("the model loads without its second texture");
    assert_eq!(model.meshes.len(), 2);
    assert!(model.clips.is_empty());
    let skin = model.materials[0].texture.as_ref().expect("skin.png is found for textures/skin.tga");
    assert_eq!((skin.width, skin.height), (2, 3));
    assert_eq!(&skin.decode().expect("decodes")[..4], &[10, 20, 30, 255]);
    assert!(model.materials[1].texture.is_none());
    assert_eq!(model.stats.warnings.len(), 1);
    let warning = &model.stats.warnings[0];
    assert!(warning.contains("missing/nothing") && warning.contains("nothing.png"), "{warning}");
    // Both parts index their own vertices.
    assert_eq!(model.indices, vec![0, 1, 2, 3, 4, 5]);

    // A file that is there but is no image is a warning too, naming why.
    std::fs::write(dir.join("nothing.png"), b"not a png").expect("the bad texture is written");
    let model = md5::load(&dir.join("small.md5mesh"), &[]).expect("the model still loads");
    assert!(model.stats.warnings[0].contains("decoded"), "{:?}", model.stats.warnings);
    assert!(model.materials[0].normal_map.is_none(), "no normal map beside skin.png yet");

    // Doom 3's `_local` normal map beside the colour texture is picked up, with no warning for the
    // part that has none.
    image::RgbaImage::from_pixel(2, 2, image::Rgba([128, 140, 250, 255])).save(dir.join("skin_local.png")).expect("written");
    let model = md5::load(&dir.join("small.md5mesh"), &[]).expect("the model loads");
    let normal_map = model.materials[0].normal_map.as_ref().expect("skin_local.png is used as the normal map");
    assert_eq!(&normal_map.decode().expect("decodes")[..4], &[128, 140, 250, 255]);
    assert!(model.materials[1].normal_map.is_none());
    assert_eq!(model.stats.warnings.len(), 1, "{:?}", model.stats.warnings);
    for vertex in &model.vertices {
        assert!(
            (vertex.tangent.truncate().length() - 1.0).abs() < 1e-4 && vertex.tangent.truncate().dot(vertex.normal).abs() < 1e-4
        );
    }
}

// ---------------------------------------------------------------------------------------------
// What assimp opens, and errors with a place (issue 26)
// ---------------------------------------------------------------------------------------------

fn load_text(mesh: &str, name: &str) -> Result<Model, vkskin::formats::FormatError> {
    md5::load_from_text(mesh, Path::new(name), &[(SMALL_ANIM.to_string(), PathBuf::from("small.md5anim"))])
}

#[test]
fn lines_with_unknown_keywords_in_a_mesh_block_are_skipped_with_one_warning() {
    let plain = load_text(SMALL_MESH, "plain.md5mesh").unwrap_or_else(|error| panic!("{error}"));
    assert!(plain.stats.warnings.is_empty(), "{:?}", plain.stats.warnings);
    // A misspelled `shader` (line 13): the mesh has no shader, as if the line were not there.
    let misspelled = edited(SMALL_MESH, "\tshader \"\"", "\tshadr \"models/body.tga\"");
    let model = load_text(&misspelled, "misspelled.md5mesh").unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.stats.warnings.len(), 1, "{:?}", model.stats.warnings);
    let warning = &model.stats.warnings[0];
    assert!(warning.starts_with("line 13: ") && warning.contains("'shadr'") && warning.contains("skipped"), "{warning}");
    assert_eq!((&model.vertices, &model.indices, &model.skeleton), (&plain.vertices, &plain.indices, &plain.skeleton));
    assert_eq!(model.materials, plain.materials);
    // Unknown lines anywhere in the block: one warning for all of them.
    let sprinkled = edited(
        &edited(&misspelled, "\tnumtris 1", "\tnormals 3 ( 0 0 1 )\n\tnumtris 1"),
        "\tweight 3",
        "\tcolor 1 0 0\n\tweight 3",
    );
    let model = load_text(&sprinkled, "sprinkled.md5mesh").unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.stats.warnings.len(), 1, "{:?}", model.stats.warnings);
    assert!(model.stats.warnings[0].contains("(2 more like it)"), "{}", model.stats.warnings[0]);
    assert_eq!(model.vertices, plain.vertices);
    // Keywords of the file's other parts are never skipped: a `mesh` where a `}` is missing is an error.
    let unclosed = edited(SMALL_MESH, "\tweight 3 1 0.5 ( 0 1 -1 )\n}", "\tweight 3 1 0.5 ( 0 1 -1 )\nmesh {");
    assert_names(&mesh_error(&unclosed), "small.md5mesh", 28, &["'}'", "'mesh'"]);
}

#[test]
fn numbers_past_f32_are_refused_at_their_line() {
    // A vertex at infinity: 3e38 × 3e38 (line 17, its vert).
    let far = edited(SMALL_MESH, "weight 1 0 1 ( 1 0 0 )", "weight 1 0 3e38 ( 3e38 0 0 )");
    let error = load_text(&far, "far.md5mesh").map(|_| ()).expect_err("a vertex at infinity");
    assert_names(&error.to_string(), "far.md5mesh", 17, &["vert 1", "finite bind-pose position"]);
    // Joints 6e38 apart: the child's pose relative to its parent overflows (line 9, its joint).
    let apart = edited(
        &edited(SMALL_MESH, "\"root\"\t-1 ( 0 0 0 )", "\"root\"\t-1 ( -3e38 0 0 )"),
        "\"child\"\t0 ( 0 0 1 )",
        "\"child\"\t0 ( 3e38 0 1 )",
    );
    let error = load_text(&apart, "apart.md5mesh").map(|_| ()).expect_err("joints too far apart");
    assert_names(&error.to_string(), "apart.md5mesh", 9, &["joint 1", "finite bind pose"]);
}

#[test]
fn every_refusal_of_a_mutated_file_names_its_line() {
    let figure_mesh = std::fs::read_to_string(assets().join("figure.md5mesh")).expect("figure");
    let figure_walk = std::fs::read_to_string(assets().join("figure_walk.md5anim")).expect("walk");
    let mut pairs: Vec<(String, String, String, usize)> =
        vec![("small".into(), SMALL_MESH.into(), SMALL_ANIM.into(), 300), ("figure".into(), figure_mesh, figure_walk, 40)];
    if let Some(shared) = crate::common::shared_models("md5") {
        for (name, file) in [("simplecube", "simplecube/SimpleCube.md5mesh"), ("boarman", "boarman/BoarMan.md5mesh")] {
            let text = std::fs::read_to_string(shared.join(file)).unwrap_or_else(|error| panic!("{file}: {error}"));
            pairs.push((name.into(), text, String::new(), 150));
        }
    }
    let started = std::time::Instant::now();
    let (mut refused, mut loaded, mut unplaced) = (0, 0, Vec::new());
    for (name, mesh, anim, count) in &pairs {
        let mesh_path = PathBuf::from(format!("mutants/{name}.md5mesh"));
        let anim_path = PathBuf::from(format!("mutants/{name}.md5anim"));
        let mut cases: Vec<(String, String)> = crate::common::mutants(mesh, (mesh.len() / 40 / count).max(1))
            .into_iter()
            .take(*count)
            .map(|mesh| (mesh, anim.clone()))
            .collect();
        if !anim.is_empty() {
            let anims = crate::common::mutants(anim, (anim.len() / 40 / count).max(1)).into_iter().take(*count);
            cases.extend(anims.map(|anim| (mesh.clone(), anim)));
        }
        for (mesh, anim) in cases {
            let anims = if anim.is_empty() { Vec::new() } else { vec![(anim, anim_path.clone())] };
            match md5::load_from_text(&mesh, &mesh_path, &anims) {
                Err(error) => {
                    refused += 1;
                    let placed = matches!(error.location, vkskin::formats::Location::Line(line)
                        if line > 0 && error.to_string().starts_with(&format!("{}:{line}: ", error.file.display())));
                    if !placed || (error.file != mesh_path && error.file != anim_path) {
                        unplaced.push(error.to_string());
                    }
                }
                Ok(model) => {
                    loaded += 1;
                    // What `formats::load_model` would still refuse (without a line) must not pass.
                    assert!(model.vertices.iter().all(|vertex| vertex.position.is_finite()), "{name}");
                    assert!(
                        model.skeleton.joints.iter().all(|joint| joint.inverse_bind.is_finite()
                            && joint.rest.translation.is_finite()
                            && joint.rest.rotation.is_finite()),
                        "{name}"
                    );
                }
            }
        }
    }
    println!("{} files: {refused} mutants refused, {loaded} loaded, in {:?}", pairs.len(), started.elapsed());
    assert!(unplaced.is_empty(), "{} refusals without file:line:\n{}", unplaced.len(), unplaced.join("\n"));
}
