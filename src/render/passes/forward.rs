//! Forward pass (graphics, 4× MSAA with resolve): the ground plane, then every mesh of every
//! instance from `skinned_vertices`, lit by Lambert + ambient with a PCF shadow lookup; beside the
//! colour, each sample's screen-space motion since last frame into the velocity target (RG16F,
//! pixels), from this frame's and last frame's positions and view-projections.
//!
//! Reads: `skinned_vertices` (vertex input), `model.surfaces` (texture coordinates, vertex colours), `model.indices`, `cull.camera_draws`
//! and its count in `cull.counters`, `frame.uniforms[slot]`, `shadow.depth` (sampled), material
//! textures; for the motion, the previous palette block and `cull.motions` (`compute`, `vertex`) or
//! the slot's previous positions (`cpu`). Writes: `forward.color_msaa`, `forward.depth_msaa`,
//! `forward.velocity_msaa`, and resolves into the target (swapchain image or `offscreen.color`; with
//! the motion pass on, `forward.scene_color`, which that pass reads) and into `forward.velocity`.
//! Its hazards: [`ForwardTargets::hazards_before`] (the attachments) and the image it resolves
//! into (`Renderer::forward_hazards` in frame.rs); its inputs are guarded by the hazards their
//! writers declare after them.

use std::sync::Arc;

use ash::vk;

use crate::gpu::descriptors::{DescriptorPool, DescriptorSetLayout, Resource};
use crate::gpu::image::Sampler;
use crate::gpu::pipeline::{GraphicsDesc, Pipeline};
use crate::gpu::query::SamplesQuery;
use crate::gpu::{self, Buffer, Device, Image};
use crate::render::draw::{set_viewport, skinned_vertex_input, DrawList, VertexSource};
use crate::render::model_buffers::GpuMaterial;
use crate::render::passes::triangles::CulledDraws;
use crate::render::{Shadows, Strategy, FRAMES_IN_FLIGHT};

mod targets;

pub use targets::ForwardTargets;

pub const SAMPLES: vk::SampleCountFlags = vk::SampleCountFlags::TYPE_4;
pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;
pub const CLEAR_COLOR: [f32; 4] = [0.32, 0.40, 0.50, 1.0];
/// The velocity target's format: pixels of motion, x and y (half floats hold ±65504 and, below 64
/// pixels, steps of at most 1/32).
pub const VELOCITY_FORMAT: vk::Format = vk::Format::R16G16_SFLOAT;

/// The second attachment's format in a pipeline drawn inside the forward pass, built with the
/// velocity target or without it (undefined: the pass binds no view there), and the suffix of the
/// pipeline's name.
pub fn velocity_attachment(velocity: bool) -> (vk::Format, &'static str) {
    if velocity {
        (VELOCITY_FORMAT, ".velocity")
    } else {
        (vk::Format::UNDEFINED, "")
    }
}

// Set 0: per frame.
pub const BINDING_FRAME_UNIFORMS: u32 = 0;
pub const BINDING_SHADOW_MAP: u32 = 1;
pub const BINDING_SURFACES: u32 = 2;
pub const BINDING_INSTANCES: u32 = 3;
pub const BINDING_MODELS: u32 = 4;
pub const BINDING_INSTANCE_SLOTS: u32 = 5;
/// `--shadows ray`: the trace pass's top-level structure, which the fragment shaders query.
pub const BINDING_TLAS: u32 = 6;
// Set 1: per material.
pub const BINDING_BASE_COLOR: u32 = 0;
pub const BINDING_NORMAL_MAP: u32 = 1;

/// Where the resolved image goes this frame.
pub struct ResolveTarget {
    pub view: vk::ImageView,
    pub extent: vk::Extent2D,
}

/// What one frame's forward pass draws with, besides the pass's own pipelines and material sets.
#[derive(Clone, Copy)]
pub struct ForwardFrame<'a> {
    pub targets: &'a ForwardTargets,
    pub resolve: &'a ResolveTarget,
    pub frame_set: vk::DescriptorSet,
    pub vertices: VertexSource<'a>,
    /// Where last frame's positions come from: the skin-inputs set (`compute`: the previous
    /// palette block), or the `cpu` strategy's previous positions, per chunk (binding 1). The
    /// `vertex` strategy's `vertices` bring the set.
    pub previous: PreviousPositions<'a>,
    pub indices: &'a Buffer,
    pub draws: DrawList<'a>,
    /// Write the velocity target this frame (something reads it: the motion pass, a test).
    pub velocity: bool,
    /// The triangle pass's survivors (`compute`), drawn instead of `draws` when present.
    pub culled: Option<&'a CulledDraws<'a>>,
    /// Each mesh's material index.
    pub mesh_materials: &'a [usize],
    /// Counts the samples the model's draws write, where the slot has the query.
    pub samples: Option<&'a SamplesQuery>,
}

/// Where the forward vertex shader finds a vertex's position last frame.
#[derive(Clone, Copy)]
pub enum PreviousPositions<'a> {
    /// It skins them (the skin-inputs set: the previous palette block).
    Skinned(vk::DescriptorSet),
    /// A second vertex buffer, one (buffer, byte offset) per chunk (`cpu`).
    Streamed(&'a [(&'a Buffer, u64)]),
    /// The vertex shader skins both from the set `vertices` binds (`vertex`).
    WithVertices,
}

/// The model pipeline's push constants: the material's colour (fragment).
const PUSH_BYTES: u32 = 16;

/// A material's descriptor set and its base colour.
type MaterialSet = (vk::DescriptorSet, [f32; 4]);

/// The model's and the ground's pipelines, for one shape of the pass's attachments.
struct DrawPipelines {
    model: Pipeline,
    ground: Pipeline,
}

pub struct ForwardPass {
    /// Without the velocity target, and with it (`ForwardFrame::velocity`).
    pipelines: [DrawPipelines; 2],
    pub frame_set_layout: DescriptorSetLayout,
    pub material_set_layout: DescriptorSetLayout,
    /// A set a material (its base colour and normal map), and its base colour factor.
    materials: Vec<MaterialSet>,
    _material_pool: DescriptorPool,
    _texture_sampler: Sampler,
    /// Its per-frame sets (one a frame in flight), and the shadow map's comparing sampler in them.
    frame_pool: DescriptorPool,
    shadow_sampler: Sampler,
    device: Arc<Device>,
}

impl ForwardPass {
    /// `strategy` picks the vertex shader: `compute` reads the skinned buffer and skins previous
    /// positions from the skin-inputs set (`skin_inputs`, set 2), `vertex` skins both from that set,
    /// `cpu` reads both from vertex buffers. `cull_mode`: the side of the model's triangles that is
    /// never seen ([`crate::render::hidden_side`]). `materials`: the model's, a set each from the
    /// pass's own pool.
    pub fn new(
        device: &Arc<Device>,
        color_format: vk::Format,
        (strategy, skin_inputs): (Strategy, Option<&DescriptorSetLayout>),
        (cull_mode, shadows): (vk::CullModeFlags, Shadows),
        materials: &[GpuMaterial],
    ) -> gpu::Result<ForwardPass> {
        let frame_set_layout = frame_set_layout(device, shadows)?;
        let material_set_layout = material_set_layout(device)?;
        let pipelines = draw_pipelines(
            device,
            color_format,
            (strategy, skin_inputs),
            (cull_mode, shadows),
            [&frame_set_layout, &material_set_layout],
        )?;
        let (material_sets, material_pool, texture_sampler) = material_sets(device, &material_set_layout, materials)?;
        let frame_pool = DescriptorPool::for_sets(device, "forward.frame_pool", &[(&frame_set_layout, FRAMES_IN_FLIGHT as u32)])?;
        let shadow_sampler = Sampler::shadow_compare(device, "shadow.sampler")?;
        Ok(ForwardPass {
            frame_pool,
            shadow_sampler,
            pipelines,
            frame_set_layout,
            material_set_layout,
            materials: material_sets,
            _material_pool: material_pool,
            _texture_sampler: texture_sampler,
            device: device.clone(),
        })
    }

    /// Frame slot `slot`'s set: its uniforms, the shadow map, the model's texture coordinates and
    /// the instances' data (their tints).
    pub fn frame_set(
        &self,
        slot: usize,
        (uniforms, shadow_map, tlas): (&Buffer, &Image, Option<vk::AccelerationStructureKHR>),
        (surfaces, instances): (&Buffer, &Buffer),
        (models, instance_slots): (&Buffer, &Buffer),
    ) -> gpu::Result<vk::DescriptorSet> {
        let set = self.frame_pool.allocate(&self.frame_set_layout, &format!("forward.frame_set[{slot}]"))?;
        let mut bindings = vec![
            (BINDING_FRAME_UNIFORMS, Resource::UniformBuffer(uniforms)),
            (BINDING_SHADOW_MAP, Resource::SampledImage(shadow_map.view, self.shadow_sampler.raw)),
            (BINDING_SURFACES, Resource::StorageBuffer(surfaces)),
            (BINDING_INSTANCES, Resource::StorageBuffer(instances)),
            (BINDING_MODELS, Resource::StorageBuffer(models)),
            (BINDING_INSTANCE_SLOTS, Resource::StorageBuffer(instance_slots)),
        ];
        bindings.extend(tlas.map(|tlas| (BINDING_TLAS, Resource::AccelerationStructure(tlas))));
        crate::gpu::descriptors::write_set(&self.device, set, &bindings);
        Ok(set)
    }

    /// `overlay` draws after the model, into the same multisampled targets (the debug views).
    pub fn record(&self, command_buffer: vk::CommandBuffer, frame: &ForwardFrame<'_>, overlay: &dyn Fn(vk::CommandBuffer)) {
        let ForwardFrame {
            targets,
            resolve,
            frame_set,
            vertices,
            previous,
            indices,
            draws,
            velocity,
            culled,
            mesh_materials,
            samples,
        } = *frame;
        let DrawPipelines { model, ground } = &self.pipelines[usize::from(velocity)];
        let device = &self.device;
        device.begin_label(command_buffer, c"forward");
        let color_attachment = [
            vk::RenderingAttachmentInfo::default()
                .image_view(targets.color.view)
                .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                .resolve_mode(vk::ResolveModeFlags::AVERAGE)
                .resolve_image_view(resolve.view)
                .resolve_image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::DONT_CARE)
                .clear_value(vk::ClearValue { color: vk::ClearColorValue { float32: CLEAR_COLOR } }),
            // Without the velocity target: no view (the pipelines leave its format undefined).
            if !velocity {
                vk::RenderingAttachmentInfo::default()
            } else {
                vk::RenderingAttachmentInfo::default()
                    .image_view(targets.velocity_msaa.view)
                    .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                    // Float formats resolve by averaging (the only mode besides none): at an edge, the
                    // pixel's samples' mean motion.
                    .resolve_mode(vk::ResolveModeFlags::AVERAGE)
                    .resolve_image_view(targets.velocity.view)
                    .resolve_image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                    .load_op(vk::AttachmentLoadOp::CLEAR)
                    .store_op(vk::AttachmentStoreOp::DONT_CARE)
                    .clear_value(vk::ClearValue { color: vk::ClearColorValue { float32: [0.0; 4] } })
            },
        ];
        let depth_attachment = vk::RenderingAttachmentInfo::default()
            .image_view(targets.depth.view)
            .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::DONT_CARE)
            .clear_value(vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 } });
        let rendering = vk::RenderingInfo::default()
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent: resolve.extent })
            .layer_count(1)
            .color_attachments(&color_attachment)
            .depth_attachment(&depth_attachment);
        device.cmd_begin_rendering(command_buffer, &rendering);
        set_viewport(device, command_buffer, resolve.extent);

        device.begin_label(command_buffer, c"ground");
        ground.bind(command_buffer);
        ground.bind_sets(command_buffer, 0, &[frame_set]);
        unsafe { device.raw.cmd_draw(command_buffer, 6, 1, 0, 0) };
        device.end_label(command_buffer);

        device.begin_label(command_buffer, c"model");
        if let Some(samples) = samples {
            samples.begin(command_buffer);
        }
        model.bind(command_buffer);
        model.bind_sets(command_buffer, 0, &[frame_set]);
        if let VertexSource::SkinInVertexShader { skin_inputs, .. } = vertices {
            model.bind_sets(command_buffer, 2, &[skin_inputs]);
        }
        if let PreviousPositions::Skinned(skin_inputs) = previous {
            model.bind_sets(command_buffer, 2, &[skin_inputs]);
        }
        unsafe { device.raw.cmd_bind_index_buffer(command_buffer, indices.raw, 0, vk::IndexType::UINT32) };
        // Material by material (each model's meshes have their own); within one, run by run (a
        // chunk's instances of the mesh's model: a vertex buffer each).
        for (mesh, &material) in mesh_materials.iter().enumerate() {
            let (material_set, base_color) = self.materials[material];
            model.bind_sets(command_buffer, 1, &[material_set]);
            model.push_constants(command_buffer, vk::ShaderStageFlags::FRAGMENT, &base_color);
            for (run, draws_of_run) in draws.runs.iter().enumerate().filter(|(_, run)| run.owns(mesh as u32)) {
                let chunk = draws_of_run.chunk;
                vertices.bind_chunk(device, command_buffer, chunk);
                if let (true, PreviousPositions::Streamed(chunks)) = (velocity, previous) {
                    if let Some(&(buffer, offset)) = chunks.get(chunk as usize) {
                        unsafe { device.raw.cmd_bind_vertex_buffers(command_buffer, 1, &[buffer.raw], &[offset]) };
                    }
                }
                let model_mesh = mesh as u32 - draws_of_run.first_mesh;
                match culled {
                    Some(culled) => culled.draw(device, command_buffer, run, model_mesh),
                    None => draws.draw(device, command_buffer, run, model_mesh),
                }
            }
        }
        if let Some(samples) = samples {
            samples.end(command_buffer);
        }
        device.end_label(command_buffer);
        overlay(command_buffer);

        device.cmd_end_rendering(command_buffer);
        device.end_label(command_buffer);
    }
}

/// Set 0, the frame's: its uniforms, the shadow map, the model's surfaces, the instance records, the
/// models and the instance slots; with `--shadows ray`, the top-level structure.
fn frame_set_layout(device: &Arc<Device>, shadows: Shadows) -> gpu::Result<DescriptorSetLayout> {
    let graphics = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
    let mut frame_bindings = vec![
        (BINDING_FRAME_UNIFORMS, vk::DescriptorType::UNIFORM_BUFFER, graphics),
        (BINDING_SHADOW_MAP, vk::DescriptorType::COMBINED_IMAGE_SAMPLER, vk::ShaderStageFlags::FRAGMENT),
        // The vertex shaders' surfaces and tints, and the raster resolve's (fragment).
        (BINDING_SURFACES, vk::DescriptorType::STORAGE_BUFFER, graphics),
        (BINDING_INSTANCES, vk::DescriptorType::STORAGE_BUFFER, graphics),
        (BINDING_MODELS, vk::DescriptorType::STORAGE_BUFFER, graphics),
        (BINDING_INSTANCE_SLOTS, vk::DescriptorType::STORAGE_BUFFER, graphics),
    ];
    if shadows == Shadows::Ray {
        frame_bindings.push((BINDING_TLAS, vk::DescriptorType::ACCELERATION_STRUCTURE_KHR, vk::ShaderStageFlags::FRAGMENT));
    }
    DescriptorSetLayout::new(device, "forward.frame_set_layout", &frame_bindings)
}

/// Set 1, a material's: its base colour and normal map.
fn material_set_layout(device: &Arc<Device>) -> gpu::Result<DescriptorSetLayout> {
    DescriptorSetLayout::new(
        device,
        "forward.material_set_layout",
        &[
            (BINDING_BASE_COLOR, vk::DescriptorType::COMBINED_IMAGE_SAMPLER, vk::ShaderStageFlags::FRAGMENT),
            (BINDING_NORMAL_MAP, vk::DescriptorType::COMBINED_IMAGE_SAMPLER, vk::ShaderStageFlags::FRAGMENT),
        ],
    )
}

/// The model's and the ground's pipelines, without the velocity target and with it
/// ([`ForwardPass::pipelines`]): `strategy`'s vertex shaders, the fragment shaders of `shadows`.
fn draw_pipelines(
    device: &Arc<Device>,
    color_format: vk::Format,
    (strategy, skin_inputs): (Strategy, Option<&DescriptorSetLayout>),
    (cull_mode, shadows): (vk::CullModeFlags, Shadows),
    [frame_set_layout, material_set_layout]: [&DescriptorSetLayout; 2],
) -> gpu::Result<[DrawPipelines; 2]> {
    let (bindings, attributes) = skinned_vertex_input();
    let streamed_bindings =
        [bindings[0], vk::VertexInputBindingDescription::default().binding(1).stride(12).input_rate(vk::VertexInputRate::VERTEX)];
    let streamed_attributes = [
        attributes[0],
        attributes[1],
        attributes[2],
        vk::VertexInputAttributeDescription::default().location(3).binding(1).format(vk::Format::R32G32B32_SFLOAT),
    ];
    let set_layouts = [frame_set_layout, material_set_layout];
    let base = GraphicsDesc {
        vertex_shader: crate::render::shaders::FORWARD_VERT,
        geometry_shader: None,
        fragment_shader: Some(crate::render::shaders::FORWARD_FRAG),
        vertex_bindings: &bindings,
        vertex_attributes: &attributes,
        topology: vk::PrimitiveTopology::TRIANGLE_LIST,
        polygon_mode: vk::PolygonMode::FILL,
        // Exporters disagree on winding: only a closed model hides a side (`Model::facing`); when
        // both may show, the fragment shader lights whichever side it sees.
        cull_mode,
        depth_bias: None,
        samples: SAMPLES,
        color_format: Some(color_format),
        // Set per build below.
        second_color: None,
        depth_format: Some(DEPTH_FORMAT),
        depth_write: true,
        depth_compare: vk::CompareOp::LESS,
        set_layouts: &set_layouts,
        push_constants: Some((vk::ShaderStageFlags::FRAGMENT, PUSH_BYTES)),
    };
    // Two of each: without the velocity target (its format undefined, its view none: nothing
    // reads motion this frame) and with it.
    let variants = DrawVariants {
        base,
        streamed: (&streamed_bindings, &streamed_attributes),
        skinned: (&bindings, &attributes),
        strategy,
        skin_inputs,
        set_layouts,
        traced: shadows == Shadows::Ray,
    };
    Ok([variants.build(device, false)?, variants.build(device, true)?])
}

/// What the forward pass's pipelines share, and what each variant changes.
struct DrawVariants<'a> {
    base: GraphicsDesc<'a>,
    /// The `cpu` strategy's vertex inputs with previous positions (a second buffer), and the
    /// skinned vertices' alone.
    streamed: (&'a [vk::VertexInputBindingDescription], &'a [vk::VertexInputAttributeDescription]),
    skinned: (&'a [vk::VertexInputBindingDescription], &'a [vk::VertexInputAttributeDescription]),
    strategy: Strategy,
    skin_inputs: Option<&'a DescriptorSetLayout>,
    /// The frame set's and the material set's layouts.
    set_layouts: [&'a DescriptorSetLayout; 2],
    /// Shadows traced (the fragment shaders' RAY_SHADOWS builds) or from the map.
    traced: bool,
}

impl DrawVariants<'_> {
    /// The model's and the ground's pipelines, writing the velocity target or not.
    fn build(&self, device: &Arc<Device>, velocity: bool) -> gpu::Result<DrawPipelines> {
        let (format, suffix) = velocity_attachment(velocity);
        // Each shader's build (build.rs: variants): with VELOCITY defined, or not; the fragment
        // shaders' with RAY_SHADOWS (ray query) or not.
        let pick = |with: &'static [u8], without: &'static [u8]| if velocity { with } else { without };
        use crate::render::shaders::*;
        let fragment = |[map, map_velocity, ray, ray_velocity]: [&'static [u8]; 4]| match self.traced {
            true => pick(ray_velocity, ray),
            false => pick(map_velocity, map),
        };
        let base = GraphicsDesc {
            vertex_shader: pick(FORWARD_VERT_VELOCITY, FORWARD_VERT),
            fragment_shader: Some(fragment([
                FORWARD_FRAG,
                FORWARD_FRAG_VELOCITY,
                FORWARD_FRAG_RAY_SHADOWS,
                FORWARD_FRAG_VELOCITY_RAY_SHADOWS,
            ])),
            second_color: Some((format, velocity)),
            ..self.base
        };
        // The `cpu` strategy's previous positions are a second vertex buffer.
        let (streamed_bindings, streamed_attributes) = match velocity {
            true => self.streamed,
            false => self.skinned,
        };
        let [frame_set_layout, material_set_layout] = self.set_layouts;
        let model = match (self.strategy, self.skin_inputs) {
            (Strategy::Cpu, _) => Pipeline::graphics(
                device,
                &format!("forward.model.streamed{suffix}"),
                &GraphicsDesc {
                    vertex_shader: pick(FORWARD_STREAMED_VERT_VELOCITY, FORWARD_STREAMED_VERT),
                    vertex_bindings: streamed_bindings,
                    vertex_attributes: streamed_attributes,
                    ..base
                },
            )?,
            (Strategy::Vertex, Some(skin_inputs)) => Pipeline::graphics(
                device,
                &format!("forward.model.vertex_skinning{suffix}"),
                &GraphicsDesc {
                    vertex_shader: pick(FORWARD_SKINNING_VERT_VELOCITY, FORWARD_SKINNING_VERT),
                    vertex_bindings: &[],
                    vertex_attributes: &[],
                    set_layouts: &[frame_set_layout, material_set_layout, skin_inputs],
                    ..base
                },
            )?,
            (_, Some(skin_inputs)) => Pipeline::graphics(
                device,
                &format!("forward.model{suffix}"),
                &GraphicsDesc { set_layouts: &[frame_set_layout, material_set_layout, skin_inputs], ..base },
            )?,
            (_, None) => return Err(gpu::Error::Other("the forward pass skins previous positions from the skin inputs".into())),
        };
        let ground = Pipeline::graphics(
            device,
            &format!("forward.ground{suffix}"),
            &GraphicsDesc {
                vertex_shader: pick(GROUND_VERT_VELOCITY, GROUND_VERT),
                fragment_shader: Some(fragment([
                    GROUND_FRAG,
                    GROUND_FRAG_VELOCITY,
                    GROUND_FRAG_RAY_SHADOWS,
                    GROUND_FRAG_VELOCITY_RAY_SHADOWS,
                ])),
                vertex_bindings: &[],
                vertex_attributes: &[],
                set_layouts: &[frame_set_layout],
                push_constants: None,
                // Seen from above and below alike (the camera orbits).
                cull_mode: vk::CullModeFlags::NONE,
                ..base
            },
        )?;
        Ok(DrawPipelines { model, ground })
    }
}

/// A descriptor set per material (its texture and normal map), the pool they come from and their
/// sampler.
fn material_sets(
    device: &Arc<Device>,
    layout: &DescriptorSetLayout,
    materials: &[GpuMaterial],
) -> gpu::Result<(Vec<MaterialSet>, DescriptorPool, Sampler)> {
    let texture_sampler = Sampler::linear_repeat(device, "material.sampler")?;
    let count = materials.len().max(1) as u32;
    let material_pool = DescriptorPool::for_sets(device, "forward.material_pool", &[(layout, count)])?;
    let mut material_sets = Vec::new();
    for (index, material) in materials.iter().enumerate() {
        let set = material_pool.allocate(layout, &format!("material[{index}].set"))?;
        crate::gpu::descriptors::write_set(
            device,
            set,
            &[
                (BINDING_BASE_COLOR, Resource::SampledImage(material.texture.view, texture_sampler.raw)),
                (BINDING_NORMAL_MAP, Resource::SampledImage(material.normal_map.view, texture_sampler.raw)),
            ],
        );
        material_sets.push((set, material.base_color));
    }
    Ok((material_sets, material_pool, texture_sampler))
}
