//! The tracks a clip compresses into, before their bits are chosen: a moving property's samples
//! and their range over a segment, quantized and read back as the palette pass reads them; the
//! bit writer that packs them.

use glam::{Vec3, Vec4};

use super::{dequantize, level_fraction, raw_value, rotation_from, FOUR_COMPONENTS, RAW_BITS, SEGMENT_SAMPLES};
use crate::anim::Property;

/// Values within this of each other are the same (a property that does not move).
const SAME: f32 = 1e-6;
/// A rotation segment whose every component comes this close to 0 stores all four
/// ([`FOUR_COMPONENTS`]): rebuilt from unit length, a component at c carries the others' error
/// about 1/c times over (20× here), and three components' extra bits then cost more than the
/// fourth's.
pub(super) const FOUR_BELOW: f32 = 0.05;

/// A rotation with w ≥ 0 (the one of q and −q the format keeps); other values as they are.
pub(super) fn canonical(property: Property, value: Vec4) -> Vec4 {
    if property == Property::Rotation && value.w < 0.0 {
        -value
    } else {
        value
    }
}

pub(super) fn same(property: Property, a: Vec4, b: Vec4) -> bool {
    match property {
        Property::Rotation => (a - b).length() <= SAME,
        _ => (a - b).length() <= SAME * a.length().max(1.0),
    }
}

/// A track that moves: its samples, the three values each keeps (a rotation: all but its segment's
/// dropped component, signed so that one is ≥ 0) and their range over the clip.
#[derive(Clone)]
pub(super) struct Moving {
    pub(super) joint: usize,
    pub(super) property: Property,
    pub(super) samples: Vec<Vec4>,
    /// Per sample, whether it is stored (a segment's first and the last always are); the others
    /// lie on their stored neighbours' line.
    pub(super) stored: Vec<bool>,
    /// Per segment, the rotation code: the component dropped (3, w, for other properties:
    /// unused), or stored last with [`FOUR_COMPONENTS`].
    pub(super) dropped: Vec<u32>,
    pub(super) kept: Vec<[f32; 3]>,
    pub(super) minimum: [f32; 3],
    pub(super) extent: [f32; 3],
}

impl Moving {
    pub(super) fn new(joint: usize, property: Property, samples: Vec<Vec4>) -> Moving {
        let dropped: Vec<u32> = samples
            .chunks(SEGMENT_SAMPLES)
            .map(|segment| if property == Property::Rotation { component_to_drop(segment) } else { 3 })
            .collect();
        let kept: Vec<[f32; 3]> =
            samples.iter().enumerate().map(|(index, &value)| keep(property, value, dropped[index / SEGMENT_SAMPLES])).collect();
        let mut minimum = [f32::INFINITY; 3];
        let mut maximum = [f32::NEG_INFINITY; 3];
        for value in &kept {
            for component in 0..3 {
                minimum[component] = minimum[component].min(value[component]);
                maximum[component] = maximum[component].max(value[component]);
            }
        }
        let extent = [0, 1, 2].map(|component| maximum[component] - minimum[component]);
        let stored = vec![true; samples.len()];
        Moving { joint, property, samples, stored, dropped, kept, minimum, extent }
    }

    /// Removes the samples that lie within `tolerance` (a decoded value's stray, [`Moving::stray`])
    /// of the line between stored ones, by their place among the samples: from each stored
    /// sample the farthest later one, up to the next segment's first, that every sample between
    /// stays that close to. A segment's first sample and the last are always stored.
    pub(super) fn remove_samples(&mut self, tolerance: f32) {
        let count = self.samples.len();
        let mut from = 0;
        while from + 1 < count {
            let limit = ((from / SEGMENT_SAMPLES + 1) * SEGMENT_SAMPLES).min(count - 1);
            let fits = |to: usize| {
                (from + 1..to).all(|sample| {
                    let fraction = (sample - from) as f32 / (to - from) as f32;
                    self.stray(sample, super::interpolate(self.property, self.samples[from], self.samples[to], fraction))
                        <= tolerance
                })
            };
            let mut to = from + 1;
            while to < limit && fits(to + 1) {
                to += 1;
            }
            for sample in from + 1..to {
                self.stored[sample] = false;
            }
            from = to;
        }
    }

    /// The values the decoder gives for `samples` (one segment's) quantized at `bits` within
    /// `range`: a stored sample's own, a removed one's on its stored neighbours' line (the next
    /// segment's first as sampled: its own quantization is that segment's).
    pub(super) fn decoded_all(&self, samples: std::ops::Range<usize>, range: &[(u32, u32); 3], bits: u32) -> Vec<Vec4> {
        let mut values: Vec<Option<Vec4>> =
            samples.clone().map(|sample| self.stored[sample].then(|| self.decoded(sample, range, bits))).collect();
        let first = samples.start;
        let mut before = first;
        for sample in samples.clone() {
            if self.stored[sample] {
                before = sample;
                continue;
            }
            let after = (sample + 1..samples.end).find(|&later| self.stored[later]).unwrap_or(samples.end);
            let a = values[before - first].unwrap_or(self.samples[before]);
            let b = if after < samples.end { values[after - first].unwrap_or(self.samples[after]) } else { self.samples[after] };
            let fraction = (sample - before) as f32 / (after - before) as f32;
            values[sample - first] = Some(super::interpolate(self.property, a, b, fraction));
        }
        values.into_iter().map(|value| value.unwrap_or(Vec4::ZERO)).collect()
    }

    /// A segment's range of each component over the samples it stores, in 255ths of the clip's:
    /// (minimum, extent) pairs.
    pub(super) fn segment_range(&self, samples: std::ops::Range<usize>) -> [(u32, u32); 3] {
        [0, 1, 2].map(|component| {
            if self.extent[component] <= 0.0 {
                return (0, 0);
            }
            let stored = samples.clone().filter(|&sample| self.stored[sample]).map(|sample| &self.kept[sample]);
            let (low, high) = stored.fold((f32::INFINITY, f32::NEG_INFINITY), |(low, high), value| {
                (low.min(value[component]), high.max(value[component]))
            });
            let scaled = |value: f32| (value - self.minimum[component]) / self.extent[component] * 255.0;
            let first = (scaled(low).floor().clamp(0.0, 255.0)) as u32;
            let last = (scaled(high).ceil().clamp(0.0, 255.0)) as u32;
            (first, last.max(first) - first)
        })
    }

    /// The values a sample stores in its segment at `bits`: 3, or a four-component rotation's 4.
    pub(super) fn components(&self, segment: usize, bits: u32) -> usize {
        match self.property {
            Property::Rotation => super::components_stored(self.dropped[segment], bits) as usize,
            _ => 3,
        }
    }

    /// Sample `sample` quantized at `bits` within a segment's `range`: its kept three, then (in a
    /// four-component segment) the fourth over [0, 1]; `components` of the four are written. At
    /// [`RAW_BITS`], the values' own f32 bits.
    pub(super) fn quantize(&self, sample: usize, range: &[(u32, u32); 3], bits: u32) -> [u32; 4] {
        let code = self.dropped[sample / SEGMENT_SAMPLES];
        // `keep` signed the sample so that the fourth is ≥ 0.
        let fourth = match self.property {
            Property::Rotation => self.samples[sample][(code & 3) as usize].abs(),
            _ => 0.0,
        };
        if bits == RAW_BITS {
            let kept = self.kept[sample].map(f32::to_bits);
            return [kept[0], kept[1], kept[2], fourth.to_bits()];
        }
        let fourth = if code & FOUR_COMPONENTS != 0 { fourth.min(1.0) } else { 0.0 };
        let levels = ((1u32 << bits) - 1) as f32;
        let kept = [0, 1, 2].map(|component| {
            let low = dequantize(self.minimum[component], self.extent[component], range[component], 0.0);
            let high = dequantize(self.minimum[component], self.extent[component], range[component], 1.0);
            let fraction = if high > low { (self.kept[sample][component] - low) / (high - low) } else { 0.0 };
            (fraction.clamp(0.0, 1.0) * levels).round() as u32
        });
        [kept[0], kept[1], kept[2], (fourth * levels).round() as u32]
    }

    /// The value the decoder gives for sample `sample` quantized (as `packed_value` computes it).
    pub(super) fn decoded(&self, sample: usize, range: &[(u32, u32); 3], bits: u32) -> Vec4 {
        let values = self.quantize(sample, range, bits);
        let code = self.dropped[sample / SEGMENT_SAMPLES];
        if bits == RAW_BITS {
            return raw_value(values, code, self.property == Property::Rotation);
        }
        let fraction = |component: usize| level_fraction(values[component], bits);
        let mut kept = Vec3::ZERO;
        for component in 0..3 {
            kept[component] = dequantize(self.minimum[component], self.extent[component], range[component], fraction(component));
        }
        match self.property {
            Property::Rotation => rotation_from(kept, code, fraction(3)),
            _ => kept.extend(0.0),
        }
    }

    /// How far a decoded value is from the sample (rotations: q and −q are one).
    pub(super) fn stray(&self, sample: usize, decoded: Vec4) -> f32 {
        let raw = self.samples[sample];
        match self.property {
            Property::Rotation => (decoded - raw).length().min((decoded + raw).length()),
            _ => (decoded - raw).length(),
        }
    }
}

/// A segment's rotation code: drop w while it stays clear of 0, else the component farthest from 0
/// throughout (its rebuild from unit length is then well conditioned); where even that one comes
/// within [`FOUR_BELOW`] of 0, store all four ([`FOUR_COMPONENTS`]), that one last.
pub(super) fn component_to_drop(segment: &[Vec4]) -> u32 {
    let smallest = |component: usize| segment.iter().map(|value| value[component].abs()).fold(f32::INFINITY, f32::min);
    if smallest(3) >= 0.3 {
        return 3;
    }
    let farthest = (0..4).max_by(|&a, &b| smallest(a).total_cmp(&smallest(b))).unwrap_or(3);
    match smallest(farthest) < FOUR_BELOW {
        true => FOUR_COMPONENTS | farthest as u32,
        false => farthest as u32,
    }
}

/// The three components a sample keeps: x y z, or a rotation's all but the one its segment's code
/// names (dropped, or stored last), signed so that one is ≥ 0.
pub(super) fn keep(property: Property, value: Vec4, code: u32) -> [f32; 3] {
    if property != Property::Rotation {
        return value.truncate().to_array();
    }
    let dropped = (code & 3) as usize;
    let value = if value[dropped] < 0.0 { -value } else { value };
    let mut kept = [0.0; 3];
    for (slot, component) in (0..4).filter(|&component| component != dropped).enumerate() {
        kept[slot] = value[component];
    }
    kept
}

/// Appends values of a given bit width to words, low bits first.
pub(super) struct BitWriter {
    pub(super) words: Vec<u32>,
    pub(super) bit: u64,
}

impl BitWriter {
    pub(super) fn push(&mut self, value: u32, bits: u32) {
        if bits == 0 {
            return;
        }
        let word = (self.bit >> 5) as usize;
        let shift = (self.bit & 31) as u32;
        self.words.resize(((self.bit + u64::from(bits)).div_ceil(32)) as usize, 0);
        self.words[word] |= value << shift;
        if shift + bits > 32 {
            self.words[word + 1] |= value >> (32 - shift);
        }
        self.bit += u64::from(bits);
    }
}
