//! Raster pass (compute, `--raster compute|auto`, the `compute` strategy with the triangle pass):
//! the triangles too small for the hardware rasterizer to draw well, rasterized in compute straight
//! from the skinned buffer. Skin once, and every consumer reads the same buffer, the rasterizer too.
//!
//! The triangle pass hands each view's small survivors over in `raster.camera_triangles` and
//! `raster.light_triangles` (`RasterTriangle`: instance, vertex base, first index, mesh), growing
//! this pass's indirect dispatch in `cull.counters` as it appends. The pass clears its targets, then
//! one invocation a triangle walks the samples its screen box holds (a top-left fill rule on
//! 1/256-pixel corners, integer edge functions):
//! - the camera's into `raster.visibility`, a 64-bit word a sample of the forward pass's 4× MSAA
//!   (depth bits over the triangle's place in the list, `atomicMin`: the nearest wins). The
//!   forward pass then draws one triangle over the frame that runs per sample (`record_resolve`):
//!   a covered sample's surface is rebuilt from the skinned corners and shaded as forward.frag
//!   shades (shaders/surface.glsl), velocity included, at the raster's depth, and the depth test
//!   merges it with the hardware's samples;
//! - the light's into `raster.shadow_depth`, a 32-bit depth a shadow-map texel with the shadow
//!   pipeline's depth bias added (`atomicMin` on the float's bits), which the shadow pass merges
//!   into its map after its draws (`record_merge`).
//!
//! Reads: `model.indices`, `skinned_vertices[c]`, the lists, `cull.counters` (its dispatch).
//! Writes: `raster.visibility`, `raster.shadow_depth`, `cull.counters.raster_counts`. Its hazards:
//! [`RasterPass::clear_hazards`], [`RasterPass::hazards_before`], [`RasterPass::hazards_after`]; the
//! lists' ([`RasterPass::list_hazards_before`], [`RasterPass::list_hazards_after`]) join the
//! triangle pass's.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use crate::gpu::barrier::{side, Hazard, Side};
use crate::gpu::descriptors::{DescriptorPool, DescriptorSetLayout, Resource};
use crate::gpu::image::Sampler;
use crate::gpu::pipeline::{GraphicsDesc, Pipeline};
use crate::gpu::{self, Buffer, Device};
use crate::render::draw::fullscreen;
use crate::render::model_buffers::GpuModel;
use crate::render::passes::{forward, shadow};
use crate::render::shader_types::{CullCounters, MeshMaterial, RasterPush, RasterTriangle};
use crate::render::{padded_chunks, Shadows, MAX_CHUNKS};

/// Triangles a workgroup takes (RASTER_WORKGROUP in common.glsl; raster.comp's local size).
pub const WORKGROUP: u32 = 64;
/// The most triangles a view's list holds: a dispatch's workgroups stay within the 65,535 every
/// device allows in x. Past it (or past the pools' room) the triangle pass leaves them to the hardware.
pub const MAX_ROOM: u32 = 65_535 * WORKGROUP;

// The compute set (raster.comp), one a view.
const BINDING_INDICES: u32 = 0;
const BINDING_SKINNED: u32 = 1;
const BINDING_TRIANGLES: u32 = 2;
const BINDING_COUNTERS: u32 = 3;
const BINDING_TARGET: u32 = 4;
// The resolve's set (set 1 of raster_resolve.frag).
const RESOLVE_VISIBILITY: u32 = 0;
const RESOLVE_TRIANGLES: u32 = 1;
const RESOLVE_INDICES: u32 = 2;
const RESOLVE_SKINNED: u32 = 3;
const RESOLVE_MESH_MATERIALS: u32 = 4;
const RESOLVE_BASE_COLORS: u32 = 5;
const RESOLVE_NORMAL_MAPS: u32 = 6;

/// What the pass is made from: the model (its indices, materials, meshes' materials), the skin
/// pass's output, the cull pass's counters, the forward pass's frame-set and the skin-inputs set
/// layouts, and the renderer's choices.
pub struct RasterInputs<'a> {
    pub model: &'a GpuModel,
    pub skinned: &'a [Buffer],
    pub counters: &'a Buffer,
    /// Each mesh's material index (`Setup::mesh_draws`).
    pub mesh_materials: &'a [usize],
    pub frame_set_layout: &'a DescriptorSetLayout,
    pub skin_inputs_layout: &'a DescriptorSetLayout,
    /// Triangles the views' culled-index pools hold in all (`Pools::index_room` × chunks / 3).
    pub pool_triangles: u64,
    pub color_format: vk::Format,
    pub shadows: Shadows,
    /// The triangle pass has a light run: the shadow map's small triangles come here too.
    pub light: bool,
    pub facing_sign: f32,
}

/// Whether the resolve's storage buffers fit the fragment stage: the frame set's four, its own
/// four and a chunk each, the skin inputs' eight and a chunk array, and the two colour outputs
/// within maxFragmentCombinedOutputResources (104 on lavapipe: 21 chunks).
pub fn fits(device: &Device, chunks: u32) -> bool {
    4 + 4 + chunks + 8 + MAX_CHUNKS + 2 <= device.limits().max_fragment_combined_output_resources
}

/// The compute pipelines and the sets of one view's run.
struct ViewRun {
    pipeline: Pipeline,
    set: vk::DescriptorSet,
    triangles: Buffer,
}

pub struct RasterPass {
    camera: ViewRun,
    /// The light's run and the shadow-map depth it writes, where the triangle pass has a light run.
    light: Option<(ViewRun, Buffer)>,
    /// Entries each view's list holds.
    pub room: u32,
    /// A 64-bit word a sample of the frame: made for the target's size (`bind_targets`).
    visibility: Option<Buffer>,
    /// The resolve, without the velocity target and with it.
    resolve: [Pipeline; 2],
    resolve_set: vk::DescriptorSet,
    merge: Option<(Pipeline, vk::DescriptorSet)>,
    _mesh_materials: Buffer,
    _layouts: [DescriptorSetLayout; 3],
    _pool: DescriptorPool,
    _sampler: Sampler,
    facing_sign: f32,
    device: Arc<Device>,
}

/// The clear's writes, the later side of the targets' hazards before it.
const CLEAR: Side = side("the clear", Stage::ALL_TRANSFER, Access::TRANSFER_WRITE);
/// The pass's atomics on its targets.
const RASTER_ATOMICS: Side = side(
    "raster atomics",
    Stage::COMPUTE_SHADER,
    Access::from_raw(Access::SHADER_STORAGE_READ.as_raw() | Access::SHADER_STORAGE_WRITE.as_raw()),
);

impl RasterPass {
    pub fn new(device: &Arc<Device>, inputs: &RasterInputs<'_>) -> gpu::Result<RasterPass> {
        let room = (inputs.pool_triangles.min(u64::from(MAX_ROOM)) as u32).max(WORKGROUP);
        let (storage, compute, fragment) =
            (vk::DescriptorType::STORAGE_BUFFER, vk::ShaderStageFlags::COMPUTE, vk::ShaderStageFlags::FRAGMENT);
        let compute_layout = DescriptorSetLayout::with_counts(
            device,
            "raster.set_layout",
            &[
                (BINDING_INDICES, storage, compute, 1),
                (BINDING_SKINNED, storage, compute, MAX_CHUNKS),
                (BINDING_TRIANGLES, storage, compute, 1),
                (BINDING_COUNTERS, storage, compute, 1),
                (BINDING_TARGET, storage, compute, 1),
            ],
        )?;
        let materials = inputs.model.materials.len().max(1) as u32;
        let chunks = inputs.skinned.len() as u32;
        let sampled = vk::DescriptorType::COMBINED_IMAGE_SAMPLER;
        let resolve_layout = DescriptorSetLayout::with_counts(
            device,
            "raster.resolve_set_layout",
            &[
                (RESOLVE_VISIBILITY, storage, fragment, 1),
                (RESOLVE_TRIANGLES, storage, fragment, 1),
                (RESOLVE_INDICES, storage, fragment, 1),
                (RESOLVE_SKINNED, storage, fragment, chunks),
                (RESOLVE_MESH_MATERIALS, storage, fragment, 1),
                (RESOLVE_BASE_COLORS, sampled, fragment, materials),
                (RESOLVE_NORMAL_MAPS, sampled, fragment, materials),
            ],
        )?;
        let merge_layout = DescriptorSetLayout::new(device, "raster.merge_set_layout", &[(0, storage, fragment)])?;
        let pool =
            DescriptorPool::for_sets(device, "raster.pool", &[(&compute_layout, 2), (&resolve_layout, 1), (&merge_layout, 1)])?;
        let triangle_bytes = u64::from(room) * std::mem::size_of::<RasterTriangle>() as u64;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let view_run = |name: &str, shader: &'static [u8]| -> gpu::Result<ViewRun> {
            let triangles =
                Buffer::new(device, &format!("raster.{name}_triangles"), triangle_bytes, usage, MemoryLocation::GpuOnly)?;
            let pipeline = Pipeline::compute(device, &format!("raster.{name}"), shader, &[&compute_layout], RASTER_PUSH, &[])?;
            let set = pool.allocate(&compute_layout, &format!("raster.{name}_set"))?;
            crate::gpu::descriptors::write_set(
                device,
                set,
                &[
                    (BINDING_INDICES, Resource::StorageBuffer(&inputs.model.indices)),
                    (BINDING_SKINNED, Resource::StorageBuffers(padded_chunks(inputs.skinned))),
                    (BINDING_TRIANGLES, Resource::StorageBuffer(&triangles)),
                    (BINDING_COUNTERS, Resource::StorageBuffer(inputs.counters)),
                ],
            );
            Ok(ViewRun { pipeline, set, triangles })
        };
        let camera = view_run("camera", crate::render::shaders::RASTER_COMP)?;
        let light = match inputs.light {
            true => {
                let run = view_run("light", crate::render::shaders::RASTER_COMP_SHADOW)?;
                let texels = u64::from(shadow::SHADOW_MAP_SIZE).pow(2);
                let depth = Buffer::new(
                    device,
                    "raster.shadow_depth",
                    texels * 4,
                    usage | vk::BufferUsageFlags::TRANSFER_DST,
                    MemoryLocation::GpuOnly,
                )?;
                crate::gpu::descriptors::write_set(device, run.set, &[(BINDING_TARGET, Resource::StorageBuffer(&depth))]);
                Some((run, depth))
            }
            false => None,
        };
        let merge = match &light {
            Some((_, depth)) => {
                let set = pool.allocate(&merge_layout, "raster.merge_set")?;
                crate::gpu::descriptors::write_set(device, set, &[(0, Resource::StorageBuffer(depth))]);
                Some((merge_pipeline(device, &merge_layout)?, set))
            }
            None => None,
        };
        let mesh_materials: Vec<MeshMaterial> = inputs
            .mesh_materials
            .iter()
            .map(|&material| MeshMaterial {
                base_color: inputs.model.materials.get(material).map_or([1.0; 4], |material| material.base_color),
                material: [material as u32, 0, 0, 0],
            })
            .collect();
        let mesh_materials = Buffer::with_data(device, "raster.mesh_materials", usage, bytemuck::cast_slice(&mesh_materials))?;
        let sampler = Sampler::linear_repeat(device, "raster.sampler")?;
        let resolve_set = pool.allocate(&resolve_layout, "raster.resolve_set")?;
        let textures = |normal: bool| -> Vec<(vk::ImageView, vk::Sampler)> {
            let views = inputs
                .model
                .materials
                .iter()
                .map(|material| if normal { material.normal_map.view } else { material.texture.view });
            views.map(|view| (view, sampler.raw)).collect()
        };
        crate::gpu::descriptors::write_set(
            device,
            resolve_set,
            &[
                (RESOLVE_TRIANGLES, Resource::StorageBuffer(&camera.triangles)),
                (RESOLVE_INDICES, Resource::StorageBuffer(&inputs.model.indices)),
                (RESOLVE_SKINNED, Resource::StorageBuffers(inputs.skinned.iter().collect())),
                (RESOLVE_MESH_MATERIALS, Resource::StorageBuffer(&mesh_materials)),
                (RESOLVE_BASE_COLORS, Resource::SampledImages(textures(false))),
                (RESOLVE_NORMAL_MAPS, Resource::SampledImages(textures(true))),
            ],
        );
        let resolve =
            [resolve_pipeline(device, inputs, &resolve_layout, false)?, resolve_pipeline(device, inputs, &resolve_layout, true)?];
        Ok(RasterPass {
            camera,
            light,
            room,
            visibility: None,
            resolve,
            resolve_set,
            merge,
            _mesh_materials: mesh_materials,
            _layouts: [compute_layout, resolve_layout, merge_layout],
            _pool: pool,
            _sampler: sampler,
            facing_sign: inputs.facing_sign,
            device: device.clone(),
        })
    }

    /// The visibility buffer for frames of `extent` (after the device is idle: the sets that
    /// name it are rewritten).
    pub fn bind_targets(&mut self, extent: vk::Extent2D) -> gpu::Result<()> {
        self.visibility = None;
        let bytes = u64::from(extent.width) * u64::from(extent.height) * 4 * 8;
        // TRANSFER_SRC: tests read it back (`Renderer::read_back_visibility`).
        let usage =
            vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC;
        let visibility = Buffer::new(&self.device, "raster.visibility", bytes, usage, MemoryLocation::GpuOnly)?;
        let device = &self.device;
        crate::gpu::descriptors::write_set(device, self.camera.set, &[(BINDING_TARGET, Resource::StorageBuffer(&visibility))]);
        crate::gpu::descriptors::write_set(
            device,
            self.resolve_set,
            &[(RESOLVE_VISIBILITY, Resource::StorageBuffer(&visibility))],
        );
        self.visibility = Some(visibility);
        Ok(())
    }

    /// The visibility buffer of the frames so far (None before the first).
    pub fn visibility(&self) -> Option<&Buffer> {
        self.visibility.as_ref()
    }

    /// The lists the triangle pass writes, camera's and light's (for its sets).
    pub fn lists(&self) -> (&Buffer, Option<&Buffer>) {
        (&self.camera.triangles, self.light.as_ref().map(|(run, _)| &run.triangles))
    }

    /// The targets: the visibility buffer, and the shadow depth where the light has a run.
    fn targets(&self) -> Vec<(&'static str, &Buffer)> {
        let visibility = self.visibility.as_ref().expect("bind_targets runs before a frame records");
        let mut targets = vec![("raster.visibility", visibility)];
        targets.extend(self.light.as_ref().map(|(_, depth)| ("raster.shadow_depth", depth)));
        targets
    }

    /// Before the clear: last frame's resolve and merge are done reading the targets.
    pub fn clear_hazards(&self) -> Vec<Hazard> {
        let reads = side("last frame's resolve and merge reads", Stage::FRAGMENT_SHADER, Access::NONE);
        self.targets().into_iter().map(|(name, buffer)| Hazard::buffer(name, buffer, reads, CLEAR)).collect()
    }

    /// Clears the targets to "nothing drawn" (every bit set: the largest value, which atomicMin replaces).
    pub fn record_clear(&self, command_buffer: vk::CommandBuffer) {
        for (_, buffer) in self.targets() {
            unsafe { self.device.raw.cmd_fill_buffer(command_buffer, buffer.raw, 0, vk::WHOLE_SIZE, u32::MAX) };
        }
    }

    /// Before the raster runs: the clear landed. (The lists and the dispatch: `list_hazards_after`.)
    pub fn hazards_before(&self) -> Vec<Hazard> {
        self.targets().into_iter().map(|(name, buffer)| Hazard::buffer(name, buffer, CLEAR, RASTER_ATOMICS)).collect()
    }

    /// After the pass: the resolve (forward) and the merge (shadow) read the targets; the counts
    /// it added are copied out for the CPU.
    pub fn hazards_after(&self, counters: &Buffer) -> Vec<Hazard> {
        let writes = side("raster writes", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_WRITE);
        let reads = side("the resolve's and the merge's reads", Stage::FRAGMENT_SHADER, Access::SHADER_STORAGE_READ);
        let mut hazards: Vec<Hazard> =
            self.targets().into_iter().map(|(name, buffer)| Hazard::buffer(name, buffer, writes, reads)).collect();
        let copy = side("the counts' copy-out", Stage::COPY, Access::TRANSFER_READ);
        hazards.push(Hazard::buffer("cull.counters", counters, writes, copy));
        hazards
    }

    /// Before the triangle pass writes the lists: last frame's raster and resolve are done reading them.
    pub fn list_hazards_before(&self, triangle_writes: Side) -> Vec<Hazard> {
        let reads = side("last frame's raster and resolve reads", Stage::COMPUTE_SHADER | Stage::FRAGMENT_SHADER, Access::NONE);
        self.list_buffers().into_iter().map(|(name, buffer)| Hazard::buffer(name, buffer, reads, triangle_writes)).collect()
    }

    /// After the triangle pass: the raster reads the lists (the resolve the camera's) and
    /// dispatches over the counts it grew.
    pub fn list_hazards_after(&self, triangle_writes: Side, counters: &Buffer) -> Vec<Hazard> {
        let reads = side("raster and resolve reads", Stage::COMPUTE_SHADER | Stage::FRAGMENT_SHADER, Access::SHADER_STORAGE_READ);
        let mut hazards: Vec<Hazard> =
            self.list_buffers().into_iter().map(|(name, buffer)| Hazard::buffer(name, buffer, triangle_writes, reads)).collect();
        let dispatch = side(
            "the raster's indirect dispatch and atomics",
            Stage::DRAW_INDIRECT | Stage::COMPUTE_SHADER,
            Access::INDIRECT_COMMAND_READ | Access::SHADER_STORAGE_READ | Access::SHADER_STORAGE_WRITE,
        );
        hazards.push(Hazard::buffer("cull.counters", counters, triangle_writes, dispatch));
        hazards
    }

    fn list_buffers(&self) -> Vec<(&'static str, &Buffer)> {
        let mut lists = vec![("raster.camera_triangles", &self.camera.triangles)];
        lists.extend(self.light.as_ref().map(|(run, _)| ("raster.light_triangles", &run.triangles)));
        lists
    }

    /// The camera's run, then the light's: one indirect dispatch each over its list (the counts
    /// the triangle pass grew in `counters`).
    pub fn record(&self, command_buffer: vk::CommandBuffer, views: &RasterViews, counters: &Buffer) {
        let device = &self.device;
        device.begin_label(command_buffer, c"raster");
        let at = std::mem::offset_of!(CullCounters, raster) as u64;
        let runs = std::iter::once((&self.camera, &views.camera, views.camera_size))
            .chain(self.light.as_ref().map(|(run, _)| (run, &views.light, [shadow::SHADOW_MAP_SIZE; 2])));
        for (view, (run, view_projection, size)) in runs.enumerate() {
            let (bias_constant, bias_slope) = shadow::DEPTH_BIAS;
            let push = RasterPush {
                view_projection: view_projection.to_cols_array(),
                size,
                facing_sign: self.facing_sign,
                chunk_instances: views.chunk_instances,
                room: self.room,
                bias_constant,
                bias_slope,
                unused: 0,
            };
            run.pipeline.bind(command_buffer);
            run.pipeline.bind_sets(command_buffer, 0, &[run.set]);
            run.pipeline.push_constants(command_buffer, vk::ShaderStageFlags::COMPUTE, &push);
            device.cmd_dispatch_indirect(command_buffer, counters.raw, at + 16 * view as u64);
        }
        device.end_label(command_buffer);
    }

    /// Inside the forward pass, after its draws: the raster's samples shaded and merged by depth.
    /// `debug`: the raster debug view (`DEBUG_RASTER`).
    pub fn record_resolve(
        &self,
        command_buffer: vk::CommandBuffer,
        (frame_set, skin_inputs): (vk::DescriptorSet, vk::DescriptorSet),
        velocity: bool,
        debug: u32,
    ) {
        let pipeline = &self.resolve[usize::from(velocity)];
        self.device.begin_label(command_buffer, c"raster resolve");
        pipeline.bind(command_buffer);
        pipeline.bind_sets(command_buffer, 0, &[frame_set, self.resolve_set, skin_inputs]);
        pipeline.push_constants(command_buffer, vk::ShaderStageFlags::FRAGMENT, &[debug, 0, 0, 0]);
        unsafe { self.device.raw.cmd_draw(command_buffer, 3, 1, 0, 0) };
        self.device.end_label(command_buffer);
    }

    /// Inside the shadow pass, after its draws: the raster's texels merged into the map by depth.
    pub fn record_merge(&self, command_buffer: vk::CommandBuffer) {
        let Some((pipeline, set)) = &self.merge else { return };
        self.device.begin_label(command_buffer, c"raster merge");
        pipeline.bind(command_buffer);
        pipeline.bind_sets(command_buffer, 0, &[*set]);
        pipeline.push_constants(command_buffer, vk::ShaderStageFlags::FRAGMENT, &[shadow::SHADOW_MAP_SIZE, 0, 0, 0]);
        unsafe { self.device.raw.cmd_draw(command_buffer, 3, 1, 0, 0) };
        self.device.end_label(command_buffer);
    }
}

/// What one frame's runs rasterize for: the camera's and the light's view-projections, the
/// frame's size, and the chunks' instances.
pub struct RasterViews {
    pub camera: glam::Mat4,
    pub camera_size: [u32; 2],
    pub light: glam::Mat4,
    pub chunk_instances: u32,
}

const RASTER_PUSH: u32 = std::mem::size_of::<RasterPush>() as u32;

/// The resolve: one triangle over the frame, per sample (the shader reads gl_SampleID), depth
/// tested and written, into the forward pass's attachments (with the velocity target or without).
fn resolve_pipeline(
    device: &Arc<Device>,
    inputs: &RasterInputs<'_>,
    resolve_layout: &DescriptorSetLayout,
    velocity: bool,
) -> gpu::Result<Pipeline> {
    use crate::render::shaders::*;
    let (format, suffix) = forward::velocity_attachment(velocity);
    let fragment = match (inputs.shadows == Shadows::Ray, velocity) {
        (false, false) => RASTER_RESOLVE_FRAG,
        (false, true) => RASTER_RESOLVE_FRAG_VELOCITY,
        (true, false) => RASTER_RESOLVE_FRAG_RAY_SHADOWS,
        (true, true) => RASTER_RESOLVE_FRAG_VELOCITY_RAY_SHADOWS,
    };
    Pipeline::graphics(
        device,
        &format!("raster.resolve{suffix}"),
        &GraphicsDesc {
            samples: forward::SAMPLES,
            color_format: Some(inputs.color_format),
            second_color: Some((format, velocity)),
            depth_format: Some(forward::DEPTH_FORMAT),
            depth_write: true,
            depth_compare: vk::CompareOp::LESS,
            ..fullscreen(fragment, &[inputs.frame_set_layout, resolve_layout, inputs.skin_inputs_layout], 16)
        },
    )
}

/// The shadow merge: one triangle over the map writing the raster's depths, depth tested.
fn merge_pipeline(device: &Arc<Device>, layout: &DescriptorSetLayout) -> gpu::Result<Pipeline> {
    let layouts = [layout];
    let desc = GraphicsDesc {
        depth_format: Some(shadow::SHADOW_FORMAT),
        depth_write: true,
        depth_compare: vk::CompareOp::LESS,
        ..fullscreen(crate::render::shaders::RASTER_MERGE_FRAG, &layouts, 16)
    };
    Pipeline::graphics(device, "raster.merge", &desc)
}
