//! A joint's pose as a function of time, from an authoring tool's curves (FBX's and COLLADA's
//! per-axis Béziers on Euler angles, through pivots and pre-rotations), sampled into cubic Hermite
//! keys (`Interpolation::CubicSpline`, as glTF's) that the GPU follows between them. A pose is
//! sampled, its value and its rate of change on either side:
//! - at every key time of the curves that animate the joint (the caller's `times`), and at the
//!   span's ends;
//! - between two samples, at a third and two thirds of the way, kept (with the three parts looked
//!   at again) where the pose is farther than the tolerance from what the Hermite keys give there,
//!   down to `finest` apart. An eased segment passes through the middle of its chord, so a single
//!   midpoint says nothing; a cubic that meets another at both thirds and both ends, with its
//!   slopes, is that cubic.
//!
//! So a curve is keyed where it bends, and a Bézier key of the file is about one key here: a
//! Mixamo dance keyed every frame takes five evaluations a frame where resampling every curve at
//! 480 Hz took sixteen. A property that does not move is one key.

use glam::Vec4;

use super::curve::hermite;
use super::{Channel, Interpolation, KeyTimes, Property};

/// A joint's translation, rotation (xyzw) and scale at a time, as the three properties' values.
pub type Pose = [Vec4; 3];

/// How a pose function is sampled: where it is looked at, how closely, how finely at most.
pub struct Sampling {
    /// The span the function is sampled over (rates of change at its ends look inside it).
    pub span: (f64, f64),
    /// The keys' times count from here.
    pub origin: f64,
    /// How far (translation, rotation as a quaternion's chord, scale relative to its size) the
    /// pose may be from what the keys give.
    pub tolerance: [f32; 3],
    /// Samples are never closer than this (seconds).
    pub finest: f64,
    /// The step (seconds) a rate of change is measured over, on either side of a sample, at most;
    /// at most a 32nd of the segment it ends, too. A value evaluated in single precision (a
    /// COLLADA angle of 1,200° moves by a ten-thousandth of a degree between two floats) makes
    /// a rate as far off as its noise over the step, so the error it brings over the segment
    /// stays the same whatever the segment's length.
    pub slope_step: f64,
    /// Rates from the poses one and two steps away (a second-order difference, whose error goes as
    /// the step squared: for a long step) rather than one (whose noise is a quarter as large: for a
    /// short one).
    pub second_order: bool,
    /// Samples that may be added between the given times, at most: a file's time and memory stay
    /// proportional to its keys whatever its curves do. Whether it ran out is `exhausted`.
    pub budget: usize,
    pub exhausted: bool,
}

/// One sampled pose and its rate of change (per second) arriving and leaving, which differ at a
/// key with broken tangents.
#[derive(Clone, Copy)]
struct Sample {
    time: f64,
    value: Pose,
    incoming: Pose,
    outgoing: Pose,
}

impl Sample {
    /// This sample with its rotation (and the rotation's rates) in `reference`'s hemisphere.
    fn facing(mut self, reference: Vec4) -> Sample {
        if self.value[1].dot(reference) < 0.0 {
            self.value[1] = -self.value[1];
            self.incoming[1] = -self.incoming[1];
            self.outgoing[1] = -self.outgoing[1];
        }
        self
    }
}

impl Sampling {
    /// `evaluate` keyed at `times` (sorted, within the span) and wherever between them it strays
    /// from the keys: joint `joint`'s translation, rotation and scale channels, each a cubic Hermite
    /// key a sample (one key where it does not move), their times from `origin`.
    pub fn channels(&mut self, joint: usize, evaluate: &impl Fn(f64) -> Pose, times: &[f64]) -> [Channel; 3] {
        let (begin, end) = self.span;
        let most = self.slope_step;
        let second_order = self.second_order;
        // The rate of change at `time` on one side (`step` negative: arriving), from the pose a step
        // that way, or (second order) from the poses one and two steps that way.
        let slope = |time: f64, value: &Pose, step: f64| -> Pose {
            let near = |pose: Pose| -> Pose { [pose[0], if pose[1].dot(value[1]) < 0.0 { -pose[1] } else { pose[1] }, pose[2]] };
            let one = near(evaluate(time + step));
            if second_order {
                let two = near(evaluate(time + 2.0 * step));
                let step = step as f32;
                [0, 1, 2].map(|property| (4.0 * one[property] - 3.0 * value[property] - two[property]) / (2.0 * step))
            } else {
                let step = step as f32;
                [0, 1, 2].map(|property| (one[property] - value[property]) / step)
            }
        };
        // The pose at `time` and its rates, measured over a step fit for segments `span` long.
        let exact = |time: f64, span: f64| {
            let step = most.min(span / 32.0).max(f64::EPSILON * time.abs().max(1.0) * 64.0);
            let value = evaluate(time);
            let reach = if second_order { 2.0 * step } else { step };
            let before = time - reach >= begin;
            let after = time + reach <= end;
            let incoming = if before { slope(time, &value, -step) } else { slope(time, &value, step) };
            let outgoing = if after { slope(time, &value, step) } else { incoming };
            Sample { time, value, incoming, outgoing }
        };

        // The poses at the keys, one hemisphere throughout, with rates of change from their
        // neighbours (a curve keyed every frame needs nothing more).
        let mut keys: Vec<Sample> = Vec::with_capacity(times.len());
        for &time in times {
            let value = evaluate(time);
            let sample = Sample { time, value, incoming: value, outgoing: value };
            keys.push(match keys.last() {
                Some(previous) => sample.facing(previous.value[1]),
                None => sample,
            });
        }
        let rates: Vec<Pose> = (0..keys.len())
            .map(|index| {
                let (before, after) = (&keys[index.saturating_sub(1)], &keys[(index + 1).min(keys.len() - 1)]);
                let span = (after.time - before.time) as f32;
                if span > 0.0 {
                    [0, 1, 2].map(|property| (after.value[property] - before.value[property]) / span)
                } else {
                    [Vec4::ZERO; 3]
                }
            })
            .collect();
        for (key, rate) in keys.iter_mut().zip(&rates) {
            (key.incoming, key.outgoing) = (*rate, *rate);
        }
        // Each segment looked at a third and two thirds of the way (see `refine`); one that strays
        // gets the exact rates at its ends (its own sides of them), then is refined as it needs.
        let mut samples = Vec::with_capacity(keys.len());
        if let Some(&first) = keys.first() {
            samples.push(first);
        }
        for next in 1..keys.len() {
            let mut start = *samples.last().unwrap_or(&keys[next - 1]);
            let mut end = keys[next];
            if self.strays(evaluate, &start, &end) {
                let span = end.time - start.time;
                start.outgoing = exact(start.time, span).facing(start.value[1]).outgoing;
                end.incoming = exact(end.time, span).facing(end.value[1]).incoming;
                if let Some(last) = samples.last_mut() {
                    last.outgoing = start.outgoing;
                }
                self.refine(evaluate, &exact, start, end, &mut samples);
            }
            let last = samples.last().map_or(end.value[1], |last| last.value[1]);
            samples.push(end.facing(last));
        }
        [Property::Translation, Property::Rotation, Property::Scale]
            .map(|property| channel(joint, property, &samples, self.tolerance, self.origin))
    }

    /// Whether the pose a third or two thirds of the way from `start` to `end` is off what their
    /// Hermite keys give there.
    fn strays(&self, evaluate: &impl Fn(f64) -> Pose, start: &Sample, end: &Sample) -> bool {
        let span = end.time - start.time;
        [1.0 / 3.0, 2.0 / 3.0]
            .into_iter()
            .any(|s: f64| off(&evaluate(start.time + span * s), &between(start, end, s as f32), &self.tolerance))
    }

    /// Samples between `start` and `end` (neither pushed) where the pose leaves what their Hermite
    /// keys give, in time order into `out` (see the module's text).
    fn refine(
        &mut self,
        evaluate: &impl Fn(f64) -> Pose,
        sample: &impl Fn(f64, f64) -> Sample,
        start: Sample,
        end: Sample,
        out: &mut Vec<Sample>,
    ) {
        let span = end.time - start.time;
        if span < 1.5 * self.finest || !self.strays(evaluate, &start, &end) {
            return;
        }
        if self.budget < 2 {
            self.exhausted = true;
            return;
        }
        self.budget -= 2;
        let first = sample(start.time + span / 3.0, span / 3.0).facing(start.value[1]);
        let second = sample(start.time + span * 2.0 / 3.0, span / 3.0).facing(first.value[1]);
        let end = end.facing(second.value[1]);
        self.refine(evaluate, sample, start, first, out);
        out.push(first);
        self.refine(evaluate, sample, first, second, out);
        out.push(second);
        self.refine(evaluate, sample, second, end, out);
    }
}

/// What the Hermite keys `a` and `b` give at fraction `s` of the way, property by property.
fn between(a: &Sample, b: &Sample, s: f32) -> Pose {
    let span = (b.time - a.time) as f32;
    let mut pose: Pose = std::array::from_fn(|property| {
        hermite(a.value[property], a.outgoing[property] * span, b.value[property], b.incoming[property] * span, s)
    });
    pose[1] = pose[1].normalize_or_zero();
    pose
}

/// Whether `pose` is farther than the tolerance from `expected`, in any property.
fn off(pose: &Pose, expected: &Pose, tolerance: &[f32; 3]) -> bool {
    let rotation = if pose[1].dot(expected[1]) < 0.0 { -expected[1] } else { expected[1] };
    pose[0].distance(expected[0]) > tolerance[0]
        || pose[1].distance(rotation) > tolerance[1]
        || (pose[2] - expected[2]).abs().max_element() > tolerance[2] * pose[2].abs().max_element().max(1.0)
}

/// Property `property` of the samples as a channel: one key where it does not move (every value
/// within the tolerance of the first, and still), else a cubic Hermite key a sample, its time
/// from `start`.
fn channel(joint: usize, property: Property, samples: &[Sample], tolerance: [f32; 3], start: f64) -> Channel {
    let index = property as usize;
    let components = if property == Property::Rotation { 4 } else { 3 };
    let first = samples.first().map_or(Vec4::ZERO, |sample| sample.value[index]);
    let span = (samples.last().map_or(0.0, |last| last.time) - samples.first().map_or(0.0, |first| first.time)) as f32;
    // Still where every sample is within the tolerance of the first and no rate of change carries
    // it further within a millisecond: a slow rate over a long span is a measuring step's noise
    // (a single-precision value wobbles by a float or two, and a short step makes that a rate); a
    // real motion between samples would have had the segment sampled more densely.
    let still = samples.iter().all(|sample| {
        let near = |value: Vec4| if index == 1 && value.dot(first) < 0.0 { -value } else { value };
        near(sample.value[index]).distance(first) <= tolerance[index]
            && (sample.incoming[index].length() + sample.outgoing[index].length()) * span.min(1e-3) <= tolerance[index]
    });
    let kept = if still { &samples[..samples.len().min(1)] } else { samples };
    let mut values = Vec::with_capacity(kept.len() * 3 * components);
    for sample in kept {
        for value in [sample.incoming[index], sample.value[index], sample.outgoing[index]] {
            values.extend_from_slice(&value.to_array()[..components]);
        }
    }
    Channel {
        joint,
        property,
        interpolation: Interpolation::CubicSpline,
        times: KeyTimes::from_list(kept.iter().map(|sample| (sample.time - start) as f32).collect()),
        mask: if components == 4 { 0b1111 } else { 0b0111 },
        base: Vec4::ZERO,
        implied_w: false,
        wraps: false,
        values,
    }
}
