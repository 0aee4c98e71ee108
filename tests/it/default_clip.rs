//! The clip that plays when the user names none (issue 39): a stack or clip that moves nothing
//! (Mixamo's empty "Take 001" before its dance) is skipped, and with `--anim` the first clip of
//! those files plays, in `render`, `inspect --pose` and the scene every command builds. The shared
//! files have no empty stack, so the tests write one into the Maya sausage's ASCII FBX, before its
//! three real stacks, as Mixamo's exporter does.

use std::path::PathBuf;
use std::process::Command;

use vkskin::app::SceneSetup;
use vkskin::formats::load_model;

use crate::common::{scratch_in, shared_models, text};

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
    let path = scratch_in("default_clip", "sausage_with_take_001.fbx");
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
    assert_eq!(model.default_clip(), Some(1), "the first clip that moves plays");
    let setup = SceneSetup::new(model, 4);
    assert!(setup.instances.iter().all(|instance| instance.clip == Some(1)));
    assert!(setup.playing(0.5).starts_with("clip [1] \"wiggle\" at 0.50 of "), "{}", setup.playing(0.5));

    // inspect says which is empty and which plays.
    let output = Command::new(env!("CARGO_BIN_EXE_vkskin")).args(["inspect", "--lod", "off"]).arg(&path).output().expect("runs");
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("[0] Take 001: 0.960 s") && said.contains("(empty: moves nothing, never played by default)"), "{said}");
    assert!(said.contains("[1] wiggle") && said.contains("(plays by default)"), "{said}");
}

/// A clip of another file is what the user asked for: with `--anim`, its first clip plays, even
/// where the model has clips of its own that move (here the sausage's own three).
#[test]
fn with_anim_the_given_files_first_clip_plays() {
    let Some(path) = with_an_empty_stack_first() else { return };
    let Some(folder) = shared_models("fbx/MayaSausage") else { return };
    let clips = folder.join("maya_game_sausage_7500_binary_combined.fbx");
    let model = load_model(&path, std::slice::from_ref(&clips)).expect("loads with the other file's clips");
    let default = model.default_clip().expect("a clip plays");
    assert_eq!(model.clips[default].name, "wiggle (maya_game_sausage_7500_binary_combined.fbx)");
    assert_eq!(default, 4, "the first clip of the --anim file");

    // `render` and `inspect --pose` play it and say so.
    let out = scratch_in("default_clip", "with_anim.png");
    let output = Command::new(env!("CARGO_BIN_EXE_vkskin"))
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
    assert!(said.contains("clip [4] \"wiggle (maya_game_sausage_7500_binary_combined.fbx)\" at 0.25 of"), "{said}");

    let pose = |extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_vkskin"))
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
    assert!(by_default.contains("wiggle (maya_game_sausage_7500_binary_combined.fbx)"), "names the clip it posed");
    assert_eq!(by_default, pose(&["--clip", "4"]), "the default pose is clip 4's");
    assert_ne!(by_default, pose(&["--clip", "0"]), "not the empty stack's");
}
