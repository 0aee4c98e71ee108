//! The renderer: frame slots, the passes, and the frame's recipe (`frame.rs`).
//!
//! ```text
//!  instances ──▶ cull ──▶ palette ──▶ skin ──▶ triangles ──▶ raster ──▶ shadow ──▶ forward ──▶ motion ──▶ overlay ──▶ resolve
//!  instances.rs  cull.rs  palette.rs  skin.rs  triangles.rs raster.rs  shadow.rs  forward.rs  motion.rs  overlay.rs  frame.rs (present | copy-out)
//!  changed       kept     joint       skinned  culled       small      shadow     4× MSAA,    motion     the viewer's offscreen.rs
//!  records in;   lists    palettes    vertices indices,     triangles  .depth     resolved;   blur or    panel (egui)
//!  each          per      (and last   per      draws        in compute (+ merge)  velocity,   the motion
//!  instance's    level,   frame's)    level    (camera,     (when on)             debug.rs    view (when
//!  data now      draws                         light)                             views;      on)
//!                                                                                 + resolve
//! ```
//! Each pass owns what it writes and declares the hazards before and after it; `frame.rs`
//! records them in order and `recorder.rs` issues one barrier per boundary. Data the CPU writes
//! (uniforms, the instance records that changed) is ring-buffered per frame in flight and written
//! only after that slot's fence.
//! Data the GPU produces exists once and is guarded by those barriers, including the
//! write-after-read from last frame's draws to this frame's writes.

pub mod camera;
pub mod chunks;
mod create;
pub mod draw;
pub mod frame;
mod frame_inputs;
mod frame_setup;
pub mod history;
pub mod instances;
pub mod model_buffers;
pub mod offscreen;
pub mod output;
mod pass;
pub mod passes;
mod progress;
pub mod readback;
pub mod recorder;
pub mod reference;
pub mod settings;
pub mod shader_types;
pub mod slots;
pub mod stats;

/// SPIR-V compiled from shaders/ by build.rs.
pub mod shaders {
    include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
}

use std::sync::Arc;

use ash::vk;
use glam::{Mat4, Vec3, Vec4};

use crate::gpu::commands::{self, CommandPool};
use crate::gpu::device::Needs;
use crate::gpu::{self, Check, Device};
use crate::model::{Facing, Model};
pub use chunks::{largest_heap, padded_chunks, Chunking, MemoryPlan, PlanLimits};
use draw::SkinInputSet;
use model_buffers::GpuModel;
pub use output::Output;
pub use pass::Pass;
use passes::debug::DebugViews;
use passes::forward::ForwardTargets;
use passes::overlay::{OverlayFrame, OverlayPass};
pub use passes::Passes;
pub use settings::{Raster, RenderSettings, Shadows, SkinTuning};
use shader_types::CullCounters;
pub use shader_types::MAX_CHUNKS;
use slots::FrameSlot;
pub use stats::{CullReadback, FrameStats, PassTimings, RasterCounts, VisibleCounts};

/// Frames the CPU may record ahead of the GPU.
pub const FRAMES_IN_FLIGHT: usize = 2;

/// What the passes need of a device: indirect draws with counts the cull pass writes
/// (multi-draw, first instance, draw count), the chunks' arrays of storage buffers indexed in
/// shaders, draw parameters, and room for the skin pass's bindings (the triangle pass, which binds
/// one more, checks its own room: `triangles::serves`).
pub fn device_needs() -> Needs {
    Needs {
        multi_draw_indirect: true,
        draw_indirect_first_instance: true,
        draw_indirect_count: true,
        storage_buffer_array_dynamic_indexing: true,
        shader_draw_parameters: true,
        storage_buffers_per_stage: shader_types::STORAGE_BUFFERS_PER_STAGE,
    }
}

/// How vertices get skinned: the design, and the tutorials' two ways, kept side by side for the
/// benchmark. All three draw the same image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Palette and skin passes once per frame; shadow and forward read the skinned buffer.
    Compute,
    /// No skin pass: the shadow and the forward vertex shaders each skin from the palettes.
    Vertex,
    /// The CPU samples and skins every instance each frame (all cores) into a host-visible buffer
    /// per frame in flight; shadow and forward read it.
    Cpu,
}

impl Strategy {
    pub const ALL: [Strategy; 3] = [Strategy::Compute, Strategy::Vertex, Strategy::Cpu];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Compute => "compute",
            Strategy::Vertex => "vertex",
            Strategy::Cpu => "cpu",
        }
    }

    pub fn parse(text: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|strategy| strategy.name().eq_ignore_ascii_case(text.trim()))
    }
}

/// What one frame shows: the clock, camera, light and every instance's state.
#[derive(Clone, Debug)]
pub struct FrameScene {
    /// The shared clock, seconds: where each instance is in its clips and crossfades (the
    /// instances pass works it out on the GPU).
    pub seconds: f64,
    /// Every instance's state, shared with the scene that edits it: the renderer writes the
    /// records of those changed since its last frame.
    pub instances: instances::InstanceSnapshot,
    pub view_projection: Mat4,
    pub camera_position: Vec3,
    pub light_view_projection: Mat4,
    /// Unit vector towards the light.
    pub light_direction: Vec3,
    /// Centre of the ground plane (xyz) and its half size (w).
    pub ground: Vec4,
    /// Per morph target, a weight set by hand over every instance's clips, or None (missing: None).
    pub morph_overrides: Vec<Option<f32>>,
    /// Where root motion's walkers wrap (a crowd's ground), or None: they walk on.
    pub walk_area: Option<shader_types::WalkArea>,
}

impl FrameScene {
    /// The CPU reference of what the instances pass makes of each instance at the frame's clock
    /// (without the motion flags), every instance one of `model`'s (a crowd of several models:
    /// `SceneSetup::instance_data`).
    pub fn instance_data(&self, model: &Model) -> Vec<shader_types::InstanceData> {
        let states = self.instances.states();
        states.iter().map(|state| shader_types::InstanceData::at(state, &model.clips, self.seconds, self.walk_area)).collect()
    }
}

/// The descriptor sets the passes bind, the pool they come from and the samplers they reference;
/// the frames' command pool.
struct Bindings {
    /// The skin-inputs set: source vertices, influences, palettes and motions, for the `vertex`
    /// strategy's vertex shaders and the forward vertex shader's previous positions (`compute`).
    skin_inputs: Option<SkinInputSet>,
    /// Owns the frames' command buffers: held, never read again, freed with the renderer.
    _command_pool: CommandPool,
}

/// What a renderer was built for.
pub struct Setup {
    pub strategy: Strategy,
    pub instance_count: u32,
    pub chunking: Chunking,
    /// What this renderer's instances cost and the most that would fit.
    pub memory: MemoryPlan,
    pub color_format: vk::Format,
    /// The side of the model's triangles the shadow and forward passes cull (`hidden_side`).
    pub cull_mode: vk::CullModeFlags,
    /// Each mesh's material index, all models' meshes in order.
    pub mesh_draws: Vec<usize>,
    /// The draw runs (`DrawRun`): each chunk's instances of each model.
    pub runs: Vec<chunks::DrawRun>,
    /// Each chunk's instances' vertices in all.
    pub chunk_vertices: Vec<u64>,
    /// Each instance's model (as its slot says).
    pub instance_models: Vec<u32>,
    /// Bounds of the rest pose (the bind pose at the default morph weights; every model's), which
    /// size the normals debug view (the cull pass has them from the model's record).
    pub bind_bounds: crate::anim::Aabb,
    /// The model has joints but no vertices: the skeleton view is always on.
    pub skeleton_only: bool,
    /// The shadow pass draws the triangle pass's light run (where the memory plan kept room for it);
    /// tests and the bench turn it off to compare.
    pub light_culling: bool,
    /// Rows a dispatch may have: the device's maxComputeWorkGroupCount[1]. The work tables'
    /// dispatches make their rows wide enough to stay within it (tests lower it to see rows split).
    pub dispatch_rows: u32,
    /// Animation LOD: a kept instance less than this many pixels across on screen (or seen only by
    /// the light) has its palette computed every 2nd frame (under a sixth of it every 4th, under a
    /// 24th every 8th); None: every palette every frame. None in `RenderSettings::default()`; the
    /// commands' default is on (`--animation-lod`).
    pub animation_lod: Option<f32>,
    /// Shadows from the map or traced (`--shadows ray`: `Passes::trace` builds the structures).
    pub shadows: Shadows,
}

/// Screen size below which `--animation-lod on` computes an instance's palette every 2nd frame
/// (every 4th under 8, every 8th under 2: `cull::ANIMATION_LOD_STEPS`): the box's diameter in pixels.
pub const ANIMATION_LOD_PIXELS: f32 = 48.0;

/// Frame slots plus passes: everything else is what they were built for and what they measured.
pub struct Renderer {
    // Field order is drop order. Descriptor sets die with the pool; the pool and every resource
    // hold an Arc<Device>, so the device (last) outlives them all. `Drop` waits for the GPU first.
    frames: Vec<FrameSlot>,
    pub passes: Passes,
    bindings: Bindings,
    pub model: GpuModel,
    /// The forward pass's attachments, for the current output size.
    targets: Option<ForwardTargets>,
    pub setup: Setup,
    /// Which debug views the next frames draw (`debug::DebugViews::check` says which can).
    pub debug: DebugViews,
    pub stats: FrameStats,
    /// The `cpu` strategy skins from the models on the CPU (none for the others).
    cpu_models: Vec<Model>,
    /// Motion blur from the velocity target (the motion pass); off unless asked for.
    pub motion_blur: bool,
    /// Which rasterizer draws the triangle pass's survivors (`--raster`); the hardware's alone
    /// where there is no raster pass (`Renderer::raster_runs`).
    pub raster: Raster,
    /// Write the velocity target even when the motion pass does not run (tests read it back; an
    /// application's own pass could use it).
    pub write_velocity: bool,
    /// The layout the frames recorded so far left the velocity target in; None: the last frame
    /// wrote none (`read_velocity`).
    velocity_layout: std::cell::Cell<Option<vk::ImageLayout>>,
    /// Last frame's camera, whether every instance restarts, the weights set by hand (and the `cpu`
    /// strategy's records and positions): what this frame's motion is measured from.
    history: history::FrameHistory,
    /// What this renderer wrote of the instances' records so far, and its clock's epoch.
    uploads: instances::InstanceUploads,
    /// This frame's records to write (kept: not allocated anew every frame).
    upload: instances::Upload,
    frame_index: usize,
    /// Until the first frame is done: what is said while the pipelines compile.
    compiling: Option<progress::Compiling>,
    pub device: Arc<Device>,
}

impl Renderer {
    /// Waits until the next slot's previous submission is done and returns the semaphore to
    /// acquire a swapchain image with.
    pub fn wait_for_slot(&mut self) -> gpu::Result<vk::Semaphore> {
        self.wait_slot(self.frame_index)?;
        Ok(self.frames[self.frame_index].image_available.raw)
    }

    /// Waits for slot `slot`'s submission; the first frame in slices, saying why it takes long
    /// ([`progress::Compiling`]).
    fn wait_slot(&mut self, slot: usize) -> gpu::Result<()> {
        match &mut self.compiling {
            None => self.frames[slot].fence.wait(),
            Some(compiling) => {
                self.frames[slot].fence.wait_in_slices(std::time::Duration::from_millis(250), || compiling.waiting())?;
                // The first frame ran in slot 0 (a slot never submitted is signalled already).
                if slot == 0 && self.stats.frames_rendered > 0 {
                    if let Some(compiling) = self.compiling.take() {
                        compiling.finish();
                    }
                }
                Ok(())
            }
        }
    }

    /// Writes the frame's data into the current slot, records the frame and submits it.
    pub fn render(&mut self, scene: &FrameScene, output: Output<'_>) -> gpu::Result<()> {
        self.render_with_overlay(scene, output, None)
    }

    /// [`render`](Self::render), with the viewer's panel drawn over the image (the overlay pass):
    /// the slot's buffers written (and the `cpu` strategy's skinning done), the frame recorded,
    /// then submitted (`frame_setup.rs` holds the steps).
    pub fn render_with_overlay(
        &mut self,
        scene: &FrameScene,
        output: Output<'_>,
        overlay: Option<(&mut OverlayPass, &OverlayFrame)>,
    ) -> gpu::Result<()> {
        let (_, _, extent) = output.target();
        self.ensure_targets(extent)?;
        if scene.instances.len() != self.setup.instance_count as usize {
            return Err(gpu::Error::Other(format!(
                "the scene has {} instances, the renderer was built for {}",
                scene.instances.len(),
                self.setup.instance_count
            )));
        }
        let index = self.frame_index;
        self.wait_slot(index)?;
        // (Reading the timings may wait: lavapipe's query results wait for the queue.)
        self.collect_timings(index)?;
        let started = std::time::Instant::now();
        // How the cull pass picks levels this frame, worked out once for every pass that needs it.
        let choice = self.level_choice(scene);
        // The structures' levels first: the shadow ray's offset (the frame's uniforms) clears them.
        if let Some(trace) = &mut self.passes.trace {
            trace.prepare(scene, &choice);
        }
        let submitted = self.write_and_submit(index, (scene, &choice), output, overlay, started);
        if submitted.is_err() {
            // The records this frame meant to write may not have reached the GPU: all again.
            self.uploads.forget();
        }
        submitted
    }

    /// The slot's data written, the frame recorded and submitted (`render_with_overlay`'s steps
    /// after the slot's fence); `started` is when the CPU's part of the frame began.
    fn write_and_submit(
        &mut self,
        index: usize,
        (scene, choice): (&FrameScene, &passes::cull::LevelChoice),
        output: Output<'_>,
        overlay: Option<(&mut OverlayPass, &OverlayFrame)>,
        started: std::time::Instant,
    ) -> gpu::Result<()> {
        let (_, _, extent) = output.target();
        self.write_slot(index, scene, choice, extent)?;

        let command_buffer = self.frames[index].command_buffer;
        unsafe { self.device.raw.reset_command_buffer(command_buffer, vk::CommandBufferResetFlags::empty()) }
            .check("vkResetCommandBuffer")?;
        commands::begin(&self.device, command_buffer)?;
        let overlay = match overlay {
            Some((pass, frame)) => {
                pass.prepare(frame, extent, output.takes_copies())?;
                Some((pass, frame))
            }
            None => None,
        };
        self.stats.barriers = self.record_frame(command_buffer, index, (scene, choice), &output, overlay);
        commands::end(&self.device, command_buffer)?;
        self.frames[index].timestamps.written = true;
        self.stats.record_ms = started.elapsed().as_secs_f64() * 1e3 - self.stats.cpu_skinning_ms;
        self.submit(index, &output)
    }

    /// Reads a finished slot's timestamps and cull counts into `stats.timings` and `stats.visible`.
    fn collect_timings(&mut self, slot: usize) -> gpu::Result<()> {
        if self.frames[slot].timestamps.written {
            let counts: Vec<CullCounters> = self.frames[slot].counts_readback.read()?;
            let hardware_samples = self.frames[slot].samples.as_ref().map(|samples| samples.read()).transpose()?;
            if let Some(counts) = counts.first() {
                self.stats.visible = Some(VisibleCounts {
                    skinned: counts.kept[1],
                    camera: counts.camera_draws.iter().sum(),
                    light: counts.light_draws.iter().sum(),
                    coarser: counts.pool_use[0],
                    not_drawn: counts.pool_use[1],
                    placed_vertices: counts.pool_use[2],
                    placed_indices: counts.pool_use[3],
                    raster: RasterCounts::of(
                        counts,
                        self.passes.raster.as_ref().map_or(0, |raster| raster.room),
                        hardware_samples,
                    ),
                });
            }
        }
        let pool = &self.frames[slot].timestamps;
        if let Some(ticks) = pool.read()? {
            let milliseconds = Pass::ALL
                .iter()
                .zip(ticks.windows(2))
                .map(|(pass, pair)| (pass.name(), pair[1].saturating_sub(pair[0]) as f64 * pool.period_ns / 1e6))
                .collect();
            self.stats.timings = Some(PassTimings { milliseconds });
        }
        Ok(())
    }

    /// Whether `pass` runs in this renderer's frames: the trace pass's builds only with ray-traced
    /// shadows, and then no shadow map; the triangle pass where it was made. The others always
    /// do (an overlay or a resolve that has nothing to do takes no time).
    pub fn runs(&self, pass: Pass) -> bool {
        match pass {
            Pass::Blas | Pass::Tlas => self.passes.trace.is_some(),
            Pass::Shadow => self.passes.trace.is_none(),
            Pass::Triangles => self.passes.triangles.is_some(),
            Pass::Raster => self.raster_runs(),
            _ => true,
        }
    }

    /// The raster pass runs this frame: this renderer has one, and `raster` asks for it.
    pub fn raster_runs(&self) -> bool {
        self.passes.raster.is_some() && self.raster != Raster::Hardware
    }

    /// Waits for every submitted frame (headless read-back, shutdown, resize), oldest first, and
    /// keeps the newest frame's timings.
    pub fn wait_all(&mut self) -> gpu::Result<()> {
        for offset in 0..FRAMES_IN_FLIGHT {
            let slot = (self.frame_index + offset) % FRAMES_IN_FLIGHT;
            self.wait_slot(slot)?;
            self.collect_timings(slot)?;
        }
        Ok(())
    }

    /// The next frame's motion starts anew, the camera's and every instance's: no pixel shows
    /// motion of its own, so nothing streaks across a cut (a camera cut, a jump of the clock, a
    /// switch between clips of one animation). A teleport of a single instance is
    /// `Instances::restart_motion`.
    pub fn cut_motion(&mut self) {
        self.history.cut();
    }

    /// Turns debug views on or off: an error (and no change) for a view this strategy cannot draw.
    /// A view this device cannot draw is left off, and the line returned says so.
    pub fn set_debug(&mut self, mut views: DebugViews) -> Result<Option<String>, String> {
        // A skeleton-only file (joints and keys, no vertices) shows its animated skeleton.
        views.skeleton |= self.setup.skeleton_only;
        views.check(self.setup.strategy, self.setup.shadows)?;
        let missing = self.passes.debug.without_missing(&mut views);
        self.debug = views;
        Ok(missing)
    }
}

/// The cull mode of the model's shadow and forward pipelines: the side of its triangles that is never
/// seen, or none. The pipelines' front face is counter-clockwise.
pub fn hidden_side(facing: Facing) -> vk::CullModeFlags {
    match facing {
        Facing::Outward => vk::CullModeFlags::BACK,
        Facing::Inward => vk::CullModeFlags::FRONT,
        Facing::TwoSided => vk::CullModeFlags::NONE,
    }
}

impl Drop for Renderer {
    fn drop(&mut self) {
        // Nothing is destroyed while a frame may still use it.
        let _ = self.device.wait_idle();
    }
}
