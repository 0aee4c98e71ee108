//! Skeletons, animations, sampling, blending and joint palettes: the CPU reference.
//!
//! Everything here is plain Rust on glam, with no Vulkan, so it is tested on the CPU alone. The GPU
//! palette and skin passes (`shaders/palette.comp.glsl`, `shaders/skin.comp.glsl`) compute the same
//! formulas in the same order; the GPU-vs-CPU tests hold them to it. The order of one instance's
//! work: sample every channel of its clip at its time ([`Animation::sample`], local poses), blend
//! a crossfade and a layer in local space ([`blend_local`]), compose parents first
//! ([`local_to_model`]) and multiply by the inverse binds ([`palette`]).

// Input-dependent code: no unwrap, expect or panic! outside tests (`cargo clippy` enforces it).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod bounds;
pub mod clip;
pub mod compress;
pub mod curve;
pub mod dual_quaternion;
pub mod hermite_sampling;
pub mod motion;
pub mod playback;
pub mod retarget;

pub use clip::{
    channel_table_words, Animation, Channel, Clip, ClipRange, Interpolation, KeyTimes, Property, RangeUnit, WeightChannel,
    CHANNEL_TABLE_NARROW_RECORDS,
};
pub use curve::{bracket, hermite, slerp_shortest, KeySpan};
pub use dual_quaternion::{skin_vertex_dual_quaternion, DualQuaternion};
pub use motion::{Motion, RootMotion};
pub use playback::{world_transform, Fade, InstanceState, Layer, Playback, Skinning};

use glam::{Mat4, Quat, Vec3};

/// One joint's pull on a vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Influence {
    pub joint: u32,
    pub weight: f32,
}

/// One joint of a skeleton. Joints are stored parents-first: `parent < own index` always holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    pub name: String,
    pub parent: Option<usize>,
    /// Model space -> joint space in the bind pose.
    pub inverse_bind: Mat4,
    /// The local pose with no animation: what channels replace parts of.
    pub rest: JointPose,
    /// A fixed transform between the parent joint's space (model space for a root) and the frame
    /// `rest` and the channels are in: MD5's Z-up to Y-up turn on its roots, glTF's non-joint nodes
    /// between two joints. The identity elsewhere.
    pub pre: Mat4,
}

impl Joint {
    /// A joint whose local frame is its parent's (no `pre`).
    pub fn new(name: impl Into<String>, parent: Option<usize>, inverse_bind: Mat4, rest: JointPose) -> Joint {
        Joint { name: name.into(), parent, inverse_bind, rest, pre: Mat4::IDENTITY }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skeleton {
    pub joints: Vec<Joint>,
}

impl Skeleton {
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    fn depths(&self) -> Vec<usize> {
        let mut depth = vec![0usize; self.joints.len()];
        for (index, joint) in self.joints.iter().enumerate() {
            depth[index] = joint.parent.and_then(|parent| depth.get(parent)).map_or(1, |parent| parent + 1);
        }
        depth
    }

    /// Length of the longest root-to-leaf chain, counting joints (a lone root has depth 1).
    pub fn depth(&self) -> usize {
        self.depths().into_iter().max().unwrap_or(0)
    }

    /// Per joint, the half-open range of depth-first entry numbers its subtree covers: joint `j`
    /// is under `root` (or is it) when `spans[root].0 <= spans[j].0 < spans[root].1`. Linear time.
    pub fn subtree_spans(&self) -> Vec<(u32, u32)> {
        let count = self.joints.len();
        let mut size = vec![1u32; count];
        for index in (0..count).rev() {
            if let Some(parent) = self.joints[index].parent.filter(|&parent| parent < index) {
                size[parent] += size[index];
            }
        }
        // Pre-order numbers: a parent's children take consecutive blocks after it.
        let mut spans = vec![(0u32, 0u32); count];
        let mut next_child = vec![0u32; count];
        let mut next_root = 0u32;
        for index in 0..count {
            let enter = match self.joints[index].parent.filter(|&parent| parent < index) {
                Some(parent) => {
                    let enter = next_child[parent];
                    next_child[parent] += size[index];
                    enter
                }
                None => {
                    let enter = next_root;
                    next_root += size[index];
                    enter
                }
            };
            spans[index] = (enter, enter + size[index]);
            next_child[index] = enter + 1;
        }
        spans
    }
}

/// A joint's local pose: scale, then rotate, then translate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointPose {
    pub rotation: Quat,
    pub translation: Vec3,
    /// 1 for MD5 and Milkshape; glTF may scale.
    pub scale: Vec3,
}

impl JointPose {
    pub const IDENTITY: JointPose = JointPose { rotation: Quat::IDENTITY, translation: Vec3::ZERO, scale: Vec3::ONE };

    /// A pose without scale.
    pub fn new(rotation: Quat, translation: Vec3) -> JointPose {
        JointPose { rotation, translation, scale: Vec3::ONE }
    }

    pub fn to_mat4(self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// Translation and scale lerp, rotation shortest-path slerp. Mirrors `blend_pose` in
    /// palette.comp.glsl: crossfades and layers blend local poses this way.
    pub fn interpolate(a: JointPose, b: JointPose, t: f32) -> JointPose {
        JointPose {
            rotation: slerp_shortest(a.rotation, b.rotation, t),
            translation: a.translation.lerp(b.translation, t),
            scale: a.scale.lerp(b.scale, t),
        }
    }
}

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    pub min: Vec3,
    pub max: Vec3,
}

impl Aabb {
    pub const EMPTY: Aabb = Aabb { min: Vec3::splat(f32::INFINITY), max: Vec3::splat(f32::NEG_INFINITY) };

    pub fn from_points(points: impl IntoIterator<Item = Vec3>) -> Aabb {
        points.into_iter().fold(Aabb::EMPTY, |aabb, point| aabb.including(point))
    }

    pub fn including(self, point: Vec3) -> Aabb {
        Aabb { min: self.min.min(point), max: self.max.max(point) }
    }

    pub fn union(self, other: Aabb) -> Aabb {
        Aabb { min: self.min.min(other.min), max: self.max.max(other.max) }
    }

    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// How far `point` is from the box (0 inside it).
    pub fn distance_to(&self, point: Vec3) -> f32 {
        ((point - self.center()).abs() - self.size() * 0.5).max(Vec3::ZERO).length()
    }

    pub fn size(&self) -> Vec3 {
        self.max - self.min
    }

    /// The largest side: the model's "extent" that test tolerances scale with.
    pub fn extent(&self) -> f32 {
        self.size().max_element()
    }

    pub fn corners(&self) -> [Vec3; 8] {
        let (a, b) = (self.min, self.max);
        [
            Vec3::new(a.x, a.y, a.z),
            Vec3::new(b.x, a.y, a.z),
            Vec3::new(a.x, b.y, a.z),
            Vec3::new(b.x, b.y, a.z),
            Vec3::new(a.x, a.y, b.z),
            Vec3::new(b.x, a.y, b.z),
            Vec3::new(a.x, b.y, b.z),
            Vec3::new(b.x, b.y, b.z),
        ]
    }

    /// The box around this box after an affine transform.
    pub fn transformed(&self, transform: Mat4) -> Aabb {
        Aabb::from_points(self.corners().map(|corner| transform.transform_point3(corner)))
    }
}

/// Blends `other` into `poses` by `weight` (0 keeps `poses`), for the joints `only` lets through:
/// all of them, or those under a subtree span (see [`Skeleton::subtree_spans`]). Local poses, so
/// bone lengths stay what the clips make them through the whole blend.
pub fn blend_local(poses: &mut [JointPose], other: &[JointPose], weight: f32, only: Option<(&[(u32, u32)], usize)>) {
    let within = only.and_then(|(spans, root)| spans.get(root).map(|&root_span| (spans, root_span)));
    for (index, (pose, &other)) in poses.iter_mut().zip(other).enumerate() {
        if let Some((spans, (enter, exit))) = within {
            let Some(&(joint_enter, _)) = spans.get(index) else { continue };
            if !(enter <= joint_enter && joint_enter < exit) {
                continue;
            }
        }
        *pose = JointPose::interpolate(*pose, other, weight);
    }
}

/// Model-space matrices from local poses, parents first: `parent × pre × pose` (`world × pre ×
/// pose` for a root). Mirrors the composition in palette.comp.glsl.
pub fn local_to_model(skeleton: &Skeleton, poses: &[JointPose], world: Mat4, out: &mut [Mat4]) {
    for index in 0..out.len().min(skeleton.len()).min(poses.len()) {
        out[index] = compose_joint(skeleton, out, index, poses[index], world);
    }
}

/// Joint `index`'s model-space matrix from its local pose and its parent's entry in `models`
/// (`world` for a root): `parent × pre × pose`, as [`local_to_model`] composes every joint.
pub fn compose_joint(skeleton: &Skeleton, models: &[Mat4], index: usize, pose: JointPose, world: Mat4) -> Mat4 {
    let joint = &skeleton.joints[index];
    let parent = joint.parent.filter(|&parent| parent < index).map_or(world, |parent| models[parent]);
    // Most joints have no pre-transform: the product without it is the same (bit for bit, but for
    // the sign of an exact zero).
    match joint.pre == Mat4::IDENTITY {
        true => parent * pose.to_mat4(),
        false => parent * joint.pre * pose.to_mat4(),
    }
}

/// Model-space matrices of `skeleton` posed by `animation` at `time` (its rest where the animation
/// keys nothing), or at rest without one: no blending, no world.
pub fn posed_models(skeleton: &Skeleton, animation: Option<&Animation>, time: f32) -> Vec<Mat4> {
    let mut poses: Vec<JointPose> = skeleton.joints.iter().map(|joint| joint.rest).collect();
    if let Some(animation) = animation {
        animation.sample(skeleton, time, &mut poses);
    }
    let mut models = vec![Mat4::IDENTITY; skeleton.len()];
    local_to_model(skeleton, &poses, Mat4::IDENTITY, &mut models);
    models
}

/// Joint palette: `model × inverse bind` per joint, ready to multiply bind-pose vertices.
pub fn palette(skeleton: &Skeleton, models: &[Mat4], out: &mut [Mat4]) {
    for ((out, joint), model) in out.iter_mut().zip(&skeleton.joints).zip(models) {
        *out = *model * joint.inverse_bind;
    }
}

/// The bind-pose palette: `world` for every joint, since pose × inverse bind is the identity there.
pub fn bind_palette(skeleton: &Skeleton, world: Mat4) -> Vec<Mat4> {
    vec![world; skeleton.len().max(1)]
}

/// A skinned vertex from the CPU reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Skinned {
    pub position: Vec3,
    pub normal: Vec3,
    pub tangent: Vec3,
}

/// Skins one vertex with every influence it has. Mirrors `main` in skin.comp.glsl: position by the
/// weighted palette sum, normal and tangent by the same sum's linear part, then renormalized.
/// An influence naming a joint outside the palette is skipped (loaders never produce one).
pub fn skin_vertex(palette: &[Mat4], position: Vec3, normal: Vec3, tangent: Vec3, influences: &[Influence]) -> Skinned {
    let blended = blend(palette, influences);
    Skinned {
        position: (blended * position.extend(1.0)).truncate(),
        normal: (blended * normal.extend(0.0)).truncate().normalize_or_zero(),
        tangent: (blended * tangent.extend(0.0)).truncate().normalize_or_zero(),
    }
}

/// [`skin_vertex`]'s position alone: the same blend, without the normal and tangent.
pub fn skin_position(palette: &[Mat4], position: Vec3, influences: &[Influence]) -> Vec3 {
    blend(palette, influences).transform_point3(position)
}

/// The influences' palette matrices, weighted and summed. The blend is linear in the matrix:
/// blend once, transform once (as shaders/skinning.glsl does).
fn blend(palette: &[Mat4], influences: &[Influence]) -> Mat4 {
    let mut blended = Mat4::ZERO;
    for influence in influences {
        let Some(matrix) = palette.get(influence.joint as usize) else { continue };
        blended += *matrix * influence.weight;
    }
    blended
}

/// What a vertex's influence offsets (`Model::influence_offsets`) add to its skinned position:
/// each influence's offset turned by its matrix's linear part, weighted. With it, linear blending is
/// the weighted sum of each joint carrying its own point, MD5's definition. Dual-quaternion
/// blending adds the same: a rigid palette matrix's linear part is its rotation times its scale.
/// Zero where `offsets` is empty. Mirrors shaders/skinning.glsl.
pub fn offset_correction(palette: &[Mat4], influences: &[Influence], offsets: &[Vec3]) -> Vec3 {
    influences
        .iter()
        .zip(offsets)
        .filter_map(|(influence, &offset)| {
            Some(palette.get(influence.joint as usize)?.transform_vector3(offset) * influence.weight)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skinning_with_one_full_weight_is_the_matrix() {
        let matrix = Mat4::from_rotation_translation(Quat::from_rotation_z(1.0), Vec3::new(1.0, 2.0, 3.0));
        let skinned = skin_vertex(&[matrix], Vec3::X, Vec3::Y, Vec3::Z, &[Influence { joint: 0, weight: 1.0 }]);
        assert!(skinned.position.distance(matrix.transform_point3(Vec3::X)) < 1e-6);
        assert!(skinned.normal.distance(matrix.transform_vector3(Vec3::Y)) < 1e-6);
        assert!(skinned.tangent.distance(matrix.transform_vector3(Vec3::Z)) < 1e-6);
    }

    #[test]
    fn aabb_transform_and_depth() {
        let aabb = Aabb::from_points([Vec3::ZERO, Vec3::ONE]);
        let moved = aabb.transformed(Mat4::from_translation(Vec3::splat(2.0)));
        assert_eq!(moved.min, Vec3::splat(2.0));
        assert_eq!(aabb.extent(), 1.0);
        let joint = |parent| Joint::new("", parent, Mat4::IDENTITY, JointPose::IDENTITY);
        let skeleton = Skeleton { joints: vec![joint(None), joint(Some(0)), joint(Some(1)), joint(Some(0))] };
        assert_eq!(skeleton.depth(), 3);
        let spans = skeleton.subtree_spans();
        assert_eq!(spans, vec![(0, 4), (1, 3), (2, 3), (3, 4)]);
    }

    #[test]
    fn a_layer_moves_only_its_subtree_and_composition_keeps_bone_lengths() {
        let joint =
            |parent, x: f32| Joint::new("", parent, Mat4::IDENTITY, JointPose::new(Quat::IDENTITY, Vec3::new(x, 0.0, 0.0)));
        // 0 -> 1 -> 2, and 0 -> 3.
        let skeleton = Skeleton { joints: vec![joint(None, 0.0), joint(Some(0), 1.0), joint(Some(1), 1.0), joint(Some(0), 1.0)] };
        let rest: Vec<JointPose> = skeleton.joints.iter().map(|joint| joint.rest).collect();
        let mut turned = rest.clone();
        for pose in &mut turned {
            pose.rotation = Quat::from_rotation_z(3.0);
        }
        let spans = skeleton.subtree_spans();
        let mut layered = rest.clone();
        blend_local(&mut layered, &turned, 0.5, Some((&spans, 1)));
        assert_eq!(layered[0], rest[0]);
        assert_eq!(layered[3], rest[3]);
        assert_ne!(layered[1], rest[1]);
        assert_ne!(layered[2], rest[2]);
        let mut models = vec![Mat4::IDENTITY; 4];
        local_to_model(&skeleton, &layered, Mat4::IDENTITY, &mut models);
        let bone = models[2].w_axis.truncate().distance(models[1].w_axis.truncate());
        assert!((bone - 1.0).abs() < 1e-6);
    }
}
