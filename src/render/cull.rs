//! Cull pass (compute): per instance, its animated bounds at this frame against the camera frustum
//! and the light's shadow volume.
//!
//! Reads: `frame.uniforms[slot]` (planes), `frame.instances[slot]`, `model.animation_cells`, `model.cells`,
//! `model.mesh_ranges`. Writes (and owns): `cull.counters` (reset first; then the palette and skin
//! passes' indirect dispatch arguments and the draw counts), `cull.skin_list`, `cull.camera_draws`,
//! `cull.light_draws`, `cull.debug_boxes`. Its hazards: [`CullPass::reset_hazards`],
//! [`CullPass::hazards_before`], [`CullPass::hazards_after`].

use std::sync::Arc;

use ash::vk;

use glam::Vec3;

use super::shader_types::{frustum_planes, CullCounters, CullPush, InstanceData, NO_CLIP};
use super::FrameScene;
use crate::anim::Aabb;
use crate::gpu::barrier::{side, Hazard, Side};
use crate::gpu::descriptors::{DescriptorSetLayout, Resource};
use crate::gpu::pipeline::Pipeline;
use crate::gpu::{self, Buffer, Device};
use crate::model::Model;
use gpu_allocator::MemoryLocation;
use vk::{AccessFlags2 as Access, BufferUsageFlags as Usage, PipelineStageFlags2 as Stage};

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
    /// The counts as indirect arguments: palette and skin dispatches, per-chunk draw counts.
    pub counters: Buffer,
    /// The instances to animate and skin, in the order found.
    pub skin_list: Buffer,
    /// Per-mesh draw commands (chunk-major, then mesh-major, room for every instance).
    pub camera_draws: Buffer,
    pub light_draws: Buffer,
    /// Each kept instance's world box, for the debug views.
    pub debug_boxes: Buffer,
    device: Arc<Device>,
}

/// The per-frame buffers one cull dispatch binds besides its own.
pub struct CullInputs<'a> {
    pub frame_uniforms: &'a Buffer,
    pub instances: &'a Buffer,
    pub animation_cells: &'a Buffer,
    pub cells: &'a Buffer,
    pub mesh_ranges: &'a Buffer,
}

/// The counters' reset (`vkCmdUpdateBuffer`: a transfer command, which sync2 files under the
/// clear stage; all transfer stages cover it on every layer version).
const RESET: Side = side("the reset", Stage::ALL_TRANSFER, Access::TRANSFER_WRITE);

/// Cull writes, the earlier side of every hazard on its outputs.
const CULL_WRITES: Side = side("cull writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);

impl CullPass {
    /// The pass and its outputs, for `instance_count` instances whose draw commands take
    /// `command_bytes` per list.
    pub fn new(device: &Arc<Device>, instance_count: u32, command_bytes: u64) -> gpu::Result<CullPass> {
        // TRANSFER_SRC: tests and debugging read them back.
        let indirect_storage = Usage::STORAGE_BUFFER | Usage::INDIRECT_BUFFER | Usage::TRANSFER_SRC;
        let storage = Usage::STORAGE_BUFFER | Usage::TRANSFER_SRC;
        let buffer = |name: &str, size: u64, usage| Buffer::new(device, name, size, usage, MemoryLocation::GpuOnly);
        let counters =
            buffer("cull.counters", std::mem::size_of::<CullCounters>() as u64, indirect_storage | Usage::TRANSFER_DST)?;
        let skin_list = buffer("cull.skin_list", 4 * u64::from(instance_count), storage)?;
        let camera_draws = buffer("cull.camera_draws", command_bytes, indirect_storage)?;
        let light_draws = buffer("cull.light_draws", command_bytes, indirect_storage)?;
        let debug_boxes = buffer("cull.debug_boxes", 32 * u64::from(instance_count), storage)?;

        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let compute = vk::ShaderStageFlags::COMPUTE;
        let mut bindings = vec![(BINDING_FRAME_UNIFORMS, vk::DescriptorType::UNIFORM_BUFFER, compute)];
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
        Ok(CullPass { pipeline, set_layout, counters, skin_list, camera_draws, light_draws, debug_boxes, device: device.clone() })
    }

    pub fn write_set(&self, set: vk::DescriptorSet, inputs: &CullInputs<'_>) {
        crate::gpu::descriptors::write_set(
            &self.device,
            set,
            &[
                (BINDING_FRAME_UNIFORMS, Resource::UniformBuffer(inputs.frame_uniforms)),
                (BINDING_INSTANCES, Resource::StorageBuffer(inputs.instances)),
                (BINDING_ANIMATION_CELLS, Resource::StorageBuffer(inputs.animation_cells)),
                (BINDING_CELLS, Resource::StorageBuffer(inputs.cells)),
                (BINDING_MESH_RANGES, Resource::StorageBuffer(inputs.mesh_ranges)),
                (BINDING_COUNTERS, Resource::StorageBuffer(&self.counters)),
                (BINDING_SKIN_LIST, Resource::StorageBuffer(&self.skin_list)),
                (BINDING_CAMERA_DRAWS, Resource::StorageBuffer(&self.camera_draws)),
                (BINDING_LIGHT_DRAWS, Resource::StorageBuffer(&self.light_draws)),
                (BINDING_DEBUG_BOXES, Resource::StorageBuffer(&self.debug_boxes)),
            ],
        );
    }

    /// Before the counters' reset: last frame's readers are done with them.
    pub fn reset_hazards(&self) -> Vec<Hazard> {
        let readers = side(
            "last frame's indirect reads, palette read and copy-out",
            Stage::DRAW_INDIRECT | Stage::COMPUTE_SHADER | Stage::COPY,
            Access::NONE,
        );
        vec![Hazard::buffer("cull.counters", &self.counters, readers, RESET)]
    }

    /// Zeroes the counts and writes the constant parts of the indirect arguments.
    pub fn record_reset(&self, command_buffer: vk::CommandBuffer, reset: &CullCounters) {
        unsafe { self.device.raw.cmd_update_buffer(command_buffer, self.counters.raw, 0, bytemuck::bytes_of(reset)) };
    }

    /// Before the pass: the reset landed, and last frame's readers of the outputs are done.
    pub fn hazards_before(&self) -> Vec<Hazard> {
        let counting =
            side("cull's atomic counting", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_READ | Access::SHADER_STORAGE_WRITE);
        let readers = side(
            "last frame's compute, indirect and debug-view reads",
            Stage::COMPUTE_SHADER | Stage::DRAW_INDIRECT | Stage::VERTEX_SHADER,
            Access::NONE,
        );
        vec![
            Hazard::buffer("cull.counters", &self.counters, RESET, counting),
            Hazard::buffers(
                "cull.skin_list, camera_draws, light_draws, debug_boxes",
                [&self.skin_list, &self.camera_draws, &self.light_draws, &self.debug_boxes],
                readers,
                CULL_WRITES,
            ),
        ]
    }

    /// After the pass: its outputs to every reader this frame.
    pub fn hazards_after(&self) -> Vec<Hazard> {
        let arguments = side(
            "indirect arguments, the palette pass's count, copies",
            Stage::DRAW_INDIRECT | Stage::COMPUTE_SHADER | Stage::COPY,
            Access::INDIRECT_COMMAND_READ | Access::SHADER_STORAGE_READ | Access::TRANSFER_READ,
        );
        let lists = side(
            "palette, skin and triangle reads; debug views",
            Stage::COMPUTE_SHADER | Stage::VERTEX_SHADER,
            Access::SHADER_STORAGE_READ,
        );
        let draws = side("indirect draws", Stage::DRAW_INDIRECT, Access::INDIRECT_COMMAND_READ);
        vec![
            Hazard::buffer("cull.counters", &self.counters, CULL_WRITES, arguments),
            Hazard::buffers("cull.skin_list, debug_boxes", [&self.skin_list, &self.debug_boxes], CULL_WRITES, lists),
            Hazard::buffers("cull.camera_draws, light_draws", [&self.camera_draws, &self.light_draws], CULL_WRITES, draws),
        ]
    }

    /// Copies the counts into a slot's host-visible buffer (read after its fence).
    pub fn record_counts_copy(&self, command_buffer: vk::CommandBuffer, readback: &Buffer) {
        let region = vk::BufferCopy::default().size(std::mem::size_of::<CullCounters>() as u64);
        unsafe { self.device.raw.cmd_copy_buffer(command_buffer, self.counters.raw, readback.raw, &[region]) };
    }

    pub fn record(&self, command_buffer: vk::CommandBuffer, set: vk::DescriptorSet, push: CullPush) {
        self.device.begin_label(command_buffer, c"cull");
        self.pipeline.bind(command_buffer);
        self.pipeline.bind_sets(command_buffer, 0, &[set]);
        self.pipeline.push_constants(command_buffer, vk::ShaderStageFlags::COMPUTE, &push);
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
