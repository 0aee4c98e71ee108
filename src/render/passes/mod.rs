//! The frame's passes, one a file, in recording order: `instances` (each instance's data this
//! frame from its record on the GPU and the clock), `cull` (instances against the camera and
//! the light, levels of detail, indirect arguments), `palette` (joint palettes from the clips'
//! keys), `skin` (every kept vertex into the skinned buffer), `triangles` (the camera's
//! back-facing and off-screen triangles culled), `shadow` and `forward` (both drawing from the
//! skinned buffer), `debug` (the debug views), `motion` (motion blur or the motion view from the
//! velocity target), `overlay` (the viewer's panel) and `copy` (an
//! image into a buffer for read-back). `super::frame` records them.

pub mod copy;
pub mod cull;
pub mod debug;
pub mod forward;
pub mod instances;
pub mod motion;
pub mod overlay;
pub mod palette;
pub mod raster;
pub mod shadow;
pub mod skin;
pub mod trace;
pub mod triangles;

use std::sync::Arc;

use ash::vk;

use crate::gpu::{self, commands, Device};
use crate::model::Model;
use crate::render::chunks::{self, largest_heap, InstanceSlots, MemoryPlan};
use crate::render::draw::SkinInputSet;
use crate::render::model_buffers::GpuModel;
use crate::render::progress::Compiling;
use crate::render::{hidden_side, RenderSettings, Shadows, Strategy};
use cull::CullPass;
use debug::{DebugInputs, DebugPass};
use forward::ForwardPass;
use instances::InstancePass;
use motion::MotionPass;
use palette::PalettePass;
use raster::{RasterInputs, RasterPass};
use shadow::ShadowPass;
use skin::{SkinInputs, SkinPass};
use trace::{TraceInputs, TracePass};
use triangles::{TriangleCulling, TriangleInputs};

/// The passes, in recording order, each owning what it writes.
pub struct Passes {
    pub instances: InstancePass,
    pub cull: CullPass,
    pub palette: PalettePass,
    pub skin: SkinPass,
    /// The `compute` strategy's triangle pass (None for the others, and where `triangles::serves`
    /// says no: the forward pass then draws whole instances).
    pub triangles: Option<TriangleCulling>,
    /// The compute rasterizer of the triangle pass's small triangles (`--raster`), where the
    /// triangle pass runs and the device has what it needs (`Device::compute_raster`,
    /// `raster::fits`).
    pub raster: Option<RasterPass>,
    /// `--shadows ray`: the acceleration structures' builds (None with the shadow map).
    pub trace: Option<TracePass>,
    pub shadow: ShadowPass,
    pub forward: ForwardPass,
    pub debug: DebugPass,
    pub motion: MotionPass,
}

/// What the passes are made for: the models in their shared buffers, where each instance lives,
/// the memory plan and the renderer's choices.
pub struct PassesFor<'a> {
    pub models: &'a [&'a Model],
    pub gpu_model: &'a GpuModel,
    pub slots: &'a InstanceSlots,
    pub plan: &'a MemoryPlan,
    /// Every model's clips, which the instance records name, and their root motion
    /// (`InstanceUploads::clip_tables`).
    pub clips: &'a crate::render::instances::ClipTables,
    pub strategy: Strategy,
    pub settings: RenderSettings,
    pub color_format: vk::Format,
}

/// The passes, and what they made that the renderer keeps beside them.
pub struct MadePasses {
    pub passes: Passes,
    /// The skin-inputs set (`Bindings::skin_inputs`).
    pub skin_inputs: Option<SkinInputSet>,
    /// The side of the triangles the shadow and forward passes cull.
    pub cull_mode: vk::CullModeFlags,
}

impl Passes {
    /// Every pass for `made_for`, each counted in `progress` as its pipelines are made (a driver's
    /// first time compiles them).
    pub fn build(device: &Arc<Device>, made_for: &PassesFor<'_>, progress: &mut Compiling) -> gpu::Result<MadePasses> {
        let PassesFor { models, gpu_model, slots, plan, clips, strategy, settings, color_format } = *made_for;
        let instances = InstancePass::new(device, slots.slots.len() as u32, clips)?;
        progress.made("instances");
        let tuning = SkinPass::tuning(device, settings.skin)?;
        let triangles_run = triangles_run(device, models, strategy);
        let tracing = settings.shadows == Shadows::Ray;
        let cull = CullPass::new(device, slots, plan.pools, tuning.workgroup_size, tracing)?;
        progress.made("cull");
        let palette = PalettePass::new(device, slots, gpu_model)?;
        progress.made("palette");
        let skin_inputs = SkinInputs {
            source_vertices: &gpu_model.source_vertices,
            influences: &gpu_model.influences,
            influence_offsets: &gpu_model.influence_offsets,
            palettes: &palette.palettes,
            work_groups: &cull.work_groups,
            counters: &cull.counters,
            models: &gpu_model.models,
            morph_targets: &gpu_model.morph_targets,
            morph_deltas: &gpu_model.morph_deltas,
        };
        // Each chunk's skinned vertices: its pool, or (unpooled) its instances' rooms.
        let chunk_vertices = match plan.pools.pooled {
            true => vec![plan.pools.vertex_room; slots.chunk_vertices.len()],
            false => slots.chunk_vertices.clone(),
        };
        let skin = SkinPass::new(device, &chunk_vertices, strategy == Strategy::Compute, tuning, &skin_inputs)?;
        progress.made("skin");
        // The `vertex` strategy's shadow and forward vertex shaders skin from this set; the
        // `compute` strategy's forward vertex shader skins previous positions from it.
        let skin_inputs = match strategy {
            Strategy::Cpu => None,
            _ => Some(SkinInputSet::new(device, gpu_model, &palette.palettes, (&cull.motions, &cull.instance_slots))?),
        };
        let skin_inputs_layout = skin_inputs.as_ref().map(|inputs| &inputs.layout);
        let vertex_skinning_layout = skin_inputs_layout.filter(|_| strategy == Strategy::Vertex);
        // Models facing different ways are drawn two-sided: each side of a triangle may be seen.
        let sides: Vec<vk::CullModeFlags> = models.iter().map(|model| hidden_side(model.facing())).collect();
        let cull_mode = if sides.iter().all(|&side| side == sides[0]) { sides[0] } else { vk::CullModeFlags::NONE };
        let shadow = ShadowPass::new(device, vertex_skinning_layout, cull_mode)?;
        progress.made("shadow");
        let forward = ForwardPass::new(
            device,
            color_format,
            (strategy, skin_inputs_layout),
            (cull_mode, settings.shadows),
            &gpu_model.materials,
        )?;
        progress.made("forward");
        let motion = MotionPass::new(device, color_format)?;
        progress.made("motion");
        let debug_inputs = DebugInputs {
            joint_positions: &palette.joint_positions,
            joint_parents: &gpu_model.joint_parents,
            skin_list: &cull.skin_list,
            boxes: &cull.debug_boxes,
            shadow_view: shadow.depth.view,
        };
        let debug = DebugPass::new(device, color_format, &forward.frame_set_layout, cull_mode, &debug_inputs)?;
        progress.made("debug");
        let raster = match triangles_run && device.compute_raster && raster::fits(device, plan.chunking.chunk_count) {
            true => {
                let mesh_materials: Vec<usize> =
                    gpu_model.parts.iter().flat_map(|part| part.mesh_materials.iter().copied()).collect();
                let inputs = RasterInputs {
                    model: gpu_model,
                    skinned: &skin.skinned,
                    counters: &cull.counters,
                    mesh_materials: &mesh_materials,
                    frame_set_layout: &forward.frame_set_layout,
                    skin_inputs_layout: skin_inputs_layout
                        .ok_or_else(|| gpu::Error::Other("the raster resolve needs the skin inputs".into()))?,
                    pool_triangles: plan.pools.index_room * u64::from(plan.chunking.chunk_count) / 3,
                    color_format,
                    shadows: settings.shadows,
                    light: plan.light_culling,
                    facing_sign: triangles::facing_sign(cull_mode),
                };
                let raster = RasterPass::new(device, &inputs)?;
                progress.made("raster");
                Some(raster)
            }
            false => None,
        };
        let triangles = match triangles_run {
            true => {
                let inputs = TriangleInputs {
                    model: gpu_model,
                    skinned: &skin.skinned,
                    work_groups: &cull.work_groups,
                    counters: &cull.counters,
                    instance_slots: &cull.instance_slots,
                    commands: slots.commands,
                    index_room: plan.pools.index_room,
                    chunking: plan.chunking,
                    raster_lists: raster.as_ref().map(RasterPass::lists),
                };
                let triangles = TriangleCulling::new(device, &inputs, cull_mode, forward::SAMPLES, plan.light_culling)?;
                progress.made("triangles");
                Some(triangles)
            }
            false => None,
        };
        let trace = match tracing {
            true => Some(Passes::trace(device, made_for, &skin, progress)?),
            false => None,
        };
        let passes = Passes { instances, cull, palette, skin, triangles, raster, trace, shadow, forward, debug, motion };
        Ok(MadePasses { passes, skin_inputs, cull_mode })
    }

    /// `--shadows ray`: the structures in what the heap has left after the plan's instances.
    fn trace(
        device: &Arc<Device>,
        made_for: &PassesFor<'_>,
        skin: &SkinPass,
        progress: &mut Compiling,
    ) -> gpu::Result<TracePass> {
        let PassesFor { gpu_model, slots, plan, strategy, settings, .. } = *made_for;
        let heap = largest_heap(device).min(settings.heap.unwrap_or(u64::MAX));
        let budget = ((heap as f64 * chunks::HEAP_SHARE) as u64).saturating_sub(plan.instance_bytes);
        let per_chunk = plan.chunking.instances_per_chunk;
        let inputs = TraceInputs { model: gpu_model, slots: &slots.slots, instances_per_chunk: per_chunk, budget };
        let trace = TracePass::new(device, &inputs)?;
        progress.made("trace");
        // Skinned vertices no frame has written yet are zeros, not whatever the memory held: a
        // structure built from them and refit later stays valid.
        if strategy == Strategy::Compute {
            commands::submit_once(device, "zero skinned_vertices", |command_buffer| {
                for chunk in &skin.skinned {
                    unsafe { device.raw.cmd_fill_buffer(command_buffer, chunk.raw, 0, vk::WHOLE_SIZE, 0) };
                }
            })?;
        }
        Ok(trace)
    }

    /// Pipelines `Passes::build` makes for these choices (what `Compiling` counts).
    pub fn pipeline_count(device: &Device, models: &[&Model], strategy: Strategy, settings: RenderSettings) -> usize {
        let triangles = triangles_run(device, models, strategy);
        8 + usize::from(triangles)
            + usize::from(triangles && device.compute_raster)
            + usize::from(settings.shadows == Shadows::Ray)
    }
}

/// Whether the triangle pass runs: the `compute` strategy, one model, and one it serves.
fn triangles_run(device: &Device, models: &[&Model], strategy: Strategy) -> bool {
    strategy == Strategy::Compute && models.len() == 1 && triangles::serves(device, models[0])
}
