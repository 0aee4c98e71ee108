//! Root motion (issue 57): a clip that carries the figure along the ground is played in place, and
//! the instance is moved by the motion taken out of it ([`RootMotion`], made by
//! `Model::extract_root_motion`), accumulated across the clip's loops, so that a walker keeps
//! walking where it would jump back at every loop. Ozz-animation's motion-extraction sample and
//! Unreal's and Unity's root motion do the same.
//!
//! Everything is a closed form of the clock, so the CPU and the GPU agree on where an instance is
//! at any time without either keeping it from frame to frame: the motion between two clip times is
//! the clip's motion over whole loops (its per-loop move raised to the number of loops, turn
//! included) between the two partial ones. A crossfade blends the two clips' motion step by step
//! over the fade ([`FADE_STEPS`]); a layer whose joints carry the motion blends it by its weight.
//! `instances.comp.glsl` mirrors this file.

use glam::{DVec2, Vec3};

use super::{Clip, InstanceState};

/// Steps a crossfade's blended motion is summed over (the instances pass takes as many).
pub const FADE_STEPS: usize = 64;

/// A move on the ground: a turn of `yaw` about +Y (as `Quat::from_rotation_y` turns), then
/// `offset` (x, z). Kept in f64 on the CPU, as the clock is.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Motion {
    pub offset: DVec2,
    pub yaw: f64,
}

/// `v` (x, z) turned by `yaw` about +Y.
fn turned(v: DVec2, yaw: f64) -> DVec2 {
    let (sin, cos) = yaw.sin_cos();
    DVec2::new(cos * v.x + sin * v.y, -sin * v.x + cos * v.y)
}

impl Motion {
    pub const IDENTITY: Motion = Motion { offset: DVec2::ZERO, yaw: 0.0 };

    /// This move, then `next` made from where it leaves the figure (the matrix product).
    pub fn then(self, next: Motion) -> Motion {
        Motion { offset: self.offset + turned(next.offset, self.yaw), yaw: self.yaw + next.yaw }
    }

    pub fn inverse(self) -> Motion {
        Motion { offset: -turned(self.offset, -self.yaw), yaw: -self.yaw }
    }

    /// Between this move and `other` by `weight` (0: this), offsets and turns alike.
    pub fn lerp(self, other: Motion, weight: f64) -> Motion {
        Motion { offset: self.offset.lerp(other.offset, weight), yaw: self.yaw + (other.yaw - self.yaw) * weight }
    }

    /// This move made `times` times over (negative: undone), in closed form: the offsets of a
    /// turning walk sum as a geometric series, `turned(offset, (k - 1)·θ/2) · sin(k·θ/2) / sin(θ/2)`,
    /// which is k × offset where θ is 0.
    pub fn repeated(self, times: f64) -> Motion {
        let half = 0.5 * self.yaw;
        let sin = half.sin();
        let factor = if sin.abs() < 1e-9 { times } else { (times * half).sin() / sin };
        Motion { offset: turned(self.offset, (times - 1.0) * half) * factor, yaw: times * self.yaw }
    }
}

/// The motion taken out of an animation: its carrying joint's frame on the ground (where the joint
/// stands, x and z, and how far it has turned about +Y since the animation's start), sampled
/// evenly from its time 0. The clip in place is its keys seen from that frame: the joint over the
/// model's origin, facing as it started.
#[derive(Clone, Debug, PartialEq)]
pub struct RootMotion {
    /// The joint that carried the figure (its root, or the hips where the root stays put).
    pub joint: usize,
    /// That joint and its ancestors: a layer over any of them carries the motion too.
    pub carriers: Vec<usize>,
    /// Seconds between samples.
    pub step: f32,
    /// (x, z, yaw) per sample, as a [`Motion`] from the model's origin; the yaw unwrapped from
    /// sample to sample.
    pub samples: Vec<[f32; 3]>,
}

impl RootMotion {
    /// Sample `index` as a move.
    pub fn sample(&self, index: usize) -> Motion {
        let [x, z, yaw] = self.samples[index];
        Motion { offset: DVec2::new(f64::from(x), f64::from(z)), yaw: f64::from(yaw) }
    }

    /// The joint's ground frame at `time`, between the samples (held past the ends).
    pub fn at(&self, time: f32) -> Motion {
        match self.samples.len() {
            0 => Motion::IDENTITY,
            1 => self.sample(0),
            count => {
                let at = (time / self.step.max(f32::MIN_POSITIVE)).clamp(0.0, (count - 1) as f32);
                let index = (at as usize).min(count - 2);
                self.sample(index).lerp(self.sample(index + 1), f64::from(at - index as f32))
            }
        }
    }
}

impl Clip {
    /// The loop a clip time falls in and the time within it ([`Clip::loop_time`]'s wrap).
    fn loop_of(&self, seconds: f64) -> (f64, f32) {
        let within = self.loop_time(seconds);
        (((seconds - f64::from(within)) / f64::from(self.duration)).round(), within)
    }

    /// The root motion from clip time `from` to `to` (any, unwrapped: `seconds × speed + phase`),
    /// seen from where the figure stands at `from`: the partial loop back to the loop's start, the
    /// whole loops between, the partial loop to `to`. None moves a clip without root motion.
    pub fn motion_between(&self, from: f64, to: f64) -> Motion {
        let Some(track) = self.motion.as_deref() else { return Motion::IDENTITY };
        if self.duration.is_nan() || self.duration <= 0.0 {
            return Motion::IDENTITY;
        }
        let start = track.at(self.start).inverse();
        let within = |time: f32| start.then(track.at(self.start + time));
        let ((loops_from, time_from), (loops_to, time_to)) = (self.loop_of(from), self.loop_of(to));
        within(time_from).inverse().then(within(self.duration).repeated(loops_to - loops_from)).then(within(time_to))
    }
}

/// Whether the layer over `joint` carries `clip`'s motion (its joint or an ancestor is `joint`).
pub fn layer_carries(clip: &Clip, joint: usize) -> bool {
    clip.motion.as_deref().is_some_and(|track| track.carriers.contains(&joint))
}

impl InstanceState {
    /// The time its `position` and `yaw` hold at: a crossfade's start, else its `anchor`.
    pub fn origin(&self) -> f64 {
        match self.fade {
            Some(fade) if fade.duration > 0.0 => fade.started,
            _ => self.anchor,
        }
    }

    /// Where the instance stands and faces at `seconds` on the shared clock, `clips` its model's:
    /// its position and yaw moved by its clips' root motion since [`InstanceState::origin`].
    pub fn placement(&self, clips: &[Clip], seconds: f64) -> (Vec3, f32) {
        self.moved_by(self.carried(clips, self.origin(), seconds))
    }

    /// Its position and yaw moved by `motion` (made in its own frame: turned by its yaw, scaled).
    pub fn moved_by(&self, motion: Motion) -> (Vec3, f32) {
        let offset = turned(motion.offset, f64::from(self.yaw)) * f64::from(self.scale);
        (self.position + Vec3::new(offset.x as f32, 0.0, offset.y as f32), self.yaw + motion.yaw as f32)
    }

    /// The root motion from `from` to `to` (seconds on the shared clock): its clip's (blended with
    /// a layer that carries motion), or during a crossfade, which must begin at `from`, the two
    /// clips' blended step by step over the fade and the new clip's after it.
    pub fn carried(&self, clips: &[Clip], from: f64, to: f64) -> Motion {
        let Some(clip) = self.clip.and_then(|clip| clips.get(clip)) else { return Motion::IDENTITY };
        let local = |seconds: f64| seconds * f64::from(self.speed) + f64::from(self.phase);
        let layer = self
            .layer
            .and_then(|layer| Some((clips.get(layer.clip)?, layer)))
            .filter(|(clip, layer)| layer.weight > 0.0 && layer_carries(clip, layer.joint));
        let steady = |clip: &Clip, from: f64, to: f64| {
            let motion = clip.motion_between(local(from), local(to));
            match layer {
                Some((layered, layer)) => motion.lerp(layered.motion_between(local(from), local(to)), f64::from(layer.weight)),
                None => motion,
            }
        };
        let fade = self.fade.filter(|fade| fade.duration > 0.0).and_then(|fade| Some((clips.get(fade.from_clip)?, fade)));
        let Some((faded, fade)) = fade else { return steady(clip, from, to) };
        let end = fade.started + f64::from(fade.duration);
        // Each step's moves of both clips, blended by the fade's progress at its middle.
        let blended = |to: f64| {
            let step = (to - fade.started) / FADE_STEPS as f64;
            (0..FADE_STEPS).fold(Motion::IDENTITY, |motion, index| {
                let at = fade.started + step * index as f64;
                let weight = (at + 0.5 * step - fade.started) / f64::from(fade.duration);
                motion.then(steady(faded, at, at + step).lerp(steady(clip, at, at + step), weight))
            })
        };
        if to < fade.started {
            steady(clip, from, to)
        } else if to < end {
            blended(to)
        } else {
            blended(end).then(steady(clip, end, to))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A move repeated k times in closed form is the move composed k times, turning or not, and
    /// repeating it −k times undoes it.
    #[test]
    fn repeated_moves_compose() {
        for yaw in [0.0, 1e-12, 0.3, -2.5] {
            let step = Motion { offset: DVec2::new(0.4, 1.3), yaw };
            let mut composed = Motion::IDENTITY;
            for times in 0..12 {
                let closed = step.repeated(times as f64);
                assert!((closed.offset - composed.offset).length() < 1e-9, "yaw {yaw}, {times} times");
                assert!((closed.yaw - composed.yaw).abs() < 1e-12);
                let back = closed.then(step.repeated(-(times as f64)));
                assert!(back.offset.length() < 1e-9 && back.yaw.abs() < 1e-12);
                composed = composed.then(step);
            }
        }
    }
}
