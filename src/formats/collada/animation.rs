//! `<library_animations>` (nested `<animation>`s included) and `<library_animation_clips>`.
//!
//! A channel that drives a node's whole `<matrix>` has one matrix a key: each key is decomposed
//! into translation, rotation and scale, which feed the same key-based channels as the other
//! formats (LINEAR between keys with slerp; STEP). A sheared key is a warning. Channels that drive
//! one element of a transform stack (`rotateZ.ANGLE`, `translate.X`, `transform(3)(0)`) are not
//! read yet: a warning names them.

use std::collections::HashMap;

use glam::{Mat4, Vec4};
use roxmltree::Node;

use super::document::Document;
use super::scene::Scene;
use crate::anim::{Channel, Interpolation, KeyTimes, Property};
use crate::formats::{files, FormatError};

/// A node's matrix keys, from one channel.
pub struct NodeKeys<'a, 'input> {
    pub node: usize,
    pub times: Vec<f32>,
    /// One a key, in the node's parent space (before the up-axis conversion).
    pub matrices: Vec<Mat4>,
    pub step: bool,
    /// The `<animation>` that holds the channel (what clips name).
    pub animation: Node<'a, 'input>,
}

/// A named clip: the animations it instances and its time range.
pub struct ClipRange<'a, 'input> {
    pub name: String,
    pub start: f32,
    pub end: Option<f32>,
    pub animations: Vec<Node<'a, 'input>>,
}

pub fn read<'a, 'input>(
    document: &Document<'a, 'input>,
    scene: &Scene<'a, 'input>,
    warnings: &mut Vec<String>,
) -> Result<Vec<NodeKeys<'a, 'input>>, FormatError> {
    let root = document.xml.root_element();
    let mut keys = Vec::new();
    for library in root.children().filter(|child| child.has_tag_name("library_animations")) {
        for channel in library.descendants().filter(|node| node.has_tag_name("channel")) {
            let target = document.attribute(channel, "target")?;
            let Some((node_id, address)) = target.split_once('/') else {
                return Err(document.error(channel, format!("expected a target \"node/sid\", found {}", files::quoted(target))));
            };
            let Some(node) = scene.by_id(node_id) else {
                warnings.push(format!(
                    "animation channel {}: no node {} in the scene; left out",
                    files::quoted(target),
                    files::quoted(node_id)
                ));
                continue;
            };
            if scene.nodes[node].matrix_sid != Some(address) {
                warnings.push(format!(
                    "animation channel {}: only channels that drive a node's whole <matrix> are read; left out",
                    files::quoted(target)
                ));
                continue;
            }
            let sampler = document.lookup(channel, document.attribute(channel, "source")?)?;
            let source_of = |semantic: &str| -> Result<Option<Node<'a, 'input>>, FormatError> {
                match sampler
                    .children()
                    .find(|child| child.has_tag_name("input") && child.attribute("semantic") == Some(semantic))
                {
                    Some(input) => Ok(Some(document.lookup(input, document.attribute(input, "source")?)?)),
                    None => Ok(None),
                }
            };
            let input = source_of("INPUT")?.ok_or_else(|| document.error(sampler, "expected an INPUT input"))?;
            let output = source_of("OUTPUT")?.ok_or_else(|| document.error(sampler, "expected an OUTPUT input"))?;
            let times = document.float_source(input, 1)?.values;
            if times.windows(2).any(|pair| pair[1] < pair[0]) {
                return Err(document.error(input, "expected key times in increasing order"));
            }
            let output_values = document.float_source(output, 16)?;
            if output_values.count != times.len() {
                return Err(document.error(
                    output,
                    format!("expected {} matrices, one per key time, found {}", times.len(), output_values.count),
                ));
            }
            let matrices = (0..output_values.count)
                .filter_map(|key| output_values.item(key))
                .map(|rows| {
                    let mut array = [0.0f32; 16];
                    array.copy_from_slice(rows);
                    Mat4::from_cols_array(&array).transpose()
                })
                .collect();
            let interpolations = match source_of("INTERPOLATION")? {
                Some(source) => document.name_source(source)?,
                None => Vec::new(),
            };
            let step = !interpolations.is_empty() && interpolations.iter().all(|name| *name == "STEP");
            if interpolations.iter().any(|name| !matches!(*name, "LINEAR" | "STEP")) {
                warnings.push(format!(
                    "animation channel {}: BEZIER and HERMITE matrix keys are played as LINEAR (their tangents are not read)",
                    files::quoted(target)
                ));
            }
            let animation = channel.parent().unwrap_or(library);
            keys.push(NodeKeys { node, times, matrices, step, animation });
        }
    }
    Ok(keys)
}

/// The file's clips (`<animation_clip>`), each over the animations it instances.
pub fn clips<'a, 'input>(document: &Document<'a, 'input>) -> Result<Vec<ClipRange<'a, 'input>>, FormatError> {
    let root = document.xml.root_element();
    let mut clips = Vec::new();
    for clip in root.descendants().filter(|node| node.has_tag_name("animation_clip")) {
        let number = |name: &str| -> Result<Option<f32>, FormatError> {
            clip.attribute(name)
                .map(|text| {
                    text.trim().parse::<f32>().ok().filter(|value| value.is_finite()).ok_or_else(|| {
                        document.error(clip, format!("expected {name} to be a time in seconds, found {}", files::quoted(text)))
                    })
                })
                .transpose()
        };
        let animations = clip
            .children()
            .filter(|child| child.has_tag_name("instance_animation"))
            .map(|instance| document.lookup(instance, document.attribute(instance, "url")?))
            .collect::<Result<_, _>>()?;
        let name = clip.attribute("name").or(clip.attribute("id")).unwrap_or("clip").to_string();
        clips.push(ClipRange { name, start: number("start")?.unwrap_or(0.0), end: number("end")?, animations });
    }
    Ok(clips)
}

/// A joint's channels from its node's matrix keys (its local transform, as `rest`): translation,
/// rotation and scale per key.
pub fn joint_channels(joint: usize, keys: &NodeKeys<'_, '_>, warnings: &mut Vec<String>, name: &str) -> [Channel; 3] {
    let (mut translations, mut rotations, mut scales) = (Vec::new(), Vec::new(), Vec::new());
    let mut previous = glam::Quat::IDENTITY;
    let mut sheared = false;
    for matrix in &keys.matrices {
        let matrix = *matrix;
        let (scale, mut rotation, translation) = matrix.to_scale_rotation_translation();
        if !Mat4::from_scale_rotation_translation(scale, rotation, translation)
            .abs_diff_eq(matrix, 1e-4 * matrix.abs().to_cols_array().iter().fold(1.0f32, |a, b| a.max(*b)))
        {
            sheared = true;
        }
        // Neighbouring keys on the same side of the sphere, as exporters write them.
        if previous.dot(rotation) < 0.0 {
            rotation = -rotation;
        }
        previous = rotation;
        translations.extend(translation.to_array());
        rotations.extend(rotation.to_array());
        scales.extend(scale.to_array());
    }
    if sheared {
        warnings.push(format!(
            "joint {}: a matrix key has shear, which its translation, rotation and scale leave out",
            files::quoted(name)
        ));
    }
    let interpolation = if keys.step { Interpolation::Step } else { Interpolation::Linear };
    let channel = |property, mask, values| Channel {
        joint,
        property,
        interpolation,
        times: KeyTimes::from_list(keys.times.clone()),
        mask,
        base: Vec4::ZERO,
        implied_w: false,
        wraps: false,
        values,
    };
    [
        channel(Property::Translation, 0b0111, translations),
        channel(Property::Rotation, 0b1111, rotations),
        channel(Property::Scale, 0b0111, scales),
    ]
}

/// The animations each clip covers, grouped: (clip name, start, end, indices into `keys`).
pub fn group<'a, 'input>(
    keys: &[NodeKeys<'a, 'input>],
    clips: &[ClipRange<'a, 'input>],
) -> Vec<(String, f32, Option<f32>, Vec<usize>)> {
    if clips.is_empty() {
        return vec![(String::new(), 0.0, None, (0..keys.len()).collect())];
    }
    // An animation counts for a clip when it, or an <animation> above it, is instanced.
    let mut groups = Vec::new();
    for clip in clips {
        let mut members: HashMap<usize, ()> = HashMap::new();
        for (index, key) in keys.iter().enumerate() {
            if key.animation.ancestors().any(|ancestor| clip.animations.contains(&ancestor)) {
                members.insert(index, ());
            }
        }
        let mut members: Vec<usize> = members.into_keys().collect();
        members.sort_unstable();
        groups.push((clip.name.clone(), clip.start, clip.end, members));
    }
    groups
}
