//! What exists once the window does: its surface, the device, the swapchain (made again on a
//! resize), the renderer and the panel's pass.

use std::sync::Arc;

use ash::vk;
use raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::event_loop::ActiveEventLoop;
use winit::window::Window;

use super::ui::Ui;
use super::Viewer;
use crate::gpu::device::DeviceRequest;
use crate::gpu::swapchain::{Surface, Swapchain};
use crate::gpu::{self, Device, Instance, InstanceOptions};
use crate::render::passes::overlay::OverlayPass;
use crate::render::Renderer;

/// Everything that exists once the window does. Field order is drop order: the renderer and the
/// swapchain go before the surface, and the device (holding the instance) last.
pub(super) struct Graphics {
    pub(super) renderer: Renderer,
    /// The panel's pass and input, with the viewer (not the renderer) so its textures outlive a
    /// renderer rebuilt for another strategy or count.
    pub(super) ui: Option<Ui>,
    pub(super) swapchain: Option<Swapchain>,
    pub(super) surface: Surface,
    pub(super) device: Arc<Device>,
    pub(super) window: Arc<Window>,
}

impl Drop for Graphics {
    fn drop(&mut self) {
        let _ = self.device.wait_idle();
        self.swapchain = None;
        self.surface.destroy();
    }
}

impl Viewer {
    pub(super) fn create_graphics(&mut self, event_loop: &ActiveEventLoop) -> Result<Graphics, String> {
        let (width, height) = self.options.size;
        let attributes =
            Window::default_attributes().with_title("vkskin").with_inner_size(winit::dpi::PhysicalSize::new(width, height));
        let window = Arc::new(event_loop.create_window(attributes).map_err(|error| format!("cannot create a window: {error}"))?);
        let display = window.display_handle().map_err(|error| error.to_string())?.as_raw();
        let window_handle = window.window_handle().map_err(|error| error.to_string())?.as_raw();
        let extensions =
            ash_window::enumerate_required_extensions(display).map_err(|error| format!("no Vulkan surface support: {error}"))?;
        // SAFETY: ash-window returns pointers to static, NUL-terminated extension names.
        let surface_extensions = extensions.iter().map(|&name| unsafe { std::ffi::CStr::from_ptr(name) }).collect();
        let instance = Instance::new(&InstanceOptions { validation: self.options.validation, surface_extensions })
            .map_err(|error| error.to_string())?;
        let surface_raw = unsafe { ash_window::create_surface(&instance.entry, &instance.raw, display, window_handle, None) }
            .map_err(|error| format!("vkCreate*SurfaceKHR failed: {error}"))?;
        let surface = Surface { raw: surface_raw, loader: ash::khr::surface::Instance::new(&instance.entry, &instance.raw) };
        let device = match Device::new(
            instance,
            DeviceRequest { surface: Some((&surface.loader, surface.raw)), needs: crate::render::device_needs() },
        ) {
            Ok(device) => Arc::new(device),
            Err(error) => {
                // The instance went down with the failed device; the surface leaks with it, harmlessly, at exit.
                return Err(error.to_string());
            }
        };
        let size = window.inner_size();
        let swapchain = Swapchain::new(&device, &surface, vk::Extent2D { width: size.width, height: size.height }, None)
            .map_err(|error| error.to_string())?;
        let settings = self.options.render_settings();
        let (models, of) = (self.setup.models(), self.setup.model_indices());
        let mut renderer = Renderer::for_models(&device, &models, &of, swapchain.format, self.options.strategy, settings)
            .map_err(|error| error.to_string())?;
        if let Some(missing) = renderer.set_debug(self.options.debug)? {
            log::warn!("{missing}");
            self.last_error = Some(missing);
        }
        let ui = if self.options.ui {
            let pass = OverlayPass::new(&device, swapchain.format).map_err(|error| error.to_string())?;
            let context = egui::Context::default();
            let scale = Some(window.scale_factor() as f32);
            let input = egui_winit::State::new(context.clone(), egui::ViewportId::ROOT, &window, scale, None, None);
            Some(Ui { pass, context, input })
        } else {
            None
        };
        Ok(Graphics { renderer, ui, swapchain: Some(swapchain), surface, device, window })
    }

    pub(super) fn recreate_swapchain(&mut self) -> gpu::Result<()> {
        let Some(graphics) = &mut self.graphics else { return Ok(()) };
        let size = graphics.window.inner_size();
        if size.width == 0 || size.height == 0 {
            return Ok(()); // minimized: keep the old one until there is something to show
        }
        graphics.device.wait_idle()?;
        let extent = vk::Extent2D { width: size.width, height: size.height };
        let new = Swapchain::new(&graphics.device, &graphics.surface, extent, graphics.swapchain.as_ref())?;
        graphics.swapchain = Some(new);
        self.swapchain_dirty = false;
        self.report.swapchains += 1;
        Ok(())
    }
}
