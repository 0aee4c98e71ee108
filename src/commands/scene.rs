//! The scene a rendering command plays, from its arguments: the model read with its clips, cells
//! and levels of detail, the instances, the clip and the layer.

use std::path::PathBuf;

use vkskin::anim::Layer;
use vkskin::app::{default_animations, default_model_path, find_clip, SceneSetup};
use vkskin::formats::ranges::parse_clips_argument;
use vkskin::formats::read_model;
use vkskin::gpu::instance::validation_from_env;
use vkskin::model::Model;
use vkskin::render::{MemoryPlan, RenderSettings};

use crate::cli::{SceneArgs, Switch};

impl SceneArgs {
    pub(crate) fn validation(&self) -> bool {
        self.validate || validation_from_env()
    }

    /// The renderer's `Setup::animation_lod` for `--animation-lod`.
    pub(crate) fn animation_lod(&self) -> Option<f32> {
        self.animation_lod.on().then_some(vkskin::render::ANIMATION_LOD_PIXELS)
    }

    /// The renderer's settings: room for the light's run with `--light-culling on`, animation LOD,
    /// motion blur.
    pub(crate) fn settings(&self) -> RenderSettings {
        RenderSettings {
            light_culling: self.light_culling.on(),
            animation_lod: self.animation_lod(),
            motion_blur: self.motion_blur.on(),
            shadows: self.shadows,
            raster: self.raster,
            ..RenderSettings::default()
        }
    }

    /// The model with its instances, playing the chosen clip, refusing up front (before laying out
    /// a single instance) a count past what `device` (or any device) can hold, with the limit and
    /// the largest count that fits.
    /// `up_front`: with `--lod on`, build the levels of detail, and with `--clip-compression on`
    /// compress the clips, before returning (the headless commands, whose frames are all rendered
    /// at once, and the viewer's large crowds); without, the viewer does both on a worker thread
    /// while it draws the full mesh from the keys.
    pub(crate) fn setup_within(&self, device: Option<&vkskin::gpu::Device>, up_front: bool) -> Result<SceneSetup, String> {
        let models = self.load_all(up_front)?;
        let borrowed: Vec<&Model> = models.iter().collect();
        match device {
            Some(device) => {
                MemoryPlan::new(device, &borrowed, self.strategy, self.instances, self.settings())
                    .map_err(|error| error.to_string())?;
            }
            None => MemoryPlan::check_any_device(&borrowed, self.strategy, self.instances)?,
        }
        let model = &models[0];
        let clip = self.clip.as_deref().map(|selector| find_clip(model, selector)).transpose()?;
        // The layer as the first model reads it (an error names what it lacks); each other model
        // plays it where it has that clip and joint by name, and plays none where it does not.
        let layer = self.layer.as_deref().map(|text| parse_layer(model, text)).transpose()?;
        let layers: Vec<Option<Layer>> = models
            .iter()
            .enumerate()
            .map(|(index, model)| match index {
                0 => layer,
                _ => self.layer.as_deref().and_then(|text| parse_layer(model, text).ok()),
            })
            .collect();
        let mut setup = SceneSetup::with_models(models, self.instances as usize, self.variety.on());
        if let Some(clip) = clip {
            setup.play(clip, 0.0, 0.0);
            setup.frame_played();
        }
        if self.crowd {
            setup.play_every_clip();
            setup.frame_played();
        }
        for (index, instance) in setup.instances.iter_mut().enumerate() {
            instance.layer = layers[setup.instance_models.get(index).copied().unwrap_or(0) as usize];
            instance.skinning = self.skinning;
        }
        Ok(setup)
    }

    /// The model files asked for, positional then `--models`; the bundled figure when none are.
    pub(crate) fn model_paths(&self) -> Vec<PathBuf> {
        let paths: Vec<PathBuf> = self.models.iter().chain(&self.more_models).cloned().collect();
        if paths.is_empty() {
            vec![default_model_path()]
        } else {
            paths
        }
    }

    /// Every model asked for, read as `load` reads one. Of several, each takes the `--anim` files
    /// whose joints it has; one whose joints none of them match keeps its own clips (and says so).
    pub(crate) fn load_all(&self, build_levels: bool) -> Result<Vec<Model>, String> {
        let paths = self.model_paths();
        if self.default_crowd() {
            return self.figure_crowd(&paths[0], build_levels);
        }
        if paths.len() == 1 {
            return Ok(vec![self.load_path(&paths[0], &self.animations, build_levels)?]);
        }
        let mut models = Vec::with_capacity(paths.len());
        for path in &paths {
            let model = match self.load_path(path, &self.animations, build_levels) {
                Ok(model) => model,
                Err(error) if !self.animations.is_empty() => {
                    log::warn!("{}: the --anim clips do not play on it ({error}); its own clips play", path.display());
                    self.load_path(path, &[], build_levels)?
                }
                Err(error) => return Err(error),
            };
            models.push(model);
        }
        Ok(models)
    }

    /// How each model is prepared once read, `levels` built and the clips compressed or not
    /// (the viewer's worker does both for a scene it draws at once: `setup_within`).
    pub(crate) fn preparation(&self, levels: bool) -> Preparation<'_> {
        Preparation {
            levels: levels && self.lod.on(),
            compression: if levels { self.clip_compression } else { Switch::Off },
            root_motion: self.root_motion,
            root_joint: self.root_joint.as_deref(),
            cache: self.cache,
        }
    }

    /// No model given, several instances with their variety, and no clip options that name the
    /// figure's clips: the bundled figure and its variants (`generate::variants`) make the crowd.
    fn default_crowd(&self) -> bool {
        self.models.is_empty()
            && self.more_models.is_empty()
            && self.instances > 1
            && self.variety.on()
            && self.animations.is_empty()
            && self.clips.is_none()
            && self.ranges.is_none()
    }

    /// The bundled figure at `path` and its variants, each prepared as a model read from a file.
    fn figure_crowd(&self, path: &std::path::Path, build_levels: bool) -> Result<Vec<Model>, String> {
        let figure = read_model(path, &default_animations(path, &[])).map_err(|error| error.to_string())?;
        let mut models = vec![figure.clone()];
        models.extend(vkskin::generate::variants::crowd_variants(&figure));
        let prepared: Vec<Model> = models
            .into_iter()
            .map(|model| Ok(prepare_model(model, &self.preparation(build_levels))?.0))
            .collect::<Result<_, String>>()?;
        log::info!("{}: the bundled figure and {} variants of it", path.display(), prepared.len() - 1);
        Ok(prepared)
    }

    /// One model file with `animations` (a .md5mesh's siblings where none are given).
    fn load_path(&self, path: &std::path::Path, animations: &[PathBuf], build_levels: bool) -> Result<Model, String> {
        let animations = default_animations(path, animations);
        let (model, _) =
            open_model(path, &animations, (self.clips.as_deref(), self.ranges.as_deref()), &self.preparation(build_levels))?;
        // Of several models, each line names its file.
        vkskin::app::log_load_report(&model, (self.model_paths().len() > 1).then_some(path));
        log::info!(
            "{}: {} vertices, {} joints, up to {} influences a vertex, {} clips",
            path.display(),
            model.vertices.len(),
            model.skeleton.len(),
            model.stats.max_influences,
            model.clips.len()
        );
        Ok(model)
    }
}

/// How a model is prepared once read ([`prepare_model`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Preparation<'a> {
    /// Its levels of detail built.
    pub(crate) levels: bool,
    /// `--clip-compression`.
    pub(crate) compression: Switch,
    /// `--root-motion`: travelling clips played in place, the instance moved by their motion.
    pub(crate) root_motion: Switch,
    /// `--root-joint`: the joint whose motion is taken (default: the root, or the hips).
    pub(crate) root_joint: Option<&'a str>,
    /// `--cache`: the cells, levels and compressed clips read from the derived-data cache where
    /// it holds them, and stored there where not (`model::derived`).
    pub(crate) cache: Switch,
}

/// Reads a model, cuts `--clips` and `--ranges FILE` from it, takes the root motion out of its
/// travelling clips (unless `--root-motion off`), compresses its clips (unless
/// `--clip-compression off`), and builds its culling cells and, with `levels`, its
/// levels of detail side by side ([`prepare_model`]).
pub(crate) fn open_model(
    path: &std::path::Path,
    animations: &[PathBuf],
    (clips, ranges): (Option<&str>, Option<&std::path::Path>),
    preparation: &Preparation,
) -> Result<(Model, Prepared), String> {
    let mut model = read_model(path, animations).map_err(|error| error.to_string())?;
    if let Some(file) = ranges {
        vkskin::formats::ranges::cut_by_file(&mut model, file).map_err(|error| error.to_string())?;
    }
    if let Some(text) = clips {
        model.cut_clips(&parse_clips_argument(text)?)?;
    }
    prepare_model(model, preparation)
}

/// What every model gets before it is shown, once read: its travelling clips' root motion taken
/// out (unless `--root-motion off`); then its culling cells, its clips compressed (unless
/// `--clip-compression off`) and, with `levels`, its levels of detail, side by side, or all three
/// from the derived-data cache (`model::derived`; unless `--cache off`). Returns how that went; an
/// error where `--root-joint` names no joint of the model.
pub(crate) fn prepare_model(mut model: Model, preparation: &Preparation) -> Result<(Model, Prepared), String> {
    let Preparation { levels, compression, root_motion, root_joint, cache } = *preparation;
    if root_motion.on() {
        let joint = root_joint
            .map(|name| {
                model.skeleton.joints.iter().position(|joint| joint.name == name.trim()).ok_or_else(|| {
                    format!("--root-joint \"{name}\": {} has no such joint (`vkskin inspect` lists them)", model.name)
                })
            })
            .transpose()?;
        let extracted = model.extract_root_motion(joint);
        if !extracted.is_empty() {
            log::info!(
                "{}: root motion taken out of {} of its {} animations",
                model.name,
                extracted.len(),
                model.animations.len()
            );
        }
    }
    let folder = cache.on().then(vkskin::app::derived_cache_folder);
    let started = std::time::Instant::now();
    let (derived, source) = vkskin::model::derived::derive(&model, levels, compression.on(), folder.as_deref());
    let prepared = Prepared { source, seconds: started.elapsed().as_secs_f64(), made_in: derived.made_in, chain_seconds: None };
    let chain_seconds = derived.apply(&mut model);
    Ok((model, Prepared { chain_seconds, ..prepared }))
}

/// How [`prepare_model`] went.
pub(crate) struct Prepared {
    /// The levels of detail's time, where built (when they were made, for ones from the cache).
    pub(crate) chain_seconds: Option<f64>,
    /// Made now, or read from the derived-data cache.
    pub(crate) source: vkskin::model::derived::Source,
    /// The seconds the cells, levels and compressed clips took now (read, for ones from the cache)...
    pub(crate) seconds: f64,
    /// ...and when they were made.
    pub(crate) made_in: f64,
}

impl Prepared {
    /// `inspect`'s line on it: "derived data: made in 1.234 s" or "derived data: read from the
    /// cache in 0.003 s (made in 1.234 s)".
    pub(crate) fn describe(&self) -> String {
        match self.source {
            vkskin::model::derived::Source::Made => format!("derived data: made in {:.3} s", self.seconds),
            vkskin::model::derived::Source::Cached => {
                format!("derived data: read from the cache in {:.3} s (made in {:.3} s)", self.seconds, self.made_in)
            }
        }
    }
}

/// `--layer CLIP@JOINT[:WEIGHT]`: a clip by name or index over a joint (by name) and its subtree.
fn parse_layer(model: &Model, text: &str) -> Result<Layer, String> {
    let expected = || format!("--layer \"{text}\": expected CLIP@JOINT or CLIP@JOINT:WEIGHT");
    let (clip, rest) = text.split_once('@').ok_or_else(expected)?;
    let (joint, weight) = match rest.rsplit_once(':') {
        Some((joint, weight)) => (joint, weight.trim().parse::<f32>().map_err(|_| expected())?),
        None => (rest, 1.0),
    };
    if !(0.0..=1.0).contains(&weight) {
        return Err(format!("--layer \"{text}\": expected a weight from 0 to 1, found {weight}"));
    }
    let clip = find_clip(model, clip.trim())?;
    let joint = model.skeleton.joints.iter().position(|candidate| candidate.name == joint.trim()).ok_or_else(|| {
        format!("--layer \"{text}\": {} has no joint \"{}\" (`vkskin inspect` lists them)", model.name, joint.trim())
    })?;
    Ok(Layer { clip, joint, weight })
}
