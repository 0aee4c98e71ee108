//! `<library_animation_clips>`: the named clips, the animations each covers, and a joint's
//! channels from its node's keys.

use std::collections::HashMap;

use glam::{Mat4, Vec4};
use roxmltree::Node;

use super::animation::NodeKeys;
use super::document::Document;
use crate::anim::{Channel, Interpolation, KeyTimes, Property};
use crate::formats::{files, FormatError};

/// A named clip: the animations it instances and its time range.
pub struct ClipRange<'a, 'input> {
    pub element: Node<'a, 'input>,
    pub name: String,
    pub start: f32,
    pub end: Option<f32>,
    pub animations: Vec<Node<'a, 'input>>,
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
        clips.push(ClipRange { element: clip, name, start: number("start")?.unwrap_or(0.0), end: number("end")?, animations });
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

/// The animations each clip covers, grouped: (the clip, indices into `keys`); without clips, one
/// group of every key.
pub fn group<'c, 'a, 'input>(
    keys: &[NodeKeys<'a, 'input>],
    clips: &'c [ClipRange<'a, 'input>],
) -> Vec<(Option<&'c ClipRange<'a, 'input>>, Vec<usize>)> {
    if clips.is_empty() {
        return vec![(None, (0..keys.len()).collect())];
    }
    // An animation counts for a clip when it, or an <animation> above it, is instanced.
    // The keys under each <animation> (their own or an enclosing one), so a clip costs what it
    // instances and what it gets, not a pass over every key.
    let mut under: HashMap<roxmltree::NodeId, Vec<usize>> = HashMap::new();
    for (index, node_keys) in keys.iter().enumerate() {
        for ancestor in node_keys.animation.ancestors() {
            under.entry(ancestor.id()).or_default().push(index);
        }
    }
    let mut groups = Vec::new();
    for clip in clips {
        let mut members: Vec<usize> =
            clip.animations.iter().filter_map(|animation| under.get(&animation.id())).flatten().copied().collect();
        members.sort_unstable();
        members.dedup();
        groups.push((Some(clip), members));
    }
    groups
}
