//! 2D images with one view, and samplers.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

use super::barrier::{self, side, Hazard};
use super::{commands, Buffer, Check, Device, Error, Result};

/// A small `Copy` description of an image, with named constructors for the kinds we make.
#[derive(Clone, Copy, Debug)]
pub struct ImageDesc {
    pub format: vk::Format,
    pub extent: vk::Extent2D,
    pub usage: vk::ImageUsageFlags,
    pub samples: vk::SampleCountFlags,
    pub aspect: vk::ImageAspectFlags,
}

impl ImageDesc {
    pub fn color_attachment(format: vk::Format, extent: vk::Extent2D, samples: vk::SampleCountFlags) -> ImageDesc {
        ImageDesc { format, extent, usage: vk::ImageUsageFlags::COLOR_ATTACHMENT, samples, aspect: vk::ImageAspectFlags::COLOR }
    }

    pub fn depth_attachment(format: vk::Format, extent: vk::Extent2D, samples: vk::SampleCountFlags) -> ImageDesc {
        ImageDesc {
            format,
            extent,
            usage: vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
            samples,
            aspect: vk::ImageAspectFlags::DEPTH,
        }
    }

    pub fn texture(format: vk::Format, extent: vk::Extent2D) -> ImageDesc {
        ImageDesc {
            format,
            extent,
            usage: vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST,
            samples: vk::SampleCountFlags::TYPE_1,
            aspect: vk::ImageAspectFlags::COLOR,
        }
    }

    pub fn with_usage(mut self, usage: vk::ImageUsageFlags) -> ImageDesc {
        self.usage |= usage;
        self
    }
}

pub struct Image {
    pub raw: vk::Image,
    pub view: vk::ImageView,
    pub desc: ImageDesc,
    pub name: String,
    allocation: Option<Allocation>,
    device: Arc<Device>,
}

impl Image {
    pub fn new(device: &Arc<Device>, name: &str, desc: ImageDesc) -> Result<Image> {
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(desc.format)
            .extent(vk::Extent3D { width: desc.extent.width.max(1), height: desc.extent.height.max(1), depth: 1 })
            .mip_levels(1)
            .array_layers(1)
            .samples(desc.samples)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(desc.usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let raw = unsafe { device.raw.create_image(&info, None) }.check("vkCreateImage")?;
        let requirements = unsafe { device.raw.get_image_memory_requirements(raw) };
        let allocation = device.allocator().allocate(&AllocationCreateDesc {
            name,
            requirements,
            location: MemoryLocation::GpuOnly,
            linear: false,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(allocation) => allocation,
            Err(source) => {
                unsafe { device.raw.destroy_image(raw, None) };
                return Err(Error::Allocation { name: name.to_string(), source });
            }
        };
        let mut image =
            Image { raw, view: vk::ImageView::null(), desc, name: name.to_string(), allocation: None, device: device.clone() };
        let bound = unsafe { device.raw.bind_image_memory(raw, allocation.memory(), allocation.offset()) };
        image.allocation = Some(allocation);
        bound.check_on("vkBindImageMemory", name)?;
        let view_info = vk::ImageViewCreateInfo::default()
            .image(raw)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(desc.format)
            .subresource_range(image.full_range());
        image.view = unsafe { device.raw.create_image_view(&view_info, None) }.check("vkCreateImageView")?;
        device.set_name(raw, name);
        device.set_name(image.view, &format!("{name}.view"));
        Ok(image)
    }

    /// A sampled RGBA8 texture filled from pixels, left in SHADER_READ_ONLY_OPTIMAL. `format` is
    /// R8G8B8A8_SRGB for colours, R8G8B8A8_UNORM for data such as normal maps.
    pub fn texture_rgba8(
        device: &Arc<Device>,
        name: &str,
        (width, height): (u32, u32),
        format: vk::Format,
        rgba8: &[u8],
    ) -> Result<Image> {
        let expected = width as usize * height as usize * 4;
        if rgba8.len() != expected {
            return Err(Error::Other(format!(
                "texture {name}: {} bytes for {width}x{height} RGBA8, expected {expected}",
                rgba8.len()
            )));
        }
        let extent = vk::Extent2D { width, height };
        let image = Image::new(device, name, ImageDesc::texture(format, extent))?;
        let mut staging = Buffer::new(
            device,
            &format!("{name}.staging"),
            rgba8.len() as u64,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
        )?;
        staging.write_bytes(0, rgba8)?;
        commands::submit_once(device, "texture upload", |command_buffer| {
            let copy_write = side("the upload copy", vk::PipelineStageFlags2::COPY, vk::AccessFlags2::TRANSFER_WRITE);
            let layouts = (vk::ImageLayout::UNDEFINED, vk::ImageLayout::TRANSFER_DST_OPTIMAL);
            barrier::issue(device, command_buffer, &[Hazard::image("texture", &image, barrier::FRESH, copy_write, layouts)]);
            unsafe {
                device.raw.cmd_copy_buffer_to_image(
                    command_buffer,
                    staging.raw,
                    image.raw,
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    &[image.whole_copy()],
                )
            };
            let sampling =
                side("fragment-shader sampling", vk::PipelineStageFlags2::FRAGMENT_SHADER, vk::AccessFlags2::SHADER_SAMPLED_READ);
            let layouts = (vk::ImageLayout::TRANSFER_DST_OPTIMAL, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
            barrier::issue(device, command_buffer, &[Hazard::image("texture", &image, copy_write, sampling, layouts)]);
        })?;
        Ok(image)
    }

    /// The whole colour image, tightly packed in a buffer: the region of a copy either way.
    pub fn whole_copy(&self) -> vk::BufferImageCopy {
        let vk::Extent2D { width, height } = self.desc.extent;
        vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers::default().aspect_mask(vk::ImageAspectFlags::COLOR).layer_count(1))
            .image_extent(vk::Extent3D { width, height, depth: 1 })
    }

    /// Copies the whole image, in `TRANSFER_SRC_OPTIMAL`, into `buffer` (the caller orders it).
    pub fn record_copy_to(&self, command_buffer: vk::CommandBuffer, buffer: &Buffer) {
        let region = [self.whole_copy()];
        let layout = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
        unsafe { self.device.raw.cmd_copy_image_to_buffer(command_buffer, self.raw, layout, buffer.raw, &region) };
    }

    pub fn full_range(&self) -> vk::ImageSubresourceRange {
        vk::ImageSubresourceRange::default().aspect_mask(self.desc.aspect).level_count(1).layer_count(1)
    }

    pub fn extent(&self) -> vk::Extent2D {
        self.desc.extent
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        unsafe { self.device.raw.destroy_image_view(self.view, None) };
        unsafe { self.device.raw.destroy_image(self.raw, None) };
        if let Some(allocation) = self.allocation.take() {
            let _ = self.device.allocator().free(allocation);
        }
    }
}

pub struct Sampler {
    pub raw: vk::Sampler,
    device: Arc<Device>,
}

impl Sampler {
    pub fn new(device: &Arc<Device>, name: &str, info: &vk::SamplerCreateInfo<'_>) -> Result<Sampler> {
        let raw = unsafe { device.raw.create_sampler(info, None) }.check("vkCreateSampler")?;
        device.set_name(raw, name);
        Ok(Sampler { raw, device: device.clone() })
    }

    /// Trilinear-less linear repeat sampler for base-colour textures.
    pub fn linear_repeat(device: &Arc<Device>, name: &str) -> Result<Sampler> {
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::LINEAR)
            .min_filter(vk::Filter::LINEAR)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::REPEAT)
            .address_mode_v(vk::SamplerAddressMode::REPEAT)
            .address_mode_w(vk::SamplerAddressMode::REPEAT)
            .max_lod(0.0);
        Sampler::new(device, name, &info)
    }

    /// Plain nearest sampling, clamped at the edges (the shadow-map debug view reads depth as a
    /// value; depth formats need not support linear filtering).
    pub fn nearest_clamp(device: &Arc<Device>, name: &str) -> Result<Sampler> {
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::NEAREST)
            .min_filter(vk::Filter::NEAREST)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .max_lod(0.0);
        Sampler::new(device, name, &info)
    }

    /// Depth-compare sampler for shadow maps: linear filtering gives 2×2 PCF per tap, and outside the
    /// map the white border reads as "lit".
    pub fn shadow_compare(device: &Arc<Device>, name: &str) -> Result<Sampler> {
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::LINEAR)
            .min_filter(vk::Filter::LINEAR)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_BORDER)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_BORDER)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_BORDER)
            .border_color(vk::BorderColor::FLOAT_OPAQUE_WHITE)
            .compare_enable(true)
            .compare_op(vk::CompareOp::LESS_OR_EQUAL)
            .max_lod(0.0);
        Sampler::new(device, name, &info)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        unsafe { self.device.raw.destroy_sampler(self.raw, None) };
    }
}
