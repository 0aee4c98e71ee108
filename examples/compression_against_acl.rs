//! vkskin's clip compression against ACL's own figures on the CMU clips of `../shared/clips/cmu`
//! (its README's table), at ACL's settings: 0.01 cm of error at a 3 cm shell (the clips load in
//! metres), and again at the error ACL itself reached on the clip (bytes at equal error), one core.
//! Prints a Markdown table: the bound, the bytes the GPU holds for the clip (channel records,
//! sample times and tracks), ACL's bytes and the ratio, the largest error at ACL's sample times
//! and between samples, and the time to compress.
//!
//!     cargo run --release --example compression_against_acl [-- DIR]

use std::path::PathBuf;
use std::time::Instant;

use vkskin::anim::compress::{encode::compress, measured_error, Precision};
use vkskin::anim::Animation;

/// ACL 2.1's bytes and max error (cm) on each clip, from ../shared/clips/cmu/README.md.
const ACL: [(&str, usize, f32); 6] = [
    ("sjson/13_07.acl.sjson", 17_917, 0.0120),
    ("sjson/27_06.acl.sjson", 45_181, 0.0399),
    ("sjson/49_09.acl.sjson", 24_809, 0.0122),
    ("sjson/104_30.acl.sjson", 24_377, 0.0225),
    ("bvh/131_01.bvh", 84_693, 0.0147),
    ("bvh/131_02.bvh", 101_174, 0.0157),
];

fn main() -> Result<(), String> {
    let folder = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "../shared/clips/cmu".to_string()));
    let one_core = rayon::ThreadPoolBuilder::new().num_threads(1).build().map_err(|error| error.to_string())?;
    println!("| clip | bound (cm) | joints | samples | vkskin B | ACL B | vkskin ÷ ACL | error at samples (cm) | between samples (cm) | ACL's error (cm) | compress ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let rows =
        ACL.iter().flat_map(|&(file, bytes, error)| [(file, bytes, error, 0.01f32), (file, bytes, error, error.max(0.01))]);
    for (file, acl_bytes, acl_error, bound) in rows {
        let precision = Precision { error: bound / 100.0, shell: 0.03, shells: Vec::new() };
        let path = folder.join(file);
        let model = vkskin::formats::read_model(&path, &[]).map_err(|error| error.to_string())?;
        let animation = model.animations.first().ok_or_else(|| format!("{}: no clip", path.display()))?;
        let started = Instant::now();
        let compressed = one_core.install(|| compress(&model.skeleton, animation, &precision))?;
        let milliseconds = started.elapsed().as_secs_f64() * 1e3;
        let samples = compressed.times.clone();
        let played = Animation { compressed: Some(compressed), ..animation.clone() };
        let bytes = played.gpu_bytes(model.skeleton.len(), 0);
        let at_samples = measured_error(&model.skeleton, &played, &precision, (0..samples.count()).map(|key| samples.time(key)));
        let between = measured_error(
            &model.skeleton,
            &played,
            &precision,
            (0..samples.count().saturating_sub(1)).flat_map(|key| {
                [0.25, 0.5, 0.75].map(|part| samples.time(key) + part * (samples.time(key + 1) - samples.time(key)))
            }),
        );
        println!(
            "| {file} | {bound:.4} | {} | {} | {bytes} | {acl_bytes} | {:.2} | {:.4} | {:.4} | {acl_error:.4} | {milliseconds:.0} |",
            model.skeleton.len(),
            samples.count(),
            bytes as f64 / acl_bytes as f64,
            at_samples * 100.0,
            between * 100.0,
        );
    }
    Ok(())
}
