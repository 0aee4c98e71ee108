//! FBX (binary and ASCII, 6.1 to 7.7) through the `ufbx` crate: FBX is a large, loosely specified
//! format that ufbx reads as the authoring tools write it (pivots, pre-rotations, geometric
//! transforms, takes), so this loader only maps its scene onto a [`Model`].
//!
//! - Every node but the scene root is a joint, parents first. The scene root carries ufbx's
//!   conversion to Y-up metres, which becomes the top-level joints' `pre`.
//! - Skinned meshes are put in the bind pose in world space through each skin's clusters, whose
//!   bind matrices give their bones' inverse binds; other joints bind at their rest pose, and an
//!   unskinned mesh follows its own node.
//! - Every animation stack becomes linear translation, rotation and scale keys per node, sampled
//!   from ufbx's evaluation where the pose bends ([`animation`]), which the GPU samples like any
//!   other format's keys. A clip's time 0 is its stack's start.
//!
//! - Each material's diffuse colour, and its diffuse (or PBR base colour) texture: embedded, or
//!   the file it names found as the other formats find theirs.
//!
//! - Blend shapes become morph targets on the model's vertices (sparse, model space) and their
//!   animated DeformPercent each stack's weight channels, which the skin pass morphs by.

mod animation;
mod meshes;
mod skeleton;

use std::path::Path;

use glam::{Mat4, Quat, Vec2, Vec3, Vec4};

use crate::anim::Skeleton;
use crate::formats::{files, FormatError};
use crate::model::{FileLayout, LoadStats, Model};

/// ufbx may use this many bytes for each byte of the file (and at least [`MIN_MEMORY`]): time and
/// memory stay in proportion to the file.
const MEMORY_PER_BYTE: usize = 64;
const MIN_MEMORY: usize = 64 << 20;

pub fn load(path: &Path) -> Result<Model, FormatError> {
    let bytes = files::read(path, files::MAX_MODEL_BYTES).map_err(|message| FormatError::in_file(path, message))?;
    from_bytes(&bytes, path)
}

/// [`load`] from the file's bytes (`path` names it in errors and the model): the scene parsed by
/// ufbx, then its nodes as joints, its meshes, its stacks.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Model, FormatError> {
    let scene = parse(bytes).map_err(|message| FormatError::in_file(path, message))?;
    let mut warnings = Vec::new();
    let rig = skeleton::read(&scene);
    let folder = path.parent().unwrap_or(Path::new(""));
    let geometry = meshes::read(&scene, &rig, folder, &mut warnings);
    let layout = FileLayout {
        to_model: rig.conversion,
        // ufbx's node order is the file's; the joints sorted by depth from it.
        joint_order: {
            let mut order: Vec<u32> = (0..rig.nodes.len() as u32).collect();
            order.sort_by_key(|&joint| rig.nodes[joint as usize].element.typed_id);
            order
        },
        meshes: geometry.file_meshes,
        mesh_nodes: (0..rig.nodes.len()).filter(|&joint| rig.nodes[joint].mesh.is_some()).collect(),
    };
    let mut model = Model {
        name: path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default(),
        vertices: geometry.vertices,
        influences: geometry.influences,
        indices: geometry.indices,
        meshes: geometry.meshes,
        materials: geometry.materials,
        skeleton: Skeleton { joints: rig.joints },
        animations: Vec::new(),
        clips: Vec::new(),
        bounds: Default::default(),
        levels: Vec::new(),
        stats: LoadStats { max_influences: geometry.max_influences, warnings, ..LoadStats::default() },
        layout,
        morph_targets: geometry.morph_targets,
        influence_offsets: Vec::new(),
    };
    // Last: the stacks are sampled to a tolerance in the model's extent, and by what each joint
    // moves of it.
    model.animations = animation::read(&scene, &rig.nodes, &model, &geometry.target_of_channel)
        .map_err(|message| FormatError::in_file(path, message))?;
    model.clip_each_animation();
    Ok(model)
}

/// How often (bytes) ufbx says how far it has read: where a broken file stopped it, to this.
const PROGRESS_BYTES: u64 = 1024;

/// How the scene is read: Y-up in metres, normals made where the file has none, and Maya's segment
/// scale compensation and other inheritance that is not plain parent * child as scale helper nodes
/// (joints here), which make it plain, so the GPU composes as ufbx does.
fn scene_options<'a>() -> ufbx::LoadOpts<'a> {
    ufbx::LoadOpts {
        target_axes: ufbx::CoordinateAxes::right_handed_y_up(),
        target_unit_meters: 1.0,
        generate_missing_normals: true,
        inherit_mode_handling: ufbx::InheritModeHandling::Compensate,
        ..Default::default()
    }
}

/// The scene, Y-up in metres, within the memory budget. A file ufbx refuses gets its reason and
/// where it stopped reading: the byte offset, and the line for an ASCII file.
fn parse(bytes: &[u8]) -> Result<ufbx::SceneRoot, String> {
    let limit = bytes.len().saturating_mul(MEMORY_PER_BYTE).max(MIN_MEMORY);
    let mut read = 0u64;
    let mut progress = |progress: &ufbx::Progress| {
        read = progress.bytes_read;
        ufbx::ProgressResult::Continue
    };
    let mut options = ufbx::LoadOpts {
        progress_cb: ufbx::ProgressCb::Mut(&mut progress),
        progress_interval_hint: PROGRESS_BYTES,
        ..scene_options()
    };
    options.result_allocator.memory_limit = limit;
    options.temp_allocator.memory_limit = limit;
    let scene = ufbx::load_memory(bytes, options);
    scene.map_err(|problem| {
        let at = (read as usize).min(bytes.len());
        format!(
            "{}: expected an FBX file (binary or ASCII, 6.1 to 7.7) ufbx can read: {}",
            where_stopped(bytes, at),
            reason(&problem)
        )
    })
}

/// Where ufbx stopped reading, for an error: `byte N` (it had read up to there, give or take
/// [`PROGRESS_BYTES`]), with the line of an ASCII file.
fn where_stopped(bytes: &[u8], at: usize) -> String {
    let binary = bytes.starts_with(b"Kaydara FBX Binary");
    if binary || at == 0 {
        return format!("near byte {at} of {}", bytes.len());
    }
    let line = 1 + bytes[..at].iter().filter(|&&byte| byte == b'\n').count();
    format!("near line {line} (byte {at} of {})", bytes.len())
}

/// What ufbx says went wrong: its description, its detail, and where in its reading it was (the
/// innermost frames of its error stack: "Failed to load" alone says nothing).
fn reason(problem: &ufbx::Error) -> String {
    let mut text = problem.description.to_string();
    if !problem.info().is_empty() {
        text += &format!(" ({})", problem.info());
    }
    let frames: Vec<String> = problem
        .stack
        .iter()
        .take(problem.stack_size as usize)
        .map(|frame| frame.description.to_string())
        .filter(|description| !description.is_empty() && *description != text)
        .take(2)
        .collect();
    if !frames.is_empty() {
        text += &format!(": {}", frames.join(", in "));
    }
    text
}

/// ufbx's 3×4 matrix (column-major, f64) as glam's.
pub fn matrix(m: &ufbx::Matrix) -> Mat4 {
    Mat4::from_cols(
        Vec4::new(m.m00 as f32, m.m10 as f32, m.m20 as f32, 0.0),
        Vec4::new(m.m01 as f32, m.m11 as f32, m.m21 as f32, 0.0),
        Vec4::new(m.m02 as f32, m.m12 as f32, m.m22 as f32, 0.0),
        Vec4::new(m.m03 as f32, m.m13 as f32, m.m23 as f32, 1.0),
    )
}

fn vec3(v: ufbx::Vec3) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

fn vec2(v: ufbx::Vec2) -> Vec2 {
    Vec2::new(v.x as f32, v.y as f32)
}

fn quat(q: ufbx::Quat) -> Quat {
    Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32).normalize()
}
