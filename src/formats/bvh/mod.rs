//! BVH (Biovision hierarchy), the format of motion capture: the CMU database and most free mocap.
//!
//! `HIERARCHY` gives the joints: `ROOT` and `JOINT` blocks, each with an `OFFSET` from its parent
//! and its `CHANNELS` (positions and Euler rotations, any count up to six, in any order), and an
//! `End Site` where a chain ends. `MOTION` gives `Frames:`, `Frame Time:` and then one line a frame
//! with every joint's channel values in the order the hierarchy declares them.
//!
//! As three.js and Blender read it:
//! - a joint's position channels are added to its `OFFSET`;
//! - its rotation is the product of its rotation channels in the order they are listed (degrees),
//!   `Zrotation Xrotation Yrotation` being `Rz × Rx × Ry`;
//! - the rest pose is the `OFFSET` pose with no rotation. It is what `--anim` retargets from.
//!
//! End sites become joints of their own (named after their parent, with " End"), so the skeleton
//! draws its last bones and has the full height.
//!
//! **Units.** BVH says nothing of them. CMU's files are in CMU units of 5.6444 cm, others in
//! centimetres, inches or metres. vkskin guesses from the size of the rest pose (a figure between
//! 1 and 2.5 m in each unit) and says what it chose in the load report. Played on a character
//! (`--anim`), a clip's translations take the character's height instead (`anim::retarget`), so the
//! guess matters only for a BVH file on its own.
//!
//! Written by hand: no maintained crate reads BVH with line numbers in its errors and bounded work
//! on hostile files.

use std::path::Path;

use glam::{DQuat, DVec3, Mat4, Quat, Vec3};

use super::{files, FormatError};
use crate::anim::{Animation, Channel, Joint, JointPose, KeyTimes, Property, Skeleton};
use crate::model::{FileLayout, LoadStats, Model};

mod parse;
pub use parse::parse;

/// Joints (with end sites) a file may have, as every loader bounds them.
const MAX_JOINTS: usize = 1 << 16;

/// The largest magnitude an offset or a channel value may have: far beyond any motion in any unit
/// (a kilometre in millimetres), small enough that nothing overflows on the way to the GPU.
const MAX_MAGNITUDE: f64 = 1e7;

/// A channel of a joint, as `CHANNELS` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChannelKind {
    Position(usize),
    Rotation(usize),
}

impl ChannelKind {
    fn parse(name: &str) -> Option<ChannelKind> {
        let lower = name.to_ascii_lowercase();
        let axis = match lower.as_bytes().first()? {
            b'x' => 0,
            b'y' => 1,
            b'z' => 2,
            _ => return None,
        };
        match &lower[1..] {
            "position" => Some(ChannelKind::Position(axis)),
            "rotation" => Some(ChannelKind::Rotation(axis)),
            _ => None,
        }
    }
}

/// A joint of the hierarchy, an end site being one with no channels.
#[derive(Clone, Debug, PartialEq)]
pub struct BvhJoint {
    pub name: String,
    pub parent: Option<usize>,
    pub offset: DVec3,
    channels: Vec<ChannelKind>,
    /// Where its values start in a frame's line.
    first_value: usize,
}

/// A parsed file: the joints in the order of the file, and the motion's values, frame after frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Bvh {
    pub joints: Vec<BvhJoint>,
    pub frame_time: f64,
    /// Channel values a frame.
    pub channels: usize,
    pub frames: usize,
    values: Vec<f32>,
    /// What was forgiven, for the load report.
    pub warnings: Vec<String>,
}

/// Loads a BVH file as a model with a skeleton and one animation, in metres.
pub fn load(path: &Path) -> Result<Model, FormatError> {
    let text = files::read_text(path, files::MAX_MODEL_BYTES).map_err(|message| FormatError::in_file(path, message))?;
    let bvh = parse(&text, path)?;
    Ok(to_model(&bvh, path))
}

/// The model of a parsed file (see the module notes).
pub fn to_model(bvh: &Bvh, path: &Path) -> Model {
    // The rest pose's joints in file units, for the unit guess.
    let mut rest_positions = vec![DVec3::ZERO; bvh.joints.len()];
    for (index, joint) in bvh.joints.iter().enumerate() {
        rest_positions[index] = joint.parent.map_or(DVec3::ZERO, |parent| rest_positions[parent]) + joint.offset;
    }
    let (low, high) = rest_positions
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(low, high), &position| (low.min(position), high.max(position)));
    let extent = (high - low).max_element().max(0.0);
    let (unit, metres) = super::guess_unit(extent);

    // Up: Y as BVH has it, unless the head stands along Z from the root (a Z-up exporter's file):
    // then the roots turn Z-up to Y-up, as MD5's do.
    let head = bvh.joints.iter().position(|joint| joint.name.to_ascii_lowercase().contains("head"));
    let rise = head.map_or(DVec3::Y, |head| rest_positions[head] - rest_positions[0]);
    let z_up = rise.z > 0.0 && rise.z.abs() > 2.0 * rise.y.abs();
    let up_turn = if z_up { Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2) } else { Quat::IDENTITY };
    let joints: Vec<Joint> = bvh
        .joints
        .iter()
        .map(|joint| {
            let rest = JointPose::new(Quat::IDENTITY, (joint.offset * metres).as_vec3());
            let mut out = Joint::new(joint.name.clone(), joint.parent, Mat4::IDENTITY, rest);
            if joint.parent.is_none() {
                out.pre = Mat4::from_quat(up_turn);
            }
            out
        })
        .collect();
    let skeleton = Skeleton { joints };

    let times = KeyTimes::Uniform { start: 0.0, step: bvh.frame_time as f32, count: bvh.frames };
    let value =
        |frame: usize, joint: &BvhJoint, slot: usize| f64::from(bvh.values[frame * bvh.channels + joint.first_value + slot]);
    let mut channels = Vec::new();
    for (index, joint) in bvh.joints.iter().enumerate() {
        if bvh.frames == 0 {
            break;
        }
        let moves = |wanted: fn(&ChannelKind) -> bool| joint.channels.iter().any(wanted);
        if moves(|kind| matches!(kind, ChannelKind::Position(_))) {
            let mut values = Vec::with_capacity(bvh.frames * 3);
            for frame in 0..bvh.frames {
                let mut position = joint.offset;
                for (slot, kind) in joint.channels.iter().enumerate() {
                    if let ChannelKind::Position(axis) = *kind {
                        position[axis] += value(frame, joint, slot);
                    }
                }
                values.extend_from_slice(&(position * metres).as_vec3().to_array());
            }
            channels.push(Channel::linear(index, Property::Translation, times.clone(), values));
        }
        if moves(|kind| matches!(kind, ChannelKind::Rotation(_))) {
            let mut values = Vec::with_capacity(bvh.frames * 4);
            for frame in 0..bvh.frames {
                let mut rotation = DQuat::IDENTITY;
                for (slot, kind) in joint.channels.iter().enumerate() {
                    if let ChannelKind::Rotation(axis) = *kind {
                        let angle = value(frame, joint, slot).to_radians();
                        rotation *= DQuat::from_axis_angle(DVec3::AXES[axis], angle);
                    }
                }
                values.extend_from_slice(&rotation.normalize().as_quat().to_array());
            }
            channels.push(Channel::linear(index, Property::Rotation, times.clone(), values));
        }
    }
    let name = path.file_stem().map_or_else(|| "bvh".to_string(), |stem| stem.to_string_lossy().into_owned());
    let duration = (bvh.frames.saturating_sub(1) as f64 * bvh.frame_time) as f32;
    let animation = Animation {
        name: name.clone(),
        duration,
        frame_rate: Some((1.0 / bvh.frame_time) as f32),
        channels,
        file_key_bytes: bvh.values.len() * 4,
        source: None,
        weights: Vec::new(),
        compressed: None,
        motion: None,
    };
    let mut stats = LoadStats { warnings: bvh.warnings.clone(), ..LoadStats::default() };
    stats.notes.push(format!(
        "BVH units: the rest pose spans {extent:.3} units, read as {unit} ({:.2} m){}; the rest pose is the OFFSETs with \
         no rotation (what --anim retargets from), and on a character its clips take the character's height",
        extent * metres,
        if z_up { ", Z up (its head stands along Z)" } else { "" }
    ));
    let animations = if bvh.frames > 0 { vec![animation] } else { Vec::new() };
    let layout =
        FileLayout { to_model: Mat4::from_quat(up_turn) * Mat4::from_scale(Vec3::splat(metres as f32)), ..FileLayout::default() };
    Model::skeleton_only(name, skeleton, animations, stats, layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "HIERARCHY
ROOT Hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Left Up Leg
\t{
\t\tOFFSET 1 -2 0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 -20 0
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.5
0 10 0 0 0 0 0 90 0
1 10 0 90 0 0 0 0 0
";

    #[test]
    fn a_small_file_reads_joints_channels_and_frames() {
        let bvh = parse(SMALL, Path::new("small.bvh")).expect("parses");
        let names: Vec<&str> = bvh.joints.iter().map(|joint| joint.name.as_str()).collect();
        assert_eq!(names, ["Hips", "Left Up Leg", "Left Up Leg End"]);
        assert_eq!(bvh.joints[2].parent, Some(1));
        assert_eq!((bvh.channels, bvh.frames, bvh.frame_time), (9, 2, 0.5));
        assert!(bvh.warnings.is_empty(), "{:?}", bvh.warnings);
        let model = to_model(&bvh, Path::new("small.bvh"));
        // 22 units tall: read as CMU units.
        assert!(model.stats.notes[0].contains("CMU units"), "{:?}", model.stats.notes);
        let animation = &model.animations[0];
        assert_eq!(animation.duration, 0.5);
        let mut pose = vec![JointPose::IDENTITY; 3];
        animation.sample(&model.skeleton, 0.0, &mut pose);
        // Offset plus position channels, in metres.
        assert!((pose[0].translation - Vec3::new(0.0, 10.0, 0.0) * 0.056444).length() < 1e-6);
        // Zrotation Xrotation Yrotation: the leg's first frame turns 90 degrees about x (its second value).
        let expected = Quat::from_rotation_x(90f32.to_radians());
        assert!(pose[1].rotation.angle_between(expected) < 1e-5, "{:?}", pose[1].rotation);
        animation.sample(&model.skeleton, 0.5, &mut pose);
        assert!((pose[0].translation.x - 0.056444).abs() < 1e-6);
        assert!(pose[0].rotation.angle_between(Quat::from_rotation_z(90f32.to_radians())) < 1e-5);
    }

    /// SMALL as a Z-up exporter writes it: the leg down -Z, a head up +Z.
    const Z_UP: &str = "HIERARCHY
ROOT Hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Leg
\t{
\t\tOFFSET 1 0 -2
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 0 -20
\t\t}
\t}
\tJOINT Head
\t{
\t\tOFFSET 0 0 5
\t\tCHANNELS 0
\t}
}
MOTION
Frames: 1
Frame Time: 0.5
0 0 10 0 0 0 0 0 0
";

    #[test]
    fn a_z_up_file_stands_up() {
        let model = to_model(&parse(Z_UP, Path::new("z.bvh")).expect("parses"), Path::new("z.bvh"));
        assert!(model.stats.notes[0].contains("Z up"), "{:?}", model.stats.notes);
        let positions = model.bind_joint_positions();
        let head = model.skeleton.joints.iter().position(|joint| joint.name == "Head").expect("a head");
        assert!(positions[head].y > positions[0].y + 0.1 && positions[head].z.abs() < 1e-5, "{positions:?}");
        // A Y-up file keeps its axes.
        assert!(!to_model(&parse(SMALL, Path::new("y.bvh")).expect("parses"), Path::new("y.bvh")).stats.notes[0].contains("Z up"));
    }

    #[test]
    fn rotations_compose_in_the_listed_order() {
        let text = SMALL.replace("CHANNELS 3 Zrotation Xrotation Yrotation", "CHANNELS 3 Yrotation Xrotation Zrotation");
        let bvh = parse(&text.replace("0 10 0 0 0 0 0 90 0", "0 10 0 0 0 0 30 40 50"), Path::new("order.bvh")).expect("parses");
        let model = to_model(&bvh, Path::new("order.bvh"));
        let mut pose = vec![JointPose::IDENTITY; 3];
        model.animations[0].sample(&model.skeleton, 0.0, &mut pose);
        let expected = Quat::from_rotation_y(30f32.to_radians())
            * Quat::from_rotation_x(40f32.to_radians())
            * Quat::from_rotation_z(50f32.to_radians());
        assert!(pose[1].rotation.angle_between(expected) < 1e-5);
    }

    #[test]
    fn broken_files_name_the_line_and_what_was_expected() {
        let error = |text: &str| parse(text, Path::new("bad.bvh")).expect_err("refused").to_string();
        assert_eq!(
            error("HIERARCHY\nROOT a\n{\nOFFSET 0 0\n}"),
            "bad.bvh:5: expected an OFFSET value, a finite number of at most 1e7, found \"}\""
        );
        let unknown = SMALL.replace("Zrotation Xrotation Yrotation\n\t\tEnd", "Zrotation Xrotation Wrotation\n\t\tEnd");
        assert!(error(&unknown).starts_with("bad.bvh:9: expected a channel (Xposition ... Zrotation), found \"Wrotation\""));
        assert!(error(&SMALL.replace("CHANNELS 3", "CHANNELS 1000000")).contains("from 0 to 6"));
        assert!(error(&SMALL.replace("0 10 0 0 0 0 0 90 0", "0 10 0 0 0 0 0 90"))
            .starts_with("bad.bvh:19: expected 9 values a frame"));
        assert!(error(&SMALL.replace("0 10 0 0 0 0 0 90 0", "0 10 0 NaN 0 0 0 90 0")).contains("found \"NaN\""));
        assert!(error(&SMALL.replace("0 10 0 0 0 0 0 90 0", "0 10 0 1e300 0 0 0 90 0")).contains("1e300"));
        assert!(error(&SMALL.replace("Frame Time: 0.5", "Frame Time: 0")).contains("above 0 seconds"));
        assert!(error("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\n").contains("expected MOTION, found the end"));
        assert!(error("MOTION").contains("expected HIERARCHY"));
    }

    #[test]
    fn a_cut_last_frame_and_a_wrong_frame_count_are_forgiven_with_a_word() {
        let cut = SMALL.replace("1 10 0 90 0 0 0 0 0\n", "1 10 0 0\n").replace("Frames: 2", "Frames: 10000000");
        let bvh = parse(&cut, Path::new("cut.bvh")).expect("parses");
        assert_eq!(bvh.frames, 1);
        assert_eq!(bvh.warnings.len(), 2, "{:?}", bvh.warnings);
        assert!(bvh.warnings[0].contains("left out") && bvh.warnings[1].contains("Frames: says 10000000"));
    }
}
