//! Compressed clips (src/anim/compress) against the raw keys they came from, on the CPU: every
//! shared model's clips, the bundled figure's and the CMU motion capture, at every key time of
//! the raw channels, half way between samples and at random times, stay within ACL's bound scaled
//! to the figure (0.01 cm at a 3 cm shell on a figure 1.8 m across). The palette pass decodes them
//! as the CPU does: tests/it/fidelity.rs (crossfades and layers) and tests/it/pose.rs (through
//! `inspect --pose`).

use std::path::{Path, PathBuf};

use glam::{Mat4, Vec3};
use vkskin::anim::compress::{measured_error, Precision};
use vkskin::anim::Animation;
use vkskin::anim::{local_to_model, offset_correction, palette, skin_vertex, JointPose};
use vkskin::app::default_animations;
use vkskin::formats::load_model;
use vkskin::model::Model;

/// ACL 2.1's bytes on the CMU clips (../shared/clips/cmu/README.md): the size goal is at most twice.
const ACL_BYTES: [(&str, usize); 6] = [
    ("sjson/13_07.acl.sjson", 17_917),
    ("sjson/27_06.acl.sjson", 45_181),
    ("sjson/49_09.acl.sjson", 24_809),
    ("sjson/104_30.acl.sjson", 24_377),
    ("bvh/131_01.bvh", 84_693),
    ("bvh/131_02.bvh", 101_174),
];

/// The largest error ACL 2.1 reached on each of those clips (cm), from the same README.
const ACL_ERRORS: [f32; 6] = [0.0120, 0.0399, 0.0122, 0.0225, 0.0147, 0.0157];

fn files() -> Vec<PathBuf> {
    let mut files = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/figure.md5mesh")];
    if let Some(models) = crate::common::shared_models("") {
        let mut stack = vec![models];
        while let Some(folder) = stack.pop() {
            for entry in std::fs::read_dir(&folder).expect("a readable folder").flatten() {
                let path = entry.path();
                let name = path.to_string_lossy().to_lowercase();
                if path.is_dir() {
                    stack.push(path);
                } else if [".glb", ".gltf", ".dae", ".ms3d", ".md5mesh", ".fbx"].iter().any(|extension| name.ends_with(extension))
                {
                    files.push(path);
                }
            }
        }
    }
    if let Some(clips) = crate::common::shared_clips("cmu") {
        files.extend(ACL_BYTES.iter().map(|(file, _)| clips.join(file)));
    }
    files.sort();
    files
}

/// Every raw key time of the animation's channels (at most `limit`, evenly picked).
fn key_times(animation: &Animation, limit: usize) -> Vec<f32> {
    let mut times: Vec<f32> =
        animation.channels.iter().flat_map(|channel| (0..channel.times.count()).map(|key| channel.times.time(key))).collect();
    times.sort_by(f32::total_cmp);
    times.dedup();
    let stride = times.len().div_ceil(limit).max(1);
    times.into_iter().step_by(stride).collect()
}

#[test]
fn compressed_clips_stay_within_acls_bound_of_the_raw_keys() {
    let mut random = 0x9e37_79b9_u64;
    let (mut compressed_count, mut kept) = (0, Vec::new());
    for path in files() {
        let mut model = load_model(&path, &default_animations(&path, &[])).unwrap_or_else(|error| panic!("{error}"));
        // The bound the clips were compressed within: each joint's shell its farthest vertex's.
        let precision = model.compression_precision();
        let results = model.compressed_clips();
        for (animation, result) in model.animations.iter_mut().zip(results) {
            match result {
                Some(Ok(compressed)) => animation.compressed = Some(compressed),
                Some(Err(why)) => kept.push(format!("{} {}: {why}", path.display(), animation.name)),
                None => {}
            }
        }
        for animation in model.animations.iter().filter(|animation| animation.compressed.is_some()) {
            compressed_count += 1;
            let samples = animation.compressed.as_ref().map(|compressed| compressed.times.clone()).expect("compressed");
            let between = (0..samples.count().saturating_sub(1)).map(|key| 0.5 * (samples.time(key) + samples.time(key + 1)));
            let end = samples.time(samples.count().saturating_sub(1));
            let mut at_random = Vec::new();
            for _ in 0..200 {
                random ^= random << 13;
                random ^= random >> 7;
                random ^= random << 17;
                at_random.push((random % 1_000_000) as f32 / 1_000_000.0 * end);
            }
            let times: Vec<f32> = key_times(animation, 4_000).into_iter().chain(between.take(4_000)).chain(at_random).collect();
            let error = measured_error(&model.skeleton, animation, &precision, times.into_iter());
            println!(
                "{} {}: {:.4} cm on a 1.8 m figure, {} B for {} B of keys",
                path.display(),
                animation.name,
                precision.as_reference_centimetres(error),
                animation.gpu_bytes(model.skeleton.len(), model.morph_targets.len()),
                animation.key_gpu_bytes(model.skeleton.len(), model.morph_targets.len())
            );
            assert!(
                error <= precision.error * 1.001,
                "{} {}: {error:e} over {:e}",
                path.display(),
                animation.name,
                precision.error
            );
        }
    }
    println!("{compressed_count} clips compressed; {} keep their keys:\n{}", kept.len(), kept.join("\n"));
    assert!(compressed_count > 0);
    assert!(kept.iter().all(|line| line.contains("kept as keys: ")), "every clip kept says why");
    // Issue 57: kinks, jumps and sharp bends are samples at uneven times, and a segment no width
    // holds stores its values as they are, so a clip keeps its keys only where compressed it would
    // be larger (the ninja's 10 s of Milkshape Hermite curves: twice its keys).
    assert!(kept.iter().all(|line| line.contains("compressed it takes")), "kept though smaller compressed: {kept:#?}");
}

#[test]
fn cmu_clips_compress_to_at_most_twice_acls_bytes() {
    let Some(clips) = crate::common::shared_clips("cmu") else { return };
    for (file, acl) in ACL_BYTES {
        let mut model = load_model(&clips.join(file), &[]).expect("loads");
        model.compress_clips();
        let animation = &model.animations[0];
        assert!(animation.compressed.is_some(), "{file}: {:?}", model.stats.notes);
        let bytes = animation.gpu_bytes(model.skeleton.len(), 0);
        println!("{file}: {bytes} B on the GPU, {:.2}x ACL's {acl}", bytes as f64 / acl as f64);
        assert!(bytes <= 2 * acl, "{file}: {bytes} B against ACL's {acl}");
    }
}

#[test]
fn cmu_clips_take_no_more_than_acls_bytes_at_acls_error() {
    // Issue 57: at the error ACL reached (its 3 cm shell, the clips in metres), no more bytes than
    // ACL's, every byte the GPU holds counted; and within that error, measured between samples too.
    use vkskin::anim::compress::{encode::compress, Precision};
    let Some(clips) = crate::common::shared_clips("cmu") else { return };
    for ((file, acl), acl_error) in ACL_BYTES.into_iter().zip(ACL_ERRORS) {
        let model = load_model(&clips.join(file), &[]).expect("loads");
        let precision = Precision { error: acl_error / 100.0, shell: 0.03, shells: Vec::new() };
        let compressed = compress(&model.skeleton, &model.animations[0], &precision).expect("compresses");
        let times = compressed.times.clone();
        let played = Animation { compressed: Some(compressed), ..model.animations[0].clone() };
        let bytes = played.gpu_bytes(model.skeleton.len(), 0);
        let probes = (0..times.count() - 1)
            .flat_map(|key| [0.0, 0.5].map(|part| times.time(key) + part * (times.time(key + 1) - times.time(key))));
        let error = measured_error(&model.skeleton, &played, &precision, probes);
        println!(
            "{file}: {bytes} B, {:.2}x ACL's {acl} at {acl_error} cm (measured {:.4} cm)",
            bytes as f64 / acl as f64,
            error * 100.0
        );
        assert!(bytes <= acl, "{file}: {bytes} B against ACL's {acl}");
        assert!(error <= precision.error, "{file}: {error} m over {} m", precision.error);
    }
}

#[test]
fn the_bundled_figures_clips_compress() {
    let mut model = crate::common::default_model();
    model.compress_clips();
    for animation in &model.animations {
        let compressed = animation.compressed.as_ref().unwrap_or_else(|| panic!("{}: {:?}", animation.name, model.stats.notes));
        assert!(animation.gpu_bytes(model.skeleton.len(), 0) < animation.key_gpu_bytes(model.skeleton.len(), 0));
        assert_eq!(compressed.sample_rate().round(), 24.0, "MD5's frames are the samples");
    }
}

#[test]
fn the_shaders_read_the_layout_the_encoder_writes() {
    use vkskin::anim::compress::{
        BLOCK_SEGMENTS, BLOCK_WORDS, FOUR_COMPONENTS, HEADER_WORDS, MAX_BITS, RAW_BITS, SEGMENT_SAMPLES, SEGMENT_WORDS,
    };
    let common = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/common.glsl")).expect("common.glsl");
    for (name, value) in [
        ("PACKED_SEGMENT_SAMPLES", SEGMENT_SAMPLES),
        ("PACKED_MAX_BITS", MAX_BITS as usize),
        ("PACKED_RAW_BITS", RAW_BITS as usize),
        ("PACKED_HEADER_WORDS", HEADER_WORDS),
        ("PACKED_SEGMENT_WORDS", SEGMENT_WORDS),
        ("PACKED_BLOCK_SEGMENTS", BLOCK_SEGMENTS),
        ("PACKED_BLOCK_WORDS", BLOCK_WORDS),
        ("PACKED_FOUR_COMPONENTS", FOUR_COMPONENTS as usize),
    ] {
        assert!(common.contains(&format!("const uint {name} = {value}u;")), "{name} = {value} in common.glsl");
    }
    let flag = vkskin::render::shader_types::CHANNEL_PACKED.trailing_zeros();
    assert!(common.contains(&format!("const uint CHANNEL_PACKED = 1u << {flag};")), "CHANNEL_PACKED");
}

/// The largest distance between `model`'s skinned vertices (linear blending) posed by `animation`
/// as played (compressed) and by its raw keys, at `times`.
fn skinned_error(model: &Model, animation: &Animation, times: &[f32]) -> f32 {
    let raw = Animation { compressed: None, ..animation.clone() };
    let joints = model.skeleton.len();
    let mut worst = 0.0f32;
    let (mut poses, mut models, mut palettes) = (
        [vec![JointPose::IDENTITY; joints], vec![JointPose::IDENTITY; joints]],
        vec![Mat4::IDENTITY; joints],
        [vec![Mat4::IDENTITY; joints], vec![Mat4::IDENTITY; joints]],
    );
    for &time in times {
        raw.sample(&model.skeleton, time, &mut poses[0]);
        animation.sample(&model.skeleton, time, &mut poses[1]);
        for (pose, out) in poses.iter().zip(palettes.iter_mut()) {
            local_to_model(&model.skeleton, pose, Mat4::IDENTITY, &mut models);
            palette(&model.skeleton, &models, out);
        }
        for vertex in &model.vertices {
            let influences = model.influences_of(vertex);
            let offsets = model.influence_offsets_of(vertex);
            let at = |palette: &[Mat4]| {
                skin_vertex(palette, vertex.position, Vec3::Y, Vec3::X, influences).position
                    + offset_correction(palette, influences, offsets)
            };
            worst = worst.max(at(&palettes[0]).distance(at(&palettes[1])));
        }
    }
    worst
}

/// ACL's shell bounds a joint, not a vertex down the limb: with each joint's shell at its
/// farthest skinned vertex, every shared model's skinned mesh stays within the bound (0.01 cm on a
/// 1.8 m figure) of the keys' mesh, where ACL's 3 cm let it stray further. The bytes both ways are
/// printed (docs/compression.md).
#[test]
fn compressed_meshes_stay_within_the_bound_of_the_keys_meshes() {
    let (mut checked, mut totals, mut worst, mut worst_acl) = (0, (0usize, 0usize), 0.0f32, 0.0f32);
    for path in files().into_iter().filter(|path| !path.to_string_lossy().contains("clips")) {
        let mut model = load_model(&path, &default_animations(&path, &[])).unwrap_or_else(|error| panic!("{error}"));
        if model.vertices.is_empty() || model.skeleton.is_empty() {
            continue;
        }
        let precision = model.compression_precision();
        let acl = Precision::for_figure(model.extent());
        // Each clip compressed at ACL's 3 cm for every joint: its bytes and the animation so played.
        let at_acl: Vec<Option<(usize, Animation)>> = model
            .animations
            .iter()
            .map(|animation| {
                vkskin::anim::compress::encode::compress(&model.skeleton, animation, &acl).ok().map(|compressed| {
                    let bytes = animation.bytes_on_gpu(Some(&compressed), model.skeleton.len(), model.morph_targets.len());
                    (bytes, Animation { compressed: Some(compressed), ..animation.clone() })
                })
            })
            .collect();
        model.compress_clips();
        for (animation, acl_bytes) in model.animations.iter().zip(at_acl) {
            let Some(compressed) = &animation.compressed else { continue };
            let times: Vec<f32> = key_times(animation, 120)
                .into_iter()
                .chain((0..60).map(|step| compressed.times.time(compressed.times.count() - 1) * (step as f32 + 0.37) / 60.0))
                .collect();
            let error = skinned_error(&model, animation, &times);
            let bytes = animation.gpu_bytes(model.skeleton.len(), model.morph_targets.len());
            let acl_error =
                acl_bytes.as_ref().map(|(_, played)| precision.as_reference_centimetres(skinned_error(&model, played, &times)));
            println!(
                "{} {}: the skinned mesh within {:.5} cm on a 1.8 m figure in {bytes} B at the vertices' shells; {} at ACL's 3 cm",
                path.display(),
                animation.name,
                precision.as_reference_centimetres(error),
                acl_bytes.as_ref().map_or("- (keys)".to_string(), |(bytes, _)| format!("{:.5} cm in {bytes} B", acl_error.unwrap_or(0.0))),
            );
            worst_acl = worst_acl.max(acl_error.unwrap_or(0.0));
            // The virtual vertices sit on each joint's three axes; a vertex between them may stray
            // further than they do (a rotation's error up to 1.22×, with translation more: 1.34× the
            // most seen, the bundled figure's walk; the third-party models' 1.07×).
            assert!(
                error <= precision.error * 1.01,
                "{} {}: the mesh strays {error:e}, over {:e}",
                path.display(),
                animation.name,
                precision.error
            );
            checked += 1;
            totals.0 += bytes;
            totals.1 += acl_bytes.as_ref().map_or(bytes, |(bytes, _)| *bytes);
            worst = worst.max(precision.as_reference_centimetres(error));
        }
    }
    println!(
        "{checked} clips: {} B at the vertices' shells, {} B at ACL's ({:.3}x); the mesh within {worst:.5} cm, at ACL's {worst_acl:.5} cm",
        totals.0,
        totals.1,
        totals.0 as f64 / totals.1 as f64
    );
    assert!(checked > 0);
}
