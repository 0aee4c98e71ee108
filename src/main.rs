//! vkskin's command line: `cli.rs` reads the arguments, `commands/` does what they ask (the viewer,
//! the headless render and soak, the benchmark, inspect, the asset generator).

mod cli;
mod commands;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    vkskin::app::launched();
    // Lines a person reads, as the errors are: `vkskin: warning: ...`, no timestamp or module. A
    // logged error (what the Vulkan loader said on the way) is not the run's one `vkskin: error:`.
    // Warnings, and what the `progress` target says of a long wait (the first pipeline compile).
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn,progress=info"))
        .format(|out, record| {
            use std::io::Write as _;
            let level = match record.level() {
                log::Level::Error => "logged error",
                log::Level::Warn => "warning",
                log::Level::Info => "info",
                log::Level::Debug | log::Level::Trace => "debug",
            };
            writeln!(out, "vkskin: {level}: {}", record.args())
        })
        .init();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        // Help and the version are no error.
        Err(error) if !error.use_stderr() => error.exit(),
        Err(error) => {
            // A misspelt command before options (`vkskin rendr --out x.png`) reads as a model file
            // and an option the viewer lacks: say what was meant, as `vkskin rendr` alone does.
            let first = std::env::args_os().nth(1).map(std::path::PathBuf::from);
            let message = match first.as_deref().map(commands::misspelt_command) {
                Some(Err(meant)) => meant,
                _ => clap_message(&error),
            };
            eprintln!("vkskin: error: {message}");
            return ExitCode::from(2);
        }
    };
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // One line, whatever text from a file the error carries.
            eprintln!("vkskin: error: {}", vkskin::formats::files::one_line(&error.to_string()));
            ExitCode::FAILURE
        }
    }
}

/// clap's message without its own `error: ` in front: every error of the binary starts the same
/// way (`vkskin: error: `), its usage and tips kept on the lines after.
fn clap_message(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    rendered.trim_start().strip_prefix("error: ").unwrap_or(rendered.trim_start()).trim_end().to_string()
}
