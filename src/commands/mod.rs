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
    if let (None, Some(model)) = (&cli.command, cli.view.scene.models.first()) {
        misspelt_command(model)?;
    }
    match cli.command.unwrap_or(Command::View(cli.view)) {
        Command::View(arguments) => view::view(arguments),
        Command::Render(arguments) => headless::render(arguments),
        Command::Bench(arguments) => bench::bench(arguments),
        Command::Soak(arguments) => headless::soak(arguments),
        Command::Inspect(arguments) => inspect::inspect(arguments),
        Command::Generate(arguments) => generate::generate(arguments),
    }
}

/// The commands `vkskin WORD` could have meant.
const COMMANDS: [&str; 6] = ["view", "render", "inspect", "bench", "soak", "generate"];

/// `vkskin rendr` is a typo, not a model: a word that is no file, has no extension and is within
/// two edits of a command is refused with the command it was probably meant to be.
pub(crate) fn misspelt_command(model: &std::path::Path) -> Result<(), String> {
    let Some(word) = model.to_str().filter(|word| !model.exists() && model.extension().is_none() && !word.contains('/')) else {
        return Ok(());
    };
    match COMMANDS.iter().map(|command| (edits(word, command), command)).min() {
        Some((distance, command)) if (1..=2).contains(&distance) => Err(format!(
            "'{word}' is neither a model file nor a command; did you mean `vkskin {command}`? (`vkskin --help` lists them)"
        )),
        _ => Ok(()),
    }
}

/// The Levenshtein distance between two short words.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, a) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &b) in b.iter().enumerate() {
            let next = (diagonal + usize::from(a != b)).min(row[j] + 1).min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
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
