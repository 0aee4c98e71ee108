//! The derived-data cache (`model::derived`) as a user meets it: a file opened again reads its
//! culling cells, levels of detail and compressed clips from the cache, and nothing it shows or
//! reports changes.

use std::path::Path;

use crate::common::{fresh_folder, shared_models, text, vkskin};

/// `vkskin inspect` with the cache in `cache`: the report, less its "derived data" line, and that line.
fn inspect(cache: &Path, arguments: &[&str]) -> (String, String) {
    let output = vkskin().env("VKSKIN_CACHE_DIR", cache).arg("inspect").args(arguments).output().expect("vkskin runs");
    assert!(output.status.success(), "{}", text(&output));
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    let (derived, rest): (Vec<&str>, Vec<&str>) = report.lines().partition(|line| line.starts_with("derived data: "));
    assert_eq!(derived.len(), 1, "{report}");
    // The levels' time: from the cache, the one measured when they were made; made again, another.
    let rest: Vec<String> = rest
        .iter()
        .map(|line| match line.split_once(", built in ") {
            Some((before, _)) => format!("{before}, built in T"),
            None => line.to_string(),
        })
        .collect();
    (rest.join("\n"), derived[0].to_string())
}

fn entries(cache: &Path) -> usize {
    std::fs::read_dir(cache)
        .map_or(0, |listing| listing.flatten().filter(|entry| entry.path().extension().is_some_and(|e| e == "vkd")).count())
}

#[test]
fn a_file_opened_again_reads_the_cache_and_reports_the_same() {
    let cache = fresh_folder("derived_cache", "inspect");
    // A travelling clip with a mesh (root motion, levels, compression), where the shared files are.
    // Without them (a user's clone), the bundled figure.
    let cesium = shared_models("gltf").map(|folder| folder.join("CesiumMan/CesiumMan.glb"));
    let path = cesium.unwrap_or_else(|| Path::new("assets/figure.md5mesh").to_path_buf());
    let path = path.to_str().expect("a UTF-8 path");
    let (made, line) = inspect(&cache, &[path]);
    assert!(line.starts_with("derived data: made in "), "{line}");
    assert_eq!(entries(&cache), 1);
    let (read, line) = inspect(&cache, &[path]);
    assert!(line.starts_with("derived data: read from the cache in "), "{line}");
    assert_eq!(made, read, "the report from the cache is the report made");
    // Asked without levels: another entry.
    let (_, line) = inspect(&cache, &["--lod", "off", path]);
    assert!(line.starts_with("derived data: made in "), "{line}");
    assert_eq!(entries(&cache), 2);
    // `--cache off`: made, nothing stored, the same report.
    let (off, line) = inspect(&cache, &["--cache", "off", path]);
    assert!(line.starts_with("derived data: made in "), "{line}");
    assert_eq!(entries(&cache), 2);
    assert_eq!(off, made);
}

#[test]
fn a_frame_from_the_cache_is_the_frame_made() {
    let cache = fresh_folder("derived_cache", "render");
    let render = |name: &str| {
        let out = cache.with_file_name(name);
        let output = vkskin()
            .env("VKSKIN_CACHE_DIR", &cache)
            .args(["render", "--time", "0.75", "--size", "160x120", "--instances", "3", "--validate", "--out"])
            .arg(&out)
            .output()
            .expect("vkskin runs");
        assert!(output.status.success(), "{}", text(&output));
        image::open(&out).expect("a PNG was written").to_rgba8()
    };
    let made = render("made.png");
    assert!(entries(&cache) >= 1, "render stores what it made");
    assert!(made == render("cached.png"), "the frame drawn from the cache differs from the one made");
}
