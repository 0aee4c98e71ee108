//! The one model type every loader produces and the renderer consumes.
//!
//! Y-up, right-handed, metres-ish. Vertices are in the bind pose; animations keep the file's keys.
//! Its levels of detail are built in [`lod`].

mod clip_choice;
mod clips;
pub mod derived;
pub use clip_choice::NameKind;
mod facing;
mod file_layout;
mod front;
mod geometry;
mod influence_offsets;
pub mod lod;
mod morph;
mod samples;
mod travel;

pub use facing::Facing;
pub use file_layout::{FileLayout, FileMesh};
pub use geometry::{compute_normals, compute_tangents, normalize_influences};
pub use morph::{MorphTarget, VertexOffsets};
pub use samples::PoseSamples;
pub use travel::Travel;

use std::path::PathBuf;

use glam::{Vec2, Vec3, Vec4};

use crate::anim::bounds::ModelBounds;
use crate::anim::{Aabb, Animation, Clip, Influence, Skeleton};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vertex {
    /// Bind-pose position, model space.
    pub position: Vec3,
    /// Bind-pose normal, model space, unit length.
    pub normal: Vec3,
    /// Bind-pose tangent (xyz, unit) and bitangent sign (w = ±1), for normal maps.
    pub tangent: Vec4,
    pub uv: Vec2,
    /// Linear RGBA multiplied into the material's colour (glTF `COLOR_0`); white where the file
    /// gives none.
    pub color: Vec4,
    /// This vertex's influences are `Model::influences[first_influence..][..influence_count]`: every
    /// weight the file gave it, heaviest first, summing to 1. No cap: the skin pass walks the list.
    pub first_influence: u32,
    pub influence_count: u32,
}

impl Vertex {
    /// This vertex's influences within a model's list (empty if its range is out of bounds, which
    /// loaders never produce).
    pub fn influences<'a>(&self, all: &'a [Influence]) -> &'a [Influence] {
        let start = self.first_influence as usize;
        all.get(start..start.saturating_add(self.influence_count as usize)).unwrap_or(&[])
    }
}

/// A run of triangles drawn with one material.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    pub name: String,
    /// Into [`Model::indices`].
    pub first_index: u32,
    pub index_count: u32,
    pub material: usize,
}

/// Levels of detail a model may be drawn at, the full mesh included (`MAX_LEVELS` in common.glsl).
pub const MAX_LEVELS: usize = 8;

/// A simplified copy of a model's triangles (`lod::with_levels`; level 0, the full mesh, is the
/// model itself).
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// The level's vertices are the model's first `vertex_count`.
    pub vertex_count: u32,
    /// Its triangles, mesh after mesh, as indices into the model's vertices.
    pub indices: Vec<u32>,
    /// Each mesh's (first index, index count) in `indices`, in the model's mesh order.
    pub ranges: Vec<(u32, u32)>,
    /// How far (model units) a vertex of the full mesh lies from this level's surface at most, in
    /// the poses `lod` samples, with its margin.
    pub error: f32,
}

impl Level {
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }
}

/// A texture as its file encodes it (PNG, JPEG, TGA), its size read from the header; the renderer
/// decodes the pixels when it uploads them (`formats::texture`).
#[derive(Clone, Debug, PartialEq)]
pub struct Texture {
    pub path: PathBuf,
    pub width: u32,
    pub height: u32,
    pub encoded: std::sync::Arc<[u8]>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    pub name: String,
    /// Multiplies the texture, or is the colour when there is none.
    pub base_color: Vec4,
    pub texture: Option<Texture>,
    /// Tangent-space normal map (MD5's `_local`/`_normal` images, glTF's normalTexture).
    pub normal_map: Option<Texture>,
}

impl Material {
    /// What a part is drawn with when its file gives it no colour or texture (every loader's
    /// default, and a missing texture's fallback).
    pub fn untextured(name: impl Into<String>) -> Material {
        Material { name: name.into(), base_color: Vec4::new(0.8, 0.8, 0.8, 1.0), texture: None, normal_map: None }
    }
}

/// What a loader noticed that the user may want to know.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadStats {
    /// The largest influence count any vertex has.
    pub max_influences: usize,
    /// MD5: the farthest a vertex's weight puts it from its bind position (model units; 0 where
    /// every vertex's weights agree), which [`Model::influence_offsets`] carry.
    pub weight_disagreement: f32,
    /// Non-fatal problems, for example a texture that could not be found.
    pub warnings: Vec<String>,
    /// What went as it should but is worth a line (`--anim` clips that matched every joint).
    pub notes: Vec<String>,
}

impl LoadStats {
    /// The warnings as a person reads them: each once, in the order first given, with how many
    /// times it was given (the same texture missing from five meshes is one line, "(5 times)").
    pub fn warnings_counted(&self) -> Vec<String> {
        let mut counted: Vec<(&str, usize)> = Vec::new();
        let mut seen: ahash::AHashMap<&str, usize> = ahash::AHashMap::new();
        for warning in &self.warnings {
            match seen.get(warning.as_str()) {
                Some(&at) => counted[at].1 += 1,
                None => {
                    seen.insert(warning, counted.len());
                    counted.push((warning, 1));
                }
            }
        }
        counted
            .into_iter()
            .map(|(warning, times)| if times > 1 { format!("{warning} ({times} times)") } else { warning.to_string() })
            .collect()
    }
}

/// Times a cell is skinned at by [`Model::cell_tightness`].
pub const TIGHTNESS_SAMPLES: usize = 6;

/// [`Model::cell_tightness`]: cell box diagonal over skinned box diagonal, median and worst over the
/// cells measured, and how many of how many.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tightness {
    pub median: f32,
    pub worst: f32,
    pub cells: usize,
    pub of: usize,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    pub name: String,
    pub vertices: Vec<Vertex>,
    /// Every vertex's influence list, back to back (see [`Vertex::first_influence`]).
    pub influences: Vec<Influence>,
    /// Triangle list, indices into `vertices`.
    pub indices: Vec<u32>,
    pub meshes: Vec<Mesh>,
    pub materials: Vec<Material>,
    pub skeleton: Skeleton,
    /// The file's animations, keys as stored.
    pub animations: Vec<Animation>,
    /// What can be played: each animation whole, and any ranges cut from them.
    pub clips: Vec<Clip>,
    /// Culling bounds per animation ([`Model::compute_bounds`] fills them; `formats::load_model` calls it).
    pub bounds: ModelBounds,
    /// Simplified copies of the triangles, finest first, after the full mesh (level 0); empty until
    /// `lod::with_levels` makes them.
    pub levels: Vec<Level>,
    pub stats: LoadStats,
    /// Where the joints and vertices are in the file, in its units and axes (`inspect --pose`).
    pub layout: FileLayout,
    /// Blend shapes (glTF, COLLADA, FBX), animated by [`Animation::weights`]; the skin pass adds
    /// them before skinning.
    pub morph_targets: Vec<MorphTarget>,
    /// Empty, or one per influence (parallel to `influences`): where that influence's joint puts
    /// the vertex in the bind pose, less the vertex's `position`. MD5 gives each weight its own
    /// position, and where a vertex's weights disagree the format's vertex is the weighted sum of
    /// each joint carrying its own; see [`Model::settle_influence_offsets`].
    pub influence_offsets: Vec<Vec3>,
}

impl Model {
    /// Where each joint stands in the bind pose (model space), from its inverse bind matrix.
    pub fn bind_joint_positions(&self) -> Vec<Vec3> {
        self.skeleton.joints.iter().map(|joint| joint.inverse_bind.inverse().w_axis.truncate()).collect()
    }

    /// Bounds of the bind-pose vertices; for a skeleton-only model (no vertices), of the joints'
    /// bind positions, so it can still be framed and culled.
    pub fn bind_bounds(&self) -> Aabb {
        if self.vertices.is_empty() {
            return Aabb::from_points(self.bind_joint_positions());
        }
        Aabb::from_points(self.vertices.iter().map(|vertex| vertex.position))
    }

    /// Bounds over the bind pose and every cell of every animation (conservative: see
    /// [`crate::anim::bounds`]).
    pub fn animated_bounds(&self) -> Aabb {
        self.bounds.animations.iter().fold(self.rest_bounds(), |acc, animation| acc.union(animation.total()))
    }

    /// Every joint's model-space matrix in an animation at a time (no blending, no world): what the
    /// palette pass composes before the inverse binds. An unknown animation gives the rest pose.
    pub fn joint_matrices(&self, animation: usize, time: f32) -> Vec<glam::Mat4> {
        crate::anim::posed_models(&self.skeleton, self.animations.get(animation), time)
    }

    /// The skinning palette (model space, no world) of an animation at a time into `out`: the
    /// joint matrices times their inverse binds.
    pub fn palette_at(&self, animation: usize, time: f32, out: &mut [glam::Mat4]) {
        crate::anim::palette(&self.skeleton, &self.joint_matrices(animation, time), out);
    }

    /// The model's size scale that test tolerances are relative to: the bind pose's.
    pub fn extent(&self) -> f32 {
        self.bind_bounds().extent()
    }

    /// Where `vertex` is with `palette` (model space), or in the bind pose without one; a vertex
    /// that follows no joint stays where it is.
    pub fn skinned_position(&self, vertex: &Vertex, palette: Option<&[glam::Mat4]>) -> Vec3 {
        let influences = self.influences_of(vertex);
        match palette {
            Some(palette) if !influences.is_empty() && !palette.is_empty() => {
                let skinned = crate::anim::skin_position(palette, vertex.position, influences);
                skinned + crate::anim::offset_correction(palette, influences, self.influence_offsets_of(vertex))
            }
            _ => vertex.position,
        }
    }

    /// The union of the cells a clip plays through; `None` for an unknown clip or one whose
    /// animation has no cells.
    pub fn clip_bounds(&self, clip: usize) -> Option<Aabb> {
        let clip = self.clips.get(clip)?;
        let bounds = self.bounds.animations.get(clip.animation)?;
        let last = bounds.cells.len().checked_sub(1)?;
        let cell =
            |time: f32| if bounds.cell_duration > 0.0 { ((time / bounds.cell_duration).max(0.0) as usize).min(last) } else { 0 };
        let range = cell(clip.start)..=cell(clip.start + clip.duration.max(0.0));
        let union = bounds.cells.get(range)?.iter().fold(Aabb::EMPTY, |acc, cell| acc.union(*cell));
        (!union.is_empty()).then_some(union)
    }

    /// How close the culling cells are to what the vertices do: for cells spread over every
    /// animation, the diagonal of the cell's box over the diagonal of the box of the vertices morphed
    /// and skinned on the CPU at [`TIGHTNESS_SAMPLES`] times across the cell (the ends included). At most `budget`
    /// vertices are skinned in all, so the cells measured are fewer on a large model. `None` without
    /// animations or vertices.
    pub fn cell_tightness(&self, budget: usize) -> Option<Tightness> {
        let cells: Vec<(usize, usize)> = self
            .bounds
            .animations
            .iter()
            .enumerate()
            .flat_map(|(animation, bounds)| (0..bounds.cells.len()).map(move |cell| (animation, cell)))
            .collect();
        if cells.is_empty() || self.vertices.is_empty() || self.animations.is_empty() {
            return None;
        }
        let wanted = (budget / (TIGHTNESS_SAMPLES * self.vertices.len())).clamp(1, cells.len());
        let mut ratios = Vec::with_capacity(wanted);
        let mut palette = vec![glam::Mat4::IDENTITY; self.skeleton.len()];
        let offsets = VertexOffsets::of(self);
        for pick in 0..wanted {
            let (animation, cell) = cells[pick * cells.len() / wanted];
            let bounds = &self.bounds.animations[animation];
            let start = cell as f32 * bounds.cell_duration;
            let end =
                if cell + 1 == bounds.cells.len() { self.animations[animation].duration } else { start + bounds.cell_duration };
            let mut skinned = Aabb::EMPTY;
            for sample in 0..TIGHTNESS_SAMPLES {
                let time = start + (end - start) * sample as f32 / (TIGHTNESS_SAMPLES - 1) as f32;
                self.palette_at(animation, time, &mut palette);
                let weights = self.morph_weights(animation, time);
                for (index, vertex) in self.vertices.iter().enumerate() {
                    let morphed = Vertex { position: offsets.moved(index as u32, vertex.position, &weights), ..*vertex };
                    skinned = skinned.including(self.skinned_position(&morphed, Some(&palette)));
                }
            }
            let truth = skinned.size().length();
            if truth > 0.0 && truth.is_finite() {
                ratios.push(bounds.cells[cell].size().length() / truth);
            }
        }
        ratios.sort_by(f32::total_cmp);
        let worst = *ratios.last()?;
        Some(Tightness { median: ratios[ratios.len() / 2], worst, cells: ratios.len(), of: cells.len() })
    }

    /// A model of joints and clips without a mesh (a lone `.md5anim`, BVH, ACL's clips): each
    /// joint's inverse bind from its rest pose, a clip for each animation.
    pub fn skeleton_only(
        name: String,
        mut skeleton: Skeleton,
        animations: Vec<Animation>,
        stats: LoadStats,
        layout: FileLayout,
    ) -> Model {
        let models = crate::anim::posed_models(&skeleton, None, 0.0);
        for (joint, model) in skeleton.joints.iter_mut().zip(models) {
            joint.inverse_bind = model.inverse();
        }
        // No mesh: every other part empty.
        let mut model = Model { name, skeleton, animations, stats, layout, ..Model::default() };
        model.clip_each_animation();
        model
    }

    /// The culling cells of every animation, from the skeleton, animations and vertices (not their
    /// order), grown by what the morph targets do ([`Model::grow_cells_by_morph`]): what
    /// [`Model::bounds`] holds.
    pub fn cell_bounds(&self) -> crate::anim::bounds::ModelBounds {
        if self.vertices.is_empty() {
            // A skeleton without a mesh (a BVH file, a "without skin" download) is drawn as its
            // bones: its cells hold every joint, each carried by itself, so the camera and the
            // ground follow its whole motion.
            let influences: Vec<[Influence; 1]> =
                (0..self.skeleton.len()).map(|joint| [Influence { joint: joint as u32, weight: 1.0 }]).collect();
            let joints = self.bind_joint_positions().into_iter().zip(influences.iter().map(|one| one.as_slice()));
            return crate::anim::bounds::model_bounds(&self.skeleton, &self.animations, joints);
        }
        let vertices = self.vertices.iter().flat_map(|vertex| self.bind_points(vertex));
        let mut bounds = crate::anim::bounds::model_bounds(&self.skeleton, &self.animations, vertices);
        self.grow_cells_by_morph(&mut bounds);
        bounds
    }

    /// Fills [`Model::bounds`] ([`Model::cell_bounds`]).
    pub fn compute_bounds(&mut self) {
        self.bounds = self.cell_bounds();
    }

    /// A vertex's influences (see [`Vertex::influences`]).
    pub fn influences_of(&self, vertex: &Vertex) -> &[Influence] {
        vertex.influences(&self.influences)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit cube, counter-clockwise side out, with every corner split per face (as UV seams split
    /// vertices), moved by `offset`.
    fn cube(offset: Vec3) -> (Vec<Vec3>, Vec<u32>) {
        let corner = |bits: u32| offset + Vec3::new((bits & 1) as f32, ((bits >> 1) & 1) as f32, ((bits >> 2) & 1) as f32);
        // Each face's corners, counter-clockwise seen from outside.
        let faces = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]];
        let mut positions = Vec::new();
        let mut indices = Vec::new();
        for face in faces {
            let base = positions.len() as u32;
            positions.extend(face.map(corner));
            indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
        (positions, indices)
    }

    fn model_of(positions: Vec<Vec3>, indices: Vec<u32>) -> Model {
        let vertices = positions
            .into_iter()
            .map(|position| Vertex {
                position,
                normal: Vec3::Y,
                tangent: Vec4::X,
                uv: Vec2::ZERO,
                color: Vec4::ONE,
                first_influence: 0,
                influence_count: 0,
            })
            .collect();
        Model {
            name: "test".into(),
            vertices,
            influences: Vec::new(),
            indices,
            meshes: Vec::new(),
            materials: Vec::new(),
            skeleton: Skeleton::default(),
            animations: Vec::new(),
            clips: Vec::new(),
            bounds: ModelBounds::default(),
            levels: Vec::new(),
            stats: LoadStats::default(),
            layout: FileLayout::default(),
            morph_targets: Vec::new(),
            influence_offsets: Vec::new(),
        }
    }

    fn reversed(indices: &[u32]) -> Vec<u32> {
        indices.chunks_exact(3).flat_map(|triangle| [triangle[0], triangle[2], triangle[1]]).collect()
    }

    #[test]
    fn a_warning_given_again_is_one_line_with_a_count() {
        let stats = LoadStats {
            warnings: ["texture a.png not found", "joint b has shear", "texture a.png not found", "texture a.png not found"]
                .map(String::from)
                .to_vec(),
            ..LoadStats::default()
        };
        assert_eq!(stats.warnings_counted(), ["texture a.png not found (3 times)", "joint b has shear"]);
    }

    #[test]
    fn a_closed_box_faces_out_or_in_by_its_winding() {
        let (positions, indices) = cube(Vec3::ZERO);
        assert_eq!(model_of(positions.clone(), indices.clone()).facing(), Facing::Outward);
        assert_eq!(model_of(positions, reversed(&indices)).facing(), Facing::Inward);
    }

    #[test]
    fn a_hole_a_flipped_triangle_or_mixed_pieces_draw_both_sides() {
        let (positions, indices) = cube(Vec3::ZERO);
        let open = indices[3..].to_vec();
        assert_eq!(model_of(positions.clone(), open).facing(), Facing::TwoSided);
        let mut one_flipped = indices.clone();
        one_flipped.swap(1, 2);
        assert_eq!(model_of(positions.clone(), one_flipped).facing(), Facing::TwoSided);

        // Two closed boxes: both out is outward; one in, one out is neither.
        let (far_positions, far_indices) = cube(Vec3::new(3.0, 0.0, 0.0));
        let shift = positions.len() as u32;
        let mut both_positions = positions.clone();
        both_positions.extend(far_positions);
        let both_out: Vec<u32> = indices.iter().copied().chain(far_indices.iter().map(|index| index + shift)).collect();
        assert_eq!(model_of(both_positions.clone(), both_out).facing(), Facing::Outward);
        let mixed: Vec<u32> = indices.iter().copied().chain(reversed(&far_indices).iter().map(|index| index + shift)).collect();
        assert_eq!(model_of(both_positions, mixed).facing(), Facing::TwoSided);
    }

    #[test]
    fn the_bundled_figure_is_closed_and_faces_out() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/figure.md5mesh");
        let model = crate::formats::load_model(&path, &[]).expect("the bundled figure loads");
        assert_eq!(model.facing(), Facing::Outward);
    }

    #[test]
    fn pieces_touching_at_a_corner_are_judged_apart() {
        // An outward box of side 2 and a reversed unit box sharing only the corner (2, 2, 2): their
        // volumes (+8, -1) must not be summed into one "outward" piece.
        let (big_positions, big_indices) = cube(Vec3::ZERO);
        let big_positions: Vec<Vec3> = big_positions.into_iter().map(|position| position * 2.0).collect();
        let (small_positions, small_indices) = cube(Vec3::splat(2.0));
        let shift = big_positions.len() as u32;
        let positions: Vec<Vec3> = big_positions.into_iter().chain(small_positions).collect();
        let indices: Vec<u32> =
            big_indices.iter().copied().chain(reversed(&small_indices).iter().map(|index| index + shift)).collect();
        assert_eq!(model_of(positions, indices).facing(), Facing::TwoSided);
    }

    #[test]
    fn a_mirroring_clip_draws_both_sides() {
        let (positions, indices) = cube(Vec3::ZERO);
        let mut model = model_of(positions, indices);
        model.skeleton.joints.push(crate::anim::Joint::new("root", None, glam::Mat4::IDENTITY, crate::anim::JointPose::IDENTITY));
        let scale = |x: f32| crate::anim::Channel {
            joint: 0,
            property: crate::anim::Property::Scale,
            interpolation: crate::anim::Interpolation::Linear,
            times: crate::anim::KeyTimes::from_list(vec![0.0, 1.0]),
            mask: 0b0111,
            base: Vec4::ZERO,
            implied_w: false,
            wraps: false,
            values: vec![1.0, 1.0, 1.0, x, 1.0, 1.0],
        };
        model.animations.push(crate::anim::Animation {
            name: "mirror".into(),
            duration: 1.0,
            frame_rate: None,
            channels: vec![scale(-1.0)],
            file_key_bytes: 32,
            source: None,
            weights: Vec::new(),
            compressed: None,
            motion: None,
        });
        model.compute_bounds();
        assert_eq!(model.facing(), Facing::TwoSided);
        model.animations[0].channels[0] = scale(0.5);
        model.compute_bounds();
        assert_eq!(model.facing(), Facing::Outward);
    }

    #[test]
    fn nothing_to_close_draws_both_sides() {
        assert_eq!(model_of(Vec::new(), Vec::new()).facing(), Facing::TwoSided);
        assert_eq!(model_of(vec![Vec3::ZERO; 3], vec![0, 1, 2]).facing(), Facing::TwoSided);
        assert_eq!(model_of(vec![Vec3::ZERO; 3], vec![0, 1, 7]).facing(), Facing::TwoSided);
    }
}
