//! `vkskin inspect`: what a model holds, as text. No Vulkan; as fast as the loader.

use std::fmt::Write as _;

use crate::model::Model;

/// Vertices `inspect` skins on the CPU to measure the culling cells (a few milliseconds).
const TIGHTNESS_BUDGET: usize = 20_000;

/// The report `vkskin inspect` prints; `chain_seconds`: how long the levels of detail took to build,
/// where they were built.
pub fn describe(model: &Model, chain_seconds: Option<f64>) -> String {
    // The two measurements that take milliseconds on a large model, side by side.
    let (facing, tightness) = rayon::join(|| model.facing(), || model.cell_tightness(TIGHTNESS_BUDGET));
    let mut out = String::new();
    summary(&mut out, model, facing);
    skeleton(&mut out, model);
    meshes_and_levels(&mut out, model, chain_seconds);
    materials(&mut out, model);
    animations(&mut out, model, tightness);
    morph_targets(&mut out, model);
    clips(&mut out, model);
    notes_and_warnings(&mut out, model);
    out
}

/// What `vkskin inspect A B C` adds after each model's report: the crowd they would make, each
/// model's GPU data counted once (shared by its instances), what one instance of each adds with the
/// `compute` strategy, and an even mix's average.
pub fn describe_crowd(models: &[Model]) -> String {
    use crate::render::chunks::{MemoryPlan, PlanChoices, PlanLimits, Shape};
    use crate::render::Strategy;
    // Limits as wide as a GPU's, so no chunk's padding counts: bytes per instance, not a device's fit.
    let limits = PlanLimits { binding: u64::from(u32::MAX), heap: u64::MAX / 2, dispatch_rows: 65_535 };
    let mut out = String::new();
    let _ = writeln!(out, "crowd of {} models (GPU bytes; each model's data once, shared by its instances):", models.len());
    let _ = writeln!(
        out,
        "  {:<24} {:>9} {:>9} {:>6} {:>5} {:>13} {:>13}",
        "model", "vertices", "triangles", "joints", "clips", "shared", "per instance"
    );
    let (mut shared_total, mut instance_total) = (0u64, 0u64);
    for model in models {
        let shared = crate::render::model_buffers::model_bytes(model);
        let per_instance =
            MemoryPlan::for_limits(Shape::of(model), PlanChoices::new(Strategy::Compute), 1, limits).bytes_per_instance;
        shared_total += shared;
        instance_total += per_instance;
        let name: String = model.name.chars().take(24).collect();
        let _ = writeln!(
            out,
            "  {name:<24} {:>9} {:>9} {:>6} {:>5} {shared:>13} {per_instance:>13}",
            model.vertices.len(),
            model.indices.len() / 3,
            model.skeleton.len(),
            model.clips.len()
        );
    }
    // The renderer's layout of an even mix: rooms sized for the largest model, each instance's
    // own vertices and palettes at the mix's mean, chunks of whole rounds.
    let shapes: Vec<Shape> = models.iter().map(Shape::of).collect();
    let mix = |limits: PlanLimits| MemoryPlan::for_mix(&shapes, PlanChoices::new(Strategy::Compute), 1, limits);
    let gib = 1u64 << 30;
    let (gpu, lavapipe) = (
        mix(PlanLimits { binding: u64::from(u32::MAX), heap: 24 * gib, dispatch_rows: 65_535 }),
        mix(PlanLimits { binding: 128 << 20, heap: 2 * gib, dispatch_rows: 65_535 }),
    );
    let _ = writeln!(
        out,
        "  shared in all: {shared_total} B; alone, {} B an instance on average; mixed evenly in one renderer, {} B (compute)",
        instance_total / models.len().max(1) as u64,
        mix(limits).bytes_per_instance
    );
    let _ = writeln!(
        out,
        "  mixed evenly: {} instances fit a 24 GiB GPU, {} lavapipe's 2 GiB ({})",
        gpu.max_instances, lavapipe.max_instances, lavapipe.limiting
    );
    out
}

// Each section writes into a String, which cannot fail; the results are ignored on purpose.

/// The model's sizes, facing, influences (and MD5 weights that disagree) and bounds.
fn summary(out: &mut String, model: &Model, facing: crate::model::Facing) {
    let triangles = model.indices.len() / 3;
    let _ = writeln!(out, "model {}", model.name);
    let _ = writeln!(
        out,
        "  {} vertices, {} triangles, {} meshes, {} materials",
        model.vertices.len(),
        triangles,
        model.meshes.len(),
        model.materials.len()
    );
    let _ = writeln!(out, "  faces: {}", facing.describe());
    let _ = writeln!(out, "  influences: up to {} a vertex, {} in all", model.stats.max_influences, model.influences.len());
    if model.stats.weight_disagreement > 0.0 {
        let apart = model.vertices.iter().filter(|vertex| model.has_influence_offsets(vertex)).count();
        let (largest, extent) = (model.stats.weight_disagreement, model.extent().max(f32::MIN_POSITIVE));
        let _ = match apart {
            0 => writeln!(
                out,
                "  weights agree: each puts its vertex within {:.1e} of the extent of its bind position",
                largest / extent
            ),
            _ => writeln!(
                out,
                "  weights disagree: one puts its vertex up to {largest:.4} ({:.2e} of the extent) from its bind \
                 position; {apart} vertices skinned with each weight at its own position, as MD5 defines",
                largest / extent,
            ),
        };
    }
    let bind = model.bind_bounds();
    let animated = model.animated_bounds();
    let _ =
        writeln!(out, "  bind bounds {:.3?} .. {:.3?} (extent {:.3})", bind.min.to_array(), bind.max.to_array(), bind.extent());
    let _ = writeln!(out, "  animated bounds {:.3?} .. {:.3?}", animated.min.to_array(), animated.max.to_array());
}

/// The joints as an indented tree; the file's mesh nodes among them (`FileLayout::mesh_nodes`)
/// marked, and not counted as joints.
fn skeleton(out: &mut String, model: &Model) {
    const MAX_INDENT: usize = 32;
    let mesh_nodes = &model.layout.mesh_nodes;
    let joints = model.skeleton.len() - mesh_nodes.len().min(model.skeleton.len());
    let nodes = match mesh_nodes.len() {
        0 => String::new(),
        1 => " and 1 mesh node".to_string(),
        count => format!(" and {count} mesh nodes"),
    };
    let _ = writeln!(out, "skeleton: {joints} joints{nodes}, depth {}", model.skeleton.depth());
    let mut children = vec![Vec::new(); model.skeleton.len()];
    let mut roots = Vec::new();
    for (index, joint) in model.skeleton.joints.iter().enumerate() {
        match joint.parent.filter(|&parent| parent < children.len()) {
            Some(parent) => children[parent].push(index),
            None => roots.push(index),
        }
    }
    // Depth-first, iteratively: a deep chain cannot overflow the stack.
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&root| (root, 1)).collect();
    while let Some((index, depth)) = stack.pop() {
        // Indented up to MAX_INDENT levels, then numbered: a 65,536-deep chain must not print
        // gigabytes of spaces (output in proportion to the joints, not to joints × depth).
        let indent = "  ".repeat(depth.min(MAX_INDENT));
        let level = if depth > MAX_INDENT { format!("[depth {depth}] ") } else { String::new() };
        let mark = if mesh_nodes.binary_search(&index).is_ok() { " (mesh node)" } else { "" };
        let _ = writeln!(out, "{indent}{level}{}{mark}", crate::formats::files::one_line(&model.skeleton.joints[index].name));
        stack.extend(children[index].iter().rev().map(|&child| (child, depth + 1)));
    }
}

/// Each mesh, and the levels of detail with their errors.
fn meshes_and_levels(out: &mut String, model: &Model, chain_seconds: Option<f64>) {
    let _ = writeln!(out, "meshes:");
    for mesh in &model.meshes {
        let material = model.materials.get(mesh.material).map_or("?", |material| material.name.as_str());
        let _ = writeln!(out, "  {}: {} triangles, material {material}", mesh.name, mesh.index_count / 3);
    }
    let built = chain_seconds.map(|seconds| format!(", built in {:.3} s", seconds)).unwrap_or_default();
    if model.levels.is_empty() && chain_seconds.is_some() {
        let _ = writeln!(out, "levels of detail: none (too few triangles, or a level saves too little){built}");
    }
    if !model.levels.is_empty() {
        let _ = writeln!(
            out,
            "levels of detail: {} (error: farthest a vertex lies from the level, sampled poses){built}",
            model.levels.len() + 1
        );
        let _ = writeln!(out, "  0: {} vertices, {} triangles, error 0", model.vertices.len(), model.indices.len() / 3);
        for (index, level) in model.levels.iter().enumerate() {
            let percent = 100.0 * level.error / model.extent().max(1e-9);
            let _ = writeln!(
                out,
                "  {}: {} vertices, {} triangles, error {:.4} ({percent:.2}% of the extent)",
                index + 1,
                level.vertex_count,
                level.triangle_count(),
                level.error
            );
        }
    }
}

/// Each material's colour, texture and normal map.
fn materials(out: &mut String, model: &Model) {
    let _ = writeln!(out, "materials:");
    for material in &model.materials {
        let texture = match &material.texture {
            Some(texture) => format!("texture {} ({}x{})", texture.path.display(), texture.width, texture.height),
            None => "no texture".to_string(),
        };
        let normal_map =
            material.normal_map.as_ref().map(|map| format!(", normal map {}", map.path.display())).unwrap_or_default();
        let color = material.base_color.to_array();
        let _ = writeln!(out, "  {}: base colour {color:.2?}, {texture}{normal_map}", material.name);
    }
}

/// Each animation's keys, its GPU bytes, and the culling cells.
fn animations(out: &mut String, model: &Model, tightness: Option<crate::model::Tightness>) {
    let joint_count = model.skeleton.len();
    let stored = match model.animations.iter().filter(|animation| animation.compressed.is_some()).count() {
        0 => "keys as the file stores them; nothing baked",
        _ => "compressed, decoded by the palette pass: docs/compression.md",
    };
    let _ = writeln!(out, "animations: {} ({stored})", model.animations.len());
    for (index, animation) in model.animations.iter().enumerate() {
        let [translation, rotation, scale] = animation.key_counts();
        let gpu_bytes = animation.gpu_bytes(joint_count, model.morph_targets.len());
        let joint_seconds = joint_count as f64 * f64::from(animation.duration);
        let per_joint_second = if joint_seconds > 0.0 {
            format!("{:.0} B per joint-second", gpu_bytes as f64 / joint_seconds)
        } else {
            "-".to_string()
        };
        let ratio = if animation.file_key_bytes > 0 {
            format!(
                "{:.2}x the file's {} B of keys",
                gpu_bytes as f64 / animation.file_key_bytes as f64,
                animation.file_key_bytes
            )
        } else {
            "the file stores no keys".to_string()
        };
        let rate = animation.frame_rate.map(|rate| format!(", {rate} fps")).unwrap_or_default();
        let _ = writeln!(
            out,
            "  [{index}] {}: {:.3} s{rate}, {} channels; keys: {translation} translation, {rotation} rotation, {scale} scale",
            animation.name,
            animation.duration,
            animation.channels.len()
        );
        if let Some(travel) = model.clip_travel(index) {
            let joint = model.skeleton.joints.get(travel.joint).map_or("?", |joint| joint.name.as_str());
            let _ = writeln!(
                out,
                "      travel ({joint}): {:.3} units start to end ({:.1} % of the figure), {:.3} along its path, {:.3} a second, turning {:+.1}°",
                travel.distance,
                100.0 * travel.distance / model.extent().max(f32::MIN_POSITIVE),
                travel.path,
                travel.speed,
                travel.turn
            );
            if let Some(motion) = &animation.motion {
                let _ = writeln!(
                    out,
                    "      root motion: taken out, the clip plays in place and moves the instance ({} samples, {} B; --root-motion off keeps it in the keys)",
                    motion.samples.len(),
                    motion.samples.len() * 16
                );
            }
        }
        let cells = model.bounds.animations.get(index).map_or(0, |bounds| bounds.cells.len());
        let _ = writeln!(out, "      GPU {gpu_bytes} B ({ratio}), {per_joint_second}; {cells} culling cells ({} B)", cells * 32);
        if let Some(compressed) = &animation.compressed {
            let keys = animation.key_gpu_bytes(joint_count, model.morph_targets.len());
            let _ = writeln!(
                out,
                "      compressed: {:.1}x smaller than its keys' {keys} B on the GPU, {}, \
                 max error {:.3e} ({:.4} cm on a 1.8 m figure)",
                keys as f64 / gpu_bytes.max(1) as f64,
                compressed.sampling(),
                compressed.max_error,
                compressed.precision.as_reference_centimetres(compressed.max_error)
            );
        }
    }
    if let Some(tightness) = tightness {
        let _ = writeln!(
            out,
            "  culling cells against the skinned vertices (box diagonal, {} of {} cells, {} times each): median {:.2}x, worst {:.2}x",
            tightness.cells,
            tightness.of,
            crate::model::TIGHTNESS_SAMPLES,
            tightness.median,
            tightness.worst
        );
    }
}

/// Each morph target, where there are any.
fn morph_targets(out: &mut String, model: &Model) {
    if !model.morph_targets.is_empty() {
        let moved: usize = model.morph_targets.iter().map(|target| target.vertices.len()).sum();
        let _ =
            writeln!(out, "morph targets: {} ({moved} vertex offsets in all, added before skinning)", model.morph_targets.len());
        for target in &model.morph_targets {
            let animated = model.animations.iter().filter(|animation| {
                animation.weights.iter().any(|channel| {
                    model.morph_targets.get(channel.target).is_some_and(|candidate| std::ptr::eq(candidate, target))
                })
            });
            let _ = writeln!(
                out,
                "  {}: {} vertices, weight {:.3}, animated in {} animations, normals {}",
                crate::formats::files::quoted(&target.name),
                target.vertices.len(),
                target.default_weight,
                animated.count(),
                if target.normals_recomputed { "computed from the moved triangles (the file has none)" } else { "from the file" }
            );
        }
    }
}

/// Each clip, where it came from, and which plays by default.
fn clips(out: &mut String, model: &Model) {
    let default_clip = model.default_clip();
    let _ = writeln!(out, "clips: {}", model.clips.len());
    for (index, clip) in model.clips.iter().enumerate() {
        // Where it came from: the model's own file, or the file whose clips were matched onto it.
        let source = model.clip_source(index);
        let file = source.map_or_else(|| "this file".to_string(), |path| path.display().to_string());
        // A clip that moves nothing, or holds one pose, plays by default only where every clip does.
        let what = if !model.clip_moves(index) {
            Some("empty: moves nothing")
        } else if model.clip_motion(index) <= 0.0 {
            Some("holds one pose")
        } else {
            None
        };
        let state = match (default_clip == Some(index), what) {
            (true, None) => " (plays by default)".to_string(),
            (true, Some(what)) => format!(" (plays by default; {what})"),
            (false, Some(what)) => format!(" ({what})"),
            (false, None) => String::new(),
        };
        let _ = writeln!(
            out,
            "  [{index}] {}: {:.3} s from {:.3} s of animation {}, from {}{state}",
            clip.name,
            clip.duration,
            clip.start,
            clip.animation,
            crate::formats::files::one_line(&file)
        );
    }
}

/// What the loader noted and warned of.
fn notes_and_warnings(out: &mut String, model: &Model) {
    for note in &model.stats.notes {
        let _ = writeln!(out, "note: {}", crate::formats::files::one_line(note));
    }
    if model.stats.warnings.is_empty() {
        let _ = writeln!(out, "warnings: none");
    } else {
        let _ = writeln!(out, "warnings:");
        for warning in model.stats.warnings_counted() {
            let _ = writeln!(out, "  {}", crate::formats::files::one_line(&warning));
        }
    }
}
