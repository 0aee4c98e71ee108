//! Root motion (issue 57), its first step: how far each clip carries the figure
//! (`Model::clip_travel`, printed by `inspect`). An in-place clip goes nowhere; CMU's walk
//! 131_01 walks, carried by its hips, further than the figure is tall.

use crate::common::{default_model, shared_clips};
use vkskin::formats::load_model;

#[test]
fn an_in_place_clip_goes_nowhere() {
    let model = default_model();
    for index in 0..model.animations.len() {
        let travel = model.clip_travel(index).expect("a clip with channels");
        println!("{}: {travel:?}", model.animations[index].name);
        assert!(travel.distance < 0.01 * model.extent(), "{}: {travel:?}", model.animations[index].name);
        assert!(travel.turn.abs() < 1.0);
    }
}

#[test]
fn a_motion_capture_walk_travels_from_its_hips() {
    let Some(clips) = shared_clips("cmu") else { return };
    let model = load_model(&clips.join("bvh/131_01.bvh"), &[]).expect("loads");
    let travel = model.clip_travel(0).expect("a clip with channels");
    let joint = &model.skeleton.joints[travel.joint].name;
    println!("131_01: {travel:?} ({joint}), the figure {} across", model.extent());
    assert!(joint.eq_ignore_ascii_case("hips"), "carried by {joint}");
    assert!(travel.distance > model.extent(), "{travel:?}");
    assert!(travel.path >= travel.distance);
    assert!((travel.speed * model.animations[0].duration - travel.distance).abs() < 1e-3 * travel.distance);
}
