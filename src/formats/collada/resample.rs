//! A node's animated transform stack as keys vkskin's clips interpolate:
//! - straight channels (STEP keys, a whole matrix's LINEAR keys) keep the file's keys, its matrix
//!   at each decomposed;
//! - curves (BEZIER, HERMITE keys) are sampled into cubic Hermite keys where the pose bends
//!   ([`crate::anim::hermite_sampling`], as FBX's): about a key for each of the file's, where
//!   halving the intervals between linear keys took tens;
//! - LINEAR angles driven one axis at a time, or more than half a turn in one step, are decomposed
//!   at their keys and slerped, with a key added halfway where that strays from the file (a turn
//!   about one axis slerps exactly; about two, it needs a few).

use glam::{Mat4, Vec3, Vec4};

use super::keys::{ElementKeys, Segment};
use super::scene::{compose, Element};
use crate::anim::hermite_sampling::{Pose, Sampling};
use crate::anim::{Channel, JointPose};

/// A sampled pose is within this of the file's curves: a translation within this share of the
/// scene's largest node offset, a rotation within this quaternion chord (about twice that in
/// radians), a scale within this share of its size.
pub(super) const TOLERANCE: f32 = 2e-5;
/// Samples are never closer than this (seconds): no display shows the difference.
const SHORTEST_INTERVAL: f64 = 2e-3;

/// A node's transform stack and the channels that drive it.
pub(super) struct Stack<'s, 'a, 'input> {
    pub(super) elements: &'s [Element<'a>],
    pub(super) members: &'s [&'s ElementKeys<'a, 'input>],
}

impl Stack<'_, '_, '_> {
    /// The node's matrix at `time`: the stack with each driven value replaced by its channel's.
    pub(super) fn evaluate(&self, time: f32) -> Mat4 {
        let mut elements = self.elements.to_vec();
        for channel in self.members {
            let Some(element) = elements.get_mut(channel.element) else { continue };
            match channel.member {
                Some(index) => {
                    let mut value = [0.0f32];
                    channel.sample(time, &mut value);
                    if let Some(slot) = element.values.get_mut(index) {
                        *slot = value[0];
                    }
                }
                None if element.values.len() == channel.curve.width => channel.sample(time, &mut element.values),
                None => {}
            }
        }
        compose(&elements)
    }

    /// Whether some channel is curved somewhere (its keys cannot stand for its path).
    pub(super) fn curved(&self) -> bool {
        self.members.iter().any(|channel| channel.curve.times.iter().any(|&time| channel.curved_after(time)))
    }

    /// Whether some channel has a Bézier (or Hermite) segment.
    pub(super) fn cubic(&self) -> bool {
        self.members.iter().any(|channel| channel.curve.segments.contains(&Segment::Bezier))
    }

    fn curved_after(&self, time: f32) -> bool {
        self.members.iter().any(|channel| channel.curved_after(time))
    }
}

/// The node's pose at a time, as the clip's three properties. A scale within [`UNIT_SCALE`] of 1 is
/// 1: a rotation composed in single precision decomposes into a scale a float or two off, and
/// that wobble is no motion to key.
fn pose(matrix: Mat4) -> Pose {
    let (scale, rotation, translation) = matrix.to_scale_rotation_translation();
    let scale =
        Vec3::select(scale.cmplt(Vec3::splat(1.0 + UNIT_SCALE)) & scale.cmpgt(Vec3::splat(1.0 - UNIT_SCALE)), Vec3::ONE, scale);
    [translation.extend(0.0), Vec4::from(rotation), scale.extend(0.0)]
}

/// See [`pose`].
const UNIT_SCALE: f32 = 1e-6;

/// Samples curved stacks into keys, from one budget for the whole file.
pub(super) struct Resampler {
    pub(super) sampling: Sampling,
}

impl Resampler {
    /// `translation_tolerance`: [`TOLERANCE`] times the scene's largest node offset. `budget`:
    /// samples it may add in all.
    pub(super) fn new(translation_tolerance: f32, budget: usize) -> Resampler {
        Resampler {
            sampling: Sampling {
                span: (0.0, 0.0),
                origin: 0.0,
                tolerance: [translation_tolerance, TOLERANCE, TOLERANCE],
                finest: SHORTEST_INTERVAL,
                slope_step: SHORTEST_INTERVAL,
                second_order: true,
                budget,
                exhausted: false,
            },
        }
    }

    /// The stack keyed at `times` (sorted) and where it bends between them, as cubic Hermite keys:
    /// its translation, rotation and scale channels (joint 0: the caller gives them theirs), times
    /// from 0.
    pub(super) fn cubic(&mut self, stack: &Stack, times: &[f32]) -> [Channel; 3] {
        let times: Vec<f64> = times.iter().map(|&time| f64::from(time)).collect();
        self.sampling.span = (times.first().copied().unwrap_or(0.0), times.last().copied().unwrap_or(0.0));
        self.sampling.channels(0, &|time: f64| pose(stack.evaluate(time as f32)), &times)
    }

    /// The stack's matrices at `times` and halfway between two where interpolating their
    /// decomposed keys strays from it (halving the interval while it does).
    pub(super) fn linear(&mut self, stack: &Stack, times: &[f32]) -> (Vec<f32>, Vec<Mat4>) {
        let mut out = (Vec::with_capacity(times.len()), Vec::with_capacity(times.len()));
        let mut previous: Option<(f32, Mat4)> = None;
        for &time in times {
            let matrix = stack.evaluate(time);
            if let Some((start, start_matrix)) = previous {
                if stack.curved_after(start) {
                    self.refine(stack, (start, start_matrix), (time, matrix), &mut out);
                }
            }
            out.0.push(time);
            out.1.push(matrix);
            previous = Some((time, matrix));
        }
        out
    }

    /// Pushes the keys strictly between `start` and `end` that keep the interpolation within
    /// tolerance of the stack, halving the interval while it strays.
    fn refine(&mut self, stack: &Stack, start: (f32, Mat4), end: (f32, Mat4), out: &mut (Vec<f32>, Vec<Mat4>)) {
        let middle = 0.5 * (start.0 + end.0);
        if f64::from(end.0 - start.0) < SHORTEST_INTERVAL || middle <= start.0 || middle >= end.0 {
            return;
        }
        let (from, to) = (decomposed(start.1), decomposed(end.1));
        let strays = [0.25f32, 0.5, 0.75].into_iter().any(|fraction| {
            let exact = stack.evaluate(start.0 + (end.0 - start.0) * fraction);
            !self.close(exact, JointPose::interpolate(from, to, fraction).to_mat4())
        });
        if !strays {
            return;
        }
        if self.sampling.budget == 0 {
            self.sampling.exhausted = true;
            return;
        }
        self.sampling.budget -= 1;
        let halfway = (middle, stack.evaluate(middle));
        self.refine(stack, start, halfway, out);
        out.0.push(halfway.0);
        out.1.push(halfway.1);
        self.refine(stack, halfway, end, out);
    }

    fn close(&self, exact: Mat4, interpolated: Mat4) -> bool {
        let columns_close = (0..3).all(|column| {
            let (a, b) = (exact.col(column).truncate(), interpolated.col(column).truncate());
            (a - b).abs().max_element() <= TOLERANCE * a.length().max(1.0)
        });
        columns_close && (exact.w_axis - interpolated.w_axis).truncate().abs().max_element() <= self.sampling.tolerance[0]
    }
}

/// A key as the clip will interpolate it: translation, rotation, scale.
fn decomposed(matrix: Mat4) -> JointPose {
    let (scale, rotation, translation) = matrix.to_scale_rotation_translation();
    JointPose { rotation, translation, scale }
}
