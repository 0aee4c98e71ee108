//! `vkskin bench`: the strategies side by side, a progress line, the table and the files.

use vkskin::app::bench::{progress_bar, BenchOptions};
use vkskin::app::capture::FrameCapture;
use vkskin::app::{default_animations, default_model_path};
use vkskin::gpu::instance::validation_from_env;

use std::path::PathBuf;

use vkskin::formats::read_model;
use vkskin::model::Model;

use super::scene::{open_model, prepare_model, Preparation};
use crate::cli::{BenchArgs, Mix, Switch};

pub(crate) fn bench(arguments: BenchArgs) -> Result<(), String> {
    let mut capture = arguments.capture_frame.map(FrameCapture::attach).transpose()?;
    let paths: Vec<PathBuf> = arguments.models.iter().chain(&arguments.more_models).cloned().collect();
    // Opened as the viewer and render open them: the levels of detail measured on the files' keys,
    // the clips compressed beside them, so the bench draws the levels a user's frame draws.
    let levels = arguments.lod.iter().any(|lod| lod.on());
    let compression = if arguments.clip_compression.iter().any(|switch| switch.on()) { Switch::On } else { Switch::Off };
    let preparation = Preparation {
        levels,
        compression,
        root_motion: arguments.root_motion,
        root_joint: arguments.root_joint.as_deref(),
        cache: arguments.cache,
    };
    let models: Vec<Model> = if paths.is_empty() {
        // The bundled figure; asked to mix, with its variants.
        let path = default_model_path();
        let figure = read_model(&path, &default_animations(&path, &arguments.animations)).map_err(|error| error.to_string())?;
        let mut models = vec![figure.clone()];
        if !arguments.mix.is_empty() {
            models.extend(vkskin::generate::variants::crowd_variants(&figure));
        }
        models.into_iter().map(|model| Ok(prepare_model(model, &preparation)?.0)).collect::<Result<_, String>>()?
    } else {
        let mut models = Vec::new();
        for path in &paths {
            let animations = default_animations(path, &arguments.animations);
            models.push(open_model(path, &animations, (None, None), &preparation)?.0);
        }
        models
    };
    let model = &models[0];
    let clip = arguments.clip.as_deref().map(|clip| vkskin::app::find_clip(model, clip)).transpose()?;
    let options = BenchOptions {
        clip,
        crowd: arguments.crowd,
        variety: arguments.variety.on(),
        lods: arguments.lod.iter().map(|lod| lod.on()).collect(),
        light_culling: arguments.light_culling.iter().map(|light| light.on()).collect(),
        animation_lod: arguments.animation_lod.iter().map(|switch| switch.on()).collect(),
        morph: arguments.morph.iter().map(|switch| switch.on()).collect(),
        clip_compression: arguments.clip_compression.iter().map(|switch| switch.on()).collect(),
        skinning: arguments.skinning.clone(),
        motion_blur: arguments.motion_blur.iter().map(|switch| switch.on()).collect(),
        shadows: arguments.shadows.clone(),
        raster: arguments.raster.clone(),
        counts: arguments.instances,
        strategies: arguments.strategy,
        mixes: arguments.mix.iter().map(|&mix| mix == Mix::Mixed).collect(),
        warmup: arguments.warmup,
        frames: arguments.measure.max(1),
        size: arguments.size,
        out: arguments.out_dir.clone(),
        validation: arguments.validate || validation_from_env(),
    };
    // A bar redrawn in place on a terminal; in a log, a plain line a step.
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let started = std::time::Instant::now();
    let report = vkskin::app::bench::run(&models, &options, capture.as_mut(), |done, total, what| {
        if terminal {
            eprint!("{}", progress_bar(done, total, what, started.elapsed()));
        } else {
            eprintln!("bench: {done}/{total} {what}");
        }
    })?;
    if terminal {
        eprintln!();
    }
    print!("{}", report.table());
    for path in report.write(&arguments.out_dir)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}
