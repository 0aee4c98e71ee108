//! Model loaders. Each turns a file format into the one [`Model`](crate::model::Model) type.

// Input-dependent code: no unwrap, expect or panic! outside tests (`cargo clippy` enforces it).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod acl;
pub mod bvh;
pub mod collada;
pub mod fbx;
pub mod files;
pub mod gltf;
pub mod md5;
pub mod ms3d;
pub mod ranges;
pub mod texture;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::model::Model;

/// Where in a file something went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Line(usize),
    Byte(u64),
    File,
}

/// A load error that names the file, the place in it, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct FormatError {
    pub file: PathBuf,
    pub location: Location,
    pub message: String,
}

impl FormatError {
    pub fn at_line(file: &Path, line: usize, message: impl Into<String>) -> FormatError {
        FormatError { file: file.to_path_buf(), location: Location::Line(line), message: message.into() }
    }

    pub fn in_file(file: &Path, message: impl Into<String>) -> FormatError {
        FormatError { file: file.to_path_buf(), location: Location::File, message: message.into() }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Paths and messages carry text from files: one line, whatever they hold.
        let file = files::one_line(&self.file.display().to_string());
        let message = files::one_line(&self.message);
        match self.location {
            Location::Line(line) => write!(f, "{file}:{line}: {message}"),
            Location::Byte(offset) => write!(f, "{file} (byte {offset}): {message}"),
            Location::File => write!(f, "{file}: {message}"),
        }
    }
}

/// The model formats vkskin reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Md5,
    Gltf,
    Ms3d,
    Collada,
    Fbx,
    Bvh,
    Acl,
}

/// What the error for an unknown format lists.
pub const SUPPORTED: &str =
    "MD5 (.md5mesh with .md5anim), glTF 2.0 (.gltf, .glb), Milkshape 3D (.ms3d v3/v4), COLLADA (.dae 1.4.1/1.5), FBX (.fbx), \
     BVH motion capture (.bvh), ACL clips (.acl.sjson)";

impl Format {
    /// By the file's first bytes; None when they say nothing (then the extension decides).
    pub fn from_magic(head: &[u8]) -> Option<Format> {
        if head.starts_with(b"MS3D000000") {
            return Some(Format::Ms3d);
        }
        if head.starts_with(b"glTF") {
            return Some(Format::Gltf);
        }
        if head.starts_with(b"Kaydara FBX Binary") {
            return Some(Format::Fbx);
        }
        let text = std::str::from_utf8(head).unwrap_or("").trim_start_matches('\u{feff}').trim_start();
        if text.starts_with("MD5Version") {
            return Some(Format::Md5);
        }
        if text.starts_with('<') && text.contains("<COLLADA") {
            return Some(Format::Collada);
        }
        if text.starts_with("; FBX") {
            return Some(Format::Fbx);
        }
        if text.get(..9).is_some_and(|word| word.eq_ignore_ascii_case("HIERARCHY")) {
            return Some(Format::Bvh);
        }
        if text.starts_with("version") && text.contains("clip") {
            return Some(Format::Acl);
        }
        None
    }

    pub fn from_extension(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "md5mesh" => Some(Format::Md5),
            "gltf" | "glb" => Some(Format::Gltf),
            "ms3d" => Some(Format::Ms3d),
            "dae" => Some(Format::Collada),
            "fbx" => Some(Format::Fbx),
            "bvh" => Some(Format::Bvh),
            "sjson" => Some(Format::Acl),
            _ => None,
        }
    }

    /// Magic bytes first (a misnamed file still loads), then the extension.
    pub fn detect(path: &Path) -> Result<Format, FormatError> {
        let head = files::read_prefix(path, 256, false).map_err(|message| FormatError::in_file(path, message))?;
        Format::from_magic(&head)
            .or_else(|| Format::from_extension(path))
            .ok_or_else(|| FormatError::in_file(path, format!("unknown model format: expected one of {SUPPORTED}")))
    }
}

/// How a file that names no unit (BVH, ACL's clips) is read: the unit's name and metres per unit,
/// from the size of its rest pose (its largest extent) in file units.
pub(crate) fn guess_unit(extent: f64) -> (&'static str, f64) {
    // A standing figure of 1 to 2.5 m, in each unit vkskin knows (CMU's is 5.6444 cm).
    match extent {
        extent if extent <= 4.0 => ("metres", 1.0),
        extent if extent <= 45.0 => ("CMU units of 5.6444 cm", 0.056444),
        extent if extent <= 110.0 => ("inches", 0.0254),
        extent if extent <= 400.0 => ("centimetres", 0.01),
        _ => ("millimetres", 0.001),
    }
}

/// Every format's numbers may overflow to infinity on the way to a model (an MD5 weight of 3e38
/// times an offset): such a model would load and draw nothing, or NaN, without a word.
fn check_finite(model: &Model) -> Result<(), String> {
    if let Some((index, vertex)) = model.vertices.iter().enumerate().find(|(_, vertex)| !vertex.position.is_finite()) {
        return Err(format!(
            "vertex {index}: expected a finite bind-pose position, found {} (weights or offsets too large)",
            vertex.position
        ));
    }
    if let Some((index, joint)) = model.skeleton.joints.iter().enumerate().find(|(_, joint)| {
        !joint.inverse_bind.is_finite() || !joint.rest.translation.is_finite() || !joint.rest.rotation.is_finite()
    }) {
        return Err(format!("joint {index} ({}): expected a finite bind pose", files::quoted(&joint.name)));
    }
    Ok(())
}

/// Loads a model, choosing the format by magic bytes and extension. `animations` are files whose
/// clips play on it: an MD5 mesh's own .md5anim files, or any format's clips matched by joint name
/// ([`crate::anim::retarget`]).
pub fn load_model(path: &Path, animations: &[PathBuf]) -> Result<Model, FormatError> {
    let mut model = read_model(path, animations)?;
    model.compute_bounds();
    Ok(model)
}

/// [`load_model`] without the culling cells ([`Model::compute_bounds`]), for a caller with other
/// work to do beside them: `inspect`, `render` and `soak` build the levels of detail meanwhile.
pub fn read_model(path: &Path, animations: &[PathBuf]) -> Result<Model, FormatError> {
    let format = Format::detect(path)?;
    // An MD5 mesh takes its own rig's .md5anim files as the format defines them (same joints, same
    // order, checked); everything else is matched by joint name.
    let (own, others): (Vec<PathBuf>, Vec<PathBuf>) =
        animations.iter().cloned().partition(|animation| format == Format::Md5 && is_md5_anim(animation));
    let mut model = match format {
        Format::Md5 => md5::load(path, &own),
        Format::Gltf => gltf::load(path),
        Format::Ms3d => ms3d::load(path),
        Format::Collada => collada::load(path),
        Format::Fbx => fbx::load(path),
        Format::Bvh => bvh::load(path),
        Format::Acl => acl::load(path),
    }?;
    check_finite(&model).map_err(|message| FormatError::in_file(path, message))?;
    if model.vertices.is_empty() && !model.skeleton.is_empty() {
        // Motion capture and ACL's clips never have a mesh: that is a note, not a warning.
        let what = if matches!(format, Format::Bvh | Format::Acl) { "motion alone" } else { "a \"without skin\" download" };
        let line = format!(
            "no mesh, only {} joints and {} animations ({what}): drawn as its skeleton; its clips play on a character \
             with `vkskin CHARACTER --anim {}`",
            model.skeleton.len(),
            model.animations.len(),
            path.display()
        );
        if matches!(format, Format::Bvh | Format::Acl) {
            model.stats.notes.push(line);
        } else {
            model.stats.warnings.push(line);
        }
    }
    // Targets without normal offsets (COLLADA's always, glTF's without NORMAL) get them computed,
    // so that shading follows the moved surface.
    model.recompute_morph_normals();
    for animation in &others {
        add_clips(&mut model, animation)?;
    }
    // The free Psionic models ship their clips' frame ranges beside them; other authors put the
    // same table in a readme named after the model.
    if let Some(ranges_path) = ranges::ranges_file_beside(path) {
        if !model.animations.is_empty() {
            ranges::cut_by_file(&mut model, &ranges_path)?;
        }
    } else if model.animations.len() == 1 && model.clips.len() == 1 {
        if let Some(text_path) = ranges::text_beside(path) {
            // A readme that cannot be read is no reason to refuse the model.
            let text = files::read_text(&text_path, files::MAX_MODEL_BYTES).unwrap_or_default();
            if let Some(table) = ranges::table_in(&text) {
                let name = text_path.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
                ranges::cut_table(&mut model, &table, &name);
            }
        }
    }
    Ok(model)
}

/// A .md5anim, by extension or by its `numFrames` line.
fn is_md5_anim(path: &Path) -> bool {
    if path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("md5anim")) {
        return true;
    }
    files::read_prefix(path, 512, false)
        .is_ok_and(|head| Format::from_magic(&head) == Some(Format::Md5) && String::from_utf8_lossy(&head).contains("numFrames"))
}

/// A file read for its joints and clips alone: any model format (with or without a mesh), or a
/// .md5anim on its own.
pub fn read_clips(path: &Path) -> Result<Model, FormatError> {
    // read_model checks its model's numbers; a lone .md5anim's are checked here.
    let model = if is_md5_anim(path) {
        let model = md5::load_animation_only(path)?;
        check_finite(&model).map_err(|message| FormatError::in_file(path, message))?;
        model
    } else {
        read_model(path, &[])?
    };
    if model.animations.is_empty() {
        return Err(FormatError::in_file(path, "expected animations to play on the model, found none"));
    }
    Ok(model)
}

/// Whether a file holds clips but nothing to draw (a "without skin" download): dropped on the
/// viewer, it adds its clips to the model shown rather than replacing it.
pub fn is_clips_only(path: &Path) -> bool {
    is_md5_anim(path) || read_model(path, &[]).is_ok_and(|model| model.vertices.is_empty() && !model.animations.is_empty())
}

/// Plays the clips of `path` on `model`, matched by joint name: each becomes an animation and a
/// clip of the model, named as in its file (with the file's name after it where the model has a
/// clip of that name already); what matched goes into the model's warnings.
pub fn add_clips(model: &mut Model, path: &Path) -> Result<(), FormatError> {
    let source = read_clips(path)?;
    // The two rigs' fronts, so that a walk forward on one walks forward on the other.
    let facing = crate::anim::retarget::facing_turn(source.facing_yaw(), model.facing_yaw());
    let mut retargeted = crate::anim::retarget::retarget(&source.skeleton, &source.animations, &model.skeleton, facing)
        .map_err(|message| FormatError::in_file(path, format!("its clips cannot play on {}: {message}", model.name)))?;
    // A mesh node (a rigid part, a skinned mesh's own node) is no bone a clip leaves at rest.
    let mesh_node_names: Vec<&str> = model
        .layout
        .mesh_nodes
        .iter()
        .filter_map(|&joint| model.skeleton.joints.get(joint))
        .map(|joint| joint.name.as_str())
        .collect();
    retargeted.missing_in_source.retain(|name| !mesh_node_names.contains(&name.as_str()));
    let file = path.file_name().map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned());
    // A full match is news, a partial one a warning.
    let report = format!("clips of {file}: {}", retargeted.report(source.skeleton.len()));
    if retargeted.missing_in_target.is_empty() && retargeted.missing_in_source.is_empty() {
        model.stats.notes.push(report);
    } else {
        model.stats.warnings.push(report);
    }
    // Morph weights follow their targets by name; a target the model lacks is dropped.
    let mut model_targets: ahash::AHashMap<&str, usize> = ahash::AHashMap::new();
    for (index, target) in model.morph_targets.iter().enumerate() {
        model_targets.entry(target.name.as_str()).or_insert(index);
    }
    let target_of = |source_target: usize| model_targets.get(source.morph_targets.get(source_target)?.name.as_str()).copied();
    let weights: Vec<Vec<crate::anim::WeightChannel>> = retargeted
        .animations
        .iter()
        .map(|animation| {
            let mapped = animation.weights.iter().filter_map(|channel| Some((target_of(channel.target)?, channel)));
            mapped.map(|(target, channel)| crate::anim::WeightChannel { target, ..channel.clone() }).collect()
        })
        .collect();
    let mut names: std::collections::HashSet<String> = model.clips.iter().map(|clip| clip.name.clone()).collect();
    for (mut animation, weights) in retargeted.animations.into_iter().zip(weights) {
        animation.weights = weights;
        if !names.insert(animation.name.clone()) {
            animation.name = format!("{} ({file})", animation.name);
            names.insert(animation.name.clone());
        }
        animation.source = Some(path.to_path_buf());
        model.clips.push(crate::anim::Clip {
            name: animation.name.clone(),
            animation: model.animations.len(),
            start: 0.0,
            duration: animation.duration,
            motion: None,
        });
        model.animations.push(animation);
    }
    Ok(())
}
