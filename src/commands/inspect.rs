//! `vkskin inspect`: a model described, no Vulkan needed.

use std::io::Write as _;

use vkskin::app::default_animations;

use super::scene::open_model;
use crate::cli::InspectArgs;

pub(crate) fn inspect(arguments: InspectArgs) -> Result<(), String> {
    let animations = default_animations(&arguments.model, &arguments.animations);
    let (model, chain_seconds) = open_model(&arguments.model, &animations, arguments.clips.as_deref(), arguments.lod.on())?;
    // A reader that stops early (`| head`) is not an error; print! would panic on it.
    match std::io::stdout().lock().write_all(vkskin::app::inspect::describe(&model, chain_seconds).as_bytes()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("cannot write the description: {error}")),
        _ => Ok(()),
    }
}
