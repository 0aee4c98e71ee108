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
        // Seam copies share a place and, to stay together when skinned, their influences.
        let mut welded: HashMap<WeldKey, u32> = HashMap::with_capacity(self.vertices.len());
        let ids: Vec<u32> = self
            .vertices
            .iter()
            .map(|vertex| {
                // +0.0 and -0.0 are one place.
                let place = (vertex.position + Vec3::ZERO).to_array().map(f32::to_bits);
                let influences =
                    self.influences_of(vertex).iter().map(|influence| (influence.joint, influence.weight.to_bits())).collect();
                let next = welded.len() as u32;
                *welded.entry((place, influences)).or_insert(next)
            })
            .collect();
        // Each directed edge and the one triangle that runs it; a second one means not closed.
        let mut edges: HashMap<(u32, u32), usize> = HashMap::with_capacity(self.indices.len());
        let mut triangles: Vec<[u32; 3]> = Vec::with_capacity(self.indices.len() / 3);
        for triangle in self.indices.chunks_exact(3) {
            let corner = |index: u32| ids.get(index as usize).copied();
            let (Some(a), Some(b), Some(c)) = (corner(triangle[0]), corner(triangle[1]), corner(triangle[2])) else {
                return Facing::TwoSided; // an index past the vertices: loaders never produce one
            };
            if a == b || b == c || c == a {
                continue; // welded to a line: covers nothing, bounds nothing
            }
            for edge in [(a, b), (b, c), (c, a)] {
                if edges.insert(edge, triangles.len()).is_some() {
                    return Facing::TwoSided;
                }
            }
            triangles.push([triangle[0], triangle[1], triangle[2]]);
        }
        if triangles.is_empty() {
            return Facing::TwoSided;
        }
        // Closed: every edge has its twin. Triangles sharing an edge are one piece (sharing only a
        // corner is not enough: two pieces may touch at a point and face opposite ways).
        let mut pieces = Pieces::new(triangles.len());
        for (&(from, to), &triangle) in &edges {
            match edges.get(&(to, from)) {
                Some(&twin) => pieces.join(triangle as u32, twin as u32),
                None => return Facing::TwoSided,
            }
        }
        // Six times each piece's signed volume, in f64: thin pieces sum many small terms.
        let mut volumes: HashMap<u32, f64> = HashMap::new();
        for (index, triangle) in triangles.iter().enumerate() {
            let [p, q, r] = triangle.map(|corner| self.vertices[corner as usize].position.as_dvec3());
            *volumes.entry(pieces.root(index as u32)).or_default() += p.dot(q.cross(r));
        }
        if volumes.values().all(|&volume| volume > 0.0) {
            Facing::Outward
        } else if volumes.values().all(|&volume| volume < 0.0) {
            Facing::Inward
        } else {
            Facing::TwoSided
        }
    }
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

/// A vertex's place (position bits) and influences (joint, weight bits): seam copies share both.
type WeldKey = ([u32; 3], Vec<(u32, u32)>);

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
