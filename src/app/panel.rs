//! The viewer's panel: what it shows and the controls it offers, as one egui window.
//!
//! It draws from a [`PanelInfo`] snapshot of the viewer and returns the [`Action`]s the user took;
//! the viewer applies them (`viewer/actions.rs`). Nothing here touches Vulkan, so a test can run the panel
//! on an egui context alone.

use std::collections::VecDeque;

use egui::{Color32, ComboBox, ProgressBar, RichText, Slider, SliderClamping};

use crate::anim::{Layer, Skinning};
use crate::render::passes::debug::DebugViews;
use crate::render::stats::{PassTimings, VisibleCounts};
use crate::render::{Raster, Shadows, Strategy};

mod action;

pub use action::Action;

/// Frame times kept for the graph.
const HISTORY: usize = 240;

/// The panel's distance from the window's edges, and its title bar's height (points).
const PANEL_MARGIN: f32 = 8.0;
const PANEL_TITLE: f32 = 48.0;

/// What the panel shows, gathered by the viewer each frame.
pub struct PanelInfo<'a> {
    pub device: &'a str,
    pub driver: &'a str,
    pub resolution: (u32, u32),
    pub present_mode: &'a str,
    /// The model's name, or a crowd's models'; the counts below are over all of them (joints and
    /// influences: the most any has).
    pub model_name: String,
    /// A crowd of several models: each one's name and instance count (empty for one model).
    pub crowd: Vec<(&'a str, usize)>,
    pub vertices: usize,
    pub triangles: usize,
    pub joints: usize,
    pub max_influences: usize,
    /// Levels of detail, the full mesh included (1: `--lod off`), and whether the shadow pass draws
    /// the triangle pass's light run.
    pub levels: usize,
    /// The levels are still being built on their worker thread (the full mesh is drawn meanwhile).
    pub levels_building: bool,
    pub light_culling: bool,
    /// Far instances' palettes every 2nd, 4th or 8th frame (`--animation-lod on`).
    pub animation_lod: bool,
    /// Motion blur from the velocity target (`--motion-blur on`).
    pub motion_blur: bool,
    /// Shadows from the map or traced (`--shadows`).
    pub shadows: Shadows,
    /// Which rasterizer draws the model (`--raster`); None: the hardware's alone (no raster pass:
    /// not the `compute` strategy, or not this device).
    pub raster: Option<Raster>,
    /// The instances vary in phase, speed, size and colours (`--variety`).
    pub variety: bool,
    /// Root motion: whether it is on, and whether any clip shown travels (else no row).
    pub root_motion: (bool, bool),
    pub instances: usize,
    /// The most instances this device takes with this strategy, and the limit that sets it.
    pub max_instances: usize,
    /// The skinned-vertex pools' room in all (None: no pools: `Pools::pooled`).
    pub pool_vertices: Option<u64>,
    pub limiting: &'a str,
    pub strategy: Strategy,
    /// How the instances blend their joints.
    pub skinning: Skinning,
    pub clips: Vec<&'a str>,
    pub clip: Option<usize>,
    /// The skeleton's joints by name (the layer's joint picker), and the layer playing.
    pub joints_named: Vec<&'a str>,
    pub layer: Option<Layer>,
    /// The playing clip's length, seconds (the scrubber's range).
    pub clip_duration: f32,
    /// What the first instance plays, named, and where in it (`SceneSetup::playing`).
    pub playing: String,
    pub clock: f64,
    pub paused: bool,
    pub speed: f32,
    pub fade: f32,
    pub debug: DebugViews,
    pub timings: Option<&'a PassTimings>,
    pub visible: Option<VisibleCounts>,
    /// RenderDoc's in-application API was found: a capture button.
    pub renderdoc: bool,
    /// The last thing that failed (a dropped file, a strategy the device refused).
    pub error: Option<&'a str>,
    /// The model's morph targets: the first instance's live weights, and those set by hand.
    pub morph_targets: Vec<MorphRow<'a>>,
}

/// One morph target in the panel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MorphRow<'a> {
    pub name: &'a str,
    /// Its weight on the first instance this frame (the palette pass's, from its CPU mirror).
    pub weight: f32,
    /// The slider's range: the weights its clips and default give, and 0 to 1.
    pub range: (f32, f32),
    /// Held by hand at this weight over every instance's clips.
    pub set_by_hand: Option<f32>,
}

/// Morph targets the panel lists; a model with more shows the first ones and a count of the rest.
pub const LISTED_TARGETS: usize = 64;

/// The panel's own state between frames.
pub struct Panel {
    pub visible: bool,
    frame_ms: VecDeque<f32>,
    /// The instance slider's value while it is dragged (applied on release: a rebuild each step
    /// would stall the drag).
    instance_draft: Option<usize>,
    /// Where each control was drawn last frame, by its label (tests click them there).
    controls: Vec<(String, egui::Rect)>,
}

impl Panel {
    /// A second clip over part of the skeleton: its clip (or none), the joint it starts at, its
    /// weight.
    fn layer(&mut self, ui: &mut egui::Ui, info: &PanelInfo<'_>, actions: &mut Vec<Action>) {
        let current = info.layer;
        let clip_name = current.and_then(|layer| info.clips.get(layer.clip)).copied().unwrap_or("none");
        let mut picked: Option<Option<usize>> = None;
        let mut items = Vec::new();
        let combo = ComboBox::from_label("layer").selected_text(clip_name).show_ui(ui, |ui| {
            if ui.selectable_label(current.is_none(), "none").clicked() {
                picked = Some(None);
            }
            for (index, name) in info.clips.iter().enumerate() {
                let response = ui.selectable_label(current.is_some_and(|layer| layer.clip == index), *name);
                items.push((format!("layer {name}"), response.rect));
                if response.clicked() {
                    picked = Some(Some(index));
                }
            }
        });
        self.place("layer", &combo.response);
        self.controls.extend(items);
        if let Some(clip) = picked {
            // A new layer starts at the upper body where the skeleton names one.
            let upper = || {
                info.joints_named.iter().position(|name| ["spine", "chest"].iter().any(|part| name.to_lowercase().contains(part)))
            };
            let layer = clip.map(|clip| match current {
                Some(layer) => Layer { clip, ..layer },
                None => Layer { clip, joint: upper().unwrap_or(0), weight: 1.0 },
            });
            if layer != current {
                actions.push(Action::Layer(layer));
            }
        }
        let Some(layer) = current else { return };
        let joint_name = info.joints_named.get(layer.joint).copied().unwrap_or("?");
        ComboBox::from_label("from joint").selected_text(joint_name).show_ui(ui, |ui| {
            for (joint, name) in info.joints_named.iter().enumerate() {
                if ui.selectable_label(joint == layer.joint, *name).clicked() && joint != layer.joint {
                    actions.push(Action::Layer(Some(Layer { joint, ..layer })));
                }
            }
        });
        let mut weight = layer.weight;
        if ui.add(Slider::new(&mut weight, 0.0..=1.0).clamping(SliderClamping::Edits).text("layer weight")).changed() {
            actions.push(Action::Layer(Some(Layer { weight, ..layer })));
        }
    }

    pub fn new(visible: bool) -> Panel {
        Panel { visible, frame_ms: VecDeque::with_capacity(HISTORY), instance_draft: None, controls: Vec::new() }
    }

    /// Where the control labelled `label` was drawn last frame, in points.
    pub fn control(&self, label: &str) -> Option<egui::Rect> {
        self.controls.iter().find(|(name, _)| name == label).map(|&(_, rect)| rect)
    }

    fn place(&mut self, label: &str, response: &egui::Response) {
        self.controls.push((label.to_string(), response.rect));
    }

    /// A checkbox showing `on`, placed under its label, with its hover text (if any): the new
    /// value when clicked.
    fn checkbox(&mut self, ui: &mut egui::Ui, (label, hover): (&str, &str), mut on: bool) -> Option<bool> {
        let mut response = ui.checkbox(&mut on, label);
        if !hover.is_empty() {
            response = response.on_hover_text(hover);
        }
        self.place(label, &response);
        response.changed().then_some(on)
    }

    /// Records one frame's CPU-side frame time for the graph.
    pub fn push_frame_time(&mut self, milliseconds: f32) {
        if self.frame_ms.len() == HISTORY {
            self.frame_ms.pop_front();
        }
        self.frame_ms.push_back(milliseconds);
    }

    /// Draws the panel (when visible); what the user changed, and where the panel is (points).
    pub fn ui(&mut self, ctx: &egui::Context, info: &PanelInfo<'_>) -> (Vec<Action>, Option<egui::Rect>) {
        let mut actions = Vec::new();
        self.controls.clear();
        if !self.visible {
            return (actions, None);
        }
        // Opaque, square-cornered and without a drop shadow: the panel changes no pixel outside its
        // rectangle, which the overlay can copy whole (render/passes/overlay.rs).
        let frame = egui::Frame::window(&ctx.style()).shadow(egui::epaint::Shadow::NONE).corner_radius(0);
        // Drawn whole from its first frame: a fading panel is not opaque, and the overlay copies it
        // as if it were. No taller than the window: what does not fit scrolls (a model with many
        // morph targets, a crowd of several, fill more than a 720-pixel window).
        let height = (ctx.content_rect().height() - 2.0 * PANEL_MARGIN - PANEL_TITLE).max(120.0);
        let shown = egui::Window::new("vkskin")
            .frame(frame)
            .fade_in(false)
            .default_pos([PANEL_MARGIN, PANEL_MARGIN])
            // egui gives a window 420 points' height unless told otherwise: the scroll area
            // inside takes what the window gives it, and shrinks to its contents.
            .default_size([300.0, height])
            .resizable(false)
            .show(ctx, |ui| {
                egui::ScrollArea::vertical().max_height(height).show(ui, |ui| {
                    self.about(ui, info);
                    ui.separator();
                    self.timing(ui, info);
                    ui.separator();
                    self.controls(ui, info, &mut actions);
                    if let Some(error) = info.error {
                        ui.separator();
                        ui.label(RichText::new(error).color(Color32::from_rgb(255, 120, 110)));
                    }
                });
            });
        (actions, shown.map(|shown| shown.response.rect))
    }

    fn about(&self, ui: &mut egui::Ui, info: &PanelInfo<'_>) {
        ui.label(format!("{} ({})", info.device, info.driver));
        let (width, height) = info.resolution;
        ui.label(format!("{width}×{height}, present mode {}", info.present_mode));
        ui.label(format!(
            "{}: {} vertices, {} triangles, {} joints, up to {} influences",
            info.model_name, info.vertices, info.triangles, info.joints, info.max_influences
        ));
        let on_off = |on: bool| if on { "on" } else { "off" };
        let levels = if info.levels_building { "building".to_string() } else { info.levels.to_string() };
        ui.label(format!("levels of detail: {levels}; light culling: {}", on_off(info.light_culling)));
    }

    fn timing(&self, ui: &mut egui::Ui, info: &PanelInfo<'_>) {
        let latest = self.frame_ms.back().copied().unwrap_or(0.0);
        ui.label(format!("{latest:.1} ms a frame, {:.0} fps", 1000.0 / latest.max(1e-3)));
        // The frame-time graph: egui's painter, one line through the last frames.
        let (rect, _) = ui.allocate_exact_size(egui::vec2(ui.available_width(), 48.0), egui::Sense::hover());
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 2.0, Color32::from_gray(24));
        // The scale: the 95th percentile and a quarter more, so one slow frame (the first, a
        // rebuild) does not flatten the rest; spikes above it run off the top.
        let mut sorted: Vec<f32> = self.frame_ms.iter().copied().collect();
        sorted.sort_by(f32::total_cmp);
        let ceiling = sorted.get(sorted.len() * 95 / 100).copied().unwrap_or(1.0).max(1.0) * 1.25;
        let step = rect.width() / (HISTORY - 1) as f32;
        let points: Vec<egui::Pos2> = self
            .frame_ms
            .iter()
            .enumerate()
            .map(|(index, &ms)| {
                egui::pos2(rect.left() + index as f32 * step, rect.bottom() - rect.height() * (ms / ceiling).min(1.0))
            })
            .collect();
        painter.add(egui::Shape::line(points, egui::Stroke::new(1.5, Color32::from_rgb(120, 200, 255))));
        painter.text(
            rect.left_top(),
            egui::Align2::LEFT_TOP,
            format!("{ceiling:.0} ms"),
            egui::FontId::monospace(10.0),
            Color32::GRAY,
        );

        if let Some(timings) = info.timings {
            let longest = timings.milliseconds.iter().map(|&(_, ms)| ms).fold(1e-6, f64::max);
            ui.label(format!("GPU {:.2} ms", timings.total()));
            for &(pass, ms) in &timings.milliseconds {
                ui.add(ProgressBar::new((ms / longest) as f32).text(format!("{pass} {ms:.2} ms")).desired_height(14.0));
            }
        }
        if let Some(visible) = info.visible {
            ui.label(format!(
                "visible: {} skinned, {} by the camera, {} by the light",
                visible.skinned, visible.camera, visible.light
            ));
            if let Some(rooms) = info.pool_vertices.filter(|&rooms| rooms > 0) {
                ui.label(format!(
                    "pools: {:.0}% of {rooms} skinned vertices; {} drawn coarser, {} not drawn",
                    100.0 * f64::from(visible.placed_vertices) / rooms as f64,
                    visible.coarser,
                    visible.not_drawn
                ));
            }
        }
    }

    fn controls(&mut self, ui: &mut egui::Ui, info: &PanelInfo<'_>, actions: &mut Vec<Action>) {
        // A crowd of several models: each with its instances, and a button that takes it out (a
        // model file dropped on the window joins).
        for (index, (name, count)) in info.crowd.iter().enumerate() {
            ui.horizontal(|ui| {
                ui.label(format!("{name}: {count} instances"));
                let label = format!("remove {name}");
                let response = ui.small_button("remove").on_hover_text(&label);
                self.place(&label, &response);
                if response.clicked() {
                    actions.push(Action::RemoveModel(index));
                }
            });
        }
        ui.horizontal(|ui| {
            ui.label("strategy");
            for strategy in Strategy::ALL {
                let response = ui.selectable_label(info.strategy == strategy, strategy.name());
                self.place(strategy.name(), &response);
                if response.clicked() && info.strategy != strategy {
                    actions.push(Action::Strategy(strategy));
                }
            }
        });

        ui.horizontal(|ui| {
            ui.label("shadows");
            for shadows in Shadows::ALL {
                let label = format!("{} shadows", shadows.name());
                let response = ui.selectable_label(info.shadows == shadows, shadows.name()).on_hover_text(match shadows {
                    Shadows::Map => "a 2048² shadow map drawn from the light",
                    Shadows::Ray => "a ray towards the light per sample, through structures built from the skinned buffer",
                });
                self.place(&label, &response);
                if response.clicked() && info.shadows != shadows {
                    actions.push(Action::Shadows(shadows));
                }
            }
        });

        if let Some(current) = info.raster {
            ui.horizontal(|ui| {
                ui.label("raster");
                for raster in Raster::ALL {
                    let response = ui.selectable_label(current == raster, raster.name()).on_hover_text(match raster {
                        Raster::Hardware => "every triangle by the hardware rasterizer",
                        Raster::Compute => "every triangle it can take by the compute rasterizer, from the skinned buffer",
                        Raster::Auto => "triangles a few pixels across in compute, the larger ones by the hardware",
                    });
                    self.place(&format!("{} raster", raster.name()), &response);
                    if response.clicked() && current != raster {
                        actions.push(Action::Raster(raster));
                    }
                }
            });
        }

        ui.horizontal(|ui| {
            ui.label("skinning");
            for skinning in Skinning::ALL {
                let label = match skinning {
                    Skinning::Linear => "linear",
                    Skinning::DualQuaternion => "dual quaternion",
                };
                let response = ui.selectable_label(info.skinning == skinning, label);
                self.place(label, &response);
                if response.clicked() && info.skinning != skinning {
                    actions.push(Action::Skinning(skinning));
                }
            }
        });

        let mut count = self.instance_draft.unwrap_or(info.instances);
        let most = info.max_instances.max(1);
        let slider = ui.add(Slider::new(&mut count, 1..=most).logarithmic(true).text("instances"));
        self.place("instances", &slider);
        if slider.changed() {
            self.instance_draft = Some(count);
        }
        if slider.drag_stopped() || (slider.changed() && !slider.dragged()) {
            if let Some(count) = self.instance_draft.take() {
                actions.push(Action::Instances(count));
            }
        }
        if count >= most {
            ui.label(RichText::new(format!("at most {most}: {}", info.limiting)).small());
        }

        if !info.clips.is_empty() {
            let current = info.clip.and_then(|clip| info.clips.get(clip)).copied().unwrap_or("bind pose");
            let mut picked = Vec::new();
            let combo = ComboBox::from_label("clip").selected_text(current).show_ui(ui, |ui| {
                for (index, name) in info.clips.iter().enumerate() {
                    let response = ui.selectable_label(info.clip == Some(index), *name);
                    picked.push((format!("clip {name}"), response.rect));
                    if response.clicked() && info.clip != Some(index) {
                        actions.push(Action::Clip(index));
                    }
                }
            });
            self.place("clip", &combo.response);
            self.controls.extend(picked);
            let mut fade = info.fade;
            if ui.add(Slider::new(&mut fade, 0.0..=2.0).clamping(SliderClamping::Edits).text("crossfade s")).changed() {
                actions.push(Action::Fade(fade));
            }
        }
        if info.clips.len() > 1 {
            self.layer(ui, info, actions);
        }
        let mut speed = info.speed;
        if ui.add(Slider::new(&mut speed, 0.0..=4.0).clamping(SliderClamping::Edits).text("speed")).changed() {
            actions.push(Action::Speed(speed));
        }
        ui.horizontal(|ui| {
            if let Some(paused) = self.checkbox(ui, ("pause", ""), info.paused) {
                actions.push(Action::Pause(paused));
            }
            let step = ui.add_enabled(info.paused, egui::Button::new("step"));
            self.place("step", &step);
            if step.clicked() {
                actions.push(Action::Step);
            }
            let hover = "palettes of instances under 48 pixels (or seen by the light only) every 2nd frame, under 8 every 4th, under 2 every 8th";
            if let Some(on) = self.checkbox(ui, ("animation LOD", hover), info.animation_lod) {
                actions.push(Action::AnimationLod(on));
            }
            let hover = "each pixel smeared along its motion since last frame (the velocity target)";
            if let Some(on) = self.checkbox(ui, ("motion blur", hover), info.motion_blur) {
                actions.push(Action::MotionBlur(on));
            }
            let (root_motion, travels) = info.root_motion;
            if travels {
                let hover = "travelling clips played in place, the instances moved by the motion taken out of them (walking on across loops); off: as the files have them, jumping back at each loop";
                if let Some(on) = self.checkbox(ui, ("root motion", hover), root_motion) {
                    actions.push(Action::RootMotion(on));
                }
            }
            if info.instances > 1 {
                let hover = "each instance its own phase, speed, size and colours; off: copies of the model";
                if let Some(on) = self.checkbox(ui, ("variety", hover), info.variety) {
                    actions.push(Action::Variety(on));
                }
            }
        });
        ui.label(RichText::new(format!("playing {}", info.playing)).small());
        let duration = f64::from(info.clip_duration.max(1e-3));
        let mut time = info.clock.rem_euclid(duration);
        if ui.add(Slider::new(&mut time, 0.0..=duration).text("time s")).changed() {
            actions.push(Action::Seek(time));
        }

        ui.horizontal_wrapped(|ui| {
            ui.label("debug");
            for name in DebugViews::NAMES {
                let mut on = info.debug.names().contains(&name);
                let response = ui.checkbox(&mut on, name);
                self.place(name, &response);
                if response.changed() {
                    let mut views = info.debug;
                    views.toggle(name);
                    actions.push(Action::Debug(views));
                }
            }
        });
        if !info.morph_targets.is_empty() {
            self.morph_targets(ui, info, actions);
        }
        if info.renderdoc && ui.button("RenderDoc capture").clicked() {
            actions.push(Action::Capture);
        }
    }

    /// Each morph target's live weight on a slider; dragging one holds it there by hand over every
    /// instance's clips, and its "clip" button gives it back.
    fn morph_targets(&mut self, ui: &mut egui::Ui, info: &PanelInfo<'_>, actions: &mut Vec<Action>) {
        let count = info.morph_targets.len();
        egui::CollapsingHeader::new(format!("morph targets ({count})")).default_open(count <= 8).show(ui, |ui| {
            for (index, row) in info.morph_targets.iter().enumerate().take(LISTED_TARGETS) {
                ui.horizontal(|ui| {
                    let mut weight = row.set_by_hand.unwrap_or(row.weight);
                    let (low, high) = row.range;
                    let slider = ui.add(Slider::new(&mut weight, low..=high).clamping(SliderClamping::Edits).text(row.name));
                    self.place(&format!("morph {}", row.name), &slider);
                    if slider.changed() {
                        actions.push(Action::Morph(index, Some(weight)));
                    }
                    if row.set_by_hand.is_some() && ui.small_button("clip").on_hover_text("back to the clip's weight").clicked() {
                        actions.push(Action::Morph(index, None));
                    }
                });
            }
            if count > LISTED_TARGETS {
                ui.label(format!("… and {} more (view --drive morph=TARGET:WEIGHT)", count - LISTED_TARGETS));
            }
        });
    }
}
