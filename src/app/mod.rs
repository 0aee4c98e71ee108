//! The application over the library: a scene set up around a model and headless rendering (here,
//! what the binary and the tests share), the viewer and its panel, the benchmark, `inspect`,
//! frame captures for RenderDoc, plots and image comparisons.

pub mod bench;
pub mod capture;
pub mod imagediff;
pub mod inspect;
pub mod panel;
pub mod plot;
pub mod pose;
pub mod viewer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::{Vec3, Vec4};

use crate::anim::Aabb;
use crate::anim::InstanceState;
use crate::gpu::device::DeviceRequest;
use crate::gpu::{self, Device, Instance, InstanceOptions};
use crate::model::Model;
use crate::render::camera::OrbitCamera;
use crate::render::offscreen::{OffscreenTarget, OFFSCREEN_FORMAT};
use crate::render::passes::shadow;
use crate::render::shader_types::InstanceData;
use crate::render::{FrameScene, Output, RenderSettings, Renderer, Strategy};

/// The bundled default model, made by `vkskin generate` (src/generate/). Found where an installed
/// binary's files go (`assets/` beside the executable, or `../share/vkskin/` from it), then in the
/// source tree it was built from; where neither holds it (a `cargo install`ed binary whose build
/// tree is gone), the generator writes it once into the user's cache folder. Whatever the path,
/// it is the same figure: the generator is deterministic and the committed assets are its output.
pub fn default_model_path() -> PathBuf {
    let source_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let beside_binary = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf));
    let mut folders: Vec<PathBuf> =
        beside_binary.iter().flat_map(|folder| [folder.join("assets"), folder.join("../share/vkskin")]).collect();
    folders.push(source_tree);
    // The user's cache folder: XDG's, or Windows' local application data.
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .or_else(|| std::env::var_os("LOCALAPPDATA").map(PathBuf::from))
        .unwrap_or_else(std::env::temp_dir)
        .join(concat!("vkskin-", env!("CARGO_PKG_VERSION")));
    default_model_in(&folders, &cache)
}

/// The figure in the first of `folders` that holds it, else generated into `cache` (once).
fn default_model_in(folders: &[PathBuf], cache: &Path) -> PathBuf {
    const FILE: &str = "figure.md5mesh";
    if let Some(found) = folders.iter().map(|folder| folder.join(FILE)).find(|path| path.is_file()) {
        return found;
    }
    let generated = cache.join(FILE);
    if generated.is_file() {
        return generated;
    }
    // Written whole into a folder of its own, then renamed: an interrupted run leaves no half figure.
    let partial = cache.with_extension(format!("partial-{}", std::process::id()));
    let written = crate::generate::write_assets(&partial).and_then(|_| std::fs::rename(&partial, cache));
    let _ = std::fs::remove_dir_all(&partial);
    match written {
        Ok(()) => generated,
        Err(_) if generated.is_file() => generated, // another process got there first
        Err(error) => {
            // Loading this path then fails with an error that names it.
            log::warn!("the bundled figure is not installed and cannot be generated into {}: {error}", cache.display());
            generated
        }
    }
}

/// The animations that go with a .md5mesh when none are given: every .md5anim beside it whose
/// joints are the mesh's (names in order, as the format requires), sorted by name: the mesh's own
/// `<stem>_*.md5anim` and the others a game put there (the Doom 3 hellknight's `idle2`, `walk7`).
/// Other formats carry their clips inside.
pub fn default_animations(model: &Path, given: &[PathBuf]) -> Vec<PathBuf> {
    if !given.is_empty() || !model.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("md5mesh")) {
        return given.to_vec();
    }
    let Some(joints) = crate::formats::md5::joint_names(model) else { return Vec::new() };
    let folder = model.parent().filter(|folder| !folder.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|path| path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("md5anim")))
                .filter(|path| crate::formats::md5::joint_names(path).is_some_and(|names| names == joints))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// What the loader noticed, as log lines: its warnings as warnings, its notes as information.
pub fn log_load_report(model: &Model) {
    for warning in &model.stats.warnings {
        log::warn!("{}", crate::formats::files::one_line(warning));
    }
    for note in &model.stats.notes {
        log::info!("{}", crate::formats::files::one_line(note));
    }
}

/// A clip by name (exact, then ignoring case) or by index; the error lists what there is.
pub fn find_clip(model: &Model, selector: &str) -> Result<usize, String> {
    let by_name = model.clips.iter().position(|clip| clip.name == selector);
    let by_loose_name = || model.clips.iter().position(|clip| clip.name.eq_ignore_ascii_case(selector));
    let by_index = || selector.parse::<usize>().ok().filter(|&index| index < model.clips.len());
    by_name.or_else(by_loose_name).or_else(by_index).ok_or_else(|| {
        let names: Vec<String> = model.clips.iter().enumerate().map(|(index, clip)| format!("[{index}] {}", clip.name)).collect();
        if names.is_empty() {
            format!("{} has no clips, so there is no clip '{selector}'", model.name)
        } else if selector.trim().parse::<usize>().is_ok() {
            let last = names.len() - 1;
            format!("{} has no clip {selector}: clips are numbered 0 to {last} ({})", model.name, names.join(", "))
        } else {
            format!("{} has no clip '{selector}'; it has {}", model.name, names.join(", "))
        }
    })
}

/// A model (or several: a crowd of them), its instances, the light and a camera that frames them.
pub struct SceneSetup {
    /// The model, or the first of several.
    pub model: Model,
    /// The other models of a crowd of several (`with_models`): model k + 1 of the crowd is
    /// `others[k]`.
    pub others: Vec<Model>,
    pub instances: Vec<InstanceState>,
    /// Each instance's model: 0 for `model`, k + 1 for `others[k]` (missing: 0). Its clip, phase
    /// and state are that model's.
    pub instance_models: Vec<u32>,
    /// Unit vector towards the light.
    pub light_direction: Vec3,
    pub camera: OrbitCamera,
    /// World bounds of every instance over all of its animation.
    pub bounds: Aabb,
    /// Per morph target, a weight set by hand (the panel) over the clips', or None.
    pub morph_overrides: Vec<Option<f32>>,
    /// Built with a crowd's variety (`new`) or without (`uniform`): what a scene made again from
    /// this one (another count, another file) keeps.
    pub variety: bool,
}

impl SceneSetup {
    /// `instance_count` instances of `model` on a grid; a crowd (more than one) varied in phase,
    /// speed, size and colours ([`crowd_variety`]).
    pub fn new(model: Model, instance_count: usize) -> SceneSetup {
        SceneSetup::with_variety(model, instance_count, true)
    }

    /// `new` without the crowd's variety: every instance the model as made, at the clip's speed,
    /// each out of step with the last by a fixed fraction of the clip (tests that compare
    /// instances with each other or with the model).
    pub fn uniform(model: Model, instance_count: usize) -> SceneSetup {
        SceneSetup::with_variety(model, instance_count, false)
    }

    /// `new` (`variety`) or `uniform`.
    pub fn with_variety(model: Model, instance_count: usize, variety: bool) -> SceneSetup {
        SceneSetup::with_models(vec![model], instance_count, variety)
    }

    /// `instance_count` instances of `models` (at least one) mixed on one grid: instance i is of
    /// model [`crowd_model`]`(i)` (each model as many times as the others, give or take one, in a
    /// shuffled order, never in blocks), playing that model's first clip, with a crowd's variety
    /// where asked.
    pub fn with_models(mut models: Vec<Model>, instance_count: usize, variety: bool) -> SceneSetup {
        let count = instance_count.max(1);
        let instance_models: Vec<u32> = (0..count).map(|index| crowd_model(index, models.len())).collect();
        let model = models.remove(0);
        let mut setup = SceneSetup {
            model,
            others: models,
            instances: Vec::new(),
            instance_models,
            light_direction: Vec3::Y,
            camera: OrbitCamera::framing(Aabb { min: Vec3::splat(-1.0), max: Vec3::ONE }),
            bounds: Aabb::EMPTY,
            morph_overrides: Vec::new(),
            variety,
        };
        setup.instances = grid_instances(&setup.models(), &setup.instance_models, variety);
        setup.frame_all();
        setup
    }

    /// Every model, the first first: the order instance records name them in.
    pub fn models(&self) -> Vec<&Model> {
        std::iter::once(&self.model).chain(&self.others).collect()
    }

    /// Instance `index`'s model.
    pub fn model_of(&self, index: usize) -> &Model {
        match self.instance_models.get(index) {
            Some(&model) if model > 0 => self.others.get(model as usize - 1).unwrap_or(&self.model),
            _ => &self.model,
        }
    }

    /// The models and how many instances each has, for a person: `Fox`, or
    /// `3 models: CesiumMan ×4, Fox ×4, Male_Casual ×4`.
    pub fn mix(&self) -> String {
        let models = self.models();
        if models.len() == 1 {
            return self.model.name.clone();
        }
        let each: Vec<String> =
            models.iter().zip(self.model_counts()).map(|(model, count)| format!("{} ×{count}", model.name)).collect();
        format!("{} models: {}", models.len(), each.join(", "))
    }

    /// How many instances each model has, in `models()`' order.
    pub fn model_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.others.len() + 1];
        for model in self.model_indices() {
            counts[model as usize] += 1;
        }
        counts
    }

    /// Each instance's model index, one per instance (what the renderer is built for).
    pub fn model_indices(&self) -> Vec<u32> {
        (0..self.instances.len()).map(|index| self.instance_models.get(index).copied().unwrap_or(0)).collect()
    }

    /// The shadow map's bounds fitted again to the instances where they are now (after moving
    /// them).
    pub fn fit_bounds(&mut self) {
        self.bounds = world_bounds(&self.placed());
    }

    /// Each instance with its model.
    fn placed(&self) -> Vec<(&Model, &InstanceState)> {
        self.instances.iter().enumerate().map(|(index, instance)| (self.model_of(index), instance)).collect()
    }

    /// The camera, the light and the shadow map's bounds around the instances.
    fn frame_all(&mut self) {
        let placed = self.placed();
        let bounds = world_bounds(&placed);
        let camera = framing_camera(&placed);
        // The character's front, which the camera was turned to.
        let facing = glam::Quat::from_rotation_y(camera.yaw - crate::render::camera::FRAMING_YAW);
        self.bounds = bounds;
        self.camera = camera;
        // From the camera's left and a little in front of the character, turned with the
        // camera to the character's front: the shadow falls behind and beside the feet, on
        // the ground the camera sees, not towards the camera and out of the frame's bottom.
        self.light_direction = facing * Vec3::new(-0.6, 0.9, 0.8).normalize();
    }

    /// Every instance switches to `clip`, crossfading over `fade_seconds` from `now`. The camera
    /// stays where it is (`frame_played` moves it).
    /// (Of several models, the instances whose model has that clip.)
    pub fn play(&mut self, clip: usize, now: f64, fade_seconds: f32) {
        let has: Vec<bool> = (0..self.instances.len()).map(|index| clip < self.model_of(index).clips.len()).collect();
        for (instance, _) in self.instances.iter_mut().zip(has).filter(|(_, has)| *has) {
            instance.switch_clip(clip, now, fade_seconds);
        }
    }

    /// A crowd: instance i plays the i-th of the clips that move anything (round and round), each
    /// out of step with the others as before.
    /// (Of several models, each its own model's clips, in turn over that model's instances.)
    pub fn play_every_clip(&mut self) {
        let moving: Vec<Vec<usize>> =
            self.models().iter().map(|model| (0..model.clips.len()).filter(|&clip| model.clip_moves(clip)).collect()).collect();
        let mut turns = vec![0; moving.len()];
        for (index, instance) in self.instances.iter_mut().enumerate() {
            let model = self.instance_models.get(index).copied().unwrap_or(0) as usize;
            let Some(clips) = moving.get(model).filter(|clips| !clips.is_empty()) else { continue };
            instance.clip = Some(clips[turns[model] % clips.len()]);
            instance.fade = None;
            turns[model] += 1;
        }
    }

    /// What the first instance plays at `seconds` on the shared clock, for a person to read:
    /// `clip [1] "mixamo.com" at 1.20 of 2.43 s`, or that it holds the rest pose (of several
    /// models, its model named first).
    pub fn playing(&self, seconds: f64) -> String {
        let Some(instance) = self.instances.first() else { return "no instances".to_string() };
        let model = self.model_of(0);
        let Some((index, clip)) = instance.clip.and_then(|index| Some((index, model.clips.get(index)?))) else {
            return if model.clips.is_empty() { "no clips: the rest pose" } else { "no clip: the rest pose" }.to_string();
        };
        let local = seconds * f64::from(instance.speed) + f64::from(instance.phase);
        let time = clip.animation_time(local) - clip.start;
        let empty = if model.clip_moves(index) { "" } else { " (moves nothing)" };
        let whose = if self.others.is_empty() { String::new() } else { format!("{}'s ", model.name) };
        format!(
            "{whose}clip [{index}] {} at {time:.2} of {:.2} s{empty}",
            crate::formats::files::quoted(&clip.name),
            clip.duration
        )
    }

    /// A camera that frames the instances over the clips they play.
    pub fn frame_played(&mut self) {
        self.camera = framing_camera(&self.placed());
    }

    /// The ground: a square at the lowest point of the scene, a few model sizes wide.
    pub fn ground(&self) -> Vec4 {
        let center = self.bounds.center();
        Vec3::new(center.x, self.bounds.min.y, center.z).extend(self.bounds.extent().max(1e-3) * 3.0)
    }

    /// Everything the renderer needs for the frame at `seconds` on the shared clock.
    pub fn frame(&self, seconds: f64, aspect: f32) -> FrameScene {
        let ground = self.ground();
        let receiver = Aabb {
            min: ground.truncate() - Vec3::new(ground.w, 0.0, ground.w),
            max: ground.truncate() + Vec3::new(ground.w, 0.0, ground.w),
        };
        FrameScene {
            instances: self
                .placed()
                .into_iter()
                .map(|(model, instance)| InstanceData::of(instance, &instance.playback(&model.clips, seconds)))
                .collect(),
            view_projection: self.camera.view_projection(aspect),
            camera_position: self.camera.position(),
            light_view_projection: shadow::light_view_projection(self.light_direction, self.bounds, receiver),
            light_direction: self.light_direction,
            ground,
            morph_overrides: self.morph_overrides.clone(),
        }
    }
}

/// A camera in front of the character (the first instance's model's `Model::facing_yaw`) that
/// frames the instances, each with its model, over the clips they play.
fn framing_camera(placed: &[(&Model, &InstanceState)]) -> OrbitCamera {
    let facing = placed.first().and_then(|(model, _)| model.facing_yaw()).unwrap_or(0.0);
    OrbitCamera::framing_points_from(&framed_points(placed), crate::render::camera::FRAMING_YAW + facing)
}

/// Instance and device without a window.
pub fn headless_device(validation: bool) -> gpu::Result<Arc<Device>> {
    let instance = Instance::new(&InstanceOptions { validation, surface_extensions: Vec::new() })?;
    Ok(Arc::new(Device::new(instance, DeviceRequest { surface: None, needs: crate::render::device_needs() })?))
}

/// A renderer drawing into an offscreen image that is read back after each frame.
pub struct HeadlessRenderer {
    // The target's image is used by the renderer's frames; both hold the device.
    pub target: OffscreenTarget,
    pub renderer: Renderer,
}

impl HeadlessRenderer {
    pub fn new(device: &Arc<Device>, setup: &SceneSetup, width: u32, height: u32) -> gpu::Result<HeadlessRenderer> {
        HeadlessRenderer::with_strategy(device, setup, (width, height), Strategy::Compute)
    }

    pub fn with_strategy(
        device: &Arc<Device>,
        setup: &SceneSetup,
        size: (u32, u32),
        strategy: Strategy,
    ) -> gpu::Result<HeadlessRenderer> {
        HeadlessRenderer::with_settings(device, setup, size, strategy, RenderSettings::default())
    }

    /// `with_strategy`, with the application's `settings` (`RenderSettings`); in tests, the
    /// device's limits lowered (storage-buffer bindings held below `settings.binding` bytes, so the
    /// skinned vertices and palettes split into chunks at small counts; the heap held to
    /// `settings.heap`).
    pub fn with_settings(
        device: &Arc<Device>,
        setup: &SceneSetup,
        (width, height): (u32, u32),
        strategy: Strategy,
        settings: RenderSettings,
    ) -> gpu::Result<HeadlessRenderer> {
        if width == 0 || height == 0 {
            return Err(gpu::Error::Other(format!("image size {width}x{height}: both sides must be at least 1")));
        }
        let renderer =
            Renderer::for_models(device, &setup.models(), &setup.model_indices(), OFFSCREEN_FORMAT, strategy, settings)?;
        let target = OffscreenTarget::new(device, width, height)?;
        Ok(HeadlessRenderer { target, renderer })
    }

    pub fn aspect(&self) -> f32 {
        let extent = self.target.color.extent();
        extent.width as f32 / extent.height as f32
    }

    /// Submits one frame without waiting for it (soak runs and frame counts).
    pub fn submit(&mut self, scene: &FrameScene) -> gpu::Result<()> {
        self.renderer.render(scene, Output::Offscreen(&self.target))
    }

    /// Renders one frame and returns its pixels.
    pub fn render(&mut self, scene: &FrameScene) -> gpu::Result<image::RgbaImage> {
        self.submit(scene)?;
        self.renderer.wait_all()?;
        self.target.read_image()
    }
}

/// Instances of `models` in a grid centred on the origin, instance i of `models[of[i]]`, spaced
/// by the largest model's size (and room for a crowd's largest size). Of several models, each is
/// scaled to the others' size ([`crowd_sizes`]). A crowd with `variety` is varied
/// ([`crowd_variety`]); otherwise each instance is its model as made, out of step with the last by
/// a fraction of its clip.
pub fn grid_instances(models: &[&Model], of: &[u32], variety: bool) -> Vec<InstanceState> {
    let count = of.len();
    let sizes = crowd_sizes(models);
    let bounds: Vec<Aabb> = models.iter().map(|model| model.animated_bounds()).collect();
    let room = if count > 1 { 1.0 + CROWD_SCALE } else { 1.0 };
    let widest = bounds.iter().zip(&sizes).map(|(bounds, size)| bounds.size().x.max(bounds.size().z) * size).fold(0.0, f32::max);
    let spacing = (widest * 1.6 + 0.2) * room;
    let columns = (count as f32).sqrt().ceil().max(1.0) as usize;
    let rows = count.div_ceil(columns);
    of.iter()
        .enumerate()
        .map(|(index, &model_index)| {
            let (model, bounds, size) = (models[model_index as usize], bounds[model_index as usize], sizes[model_index as usize]);
            let clip = model.default_clip();
            let duration = clip.and_then(|clip| model.clips.get(clip)).map_or(1.0, |clip| clip.duration);
            let (row, column) = (index / columns, index % columns);
            let x = (column as f32 - (columns as f32 - 1.0) * 0.5) * spacing;
            let z = (row as f32 - (rows as f32 - 1.0) * 0.5) * spacing;
            let instance = InstanceState {
                position: Vec3::new(x, 0.0, z) - Vec3::new(bounds.center().x, 0.0, bounds.center().z) * size,
                clip,
                phase: duration * (index as f32 * 0.37).fract(),
                ..InstanceState::default()
            };
            let instance = if variety && count > 1 { crowd_variety(instance, index, duration) } else { instance };
            InstanceState { scale: instance.scale * size, ..instance }
        })
        .collect()
}

/// Each model's scale in a crowd of several: files come in their tools' units (a glTF in metres,
/// a Blender FBX in centimetres, a game's MD5 in inches), so each is scaled until its animated
/// box's diagonal is the models' median, and a fox stands beside a man rather than a hundred
/// times his height. One model keeps its size.
pub fn crowd_sizes(models: &[&Model]) -> Vec<f32> {
    let diagonals: Vec<f32> = models.iter().map(|model| model.animated_bounds().size().length()).collect();
    let mut usable: Vec<f32> = diagonals.iter().copied().filter(|diagonal| diagonal.is_finite() && *diagonal > 0.0).collect();
    if models.len() < 2 || usable.is_empty() {
        return vec![1.0; models.len()];
    }
    usable.sort_by(f32::total_cmp);
    let median = usable[usable.len() / 2];
    diagonals.iter().map(|&diagonal| if diagonal.is_finite() && diagonal > 0.0 { median / diagonal } else { 1.0 }).collect()
}

/// The model of instance `index` of a crowd of `models` models: each run of `models` instances
/// holds every model once, the first run in the order given (instance 0 is the first model, the
/// one a crowd is named and framed by) and every later one shuffled (seeded by the run), so the
/// models mix on the grid rather than form rows or columns, and each has as many instances as the
/// others, give or take one.
pub fn crowd_model(index: usize, models: usize) -> u32 {
    if models <= 1 {
        return 0;
    }
    let run = (index / models) as u64;
    if run == 0 {
        return index as u32;
    }
    let mut order: Vec<u32> = (0..models as u32).collect();
    // Fisher–Yates from a stream seeded by the run.
    let mut state = run.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(0x2545_F491_4F6C_DD1D);
    for last in (1..models).rev() {
        order.swap(last, (splitmix64(&mut state) % (last as u64 + 1)) as usize);
    }
    order[index % models]
}

/// The next number of a splitmix64 stream at `state`: a well-mixed stream from a counter, in a
/// few lines (no crate needed for this); the crowd's variety and its dealing of models draw on it.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How far a crowd's sizes stray from the model's, either way.
pub const CROWD_SCALE: f32 = 0.08;

/// Clothing-like hues a crowd's colours move toward (linear RGB).
const CROWD_HUES: [[f32; 3]; 8] = [
    [0.85, 0.25, 0.2],
    [0.2, 0.45, 0.85],
    [0.25, 0.7, 0.3],
    [0.9, 0.75, 0.2],
    [0.6, 0.3, 0.75],
    [0.2, 0.7, 0.75],
    [0.9, 0.5, 0.25],
    [0.5, 0.5, 0.5],
];

/// Instance `index` of a crowd, varied by a hash of its index: a phase anywhere in a clip of
/// `duration` seconds, a speed within 10 % of the clip's, a size within [`CROWD_SCALE`] of the
/// model's, and a tint: one of [`CROWD_HUES`], its colours moved 50 to 90 % of the way toward it
/// (brightness and texture kept: forward.frag).
pub fn crowd_variety(instance: InstanceState, index: usize, duration: f32) -> InstanceState {
    let mut state = (index as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut next = || (splitmix64(&mut state) >> 40) as f32 / (1u64 << 24) as f32;
    let phase = duration * next();
    let speed = 0.9 + 0.2 * next();
    let scale = 1.0 - CROWD_SCALE + 2.0 * CROWD_SCALE * next();
    let hue = CROWD_HUES[(next() * CROWD_HUES.len() as f32) as usize % CROWD_HUES.len()];
    let tint = [hue[0], hue[1], hue[2], 0.5 + 0.4 * next()];
    InstanceState { phase, speed, scale, tint, ..instance }
}

/// Instances up to this many are framed by their skinned vertices; a larger crowd by its boxes.
const FRAMED_INSTANCES: usize = 16;
/// Poses a second of the played clip the framed vertices are skinned in (12 at least)...
const FRAMED_POSES_PER_SECOND: f32 = 15.0;
/// ...and skinned vertices in all, at most: fewer vertices a pose, spread evenly over the model's.
const FRAMED_SKINNED: usize = 200_000;

/// What the camera frames, in world space: for a few instances, their vertices skinned on the CPU
/// at [`FRAMED_POSES_PER_SECOND`] times a second of the clip each plays (so the figure, not its box, fills the frame);
/// for a crowd or a model without vertices, the corners of each instance's played cells.
pub fn framed_points(placed: &[(&Model, &InstanceState)]) -> Vec<Vec3> {
    let mut points = Vec::new();
    let one_model = placed.windows(2).all(|pair| std::ptr::eq(pair[0].0, pair[1].0));
    let boxes = placed.len() > FRAMED_INSTANCES || !one_model || placed.iter().any(|(model, _)| model.vertices.is_empty());
    if boxes {
        for (model, instance) in placed {
            let local = instance.clip.and_then(|clip| model.clip_bounds(clip)).unwrap_or_else(|| model.rest_bounds());
            points.extend(local.transformed(instance.world()).corners());
        }
        return points;
    }
    let Some(&(model, _)) = placed.first() else { return points };
    let instances: Vec<&InstanceState> = placed.iter().map(|(_, instance)| *instance).collect();
    let mut palette = vec![glam::Mat4::IDENTITY; model.skeleton.len()];
    let offsets = crate::model::VertexOffsets::of(model);
    // Without a clip, each target at its default weight.
    let defaults = model.default_weights();
    for instance in &instances {
        let world = instance.world();
        let clip = instance.clip.and_then(|clip| model.clips.get(clip));
        let poses = clip.map_or(1, |clip| ((clip.duration * FRAMED_POSES_PER_SECOND).ceil() as usize).clamp(12, 1000));
        let per_pose = FRAMED_SKINNED / (poses * instances.len());
        let stride = model.vertices.len().div_ceil(per_pose.max(1)).max(1);
        for pose in 0..poses {
            let mut weights = defaults.clone();
            if let Some(clip) = clip {
                let time = clip.start + clip.duration * pose as f32 / poses as f32;
                model.palette_at(clip.animation, time, &mut palette);
                weights = model.morph_weights(clip.animation, time);
            }
            let palette = clip.is_some().then_some(palette.as_slice());
            for (index, vertex) in model.vertices.iter().enumerate().step_by(stride) {
                // Morphed at the clip's weights, then skinned, as the skin pass does.
                let morphed =
                    crate::model::Vertex { position: offsets.moved(index as u32, vertex.position, &weights), ..*vertex };
                points.push(world.transform_point3(model.skinned_position(&morphed, palette)));
            }
        }
    }
    points
}

/// World bounds of all instances, each with its model, over everything any clip can do (the
/// shadow map's fit), so a clip switch never walks out of the shadow volume.
pub fn world_bounds(placed: &[(&Model, &InstanceState)]) -> Aabb {
    placed.iter().fold(Aabb::EMPTY, |acc, (model, instance)| acc.union(model.animated_bounds().transformed(instance.world())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crowd varies within its bounds, the same way every run; one instance is the model as made.
    #[test]
    fn a_crowd_varies_within_its_bounds_and_one_figure_does_not() {
        let bundled = default_model_path();
        let model = crate::formats::load_model(&bundled, &default_animations(&bundled, &[])).expect("the bundled figure loads");
        let [one] = SceneSetup::new(model.clone(), 1).instances[..] else { panic!("one instance") };
        assert_eq!((one.phase, one.speed, one.scale, one.tint), (0.0, 1.0, 1.0, [1.0, 1.0, 1.0, 0.0]));
        let crowd = SceneSetup::new(model.clone(), 400).instances;
        assert_eq!(crowd, SceneSetup::new(model.clone(), 400).instances, "seeded by the index");
        let uniform = SceneSetup::uniform(model.clone(), 400).instances;
        assert!(uniform.iter().all(|instance| (instance.speed, instance.scale, instance.tint[3]) == (1.0, 1.0, 0.0)));
        assert!(uniform.iter().zip(&crowd).all(|(plain, varied)| plain.position == varied.position));
        let duration = model.clips[model.default_clip().expect("a clip")].duration;
        for instance in &crowd {
            assert!((0.0..duration).contains(&instance.phase), "{instance:?}");
            assert!((0.9..=1.1).contains(&instance.speed), "{instance:?}");
            assert!((1.0 - CROWD_SCALE..=1.0 + CROWD_SCALE).contains(&instance.scale), "{instance:?}");
            assert!(CROWD_HUES.iter().any(|hue| hue[..] == instance.tint[..3]), "{instance:?}");
            assert!((0.5..=0.9).contains(&instance.tint[3]), "{instance:?}");
        }
        // Spread over the ranges, not bunched: every hue used, sizes both sides of 1.
        assert!(CROWD_HUES.iter().all(|hue| crowd.iter().any(|instance| instance.tint[..3] == hue[..])));
        let (smaller, larger) =
            (crowd.iter().filter(|i| i.scale < 0.97).count(), crowd.iter().filter(|i| i.scale > 1.03).count());
        assert!(smaller > 100 && larger > 100, "{smaller} smaller, {larger} larger of 400");
        // Neighbours are never the same size: the sequence is mixed.
        assert!(crowd.windows(2).all(|pair| pair[0].scale != pair[1].scale));
    }

    #[test]
    fn a_binary_without_its_assets_generates_the_figure_once_and_loads_it() {
        let scratch = std::env::temp_dir().join(format!("vkskin-default-model-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        let cache = scratch.join("cache").join("vkskin");
        let missing = [scratch.join("no-assets"), scratch.join("no-share")];
        let path = default_model_in(&missing, &cache);
        assert_eq!(path, cache.join("figure.md5mesh"));
        let model = crate::formats::load_model(&path, &default_animations(&path, &[])).expect("the generated figure loads");
        let bundled = default_model_path();
        let committed =
            crate::formats::load_model(&bundled, &default_animations(&bundled, &[])).expect("the bundled figure loads");
        assert_eq!((model.vertices.len(), model.clips.len()), (committed.vertices.len(), committed.clips.len()));
        // The second time it is found, not written again.
        let written = std::fs::metadata(&path).and_then(|metadata| metadata.modified()).expect("the figure's time");
        assert_eq!(default_model_in(&missing, &cache), path);
        assert_eq!(std::fs::metadata(&path).and_then(|metadata| metadata.modified()).ok(), Some(written));
        // An installed copy comes first.
        assert_eq!(default_model_in(std::slice::from_ref(&cache), &scratch.join("unused")), path);
    }
}
