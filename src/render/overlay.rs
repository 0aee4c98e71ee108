//! The overlay pass: the viewer's panel, drawn over the resolved image before it is presented or
//! copied out.
//!
//! Reads: the panel's triangles (egui's tessellated output) and its font and image textures.
//! Writes: the frame's output image (the swapchain image or `offscreen.color`), blending over
//! what the forward pass resolved there (load, not clear).
//!
//! The UI is egui's; its Vulkan side is `egui-ash-renderer`, allocating through the device's
//! gpu-allocator and drawing inside this pass's dynamic rendering, labelled `overlay` and timed
//! like every other pass. The pass lives outside the [`Renderer`](super::Renderer), with the
//! viewer, so the panel's textures survive a renderer rebuilt for a new strategy or count.

use std::sync::Arc;

use ash::vk;
use egui::{ClippedPrimitive, TextureId, TexturesDelta};
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use super::FRAMES_IN_FLIGHT;
use crate::gpu::barrier::{side, Side};
use crate::gpu::commands::CommandPool;
use crate::gpu::{self, Device};

/// One frame of the panel: what egui drew, and the textures it changed.
pub struct OverlayFrame {
    pub primitives: Vec<ClippedPrimitive>,
    pub textures: TexturesDelta,
    pub pixels_per_point: f32,
}

/// The overlay pass and the state egui's renderer keeps between frames.
pub struct OverlayPass {
    renderer: egui_ash_renderer::Renderer,
    /// For texture uploads (egui-ash-renderer records and submits them itself).
    upload_pool: CommandPool,
    /// Textures egui freed, with the frames still to be recorded before no frame in flight can use
    /// them.
    retired: Vec<(usize, Vec<TextureId>)>,
    device: Arc<Device>,
}

/// The overlay's colour writes: the later side of the forward pass's resolve, the earlier side of
/// the copy-out or presentation.
pub const OVERLAY_WRITES: Side = side(
    "overlay blends over the image",
    Stage::COLOR_ATTACHMENT_OUTPUT,
    Access::from_raw(Access::COLOR_ATTACHMENT_READ.as_raw() | Access::COLOR_ATTACHMENT_WRITE.as_raw()),
);

impl OverlayPass {
    /// An overlay drawing into images of `color_format` (the swapchain's).
    pub fn new(device: &Arc<Device>, color_format: vk::Format) -> gpu::Result<OverlayPass> {
        let srgb = format!("{color_format:?}").contains("SRGB");
        let options = egui_ash_renderer::Options {
            in_flight_frames: FRAMES_IN_FLIGHT,
            enable_depth_test: false,
            enable_depth_write: false,
            // On an sRGB image the hardware encodes: egui's shader then writes linear colour.
            srgb_framebuffer: srgb,
        };
        let rendering =
            egui_ash_renderer::DynamicRendering { color_attachment_format: color_format, depth_attachment_format: None };
        let renderer =
            egui_ash_renderer::Renderer::with_gpu_allocator(device.shared_allocator(), device.raw.clone(), rendering, options)
                .map_err(|error| gpu::Error::Other(format!("the overlay's egui renderer: {error}")))?;
        let upload_pool = CommandPool::new(device, "overlay.uploads", vk::CommandPoolCreateFlags::TRANSIENT)?;
        Ok(OverlayPass { renderer, upload_pool, retired: Vec::new(), device: Arc::clone(device) })
    }

    /// Before recording a frame: uploads the textures egui changed, and frees those it dropped once
    /// no frame in flight can still read them.
    pub fn prepare(&mut self, frame: &OverlayFrame) -> gpu::Result<()> {
        let failed = |error: egui_ash_renderer::RendererError| gpu::Error::Other(format!("the overlay's textures: {error}"));
        for (frames_left, ids) in &mut self.retired {
            *frames_left = frames_left.saturating_sub(1);
            if *frames_left == 0 {
                self.renderer.free_textures(ids).map_err(failed)?;
            }
        }
        self.retired.retain(|(frames_left, _)| *frames_left > 0);
        if !frame.textures.set.is_empty() {
            self.renderer.set_textures(self.device.queue, self.upload_pool.raw, &frame.textures.set).map_err(failed)?;
        }
        if !frame.textures.free.is_empty() {
            self.retired.push((FRAMES_IN_FLIGHT + 1, frame.textures.free.clone()));
        }
        Ok(())
    }

    /// Before the overlay: the resolve landed in the image it blends over (same layout).
    pub fn hazard_before(image: vk::Image, resolve: Side) -> gpu::barrier::Hazard {
        let layouts = (vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
        gpu::barrier::Hazard::raw_image("output image", image, gpu::swapchain::color_range(), resolve, OVERLAY_WRITES, layouts)
    }

    /// Draws the panel over `view` (the output image, in `COLOR_ATTACHMENT_OPTIMAL`).
    pub fn record(&mut self, command_buffer: vk::CommandBuffer, view: vk::ImageView, extent: vk::Extent2D, frame: &OverlayFrame) {
        self.device.begin_label(command_buffer, c"overlay");
        // The render area is what the panel covers, not the whole image: a software rasterizer
        // loads and stores every tile of the render area (on lavapipe the whole 1280×720 image
        // costs more than the panel itself).
        let Some(area) = covered_area(frame, extent) else {
            self.device.end_label(command_buffer);
            return;
        };
        let color = [vk::RenderingAttachmentInfo::default()
            .image_view(view)
            .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::LOAD)
            .store_op(vk::AttachmentStoreOp::STORE)];
        let rendering = vk::RenderingInfo::default().render_area(area).layer_count(1).color_attachments(&color);
        self.device.cmd_begin_rendering(command_buffer, &rendering);
        if let Err(error) = self.renderer.cmd_draw(command_buffer, extent, frame.pixels_per_point, &frame.primitives) {
            // Only a failed buffer growth lands here; the frame goes on without its panel.
            log::warn!("the overlay was not drawn: {error}");
        }
        self.device.cmd_end_rendering(command_buffer);
        self.device.end_label(command_buffer);
    }
}

/// The pixels the frame's primitives can touch (their meshes' bounds within their clip
/// rectangles), within the image; None when there is nothing to draw.
fn covered_area(frame: &OverlayFrame, extent: vk::Extent2D) -> Option<vk::Rect2D> {
    let bounds = |primitive: &ClippedPrimitive| match &primitive.primitive {
        egui::epaint::Primitive::Mesh(mesh) => mesh.calc_bounds().intersect(primitive.clip_rect),
        egui::epaint::Primitive::Callback(_) => primitive.clip_rect,
    };
    let union = frame.primitives.iter().map(bounds).reduce(|a, b| a.union(b))?;
    let pixels = union * frame.pixels_per_point;
    let x0 = pixels.min.x.floor().clamp(0.0, extent.width as f32) as u32;
    let y0 = pixels.min.y.floor().clamp(0.0, extent.height as f32) as u32;
    let x1 = pixels.max.x.ceil().clamp(0.0, extent.width as f32) as u32;
    let y1 = pixels.max.y.ceil().clamp(0.0, extent.height as f32) as u32;
    (x1 > x0 && y1 > y0).then(|| vk::Rect2D {
        offset: vk::Offset2D { x: x0 as i32, y: y0 as i32 },
        extent: vk::Extent2D { width: x1 - x0, height: y1 - y0 },
    })
}
