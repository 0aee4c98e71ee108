//! What a newcomer meets in the first minute with their own files (issue 39):
//! - the clip that plays when none is named: a stack or clip that moves nothing (Mixamo's empty
//!   "Take 001" before its dance) is skipped, the clip that moves the most plays (issue 54), and
//!   with `--anim` it is one of those files' clips, in `render`, `inspect --pose` and the scene
//!   every command builds. The shared files have
//!   no empty stack, so the tests write one into the Maya sausage's ASCII FBX, before its three
//!   real stacks, as Mixamo's exporter does;
//! - clip files found beside a model by what they are, not only by name (MD5, Milkshape ranges);
//! - a broken FBX says where ufbx stopped;
//! - the command line: a misspelt command, a negative time, an image by its extension, a clip or
//!   instance count out of range.

use std::path::PathBuf;

use vkskin::app::SceneSetup;
use vkskin::formats::load_model;

use crate::common::{fresh_folder, scratch_in, shared_models, text, vkskin};

/// FBX time units a second.
const KTIME_PER_SECOND: u64 = 46_186_158_000;

/// The sausage's ASCII FBX with an empty stack ("Take 001", 0.96 s, one layer, no curves) put
/// first, as a file in the test's scratch folder.
fn with_an_empty_stack_first() -> Option<PathBuf> {
    let folder = shared_models("fbx/MayaSausage")?;
    let text = std::fs::read_to_string(folder.join("maya_game_sausage_7500_ascii_combined.fbx")).expect("the ASCII FBX reads");
    let stop = KTIME_PER_SECOND * 96 / 100;
    let stack = format!(
        "\tAnimationStack: 1001, \"AnimStack::Take 001\", \"\" {{\n\t\tProperties70:  {{\n\
         \t\t\tP: \"LocalStart\", \"KTime\", \"Time\", \"\",0\n\t\t\tP: \"LocalStop\", \"KTime\", \"Time\", \"\",{stop}\n\
         \t\t\tP: \"ReferenceStart\", \"KTime\", \"Time\", \"\",0\n\t\t\tP: \"ReferenceStop\", \"KTime\", \"Time\", \"\",{stop}\n\
         \t\t}}\n\t}}\n\tAnimationLayer: 1002, \"AnimLayer::BaseLayer\", \"\" {{\n\t}}\n"
    );
    let first_stack = text.find("\tAnimationStack: ").expect("the file has stacks");
    let mut edited = format!("{}{stack}{}", &text[..first_stack], &text[first_stack..]);
    let connections = edited.find("Connections:  {\n").expect("the file has connections") + "Connections:  {\n".len();
    edited.insert_str(connections, "\t;AnimLayer::BaseLayer, AnimStack::Take 001\n\tC: \"OO\",1002,1001\n\n");
    let path = scratch_in("first_minute", "sausage_with_take_001.fbx");
    std::fs::write(&path, edited).expect("the scratch file writes");
    Some(path)
}

#[test]
fn an_empty_stack_is_listed_but_not_played() {
    let Some(path) = with_an_empty_stack_first() else { return };
    let model = load_model(&path, &[]).expect("the edited file loads");
    let names: Vec<&str> = model.clips.iter().map(|clip| clip.name.as_str()).collect();
    assert_eq!(names, ["Take 001", "wiggle", "spin", "deform"], "the empty stack is kept, first");
    assert!((model.clips[0].duration - 0.96).abs() < 1e-3, "{}", model.clips[0].duration);
    assert!(!model.clip_moves(0), "Take 001 moves nothing");
    assert!((1..4).all(|clip| model.clip_moves(clip)), "the sausage's own stacks move");
    // Of the three that move, all named plainly, the one that moves the most plays.
    // (the first of equals: "spin" and "deform" both move the whole sausage for 0.83 s).
    let most = (1..4).rev().max_by(|&a, &b| model.clip_motion(a).total_cmp(&model.clip_motion(b))).expect("three clips");
    assert_eq!(model.default_clip(), Some(most), "the clip that moves the most plays");
    let name = model.clips[most].name.clone();
    let setup = SceneSetup::uniform(model.clone(), 4);
    assert!(setup.instances.iter().all(|instance| instance.clip == Some(most)));
    // A crowd says what it plays; one instance, where in the clip it is.
    assert_eq!(setup.playing(0.5), format!("playing [{most}] \"{name}\""));
    let playing = SceneSetup::uniform(model, 1).playing(0.5);
    assert!(playing.starts_with(&format!("clip [{most}] \"{name}\" at 0.50 of ")), "{playing}");

    // inspect says which is empty and which plays.
    let output = vkskin().args(["inspect", "--lod", "off"]).arg(&path).output().expect("runs");
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("[0] Take 001: 0.960 s") && said.contains("(empty: moves nothing)"), "{said}");
    assert!(said.contains(&format!("[{most}] {name}")) && said.contains("(plays by default)"), "{said}");
}

/// A clip of another file is what the user asked for: with `--anim`, one of its clips plays (the
/// one that moves the most), even where the model has clips of its own that move (here the
/// sausage's own three).
#[test]
fn with_anim_the_given_files_first_clip_plays() {
    let Some(path) = with_an_empty_stack_first() else { return };
    let Some(folder) = shared_models("fbx/MayaSausage") else { return };
    let clips = folder.join("maya_game_sausage_7500_binary_combined.fbx");
    let model = load_model(&path, std::slice::from_ref(&clips)).expect("loads with the other file's clips");
    let default = model.default_clip().expect("a clip plays");
    let theirs: Vec<usize> = (0..model.clips.len()).filter(|&clip| model.clip_source(clip) == Some(clips.as_path())).collect();
    assert_eq!(theirs, [4, 5, 6], "the --anim file's three clips, after the model's own");
    let most =
        theirs.iter().copied().rev().max_by(|&a, &b| model.clip_motion(a).total_cmp(&model.clip_motion(b))).expect("clips");
    assert_eq!(default, most, "the --anim file's clip that moves the most");
    let name = model.clips[default].name.clone();
    assert!(name.ends_with(" (maya_game_sausage_7500_binary_combined.fbx)"), "{name}");

    // `render` and `inspect --pose` play it and say so.
    let out = scratch_in("first_minute", "with_anim.png");
    let output = vkskin()
        .args(["render", "--size", "64x48", "--time", "0.25", "--lod", "off"])
        .arg(&path)
        .arg("--anim")
        .arg(&clips)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("runs");
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains(&format!("clip [{default}] \"{name}\" at 0.25 of")), "{said}");

    let pose = |extra: &[&str]| {
        let output = vkskin()
            .args(["inspect", "--pose", "0.4", "--json"])
            .arg(&path)
            .arg("--anim")
            .arg(&clips)
            .args(extra)
            .output()
            .expect("runs");
        assert!(output.status.success(), "{}", text(&output));
        String::from_utf8(output.stdout).expect("JSON is text")
    };
    let by_default = pose(&[]);
    assert!(by_default.contains(&name), "names the clip it posed");
    assert_eq!(by_default, pose(&["--clip", &default.to_string()]), "the default pose is the default clip's");
    assert_ne!(by_default, pose(&["--clip", "0"]), "not the empty stack's");
}

/// Every .md5anim beside a mesh whose joints are the mesh's is its clip, whatever its name (the
/// Doom 3 hellknight's `idle2.md5anim`); one of another rig is not.
#[test]
fn md5_clips_beside_the_mesh_are_found_by_their_joints() {
    let folder = fresh_folder("first_minute", "md5_beside");
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    std::fs::copy(assets.join("figure.md5mesh"), folder.join("figure.md5mesh")).expect("copied");
    std::fs::copy(assets.join("figure_walk.md5anim"), folder.join("idle2.md5anim")).expect("copied");
    std::fs::copy(assets.join("figure_wave.md5anim"), folder.join("figure_wave.md5anim")).expect("copied");
    // Another rig: the walk with a joint renamed.
    let walk = std::fs::read_to_string(assets.join("figure_walk.md5anim")).expect("the walk");
    let first_joint = walk.split("hierarchy {").nth(1).and_then(|rest| rest.split('"').nth(1)).expect("a joint").to_string();
    std::fs::write(folder.join("other_rig.md5anim"), walk.replacen(&format!("\"{first_joint}\""), "\"someone_else\"", 1))
        .expect("written");
    let found = vkskin::app::default_animations(&folder.join("figure.md5mesh"), &[]);
    let names: Vec<&str> = found.iter().filter_map(|path| path.file_name()?.to_str()).collect();
    assert_eq!(names, ["figure_wave.md5anim", "idle2.md5anim"]);
    let model = load_model(&folder.join("figure.md5mesh"), &found).expect("loads with both");
    assert_eq!(model.clips.len(), 2);
}

/// A Milkshape ranges file is found under the model's name without its digits ("ninja animation
/// ranges.txt" beside `ninja1.ms3d`), so the clips are cut as the file says.
#[test]
fn a_ranges_file_is_found_beside_a_numbered_model() {
    let Some(ninja) = shared_models("ms3d/ninja") else { return };
    let folder = fresh_folder("first_minute", "ranges_beside");
    std::fs::copy(ninja.join("ninja.ms3d"), folder.join("ninja1.ms3d")).expect("copied");
    std::fs::copy(ninja.join("ninja animation ranges.txt"), folder.join("Ninja animation ranges.txt")).expect("copied");
    let model = load_model(&folder.join("ninja1.ms3d"), &[]).expect("loads");
    let own = load_model(&ninja.join("ninja.ms3d"), &[]).expect("loads");
    assert!(own.clips.len() > 1, "the shared ninja is cut into clips");
    assert_eq!(model.clips.len(), own.clips.len(), "cut by the ranges file found");
}

/// A broken FBX names where ufbx stopped reading: the byte of a binary file (within the 1 KB
/// ufbx reports progress by, and the block it was inflating), the line of an ASCII one.
#[test]
fn a_broken_fbx_says_where() {
    let Some(folder) = shared_models("fbx") else { return };
    let mut binary = std::fs::read(folder.join("QuaterniusRobot/Robot.fbx")).expect("the robot");
    let broken_at = binary.len() / 2;
    for byte in &mut binary[broken_at..broken_at + 256] {
        *byte ^= 0x5a;
    }
    // The number after `words` in the error loading `bytes`, and the error.
    let reported = |name: &str, bytes: &[u8], words: &str| {
        let path = scratch_in("first_minute", name);
        std::fs::write(&path, bytes).expect("written");
        let error = load_model(&path, &[]).expect_err("broken").to_string();
        let number = error.split(words).nth(1).and_then(|rest| rest.split(' ').next()).and_then(|number| number.parse().ok());
        (number.unwrap_or_else(|| panic!("'{words}' and a number: {error}")), error)
    };
    let (at, error): (usize, String) = reported("broken_binary.fbx", &binary, "near byte ");
    assert!(at + 1024 >= broken_at && at <= broken_at + (64 << 10), "{at} for bytes broken at {broken_at}: {error}");

    let text = std::fs::read_to_string(folder.join("MayaSausage/maya_game_sausage_7500_ascii_combined.fbx")).expect("ASCII");
    let line = 300;
    let cut: usize = text.lines().take(line - 1).map(|line| line.len() + 1).sum();
    let broken = format!("{}\"unclosed {{ ;{}", &text[..cut], &text[cut..]);
    let (reported, error) = reported("broken_ascii.fbx", broken.as_bytes(), "near line ");
    assert!(reported <= line && reported + 100 >= line, "line {reported} for a file broken at {line}: {error}");
}

/// The command line as a newcomer types it.
#[test]
fn the_command_line_says_what_it_means() {
    let said = |args: &[&str]| {
        let output = vkskin().args(args).output().expect("runs");
        (output.status.success(), text(&output))
    };
    let (ok, message) = said(&["rendr"]);
    assert!(!ok && message.contains("did you mean `vkskin render`"), "{message}");
    // With options after it too (the viewer has no --out), and every error starts the same way.
    let (ok, message) = said(&["rendr", "--out", "never.png"]);
    assert!(!ok && message.starts_with("vkskin: error: 'rendr'") && message.contains("`vkskin render`"), "{message}");
    let (ok, message) = said(&["render", "--sise", "32x24"]);
    assert!(
        !ok && message.starts_with("vkskin: error: unexpected argument '--sise'") && message.contains("'--size'"),
        "{message}"
    );
    let (_, message) = said(&["soak", "--help"]);
    let size = message.lines().skip_while(|line| !line.contains("--size")).nth(1).unwrap_or_default();
    assert!(size.contains("Image size"), "soak --size says what it is: {message}");
    let (ok, message) = said(&["render", "--clip", "9", "--size", "32x24", "--out", "never.png"]);
    assert!(!ok && message.contains("no clip 9: clips are numbered 0 to 1"), "{message}");
    let (ok, message) = said(&["render", "--instances", "0"]);
    assert!(!ok && message.contains("expected at least 1 instance") && !message.contains("4294967295"), "{message}");
    let (ok, message) = said(&["render", "--out", "frame.gif"]);
    assert!(!ok && message.contains("expected a .png, .jpg, .bmp or .tga file"), "{message}");
    // A negative time counts back from the loop's start; JPEG is written as JPEG.
    let out = scratch_in("first_minute", "negative.jpg");
    let (ok, message) =
        said(&["render", "--time", "-0.5", "--size", "64x48", "--lod", "off", "--out", out.to_str().expect("UTF-8")]);
    assert!(ok && message.contains("t = -0.5 s"), "{message}");
    let image = image::ImageReader::open(&out).expect("opens").with_guessed_format().expect("reads");
    assert_eq!(image.format(), Some(image::ImageFormat::Jpeg));
}

/// A file of joints and clips without a mesh (a Mixamo "without skin" download) says so, and how
/// its clips go onto a character.
#[test]
fn a_file_without_a_mesh_says_so() {
    let Some(folder) = shared_models("gltf/RiggedSimple") else { return };
    let clips = crate::retarget::without_meshes(&folder.join("RiggedSimple.glb"), &scratch_in("first_minute", "no_mesh.glb"));
    let model = load_model(&clips, &[]).expect("loads");
    let warning = model.stats.warnings.iter().find(|warning| warning.starts_with("no mesh")).expect("says so");
    assert!(warning.contains("drawn as its skeleton") && warning.contains("--anim"), "{warning}");
}

/// 3ds Max writes joint names with spaces into a `Name_array` of words (26 joints, 70 words);
/// assimp refuses such a file. riggedSimple.dae with its joints named so (`Bip01 Spine`, `Bip01 L
/// Upper Arm`) loads as the original does.
#[test]
fn collada_joint_names_with_spaces_are_put_back_together() {
    let Some(folder) = shared_models("collada/RiggedSimple") else { return };
    let text = std::fs::read_to_string(folder.join("riggedSimple.dae")).expect("COLLADA");
    let spaced = text
        .replace(">Bone Bone_001<", ">Bip01 Spine Bip01 L Upper Arm<")
        .replace(r#"<node id="Bone" name="Bone" sid="Bone""#, r#"<node id="Bone" name="Bip01 Spine" sid="Bip01 Spine""#)
        .replace(r#"name="Bone.001" sid="Bone_001""#, r#"name="Bip01 L Upper Arm" sid="Bip01 L Upper Arm""#);
    assert_eq!(spaced.matches("Bip01").count(), 6, "the names were where the test expects them");
    let path = scratch_in("first_minute", "spaced_names.dae");
    std::fs::write(&path, spaced).expect("written");
    let model = load_model(&path, &[]).expect("names with spaces load");
    let original = load_model(&folder.join("riggedSimple.dae"), &[]).expect("loads");
    assert_eq!(model.vertices.len(), original.vertices.len());
    let names: Vec<&str> = model.skeleton.joints.iter().map(|joint| joint.name.as_str()).collect();
    assert!(names.contains(&"Bip01 L Upper Arm"), "{names:?}");
    let positions = |model: &vkskin::model::Model| model.joint_matrices(0, 0.5).iter().map(|m| m.w_axis).collect::<Vec<_>>();
    assert_eq!(positions(&model), positions(&original), "posed alike");
}

/// `--ranges FILE` cuts the clips by a ranges file of any name: the ninja renamed, its ranges file
/// elsewhere, gives the clips the shared ninja gets from the file beside it.
#[test]
fn ranges_of_another_name_are_taken_from_the_command_line() {
    let Some(ninja) = shared_models("ms3d/ninja") else { return };
    let folder = fresh_folder("first_minute", "ranges_given");
    std::fs::copy(ninja.join("ninja.ms3d"), folder.join("warrior.ms3d")).expect("copied");
    std::fs::copy(ninja.join("ninja animation ranges.txt"), folder.join("moves.txt")).expect("copied");
    let clips = |args: &[&std::ffi::OsStr]| {
        let output = vkskin().arg("inspect").args(args).args(["--lod", "off"]).output().expect("runs");
        let said = text(&output);
        assert!(output.status.success(), "{said}");
        said.lines().find_map(|line| line.strip_prefix("clips: ")?.parse::<usize>().ok()).expect("a clip count")
    };
    let alone = clips(&[folder.join("warrior.ms3d").as_os_str()]);
    let given = clips(&[folder.join("warrior.ms3d").as_os_str(), "--ranges".as_ref(), folder.join("moves.txt").as_os_str()]);
    let own = clips(&[ninja.join("ninja.ms3d").as_os_str()]);
    assert!(alone < own && given == own, "alone {alone}, with --ranges {given}, the ninja {own}");
}
