//! The model's GPU-side data (uploaded once) and the instances that play it (written every frame).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use ash::vk;
use glam::{Mat4, Vec3};

use super::shader_types::{
    AnimationCells, GpuBounds, GpuChannel, GpuInfluence, GpuJoint, InstanceData, MeshRange, SourceVertex,
    CHANNEL_COMPONENTS_SHIFT, CHANNEL_HAS_BASE, CHANNEL_IMPLIED_W, CHANNEL_INTERPOLATION_SHIFT, CHANNEL_UNIFORM, CHANNEL_WRAPS,
    MAX_ANIMATIONS, NO_CLIP, NO_PARENT,
};
use crate::anim::{skin_vertex, Aabb, Channel, Clip, JointPose, KeyTimes, Layer, Skinned};
use crate::model::{Model, Texture};
use crate::gpu::{self, Buffer, Device, Image};

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
    /// One channel per (animation, joint, property); see `Channel` in common.glsl.
    pub channels: Buffer,
    pub key_times: Buffer,
    pub key_values: Buffer,
    /// Each joint's rest pose, `pre` transform, parent and subtree span.
    pub joints: Buffer,
    /// Where each animation's culling cells start, and the cells (see `anim::bounds`).
    pub animation_cells: Buffer,
    pub cells: Buffer,
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
    pub fn upload(device: &Arc<Device>, model: &Model) -> gpu::Result<GpuModel> {
        use vk::BufferUsageFlags as Usage;
        if model.animations.len() > MAX_ANIMATIONS {
            return Err(gpu::Error::Other(format!(
                "{} has {} animations; at most {MAX_ANIMATIONS} fit",
                model.name,
                model.animations.len()
            )));
        }
        let sources: Vec<SourceVertex> = model.vertices.iter().map(SourceVertex::from).collect();
        let mut influences: Vec<GpuInfluence> = model.influences.iter().map(GpuInfluence::from).collect();
        let texcoords: Vec<[f32; 2]> = model.vertices.iter().map(|vertex| vertex.uv.to_array()).collect();
        let joint_count = model.skeleton.len().max(1);
        let mut inverse_binds: Vec<[f32; 16]> =
            model.skeleton.joints.iter().map(|joint| joint.inverse_bind.to_cols_array()).collect();
        inverse_binds.resize(joint_count, Mat4::IDENTITY.to_cols_array());
        let keys = AnimationData::new(model);
        if let Some(index) = model.skeleton.joints.iter().position(|joint| !joint.inverse_bind.inverse().is_finite()) {
            return Err(gpu::Error::Other(format!(
                "{}: joint {index}'s inverse bind matrix is not invertible; the palette pass needs its inverse",
                model.name
            )));
        }
        let joints = joint_infos(model);

        let bind_bounds = model.bind_bounds();
        let to_gpu = |bounds: Aabb| {
            let bounds = if bounds.is_empty() { bind_bounds } else { bounds };
            GpuBounds { min_corner: bounds.min.extend(0.0).to_array(), max_corner: bounds.max.extend(0.0).to_array() }
        };
        let mut cells: Vec<GpuBounds> = Vec::new();
        let mut animation_cells = Vec::new();
        for bounds in &model.bounds.animations {
            animation_cells.push(AnimationCells {
                first_cell: cells.len() as u32,
                cell_count: bounds.cells.len().max(1) as u32,
                cell_duration: bounds.cell_duration,
                unused: 0,
            });
            cells.extend(bounds.cells.iter().map(|&cell| to_gpu(cell)));
            if bounds.cells.is_empty() {
                cells.push(to_gpu(bind_bounds));
            }
        }
        let mut mesh_ranges: Vec<MeshRange> =
            model.meshes.iter().map(|mesh| MeshRange { index_count: mesh.index_count, first_index: mesh.first_index }).collect();
        if mesh_ranges.is_empty() {
            mesh_ranges.push(MeshRange { index_count: 0, first_index: 0 });
        }
        // Storage buffers may not be empty: keep one placeholder element.
        if cells.is_empty() {
            cells.push(to_gpu(bind_bounds));
        }
        if animation_cells.is_empty() {
            animation_cells.push(AnimationCells { first_cell: 0, cell_count: 1, cell_duration: 0.0, unused: 0 });
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
        let channels = Buffer::with_data(device, "model.channels", storage, bytemuck::cast_slice(&keys.channels))?;
        let key_times = Buffer::with_data(device, "model.key_times", storage, bytemuck::cast_slice(&keys.times))?;
        let key_values = Buffer::with_data(device, "model.key_values", storage, bytemuck::cast_slice(&keys.values))?;
        let joints = Buffer::with_data(device, "model.joints", storage, bytemuck::cast_slice(&joints))?;
        let animation_cells =
            Buffer::with_data(device, "model.animation_cells", storage, bytemuck::cast_slice(&animation_cells))?;
        let cells = Buffer::with_data(device, "model.cells", storage, bytemuck::cast_slice(&cells))?;
        let mesh_ranges = Buffer::with_data(device, "model.mesh_ranges", storage, bytemuck::cast_slice(&mesh_ranges))?;
        let inverse_binds = Buffer::with_data(device, "model.inverse_binds", storage, bytemuck::cast_slice(&inverse_binds))?;
        // Each joint's parent (u32::MAX for a root), for the skeleton debug view.
        let mut parents: Vec<u32> =
            model.skeleton.joints.iter().map(|joint| joint.parent.map_or(u32::MAX, |parent| parent as u32)).collect();
        parents.resize(joint_count.max(1), u32::MAX);
        let joint_parents = Buffer::with_data(device, "model.joint_parents", storage, bytemuck::cast_slice(&parents))?;

        let mut materials = Vec::new();
        // Each texture file is decoded once, however many materials use it.
        let mut decoded: HashMap<&Path, Vec<u8>> = HashMap::new();
        for (index, material) in model.materials.iter().enumerate() {
            let name = format!("material[{index}].{}", material.name);
            let (srgb, unorm) = (vk::Format::R8G8B8A8_SRGB, vk::Format::R8G8B8A8_UNORM);
            let texture = match &material.texture {
                Some(texture) => {
                    Image::texture_rgba8(device, &name, (texture.width, texture.height), srgb, pixels(&mut decoded, texture)?)?
                }
                None => Image::texture_rgba8(device, &format!("{name}.white"), (1, 1), srgb, &[255; 4])?,
            };
            let normal_map = match &material.normal_map {
                Some(map) => Image::texture_rgba8(
                    device,
                    &format!("{name}.normal"),
                    (map.width, map.height),
                    unorm,
                    pixels(&mut decoded, map)?,
                )?,
                None => Image::texture_rgba8(device, &format!("{name}.flat_normal"), (1, 1), unorm, &[128, 128, 255, 255])?,
            };
            materials.push(GpuMaterial { texture, normal_map, base_color: material.base_color.to_array() });
        }
        Ok(GpuModel {
            source_vertices,
            influences,
            texcoords,
            indices,
            channels,
            key_times,
            key_values,
            joints,
            animation_cells,
            cells,
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

/// The animations' keys as the palette pass reads them: one channel record per (animation, joint,
/// property), the key times (evenly spaced ones as start and step; equal lists stored once) and the
/// values, f32 as the files give them.
pub struct AnimationData {
    pub channels: Vec<GpuChannel>,
    pub times: Vec<f32>,
    pub values: Vec<f32>,
}

impl AnimationData {
    pub fn new(model: &Model) -> AnimationData {
        let joint_count = model.skeleton.len().max(1);
        let mut data = AnimationData {
            channels: vec![GpuChannel::default(); (model.animations.len() * joint_count * 3).max(1)],
            times: Vec::new(),
            values: Vec::new(),
        };
        let mut shared_times: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
        for (index, animation) in model.animations.iter().enumerate() {
            for channel in &animation.channels {
                if channel.joint >= joint_count {
                    continue;
                }
                let record = data.channel_record(channel, &mut shared_times);
                data.channels[(index * joint_count + channel.joint) * 3 + channel.property as usize] = record;
            }
        }
        if data.times.is_empty() {
            data.times.push(0.0);
        }
        if data.values.is_empty() {
            data.values.push(0.0);
        }
        data
    }

    fn channel_record(&mut self, channel: &Channel, shared_times: &mut std::collections::HashMap<Vec<u32>, u32>) -> GpuChannel {
        let stored_times: Vec<f32> = match &channel.times {
            KeyTimes::Uniform { start, step, .. } => vec![*start, *step],
            KeyTimes::Listed(times) => times.clone(),
        };
        let next = self.times.len() as u32;
        let first_time = *shared_times.entry(stored_times.iter().map(|time| time.to_bits()).collect()).or_insert_with(|| {
            self.times.extend(&stored_times);
            next
        });
        let has_base = channel.stores_base();
        let first_value = self.values.len() as u32;
        if has_base {
            self.values.extend(channel.base.to_array());
        }
        self.values.extend(&channel.values);
        let flag = |on: bool, bit: u32| if on { bit } else { 0 };
        GpuChannel {
            packed: channel.property as u32
                | (channel.interpolation as u32) << CHANNEL_INTERPOLATION_SHIFT
                | u32::from(channel.mask & 0b1111) << CHANNEL_COMPONENTS_SHIFT
                | flag(channel.implied_w, CHANNEL_IMPLIED_W)
                | flag(channel.times.is_uniform(), CHANNEL_UNIFORM)
                | flag(channel.wraps, CHANNEL_WRAPS)
                | flag(has_base, CHANNEL_HAS_BASE),
            key_count: channel.times.count() as u32,
            first_time,
            first_value,
        }
    }

    /// What the animations take on the GPU: channel records, times and values.
    pub fn bytes(&self) -> usize {
        std::mem::size_of_val(self.channels.as_slice())
            + std::mem::size_of_val(self.times.as_slice())
            + std::mem::size_of_val(self.values.as_slice())
    }
}

/// Each joint's rest pose, `pre`, parent and subtree span; one identity joint for a model without
/// a skeleton.
/// A texture's pixels, decoded now that they are uploaded (the loaders read only headers), once
/// per file.
fn pixels<'a, 'm>(decoded: &'a mut HashMap<&'m Path, Vec<u8>>, texture: &'m Texture) -> gpu::Result<&'a [u8]> {
    if !decoded.contains_key(texture.path.as_path()) {
        let pixels = texture
            .decode()
            .map_err(|error| gpu::Error::Other(format!("{}: cannot decode the texture: {error}", texture.path.display())))?;
        decoded.insert(&texture.path, pixels);
    }
    Ok(decoded.get(texture.path.as_path()).map(Vec::as_slice).unwrap_or_default())
}

fn joint_infos(model: &Model) -> Vec<GpuJoint> {
    let spans = model.skeleton.subtree_spans();
    let mut joints: Vec<GpuJoint> = model
        .skeleton
        .joints
        .iter()
        .zip(&spans)
        .map(|(joint, &(enter, exit))| {
            // The palette pass composes a joint onto its parent's palette entry (model pose ×
            // inverse bind): the parent's bind matrix undoes the inverse bind. In f64, so the
            // round trip adds no error of its own beyond the final rounding.
            let fixed = match joint.parent.and_then(|parent| model.skeleton.joints.get(parent)) {
                Some(parent) => (parent.inverse_bind.as_dmat4().inverse() * joint.pre.as_dmat4()).as_mat4(),
                None => joint.pre,
            };
            let rows = fixed.transpose();
            GpuJoint {
                rest_rotation: joint.rest.rotation.to_array(),
                rest_translation: joint.rest.translation.extend(0.0).to_array(),
                rest_scale: joint.rest.scale.extend(0.0).to_array(),
                fixed_rows: [rows.x_axis.to_array(), rows.y_axis.to_array(), rows.z_axis.to_array()],
                links: [joint.parent.map_or(NO_PARENT, |parent| parent as u32), enter, exit, u32::from(fixed != Mat4::IDENTITY)],
            }
        })
        .collect();
    if joints.is_empty() {
        joints.push(GpuJoint {
            rest_rotation: [0.0, 0.0, 0.0, 1.0],
            rest_translation: [0.0; 4],
            rest_scale: [1.0, 1.0, 1.0, 0.0],
            fixed_rows: [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]],
            links: [NO_PARENT, 0, 1, 0],
        });
    }
    joints
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
    /// A second clip over a subtree, e.g. a wave over a walk.
    pub layer: Option<Layer>,
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
    /// as animation a and the clip fading in as b with the fade's progress, or the one clip as a,
    /// each as its animation and the animation's time; and the layer.
    pub fn gpu_data(&self, clips: &[Clip], seconds: f64) -> InstanceData {
        let local = seconds * f64::from(self.speed) + f64::from(self.phase);
        let clip_time = |index: usize| clips.get(index).map(|clip| (clip.animation as u32, clip.animation_time(local)));
        let current = self.clip.and_then(clip_time);
        let fading = self.fade.and_then(|fade| {
            let progress = ((seconds - fade.started) / f64::from(fade.duration)) as f32;
            (progress < 1.0).then(|| clip_time(fade.from_clip).map(|from| (from, progress.max(0.0)))).flatten()
        });
        let ((animation_a, time_a), (animation_b, time_b), blend) = match (current, fading) {
            (Some(current), Some((from, progress))) => (from, current, progress),
            (Some(current), None) => (current, (NO_CLIP, 0.0), 0.0),
            (None, _) => ((NO_CLIP, 0.0), (NO_CLIP, 0.0), 0.0),
        };
        let layer = self.layer.and_then(|layer| clip_time(layer.clip).map(|(animation, time)| (layer, animation, time)));
        let (layer, time_layer, layer_weight) = match layer {
            Some((layer, animation, time)) => (animation | (layer.joint.min(0xFFFF) as u32) << 16, time, layer.weight),
            None => (NO_CLIP, 0.0, 0.0),
        };
        InstanceData {
            position_yaw: self.position.extend(self.yaw).to_array(),
            animations: animation_a | (animation_b << 16),
            time_a,
            time_b,
            blend,
            layer,
            time_layer,
            layer_weight,
            unused: 0,
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
    let duration = model.clips.first().map_or(1.0, |clip| clip.duration);
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
                layer: None,
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

/// The CPU reference of the palette pass for one instance record: sample animation a (and b
/// while it fades in, and the layer), blend in local space, compose, and multiply by the inverse
/// binds: `world × model pose × inverse bind`.
pub fn reference_palette(model: &Model, data: &InstanceData) -> Vec<Mat4> {
    let joint_count = model.skeleton.len();
    let animation_at = |index: u32| model.animations.get(index as usize).filter(|_| index != NO_CLIP);
    let Some(animation_a) = animation_at(data.animation_a()) else {
        return crate::anim::bind_palette(&model.skeleton, data.world());
    };
    let mut poses = vec![JointPose::IDENTITY; joint_count];
    animation_a.sample(&model.skeleton, data.time_a, &mut poses);
    let mut other = vec![JointPose::IDENTITY; joint_count];
    if let (Some(animation_b), true) = (animation_at(data.animation_b()), data.fading()) {
        animation_b.sample(&model.skeleton, data.time_b, &mut other);
        crate::anim::blend_local(&mut poses, &other, data.blend, None);
    }
    if let (Some(layer), true) = (animation_at(data.layer_animation()), data.layered()) {
        layer.sample(&model.skeleton, data.time_layer, &mut other);
        let spans = model.skeleton.subtree_spans();
        let root = (data.layer_joint() as usize).min(joint_count.saturating_sub(1));
        crate::anim::blend_local(&mut poses, &other, data.layer_weight, Some((&spans, root)));
    }
    let mut models = vec![Mat4::IDENTITY; joint_count];
    crate::anim::local_to_model(&model.skeleton, &poses, data.world(), &mut models);
    let mut palette = vec![Mat4::IDENTITY; joint_count];
    crate::anim::palette(&model.skeleton, &models, &mut palette);
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
