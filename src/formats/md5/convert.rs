//! The document into the one `Model` type: Z-up to Y-up, every weight an influence, materials
//! and textures found beside the mesh, each animation's frames as uniform-rate channels.

use super::parse::{parse_anim_with_lines, to_usize};
use super::{orientation_from_xyz, Md5Anim, Md5Joint, Md5Mesh, Md5Vert, Md5Weight, TEXTURE_EXTENSIONS, Z_UP_TO_Y_UP};
use crate::anim::{Animation, Channel, Influence, Interpolation, JointPose, KeyTimes, Property};
use crate::formats::{files, texture, FormatError};
use crate::model::{normalize_influences, LoadStats, Material, Texture, Vertex};
use glam::{Vec3, Vec4};
use std::fmt;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// Loading into a Model
// ---------------------------------------------------------------------------------------------

pub(super) fn to_y_up(point: Vec3) -> Vec3 {
    Vec3::new(point.x, point.z, -point.y)
}

pub(super) fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned())
}

pub(super) fn file_stem(path: &Path) -> String {
    path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default()
}

/// A clip is named after its file, less the mesh's name: `imp_walk.md5anim` for `imp.md5mesh` is
/// "walk"; a file named otherwise keeps its whole stem.
pub(super) fn clip_name(anim_path: &Path, mesh_path: &Path) -> String {
    let stem = file_stem(anim_path);
    let prefix = format!("{}_", file_stem(mesh_path));
    match stem.strip_prefix(&prefix) {
        Some(rest) if !rest.is_empty() => rest.to_string(),
        _ => stem,
    }
}

pub(super) fn read_text(path: &Path) -> Result<String, FormatError> {
    // Old exporters wrote Latin-1 into comments and names; those bytes never decide a parse.
    crate::formats::files::read_text(path, crate::formats::files::MAX_MODEL_BYTES)
        .map_err(|message| FormatError::in_file(path, message))
}

/// A root joint's pose as the file states it, in MD5's Z-up model space (its `pre` turns it).
pub(super) fn local_rest(joint: &Md5Joint) -> JointPose {
    JointPose::new(orientation_from_xyz(joint.orientation), joint.position)
}

/// `pose` in the space of `parent` (both model space, unscaled).
pub(super) fn relative_to(parent: JointPose, pose: JointPose) -> JointPose {
    let inverse = parent.rotation.inverse();
    JointPose::new((inverse * pose.rotation).normalize(), inverse * (pose.translation - parent.translation))
}

/// A mesh joint's bind pose, converted to Y-up.
pub(super) fn bind_pose(joint: &Md5Joint) -> JointPose {
    JointPose::new((Z_UP_TO_Y_UP * orientation_from_xyz(joint.orientation)).normalize(), to_y_up(joint.position))
}

/// Where a vert is, for its errors.
#[derive(Clone, Copy)]
pub(super) struct VertPlace<'a> {
    pub(super) path: &'a Path,
    pub(super) line: usize,
    pub(super) index: usize,
}

impl VertPlace<'_> {
    pub(super) fn error(&self, message: impl fmt::Display) -> FormatError {
        FormatError::at_line(self.path, self.line, format!("vert {}: {message}", self.index))
    }
}

/// The vertex MD5 defines: position from all weights, and every weight kept as an influence
/// (appended to `influences`), normalized and heaviest first, with where its joint puts the vertex
/// in the bind pose less that position (appended to `offsets`: `Model::influence_offsets`). Two
/// weights on one joint are one influence at their weighted mean, which that joint carries as it
/// carries each.
pub(super) fn bind_vertex(
    vert: &Md5Vert,
    weights: &[Md5Weight],
    bind: &[JointPose],
    place: VertPlace<'_>,
    (influences, offsets): (&mut Vec<Influence>, &mut Vec<Vec3>),
    stats: &mut LoadStats,
) -> Result<Vertex, FormatError> {
    let start = to_usize(vert.start_weight);
    let end = start.saturating_add(to_usize(vert.weight_count));
    let Some(vert_weights) = weights.get(start..end) else {
        return Err(place.error(format_args!("expected weights {start}..{end} to exist, found {} weights", weights.len())));
    };
    if vert_weights.is_empty() {
        return Err(place.error("expected at least one weight (countWeight), found 0"));
    }

    let mut position = Vec3::ZERO;
    let mut raw = Vec::with_capacity(vert_weights.len());
    let mut points = Vec::with_capacity(vert_weights.len());
    for weight in vert_weights {
        let Some(joint) = bind.get(to_usize(weight.joint)) else {
            return Err(place.error(format_args!("expected a joint below {}, found {}", bind.len(), weight.joint)));
        };
        let point = joint.translation + joint.rotation * weight.position;
        position += weight.bias * point;
        raw.push(Influence { joint: weight.joint, weight: weight.bias });
        points.push(point);
    }
    // A joint named twice is still one influence; the sum must be positive to normalize.
    let Some(normalized) = normalize_influences(&raw) else {
        let total: f32 = raw.iter().map(|influence| influence.weight).sum();
        return Err(place.error(format_args!("expected weight biases with a positive sum, found {total}")));
    };
    if !position.is_finite() {
        return Err(
            place.error(format_args!("expected a finite bind-pose position, found {position} (weights or offsets too large)"))
        );
    }
    stats.max_influences = stats.max_influences.max(normalized.len());
    let first_influence =
        u32::try_from(influences.len()).map_err(|_| place.error("expected at most 2^32 influences in all, found more"))?;
    let influence_count = normalized.len() as u32;
    // Each joint's weighted points summed in one pass (a search per influence would be quadratic in
    // a vertex's weights, as normalize_influences' own merge once was), over the weights it keeps.
    let mut by_joint: ahash::AHashMap<u32, (Vec3, f32)> = ahash::AHashMap::new();
    for (weight, point) in raw.iter().zip(&points).filter(|(weight, _)| weight.weight > 0.0 && weight.weight.is_finite()) {
        let (sum, total) = by_joint.entry(weight.joint).or_insert((Vec3::ZERO, 0.0));
        *sum += weight.weight * *point;
        *total += weight.weight;
    }
    for influence in &normalized {
        let (sum, total) = by_joint[&influence.joint];
        offsets.push(sum / total - position);
    }
    influences.extend(normalized);
    Ok(Vertex { position, normal: Vec3::Y, tangent: Vec4::X, uv: vert.uv, color: Vec4::ONE, first_influence, influence_count })
}

/// The material of one mesh part; a texture that cannot be had is a warning, not an error. A normal
/// map beside the colour texture (`<name>_local` as Doom 3 names it, or `<name>_normal`) is used
/// when one is there; its absence is no warning, since most models have none.
pub(super) fn load_material(
    shader: &str,
    folder: &Path,
    part_index: usize,
    textures: &mut texture::Library,
    warnings: &mut Vec<String>,
) -> Material {
    if shader.is_empty() {
        return Material::untextured(format!("mesh_{part_index}"));
    }
    let candidates = texture_candidates(shader, folder);
    let mut failures = Vec::new();
    let texture = find_texture(&candidates, textures, &mut failures);
    let normal_map = ["_local", "_normal"].iter().find_map(|suffix| {
        let mut ignored = Vec::new();
        find_texture(&texture_candidates(&normal_map_name(shader, suffix), folder), textures, &mut ignored)
    });
    if let Some(texture) = texture {
        // The texture carries the colour; a white base leaves it as painted.
        return Material { name: shader.to_string(), base_color: Vec4::ONE, texture: Some(texture), normal_map };
    }
    let tried = candidates.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(", ");
    warnings.push(if failures.is_empty() {
        format!("no texture found for shader \"{shader}\"; tried {tried}")
    } else {
        format!("no texture decoded for shader \"{shader}\" ({}); tried {tried}", failures.join("; "))
    });
    Material { normal_map, ..Material::untextured(shader) }
}

/// The first candidate that exists and reads as an image; failures are collected for the warning.
pub(super) fn find_texture(
    candidates: &[PathBuf],
    textures: &mut texture::Library,
    failures: &mut Vec<String>,
) -> Option<Texture> {
    for candidate in candidates.iter().filter(|candidate| candidate.is_file()) {
        match textures.describe_file(candidate) {
            Ok(texture) => return Some(texture),
            Err(error) => failures.push(format!("{}: {error}", candidate.display())),
        }
    }
    None
}

/// `models/monsters/imp/imp.tga` with `_local` -> `models/monsters/imp/imp_local`: the suffix goes on
/// the file stem, and the extension is left to the candidate search.
pub(super) fn normal_map_name(shader: &str, suffix: &str) -> String {
    let written = files::written_path(shader);
    let path = Path::new(&written);
    let stem = path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    match path.parent().map(|parent| parent.to_string_lossy().into_owned()).filter(|parent| !parent.is_empty()) {
        Some(parent) => format!("{parent}/{stem}{suffix}"),
        None => format!("{stem}{suffix}"),
    }
}

/// Where a shader's texture may be, in the order tried: relative to the mesh's folder, the path as
/// written and then its file name alone, each as-is and with each known extension replacing or
/// added to its own.
pub(super) fn texture_candidates(shader: &str, folder: &Path) -> Vec<PathBuf> {
    let written = files::written_path(shader);
    // id's shaders are game-root paths ("/textures/.."): never look outside the model's folder.
    let relative = Path::new(written.trim_start_matches('/'));
    let mut bases = vec![folder.join(relative)];
    if let Some(name) = relative.file_name() {
        bases.push(folder.join(name));
    }
    let mut candidates: Vec<PathBuf> = Vec::new();
    for base in bases {
        let mut forms = vec![base.clone()];
        for extension in TEXTURE_EXTENSIONS {
            forms.push(base.with_extension(extension));
            let mut appended = base.clone().into_os_string();
            appended.push(".");
            appended.push(extension);
            forms.push(PathBuf::from(appended));
        }
        for form in forms {
            if !candidates.contains(&form) {
                candidates.push(form);
            }
        }
    }
    candidates
}

pub(super) fn load_animation(text: &str, anim_path: &Path, mesh_path: &Path, mesh: &Md5Mesh) -> Result<Animation, FormatError> {
    let (anim, lines) = parse_anim_with_lines(text, anim_path)?;
    let mesh_name = file_name(mesh_path);
    if anim.hierarchy.len() != mesh.joints.len() {
        return Err(FormatError::at_line(
            anim_path,
            lines.num_joints,
            format!("expected numJoints {} as in {mesh_name}, found {}", mesh.joints.len(), anim.hierarchy.len()),
        ));
    }
    let pairs = mesh.joints.iter().zip(&anim.hierarchy).zip(&lines.hierarchy).enumerate();
    for (index, ((mesh_joint, anim_joint), &line)) in pairs {
        if mesh_joint.name != anim_joint.name || mesh_joint.parent != anim_joint.parent {
            return Err(FormatError::at_line(
                anim_path,
                line,
                format!(
                    "expected joint {index} to be \"{}\" with parent {} as in {mesh_name}, found \"{}\" with parent {}",
                    mesh_joint.name, mesh_joint.parent, anim_joint.name, anim_joint.parent
                ),
            ));
        }
    }
    let mut animation = animation_channels(&anim, &clip_name(anim_path, mesh_path));
    animation.source = Some(anim_path.to_path_buf());
    Ok(animation)
}

/// An animation as the format defines it: per joint a translation and a rotation channel, one key
/// a frame at the frame rate, each storing only the components the joint's flags animate (the
/// baseframe gives the rest, the rotation's w is implied), the last frame running back into the
/// first. Assumes a parsed document (indices in range); a missing value keeps the baseframe's.
pub fn animation_channels(anim: &Md5Anim, name: &str) -> Animation {
    let frame_count = anim.frames.len();
    let step = 1.0 / anim.frame_rate;
    let mut channels = Vec::with_capacity(anim.hierarchy.len() * 2);
    for (joint, (hierarchy, &[base_position, base_orientation])) in anim.hierarchy.iter().zip(&anim.baseframe).enumerate() {
        let start = to_usize(hierarchy.start_index);
        for (property, bits, base) in [
            (Property::Translation, hierarchy.flags & 7, base_position),
            (Property::Rotation, (hierarchy.flags >> 3) & 7, base_orientation),
        ] {
            // Values before this channel's in the frame: the translation's, for the rotation.
            let skip = if property == Property::Rotation { (hierarchy.flags & 7).count_ones() as usize } else { 0 };
            let stored = bits.count_ones() as usize;
            let keys = if stored == 0 { 1 } else { frame_count.max(1) };
            let mut values = Vec::with_capacity(keys * stored);
            if stored > 0 {
                for frame in &anim.frames {
                    for component in 0..stored {
                        let at = start.saturating_add(skip + component);
                        values.push(frame.get(at).copied().unwrap_or(base[component_of(bits, component)]));
                    }
                }
                if anim.frames.is_empty() {
                    values.extend((0..stored).map(|component| base[component_of(bits, component)]));
                }
            }
            channels.push(Channel {
                joint,
                property,
                interpolation: Interpolation::Linear,
                times: KeyTimes::Uniform { start: 0.0, step, count: keys },
                mask: bits as u8,
                base: base.extend(0.0),
                implied_w: property == Property::Rotation,
                wraps: true,
                values,
            });
        }
    }
    let file_key_bytes = anim.frames.iter().map(Vec::len).sum::<usize>() * 4;
    Animation {
        name: name.to_string(),
        duration: frame_count as f32 * step,
        frame_rate: Some(anim.frame_rate),
        channels,
        file_key_bytes,
        source: None,
        weights: Vec::new(),
        compressed: None,
        motion: None,
    }
}

/// The component (0 x, 1 y, 2 z) of the `stored`-th set bit of `bits`.
pub(super) fn component_of(bits: u32, stored: usize) -> usize {
    (0..3).filter(|&bit| bits & (1 << bit) != 0).nth(stored).unwrap_or(0)
}
