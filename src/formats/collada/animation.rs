//! `<library_animations>` (nested `<animation>`s included): each channel read into keys of a node's
//! transform elements. The clips are in `clips.rs`, the resampling into clip keys in `resample.rs`.
//!
//! Channels drive a node's transform elements: a whole `<matrix>` (one matrix a key), or one
//! element or one value of it (`rotateZ.ANGLE`, `translate.X`, `transform(3)(0)`). Each key says
//! how its values go on to the next: STEP, LINEAR, BEZIER or HERMITE (both cubic Béziers over
//! time, [`crate::anim::curve::bezier_at_time`]; HERMITE's tangents become Bézier controls a third along them).
//!
//! A node's channels in one `<animation>` are evaluated together (the stack with the driven
//! values replaced, composed into the node's matrix). Where they are straight (STEP keys, a whole
//! matrix's LINEAR keys), its matrix at each key time is decomposed into a key, held or slerped
//! (lerping a matrix's 16 values would shrink the mesh between keys, so every importer slerps).
//! Where they are curved somewhere (Bézier or Hermite keys; angles driven one axis at a time), keys
//! are added where the pose strays from the file's curves by more than [`TOLERANCE`]
//! (`resample.rs`). A sheared key of matrix keys is a warning.

use ahash::AHashMap as HashMap;
use std::rc::Rc;

use glam::Mat4;
use roxmltree::Node;

use super::document::Document;
use super::keys::{Controls, Curve, ElementKeys, Segment};
use super::resample::{Resampler, Stack, TOLERANCE};
use super::scene::{Kind, Scene};
use crate::formats::{files, FormatError};

/// Keys resampling may add: this many per key the file holds, plus [`ADDED_ALLOWANCE`], so time
/// and memory stay proportional to the file.
const ADDED_PER_KEY: usize = 64;
const ADDED_ALLOWANCE: usize = 1 << 16;

/// A node's keys, from its channels in one `<animation>`.
pub struct NodeKeys<'a, 'input> {
    pub node: usize,
    /// Their times: the file's, or the samples' where it was sampled.
    pub times: Vec<f32>,
    pub keyed: Keyed,
    /// The `<animation>` that holds the channel (what clips name).
    pub animation: Node<'a, 'input>,
    /// The bytes of its channels' keys in the file (times, values and tangents, as f32).
    pub file_bytes: usize,
}

/// A node's keys, in its parent space (before the up-axis conversion).
pub enum Keyed {
    /// Its matrix at each time: held until the next (STEP), or decomposed and slerped (straight
    /// channels: a whole matrix's LINEAR keys).
    Matrices { matrices: Vec<Mat4>, step: bool },
    /// Its translation, rotation and scale sampled into cubic Hermite keys (curved channels), for
    /// joint 0: `clips::joint_channels` gives them their joint.
    Sampled(Box<[crate::anim::Channel; 3]>),
}

/// The Bézier controls of a sampler's keys from its IN_TANGENT and OUT_TANGENT sources. Tangents
/// are 2D (time, value) pairs where the accessor's stride holds two values a value, as COLLADA
/// 1.4.1 has them. HERMITE tangents are slopes over the interval: the control sits a third along
/// them.
///
/// BEZIER tangents of one value a key are what FCollada's first exporters wrote (ColladaMaya 0.90,
/// ColladaMax 0.01: the conformance suite's files): each is the control's offset from its key's
/// value, placed a third of the way along the interval in time. Taken as the controls' values
/// themselves, a rotation of 285° with tangents of ±0.8 swings through zero between every two keys
/// and the model flies apart. The two exporters point the incoming offset opposite ways: Max
/// writes it from the key back towards the control (a smooth key's in and out are opposite),
/// Maya along the curve's direction (a smooth key's in and out are alike). Which one a sampler
/// uses is read off its keys, per value: where in times out sums below zero, Max's.
fn controls<'a, 'input>(
    document: &Document<'a, 'input>,
    sources: [Node<'a, 'input>; 2],
    names: &[&str],
    times: &[f32],
    values: &[f32],
    width: usize,
) -> Result<(Vec<Controls>, usize), FormatError> {
    let mut tangents = Vec::with_capacity(2);
    for source in sources {
        let pairs = document.stride(source)? >= 2 * width;
        let read = document.float_source(source, if pairs { 2 * width } else { width })?;
        if read.count != times.len() {
            return Err(
                document.error(source, format!("expected {} tangents, one per key time, found {}", times.len(), read.count))
            );
        }
        tangents.push((read.values, pairs));
    }
    let mut controls = vec![Controls::default(); times.len() * width];
    let last = times.len() - 1;
    // Per value of one-value tangents: whether the incoming offset points back (Max) or along.
    let backward: Vec<bool> = (0..width)
        .map(|component| {
            let ((incoming, pairs_in), (outgoing, pairs_out)) = (&tangents[0], &tangents[1]);
            let agreement: f32 = (0..times.len())
                .filter(|_| !pairs_in && !pairs_out)
                .map(|key| incoming[key * width + component] * outgoing[key * width + component])
                .sum();
            agreement < 0.0
        })
        .collect();
    for (key, &time) in times.iter().enumerate() {
        // The segment arriving at the key is the previous key's, the one leaving it the key's own.
        let arriving_hermite = key > 0 && names.get(key - 1) == Some(&"HERMITE");
        let leaving_hermite = names.get(key) == Some(&"HERMITE");
        let implied_before = if key > 0 { time - (time - times[key - 1]) / 3.0 } else { time };
        let implied_after = if key < last { time + (times[key + 1] - time) / 3.0 } else { time };
        for component in 0..width {
            let value = values[key * width + component];
            let slot = key * width + component;
            // `sign`: -1 for the incoming control, 1 for the outgoing one; `offset_sign`: how a
            // one-value BEZIER tangent's offset goes onto its key's value.
            let point =
                |(tangents, pairs): &(Vec<f32>, bool), hermite: bool, sign: f32, offset_sign: f32, implied: f32| -> [f32; 2] {
                    match (*pairs, hermite) {
                        (true, false) => [tangents[slot * 2], tangents[slot * 2 + 1]],
                        (true, true) => [time + sign * tangents[slot * 2] / 3.0, value + sign * tangents[slot * 2 + 1] / 3.0],
                        (false, false) => [implied, value + offset_sign * tangents[slot]],
                        (false, true) => [implied, value + sign * tangents[slot] / 3.0],
                    }
                };
            let incoming_sign = if backward[component] { 1.0 } else { -1.0 };
            controls[slot] = Controls {
                before: point(&tangents[0], arriving_hermite, -1.0, incoming_sign, implied_before),
                after: point(&tangents[1], leaving_hermite, 1.0, 1.0, implied_after),
            };
        }
    }
    let bytes = tangents.iter().map(|(values, _)| values.len() * 4).sum();
    Ok((controls, bytes))
}

/// What a `<channel>` drives: a node's transform element, or one value of it.
struct Target<'a, 'input> {
    channel: Node<'a, 'input>,
    node: usize,
    element: usize,
    member: Option<usize>,
    kind: Kind,
}

pub fn read<'a, 'input>(
    document: &Document<'a, 'input>,
    scene: &Scene<'a, 'input>,
    warnings: &mut Vec<String>,
) -> Result<Vec<NodeKeys<'a, 'input>>, FormatError> {
    let root = document.xml.root_element();
    // Where the file has clips, a node's channels are kept apart per top-level <animation> (what
    // clips instance); without clips they all play together.
    let with_clips = root.descendants().any(|node| node.has_tag_name("animation_clip"));
    let top_level = |animation: Node<'a, 'input>| {
        animation.ancestors().filter(|ancestor| ancestor.has_tag_name("animation")).last().unwrap_or(animation)
    };
    let mut targets = Vec::new();
    for library in root.children().filter(|child| child.has_tag_name("library_animations")) {
        for channel in library.descendants().filter(|node| node.has_tag_name("channel")) {
            if let Some(target) = target(document, scene, channel)? {
                targets.push(target);
            }
        }
    }
    // Two channels of one animation on one target: the later one decides every value (as the
    // stack is evaluated in order), so the earlier one is left out, not read.
    let mut last_on: HashMap<(usize, usize, Option<usize>, Option<roxmltree::NodeId>), usize> = HashMap::new();
    let group_of = |channel: Node<'a, 'input>| with_clips.then(|| top_level(channel.parent().unwrap_or(channel)).id());
    for (index, target) in targets.iter().enumerate() {
        let group = group_of(target.channel);
        if let Some(earlier) = last_on.insert((target.node, target.element, target.member, group), index) {
            document.warn("channel on a driven target", targets[earlier].channel, || {
                format!(
                    "<channel> on {} is followed by another on the same target in the same animation: the later one is played",
                    files::quoted(targets[earlier].channel.attribute("target").unwrap_or(""))
                )
            });
        }
    }
    let mut kept: Vec<usize> = last_on.into_values().collect();
    kept.sort_unstable();

    // Each sampler is read once for each width it is read at, however many channels play it.
    let mut curves: HashMap<(roxmltree::NodeId, usize), Option<Rc<Curve>>> = HashMap::new();
    let mut channels: Vec<ElementKeys> = Vec::new();
    for index in kept {
        let target = &targets[index];
        let width = if target.member.is_some() { 1 } else { target.kind.width() };
        let sampler = document.lookup(target.channel, document.attribute(target.channel, "source")?)?;
        let curve = match curves.get(&(sampler.id(), width)) {
            Some(curve) => curve.clone(),
            None => {
                let curve = read_curve(document, sampler, width)?.map(Rc::new);
                curves.insert((sampler.id(), width), curve.clone());
                curve
            }
        };
        let Some(curve) = curve else { continue };
        channels.push(ElementKeys {
            node: target.node,
            element: target.element,
            member: target.member,
            curve,
            whole_matrix: target.member.is_none() && target.kind == Kind::Matrix,
            animation: target.channel.parent().unwrap_or(target.channel),
        });
    }
    // Per node (and, where the file has clips, per top-level <animation>, what clips instance): the
    // stack evaluated at every key time of its channels. Exporters often write one <animation> a
    // channel (rotateX, rotateY, ... of one node): without clips they all play together.
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
    let size = scene.nodes.iter().map(|node| node.local.w_axis.truncate().length()).fold(0.0f32, f32::max);
    let file_keys: usize = channels.iter().map(|channel| channel.curve.times.len()).sum();
    let budget = file_keys.saturating_mul(ADDED_PER_KEY).saturating_add(ADDED_ALLOWANCE);
    let mut resampler = Resampler::new(TOLERANCE * if size > 0.0 { size } else { 1.0 }, budget);
    let mut keys = Vec::with_capacity(groups.len());
    for ((node, _), members) in groups {
        let members: Vec<&ElementKeys> = members.iter().map(|&member| &channels[member]).collect();
        let step = members.iter().all(|channel| channel.is_step());
        let times = group_times(&members, step);
        let stack = Stack { elements: &scene.nodes[node].elements, members: &members };
        let (times, keyed) = if step || !stack.curved() {
            let matrices = times.iter().map(|&time| stack.evaluate(time)).collect();
            (times, Keyed::Matrices { matrices, step })
        } else if !stack.cubic() {
            let (times, matrices) = resampler.linear(&stack, &times);
            (times, Keyed::Matrices { matrices, step })
        } else {
            let sampled = resampler.cubic(&stack, &times);
            // Each property has the samples' times, or one key where it holds.
            let longest = sampled.iter().max_by_key(|channel| channel.times.count()).unwrap_or(&sampled[0]);
            let times = (0..longest.times.count()).map(|key| longest.times.time(key)).collect();
            (times, Keyed::Sampled(Box::new(sampled)))
        };
        keys.push(NodeKeys {
            node,
            times,
            keyed,
            animation: members[0].animation,
            file_bytes: members.iter().map(|channel| channel.curve.file_bytes).sum(),
        });
    }
    if resampler.sampling.exhausted {
        warnings.push(format!(
            "the animation's curves need more than {budget} added keys to follow within {TOLERANCE:e}; past that they are followed coarsely"
        ));
    }
    Ok(keys)
}

/// The key times of a node's channels, in order, each once; where a channel jumps among moving
/// ones (not `step`: a STEP key, or two keys at one time), a key just before the jump too, which
/// keeps the value held until then.
fn group_times(members: &[&ElementKeys], step: bool) -> Vec<f32> {
    let mut times: Vec<f32> = members.iter().flat_map(|channel| channel.curve.times.iter().copied()).collect();
    if !step {
        for channel in members.iter().map(|channel| &*channel.curve) {
            for (key, window) in channel.times.windows(3).enumerate() {
                let jump = channel.segments[key] == Segment::Step || window[2] == window[1];
                let before = window[1] - ((window[1] - window[0]) * 1e-4).min(1e-4);
                if jump && before > window[0] {
                    times.push(before);
                }
            }
            if let [.., previous, last] = channel.times[..] {
                let before = last - ((last - previous) * 1e-4).min(1e-4);
                if channel.segments[channel.times.len() - 2] == Segment::Step && before > previous {
                    times.push(before);
                }
            }
        }
    }
    times.sort_by(f32::total_cmp);
    times.dedup_by(|a, b| (*a - *b).abs() <= 1e-6);
    times
}

/// What a `<channel>` drives; None (a warning) where the scene has no such node or element.
fn target<'a, 'input>(
    document: &Document<'a, 'input>,
    scene: &Scene<'a, 'input>,
    channel: Node<'a, 'input>,
) -> Result<Option<Target<'a, 'input>>, FormatError> {
    let target = document.attribute(channel, "target")?;
    let Some((node_id, address)) = target.split_once('/') else {
        return Err(document.error(channel, format!("expected a target \"node/sid\", found {}", files::quoted(target))));
    };
    let Some(node) = scene.by_id(node_id) else {
        document.warn("channel without node", channel, || {
            format!("animation channel {}: no node {} in the scene; left out", files::quoted(target), files::quoted(node_id))
        });
        return Ok(None);
    };
    let split = address.find(['.', '(']).unwrap_or(address.len());
    let (sid, member) = address.split_at(split);
    let Some(element) = scene.nodes[node].elements.iter().position(|element| element.sid == Some(sid)) else {
        document.warn("channel without element", channel, || {
            format!(
                "animation channel {}: the node has no transform with sid {}; left out",
                files::quoted(target),
                files::quoted(sid)
            )
        });
        return Ok(None);
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
    Ok(Some(Target { channel, node, element, member, kind }))
}

/// A `<sampler>`'s keys at `width` values a key; None where it has none.
fn read_curve<'a, 'input>(
    document: &Document<'a, 'input>,
    sampler: Node<'a, 'input>,
    width: usize,
) -> Result<Option<Curve>, FormatError> {
    let source_of = |semantic: &str| -> Result<Option<Node<'a, 'input>>, FormatError> {
        match sampler.children().find(|child| child.has_tag_name("input") && child.attribute("semantic") == Some(semantic)) {
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
        return Err(document.error(output, format!("expected {} values, one per key time, found {}", times.len(), values.count)));
    }
    if times.is_empty() {
        return Ok(None);
    }
    let names = match source_of("INTERPOLATION")? {
        Some(source) => {
            let names = document.name_source(source)?;
            if names.len() != times.len() {
                return Err(document
                    .error(source, format!("expected {} interpolations, one per key time, found {}", times.len(), names.len())));
            }
            names
        }
        None => Vec::new(),
    };
    let mut others = Vec::new();
    let mut segments: Vec<Segment> = (0..times.len())
        .map(|key| match names.get(key).copied().unwrap_or("LINEAR") {
            "STEP" => Segment::Step,
            "BEZIER" | "HERMITE" => Segment::Bezier,
            "LINEAR" => Segment::Linear,
            other => {
                if !others.contains(&other) {
                    others.push(other);
                }
                Segment::Linear
            }
        })
        .collect();
    if !others.is_empty() {
        let others: Vec<String> = others.iter().map(|name| files::quoted(name)).collect();
        document.warn("interpolation not read", sampler, || format!("{} keys are played as LINEAR", others.join(", ")));
    }
    let mut file_bytes = (times.len() + values.values.len()) * 4;
    let mut controls = Vec::new();
    if segments.contains(&Segment::Bezier) {
        match (source_of("IN_TANGENT")?, source_of("OUT_TANGENT")?) {
            (Some(incoming), Some(outgoing)) => {
                let (made, bytes) = self::controls(document, [incoming, outgoing], &names, &times, &values.values, width)?;
                file_bytes += bytes;
                controls = made;
            }
            // Without its tangents a curve has no shape but its keys: LINEAR, as assimp (which
            // plays every key LINEAR) and the engines read it.
            _ => {
                document.warn("curve without tangents", sampler, || {
                    "a <sampler> with BEZIER or HERMITE keys but no IN_TANGENT and OUT_TANGENT inputs: played as LINEAR"
                        .to_string()
                });
                for segment in segments.iter_mut().filter(|segment| **segment == Segment::Bezier) {
                    *segment = Segment::Linear;
                }
            }
        }
    }
    Ok(Some(Curve { times, values: values.values, width, segments, controls, file_bytes }))
}
