//! What this frame's motion is measured from: last frame's camera, whether every instance starts
//! anew, the weights set by hand, and (the `cpu` strategy) each instance's record and where its
//! vertices were. The instances pass flags each instance's data on the GPU (instances.comp.glsl:
//! `INSTANCE_STILL`, `INSTANCE_RESTART`) from the flags this history gives it; the cull pass adds
//! what only the GPU knows (drawn last frame, a new palette now) and decides `MOTION_MOVING`.
//! The `cpu` strategy skins on the CPU and flags its records here by the same rules
//! (`cpu_instances`, the reference the instances pass is tested against).

use glam::Mat4;

use super::shader_types::{
    InstanceData, WalkArea, INSTANCES_OVERRIDES_CHANGED, INSTANCES_RESTART_ALL, INSTANCE_FLAGS, INSTANCE_RESTART, INSTANCE_STILL,
};

/// Last frame's camera and weights set by hand; the `cpu` strategy's records and positions.
pub struct FrameHistory {
    view_projection: Option<Mat4>,
    /// The next frame starts every instance's motion anew: the first, or one after a cut.
    restart_all: bool,
    overrides: Vec<Option<f32>>,
    /// `cpu`: last frame's records, and every instance's positions last frame.
    cpu: Option<CpuHistory>,
}

struct CpuHistory {
    instances: Vec<InstanceData>,
    /// This frame's records with their flags (`cpu_instances`), kept to be written again next
    /// frame: not allocated anew every frame.
    flagged: Vec<InstanceData>,
    /// Every instance's positions last frame (instance after instance, each its model's vertex
    /// count: `lengths`).
    positions: Vec<[f32; 3]>,
    /// This frame's, written beside the mapped buffer as the CPU skins (`cpu_positions_now`).
    now: Vec<[f32; 3]>,
    /// How many of each instance's positions it skinned (its level's prefix; 0: none).
    counts: Vec<u32>,
    /// Each instance's vertices (its model's).
    lengths: Vec<usize>,
}

impl FrameHistory {
    /// No history yet: the first frame has no motion. `cpu`: keep the records and the vertices'
    /// positions, instance i's `lengths[i]` of them (its model's vertex count).
    pub fn new(cpu: bool, lengths: &[usize]) -> FrameHistory {
        let total: usize = lengths.iter().sum();
        let cpu = cpu.then(|| CpuHistory {
            instances: Vec::new(),
            flagged: Vec::new(),
            positions: vec![[0.0; 3]; total],
            now: vec![[0.0; 3]; total],
            counts: vec![0; lengths.len()],
            lengths: lengths.to_vec(),
        });
        FrameHistory { view_projection: None, restart_all: true, overrides: Vec::new(), cpu }
    }

    /// Last frame's view-projection (this one's on the first frame), and this one kept for the next.
    pub fn camera(&mut self, view_projection: Mat4) -> Mat4 {
        self.view_projection.replace(view_projection).unwrap_or(view_projection)
    }

    /// The next frame's camera starts anew (the target was resized: its aspect jumped).
    pub fn cut_camera(&mut self) {
        self.view_projection = None;
    }

    /// The next frame starts anew: the camera and every instance (a cut, a jump of the clock).
    pub fn cut(&mut self) {
        self.view_projection = None;
        self.restart_all = true;
    }

    /// This frame's flags for the instances pass: `INSTANCES_RESTART_ALL` on the first frame and
    /// after a cut, `INSTANCES_OVERRIDES_CHANGED` where the weights set by hand are not last
    /// frame's; these kept for the next.
    pub fn instance_flags(&mut self, overrides: &[Option<f32>]) -> u32 {
        let mut flags = 0;
        if std::mem::take(&mut self.restart_all) {
            flags |= INSTANCES_RESTART_ALL;
        }
        if self.overrides != overrides {
            flags |= INSTANCES_OVERRIDES_CHANGED;
            self.overrides = overrides.to_vec();
        }
        flags
    }

    /// `cpu`: the records with their motion flags, as the instances pass flags its own, and these
    /// kept for the next frame: still where the record is last frame's (and no weight set by hand
    /// changed: `flags`); restarting where the record says so (a teleport), after a cut, where
    /// there was none, and where the pose jumps: a clip switched without a crossfade, a layer put
    /// on or off, or a switch of skinning mode. Empty for the other strategies.
    pub fn cpu_instances(&mut self, instances: &[InstanceData], flags: u32, area: Option<WalkArea>) -> &[InstanceData] {
        let Some(cpu) = &mut self.cpu else { return &[] };
        let previous = if flags & INSTANCES_RESTART_ALL != 0 { &[][..] } else { &cpu.instances[..] };
        let same_overrides = flags & INSTANCES_OVERRIDES_CHANGED == 0;
        cpu.flagged.clear();
        cpu.flagged.extend(instances.iter().enumerate().map(|(index, &instance)| {
            let mut flagged = instance;
            let flags = match previous.get(index) {
                None => INSTANCE_RESTART,
                Some(previous) if jumps(previous, &instance, area) => INSTANCE_RESTART,
                Some(previous) if same_overrides && previous.without_flags() == instance.without_flags() => INSTANCE_STILL,
                Some(_) => 0,
            };
            flagged.skinning |= flags;
            flagged
        }));
        cpu.instances.clear();
        cpu.instances.extend(instances.iter().map(InstanceData::without_flags));
        &cpu.flagged
    }

    /// `cpu`, a frame without the velocity target: no position is kept, so the next frame with
    /// it has no motion of its own.
    pub fn forget_cpu_positions(&mut self) {
        if let Some(cpu) = &mut self.cpu {
            cpu.counts.fill(0);
        }
    }

    /// `cpu`, a frame with the velocity target: where the skinning writes this frame's positions
    /// (laid out as the skinned buffer), for `cpu_previous_positions`.
    pub fn cpu_positions_now(&mut self) -> Option<&mut [[f32; 3]]> {
        self.cpu.as_mut().map(|cpu| &mut cpu.now[..])
    }

    /// `cpu`: each skinned vertex's position last frame into `previous` (beside this frame's
    /// vertices, laid out as they are), and this frame's (`cpu_positions_now`) kept.
    /// An instance that is still or restarts, or whose vertices were not all skinned last frame
    /// (culled, or a coarser level's prefix), was where it is: the GPU's `MOTION_MOVING` rule.
    pub fn cpu_previous_positions(&mut self, instances: &[InstanceData], counts: &[u32], previous: &mut [[f32; 3]]) {
        let Some(cpu) = &mut self.cpu else { return };
        // Each instance's rows of the three, one after another.
        let (mut kept, mut previous, mut now) = (&mut cpu.positions[..], previous, &cpu.now[..]);
        let mut rows = Vec::with_capacity(cpu.lengths.len());
        for &length in &cpu.lengths {
            let length = length.min(kept.len()).min(previous.len()).min(now.len());
            let (kept_row, kept_rest) = std::mem::take(&mut kept).split_at_mut(length);
            let (previous_row, previous_rest) = std::mem::take(&mut previous).split_at_mut(length);
            let (now_row, now_rest) = now.split_at(length);
            (kept, previous, now) = (kept_rest, previous_rest, now_rest);
            rows.push((kept_row, previous_row, now_row));
        }
        // Instance by instance on every core, as the skinning before it.
        use rayon::prelude::*;
        let rows = rows.into_par_iter().zip(instances.par_iter().zip(counts)).zip(&mut cpu.counts);
        rows.for_each(|(((kept, previous, now), (instance, &count)), kept_count)| {
            let count = (count as usize).min(kept.len());
            let moving = instance.skinning & INSTANCE_FLAGS == 0 && *kept_count as usize >= count;
            for ((kept, previous), &now) in kept[..count].iter_mut().zip(&mut previous[..count]).zip(&now[..count]) {
                *previous = if moving { *kept } else { now };
                *kept = now;
            }
            *kept_count = count as u32;
        });
    }
}

/// The pose jumps from `previous` to `now`: animation a changed other than by a crossfade's end
/// (a fade from a to b ends with b as a), the layer's animation or joint changed, or the skinning
/// mode did.
fn jumps(previous: &InstanceData, now: &InstanceData, area: Option<WalkArea>) -> bool {
    let faded_in = previous.fading() && now.animation_a() == previous.animation_b();
    let switched = now.animation_a() != previous.animation_a() && !faded_in;
    let layer_switched = previous.layer != now.layer && (previous.layered() || now.layered());
    let wrapped = area.is_some_and(|area| area.wrapped(previous.position(), now.position()));
    switched || layer_switched || wrapped || previous.dual_quaternion() != now.dual_quaternion()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::shader_types::{NO_CLIP, SKINNING_DUAL_QUATERNION};
    use bytemuck::Zeroable;

    fn playing(animation: u32, time: f32) -> InstanceData {
        InstanceData { animations: animation | NO_CLIP << 16, time_a: time, layer: NO_CLIP, ..InstanceData::zeroed() }
    }

    fn flags(history: &mut FrameHistory, instance: InstanceData) -> u32 {
        flags_with(history, instance, &[])
    }

    fn flags_with(history: &mut FrameHistory, instance: InstanceData, overrides: &[Option<f32>]) -> u32 {
        let frame = history.instance_flags(overrides);
        history.cpu_instances(&[instance], frame, None)[0].skinning & INSTANCE_FLAGS
    }

    #[test]
    fn records_are_flagged_still_restarting_or_moving() {
        let mut history = FrameHistory::new(true, &[0]);
        assert_eq!(flags(&mut history, playing(0, 0.1)), INSTANCE_RESTART, "the first frame");
        assert_eq!(flags(&mut history, playing(0, 0.2)), 0, "playing on");
        assert_eq!(flags(&mut history, playing(0, 0.2)), INSTANCE_STILL, "paused");
        assert_eq!(flags(&mut history, playing(1, 0.2)), INSTANCE_RESTART, "a clip switched without a crossfade");
        // A crossfade from 1 to 2: it starts with a unchanged and ends with b as a.
        let fading = InstanceData { animations: 1 | 2 << 16, blend: 0.5, ..playing(1, 0.3) };
        assert_eq!(flags(&mut history, fading), 0, "a crossfade starts");
        assert_eq!(flags(&mut history, playing(2, 0.4)), 0, "a crossfade ends");
        let layered = InstanceData { layer: 3 | 4 << 16, layer_weight: 1.0, ..playing(2, 0.5) };
        assert_eq!(flags(&mut history, layered), INSTANCE_RESTART, "a layer put on");
        let dual = InstanceData { skinning: SKINNING_DUAL_QUATERNION, ..layered };
        assert_eq!(flags(&mut history, dual), INSTANCE_RESTART, "a switch of skinning mode");
        assert_eq!(flags(&mut history, dual.restart_motion()), INSTANCE_RESTART | INSTANCE_STILL, "a teleport the caller marks");
        history.cut();
        assert_eq!(flags(&mut history, dual), INSTANCE_RESTART, "after a cut");
        // A weight set by hand that changes moves even a paused instance.
        assert_eq!(flags_with(&mut history, dual, &[Some(0.5)]), 0);
    }
}
