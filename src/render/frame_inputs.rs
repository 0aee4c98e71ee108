//! The draws' inputs, gathered for the frame's recipe (`frame.rs`): where the vertices come from
//! in each strategy, the cull pass's draw lists, the triangle pass's runs, and the shadow and
//! forward passes' arguments.

use ash::vk;

use super::draw::{DrawList, VertexSource};
use super::passes::debug::DebugFrame;
use super::passes::forward::{ForwardFrame, PreviousPositions, ResolveTarget};
use super::passes::raster::{RasterPass, RasterViews};
use super::passes::shadow;
use super::passes::triangles::{CulledOutput, RunView, TriangleCulling};
use super::shader_types::{CullCounters, Table};
use super::slots::FrameSlot;
use super::{FrameScene, Output, Renderer, Strategy};
use crate::gpu::Buffer;

impl Renderer {
    pub(super) fn record_triangles(&self, command_buffer: vk::CommandBuffer, triangles: &TriangleCulling, scene: &FrameScene) {
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
        // The raster pass's threshold and room, where it runs this frame.
        let raster = match &self.passes.raster {
            Some(pass) if self.raster_runs() => (self.raster.pixels(), pass.room),
            _ => (0.0, 0),
        };
        let run = |table: Table, output: &CulledOutput, view: RunView| {
            (output.set, triangles.push(&self.model, &self.setup, &view, (table, raster)), table.arguments())
        };
        let mut runs = vec![run(Table::Camera, &triangles.camera, camera)];
        if let Some(output) = self.light_run() {
            runs.push(run(Table::Light, output, light));
        }
        triangles.pass.record(command_buffer, &runs, &self.passes.cull.counters);
    }

    /// The work tables some pass reads this frame, which the cull pass fills: the skin pass's
    /// (`compute`), and the triangle pass's camera run and, when it runs, its light run.
    pub(super) fn tables_read(&self) -> Vec<Table> {
        let mut tables = Vec::new();
        if self.setup.strategy == Strategy::Compute {
            tables.push(Table::Skin);
        }
        if self.passes.triangles.is_some() {
            tables.push(Table::Camera);
        }
        if self.light_run().is_some() {
            tables.push(Table::Light);
        }
        tables
    }

    /// Each chunk's skinned vertices: its own buffer (`compute`), or its range of the slot's
    /// CPU-written one (`cpu`).
    pub(super) fn chunk_vertices<'s>(&'s self, frame: &'s FrameSlot) -> Vec<(&'s Buffer, u64)> {
        match &frame.cpu_skinned {
            Some(cpu_skinned) => self.slot_chunks(cpu_skinned, std::mem::size_of::<super::shader_types::SkinnedVertex>() as u64),
            None => self.passes.skin.skinned.iter().map(|buffer| (buffer, 0)).collect(),
        }
    }

    /// Each chunk's range of a frame slot's buffer that holds `vertex_bytes` for every vertex of
    /// every instance, instance after instance (the `cpu` strategy's): where the chunk's first
    /// instance's vertices start.
    fn slot_chunks<'s>(&self, buffer: &'s Buffer, vertex_bytes: u64) -> Vec<(&'s Buffer, u64)> {
        let starts = self.setup.chunk_vertices.iter().scan(0, |before, &vertices| {
            let start = *before;
            *before += vertices;
            Some(start)
        });
        starts.map(|start| (buffer, start * vertex_bytes)).collect()
    }

    /// Each chunk's previous positions in the slot's `cpu_previous` (`cpu`; empty otherwise).
    pub(super) fn previous_chunks<'s>(&'s self, frame: &'s FrameSlot) -> Vec<(&'s Buffer, u64)> {
        frame.cpu_previous.as_ref().map_or_else(Vec::new, |previous| self.slot_chunks(previous, 12))
    }

    /// Where the forward pass finds last frame's positions (see [`PreviousPositions`]).
    pub(super) fn previous_positions<'s>(&self, previous_chunks: &'s [(&'s Buffer, u64)]) -> PreviousPositions<'s> {
        match (self.setup.strategy, &self.bindings.skin_inputs) {
            (Strategy::Cpu, _) => PreviousPositions::Streamed(previous_chunks),
            (Strategy::Compute, Some(inputs)) => PreviousPositions::Skinned(inputs.set),
            _ => PreviousPositions::WithVertices,
        }
    }

    pub(super) fn vertex_source<'s>(&self, chunk_vertices: &'s [(&'s Buffer, u64)]) -> VertexSource<'s> {
        match (self.setup.strategy, &self.bindings.skin_inputs) {
            (Strategy::Vertex, Some(inputs)) => VertexSource::SkinInVertexShader {
                skin_inputs: inputs.set,
                chunk_instances: self.setup.chunking.instances_per_chunk,
            },
            _ => VertexSource::Skinned(chunk_vertices),
        }
    }

    /// One draw list of the cull pass: the light's or the camera's, with its counts (the camera's
    /// first in each run's pair).
    fn draw_list<'s>(&'s self, commands: &'s Buffer, light: bool) -> DrawList<'s> {
        DrawList {
            commands,
            counts: &self.passes.cull.draw_counts,
            count_offset: if light { 4 } else { 0 },
            runs: &self.setup.runs,
        }
    }

    /// The triangle pass's light run this frame: where the renderer has one and it is on.
    fn light_run(&self) -> Option<&CulledOutput> {
        let output = self.passes.triangles.as_ref()?.light.as_ref()?;
        self.setup.light_culling.then_some(output)
    }

    /// What the raster pass's runs rasterize for this frame.
    pub(super) fn raster_views(&self, scene: &FrameScene) -> RasterViews {
        let extent = self.targets().color.extent();
        RasterViews {
            camera: scene.view_projection,
            camera_size: [extent.width, extent.height],
            light: scene.light_view_projection,
            chunk_instances: self.setup.chunking.instances_per_chunk,
        }
    }

    /// The raster pass where it runs this frame.
    fn raster_pass(&self) -> Option<&RasterPass> {
        self.passes.raster.as_ref().filter(|_| self.raster_runs())
    }

    /// The frame uniforms' debug flags (`frame.chunking.y`): the raster view colours what each
    /// rasterizer drew.
    pub(super) fn debug_flags(&self) -> u32 {
        u32::from(self.debug.raster)
    }

    pub(super) fn record_shadow(&self, command_buffer: vk::CommandBuffer, vertices: VertexSource<'_>, scene: &FrameScene) {
        let draws = self.draw_list(&self.passes.cull.light_draws, true);
        // The triangle pass's light run, where it ran: the triangles that can reach a texel.
        let culled = self.light_run().map(|output| output.draws(draws));
        let light_view_projection = scene.light_view_projection;
        // The raster pass's texels, merged after the draws.
        let merge = |command_buffer| {
            if let Some(raster) = self.raster_pass() {
                raster.record_merge(command_buffer);
            }
        };
        let draws = (draws, culled.as_ref());
        self.passes.shadow.record(command_buffer, (vertices, &self.model.indices), draws, light_view_projection, &merge);
    }

    pub(super) fn record_forward(
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
        let camera_draws = self.draw_list(&self.passes.cull.camera_draws, false);
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
            joint_count: self.passes.palette.joint_stride,
            normal_length: self.setup.bind_bounds.size().length() * 0.02,
            extent: resolve.extent,
            velocity: self.velocity_written(),
        };
        // After the model: the raster pass's samples shaded and merged by depth, then the debug views.
        let skin_inputs = self.bindings.skin_inputs.as_ref().map(|inputs| inputs.set);
        let overlay = |command_buffer| {
            if let (Some(raster), Some(skin_inputs)) = (self.raster_pass(), skin_inputs) {
                raster.record_resolve(
                    command_buffer,
                    (frame.frame_set, skin_inputs),
                    self.velocity_written(),
                    self.debug_flags(),
                );
            }
            self.passes.debug.record(command_buffer, &debug_frame)
        };
        let culled = self.passes.triangles.as_ref().map(|triangles| triangles.camera.draws(camera_draws));
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
            samples: frame.samples.as_ref(),
        };
        self.passes.forward.record(command_buffer, &forward_frame, &overlay);
    }
}
