//! FBX animation stacks as keys the GPU samples like any other format's.
//!
//! FBX curves are per-axis cubic Béziers on Euler angles, through pivots and pre- and
//! post-rotations, so a joint's pose between two keys is what ufbx's evaluation says, not an
//! interpolation of the keys. Each node that a curve of the stack animates is sampled into cubic
//! Hermite keys where its pose bends ([`crate::anim::hermite_sampling`]), at every key time of a
//! curve that animates it (its parent's too where ufbx made it compensate for the parent's scale
//! and a scale moves: scale helpers, Maya's segment scale compensation) and at the stack's ends,
//! and between them where the pose strays from the keys. Where only a node's rotation moves, its
//! angles' curves are evaluated and composed here ([`Rotation`]), not looked up by name each time.
//! `examples/fbx_bake_error.rs` measures the result against ufbx's evaluation on any file;
//! `tests/it/fbx_loader.rs` holds the shared ones to 1e-4 of the extent.
//!
//! Blend shapes' DeformPercent is baked by ufbx (`bake_anim`, node transforms skipped): a few
//! curves, already numbers.

use glam::{Quat, Vec4};
use rayon::prelude::*;

use ahash::AHashMap as HashMap;

use crate::anim::hermite_sampling::{Pose, Sampling};
use crate::anim::{Animation, Channel, Interpolation, KeyTimes, WeightChannel};
use crate::model::Model;

/// Samples are never closer than this (seconds).
const FINEST: f64 = 1.0 / 480.0;
/// A pose farther than this from the keys' path, as a fraction of the model's extent, is sampled:
/// a translation (in the joint's parent's units), a rotation by what it moves (its angle times the
/// reach of its vertices and joints: a finger's turn is looser than the hips'), a scale likewise.
/// 6e-6 holds the 3ds Max skin's frames within 1e-4 of the extent of Max's own posed mesh, of
/// which ufbx's evaluation takes 6.2e-5.
const TOLERANCE: f32 = 6e-6;
/// A joint's reach is at least this share of the extent (a leaf still moves the skin around it).
const LEAST_REACH: f32 = 0.05;

/// Every stack of the scene as an animation of the rig's joints.
/// `nodes` are the scene's nodes in `model`'s joint order; `target_of_channel` each blend
/// channel's morph target.
pub(super) fn read(
    scene: &ufbx::SceneRoot,
    nodes: &[&ufbx::Node],
    model: &Model,
    target_of_channel: &HashMap<u32, usize>,
) -> Result<Vec<Animation>, String> {
    let extent = model.extent();
    let extent = if extent.is_normal() { extent } else { 1.0 };
    let frame_rate = Some(scene.settings.frames_per_second as f32).filter(|rate| *rate > 0.0);
    let mut animations = Vec::new();
    // The scene is shared between threads by index (its root is Sync, its nodes' references are
    // not): a joint's node is `scene.nodes[node_of[joint]]`.
    let node_of: Vec<usize> = nodes.iter().map(|node| node.element.typed_id as usize).collect();
    let reach = reaches(nodes, model, extent);
    for (stack_index, stack) in scene.anim_stacks.iter().enumerate() {
        let scales_held = scales_held(stack);
        // Nodes are sampled independently, on every core.
        let channels: Vec<Channel> = (0..node_of.len())
            .into_par_iter()
            .flat_map_iter(|joint| {
                let (node, stack) = (&scene.nodes[node_of[joint]], &scene.anim_stacks[stack_index]);
                let parent_units = node.parent.as_ref().map_or(1.0, |parent| units(&parent.node_to_world));
                // The quaternion's chord is half the angle.
                let turn = 0.5 * TOLERANCE * extent / reach[joint];
                let tolerance = [TOLERANCE * extent / parent_units, turn, 2.0 * turn];
                node_channels(stack, node, joint, tolerance, scales_held)
            })
            .collect();
        let weights = blend_weights(scene, stack, target_of_channel)?;
        let key_bytes = channels.iter().map(|channel| 4 * (channel.times.count() + channel.values.len())).sum::<usize>()
            + weights.iter().map(|channel| 8 * channel.times.count()).sum::<usize>();
        animations.push(Animation {
            name: stack.element.name.to_string(),
            duration: (stack.time_end - stack.time_begin).max(0.0) as f32,
            frame_rate,
            channels,
            file_key_bytes: key_bytes,
            source: None,
            weights,
            compressed: None,
            motion: None,
        });
    }
    Ok(animations)
}

/// Per joint, how far what it moves lies from it at rest, in model units: the vertices it
/// influences and, through them, its children's (at least [`LEAST_REACH`] of the extent).
fn reaches(nodes: &[&ufbx::Node], model: &Model, extent: f32) -> Vec<f32> {
    let position = |joint: usize| super::matrix(&nodes[joint].node_to_world).w_axis.truncate();
    let joints = &model.skeleton.joints;
    let mut reach = vec![LEAST_REACH * extent; joints.len()];
    for vertex in &model.vertices {
        for influence in vertex.influences(&model.influences) {
            if let Some(reach) = reach.get_mut(influence.joint as usize) {
                *reach = reach.max(vertex.position.distance(position(influence.joint as usize)));
            }
        }
    }
    // Children come after their parents: from the last joint up, each reach reaches its parent.
    for joint in (0..joints.len()).rev() {
        let Some(parent) = joints[joint].parent else { continue };
        let through = position(joint).distance(position(parent)) + reach[joint];
        reach[parent] = reach[parent].max(through);
    }
    reach
}

/// The scale a node's world matrix gives lengths (the cube root of its volume): a centimetre
/// file's joints count in centimetres under a root that converts them.
fn units(to_world: &ufbx::Matrix) -> f32 {
    let matrix = super::matrix(to_world);
    glam::Mat3::from_mat4(matrix).determinant().abs().cbrt().max(f32::MIN_POSITIVE)
}

/// The node's translation, rotation and scale channels over the stack, or none where no curve of
/// the stack animates it (the joint then holds its rest, which is the same pose).
fn node_channels(
    stack: &ufbx::AnimStack,
    node: &ufbx::Node,
    joint: usize,
    tolerance: [f32; 3],
    scales_held: bool,
) -> Vec<Channel> {
    let mut times = moving_times(stack, node, scales_held);
    if times.is_empty() {
        return Vec::new();
    }
    times.extend([stack.time_begin, stack.time_end]);
    times.retain(|time| (stack.time_begin..=stack.time_end).contains(time));
    times.sort_unstable_by(f64::total_cmp);
    times.dedup_by(|a, b| (*a - *b).abs() < FINEST * 0.25);

    let evaluate = evaluator(stack, node, scales_held);
    // The stack's time and memory are bounded by its curves' keys already (ufbx read them).
    let span = (stack.time_begin, stack.time_end);
    let mut sampling = Sampling {
        span,
        origin: span.0,
        tolerance,
        finest: FINEST,
        slope_step: 1e-4,
        second_order: false,
        budget: usize::MAX,
        exhausted: false,
    };
    sampling.channels(joint, &evaluate, &times).into()
}

/// The node's pose at a time of the stack (clamped to it), as ufbx evaluates it. Where only the
/// rotation moves ([`only_rotation_moves`]), the translation and scale are the ones at the start
/// and the rotation is its curves' Euler angles composed as ufbx composes them ([`Rotation`]).
fn evaluator<'a>(stack: &'a ufbx::AnimStack, node: &'a ufbx::Node, scales_held: bool) -> impl Fn(f64) -> Pose + 'a {
    // The translation and scale at the start, where they hold, and how the rotation moves.
    let held = only_rotation_moves(stack, node, scales_held)
        .then(|| (ufbx::evaluate_transform(&stack.anim, node, stack.time_begin), Rotation::of(stack, node)));
    move |time: f64| -> Pose {
        let time = time.clamp(stack.time_begin, stack.time_end);
        let transform = match &held {
            Some((held, Some(rotation))) => ufbx::Transform { rotation: rotation.at(time), ..*held },
            Some((held, None)) => ufbx::Transform {
                rotation: ufbx::evaluate_transform_flags(&stack.anim, node, time, ROTATION_ONLY).rotation,
                ..*held
            },
            None => ufbx::evaluate_transform(&stack.anim, node, time),
        };
        let (t, r, s) = (transform.translation, transform.rotation, transform.scale);
        [
            Vec4::new(t.x as f32, t.y as f32, t.z as f32, 0.0),
            Vec4::from(Quat::from_xyzw(r.x as f32, r.y as f32, r.z as f32, r.w as f32).normalize()),
            Vec4::new(s.x as f32, s.y as f32, s.z as f32, 0.0),
        ]
    }
}

/// A node's rotation over a stack of one layer that animates nothing else of it, as ufbx's
/// `evaluate_transform` composes it (its `ufbxi_get_rotation`): the adjustments of its axis
/// conversion around the pre-rotation, the animated Euler angles in the node's order and the
/// inverse post-rotation. ufbx looks up the node's five properties by name at each time, which
/// was a third of reading a Mixamo clip; here they are looked up once and only the three curves
/// are evaluated. `only_rotation_moves` has already held everything but the angles.
struct Rotation<'a> {
    angles: &'a ufbx::AnimValue,
    order: ufbx::RotationOrder,
    /// Composed on either side of the angles' rotation.
    before: ufbx::Quat,
    after: ufbx::Quat,
}

impl<'a> Rotation<'a> {
    /// The node's rotation curves with what surrounds them, or none where ufbx would take them
    /// from elsewhere (an override of the evaluation, a property connected to another) or mirror
    /// them (a handedness conversion, which this loader does not ask for).
    fn of(stack: &'a ufbx::AnimStack, node: &'a ufbx::Node) -> Option<Rotation<'a>> {
        let anim = &stack.anim;
        let ([layer], [], []) = (stack.layers.as_ref(), anim.prop_overrides.as_ref(), anim.transform_overrides.as_ref()) else {
            return None;
        };
        let connected = node.element.props.find_prop("Lcl Rotation")?.flags.has_any(ufbx::PropFlags::CONNECTED);
        let mirrored = !matches!(node.adjust_mirror_axis, ufbx::MirrorAxis::None);
        if node.is_root || mirrored || (connected && !anim.ignore_connections) {
            return None;
        }
        let angles = &ufbx::find_anim_prop(layer, &node.element, "Lcl Rotation")?.anim_value;
        let euler = |name: &str| {
            let value = node.element.props.find_prop(name).map_or(ufbx::Vec4::default(), |prop| prop.value_vec4);
            ufbx::euler_to_quat(ufbx::Vec3 { x: value.x, y: value.y, z: value.z }, ufbx::RotationOrder::Xyz)
        };
        let identity = ufbx::Quat { x: 0.0, y: 0.0, z: 0.0, w: 1.0 };
        let (mut before, mut after, mut order) = (identity, identity, ufbx::RotationOrder::Xyz);
        if node.use_rotation_space {
            let post = euler("PostRotation");
            (before, after, order) =
                (euler("PreRotation"), ufbx::Quat { x: -post.x, y: -post.y, z: -post.z, ..post }, node.rotation_order);
        }
        if node.has_adjust_transform {
            (before, after) =
                (ufbx::quat_mul(node.adjust_pre_rotation, before), ufbx::quat_mul(after, node.adjust_post_rotation));
        }
        Some(Rotation { angles, order, before, after })
    }

    fn at(&self, time: f64) -> ufbx::Quat {
        let turn = ufbx::euler_to_quat(ufbx::evaluate_anim_value_vec3(self.angles, time), self.order);
        ufbx::quat_mul(self.before, ufbx::quat_mul(turn, self.after))
    }
}

/// ufbx's UFBX_TRANSFORM_FLAG_EXPLICIT_INCLUDES | UFBX_TRANSFORM_FLAG_INCLUDE_ROTATION (the Rust
/// binding's `TransformFlags` does not give its bits to the function that takes them).
const ROTATION_ONLY: u32 = 0x4 | 0x20;

/// Whether the stack moves nothing of `node` but its rotation: one layer at a fixed weight, no
/// property of the node animated but its translation, rotation and scale, the translation's and
/// scale's curves each holding one value. A scale above the node reaches its translation where it
/// inherits scale componentwise or through a scale helper: then no scale may move anywhere in the
/// stack (`scales_held`, [`scales_held`]).
fn only_rotation_moves(stack: &ufbx::AnimStack, node: &ufbx::Node, scales_held: bool) -> bool {
    let [layer] = stack.layers.as_ref() else { return false };
    let plain = node.original_inherit_mode == ufbx::InheritMode::Normal
        && !node.is_scale_helper
        && node.parent.as_ref().is_none_or(|parent| parent.scale_helper.is_none() && parent.inherit_scale_node.is_none());
    (plain || scales_held)
        && !layer.weight_is_animated
        && ufbx::find_anim_props(layer, &node.element).iter().all(|prop| match prop.prop_name.as_ref() {
            "Lcl Rotation" => true,
            "Lcl Translation" | "Lcl Scaling" => prop_held(prop),
            _ => false,
        })
}

/// Whether no node's scale moves in the stack (one layer, every scale curve holding one value).
fn scales_held(stack: &ufbx::AnimStack) -> bool {
    let [layer] = stack.layers.as_ref() else { return false };
    layer.anim_props.iter().filter(|prop| prop.prop_name.as_ref() == "Lcl Scaling").all(prop_held)
}

/// Whether each curve of the property holds one value, with flat tangents.
fn prop_held(prop: &ufbx::AnimProp) -> bool {
    prop.anim_value.curves.iter().flatten().all(|curve| {
        let first = curve.keyframes.first().map_or(0.0, |key| key.value);
        curve.keyframes.iter().all(|key| key.value == first && key.left.dy == 0.0 && key.right.dy == 0.0)
    })
}

/// When `node`'s transform can bend: its own curves' key times, and where ufbx made it compensate
/// for its parent's scale (a scale helper, or a child of a parent whose scale it does not inherit:
/// Maya's segment scale compensation, MotionBuilder's RrSs), its parent's, up the chain. Where no
/// scale moves in the stack (`scales_held`) a node with curves of its own bends only at their keys
/// (Mixamo's joints, which inherit scale componentwise); one without takes its parent's times, as
/// a scale held away from its rest still poses it.
fn moving_times(stack: &ufbx::AnimStack, node: &ufbx::Node, scales_held: bool) -> Vec<f64> {
    let mut times = key_times(stack, node);
    if scales_held && !times.is_empty() {
        return times;
    }
    let mut node = node;
    while node.is_scale_helper || node.original_inherit_mode != ufbx::InheritMode::Normal {
        // The scale it compensates for, wherever ufbx keeps it (the parent's helper).
        if let Some(scale) = node.inherit_scale_node.as_ref() {
            times = merged(&times, &key_times(stack, scale));
        }
        let Some(parent) = node.parent.as_ref() else { break };
        times = merged(&times, &key_times(stack, parent));
        if let Some(helper) = parent.scale_helper.as_ref() {
            times = merged(&times, &key_times(stack, helper));
        }
        node = parent;
    }
    times
}

/// Two sorted lists of times as one, each time once. A joint that compensates for its parents'
/// moving scales takes in every ancestor's times, which are mostly the same: merged as they come,
/// the list stays as long as one node's, where sorting them all at the end sorted the chain's.
fn merged(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x.total_cmp(&y).is_le() => {
                i += 1;
                j += usize::from(x == y);
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, None) => break,
        };
        if out.last() != Some(&next) {
            out.push(next);
        }
    }
    out
}

/// The times of every key of every curve of the stack's layers that animates a property of
/// `node`, in order, each once.
fn key_times(stack: &ufbx::AnimStack, node: &ufbx::Node) -> Vec<f64> {
    let mut times = Vec::new();
    // Exporters key a node's curves together (Mixamo: nine curves, every frame): a curve keyed
    // at the times of the one before adds nothing to sort.
    let mut last: &[ufbx::Keyframe] = &[];
    for layer in stack.layers.iter() {
        for prop in ufbx::find_anim_props(layer, &node.element) {
            for curve in prop.anim_value.curves.iter().flatten() {
                let keys = curve.keyframes.as_ref();
                let same = keys.len() == last.len() && keys.iter().zip(last).all(|(a, b)| a.time == b.time);
                if !same {
                    times.extend(keys.iter().map(|key| key.time));
                    last = keys;
                }
            }
        }
    }
    times.sort_unstable_by(f64::total_cmp);
    times.dedup();
    times
}

/// Blend channels' DeformPercent, 0 to 100, as weights, baked by ufbx.
fn blend_weights(
    scene: &ufbx::Scene,
    stack: &ufbx::AnimStack,
    target_of_channel: &HashMap<u32, usize>,
) -> Result<Vec<WeightChannel>, String> {
    if target_of_channel.is_empty() {
        return Ok(Vec::new());
    }
    let options = ufbx::BakeOpts {
        skip_node_transforms: true,
        resample_rate: 1.0 / FINEST,
        minimum_sample_rate: 1.0 / FINEST,
        maximum_sample_rate: 1.0 / FINEST,
        key_reduction_enabled: true,
        key_reduction_threshold: 1e-5,
        ..Default::default()
    };
    let baked = ufbx::bake_anim(scene, &stack.anim, options)
        .map_err(|problem| format!("animation stack \"{}\": {}", stack.element.name, problem.description))?;
    let seconds = |time: f64| (time - stack.time_begin) as f32;
    let mut weights = Vec::new();
    for element in baked.elements.iter() {
        let Some(&target) = target_of_channel.get(&element.element_id) else { continue };
        let Some(percent) = element.props.iter().find(|prop| prop.name.as_ref() == "DeformPercent") else { continue };
        weights.push(WeightChannel {
            target,
            interpolation: Interpolation::Linear,
            times: KeyTimes::from_list(percent.keys.iter().map(|key| seconds(key.time)).collect()),
            values: percent.keys.iter().map(|key| key.value.x as f32 / 100.0).collect(),
        });
    }
    Ok(weights)
}

#[cfg(test)]
mod tests {
    use super::{merged, only_rotation_moves, scales_held, Rotation};

    /// Two joints turning on cubic curves, the upper one with pre- and post-rotations and a ZXY
    /// order, in a Z-up file in inches: what Maya and 3ds Max write around their angles.
    const TURNING_JOINTS: &str = r#"; FBX 7.4.0 project file
FBXHeaderExtension:  {
	FBXHeaderVersion: 1003
	FBXVersion: 7400
}
GlobalSettings:  {
	Version: 1000
	Properties70:  {
		P: "UpAxis", "int", "Integer", "",2
		P: "UpAxisSign", "int", "Integer", "",1
		P: "FrontAxis", "int", "Integer", "",1
		P: "FrontAxisSign", "int", "Integer", "",-1
		P: "CoordAxis", "int", "Integer", "",0
		P: "CoordAxisSign", "int", "Integer", "",1
		P: "UnitScaleFactor", "double", "Number", "",2.54
	}
}
Objects:  {
	Model: 1000, "Model::Upper", "LimbNode" {
		Version: 232
		Properties70:  {
			P: "RotationActive", "bool", "", "",1
			P: "PreRotation", "Vector3D", "Vector", "",10,-20,30
			P: "PostRotation", "Vector3D", "Vector", "",-5,15,40
			P: "RotationOrder", "enum", "", "",4
			P: "Lcl Translation", "Lcl Translation", "", "A",1,2,3
			P: "Lcl Rotation", "Lcl Rotation", "", "A",0,0,0
		}
	}
	Model: 1001, "Model::Lower", "LimbNode" {
		Version: 232
		Properties70:  {
			P: "RotationActive", "bool", "", "",0
			P: "Lcl Translation", "Lcl Translation", "", "A",0,5,0
			P: "Lcl Rotation", "Lcl Rotation", "", "A",0,0,0
		}
	}
	AnimationStack: 2000, "AnimStack::Take", "" {
		Properties70:  {
			P: "LocalStart", "KTime", "Time", "",0
			P: "LocalStop", "KTime", "Time", "",92372316000
			P: "ReferenceStart", "KTime", "Time", "",0
			P: "ReferenceStop", "KTime", "Time", "",92372316000
		}
	}
	AnimationLayer: 3000, "AnimLayer::Base", "" {
	}
	AnimationCurveNode: 4000, "AnimCurveNode::R", "" {
		Properties70:  {
			P: "d|X", "Number", "", "A",0
			P: "d|Y", "Number", "", "A",0
			P: "d|Z", "Number", "", "A",0
		}
	}
	AnimationCurve: 5000, "AnimCurve::", "" {
		Default: 0
		KeyVer: 4008
		KeyTime: *3 {
			a: 0,46186158000,92372316000
		}
		KeyValueFloat: *3 {
			a: 0,120,-45
		}
		KeyAttrFlags: *1 {
			a: 24840
		}
		KeyAttrDataFloat: *4 {
			a: 0,0,218434821,0
		}
		KeyAttrRefCount: *1 {
			a: 3
		}
	}
	AnimationCurve: 5001, "AnimCurve::", "" {
		Default: 0
		KeyVer: 4008
		KeyTime: *2 {
			a: 0,92372316000
		}
		KeyValueFloat: *2 {
			a: 30,-60
		}
		KeyAttrFlags: *1 {
			a: 24840
		}
		KeyAttrDataFloat: *4 {
			a: 0,0,218434821,0
		}
		KeyAttrRefCount: *1 {
			a: 2
		}
	}
	AnimationCurveNode: 4001, "AnimCurveNode::R", "" {
		Properties70:  {
			P: "d|X", "Number", "", "A",0
			P: "d|Y", "Number", "", "A",0
			P: "d|Z", "Number", "", "A",0
		}
	}
}
Connections:  {
	C: "OO",1000,0
	C: "OO",1001,1000
	C: "OO",3000,2000
	C: "OO",4000,3000
	C: "OO",4001,3000
	C: "OP",4000,1000, "Lcl Rotation"
	C: "OP",5000,4000, "d|X"
	C: "OP",5001,4000, "d|Z"
	C: "OP",4001,1001, "Lcl Rotation"
	C: "OP",5001,4001, "d|Y"
	C: "OP",5000,4001, "d|Z"
}
"#;

    /// Where [`Rotation`] stands in for ufbx's evaluation, it gives ufbx's rotation to within
    /// rounding (the pose is kept in single precision: 1e-7 is a unit quaternion's last bit), at
    /// 97 times a stack: on the joints above, with the axis conversion on the root as this loader
    /// asks and as adjustments of every node, and on every node of the shared FBX files.
    #[test]
    fn a_rotation_composed_from_its_curves_is_the_one_ufbx_evaluates() {
        for conversion in [ufbx::SpaceConversion::TransformRoot, ufbx::SpaceConversion::AdjustTransforms] {
            let options = ufbx::LoadOpts { space_conversion: conversion, ..super::super::scene_options() };
            let scene = ufbx::load_memory(TURNING_JOINTS.as_bytes(), options).unwrap();
            let [checked, rotation_space, adjusted] = same_rotations(&scene, "the turning joints");
            assert_eq!((checked, rotation_space), (2, 1));
            assert_eq!(adjusted > 0, matches!(conversion, ufbx::SpaceConversion::AdjustTransforms));
        }

        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/models/fbx");
        let mut files = walk(&folder);
        if files.is_empty() {
            assert!(std::env::var_os("VKSKIN_REQUIRE_MODELS").is_none(), "no FBX files under {}", folder.display());
            return;
        }
        files.sort();
        let checked: usize = files
            .iter()
            .map(|file| {
                let scene = super::super::parse(&std::fs::read(file).unwrap()).unwrap();
                same_rotations(&scene, &file.display().to_string())[0]
            })
            .sum();
        assert!(checked > 0, "no node of the shared FBX files moves only its rotation");
    }

    /// Checks every node that [`Rotation`] evaluates against ufbx: how many, how many of them
    /// with pre- or post-rotations, how many with adjustments.
    fn same_rotations(scene: &ufbx::Scene, name: &str) -> [usize; 3] {
        let mut counts = [0; 3];
        for stack in scene.anim_stacks.iter() {
            let held = scales_held(stack);
            for node in scene.nodes.iter() {
                let Some(rotation) = only_rotation_moves(stack, node, held).then(|| Rotation::of(stack, node)).flatten() else {
                    continue;
                };
                counts[0] += 1;
                counts[1] += usize::from(node.use_rotation_space);
                counts[2] += usize::from(node.has_adjust_transform);
                for step in 0..=96 {
                    let time = stack.time_begin + (stack.time_end - stack.time_begin) * f64::from(step) / 96.0;
                    let (ours, ufbx) = (rotation.at(time), ufbx::evaluate_transform(&stack.anim, node, time).rotation);
                    let apart = [ours.x - ufbx.x, ours.y - ufbx.y, ours.z - ufbx.z, ours.w - ufbx.w];
                    assert!(apart.iter().all(|d| d.abs() < 1e-7), "{name}: node {} at {time}: {apart:?}", node.element.name);
                }
            }
        }
        counts
    }

    fn walk(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
        let Ok(entries) = std::fs::read_dir(folder) else { return Vec::new() };
        let mut files = Vec::new();
        for path in entries.flatten().map(|entry| entry.path()) {
            if path.is_dir() {
                files.extend(walk(&path));
            } else if path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("fbx")) {
                files.push(path);
            }
        }
        files
    }

    #[test]
    fn merged_times_keep_each_time_once_in_order() {
        assert_eq!(merged(&[0.0, 1.0, 2.0], &[1.0, 3.0]), [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(merged(&[], &[0.5, 0.5, 2.0]), [0.5, 2.0]);
        assert_eq!(merged(&[4.0], &[]), [4.0]);
        assert_eq!(merged(&[1.0, 2.0], &[1.0, 2.0]), [1.0, 2.0]);
        assert_eq!(merged(&[3.0], &[-1.0, 5.0]), [-1.0, 3.0, 5.0]);
    }
}
