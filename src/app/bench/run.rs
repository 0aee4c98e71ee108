//! The campaign `vkskin bench` runs: the copy references first, then a row per count, strategy and
//! variant (levels of detail, light culling, animation LOD, morph targets, skinning mode, motion
//! blur), each measured over its frames and, where variants are compared, its last frame's image
//! held against the same row at full detail.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use image::RgbaImage;

use super::{active_targets, bytes_per_instance, on_off, skin_stream_bytes, skin_touched_bytes};
use super::{BenchOptions, BenchReport, BenchRow, Stats};
use crate::anim::Skinning;
use crate::app::capture::FrameCapture;
use crate::app::imagediff::ImageDifference;
use crate::app::{headless_device, HeadlessRenderer, SceneSetup};
use crate::gpu::Device;
use crate::model::Model;
use crate::render::passes::copy::CopyPass;
use crate::render::{MemoryPlan, Pass, Raster, RenderSettings, Shadows, Strategy};

/// Runs the whole campaign. `progress` gets (done, total, what is running now).
/// `capture`: RenderDoc, to capture one frame of the run (counted over every strategy and count,
/// warm-up frames included).
/// `models`: the crowd's (one, or several mixed: `BenchOptions::mixes`); the first is the
/// report's model and the copy references'.
pub fn run(
    models: &[Model],
    options: &BenchOptions,
    capture: Option<&mut FrameCapture>,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<BenchReport, String> {
    let model = models.first().ok_or("no model to bench")?;
    let device = headless_device(options.validation).map_err(|error| error.to_string())?;
    let total: usize = options.counts.len()
        * options.strategies.iter().map(|&strategy| variants(options, models, strategy).len()).sum::<usize>();
    let full: Vec<Model> = models
        .iter()
        .map(|model| {
            let mut full = model.clone();
            full.levels.clear();
            full
        })
        .collect();
    // A model opened with its levels (the CLI's) keeps them; one without gets them here.
    let levelled: Vec<Model> = models
        .iter()
        .zip(&full)
        .map(|(model, full)| match options.lods.contains(&true) {
            true if !model.levels.is_empty() => model.clone(),
            true => crate::model::lod::with_levels(model),
            false => full.clone(),
        })
        .collect();
    // The same models playing the files' keys, for rows with compression off.
    let keys_of = |models: &[Model]| -> Vec<Model> {
        models
            .iter()
            .map(|model| {
                let mut keys = model.clone();
                keys.animations.iter_mut().for_each(|animation| animation.compressed = None);
                keys
            })
            .collect()
    };
    let keys = options.clip_compression.contains(&false).then(|| (keys_of(&full), keys_of(&levelled)));
    let copies = CopyReferences::measure(&device, model, options, |what| progress(0, total, what))?;
    let mut rows: Vec<BenchRow> = Vec::new();
    let mut comparisons =
        Comparisons { compared: options.lods.len() > 1 || options.animation_lod.len() > 1, ..Default::default() };
    let mut frames = (capture, 0u64);
    for &instances in &options.counts {
        for (strategy_index, &strategy) in options.strategies.iter().enumerate() {
            for variant in variants(options, models, strategy) {
                let (full, levelled) = match &keys {
                    Some((full_keys, levelled_keys)) if !variant.compressed => (full_keys, levelled_keys),
                    _ => (&full, &levelled),
                };
                let crowd = if variant.lod { levelled } else { full };
                // The mix, or the first model alone.
                let crowd = if variant.mixed { &crowd[..] } else { &crowd[..1] };
                progress(rows.len(), total, &variant.describe(strategy, instances));
                let mut row = variant.row(strategy, instances, &crowd[0], &copies);
                let image = measure(&device, crowd, options, (strategy, variant), &mut frames, &mut row, comparisons.compared)?;
                if let Some(image) = image {
                    let key = (
                        instances,
                        variant.mixed,
                        strategy_index,
                        variant.light,
                        variant.morph,
                        variant.skinning as usize,
                        variant.blur,
                        variant.compressed,
                        variant.raster as usize,
                    );
                    comparisons.add(&mut rows, &mut row, key, image, !variant.lod && !variant.animation_lod);
                }
                rows.push(row);
            }
        }
    }
    progress(total, total, "done");
    let counts = device.instance.message_counts();
    if options.validation && counts.errors + counts.warnings > 0 {
        return Err(format!("the validation layer reported {} errors and {} warnings", counts.errors, counts.warnings));
    }
    Ok(BenchReport {
        device: device.name(),
        driver: device.driver_name.trim().to_string(),
        resolution: options.size,
        model: model.name.clone(),
        vertex_count: model.vertices.len(),
        joint_count: model.skeleton.len(),
        target_count: model.morph_targets.len(),
        influence_count: model.influences.len(),
        clip_count: model.clips.len(),
        clip_bytes: model
            .animations
            .iter()
            .map(|animation| animation.gpu_bytes(model.skeleton.len(), model.morph_targets.len()) as u64)
            .sum(),
        clip_key_bytes: model
            .animations
            .iter()
            .map(|animation| animation.key_gpu_bytes(model.skeleton.len(), model.morph_targets.len()) as u64)
            .sum(),
        frames: options.frames,
        warmup: options.warmup,
        variety: options.variety,
        rows,
    })
}

/// One configuration a strategy runs in.
#[derive(Clone, Copy)]
struct Variant {
    /// Several models mixed (false: the first alone).
    mixed: bool,
    lod: bool,
    compressed: bool,
    light: bool,
    animation_lod: bool,
    morph: bool,
    skinning: Skinning,
    blur: bool,
    shadows: Shadows,
    raster: Raster,
}

/// Every variant the options ask of `strategy`: each option's values (its default where none is
/// given), less what the strategy cannot run (only `compute` has a triangle pass, and `cpu` no
/// palette pass); morph targets on and off only for a model that has some.
fn variants(options: &BenchOptions, models: &[Model], strategy: Strategy) -> Vec<Variant> {
    let or = |given: &[bool], default: bool| if given.is_empty() { vec![default] } else { given.to_vec() };
    let mixes = if models.len() > 1 { or(&options.mixes, true) } else { vec![false] };
    let lods = or(&options.lods, false);
    let lights = if strategy == Strategy::Compute { or(&options.light_culling, true) } else { vec![false] };
    let animation_lods = if strategy == Strategy::Cpu { vec![false] } else { or(&options.animation_lod, false) };
    let morphs = if models.iter().all(|model| model.morph_targets.is_empty()) { vec![true] } else { or(&options.morph, true) };
    let skinnings = if options.skinning.is_empty() { vec![Skinning::Linear] } else { options.skinning.clone() };
    let blurs = or(&options.motion_blur, false);
    let shadows = match (options.shadows.is_empty(), strategy) {
        (true, _) | (_, Strategy::Vertex) => vec![Shadows::Map],
        (false, _) => options.shadows.clone(),
    };
    let rasters = match (options.raster.is_empty(), strategy) {
        (_, Strategy::Vertex | Strategy::Cpu) => vec![Raster::Hardware],
        (true, Strategy::Compute) => vec![Raster::Auto],
        (false, Strategy::Compute) => options.raster.clone(),
    };
    let compressions = if strategy == Strategy::Cpu {
        vec![*options.clip_compression.first().unwrap_or(&true)]
    } else {
        or(&options.clip_compression, true)
    };
    let mut variants = Vec::new();
    for &mixed in &mixes {
        for &compressed in &compressions {
            for &lod in &lods {
                for &light in &lights {
                    for &animation_lod in &animation_lods {
                        for &morph in &morphs {
                            for &skinning in &skinnings {
                                for (&blur, &shadows) in
                                    blurs.iter().flat_map(|blur| shadows.iter().map(move |shadows| (blur, shadows)))
                                {
                                    variants.extend(rasters.iter().map(|&raster| Variant {
                                        mixed,
                                        lod,
                                        compressed,
                                        light,
                                        animation_lod,
                                        morph,
                                        skinning,
                                        blur,
                                        shadows,
                                        raster,
                                    }));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    variants
}

impl Variant {
    /// What the progress line says while the variant runs.
    fn describe(&self, strategy: Strategy, instances: usize) -> String {
        format!(
            "{}{} × {instances}, clip compression {}, lod {}, light culling {}, animation lod {}, morph {}, {} skinning, motion blur {}, {} shadows, {} raster",
            if self.mixed { "mix, " } else { "" },
            strategy.name(),
            on_off(self.compressed),
            on_off(self.lod),
            on_off(self.light),
            on_off(self.animation_lod),
            on_off(self.morph),
            self.skinning.name(),
            on_off(self.blur),
            self.shadows.name(),
            self.raster.name()
        )
    }

    /// The variant's row before it runs: what it is, and the copy references of its count.
    fn row(&self, strategy: Strategy, instances: usize, model: &Model, copies: &CopyReferences) -> BenchRow {
        let copy = copies.streamed.get(&instances).copied();
        BenchRow {
            strategy,
            instances,
            models: model.name.clone(),
            vertices: model.vertices.len() as f64,
            record: Stats::default(),
            records_written: 0,
            lod: self.lod,
            clip_compression: self.compressed,
            light_culling: false,
            animation_lod: self.animation_lod,
            morph: self.morph,
            active_targets: 0.0,
            skinning: self.skinning,
            motion_blur: self.blur,
            shadows: self.shadows,
            raster: self.raster,
            traced_triangles: (0, 0),
            image_difference: None,
            skipped: None,
            frame_wall: Stats::default(),
            frame_gpu: Stats::default(),
            passes: Vec::new(),
            cpu_skinning: Stats::default(),
            copy: copy.map_or_else(Stats::default, |copy| copy.0),
            copy_wall: copy.map_or_else(Stats::default, |copy| copy.1),
            copy_touched: copies.touched.get(&instances).copied().unwrap_or_default(),
            bytes_per_instance: bytes_per_instance(model, strategy),
            pool_vertices: 0,
            visible: None,
        }
    }
}

/// Per count, a plain copy of as many bytes as the skin pass streams ((GPU, wall) statistics), and
/// of as many as it touches (GPU): what the skin pass is held against.
struct CopyReferences {
    streamed: BTreeMap<usize, (Stats, Stats)>,
    touched: BTreeMap<usize, Stats>,
}

impl CopyReferences {
    /// Measured first, while the device is fresh (see CopyPass::measure). A count no strategy can
    /// hold gets no reference (its rows are skipped), nor does a copy that does not fit in memory.
    fn measure(
        device: &Arc<Device>,
        model: &Model,
        options: &BenchOptions,
        mut progress: impl FnMut(&str),
    ) -> Result<Self, String> {
        let copy_pass = CopyPass::new(device).map_err(|error| error.to_string())?;
        // Reads and writes `bytes` each: (GPU, wall) statistics over the repetitions.
        let measure = |bytes: u64| -> Option<(Stats, Stats)> {
            let samples = copy_pass.measure(bytes, options.frames.max(3)).ok()?;
            let gpu: Vec<f64> = samples.iter().map(|sample| sample.0).collect();
            let wall: Vec<f64> = samples.iter().map(|sample| sample.1).collect();
            Some((Stats::of(&gpu), Stats::of(&wall)))
        };
        let mut references = CopyReferences { streamed: BTreeMap::new(), touched: BTreeMap::new() };
        for &instances in &options.counts {
            let fits = |strategy| {
                u32::try_from(instances)
                    .is_ok_and(|count| MemoryPlan::new(device, &[model], strategy, count, Default::default()).is_ok())
            };
            // Copies past a quarter of the heap measure the memory's paging, not its bandwidth
            // (a million figures' full meshes are 100 GB): no reference there.
            let heap = crate::render::largest_heap(device);
            let too_large = skin_touched_bytes(model) * instances as u64 > heap / 4;
            if too_large || !options.strategies.iter().copied().any(fits) {
                continue;
            }
            progress(&format!("copy reference × {instances}"));
            if let Some(copy) = measure(skin_stream_bytes(model) * instances as u64 / 2) {
                references.streamed.insert(instances, copy);
            }
            if let Some((gpu, _)) = measure(skin_touched_bytes(model) * instances as u64 / 2) {
                references.touched.insert(instances, gpu);
            }
        }
        Ok(references)
    }
}

/// Runs one row's frames and fills its statistics, or says why it was skipped. Returns the image of
/// the frame after the last measured one where variants are compared (`compared`): the frame
/// after, so that animation LOD has last frame's palettes to keep.
fn measure(
    device: &Arc<Device>,
    models: &[Model],
    options: &BenchOptions,
    (strategy, variant): (Strategy, Variant),
    (capture, frames_submitted): &mut (Option<&mut FrameCapture>, u64),
    row: &mut BenchRow,
    compared: bool,
) -> Result<Option<RgbaImage>, String> {
    // The memory plan first: a count past the device is skipped before anything is laid out.
    let instances = row.instances;
    let planned =
        u32::try_from(instances).map_err(|_| format!("{instances} instances: expected at most {}", u32::MAX)).and_then(|count| {
            let borrowed: Vec<&Model> = models.iter().collect();
            MemoryPlan::new(device, &borrowed, strategy, count, Default::default()).map_err(|error| error.to_string())
        });
    if let Err(reason) = planned {
        row.skipped = Some(reason);
        return Ok(None);
    }
    let mut setup = SceneSetup::with_models(models.to_vec(), instances, options.variety);
    row.models = setup.mix();
    row.vertices = (0..setup.instances.len()).map(|index| setup.model_of(index).vertices.len() as f64).sum::<f64>()
        / setup.instances.len().max(1) as f64;
    for instance in &mut setup.instances {
        instance.clip = options.clip.or(instance.clip);
        instance.skinning = variant.skinning;
    }
    if options.crowd {
        setup.play_every_clip();
    }
    if !variant.morph {
        let most = setup.models().iter().map(|model| model.morph_targets.len()).max().unwrap_or(0);
        setup.morph_overrides = vec![Some(0.0); most];
    }
    let settings = RenderSettings {
        light_culling: variant.light,
        animation_lod: variant.animation_lod.then_some(crate::render::ANIMATION_LOD_PIXELS),
        motion_blur: variant.blur,
        shadows: variant.shadows,
        raster: variant.raster,
        ..RenderSettings::default()
    };
    let mut headless = match HeadlessRenderer::with_settings(device, &setup, options.size, strategy, settings) {
        Ok(headless) => headless,
        Err(error) => {
            row.skipped = Some(error.to_string());
            return Ok(None);
        }
    };
    row.light_culling = headless.renderer.setup.light_culling;
    if headless.renderer.passes.raster.is_none() {
        row.raster = Raster::Hardware; // no raster pass here: every triangle the hardware's
    }
    row.bytes_per_instance = headless.renderer.setup.memory.bytes_per_instance;
    row.pool_vertices = headless.renderer.setup.memory.pooled_vertices().unwrap_or(0);
    let aspect = headless.aspect();
    let (mut frame_walls, mut timings, mut cpu_skinning, mut records) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut last = Instant::now();
    for frame in 0..options.warmup + options.frames {
        let scene = setup.frame(f64::from(frame) / 60.0, aspect);
        let submitted = crate::app::capture::around_frame(capture.as_deref_mut(), *frames_submitted, || headless.submit(&scene));
        *frames_submitted += 1;
        if let Err(error) = submitted {
            row.skipped = Some(error);
            break;
        }
        let now = Instant::now();
        if frame >= options.warmup {
            frame_walls.push(now.duration_since(last).as_secs_f64() * 1e3);
            cpu_skinning.push(headless.renderer.stats.cpu_skinning_ms);
            records.push(headless.renderer.stats.record_ms);
            row.records_written = row.records_written.max(headless.renderer.stats.records_uploaded);
            // The timings of the frame whose slot this one reused (two frames ago).
            timings.extend(headless.renderer.stats.timings.clone());
        }
        last = now;
    }
    headless.renderer.wait_all().map_err(|error| error.to_string())?;
    timings.extend(headless.renderer.stats.timings.clone());
    row.visible = headless.renderer.stats.visible;
    row.traced_triangles = headless.renderer.passes.trace.as_ref().map_or((0, 0), |trace| trace.triangles_built());
    row.active_targets = active_targets(&setup, f64::from(options.warmup + options.frames - 1) / 60.0);
    let image = match compared && row.skipped.is_none() {
        true => {
            let scene = setup.frame(f64::from(options.warmup + options.frames) / 60.0, aspect);
            Some(headless.render(&scene).map_err(|error| error.to_string())?)
        }
        false => None,
    };
    if row.skipped.is_some() {
        return Ok(image);
    }
    row.frame_wall = Stats::of(&frame_walls);
    row.record = Stats::of(&records);
    row.frame_gpu = Stats::of(&timings.iter().map(|timing| timing.total()).collect::<Vec<_>>());
    // The benchmark draws no panel: the overlay pass never runs here.
    row.passes = Pass::ALL
        .iter()
        .filter(|&&pass| pass != Pass::Overlay)
        .map(|pass| pass.name())
        .map(|pass| (pass, Stats::of(&timings.iter().filter_map(|timing| timing.get(pass)).collect::<Vec<_>>())))
        .collect();
    row.cpu_skinning = if strategy == Strategy::Cpu { Stats::of(&cpu_skinning) } else { Stats::of(&[]) };
    Ok(image)
}

/// Keyed by (count, mix, strategy, light culling, morph, skinning mode, motion blur, clip compression,
/// rasterizer): a row's variants differ only in levels of detail and animation LOD.
type Key = (usize, bool, usize, bool, bool, usize, bool, bool, usize);

/// The images that levels of detail and animation LOD change, against the row at full detail.
#[derive(Default)]
struct Comparisons {
    /// Whether rows are compared at all (either is asked on and off).
    compared: bool,
    /// Each key's last frame at full detail (levels of detail and animation LOD off).
    full_detail: BTreeMap<Key, RgbaImage>,
    /// Rows (by index) run before their reference, with their image.
    waiting: Vec<(usize, Key, RgbaImage)>,
}

impl Comparisons {
    /// `row`'s image, `rows.len()` its index to be. Held against its reference where that ran;
    /// else kept until it does. A reference gives the rows waiting for it their difference.
    /// By the light culling asked for: where it found no room the row ran without, and the
    /// light's run leaves the shadows the same to the pixel either way.
    fn add(&mut self, rows: &mut [BenchRow], row: &mut BenchRow, key: Key, image: RgbaImage, reference: bool) {
        if reference {
            for (at, _, other) in self.waiting.iter().filter(|(_, waiting_key, _)| *waiting_key == key) {
                rows[*at].image_difference = ImageDifference::between(other, &image);
            }
            self.waiting.retain(|(_, waiting_key, _)| *waiting_key != key);
            self.full_detail.insert(key, image);
        } else if let Some(reference) = self.full_detail.get(&key) {
            row.image_difference = ImageDifference::between(&image, reference);
        } else {
            self.waiting.push((rows.len(), key, image));
        }
    }
}
