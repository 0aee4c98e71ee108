//! The Milkshape loader: documents round-trip through `write` and `parse`; keys evaluate as the
//! Milkshape SDK defines them (checked against computations written out again here); weights, the
//! bind pose, vertex splitting and textures come out right; the real models in
//! ../shared/models/ms3d load (skipped, with a message, when that folder is absent); and files
//! broken on purpose each give an error naming the file, the byte offset and what was expected,
//! without panicking.

use std::path::{Path, PathBuf};

use glam::{EulerRot, Mat4, Quat, Vec3, Vec4};
use vkskin::anim::{palette, skin_vertex, JointPose};
use vkskin::formats::ms3d::{
    self, FixedText, Ms3dAnimation, Ms3dComment, Ms3dComments, Ms3dFile, Ms3dGroup, Ms3dJoint, Ms3dJointExtras, Ms3dKey,
    Ms3dMaterial, Ms3dModelExtra, Ms3dTriangle, Ms3dVertex, Ms3dVertexExtra, Ms3dVertexExtras,
};
use vkskin::formats::{FormatError, Location};
use vkskin::model::Model;

/// A fresh folder for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ms3d_loader").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch folder can be created");
    dir
}

fn key(time: f32, value: Vec3) -> Ms3dKey {
    Ms3dKey { time, value }
}

fn vertex(position: Vec3, bone_id: i8) -> Ms3dVertex {
    Ms3dVertex { flags: 0, position, bone_id, reference_count: 1 }
}

fn triangle(vertex_indices: [u16; 3]) -> Ms3dTriangle {
    Ms3dTriangle {
        flags: 0,
        vertex_indices,
        normals: [Vec3::Z; 3],
        s: [0.0, 1.0, 0.0],
        t: [0.0, 0.0, 1.0],
        smoothing_group: 1,
        group_index: 0,
    }
}

fn joint(name: &str, parent: &str, rotation: Vec3, position: Vec3) -> Ms3dJoint {
    Ms3dJoint {
        flags: 8,
        name: FixedText::new(name),
        parent_name: FixedText::new(parent),
        rotation,
        position,
        rotation_keys: Vec::new(),
        position_keys: Vec::new(),
    }
}

/// A document with no trailer: the sections every file has.
fn empty_file() -> Ms3dFile {
    Ms3dFile {
        version: 4,
        vertices: Vec::new(),
        triangles: Vec::new(),
        groups: Vec::new(),
        materials: Vec::new(),
        animation_fps: 24.0,
        current_time: 1.0,
        total_frames: 24,
        joints: Vec::new(),
        comments: None,
        vertex_extras: None,
        joint_extras: None,
        model_extra: None,
        unparsed_tail: Vec::new(),
    }
}

/// A small animated quad with every trailer section.
fn sample_file() -> Ms3dFile {
    let mut root = joint("root", "", Vec3::new(0.1, 0.2, 0.3), Vec3::new(0.0, 1.0, 0.0));
    root.rotation_keys = vec![key(0.0, Vec3::ZERO), key(1.0, Vec3::new(0.0, 0.5, 0.0))];
    root.position_keys = vec![key(0.0, Vec3::ZERO), key(1.0, Vec3::new(0.5, 0.0, 0.0))];
    let mut arm = joint("arm", "root", Vec3::new(0.0, 0.0, -0.4), Vec3::new(1.0, 0.0, 0.0));
    arm.rotation_keys = vec![key(0.0, Vec3::ZERO), key(0.5, Vec3::new(0.0, 0.0, 0.8)), key(1.0, Vec3::ZERO)];
    arm.position_keys = vec![key(0.0, Vec3::ZERO), key(0.25, Vec3::Y), key(1.0, Vec3::ZERO)];
    let mut texture = FixedText::new("skin.png");
    texture.0[100] = 0x42; // left-over bytes after the NUL, as real exporters leave them
    Ms3dFile {
        vertices: vec![
            vertex(Vec3::new(0.0, 0.0, 0.0), 0),
            vertex(Vec3::new(1.0, 0.0, 0.0), 1),
            vertex(Vec3::new(1.0, 1.0, 0.0), 0),
            vertex(Vec3::new(0.0, 1.0, 0.0), -1),
        ],
        triangles: vec![triangle([0, 1, 2]), triangle([0, 2, 3])],
        groups: vec![Ms3dGroup { flags: 0, name: FixedText::new("body"), triangle_indices: vec![0, 1], material_index: 0 }],
        materials: vec![Ms3dMaterial {
            name: FixedText::new("skin"),
            ambient: Vec4::new(0.2, 0.2, 0.2, 1.0),
            diffuse: Vec4::new(0.8, 0.7, 0.6, 1.0),
            specular: Vec4::ZERO,
            emissive: Vec4::ZERO,
            shininess: 12.0,
            transparency: 1.0,
            mode: 1,
            texture,
            alphamap: FixedText::default(),
        }],
        joints: vec![root, arm],
        comments: Some(Ms3dComments {
            groups: vec![Ms3dComment { index: 0, text: b"the body".to_vec() }],
            materials: Vec::new(),
            joints: vec![Ms3dComment { index: 1, text: b"arm".to_vec() }],
            model: Some(b"made by hand".to_vec()),
        }),
        vertex_extras: Some(Ms3dVertexExtras {
            subversion: 2,
            vertices: vec![
                Ms3dVertexExtra { bone_ids: [1, -1, -1], weights: [70, 30, 0], extra: [7, 0] },
                Ms3dVertexExtra { bone_ids: [-1; 3], weights: [0; 3], extra: [0, 0] },
                Ms3dVertexExtra { bone_ids: [-1; 3], weights: [0; 3], extra: [0, 0] },
                Ms3dVertexExtra { bone_ids: [-1; 3], weights: [0; 3], extra: [0, 0] },
            ],
        }),
        joint_extras: Some(Ms3dJointExtras { colors: vec![Vec3::X, Vec3::Y] }),
        model_extra: Some(Ms3dModelExtra { joint_size: 1.0, transparency_mode: 0, alpha_ref: 0.5 }),
        ..empty_file()
    }
}

fn round_trip(file: &Ms3dFile) {
    let bytes = ms3d::write(file);
    let parsed = ms3d::parse(&bytes, Path::new("round_trip.ms3d")).unwrap_or_else(|error| panic!("written file parses: {error}"));
    assert_eq!(&parsed, file);
    assert_eq!(ms3d::write(&parsed), bytes, "and writes back to the same bytes");
}

fn shared_models() -> Option<PathBuf> {
    crate::common::shared_models("ms3d")
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

#[test]
fn documents_round_trip_with_every_trailer_section_and_subversion() {
    round_trip(&empty_file());
    round_trip(&Ms3dFile { version: 3, ..empty_file() });
    let full = sample_file();
    round_trip(&full);

    // Each prefix of the trailer: the file may end after any section.
    let no_trailer = Ms3dFile { comments: None, vertex_extras: None, joint_extras: None, model_extra: None, ..full.clone() };
    round_trip(&no_trailer);
    let comments_only = Ms3dFile { comments: full.comments.clone(), ..no_trailer.clone() };
    round_trip(&comments_only);
    round_trip(&Ms3dFile { comments: Some(Ms3dComments::default()), ..no_trailer.clone() });

    for subversion in 1..=3u32 {
        let extras = full.vertex_extras.clone().map(|extras| Ms3dVertexExtras {
            subversion,
            vertices: extras
                .vertices
                .iter()
                .enumerate()
                .map(|(index, extra)| {
                    // Only the first `subversion - 1` extra values are in the file.
                    let value = |slot: u32| if slot + 1 < subversion { 1000 * index as u32 + slot + 1 } else { 0 };
                    Ms3dVertexExtra { extra: [value(0), value(1)], ..*extra }
                })
                .collect(),
        });
        let with_extras = Ms3dFile { vertex_extras: extras, ..comments_only.clone() };
        round_trip(&with_extras);
        let with_colours = Ms3dFile { joint_extras: full.joint_extras.clone(), ..with_extras.clone() };
        round_trip(&with_colours);
        round_trip(&Ms3dFile { model_extra: full.model_extra, ..with_colours });
    }

    // Sections this reader does not know are kept whole: a joint-extra subversion 2, and bytes
    // after the model extra.
    let mut unknown_joint_extras = 2i32.to_le_bytes().to_vec();
    unknown_joint_extras.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7]);
    round_trip(&Ms3dFile { joint_extras: None, model_extra: None, unparsed_tail: unknown_joint_extras, ..full.clone() });
    round_trip(&Ms3dFile { unparsed_tail: vec![9, 8, 7], ..full.clone() });
}

#[test]
fn write_fills_a_missing_earlier_section() {
    // Vertex extras without comments: an empty comment section goes before them.
    let file = Ms3dFile { comments: None, joint_extras: None, model_extra: None, ..sample_file() };
    let parsed = ms3d::parse(&ms3d::write(&file), Path::new("filled.ms3d")).expect("parses");
    assert_eq!(parsed.comments, Some(Ms3dComments::default()));
    assert_eq!(parsed.vertex_extras, file.vertex_extras);
}

#[test]
fn real_files_write_back_byte_for_byte() {
    let Some(folder) = shared_models() else { return };
    for relative in ["ninja/ninja.ms3d", "jeep1/jeep1.ms3d", "wuson/Wuson.ms3d"] {
        let path = folder.join(relative);
        let bytes = std::fs::read(&path).expect("model file");
        let file = ms3d::parse(&bytes, &path).unwrap_or_else(|error| panic!("{error}"));
        assert!(ms3d::write(&file) == bytes, "{relative} rewrites to its own bytes");
    }
}

// ---------------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------------

/// A file with one root joint at the origin, unrotated, so its pose is its keys.
fn one_joint(rotation_keys: Vec<Ms3dKey>, position_keys: Vec<Ms3dKey>) -> Ms3dFile {
    let mut root = joint("root", "", Vec3::ZERO, Vec3::ZERO);
    root.rotation_keys = rotation_keys;
    root.position_keys = position_keys;
    Ms3dFile { joints: vec![root], animation_fps: 30.0, total_frames: 120, ..empty_file() }
}

fn evaluate(animation: &Ms3dAnimation, time: f32) -> Vec<JointPose> {
    let mut poses = vec![JointPose::IDENTITY; animation.joint_count()];
    animation.evaluate(time, &mut poses);
    poses
}

/// The SDK's EvaluateJoint position channel and SetupTangents, written out again: times in frames
/// (seconds × fps) as the SDK keeps them, a linear search for the interval, looped neighbours.
fn sdk_position(keys: &[Ms3dKey], fps: f32, time: f32) -> Vec3 {
    let frame = time * fps;
    let times: Vec<f32> = keys.iter().map(|key| key.time * fps).collect();
    let values: Vec<Vec3> = keys.iter().map(|key| key.value).collect();
    let count = keys.len();
    let mut tangent_in = vec![Vec3::ZERO; count];
    let mut tangent_out = vec![Vec3::ZERO; count];
    if count > 2 {
        for k in 0..count {
            let k0 = if k == 0 { count - 1 } else { k - 1 };
            let k2 = if k + 1 >= count { 0 } else { k + 1 };
            let tangent = values[k2] - values[k0];
            let dt1 = times[k] - times[k0];
            let dt2 = times[k2] - times[k];
            let dt = dt1 + dt2;
            tangent_in[k] = tangent * dt1 / dt;
            tangent_out[k] = tangent * dt2 / dt;
        }
    }
    for i in 0..count - 1 {
        if frame >= times[i] && frame < times[i + 1] {
            let t = (frame - times[i]) / (times[i + 1] - times[i]);
            let (t2, t3) = (t * t, t * t * t);
            let h1 = 2.0 * t3 - 3.0 * t2 + 1.0;
            let h2 = -2.0 * t3 + 3.0 * t2;
            let h3 = t3 - 2.0 * t2 + t;
            let h4 = t3 - t2;
            return h1 * values[i] + h3 * tangent_out[i] + h2 * values[i + 1] + h4 * tangent_in[i + 1];
        }
    }
    if frame < times[0] {
        values[0]
    } else {
        values[count - 1]
    }
}

#[test]
fn position_keys_follow_the_sdk_hermite_curve_at_midpoints() {
    // Uneven spacing, the first key after 0 as in ninja.ms3d.
    let keys = vec![
        key(1.0 / 30.0, Vec3::new(0.0, 0.0, 0.0)),
        key(0.25, Vec3::new(1.0, 2.0, -1.0)),
        key(1.0, Vec3::new(3.0, 0.5, 0.0)),
        key(1.5, Vec3::new(2.0, -1.0, 4.0)),
        key(3.0, Vec3::new(-1.0, 0.0, 1.0)),
    ];
    let animation = Ms3dAnimation::new(&one_joint(Vec::new(), keys.clone()), Path::new("hermite.ms3d")).expect("valid");
    assert!((animation.duration() - 4.0).abs() < 1e-6, "120 frames at 30 fps");
    let mut worst = 0.0f32;
    for pair in keys.windows(2) {
        for fraction in [0.25, 0.5, 0.75] {
            let time = pair[0].time + fraction * (pair[1].time - pair[0].time);
            let got = evaluate(&animation, time)[0].translation;
            let expected = sdk_position(&keys, 30.0, time);
            worst = worst.max(got.distance(expected));
            assert!(got.distance(expected) < 1e-4, "t = {time}: {got} vs {expected}");
        }
    }
    println!("Hermite positions: worst difference from the SDK's computation {worst:e}");
    // Clamped before the first key, held from the last.
    assert_eq!(evaluate(&animation, 0.0)[0].translation, keys[0].value);
    assert_eq!(evaluate(&animation, 3.5)[0].translation, keys[4].value);
    assert_eq!(evaluate(&animation, 3.0)[0].translation, keys[4].value);

    // Interior intervals of evenly spaced keys on a line move linearly: the tangent rule is the
    // velocity times the interval.
    let line: Vec<Ms3dKey> = (0..6).map(|index| key(index as f32 * 0.5, Vec3::new(index as f32 * 2.0, 0.0, 0.0))).collect();
    let animation = Ms3dAnimation::new(&one_joint(Vec::new(), line), Path::new("line.ms3d")).expect("valid");
    for time in [0.75, 1.1, 1.6, 1.9] {
        let x = evaluate(&animation, time)[0].translation.x;
        assert!((x - time * 4.0).abs() < 1e-4, "t = {time}: {x}");
    }
    // Two keys: zero tangents, so the motion eases (smoothstep), as the SDK plays it.
    let animation =
        Ms3dAnimation::new(&one_joint(Vec::new(), vec![key(0.0, Vec3::ZERO), key(1.0, Vec3::X)]), Path::new("two.ms3d"))
            .expect("valid");
    let x = evaluate(&animation, 0.25)[0].translation.x;
    assert!((x - (3.0 * 0.0625 - 2.0 * 0.015625)).abs() < 1e-6, "{x}");
}

/// How far apart two rotations are, as the distance between unit quaternions on the same side
/// (about half the angle). Better conditioned than `angle_between` when they are nearly equal.
fn rotation_distance(a: Quat, b: Quat) -> f32 {
    (a - b).length().min((a + b).length())
}

fn glam_euler(angles: Vec3) -> Quat {
    Quat::from_euler(EulerRot::ZYX, angles.z, angles.y, angles.x)
}

#[test]
fn rotation_keys_slerp_the_euler_quaternions_at_midpoints() {
    let keys = vec![
        key(0.0, Vec3::new(0.0, 0.0, 0.0)),
        key(0.5, Vec3::new(0.4, -0.9, 1.3)),
        key(1.25, Vec3::new(-1.2, 0.3, 0.2)),
        // Across the ±π seam: the short way round is 0.28 rad, not 5.7.
        key(2.0, Vec3::new(0.0, 0.0, 3.0)),
        key(2.5, Vec3::new(0.0, 0.0, -3.0)),
    ];
    let animation = Ms3dAnimation::new(&one_joint(keys.clone(), Vec::new()), Path::new("slerp.ms3d")).expect("valid");
    let mut worst = 0.0f32;
    for pair in keys.windows(2) {
        for fraction in [0.25, 0.5, 0.75] {
            let time = pair[0].time + fraction * (pair[1].time - pair[0].time);
            let expected = glam_euler(pair[0].value).slerp(glam_euler(pair[1].value), fraction);
            let got = evaluate(&animation, time)[0].rotation;
            worst = worst.max(rotation_distance(got, expected));
            assert!(rotation_distance(got, expected) < 1e-5, "t = {time}: {got} vs {expected}");
        }
    }
    println!("slerped rotations: worst quaternion distance from glam's slerp {worst:e}");
    let seam = evaluate(&animation, 2.25)[0].rotation;
    assert!(rotation_distance(seam, Quat::from_rotation_z(std::f32::consts::PI)) < 1e-5, "{seam}");
}

/// The SDK's matrix chain, written out: global = parent global × T(position)·R(rotation)·T(key
/// position)·R(key rotation).
fn sdk_global(file: &Ms3dFile, joint: usize, time: f32, keys: &dyn Fn(&[Ms3dKey], f32) -> Vec3) -> Mat4 {
    let entry = &file.joints[joint];
    let local = Mat4::from_translation(entry.position)
        * Mat4::from_quat(glam_euler(entry.rotation))
        * Mat4::from_translation(keys(&entry.position_keys, time))
        * Mat4::from_quat(glam_euler(keys(&entry.rotation_keys, time)));
    let parent = file
        .joints
        .iter()
        .position(|other| other.name.bytes() == entry.parent_name.bytes() && !entry.parent_name.bytes().is_empty());
    match parent {
        Some(parent) => sdk_global(file, parent, time, keys) * local,
        None => local,
    }
}

#[test]
fn joints_compose_bind_and_keys_as_the_sdk_matrix_chain() {
    let file = sample_file();
    let animation = Ms3dAnimation::new(&file, Path::new("chain.ms3d")).expect("valid");
    // At the keys themselves no interpolation rule is involved.
    let at_key = |keys: &[Ms3dKey], time: f32| keys.iter().find(|key| key.time == time).map_or(Vec3::ZERO, |key| key.value);
    for time in [0.0, 1.0] {
        let poses = evaluate(&animation, time);
        for (index, pose) in poses.iter().enumerate() {
            let expected = sdk_global(&file, index, time, &at_key);
            assert!(pose.to_mat4().abs_diff_eq(expected, 1e-5), "joint {index} at {time}: {} vs {expected}", pose.to_mat4());
        }
    }
    // The bind: no keys at all.
    let no_keys = |_: &[Ms3dKey], _: f32| Vec3::ZERO;
    for (index, pose) in animation.bind_poses().iter().enumerate() {
        assert!(pose.to_mat4().abs_diff_eq(sdk_global(&file, index, 0.0, &no_keys), 1e-5), "joint {index}");
    }
}

// ---------------------------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------------------------

fn influences(model: &Model, vertex: usize) -> Vec<(u32, f32)> {
    model.influences_of(&model.vertices[vertex]).iter().map(|influence| (influence.joint, influence.weight)).collect()
}

fn assert_weights(got: &[(u32, f32)], expected: &[(u32, f32)]) {
    assert_eq!(got.len(), expected.len(), "{got:?} vs {expected:?}");
    for (got, expected) in got.iter().zip(expected) {
        assert!(got.0 == expected.0 && (got.1 - expected.1).abs() < 1e-6, "{got:?} vs {expected:?}");
    }
}

#[test]
fn extra_weights_are_percentages_for_the_first_three_slots() {
    // Joints a, b, c, d (file order = skeleton order: all roots). Slots: the vertex's own joint,
    // then the extra's three; the weights are for the first three slots and the fourth gets the
    // rest of 100, as the format's spec and the SDK's FillJointIndicesAndWeights define them.
    let joints: Vec<Ms3dJoint> = ["a", "b", "c", "d"].iter().map(|name| joint(name, "", Vec3::ZERO, Vec3::ZERO)).collect();
    for subversion in 1..=3 {
        let file = Ms3dFile {
            vertices: vec![
                vertex(Vec3::ZERO, 0),
                vertex(Vec3::X, 1),
                vertex(Vec3::Y, -1),
                vertex(Vec3::Z, 2),
                vertex(Vec3::ONE, 0),
            ],
            // Vertex 2 is corner 2 of both, with the same normal and texture coordinates: no split.
            triangles: vec![triangle([0, 1, 2]), triangle([3, 4, 2])],
            groups: vec![Ms3dGroup { flags: 0, name: FixedText::new("all"), triangle_indices: vec![0, 1], material_index: -1 }],
            joints: joints.clone(),
            comments: Some(Ms3dComments::default()),
            vertex_extras: Some(Ms3dVertexExtras {
                subversion,
                vertices: vec![
                    // [a, b, c, d] with 30, 20, 0: a 30 %, b 20 %, c 0 % (dropped), d the other 50 %.
                    Ms3dVertexExtra { bone_ids: [1, 2, 3], weights: [30, 20, 0], extra: [0; 2] },
                    // All zero: the vertex's own joint takes everything.
                    Ms3dVertexExtra { bone_ids: [-1; 3], weights: [0; 3], extra: [0; 2] },
                    // No joint at all: rigid to the model.
                    Ms3dVertexExtra { bone_ids: [-1; 3], weights: [0; 3], extra: [0; 2] },
                    // c 70 %, d 20 % and the rest (10 %) again to d: one joint named twice merges.
                    Ms3dVertexExtra { bone_ids: [3, -1, 3], weights: [70, 20, 0], extra: [0; 2] },
                    // Weights summing past 100: the negative rest is dropped, the others scale.
                    Ms3dVertexExtra { bone_ids: [1, 2, -1], weights: [60, 60, 30], extra: [0; 2] },
                ],
            }),
            ..empty_file()
        };
        let model = ms3d::to_model(&file, Path::new("weights.ms3d")).expect("valid");
        assert_eq!(model.vertices.len(), 5);
        // Heaviest first.
        assert_weights(&influences(&model, 0), &[(3, 0.5), (0, 0.3), (1, 0.2)]);
        assert_weights(&influences(&model, 1), &[(1, 1.0)]);
        assert_weights(&influences(&model, 2), &[(4, 1.0)]);
        assert_weights(&influences(&model, 3), &[(2, 0.7), (3, 0.3)]);
        assert_weights(&influences(&model, 4), &[(0, 0.4), (1, 0.4), (2, 0.2)]);
        assert_eq!(model.stats.max_influences, 3);
        // The rigid vertex made a root joint named after the model, still in the bind pose.
        assert_eq!(model.skeleton.len(), 5);
        let root = &model.skeleton.joints[4];
        assert_eq!((root.name.as_str(), root.parent, root.inverse_bind), ("weights", None, Mat4::IDENTITY));
        assert!([0.0, 0.5, 1.9].iter().all(|&time| model.joint_matrices(0, time)[4] == Mat4::IDENTITY));
        assert_eq!(model.materials.len(), 1, "the default material");
        assert_eq!(model.materials[0].base_color, Vec4::new(0.8, 0.8, 0.8, 1.0));
    }

    // Without a vertex-extra section each vertex follows its one joint.
    let file = Ms3dFile {
        vertices: vec![vertex(Vec3::ZERO, 3), vertex(Vec3::X, 0), vertex(Vec3::Y, 1)],
        triangles: vec![triangle([0, 1, 2])],
        groups: vec![Ms3dGroup { flags: 0, name: FixedText::new("g"), triangle_indices: vec![0], material_index: -1 }],
        joints,
        ..empty_file()
    };
    let model = ms3d::to_model(&file, Path::new("single.ms3d")).expect("valid");
    assert_weights(&influences(&model, 0), &[(3, 1.0)]);
    assert_eq!(model.skeleton.len(), 4, "no rigid vertex: no extra root");
    assert_eq!(model.stats.max_influences, 1);
}

#[test]
fn a_model_without_joints_gets_one_root_and_no_clips() {
    let file = Ms3dFile {
        vertices: vec![vertex(Vec3::ZERO, -1), vertex(Vec3::X, -1), vertex(Vec3::Y, -1)],
        triangles: vec![triangle([0, 1, 2])],
        groups: vec![Ms3dGroup { flags: 0, name: FixedText::new("g"), triangle_indices: vec![0], material_index: -1 }],
        animation_fps: 0.0, // never read without joints
        ..empty_file()
    };
    let model = ms3d::to_model(&file, Path::new("static.ms3d")).expect("a static model needs no frame rate");
    assert_eq!(model.skeleton.len(), 1);
    assert_eq!(model.skeleton.joints[0].name, "static");
    assert!(model.clips.is_empty());
    assert!((0..3).all(|index| influences(&model, index) == [(0, 1.0)]));
    let empty = ms3d::to_model(&empty_file(), Path::new("nothing.ms3d")).expect("an empty model is valid");
    assert_eq!((empty.skeleton.len(), empty.vertices.len(), empty.meshes.len()), (1, 0, 0));
}

#[test]
fn the_bind_pose_keeps_vertices_where_the_file_puts_them() {
    // A chain with turned and offset joints; keys that are all zero leave it in its bind pose.
    let mut joints = vec![
        joint("hip", "", Vec3::new(0.3, -0.2, 0.1), Vec3::new(0.0, 1.0, 0.5)),
        joint("knee", "hip", Vec3::new(-0.7, 0.4, 1.1), Vec3::new(0.2, -0.5, 0.0)),
        joint("foot", "knee", Vec3::new(0.0, 1.2, -0.3), Vec3::new(0.0, -0.4, 0.1)),
    ];
    for entry in &mut joints {
        entry.rotation_keys = vec![key(0.0, Vec3::ZERO), key(2.0, Vec3::ZERO)];
        entry.position_keys = vec![key(0.0, Vec3::ZERO), key(1.0, Vec3::ZERO), key(2.0, Vec3::ZERO)];
    }
    let positions = [Vec3::new(0.1, 0.9, 0.4), Vec3::new(0.3, 0.2, 0.6), Vec3::new(-0.2, 0.1, 0.3), Vec3::new(0.5, 0.5, 0.5)];
    let file = Ms3dFile {
        vertices: positions.iter().zip([0i8, 1, 2, 1]).map(|(&position, bone)| vertex(position, bone)).collect(),
        triangles: vec![triangle([0, 1, 2]), triangle([3, 1, 2])],
        groups: vec![Ms3dGroup { flags: 0, name: FixedText::new("leg"), triangle_indices: vec![0, 1], material_index: -1 }],
        joints,
        comments: Some(Ms3dComments::default()),
        vertex_extras: Some(Ms3dVertexExtras {
            subversion: 1,
            vertices: vec![
                Ms3dVertexExtra { bone_ids: [1, 2, -1], weights: [50, 25, 0], extra: [0; 2] },
                Ms3dVertexExtra::default(),
                Ms3dVertexExtra::default(),
                Ms3dVertexExtra { bone_ids: [0, -1, -1], weights: [40, 60, 0], extra: [0; 2] },
            ],
        }),
        animation_fps: 1.0,
        total_frames: 2,
        ..empty_file()
    };
    let model = ms3d::to_model(&file, Path::new("leg.ms3d")).expect("valid");
    let mut matrices = vec![Mat4::IDENTITY; model.skeleton.len()];
    for frame in [0.0, 0.7, 1.0, 2.0] {
        palette(&model.skeleton, &model.joint_matrices(0, frame), &mut matrices);
        for (index, vertex) in model.vertices.iter().enumerate() {
            let skinned = skin_vertex(&matrices, vertex.position, vertex.normal, Vec3::X, model.influences_of(vertex));
            assert!(skinned.position.distance(vertex.position) < 1e-5, "frame {frame} vertex {index}: {}", skinned.position);
        }
    }
    for (vertex, expected) in model.vertices.iter().zip(positions) {
        assert_eq!(vertex.position, expected, "positions are the file's, model space");
    }
}

#[test]
fn skeleton_is_ordered_parents_first() {
    // The child comes first in the file; its vertices must still follow it.
    let file = Ms3dFile {
        vertices: vec![vertex(Vec3::ZERO, 0), vertex(Vec3::X, 1), vertex(Vec3::Y, 2)],
        triangles: vec![triangle([0, 1, 2])],
        groups: vec![Ms3dGroup { flags: 0, name: FixedText::new("g"), triangle_indices: vec![0], material_index: -1 }],
        joints: vec![
            joint("hand", "arm", Vec3::ZERO, Vec3::X),
            joint("arm", "body", Vec3::ZERO, Vec3::X),
            joint("body", "", Vec3::ZERO, Vec3::Y),
        ],
        ..empty_file()
    };
    let model = ms3d::to_model(&file, Path::new("order.ms3d")).expect("valid");
    let names: Vec<&str> = model.skeleton.joints.iter().map(|joint| joint.name.as_str()).collect();
    assert_eq!(names, ["body", "arm", "hand"]);
    let parents: Vec<Option<usize>> = model.skeleton.joints.iter().map(|joint| joint.parent).collect();
    assert_eq!(parents, [None, Some(0), Some(1)]);
    assert_eq!(influences(&model, 0), [(2, 1.0)], "file joint 0 (hand) is skeleton joint 2");
    assert_eq!(influences(&model, 2), [(0, 1.0)]);
    // The hand sits at body + arm + hand offsets.
    let hand_bind = model.skeleton.joints[2].inverse_bind.inverse();
    assert!(hand_bind.transform_point3(Vec3::ZERO).abs_diff_eq(Vec3::new(2.0, 1.0, 0.0), 1e-6));
}

#[test]
fn vertices_split_where_corners_differ_and_groups_become_meshes() {
    let mut second = triangle([0, 2, 3]);
    second.s = [0.0, 1.0, 0.0];
    second.t = [0.0, 1.0, 1.0];
    let mut first = triangle([0, 1, 2]);
    first.s = [0.0, 1.0, 1.0];
    first.t = [0.0, 0.0, 1.0];
    let file = Ms3dFile {
        vertices: vec![vertex(Vec3::ZERO, -1), vertex(Vec3::X, -1), vertex(Vec3::new(1.0, 1.0, 0.0), -1), vertex(Vec3::Y, -1)],
        triangles: vec![first, second],
        groups: vec![
            Ms3dGroup { flags: 0, name: FixedText::new("left"), triangle_indices: vec![0], material_index: 0 },
            Ms3dGroup { flags: 0, name: FixedText::new("right"), triangle_indices: vec![1], material_index: -1 },
            Ms3dGroup { flags: 0, name: FixedText::new("empty"), triangle_indices: Vec::new(), material_index: -1 },
        ],
        materials: vec![Ms3dMaterial {
            name: FixedText::new("red"),
            diffuse: Vec4::new(1.0, 0.0, 0.0, 1.0),
            transparency: 1.0,
            ..Ms3dMaterial::default()
        }],
        ..empty_file()
    };
    let model = ms3d::to_model(&file, Path::new("quad.ms3d")).expect("valid");
    assert_eq!(model.vertices.len(), 4, "shared corners agree: no split");
    assert_eq!(model.indices, [0, 1, 2, 0, 2, 3]);
    let meshes: Vec<(&str, u32, u32, usize)> =
        model.meshes.iter().map(|mesh| (mesh.name.as_str(), mesh.first_index, mesh.index_count, mesh.material)).collect();
    assert_eq!(meshes, [("left", 0, 3, 0), ("right", 3, 3, 1)], "an empty group draws nothing");
    assert_eq!(model.materials[0].base_color, Vec4::new(1.0, 0.0, 0.0, 1.0));
    assert_eq!(model.materials[1].base_color, Vec4::new(0.8, 0.8, 0.8, 1.0));
    assert!(model.vertices.iter().all(|vertex| (vertex.tangent.truncate().length() - 1.0).abs() < 1e-5));
    assert!(model.vertices.iter().all(|vertex| vertex.tangent.truncate().dot(vertex.normal).abs() < 1e-5));

    // One corner of vertex 2 with another texture coordinate, one of vertex 0 with another normal.
    let mut split = file.clone();
    split.triangles[1].s[1] = 0.5;
    split.triangles[1].normals[0] = Vec3::new(0.0, 0.6, 0.8);
    let model = ms3d::to_model(&split, Path::new("quad.ms3d")).expect("valid");
    assert_eq!(model.vertices.len(), 6);
    assert_eq!(model.indices, [0, 1, 2, 3, 4, 5]);
    assert_eq!(model.vertices[3].position, Vec3::ZERO);
    assert!(model.vertices[3].normal.abs_diff_eq(Vec3::new(0.0, 0.6, 0.8), 1e-6));
    assert_eq!((model.vertices[4].position, model.vertices[4].uv.x), (Vec3::new(1.0, 1.0, 0.0), 0.5));
}

#[test]
fn textures_are_found_beside_the_model_from_windows_paths() {
    let folder = scratch("textures");
    std::fs::create_dir_all(folder.join("maps")).expect("folder");
    image::RgbaImage::from_pixel(2, 3, image::Rgba([10, 20, 30, 255])).save(folder.join("maps/skin.png")).expect("png written");
    // A JPEG under a misleading name: decoded by content.
    image::RgbImage::from_pixel(4, 4, image::Rgb([200, 100, 50])).save(folder.join("face.jpg")).expect("jpeg written");
    std::fs::rename(folder.join("face.jpg"), folder.join("face.bmp")).expect("renamed");
    let material = |name: &str, texture: &str| Ms3dMaterial {
        name: FixedText::new(name),
        diffuse: Vec4::ONE,
        transparency: 1.0,
        texture: FixedText::new(texture),
        ..Ms3dMaterial::default()
    };
    let file = Ms3dFile {
        materials: vec![
            material("relative", ".\\maps\\skin.png"),
            material("absolute", "C:\\Users\\artist\\My Models\\Skin.PNG"),
            material("renamed", "face.bmp"),
            material("missing", "..\\textures\\nothere.tga"),
            material("untextured", ""),
        ],
        ..empty_file()
    };
    // Absolute paths reduce to the file name: put one beside the model too.
    std::fs::copy(folder.join("maps/skin.png"), folder.join("skin.png")).expect("copied");
    let model = ms3d::to_model(&file, &folder.join("model.ms3d")).expect("valid");
    let relative = model.materials[0].texture.as_ref().expect("found from .\\maps\\skin.png");
    assert_eq!((relative.width, relative.height), (2, 3));
    assert_eq!(relative.path, folder.join("maps/skin.png"));
    assert_eq!(&relative.decode().expect("decodes")[..4], &[10, 20, 30, 255]);
    let absolute = model.materials[1].texture.as_ref().expect("found by file name, ignoring case");
    assert_eq!(absolute.path, folder.join("skin.png"));
    assert_eq!(model.materials[2].texture.as_ref().map(|texture| texture.width), Some(4));
    assert!(model.materials[3].texture.is_none());
    assert!(model.materials[4].texture.is_none());
    assert_eq!(model.stats.warnings.len(), 1, "{:?}", model.stats.warnings);
    let warning = &model.stats.warnings[0];
    assert!(warning.contains("nothere.tga") && warning.contains("missing") && warning.contains("tried"), "{warning}");
    assert!(warning.contains(&folder.join("../textures/nothere.tga").display().to_string()), "{warning}");
}

// ---------------------------------------------------------------------------------------------
// Real models
// ---------------------------------------------------------------------------------------------

fn describe(relative: &str, file: &Ms3dFile, model: &Model) {
    let clip = model.animations.first().map_or("no animation".to_string(), |animation| {
        let [translation, rotation, _] = animation.key_counts();
        format!(
            "animation \"{}\" {:.3} s ({translation} position and {rotation} rotation keys)",
            animation.name, animation.duration
        )
    });
    println!(
        "{relative}: {} file vertices -> {} after splitting, {} triangles, {} joints in the file -> {} in the skeleton, \
         {} materials ({} textured), {clip}, file timeline {} frames at {} fps, up to {} influences",
        file.vertices.len(),
        model.vertices.len(),
        model.indices.len() / 3,
        file.joints.len(),
        model.skeleton.len(),
        model.materials.len(),
        model.materials.iter().filter(|material| material.texture.is_some()).count(),
        file.total_frames,
        file.animation_fps,
        model.stats.max_influences
    );
    for warning in &model.stats.warnings {
        println!("  warning: {warning}");
    }
}

fn load_real(folder: &Path, relative: &str) -> (Ms3dFile, Model) {
    let path = folder.join(relative);
    let bytes = std::fs::read(&path).expect("model file");
    let file = ms3d::parse(&bytes, &path).unwrap_or_else(|error| panic!("{error}"));
    let model = ms3d::load(&path).unwrap_or_else(|error| panic!("{error}"));
    assert!(model.vertices.iter().all(|vertex| vertex.influence_count >= 1 && !model.influences_of(vertex).is_empty()));
    describe(relative, &file, &model);
    (file, model)
}

#[test]
fn ninja_loads_with_28_joints_and_a_ten_second_clip() {
    let Some(folder) = shared_models() else { return };
    let (file, model) = load_real(&folder, "ninja/ninja.ms3d");
    assert_eq!((file.vertices.len(), file.triangles.len(), file.groups.len(), file.materials.len()), (781, 904, 1, 5));
    assert_eq!(model.indices.len(), 904 * 3);
    assert_eq!(model.skeleton.len(), 28, "every vertex has a joint: no extra root");
    assert_eq!((file.animation_fps, file.total_frames), (30.0, 300));
    assert_eq!(model.clips.len(), 1);
    let clip = &model.clips[0];
    assert_eq!(clip.name, "ninja");
    assert!((clip.duration - 10.0).abs() < 1e-4, "{}", clip.duration);
    assert_eq!(model.stats.max_influences, 1);
    assert!(model.materials[0].texture.is_some(), "nskinbl.jpg is found");
    assert!(file.joints[0].rotation_keys[0].time > 0.03, "keys start at 1/fps");
    assert_eq!(file.vertex_extras.as_ref().map(|extras| extras.subversion), Some(2));

    // The model keeps the file's keys: 1/30 s apart, some turning a joint by up to 2 rad in one
    // interval (the one-frame snaps between the .txt's ranges). Sampling them must give the SDK's
    // curves at any time, keys and the points between them alike (no bake error any more).
    let animation = Ms3dAnimation::new(&file, &folder.join("ninja/ninja.ms3d")).expect("valid");
    assert_eq!(animation.joint_count(), model.skeleton.len());
    let keys: usize = file.joints.iter().map(|joint| joint.rotation_keys.len() + joint.position_keys.len()).sum();
    let [positions, rotations, scales] = model.animations[0].key_counts();
    assert_eq!((positions + rotations, scales), (keys, 0), "every key kept, none added");
    let extent = model.extent();
    let mut worst = 0.0f32;
    for step in 0..=3000 {
        let time = animation.duration() * step as f32 / 3000.0;
        let sdk = evaluate(&animation, time);
        for (found, expected) in model.joint_matrices(0, time).iter().zip(&sdk) {
            for probe in [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z] {
                worst = worst.max(found.transform_point3(probe).distance(expected.to_mat4().transform_point3(probe)));
            }
        }
    }
    println!(
        "  channels against the SDK's formulas at 3,001 times: worst {worst:e} model units, {:e} of the extent",
        worst / extent
    );
    assert!(worst <= 1e-5 * extent, "{worst} against extent {extent}");
}

#[test]
fn jeep_is_static_and_finds_its_relative_texture() {
    let Some(folder) = shared_models() else { return };
    let (file, model) = load_real(&folder, "jeep1/jeep1.ms3d");
    assert_eq!((file.vertices.len(), file.triangles.len(), file.groups.len(), file.materials.len()), (1190, 2032, 7, 1));
    assert!(file.joints.is_empty() && file.comments.is_none(), "the file ends after its (zero) joints");
    assert_eq!(file.materials[0].texture.text(), ".\\jeep1.jpg");
    let texture = model.materials[0].texture.as_ref().expect(".\\jeep1.jpg is found");
    assert_eq!(texture.path, folder.join("jeep1/jeep1.jpg"));
    assert!(model.stats.warnings.is_empty(), "{:?}", model.stats.warnings);
    assert_eq!(model.meshes.len(), 7);
    assert_eq!(model.skeleton.len(), 1, "one root joint");
    assert_eq!(model.skeleton.joints[0].name, "jeep1");
    assert!(model.clips.is_empty());
}

#[test]
fn wuson_is_static_without_materials_and_has_vertex_extras() {
    let Some(folder) = shared_models() else { return };
    let (file, model) = load_real(&folder, "wuson/Wuson.ms3d");
    assert_eq!((file.vertices.len(), file.triangles.len(), file.groups.len(), file.materials.len()), (2117, 3732, 1, 0));
    let extras = file.vertex_extras.as_ref().expect("the vertex-extra trailer is read");
    assert_eq!((extras.subversion, extras.vertices.len()), (3, 2117));
    assert!(file.joint_extras.is_some() && file.model_extra.is_some() && file.unparsed_tail.is_empty());
    assert_eq!(model.materials.len(), 1, "the default material");
    assert_eq!(model.materials[0].base_color, Vec4::new(0.8, 0.8, 0.8, 1.0));
    assert_eq!(model.skeleton.len(), 1);
    assert!(model.clips.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Broken files
// ---------------------------------------------------------------------------------------------

const BROKEN: &str = "broken.ms3d";

/// Parse, then build the model: what `load` does with bytes.
fn load_bytes(bytes: &[u8], name: &str) -> Result<Model, FormatError> {
    let path = Path::new(name);
    ms3d::parse(bytes, path).and_then(|file| ms3d::to_model(&file, path))
}

#[track_caller]
fn expect_error<T: std::fmt::Debug>(result: Result<T, FormatError>, offset: usize, expected: &str) -> FormatError {
    let error = result.expect_err("a broken file is an error");
    let text = error.to_string();
    assert_eq!(error.location, Location::Byte(offset as u64), "{text}");
    assert!(text.starts_with(&format!("{BROKEN} (byte {offset}): ")), "names the file and the offset: {text}");
    assert!(text.contains(expected), "says what was expected ({expected}): {text}");
    error
}

fn patched(bytes: &[u8], offset: usize, patch: &[u8]) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    bytes[offset..offset + patch.len()].copy_from_slice(patch);
    bytes
}

/// Where `needle` first occurs in the bytes.
fn find(bytes: &[u8], needle: &[u8]) -> usize {
    bytes.windows(needle.len()).position(|window| window == needle).expect("the bytes are there")
}

#[test]
fn header_and_count_errors_name_the_offset() {
    let bytes = ms3d::write(&sample_file());
    expect_error(load_bytes(b"MS3D0", BROKEN), 0, "expected the magic \"MS3D000000\" (10 bytes), found 5 bytes");
    expect_error(
        load_bytes(&patched(&bytes, 0, b"MS3D00000X"), BROKEN),
        0,
        "expected the magic \"MS3D000000\", found \"MS3D00000X\"",
    );
    expect_error(load_bytes(&patched(&bytes, 10, &5i32.to_le_bytes()), BROKEN), 10, "expected format version 3 or 4, found 5");
    expect_error(load_bytes(&bytes[..12], BROKEN), 10, "expected the format version (4 bytes), found 2 bytes");
    // 65,535 vertices promised, a few hundred bytes present: refused before anything is allocated.
    expect_error(
        load_bytes(&patched(&bytes, 14, &[0xff, 0xff]), BROKEN),
        14,
        "expected 65535 vertices (15 bytes each, 983025 bytes)",
    );
    // Cut inside the vertices: the count is what cannot be met.
    expect_error(
        load_bytes(&bytes[..16 + 15 + 7], BROKEN),
        14,
        "expected 4 vertices (15 bytes each, 60 bytes) to follow, found 22 bytes",
    );
    // Cut inside a field whose count was met.
    let fps_offset = find(&bytes, &24.0f32.to_le_bytes());
    expect_error(
        load_bytes(&bytes[..fps_offset + 2], BROKEN),
        fps_offset,
        "expected the animation frame rate (fAnimationFPS) (4 bytes), found 2 bytes",
    );
}

#[test]
fn index_errors_name_the_offset_of_the_bad_index() {
    let path = Path::new(BROKEN);
    // A triangle naming vertex 9 of 4.
    let mut file = sample_file();
    file.triangles[1].vertex_indices[2] = 9;
    let bytes = ms3d::write(&file);
    let error = expect_error(
        ms3d::parse(&bytes, path),
        16 + 4 * 15 + 2 + 70 + 2 + 4,
        "expected vertex index 2 of triangle 1 to be below 4",
    );
    let Location::Byte(offset) = error.location else { unreachable!() };
    assert_eq!(&bytes[offset as usize..offset as usize + 2], &9u16.to_le_bytes(), "the offset is the index's");

    // A group naming triangle 5 of 2.
    let mut file = sample_file();
    file.groups[0].triangle_indices[1] = 5;
    let bytes = ms3d::write(&file);
    let group_start = find(&bytes, b"body") - 1;
    expect_error(ms3d::parse(&bytes, path), group_start + 37, "expected triangle index 1 of group 0 \"body\" to be below 2");

    // A group naming material 3 of 1.
    let mut file = sample_file();
    file.groups[0].material_index = 3;
    expect_error(
        ms3d::parse(&ms3d::write(&file), path),
        group_start + 39,
        "expected the material of group 0 \"body\" to be -1 (none) or below 1",
    );

    // A vertex naming joint 7 of 2.
    let mut file = sample_file();
    file.vertices[2].bone_id = 7;
    expect_error(
        ms3d::parse(&ms3d::write(&file), path),
        16 + 2 * 15 + 13,
        "expected the joint of vertex 2 to be -1 (none) or below 2",
    );

    // A vertex extra naming joint -5.
    let mut file = sample_file();
    file.vertex_extras.as_mut().expect("present").vertices[3].bone_ids[1] = -5;
    let bytes = ms3d::write(&file);
    let extras_start = bytes.len() - 4 * 10 - (4 + 2 * 12) - (4 + 12);
    expect_error(
        ms3d::parse(&bytes, path),
        extras_start + 3 * 10 + 1,
        "expected extra joint 1 of vertex 3 to be -1 (none) or below 2",
    );
}

#[test]
fn joint_errors_name_the_joint() {
    let path = Path::new(BROKEN);
    let mut file = sample_file();
    file.joints[0].parent_name = FixedText::new("arm");
    let bytes = ms3d::write(&file);
    let error = expect_error(
        ms3d::parse(&bytes, path),
        find(&bytes, b"root") + 32,
        "expected the parents of joint 0 \"root\" to lead to a root, found a cycle",
    );
    assert!(error.message.contains("\"root\" -> child of \"arm\" -> child of \"root\""), "{error}");
    // The same checks guard documents built in code.
    expect_error(ms3d::to_model(&file, path), find(&bytes, b"root") + 32, "found a cycle");
    expect_error(Ms3dAnimation::new(&file, path), find(&bytes, b"root") + 32, "found a cycle");

    let mut file = sample_file();
    file.joints[1].position_keys[2].time = 0.1;
    let bytes = ms3d::write(&file);
    let arm = find(&bytes, b"arm\0") - 1;
    expect_error(ms3d::parse(&bytes, path), arm + 93 + 16 * 5, "expected position key 2 of joint 1 \"arm\" at or after 0.25 s");
}

#[test]
fn a_parent_name_that_names_no_joint_makes_a_root_with_one_warning() {
    // What assimp opens: "none" (or a renamed bone) as a parent name. The joint becomes a root.
    let mut file = sample_file();
    file.materials[0].texture = FixedText::default(); // no texture warning beside the one looked for
    file.joints[1].parent_name = FixedText::new("none");
    let bytes = ms3d::write(&file);
    let model = load_bytes(&bytes, "orphan/model.ms3d").unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.stats.warnings.len(), 1, "{:?}", model.stats.warnings);
    let warning = &model.stats.warnings[0];
    let offset = find(&bytes, b"none\0");
    assert!(warning.starts_with(&format!("byte {offset}: joint 1 \"arm\" names the parent \"none\"")), "{warning}");
    assert!(warning.ends_with("which is no joint's name: made a root"), "{warning}");
    let arm = model.skeleton.joints.iter().position(|joint| joint.name == "arm").expect("arm");
    assert_eq!(model.skeleton.joints[arm].parent, None);
    // Its bind pose is its own transform alone, as for a file that leaves the parent name empty.
    file.joints[1].parent_name = FixedText::new("");
    let root = load_bytes(&ms3d::write(&file), "root/model.ms3d").unwrap_or_else(|error| panic!("{error}"));
    assert!(root.stats.warnings.is_empty(), "{:?}", root.stats.warnings);
    assert_eq!((&model.skeleton, &model.vertices), (&root.skeleton, &root.vertices));
    assert_eq!(model.animations[0].channels, root.animations[0].channels);
    // Two such joints: still one line.
    file.joints[1].parent_name = FixedText::new("none");
    file.joints[0].parent_name = FixedText::new("Scene Root");
    file.joints[1].parent_name = FixedText::new("none");
    let model = load_bytes(&ms3d::write(&file), "orphans.ms3d").unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.stats.warnings.len(), 1, "{:?}", model.stats.warnings);
    assert!(model.stats.warnings[0].ends_with("made a root (1 more like it)"), "{}", model.stats.warnings[0]);
}

#[test]
fn a_file_with_joints_and_no_triangles_opens() {
    // assimp refuses it ("Didn't get any group records"); it is a skeleton with its clip.
    let file =
        Ms3dFile { vertices: Vec::new(), triangles: Vec::new(), groups: Vec::new(), materials: Vec::new(), ..sample_file() };
    let folder = std::env::temp_dir().join(format!("vkskin_ms3d_bones_{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("folder");
    let path = folder.join("bones.ms3d");
    std::fs::write(&path, ms3d::write(&Ms3dFile { vertex_extras: None, ..file })).expect("written");
    let model = vkskin::formats::load_model(&path, &[]).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!((model.vertices.len(), model.meshes.len(), model.skeleton.len()), (0, 0, 2));
    assert_eq!(model.animations.len(), 1);
    std::fs::remove_dir_all(&folder).expect("removed");
}

#[test]
fn float_and_timeline_errors_name_the_offset() {
    let bytes = ms3d::write(&sample_file());
    let nan = f32::NAN.to_le_bytes();
    expect_error(
        load_bytes(&patched(&bytes, 16 + 15 + 1 + 4, &nan), BROKEN),
        16 + 15 + 5,
        "expected a finite number for vertex 1 position y, found NaN",
    );
    let infinity = f32::INFINITY.to_le_bytes();
    let fps_offset = find(&bytes, &24.0f32.to_le_bytes());
    expect_error(
        load_bytes(&patched(&bytes, fps_offset, &infinity), BROKEN),
        fps_offset,
        "expected a finite number for the animation frame rate",
    );
    // A frame rate of 0 parses (a static model never reads it) but cannot time an animation.
    let zero_fps = patched(&bytes, fps_offset, &0.0f32.to_le_bytes());
    assert!(ms3d::parse(&zero_fps, Path::new(BROKEN)).is_ok());
    expect_error(
        load_bytes(&zero_fps, BROKEN),
        fps_offset,
        "expected a positive animation frame rate (fAnimationFPS) for a model with 2 joints, found 0",
    );
    let negative_frames = patched(&bytes, fps_offset + 8, &(-3i32).to_le_bytes());
    expect_error(
        load_bytes(&negative_frames, BROKEN),
        fps_offset + 8,
        "expected a total frame count (iTotalFrames) of 0 or more",
    );
    // Nothing is baked, so any timeline loads: keys are kept as they are, and the culling cells
    // stop at their cap (2^31 frames at 24 fps: 2.8 years).
    let endless = patched(&bytes, fps_offset + 8, &i32::MAX.to_le_bytes());
    let mut model = load_bytes(&endless, BROKEN).expect("a long timeline loads");
    model.compute_bounds();
    assert!(model.clips[0].duration > 8.9e7, "{}", model.clips[0].duration);
    assert_eq!(model.bounds.animations[0].cells.len(), vkskin::anim::bounds::MAX_CELLS);
}

#[test]
fn trailer_errors_name_the_offset() {
    let full = sample_file();
    let bytes = ms3d::write(&full);
    let joints_end =
        ms3d::write(&Ms3dFile { comments: None, vertex_extras: None, joint_extras: None, model_extra: None, ..full.clone() })
            .len();
    expect_error(
        load_bytes(&patched(&bytes, joints_end, &2i32.to_le_bytes()), BROKEN),
        joints_end,
        "expected comment section subversion 1, found 2",
    );
    expect_error(
        load_bytes(&patched(&bytes, joints_end + 4, &[0xff; 4]), BROKEN),
        joints_end + 4,
        "expected 4294967295 group comments (at least 8 bytes each",
    );
    // The first group comment's length.
    expect_error(
        load_bytes(&patched(&bytes, joints_end + 12, &(-1i32).to_le_bytes()), BROKEN),
        joints_end + 12,
        "expected a length of 0 or more for group comment 0, found -1",
    );
    let model_count = find(&bytes, b"made by hand") - 8;
    expect_error(
        load_bytes(&patched(&bytes, model_count, &2i32.to_le_bytes()), BROKEN),
        model_count,
        "expected a model comment count of 0 or 1, found 2",
    );
    let extras = model_count + 8 + 12;
    expect_error(
        load_bytes(&patched(&bytes, extras, &7i32.to_le_bytes()), BROKEN),
        extras,
        "expected vertex extra subversion 1, 2 or 3, found 7",
    );
    // Subversion 3 records are 14 bytes: four of them do not fit in the 40 bytes left.
    let cut = &patched(&bytes, extras, &3i32.to_le_bytes())[..extras + 4 + 40];
    expect_error(
        load_bytes(cut, BROKEN),
        extras,
        "expected 4 vertex extras (one per vertex, subversion 3) (14 bytes each, 56 bytes) to follow, found 40 bytes",
    );
}

#[test]
fn every_truncation_fails_cleanly_except_at_section_ends() {
    let full = sample_file();
    let bytes = ms3d::write(&full);
    let none = Ms3dFile { comments: None, vertex_extras: None, joint_extras: None, model_extra: None, ..full.clone() };
    let with_comments = Ms3dFile { comments: full.comments.clone(), ..none.clone() };
    let with_vertex_extras = Ms3dFile { vertex_extras: full.vertex_extras.clone(), ..with_comments.clone() };
    let with_joint_extras = Ms3dFile { joint_extras: full.joint_extras.clone(), ..with_vertex_extras.clone() };
    let ends: Vec<usize> =
        [&none, &with_comments, &with_vertex_extras, &with_joint_extras, &full].map(|file| ms3d::write(file).len()).to_vec();
    let mut valid = Vec::new();
    for length in 0..bytes.len() + 1 {
        match load_bytes(&bytes[..length], BROKEN) {
            Ok(_) => valid.push(length),
            Err(error) => {
                let text = error.to_string();
                let Location::Byte(offset) = error.location else { panic!("prefix {length}: no byte offset: {text}") };
                assert!(offset as usize <= length, "prefix {length}: offset {offset} is inside what is there: {text}");
                assert!(text.starts_with(&format!("{BROKEN} (byte {offset}): expected ")), "prefix {length}: {text}");
            }
        }
    }
    assert_eq!(valid, ends, "a file may end after the joints and after each trailer section, nowhere else");
}

/// xorshift64*: deterministic, so a failing mutation can be replayed.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn single_byte_mutations_never_panic() {
    let bytes = ms3d::write(&sample_file());
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let (mut loaded, mut refused) = (0, 0);
    for round in 0..4000 {
        let mut mutated = bytes.clone();
        let offset = (random.next() % mutated.len() as u64) as usize;
        let value = match round % 4 {
            0 => 0,
            1 => 0xff,
            2 => mutated[offset] ^ (1 << (random.next() % 8)),
            _ => random.next() as u8,
        };
        mutated[offset] = value;
        match load_bytes(&mutated, "mutated.ms3d") {
            Ok(model) => {
                loaded += 1;
                assert!(model.vertices.iter().all(|vertex| !model.influences_of(vertex).is_empty()), "round {round}");
                assert!(
                    model
                        .animations
                        .iter()
                        .flat_map(|animation| &animation.channels)
                        .all(|channel| channel.joint < model.skeleton.len()),
                    "round {round}"
                );
            }
            Err(error) => {
                refused += 1;
                let text = error.to_string();
                assert!(
                    text.starts_with("mutated.ms3d (byte ") && text.contains("expected"),
                    "round {round} (byte {offset} = {value}): {text}"
                );
            }
        }
    }
    println!("4000 single-byte mutations: {loaded} loaded, {refused} refused cleanly");
}

#[test]
#[ignore = "writes fuzz/seeds/ms3d/; run it after changing the sample documents"]
fn write_fuzz_seeds() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/ms3d");
    std::fs::create_dir_all(&folder).expect("seed folder");
    std::fs::write(folder.join("sample.ms3d"), ms3d::write(&sample_file())).expect("seed written");
    std::fs::write(folder.join("empty.ms3d"), ms3d::write(&empty_file())).expect("seed written");
}
