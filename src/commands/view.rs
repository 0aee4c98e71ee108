//! `vkskin view` (and `vkskin FILE`): the viewer, then what it reports.

use vkskin::app::capture::FrameCapture;
use vkskin::app::viewer::ViewerOptions;

use super::check_messages;
use crate::cli::ViewArgs;

/// Instances from which the viewer builds the levels of detail before its first frame.
const LEVELS_FIRST_INSTANCES: u32 = 10_000;

pub(crate) fn view(arguments: ViewArgs) -> Result<(), String> {
    let ViewArgs { scene, size, fade, frames, storm, screenshot, no_ui, drive } = arguments;
    // RenderDoc first: its layer must see the Vulkan instance being created.
    let capture = scene.capture_frame.map(FrameCapture::attach).transpose()?;
    // A crowd this large is planned by its levels of detail (memory by level: docs/million.md), so
    // they are built before the first frame, as the headless commands build them; a smaller scene
    // draws the full mesh while a worker thread builds them.
    let setup = scene.setup_within(None, scene.instances >= LEVELS_FIRST_INSTANCES)?;
    let validation = scene.validation();
    let options = ViewerOptions {
        validation,
        frame_limit: frames,
        size,
        fade_seconds: fade,
        strategy: scene.strategy,
        skinning: scene.skinning,
        light_culling: scene.light_culling.on(),
        animation_lod: scene.animation_lod(),
        motion_blur: scene.motion_blur.on(),
        shadows: scene.shadows,
        raster: scene.raster,
        root_motion: scene.root_motion.on(),
        clip_compression: scene.clip_compression.on(),
        lod: scene.lod.on(),
        cache: scene.cache.on(),
        capture,
        debug: scene.debug,
        storm,
        screenshot,
        ui: !no_ui,
        model_path: Some(scene.model_paths().remove(0)),
        animations: scene.animations.clone(),
        drive: drive.map_or_else(Vec::new, |drive| drive.0),
    };
    let report = vkskin::app::viewer::run(setup, options)?;
    println!("presented {} frames of {}", report.frames, report.model);
    if let Some(seconds) = report.first_frame_seconds {
        println!("first frame {seconds:.3} s after launch");
    }
    if let Some([x0, y0, x1, y1]) = report.panel_rect {
        println!("panel: {x0},{y0} to {x1},{y1}");
    }
    if let Some((median, mean)) = report.overlay_ms {
        println!("overlay pass: {median:.3} ms a frame (median), {mean:.3} ms (mean)");
    }
    if storm > 0 {
        println!("storm: {} window events, {} swapchains", report.storm_events, report.swapchains);
    }
    check_messages(validation, report.messages)
}
