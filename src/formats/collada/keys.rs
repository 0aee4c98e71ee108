//! A channel's keys as read from the file: each key's segment kind and Bézier controls (a
//! sampler's `Curve`), and the transform element (or value) they drive (`ElementKeys`), sampled at
//! any time.

use std::rc::Rc;

use roxmltree::Node;

use crate::anim::curve;

/// How a channel goes from one key to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Segment {
    Step,
    Linear,
    /// BEZIER, or HERMITE turned into Bézier controls.
    Bezier,
}

/// A key's Bézier control points (time, value), one a value: the one before the key (ending the
/// segment that arrives) and the one after it (starting the segment that leaves).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Controls {
    pub(super) before: [f32; 2],
    pub(super) after: [f32; 2],
}

/// A sampler's keys, read for one width (a whole element's values, or one of them).
pub(super) struct Curve {
    pub(super) times: Vec<f32>,
    /// `width` values a key.
    pub(super) values: Vec<f32>,
    pub(super) width: usize,
    /// One a key: how the values go on to the next key.
    pub(super) segments: Vec<Segment>,
    /// `width` a key where any segment is a Bézier; empty otherwise.
    pub(super) controls: Vec<Controls>,
    /// The bytes of its keys in the file (times, values and tangents, as f32).
    pub(super) file_bytes: usize,
}

/// One channel's keys on one transform element (or one value of it).
pub(super) struct ElementKeys<'a, 'input> {
    pub(super) node: usize,
    pub(super) element: usize,
    /// The value it drives within the element; None: all of them.
    pub(super) member: Option<usize>,
    /// Shared by the channels that read one sampler.
    pub(super) curve: Rc<Curve>,
    /// Drives a whole `<matrix>`, whose LINEAR keys are decomposed, not followed entry by entry.
    pub(super) whole_matrix: bool,
    pub(super) animation: Node<'a, 'input>,
}

impl ElementKeys<'_, '_> {
    /// The channel's values at `time`: held before the first key and after the last.
    pub(super) fn sample(&self, time: f32, out: &mut [f32]) {
        let curve = &*self.curve;
        let width = curve.width;
        let value = |key: usize| &curve.values[key * width..(key + 1) * width];
        let Some(at) = curve::bracket(&curve.times, |&key| key, time) else { return };
        if at.key == at.next {
            out.copy_from_slice(value(at.key));
            return;
        }
        let (key, next) = (at.key, at.next);
        let (t0, t1) = (curve.times[key], curve.times[next]);
        match curve.segments[key] {
            Segment::Step => out.copy_from_slice(value(key)),
            Segment::Linear => {
                for ((out, a), b) in out.iter_mut().zip(value(key)).zip(value(next)) {
                    *out = a + (b - a) * at.fraction;
                }
            }
            Segment::Bezier => {
                for (component, out) in out.iter_mut().enumerate() {
                    let after = curve.controls[key * width + component].after;
                    let before = curve.controls[next * width + component].before;
                    *out = curve::bezier_at_time(
                        [t0, after[0], before[0], t1],
                        [value(key)[component], after[1], before[1], value(next)[component]],
                        time,
                    );
                }
            }
        }
    }

    /// Whether, from `time` to the next key, the decomposed keys may stray from this channel's
    /// curve (and the interval is checked).
    pub(super) fn curved_after(&self, time: f32) -> bool {
        match curve::bracket(&self.curve.times, |&key| key, time) {
            Some(at) if at.key != at.next => match self.curve.segments[at.key] {
                Segment::Step => false,
                Segment::Linear => !self.whole_matrix,
                Segment::Bezier => true,
            },
            _ => false,
        }
    }

    pub(super) fn is_step(&self) -> bool {
        self.curve.segments.iter().all(|segment| *segment == Segment::Step)
    }
}
