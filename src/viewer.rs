//! The windowed viewer: winit's event loop, a swapchain, an orbit camera and a clock.
//!
//! Mouse drag orbits, the wheel zooms, Space pauses, N steps one frame while paused, 1-9 switch
//! clips with a crossfade, + and - double and halve the instances, R resets, Esc quits. The title
//! shows the instance and vertex counts, the clip, the strategy, FPS and per-pass GPU times.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ash::vk;
use raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

use crate::app::SceneSetup;
use crate::capture::FrameCapture;
use crate::gpu::device::DeviceRequest;
use crate::gpu::swapchain::{Acquired, Surface, Swapchain};
use crate::gpu::{self, Device, Instance, InstanceOptions, MessageCounts};
use crate::render::camera::OrbitCamera;
use crate::render::debug::DebugViews;
use crate::render::{Output, Renderer, Strategy};

pub struct ViewerOptions {
    pub validation: bool,
    /// Quit after this many presented frames (tests, captures); None runs until closed.
    pub frame_limit: Option<u64>,
    pub size: (u32, u32),
    /// Crossfade time when keys 1-9 switch clips.
    pub fade_seconds: f32,
    pub strategy: Strategy,
    /// `--capture-frame N`: RenderDoc, attached before the window's Vulkan instance.
    pub capture: Option<FrameCapture>,
    /// Debug views on at start (F1-F5 toggle them).
    pub debug: DebugViews,
    /// `--storm N`: the viewer drives N window events at itself, one a frame (resizes to odd and
    /// tiny sizes, 0×0 as a minimized window reports it, minimize and restore, focus, hide and
    /// show), then settles back at its size. A test of the swapchain's life cycle.
    pub storm: u32,
    /// Write the final frame, rendered offscreen by the same renderer, as PNG on exit.
    pub screenshot: Option<std::path::PathBuf>,
}

/// What the viewer reports when it closes.
#[derive(Debug, Default)]
pub struct ViewerReport {
    pub frames: u64,
    pub messages: MessageCounts,
    /// RenderDoc captures written (`--capture-frame`).
    pub captures: Vec<std::path::PathBuf>,
    /// Window events the storm drove, and swapchains created (the first included).
    pub storm_events: u32,
    pub swapchains: u32,
}

/// Everything that exists once the window does. Field order is drop order: the renderer and the
/// swapchain go before the surface, and the device (holding the instance) last.
struct Graphics {
    renderer: Renderer,
    swapchain: Option<Swapchain>,
    surface: Surface,
    device: Arc<Device>,
    window: Arc<Window>,
}

impl Drop for Graphics {
    fn drop(&mut self) {
        let _ = self.device.wait_idle();
        self.swapchain = None;
        self.surface.destroy();
    }
}

struct Viewer {
    setup: SceneSetup,
    options: ViewerOptions,
    graphics: Option<Graphics>,
    error: Option<String>,
    report: ViewerReport,
    clock: f64,
    paused: bool,
    last_tick: Instant,
    fps_window: (Instant, u64),
    dragging: bool,
    last_cursor: Option<(f64, f64)>,
    swapchain_dirty: bool,
    /// Frames left to treat the window as 0×0 (the storm's stand-in for a minimized window).
    zero_size_frames: u32,
    initial_camera: OrbitCamera,
}

/// Runs the viewer until the window closes. Fails cleanly when there is no display.
pub fn run(setup: SceneSetup, options: ViewerOptions) -> Result<ViewerReport, String> {
    let event_loop = EventLoop::new().map_err(|error| {
        format!(
            "cannot open a window ({error}). `vkskin view` needs a display: set DISPLAY, or run it under \
             `xvfb-run -a`; for a headless image use `vkskin render --out frame.png`"
        )
    })?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let initial_camera = setup.camera;
    let mut viewer = Viewer {
        setup,
        options,
        graphics: None,
        error: None,
        report: ViewerReport::default(),
        clock: 0.0,
        paused: false,
        last_tick: Instant::now(),
        fps_window: (Instant::now(), 0),
        dragging: false,
        last_cursor: None,
        swapchain_dirty: false,
        initial_camera,
        zero_size_frames: 0,
    };
    event_loop.run_app(&mut viewer).map_err(|error| format!("event loop failed: {error}"))?;
    if let (Some(path), Some(graphics), None) = (&viewer.options.screenshot, &mut viewer.graphics, &viewer.error) {
        let size = graphics.window.inner_size();
        let (width, height) = if size.width == 0 || size.height == 0 { viewer.options.size } else { (size.width, size.height) };
        let scene = viewer.setup.frame(viewer.clock, width as f32 / height.max(1) as f32);
        let format = graphics.renderer.setup.color_format;
        let target = crate::render::offscreen::OffscreenTarget::with_format(&graphics.device, width, height, format)
            .map_err(|error| error.to_string())?;
        graphics.renderer.render(&scene, Output::Offscreen(&target)).map_err(|error| error.to_string())?;
        graphics.renderer.wait_all().map_err(|error| error.to_string())?;
        let image = target.read_image().map_err(|error| error.to_string())?;
        crate::render::offscreen::save_png(&image, path)?;
    }
    if let Some(graphics) = &viewer.graphics {
        viewer.report.messages = graphics.device.instance.message_counts();
    }
    viewer.graphics = None;
    match viewer.error {
        Some(error) => Err(error),
        None => Ok(viewer.report),
    }
}

impl Viewer {
    /// One event of `--storm`, at the window itself.
    fn storm_step(&mut self) {
        let Some(graphics) = &self.graphics else { return };
        let step = self.report.storm_events;
        self.report.storm_events += 1;
        let window = &graphics.window;
        const SIZES: [(u32, u32); 6] = [(1, 1), (37, 19), (640, 480), (123, 457), (2, 300), (301, 2)];
        match step % 10 {
            0 | 5 => {
                let (width, height) = SIZES[(step as usize / 5) % SIZES.len()];
                let _ = window.request_inner_size(winit::dpi::PhysicalSize::new(width, height));
            }
            1 => window.set_minimized(true),
            2 => window.set_minimized(false),
            3 => window.focus_window(),
            // What a minimized window reports on some platforms: a 0×0 size, for a few frames.
            4 => {
                self.zero_size_frames = 3;
                self.swapchain_dirty = true;
            }
            6 => window.set_visible(false),
            7 => window.set_visible(true),
            8 => self.swapchain_dirty = true,
            _ => {
                let (width, height) = self.options.size;
                let _ = window.request_inner_size(winit::dpi::PhysicalSize::new(width, height));
            }
        }
        if self.report.storm_events == self.options.storm {
            let (width, height) = self.options.size;
            let _ = window.request_inner_size(winit::dpi::PhysicalSize::new(width, height));
            window.focus_window();
        }
    }

    fn create_graphics(&self, event_loop: &ActiveEventLoop) -> Result<Graphics, String> {
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
        let instances = self.setup.instances.len() as u32;
        let mut renderer = Renderer::new(&device, &self.setup.model, instances, swapchain.format, self.options.strategy)
            .map_err(|error| error.to_string())?;
        renderer.set_debug(self.options.debug)?;
        Ok(Graphics { renderer, swapchain: Some(swapchain), surface, device, window })
    }

    /// `+`/`-`: doubles or halves the instance count and rebuilds the renderer for it (the one
    /// place the viewer waits for the GPU outside a resize).
    fn change_instances(&mut self, count: usize) -> gpu::Result<()> {
        let Some(graphics) = &mut self.graphics else { return Ok(()) };
        let count = count.clamp(1, 1 << 16);
        if count == self.setup.instances.len() {
            return Ok(());
        }
        let clip = self.setup.instances.first().and_then(|instance| instance.clip);
        let mut resized = SceneSetup::new(self.setup.model.clone(), count);
        resized.camera = self.setup.camera;
        if let Some(clip) = clip {
            resized.play(clip, self.clock, 0.0);
        }
        let format = graphics.renderer.setup.color_format;
        graphics.device.wait_idle()?;
        // A count past the device's limits is refused by Renderer::new: keep the old renderer then.
        match Renderer::new(&graphics.device, &resized.model, count as u32, format, self.options.strategy) {
            Ok(mut renderer) => {
                // The views were checked when they were turned on.
                let _ = renderer.set_debug(graphics.renderer.debug);
                graphics.renderer = renderer;
                self.setup = resized;
                Ok(())
            }
            Err(error) => {
                log::warn!("{count} instances: {error}");
                Ok(())
            }
        }
    }

    fn recreate_swapchain(&mut self) -> gpu::Result<()> {
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

    fn frame(&mut self) -> gpu::Result<()> {
        let now = Instant::now();
        let elapsed = now.duration_since(self.last_tick).as_secs_f64();
        self.last_tick = now;
        if !self.paused {
            self.clock += elapsed;
        }
        if self.swapchain_dirty {
            self.recreate_swapchain()?;
        }
        let Some(graphics) = &mut self.graphics else { return Ok(()) };
        let size = graphics.window.inner_size();
        if size.width == 0 || size.height == 0 || self.zero_size_frames > 0 {
            self.zero_size_frames = self.zero_size_frames.saturating_sub(1);
            return Ok(()); // minimized: nothing to draw into
        }
        let image_available = graphics.renderer.wait_for_slot()?;
        let Some(swapchain) = &graphics.swapchain else { return Ok(()) };
        let (index, suboptimal) = match swapchain.acquire(image_available)? {
            Acquired::Image { index, suboptimal } => (index, suboptimal),
            Acquired::OutOfDate => {
                self.swapchain_dirty = true;
                return Ok(());
            }
        };
        let extent = swapchain.extent;
        let scene = self.setup.frame(self.clock, extent.width as f32 / extent.height.max(1) as f32);
        // Render and present, inside a RenderDoc capture when this is the frame to capture.
        let mut needs_recreate = false;
        let captured = crate::capture::around_frame(self.options.capture.as_mut(), self.report.frames, || {
            graphics.renderer.render(
                &scene,
                Output::Swapchain {
                    image: swapchain.images[index as usize],
                    view: swapchain.views[index as usize],
                    extent,
                    render_finished: swapchain.render_finished[index as usize].raw,
                },
            )?;
            needs_recreate = swapchain.present(index)?;
            Ok(())
        })
        .map_err(gpu::Error::Other)?;
        self.report.captures.extend(captured);
        self.swapchain_dirty |= needs_recreate || suboptimal;
        self.report.frames += 1;

        let (since, frames) = &mut self.fps_window;
        *frames += 1;
        let window_elapsed = now.duration_since(*since);
        if window_elapsed >= Duration::from_millis(500) {
            let fps = *frames as f64 / window_elapsed.as_secs_f64();
            let state = if self.paused { " (paused)" } else { "" };
            let clip =
                self.setup.instances.first().and_then(|instance| instance.clip).and_then(|clip| self.setup.model.clips.get(clip));
            let clip = clip.map_or_else(|| "bind pose".to_string(), |clip| clip.name.clone());
            // Per-pass GPU milliseconds from the timestamps (on lavapipe: the software rasterizer's time).
            let passes = graphics.renderer.stats.timings.as_ref().map_or_else(String::new, |timings| {
                let list: Vec<String> = timings.milliseconds.iter().map(|(pass, ms)| format!("{pass} {ms:.2}")).collect();
                format!(" | gpu ms: {}", list.join(", "))
            });
            let vertices = self.setup.instances.len() * self.setup.model.vertices.len();
            let visible = graphics.renderer.stats.visible.map_or(String::new(), |visible| {
                format!(" | visible: {} skinned, {} camera, {} light", visible.skinned, visible.camera, visible.light)
            });
            graphics.window.set_title(&format!(
                "vkskin: {} x{} ({vertices} vertices) [{clip}] {} | {fps:.1} fps, {:.1} ms{passes}{visible}{state}",
                self.setup.model.name,
                self.setup.instances.len(),
                self.options.strategy.name(),
                1000.0 / fps.max(1e-6)
            ));
            self.fps_window = (now, 0);
        }
        Ok(())
    }

    fn fail(&mut self, event_loop: &ActiveEventLoop, error: String) {
        self.error = Some(error);
        event_loop.exit();
    }

    fn frame_step(&self) -> f64 {
        let rate = self.setup.model.animations.first().and_then(|animation| animation.frame_rate).unwrap_or(30.0);
        1.0 / f64::from(rate)
    }
}

impl ApplicationHandler for Viewer {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.graphics.is_some() {
            return;
        }
        match self.create_graphics(event_loop) {
            Ok(graphics) => {
                self.graphics = Some(graphics);
                self.report.swapchains += 1;
                self.last_tick = Instant::now();
            }
            Err(error) => self.fail(event_loop, error),
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _window: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(_) => self.swapchain_dirty = true,
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => match event.logical_key {
                Key::Named(NamedKey::Escape) => event_loop.exit(),
                Key::Character(ref text) if text == "+" || text == "=" => {
                    let count = self.setup.instances.len() * 2;
                    if let Err(error) = self.change_instances(count) {
                        self.fail(event_loop, error.to_string());
                    }
                }
                Key::Character(ref text) if text == "-" => {
                    let count = self.setup.instances.len() / 2;
                    if let Err(error) = self.change_instances(count) {
                        self.fail(event_loop, error.to_string());
                    }
                }
                Key::Named(NamedKey::Space) => self.paused = !self.paused,
                Key::Character(ref text) if text.eq_ignore_ascii_case("n") && self.paused => self.clock += self.frame_step(),
                Key::Character(ref text) if matches!(text.as_str(), "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9") => {
                    let index = text.parse::<usize>().unwrap_or(1).saturating_sub(1);
                    self.setup.play(index, self.clock, self.options.fade_seconds);
                }
                Key::Character(ref text) if text.eq_ignore_ascii_case("r") => {
                    self.clock = 0.0;
                    self.setup.camera = self.initial_camera;
                }
                Key::Named(named @ (NamedKey::F1 | NamedKey::F2 | NamedKey::F3 | NamedKey::F4 | NamedKey::F5)) => {
                    let index = [NamedKey::F1, NamedKey::F2, NamedKey::F3, NamedKey::F4, NamedKey::F5]
                        .iter()
                        .position(|key| *key == named)
                        .unwrap_or(0);
                    if let Some(graphics) = &mut self.graphics {
                        let mut views = graphics.renderer.debug;
                        views.toggle(DebugViews::NAMES[index]);
                        if let Err(error) = graphics.renderer.set_debug(views) {
                            log::warn!("{error}");
                        }
                    }
                }
                _ => {}
            },
            WindowEvent::MouseInput { state, button: MouseButton::Left, .. } => {
                self.dragging = state == ElementState::Pressed;
            }
            WindowEvent::CursorMoved { position, .. } => {
                if let (true, Some((x, y))) = (self.dragging, self.last_cursor) {
                    self.setup.camera.orbit((position.x - x) as f32, (position.y - y) as f32);
                }
                self.last_cursor = Some((position.x, position.y));
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let steps = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(position) => position.y as f32 / 40.0,
                };
                self.setup.camera.zoom(steps);
            }
            WindowEvent::RedrawRequested => {
                if let Err(error) = self.frame() {
                    self.fail(event_loop, error.to_string());
                    return;
                }
                if self.options.frame_limit.is_some_and(|limit| self.report.frames >= limit) {
                    event_loop.exit();
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if self.report.storm_events < self.options.storm && self.report.frames > 0 {
            self.storm_step();
        }
        if let Some(graphics) = &self.graphics {
            graphics.window.request_redraw();
        }
    }
}
