//! What the frames measured: each pass's GPU time, what the cull pass kept, the barrier calls a
//! frame made, and the cull pass's output read back for tests.

use super::recorder::BarrierCall;
use super::shader_types::{CullCounters, DrawCommand};

/// The cull pass's output as `Renderer::read_back_culling` returns it.
pub struct CullReadback {
    pub counters: CullCounters,
    /// The instances kept for skinning, in the order the pass found them.
    pub skin_list: Vec<u32>,
    /// The instances whose palettes the palette pass computed, in the order the pass listed them.
    pub palette_list: Vec<u32>,
    /// The draw commands, run by run and mesh by mesh (`DrawRun`); the first
    /// `draw_counts[2 × run]` (camera) or `draw_counts[2 × run + 1]` (light) of each run's list
    /// are live.
    pub camera_draws: Vec<DrawCommand>,
    pub light_draws: Vec<DrawCommand>,
    pub draw_counts: Vec<u32>,
}

/// What the cull pass kept in one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VisibleCounts {
    /// Instances animated and skinned: seen by the camera or the light.
    pub skinned: u32,
    /// Instances drawn by the forward pass.
    pub camera: u32,
    /// Instances drawn into the shadow map.
    pub light: u32,
    /// Instances drawn a level coarser than their own (or at their coarsest): the frame asked
    /// more of a pool than it holds (`MemoryPlan::pools`).
    pub coarser: u32,
    /// Instances not drawn at all: not even their coarsest level fitted.
    pub not_drawn: u32,
    /// Skinned vertices the frame placed in the pools, and culled indices (both views).
    pub placed_vertices: u32,
    pub placed_indices: u32,
    /// What each rasterizer took (`--raster`).
    pub raster: RasterCounts,
}

/// The triangles each rasterizer took in one frame, and the samples each drew: the compute one's
/// covered (each sample of each triangle, whatever the depth test made of it), the hardware's that
/// passed the depth test; the camera's (4 samples a pixel) and the shadow map's (a texel each,
/// compute only). Triangle counts are zero without the triangle pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RasterCounts {
    pub camera_hardware: u32,
    /// Samples the forward pass's model draws wrote (each that passed the depth test, overdraw
    /// included; an occlusion query): the hardware path's, where the device counts them exactly.
    pub camera_hardware_samples: Option<u64>,
    pub camera_compute: u32,
    pub camera_samples: u32,
    pub light_hardware: u32,
    pub light_compute: u32,
    pub light_texels: u32,
}

impl RasterCounts {
    /// What each rasterizer took in a frame whose counts are `counts`, the raster lists holding
    /// `room` entries each (those past it went to the hardware, and were counted there), and the
    /// hardware's samples where they were counted.
    pub fn of(counts: &CullCounters, room: u32, camera_hardware_samples: Option<u64>) -> RasterCounts {
        RasterCounts {
            camera_hardware: counts.raster_counts[2],
            camera_hardware_samples,
            camera_compute: counts.raster[0][3].min(room),
            camera_samples: counts.raster_counts[0],
            light_hardware: counts.raster_counts[3],
            light_compute: counts.raster[1][3].min(room),
            light_texels: counts.raster_counts[1],
        }
    }
}

/// GPU time of each pass of one frame, in milliseconds, from timestamp queries. On lavapipe these
/// are CPU clock readings around the software rasterizer's work.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassTimings {
    pub milliseconds: Vec<(&'static str, f64)>,
}

impl PassTimings {
    pub fn total(&self) -> f64 {
        self.milliseconds.iter().map(|(_, ms)| ms).sum()
    }

    pub fn get(&self, pass: &str) -> Option<f64> {
        self.milliseconds.iter().find(|(name, _)| *name == pass).map(|&(_, ms)| ms)
    }
}

/// What the frames measured: the newest ones whose results have come back.
#[derive(Default)]
pub struct FrameStats {
    pub frames_rendered: u64,
    /// Per-pass GPU times.
    pub timings: Option<PassTimings>,
    /// What the cull pass kept.
    pub visible: Option<VisibleCounts>,
    /// The barrier calls the last recorded frame made, in words (`recorder::barrier_table`).
    pub barriers: Vec<BarrierCall>,
    /// Milliseconds the CPU spent skinning the last frame (`cpu` strategy), all threads together
    /// on the wall clock.
    pub cpu_skinning_ms: f64,
    /// Instance records the last frame wrote (those that changed: every one on a renderer's first
    /// frame, none in a steady scene).
    pub records_uploaded: u32,
    /// Milliseconds the CPU spent on the last frame's commands: its slot's records written (not
    /// the `cpu` strategy's skinning) and its command buffer recorded, from after its slot's
    /// fence and timings to before its submit.
    pub record_ms: f64,
}
