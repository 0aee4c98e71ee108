//! Fidelity of the GPU's animation against the files' own curves, for every model in `assets/` and
//! `../shared/models` that animates: skinned positions from the GPU equal the CPU reference within
//! 1e-5 of the model's extent at 20 random times per clip, for a plain instance, one mid-crossfade
//! and one with a layer, with the files' keys and with the clips compressed (tests/it/compression.rs
//! holds the compressed clips to the raw keys). The CPU reference samples the model's channels; the loader suites
//! (gltf_loader, ms3d_loader) and the MD5 check below hold those channels to each format's own
//! formulas evaluated independently, so the GPU is held to the spec through both.

use std::path::{Path, PathBuf};

use crate::common::{assert_no_validation_messages, validated_device, worst_position_against_reference};
use glam::{Mat4, Quat, Vec3};
use vkskin::anim::compress::{encode::compress, segment_record, Precision, TrackData, FOUR_COMPONENTS, RAW_BITS};
use vkskin::anim::Layer;
use vkskin::app::{default_animations, HeadlessRenderer, SceneSetup};
use vkskin::formats::{load_model, md5};
use vkskin::model::Model;

fn models() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = vec![root.join("assets/figure.md5mesh")];
    if let Some(shared) = crate::common::shared_models("") {
        for relative in [
            "gltf/RiggedSimple/RiggedSimple.glb",
            "gltf/RiggedFigure/RiggedFigure.glb",
            "gltf/CesiumMan/CesiumMan.glb",
            "gltf/Fox/Fox.glb",
            "gltf/SimpleSkin/SimpleSkin.gltf",
            "ms3d/ninja/ninja.ms3d",
        ] {
            paths.push(shared.join(relative));
        }
    }
    // The generated long clip: 60 joints, a key per joint per frame for 3 minutes.
    let long = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fidelity_long_clip.ms3d");
    let file =
        vkskin::generate::long_clip::long_clip(vkskin::generate::long_clip::JOINTS, vkskin::generate::long_clip::SECONDS, 30.0);
    std::fs::write(&long, vkskin::formats::ms3d::write(&file)).expect("scratch file");
    paths.push(long);
    paths
}

/// A joint with a parent and at least one child: where a layer does something visible.
fn layer_joint(model: &Model) -> usize {
    let mut children = vec![0usize; model.skeleton.len()];
    for joint in &model.skeleton.joints {
        if let Some(parent) = joint.parent {
            children[parent] += 1;
        }
    }
    model.skeleton.joints.iter().enumerate().position(|(index, joint)| joint.parent.is_some() && children[index] > 0).unwrap_or(0)
}

#[test]
fn gpu_skinning_follows_every_models_curves_with_crossfades_and_layers() {
    let device = validated_device();
    let mut random = 0x2545_f491_u64;
    // Each model with the files' keys, then with its clips compressed (the CPU reference decodes
    // them as the palette pass does).
    for (path, compressed) in models().into_iter().flat_map(|path| [(path.clone(), false), (path, true)]) {
        let mut model = load_model(&path, &default_animations(&path, &[])).unwrap_or_else(|error| panic!("{error}"));
        if compressed {
            model.compress_clips();
        }
        if model.animations.is_empty() || compressed && model.animations.iter().all(|animation| animation.compressed.is_none()) {
            continue;
        }
        follows_the_curves(&device, model, compressed, &mut random);
    }
    // A joint spinning two turns a segment: its compressed rotations store all four components.
    let mut spinning = spinning_cylinder();
    spinning.compress_clips();
    let compressed = spinning.animations[0].compressed.as_ref().expect("the spin compresses");
    let Some(TrackData::Packed(words)) =
        compressed.tracks.iter().map(|track| &track.data).find(|data| matches!(data, TrackData::Packed(_)))
    else {
        panic!("a packed track");
    };
    assert!(words[segment_record(0) + 1] >> 24 & FOUR_COMPONENTS != 0, "the first segment stores four components");
    follows_the_curves(&device, spinning, true, &mut random);
    // The twisted cylinder's own clip held to a nanometre, which no quantization keeps: every
    // segment stores its values as they are.
    let mut exact = vkskin::generate::twist::twisted_cylinder(false);
    let precision = Precision { error: 1e-9, ..Precision::for_figure(exact.extent()) };
    let compressed = compress(&exact.skeleton, &exact.animations[0], &precision).expect("the twist compresses");
    let packed = compressed.tracks.iter().filter_map(|track| match &track.data {
        TrackData::Packed(words) => Some(words[segment_record(0)] >> 24),
        _ => None,
    });
    assert_eq!(packed.collect::<Vec<_>>(), [RAW_BITS], "the first segment's width");
    exact.animations[0].compressed = Some(compressed);
    follows_the_curves(&device, exact, true, &mut random);
    assert_no_validation_messages(&device);
}

/// The twisted cylinder (`generate::twist`) whose tip spins about its axis a little over 45° a
/// key at 30 keys a second for two seconds: within each 16-sample segment every component of its
/// rotation comes near 0.
fn spinning_cylinder() -> Model {
    let mut model = vkskin::generate::twist::twisted_cylinder(false);
    let values = (0..=60).flat_map(|key| Quat::from_rotation_y(key as f32 * 0.7855).to_array()).collect();
    let times = vkskin::anim::KeyTimes::Uniform { start: 0.0, step: 1.0 / 30.0, count: 61 };
    let animation = &mut model.animations[0];
    animation.channels = vec![vkskin::anim::Channel::linear(1, vkskin::anim::Property::Rotation, times, values)];
    animation.duration = 2.0;
    model.name = "spinning_cylinder".into();
    model.clips.clear();
    model.clip_each_animation();
    model.compute_bounds();
    model
}

/// Skinned positions from the GPU against the CPU reference at 20 random times for a plain
/// instance, one mid-crossfade and one with a layer (see the module's header).
fn follows_the_curves(device: &std::sync::Arc<vkskin::gpu::Device>, mut model: Model, compressed: bool, random: &mut u64) {
    // A second clip to fade into and layer: the model's own, or the second half of the first.
    if model.clips.len() < 2 {
        let half = model.clips[0].duration / 2.0;
        model.clips.push(vkskin::anim::Clip {
            name: "second half".into(),
            animation: 0,
            start: half,
            duration: half,
            motion: None,
        });
    }
    let extent = model.extent();
    let name = model.name.clone();
    let mut setup = SceneSetup::new(model, 3);
    // Another clip than the one that plays by default, to fade into and to layer.
    let other = if setup.instances[1].clip == Some(1) { 0 } else { 1 };
    setup.instances[1].switch_clip(other, 0.0, 1e9); // fading for the whole test
    setup.instances[1].fade.as_mut().expect("a fade").started = -1e9 / 2.0;
    setup.instances[2].layer = Some(Layer { clip: other, joint: layer_joint(&setup.model), weight: 0.6 });
    let mut headless = HeadlessRenderer::new(device, &setup, 64, 48).expect("renderer");
    let duration = f64::from(setup.model.clips[0].duration.max(0.1));
    let mut worst = 0.0f32;
    for _ in 0..20 {
        *random ^= *random << 13;
        *random ^= *random >> 7;
        *random ^= *random << 17;
        let seconds = (*random % 10_000) as f64 / 10_000.0 * 2.0 * duration;
        let scene = setup.frame(seconds, 1.0);
        let data = scene.instance_data(&setup.model);
        assert!(data[1].fading() && data[2].layered());
        worst = worst.max(worst_position_against_reference(&mut headless, &setup.model, &scene));
    }
    let keys = if compressed { "compressed" } else { "the files' keys" };
    println!("{name} ({keys}): GPU against the curves, worst {worst:e} = {:e} of the extent {extent:.3}", worst / extent);
    assert!(worst <= 1e-5 * extent, "{name}: {worst:e} off, extent {extent}");
}

/// The MD5 format's own evaluation of a time, written out from the parsed document: each frame's
/// joints are the baseframe with the flagged components replaced (w implied, ≤ 0), the two frames
/// around the time are interpolated per joint in its parent's space (lerp, slerp), the last frame
/// running back into the first, and composed onto the parents; roots turn from Z-up to Y-up.
pub(crate) fn md5_reference(anim: &md5::Md5Anim, time: f32) -> Vec<Mat4> {
    let frames = anim.frames.len();
    let position = time * anim.frame_rate;
    let frame0 = (position.floor() as usize) % frames;
    let frame1 = (frame0 + 1) % frames;
    let fraction = position - position.floor();
    let local = |frame: usize, joint: usize| {
        let hierarchy = &anim.hierarchy[joint];
        let [base_position, base_orientation] = anim.baseframe[joint];
        let mut components =
            [base_position.x, base_position.y, base_position.z, base_orientation.x, base_orientation.y, base_orientation.z];
        let mut next = hierarchy.start_index as usize;
        for (bit, component) in components.iter_mut().enumerate() {
            if hierarchy.flags & (1 << bit) != 0 {
                *component = anim.frames[frame][next];
                next += 1;
            }
        }
        (
            Vec3::new(components[0], components[1], components[2]),
            md5::orientation_from_xyz(Vec3::new(components[3], components[4], components[5])),
        )
    };
    let z_up_to_y_up = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    let mut out: Vec<Mat4> = Vec::with_capacity(anim.hierarchy.len());
    for joint in 0..anim.hierarchy.len() {
        let ((p0, q0), (p1, q1)) = (local(frame0, joint), local(frame1, joint));
        let matrix = Mat4::from_rotation_translation(q0.slerp(q1, fraction).normalize(), p0.lerp(p1, fraction));
        let parent = usize::try_from(anim.hierarchy[joint].parent).ok();
        out.push(match parent {
            Some(parent) => out[parent] * matrix,
            None => Mat4::from_quat(z_up_to_y_up) * matrix,
        });
    }
    out
}

#[test]
fn md5_channels_follow_the_formats_own_evaluation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mesh = root.join("figure.md5mesh");
    let animations = default_animations(&mesh, &[]);
    let model = load_model(&mesh, &animations).expect("the bundled figure loads");
    let extent = model.extent();
    for (index, path) in animations.iter().enumerate() {
        let anim = md5::parse_anim(&std::fs::read_to_string(path).expect("anim"), path).expect("parses");
        let mut worst = 0.0f32;
        for step in 0..500 {
            let time = model.animations[index].duration * step as f32 / 500.0;
            for (found, expected) in model.joint_matrices(index, time).iter().zip(md5_reference(&anim, time)) {
                for probe in [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z] {
                    worst = worst.max(found.transform_point3(probe).distance(expected.transform_point3(probe)));
                }
            }
        }
        println!("{}: channels against the format's evaluation, worst {worst:e} of extent {extent:.3}", path.display());
        assert!(worst <= 1e-5 * extent, "{}: {worst:e}", path.display());
    }
}
