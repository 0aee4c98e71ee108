//! `<library_animation_clips>`: the named clips, the animations each covers, and a joint's
//! channels from its node's keys; from them, the model's animations and clips.

use ahash::AHashMap as HashMap;

use glam::{Mat4, Vec4};
use roxmltree::Node;

use super::animation::{Keyed, NodeKeys};
use super::document::Document;
use super::rig::Rig;
use super::scene::Scene;
use crate::anim::{Animation, Channel, Clip, Interpolation, KeyTimes, Property};
use crate::formats::{files, FormatError};

/// Keys that the animations made for clips may hold in all: this many, plus
/// [`MAX_CLIP_KEYS_PER_KEY`] times the keys the file's animations make. Clips that share their
/// animations share one copy; clips over overlapping sets (a walk, and the walk with a wave on
/// top) copy what they share, which a file of many such clips could turn into gigabytes.
const MAX_CLIP_KEYS_ALLOWANCE: usize = 1 << 21;
const MAX_CLIP_KEYS_PER_KEY: usize = 4;

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

/// A joint's channels from its node's keys (its local transform, as `rest`): translation,
/// rotation and scale per key.
pub fn joint_channels(joint: usize, keys: &NodeKeys<'_, '_>, warnings: &mut Vec<String>, name: &str) -> [Channel; 3] {
    let (matrices, step) = match &keys.keyed {
        Keyed::Matrices { matrices, step } => (matrices, *step),
        Keyed::Sampled(channels) => return (**channels).clone().map(|channel| Channel { joint, ..channel }),
    };
    let (mut translations, mut rotations, mut scales) = (Vec::new(), Vec::new(), Vec::new());
    let mut previous = glam::Quat::IDENTITY;
    let mut sheared = false;
    for matrix in matrices {
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
    let interpolation = if step { Interpolation::Step } else { Interpolation::Linear };
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

/// Animations: one of everything, or one per set of animations clips instance, each clip a
/// span of its set's (clips over the same animations share one: a thousand clips on one
/// timeline are a thousand spans, not a thousand copies). The model's animations and clips (none
/// where the file names no clip); `stem` names the one animation of a file without clips.
pub fn animations<'a, 'input>(
    document: &Document<'a, 'input>,
    scene: &Scene<'a, 'input>,
    keys: &[NodeKeys<'a, 'input>],
    rig: &Rig,
    stem: &str,
    warnings: &mut Vec<String>,
) -> Result<(Vec<Animation>, Vec<Clip>), FormatError> {
    let clips = clips(document)?;
    let node_channels = channels_of_keys(document, scene, keys, rig, warnings);
    let mut animations: Vec<Animation> = Vec::new();
    let mut model_clips = Vec::new();
    let mut animation_of: HashMap<Vec<usize>, usize> = HashMap::new();
    // Clips over overlapping sets of animations copy their keys: at most this many in all.
    let file_keys: usize = keys.iter().map(|node_keys| node_keys.times.len()).sum();
    let key_limit = MAX_CLIP_KEYS_ALLOWANCE.saturating_add(file_keys.saturating_mul(MAX_CLIP_KEYS_PER_KEY));
    let mut clip_keys = 0usize;
    for (clip, members) in group(keys, &clips) {
        let members: Vec<usize> = members.into_iter().filter(|&member| node_channels[member].is_some()).collect();
        if members.is_empty() {
            continue;
        }
        let (name, start, end) = match clip {
            Some(clip) => (clip.name.clone(), clip.start, clip.end),
            None => (stem.to_string(), 0.0, None),
        };
        let duration = members.iter().map(|&member| keys[member].times.last().copied().unwrap_or(0.0)).fold(0.0f32, f32::max);
        let end = end.unwrap_or(duration).max(start);
        let animation_index = match animation_of.get(&members) {
            Some(&index) => index,
            None => {
                clip_keys = clip_keys.saturating_add(members.iter().map(|&member| keys[member].times.len()).sum::<usize>());
                if let Some(clip) = clip.filter(|_| clip_keys > key_limit) {
                    return Err(document.error(
                        clip.element,
                        format!(
                            "expected the clips' animations to hold at most {key_limit} keys in all \
                             ({MAX_CLIP_KEYS_ALLOWANCE} plus {MAX_CLIP_KEYS_PER_KEY} times the {file_keys} keys of the file's \
                             animations; clips over overlapping animations copy them), found more"
                        ),
                    ));
                }
                let channels = members.iter().filter_map(|&member| node_channels[member].clone()).flatten().collect();
                animations.push(Animation {
                    name: name.clone(),
                    duration,
                    frame_rate: None,
                    channels,
                    file_key_bytes: members.iter().map(|&member| keys[member].file_bytes).sum(),
                    source: None,
                    weights: Vec::new(),
                    compressed: None,
                    motion: None,
                });
                animation_of.insert(members, animations.len() - 1);
                animations.len() - 1
            }
        };
        let animation = &mut animations[animation_index];
        animation.duration = animation.duration.max(end);
        if !clips.is_empty() {
            model_clips.push(Clip { name, animation: animation_index, start, duration: end - start, motion: None });
        }
    }
    Ok((animations, model_clips))
}

/// Per animated node (as `keys`), its joint's channels; None, with a warning, for a node that is
/// not a joint, whose animation is left out.
fn channels_of_keys(
    document: &Document<'_, '_>,
    scene: &Scene<'_, '_>,
    keys: &[NodeKeys<'_, '_>],
    rig: &Rig,
    warnings: &mut Vec<String>,
) -> Vec<Option<[Channel; 3]>> {
    let mut channels: Vec<Option<[Channel; 3]>> = Vec::with_capacity(keys.len());
    for node_keys in keys {
        channels.push(match rig.joint_of_node[node_keys.node] {
            Some(joint) => Some(joint_channels(joint, node_keys, warnings, &rig.skeleton.joints[joint].name)),
            None => {
                document.warn("animated node not a joint", scene.nodes[node_keys.node].element, || {
                    format!(
                        "node {}: animated but not a joint; its animation is left out",
                        files::quoted(&scene.nodes[node_keys.node].name)
                    )
                });
                None
            }
        });
    }
    channels
}
