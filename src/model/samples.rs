//! A clip's surface sampled on the CPU: the model's vertices (spread evenly, or all of them where
//! few) morphed and skinned at evenly spaced times, as the skin pass would draw them. What the
//! camera frames, where the ground goes, how tall a character stands in a crowd, how far a clip
//! carries it and how much of its body a clip moves are all read off one such sampling; the
//! conservative culling cells ([`crate::anim::bounds`]) are for culling, not for these.

use glam::{Mat4, Vec3};
use rayon::prelude::*;

use super::{Model, Vertex, VertexOffsets};
use crate::anim::Aabb;

/// A clip whose points' middle wanders further than this share of the figure's size carries the
/// figure along (a motion-capture walk, a Mixamo clip downloaded without "in place"); a walk in
/// place sways its hips by a few percent.
const TRAVEL_SHARE: f32 = 0.5;

/// A clip's points at evenly spaced times (model space, no instance's world).
#[derive(Clone, Debug, PartialEq)]
pub struct PoseSamples {
    /// The times sampled, in the clip's own seconds from its start (0 for the rest pose).
    pub times: Vec<f32>,
    /// Per time, the same points: the model's vertices spread evenly, or its joints where it has
    /// no mesh.
    pub poses: Vec<Vec<Vec3>>,
    /// Per time, how far along the ground the clip has carried the figure since its start: the
    /// horizontal move of its points' middle, where that goes beyond a sway ([`TRAVEL_SHARE`] of
    /// its height); zero for a clip that stays in place.
    pub travel: Vec<Vec3>,
    /// The lowest point over the clip: the poses' lowest, and between them the lowest points'
    /// ([`Surface::lowest`]): where the feet are, for a figure that stands.
    pub lowest: f32,
    /// The points that reach furthest in some direction, with the clip's time they are at
    /// ([`Surface::extremes`]): what a camera must keep in its frame.
    pub extremes: Vec<(f32, Vec3)>,
}

impl Model {
    /// `clip` (None: the rest pose, once) sampled at `poses` times spread over its loop (its start
    /// included, its end, the start again, left out), each with at most `points` of the vertices,
    /// spread evenly over them (every vertex where the model has fewer). With `between`, the
    /// lowest points and the furthest-reaching ones are followed between the poses too
    /// ([`PoseSamples::lowest`], [`PoseSamples::extremes`]); without, the lowest is the poses'
    /// and the extremes are empty.
    pub fn pose_samples(&self, clip: Option<usize>, poses: usize, points: usize, between: bool) -> PoseSamples {
        let clip = clip.and_then(|clip| self.clips.get(clip));
        let times: Vec<f32> = match clip {
            Some(clip) => {
                let count = poses.max(1);
                (0..count).map(|pose| clip.duration.max(0.0) * pose as f32 / count as f32).collect()
            }
            None => vec![0.0],
        };
        let surface = Surface::new(self, clip);
        let stride = self.vertices.len().div_ceil(points.max(1)).max(1);
        // Taken in the order of their bind positions, not their indices: levels of detail reorder
        // a model's vertices, and its ground and frame stay where they were.
        let picked: Vec<usize> = surface.order.iter().copied().step_by(stride).collect();
        let poses: Vec<Vec<Vec3>> = times.par_iter().map(|&time| surface.at(time, &picked)).collect();
        let coarse = poses.iter().flatten().map(|point| point.y).fold(f32::INFINITY, f32::min);
        let (lowest, extremes) = if between {
            let corners = surface.corners();
            let lowest = surface.lowest(&poses, &picked, &times, &corners).min(coarse);
            (lowest, surface.extremes(&poses, &picked, &corners))
        } else {
            (coarse, Vec::new())
        };
        let travel = travel_of(&poses);
        PoseSamples { times, poses, travel, lowest, extremes }
    }
}

/// Points of a model's surface at a clip's times: its vertices morphed and skinned, or its joints
/// where it has no mesh.
struct Surface<'a> {
    model: &'a Model,
    clip: Option<&'a crate::anim::Clip>,
    offsets: VertexOffsets,
    /// The vertices' indices in the order of their bind positions (x, then y, then z), and each
    /// vertex's place in that order.
    order: Vec<usize>,
    rank: Vec<usize>,
}

/// How many of the lowest sampled points [`Surface::lowest`] follows between the poses.
const LOWEST_CANDIDATES: usize = 32;
/// How many of the points that reach furthest [`Surface::extremes`] follows between the poses,
/// and how finely (samples a second, at least 48 in all, at most 2,000).
const EXTREME_CANDIDATES: usize = 256;
const EXTREMES_PER_SECOND: f32 = 60.0;
/// Points [`Surface::lowest`] and [`Surface::extremes`] skin, at most: so many, and so many more a
/// second of the clip, up to a cap (fewer times a second on a long clip). The ground is worth
/// more care than the frame's margin.
const LOWEST_POINTS: (f32, f32, f32) = (60_000.0, 4_000.0, 500_000.0);
const EXTREME_POINTS: (f32, f32, f32) = (30_000.0, 1_000.0, 150_000.0);

/// A budget of points for a clip of `seconds` ([`LOWEST_POINTS`], [`EXTREME_POINTS`]).
fn budget((base, per_second, cap): (f32, f32, f32), seconds: f32) -> usize {
    (base + per_second * seconds.max(0.0)).min(cap) as usize
}
/// [`Surface::lowest`]'s closer look: this many of the lowest moments, each at this many times
/// across the poses on either side.
const LOWEST_MOMENTS: usize = 16;
const LOWEST_STEPS: usize = 16;

impl<'a> Surface<'a> {
    fn new(model: &'a Model, clip: Option<&'a crate::anim::Clip>) -> Surface<'a> {
        let mut order: Vec<usize> = (0..model.vertices.len()).collect();
        let position = |index: usize| model.vertices[index].position.to_array();
        order.sort_by(|&a, &b| {
            let (a, b) = (position(a), position(b));
            a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])).then(a[2].total_cmp(&b[2]))
        });
        let mut rank = vec![0; order.len()];
        for (place, &index) in order.iter().enumerate() {
            rank[index] = place;
        }
        Surface { model, clip, offsets: VertexOffsets::of(model), order, rank }
    }

    /// The points `picked` (vertex indices; every joint without a mesh) at `time`, the clip's
    /// own seconds from its start.
    fn at(&self, time: f32, picked: &[usize]) -> Vec<Vec3> {
        let model = self.model;
        let animation_time = self.clip.map_or(0.0, |clip| clip.start + time);
        let animation = self.clip.map_or(usize::MAX, |clip| clip.animation);
        if model.vertices.is_empty() {
            // A skeleton without a mesh is drawn as its bones: its joints are its points.
            return model.joint_matrices(animation, animation_time).iter().map(|matrix| matrix.w_axis.truncate()).collect();
        }
        let mut palette = vec![Mat4::IDENTITY; model.skeleton.len()];
        let weights = match self.clip {
            Some(_) => {
                model.palette_at(animation, animation_time, &mut palette);
                model.morph_weights(animation, animation_time)
            }
            None => model.default_weights(),
        };
        let palette = self.clip.is_some().then_some(palette.as_slice());
        picked
            .iter()
            .map(|&index| {
                let vertex = &model.vertices[index];
                let morphed = Vertex { position: self.offsets.moved(index as u32, vertex.position, &weights), ..*vertex };
                model.skinned_position(&morphed, palette)
            })
            .collect()
    }

    /// Per joint (each vertex taken with its heaviest influence), the vertices of its part that
    /// reach furthest along each of 26 directions (a box's middle to its corners, edges and faces)
    /// in the bind pose: a part's corners, among which any pose's lowest and furthest points of a
    /// rigid part lie, whichever vertices the poses' stride sampled.
    fn corners(&self) -> Vec<usize> {
        let axes = axes();
        let joints = self.model.skeleton.len().max(1);
        let mut high = vec![[(f32::NEG_INFINITY, usize::MAX); 13]; joints];
        let mut low = vec![[(f32::INFINITY, usize::MAX); 13]; joints];
        for &index in &self.order {
            let vertex = &self.model.vertices[index];
            let joint = self.model.influences_of(vertex).first().map_or(0, |influence| influence.joint as usize).min(joints - 1);
            for (axis, direction) in axes.iter().enumerate() {
                let along = vertex.position.dot(*direction);
                if along > high[joint][axis].0 {
                    high[joint][axis] = (along, index);
                }
                if along < low[joint][axis].0 {
                    low[joint][axis] = (along, index);
                }
            }
        }
        let mut corners: Vec<usize> =
            high.iter().chain(&low).flatten().map(|&(_, index)| index).filter(|&index| index != usize::MAX).collect();
        self.sort(&mut corners);
        corners
    }

    /// `vertices` in the order of their bind positions, each once: what follows them does not
    /// depend on the order the file (or the levels of detail) gave them.
    fn sort(&self, vertices: &mut Vec<usize>) {
        vertices.sort_unstable_by_key(|&index| self.rank[index]);
        vertices.dedup();
    }

    /// `vertices` at `times` (the clip's own seconds), side by side: per time, their points.
    fn follow(&self, vertices: &[usize], times: &[f32]) -> Vec<Vec<Vec3>> {
        times.par_iter().map(|&time| self.at(time, vertices)).collect()
    }

    /// The points that reach furthest, each with the clip's time it is at: the parts' corners
    /// ([`Surface::corners`]) and, of the sampled points, the [`EXTREME_CANDIDATES`] that most
    /// often go furthest along one of 26 directions in a pose (a morph's wing tip, which no
    /// bone carries), followed [`EXTREMES_PER_SECOND`] times a second (fewer on a long clip:
    /// [`EXTREME_POINTS`]). A camera that keeps these in its frame keeps the figure: the sampled
    /// poses alone, their points spread over the mesh, miss a hand's reach between them.
    fn extremes(&self, poses: &[Vec<Vec3>], picked: &[usize], corners: &[usize]) -> Vec<(f32, Vec3)> {
        let axes = axes();
        let furthest: Vec<Vec<usize>> = poses.par_iter().map(|pose| furthest_along(&axes, pose)).collect();
        let mut counts: ahash::AHashMap<usize, usize> = ahash::AHashMap::new();
        for point in furthest.into_iter().flatten() {
            *counts.entry(point).or_default() += 1;
        }
        let mut ranked: Vec<(usize, usize)> = counts.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let chosen: Vec<usize> = ranked.iter().take(EXTREME_CANDIDATES).map(|&(point, _)| point).collect();
        let Some(clip) = self.clip.filter(|_| !self.model.vertices.is_empty()) else {
            // The rest pose, or joints alone: the poses' own points.
            return poses.iter().flat_map(|pose| chosen.iter().filter_map(|&point| pose.get(point).map(|&p| (0.0, p)))).collect();
        };
        let mut vertices: Vec<usize> = chosen.iter().filter_map(|&point| picked.get(point).copied()).collect();
        vertices.extend_from_slice(corners);
        self.sort(&mut vertices);
        let count = ((clip.duration * EXTREMES_PER_SECOND).ceil() as usize)
            .clamp(48, 2000)
            .min(budget(EXTREME_POINTS, clip.duration) / vertices.len().max(1))
            .max(1);
        let times: Vec<f32> = (0..count).map(|step| clip.duration.max(0.0) * step as f32 / count as f32).collect();
        // Of each time's points, those that reach furthest along the 26 directions then.
        let followed = self.follow(&vertices, &times);
        times
            .iter()
            .zip(followed)
            .flat_map(|(&time, points)| {
                let mut furthest = furthest_along(&axes, &points);
                furthest.sort_unstable();
                furthest.dedup();
                furthest.into_iter().map(move |point| (time, points[point]))
            })
            .collect()
    }

    /// The lowest point over the clip, looked for between the poses (infinity where there is
    /// nothing to follow: the rest pose, or joints alone). The parts' corners
    /// ([`Surface::corners`]) and the [`LOWEST_CANDIDATES`] sampled points that come lowest are
    /// followed at the poses' times; around each of the [`LOWEST_MOMENTS`] lowest of those
    /// moments, that point is followed [`LOWEST_STEPS`] times between the poses on either side.
    /// So a toe's or a wing's lowest moment is found, whichever vertices the poses sampled.
    fn lowest(&self, poses: &[Vec<Vec3>], picked: &[usize], times: &[f32], corners: &[usize]) -> f32 {
        let Some(clip) = self.clip else { return f32::INFINITY };
        if self.model.vertices.is_empty() || picked.is_empty() || times.is_empty() {
            return f32::INFINITY;
        }
        let mut lows: Vec<(f32, usize)> = (0..picked.len())
            .map(|point| (poses.iter().filter_map(|pose| pose.get(point)).map(|p| p.y).fold(f32::INFINITY, f32::min), point))
            .collect();
        lows.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut candidates = corners.to_vec();
        candidates.extend(lows.iter().take(LOWEST_CANDIDATES).map(|&(_, point)| picked[point]));
        self.sort(&mut candidates);
        // The poses' times, fewer where the candidates are many.
        let every = (times.len() * candidates.len()).div_ceil(budget(LOWEST_POINTS, clip.duration)).max(1);
        let coarse: Vec<f32> = times.iter().copied().step_by(every).collect();
        let followed = self.follow(&candidates, &coarse);
        let mut moments: Vec<(f32, usize, usize)> = followed
            .iter()
            .enumerate()
            .flat_map(|(moment, points)| points.iter().enumerate().map(move |(candidate, point)| (point.y, moment, candidate)))
            .collect();
        moments.sort_by(|a, b| a.0.total_cmp(&b.0));
        let step = clip.duration.max(0.0) / coarse.len() as f32;
        let (coarse, candidates) = (&coarse, &candidates);
        let closer = moments
            .iter()
            .take(LOWEST_MOMENTS)
            .flat_map(|&(_, moment, candidate)| {
                (0..=2 * LOWEST_STEPS).map(move |fraction| {
                    let time = coarse[moment] + step * (fraction as f32 / LOWEST_STEPS as f32 - 1.0);
                    (time.rem_euclid(clip.duration.max(f32::MIN_POSITIVE)), candidates[candidate])
                })
            })
            .collect::<Vec<_>>()
            .par_iter()
            .map(|&(time, vertex)| self.at(time, &[vertex])[0].y)
            .reduce(|| f32::INFINITY, f32::min);
        moments.first().map_or(f32::INFINITY, |lowest| lowest.0).min(closer)
    }
}

/// Of `points`, the indices of those that reach furthest along each of `axes`, either way.
fn furthest_along(axes: &[Vec3], points: &[Vec3]) -> Vec<usize> {
    let (mut high, mut low) = (vec![(f32::NEG_INFINITY, 0usize); axes.len()], vec![(f32::INFINITY, 0usize); axes.len()]);
    for (point, position) in points.iter().enumerate() {
        for (axis, direction) in axes.iter().enumerate() {
            let along = position.dot(*direction);
            if along > high[axis].0 {
                high[axis] = (along, point);
            }
            if along < low[axis].0 {
                low[axis] = (along, point);
            }
        }
    }
    high.iter().chain(&low).filter(|(along, _)| along.is_finite()).map(|&(_, point)| point).collect()
}

/// Thirteen axes, each read both ways: the 26 directions from a box's middle to its corners,
/// edges and faces.
fn axes() -> Vec<Vec3> {
    (0..27)
        .map(|code| Vec3::new((code % 3) as f32 - 1.0, ((code / 3) % 3) as f32 - 1.0, (code / 9) as f32 - 1.0))
        .filter(|axis| *axis != Vec3::ZERO)
        .take(13)
        .collect()
}

/// Each pose's horizontal move from the first, where the largest is more than a sway.
fn travel_of(poses: &[Vec<Vec3>]) -> Vec<Vec3> {
    let middle = |points: &[Vec3]| {
        let sum = points.iter().fold(Vec3::ZERO, |sum, &point| sum + point);
        let middle = sum / points.len().max(1) as f32;
        Vec3::new(middle.x, 0.0, middle.z)
    };
    let Some(first) = poses.first().map(|points| middle(points)) else { return Vec::new() };
    let moved: Vec<Vec3> = poses.iter().map(|points| middle(points) - first).collect();
    let height = poses.iter().map(|points| Aabb::from_points(points.iter().copied()).size().y).fold(0.0, f32::max);
    let farthest = moved.iter().map(|offset| offset.length()).fold(0.0, f32::max);
    if farthest > TRAVEL_SHARE * height {
        moved
    } else {
        vec![Vec3::ZERO; poses.len()]
    }
}

impl PoseSamples {
    /// Whether the clip carries the figure along the ground.
    pub fn travels(&self) -> bool {
        self.travel.iter().any(|offset| *offset != Vec3::ZERO)
    }

    /// The box of every pose's points.
    pub fn bounds(&self) -> Aabb {
        Aabb::from_points(self.poses.iter().flatten().copied())
    }

    /// The box of every pose's points with the clip's travel taken out: the figure where it
    /// stands, however far the clip walks it.
    pub fn bounds_in_place(&self) -> Aabb {
        let placed =
            self.poses.iter().zip(&self.travel).flat_map(|(points, &offset)| points.iter().map(move |&point| point - offset));
        Aabb::from_points(placed)
    }

    /// How tall the figure stands in the clip: the median of its poses' heights, or the tallest
    /// where the median is under half of that (a clip that lies on the ground most of its time).
    pub fn standing_height(&self) -> f32 {
        let mut heights: Vec<f32> = self
            .poses
            .iter()
            .map(|points| Aabb::from_points(points.iter().copied()).size().y)
            .filter(|h| h.is_finite())
            .collect();
        heights.sort_by(f32::total_cmp);
        let (Some(&median), Some(&tallest)) = (heights.get(heights.len() / 2), heights.last()) else { return 0.0 };
        if median >= 0.5 * tallest {
            median
        } else {
            tallest
        }
    }

    /// How far the points move over the clip, each as the diagonal of its path's box over
    /// `distance` (at most 1: a point that goes further counts as one that goes that far),
    /// averaged over the points.
    pub fn mean_path(&self, distance: f32) -> f32 {
        let Some(first) = self.poses.first() else { return 0.0 };
        if first.is_empty() || distance.is_nan() || distance <= 0.0 {
            return 0.0;
        }
        let total: f32 = (0..first.len())
            .map(|point| {
                let path = Aabb::from_points(self.poses.iter().filter_map(|points| points.get(point).copied()));
                (path.size().length() / distance).min(1.0)
            })
            .sum();
        total / first.len() as f32
    }
}
