//! COLLADA 1.4.1 / 1.5 (`.dae`) into the one [`Model`], on `roxmltree` (a maintained XML reader
//! that keeps every element's position, for errors that name the line and column).
//!
//! [`load_from_str`] is the loader's steps, a module each:
//!
//! - `parse`: the text into XML, its nesting checked first.
//! - `document`: ids, errors, number arrays through their accessors.
//! - `scene`: the `<visual_scene>` node tree and its rest transforms.
//! - `instances`: what the scene draws, the skins it uses and their joints' nodes.
//! - `skin`: controllers (bind shape, joints, inverse binds, every influence).
//! - `animation`: the animated nodes' matrix keys (with `keys` and `resample`).
//! - `rig`: which nodes are joints, and the skeleton.
//! - `vertices`: the instances' vertices, morph targets and parts, read by `geometry` (meshes:
//!   `<triangles>`, `<polylist>`, `<polygons>`) and `material` (diffuse colours and textures).
//! - `clips`: the named clips, and the model's animations and clips.
//!
//! The skeleton is every node a skin names as a joint, and every node that instances a rigid
//! geometry (a joint of its own, like glTF's rigid meshes). A joint's parent is its nearest joint
//! ancestor; the nodes between go into its fixed `pre` transform, and for a root joint every
//! ancestor, with the up-axis and unit conversion (`<asset>`: Z_UP or X_UP to vkskin's Y-up,
//! `<unit meter>` to metres) in front. A skin's bind shape matrix is moved into its vertices.

mod animation;
mod clips;
mod document;
mod geometry;
mod instances;
mod keys;
mod material;
mod parse;
mod resample;
mod rig;
mod scene;
mod skin;
mod vertices;

use std::path::Path;

use glam::{Mat4, Vec3};

use super::{files, FormatError};
use crate::model::{FileLayout, LoadStats, Model};
use document::Document;

/// Loads a `.dae` file, with its textures from the same folder.
/// Without culling cells: [`crate::formats::load_model`] adds them.
pub fn load(path: &Path) -> Result<Model, FormatError> {
    let text = files::read_text(path, files::MAX_MODEL_BYTES).map_err(|message| FormatError::in_file(path, message))?;
    load_from_str(&text, path, path.parent().unwrap_or(Path::new("")))
}

/// Loads COLLADA text; textures are looked for in `folder`. The fuzz target's entry.
pub fn load_from_str(text: &str, path: &Path, folder: &Path) -> Result<Model, FormatError> {
    let xml = parse::xml(text, path)?;
    let document = Document::new(&xml, path)?;
    let mut warnings = Vec::new();
    let convert = asset_conversion(&document)?;
    let scene = scene::read(&document, &mut warnings)?;
    let instanced = instances::read(&document, &scene)?;
    let keys = animation::read(&document, &scene, &mut warnings)?;
    let rig = rig::build(&document, &scene, &instanced, &keys, convert)?;
    let drawing = vertices::draw(&document, &scene, &instanced, &rig, convert, folder, &mut warnings)?;
    let stem = path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    let (animations, clips) = clips::animations(&document, &scene, &keys, &rig, &stem, &mut warnings)?;
    warnings.extend(document.warnings());
    let mut model = Model {
        name: stem,
        vertices: drawing.vertices,
        influences: drawing.influences,
        indices: drawing.indices,
        meshes: drawing.meshes,
        materials: drawing.materials,
        skeleton: rig.skeleton,
        animations,
        clips,
        bounds: Default::default(),
        levels: Vec::new(),
        stats: LoadStats { max_influences: drawing.max_influences, warnings, ..LoadStats::default() },
        // Per drawn instance, its geometry's POSITION source in order (vertices split per normal
        // and UV from one position are reported once).
        layout: FileLayout { to_model: convert, meshes: drawing.file_meshes, ..FileLayout::default() },
        morph_targets: drawing.morph_targets,
        influence_offsets: Vec::new(),
    };
    model.clip_each_animation();
    Ok(model)
}

/// `<asset>`: the up axis to Y-up and the unit to metres, as one transform in front of everything.
fn asset_conversion(document: &Document<'_, '_>) -> Result<Mat4, FormatError> {
    let root = document.xml.root_element();
    let Some(asset) = document.child(root, "asset") else { return Ok(Mat4::IDENTITY) };
    let scale = match document.child(asset, "unit").and_then(|unit| unit.attribute("meter").map(|meter| (unit, meter))) {
        Some((unit, meter)) => match meter.trim().parse::<f32>() {
            Ok(meter) if meter.is_finite() && meter > 0.0 => meter,
            _ => {
                return Err(
                    document.error(unit, format!("expected meter to be a positive number, found {}", files::quoted(meter)))
                )
            }
        },
        None => 1.0,
    };
    let axis = match document.child(asset, "up_axis").and_then(|axis| axis.text()).map(str::trim) {
        None | Some("Y_UP") => Mat4::IDENTITY,
        // Z up: +Z becomes +Y, +Y becomes -Z.
        Some("Z_UP") => Mat4::from_cols(glam::Vec4::X, glam::Vec4::NEG_Z, glam::Vec4::Y, glam::Vec4::W),
        // X up: +X becomes +Y, +Y becomes -X.
        Some("X_UP") => Mat4::from_cols(glam::Vec4::Y, glam::Vec4::NEG_X, glam::Vec4::Z, glam::Vec4::W),
        Some(other) => {
            let node = document.child(asset, "up_axis").unwrap_or(asset);
            return Err(document.error(node, format!("expected X_UP, Y_UP or Z_UP, found {}", files::quoted(other))));
        }
    };
    Ok(Mat4::from_scale(Vec3::splat(scale)) * axis)
}
