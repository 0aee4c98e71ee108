//! Where each instance lives in the chunks: its chunk, its bases in the chunk's buffers, its draw
//! run; and the chunk arrays as the shaders bind them.

use super::super::shader_types::{InstanceSlot, MAX_CHUNKS};
use crate::gpu::Buffer;

/// How instances are split into chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunking {
    pub instances_per_chunk: u32,
    pub chunk_count: u32,
}

impl Chunking {
    /// The first instance of chunk `chunk` and how many instances it holds.
    pub fn range(&self, chunk: u32, instance_count: u32) -> (u32, u32) {
        let first = chunk * self.instances_per_chunk;
        (first, self.instances_per_chunk.min(instance_count.saturating_sub(first)))
    }
}

/// A draw run: a chunk's instances of one model, whose draws are one indirect-count call per mesh
/// of the model (one vertex buffer, one model's meshes). Its lists take `instances` commands per
/// mesh from `first_command`, in `cull.camera_draws` and `cull.light_draws` alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawRun {
    pub chunk: u32,
    /// Its mesh 0 among all models' meshes, and the model's mesh count.
    pub first_mesh: u32,
    pub mesh_count: u32,
    pub first_command: u32,
    pub instances: u32,
}

impl DrawRun {
    /// Whether global mesh `mesh` is one of this run's model's.
    pub fn owns(&self, mesh: u32) -> bool {
        (self.first_mesh..self.first_mesh + self.mesh_count).contains(&mesh)
    }
}

/// What one model's instance takes in a chunk: its skinned vertices, its palette slots, its meshes
/// (a model's part of the shared buffers: `GpuPart`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotSize {
    pub vertices: u32,
    pub palette_slots: u32,
    pub first_mesh: u32,
    pub meshes: u32,
}

/// Where every instance lives, fixed when the renderer is built: instance i in chunk
/// i / instances_per_chunk (as `Chunking` says), at bases that add up its chunk's instances before
/// it (models differ in size, so a stride would waste what the smaller ones leave), and in the draw
/// run of its chunk and model.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceSlots {
    pub slots: Vec<InstanceSlot>,
    /// Per chunk, its instances' skinned vertices and palette slots in all: its buffers' sizes.
    pub chunk_vertices: Vec<u64>,
    pub chunk_palette_slots: Vec<u64>,
    /// Chunk by chunk, model by model.
    pub runs: Vec<DrawRun>,
    /// Commands the runs' lists take in all (for one view).
    pub commands: u64,
}

impl InstanceSlots {
    /// The slots of instances whose models are `instance_models` (indices into `sizes`).
    pub fn new(sizes: &[SlotSize], instance_models: &[u32], chunking: Chunking) -> InstanceSlots {
        let instance_count = instance_models.len() as u32;
        let mut slots = vec![InstanceSlot::default(); instance_models.len()];
        let (mut chunk_vertices, mut chunk_palette_slots, mut runs) = (Vec::new(), Vec::new(), Vec::new());
        let mut commands = 0u64;
        for chunk in 0..chunking.chunk_count {
            let (first, count) = chunking.range(chunk, instance_count);
            let members = first as usize..(first + count) as usize;
            // The chunk's runs: one a model it holds, model by model.
            let mut instances = vec![0u32; sizes.len()];
            for &model in &instance_models[members.clone()] {
                instances[model as usize] += 1;
            }
            let mut run_of = vec![0; sizes.len()];
            for (model, size) in sizes.iter().enumerate().filter(|&(model, _)| instances[model] > 0) {
                run_of[model] = runs.len();
                let first_command = commands as u32;
                runs.push(DrawRun {
                    chunk,
                    first_mesh: size.first_mesh,
                    mesh_count: size.meshes,
                    first_command,
                    instances: instances[model],
                });
                commands += u64::from(size.meshes) * u64::from(instances[model]);
            }
            let (mut vertices, mut palette_slots) = (0u64, 0u64);
            for (slot, &model) in slots[members.clone()].iter_mut().zip(&instance_models[members]) {
                let (size, run) = (sizes[model as usize], run_of[model as usize]);
                *slot = InstanceSlot {
                    vertex_base: vertices as u32,
                    palette_base: palette_slots as u32,
                    run: run as u32,
                    first_command: runs[run].first_command,
                    run_instances: runs[run].instances,
                    model,
                    unused: [0; 2],
                };
                vertices += u64::from(size.vertices);
                palette_slots += u64::from(size.palette_slots);
            }
            chunk_vertices.push(vertices);
            chunk_palette_slots.push(palette_slots);
        }
        InstanceSlots { slots, chunk_vertices, chunk_palette_slots, runs, commands }
    }
}

/// A binding's array of chunk buffers, MAX_CHUNKS long: the chunks, then the first one again
/// (every element of an array binding must point at a valid buffer; the shaders never index past
/// the real chunks).
pub fn padded_chunks(chunks: &[Buffer]) -> Vec<&Buffer> {
    (0..MAX_CHUNKS as usize).filter_map(|index| chunks.get(index).or(chunks.first())).collect()
}

/// The triangle pass's culled indices are group-relative and 16-bit: models with more vertices than this draw
/// whole instances instead.
pub const MAX_VERTICES: u32 = 1 << 16;

/// Instances one draw command covers: as many as 16-bit indices reach (`vertex_count` at most
/// [`MAX_VERTICES`]), and no more than a chunk holds.
pub fn group_size(vertex_count: u32, instances_per_chunk: u32) -> u32 {
    (MAX_VERTICES / vertex_count.max(1)).min(instances_per_chunk).max(1)
}
