//! `bench.json`: the run's settings, the machine and every row's measures.

use serde_json::{json, Value};

use crate::app::bench::{finite, morph_costs, palette_costs, skinning_costs, trace_costs, BenchReport};

impl BenchReport {
    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                let passes: serde_json::Map<String, Value> =
                    row.passes.iter().map(|(pass, stats)| (pass.to_string(), stats.to_json())).collect();
                let mut object = json!({
                    "strategy": row.strategy.name(),
                    "instances": row.instances,
                    "clip_compression": row.clip_compression,
                    "lod": row.lod,
                    "light_culling": row.light_culling,
                    "animation_lod": row.animation_lod,
                    "morph": row.morph,
                    "active_targets": row.active_targets,
                    "skinning": row.skinning.name(),
                    "motion_blur": row.motion_blur,
                    "shadows": row.shadows.name(),
                    "raster": row.raster.name(),
                    "traced_triangles": { "refit": row.traced_triangles.0, "rebuilt": row.traced_triangles.1 },
                    "image_vs_full_detail": row.image_difference.map(|difference| json!({
                        "changed_pixels": difference.changed,
                        "changed_share": difference.changed_share(),
                        "mean_abs_difference": difference.mean,
                        "psnr_db": finite(difference.psnr),
                    })),
                    "status": if row.skipped.is_some() { "skipped" } else { "ok" },
                    "skipped_reason": row.skipped,
                    "frame_wall_ms": row.frame_wall.to_json(),
                    "frame_gpu_ms": row.frame_gpu.to_json(),
                    "pass_ms": passes,
                    "cpu_skinning_ms": row.cpu_skinning.to_json(),
                    "copy_reference_ms": row.copy.to_json(),
                    "copy_reference_wall_ms": row.copy_wall.to_json(),
                    "skin_copy_ratio": finite(row.skin_copy_ratio()),
                    "copy_touched_reference_ms": row.copy_touched.to_json(),
                    "skin_copy_touched_ratio": finite(row.skin_copy_touched_ratio()),
                    "vertices_per_second": finite(row.vertices_per_second()),
                    "skinned_vertices_per_second": finite(row.skinned_vertices_per_second()),
                    "models": row.models,
                    "mean_vertices": row.vertices,
                    "record_ms": row.record.to_json(),
                    "records_written": row.records_written,
                    "bytes_per_instance": row.bytes_per_instance,
                    "visible": row.visible.map(|visible| json!({
                        "skinned": visible.skinned,
                        "camera": visible.camera,
                        "light": visible.light,
                        "coarser": visible.coarser,
                        "not_drawn": visible.not_drawn,
                        "placed_vertices": visible.placed_vertices,
                        "placed_indices": visible.placed_indices,
                    })),
                    "pool_vertices": row.pool_vertices,
                    "pool_fill": finite(row.pool_fill()),
                });
                object["raster_counts"] = row.visible.map_or(Value::Null, |visible| raster_json(visible.raster));
                object
            })
            .collect();
        json!({
            "device": self.device,
            "driver": self.driver,
            "resolution": [self.resolution.0, self.resolution.1],
            "model": self.model,
            "vertices": self.vertex_count,
            "joints": self.joint_count,
            "clips": self.clip_count,
            "clip_bytes": self.clip_bytes,
            "clip_key_bytes": self.clip_key_bytes,
            "variety": self.variety,
            "palette_ns_per_joint_instance": palette_costs(self).iter().map(|&(strategy, instances, compressed, keys)| json!({
                "strategy": strategy.name(),
                "instances": instances,
                "compressed": finite(compressed),
                "keys": finite(keys),
            })).collect::<Vec<Value>>(),
            "morph_targets": self.target_count,
            "influences": self.influence_count,
            "skinning_cost_ns_per_vertex_influence": skinning_costs(self).iter().map(|&(strategy, instances, skinning, nanoseconds)| json!({
                "strategy": strategy.name(),
                "instances": instances,
                "skinning": skinning.name(),
                "ns": finite(nanoseconds),
            })).collect::<Vec<Value>>(),
            "morph_cost_ns_per_vertex_per_active_target": morph_costs(self).iter().map(|&(strategy, instances, lod, nanoseconds)| json!({
                "strategy": strategy.name(),
                "instances": instances,
                "lod": lod,
                "ns": finite(nanoseconds),
            })).collect::<Vec<Value>>(),
            "tracing": trace_costs(self).iter().map(|cost| json!({
                "strategy": cost.strategy.name(),
                "instances": cost.instances,
                "lod": cost.lod,
                "blas_ns_per_triangle": finite(cost.blas_ns_per_triangle),
                "blas_over_skin": finite(cost.blas_over_skin),
                "tlas_us_per_instance": finite(cost.tlas_us_per_instance),
                "ray_ns_per_pixel": finite(cost.ray_ns_per_pixel),
            })).collect::<Vec<Value>>(),
            "frames": self.frames,
            "warmup": self.warmup,
            "rows": rows,
        })
    }
}

/// What each rasterizer took in a row's last measured frame (`RasterCounts`), for the JSON report.
fn raster_json(counts: crate::render::RasterCounts) -> Value {
    json!({
        "camera": {
            "hardware_triangles": counts.camera_hardware,
            "hardware_samples": counts.camera_hardware_samples,
            "compute_triangles": counts.camera_compute,
            "compute_samples": counts.camera_samples,
        },
        "light": {
            "hardware_triangles": counts.light_hardware,
            "compute_triangles": counts.light_compute,
            "compute_texels": counts.light_texels,
        },
    })
}
