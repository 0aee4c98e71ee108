//! `vkskin bench`: every skinning strategy at every instance count, headless, in one run, on one
//! device, with a bandwidth reference. Figures are medians and 95th percentiles over the measured
//! frames; compare them as ratios within one run (the machine is shared and noisy). The report's
//! table, JSON, CSV and plots: `report.rs`.

use std::path::PathBuf;

use serde_json::{json, Value};

mod report;
mod run;

pub use run::run;

use crate::anim::Skinning;
use crate::app::imagediff::ImageDifference;
use crate::app::SceneSetup;
use crate::model::Model;
use crate::render::shader_types::{SkinnedVertex, SourceVertex};
use crate::render::{Raster, Shadows, Strategy, VisibleCounts};

pub struct BenchOptions {
    pub counts: Vec<usize>,
    pub strategies: Vec<Strategy>,
    /// With several models: rows of their mixed crowd (true) and of the first model alone (false),
    /// in the order to run them.
    pub mixes: Vec<bool>,
    /// Levels of detail off (false) and on (true), in the order to run them.
    pub lods: Vec<bool>,
    /// The triangle pass's light run off and on (`compute` only; where the memory plan has room).
    pub light_culling: Vec<bool>,
    /// Animation LOD off and on (`Setup::animation_lod`, at `ANIMATION_LOD_PIXELS`).
    pub animation_lod: Vec<bool>,
    /// Morph targets as the clips weigh them (true) or held at 0 (false); a model without
    /// targets runs once, as `true`.
    /// Instance i plays the i-th clip that moves (`SceneSetup::play_every_clip`), not `clip`.
    pub crowd: bool,
    /// Instances varied in phase, speed, size and colours (`SceneSetup::new`), or copies
    /// (`SceneSetup::uniform`).
    pub variety: bool,
    /// Clips compressed (true) or the files' keys (false); empty: as the model comes.
    pub clip_compression: Vec<bool>,
    pub morph: Vec<bool>,
    /// The clip every instance plays (None: the default clip, `Model::default_clip`, each instance at
    /// its own phase).
    pub clip: Option<usize>,
    /// Skinning modes, each a row (`Skinning::Linear` alone when empty).
    pub skinning: Vec<Skinning>,
    /// Motion blur off and on (the motion pass; off alone when empty).
    pub motion_blur: Vec<bool>,
    /// Shadows from the map and traced (`--shadows map,ray`; the map alone when empty). The
    /// `vertex` strategy has no skinned buffer to trace: its rows are the map's alone.
    pub shadows: Vec<Shadows>,
    /// Rasterizers (`--raster`; auto alone when empty). `compute` rows only: the others draw with
    /// the hardware's.
    pub raster: Vec<Raster>,
    pub warmup: u32,
    pub frames: u32,
    pub size: (u32, u32),
    pub out: PathBuf,
    pub validation: bool,
}

/// Median and 95th percentile of a set of samples, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub median: f64,
    pub p95: f64,
}

impl Stats {
    pub fn of(samples: &[f64]) -> Stats {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|value| value.is_finite()).collect();
        if sorted.is_empty() {
            return Stats { median: f64::NAN, p95: f64::NAN };
        }
        sorted.sort_by(f64::total_cmp);
        let at = |quantile: f64| sorted[((sorted.len() - 1) as f64 * quantile).round() as usize];
        Stats { median: at(0.5), p95: at(0.95) }
    }

    fn to_json(self) -> Value {
        json!({ "median": finite(self.median), "p95": finite(self.p95) })
    }
}

pub(crate) fn finite(value: f64) -> Value {
    if value.is_finite() {
        json!(value)
    } else {
        Value::Null
    }
}

/// One strategy at one instance count.
#[derive(Clone, Debug)]
pub struct BenchRow {
    pub strategy: Strategy,
    pub instances: usize,
    /// The crowd drawn (`SceneSetup::mix`): a model's name, or the models and their counts.
    pub models: String,
    /// Vertices an instance has, on average over the crowd's instances.
    pub vertices: f64,
    /// Levels of detail on.
    pub lod: bool,
    /// The shadow pass drew the triangle pass's light run.
    pub light_culling: bool,
    /// Far instances' palettes every 2nd, 4th or 8th frame.
    pub animation_lod: bool,
    /// The clips played compressed (`anim::compress`); false: the files' keys.
    pub clip_compression: bool,
    /// Morph targets as the clips weigh them; false: held at weight 0 (no target active).
    pub morph: bool,
    /// Active morph targets (non-zero weight) per instance, averaged over the instances in the
    /// last measured frame (the CPU mirror of the palette pass's lists).
    pub active_targets: f64,
    /// How the instances blended their joints.
    pub skinning: Skinning,
    /// The motion pass made the image (motion blur).
    pub motion_blur: bool,
    /// Shadows from the map or traced.
    pub shadows: Shadows,
    /// The rasterizer that drew the model (hardware where the renderer has no raster pass).
    pub raster: Raster,
    /// Traced: the triangles of the last measured frame's bottom-level builds, refit and rebuilt.
    pub traced_triangles: (u64, u64),
    /// With levels of detail or animation LOD on, the last frame against the same frame at full
    /// detail (both off, the same light culling; when the run has it).
    pub image_difference: Option<ImageDifference>,
    /// Why the count was not run (limits, memory); None when it ran.
    pub skipped: Option<String>,
    /// Wall time per frame on the CPU, submit to submit, with frames in flight (the frame rate).
    pub frame_wall: Stats,
    /// Sum of the passes' GPU times per frame.
    pub frame_gpu: Stats,
    pub passes: Vec<(&'static str, Stats)>,
    /// The `cpu` strategy's skinning time per frame.
    pub cpu_skinning: Stats,
    /// The CPU's time to write a frame's records and record its commands (`FrameStats::record_ms`).
    pub record: Stats,
    /// The instance records the CPU wrote in a measured frame, at most (`FrameStats::records_uploaded`;
    /// 0 in a steady scene: the warm-up's first frame wrote them all).
    pub records_written: u32,
    /// The bandwidth reference: a copy moving the bytes the skin pass streams at this count (GPU
    /// timestamps), and the same copies' wall time, submit to fence.
    pub copy: Stats,
    pub copy_wall: Stats,
    /// A second reference: a copy of every byte the skin pass loads and stores, the palette rows it
    /// gathers (from cache) and the kept-instance index included (GPU timestamps).
    pub copy_touched: Stats,
    pub bytes_per_instance: u64,
    /// The skinned-vertex pools' room in all (`Pools`): the fill is `visible.placed_vertices` over it.
    pub pool_vertices: u64,
    /// What the cull pass kept in the last measured frame.
    pub visible: Option<VisibleCounts>,
}

impl BenchRow {
    pub fn pass(&self, name: &str) -> Stats {
        self.passes.iter().find(|(pass, _)| *pass == name).map_or(Stats { median: f64::NAN, p95: f64::NAN }, |&(_, stats)| stats)
    }

    /// Skin pass ÷ copy reference (compute strategy, every vertex skinned: levels of detail off).
    pub fn skin_copy_ratio(&self) -> f64 {
        match self.strategy {
            Strategy::Compute if !self.lod => self.pass("skin").median / self.copy.median,
            _ => f64::NAN,
        }
    }

    /// Skin pass ÷ the copy of every byte it touches (compute strategy): near 1 when the skin pass
    /// costs what its loads and stores cost, whichever memory they hit.
    pub fn skin_copy_touched_ratio(&self) -> f64 {
        match self.strategy {
            Strategy::Compute if !self.lod => self.pass("skin").median / self.copy_touched.median,
            _ => f64::NAN,
        }
    }

    /// The time that skins (`compute`: the skin pass; `cpu`: the CPU's skinning; `vertex`: the
    /// shadow and forward passes, which skin in their vertex shaders), in milliseconds.
    pub fn skinning_ms(&self) -> f64 {
        match self.strategy {
            Strategy::Compute => self.pass("skin").median,
            Strategy::Cpu => self.cpu_skinning.median,
            Strategy::Vertex => self.pass("shadow").median + self.pass("forward").median,
        }
    }

    /// Vertices animated per second of frame (wall) time: comparable across strategies.
    pub fn vertices_per_second(&self) -> f64 {
        self.instances as f64 * self.vertices / (self.frame_wall.median / 1e3)
    }

    /// Vertices per second of skinning work alone: the skin pass (compute) or the CPU's (cpu).
    pub fn skinned_vertices_per_second(&self) -> f64 {
        // The vertex strategy's passes rasterize too: no time of skinning alone.
        let milliseconds = if self.strategy == Strategy::Vertex { f64::NAN } else { self.skinning_ms() };
        self.instances as f64 * self.vertices / (milliseconds / 1e3)
    }

    /// The share of the skinned-vertex pools the last measured frame placed (NaN without pools).
    pub fn pool_fill(&self) -> f64 {
        match (self.visible, self.pool_vertices) {
            (Some(visible), rooms) if rooms > 0 => f64::from(visible.placed_vertices) / rooms as f64,
            _ => f64::NAN,
        }
    }
}

pub struct BenchReport {
    pub device: String,
    pub driver: String,
    pub resolution: (u32, u32),
    pub model: String,
    pub vertex_count: usize,
    pub joint_count: usize,
    pub target_count: usize,
    /// The model's influences, every vertex's together.
    pub influence_count: usize,
    /// The model's clips: how many, and the bytes of keys the palette pass reads for them, which
    /// every instance shares (`Animation::gpu_bytes`), beside each row's bytes per instance.
    pub clip_count: usize,
    pub clip_bytes: u64,
    /// The same clips as the files' keys (equal to `clip_bytes` with compression off).
    pub clip_key_bytes: u64,
    pub frames: u32,
    pub warmup: u32,
    /// The instances varied (`BenchOptions::variety`).
    pub variety: bool,
    pub rows: Vec<BenchRow>,
}

/// Bytes the skin pass streams per instance: source vertices and influences read, skinned
/// vertices written. Palette reads are left out: a few kilobytes per instance that stay in cache.
fn skin_stream_bytes(model: &Model) -> u64 {
    let sources = model.vertices.len() * std::mem::size_of::<SourceVertex>();
    let influences = model.influences.len() * 8;
    let written = model.vertices.len() * std::mem::size_of::<SkinnedVertex>();
    (sources + influences + written) as u64
}

/// Bytes the skin pass loads and stores per instance: what it streams (`skin_stream_bytes`), plus
/// the palette rows it gathers for every influence (48 bytes) and the kept-instance index each
/// invocation reads (4 bytes a vertex).
fn skin_touched_bytes(model: &Model) -> u64 {
    let palette_reads = model.influences.len() * std::mem::size_of::<crate::render::shader_types::PaletteMatrix>();
    skin_stream_bytes(model) + (palette_reads + model.vertices.len() * 4) as u64
}

/// GPU memory one instance costs (`MemoryPlan`): skinned vertices, palettes, parameters, draws (the cpu
/// strategy holds a host-visible copy of the skinned vertices per frame in flight instead).
fn bytes_per_instance(model: &Model, strategy: Strategy) -> u64 {
    crate::render::MemoryPlan::for_limits(
        crate::render::chunks::Shape::of(model),
        crate::render::chunks::PlanChoices::new(strategy),
        1,
        crate::render::PlanLimits { binding: u64::MAX >> 1, heap: u64::MAX >> 1, dispatch_rows: u32::MAX },
    )
    .bytes_per_instance
}

/// Active morph targets per instance at `seconds`, averaged over the instances: what the palette
/// pass lists, from its CPU mirror.
fn active_targets(setup: &SceneSetup, seconds: f64) -> f64 {
    if setup.models().iter().all(|model| model.morph_targets.is_empty()) {
        return 0.0;
    }
    let instances = setup.instance_data(seconds);
    let active: usize = instances
        .iter()
        .enumerate()
        .map(|(index, data)| {
            let weights = crate::render::reference::reference_weights(setup.model_of(index), data, &setup.morph_overrides);
            weights.iter().filter(|&&weight| weight != 0.0).count()
        })
        .sum();
    active as f64 / instances.len().max(1) as f64
}

/// The morph's cost per vertex per active target, in nanoseconds, from each pair of rows that
/// differ only in morphing on and off: (strategy, instances, lod, nanoseconds) where the rows with
/// it on have active targets.
pub fn morph_costs(report: &BenchReport) -> Vec<(Strategy, usize, bool, f64)> {
    let mut costs = Vec::new();
    for on in report
        .rows
        .iter()
        .filter(|row| row.morph && row.skipped.is_none() && row.active_targets > 0.0 && row.models == report.model)
    {
        let off = report.rows.iter().find(|off| {
            !off.morph
                && off.models == on.models
                && off.skipped.is_none()
                && (off.shadows, off.raster) == (on.shadows, on.raster)
                && (off.strategy, off.instances, off.lod, off.light_culling, off.animation_lod, off.skinning, off.motion_blur)
                    == (on.strategy, on.instances, on.lod, on.light_culling, on.animation_lod, on.skinning, on.motion_blur)
        });
        if let Some(off) = off {
            let work = on.instances as f64 * on.vertices * on.active_targets;
            costs.push((on.strategy, on.instances, on.lod, (on.skinning_ms() - off.skinning_ms()) * 1e6 / work));
        }
    }
    costs
}

/// What tracing costs, from each traced row and the row with the shadow map that differs only in
/// that: the bottom levels' builds per triangle (ns) and against the same frame's skinning (the
/// skin pass, or the `cpu` strategy's on the CPU; with levels of detail off both take every vertex
/// of every instance), the top level's build
/// per instance (µs), and the ray queries per pixel (ns: the forward pass traced less mapped).
#[derive(Clone, Copy, Debug)]
pub struct TraceCost {
    pub strategy: Strategy,
    pub instances: usize,
    pub lod: bool,
    pub blas_ns_per_triangle: f64,
    pub blas_over_skin: f64,
    pub tlas_us_per_instance: f64,
    pub ray_ns_per_pixel: f64,
}

pub fn trace_costs(report: &BenchReport) -> Vec<TraceCost> {
    let pixels = f64::from(report.resolution.0) * f64::from(report.resolution.1);
    let mut costs = Vec::new();
    for ray in report.rows.iter().filter(|row| row.shadows == Shadows::Ray && row.skipped.is_none()) {
        let map = report.rows.iter().find(|map| {
            map.shadows == Shadows::Map
                && map.raster == ray.raster
                && map.skipped.is_none()
                && map.models == ray.models
                && (map.strategy, map.instances, map.lod, map.animation_lod, map.morph, map.skinning, map.motion_blur)
                    == (ray.strategy, ray.instances, ray.lod, ray.animation_lod, ray.morph, ray.skinning, ray.motion_blur)
        });
        let triangles = (ray.traced_triangles.0 + ray.traced_triangles.1).max(1) as f64;
        costs.push(TraceCost {
            strategy: ray.strategy,
            instances: ray.instances,
            lod: ray.lod,
            blas_ns_per_triangle: ray.pass("blas").median * 1e6 / triangles,
            blas_over_skin: ray.pass("blas").median / ray.skinning_ms(),
            tlas_us_per_instance: ray.pass("tlas").median * 1e3 / ray.instances.max(1) as f64,
            ray_ns_per_pixel: map
                .map_or(f64::NAN, |map| (ray.pass("forward").median - map.pass("forward").median) * 1e6 / pixels),
        });
    }
    costs
}

/// The palette pass per joint-instance, in nanoseconds, of each pair of rows that differ only in
/// clip compression (animation LOD off, so every kept instance's palette is computed):
/// (strategy, instances, compressed, keys).
pub fn palette_costs(report: &BenchReport) -> Vec<(Strategy, usize, f64, f64)> {
    let per_joint_instance =
        |row: &BenchRow| row.pass("palette").median * 1e6 / (row.instances * report.joint_count.max(1)) as f64;
    let mut costs = Vec::new();
    // The first model's rows alone: the joint count is its.
    for on in report
        .rows
        .iter()
        .filter(|row| row.clip_compression && row.skipped.is_none() && !row.animation_lod && row.models == report.model)
    {
        let off = report.rows.iter().find(|off| {
            !off.clip_compression
                && off.models == on.models
                && off.skipped.is_none()
                && (off.shadows, off.raster) == (on.shadows, on.raster)
                && (
                    off.strategy,
                    off.instances,
                    off.lod,
                    off.light_culling,
                    off.animation_lod,
                    off.morph,
                    off.skinning,
                    off.motion_blur,
                ) == (
                    on.strategy,
                    on.instances,
                    on.lod,
                    on.light_culling,
                    on.animation_lod,
                    on.morph,
                    on.skinning,
                    on.motion_blur,
                )
        });
        if let (Some(off), true) = (off, on.strategy != Strategy::Cpu) {
            costs.push((on.strategy, on.instances, per_joint_instance(on), per_joint_instance(off)));
        }
    }
    costs
}

/// Each row's skinning cost per vertex-influence, in nanoseconds: the time that skins
/// (`BenchRow::skinning_ms`) over instances × the model's influences, for rows at full detail
/// (levels of detail off, so every influence is skinned): (strategy, instances, mode, nanoseconds).
pub fn skinning_costs(report: &BenchReport) -> Vec<(Strategy, usize, Skinning, f64)> {
    report
        .rows
        .iter()
        .filter(|row| row.skipped.is_none() && !row.lod && row.morph && row.models == report.model)
        .map(|row| {
            let work = (row.instances * report.influence_count) as f64;
            (row.strategy, row.instances, row.skinning, row.skinning_ms() * 1e6 / work)
        })
        .collect()
}

pub(crate) fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// A one-line text progress bar for stderr.
pub fn progress_bar(done: usize, total: usize, what: &str, elapsed: std::time::Duration) -> String {
    let width = 24;
    let filled = (done * width).checked_div(total).unwrap_or(width);
    // Time left, from the rows so far (rows of one run take about as long as each other).
    let left = match done {
        0 => String::new(),
        _ => {
            let seconds = elapsed.as_secs_f64() / done as f64 * total.saturating_sub(done) as f64;
            format!(
                ", about {} left",
                if seconds < 90.0 { format!("{seconds:.0} s") } else { format!("{:.0} min", seconds / 60.0) }
            )
        }
    };
    format!("\r[{}{}] {done}/{total}{left}: {what:<24}", "#".repeat(filled), "-".repeat(width - filled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_median_and_95th_percentile() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let stats = Stats::of(&samples);
        assert_eq!(stats.median, 51.0);
        assert_eq!(stats.p95, 95.0);
        assert!(Stats::of(&[]).median.is_nan());
        let bar = progress_bar(1, 4, "x", std::time::Duration::from_secs(20));
        assert_eq!(bar.matches('#').count(), 6);
        assert!(bar.contains("about 60 s left"), "{bar}");
    }
}
