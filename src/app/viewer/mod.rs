//! The windowed viewer: winit's event loop, a swapchain, an orbit camera, a clock and the panel.
//!
//! Mouse drag orbits, the wheel zooms, Space pauses, N steps one frame while paused, 1-9 switch
//! clips with a crossfade, + and - double and halve the instances, R resets, F1 shows or hides
//! the panel (`panel.rs`, drawn by the overlay pass), F2-F6 toggle the debug views, Esc quits. A
//! model file dropped on the window replaces the model; a file of clips without a mesh (a
//! .md5anim, a "without skin" FBX or glTF) adds its clips, matched by joint name. The title keeps a short summary for window managers that show it.

use std::time::{Duration, Instant};

use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::WindowId;

use crate::app::capture::FrameCapture;
use crate::app::panel::{Action, Panel};
use crate::app::SceneSetup;
use crate::gpu::swapchain::Acquired;
use crate::gpu::{self, MessageCounts};
use crate::model::Model;
use crate::render::camera::OrbitCamera;
use crate::render::passes::debug::DebugViews;
use crate::render::passes::overlay::OverlayFrame;
use crate::render::{Output, RenderSettings, Strategy};

mod actions;
mod graphics;
mod storm;
mod ui;
use graphics::Graphics;
use ui::{Live, PanelState};

pub struct ViewerOptions {
    pub validation: bool,
    /// Quit after this many presented frames (tests, captures); None runs until closed.
    pub frame_limit: Option<u64>,
    pub size: (u32, u32),
    /// Crossfade time when keys 1-9 switch clips.
    pub fade_seconds: f32,
    pub strategy: Strategy,
    /// How every instance blends its joints (`--skinning`, the panel).
    pub skinning: crate::anim::Skinning,
    /// `--light-culling on`: room for the triangle pass's light run (`RenderSettings`).
    pub light_culling: bool,
    /// `Setup::animation_lod` for every renderer the viewer builds.
    pub animation_lod: Option<f32>,
    /// Motion blur (`--motion-blur on`, the panel) for every renderer the viewer builds.
    pub motion_blur: bool,
    /// Shadows from the map or traced (`--shadows`, the panel) for every renderer the viewer builds.
    pub shadows: crate::render::Shadows,
    /// Which rasterizer draws the model (`--raster`, the panel) in every renderer the viewer builds.
    pub raster: crate::render::Raster,
    /// Travelling clips played in place, the instances moved by their root motion (`--root-motion`,
    /// the panel); files dropped on the window are read so too.
    pub root_motion: bool,
    /// Clips compressed (`--clip-compression`): on a worker thread after the first frame, which
    /// draws from the keys, swapped in between frames (as the levels of detail are).
    pub clip_compression: bool,
    /// Levels of detail for every model shown, built on a worker thread while the full mesh is
    /// drawn (`--lod on`).
    pub lod: bool,
    /// The worker reads the levels and the compressed clips from the derived-data cache where it
    /// holds them, and stores them there where not (`--cache`; `model::derived`).
    pub cache: bool,
    /// `--capture-frame N`: RenderDoc, attached before the window's Vulkan instance.
    pub capture: Option<FrameCapture>,
    /// Debug views on at start (F2-F8 toggle them).
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
    /// The model file and the files whose clips play on it, for a file of clips dropped on the
    /// window.
    pub model_path: Option<std::path::PathBuf>,
    pub animations: Vec<std::path::PathBuf>,
    /// `--drive`: panel actions to apply after so many frames, in frame order.
    pub drive: Vec<(u64, Action)>,
}

impl ViewerOptions {
    /// What every renderer the viewer builds is given (`Renderer::with_settings`).
    pub fn render_settings(&self) -> RenderSettings {
        RenderSettings {
            light_culling: self.light_culling,
            animation_lod: self.animation_lod,
            motion_blur: self.motion_blur,
            shadows: self.shadows,
            raster: self.raster,
            ..RenderSettings::default()
        }
    }
}

/// What the viewer reports when it closes.
#[derive(Debug, Default)]
pub struct ViewerReport {
    pub frames: u64,
    /// Seconds from the program's launch to the first frame's submission.
    pub first_frame_seconds: Option<f64>,
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
    /// The shown model's levels of detail being built, off the frame's path.
    levels: Option<LevelBuild>,
}

/// Levels of detail being built on a worker thread, and when that was asked for.
struct LevelBuild {
    receiver: std::sync::mpsc::Receiver<(Vec<Model>, f64)>,
    started: Instant,
}

/// The clock's step a frame when the viewer runs a set number of frames (`--frames`: tests and
/// captures), so that two runs show the same scene at the same frame.
const FIXED_STEP: f64 = 1.0 / 60.0;

/// winit's message without the place in its source it was raised at (`os error at
/// /root/.cargo/registry/.../linux/mod.rs:765: neither ...`): a path on the machine that built the
/// binary says nothing to the user.
fn without_source_place(message: &str) -> String {
    match message.find("os error at ") {
        Some(at) => {
            let rest = &message[at + "os error at ".len()..];
            // The place ends at its line number and the colon after it.
            let end = rest.find(|c: char| c.is_whitespace()).map_or(rest.len(), |space| space);
            let place_end = rest[..end].rfind(':').map_or(0, |colon| colon + 1);
            format!("{}{}", &message[..at], rest[place_end..].trim_start())
        }
        None => message.to_string(),
    }
}

/// Runs the viewer until the window closes. Fails cleanly when there is no display.
pub fn run(setup: SceneSetup, options: ViewerOptions) -> Result<ViewerReport, String> {
    let event_loop = EventLoop::new().map_err(|error| {
        format!(
            "cannot open a window ({}). `vkskin view` needs a display: set DISPLAY, or run it under \
             `xvfb-run -a`; for a headless image use `vkskin render --out frame.png`",
            without_source_place(&error.to_string())
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
        live: Live::new(),
        levels: None,
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
    let model = &viewer.setup.model;
    let levels = if model.levels.is_empty() { String::new() } else { format!(", {} levels of detail", model.levels.len() + 1) };
    viewer.report.model = format!("{}, {} clips{levels}", model.name, model.clips.len());
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
    fn frame(&mut self) -> gpu::Result<()> {
        self.poll_levels()?;
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
        self.setup.camera.inset = panel_inset(self.options.ui, extent.width);
        let scene = self.setup.frame(self.clock, extent.width as f32 / extent.height.max(1) as f32);

        // The panel: its numbers refreshed four times a second; egui runs on this frame's input
        // and returns its triangles and the actions taken.
        self.live.refresh(now, self.clock, &graphics.renderer, &mut self.panel);
        let mut actions = Vec::new();
        let mut overlay = None;
        self.report.panel_rect = None;
        if let (Some(ui), true) = (&mut graphics.ui, self.panel.visible) {
            let (device, present_mode) = (graphics.device.name(), format!("{:?}", swapchain.present_mode));
            let state = PanelState {
                setup: &self.setup,
                renderer: &graphics.renderer,
                live: &self.live,
                options: &self.options,
                paused: self.paused,
                speed: self.speed,
                error: self.last_error.as_deref(),
                levels_building: self.levels.is_some(),
            };
            let info = state.info(&device, graphics.device.driver_name.trim(), (extent.width, extent.height), &present_mode);
            let (frame, taken, pixels) = ui.run(&graphics.window, &mut self.panel, &info);
            (actions, self.report.panel_rect) = (taken, pixels);
            overlay = Some((ui, frame));
        }

        // Render and present, inside a RenderDoc capture when this is the frame to capture.
        let mut needs_recreate = false;
        let renderer = &mut graphics.renderer;
        let drawn_overlay = overlay.is_some();
        let captured = crate::app::capture::around_frame(self.options.capture.as_mut(), self.report.frames, || {
            let output = Output::Swapchain {
                image: swapchain.images[index as usize],
                view: swapchain.views[index as usize],
                extent,
                render_finished: swapchain.render_finished[index as usize].raw,
                takes_copies: swapchain.takes_copies,
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
        let first = self.report.first_frame_seconds.is_none();
        if first {
            self.report.first_frame_seconds = Some(crate::app::launched().elapsed().as_secs_f64());
        }

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
        // The frame's share of the states goes before the actions edit them (else the first edit
        // copies the table).
        drop(scene);
        if first {
            // The levels of detail and the compressed clips are made once the first frame is on
            // its way: on two cores a worker started before it slowed it down.
            self.start_levels();
        }
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
        // A left-button release ends a drag wherever it happens, over the panel too.
        if let WindowEvent::MouseInput { state: ElementState::Released, button: MouseButton::Left, .. } = event {
            self.dragging = false;
        }
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
                    self.switch_clip(index);
                }
                Key::Character(ref text) if text.eq_ignore_ascii_case("r") => {
                    self.clock = 0.0;
                    self.setup.camera = self.initial_camera;
                    self.cut_motion();
                }
                Key::Named(
                    named @ (NamedKey::F2
                    | NamedKey::F3
                    | NamedKey::F4
                    | NamedKey::F5
                    | NamedKey::F6
                    | NamedKey::F7
                    | NamedKey::F8),
                ) => {
                    let keys = [NamedKey::F2, NamedKey::F3, NamedKey::F4, NamedKey::F5, NamedKey::F6, NamedKey::F7, NamedKey::F8];
                    let index = keys.iter().position(|key| *key == named).unwrap_or(0);
                    if let Some(graphics) = &mut self.graphics {
                        let mut views = graphics.renderer.debug;
                        views.toggle(DebugViews::NAMES[index]);
                        if let Ok(Some(message)) | Err(message) = graphics.renderer.set_debug(views) {
                            log::warn!("{message}");
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

/// The panel's right edge in pixels (egui's window at 8 px, 300 wide, its margins).
const PANEL_RIGHT: f32 = 320.0;

/// The share of the window's width the panel takes, which the scene is drawn beside
/// ([`OrbitCamera::inset`](crate::render::camera::OrbitCamera::inset)), whenever the viewer has a
/// panel, shown or hidden, so F1 changes no pixel outside it; at most half a narrow window.
fn panel_inset(ui: bool, width: u32) -> f32 {
    if ui {
        (PANEL_RIGHT / width.max(1) as f32).min(0.5)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn winits_message_loses_the_place_in_its_source() {
        let message = "os error at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/winit-0.30.13/src/platform_impl/linux/mod.rs:765: neither WAYLAND_DISPLAY nor WAYLAND_SOCKET nor DISPLAY is set.";
        assert_eq!(super::without_source_place(message), "neither WAYLAND_DISPLAY nor WAYLAND_SOCKET nor DISPLAY is set.");
        assert_eq!(super::without_source_place("no display"), "no display");
    }
}
