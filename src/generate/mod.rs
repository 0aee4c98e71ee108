//! The bundled default model: a walking figure built in code, so the repository carries no
//! third-party art and a test can prove that the committed `assets/figure.*` come from here.
//!
//! It is built in MD5 space: Z up, standing on z = 0, about 1.8 units tall, facing -Y so that after
//! the loader's Z-up → Y-up turn it faces +Z. The figure's left is +X.
//!
//! The maths is f64, and every number is rounded to six decimals as it goes into a document;
//! everything computed later (weight positions, baseframe, bounds) starts from the rounded values a
//! reader will see. So the files come out byte-identical on any platform, whatever the last bit of
//! its `sin`, and the bind pose reproduces each designed vertex to about 1e-6.
//!
//! `skeleton.rs`, `surfaces.rs`, `animation.rs`, `texture.rs`; here: the entry points and the
//! rounding every number goes through.

use animation::{animation, motion, wave_motion};
use skeleton::skeleton;
use std::io;
use std::path::{Path, PathBuf};
use surfaces::{mesh, pieces};
use texture::texture;

use glam::{DQuat, DVec3, Vec3};
use image::RgbaImage;

use crate::formats::md5::{self, Md5Anim, Md5Mesh};

mod animation;
pub mod dense;
pub mod long_clip;
mod skeleton;
pub mod spread_weights;
mod surfaces;
mod texture;
pub mod twist;
pub mod variants;

/// The body part's shader, and so the stem of its texture's file name.
pub const BODY_SHADER: &str = "figure_body";
/// One walk cycle: two steps in two seconds.
pub const FRAME_COUNT: usize = 48;
pub const FRAME_RATE: f32 = 24.0;

/// The generated documents and the body texture.
#[derive(Clone, Debug)]
pub struct GeneratedFigure {
    pub mesh: Md5Mesh,
    /// The walk in place (`figure_walk.md5anim`, clip "walk").
    pub anim: Md5Anim,
    /// Standing, swaying, waving the right hand (`figure_wave.md5anim`, clip "wave").
    pub wave: Md5Anim,
    pub texture: RgbaImage,
}

/// The animation files `write_assets` writes, with the document each holds.
pub fn animation_files(figure: &GeneratedFigure) -> [(&'static str, &Md5Anim); 2] {
    [("figure_walk.md5anim", &figure.anim), ("figure_wave.md5anim", &figure.wave)]
}

/// Builds the figure. Deterministic: the same documents and pixels every call, on every platform.
pub fn figure() -> GeneratedFigure {
    let skeleton = skeleton();
    let pieces = pieces(&skeleton);
    let mesh = mesh(&skeleton, &pieces);
    let anim = animation(&skeleton, &mesh, motion, "vkskin generate: walk in place");
    let wave = animation(&skeleton, &mesh, wave_motion, "vkskin generate: wave");
    GeneratedFigure { mesh, anim, wave, texture: texture() }
}

/// Writes `figure.md5mesh`, `figure_walk.md5anim`, `figure_wave.md5anim` and `figure_body.png` into
/// `dir` (created if needed) and returns their paths.
pub fn write_assets(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let figure = figure();
    std::fs::create_dir_all(dir)?;
    let mesh_path = dir.join("figure.md5mesh");
    std::fs::write(&mesh_path, md5::write_mesh(&figure.mesh))?;
    let mut written = vec![mesh_path];
    for (name, anim) in animation_files(&figure) {
        let anim_path = dir.join(name);
        std::fs::write(&anim_path, md5::write_anim(anim))?;
        written.push(anim_path);
    }
    let texture_path = dir.join(format!("{BODY_SHADER}.png"));
    figure.texture.save_with_format(&texture_path, image::ImageFormat::Png).map_err(io::Error::other)?;
    written.push(texture_path);
    Ok(written)
}

// ---------------------------------------------------------------------------------------------
// Numbers as the files hold them
// ---------------------------------------------------------------------------------------------

/// Six decimals: what goes into the files.
fn rounded(value: f64) -> f32 {
    // `+ 0.0` turns -0 into 0, which reads better in the file.
    ((value * 1e6).round() / 1e6 + 0.0) as f32
}

fn rounded_vector(vector: DVec3) -> Vec3 {
    Vec3::new(rounded(vector.x), rounded(vector.y), rounded(vector.z))
}

/// The x, y, z an MD5 file keeps of a rotation: w is implied ≤ 0, so a rotation with w > 0 is
/// stored as its negation (the same rotation).
fn stored_orientation(rotation: DQuat) -> Vec3 {
    let rotation = if rotation.w > 0.0 { -rotation } else { rotation };
    rounded_vector(DVec3::new(rotation.x, rotation.y, rotation.z))
}

/// The rotation a reader rebuilds from stored x, y, z.
fn read_orientation(xyz: Vec3) -> DQuat {
    let (x, y, z) = (f64::from(xyz.x), f64::from(xyz.y), f64::from(xyz.z));
    DQuat::from_xyzw(x, y, z, -(1.0 - x * x - y * y - z * z).max(0.0).sqrt())
}

fn smoothstep(edge0: f64, edge1: f64, x: f64) -> f64 {
    let t = ((x - edge0) / (edge1 - edge0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

#[cfg(test)]
mod tests {
    use super::animation::{model_space_frame, skinned_bounds};
    use super::skeleton::{ORIGIN, PELVIS};
    use super::surfaces::surface;
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn figure_is_deterministic() {
        let (first, second) = (figure(), figure());
        assert_eq!(first.mesh, second.mesh);
        assert_eq!(first.anim, second.anim);
        assert_eq!(first.texture, second.texture);
    }

    #[test]
    fn every_piece_is_closed_and_wound_outward() {
        let skeleton = skeleton();
        for (index, piece) in pieces(&skeleton).iter().enumerate() {
            let surface = surface(piece);
            // Weld the doubled seam by exact position.
            let mut welded: HashMap<[u64; 3], u32> = HashMap::new();
            let ids: Vec<u32> = surface
                .positions
                .iter()
                .map(|position| {
                    let key = position.to_array().map(f64::to_bits);
                    let next = welded.len() as u32;
                    *welded.entry(key).or_insert(next)
                })
                .collect();
            let mut edges: HashMap<(u32, u32), i32> = HashMap::new();
            let mut volume = 0.0;
            for triangle in &surface.triangles {
                let [a, b, c] = triangle.map(|corner| ids[corner as usize]);
                assert!(a != b && b != c && c != a, "piece {index}: degenerate triangle");
                for (from, to) in [(a, b), (b, c), (c, a)] {
                    *edges.entry((from, to)).or_default() += 1;
                }
                let [p, q, r] = triangle.map(|corner| surface.positions[corner as usize]);
                volume += p.dot(q.cross(r)) / 6.0;
            }
            for (&(from, to), &count) in &edges {
                assert_eq!(count, 1, "piece {index}: edge {from}->{to} used {count} times one way");
                assert_eq!(edges.get(&(to, from)), Some(&1), "piece {index}: edge {from}->{to} has no twin: a hole or a flip");
            }
            assert!(volume > 0.0, "piece {index}: negative volume means inward-facing triangles");
        }
    }

    #[test]
    fn bind_pose_rebuilds_the_designed_vertices() {
        let skeleton = skeleton();
        let pieces = pieces(&skeleton);
        let mesh = mesh(&skeleton, &pieces);
        let joints: Vec<(DVec3, DQuat)> =
            mesh.joints.iter().map(|joint| (joint.position.as_dvec3(), read_orientation(joint.orientation))).collect();
        let mut next_vert = [0usize; 2];
        for piece in &pieces {
            let part = &mesh.meshes[piece.part];
            for designed in surface(piece).positions {
                let vert = &part.verts[next_vert[piece.part]];
                next_vert[piece.part] += 1;
                let rebuilt: DVec3 = part
                    .weights_of(vert)
                    .iter()
                    .map(|weight| {
                        let (position, orientation) = joints[weight.joint as usize];
                        f64::from(weight.bias) * (position + orientation * weight.position.as_dvec3())
                    })
                    .sum();
                assert!(rebuilt.distance(designed) < 3e-6, "{rebuilt} vs {designed}");
            }
        }
    }

    #[test]
    fn weight_counts_are_mostly_small_with_a_few_over_four() {
        let mesh = figure().mesh;
        let mut histogram = [0usize; 8];
        for vert in mesh.meshes.iter().flat_map(|part| &part.verts) {
            histogram[vert.weight_count as usize] += 1;
        }
        let total: usize = histogram.iter().sum();
        assert_eq!(histogram[0], 0);
        assert!(histogram[1] + histogram[2] + histogram[3] > total * 9 / 10, "{histogram:?}");
        assert!(histogram[3] > 0 && histogram[4] > 0, "{histogram:?}");
        assert!(histogram[5] > 0 && histogram[6] > 0 && histogram[7] == 0, "{histogram:?}");
        assert!(histogram[5] + histogram[6] < 100, "{histogram:?}");
    }

    #[test]
    fn flags_animate_only_what_moves() {
        let anim = figure().anim;
        let flags: Vec<u32> = anim.hierarchy.iter().map(|joint| joint.flags).collect();
        for expected in [0, 3, 8, 56, 63] {
            assert!(flags.contains(&expected), "flags {flags:?} lack {expected}");
        }
        assert_eq!(anim.hierarchy[PELVIS].flags, 63);
        assert_eq!(anim.hierarchy[ORIGIN].flags, 3);
        assert_eq!(anim.frames.len(), FRAME_COUNT);
        assert!(anim.frames.iter().all(|frame| frame.len() == anim.num_animated_components as usize));
    }

    #[test]
    fn figure_stands_on_the_ground_and_faces_minus_y() {
        let skeleton = skeleton();
        let pieces = pieces(&skeleton);
        let positions: Vec<DVec3> = pieces.iter().flat_map(|piece| surface(piece).positions).collect();
        let lowest = positions.iter().map(|p| p.z).fold(f64::INFINITY, f64::min);
        let highest = positions.iter().map(|p| p.z).fold(f64::NEG_INFINITY, f64::max);
        assert!(lowest.abs() < 0.003, "lowest point {lowest}");
        assert!((highest - 1.8).abs() < 0.01, "highest point {highest}");
        let nose_tip = surface(&pieces[3]).positions.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
        assert!(nose_tip < -0.11, "the nose points to -Y: {nose_tip}");
    }

    #[test]
    fn bounds_hold_every_frame() {
        let figure = figure();
        for (frame, [min, max]) in figure.anim.frames.iter().zip(&figure.anim.bounds) {
            let joints = model_space_frame(&figure.anim, frame);
            let [skinned_min, skinned_max] = skinned_bounds(&figure.mesh, &joints);
            assert_eq!((skinned_min, skinned_max), (*min, *max));
            assert!(min.z > -0.1 && max.z > 1.7 && max.z < 1.9);
        }
    }
}
