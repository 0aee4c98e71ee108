//! Resampling a node's animated transform stack into keys vkskin's clips interpolate: evaluated at
//! each key time and decomposed, with keys added where the decomposed pair interpolated strays from
//! the file's curves (see `animation.rs`).

use glam::Mat4;

use super::keys::ElementKeys;
use super::scene::{compose, Element};
use crate::anim::JointPose;

/// Resampling stops where the interpolated keys are this close to the file's curves: per entry of
/// the rotation-and-scale columns (relative to the column's length, at least 1), and in
/// translation relative to the scene's largest node offset.
pub(super) const TOLERANCE: f32 = 2e-5;
/// Key intervals this short (seconds) are not halved further: no display shows the difference.
const SHORTEST_INTERVAL: f32 = 2e-3;

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

    fn curved_after(&self, time: f32) -> bool {
        self.members.iter().any(|channel| channel.curved_after(time))
    }
}

/// A key as the clip will interpolate it: translation, rotation, scale.
fn decomposed(matrix: Mat4) -> JointPose {
    let (scale, rotation, translation) = matrix.to_scale_rotation_translation();
    JointPose { rotation, translation, scale }
}

/// Adds keys where interpolating the decomposed keys strays from the file's curves.
pub(super) struct Resampler {
    pub(super) translation_tolerance: f32,
    /// Keys it may still add.
    pub(super) budget: usize,
    /// Whether the budget ran out.
    pub(super) exhausted: bool,
}

impl Resampler {
    pub(super) fn resample(&mut self, stack: &Stack, times: &[f32]) -> (Vec<f32>, Vec<Mat4>) {
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
        if end.0 - start.0 < SHORTEST_INTERVAL || middle <= start.0 || middle >= end.0 {
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
        if self.budget == 0 {
            self.exhausted = true;
            return;
        }
        self.budget -= 1;
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
        columns_close && (exact.w_axis - interpolated.w_axis).truncate().abs().max_element() <= self.translation_tolerance
    }
}
