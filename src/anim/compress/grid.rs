//! When a compressed clip's samples are: the grid the encoder samples the raw channels on, and
//! how far interpolating those samples departs from the raw curves between them. An even grid
//! where one follows the curves; otherwise uneven times ([`uneven_times`]): every key time, a
//! jump twice, and more only where the curves bend between them.

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

/// The most samples `skeleton` is composed at ([`MAX_JOINT_SAMPLES`]).
fn most_composed(skeleton: &Skeleton) -> usize {
    (MAX_JOINT_SAMPLES / skeleton.len().max(1) as u64) as usize
}

/// The sample times, how far interpolating raw samples departs from the raw curves between them
/// (model units, at the shell), and whether the samples are the keys (then nothing departs): the
/// keys' own grid where every channel is linear on one; otherwise the fewer of an even grid
/// ([`even_times`]) and uneven times ([`uneven_times`]), the even grid where they tie.
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
    // Samples past this are more than the keys justify on an even grid, and the uneven one's
    // refinement looks at up to REFINED_PER_SAMPLE times as many (a file's time stays in
    // proportion to its keys); and the skeleton is composed at every sample a few times, so
    // joints × samples stays under MAX_JOINT_SAMPLES.
    let cap = (16 * max_keys + 1024).min(most_composed(skeleton));
    if !(start.is_finite() && end.is_finite() && end > start) {
        return Err("kept as keys: its key times span no time".to_string());
    }
    let densest = keyed.iter().map(|channel| smallest_interval(&channel.times)).fold(f32::INFINITY, f32::min);
    let grid = common_grid(&keyed, start, densest);
    if let Some((step, true)) = grid {
        // The samples are the keys and lie on the keys' lines between them: nothing to measure;
        // unless a rotation turns half round between two keys, or past the cap (a few keys on a
        // fine grid: two a float apart), when they are sampled as any other curve.
        let narrow = keyed.iter().all(|channel| {
            let keys: Vec<Vec4> = (0..channel.times.count()).map(|key| channel.key_value(key).normalize_or_zero()).collect();
            !keys.windows(2).any(|pair| too_wide(&[**channel], &pair[..1], &pair[1..]))
        });
        let count = ((end - start) / step - 1e-3).ceil().max(0.0) as usize + 1;
        if narrow && count <= cap {
            return Ok((KeyTimes::Uniform { start, step, count }, 0.0, true));
        }
    }
    let first_step = grid.map_or_else(|| 1.0 / (1.0 / densest).clamp(1.0, MAX_SAMPLE_RATE), |(step, _)| step);
    let even = even_times(skeleton, channels, precision, (start, end, first_step), cap);
    let uneven = uneven_times(skeleton, channels, precision, (start, end), cap);
    match (even, uneven) {
        (Ok(even), Ok(uneven)) if uneven.0.count() < even.0.count() => Ok((uneven.0, uneven.1, false)),
        (Ok(even), _) => Ok((even.0, even.1, false)),
        (Err(_), Ok(uneven)) => Ok((uneven.0, uneven.1, false)),
        (Err(even), Err(uneven)) => Err(format!("kept as keys: {even}, and {uneven}")),
    }
}

/// Evenly spaced times from `first_step`, halved (down to 240 Hz) while interpolating the
/// samples departs from the raw curves between them (half way, at the quarters) by more than half
/// the bound.
fn even_times(
    skeleton: &Skeleton,
    channels: &[&Channel],
    precision: &Precision,
    (start, end, mut step): (f32, f32, f32),
    cap: usize,
) -> Result<(KeyTimes, f32), String> {
    loop {
        let count = ((end - start) / step - 1e-3).ceil().max(0.0) as usize + 1;
        if count > cap {
            return Err(format!("evenly it would take {count} samples, more than its keys justify or vkskin composes"));
        }
        let times = KeyTimes::Uniform { start, step, count };
        let error = resample_error(skeleton, channels, &times, precision, precision.error / 2.0);
        if error <= precision.error / 2.0 {
            return Ok((times, error));
        }
        if step <= 1.0 / MAX_SAMPLE_RATE * 1.0001 || 2 * count > cap {
            return Err(format!(
                "between its keys the curves depart from {:.0} samples a second by {:.4} cm on a 1.8 m figure",
                1.0 / step,
                precision.as_reference_centimetres(error)
            ));
        }
        step /= 2.0;
    }
}

/// The narrowest interval a bend is sampled at (seconds): 32 times 240 Hz. Below it, the
/// refinement follows a step ([`step_width`]) for [`STEP_SPLITS`] halvings an interval between
/// keys at most: a few steps, not a curve that never flattens.
const FINEST_INTERVAL: f32 = 1.0 / 7_680.0;

/// Halvings under [`FINEST_INTERVAL`] an interval between keys may take: from 0.13 ms down to a
/// float takes about 5 a minute into a clip and 10 a second in, so a handful of steps between two
/// keys (GLSceneWoman4's clip needs more than 48).
const STEP_SPLITS: usize = 200;

/// The narrowest interval the refinement halves (seconds): a unit in the last place of `time`.
/// Between a file's keys a curve is smooth, so halving soon brings a bend within the bound; where
/// it does not, the curve steps between keys (a Milkshape or FBX curve's evaluation jumping by a
/// hair), and the step's two sides become samples one float apart, a jump the keys did not mark.
fn step_width(time: f32) -> f32 {
    let time = time.abs();
    f32::from_bits(time.to_bits() + 1) - time
}

/// How many times the samples the keys justify (`cap`) an uneven grid's refinement may look at.
/// What thinning keeps of them is compressed, and the clip's bytes decide whether it keeps its keys
/// (the ninja's 10 s of Milkshape curves: 4,554 samples, twice its keys' bytes compressed).
const REFINED_PER_SAMPLE: usize = 4;

/// A sample's time and the keyed channels' values there (a jump's first sample: the values just
/// before it).
type Entry = (f32, Vec<Vec4>);

/// Uneven sample times that the curves' linear interpolation follows within half the bound: every
/// key time of every keyed channel (where a curve may kink), twice where a channel jumps (a step's
/// keys, two keys at one time: the values before, then at it), and between two times, halved
/// where the pose at its probes departs by more (down to [`FINEST_INTERVAL`], then a step's one
/// branch down to [`step_width`]). So a kink
/// or a jump is a sample, and a short bend (an authoring tool's Bézier handle pulled far) is
/// sampled densely only where it bends. The palette pass finds a time among them by a binary search,
/// as it does a file's listed keys. Returns the times and the largest departure.
fn uneven_times(
    skeleton: &Skeleton,
    channels: &[&Channel],
    precision: &Precision,
    (start, end): (f32, f32),
    cap: usize,
) -> Result<(KeyTimes, f32), String> {
    let keyed = keyed(channels);
    let mut times: Vec<f32> = keyed
        .iter()
        .flat_map(|channel| (0..channel.times.count()).map(|key| channel.times.time(key)))
        .chain([start, end])
        .filter(|&time| time.is_finite() && (start..=end).contains(&time))
        .collect();
    times.sort_by(f32::total_cmp);
    times.dedup();
    if times.len() > cap {
        return Err(format!("its {} key times are more than its keys justify", times.len()));
    }
    // Where a channel jumps: each key of a step after the first, and a time two keys share.
    let mut jumps: Vec<f32> = Vec::new();
    for channel in &keyed {
        let count = channel.times.count();
        let key_times = (0..count).map(|key| channel.times.time(key));
        match channel.interpolation {
            crate::anim::Interpolation::Step => jumps.extend(key_times.skip(1)),
            _ => {
                let listed: Vec<f32> = key_times.collect();
                jumps.extend(listed.windows(2).filter(|pair| pair[0] == pair[1]).map(|pair| pair[0]));
            }
        }
    }
    jumps.sort_by(f32::total_cmp);
    jumps.dedup();
    let is_jump = |time: f32| time > start && jumps.binary_search_by(|jump| jump.total_cmp(&time)).is_ok();
    let rest = rest_with_constants(skeleton, channels, start);
    let entry = |time: f32, before: bool| -> Entry { (time, values_at(&keyed, if before { just_before(time) } else { time })) };
    let entries: Vec<Entry> = times
        .iter()
        .flat_map(|&time| match is_jump(time) {
            true => vec![entry(time, true), entry(time, false)],
            false => vec![entry(time, false)],
        })
        .collect();
    let enough = precision.error / 2.0;
    // Each interval between two entries, refined on its own (in parallel): the entries it adds.
    let refined: Vec<Result<(Vec<Entry>, f32), f32>> = entries
        .par_windows(2)
        .map(|pair| {
            let mut poses = Departure::new(skeleton, precision, &keyed, &rest);
            let mut departure = |a: &Entry, b: &Entry| -> f32 {
                // Half way and the quarters first: an interval to halve is seldom measured further.
                // Each probe at the fraction its rounded time is at (a float or two apart, the
                // probes fall on the ends).
                let mut worst = 0.0f32;
                for time in probe_fractions(&keyed, &a.1, &b.1).map(|fraction| a.0 + fraction * (b.0 - a.0)) {
                    worst = worst.max(poses.from(&values_at(&keyed, time), &a.1, &b.1, (time - a.0) / (b.0 - a.0)));
                    if worst > enough {
                        break;
                    }
                }
                worst
            };
            let mut added = Vec::new();
            // Depth first, left to right: `pending` holds the right ends still to reach.
            let mut left = pair[0].clone();
            let mut pending = vec![pair[1].clone()];
            let mut worst = 0.0f32;
            // Intervals under FINEST_INTERVAL halved, STEP_SPLITS at most: a few steps' branches.
            let mut step_splits = 0;
            while let Some(right) = pending.pop() {
                let error = if right.0 > left.0 { departure(&left, &right) } else { 0.0 };
                let fine = right.0 - left.0 <= FINEST_INTERVAL;
                step_splits += usize::from(error > enough && fine);
                if error <= enough {
                    worst = worst.max(error);
                    if !pending.is_empty() {
                        added.push(right.clone());
                    }
                    left = right;
                } else if right.0 - left.0 <= step_width(right.0)
                    || step_splits > STEP_SPLITS
                    || added.len() + pending.len() > REFINED_PER_SAMPLE * cap
                {
                    return Err(error);
                } else {
                    let middle = entry(0.5 * (left.0 + right.0), false);
                    pending.push(right);
                    pending.push(middle);
                }
            }
            Ok((added, worst))
        })
        .collect();
    let mut all: Vec<Entry> = Vec::with_capacity(entries.len());
    for (index, result) in refined.into_iter().enumerate() {
        all.push(entries[index].clone());
        match result {
            Ok((added, _)) => all.extend(added),
            Err(error) => {
                return Err(match error.is_finite() {
                    true => {
                        format!("at uneven times {:.4} cm even between adjacent times", precision.as_reference_centimetres(error))
                    }
                    false => "at uneven times a rotation still turns half round between two samples".to_string(),
                })
            }
        }
        // Refined, before thinning, up to REFINED_PER_SAMPLE times what the keys justify.
        if all.len() > REFINED_PER_SAMPLE * cap {
            return Err(format!(
                "at uneven times it would look at more than {} samples, more than its keys justify",
                REFINED_PER_SAMPLE * cap
            ));
        }
    }
    all.extend(entries.last().cloned());
    let (kept, worst) = thin(&all, &keyed, &rest, skeleton, precision);
    if kept.len() > most_composed(skeleton) {
        return Err(format!("at uneven times it would take {} samples, more than vkskin composes", kept.len()));
    }
    Ok((KeyTimes::Listed(kept.iter().map(|&index| all[index].0).collect()), worst))
}

/// The most samples one interval of the thinned times spans (its check costs their square).
const LONGEST_CHORD: usize = 48;

/// Which of `all` (every key time and what refinement added, in order) to keep: from each kept
/// sample, the farthest later one whose interpolation stays within half the bound of every sample
/// it passes over and of the raw curves half way between them (where the refinement looked), a
/// jump's two samples always kept. Returns the indices kept and the largest departure.
fn thin(all: &[Entry], keyed: &[&Channel], rest: &[JointPose], skeleton: &Skeleton, precision: &Precision) -> (Vec<usize>, f32) {
    let enough = precision.error / 2.0;
    let mut poses = Departure::new(skeleton, precision, keyed, rest);
    // Half way between two neighbours: the raw values there, once.
    let halves: Vec<Entry> = all
        .par_windows(2)
        .map(|pair| {
            let time = 0.5 * (pair[0].0 + pair[1].0);
            (time, values_at(keyed, time))
        })
        .collect();
    let mut departure = |from: usize, to: usize| -> f32 {
        let (a, b) = (&all[from], &all[to]);
        // Each sample passed over, half way between two neighbours (not between a jump's two), and
        // the chord's own quarters (where the clip is measured once compressed).
        let quarters: Vec<Entry> = match b.0 > a.0 && to > from + 1 {
            true => probe_fractions(keyed, &a.1, &b.1)
                .map(|fraction| {
                    let time = a.0 + fraction * (b.0 - a.0);
                    (time, values_at(keyed, time))
                })
                .collect(),
            false => Vec::new(),
        };
        let probes = (from..to)
            .flat_map(|index| {
                [(index > from).then_some(&all[index]), (all[index].0 < all[index + 1].0).then_some(&halves[index])]
            })
            .flatten()
            .chain(&quarters);
        let mut worst = 0.0f32;
        for (time, values) in probes {
            let fraction = if b.0 > a.0 { (time - a.0) / (b.0 - a.0) } else { 0.0 };
            worst = worst.max(poses.from(values, &a.1, &b.1, fraction));
            if worst > enough {
                break;
            }
        }
        worst
    };
    let last = all.len() - 1;
    let mut kept = vec![0];
    let mut worst = 0.0f32;
    let mut from = 0;
    while from < last {
        let mut to = from + 1;
        let mut error = departure(from, to);
        // A jump's first sample (the next shares its time) is kept, and so is the second.
        let jump = |index: usize| index < last && all[index].0 == all[index + 1].0;
        while !jump(from) && !jump(to) && to < last && to - from < LONGEST_CHORD {
            let further = departure(from, to + 1);
            if further > enough {
                break;
            }
            (to, error) = (to + 1, further);
        }
        worst = worst.max(error);
        kept.push(to);
        from = to;
    }
    (kept, worst)
}

/// The float just before `time` (a value there is the one before a jump at `time`).
fn just_before(time: f32) -> f32 {
    match time {
        time if time > 0.0 => f32::from_bits(time.to_bits() - 1),
        time if time < 0.0 => f32::from_bits(time.to_bits() + 1),
        _ => -f32::from_bits(1),
    }
}

/// When sample `sample` of `times` is taken: its time, or where the next sample shares it (a
/// jump), just before it.
pub(super) fn sample_time(times: &KeyTimes, sample: usize) -> f32 {
    let time = times.time(sample);
    match times {
        KeyTimes::Listed(list) if list.get(sample + 1) == Some(&time) => just_before(time),
        _ => time,
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

/// [`raw_value`] at a time no earlier than the last one asked of this channel with `hint`: the key
/// found from there in a step or two rather than by a binary search (the same key: `locate_from`).
pub(super) fn raw_value_after(channel: &Channel, time: f32, hint: &mut usize) -> Vec4 {
    if let (true, KeyTimes::Uniform { .. }) = (channel.wraps, &channel.times) {
        return raw_value(channel, time);
    }
    let at = channel.locate_from(*hint, time);
    *hint = at.key;
    channel.value_at(at)
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

/// Where the departure between two samples (values `a`, `b` of `keyed`) is measured: half way,
/// at the quarters (a symmetric cubic passes through the chord's middle and strays either side:
/// InterpolationTest's CubicSpline translation) and, over a wide arc, where the final measure
/// probes it ([`super::arc_probes`]).
fn probe_fractions<'a>(keyed: &'a [&Channel], a: &'a [Vec4], b: &'a [Vec4]) -> impl Iterator<Item = f32> + 'a {
    let rotations = keyed.iter().zip(a.iter().zip(b)).filter(|(channel, _)| channel.property == crate::anim::Property::Rotation);
    let arc = super::arc_probes(rotations.map(|(_, (a, b))| (*a, *b)));
    [0.5, 0.25, 0.75].into_iter().chain(arc)
}

/// Two samples of a rotation may not turn it by half a turn, their quaternions' dot within this
/// of 0: which way the shorter arc between them goes is then the file's rounding, and the
/// decoder's quantized ends may take the other (Khronos's AnimatedCube turns 180° a key, its
/// quaternions' dot -4.4e-8; no bit width holds it). Such a turn is sampled more densely. A dot
/// of a few 1e-5 (a glitch in CMU's 131_02, a finger half turned in a frame) is left to the final
/// measure, which holds it.
const WIDEST_TURN_DOT: f32 = 1e-6;

/// Whether a rotation among `keyed` turns past [`WIDEST_TURN_DOT`] from its value in `a` to `b`.
fn too_wide(keyed: &[&Channel], a: &[Vec4], b: &[Vec4]) -> bool {
    keyed
        .iter()
        .zip(a.iter().zip(b))
        .any(|(channel, (a, b))| channel.property == crate::anim::Property::Rotation && a.dot(*b).abs() < WIDEST_TURN_DOT)
}

/// The channels of more than one key (the others are the same raw and resampled).
fn keyed<'a>(channels: &[&'a Channel]) -> Vec<&'a Channel> {
    channels.iter().copied().filter(|channel| channel.times.count() > 1).collect()
}

/// The rest pose with the channels of one key set (at `time`): only the keyed channels change.
fn rest_with_constants(skeleton: &Skeleton, channels: &[&Channel], time: f32) -> Vec<JointPose> {
    let mut rest: Vec<JointPose> = skeleton.joints.iter().map(|joint| joint.rest).collect();
    for channel in channels.iter().filter(|channel| channel.times.count() <= 1) {
        set_property(&mut rest[channel.joint], channel.property, raw_value(channel, time));
    }
    rest
}

/// The keyed channels' raw values at `time`.
fn values_at(keyed: &[&Channel], time: f32) -> Vec<Vec4> {
    keyed.iter().map(|channel| raw_value(channel, time)).collect()
}

/// Two poses over the same rest pose, to hold the keyed channels' raw values against values
/// interpolated between two samples (the shell error between them, [`pose_error`]).
struct Departure<'a> {
    skeleton: &'a Skeleton,
    precision: &'a Precision,
    keyed: &'a [&'a Channel],
    raw: Vec<JointPose>,
    resampled: Vec<JointPose>,
    scratch: [Vec<glam::Mat4>; 2],
}

impl<'a> Departure<'a> {
    fn new(skeleton: &'a Skeleton, precision: &'a Precision, keyed: &'a [&'a Channel], rest: &[JointPose]) -> Departure<'a> {
        Departure { skeleton, precision, keyed, raw: rest.to_vec(), resampled: rest.to_vec(), scratch: [Vec::new(), Vec::new()] }
    }

    /// How far the pose of the raw `values` departs from the one interpolated `fraction` of the way
    /// from the values `a` to `b`; unbounded where a rotation turns half round between them
    /// ([`WIDEST_TURN_DOT`]).
    fn from(&mut self, values: &[Vec4], a: &[Vec4], b: &[Vec4], fraction: f32) -> f32 {
        if too_wide(self.keyed, a, b) {
            return f32::INFINITY;
        }
        for (index, channel) in self.keyed.iter().enumerate() {
            set_property(&mut self.raw[channel.joint], channel.property, values[index]);
            set_property(
                &mut self.resampled[channel.joint],
                channel.property,
                interpolate(channel.property, a[index], b[index], fraction),
            );
        }
        pose_error(self.skeleton, &self.raw, &self.resampled, self.precision, &mut self.scratch)
    }
}

/// The largest shell error between samples ([`probe_fractions`]) of the raw channels sampled at
/// `times` and interpolated as a compressed clip is, against the raw curves; it stops as soon as
/// it passes `enough`.
fn resample_error(skeleton: &Skeleton, channels: &[&Channel], times: &KeyTimes, precision: &Precision, enough: f32) -> f32 {
    let rest = rest_with_constants(skeleton, channels, times.time(0));
    let keyed = keyed(channels);
    let intervals = times.count().saturating_sub(1);
    // Runs of intervals in parallel, each stopping once it passes `enough`.
    const RUN: usize = 64;
    (0..intervals.div_ceil(RUN))
        .into_par_iter()
        .map(|run| {
            let mut departure = Departure::new(skeleton, precision, &keyed, &rest);
            let mut worst = 0.0f32;
            let first = run * RUN;
            let mut before = values_at(&keyed, times.time(first));
            for sample in first..(first + RUN).min(intervals) {
                let (t0, t1) = (times.time(sample), times.time(sample + 1));
                let after = values_at(&keyed, t1);
                for fraction in probe_fractions(&keyed, &before, &after) {
                    let raw = values_at(&keyed, t0 + fraction * (t1 - t0));
                    worst = worst.max(departure.from(&raw, &before, &after, fraction));
                }
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
