//! Compressing an animation into the format of the parent module. The steps:
//!
//! 1. **A sample grid** (grid.rs). Where every channel is linear and its keys lie on one grid
//!    (evenly spaced, or listed with frames left out: BVH, ACL, MD5, most exports) the samples are
//!    the keys. Otherwise the densest key interval sets the rate, doubled (up to 240 Hz) while the
//!    samples, interpolated, depart from the raw curves half way between them by more than half the
//!    error bound.
//! 2. **Stripping.** A property that never moves is left at rest when it equals the rest pose and
//!    kept as one value otherwise.
//! 3. **Bits per segment** (encode/allocate.rs). Each track of each segment starts at the fewest
//!    bits whose own error, carried to the farthest virtual vertex it moves, stays under the target;
//!    then, while some joint's virtual vertices are off by more, the track on that joint's chain to
//!    the root that contributes most gets one bit more (ACL's approach, on its metric); past 24
//!    bits, the values as they are ([`super::RAW_BITS`], ACL's raw rate too). Segments are
//!    independent and compressed in parallel.
//! 4. **Measured, not assumed** (measure.rs). The allocation measures every sample; the clip is
//!    then decoded as the palette pass decodes it and compared with the raw curves between samples:
//!    at the quarters where they were resampled, at probes a quarter radian apart where a rotation
//!    turns past half a radian between two samples (slerp bends away from quantized ends there),
//!    and nowhere else where the samples are the keys (the error between is the blend of the errors
//!    at them). A segment over 97 % of the bound is redone with a tighter target.

use glam::{Mat4, Vec4};
use rayon::prelude::*;

mod allocate;

use allocate::reach_from;

use super::grid::{raw_value, sample_grid, sample_time};
use super::tracks::{canonical, same, BitWriter, Moving};
use super::{
    segment_record, set_property, CompressedAnimation, Precision, Track, TrackData, BLOCK_SEGMENTS, BLOCK_WORDS, HEADER_WORDS,
    MAX_BITS, SEGMENT_SAMPLES, SEGMENT_WORDS,
};
use crate::anim::{local_to_model, Animation, Channel, JointPose, Property, Skeleton};

/// The share of the bound a clip may reach at the times measured (samples, half way).
const ACCEPTED: f32 = 0.97;

/// Compresses `animation`'s joint channels (`skeleton`'s joints) within `precision`, or says why
/// the clip keeps its keys: more samples than its keys justify, or a bound no bit width reaches.
pub fn compress(skeleton: &Skeleton, animation: &Animation, precision: &Precision) -> Result<CompressedAnimation, String> {
    let channels: Vec<&Channel> = animation.channels.iter().filter(|channel| channel.joint < skeleton.len()).collect();
    let (times, resample_error, keys_are_samples) = sample_grid(skeleton, &channels, precision)?;
    let count = times.count();
    let mut base: Vec<JointPose> = skeleton.joints.iter().map(|joint| joint.rest).collect();
    let mut constants = Vec::new();
    let mut moving = Vec::new();
    // Every channel at every sample (a channel of one key: that key, once).
    let sampled: Vec<Vec<Vec4>> = channels
        .par_iter()
        .map(|channel| match channel.times.count() {
            0 | 1 => vec![canonical(channel.property, raw_value(channel, times.time(0)))],
            _ => (0..count).map(|sample| canonical(channel.property, raw_value(channel, sample_time(&times, sample)))).collect(),
        })
        .collect();
    for (channel, samples) in channels.iter().zip(sampled) {
        let first = samples[0];
        if samples.iter().all(|&value| same(channel.property, value, first)) {
            let rest = skeleton.joints[channel.joint].rest;
            let rest_value = match channel.property {
                Property::Translation => rest.translation.extend(0.0),
                Property::Rotation => canonical(Property::Rotation, Vec4::from(rest.rotation)),
                Property::Scale => rest.scale.extend(0.0),
            };
            if !same(channel.property, first, rest_value) {
                set_property(&mut base[channel.joint], channel.property, first);
                constants.push(Track { joint: channel.joint, property: channel.property, data: TrackData::Constant(first) });
            }
        } else {
            moving.push(Moving::new(channel.joint, channel.property, samples));
        }
    }
    let target = precision.error * ACCEPTED - resample_error;
    // Samples that interpolation rebuilds are removed first, each track within REMOVAL's share
    // of the target at the farthest vertex it moves; where the bits cannot then hold the bound,
    // every sample is stored.
    let thinned = {
        let reach = reach(skeleton, &base, &moving, precision);
        let mut thinned = moving.clone();
        for track in &mut thinned {
            let leverage = if track.property == Property::Translation { 1.0 } else { 2.0 * reach[track.joint] };
            track.remove_samples(REMOVAL * target / leverage);
        }
        thinned
    };
    let removed = thinned.iter().any(|track| track.stored.contains(&false));
    let encode = |moving: Vec<Moving>| {
        Context::new(skeleton, base.clone(), moving, precision.clone()).encode(
            &channels,
            &times,
            &constants,
            target,
            keys_are_samples,
        )
    };
    match encode(thinned) {
        // Where nothing was removed, every sample was stored already: nothing else to try.
        Err(_) if removed => encode(moving),
        result => result,
    }
}

/// The share of the error target a removed sample may take, at the farthest vertex its track moves.
const REMOVAL: f32 = 0.35;

/// Per joint, how far its farthest virtual vertex below it is (its shell, along the chain), at
/// the clip's first sample.
fn reach(skeleton: &Skeleton, base: &[JointPose], moving: &[Moving], precision: &Precision) -> Vec<f32> {
    let mut poses = base.to_vec();
    for track in moving {
        set_property(&mut poses[track.joint], track.property, track.samples[0]);
    }
    let mut models = vec![Mat4::IDENTITY; skeleton.len()];
    local_to_model(skeleton, &poses, Mat4::IDENTITY, &mut models);
    reach_from(skeleton, &models, precision)
}

impl Context<'_> {
    /// The clip's tracks with each segment's bits chosen (steps 3 and 4 of the module's header).
    fn encode(
        &mut self,
        channels: &[&Channel],
        times: &crate::anim::KeyTimes,
        constants: &[Track],
        target: f32,
        keys_are_samples: bool,
    ) -> Result<CompressedAnimation, String> {
        let precision = self.precision.clone();
        let count = times.count();
        let segment_count = count.div_ceil(SEGMENT_SAMPLES);
        let mut targets = vec![target; segment_count];
        let mut bits: Vec<Option<Vec<u32>>> = vec![None; segment_count];
        // Each segment's largest error at its samples (what `allocate` measured).
        let mut at_samples = vec![0.0f32; segment_count];
        for _round in 0..8 {
            let context = &*self;
            let chosen: Vec<Result<(Vec<u32>, f32), String>> = (0..segment_count)
                .into_par_iter()
                .map(|segment| match &bits[segment] {
                    Some(done) => Ok((done.clone(), at_samples[segment])),
                    None => context.allocate(segment, count, targets[segment]),
                })
                .collect();
            let mut restored = false;
            for (segment, result) in chosen.into_iter().enumerate() {
                match result {
                    Ok((widths, error)) => {
                        bits[segment] = Some(widths);
                        at_samples[segment] = error;
                    }
                    // The samples removed there left no room for quantization: stored again.
                    Err(_) if self.restore(segment, count) => restored = true,
                    Err(why) => return Err(why),
                }
            }
            if restored {
                continue;
            }
            let context = &*self;
            let tracks = context.tracks(&bits, count, constants);
            // Segment records hold 32-bit bit offsets.
            if tracks
                .iter()
                .any(|track| matches!(&track.data, TrackData::Packed(words) if words.len() as u64 * 32 > u64::from(u32::MAX)))
            {
                return Err("kept as keys: a track would pass 512 MiB".to_string());
            }
            let compressed = CompressedAnimation { times: times.clone(), tracks, precision: precision.clone(), max_error: 0.0 };
            let between = context.errors_between(channels, &compressed, !keys_are_samples);
            let errors: Vec<f32> = between.iter().zip(&at_samples).map(|(a, b)| a.max(*b)).collect();
            let worst = errors.iter().copied().fold(0.0, f32::max);
            // A margin for the times between the ones measured, where the error can run a little higher.
            let accepted = precision.error * ACCEPTED;
            if worst <= accepted {
                return Ok(CompressedAnimation { max_error: worst, ..compressed });
            }
            for (segment, &error) in errors.iter().enumerate() {
                if error > accepted {
                    // Removed samples stored again first; then a tighter target.
                    if !self.restore(segment, count) {
                        targets[segment] *= 0.6;
                    }
                    bits[segment] = None;
                }
            }
        }
        Err("kept as keys: no bit width, up to its values as they are (f32), keeps it within 0.01 cm on a 1.8 m figure"
            .to_string())
    }

    /// Stores again every sample removed in `segment`; whether there was any.
    fn restore(&mut self, segment: usize, count: usize) -> bool {
        let samples = segment * SEGMENT_SAMPLES..((segment + 1) * SEGMENT_SAMPLES).min(count);
        let mut restored = false;
        for track in &mut self.moving {
            for stored in &mut track.stored[samples.clone()] {
                restored |= !*stored;
                *stored = true;
            }
        }
        restored
    }
}

/// What the allocation of every segment reads; `measure.rs` reads it too.
pub(super) struct Context<'a> {
    pub(super) skeleton: &'a Skeleton,
    /// Rest with the constant tracks' values.
    pub(super) base: Vec<JointPose>,
    pub(super) moving: Vec<Moving>,
    pub(super) precision: Precision,
    /// Per joint, the moving tracks of it.
    tracks_of: Vec<Vec<usize>>,
    /// Per joint, the depth-first span of its subtree (`Skeleton::subtree_spans`).
    spans: Vec<(u32, u32)>,
}

impl<'a> Context<'a> {
    fn new(skeleton: &'a Skeleton, base: Vec<JointPose>, moving: Vec<Moving>, precision: Precision) -> Context<'a> {
        let mut tracks_of = vec![Vec::new(); skeleton.len()];
        for (track, moving) in moving.iter().enumerate() {
            tracks_of[moving.joint].push(track);
        }
        Context { skeleton, base, moving, precision, tracks_of, spans: skeleton.subtree_spans() }
    }

    /// The tracks: constants, then each moving one's words from its segments' bit widths.
    fn tracks(&self, bits: &[Option<Vec<u32>>], count: usize, constants: &[Track]) -> Vec<Track> {
        let mut tracks = constants.to_vec();
        let segment_count = bits.len();
        let table = HEADER_WORDS + segment_count.div_ceil(BLOCK_SEGMENTS) + segment_count * SEGMENT_WORDS;
        for (index, moving) in self.moving.iter().enumerate() {
            let mut words: Vec<u32> = moving.minimum.iter().chain(&moving.extent).map(|value| value.to_bits()).collect();
            words.resize(table, 0);
            let bit = 32 * words.len() as u64;
            let mut writer = BitWriter { words, bit };
            let mut block_start = writer.bit;
            for (segment, widths) in bits.iter().enumerate() {
                if segment % BLOCK_SEGMENTS == 0 {
                    block_start = writer.bit;
                    writer.words[HEADER_WORDS + segment / BLOCK_SEGMENTS * BLOCK_WORDS] =
                        u32::try_from(writer.bit).unwrap_or(u32::MAX);
                }
                let width = widths.as_ref().map_or(MAX_BITS, |widths| widths[index]);
                let samples = segment * SEGMENT_SAMPLES..((segment + 1) * SEGMENT_SAMPLES).min(count);
                let range = moving.segment_range(samples.clone());
                let record = segment_record(segment);
                let stored = samples
                    .clone()
                    .filter(|&sample| moving.stored[sample])
                    .fold(0u32, |mask, sample| mask | 1 << (sample % SEGMENT_SAMPLES));
                writer.words[record] = range[0].0 | range[1].0 << 8 | range[2].0 << 16 | width << 24;
                writer.words[record + 1] = range[0].1 | range[1].1 << 8 | range[2].1 << 16 | moving.dropped[segment] << 24;
                // Within a block: at most 31 segments × 16 samples × 4 × 32 bits before it, under 2^16.
                writer.words[record + 2] = stored | ((writer.bit - block_start) as u32) << 16;
                let components = moving.components(segment, width);
                for sample in samples.filter(|&sample| moving.stored[sample]) {
                    for &value in &moving.quantize(sample, &range, width)[..components] {
                        writer.push(value, width);
                    }
                }
            }
            tracks.push(Track { joint: moving.joint, property: moving.property, data: TrackData::Packed(writer.words) });
        }
        tracks
    }
}

#[cfg(test)]
mod tests {
    use super::super::{packed_value, RAW_BITS};
    use super::*;
    use crate::anim::{Interpolation, Joint, KeyTimes};
    use glam::{Quat, Vec3};

    fn arm() -> Skeleton {
        let joint = |name: &str, parent: Option<usize>, x: f32| {
            Joint::new(
                name,
                parent,
                Mat4::from_translation(Vec3::new(-x, 0.0, 0.0)),
                JointPose::new(Quat::IDENTITY, Vec3::new(0.3, 0.0, 0.0)),
            )
        };
        Skeleton { joints: vec![joint("shoulder", None, 0.0), joint("elbow", Some(0), 0.3), joint("hand", Some(1), 0.6)] }
    }

    fn swing(joint: usize, keys: usize, rate: f32, speed: f32) -> Channel {
        let values = (0..keys)
            .flat_map(|key| Vec4::from(Quat::from_rotation_z((key as f32 / rate * speed).sin() * 1.2)).to_array())
            .collect();
        Channel::linear(joint, Property::Rotation, KeyTimes::Uniform { start: 0.0, step: 1.0 / rate, count: keys }, values)
    }

    fn animation(channels: Vec<Channel>) -> Animation {
        Animation {
            name: "swing".into(),
            duration: 2.0,
            frame_rate: None,
            channels,
            file_key_bytes: 0,
            source: None,
            weights: Vec::new(),
            compressed: None,
            motion: None,
        }
    }

    #[test]
    fn a_clip_decodes_within_its_bound_at_and_between_samples() {
        let skeleton = arm();
        let raw = animation(vec![swing(0, 61, 30.0, 3.0), swing(1, 61, 30.0, 5.0)]);
        let precision = Precision::for_figure(0.9);
        let compressed = compress(&skeleton, &raw, &precision).expect("compresses");
        assert!(compressed.max_error <= precision.error, "{} > {}", compressed.max_error, precision.error);
        let played = Animation { compressed: Some(compressed.clone()), ..raw.clone() };
        let probes = (0..=600).map(|step| step as f32 / 300.0);
        let error = super::super::measured_error(&skeleton, &played, &precision, probes);
        assert!(error <= precision.error * 1.01, "{error} > {}", precision.error);
        let packed: usize = compressed.tracks.iter().map(Track::bytes).sum();
        assert!(packed < 61 * 2 * 16 / 2, "at least half the raw keys' bytes: {packed}");
        assert_eq!(compressed.sample_rate().round(), 30.0, "in-phase keys are the samples");
    }

    #[test]
    fn still_properties_are_stripped_and_constants_kept_once() {
        let skeleton = arm();
        let still = |joint, property, value: Vec4| {
            let values = (0..10)
                .flat_map(|_| {
                    if property == Property::Rotation {
                        value.to_array().to_vec()
                    } else {
                        value.truncate().to_array().to_vec()
                    }
                })
                .collect();
            Channel::linear(joint, property, KeyTimes::Uniform { start: 0.0, step: 0.1, count: 10 }, values)
        };
        let raw = animation(vec![
            swing(0, 10, 10.0, 3.0),
            still(1, Property::Translation, Vec4::new(0.3, 0.0, 0.0, 0.0)),
            still(2, Property::Rotation, Vec4::from(Quat::from_rotation_x(0.5))),
        ]);
        let compressed = compress(&skeleton, &raw, &Precision::for_figure(0.9)).expect("compresses");
        let kinds: Vec<(usize, bool)> =
            compressed.tracks.iter().map(|track| (track.joint, matches!(track.data, TrackData::Constant(_)))).collect();
        assert_eq!(kinds, vec![(2, true), (0, false)], "the rest translation gone, the turned hand one value");
    }

    #[test]
    fn cubic_keys_are_sampled_densely_enough_between_them() {
        let skeleton = arm();
        // Two cubic keys a second apart: the curve between them needs many samples.
        let mut channel = Channel::linear(
            1,
            Property::Translation,
            KeyTimes::Uniform { start: 0.0, step: 1.0, count: 2 },
            vec![0.0, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.6, 0.2, 0.0, 0.0, 0.0, 0.0],
        );
        channel.interpolation = Interpolation::CubicSpline;
        channel.values = vec![0.0, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.6, 0.2, 0.0, 0.0, 0.0, 0.0];
        let raw = animation(vec![channel]);
        let precision = Precision::for_figure(0.9);
        let compressed = compress(&skeleton, &raw, &precision).expect("compresses");
        assert!(compressed.times.count() > 8, "{}", compressed.sampling());
        let played = Animation { compressed: Some(compressed), ..raw.clone() };
        let error = super::super::measured_error(&skeleton, &played, &precision, (0..=1000).map(|step| step as f32 / 1000.0));
        assert!(error <= precision.error * 1.01, "{error}");
    }

    /// `raw` compressed within `precision`, checked at 2,001 times over its two seconds.
    fn held(skeleton: &Skeleton, raw: &Animation, precision: &Precision) -> CompressedAnimation {
        let compressed = compress(skeleton, raw, precision).expect("compresses");
        let played = Animation { compressed: Some(compressed.clone()), ..raw.clone() };
        let error = super::super::measured_error(skeleton, &played, precision, (0..=2000).map(|step| step as f32 / 1000.0));
        assert!(error <= precision.error * 1.01, "{error} > {} ({})", precision.error, compressed.sampling());
        compressed
    }

    #[test]
    fn a_half_turn_a_key_is_sampled_between_its_keys() {
        // Khronos's AnimatedCube: a half turn a second, the quaternions' dot -4.4e-8, so which
        // way the shorter arc goes is the keys' rounding; as keys, quantization could turn it
        // the other way round.
        let skeleton = arm();
        let values = [0.0f32, 1.0, 2.0]
            .iter()
            .flat_map(|turns| Vec4::from(Quat::from_rotation_z(turns * std::f32::consts::PI)).to_array());
        let keys = KeyTimes::Uniform { start: 0.0, step: 1.0, count: 3 };
        let raw = animation(vec![Channel::linear(1, Property::Rotation, keys, values.collect())]);
        let compressed = held(&skeleton, &raw, &Precision::for_figure(0.9));
        assert!(compressed.times.count() > 3, "{}", compressed.sampling());
    }

    #[test]
    fn a_symmetric_cubic_is_held_at_its_quarters() {
        // Equal tangents at both keys: the curve passes through the chord's middle and strays
        // either side of it (InterpolationTest's CubicSpline translation), which a check half
        // way between the keys alone passes.
        let skeleton = arm();
        let mut channel =
            Channel::linear(1, Property::Translation, KeyTimes::Uniform { start: 0.0, step: 1.0, count: 2 }, Vec::new());
        channel.interpolation = Interpolation::CubicSpline;
        channel.values = vec![0.0, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.4, 0.0, 0.0, 0.4, 0.0, 0.3, 0.2, 0.0, 0.0, 0.0, 0.0];
        let compressed = held(&skeleton, &animation(vec![channel]), &Precision::for_figure(0.9));
        assert!(compressed.times.count() > 4, "{}", compressed.sampling());
    }

    #[test]
    fn a_step_the_keys_do_not_mark_is_sampled_within_a_float() {
        // Two keys a float apart (not one time twice): a step an evaluated curve may take between
        // its keys, which no interval of 0.13 ms held (GLSceneWoman4's Milkshape clip).
        let skeleton = arm();
        let half = 1.0f32;
        let after = f32::from_bits(half.to_bits() + 1);
        let times = KeyTimes::Listed(vec![0.0, half, after, 2.0]);
        let values = [0.0f32, 0.2, 0.8, 1.0].iter().flat_map(|angle| Vec4::from(Quat::from_rotation_z(*angle)).to_array());
        let raw = animation(vec![Channel::linear(1, Property::Rotation, times, values.collect())]);
        let compressed = held(&skeleton, &raw, &Precision::for_figure(0.9));
        assert!(compressed.sampling().contains("µs"), "{}", compressed.sampling());
    }

    #[test]
    fn samples_on_a_line_are_removed_and_a_kink_is_kept() {
        // Two seconds at 120 Hz of the elbow turning steadily, then back: only the segments'
        // first samples, the turn's kink and the last are needed.
        let skeleton = arm();
        let angle = |key: usize| if key <= 120 { key as f32 / 120.0 } else { 2.0 - key as f32 / 120.0 };
        let values = (0..=240).flat_map(|key| Vec4::from(Quat::from_rotation_z(angle(key))).to_array()).collect();
        let channel =
            Channel::linear(1, Property::Rotation, KeyTimes::Uniform { start: 0.0, step: 1.0 / 120.0, count: 241 }, values);
        let compressed = held(&skeleton, &animation(vec![channel]), &Precision::for_figure(0.9));
        let TrackData::Packed(words) = &compressed.tracks[0].data else { panic!("packed") };
        let stored: u32 = (0..241usize.div_ceil(SEGMENT_SAMPLES))
            .map(|segment| (words[segment_record(segment) + 2] & 0xFFFF).count_ones())
            .sum();
        assert!(stored <= 241usize.div_ceil(SEGMENT_SAMPLES) as u32 + 2, "{stored} of 241 samples stored");
    }

    #[test]
    fn a_full_turn_within_a_segment_stores_all_four_components() {
        // The elbow spins about z a little over 45° a key, two full turns a segment: each of its
        // rotation's components comes near 0 within every segment (z and w in turn, x and y
        // throughout), so none can be rebuilt from unit length (assimp's "full rotations between
        // keys" test files).
        // (At exactly 45° a key, w would be 0 to a float where z is exactly 1: rebuilt exactly.)
        let skeleton = arm();
        let values = (0..=64).flat_map(|key| Vec4::from(Quat::from_rotation_z(key as f32 * 0.7855)).to_array()).collect();
        let channel =
            Channel::linear(1, Property::Rotation, KeyTimes::Uniform { start: 0.0, step: 1.0 / 30.0, count: 65 }, values);
        let compressed = held(&skeleton, &animation(vec![channel]), &Precision::for_figure(0.9));
        let TrackData::Packed(words) = &compressed.tracks[0].data else { panic!("packed") };
        let codes: Vec<u32> =
            (0..65usize.div_ceil(SEGMENT_SAMPLES)).map(|segment| words[segment_record(segment) + 1] >> 24).collect();
        // The last segment holds one sample, which stays clear of 0 on its own.
        assert!(codes[..4].iter().all(|&code| code & super::super::FOUR_COMPONENTS != 0), "segment codes {codes:?}");
    }

    #[test]
    fn packed_values_read_back_what_was_written() {
        let samples: Vec<Vec4> = (0..56).map(|k| Vec4::new(k as f32 * 0.1, -(k as f32), 2.0, 0.0)).collect();
        // Rotations with w of either sign, some near 0: stored as they are, each comes back to the bit.
        let turns: Vec<Vec4> =
            (0..56).map(|k| Vec4::from(Quat::from_axis_angle(Vec3::new(1.0, 2.0, -0.5).normalize(), k as f32 * 0.61))).collect();
        let skeleton = arm();
        let moving =
            vec![Moving::new(0, Property::Translation, samples.clone()), Moving::new(1, Property::Rotation, turns.clone())];
        let context = Context::new(&skeleton, Vec::new(), moving, Precision::for_figure(1.0));
        let bits = vec![Some(vec![12, 24]), Some(vec![0, 20]), Some(vec![24, RAW_BITS]), Some(vec![RAW_BITS, RAW_BITS])];
        let tracks = context.tracks(&bits, 56, &[]);
        let TrackData::Packed(words) = &tracks[0].data else { panic!("packed") };
        for (sample, expected) in samples.iter().enumerate() {
            let value = packed_value(words, sample, false);
            match sample {
                48.. => assert_eq!(value.truncate(), expected.truncate(), "sample {sample} as it is"),
                16..32 => assert!((value - *expected).length() < 8.0, "sample {sample}: {value} at 0 bits"),
                _ => assert!((value - *expected).length() < 1e-2, "sample {sample}: {value} against {expected}"),
            }
        }
        let TrackData::Packed(words) = &tracks[1].data else { panic!("packed") };
        for (sample, expected) in turns.iter().enumerate() {
            let value = packed_value(words, sample, true);
            let same = value == *expected || value == -*expected;
            assert!(
                if sample >= 32 { same } else { value.dot(*expected).abs() > 1.0 - 1e-6 },
                "turn {sample}: {value} against {expected}"
            );
        }
    }

    #[test]
    fn values_stored_as_they_are_hold_a_bound_no_quantization_does() {
        // A bound of a nanometre on a 90 cm arm, below what 24 bits keep (and below f32's own
        // rounding of a time or an interpolation): every segment stores its samples as they are,
        // and each decodes to the bit, q or −q.
        let skeleton = arm();
        let raw = animation(vec![swing(0, 61, 30.0, 3.0), swing(1, 61, 30.0, 5.0)]);
        let precision = Precision { error: 1e-9, ..Precision::for_figure(0.9) };
        let compressed = compress(&skeleton, &raw, &precision).expect("compresses");
        for (track, channel) in compressed.tracks.iter().zip(&raw.channels) {
            let TrackData::Packed(words) = &track.data else { panic!("packed") };
            let widths: Vec<u32> = (0..4).map(|segment| words[segment_record(segment)] >> 24).collect();
            assert_eq!(widths, [RAW_BITS; 4], "joint {}", track.joint);
            for sample in 0..61 {
                let (value, key) = (packed_value(words, sample, true), raw_value(channel, compressed.times.time(sample)));
                assert!(value == key || value == -key, "joint {} sample {sample}: {value} against {key}", track.joint);
            }
        }
    }
}
