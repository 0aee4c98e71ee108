//! The model's GPU-side data (uploaded once) and the instances that play it (written every frame).

use std::sync::Arc;

use ash::vk as ash_vk;
use glam::{Mat4, Vec3};

use super::gpu::{ClipInfo, GpuBounds, GpuInfluence, InstanceData, MeshRange, Pose, SourceVertex, MAX_CLIPS, NO_CLIP};
use crate::anim::{skin_vertex, Aabb, Clip, JointPose, Skinned};
use crate::model::Model;
use crate::vk::{self, Buffer, Device, Image};

/// A material ready for the forward pass: its textures (a white pixel, or a flat normal, when the
/// model has none).
pub struct GpuMaterial {
    pub texture: Image,
    pub normal_map: Image,
    pub base_color: [f32; 4],
}

/// The model's static data in GPU buffers. Field names are the buffers' RenderDoc names.
pub struct GpuModel {
    pub source_vertices: Buffer,
    pub influences: Buffer,
    pub texcoords: Buffer,
    pub indices: Buffer,
    pub poses: Buffer,
    pub clips: Buffer,
    /// Every clip's per-frame bounds, frame-major in clip order (frame f of a clip whose poses start
    /// at `first_pose` is element `first_pose / joint_count + f`), for the cull pass.
    pub clip_bounds: Buffer,
    /// Each mesh's index range, for the cull pass's draw commands.
    pub mesh_ranges: Buffer,
    pub inverse_binds: Buffer,
    pub joint_parents: Buffer,
    pub materials: Vec<GpuMaterial>,
    pub vertex_count: u32,
    pub index_count: u32,
    /// At least 1: a model without a skeleton is skinned by one identity joint.
    pub joint_count: u32,
}

impl GpuModel {
    pub fn upload(device: &Arc<Device>, model: &Model) -> vk::Result<GpuModel> {
        use ash_vk::BufferUsageFlags as Usage;
        if model.clips.len() > MAX_CLIPS {
            return Err(vk::Error::Other(format!("{} has {} clips; at most {MAX_CLIPS} fit", model.name, model.clips.len())));
        }
        let sources: Vec<SourceVertex> = model.vertices.iter().map(SourceVertex::from).collect();
        let mut influences: Vec<GpuInfluence> = model.influences.iter().map(GpuInfluence::from).collect();
        let texcoords: Vec<[f32; 2]> = model.vertices.iter().map(|vertex| vertex.uv.to_array()).collect();
        let joint_count = model.skeleton.len().max(1);
        let mut inverse_binds: Vec<[f32; 16]> =
            model.skeleton.joints.iter().map(|joint| joint.inverse_bind.to_cols_array()).collect();
        inverse_binds.resize(joint_count, Mat4::IDENTITY.to_cols_array());

        let bind_bounds = model.bind_bounds();
        let to_gpu = |bounds: Aabb| {
            let bounds = if bounds.is_empty() { bind_bounds } else { bounds };
            GpuBounds { min_corner: bounds.min.extend(0.0).to_array(), max_corner: bounds.max.extend(0.0).to_array() }
        };
        let mut clip_bounds: Vec<GpuBounds> = Vec::new();
        let mut poses = Vec::new();
        let mut clip_infos = Vec::new();
        for clip in &model.clips {
            clip_infos.push(ClipInfo {
                first_pose: poses.len() as u32,
                frame_count: clip.frame_count() as u32,
                frame_rate: clip.frame_rate,
                period_frames: clip.period_frames() as u32,
            });
            poses.extend(clip.poses.iter().map(Pose::from));
            clip_bounds
                .extend((0..clip.frame_count()).map(|frame| to_gpu(clip.bounds.get(frame).copied().unwrap_or(Aabb::EMPTY))));
        }
        if clip_bounds.is_empty() {
            clip_bounds.push(to_gpu(bind_bounds));
        }
        let mut mesh_ranges: Vec<MeshRange> =
            model.meshes.iter().map(|mesh| MeshRange { index_count: mesh.index_count, first_index: mesh.first_index }).collect();
        if mesh_ranges.is_empty() {
            mesh_ranges.push(MeshRange { index_count: 0, first_index: 0 });
        }
        // Storage buffers may not be empty: keep one placeholder element.
        if poses.is_empty() {
            poses.push(Pose::from(&crate::anim::JointPose::IDENTITY));
        }
        if clip_infos.is_empty() {
            clip_infos.push(ClipInfo { first_pose: 0, frame_count: 1, frame_rate: 1.0, period_frames: 1 });
        }
        if influences.is_empty() {
            influences.push(GpuInfluence { joint: 0, weight: 0.0 });
        }

        let storage = Usage::STORAGE_BUFFER;
        let source_vertices = Buffer::with_data(device, "model.source_vertices", storage, bytemuck::cast_slice(&sources))?;
        let influences = Buffer::with_data(device, "model.influences", storage, bytemuck::cast_slice(&influences))?;
        let texcoords = Buffer::with_data(device, "model.texcoords", storage, bytemuck::cast_slice(&texcoords))?;
        // STORAGE: the triangle pass reads them too.
        let indices = Buffer::with_data(
            device,
            "model.indices",
            Usage::INDEX_BUFFER | Usage::STORAGE_BUFFER,
            bytemuck::cast_slice(&model.indices),
        )?;
        let poses = Buffer::with_data(device, "model.poses", storage, bytemuck::cast_slice(&poses))?;
        let clips = Buffer::with_data(device, "model.clips", storage, bytemuck::cast_slice(&clip_infos))?;
        let clip_bounds = Buffer::with_data(device, "model.clip_bounds", storage, bytemuck::cast_slice(&clip_bounds))?;
        let mesh_ranges = Buffer::with_data(device, "model.mesh_ranges", storage, bytemuck::cast_slice(&mesh_ranges))?;
        let inverse_binds = Buffer::with_data(device, "model.inverse_binds", storage, bytemuck::cast_slice(&inverse_binds))?;
        // Each joint's parent (u32::MAX for a root), for the skeleton debug view.
        let mut parents: Vec<u32> =
            model.skeleton.joints.iter().map(|joint| joint.parent.map_or(u32::MAX, |parent| parent as u32)).collect();
        parents.resize(joint_count.max(1), u32::MAX);
        let joint_parents = Buffer::with_data(device, "model.joint_parents", storage, bytemuck::cast_slice(&parents))?;

        let mut materials = Vec::new();
        for (index, material) in model.materials.iter().enumerate() {
            let name = format!("material[{index}].{}", material.name);
            let (srgb, unorm) = (ash_vk::Format::R8G8B8A8_SRGB, ash_vk::Format::R8G8B8A8_UNORM);
            let texture = match &material.texture {
                Some(texture) => Image::texture_rgba8(device, &name, (texture.width, texture.height), srgb, &texture.rgba8)?,
                None => Image::texture_rgba8(device, &format!("{name}.white"), (1, 1), srgb, &[255; 4])?,
            };
            let normal_map = match &material.normal_map {
                Some(map) => Image::texture_rgba8(device, &format!("{name}.normal"), (map.width, map.height), unorm, &map.rgba8)?,
                None => Image::texture_rgba8(device, &format!("{name}.flat_normal"), (1, 1), unorm, &[128, 128, 255, 255])?,
            };
            materials.push(GpuMaterial { texture, normal_map, base_color: material.base_color.to_array() });
        }
        Ok(GpuModel {
            source_vertices,
            influences,
            texcoords,
            indices,
            poses,
            clips,
            clip_bounds,
            mesh_ranges,
            inverse_binds,
            joint_parents,
            materials,
            vertex_count: model.vertices.len() as u32,
            index_count: model.indices.len() as u32,
            joint_count: joint_count as u32,
        })
    }
}

/// A crossfade in progress: the clip fading out, and when the fade began.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fade {
    pub from_clip: usize,
    pub started: f64,
    /// Seconds; 0 switches at once.
    pub duration: f32,
}

/// One animated copy of the model in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstanceState {
    pub position: Vec3,
    pub yaw: f32,
    /// None: the bind pose.
    pub clip: Option<usize>,
    /// Set while the previous clip fades out into `clip` (blended on the GPU, in the palette pass).
    pub fade: Option<Fade>,
    /// Seconds added to the shared clock, so instances are out of step.
    pub phase: f32,
    pub speed: f32,
}

impl InstanceState {
    /// Switches to `clip`, crossfading from the current one over `fade_seconds` from `now`.
    pub fn switch_clip(&mut self, clip: usize, now: f64, fade_seconds: f32) {
        if self.clip == Some(clip) {
            return;
        }
        self.fade = match self.clip {
            Some(from_clip) if fade_seconds > 0.0 => Some(Fade { from_clip, started: now, duration: fade_seconds }),
            _ => None,
        };
        self.clip = Some(clip);
    }

    /// What the CPU writes for this instance at `seconds` on the shared clock: the clip fading out
    /// as clip a and the clip fading in as clip b with the fade's progress, or the one clip as a.
    pub fn gpu_data(&self, clips: &[Clip], seconds: f64) -> InstanceData {
        let local = seconds * f64::from(self.speed) + f64::from(self.phase);
        let clip_time = |index: usize| clips.get(index).map(|clip| (index as u32, clip.wrap_time(local)));
        let current = self.clip.and_then(clip_time);
        let fading = self.fade.and_then(|fade| {
            let progress = ((seconds - fade.started) / f64::from(fade.duration)) as f32;
            (progress < 1.0).then(|| clip_time(fade.from_clip).map(|from| (from, progress.max(0.0)))).flatten()
        });
        let ((clip_a, time_a), (clip_b, time_b), blend) = match (current, fading) {
            (Some(current), Some((from, progress))) => (from, current, progress),
            (Some(current), None) => (current, (NO_CLIP, 0.0), 0.0),
            (None, _) => ((NO_CLIP, 0.0), (NO_CLIP, 0.0), 0.0),
        };
        InstanceData {
            position_yaw: self.position.extend(self.yaw).to_array(),
            clips: clip_a | (clip_b << 16),
            time_a,
            time_b,
            blend,
        }
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
                fade: None,
                phase: duration * (index as f32 * 0.37).fract(),
                speed: 1.0,
            }
        })
        .collect()
}

/// World bounds of all instances over everything any clip can do (the shadow map's fit), so a clip
/// switch never walks out of the shadow volume.
pub fn world_bounds(model: &Model, instances: &[InstanceState]) -> Aabb {
    let local = model.animated_bounds();
    instances.iter().fold(Aabb::EMPTY, |acc, instance| acc.union(local.transformed(instance.world())))
}

/// The CPU reference of the palette pass for one instance record: sample clip a (and clip b when
/// it fades in), blend, and build `world × pose × inverse bind`.
pub fn reference_palette(model: &Model, data: &InstanceData) -> Vec<Mat4> {
    let joint_count = model.skeleton.len();
    let clip_at = |index: u32| model.clips.get(index as usize).filter(|_| index != NO_CLIP);
    let Some(clip_a) = clip_at(data.clip_a()) else {
        return crate::anim::bind_palette(&model.skeleton, data.world());
    };
    let mut poses = vec![JointPose::IDENTITY; joint_count];
    clip_a.sample(data.time_a, &mut poses);
    if let (Some(clip_b), true) = (clip_at(data.clip_b()), data.blend > 0.0) {
        let mut poses_b = vec![JointPose::IDENTITY; joint_count];
        clip_b.sample(data.time_b, &mut poses_b);
        let from = poses.clone();
        crate::anim::blend_poses(&from, &poses_b, data.blend, &mut poses);
    }
    let mut palette = vec![Mat4::IDENTITY; joint_count];
    crate::anim::palette(&model.skeleton, &poses, data.world(), &mut palette);
    palette
}

/// The CPU reference of the skin pass for one instance record: every vertex, world space.
pub fn reference_skinning(model: &Model, data: &InstanceData) -> Vec<Skinned> {
    let palette = reference_palette(model, data);
    model
        .vertices
        .iter()
        .map(|vertex| {
            skin_vertex(&palette, vertex.position, vertex.normal, vertex.tangent.truncate(), model.influences_of(vertex))
        })
        .collect()
}
