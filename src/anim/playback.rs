//! Playback: the clips an instance plays, its crossfade and layer, and where it stands. Plain
//! state, advanced by the application; `render::shader_types::InstanceData::of` packs what the
//! GPU reads of it each frame.

use glam::{Mat4, Vec3};

use super::Clip;

/// A second clip over part of the skeleton: `joint` and everything under it blend toward the
/// layer's pose by `weight` (ozz-animation's partial blending, done per instance on the GPU).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layer {
    pub clip: usize,
    pub joint: usize,
    pub weight: f32,
}

/// What one instance plays at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Playback {
    /// (animation, time): the clip playing, or during a crossfade the one fading out.
    pub a: Option<(usize, f32)>,
    /// (animation, time) of the clip fading in, blended over `a` by `blend`.
    pub b: Option<(usize, f32)>,
    pub blend: f32,
    /// The layer, its animation and time.
    pub layer: Option<(Layer, usize, f32)>,
}

/// A crossfade in progress: the clip fading out, and when the fade began.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fade {
    pub from_clip: usize,
    pub started: f64,
    /// Seconds; 0 switches at once.
    pub duration: f32,
}

/// How an instance's vertices blend their joints' palette matrices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Skinning {
    /// Linear blend skinning: the weighted sum of the matrices.
    #[default]
    Linear,
    /// Dual-quaternion skinning ([`super::dual_quaternion`]): twists keep their volume.
    DualQuaternion,
}

impl Skinning {
    pub const ALL: [Skinning; 2] = [Skinning::Linear, Skinning::DualQuaternion];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Skinning::Linear => "linear",
            Skinning::DualQuaternion => "dual-quaternion",
        }
    }

    pub fn parse(text: &str) -> Option<Skinning> {
        Skinning::ALL.into_iter().find(|mode| mode.name().eq_ignore_ascii_case(text.trim()))
    }
}

/// One animated copy of the model in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstanceState {
    /// Where it stands and which way it faces at [`InstanceState::origin`] (its `anchor`, or a
    /// crossfade's start): its clips' root motion moves it from there ([`InstanceState::placement`]).
    pub position: Vec3,
    pub yaw: f32,
    /// Seconds on the shared clock at which `position` and `yaw` hold where no crossfade is set.
    pub anchor: f64,
    /// None: the bind pose.
    pub clip: Option<usize>,
    /// Set while the previous clip fades out into `clip` (blended on the GPU, in the palette pass).
    pub fade: Option<Fade>,
    /// A second clip over a subtree, e.g. a wave over a walk.
    pub layer: Option<Layer>,
    /// Seconds added to the shared clock, so instances are out of step.
    pub phase: f32,
    pub speed: f32,
    pub skinning: Skinning,
    /// Uniform scale about its origin (1: the model's own size).
    pub scale: f32,
    /// A hue (linear RGB) the forward pass moves the surface's colours toward, and how far (0: the
    /// model's own colours; 1: all the way, for fully saturated colours).
    pub tint: [f32; 4],
}

impl Default for InstanceState {
    /// At the origin, facing +Z, in its bind pose, at its own size and colour.
    fn default() -> InstanceState {
        InstanceState {
            position: Vec3::ZERO,
            yaw: 0.0,
            anchor: 0.0,
            clip: None,
            fade: None,
            layer: None,
            phase: 0.0,
            speed: 1.0,
            skinning: Skinning::Linear,
            scale: 1.0,
            tint: [1.0, 1.0, 1.0, 0.0],
        }
    }
}

impl InstanceState {
    /// Switches to `clip`, crossfading from the current one over `fade_seconds` from `now`.
    pub fn switch_clip(&mut self, clip: usize, now: f64, fade_seconds: f32) {
        if self.clip == Some(clip) {
            return;
        }
        self.fade = match self.clip {
            Some(from_clip) if fade_seconds > 0.0 => Some(Fade { from_clip, started: now, duration: fade_seconds }),
            _ => None,
        };
        self.clip = Some(clip);
    }

    /// What this instance plays at `seconds` on the shared clock: the clip fading out as a and
    /// the clip fading in as b with the fade's progress, or the one clip as a, each as its
    /// animation and the animation's time; and the layer.
    pub fn playback(&self, clips: &[Clip], seconds: f64) -> Playback {
        let local = seconds * f64::from(self.speed) + f64::from(self.phase);
        let clip_time = |index: usize| clips.get(index).map(|clip| (clip.animation, clip.animation_time(local)));
        let current = self.clip.and_then(clip_time);
        // A fade that starts after `seconds` (the viewer's clock was moved back past it) is over.
        let fading = self.fade.and_then(|fade| {
            let progress = ((seconds - fade.started) / f64::from(fade.duration)) as f32;
            (0.0..1.0).contains(&progress).then(|| clip_time(fade.from_clip).map(|from| (from, progress))).flatten()
        });
        let (a, b, blend) = match (current, fading) {
            (Some(current), Some((from, progress))) => (Some(from), Some(current), progress),
            (Some(current), None) => (Some(current), None, 0.0),
            (None, _) => (None, None, 0.0),
        };
        let layer = self.layer.and_then(|layer| clip_time(layer.clip).map(|(animation, time)| (layer, animation, time)));
        Playback { a, b, blend, layer }
    }

    pub fn world(&self) -> Mat4 {
        world_transform(self.position, self.yaw, self.scale)
    }
}

/// An instance's world transform: a uniform `scale`, a turn of `yaw` about +Y, then `position`
/// (`instance_world` in common.glsl builds the same).
pub fn world_transform(position: Vec3, yaw: f32, scale: f32) -> Mat4 {
    Mat4::from_scale_rotation_translation(Vec3::splat(scale), glam::Quat::from_rotation_y(yaw), position)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crossfade plays both clips while it runs, the new one alone after it, and the new one
    /// alone when the clock is moved back before the switch (a viewer's seek or reset).
    #[test]
    fn a_fade_runs_between_its_start_and_end_only() {
        let clip = |animation| Clip { name: String::new(), animation, start: 0.0, duration: 1.0, motion: None };
        let clips = [clip(0), clip(1)];
        let mut instance = InstanceState { clip: Some(0), ..InstanceState::default() };
        instance.switch_clip(1, 10.0, 0.5);
        let fading = instance.playback(&clips, 10.25);
        assert_eq!((fading.a.map(|(animation, _)| animation), fading.b.map(|(animation, _)| animation)), (Some(0), Some(1)));
        assert!((fading.blend - 0.5).abs() < 1e-6);
        for seconds in [11.0, 2.0] {
            let alone = instance.playback(&clips, seconds);
            assert_eq!((alone.a.map(|(animation, _)| animation), alone.b), (Some(1), None), "at {seconds} s");
        }
    }
}
