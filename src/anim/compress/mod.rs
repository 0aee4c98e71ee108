//! Clips compressed for the palette pass, on by default (`--clip-compression off` keeps the files'
//! keys). Every animated joint property is sampled (evenly, or at the clip's uneven times where no
//! even rate follows its curves: `grid.rs`), cut into segments of [`SEGMENT_SAMPLES`] samples, the
//! samples its neighbours' interpolation rebuilds removed, and each segment's values range-reduced
//! and quantized at the fewest bits that keep ACL's error bound ([`encode`] chooses them).
//! Properties that never move are stripped: at rest they cost nothing, elsewhere one value. The
//! palette pass reads one sample of one track without decoding anything else: the sample's segment
//! record gives its bit width, its ranges and which samples the segment stores
//! (`packed_value` and `stored_around` in palette.comp.glsl mirror [`packed_value`] and
//! [`packed_pair`]).
//!
//! A packed track is self-contained `u32` words:
//!
//! | words | what |
//! |---|---|
//! | 0-2 | the track's minimum x, y, z over the clip (f32 bits) |
//! | 3-5 | its extent x, y, z (f32 bits) |
//! | per block of [`BLOCK_SEGMENTS`] segments: 1 | the bit offset of the block's samples from the track's first word |
//! | then per segment, 3 | the segment's minimum x, y, z in 255ths of the extent and its bit width (a byte each); its extent x, y, z in 255ths and, for a rotation, which component it drops (or, with [`FOUR_COMPONENTS`], stores last) (a byte each); the samples it stores (16 bits, the first always) and their bit offset from the block's (16 bits) |
//! | then | each segment's stored samples, x y z (a four-component rotation's fourth after them) at the segment's bit width, back to back |
//!
//! A sample not stored lies on the line between the stored ones around it (the next segment's
//! first where its own has none left), by its place among the samples.
//!
//! A value is `minimum + extent × (segment minimum + segment extent × q / (2^bits − 1))`, the
//! middle of the segment's range at 0 bits; a segment whose width byte is past [`MAX_BITS`]
//! ([`RAW_BITS`]) stores each value's own f32 bits, a rotation's four components as they are (its
//! samples to the bit: assimp's 64 chained boxes turning full turns, rebuilt or normalized in f32,
//! moved by more than the bound leaves once the samples' interpolation has taken its half). A
//! rotation keeps three of its four components: per segment it drops the one farthest from 0
//! throughout (w for most), signed ≥ 0 (q and −q are one rotation), and rebuilds it from unit
//! length. Dropping w always, as ACL does, fails where w nears 0 (a joint turned half round): f32
//! cannot rebuild it from 1 − |xyz|² there. Where every component comes within `tracks::FOUR_BELOW`
//! of 0 in a segment (a full turn within it), the segment stores the fourth too
//! ([`FOUR_COMPONENTS`]), over [0, 1], and the decoder normalizes.
//!
//! The error bound is ACL's: three virtual vertices at a shell distance along each joint's local
//! axes, through the joint's object-space transform, raw against compressed, the largest distance
//! over every joint, at every sample time and between samples. ACL's default is 0.01 cm at a 3 cm
//! shell; here both scale with the figure (0.01 cm and 3 cm on a figure 1.8 m across). ACL's shell
//! bounds a joint, not a vertex 30 cm down the limb: on a model with a mesh each joint's shell is
//! its farthest skinned vertex's distance (at least the 3 cm), as Unreal's ACL plugin's "safe"
//! distance is, so that the skinned mesh stays within the 0.01 cm ([`Precision::with_shells`],
//! `Model::joint_shells`); motion alone keeps ACL's.

pub mod encode;
mod grid;
mod measure;
mod tracks;

use glam::{Mat4, Quat, Vec3, Vec4};

use super::{local_to_model, slerp_shortest, Animation, JointPose, KeyTimes, Property, Skeleton};

/// Samples a segment: the range reduction's span (ACL's default too).
pub const SEGMENT_SAMPLES: usize = 16;
/// The widest quantization.
pub const MAX_BITS: u32 = 24;
/// Past [`MAX_BITS`], a segment stores its values as they are, f32 bits (ACL's raw rate,
/// [`raw_value`]): a clip that even these do not hold keeps its keys. A record's width byte above
/// `MAX_BITS` reads as this.
pub const RAW_BITS: u32 = 32;
/// The track header: minimum and extent, x y z each.
pub const HEADER_WORDS: usize = 6;
/// A segment record: minimums and bit width, extents and the dropped component, the samples
/// stored and their bit offset in the block.
pub const SEGMENT_WORDS: usize = 3;
/// Segment records a block holds after its bit offset (a block's offsets fit 16 bits).
pub const BLOCK_SEGMENTS: usize = 32;
/// A block: its samples' bit offset, then its records.
pub const BLOCK_WORDS: usize = 1 + BLOCK_SEGMENTS * SEGMENT_WORDS;

/// How close a compressed clip stays to its raw keys, in model units.
#[derive(Clone, Debug, PartialEq)]
pub struct Precision {
    /// The largest distance a virtual vertex may move.
    pub error: f32,
    /// How far from each joint the virtual vertices sit: ACL's shell, the least any joint has.
    pub shell: f32,
    /// Per joint, a farther shell (its farthest skinned vertex); empty: `shell` for every joint.
    pub shells: Vec<f32>,
}

impl Precision {
    /// ACL's default (0.01 cm of error at a 3 cm shell) on a figure 1.8 m across, scaled to a figure
    /// `size` model units across (its largest side).
    pub fn for_figure(size: f32) -> Precision {
        let size = if size.is_finite() && size > 0.0 { size } else { 1.0 };
        Precision { error: size * (0.01 / 180.0), shell: size * (3.0 / 180.0), shells: Vec::new() }
    }

    /// Each joint's shell at least `farthest[joint]` (its farthest skinned vertex, in its own bind
    /// frame: `Model::joint_shells`) and never under ACL's.
    pub fn with_shells(self, farthest: &[f32]) -> Precision {
        let shells =
            farthest.iter().map(|&distance| if distance.is_finite() { distance.max(self.shell) } else { self.shell }).collect();
        Precision { shells, ..self }
    }

    /// Joint `joint`'s shell.
    pub fn shell_of(&self, joint: usize) -> f32 {
        self.shells.get(joint).copied().unwrap_or(self.shell)
    }

    /// How far joint `joint`'s error moves what it carries between two object-space transforms:
    /// with the vertices' shells, the farthest any point within its shell moves ([`sphere_error`]:
    /// every vertex it skins); without, ACL's three virtual vertices ([`shell_error`]).
    pub fn joint_error(&self, joint: usize, a: &Mat4, b: &Mat4) -> f32 {
        match self.shells.is_empty() {
            true => shell_error(a, b, self.shell),
            false => sphere_error(a, b, self.shell_of(joint)),
        }
    }

    /// An error in model units as centimetres on a figure 1.8 m across (what ACL's bound reads).
    pub fn as_reference_centimetres(&self, error: f32) -> f32 {
        error / self.error * 0.01
    }
}

/// What a compressed clip keeps of one joint property.
#[derive(Clone, Debug, PartialEq)]
pub enum TrackData {
    /// One value for the whole clip (a rotation xyzw, or x y z).
    Constant(Vec4),
    /// Segments of quantized samples (the layout in the module's header).
    Packed(Vec<u32>),
}

/// One joint property of a compressed clip; a property with no track stays at rest.
#[derive(Clone, Debug, PartialEq)]
pub struct Track {
    pub joint: usize,
    pub property: Property,
    pub data: TrackData,
}

impl Track {
    /// The value at a time found among the clip's sample times (`KeyTimes::locate`): interpolated
    /// as raw linear keys are (rotations slerp along the shorter arc), held before the first
    /// sample and after the last.
    pub fn value_at(&self, at: crate::anim::KeySpan) -> Vec4 {
        match &self.data {
            TrackData::Constant(value) => *value,
            TrackData::Packed(words) => {
                let rotation = self.property == Property::Rotation;
                let (a, b, fraction) = packed_pair(words, at.key, at.next, at.fraction, rotation);
                let blended = interpolate(self.property, a, b, fraction);
                // Normalized once more, as the palette pass ends every rotation it samples.
                if rotation {
                    blended.try_normalize().unwrap_or(Vec4::W)
                } else {
                    blended
                }
            }
        }
    }

    /// Bytes on the GPU besides the channel record: the words, or the constant's floats.
    pub fn bytes(&self) -> usize {
        match &self.data {
            TrackData::Constant(_) if self.property == Property::Rotation => 16,
            TrackData::Constant(_) => 12,
            TrackData::Packed(words) => 4 * words.len(),
        }
    }
}

/// An animation's joint channels compressed: evenly spaced samples, a track per property that moves
/// or differs from rest. Morph target weights stay as the file's keys (one float a key already).
#[derive(Clone, Debug, PartialEq)]
pub struct CompressedAnimation {
    /// When the samples are: evenly spaced, or listed at uneven times (a time listed twice is a
    /// jump: the value before it, then at it).
    pub times: KeyTimes,
    pub tracks: Vec<Track>,
    pub precision: Precision,
    /// Measured against the raw keys at every sample and between samples, model units.
    pub max_error: f32,
}

impl CompressedAnimation {
    /// Every joint's local pose at `time`: rest, with the tracks' properties replaced. Mirrors
    /// `sample_local` in palette.comp.glsl.
    pub fn sample(&self, skeleton: &Skeleton, time: f32, out: &mut [JointPose]) {
        for (out, joint) in out.iter_mut().zip(&skeleton.joints) {
            *out = joint.rest;
        }
        // Every track shares the clip's sample times: the time is found among them once.
        let at = self.times.locate(time, false);
        for track in &self.tracks {
            if let Some(pose) = out.get_mut(track.joint) {
                set_property(pose, track.property, track.value_at(at));
            }
        }
    }

    /// The key times of a constant track's one key (the first sample's time), as the GPU stores them.
    pub fn constant_times(&self) -> KeyTimes {
        KeyTimes::Uniform { start: self.times.time(0), step: 1.0, count: 1 }
    }

    /// The samples per second where they are evenly spaced; 0 at uneven times.
    pub fn sample_rate(&self) -> f32 {
        match self.times {
            KeyTimes::Uniform { step, .. } if step > 0.0 => 1.0 / step,
            _ => 0.0,
        }
    }

    /// When the samples are, in words: "24 samples a second", or "184 samples at uneven times (as
    /// close as 0.13 ms)".
    pub fn sampling(&self) -> String {
        match &self.times {
            KeyTimes::Uniform { .. } => format!("{:.0} samples a second", self.sample_rate()),
            KeyTimes::Listed(times) => {
                let closest =
                    times.windows(2).map(|pair| pair[1] - pair[0]).filter(|&gap| gap > 0.0).fold(f32::INFINITY, f32::min);
                let jumps = times.windows(2).filter(|pair| pair[0] == pair[1]).count();
                let jumps = if jumps > 0 { format!(", {jumps} jumps") } else { String::new() };
                let closest = match closest {
                    closest if closest >= 1e-4 => format!("{:.2} ms", closest * 1e3),
                    closest => format!("{:.2} µs", closest * 1e6),
                };
                format!("{} samples at uneven times (as close as {closest}{jumps})", times.len())
            }
        }
    }
}

/// Between two samples as the palette pass interpolates a compressed track: lerp, or a rotation's
/// slerp along the shorter arc (`Channel::value_at` for linear keys).
pub fn interpolate(property: Property, a: Vec4, b: Vec4, fraction: f32) -> Vec4 {
    if property == Property::Rotation {
        Vec4::from(slerp_shortest(Quat::from_vec4(a), Quat::from_vec4(b), fraction))
    } else {
        a.lerp(b, fraction)
    }
}

/// Over a wide arc (past half a radian), slerp between two rotations bends away from its quantized
/// ends, and a raw curve from the slerp of its samples, more than at the ends or half way: where
/// the widest of `rotations` (pairs of ends) turns that far, a probe every quarter radian of its
/// turn (2 to 16, as fractions of the interval); none otherwise. The encoder's grid and its final
/// measure probe the same fractions.
pub(super) fn arc_probes(rotations: impl Iterator<Item = (Vec4, Vec4)>) -> Vec<f32> {
    let widest =
        rotations.map(|(a, b)| super::curve::rotation_distance(Quat::from_vec4(a), Quat::from_vec4(b))).fold(0.0f32, f32::max);
    if widest <= 0.5 {
        return Vec::new();
    }
    let count = ((widest / 0.25).ceil() as usize).clamp(2, 16);
    (1..=count).map(|probe| probe as f32 / (count + 1) as f32).collect()
}

/// Writes a value of `property` into a pose.
pub fn set_property(pose: &mut JointPose, property: Property, value: Vec4) {
    match property {
        Property::Translation => pose.translation = value.truncate(),
        Property::Rotation => pose.rotation = Quat::from_vec4(value),
        Property::Scale => pose.scale = value.truncate(),
    }
}

/// `bits` bits (at most 32) from bit `bit` of `words`; 0 for 0 bits, and 0 for bits past the end
/// (which the encoder never points at). Mirrors `read_bits` in palette.comp.glsl.
fn read_bits(words: &[u32], bit: u64, bits: u32) -> u32 {
    if bits == 0 {
        return 0;
    }
    let word = usize::try_from(bit >> 5).unwrap_or(usize::MAX);
    let shift = (bit & 31) as u32;
    let low = words.get(word).copied().unwrap_or(0) >> shift;
    let high = if shift + bits > 32 { words.get(word.saturating_add(1)).copied().unwrap_or(0) << (32 - shift) } else { 0 };
    (low | high) & (u32::MAX >> (32 - bits))
}

/// A quantized fraction of a segment's range back to a value (see the module's header).
pub fn dequantize(minimum: f32, extent: f32, segment: (u32, u32), fraction: f32) -> f32 {
    minimum + extent * (segment.0 as f32 / 255.0 + segment.1 as f32 / 255.0 * fraction)
}

/// A sample stored as it is (a segment of [`RAW_BITS`]): x y z, or a rotation's four components
/// with the one its code names last, each its own f32 bits: the sample to the bit (rebuilt from
/// unit length or normalized, f32 rounding alone moved a chain of 64 joints turning full turns by
/// half ACL's bound). Mirrors `raw_value` in palette.comp.glsl.
pub(super) fn raw_value(stored: [u32; 4], rotation_code: u32, rotation: bool) -> Vec4 {
    let kept = Vec3::from_array([0, 1, 2].map(|component| f32::from_bits(stored[component])));
    match rotation {
        true => inserted(kept, rotation_code & 3, f32::from_bits(stored[3])),
        false => kept.extend(0.0),
    }
}

/// Where segment `segment`'s record is in a packed track: after the header, in blocks of
/// [`BLOCK_SEGMENTS`] records, each block led by its samples' bit offset.
pub fn segment_record(segment: usize) -> usize {
    HEADER_WORDS + (segment / BLOCK_SEGMENTS) * BLOCK_WORDS + 1 + (segment % BLOCK_SEGMENTS) * SEGMENT_WORDS
}

/// The samples around `key` that a packed track stores: the last at or before it and the first
/// after it (the next segment's first where none is left in its own; every segment stores its
/// first). Mirrors `stored_around` in palette.comp.glsl.
fn stored_around(words: &[u32], key: usize) -> (usize, usize) {
    let segment_first = key - key % SEGMENT_SAMPLES;
    let mask = words.get(segment_record(key / SEGMENT_SAMPLES) + 2).copied().unwrap_or(0) & 0xFFFF | 1;
    let place = (key % SEGMENT_SAMPLES) as u32;
    let at_or_before = mask & ((2u32 << place) - 1);
    let after = mask & !((2u32 << place) - 1);
    let previous = segment_first + (31 - at_or_before.leading_zeros()) as usize;
    let next = if after == 0 { segment_first + SEGMENT_SAMPLES } else { segment_first + after.trailing_zeros() as usize };
    (previous, next)
}

/// What a packed track interpolates between at sample `key` with the next sample `next` (its
/// locate's) and `fraction` of the way: the stored samples around it and the fraction between
/// them (a sample the encoder removed lies on its stored neighbours' line, by its place among
/// the samples). Mirrors the packed branch of `sample_channel` in palette.comp.glsl.
pub fn packed_pair(words: &[u32], key: usize, next: usize, fraction: f32, rotation: bool) -> (Vec4, Vec4, f32) {
    if next == key {
        // Held (the last sample, which is stored).
        let value = packed_value(words, key, rotation);
        return (value, value, 0.0);
    }
    let (before, after) = stored_around(words, key);
    let fraction = ((key - before) as f32 + fraction) / (after - before) as f32;
    (packed_value(words, before, rotation), packed_value(words, after, rotation), fraction)
}

/// A packed track's stored sample `sample`: x y z of a translation or scale, or a rotation whose dropped
/// component (the segment's) is rebuilt from unit length. Reads only inside `words`. Mirrors `packed_value` in
/// palette.comp.glsl.
pub fn packed_value(words: &[u32], sample: usize, rotation: bool) -> Vec4 {
    let word = |index: usize| words.get(index).copied().unwrap_or(0);
    let segment = sample / SEGMENT_SAMPLES;
    let record = segment_record(segment);
    let block = HEADER_WORDS + (segment / BLOCK_SEGMENTS) * BLOCK_WORDS;
    let (minimums, extents, stored) = (word(record), word(record + 1), word(record + 2));
    // A width byte past MAX_BITS: the segment's values as they are.
    let raw = minimums >> 24 > MAX_BITS;
    let bits = if raw { RAW_BITS } else { minimums >> 24 };
    let rotation_code = (extents >> 24) & 7;
    let components = if rotation { components_stored(rotation_code, bits) } else { 3 };
    // The samples stored before this one in its segment.
    let before = (stored & 0xFFFF & ((1u32 << (sample % SEGMENT_SAMPLES)) - 1)).count_ones();
    let first_bit =
        u64::from(word(block)) + u64::from(stored >> 16) + u64::from(before) * u64::from(components) * u64::from(bits);
    let stored = |component: u32| read_bits(words, first_bit + u64::from(component) * u64::from(bits), bits);
    if raw {
        // A translation or scale stores no fourth (0 is not read).
        let fourth = if rotation { stored(3) } else { 0 };
        return raw_value([stored(0), stored(1), stored(2), fourth], rotation_code, rotation);
    }
    let mut value = Vec4::ZERO;
    for component in 0..3 {
        let shift = 8 * component as u32;
        value[component] = dequantize(
            f32::from_bits(word(component)),
            f32::from_bits(word(3 + component)),
            ((minimums >> shift) & 255, (extents >> shift) & 255),
            level_fraction(stored(component as u32), bits),
        );
    }
    if rotation {
        // A three-component segment stores no fourth: the next sample's bits follow.
        let fourth = if components == 4 { level_fraction(stored(3), bits) } else { 0.0 };
        value = rotation_from(value.truncate(), rotation_code, fourth);
    }
    value
}

/// A value quantized at `bits` as its fraction of the segment's range: the middle at 0 bits.
/// Mirrors `level_fraction` in palette.comp.glsl.
pub(super) fn level_fraction(quantized: u32, bits: u32) -> f32 {
    if bits == 0 {
        0.5
    } else {
        quantized as f32 / ((1u32 << bits) - 1) as f32
    }
}

/// In a rotation segment's record (the top byte of its second word), the flag for a segment that
/// stores all four components: where none stays clear of 0 throughout the segment (a joint turning
/// a full turn within it), the one rebuilt from unit length would lose most of its precision
/// (1 − |xyz|² is all rounding there). The byte's low two bits then name the component stored
/// last, ≥ 0, over [0, 1] at the segment's bit width; the decoded four are normalized.
pub const FOUR_COMPONENTS: u32 = 4;

/// The components a rotation segment stores per sample, from its record's code (see
/// [`FOUR_COMPONENTS`]) and bit width: all four at [`RAW_BITS`].
pub fn components_stored(rotation_code: u32, bits: u32) -> u32 {
    if rotation_code & FOUR_COMPONENTS != 0 || bits == RAW_BITS {
        4
    } else {
        3
    }
}

/// A unit rotation from the three components kept (in order) and a segment's code: the index of
/// the component dropped, rebuilt ≥ 0 from unit length; or, with [`FOUR_COMPONENTS`], of the one
/// stored as `fourth` (all four then normalized). Mirrors `rotation_from` in palette.comp.glsl.
pub fn rotation_from(kept: Vec3, rotation_code: u32, fourth: f32) -> Vec4 {
    let index = rotation_code & 3;
    if rotation_code & FOUR_COMPONENTS == 0 {
        return inserted(kept, index, (1.0 - kept.length_squared()).max(0.0).sqrt());
    }
    let value = inserted(kept, index, fourth);
    let length = value.length();
    if length > 0.0 {
        value / length
    } else {
        Vec4::W
    }
}

/// `kept` with `value` put in at component `index` (the others after it move up).
fn inserted(kept: Vec3, index: u32, value: f32) -> Vec4 {
    match index {
        0 => Vec4::new(value, kept.x, kept.y, kept.z),
        1 => Vec4::new(kept.x, value, kept.y, kept.z),
        2 => Vec4::new(kept.x, kept.y, value, kept.z),
        _ => kept.extend(value),
    }
}

/// How far the three virtual vertices of a joint at `shell` move between two object-space
/// transforms: the largest of the three distances (ACL's `qvvf_transform_error_metric`).
pub fn shell_error(a: &Mat4, b: &Mat4, shell: f32) -> f32 {
    let moved = |axis: Vec3| (a.transform_point3(axis * shell) - b.transform_point3(axis * shell)).length();
    moved(Vec3::X).max(moved(Vec3::Y)).max(moved(Vec3::Z))
}

/// The farthest any point within `shell` of a joint moves between two object-space transforms:
/// at most `shell` × the largest stretch of the difference of their linear parts (its spectral
/// norm, bounded from above: [`spectral_norm`]) plus the difference of their translations. Where ACL's three virtual vertices on the
/// joint's axes miss a vertex between them (a rotation's error moves such a point up to 1.22×
/// further), this bounds every point of the ball, and is close to tight where the error is a
/// rotation about a joint above (the farthest point, on the far side from that joint, moves by
/// `shell` × the angle plus what the joint itself moves).
pub fn sphere_error(a: &Mat4, b: &Mat4, shell: f32) -> f32 {
    let linear = glam::Mat3::from_mat4(*a) - glam::Mat3::from_mat4(*b);
    let translation = (a.w_axis - b.w_axis).truncate().length();
    shell * spectral_norm(linear) + translation
}

/// At least the largest singular value of `m` (its largest stretch) and at most 1.16× it for a
/// rotation's error: the square root of the largest Gershgorin row bound of the symmetric mᵀm
/// (its diagonal entry plus its row's other entries' magnitudes), which bounds mᵀm's largest
/// eigenvalue. Exact for a rotation's error about a joint's axis; about a diagonal, 1.155×. A
/// power iteration or the cubic's closed form found the exact norm, but took the encoder 1.27×
/// the time on a 9-clip file where this takes about none more.
fn spectral_norm(m: glam::Mat3) -> f32 {
    let g = m.transpose() * m;
    let (a00, a11, a22) = (g.x_axis.x, g.y_axis.y, g.z_axis.z);
    let (a01, a02, a12) = (g.y_axis.x.abs(), g.z_axis.x.abs(), g.z_axis.y.abs());
    (a00 + a01 + a02).max(a11 + a01 + a12).max(a22 + a02 + a12).max(0.0).sqrt()
}

/// The largest shell error over every joint (each at its shell) of two sets of local poses.
pub fn pose_error(
    skeleton: &Skeleton,
    a: &[JointPose],
    b: &[JointPose],
    precision: &Precision,
    scratch: &mut [Vec<Mat4>; 2],
) -> f32 {
    for (poses, models) in [a, b].into_iter().zip(scratch.iter_mut()) {
        models.resize(skeleton.len(), Mat4::IDENTITY);
        local_to_model(skeleton, poses, Mat4::IDENTITY, models);
    }
    let errors = scratch[0].iter().zip(&scratch[1]).enumerate();
    errors.map(|(joint, (a, b))| precision.joint_error(joint, a, b)).fold(0.0, f32::max)
}

/// The largest shell error of `animation` as played (compressed where it is) against its raw keys,
/// at `times`.
pub fn measured_error(
    skeleton: &Skeleton,
    animation: &Animation,
    precision: &Precision,
    times: impl Iterator<Item = f32>,
) -> f32 {
    let raw = Animation { compressed: None, ..animation.clone() };
    let mut poses = [vec![JointPose::IDENTITY; skeleton.len()], vec![JointPose::IDENTITY; skeleton.len()]];
    let mut scratch = [Vec::new(), Vec::new()];
    let mut worst = 0.0f32;
    for time in times {
        raw.sample(skeleton, time, &mut poses[0]);
        animation.sample(skeleton, time, &mut poses[1]);
        worst = worst.max(pose_error(skeleton, &poses[0], &poses[1], precision, &mut scratch));
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spectral_norm_bound_holds_the_largest_stretch() {
        // A rotation's error (skew-symmetric) about an axis: exact; about a diagonal: within 1.16×.
        let about_z = glam::Mat3::from_rotation_z(0.3) - glam::Mat3::IDENTITY;
        assert!((spectral_norm(about_z) - 2.0 * (0.15f32).sin()).abs() < 1e-5, "{}", spectral_norm(about_z));
        let diagonal = glam::Mat3::from_axis_angle(Vec3::ONE.normalize(), 0.01) - glam::Mat3::IDENTITY;
        let exact = 2.0 * (0.005f32).sin();
        assert!(
            spectral_norm(diagonal) >= exact * 0.9999 && spectral_norm(diagonal) <= exact * 1.16,
            "{}",
            spectral_norm(diagonal) / exact
        );
        // A stretch, a shear (the golden ratio its norm) and nothing.
        assert!((spectral_norm(glam::Mat3::from_diagonal(Vec3::new(0.5, -2.0, 1.0))) - 2.0).abs() < 1e-5);
        let shear = glam::Mat3::from_cols(Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Z);
        assert!(spectral_norm(shear) >= 1.618_03 && spectral_norm(shear) <= 1.618_04 * 1.3, "{}", spectral_norm(shear));
        assert_eq!(spectral_norm(glam::Mat3::ZERO), 0.0);
    }

    #[test]
    fn bits_are_read_across_words() {
        // 0b101 at bit 30 runs into the next word.
        let words = [0b01 << 30, 0b1];
        assert_eq!(read_bits(&words, 30, 3), 0b101);
        assert_eq!(read_bits(&words, 0, 0), 0);
        assert_eq!(read_bits(&words, 1_000, 8), 0, "past the end reads zeros, not out of bounds");
    }

    #[test]
    fn any_words_and_any_sample_decode_without_reading_past_the_track() {
        // The GPU's decoder trusts the encoder; the CPU's reads nothing past the words it is given.
        let mut random = 0x853c_49e6_748f_ea9b_u64;
        let mut next = || {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            random
        };
        let bits = |value: Vec4| value.to_array().map(f32::to_bits);
        for length in 0..40 {
            let words: Vec<u32> = (0..length).map(|_| next() as u32).collect();
            // Past its end a track reads as zeros: the same words with zeros after decode alike.
            let padded: Vec<u32> = words.iter().copied().chain(std::iter::repeat_n(0, 4_096)).collect();
            for _ in 0..50 {
                let (sample, rotation) = ((next() % 2_000) as usize, next() % 2 == 0);
                assert_eq!(bits(packed_value(&words, sample, rotation)), bits(packed_value(&padded, sample, rotation)));
            }
        }
    }

    #[test]
    fn the_bound_scales_with_the_figure() {
        let precision = Precision::for_figure(1.8);
        assert!((precision.error - 0.0001).abs() < 1e-9);
        assert!((precision.shell - 0.03).abs() < 1e-7);
        assert!((precision.as_reference_centimetres(0.0001) - 0.01).abs() < 1e-7);
        assert_eq!(Precision::for_figure(f32::NAN), Precision::for_figure(1.0));
    }
}
