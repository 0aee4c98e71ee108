//! `vkskin inspect`: a model described, no Vulkan needed; with `--pose`, evaluated on the GPU.

use std::io::Write as _;

use vkskin::app::{default_animations, find_clip, headless_device};
use vkskin::gpu::instance::validation_from_env;

use super::check_messages;
use super::scene::{open_model, Preparation};
use crate::cli::InspectArgs;

pub(crate) fn inspect(arguments: InspectArgs) -> Result<(), String> {
    if let Some(time) = arguments.pose {
        let [path] = arguments.models.as_slice() else {
            return Err(format!("--pose evaluates one model; {} were given", arguments.models.len()));
        };
        return pose(&arguments, path, time);
    }
    let mut models = Vec::new();
    for path in &arguments.models {
        let animations = default_animations(path, &arguments.animations);
        let (model, prepared) = open_model(
            path,
            &animations,
            (arguments.clips.as_deref(), arguments.ranges.as_deref()),
            &Preparation {
                levels: arguments.lod.on(),
                compression: arguments.clip_compression,
                root_motion: arguments.root_motion,
                root_joint: arguments.root_joint.as_deref(),
                cache: arguments.cache,
            },
        )?;
        let mut report = vkskin::app::inspect::describe(&model, prepared.chain_seconds);
        report += &prepared.describe();
        report.push('\n');
        if arguments.models.len() > 1 {
            report = format!("== {} ==\n{report}\n", path.display());
        }
        write_out(&report)?;
        models.push(model);
    }
    if models.len() > 1 {
        write_out(&vkskin::app::inspect::describe_crowd(&models))?;
    }
    Ok(())
}

/// `--pose TIME [--clip C] [--json]`: the full mesh (no levels of detail), one frame, read back.
fn pose(arguments: &InspectArgs, path: &std::path::Path, time: f64) -> Result<(), String> {
    let animations = default_animations(path, &arguments.animations);
    let (model, _) = open_model(
        path,
        &animations,
        (arguments.clips.as_deref(), arguments.ranges.as_deref()),
        // The pose as the file has it: the root where its keys put it.
        &Preparation {
            levels: false,
            compression: arguments.clip_compression,
            root_motion: crate::cli::Switch::Off,
            root_joint: None,
            cache: arguments.cache,
        },
    )?;
    let clip = match arguments.clip.as_deref() {
        Some(selector) => Some(find_clip(&model, selector)?),
        None => model.default_clip(),
    };
    let validation = validation_from_env();
    let device = headless_device(validation).map_err(|error| error.to_string())?;
    let pose = vkskin::app::pose::evaluate(&device, model, clip, time)?;
    check_messages(validation, device.instance.message_counts())?;
    if arguments.json {
        write_out(&pose.to_json_lines())
    } else {
        write_out(&pose.describe())
    }
}

/// To stdout: a reader that stops early (`| head`) is not an error; print! would panic on it.
fn write_out(text: &str) -> Result<(), String> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("cannot write the output: {error}")),
        _ => Ok(()),
    }
}
