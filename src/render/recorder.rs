//! The recorder the frame's recipe runs on. Each pass declares the hazards before it and after it
//! (`hazards_before`, `hazards_after` in its file): the resource, the earlier and the later work,
//! in words and as stages and accesses. The [`Recorder`] gathers them and issues everything due at
//! one boundary as **one** `vkCmdPipelineBarrier2`, then records the pass and its closing
//! timestamp. What it issued is kept ([`BarrierCall`]); [`barrier_table`] makes the README's table
//! from it, and a test holds the README to it.

use ash::vk;
use vk::PipelineStageFlags2 as Stage;

use super::Pass;
use crate::gpu::barrier::{self, Hazard};
use crate::gpu::query::TimestampPool;
use crate::gpu::Device;

/// One barrier call as recorded: the work it comes before and its hazards, in words.
#[derive(Clone, Debug, PartialEq)]
pub struct BarrierCall {
    pub before: &'static str,
    pub hazards: Vec<HazardWords>,
}

/// A hazard as the README's table shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct HazardWords {
    pub resource: &'static str,
    pub from: &'static str,
    pub to: &'static str,
    /// (old, new) where an image changes layout.
    pub layouts: Option<(vk::ImageLayout, vk::ImageLayout)>,
    pub kind: &'static str,
}

/// Records one frame: barriers batched per boundary, passes timed by name.
pub struct Recorder<'a> {
    device: &'a Device,
    command_buffer: vk::CommandBuffer,
    timestamps: &'a TimestampPool,
    /// Hazards declared since the last barrier.
    pending: Vec<Hazard>,
    /// Timestamps written so far: timestamp i + 1 closes `Pass::ALL[i]`.
    marks: u32,
    calls: Vec<BarrierCall>,
}

impl<'a> Recorder<'a> {
    pub fn new(device: &'a Device, command_buffer: vk::CommandBuffer, timestamps: &'a TimestampPool) -> Recorder<'a> {
        timestamps.reset(command_buffer);
        timestamps.write(command_buffer, Stage::ALL_COMMANDS, 0);
        Recorder { device, command_buffer, timestamps, pending: Vec::new(), marks: 1, calls: Vec::new() }
    }

    /// Declares hazards for the next barrier.
    pub fn wait(&mut self, hazards: impl IntoIterator<Item = Hazard>) {
        self.pending.extend(hazards);
    }

    /// Work outside the timed passes (a reset, copies): one barrier for what is due, then `record`.
    pub fn step(&mut self, name: &'static str, record: impl FnOnce(vk::CommandBuffer)) {
        self.barrier(name);
        record(self.command_buffer);
    }

    /// A timed pass: `before` joins what is due as one barrier, `record` records the pass, its
    /// timestamp closes it, and `after` waits for the next boundary.
    pub fn pass(&mut self, pass: Pass, before: Vec<Hazard>, record: impl FnOnce(vk::CommandBuffer), after: Vec<Hazard>) {
        let index = pass as u32;
        self.mark_through(index); // passes skipped before this one end here, taking no time
        self.wait(before);
        self.barrier(pass.name());
        record(self.command_buffer);
        self.mark_through(index + 1);
        self.wait(after);
    }

    /// A timed pass recorded in runs (the cull pass's count, budget and place): `before` joins
    /// what is due as one barrier before the first run; each later run waits behind its own
    /// hazards (named `runs[i].0` in the table), one barrier each; `record(run)` records run i.
    pub fn pass_in_runs(
        &mut self,
        pass: Pass,
        before: Vec<Hazard>,
        runs: Vec<(&'static str, Vec<Hazard>)>,
        mut record: impl FnMut(vk::CommandBuffer, usize),
        after: Vec<Hazard>,
    ) {
        let index = pass as u32;
        self.mark_through(index);
        self.wait(before);
        self.barrier(pass.name());
        for (run, (name, hazards)) in runs.into_iter().enumerate() {
            if run > 0 {
                self.wait(hazards);
                self.barrier(name);
            }
            record(self.command_buffer, run);
        }
        self.mark_through(index + 1);
        self.wait(after);
    }

    /// The last barrier and the timestamps of passes that did not run (zero long); returns the
    /// barrier calls made.
    pub fn finish(mut self) -> Vec<BarrierCall> {
        self.barrier("the end of the frame");
        self.mark_through(Pass::ALL.len() as u32);
        self.calls
    }

    fn barrier(&mut self, before: &'static str) {
        if self.pending.is_empty() {
            return;
        }
        barrier::issue(self.device, self.command_buffer, &self.pending);
        let hazards = self
            .pending
            .drain(..)
            .map(|hazard| HazardWords {
                resource: hazard.resource,
                from: hazard.from.words,
                to: hazard.to.words,
                layouts: hazard.layouts(),
                kind: hazard.kind(),
            })
            .collect();
        self.calls.push(BarrierCall { before, hazards });
    }

    /// Writes the timestamps up to `last` (timestamp i + 1 closes `Pass::ALL[i]`).
    fn mark_through(&mut self, last: u32) {
        while self.marks <= last {
            self.timestamps.write(self.command_buffer, Stage::ALL_COMMANDS, self.marks);
            self.marks += 1;
        }
    }
}

/// The frame's barrier calls as the README's markdown table: one row per hazard, numbered by call.
pub fn barrier_table(calls: &[BarrierCall]) -> String {
    let mut table = String::from("| call | before | resource | from | to | hazard |\n|---|---|---|---|---|---|\n");
    for (number, call) in calls.iter().enumerate() {
        for (index, hazard) in call.hazards.iter().enumerate() {
            let (number, before) = if index == 0 { ((number + 1).to_string(), call.before) } else { (String::new(), "") };
            let to = match hazard.layouts {
                Some((old, new)) => format!("{}; `{old:?} → {new:?}`", hazard.to),
                None => hazard.to.to_string(),
            };
            table += &format!("| {number} | {before} | `{}` | {} | {to} | {} |\n", hazard.resource, hazard.from, hazard.kind);
        }
    }
    table
}
