//! Root motion (issue 57): how far each clip carries the figure (`Model::clip_travel`, printed by
//! `inspect`); the motion taken out of a travelling clip (`Model::extract_root_motion`), which then
//! plays in place while the instance is moved by it, across loops, blended by crossfades and
//! layers, the same on the GPU (the instances pass) as on the CPU, wrapped round a crowd's area.

use glam::{Mat4, Vec3};

use crate::common::{assert_no_validation_messages, default_model, shared_clips, shared_models, validated_device};
use vkskin::anim::{local_to_model, Channel, InstanceState, JointPose, KeyTimes, Layer, Property};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::formats::load_model;
use vkskin::model::Model;
use vkskin::render::instances::REBASE_SECONDS;
use vkskin::render::shader_types::{InstanceData, INSTANCE_RESTART};

#[test]
fn an_in_place_clip_goes_nowhere() {
    let mut model = default_model();
    for index in 0..model.animations.len() {
        let travel = model.clip_travel(index).expect("a clip with channels");
        println!("{}: {travel:?}", model.animations[index].name);
        assert!(travel.distance < 0.01 * model.extent(), "{}: {travel:?}", model.animations[index].name);
        assert!(travel.turn.abs() < 1.0);
    }
    let before = model.clone();
    assert!(model.extract_root_motion(None).is_empty(), "nothing to take out");
    assert_eq!(model, before, "an in-place clip is played as it was");
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

#[test]
fn a_capture_keyed_evenly_stays_on_its_grid() {
    // ACL's 27_06 is keyed at 24 Hz; its hips keyed anew for root motion stay at 24 Hz, so the clip
    // still compresses with its keys as its samples (keyed at 30 Hz it needed 240 Hz and was kept).
    let Some(clips) = shared_clips("cmu") else { return };
    let mut model = load_model(&clips.join("sjson/27_06.acl.sjson"), &[]).expect("loads");
    assert_eq!(model.extract_root_motion(None), vec![0], "27_06 travels");
    let motion = model.animations[0].motion.clone().expect("motion taken out");
    assert!((motion.step * 24.0 - 1.0).abs() < 1e-4, "sampled every {} s", motion.step);
    let compressed =
        vkskin::anim::compress::encode::compress(&model.skeleton, &model.animations[0], &model.compression_precision())
            .expect("compresses");
    assert_eq!(compressed.sample_rate().round(), 24.0, "its keys are its samples");
}

/// Every joint's world position of instance `state` of `model` at `seconds`: the clip's pose at
/// the time it plays, placed where the instance stands then (its root motion included).
fn joints_at(model: &Model, state: &InstanceState, seconds: f64) -> Vec<Vec3> {
    let data = InstanceData::at(state, &model.clips, seconds, None);
    let animation = model.clips[state.clip.expect("a clip")].animation;
    let mut poses = vec![JointPose::IDENTITY; model.skeleton.len()];
    let mut placed = vec![Mat4::IDENTITY; model.skeleton.len()];
    model.animations[animation].sample(&model.skeleton, data.time_a, &mut poses);
    local_to_model(&model.skeleton, &poses, data.world(), &mut placed);
    placed.iter().map(|matrix| matrix.w_axis.truncate()).collect()
}

/// The CMU walks 131_01 and 131_02 (their hips carry them) from ../shared.
fn motion_capture() -> Option<Model> {
    let clips = shared_clips("cmu")?;
    Some(load_model(&clips.join("bvh/131_01.bvh"), &[clips.join("bvh/131_02.bvh")]).expect("the CMU walks load"))
}

/// Quaternius's walk (made in place), moved forward by its hips as a Mixamo clip downloaded
/// without "in place" is: 0.6 of the figure a second along the way it faces.
fn walker_not_in_place() -> Option<Model> {
    let mut model = load_model(&shared_models("fbx")?.join("QuaterniusMan/Male_Casual.fbx"), &[]).expect("loads");
    let walk = model.clips.iter().position(|clip| clip.name.ends_with("Man_Walk")).expect("a walk");
    model.clips = vec![model.clips[walk].clone()];
    let animation = model.clips[0].animation;
    let hips = model.skeleton.joints.iter().position(|joint| joint.name.to_lowercase().contains("hips")).expect("hips");
    let yaw = model.facing_yaw().unwrap_or(0.0);
    let forward = Vec3::new(yaw.sin(), 0.0, yaw.cos()) * 0.6 * model.extent();
    // The hips' parent is still: the drift in its space.
    let mut poses = vec![JointPose::IDENTITY; model.skeleton.len()];
    let mut placed = vec![Mat4::IDENTITY; model.skeleton.len()];
    model.animations[animation].sample(&model.skeleton, 0.0, &mut poses);
    local_to_model(&model.skeleton, &poses, Mat4::IDENTITY, &mut placed);
    let joint = &model.skeleton.joints[hips];
    let above = joint.parent.map_or(Mat4::IDENTITY, |parent| placed[parent]) * joint.pre;
    let local = above.inverse().transform_vector3(forward);
    let duration = model.animations[animation].duration;
    let channel = model.animations[animation]
        .channels
        .iter_mut()
        .find(|channel| channel.joint == hips && channel.property == Property::Translation)
        .expect("the hips move");
    // Keyed anew 24 times a second (the file's rate): where the clip has them, moved on.
    let count = (duration * 24.0).round() as usize + 1;
    let step = duration / (count - 1) as f32;
    let values = (0..count)
        .flat_map(|key| (channel.sample(key as f32 * step).truncate() + local * key as f32 * step).to_array())
        .collect();
    *channel = Channel::linear(hips, Property::Translation, KeyTimes::Uniform { start: 0.0, step, count }, values);
    Some(model)
}

/// Taken out and put back: the clip played in place, moved by its motion, is the file's clip
/// (seen from where its carrying joint started) at its keys and between them, every joint but
/// the carrying joint's ancestors (a rig's armature, which travels with the instance now).
#[test]
fn a_clip_in_place_moved_by_its_motion_is_the_files() {
    for (name, model) in [("CMU 131_01", motion_capture()), ("a walk not in place", walker_not_in_place())] {
        let Some(file) = model else { continue };
        let mut model = file.clone();
        let animation = model.clips[0].animation;
        assert!(model.extract_root_motion(None).contains(&animation), "{name}: its clip travels");
        let motion = model.clips[0].motion.clone().expect("the clip has the motion");
        let start =
            Mat4::from_rotation_translation(glam::Quat::IDENTITY, Vec3::new(motion.samples[0][0], 0.0, motion.samples[0][1]));
        let state = InstanceState { clip: Some(0), ..InstanceState::default() };
        let duration = f64::from(model.clips[0].duration);
        let mut worst = 0.0f32;
        for step in 0..97 {
            let seconds = duration * step as f64 / 97.0;
            let moved = joints_at(&model, &state, seconds);
            let files = joints_at(&file, &state, seconds);
            // The carrying joint's ancestors (a rig's armature) travel with the instance now.
            let carried = |joint: &usize| !motion.carriers[1..].contains(joint);
            for joint in (0..moved.len()).filter(carried) {
                worst = worst.max(moved[joint].distance(start.inverse().transform_point3(files[joint])));
            }
        }
        println!("{name}: every joint within {:.2e} of the figure of the file's", worst / model.extent());
        assert!(worst < 2e-3 * model.extent(), "{name}: {worst}");
        let mut restored = model.clone();
        assert!(restored.restore_root_motion());
        for step in 0..13 {
            let seconds = duration * step as f64 / 13.0;
            for (back, file) in joints_at(&restored, &state, seconds).iter().zip(joints_at(&file, &state, seconds)) {
                // (Put back, every joint stands where the file has it, its ancestors too.)
                assert!(back.distance(file) < 2e-3 * model.extent(), "{name} put back, at {seconds} s");
            }
        }
    }
}

/// The carrying joint's place on the ground frame by frame (60 a second) over a loop's end: with
/// root motion no step is longer than a few of the others; as the file has it, the loop jumps
/// back. (Its height is the clip's own: a capture that ends higher than it began still steps up.)
#[test]
fn walkers_cross_a_loop_without_a_jump() {
    for (name, model) in [("CMU 131_01", motion_capture()), ("a walk not in place", walker_not_in_place())] {
        let Some(file) = model else { continue };
        let animation = file.clips[0].animation;
        let joint = file.clip_travel(animation).expect("travel").joint;
        let mut model = file.clone();
        model.extract_root_motion(None);
        let state = InstanceState { clip: Some(0), speed: 1.0, phase: 0.3, ..InstanceState::default() };
        let duration = f64::from(model.clips[0].duration);
        let ends = duration - 0.3; // the clock where the loop ends
        let steps = |model: &Model| -> (f32, f32) {
            let at = |frame: i32| joints_at(model, &state, ends + f64::from(frame) / 60.0)[joint] * Vec3::new(1.0, 0.0, 1.0);
            let lengths: Vec<f32> = (-30..30).map(|frame| at(frame).distance(at(frame + 1))).collect();
            let mut sorted = lengths.clone();
            sorted.sort_by(f32::total_cmp);
            (lengths.iter().copied().fold(0.0, f32::max), sorted[sorted.len() / 2])
        };
        let ((longest, median), (jump, _)) = (steps(&model), steps(&file));
        println!("{name}: with root motion the longest step over the loop {longest:.4} (median {median:.4}); as the file has it {jump:.4}");
        assert!(longest < 4.0 * median, "{name}: a step of {longest} where they are {median}");
        assert!(jump > 20.0 * median, "{name}: the file's loop jumps back ({jump})");
        let travel = model.clip_travel(animation).expect("the motion's travel");
        let (far, _) = InstanceState::moved_by(&state, model.clips[0].motion_between(0.3, 0.3 + 3.0 * duration));
        assert!(far.length() > 2.5 * travel.distance, "{name}: three loops walk on ({far})");
    }
}

/// A layer over the carrying joint moves the instance by the blend of both clips' motion; a
/// crossfade by the blend of their steps over the fade (64 steps, as fine as a thousand within 3 %
/// of the way: the hips' sway within a step is what the finer sum sees).
#[test]
fn a_blended_pair_moves_by_the_blend() {
    let Some(mut model) = motion_capture() else { return };
    assert_eq!(model.extract_root_motion(None), vec![0, 1], "both walks travel");
    let joint = model.clips[0].motion.as_ref().expect("motion").joint;
    let alone = |clip: usize| InstanceState { clip: Some(clip), ..InstanceState::default() };
    for seconds in [0.5, 3.0, 11.0] {
        let layered = InstanceState { layer: Some(Layer { clip: 1, joint, weight: 0.25 }), ..alone(0) };
        let (blend, first, second) = (
            layered.placement(&model.clips, seconds).0,
            alone(0).placement(&model.clips, seconds).0,
            alone(1).placement(&model.clips, seconds).0,
        );
        assert!(blend.distance(first.lerp(second, 0.25)) < 1e-4, "layered at {seconds} s: {blend} vs {first}, {second}");
        assert!(seconds < 3.0 || first.distance(second) > 0.1 * model.extent(), "the two walks part by {seconds} s");
    }
    let mut fading = alone(0);
    fading.switch_clip(1, 1.0, 2.0);
    let (fade, clips) = (fading.fade.expect("a fade"), &model.clips);
    let mut fine = vkskin::anim::Motion::IDENTITY;
    for step in 0..1000 {
        let (at, next) = (1.0 + 2.0 * step as f64 / 1000.0, 1.0 + 2.0 * (step + 1) as f64 / 1000.0);
        let weight = (0.5 * (at + next) - fade.started) / f64::from(fade.duration);
        let local = |seconds: f64| seconds; // speed 1, phase 0
        let old = clips[0].motion_between(local(at), local(next));
        fine = fine.then(old.lerp(clips[1].motion_between(local(at), local(next)), weight));
    }
    let coarse = fading.carried(clips, 1.0, 3.0);
    let way = fine.offset.length() as f32;
    println!(
        "a 2 s crossfade walks {way:.3}: 64 steps {:.2e} of it from a thousand",
        (coarse.offset - fine.offset).length() as f32 / way
    );
    assert!(((coarse.offset - fine.offset).length() as f32) < 0.03 * way);
    let after = fading.placement(clips, 5.0).0;
    let through = fading.moved_by(coarse.then(clips[1].motion_between(3.0, 5.0))).0;
    assert!(after.distance(through) < 1e-4 * way, "after the fade the new clip walks on from where it left off");
}

/// The instances pass moves walkers as the CPU does (a crowd wrapped round its area: a walker
/// that wraps restarts its motion), across loops, a crossfade, a layer and hours later (the
/// layered walker until the epoch first moves: see `docs/animation.md`).
#[test]
fn the_instances_pass_moves_walkers_as_the_cpu_does() {
    let Some(mut model) = motion_capture() else { return };
    model.extract_root_motion(None);
    model.bounds = model.cell_bounds();
    let joint = model.clips[0].motion.as_ref().expect("motion").joint;
    let mut setup = SceneSetup::new(model, 9);
    setup.play(1, 2.0, 1.5); // every instance fades to the second walk from 2 s
    setup.instances[4].layer = Some(Layer { clip: 0, joint, weight: 0.5 });
    let area = setup.walk_area().expect("a crowd of walkers has an area");
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 64, 48).expect("renderer");
    let hours = 3.0 * 3600.0 + 0.25;
    let (mut worst, mut restarts) = (0.0f32, 0);
    let clocks: Vec<f64> = (0..80).map(|frame| f64::from(frame) * 0.25).chain([hours, hours + 1.0 / 60.0]).collect();
    for (frame, seconds) in clocks.into_iter().enumerate() {
        headless.render(&setup.frame(seconds, headless.aspect())).expect("frame");
        let (gpu, _) = headless.renderer.read_back_instances().expect("read back");
        let cpu = setup.instance_data(seconds);
        for (index, (gpu, cpu)) in gpu.iter().zip(&cpu).enumerate() {
            let inside = |value: f32, min: f32, size: f32| (min - 1e-3..=min + size + 1e-3).contains(&value);
            let [x, _, z, _] = gpu.position_yaw;
            assert!(inside(x, area.min.x, area.size.x) && inside(z, area.min.y, area.size.y), "instance {index} at {seconds} s");
            // Alike up to a whole wrap where one is at an edge.
            let apart = |a: f32, b: f32, size: f32| {
                let d = (a - b).abs();
                d.min((d - size).abs())
            };
            // A layer's blend of two clips' motion is made from the records' epoch (moved every
            // REBASE_SECONDS), the CPU's from the instance's origin: alike until the epoch moves.
            if index == 4 && seconds > REBASE_SECONDS {
                continue;
            }
            worst = worst
                .max(apart(gpu.position_yaw[0], cpu.position_yaw[0], area.size.x))
                .max(apart(gpu.position_yaw[2], cpu.position_yaw[2], area.size.y))
                .max((gpu.position_yaw[3] - cpu.position_yaw[3]).abs());
            // Not the first frame's, nor the jump to hours later: wraps.
            restarts += usize::from((1..80).contains(&frame) && gpu.skinning & INSTANCE_RESTART != 0);
        }
    }
    println!("walkers on the GPU: at most {worst:.2e} from the CPU's (f64); {restarts} wrapped and restarted");
    assert!(worst < 2e-3 * setup.model.extent(), "{worst}");
    assert!(restarts > 0, "walkers wrapped round the area and restarted");
    assert_no_validation_messages(&device);
}

/// The viewer with a travelling clip: its first frame drawn from the keys, the compressed clips
/// swapped in by the worker (issue 57, item 5); the panel's root motion turned off and on again
/// (the motion put back into the keys and taken out, the changed clips compressed again), with
/// the validation layer on.
#[test]
fn the_viewer_swaps_compressed_clips_in_and_switches_root_motion() {
    let Some(clips) = shared_clips("cmu") else { return };
    if !crate::common::xvfb_available() {
        return;
    }
    let mut command = crate::common::view_under_xvfb();
    command
        .arg(vkskin::app::default_model_path())
        .args(["--anim"])
        .arg(clips.join("bvh/131_01.bvh"))
        .args(["--instances", "4", "--frames", "40", "--size", "320x180", "--validate"])
        .args(["--drive", "10:root-motion=off;25:root-motion=on"])
        .env("RUST_LOG", "info");
    let output = command.output().expect("the viewer runs");
    let message = crate::common::text(&output);
    assert!(output.status.success() && message.contains("validation: 0 errors, 0 warnings"), "{message}");
    assert!(message.contains("first frame"), "{message}");
    let compressed: Vec<&str> = message.lines().filter(|line| line.contains("clips compressed")).collect();
    println!("{compressed:#?}");
    assert!(compressed.len() >= 3, "compressed after the first frame and after each switch: {message}");
    assert!(compressed.iter().all(|line| line.contains(" 1 clips compressed")), "{compressed:?}");
}
