//! BVH motion capture (issue 41): the CMU clips in ../shared/clips/cmu/bvh read as their text says
//! (skipped, with a message, when that folder is absent), a BVH alone shows its skeleton moving on
//! the ground, its clip plays on a character with `--anim`, and hostile files end in one clean
//! error or a bounded load.

use glam::Vec3;

use crate::common::{scratch_in, shared_clips, text, vkskin};
use vkskin::anim::JointPose;
use vkskin::formats::{bvh, load_model};

#[test]
fn cmu_clips_read_as_their_text_says() {
    let Some(folder) = shared_clips("cmu/bvh") else { return };
    for (file, frames) in [("131_01.bvh", 994), ("131_02.bvh", 1247)] {
        let path = folder.join(file);
        let text = std::fs::read_to_string(&path).expect("the clip");
        let parsed = bvh::parse(&text, &path).unwrap_or_else(|error| panic!("{error}"));
        // 31 joints and an End Site at each of the 7 chains' ends.
        assert_eq!((parsed.joints.len(), parsed.frames, parsed.channels), (38, frames, 6 + 30 * 3), "{file}");
        assert!(parsed.warnings.is_empty(), "{file}: {:?}", parsed.warnings);
        let model = load_model(&path, &[]).unwrap_or_else(|error| panic!("{error}"));
        let note = model.stats.notes.iter().find(|note| note.contains("BVH units")).expect("the unit note");
        assert!(note.contains("CMU units"), "{note}");
        let animation = &model.animations[0];
        assert!((animation.duration - (frames - 1) as f32 / 120.0).abs() < 1e-3, "{file}: {}", animation.duration);
        // Frame 0's root position is the first three numbers of the first frame's line, in metres.
        let first: Vec<f32> = text
            .lines()
            .skip_while(|line| !line.starts_with("Frame Time"))
            .nth(1)
            .expect("a frame")
            .split_whitespace()
            .take(3)
            .map(|word| word.parse().expect("a number"))
            .collect();
        let mut pose = vec![JointPose::IDENTITY; model.skeleton.len()];
        animation.sample(&model.skeleton, 0.0, &mut pose);
        let expected = Vec3::new(first[0], first[1], first[2]) * 0.056444;
        assert!((pose[0].translation - expected).length() < 1e-5, "{file}: {} against {expected}", pose[0].translation);
        // The skeleton walks: its cells hold the joints over the motion, beyond the rest pose.
        let (rest, moved) = (model.bind_bounds(), model.animated_bounds());
        assert!(moved.size().x.max(moved.size().z) > rest.size().x.max(rest.size().z) + 0.5, "{file}: {moved:?}");
        // And stands on the ground: its lowest joint over the clip is near the rest pose's feet.
        assert!((moved.min.y - rest.min.y).abs() < 0.2, "{file}: {} against {}", moved.min.y, rest.min.y);
    }
}

#[test]
fn a_bvh_alone_renders_its_skeleton_and_plays_on_a_character() {
    let Some(folder) = shared_clips("cmu/bvh") else { return };
    let clip = folder.join("131_01.bvh");
    let out = scratch_in("bvh_loader", "walk.png");
    let output = vkskin()
        .args(["render", "--validate", "--size", "160x120", "--time", "2", "--out"])
        .arg(&out)
        .arg(&clip)
        .output()
        .expect("runs");
    let message = text(&output);
    assert!(
        output.status.success() && message.contains("131_01") && message.contains("validation: 0 errors, 0 warnings"),
        "{message}"
    );
    // On the bundled figure, by joint name: the load report says what matched.
    let model = load_model(&vkskin::app::default_model_path(), &[clip]).unwrap_or_else(|error| panic!("{error}"));
    let report = model.stats.warnings.iter().chain(&model.stats.notes).find(|line| line.contains("clips of 131_01.bvh"));
    println!("{report:?}");
    assert!(report.is_some_and(|line| line.contains("humanoid role") && line.contains("by role)")), "{:?}", model.stats);
    assert_eq!(model.clips.last().map(|clip| clip.name.as_str()), Some("131_01"));
}

/// A BVH of `joints` joints chained, each with three rotation channels, and `lines` frames.
fn chain(joints: usize, declared: u64, lines: usize) -> String {
    let mut text = String::from("HIERARCHY\n");
    for index in 0..joints {
        let keyword = if index == 0 { "ROOT" } else { "JOINT" };
        text += &format!("{keyword} j{index}\n{{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n");
    }
    text += &"}\n".repeat(joints);
    text += &format!("MOTION\nFrames: {declared}\nFrame Time: 0.0333\n");
    let line = format!("{}\n", vec!["1.5"; joints * 3].join(" "));
    text += &line.repeat(lines);
    text
}

#[test]
fn hostile_bvh_files_end_in_one_clean_line_or_a_bounded_load() {
    // Past the joint limit: refused at the joint that passes it.
    let error = bvh::parse(&chain(65_537, 1, 0), std::path::Path::new("many.bvh")).expect_err("too many joints");
    assert!(error.to_string().contains("expected at most 65536 joints"), "{error}");
    // 65,536 nested joints: read without recursion; 10 million frames declared, 2 given: 2 played.
    let deep = chain(65_536, 10_000_000, 2);
    let parsed = bvh::parse(&deep, std::path::Path::new("deep.bvh")).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!((parsed.joints.len(), parsed.frames), (65_536, 2));
    assert!(parsed.warnings.iter().any(|warning| warning.contains("Frames: says 10000000")), "{:?}", parsed.warnings);
    // A million channels declared on one joint, an unnamed channel, nesting left open.
    let path = scratch_in("bvh_loader", "hostile.bvh");
    for (file, expected) in [
        (
            "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1000000 Xrotation\n}\nMOTION\n",
            ":5: expected a channel count from 0 to 6",
        ),
        ("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Qrotation\n}\nMOTION\n", ":5: expected a channel (Xposition"),
        ("HIERARCHY\nROOT a\n{\n", ":3: expected MOTION, found the end of the file"),
        ("HIERARCHY\nROOT a\n{\nOFFSET inf 0 0\n", ":4: expected an OFFSET value"),
    ] {
        std::fs::write(&path, file).expect("written");
        let output = vkskin().arg("inspect").arg(&path).output().expect("runs");
        let message = text(&output);
        assert!(!output.status.success() && message.contains(expected), "{expected}: {message}");
        assert_eq!(message.trim_end().lines().count(), 1, "{message}");
    }
}

/// CMU's 3ds Max names (`LeftShoulder` for the upper arm, under a `LeftCollar`) meet a rig that
/// names its bones otherwise (Quaternius' `Shoulder.L` clavicle, `UpperArm.L`, legs hung from a
/// `Body` above its `Hips`) by humanoid role: the bones of the carried walk point as the mocap's.
#[test]
fn a_cmu_walk_plays_on_a_character_of_another_naming_by_role() {
    let (Some(folder), Some(man)) = (shared_clips("cmu/bvh"), crate::common::shared_models("fbx/QuaterniusMan")) else { return };
    let source = vkskin::formats::read_model(&folder.join("131_01.bvh"), &[]).unwrap_or_else(|error| panic!("{error}"));
    let target = vkskin::formats::read_model(&man.join("Male_Casual.fbx"), &[]).unwrap_or_else(|error| panic!("{error}"));
    let (carried, angles) = crate::common::carried_first_clip(&source, &target);
    // Arms and legs on both sides, the spine, neck and head.
    assert!(carried.matched >= 16, "{}", carried.report(source.skeleton.len()));
    // Measured: 11 bones, median 0.52°, worst 25.7° (the hip bone, which the two rigs shape apart).
    assert!(angles.bones >= 8 && angles.median < 2.0 && angles.worst < 35.0, "{angles:?}");
}
