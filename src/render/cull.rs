//! Cull pass (compute): per instance, its animated bounds at this frame against the camera frustum
//! and the light's shadow volume.
//!
//! Reads: `frame.uniforms[slot]` (planes), `frame.instances[slot]`, `model.animation_cells`, `model.cells`,
//! `model.mesh_ranges`. Writes: `cull.counters` (reset by the frame beforehand; then the palette and
//! skin passes' indirect dispatch arguments and the draw counts), `cull.skin_list`,
//! `cull.camera_draws`, `cull.light_draws`. Expects before it: the counters reset (transfer write ->
//! compute), and last frame's readers of all four finished (write-after-read). The palette, skin,
//! shadow and forward passes need compute write -> indirect/storage read after it.

use std::sync::Arc;

use ash::vk as ash_vk;

use glam::Vec3;

use super::gpu::{frustum_planes, CullPush, InstanceData, NO_CLIP};
use super::FrameScene;
use crate::anim::Aabb;
use crate::model::Model;
use crate::vk::descriptors::{DescriptorSetLayout, Resource};
use crate::vk::pipeline::Pipeline;
use crate::vk::{self, Buffer, Device};

/// Instances per workgroup.
pub const WORKGROUP_SIZE: u32 = 64;

pub const BINDING_FRAME_UNIFORMS: u32 = 0;
pub const BINDING_INSTANCES: u32 = 3;
pub const BINDING_ANIMATION_CELLS: u32 = 4;
pub const BINDING_CELLS: u32 = 5;
pub const BINDING_MESH_RANGES: u32 = 6;
pub const BINDING_COUNTERS: u32 = 7;
pub const BINDING_SKIN_LIST: u32 = 8;
pub const BINDING_CAMERA_DRAWS: u32 = 9;
pub const BINDING_LIGHT_DRAWS: u32 = 10;
pub const BINDING_DEBUG_BOXES: u32 = 11;

pub struct CullPass {
    pub pipeline: Pipeline,
    pub set_layout: DescriptorSetLayout,
    device: Arc<Device>,
}

/// The buffers one cull dispatch binds.
pub struct CullInputs<'a> {
    pub frame_uniforms: &'a Buffer,
    pub instances: &'a Buffer,
    pub animation_cells: &'a Buffer,
    pub cells: &'a Buffer,
    pub mesh_ranges: &'a Buffer,
    pub counters: &'a Buffer,
    pub skin_list: &'a Buffer,
    pub camera_draws: &'a Buffer,
    pub light_draws: &'a Buffer,
    pub debug_boxes: &'a Buffer,
}

impl CullPass {
    pub fn new(device: &Arc<Device>) -> vk::Result<CullPass> {
        let storage = ash_vk::DescriptorType::STORAGE_BUFFER;
        let compute = ash_vk::ShaderStageFlags::COMPUTE;
        let mut bindings = vec![(BINDING_FRAME_UNIFORMS, ash_vk::DescriptorType::UNIFORM_BUFFER, compute)];
        for binding in BINDING_INSTANCES..=BINDING_DEBUG_BOXES {
            bindings.push((binding, storage, compute));
        }
        let set_layout = DescriptorSetLayout::new(device, "cull.set_layout", &bindings)?;
        let pipeline = Pipeline::compute(
            device,
            "cull",
            super::shaders::CULL_COMP,
            &[&set_layout],
            std::mem::size_of::<CullPush>() as u32,
            &[(0, WORKGROUP_SIZE), (1, super::palette::WORKGROUP_SIZE)],
        )?;
        Ok(CullPass { pipeline, set_layout, device: device.clone() })
    }

    pub fn write_set(&self, set: ash_vk::DescriptorSet, inputs: &CullInputs<'_>) {
        crate::vk::descriptors::write_set(
            &self.device,
            set,
            &[
                (BINDING_FRAME_UNIFORMS, Resource::UniformBuffer(inputs.frame_uniforms)),
                (BINDING_INSTANCES, Resource::StorageBuffer(inputs.instances)),
                (BINDING_ANIMATION_CELLS, Resource::StorageBuffer(inputs.animation_cells)),
                (BINDING_CELLS, Resource::StorageBuffer(inputs.cells)),
                (BINDING_MESH_RANGES, Resource::StorageBuffer(inputs.mesh_ranges)),
                (BINDING_COUNTERS, Resource::StorageBuffer(inputs.counters)),
                (BINDING_SKIN_LIST, Resource::StorageBuffer(inputs.skin_list)),
                (BINDING_CAMERA_DRAWS, Resource::StorageBuffer(inputs.camera_draws)),
                (BINDING_LIGHT_DRAWS, Resource::StorageBuffer(inputs.light_draws)),
                (BINDING_DEBUG_BOXES, Resource::StorageBuffer(inputs.debug_boxes)),
            ],
        );
    }

    pub fn record(&self, command_buffer: ash_vk::CommandBuffer, set: ash_vk::DescriptorSet, push: CullPush) {
        self.device.begin_label(command_buffer, c"cull");
        self.pipeline.bind(command_buffer);
        self.pipeline.bind_sets(command_buffer, 0, &[set]);
        self.pipeline.push_constants(command_buffer, ash_vk::ShaderStageFlags::COMPUTE, &push);
        unsafe { self.device.raw.cmd_dispatch(command_buffer, push.instance_count.div_ceil(WORKGROUP_SIZE), 1, 1) };
        self.device.end_label(command_buffer);
    }
}

/// What the camera and the light see of one instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    pub camera: bool,
    pub light: bool,
}

/// The box cull.comp tests for an instance, in model space: its animation's cell at its time (and
/// during a crossfade or with a layer, the other animations' cells too, grown by the blend reach);
/// the bind pose without an animation.
pub fn animated_box(model: &Model, data: &InstanceData) -> Aabb {
    let bind = model.bind_bounds();
    let cell =
        |animation: u32, time: f32| model.bounds.animations.get(animation as usize).map_or(Aabb::EMPTY, |bounds| bounds.at(time));
    if data.animation_a() == NO_CLIP {
        return bind;
    }
    let mut bounds = cell(data.animation_a(), data.time_a);
    if data.fading() {
        bounds = bounds.union(cell(data.animation_b(), data.time_b));
    }
    if data.layered() {
        bounds = bounds.union(cell(data.layer_animation(), data.time_layer));
    }
    if bounds.is_empty() {
        return bind;
    }
    if data.fading() || data.layered() {
        let reach = Vec3::splat(model.bounds.blend_reach);
        bounds = Aabb { min: bounds.min - reach, max: bounds.max + reach };
    }
    bounds
}

/// The CPU reference of cull.comp: which instances of `scene` the camera and the light see.
pub fn reference_visibility(model: &Model, scene: &FrameScene) -> Vec<Seen> {
    let camera = frustum_planes(scene.view_projection);
    let light = frustum_planes(scene.light_view_projection);
    scene
        .instances
        .iter()
        .map(|data| {
            let world = animated_box(model, data).transformed(data.world());
            Seen { camera: box_in_volume(world, &camera), light: box_in_volume(world, &light) }
        })
        .collect()
}

/// False when the box lies wholly behind one of the planes (inside: n·p + d ≥ 0).
pub fn box_in_volume(bounds: Aabb, planes: &[[f32; 4]; 6]) -> bool {
    let (center, half) = (bounds.center(), bounds.size() * 0.5);
    planes.iter().all(|&[x, y, z, d]| {
        let normal = Vec3::new(x, y, z);
        normal.dot(center) + normal.abs().dot(half) + d >= 0.0
    })
}
