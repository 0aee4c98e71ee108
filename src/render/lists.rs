//! The cull pass's lists of instances in `level_lists` and the dispatches over them: what the cull
//! pass writes and the triangle pass reads.

use crate::render::shader_types::{CullCounters, MAX_PARTS};
use crate::render::Setup;

/// The lists the cull pass writes into `level_lists`, a section of `instance_count` entries each:
/// per level, the instances to draw for the camera (`Camera`); then one for the light's level
/// (`Light`). (What it skins goes into its skin table instead: `SkinGroup`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum List {
    Camera,
    Light,
}

/// One dispatch the triangle pass records over a part of one list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListDispatch {
    pub level: usize,
    /// Where its part of the list starts in `level_lists`.
    pub list_offset: u32,
    /// Its indirect arguments' offset in `counters`.
    pub arguments: u64,
}

/// Each (level, part) dispatch over one kind of list. A list takes a dispatch per `dispatch_rows`
/// instances (at most `MAX_PARTS`): a dispatch has at most that many rows, one per instance.
pub fn list_dispatches(list: List, level_count: usize, light_level: usize, setup: &Setup) -> Vec<ListDispatch> {
    let (rows, instance_count) = (setup.dispatch_rows, setup.instance_count);
    let parts = instance_count.div_ceil(rows).clamp(1, MAX_PARTS as u32);
    let mut dispatches = Vec::new();
    for level in 0..level_count {
        let (first_entry, arguments) = match list {
            List::Camera => (level, std::mem::offset_of!(CullCounters, camera_levels) + 16 * level * MAX_PARTS),
            List::Light if level == light_level => (level_count, std::mem::offset_of!(CullCounters, light_parts)),
            List::Light => continue,
        };
        for part in 0..parts {
            let list_offset = first_entry as u32 * instance_count + part * rows;
            dispatches.push(ListDispatch { level, list_offset, arguments: (arguments + 16 * part as usize) as u64 });
        }
    }
    dispatches
}
