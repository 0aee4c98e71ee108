//! vkskin's command line: `cli.rs` reads the arguments, `commands/` does what they ask (the viewer,
//! the headless render and soak, the benchmark, inspect, the asset generator).

mod cli;
mod commands;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Lines a person reads, as the errors are: `vkskin: warning: ...`, no timestamp or module. A
    // logged error (what the Vulkan loader said on the way) is not the run's one `vkskin: error:`.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
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
    match commands::run(cli::Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // One line, whatever text from a file the error carries.
            eprintln!("vkskin: error: {}", vkskin::formats::files::one_line(&error.to_string()));
            ExitCode::FAILURE
        }
    }
}
