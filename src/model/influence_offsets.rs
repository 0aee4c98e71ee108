//! Influences with positions of their own (MD5's weights): which the skinning carries, and the
//! points each joint carries for the culling cells.

use glam::Vec3;

use super::{Model, Vertex};
use crate::anim::Influence;

/// Offsets this small against the model's size are dropped: skinning the vertex at its one bind
/// position then moves it by less than this fraction of the extent.
const NEGLIGIBLE: f32 = 1e-6;

impl Model {
    /// Keeps `influence_offsets` only where they matter, and records the largest in
    /// `stats.weight_disagreement`: a vertex whose influences all put it within [`NEGLIGIBLE`] ×
    /// extent of its position gets zero offsets (the GPU then reads none for it:
    /// `SourceVertex::influence_count`'s top bit), and a model with none left keeps an empty list.
    pub fn settle_influence_offsets(&mut self) {
        if self.influence_offsets.len() != self.influences.len() {
            self.influence_offsets.clear();
            return;
        }
        let largest = self.influence_offsets.iter().map(|offset| offset.length()).fold(0.0, f32::max);
        self.stats.weight_disagreement = largest;
        let negligible = NEGLIGIBLE * self.extent();
        let mut any = false;
        for vertex in &self.vertices {
            let start = vertex.first_influence as usize;
            let Some(offsets) = self.influence_offsets.get_mut(start..start + vertex.influence_count as usize) else { continue };
            if offsets.iter().all(|offset| offset.length() <= negligible) {
                offsets.fill(Vec3::ZERO);
            } else {
                any = true;
            }
        }
        if !any {
            self.influence_offsets.clear();
        }
    }

    /// `vertex`'s influence offsets, parallel to its influences; empty where it has none.
    pub fn influence_offsets_of(&self, vertex: &Vertex) -> &[Vec3] {
        let start = vertex.first_influence as usize;
        self.influence_offsets.get(start..start.saturating_add(vertex.influence_count as usize)).unwrap_or(&[])
    }

    /// Whether `vertex` is skinned with offsets: some influence puts it elsewhere.
    pub fn has_influence_offsets(&self, vertex: &Vertex) -> bool {
        self.influence_offsets_of(vertex).iter().any(|&offset| offset != Vec3::ZERO)
    }

    /// The bind-pose points `vertex`'s joints carry, each with the influences that carry it: its
    /// position with all of them, or, with offsets, each influence's own point with that influence.
    /// What a joint's reach (the culling cells) is measured from: the skinned vertex is a weighted
    /// mean of the points as their joints carry them, so it stays within their boxes' hull.
    pub fn bind_points<'a>(&'a self, vertex: &'a Vertex) -> impl Iterator<Item = (Vec3, &'a [Influence])> + 'a {
        let influences = self.influences_of(vertex);
        let offsets = self.has_influence_offsets(vertex).then(|| self.influence_offsets_of(vertex));
        let whole = offsets.is_none().then_some((vertex.position, influences));
        let each = offsets.into_iter().flat_map(move |offsets| {
            influences
                .iter()
                .zip(offsets)
                .map(move |(influence, &offset)| (vertex.position + offset, std::slice::from_ref(influence)))
        });
        whole.into_iter().chain(each)
    }
}
