//! ACL's clip format (issue 41, part 2): the CMU clips in ../shared/clips/cmu/sjson, as ACL's own
//! regression data has them, read as their text says (skipped, with a message, when that folder is
//! absent), shown alone as a moving skeleton, and played on a character of another naming.

use crate::common::shared_clips;
use vkskin::anim::JointPose;
use vkskin::formats::{load_model, read_model};

#[test]
fn the_cmu_clips_read_as_the_readme_counts_them() {
    let Some(folder) = shared_clips("cmu/sjson") else { return };
    // The shared README's table: samples at 24 Hz; 44 joints.
    for (clip, samples) in [("13_07", 291), ("27_06", 574), ("49_09", 384), ("104_30", 273)] {
        let path = folder.join(format!("{clip}.acl.sjson"));
        let model = load_model(&path, &[]).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(model.skeleton.len(), 44, "{clip}");
        let animation = &model.animations[0];
        assert_eq!(animation.name, clip);
        assert!((animation.duration - (samples - 1) as f32 / 24.0).abs() < 1e-4, "{clip}: {}", animation.duration);
        assert!(model.stats.notes.iter().any(|note| note.contains("centimetres")), "{:?}", model.stats.notes);
        // The hip's rotation at sample 100 is the file's 101st rotation of the hip's track.
        let text = std::fs::read_to_string(&path).expect("the clip");
        let track = text.split("tracks =").nth(1).expect("tracks");
        let hip = track.split("name = \"hip\"").nth(1).expect("the hip's track");
        let row: Vec<f32> = hip
            .lines()
            .filter(|line| line.trim_start().starts_with("[ "))
            .nth(100)
            .expect("sample 100")
            .trim()
            .trim_matches(['[', ']'])
            .split(',')
            .map(|value| value.trim().parse().expect("a number"))
            .collect();
        let expected = glam::Quat::from_xyzw(row[0], row[1], row[2], row[3]).normalize();
        let mut pose = vec![JointPose::IDENTITY; model.skeleton.len()];
        animation.sample(&model.skeleton, 100.0 / 24.0, &mut pose);
        let hip = model.skeleton.joints.iter().position(|joint| joint.name == "hip").expect("a hip");
        assert!(pose[hip].rotation.angle_between(expected) < 1e-4, "{clip}: {:?} against {expected:?}", pose[hip].rotation);
        // It moves, and its cells follow it.
        assert!(model.animated_bounds().size().length() > model.bind_bounds().size().length(), "{clip}");
    }
}

#[test]
fn a_cmu_clip_in_acl_format_plays_on_a_character_of_another_naming() {
    let (Some(folder), Some(man)) = (shared_clips("cmu/sjson"), crate::common::shared_models("fbx/QuaterniusMan")) else {
        return;
    };
    let source = read_model(&folder.join("13_07.acl.sjson"), &[]).unwrap_or_else(|error| panic!("{error}"));
    let target = read_model(&man.join("Male_Casual.fbx"), &[]).unwrap_or_else(|error| panic!("{error}"));
    let (carried, angles) = crate::common::carried_first_clip(&source, &target);
    // Arms and legs on both sides, the spine, neck and head.
    assert!(carried.matched >= 15, "{}", carried.report(source.skeleton.len()));
    // Measured: 10 bones, median 0.00°, worst 13.2° (the hip bone: DAZ's rig has a buttock joint).
    assert!(angles.bones >= 8 && angles.median < 1.0 && angles.worst < 20.0, "{angles:?}");
}
