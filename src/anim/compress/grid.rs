//! When a compressed clip's samples are: the grid the encoder samples the raw channels on, and
//! how far interpolating those samples departs from the raw curves between them.

use glam::Vec4;
use rayon::prelude::*;

use super::{interpolate, pose_error, set_property, Precision};
use crate::anim::{Channel, JointPose, KeyTimes, Skeleton};

/// The densest sampling chosen for uneven or cubic keys (twice the 120 Hz of motion capture).
const MAX_SAMPLE_RATE: f32 = 240.0;
/// The most joints × samples compressed: the encoder composes the skeleton at every sample a few
/// times, so its time follows this product (about 4 s at the limit on one core). An hour of 120 Hz
/// motion capture on 100 joints is 43 million.
const MAX_JOINT_SAMPLES: u64 = 50_000_000;

/// The evenly spaced sample times, how far interpolating raw samples departs from the raw curves
/// between them (model units, at the shell), and whether the samples are the keys (then nothing
/// departs).
pub(super) fn sample_grid(
    skeleton: &Skeleton,
    channels: &[&Channel],
    precision: &Precision,
) -> Result<(KeyTimes, f32, bool), String> {
    let keyed: Vec<&&Channel> = channels.iter().filter(|channel| channel.times.count() > 1).collect();
    if keyed.is_empty() {
        return Ok((KeyTimes::Uniform { start: 0.0, step: 1.0, count: 1 }, 0.0, true));
    }
    let first_time = |channel: &Channel| channel.times.time(0);
    let last_time = |channel: &Channel| {
        let last = channel.times.time(channel.times.count() - 1);
        match channel.times {
            KeyTimes::Uniform { step, .. } if channel.wraps => last + step,
            _ => last,
        }
    };
    let start = keyed.iter().map(|channel| first_time(channel)).fold(f32::INFINITY, f32::min);
    let end = keyed.iter().map(|channel| last_time(channel)).fold(f32::NEG_INFINITY, f32::max);
    let max_keys = keyed.iter().map(|channel| channel.times.count()).max().unwrap_or(1);
    let cap = 16 * max_keys + 1024;
    if !(start.is_finite() && end.is_finite() && end > start) {
        return Err("kept as keys: its key times span no time".to_string());
    }
    let densest = keyed.iter().map(|channel| smallest_interval(&channel.times)).fold(f32::INFINITY, f32::min);
    let grid = common_grid(&keyed, start, densest);
    let mut step = grid.map_or_else(|| 1.0 / (1.0 / densest).clamp(1.0, MAX_SAMPLE_RATE), |(step, _)| step);
    loop {
        let count = ((end - start) / step - 1e-3).ceil().max(0.0) as usize + 1;
        if count > cap {
            return Err(format!("kept as keys: it would take {count} samples, more than its keys justify"));
        }
        if (count as u64).saturating_mul(skeleton.len() as u64) > MAX_JOINT_SAMPLES {
            return Err(format!(
                "kept as keys: {} joints × {count} samples is past the {MAX_JOINT_SAMPLES} joint-samples vkskin compresses \
                 (the skeleton is composed at every sample)",
                skeleton.len()
            ));
        }
        let times = KeyTimes::Uniform { start, step, count };
        if grid.is_some_and(|(_, exact)| exact) {
            // The samples are the keys and lie on the keys' lines between them: nothing to measure.
            return Ok((times, 0.0, true));
        }
        let error = resample_error(skeleton, channels, &times, precision, precision.error / 2.0);
        if error <= precision.error / 2.0 {
            return Ok((times, error, false));
        }
        if step <= 1.0 / MAX_SAMPLE_RATE * 1.0001 || 2 * count > cap {
            return Err(format!(
                "kept as keys: between its keys the curves depart from {:.0} samples a second by {:.4} cm on a 1.8 m figure",
                1.0 / step,
                precision.as_reference_centimetres(error)
            ));
        }
        step /= 2.0;
    }
}

/// A raw channel's value at `time`; where a looping channel (MD5) has run back to its first key,
/// at the end of its loop, the first key's value (the value the loop reaches there; the channel
/// itself holds its last key from that instant on, which no clip time reaches).
pub(super) fn raw_value(channel: &Channel, time: f32) -> Vec4 {
    if let (true, KeyTimes::Uniform { start, step, count }) = (channel.wraps, &channel.times) {
        if time >= start + *count as f32 * step - step * 1e-4 {
            return channel.key_value(0);
        }
    }
    channel.sample(time)
}

/// The step of the one grid from `start` that every linear channel's keys lie on (evenly spaced
/// keys, or listed ones with frames left out), if there is one. Listed f32 times drift from their
/// grid by a few units in the last place, so the step is refined from the farthest key and a key
/// may sit a hundredth of a step off it; true where every key sits on it (within 1e-4 of a step),
/// so that the samples are the keys and need no check between them.
fn common_grid(keyed: &[&&Channel], start: f32, densest: f32) -> Option<(f32, bool)> {
    if !densest.is_finite() || keyed.iter().any(|channel| channel.interpolation != crate::anim::Interpolation::Linear) {
        return None;
    }
    let times = || {
        keyed.iter().flat_map(|channel| match &channel.times {
            KeyTimes::Uniform { start, step, count } => vec![*start, start + step, start + (*count - 1) as f32 * step],
            KeyTimes::Listed(times) => times.clone(),
        })
    };
    let last = times().fold(start, f32::max);
    let intervals = ((last - start) / densest).round();
    let step = if intervals >= 1.0 { (last - start) / intervals } else { densest };
    let off_grid = |time: f32| {
        let position = (time - start) / step;
        (position - position.round()).abs()
    };
    times().all(|time| off_grid(time) <= 1e-2).then_some((step, times().all(|time| off_grid(time) <= 1e-4)))
}

fn smallest_interval(times: &KeyTimes) -> f32 {
    match times {
        KeyTimes::Uniform { step, .. } => *step,
        KeyTimes::Listed(times) => {
            times.windows(2).map(|pair| pair[1] - pair[0]).filter(|&gap| gap > 0.0).fold(f32::INFINITY, f32::min)
        }
    }
}

/// The largest shell error, half way between samples, of the raw channels sampled at `times` and
/// interpolated as a compressed clip is, against the raw curves; it stops as soon as it passes
/// `enough`.
fn resample_error(skeleton: &Skeleton, channels: &[&Channel], times: &KeyTimes, precision: &Precision, enough: f32) -> f32 {
    // A channel of one key is the same raw and resampled: set once, then only the keyed ones change.
    let mut rest: Vec<JointPose> = skeleton.joints.iter().map(|joint| joint.rest).collect();
    for channel in channels.iter().filter(|channel| channel.times.count() <= 1) {
        set_property(&mut rest[channel.joint], channel.property, raw_value(channel, times.time(0)));
    }
    let keyed: Vec<&&Channel> = channels.iter().filter(|channel| channel.times.count() > 1).collect();
    let intervals = times.count().saturating_sub(1);
    // Runs of intervals in parallel, each stopping once it passes `enough`.
    const RUN: usize = 64;
    (0..intervals.div_ceil(RUN))
        .into_par_iter()
        .map(|run| {
            let (mut raw, mut resampled) = (rest.clone(), rest.clone());
            let mut scratch = [Vec::new(), Vec::new()];
            let mut worst = 0.0f32;
            let first = run * RUN;
            let mut before: Vec<Vec4> = keyed.iter().map(|channel| raw_value(channel, times.time(first))).collect();
            for sample in first..(first + RUN).min(intervals) {
                let (t0, t1) = (times.time(sample), times.time(sample + 1));
                let after: Vec<Vec4> = keyed.iter().map(|channel| raw_value(channel, t1)).collect();
                let time = 0.5 * (t0 + t1);
                for (index, channel) in keyed.iter().enumerate() {
                    set_property(&mut raw[channel.joint], channel.property, raw_value(channel, time));
                    let between = interpolate(channel.property, before[index], after[index], 0.5);
                    set_property(&mut resampled[channel.joint], channel.property, between);
                }
                worst = worst.max(pose_error(skeleton, &raw, &resampled, precision, &mut scratch));
                if worst > enough {
                    // Too far already: a denser grid is needed, and the rest of this one is not.
                    break;
                }
                before = after;
            }
            worst
        })
        .reduce(|| 0.0, f32::max)
}
