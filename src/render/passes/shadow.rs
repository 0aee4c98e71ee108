//! Shadow pass (graphics, depth only): draws `skinned_vertices` from the directional light into
//! `shadow.depth` with an orthographic projection fitted to the scene's animated bounds.
//!
//! Reads: `skinned_vertices` (vertex input), and either the triangle pass's light run
//! (`triangles.light_indices[c]`, `triangles.light_draws`) or `model.indices` with `cull.light_draws`
//! and its count in `cull.counters`, each at the shadow map's level of detail. Writes: `shadow.depth`.
//! Its hazards: [`ShadowPass::hazards_before`] (last frame's sampling done, the map turned to a
//! depth attachment) and [`ShadowPass::hazards_after`] (depth writes to forward's sampling); the
//! skinned vertices are the skin pass's (`SkinPass::hazards_after`).

use std::sync::Arc;

use ash::vk;
use glam::{Mat4, Vec3};

use crate::anim::Aabb;
use crate::gpu::barrier::{side, Hazard};
use crate::gpu::descriptors::DescriptorSetLayout;
use crate::gpu::pipeline::{GraphicsDesc, Pipeline};
use crate::gpu::{self, Buffer, Device, Image, ImageDesc};
use crate::render::draw::{set_viewport, skinned_vertex_input, DrawList, VertexSource};
use crate::render::passes::triangles::CulledDraws;

/// Push constants of the `vertex` strategy's shadow vertex shader.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SkinningShadowPush {
    light_view_projection: [f32; 16],
    chunk_instances: u32,
    unused: [u32; 3],
}

pub const SHADOW_MAP_SIZE: u32 = 2048;
pub const SHADOW_FORMAT: vk::Format = vk::Format::D32_SFLOAT;
/// The shadow pipeline's slope-scaled depth bias against acne on surfaces lit at grazing angles:
/// (constant, slope). The raster pass adds the same to the texels it draws.
pub const DEPTH_BIAS: (f32, f32) = (1.25, 1.75);

/// The light's view-projection: orthographic, looking along `-towards_light`, just covering `bounds`
/// sideways and reaching down to `receiver` (the ground) in depth, so shadows that fall on it land
/// inside the map's depth range.
pub fn light_view_projection(towards_light: Vec3, bounds: Aabb, receiver: Aabb) -> Mat4 {
    let center = bounds.center();
    let radius = bounds.size().length() * 0.5 + 1e-3;
    let up = if towards_light.y.abs() > 0.99 { Vec3::Z } else { Vec3::Y };
    let view = glam::camera::rh::view::look_at_mat4(center + towards_light * radius * 2.0, center, up);
    let in_light = bounds.transformed(view);
    let receiver_in_light = receiver.transformed(view);
    // Right-handed view space looks down -z: near and far are negated z.
    let near = -in_light.max.z - 1e-2;
    let far = -receiver_in_light.min.z.min(in_light.min.z) + 1e-2;
    let margin = radius * 0.02;
    let projection = glam::camera::rh::proj::vulkan::orthographic(
        in_light.min.x - margin,
        in_light.max.x + margin,
        in_light.min.y - margin,
        in_light.max.y + margin,
        near,
        far,
    );
    projection * view
}

pub struct ShadowPass {
    pub pipeline: Pipeline,
    pub depth: Image,
    device: Arc<Device>,
}

impl ShadowPass {
    /// Before the pass: last frame's forward sampling is done; the old contents are discarded.
    pub fn hazards_before(&self) -> Vec<Hazard> {
        use vk::{AccessFlags2 as Access, ImageLayout, PipelineStageFlags2 as Stage};
        let sampling = side("last frame's fragment sampling", Stage::FRAGMENT_SHADER, Access::NONE);
        let depth_writes = side(
            "depth tests and writes",
            Stage::EARLY_FRAGMENT_TESTS | Stage::LATE_FRAGMENT_TESTS,
            Access::DEPTH_STENCIL_ATTACHMENT_READ | Access::DEPTH_STENCIL_ATTACHMENT_WRITE,
        );
        let layouts = (ImageLayout::UNDEFINED, ImageLayout::DEPTH_ATTACHMENT_OPTIMAL);
        vec![Hazard::image("shadow.depth", &self.depth, sampling, depth_writes, layouts)]
    }

    /// After the pass: the forward pass samples the map.
    pub fn hazards_after(&self) -> Vec<Hazard> {
        use vk::{AccessFlags2 as Access, ImageLayout, PipelineStageFlags2 as Stage};
        let depth_writes = side("depth writes", Stage::LATE_FRAGMENT_TESTS, Access::DEPTH_STENCIL_ATTACHMENT_WRITE);
        let sampling = side("forward's fragment sampling", Stage::FRAGMENT_SHADER, Access::SHADER_SAMPLED_READ);
        let layouts = (ImageLayout::DEPTH_ATTACHMENT_OPTIMAL, ImageLayout::SHADER_READ_ONLY_OPTIMAL);
        vec![Hazard::image("shadow.depth", &self.depth, depth_writes, sampling, layouts)]
    }

    /// `skin_inputs`: the `vertex` strategy's set layout, whose vertex shader skins; None reads a
    /// skinned vertex buffer.
    /// `cull_mode`: the side of the model's triangles that is never seen ([`crate::render::hidden_side`]).
    pub fn new(
        device: &Arc<Device>,
        skin_inputs: Option<&DescriptorSetLayout>,
        cull_mode: vk::CullModeFlags,
    ) -> gpu::Result<ShadowPass> {
        let extent = vk::Extent2D { width: SHADOW_MAP_SIZE, height: SHADOW_MAP_SIZE };
        let depth = Image::new(
            device,
            "shadow.depth",
            ImageDesc::depth_attachment(SHADOW_FORMAT, extent, vk::SampleCountFlags::TYPE_1)
                .with_usage(vk::ImageUsageFlags::SAMPLED),
        )?;
        let (bindings, attributes) = skinned_vertex_input();
        let skinning_layouts: Vec<&DescriptorSetLayout> = skin_inputs.into_iter().collect();
        let (name, vertex_shader, push_size) = match skin_inputs {
            None => ("shadow", crate::render::shaders::SHADOW_VERT, 64),
            Some(_) => (
                "shadow.vertex_skinning",
                crate::render::shaders::SHADOW_SKINNING_VERT,
                std::mem::size_of::<SkinningShadowPush>() as u32,
            ),
        };
        let (vertex_bindings, vertex_attributes) = match skin_inputs {
            None => (&bindings[..], &attributes[..1]),
            Some(_) => (&[][..], &[][..]),
        };
        let pipeline = Pipeline::graphics(
            device,
            name,
            &GraphicsDesc {
                vertex_shader,
                geometry_shader: None,
                fragment_shader: None,
                vertex_bindings,
                vertex_attributes,
                topology: vk::PrimitiveTopology::TRIANGLE_LIST,
                polygon_mode: vk::PolygonMode::FILL,
                // The depth test keeps the nearest surface, a front face of a closed model, so skipping
                // the hidden side leaves the same shadow map.
                cull_mode,
                depth_bias: Some(DEPTH_BIAS),
                samples: vk::SampleCountFlags::TYPE_1,
                color_format: None,
                second_color: None,
                depth_format: Some(SHADOW_FORMAT),
                depth_write: true,
                depth_compare: vk::CompareOp::LESS,
                set_layouts: &skinning_layouts,
                push_constants: Some((vk::ShaderStageFlags::VERTEX, push_size)),
            },
        )?;
        Ok(ShadowPass { pipeline, depth, device: device.clone() })
    }

    /// Draws the triangle pass's light run where it ran (`culled`: the triangles that can reach a
    /// texel), else every mesh of every instance the light sees (the cull pass's light list); then
    /// `merge` (the raster pass's texels, where it runs) into the same map.
    pub fn record(
        &self,
        command_buffer: vk::CommandBuffer,
        (vertices, indices): (VertexSource<'_>, &Buffer),
        (draws, culled): (DrawList<'_>, Option<&CulledDraws<'_>>),
        light_view_projection: Mat4,
        merge: &dyn Fn(vk::CommandBuffer),
    ) {
        let device = &self.device;
        device.begin_label(command_buffer, c"shadow");
        let extent = self.depth.extent();
        let depth_attachment = vk::RenderingAttachmentInfo::default()
            .image_view(self.depth.view)
            .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .clear_value(vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 } });
        let rendering = vk::RenderingInfo::default()
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent })
            .layer_count(1)
            .depth_attachment(&depth_attachment);
        device.cmd_begin_rendering(command_buffer, &rendering);
        set_viewport(device, command_buffer, extent);
        self.pipeline.bind(command_buffer);
        match vertices {
            VertexSource::Skinned(_) => {
                let matrix = light_view_projection.to_cols_array();
                self.pipeline.push_constants(command_buffer, vk::ShaderStageFlags::VERTEX, &matrix);
            }
            VertexSource::SkinInVertexShader { skin_inputs, chunk_instances } => {
                let push = SkinningShadowPush {
                    light_view_projection: light_view_projection.to_cols_array(),
                    chunk_instances,
                    unused: [0; 3],
                };
                self.pipeline.push_constants(command_buffer, vk::ShaderStageFlags::VERTEX, &push);
                self.pipeline.bind_sets(command_buffer, 0, &[skin_inputs]);
            }
        }
        match culled {
            Some(culled) => {
                for (run, draws) in culled.list.runs.iter().enumerate() {
                    vertices.bind_chunk(device, command_buffer, draws.chunk);
                    for mesh in 0..draws.mesh_count {
                        culled.draw(device, command_buffer, run, mesh);
                    }
                }
            }
            None => {
                unsafe { device.raw.cmd_bind_index_buffer(command_buffer, indices.raw, 0, vk::IndexType::UINT32) };
                draws.draw_all(device, command_buffer, &vertices);
            }
        }
        merge(command_buffer);
        device.cmd_end_rendering(command_buffer);
        device.end_label(command_buffer);
    }
}
