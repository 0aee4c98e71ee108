//! The windowed viewer: winit's event loop, a swapchain, an orbit camera, a clock and the panel.
//!
//! Mouse drag orbits, the wheel zooms, Space pauses, N steps one frame while paused, 1-9 switch
//! clips with a crossfade, + and - double and halve the instances, R resets, F1 shows or hides
//! the panel (`panel.rs`, drawn by the overlay pass), F2-F6 toggle the debug views, Esc quits. A
//! model file dropped on the window replaces the model; a .md5anim dropped on an MD5 model adds
//! its clip. The title keeps a short summary for window managers that show it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ash::vk;
use raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

use crate::app::{default_animations, SceneSetup};
use crate::capture::FrameCapture;
use crate::formats::load_model;
use crate::gpu::device::DeviceRequest;
use crate::gpu::swapchain::{Acquired, Surface, Swapchain};
use crate::gpu::{self, Device, Instance, InstanceOptions, MessageCounts};
use crate::panel::{Action, Panel, PanelInfo};
use crate::render::camera::OrbitCamera;
use crate::render::debug::DebugViews;
use crate::render::overlay::{OverlayFrame, OverlayPass};
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
    /// Debug views on at start (F2-F6 toggle them).
    pub debug: DebugViews,
    /// `--storm N`: the viewer drives N window events at itself, one a frame (resizes to odd and
    /// tiny sizes, 0×0 as a minimized window reports it, minimize and restore, focus, hide and
    /// show), then settles back at its size. A test of the swapchain's life cycle.
    pub storm: u32,
    /// Write the final frame, rendered offscreen by the same renderer, as PNG on exit.
    pub screenshot: Option<std::path::PathBuf>,
    /// Start with the panel shown (F1 toggles it); `--no-ui` starts without it and without the
    /// overlay pass.
    pub ui: bool,
    /// The model file and its separate animations, for a .md5anim dropped on the window.
    pub model_path: Option<std::path::PathBuf>,
    pub animations: Vec<std::path::PathBuf>,
    /// `--drive`: panel actions to apply after so many frames, in frame order.
    pub drive: Vec<(u64, Action)>,
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
    /// The model shown at the end (a dropped file may have replaced the first).
    pub model: String,
    /// The panel's rectangle in the last frame, in pixels (x0, y0, x1, y1), when it was shown.
    pub panel_rect: Option<[u32; 4]>,
    /// The overlay pass's GPU time over the frames that drew it, in milliseconds: median and mean
    /// (the mean counts the frames that drew the panel afresh; the rest copied it from its cache).
    pub overlay_ms: Option<(f64, f64)>,
}

/// Everything that exists once the window does. Field order is drop order: the renderer and the
/// swapchain go before the surface, and the device (holding the instance) last.
struct Graphics {
    renderer: Renderer,
    /// The panel's pass and input, with the viewer (not the renderer) so its textures outlive a
    /// renderer rebuilt for another strategy or count.
    ui: Option<Ui>,
    swapchain: Option<Swapchain>,
    surface: Surface,
    device: Arc<Device>,
    window: Arc<Window>,
}

struct Ui {
    pass: OverlayPass,
    context: egui::Context,
    input: egui_winit::State,
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
    panel: Panel,
    /// The clock's rate (the panel's speed slider).
    speed: f32,
    /// What last failed (a dropped file, a strategy or count the device refused), for the panel.
    last_error: Option<String>,
    /// The last frame's panel, drawn again over the screenshot.
    last_overlay: Option<OverlayFrame>,
    overlay_times: Vec<f64>,
    live: Live,
}

/// The numbers the panel shows, refreshed four times a second and after every action: between
/// refreshes the panel's triangles stay the same, and the overlay copies it from its cache.
struct Live {
    at: Instant,
    /// Frames and seconds since the last refresh (the graph plots their mean).
    frames: u32,
    seconds: f64,
    clock: f64,
    timings: Option<crate::render::stats::PassTimings>,
    visible: Option<crate::render::stats::VisibleCounts>,
    stale: bool,
}

const LIVE_REFRESH: Duration = Duration::from_millis(250);

/// The clock's step a frame when the viewer runs a set number of frames (`--frames`: tests and
/// captures), so that two runs show the same scene at the same frame.
const FIXED_STEP: f64 = 1.0 / 60.0;

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
        panel: Panel::new(true),
        speed: 1.0,
        last_error: None,
        last_overlay: None,
        overlay_times: Vec::new(),
        live: Live { at: Instant::now(), frames: 0, seconds: 0.0, clock: 0.0, timings: None, visible: None, stale: true },
    };
    viewer.panel.visible = viewer.options.ui;
    // RenderDoc in the process already (started from its UI): the panel offers a capture button.
    if viewer.options.capture.is_none() {
        viewer.options.capture = FrameCapture::in_process();
    }
    event_loop.run_app(&mut viewer).map_err(|error| format!("event loop failed: {error}"))?;
    if let (Some(path), None) = (viewer.options.screenshot.clone(), &viewer.error) {
        viewer.write_screenshot(&path)?;
    }
    if let Some(graphics) = &viewer.graphics {
        viewer.report.messages = graphics.device.instance.message_counts();
    }
    viewer.report.model = format!("{}, {} clips", viewer.setup.model.name, viewer.setup.model.clips.len());
    let times = &mut viewer.overlay_times;
    times.sort_by(f64::total_cmp);
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    viewer.report.overlay_ms = times.get(times.len() / 2).map(|&median| (median, mean));
    viewer.graphics = None;
    match viewer.error {
        Some(error) => Err(error),
        None => Ok(viewer.report),
    }
}

impl Viewer {
    /// The frame at the current clock, rendered offscreen by the same renderer (and the last
    /// frame's panel over it), as PNG.
    fn write_screenshot(&mut self, path: &std::path::Path) -> Result<(), String> {
        let Some(graphics) = &mut self.graphics else { return Ok(()) };
        let size = graphics.window.inner_size();
        let (width, height) = if size.width == 0 || size.height == 0 { self.options.size } else { (size.width, size.height) };
        let scene = self.setup.frame(self.clock, width as f32 / height.max(1) as f32);
        let format = graphics.renderer.setup.color_format;
        let target = crate::render::offscreen::OffscreenTarget::with_format(&graphics.device, width, height, format)
            .map_err(|error| error.to_string())?;
        let overlay = match (&mut graphics.ui, &self.last_overlay) {
            (Some(ui), Some(frame)) if self.panel.visible => Some((&mut ui.pass, frame)),
            _ => None,
        };
        graphics.renderer.render_with_overlay(&scene, Output::Offscreen(&target), overlay).map_err(|error| error.to_string())?;
        graphics.renderer.wait_all().map_err(|error| error.to_string())?;
        let image = target.read_image().map_err(|error| error.to_string())?;
        crate::render::offscreen::save_png(&image, path)
    }

    /// `--drive`: the actions due after this many frames, each after a screenshot of the frame
    /// before it (`--screenshot` PATH gives PATH_FRAME.png).
    fn drive(&mut self) -> Result<(), String> {
        while let Some(&(frame, _)) = self.options.drive.first() {
            if frame > self.report.frames {
                break;
            }
            let (_, action) = self.options.drive.remove(0);
            if let Some(path) = &self.options.screenshot {
                let stem = path.file_stem().map_or_else(String::new, |stem| stem.to_string_lossy().into_owned());
                let shot = path.with_file_name(format!("{stem}_{frame}.png"));
                self.write_screenshot(&shot)?;
            }
            println!("frame {frame}: {action:?}");
            self.live.stale = true;
            self.last_error = None;
            self.apply(action).map_err(|error| error.to_string())?;
            if let Some(error) = &self.last_error {
                println!("the panel says: {error}");
            }
        }
        Ok(())
    }

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

    /// Rebuilds the renderer for another instance count or strategy, keeping the clip.
    fn rebuild(&mut self, count: usize, strategy: Strategy) -> gpu::Result<()> {
        let count = count.max(1);
        if count == self.setup.instances.len() && strategy == self.options.strategy {
            return Ok(());
        }
        let first = self.setup.instances.first();
        let (clip, layer) = (first.and_then(|instance| instance.clip), first.and_then(|instance| instance.layer));
        let mut resized = SceneSetup::new(self.setup.model.clone(), count);
        resized.camera = self.setup.camera;
        if let Some(clip) = clip {
            resized.play(clip, self.clock, 0.0);
        }
        for instance in &mut resized.instances {
            instance.layer = layer;
        }
        self.replace_scene(resized, strategy).map(|_| ())
    }

    /// A new renderer for `setup` with `strategy` (the one place the viewer waits for the GPU
    /// outside a resize). What the device refuses keeps the old scene and says why in the panel;
    /// whether the scene was replaced.
    fn replace_scene(&mut self, setup: SceneSetup, strategy: Strategy) -> gpu::Result<bool> {
        let Some(graphics) = &mut self.graphics else { return Ok(false) };
        let count = setup.instances.len();
        let format = graphics.renderer.setup.color_format;
        graphics.device.wait_idle()?;
        match Renderer::new(&graphics.device, &setup.model, count as u32, format, strategy) {
            Ok(mut renderer) => {
                let mut views = graphics.renderer.debug;
                if let Err(reason) = views.check(strategy) {
                    self.last_error = Some(format!("debug views turned off: {reason}"));
                    views = DebugViews::default();
                }
                if let Err(error) = renderer.set_debug(views) {
                    self.last_error = Some(error);
                }
                graphics.renderer = renderer;
                self.setup = setup;
                self.options.strategy = strategy;
                Ok(true)
            }
            Err(error) => {
                let message = format!("{count} instances with the {} strategy: {error}", strategy.name());
                log::warn!("{message}");
                self.last_error = Some(message);
                Ok(false)
            }
        }
    }

    /// A file dropped on the window: a model replaces the current one; a .md5anim adds its clip
    /// to the MD5 model shown. A file that fails keeps the current model and shows its error.
    fn open_dropped(&mut self, path: &std::path::Path) -> gpu::Result<()> {
        let is_animation = path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("md5anim"));
        let (mesh, animations) = if is_animation {
            match &self.options.model_path {
                Some(mesh) if mesh.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("md5mesh")) => {
                    let mut animations = default_animations(mesh, &self.options.animations);
                    animations.push(path.to_path_buf());
                    (mesh.clone(), animations)
                }
                _ => {
                    self.last_error = Some(format!("{}: a .md5anim goes onto an MD5 model (.md5mesh)", path.display()));
                    return Ok(());
                }
            }
        } else {
            (path.to_path_buf(), default_animations(path, &[]))
        };
        let model = match load_model(&mesh, &animations) {
            Ok(model) => model,
            Err(error) => {
                self.last_error = Some(crate::formats::files::one_line(&error.to_string()));
                return Ok(());
            }
        };
        let added_clip = is_animation.then(|| model.clips.len().saturating_sub(1));
        let mut setup = SceneSetup::new(model, self.setup.instances.len());
        if let Some(clip) = added_clip {
            setup.play(clip, self.clock, self.options.fade_seconds);
        }
        let camera = setup.camera;
        if self.replace_scene(setup, self.options.strategy)? {
            self.initial_camera = camera;
            self.options.model_path = Some(mesh);
            self.options.animations = animations;
            self.last_error = None;
        }
        Ok(())
    }

    /// Applies what the user did in the panel.
    fn apply(&mut self, action: Action) -> gpu::Result<()> {
        match action {
            Action::Strategy(strategy) => self.rebuild(self.setup.instances.len(), strategy)?,
            Action::Instances(count) => self.rebuild(count, self.options.strategy)?,
            Action::Clip(clip) => self.setup.play(clip, self.clock, self.options.fade_seconds),
            Action::Fade(seconds) => self.options.fade_seconds = seconds,
            Action::Speed(speed) => self.speed = speed,
            Action::Pause(paused) => self.paused = paused,
            Action::Step => self.clock += self.frame_step(),
            Action::Seek(seconds) => self.clock = seconds,
            Action::Debug(views) => {
                if let Some(graphics) = &mut self.graphics {
                    if let Err(error) = graphics.renderer.set_debug(views) {
                        self.last_error = Some(error);
                    }
                }
            }
            Action::Panel(on) => self.panel.visible = on && self.options.ui,
            Action::Layer(layer) => {
                let fits = layer.is_none_or(|layer| {
                    layer.clip < self.setup.model.clips.len() && layer.joint < self.setup.model.skeleton.len()
                });
                if fits {
                    for instance in &mut self.setup.instances {
                        instance.layer = layer;
                    }
                } else {
                    self.last_error = Some(format!("{layer:?}: no such clip or joint in {}", self.setup.model.name));
                }
            }
            Action::Open(path) => self.open_dropped(&path)?,
            Action::Capture => match &mut self.options.capture {
                Some(capture) => capture.frame = self.report.frames,
                None => self.last_error = Some("no RenderDoc in this process: start the viewer from RenderDoc".into()),
            },
        }
        Ok(())
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
            let step = if self.options.frame_limit.is_some() { FIXED_STEP } else { elapsed };
            self.clock += step * f64::from(self.speed);
        }
        self.live.frames += 1;
        self.live.seconds += elapsed;
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

        // The panel's numbers, refreshed four times a second.
        let live = &mut self.live;
        if live.stale || now.duration_since(live.at) >= LIVE_REFRESH {
            if live.frames > 0 {
                self.panel.push_frame_time((live.seconds * 1e3 / f64::from(live.frames)) as f32);
            }
            live.clock = self.clock;
            live.timings = graphics.renderer.stats.timings.clone();
            live.visible = graphics.renderer.stats.visible;
            (live.at, live.frames, live.seconds, live.stale) = (now, 0, 0.0, false);
        }

        // The panel: egui runs on this frame's input and returns its triangles and the actions taken.
        let mut actions = Vec::new();
        let device_name = graphics.device.name();
        let present_mode = format!("{:?}", swapchain.present_mode);
        let mut overlay = match &mut graphics.ui {
            Some(ui) if self.panel.visible => {
                let model = &self.setup.model;
                let clip = self.setup.instances.first().and_then(|instance| instance.clip);
                let info = PanelInfo {
                    device: &device_name,
                    driver: graphics.device.driver_name.trim(),
                    resolution: (extent.width, extent.height),
                    present_mode: &present_mode,
                    model_name: &model.name,
                    vertices: model.vertices.len(),
                    triangles: model.indices.len() / 3,
                    joints: model.skeleton.len(),
                    max_influences: model.stats.max_influences,
                    instances: self.setup.instances.len(),
                    max_instances: graphics.renderer.setup.memory.max_instances as usize,
                    limiting: &graphics.renderer.setup.memory.limiting,
                    strategy: self.options.strategy,
                    clips: model.clips.iter().map(|clip| clip.name.as_str()).collect(),
                    clip,
                    joints_named: model.skeleton.joints.iter().map(|joint| joint.name.as_str()).collect(),
                    layer: self.setup.instances.first().and_then(|instance| instance.layer),
                    clip_duration: clip.and_then(|clip| model.clips.get(clip)).map_or(1.0, |clip| clip.duration),
                    clock: self.live.clock,
                    paused: self.paused,
                    speed: self.speed,
                    fade: self.options.fade_seconds,
                    debug: graphics.renderer.debug,
                    timings: self.live.timings.as_ref(),
                    visible: self.live.visible,
                    renderdoc: self.options.capture.is_some(),
                    error: self.last_error.as_deref(),
                };
                let input = ui.input.take_egui_input(&graphics.window);
                let mut rect = None;
                let output = ui.context.run(input, |context| {
                    let (taken, shown) = self.panel.ui(context, &info);
                    actions = taken;
                    rect = shown;
                });
                ui.input.handle_platform_output(&graphics.window, output.platform_output);
                let pixels_per_point = output.pixels_per_point;
                self.report.panel_rect = rect.map(|rect| {
                    let pixels = rect * pixels_per_point;
                    [pixels.min.x.floor(), pixels.min.y.floor(), pixels.max.x.ceil(), pixels.max.y.ceil()]
                        .map(|value| value.max(0.0) as u32)
                });
                let primitives = ui.context.tessellate(output.shapes, pixels_per_point);
                let frame = OverlayFrame { primitives, textures: output.textures_delta, pixels_per_point, panel_rect: rect };
                Some((ui, frame))
            }
            _ => None,
        };

        // Render and present, inside a RenderDoc capture when this is the frame to capture.
        let mut needs_recreate = false;
        let renderer = &mut graphics.renderer;
        let drawn_overlay = overlay.is_some();
        let captured = crate::capture::around_frame(self.options.capture.as_mut(), self.report.frames, || {
            let output = Output::Swapchain {
                image: swapchain.images[index as usize],
                view: swapchain.views[index as usize],
                extent,
                render_finished: swapchain.render_finished[index as usize].raw,
            };
            let panel = overlay.as_mut().map(|(ui, frame)| (&mut ui.pass, &*frame));
            renderer.render_with_overlay(&scene, output, panel)?;
            needs_recreate = swapchain.present(index)?;
            Ok(())
        })
        .map_err(gpu::Error::Other)?;
        if let Some((_, frame)) = overlay {
            // Kept for the screenshot, without the texture changes already made.
            self.last_overlay = Some(OverlayFrame { textures: Default::default(), ..frame });
        }
        if drawn_overlay {
            self.overlay_times.extend(graphics.renderer.stats.timings.as_ref().and_then(|timings| timings.get("overlay")));
        }
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
            graphics.window.set_title(&format!(
                "vkskin: {} x{} [{clip}] {} | {fps:.1} fps, {:.1} ms{state}",
                self.setup.model.name,
                self.setup.instances.len(),
                self.options.strategy.name(),
                1000.0 / fps.max(1e-6)
            ));
            self.fps_window = (now, 0);
        }
        self.live.stale |= !actions.is_empty();
        for action in actions {
            self.apply(action)?;
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
        // The panel sees input first; what it takes (a click on a slider) the scene does not.
        if let (Some(graphics), true) = (&mut self.graphics, self.panel.visible) {
            if let Some(ui) = &mut graphics.ui {
                if ui.input.on_window_event(&graphics.window, &event).consumed {
                    return;
                }
            }
        }
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(_) => self.swapchain_dirty = true,
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => match event.logical_key {
                Key::Named(NamedKey::Escape) => event_loop.exit(),
                Key::Character(ref text) if text == "+" || text == "=" || text == "-" => {
                    let count = if text == "-" { self.setup.instances.len() / 2 } else { self.setup.instances.len() * 2 };
                    let most = self.graphics.as_ref().map_or(1, |graphics| graphics.renderer.setup.memory.max_instances as usize);
                    if let Err(error) = self.rebuild(count.min(most), self.options.strategy) {
                        self.fail(event_loop, error.to_string());
                    }
                }
                Key::Named(NamedKey::F1) => {
                    let _ = self.apply(Action::Panel(!self.panel.visible));
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
                Key::Named(named @ (NamedKey::F2 | NamedKey::F3 | NamedKey::F4 | NamedKey::F5 | NamedKey::F6)) => {
                    let index = [NamedKey::F2, NamedKey::F3, NamedKey::F4, NamedKey::F5, NamedKey::F6]
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
            WindowEvent::DroppedFile(path) => {
                if let Err(error) = self.apply(Action::Open(path)) {
                    self.fail(event_loop, error.to_string());
                }
            }
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
                if let Err(error) = self.drive() {
                    self.fail(event_loop, error);
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
