//! Compressed clips (src/anim/compress) against the raw keys they came from, on the CPU: every
//! shared model's clips, the bundled figure's and the CMU motion capture, at every key time of
//! the raw channels, half way between samples and at random times, stay within ACL's bound scaled
//! to the figure (0.01 cm at a 3 cm shell on a figure 1.8 m across). The palette pass decodes them
//! as the CPU does: tests/it/fidelity.rs (crossfades and layers) and tests/it/pose.rs (through
//! `inspect --pose`).

use std::path::{Path, PathBuf};

use vkskin::anim::compress::{measured_error, Precision};
use vkskin::anim::Animation;
use vkskin::app::default_animations;
use vkskin::formats::load_model;

/// ACL 2.1's bytes on the CMU clips (../shared/clips/cmu/README.md): the size goal is at most twice.
const ACL_BYTES: [(&str, usize); 6] = [
    ("sjson/13_07.acl.sjson", 17_917),
    ("sjson/27_06.acl.sjson", 45_181),
    ("sjson/49_09.acl.sjson", 24_809),
    ("sjson/104_30.acl.sjson", 24_377),
    ("bvh/131_01.bvh", 84_693),
    ("bvh/131_02.bvh", 101_174),
];

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
        let precision = Precision::for_figure(model.extent());
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
            let error = measured_error(&model.skeleton, animation, precision, times.into_iter());
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
    use vkskin::anim::compress::{HEADER_WORDS, MAX_BITS, SEGMENT_SAMPLES, SEGMENT_WORDS};
    let common = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/common.glsl")).expect("common.glsl");
    for (name, value) in [
        ("PACKED_SEGMENT_SAMPLES", SEGMENT_SAMPLES),
        ("PACKED_MAX_BITS", MAX_BITS as usize),
        ("PACKED_HEADER_WORDS", HEADER_WORDS),
        ("PACKED_SEGMENT_WORDS", SEGMENT_WORDS),
    ] {
        assert!(common.contains(&format!("const uint {name} = {value}u;")), "{name} = {value} in common.glsl");
    }
    let flag = vkskin::render::shader_types::CHANNEL_PACKED.trailing_zeros();
    assert!(common.contains(&format!("const uint CHANNEL_PACKED = 1u << {flag};")), "CHANNEL_PACKED");
}
