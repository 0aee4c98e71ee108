//! Skeletons, baked clips, sampling and joint palettes: the CPU reference.
//!
//! Everything here is plain Rust on glam, with no Vulkan, so it is tested on the CPU alone. The GPU
//! palette and skin passes (`shaders/palette.comp.glsl`, `shaders/skin.comp.glsl`) compute the same
//! formulas in the same order; the GPU-vs-CPU tests hold them to it.

// Input-dependent code: no unwrap, expect or panic! outside tests (`cargo clippy` enforces it).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

use glam::{Mat4, Quat, Vec3, Vec4};

use crate::model::Influence;

/// One joint of a skeleton. Joints are stored parents-first: `parent < own index` always holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    pub name: String,
    pub parent: Option<usize>,
    /// Model space -> joint space in the bind pose.
    pub inverse_bind: Mat4,
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

    /// Length of the longest root-to-leaf chain, counting joints (a lone root has depth 1).
    pub fn depth(&self) -> usize {
        let mut depth = vec![0usize; self.joints.len()];
        for (index, joint) in self.joints.iter().enumerate() {
            depth[index] = joint.parent.map_or(1, |parent| depth[parent] + 1);
        }
        depth.into_iter().max().unwrap_or(0)
    }
}

/// A joint's model-space pose: scale, then rotate, then translate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointPose {
    pub rotation: Quat,
    pub translation: Vec3,
    /// 1 for MD5; glTF and MS3D may scale (a sheared model-space matrix keeps its closest scale).
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

    /// Translation and scale lerp, rotation shortest-path slerp. Mirrors `interpolate_pose` in
    /// palette.comp.glsl; used between baked frames and for crossfades between clips.
    pub fn interpolate(a: JointPose, b: JointPose, t: f32) -> JointPose {
        JointPose {
            rotation: slerp_shortest(a.rotation, b.rotation, t),
            translation: a.translation.lerp(b.translation, t),
            scale: a.scale.lerp(b.scale, t),
        }
    }
}

/// Spherical interpolation along the shorter arc, written out so the shader can copy it exactly.
/// Falls back to a normalized lerp when the two rotations are nearly equal (sin θ ≈ 0).
pub fn slerp_shortest(a: Quat, b: Quat, t: f32) -> Quat {
    let a = Vec4::from(a);
    let mut b = Vec4::from(b);
    let mut cos_theta = a.dot(b);
    if cos_theta < 0.0 {
        b = -b;
        cos_theta = -cos_theta;
    }
    let blended = if cos_theta > 0.9995 {
        a.lerp(b, t)
    } else {
        let theta = cos_theta.min(1.0).acos();
        let sin_theta = theta.sin();
        a * (((1.0 - t) * theta).sin() / sin_theta) + b * ((t * theta).sin() / sin_theta)
    };
    Quat::from_vec4(blended.normalize())
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

/// Where a time falls in a clip: two frames and the fraction between them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplePoint {
    pub frame0: usize,
    pub frame1: usize,
    pub fraction: f32,
}

/// A clip baked as model-space joint poses, one set per frame, played looping at `frame_rate`.
///
/// Two ways a loop closes, chosen by `wraps`: MD5's last frame interpolates back into the first, so
/// N frames last N / frame_rate s; a clip baked from keyed curves (glTF, MS3D) stores its end state
/// as an extra last frame, so N + 1 frames last N / frame_rate s and the end is reached exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    pub name: String,
    pub frame_rate: f32,
    pub joint_count: usize,
    pub wraps: bool,
    /// `frame_count × joint_count` poses, frame-major.
    pub poses: Vec<JointPose>,
    /// Model-space bounds of the skinned mesh at each frame.
    pub bounds: Vec<Aabb>,
}

impl Clip {
    /// Frames stored.
    pub fn frame_count(&self) -> usize {
        self.poses.len().checked_div(self.joint_count).unwrap_or(0)
    }

    /// Frame intervals in one loop: the stored frames, less the end frame of a non-wrapping clip.
    pub fn period_frames(&self) -> usize {
        let stored = self.frame_count();
        if self.wraps {
            stored.max(1)
        } else {
            stored.saturating_sub(1).max(1)
        }
    }

    pub fn duration(&self) -> f32 {
        self.period_frames() as f32 / self.frame_rate
    }

    pub fn frame(&self, frame: usize) -> &[JointPose] {
        &self.poses[frame * self.joint_count..(frame + 1) * self.joint_count]
    }

    /// Wraps any time (negative too) into [0, duration). The CPU does this in f64 before a time is
    /// handed to the GPU, so f32 keeps its precision however long the program runs.
    pub fn wrap_time(&self, seconds: f64) -> f32 {
        let duration = f64::from(self.duration());
        if duration <= 0.0 {
            return 0.0;
        }
        let wrapped = seconds.rem_euclid(duration) as f32;
        // rem_euclid can round up to exactly `duration` in f32.
        if wrapped >= self.duration() {
            0.0
        } else {
            wrapped
        }
    }

    /// The frames around a wrapped time. Mirrors `sample_pose` in palette.comp.glsl.
    pub fn sample_point(&self, time: f32) -> SamplePoint {
        let stored = self.frame_count().max(1);
        let position = (time * self.frame_rate).max(0.0);
        let whole = position.floor();
        let frame0 = (whole as usize) % self.period_frames();
        SamplePoint { frame0, frame1: (frame0 + 1) % stored, fraction: position - whole }
    }

    /// Model-space joint poses at a wrapped time.
    pub fn sample(&self, time: f32, out: &mut [JointPose]) {
        let point = self.sample_point(time);
        let (a, b) = (self.frame(point.frame0), self.frame(point.frame1));
        for ((out, &a), &b) in out.iter_mut().zip(a).zip(b) {
            *out = JointPose::interpolate(a, b, point.fraction);
        }
    }

    /// Bounds at a wrapped time: the union of the two frames' boxes, so it never under-covers.
    pub fn bounds_at(&self, time: f32) -> Aabb {
        let point = self.sample_point(time);
        self.bounds[point.frame0].union(self.bounds[point.frame1])
    }

    /// Bounds over the whole clip.
    pub fn total_bounds(&self) -> Aabb {
        self.bounds.iter().fold(Aabb::EMPTY, |acc, frame| acc.union(*frame))
    }
}

/// Lowest baking rate for clips defined by keyed curves (glTF, MS3D). The palette pass interpolates
/// baked frames; `measure_bake_error` says how far that strays from evaluating the curves directly,
/// and `bake_clip_within` doubles the rate until that error is small enough.
pub const BAKE_RATE: f32 = 60.0;

/// Highest baking rate `bake_clip_within` tries: 16 × BAKE_RATE.
pub const MAX_BAKE_RATE: f32 = 960.0;

/// The error bound `bake_clip_within` aims for, relative to the model's extent.
pub const BAKE_TOLERANCE: f32 = 1e-3;

/// Bakes a clip from a function that evaluates model-space poses at a time in [0, duration]: frames
/// at `k × duration / N` for k = 0..=N with N = ceil(duration × rate), so the last frame is the
/// clip's end state and `wraps` is false. A clip of zero duration bakes one frame, played as a pose.
/// Bounds are left empty for `Model::compute_clip_bounds`.
pub fn bake_clip(
    name: &str,
    duration: f32,
    rate: f32,
    joint_count: usize,
    mut evaluate: impl FnMut(f32, &mut [JointPose]),
) -> Clip {
    let intervals = if duration > 0.0 && duration.is_finite() { (duration * rate).ceil().max(1.0) as usize } else { 1 };
    let frame_rate = if duration > 0.0 && duration.is_finite() { intervals as f32 / duration } else { rate };
    let mut poses = vec![JointPose::IDENTITY; (intervals + 1) * joint_count];
    for (frame, out) in poses.chunks_exact_mut(joint_count.max(1)).enumerate() {
        let time = if duration > 0.0 { duration * frame as f32 / intervals as f32 } else { 0.0 };
        evaluate(time, out);
    }
    Clip { name: name.to_string(), frame_rate, joint_count, wraps: false, poses, bounds: vec![Aabb::EMPTY; intervals + 1] }
}

/// Bakes at BAKE_RATE, then at twice that and so on up to MAX_BAKE_RATE, until the measured error
/// against direct evaluation is at most `tolerance` (model units) or the next rate would store more
/// than `max_frames` frames. Returns the clip, the rate chosen and its measured error: fast turns
/// between sparse keys (a joint spinning 2 rad in 1/30 s) need the higher rates, smooth clips stay at
/// 60 Hz.
pub fn bake_clip_within(
    name: &str,
    duration: f32,
    joint_count: usize,
    tolerance: f32,
    max_frames: usize,
    mut evaluate: impl FnMut(f32, &mut [JointPose]),
) -> (Clip, f32, f32) {
    let mut rate = BAKE_RATE;
    loop {
        let clip = bake_clip(name, duration, rate, joint_count, &mut evaluate);
        let error = measure_bake_error(&clip, &mut evaluate);
        let next_frames = (clip.frame_count() - 1).saturating_mul(2) + 1;
        if error <= tolerance || rate * 2.0 > MAX_BAKE_RATE || next_frames > max_frames {
            return (clip, rate, error);
        }
        rate *= 2.0;
    }
}

/// The largest distance between a joint's baked-and-interpolated position and its directly
/// evaluated one, checked halfway between every pair of baked frames (where the error peaks), in
/// model units. Joint positions stand in for the vertices they carry.
pub fn measure_bake_error(clip: &Clip, mut evaluate: impl FnMut(f32, &mut [JointPose])) -> f32 {
    let mut baked = vec![JointPose::IDENTITY; clip.joint_count];
    let mut exact = vec![JointPose::IDENTITY; clip.joint_count];
    let mut worst = 0.0f32;
    for frame in 0..clip.period_frames() {
        let time = (frame as f32 + 0.5) / clip.frame_rate;
        clip.sample(time, &mut baked);
        evaluate(time, &mut exact);
        for (a, b) in baked.iter().zip(&exact) {
            // A point one unit out along each axis catches rotation and scale errors too.
            for probe in [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z] {
                worst = worst.max(a.to_mat4().transform_point3(probe).distance(b.to_mat4().transform_point3(probe)));
            }
        }
    }
    worst
}

/// Crossfades two sets of poses (`t` = 0 gives `from`). Mirrors the blend in palette.comp.glsl.
/// The poses are model-space, so this blends each joint's final placement, not its local motion:
/// cheap and smooth for a short fade, though a long fade between very different clips can stretch limbs.
pub fn blend_poses(from: &[JointPose], to: &[JointPose], t: f32, out: &mut [JointPose]) {
    for ((out, &a), &b) in out.iter_mut().zip(from).zip(to) {
        *out = JointPose::interpolate(a, b, t);
    }
}

/// Joint palette: `world × pose × inverse bind` per joint, ready to multiply bind-pose vertices.
pub fn palette(skeleton: &Skeleton, poses: &[JointPose], world: Mat4, out: &mut [Mat4]) {
    for ((out, joint), pose) in out.iter_mut().zip(&skeleton.joints).zip(poses) {
        *out = world * pose.to_mat4() * joint.inverse_bind;
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
    // The blend is linear in the matrix: blend once, transform once (as shaders/skinning.glsl does).
    let mut blended = Mat4::ZERO;
    for influence in influences {
        let Some(matrix) = palette.get(influence.joint as usize) else { continue };
        blended += *matrix * influence.weight;
    }
    Skinned {
        position: (blended * position.extend(1.0)).truncate(),
        normal: (blended * normal.extend(0.0)).truncate().normalize_or_zero(),
        tangent: (blended * tangent.extend(0.0)).truncate().normalize_or_zero(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clip_with(frames: &[JointPose]) -> Clip {
        let bounds = vec![Aabb { min: Vec3::ZERO, max: Vec3::ONE }; frames.len()];
        Clip { name: "test".into(), frame_rate: 24.0, joint_count: 1, wraps: true, poses: frames.to_vec(), bounds }
    }

    #[test]
    fn slerp_takes_the_short_arc() {
        let a = Quat::from_rotation_y(0.1);
        let b = -Quat::from_rotation_y(0.3); // same rotation, opposite hemisphere
        let mid = slerp_shortest(a, b, 0.5);
        assert!(mid.angle_between(Quat::from_rotation_y(0.2)) < 1e-5);
    }

    #[test]
    fn sampling_wraps_and_interpolates() {
        let poses: Vec<JointPose> = (0..4).map(|i| JointPose::new(Quat::IDENTITY, Vec3::new(i as f32, 0.0, 0.0))).collect();
        let clip = clip_with(&poses);
        assert!((clip.duration() - 4.0 / 24.0).abs() < 1e-7);
        let point = clip.sample_point(1.5 / 24.0);
        assert_eq!((point.frame0, point.frame1), (1, 2));
        assert!((point.fraction - 0.5).abs() < 1e-5);
        // The last frame blends back into the first.
        let point = clip.sample_point(3.5 / 24.0);
        assert_eq!((point.frame0, point.frame1), (3, 0));
        assert!((clip.wrap_time(-1.0 / 24.0) - 3.0 / 24.0).abs() < 1e-6);
        assert!(clip.wrap_time(1e6) < clip.duration());
        let mut out = [JointPose::IDENTITY];
        clip.sample(0.5 / 24.0, &mut out);
        assert!((out[0].translation.x - 0.5).abs() < 1e-5);
    }

    #[test]
    fn a_clip_with_an_end_frame_reaches_it_and_does_not_wrap_into_the_first() {
        let poses: Vec<JointPose> = (0..4).map(|i| JointPose::new(Quat::IDENTITY, Vec3::new(i as f32, 0.0, 0.0))).collect();
        let clip = Clip { wraps: false, ..clip_with(&poses) };
        assert_eq!(clip.period_frames(), 3);
        assert!((clip.duration() - 3.0 / 24.0).abs() < 1e-7);
        let point = clip.sample_point(2.75 / 24.0);
        assert_eq!((point.frame0, point.frame1), (2, 3));
        let mut out = [JointPose::IDENTITY];
        clip.sample(2.75 / 24.0, &mut out);
        assert!((out[0].translation.x - 2.75).abs() < 1e-4);
    }

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
        let joint = |parent| Joint { name: String::new(), parent, inverse_bind: Mat4::IDENTITY };
        let skeleton = Skeleton { joints: vec![joint(None), joint(Some(0)), joint(Some(1)), joint(Some(0))] };
        assert_eq!(skeleton.depth(), 3);
    }
}
