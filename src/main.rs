//! vkskin's command line: parses arguments and hands over to the viewer, the headless commands
//! (`commands.rs`: render, soak), the benchmark or the asset generator.

mod commands;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use vkskin::anim::Layer;
use vkskin::app::capture::FrameCapture;
use vkskin::app::{default_animations, default_model_path, find_clip, SceneSetup};
use vkskin::formats::ranges::parse_clips_argument;
use vkskin::formats::{load_model, read_model};
use vkskin::gpu::instance::validation_from_env;
use vkskin::model::Model;
use vkskin::render::passes::debug::DebugViews;
use vkskin::render::{MemoryPlan, PlanChoices, Strategy};

use commands::{check_messages, render, soak};

/// The viewer is the default command: `vkskin FILE [options]` and `vkskin [options]` are
/// `vkskin view FILE [options]` and `vkskin view [options]`. One vocabulary across the commands:
/// `--instances` and `--strategy` (bench: comma-separated lists), `--out FILE` for a file written,
/// `--out-dir DIR` for a folder, `--frames N` for how many frames are rendered.
#[derive(Parser)]
#[command(
    name = "vkskin",
    version,
    about = "GPU skeletal animation with Vulkan: skin once in compute, draw twice",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no command: the viewer's options.
    #[command(flatten)]
    view: ViewArgs,
}

/// The viewer's options (`view`, or no command at all).
#[derive(Args)]
struct ViewArgs {
    #[command(flatten)]
    scene: SceneArgs,
    /// Window size, WxH.
    #[arg(long, default_value = "1280x720", value_parser = parse_size)]
    size: (u32, u32),
    /// Quit after this many frames.
    #[arg(long)]
    frames: Option<u64>,
    /// Drive N window events at the window (resizes, 0×0, minimize, focus, hide): a test.
    #[arg(long, default_value_t = 0)]
    storm: u32,
    /// On exit, write the last frame (rendered offscreen by the same renderer) as PNG.
    #[arg(long, value_name = "FILE")]
    screenshot: Option<PathBuf>,
    /// Start without the panel (and without its overlay pass; F1 then does nothing).
    #[arg(long)]
    no_ui: bool,
    /// Run the panel's controls at set frames: FRAME:ACTION;... with ACTION strategy=NAME,
    /// instances=N, clip=N, fade=S, speed=X, seek=S, pause, play, step, debug=VIEWS or
    /// panel=on|off. With --screenshot PATH, the frame before each is written as PATH_FRAME.png.
    #[arg(long, value_parser = parse_drive)]
    drive: Option<Drive>,
}

#[derive(Subcommand)]
enum Command {
    /// Open a window on a model (the default command: `vkskin FILE` is `vkskin view FILE`). Drag to
    /// orbit, wheel to zoom, Space pauses, N steps a frame while paused, R resets, Esc quits.
    View(ViewArgs),
    /// Render one frame headless and write it as PNG.
    Render {
        #[command(flatten)]
        scene: SceneArgs,
        /// Seconds into the animation.
        #[arg(long, default_value_t = 0.0, value_parser = parse_seconds)]
        time: f64,
        /// Image size, WxH.
        #[arg(long, default_value = "1280x720", value_parser = parse_size)]
        size: (u32, u32),
        /// The PNG written.
        #[arg(long, value_name = "FILE", default_value = "vkskin.png")]
        out: PathBuf,
        /// Render this many frames, a 60th of a second apart, ending at --time (soak and
        /// validation runs); the last is written.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
        frames: u64,
    },
    /// Describe a model: joint tree, meshes, influences, clips, bounds, textures. No Vulkan needed.
    Inspect {
        /// Model file: .md5mesh, .gltf, .glb, .ms3d or .dae.
        model: PathBuf,
        /// Animation file(s) whose clips play on the model (today: .md5anim). Default: a .md5mesh's
        /// sibling .md5anim files.
        #[arg(long = "anim", value_name = "FILE")]
        animations: Vec<PathBuf>,
        /// Cut named clips from the first animation: NAME=FIRST-LAST,... (frames, or seconds as 0.5s-1.2s).
        #[arg(long)]
        clips: Option<String>,
        /// Build and list the levels of detail (`off`: skip them).
        #[arg(long, value_enum, default_value_t = Switch::On)]
        lod: Switch,
    },
    /// Benchmark the skinning strategies side by side, headless: a table on stdout, JSON, CSV and
    /// PNG plots in --out-dir.
    Bench {
        /// Model file (.md5mesh, .gltf, .glb, .ms3d, .dae). Default: the bundled figure.
        model: Option<PathBuf>,
        /// Animation file(s) whose clips play on the model (today: .md5anim).
        #[arg(long = "anim", value_name = "FILE")]
        animations: Vec<PathBuf>,
        /// Instance counts, comma separated.
        #[arg(long, default_value = "1,10,100,1000,10000", value_delimiter = ',')]
        instances: Vec<usize>,
        /// Strategies, comma separated: compute, vertex, cpu.
        #[arg(long, default_value = "compute,vertex,cpu", value_delimiter = ',', value_parser = parse_strategy)]
        strategy: Vec<Strategy>,
        /// Levels of detail, comma separated: on, off. With both, each row with them on gets the
        /// difference its last frame makes against the same frame with them off.
        #[arg(long, value_enum, default_value = "on", value_delimiter = ',')]
        lod: Vec<Switch>,
        /// The triangle pass's light run (the shadow pass draws only triangles that can reach a
        /// texel), comma separated: on, off (`compute` only; on where memory allows).
        #[arg(long, value_enum, default_value = "off", value_delimiter = ',')]
        light_culling: Vec<Switch>,
        /// Animation LOD (palettes of instances under 48 pixels every second frame), comma
        /// separated: on, off.
        #[arg(long, value_enum, default_value = "off", value_delimiter = ',')]
        animation_lod: Vec<Switch>,
        /// Frames measured for each row (after the warm-up).
        #[arg(long, default_value_t = 60)]
        measure: u32,
        /// Frames rendered before measuring.
        #[arg(long, default_value_t = 10)]
        warmup: u32,
        /// Image size, WxH.
        #[arg(long, default_value = "1280x720", value_parser = parse_size)]
        size: (u32, u32),
        /// Folder for bench.json, bench.csv and the plots.
        #[arg(long, value_name = "DIR", default_value = "bench-results")]
        out_dir: PathBuf,
        /// Turn on the validation layer (slower; for checking, not for figures).
        #[arg(long)]
        validate: bool,
        /// Capture frame N (counted over the whole run, warm-up included) with RenderDoc.
        #[arg(long, value_name = "N")]
        capture_frame: Option<u64>,
    },
    /// Soak: render many headless frames, switching clips, and log process RSS and GPU memory
    /// (gpu-allocator) to a CSV so leaks show as a rising line.
    Soak {
        #[command(flatten)]
        scene: SceneArgs,
        /// Frames to render.
        #[arg(long, default_value_t = 10_000)]
        frames: u64,
        /// Switch every instance to the next clip (crossfading) every this many frames.
        #[arg(long, default_value_t = 120)]
        switch_every: u64,
        /// Log a row every this many frames.
        #[arg(long, default_value_t = 100)]
        every: u64,
        #[arg(long, default_value = "160x120", value_parser = parse_size)]
        size: (u32, u32),
        /// The CSV written: frame, seconds, rss_kib, gpu_allocated_bytes, gpu_capacity_bytes,
        /// rss_anon_kib.
        #[arg(long, value_name = "FILE", default_value = "soak.csv")]
        out: PathBuf,
    },
    /// Write the bundled default model (assets/figure.*) into a folder.
    Generate {
        /// The folder written.
        #[arg(long, value_name = "DIR", default_value = "assets")]
        out_dir: PathBuf,
        /// Write long_clip.ms3d instead: 60 joints, 3 minutes of keys at 30 fps (a load-time check).
        #[arg(long)]
        long_clip: bool,
        /// Also write figure_dense.md5mesh and its clips: the figure with each triangle split into
        /// four, N times over (N = 2: 111,168 triangles; a load-time and level-of-detail check).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=5))]
        subdivide: Option<u32>,
    },
}

/// `--layer CLIP@JOINT[:WEIGHT]`: a clip by name or index over a joint (by name) and its subtree.
fn parse_layer(model: &Model, text: &str) -> Result<Layer, String> {
    let expected = || format!("--layer \"{text}\": expected CLIP@JOINT or CLIP@JOINT:WEIGHT");
    let (clip, rest) = text.split_once('@').ok_or_else(expected)?;
    let (joint, weight) = match rest.rsplit_once(':') {
        Some((joint, weight)) => (joint, weight.trim().parse::<f32>().map_err(|_| expected())?),
        None => (rest, 1.0),
    };
    if !(0.0..=1.0).contains(&weight) {
        return Err(format!("--layer \"{text}\": expected a weight from 0 to 1, found {weight}"));
    }
    let clip = find_clip(model, clip.trim())?;
    let joint = model.skeleton.joints.iter().position(|candidate| candidate.name == joint.trim()).ok_or_else(|| {
        format!("--layer \"{text}\": {} has no joint \"{}\" (`vkskin inspect` lists them)", model.name, joint.trim())
    })?;
    Ok(Layer { clip, joint, weight })
}

/// A feature on or off on the command line (`--lod`, `--light-culling`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Switch {
    On,
    Off,
}

impl Switch {
    fn on(self) -> bool {
        self == Switch::On
    }
}

#[derive(Args)]
struct SceneArgs {
    /// Model file: .md5mesh, .gltf, .glb, .ms3d or .dae. Default: the bundled figure.
    model: Option<PathBuf>,
    /// Animation file(s) whose clips play on the model (today: .md5anim). Default: a .md5mesh's
    /// sibling .md5anim files.
    #[arg(long = "anim", value_name = "FILE")]
    animations: Vec<PathBuf>,
    /// Capture frame N (from 0) with RenderDoc and print the .rdc path: under `renderdoccmd capture`,
    /// or with librenderdoc.so loadable (Debian package renderdoc).
    #[arg(long, value_name = "N")]
    capture_frame: Option<u64>,
    /// Debug views, comma separated: skeleton, normals, shadowmap, wireframe, bounds.
    #[arg(long, default_value = "", value_parser = DebugViews::parse)]
    debug: DebugViews,
    /// Number of animated instances, laid out in a grid.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    instances: u32,
    /// The clip to play, by name or index (default: the first). In the viewer, keys 1-9 switch.
    #[arg(long)]
    clip: Option<String>,
    /// Cut named clips from the first animation: NAME=FIRST-LAST,... in frames (12-30) or seconds
    /// (0.5s-1.2s). They come first; a "<model> animation ranges.txt" beside the model is read too.
    #[arg(long)]
    clips: Option<String>,
    /// Play a second clip over one joint's subtree on every instance: CLIP@JOINT or
    /// CLIP@JOINT:WEIGHT (default weight 1), e.g. wave@upper_arm_left:0.8.
    #[arg(long)]
    layer: Option<String>,
    /// Crossfade time in seconds when the viewer switches clips (0: cut).
    #[arg(long, default_value_t = 0.3, value_parser = parse_fade)]
    fade: f32,
    /// How vertices are skinned: compute (skin once, draw twice), vertex (skin in each pass's vertex
    /// shader, as the tutorials do) or cpu (software skinning on all cores).
    #[arg(long, default_value = "compute", value_parser = parse_strategy)]
    strategy: Strategy,
    /// Levels of detail: on (each instance drawn at the coarsest level within a pixel of the full
    /// mesh) or off (full detail).
    #[arg(long, value_enum, default_value_t = Switch::On)]
    lod: Switch,
    /// The triangle pass's light run (`compute`): the shadow pass draws only the triangles that can
    /// reach a shadow texel. Off by default: on lavapipe it costs the triangle pass more than it
    /// saves the shadow pass (docs/results.md).
    #[arg(long, value_enum, default_value_t = Switch::Off)]
    light_culling: Switch,
    /// Animation LOD: on computes the palette of an instance under 48 pixels on screen (or seen
    /// only by the light) every second frame, skinning it from last frame's palette between.
    #[arg(long, value_enum, default_value_t = Switch::Off)]
    animation_lod: Switch,
    /// Turn on the Khronos validation layer with synchronization validation (also VKSKIN_VALIDATION=1).
    #[arg(long)]
    validate: bool,
}

impl SceneArgs {
    fn validation(&self) -> bool {
        self.validate || validation_from_env()
    }

    /// The renderer's `Setup::animation_lod` for `--animation-lod`.
    fn animation_lod(&self) -> Option<f32> {
        self.animation_lod.on().then_some(vkskin::render::ANIMATION_LOD_PIXELS)
    }

    /// What the memory plan is asked for: room for the light's run with `--light-culling on`.
    fn choices(&self) -> PlanChoices {
        PlanChoices { light_culling: self.light_culling.on(), ..PlanChoices::default() }
    }

    /// The model with its instances, playing the chosen clip; without levels of detail, which the
    /// viewer builds on a worker thread while it draws the full mesh.
    fn setup(&self) -> Result<SceneSetup, String> {
        self.setup_within(None, false)
    }

    /// `setup`, refusing up front (before laying out a single instance) a count past what
    /// `device` can hold, with the limit and the largest count that fits.
    /// `build_levels`: with `--lod on`, build the levels of detail before returning (the headless
    /// commands, whose frames are all rendered at once).
    fn setup_within(&self, device: Option<&vkskin::gpu::Device>, build_levels: bool) -> Result<SceneSetup, String> {
        let model = self.load(build_levels)?;
        match device {
            Some(device) => {
                MemoryPlan::new(device, &model, self.strategy, self.instances, self.choices())
                    .map_err(|error| error.to_string())?;
            }
            None => MemoryPlan::check_any_device(&model, self.strategy, self.instances)?,
        }
        let clip = self.clip.as_deref().map(|selector| find_clip(&model, selector)).transpose()?;
        let layer = self.layer.as_deref().map(|text| parse_layer(&model, text)).transpose()?;
        let mut setup = SceneSetup::new(model, self.instances as usize);
        if let Some(clip) = clip {
            setup.play(clip, 0.0, 0.0);
            setup.frame_played();
        }
        for instance in &mut setup.instances {
            instance.layer = layer;
        }
        Ok(setup)
    }

    fn load(&self, build_levels: bool) -> Result<Model, String> {
        let path = self.model.clone().unwrap_or_else(default_model_path);
        let animations = default_animations(&path, &self.animations);
        let (model, _) = open_model(&path, &animations, self.clips.as_deref(), build_levels && self.lod.on())?;
        for warning in &model.stats.warnings {
            log::warn!("{}", vkskin::formats::files::one_line(warning));
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

/// Reads a model, cuts `--clips` from it, and builds its culling cells and, with `levels`, its
/// levels of detail side by side (neither needs the other, and the chain is mostly one thread's
/// work). Returns how long the levels took.
fn open_model(
    path: &std::path::Path,
    animations: &[PathBuf],
    clips: Option<&str>,
    levels: bool,
) -> Result<(Model, Option<f64>), String> {
    let mut model = read_model(path, animations).map_err(|error| error.to_string())?;
    if let Some(text) = clips {
        model.cut_clips(&parse_clips_argument(text)?)?;
    }
    // A thread of its own, not a rayon task: the chain waits on its own helper thread, and a
    // waiting rayon worker would be one worker less for both jobs' parallel parts.
    let (bounds, levelled) = std::thread::scope(|scope| {
        let chain = levels.then(|| {
            scope.spawn(|| {
                let started = std::time::Instant::now();
                (vkskin::model::lod::with_levels(&model), started.elapsed().as_secs_f64())
            })
        });
        let bounds = model.cell_bounds();
        (bounds, chain.map(|chain| chain.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))))
    });
    // The levels reorder the vertices; the cells do not depend on their order.
    let (mut model, seconds) = match levelled {
        Some((levelled, seconds)) => (levelled, Some(seconds)),
        None => (model, None),
    };
    model.bounds = bounds;
    Ok((model, seconds))
}

fn parse_strategy(text: &str) -> Result<Strategy, String> {
    Strategy::parse(text).ok_or_else(|| format!("expected compute, vertex or cpu, got '{text}'"))
}

/// A finite number of seconds (NaN and infinities have no frame).
fn parse_seconds(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| seconds.is_finite())
        .ok_or_else(|| format!("expected a finite number of seconds, got '{text}'"))
}

/// A crossfade's length: finite, not negative.
fn parse_fade(text: &str) -> Result<f32, String> {
    parse_seconds(text)
        .map(|seconds| seconds as f32)
        .ok()
        .filter(|seconds| *seconds >= 0.0 && seconds.is_finite())
        .ok_or_else(|| format!("expected a crossfade of 0 or more seconds, got '{text}'"))
}

/// `--drive`'s steps, in frame order (one value to clap, not a list of them).
#[derive(Clone)]
struct Drive(Vec<(u64, vkskin::app::panel::Action)>);

fn parse_drive(text: &str) -> Result<Drive, String> {
    let mut steps = Vec::new();
    for step in text.split(';').map(str::trim).filter(|step| !step.is_empty()) {
        let (frame, action) = step.split_once(':').ok_or(format!("'{step}': expected FRAME:ACTION"))?;
        let frame = frame.trim().parse::<u64>().map_err(|_| format!("'{step}': expected a frame number before ':'"))?;
        steps.push((frame, vkskin::app::panel::Action::parse(action.trim())?));
    }
    steps.sort_by_key(|&(frame, _)| frame);
    Ok(Drive(steps))
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
fn run(cli: Cli) -> Result<(), String> {
    let command = cli.command.unwrap_or(Command::View(cli.view));
    match command {
        Command::View(ViewArgs { scene, size, frames, storm, screenshot, no_ui, drive }) => {
            // RenderDoc first: its layer must see the Vulkan instance being created.
            let capture = scene.capture_frame.map(FrameCapture::attach).transpose()?;
            let setup = scene.setup()?;
            let validation = scene.validation();
            let options = vkskin::app::viewer::ViewerOptions {
                validation,
                frame_limit: frames,
                size,
                fade_seconds: scene.fade,
                strategy: scene.strategy,
                light_culling: scene.light_culling.on(),
                animation_lod: scene.animation_lod(),
                lod: scene.lod.on(),
                capture,
                debug: scene.debug,
                storm,
                screenshot,
                ui: !no_ui,
                model_path: Some(scene.model.clone().unwrap_or_else(default_model_path)),
                animations: scene.animations.clone(),
                drive: drive.map_or_else(Vec::new, |drive| drive.0),
            };
            let report = vkskin::app::viewer::run(setup, options)?;
            println!("presented {} frames of {}", report.frames, report.model);
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
        Command::Render { scene, time, size, out, frames } => render(&scene, time, size, &out, frames),
        Command::Bench {
            model,
            animations,
            instances,
            strategy,
            lod,
            light_culling,
            animation_lod,
            measure,
            warmup,
            size,
            out_dir,
            validate,
            capture_frame,
        } => {
            let mut capture = capture_frame.map(FrameCapture::attach).transpose()?;
            let path = model.unwrap_or_else(default_model_path);
            let animations = default_animations(&path, &animations);
            let model = load_model(&path, &animations).map_err(|error| error.to_string())?;
            let options = vkskin::app::bench::BenchOptions {
                lods: lod.iter().map(|lod| lod.on()).collect(),
                light_culling: light_culling.iter().map(|light| light.on()).collect(),
                animation_lod: animation_lod.iter().map(|switch| switch.on()).collect(),
                counts: instances,
                strategies: strategy,
                warmup,
                frames: measure.max(1),
                size,
                out: out_dir.clone(),
                validation: validate || validation_from_env(),
            };
            // A bar redrawn in place on a terminal; in a log, a plain line a step.
            let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
            let report = vkskin::app::bench::run(&model, &options, capture.as_mut(), |done, total, what| {
                if terminal {
                    eprint!("{}", vkskin::app::bench::progress_bar(done, total, what));
                } else {
                    eprintln!("bench: {done}/{total} {what}");
                }
            })?;
            if terminal {
                eprintln!();
            }
            print!("{}", report.table());
            for path in report.write(&out_dir)? {
                println!("wrote {}", path.display());
            }
            Ok(())
        }
        Command::Soak { scene, frames, switch_every, every, size, out } => {
            soak(&scene, frames, switch_every.max(1), every.max(1), size, &out)
        }
        Command::Inspect { model, animations, clips, lod } => {
            let animations = default_animations(&model, &animations);
            let (model, chain_seconds) = open_model(&model, &animations, clips.as_deref(), lod.on())?;
            // A reader that stops early (`| head`) is not an error; print! would panic on it.
            use std::io::Write as _;
            match std::io::stdout().lock().write_all(vkskin::app::inspect::describe(&model, chain_seconds).as_bytes()) {
                Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(format!("cannot write the description: {error}"))
                }
                _ => Ok(()),
            }
        }
        Command::Generate { out_dir: out, long_clip, subdivide } => {
            std::fs::create_dir_all(&out).map_err(|error| format!("cannot create {}: {error}", out.display()))?;
            let written = if long_clip {
                use vkskin::generate::long_clip::{FRAME_RATE, JOINTS, SECONDS};
                let path = out.join("long_clip.ms3d");
                let bytes = vkskin::formats::ms3d::write(&vkskin::generate::long_clip::long_clip(JOINTS, SECONDS, FRAME_RATE));
                std::fs::write(&path, bytes).map_err(|error| format!("cannot write {}: {error}", path.display()))?;
                vec![path]
            } else {
                let mut written = vkskin::generate::write_assets(&out)
                    .map_err(|error| format!("cannot write into {}: {error}", out.display()))?;
                if let Some(times) = subdivide {
                    let figure = vkskin::generate::figure();
                    let dense = vkskin::generate::dense::subdivided(&figure.mesh, times);
                    // The figure's clips beside it, named so that they are found as the figure's are.
                    let mut files = vec![("figure_dense.md5mesh".to_string(), vkskin::formats::md5::write_mesh(&dense))];
                    for (name, anim) in vkskin::generate::animation_files(&figure) {
                        files.push((name.replace("figure_", "figure_dense_"), vkskin::formats::md5::write_anim(anim)));
                    }
                    for (name, text) in files {
                        let path = out.join(name);
                        std::fs::write(&path, text).map_err(|error| format!("cannot write {}: {error}", path.display()))?;
                        written.push(path);
                    }
                }
                written
            };
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
            // One line, whatever text from a file the error carries.
            eprintln!("vkskin: error: {}", vkskin::formats::files::one_line(&error.to_string()));
            ExitCode::FAILURE
        }
    }
}
