//! `vkskin bench`'s report: the printed table, `bench.csv` and the PNG plots (`bench.json`: `json.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{on_off, BenchReport, BenchRow};
use crate::anim::Skinning;
use crate::app::plot::{LineChart, Series};
use crate::render::{Raster, Shadows, Strategy};

mod json;

/// What skins in a strategy's frame, for the cost lines.
fn what_skins(strategy: Strategy) -> &'static str {
    match strategy {
        Strategy::Compute => "skin pass",
        Strategy::Cpu => "CPU skinning",
        Strategy::Vertex => "shadow + forward passes",
    }
}

/// A column's cell in a row of a report.
type Cell = Box<dyn Fn(&BenchReport, &BenchRow) -> String>;

/// One column of the printed table: its header, whether it is a setting (or a measure), what it
/// means (for the legend), and its cell in a row.
struct Column {
    header: &'static str,
    setting: bool,
    meaning: &'static str,
    value: Cell,
}

impl Column {
    fn setting(header: &'static str, value: impl Fn(&BenchReport, &BenchRow) -> String + 'static) -> Column {
        Column { header, setting: true, meaning: "", value: Box::new(value) }
    }

    fn measured(
        header: &'static str,
        meaning: &'static str,
        value: impl Fn(&BenchReport, &BenchRow) -> String + 'static,
    ) -> Column {
        Column { header, setting: false, meaning, value: Box::new(value) }
    }
}

fn milliseconds(value: f64) -> String {
    if value.is_finite() {
        format!("{value:.3}")
    } else {
        "-".into()
    }
}

fn rate(value: f64) -> String {
    if value.is_finite() {
        format!("{:.1}M", value / 1e6)
    } else {
        "-".into()
    }
}

impl BenchReport {
    /// The table printed on stdout: a column for each setting that differs between rows (the
    /// others on one line above), and each measured column that has a value in some row; the
    /// columns' meanings below it.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "device: {} ({}), {}x{}, model {} ({} vertices, {} joints; {} clips, {} B on the GPU compressed, {} B as the \
             files' keys, shared by every instance), {} frames after {} warm-up; instances {}",
            self.device,
            self.driver,
            self.resolution.0,
            self.resolution.1,
            self.model,
            self.vertex_count,
            self.joint_count,
            self.clip_count,
            self.clip_bytes,
            self.clip_key_bytes,
            self.frames,
            self.warmup,
            if self.variety { "varied (phase, speed, size, colours)" } else { "copies (--variety off)" }
        );
        let columns = self.columns();
        let (settings, measured): (Vec<&Column>, Vec<&Column>) = columns.iter().partition(|column| column.setting);
        let cells = |column: &Column| self.rows.iter().map(|row| (column.value)(self, row)).collect::<Vec<String>>();
        // A setting every row shares goes on one line; a measure no row has is left out.
        let (varying, same): (Vec<&Column>, Vec<&Column>) =
            settings.into_iter().partition(|column| cells(column).windows(2).any(|pair| pair[0] != pair[1]));
        if let Some(first) = self.rows.first() {
            let shared: Vec<String> =
                same.iter().map(|column| format!("{} {}", column.header, (column.value)(self, first))).collect();
            let _ = writeln!(out, "every row: {}", shared.join(", "));
        }
        let ran: Vec<&BenchRow> = self.rows.iter().filter(|row| row.skipped.is_none()).collect();
        let shown: Vec<&Column> =
            measured.into_iter().filter(|column| ran.iter().any(|row| (column.value)(self, row) != "-")).collect();
        let line = |cells: Vec<String>, widths: &[usize]| -> String {
            let mut line = String::new();
            // The strategy's name to the left, numbers to the right.
            for (index, (cell, width)) in cells.iter().zip(widths).enumerate() {
                let _ = match index == 0 && !varying.is_empty() {
                    true => write!(line, "{cell:<width$} "),
                    false => write!(line, "{cell:>width$} "),
                };
            }
            line.trim_end().to_string()
        };
        let table_columns: Vec<&Column> = varying.iter().chain(&shown).copied().collect();
        let widths: Vec<usize> = table_columns
            .iter()
            .map(|column| {
                cells(column).iter().map(|cell| cell.chars().count()).chain([column.header.chars().count()]).max().unwrap_or(1)
            })
            .collect();
        let _ = writeln!(out, "{}", line(table_columns.iter().map(|column| column.header.to_string()).collect(), &widths));
        for row in &self.rows {
            let setting_cells: Vec<String> = varying.iter().map(|column| (column.value)(self, row)).collect();
            match &row.skipped {
                Some(reason) => {
                    let _ = writeln!(out, "{}  skipped: {reason}", line(setting_cells, &widths[..varying.len()]));
                }
                None => {
                    let all = setting_cells.into_iter().chain(shown.iter().map(|column| (column.value)(self, row))).collect();
                    let _ = writeln!(out, "{}", line(all, &widths));
                }
            }
        }
        let meanings: Vec<String> = shown
            .iter()
            .filter(|column| !column.meaning.is_empty())
            .map(|column| format!("{}: {}", column.header, column.meaning))
            .collect();
        let _ = writeln!(out, "columns: {}", meanings.join("; "));
        let modes: std::collections::HashSet<Skinning> = self.rows.iter().map(|row| row.skinning).collect();
        if modes.len() > 1 {
            for (strategy, instances, skinning, nanoseconds) in super::skinning_costs(self) {
                let _ = writeln!(
                    out,
                    "skinning cost, {} × {instances}, {}: {nanoseconds:.4} ns per vertex-influence ({})",
                    strategy.name(),
                    skinning.name(),
                    what_skins(strategy)
                );
            }
        }
        for (strategy, instances, compressed, keys) in super::palette_costs(self) {
            let _ = writeln!(
                out,
                "palette pass, {} × {instances}: {compressed:.2} ns per joint-instance with clips compressed, {keys:.2} with the files' keys ({:.2}x)",
                strategy.name(),
                compressed / keys
            );
        }
        for cost in super::trace_costs(self) {
            let _ = writeln!(
                out,
                "tracing, {} × {} (lod {}): bottom levels {:.2} ns per triangle ({:.2}x the {}), top level {:.3} µs per \
                 instance, ray queries {:.2} ns per pixel (forward traced − mapped)",
                cost.strategy.name(),
                cost.instances,
                on_off(cost.lod),
                cost.blas_ns_per_triangle,
                cost.blas_over_skin,
                what_skins(cost.strategy),
                cost.tlas_us_per_instance,
                cost.ray_ns_per_pixel
            );
        }
        for (strategy, instances, lod, nanoseconds) in super::morph_costs(self) {
            let _ = writeln!(
                out,
                "morph cost, {} × {instances} (lod {}): {nanoseconds:.4} ns per vertex per active target ({}, morph on − off)",
                strategy.name(),
                on_off(lod),
                what_skins(strategy)
            );
        }
        out
    }

    /// The morph column: "-" for a model without targets, "off", or the active targets an instance
    /// averaged.
    fn morph_column(&self, row: &BenchRow) -> String {
        match (self.target_count, row.morph) {
            (0, _) => "-".into(),
            (_, false) => "off".into(),
            (_, true) => format!("{:.1}", row.active_targets),
        }
    }

    /// Every column the table may show: the settings, then what was measured (medians over the
    /// measured frames, in ms, unless the header says otherwise).
    fn columns(&self) -> Vec<Column> {
        // A pass the row's strategy or settings leave out still has its timestamps (a few µs
        // apart): shown as "-".
        let pass = |header: &'static str, pass: &'static str, meaning: &'static str| Column {
            header,
            setting: false,
            meaning,
            value: Box::new(move |_, row| {
                let runs = match pass {
                    "palette" => row.strategy != Strategy::Cpu,
                    "skin" | "triangles" => row.strategy == Strategy::Compute,
                    "motion" => row.motion_blur,
                    "blas" | "tlas" => row.shadows == Shadows::Ray,
                    "shadow" => row.shadows == Shadows::Map,
                    "raster" => row.raster != Raster::Hardware,
                    _ => true,
                };
                if runs {
                    milliseconds(row.pass(pass).median)
                } else {
                    "-".into()
                }
            }),
        };
        let ratio = |ratio: f64| if ratio.is_finite() { format!("{ratio:.2}") } else { "-".into() };
        vec![
            Column::setting("models", |_, row| row.models.clone()),
            Column::setting("strategy", |_, row| row.strategy.name().to_string()),
            Column::setting("instances", |_, row| row.instances.to_string()),
            Column::setting("clip compression", |_, row| on_off(row.clip_compression).to_string()),
            Column::setting("lod", |_, row| on_off(row.lod).to_string()),
            Column::setting("light culling", |_, row| on_off(row.light_culling).to_string()),
            Column::setting("animation lod", |_, row| on_off(row.animation_lod).to_string()),
            Column::setting("morph", |report, row| report.morph_column(row)),
            Column::setting("skinning", |_, row| row.skinning.name().to_string()),
            Column::setting("motion blur", |_, row| on_off(row.motion_blur).to_string()),
            Column::setting("shadows", |_, row| row.shadows.name().to_string()),
            Column::setting("raster", |_, row| row.raster.name().to_string()),
            Column::measured("frame ms", "wall time a frame", |_, row| milliseconds(row.frame_wall.median)),
            Column::measured("frame p95", "its 95th percentile", |_, row| milliseconds(row.frame_wall.p95)),
            Column::measured("GPU ms", "the GPU's time a frame, every pass", |_, row| milliseconds(row.frame_gpu.median)),
            pass("instances", "instances", "each instance's data from its record and the clock"),
            pass("cull", "cull", ""),
            pass("palette", "palette", ""),
            pass("skin", "skin", ""),
            pass("triangles", "triangles", ""),
            pass("raster", "raster", "the compute rasterizer's clear and runs (`--raster compute|auto`)"),
            pass("blas", "blas", "the bottom levels' builds (`--shadows ray`)"),
            pass("tlas", "tlas", "the top level's build"),
            pass("shadow", "shadow", ""),
            pass("forward", "forward", ""),
            pass("motion", "motion", ""),
            Column::measured("tris hw/cs", "camera triangles the hardware and the compute rasterizer took", |_, row| {
                // Counted by the triangle pass: `compute` alone.
                let counted = row.visible.filter(|_| row.strategy == Strategy::Compute);
                counted
                    .map_or("-".into(), |visible| format!("{}/{}", visible.raster.camera_hardware, visible.raster.camera_compute))
            }),
            Column::measured(
                "samples hw/cs",
                "camera samples (4 a pixel) the hardware's model draws wrote and the compute rasterizer covered",
                |_, row| {
                    row.visible.map_or("-".into(), |visible| {
                        let hardware = visible.raster.camera_hardware_samples.map_or("-".into(), |samples| samples.to_string());
                        format!("{hardware}/{}", visible.raster.camera_samples)
                    })
                },
            ),
            Column::measured("record ms", "the CPU's time to write a frame's records and record its commands", |_, row| {
                milliseconds(row.record.median)
            }),
            Column::measured("records", "instance records the CPU wrote in a measured frame, at most", |_, row| {
                row.records_written.to_string()
            }),
            Column::measured("CPU skin ms", "the cpu strategy's skinning on the CPU", |_, row| {
                milliseconds(row.cpu_skinning.median)
            }),
            Column::measured("copy ms", "a plain GPU copy of the bytes the skin pass streams", |_, row| {
                milliseconds(row.copy.median)
            }),
            Column::measured("skin/copy", "skin pass ÷ that copy (1: as fast as memory allows)", move |_, row| {
                ratio(row.skin_copy_ratio())
            }),
            Column::measured("skin/touched", "skin pass ÷ a copy of every byte it touches", move |_, row| {
                ratio(row.skin_copy_touched_ratio())
            }),
            Column::measured("Mvert/s", "animated vertices per second of frame time", |_, row| rate(row.vertices_per_second())),
            Column::measured("image vs full detail", "pixels changed and PSNR against the row without LOD", |_, row| {
                row.image_difference.map_or("-".into(), |difference| {
                    format!("{:.3}%, {:.1} dB", 100.0 * difference.changed_share(), difference.psnr)
                })
            }),
        ]
    }

    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "strategy,instances,status,frame_wall_ms_median,frame_wall_ms_p95,frame_gpu_ms_median,frame_gpu_ms_p95,\
             cull_ms,palette_ms,skin_ms,triangles_ms,blas_ms,tlas_ms,shadow_ms,forward_ms,motion_ms,resolve_ms,cpu_skinning_ms,copy_reference_ms,copy_reference_wall_ms,skin_copy_ratio,\
             copy_touched_reference_ms,skin_copy_touched_ratio,\
             vertices_per_second,skinned_vertices_per_second,bytes_per_instance,visible_skinned,visible_camera,visible_light,\
             lod,light_culling,animation_lod,image_changed_share,image_psnr_db,morph,active_targets,skinning,motion_blur,clip_compression,\
             models,mean_vertices,record_ms,shadows,visible_coarser,visible_not_drawn,pool_vertices,pool_fill,instances_ms,records_written,\
             raster,raster_ms,camera_hardware_triangles,camera_compute_triangles,camera_compute_samples,camera_hardware_samples,light_hardware_triangles,\
             light_compute_triangles,light_compute_texels\n",
        );
        let number = |value: f64| if value.is_finite() { format!("{value}") } else { String::new() };
        for row in &self.rows {
            let status = if row.skipped.is_some() { "skipped" } else { "ok" };
            let visible = row.visible;
            let raster = visible.map(|visible| visible.raster);
            let _ = writeln!(
                out,
                "{},{},{status},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                row.strategy.name(),
                row.instances,
                number(row.frame_wall.median),
                number(row.frame_wall.p95),
                number(row.frame_gpu.median),
                number(row.frame_gpu.p95),
                number(row.pass("cull").median),
                number(row.pass("palette").median),
                number(row.pass("skin").median),
                number(row.pass("triangles").median),
                number(row.pass("blas").median),
                number(row.pass("tlas").median),
                number(row.pass("shadow").median),
                number(row.pass("forward").median),
                number(row.pass("motion").median),
                number(row.pass("resolve").median),
                number(row.cpu_skinning.median),
                number(row.copy.median),
                number(row.copy_wall.median),
                number(row.skin_copy_ratio()),
                number(row.copy_touched.median),
                number(row.skin_copy_touched_ratio()),
                number(row.vertices_per_second()),
                number(row.skinned_vertices_per_second()),
                row.bytes_per_instance,
                visible.map_or(String::new(), |visible| visible.skinned.to_string()),
                visible.map_or(String::new(), |visible| visible.camera.to_string()),
                visible.map_or(String::new(), |visible| visible.light.to_string()),
                on_off(row.lod),
                on_off(row.light_culling),
                on_off(row.animation_lod),
                row.image_difference.map_or(String::new(), |difference| number(difference.changed_share())),
                row.image_difference.map_or(String::new(), |difference| number(difference.psnr)),
                on_off(row.morph),
                number(row.active_targets),
                row.skinning.name(),
                on_off(row.motion_blur),
                on_off(row.clip_compression),
                row.models.replace('"', "'"),
                number(row.vertices),
                number(row.record.median),
                row.shadows.name(),
                visible.map_or(String::new(), |visible| visible.coarser.to_string()),
                visible.map_or(String::new(), |visible| visible.not_drawn.to_string()),
                row.pool_vertices,
                number(row.pool_fill()),
                number(row.pass("instances").median),
                row.records_written,
                row.raster.name(),
                number(row.pass("raster").median),
                raster.map_or(String::new(), |counts| counts.camera_hardware.to_string()),
                raster.map_or(String::new(), |counts| counts.camera_compute.to_string()),
                raster.map_or(String::new(), |counts| counts.camera_samples.to_string()),
                raster.and_then(|counts| counts.camera_hardware_samples).map_or(String::new(), |samples| samples.to_string()),
                raster.map_or(String::new(), |counts| counts.light_hardware.to_string()),
                raster.map_or(String::new(), |counts| counts.light_compute.to_string()),
                raster.map_or(String::new(), |counts| counts.light_texels.to_string()),
            );
        }
        out
    }

    /// The `compute` rows' values as one series named `name` (the skin pass and its references).
    fn compute_series(&self, name: &str, value: impl Fn(&BenchRow) -> f64) -> Vec<Series> {
        let mut series = self.series(value);
        series.retain(|series| series.name == Strategy::Compute.name());
        for series in &mut series {
            series.name = name.into();
        }
        series
    }

    /// One series per (strategy, levels of detail): named by the strategy, with "+ lod" for rows
    /// with levels of detail in a run that has rows without them.
    fn series(&self, value: impl Fn(&BenchRow) -> f64) -> Vec<Series> {
        let mixed = self.rows.iter().any(|row| row.lod) && self.rows.iter().any(|row| !row.lod);
        let mut keys: Vec<(Strategy, bool)> = Vec::new();
        for row in &self.rows {
            if !keys.contains(&(row.strategy, row.lod)) {
                keys.push((row.strategy, row.lod));
            }
        }
        keys.into_iter()
            .map(|(strategy, lod)| Series {
                name: if mixed && lod { format!("{} + lod", strategy.name()) } else { strategy.name().to_string() },
                points: self
                    .rows
                    .iter()
                    // Rows with the morph held off are the morph cost's reference, not plotted; with
                    // both skinning modes, the linear rows are.
                    .filter(|row| row.strategy == strategy && row.lod == lod && row.morph && row.skipped.is_none())
                    .filter(|row| {
                        row.skinning == Skinning::Linear || !self.rows.iter().any(|other| other.skinning == Skinning::Linear)
                    })
                    .map(|row| (row.instances as f64, value(row)))
                    .filter(|(_, y)| y.is_finite())
                    .collect(),
            })
            .filter(|series| !series.points.is_empty())
            .collect()
    }

    /// Writes bench.json, bench.csv and the PNG plots into `folder`; returns the paths.
    pub fn write(&self, folder: &Path) -> Result<Vec<PathBuf>, String> {
        std::fs::create_dir_all(folder).map_err(|error| format!("cannot create {}: {error}", folder.display()))?;
        let mut written = Vec::new();
        let mut save = |name: &str, bytes: &[u8]| -> Result<(), String> {
            let path = folder.join(name);
            std::fs::write(&path, bytes).map_err(|error| format!("cannot write {}: {error}", path.display()))?;
            written.push(path);
            Ok(())
        };
        let json = serde_json::to_string_pretty(&self.to_json()).map_err(|error| error.to_string())?;
        save("bench.json", json.as_bytes())?;
        save("bench.csv", self.to_csv().as_bytes())?;

        let title_suffix = format!("{}, {}x{}", self.device, self.resolution.0, self.resolution.1);
        let mut skin_vs_copy = self.compute_series("skin pass", |row| row.pass("skin").median);
        skin_vs_copy.extend(self.compute_series("copy reference", |row| row.copy.median));
        skin_vs_copy.extend(self.compute_series("copy of every byte touched", |row| row.copy_touched.median));
        let mut ratios = self.compute_series("skin ÷ copy of the streamed bytes", |row| row.skin_copy_ratio());
        ratios.extend(self.compute_series("skin ÷ copy of every byte touched", |row| row.skin_copy_touched_ratio()));
        let charts = [
            (
                "frame_time.png",
                LineChart {
                    title: format!("Frame time ({title_suffix})"),
                    x_label: "instances".into(),
                    y_label: "ms per frame (median, wall)".into(),
                    log_x: true,
                    log_y: true,
                    series: self.series(|row| row.frame_wall.median),
                },
            ),
            (
                "skin_pass.png",
                LineChart {
                    title: format!("Skin pass vs copy reference ({title_suffix})"),
                    x_label: "instances".into(),
                    y_label: "GPU ms (median)".into(),
                    log_x: true,
                    log_y: true,
                    series: skin_vs_copy,
                },
            ),
            (
                "vertices_per_second.png",
                LineChart {
                    title: format!("Animated vertices per second of frame time ({title_suffix})"),
                    x_label: "instances".into(),
                    y_label: "vertices / s".into(),
                    log_x: true,
                    log_y: true,
                    series: self.series(|row| row.vertices_per_second()),
                },
            ),
            (
                "skin_copy_ratio.png",
                LineChart {
                    title: format!("Skin pass ÷ copy references ({title_suffix})"),
                    x_label: "instances".into(),
                    y_label: "ratio (1 = bandwidth-bound)".into(),
                    log_x: true,
                    log_y: false,
                    series: ratios,
                },
            ),
        ];
        for (name, chart) in charts {
            // A chart with nothing to draw (no compute rows for the skin pass's) is not written.
            if chart.series.iter().all(|series| series.points.iter().all(|&(_, y)| !y.is_finite())) {
                continue;
            }
            let image = chart.render(900, 560)?;
            let path = folder.join(name);
            image
                .save_with_format(&path, image::ImageFormat::Png)
                .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
            written.push(path);
        }
        Ok(written)
    }
}
