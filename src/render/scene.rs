//! The model's GPU-side data (uploaded once) and the instances that play it (written every frame).

use std::sync::Arc;

use ash::vk as ash_vk;
use glam::{Mat4, Vec3};

use super::gpu::{ClipInfo, InstanceData, Pose, SourceVertex, NO_CLIP};
use crate::anim::{Aabb, Clip};
use crate::model::Model;
use crate::vk::{self, Buffer, Device, Image};

/// A material ready for the forward pass: its texture (a white pixel when the model has none).
pub struct GpuMaterial {
    pub texture: Image,
    pub base_color: [f32; 4],
}

/// The model's static data in GPU buffers. Field names are the buffers' RenderDoc names.
pub struct GpuModel {
    pub source_vertices: Buffer,
    pub texcoords: Buffer,
    pub indices: Buffer,
    pub poses: Buffer,
    pub clips: Buffer,
    pub inverse_binds: Buffer,
    pub materials: Vec<GpuMaterial>,
    pub vertex_count: u32,
    /// At least 1: a model without a skeleton is skinned by one identity joint.
    pub joint_count: u32,
}

impl GpuModel {
    pub fn upload(device: &Arc<Device>, model: &Model) -> vk::Result<GpuModel> {
        use ash_vk::BufferUsageFlags as Usage;
        let sources: Vec<SourceVertex> = model.vertices.iter().map(SourceVertex::from).collect();
        let texcoords: Vec<[f32; 2]> = model.vertices.iter().map(|vertex| vertex.uv.to_array()).collect();
        let joint_count = model.skeleton.len().max(1);
        let mut inverse_binds: Vec<[f32; 16]> =
            model.skeleton.joints.iter().map(|joint| joint.inverse_bind.to_cols_array()).collect();
        inverse_binds.resize(joint_count, Mat4::IDENTITY.to_cols_array());

        let mut poses = Vec::new();
        let mut clip_infos = Vec::new();
        for clip in &model.clips {
            clip_infos.push(ClipInfo {
                first_pose: poses.len() as u32,
                frame_count: clip.frame_count() as u32,
                frame_rate: clip.frame_rate,
                unused: 0,
            });
            poses.extend(clip.poses.iter().map(Pose::from));
        }
        // Storage buffers may not be empty: keep one placeholder element.
        if poses.is_empty() {
            poses.push(Pose::from(&crate::anim::JointPose::IDENTITY));
        }
        if clip_infos.is_empty() {
            clip_infos.push(ClipInfo { first_pose: 0, frame_count: 1, frame_rate: 1.0, unused: 0 });
        }

        let storage = Usage::STORAGE_BUFFER;
        let source_vertices = Buffer::with_data(device, "model.source_vertices", storage, bytemuck::cast_slice(&sources))?;
        let texcoords = Buffer::with_data(device, "model.texcoords", storage, bytemuck::cast_slice(&texcoords))?;
        let indices = Buffer::with_data(device, "model.indices", Usage::INDEX_BUFFER, bytemuck::cast_slice(&model.indices))?;
        let poses = Buffer::with_data(device, "model.poses", storage, bytemuck::cast_slice(&poses))?;
        let clips = Buffer::with_data(device, "model.clips", storage, bytemuck::cast_slice(&clip_infos))?;
        let inverse_binds = Buffer::with_data(device, "model.inverse_binds", storage, bytemuck::cast_slice(&inverse_binds))?;

        let mut materials = Vec::new();
        for (index, material) in model.materials.iter().enumerate() {
            let name = format!("material[{index}].{}", material.name);
            let texture = match &material.texture {
                Some(texture) => Image::texture_rgba8(device, &name, texture.width, texture.height, &texture.rgba8)?,
                None => Image::texture_rgba8(device, &format!("{name}.white"), 1, 1, &[255; 4])?,
            };
            materials.push(GpuMaterial { texture, base_color: material.base_color.to_array() });
        }
        Ok(GpuModel {
            source_vertices,
            texcoords,
            indices,
            poses,
            clips,
            inverse_binds,
            materials,
            vertex_count: model.vertices.len() as u32,
            joint_count: joint_count as u32,
        })
    }
}

/// One animated copy of the model in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstanceState {
    pub position: Vec3,
    pub yaw: f32,
    /// None: the bind pose.
    pub clip: Option<usize>,
    /// Seconds added to the shared clock, so instances are out of step.
    pub phase: f32,
    pub speed: f32,
}

impl InstanceState {
    /// What the CPU writes for this instance at `seconds` on the shared clock.
    pub fn gpu_data(&self, clips: &[Clip], seconds: f64) -> InstanceData {
        let (clip, time) = match self.clip.and_then(|index| clips.get(index).map(|clip| (index, clip))) {
            Some((index, clip)) => (index as u32, clip.wrap_time(seconds * f64::from(self.speed) + f64::from(self.phase))),
            None => (NO_CLIP, 0.0),
        };
        InstanceData { position_yaw: self.position.extend(self.yaw).to_array(), clip, time, unused: [0; 2] }
    }

    pub fn world(&self) -> Mat4 {
        Mat4::from_rotation_translation(glam::Quat::from_rotation_y(self.yaw), self.position)
    }
}

/// `count` instances in a grid centred on the origin, one model-size apart, each out of step with
/// the last by a fraction of the clip.
pub fn grid_instances(model: &Model, count: usize) -> Vec<InstanceState> {
    let bounds = model.animated_bounds();
    let spacing = bounds.size().x.max(bounds.size().z) * 1.6 + 0.2;
    let columns = (count as f32).sqrt().ceil().max(1.0) as usize;
    let rows = count.div_ceil(columns);
    let clip = (!model.clips.is_empty()).then_some(0);
    let duration = model.clips.first().map_or(1.0, |clip| clip.duration());
    (0..count)
        .map(|index| {
            let (row, column) = (index / columns, index % columns);
            let x = (column as f32 - (columns as f32 - 1.0) * 0.5) * spacing;
            let z = (row as f32 - (rows as f32 - 1.0) * 0.5) * spacing;
            InstanceState {
                position: Vec3::new(x, 0.0, z) - Vec3::new(bounds.center().x, 0.0, bounds.center().z),
                yaw: 0.0,
                clip,
                phase: duration * (index as f32 * 0.37).fract(),
                speed: 1.0,
            }
        })
        .collect()
}

/// World bounds of all instances over everything their clips can do (the shadow map's fit).
pub fn world_bounds(model: &Model, instances: &[InstanceState]) -> Aabb {
    instances.iter().fold(Aabb::EMPTY, |acc, instance| {
        let local = match instance.clip.and_then(|index| model.clips.get(index)) {
            Some(clip) => clip.total_bounds().union(model.bind_bounds()),
            None => model.bind_bounds(),
        };
        acc.union(local.transformed(instance.world()))
    })
}
