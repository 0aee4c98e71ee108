//! A model's sizes as the memory plan sees them: an instance's worst case, and a mix's.

use super::super::shader_types::MAX_LEVELS;
use crate::model::Model;

/// The sizes of a model that its instances' memory depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub vertices: u64,
    pub joints: u64,
    /// Palette slots an instance's morph block takes (`morph_slots`), after its joints' entries.
    pub morph_slots: u64,
    pub meshes: u64,
    pub indices: u64,
    /// Levels of detail, the full mesh included.
    pub levels: u64,
    /// Each level's index count (the full mesh's first; 0 past the last level).
    pub level_indices: [u64; MAX_LEVELS],
    /// The coarsest level's vertices: what every instance the cull pass keeps takes of a pool at
    /// least.
    pub coarsest_vertices: u64,
    /// The most indices a level has per vertex, rounded up: a culled-index pool of this many per
    /// vertex of the vertex pool cannot fill first.
    pub indices_per_vertex: u64,
    /// The clips as the palette pass reads them (`Animation::gpu_bytes`: compressed where they
    /// are), which every instance shares: what the heap holds before any instance.
    pub clip_bytes: u64,
}

impl Shape {
    /// What one instance of `models` may cost: each size the largest model's, the clips all
    /// models'. Several models have no triangle pass (its groups share one model's vertex count),
    /// so their shape has no indices to cull.
    pub fn of_models(models: &[&Model]) -> Shape {
        let shapes: Vec<Shape> = models.iter().map(|model| Shape::of(model)).collect();
        Shape::largest(&shapes)
    }

    /// `of_models` from the models' shapes.
    pub fn largest(shapes: &[Shape]) -> Shape {
        let most = |size: fn(&Shape) -> u64| shapes.iter().map(size).max().unwrap_or(0);
        match shapes {
            [one] => *one,
            _ => Shape {
                vertices: most(|shape| shape.vertices),
                joints: most(|shape| shape.joints),
                morph_slots: most(|shape| shape.morph_slots),
                meshes: most(|shape| shape.meshes),
                indices: 0,
                levels: most(|shape| shape.levels),
                level_indices: [0; MAX_LEVELS],
                coarsest_vertices: most(|shape| shape.coarsest_vertices),
                indices_per_vertex: most(|shape| shape.indices_per_vertex),
                clip_bytes: shapes.iter().map(|shape| shape.clip_bytes).sum(),
            },
        }
    }

    pub fn of(model: &Model) -> Shape {
        let full = (model.vertices.len() as u64, model.indices.len() as u64);
        let levels = std::iter::once(full)
            .chain(model.levels.iter().map(|level| (u64::from(level.vertex_count), level.indices.len() as u64)));
        Shape {
            coarsest_vertices: levels.clone().last().map_or(full.0, |(vertices, _)| vertices),
            indices_per_vertex: levels.map(|(vertices, indices)| indices.div_ceil(vertices.max(1))).max().unwrap_or(0),
            vertices: model.vertices.len() as u64,
            joints: model.skeleton.len() as u64,
            morph_slots: u64::from(crate::render::shader_types::morph_slots(model.morph_targets.len() as u32)),
            meshes: model.meshes.len() as u64,
            indices: model.indices.len() as u64,
            levels: model.levels.len() as u64 + 1,
            level_indices: std::array::from_fn(|level| match level {
                0 => model.indices.len() as u64,
                _ => model.levels.get(level - 1).map_or(0, |level| level.indices.len() as u64),
            }),
            clip_bytes: model
                .animations
                .iter()
                .map(|animation| animation.gpu_bytes(model.skeleton.len(), model.morph_targets.len()) as u64)
                .sum(),
        }
    }
}
