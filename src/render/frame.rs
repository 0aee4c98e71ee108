//! The frame's recipe (`Renderer::record_frame`): the passes in order, each with the hazards it
//! declares before and after it (`hazards_before`, `hazards_after` in its file), run on the
//! [`Recorder`](super::recorder::Recorder), which batches them into one barrier a boundary.

use ash::vk;
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use super::draw::{DrawList, VertexSource};
use super::lists::{list_dispatches, List};
use super::passes::cull::{CullPass, LevelChoice};
use super::passes::debug::DebugFrame;
use super::passes::forward::{ForwardFrame, ForwardTargets, PreviousPositions, ResolveTarget};
use super::passes::motion::{self, MotionPush};
use super::passes::overlay::{OverlayFrame, OverlayPass};
use super::passes::palette::PalettePass;
use super::passes::shadow;
use super::passes::skin::SkinPass;
use super::passes::triangles::{CulledOutput, RunView, TriangleCulling};
use super::recorder::{BarrierCall, Recorder};
use super::shader_types::CullCounters;
use super::slots::FrameSlot;
use super::{FrameScene, Output, Pass, Renderer, Strategy};
use crate::gpu::barrier::{self, side, Hazard};
use crate::gpu::{self, Buffer};

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
        let mut recorder = Recorder::new(&self.device, command_buffer, &frame.timestamps);

        // cull: which instances the camera and the light see; counts, skin list and draw lists.
        let cull = &self.passes.cull;
        recorder.wait(cull.reset_hazards());
        let reset = CullPass::counter_reset(&self.model, choice, self.passes.skin.tuning.workgroup_size);
        recorder.step("the counters' reset", |command_buffer| cull.record_reset(command_buffer, &reset));
        let hand_set = super::passes::cull::hand_set(scene);
        let flags = (hand_set, self.velocity_written());
        let push = CullPass::push(&self.model, &self.setup, choice, self.stats.frames_rendered, self.debug.skeleton, flags);
        let record = |command_buffer| cull.record(command_buffer, frame.cull_set, push);
        recorder.pass(Pass::Cull, cull.hazards_before(), record, cull.hazards_after());

        // palette: each kept instance's joint palette, sampled from the file's keys. Read by the
        // skin pass (`compute`) or by the shadow and forward vertex shaders (`vertex`).
        if strategy != Strategy::Cpu {
            let palette = &self.passes.palette;
            let readers = palette_readers(strategy);
            let push = PalettePass::push(&self.model, &self.setup, self.debug.skeleton);
            let arguments = (&cull.counters, std::mem::offset_of!(CullCounters, palette_dispatch) as u64);
            let record = |command_buffer| palette.record(command_buffer, frame.palette_set, push, arguments);
            recorder.pass(Pass::Palette, palette.hazards_before(), record, palette.hazards_after(readers));
        }

        // skin: every kept instance's vertices, once, for the triangle, shadow and forward passes.
        if strategy == Strategy::Compute {
            let skin = &self.passes.skin;
            let dispatches = list_dispatches(List::Skin, self.model.levels.len(), 0, &self.setup);
            let pushes = SkinPass::pushes(&self.model, &self.setup, &dispatches);
            let offsets: Vec<u64> = dispatches.iter().map(|dispatch| dispatch.arguments).collect();
            let record = |command_buffer| skin.record(command_buffer, &pushes, (&cull.counters, &offsets));
            recorder.pass(Pass::Skin, skin.hazards_before(), record, skin.hazards_after());
        }

        // triangles: the skinned triangles the camera can see, compacted for the forward pass.
        if let Some(triangles) = &self.passes.triangles {
            recorder.wait(triangles.argument_hazards());
            let arguments = |command_buffer| triangles.record_arguments(&self.device, command_buffer);
            recorder.step("the triangle pass's draw template", arguments);
            let record = |command_buffer| self.record_triangles(command_buffer, triangles, (scene, choice));
            recorder.pass(Pass::Triangles, triangles.hazards_before(), record, triangles.hazards_after());
        }

        // shadow, then forward: both draw the skinned vertices (or skin in their vertex shaders).
        let chunk_vertices = self.chunk_vertices(frame);
        let vertices = self.vertex_source(&chunk_vertices);
        let previous_chunks = self.previous_chunks(frame);
        let previous = self.previous_positions(&previous_chunks);
        let shadow = &self.passes.shadow;
        let record = |command_buffer| self.record_shadow(command_buffer, vertices, (scene, choice));
        recorder.pass(Pass::Shadow, shadow.hazards_before(), record, shadow.hazards_after());
        let record = |command_buffer| self.record_forward(command_buffer, frame, (vertices, previous), output, scene);
        recorder.pass(Pass::Forward, self.forward_hazards(output), record, Vec::new());

        // motion: motion blur or the motion view, from the forward pass's colour and velocity.
        if self.motion_pass_runs() {
            let (_, view, extent) = output.target();
            let motion = &self.passes.motion;
            let mut before = motion.hazards_before(self.targets());
            before.push(output.resolve_hazard(MOTION_WRITES));
            let record = |command_buffer| motion.record(command_buffer, view, extent, self.motion_push());
            recorder.pass(Pass::Motion, before, record, Vec::new());
        }

        // overlay: the viewer's panel over the resolved image (drawn, or copied from its cache).
        let last = if self.motion_pass_runs() { MOTION_WRITES } else { RESOLVE_WRITES };
        let mut last_writes = (last, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
        if let Some((pass, ui)) = overlay {
            let (image, view, extent) = output.target();
            let before = pass.hazards_before(image, last);
            last_writes = pass.last_writes();
            let record = |command_buffer| pass.record(command_buffer, (image, view), extent, ui);
            recorder.pass(Pass::Overlay, before, record, Vec::new());
        }

        // resolve: present or copy the image out; the cull counts for the CPU.
        let record = |command_buffer| self.record_resolve(command_buffer, frame, output);
        recorder.pass(Pass::Resolve, output.after_resolve_hazards(last_writes), record, self.host_hazards(frame, output));
        recorder.finish()
    }
}

/// The forward pass's MSAA resolve, the earlier side of the hazards on the frame's image (or on the
/// scene colour the motion pass reads).
const RESOLVE_WRITES: barrier::Side = side("resolve writes", Stage::COLOR_ATTACHMENT_OUTPUT, Access::COLOR_ATTACHMENT_WRITE);
/// The motion pass's, when it makes the frame's image.
const MOTION_WRITES: barrier::Side = side("motion-pass writes", Stage::COLOR_ATTACHMENT_OUTPUT, Access::COLOR_ATTACHMENT_WRITE);

/// The cull pass's kinds of list in `cull.level_lists`: per level, the instances to skin at it and
/// the instances the camera sees at it; and the instances the light sees (at its level).
/// Who reads the palettes: the skin pass and the forward vertex shader (the previous block, for
/// the motion vectors), or the shadow and forward vertex shaders.
fn palette_readers(strategy: Strategy) -> barrier::Side {
    match strategy {
        Strategy::Vertex => side("shadow and forward vertex shaders", Stage::VERTEX_SHADER, Access::SHADER_STORAGE_READ),
        _ => side(
            "skin reads; the forward vertex shader's previous block",
            Stage::COMPUTE_SHADER | Stage::VERTEX_SHADER,
            Access::SHADER_STORAGE_READ,
        ),
    }
}

impl Output<'_> {
    /// The image the frame ends in, its view and its size.
    fn target(&self) -> (vk::Image, vk::ImageView, vk::Extent2D) {
        match self {
            Output::Offscreen(target) => (target.color.raw, target.color.view, target.color.extent()),
            Output::Swapchain { image, view, extent, .. } => (*image, *view, *extent),
        }
    }

    /// Before the forward pass resolves into the target: its previous use is done.
    fn resolve_hazard(&self, resolve: barrier::Side) -> Hazard {
        match self {
            Output::Offscreen(target) => target.resolve_hazard(resolve),
            Output::Swapchain { image, .. } => {
                // The submit waits for the acquire at colour output: the same stage orders this.
                let acquired =
                    side("the acquire (semaphore wait at colour output)", Stage::COLOR_ATTACHMENT_OUTPUT, Access::NONE);
                let layouts = (vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
                Hazard::raw_image("swapchain image", *image, gpu::swapchain::color_range(), acquired, resolve, layouts)
            }
        }
    }

    /// After the last write to the image (the resolve, or the overlay), in the layout it left:
    /// the copy-out, or presentation (the submit's semaphore orders it).
    fn after_resolve_hazards(&self, (last, layout): (barrier::Side, vk::ImageLayout)) -> Vec<Hazard> {
        match self {
            Output::Offscreen(target) => target.copy_hazards(last, layout),
            Output::Swapchain { image, .. } => {
                let present = side("presentation", Stage::NONE, Access::NONE);
                let layouts = (layout, vk::ImageLayout::PRESENT_SRC_KHR);
                vec![Hazard::raw_image("swapchain image", *image, gpu::swapchain::color_range(), last, present, layouts)]
            }
        }
    }

    fn record_copy_out(&self, command_buffer: vk::CommandBuffer) {
        if let Output::Offscreen(target) = self {
            target.record_copy_out(command_buffer);
        }
    }

    fn host_hazard(&self) -> Option<Hazard> {
        match self {
            Output::Offscreen(target) => Some(target.host_hazard()),
            Output::Swapchain { .. } => None,
        }
    }
}

impl Renderer {
    /// The forward pass's attachments; `render` creates them before it records.
    fn targets(&self) -> &ForwardTargets {
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

    fn record_resolve(&self, command_buffer: vk::CommandBuffer, frame: &FrameSlot, output: &Output<'_>) {
        self.device.begin_label(command_buffer, c"resolve");
        output.record_copy_out(command_buffer);
        self.passes.cull.record_counts_copy(command_buffer, &frame.counts_readback);
        self.device.end_label(command_buffer);
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
        let errors = self.model.levels.iter().map(|level| level.error).collect();
        let height = self.targets.as_ref().map_or(1, |targets| targets.color.extent().height);
        LevelChoice::new(errors, scene.view_projection, height, scene.light_view_projection, shadow::SHADOW_MAP_SIZE)
    }
}

/// The draws' inputs, gathered for the recipe.
impl Renderer {
    fn record_triangles(
        &self,
        command_buffer: vk::CommandBuffer,
        triangles: &TriangleCulling,
        (scene, choice): (&FrameScene, &LevelChoice),
    ) {
        let extent = self.targets().color.extent();
        let camera = RunView {
            view_projection: scene.view_projection,
            viewport: [extent.width as f32, extent.height as f32],
            sample_step: u32::from(triangles.sample_test) * 4,
        };
        // The shadow map: one sample a texel, at its centre.
        let light = RunView {
            view_projection: scene.light_view_projection,
            viewport: [shadow::SHADOW_MAP_SIZE as f32; 2],
            sample_step: 1,
        };
        let run = |list: List, output: &CulledOutput, view: RunView| {
            let dispatches = list_dispatches(list, self.model.levels.len(), choice.light_level as usize, &self.setup);
            let push = |dispatch| triangles.push(&self.model, &self.setup, &view, output, dispatch);
            dispatches.into_iter().map(|dispatch| (push(dispatch), dispatch.arguments)).collect()
        };
        let mut runs = vec![(triangles.camera.set, run(List::Camera, &triangles.camera, camera))];
        if let Some(output) = self.light_run(choice) {
            runs.push((output.set, run(List::Light, output, light)));
        }
        triangles.pass.record(command_buffer, &runs, &self.passes.cull.counters);
    }

    /// Each chunk's skinned vertices: its own buffer (`compute`), or its range of the slot's
    /// CPU-written one (`cpu`).
    fn chunk_vertices<'s>(&'s self, frame: &'s FrameSlot) -> Vec<(&'s Buffer, u64)> {
        match &frame.cpu_skinned {
            Some(cpu_skinned) => self.slot_chunks(cpu_skinned, self.model.skinned_bytes()),
            None => self.passes.skin.skinned.iter().map(|buffer| (buffer, 0)).collect(),
        }
    }

    /// Each chunk's range of a frame slot's buffer that holds `instance_bytes` for every instance,
    /// instance after instance (the `cpu` strategy's).
    fn slot_chunks<'s>(&self, buffer: &'s Buffer, instance_bytes: u64) -> Vec<(&'s Buffer, u64)> {
        let chunking = self.setup.chunking;
        let first = |chunk| u64::from(chunking.range(chunk, self.setup.instance_count).0);
        (0..chunking.chunk_count).map(|chunk| (buffer, first(chunk) * instance_bytes)).collect()
    }

    /// Each chunk's previous positions in the slot's `cpu_previous` (`cpu`; empty otherwise).
    fn previous_chunks<'s>(&'s self, frame: &'s FrameSlot) -> Vec<(&'s Buffer, u64)> {
        let positions = u64::from(self.model.vertex_count) * 12;
        frame.cpu_previous.as_ref().map_or_else(Vec::new, |previous| self.slot_chunks(previous, positions))
    }

    /// Where the forward pass finds last frame's positions (see [`PreviousPositions`]).
    fn previous_positions<'s>(&self, previous_chunks: &'s [(&'s Buffer, u64)]) -> PreviousPositions<'s> {
        match (self.setup.strategy, &self.bindings.skin_inputs) {
            (Strategy::Cpu, _) => PreviousPositions::Streamed(previous_chunks),
            (Strategy::Compute, Some(inputs)) => PreviousPositions::Skinned(inputs.set),
            _ => PreviousPositions::WithVertices,
        }
    }

    fn vertex_source<'s>(&self, chunk_vertices: &'s [(&'s Buffer, u64)]) -> VertexSource<'s> {
        match (self.setup.strategy, &self.bindings.skin_inputs) {
            (Strategy::Vertex, Some(inputs)) => VertexSource::SkinInVertexShader {
                skin_inputs: inputs.set,
                joint_count: self.model.joint_count,
                chunk_instances: self.setup.chunking.instances_per_chunk,
                palette_stride: self.model.palette_stride,
            },
            _ => VertexSource::Skinned(chunk_vertices),
        }
    }

    /// One draw list of the cull pass: the light's or the camera's, with its counts.
    fn draw_list<'s>(&'s self, commands: &'s Buffer, count_offset: usize) -> DrawList<'s> {
        DrawList {
            commands,
            counts: &self.passes.cull.counters,
            count_offset: count_offset as u64,
            capacity: self.setup.chunking.instances_per_chunk,
            mesh_count: self.setup.mesh_draws.len() as u32,
            chunk_count: self.setup.chunking.chunk_count,
        }
    }

    /// The triangle pass's light run this frame: where the plan made room for it, it is on, and
    /// the shadow map's level is the room's or coarser.
    fn light_run(&self, choice: &LevelChoice) -> Option<&CulledOutput> {
        let output = self.passes.triangles.as_ref()?.light.as_ref()?;
        let fits = choice.light_level >= output.layout_level;
        (self.setup.light_culling && fits).then_some(output)
    }

    fn record_shadow(
        &self,
        command_buffer: vk::CommandBuffer,
        vertices: VertexSource<'_>,
        (scene, choice): (&FrameScene, &LevelChoice),
    ) {
        let draws = self.draw_list(&self.passes.cull.light_draws, std::mem::offset_of!(CullCounters, light_draws));
        // The triangle pass's light run, where it ran: the triangles that can reach a texel.
        let culled = self.passes.triangles.as_ref().zip(self.light_run(choice)).map(|(triangles, output)| {
            output.draws(triangles, self.setup.mesh_draws.len() as u32, self.setup.chunking, self.setup.instance_count)
        });
        let light_view_projection = scene.light_view_projection;
        self.passes.shadow.record(command_buffer, vertices, &self.model.indices, (draws, culled.as_ref()), light_view_projection);
    }

    fn record_forward(
        &self,
        command_buffer: vk::CommandBuffer,
        frame: &FrameSlot,
        (vertices, previous): (VertexSource<'_>, PreviousPositions<'_>),
        output: &Output<'_>,
        scene: &FrameScene,
    ) {
        let targets = self.targets();
        let (_, view, extent) = output.target();
        let view = if self.motion_pass_runs() { targets.scene_color.view } else { view };
        let resolve = ResolveTarget { view, extent };
        let camera_draws = self.draw_list(&self.passes.cull.camera_draws, std::mem::offset_of!(CullCounters, camera_draws));
        let debug_frame = DebugFrame {
            views: self.debug,
            frame_set: frame.frame_set,
            vertices,
            indices: &self.model.indices,
            camera_draws,
            counters: &self.passes.cull.counters,
            skeleton_offset: std::mem::offset_of!(CullCounters, skeleton_draw) as u64,
            box_offset: std::mem::offset_of!(CullCounters, box_draw) as u64,
            view_projection: scene.view_projection,
            joint_count: self.model.joint_count,
            normal_length: self.setup.bind_bounds.size().length() * 0.02,
            extent: resolve.extent,
            velocity: self.velocity_written(),
        };
        let overlay = |command_buffer| self.passes.debug.record(command_buffer, &debug_frame);
        let culled = self.passes.triangles.as_ref().map(|triangles| {
            triangles.camera.draws(triangles, self.setup.mesh_draws.len() as u32, self.setup.chunking, self.setup.instance_count)
        });
        let forward_frame = ForwardFrame {
            targets,
            resolve: &resolve,
            frame_set: frame.frame_set,
            vertices,
            previous,
            indices: &self.model.indices,
            draws: camera_draws,
            velocity: self.velocity_written(),
            culled: culled.as_ref(),
            mesh_materials: &self.setup.mesh_draws,
        };
        self.passes.forward.record(command_buffer, &forward_frame, &overlay);
    }
}
