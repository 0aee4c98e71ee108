//! The clips: walk and wave as motions per joint and phase, stored as MD5 frames with their bounds.

use super::skeleton::{
    BindJoint, Side, CHEST, HEAD, JOINT_COUNT, LEFT, NECK, ORIGIN, PELVIS, RIGHT, SIDES, SPINE_LOWER, SPINE_MIDDLE,
};
use super::{read_orientation, rounded_vector, stored_orientation, FRAME_COUNT, FRAME_RATE};
use crate::formats::md5::{Md5Anim, Md5Hierarchy, Md5Mesh};
use glam::{DQuat, DVec3, Vec3};
use std::f64::consts::TAU;

// ---------------------------------------------------------------------------------------------
// Animation
// ---------------------------------------------------------------------------------------------

/// A joint's animation at one instant: a turn in its parent's bind axes (so about the model's axes
/// while the parent is at rest) about the joint itself, and a shift of its parent-relative position.
pub(super) struct Motion {
    pub(super) rotation: DQuat,
    pub(super) translation: DVec3,
}

impl Motion {
    const REST: Motion = Motion { rotation: DQuat::IDENTITY, translation: DVec3::ZERO };

    pub(super) fn turn(rotation: DQuat) -> Motion {
        Motion { rotation, translation: DVec3::ZERO }
    }
}

pub(super) fn degrees_about(axis: DVec3, degrees: f64) -> DQuat {
    DQuat::from_axis_angle(axis, degrees.to_radians())
}

/// The walk in place. `phase` runs once around the cycle; every curve is periodic in it, so the
/// last frame flows into the first. A positive turn about X swings a hanging limb backwards (+Y).
pub(super) fn motion(joint: usize, phase: f64) -> Motion {
    let (sin, sin2, cos2) = (phase.sin(), (2.0 * phase).sin(), (2.0 * phase).cos());
    match joint {
        // Sways towards the standing leg and surges a little at each step.
        ORIGIN => Motion { rotation: DQuat::IDENTITY, translation: DVec3::new(0.015 * sin, 0.004 * sin2, 0.0) },
        // Lowest when both feet are down, level when one leg passes under the body.
        PELVIS => Motion {
            rotation: degrees_about(DVec3::Z, -6.0 * sin)
                * degrees_about(DVec3::Y, 3.0 * cos2)
                * degrees_about(DVec3::X, 2.0 * sin2),
            translation: DVec3::new(0.01 * sin, 0.005 * sin2, 0.02 * (cos2 - 1.0)),
        },
        // The shoulders turn against the hips.
        SPINE_LOWER => Motion::turn(degrees_about(DVec3::Z, 2.0 * sin) * degrees_about(DVec3::X, 1.5 * sin2)),
        SPINE_MIDDLE => Motion::turn(degrees_about(DVec3::Z, 3.0 * sin)),
        CHEST => Motion::turn(degrees_about(DVec3::Z, 4.0 * sin)),
        NECK => Motion::turn(degrees_about(DVec3::X, -2.0 * sin2)),
        HEAD => Motion::turn(degrees_about(DVec3::Z, 3.0 * sin) * degrees_about(DVec3::X, 4.0 * (2.0 * phase + 0.6).sin())),
        _ => SIDES.iter().find_map(|&side| side_motion(side, joint, phase + side.phase)).unwrap_or(Motion::REST),
    }
}

pub(super) fn side_motion(side: Side, joint: usize, phase: f64) -> Option<Motion> {
    let sin = phase.sin();
    // The leg swings forward while sin > 0; its knee folds most as it passes under the body.
    let swing = -25.0 * sin;
    let knee = 5.0 + 40.0 * phase.cos().max(0.0).powi(2);
    let pitch = |degrees: f64| Some(Motion::turn(degrees_about(DVec3::X, degrees)));
    match joint {
        _ if joint == side.clavicle => Some(Motion::REST),
        // Arms swing against the legs; the elbow bends more as the arm comes forward.
        _ if joint == side.upper_arm => pitch(18.0 * sin),
        _ if joint == side.forearm => pitch(-(15.0 + 15.0 * (-sin).max(0.0).powi(2))),
        _ if joint == side.hand => pitch(6.0 * (phase + 0.5).sin()),
        _ if joint == side.thigh => pitch(swing),
        _ if joint == side.shin => pitch(knee),
        // Keeps the foot roughly level.
        _ if joint == side.foot => pitch(-0.5 * (swing + knee)),
        // Push-off: the toes bend up while the leg is behind.
        _ if joint == side.toe => pitch(-20.0 * (-sin).max(0.0).powi(2)),
        _ => None,
    }
}

/// Standing and waving. The right arm is raised out to the side (a turn about the forward axis),
/// the forearm and hand wave twice a cycle; the body sways gently. Periodic in `phase` like the walk.
pub(super) fn wave_motion(joint: usize, phase: f64) -> Motion {
    let (sin, sin2, cos2) = (phase.sin(), (2.0 * phase).sin(), (2.0 * phase).cos());
    match joint {
        ORIGIN => Motion { rotation: DQuat::IDENTITY, translation: DVec3::new(0.012 * sin, 0.0, 0.0) },
        PELVIS => {
            Motion { rotation: degrees_about(DVec3::Z, 3.0 * sin), translation: DVec3::new(0.0, 0.0, 0.006 * (cos2 - 1.0)) }
        }
        CHEST => Motion::turn(degrees_about(DVec3::Y, -4.0 + 2.0 * sin)),
        HEAD => Motion::turn(degrees_about(DVec3::Y, -6.0 * sin) * degrees_about(DVec3::X, 3.0 * sin2)),
        _ if joint == RIGHT.upper_arm => Motion::turn(degrees_about(DVec3::Y, 135.0 + 5.0 * sin)),
        _ if joint == RIGHT.forearm => Motion::turn(degrees_about(DVec3::Y, 20.0 + 28.0 * sin2)),
        _ if joint == RIGHT.hand => Motion::turn(degrees_about(DVec3::Y, 15.0 * (2.0 * phase + 0.8).sin())),
        _ if joint == LEFT.upper_arm => Motion::turn(degrees_about(DVec3::X, 4.0 * sin)),
        _ if joint == LEFT.forearm => Motion::turn(degrees_about(DVec3::X, -12.0)),
        _ => Motion::REST,
    }
}

/// A joint's parent-relative pose as the file stores it: `[Tx, Ty, Tz, Qx, Qy, Qz]`.
pub(super) fn stored_local_pose(skeleton: &[BindJoint], joint: usize, motion: &Motion) -> [f32; 6] {
    let bind = &skeleton[joint];
    let (position, rotation) = match bind.parent {
        Some(parent) => {
            let parent = &skeleton[parent];
            let to_parent = parent.rotation().inverse();
            (
                to_parent * (bind.translation() - parent.translation()) + motion.translation,
                to_parent * motion.rotation * bind.rotation(),
            )
        }
        None => (bind.translation() + motion.translation, motion.rotation * bind.rotation()),
    };
    let position = rounded_vector(position);
    let orientation = stored_orientation(rotation);
    [position.x, position.y, position.z, orientation.x, orientation.y, orientation.z]
}

pub(super) fn animation(skeleton: &[BindJoint], mesh: &Md5Mesh, motion: fn(usize, f64) -> Motion, commandline: &str) -> Md5Anim {
    let baseframe: Vec<[f32; 6]> = (0..JOINT_COUNT).map(|joint| stored_local_pose(skeleton, joint, &Motion::REST)).collect();
    let poses: Vec<Vec<[f32; 6]>> = (0..FRAME_COUNT)
        .map(|frame| {
            let phase = TAU * frame as f64 / FRAME_COUNT as f64;
            (0..JOINT_COUNT).map(|joint| stored_local_pose(skeleton, joint, &motion(joint, phase))).collect()
        })
        .collect();

    // Animate exactly the components that ever differ from the baseframe.
    let mut hierarchy = Vec::with_capacity(JOINT_COUNT);
    let mut start_index = 0;
    for (joint, (bind, base)) in skeleton.iter().zip(&baseframe).enumerate() {
        let mut flags = 0u32;
        for component in 0..6 {
            if poses.iter().any(|frame| frame[joint][component] != base[component]) {
                flags |= 1 << component;
            }
        }
        hierarchy.push(Md5Hierarchy {
            name: bind.name.clone(),
            parent: bind.parent.map_or(-1, |parent| parent as i32),
            flags,
            start_index,
        });
        start_index += flags.count_ones();
    }
    let frames = poses
        .iter()
        .map(|frame| {
            hierarchy
                .iter()
                .zip(frame)
                .flat_map(|(joint, components)| {
                    components
                        .iter()
                        .enumerate()
                        .filter(|&(component, _)| joint.flags & (1 << component) != 0)
                        .map(|(_, &value)| value)
                })
                .collect()
        })
        .collect();
    let mut anim = Md5Anim {
        commandline: commandline.to_string(),
        frame_rate: FRAME_RATE,
        num_animated_components: start_index,
        hierarchy,
        bounds: Vec::new(),
        baseframe: baseframe.iter().map(|c| [Vec3::new(c[0], c[1], c[2]), Vec3::new(c[3], c[4], c[5])]).collect(),
        frames,
    };
    anim.bounds = anim.frames.iter().map(|frame| skinned_bounds(mesh, &model_space_frame(&anim, frame))).collect();
    anim
}

/// A frame's model-space joints in MD5 space, computed from the stored numbers as the format
/// defines (independently of the loader, and in f64).
pub(super) fn model_space_frame(anim: &Md5Anim, frame: &[f32]) -> Vec<(DVec3, DQuat)> {
    let mut poses: Vec<(DVec3, DQuat)> = Vec::with_capacity(anim.hierarchy.len());
    for (joint, [base_position, base_orientation]) in anim.hierarchy.iter().zip(&anim.baseframe) {
        let ([tx, ty, tz], [qx, qy, qz]) = (base_position.to_array(), base_orientation.to_array());
        let mut components = [tx, ty, tz, qx, qy, qz];
        let mut next = joint.start_index as usize;
        for (component, value) in components.iter_mut().enumerate() {
            if joint.flags & (1 << component) != 0 {
                *value = frame[next];
                next += 1;
            }
        }
        let [x, y, z, orientation_x, orientation_y, orientation_z] = components;
        let position = Vec3::new(x, y, z).as_dvec3();
        let orientation = read_orientation(Vec3::new(orientation_x, orientation_y, orientation_z));
        let pose = match usize::try_from(joint.parent) {
            Ok(parent) => {
                let (parent_position, parent_orientation) = poses[parent];
                (parent_position + parent_orientation * position, (parent_orientation * orientation).normalize())
            }
            Err(_) => (position, orientation),
        };
        poses.push(pose);
    }
    poses
}

/// The box around the mesh skinned the MD5 way (every weight) to `joints`, rounded outward.
pub(super) fn skinned_bounds(mesh: &Md5Mesh, joints: &[(DVec3, DQuat)]) -> [Vec3; 2] {
    let (mut min, mut max) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for part in &mesh.meshes {
        for vert in &part.verts {
            let position: DVec3 = part
                .weights_of(vert)
                .iter()
                .map(|weight| {
                    let (joint_position, joint_orientation) = joints[weight.joint as usize];
                    f64::from(weight.bias) * (joint_position + joint_orientation * weight.position.as_dvec3())
                })
                .sum();
            min = min.min(position);
            max = max.max(position);
        }
    }
    let outward = |vector: DVec3, round: fn(f64) -> f64| vector.to_array().map(|value| (round(value * 1e6) / 1e6 + 0.0) as f32);
    [Vec3::from_array(outward(min, f64::floor)), Vec3::from_array(outward(max, f64::ceil))]
}
