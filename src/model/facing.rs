//! Which side of a model's triangles can ever be seen ([`Model::facing`]): closed surfaces found
//! by welding seams and walking shared edges, each piece's winding from its signed volume.

use ahash::AHashMap as HashMap;

use glam::Vec3;

use super::Model;

impl Model {
    /// Which side of the triangles can ever be seen, so the shadow and forward passes may skip the
    /// other before rasterizing it (half the triangles that reach setup, on a software rasterizer
    /// most of the frame). Only a surface that is closed, with every edge shared by exactly two
    /// triangles running it in opposite directions, hides one side; vertices split at UV or normal
    /// seams are welded by position first. Each connected piece's signed volume says whether its
    /// counter-clockwise side faces out.
    pub fn facing(&self) -> Facing {
        // A pose that mirrors a joint against its bind pose turns the triangles it moves inside out.
        if self.bounds.mirrors {
            return Facing::TwoSided;
        }
        let Some(ids) = self.welded_ids() else {
            return Facing::TwoSided; // an index past the vertices: loaders never produce one
        };
        // The triangles that cover something once welded.
        let triangles: Vec<[u32; 3]> = self
            .indices
            .chunks_exact(3)
            .map(|triangle| [triangle[0], triangle[1], triangle[2]])
            .filter(|triangle| {
                let [a, b, c] = triangle.map(|corner| ids[corner as usize]);
                a != b && b != c && c != a // welded to a line: covers nothing, bounds nothing
            })
            .collect();
        if triangles.is_empty() {
            return Facing::TwoSided;
        }
        let Some(mut pieces) = closed_pieces(&triangles, &ids) else {
            return Facing::TwoSided;
        };
        // Six times each piece's signed volume, in f64: thin pieces sum many small terms.
        let mut volumes = vec![0.0f64; triangles.len()];
        for (index, triangle) in triangles.iter().enumerate() {
            let [p, q, r] = triangle.map(|corner| self.vertices[corner as usize].position.as_dvec3());
            volumes[pieces.root(index as u32) as usize] += p.dot(q.cross(r));
        }
        let volumes: Vec<f64> =
            (0..triangles.len() as u32).filter(|&index| pieces.root(index) == index).map(|root| volumes[root as usize]).collect();
        if volumes.iter().all(|&volume| volume > 0.0) {
            Facing::Outward
        } else if volumes.iter().all(|&volume| volume < 0.0) {
            Facing::Inward
        } else {
            Facing::TwoSided
        }
    }
}

impl Model {
    /// Each vertex's welded id: seam copies share a place and, to stay together when skinned,
    /// their influences, so both must match. `None` where an index lies past the vertices.
    fn welded_ids(&self) -> Option<Vec<u32>> {
        if self.indices.iter().any(|&index| index as usize >= self.vertices.len()) {
            return None;
        }
        // The first vertex at each place, and from each vertex the next one at its place: the few
        // copies at a place are compared by their influences directly, nothing allocated a vertex.
        let mut first_at: HashMap<[u32; 3], u32> = HashMap::with_capacity(self.vertices.len());
        let mut next_at = vec![u32::MAX; self.vertices.len()];
        let mut ids = vec![0u32; self.vertices.len()];
        let mut count = 0;
        let same = |a: &super::Vertex, b: &super::Vertex| {
            let (a, b) = (self.influences_of(a), self.influences_of(b));
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.joint == b.joint && a.weight.to_bits() == b.weight.to_bits())
        };
        for (index, vertex) in self.vertices.iter().enumerate() {
            // +0.0 and -0.0 are one place.
            let place = (vertex.position + Vec3::ZERO).to_array().map(f32::to_bits);
            let mut at = *first_at.entry(place).or_insert(index as u32);
            ids[index] = loop {
                if at == index as u32 {
                    count += 1; // the first vertex at its place
                    break count - 1;
                }
                if same(&self.vertices[at as usize], vertex) {
                    break ids[at as usize];
                }
                if next_at[at as usize] == u32::MAX {
                    next_at[at as usize] = index as u32; // a new copy at this place
                    count += 1;
                    break count - 1;
                }
                at = next_at[at as usize];
            };
        }
        Some(ids)
    }
}

/// The triangles' connected pieces where they close (`ids`: each vertex's welded id): each
/// welded vertex's outgoing edges as (to, triangle), counted into one list. A second edge the same
/// way means not closed, and so does an edge without its twin the other way (`None`).
fn closed_pieces(triangles: &[[u32; 3]], ids: &[u32]) -> Option<Pieces> {
    let points = ids.iter().max().map_or(0, |&last| last as usize + 1);
    let edges_of = |triangle: &[u32; 3]| {
        let [a, b, c] = triangle.map(|corner| ids[corner as usize]);
        [(a, b), (b, c), (c, a)]
    };
    let mut starts = vec![0u32; points + 1];
    for triangle in triangles {
        for (from, _) in edges_of(triangle) {
            starts[from as usize + 1] += 1;
        }
    }
    for point in 0..points {
        starts[point + 1] += starts[point];
    }
    let mut filled = starts.clone();
    let mut outgoing = vec![(0u32, 0u32); 3 * triangles.len()];
    for (index, triangle) in triangles.iter().enumerate() {
        for (from, to) in edges_of(triangle) {
            outgoing[filled[from as usize] as usize] = (to, index as u32);
            filled[from as usize] += 1;
        }
    }
    let edges = |point: u32| &outgoing[starts[point as usize] as usize..starts[point as usize + 1] as usize];
    let mut pieces = Pieces::new(triangles.len());
    for from in 0..points as u32 {
        let out = edges(from);
        for (at, &(to, triangle)) in out.iter().enumerate() {
            if out[..at].iter().any(|&(other, _)| other == to) {
                return None;
            }
            // Closed: every edge has its twin. Triangles sharing an edge are one piece
            // (sharing only a corner is not enough: two pieces may touch at a point and face
            // opposite ways).
            match edges(to).iter().find(|&&(back, _)| back == from) {
                Some(&(_, twin)) => pieces.join(triangle, twin),
                None => return None,
            }
        }
    }
    Some(pieces)
}

/// Which side of a model's triangles faces the viewer wherever it can be seen ([`Model::facing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Facing {
    /// Closed, counter-clockwise side out: back faces are always hidden behind front ones.
    Outward,
    /// Closed, clockwise side out (a mirrored export): the counter-clockwise side is the hidden one.
    Inward,
    /// Open, non-manifold, or with pieces wound both ways: either side may show.
    TwoSided,
}

impl Facing {
    /// One line for `vkskin inspect`.
    pub fn describe(self) -> &'static str {
        match self {
            Facing::Outward => "closed, counter-clockwise side out: back faces culled",
            Facing::Inward => "closed, clockwise side out: front faces culled",
            Facing::TwoSided => "open or mixed winding: both sides drawn",
        }
    }
}

/// Connected pieces of a closed mesh: union-find over triangles joined by their shared edges.
struct Pieces {
    parents: Vec<u32>,
}

impl Pieces {
    fn new(count: usize) -> Pieces {
        Pieces { parents: (0..count as u32).collect() }
    }

    fn root(&mut self, mut at: u32) -> u32 {
        while self.parents[at as usize] != at {
            let grandparent = self.parents[self.parents[at as usize] as usize];
            self.parents[at as usize] = grandparent;
            at = grandparent;
        }
        at
    }

    fn join(&mut self, a: u32, b: u32) {
        let (a, b) = (self.root(a), self.root(b));
        self.parents[a as usize] = b;
    }
}
