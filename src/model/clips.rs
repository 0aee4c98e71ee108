//! A model's clips: cut from a table of ranges, one a whole animation, compressed for the palette
//! pass.

use super::Model;
use crate::anim::{Clip, ClipRange, RangeUnit};

impl Model {
    /// Adds named clips cut from the first animation, before the whole animations' clips: frames
    /// count as the file does (frame f at f / frame rate, so Milkshape's 1-based frames and MD5's
    /// 0-based ones both land on their keys), seconds as they are. A clip plays from its first
    /// bound to its last and loops back.
    pub fn cut_clips(&mut self, ranges: &[ClipRange]) -> Result<(), String> {
        let Some(animation) = self.animations.first() else {
            return Err(format!("{} has no animation to cut clips from", self.name));
        };
        let mut cut = Vec::with_capacity(ranges.len());
        for range in ranges {
            let scale = match range.unit {
                RangeUnit::Seconds => 1.0,
                RangeUnit::Frames => match animation.frame_rate {
                    Some(rate) => 1.0 / f64::from(rate),
                    None => {
                        return Err(format!(
                            "clip \"{}\": {} counts time, not frames: give seconds, like {}s-{}s",
                            range.name, self.name, range.first, range.last
                        ))
                    }
                },
            };
            let (start, end) = (range.first * scale, range.last * scale);
            // A thousandth of a frame of slack for the last key's rounding.
            if end > f64::from(animation.duration) + scale * 1e-3 {
                return Err(format!(
                    "clip \"{}\" ends at {end:.3} s, past the end of \"{}\" ({:.3} s)",
                    range.name, animation.name, animation.duration
                ));
            }
            cut.push(Clip {
                name: range.name.clone(),
                animation: 0,
                start: start as f32,
                duration: (end - start) as f32,
                motion: None,
            });
        }
        cut.append(&mut self.clips);
        self.clips = cut;
        Ok(())
    }

    /// Gives every animation a clip of its own when the loader made none. Loaders call it last.
    pub fn clip_each_animation(&mut self) {
        if self.clips.is_empty() {
            self.clips = self
                .animations
                .iter()
                .enumerate()
                .map(|(index, animation)| Clip {
                    name: animation.name.clone(),
                    animation: index,
                    start: 0.0,
                    duration: animation.duration,
                    motion: animation.motion.clone(),
                })
                .collect();
        }
    }

    /// The bound clips are compressed within: ACL's scaled to the model's extent, each joint's shell
    /// reaching its farthest skinned vertex where the model has a mesh ([`Model::joint_shells`]).
    pub fn compression_precision(&self) -> crate::anim::compress::Precision {
        crate::anim::compress::Precision::for_figure(self.extent()).with_shells(&self.joint_shells())
    }

    /// Per joint, how far its farthest skinned vertex (any influence of weight above 0; the point
    /// the influence carries, with its offset where the model has them: MD5's weights) lies from it
    /// in its bind frame (through its inverse bind matrix, the frame the compression's virtual
    /// vertices sit in); 0 for a joint that moves no vertex, and empty without vertices.
    pub fn joint_shells(&self) -> Vec<f32> {
        if self.vertices.is_empty() {
            return Vec::new();
        }
        let mut shells = vec![0.0f32; self.skeleton.len()];
        for vertex in &self.vertices {
            let offsets = self.influence_offsets_of(vertex).iter().copied().chain(std::iter::repeat(glam::Vec3::ZERO));
            for (influence, offset) in
                self.influences_of(vertex).iter().zip(offsets).filter(|(influence, _)| influence.weight > 0.0)
            {
                let joint = influence.joint as usize;
                if let Some(joint_data) = self.skeleton.joints.get(joint) {
                    let distance = joint_data.inverse_bind.transform_point3(vertex.position + offset).length();
                    if distance.is_finite() {
                        shells[joint] = shells[joint].max(distance);
                    }
                }
            }
        }
        shells
    }

    /// Every animation's joint channels compressed (`anim::compress`) within
    /// [`Model::compression_precision`], animations in parallel: None for one without channels,
    /// or why it keeps its keys. [`Model::take_compressed`] puts them in.
    pub fn compressed_clips(&self) -> Vec<Option<Result<crate::anim::compress::CompressedAnimation, String>>> {
        use rayon::prelude::*;
        let precision = self.compression_precision();
        let (joints, targets) = (self.skeleton.len(), self.morph_targets.len());
        self.animations
            .par_iter()
            .map(|animation| {
                (!animation.channels.is_empty()).then(|| {
                    let compressed = crate::anim::compress::encode::compress(&self.skeleton, animation, &precision)?;
                    // A clip of few keys sampled densely (a spline, a key a few milliseconds from the next).
                    let keys = animation.key_gpu_bytes(joints, targets);
                    match animation.bytes_on_gpu(Some(&compressed), joints, targets) {
                        bytes if bytes >= keys => Err(format!("kept as keys: compressed it takes {bytes} B, its keys {keys} B")),
                        _ => Ok(compressed),
                    }
                })
            })
            .collect()
    }

    /// Plays the animations compressed ([`Model::compressed_clips`]); one that cannot be keeps its
    /// keys, with a note saying why.
    pub fn take_compressed(&mut self, compressed: Vec<Option<Result<crate::anim::compress::CompressedAnimation, String>>>) {
        for (animation, result) in self.animations.iter_mut().zip(compressed) {
            match result {
                Some(Ok(compressed)) => animation.compressed = Some(compressed),
                Some(Err(why)) => self.stats.notes.push(format!("clip \"{}\": {why}", animation.name)),
                None => {}
            }
        }
    }

    /// Compresses every animation ([`Model::compressed_clips`], [`Model::take_compressed`]).
    pub fn compress_clips(&mut self) {
        let compressed = self.compressed_clips();
        self.take_compressed(compressed);
    }
}
