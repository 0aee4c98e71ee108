//! What tracing shadows costs (`--shadows ray`): each instance's bottom-level structure at the
//! finest level the budget gives it room for, the top level and their scratch. The trace pass
//! (`passes::trace`) builds its structures in the rooms this plan makes.

/// Bytes of one `VkAccelerationStructureInstanceKHR`.
pub const INSTANCE_BYTES: u64 = 64;
/// Structures start at multiples of 256 bytes in their buffer (the API's rule).
pub const STRUCTURE_ALIGNMENT: u64 = 256;

/// What one structure of a model at a level takes: its bytes, and the scratch its build or its
/// refit needs (the larger).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StructureSize {
    pub structure: u64,
    pub scratch: u64,
}

/// What tracing costs and how many instances trace: part of the memory plan
/// (`MemoryPlan::trace`), made where a device can say the structures' sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct TracePlan {
    /// Per model, the finest level each instance's structure has room for: an instance traces its
    /// shadow's level, or this one where that is finer.
    pub room_levels: Vec<u32>,
    /// Bytes the structures, their scratch and the instance records take in all.
    pub bytes: u64,
    /// The most instances of this mix that trace at the coarsest levels, in the memory left after
    /// the plan's instances.
    pub max_instances: u32,
}

impl TracePlan {
    /// The finest rooms whose bytes fit in `budget`: `sizes[m][l]` for model m at level l,
    /// `instance_models` each instance's model, `tlas` the top level's size. An error says how
    /// many instances would trace at the coarsest levels.
    pub fn new(
        sizes: &[Vec<StructureSize>],
        instance_models: &[u32],
        tlas: StructureSize,
        (budget, scratch_alignment): (u64, u64),
    ) -> Result<TracePlan, String> {
        let most_levels = sizes.iter().map(Vec::len).max().unwrap_or(1);
        let rooms =
            |room: usize| -> Vec<u32> { sizes.iter().map(|levels| room.min(levels.len().saturating_sub(1)) as u32).collect() };
        let bytes_at = |room_levels: &[u32]| -> u64 {
            let per_model: Vec<u64> = sizes
                .iter()
                .zip(room_levels)
                .map(|(levels, &room)| {
                    let size = room_size(levels, room, scratch_alignment);
                    size.structure + size.scratch
                })
                .collect();
            let instances: u64 = instance_models.iter().map(|&model| per_model[model as usize] + INSTANCE_BYTES).sum();
            instances + tlas.structure.next_multiple_of(STRUCTURE_ALIGNMENT) + tlas.scratch + scratch_alignment
        };
        let coarsest = rooms(most_levels - 1);
        let coarsest_bytes = bytes_at(&coarsest);
        let count = instance_models.len().max(1) as u64;
        let max_instances = (budget.saturating_mul(count) / coarsest_bytes.max(1)).min(u64::from(u32::MAX)) as u32;
        for room in 0..most_levels {
            let room_levels = rooms(room);
            let bytes = bytes_at(&room_levels);
            if bytes <= budget {
                return Ok(TracePlan { room_levels, bytes, max_instances });
            }
        }
        Err(format!(
            "tracing {count} instances needs {coarsest_bytes} bytes of acceleration structures at their coarsest levels; \
             {} MiB are left after the instances: at most {max_instances} instances trace",
            budget >> 20
        ))
    }
}

/// What a structure with room for `room` and the coarser of `levels` takes: the largest structure
/// and scratch among them, aligned as they are laid out (`STRUCTURE_ALIGNMENT`, `scratch_alignment`).
pub fn room_size(levels: &[StructureSize], room: u32, scratch_alignment: u64) -> StructureSize {
    let fits = &levels[room as usize..];
    StructureSize {
        structure: fits.iter().map(|size| size.structure).max().unwrap_or(0).next_multiple_of(STRUCTURE_ALIGNMENT),
        scratch: fits.iter().map(|size| size.scratch).max().unwrap_or(0).next_multiple_of(scratch_alignment),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(structure: u64, scratch: u64) -> StructureSize {
        StructureSize { structure, scratch }
    }

    #[test]
    fn the_plan_takes_the_finest_rooms_that_fit_and_says_how_many_trace() {
        // One model, three levels: 10,000, 5,000 and 1,000 bytes (scratch a tenth).
        let sizes = vec![vec![size(10_000, 1_000), size(5_000, 500), size(1_000, 100)]];
        let models = vec![0; 10];
        let tlas = size(1_024, 256);
        let per_instance = |structure: u64, scratch: u64| structure.next_multiple_of(256) + scratch.next_multiple_of(8) + 64;
        let fixed = 1_024 + 256 + 8;
        let all = TracePlan::new(&sizes, &models, tlas, (u64::MAX, 8)).expect("fits");
        assert_eq!(all.room_levels, vec![0]);
        assert_eq!(all.bytes, 10 * per_instance(10_000, 1_000) + fixed);
        let middle_bytes = 10 * per_instance(5_000, 500) + fixed;
        let middle = TracePlan::new(&sizes, &models, tlas, (middle_bytes, 8)).expect("fits");
        assert_eq!((middle.room_levels.clone(), middle.bytes), (vec![1], middle_bytes));
        let short = TracePlan::new(&sizes, &models, tlas, (5_000, 8)).expect_err("nothing fits");
        let coarsest = 10 * per_instance(1_000, 100) + fixed;
        assert!(short.contains(&format!("needs {coarsest} bytes")) && short.contains("at most 3 instances"), "{short}");
    }
}
