//! Compares two folders of renders of the same frames (say, NVIDIA's against lavapipe's), name by
//! name, at the strategies test's tolerance (tests/it/strategies.rs): at most 0.5 % of pixels may
//! differ by more than 12 levels in a channel, and the mean of each pixel's largest channel
//! difference stays under one level. Prints a Markdown table; exits 1 when any pair is outside the
//! tolerance or a file is missing on either side.
//!
//! `cargo run --release --example compare_renders -- REFERENCE_DIR OTHER_DIR` (with `DIFF_DIR=DIR`,
//! each pair outside the tolerance is also written there, its far pixels in red)

use std::collections::BTreeSet;
use std::path::Path;

use vkskin::app::imagediff::{ImageDifference, LargestDifference, FAR_ABOVE};

fn compare(a: &image::RgbaImage, b: &image::RgbaImage) -> Option<(LargestDifference, f64)> {
    let difference = ImageDifference::between(a, b)?;
    Some((LargestDifference::between(a, b), difference.psnr))
}

/// DIFF_DIR: each pair outside the tolerance is written there as the reference image with its far
/// pixels in red.
fn mark_far_pixels(a: &image::RgbaImage, b: &image::RgbaImage, path: &Path) {
    let mut marked = a.clone();
    for (x, y, p) in marked.enumerate_pixels_mut() {
        let q = b.get_pixel(x, y);
        if (0..3).any(|channel| p[channel].abs_diff(q[channel]) > FAR_ABOVE) {
            *p = image::Rgba([255, 0, 0, 255]);
        }
    }
    let saved = path.parent().map_or(Ok(()), std::fs::create_dir_all).map_err(image::ImageError::IoError);
    if let Err(error) = saved.and_then(|()| marked.save(path)) {
        eprintln!("{}: {error}", path.display());
    }
}

fn png_names(folder: &Path) -> Result<BTreeSet<String>, String> {
    let entries = std::fs::read_dir(folder).map_err(|error| format!("{}: {error}", folder.display()))?;
    Ok(entries.filter_map(|entry| entry.ok()?.file_name().into_string().ok()).filter(|name| name.ends_with(".png")).collect())
}

fn main() -> std::process::ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [reference, other] = arguments.as_slice() else {
        eprintln!("usage: compare_renders REFERENCE_DIR OTHER_DIR");
        return std::process::ExitCode::from(2);
    };
    let (reference, other) = (Path::new(reference), Path::new(other));
    let (names_a, names_b) = match (png_names(reference), png_names(other)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("{error}");
            return std::process::ExitCode::from(2);
        }
    };
    let mut failures = 0;
    println!("| image | pixels > {FAR_ABOVE} levels | mean largest difference | PSNR (dB) | within |");
    println!("|---|---|---|---|---|");
    for name in names_a.union(&names_b) {
        let open = |folder: &Path| image::open(folder.join(name)).map(|image| image.to_rgba8());
        let row = match (open(reference), open(other)) {
            (Ok(a), Ok(b)) => match compare(&a, &b) {
                Some((c, psnr)) => {
                    let within = c.within_strategies_tolerance();
                    if let (false, Some(folder)) = (within, std::env::var_os("DIFF_DIR")) {
                        mark_far_pixels(&a, &b, &Path::new(&folder).join(name));
                    }
                    failures += usize::from(!within);
                    let share = 100.0 * c.far as f64 / c.pixels.max(1) as f64;
                    let verdict = if within { "yes" } else { "**no**" };
                    format!("{share:.3} % | {:.3} | {psnr:.1} | {verdict}", c.mean)
                }
                None => {
                    failures += 1;
                    "- | - | - | **sizes differ**".to_string()
                }
            },
            (a, b) => {
                failures += 1;
                let missing = if a.is_err() { reference } else { other };
                let _ = b;
                format!("- | - | - | **missing or unreadable in {}**", missing.display())
            }
        };
        println!("| {name} | {row} |");
    }
    println!("\n{failures} of {} images outside the tolerance", names_a.union(&names_b).count());
    if failures == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
