//! Step 4 of compression (see `encode.rs`): the clip, decoded as the palette pass decodes it,
//! measured against the raw curves between its samples, where the allocation did not look. Kept
//! apart from the allocation because it checks that step's result rather than taking part in it.

use rayon::prelude::*;

use super::encode::Context;
use super::grid::raw_value_after;
use super::{arc_probes, interpolate, pose_error, set_property, CompressedAnimation, SEGMENT_SAMPLES};
use crate::anim::{Channel, Property};

impl Context<'_> {
    /// Each segment's largest shell error, compressed against raw, between its samples: at the
    /// quarters against the raw channels where they were resampled (`resampled`), and where a
    /// rotation turns past half a radian at probes a quarter radian apart (raw there is the samples
    /// interpolated when they are the keys).
    pub(super) fn errors_between(&self, channels: &[&Channel], compressed: &CompressedAnimation, resampled: bool) -> Vec<f32> {
        let skeleton = self.skeleton;
        let times = &compressed.times;
        let count = times.count();
        let base: &[f32] = &[0.25, 0.75];
        let probes = |sample: usize| {
            let rotations = self.moving.iter().filter(|track| track.property == Property::Rotation);
            let arc = arc_probes(rotations.map(|track| (track.samples[sample], track.samples[sample + 1])));
            // A sample removed from a track is decoded from its stored neighbours, quantized: at
            // the end of a segment one of them is the next segment's, which the allocation took
            // as sampled.
            let removed = self.moving.iter().any(|track| !track.stored[sample]);
            let mut probes: Vec<f32> = if removed { vec![0.0] } else { Vec::new() };
            probes.extend(match arc.is_empty() {
                // Where the samples are the keys and the arcs are narrow, the error between two
                // samples is the blend of the errors at them (which `allocate` measured), give or
                // take what the 3 % margin holds.
                true if !resampled => Vec::new(),
                true => base.to_vec(),
                false => arc,
            });
            probes
        };
        (0..count.div_ceil(SEGMENT_SAMPLES))
            .into_par_iter()
            .map(|segment| {
                let (mut raw, mut decoded) = (self.base.clone(), self.base.clone());
                // The times rise through the segment: each channel's key is found from the last.
                let mut hints = vec![0usize; channels.len()];
                let mut scratch = [Vec::new(), Vec::new()];
                let mut worst = 0.0f32;
                for sample in segment * SEGMENT_SAMPLES..((segment + 1) * SEGMENT_SAMPLES).min(count.saturating_sub(1)) {
                    for fraction in probes(sample) {
                        let time = times.time(sample) + fraction * (times.time(sample + 1) - times.time(sample));
                        if resampled {
                            for (channel, hint) in channels.iter().zip(&mut hints) {
                                set_property(&mut raw[channel.joint], channel.property, raw_value_after(channel, time, hint));
                            }
                        } else {
                            for track in &self.moving {
                                let value =
                                    interpolate(track.property, track.samples[sample], track.samples[sample + 1], fraction);
                                set_property(&mut raw[track.joint], track.property, value);
                            }
                        }
                        compressed.sample(skeleton, time, &mut decoded);
                        worst = worst.max(pose_error(skeleton, &raw, &decoded, &self.precision, &mut scratch));
                    }
                }
                worst
            })
            .collect()
    }
}
