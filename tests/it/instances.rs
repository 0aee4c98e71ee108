//! Instances that live on the GPU: the instances pass makes each instance's data from its record
//! and the frame's clock as the CPU would (`SceneSetup::instance_data`, in f64), flags its motion
//! as the CPU's mirror does (`FrameHistory::cpu_instances`), and the CPU writes only the records
//! of what changed.

use glam::Vec3;

use crate::common::{assert_no_validation_messages, default_model, validated_device};
use vkskin::anim::{Layer, Skinning};
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::render::history::FrameHistory;
use vkskin::render::instances::REBASE_SECONDS;
use vkskin::render::shader_types::{InstanceData, INSTANCE_FLAGS};

/// A crowd of 70 (more than one workgroup) playing both clips at their own phases and speeds,
/// one fading, one layered, one blending dual quaternions, one on a clip its model lacks.
fn busy_crowd() -> SceneSetup {
    let mut setup = SceneSetup::new(default_model(), 70);
    assert!(setup.model.clips.len() >= 2, "the bundled figure has two clips");
    setup.instances[3].switch_clip(1, 0.0, 1e6); // fading from 0 to 1 for as long as the test runs
    setup.instances[4].layer = Some(Layer { clip: 1, joint: 3, weight: 0.4 });
    setup.instances[5].skinning = Skinning::DualQuaternion;
    setup.instances[6].clip = Some(99);
    setup
}

/// Every field the passes read: the discrete ones equal, the times and the blend within
/// `tolerance` (f32 arithmetic from the epoch against the CPU's f64).
fn assert_plays_alike(gpu: &[InstanceData], cpu: &[InstanceData], seconds: f64, tolerance: f32) {
    assert_eq!(gpu.len(), cpu.len());
    for (index, (gpu, cpu)) in gpu.iter().map(InstanceData::without_flags).zip(cpu).enumerate() {
        let at = format!("instance {index} at {seconds} s");
        assert_eq!(
            (gpu.animations, gpu.layer, gpu.skinning, gpu.tint),
            (cpu.animations, cpu.layer, cpu.skinning, cpu.tint),
            "{at}"
        );
        assert_eq!((gpu.position_yaw, gpu.scale, gpu.layer_weight), (cpu.position_yaw, cpu.scale, cpu.layer_weight), "{at}");
        for (what, found, expected) in [
            ("time a", gpu.time_a, cpu.time_a),
            ("time b", gpu.time_b, cpu.time_b),
            ("layer time", gpu.time_layer, cpu.time_layer),
        ] {
            assert!((found - expected).abs() <= tolerance, "{at}: {what} {found} vs {expected}");
        }
        assert!((gpu.blend - cpu.blend).abs() <= 1e-5, "{at}: blend {} vs {}", gpu.blend, cpu.blend);
    }
}

#[test]
fn the_instances_pass_plays_what_the_cpu_plays() {
    let setup = busy_crowd();
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 64, 48).expect("renderer");
    // The clock's steps, a jump back, then hours later (the epoch moves: every record again).
    let hours = 5.0 * 3600.0 + 0.123;
    let clocks = [0.0, 0.37, 1.9, 0.8, hours, hours + 0.016, hours + REBASE_SECONDS * 0.9, hours + REBASE_SECONDS * 1.7];
    let mut worst = 0.0f32;
    for seconds in clocks {
        headless.render(&setup.frame(seconds, headless.aspect())).expect("frame");
        let (gpu, _) = headless.renderer.read_back_instances().expect("read back");
        let cpu = setup.instance_data(seconds);
        assert_plays_alike(&gpu, &cpu, seconds, 2e-5);
        let differs = gpu.iter().zip(&cpu).map(|(gpu, cpu)| (gpu.time_a - cpu.time_a).abs());
        worst = differs.fold(worst, f32::max);
    }
    println!("the instances pass's clip times: at most {worst:e} s from the CPU's f64 clock");
    let data = setup.instance_data(1.9);
    assert!(data[3].fading() && data[4].layered() && data[5].dual_quaternion(), "the crowd holds every case");
    assert_no_validation_messages(&device);
}

/// Frame by frame, the GPU's motion flags are the CPU mirror's: playing on, paused, a clip
/// switched without a crossfade, a crossfade's start and end, a teleport, a layer put on, a
/// switch of skinning mode, a weight set by hand, a cut.
#[test]
fn the_instances_pass_flags_motion_as_the_cpu_mirror_does() {
    let mut setup = SceneSetup::uniform(default_model(), 4);
    let device = validated_device();
    let mut headless = HeadlessRenderer::new(&device, &setup, 64, 48).expect("renderer");
    let mut mirror = FrameHistory::new(true, &[0; 4]);
    let frame = |mirror: &mut FrameHistory,
                 setup: &SceneSetup,
                 headless: &mut HeadlessRenderer,
                 seconds: f64,
                 teleported: &[usize],
                 what: &str| {
        let scene = setup.frame(seconds, headless.aspect());
        headless.render(&scene).expect("frame");
        let (gpu, _) = headless.renderer.read_back_instances().expect("read back");
        let mut cpu = setup.instance_data(seconds);
        for &index in teleported {
            cpu[index] = cpu[index].restart_motion();
        }
        let flags = mirror.instance_flags(&scene.morph_overrides);
        let expected: Vec<u32> =
            mirror.cpu_instances(&cpu, flags, None).iter().map(|data| data.skinning & INSTANCE_FLAGS).collect();
        let found: Vec<u32> = gpu.iter().map(|data| data.skinning & INSTANCE_FLAGS).collect();
        assert_eq!(
            found,
            expected,
            "{what}: the GPU's flags against the mirror's (still {}, restart {})",
            1u32 << 30,
            1u32 << 31
        );
        found
    };
    let first = frame(&mut mirror, &setup, &mut headless, 0.5, &[], "the first frame");
    assert!(first.iter().all(|&flags| flags == 1 << 31), "the first frame restarts: {first:?}");
    let playing = frame(&mut mirror, &setup, &mut headless, 0.55, &[], "playing on");
    assert!(playing.iter().all(|&flags| flags == 0), "{playing:?}");
    let paused = frame(&mut mirror, &setup, &mut headless, 0.55, &[], "paused");
    assert!(paused.iter().all(|&flags| flags == 1 << 30), "{paused:?}");
    setup.instances[0].switch_clip(1, 0.6, 0.0);
    setup.instances[1].switch_clip(1, 0.6, 0.5);
    setup.instances[2].position += Vec3::X;
    setup.instances.restart_motion(2);
    let switched = frame(&mut mirror, &setup, &mut headless, 0.6, &[2], "a switch, a crossfade's start, a teleport");
    assert_eq!((switched[0], switched[1], switched[2]), (1 << 31, 0, 1 << 31), "{switched:?}");
    frame(&mut mirror, &setup, &mut headless, 1.2, &[], "the crossfade's end");
    setup.instances[0].layer = Some(Layer { clip: 0, joint: 3, weight: 0.5 });
    setup.instances[1].skinning = Skinning::DualQuaternion;
    frame(&mut mirror, &setup, &mut headless, 1.25, &[], "a layer, a skinning mode");
    setup.morph_overrides = vec![Some(0.5)];
    frame(&mut mirror, &setup, &mut headless, 1.25, &[], "a weight set by hand, paused");
    headless.renderer.cut_motion();
    mirror.cut();
    let cut = frame(&mut mirror, &setup, &mut headless, 1.3, &[], "a cut");
    assert!(cut.iter().all(|&flags| flags & (1 << 31) != 0), "{cut:?}");
    assert_no_validation_messages(&device);
}

/// The CPU writes every record on a renderer's first frame, none in a steady scene, and those of
/// the instances an edit touched; a second renderer drawing the same scene catches up on its own.
#[test]
fn only_the_records_that_changed_are_written() {
    let mut setup = busy_crowd();
    let device = validated_device();
    let mut first = HeadlessRenderer::new(&device, &setup, 64, 48).expect("renderer");
    let uploaded = |headless: &mut HeadlessRenderer, setup: &SceneSetup, seconds: f64| {
        headless.render(&setup.frame(seconds, headless.aspect())).expect("frame");
        headless.renderer.stats.records_uploaded
    };
    assert_eq!(uploaded(&mut first, &setup, 0.1), 70, "the first frame");
    assert_eq!(uploaded(&mut first, &setup, 0.2), 0, "a steady frame");
    assert_eq!(uploaded(&mut first, &setup, 0.3), 0, "another");
    setup.instances[10].speed = 2.0;
    setup.instances[11].tint = [1.0, 0.0, 0.0, 1.0];
    setup.instances[40].speed = 0.5;
    assert_eq!(uploaded(&mut first, &setup, 0.4), 3, "three instances edited");
    let mut second = HeadlessRenderer::new(&device, &setup, 64, 48).expect("renderer");
    assert_eq!(uploaded(&mut second, &setup, 0.4), 70, "a second renderer's first frame");
    setup.instances[12].yaw = 1.0;
    assert_eq!(uploaded(&mut second, &setup, 0.5), 1, "an edit, seen by the second");
    assert_eq!(uploaded(&mut first, &setup, 0.5), 1, "and by the first");
    for headless in [&first, &second] {
        let (gpu, _) = headless.renderer.read_back_instances().expect("read back");
        assert_plays_alike(&gpu, &setup.instance_data(0.5), 0.5, 2e-5);
    }
    let switching = setup.instances.iter().filter(|instance| instance.clip != Some(0)).count();
    assert!(switching > 1 && switching < 70, "{switching} play another clip");
    setup.play(0, 0.6, 0.0);
    assert_eq!(uploaded(&mut first, &setup, 0.6) as usize, switching, "those that switched, and only those");
    assert_no_validation_messages(&device);
}
