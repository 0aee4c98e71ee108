//! `<library_animations>` (nested `<animation>`s included) and `<library_animation_clips>`.
//!
//! Channels drive a node's transform elements: a whole `<matrix>` (one matrix a key), or one
//! element or one value of it (`rotateZ.ANGLE`, `translate.X`, `transform(3)(0)`). A node's
//! channels in one `<animation>` are evaluated together at each of their key times: the stack
//! with the driven values replaced, composed into the node's matrix. Each such matrix is
//! decomposed into translation, rotation and scale, which feed the same key-based channels as the
//! other formats (LINEAR between keys with slerp; STEP). A sheared key is a warning.

use glam::{Mat4, Vec4};
use roxmltree::Node;

use super::document::Document;
use super::scene::{compose, Scene};
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

/// One channel's keys on one transform element (or one value of it).
struct ElementKeys<'a, 'input> {
    node: usize,
    element: usize,
    /// The value it drives within the element; None: all of them.
    member: Option<usize>,
    times: Vec<f32>,
    /// `width` values a key.
    values: Vec<f32>,
    width: usize,
    step: bool,
    animation: Node<'a, 'input>,
}

impl ElementKeys<'_, '_> {
    /// The channel's values at `time`: held before the first key and after the last, STEP or
    /// LINEAR between.
    fn sample(&self, time: f32) -> &[f32] {
        let last = self.times.len().saturating_sub(1);
        let key = self.times.partition_point(|&key| key <= time).saturating_sub(1).min(last);
        &self.values[key * self.width..(key + 1) * self.width]
    }

    fn sample_linear(&self, time: f32, out: &mut [f32]) {
        let key = self.times.partition_point(|&key| key <= time);
        if self.step || key == 0 || key >= self.times.len() {
            out.copy_from_slice(self.sample(time));
            return;
        }
        let (t0, t1) = (self.times[key - 1], self.times[key]);
        let fraction = if t1 > t0 { (time - t0) / (t1 - t0) } else { 0.0 };
        let (a, b) =
            (&self.values[(key - 1) * self.width..key * self.width], &self.values[key * self.width..(key + 1) * self.width]);
        for ((out, a), b) in out.iter_mut().zip(a).zip(b) {
            *out = a + (b - a) * fraction;
        }
    }
}

pub fn read<'a, 'input>(
    document: &Document<'a, 'input>,
    scene: &Scene<'a, 'input>,
    warnings: &mut Vec<String>,
) -> Result<Vec<NodeKeys<'a, 'input>>, FormatError> {
    let root = document.xml.root_element();
    let mut channels: Vec<ElementKeys> = Vec::new();
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
            let split = address.find(['.', '(']).unwrap_or(address.len());
            let (sid, member) = address.split_at(split);
            let Some(element) = scene.nodes[node].elements.iter().position(|element| element.sid == Some(sid)) else {
                warnings.push(format!(
                    "animation channel {}: the node has no transform with sid {}; left out",
                    files::quoted(target),
                    files::quoted(sid)
                ));
                continue;
            };
            let kind = scene.nodes[node].elements[element].kind;
            let member = if member.is_empty() {
                None
            } else {
                Some(kind.member(member).ok_or_else(|| {
                    document.error(
                        channel,
                        format!("expected a member of {sid} (.X, .Y, .Z, .ANGLE or (i)(j)), found {}", files::quoted(member)),
                    )
                })?)
            };
            let width = if member.is_some() { 1 } else { kind.width() };
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
            let values = document.float_source(output, width)?;
            if values.count != times.len() {
                return Err(
                    document.error(output, format!("expected {} values, one per key time, found {}", times.len(), values.count))
                );
            }
            if times.is_empty() {
                continue;
            }
            let interpolations = match source_of("INTERPOLATION")? {
                Some(source) => document.name_source(source)?,
                None => Vec::new(),
            };
            let step = !interpolations.is_empty() && interpolations.iter().all(|name| *name == "STEP");
            if interpolations.iter().any(|name| !matches!(*name, "LINEAR" | "STEP")) {
                warnings.push(format!(
                    "animation channel {}: BEZIER and HERMITE keys are played as LINEAR (their tangents are not read)",
                    files::quoted(target)
                ));
            }
            let animation = channel.parent().unwrap_or(library);
            channels.push(ElementKeys { node, element, member, times, values: values.values, width, step, animation });
        }
    }
    // Per node (and, where the file has clips, per top-level <animation>, what clips instance): the
    // stack evaluated at every key time of its channels. Exporters often write one <animation> a
    // channel (rotateX, rotateY, ... of one node): without clips they all play together.
    let with_clips = root.descendants().any(|node| node.has_tag_name("animation_clip"));
    let top_level = |animation: Node<'a, 'input>| {
        animation.ancestors().filter(|ancestor| ancestor.has_tag_name("animation")).last().unwrap_or(animation)
    };
    // (node, its top-level <animation> where clips need it) and the channels on it.
    type Group = ((usize, Option<roxmltree::NodeId>), Vec<usize>);
    let mut groups: Vec<Group> = Vec::new();
    for (index, channel) in channels.iter().enumerate() {
        let key = (channel.node, with_clips.then(|| top_level(channel.animation).id()));
        match groups.iter_mut().find(|(group, _)| *group == key) {
            Some((_, members)) => members.push(index),
            None => groups.push((key, vec![index])),
        }
    }
    let mut keys = Vec::with_capacity(groups.len());
    for ((node, _), members) in groups {
        let mut times: Vec<f32> = members.iter().flat_map(|&member| channels[member].times.iter().copied()).collect();
        times.sort_by(f32::total_cmp);
        times.dedup_by(|a, b| (*a - *b).abs() <= 1e-6);
        let mut elements = scene.nodes[node].elements.clone();
        let mut matrices = Vec::with_capacity(times.len());
        for &time in &times {
            for &member in &members {
                let channel = &channels[member];
                let Some(element) = elements.get_mut(channel.element) else { continue };
                match channel.member {
                    Some(index) => {
                        let mut value = [0.0f32];
                        channel.sample_linear(time, &mut value);
                        if let Some(slot) = element.values.get_mut(index) {
                            *slot = value[0];
                        }
                    }
                    None if element.values.len() == channel.width => channel.sample_linear(time, &mut element.values),
                    None => {}
                }
            }
            matrices.push(compose(&elements));
        }
        let step = members.iter().all(|&member| channels[member].step);
        let animation = channels[members[0]].animation;
        keys.push(NodeKeys { node, times, matrices, step, animation });
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
        let members: Vec<usize> = (0..keys.len())
            .filter(|&index| keys[index].animation.ancestors().any(|ancestor| clip.animations.contains(&ancestor)))
            .collect();
        groups.push((clip.name.clone(), clip.start, clip.end, members));
    }
    groups
}
