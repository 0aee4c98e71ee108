//! How far vkskin's baked FBX clips are from ufbx's own evaluation of the file's curves between
//! frames (issue 39: which curves are resampled): every clip at 7 times, skinned on the CPU, against
//! `ufbx::evaluate_scene` with skinning, each control point against its first vertex. Prints the
//! worst distance over the model's extent a clip. `tests/it/fbx_loader.rs` holds the shared files
//! to 1e-4; this runs it on any file.
//!
//!     cargo run --release --example fbx_bake_error -- FILE.fbx...

use glam::{Mat4, Vec3};
use vkskin::formats::fbx::matrix;
use vkskin::formats::load_model;

fn main() {
    for path in std::env::args().skip(1) {
        match worst(std::path::Path::new(&path)) {
            Ok(lines) => lines.iter().for_each(|line| println!("{path}\t{line}")),
            Err(message) => println!("{path}\terror: {message}"),
        }
    }
}

fn worst(path: &std::path::Path) -> Result<Vec<String>, String> {
    let model = load_model(path, &[]).map_err(|error| error.to_string())?;
    let options = ufbx::LoadOpts {
        target_axes: ufbx::CoordinateAxes::right_handed_y_up(),
        target_unit_meters: 1.0,
        inherit_mode_handling: ufbx::InheritModeHandling::Compensate,
        ..Default::default()
    };
    let scene = ufbx::load_file(path.to_str().ok_or("a UTF-8 path")?, options).map_err(|error| error.description.to_string())?;
    let extent = model.extent();
    let mut lines = Vec::new();
    for (clip, stack) in model.clips.iter().zip(scene.anim_stacks.iter()) {
        let mut worst = 0.0f32;
        for fraction in [0.03, 0.17, 0.29, 0.43, 0.61, 0.77, 0.93] {
            let time = clip.duration * fraction;
            let evaluate = ufbx::EvaluateOpts { evaluate_skinning: true, ..Default::default() };
            let posed = ufbx::evaluate_scene(&scene, &stack.anim, stack.time_begin + f64::from(time), evaluate)
                .map_err(|error| error.description.to_string())?;
            let mut palette = vec![Mat4::IDENTITY; model.skeleton.len()];
            model.palette_at(clip.animation, clip.start + time, &mut palette);
            for (mesh, file_mesh) in posed.meshes.iter().zip(&model.layout.meshes) {
                let Some(node) = mesh.element.instances.iter().next() else { continue };
                let to_world = matrix(&node.geometry_to_world);
                for (point, vertex) in mesh.skinned_position.values.iter().zip(&file_mesh.vertices) {
                    let Some(vertex) = vertex else { continue };
                    let p = Vec3::new(point.x as f32, point.y as f32, point.z as f32);
                    let expected = if mesh.skinned_is_local { to_world.transform_point3(p) } else { p };
                    let ours = model.skinned_position(&model.vertices[*vertex as usize], Some(&palette));
                    worst = worst.max(ours.distance(expected));
                }
            }
        }
        lines.push(format!("{}\t{:.2e} of the extent", clip.name, worst / extent));
    }
    Ok(lines)
}
