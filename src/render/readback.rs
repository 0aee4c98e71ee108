//! Reading the renderer's GPU buffers back to the CPU: what the tests compare with the CPU
//! references, and what debugging looks at. Each waits for nothing itself: call after `wait_all`.

use ash::vk;
use gpu_allocator::MemoryLocation;
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use super::shader_types::{CullCounters, InstanceData, InstanceRecord, PaletteMatrix, SkinnedVertex};
use super::stats::CullReadback;
use super::Renderer;
use crate::gpu::barrier::{self, side, Hazard};
use crate::gpu::{self, commands, Buffer};
use bytemuck::Zeroable;

impl Renderer {
    /// Copies a GPU buffer of the renderer back to the CPU (tests and debugging; after `wait_all`).
    pub fn read_back<T: bytemuck::Pod>(&self, source: &Buffer) -> gpu::Result<Vec<T>> {
        let name = format!("readback.{}", source.name);
        let mut readback =
            Buffer::new(&self.device, &name, source.size, vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuToCpu)?;
        commands::submit_once(&self.device, &name, |command_buffer| {
            // The last frame's writes are finished (fence), but the copy must still see them.
            let any_write = side("the frames' writes", Stage::ALL_COMMANDS, Access::MEMORY_WRITE);
            let copy_read = side("the copy", Stage::COPY, Access::TRANSFER_READ);
            barrier::issue(&self.device, command_buffer, &[Hazard::buffer("read-back source", source, any_write, copy_read)]);
            let region = vk::BufferCopy::default().size(source.size);
            unsafe { self.device.raw.cmd_copy_buffer(command_buffer, source.raw, readback.raw, &[region]) };
            let host = [Hazard::buffer("read-back", &readback, barrier::COPY_WRITES, barrier::HOST_READS)];
            barrier::issue(&self.device, command_buffer, &host);
        })?;
        readback.read()
    }

    /// Copies `raster.visibility` back (tests; after `wait_all`): per pixel, row by row, its 4
    /// samples' (depth bits << 32 | triangle) from the raster pass, `u64::MAX` where it drew
    /// nothing; empty without a raster pass.
    pub fn read_back_visibility(&self) -> gpu::Result<Vec<u64>> {
        match self.passes.raster.as_ref().and_then(|raster| raster.visibility()) {
            Some(visibility) => self.read_back(visibility),
            None => Ok(Vec::new()),
        }
    }

    /// Copies `skinned_vertices` and `joint_palettes` back to the CPU (tests; after `wait_all`):
    /// every instance's vertices, and every instance's joint matrices (the first `joint_count` of
    /// its palette slots), instance after instance. Where the vertices are pooled, an instance's
    /// are where the last cull pass placed them, its level's (a prefix of its vertices), the rest
    /// and those of an instance not skinned zeros (`read_back_placements` says which).
    pub fn read_back_skinning(&self) -> gpu::Result<(Vec<SkinnedVertex>, Vec<PaletteMatrix>)> {
        let mut skinned = Vec::new();
        let mut palettes = Vec::new();
        let chunking = self.setup.chunking;
        let placements = match self.setup.memory.pools.pooled {
            true => self.read_back_placements()?,
            false => Vec::new(),
        };
        for chunk in 0..chunking.chunk_count {
            let chunk_vertices = self.read_back::<SkinnedVertex>(&self.passes.skin.skinned[chunk as usize])?;
            let slots = self.read_back::<PaletteMatrix>(&self.passes.palette.palettes[chunk as usize])?;
            // A chunk's instances lie one after another, each its model's palette stride.
            let (first, count) = chunking.range(chunk, self.setup.instance_count);
            let mut base = 0;
            for (instance, &model) in (first..).zip(&self.setup.instance_models[first as usize..(first + count) as usize]) {
                let part = &self.model.parts[model as usize];
                palettes.extend_from_slice(&slots[base..base + part.joint_count() as usize]);
                base += part.palette_stride() as usize;
                if let Some(placement) = placements.get(instance as usize) {
                    let full = part.vertex_count() as usize;
                    let start = skinned.len();
                    if let Some(level) = part.levels.get(placement.level as usize) {
                        let at = placement.vertex_base as usize;
                        skinned.extend_from_slice(&chunk_vertices[at..at + level.vertex_count as usize]);
                    }
                    skinned.resize(start + full, SkinnedVertex::zeroed());
                }
            }
            if placements.is_empty() {
                skinned.extend(chunk_vertices);
            }
        }
        Ok((skinned, palettes))
    }

    /// Where the last cull pass placed each instance's skinned vertices (tests; after `wait_all`).
    pub fn read_back_placements(&self) -> gpu::Result<Vec<Placement>> {
        let words: Vec<[u32; 2]> = self.read_back(&self.passes.cull.placements)?;
        Ok(words.into_iter().map(|[vertex_base, level]| Placement { vertex_base, level }).collect())
    }

    /// The last frame's skinned vertices, whichever strategy wrote them: the skin pass's chunks
    /// (`compute`) or the last frame slot's CPU-written buffer (`cpu`); instance i's at i × the
    /// model's vertex count. The `vertex` strategy keeps none: an error (tests; after `wait_all`).
    pub fn read_back_skinned(&mut self) -> gpu::Result<Vec<SkinnedVertex>> {
        match self.setup.strategy {
            super::Strategy::Compute => Ok(self.read_back_skinning()?.0),
            super::Strategy::Cpu => {
                let last = (self.frame_index + super::FRAMES_IN_FLIGHT - 1) % super::FRAMES_IN_FLIGHT;
                let buffer = self.frames[last].cpu_skinned.as_mut().ok_or_else(|| gpu::Error::Other("no CPU buffer".into()))?;
                buffer.read()
            }
            super::Strategy::Vertex => {
                Err(gpu::Error::Other("the vertex strategy skins in its vertex shaders and keeps no skinned vertices".into()))
            }
        }
    }

    /// The last frame's velocity target (tests; after `wait_all`): each pixel's motion in pixels,
    /// row after row.
    pub fn read_velocity(&self) -> gpu::Result<Vec<glam::Vec2>> {
        let targets = self.targets.as_ref().ok_or_else(|| gpu::Error::Other("no frame rendered yet".into()))?;
        // The layout the last frame left it in: sampled by the motion pass, as the resolve wrote
        // it, or as an earlier read-back left it.
        let layout = self
            .velocity_layout
            .get()
            .ok_or_else(|| gpu::Error::Other("the last frame wrote no velocity target (see Renderer::write_velocity)".into()))?;
        let image = &targets.velocity;
        let extent = image.extent();
        let size = u64::from(extent.width) * u64::from(extent.height) * 4;
        let mut readback =
            Buffer::new(&self.device, "readback.velocity", size, vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuToCpu)?;
        commands::submit_once(&self.device, "readback.velocity", |command_buffer| {
            let any_write = side("the frames' writes", Stage::ALL_COMMANDS, Access::MEMORY_WRITE);
            let copy_read = side("the copy", Stage::COPY, Access::TRANSFER_READ);
            let layouts = (layout, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
            barrier::issue(
                &self.device,
                command_buffer,
                &[Hazard::image("forward.velocity", image, any_write, copy_read, layouts)],
            );
            image.record_copy_to(command_buffer, &readback);
            let host = [Hazard::buffer("read-back", &readback, barrier::COPY_WRITES, barrier::HOST_READS)];
            barrier::issue(&self.device, command_buffer, &host);
        })?;
        self.velocity_layout.set(Some(vk::ImageLayout::TRANSFER_SRC_OPTIMAL));
        let halves: Vec<u16> = readback.read()?;
        let value = |bits: u16| half::f16::from_bits(bits).to_f32();
        Ok(halves.chunks_exact(2).map(|pair| glam::Vec2::new(value(pair[0]), value(pair[1]))).collect())
    }

    /// What the last instances pass made of each instance (tests; after `wait_all`): its data at
    /// the frame's clock, with the motion flags; and the records it made it from.
    pub fn read_back_instances(&self) -> gpu::Result<(Vec<InstanceData>, Vec<InstanceRecord>)> {
        let instances = &self.passes.instances;
        let count = self.setup.instance_count as usize;
        let mut data: Vec<InstanceData> = self.read_back(&instances.data)?;
        let mut records: Vec<InstanceRecord> = self.read_back(&instances.records)?;
        data.truncate(count);
        records.truncate(count);
        Ok((data, records))
    }

    /// What the last cull pass wrote (tests; after `wait_all`): its counters, the instances it kept
    /// for skinning, and the camera's and the light's draw commands with their counts, run by run
    /// (`CullReadback`).
    pub fn read_back_culling(&self) -> gpu::Result<CullReadback> {
        let counters: Vec<CullCounters> = self.read_back(&self.passes.cull.counters)?;
        let counters = counters.first().copied().unwrap_or_default();
        let skin_list: Vec<u32> = self.read_back(&self.passes.cull.skin_list)?;
        let palette_list: Vec<u32> = self.read_back(&self.passes.cull.palette_list)?;
        Ok(CullReadback {
            skin_list: skin_list[..(counters.kept[1] as usize).min(skin_list.len())].to_vec(),
            palette_list: palette_list[..(counters.palettes[0] as usize).min(palette_list.len())].to_vec(),
            camera_draws: self.read_back(&self.passes.cull.camera_draws)?,
            light_draws: self.read_back(&self.passes.cull.light_draws)?,
            draw_counts: self.read_back(&self.passes.cull.draw_counts)?,
            counters,
        })
    }
}

/// Where the cull pass placed an instance's skinned vertices in its chunk this frame
/// (`cull.placements`), and their level; `NOT_PLACED` for one not skinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub vertex_base: u32,
    pub level: u32,
}
