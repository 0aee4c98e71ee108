//! The first look at models nobody tuned to, as numbers: for each model file under the folders
//! (or files) given, the clip that plays by default, the share of a 16:9 frame its figure fills
//! over the clip (`SceneSetup::played_fill`), whether the camera follows it, and how far its lowest
//! vertex over the clip strays from the ground (in % of its height; under 0: below the ground).
//! Then, with `--crowd`, the same for a crowd of every model given (14 instances): the figures' fill
//! of the frame and their heights, tallest over shortest. Prints a Markdown table.
//!
//! `cargo run --release --example first_look -- [--anim FILE] [--crowd] DIR_OR_FILE...`

use std::path::{Path, PathBuf};

use glam::{Mat4, Vec3};
use vkskin::app::{default_animations, SceneSetup};
use vkskin::formats::load_model;
use vkskin::model::Model;

const EXTENSIONS: [&str; 7] = ["glb", "gltf", "dae", "ms3d", "md5mesh", "fbx", "bvh"];

fn files(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = roots.to_vec();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).into_iter().flatten().flatten().map(|entry| entry.path()));
        } else if path
            .extension()
            .and_then(|extension| extension.to_str())
            .is_some_and(|extension| EXTENSIONS.iter().any(|known| known.eq_ignore_ascii_case(extension)))
        {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// The lowest point of instance `index`'s surface over its clip (world space), every vertex at
/// thirty times a second, and the figure's height in its bind pose.
fn lowest_and_height(setup: &SceneSetup, index: usize) -> (f32, f32) {
    let model = setup.model_of(index);
    let instance = &setup.instances[index];
    let world = instance.world();
    let clip = instance.clip.and_then(|clip| model.clips.get(clip));
    let samples = clip.map_or(1, |clip| ((clip.duration * 30.0) as usize).max(24));
    let mut palette = vec![Mat4::IDENTITY; model.skeleton.len()];
    let offsets = vkskin::model::VertexOffsets::of(model);
    let mut weights = model.default_weights();
    let mut lowest = f32::INFINITY;
    for sample in 0..samples {
        if let Some(clip) = clip {
            let time = clip.start + clip.duration * sample as f32 / samples as f32;
            model.palette_at(clip.animation, time, &mut palette);
            weights = model.morph_weights(clip.animation, time);
        }
        let palette = clip.is_some().then_some(palette.as_slice());
        for (index, vertex) in model.vertices.iter().enumerate() {
            let morphed = vkskin::model::Vertex { position: offsets.moved(index as u32, vertex.position, &weights), ..*vertex };
            lowest = lowest.min(world.transform_point3(model.skinned_position(&morphed, palette)).y);
        }
    }
    (lowest, model.bind_bounds().size().y * instance.scale)
}

fn main() {
    let mut arguments: Vec<String> = std::env::args().skip(1).collect();
    let crowd = arguments.iter().position(|argument| argument == "--crowd").map(|at| arguments.remove(at)).is_some();
    let anim = arguments.iter().position(|argument| argument == "--anim").map(|at| {
        arguments.remove(at);
        PathBuf::from(arguments.remove(at))
    });
    let paths = files(&arguments.iter().map(PathBuf::from).collect::<Vec<_>>());
    let load = |path: &Path| -> Option<Model> {
        let mut animations = default_animations(path, &[]);
        animations.extend(anim.clone());
        load_model(path, &animations).map_err(|error| eprintln!("skipped: {error}")).ok()
    };
    println!("| file | clip | fill | follows | ground gap |");
    println!("|---|---|---:|---|---:|");
    let mut models = Vec::new();
    for path in &paths {
        let Some(model) = load(path) else { continue };
        let setup = SceneSetup::new(model.clone(), 1);
        let clip =
            setup.instances[0].clip.and_then(|clip| model.clips.get(clip)).map_or("(rest)".to_string(), |clip| clip.name.clone());
        let (lowest, height) = lowest_and_height(&setup, 0);
        let gap = (lowest - setup.ground().y) / height.max(f32::MIN_POSITIVE) * 100.0;
        let follows = setup.camera_at(0.25).target != setup.camera.target;
        let name = path.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
        println!(
            "| {name} | {clip} | {:.0} % | {} | {gap:.2} % |",
            setup.played_fill() * 100.0,
            if follows { "yes" } else { "" }
        );
        models.push(model);
    }
    if crowd && !models.is_empty() {
        let setup = SceneSetup::with_models(models, 14, true);
        let heights: Vec<f32> = (0..setup.instances.len()).map(|index| lowest_and_height(&setup, index).1).collect();
        let tallest = heights.iter().copied().fold(0.0, f32::max);
        let shortest = heights.iter().copied().fold(f32::INFINITY, f32::min);
        let camera = setup.camera.view_projection(16.0 / 9.0);
        let (mut low, mut high) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        for (index, instance) in setup.instances.iter().enumerate() {
            for vertex in setup.model_of(index).vertices.iter().step_by(7) {
                let projected = camera.project_point3(instance.world().transform_point3(vertex.position));
                (low, high) = (low.min(projected), high.max(projected));
            }
        }
        let fill = ((high.x - low.x) * 0.5).max((high.y - low.y) * 0.5);
        println!();
        println!("crowd of 14 ({}): fills {:.0} % of the frame ({:.0} % of its height, from {:.0} % to {:.0} % down); heights {:.2}x tallest over shortest", setup.mix(), fill * 100.0, (high.y - low.y) * 50.0, (low.y + 1.0) * 50.0, (high.y + 1.0) * 50.0, tallest / shortest);
    }
}
