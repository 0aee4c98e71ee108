//! The frame's recipe (`Renderer::record_frame`) and the recorder it runs on.
//!
//! Each pass declares the hazards before it and after it (`hazards_before`, `hazards_after` in
//! its file): the resource, the earlier and the later work, in words and as stages and accesses.
//! The [`Recorder`] gathers them and issues everything due at one boundary as **one**
//! `vkCmdPipelineBarrier2`, then records the pass and its closing timestamp by name. What it
//! issued is kept ([`BarrierCall`]); `barrier_table` makes the README's table from it, and a test
//! holds the README to it.

use ash::vk;
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use super::draw::{DrawList, VertexSource};
use super::passes::cull::LevelChoice;
use super::passes::debug::DebugFrame;
use super::passes::forward::{ForwardTargets, MeshDraw, ResolveTarget};
use super::passes::overlay::{OverlayFrame, OverlayPass};
use super::passes::triangles::{CulledOutput, TriangleCulling};
use super::passes::{shadow, triangles};
use super::shader_types::{CullCounters, CullPush, PalettePush, SkinPush, TrianglesPush};
use super::shader_types::{MAX_LEVELS, MAX_PARTS};
use super::slots::FrameSlot;
use super::{FrameScene, Output, Pass, Renderer, Strategy};
use crate::gpu::barrier::{self, side, Hazard};
use crate::gpu::query::TimestampPool;
use crate::gpu::{self, Buffer, Device};

/// One barrier call as recorded: the work it comes before and its hazards, in words.
#[derive(Clone, Debug, PartialEq)]
pub struct BarrierCall {
    pub before: &'static str,
    pub hazards: Vec<HazardWords>,
}

/// A hazard as the README's table shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct HazardWords {
    pub resource: &'static str,
    pub from: &'static str,
    pub to: &'static str,
    /// (old, new) where an image changes layout.
    pub layouts: Option<(vk::ImageLayout, vk::ImageLayout)>,
    pub kind: &'static str,
}

/// Records one frame: barriers batched per boundary, passes timed by name.
pub struct Recorder<'a> {
    device: &'a Device,
    command_buffer: vk::CommandBuffer,
    timestamps: &'a TimestampPool,
    /// Hazards declared since the last barrier.
    pending: Vec<Hazard>,
    /// Timestamps written so far: timestamp i + 1 closes `Pass::ALL[i]`.
    marks: u32,
    calls: Vec<BarrierCall>,
}

impl<'a> Recorder<'a> {
    pub fn new(device: &'a Device, command_buffer: vk::CommandBuffer, timestamps: &'a TimestampPool) -> Recorder<'a> {
        timestamps.reset(command_buffer);
        timestamps.write(command_buffer, Stage::ALL_COMMANDS, 0);
        Recorder { device, command_buffer, timestamps, pending: Vec::new(), marks: 1, calls: Vec::new() }
    }

    /// Declares hazards for the next barrier.
    pub fn wait(&mut self, hazards: impl IntoIterator<Item = Hazard>) {
        self.pending.extend(hazards);
    }

    /// Work outside the timed passes (a reset, copies): one barrier for what is due, then `record`.
    pub fn step(&mut self, name: &'static str, record: impl FnOnce(vk::CommandBuffer)) {
        self.barrier(name);
        record(self.command_buffer);
    }

    /// A timed pass: `before` joins what is due as one barrier, `record` records the pass, its
    /// timestamp closes it, and `after` waits for the next boundary.
    pub fn pass(&mut self, pass: Pass, before: Vec<Hazard>, record: impl FnOnce(vk::CommandBuffer), after: Vec<Hazard>) {
        let index = pass as u32;
        self.mark_through(index); // passes skipped before this one end here, taking no time
        self.wait(before);
        self.barrier(pass.name());
        record(self.command_buffer);
        self.mark_through(index + 1);
        self.wait(after);
    }

    /// The last barrier and the timestamps of passes that did not run (zero long); returns the
    /// barrier calls made.
    pub fn finish(mut self) -> Vec<BarrierCall> {
        self.barrier("the end of the frame");
        self.mark_through(Pass::ALL.len() as u32);
        self.calls
    }

    fn barrier(&mut self, before: &'static str) {
        if self.pending.is_empty() {
            return;
        }
        barrier::issue(self.device, self.command_buffer, &self.pending);
        let hazards = self
            .pending
            .drain(..)
            .map(|hazard| HazardWords {
                resource: hazard.resource,
                from: hazard.from.words,
                to: hazard.to.words,
                layouts: hazard.layouts(),
                kind: hazard.kind(),
            })
            .collect();
        self.calls.push(BarrierCall { before, hazards });
    }

    /// Writes the timestamps up to `last` (timestamp i + 1 closes `Pass::ALL[i]`).
    fn mark_through(&mut self, last: u32) {
        while self.marks <= last {
            self.timestamps.write(self.command_buffer, Stage::ALL_COMMANDS, self.marks);
            self.marks += 1;
        }
    }
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
        let mut recorder = Recorder::new(&self.device, command_buffer, &frame.timestamps);

        // cull: which instances the camera and the light see; counts, skin list and draw lists.
        let cull = &self.passes.cull;
        recorder.wait(cull.reset_hazards());
        recorder.step("the counters' reset", |command_buffer| cull.record_reset(command_buffer, &self.counter_reset(choice)));
        let record = |command_buffer| cull.record(command_buffer, frame.cull_set, self.cull_push(choice));
        recorder.pass(Pass::Cull, cull.hazards_before(), record, cull.hazards_after());

        // palette: each kept instance's joint palette, sampled from the file's keys. Read by the
        // skin pass (`compute`) or by the shadow and forward vertex shaders (`vertex`).
        if strategy != Strategy::Cpu {
            let palette = &self.passes.palette;
            let readers = palette_readers(strategy);
            let record = |command_buffer| self.record_palette(command_buffer, frame);
            recorder.pass(Pass::Palette, palette.hazards_before(), record, palette.hazards_after(readers));
        }

        // skin: every kept instance's vertices, once, for the triangle, shadow and forward passes.
        if strategy == Strategy::Compute {
            let skin = &self.passes.skin;
            recorder.pass(
                Pass::Skin,
                skin.hazards_before(),
                |command_buffer| self.record_skin(command_buffer),
                skin.hazards_after(),
            );
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
        let shadow = &self.passes.shadow;
        let record = |command_buffer| self.record_shadow(command_buffer, vertices, (scene, choice));
        recorder.pass(Pass::Shadow, shadow.hazards_before(), record, shadow.hazards_after());
        let record = |command_buffer| self.record_forward(command_buffer, frame, vertices, output, scene);
        recorder.pass(Pass::Forward, self.forward_hazards(output), record, Vec::new());

        // overlay: the viewer's panel over the resolved image (drawn, or copied from its cache).
        let mut last_writes = (RESOLVE_WRITES, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
        if let Some((pass, ui)) = overlay {
            let (image, view, extent) = output.target();
            let before = pass.hazards_before(image, RESOLVE_WRITES);
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

/// The forward pass's MSAA resolve, the earlier side of the hazards on the frame's image.
const RESOLVE_WRITES: barrier::Side = side("resolve writes", Stage::COLOR_ATTACHMENT_OUTPUT, Access::COLOR_ATTACHMENT_WRITE);

/// The cull pass's kinds of list in `cull.level_lists`: per level, the instances to skin at it and
/// the instances the camera sees at it; and the instances the light sees (at its level).
#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    Skin,
    Camera,
    Light,
}

/// Who reads the palettes: the skin pass, or the shadow and forward vertex shaders.
fn palette_readers(strategy: Strategy) -> barrier::Side {
    match strategy {
        Strategy::Vertex => side("shadow and forward vertex shaders", Stage::VERTEX_SHADER, Access::SHADER_STORAGE_READ),
        _ => side("skin reads", Stage::COMPUTE_SHADER, Access::SHADER_STORAGE_READ),
    }
}

/// The frame's barrier calls as the README's markdown table: one row per hazard, numbered by call.
pub fn barrier_table(calls: &[BarrierCall]) -> String {
    let mut table = String::from("| call | before | resource | from | to | hazard |\n|---|---|---|---|---|---|\n");
    for (number, call) in calls.iter().enumerate() {
        for (index, hazard) in call.hazards.iter().enumerate() {
            let (number, before) = if index == 0 { ((number + 1).to_string(), call.before) } else { (String::new(), "") };
            let to = match hazard.layouts {
                Some((old, new)) => format!("{}; `{old:?} → {new:?}`", hazard.to),
                None => hazard.to.to_string(),
            };
            table += &format!("| {number} | {before} | `{}` | {} | {to} | {} |\n", hazard.resource, hazard.from, hazard.kind);
        }
    }
    table
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

    fn record_copy_out(&self, device: &Device, command_buffer: vk::CommandBuffer) {
        if let Output::Offscreen(target) = self {
            target.record_copy_out(device, command_buffer);
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
    /// What the counters hold before the cull pass counts: zero counts, and the constant parts of
    /// the indirect arguments.
    fn counter_reset(&self, choice: &LevelChoice) -> CullCounters {
        let mut reset = CullCounters {
            skeleton_draw: [2 * self.model.joint_count, 0, 0, 0],
            box_draw: [24, 0, 0, 0],
            palette_dispatch: [0, 1, 1, 0],
            kept: [0, 0, 1, 0],
            ..Default::default()
        };
        for (level, info) in self.model.levels.iter().enumerate() {
            for part in 0..MAX_PARTS {
                let at = level * MAX_PARTS + part;
                reset.skin_levels[at] = [info.vertex_count.div_ceil(self.passes.skin.tuning.workgroup_size), 0, 1, 0];
                reset.camera_levels[at] = [(info.index_count / 3).div_ceil(triangles::WORKGROUP_SIZE).max(1), 0, 1, 0];
            }
        }
        let light = self.model.levels[choice.light_level as usize];
        reset.light_parts = [[(light.index_count / 3).div_ceil(triangles::WORKGROUP_SIZE).max(1), 0, 1, 0]; MAX_PARTS];
        reset
    }

    /// Each (level, part) dispatch the skin or triangle pass records over one kind of list: the
    /// level, where its part of the list starts in `cull.level_lists`, and its arguments' offset in
    /// `cull.counters`. A list takes a dispatch per `dispatch_rows` instances (at most `MAX_PARTS`).
    fn list_dispatches(&self, list: List, light_level: usize) -> Vec<(usize, u32, u64)> {
        let rows = self.setup.dispatch_rows;
        let parts = self.setup.instance_count.div_ceil(rows).clamp(1, MAX_PARTS as u32);
        let levels = self.model.levels.len();
        let mut dispatches = Vec::new();
        for level in 0..levels {
            let (first_entry, arguments) = match list {
                List::Skin => (level, std::mem::offset_of!(CullCounters, skin_levels) + 16 * level * MAX_PARTS),
                List::Camera => (levels + level, std::mem::offset_of!(CullCounters, camera_levels) + 16 * level * MAX_PARTS),
                List::Light if level == light_level => (2 * levels, std::mem::offset_of!(CullCounters, light_parts)),
                List::Light => continue,
            };
            for part in 0..parts {
                let list_offset = first_entry as u32 * self.setup.instance_count + part * rows;
                dispatches.push((level, list_offset, (arguments + 16 * part as usize) as u64));
            }
        }
        dispatches
    }

    /// The forward pass's attachments; `render` creates them before it records.
    fn targets(&self) -> &ForwardTargets {
        self.targets.as_ref().expect("render() creates the targets before recording")
    }

    fn record_palette(&self, command_buffer: vk::CommandBuffer, frame: &FrameSlot) {
        let push = PalettePush {
            joint_count: self.model.joint_count,
            chunk_instances: self.setup.chunking.instances_per_chunk,
            write_joint_positions: u32::from(self.debug.skeleton),
        };
        let arguments = (&self.passes.cull.counters, std::mem::offset_of!(CullCounters, palette_dispatch) as u64);
        self.passes.palette.record(command_buffer, frame.palette_set, push, arguments);
    }

    fn record_skin(&self, command_buffer: vk::CommandBuffer) {
        let dispatches = self.list_dispatches(List::Skin, 0);
        let pushes: Vec<SkinPush> = dispatches
            .iter()
            .map(|&(level, list_offset, _)| SkinPush {
                vertex_count: self.model.levels[level].vertex_count,
                joint_count: self.model.joint_count,
                instance_vertices: self.model.vertex_count,
                chunk_instances: self.setup.chunking.instances_per_chunk,
                list_offset,
            })
            .collect();
        let offsets: Vec<u64> = dispatches.iter().map(|dispatch| dispatch.2).collect();
        self.passes.skin.record(command_buffer, self.bindings.skin_set, &pushes, (&self.passes.cull.counters, &offsets));
    }

    /// Before the forward pass: its attachments, and the image it resolves into.
    fn forward_hazards(&self, output: &Output<'_>) -> Vec<Hazard> {
        let targets = self.targets();
        let mut hazards = targets.hazards_before();
        hazards.push(output.resolve_hazard(RESOLVE_WRITES));
        hazards
    }

    fn record_resolve(&self, command_buffer: vk::CommandBuffer, frame: &FrameSlot, output: &Output<'_>) {
        self.device.begin_label(command_buffer, c"resolve");
        output.record_copy_out(&self.device, command_buffer);
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

    fn cull_push(&self, choice: &LevelChoice) -> CullPush {
        let bind = self.setup.bind_bounds;
        let mut level_errors = [0.0; MAX_LEVELS];
        for (slot, &error) in level_errors.iter_mut().zip(&choice.errors) {
            *slot = error;
        }
        CullPush {
            bind_min: bind.min.extend(0.0).to_array(),
            bind_max: bind.max.extend(0.0).to_array(),
            instance_count: self.setup.instance_count,
            blend_reach: self.setup.blend_reach,
            joint_count: self.model.joint_count,
            vertex_count: self.model.vertex_count,
            mesh_count: self.setup.mesh_draws.len() as u32,
            chunk_instances: self.setup.chunking.instances_per_chunk,
            pixels_at_unit: choice.pixels_at_unit,
            level_count: choice.errors.len() as u32,
            light_level: choice.light_level,
            list_stride: self.setup.instance_count,
            dispatch_rows: self.setup.dispatch_rows,
            level_errors,
            // Frames count from 2 so that palette_frames' zeros (none yet) are never last frame's.
            palette_frame: (self.stats.frames_rendered as u32).wrapping_add(2).max(2),
            // The skeleton view reads joint positions the palette pass writes: every one, every frame.
            far_ratio: match self.setup.animation_lod {
                Some(pixels) if !self.debug.skeleton => choice.far_ratio(pixels),
                _ => 0.0,
            },
        }
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
        let mesh_count = self.setup.mesh_draws.len() as u32;
        let light_level = choice.light_level as usize;
        let camera = (scene.view_projection, [extent.width as f32, extent.height as f32], u32::from(triangles.sample_test) * 4);
        // The shadow map: one sample a texel, at its centre.
        let light = (scene.light_view_projection, [shadow::SHADOW_MAP_SIZE as f32; 2], 1);
        let run = |list: List, output: &CulledOutput, (view_projection, viewport, sample_step): (glam::Mat4, [f32; 2], u32)| {
            let dispatches = self.list_dispatches(list, light_level);
            let layout = self.model.levels[output.layout_level as usize];
            let push = |level: usize, list_offset: u32| TrianglesPush {
                view_projection: view_projection.to_cols_array(),
                viewport,
                mesh_count,
                vertex_count: self.model.vertex_count,
                index_count: layout.index_count,
                chunk_instances: self.setup.chunking.instances_per_chunk,
                group_size: triangles.group_size,
                groups_per_chunk: triangles.groups_per_chunk,
                facing_sign: triangles.facing_sign,
                sample_step,
                snap: triangles.snap,
                list_offset,
                first_range: level as u32 * mesh_count,
                level_first_index: self.model.levels[level].first_index,
                layout_first_range: output.layout_level * mesh_count,
                layout_first_index: layout.first_index,
            };
            dispatches.iter().map(|&(level, list_offset, arguments)| (push(level, list_offset), arguments)).collect()
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
        let vertex_bytes = self.model.skinned_bytes();
        match &frame.cpu_skinned {
            Some(cpu_skinned) => (0..self.setup.chunking.chunk_count)
                .map(|chunk| {
                    (cpu_skinned, u64::from(self.setup.chunking.range(chunk, self.setup.instance_count).0) * vertex_bytes)
                })
                .collect(),
            None => self.passes.skin.skinned.iter().map(|buffer| (buffer, 0)).collect(),
        }
    }

    fn vertex_source<'s>(&self, chunk_vertices: &'s [(&'s Buffer, u64)]) -> VertexSource<'s> {
        match (self.setup.strategy, &self.bindings.skin_inputs) {
            (Strategy::Vertex, Some((_, skin_inputs))) => VertexSource::SkinInVertexShader {
                skin_inputs: *skin_inputs,
                joint_count: self.model.joint_count,
                chunk_instances: self.setup.chunking.instances_per_chunk,
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
        vertices: VertexSource<'_>,
        output: &Output<'_>,
        scene: &FrameScene,
    ) {
        let targets = self.targets();
        let resolve = match output {
            Output::Offscreen(target) => ResolveTarget { view: target.color.view, extent: target.color.extent() },
            Output::Swapchain { view, extent, .. } => ResolveTarget { view: *view, extent: *extent },
        };
        let meshes: Vec<MeshDraw> = self
            .setup
            .mesh_draws
            .iter()
            .enumerate()
            .map(|(mesh, &material)| MeshDraw {
                material_set: self.bindings.material_sets[material],
                base_color: self.model.materials[material].base_color,
                mesh: mesh as u32,
            })
            .collect();
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
        };
        let overlay = |command_buffer| self.passes.debug.record(command_buffer, self.bindings.debug_set, &debug_frame);
        let culled = self.passes.triangles.as_ref().map(|triangles| {
            triangles.camera.draws(triangles, self.setup.mesh_draws.len() as u32, self.setup.chunking, self.setup.instance_count)
        });
        let indices = &self.model.indices;
        self.passes.forward.record(
            command_buffer,
            targets,
            &resolve,
            frame.frame_set,
            vertices,
            indices,
            camera_draws,
            culled.as_ref(),
            &meshes,
            &overlay,
        );
    }
}
