//! Window surface and swapchain, recreated on resize, out-of-date and suboptimal.

use std::sync::Arc;

use ash::vk;

use super::commands::Semaphore;
use super::{Check, Device, Error, Result};

/// The surface outlives swapchains; it is destroyed after the last one.
pub struct Surface {
    pub raw: vk::SurfaceKHR,
    pub loader: ash::khr::surface::Instance,
}

impl Surface {
    /// Destroys the surface. Called by the owner after every swapchain on it is gone.
    pub fn destroy(&self) {
        unsafe { self.loader.destroy_surface(self.raw, None) };
    }
}

const PRESENT_MODE: vk::PresentModeKHR = vk::PresentModeKHR::FIFO;

pub struct Swapchain {
    pub raw: vk::SwapchainKHR,
    /// FIFO: always available, and vsync.
    pub present_mode: vk::PresentModeKHR,
    /// The images take copies (`TRANSFER_DST`, where the surface supports it).
    pub takes_copies: bool,
    pub loader: ash::khr::swapchain::Device,
    pub format: vk::Format,
    pub extent: vk::Extent2D,
    pub images: Vec<vk::Image>,
    pub views: Vec<vk::ImageView>,
    /// One per image: signalled by the frame's submit, waited on by present. Per image (not per
    /// frame in flight) because present holds it until that image comes back from acquire.
    pub render_finished: Vec<Semaphore>,
    device: Arc<Device>,
}

/// The outcome of acquiring an image.
pub enum Acquired {
    Image { index: u32, suboptimal: bool },
    OutOfDate,
}

impl Swapchain {
    /// `old` is retired into the new one (and must be dropped by the caller after this returns).
    pub fn new(device: &Arc<Device>, surface: &Surface, size: vk::Extent2D, old: Option<&Swapchain>) -> Result<Swapchain> {
        let physical = device.physical;
        let capabilities = unsafe { surface.loader.get_physical_device_surface_capabilities(physical, surface.raw) }
            .check("vkGetPhysicalDeviceSurfaceCapabilitiesKHR")?;
        let formats = unsafe { surface.loader.get_physical_device_surface_formats(physical, surface.raw) }
            .check("vkGetPhysicalDeviceSurfaceFormatsKHR")?;
        let preferred = [vk::Format::B8G8R8A8_SRGB, vk::Format::R8G8B8A8_SRGB];
        let format = preferred
            .iter()
            .find_map(|wanted| formats.iter().find(|available| available.format == *wanted))
            .or(formats.first())
            .copied()
            .ok_or_else(|| Error::Other("the surface offers no formats".into()))?;
        let extent = if capabilities.current_extent.width != u32::MAX {
            capabilities.current_extent
        } else {
            vk::Extent2D {
                width: size.width.clamp(capabilities.min_image_extent.width, capabilities.max_image_extent.width),
                height: size.height.clamp(capabilities.min_image_extent.height, capabilities.max_image_extent.height),
            }
        };
        let mut image_count = capabilities.min_image_count + 1;
        if capabilities.max_image_count > 0 {
            image_count = image_count.min(capabilities.max_image_count);
        }
        // Copies onto the image (the viewer's panel) where the surface allows them.
        let takes_copies = capabilities.supported_usage_flags.contains(vk::ImageUsageFlags::TRANSFER_DST);
        let usage = if takes_copies {
            vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_DST
        } else {
            vk::ImageUsageFlags::COLOR_ATTACHMENT
        };
        let loader = ash::khr::swapchain::Device::new(&device.instance.raw, &device.raw);
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(surface.raw)
            .min_image_count(image_count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(capabilities.current_transform)
            .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
            .present_mode(PRESENT_MODE)
            .clipped(true)
            .old_swapchain(old.map_or(vk::SwapchainKHR::null(), |old| old.raw));
        let raw = unsafe { loader.create_swapchain(&info, None) }.check("vkCreateSwapchainKHR")?;
        device.set_name(raw, "swapchain");
        let images = unsafe { loader.get_swapchain_images(raw) }.check("vkGetSwapchainImagesKHR")?;
        let mut swapchain = Swapchain {
            present_mode: PRESENT_MODE,
            takes_copies,
            raw,
            loader,
            format: format.format,
            extent,
            images: images.clone(),
            views: Vec::new(),
            render_finished: Vec::new(),
            device: device.clone(),
        };
        for (index, &image) in images.iter().enumerate() {
            device.set_name(image, &format!("swapchain.image[{index}]"));
            let view_info = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(format.format)
                .subresource_range(color_range());
            let view = unsafe { device.raw.create_image_view(&view_info, None) }.check("vkCreateImageView")?;
            device.set_name(view, &format!("swapchain.view[{index}]"));
            swapchain.views.push(view);
            swapchain.render_finished.push(Semaphore::new(device, &format!("swapchain.render_finished[{index}]"))?);
        }
        Ok(swapchain)
    }

    pub fn acquire(&self, image_available: vk::Semaphore) -> Result<Acquired> {
        match unsafe { self.loader.acquire_next_image(self.raw, u64::MAX, image_available, vk::Fence::null()) } {
            Ok((index, suboptimal)) => Ok(Acquired::Image { index, suboptimal }),
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(Acquired::OutOfDate),
            Err(result) => Err(Error::Call { call: "vkAcquireNextImageKHR", result }),
        }
    }

    /// Presents; `Ok(true)` means the swapchain should be recreated (out of date or suboptimal).
    pub fn present(&self, index: u32) -> Result<bool> {
        let wait = [self.render_finished[index as usize].raw];
        let swapchains = [self.raw];
        let indices = [index];
        let info = vk::PresentInfoKHR::default().wait_semaphores(&wait).swapchains(&swapchains).image_indices(&indices);
        match unsafe { self.loader.queue_present(self.device.queue, &info) } {
            Ok(suboptimal) => Ok(suboptimal),
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(true),
            Err(result) => Err(Error::Call { call: "vkQueuePresentKHR", result }),
        }
    }
}

pub fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default().aspect_mask(vk::ImageAspectFlags::COLOR).level_count(1).layer_count(1)
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        for &view in &self.views {
            unsafe { self.device.raw.destroy_image_view(view, None) };
        }
        unsafe { self.loader.destroy_swapchain(self.raw, None) };
    }
}
