//! The writer: the document types back into id's canonical layout, so that
//! `parse(write(document)) == document`.

use super::parse::to_usize;
use super::{Md5Anim, Md5Mesh, COMPONENT_NAMES, VERSION};
use glam::Vec3;
use std::fmt;
use std::fmt::Write;

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
pub(super) struct Triple(Vec3);

impl fmt::Display for Triple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "( {} {} {} )", self.0.x, self.0.y, self.0.z)
    }
}

pub(super) fn parent_name<'a>(names: impl Fn(usize) -> Option<&'a str>, parent: i32) -> Option<&'a str> {
    usize::try_from(parent).ok().and_then(names)
}

pub(super) fn write_mesh_into(out: &mut String, mesh: &Md5Mesh) -> fmt::Result {
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

pub(super) fn write_anim_into(out: &mut String, anim: &Md5Anim) -> fmt::Result {
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
