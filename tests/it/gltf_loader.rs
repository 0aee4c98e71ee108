//! The glTF loader: interpolation and skinning against the spec on files built here, the real
//! sample models in ../shared/models/gltf (skipped, with a message, when absent), and a malformed
//! corpus that must fail with clear errors and never panic.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use glam::{DMat4, DQuat, DVec3, Mat4, Quat, Vec3, Vec4};
use vkskin::anim::{palette, skin_vertex};
use vkskin::formats::gltf::{load, load_from_slice, load_from_slice_with_rig, load_with_rig, Rig};
use vkskin::formats::{FormatError, Location};
use vkskin::model::Model;

// ---------------------------------------------------------------------------------------------
// Building files
// ---------------------------------------------------------------------------------------------

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::new();
    for chunk in bytes.chunks(3) {
        let bits = chunk.iter().enumerate().fold(0u32, |bits, (index, &byte)| bits | u32::from(byte) << (16 - 8 * index));
        for position in 0..4 {
            if position <= chunk.len() {
                text.push(char::from(ALPHABET[(bits >> (18 - 6 * position) & 63) as usize]));
            } else {
                text.push('=');
            }
        }
    }
    text
}

/// A GLB from its JSON and binary chunk, padded as the spec says.
fn glb_bytes(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
    let mut json = json.to_vec();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    let mut bin = bin.map(<[u8]>::to_vec);
    if let Some(bin) = &mut bin {
        while bin.len() % 4 != 0 {
            bin.push(0);
        }
    }
    let length = 12 + 8 + json.len() + bin.as_ref().map_or(0, |bin| 8 + bin.len());
    let mut glb = b"glTF".to_vec();
    glb.extend(2u32.to_le_bytes());
    glb.extend((length as u32).to_le_bytes());
    glb.extend((json.len() as u32).to_le_bytes());
    glb.extend(b"JSON");
    glb.extend(&json);
    if let Some(bin) = bin {
        glb.extend((bin.len() as u32).to_le_bytes());
        glb.extend(b"BIN\0");
        glb.extend(&bin);
    }
    glb
}

/// A glTF under construction: one buffer, one bufferView per accessor.
#[derive(Default)]
struct Asset {
    bin: Vec<u8>,
    views: Vec<String>,
    accessors: Vec<String>,
}

impl Asset {
    fn view(&mut self, bytes: &[u8], stride: Option<usize>) -> usize {
        while self.bin.len() % 4 != 0 {
            self.bin.push(0);
        }
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        let stride = stride.map(|stride| format!(r#","byteStride":{stride}"#)).unwrap_or_default();
        self.views.push(format!(r#"{{"buffer":0,"byteOffset":{offset},"byteLength":{}{stride}}}"#, bytes.len()));
        self.views.len() - 1
    }

    fn accessor(&mut self, view: usize, component_type: u32, count: usize, kind: &str) -> usize {
        self.accessors
            .push(format!(r#"{{"bufferView":{view},"componentType":{component_type},"count":{count},"type":"{kind}"}}"#));
        self.accessors.len() - 1
    }

    fn floats(&mut self, values: &[f32], kind: &str) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|value| value.to_le_bytes()).collect();
        let view = self.view(&bytes, None);
        self.accessor(view, 5126, values.len() / width(kind), kind)
    }

    fn u16s(&mut self, values: &[u16], kind: &str) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|value| value.to_le_bytes()).collect();
        let view = self.view(&bytes, None);
        self.accessor(view, 5123, values.len() / width(kind), kind)
    }

    fn u8s(&mut self, values: &[u8], kind: &str) -> usize {
        let view = self.view(values, None);
        self.accessor(view, 5121, values.len() / width(kind), kind)
    }

    fn members(&self) -> String {
        format!(r#""bufferViews":[{}],"accessors":[{}]"#, self.views.join(","), self.accessors.join(","))
    }

    /// .gltf JSON with the buffer as a base64 data URI; `body` holds the other top-level members.
    fn gltf(&self, body: &str) -> String {
        format!(
            "{{\"asset\":{{\"version\":\"2.0\"}},\n\"buffers\":[{{\"byteLength\":{},\"uri\":\"data:application/octet-stream;base64,{}\"}}],\n{},\n{body}}}",
            self.bin.len(),
            base64(&self.bin),
            self.members()
        )
    }

    /// A GLB whose buffer is its BIN chunk.
    fn glb(&self, body: &str) -> Vec<u8> {
        let json = format!(
            "{{\"asset\":{{\"version\":\"2.0\"}},\n\"buffers\":[{{\"byteLength\":{}}}],\n{},\n{body}}}",
            self.bin.len(),
            self.members()
        );
        glb_bytes(json.as_bytes(), Some(&self.bin))
    }
}

fn width(kind: &str) -> usize {
    match kind {
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" => 4,
        "MAT4" => 16,
        _ => 1,
    }
}

fn flat(values: &[Vec4], components: usize) -> Vec<f32> {
    values.iter().flat_map(|value| value.to_array().into_iter().take(components)).collect()
}

/// One triangle, and its POSITION and index accessors.
fn triangle(asset: &mut Asset) -> (usize, usize) {
    let positions = asset.floats(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    let indices = asset.u16s(&[0, 1, 2], "SCALAR");
    (positions, indices)
}

fn assert_close(found: Vec3, expected: DVec3, tolerance: f64, what: &str) {
    let error = (found.as_dvec3() - expected).length();
    assert!(error <= tolerance, "{what}: found {found:?}, expected {expected:?} (error {error:e} > {tolerance:e})");
}

// ---------------------------------------------------------------------------------------------
// Interpolation against the spec
// ---------------------------------------------------------------------------------------------

/// A channel as the test writes it: key times and values (three per key for CUBICSPLINE).
#[derive(Clone)]
struct ChannelSpec {
    path: &'static str,
    interpolation: &'static str,
    times: Vec<f32>,
    values: Vec<Vec4>,
}

fn rotation(axis: Vec3, angle: f32) -> Vec4 {
    Vec4::from(Quat::from_axis_angle(axis.normalize(), angle))
}

/// The spec's sampler, written independently in f64: clamp, STEP, LINEAR (slerp for rotations),
/// CUBICSPLINE's Hermite form; rotations normalized.
fn spec_sample(channel: &ChannelSpec, time: f64) -> [f64; 4] {
    let cubic = channel.interpolation == "CUBICSPLINE";
    let times: Vec<f64> = channel.times.iter().map(|&time| f64::from(time)).collect();
    let entry = |slot: usize| -> [f64; 4] { channel.values[slot].to_array().map(f64::from) };
    let value = |key: usize| if cubic { entry(3 * key + 1) } else { entry(key) };
    let rotation = channel.path == "rotation";
    let normalize = |v: [f64; 4]| {
        if !rotation {
            return v;
        }
        let length = v.iter().map(|c| c * c).sum::<f64>().sqrt();
        v.map(|c| c / length)
    };
    let last = times.len() - 1;
    if time <= times[0] {
        return normalize(value(0));
    }
    if time >= times[last] {
        return normalize(value(last));
    }
    let key = (0..last).rfind(|&key| times[key] <= time).unwrap_or(0);
    let span = times[key + 1] - times[key];
    let s = (time - times[key]) / span;
    let (a, b) = (value(key), value(key + 1));
    let result = match channel.interpolation {
        "STEP" => a,
        "LINEAR" if rotation => {
            let mut dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let b = if dot < 0.0 {
                dot = -dot;
                b.map(|c| -c)
            } else {
                b
            };
            let theta = dot.min(1.0).acos();
            let (wa, wb) = if theta < 1e-9 {
                (1.0 - s, s)
            } else {
                (((1.0 - s) * theta).sin() / theta.sin(), (s * theta).sin() / theta.sin())
            };
            std::array::from_fn(|i| wa * a[i] + wb * b[i])
        }
        "LINEAR" => std::array::from_fn(|i| a[i] + (b[i] - a[i]) * s),
        _ => {
            let out_tangent = entry(3 * key + 2);
            let in_tangent = entry(3 * (key + 1));
            let (s2, s3) = (s * s, s * s * s);
            std::array::from_fn(|i| {
                (2.0 * s3 - 3.0 * s2 + 1.0) * a[i]
                    + (s3 - 2.0 * s2 + s) * span * out_tangent[i]
                    + (-2.0 * s3 + 3.0 * s2) * b[i]
                    + (s3 - s2) * span * in_tangent[i]
            })
        }
    };
    normalize(result)
}

/// Three animations of one node; together they put every interpolation on every path, each
/// channel with its own key times, all starting after 0 and all on 1/60 s frame boundaries.
fn interpolation_animations() -> Vec<(&'static str, Vec<ChannelSpec>)> {
    let t = |values: [[f32; 3]; 3]| values.iter().map(|&[x, y, z]| Vec4::new(x, y, z, 0.0)).collect::<Vec<_>>();
    let translations = t([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0], [0.25, -2.0, 1.0]]);
    let scales = t([[1.0, 1.5, 0.5], [2.0, 1.0, 1.0], [0.75, 0.75, 1.25]]);
    let rotations = vec![
        rotation(Vec3::new(0.0, 1.0, 0.0), 0.3),
        rotation(Vec3::new(1.0, 1.0, 0.0), 1.4),
        rotation(Vec3::new(0.2, -1.0, 0.5), -2.5),
    ];
    // Cubic keys: in-tangent, value, out-tangent.
    let cubic = |values: &[Vec4]| -> Vec<Vec4> {
        values
            .iter()
            .enumerate()
            .flat_map(|(key, &value)| {
                let tangent = Vec4::new(0.5 - key as f32, 1.0, -0.75, 0.25 * key as f32);
                [tangent * 1.5, value, -tangent]
            })
            .collect()
    };
    let channel = |path, interpolation, times: &[f32], values: Vec<Vec4>| ChannelSpec {
        path,
        interpolation,
        times: times.to_vec(),
        values,
    };
    vec![
        (
            "step_t_linear_r_cubic_s",
            vec![
                channel("translation", "STEP", &[0.25, 0.5, 1.0], translations.clone()),
                channel("rotation", "LINEAR", &[0.5, 1.0, 1.5], rotations.clone()),
                channel("scale", "CUBICSPLINE", &[0.25, 1.0, 2.0], cubic(&scales)),
            ],
        ),
        (
            "linear_t_cubic_r_step_s",
            vec![
                channel("translation", "LINEAR", &[0.5, 0.75, 2.0], translations.clone()),
                channel("rotation", "CUBICSPLINE", &[0.25, 0.75, 1.5], cubic(&rotations)),
                channel("scale", "STEP", &[1.0, 1.25, 1.5], scales.clone()),
            ],
        ),
        (
            "cubic_t_step_r_linear_s",
            vec![
                channel("translation", "CUBICSPLINE", &[0.75, 1.0, 1.5], cubic(&translations)),
                channel("rotation", "STEP", &[0.25, 0.5, 2.0], rotations),
                channel("scale", "LINEAR", &[0.5, 1.5, 1.75], scales),
            ],
        ),
    ]
}

/// The interpolation test file: its data, and its JSON members other than the data's.
fn interpolation_file(animations: &[(&str, Vec<ChannelSpec>)]) -> (Asset, String) {
    let mut asset = Asset::default();
    let (positions, indices) = triangle(&mut asset);
    let mut json_animations = Vec::new();
    for (name, channels) in animations {
        let mut samplers = Vec::new();
        let mut json_channels = Vec::new();
        for (index, channel) in channels.iter().enumerate() {
            let input = asset.floats(&channel.times, "SCALAR");
            let (components, kind) = if channel.path == "rotation" { (4, "VEC4") } else { (3, "VEC3") };
            let output = asset.floats(&flat(&channel.values, components), kind);
            samplers.push(format!(r#"{{"input":{input},"output":{output},"interpolation":"{}"}}"#, channel.interpolation));
            json_channels.push(format!(r#"{{"sampler":{index},"target":{{"node":0,"path":"{}"}}}}"#, channel.path));
        }
        json_animations.push(format!(
            r#"{{"name":"{name}","samplers":[{}],"channels":[{}]}}"#,
            samplers.join(","),
            json_channels.join(",")
        ));
    }
    let body = format!(
        r#""nodes":[{{"name":"animated","mesh":0,"translation":[5,5,5]}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":{positions}}},"indices":{indices}}}]}}],
"animations":[{}]"#,
        json_animations.join(",\n")
    );
    (asset, body)
}

fn expected_pose(channels: &[ChannelSpec], time: f64) -> (DVec3, DQuat, DVec3) {
    let mut translation = DVec3::new(5.0, 5.0, 5.0);
    let mut rotation = DQuat::IDENTITY;
    let mut scale = DVec3::ONE;
    for channel in channels {
        let [x, y, z, w] = spec_sample(channel, time);
        match channel.path {
            "translation" => translation = DVec3::new(x, y, z),
            "rotation" => rotation = DQuat::from_xyzw(x, y, z, w),
            _ => scale = DVec3::new(x, y, z),
        }
    }
    (translation, rotation, scale)
}

/// The times worth checking: every key, every midpoint between keys, before the first key, and the end.
fn check_times(channels: &[ChannelSpec]) -> Vec<f32> {
    let mut times = vec![0.0f32, 0.125];
    for channel in channels {
        times.extend(&channel.times);
        times.extend(channel.times.windows(2).map(|pair| (pair[0] + pair[1]) * 0.5));
    }
    times.sort_by(f32::total_cmp);
    times.dedup();
    times
}

fn quat_distance(found: Quat, expected: DQuat) -> f64 {
    let found = found.as_dquat();
    (found - expected).length().min((found + expected).length())
}

#[test]
fn interpolation_matches_the_spec_directly_and_in_the_model() {
    let animations = interpolation_animations();
    let (asset, body) = interpolation_file(&animations);
    for (container, bytes) in [("gltf", asset.gltf(&body).into_bytes()), ("glb", asset.glb(&body))] {
        let path = PathBuf::from(format!("interpolation.{container}"));
        let (model, rig) = load_from_slice_with_rig(&bytes, &path, None).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(model.clips.len(), 3);
        assert_eq!(model.skeleton.len(), 1, "one rigid node, one joint");
        let mut worst = 0.0f64;
        for (index, (name, channels)) in animations.iter().enumerate() {
            let clip = &model.clips[index];
            assert_eq!(clip.name, *name);
            assert!((clip.duration - 2.0).abs() < 1e-6, "duration is the last key time over all channels");
            for time in check_times(channels) {
                let (translation, rotation, scale) = expected_pose(channels, f64::from(time));
                let what = format!("{container} {name} at {time} s");
                // Direct evaluation: the node's local transform, and the joint's model-space pose.
                let local = rig.local_transform(index, 0, time);
                assert_close(local.translation, translation, 1e-5, &format!("{what}: translation"));
                assert_close(local.scale, scale, 1e-5, &format!("{what}: scale"));
                assert!(
                    quat_distance(local.rotation, rotation) < 1e-5,
                    "{what}: rotation {:?}, expected {rotation:?}",
                    local.rotation
                );
                let mut evaluated = [Mat4::IDENTITY];
                rig.evaluate(index, time, &mut evaluated);
                // The model's channels (what the GPU samples), against the spec's formulas: no bake
                // error any more, at keys and between them alike.
                let sampled = model.joint_matrices(index, time)[0];
                let expected = DMat4::from_scale_rotation_translation(scale, rotation, translation);
                for probe in [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z] {
                    let expected = expected.transform_point3(probe.as_dvec3());
                    assert_close(evaluated[0].transform_point3(probe), expected, 1e-5, &format!("{what}: evaluated"));
                    let found = sampled.transform_point3(probe);
                    assert_close(found, expected, 2e-5, &format!("{what}: the model's channels"));
                    worst = worst.max((found.as_dvec3() - expected).length());
                }
            }
        }
        println!("{container}: the model's channels are at most {worst:e} off the spec at keys and midpoints");
        // The rigid node's vertices were moved by its rest transform, and its clip moves them from there.
        let rest = Mat4::from_translation(Vec3::splat(5.0));
        assert_eq!(model.vertices[1].position, rest.transform_point3(Vec3::X));
    }
}

// ---------------------------------------------------------------------------------------------
// Skins and hierarchy
// ---------------------------------------------------------------------------------------------

const KNEE_REST_ANGLE: f32 = 0.5;
const KNEE_BENT_ANGLE: f32 = 1.5;

/// The spec allows one channel a target in an animation; of several, the last is kept (and only
/// it is read), with one warning.
#[test]
fn of_channels_repeating_a_target_the_last_is_kept_with_one_warning() {
    let animations = interpolation_animations();
    let (name, channels) = &animations[0];
    // Each channel three times; the first two copies turn and move the node elsewhere.
    let mut repeated = Vec::new();
    for copy in 0..3 {
        for channel in channels {
            let mut channel = channel.clone();
            if copy < 2 {
                channel.values = channel.values.iter().map(|value| Vec4::new(value.z, value.y, value.x, value.w) * 3.0).collect();
            }
            repeated.push(channel);
        }
    }
    let load = |animations: &[(&str, Vec<ChannelSpec>)]| {
        let (asset, body) = interpolation_file(animations);
        load_from_slice_with_rig(asset.gltf(&body).as_bytes(), &PathBuf::from("repeated.gltf"), None)
            .unwrap_or_else(|error| panic!("{error}"))
    };
    let (plain, plain_rig) = load(&[(name, channels.clone())]);
    let (model, rig) = load(&[(name, repeated)]);
    assert_eq!(model.animations[0].channels.len(), plain.animations[0].channels.len());
    let warnings: Vec<&String> = model.stats.warnings.iter().filter(|warning| warning.contains("a later channel")).collect();
    assert_eq!(warnings.len(), 1, "{:?}", model.stats.warnings);
    assert!(warnings[0].contains(&format!("{} channels", 2 * channels.len())), "{}", warnings[0]);
    for time in check_times(channels) {
        let (found, expected) = (rig.local_transform(0, 0, time), plain_rig.local_transform(0, 0, time));
        assert_eq!(found, expected, "at {time} s");
    }
}

fn root_matrix() -> DMat4 {
    DMat4::from_scale_rotation_translation(
        DVec3::splat(2.0),
        DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2),
        DVec3::new(0.0, 1.0, 0.0),
    )
}

fn hip_matrix() -> DMat4 {
    DMat4::from_translation(DVec3::new(0.5, 0.0, 0.0)) * DMat4::from_rotation_y(std::f64::consts::FRAC_PI_2)
}

fn knee_matrix(angle: f32) -> DMat4 {
    DMat4::from_scale_rotation_translation(
        DVec3::new(1.0, 2.0, 1.0),
        DQuat::from_rotation_x(f64::from(angle)),
        DVec3::new(0.0, 1.0, 0.0),
    )
}

const SKINNED_POSITIONS: [[f32; 3]; 4] = [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 1.5, 0.0], [1.0, 0.0, 0.5]];
const RIGID_POSITIONS: [[f32; 3]; 3] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];

/// A turn an exporter might fold into every inverse bind matrix (Z-up to Y-up).
fn bind_shape() -> DMat4 {
    DMat4::from_rotation_x(-std::f64::consts::FRAC_PI_2)
}

/// The test skin's inverse bind matrices when it has them: the inverse rest pose, with the bind
/// shape folded in (rounded to f32, as the file stores them).
fn skin_inverse_binds() -> [DMat4; 2] {
    let hip = root_matrix() * hip_matrix();
    let knee = hip * knee_matrix(KNEE_REST_ANGLE);
    [hip, knee].map(|rest| (rest.inverse() * bind_shape()).as_mat4().as_dmat4())
}

/// Root (a non-joint with a transform) > hip (a joint given by a matrix) > knee (a joint, TRS),
/// a skinned mesh node whose own transform must be ignored, a static rigid "prop" and a rigid
/// "spinner" under the knee. `joints_json` orders the skin's joints; without `inverse_binds` the
/// skin has no inverseBindMatrices, with them it has [`skin_inverse_binds`] in that order.
/// One animation bends the knee.
fn skin_file(joints_json: &str, inverse_binds: Option<[DMat4; 2]>) -> (Asset, String) {
    let mut asset = Asset::default();
    let inverse_binds = inverse_binds.map(|matrices| {
        let values: Vec<f32> = matrices.iter().flat_map(|matrix| matrix.as_mat4().to_cols_array()).collect();
        format!(r#","inverseBindMatrices":{}"#, asset.floats(&values, "MAT4"))
    });
    let inverse_binds = inverse_binds.unwrap_or_default();
    let positions = asset.floats(&SKINNED_POSITIONS.concat(), "VEC3");
    let joints = asset.u8s(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0], "VEC4");
    let weights = asset.floats(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.25, 0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], "VEC4");
    let indices = asset.u16s(&[0, 1, 2, 0, 2, 3], "SCALAR");
    let rigid_positions = asset.floats(&RIGID_POSITIONS.concat(), "VEC3");
    let rigid_normals = asset.floats(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0], "VEC3");
    let times = asset.floats(&[0.0, 1.0], "SCALAR");
    let bend = asset.floats(&flat(&[rotation(Vec3::X, KNEE_REST_ANGLE), rotation(Vec3::X, KNEE_BENT_ANGLE)], 4), "VEC4");
    let hip: Vec<String> = hip_matrix().to_cols_array().iter().map(|value| format!("{}", *value as f32)).collect();
    let (half_sin, half_cos) = ((KNEE_REST_ANGLE * 0.5).sin(), (KNEE_REST_ANGLE * 0.5).cos());
    let body = format!(
        r#""scene":0,"scenes":[{{"nodes":[0]}}],
"nodes":[
  {{"name":"root","children":[1,3,4],"translation":[0,1,0],"rotation":[0,0,0.70710677,0.70710677],"scale":[2,2,2]}},
  {{"name":"hip","children":[2],"matrix":[{}]}},
  {{"name":"knee","children":[5],"translation":[0,1,0],"rotation":[{half_sin},0,0,{half_cos}],"scale":[1,2,1]}},
  {{"name":"skinned","mesh":0,"skin":0,"translation":[10,0,0],"scale":[3,3,3]}},
  {{"name":"prop","mesh":1,"translation":[0,0,3]}},
  {{"name":"spinner","mesh":1,"translation":[0,0.5,0]}}
],
"skins":[{{"joints":{joints_json}{inverse_binds}}}],
"meshes":[
  {{"name":"body","primitives":[{{"attributes":{{"POSITION":{positions},"JOINTS_0":{joints},"WEIGHTS_0":{weights}}},"indices":{indices}}}]}},
  {{"name":"plate","primitives":[{{"attributes":{{"POSITION":{rigid_positions},"NORMAL":{rigid_normals}}}}}]}}
],
"animations":[{{"name":"bend","samplers":[{{"input":{times},"output":{bend}}}],"channels":[{{"sampler":0,"target":{{"node":2,"path":"rotation"}}}}]}}]"#,
        hip.join(",")
    );
    (asset, body)
}

/// Skins every vertex with the given model-space joint matrices.
fn skinned_positions(model: &Model, poses: &[Mat4]) -> Vec<Vec3> {
    let mut matrices = vec![Mat4::IDENTITY; model.skeleton.len()];
    palette(&model.skeleton, poses, &mut matrices);
    model
        .vertices
        .iter()
        .map(|vertex| skin_vertex(&matrices, vertex.position, vertex.normal, Vec3::X, model.influences_of(vertex)).position)
        .collect()
}

/// Where the spec puts the test file's vertices with the knee at `knee_angle`: skinned ones at
/// Σ w · global(joint) · IBM · v, ignoring their node; rigid ones at global(node) · v.
fn spec_positions(knee_angle: f32, inverse_binds: Option<[DMat4; 2]>) -> Vec<DVec3> {
    let [hip_inverse_bind, knee_inverse_bind] = inverse_binds.unwrap_or([DMat4::IDENTITY; 2]);
    let hip_global = root_matrix() * hip_matrix();
    let knee_global = hip_global * knee_matrix(knee_angle);
    let (hip, knee) = (hip_global * hip_inverse_bind, knee_global * knee_inverse_bind);
    let skinned = |index: usize, weights: &[(DMat4, f64)]| {
        let v = Vec3::from_array(SKINNED_POSITIONS[index]).as_dvec3();
        weights.iter().map(|(matrix, weight)| matrix.transform_point3(v) * *weight).sum::<DVec3>()
    };
    let mut positions = vec![
        skinned(0, &[(hip, 1.0)]),
        skinned(1, &[(knee, 1.0)]),
        skinned(2, &[(knee, 0.25), (hip, 0.75)]),
        // No positive weight: the first joint of the skin (knee, listed first).
        skinned(3, &[(knee, 1.0)]),
    ];
    let prop = root_matrix() * DMat4::from_translation(DVec3::new(0.0, 0.0, 3.0));
    let spinner = knee_global * DMat4::from_translation(DVec3::new(0.0, 0.5, 0.0));
    for node in [prop, spinner] {
        positions.extend(RIGID_POSITIONS.iter().map(|&p| node.transform_point3(Vec3::from_array(p).as_dvec3())));
    }
    positions
}

#[test]
fn skins_follow_the_spec_in_bind_pose_and_when_animated() {
    let (asset, body) = skin_file("[2,1]", None);
    let (mut model, rig) =
        load_from_slice_with_rig(&asset.glb(&body), Path::new("skin.glb"), None).unwrap_or_else(|error| panic!("{error}"));
    model.compute_bounds();
    assert!(
        model.stats.warnings.iter().any(|warning| warning.contains("do not match its rest pose")),
        "{:?}",
        model.stats.warnings
    );

    let names: Vec<&str> = model.skeleton.joints.iter().map(|joint| joint.name.as_str()).collect();
    assert_eq!(names, ["hip", "knee", "prop", "spinner"], "skin joints parents first, then one joint per rigid mesh node");
    let parents: Vec<Option<usize>> = model.skeleton.joints.iter().map(|joint| joint.parent).collect();
    // The spinner's node hangs below the animated knee: its joint hangs from the knee's joint, so
    // the bend reaches it (the nodes between go into its fixed `pre`).
    assert_eq!(parents, [None, Some(0), None, Some(1)]);
    assert_eq!(model.skeleton.joints[0].inverse_bind, Mat4::IDENTITY, "no inverseBindMatrices: identity");
    assert_eq!(rig.joint_nodes(), [1, 2, 4, 5]);
    assert_eq!(model.vertices.len(), 4 + 3 + 3);
    assert_eq!(model.meshes.len(), 3, "one mesh per primitive per mesh node");
    assert!(
        model.stats.warnings.iter().any(|warning| warning.contains("1 vertices have no positive weight")),
        "{:?}",
        model.stats.warnings
    );
    assert_eq!(model.stats.max_influences, 2);
    let influences = model.influences_of(&model.vertices[2]);
    assert_eq!(influences.len(), 2);
    assert_eq!((influences[0].joint, influences[0].weight), (0, 0.75), "heaviest first, skin joint 1 (hip) is skeleton joint 0");

    // Bind pose: the rest pose through the palette puts every vertex where the spec says.
    let mut rest = vec![Mat4::IDENTITY; model.skeleton.len()];
    rig.rest_pose(&mut rest);
    let expected = spec_positions(KNEE_REST_ANGLE, None);
    for (index, (found, expected)) in skinned_positions(&model, &rest).iter().zip(&expected).enumerate() {
        assert_close(*found, *expected, 1e-5, &format!("rest vertex {index}"));
    }
    // Without inverse binds the skinned vertices are used as they are.
    for (index, position) in SKINNED_POSITIONS.iter().enumerate() {
        assert_eq!(model.vertices[index].position, Vec3::from_array(*position));
    }
    // Rigid meshes are stored where they rest, so the bind palette (identity) shows them right too.
    for (index, (vertex, expected)) in model.vertices.iter().zip(&expected).enumerate().skip(4) {
        assert_close(vertex.position, *expected, 1e-5, &format!("stored rigid vertex {index}"));
    }

    // Animated: halfway through the bend, the knee is at the mid angle; the prop stays put.
    let poses = model.joint_matrices(0, 0.5);
    let expected = spec_positions((KNEE_REST_ANGLE + KNEE_BENT_ANGLE) * 0.5, None);
    for (index, (found, expected)) in skinned_positions(&model, &poses).iter().zip(&expected).enumerate() {
        assert_close(*found, *expected, 1e-5, &format!("vertex {index} at 0.5 s"));
    }
    assert!(model.bounds.animations[0].cells.iter().all(|cell| !cell.is_empty()), "culling cells computed");
}

#[test]
fn a_bind_shape_in_the_inverse_binds_is_moved_into_the_vertices() {
    let inverse_binds = skin_inverse_binds();
    // The skin lists knee first, so its matrices go in that order.
    let (asset, body) = skin_file("[2,1]", Some([inverse_binds[1], inverse_binds[0]]));
    let (model, rig) =
        load_from_slice_with_rig(&asset.glb(&body), Path::new("shape.glb"), None).unwrap_or_else(|error| panic!("{error}"));
    assert!(!model.stats.warnings.iter().any(|warning| warning.contains("rest pose")), "{:?}", model.stats.warnings);
    // Stored vertices are the rest pose, so the bind palette (identity) shows it ...
    let expected = spec_positions(KNEE_REST_ANGLE, Some(inverse_binds));
    for index in 0..4 {
        assert_close(model.vertices[index].position, expected[index], 1e-5, &format!("stored vertex {index}"));
        let turned = bind_shape().transform_point3(Vec3::from_array(SKINNED_POSITIONS[index]).as_dvec3());
        assert_close(model.vertices[index].position, turned, 1e-5, &format!("vertex {index} turned by the bind shape"));
    }
    let mut rest = vec![Mat4::IDENTITY; model.skeleton.len()];
    rig.rest_pose(&mut rest);
    for (joint, pose) in model.skeleton.joints.iter().zip(&rest) {
        assert!((*pose * joint.inverse_bind).abs_diff_eq(Mat4::IDENTITY, 1e-5), "{}: rest palette is the identity", joint.name);
    }
    // ... and every pose skins them exactly where the file's own matrices would.
    let mut poses = vec![Mat4::IDENTITY; model.skeleton.len()];
    let angle = KNEE_REST_ANGLE + (KNEE_BENT_ANGLE - KNEE_REST_ANGLE) * 0.75;
    rig.evaluate(0, 0.75, &mut poses);
    // The model's own channels agree with the rig.
    for (found, expected) in model.joint_matrices(0, 0.75).iter().zip(&poses) {
        assert!(found.abs_diff_eq(*expected, 1e-5), "{found} vs {expected}");
    }
    let expected = spec_positions(angle, Some(inverse_binds));
    for (index, (found, expected)) in skinned_positions(&model, &poses).iter().zip(&expected).enumerate() {
        assert_close(*found, *expected, 1e-5, &format!("vertex {index} at 0.75 s"));
    }
}

#[test]
fn skin_joints_in_any_order_give_the_same_skeleton() {
    let (asset, body) = skin_file("[1,2]", None);
    let model = load_from_slice(&asset.gltf(&body).into_bytes(), Path::new("skin.gltf"), None).expect("loads");
    let names: Vec<&str> = model.skeleton.joints.iter().map(|joint| joint.name.as_str()).collect();
    assert_eq!(names, ["hip", "knee", "prop", "spinner"]);
    // JOINTS_0 indexes skin.joints, which is now [hip, knee]: vertex 0 names skin joint 1 = knee.
    assert_eq!(model.influences_of(&model.vertices[0])[0].joint, 1);
}

#[test]
fn a_node_in_two_skins_is_two_joints_with_their_own_inverse_binds() {
    let mut asset = Asset::default();
    let (positions, indices) = triangle(&mut asset);
    let joints = asset.u8s(&[0; 12], "VEC4");
    let weights = asset.floats(&[1.0, 0.0, 0.0, 0.0].repeat(3), "VEC4");
    let first = Mat4::from_translation(Vec3::X).to_cols_array();
    let second = Mat4::from_translation(Vec3::Y).to_cols_array();
    let ibm_a = asset.floats(&first, "MAT4");
    let ibm_b = asset.floats(&second, "MAT4");
    let body = format!(
        r#""nodes":[{{"name":"bone"}},{{"mesh":0,"skin":0}},{{"mesh":0,"skin":1}}],
"skins":[{{"joints":[0],"inverseBindMatrices":{ibm_a}}},{{"joints":[0],"inverseBindMatrices":{ibm_b}}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":{positions},"JOINTS_0":{joints},"WEIGHTS_0":{weights}}},"indices":{indices}}}]}}]"#
    );
    let model = load_from_slice(&asset.glb(&body), Path::new("two_skins.glb"), None).expect("loads");
    assert_eq!(model.skeleton.len(), 2);
    assert_eq!(model.influences_of(&model.vertices[3])[0].joint, 1, "the second instance uses the second skin's joint");
    // The bone rests at the origin, so each skin's inverse bind is its whole rest transform:
    // each instance's vertices are stored moved by its own skin's matrix.
    assert_eq!(model.vertices[1].position, Vec3::X + Vec3::X);
    assert_eq!(model.vertices[4].position, Vec3::X + Vec3::Y);
    assert!(model.skeleton.joints.iter().all(|joint| joint.inverse_bind.abs_diff_eq(Mat4::IDENTITY, 1e-6)));
}

#[test]
fn eight_interleaved_influences_sparse_positions_and_a_single_key() {
    let mut asset = Asset::default();
    // Per vertex, interleaved: JOINTS_0 (4 × u16), WEIGHTS_0 (4 × normalized u8), JOINTS_1, WEIGHTS_1.
    let vertex = |joints: [u16; 8], weights: [u8; 8]| -> Vec<u8> {
        let mut bytes = Vec::new();
        for set in 0..2 {
            bytes.extend(joints[set * 4..][..4].iter().flat_map(|joint| joint.to_le_bytes()));
            bytes.extend(&weights[set * 4..][..4]);
        }
        bytes
    };
    let interleaved = [
        vertex([0, 1, 2, 3, 4, 5, 6, 7], [32; 8]),
        vertex([7, 0, 0, 0, 0, 0, 0, 0], [255, 0, 0, 0, 0, 0, 0, 0]),
        vertex([2, 3, 2, 0, 0, 0, 0, 0], [100, 50, 100, 0, 0, 0, 0, 0]),
    ]
    .concat();
    let view = asset.view(&interleaved, Some(24));
    let mut set = |offset: usize, component_type: u32, normalized: bool| {
        let normalized = if normalized { r#","normalized":true"# } else { "" };
        asset.accessors.push(format!(
            r#"{{"bufferView":{view},"byteOffset":{offset},"componentType":{component_type},"count":3,"type":"VEC4"{normalized}}}"#
        ));
        asset.accessors.len() - 1
    };
    let (joints_0, weights_0, joints_1, weights_1) =
        (set(0, 5123, false), set(8, 5121, true), set(12, 5123, false), set(20, 5121, true));
    let positions = asset.floats(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 9.0, 9.0, 9.0], "VEC3");
    // Sparse: vertex 2's position is replaced by (0, 1, 0).
    let sparse_indices = asset.view(&[2, 0, 0, 0], None);
    let sparse_values = asset.view(&[0.0f32, 1.0, 0.0].iter().flat_map(|value| value.to_le_bytes()).collect::<Vec<u8>>(), None);
    asset.accessors[positions] = asset.accessors[positions].replace(
        r#""type":"VEC3""#,
        &format!(
            r#""type":"VEC3","sparse":{{"count":1,"indices":{{"bufferView":{sparse_indices},"componentType":5121}},"values":{{"bufferView":{sparse_values}}}}}"#
        ),
    );
    let indices = asset.u8s(&[0, 1, 2], "SCALAR");
    let time = asset.floats(&[0.0], "SCALAR");
    let translation = asset.floats(&[0.0, 2.0, 0.0], "VEC3");
    let bones: Vec<String> = (0..8).map(|index| format!(r#"{{"name":"bone{index}","translation":[{index},0,0]}}"#)).collect();
    let inverse_binds: Vec<f32> =
        (0..8).flat_map(|index| Mat4::from_translation(Vec3::new(-(index as f32), 0.0, 0.0)).to_cols_array()).collect();
    let inverse_binds = asset.floats(&inverse_binds, "MAT4");
    let body = format!(
        r#""nodes":[{},{{"mesh":0,"skin":0}}],
"skins":[{{"joints":[0,1,2,3,4,5,6,7],"inverseBindMatrices":{inverse_binds}}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":{positions},"JOINTS_0":{joints_0},"WEIGHTS_0":{weights_0},"JOINTS_1":{joints_1},"WEIGHTS_1":{weights_1}}},"indices":{indices}}}]}}],
"animations":[{{"samplers":[{{"input":{time},"output":{translation},"interpolation":"STEP"}}],"channels":[{{"sampler":0,"target":{{"node":7,"path":"translation"}}}}]}}]"#,
        bones.join(",")
    );
    let model =
        load_from_slice(&asset.gltf(&body).into_bytes(), Path::new("eight.gltf"), None).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.stats.max_influences, 8);
    let even = model.influences_of(&model.vertices[0]);
    assert_eq!(even.len(), 8);
    assert!(even.iter().all(|influence| (influence.weight - 0.125).abs() < 1e-6));
    assert_eq!(model.influences_of(&model.vertices[1]), [vkskin::anim::Influence { joint: 7, weight: 1.0 }]);
    let merged = model.influences_of(&model.vertices[2]);
    assert_eq!(merged.len(), 2, "a joint named twice is one influence: {merged:?}");
    assert_eq!(merged[0].joint, 2);
    assert!((merged[0].weight - 0.8).abs() < 1e-6);
    assert_eq!(model.vertices[2].position, Vec3::Y, "the sparse value replaces the base");
    assert_eq!(model.vertices[1].position, Vec3::X);
    // One key at 0 s: a clip of no length that holds the key's pose.
    assert_eq!(model.clips[0].name, "animation_0");
    assert_eq!(model.clips[0].duration, 0.0);
    assert_eq!(model.joint_matrices(0, 0.0)[7].w_axis.truncate(), Vec3::new(0.0, 2.0, 0.0));
}

#[test]
fn external_buffers_and_textures_resolve_beside_the_file() {
    let folder = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gltf_external");
    std::fs::create_dir_all(&folder).expect("temp folder");
    let mut asset = Asset::default();
    let (positions, indices) = triangle(&mut asset);
    let uvs = asset.floats(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0], "VEC2");
    std::fs::write(folder.join("data file.bin"), &asset.bin).expect("write bin");
    let mut pixels = image::RgbaImage::new(2, 3);
    pixels.put_pixel(1, 2, image::Rgba([10, 20, 30, 255]));
    // No extension: found by content.
    pixels.save_with_format(folder.join("skin_texture"), image::ImageFormat::Png).expect("write png");
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":{},"uri":"data%20file.bin"}}],{},
"images":[{{"uri":"skin_texture"}},{{"uri":"missing.png"}}],"textures":[{{"source":0}},{{"source":1}}],
"materials":[{{"name":"painted","pbrMetallicRoughness":{{"baseColorTexture":{{"index":0}},"baseColorFactor":[1,0.5,1,1]}},"normalTexture":{{"index":1}}}}],
"nodes":[{{"mesh":0}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":{positions},"TEXCOORD_0":{uvs}}},"indices":{indices},"material":0}},
                         {{"attributes":{{"POSITION":{positions}}},"indices":{indices}}}]}}]}}"#,
        asset.bin.len(),
        asset.members()
    );
    let path = folder.join("external.gltf");
    std::fs::write(&path, json).expect("write gltf");
    let model = load(&path).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.materials.len(), 2, "the glTF material and the default");
    let texture = model.materials[0].texture.as_ref().expect("the texture beside the file is decoded");
    assert_eq!((texture.width, texture.height), (2, 3));
    assert_eq!(texture.path, folder.join("skin_texture"));
    assert_eq!(&texture.decode().expect("decodes")[(2 * 2 + 1) * 4..][..4], &[10, 20, 30, 255]);
    assert_eq!(model.materials[0].base_color, Vec4::new(1.0, 0.5, 1.0, 1.0));
    assert!(model.materials[0].normal_map.is_none());
    assert!(model.stats.warnings.iter().any(|warning| warning.contains("missing.png")), "{:?}", model.stats.warnings);
    assert_eq!(model.materials[1].base_color, Vec4::new(0.8, 0.8, 0.8, 1.0));
    assert_eq!(model.name, "external");

    // From a slice without a folder, the buffer cannot be had, and nothing is read.
    let bytes = std::fs::read(&path).expect("read back");
    let error = load_from_slice(&bytes, &path, None).expect_err("no folder, no external buffer");
    assert!(error.to_string().contains("data%20file.bin"), "{error}");
}

#[test]
fn non_triangle_primitives_are_skipped_with_a_warning_and_a_file_without_meshes_is_refused() {
    let mut asset = Asset::default();
    let (positions, indices) = triangle(&mut asset);
    let body = format!(
        r#""nodes":[{{"mesh":0}}],"meshes":[{{"primitives":[{{"attributes":{{"POSITION":{positions}}},"mode":1}},
{{"attributes":{{"POSITION":{positions}}},"indices":{indices}}}]}}]"#
    );
    let model = load_from_slice(&asset.glb(&body), Path::new("lines.glb"), None).expect("loads");
    assert_eq!(model.meshes.len(), 1);
    assert!(model.stats.warnings.iter().any(|warning| warning.contains("mode TRIANGLES")), "{:?}", model.stats.warnings);

    let error = load_from_slice(&asset.glb(r#""nodes":[{"name":"empty"}]"#), Path::new("empty.glb"), None).expect_err("no mesh");
    assert!(error.to_string().contains("expected at least one node with a mesh"), "{error}");
}

// ---------------------------------------------------------------------------------------------
// The real sample models
// ---------------------------------------------------------------------------------------------

fn shared_models() -> Option<PathBuf> {
    crate::common::shared_models("gltf")
}

/// Loads a sample model, checks what every model must satisfy and prints its figures.
fn sample(folder: &Path, relative: &str) -> (Model, Rig) {
    let path = folder.join(relative);
    let (model, rig) = load_with_rig(&path).unwrap_or_else(|error| panic!("{relative} loads: {error}"));
    for (index, vertex) in model.vertices.iter().enumerate() {
        let influences = model.influences_of(vertex);
        let sum: f32 = influences.iter().map(|influence| influence.weight).sum();
        assert!(!influences.is_empty() && (sum - 1.0).abs() < 1e-5, "{relative} vertex {index}: influences {influences:?}");
        assert!(influences.iter().all(|influence| (influence.joint as usize) < model.skeleton.len()));
    }
    // How far the file's inverse bind matrices are from inverting its rest pose.
    let mut rest = vec![Mat4::IDENTITY; model.skeleton.len()];
    rig.rest_pose(&mut rest);
    let rest_palette_error = model
        .skeleton
        .joints
        .iter()
        .zip(&rest)
        .map(|(joint, pose)| {
            (*pose * joint.inverse_bind - Mat4::IDENTITY).to_cols_array().iter().fold(0.0f32, |a, b| a.max(b.abs()))
        })
        .fold(0.0f32, f32::max);

    let extent = model.extent();
    let mut report = format!(
        "{relative}: {} vertices, {} joints, {} clips, max {} influences, extent {extent:.4}, rest palette off identity by {rest_palette_error:.1e}",
        model.vertices.len(),
        model.skeleton.len(),
        model.clips.len(),
        model.stats.max_influences,
    );
    assert!(rest_palette_error < 1e-4, "{relative}: stored vertices are the rest pose");
    // The model's channels (what the GPU samples) against the rig's direct evaluation of the
    // curves on the node tree, at 500 times a clip: no baking, so no error but rounding.
    let mut expected = vec![Mat4::IDENTITY; model.skeleton.len()];
    for (index, animation) in model.animations.iter().enumerate() {
        let mut worst = 0.0f32;
        for step in 0..=500 {
            let time = animation.duration * step as f32 / 500.0;
            rig.evaluate(index, time, &mut expected);
            for (found, expected) in model.joint_matrices(index, time).iter().zip(&expected) {
                for probe in [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z] {
                    worst = worst.max(found.transform_point3(probe).distance(expected.transform_point3(probe)));
                }
            }
        }
        let _ = write!(
            report,
            "\n  clip \"{}\": {:.4} s, {} B on the GPU ({} B of keys in the file): channels off the curves by {:.3e} of extent",
            animation.name,
            animation.duration,
            animation.gpu_bytes(model.skeleton.len(), model.morph_targets.len()),
            animation.file_key_bytes,
            worst / extent
        );
        assert!(worst <= 1e-5 * extent, "{relative} clip {}: {worst:e} off the curves, extent {extent}", animation.name);
    }
    for material in &model.materials {
        let texture = material
            .texture
            .as_ref()
            .map_or("no texture".to_string(), |texture| format!("{}x{} texture", texture.width, texture.height));
        let _ = write!(report, "\n  material \"{}\": {texture}", material.name);
    }
    for warning in &model.stats.warnings {
        let _ = write!(report, "\n  warning: {warning}");
    }
    println!("{report}");
    (model, rig)
}

#[test]
fn sample_models_load_with_the_documented_counts() {
    let Some(folder) = shared_models() else { return };

    let (model, _) = sample(&folder, "RiggedSimple/RiggedSimple.glb");
    assert_eq!((model.skeleton.len(), model.clips.len()), (2, 1));

    let (model, _) = sample(&folder, "RiggedFigure/RiggedFigure.glb");
    assert_eq!((model.skeleton.len(), model.clips.len()), (19, 1));

    let (model, _) = sample(&folder, "CesiumMan/CesiumMan.glb");
    assert_eq!((model.vertices.len(), model.skeleton.len(), model.clips.len()), (3273, 19, 1));
    assert!((model.clips[0].duration - 2.0).abs() < 0.1, "a 2 s walk: {}", model.clips[0].duration);
    assert!(model.materials.iter().any(|material| material.texture.is_some()), "the embedded JPEG is decoded");

    let (model, _) = sample(&folder, "Fox/Fox.glb");
    let names: Vec<&str> = model.clips.iter().map(|clip| clip.name.as_str()).collect();
    assert_eq!(names, ["Survey", "Walk", "Run"]);
    assert_eq!(model.skeleton.len(), 24);
    assert!(model.vertices.iter().all(|vertex| (vertex.normal.length() - 1.0).abs() < 1e-3), "normals computed");
    assert!(model.materials.iter().any(|material| material.texture.is_some()), "the embedded PNG is decoded");

    let (model, _) = sample(&folder, "SimpleSkin/SimpleSkin.gltf");
    assert_eq!((model.vertices.len(), model.skeleton.len(), model.clips.len()), (10, 2, 1));
    assert_eq!(model.materials.len(), 1, "no material: the default");
}

// ---------------------------------------------------------------------------------------------
// Malformed files
// ---------------------------------------------------------------------------------------------

/// A small valid GLB: the skin test file with inverse binds, which has a skin, rigid nodes and an
/// animation.
fn small_glb() -> Vec<u8> {
    let [hip, knee] = skin_inverse_binds();
    let (asset, body) = skin_file("[2,1]", Some([knee, hip]));
    asset.glb(&body)
}

/// Loads bytes that must fail; the error must name the file.
fn refuse(name: &str, bytes: &[u8]) -> FormatError {
    let path = PathBuf::from(format!("corpus/{name}"));
    let error = load_from_slice(bytes, &path, None).err().unwrap_or_else(|| panic!("{name}: expected an error"));
    assert_eq!(error.file, path);
    assert!(error.to_string().contains(name), "{error}");
    println!("{name}: {error}");
    error
}

fn simple_primitive(positions: usize, indices: Option<usize>) -> String {
    let indices = indices.map(|indices| format!(r#","indices":{indices}"#)).unwrap_or_default();
    format!(r#""nodes":[{{"mesh":0}}],"meshes":[{{"primitives":[{{"attributes":{{"POSITION":{positions}}}{indices}}}]}}]"#)
}

#[test]
fn malformed_files_fail_with_one_clear_error() {
    let glb = small_glb();
    assert!(load_from_slice(&glb, Path::new("corpus/valid.glb"), None).is_ok());

    let error = refuse("truncated.glb", &glb[..glb.len() / 2]);
    assert_eq!(error.location, Location::Byte(8));
    assert!(error.message.contains("truncated"), "{error}");

    let mut bad_magic = glb.clone();
    bad_magic[..4].copy_from_slice(b"glTX");
    let error = refuse("bad_magic.glb", &bad_magic);
    assert_eq!(error.location, Location::Byte(0));
    assert!(error.message.contains("magic"), "{error}");

    let error = refuse("bad_json.gltf", b"{\n  \"asset\": {\"version\": \"2.0\"},\n  \"nodes\": [}\n}");
    assert_eq!(error.location, Location::Line(3));
    assert!(error.message.contains("expected valid glTF JSON"), "{error}");

    let error = refuse("missing_asset.gltf", b"{\"nodes\": []}");
    assert!(error.message.contains("asset"), "{error}");

    // An accessor that runs past its bufferView, in a GLB: the error is at its byte.
    let mut asset = Asset::default();
    let view = asset.view(&[0u8; 24], None);
    let positions = asset.accessor(view, 5126, 3, "VEC3");
    let error = refuse("accessor_past_buffer.glb", &asset.glb(&simple_primitive(positions, None)));
    assert!(matches!(error.location, Location::Byte(offset) if offset > 20), "{error}");
    assert!(error.message.contains("accessor 0") && error.message.contains("bufferView 0"), "{error}");

    // The same in a .gltf: no byte offset in a data URI, so the message names what is where.
    let error = refuse("accessor_past_buffer.gltf", asset.gltf(&simple_primitive(positions, None)).as_bytes());
    assert_eq!(error.location, Location::File);

    let mut asset = Asset::default();
    let (positions, _) = triangle(&mut asset);
    let indices = asset.u16s(&[0, 1, 7], "SCALAR");
    let error = refuse("index_out_of_range.glb", &asset.glb(&simple_primitive(positions, Some(indices))));
    assert!(error.message.contains("expected a value below 3") && error.message.contains("found 7"), "{error}");
    assert!(matches!(error.location, Location::Byte(_)));

    let mut asset = Asset::default();
    let positions = asset.floats(&[0.0, 0.0, 0.0, 1.0, f32::NAN, 0.0, 0.0, 1.0, 0.0], "VEC3");
    let error = refuse("nan_position.glb", &asset.glb(&simple_primitive(positions, None)));
    assert!(error.message.contains("element 1") && error.message.contains("finite"), "{error}");
    assert!(matches!(error.location, Location::Byte(_)));

    let mut asset = Asset::default();
    let view = asset.view(&[0u8; 36], None);
    let positions = asset.accessor(view, 5126, 1 << 31, "VEC3");
    let error = refuse("absurd_count.glb", &asset.glb(&simple_primitive(positions, None)));
    assert!(error.message.contains("2147483648 elements"), "{error}");
    // Without a bufferView an accessor is zeros: the count alone must not allocate.
    let mut asset = Asset::default();
    asset.accessors.push(r#"{"componentType":5126,"count":2147483648,"type":"VEC3"}"#.to_string());
    let error = refuse("absurd_count_zeros.glb", &asset.glb(&simple_primitive(0, None)));
    assert!(error.message.contains("MiB"), "{error}");

    // Missing buffers: an external file with no folder, a GLB without its BIN chunk, a file not there.
    let mut asset = Asset::default();
    let (positions, indices) = triangle(&mut asset);
    let external = format!(
        r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":{},"uri":"geometry.bin"}}],{},{}}}"#,
        asset.bin.len(),
        asset.members(),
        simple_primitive(positions, Some(indices))
    );
    let error = refuse("external_buffer.gltf", external.as_bytes());
    assert!(error.message.contains("geometry.bin"), "{error}");
    // Declared lengths whose sum passes u64: refused by the budget, not overflowed.
    let huge = r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":9223372036854775808,"uri":"data:,"},
        {"byteLength":9223372036854775808,"uri":"data:,"}]}"#;
    let error = refuse("huge_buffers.gltf", huge.as_bytes());
    assert!(error.message.contains("external files"), "{error}");
    let no_bin = format!(r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":64}}],{}}}"#, asset.members());
    let error = refuse("no_bin_chunk.glb", &glb_bytes(no_bin.as_bytes(), None));
    assert!(error.message.contains("BIN"), "{error}");
    let folder = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gltf_missing_buffer");
    std::fs::create_dir_all(&folder).expect("temp folder");
    let path = folder.join("missing_buffer.gltf");
    std::fs::write(&path, &external).expect("write");
    let error = load(&path).expect_err("the buffer file is not there");
    assert!(error.to_string().contains("missing_buffer.gltf") && error.message.contains("geometry.bin"), "{error}");
    println!("missing_buffer.gltf: {error}");

    // A skin naming a node that does not exist.
    let mut skin_glb = small_glb();
    let start = find(&skin_glb, br#""joints":[2,1]"#);
    skin_glb[start..start + 14].copy_from_slice(br#""joints":[2,9]"#);
    let error = refuse("skin_joint_out_of_range.glb", &skin_glb);
    assert!(error.message.contains("skins[0].joints[1]") && error.message.contains("found 9"), "{error}");

    // What would make the gltf crate's own validation or readers panic.
    let mut channel_glb = small_glb();
    let start = find(&channel_glb, br#""node":2,"path""#);
    channel_glb[start..start + 8].copy_from_slice(br#""node":7"#);
    let error = refuse("channel_node_out_of_range.glb", &channel_glb);
    assert!(error.message.contains("target.node") && error.message.contains("below 6"), "{error}");
    let mut asset = Asset::default();
    triangle(&mut asset);
    let error = refuse("position_accessor_out_of_range.glb", &asset.glb(&simple_primitive(40, None)));
    assert!(error.message.contains("accessor 40"), "{error}");
    let percent = external.replace("geometry.bin", "%FF%FE.bin");
    let path = folder.join("bad_percent.gltf");
    std::fs::write(&path, percent).expect("write");
    let error = load(&path).expect_err("not UTF-8");
    assert!(error.message.contains("UTF-8"), "{error}");

    let mut cycle_glb = small_glb();
    let start = find(&cycle_glb, br#""children":[5]"#);
    cycle_glb[start..start + 14].copy_from_slice(br#""children":[0]"#);
    let error = refuse("cycle.glb", &cycle_glb);
    assert!(error.message.contains("expected a tree"), "{error}");

    // A singular inverse bind matrix: the palette pass needs its inverse.
    let [hip, _] = skin_inverse_binds();
    let (asset, body) = skin_file("[2,1]", Some([DMat4::ZERO, hip]));
    let error = refuse("singular_inverse_bind.glb", &asset.glb(&body));
    assert!(error.message.contains("matrix 0 has determinant 0") && error.message.contains("invertible"), "{error}");
}

fn find(haystack: &[u8], needle: &[u8]) -> usize {
    haystack.windows(needle.len()).position(|window| window == needle).expect("the test file has the text it edits")
}

#[test]
fn every_truncation_of_a_valid_glb_fails_cleanly() {
    let glb = small_glb();
    for length in 0..glb.len() {
        let result = load_from_slice(&glb[..length], Path::new("prefix.glb"), None);
        let error = result.err().unwrap_or_else(|| panic!("a {length}-byte prefix is refused"));
        assert!(error.to_string().contains("prefix.glb"));
    }
    assert!(load_from_slice(&glb, Path::new("prefix.glb"), None).is_ok());
}

#[test]
fn no_single_byte_change_makes_the_loader_panic() {
    let glb = small_glb();
    let (mut loaded, mut refused) = (0, 0);
    for position in 0..glb.len() {
        for value in [0x00, 0xFF, b'9', b'-', b'"', b'e'] {
            let mut bytes = glb.clone();
            if bytes[position] == value {
                continue;
            }
            bytes[position] = value;
            match load_from_slice(&bytes, Path::new("mutant.glb"), None) {
                Ok(model) => {
                    loaded += 1;
                    assert!(model.vertices.iter().all(|vertex| vertex.influence_count > 0));
                }
                Err(error) => {
                    refused += 1;
                    assert!(error.to_string().contains("mutant.glb"));
                }
            }
        }
    }
    println!("{} bytes x 6 values: {loaded} loaded, {refused} refused, none panicked", glb.len());
}

/// COLOR_0 (issue 39): RGB floats and RGBA normalized bytes are each vertex's colour, white where
/// a primitive has none; drawn, it tints the material's colour (the three.js Horse and Parrot
/// are coloured this way and rendered grey before).
#[test]
fn vertex_colours_are_read_and_tint_the_drawn_model() {
    let mut asset = Asset::default();
    let (positions, indices) = triangle(&mut asset);
    let rgb = asset.floats(&[1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0], "VEC3");
    let bytes = asset.view(&[0, 255, 0, 255, 0, 255, 0, 128, 0, 255, 0, 255], None);
    asset.accessors.push(format!(r#"{{"bufferView":{bytes},"componentType":5121,"normalized":true,"count":3,"type":"VEC4"}}"#));
    let rgba = asset.accessors.len() - 1;
    let body = format!(
        r#""nodes":[{{"mesh":0}},{{"mesh":1,"translation":[2,0,0]}},{{"mesh":2,"translation":[4,0,0]}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":{positions},"COLOR_0":{rgb}}},"indices":{indices}}}]}},
{{"primitives":[{{"attributes":{{"POSITION":{positions},"COLOR_0":{rgba}}},"indices":{indices}}}]}},
{{"primitives":[{{"attributes":{{"POSITION":{positions}}},"indices":{indices}}}]}}]"#
    );
    let path = crate::common::fresh_folder("gltf_loader", "colours").join("colours.gltf");
    std::fs::write(&path, asset.gltf(&body)).expect("scratch file");
    let model = vkskin::formats::load_model(&path, &[]).expect("loads");
    let colours: Vec<Vec4> = model.vertices.iter().map(|vertex| vertex.color).collect();
    assert_eq!(colours[..3], [Vec4::new(1.0, 0.0, 0.0, 1.0); 3]);
    assert_eq!(colours[3], Vec4::new(0.0, 1.0, 0.0, 1.0));
    assert!((colours[4].w - 128.0 / 255.0).abs() < 1e-6, "{:?}", colours[4]);
    assert_eq!(colours[6..], [Vec4::ONE; 3]);

    // Drawn: the red triangle's pixels are red, the white one's grey.
    let device = crate::common::validated_device();
    let setup = vkskin::app::SceneSetup::new(model, 1);
    let mut headless = vkskin::app::HeadlessRenderer::new(&device, &setup, 240, 120).expect("renderer");
    let image = headless.render(&setup.frame(0.0, headless.aspect())).expect("frame");
    let reddish = image.pixels().filter(|pixel| pixel[0] > 2 * u16::from(pixel[1]).max(30) as u8).count();
    let greenish = image.pixels().filter(|pixel| u16::from(pixel[1]) > 2 * u16::from(pixel[0]).max(30)).count();
    println!("{reddish} red pixels, {greenish} green");
    assert!(reddish > 50 && greenish > 50, "{reddish} red, {greenish} green pixels");
    crate::common::assert_no_validation_messages(&device);
}
