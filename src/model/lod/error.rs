//! A level's error ([`super`]: "The error, in an animated pose"): the farthest a vertex of the full
//! mesh lies from the level's triangles near it along the mesh, over the sampled poses.

use std::collections::VecDeque;

use ahash::AHashMap as HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use glam::Vec3;
use rayon::prelude::*;

use super::ERROR_MARGIN;
use crate::model::Model;

/// Each level's error: the largest distance, over the sampled poses, from a vertex of the full
/// mesh to the level's triangles near it, times [`ERROR_MARGIN`]; never less than the finer level's.
/// The levels come in one by one, finest first, as the simplifier makes them.
pub(super) fn measure_errors(model: &Model, skinned: &[Vec<Vec3>], levels: std::sync::mpsc::Receiver<Vec<Vec<u32>>>) -> Vec<f32> {
    let weld = Weld::new(model);
    // A piece a level dropped whole is missing by its size, in the pose at hand.
    let pieces: Vec<Vec<f32>> = skinned.par_iter().map(|positions| weld.piece_sizes(positions)).collect();
    // A level's error is never less than the finer one's, so only distances past that can matter:
    // each level starts from it, finest first, and skips every vertex and pose that cannot pass it.
    let mut finer = 0.0f32;
    levels
        .into_iter()
        .map(|meshes| {
            finer = level_error(&weld, skinned, &pieces, &meshes, finer);
            finer * ERROR_MARGIN
        })
        .collect()
}

/// One level's largest distance over vertices and poses (see [`measure_errors`]), the points
/// measured in parallel runs. A vertex the level leaves out is measured against the level's
/// triangles around its nearest kept point along the mesh and around the nearest kept points of
/// the points within two edges of it (so a vertex near the border between kept points' regions
/// sees them all). Only the largest distance matters, so the candidates are tried in widening
/// tiers, each ending the search when it cannot raise the largest distance so far: the vertex's
/// nearest triangle in the pose before, then the triangles around its own nearest kept point,
/// then all of them (gathered only then). The result is the same as trying them all, for about
/// one distance a vertex and pose: on Xbot.glb's chain the tiers made the measuring 0.73x.
fn level_error(weld: &Weld, skinned: &[Vec<Vec3>], pieces: &[Vec<f32>], meshes: &[Vec<u32>], at_least: f32) -> f32 {
    let triangles: Vec<[u32; 3]> = meshes.iter().flat_map(|mesh| mesh.chunks_exact(3).map(|t| [t[0], t[1], t[2]])).collect();
    let around = weld.triangles_around(&triangles);
    let nearest = weld.nearest_kept(&around);
    // The points in runs measured in parallel, each run keeping its own largest distance.
    const RUN: usize = 4096;
    let points = weld.vertices_of.len();
    let runs: Vec<usize> = (0..points.div_ceil(RUN)).collect();
    // Each worker's marks of what it gathered for which point (points are never measured twice, so
    // the marks need no clearing between runs).
    let marks = || Marks { regions: vec![u32::MAX; points], triangles: vec![u32::MAX; triangles.len()] };
    let measured = Measured { weld, skinned, pieces, triangles: &triangles, around: &around, nearest: &nearest };
    // The largest distance so far, shared by the runs (a non-negative float's bits order as the
    // float does): a run that starts after another raised it skips what cannot pass it. The
    // result is the same largest distance whatever the order.
    let largest = AtomicU32::new(at_least.to_bits());
    runs.par_iter().for_each_init(marks, |marks, &run| {
        let points = run * RUN..((run + 1) * RUN).min(points);
        let error = run_error(&measured, points, f32::from_bits(largest.load(Ordering::Relaxed)), marks);
        largest.fetch_max(error.to_bits(), Ordering::Relaxed);
    });
    f32::from_bits(largest.into_inner())
}

/// The point each region and triangle was last gathered for: each is gathered once a point.
struct Marks {
    regions: Vec<u32>,
    triangles: Vec<u32>,
}

/// What one level's error is measured with: the full mesh's welded points, their skinned poses
/// and pieces, and the level's triangles, those around each kept point, and each point's nearest
/// kept point.
struct Measured<'a> {
    weld: &'a Weld,
    skinned: &'a [Vec<Vec3>],
    pieces: &'a [Vec<f32>],
    triangles: &'a [[u32; 3]],
    around: &'a Lists,
    nearest: &'a [u32],
}

/// [`level_error`] over some of the points, starting from `at_least`.
fn run_error(measured: &Measured<'_>, points: std::ops::Range<usize>, at_least: f32, marks: &mut Marks) -> f32 {
    let Measured { weld, skinned, pieces, triangles, around, nearest } = *measured;
    let distance = |positions: &[Vec3], point: Vec3, triangle: u32| {
        let [a, b, c] = triangles[triangle as usize].map(|index| positions[index as usize]);
        point.distance(closest_on_triangle(point, a, b, c))
    };
    let mut error = at_least;
    let mut nearby: Vec<u32> = Vec::new();
    for point in points {
        if !around.of(point).is_empty() || weld.neighbours.of(point).is_empty() {
            continue; // kept, or in no triangle of the full mesh
        }
        if nearest[point] == u32::MAX {
            // A piece the level dropped whole is missing by its size.
            let piece = weld.piece_of[point] as usize;
            error = pieces.iter().fold(error, |error, sizes| error.max(sizes[piece]));
            continue;
        }
        // The nearest kept point's first triangle is tried first in every pose; the triangles
        // around the nearby kept points are gathered only when a pose needs them.
        let first = around.of(nearest[point] as usize)[0];
        let mut gathered = false;
        for &vertex in weld.vertices_of.of(point) {
            let mut best = first;
            for positions in skinned {
                let point_at = positions[vertex as usize];
                // A triangle is no farther than its nearest corner: that first, the exact distance
                // only when the corner is too far.
                let corners = triangles[best as usize].map(|index| positions[index as usize]);
                let corner = corners.iter().map(|corner| corner.distance_squared(point_at)).fold(f32::INFINITY, f32::min);
                if corner <= error * error || distance(positions, point_at, best) <= error {
                    continue;
                }
                // The triangles around the nearest kept point next (the nearest is nearly always
                // one of them): when the closest of those cannot raise the largest distance, nor
                // can the closest of all the nearby ones, which include them.
                let (closest, triangle) =
                    nearest_of(around.of(nearest[point] as usize), |triangle| distance(positions, point_at, triangle));
                if closest <= error {
                    best = triangle;
                    continue;
                }
                if !gathered {
                    gather_nearby(weld, around, nearest, point, marks, &mut nearby);
                    gathered = true;
                }
                let (closest, triangle) = nearest_of(&nearby, |triangle| distance(positions, point_at, triangle));
                best = triangle;
                error = error.max(closest);
            }
        }
    }
    error
}

/// The triangle of `triangles` (not empty) at the least `distance`, and that distance.
fn nearest_of(triangles: &[u32], distance: impl Fn(u32) -> f32) -> (f32, u32) {
    triangles.iter().map(|&triangle| (distance(triangle), triangle)).fold((f32::INFINITY, triangles[0]), |a, b| {
        if b.0 < a.0 {
            b
        } else {
            a
        }
    })
}

/// Into `nearby`, the level's triangles around `point`'s nearest kept point and around those of
/// the points within two edges of it, each once (the nearest kept point's first).
fn gather_nearby(weld: &Weld, around: &Lists, nearest: &[u32], point: usize, marks: &mut Marks, nearby: &mut Vec<u32>) {
    nearby.clear();
    let stamp = point as u32;
    let Marks { regions: region_seen, triangles: triangle_seen } = marks;
    let mut gather = |region: u32| {
        if region == u32::MAX || region_seen[region as usize] == stamp {
            return;
        }
        region_seen[region as usize] = stamp;
        for &triangle in around.of(region as usize) {
            if triangle_seen[triangle as usize] != stamp {
                triangle_seen[triangle as usize] = stamp;
                nearby.push(triangle);
            }
        }
    };
    gather(nearest[point]);
    for &next in weld.neighbours.of(point) {
        gather(nearest[next as usize]);
        for &beyond in weld.neighbours.of(next as usize) {
            gather(nearest[beyond as usize]);
        }
    }
}

/// Lists of numbers (triangles, points), one list a point, in one allocation.
struct Lists {
    starts: Vec<u32>,
    items: Vec<u32>,
}

impl Lists {
    fn of(&self, point: usize) -> &[u32] {
        &self.items[self.starts[point] as usize..self.starts[point + 1] as usize]
    }

    /// How many lists: one a point.
    fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// From (point, item) pairs in any order, each list in the pairs' order without repeats (a
    /// counting sort by point, linear in the pairs: sorting them all was most of the weld's time).
    fn from_pairs(points: usize, pairs: &[(u32, u32)]) -> Lists {
        let mut starts = vec![0u32; points + 1];
        for &(point, _) in pairs {
            starts[point as usize + 1] += 1;
        }
        for point in 0..points {
            starts[point + 1] += starts[point];
        }
        let mut filled = starts.clone();
        let mut items = vec![0u32; pairs.len()];
        for &(point, item) in pairs {
            items[filled[point as usize] as usize] = item;
            filled[point as usize] += 1;
        }
        // Each list's repeats dropped (the point that last took each item marks it), the lists
        // moved down over the room the repeats took.
        let largest = items.iter().max().map_or(0, |&item| item as usize + 1);
        let mut taken_by = vec![u32::MAX; largest];
        let mut kept = 0;
        for point in 0..points {
            let (start, end) = (starts[point] as usize, starts[point + 1] as usize);
            starts[point] = kept as u32;
            for at in start..end {
                let item = items[at];
                if taken_by[item as usize] != point as u32 {
                    taken_by[item as usize] = point as u32;
                    items[kept] = item;
                    kept += 1;
                }
            }
        }
        starts[points] = kept as u32;
        items.truncate(kept);
        Lists { starts, items }
    }
}

/// The full mesh's vertices welded by position (a UV or normal seam splits one point into several
/// vertices) and joined by its edges.
struct Weld {
    /// Each vertex's point.
    point_of: Vec<u32>,
    /// Each point's vertices.
    vertices_of: Lists,
    /// Each point's neighbours along the full mesh's edges.
    neighbours: Lists,
    /// Each point's connected piece of the mesh.
    piece_of: Vec<u32>,
}

impl Weld {
    fn new(model: &Model) -> Weld {
        let mut points: HashMap<[u32; 3], u32> = HashMap::with_capacity(model.vertices.len());
        let point_of: Vec<u32> = model
            .vertices
            .iter()
            .map(|vertex| {
                let key = vertex.position.to_array().map(f32::to_bits);
                let next = points.len() as u32;
                *points.entry(key).or_insert(next)
            })
            .collect();
        let pairs: Vec<(u32, u32)> = point_of.iter().enumerate().map(|(vertex, &point)| (point, vertex as u32)).collect();
        let vertices_of = Lists::from_pairs(points.len(), &pairs);
        // Each edge both ways, then each point's list without repeats.
        let mut edges: Vec<(u32, u32)> = Vec::with_capacity(model.indices.len() * 2);
        for triangle in model.indices.chunks_exact(3) {
            for (a, b) in [(0, 1), (1, 2), (2, 0)] {
                let (a, b) = (point_of[triangle[a] as usize], point_of[triangle[b] as usize]);
                if a != b {
                    edges.extend([(a, b), (b, a)]);
                }
            }
        }
        let neighbours = Lists::from_pairs(vertices_of.len(), &edges);
        let mut piece_of = vec![u32::MAX; vertices_of.len()];
        let mut pieces = 0;
        for start in 0..piece_of.len() {
            if piece_of[start] != u32::MAX {
                continue;
            }
            piece_of[start] = pieces;
            let mut stack = vec![start];
            while let Some(point) = stack.pop() {
                for &next in neighbours.of(point) {
                    if piece_of[next as usize] == u32::MAX {
                        piece_of[next as usize] = pieces;
                        stack.push(next as usize);
                    }
                }
            }
            pieces += 1;
        }
        Weld { point_of, vertices_of, neighbours, piece_of }
    }

    /// Each piece's size (the diagonal of its box) with its vertices at `positions`.
    fn piece_sizes(&self, positions: &[Vec3]) -> Vec<f32> {
        let pieces = self.piece_of.iter().max().map_or(0, |&last| last as usize + 1);
        let mut boxes = vec![crate::anim::Aabb::EMPTY; pieces];
        for (vertex, &position) in positions.iter().enumerate() {
            let piece = &mut boxes[self.piece_of[self.point_of[vertex] as usize] as usize];
            *piece = piece.union(crate::anim::Aabb { min: position, max: position });
        }
        boxes.iter().map(|bounds| bounds.size().length()).collect()
    }

    /// The triangles of a level touching each point, each once (a welded seam can give two
    /// corners of a triangle one point).
    fn triangles_around(&self, triangles: &[[u32; 3]]) -> Lists {
        let pairs: Vec<(u32, u32)> = triangles
            .iter()
            .enumerate()
            .flat_map(|(index, triangle)| triangle.map(|vertex| (self.point_of[vertex as usize], index as u32)))
            .collect();
        Lists::from_pairs(self.vertices_of.len(), &pairs)
    }

    /// Each point's nearest kept point along the full mesh's edges (a breadth-first walk from all
    /// kept points at once), or `u32::MAX` where its piece has none.
    fn nearest_kept(&self, around: &Lists) -> Vec<u32> {
        let mut nearest = vec![u32::MAX; self.vertices_of.len()];
        let mut queue = VecDeque::new();
        for (point, nearest) in nearest.iter_mut().enumerate() {
            if !around.of(point).is_empty() {
                *nearest = point as u32;
                queue.push_back(point as u32);
            }
        }
        while let Some(point) = queue.pop_front() {
            for &next in self.neighbours.of(point as usize) {
                if nearest[next as usize] == u32::MAX {
                    nearest[next as usize] = nearest[point as usize];
                    queue.push_back(next);
                }
            }
        }
        nearest
    }
}

/// The point of triangle abc nearest to p (Ericson, Real-Time Collision Detection, 5.1.5).
pub(super) fn closest_on_triangle(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> Vec3 {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denominator = 1.0 / (va + vb + vc);
    if !denominator.is_finite() {
        // A degenerate triangle: its nearest corner.
        return [a, b, c].into_iter().min_by(|x, y| x.distance_squared(p).total_cmp(&y.distance_squared(p))).unwrap_or(a);
    }
    a + ab * (vb * denominator) + ac * (vc * denominator)
}
