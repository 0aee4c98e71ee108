//! The overlay pass: the viewer's panel, drawn over the resolved image before it is presented or
//! copied out.
//!
//! Reads: the panel's triangles (egui's tessellated output) and its font and image textures.
//! Writes: the frame's output image (the swapchain image or `offscreen.color`), blending over
//! what the forward pass resolved there (load, not clear).
//!
//! The UI is egui's; its Vulkan side is `egui-ash-renderer`, allocating through the device's
//! gpu-allocator and drawing inside this pass's dynamic rendering, labelled `overlay` and timed
//! like every other pass. The pass lives outside the [`Renderer`](crate::render::Renderer), with the
//! viewer, so the panel's textures survive a renderer rebuilt for a new strategy or count.
//!
//! Why a cache: a software rasterizer pays for every pixel of every textured layer egui draws
//! (on lavapipe the 314×577 panel cost 2.8-3.9 ms a frame at 1280×720). The panel is opaque and
//! square-cornered, and while its triangles stay the same (the viewer refreshes its numbers four
//! times a second) it is copied from `overlay.cache`, where it was drawn alone, onto each frame: a
//! `vkCmdCopyImage` of its rectangle. When its triangles change (a refresh, the pointer on a
//! widget) it is drawn into the cache first. With a popup open (the clip list) something lies
//! outside the panel, and the frame is drawn directly instead.

use std::sync::Arc;

use ash::vk;
use egui::{ClippedPrimitive, TextureId, TexturesDelta};
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use crate::gpu::barrier::{self, side, Hazard, Side};
use crate::gpu::commands::CommandPool;
use crate::gpu::{self, Device, Image, ImageDesc};
use crate::render::FRAMES_IN_FLIGHT;

/// One frame of the panel: what egui drew, and the textures it changed.
pub struct OverlayFrame {
    pub primitives: Vec<ClippedPrimitive>,
    pub textures: TexturesDelta,
    pub pixels_per_point: f32,
    /// The panel's window, in points: opaque, square-cornered, and what the cache copies.
    pub panel_rect: Option<egui::Rect>,
}

/// How this frame's overlay is made.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Plan {
    /// egui draws over the image (a popup reaches outside the panel).
    Draw,
    /// The panel's rectangle is copied from the cache, drawn there first when `refresh`.
    Copy { refresh: bool, region: vk::Rect2D },
}

/// The overlay pass and the state egui's renderer keeps between frames.
pub struct OverlayPass {
    renderer: egui_ash_renderer::Renderer,
    /// For texture uploads (egui-ash-renderer records and submits them itself).
    upload_pool: CommandPool,
    /// Textures egui freed, with the frames still to be recorded before no frame in flight can use
    /// them.
    retired: Vec<(usize, Vec<TextureId>)>,
    /// The panel drawn alone at the output's size (see the module's comment), and what it shows.
    cache: Option<Image>,
    cached: Vec<ClippedPrimitive>,
    format: vk::Format,
    plan: Plan,
    device: Arc<Device>,
}

/// The copy from the cache: the later side of the resolve, the earlier side of the copy-out or
/// presentation.
const COPY_WRITES: Side = barrier::COPY_WRITES;

/// The copy's read of the cache.
const CACHE_READS: Side = side("the copy from overlay.cache", Stage::COPY, Access::TRANSFER_READ);

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
        Ok(OverlayPass {
            renderer,
            upload_pool,
            retired: Vec::new(),
            cache: None,
            cached: Vec::new(),
            format: color_format,
            plan: Plan::Draw,
            device: Arc::clone(device),
        })
    }

    /// Before recording a frame into an image of `extent` (which `takes_copies` or not): uploads
    /// the textures egui changed,
    /// frees those it dropped once no frame in flight can still read them, and decides between
    /// drawing and copying (the renderer waited for the device if the size changed, so an old
    /// cache can go).
    pub fn prepare(&mut self, frame: &OverlayFrame, extent: vk::Extent2D, takes_copies: bool) -> gpu::Result<()> {
        let textures_changed = !frame.textures.set.is_empty();
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
        let region = frame.panel_rect.filter(|_| takes_copies).and_then(|rect| copy_region(frame, rect, extent));
        self.plan = match region {
            None => Plan::Draw,
            Some(region) => {
                let stale = self.cache.as_ref().is_none_or(|cache| cache.extent() != extent);
                if stale {
                    let desc = ImageDesc::color_attachment(self.format, extent, vk::SampleCountFlags::TYPE_1)
                        .with_usage(vk::ImageUsageFlags::TRANSFER_SRC);
                    self.cache = Some(Image::new(&self.device, "overlay.cache", desc)?);
                }
                let refresh = stale || textures_changed || !same_primitives(&self.cached, &frame.primitives);
                if refresh {
                    self.cached = frame.primitives.clone();
                }
                Plan::Copy { refresh, region }
            }
        };
        Ok(())
    }

    /// Before the overlay: the resolve landed in the image (which a copy turns to
    /// `TRANSFER_DST_OPTIMAL`), and last frame's copy from the cache is done before it is redrawn.
    pub fn hazards_before(&self, image: vk::Image, resolve: Side) -> Vec<Hazard> {
        let range = gpu::swapchain::color_range();
        let attachment = vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL;
        match (self.plan, &self.cache) {
            (Plan::Copy { refresh, .. }, Some(cache)) => {
                let layouts = (attachment, vk::ImageLayout::TRANSFER_DST_OPTIMAL);
                let mut hazards = vec![Hazard::raw_image("output image", image, range, resolve, COPY_WRITES, layouts)];
                if refresh {
                    let last_copy = side("last frame's copy from overlay.cache", Stage::COPY, Access::NONE);
                    let layouts = (vk::ImageLayout::UNDEFINED, attachment);
                    hazards.push(Hazard::image("overlay.cache", cache, last_copy, OVERLAY_WRITES, layouts));
                }
                hazards
            }
            _ => vec![Hazard::raw_image("output image", image, range, resolve, OVERLAY_WRITES, (attachment, attachment))],
        }
    }

    /// The overlay's last access to the image and the layout it leaves it in.
    pub fn last_writes(&self) -> (Side, vk::ImageLayout) {
        match self.plan {
            Plan::Copy { .. } if self.cache.is_some() => (COPY_WRITES, vk::ImageLayout::TRANSFER_DST_OPTIMAL),
            _ => (OVERLAY_WRITES, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL),
        }
    }

    /// Draws the panel over the output image (`view` of `image`, in `COLOR_ATTACHMENT_OPTIMAL`),
    /// or copies it there from the cache, as `prepare` decided.
    pub fn record(
        &mut self,
        command_buffer: vk::CommandBuffer,
        (image, view): (vk::Image, vk::ImageView),
        extent: vk::Extent2D,
        frame: &OverlayFrame,
    ) {
        self.device.begin_label(command_buffer, c"overlay");
        match (self.plan, &self.cache) {
            (Plan::Copy { refresh, region }, Some(cache)) => {
                let (cache_raw, cache_view) = (cache.raw, cache.view);
                if refresh {
                    self.draw(command_buffer, cache_view, extent, frame, vk::AttachmentLoadOp::CLEAR);
                    // The pass's own barrier between its halves: the cache drawn, then copied from.
                    let layouts = (vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
                    let drawn = self
                        .cache
                        .as_ref()
                        .map(|cache| Hazard::image("overlay.cache", cache, OVERLAY_WRITES, CACHE_READS, layouts));
                    barrier::issue(&self.device, command_buffer, &drawn.into_iter().collect::<Vec<_>>());
                }
                let layers = vk::ImageSubresourceLayers::default().aspect_mask(vk::ImageAspectFlags::COLOR).layer_count(1);
                let at = vk::Offset3D { x: region.offset.x, y: region.offset.y, z: 0 };
                let copy = vk::ImageCopy::default()
                    .src_subresource(layers)
                    .src_offset(at)
                    .dst_subresource(layers)
                    .dst_offset(at)
                    .extent(vk::Extent3D { width: region.extent.width, height: region.extent.height, depth: 1 });
                unsafe {
                    self.device.raw.cmd_copy_image(
                        command_buffer,
                        cache_raw,
                        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                        image,
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        &[copy],
                    )
                };
            }
            _ => self.draw(command_buffer, view, extent, frame, vk::AttachmentLoadOp::LOAD),
        }
        self.device.end_label(command_buffer);
    }

    /// egui's triangles into `view`: over what is there (`LOAD`), or alone (`CLEAR`).
    fn draw(
        &mut self,
        command_buffer: vk::CommandBuffer,
        view: vk::ImageView,
        extent: vk::Extent2D,
        frame: &OverlayFrame,
        load: vk::AttachmentLoadOp,
    ) {
        // The render area is what the panel covers, not the whole image: a software rasterizer
        // loads and stores every tile of the render area.
        let Some(area) = covered_area(frame, extent) else { return };
        let color = [vk::RenderingAttachmentInfo::default()
            .image_view(view)
            .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
            .load_op(load)
            .store_op(vk::AttachmentStoreOp::STORE)];
        let rendering = vk::RenderingInfo::default().render_area(area).layer_count(1).color_attachments(&color);
        self.device.cmd_begin_rendering(command_buffer, &rendering);
        if let Err(error) = self.renderer.cmd_draw(command_buffer, extent, frame.pixels_per_point, &frame.primitives) {
            // Only a failed buffer growth lands here; the frame goes on without its panel.
            log::warn!("the overlay was not drawn: {error}");
        }
        self.device.cmd_end_rendering(command_buffer);
    }
}

/// Whether two frames of egui's output draw the same (its primitives have no `PartialEq`).
fn same_primitives(a: &[ClippedPrimitive], b: &[ClippedPrimitive]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(a, b)| {
            a.clip_rect == b.clip_rect
                && match (&a.primitive, &b.primitive) {
                    (egui::epaint::Primitive::Mesh(a), egui::epaint::Primitive::Mesh(b)) => a == b,
                    _ => false,
                }
        })
}

/// The panel's rectangle in whole pixels (rounded inwards: its anti-aliased rim stays out), when
/// everything drawn lies within it and it is inside the image; None means draw directly.
fn copy_region(frame: &OverlayFrame, rect: egui::Rect, extent: vk::Extent2D) -> Option<vk::Rect2D> {
    let rim = rect.expand(1.5);
    // Nothing drawn (egui's first, sizing pass of a window): nothing to copy either.
    let inside = !frame.primitives.is_empty()
        && frame.primitives.iter().all(|primitive| {
            matches!(primitive.primitive, egui::epaint::Primitive::Mesh(_)) && rim.contains_rect(touched(primitive))
        });
    let pixels = rect * frame.pixels_per_point;
    let (x0, y0, x1, y1) = (pixels.min.x.ceil(), pixels.min.y.ceil(), pixels.max.x.floor(), pixels.max.y.floor());
    let fits = x0 >= 0.0 && y0 >= 0.0 && x1 <= extent.width as f32 && y1 <= extent.height as f32 && x1 > x0 && y1 > y0;
    (inside && fits).then_some(vk::Rect2D {
        offset: vk::Offset2D { x: x0 as i32, y: y0 as i32 },
        extent: vk::Extent2D { width: (x1 - x0) as u32, height: (y1 - y0) as u32 },
    })
}

/// What one primitive can touch, in points: its mesh's bounds within its clip rectangle (a
/// callback, its clip rectangle).
fn touched(primitive: &ClippedPrimitive) -> egui::Rect {
    match &primitive.primitive {
        egui::epaint::Primitive::Mesh(mesh) => mesh.calc_bounds().intersect(primitive.clip_rect),
        egui::epaint::Primitive::Callback(_) => primitive.clip_rect,
    }
}

/// The pixels the frame's primitives can touch (their meshes' bounds within their clip
/// rectangles), within the image; None when there is nothing to draw.
fn covered_area(frame: &OverlayFrame, extent: vk::Extent2D) -> Option<vk::Rect2D> {
    let union = frame.primitives.iter().map(touched).reduce(|a, b| a.union(b))?;
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
