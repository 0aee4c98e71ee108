//! Headless output: the frame resolves into `offscreen.color`, which is copied into a host-visible
//! buffer and saved as PNG.

use std::path::Path;
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use crate::gpu::barrier::{self, side, Hazard, Side};
use crate::gpu::{self, Buffer, Device, Image, ImageDesc};

/// 8-bit sRGB, so the PNG holds exactly what a swapchain would show.
pub const OFFSCREEN_FORMAT: vk::Format = vk::Format::R8G8B8A8_SRGB;

pub struct OffscreenTarget {
    pub color: Image,
    readback: std::cell::RefCell<Buffer>,
}

impl OffscreenTarget {
    pub fn new(device: &Arc<Device>, width: u32, height: u32) -> gpu::Result<OffscreenTarget> {
        OffscreenTarget::with_format(device, width, height, OFFSCREEN_FORMAT)
    }

    /// An offscreen target in another 8-bit RGBA or BGRA format (the viewer's screenshot matches
    /// its swapchain's, which its renderer's pipelines were built for).
    pub fn with_format(device: &Arc<Device>, width: u32, height: u32, format: vk::Format) -> gpu::Result<OffscreenTarget> {
        let extent = vk::Extent2D { width, height };
        // TRANSFER_DST: the viewer's panel may be copied onto it (render/passes/overlay.rs).
        let desc = ImageDesc::color_attachment(format, extent, vk::SampleCountFlags::TYPE_1)
            .with_usage(vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST);
        let color = Image::new(device, "offscreen.color", desc)?;
        let bytes = u64::from(width) * u64::from(height) * 4;
        let readback =
            Buffer::new(device, "offscreen.readback", bytes, vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuToCpu)?;
        Ok(OffscreenTarget { color, readback: std::cell::RefCell::new(readback) })
    }

    /// Before the forward pass resolves into it: last frame's copy-out is done.
    pub fn resolve_hazard(&self, resolve: Side) -> Hazard {
        let layouts = (vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
        Hazard::image("offscreen.color", &self.color, side("last frame's copy-out", Stage::COPY, Access::NONE), resolve, layouts)
    }

    /// Before the copy-out: the resolve landed, and last frame's copy into the readback is done.
    pub fn copy_hazards(&self, resolve: Side, layout: vk::ImageLayout) -> Vec<Hazard> {
        let copy_read = side("the copy into offscreen.readback", Stage::COPY, Access::TRANSFER_READ);
        let copy_write = side("the copy", Stage::COPY, Access::TRANSFER_WRITE);
        let layouts = (layout, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
        vec![
            Hazard::image("offscreen.color", &self.color, resolve, copy_read, layouts),
            Hazard::buffer(
                "offscreen.readback",
                &self.readback.borrow(),
                side("last frame's copy", Stage::COPY, Access::TRANSFER_WRITE),
                copy_write,
            ),
        ]
    }

    /// The resolved image into the readback buffer.
    pub fn record_copy_out(&self, command_buffer: vk::CommandBuffer) {
        self.color.record_copy_to(command_buffer, &self.readback.borrow());
    }

    /// After the copy-out: the host reads the pixels after the fence.
    pub fn host_hazard(&self) -> Hazard {
        Hazard::buffer("offscreen.readback", &self.readback.borrow(), barrier::COPY_WRITES, barrier::HOST_READS)
    }

    /// The last copied frame as an image. Call after the frame's fence (Renderer::wait_all).
    pub fn read_image(&self) -> gpu::Result<image::RgbaImage> {
        let extent = self.color.extent();
        let mut pixels: Vec<u8> = self.readback.borrow_mut().read()?;
        if matches!(self.color.desc.format, vk::Format::B8G8R8A8_SRGB | vk::Format::B8G8R8A8_UNORM) {
            pixels.chunks_exact_mut(4).for_each(|pixel| pixel.swap(0, 2));
        }
        image::RgbaImage::from_raw(extent.width, extent.height, pixels)
            .ok_or_else(|| gpu::Error::Other("readback buffer smaller than the image".into()))
    }
}

/// Writes a PNG, naming the path in the error (for example a folder without write permission, or
/// a full disk). Encoded in memory first and written with one checked write: a buffered writer
/// would lose the error of its last flush when dropped, and report success.
pub fn save_png(image: &image::RgbaImage, path: &Path) -> Result<(), String> {
    save_image(image, path, image::ImageFormat::Png)
}

/// The format a written image takes from its file's extension: PNG (also without one), JPEG,
/// BMP or TGA; another extension is refused, before anything is rendered.
pub fn image_format(path: &Path) -> Result<image::ImageFormat, String> {
    let extension = path.extension().and_then(|extension| extension.to_str()).map(str::to_ascii_lowercase);
    match extension.as_deref() {
        None | Some("png") => Ok(image::ImageFormat::Png),
        Some("jpg" | "jpeg") => Ok(image::ImageFormat::Jpeg),
        Some("bmp") => Ok(image::ImageFormat::Bmp),
        Some("tga") => Ok(image::ImageFormat::Tga),
        Some(other) => Err(format!("{}: expected a .png, .jpg, .bmp or .tga file to write, found .{other}", path.display())),
    }
}

/// `image` written to `path` as `format` (JPEG without its alpha, which it cannot hold).
pub fn save_image(image: &image::RgbaImage, path: &Path, format: image::ImageFormat) -> Result<(), String> {
    let mut encoded = Vec::new();
    let mut cursor = std::io::Cursor::new(&mut encoded);
    let written = if format == image::ImageFormat::Jpeg {
        image::DynamicImage::ImageRgba8(image.clone()).to_rgb8().write_to(&mut cursor, format)
    } else {
        image.write_to(&mut cursor, format)
    };
    written.map_err(|error| format!("cannot encode {}: {error}", path.display()))?;
    std::fs::write(path, encoded).map_err(|error| format!("cannot write {}: {error}", path.display()))
}
