//! The curves between keys, in one place: the key search ([`bracket`]), shortest-arc slerp, the cubic Hermite form (glTF's
//! CUBICSPLINE, Milkshape's position keys) and the cubic Bézier over time (COLLADA's BEZIER and
//! HERMITE keys, which the COLLADA loader follows when it resamples them).

use std::ops::{Add, Mul};

use glam::{Quat, Vec4};

/// Where a time falls among a channel's keys: interpolate from `key` to `next` by `fraction`;
/// `span` is the interval in seconds (the cubic tangents' scale).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeySpan {
    pub key: usize,
    pub next: usize,
    pub fraction: f32,
    pub span: f32,
}

/// The keys around `time` in keys of non-decreasing time: the last key at or before it and the
/// one after, with the fraction between (so at a time two keys share, the later one starts the
/// interval). Before the first key (or at a NaN time) and from the last on, the end key is held
/// (`key == next`, fraction 0). None for no keys.
pub fn bracket<T>(keys: &[T], time_of: impl Fn(&T) -> f32, time: f32) -> Option<KeySpan> {
    let hold = |key: usize| KeySpan { key, next: key, fraction: 0.0, span: 1.0 };
    let last = keys.len().checked_sub(1)?;
    if time.is_nan() || time < time_of(&keys[0]) {
        return Some(hold(0));
    }
    if time >= time_of(&keys[last]) {
        return Some(hold(last));
    }
    // first <= time < last: keys[key] <= time < keys[key + 1], the latter strictly later.
    let key = keys.partition_point(|other| time_of(other) <= time).saturating_sub(1).min(last - 1);
    Some(KeySpan::between(key, (time_of(&keys[key]), time_of(&keys[key + 1])), time))
}

impl KeySpan {
    /// `time` within the interval from key `key` (at `times.0`) to the next (at `times.1`).
    pub fn between(key: usize, (start, end): (f32, f32), time: f32) -> KeySpan {
        let span = end - start;
        let fraction = if span > 0.0 { ((time - start) / span).clamp(0.0, 1.0) } else { 0.0 };
        KeySpan { key, next: key + 1, fraction, span }
    }
}

/// The angle between two unit rotations (radians), accurate for small ones: glam's
/// `angle_between` takes an arc cosine of a dot product, which in f32 cannot tell apart turns
/// under about 5e-4 radians (a 0.03° tolerance would be noise).
pub fn rotation_distance(a: Quat, b: Quat) -> f32 {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let chord = Vec4::from(a).distance(Vec4::from(b));
    4.0 * libm::asinf((0.5 * chord).min(1.0))
}

/// Spherical interpolation along the shorter arc, written out so the shader can copy it exactly.
/// Falls back to a normalized lerp when the two rotations are nearly equal (sin θ ≈ 0).
pub fn slerp_shortest(a: Quat, b: Quat, t: f32) -> Quat {
    let a = Vec4::from(a);
    let mut b = Vec4::from(b);
    let mut cos_theta = a.dot(b);
    if cos_theta < 0.0 {
        b = -b;
        cos_theta = -cos_theta;
    }
    let blended = if cos_theta > 0.9995 {
        a.lerp(b, t)
    } else {
        // libm's, not the platform's: the same bits everywhere (Cargo.toml).
        let theta = libm::acosf(cos_theta.min(1.0));
        let sin_theta = libm::sinf(theta);
        a * (libm::sinf((1.0 - t) * theta) / sin_theta) + b * (libm::sinf(t * theta) / sin_theta)
    };
    Quat::from_vec4(blended.normalize())
}

/// The cubic Hermite form: from `p0` leaving with tangent `m0` to `p1` arriving with `m1`, at
/// `s` in [0, 1] (tangents per unit of `s`).
pub fn hermite<V>(p0: V, m0: V, p1: V, m1: V, s: f32) -> V
where
    V: Copy + Add<Output = V> + Mul<f32, Output = V>,
{
    let (s2, s3) = (s * s, s * s * s);
    p0 * (2.0 * s3 - 3.0 * s2 + 1.0) + m0 * (s3 - 2.0 * s2 + s) + p1 * (-2.0 * s3 + 3.0 * s2) + m1 * (s3 - s2)
}

/// The cubic Bézier through `points` (start, two controls, end) at `s` in [0, 1].
pub fn bezier(points: [f32; 4], s: f32) -> f32 {
    let r = 1.0 - s;
    points[0] * r * r * r + 3.0 * points[1] * s * r * r + 3.0 * points[2] * s * s * r + points[3] * s * s * s
}

/// A value curve over time given as a 2D cubic Bézier: `times` are the x of its start, controls
/// and end, `values` their y. The value where the curve's x is `time`. The control times are
/// clamped into the segment so x grows with `s` (a curve that turns back in time has no single
/// value), and `s` is found by bisection: x is monotone, and 40 halvings reach f32 precision in any
/// segment.
pub fn bezier_at_time(times: [f32; 4], values: [f32; 4], time: f32) -> f32 {
    let (start, end) = (times[0], times[3]);
    if end <= start || time <= start {
        return values[0];
    }
    if time >= end {
        return values[3];
    }
    let times = [start, times[1].clamp(start, end), times[2].clamp(start, end), end];
    let (mut low, mut high) = (0.0f32, 1.0f32);
    for _ in 0..40 {
        let middle = 0.5 * (low + high);
        if bezier(times, middle) < time {
            low = middle;
        } else {
            high = middle;
        }
    }
    bezier(values, 0.5 * (low + high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bezier_with_controls_at_thirds_is_linear_in_time_and_meets_its_ends() {
        let times = [1.0, 4.0 / 3.0, 5.0 / 3.0, 2.0];
        let values = [0.0, 1.0, 1.0, 0.0];
        for step in 0..=10 {
            let time = 1.0 + step as f32 / 10.0;
            let s = time - 1.0;
            assert!((bezier_at_time(times, values, time) - bezier(values, s)).abs() < 1e-6);
        }
        assert_eq!(bezier_at_time(times, values, 1.0), 0.0);
        assert_eq!(bezier_at_time(times, values, 2.0), 0.0);
    }

    #[test]
    fn an_eased_bezier_follows_its_time_curve() {
        // Controls pulled toward the ends in time: slow start and end, the middle at half.
        let times = [0.0, 0.5, 0.5, 1.0];
        let values = [0.0, 0.0, 1.0, 1.0];
        assert!((bezier_at_time(times, values, 0.5) - 0.5).abs() < 1e-6);
        let early = bezier_at_time(times, values, 0.1);
        assert!(early > 0.0 && early < 0.1, "eased in: {early}");
        // The point on the curve with x = 0.1 has that y.
        let s = (0..=100_000)
            .map(|k| k as f32 / 100_000.0)
            .min_by(|a, b| (bezier(times, *a) - 0.1).abs().total_cmp(&(bezier(times, *b) - 0.1).abs()));
        assert!((bezier(values, s.unwrap()) - early).abs() < 1e-4);
    }

    #[test]
    fn control_times_outside_the_segment_are_clamped() {
        let values = [0.0, 1.0, 2.0, 3.0];
        let wild = bezier_at_time([0.0, -5.0, 9.0, 1.0], values, 0.25);
        let clamped = bezier_at_time([0.0, 0.0, 1.0, 1.0], values, 0.25);
        assert_eq!(wild, clamped);
    }

    #[test]
    fn bracket_holds_the_ends_and_starts_a_shared_time_with_the_later_key() {
        let times = [1.0f32, 1.0, 2.0, 4.0];
        let at = |time: f32| bracket(&times, |&t| t, time).map(|span| (span.key, span.next, span.fraction));
        assert_eq!(at(0.5), Some((0, 0, 0.0)));
        assert_eq!(at(f32::NAN), Some((0, 0, 0.0)));
        assert_eq!(at(1.0), Some((1, 2, 0.0)), "the empty interval [1, 1] is skipped");
        assert_eq!(at(3.0), Some((2, 3, 0.5)));
        assert_eq!(at(4.0), Some((3, 3, 0.0)));
        assert_eq!(at(9.0), Some((3, 3, 0.0)));
        assert_eq!(bracket(&[] as &[f32], |&t| t, 1.0), None);
    }

    #[test]
    fn hermite_meets_its_ends_with_its_tangents() {
        let at = |s| hermite(1.0f32, 2.0, 3.0, -1.0, s);
        assert_eq!(at(0.0), 1.0);
        assert_eq!(at(1.0), 3.0);
        let h = 1e-3;
        assert!(((at(h) - at(0.0)) / h - 2.0).abs() < 1e-2);
        assert!(((at(1.0) - at(1.0 - h)) / h + 1.0).abs() < 1e-2);
    }
}
