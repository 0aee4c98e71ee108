//! A denser copy of the figure for load-time and level-of-detail measurements: `vkskin generate
//! --subdivide N` writes `figure_dense.md5mesh` (each triangle split into four, N times over: 6,948
//! triangles become 111,168 at N = 2) beside the figure's clips and texture. Being MD5, it opens in
//! assimp too, so the two loaders can be timed on the same large file.
//!
//! A new vertex is the midpoint of an edge in the bind pose exactly: its weights are both ends'
//! weights at half their bias, merged per joint (an MD5 weight's position is in its joint's space,
//! so two weights on one joint combine into one at their bias-weighted mean position).

use std::collections::HashMap;

use crate::formats::md5::{Md5Mesh, Md5MeshPart, Md5Vert, Md5Weight};

/// `mesh` with every triangle of every part split into four, `times` times over.
pub fn subdivided(mesh: &Md5Mesh, times: u32) -> Md5Mesh {
    let mut mesh = mesh.clone();
    for _ in 0..times {
        mesh.meshes = mesh.meshes.iter().map(split).collect();
    }
    mesh
}

fn split(part: &Md5MeshPart) -> Md5MeshPart {
    let mut verts = Vec::with_capacity(part.verts.len() * 4);
    let mut weights = Vec::with_capacity(part.weights.len() * 4);
    let mut push = |uv, vertex_weights: &[Md5Weight], verts: &mut Vec<Md5Vert>| {
        verts.push(Md5Vert { uv, start_weight: weights.len() as u32, weight_count: vertex_weights.len() as u32 });
        weights.extend_from_slice(vertex_weights);
        (verts.len() - 1) as u32
    };
    for vertex in &part.verts {
        push(vertex.uv, part.weights_of(vertex), &mut verts);
    }
    let mut midpoints: HashMap<(u32, u32), u32> = HashMap::new();
    let mut tris = Vec::with_capacity(part.tris.len() * 4);
    for &[a, b, c] in &part.tris {
        let mut midpoint = |from: u32, to: u32| {
            *midpoints.entry((from.min(to), from.max(to))).or_insert_with(|| {
                let (first, second) = (&part.verts[from as usize], &part.verts[to as usize]);
                let mut merged: Vec<Md5Weight> = Vec::new();
                for weight in part.weights_of(first).iter().chain(part.weights_of(second)) {
                    let half = weight.bias * 0.5;
                    match merged.iter_mut().find(|existing| existing.joint == weight.joint) {
                        Some(existing) => {
                            let bias = existing.bias + half;
                            if bias > 0.0 {
                                existing.position = (existing.position * existing.bias + weight.position * half) / bias;
                            }
                            existing.bias = bias;
                        }
                        None => merged.push(Md5Weight { joint: weight.joint, bias: half, position: weight.position }),
                    }
                }
                push((first.uv + second.uv) * 0.5, &merged, &mut verts)
            })
        };
        let (ab, bc, ca) = (midpoint(a, b), midpoint(b, c), midpoint(c, a));
        tris.extend([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
    }
    Md5MeshPart { shader: part.shader.clone(), verts, tris, weights }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdividing_quadruples_the_triangles_and_keeps_the_surface() {
        let figure = super::super::figure();
        let dense = subdivided(&figure.mesh, 1);
        let path = std::env::temp_dir().join(format!("vkskin-dense-{}.md5mesh", std::process::id()));
        std::fs::write(&path, crate::formats::md5::write_mesh(&dense)).expect("written");
        let loaded = crate::formats::load_model(&path, &[]).expect("the dense figure loads");
        let _ = std::fs::remove_file(&path);
        let original = crate::formats::load_model(&crate::app::default_model_path(), &[]).expect("the figure loads");
        assert_eq!(loaded.indices.len(), original.indices.len() * 4);
        // Same bind box: midpoints lie on the original edges.
        let (a, b) = (loaded.bind_bounds(), original.bind_bounds());
        assert!(a.min.distance(b.min) < 1e-4 && a.max.distance(b.max) < 1e-4, "{a:?} {b:?}");
    }
}
