//! The panel in the viewer: egui's input and output around [`Panel`], and the numbers it shows,
//! refreshed four times a second.

use std::time::{Duration, Instant};

use winit::window::Window;

use super::ViewerOptions;
use crate::app::panel::{Action, MorphRow, Panel, PanelInfo};
use crate::app::SceneSetup;
use crate::render::passes::overlay::{OverlayFrame, OverlayPass};
use crate::render::shader_types::InstanceData;
use crate::render::stats::{PassTimings, VisibleCounts};
use crate::render::Renderer;

/// The panel's pass and egui's state: with the viewer, not the renderer, so the panel's textures
/// outlive a renderer rebuilt for another strategy or count.
pub(super) struct Ui {
    pub(super) pass: OverlayPass,
    pub(super) context: egui::Context,
    pub(super) input: egui_winit::State,
}

impl Ui {
    /// One frame of the panel: egui on this frame's input. Its triangles for the overlay, the
    /// actions taken, and where the panel is, in pixels.
    pub(super) fn run(
        &mut self,
        window: &Window,
        panel: &mut Panel,
        info: &PanelInfo<'_>,
    ) -> (OverlayFrame, Vec<Action>, Option<[u32; 4]>) {
        let input = self.input.take_egui_input(window);
        let (mut actions, mut rect) = (Vec::new(), None);
        let output = self.context.run(input, |context| (actions, rect) = panel.ui(context, info));
        self.input.handle_platform_output(window, output.platform_output);
        let pixels_per_point = output.pixels_per_point;
        let pixels = rect.map(|rect| {
            let pixels = rect * pixels_per_point;
            [pixels.min.x.floor(), pixels.min.y.floor(), pixels.max.x.ceil(), pixels.max.y.ceil()]
                .map(|value| value.max(0.0) as u32)
        });
        let primitives = self.context.tessellate(output.shapes, pixels_per_point);
        let frame = OverlayFrame { primitives, textures: output.textures_delta, pixels_per_point, panel_rect: rect };
        (frame, actions, pixels)
    }
}

/// The numbers the panel shows, refreshed four times a second and after every action: between
/// refreshes the panel's triangles stay the same, and the overlay copies it from its cache.
pub(super) struct Live {
    at: Instant,
    /// Frames and seconds since the last refresh (the graph plots their mean).
    pub(super) frames: u32,
    pub(super) seconds: f64,
    clock: f64,
    timings: Option<PassTimings>,
    visible: Option<VisibleCounts>,
    pub(super) stale: bool,
}

const LIVE_REFRESH: Duration = Duration::from_millis(250);

impl Live {
    pub(super) fn new() -> Live {
        Live { at: Instant::now(), frames: 0, seconds: 0.0, clock: 0.0, timings: None, visible: None, stale: true }
    }

    /// Takes the renderer's latest figures when a refresh is due, and plots the mean frame time.
    pub(super) fn refresh(&mut self, now: Instant, clock: f64, renderer: &Renderer, panel: &mut Panel) {
        if !self.stale && now.duration_since(self.at) < LIVE_REFRESH {
            return;
        }
        if self.frames > 0 {
            panel.push_frame_time((self.seconds * 1e3 / f64::from(self.frames)) as f32);
        }
        self.clock = clock;
        // The passes that run: no blas and tlas rows with a shadow map, no shadow row when tracing.
        self.timings = renderer.stats.timings.clone().map(|mut timings| {
            let runs = |name: &str| crate::render::Pass::ALL.iter().any(|&pass| pass.name() == name && renderer.runs(pass));
            timings.milliseconds.retain(|&(name, _)| runs(name));
            timings
        });
        self.visible = renderer.stats.visible;
        (self.at, self.frames, self.seconds, self.stale) = (now, 0, 0.0, false);
    }
}

/// What the panel is drawn from, borrowed from the viewer.
pub(super) struct PanelState<'a> {
    pub(super) setup: &'a SceneSetup,
    pub(super) renderer: &'a Renderer,
    pub(super) live: &'a Live,
    pub(super) options: &'a ViewerOptions,
    pub(super) paused: bool,
    pub(super) speed: f32,
    pub(super) error: Option<&'a str>,
    pub(super) levels_building: bool,
}

impl<'a> PanelState<'a> {
    /// Each model of a crowd of several, with its instance count; empty for one model.
    fn crowd(&self) -> Vec<(&'a str, usize)> {
        let models = self.setup.models();
        if models.len() < 2 {
            return Vec::new();
        }
        models.iter().zip(self.setup.model_counts()).map(|(model, count)| (model.name.as_str(), count)).collect()
    }

    /// The model's name, or a crowd's models: `3 models (Soldier, stormtrooper, ninja)`.
    fn models_named(&self) -> String {
        let models = self.setup.models();
        match models.as_slice() {
            [model] => model.name.clone(),
            models => {
                let names: Vec<&str> = models.iter().map(|model| model.name.as_str()).collect();
                format!("{} models ({})", models.len(), names.join(", "))
            }
        }
    }

    pub(super) fn info(&self, device: &'a str, driver: &'a str, resolution: (u32, u32), present_mode: &'a str) -> PanelInfo<'a> {
        let (model, renderer) = (&self.setup.model, self.renderer);
        let first = self.setup.instances.first();
        let clip = first.and_then(|instance| instance.clip);
        PanelInfo {
            device,
            driver,
            resolution,
            present_mode,
            model_name: self.models_named(),
            crowd: self.crowd(),
            vertices: self.setup.models().iter().map(|model| model.vertices.len()).sum(),
            triangles: self.setup.models().iter().map(|model| model.indices.len() / 3).sum(),
            joints: self.setup.models().iter().map(|model| model.skeleton.len()).max().unwrap_or(0),
            max_influences: self.setup.models().iter().map(|model| model.stats.max_influences).max().unwrap_or(0),
            levels: renderer.model.single().levels.len(),
            levels_building: self.levels_building,
            light_culling: renderer.setup.light_culling,
            animation_lod: renderer.setup.animation_lod.is_some(),
            motion_blur: renderer.motion_blur,
            shadows: renderer.setup.shadows,
            raster: renderer.passes.raster.is_some().then_some(renderer.raster),
            variety: self.setup.variety,
            // Off, the row is there to turn it on (which clips travel is found then).
            root_motion: (self.options.root_motion, !self.options.root_motion || self.setup.root_motion()),
            instances: self.setup.instances.len(),
            max_instances: renderer.setup.memory.max_instances as usize,
            pool_vertices: renderer.setup.memory.pooled_vertices(),
            limiting: &renderer.setup.memory.limiting,
            strategy: self.options.strategy,
            skinning: self.options.skinning,
            clips: model.clips.iter().map(|clip| clip.name.as_str()).collect(),
            clip,
            joints_named: model.skeleton.joints.iter().map(|joint| joint.name.as_str()).collect(),
            layer: first.and_then(|instance| instance.layer),
            clip_duration: clip.and_then(|clip| model.clips.get(clip)).map_or(1.0, |clip| clip.duration),
            playing: self.setup.playing(self.live.clock),
            clock: self.live.clock,
            paused: self.paused,
            speed: self.speed,
            fade: self.options.fade_seconds,
            debug: renderer.debug,
            timings: self.live.timings.as_ref(),
            visible: self.live.visible,
            renderdoc: self.options.capture.is_some(),
            error: self.error,
            morph_targets: self.morph_rows(),
        }
    }

    /// The panel's morph targets: the first instance's weights now, as the palette pass samples them.
    fn morph_rows(&self) -> Vec<MorphRow<'a>> {
        let model = &self.setup.model;
        let Some(first) = self.setup.instances.first().filter(|_| !model.morph_targets.is_empty()) else { return Vec::new() };
        let data = InstanceData::at(first, &model.clips, self.live.clock, self.setup.walk_area());
        let weights = crate::render::reference::reference_weights(model, &data, &self.setup.morph_overrides);
        model
            .morph_targets
            .iter()
            .zip(weights)
            .enumerate()
            .map(|(index, (target, weight))| MorphRow {
                name: &target.name,
                weight,
                range: model.weight_range(index),
                set_by_hand: self.setup.morph_overrides.get(index).copied().flatten(),
            })
            .collect()
    }
}
