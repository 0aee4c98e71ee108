//! How far a channel strays within a cell from its value at the cell's start: along linear
//! segments the path it covers, for step and cubic segments the hull of the keys and Bézier
//! control points it passes (see the module above).

use glam::{Mat3, Vec3, Vec4};

use super::super::curve::KeySpan;
use super::super::{Channel, Interpolation, Property};

/// Largest singular value bound of a 3×3 matrix: Gershgorin on AᵀA (exact for a rotation times a
/// uniform scale, an upper bound always).
pub(super) fn norm(matrix: Mat3) -> f32 {
    let gram = matrix.transpose() * matrix;
    let rows = [gram.row(0), gram.row(1), gram.row(2)];
    rows.iter().map(|row| row.abs().element_sum()).fold(0.0, f32::max).sqrt()
}

/// The rotation angle between two unit quaternions (radians, 0..π).
pub(super) fn angle(a: Vec4, b: Vec4) -> f32 {
    2.0 * a.dot(b).abs().min(1.0).acos()
}

/// How a channel moves within `[t0, t1]`, against its value at `t0`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Motion {
    /// Translation or scale: the farthest value from the one at t0. Rotation: the largest angle.
    pub(super) deviation: f32,
    /// Scale: the largest absolute component reached.
    pub(super) largest: f32,
    /// Translation and scale: the box of the values reached, less the value at t0 (the exact
    /// sweep of a linear segment, the hull of a curve's control points).
    pub(super) sweep: (Vec3, Vec3),
}

impl Motion {
    /// The sweep grown to hold `value`, an offset from the value at t0.
    fn sweeps_to(&mut self, value: Vec3) {
        self.sweep = (self.sweep.0.min(value), self.sweep.1.max(value));
    }
}

/// The control points the channel's value stays within while on key segment `key -> next`.
pub(super) fn segment_points(channel: &Channel, key: usize, next: usize, out: &mut Vec<Vec4>) {
    let (a, b) = (channel.key_value(key), channel.key_value(next));
    out.push(a);
    out.push(b);
    if matches!(channel.interpolation, Interpolation::CubicSpline | Interpolation::Hermite) {
        let span = if channel.interpolation == Interpolation::CubicSpline { segment_span(channel, key, next) } else { 1.0 };
        out.push(a + channel.entry(key * 3 + 2, true) * (span / 3.0));
        out.push(b - channel.entry(next * 3, true) * (span / 3.0));
    }
}

/// The control points of the part `[u0, u1]` of a cubic Bézier curve (de Casteljau).
fn bezier_part(points: [Vec4; 4], u0: f32, u1: f32) -> [Vec4; 4] {
    let split = |[p0, p1, p2, p3]: [Vec4; 4], t: f32| {
        let (p01, p12, p23) = (p0.lerp(p1, t), p1.lerp(p2, t), p2.lerp(p3, t));
        let (p012, p123) = (p01.lerp(p12, t), p12.lerp(p23, t));
        let middle = p012.lerp(p123, t);
        ([p0, p01, p012, middle], [middle, p123, p23, p3])
    };
    let left = split(points, u1).0;
    if u1 <= 0.0 {
        return [left[0]; 4];
    }
    split(left, u0 / u1).1
}

/// Seconds from key `key` to key `next`; the wrap back to key 0 (only uniform channels wrap) and a
/// held last key take one step.
fn segment_span(channel: &Channel, key: usize, next: usize) -> f32 {
    if next > key {
        return channel.times.time(next) - channel.times.time(key);
    }
    match channel.times {
        super::super::KeyTimes::Uniform { step, .. } => step,
        super::super::KeyTimes::Listed(_) => 0.0,
    }
}

/// The key after `key` along a channel: the next, or key 0 where a uniform channel wraps, or the
/// key itself at the end.
fn next_key(channel: &Channel, key: usize) -> usize {
    if key + 1 < channel.times.count() {
        key + 1
    } else if channel.wraps {
        0
    } else {
        key
    }
}

/// A linear rotation channel's turn along each key segment (from each key to [`next_key`]), and
/// whether the two keys are so close that slerp falls back to a normalized lerp: the same for
/// every span that crosses the segment, so worked out once an animation, not once a span.
pub(super) fn segment_turns(channel: &Channel) -> Option<Vec<(f32, bool)>> {
    if channel.property != Property::Rotation || channel.interpolation != Interpolation::Linear {
        return None;
    }
    let turn = |key: usize| {
        let a = channel.key_value(key).normalize_or_zero();
        let b = channel.key_value(next_key(channel, key)).normalize_or_zero();
        (angle(a, b), a.dot(b).abs() > 0.9995)
    };
    Some((0..channel.times.count()).map(turn).collect())
}

/// `start` and `v0`: where `t0` lies among the channel's keys and its value there; `turns`, the
/// channel's [`segment_turns`] where it has them.
pub(super) fn motion(
    channel: &Channel,
    (t0, t1): (f32, f32),
    (start, v0): (KeySpan, Vec4),
    turns: Option<&[(f32, bool)]>,
    points: &mut Vec<Vec4>,
    segments: &mut Vec<(usize, usize)>,
) -> Motion {
    let end = channel.locate_from(start.key, t1);
    let count = channel.times.count();
    // The key segments the cell touches: from t0's key up to t1's, and the wrap back to key 0.
    segments.clear();
    let last_key = if end.key >= start.key { end.key } else { count.saturating_sub(1) };
    for key in start.key..=last_key {
        segments.push((key, next_key(channel, key)));
    }
    if end.key < start.key {
        segments.push((end.key, end.next)); // wrapped around within the cell
    }
    let mut result = Motion::default();
    let rotation = channel.property == Property::Rotation;
    for &(key, next) in segments.iter() {
        if channel.interpolation == Interpolation::Linear {
            // Constant speed along the segment: the distance covered within the cell is the
            // segment's length times the part of it the cell overlaps (slerp turns at a constant
            // rate; its normalized-lerp fallback for nearly equal keys is counted whole).
            let (a, b) = (channel.key_value(key), channel.key_value(next));
            let start = channel.times.time(key);
            let end = start + segment_span(channel, key, next);
            let overlap = if end > start { ((t1.min(end) - t0.max(start)).max(0.0) / (end - start)).min(1.0) } else { 0.0 };
            let turn = turns.filter(|_| next == next_key(channel, key)).and_then(|turns| turns.get(key));
            let (length, whole) = if let Some(&turn) = turn {
                turn
            } else if rotation {
                let a = a.normalize_or_zero();
                let b = b.normalize_or_zero();
                (angle(a, b), a.dot(b).abs() > 0.9995)
            } else {
                (a.truncate().distance(b.truncate()), false)
            };
            result.deviation += length * if whole && overlap > 0.0 { 1.0 } else { overlap };
            if !rotation && end > start && overlap > 0.0 {
                for time in [t0.max(start), t1.min(end)] {
                    result.sweeps_to(a.lerp(b, (time - start) / (end - start)).truncate() - v0.truncate());
                }
            } else if !rotation {
                result.sweeps_to(a.truncate() - v0.truncate());
            }
            if !rotation {
                // A linear segment's control points are its two keys.
                result.largest = result.largest.max(a.truncate().abs().max_element()).max(b.truncate().abs().max_element());
            }
            continue;
        }
        points.clear();
        segment_points(channel, key, next, points);
        if points.len() == 4 {
            // A curve: only the part of it within the cell, as the control points of that part.
            let start = channel.times.time(key);
            let span = segment_span(channel, key, next);
            if span > 0.0 {
                let u0 = ((t0 - start) / span).clamp(0.0, 1.0);
                let u1 = ((t1 - start) / span).clamp(0.0, 1.0);
                let part = bezier_part([points[0], points[2], points[3], points[1]], u0, u1);
                points.clear();
                points.extend_from_slice(&part);
            }
        }
        if rotation {
            let q0 = v0.normalize_or_zero();
            // Where the segment's part within the cell starts (a curve's part begins at its first
            // control point; a step holds its key).
            let qk = points[0].normalize_or_zero();
            let within = match channel.interpolation {
                // The Bézier hull lies in the cone around q_k when every control point leans its way.
                // The largest angle is that of the smallest cosine (one arc cosine, not four).
                Interpolation::CubicSpline | Interpolation::Hermite if points.iter().all(|point| point.dot(qk) > 0.0) => {
                    let nearest =
                        points.iter().map(|point| qk.dot(point.normalize_or_zero()).abs()).fold(f32::INFINITY, f32::min);
                    2.0 * nearest.min(1.0).acos()
                }
                Interpolation::CubicSpline | Interpolation::Hermite => std::f32::consts::PI,
                // Step: the keys themselves.
                _ => angle(qk, channel.key_value(next).normalize_or_zero()),
            };
            result.deviation = result.deviation.max((angle(q0, qk) + within).min(std::f32::consts::PI));
        } else {
            for point in points.iter() {
                result.sweeps_to(point.truncate() - v0.truncate());
                result.deviation = result.deviation.max(point.truncate().distance(v0.truncate()));
                result.largest = result.largest.max(point.truncate().abs().max_element());
            }
        }
    }
    if rotation {
        result.deviation = result.deviation.min(std::f32::consts::PI);
    }
    result.largest = result.largest.max(v0.truncate().abs().max_element());
    result
}
