//! ACL's clip format (`.acl.sjson`): the raw clips the Animation Compression Library compresses,
//! read so that vkskin and ACL start from the same input (issue 41). A `clip` block (name,
//! `num_samples`, `sample_rate`), a `bones` list (name, parent by name, the bind pose as
//! `bind_rotation` [x, y, z, w], `bind_translation`, `bind_scale`) and a `tracks` list (per bone,
//! one value a sample in `rotations`, `translations` and `scales`). Sample i is at i / sample_rate.
//!
//! Read as a file of joints and clips without a mesh, like a lone `.md5anim`: alone it shows its
//! skeleton moving; with `--anim` it plays on a character by joint name or humanoid role. ACL's
//! files give no unit (the CMU clips are in centimetres): vkskin guesses it from the bind pose's
//! size, as for BVH, and says so.

pub mod sjson;

use std::path::Path;

use glam::{Mat4, Quat, Vec3};

use super::{files, FormatError};
use crate::anim::{Animation, Channel, Joint, JointPose, KeyTimes, Property, Skeleton};
use crate::model::{FileLayout, LoadStats, Model};
use sjson::Node;

/// Bones a clip may have, as every loader bounds joints.
const MAX_BONES: usize = 1 << 16;

/// Loads an ACL clip as a model with a skeleton and one animation, in metres.
pub fn load(path: &Path) -> Result<Model, FormatError> {
    let text = files::read_text(path, files::MAX_MODEL_BYTES).map_err(|message| FormatError::in_file(path, message))?;
    let root = sjson::parse(&text, path)?;
    to_model(&root, path)
}

/// `count` numbers from a list node, each finite (what `sjson` gives).
fn numbers<const N: usize>(node: &Node, path: &Path, what: &str) -> Result<[f32; N], FormatError> {
    let wrong = || FormatError::at_line(path, node.line, format!("expected {what} as a list of {N} numbers"));
    let items = node.list().ok_or_else(wrong)?;
    if items.len() != N {
        return Err(wrong());
    }
    let mut out = [0.0; N];
    for (slot, item) in out.iter_mut().zip(items) {
        *slot = item.number().ok_or_else(wrong)? as f32;
    }
    Ok(out)
}

/// The bones, parents first, each with its bind pose; and each bone's index by name.
fn read_bones(bones: &[Node], path: &Path) -> Result<(Skeleton, ahash::AHashMap<String, usize>), FormatError> {
    if bones.len() > MAX_BONES {
        return Err(FormatError::in_file(path, format!("expected at most {MAX_BONES} bones, found {}", bones.len())));
    }
    let mut joints: Vec<Joint> = Vec::with_capacity(bones.len());
    let mut index_of: ahash::AHashMap<String, usize> = ahash::AHashMap::new();
    for bone in bones {
        let name = bone
            .get("name")
            .and_then(Node::text)
            .ok_or_else(|| FormatError::at_line(path, bone.line, "expected a bone with a name"))?;
        let parent = match bone.get("parent").and_then(Node::text).unwrap_or("") {
            "" => None,
            parent => Some(*index_of.get(parent).ok_or_else(|| {
                FormatError::at_line(
                    path,
                    bone.line,
                    format!("expected the parent {} among the bones before {}", files::quoted(parent), files::quoted(name)),
                )
            })?),
        };
        let rotation = bone.get("bind_rotation").map(|node| numbers::<4>(node, path, "bind_rotation")).transpose()?;
        let translation = bone.get("bind_translation").map(|node| numbers::<3>(node, path, "bind_translation")).transpose()?;
        let scale = bone.get("bind_scale").map(|node| numbers::<3>(node, path, "bind_scale")).transpose()?;
        let rotation = rotation.map_or(Quat::IDENTITY, |value| Quat::from_array(value).normalize());
        let translation = translation.map_or(Vec3::ZERO, Vec3::from_array);
        let scale = scale.map_or(Vec3::ONE, Vec3::from_array);
        index_of.insert(name.to_string(), joints.len());
        joints.push(Joint::new(name, parent, Mat4::IDENTITY, JointPose { rotation, translation, scale }));
    }
    Ok((Skeleton { joints }, index_of))
}

/// The tracks as channels, in file units, and the clip's sample count: every list as long as the
/// clip, which its longest list sets (and `num_samples`, where given, must agree).
fn read_tracks(
    tracks: &[Node],
    clip: &Node,
    rate: f64,
    index_of: &ahash::AHashMap<String, usize>,
    path: &Path,
) -> Result<(Vec<Channel>, usize), FormatError> {
    let samples = tracks
        .iter()
        .flat_map(|track| {
            ["rotations", "translations", "scales"].map(|key| track.get(key).and_then(Node::list).map_or(0, <[Node]>::len))
        })
        .max()
        .unwrap_or(0);
    if let Some(declared) = clip.get("num_samples").and_then(Node::number) {
        if samples > 0 && declared as usize != samples {
            return Err(FormatError::at_line(
                path,
                clip.line,
                format!("expected the tracks to hold num_samples = {declared} samples, found {samples}"),
            ));
        }
    }
    let times = KeyTimes::Uniform { start: 0.0, step: (1.0 / rate) as f32, count: samples };
    let mut channels = Vec::new();
    for track in tracks {
        let name = track
            .get("name")
            .and_then(Node::text)
            .ok_or_else(|| FormatError::at_line(path, track.line, "expected a track with a name"))?;
        let joint = *index_of.get(name).ok_or_else(|| {
            FormatError::at_line(path, track.line, format!("expected a track named after a bone, found {}", files::quoted(name)))
        })?;
        for (key, property) in
            [("rotations", Property::Rotation), ("translations", Property::Translation), ("scales", Property::Scale)]
        {
            let Some(list) = track.get(key) else { continue };
            let items = list.list().ok_or_else(|| FormatError::at_line(path, list.line, format!("expected {key} as a list")))?;
            if items.len() != samples {
                return Err(FormatError::at_line(
                    path,
                    list.line,
                    format!("expected {samples} {key} (one a sample), found {}", items.len()),
                ));
            }
            let mut values = Vec::with_capacity(samples * 4);
            for item in items {
                if property == Property::Rotation {
                    let value = Quat::from_array(numbers::<4>(item, path, "a rotation")?).normalize();
                    values.extend_from_slice(&value.to_array());
                } else {
                    values.extend_from_slice(&numbers::<3>(item, path, key)?);
                }
            }
            channels.push(Channel::linear(joint, property, times.clone(), values));
        }
    }
    Ok((channels, samples))
}

/// The model of a parsed clip (see the module notes).
pub fn to_model(root: &Node, path: &Path) -> Result<Model, FormatError> {
    let missing = |what: &str| FormatError::in_file(path, format!("expected {what} (an ACL clip), found none"));
    let clip = root.get("clip").ok_or_else(|| missing("a clip = { ... } block"))?;
    let rate_node = clip.get("sample_rate").ok_or_else(|| missing("the clip's sample_rate"))?;
    let rate = rate_node.number().filter(|&rate| rate > 0.0 && rate <= 1e6).ok_or_else(|| {
        FormatError::at_line(path, rate_node.line, "expected a sample_rate above 0 and at most 1,000,000 samples a second")
    })?;
    let bones = root.get("bones").and_then(Node::list).ok_or_else(|| missing("a bones = [ ... ] list"))?;
    let (mut skeleton, index_of) = read_bones(bones, path)?;
    if skeleton.is_empty() {
        return Err(missing("a bone"));
    }
    let tracks = root.get("tracks").and_then(Node::list).unwrap_or(&[]);
    let (mut channels, samples) = read_tracks(tracks, clip, rate, &index_of, path)?;
    let file_values: usize = channels.iter().map(|channel| channel.values.len()).sum();

    // The rest pose is the first sample where a track keys it: ACL's bind pose is written in other
    // joint frames than its tracks (the CMU clips' hip turns by a permutation of axes between the
    // two), and a rest in the tracks' frames is what retargeting needs.
    for channel in &channels {
        let first = channel.key_value(0);
        let rest = &mut skeleton.joints[channel.joint].rest;
        match channel.property {
            Property::Rotation => rest.rotation = Quat::from_vec4(first),
            Property::Translation => rest.translation = first.truncate(),
            Property::Scale => rest.scale = first.truncate(),
        }
    }
    // The unit, from the rest pose's size (in file units), then every translation in metres.
    let models = crate::anim::posed_models(&skeleton, None, 0.0);
    let (low, high) = models.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(low, high), model| {
        (low.min(model.w_axis.truncate()), high.max(model.w_axis.truncate()))
    });
    let extent = f64::from((high - low).max_element().max(0.0));
    let (unit, metres) = super::guess_unit(extent);
    for joint in &mut skeleton.joints {
        joint.rest.translation *= metres as f32;
    }
    for channel in channels.iter_mut().filter(|channel| channel.property == Property::Translation) {
        channel.values.iter_mut().for_each(|value| *value *= metres as f32);
    }
    let name = clip.get("name").and_then(Node::text).map(str::to_string).unwrap_or_else(|| {
        path.file_stem().map_or_else(|| "clip".to_string(), |stem| stem.to_string_lossy().trim_end_matches(".acl").to_string())
    });
    let animation = Animation {
        name: name.clone(),
        duration: (samples.saturating_sub(1) as f64 / rate) as f32,
        frame_rate: Some(rate as f32),
        channels,
        file_key_bytes: file_values * 4,
        source: None,
        weights: Vec::new(),
        compressed: None,
        motion: None,
    };
    let mut stats = LoadStats::default();
    stats.notes.push(format!(
        "ACL clip units: the rest pose (the first sample) spans {extent:.3} units, read as {unit} ({:.2} m); on a character \
         its clips take the character's height",
        extent * metres
    ));
    let animations = if samples > 0 { vec![animation] } else { Vec::new() };
    let layout = FileLayout { to_model: Mat4::from_scale(Vec3::splat(metres as f32)), ..FileLayout::default() };
    Ok(Model::skeleton_only(name, skeleton, animations, stats, layout))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "version = 1
clip = { name = \"two\" num_samples = 2 sample_rate = 10 error_threshold = 0.01 }
bones = [
    { name = \"root\" parent = \"\" vertex_distance = 3.0 }
    { name = \"leg\" parent = \"root\" bind_translation = [ 0, -180, 0 ] }
]
tracks = [
    { name = \"root\" translations = [ [ 0, 100, 0 ] [ 10, 100, 0 ] ] }
    { name = \"leg\" rotations = [ [ 0, 0, 0, 1 ] [ 0.7071068, 0, 0, 0.7071068 ] ] }
]
";

    fn load_text(text: &str) -> Result<Model, String> {
        let path = Path::new("clip.acl.sjson");
        sjson::parse(text, path).and_then(|root| to_model(&root, path)).map_err(|error| error.to_string())
    }

    #[test]
    fn a_small_clip_reads_bones_tracks_and_times() {
        let model = load_text(SMALL).expect("loads");
        assert_eq!(model.skeleton.len(), 2);
        assert_eq!(model.skeleton.joints[1].parent, Some(0));
        let animation = &model.animations[0];
        assert_eq!((animation.name.as_str(), animation.duration, animation.channels.len()), ("two", 0.1, 2));
        // 180 units tall: centimetres. The rest is the first sample where a track keys it.
        assert!(model.stats.notes[0].contains("centimetres"), "{:?}", model.stats.notes);
        assert!((model.skeleton.joints[0].rest.translation - Vec3::new(0.0, 1.0, 0.0)).length() < 1e-6);
        let mut pose = vec![JointPose::IDENTITY; 2];
        animation.sample(&model.skeleton, 0.1, &mut pose);
        assert!((pose[0].translation - Vec3::new(0.1, 1.0, 0.0)).length() < 1e-6);
        assert!(pose[1].rotation.angle_between(Quat::from_rotation_x(std::f32::consts::FRAC_PI_2)) < 1e-5);
    }

    #[test]
    fn clips_that_do_not_hold_together_name_the_line() {
        let error = |text: String| load_text(&text).expect_err("refused");
        assert!(error(SMALL.replace("parent = \"root\"", "parent = \"nobody\""))
            .starts_with("clip.acl.sjson:5: expected the parent \"nobody\""));
        assert!(error(SMALL.replace("[ 10, 100, 0 ] ", "")).contains("expected 2 translations (one a sample), found 1"));
        assert!(error(SMALL.replace("name = \"leg\" rotations", "name = \"arm\" rotations")).contains("named after a bone"));
        assert!(error(SMALL.replace("sample_rate = 10", "sample_rate = 0")).contains("sample_rate above 0"));
        assert!(error(SMALL.replace("num_samples = 2", "num_samples = 3")).contains("num_samples = 3"));
        assert!(error(SMALL.replace("[ 0, 0, 0, 1 ]", "[ 0, 0, 1 ]")).contains("a rotation as a list of 4 numbers"));
        assert!(error("version = 1\n".to_string()).contains("expected a clip"));
    }
}
