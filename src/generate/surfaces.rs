//! The surfaces: pieces of lofted sections around the bones, their UV regions, and each vertex's
//! weights from the joints it hangs between.

use super::skeleton::{on, BindJoint, CHEST, HEAD, LEFT, NECK, PELVIS, RIGHT, SIDES, SPINE_LOWER, SPINE_MIDDLE};
use super::texture::{BELT_BOTTOM_V, BELT_TOP_V};
use super::{rounded, rounded_vector, smoothstep, BODY_SHADER};
use crate::formats::md5::{Md5Joint, Md5Mesh, Md5MeshPart, Md5Vert, Md5Weight};
use glam::{DVec3, Vec2};
use std::f64::consts::{FRAC_PI_2, TAU};

// ---------------------------------------------------------------------------------------------
// Surfaces
// ---------------------------------------------------------------------------------------------

pub(super) const BODY_PART: usize = 0;
pub(super) const HEAD_PART: usize = 1;

/// An elliptical cross-section of a piece, `at` a fraction of the way from its start to its end.
#[derive(Clone, Copy, Debug)]
pub(super) struct Section {
    pub(super) at: f64,
    /// Half-size along the piece's hint direction.
    pub(super) depth: f64,
    /// Half-size across it.
    pub(super) width: f64,
    /// Shift of the centre along the hint direction.
    pub(super) offset: f64,
}

pub(super) const fn section(at: f64, depth: f64, width: f64) -> Section {
    Section { at, depth, width, offset: 0.0 }
}

/// Where a piece's texture coordinates go: `u` runs once around, `v` from the start pole to the end.
#[derive(Clone, Copy)]
pub(super) struct UvRegion {
    pub(super) u: [f64; 2],
    pub(super) v: [f64; 2],
}

// The texture's layout (see `texture`), inset half a texel and more so filtering stays inside.
pub(super) const SHIRT: UvRegion = UvRegion { u: [0.005, 0.745], v: [0.01, 0.49] };
pub(super) const TROUSERS: UvRegion = UvRegion { u: [0.005, 0.745], v: [0.575, 0.99] };
pub(super) const SKIN: UvRegion = UvRegion { u: [0.76, 0.995], v: [0.01, 0.49] };
pub(super) const SHOE: UvRegion = UvRegion { u: [0.76, 0.995], v: [0.575, 0.99] };

/// How a piece's vertices are weighted.
pub(super) enum Skin {
    /// Mostly `joint`, blending into `before` around the bone's start and into `after` around its
    /// end over `blend` units either side.
    Limb { joint: usize, before: Option<usize>, after: Option<usize>, bone: [DVec3; 2], blend: f64 },
    /// The torso: spine joints by height, shoulders and hips at the sides, and the belt rings.
    Torso,
}

/// A closed surface around an axis: an elliptical tube through `sections`, capped by half
/// ellipsoids of length `caps`, with a single vertex at each pole.
pub(super) struct Piece {
    pub(super) part: usize,
    pub(super) start: DVec3,
    pub(super) end: DVec3,
    /// The first cross-section axis (where u = 0 and the UV seam lies), before it is made
    /// perpendicular to the tube.
    pub(super) hint: DVec3,
    pub(super) sections: Vec<Section>,
    pub(super) caps: [f64; 2],
    pub(super) segments: usize,
    pub(super) cylinder_steps: usize,
    pub(super) cap_steps: usize,
    pub(super) uv: UvRegion,
    /// (fraction of the way from start pole to end pole, v); defaults to the region's v range.
    pub(super) v_knots: Vec<[f64; 2]>,
    pub(super) skin: Skin,
}

/// Torso rings at these heights carry 5 and 6 weights on purpose: the skin pass reads 4, so the
/// loader must cut and renormalize them. They are the belt's edges.
pub(super) const BELT_LOW: f64 = 1.00;
pub(super) const BELT_HIGH: f64 = 1.04;
pub(super) const TORSO_BOTTOM: f64 = 0.88;
pub(super) const TORSO_TOP: f64 = 1.48;
pub(super) const TORSO_CAP: f64 = 0.05;

pub(super) fn pieces(skeleton: &[BindJoint]) -> Vec<Piece> {
    use super::skeleton::landmark::*;
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
pub(super) fn smooth_profile(sections: &[Section], at: f64, field: impl Fn(&Section) -> f64) -> f64 {
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

pub(super) fn linear_knots(knots: &[[f64; 2]], at: f64) -> f64 {
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
    pub(super) fn section_at(&self, at: f64) -> Section {
        Section {
            at,
            depth: smooth_profile(&self.sections, at, |section| section.depth),
            width: smooth_profile(&self.sections, at, |section| section.width),
            offset: smooth_profile(&self.sections, at, |section| section.offset),
        }
    }

    pub(super) fn v_at(&self, fraction: f64) -> f64 {
        if self.v_knots.is_empty() {
            self.uv.v[0] + (self.uv.v[1] - self.uv.v[0]) * fraction
        } else {
            linear_knots(&self.v_knots, fraction)
        }
    }
}

/// A piece's vertices (position, uv) and triangles, indices local to the piece.
pub(super) struct Surface {
    pub(super) positions: Vec<DVec3>,
    pub(super) uvs: Vec<[f64; 2]>,
    pub(super) triangles: Vec<[u32; 3]>,
}

/// One ring of a piece: its distance along the axis from `start`, and its size relative to its
/// section (0 at a pole).
pub(super) struct Ring {
    pub(super) axial: f64,
    pub(super) scale: f64,
    pub(super) section: Section,
}

pub(super) fn surface(piece: &Piece) -> Surface {
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
pub(super) const SPINE_LEVELS: [(usize, f64); 4] = [(PELVIS, 1.00), (SPINE_LOWER, 1.10), (SPINE_MIDDLE, 1.22), (CHEST, 1.34)];

pub(super) fn spine_weights(z: f64) -> Vec<(usize, f64)> {
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

pub(super) fn torso_weights(position: DVec3) -> Vec<(usize, f64)> {
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

pub(super) fn limb_weights(
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
pub(super) fn stored_biases(weights: Vec<(usize, f64)>) -> Vec<(usize, f32)> {
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

pub(super) fn vertex_weights(piece: &Piece, position: DVec3) -> Vec<(usize, f64)> {
    match piece.skin {
        Skin::Limb { joint, before, after, bone, blend } => limb_weights(joint, before, after, bone, blend, position),
        Skin::Torso => torso_weights(position),
    }
}

pub(super) fn mesh(skeleton: &[BindJoint], pieces: &[Piece]) -> Md5Mesh {
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
