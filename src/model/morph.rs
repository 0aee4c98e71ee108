//! Morph targets (blend shapes): what a target holds, its weights at a time, the CPU reference of
//! the skin pass's morph, and the normal offsets a file leaves out, computed from the triangles.

use ahash::AHashMap as HashMap;

use glam::Vec3;

use super::{Model, Vertex};
use crate::anim::bounds::ModelBounds;
use crate::anim::{Aabb, Interpolation, WeightChannel};

/// Moved vertices times cells, at most, that growing the animations' cells by their morph visits
/// (shared out over the animations): a longer one shares each weight range over a run of cells.
const MORPH_CELL_BUDGET: usize = 20_000_000;

/// The weights `channel` takes within `[t0, t1]`: its values at both ends and at every key between
/// (exact for STEP and LINEAR); a cubic curve's values and Bézier control points over all its keys
/// (the curve stays in their hull, and may overshoot its keys).
fn weight_span(channel: &WeightChannel, t0: f32, t1: f32) -> (f32, f32) {
    let count = channel.times.count();
    let per_key = channel.interpolation.values_per_key();
    let mut low_high = (f32::INFINITY, f32::NEG_INFINITY);
    let mut take = |weight: f32| low_high = (low_high.0.min(weight), low_high.1.max(weight));
    if per_key == 3 {
        // CUBICSPLINE tangents are per second (scaled by the interval); Hermite's per interval.
        let longest = (1..count).map(|key| channel.times.time(key) - channel.times.time(key - 1)).fold(0.0f32, f32::max);
        let scale = if channel.interpolation == Interpolation::CubicSpline { longest } else { 1.0 };
        for key in channel.values.chunks_exact(3) {
            let [into, value, out] = [key[0], key[1], key[2]];
            [value, value + out * scale / 3.0, value - into * scale / 3.0].into_iter().for_each(&mut take);
        }
    } else {
        take(channel.sample(t0));
        take(channel.sample(t1));
        // The first key after t0, then every key up to t1.
        let (mut low, mut high) = (0, count);
        while low < high {
            let middle = (low + high) / 2;
            if channel.times.time(middle) <= t0 {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        for key in (low..count).take_while(|&key| channel.times.time(key) < t1) {
            take(channel.values.get(key).copied().unwrap_or(0.0));
        }
    }
    low_high
}

/// Each moved vertex's offsets, target by target: for the CPU's sampled evaluations (the camera's
/// framing, the cells' tightness) that morph a few vertices at many weights.
pub struct VertexOffsets {
    by_vertex: HashMap<u32, Vec<(usize, Vec3)>>,
}

impl VertexOffsets {
    pub fn of(model: &Model) -> VertexOffsets {
        let mut by_vertex: HashMap<u32, Vec<(usize, Vec3)>> = HashMap::new();
        for (index, target) in model.morph_targets.iter().enumerate() {
            for (&vertex, &delta) in target.vertices.iter().zip(&target.position_deltas) {
                by_vertex.entry(vertex).or_default().push((index, delta));
            }
        }
        VertexOffsets { by_vertex }
    }

    /// Vertex `index` at `position` moved by the targets at `weights`.
    pub fn moved(&self, index: u32, position: Vec3, weights: &[f32]) -> Vec3 {
        let offsets = self.by_vertex.get(&index).map_or(&[][..], Vec::as_slice);
        offsets.iter().fold(position, |position, &(target, delta)| position + weights.get(target).copied().unwrap_or(0.0) * delta)
    }
}

/// A morph target (blend shape), stored sparsely: the vertices it moves and by how much at weight
/// 1, in model space.
#[derive(Clone, Debug, PartialEq)]
pub struct MorphTarget {
    pub name: String,
    /// The model vertices it moves, ascending.
    pub vertices: Vec<u32>,
    /// Per moved vertex, its position's offset.
    pub position_deltas: Vec<Vec3>,
    /// Per moved vertex, its normal's offset (zero where the file gives none).
    pub normal_deltas: Vec<Vec3>,
    /// Its weight where no clip animates it.
    pub default_weight: f32,
    /// The file gave no normal offsets, so they were computed from the moved triangles
    /// ([`Model::recompute_morph_normals`]).
    pub normals_recomputed: bool,
}

impl MorphTarget {
    /// Each vertex once, ascending, its offsets summed where it was listed more than once (an FBX
    /// shape may name a control point twice): the skin pass's search finds one entry a vertex.
    pub fn merge_repeated_vertices(&mut self) {
        let mut moved: Vec<(u32, Vec3, Vec3)> = self
            .vertices
            .iter()
            .zip(self.position_deltas.iter().zip(&self.normal_deltas))
            .map(|(&vertex, (&position, &normal))| (vertex, position, normal))
            .collect();
        moved.sort_by_key(|&(vertex, _, _)| vertex);
        let mut merged: Vec<(u32, Vec3, Vec3)> = Vec::with_capacity(moved.len());
        for (vertex, position, normal) in moved {
            match merged.last_mut() {
                Some(last) if last.0 == vertex => {
                    last.1 += position;
                    last.2 += normal;
                }
                _ => merged.push((vertex, position, normal)),
            }
        }
        self.vertices = merged.iter().map(|&(vertex, _, _)| vertex).collect();
        self.position_deltas = merged.iter().map(|&(_, position, _)| position).collect();
        self.normal_deltas = merged.iter().map(|&(_, _, normal)| normal).collect();
    }

    /// The vertices renumbered (`new_index[old]`), still ascending, their offsets with them.
    pub fn renumber_vertices(&mut self, new_index: &[u32]) {
        for vertex in &mut self.vertices {
            *vertex = new_index.get(*vertex as usize).copied().unwrap_or(*vertex);
        }
        self.merge_repeated_vertices();
    }
}

impl Model {
    /// Every morph target's weight where no clip keys it.
    pub fn default_weights(&self) -> Vec<f32> {
        self.morph_targets.iter().map(|target| target.default_weight).collect()
    }

    /// Per morph target, the weight `animation` gives it at `time`, or None where the animation
    /// keys none (or there is no such animation). A channel without keys keys nothing, as on the
    /// GPU (key_count 0).
    pub fn keyed_weights(&self, animation: usize, time: f32) -> Vec<Option<f32>> {
        let mut weights = vec![None; self.morph_targets.len()];
        let channels = self.animations.get(animation).map_or(&[][..], |animation| &animation.weights);
        for channel in channels.iter().filter(|channel| channel.times.count() > 0) {
            if let Some(weight) = weights.get_mut(channel.target) {
                *weight = Some(channel.sample(time));
            }
        }
        weights
    }

    /// Every morph target's weight at `time` into `animation`: its channel's, or its default.
    pub fn morph_weights(&self, animation: usize, time: f32) -> Vec<f32> {
        self.keyed_weights(animation, time)
            .iter()
            .zip(&self.morph_targets)
            .map(|(keyed, target)| keyed.unwrap_or(target.default_weight))
            .collect()
    }

    /// The first `count` vertices with the morph targets applied at `weights` (per target): what
    /// the skin pass does before skinning, and the CPU reference of it (`morph_vertex` in
    /// shaders/skinning.glsl). Positions and normals move by weight × delta, targets in order; a
    /// moved vertex's normal is renormalized and its tangent made perpendicular to it again.
    pub fn morphed_vertices(&self, weights: &[f32], count: usize) -> Vec<Vertex> {
        let mut vertices = self.vertices[..count.min(self.vertices.len())].to_vec();
        self.morph_in_place(weights, &mut vertices);
        vertices
    }

    /// Every vertex's position from [`Model::morphed_vertices`].
    pub fn morphed_positions(&self, weights: &[f32]) -> Vec<Vec3> {
        self.morphed_vertices(weights, self.vertices.len()).iter().map(|vertex| vertex.position).collect()
    }

    /// [`Model::morphed_vertices`] into `vertices` (the model's first vertices, unmorphed).
    pub fn morph_in_place(&self, weights: &[f32], vertices: &mut [Vertex]) {
        let mut moved = Vec::new();
        for (target, &weight) in self.morph_targets.iter().zip(weights).filter(|(_, &weight)| weight != 0.0) {
            let deltas = target.vertices.iter().zip(target.position_deltas.iter().zip(&target.normal_deltas));
            for (&index, (&position, &normal)) in deltas {
                let Some(vertex) = vertices.get_mut(index as usize) else { continue };
                vertex.position += weight * position;
                vertex.normal += weight * normal;
                moved.push(index);
            }
        }
        // Once per vertex, however many targets moved it.
        moved.sort_unstable();
        moved.dedup();
        for index in moved {
            let vertex = &mut vertices[index as usize];
            vertex.normal = vertex.normal.normalize_or_zero();
            let tangent = vertex.tangent.truncate();
            let tangent = (tangent - vertex.normal * vertex.normal.dot(tangent)).normalize_or_zero();
            vertex.tangent = tangent.extend(vertex.tangent.w);
        }
    }

    /// The weights target `target` can take: its default's, every key value of its channels, and
    /// 0 to 1 (what the panel's slider sets by hand).
    pub fn weight_range(&self, target: usize) -> (f32, f32) {
        let default = self.morph_targets.get(target).map_or(0.0, |target| target.default_weight);
        let keyed = self.animations.iter().flat_map(|animation| &animation.weights).filter(|channel| channel.target == target);
        // Every key, and a cubic curve's control points (it may overshoot its keys).
        let spans = keyed.map(|channel| weight_span(channel, f32::NEG_INFINITY, f32::INFINITY));
        spans
            .chain([(default, default), (0.0, 1.0)])
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(low, high), (a, b)| (low.min(a), high.max(b)))
    }

    /// Bounds of what an instance without a clip shows: the bind pose with the targets at their
    /// default weights.
    pub fn rest_bounds(&self) -> Aabb {
        let bind = self.bind_bounds();
        let defaults = self.default_weights();
        if defaults.iter().all(|&weight| weight == 0.0) {
            return bind;
        }
        Aabb::from_points(self.morphed_positions(&defaults)).union(bind)
    }

    /// Grows each animation's culling cells (made from the unmoved vertices) by what its morph
    /// can do within the cell's time: each target's weights over the cell ([`weight_span`]; its
    /// default where the animation keys none) give each moved vertex a box of offsets. Without a
    /// skeleton the vertices stay in model space, and the cell takes in each moved vertex's box;
    /// skinned, the boxes join the vertices the joints carry, each carried whole into its joints
    /// (`bounds::extend_reach`), and the cell is bounded again with them (`bounds::cells_in`, every
    /// run of an animation in one parallel sweep).
    /// `morph_reach` is how far an offset can reach, stretched by its joints, at every weight the
    /// targets can take ([`Model::weight_range`]).
    pub fn grow_cells_by_morph(&self, bounds: &mut ModelBounds) {
        if self.morph_targets.is_empty() {
            return;
        }
        let entries: usize = self.morph_targets.iter().map(|target| target.vertices.len()).sum();
        let mut scratch = OffsetBoxes::new(self.vertices.len());
        let global: Vec<(f32, f32)> = (0..self.morph_targets.len()).map(|target| self.weight_range(target)).collect();
        bounds.morph_reach = self.grow(&mut scratch, &global, &bounds.palette_scales).radius;
        // A crossfade or a layer mixes weights as it mixes poses: what the morph can add to a
        // vertex's reach from its root adds to the blend reach (the triangle inequality).
        bounds.blend_reach += bounds.morph_reach;
        let rigid = self.skeleton.is_empty();
        // Without joints the cells may be empty (the upload then uses the rest pose): the unmoved
        // vertices stay in them. With joints, what the joints carry of the unmoved vertices.
        let unmoved = if rigid { self.bind_bounds() } else { Aabb::EMPTY };
        let base_reach = if rigid {
            Vec::new()
        } else {
            let vertices = self.vertices.iter().flat_map(|vertex| self.bind_points(vertex));
            crate::anim::bounds::joint_reach(&self.skeleton, vertices)
        };
        for (animation, cells) in self.animations.iter().zip(&mut bounds.animations) {
            let count = cells.cells.len();
            // Runs of cells share one weight range: few enough runs for the budget, and at most
            // 1,024 of them (each bounds its cells again from the joints).
            let budget = MORPH_CELL_BUDGET / self.animations.len().max(1);
            let run = (count.saturating_mul(entries) / budget.max(1) + 1).max(count.div_ceil(1024)).min(count.max(1));
            let mut keyed: Vec<Option<&WeightChannel>> = vec![None; self.morph_targets.len()];
            for channel in &animation.weights {
                if let Some(slot) = keyed.get_mut(channel.target) {
                    *slot = Some(channel);
                }
            }
            let runs: Vec<std::ops::Range<usize>> =
                (0..count).step_by(run).map(|first| first..(first + run).min(count)).collect();
            // Each target's weights over a run of cells.
            let ranges_over = |cells_run: &std::ops::Range<usize>| -> Vec<(f32, f32)> {
                let t0 = cells_run.start as f32 * cells.cell_duration;
                let t1 = if cells_run.end == count { animation.duration } else { cells_run.end as f32 * cells.cell_duration };
                keyed
                    .iter()
                    .zip(&self.morph_targets)
                    .map(|(channel, target)| match channel {
                        Some(channel) => weight_span(channel, t0, t1),
                        None => (target.default_weight, target.default_weight),
                    })
                    .collect()
            };
            if rigid {
                for cells_run in runs {
                    let growth = self.grow(&mut scratch, &ranges_over(&cells_run), &bounds.palette_scales);
                    for cell in &mut cells.cells[cells_run] {
                        *cell = cell.union(unmoved).union(growth.points.unwrap_or(Aabb::EMPTY));
                    }
                }
                continue;
            }
            // Per run, the joints' reach with the moved vertices' boxes' corners carried by their
            // influences; the runs in parallel, each thread with its own offset boxes.
            use rayon::prelude::*;
            let redo: Vec<(std::ops::Range<usize>, Vec<crate::anim::bounds::JointReach>)> = runs
                .par_iter()
                .map_init(
                    || OffsetBoxes::new(self.vertices.len()),
                    |scratch, cells_run| {
                        let ranges = ranges_over(cells_run);
                        // Weights that stay 0 over the run move nothing: its cells, bounded from the
                        // unmoved vertices, stand (most clips of a character with a few expressions
                        // key them so).
                        if ranges.iter().all(|&range| range == (0.0, 0.0)) {
                            return None;
                        }
                        self.add_offsets(scratch, &ranges);
                        let boxes: Vec<(Aabb, &[crate::anim::Influence])> = scratch
                            .touched
                            .iter()
                            .map(|&vertex| {
                                let (position, influences) =
                                    (self.vertices[vertex].position, self.influences_of(&self.vertices[vertex]));
                                (Aabb { min: position + scratch.low[vertex], max: position + scratch.high[vertex] }, influences)
                            })
                            .collect();
                        scratch.clear();
                        let mut reach = base_reach.clone();
                        crate::anim::bounds::extend_reach(&mut reach, &self.skeleton, boxes);
                        Some((cells_run.clone(), reach))
                    },
                )
                .flatten()
                .collect();
            // Every run's cells bounded again in one parallel sweep, each with its own reach.
            let parts: Vec<(std::ops::Range<usize>, &[crate::anim::bounds::JointReach])> =
                redo.iter().map(|(range, reach)| (range.clone(), reach.as_slice())).collect();
            let redone = crate::anim::bounds::cells_in(&self.skeleton, animation, &parts);
            for ((range, _), redone) in redo.iter().zip(redone) {
                for (cell, redone) in cells.cells[range.clone()].iter_mut().zip(redone) {
                    *cell = cell.union(redone);
                }
            }
        }
    }

    /// Each moved vertex's box of offsets at weights within `ranges`, into `scratch`.
    fn add_offsets(&self, scratch: &mut OffsetBoxes, ranges: &[(f32, f32)]) {
        for (target, &(low, high)) in self.morph_targets.iter().zip(ranges) {
            for (&vertex, &delta) in target.vertices.iter().zip(&target.position_deltas) {
                let (a, b) = (delta * low, delta * high);
                scratch.add(vertex as usize, a.min(b), a.max(b));
            }
        }
    }

    /// What the targets at weights within `ranges` add (see [`Growth`]).
    fn grow(&self, scratch: &mut OffsetBoxes, ranges: &[(f32, f32)], palette_scales: &[f32]) -> Growth {
        self.add_offsets(scratch, ranges);
        let rigid = self.skeleton.is_empty();
        let points = rigid.then(|| {
            Aabb::from_points(scratch.touched.iter().flat_map(|&vertex| {
                let position = self.vertices[vertex].position;
                [position + scratch.low[vertex], position + scratch.high[vertex]]
            }))
        });
        let radius = scratch.touched.iter().map(|&vertex| {
            let corner = scratch.low[vertex].abs().max(scratch.high[vertex].abs()).length();
            let stretch = if rigid {
                1.0
            } else {
                let influences = self.influences_of(&self.vertices[vertex]).iter();
                influences
                    .map(|influence| palette_scales.get(influence.joint as usize).copied().unwrap_or(1.0))
                    .fold(0.0f32, f32::max)
            };
            corner * stretch
        });
        let growth = Growth { points, radius: radius.fold(0.0, f32::max) };
        scratch.clear();
        growth
    }

    /// Computes the normal offsets of the targets whose file gave none (all zero; not computed
    /// already): per target, the
    /// smooth normals of the mesh moved by the whole target, less the unmoved mesh's, on every
    /// vertex of a triangle the target moves (which adds the moved vertices' neighbours to its
    /// list). The skin pass then blends them as a file's own. Returns how many targets it did.
    pub fn recompute_morph_normals(&mut self) -> usize {
        let vertex_count = self.vertices.len();
        let triangles: Vec<[usize; 3]> = self
            .indices
            .chunks_exact(3)
            .map(|triangle| [triangle[0] as usize, triangle[1] as usize, triangle[2] as usize])
            .filter(|triangle| triangle.iter().all(|&index| index < vertex_count))
            .collect();
        // Each vertex's triangles (compressed rows), and the unmoved sums of their face normals.
        let mut starts = vec![0usize; vertex_count + 1];
        for &index in triangles.iter().flatten() {
            starts[index + 1] += 1;
        }
        for index in 0..vertex_count {
            starts[index + 1] += starts[index];
        }
        let mut filled = starts.clone();
        let mut around = vec![0usize; starts[vertex_count]];
        for (triangle, corners) in triangles.iter().enumerate() {
            for &index in corners {
                around[filled[index]] = triangle;
                filled[index] += 1;
            }
        }
        let face = |positions: &dyn Fn(usize) -> Vec3, [a, b, c]: [usize; 3]| {
            (positions(b) - positions(a)).cross(positions(c) - positions(a))
        };
        let rest = |index: usize| self.vertices[index].position;
        let mut base_sums = vec![Vec3::ZERO; vertex_count];
        for &corners in &triangles {
            let normal = face(&rest, corners);
            for index in corners {
                base_sums[index] += normal;
            }
        }
        let mut done = 0;
        for target in &mut self.morph_targets {
            if target.normals_recomputed || target.normal_deltas.iter().any(|&delta| delta != Vec3::ZERO) {
                continue;
            }
            let offsets: HashMap<usize, Vec3> =
                target.vertices.iter().zip(&target.position_deltas).map(|(&vertex, &delta)| (vertex as usize, delta)).collect();
            let moved = |index: usize| self.vertices[index].position + offsets.get(&index).copied().unwrap_or(Vec3::ZERO);
            // The triangles it moves, once each, and the change each makes to its corners' sums.
            let mut touched: Vec<usize> = offsets
                .keys()
                .filter(|&&vertex| vertex < vertex_count)
                .flat_map(|&vertex| around[starts[vertex]..starts[vertex + 1]].iter().copied())
                .collect();
            touched.sort_unstable();
            touched.dedup();
            let mut changes: std::collections::BTreeMap<usize, Vec3> = std::collections::BTreeMap::new();
            for &triangle in &touched {
                let corners = triangles[triangle];
                let change = face(&moved, corners) - face(&rest, corners);
                for index in corners {
                    *changes.entry(index).or_default() += change;
                }
            }
            let mut by_vertex: std::collections::BTreeMap<u32, (Vec3, Vec3)> = target
                .vertices
                .iter()
                .zip(&target.position_deltas)
                .map(|(&vertex, &delta)| (vertex, (delta, Vec3::ZERO)))
                .collect();
            for (index, change) in changes {
                let before = base_sums[index].normalize_or_zero();
                let after = (base_sums[index] + change).normalize_or_zero();
                by_vertex.entry(index as u32).or_insert((Vec3::ZERO, Vec3::ZERO)).1 = after - before;
            }
            target.vertices = by_vertex.keys().copied().collect();
            target.position_deltas = by_vertex.values().map(|&(position, _)| position).collect();
            target.normal_deltas = by_vertex.values().map(|&(_, normal)| normal).collect();
            target.normals_recomputed = true;
            done += 1;
        }
        done
    }
}

/// What a morph at some weights adds: the box of the moved points (without a skeleton, where they
/// stay in model space), and the farthest any offset reaches, stretched by its joints.
#[derive(Clone, Copy)]
struct Growth {
    points: Option<Aabb>,
    radius: f32,
}

/// Per vertex, the box of its summed offsets, and which vertices have one: reused from cell to cell.
struct OffsetBoxes {
    low: Vec<Vec3>,
    high: Vec<Vec3>,
    touched: Vec<usize>,
}

impl OffsetBoxes {
    fn new(vertex_count: usize) -> OffsetBoxes {
        OffsetBoxes { low: vec![Vec3::ZERO; vertex_count], high: vec![Vec3::ZERO; vertex_count], touched: Vec::new() }
    }

    fn add(&mut self, vertex: usize, low: Vec3, high: Vec3) {
        let (Some(at_low), Some(at_high)) = (self.low.get_mut(vertex), self.high.get_mut(vertex)) else { return };
        if *at_low == Vec3::ZERO && *at_high == Vec3::ZERO {
            self.touched.push(vertex);
        }
        *at_low += low;
        *at_high += high;
    }

    fn clear(&mut self) {
        for &vertex in &self.touched {
            self.low[vertex] = Vec3::ZERO;
            self.high[vertex] = Vec3::ZERO;
        }
        self.touched.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vertex named twice gets one entry with the offsets summed, and the list stays ascending.
    #[test]
    fn repeated_vertices_merge() {
        let mut target = MorphTarget {
            name: "shape".into(),
            vertices: vec![4, 1, 4],
            position_deltas: vec![Vec3::X, Vec3::Y, Vec3::Z],
            normal_deltas: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            default_weight: 0.0,
            normals_recomputed: false,
        };
        target.merge_repeated_vertices();
        assert_eq!(target.vertices, [1, 4]);
        assert_eq!(target.position_deltas, [Vec3::Y, Vec3::X + Vec3::Z]);
        assert_eq!(target.normal_deltas, [Vec3::X, Vec3::Y]);
    }
}
