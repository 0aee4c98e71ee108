//! A long motion-capture-like clip for load-time and playback checks: `vkskin generate --long-clip`
//! writes `long_clip.ms3d` (60 joints, 3 minutes at 30 fps, a rotation key per joint per frame
//! and root position keys: 5.2 MB), the kind of file the old baking loader refused.
//!
//! Milkshape, because long mocap arrives as Milkshape files in practice and the format is binary;
//! written with the project's own writer ([`ms3d::write`]).

use glam::Vec3;

use crate::formats::ms3d::{FixedText, Ms3dFile, Ms3dGroup, Ms3dJoint, Ms3dKey, Ms3dTriangle, Ms3dVertex};

/// Six chains of ten joints hanging from the first.
pub const JOINTS: usize = 60;
pub const SECONDS: f32 = 180.0;
pub const FRAME_RATE: f32 = 30.0;

/// The document: one triangle on each joint, each joint swinging on its own sinusoids.
pub fn long_clip(joints: usize, seconds: f32, frame_rate: f32) -> Ms3dFile {
    let frames = (seconds * frame_rate).round() as usize;
    let chain = 10;
    let mut file_joints = Vec::with_capacity(joints);
    let mut vertices = Vec::with_capacity(joints * 3);
    let mut triangles = Vec::with_capacity(joints);
    let mut bind_positions: Vec<Vec3> = Vec::with_capacity(joints);
    for index in 0..joints {
        let (parent, offset) = match index {
            0 => (None, Vec3::new(0.0, 1.0, 0.0)),
            _ if (index - 1) % chain == 0 => {
                let branch = ((index - 1) / chain) as f32;
                (Some(0), Vec3::new(branch.cos() * 0.1, 0.1, branch.sin() * 0.1))
            }
            _ => (Some(index - 1), Vec3::new(0.0, 0.12, 0.0)),
        };
        let bind = parent.map_or(Vec3::ZERO, |parent| bind_positions[parent]) + offset;
        bind_positions.push(bind);
        let phase = index as f32 * 0.37;
        let rotation_keys = (1..=frames)
            .map(|frame| {
                let time = frame as f32 / frame_rate;
                let swing = |rate: f32, shift: f32| 0.4 * (time * rate + phase + shift).sin();
                Ms3dKey { time, value: Vec3::new(swing(1.3, 0.0), swing(0.7, 1.0), swing(2.1, 2.0)) }
            })
            .collect();
        let position_keys = if index == 0 {
            (1..=frames)
                .map(|frame| {
                    let time = frame as f32 / frame_rate;
                    Ms3dKey { time, value: Vec3::new((time * 0.5).sin(), 0.05 * (time * 4.0).sin(), (time * 0.3).cos()) }
                })
                .collect()
        } else {
            Vec::new()
        };
        file_joints.push(Ms3dJoint {
            flags: 8,
            name: FixedText::new(&format!("joint_{index}")),
            parent_name: FixedText::new(&parent.map(|parent| format!("joint_{parent}")).unwrap_or_default()),
            rotation: Vec3::ZERO,
            position: offset,
            rotation_keys,
            position_keys,
        });
        let first = vertices.len() as u16;
        for corner in [Vec3::new(-0.06, 0.0, 0.0), Vec3::new(0.06, 0.0, 0.0), Vec3::new(0.0, 0.1, 0.0)] {
            vertices.push(Ms3dVertex { flags: 0, position: bind + corner, bone_id: index as i8, reference_count: 1 });
        }
        triangles.push(Ms3dTriangle {
            flags: 0,
            vertex_indices: [first, first + 1, first + 2],
            normals: [Vec3::Z; 3],
            s: [0.0, 1.0, 0.0],
            t: [0.0, 0.0, 1.0],
            smoothing_group: 1,
            group_index: 0,
        });
    }
    Ms3dFile {
        version: 4,
        groups: vec![Ms3dGroup {
            flags: 0,
            name: FixedText::new("body"),
            triangle_indices: (0..triangles.len() as u16).collect(),
            material_index: -1,
        }],
        vertices,
        triangles,
        materials: Vec::new(),
        animation_fps: frame_rate,
        current_time: 1.0,
        total_frames: frames as i32,
        joints: file_joints,
        comments: None,
        vertex_extras: None,
        joint_extras: None,
        model_extra: None,
        unparsed_tail: Vec::new(),
    }
}
