//! The cull pass's choices on the CPU: the levels of detail it picks (`LevelChoice`, from the
//! frame's projection and the shadow map's texels) and the CPU reference of what it keeps and at
//! which levels, which the tests and the `cpu` strategy use.

use glam::{Mat4, Vec3};

use crate::anim::Aabb;
use crate::model::Model;
use crate::render::shader_types::{frustum_planes, InstanceData, NO_CLIP};
use crate::render::FrameScene;

/// What the camera and the light see of one instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    pub camera: bool,
    pub light: bool,
}

/// What the cull pass needs to pick levels of detail: each level's error (level 0's is 0), how
/// many pixels a model unit covers one unit in front of the camera over the pixel error allowed,
/// and the shadow map's level.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelChoice {
    /// The levels' errors of the model the CPU's mirrors pick for (the renderer's first).
    pub errors: Vec<f32>,
    pub pixels_at_unit: f32,
    /// The shadow map's level of an instance is its model's coarsest whose error, times the
    /// instance's scale, is at most this: a texel (world units). The cull pass picks it per
    /// instance (`light_level_at`).
    pub light_error: f32,
}

impl LevelChoice {
    /// Largest error a level may have, in pixels: one.
    pub const PIXEL_ERROR: f32 = 1.0;

    /// For a frame of `extent_height` pixels seen through `view_projection` (a perspective
    /// projection), with a shadow map of `shadow_size` texels square over `light_view_projection`
    /// (an orthographic one).
    pub fn new(
        errors: Vec<f32>,
        view_projection: Mat4,
        extent_height: u32,
        (light_view_projection, shadow_size): (Mat4, u32),
    ) -> LevelChoice {
        // Clip y is P11 × view y, and clip w is −view z: the rows' lengths give P11 whatever the view.
        let (y_row, w_row) = (view_projection.row(1).truncate(), view_projection.row(3).truncate());
        let pixels_at_unit = y_row.length() / w_row.length().max(1e-12) * extent_height as f32 * 0.5 / Self::PIXEL_ERROR;
        // An orthographic light: clip x and y are 2 / width × light x and y.
        let (x_row, y_row) = (light_view_projection.row(0).truncate(), light_view_projection.row(1).truncate());
        let texel = 2.0 / (x_row.length().max(y_row.length()) * shadow_size as f32).max(1e-12);
        let light_error = texel * Self::PIXEL_ERROR;
        LevelChoice { errors, pixels_at_unit: if pixels_at_unit.is_finite() { pixels_at_unit } else { 0.0 }, light_error }
    }

    /// The coarsest of `errors`' levels whose error times `scale` is at most `error` (cull.comp's
    /// light_level: the same product and comparison, so the two agree to the bit).
    pub fn coarsest_within(errors: &[f32], scale: f32, error: f32) -> u32 {
        (1..errors.len()).rev().find(|&level| errors[level] * scale <= error).unwrap_or(0) as u32
    }

    /// The same frame's choice for a model whose levels have `errors`.
    pub fn for_errors(&self, errors: Vec<f32>) -> LevelChoice {
        LevelChoice { errors, ..self.clone() }
    }

    /// The shadow map's level for an instance of `errors`' model at `scale`.
    pub fn light_level_at(&self, scale: f32) -> u32 {
        Self::coarsest_within(&self.errors, scale, self.light_error)
    }

    /// Animation LOD's `CullPush::far_ratio` for a threshold of `pixels` across on screen: the
    /// box's diameter over its distance below which an instance is far; 0 (off) for a camera
    /// that covers no pixels.
    pub fn far_ratio(&self, pixels: f32) -> f32 {
        if self.pixels_at_unit > 0.0 {
            pixels / (self.pixels_at_unit * Self::PIXEL_ERROR)
        } else {
            0.0
        }
    }

    /// The coarsest level whose error covers at most a pixel at `distance` in front of the camera
    /// (cull.comp's `camera_level`).
    pub fn camera_level(&self, distance: f32) -> u32 {
        self.camera_level_of(&self.errors, distance)
    }

    /// `camera_level` for a model whose levels have `errors`.
    pub fn camera_level_of(&self, errors: &[f32], distance: f32) -> u32 {
        (1..errors.len()).rev().find(|&level| errors[level] * self.pixels_at_unit <= distance).unwrap_or(0) as u32
    }
}

/// Levels the cull pass picks for one instance: the camera's (when it sees it), the shadow map's
/// (when the light does), and the one it is skinned at, the finer of those.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Levels {
    pub camera: Option<u32>,
    pub light: Option<u32>,
    pub skinned: u32,
}

/// The CPU reference of cull.comp's levels of detail for the instances either view sees (None for
/// the others). `margin` > 0 makes it conservative against the GPU's rounding: boxes grown and
/// distances shrunk by that fraction, so it sees at least what the GPU sees, at a level no
/// coarser (the `cpu` strategy skins by it); 0 is cull.comp's own test.
pub fn reference_levels(
    model: &Model,
    scene: &FrameScene,
    instances: &[InstanceData],
    choice: &LevelChoice,
    margin: f32,
) -> Vec<Option<Levels>> {
    reference_boxes(model, scene, instances, margin)
        .zip(instances)
        .map(|((world, seen), data)| {
            // A level's error grows with the instance's scale, as in cull.comp.
            let distance = world.distance_to(scene.camera_position) * (1.0 - margin) / data.scale;
            let camera_level = seen.camera.then(|| choice.camera_level(distance));
            let light_level = seen.light.then(|| choice.light_level_at(data.scale));
            let skinned = match (camera_level, light_level) {
                (Some(camera), Some(light)) => camera.min(light),
                (Some(level), None) | (None, Some(level)) => level,
                (None, None) => return None,
            };
            Some(Levels { camera: camera_level, light: light_level, skinned })
        })
        .collect()
}

/// Each instance's world box as cull.comp tests it (grown by `margin`, a fraction of its size plus
/// that much, as `reference_levels` says), and whether the camera and the light see it.
pub(super) fn reference_boxes<'a>(
    model: &'a Model,
    scene: &'a FrameScene,
    instances: &'a [InstanceData],
    margin: f32,
) -> impl Iterator<Item = (Aabb, Seen)> + 'a {
    let camera = frustum_planes(scene.view_projection);
    let light = frustum_planes(scene.light_view_projection);
    instances.iter().map(move |data| {
        let world = animated_box(model, data, hand_set(scene)).transformed(data.world());
        let grow = world.size() * margin + Vec3::splat(margin);
        let world = Aabb { min: world.min - grow, max: world.max + grow };
        (world, Seen { camera: box_in_volume(world, &camera), light: box_in_volume(world, &light) })
    })
}

/// The box cull.comp tests for an instance, in model space: its animation's cell at its time (and
/// during a crossfade or with a layer, the other animations' cells too, grown by the blend reach);
/// the bind pose without an animation.
/// Grown by `ModelBounds::morph_reach` where a morph weight is set by hand (`hand_set`).
pub fn animated_box(model: &Model, data: &InstanceData, hand_set: bool) -> Aabb {
    let reach = Vec3::splat(if hand_set { model.bounds.morph_reach } else { 0.0 });
    let grown = |bounds: Aabb| Aabb { min: bounds.min - reach, max: bounds.max + reach };
    // The rest pose's box, over every vertex: only for an instance without a clip or its cells.
    let bind = || grown(model.rest_bounds());
    let cell =
        |animation: u32, time: f32| model.bounds.animations.get(animation as usize).map_or(Aabb::EMPTY, |bounds| bounds.at(time));
    if data.animation_a() == NO_CLIP {
        return bind();
    }
    let mut bounds = cell(data.animation_a(), data.time_a);
    if data.fading() {
        bounds = bounds.union(cell(data.animation_b(), data.time_b));
    }
    if data.layered() {
        bounds = bounds.union(cell(data.layer_animation(), data.time_layer));
    }
    if bounds.is_empty() {
        return bind();
    }
    if data.fading() || data.layered() || data.dual_quaternion() {
        let reach = Vec3::splat(model.bounds.blend_reach);
        bounds = Aabb { min: bounds.min - reach, max: bounds.max + reach };
    }
    grown(bounds)
}

/// Whether some morph weight is set by hand in `scene` (the cull pass then grows every box by the
/// model's morph reach).
pub fn hand_set(scene: &FrameScene) -> bool {
    scene.morph_overrides.iter().any(Option::is_some)
}

/// The CPU reference of cull.comp: which of `instances` (the scene's at its clock) the camera and
/// the light see.
pub fn reference_visibility(model: &Model, scene: &FrameScene, instances: &[InstanceData]) -> Vec<Seen> {
    reference_boxes(model, scene, instances, 0.0).map(|(_, seen)| seen).collect()
}

/// False when the box lies wholly behind one of the planes (inside: n·p + d ≥ 0).
pub fn box_in_volume(bounds: Aabb, planes: &[[f32; 4]; 6]) -> bool {
    let (center, half) = (bounds.center(), bounds.size() * 0.5);
    planes.iter().all(|&[x, y, z, d]| {
        let normal = Vec3::new(x, y, z);
        normal.dot(center) + normal.abs().dot(half) + d >= 0.0
    })
}
