//! What the panel's controls, a dropped file and `--drive` do to the viewer: the one place a
//! renderer is rebuilt for another strategy, count or model.

use std::sync::mpsc::TryRecvError;
use std::time::Instant;

use super::{LevelBuild, Viewer};
use crate::app::panel::Action;
use crate::app::{default_animations, SceneSetup};
use crate::formats::load_model;
use crate::gpu;
use crate::model::Model;
use crate::render::passes::debug::DebugViews;
use crate::render::{MemoryPlan, Output, Renderer, Strategy};

impl Viewer {
    /// The frame at the current clock, rendered offscreen by the same renderer (and the last
    /// frame's panel over it), as PNG.
    pub(super) fn write_screenshot(&mut self, path: &std::path::Path) -> Result<(), String> {
        let Some(graphics) = &mut self.graphics else { return Ok(()) };
        let size = graphics.window.inner_size();
        let (width, height) = if size.width == 0 || size.height == 0 { self.options.size } else { (size.width, size.height) };
        self.setup.camera.inset = super::panel_inset(self.options.ui, width);
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
    pub(super) fn drive(&mut self) -> Result<(), String> {
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

    /// Rebuilds the renderer for another instance count or strategy, keeping the clip.
    pub(super) fn rebuild(&mut self, count: usize, strategy: Strategy) -> gpu::Result<()> {
        // Within what this device takes with this strategy, before a single instance is laid out.
        let count = match &self.graphics {
            Some(graphics) => {
                let plan = MemoryPlan::new(&graphics.device, &self.setup.models(), strategy, 1, Default::default())?;
                count.clamp(1, plan.max_instances.max(1) as usize)
            }
            None => count.max(1),
        };
        if count == self.setup.instances.len() && strategy == self.options.strategy {
            return Ok(());
        }
        self.remake(count, strategy).map(|_| ())
    }

    /// A new scene of `count` instances with `strategy`, keeping the clip and the layer; whether
    /// the device took it (`replace_scene`).
    fn remake(&mut self, count: usize, strategy: Strategy) -> gpu::Result<bool> {
        let first = self.setup.instances.first();
        let (clip, layer) = (first.and_then(|instance| instance.clip), first.and_then(|instance| instance.layer));
        let models = self.setup.models().into_iter().cloned().collect();
        let mut resized = SceneSetup::with_models(models, count, self.setup.variety);
        resized.camera = self.setup.camera;
        if let Some(clip) = clip {
            resized.play(clip, self.clock, 0.0);
        }
        for instance in &mut resized.instances {
            instance.layer = layer;
        }
        self.replace_scene(resized, strategy)
    }

    /// A new renderer for `setup` with `strategy` (the one place the viewer waits for the GPU
    /// outside a resize). What the device refuses keeps the old scene and says why in the panel;
    /// whether the scene was replaced.
    fn replace_scene(&mut self, mut setup: SceneSetup, strategy: Strategy) -> gpu::Result<bool> {
        for instance in &mut setup.instances {
            instance.skinning = self.options.skinning;
        }
        let Some(graphics) = &mut self.graphics else { return Ok(false) };
        let format = graphics.renderer.setup.color_format;
        graphics.device.wait_idle()?;
        let settings = self.options.render_settings();
        match Renderer::for_models(&graphics.device, &setup.models(), &setup.model_indices(), format, strategy, settings) {
            Ok(mut renderer) => {
                let mut views = graphics.renderer.debug;
                if let Err(reason) = views.check(strategy, self.options.shadows) {
                    self.last_error = Some(format!("debug views turned off: {reason}"));
                    views = DebugViews::default();
                }
                if let Ok(Some(message)) | Err(message) = renderer.set_debug(views) {
                    self.last_error = Some(message);
                }
                graphics.renderer = renderer;
                self.setup = setup;
                self.options.strategy = strategy;
                Ok(true)
            }
            Err(error) => {
                let message = format!("{} instances with the {} strategy: {error}", setup.instances.len(), strategy.name());
                log::warn!("{message}");
                self.last_error = Some(message);
                Ok(false)
            }
        }
    }

    /// A file dropped on the window: a model joins the crowd (several instances shown) or replaces
    /// the model (one instance: a model looked at alone); a file of clips without a mesh (a
    /// .md5anim, a "without skin" FBX or glTF) adds its clips to the first model, matched by joint
    /// name. A file that fails keeps the scene and shows its error.
    fn open_dropped(&mut self, path: &std::path::Path) -> gpu::Result<()> {
        let is_animation = crate::formats::is_clips_only(path);
        let (mesh, animations) = if is_animation {
            match &self.options.model_path {
                Some(mesh) => {
                    let mut animations = default_animations(mesh, &self.options.animations);
                    animations.push(path.to_path_buf());
                    (mesh.clone(), animations)
                }
                None => {
                    self.last_error = Some(format!("{}: clips without a mesh go onto a model: open one first", path.display()));
                    return Ok(());
                }
            }
        } else {
            (path.to_path_buf(), default_animations(path, &[]))
        };
        let model = match load_model(&mesh, &animations) {
            Ok(mut model) => {
                if self.options.root_motion {
                    model.set_root_motion(true);
                }
                model
            }
            Err(error) => {
                self.last_error = Some(crate::formats::files::one_line(&error.to_string()));
                return Ok(());
            }
        };
        // What the loader noticed (for a file of clips: what matched), as at start-up.
        crate::app::log_load_report(&model, (self.setup.instances.len() > 1).then_some(path));
        // The dropped file's first clip that moves something plays (else its first).
        let added: Vec<usize> =
            (0..model.clips.len()).filter(|&clip| is_animation && model.clip_source(clip) == Some(path)).collect();
        let added_clip = model.first_moving(added.iter().copied()).or(added.first().copied());
        let count = self.setup.instances.len();
        if !is_animation && count > 1 {
            let mut models: Vec<Model> = self.setup.models().into_iter().cloned().collect();
            models.push(model);
            let mut setup = SceneSetup::with_models(models, count, self.setup.variety);
            setup.camera = self.setup.camera;
            if self.replace_scene(setup, self.options.strategy)? {
                self.last_error = None;
                self.start_levels();
            }
            return Ok(());
        }
        let mut setup = SceneSetup::with_variety(model, count, self.setup.variety);
        if let Some(clip) = added_clip {
            setup.play(clip, self.clock, self.options.fade_seconds);
        }
        let camera = setup.camera;
        if self.replace_scene(setup, self.options.strategy)? {
            self.initial_camera = camera;
            self.options.model_path = Some(mesh);
            self.options.animations = animations;
            self.last_error = None;
            self.start_levels();
        }
        Ok(())
    }

    /// Root motion on or off for every model shown: the clips' keys changed (taken out or put
    /// back), a new scene of as many instances playing what they played, a new renderer.
    fn set_root_motion(&mut self, on: bool) -> gpu::Result<()> {
        self.options.root_motion = on;
        let mut models: Vec<Model> = self.setup.models().into_iter().cloned().collect();
        let changed = models.iter_mut().fold(false, |changed, model| model.set_root_motion(on) | changed);
        if !changed {
            return Ok(());
        }
        let mut setup = SceneSetup::with_models(models, self.setup.instances.len(), self.setup.variety);
        setup.instance_models = self.setup.instance_models.clone();
        for (instance, before) in setup.instances.iter_mut().zip(self.setup.instances.iter()) {
            (instance.clip, instance.layer, instance.skinning) = (before.clip, before.layer, before.skinning);
        }
        setup.fit_bounds();
        setup.camera = self.setup.camera;
        if self.replace_scene(setup, self.options.strategy)? {
            self.cut_motion();
            self.start_levels(); // the clips it changed compressed again
        }
        Ok(())
    }

    /// Starts building the shown models' levels of detail (with `--lod on`, for a model that has
    /// none yet) and compressing their clips (with `--clip-compression on`, those not compressed
    /// yet) on a worker thread; the full mesh and the keys are drawn until they are ready. A build
    /// under way for a model no longer shown is let go: its result is never looked at.
    pub(super) fn start_levels(&mut self) {
        self.levels = None;
        let (lod, compress, cache) = (self.options.lod, self.options.clip_compression, self.options.cache);
        let uncompressed = move |model: &Model| {
            let clip = |animation: &crate::anim::Animation| animation.compressed.is_none() && !animation.channels.is_empty();
            compress && model.animations.iter().any(clip)
        };
        if !self.setup.models().iter().any(|model| uncompressed(model) || (lod && model.levels.is_empty())) {
            return;
        }
        let models: Vec<Model> = self.setup.models().into_iter().cloned().collect();
        let (sender, receiver) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new().name("levels-of-detail".into()).spawn(move || {
            let started = Instant::now();
            // Each model's, one after another (a crowd's: every model's).
            let levelled = models
                .iter()
                .map(|model| {
                    let (levels, compression) = (lod && model.levels.is_empty(), uncompressed(model));
                    let mut made = model.clone();
                    // A crowd's model that has both already is kept as it is.
                    if levels || compression {
                        let folder = cache.then(crate::app::derived_cache_folder);
                        let (derived, _) = crate::model::derived::derive(model, levels, compression, folder.as_deref());
                        derived.apply(&mut made);
                    }
                    made
                })
                .collect();
            let _ = sender.send((levelled, started.elapsed().as_secs_f64()));
        });
        match spawned {
            Ok(_) => self.levels = Some(LevelBuild { receiver, started: Instant::now() }),
            Err(error) => self.last_error = Some(format!("levels of detail not built: no worker thread ({error})")),
        }
    }

    /// Takes the levels of detail and the compressed clips once they are made: the renderer is
    /// rebuilt on the levelled model (its vertices reordered coarsest first) playing the compressed
    /// clips (within their bound of the keys'), the instances, clips and camera kept. With a set
    /// number of frames (`--frames`: tests, screenshots) the second frame waits for them, so two
    /// runs show the same frames.
    pub(super) fn poll_levels(&mut self) -> gpu::Result<()> {
        let Some(build) = &self.levels else { return Ok(()) };
        // A set number of frames takes them at the second frame exactly, whenever they were ready.
        let fixed = self.options.frame_limit.is_some();
        if fixed && self.report.frames < 1 {
            return Ok(());
        }
        let received =
            match if fixed { build.receiver.recv().map_err(|_| TryRecvError::Disconnected) } else { build.receiver.try_recv() } {
                Err(TryRecvError::Empty) => return Ok(()),
                result => result.ok(),
            };
        let waited = build.started.elapsed().as_secs_f64();
        self.levels = None;
        let Some((mut levelled, seconds)) = received else {
            self.last_error = Some("levels of detail not built: their worker thread failed".into());
            return Ok(());
        };
        let compressed = |model: &Model| model.animations.iter().filter(|animation| animation.compressed.is_some()).count();
        let mut changed = false;
        for (model, before) in levelled.iter().zip(self.setup.models()) {
            let clips = compressed(model) - compressed(before).min(compressed(model));
            log::info!(
                "{}: {} levels of detail built, {clips} clips compressed ({seconds:.3} s for all, {waited:.3} s after the request)",
                model.name,
                model.levels.len(),
            );
            changed |= model.levels.len() != before.levels.len() || clips > 0;
        }
        if !changed {
            return Ok(()); // nothing simplified or compressed: the renderer already draws what there is
        }
        let model = levelled.remove(0);
        let setup = SceneSetup {
            model,
            others: levelled,
            instances: self.setup.instances.clone(),
            instance_models: self.setup.instance_models.clone(),
            light_direction: self.setup.light_direction,
            camera: self.setup.camera,
            bounds: self.setup.bounds,
            morph_overrides: self.setup.morph_overrides.clone(),
            variety: self.setup.variety,
            // The levels reorder the vertices, not where they are: what was staged holds.
            staging: std::mem::take(&mut self.setup.staging),
            kept: Default::default(),
            area: self.setup.walk_area(),
        };
        self.replace_scene(setup, self.options.strategy).map(|_| ())
    }

    /// Every instance to `clip`, crossfading over the `--fade` time; without one (0), a cut: no
    /// frame streaks from the old pose (clips cut from one animation share its index, so the
    /// renderer cannot tell that switch from motion by itself).
    pub(super) fn switch_clip(&mut self, clip: usize) {
        self.setup.play(clip, self.clock, self.options.fade_seconds);
        if self.options.fade_seconds <= 0.0 {
            self.cut_motion();
        }
    }

    /// The next frame starts the motion vectors anew: a jump of the clock or the camera.
    pub(super) fn cut_motion(&mut self) {
        if let Some(graphics) = &mut self.graphics {
            graphics.renderer.cut_motion();
        }
    }

    /// Applies what the user did in the panel.
    pub(super) fn apply(&mut self, action: Action) -> gpu::Result<()> {
        match action {
            Action::Strategy(strategy) => self.rebuild(self.setup.instances.len(), strategy)?,
            Action::Instances(count) => self.rebuild(count, self.options.strategy)?,
            Action::Clip(clip) => self.switch_clip(clip),
            Action::Fade(seconds) => self.options.fade_seconds = seconds,
            Action::Speed(speed) => self.speed = speed,
            Action::Pause(paused) => self.paused = paused,
            Action::Step => self.clock += self.frame_step(),
            Action::Seek(seconds) => {
                self.clock = seconds;
                self.cut_motion();
            }
            Action::Debug(views) => {
                if let Some(graphics) = &mut self.graphics {
                    if let Ok(Some(message)) | Err(message) = graphics.renderer.set_debug(views) {
                        self.last_error = Some(message);
                    }
                }
            }
            Action::Panel(on) => self.panel.visible = on && self.options.ui,
            Action::Skinning(skinning) => {
                self.options.skinning = skinning;
                for instance in &mut self.setup.instances {
                    instance.skinning = skinning;
                }
            }
            Action::Morph(target, weight) => {
                let count = self.setup.model.morph_targets.len();
                if target < count {
                    // Within the target's range, which the culling boxes allow for (morph_reach).
                    let (low, high) = self.setup.model.weight_range(target);
                    self.setup.morph_overrides.resize(count, None);
                    self.setup.morph_overrides[target] = weight.map(|weight| weight.clamp(low, high));
                }
            }
            Action::Shadows(shadows) => {
                // The trace pass and the forward pass's pipelines are the renderer's own: a new one.
                let before = std::mem::replace(&mut self.options.shadows, shadows);
                if before != shadows && !self.remake(self.setup.instances.len(), self.options.strategy)? {
                    self.options.shadows = before;
                }
            }
            Action::Raster(raster) => {
                self.options.raster = raster;
                if let Some(graphics) = &mut self.graphics {
                    graphics.renderer.raster = raster;
                }
            }
            Action::MotionBlur(on) => {
                self.options.motion_blur = on;
                if let Some(graphics) = &mut self.graphics {
                    graphics.renderer.motion_blur = on;
                }
            }
            Action::Variety(on) => {
                // The same grid with or without the variety; what each plays stays.
                let remade =
                    crate::app::grid_instances(&self.setup.staging, &self.setup.models(), &self.setup.model_indices(), on);
                for (instance, made) in self.setup.instances.iter_mut().zip(remade) {
                    (instance.phase, instance.speed, instance.scale, instance.tint) =
                        (made.phase, made.speed, made.scale, made.tint);
                }
                self.setup.variety = on;
            }
            Action::AnimationLod(on) => {
                self.options.animation_lod = on.then_some(crate::render::ANIMATION_LOD_PIXELS);
                if let Some(graphics) = &mut self.graphics {
                    graphics.renderer.setup.animation_lod = self.options.animation_lod;
                }
            }
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
            Action::RootMotion(on) => self.set_root_motion(on)?,
            Action::RemoveModel(index) => {
                let mut models: Vec<Model> = self.setup.models().into_iter().cloned().collect();
                if models.len() > 1 && index < models.len() {
                    models.remove(index);
                    let mut setup = SceneSetup::with_models(models, self.setup.instances.len(), self.setup.variety);
                    setup.camera = self.setup.camera;
                    self.replace_scene(setup, self.options.strategy)?;
                }
            }
            Action::Capture => match &mut self.options.capture {
                Some(capture) => capture.frame = self.report.frames,
                None => self.last_error = Some("no RenderDoc in this process: start the viewer from RenderDoc".into()),
            },
        }
        Ok(())
    }
}
