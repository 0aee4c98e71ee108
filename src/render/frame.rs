//! The frame's recipe (`Renderer::record_frame`): the passes in order, each with the hazards it
//! declares before and after it (`hazards_before`, `hazards_after` in its file), run on the
//! [`Recorder`](super::recorder::Recorder), which batches them into one barrier a boundary. Each
//! pass gathers its own arguments from the one [`FrameContext`]; `frame_inputs.rs` holds what
//! the draws share (vertex sources, draw lists, the triangle pass's runs).

use ash::vk;
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use super::draw::VertexSource;
use super::passes::cull::{CullPass, LevelChoice};
use super::passes::forward::{ForwardTargets, PreviousPositions};
use super::passes::motion::{self, MotionPush};
use super::passes::overlay::{OverlayFrame, OverlayPass};
use super::passes::shadow;
use super::passes::skin::SkinPass;
use super::passes::triangles::TRIANGLE_WRITES;
use super::recorder::{BarrierCall, Recorder};
use super::shader_types::{CullCounters, CullRun, Table};
use super::slots::FrameSlot;
use super::{FrameScene, Output, Pass, Renderer, Strategy};
use crate::gpu::barrier::{self, side, Hazard};

/// What every pass of one frame records from: the renderer, the frame slot, the scene and its
/// levels, the output, and where the draws find this frame's and last frame's vertices.
struct FrameContext<'f> {
    renderer: &'f Renderer,
    frame: &'f FrameSlot,
    scene: &'f FrameScene,
    choice: &'f LevelChoice,
    output: &'f Output<'f>,
    vertices: VertexSource<'f>,
    previous: PreviousPositions<'f>,
}

impl Renderer {
    /// The frame's recipe: the passes in order, each with the hazards it declares before and after
    /// it. What is due at one boundary goes out as one barrier.
    pub(super) fn record_frame(
        &self,
        command_buffer: vk::CommandBuffer,
        slot: usize,
        (scene, choice): (&FrameScene, &LevelChoice),
        output: &Output<'_>,
        overlay: Option<(&mut OverlayPass, &OverlayFrame)>,
    ) -> Vec<BarrierCall> {
        let (frame, strategy) = (&self.frames[slot], self.setup.strategy);
        let (chunk_vertices, previous_chunks) = (self.chunk_vertices(frame), self.previous_chunks(frame));
        let (vertices, previous) = (self.vertex_source(&chunk_vertices), self.previous_positions(&previous_chunks));
        let context = FrameContext { renderer: self, frame, scene, choice, output, vertices, previous };
        if let Some(samples) = &frame.samples {
            samples.reset(command_buffer);
        }
        let mut recorder = Recorder::new(&self.device, command_buffer, &frame.timestamps);

        // instances: the records that changed copied in; each instance's data at the frame's clock.
        context.instances(&mut recorder);
        // cull: which instances the camera and the light see; counts, skin list and draw lists.
        context.cull(&mut recorder);
        // palette: each kept instance's joint palette, sampled from the file's keys. Read by the
        // skin pass (`compute`) or by the shadow and forward vertex shaders (`vertex`).
        if strategy != Strategy::Cpu {
            context.palette(&mut recorder);
        }
        // skin: every kept instance's vertices, once, for the triangle, shadow and forward passes.
        if strategy == Strategy::Compute {
            context.skin(&mut recorder);
        }
        // triangles: the skinned triangles the camera can see, compacted for the forward pass; the
        // small ones handed to the raster pass.
        if self.passes.triangles.is_some() {
            context.triangles(&mut recorder);
        }
        // raster (`--raster compute|auto`): the small triangles rasterized in compute, for the
        // forward pass's resolve and the shadow pass's merge.
        if self.raster_runs() {
            context.raster(&mut recorder);
        }
        // blas, tlas (`--shadows ray`): acceleration structures from the skinned vertices; they
        // replace the shadow map.
        if self.passes.trace.is_some() {
            context.trace(&mut recorder);
        } else {
            // shadow: the skinned vertices (or skinning in its vertex shader) into the shadow map.
            context.shadow(&mut recorder);
        }
        // forward: the skinned vertices again (or skinning in its vertex shader).
        context.forward(&mut recorder);
        // motion: motion blur or the motion view, from the forward pass's colour and velocity.
        if self.motion_pass_runs() {
            context.motion(&mut recorder);
        }
        // overlay: the viewer's panel over the resolved image (drawn, or copied from its cache).
        let last_writes = context.overlay(&mut recorder, overlay);
        // resolve: present or copy the image out; the cull counts for the CPU.
        context.resolve(&mut recorder, last_writes);
        recorder.finish()
    }
}

impl FrameContext<'_> {
    /// The upload of the records that changed (none in a steady scene: the copy is skipped, its
    /// barrier stays), then the pass.
    fn instances(&self, recorder: &mut Recorder) {
        let (renderer, instances) = (self.renderer, &self.renderer.passes.instances);
        let frame = self.frame;
        let (count, (clock, flags, area)) = (renderer.setup.instance_count, frame.instances_push);
        let runs = vec![("the upload", Vec::new()), ("the instances pass", instances.hazards_before())];
        let record = |command_buffer, run: usize| match run {
            0 => instances.record_upload(command_buffer, &frame.upload, &frame.upload_regions),
            _ => instances.record(command_buffer, count, (clock, flags, area)),
        };
        recorder.pass_in_runs(Pass::Instances, instances.upload_hazards(), runs, record, instances.hazards_after());
    }

    fn cull(&self, recorder: &mut Recorder) {
        let (renderer, cull) = (self.renderer, &self.renderer.passes.cull);
        recorder.wait(cull.reset_hazards());
        let reset = cull.counter_reset(renderer.passes.palette.joint_stride, renderer.setup.dispatch_rows);
        recorder.step("the counters' reset", |command_buffer| cull.record_reset(command_buffer, &reset));
        let flags = (super::passes::cull::hand_set(self.scene), renderer.velocity_written());
        let (setup, frames) = (&renderer.setup, renderer.stats.frames_rendered);
        let tables = renderer.tables_read();
        let push = CullPass::push(setup, self.choice, (frames, renderer.debug.skeleton), flags, &tables);
        let mut before = cull.hazards_before();
        before.extend(renderer.passes.trace.as_ref().map(|trace| trace.records_hazard()));
        before.extend(renderer.passes.triangles.iter().flat_map(|triangles| triangles.cull_hazards()));
        let (runs, waits): (Vec<CullRun>, Vec<(&'static str, Vec<Hazard>)>) =
            cull.runs().into_iter().map(|(run, name, hazards)| (run, (name, hazards))).unzip();
        let record = |command_buffer, index: usize| cull.record_run(command_buffer, self.frame.cull_set, push, runs[index]);
        recorder.pass_in_runs(Pass::Cull, before, waits, record, cull.hazards_after());
    }

    fn palette(&self, recorder: &mut Recorder) {
        let (renderer, palette) = (self.renderer, &self.renderer.passes.palette);
        let readers = palette_readers(renderer.setup.strategy);
        let push = renderer.passes.palette.push(&renderer.setup, renderer.debug.skeleton);
        let arguments = (&renderer.passes.cull.counters, std::mem::offset_of!(CullCounters, palette_dispatch) as u64);
        let record = |command_buffer| palette.record(command_buffer, self.frame.palette_set, push, arguments);
        recorder.pass(Pass::Palette, palette.hazards_before(), record, palette.hazards_after(readers));
    }

    fn skin(&self, recorder: &mut Recorder) {
        let (renderer, skin) = (self.renderer, &self.renderer.passes.skin);
        let push = SkinPass::push(&renderer.setup);
        let arguments = (&renderer.passes.cull.counters, Table::Skin.arguments());
        let record = |command_buffer| skin.record(command_buffer, &push, arguments);
        recorder.pass(Pass::Skin, skin.hazards_before(renderer.passes.trace.is_some()), record, skin.hazards_after());
    }

    /// The bottom levels from this frame's skinned vertices (refit or rebuilt, one call), then the
    /// top level over them.
    fn trace(&self, recorder: &mut Recorder) {
        let renderer = self.renderer;
        let Some(trace) = &renderer.passes.trace else { return };
        let skinned = (renderer.setup.strategy == Strategy::Compute).then_some(&renderer.passes.skin.skinned[..]);
        let chunks = renderer.chunk_vertices(self.frame);
        let indices = &renderer.model.indices;
        let blas = |command_buffer| trace.record_blas(command_buffer, &chunks, indices);
        recorder.pass(Pass::Blas, trace.blas_hazards_before(skinned), blas, Vec::new());
        let tlas = |command_buffer| trace.record_tlas(command_buffer);
        recorder.pass(Pass::Tlas, trace.tlas_hazards_before(), tlas, trace.hazards_after());
    }

    fn triangles(&self, recorder: &mut Recorder) {
        let renderer = self.renderer;
        let Some(triangles) = &renderer.passes.triangles else { return };
        let counters = &renderer.passes.cull.counters;
        let (mut before, mut after) = (triangles.hazards_before(counters), triangles.hazards_after(counters));
        if let Some(raster) = renderer.passes.raster.as_ref().filter(|_| renderer.raster_runs()) {
            before.extend(raster.list_hazards_before(TRIANGLE_WRITES));
            after.extend(raster.list_hazards_after(TRIANGLE_WRITES, counters));
        }
        let record = |command_buffer| renderer.record_triangles(command_buffer, triangles, self.scene);
        recorder.pass(Pass::Triangles, before, record, after);
    }

    /// The targets cleared, then the camera's and the light's small triangles rasterized.
    fn raster(&self, recorder: &mut Recorder) {
        let renderer = self.renderer;
        let Some(raster) = &renderer.passes.raster else { return };
        let counters = &renderer.passes.cull.counters;
        let views = renderer.raster_views(self.scene);
        let runs = vec![("the clear", Vec::new()), ("the raster", raster.hazards_before())];
        let record = |command_buffer, run: usize| match run {
            0 => raster.record_clear(command_buffer),
            _ => raster.record(command_buffer, &views, counters),
        };
        recorder.pass_in_runs(Pass::Raster, raster.clear_hazards(), runs, record, raster.hazards_after(counters));
    }

    fn shadow(&self, recorder: &mut Recorder) {
        let (renderer, shadow) = (self.renderer, &self.renderer.passes.shadow);
        let record = |command_buffer| renderer.record_shadow(command_buffer, self.vertices, self.scene);
        recorder.pass(Pass::Shadow, shadow.hazards_before(), record, shadow.hazards_after());
    }

    fn forward(&self, recorder: &mut Recorder) {
        let renderer = self.renderer;
        let sources = (self.vertices, self.previous);
        let record = |command_buffer| renderer.record_forward(command_buffer, self.frame, sources, self.output, self.scene);
        recorder.pass(Pass::Forward, renderer.forward_hazards(self.output), record, Vec::new());
    }

    fn motion(&self, recorder: &mut Recorder) {
        let renderer = self.renderer;
        let (_, view, extent) = self.output.target();
        let motion = &renderer.passes.motion;
        let mut before = motion.hazards_before(renderer.targets());
        before.push(self.output.resolve_hazard(MOTION_WRITES));
        let record = |command_buffer| motion.record(command_buffer, view, extent, renderer.motion_push());
        recorder.pass(Pass::Motion, before, record, Vec::new());
    }

    /// The panel, where the viewer draws one; returns the last writes to the frame's image and the
    /// layout they leave it in.
    fn overlay(
        &self,
        recorder: &mut Recorder,
        overlay: Option<(&mut OverlayPass, &OverlayFrame)>,
    ) -> (barrier::Side, vk::ImageLayout) {
        let last = if self.renderer.motion_pass_runs() { MOTION_WRITES } else { RESOLVE_WRITES };
        let Some((pass, ui)) = overlay else { return (last, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL) };
        let (image, view, extent) = self.output.target();
        let before = pass.hazards_before(image, last);
        let last_writes = pass.last_writes();
        let record = |command_buffer| pass.record(command_buffer, (image, view), extent, ui);
        recorder.pass(Pass::Overlay, before, record, Vec::new());
        last_writes
    }

    fn resolve(&self, recorder: &mut Recorder, last_writes: (barrier::Side, vk::ImageLayout)) {
        let (renderer, frame, output) = (self.renderer, self.frame, self.output);
        let record = |command_buffer| {
            renderer.device.begin_label(command_buffer, c"resolve");
            output.record_copy_out(command_buffer);
            renderer.passes.cull.record_counts_copy(command_buffer, &frame.counts_readback);
            renderer.device.end_label(command_buffer);
        };
        let after = renderer.host_hazards(frame, output);
        recorder.pass(Pass::Resolve, output.after_resolve_hazards(last_writes), record, after);
    }
}

/// The forward pass's MSAA resolve, the earlier side of the hazards on the frame's image (or on the
/// scene colour the motion pass reads).
const RESOLVE_WRITES: barrier::Side = side("resolve writes", Stage::COLOR_ATTACHMENT_OUTPUT, Access::COLOR_ATTACHMENT_WRITE);
/// The motion pass's, when it makes the frame's image.
const MOTION_WRITES: barrier::Side = side("motion-pass writes", Stage::COLOR_ATTACHMENT_OUTPUT, Access::COLOR_ATTACHMENT_WRITE);

/// Who reads the palettes: the skin pass and the forward vertex shader (the previous block, for
/// the motion vectors), or the shadow and forward vertex shaders.
fn palette_readers(strategy: Strategy) -> barrier::Side {
    match strategy {
        Strategy::Vertex => side("shadow and forward vertex shaders", Stage::VERTEX_SHADER, Access::SHADER_STORAGE_READ),
        _ => side(
            "skin reads; the forward vertex shader's and the raster resolve's previous block",
            Stage::COMPUTE_SHADER | Stage::VERTEX_SHADER | Stage::FRAGMENT_SHADER,
            Access::SHADER_STORAGE_READ,
        ),
    }
}

impl Renderer {
    /// The forward pass's attachments; `render` creates them before it records.
    pub(super) fn targets(&self) -> &ForwardTargets {
        self.targets.as_ref().expect("render() creates the targets before recording")
    }

    /// Before the forward pass: its attachments, and the image it resolves into (the frame's, or
    /// the scene colour the motion pass reads).
    fn forward_hazards(&self, output: &Output<'_>) -> Vec<Hazard> {
        let targets = self.targets();
        let mut hazards = targets.hazards_before(self.velocity_written());
        hazards.push(match self.motion_pass_runs() {
            true => targets.scene_color_hazard(RESOLVE_WRITES),
            false => output.resolve_hazard(RESOLVE_WRITES),
        });
        hazards
    }

    /// The motion pass runs this frame: motion blur, or the motion view, is on.
    pub(super) fn motion_pass_runs(&self) -> bool {
        self.motion_blur || self.debug.motion
    }

    /// The forward pass writes the velocity target this frame: the motion pass reads it, or the
    /// application asked for it (`write_velocity`). Else no instance moves on the GPU (no previous
    /// palette kept, no second skinning) and the pass draws without the target.
    pub fn velocity_written(&self) -> bool {
        self.motion_pass_runs() || self.write_velocity
    }

    fn motion_push(&self) -> MotionPush {
        MotionPush {
            shutter: motion::SHUTTER,
            max_pixels: motion::MAX_STREAK_PIXELS,
            show: u32::from(self.debug.motion),
            full_pixels: motion::FULL_VIEW_PIXELS,
        }
    }

    /// At the end: what the CPU reads after the fence (the counts, a headless frame's pixels).
    fn host_hazards(&self, frame: &FrameSlot, output: &Output<'_>) -> Vec<Hazard> {
        let readback = &frame.counts_readback;
        let mut hazards =
            vec![Hazard::buffer("cull.counters_readback[slot]", readback, barrier::COPY_WRITES, barrier::HOST_READS)];
        hazards.extend(output.host_hazard());
        hazards
    }

    /// How the cull pass picks levels this frame: from the camera's projection at the frame's
    /// height, and the shadow map's texel size.
    pub fn level_choice(&self, scene: &FrameScene) -> LevelChoice {
        let errors = self.model.single().levels.iter().map(|level| level.error).collect();
        let height = self.targets.as_ref().map_or(1, |targets| targets.color.extent().height);
        let light = (scene.light_view_projection, shadow::SHADOW_MAP_SIZE);
        LevelChoice::new(errors, scene.view_projection, height, light)
    }
}
