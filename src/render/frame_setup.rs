//! A frame's steps around its recording (`Renderer::render_with_overlay`): the forward pass's
//! attachments at the output's size, the slot's uniforms and the instance records that changed
//! (and the `cpu` strategy's skinning), and the submit.

use ash::vk;

use super::passes::cull::{self, LevelChoice};
use super::passes::forward::ForwardTargets;
use super::passes::shadow;
use super::shader_types::{frustum_planes, FrameUniforms, InstanceData, WalkArea};
use super::{reference, slots, FrameScene, Output, Renderer, Strategy, FRAMES_IN_FLIGHT};
use crate::gpu::{self, Check};
use crate::model::Model;

impl Renderer {
    /// The forward pass's attachments at `extent`: made at start-up and on a resize, when no frame
    /// may still use the old ones.
    pub(super) fn ensure_targets(&mut self, extent: vk::Extent2D) -> gpu::Result<()> {
        if self.targets.as_ref().is_some_and(|targets| targets.color.extent() == extent) {
            return Ok(());
        }
        self.device.wait_idle()?;
        self.targets = None;
        let targets = ForwardTargets::new(&self.device, self.setup.color_format, extent)?;
        self.passes.motion.bind_targets(&targets);
        if let Some(raster) = &mut self.passes.raster {
            raster.bind_targets(extent)?;
        }
        self.targets = Some(targets);
        self.history.cut_camera();
        Ok(())
    }

    /// Slot `index`'s uniforms, the instance records that changed, the instances pass's clock and
    /// flags, and the morph weights set by hand; on the `cpu` strategy, every instance skinned into
    /// the slot's buffer.
    pub(super) fn write_slot(
        &mut self,
        index: usize,
        scene: &FrameScene,
        choice: &LevelChoice,
        extent: vk::Extent2D,
    ) -> gpu::Result<()> {
        let uniforms = self.frame_uniforms(scene, extent, choice);
        let velocity = self.velocity_written();
        self.velocity_layout.set(velocity.then_some(match self.motion_pass_runs() {
            true => vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            false => vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
        }));
        // The records of the instances that changed since this renderer's last frame (all of them
        // on its first, none in a steady scene).
        self.uploads.gather(&scene.instances, scene.seconds, scene.walk_area, &mut self.upload);
        self.stats.records_uploaded = self.upload.records.len() as u32;
        let flags = self.history.instance_flags(&scene.morph_overrides);
        let most_targets = self.model.most_targets();
        let slot = &mut self.frames[index];
        slot.uniforms.write(0, &[uniforms])?;
        slot.write_upload(&self.device, index, &self.upload)?;
        slot.instances_push = (self.upload.clock, flags, WalkArea::packed(scene.walk_area));
        slot.morph_overrides.write(0, &slots::override_records(&scene.morph_overrides, most_targets))?;
        if self.setup.strategy == Strategy::Cpu {
            self.cpu_skin(index, scene, choice, flags)?;
        }
        Ok(())
    }

    /// The `cpu` strategy: every instance's record at the frame's clock, flagged for motion as the
    /// instances pass flags its own, skinned into slot `index`'s buffer at its level of detail, as
    /// the cull pass will pick it.
    fn cpu_skin(&mut self, index: usize, scene: &FrameScene, choice: &LevelChoice, flags: u32) -> gpu::Result<()> {
        let started = std::time::Instant::now();
        let mut instances = self.uploads.data(&scene.instances, scene.seconds);
        for &teleported in &self.upload.restarted {
            if let Some(instance) = instances.get_mut(teleported as usize) {
                *instance = instance.restart_motion();
            }
        }
        let counts = self.cpu_vertex_counts(scene, &instances, choice);
        let instances = self.history.cpu_instances(&instances, flags, scene.walk_area).to_vec();
        let velocity = self.velocity_written();
        let slot = &mut self.frames[index];
        if let (Some(buffer), Some(previous)) = (slot.cpu_skinned.as_mut(), slot.cpu_previous.as_mut()) {
            let out = buffer.mapped_values()?;
            let now = self.history.cpu_positions_now().filter(|_| velocity);
            let models: Vec<&Model> = self.cpu_models.iter().collect();
            let mix = (&models[..], &self.setup.instance_models[..]);
            reference::cpu_skin_instances(mix, &instances, &scene.morph_overrides, &counts, out, now);
            match velocity {
                true => self.history.cpu_previous_positions(&instances, &counts, previous.mapped_values()?),
                false => self.history.forget_cpu_positions(),
            }
        }
        self.stats.cpu_skinning_ms = started.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }

    fn frame_uniforms(&mut self, scene: &FrameScene, extent: vk::Extent2D, choice: &LevelChoice) -> FrameUniforms {
        // `--shadows ray`: a shadow ray leaves the surface by twice what a traced triangle may
        // stray from the drawn one: a texel of the map, or a room level's error (where memory left
        // no finer room); on the models, plus a pixel's footprint at the point's distance (per
        // unit of distance) in frames where some instance traces a level that coarse.
        let trace = self.passes.trace.as_ref();
        let ray_offset = (
            2.0 * choice.light_error.max(trace.map_or(0.0, |trace| trace.room_error)),
            match trace.is_some_and(|trace| trace.pixel_coarsened) && choice.pixels_at_unit > 0.0 {
                true => 2.0 / choice.pixels_at_unit,
                false => 0.0,
            },
        );
        FrameUniforms {
            view_projection: scene.view_projection.to_cols_array_2d(),
            light_view_projection: scene.light_view_projection.to_cols_array_2d(),
            camera_position: scene.camera_position.extend(1.0).to_array(),
            light_direction: scene.light_direction.normalize().extend(0.0).to_array(),
            light_color_ambient: [1.0, 0.96, 0.9, 0.28],
            ground: scene.ground.to_array(),
            shadow_params: [1.0 / shadow::SHADOW_MAP_SIZE as f32, ray_offset.0, ray_offset.1, 0.0],
            chunking: [self.setup.chunking.instances_per_chunk, self.debug_flags(), 0, 0],
            camera_planes: frustum_planes(scene.view_projection),
            light_planes: frustum_planes(scene.light_view_projection),
            previous_view_projection: self.history.camera(scene.view_projection).to_cols_array_2d(),
            viewport: [extent.width as f32, extent.height as f32, 0.0, 0.0],
        }
    }

    /// Per instance, the vertices the `cpu` strategy skins: its level's (a prefix), by the cull
    /// pass's CPU mirror made conservative (it sees at least what the GPU sees, at a level no
    /// coarser); 0 for an instance neither view sees.
    fn cpu_vertex_counts(&self, scene: &FrameScene, instances: &[InstanceData], choice: &LevelChoice) -> Vec<u32> {
        let mut counts = vec![0; instances.len()];
        let mut of_models = vec![Vec::new(); self.cpu_models.len()];
        for (instance, &model) in self.setup.instance_models.iter().enumerate().take(instances.len()) {
            of_models[model as usize].push(instance);
        }
        for ((model, part), of_model) in self.cpu_models.iter().zip(&self.model.parts).zip(&of_models) {
            // This model's instances, at its levels' errors.
            let alone: Vec<InstanceData> = of_model.iter().map(|&instance| instances[instance]).collect();
            let choice = choice.for_errors(part.levels.iter().map(|level| level.error).collect());
            let levels = cull::reference_levels(model, scene, &alone, &choice, 1e-3);
            let vertices = |level: u32| part.levels.get(level as usize).map_or(part.vertex_count(), |level| level.vertex_count);
            for (&instance, levels) in of_model.iter().zip(levels) {
                counts[instance] = levels.map_or(0, |levels| vertices(levels.skinned));
            }
        }
        counts
    }

    /// Submits slot `index`'s command buffer: on a swapchain, after the acquire and before the
    /// present (its semaphores).
    pub(super) fn submit(&mut self, index: usize, output: &Output<'_>) -> gpu::Result<()> {
        let slot = &self.frames[index];
        slot.fence.reset()?;
        let command_buffers = [slot.command_buffer];
        let (wait, wait_stages, signal) = match output {
            Output::Swapchain { render_finished, .. } => {
                (vec![slot.image_available.raw], vec![vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT], vec![*render_finished])
            }
            Output::Offscreen(_) => (vec![], vec![], vec![]),
        };
        let submit = vk::SubmitInfo::default()
            .command_buffers(&command_buffers)
            .wait_semaphores(&wait)
            .wait_dst_stage_mask(&wait_stages)
            .signal_semaphores(&signal);
        unsafe { self.device.raw.queue_submit(self.device.queue, &[submit], slot.fence.raw) }.check("vkQueueSubmit")?;
        self.frame_index = (self.frame_index + 1) % FRAMES_IN_FLIGHT;
        self.stats.frames_rendered += 1;
        Ok(())
    }
}
