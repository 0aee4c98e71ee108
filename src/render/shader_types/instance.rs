//! The instances' GPU types: each instance's record (what lives on the GPU between frames),
//! its data this frame (what the passes read), the clips the records name, the instances
//! pass's push constants and the flags in the data's `skinning` word.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3};

use super::NO_CLIP;
use crate::anim::{InstanceState, Playback, Skinning};

/// `Instance` in common.glsl: an instance's data this frame (`instances.data`), which the instances
/// pass makes from its [`InstanceRecord`] and the clock; the CPU reference is [`InstanceData::at`].
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct InstanceData {
    pub position_yaw: [f32; 4],
    /// Animation a in the low 16 bits, animation b in the high 16.
    pub animations: u32,
    pub time_a: f32,
    pub time_b: f32,
    /// 0: animation a alone; 1: animation b alone.
    pub blend: f32,
    /// Layer animation in the low 16 bits (NO_CLIP: none), its root joint in the high 16.
    pub layer: u32,
    pub time_layer: f32,
    pub layer_weight: f32,
    /// `SKINNING_*`: how the instance's vertices blend their joints (the low 16 bits); the
    /// instances pass adds the `INSTANCE_*` motion flags above them.
    pub skinning: u32,
    /// Uniform scale about the instance's origin, before the rotation (a crowd's sizes).
    pub scale: f32,
    /// A hue the forward pass moves the surface's colours toward and how far (a crowd's colours):
    /// RGBA8, linear, the amount in alpha (0: the model's own colours).
    pub tint: u32,
    /// (An instance's model is its slot's, `InstanceSlot::model`, fixed when the renderer is built.)
    pub unused: [u32; 2],
}

/// `InstanceRecord` in instances.comp.glsl: what lives on the GPU of an instance between frames,
/// rewritten only where something changed (`render::instances`); the instances pass makes each
/// frame's [`InstanceData`] from it and the frame's clock.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct InstanceRecord {
    pub position_yaw: [f32; 4],
    /// The clip playing in the low 16 bits, the clip fading out in the high 16: indices into the
    /// instances pass's clip records (every model's clips; NO_CLIP: none).
    pub clips: u32,
    /// The layer's clip in the low 16 bits (NO_CLIP: none), its root joint in the high 16.
    pub layer: u32,
    pub speed: f32,
    pub layer_weight: f32,
    /// Each clip's time at the renderer's epoch, wrapped into its span (in f64 on the CPU): the
    /// clip playing, the clip fading out, the layer's.
    pub base_clip: f32,
    pub base_from: f32,
    pub base_layer: f32,
    /// When the crossfade began, seconds from the epoch, and how long it lasts (0: none).
    pub fade_start: f32,
    pub fade_duration: f32,
    /// `SKINNING_*`, and `INSTANCE_RESTART` where the CPU marks a teleport (the pass clears it).
    pub skinning: u32,
    pub scale: f32,
    pub tint: u32,
}

/// `ClipRecord` in instances.comp.glsl: one of a model's clips.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ClipRecord {
    /// The model's own animation index (the passes add its `first_animation`).
    pub animation: u32,
    pub start: f32,
    /// Loop length, seconds (0 or less: the clip holds its start).
    pub duration: f32,
    /// Its animation's root motion (`anim::RootMotion`): the first of its samples in the instances
    /// pass's motion buffer (x, z, yaw, 0 each), how many (0: none) and the seconds between them.
    pub motion_first: u32,
    pub motion_count: u32,
    pub motion_step: f32,
    pub unused: [u32; 2],
}

/// `Push` in instances.comp.glsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct InstancesPush {
    pub count: u32,
    pub row_length: u32,
    /// The frame's time on the shared clock, seconds from the renderer's epoch.
    pub clock: f32,
    /// `INSTANCES_RESTART_ALL`, `INSTANCES_OVERRIDES_CHANGED`.
    pub flags: u32,
    /// Where root motion's walkers wrap ([`WalkArea::packed`]; no area: zeros).
    pub area: [f32; 4],
}

/// The ground a crowd's walkers stay on: one carried past an edge by its clip's root motion comes
/// back in at the opposite edge, its motion restarted there (no streak across the area).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WalkArea {
    /// The corner of least x and z.
    pub min: glam::Vec2,
    /// Its sides along x and z (more than 0).
    pub size: glam::Vec2,
}

impl WalkArea {
    /// (min x, min z, size x, size z), as the instances pass is pushed it; zeros for none.
    pub fn packed(area: Option<WalkArea>) -> [f32; 4] {
        area.map_or([0.0; 4], |area| [area.min.x, area.min.y, area.size.x, area.size.y])
    }

    /// `position` brought into the area along x and z.
    pub fn wrap(&self, position: Vec3) -> Vec3 {
        let inside = |value: f32, min: f32, size: f32| min + (value - min).rem_euclid(size);
        Vec3::new(inside(position.x, self.min.x, self.size.x), position.y, inside(position.z, self.min.y, self.size.y))
    }

    /// Whether an instance went from `before` to `after` round the area's edge, not by walking:
    /// further than half a side in one frame.
    pub fn wrapped(&self, before: Vec3, after: Vec3) -> bool {
        (after.x - before.x).abs() > 0.5 * self.size.x || (after.z - before.z).abs() > 0.5 * self.size.y
    }
}

/// `RESTART_ALL` in instances.comp.glsl: a cut (or the first frame): no instance moves by itself.
pub const INSTANCES_RESTART_ALL: u32 = 1;
/// `OVERRIDES_CHANGED`: a morph weight set by hand changed, so no instance is still.
pub const INSTANCES_OVERRIDES_CHANGED: u32 = 2;

/// `SKINNING_LINEAR` and `SKINNING_DUAL_QUATERNION` in common.glsl.
pub const SKINNING_LINEAR: u32 = 0;
pub const SKINNING_DUAL_QUATERNION: u32 = 1;
pub const SKINNING_MODE_MASK: u32 = 0xFFFF;
/// The instances pass found the data as last frame's: no motion of its own (common.glsl).
pub const INSTANCE_STILL: u32 = 1 << 30;
/// Its motion history starts anew this frame: a teleport or a cut, no streak (common.glsl).
pub const INSTANCE_RESTART: u32 = 1 << 31;
pub const INSTANCE_FLAGS: u32 = INSTANCE_STILL | INSTANCE_RESTART;
/// A tint as the shaders unpack it (unpackUnorm4x8): red in the low byte, the amount in the high.
pub fn pack_tint(tint: [f32; 4]) -> u32 {
    let [red, green, blue, amount] = tint.map(|channel| (channel.clamp(0.0, 1.0) * 255.0).round() as u32);
    red | green << 8 | blue << 16 | amount << 24
}

impl InstanceData {
    /// What `state` plays at `seconds` on the shared clock and where its root motion has carried
    /// it (within `area`, where walkers wrap), `clips` its model's: the CPU reference of what the
    /// instances pass makes of its record.
    pub fn at(state: &InstanceState, clips: &[crate::anim::Clip], seconds: f64, area: Option<WalkArea>) -> InstanceData {
        let mut data = InstanceData::of(state, &state.playback(clips, seconds));
        let (position, yaw) = state.placement(clips, seconds);
        let position = area.map_or(position, |area| area.wrap(position));
        data.position_yaw = position.extend(yaw).to_array();
        data
    }

    /// Packs an instance's place and what it plays for the cull and palette passes.
    pub fn of(state: &InstanceState, playback: &Playback) -> InstanceData {
        let animation =
            |played: Option<(usize, f32)>| played.map_or((NO_CLIP, 0.0), |(animation, time)| (animation as u32, time));
        let ((animation_a, time_a), (animation_b, time_b)) = (animation(playback.a), animation(playback.b));
        let (layer, time_layer, layer_weight) = match playback.layer {
            Some((layer, animation, time)) => (animation as u32 | (layer.joint.min(0x7FFF) as u32) << 16, time, layer.weight),
            None => (NO_CLIP, 0.0, 0.0),
        };
        InstanceData {
            position_yaw: state.position.extend(state.yaw).to_array(),
            animations: animation_a | (animation_b << 16),
            time_a,
            time_b,
            blend: playback.blend,
            layer,
            time_layer,
            layer_weight,
            skinning: match state.skinning {
                Skinning::Linear => SKINNING_LINEAR,
                Skinning::DualQuaternion => SKINNING_DUAL_QUATERNION,
            },
            scale: state.scale,
            tint: pack_tint(state.tint),
            unused: [0; 2],
        }
    }

    pub fn animation_a(&self) -> u32 {
        self.animations & 0xFFFF
    }

    pub fn animation_b(&self) -> u32 {
        self.animations >> 16
    }

    pub fn layer_animation(&self) -> u32 {
        self.layer & 0xFFFF
    }

    pub fn layer_joint(&self) -> u32 {
        self.layer >> 16
    }

    /// Fading from a to b (b is blended in).
    pub fn fading(&self) -> bool {
        self.animation_a() != NO_CLIP && self.animation_b() != NO_CLIP && self.blend > 0.0
    }

    /// The instance blends its joints as dual quaternions.
    pub fn dual_quaternion(&self) -> bool {
        self.skinning & SKINNING_MODE_MASK == SKINNING_DUAL_QUATERNION
    }

    /// This frame starts the instance's motion anew (a teleport, a cut): it shows no motion of its
    /// own, so nothing streaks from where it was. The renderer finds clip switches itself.
    pub fn restart_motion(mut self) -> InstanceData {
        self.skinning |= INSTANCE_RESTART;
        self
    }

    /// The record without the motion flags.
    pub fn without_flags(&self) -> InstanceData {
        InstanceData { skinning: self.skinning & !INSTANCE_FLAGS, ..*self }
    }

    /// A layer is blended over the subtree.
    pub fn layered(&self) -> bool {
        self.animation_a() != NO_CLIP && self.layer_animation() != NO_CLIP && self.layer_weight > 0.0
    }

    pub fn position(&self) -> Vec3 {
        Vec3::from_slice(&self.position_yaw[..3])
    }

    /// The instance's world transform, as palette.comp builds it.
    pub fn world(&self) -> Mat4 {
        let [x, y, z, yaw] = self.position_yaw;
        crate::anim::world_transform(Vec3::new(x, y, z), yaw, self.scale)
    }
}
