//! Animations as the files give them: per joint and property, the key times and values as stored,
//! and the interpolation between them, in the joint's local space. Nothing is baked: sampling finds
//! the keys around a time and interpolates (`sample_channel` in shaders/palette.comp.glsl mirrors
//! [`Channel::sample`]).

use glam::Vec4;

use super::compress::{CompressedAnimation, TrackData};
use super::curve::{bracket, hermite, KeySpan};
use super::{JointPose, Skeleton};

/// Which part of a joint's local transform a channel drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    Translation = 0,
    Rotation = 1,
    Scale = 2,
}

impl Property {
    pub const ALL: [Property; 3] = [Property::Translation, Property::Rotation, Property::Scale];

    pub fn name(self) -> &'static str {
        match self {
            Property::Translation => "translation",
            Property::Rotation => "rotation",
            Property::Scale => "scale",
        }
    }
}

/// How values between two keys are found. The GPU codes are `INTERPOLATION_*` in common.glsl.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// The earlier key's value until the next key.
    Step = 0,
    /// Lerp; rotations slerp along the shorter arc.
    Linear = 1,
    /// glTF's cubic Hermite spline: per key an in-tangent, a value and an out-tangent, tangents in
    /// units per second (scaled by the key interval when used). Rotations are normalized after.
    CubicSpline = 2,
    /// Milkshape's cubic Hermite: the same layout, tangents already per key interval (not scaled).
    Hermite = 3,
}

impl Interpolation {
    /// Values stored per key: in-tangent, value, out-tangent for the cubic kinds.
    pub fn values_per_key(self) -> usize {
        match self {
            Interpolation::CubicSpline | Interpolation::Hermite => 3,
            Interpolation::Step | Interpolation::Linear => 1,
        }
    }
}

/// When the keys are. Evenly spaced keys are found by index; others by binary search.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyTimes {
    Uniform { start: f32, step: f32, count: usize },
    Listed(Vec<f32>),
}

impl KeyTimes {
    /// Non-decreasing times as given; marked uniform when every key sits within a millionth of a
    /// step of `start + k × step` (then the index lookup finds the same keys the search would).
    pub fn from_list(times: Vec<f32>) -> KeyTimes {
        let count = times.len();
        if let (Some(&start), Some(&end)) = (times.first(), times.last()) {
            let step = if count > 1 { (end - start) / (count - 1) as f32 } else { 0.0 };
            let even = count == 1
                || (step > 0.0
                    && times.iter().enumerate().all(|(index, &time)| {
                        (time - (start + index as f32 * step)).abs() <= step * 1e-6 + f32::EPSILON * time.abs()
                    }));
            if even {
                return KeyTimes::Uniform { start, step: if count > 1 { step } else { 1.0 }, count };
            }
        }
        KeyTimes::Listed(times)
    }

    pub fn count(&self) -> usize {
        match self {
            KeyTimes::Uniform { count, .. } => *count,
            KeyTimes::Listed(times) => times.len(),
        }
    }

    pub fn time(&self, key: usize) -> f32 {
        match self {
            KeyTimes::Uniform { start, step, .. } => start + key as f32 * step,
            KeyTimes::Listed(times) => times.get(key).copied().unwrap_or(0.0),
        }
    }

    pub fn is_uniform(&self) -> bool {
        matches!(self, KeyTimes::Uniform { .. })
    }

    /// The keys around `time`, clamped to the first and last, or with `wraps` (uniform keys only)
    /// running from the last back to the first over one more step. Mirrors `locate_key` in
    /// palette.comp.glsl.
    pub fn locate(&self, time: f32, wraps: bool) -> KeySpan {
        let count = self.count();
        let hold = |key: usize| KeySpan { key, next: key, fraction: 0.0, span: 1.0 };
        if count <= 1 {
            return hold(0);
        }
        match self {
            KeyTimes::Uniform { start, step, .. } => {
                let position = (time - start) / step;
                if position.is_nan() || position <= 0.0 {
                    return hold(0);
                }
                let whole = position.floor();
                // Compared as floats: a time far past the keys must not overflow the index.
                if whole < (count - 1) as f32 {
                    let key = whole as usize;
                    KeySpan { key, next: key + 1, fraction: position - whole, span: *step }
                } else if wraps && whole < count as f32 {
                    KeySpan { key: count - 1, next: 0, fraction: position - whole, span: *step }
                } else {
                    hold(count - 1)
                }
            }
            // At the first key itself the first key is held, as `locate_key` does.
            KeyTimes::Listed(times) if time <= times[0] => hold(0),
            KeyTimes::Listed(times) => bracket(times, |&key_time| key_time, time).unwrap_or(hold(0)),
        }
    }
}

/// One property of one joint over time.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    pub joint: usize,
    pub property: Property,
    pub interpolation: Interpolation,
    pub times: KeyTimes,
    /// Which of x, y, z, w the keys store (bit i: component i); the others come from `base`.
    /// All four for glTF and Milkshape rotations, x y z for their translations and scales; MD5
    /// stores only the components its flags animate.
    pub mask: u8,
    /// The unstored components (MD5's baseframe); unused where the mask covers them all.
    pub base: Vec4,
    /// The rotation's w is not stored but implied, ≤ 0, from unit length (MD5).
    pub implied_w: bool,
    /// After the last key the value runs back to the first over one more step (MD5's loop);
    /// only with uniform times.
    pub wraps: bool,
    /// `mask.count_ones()` floats per stored value, `interpolation.values_per_key()` values a key.
    pub values: Vec<f32>,
}

impl Channel {
    /// A channel of whole values (xyzw for a rotation, xyz otherwise) interpolated linearly, as a
    /// file of samples gives them (BVH, ACL's clips).
    pub fn linear(joint: usize, property: Property, times: KeyTimes, values: Vec<f32>) -> Channel {
        Channel {
            joint,
            property,
            interpolation: Interpolation::Linear,
            times,
            mask: if property == Property::Rotation { 0b1111 } else { 0b0111 },
            base: Vec4::ZERO,
            implied_w: false,
            wraps: false,
            values,
        }
    }

    pub fn components(&self) -> usize {
        self.mask.count_ones() as usize
    }

    /// Whether the stored keys leave components to `base` (MD5's unanimated ones), so the base
    /// must be stored too: the GPU layout (`AnimationData`) and its byte count share this rule.
    pub fn stores_base(&self) -> bool {
        let needed: u8 = if self.property == Property::Rotation && !self.implied_w { 0b1111 } else { 0b0111 };
        self.mask & needed != needed
    }

    /// The full value at stored slot `slot` (a key's value, or a cubic key's tangent).
    pub fn entry(&self, slot: usize, tangent: bool) -> Vec4 {
        let stride = self.components();
        let stored = self.values.get(slot * stride..(slot + 1) * stride).unwrap_or(&[]);
        // Tangents have no base: unstored components of a tangent do not move.
        let mut value = if tangent { Vec4::ZERO } else { self.base };
        let mut next = stored.iter();
        for component in 0..4 {
            if self.mask & (1 << component) != 0 {
                if let Some(&stored) = next.next() {
                    value[component] = stored;
                }
            }
        }
        if self.implied_w && !tangent {
            value.w = -(1.0 - value.truncate().length_squared()).max(0.0).sqrt();
        }
        value
    }

    /// The value of key `key`.
    pub fn key_value(&self, key: usize) -> Vec4 {
        self.entry(key * self.interpolation.values_per_key() + usize::from(self.interpolation.values_per_key() == 3), false)
    }

    /// The keys around `time`, clamped to the first and last (or wrapping, see [`Channel::wraps`]).
    /// Mirrors `locate_key` in palette.comp.glsl.
    pub fn locate(&self, time: f32) -> KeySpan {
        self.times.locate(time, self.wraps)
    }

    /// As [`Channel::locate`], looking first a few keys on from key `hint`: times met in increasing
    /// order (the culling cells' spans) are found in a step or two instead of a binary search.
    pub fn locate_from(&self, hint: usize, time: f32) -> KeySpan {
        if let KeyTimes::Listed(times) = &self.times {
            if times.first().is_some_and(|&first| time > first) && times.get(hint).is_some_and(|&at| at <= time) {
                // times[key] <= time throughout; found once the next key is later.
                for key in hint..(hint + 4).min(times.len() - 1) {
                    if times[key + 1] > time {
                        return KeySpan::between(key, (times[key], times[key + 1]), time);
                    }
                }
            }
        }
        self.locate(time)
    }

    /// The channel's value at `time`: a translation or scale in xyz, or a unit rotation.
    pub fn sample(&self, time: f32) -> Vec4 {
        self.value_at(self.locate(time))
    }

    /// The channel's value at a time already located among its keys ([`Channel::locate`]).
    pub fn value_at(&self, at: KeySpan) -> Vec4 {
        let rotation = self.property == Property::Rotation;
        let (a, b) = (self.key_value(at.key), self.key_value(at.next));
        let value = match self.interpolation {
            Interpolation::Step => a,
            Interpolation::Linear => super::compress::interpolate(self.property, a, b, at.fraction),
            Interpolation::CubicSpline | Interpolation::Hermite => {
                let scale = if self.interpolation == Interpolation::CubicSpline { at.span } else { 1.0 };
                let out_tangent = self.entry(at.key * 3 + 2, true) * scale;
                let in_tangent = self.entry(at.next * 3, true) * scale;
                hermite(a, out_tangent, b, in_tangent, at.fraction)
            }
        };
        if rotation {
            value.try_normalize().unwrap_or(Vec4::W)
        } else {
            value
        }
    }

    /// Writes the sampled value into the pose's property.
    pub fn apply(&self, time: f32, pose: &mut JointPose) {
        self.set(self.sample(time), pose);
    }

    /// Writes a value of the channel's property into the pose.
    pub fn set(&self, value: Vec4, pose: &mut JointPose) {
        super::compress::set_property(pose, self.property, value);
    }
}

/// How a range's bounds are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeUnit {
    /// The file's own frame numbers (Psionic's files count from 1).
    Frames,
    /// Seconds, written with an `s` suffix: `0.5s-1.25s`.
    Seconds,
}

/// One named span of a clip, as written: frames are the file's own frame numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipRange {
    pub name: String,
    pub first: f64,
    pub last: f64,
    pub unit: RangeUnit,
}

/// One animation of a file: its channels, at most one per joint and property.
#[derive(Clone, Debug, PartialEq)]
pub struct Animation {
    pub name: String,
    /// The loop's length in seconds: the last key time (glTF), the timeline (Milkshape), frame
    /// count over frame rate (MD5, whose last frame runs back into the first).
    pub duration: f32,
    /// Frames per second where the file counts in frames (MD5, Milkshape): what clip ranges count.
    pub frame_rate: Option<f32>,
    pub channels: Vec<Channel>,
    /// The bytes of keys the file stores, as f32 (times and values; MD5: its animated
    /// components), for comparing with what the GPU holds.
    pub file_key_bytes: usize,
    /// The file it came from, where that is not the model's own (`--anim`, MD5's .md5anim files).
    pub source: Option<std::path::PathBuf>,
    /// Animated morph target weights (`Model::morph_targets`), at most one channel a target.
    pub weights: Vec<WeightChannel>,
    /// The joint channels compressed (`--clip-compression`, on by default): what the palette pass
    /// and [`Animation::sample`] play when present. `channels` stay the raw keys it was made from.
    pub compressed: Option<CompressedAnimation>,
    /// The motion taken out of `channels` where it plays in place (`Model::extract_root_motion`).
    pub motion: Option<std::sync::Arc<super::RootMotion>>,
}

/// One morph target's weight over time (FBX's DeformPercent as a fraction, glTF's `weights`).
#[derive(Clone, Debug, PartialEq)]
pub struct WeightChannel {
    /// Index into `Model::morph_targets`.
    pub target: usize,
    pub interpolation: Interpolation,
    pub times: KeyTimes,
    /// `interpolation.values_per_key()` values a key (in-tangent, value, out-tangent for cubics).
    pub values: Vec<f32>,
}

impl WeightChannel {
    /// The weight at `time`, held before the first key and after the last (0 without keys).
    pub fn sample(&self, time: f32) -> f32 {
        let per_key = self.interpolation.values_per_key();
        let value = |key: usize, slot: usize| self.values.get(key * per_key + slot).copied().unwrap_or(0.0);
        let middle = usize::from(per_key == 3);
        // Located as joint channels are (and as the palette pass locates a weight's keys).
        let at = self.times.locate(time, false);
        let (a, b) = (value(at.key, middle), value(at.next, middle));
        match self.interpolation {
            Interpolation::Step => a,
            Interpolation::Linear => a + (b - a) * at.fraction,
            Interpolation::CubicSpline | Interpolation::Hermite => {
                let scale = if self.interpolation == Interpolation::CubicSpline { at.span } else { 1.0 };
                hermite(a, value(at.key, 2) * scale, b, value(at.next, 0) * scale, at.fraction)
            }
        }
    }
}

impl Animation {
    /// Every joint's local pose at `time`: its rest pose with the animated properties replaced.
    /// Mirrors `sample_local` in palette.comp.glsl.
    pub fn sample(&self, skeleton: &Skeleton, time: f32, out: &mut [JointPose]) {
        if let Some(compressed) = &self.compressed {
            return compressed.sample(skeleton, time, out);
        }
        for (out, joint) in out.iter_mut().zip(&skeleton.joints) {
            *out = joint.rest;
        }
        for channel in &self.channels {
            if let Some(pose) = out.get_mut(channel.joint) {
                channel.apply(time, pose);
            }
        }
    }

    /// What the palette pass's buffers hold for this animation (`AnimationData` in
    /// src/render/model_buffers/keys.rs): a 16-byte record per joint and property and per morph target,
    /// the key times (evenly spaced ones as start and step, a list shared by channels stored once),
    /// the values and MD5's bases.
    /// Compressed where the animation is (`Animation::compressed`).
    pub fn gpu_bytes(&self, joint_count: usize, target_count: usize) -> usize {
        self.bytes_on_gpu(self.compressed.as_ref(), joint_count, target_count)
    }

    /// [`Animation::gpu_bytes`] of the raw keys, compressed or not.
    pub fn key_gpu_bytes(&self, joint_count: usize, target_count: usize) -> usize {
        self.bytes_on_gpu(None, joint_count, target_count)
    }

    /// [`Animation::gpu_bytes`] with `compressed` in place of its own (None: the raw keys).
    pub fn bytes_on_gpu(&self, compressed: Option<&CompressedAnimation>, joint_count: usize, target_count: usize) -> usize {
        let mut time_lists: std::collections::HashSet<Vec<u32>> = std::collections::HashSet::new();
        let mut floats = 0;
        // Equal lists are stored once, evenly spaced keys as their start and step.
        let mut times = |keys: &KeyTimes| {
            let stored: Vec<u32> = match keys {
                KeyTimes::Uniform { start, step, .. } => vec![start.to_bits(), step.to_bits()],
                KeyTimes::Listed(times) => times.iter().map(|time| time.to_bits()).collect(),
            };
            let floats = stored.len();
            if time_lists.insert(stored) {
                floats
            } else {
                0
            }
        };
        match compressed {
            Some(compressed) => {
                for track in &compressed.tracks {
                    floats += match &track.data {
                        TrackData::Constant(_) => times(&compressed.constant_times()),
                        TrackData::Packed(_) => times(&compressed.times),
                    } + track.bytes() / 4;
                }
            }
            None => {
                for channel in &self.channels {
                    floats += times(&channel.times) + channel.values.len() + if channel.stores_base() { 4 } else { 0 };
                }
            }
        }
        for channel in &self.weights {
            floats += times(&channel.times) + channel.values.len();
        }
        // A record for each joint channel kept (each track) and each morph target; the table of
        // which joint property is which record.
        let joints = joint_count.max(1);
        let records = match compressed {
            Some(compressed) => compressed.tracks.iter().filter(|track| track.joint < joints).count(),
            None => self.channels.iter().filter(|channel| channel.joint < joints).count(),
        };
        let table = channel_table_words(joints, records >= CHANNEL_TABLE_NARROW_RECORDS);
        (records + target_count) * 16 + (table + floats) * 4
    }

    /// Keys over all channels, by property.
    pub fn key_counts(&self) -> [usize; 3] {
        let mut counts = [0; 3];
        for channel in &self.channels {
            counts[channel.property as usize] += channel.times.count();
        }
        counts
    }
}

/// The channel records an animation may have with a table of 16-bit entries (`AnimationData` in
/// render/model_buffers/keys.rs; 0xFFFF is its "none").
pub const CHANNEL_TABLE_NARROW_RECORDS: usize = 0xFFFF;

/// The words of an animation's channel table on the GPU: per joint and property a 16-bit entry,
/// two a word, or with more records than [`CHANNEL_TABLE_NARROW_RECORDS`] (`wide`) a word each.
pub fn channel_table_words(joint_count: usize, wide: bool) -> usize {
    if wide {
        joint_count * 3
    } else {
        (joint_count * 3).div_ceil(2)
    }
}

/// What a user plays: a span of one animation, looping. A whole animation is one clip; clip ranges
/// (`--clips`, or a Psionic "animation ranges" file) cut more from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    pub name: String,
    /// Index into `Model::animations`.
    pub animation: usize,
    /// Where in the animation the clip starts, seconds.
    pub start: f32,
    /// Loop length, seconds.
    pub duration: f32,
    /// Its animation's root motion, where it was taken out and the clip plays in place
    /// (`Model::extract_root_motion`): what moves the instance.
    pub motion: Option<std::sync::Arc<super::RootMotion>>,
}

impl Clip {
    /// The animation's time for any clip time (negative too), wrapped into the clip's span. The
    /// CPU wraps in f64 before a time reaches the GPU, so f32 keeps its precision however long the
    /// program runs.
    pub fn animation_time(&self, seconds: f64) -> f32 {
        self.start + self.loop_time(seconds)
    }

    /// The time from the clip's start for any clip time, wrapped into its span in f64; 0 for a
    /// clip that does not loop (no span).
    pub fn loop_time(&self, seconds: f64) -> f32 {
        let duration = f64::from(self.duration);
        if duration.is_nan() || duration <= 0.0 {
            return 0.0;
        }
        let wrapped = seconds.rem_euclid(duration) as f32;
        // rem_euclid can round up to exactly `duration` in f32.
        if wrapped >= self.duration {
            0.0
        } else {
            wrapped
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn channel(interpolation: Interpolation, times: &[f32], values: &[f32], property: Property) -> Channel {
        let mask = if property == Property::Rotation { 0b1111 } else { 0b0111 };
        Channel {
            joint: 0,
            property,
            interpolation,
            times: KeyTimes::from_list(times.to_vec()),
            mask,
            base: Vec4::ZERO,
            implied_w: false,
            wraps: false,
            values: values.to_vec(),
        }
    }

    #[test]
    fn key_times_are_marked_uniform_only_when_even() {
        assert!(KeyTimes::from_list(vec![0.0, 1.0 / 30.0, 2.0 / 30.0, 0.1]).is_uniform());
        assert!(!KeyTimes::from_list(vec![0.0, 0.1, 0.3]).is_uniform());
        assert!(KeyTimes::from_list(vec![0.7]).is_uniform());
        assert!(!KeyTimes::from_list(vec![0.2, 0.2, 0.4]).is_uniform());
    }

    #[test]
    fn step_and_linear_clamp_outside_the_keys() {
        let values = [0.0, 0.0, 0.0, 2.0, 4.0, 6.0];
        let linear = channel(Interpolation::Linear, &[1.0, 3.0], &values, Property::Translation);
        assert_eq!(linear.sample(0.0), Vec4::ZERO);
        assert_eq!(linear.sample(2.0), Vec4::new(1.0, 2.0, 3.0, 0.0));
        assert_eq!(linear.sample(9.0), Vec4::new(2.0, 4.0, 6.0, 0.0));
        let step = channel(Interpolation::Step, &[1.0, 3.0], &values, Property::Translation);
        assert_eq!(step.sample(2.9), Vec4::ZERO);
        assert_eq!(step.sample(3.0), Vec4::new(2.0, 4.0, 6.0, 0.0));
    }

    #[test]
    fn uneven_keys_are_searched() {
        let times = [0.5, 0.6, 2.0];
        let values = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0];
        let linear = channel(Interpolation::Linear, &times, &values, Property::Translation);
        assert!((linear.sample(0.55).x - 0.5).abs() < 1e-6);
        assert!((linear.sample(1.3).x - 1.5).abs() < 1e-6);
    }

    #[test]
    fn cubic_spline_scales_tangents_by_the_interval_and_hermite_does_not() {
        // One key pair, value 0 -> 1 over 2 s, out-tangent 1 per second.
        let values = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let cubic = channel(Interpolation::CubicSpline, &[0.0, 2.0], &values, Property::Translation);
        let hermite_channel = Channel { interpolation: Interpolation::Hermite, ..cubic.clone() };
        let s = 0.25f32;
        let expected = |scale: f32| (s * s * s - 2.0 * s * s + s) * scale + (-2.0 * s * s * s + 3.0 * s * s);
        assert!((cubic.sample(0.5).x - expected(2.0)).abs() < 1e-6);
        assert!((hermite_channel.sample(0.5).x - expected(1.0)).abs() < 1e-6);
    }

    #[test]
    fn masked_keys_fill_from_the_base_and_imply_w() {
        let mut rotation = channel(Interpolation::Linear, &[0.0, 1.0], &[0.0, 0.6], Property::Rotation);
        rotation.mask = 0b0010; // y only
        rotation.base = Vec4::new(0.0, 0.0, 0.0, 0.0);
        rotation.implied_w = true;
        let end = rotation.key_value(1);
        assert!((end - Vec4::new(0.0, 0.6, 0.0, -0.8)).length() < 1e-6);
        assert!((rotation.sample(1.0).length() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn locating_from_a_hint_finds_what_the_search_finds() {
        // Repeated times (an empty interval), keys before and after the ends, NaN.
        let times = [0.0, 0.5, 0.5, 1.0, 1.5, 3.0, 3.0, 4.0];
        let values: Vec<f32> = (0..times.len() * 3).map(|index| index as f32).collect();
        let translation = channel(Interpolation::Linear, &times, &values, Property::Translation);
        let probes = [-1.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.2, 1.5, 2.9, 3.0, 3.5, 4.0, 9.0, f32::NAN];
        for hint in 0..times.len() + 2 {
            for &time in &probes {
                let (found, searched) = (translation.locate_from(hint, time), translation.locate(time));
                assert_eq!(found, searched, "hint {hint}, time {time}");
            }
        }
    }

    #[test]
    fn wrapping_channels_run_back_to_the_first_key() {
        let mut translation = channel(
            Interpolation::Linear,
            &[0.0, 1.0, 2.0],
            &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0],
            Property::Translation,
        );
        translation.wraps = true;
        assert!((translation.sample(2.5).x - 1.0).abs() < 1e-6);
        translation.wraps = false;
        assert_eq!(translation.sample(2.5).x, 2.0);
        // Far past the keys (uniform keys are found by index): the last key, no overflow.
        assert_eq!(translation.locate(1e30).key, 2);
    }

    #[test]
    fn clip_time_wraps_into_its_span() {
        let clip = Clip { name: "c".into(), animation: 0, start: 1.0, duration: 0.5, motion: None };
        assert!((clip.animation_time(0.25) - 1.25).abs() < 1e-6);
        assert!((clip.animation_time(-0.25) - 1.25).abs() < 1e-6);
        assert!(clip.animation_time(1e9) < 1.5);
        let _ = Vec3::ZERO;
    }
}
