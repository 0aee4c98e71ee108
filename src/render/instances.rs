//! Instances that live on the GPU. Each instance's state (its clip, crossfade, layer, phase,
//! speed, place, size, tint) is a record in a GPU buffer; each frame the instances pass
//! (instances.comp.glsl) makes what the other passes read from those records and the frame's
//! clock. The CPU writes a record only where the instance changed.
//!
//! [`Instances`] is the application's side: the states, and a log of which changed. A frame
//! shares them with the renderer ([`Instances::share`], a reference, not a copy); the renderer's
//! [`InstanceUploads`] remembers how far into the log it has uploaded, so that several renderers
//! can draw one scene and each uploads what changed since its own last frame.
//!
//! Times on the GPU are f32 seconds from the renderer's epoch: each record holds its clips' times
//! at the epoch (wrapped into their spans in f64), and the frame pushes the clock from the epoch.
//! When the clock is [`REBASE_SECONDS`] from the epoch the epoch moves to it and every record is
//! written again (once in that many seconds), so an f32 clock never grows past a few minutes and
//! keeps its precision however long the program runs.

use std::ops::{Deref, Index, IndexMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::shader_types::{pack_tint, ClipRecord, InstanceData, InstanceRecord, WalkArea, INSTANCE_RESTART, NO_CLIP};
use super::shader_types::{SKINNING_DUAL_QUATERNION, SKINNING_LINEAR};
use crate::anim::{Clip, InstanceState, Skinning};
use crate::model::Model;

/// How far the clock may move from the renderer's epoch before every record is written again:
/// f32 steps at 512 s are 61 µs, well under a frame.
pub const REBASE_SECONDS: f64 = 256.0;

/// Which edit an instance table is at: (table, generation, changes logged).
pub type TableVersion = (u64, u64, usize);

/// Every instance's state and which changed. Reads go through the slice (`instances[i].clip`,
/// `instances.iter()`); a write through `instances[i]` logs instance i, [`Instances::iter_mut`]
/// logs them all, [`Instances::restart_motion`] logs a teleport.
pub struct Instances {
    log: Arc<InstanceLog>,
}

#[derive(Clone)]
struct InstanceLog {
    /// Which table this is: a renderer that last drew another uploads every record.
    table: u64,
    /// Moves on where every instance changed at once; the log starts again.
    generation: u64,
    states: Vec<InstanceState>,
    /// The instances changed in this generation, in order (an instance may be there many times),
    /// each with whether its motion restarts (a teleport).
    changes: Vec<Change>,
}

#[derive(Clone, Copy, Debug)]
struct Change {
    index: u32,
    restart: bool,
    /// A teleport logged in the generation before, carried into this one (once).
    carried: bool,
}

impl InstanceLog {
    /// Every instance changes at once: the log starts again, carrying the teleports of the
    /// generation that ends (a renderer that had not written them still restarts those instances;
    /// one that had restarts them once more: a frame without motion of their own, never a streak).
    fn next_generation(&mut self) {
        self.generation += 1;
        self.changes.retain(|change| change.restart && !change.carried);
        self.changes.sort_unstable_by_key(|change| change.index);
        self.changes.dedup_by_key(|change| change.index);
        for change in &mut self.changes {
            change.carried = true;
        }
    }
}

/// Tables made so far: each new one takes the next number.
static TABLES: AtomicU64 = AtomicU64::new(0);

impl Instances {
    pub fn new(states: Vec<InstanceState>) -> Instances {
        let table = TABLES.fetch_add(1, Ordering::Relaxed);
        Instances { log: Arc::new(InstanceLog { table, generation: 0, states, changes: Vec::new() }) }
    }

    /// Which edit the table is at: another value after any change (what a cache of something
    /// worked out from every instance is keyed by).
    pub fn version(&self) -> TableVersion {
        (self.log.table, self.log.generation, self.log.changes.len())
    }

    /// The states as they are now, for a frame: shared, not copied (an edit after this, while the
    /// frame is still held, copies the table once).
    pub fn share(&self) -> InstanceSnapshot {
        InstanceSnapshot { log: self.log.clone() }
    }

    /// Every instance, to change: all of them are written again at the next frame.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, InstanceState> {
        let log = Arc::make_mut(&mut self.log);
        log.next_generation();
        log.states.iter_mut()
    }

    /// Instance `index` jumped (a teleport): its next frame shows no motion of its own, so nothing
    /// streaks from where it was. The renderer finds clip switches itself.
    pub fn restart_motion(&mut self, index: usize) {
        self.log_change(index, true);
    }

    fn log_change(&mut self, index: usize, restart: bool) {
        let log = Arc::make_mut(&mut self.log);
        // A log longer than the table says no more than "all of them": it starts again.
        if log.changes.len() >= log.states.len().max(64) {
            log.next_generation();
        }
        log.changes.push(Change { index: index as u32, restart, carried: false });
    }
}

impl Clone for Instances {
    /// Another table with the same states: editing one does not change the other.
    fn clone(&self) -> Instances {
        Instances::new(self.log.states.clone())
    }
}

impl From<Vec<InstanceState>> for Instances {
    fn from(states: Vec<InstanceState>) -> Instances {
        Instances::new(states)
    }
}

impl<'a> IntoIterator for &'a mut Instances {
    type Item = &'a mut InstanceState;
    type IntoIter = std::slice::IterMut<'a, InstanceState>;

    /// Every instance, to change ([`Instances::iter_mut`]).
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<'a> IntoIterator for &'a Instances {
    type Item = &'a InstanceState;
    type IntoIter = std::slice::Iter<'a, InstanceState>;

    fn into_iter(self) -> Self::IntoIter {
        self.log.states.iter()
    }
}

impl Deref for Instances {
    type Target = [InstanceState];

    fn deref(&self) -> &[InstanceState] {
        &self.log.states
    }
}

impl Index<usize> for Instances {
    type Output = InstanceState;

    fn index(&self, index: usize) -> &InstanceState {
        &self.log.states[index]
    }
}

impl IndexMut<usize> for Instances {
    fn index_mut(&mut self, index: usize) -> &mut InstanceState {
        assert!(index < self.log.states.len(), "instance {index} of {}", self.log.states.len());
        self.log_change(index, false);
        &mut Arc::make_mut(&mut self.log).states[index]
    }
}

impl std::fmt::Debug for Instances {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.share().fmt(formatter)
    }
}

/// A frame's view of the instances: their states, and the log the renderer uploads from.
#[derive(Clone)]
pub struct InstanceSnapshot {
    log: Arc<InstanceLog>,
}

impl InstanceSnapshot {
    pub fn states(&self) -> &[InstanceState] {
        &self.log.states
    }

    pub fn len(&self) -> usize {
        self.log.states.len()
    }

    pub fn is_empty(&self) -> bool {
        self.log.states.is_empty()
    }
}

impl std::fmt::Debug for InstanceSnapshot {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let log = &self.log;
        write!(
            formatter,
            "{} instances (table {}, generation {}, {} changes)",
            log.states.len(),
            log.table,
            log.generation,
            log.changes.len()
        )
    }
}

/// How far a renderer has uploaded a table.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Uploaded {
    table: u64,
    generation: u64,
    changes: usize,
}

/// A renderer's side of the records: what it uploaded so far, its epoch, and the clips the
/// records name (every model's, one after another: the instances pass's clip records).
pub struct InstanceUploads {
    /// Per model, its clips and where they start among all models' clips.
    clips: Vec<(u32, Vec<Clip>)>,
    instance_models: Vec<u32>,
    uploaded: Option<Uploaded>,
    epoch: f64,
    /// Where root motion's walkers wrap, as the records were last written for.
    area: Option<WalkArea>,
    /// This frame's instances to write, sorted, each once, with whether it restarts.
    due: Vec<Change>,
}

/// `InstanceRecord::layer`'s flag: the layer's joints carry its clip's root motion
/// ([`crate::anim::motion::layer_carries`]), so the layer blends the motion by its weight.
pub const LAYER_CARRIES_MOTION: u32 = 1 << 31;

/// The instances pass's clip tables: every model's clips (`ClipRecord`), and their animations'
/// root motion samples (x, z, yaw, 0), each animation's once.
#[derive(Debug, Default)]
pub struct ClipTables {
    pub records: Vec<ClipRecord>,
    pub motion: Vec<[f32; 4]>,
}

/// What a frame writes into the records: `records` in order, runs of consecutive instances.
#[derive(Debug, Default)]
pub struct Upload {
    pub records: Vec<InstanceRecord>,
    /// (first instance, count), covering `records` in order.
    pub runs: Vec<(u32, u32)>,
    /// The instances this frame restarts (teleports), for the `cpu` strategy's own flags.
    pub restarted: Vec<u32>,
    /// The frame's clock, seconds from the epoch (what the instances pass is pushed).
    pub clock: f32,
}

impl InstanceUploads {
    /// For instances of `models` (instance i of `models[instance_models[i]]`); an error where the
    /// models have more clips in all than 16 bits name (NO_CLIP taken).
    pub fn new(models: &[&Model], instance_models: &[u32]) -> Result<InstanceUploads, String> {
        let mut first = 0u32;
        let mut clips = Vec::with_capacity(models.len());
        for model in models {
            clips.push((first, model.clips.clone()));
            first = first.saturating_add(model.clips.len() as u32);
        }
        if first > NO_CLIP {
            return Err(format!("the models have {first} clips in all; at most {NO_CLIP} fit"));
        }
        Ok(InstanceUploads {
            clips,
            instance_models: instance_models.to_vec(),
            uploaded: None,
            epoch: 0.0,
            area: None,
            due: Vec::new(),
        })
    }

    /// Every model's clips, one after another: the instances pass's clip records, and the root
    /// motion they name (one zero record and sample where there are none: no buffer is empty).
    pub fn clip_tables(&self) -> ClipTables {
        let mut tables = ClipTables::default();
        let mut tracks: Vec<(&Arc<crate::anim::RootMotion>, u32)> = Vec::new();
        for clip in self.clips.iter().flat_map(|(_, clips)| clips.iter()) {
            let (motion_first, motion_count, motion_step) = match &clip.motion {
                Some(track) => {
                    let first = match tracks.iter().find(|(seen, _)| Arc::ptr_eq(seen, track)) {
                        Some(&(_, first)) => first,
                        None => {
                            let first = tables.motion.len() as u32;
                            tables.motion.extend(track.samples.iter().map(|&[x, z, yaw]| [x, z, yaw, 0.0]));
                            tracks.push((track, first));
                            first
                        }
                    };
                    (first, track.samples.len() as u32, track.step)
                }
                None => (0, 0, 0.0),
            };
            tables.records.push(ClipRecord {
                animation: clip.animation as u32,
                start: clip.start,
                duration: clip.duration,
                motion_first,
                motion_count,
                motion_step,
                unused: [0; 2],
            });
        }
        if tables.records.is_empty() {
            tables.records.push(ClipRecord::default());
        }
        if tables.motion.is_empty() {
            tables.motion.push([0.0; 4]);
        }
        tables
    }

    /// The next frame writes every record again (a renderer's resources were made anew).
    pub fn forget(&mut self) {
        self.uploaded = None;
    }

    /// What the frame at `seconds` writes of `instances` into `upload` (emptied first): every
    /// record where this renderer last drew another table, another generation of it, or the clock
    /// moved [`REBASE_SECONDS`] from the epoch (which then moves to `seconds`), or the walkers'
    /// `area` changed; else the instances logged since its last frame. None written in a steady
    /// scene.
    pub fn gather(&mut self, instances: &InstanceSnapshot, seconds: f64, area: Option<WalkArea>, upload: &mut Upload) {
        upload.records.clear();
        upload.runs.clear();
        upload.restarted.clear();
        let log = &instances.log;
        let now = Uploaded { table: log.table, generation: log.generation, changes: log.changes.len() };
        let continues = self.uploaded.is_some_and(|uploaded| {
            uploaded.table == now.table && uploaded.generation == now.generation && uploaded.changes <= now.changes
        });
        let rebase = (seconds - self.epoch).abs() > REBASE_SECONDS || area != self.area;
        self.area = area;
        // The log's entries this renderer has not seen.
        let since = self.uploaded.filter(|_| continues).map_or(0, |uploaded| uploaded.changes);
        self.due.clear();
        if continues && !rebase {
            self.due.extend_from_slice(&log.changes[since..]);
            self.due.sort_unstable_by_key(|change| change.index);
            self.due.dedup_by(|later, kept| {
                let same = later.index == kept.index;
                kept.restart |= same && later.restart;
                same
            });
            for change in &self.due {
                let index = change.index as usize;
                let Some(state) = log.states.get(index) else { continue };
                let mut record = self.record(index, state);
                if change.restart {
                    record.skinning |= INSTANCE_RESTART;
                    upload.restarted.push(change.index);
                }
                match upload.runs.last_mut() {
                    Some((first, count)) if *first + *count == change.index => *count += 1,
                    _ => upload.runs.push((change.index, 1)),
                }
                upload.records.push(record);
            }
        } else {
            self.epoch = seconds;
            // A teleport this renderer has not seen still restarts.
            let restarts: Vec<u32> =
                log.changes[since..].iter().filter(|change| change.restart).map(|change| change.index).collect();
            upload.records.extend(log.states.iter().enumerate().map(|(index, state)| self.record(index, state)));
            for &index in &restarts {
                if let Some(record) = upload.records.get_mut(index as usize) {
                    record.skinning |= INSTANCE_RESTART;
                }
            }
            upload.restarted = restarts;
            if !log.states.is_empty() {
                upload.runs.push((0, log.states.len() as u32));
            }
        }
        self.uploaded = Some(now);
        upload.clock = (seconds - self.epoch) as f32;
    }

    /// Instance `index`'s record at this renderer's epoch: where it stands then (or where a
    /// crossfade still running at the epoch began, which the pass blends the motion from).
    fn record(&self, index: usize, state: &InstanceState) -> InstanceRecord {
        let model = self.instance_models.get(index).copied().unwrap_or(0) as usize;
        let (first, clips) = self.clips.get(model).map_or((0, &[][..]), |(first, clips)| (*first, &clips[..]));
        // The clip's index among every model's, and its time at the epoch wrapped into its span.
        let local = self.epoch * f64::from(state.speed) + f64::from(state.phase);
        let clip = |index: usize| match clips.get(index) {
            Some(clip) => (first + index as u32, clip.loop_time(local)),
            None => (NO_CLIP, 0.0),
        };
        let (playing, base_clip) = state.clip.map_or((NO_CLIP, 0.0), clip);
        // A fade over by the epoch is left out: the clip alone plays, moved on from the epoch.
        let fade = state.fade.filter(|fade| {
            fade.duration > 0.0 && fade.from_clip < clips.len() && self.epoch < fade.started + f64::from(fade.duration)
        });
        let (from, base_from, fade_start, fade_duration) = match fade {
            Some(fade) => {
                let (from, base) = clip(fade.from_clip);
                (from, base, (fade.started - self.epoch) as f32, fade.duration)
            }
            None => (NO_CLIP, 0.0, 0.0, 0.0),
        };
        let (layer, base_layer, layer_weight) = match state.layer {
            Some(layer) => match clip(layer.clip) {
                (NO_CLIP, _) => (NO_CLIP, 0.0, 0.0),
                (index, base) => {
                    let carries = crate::anim::motion::layer_carries(&clips[layer.clip], layer.joint);
                    let flag = if carries { LAYER_CARRIES_MOTION } else { 0 };
                    (index | (layer.joint.min(0x7FFF) as u32) << 16 | flag, base, layer.weight)
                }
            },
            None => (NO_CLIP, 0.0, 0.0),
        };
        let (position, yaw) = state.placement(clips, fade.map_or(self.epoch, |fade| fade.started));
        let position = self.area.map_or(position, |area| area.wrap(position));
        InstanceRecord {
            position_yaw: position.extend(yaw).to_array(),
            clips: playing | from << 16,
            layer,
            speed: state.speed,
            layer_weight,
            base_clip,
            base_from,
            base_layer,
            fade_start,
            fade_duration,
            skinning: match state.skinning {
                Skinning::Linear => SKINNING_LINEAR,
                Skinning::DualQuaternion => SKINNING_DUAL_QUATERNION,
            },
            scale: state.scale,
            tint: pack_tint(state.tint),
        }
    }

    /// What the instances pass makes of `instances` at `seconds`, on the CPU, without the motion
    /// flags: the reference the `cpu` strategy skins from (`InstanceState::playback`, in f64).
    pub fn data(&self, instances: &InstanceSnapshot, seconds: f64) -> Vec<InstanceData> {
        instances
            .states()
            .iter()
            .enumerate()
            .map(|(index, state)| {
                let model = self.instance_models.get(index).copied().unwrap_or(0) as usize;
                let clips = self.clips.get(model).map_or(&[][..], |(_, clips)| &clips[..]);
                InstanceData::at(state, clips, seconds, self.area)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walker(count: usize) -> Instances {
        Instances::new(vec![InstanceState { clip: Some(0), ..InstanceState::default() }; count])
    }

    fn uploads() -> InstanceUploads {
        let clips = vec![Clip { name: "walk".into(), animation: 0, start: 0.5, duration: 2.0, motion: None }];
        InstanceUploads {
            clips: vec![(0, clips)],
            instance_models: vec![0; 8],
            uploaded: None,
            epoch: 0.0,
            area: None,
            due: Vec::new(),
        }
    }

    /// The first frame writes every record; a steady frame none; an edit the instances it touches,
    /// in runs; another renderer, or a copy of the table, everything again.
    #[test]
    fn only_what_changed_is_written() {
        let mut instances = walker(8);
        let (mut first, mut second) = (uploads(), uploads());
        let mut upload = Upload::default();
        first.gather(&instances.share(), 1.0, None, &mut upload);
        assert_eq!((upload.records.len(), &upload.runs[..]), (8, &[(0, 8)][..]), "the first frame");
        first.gather(&instances.share(), 1.1, None, &mut upload);
        assert!(upload.records.is_empty() && upload.runs.is_empty(), "a steady frame writes nothing");
        instances[3].speed = 2.0;
        instances[4].scale = 0.5;
        instances[3].phase = 0.25;
        instances.restart_motion(6);
        first.gather(&instances.share(), 1.2, None, &mut upload);
        assert_eq!(upload.runs, [(3, 2), (6, 1)], "instances 3, 4 and 6, each once");
        assert_eq!(upload.records[0].speed, 2.0);
        assert_eq!(upload.records[2].skinning & INSTANCE_RESTART, INSTANCE_RESTART, "the teleport restarts");
        assert_eq!(upload.restarted, [6]);
        second.gather(&instances.share(), 1.2, None, &mut upload);
        assert_eq!((upload.records.len(), &upload.restarted[..]), (8, &[6][..]), "another renderer writes them all");
        first.gather(&instances.clone().share(), 1.3, None, &mut upload);
        assert_eq!(upload.records.len(), 8, "a copy is another table");
        instances.iter_mut().for_each(|state| state.yaw = 1.0);
        second.gather(&instances.share(), 1.3, None, &mut upload);
        assert_eq!(upload.records.len(), 8, "every instance changed");
        second.gather(&instances.share(), 1.3 + REBASE_SECONDS * 1.5, None, &mut upload);
        assert_eq!(upload.records.len(), 8, "the epoch moved");
        assert_eq!(upload.clock, 0.0);
    }

    /// A teleport not yet written survives an edit of every instance (once: a log never keeps it
    /// past the next generation), and a log that grows past the table starts again.
    #[test]
    fn teleports_outlive_one_edit_of_every_instance() {
        let mut instances = walker(8);
        let mut uploads = uploads();
        let mut upload = Upload::default();
        uploads.gather(&instances.share(), 0.0, None, &mut upload);
        instances.restart_motion(2);
        instances.iter_mut().for_each(|state| state.yaw = 0.5);
        uploads.gather(&instances.share(), 0.1, None, &mut upload);
        assert_eq!((upload.records.len(), &upload.restarted[..]), (8, &[2][..]), "every record, instance 2 teleported");
        instances.iter_mut().for_each(|state| state.yaw = 0.7);
        uploads.gather(&instances.share(), 0.2, None, &mut upload);
        assert!(upload.restarted.is_empty(), "carried once only: {:?}", upload.restarted);
        for round in 0..70 {
            instances[round % 8].phase = round as f32;
        }
        uploads.gather(&instances.share(), 0.3, None, &mut upload);
        assert_eq!(upload.records.len(), 8, "70 edits of 8 instances: the log started again");
        assert!(instances.log.changes.len() < 64, "{} entries", instances.log.changes.len());
    }

    /// A record's clip times at the epoch plus the clock × speed are the clip times the CPU plays
    /// at that moment, hours into the program.
    #[test]
    fn records_hold_the_clips_times_at_the_epoch() {
        let mut instances = walker(1);
        instances[0].speed = 1.37;
        instances[0].phase = 0.61;
        let mut uploads = uploads();
        let mut upload = Upload::default();
        let clip = uploads.clips[0].1[0].clone();
        for seconds in [0.0, 7.3, 3600.0 * 5.0 + 0.017] {
            uploads.gather(&instances.share(), seconds, None, &mut upload);
            let record = upload.records.first().copied().unwrap_or_else(|| panic!("a record at {seconds} s"));
            for later in [0.0f32, 0.5, 100.0] {
                let time = record.base_clip + (upload.clock + later) * record.speed;
                let gpu = clip.start + time.rem_euclid(clip.duration);
                let cpu = clip.animation_time((seconds + f64::from(later)) * 1.37f32 as f64 + 0.61f32 as f64);
                assert!((gpu - cpu).abs() < 1e-4, "{seconds} s + {later}: {gpu} vs {cpu}");
            }
            uploads.forget();
        }
    }
}
