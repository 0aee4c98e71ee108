//! A scene set up around a model or a crowd of models: its instances on a grid, the light, the
//! ground under the feet and a camera that frames the figures (and follows a walker).

use glam::{Mat4, Vec3, Vec4};

use super::crowd::{crowd_model, grid_instances};
use super::staging::{self, Placed, Staging};
use crate::anim::Aabb;
use crate::model::Model;
use crate::render::camera::OrbitCamera;
use crate::render::instances::{Instances, TableVersion};
use crate::render::passes::shadow;
use crate::render::shader_types::{InstanceData, WalkArea};
use crate::render::FrameScene;

/// A model (or several: a crowd of them), its instances, the light and a camera that frames them.
pub struct SceneSetup {
    /// The model, or the first of several.
    pub model: Model,
    /// The other models of a crowd of several (`with_models`): model k + 1 of the crowd is
    /// `others[k]`.
    pub others: Vec<Model>,
    /// Every instance's state, and which changed since a renderer last drew them: an edit through
    /// `instances[i]` is written to the GPU for that instance alone.
    pub instances: Instances,
    /// Each instance's model: 0 for `model`, k + 1 for `others[k]` (missing: 0). Its clip, phase
    /// and state are that model's. Changed only with the instances (`kept` goes by their table).
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
    /// What the scene knows of each clip its instances play: the ground, the framing.
    pub staging: Staging,
    /// What is worked out from every instance (the ground's height; a crowd's clips and counts,
    /// which the panel shows), kept until an instance changes: a frame of a steady crowd looks at
    /// no instance.
    pub kept: KeptSummaries,
    /// Where a crowd's walkers wrap, fitted with the bounds ([`SceneSetup::walk_area`]).
    pub(crate) area: Option<WalkArea>,
}

/// [`SceneSetup::kept`].
#[derive(Default)]
pub struct KeptSummaries {
    ground_height: Kept<f32>,
    crowd_playing: Kept<String>,
    model_counts: Kept<Vec<usize>>,
}

/// A value worked out from every instance, with the version of the table it is for
/// (`Instances::version`).
struct Kept<T>(std::sync::Mutex<Option<(TableVersion, T)>>);

impl<T> Default for Kept<T> {
    fn default() -> Kept<T> {
        Kept(std::sync::Mutex::new(None))
    }
}

impl<T: Clone> Kept<T> {
    /// The value for `version`: kept, or `make`'s (then kept).
    fn get(&self, version: TableVersion, make: impl FnOnce() -> T) -> T {
        let mut kept = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*kept {
            Some((at, value)) if *at == version => value.clone(),
            _ => {
                let value = make();
                *kept = Some((version, value.clone()));
                value
            }
        }
    }
}

/// A crowd's walkers' area is at least this many figures' heights a side ([`SceneSetup::walk_area`]).
pub const WALK_AREA_FIGURES: f32 = 4.0;

impl SceneSetup {
    /// `instance_count` instances of `model` on a grid; a crowd (more than one) varied in phase,
    /// speed, size and colours ([`crowd_variety`](super::crowd::crowd_variety)).
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
    /// shuffled order, never in blocks), playing that model's default clip (`Model::default_clip`),
    /// with a crowd's variety where asked.
    pub fn with_models(mut models: Vec<Model>, instance_count: usize, variety: bool) -> SceneSetup {
        let count = instance_count.max(1);
        let instance_models: Vec<u32> = (0..count).map(|index| crowd_model(index, models.len())).collect();
        let model = models.remove(0);
        let mut setup = SceneSetup {
            model,
            others: models,
            instances: Instances::new(Vec::new()),
            instance_models,
            light_direction: Vec3::Y,
            camera: OrbitCamera::framing(Aabb { min: Vec3::splat(-1.0), max: Vec3::ONE }),
            bounds: Aabb::EMPTY,
            morph_overrides: Vec::new(),
            variety,
            staging: Staging::default(),
            kept: KeptSummaries::default(),
            area: None,
        };
        setup.instances = grid_instances(&setup.staging, &setup.models(), &setup.instance_models, variety).into();
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
        self.kept.model_counts.get(self.instances.version(), || self.count_models())
    }

    fn count_models(&self) -> Vec<usize> {
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
    /// them), and to the walkers' area where they have one.
    pub fn fit_bounds(&mut self) {
        self.bounds = staging::world_bounds(&self.placed());
        self.area = self.fit_walk_area();
        if let Some(area) = self.area {
            let corner = |x: f32, z: f32| Vec3::new(x, self.bounds.min.y, z);
            let far = area.min + area.size;
            self.bounds = self.bounds.including(corner(area.min.x, area.min.y)).including(corner(far.x, far.y));
        }
    }

    /// Whether any instance's model has a clip with root motion (`Model::extract_root_motion`).
    pub fn root_motion(&self) -> bool {
        self.models().iter().any(|model| model.clips.iter().any(|clip| clip.motion.is_some()))
    }

    /// Where a crowd's walkers wrap (see [`WalkArea`]): where the crowd stood when its bounds
    /// were fitted, widened to at least [`WALK_AREA_FIGURES`] figures' heights a side. None for a
    /// single instance (the camera follows it instead) or where no clip has root motion.
    pub fn walk_area(&self) -> Option<WalkArea> {
        self.area
    }

    fn fit_walk_area(&self) -> Option<WalkArea> {
        if self.instances.len() < 2 || !self.root_motion() {
            return None;
        }
        let placed = self.bounds;
        let figure = self.model.bind_bounds().size().y.max(self.model.extent() * 0.5).max(1e-3);
        let (low, high) = (glam::Vec2::new(placed.min.x, placed.min.z), glam::Vec2::new(placed.max.x, placed.max.z));
        let size = (high - low).max(glam::Vec2::splat(WALK_AREA_FIGURES * figure));
        Some(WalkArea { min: (low + high - size) * 0.5, size })
    }

    /// Instance `index` moved to where its root motion has carried it by `now` (wrapped into the
    /// walkers' area), held there from `now`: what a clip switch starts from.
    fn settle(&mut self, index: usize, now: f64) {
        let area = self.walk_area();
        let clips = &self.model_of(index).clips;
        let (position, yaw) = self.instances[index].placement(clips, now);
        let position = area.map_or(position, |area| area.wrap(position));
        if (position, yaw) != (self.instances[index].position, self.instances[index].yaw) || self.instances[index].fade.is_some()
        {
            let instance = &mut self.instances[index];
            (instance.position, instance.yaw, instance.anchor, instance.fade) = (position, yaw, now, None);
        }
    }

    /// Each instance with its model's index and its model.
    pub fn placed(&self) -> Vec<Placed<'_>> {
        let models = self.models();
        self.instances
            .iter()
            .enumerate()
            .map(|(index, instance)| {
                let model = self.instance_models.get(index).copied().unwrap_or(0) as usize;
                let model = if model < models.len() { model } else { 0 };
                (model, models[model], instance)
            })
            .collect()
    }

    /// The camera, the light and the shadow map's bounds around the instances.
    fn frame_all(&mut self) {
        let camera = staging::framing_camera(&self.staging, &self.models(), &self.placed());
        // The character's front, which the camera was turned to.
        let facing = glam::Quat::from_rotation_y(camera.yaw - crate::render::camera::FRAMING_YAW);
        self.fit_bounds();
        self.camera = camera;
        // From the camera's left and a little in front of the character, turned with the
        // camera to the character's front: the shadow falls behind and beside the feet, on
        // the ground the camera sees, not towards the camera and out of the frame's bottom.
        self.light_direction = facing * Vec3::new(-0.6, 0.9, 0.8).normalize();
    }

    /// Every instance switches to `clip`, crossfading over `fade_seconds` from `now`. The camera
    /// stays where it is (`frame_played` moves it).
    /// (Of several models, the instances whose model has that clip.)
    /// Each starts from where its root motion has carried it by `now`.
    pub fn play(&mut self, clip: usize, now: f64, fade_seconds: f32) {
        for index in 0..self.instances.len() {
            if clip < self.model_of(index).clips.len() && self.instances[index].clip != Some(clip) {
                self.settle(index, now);
                self.instances[index].switch_clip(clip, now, fade_seconds);
            }
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

    /// What the instances play at `seconds` on the shared clock, for a person to read. One
    /// instance: `clip [1] "mixamo.com" at 1.20 of 2.43 s`, or that it holds the rest pose. A
    /// crowd, whose instances are each at their own time: the clips it plays, per model where it
    /// has several (`playing Soldier: [3] "Walk"; Fox: [1] "Walk", [2] "Run"`).
    pub fn playing(&self, seconds: f64) -> String {
        if self.instances.len() > 1 {
            return self.kept.crowd_playing.get(self.instances.version(), || self.crowd_playing());
        }
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

    /// [`SceneSetup::playing`] for a crowd: each model's clips, in the order its instances play them.
    fn crowd_playing(&self) -> String {
        let models = self.models();
        let mut played: Vec<Vec<Option<usize>>> = vec![Vec::new(); models.len()];
        for (model, _, instance) in self.placed() {
            if !played[model].contains(&instance.clip) {
                played[model].push(instance.clip);
            }
        }
        let each: Vec<String> = models
            .iter()
            .zip(&played)
            .filter(|(_, clips)| !clips.is_empty())
            .map(|(model, clips)| {
                let names: Vec<String> = clips
                    .iter()
                    .map(|clip| match clip.and_then(|index| Some((index, model.clips.get(index)?))) {
                        Some((index, clip)) => format!("[{index}] {}", crate::formats::files::quoted(&clip.name)),
                        None => "the rest pose".to_string(),
                    })
                    .collect();
                if models.len() > 1 {
                    format!("{}: {}", model.name, names.join(", "))
                } else {
                    names.join(", ")
                }
            })
            .collect();
        format!("playing {}", each.join("; "))
    }

    /// A camera that frames the instances over the clips they play.
    pub fn frame_played(&mut self) {
        self.camera = staging::framing_camera(&self.staging, &self.models(), &self.placed());
    }

    /// The ground: a square where the feet are (the lowest point of the clips the instances play,
    /// [`staging::ground_height`]), under the scene's middle, a few model sizes wide.
    pub fn ground(&self) -> Vec4 {
        self.ground_at(Vec3::ZERO)
    }

    /// [`SceneSetup::ground`] moved by `offset` on the ground (a followed walker's).
    fn ground_at(&self, offset: Vec3) -> Vec4 {
        let center = self.bounds.center() + Vec3::new(offset.x, 0.0, offset.z);
        let height = self
            .kept
            .ground_height
            .get(self.instances.version(), || staging::ground_height(&self.staging, &self.models(), &self.placed()));
        Vec3::new(center.x, height, center.z).extend(self.bounds.extent().max(1e-3) * 3.0)
    }

    /// The camera at `seconds` on the shared clock: [`SceneSetup::camera`], moved along with a
    /// single instance whose clip walks it away ([`staging::follow_offset`]).
    pub fn camera_at(&self, seconds: f64) -> OrbitCamera {
        if self.instances.len() != 1 {
            return self.camera; // a crowd is not followed
        }
        let offset = staging::follow_offset(&self.staging, &self.models(), &self.placed(), seconds);
        OrbitCamera { target: self.camera.target + offset, ..self.camera }
    }

    /// Everything the renderer needs for the frame at `seconds` on the shared clock: nothing per
    /// instance is built (the instances' states are shared; the GPU works out where each is).
    /// A single walker carried by root motion takes the ground and the shadow's bounds along.
    pub fn frame(&self, seconds: f64, aspect: f32) -> FrameScene {
        let walked = match self.instances.len() == 1 && self.root_motion() {
            true => staging::follow_offset(&self.staging, &self.models(), &self.placed(), seconds),
            false => Vec3::ZERO,
        };
        let ground = self.ground_at(walked);
        let bounds = Aabb { min: self.bounds.min + walked, max: self.bounds.max + walked };
        let camera = self.camera_at(seconds);
        let receiver = Aabb {
            min: ground.truncate() - Vec3::new(ground.w, 0.0, ground.w),
            max: ground.truncate() + Vec3::new(ground.w, 0.0, ground.w),
        };
        FrameScene {
            seconds,
            instances: self.instances.share(),
            view_projection: camera.view_projection(aspect),
            camera_position: camera.position(),
            light_view_projection: shadow::light_view_projection(self.light_direction, bounds, receiver),
            light_direction: self.light_direction,
            ground,
            morph_overrides: self.morph_overrides.clone(),
            walk_area: self.walk_area(),
        }
    }

    /// The CPU reference of what the instances pass makes of every instance at `seconds` (without
    /// the motion flags): what tests hold the GPU to, and what a CPU-side reference skins from.
    pub fn instance_data(&self, seconds: f64) -> Vec<InstanceData> {
        let area = self.walk_area();
        self.placed().into_iter().map(|(_, model, instance)| InstanceData::at(instance, &model.clips, seconds, area)).collect()
    }

    /// The share of a 16:9 frame the played clip's morphed and skinned vertices span (the larger of
    /// width and height), thirty times a second of the clip (24 times at least), each seen by the
    /// setup's camera at that time (which follows a single walker along): every vertex of the first
    /// instance, on the CPU, whatever the framing sampled.
    pub fn played_fill(&self) -> f32 {
        let model = &self.model;
        let offsets = crate::model::VertexOffsets::of(model);
        let mut weights = model.default_weights();
        let instance = &self.instances[0];
        let mut palette = vec![Mat4::IDENTITY; model.skeleton.len()];
        let (mut low, mut high) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        let clip = instance.clip.and_then(|clip| model.clips.get(clip));
        // Thirty times a second of the clip, and at least 24.
        let samples = clip.map_or(1, |clip| ((clip.duration * 30.0) as usize).max(24));
        for sample in 0..samples {
            // A time on the shared clock, and the clip's time the instance plays then.
            let seconds = f64::from(clip.map_or(0.0, |clip| clip.duration) * sample as f32 / samples as f32 / instance.speed);
            if let Some(clip) = clip {
                let time = clip.animation_time(seconds * f64::from(instance.speed) + f64::from(instance.phase));
                model.palette_at(clip.animation, time, &mut palette);
                weights = model.morph_weights(clip.animation, time);
            }
            let view_projection = self.camera_at(seconds).view_projection(16.0 / 9.0) * instance.world();
            let palette = clip.is_some().then_some(palette.as_slice());
            if model.vertices.is_empty() {
                // A skeleton alone is drawn as its bones.
                let time =
                    clip.map_or(0.0, |clip| clip.animation_time(seconds * f64::from(instance.speed) + f64::from(instance.phase)));
                for joint in model.joint_matrices(clip.map_or(usize::MAX, |clip| clip.animation), time) {
                    let projected = view_projection.project_point3(joint.w_axis.truncate());
                    (low, high) = (low.min(projected), high.max(projected));
                }
            }
            for (index, vertex) in model.vertices.iter().enumerate() {
                let morphed =
                    crate::model::Vertex { position: offsets.moved(index as u32, vertex.position, &weights), ..*vertex };
                let projected = view_projection.project_point3(model.skinned_position(&morphed, palette));
                (low, high) = (low.min(projected), high.max(projected));
            }
        }
        ((high.x - low.x) * 0.5).max((high.y - low.y) * 0.5)
    }
}
