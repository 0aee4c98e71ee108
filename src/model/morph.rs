//! Morph targets (blend shapes): what a target holds, its weights at a time, the CPU reference of
//! the skin pass's morph, and the normal offsets a file leaves out, computed from the triangles.

use glam::Vec3;

use super::{Model, Vertex};

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
    /// The vertices renumbered (`new_index[old]`), still ascending, their offsets with them.
    pub fn renumber_vertices(&mut self, new_index: &[u32]) {
        let mut moved: Vec<(u32, Vec3, Vec3)> = self
            .vertices
            .iter()
            .zip(self.position_deltas.iter().zip(&self.normal_deltas))
            .map(|(&vertex, (&position, &normal))| (new_index.get(vertex as usize).copied().unwrap_or(vertex), position, normal))
            .collect();
        moved.sort_by_key(|&(vertex, _, _)| vertex);
        self.vertices = moved.iter().map(|&(vertex, _, _)| vertex).collect();
        self.position_deltas = moved.iter().map(|&(_, position, _)| position).collect();
        self.normal_deltas = moved.iter().map(|&(_, _, normal)| normal).collect();
    }
}

impl Model {
    /// Every morph target's weight at `time` into `animation`: its channel's, or its default.
    pub fn morph_weights(&self, animation: usize, time: f32) -> Vec<f32> {
        let mut weights: Vec<f32> = self.morph_targets.iter().map(|target| target.default_weight).collect();
        for channel in self.animations.get(animation).map_or(&[][..], |animation| &animation.weights) {
            if let Some(weight) = weights.get_mut(channel.target) {
                *weight = channel.sample(time);
            }
        }
        weights
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
            let offsets: std::collections::HashMap<usize, Vec3> =
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
