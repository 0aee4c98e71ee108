//! What each command of the binary does, once `cli.rs` has read its arguments: a part of the
//! binary, not of the library.

mod bench;
mod generate;
mod headless;
mod inspect;
mod scene;
mod view;

use vkskin::gpu::MessageCounts;

use crate::cli::{Cli, Command};

/// The command asked for; the viewer when none is.
pub(crate) fn run(cli: Cli) -> Result<(), String> {
    match cli.command.unwrap_or(Command::View(cli.view)) {
        Command::View(arguments) => view::view(arguments),
        Command::Render(arguments) => headless::render(arguments),
        Command::Bench(arguments) => bench::bench(arguments),
        Command::Soak(arguments) => headless::soak(arguments),
        Command::Inspect(arguments) => inspect::inspect(arguments),
        Command::Generate(arguments) => generate::generate(arguments),
    }
}

/// With validation on, any warning or error the layer reported fails the run.
pub(crate) fn check_messages(validation: bool, messages: MessageCounts) -> Result<(), String> {
    if validation {
        eprintln!("validation: {} errors, {} warnings", messages.errors, messages.warnings);
        if messages.errors + messages.warnings > 0 {
            return Err(format!("the validation layer reported {} errors and {} warnings", messages.errors, messages.warnings));
        }
    }
    Ok(())
}
