//! Debug views (`--debug skeleton,normals,shadowmap,wireframe,bounds`): what the skinning and the
//! culling did, drawn into the forward pass's multisampled target after the model, before its
//! resolve, under the label "debug".
//!
//! - `wireframe`: the camera's culled draws again from the skinned buffer, polygon mode LINE, hiding
//!   the side of the triangles the forward pass hides (`hidden_side`).
//! - `normals`: the same draws through a geometry shader that draws each skinned normal as a line.
//! - `skeleton`: per kept instance, joint-to-parent lines at the world joint positions the palette
//!   pass wrote; no depth test, so on top.
//! - `bounds`: per kept instance, the world box the cull pass tested (green: the camera sees it;
//!   orange: only the light).
//! - `shadowmap`: the light's depth map in the bottom-left corner.
//!
//! Reads: `skinned_vertices[c]` (vertex input), `joint_positions`, `model.joint_parents`,
//! `cull.skin_list`, `cull.debug_boxes`, `cull.counters` (indirect), `shadow.depth` (sampled).
//! All are written before the forward pass and guarded by the hazards their writers declare
//! (`joint_positions` by `PalettePass::hazards_after`, `cull.debug_boxes` by
//! `CullPass::hazards_after`, both to vertex-shader reads).

use std::sync::Arc;

use ash::vk;
use glam::Mat4;

use crate::gpu::descriptors::{DescriptorPool, DescriptorSetLayout, Resource};
use crate::gpu::image::Sampler;
use crate::gpu::pipeline::{GraphicsDesc, Pipeline};
use crate::gpu::{self, Buffer, Device};
use crate::render::draw::{set_viewport, skinned_vertex_input, DrawList, VertexSource};
use crate::render::passes::forward::{velocity_attachment, DEPTH_FORMAT, SAMPLES};
use crate::render::{Shadows, Strategy};

/// Which debug views are on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DebugViews {
    pub skeleton: bool,
    pub normals: bool,
    pub shadowmap: bool,
    pub wireframe: bool,
    pub bounds: bool,
    /// The velocity target as colours (drawn by the motion pass, not inside the forward pass).
    pub motion: bool,
    /// What each rasterizer drew, in its colour (the forward pass's and the raster resolve's
    /// shaders, by a flag in the frame's uniforms): the hardware's blue, the compute pass's orange.
    pub raster: bool,
}

impl DebugViews {
    pub const NAMES: [&'static str; 7] = ["skeleton", "normals", "shadowmap", "wireframe", "bounds", "motion", "raster"];

    /// A comma-separated list of view names.
    pub fn parse(text: &str) -> Result<DebugViews, String> {
        let mut views = DebugViews::default();
        for name in text.split(',').map(str::trim).filter(|name| !name.is_empty()) {
            *views
                .flag_mut(name)
                .ok_or_else(|| format!("unknown debug view '{name}': expected some of {}", DebugViews::NAMES.join(", ")))? = true;
        }
        Ok(views)
    }

    fn flag_mut(&mut self, name: &str) -> Option<&mut bool> {
        match name {
            "skeleton" => Some(&mut self.skeleton),
            "normals" => Some(&mut self.normals),
            "shadowmap" => Some(&mut self.shadowmap),
            "wireframe" => Some(&mut self.wireframe),
            "bounds" => Some(&mut self.bounds),
            "motion" => Some(&mut self.motion),
            "raster" => Some(&mut self.raster),
            _ => None,
        }
    }

    /// Flips one view (the viewer's F1-F5).
    pub fn toggle(&mut self, name: &str) {
        if let Some(flag) = self.flag_mut(name) {
            *flag = !*flag;
        }
    }

    /// Some view that the debug pass draws inside the forward pass (all but `motion` and `raster`) is on.
    pub fn drawn_in_forward(&self) -> bool {
        self.skeleton || self.normals || self.shadowmap || self.wireframe || self.bounds
    }

    /// The names of the views that are on.
    pub fn names(&self) -> Vec<&'static str> {
        let flags = [self.skeleton, self.normals, self.shadowmap, self.wireframe, self.bounds, self.motion, self.raster];
        DebugViews::NAMES.iter().zip(flags).filter(|(_, on)| *on).map(|(name, _)| *name).collect()
    }

    /// The views a strategy can show: normals and wireframe read a skinned buffer (not `vertex`),
    /// the skeleton reads the palette pass's joints (not `cpu`).
    pub fn check(&self, strategy: Strategy, shadows: Shadows) -> Result<(), String> {
        if shadows == Shadows::Ray && self.shadowmap {
            return Err("the shadowmap view shows the shadow map, which --shadows ray does not draw".into());
        }
        if strategy == Strategy::Vertex && (self.normals || self.wireframe) {
            return Err("the normals and wireframe views read the skinned buffer, which the vertex strategy has not".into());
        }
        if strategy == Strategy::Cpu && self.skeleton {
            return Err("the skeleton view reads the palette pass's joints, which the cpu strategy does not run".into());
        }
        Ok(())
    }
}

pub const BINDING_JOINT_POSITIONS: u32 = 0;
pub const BINDING_JOINT_PARENTS: u32 = 1;
pub const BINDING_SKIN_LIST: u32 = 2;
pub const BINDING_BOXES: u32 = 3;
pub const BINDING_SHADOW_DEPTH: u32 = 4;

/// The buffers and image the debug set binds.
pub struct DebugInputs<'a> {
    pub joint_positions: &'a Buffer,
    pub joint_parents: &'a Buffer,
    pub skin_list: &'a Buffer,
    pub boxes: &'a Buffer,
    /// The shadow map, which the pass samples with its own nearest-texel sampler.
    pub shadow_view: vk::ImageView,
}

/// What one frame's debug drawing needs.
pub struct DebugFrame<'a> {
    pub views: DebugViews,
    pub frame_set: vk::DescriptorSet,
    pub vertices: VertexSource<'a>,
    pub indices: &'a Buffer,
    pub camera_draws: DrawList<'a>,
    pub counters: &'a Buffer,
    pub skeleton_offset: u64,
    pub box_offset: u64,
    pub view_projection: Mat4,
    pub joint_count: u32,
    /// Length of a normal line, world units.
    pub normal_length: f32,
    pub extent: vk::Extent2D,
    /// The forward pass writes its velocity target this frame.
    pub velocity: bool,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct LinePush {
    view_projection: [f32; 16],
    value: u32,
    unused: [u32; 3],
}

/// The views' pipelines, for one shape of the forward pass's attachments.
struct DebugPipelines {
    wireframe: Pipeline,
    normals: Option<Pipeline>,
    skeleton: Pipeline,
    bounds: Pipeline,
    shadowmap: Pipeline,
}

pub struct DebugPass {
    /// Without the forward pass's velocity target, and with it (`DebugFrame::velocity`).
    pipelines: [DebugPipelines; 2],
    pub set_layout: DescriptorSetLayout,
    /// Its one set, over `DebugInputs`, from its own pool.
    set: vk::DescriptorSet,
    _pool: DescriptorPool,
    _shadow_sampler: Sampler,
    device: Arc<Device>,
}

impl DebugPass {
    /// `frame_set_layout`: the forward pass's frame set (set 0 of every debug pipeline).
    /// `cull_mode`: the side of the model's triangles the forward pass hides (`hidden_side`); the
    /// wireframe hides it too, so it outlines what the image shows.
    pub fn new(
        device: &Arc<Device>,
        color_format: vk::Format,
        frame_set_layout: &DescriptorSetLayout,
        cull_mode: vk::CullModeFlags,
        inputs: &DebugInputs<'_>,
    ) -> gpu::Result<DebugPass> {
        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let vertex = vk::ShaderStageFlags::VERTEX;
        let set_layout = DescriptorSetLayout::new(
            device,
            "debug.set_layout",
            &[
                (BINDING_JOINT_POSITIONS, storage, vertex),
                (BINDING_JOINT_PARENTS, storage, vertex),
                (BINDING_SKIN_LIST, storage, vertex),
                (BINDING_BOXES, storage, vertex),
                (BINDING_SHADOW_DEPTH, vk::DescriptorType::COMBINED_IMAGE_SAMPLER, vk::ShaderStageFlags::FRAGMENT),
            ],
        )?;
        let (bindings, attributes) = skinned_vertex_input();
        // Two of each, as the forward pass has: without its velocity target and with it.
        let build = |velocity: bool| -> gpu::Result<DebugPipelines> {
            let (format, suffix) = velocity_attachment(velocity);
            let lines_only = GraphicsDesc {
                vertex_shader: crate::render::shaders::DEBUG_SKELETON_VERT,
                geometry_shader: None,
                fragment_shader: Some(crate::render::shaders::DEBUG_LINES_FRAG),
                vertex_bindings: &[],
                vertex_attributes: &[],
                topology: vk::PrimitiveTopology::LINE_LIST,
                polygon_mode: vk::PolygonMode::FILL,
                cull_mode: vk::CullModeFlags::NONE,
                depth_bias: None,
                samples: SAMPLES,
                color_format: Some(color_format),
                // Drawn inside the forward pass, whose velocity target (when it has one) they leave as
                // the model wrote it.
                second_color: Some((format, false)),
                depth_format: Some(DEPTH_FORMAT),
                depth_write: false,
                depth_compare: vk::CompareOp::ALWAYS,
                set_layouts: &[frame_set_layout, &set_layout],
                push_constants: Some((vk::ShaderStageFlags::VERTEX, std::mem::size_of::<LinePush>() as u32)),
            };
            let skeleton = Pipeline::graphics(device, &format!("debug.skeleton{suffix}"), &lines_only)?;
            let bounds = Pipeline::graphics(
                device,
                &format!("debug.bounds{suffix}"),
                &GraphicsDesc {
                    vertex_shader: crate::render::shaders::DEBUG_BOUNDS_VERT,
                    depth_compare: vk::CompareOp::LESS_OR_EQUAL,
                    ..lines_only
                },
            )?;
            let wireframe = Pipeline::graphics(
                device,
                &format!("debug.wireframe{suffix}"),
                &GraphicsDesc {
                    vertex_shader: crate::render::shaders::DEBUG_WIREFRAME_VERT,
                    vertex_bindings: &bindings,
                    vertex_attributes: &attributes[..1],
                    topology: vk::PrimitiveTopology::TRIANGLE_LIST,
                    // Lines over their own triangles: pulled towards the camera so they win the depth test.
                    polygon_mode: if device.fill_mode_non_solid { vk::PolygonMode::LINE } else { vk::PolygonMode::FILL },
                    cull_mode,
                    depth_bias: Some((-2.0, -1.0)),
                    depth_compare: vk::CompareOp::LESS_OR_EQUAL,
                    push_constants: None,
                    ..lines_only
                },
            )?;
            let normals = if device.geometry_shader {
                Some(Pipeline::graphics(
                    device,
                    &format!("debug.normals{suffix}"),
                    &GraphicsDesc {
                        vertex_shader: crate::render::shaders::DEBUG_NORMALS_VERT,
                        geometry_shader: Some(crate::render::shaders::DEBUG_NORMALS_GEOM),
                        vertex_bindings: &bindings,
                        vertex_attributes: &attributes[..2],
                        topology: vk::PrimitiveTopology::TRIANGLE_LIST,
                        depth_compare: vk::CompareOp::LESS_OR_EQUAL,
                        push_constants: Some((vk::ShaderStageFlags::GEOMETRY, std::mem::size_of::<LinePush>() as u32)),
                        ..lines_only
                    },
                )?)
            } else {
                None
            };
            let shadowmap = Pipeline::graphics(
                device,
                &format!("debug.shadowmap{suffix}"),
                &GraphicsDesc {
                    vertex_shader: crate::render::shaders::DEBUG_SHADOWMAP_VERT,
                    fragment_shader: Some(crate::render::shaders::DEBUG_SHADOWMAP_FRAG),
                    topology: vk::PrimitiveTopology::TRIANGLE_LIST,
                    push_constants: None,
                    ..lines_only
                },
            )?;
            Ok(DebugPipelines { wireframe, normals, skeleton, bounds, shadowmap })
        };
        let pipelines = [build(false)?, build(true)?];
        let shadow_sampler = Sampler::nearest_clamp(device, "debug.shadow_sampler")?;
        let (pool, set) = DescriptorPool::with_one_set(
            device,
            "debug",
            &set_layout,
            &[
                (BINDING_JOINT_POSITIONS, Resource::StorageBuffer(inputs.joint_positions)),
                (BINDING_JOINT_PARENTS, Resource::StorageBuffer(inputs.joint_parents)),
                (BINDING_SKIN_LIST, Resource::StorageBuffer(inputs.skin_list)),
                (BINDING_BOXES, Resource::StorageBuffer(inputs.boxes)),
                (BINDING_SHADOW_DEPTH, Resource::SampledImage(inputs.shadow_view, shadow_sampler.raw)),
            ],
        )?;
        Ok(DebugPass { pipelines, set_layout, set, _pool: pool, _shadow_sampler: shadow_sampler, device: device.clone() })
    }

    /// Turns off the views this device cannot draw (the normals view without geometry shaders, as
    /// on MoltenVK), and says which and why.
    pub fn without_missing(&self, views: &mut DebugViews) -> Option<String> {
        if views.normals && self.pipelines[0].normals.is_none() {
            views.normals = false;
            return Some("the normals view is off: it needs geometry shaders, which this device lacks".into());
        }
        None
    }

    pub fn record(&self, command_buffer: vk::CommandBuffer, frame: &DebugFrame<'_>) {
        let device = &self.device;
        let views = frame.views;
        if !views.drawn_in_forward() {
            return;
        }
        device.begin_label(command_buffer, c"debug");
        let DebugPipelines { wireframe, normals, skeleton, bounds, shadowmap } = &self.pipelines[usize::from(frame.velocity)];
        let push = |value: u32| LinePush { view_projection: frame.view_projection.to_cols_array(), value, unused: [0; 3] };
        let sets = [frame.frame_set, self.set];
        let skinned_draws = |pipeline: &Pipeline| {
            pipeline.bind(command_buffer);
            pipeline.bind_sets(command_buffer, 0, &sets);
            unsafe { device.raw.cmd_bind_index_buffer(command_buffer, frame.indices.raw, 0, vk::IndexType::UINT32) };
            frame.camera_draws.draw_all(device, command_buffer, &frame.vertices);
        };
        if views.wireframe {
            device.begin_label(command_buffer, c"wireframe");
            skinned_draws(wireframe);
            device.end_label(command_buffer);
        }
        if let (true, Some(normals)) = (views.normals, normals) {
            device.begin_label(command_buffer, c"normals");
            let push = LinePush { value: frame.normal_length.to_bits(), ..push(0) };
            normals.bind(command_buffer);
            normals.push_constants(command_buffer, vk::ShaderStageFlags::GEOMETRY, &push);
            skinned_draws(normals);
            device.end_label(command_buffer);
        }
        if views.bounds {
            device.begin_label(command_buffer, c"bounds");
            bounds.bind(command_buffer);
            bounds.bind_sets(command_buffer, 0, &sets);
            bounds.push_constants(command_buffer, vk::ShaderStageFlags::VERTEX, &push(0));
            unsafe { device.raw.cmd_draw_indirect(command_buffer, frame.counters.raw, frame.box_offset, 1, 16) };
            device.end_label(command_buffer);
        }
        if views.skeleton {
            device.begin_label(command_buffer, c"skeleton");
            skeleton.bind(command_buffer);
            skeleton.bind_sets(command_buffer, 0, &sets);
            skeleton.push_constants(command_buffer, vk::ShaderStageFlags::VERTEX, &push(frame.joint_count));
            unsafe { device.raw.cmd_draw_indirect(command_buffer, frame.counters.raw, frame.skeleton_offset, 1, 16) };
            device.end_label(command_buffer);
        }
        if views.shadowmap {
            device.begin_label(command_buffer, c"shadowmap");
            // A square in the bottom-left corner, a third of the target's height.
            let side = (frame.extent.height / 3).max(1) as f32;
            let viewport = vk::Viewport {
                x: 8.0,
                y: frame.extent.height as f32 - side - 8.0,
                width: side,
                height: side,
                min_depth: 0.0,
                max_depth: 1.0,
            };
            unsafe { device.raw.cmd_set_viewport(command_buffer, 0, &[viewport]) };
            shadowmap.bind(command_buffer);
            shadowmap.bind_sets(command_buffer, 0, &sets);
            unsafe { device.raw.cmd_draw(command_buffer, 6, 1, 0, 0) };
            set_viewport(device, command_buffer, frame.extent);
            device.end_label(command_buffer);
        }
        device.end_label(command_buffer);
    }
}
