//! GPU tests on lavapipe with the validation layer (synchronization validation included) on: any
//! warning or error message fails the test that caused it.
//!
//! The GPU's skinned vertices and palettes are checked against the CPU reference in src/anim.

use crate::common::{assert_no_validation_messages, check_skinning, default_model, skin_on_gpu, validated_device};
use glam::Vec3;
use vkskin::anim::{JointPose, Layer, Property};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::model::Model;
use vkskin::render::reference::reference_palette;
use vkskin::render::shader_types::NO_CLIP;

/// Three instances, out of phase, moved and turned: the CPU reference must follow all of it.
fn varied_setup(model: Model) -> SceneSetup {
    let mut setup = SceneSetup::new(model, 3);
    setup.instances[0].phase = 0.0;
    setup.instances[1].phase = 0.61;
    setup.instances[1].yaw = 0.8;
    setup.instances[2].phase = 1.37;
    setup.instances[2].yaw = -2.1;
    setup.instances[2].speed = 1.3;
    setup.instances[2].position += Vec3::new(0.3, 0.2, -0.4);
    setup
}

#[test]
fn gpu_skinning_matches_the_cpu_reference() {
    let model = default_model();
    assert!(!model.clips.is_empty(), "the bundled model has a clip");
    let setup = varied_setup(model);
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 160, 120).expect("renderer");
    for seconds in [0.0, 0.37, 1.234] {
        let scene = setup.frame(seconds, headless.aspect());
        let times: Vec<f32> = scene.instance_data(&setup.model).iter().map(|instance| instance.time_a).collect();
        assert!(times[0] != times[1] && times[1] != times[2], "instances are out of phase: {times:?}");
        let (skinned, _) = skin_on_gpu(&mut headless, &scene);
        assert_eq!(skinned.len(), setup.model.vertices.len() * 3);
        let (position, normal) = check_skinning(&setup.model, &scene, &skinned);
        println!("t = {seconds}: worst position error {position:e}, worst normal error {normal:e}");
    }
    assert_no_validation_messages(&device);
}

/// The skin pass's tuning (workgroup size, stores staged in shared memory) changes how
/// the work is laid out, never the result: every variant skins the same bits, including a level
/// whose vertex count is no multiple of any workgroup size (3724) and 150 instances.
#[test]
fn every_skin_tuning_skins_the_same_vertices() {
    use vkskin::render::SkinTuning;
    use vkskin::render::{RenderSettings, Strategy};
    let setup = varied_setup(default_model());
    let mut setup_many = SceneSetup::new(setup.model.clone(), 150);
    setup_many.play(0, 0.0, 0.0);
    let device = validated_device();
    for setup in [&setup, &setup_many] {
        let mut results = Vec::new();
        for (workgroup_size, staged_stores) in [(64, false), (32, true), (64, true), (128, false), (256, true), (512, true)] {
            let tuning = SkinTuning { workgroup_size, staged_stores };
            let settings = RenderSettings { skin: Some(tuning), ..RenderSettings::default() };
            let mut headless =
                HeadlessRenderer::with_settings(&device, setup, (64, 48), Strategy::Compute, settings).expect("renderer");
            let scene = setup.frame(0.83, headless.aspect());
            let (skinned, _) = skin_on_gpu(&mut headless, &scene);
            let bits: Vec<u8> = bytemuck::cast_slice(&skinned).to_vec(); // positions, normals, tangents
            results.push((tuning, bits, skinned));
        }
        let (_, reference, skinned) = &results[0];
        check_skinning(&setup.model, &setup.frame(0.83, 64.0 / 48.0), skinned);
        for (tuning, bits, _) in &results[1..] {
            assert!(bits == reference, "{tuning:?} skins other vertices than the default");
        }
    }
    assert_no_validation_messages(&device);
}

/// Every instance at the origin, unturned and in step: their palettes then differ only by what
/// the test changes.
fn stand_together(setup: &mut SceneSetup) {
    for instance in &mut setup.instances {
        instance.position = Vec3::ZERO;
        instance.yaw = 0.0;
        instance.phase = 0.0;
    }
}

/// The palette pass runs one invocation per kept instance in workgroups of 64, counted by the
/// cull pass: 150 instances at different times make three workgroups, the last one partly full,
/// and every instance's palette must still be its own.
#[test]
fn more_instances_than_one_palette_workgroup_each_get_their_own_palette() {
    let count = 150;
    assert!(count > 2 * vkskin::render::passes::palette::WORKGROUP_SIZE as usize);
    let mut setup = SceneSetup::new(default_model(), count);
    stand_together(&mut setup);
    // Each instance 13 ms further into the clip.
    for (index, instance) in setup.instances.iter_mut().enumerate() {
        instance.phase = index as f32 * 0.013;
    }
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 64, 64).expect("renderer");
    let scene = setup.frame(0.0, 1.0);
    let (_, palettes) = skin_on_gpu(&mut headless, &scene);
    let joint_count = setup.model.skeleton.len();
    let tolerance = 1e-4 * setup.model.extent();
    for (instance, data) in scene.instance_data(&setup.model).iter().enumerate() {
        for (joint, expected) in reference_palette(&setup.model, data).iter().enumerate() {
            let gpu = palettes[instance * joint_count + joint].to_mat4();
            assert!(gpu.abs_diff_eq(*expected, tolerance), "instance {instance} joint {joint}: GPU {gpu} vs {expected}");
        }
    }
    assert_no_validation_messages(&device);
}

#[test]
fn gpu_palettes_hit_keyframes_and_interpolate_halfway() {
    let model = default_model();
    let frame_rate = model.animations[0].frame_rate.expect("MD5 counts frames");
    let mut setup = SceneSetup::new(model, 2);
    stand_together(&mut setup);
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 64, 64).expect("renderer");
    let joint_count = setup.model.skeleton.len();
    let frame = 5;
    let keyframe_time = frame as f32 / frame_rate;
    let halfway_time = (frame as f32 + 0.5) / frame_rate;

    // At the clock's 0 each instance is its phase into the clip (which starts the animation).
    assert_eq!(setup.model.clips[0].start, 0.0);
    setup.instances[0].phase = keyframe_time;
    setup.instances[1].phase = halfway_time;
    setup.instances[0].speed = 1.0;
    setup.instances[1].speed = 1.0;
    let scene = setup.frame(0.0, 1.0);
    let data = scene.instance_data(&setup.model);
    assert_eq!((data[0].time_a, data[1].time_a), (keyframe_time, halfway_time));
    let (_, palettes) = skin_on_gpu(&mut headless, &scene);

    // Halfway between two frames every local pose is the lerp of translations and the slerp of
    // rotations of the frames' local poses (MD5 frames are local values).
    let animation = &setup.model.animations[0];
    let local = |time: f32| {
        let mut poses = vec![JointPose::IDENTITY; joint_count];
        animation.sample(&setup.model.skeleton, time, &mut poses);
        poses
    };
    let (at_key, halfway, next_key) = (local(keyframe_time), local(halfway_time), local((frame + 1) as f32 / frame_rate));
    for joint in 0..joint_count {
        let (a, b) = (at_key[joint], next_key[joint]);
        assert!(halfway[joint].translation.distance((a.translation + b.translation) * 0.5) < 1e-5);
        assert!(halfway[joint].rotation.angle_between(a.rotation.slerp(b.rotation, 0.5)) < 1e-3);
    }
    let tolerance = 1e-4 * setup.model.extent();
    for (instance, expected) in
        [reference_palette(&setup.model, &data[0]), reference_palette(&setup.model, &data[1])].iter().enumerate()
    {
        for joint in 0..joint_count {
            let gpu = palettes[instance * joint_count + joint].to_mat4();
            assert!(
                gpu.abs_diff_eq(expected[joint], tolerance),
                "instance {instance} joint {joint}: GPU {gpu} vs {}",
                expected[joint]
            );
        }
    }
    assert_no_validation_messages(&device);
}

#[test]
fn without_animation_the_gpu_reproduces_the_bind_pose() {
    let mut model = default_model();
    model.clips.clear();
    let mut setup = SceneSetup::new(model, 2);
    setup.instances[1].yaw = 1.0;
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 64, 64).expect("renderer");
    let scene = setup.frame(0.5, 1.0);
    assert!(scene.instance_data(&setup.model).iter().all(|instance| instance.animation_a() == NO_CLIP));
    let (skinned, _) = skin_on_gpu(&mut headless, &scene);
    let tolerance = 1e-4 * setup.model.extent();
    let vertex_count = setup.model.vertices.len();
    for (instance_index, instance) in setup.instances.iter().enumerate() {
        let world = instance.world();
        for (vertex_index, vertex) in setup.model.vertices.iter().enumerate() {
            let expected = world.transform_point3(vertex.position);
            let gpu = Vec3::from_array(skinned[instance_index * vertex_count + vertex_index].position);
            assert!(
                gpu.distance(expected) <= tolerance,
                "instance {instance_index} vertex {vertex_index}: {gpu} vs bind pose {expected}"
            );
        }
    }
    assert_no_validation_messages(&device);
}

/// The bundled walk with every joint but the root only turning (bone lengths fixed at rest), and
/// the same played a third of the way on: two clips whose every joint differs.
fn turning_model() -> Model {
    let mut model = default_model();
    model.animations.truncate(1);
    let walk = &mut model.animations[0];
    walk.channels.retain(|channel| channel.joint == 0 || channel.property != Property::Translation);
    let mut shifted = walk.clone();
    shifted.name = "walk_shifted".into();
    for channel in &mut shifted.channels {
        let keys = channel.times.count();
        let stride = channel.values.len() / keys.max(1);
        channel.values.rotate_left((keys / 3) * stride);
    }
    model.animations.push(shifted);
    model.clips.clear();
    model.clip_each_animation();
    model.compute_bounds();
    model
}

/// Each joint's distance from its parent, from palettes (`world × model × inverse bind`).
fn bone_lengths(model: &Model, palettes: &[vkskin::render::shader_types::PaletteMatrix]) -> Vec<f32> {
    let place =
        |joint: usize| (palettes[joint].to_mat4() * model.skeleton.joints[joint].inverse_bind.inverse()).w_axis.truncate();
    model
        .skeleton
        .joints
        .iter()
        .enumerate()
        .map(|(joint, info)| info.parent.map_or(0.0, |parent| place(joint).distance(place(parent))))
        .collect()
}

#[test]
fn a_crossfade_blends_local_poses_on_the_gpu_as_on_the_cpu_and_keeps_bone_lengths() {
    let mut setup = SceneSetup::uniform(turning_model(), 2);
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 64, 64).expect("renderer");
    for instance in &mut setup.instances {
        instance.switch_clip(1, 1.0, 0.8);
    }
    let rest: Vec<f32> = setup
        .model
        .skeleton
        .joints
        .iter()
        .map(|joint| if joint.parent.is_some() { joint.rest.translation.length() } else { 0.0 })
        .collect();
    for seconds in [1.0, 1.3, 1.4, 1.79, 2.5] {
        let scene = setup.frame(seconds, 1.0);
        let data = scene.instance_data(&setup.model)[0];
        let expected_blend = (((seconds - 1.0) / 0.8) as f32).min(1.0);
        if expected_blend < 1.0 {
            assert_eq!((data.animation_a(), data.animation_b()), (0, 1), "fading from clip 0 to clip 1");
            assert!((data.blend - expected_blend).abs() < 1e-6);
        } else {
            assert_eq!((data.animation_a(), data.animation_b()), (1, NO_CLIP), "the fade is over");
        }
        let (skinned, palettes) = skin_on_gpu(&mut headless, &scene);
        check_skinning(&setup.model, &scene, &skinned);
        let reference = reference_palette(&setup.model, &data);
        for (joint, matrix) in reference.iter().enumerate() {
            assert!(palettes[joint].to_mat4().abs_diff_eq(*matrix, 1e-4 * setup.model.extent()), "t = {seconds}, joint {joint}");
        }
        // Local blending never shortens a limb (blending model-space poses did, mid-fade).
        let lengths = bone_lengths(&setup.model, &palettes);
        for (joint, (&found, &expected)) in lengths.iter().zip(&rest).enumerate() {
            assert!(
                (found - expected).abs() <= 1e-4 * setup.model.extent(),
                "t = {seconds}, joint {joint}: bone {found} vs {expected}"
            );
        }
    }
    assert_no_validation_messages(&device);
}

#[test]
fn a_layer_changes_only_its_subtree() {
    let mut setup = SceneSetup::uniform(turning_model(), 2);
    stand_together(&mut setup);
    let skeleton = &setup.model.skeleton;
    let arm = skeleton.joints.iter().position(|joint| joint.name == "upper_arm_left").expect("a left upper arm");
    let spans = skeleton.subtree_spans();
    let under_arm: Vec<bool> = spans.iter().map(|&(enter, _)| spans[arm].0 <= enter && enter < spans[arm].1).collect();
    assert!(under_arm.iter().filter(|&&under| under).count() >= 2, "the arm carries a forearm");
    setup.instances[1].layer = Some(Layer { clip: 1, joint: arm, weight: 0.7 });
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 64, 64).expect("renderer");
    let scene = setup.frame(0.4, 1.0);
    let data = scene.instance_data(&setup.model);
    assert!(data[1].layered() && !data[0].layered());
    let (skinned, palettes) = skin_on_gpu(&mut headless, &scene);
    check_skinning(&setup.model, &scene, &skinned);
    let joint_count = skeleton.len();
    let tolerance = 1e-4 * setup.model.extent();
    let reference = reference_palette(&setup.model, &data[1]);
    let mut moved = 0;
    for joint in 0..joint_count {
        let (plain, layered) = (palettes[joint].to_mat4(), palettes[joint_count + joint].to_mat4());
        assert!(layered.abs_diff_eq(reference[joint], tolerance), "joint {joint}: GPU {layered} vs {}", reference[joint]);
        if under_arm[joint] {
            moved += usize::from(!layered.abs_diff_eq(plain, tolerance));
        } else {
            assert!(layered.abs_diff_eq(plain, tolerance), "joint {joint} is outside the layer's subtree but moved");
        }
    }
    assert!(moved > 0, "the layer moved its subtree");
    assert_no_validation_messages(&device);
}

#[test]
fn three_hundred_frames_without_a_validation_message() {
    let setup = SceneSetup::new(default_model(), 4);
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 96, 64).expect("renderer");
    for frame in 0..300u32 {
        let scene = setup.frame(f64::from(frame) / 60.0, headless.aspect());
        headless.submit(&scene).expect("frame submits");
    }
    headless.renderer.wait_all().expect("frames finish");
    assert_eq!(headless.renderer.stats.frames_rendered, 300);
    // Timestamps came back for every pass, in order, and the frame took some time.
    let timings = headless.renderer.stats.timings.clone().expect("timestamp results");
    let passes: Vec<&str> = timings.milliseconds.iter().map(|(pass, _)| *pass).collect();
    assert_eq!(passes, vkskin::render::Pass::ALL.map(vkskin::render::Pass::name));
    assert!(timings.milliseconds.iter().all(|&(_, ms)| ms.is_finite() && ms >= 0.0) && timings.total() > 0.0, "{timings:?}");
    println!("last frame's GPU timings: {timings:?}");
    assert_no_validation_messages(&device);
}
