//! The parser: MD5 text (as `tokens.rs` cuts it) into the document types, every count and index
//! checked against what is present before it sizes anything.

use super::tokens::{Token, TokenKind, Tokenizer};
use super::{Md5Anim, Md5Hierarchy, Md5Joint, Md5Mesh, Md5MeshPart, Md5Vert, Md5Weight, FLAG_MASK, VERSION};
use crate::formats::FormatError;
use glam::{Vec2, Vec3};
use std::fmt;
use std::path::Path;

/// Every keyword of a `.md5mesh`: a line starting with another word inside a mesh block is
/// skipped; these never are (a `mesh` where a `}` is missing is an error, not a skipped line).
const KNOWN_KEYWORDS: [&str; 13] = [
    "MD5Version",
    "commandline",
    "numJoints",
    "numMeshes",
    "joints",
    "mesh",
    "shader",
    "numverts",
    "vert",
    "numtris",
    "tri",
    "numweights",
    "weight",
];

/// Reads tokens in order. Every `expected` argument finishes the sentence "expected ..., found ..."
/// of the error it raises.
pub(super) struct Parser<'a> {
    tokenizer: Tokenizer<'a>,
    path: &'a Path,
}

impl<'a> Parser<'a> {
    pub(super) fn new(text: &'a str, path: &'a Path) -> Parser<'a> {
        Parser { tokenizer: Tokenizer::new(text, path), path }
    }

    pub(super) fn next(&mut self) -> Result<Token<'a>, FormatError> {
        self.tokenizer.next()
    }

    /// The next token, left unread.
    pub(super) fn peek(&self) -> Result<Token<'a>, FormatError> {
        self.tokenizer.clone().next()
    }

    /// Skips the lines ahead that start with a word a mesh block does not know (a misspelled
    /// `shader`), as assimp and id's own parser do; each is noted in `skipped` (line, word).
    pub(super) fn skip_unknown_lines(&mut self, skipped: &mut Vec<(usize, String)>) -> Result<(), FormatError> {
        loop {
            let token = self.peek()?;
            let TokenKind::Word(word) = token.kind else { return Ok(()) };
            let keyword = word.starts_with(|character: char| character.is_ascii_alphabetic());
            if !keyword || KNOWN_KEYWORDS.contains(&word) {
                return Ok(());
            }
            self.next()?;
            self.tokenizer.skip_line();
            skipped.push((token.line, word.to_string()));
        }
    }

    /// The line of the token read last.
    pub(super) fn last_line(&self) -> usize {
        self.tokenizer.last_token_line
    }

    pub(super) fn error(&self, line: usize, message: impl Into<String>) -> FormatError {
        FormatError::at_line(self.path, line, message)
    }

    pub(super) fn unexpected(&self, token: Token<'_>, expected: fmt::Arguments<'_>) -> FormatError {
        self.error(token.line, format!("expected {expected}, found {}", token.kind))
    }

    /// Returns the keyword's line.
    pub(super) fn keyword(&mut self, keyword: &str, expected: fmt::Arguments<'_>) -> Result<usize, FormatError> {
        let token = self.next()?;
        if token.kind == TokenKind::Word(keyword) {
            Ok(token.line)
        } else {
            Err(self.unexpected(token, expected))
        }
    }

    pub(super) fn symbol(&mut self, symbol: TokenKind<'static>, expected: fmt::Arguments<'_>) -> Result<usize, FormatError> {
        let token = self.next()?;
        if token.kind == symbol {
            Ok(token.line)
        } else {
            Err(self.unexpected(token, expected))
        }
    }

    pub(super) fn end(&mut self, expected: fmt::Arguments<'_>) -> Result<(), FormatError> {
        self.symbol(TokenKind::End, expected).map(|_| ())
    }

    pub(super) fn string(&mut self, what: fmt::Arguments<'_>) -> Result<&'a str, FormatError> {
        let token = self.next()?;
        match token.kind {
            TokenKind::Quoted(text) => Ok(text),
            _ => Err(self.unexpected(token, format_args!("a quoted {what}"))),
        }
    }

    pub(super) fn float(&mut self, what: fmt::Arguments<'_>) -> Result<f32, FormatError> {
        let token = self.next()?;
        self.float_from(token, what)
    }

    pub(super) fn float_from(&self, token: Token<'_>, what: fmt::Arguments<'_>) -> Result<f32, FormatError> {
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
    pub(super) fn integer(&mut self, what: fmt::Arguments<'_>) -> Result<(i64, usize), FormatError> {
        let token = self.next()?;
        match token.kind {
            TokenKind::Word(word) => match word.parse::<i64>() {
                Ok(value) => Ok((value, token.line)),
                Err(_) => Err(self.unexpected(token, format_args!("an integer for {what}"))),
            },
            _ => Err(self.unexpected(token, format_args!("an integer for {what}"))),
        }
    }

    pub(super) fn unsigned(&mut self, what: fmt::Arguments<'_>) -> Result<(u32, usize), FormatError> {
        let (value, line) = self.integer(what)?;
        match u32::try_from(value) {
            Ok(value) => Ok((value, line)),
            Err(_) => Err(self.error(line, format!("expected an integer from 0 to {} for {what}, found {value}", u32::MAX))),
        }
    }

    /// `keyword N` in a header; returns N and the line.
    pub(super) fn count_field(&mut self, keyword: &str) -> Result<(u32, usize), FormatError> {
        self.keyword(keyword, format_args!("'{keyword}'"))?;
        self.unsigned(format_args!("{keyword}"))
    }

    /// `( x y )`.
    pub(super) fn vec2(&mut self, what: fmt::Arguments<'_>) -> Result<Vec2, FormatError> {
        self.symbol(TokenKind::OpenParen, format_args!("'(' before {what}"))?;
        let x = self.float(format_args!("{what} x"))?;
        let y = self.float(format_args!("{what} y"))?;
        self.symbol(TokenKind::CloseParen, format_args!("')' after {what}"))?;
        Ok(Vec2::new(x, y))
    }

    /// `( x y z )`.
    pub(super) fn vec3(&mut self, what: fmt::Arguments<'_>) -> Result<Vec3, FormatError> {
        self.symbol(TokenKind::OpenParen, format_args!("'(' before {what}"))?;
        let x = self.float(format_args!("{what} x"))?;
        let y = self.float(format_args!("{what} y"))?;
        let z = self.float(format_args!("{what} z"))?;
        self.symbol(TokenKind::CloseParen, format_args!("')' after {what}"))?;
        Ok(Vec3::new(x, y, z))
    }

    /// `MD5Version 10` and `commandline "..."`; returns the command line.
    pub(super) fn header(&mut self) -> Result<String, FormatError> {
        self.keyword("MD5Version", format_args!("'MD5Version'"))?;
        let (version, line) = self.integer(format_args!("MD5Version"))?;
        if version != VERSION {
            return Err(self.error(line, format!("expected MD5Version {VERSION}, found {version}")));
        }
        self.keyword("commandline", format_args!("'commandline'"))?;
        Ok(self.string(format_args!("commandline"))?.to_string())
    }

    /// A joint's parent: -1, or an earlier joint so that parents are always computed first.
    pub(super) fn parent(&mut self, index: u32, what: fmt::Arguments<'_>) -> Result<i32, FormatError> {
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
pub(super) struct MeshLines {
    /// Per mesh part, per vert.
    pub(super) verts: Vec<Vec<usize>>,
    /// Per joint.
    pub(super) joints: Vec<usize>,
    /// Lines skipped in mesh blocks for their unknown first word: (line, word).
    pub(super) skipped: Vec<(usize, String)>,
    /// The `numJoints` line and each mesh block's first line.
    pub(super) num_joints: usize,
    pub(super) meshes: Vec<usize>,
}

pub(super) struct AnimLines {
    pub(super) num_joints: usize,
    pub(super) hierarchy: Vec<usize>,
}

/// Parses a `.md5mesh`. `path` only names the file in errors.
pub fn parse_mesh(text: &str, path: &Path) -> Result<Md5Mesh, FormatError> {
    parse_mesh_with_lines(text, path).map(|(mesh, _)| mesh)
}

/// Parses a `.md5anim`. `path` only names the file in errors.
pub fn parse_anim(text: &str, path: &Path) -> Result<Md5Anim, FormatError> {
    parse_anim_with_lines(text, path).map(|(anim, _)| anim)
}

pub(super) fn parse_mesh_with_lines(text: &str, path: &Path) -> Result<(Md5Mesh, MeshLines), FormatError> {
    let mut parser = Parser::new(text, path);
    let commandline = parser.header()?;
    let (joint_count, num_joints_line) = parser.count_field("numJoints")?;
    let (mesh_count, _) = parser.count_field("numMeshes")?;

    parser.keyword("joints", format_args!("'joints'"))?;
    parser.symbol(TokenKind::OpenBrace, format_args!("'{{' after 'joints'"))?;
    let mut joints = Vec::new();
    let mut joint_lines = Vec::new();
    for index in 0..joint_count {
        let name = parser.string(format_args!("name of joint {index} (numJoints is {joint_count})"))?.to_string();
        joint_lines.push(parser.last_line());
        let parent = parser.parent(index, format_args!("joint {index}"))?;
        let position = parser.vec3(format_args!("joint {index} position"))?;
        let orientation = parser.vec3(format_args!("joint {index} orientation"))?;
        joints.push(Md5Joint { name, parent, position, orientation });
    }
    parser.symbol(TokenKind::CloseBrace, format_args!("'}}' after {joint_count} joints (numJoints)"))?;

    let mut meshes = Vec::new();
    let mut vert_lines = Vec::new();
    let mut mesh_lines = Vec::new();
    let mut skipped = Vec::new();
    for index in 0..mesh_count {
        mesh_lines.push(parser.peek()?.line);
        let (part, lines) = parse_mesh_part(&mut parser, index, mesh_count, joint_count, &mut skipped)?;
        meshes.push(part);
        vert_lines.push(lines);
    }
    parser.end(format_args!("end of file after {mesh_count} meshes (numMeshes)"))?;
    let lines = MeshLines { verts: vert_lines, joints: joint_lines, skipped, num_joints: num_joints_line, meshes: mesh_lines };
    Ok((Md5Mesh { commandline, joints, meshes }, lines))
}

/// One `mesh { .. }`; returns it and its vert lines.
pub(super) fn parse_mesh_part(
    parser: &mut Parser<'_>,
    index: u32,
    mesh_count: u32,
    joint_count: u32,
    skipped: &mut Vec<(usize, String)>,
) -> Result<(Md5MeshPart, Vec<usize>), FormatError> {
    parser.keyword("mesh", format_args!("'mesh' {index} (numMeshes is {mesh_count})"))?;
    parser.symbol(TokenKind::OpenBrace, format_args!("'{{' after 'mesh'"))?;
    // Without its `shader` line (a misspelled one is skipped) a mesh has no shader.
    parser.skip_unknown_lines(skipped)?;
    let mut shader = String::new();
    if parser.peek()?.kind == TokenKind::Word("shader") {
        parser.next()?;
        shader = parser.string(format_args!("shader name"))?.to_string();
    }

    parser.skip_unknown_lines(skipped)?;
    let (vert_count, _) = parser.count_field("numverts")?;
    let mut verts = Vec::new();
    let mut vert_lines = Vec::new();
    for vert in 0..vert_count {
        parser.skip_unknown_lines(skipped)?;
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

    parser.skip_unknown_lines(skipped)?;
    parser.keyword("numtris", format_args!("'numtris' after {vert_count} verts (numverts)"))?;
    let (tri_count, _) = parser.unsigned(format_args!("numtris"))?;
    let mut tris = Vec::new();
    for tri in 0..tri_count {
        parser.skip_unknown_lines(skipped)?;
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

    parser.skip_unknown_lines(skipped)?;
    parser.keyword("numweights", format_args!("'numweights' after {tri_count} tris (numtris)"))?;
    let (weight_count, _) = parser.unsigned(format_args!("numweights"))?;
    let mut weights = Vec::new();
    for weight in 0..weight_count {
        parser.skip_unknown_lines(skipped)?;
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
    parser.skip_unknown_lines(skipped)?;
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

pub(super) fn parse_anim_with_lines(text: &str, path: &Path) -> Result<(Md5Anim, AnimLines), FormatError> {
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

pub(super) fn to_usize(value: u32) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}
