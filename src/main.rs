//! vkskin's command line: parses arguments and hands over to the viewer, the headless renderer or
//! the asset generator.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use vkskin::app::{default_animations, default_model_path, find_clip, headless_device, HeadlessRenderer, SceneSetup};
use vkskin::formats::load_model;
use vkskin::model::Model;
use vkskin::render::offscreen::save_png;
use vkskin::render::{MemoryPlan, Strategy};
use vkskin::vk::instance::validation_from_env;
use vkskin::vk::MessageCounts;

#[derive(Parser)]
#[command(name = "vkskin", version, about = "GPU skeletal animation with Vulkan: skin once in compute, draw twice")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Open a window on a model (the default command). Drag to orbit, wheel to zoom, Space pauses,
    /// N steps a frame while paused, R resets, Esc quits.
    View {
        #[command(flatten)]
        scene: SceneArgs,
        /// Window size, WxH.
        #[arg(long, default_value = "1280x720", value_parser = parse_size)]
        size: (u32, u32),
        /// Quit after this many frames.
        #[arg(long)]
        frames: Option<u64>,
    },
    /// Render one frame headless and write it as PNG.
    Render {
        #[command(flatten)]
        scene: SceneArgs,
        /// Seconds into the animation.
        #[arg(long, default_value_t = 0.0)]
        time: f64,
        /// Image size, WxH.
        #[arg(long, default_value = "1280x720", value_parser = parse_size)]
        size: (u32, u32),
        /// Output PNG path.
        #[arg(long, default_value = "vkskin.png")]
        out: PathBuf,
    },
    /// Describe a model: joint tree, meshes, influences, clips, bounds, textures. No Vulkan needed.
    Inspect {
        model: PathBuf,
        /// Animation file(s) (.md5anim). Default: the model's sibling .md5anim, if any.
        #[arg(long = "anim")]
        animations: Vec<PathBuf>,
    },
    /// Benchmark the skinning strategies side by side, headless: a table on stdout, JSON, CSV and
    /// PNG plots in --out.
    Bench {
        /// Model file. Default: the bundled figure.
        model: Option<PathBuf>,
        #[arg(long = "anim")]
        animations: Vec<PathBuf>,
        /// Instance counts, comma separated.
        #[arg(long, default_value = "1,10,100,1000,10000", value_delimiter = ',')]
        counts: Vec<usize>,
        /// Strategies, comma separated: compute, vertex, cpu.
        #[arg(long, default_value = "compute,vertex,cpu", value_delimiter = ',', value_parser = parse_strategy)]
        strategies: Vec<Strategy>,
        /// Measured frames per strategy and count.
        #[arg(long, default_value_t = 60)]
        frames: u32,
        /// Frames run before measuring.
        #[arg(long, default_value_t = 10)]
        warmup: u32,
        #[arg(long, default_value = "1280x720", value_parser = parse_size)]
        size: (u32, u32),
        /// Folder for bench.json, bench.csv and the plots.
        #[arg(long, default_value = "bench-results")]
        out: PathBuf,
        /// Turn on the validation layer (slower; for checking, not for figures).
        #[arg(long)]
        validate: bool,
    },
    /// Write the bundled default model (assets/figure.*) into a folder.
    Generate {
        #[arg(long, default_value = "assets")]
        out: PathBuf,
    },
}

#[derive(Args)]
struct SceneArgs {
    /// Model file (.md5mesh). Default: the bundled figure.
    model: Option<PathBuf>,
    /// Animation file(s) (.md5anim). Default: the model's sibling .md5anim, if any.
    #[arg(long = "anim")]
    animations: Vec<PathBuf>,
    /// Number of animated instances, laid out in a grid.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    instances: u32,
    /// The clip to play, by name or index (default: the first). In the viewer, keys 1-9 switch.
    #[arg(long)]
    clip: Option<String>,
    /// Crossfade time in seconds when the viewer switches clips (0: cut).
    #[arg(long, default_value_t = 0.3)]
    fade: f32,
    /// How vertices are skinned: compute (skin once, draw twice), vertex (skin in each pass's vertex
    /// shader, as the tutorials do) or cpu (software skinning on all cores).
    #[arg(long, default_value = "compute", value_parser = parse_strategy)]
    strategy: Strategy,
    /// Turn on the Khronos validation layer with synchronization validation (also VKSKIN_VALIDATION=1).
    #[arg(long)]
    validate: bool,
}

impl SceneArgs {
    fn validation(&self) -> bool {
        self.validate || validation_from_env()
    }

    /// The model with its instances, playing the chosen clip.
    fn setup(&self) -> Result<SceneSetup, String> {
        self.setup_within(None)
    }

    /// `setup`, refusing up front (before laying out a single instance) a count past what
    /// `device` can hold, with the limit and the largest count that fits.
    fn setup_within(&self, device: Option<&vkskin::vk::Device>) -> Result<SceneSetup, String> {
        let model = self.load()?;
        if let Some(device) = device {
            MemoryPlan::new(device, &model, self.strategy, self.instances, None).map_err(|error| error.to_string())?;
        }
        let clip = self.clip.as_deref().map(|selector| find_clip(&model, selector)).transpose()?;
        let mut setup = SceneSetup::new(model, self.instances as usize);
        if let Some(clip) = clip {
            setup.play(clip, 0.0, 0.0);
        }
        Ok(setup)
    }

    fn load(&self) -> Result<Model, String> {
        let path = self.model.clone().unwrap_or_else(default_model_path);
        let animations = default_animations(&path, &self.animations);
        let model = load_model(&path, &animations).map_err(|error| error.to_string())?;
        for warning in &model.stats.warnings {
            log::warn!("{warning}");
        }
        log::info!(
            "{}: {} vertices, {} joints, up to {} influences a vertex, {} clips",
            path.display(),
            model.vertices.len(),
            model.skeleton.len(),
            model.stats.max_influences,
            model.clips.len()
        );
        Ok(model)
    }
}

fn parse_strategy(text: &str) -> Result<Strategy, String> {
    Strategy::parse(text).ok_or_else(|| format!("expected compute, vertex or cpu, got '{text}'"))
}

fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let (width, height) =
        text.split_once(['x', 'X']).ok_or_else(|| format!("expected WxH, for example 1280x720, got '{text}'"))?;
    let parse = |side: &str| side.trim().parse::<u32>().ok().filter(|&value| (1..=16384).contains(&value));
    match (parse(width), parse(height)) {
        (Some(width), Some(height)) => Ok((width, height)),
        _ => Err(format!("expected WxH with sides from 1 to 16384, got '{text}'")),
    }
}

/// With validation on, any warning or error the layer reported fails the run.
fn check_messages(validation: bool, messages: MessageCounts) -> Result<(), String> {
    if validation {
        eprintln!("validation: {} errors, {} warnings", messages.errors, messages.warnings);
        if messages.errors + messages.warnings > 0 {
            return Err(format!("the validation layer reported {} errors and {} warnings", messages.errors, messages.warnings));
        }
    }
    Ok(())
}

fn render(scene_args: &SceneArgs, time: f64, (width, height): (u32, u32), out: &Path) -> Result<(), String> {
    let validation = scene_args.validation();
    let device = headless_device(validation).map_err(|error| error.to_string())?;
    let setup = scene_args.setup_within(Some(&device))?;
    let image = {
        let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (width, height), scene_args.strategy)
            .map_err(|error| error.to_string())?;
        let scene = setup.frame(time, headless.aspect());
        headless.render(&scene).map_err(|error| error.to_string())?
    };
    save_png(&image, out)?;
    println!("wrote {} ({width}x{height}, t = {time} s, {} on {})", out.display(), setup.model.name, device.name());
    check_messages(validation, device.instance.message_counts())
}

fn run(cli: Cli) -> Result<(), String> {
    let command = cli.command.unwrap_or(Command::View {
        scene: SceneArgs {
            model: None,
            animations: Vec::new(),
            instances: 1,
            clip: None,
            fade: 0.3,
            strategy: Strategy::Compute,
            validate: false,
        },
        size: (1280, 720),
        frames: None,
    });
    match command {
        Command::View { scene, size, frames } => {
            let setup = scene.setup()?;
            let validation = scene.validation();
            let options = vkskin::viewer::ViewerOptions {
                validation,
                frame_limit: frames,
                size,
                fade_seconds: scene.fade,
                strategy: scene.strategy,
            };
            let report = vkskin::viewer::run(setup, options)?;
            println!("presented {} frames", report.frames);
            check_messages(validation, report.messages)
        }
        Command::Render { scene, time, size, out } => render(&scene, time, size, &out),
        Command::Bench { model, animations, counts, strategies, frames, warmup, size, out, validate } => {
            let path = model.unwrap_or_else(default_model_path);
            let animations = default_animations(&path, &animations);
            let model = load_model(&path, &animations).map_err(|error| error.to_string())?;
            let options = vkskin::bench::BenchOptions {
                counts,
                strategies,
                warmup,
                frames: frames.max(1),
                size,
                out: out.clone(),
                validation: validate || validation_from_env(),
            };
            let report = vkskin::bench::run(&model, &options, |done, total, what| {
                eprint!("{}", vkskin::bench::progress_bar(done, total, what));
            })?;
            eprintln!();
            print!("{}", report.table());
            for path in report.write(&out)? {
                println!("wrote {}", path.display());
            }
            Ok(())
        }
        Command::Inspect { model, animations } => {
            let animations = default_animations(&model, &animations);
            let model = load_model(&model, &animations).map_err(|error| error.to_string())?;
            print!("{}", vkskin::inspect::describe(&model));
            Ok(())
        }
        Command::Generate { out } => {
            std::fs::create_dir_all(&out).map_err(|error| format!("cannot create {}: {error}", out.display()))?;
            let written =
                vkskin::generate::write_assets(&out).map_err(|error| format!("cannot write into {}: {error}", out.display()))?;
            for path in written {
                println!("wrote {}", path.display());
            }
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("vkskin: error: {error}");
            ExitCode::FAILURE
        }
    }
}
