//! The clips' keys in the palette pass's layout: channel records, key times and key words.

use ahash::AHashMap as HashMap;

use crate::anim::compress::{CompressedAnimation, Track, TrackData};
use crate::anim::{Channel, Interpolation, KeyTimes, Property, WeightChannel};
use crate::model::Model;
use crate::render::shader_types::{
    GpuChannel, CHANNEL_COMPONENTS_SHIFT, CHANNEL_HAS_BASE, CHANNEL_IMPLIED_W, CHANNEL_INTERPOLATION_SHIFT, CHANNEL_PACKED,
    CHANNEL_TABLE_WIDE, CHANNEL_UNIFORM, CHANNEL_WRAPS, NO_CHANNEL, PROPERTY_WEIGHT,
};

/// The animations' keys as the palette pass reads them: per animation the channel records of the
/// joint properties it keys (or its compressed tracks), its channel table (in `values`: per joint
/// and property the record's index among them, or `NO_CHANNEL`) and one record per morph target
/// from `weight_channels`; the key times (evenly spaced ones as start and step; equal lists
/// stored once) and the values as words: f32 keys as the files give them (their bits), and
/// compressed tracks' words (`anim::compress`).
pub struct AnimationData {
    pub channels: Vec<GpuChannel>,
    pub times: Vec<f32>,
    pub values: Vec<u32>,
    /// Per animation: its first joint channel, its first weight channel, its channel table (with
    /// `CHANNEL_TABLE_WIDE` where its entries are 32 bits).
    starts: Vec<(u32, u32, u32)>,
}

impl AnimationData {
    /// Where animation `index`'s joint channels, weight channels and channel table start (its
    /// `AnimationRecord`'s first channel, first weight channel and channel table).
    pub fn channel_starts(&self, index: usize) -> (u32, u32, u32) {
        self.starts.get(index).copied().unwrap_or((0, 0, 0))
    }

    pub fn new(model: &Model) -> AnimationData {
        let joint_count = model.skeleton.len().max(1);
        let target_count = model.morph_targets.len();
        let mut data = AnimationData { channels: Vec::new(), times: Vec::new(), values: Vec::new(), starts: Vec::new() };
        let mut shared_times: HashMap<Vec<u32>, u32> = HashMap::new();
        for animation in &model.animations {
            let records: Vec<(usize, Property, GpuChannel)> = match &animation.compressed {
                Some(compressed) => compressed
                    .tracks
                    .iter()
                    .filter(|track| track.joint < joint_count)
                    .map(|track| (track.joint, track.property, data.track_record(compressed, track, &mut shared_times)))
                    .collect(),
                None => animation
                    .channels
                    .iter()
                    .filter(|channel| channel.joint < joint_count)
                    .map(|channel| (channel.joint, channel.property, data.channel_record(channel, &mut shared_times)))
                    .collect(),
            };
            // Per joint and property, its record's index among the animation's (a later record of
            // the same property wins, as it did when each had its slot).
            let wide = records.len() >= crate::anim::CHANNEL_TABLE_NARROW_RECORDS;
            let mut table = vec![if wide { u32::MAX } else { NO_CHANNEL }; joint_count * 3];
            let first_channel = data.channels.len() as u32;
            for (index, (joint, property, record)) in records.into_iter().enumerate() {
                table[joint * 3 + property as usize] = index as u32;
                data.channels.push(record);
            }
            let table_start = data.values.len() as u32;
            match wide {
                true => data.values.extend(&table),
                false => data.values.extend(table.chunks(2).map(|pair| pair[0] | pair.get(1).map_or(0, |high| high << 16))),
            }
            debug_assert_eq!(data.values.len() - table_start as usize, crate::anim::channel_table_words(joint_count, wide));
            let first_weight_channel = data.channels.len() as u32;
            data.channels.resize(data.channels.len() + target_count, GpuChannel::default());
            for channel in animation.weights.iter().filter(|channel| channel.target < target_count) {
                let record = data.weight_record(channel, &mut shared_times);
                data.channels[first_weight_channel as usize + channel.target] = record;
            }
            data.starts.push((first_channel, first_weight_channel, table_start | if wide { CHANNEL_TABLE_WIDE } else { 0 }));
        }
        if data.channels.is_empty() {
            data.channels.push(GpuChannel::default());
        }
        if data.times.is_empty() {
            data.times.push(0.0);
        }
        if data.values.is_empty() {
            data.values.push(0);
        }
        data
    }

    /// Where `times` are in `self.times`: stored now, or where an equal list already is.
    fn time_record(&mut self, times: &KeyTimes, shared_times: &mut HashMap<Vec<u32>, u32>) -> u32 {
        let stored_times: Vec<f32> = match times {
            KeyTimes::Uniform { start, step, .. } => vec![*start, *step],
            KeyTimes::Listed(times) => times.clone(),
        };
        let next = self.times.len() as u32;
        *shared_times.entry(stored_times.iter().map(|time| time.to_bits()).collect()).or_insert_with(|| {
            self.times.extend(&stored_times);
            next
        })
    }

    /// A weight channel as a one-component channel record (`PROPERTY_WEIGHT`, x keyed).
    fn weight_record(&mut self, channel: &WeightChannel, shared_times: &mut HashMap<Vec<u32>, u32>) -> GpuChannel {
        let first_time = self.time_record(&channel.times, shared_times);
        let first_value = self.values.len() as u32;
        self.values.extend(channel.values.iter().map(|value| value.to_bits()));
        GpuChannel {
            packed: PROPERTY_WEIGHT
                | (channel.interpolation as u32) << CHANNEL_INTERPOLATION_SHIFT
                | 1 << CHANNEL_COMPONENTS_SHIFT
                | if channel.times.is_uniform() { CHANNEL_UNIFORM } else { 0 },
            key_count: channel.times.count() as u32,
            first_time,
            first_value,
        }
    }

    fn channel_record(&mut self, channel: &Channel, shared_times: &mut HashMap<Vec<u32>, u32>) -> GpuChannel {
        let first_time = self.time_record(&channel.times, shared_times);
        let has_base = channel.stores_base();
        let first_value = self.values.len() as u32;
        if has_base {
            self.values.extend(channel.base.to_array().map(f32::to_bits));
        }
        self.values.extend(channel.values.iter().map(|value| value.to_bits()));
        let flag = |on: bool, bit: u32| if on { bit } else { 0 };
        GpuChannel {
            packed: channel.property as u32
                | (channel.interpolation as u32) << CHANNEL_INTERPOLATION_SHIFT
                | u32::from(channel.mask & 0b1111) << CHANNEL_COMPONENTS_SHIFT
                | flag(channel.implied_w, CHANNEL_IMPLIED_W)
                | flag(channel.times.is_uniform(), CHANNEL_UNIFORM)
                | flag(channel.wraps, CHANNEL_WRAPS)
                | flag(has_base, CHANNEL_HAS_BASE),
            key_count: channel.times.count() as u32,
            first_time,
            first_value,
        }
    }

    /// A compressed track's record: a constant as one linear key, a packed track as its samples'
    /// start and step and its words (`CHANNEL_PACKED`).
    fn track_record(
        &mut self,
        compressed: &CompressedAnimation,
        track: &Track,
        shared_times: &mut HashMap<Vec<u32>, u32>,
    ) -> GpuChannel {
        let rotation = track.property == Property::Rotation;
        let first_value = self.values.len() as u32;
        let (times, flags) = match &track.data {
            TrackData::Constant(value) => {
                let components = if rotation { 4 } else { 3 };
                self.values.extend(value.to_array()[..components].iter().map(|value| value.to_bits()));
                (compressed.constant_times(), if rotation { 0b1111 } else { 0b0111 } << CHANNEL_COMPONENTS_SHIFT)
            }
            TrackData::Packed(words) => {
                self.values.extend(words);
                (compressed.times.clone(), CHANNEL_PACKED)
            }
        };
        GpuChannel {
            packed: track.property as u32
                | (Interpolation::Linear as u32) << CHANNEL_INTERPOLATION_SHIFT
                | if times.is_uniform() { CHANNEL_UNIFORM } else { 0 }
                | flags,
            key_count: times.count() as u32,
            first_time: self.time_record(&times, shared_times),
            first_value,
        }
    }
}
