//! The bundled default model: a walking figure built in code, so the repository carries no
//! third-party art and a test can prove that the committed `assets/figure.*` come from here.
//!
//! It is built in MD5 space: Z up, standing on z = 0, about 1.8 units tall, facing -Y so that after
//! the loader's Z-up → Y-up turn it faces +Z. The figure's left is +X.
//!
//! The maths is f64, and every number is rounded to six decimals as it goes into a document;
//! everything computed later (weight positions, baseframe, bounds) starts from the rounded values a
//! reader will see. So the files come out byte-identical on any platform, whatever the last bit of
//! its `sin`, and the bind pose reproduces each designed vertex to about 1e-6.

use std::f64::consts::{FRAC_PI_2, PI, TAU};
use std::io;
use std::path::{Path, PathBuf};

use glam::{DQuat, DVec3, Vec2, Vec3};
use image::{Rgba, RgbaImage};

use crate::formats::md5::{self, Md5Anim, Md5Hierarchy, Md5Joint, Md5Mesh, Md5MeshPart, Md5Vert, Md5Weight};

/// The body part's shader, and so the stem of its texture's file name.
pub const BODY_SHADER: &str = "figure_body";
/// One walk cycle: two steps in two seconds.
pub const FRAME_COUNT: usize = 48;
pub const FRAME_RATE: f32 = 24.0;

/// The generated documents and the body texture.
#[derive(Clone, Debug)]
pub struct GeneratedFigure {
    pub mesh: Md5Mesh,
    /// The walk in place (`figure_walk.md5anim`, clip "walk").
    pub anim: Md5Anim,
    /// Standing, swaying, waving the right hand (`figure_wave.md5anim`, clip "wave").
    pub wave: Md5Anim,
    pub texture: RgbaImage,
}

/// The animation files `write_assets` writes, with the document each holds.
pub fn animation_files(figure: &GeneratedFigure) -> [(&'static str, &Md5Anim); 2] {
    [("figure_walk.md5anim", &figure.anim), ("figure_wave.md5anim", &figure.wave)]
}

/// Builds the figure. Deterministic: the same documents and pixels every call, on every platform.
pub fn figure() -> GeneratedFigure {
    let skeleton = skeleton();
    let pieces = pieces(&skeleton);
    let mesh = mesh(&skeleton, &pieces);
    let anim = animation(&skeleton, &mesh, motion, "vkskin generate: walk in place");
    let wave = animation(&skeleton, &mesh, wave_motion, "vkskin generate: wave");
    GeneratedFigure { mesh, anim, wave, texture: texture() }
}

/// Writes `figure.md5mesh`, `figure_walk.md5anim`, `figure_wave.md5anim` and `figure_body.png` into
/// `dir` (created if needed) and returns their paths.
pub fn write_assets(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let figure = figure();
    std::fs::create_dir_all(dir)?;
    let mesh_path = dir.join("figure.md5mesh");
    std::fs::write(&mesh_path, md5::write_mesh(&figure.mesh))?;
    let mut written = vec![mesh_path];
    for (name, anim) in animation_files(&figure) {
        let anim_path = dir.join(name);
        std::fs::write(&anim_path, md5::write_anim(anim))?;
        written.push(anim_path);
    }
    let texture_path = dir.join(format!("{BODY_SHADER}.png"));
    figure.texture.save_with_format(&texture_path, image::ImageFormat::Png).map_err(io::Error::other)?;
    written.push(texture_path);
    Ok(written)
}

// ---------------------------------------------------------------------------------------------
// Numbers as the files hold them
// ---------------------------------------------------------------------------------------------

/// Six decimals: what goes into the files.
fn rounded(value: f64) -> f32 {
    // `+ 0.0` turns -0 into 0, which reads better in the file.
    ((value * 1e6).round() / 1e6 + 0.0) as f32
}

fn rounded_vector(vector: DVec3) -> Vec3 {
    Vec3::new(rounded(vector.x), rounded(vector.y), rounded(vector.z))
}

/// The x, y, z an MD5 file keeps of a rotation: w is implied ≤ 0, so a rotation with w > 0 is
/// stored as its negation (the same rotation).
fn stored_orientation(rotation: DQuat) -> Vec3 {
    let rotation = if rotation.w > 0.0 { -rotation } else { rotation };
    rounded_vector(DVec3::new(rotation.x, rotation.y, rotation.z))
}

/// The rotation a reader rebuilds from stored x, y, z.
fn read_orientation(xyz: Vec3) -> DQuat {
    let (x, y, z) = (f64::from(xyz.x), f64::from(xyz.y), f64::from(xyz.z));
    DQuat::from_xyzw(x, y, z, -(1.0 - x * x - y * y - z * z).max(0.0).sqrt())
}

fn smoothstep(edge0: f64, edge1: f64, x: f64) -> f64 {
    let t = ((x - edge0) / (edge1 - edge0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

// ---------------------------------------------------------------------------------------------
// Skeleton
// ---------------------------------------------------------------------------------------------

const ORIGIN: usize = 0;
const PELVIS: usize = 1;
const SPINE_LOWER: usize = 2;
const SPINE_MIDDLE: usize = 3;
const CHEST: usize = 4;
const NECK: usize = 5;
const HEAD: usize = 6;
const JOINT_COUNT: usize = 23;

/// One side's joints, and where its walk cycle starts.
#[derive(Clone, Copy)]
struct Side {
    name: &'static str,
    /// +1 for the figure's left (+X), -1 for its right.
    sign: f64,
    /// The two sides step half a cycle apart.
    phase: f64,
    clavicle: usize,
    upper_arm: usize,
    forearm: usize,
    hand: usize,
    thigh: usize,
    shin: usize,
    foot: usize,
    toe: usize,
}

const LEFT: Side = Side {
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
const RIGHT: Side = Side {
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
const SIDES: [Side; 2] = [LEFT, RIGHT];

/// Left-side landmarks in MD5 space (metres); the right side mirrors x.
mod landmark {
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

fn on(side: Side, [x, y, z]: [f64; 3]) -> DVec3 {
    DVec3::new(side.sign * x, y, z)
}

/// A bind-pose joint as the file stores it.
struct BindJoint {
    name: String,
    parent: Option<usize>,
    position: Vec3,
    /// Stored x, y, z (w implied).
    orientation: Vec3,
}

impl BindJoint {
    fn translation(&self) -> DVec3 {
        self.position.as_dvec3()
    }

    fn rotation(&self) -> DQuat {
        read_orientation(self.orientation)
    }
}

/// A pure pitch about X.
fn pitch(degrees: f64) -> DQuat {
    DQuat::from_rotation_x(degrees.to_radians())
}

/// The pure pitch about X that turns -Z (a limb hanging down) towards `direction` in the YZ
/// plane. Leg frames stay in the walking plane, so knee and ankle bends animate one component.
fn pitch_to(direction: DVec3) -> DQuat {
    DQuat::from_rotation_x(direction.y.atan2(-direction.z))
}

/// The shortest turn from `from` onto `to`, then a twist about `to`: arm frames are neither
/// axis-aligned nor shared, so a loader's orientation maths is exercised for real.
fn aim(from: DVec3, to: DVec3, twist_degrees: f64) -> DQuat {
    let to = to.normalize();
    DQuat::from_axis_angle(to, twist_degrees.to_radians()) * DQuat::from_rotation_arc(from, to)
}

fn skeleton() -> Vec<BindJoint> {
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

// ---------------------------------------------------------------------------------------------
// Surfaces
// ---------------------------------------------------------------------------------------------

const BODY_PART: usize = 0;
const HEAD_PART: usize = 1;

/// An elliptical cross-section of a piece, `at` a fraction of the way from its start to its end.
#[derive(Clone, Copy, Debug)]
struct Section {
    at: f64,
    /// Half-size along the piece's hint direction.
    depth: f64,
    /// Half-size across it.
    width: f64,
    /// Shift of the centre along the hint direction.
    offset: f64,
}

const fn section(at: f64, depth: f64, width: f64) -> Section {
    Section { at, depth, width, offset: 0.0 }
}

/// Where a piece's texture coordinates go: `u` runs once around, `v` from the start pole to the end.
#[derive(Clone, Copy)]
struct UvRegion {
    u: [f64; 2],
    v: [f64; 2],
}

// The texture's layout (see `texture`), inset half a texel and more so filtering stays inside.
const SHIRT: UvRegion = UvRegion { u: [0.005, 0.745], v: [0.01, 0.49] };
const TROUSERS: UvRegion = UvRegion { u: [0.005, 0.745], v: [0.575, 0.99] };
const SKIN: UvRegion = UvRegion { u: [0.76, 0.995], v: [0.01, 0.49] };
const SHOE: UvRegion = UvRegion { u: [0.76, 0.995], v: [0.575, 0.99] };

/// How a piece's vertices are weighted.
enum Skin {
    /// Mostly `joint`, blending into `before` around the bone's start and into `after` around its
    /// end over `blend` units either side.
    Limb { joint: usize, before: Option<usize>, after: Option<usize>, bone: [DVec3; 2], blend: f64 },
    /// The torso: spine joints by height, shoulders and hips at the sides, and the belt rings.
    Torso,
}

/// A closed surface around an axis: an elliptical tube through `sections`, capped by half
/// ellipsoids of length `caps`, with a single vertex at each pole.
struct Piece {
    part: usize,
    start: DVec3,
    end: DVec3,
    /// The first cross-section axis (where u = 0 and the UV seam lies), before it is made
    /// perpendicular to the tube.
    hint: DVec3,
    sections: Vec<Section>,
    caps: [f64; 2],
    segments: usize,
    cylinder_steps: usize,
    cap_steps: usize,
    uv: UvRegion,
    /// (fraction of the way from start pole to end pole, v); defaults to the region's v range.
    v_knots: Vec<[f64; 2]>,
    skin: Skin,
}

/// Torso rings at these heights carry 5 and 6 weights on purpose: the skin pass reads 4, so the
/// loader must cut and renormalize them. They are the belt's edges.
const BELT_LOW: f64 = 1.00;
const BELT_HIGH: f64 = 1.04;
const TORSO_BOTTOM: f64 = 0.88;
const TORSO_TOP: f64 = 1.48;
const TORSO_CAP: f64 = 0.05;

fn pieces(skeleton: &[BindJoint]) -> Vec<Piece> {
    use landmark::*;
    let joint = |index: usize| skeleton[index].translation();
    let limb = |joint_index: usize, before: Option<usize>, after: Option<usize>, bone: [DVec3; 2], blend: f64| Skin::Limb {
        joint: joint_index,
        before,
        after,
        bone,
        blend,
    };
    // Height to torso fraction, for sections given by height.
    let torso_at = |z: f64| (z - TORSO_BOTTOM) / (TORSO_TOP - TORSO_BOTTOM);
    let torso_section = |z: f64, depth: f64, width: f64, offset: f64| Section { at: torso_at(z), depth, width, offset };
    // Pole to pole fraction of a height on the torso, for its texture bands.
    let torso_length = TORSO_TOP - TORSO_BOTTOM + 2.0 * TORSO_CAP;
    let torso_fraction = |z: f64| (z - (TORSO_BOTTOM - TORSO_CAP)) / torso_length;

    let mut pieces = vec![
        Piece {
            part: BODY_PART,
            start: DVec3::new(0.0, 0.0, TORSO_BOTTOM),
            end: DVec3::new(0.0, 0.0, TORSO_TOP),
            hint: DVec3::Y,
            sections: vec![
                torso_section(0.88, 0.100, 0.150, 0.0),
                torso_section(0.96, 0.110, 0.170, 0.005),
                torso_section(1.04, 0.105, 0.160, 0.0),
                torso_section(1.12, 0.100, 0.148, -0.005),
                torso_section(1.24, 0.105, 0.165, 0.0),
                torso_section(1.36, 0.110, 0.185, 0.0),
                torso_section(1.44, 0.095, 0.180, 0.010),
                torso_section(1.48, 0.075, 0.130, 0.012),
            ],
            caps: [TORSO_CAP, TORSO_CAP],
            segments: 24,
            // Rings every 0.04, so two land exactly on the belt's edges.
            cylinder_steps: 15,
            cap_steps: 4,
            uv: UvRegion { u: SHIRT.u, v: [TROUSERS.v[1], SHIRT.v[0]] },
            // Trousers below the belt, the belt band between its two rings, the shirt above.
            v_knots: vec![
                [0.0, TROUSERS.v[1]],
                [torso_fraction(BELT_LOW), BELT_BOTTOM_V],
                [torso_fraction(BELT_HIGH), BELT_TOP_V],
                [1.0, SHIRT.v[0]],
            ],
            skin: Skin::Torso,
        },
        Piece {
            part: BODY_PART,
            start: DVec3::new(0.0, 0.015, 1.44),
            end: DVec3::new(0.0, 0.008, 1.60),
            hint: DVec3::Y,
            sections: vec![section(0.0, 0.048, 0.052), section(1.0, 0.046, 0.050)],
            caps: [0.03, 0.03],
            segments: 16,
            cylinder_steps: 4,
            cap_steps: 3,
            uv: SKIN,
            v_knots: Vec::new(),
            // A short bone with wide blends: its middle carries three weights.
            skin: limb(NECK, Some(CHEST), Some(HEAD), [joint(NECK), joint(HEAD)], 0.06),
        },
        Piece {
            part: HEAD_PART,
            start: DVec3::new(0.0, 0.0, 1.66),
            end: DVec3::new(0.0, -0.005, 1.70),
            hint: DVec3::Y,
            sections: vec![
                Section { at: 0.0, depth: 0.100, width: 0.085, offset: 0.005 },
                Section { at: 1.0, depth: 0.100, width: 0.085, offset: 0.005 },
            ],
            caps: [0.09, 0.10],
            segments: 24,
            cylinder_steps: 3,
            cap_steps: 6,
            uv: SKIN,
            v_knots: Vec::new(),
            skin: limb(HEAD, Some(NECK), None, [joint(HEAD), DVec3::from_array(HEAD_TOP)], 0.05),
        },
        // The nose shows which way the figure faces.
        Piece {
            part: HEAD_PART,
            start: DVec3::new(0.0, -0.085, 1.675),
            end: DVec3::new(0.0, -0.108, 1.665),
            hint: DVec3::Z,
            sections: vec![section(0.0, 0.016, 0.014), section(1.0, 0.012, 0.011)],
            caps: [0.01, 0.012],
            segments: 10,
            cylinder_steps: 2,
            cap_steps: 2,
            uv: SKIN,
            v_knots: Vec::new(),
            skin: limb(HEAD, None, None, [joint(HEAD), DVec3::from_array(HEAD_TOP)], 0.05),
        },
    ];
    for side in SIDES {
        let at = |landmark: [f64; 3]| on(side, landmark);
        let (wrist, fingertip) = (at(WRIST), at(FINGERTIP));
        pieces.extend([
            Piece {
                part: BODY_PART,
                start: at(SHOULDER),
                end: at(ELBOW),
                hint: DVec3::Y,
                sections: vec![section(0.0, 0.055, 0.058), section(1.0, 0.044, 0.046)],
                caps: [0.05, 0.04],
                segments: 16,
                cylinder_steps: 8,
                cap_steps: 3,
                uv: SHIRT,
                v_knots: Vec::new(),
                skin: limb(side.upper_arm, Some(side.clavicle), Some(side.forearm), [at(SHOULDER), at(ELBOW)], 0.05),
            },
            Piece {
                part: BODY_PART,
                start: at(ELBOW),
                end: wrist,
                hint: DVec3::Y,
                sections: vec![section(0.0, 0.044, 0.046), section(0.3, 0.043, 0.047), section(1.0, 0.032, 0.036)],
                caps: [0.04, 0.03],
                segments: 16,
                cylinder_steps: 8,
                cap_steps: 3,
                uv: SHIRT,
                v_knots: Vec::new(),
                skin: limb(side.forearm, Some(side.upper_arm), Some(side.hand), [at(ELBOW), wrist], 0.05),
            },
            // Flat, palm towards the body: thin along X.
            Piece {
                part: BODY_PART,
                start: wrist,
                end: wrist.lerp(fingertip, 0.8),
                hint: DVec3::X * side.sign,
                sections: vec![section(0.0, 0.022, 0.035), section(0.5, 0.024, 0.048), section(1.0, 0.018, 0.042)],
                caps: [0.02, 0.035],
                segments: 12,
                cylinder_steps: 4,
                cap_steps: 3,
                uv: SKIN,
                v_knots: Vec::new(),
                skin: limb(side.hand, Some(side.forearm), None, [wrist, fingertip], 0.04),
            },
        ]);
    }
    for side in SIDES {
        let at = |landmark: [f64; 3]| on(side, landmark);
        pieces.extend([
            Piece {
                part: BODY_PART,
                start: at(HIP),
                end: at(KNEE),
                hint: DVec3::Y,
                sections: vec![section(0.0, 0.085, 0.085), section(0.5, 0.070, 0.068), section(1.0, 0.056, 0.054)],
                caps: [0.06, 0.05],
                segments: 16,
                cylinder_steps: 10,
                cap_steps: 3,
                uv: TROUSERS,
                v_knots: Vec::new(),
                skin: limb(side.thigh, Some(PELVIS), Some(side.shin), [at(HIP), at(KNEE)], 0.08),
            },
            Piece {
                part: BODY_PART,
                start: at(KNEE),
                end: at(ANKLE),
                hint: DVec3::Y,
                sections: vec![section(0.0, 0.055, 0.054), section(0.3, 0.060, 0.055), section(1.0, 0.038, 0.036)],
                caps: [0.05, 0.04],
                segments: 16,
                cylinder_steps: 10,
                cap_steps: 3,
                uv: TROUSERS,
                v_knots: Vec::new(),
                skin: limb(side.shin, Some(side.thigh), Some(side.foot), [at(KNEE), at(ANKLE)], 0.05),
            },
            // Heel to ball, sole down (the seam runs along the sole); bottom on z = 0.
            Piece {
                part: BODY_PART,
                start: at(HEEL),
                end: at([0.115, -0.095, 0.035]),
                hint: DVec3::NEG_Z,
                sections: vec![section(0.0, 0.045, 0.042), section(1.0, 0.035, 0.050)],
                caps: [0.035, 0.02],
                segments: 12,
                cylinder_steps: 5,
                cap_steps: 3,
                uv: SHOE,
                v_knots: Vec::new(),
                skin: limb(side.foot, None, Some(side.toe), [at(ANKLE), at(BALL)], 0.03),
            },
            Piece {
                part: BODY_PART,
                start: at([0.115, -0.095, 0.025]),
                end: at([0.115, -0.15, 0.022]),
                hint: DVec3::NEG_Z,
                sections: vec![section(0.0, 0.025, 0.050), section(1.0, 0.022, 0.045)],
                caps: [0.015, 0.025],
                segments: 12,
                cylinder_steps: 2,
                cap_steps: 3,
                uv: SHOE,
                v_knots: Vec::new(),
                skin: limb(side.toe, Some(side.foot), None, [at(BALL), at(TOE_TIP)], 0.02),
            },
        ]);
    }
    pieces
}

/// Catmull-Rom-like cubic through the sections' values, so a profile has no kinks at its knots.
fn smooth_profile(sections: &[Section], at: f64, field: impl Fn(&Section) -> f64) -> f64 {
    let last = sections.len().saturating_sub(1);
    let value = |index: usize| sections.get(index).map_or(0.0, &field);
    let position = |index: usize| sections.get(index).map_or(0.0, |section| section.at);
    if last == 0 {
        return value(0);
    }
    let segment = (0..last).find(|&index| at <= position(index + 1)).unwrap_or(last - 1);
    let slope = |index: usize| {
        let (before, after) = (index.saturating_sub(1), (index + 1).min(last));
        (value(after) - value(before)) / (position(after) - position(before))
    };
    let span = position(segment + 1) - position(segment);
    let t = ((at - position(segment)) / span).clamp(0.0, 1.0);
    let (t2, t3) = (t * t, t * t * t);
    (2.0 * t3 - 3.0 * t2 + 1.0) * value(segment)
        + (t3 - 2.0 * t2 + t) * span * slope(segment)
        + (-2.0 * t3 + 3.0 * t2) * value(segment + 1)
        + (t3 - t2) * span * slope(segment + 1)
}

fn linear_knots(knots: &[[f64; 2]], at: f64) -> f64 {
    let mut previous: Option<[f64; 2]> = None;
    for &[position, value] in knots {
        if at <= position {
            return match previous {
                Some([previous_position, previous_value]) if position > previous_position => {
                    previous_value + (value - previous_value) * (at - previous_position) / (position - previous_position)
                }
                _ => value,
            };
        }
        previous = Some([position, value]);
    }
    previous.map_or(0.0, |[_, value]| value)
}

impl Piece {
    fn section_at(&self, at: f64) -> Section {
        Section {
            at,
            depth: smooth_profile(&self.sections, at, |section| section.depth),
            width: smooth_profile(&self.sections, at, |section| section.width),
            offset: smooth_profile(&self.sections, at, |section| section.offset),
        }
    }

    fn v_at(&self, fraction: f64) -> f64 {
        if self.v_knots.is_empty() {
            self.uv.v[0] + (self.uv.v[1] - self.uv.v[0]) * fraction
        } else {
            linear_knots(&self.v_knots, fraction)
        }
    }
}

/// A piece's vertices (position, uv) and triangles, indices local to the piece.
struct Surface {
    positions: Vec<DVec3>,
    uvs: Vec<[f64; 2]>,
    triangles: Vec<[u32; 3]>,
}

/// One ring of a piece: its distance along the axis from `start`, and its size relative to its
/// section (0 at a pole).
struct Ring {
    axial: f64,
    scale: f64,
    section: Section,
}

fn surface(piece: &Piece) -> Surface {
    let length = (piece.end - piece.start).length();
    let axis = (piece.end - piece.start) / length;
    let across = (piece.hint - axis * piece.hint.dot(axis)).normalize();
    // (across, sideways, axis) is right-handed, so increasing angle winds counter-clockwise seen
    // from the end: the triangles below then face outward.
    let sideways = axis.cross(across);
    let [start_cap, end_cap] = piece.caps;

    let mut rings = vec![Ring { axial: -start_cap, scale: 0.0, section: piece.section_at(0.0) }];
    for step in 1..piece.cap_steps {
        let angle = FRAC_PI_2 * step as f64 / piece.cap_steps as f64;
        rings.push(Ring { axial: -start_cap * angle.cos(), scale: angle.sin(), section: piece.section_at(0.0) });
    }
    for step in 0..=piece.cylinder_steps {
        let at = step as f64 / piece.cylinder_steps as f64;
        rings.push(Ring { axial: at * length, scale: 1.0, section: piece.section_at(at) });
    }
    for step in (1..piece.cap_steps).rev() {
        let angle = FRAC_PI_2 * step as f64 / piece.cap_steps as f64;
        rings.push(Ring { axial: length + end_cap * angle.cos(), scale: angle.sin(), section: piece.section_at(1.0) });
    }
    rings.push(Ring { axial: length + end_cap, scale: 0.0, section: piece.section_at(1.0) });

    let total = start_cap + length + end_cap;
    let [u_start, u_end] = piece.uv.u;
    let mut surface = Surface { positions: Vec::new(), uvs: Vec::new(), triangles: Vec::new() };
    // Each ring's first vertex; a pole is one vertex, a ring `segments + 1` (the seam is doubled
    // so u can run from start to end).
    let mut ring_starts = Vec::with_capacity(rings.len());
    for ring in &rings {
        ring_starts.push(surface.positions.len() as u32);
        let centre = piece.start + axis * ring.axial + across * ring.section.offset;
        let v = piece.v_at((ring.axial + start_cap) / total);
        if ring.scale == 0.0 {
            surface.positions.push(centre);
            surface.uvs.push([(u_start + u_end) * 0.5, v]);
            continue;
        }
        for segment in 0..=piece.segments {
            // `% segments`: the seam's two copies get bit-identical positions.
            let angle = TAU * (segment % piece.segments) as f64 / piece.segments as f64;
            let offset = across * (angle.cos() * ring.section.depth) + sideways * (angle.sin() * ring.section.width);
            surface.positions.push(centre + offset * ring.scale);
            let u = u_start + (u_end - u_start) * segment as f64 / piece.segments as f64;
            surface.uvs.push([u, v]);
        }
    }
    for (index, pair) in rings.windows(2).enumerate() {
        let (this, next) = (ring_starts[index], ring_starts[index + 1]);
        for segment in 0..piece.segments as u32 {
            match (pair[0].scale == 0.0, pair[1].scale == 0.0) {
                (true, _) => surface.triangles.push([this, next + segment + 1, next + segment]),
                (_, true) => surface.triangles.push([this + segment, this + segment + 1, next]),
                _ => {
                    let (a, b) = (this + segment, this + segment + 1);
                    let (c, d) = (next + segment + 1, next + segment);
                    surface.triangles.push([a, b, c]);
                    surface.triangles.push([a, c, d]);
                }
            }
        }
    }
    surface
}

// ---------------------------------------------------------------------------------------------
// Weights and the mesh document
// ---------------------------------------------------------------------------------------------

/// Spine joints and the heights where each is the only influence; between two, a linear blend.
const SPINE_LEVELS: [(usize, f64); 4] = [(PELVIS, 1.00), (SPINE_LOWER, 1.10), (SPINE_MIDDLE, 1.22), (CHEST, 1.34)];

fn spine_weights(z: f64) -> Vec<(usize, f64)> {
    for pair in SPINE_LEVELS.windows(2) {
        let [(lower, lower_z), (upper, upper_z)] = [pair[0], pair[1]];
        if z <= lower_z {
            return vec![(lower, 1.0)];
        }
        if z < upper_z {
            let t = (z - lower_z) / (upper_z - lower_z);
            return vec![(lower, 1.0 - t), (upper, t)];
        }
    }
    vec![(CHEST, 1.0)]
}

fn torso_weights(position: DVec3) -> Vec<(usize, f64)> {
    // The belt rings lean a little towards the thigh on their side, so no two weights tie.
    let lean = 0.03 * position.x / 0.17;
    let thighs = [(LEFT.thigh, 0.05 + lean), (RIGHT.thigh, 0.05 - lean)];
    if (position.z - BELT_LOW).abs() < 1e-6 {
        return [(PELVIS, 0.50), (SPINE_LOWER, 0.30), (SPINE_MIDDLE, 0.10)].into_iter().chain(thighs).collect();
    }
    if (position.z - BELT_HIGH).abs() < 1e-6 {
        return [(PELVIS, 0.42), (SPINE_LOWER, 0.32), (SPINE_MIDDLE, 0.12), (CHEST, 0.04)].into_iter().chain(thighs).collect();
    }
    let side = if position.x >= 0.0 { LEFT } else { RIGHT };
    let across = position.x.abs();
    let shoulder = smoothstep(0.07, 0.15, across) * smoothstep(1.30, 1.42, position.z);
    let clavicle = 0.45 * shoulder;
    let upper_arm = 0.25 * shoulder * smoothstep(0.12, 0.17, across);
    let hip = (1.0 - smoothstep(0.88, 0.99, position.z)) * smoothstep(0.02, 0.09, across);
    let thigh = 0.5 * hip;
    let spine_share = 1.0 - clavicle - upper_arm - thigh;
    let mut weights: Vec<(usize, f64)> =
        spine_weights(position.z).into_iter().map(|(joint, weight)| (joint, weight * spine_share)).collect();
    weights.extend([(side.clavicle, clavicle), (side.upper_arm, upper_arm), (side.thigh, thigh)]);
    weights
}

fn limb_weights(
    joint: usize,
    before: Option<usize>,
    after: Option<usize>,
    [bone_start, bone_end]: [DVec3; 2],
    blend: f64,
    position: DVec3,
) -> Vec<(usize, f64)> {
    let bone = bone_end - bone_start;
    let along = (position - bone_start).dot(bone) / bone.length_squared();
    let half_width = blend / bone.length();
    let before_weight = if before.is_some() { 1.0 - smoothstep(-half_width, half_width, along) } else { 0.0 };
    let after_weight = if after.is_some() { smoothstep(1.0 - half_width, 1.0 + half_width, along) } else { 0.0 };
    let mut weights = vec![(joint, (1.0 - before_weight - after_weight).max(0.0))];
    weights.extend(before.map(|before| (before, before_weight)));
    weights.extend(after.map(|after| (after, after_weight)));
    weights
}

/// Weights as the file stores them: merged per joint, the negligible dropped, heaviest first, in
/// millionths that sum to exactly one (the heaviest takes the rounding).
fn stored_biases(weights: Vec<(usize, f64)>) -> Vec<(usize, f32)> {
    let mut merged: Vec<(usize, f64)> = Vec::new();
    for (joint, weight) in weights {
        match merged.iter_mut().find(|(existing, _)| *existing == joint) {
            Some((_, total)) => *total += weight,
            None => merged.push((joint, weight)),
        }
    }
    merged.retain(|&(_, weight)| weight >= 0.01);
    let total: f64 = merged.iter().map(|(_, weight)| weight).sum();
    merged.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut millionths: Vec<i64> = merged.iter().map(|(_, weight)| (weight / total * 1e6).round() as i64).collect();
    let rest: i64 = millionths.iter().skip(1).sum();
    if let Some(heaviest) = millionths.first_mut() {
        *heaviest = 1_000_000 - rest;
    }
    merged.iter().zip(millionths).map(|(&(joint, _), share)| (joint, (share as f64 / 1e6) as f32)).collect()
}

fn vertex_weights(piece: &Piece, position: DVec3) -> Vec<(usize, f64)> {
    match piece.skin {
        Skin::Limb { joint, before, after, bone, blend } => limb_weights(joint, before, after, bone, blend, position),
        Skin::Torso => torso_weights(position),
    }
}

fn mesh(skeleton: &[BindJoint], pieces: &[Piece]) -> Md5Mesh {
    let mut parts = [BODY_SHADER, ""].map(|shader| Md5MeshPart {
        shader: shader.to_string(),
        verts: Vec::new(),
        tris: Vec::new(),
        weights: Vec::new(),
    });
    for piece in pieces {
        let surface = surface(piece);
        let part = &mut parts[piece.part];
        let first_vert = part.verts.len() as u32;
        for (&position, &[u, v]) in surface.positions.iter().zip(&surface.uvs) {
            let start_weight = part.weights.len() as u32;
            let biases = stored_biases(vertex_weights(piece, position));
            for &(joint, bias) in &biases {
                let bind = &skeleton[joint];
                // Where the vertex sits in the joint's bind frame, so the bind pose rebuilds it.
                let local = bind.rotation().inverse() * (position - bind.translation());
                part.weights.push(Md5Weight { joint: joint as u32, bias, position: rounded_vector(local) });
            }
            part.verts.push(Md5Vert { uv: Vec2::new(rounded(u), rounded(v)), start_weight, weight_count: biases.len() as u32 });
        }
        part.tris.extend(surface.triangles.iter().map(|triangle| triangle.map(|index| first_vert + index)));
    }
    Md5Mesh {
        commandline: "vkskin generate: the bundled walking figure".to_string(),
        joints: skeleton
            .iter()
            .map(|joint| Md5Joint {
                name: joint.name.clone(),
                parent: joint.parent.map_or(-1, |parent| parent as i32),
                position: joint.position,
                orientation: joint.orientation,
            })
            .collect(),
        meshes: parts.into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Animation
// ---------------------------------------------------------------------------------------------

/// A joint's animation at one instant: a turn in its parent's bind axes (so about the model's axes
/// while the parent is at rest) about the joint itself, and a shift of its parent-relative position.
struct Motion {
    rotation: DQuat,
    translation: DVec3,
}

impl Motion {
    const REST: Motion = Motion { rotation: DQuat::IDENTITY, translation: DVec3::ZERO };

    fn turn(rotation: DQuat) -> Motion {
        Motion { rotation, translation: DVec3::ZERO }
    }
}

fn degrees_about(axis: DVec3, degrees: f64) -> DQuat {
    DQuat::from_axis_angle(axis, degrees.to_radians())
}

/// The walk in place. `phase` runs once around the cycle; every curve is periodic in it, so the
/// last frame flows into the first. A positive turn about X swings a hanging limb backwards (+Y).
fn motion(joint: usize, phase: f64) -> Motion {
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

fn side_motion(side: Side, joint: usize, phase: f64) -> Option<Motion> {
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
fn wave_motion(joint: usize, phase: f64) -> Motion {
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
fn stored_local_pose(skeleton: &[BindJoint], joint: usize, motion: &Motion) -> [f32; 6] {
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

fn animation(skeleton: &[BindJoint], mesh: &Md5Mesh, motion: fn(usize, f64) -> Motion, commandline: &str) -> Md5Anim {
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
fn model_space_frame(anim: &Md5Anim, frame: &[f32]) -> Vec<(DVec3, DQuat)> {
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
fn skinned_bounds(mesh: &Md5Mesh, joints: &[(DVec3, DQuat)]) -> [Vec3; 2] {
    let (mut min, mut max) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for part in &mesh.meshes {
        for vert in &part.verts {
            let start = vert.start_weight as usize;
            let weights = &part.weights[start..start + vert.weight_count as usize];
            let position: DVec3 = weights
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

// ---------------------------------------------------------------------------------------------
// Texture
// ---------------------------------------------------------------------------------------------

const TEXTURE_SIZE: u32 = 256;
/// Columns from here on hold the skin (top) and shoe leather (bottom) patches.
const PATCH_COLUMN: u32 = 192;
/// Rows of the belt band, between the shirt above and the trousers below.
const BELT_TOP: u32 = 128;
const BELT_BOTTOM: u32 = 144;
const BELT_TOP_V: f64 = BELT_TOP as f64 / TEXTURE_SIZE as f64;
const BELT_BOTTOM_V: f64 = BELT_BOTTOM as f64 / TEXTURE_SIZE as f64;

/// A small integer hash for texel noise: deterministic everywhere, no RNG crate.
fn hash(x: u32, y: u32) -> u32 {
    let mut value = x.wrapping_mul(0x9E37_79B1) ^ y.wrapping_mul(0x85EB_CA77) ^ 0x27D4_EB2F;
    value ^= value >> 15;
    value = value.wrapping_mul(0x2C1B_3C6D);
    value ^= value >> 12;
    value = value.wrapping_mul(0x297A_2D39);
    value ^ (value >> 15)
}

fn shade([red, green, blue]: [i32; 3], amount: i32) -> Rgba<u8> {
    let channel = |value: i32| (value + amount).clamp(0, 255) as u8;
    Rgba([channel(red), channel(green), channel(blue), 255])
}

/// 256×256 RGBA: a woven shirt with cream stripes above a leather belt with a brass buckle at the
/// front, denim twill below, and at the right a skin patch and a shoe-leather patch.
fn texture() -> RgbaImage {
    RgbaImage::from_fn(TEXTURE_SIZE, TEXTURE_SIZE, texel)
}

fn texel(x: u32, y: u32) -> Rgba<u8> {
    let noise = (hash(x, y) % 9) as i32 - 4;
    if x >= PATCH_COLUMN {
        return match y {
            _ if y < BELT_TOP => shade([222, 178, 148], noise / 2),
            _ if y < BELT_BOTTOM => shade([52, 34, 24], noise),
            _ => shade([66, 42, 30], noise + if (x + 3 * y) % 11 == 0 { -8 } else { 0 }),
        };
    }
    if y < BELT_TOP {
        // Plain weave of 4-texel threads: warp over weft on alternate cells, each thread brighter
        // along its middle.
        let (cell_x, cell_y) = (x / 4, y / 4);
        let warp_on_top = (cell_x + cell_y) % 2 == 0;
        let across_thread = if warp_on_top { x % 4 } else { y % 4 };
        let thread_light = [-12, 6, 6, -12][across_thread as usize];
        let stripe = cell_y % 8 == 0;
        let base = if stripe { [214, 204, 178] } else { [66, 104, 160] };
        return shade(base, thread_light + noise);
    }
    if y < BELT_BOTTOM {
        // The buckle sits at the middle of the torso's u range: its front.
        let buckle = (86..106).contains(&x) && (129..143).contains(&y);
        if buckle {
            let centre = (89..103).contains(&x) && (132..140).contains(&y);
            return if !centre { shade([206, 178, 92], noise) } else { shade([70, 44, 28], noise) };
        }
        let stitch = (y == 130 || y == 141) && x % 6 < 3;
        let edge = y == BELT_TOP || y == BELT_BOTTOM - 1;
        return match () {
            _ if stitch => shade([204, 176, 118], noise),
            _ if edge => shade([58, 36, 22], noise),
            _ => shade([96, 60, 36], noise),
        };
    }
    // Denim: a 2/1 twill's diagonal of lighter weft.
    let twill = (x + y) % 6 < 2;
    shade([44, 62, 104], noise + if twill { 18 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn figure_is_deterministic() {
        let (first, second) = (figure(), figure());
        assert_eq!(first.mesh, second.mesh);
        assert_eq!(first.anim, second.anim);
        assert_eq!(first.texture, second.texture);
    }

    #[test]
    fn every_piece_is_closed_and_wound_outward() {
        let skeleton = skeleton();
        for (index, piece) in pieces(&skeleton).iter().enumerate() {
            let surface = surface(piece);
            // Weld the doubled seam by exact position.
            let mut welded: HashMap<[u64; 3], u32> = HashMap::new();
            let ids: Vec<u32> = surface
                .positions
                .iter()
                .map(|position| {
                    let key = position.to_array().map(f64::to_bits);
                    let next = welded.len() as u32;
                    *welded.entry(key).or_insert(next)
                })
                .collect();
            let mut edges: HashMap<(u32, u32), i32> = HashMap::new();
            let mut volume = 0.0;
            for triangle in &surface.triangles {
                let [a, b, c] = triangle.map(|corner| ids[corner as usize]);
                assert!(a != b && b != c && c != a, "piece {index}: degenerate triangle");
                for (from, to) in [(a, b), (b, c), (c, a)] {
                    *edges.entry((from, to)).or_default() += 1;
                }
                let [p, q, r] = triangle.map(|corner| surface.positions[corner as usize]);
                volume += p.dot(q.cross(r)) / 6.0;
            }
            for (&(from, to), &count) in &edges {
                assert_eq!(count, 1, "piece {index}: edge {from}->{to} used {count} times one way");
                assert_eq!(edges.get(&(to, from)), Some(&1), "piece {index}: edge {from}->{to} has no twin: a hole or a flip");
            }
            assert!(volume > 0.0, "piece {index}: negative volume means inward-facing triangles");
        }
    }

    #[test]
    fn bind_pose_rebuilds_the_designed_vertices() {
        let skeleton = skeleton();
        let pieces = pieces(&skeleton);
        let mesh = mesh(&skeleton, &pieces);
        let joints: Vec<(DVec3, DQuat)> =
            mesh.joints.iter().map(|joint| (joint.position.as_dvec3(), read_orientation(joint.orientation))).collect();
        let mut next_vert = [0usize; 2];
        for piece in &pieces {
            let part = &mesh.meshes[piece.part];
            for designed in surface(piece).positions {
                let vert = &part.verts[next_vert[piece.part]];
                next_vert[piece.part] += 1;
                let start = vert.start_weight as usize;
                let rebuilt: DVec3 = part.weights[start..start + vert.weight_count as usize]
                    .iter()
                    .map(|weight| {
                        let (position, orientation) = joints[weight.joint as usize];
                        f64::from(weight.bias) * (position + orientation * weight.position.as_dvec3())
                    })
                    .sum();
                assert!(rebuilt.distance(designed) < 3e-6, "{rebuilt} vs {designed}");
            }
        }
    }

    #[test]
    fn weight_counts_are_mostly_small_with_a_few_over_four() {
        let mesh = figure().mesh;
        let mut histogram = [0usize; 8];
        for vert in mesh.meshes.iter().flat_map(|part| &part.verts) {
            histogram[vert.weight_count as usize] += 1;
        }
        let total: usize = histogram.iter().sum();
        assert_eq!(histogram[0], 0);
        assert!(histogram[1] + histogram[2] + histogram[3] > total * 9 / 10, "{histogram:?}");
        assert!(histogram[3] > 0 && histogram[4] > 0, "{histogram:?}");
        assert!(histogram[5] > 0 && histogram[6] > 0 && histogram[7] == 0, "{histogram:?}");
        assert!(histogram[5] + histogram[6] < 100, "{histogram:?}");
    }

    #[test]
    fn flags_animate_only_what_moves() {
        let anim = figure().anim;
        let flags: Vec<u32> = anim.hierarchy.iter().map(|joint| joint.flags).collect();
        for expected in [0, 3, 8, 56, 63] {
            assert!(flags.contains(&expected), "flags {flags:?} lack {expected}");
        }
        assert_eq!(anim.hierarchy[PELVIS].flags, 63);
        assert_eq!(anim.hierarchy[ORIGIN].flags, 3);
        assert_eq!(anim.frames.len(), FRAME_COUNT);
        assert!(anim.frames.iter().all(|frame| frame.len() == anim.num_animated_components as usize));
    }

    #[test]
    fn figure_stands_on_the_ground_and_faces_minus_y() {
        let skeleton = skeleton();
        let pieces = pieces(&skeleton);
        let positions: Vec<DVec3> = pieces.iter().flat_map(|piece| surface(piece).positions).collect();
        let lowest = positions.iter().map(|p| p.z).fold(f64::INFINITY, f64::min);
        let highest = positions.iter().map(|p| p.z).fold(f64::NEG_INFINITY, f64::max);
        assert!(lowest.abs() < 0.003, "lowest point {lowest}");
        assert!((highest - 1.8).abs() < 0.01, "highest point {highest}");
        let nose_tip = surface(&pieces[3]).positions.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
        assert!(nose_tip < -0.11, "the nose points to -Y: {nose_tip}");
    }

    #[test]
    fn bounds_hold_every_frame() {
        let figure = figure();
        for (frame, [min, max]) in figure.anim.frames.iter().zip(&figure.anim.bounds) {
            let joints = model_space_frame(&figure.anim, frame);
            let [skinned_min, skinned_max] = skinned_bounds(&figure.mesh, &joints);
            assert_eq!((skinned_min, skinned_max), (*min, *max));
            assert!(min.z > -0.1 && max.z > 1.7 && max.z < 1.9);
        }
    }
}
