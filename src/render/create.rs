//! Making a renderer: every pass and buffer for a set of models and their instances, sized by the
//! memory plan, and where each instance lives.

use std::sync::Arc;

use ash::vk;

use super::chunks::{self, InstanceSlots, MemoryPlan, SlotSize};
use super::model_buffers::GpuModel;
use super::passes::debug::DebugViews;
use super::passes::{MadePasses, Passes, PassesFor};
use super::shader_types::{PaletteMatrix, SkinnedVertex};
use super::slots::{FrameSlot, SlotSetup};
use super::{
    history, instances, progress, Bindings, FrameStats, RenderSettings, Renderer, Setup, Shadows, Strategy, FRAMES_IN_FLIGHT,
};
use crate::gpu::commands::CommandPool;
use crate::gpu::{self, Device};
use crate::model::Model;

impl Renderer {
    /// Sets up every pass and buffer for `instance_count` instances of `model`, rendering into
    /// images of `color_format`.
    pub fn new(
        device: &Arc<Device>,
        model: &Model,
        instance_count: u32,
        color_format: vk::Format,
        strategy: Strategy,
    ) -> gpu::Result<Renderer> {
        Renderer::with_settings(device, model, instance_count, color_format, strategy, RenderSettings::default())
    }

    /// `new`, with the application's `settings`: room for the triangle pass's light run
    /// (`--light-culling on`), animation LOD, the skin pass's layout; the device's limits lowered
    /// (tests: many chunks, or a plan short of memory, with few instances).
    pub fn with_settings(
        device: &Arc<Device>,
        model: &Model,
        instance_count: u32,
        color_format: vk::Format,
        strategy: Strategy,
        settings: RenderSettings,
    ) -> gpu::Result<Renderer> {
        let instance_models = vec![0; instance_count.max(1) as usize];
        Renderer::for_models(device, &[model], &instance_models, color_format, strategy, settings)
    }

    /// A renderer for several models in one frame: instance i is of `models[instance_models[i]]`
    /// (its slot's model, `InstanceSlot`). Every model's data shares the buffers
    /// (`GpuModel::upload`), and every pass stays one dispatch or one draw list a run, whatever
    /// the number of models. The triangle pass serves one model.
    pub fn for_models(
        device: &Arc<Device>,
        models: &[&Model],
        instance_models: &[u32],
        color_format: vk::Format,
        strategy: Strategy,
        settings: RenderSettings,
    ) -> gpu::Result<Renderer> {
        if models.is_empty() || instance_models.is_empty() {
            return Err(gpu::Error::Other("a renderer needs a model and an instance".into()));
        }
        if let Some(&model) = instance_models.iter().find(|&&model| model as usize >= models.len()) {
            return Err(gpu::Error::Other(format!("an instance names model {model}; there are {}", models.len())));
        }
        if settings.shadows == Shadows::Ray && strategy == Strategy::Vertex {
            return Err(gpu::Error::Other(
                "--shadows ray builds acceleration structures from the skinned buffer; the vertex strategy skins in \
                 its vertex shaders and has none: use --strategy compute or cpu"
                    .into(),
            ));
        }
        let instance_count = instance_models.len() as u32;
        let gpu_model = GpuModel::upload(device, models)?;
        // Traced shadows draw no shadow map: no room for the triangle pass's light run.
        let settings = RenderSettings { light_culling: settings.light_culling && settings.shadows == Shadows::Map, ..settings };
        let mut plan = MemoryPlan::new(device, models, strategy, instance_count, settings)?;
        let chunking = plan.chunking;
        let slots = Renderer::slots(device, &gpu_model, instance_models, (&plan, strategy), settings)?;
        let uploads = instances::InstanceUploads::new(models, instance_models).map_err(gpu::Error::Other)?;
        let clips = uploads.clip_tables();
        let mesh_draws: Vec<usize> = gpu_model.parts.iter().flat_map(|part| part.mesh_materials.iter().copied()).collect();
        // The passes' pipelines: a driver's first time compiles them (said, with progress).
        let mut progress = progress::Compiling::new(Passes::pipeline_count(device, models, strategy, settings));
        let made_for = PassesFor {
            models,
            gpu_model: &gpu_model,
            slots: &slots,
            plan: &plan,
            clips: &clips,
            strategy,
            settings,
            color_format,
        };
        let MadePasses { passes, skin_inputs, cull_mode } = Passes::build(device, &made_for, &mut progress)?;
        plan.trace = passes.trace.as_ref().map(|trace| trace.plan.clone());

        let command_pool = CommandPool::new(device, "frame.command_pool", vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER)?;
        let command_buffers = command_pool.allocate("frame.command_buffer", FRAMES_IN_FLIGHT as u32)?;
        let mut frames = Vec::new();
        // Each instance's vertices (its model's): the `cpu` strategy's buffers hold them one after another.
        let instance_vertices: Vec<usize> =
            instance_models.iter().map(|&model| gpu_model.parts[model as usize].vertex_count() as usize).collect();
        let vertices = instance_vertices.iter().sum::<usize>() as u64;
        for (slot, &command_buffer) in command_buffers.iter().enumerate() {
            let setup = SlotSetup { slot, command_buffer, strategy, vertices };
            frames.push(FrameSlot::new(device, &setup, &gpu_model, &passes)?);
        }

        let skeleton_only = models.len() == 1 && models[0].vertices.is_empty() && !models[0].skeleton.is_empty();
        let bind_bounds = models.iter().fold(crate::anim::Aabb::EMPTY, |bounds, model| bounds.union(model.rest_bounds()));
        let light_culling = passes.triangles.as_ref().is_some_and(|triangles| triangles.light.is_some());
        Ok(Renderer {
            frames,
            passes,
            bindings: Bindings { skin_inputs, _command_pool: command_pool },
            model: gpu_model,
            targets: None,
            setup: Setup {
                strategy,
                instance_count,
                chunking,
                memory: plan,
                color_format,
                cull_mode,
                mesh_draws,
                runs: slots.runs,
                chunk_vertices: slots.chunk_vertices.clone(),
                instance_models: instance_models.to_vec(),
                bind_bounds,
                skeleton_only,
                dispatch_rows: device.limits().max_compute_work_group_count[1].max(1),
                light_culling,
                animation_lod: settings.animation_lod,
                shadows: settings.shadows,
            },
            debug: DebugViews { skeleton: skeleton_only, ..DebugViews::default() },
            stats: FrameStats::default(),
            cpu_models: if strategy == Strategy::Cpu { models.iter().map(|&model| model.clone()).collect() } else { Vec::new() },
            motion_blur: settings.motion_blur,
            raster: settings.raster,
            write_velocity: false,
            velocity_layout: std::cell::Cell::new(None),
            history: history::FrameHistory::new(strategy == Strategy::Cpu, &instance_vertices),
            uploads,
            upload: instances::Upload::default(),
            frame_index: 0,
            compiling: Some(progress),
            device: device.clone(),
        })
    }

    /// Where each instance lives (`InstanceSlots`), checked against the binding's range: the plan
    /// sized chunks for an even mix, and another mix could overfill one.
    fn slots(
        device: &Device,
        gpu_model: &GpuModel,
        instance_models: &[u32],
        (plan, strategy): (&MemoryPlan, Strategy),
        settings: RenderSettings,
    ) -> gpu::Result<InstanceSlots> {
        let sizes: Vec<SlotSize> = gpu_model
            .parts
            .iter()
            .map(|part| SlotSize {
                vertices: part.vertex_count(),
                palette_slots: part.palette_stride(),
                first_mesh: part.record.first_mesh,
                meshes: part.mesh_count(),
            })
            .collect();
        let slots = InstanceSlots::new(&sizes, instance_models, plan.chunking);
        let range = chunks::binding_range(device, settings);
        // Pooled vertices have the plan's rooms; unpooled, each chunk holds its instances' own.
        let fullest = (strategy == Strategy::Compute && !plan.pools.pooled)
            .then(|| slots.chunk_vertices.iter().map(|&vertices| vertices * std::mem::size_of::<SkinnedVertex>() as u64).max())
            .flatten();
        let most_slots = slots.chunk_palette_slots.iter().map(|&slots| slots * std::mem::size_of::<PaletteMatrix>() as u64).max();
        if let Some(bytes) = fullest.into_iter().chain(most_slots).find(|&bytes| bytes > range) {
            return Err(gpu::Error::Other(format!(
                "a chunk of {} instances takes {bytes} bytes, past maxStorageBufferRange ({range}): the models are not \
                 mixed evenly enough for the plan's chunks",
                plan.chunking.instances_per_chunk
            )));
        }
        Ok(slots)
    }
}
