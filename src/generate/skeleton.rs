//! The skeleton: 23 joints placed by landmarks, each side's limbs mirrored.

use super::{read_orientation, rounded_vector, stored_orientation};
use glam::DQuat;
use glam::{DVec3, Vec3};
use std::f64::consts::PI;

// ---------------------------------------------------------------------------------------------
// Skeleton
// ---------------------------------------------------------------------------------------------

pub(super) const ORIGIN: usize = 0;
pub(super) const PELVIS: usize = 1;
pub(super) const SPINE_LOWER: usize = 2;
pub(super) const SPINE_MIDDLE: usize = 3;
pub(super) const CHEST: usize = 4;
pub(super) const NECK: usize = 5;
pub(super) const HEAD: usize = 6;
pub(super) const JOINT_COUNT: usize = 23;

/// One side's joints, and where its walk cycle starts.
#[derive(Clone, Copy)]
pub(super) struct Side {
    pub(super) name: &'static str,
    /// +1 for the figure's left (+X), -1 for its right.
    pub(super) sign: f64,
    /// The two sides step half a cycle apart.
    pub(super) phase: f64,
    pub(super) clavicle: usize,
    pub(super) upper_arm: usize,
    pub(super) forearm: usize,
    pub(super) hand: usize,
    pub(super) thigh: usize,
    pub(super) shin: usize,
    pub(super) foot: usize,
    pub(super) toe: usize,
}

pub(super) const LEFT: Side = Side {
    name: "left",
    sign: 1.0,
    phase: 0.0,
    clavicle: 7,
    upper_arm: 8,
    forearm: 9,
    hand: 10,
    thigh: 15,
    shin: 16,
    foot: 17,
    toe: 18,
};
pub(super) const RIGHT: Side = Side {
    name: "right",
    sign: -1.0,
    phase: PI,
    clavicle: 11,
    upper_arm: 12,
    forearm: 13,
    hand: 14,
    thigh: 19,
    shin: 20,
    foot: 21,
    toe: 22,
};
pub(super) const SIDES: [Side; 2] = [LEFT, RIGHT];

/// Left-side landmarks in MD5 space (metres); the right side mirrors x.
pub(super) mod landmark {
    pub const CLAVICLE: [f64; 3] = [0.03, 0.0, 1.44];
    pub const SHOULDER: [f64; 3] = [0.185, 0.015, 1.43];
    pub const ELBOW: [f64; 3] = [0.255, 0.03, 1.15];
    pub const WRIST: [f64; 3] = [0.30, 0.0, 0.90];
    pub const FINGERTIP: [f64; 3] = [0.325, -0.01, 0.74];
    pub const HIP: [f64; 3] = [0.095, 0.0, 0.93];
    pub const KNEE: [f64; 3] = [0.105, -0.005, 0.51];
    pub const ANKLE: [f64; 3] = [0.11, 0.02, 0.085];
    pub const BALL: [f64; 3] = [0.115, -0.105, 0.025];
    pub const TOE_TIP: [f64; 3] = [0.115, -0.16, 0.02];
    pub const HEEL: [f64; 3] = [0.11, 0.055, 0.045];
    pub const HEAD_TOP: [f64; 3] = [0.0, 0.0, 1.80];
}

pub(super) fn on(side: Side, [x, y, z]: [f64; 3]) -> DVec3 {
    DVec3::new(side.sign * x, y, z)
}

/// A bind-pose joint as the file stores it.
pub(super) struct BindJoint {
    pub(super) name: String,
    pub(super) parent: Option<usize>,
    pub(super) position: Vec3,
    /// Stored x, y, z (w implied).
    pub(super) orientation: Vec3,
}

impl BindJoint {
    pub(super) fn translation(&self) -> DVec3 {
        self.position.as_dvec3()
    }

    pub(super) fn rotation(&self) -> DQuat {
        read_orientation(self.orientation)
    }
}

/// A pure pitch about X.
pub(super) fn pitch(degrees: f64) -> DQuat {
    DQuat::from_rotation_x(degrees.to_radians())
}

/// The pure pitch about X that turns -Z (a limb hanging down) towards `direction` in the YZ
/// plane. Leg frames stay in the walking plane, so knee and ankle bends animate one component.
pub(super) fn pitch_to(direction: DVec3) -> DQuat {
    DQuat::from_rotation_x(direction.y.atan2(-direction.z))
}

/// The shortest turn from `from` onto `to`, then a twist about `to`: arm frames are neither
/// axis-aligned nor shared, so a loader's orientation maths is exercised for real.
pub(super) fn aim(from: DVec3, to: DVec3, twist_degrees: f64) -> DQuat {
    let to = to.normalize();
    DQuat::from_axis_angle(to, twist_degrees.to_radians()) * DQuat::from_rotation_arc(from, to)
}

pub(super) fn skeleton() -> Vec<BindJoint> {
    use landmark::*;
    let mut designed: Vec<(String, Option<usize>, DVec3, DQuat)> = vec![
        ("origin".into(), None, DVec3::ZERO, DQuat::IDENTITY),
        ("pelvis".into(), Some(ORIGIN), DVec3::new(0.0, 0.0, 0.98), pitch(4.0)),
        ("spine_lower".into(), Some(PELVIS), DVec3::new(0.0, 0.005, 1.09), pitch(-3.0)),
        ("spine_middle".into(), Some(SPINE_LOWER), DVec3::new(0.0, 0.012, 1.21), pitch(-5.0)),
        ("chest".into(), Some(SPINE_MIDDLE), DVec3::new(0.0, 0.008, 1.33), pitch(3.0)),
        ("neck".into(), Some(CHEST), DVec3::new(0.0, 0.015, 1.50), pitch(8.0)),
        ("head".into(), Some(NECK), DVec3::new(0.0, 0.005, 1.60), pitch(-4.0)),
    ];
    let down = DVec3::NEG_Z;
    for side in SIDES {
        let name = |part: &str| format!("{part}_{}", side.name);
        let (clavicle, shoulder, elbow, wrist) = (on(side, CLAVICLE), on(side, SHOULDER), on(side, ELBOW), on(side, WRIST));
        let fingertip = on(side, FINGERTIP);
        let outward = DVec3::X * side.sign;
        designed.push((name("clavicle"), Some(CHEST), clavicle, aim(outward, shoulder - clavicle, 0.0)));
        designed.push((name("upper_arm"), Some(side.clavicle), shoulder, aim(down, elbow - shoulder, 20.0 * side.sign)));
        designed.push((name("forearm"), Some(side.upper_arm), elbow, aim(down, wrist - elbow, -30.0 * side.sign)));
        designed.push((name("hand"), Some(side.forearm), wrist, aim(down, fingertip - wrist, 10.0 * side.sign)));
    }
    for side in SIDES {
        let name = |part: &str| format!("{part}_{}", side.name);
        let (hip, knee, ankle, ball) = (on(side, HIP), on(side, KNEE), on(side, ANKLE), on(side, BALL));
        let foot = pitch_to(ball - ankle);
        designed.push((name("thigh"), Some(PELVIS), hip, pitch_to(knee - hip)));
        designed.push((name("shin"), Some(side.thigh), knee, pitch_to(ankle - knee)));
        designed.push((name("foot"), Some(side.shin), ankle, foot));
        // The toe shares the foot's frame, so its bend is a pure pitch in its parent's frame.
        designed.push((name("toe"), Some(side.foot), ball, foot));
    }
    debug_assert_eq!(designed.len(), JOINT_COUNT);
    designed
        .into_iter()
        .map(|(name, parent, position, rotation)| BindJoint {
            name,
            parent,
            position: rounded_vector(position),
            orientation: stored_orientation(rotation),
        })
        .collect()
}
