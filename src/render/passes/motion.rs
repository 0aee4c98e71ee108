//! Motion pass (graphics, one full-screen triangle): what proves the velocity target. With
//! `--motion-blur on` each pixel of the frame's image averages the forward pass's resolved colour
//! along the pixel's own motion; with the `motion` debug view it shows the motion as colours. Off
//! (both), it does not run and the forward pass resolves straight into the frame's image.
//!
//! Reads: `forward.scene_color` and `forward.velocity` (sampled). Writes: the frame's image
//! (swapchain image or `offscreen.color`). Its hazards: [`MotionPass::hazards_before`] and the
//! image it writes (`record_frame` in frame.rs adds the image's).

use std::sync::Arc;

use ash::vk;
use vk::{AccessFlags2 as Access, ImageLayout, PipelineStageFlags2 as Stage};

use crate::gpu::barrier::{side, Hazard, Side};
use crate::gpu::descriptors::{DescriptorPool, DescriptorSetLayout, Resource};
use crate::gpu::image::Sampler;
use crate::gpu::pipeline::{GraphicsDesc, Pipeline};
use crate::gpu::{self, Device};
use crate::render::draw::{fullscreen, set_viewport};
use crate::render::passes::forward::ForwardTargets;

pub const BINDING_SCENE_COLOR: u32 = 0;
pub const BINDING_VELOCITY: u32 = 1;

/// The blur's shutter: the fraction of a frame's motion a pixel is smeared over (a film camera's
/// 180° shutter, open half the frame).
pub const SHUTTER: f32 = 0.5;
/// The longest streak, pixels: motion beyond it (a cut the renderer was not told of) stays short.
pub const MAX_STREAK_PIXELS: f32 = 48.0;
/// The motion debug view's full colour, pixels of motion a frame.
pub const FULL_VIEW_PIXELS: f32 = 8.0;

/// The motion pass's push constants (motion.frag).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MotionPush {
    pub shutter: f32,
    pub max_pixels: f32,
    /// 1: the debug view.
    pub show: u32,
    pub full_pixels: f32,
}

/// The samplers' view of the images: what the forward pass resolved, read at `FRAGMENT_SHADER`.
const SAMPLED_READS: Side = side("motion-pass reads", Stage::FRAGMENT_SHADER, Access::SHADER_SAMPLED_READ);
const RESOLVE_WRITES: Side = side("the forward pass's resolve", Stage::COLOR_ATTACHMENT_OUTPUT, Access::COLOR_ATTACHMENT_WRITE);

pub struct MotionPass {
    pipeline: Pipeline,
    _set_layout: DescriptorSetLayout,
    /// Its one set, over the current targets: rewritten when they are (`bind_targets`, after the
    /// device is idle), from its own pool.
    set: vk::DescriptorSet,
    _pool: DescriptorPool,
    sampler: Sampler,
    device: Arc<Device>,
}

impl MotionPass {
    /// A pass writing images of `color_format` (the forward pass's target format).
    pub fn new(device: &Arc<Device>, color_format: vk::Format) -> gpu::Result<MotionPass> {
        let fragment = vk::ShaderStageFlags::FRAGMENT;
        let sampled = vk::DescriptorType::COMBINED_IMAGE_SAMPLER;
        let set_layout = DescriptorSetLayout::new(
            device,
            "motion.set_layout",
            &[(BINDING_SCENE_COLOR, sampled, fragment), (BINDING_VELOCITY, sampled, fragment)],
        )?;
        let pipeline = Pipeline::graphics(
            device,
            "motion",
            &GraphicsDesc {
                color_format: Some(color_format),
                ..fullscreen(crate::render::shaders::MOTION_FRAG, &[&set_layout], std::mem::size_of::<MotionPush>() as u32)
            },
        )?;
        let pool = DescriptorPool::for_sets(device, "motion.pool", &[(&set_layout, 1)])?;
        let set = pool.allocate(&set_layout, "motion.set")?;
        // Nearest: the blur's taps are a pixel or less apart.
        let sampler = Sampler::nearest_clamp(device, "motion.sampler")?;
        Ok(MotionPass { pipeline, _set_layout: set_layout, set, _pool: pool, sampler, device: device.clone() })
    }

    /// Points the set at new targets (at start-up and after a resize, with the device idle).
    pub fn bind_targets(&self, targets: &ForwardTargets) {
        crate::gpu::descriptors::write_set(
            &self.device,
            self.set,
            &[
                (BINDING_SCENE_COLOR, Resource::SampledImage(targets.scene_color.view, self.sampler.raw)),
                (BINDING_VELOCITY, Resource::SampledImage(targets.velocity.view, self.sampler.raw)),
            ],
        );
    }

    /// Before the pass: the forward pass's resolves landed, in the layout the pass samples.
    pub fn hazards_before(&self, targets: &ForwardTargets) -> Vec<Hazard> {
        let layouts = (ImageLayout::COLOR_ATTACHMENT_OPTIMAL, ImageLayout::SHADER_READ_ONLY_OPTIMAL);
        vec![
            Hazard::image("forward.scene_color", &targets.scene_color, RESOLVE_WRITES, SAMPLED_READS, layouts),
            Hazard::image("forward.velocity", &targets.velocity, RESOLVE_WRITES, SAMPLED_READS, layouts),
        ]
    }

    /// Draws the frame's image into `target` (`extent`).
    pub fn record(&self, command_buffer: vk::CommandBuffer, target: vk::ImageView, extent: vk::Extent2D, push: MotionPush) {
        let device = &self.device;
        device.begin_label(command_buffer, c"motion");
        let color_attachment = [vk::RenderingAttachmentInfo::default()
            .image_view(target)
            .image_layout(ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
            // Every pixel is written: nothing to load.
            .load_op(vk::AttachmentLoadOp::DONT_CARE)
            .store_op(vk::AttachmentStoreOp::STORE)];
        let rendering = vk::RenderingInfo::default()
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent })
            .layer_count(1)
            .color_attachments(&color_attachment);
        device.cmd_begin_rendering(command_buffer, &rendering);
        set_viewport(device, command_buffer, extent);
        self.pipeline.bind(command_buffer);
        self.pipeline.bind_sets(command_buffer, 0, &[self.set]);
        self.pipeline.push_constants(command_buffer, vk::ShaderStageFlags::FRAGMENT, &push);
        unsafe { device.raw.cmd_draw(command_buffer, 3, 1, 0, 0) };
        device.cmd_end_rendering(command_buffer);
        device.end_label(command_buffer);
    }
}
