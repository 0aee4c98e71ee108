//! Shader modules and pipelines (compute and dynamic-rendering graphics), each owning its layout.

use std::sync::Arc;

use ash::vk;

use super::descriptors::DescriptorSetLayout;
use super::{Check, Device, Error, Result};

struct ShaderModule {
    raw: vk::ShaderModule,
    device: Arc<Device>,
}

impl ShaderModule {
    fn new(device: &Arc<Device>, name: &str, spirv: &[u8]) -> Result<ShaderModule> {
        let words = ash::util::read_spv(&mut std::io::Cursor::new(spirv))
            .map_err(|error| Error::Other(format!("shader {name} is not valid SPIR-V: {error}")))?;
        let info = vk::ShaderModuleCreateInfo::default().code(&words);
        let raw = unsafe { device.raw.create_shader_module(&info, None) }.check("vkCreateShaderModule")?;
        device.set_name(raw, name);
        Ok(ShaderModule { raw, device: device.clone() })
    }
}

impl Drop for ShaderModule {
    fn drop(&mut self) {
        unsafe { self.device.raw.destroy_shader_module(self.raw, None) };
    }
}

/// Specialization constants as (constant_id, u32 value), e.g. workgroup sizes set from Rust consts.
pub type Specialization<'a> = &'a [(u32, u32)];

struct SpecializationData {
    entries: Vec<vk::SpecializationMapEntry>,
    data: Vec<u32>,
}

impl SpecializationData {
    fn new(constants: Specialization<'_>) -> SpecializationData {
        let entries = constants
            .iter()
            .enumerate()
            .map(|(index, &(id, _))| vk::SpecializationMapEntry { constant_id: id, offset: (index * 4) as u32, size: 4 })
            .collect();
        SpecializationData { entries, data: constants.iter().map(|&(_, value)| value).collect() }
    }

    fn info(&self) -> vk::SpecializationInfo<'_> {
        vk::SpecializationInfo::default().map_entries(&self.entries).data(bytemuck::cast_slice(&self.data))
    }
}

pub struct Pipeline {
    pub raw: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    pub bind_point: vk::PipelineBindPoint,
    device: Arc<Device>,
}

fn create_layout(
    device: &Arc<Device>,
    name: &str,
    set_layouts: &[&DescriptorSetLayout],
    push_constants: Option<(vk::ShaderStageFlags, u32)>,
) -> Result<vk::PipelineLayout> {
    let raw_sets: Vec<_> = set_layouts.iter().map(|layout| layout.raw).collect();
    let ranges: Vec<_> = push_constants
        .map(|(stages, size)| vk::PushConstantRange::default().stage_flags(stages).offset(0).size(size))
        .into_iter()
        .collect();
    let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&raw_sets).push_constant_ranges(&ranges);
    let layout = unsafe { device.raw.create_pipeline_layout(&info, None) }.check("vkCreatePipelineLayout")?;
    device.set_name(layout, &format!("{name}.layout"));
    Ok(layout)
}

impl Pipeline {
    pub fn compute(
        device: &Arc<Device>,
        name: &str,
        spirv: &[u8],
        set_layouts: &[&DescriptorSetLayout],
        push_constant_size: u32,
        specialization: Specialization<'_>,
    ) -> Result<Pipeline> {
        let layout = create_layout(device, name, set_layouts, Some((vk::ShaderStageFlags::COMPUTE, push_constant_size)))?;
        let module = ShaderModule::new(device, &format!("{name}.comp"), spirv)?;
        let specialization = SpecializationData::new(specialization);
        let specialization_info = specialization.info();
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module.raw)
            .name(c"main")
            .specialization_info(&specialization_info);
        let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout);
        let created = unsafe { device.raw.create_compute_pipelines(vk::PipelineCache::null(), &[info], None) };
        let pipeline = Pipeline::from_created(device, name, layout, vk::PipelineBindPoint::COMPUTE, created)?;
        Ok(pipeline)
    }

    fn from_created(
        device: &Arc<Device>,
        name: &str,
        layout: vk::PipelineLayout,
        bind_point: vk::PipelineBindPoint,
        created: std::result::Result<Vec<vk::Pipeline>, (Vec<vk::Pipeline>, vk::Result)>,
    ) -> Result<Pipeline> {
        match created {
            Ok(pipelines) => {
                let raw = pipelines[0];
                device.set_name(raw, name);
                Ok(Pipeline { raw, layout, bind_point, device: device.clone() })
            }
            Err((_, result)) => {
                unsafe { device.raw.destroy_pipeline_layout(layout, None) };
                Err(Error::Call { call: "vkCreate*Pipelines", result })
            }
        }
    }

    pub fn graphics(device: &Arc<Device>, name: &str, desc: &GraphicsDesc<'_>) -> Result<Pipeline> {
        let layout = create_layout(device, name, desc.set_layouts, desc.push_constants)?;
        let vertex = ShaderModule::new(device, &format!("{name}.vert"), desc.vertex_shader)?;
        let fragment = desc.fragment_shader.map(|spirv| ShaderModule::new(device, &format!("{name}.frag"), spirv)).transpose()?;
        let geometry = desc.geometry_shader.map(|spirv| ShaderModule::new(device, &format!("{name}.geom"), spirv)).transpose()?;
        let mut stages = vec![vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::VERTEX)
            .module(vertex.raw)
            .name(c"main")];
        if let Some(geometry) = &geometry {
            stages.push(
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::GEOMETRY)
                    .module(geometry.raw)
                    .name(c"main"),
            );
        }
        if let Some(fragment) = &fragment {
            stages.push(
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::FRAGMENT)
                    .module(fragment.raw)
                    .name(c"main"),
            );
        }
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
            .vertex_binding_descriptions(desc.vertex_bindings)
            .vertex_attribute_descriptions(desc.vertex_attributes);
        let input_assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(desc.topology);
        let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
        let mut rasterization = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(desc.polygon_mode)
            .cull_mode(desc.cull_mode)
            .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
            .line_width(1.0);
        if let Some((constant, slope)) = desc.depth_bias {
            rasterization =
                rasterization.depth_bias_enable(true).depth_bias_constant_factor(constant).depth_bias_slope_factor(slope);
        }
        let multisample = vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(desc.samples);
        let depth_stencil = vk::PipelineDepthStencilStateCreateInfo::default()
            .depth_test_enable(desc.depth_format.is_some())
            .depth_write_enable(desc.depth_write)
            .depth_compare_op(desc.depth_compare);
        // Without independentBlend every attachment's state is the same: the second is written
        // (with what the shader leaves there) rather than the pipeline refused.
        let write = |written: bool| {
            let mask = match written || !device.independent_blend {
                true => vk::ColorComponentFlags::RGBA,
                false => vk::ColorComponentFlags::empty(),
            };
            vk::PipelineColorBlendAttachmentState::default().color_write_mask(mask)
        };
        let blend_attachments: Vec<_> =
            desc.color_format.iter().map(|_| write(true)).chain(desc.second_color.map(|(_, written)| write(written))).collect();
        let color_blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
        let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
        let color_formats: Vec<_> = desc.color_format.into_iter().chain(desc.second_color.map(|(format, _)| format)).collect();
        let mut rendering = vk::PipelineRenderingCreateInfo::default()
            .color_attachment_formats(&color_formats)
            .depth_attachment_format(desc.depth_format.unwrap_or(vk::Format::UNDEFINED));
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&input_assembly)
            .viewport_state(&viewport)
            .rasterization_state(&rasterization)
            .multisample_state(&multisample)
            .depth_stencil_state(&depth_stencil)
            .color_blend_state(&color_blend)
            .dynamic_state(&dynamic)
            .layout(layout)
            .push_next(&mut rendering);
        let created = unsafe { device.raw.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) };
        Pipeline::from_created(device, name, layout, vk::PipelineBindPoint::GRAPHICS, created)
    }

    pub fn bind(&self, command_buffer: vk::CommandBuffer) {
        unsafe { self.device.raw.cmd_bind_pipeline(command_buffer, self.bind_point, self.raw) };
    }

    pub fn bind_sets(&self, command_buffer: vk::CommandBuffer, first_set: u32, sets: &[vk::DescriptorSet]) {
        unsafe { self.device.raw.cmd_bind_descriptor_sets(command_buffer, self.bind_point, self.layout, first_set, sets, &[]) };
    }

    pub fn push_constants<T: bytemuck::Pod>(&self, command_buffer: vk::CommandBuffer, stages: vk::ShaderStageFlags, value: &T) {
        unsafe { self.device.raw.cmd_push_constants(command_buffer, self.layout, stages, 0, bytemuck::bytes_of(value)) };
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        unsafe { self.device.raw.destroy_pipeline(self.raw, None) };
        unsafe { self.device.raw.destroy_pipeline_layout(self.layout, None) };
    }
}

/// Everything a graphics pipeline varies by in this renderer. Viewport and scissor are dynamic.
pub struct GraphicsDesc<'a> {
    pub vertex_shader: &'a [u8],
    /// Needs the geometryShader feature (`Device::geometry_shader`).
    pub geometry_shader: Option<&'a [u8]>,
    pub fragment_shader: Option<&'a [u8]>,
    pub vertex_bindings: &'a [vk::VertexInputBindingDescription],
    pub vertex_attributes: &'a [vk::VertexInputAttributeDescription],
    pub topology: vk::PrimitiveTopology,
    pub polygon_mode: vk::PolygonMode,
    pub cull_mode: vk::CullModeFlags,
    /// (constant, slope) depth bias, for shadow maps.
    pub depth_bias: Option<(f32, f32)>,
    pub samples: vk::SampleCountFlags,
    pub color_format: Option<vk::Format>,
    /// A second colour attachment (the forward pass's velocity target) and whether this pipeline
    /// writes it (false: its write mask is empty, the attachment keeps what others wrote).
    pub second_color: Option<(vk::Format, bool)>,
    pub depth_format: Option<vk::Format>,
    pub depth_write: bool,
    pub depth_compare: vk::CompareOp,
    pub set_layouts: &'a [&'a DescriptorSetLayout],
    pub push_constants: Option<(vk::ShaderStageFlags, u32)>,
}
