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
//! the items it counts have been read.

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use glam::{Quat, Vec2, Vec3, Vec4};

use super::{texture, FormatError};
use crate::anim::{Animation, Channel, Influence, Interpolation, Joint, JointPose, KeyTimes, Property, Skeleton};
use crate::model::{compute_normals, compute_tangents, normalize_influences, LoadStats, Material, Mesh, Model, Texture, Vertex};

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

// ---------------------------------------------------------------------------------------------
// Tokenizer
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum TokenKind<'a> {
    /// A keyword or a number: anything up to whitespace, a bracket, a quote or a comment.
    Word(&'a str),
    /// The text between double quotes, which never spans lines.
    Quoted(&'a str),
    OpenParen,
    CloseParen,
    OpenBrace,
    CloseBrace,
    End,
}

impl fmt::Display for TokenKind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenKind::Word(word) => write!(f, "'{word}'"),
            TokenKind::Quoted(text) => write!(f, "\"{text}\""),
            TokenKind::OpenParen => f.write_str("'('"),
            TokenKind::CloseParen => f.write_str("')'"),
            TokenKind::OpenBrace => f.write_str("'{'"),
            TokenKind::CloseBrace => f.write_str("'}'"),
            TokenKind::End => f.write_str("end of file"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Token<'a> {
    kind: TokenKind<'a>,
    /// 1-based. For [`TokenKind::End`], the line of the last token, so a truncated file's error
    /// points at where its text stops rather than past it.
    line: usize,
}

struct Tokenizer<'a> {
    rest: &'a str,
    line: usize,
    last_token_line: usize,
    path: &'a Path,
}

impl<'a> Tokenizer<'a> {
    fn new(text: &'a str, path: &'a Path) -> Tokenizer<'a> {
        // A UTF-8 byte-order mark (some Windows editors write one) is not part of the first token.
        let rest = text.strip_prefix('\u{feff}').unwrap_or(text);
        Tokenizer { rest, line: 1, last_token_line: 1, path }
    }

    fn advance(&mut self, bytes: usize) {
        self.rest = self.rest.get(bytes..).unwrap_or_default();
    }

    fn token(&mut self, kind: TokenKind<'a>) -> Token<'a> {
        self.last_token_line = self.line;
        Token { kind, line: self.line }
    }

    fn next(&mut self) -> Result<Token<'a>, FormatError> {
        loop {
            let Some(first) = self.rest.chars().next() else {
                return Ok(Token { kind: TokenKind::End, line: self.last_token_line });
            };
            let bracket = match first {
                '(' => Some(TokenKind::OpenParen),
                ')' => Some(TokenKind::CloseParen),
                '{' => Some(TokenKind::OpenBrace),
                '}' => Some(TokenKind::CloseBrace),
                _ => None,
            };
            if let Some(kind) = bracket {
                self.advance(1);
                return Ok(self.token(kind));
            }
            if first == '\n' {
                self.line += 1;
                self.advance(1);
                continue;
            }
            // Also takes the '\r' of CRLF line ends.
            if first.is_whitespace() {
                self.advance(first.len_utf8());
                continue;
            }
            if self.rest.starts_with("//") {
                let comment_length = self.rest.find('\n').unwrap_or(self.rest.len());
                self.advance(comment_length);
                continue;
            }
            if first == '"' {
                let body = self.rest.get(1..).unwrap_or_default();
                let end = body.find(['"', '\n']);
                let closed = end.and_then(|end| body.get(end..)).is_some_and(|tail| tail.starts_with('"'));
                return match end {
                    Some(end) if closed => {
                        let text = body.get(..end).unwrap_or_default();
                        let token = self.token(TokenKind::Quoted(text));
                        self.advance(end + 2);
                        Ok(token)
                    }
                    _ => Err(FormatError::at_line(
                        self.path,
                        self.line,
                        "expected a closing '\"' before the end of the line, found none",
                    )),
                };
            }
            let word_end = self
                .rest
                .find(|character: char| character.is_whitespace() || matches!(character, '(' | ')' | '{' | '}' | '"'))
                .unwrap_or(self.rest.len());
            let mut word = self.rest.get(..word_end).unwrap_or_default();
            if let Some(comment) = word.find("//") {
                word = word.get(..comment).unwrap_or_default();
            }
            if word.is_empty() {
                // Unreachable by the checks above; guards against looping forever if they change.
                self.advance(first.len_utf8());
                continue;
            }
            self.advance(word.len());
            return Ok(self.token(TokenKind::Word(word)));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

/// Reads tokens in order. Every `expected` argument finishes the sentence "expected ..., found ..."
/// of the error it raises.
struct Parser<'a> {
    tokenizer: Tokenizer<'a>,
    path: &'a Path,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, path: &'a Path) -> Parser<'a> {
        Parser { tokenizer: Tokenizer::new(text, path), path }
    }

    fn next(&mut self) -> Result<Token<'a>, FormatError> {
        self.tokenizer.next()
    }

    /// The line of the token read last.
    fn last_line(&self) -> usize {
        self.tokenizer.last_token_line
    }

    fn error(&self, line: usize, message: impl Into<String>) -> FormatError {
        FormatError::at_line(self.path, line, message)
    }

    fn unexpected(&self, token: Token<'_>, expected: fmt::Arguments<'_>) -> FormatError {
        self.error(token.line, format!("expected {expected}, found {}", token.kind))
    }

    /// Returns the keyword's line.
    fn keyword(&mut self, keyword: &str, expected: fmt::Arguments<'_>) -> Result<usize, FormatError> {
        let token = self.next()?;
        if token.kind == TokenKind::Word(keyword) {
            Ok(token.line)
        } else {
            Err(self.unexpected(token, expected))
        }
    }

    fn symbol(&mut self, symbol: TokenKind<'static>, expected: fmt::Arguments<'_>) -> Result<usize, FormatError> {
        let token = self.next()?;
        if token.kind == symbol {
            Ok(token.line)
        } else {
            Err(self.unexpected(token, expected))
        }
    }

    fn end(&mut self, expected: fmt::Arguments<'_>) -> Result<(), FormatError> {
        self.symbol(TokenKind::End, expected).map(|_| ())
    }

    fn string(&mut self, what: fmt::Arguments<'_>) -> Result<&'a str, FormatError> {
        let token = self.next()?;
        match token.kind {
            TokenKind::Quoted(text) => Ok(text),
            _ => Err(self.unexpected(token, format_args!("a quoted {what}"))),
        }
    }

    fn float(&mut self, what: fmt::Arguments<'_>) -> Result<f32, FormatError> {
        let token = self.next()?;
        self.float_from(token, what)
    }

    fn float_from(&self, token: Token<'_>, what: fmt::Arguments<'_>) -> Result<f32, FormatError> {
        let TokenKind::Word(word) = token.kind else {
            return Err(self.unexpected(token, format_args!("a number for {what}")));
        };
        match word.parse::<f32>() {
            Ok(value) if value.is_finite() => Ok(value),
            Ok(_) => Err(self.unexpected(token, format_args!("a finite number for {what}"))),
            Err(_) => Err(self.unexpected(token, format_args!("a number for {what}"))),
        }
    }

    /// Returns the value and its line.
    fn integer(&mut self, what: fmt::Arguments<'_>) -> Result<(i64, usize), FormatError> {
        let token = self.next()?;
        match token.kind {
            TokenKind::Word(word) => match word.parse::<i64>() {
                Ok(value) => Ok((value, token.line)),
                Err(_) => Err(self.unexpected(token, format_args!("an integer for {what}"))),
            },
            _ => Err(self.unexpected(token, format_args!("an integer for {what}"))),
        }
    }

    fn unsigned(&mut self, what: fmt::Arguments<'_>) -> Result<(u32, usize), FormatError> {
        let (value, line) = self.integer(what)?;
        match u32::try_from(value) {
            Ok(value) => Ok((value, line)),
            Err(_) => Err(self.error(line, format!("expected an integer from 0 to {} for {what}, found {value}", u32::MAX))),
        }
    }

    /// `keyword N` in a header; returns N and the line.
    fn count_field(&mut self, keyword: &str) -> Result<(u32, usize), FormatError> {
        self.keyword(keyword, format_args!("'{keyword}'"))?;
        self.unsigned(format_args!("{keyword}"))
    }

    /// `( x y )`.
    fn vec2(&mut self, what: fmt::Arguments<'_>) -> Result<Vec2, FormatError> {
        self.symbol(TokenKind::OpenParen, format_args!("'(' before {what}"))?;
        let x = self.float(format_args!("{what} x"))?;
        let y = self.float(format_args!("{what} y"))?;
        self.symbol(TokenKind::CloseParen, format_args!("')' after {what}"))?;
        Ok(Vec2::new(x, y))
    }

    /// `( x y z )`.
    fn vec3(&mut self, what: fmt::Arguments<'_>) -> Result<Vec3, FormatError> {
        self.symbol(TokenKind::OpenParen, format_args!("'(' before {what}"))?;
        let x = self.float(format_args!("{what} x"))?;
        let y = self.float(format_args!("{what} y"))?;
        let z = self.float(format_args!("{what} z"))?;
        self.symbol(TokenKind::CloseParen, format_args!("')' after {what}"))?;
        Ok(Vec3::new(x, y, z))
    }

    /// `MD5Version 10` and `commandline "..."`; returns the command line.
    fn header(&mut self) -> Result<String, FormatError> {
        self.keyword("MD5Version", format_args!("'MD5Version'"))?;
        let (version, line) = self.integer(format_args!("MD5Version"))?;
        if version != VERSION {
            return Err(self.error(line, format!("expected MD5Version {VERSION}, found {version}")));
        }
        self.keyword("commandline", format_args!("'commandline'"))?;
        Ok(self.string(format_args!("commandline"))?.to_string())
    }

    /// A joint's parent: -1, or an earlier joint so that parents are always computed first.
    fn parent(&mut self, index: u32, what: fmt::Arguments<'_>) -> Result<i32, FormatError> {
        let (parent, line) = self.integer(format_args!("the parent of {what}"))?;
        let valid = -1 <= parent && parent < i64::from(index);
        match i32::try_from(parent) {
            Ok(parent) if valid => Ok(parent),
            _ if index == 0 => {
                Err(self
                    .error(line, format!("expected the parent of {what} to be -1 (the first joint is a root), found {parent}")))
            }
            _ => Err(self.error(
                line,
                format!(
                    "expected the parent of {what} to be -1 or a joint before it (0 to {}), found {parent}",
                    i64::from(index) - 1
                ),
            )),
        }
    }
}

/// Lines of the items that [`load`] checks after parsing, so its errors can point at them too.
struct MeshLines {
    /// Per mesh part, per vert.
    verts: Vec<Vec<usize>>,
}

struct AnimLines {
    num_joints: usize,
    hierarchy: Vec<usize>,
}

/// Parses a `.md5mesh`. `path` only names the file in errors.
pub fn parse_mesh(text: &str, path: &Path) -> Result<Md5Mesh, FormatError> {
    parse_mesh_with_lines(text, path).map(|(mesh, _)| mesh)
}

/// Parses a `.md5anim`. `path` only names the file in errors.
pub fn parse_anim(text: &str, path: &Path) -> Result<Md5Anim, FormatError> {
    parse_anim_with_lines(text, path).map(|(anim, _)| anim)
}

fn parse_mesh_with_lines(text: &str, path: &Path) -> Result<(Md5Mesh, MeshLines), FormatError> {
    let mut parser = Parser::new(text, path);
    let commandline = parser.header()?;
    let (joint_count, _) = parser.count_field("numJoints")?;
    let (mesh_count, _) = parser.count_field("numMeshes")?;

    parser.keyword("joints", format_args!("'joints'"))?;
    parser.symbol(TokenKind::OpenBrace, format_args!("'{{' after 'joints'"))?;
    let mut joints = Vec::new();
    for index in 0..joint_count {
        let name = parser.string(format_args!("name of joint {index} (numJoints is {joint_count})"))?.to_string();
        let parent = parser.parent(index, format_args!("joint {index}"))?;
        let position = parser.vec3(format_args!("joint {index} position"))?;
        let orientation = parser.vec3(format_args!("joint {index} orientation"))?;
        joints.push(Md5Joint { name, parent, position, orientation });
    }
    parser.symbol(TokenKind::CloseBrace, format_args!("'}}' after {joint_count} joints (numJoints)"))?;

    let mut meshes = Vec::new();
    let mut vert_lines = Vec::new();
    for index in 0..mesh_count {
        let (part, lines) = parse_mesh_part(&mut parser, index, mesh_count, joint_count)?;
        meshes.push(part);
        vert_lines.push(lines);
    }
    parser.end(format_args!("end of file after {mesh_count} meshes (numMeshes)"))?;
    Ok((Md5Mesh { commandline, joints, meshes }, MeshLines { verts: vert_lines }))
}

/// One `mesh { .. }`; returns it and its vert lines.
fn parse_mesh_part(
    parser: &mut Parser<'_>,
    index: u32,
    mesh_count: u32,
    joint_count: u32,
) -> Result<(Md5MeshPart, Vec<usize>), FormatError> {
    parser.keyword("mesh", format_args!("'mesh' {index} (numMeshes is {mesh_count})"))?;
    parser.symbol(TokenKind::OpenBrace, format_args!("'{{' after 'mesh'"))?;
    parser.keyword("shader", format_args!("'shader'"))?;
    let shader = parser.string(format_args!("shader name"))?.to_string();

    let (vert_count, _) = parser.count_field("numverts")?;
    let mut verts = Vec::new();
    let mut vert_lines = Vec::new();
    for vert in 0..vert_count {
        let line = parser.keyword("vert", format_args!("'vert' {vert} (numverts is {vert_count})"))?;
        let (number, number_line) = parser.integer(format_args!("the index of vert {vert}"))?;
        if number != i64::from(vert) {
            return Err(parser.error(number_line, format!("expected vert index {vert}, found {number}")));
        }
        let uv = parser.vec2(format_args!("vert {vert} texture coordinates"))?;
        let (start_weight, _) = parser.unsigned(format_args!("vert {vert} startWeight"))?;
        let (weight_count, _) = parser.unsigned(format_args!("vert {vert} countWeight"))?;
        verts.push(Md5Vert { uv, start_weight, weight_count });
        vert_lines.push(line);
    }

    parser.keyword("numtris", format_args!("'numtris' after {vert_count} verts (numverts)"))?;
    let (tri_count, _) = parser.unsigned(format_args!("numtris"))?;
    let mut tris = Vec::new();
    for tri in 0..tri_count {
        parser.keyword("tri", format_args!("'tri' {tri} (numtris is {tri_count})"))?;
        let (number, number_line) = parser.integer(format_args!("the index of tri {tri}"))?;
        if number != i64::from(tri) {
            return Err(parser.error(number_line, format!("expected tri index {tri}, found {number}")));
        }
        let mut corners = [0u32; 3];
        for corner in &mut corners {
            let (vert, line) = parser.unsigned(format_args!("a vert index of tri {tri}"))?;
            if vert >= vert_count {
                return Err(
                    parser.error(line, format!("expected a vert index below {vert_count} (numverts) in tri {tri}, found {vert}"))
                );
            }
            *corner = vert;
        }
        tris.push(corners);
    }

    parser.keyword("numweights", format_args!("'numweights' after {tri_count} tris (numtris)"))?;
    let (weight_count, _) = parser.unsigned(format_args!("numweights"))?;
    let mut weights = Vec::new();
    for weight in 0..weight_count {
        parser.keyword("weight", format_args!("'weight' {weight} (numweights is {weight_count})"))?;
        let (number, number_line) = parser.integer(format_args!("the index of weight {weight}"))?;
        if number != i64::from(weight) {
            return Err(parser.error(number_line, format!("expected weight index {weight}, found {number}")));
        }
        let (joint, joint_line) = parser.unsigned(format_args!("the joint of weight {weight}"))?;
        if joint >= joint_count {
            return Err(parser.error(
                joint_line,
                format!("expected a joint index below {joint_count} (numJoints) in weight {weight}, found {joint}"),
            ));
        }
        let bias = parser.float(format_args!("weight {weight} bias"))?;
        let position = parser.vec3(format_args!("weight {weight} position"))?;
        weights.push(Md5Weight { joint, bias, position });
    }
    parser.symbol(TokenKind::CloseBrace, format_args!("'}}' after {weight_count} weights (numweights)"))?;

    // Verts come before the weights they point into, so their ranges are checked now.
    for (vert, (entry, &line)) in verts.iter().zip(&vert_lines).enumerate() {
        let end = u64::from(entry.start_weight) + u64::from(entry.weight_count);
        if end > u64::from(weight_count) {
            return Err(parser.error(
                line,
                format!(
                    "expected startWeight + countWeight of vert {vert} to be at most {weight_count} (numweights), found {} + {}",
                    entry.start_weight, entry.weight_count
                ),
            ));
        }
    }
    Ok((Md5MeshPart { shader, verts, tris, weights }, vert_lines))
}

fn parse_anim_with_lines(text: &str, path: &Path) -> Result<(Md5Anim, AnimLines), FormatError> {
    let mut parser = Parser::new(text, path);
    let commandline = parser.header()?;
    let (frame_count, frame_count_line) = parser.count_field("numFrames")?;
    if frame_count == 0 {
        return Err(parser.error(frame_count_line, "expected at least 1 frame (numFrames), found 0"));
    }
    let (joint_count, joint_count_line) = parser.count_field("numJoints")?;
    parser.keyword("frameRate", format_args!("'frameRate'"))?;
    let frame_rate = parser.float(format_args!("frameRate"))?;
    if frame_rate <= 0.0 {
        return Err(parser.error(parser.last_line(), format!("expected a positive frameRate, found {frame_rate}")));
    }
    let (component_count, _) = parser.count_field("numAnimatedComponents")?;

    parser.keyword("hierarchy", format_args!("'hierarchy'"))?;
    parser.symbol(TokenKind::OpenBrace, format_args!("'{{' after 'hierarchy'"))?;
    let mut hierarchy = Vec::new();
    let mut hierarchy_lines = Vec::new();
    for index in 0..joint_count {
        let name = parser.string(format_args!("name of joint {index} (numJoints is {joint_count})"))?.to_string();
        let line = parser.last_line();
        let parent = parser.parent(index, format_args!("joint {index}"))?;
        let (flags, flags_line) = parser.unsigned(format_args!("joint {index} flags"))?;
        if flags & !FLAG_MASK != 0 {
            return Err(parser.error(flags_line, format!("expected flags of joint {index} below 64 (six bits), found {flags}")));
        }
        let (start_index, start_line) = parser.unsigned(format_args!("joint {index} startIndex"))?;
        let end = u64::from(start_index) + u64::from(flags.count_ones());
        if end > u64::from(component_count) {
            return Err(parser.error(
                start_line,
                format!(
                    "expected startIndex + animated components of joint {index} to be at most {component_count} \
                     (numAnimatedComponents), found {start_index} + {}",
                    flags.count_ones()
                ),
            ));
        }
        hierarchy.push(Md5Hierarchy { name, parent, flags, start_index });
        hierarchy_lines.push(line);
    }
    parser.symbol(TokenKind::CloseBrace, format_args!("'}}' after {joint_count} joints (numJoints)"))?;

    parser.keyword("bounds", format_args!("'bounds'"))?;
    parser.symbol(TokenKind::OpenBrace, format_args!("'{{' after 'bounds'"))?;
    let mut bounds = Vec::new();
    for frame in 0..frame_count {
        let min = parser.vec3(format_args!("bounds {frame} minimum (numFrames is {frame_count})"))?;
        let max = parser.vec3(format_args!("bounds {frame} maximum"))?;
        bounds.push([min, max]);
    }
    parser.symbol(TokenKind::CloseBrace, format_args!("'}}' after {frame_count} bounds (numFrames)"))?;

    parser.keyword("baseframe", format_args!("'baseframe'"))?;
    parser.symbol(TokenKind::OpenBrace, format_args!("'{{' after 'baseframe'"))?;
    let mut baseframe = Vec::new();
    for index in 0..joint_count {
        let position = parser.vec3(format_args!("baseframe {index} position (numJoints is {joint_count})"))?;
        let orientation = parser.vec3(format_args!("baseframe {index} orientation"))?;
        baseframe.push([position, orientation]);
    }
    parser.symbol(TokenKind::CloseBrace, format_args!("'}}' after {joint_count} baseframe joints (numJoints)"))?;

    let component_total = to_usize(component_count);
    let mut frames = Vec::new();
    for frame in 0..frame_count {
        parser.keyword("frame", format_args!("'frame' {frame} (numFrames is {frame_count})"))?;
        let (number, number_line) = parser.integer(format_args!("the number of frame {frame}"))?;
        if number != i64::from(frame) {
            return Err(parser.error(number_line, format!("expected frame number {frame}, found {number}")));
        }
        parser.symbol(TokenKind::OpenBrace, format_args!("'{{' after 'frame {frame}'"))?;
        let mut values = Vec::new();
        loop {
            let token = parser.next()?;
            match token.kind {
                TokenKind::CloseBrace if values.len() == component_total => break,
                TokenKind::CloseBrace => {
                    return Err(parser.error(
                        token.line,
                        format!(
                            "expected {component_count} values (numAnimatedComponents) in frame {frame}, found {} before '}}'",
                            values.len()
                        ),
                    ));
                }
                _ if values.len() == component_total => {
                    return Err(parser.unexpected(
                        token,
                        format_args!("'}}' after {component_count} values (numAnimatedComponents) in frame {frame}"),
                    ));
                }
                _ => {
                    let value = parser.float_from(token, format_args!("frame {frame} value {}", values.len()))?;
                    values.push(value);
                }
            }
        }
        frames.push(values);
    }
    parser.end(format_args!("end of file after {frame_count} frames (numFrames)"))?;

    let anim =
        Md5Anim { commandline, frame_rate, num_animated_components: component_count, hierarchy, bounds, baseframe, frames };
    Ok((anim, AnimLines { num_joints: joint_count_line, hierarchy: hierarchy_lines }))
}

fn to_usize(value: u32) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

// ---------------------------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------------------------

/// Writes the canonical layout: id's tabs and blank lines, floats in Rust's shortest form that
/// reads back to the same `f32`.
pub fn write_mesh(mesh: &Md5Mesh) -> String {
    let mut text = String::new();
    // Formatting into a String cannot fail.
    let _ = write_mesh_into(&mut text, mesh);
    text
}

/// Writes the canonical layout; see [`write_mesh`]. Frame values go one line per joint.
pub fn write_anim(anim: &Md5Anim) -> String {
    let mut text = String::new();
    // Formatting into a String cannot fail.
    let _ = write_anim_into(&mut text, anim);
    text
}

/// `( x y z )`.
struct Triple(Vec3);

impl fmt::Display for Triple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "( {} {} {} )", self.0.x, self.0.y, self.0.z)
    }
}

fn parent_name<'a>(names: impl Fn(usize) -> Option<&'a str>, parent: i32) -> Option<&'a str> {
    usize::try_from(parent).ok().and_then(names)
}

fn write_mesh_into(out: &mut String, mesh: &Md5Mesh) -> fmt::Result {
    writeln!(out, "MD5Version {VERSION}")?;
    writeln!(out, "commandline \"{}\"", mesh.commandline)?;
    writeln!(out)?;
    writeln!(out, "numJoints {}", mesh.joints.len())?;
    writeln!(out, "numMeshes {}", mesh.meshes.len())?;
    writeln!(out)?;
    writeln!(out, "joints {{")?;
    let joint_name = |index: usize| mesh.joints.get(index).map(|joint| joint.name.as_str());
    for joint in &mesh.joints {
        write!(out, "\t\"{}\"\t{} {} {}", joint.name, joint.parent, Triple(joint.position), Triple(joint.orientation))?;
        match parent_name(joint_name, joint.parent) {
            Some(parent) => writeln!(out, "\t\t// {parent}")?,
            None => writeln!(out)?,
        }
    }
    writeln!(out, "}}")?;
    for part in &mesh.meshes {
        writeln!(out)?;
        writeln!(out, "mesh {{")?;
        writeln!(out, "\tshader \"{}\"", part.shader)?;
        writeln!(out)?;
        writeln!(out, "\tnumverts {}", part.verts.len())?;
        for (index, vert) in part.verts.iter().enumerate() {
            writeln!(out, "\tvert {index} ( {} {} ) {} {}", vert.uv.x, vert.uv.y, vert.start_weight, vert.weight_count)?;
        }
        writeln!(out)?;
        writeln!(out, "\tnumtris {}", part.tris.len())?;
        for (index, [a, b, c]) in part.tris.iter().enumerate() {
            writeln!(out, "\ttri {index} {a} {b} {c}")?;
        }
        writeln!(out)?;
        writeln!(out, "\tnumweights {}", part.weights.len())?;
        for (index, weight) in part.weights.iter().enumerate() {
            writeln!(out, "\tweight {index} {} {} {}", weight.joint, weight.bias, Triple(weight.position))?;
        }
        writeln!(out, "}}")?;
    }
    Ok(())
}

fn write_anim_into(out: &mut String, anim: &Md5Anim) -> fmt::Result {
    writeln!(out, "MD5Version {VERSION}")?;
    writeln!(out, "commandline \"{}\"", anim.commandline)?;
    writeln!(out)?;
    writeln!(out, "numFrames {}", anim.frames.len())?;
    writeln!(out, "numJoints {}", anim.hierarchy.len())?;
    writeln!(out, "frameRate {}", anim.frame_rate)?;
    writeln!(out, "numAnimatedComponents {}", anim.num_animated_components)?;
    writeln!(out)?;
    writeln!(out, "hierarchy {{")?;
    let joint_name = |index: usize| anim.hierarchy.get(index).map(|joint| joint.name.as_str());
    for joint in &anim.hierarchy {
        write!(out, "\t\"{}\"\t{} {} {}", joint.name, joint.parent, joint.flags, joint.start_index)?;
        let parent = parent_name(joint_name, joint.parent);
        let components: Vec<&str> =
            COMPONENT_NAMES.iter().enumerate().filter(|&(bit, _)| joint.flags & (1 << bit) != 0).map(|(_, name)| *name).collect();
        // id's layout: "// parent ( Tx Ty .. )", each part only when there is one.
        let mut comment: Vec<String> = parent.map(str::to_string).into_iter().collect();
        if !components.is_empty() {
            comment.push(format!("( {} )", components.join(" ")));
        }
        if comment.is_empty() {
            writeln!(out)?;
        } else {
            writeln!(out, "\t// {}", comment.join(" "))?;
        }
    }
    writeln!(out, "}}")?;
    writeln!(out)?;
    writeln!(out, "bounds {{")?;
    for [min, max] in &anim.bounds {
        writeln!(out, "\t{} {}", Triple(*min), Triple(*max))?;
    }
    writeln!(out, "}}")?;
    writeln!(out)?;
    writeln!(out, "baseframe {{")?;
    for [position, orientation] in &anim.baseframe {
        writeln!(out, "\t{} {}", Triple(*position), Triple(*orientation))?;
    }
    writeln!(out, "}}")?;
    // A line break before each animated joint's first value, as id's exporter wrote them.
    let line_starts: Vec<usize> =
        anim.hierarchy.iter().filter(|joint| joint.flags != 0).map(|joint| to_usize(joint.start_index)).collect();
    for (number, values) in anim.frames.iter().enumerate() {
        writeln!(out)?;
        write!(out, "frame {number} {{")?;
        let mut line_open = false;
        for (index, value) in values.iter().enumerate() {
            if !line_open || line_starts.contains(&index) {
                write!(out, "\n\t{value}")?;
                line_open = true;
            } else {
                write!(out, " {value}")?;
            }
        }
        writeln!(out)?;
        writeln!(out, "}}")?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Loading into a Model
// ---------------------------------------------------------------------------------------------

fn to_y_up(point: Vec3) -> Vec3 {
    Vec3::new(point.x, point.z, -point.y)
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned())
}

fn file_stem(path: &Path) -> String {
    path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default()
}

/// A clip is named after its file, less the mesh's name: `imp_walk.md5anim` for `imp.md5mesh` is
/// "walk"; a file named otherwise keeps its whole stem.
fn clip_name(anim_path: &Path, mesh_path: &Path) -> String {
    let stem = file_stem(anim_path);
    let prefix = format!("{}_", file_stem(mesh_path));
    match stem.strip_prefix(&prefix) {
        Some(rest) if !rest.is_empty() => rest.to_string(),
        _ => stem,
    }
}

fn read_text(path: &Path) -> Result<String, FormatError> {
    // Old exporters wrote Latin-1 into comments and names; those bytes never decide a parse.
    super::files::read_text(path, super::files::MAX_MODEL_BYTES).map_err(|message| FormatError::in_file(path, message))
}

/// Loads a `.md5mesh` and any number of `.md5anim` clips for it into a Y-up [`Model`].
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
        return Err(FormatError::in_file(
            mesh_path,
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

    let folder = mesh_path.parent().unwrap_or(Path::new(""));
    let mut stats = LoadStats::default();
    let mut vertices: Vec<Vertex> = Vec::new();
    let mut influences: Vec<Influence> = Vec::new();
    let mut indices: Vec<u32> = Vec::new();
    let mut meshes = Vec::new();
    let mut materials = Vec::new();
    let mut textures = texture::Library::default();
    for (part_index, (part, vert_lines)) in document.meshes.iter().zip(&lines.verts).enumerate() {
        if part.verts.is_empty() || part.tris.is_empty() {
            continue;
        }
        let mut part_vertices = Vec::with_capacity(part.verts.len());
        for (vert_index, (vert, &line)) in part.verts.iter().zip(vert_lines).enumerate() {
            let place = VertPlace { path: mesh_path, line, index: vert_index };
            part_vertices.push(bind_vertex(vert, &part.weights, &bind, place, &mut influences, &mut stats)?);
        }
        let part_indices: Vec<u32> = part.tris.iter().flatten().copied().collect();
        // Per part: MD5 parts share no vertices, so normals never smooth across a part boundary.
        compute_normals(&mut part_vertices, &part_indices);
        compute_tangents(&mut part_vertices, &part_indices);

        let too_many = || FormatError::in_file(mesh_path, "expected at most 2^32 vertices and indices in all, found more");
        let first_vertex = u32::try_from(vertices.len()).map_err(|_| too_many())?;
        u32::try_from(vertices.len() + part_vertices.len()).map_err(|_| too_many())?;
        let first_index = u32::try_from(indices.len()).map_err(|_| too_many())?;
        let index_count = u32::try_from(part_indices.len()).map_err(|_| too_many())?;
        indices.extend(part_indices.iter().map(|&index| first_vertex.saturating_add(index)));
        vertices.extend(part_vertices);
        meshes.push(Mesh { name: format!("mesh_{part_index}"), first_index, index_count, material: materials.len() });
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
        stats,
    };
    model.compute_bounds();
    Ok(model)
}

/// A root joint's pose as the file states it, in MD5's Z-up model space (its `pre` turns it).
fn local_rest(joint: &Md5Joint) -> JointPose {
    JointPose::new(orientation_from_xyz(joint.orientation), joint.position)
}

/// `pose` in the space of `parent` (both model space, unscaled).
fn relative_to(parent: JointPose, pose: JointPose) -> JointPose {
    let inverse = parent.rotation.inverse();
    JointPose::new((inverse * pose.rotation).normalize(), inverse * (pose.translation - parent.translation))
}

/// A mesh joint's bind pose, converted to Y-up.
fn bind_pose(joint: &Md5Joint) -> JointPose {
    JointPose::new((Z_UP_TO_Y_UP * orientation_from_xyz(joint.orientation)).normalize(), to_y_up(joint.position))
}

/// Where a vert is, for its errors.
#[derive(Clone, Copy)]
struct VertPlace<'a> {
    path: &'a Path,
    line: usize,
    index: usize,
}

impl VertPlace<'_> {
    fn error(&self, message: impl fmt::Display) -> FormatError {
        FormatError::at_line(self.path, self.line, format!("vert {}: {message}", self.index))
    }
}

/// The vertex MD5 defines: position from all weights, and every weight kept as an influence
/// (appended to `influences`), normalized and heaviest first.
fn bind_vertex(
    vert: &Md5Vert,
    weights: &[Md5Weight],
    bind: &[JointPose],
    place: VertPlace<'_>,
    influences: &mut Vec<Influence>,
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
    for weight in vert_weights {
        let Some(joint) = bind.get(to_usize(weight.joint)) else {
            return Err(place.error(format_args!("expected a joint below {}, found {}", bind.len(), weight.joint)));
        };
        position += weight.bias * (joint.translation + joint.rotation * weight.position);
        raw.push(Influence { joint: weight.joint, weight: weight.bias });
    }
    // A joint named twice is still one influence; the sum must be positive to normalize.
    let Some(normalized) = normalize_influences(&raw) else {
        let total: f32 = raw.iter().map(|influence| influence.weight).sum();
        return Err(place.error(format_args!("expected weight biases with a positive sum, found {total}")));
    };
    stats.max_influences = stats.max_influences.max(normalized.len());
    let first_influence =
        u32::try_from(influences.len()).map_err(|_| place.error("expected at most 2^32 influences in all, found more"))?;
    let influence_count = normalized.len() as u32;
    influences.extend(normalized);
    Ok(Vertex { position, normal: Vec3::Y, tangent: Vec4::X, uv: vert.uv, first_influence, influence_count })
}

/// The material of one mesh part; a texture that cannot be had is a warning, not an error. A normal
/// map beside the colour texture (`<name>_local` as Doom 3 names it, or `<name>_normal`) is used
/// when one is there; its absence is no warning, since most models have none.
fn load_material(
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
fn find_texture(candidates: &[PathBuf], textures: &mut texture::Library, failures: &mut Vec<String>) -> Option<Texture> {
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
fn normal_map_name(shader: &str, suffix: &str) -> String {
    let written = shader.replace('\\', "/");
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
fn texture_candidates(shader: &str, folder: &Path) -> Vec<PathBuf> {
    let written = shader.replace('\\', "/");
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

fn load_animation(text: &str, anim_path: &Path, mesh_path: &Path, mesh: &Md5Mesh) -> Result<Animation, FormatError> {
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
    Ok(animation_channels(&anim, &clip_name(anim_path, mesh_path)))
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
    }
}

/// The component (0 x, 1 y, 2 z) of the `stored`-th set bit of `bits`.
fn component_of(bits: u32, stored: usize) -> usize {
    (0..3).filter(|&bit| bits & (1 << bit) != 0).nth(stored).unwrap_or(0)
}

#[cfg(test)]
mod tests {
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
