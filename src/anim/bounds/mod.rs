//! Animated bounds for culling, computed at load from the keys, with no baking.
//!
//! Each animation's timeline is cut into cells of at most 1 / CELL_RATE s. For a cell starting at
//! `t0` the pose at `t0` is composed, and every joint gets a box that holds its vertices at any
//! time in the cell: the box of the vertices it moves, in its own space (`inverse_bind × v`, at
//! load), carried by the joint's matrix at `t0` (exact for that pose, up to the box's turn), then
//! grown by the most the joint's motion within the cell can move a point of it:
//!
//! - `r_j`: the farthest vertex joint j moves, in joint space (`|inverse_bind × v|`, at load);
//! - how far each channel strays from its value at `t0` within the cell: along linear segments the
//!   path it covers (lerp and slerp move at a constant rate), for step and cubic segments the hull
//!   of the keys and the Bézier control points it passes (rotations: the largest angle from `q0`);
//! - carried down the hierarchy parents first: joint j's position drifts by at most its parent's
//!   drift, plus the parent's change of linear part times the bone, plus its own translation's
//!   change times the parent's largest scale (`drift_j = D_p + ΔL_p |x_j| + L_p |P_j| τ_j`).
//!
//! - joint j's box at `t` is then within `drift_j + ΔL_j r_j` of its box at `t0`.
//!
//! A skinned vertex is a convex blend of what each of its joints would make of it, so it lies in
//! the box around the joints' boxes: the cell's box never misses a pose in the cell. The boxes
//! follow the mesh, not spheres around the joints: on the third-party models a cell's diagonal is
//! a median 1.1 times that of the skinned vertices over its time, 1.5 at worst
//! (`Model::cell_tightness` measures it; `tests/it/framing.rs`). Crossfades and
//! layers blend local poses into poses no clip has; for them the cull pass grows the union of the
//! clips' boxes by [`ModelBounds::blend_reach`], the farthest any vertex can be from its root joint
//! in any pose the keys allow.

use glam::{Mat3, Mat4, Vec3, Vec4};
use rayon::prelude::*;

mod motion;

use super::curve::KeySpan;
use super::{Aabb, Animation, Channel, Influence, JointPose, Property, Skeleton};
use motion::{motion, norm, segment_points};

/// Cells per second of animation: at walking speed a limb moves a few centimetres in 1/30 s.
pub const CELL_RATE: f32 = 30.0;

/// Cells one animation may have, so a long timeline's bounds stay small (32 bytes a cell).
pub const MAX_CELLS: usize = 1 << 16;

/// One animation's boxes: cell `c` covers animation time `[c, c + 1) × cell_duration`.
#[derive(Clone, Debug, PartialEq)]
pub struct AnimationBounds {
    pub cell_duration: f32,
    pub cells: Vec<Aabb>,
}

impl AnimationBounds {
    /// The box for an animation time. Mirrors `cell_box` in cull.comp.glsl.
    pub fn at(&self, time: f32) -> Aabb {
        let last = self.cells.len().saturating_sub(1);
        let cell = if self.cell_duration > 0.0 { (time / self.cell_duration).max(0.0) as usize } else { 0 };
        self.cells.get(cell.min(last)).copied().unwrap_or(Aabb::EMPTY)
    }

    pub fn total(&self) -> Aabb {
        self.cells.iter().fold(Aabb::EMPTY, |acc, cell| acc.union(*cell))
    }
}

/// Everything the cull pass needs to bound a model's instances.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelBounds {
    pub animations: Vec<AnimationBounds>,
    /// How far a vertex can be from its root joint in any pose the keys and rest poses allow.
    pub blend_reach: f32,
    /// Some key turns a joint's space inside out (a negative scale product or a mirroring pre).
    pub mirrors: bool,
    /// Per joint, how much its palette matrix can stretch a vector in any pose the keys allow (a
    /// bound on the linear part's largest singular value): what carries a morph offset.
    pub palette_scales: Vec<f32>,
    /// How far the morph targets can move a skinned vertex at any weights in their ranges
    /// (`Model::weight_range`): what the cull pass grows every box by while a weight is set by hand.
    pub morph_reach: f32,
}

/// What each joint moves, in its own space: the box of the vertices it carries and the farthest
/// of them from its origin.
#[derive(Clone, Copy, Debug)]
pub struct JointReach {
    /// Empty for a joint that moves no vertex.
    pub local: Aabb,
    pub radius: f32,
}

/// Each joint's [`JointReach`], from each vertex's bind position and influences.
pub fn joint_reach<'a>(skeleton: &Skeleton, vertices: impl IntoIterator<Item = (Vec3, &'a [Influence])>) -> Vec<JointReach> {
    let mut reach = vec![JointReach { local: Aabb::EMPTY, radius: 0.0 }; skeleton.len()];
    for (position, influences) in vertices {
        for influence in influences.iter().filter(|influence| influence.weight > 0.0) {
            let joint = influence.joint as usize;
            if let (Some(reach), Some(joint)) = (reach.get_mut(joint), skeleton.joints.get(joint)) {
                let local = joint.inverse_bind.transform_point3(position);
                reach.local = reach.local.including(local);
                reach.radius = reach.radius.max(local.length());
            }
        }
    }
    reach
}

/// `reach` grown by boxes of places a vertex may be (each with the vertex's influences): each box
/// carried into each joint's space whole ([`carried`]: the box of its corners there, one transform
/// rather than eight), the radius to the carried box's farthest corner (at least the corners'
/// own, so never less than [`joint_reach`] of the corners would give).
pub fn extend_reach<'a>(reach: &mut [JointReach], skeleton: &Skeleton, boxes: impl IntoIterator<Item = (Aabb, &'a [Influence])>) {
    for (bounds, influences) in boxes {
        for influence in influences.iter().filter(|influence| influence.weight > 0.0) {
            let joint = influence.joint as usize;
            if let (Some(reach), Some(joint)) = (reach.get_mut(joint), skeleton.joints.get(joint)) {
                let local = carried(bounds, &joint.inverse_bind);
                reach.local = reach.local.union(local);
                reach.radius = reach.radius.max(local.min.abs().max(local.max.abs()).length());
            }
        }
    }
}

/// `local` carried by `matrix`: the box of its corners' images (centre and half-size through the
/// matrix's absolute values, Arvo's method).
fn carried(local: Aabb, matrix: &Mat4) -> Aabb {
    let center = matrix.transform_point3(local.center());
    let half = local.size() * 0.5;
    let linear = Mat3::from_mat4(*matrix);
    let half = Vec3::new(linear.row(0).abs().dot(half), linear.row(1).abs().dot(half), linear.row(2).abs().dot(half));
    Aabb { min: center - half, max: center + half }
}

/// Per joint and property, the animation's channel.
fn channel_table(animation: &Animation, joint_count: usize) -> Vec<[Option<&Channel>; 3]> {
    let mut table = vec![[None; 3]; joint_count];
    for channel in &animation.channels {
        if let Some(slot) = table.get_mut(channel.joint) {
            slot[channel.property as usize] = Some(channel);
        }
    }
    table
}

/// A cell whose motion terms grow its box by more than this share of the box's diagonal is split
/// in two (a clip's first frame after another's last, a spin): the halves' poses are exact and
/// their motion is half as far. Measured on the Milkshape ninja (300 cells of fast moves): at 0.1
/// its cells took 1.8 times as long for a worst cell of 1.44x the skinned box instead of 1.46x;
/// at 0.15 the worst cell was 1.72x.
const SPLIT_GROWTH: f32 = 0.12;
/// At most this many halvings of one cell (32 spans)...
const MAX_SPLITS: u32 = 5;
/// ...and the splits of one animation stop once its spans times its joints and channels reach this
/// (a hostile file whose every cell jumps gets looser cells, not 32 times the work).
pub const SPAN_BUDGET: usize = 16_000_000;

/// Joints and channels times cells, at most, for one animation: a longer or larger one gets longer
/// cells (its boxes stay right, and grow with the motion a cell spans), so a 10,000-joint chain
/// with a 100,000-frame clip is bounded in a second or two, not minutes.
pub const CELL_BUDGET: usize = 2_000_000;

/// How an animation's timeline is cut: (cell count, cell duration, duration).
pub fn cell_layout(skeleton: &Skeleton, animation: &Animation) -> (usize, f32, f32) {
    let duration = if animation.duration.is_finite() { animation.duration.max(0.0) } else { 0.0 };
    let most = (CELL_BUDGET / (skeleton.len() + animation.channels.len()).max(1)).clamp(1, MAX_CELLS);
    let cell_count = ((duration * CELL_RATE).ceil() as usize).clamp(1, most);
    (cell_count, duration / cell_count as f32, duration)
}

/// One animation's cells (see the module notes).
pub fn animation_bounds(skeleton: &Skeleton, animation: &Animation, reach: &[JointReach]) -> AnimationBounds {
    let (cell_count, cell_duration, _) = cell_layout(skeleton, animation);
    let cells = cells_in(skeleton, animation, &[(0..cell_count, reach)]).concat();
    AnimationBounds { cell_duration, cells }
}

/// Ranges of one animation's cells (of [`cell_layout`]'s), each for vertices whose reach is given
/// beside it: the whole animation for its vertices, or runs of cells that the morph targets bound
/// again with their offsets in the reach. All in one parallel sweep; a range's cells in order.
pub fn cells_in(skeleton: &Skeleton, animation: &Animation, parts: &[(std::ops::Range<usize>, &[JointReach])]) -> Vec<Vec<Aabb>> {
    let joint_count = skeleton.len();
    let (cell_count, cell_duration, duration) = cell_layout(skeleton, animation);
    let table = channel_table(animation, joint_count);
    let turns: Vec<Option<Vec<(f32, bool)>>> =
        table.iter().map(|[_, rotation, _]| rotation.and_then(motion::segment_turns)).collect();
    let pre: Vec<(Mat3, f32)> =
        skeleton.joints.iter().map(|joint| (Mat3::from_mat4(joint.pre), norm(Mat3::from_mat4(joint.pre)))).collect();
    let extra_spans = (SPAN_BUDGET / (joint_count + animation.channels.len()).max(1)).saturating_sub(cell_count);
    // Runs of at most RUN cells bounded in parallel, each with its scratch space and its share of
    // the splits: (part, cells, reach).
    const RUN: usize = 32;
    let runs: Vec<(usize, std::ops::Range<usize>, &[JointReach])> = parts
        .iter()
        .enumerate()
        .flat_map(|(part, (range, reach))| {
            let range = range.start.min(cell_count)..range.end.min(cell_count);
            (range.start..range.end).step_by(RUN).map(move |first| (part, first..(first + RUN).min(range.end), *reach))
        })
        .collect();
    let boxes: Vec<Vec<Aabb>> = runs
        .par_iter()
        .map(|(_, run, reach)| {
            let mut spans = Spans {
                skeleton,
                reach,
                table: &table,
                turns: &turns,
                pre: &pre,
                poses: vec![JointPose::IDENTITY; joint_count],
                located: vec![[None; 3]; joint_count],
                posed_at: f32::NAN,
                models: vec![Mat4::IDENTITY; joint_count],
                drift: vec![0.0; joint_count],
                linear_change: vec![0.0; joint_count],
                linear_max: vec![0.0; joint_count],
                sweep: vec![Aabb { min: Vec3::ZERO, max: Vec3::ZERO }; joint_count],
                points: Vec::new(),
                segments: Vec::new(),
                extra_spans: extra_spans * run.len() / cell_count,
            };
            run.clone()
                .map(|cell| {
                    let t0 = cell as f32 * cell_duration;
                    let t1 = if cell + 1 == cell_count { duration } else { (cell + 1) as f32 * cell_duration };
                    spans.cell(t0, t1, 0)
                })
                .collect()
        })
        .collect();
    let mut cells = vec![Vec::new(); parts.len()];
    for ((part, _, _), boxes) in runs.iter().zip(boxes) {
        cells[*part].extend(boxes);
    }
    cells
}

/// What bounding one span of an animation needs, and scratch space reused from span to span.
struct Spans<'a> {
    skeleton: &'a Skeleton,
    reach: &'a [JointReach],
    /// Per joint and property, the animation's channel.
    table: &'a [[Option<&'a Channel>; 3]],
    /// Per joint, its linear rotation channel's turn along each key segment.
    turns: &'a [Option<Vec<(f32, bool)>>],
    /// Each joint's `pre` linear part and its norm.
    pre: &'a [(Mat3, f32)],
    /// The pose at `posed_at`, where each of its channels was located and its value there, and the
    /// joints' model matrices: a split's first half starts where the whole did.
    poses: Vec<JointPose>,
    located: Vec<[Option<(KeySpan, Vec4)>; 3]>,
    posed_at: f32,
    models: Vec<Mat4>,
    drift: Vec<f32>,
    linear_change: Vec<f32>,
    linear_max: Vec<f32>,
    /// How far a root's translation carries its whole subtree within the span, as a box of
    /// offsets: a jump moves a figure up, not in every direction.
    sweep: Vec<Aabb>,
    points: Vec<Vec4>,
    segments: Vec<(usize, usize)>,
    /// Spans that splitting cells may still add.
    extra_spans: usize,
}

impl Spans<'_> {
    /// The box of `[t0, t1]`, split while its motion terms are large against it.
    fn cell(&mut self, t0: f32, t1: f32, splits: u32) -> Aabb {
        let (bounds, growth) = self.span(t0, t1);
        if splits < MAX_SPLITS && t1 > t0 && self.extra_spans >= 2 && growth > SPLIT_GROWTH * bounds.size().length() {
            self.extra_spans -= 2;
            let middle = 0.5 * (t0 + t1);
            return self.cell(t0, middle, splits + 1).union(self.cell(middle, t1, splits + 1));
        }
        bounds
    }

    /// The box of `[t0, t1]` (the module notes) and the largest growth its motion terms gave a
    /// joint's box.
    fn span(&mut self, t0: f32, t1: f32) -> (Aabb, f32) {
        let (skeleton, points, segments) = (self.skeleton, &mut self.points, &mut self.segments);
        // The pose at t0 from the channels the table keeps (the last of each joint and property,
        // as `Animation::sample` leaves it), each located once for the pose and its motion.
        if self.posed_at != t0 {
            for (index, pose) in self.poses.iter_mut().enumerate() {
                *pose = skeleton.joints[index].rest;
                for (property, channel) in self.table[index].iter().enumerate() {
                    let hint = self.located[index][property].map_or(0, |(at, _)| at.key);
                    self.located[index][property] = channel.map(|channel| {
                        let at = channel.locate_from(hint, t0);
                        let value = channel.value_at(at);
                        channel.set(value, pose);
                        (at, value)
                    });
                }
            }
            super::local_to_model(skeleton, &self.poses, Mat4::IDENTITY, &mut self.models);
            self.posed_at = t0;
        }
        let mut bounds = Aabb::EMPTY;
        let mut largest_growth = 0.0f32;
        for index in 0..skeleton.len() {
            let joint = &skeleton.joints[index];
            let pose = self.poses[index];
            let [translation, rotation, scale] = [0, 1, 2].map(|property| {
                let (channel, start) = (self.table[index][property]?, self.located[index][property]?);
                let turns = if property == 1 { self.turns[index].as_deref() } else { None };
                Some(motion(channel, (t0, t1), start, turns, points, segments))
            });
            let tau = translation.map_or(0.0, |motion| motion.deviation);
            let phi = rotation.map_or(0.0, |motion| motion.deviation);
            let sigma = scale.map_or(0.0, |motion| motion.deviation);
            let scale_now = pose.scale.abs().max_element();
            let scale_max = scale.map_or(scale_now, |motion| motion.largest.max(scale_now));
            let (pre_linear, pre_norm) = self.pre[index];
            let parent = joint.parent.filter(|&parent| parent < index);
            let (parent_drift, parent_change, parent_max) = match parent {
                Some(parent) => (self.drift[parent], self.linear_change[parent], self.linear_max[parent]),
                None => (0.0, 0.0, 1.0),
            };
            let bone = (pre_linear * pose.translation + joint.pre.w_axis.truncate()).length();
            let turn_and_scale = phi.min(2.0) * scale_max + sigma;
            match parent {
                Some(parent) => {
                    self.sweep[index] = self.sweep[parent];
                    self.drift[index] = parent_drift + parent_change * bone + parent_max * pre_norm * tau;
                }
                None => {
                    let (low, high) = translation.map_or((Vec3::ZERO, Vec3::ZERO), |motion| motion.sweep);
                    self.sweep[index] = carried(Aabb { min: low, max: high }, &Mat4::from_mat3(pre_linear));
                    self.drift[index] = 0.0;
                }
            }
            self.linear_max[index] = parent_max * pre_norm * scale_max;
            // Two linear parts no larger than `linear_max` differ by at most twice that.
            self.linear_change[index] =
                (parent_change * pre_norm * scale_now + parent_max * pre_norm * turn_and_scale).min(2.0 * self.linear_max[index]);
            let Some(reach) = self.reach.get(index).filter(|reach| reach.radius.is_finite() && !reach.local.is_empty()) else {
                continue; // moves no vertex
            };
            let growth = self.drift[index] + self.linear_change[index] * reach.radius;
            largest_growth = largest_growth.max(growth);
            // The box carried to t0 (no larger than the sphere of the joint's farthest vertex), swept
            // by the root's translation and grown by the rest of the motion.
            let center = self.models[index].w_axis.truncate();
            let sphere = Vec3::splat(self.linear_max[index] * reach.radius);
            let carried = carried(reach.local, &self.models[index]);
            let sweep = self.sweep[index];
            bounds = bounds.union(Aabb {
                min: carried.min.max(center - sphere) + sweep.min - Vec3::splat(growth),
                max: carried.max.min(center + sphere) + sweep.max + Vec3::splat(growth),
            });
        }
        (bounds, largest_growth)
    }
}

/// The farthest a vertex can be from its root joint in any pose: bones at their longest (over
/// rest and keys), scales at their largest, rotations anything; and per joint the bound on its
/// palette matrix's stretch (its model matrix's linear part's, times its inverse bind's).
fn blend_reach(skeleton: &Skeleton, animations: &[Animation], joints: &[JointReach]) -> (f32, Vec<f32>) {
    let joint_count = skeleton.len();
    let mut longest = vec![0.0f32; joint_count];
    let mut largest_scale = vec![0.0f32; joint_count];
    for (index, joint) in skeleton.joints.iter().enumerate() {
        longest[index] = joint.rest.translation.length();
        largest_scale[index] = joint.rest.scale.abs().max_element();
    }
    let mut points = Vec::new();
    for channel in animations.iter().flat_map(|animation| &animation.channels) {
        if channel.property == Property::Rotation || channel.joint >= joint_count {
            continue;
        }
        for key in 0..channel.times.count() {
            points.clear();
            segment_points(channel, key, (key + 1).min(channel.times.count() - 1), &mut points);
            for point in &points {
                match channel.property {
                    Property::Translation => longest[channel.joint] = longest[channel.joint].max(point.truncate().length()),
                    _ => largest_scale[channel.joint] = largest_scale[channel.joint].max(point.truncate().abs().max_element()),
                }
            }
        }
    }
    let mut reach = vec![0.0f32; joint_count];
    let mut linear = vec![0.0f32; joint_count];
    let mut farthest = 0.0f32;
    for (index, joint) in skeleton.joints.iter().enumerate() {
        let pre_norm = norm(Mat3::from_mat4(joint.pre));
        let (parent_reach, parent_linear) = match joint.parent.filter(|&parent| parent < index) {
            Some(parent) => {
                let bone = pre_norm * longest[index] + joint.pre.w_axis.truncate().length();
                (reach[parent] + linear[parent] * bone, linear[parent])
            }
            // A root's own place is in the clips' boxes; only what hangs from it is reached here.
            None => (0.0, 1.0),
        };
        reach[index] = parent_reach;
        linear[index] = parent_linear * pre_norm * largest_scale[index];
        farthest = farthest.max(reach[index] + linear[index] * joints.get(index).map_or(0.0, |joint| joint.radius));
    }
    let scales =
        skeleton.joints.iter().zip(&linear).map(|(joint, &linear)| linear * norm(Mat3::from_mat4(joint.inverse_bind))).collect();
    (farthest, scales)
}

/// Whether some pose may turn a joint's palette inside out: a negative scale product in a rest pose
/// or key, or a joint whose composed `pre` transforms mirror differently from its inverse bind.
fn mirrors(skeleton: &Skeleton, animations: &[Animation]) -> bool {
    let negative = |scale: Vec3| scale.x * scale.y * scale.z < 0.0;
    let scaled = skeleton.joints.iter().any(|joint| negative(joint.rest.scale))
        || animations.iter().flat_map(|animation| &animation.channels).any(|channel| {
            channel.property == Property::Scale
                && (0..channel.times.count()).any(|key| negative(channel.key_value(key).truncate()))
        });
    if scaled {
        return true;
    }
    // With every scale positive, a joint's handedness is fixed by the pre transforms above it.
    let mut flipped = vec![false; skeleton.len()];
    for (index, joint) in skeleton.joints.iter().enumerate() {
        let parent = joint.parent.filter(|&parent| parent < index).is_some_and(|parent| flipped[parent]);
        flipped[index] = parent != (Mat3::from_mat4(joint.pre).determinant() < 0.0);
        let bind = joint.inverse_bind.determinant();
        if bind != 0.0 && (bind < 0.0) != flipped[index] {
            return true;
        }
    }
    false
}

/// Bounds for every animation of a model.
pub fn model_bounds<'a>(
    skeleton: &Skeleton,
    animations: &[Animation],
    vertices: impl IntoIterator<Item = (Vec3, &'a [Influence])>,
) -> ModelBounds {
    let reach = joint_reach(skeleton, vertices);
    let (blend_reach, palette_scales) = blend_reach(skeleton, animations, &reach);
    ModelBounds {
        animations: animations.iter().map(|animation| animation_bounds(skeleton, animation, &reach)).collect(),
        blend_reach,
        mirrors: mirrors(skeleton, animations),
        palette_scales,
        morph_reach: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Influence, Interpolation, Joint, KeyTimes};
    use glam::Quat;

    /// An arm: a root and a 1-unit bone whose tip vertex the second joint carries, swinging
    /// through 170° in 0.5 s with only two keys (the arc bulges far from both key poses).
    fn swinging_arm() -> (Skeleton, Animation, Vec3, Vec<Influence>) {
        let rest = JointPose::new(Quat::IDENTITY, Vec3::X);
        let skeleton = Skeleton {
            joints: vec![
                Joint::new("root", None, Mat4::IDENTITY, JointPose::IDENTITY),
                Joint::new("arm", Some(0), Mat4::from_translation(-Vec3::X), rest),
            ],
        };
        let turn = |angle: f32| Vec4::from(Quat::from_rotation_z(angle)).to_array();
        let values: Vec<f32> = [turn(-1.48), turn(1.48)].concat();
        let channel = Channel {
            joint: 0,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: KeyTimes::from_list(vec![0.0, 0.5]),
            mask: 0b1111,
            base: Vec4::ZERO,
            implied_w: false,
            wraps: false,
            values,
        };
        let animation = Animation {
            name: "swing".into(),
            duration: 0.5,
            frame_rate: None,
            channels: vec![channel],
            file_key_bytes: 40,
            source: None,
            weights: Vec::new(),
            compressed: None,
            motion: None,
        };
        (skeleton, animation, Vec3::new(2.0, 0.0, 0.0), vec![Influence { joint: 1, weight: 1.0 }])
    }

    #[test]
    fn cells_hold_every_sampled_pose() {
        let (skeleton, animation, tip_bind, influences) = swinging_arm();
        let bounds = model_bounds(&skeleton, std::slice::from_ref(&animation), [(tip_bind, influences.as_slice())]);
        let cells = &bounds.animations[0];
        assert_eq!(cells.cells.len(), 15);
        let mut poses = vec![JointPose::IDENTITY; 2];
        let mut models = vec![Mat4::IDENTITY; 2];
        for step in 0..=1000 {
            let time = 0.5 * step as f32 / 1000.0;
            animation.sample(&skeleton, time, &mut poses);
            crate::anim::local_to_model(&skeleton, &poses, Mat4::IDENTITY, &mut models);
            let tip = (models[1] * skeleton.joints[1].inverse_bind).transform_point3(tip_bind);
            let cell = cells.at(time);
            assert!(cell.min.cmple(tip + 1e-5).all() && cell.max.cmpge(tip - 1e-5).all(), "t = {time}: {tip} outside {cell:?}");
        }
        // A cell follows the motion: the middle one is the arm joint's sphere (radius 1, the tip's
        // distance) grown by the most a 1-unit bone turning 2.96 rad in 0.5 s moves in one cell,
        // not the whole swing.
        let (middle, whole) = (cells.at(0.25).size(), cells.total().size());
        let drift = 2.96 / 0.5 / CELL_RATE;
        assert!(middle.max_element() <= 2.0 * (1.0 + drift) + 1e-3, "middle cell {middle}");
        assert!(whole.y > 4.0, "the whole swing {whole}");
        assert!((bounds.blend_reach - 2.0).abs() < 1e-5);
        assert!(!bounds.mirrors);
    }

    /// The hostile class of a 10,000-joint chain under a 100,000-frame clip: the cells grow longer
    /// instead of the work growing to joints × frames (655 M joint-cells, over a minute before), and
    /// they still hold the chain's tip wherever the clip takes it.
    #[test]
    fn a_long_clip_on_a_deep_chain_gets_longer_cells() {
        let joints = 10_000;
        let mut skeleton = Skeleton { joints: Vec::with_capacity(joints) };
        for index in 0..joints {
            let parent = index.checked_sub(1);
            let bind = Mat4::from_translation(Vec3::new(-0.001 * index as f32, 0.0, 0.0));
            let rest = JointPose::new(Quat::IDENTITY, if index == 0 { Vec3::ZERO } else { Vec3::new(0.001, 0.0, 0.0) });
            skeleton.joints.push(Joint::new(format!("joint{index}"), parent, bind, rest));
        }
        let frames = 100_000;
        let values: Vec<f32> =
            (0..frames).flat_map(|frame| [(frame as f32 * 0.01).sin(), (frame as f32 * 0.003).cos(), 0.0, 0.0]).collect();
        let channel = Channel {
            joint: 0,
            property: Property::Translation,
            interpolation: Interpolation::Linear,
            times: KeyTimes::from_list((0..frames).map(|frame| frame as f32 / 30.0).collect()),
            mask: 0b0111,
            base: Vec4::ZERO,
            implied_w: false,
            wraps: false,
            values,
        };
        let duration = (frames - 1) as f32 / 30.0;
        let animation = Animation {
            name: "long".into(),
            duration,
            frame_rate: Some(30.0),
            channels: vec![channel],
            file_key_bytes: 0,
            source: None,
            weights: Vec::new(),
            compressed: None,
            motion: None,
        };
        let tip = Vec3::new(0.001 * (joints - 1) as f32, 0.0, 0.0);
        let influences = [Influence { joint: (joints - 1) as u32, weight: 1.0 }];
        let bounds = model_bounds(&skeleton, std::slice::from_ref(&animation), [(tip, &influences[..])]);
        let cells = &bounds.animations[0];
        assert_eq!(cells.cells.len(), CELL_BUDGET / (joints + 1));
        let mut poses = vec![JointPose::IDENTITY; joints];
        let mut models = vec![Mat4::IDENTITY; joints];
        for step in 0..50 {
            let time = duration * step as f32 / 49.0;
            animation.sample(&skeleton, time, &mut poses);
            crate::anim::local_to_model(&skeleton, &poses, Mat4::IDENTITY, &mut models);
            let at = (models[joints - 1] * skeleton.joints[joints - 1].inverse_bind).transform_point3(tip);
            let cell = cells.at(time);
            assert!(cell.min.cmple(at + 1e-3).all() && cell.max.cmpge(at - 1e-3).all(), "t = {time}: {at} outside {cell:?}");
        }
    }
}
