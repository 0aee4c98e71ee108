//! id Software's MD5 format (Doom 3): a `.md5mesh` holds the bind-pose skeleton and the skinned
//! meshes, each `.md5anim` one clip for that skeleton.
//!
//! Two layers. The document types ([`Md5Mesh`], [`Md5Anim`]) mirror the text exactly, so
//! `parse_*(write_*(document)) == document`. [`load`] turns a mesh and its animations into the one
//! [`Model`] type: converted from MD5's Z-up to vkskin's Y-up, every weight kept as an influence,
//! each animation's frames kept as uniform-rate channels of the joints' local values.
//!
//! The parser trusts nothing in the file: every count is checked against what is present, every
//! index against what it points into, and no count read from the file sizes an allocation before
//! the items it counts have been read. It forgives what assimp forgives: inside a mesh block, a
//! line starting with a word the format does not have (a misspelled `shader`) is skipped, with
//! one warning for all of them. Every refusal names the file and line.
//!
//! `parse.rs`: text into the document types; `write.rs`: back; `convert.rs`: the document into
//! the `Model`. Here: the document types and the load.

use std::path::{Path, PathBuf};

use glam::{Quat, Vec2, Vec3};

use crate::anim::{Influence, Joint, JointPose, Skeleton};
use crate::formats::{texture, FormatError};
use crate::model::{compute_normals, compute_tangents, FileLayout, FileMesh, LoadStats, Mesh, Model, Vertex};

mod convert;
mod parse;
mod tokens;
mod write;
pub use convert::animation_channels;
use convert::{bind_pose, bind_vertex, file_stem, load_animation, load_material, local_rest, read_text, relative_to, VertPlace};
use parse::parse_mesh_with_lines;
pub use parse::{parse_anim, parse_mesh};
pub use write::{write_anim, write_mesh};

/// The joint names of a .md5mesh (its `joints` block) or a .md5anim (its `hierarchy` block), in
/// order, read from the file's first megabyte without parsing the rest; None for a file without
/// such a block there. Which .md5anim files beside a mesh are its clips goes by these.
pub fn joint_names(path: &Path) -> Option<Vec<String>> {
    let head = crate::formats::files::read_prefix(path, 1 << 20, false).ok()?;
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.lines().map(str::trim);
    lines.find(|line| line.starts_with("joints") || line.starts_with("hierarchy"))?;
    let mut names = Vec::new();
    for line in lines {
        if line.starts_with('}') {
            return Some(names);
        }
        let name = line.strip_prefix('"')?.split('"').next()?;
        names.push(name.to_string());
    }
    None
}

/// The only version id's tools wrote, and the only one this loader reads.
const VERSION: i64 = 10;

/// What a hierarchy joint's `flags` bits replace, lowest bit first.
const COMPONENT_NAMES: [&str; 6] = ["Tx", "Ty", "Tz", "Qx", "Qy", "Qz"];

/// `flags` uses only the six bits of [`COMPONENT_NAMES`].
const FLAG_MASK: u32 = 0b11_1111;

/// Extensions tried when a shader names a texture that is not there as written: exporters often
/// drop the extension, or name a `.tga` that was later converted.
const TEXTURE_EXTENSIONS: [&str; 3] = ["png", "tga", "jpg"];

/// Z-up to Y-up: a -90° turn about X, which takes (x, y, z) to (x, z, -y).
const Z_UP_TO_Y_UP: Quat = Quat::from_xyzw(-std::f32::consts::FRAC_1_SQRT_2, 0.0, 0.0, std::f32::consts::FRAC_1_SQRT_2);

// ---------------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------------

/// A `.md5mesh` file, field for field.
#[derive(Clone, Debug, PartialEq)]
pub struct Md5Mesh {
    pub commandline: String,
    pub joints: Vec<Md5Joint>,
    pub meshes: Vec<Md5MeshPart>,
}

/// A bind-pose joint, in model space.
#[derive(Clone, Debug, PartialEq)]
pub struct Md5Joint {
    pub name: String,
    /// -1 for a root; otherwise an earlier joint's index.
    pub parent: i32,
    pub position: Vec3,
    /// x, y, z of a unit quaternion; w is implied (see [`orientation_from_xyz`]).
    pub orientation: Vec3,
}

/// One `mesh { .. }` section: a shader and its own vertices, triangles and weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Md5MeshPart {
    pub shader: String,
    pub verts: Vec<Md5Vert>,
    pub tris: Vec<[u32; 3]>,
    pub weights: Vec<Md5Weight>,
}

impl Md5MeshPart {
    /// A vertex's weights (none where its range runs past the part's: the parser refuses such a
    /// part, so only a document built by hand can have one).
    pub fn weights_of(&self, vert: &Md5Vert) -> &[Md5Weight] {
        let start = vert.start_weight as usize;
        self.weights.get(start..start.saturating_add(vert.weight_count as usize)).unwrap_or(&[])
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Md5Vert {
    pub uv: Vec2,
    /// The vertex's weights are `weights[start_weight..start_weight + weight_count]`.
    pub start_weight: u32,
    pub weight_count: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Md5Weight {
    pub joint: u32,
    pub bias: f32,
    /// In the joint's space: the vertex is the bias-weighted sum of `joint.position + joint.orientation * position`.
    pub position: Vec3,
}

/// A `.md5anim` file, field for field.
#[derive(Clone, Debug, PartialEq)]
pub struct Md5Anim {
    pub commandline: String,
    pub frame_rate: f32,
    pub num_animated_components: u32,
    pub hierarchy: Vec<Md5Hierarchy>,
    /// Per frame, the model's box in MD5 (Z-up) model space: `[min, max]`.
    pub bounds: Vec<[Vec3; 2]>,
    /// Per joint, the parent-relative `[position, orientation xyz]` that frames patch.
    pub baseframe: Vec<[Vec3; 2]>,
    /// Per frame, `num_animated_components` values.
    pub frames: Vec<Vec<f32>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Md5Hierarchy {
    pub name: String,
    pub parent: i32,
    /// Which baseframe components a frame replaces: bits 1 Tx, 2 Ty, 4 Tz, 8 Qx, 16 Qy, 32 Qz.
    pub flags: u32,
    /// Where in a frame's values this joint's replacements start, in bit order.
    pub start_index: u32,
}

/// The rotation an MD5 file means by the x, y, z it stores. id's tools keep w ≤ 0 and drop it;
/// the radicand is clamped because rounded components can sum to slightly more than one.
pub fn orientation_from_xyz(xyz: Vec3) -> Quat {
    let radicand = 1.0 - xyz.x * xyz.x - xyz.y * xyz.y - xyz.z * xyz.z;
    Quat::from_xyzw(xyz.x, xyz.y, xyz.z, -radicand.max(0.0).sqrt())
}

/// Loads a `.md5mesh` and any number of `.md5anim` clips for it into a Y-up [`Model`].
/// Without culling cells: [`crate::formats::load_model`] adds them.
pub fn load(mesh_path: &Path, anim_paths: &[PathBuf]) -> Result<Model, FormatError> {
    let text = read_text(mesh_path)?;
    let anims = anim_paths.iter().map(|path| Ok((read_text(path)?, path.clone()))).collect::<Result<Vec<_>, FormatError>>()?;
    load_from_text(&text, mesh_path, &anims)
}

/// [`load`] on text already in memory: `anims` are (text, path) pairs, the paths naming the files
/// in errors and clips. Textures are still looked up beside `mesh_path`. The fuzz target's entry.
pub fn load_from_text(text: &str, mesh_path: &Path, anims: &[(String, PathBuf)]) -> Result<Model, FormatError> {
    let (document, lines) = parse_mesh_with_lines(text, mesh_path)?;
    let joint_limit = usize::from(u16::MAX) + 1;
    if document.joints.len() > joint_limit {
        return Err(FormatError::at_line(
            mesh_path,
            lines.num_joints,
            format!("expected at most {joint_limit} joints (vertex joint indices are 16-bit), found {}", document.joints.len()),
        ));
    }

    let bind: Vec<JointPose> = document.joints.iter().map(bind_pose).collect();
    let skeleton = Skeleton {
        joints: document
            .joints
            .iter()
            .zip(&bind)
            .map(|(joint, pose)| {
                let parent = usize::try_from(joint.parent).ok();
                let mut skeleton_joint = Joint::new(joint.name.clone(), parent, pose.to_mat4().inverse(), local_rest(joint));
                if parent.is_none() {
                    // Roots turn from MD5's Z-up into Y-up; children inherit it through them.
                    skeleton_joint.pre = glam::Mat4::from_quat(Z_UP_TO_Y_UP);
                } else if let Some(parent_pose) = parent.and_then(|parent| bind.get(parent)) {
                    skeleton_joint.rest = relative_to(*parent_pose, *pose);
                }
                skeleton_joint
            })
            .collect(),
    };

    // Numbers past f32 on the way to a joint's bind pose (a position of 3e38 turned): refused at
    // the joint's line.
    let finite =
        |joint: &Joint| joint.inverse_bind.is_finite() && joint.rest.translation.is_finite() && joint.rest.rotation.is_finite();
    if let Some((index, joint)) = skeleton.joints.iter().enumerate().find(|(_, joint)| !finite(joint)) {
        return Err(FormatError::at_line(
            mesh_path,
            lines.joints.get(index).copied().unwrap_or(lines.num_joints),
            format!("joint {index} (\"{}\"): expected a finite bind pose, found numbers past f32", joint.name),
        ));
    }

    let folder = mesh_path.parent().unwrap_or(Path::new(""));
    let mut stats = LoadStats::default();
    if let Some((line, word)) = lines.skipped.first() {
        let more = match lines.skipped.len() {
            1 => String::new(),
            count => format!(" ({} more like it)", count - 1),
        };
        stats.warnings.push(format!(
            "line {line}: a line starting with '{word}', a word mesh blocks do not have (a misspelled keyword?): skipped{more}"
        ));
    }
    let mut vertices: Vec<Vertex> = Vec::new();
    let mut influences: Vec<Influence> = Vec::new();
    let mut offsets: Vec<Vec3> = Vec::new();
    let mut indices: Vec<u32> = Vec::new();
    let mut meshes = Vec::new();
    let mut materials = Vec::new();
    let mut textures = texture::Library::default();
    let mut file_meshes = Vec::with_capacity(document.meshes.len());
    for (part_index, ((part, vert_lines), &mesh_line)) in document.meshes.iter().zip(&lines.verts).zip(&lines.meshes).enumerate()
    {
        let name = format!("mesh_{part_index}");
        if part.verts.is_empty() || part.tris.is_empty() {
            file_meshes.push(FileMesh { name, vertices: vec![None; part.verts.len()] });
            continue;
        }
        let mut part_vertices = Vec::with_capacity(part.verts.len());
        for (vert_index, (vert, &line)) in part.verts.iter().zip(vert_lines).enumerate() {
            let place = VertPlace { path: mesh_path, line, index: vert_index };
            part_vertices.push(bind_vertex(vert, &part.weights, &bind, place, (&mut influences, &mut offsets), &mut stats)?);
        }
        let part_indices: Vec<u32> = part.tris.iter().flatten().copied().collect();
        // Per part: MD5 parts share no vertices, so normals never smooth across a part boundary.
        compute_normals(&mut part_vertices, &part_indices);
        compute_tangents(&mut part_vertices, &part_indices);

        let too_many =
            || FormatError::at_line(mesh_path, mesh_line, "expected at most 2^32 vertices and indices in all, found more");
        let first_vertex = u32::try_from(vertices.len()).map_err(|_| too_many())?;
        u32::try_from(vertices.len() + part_vertices.len()).map_err(|_| too_many())?;
        let first_index = u32::try_from(indices.len()).map_err(|_| too_many())?;
        let index_count = u32::try_from(part_indices.len()).map_err(|_| too_many())?;
        indices.extend(part_indices.iter().map(|&index| first_vertex.saturating_add(index)));
        file_meshes
            .push(FileMesh { name: name.clone(), vertices: (first_vertex..).take(part_vertices.len()).map(Some).collect() });
        vertices.extend(part_vertices);
        meshes.push(Mesh { name, first_index, index_count, material: materials.len() });
        materials.push(load_material(&part.shader, folder, part_index, &mut textures, &mut stats.warnings));
    }

    let animations = anims
        .iter()
        .map(|(text, anim_path)| load_animation(text, anim_path, mesh_path, &document))
        .collect::<Result<Vec<_>, _>>()?;

    let mut model = Model {
        name: file_stem(mesh_path),
        vertices,
        influences,
        indices,
        meshes,
        materials,
        skeleton,
        animations,
        clips: Vec::new(),
        bounds: Default::default(),
        levels: Vec::new(),
        stats,
        layout: FileLayout { to_model: glam::Mat4::from_quat(Z_UP_TO_Y_UP), meshes: file_meshes, ..FileLayout::default() },
        morph_targets: Vec::new(),
        influence_offsets: offsets,
    };
    model.settle_influence_offsets();
    model.clip_each_animation();
    Ok(model)
}

/// A `.md5anim` on its own, as a model of joints and one clip without a mesh: what `--anim`
/// plays on a model of another format. The hierarchy and baseframe are the skeleton (its rest and
/// bind pose), Z-up turned to Y-up on the roots as a mesh's are.
pub fn load_animation_only(anim_path: &Path) -> Result<Model, FormatError> {
    let text = read_text(anim_path)?;
    let anim = parse_anim(&text, anim_path)?;
    let skeleton = Skeleton {
        joints: anim
            .hierarchy
            .iter()
            .zip(&anim.baseframe)
            .map(|(joint, &[position, orientation])| {
                let parent = usize::try_from(joint.parent).ok();
                let mut skeleton_joint = Joint::new(
                    joint.name.clone(),
                    parent,
                    glam::Mat4::IDENTITY,
                    JointPose::new(orientation_from_xyz(orientation), position),
                );
                if parent.is_none() {
                    skeleton_joint.pre = glam::Mat4::from_quat(Z_UP_TO_Y_UP);
                }
                skeleton_joint
            })
            .collect(),
    };
    Ok(Model::skeleton_only(
        file_stem(anim_path),
        skeleton,
        vec![animation_channels(&anim, &file_stem(anim_path))],
        LoadStats::default(),
        FileLayout { to_model: glam::Mat4::from_quat(Z_UP_TO_Y_UP), ..FileLayout::default() },
    ))
}

#[cfg(test)]
mod tests {
    use super::convert::{texture_candidates, to_y_up};
    use super::parse::Parser;
    use super::tokens::{TokenKind, Tokenizer};
    use super::*;

    fn tokens(text: &str) -> Vec<(TokenKind<'_>, usize)> {
        let mut tokenizer = Tokenizer::new(text, Path::new("test.md5mesh"));
        let mut out = Vec::new();
        loop {
            let token = tokenizer.next().expect("test text tokenizes");
            out.push((token.kind, token.line));
            if token.kind == TokenKind::End {
                return out;
            }
        }
    }

    #[test]
    fn tokenizer_splits_words_strings_brackets_and_counts_lines() {
        use TokenKind::*;
        let text = "joints {\r\n\t\"a b\"\t-1 ( 0 1.5 -2e-3 ) // parent\r\n}// done\n\n";
        assert_eq!(
            tokens(text),
            vec![
                (Word("joints"), 1),
                (OpenBrace, 1),
                (Quoted("a b"), 2),
                (Word("-1"), 2),
                (OpenParen, 2),
                (Word("0"), 2),
                (Word("1.5"), 2),
                (Word("-2e-3"), 2),
                (CloseParen, 2),
                (CloseBrace, 3),
                // The end reports the last line that had a token.
                (End, 3),
            ]
        );
    }

    #[test]
    fn tokenizer_ends_words_at_brackets_and_comments() {
        use TokenKind::*;
        assert_eq!(
            tokens("(1)x//y\n{\"\"}"),
            vec![
                (OpenParen, 1),
                (Word("1"), 1),
                (CloseParen, 1),
                (Word("x"), 1),
                (OpenBrace, 2),
                (Quoted(""), 2),
                (CloseBrace, 2),
                (End, 2),
            ]
        );
        assert_eq!(tokens(""), vec![(End, 1)]);
        assert_eq!(tokens("// only a comment"), vec![(End, 1)]);
    }

    #[test]
    fn tokenizer_rejects_a_string_left_open() {
        let mut tokenizer = Tokenizer::new("\n\"name\n\"", Path::new("open.md5mesh"));
        let error = tokenizer.next().expect_err("an unterminated string is an error");
        assert_eq!(error.location, crate::formats::Location::Line(2));
        assert!(error.to_string().contains("open.md5mesh:2: expected a closing '\"'"), "{error}");
    }

    #[test]
    fn parser_numbers_name_what_was_expected() {
        let path = Path::new("numbers.md5anim");
        let mut parser = Parser::new("1.2.3 nan inf 7 -3 2.5 1e39", path);
        let message = |result: Result<f32, FormatError>| result.expect_err("not a finite number").to_string();
        assert!(message(parser.float(format_args!("x"))).contains("expected a number for x, found '1.2.3'"));
        assert!(message(parser.float(format_args!("x"))).contains("expected a finite number for x, found 'nan'"));
        assert!(message(parser.float(format_args!("x"))).contains("finite"));
        assert_eq!(parser.float(format_args!("x")).ok(), Some(7.0), "integers are floats too");
        let error = parser.unsigned(format_args!("numverts")).expect_err("a negative count is an error");
        assert!(error.to_string().contains("expected an integer from 0 to"), "{error}");
        assert!(parser.unsigned(format_args!("numverts")).is_err(), "a count is not fractional");
        assert!(message(parser.float(format_args!("x"))).contains("finite"), "overflow to infinity is rejected");
    }

    #[test]
    fn quaternion_w_is_implied_non_positive_and_clamped() {
        assert_eq!(orientation_from_xyz(Vec3::ZERO), Quat::from_xyzw(0.0, 0.0, 0.0, -1.0));
        let half = orientation_from_xyz(Vec3::new(0.5, 0.5, 0.5));
        assert!((half.w + 0.5).abs() < 1e-7);
        assert!((half.length() - 1.0).abs() < 1e-6);
        // Rounded components summing past one clamp w to 0 instead of producing NaN.
        let over = orientation_from_xyz(Vec3::new(0.8, 0.6, 0.0001));
        assert_eq!(over.w, 0.0);
        // q and -q are the same rotation: the implied w changes nothing about where points go.
        let rotation = Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 1.0);
        let stored = -rotation; // w <= 0 as the file keeps it
        let implied = orientation_from_xyz(Vec3::new(stored.x, stored.y, stored.z));
        assert!((implied * Vec3::X).distance(rotation * Vec3::X) < 1e-6);
    }

    #[test]
    fn z_up_conversion_is_the_documented_rotation() {
        let point = Vec3::new(1.0, 2.0, 3.0);
        assert!((Z_UP_TO_Y_UP * point).distance(to_y_up(point)) < 1e-6);
        assert_eq!(to_y_up(point), Vec3::new(1.0, 3.0, -2.0));
        assert!(Z_UP_TO_Y_UP.abs_diff_eq(Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2), 1e-7));
    }

    #[test]
    fn texture_candidates_follow_the_documented_order() {
        let folder = Path::new("models");
        let candidates = texture_candidates("/textures/body.tga", folder);
        let expected = [
            "models/textures/body.tga",
            "models/textures/body.png",
            "models/textures/body.tga.png",
            "models/textures/body.tga.tga",
            "models/textures/body.jpg",
            "models/textures/body.tga.jpg",
            "models/body.tga",
            "models/body.png",
        ];
        for (candidate, expected) in candidates.iter().zip(expected) {
            assert_eq!(candidate, Path::new(expected));
        }
        let plain = texture_candidates("skin", folder);
        assert_eq!(plain.first().map(PathBuf::as_path), Some(Path::new("models/skin")));
        assert!(plain.contains(&PathBuf::from("models/skin.png")));
        assert_eq!(plain.len(), 4, "the file name alone is the same path here: {plain:?}");
    }
}
