//! Levels of detail: simplified copies of a model's triangles that skin exactly like the full mesh.
//!
//! [`with_levels`] simplifies each mesh with meshoptimizer (`meshopt`: quadric simplification that
//! weighs normals, UVs and sampled animated positions, keeps UV and normal seams, and locks open
//! borders so meshes that meet stay stitched), halving the triangles per level. A simplified mesh
//! only drops vertices, never moves or adds one, so every vertex keeps its own influences and a
//! level skins like the full mesh. Each level's vertices are a subset of the finer level's, so the
//! model's vertices are reordered coarsest first: level `l` uses the first `vertex_count` vertices,
//! and skinning an instance at level `l` is skinning a prefix. Drawing a coarser level from a
//! finer level's skinned vertices then needs nothing more (the shadow map may use a coarser level
//! than the camera).
//!
//! **The error, in an animated pose.** A level's error is the farthest any vertex of the full mesh
//! lies from the level's surface, measured after skinning both, in the bind pose and in the clips'
//! most telling poses ([`MAX_POSES`] in all at most, fewer for models of over 250,000 vertices:
//! those farthest apart of [`SAMPLES_PER_CLIP`] evenly spaced times of every clip), then grown by
//! [`ERROR_MARGIN`] for the poses between samples, crossfades and layers. The distance of a
//! removed vertex is taken to the level's triangles around the nearest kept vertices *along the
//! mesh* (a walk over edges, seams welded), not the nearest in space: a finger's vertex is never
//! measured against the next finger. Sampled poses make it a measurement, not a proof: a pose
//! that no sample comes near can exceed it. The cull pass projects it to the screen and picks the
//! coarsest level whose error is at most one pixel there.

use ahash::AHashMap as HashMap;

use glam::{Mat4, Vec3};
use rayon::prelude::*;

mod error;

use crate::model::{Level, Model, MAX_LEVELS};
use error::measure_errors;

/// Each level aims at this fraction of the finer level's triangles.
const REDUCTION: f32 = 0.5;
/// No level is made from one with fewer triangles than this: the chain ends there.
const MIN_TRIANGLES: usize = 64;
/// A level that keeps more than this fraction of the finer level's triangles ends the chain.
const MIN_PROGRESS: f32 = 0.85;
/// Times of each clip that are candidate poses for measuring the error (fewer when the clips are
/// many)...
pub const SAMPLES_PER_CLIP: usize = 8;
/// ...this many candidates at most, the bind pose included...
const CANDIDATES: usize = 64;
/// ...of which this many are measured at most, the bind pose and the most telling ones...
pub const MAX_POSES: usize = 16;
/// ...as far as this many vertices spread over the model tell (see [`sample_poses`]).
const PROBE_VERTICES: usize = 256;
/// ...and at most this many vertices skinned over all of them (at least the bind pose and one
/// more), so a model of a million vertices is measured in a few poses, not 16.
const POSED_VERTICES: usize = 4_000_000;
/// Poses whose skinned positions the simplifier weighs as attributes (18 of its 32 floats).
const ATTRIBUTE_POSES: usize = 6;
/// The measured error is multiplied by this for the poses between samples.
pub const ERROR_MARGIN: f32 = 1.25;

/// `model` with its levels of detail ([`Model::levels`]) and its vertices reordered so each
/// level's are a prefix. A model without triangles, or one whose first level saves too little,
/// comes back without levels. Best called from a thread of its own rather than a rayon task: it
/// waits for its error-measuring helper thread, and a waiting worker is lost to the pool meanwhile.
pub fn with_levels(model: &Model) -> Model {
    let mut levelled = model.clone();
    match chain(model) {
        Some(chain) => chain.apply(&mut levelled),
        None => levelled.levels.clear(),
    }
    levelled
}

/// A model's levels of detail and the vertex order they need, made without changing the model
/// (so its culling cells may be built from it meanwhile, and nothing is copied): [`Chain::apply`]
/// puts them in.
pub struct Chain {
    levels: Vec<Level>,
    /// The old index of each new vertex, and the new index of each old one.
    order: Vec<u32>,
    new_index: Vec<u32>,
}

impl Chain {
    /// The chain of `levels` over the vertex order `order` (the old index of each new vertex), as
    /// [`Chain::levels`] and [`Chain::order`] gave them (the derived-data cache): `None` unless
    /// `order` is a permutation of `vertex_count` vertices and the levels' indices lie inside it.
    pub(crate) fn from_parts(levels: Vec<Level>, order: Vec<u32>, vertex_count: usize) -> Option<Chain> {
        if order.len() != vertex_count
            || levels.iter().flat_map(|level| &level.indices).any(|&index| index as usize >= vertex_count)
        {
            return None;
        }
        let mut new_index = vec![u32::MAX; vertex_count];
        for (new, &old) in order.iter().enumerate() {
            let slot = new_index.get_mut(old as usize)?;
            if *slot != u32::MAX {
                return None;
            }
            *slot = new as u32;
        }
        Some(Chain { levels, order, new_index })
    }

    pub(crate) fn levels(&self) -> &[Level] {
        &self.levels
    }

    pub(crate) fn order(&self) -> &[u32] {
        &self.order
    }

    /// `model` with its vertices reordered and its levels set.
    pub fn apply(self, model: &mut Model) {
        model.vertices = self.order.iter().map(|&old| model.vertices[old as usize]).collect();
        for index in &mut model.indices {
            *index = self.new_index[*index as usize];
        }
        model.layout.renumber_vertices(&self.new_index);
        for target in &mut model.morph_targets {
            target.renumber_vertices(&self.new_index);
        }
        model.levels = self.levels;
    }
}

/// [`with_levels`]'s levels without the copy: `None` where the model gets none.
pub fn chain(model: &Model) -> Option<Chain> {
    let vertex_count = model.vertices.len();
    if model.indices.len() < 3 * MIN_TRIANGLES || model.meshes.is_empty() || !simplifiable(model) {
        return None;
    }
    let poses = sample_poses(model, (POSED_VERTICES / vertex_count.max(1)).clamp(2, MAX_POSES));
    let skinned: Vec<Vec<Vec3>> = poses.par_iter().map(|palette| skin_positions(model, palette)).collect();
    let attributes = attributes(model, &skinned);

    // Each level simplifies the one before it, mesh by mesh: its vertices are a subset of that one's.
    // A level's error is measured on a second thread while the next level is simplified (the
    // simplifier works on one mesh at a time, and many characters are one mesh).
    let (chain, errors) = std::thread::scope(|scope| {
        let (send, levels) = std::sync::mpsc::channel::<Vec<Vec<u32>>>();
        let measuring = scope.spawn(|| measure_errors(model, &skinned, levels));
        let mut chain: Vec<Vec<Vec<u32>>> = Vec::new();
        let full: Vec<Vec<u32>> = model.meshes.iter().map(|mesh| mesh_indices(model, mesh).to_vec()).collect();
        while chain.len() + 1 < MAX_LEVELS {
            let finer = chain.last().unwrap_or(&full);
            let triangles: usize = finer.iter().map(|indices| indices.len() / 3).sum();
            if triangles < MIN_TRIANGLES {
                break;
            }
            let coarser: Vec<Vec<u32>> = finer.par_iter().map(|indices| simplify(&attributes, indices)).collect();
            let kept: usize = coarser.iter().map(|indices| indices.len() / 3).sum();
            if kept == 0 || kept as f32 > triangles as f32 * MIN_PROGRESS {
                break;
            }
            // The measuring thread ends only with the levels; it holds the other end until then.
            let _ = send.send(coarser.clone());
            chain.push(coarser);
        }
        drop(send);
        let errors = measuring.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (chain, errors)
    });
    if chain.is_empty() {
        return None;
    }

    // The coarsest level each vertex belongs to; vertices sort coarsest first (stable).
    let mut rank = vec![0usize; vertex_count];
    for (level, meshes) in chain.iter().enumerate() {
        for &index in meshes.iter().flatten() {
            rank[index as usize] = level + 1;
        }
    }
    let mut order: Vec<u32> = (0..vertex_count as u32).collect();
    order.sort_by_key(|&vertex| std::cmp::Reverse(rank[vertex as usize]));
    let mut new_index = vec![0u32; vertex_count];
    for (new, &old) in order.iter().enumerate() {
        new_index[old as usize] = new as u32;
    }

    let mut levels = Vec::new();
    for (level, meshes) in chain.iter().enumerate() {
        let mut indices = Vec::new();
        let mut ranges = Vec::new();
        for mesh in meshes {
            ranges.push((indices.len() as u32, mesh.len() as u32));
            indices.extend(mesh.iter().map(|&index| new_index[index as usize]));
        }
        let vertex_count = rank.iter().filter(|&&rank| rank > level).count() as u32;
        levels.push(Level { vertex_count, indices, ranges, error: errors[level] });
    }
    Some(Chain { levels, order, new_index })
}

/// What meshoptimizer takes on trust (its checks are asserts, compiled out in release): whole
/// triangles, indices inside the vertex list, finite positions. Loaders give nothing else; a model
/// that breaks one gets no levels rather than undefined behaviour.
fn simplifiable(model: &Model) -> bool {
    let vertex_count = model.vertices.len();
    let meshes_whole = model.meshes.iter().all(|mesh| {
        let indices = mesh_indices(model, mesh);
        indices.len() == mesh.index_count as usize && indices.len() % 3 == 0
    });
    meshes_whole
        && model.indices.iter().all(|&index| (index as usize) < vertex_count)
        && model.vertices.iter().all(|vertex| vertex.position.is_finite())
}

fn mesh_indices<'a>(model: &'a Model, mesh: &crate::model::Mesh) -> &'a [u32] {
    let first = mesh.first_index as usize;
    model.indices.get(first..first + mesh.index_count as usize).unwrap_or(&[])
}

/// The poses the levels are measured in, most telling first: the bind pose, then, from the
/// candidates ([`SAMPLES_PER_CLIP`] evenly spaced times of every clip, fewer a clip when that
/// would pass [`CANDIDATES`]),
/// each time the one farthest from every pose taken so far (farthest-point sampling; the distance
/// between two poses is the farthest any of [`PROBE_VERTICES`] spread vertices moves between
/// them), `limit` at most. Evenly spaced samples spend most poses on what the clips repeat (a walk
/// cycle's two halves, a held pose); these reach the extremes, where a level strays most.
/// A candidate no farther than 1e-6 of the extent from a pose taken adds nothing and ends the
/// choice. Palettes are in model space, no world.
fn sample_poses(model: &Model, limit: usize) -> Vec<Vec<Mat4>> {
    // Fewer times a clip when there are many clips, but never fewer than its start and middle.
    let per_clip = (CANDIDATES / model.clips.len().max(1)).clamp(2, SAMPLES_PER_CLIP);
    let times: Vec<(usize, f32)> = model
        .clips
        .iter()
        .flat_map(|clip| {
            (0..per_clip).map(move |sample| (clip.animation, clip.start + clip.duration * sample as f32 / per_clip as f32))
        })
        .take(CANDIDATES - 1)
        .collect();
    let mut candidates = vec![vec![Mat4::IDENTITY; model.skeleton.len()]];
    candidates.par_extend(times.par_iter().map(|&(animation, time)| {
        let mut palette = vec![Mat4::IDENTITY; model.skeleton.len()];
        model.palette_at(animation, time, &mut palette);
        palette
    }));
    let step = (model.vertices.len() / PROBE_VERTICES).max(1);
    let probes: Vec<&crate::model::Vertex> = model.vertices.iter().step_by(step).collect();
    let placed: Vec<Vec<Vec3>> = candidates
        .par_iter()
        .map(|palette| probes.iter().map(|vertex| model.skinned_position(vertex, Some(palette))).collect())
        .collect();
    let apart = |a: &[Vec3], b: &[Vec3]| a.iter().zip(b).map(|(a, b)| a.distance_squared(*b)).fold(0.0f32, f32::max).sqrt();
    let still = 1e-6 * model.extent();
    let mut chosen = vec![0];
    let mut nearest = vec![f32::INFINITY; candidates.len()];
    while chosen.len() < limit.min(candidates.len()) {
        let last = &placed[chosen[chosen.len() - 1]];
        for (distance, candidate) in nearest.iter_mut().zip(&placed) {
            *distance = distance.min(apart(candidate, last));
        }
        let Some((next, &farthest)) = nearest.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)) else { break };
        if farthest <= still {
            break;
        }
        chosen.push(next);
    }
    chosen.into_iter().map(|index| std::mem::take(&mut candidates[index])).collect()
}

fn skin_positions(model: &Model, palette: &[Mat4]) -> Vec<Vec3> {
    model.vertices.iter().map(|vertex| model.skinned_position(vertex, Some(palette))).collect()
}

/// Attribute floats per vertex: normal, UV, then the skinned position in up to
/// [`ATTRIBUTE_POSES`] poses (relative to the model's size, as the simplifier's positions are).
const ATTRIBUTES: usize = 5 + 3 * ATTRIBUTE_POSES;

/// What the simplifier weighs besides the bind position, and how much.
struct Attributes {
    values: Vec<f32>,
    weights: [f32; ATTRIBUTES],
    positions: Vec<[f32; 3]>,
}

fn attributes(model: &Model, skinned: &[Vec<Vec3>]) -> Attributes {
    let scale = 1.0 / model.extent().max(1e-6);
    // The most telling poses after the bind pose, which the position already is.
    let animated: Vec<&Vec<Vec3>> = skinned.iter().skip(1).take(ATTRIBUTE_POSES).collect();
    let mut values = vec![0.0f32; model.vertices.len() * ATTRIBUTES];
    values.par_chunks_mut(ATTRIBUTES).zip(&model.vertices).enumerate().for_each(|(index, (values, vertex))| {
        values[..3].copy_from_slice(&vertex.normal.to_array());
        values[3..5].copy_from_slice(&vertex.uv.to_array());
        for pose in 0..ATTRIBUTE_POSES {
            let position = animated.get(pose).map_or(vertex.position, |positions| positions[index]);
            values[5 + 3 * pose..8 + 3 * pose].copy_from_slice(&(position * scale).to_array());
        }
    });
    let mut weights = [0.0; ATTRIBUTES];
    weights[..3].fill(0.5); // normals: shading
    weights[3..5].fill(0.25); // UVs: texture swim
    if !animated.is_empty() {
        weights[5..].fill(4.0); // where the vertex goes when animated: more than where it rests
    }
    let positions = model.vertices.iter().map(|vertex| vertex.position.to_array()).collect();
    Attributes { values, weights, positions }
}

/// One mesh's triangles at about [`REDUCTION`] of their count. The simplifier is given only the
/// vertices those triangles use (its set-up is in proportion to the vertices it is handed, and a
/// coarse level of one mesh uses few of the model's).
fn simplify(attributes: &Attributes, indices: &[u32]) -> Vec<u32> {
    let target = ((indices.len() / 3) as f32 * REDUCTION) as usize * 3;
    let mut local_of: HashMap<u32, u32> = HashMap::with_capacity(indices.len() / 2);
    let mut used: Vec<u32> = Vec::new();
    let local: Vec<u32> = indices
        .iter()
        .map(|&index| {
            *local_of.entry(index).or_insert_with(|| {
                used.push(index);
                (used.len() - 1) as u32
            })
        })
        .collect();
    let positions: Vec<[f32; 3]> = used.iter().map(|&index| attributes.positions[index as usize]).collect();
    let values: Vec<f32> = used
        .iter()
        .flat_map(|&index| &attributes.values[index as usize * ATTRIBUTES..(index as usize + 1) * ATTRIBUTES])
        .copied()
        .collect();
    let locks = vec![false; used.len()];
    let vertices = meshopt::VertexDataAdapter::new(bytemuck::cast_slice(&positions), 12, 0);
    let Ok(vertices) = vertices else { return indices.to_vec() };
    let simplified = meshopt::simplify_with_attributes_and_locks(
        &local,
        &vertices,
        &values,
        &attributes.weights,
        ATTRIBUTES * 4,
        &locks,
        target,
        1.0, // no error limit: the level is measured afterwards
        meshopt::SimplifyOptions::LockBorder,
        None,
    );
    simplified.into_iter().map(|index| used[index as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::error::closest_on_triangle;
    use super::*;

    fn figure() -> Model {
        let path = crate::app::default_model_path();
        crate::formats::load_model(&path, &crate::app::default_animations(&path, &[])).expect("the bundled figure loads")
    }

    /// A triangle as its three corner positions, starting from the smallest (winding kept).
    fn corners(model: &Model, triangle: &[u32]) -> [[u32; 3]; 3] {
        let points = [0, 1, 2].map(|corner| model.vertices[triangle[corner] as usize].position.to_array().map(f32::to_bits));
        let first = (0..3).min_by_key(|&corner| points[corner]).unwrap_or(0);
        [0, 1, 2].map(|offset| points[(first + offset) % 3])
    }

    #[test]
    fn each_level_is_a_prefix_of_the_finer_ones_vertices_with_fewer_triangles() {
        let model = figure();
        let levelled = with_levels(&model);
        assert!(levelled.levels.len() >= 4, "{} levels", levelled.levels.len());
        let mut finer = (model.vertices.len() as u32, model.indices.len() / 3, 0.0f32);
        for (index, level) in levelled.levels.iter().enumerate() {
            // Exactly the first vertex_count vertices are used: skinning a prefix skins the level.
            let mut used = vec![false; level.vertex_count as usize];
            for &vertex in &level.indices {
                assert!(vertex < level.vertex_count, "level {}: vertex {vertex} past its {}", index + 1, level.vertex_count);
                used[vertex as usize] = true;
            }
            assert!(used.iter().all(|&used| used), "level {} leaves a vertex of its prefix unused", index + 1);
            assert!(level.vertex_count < finer.0 && level.triangle_count() < finer.1 && level.error >= finer.2);
            assert!(level.error > 0.0 && level.error < model.extent(), "level {}: error {}", index + 1, level.error);
            let ranges: u32 = level.ranges.iter().map(|range| range.1).sum();
            assert_eq!((ranges as usize, level.ranges.len()), (level.indices.len(), model.meshes.len()));
            finer = (level.vertex_count, level.triangle_count(), level.error);
        }
    }

    #[test]
    fn reordering_keeps_every_vertex_and_triangle() {
        let model = figure();
        let levelled = with_levels(&model);
        let key = |vertex: &crate::model::Vertex| {
            let mut key: Vec<u32> =
                [vertex.position.to_array(), vertex.normal.to_array()].concat().iter().map(|x| x.to_bits()).collect();
            key.extend([vertex.uv.x.to_bits(), vertex.uv.y.to_bits(), vertex.first_influence, vertex.influence_count]);
            key
        };
        let mut before: Vec<Vec<u32>> = model.vertices.iter().map(key).collect();
        let mut after: Vec<Vec<u32>> = levelled.vertices.iter().map(key).collect();
        before.sort();
        after.sort();
        assert_eq!(before, after);
        let triangles = |model: &Model| {
            let mut triangles: Vec<_> = model.indices.chunks_exact(3).map(|triangle| corners(model, triangle)).collect();
            triangles.sort();
            triangles
        };
        assert_eq!(triangles(&model), triangles(&levelled));
        assert_eq!((levelled.meshes.clone(), levelled.influences.clone()), (model.meshes.clone(), model.influences.clone()));
    }

    #[test]
    fn a_model_meshoptimizer_would_trust_wrongly_gets_no_levels() {
        let figure = figure();
        let mut broken = figure.clone();
        broken.indices[5] = broken.vertices.len() as u32; // past the vertex list
        assert!(with_levels(&broken).levels.is_empty());
        let mut broken = figure.clone();
        broken.vertices[7].position.x = f32::NAN;
        assert!(with_levels(&broken).levels.is_empty());
        let mut broken = figure;
        broken.meshes[0].index_count -= 1; // not whole triangles
        assert!(with_levels(&broken).levels.is_empty());
    }

    #[test]
    fn a_model_too_small_to_simplify_gets_no_levels() {
        let mut model = figure();
        model.indices.truncate(3 * (MIN_TRIANGLES - 1));
        model.meshes.truncate(1);
        model.meshes[0].index_count = model.indices.len() as u32;
        assert!(with_levels(&model).levels.is_empty());
    }

    #[test]
    fn the_closest_point_on_a_triangle_is_no_farther_than_any_sampled_point() {
        let (a, b, c) = (Vec3::new(0.0, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.5, 1.5, 0.3));
        let points = [Vec3::new(0.5, 0.5, 1.0), Vec3::new(-1.0, -1.0, 0.0), Vec3::new(3.0, 0.2, -0.5), Vec3::new(0.3, 2.0, 0.0)];
        for point in points {
            let closest = closest_on_triangle(point, a, b, c);
            let mut nearest_sample = f32::INFINITY;
            for i in 0..=100 {
                for j in 0..=(100 - i) {
                    let sample = a + (b - a) * (i as f32 / 100.0) + (c - a) * (j as f32 / 100.0);
                    nearest_sample = nearest_sample.min(point.distance(sample));
                }
            }
            assert!(point.distance(closest) <= nearest_sample + 1e-5);
            assert!(point.distance(closest) >= nearest_sample - 0.03, "{point}: {closest} is not the nearest");
        }
    }
}
