//! The command line as clap reads it: the commands, their arguments and the value parsers. What
//! each command does is in `commands/`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use vkskin::anim::Skinning;
use vkskin::render::passes::debug::DebugViews;
use vkskin::render::{Raster, Shadows, Strategy};

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
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// With no command: the viewer's options.
    #[command(flatten)]
    pub(crate) view: ViewArgs,
}

/// The viewer's options (`view`, or no command at all).
#[derive(Args)]
pub(crate) struct ViewArgs {
    #[command(flatten)]
    pub(crate) scene: SceneArgs,
    /// Window size, WxH.
    #[arg(long, default_value = "1280x720", value_parser = parse_size)]
    pub(crate) size: (u32, u32),
    /// Crossfade time in seconds when keys 1-9 switch clips (0: cut).
    #[arg(long, default_value_t = 0.3, value_parser = parse_fade)]
    pub(crate) fade: f32,
    /// Quit after this many frames.
    #[arg(long)]
    pub(crate) frames: Option<u64>,
    /// Drive N window events at the window (resizes, 0×0, minimize, focus, hide): a test.
    #[arg(long, default_value_t = 0)]
    pub(crate) storm: u32,
    /// On exit, write the last frame (rendered offscreen by the same renderer) as PNG.
    #[arg(long, value_name = "FILE")]
    pub(crate) screenshot: Option<PathBuf>,
    /// Start without the panel (and without its overlay pass; F1 then does nothing).
    #[arg(long)]
    pub(crate) no_ui: bool,
    /// Run the panel's controls at set frames: FRAME:ACTION;... with ACTION strategy=NAME,
    /// instances=N, clip=N, fade=S, speed=X, seek=S, pause, play, step, debug=VIEWS or
    /// panel=on|off. With --screenshot PATH, the frame before each is written as PATH_FRAME.png.
    #[arg(long, value_parser = parse_drive)]
    pub(crate) drive: Option<Drive>,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Open a window on a model (the default command: `vkskin FILE` is `vkskin view FILE`). Drag to
    /// orbit, wheel to zoom, Space pauses, N steps a frame while paused, R resets, Esc quits.
    View(ViewArgs),
    /// Render one frame headless and write it as an image (PNG, or JPEG, BMP, TGA by --out).
    Render(RenderArgs),
    /// Describe a model: joint tree, meshes, influences, clips, bounds, textures. No Vulkan needed.
    Inspect(InspectArgs),
    /// Benchmark the skinning strategies side by side, headless: a table on stdout, JSON, CSV and
    /// PNG plots in --out-dir.
    Bench(BenchArgs),
    /// Soak: render many headless frames, switching clips, and log process RSS and GPU memory
    /// (gpu-allocator) to a CSV so leaks show as a rising line.
    Soak(SoakArgs),
    /// Write the bundled default model (assets/figure.*) into a folder.
    Generate(GenerateArgs),
}

/// `vkskin render`'s arguments.
#[derive(Args)]
pub(crate) struct RenderArgs {
    #[command(flatten)]
    pub(crate) scene: SceneArgs,
    /// Seconds into the animation (negative counts back from the start of the loop).
    #[arg(long, default_value_t = 0.0, value_parser = parse_seconds, allow_negative_numbers = true, display_order = 1)]
    pub(crate) time: f64,
    /// Image size, WxH.
    #[arg(long, default_value = "1280x720", value_parser = parse_size, display_order = 3)]
    pub(crate) size: (u32, u32),
    /// The image written: PNG, or JPEG, BMP or TGA by its extension.
    #[arg(long, value_name = "FILE", default_value = "vkskin.png", display_order = 2)]
    pub(crate) out: PathBuf,
    /// Render this many frames, a 60th of a second apart, ending at --time (soak and
    /// validation runs); the last is written.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) frames: u64,
}

/// `vkskin inspect`'s arguments.
#[derive(Args)]
pub(crate) struct InspectArgs {
    /// Model file(s): .md5mesh, .gltf, .glb, .ms3d, .dae or .fbx; or motion alone: .bvh,
    /// .acl.sjson. Several: each described, then the crowd they make (each model's GPU data
    /// counted once, and what an instance of each adds).
    #[arg(required = true, num_args = 1..)]
    pub(crate) models: Vec<PathBuf>,
    /// File(s) whose clips play on the model, any format (a .md5anim alone, a "without skin"
    /// FBX or glTF, BVH motion capture, an ACL clip, another character), matched by joint name
    /// without namespaces and case, then by humanoid role (CMU's, DAZ's or Mixamo's names); what
    /// matched is reported. Default: a .md5mesh's sibling .md5anim files.
    #[arg(long = "anim", value_name = "FILE")]
    pub(crate) animations: Vec<PathBuf>,
    /// Cut named clips from the first animation: NAME=FIRST-LAST,... (frames, or seconds as 0.5s-1.2s).
    #[arg(long)]
    pub(crate) clips: Option<String>,
    /// Cut clips by a ranges file of another name than `<model> animation ranges.txt` (Psionic's
    /// "FIRST-LAST NAME" lines).
    #[arg(long, value_name = "FILE")]
    pub(crate) ranges: Option<PathBuf>,
    /// Build and list the levels of detail (`off`: skip them).
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) lod: Switch,
    /// Clips compressed to about ACL's size, decoded by the palette pass (on), or the files' keys
    /// as they are (off). docs/compression.md.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) clip_compression: Switch,
    /// Travelling clips (CMU capture, Mixamo clips not made "in place") played in place, the
    /// instance moved by the motion taken out of them, across loops (on), or as the file has
    /// them, jumping back at each loop (off). docs/animation.md.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) root_motion: Switch,
    /// The joint whose motion on the ground is taken out (default: the root, or the hips where
    /// the root stays put).
    #[arg(long, value_name = "JOINT")]
    pub(crate) root_joint: Option<String>,
    /// The culling cells, levels of detail and compressed clips read from the derived-data cache
    /// (the user's cache folder, or VKSKIN_CACHE_DIR), keyed by the model's content, where it holds
    /// them; stored there where not (on), or made every time (off). docs/load-times.md.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) cache: Switch,
    /// Instead of describing the model: evaluate it at TIME seconds into --clip on the GPU (one
    /// instance, the full mesh) and print what the palette and skin passes computed, in the file's
    /// own units and axes: every joint in the file's order, every mesh's skinned vertices in the
    /// file's order. Vertex order: glTF, each primitive's accessors; MD5, each mesh's verts;
    /// Milkshape, its one vertex list ("vertices"); FBX, each mesh's control points; COLLADA,
    /// each drawn instance's POSITION source (a point or position that vkskin splits by normals or
    /// UVs is reported once). A vertex no triangle uses is null. Needs Vulkan; VKSKIN_VALIDATION=1 validates.
    #[arg(long, value_name = "TIME", value_parser = parse_seconds)]
    pub(crate) pose: Option<f64>,
    /// With --pose: the clip, by name or index (default: the first; a model without clips is
    /// posed in its bind pose).
    #[arg(long, requires = "pose")]
    pub(crate) clip: Option<String>,
    /// With --pose: print {"time", "clip", "joints": [{"name", "model": [16 floats,
    /// column-major]}], "meshes": [{"name", "positions": [[x, y, z], ...]}]} instead of text.
    #[arg(long, requires = "pose")]
    pub(crate) json: bool,
}

/// `vkskin bench`'s arguments.
#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Model file(s) (.md5mesh, .gltf, .glb, .ms3d, .dae, .fbx). Several: their mixed crowd (see
    /// --mix). Default: the bundled figure.
    #[arg(value_name = "FILE")]
    pub(crate) models: Vec<PathBuf>,
    /// More models, comma separated.
    #[arg(long = "models", value_name = "FILE,...", value_delimiter = ',')]
    pub(crate) more_models: Vec<PathBuf>,
    /// With several models, comma separated: mixed (their crowd, each instance one of them) and
    /// first (the first model alone), each a row. Default: mixed. Without model files, asking for
    /// it mixes the bundled figure with its generated variants (`vkskin --instances N`'s crowd).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub(crate) mix: Vec<Mix>,
    /// File(s) whose clips play on the model, any format, matched by joint name (as `view`).
    #[arg(long = "anim", value_name = "FILE")]
    pub(crate) animations: Vec<PathBuf>,
    /// The clip every instance plays, by name or number (default: the first).
    #[arg(long, value_name = "CLIP")]
    pub(crate) clip: Option<String>,
    /// Instance counts, comma separated.
    #[arg(long, default_value = "1,10,100,1000,10000", value_delimiter = ',')]
    pub(crate) instances: Vec<usize>,
    /// Strategies, comma separated: compute, vertex, cpu.
    #[arg(long, default_value = "compute,vertex,cpu", value_delimiter = ',', value_parser = parse_strategy)]
    pub(crate) strategy: Vec<Strategy>,
    /// Levels of detail, comma separated: on, off. With both, each row with them on gets the
    /// difference its last frame makes against the same frame with them off.
    #[arg(long, value_enum, default_value = "on", value_delimiter = ',')]
    pub(crate) lod: Vec<Switch>,
    /// The triangle pass's light run (the shadow pass draws only triangles that can reach a
    /// texel), comma separated: on, off (`compute` only; on where memory allows).
    #[arg(long, value_enum, default_value = "off", value_delimiter = ',')]
    pub(crate) light_culling: Vec<Switch>,
    /// Animation LOD (palettes of instances under 48 pixels every 2nd frame, under 8 every 4th, under 2 every 8th), comma
    /// separated: on, off.
    #[arg(long, value_enum, default_value = "off", value_delimiter = ',')]
    pub(crate) animation_lod: Vec<Switch>,
    /// Morph targets as the clips weigh them (on) or held at weight 0 (off), comma separated; with
    /// both, the report gives the morph's cost per vertex per active target. Models with targets only.
    #[arg(long, value_enum, default_value = "on", value_delimiter = ',')]
    pub(crate) morph: Vec<Switch>,
    /// Skinning modes, comma separated: linear, dual-quaternion; with both, the report gives each
    /// mode's skinning cost per vertex-influence.
    #[arg(long, default_value = "linear", value_delimiter = ',', value_parser = parse_skinning)]
    pub(crate) skinning: Vec<Skinning>,
    /// Motion blur (the motion pass, after the forward pass), comma separated: on, off; the
    /// `motion` column is its time.
    #[arg(long, value_enum, default_value = "off", value_delimiter = ',')]
    pub(crate) motion_blur: Vec<Switch>,
    /// Shadows, comma separated: map, ray (ray: a device with ray query; not `vertex`, which has no
    /// skinned buffer). With both, the report gives the bottom levels' cost per triangle against
    /// the skin pass, the top level's per instance and the ray queries' per pixel.
    #[arg(long, default_value = "map", value_delimiter = ',', value_parser = parse_shadows)]
    pub(crate) shadows: Vec<Shadows>,
    /// Rasterizers, comma separated: hardware, compute, auto (the `compute` strategy with the
    /// triangle pass; the others draw with the hardware's). The report gives the triangles and
    /// samples each path took and the raster pass's time.
    #[arg(long, default_value = "auto", value_delimiter = ',', value_parser = parse_raster)]
    pub(crate) raster: Vec<Raster>,
    /// Clips compressed (on) or the files' keys (off), comma separated; with both, the report gives
    /// the palette pass's cost per joint-instance of each.
    #[arg(long, value_enum, default_value = "on", value_delimiter = ',')]
    pub(crate) clip_compression: Vec<Switch>,
    /// Travelling clips (CMU capture, Mixamo clips not made "in place") played in place, the
    /// instance moved by the motion taken out of them, across loops (on), or as the file has
    /// them, jumping back at each loop (off). docs/animation.md.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) root_motion: Switch,
    /// The joint whose motion on the ground is taken out (default: the root, or the hips where
    /// the root stays put).
    #[arg(long, value_name = "JOINT")]
    pub(crate) root_joint: Option<String>,
    /// The culling cells, levels of detail and compressed clips read from the derived-data cache
    /// (the user's cache folder, or VKSKIN_CACHE_DIR), keyed by the model's content, where it holds
    /// them; stored there where not (on), or made every time (off). docs/load-times.md.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) cache: Switch,
    /// A crowd: instance i plays the i-th clip that moves (as `view --crowd`).
    #[arg(long, conflicts_with = "clip")]
    pub(crate) crowd: bool,
    /// Several instances vary in phase, speed, size and colours (on), or are copies (off).
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) variety: Switch,
    /// Frames measured for each row (after the warm-up).
    #[arg(long, default_value_t = 60)]
    pub(crate) measure: u32,
    /// Frames rendered before measuring.
    #[arg(long, default_value_t = 10)]
    pub(crate) warmup: u32,
    /// Image size, WxH.
    #[arg(long, default_value = "1280x720", value_parser = parse_size)]
    pub(crate) size: (u32, u32),
    /// Folder for bench.json, bench.csv and the plots.
    #[arg(long, value_name = "DIR", default_value = "bench-results")]
    pub(crate) out_dir: PathBuf,
    /// Turn on the validation layer (slower; for checking, not for figures).
    #[arg(long)]
    pub(crate) validate: bool,
    /// Capture frame N (counted over the whole run, warm-up included) with RenderDoc.
    #[arg(long, value_name = "N")]
    pub(crate) capture_frame: Option<u64>,
}

/// `vkskin soak`'s arguments.
#[derive(Args)]
pub(crate) struct SoakArgs {
    #[command(flatten)]
    pub(crate) scene: SceneArgs,
    /// Frames to render.
    #[arg(long, default_value_t = 10_000)]
    pub(crate) frames: u64,
    /// Switch every instance to the next clip (crossfading) every this many frames.
    #[arg(long, default_value_t = 120)]
    pub(crate) switch_every: u64,
    /// The crossfade's time in seconds at each switch (0: cut).
    #[arg(long, default_value_t = 0.25, value_parser = parse_fade)]
    pub(crate) fade: f32,
    /// Log a row every this many frames.
    #[arg(long, default_value_t = 100)]
    pub(crate) every: u64,
    /// Image size, WxH: small by default, since a soak measures memory, not pixels.
    #[arg(long, default_value = "160x120", value_parser = parse_size)]
    pub(crate) size: (u32, u32),
    /// The CSV written: frame, seconds, rss_kib, gpu_allocated_bytes, gpu_capacity_bytes,
    /// rss_anon_kib.
    #[arg(long, value_name = "FILE", default_value = "soak.csv")]
    pub(crate) out: PathBuf,
}

/// `vkskin generate`'s arguments.
#[derive(Args)]
pub(crate) struct GenerateArgs {
    /// The folder written (not `assets/` unless named: the bundled files live there).
    #[arg(long, value_name = "DIR", default_value = "vkskin-generated")]
    pub(crate) out_dir: PathBuf,
    /// Write long_clip.ms3d instead: 60 joints, 3 minutes of keys at 30 fps (a load-time check).
    #[arg(long)]
    pub(crate) long_clip: bool,
    /// Also write figure_dense.md5mesh and its clips: the figure with each triangle split into
    /// four, N times over (N = 2: 111,168 triangles; a load-time and level-of-detail check).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=5))]
    pub(crate) subdivide: Option<u32>,
}

/// A feature on or off on the command line (`--lod`, `--light-culling`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Switch {
    On,
    Off,
}

/// `bench --mix`: a row's crowd.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Mix {
    /// Every model, mixed.
    Mixed,
    /// The first model alone.
    First,
}

impl Switch {
    pub(crate) fn on(self) -> bool {
        self == Switch::On
    }
}

/// The scene every rendering command shares: model, clips, instances, strategy, features.
#[derive(Args)]
pub(crate) struct SceneArgs {
    /// Model file(s): .md5mesh, .gltf, .glb, .ms3d, .dae or .fbx; or motion alone: .bvh,
    /// .acl.sjson. Several make a crowd of them: the instances mixed, each one of the models
    /// playing one of its clips. Default: the bundled figure.
    #[arg(value_name = "FILE")]
    pub(crate) models: Vec<PathBuf>,
    /// More models for the crowd, comma separated (after those given before the options).
    #[arg(long = "models", value_name = "FILE,...", value_delimiter = ',')]
    pub(crate) more_models: Vec<PathBuf>,
    /// File(s) whose clips play on the model, any format (a .md5anim alone, a "without skin"
    /// FBX or glTF, BVH motion capture, an ACL clip, another character), matched by joint name
    /// without namespaces and case, then by humanoid role (CMU's, DAZ's or Mixamo's names); what
    /// matched is reported. With several models, each takes those that match its joints. Default:
    /// a .md5mesh's sibling .md5anim files.
    #[arg(long = "anim", value_name = "FILE")]
    pub(crate) animations: Vec<PathBuf>,
    /// Capture frame N (from 0) with RenderDoc and print the .rdc path: under `renderdoccmd capture`,
    /// or with RenderDoc's library loadable (librenderdoc.so from the Debian package renderdoc;
    /// renderdoc.dll on Windows).
    #[arg(long, value_name = "N")]
    pub(crate) capture_frame: Option<u64>,
    /// Debug views, comma separated: skeleton, normals, shadowmap, wireframe, bounds, motion (each
    /// pixel's motion since last frame as a colour: direction as hue, length as strength), raster
    /// (what each rasterizer drew: the hardware's blue, the compute pass's orange).
    #[arg(long, default_value = "", value_parser = DebugViews::parse)]
    pub(crate) debug: DebugViews,
    /// Number of animated instances, laid out in a grid.
    #[arg(long, default_value_t = 1, value_parser = parse_instances)]
    pub(crate) instances: u32,
    /// The clip to play, by name or index (default: the first). In the viewer, keys 1-9 switch.
    #[arg(long)]
    pub(crate) clip: Option<String>,
    /// Cut named clips from the first animation: NAME=FIRST-LAST,... in frames (12-30) or seconds
    /// (0.5s-1.2s). They come first; a "<model> animation ranges.txt" beside the model is read too.
    #[arg(long)]
    pub(crate) clips: Option<String>,
    /// Cut clips by a ranges file of another name than `<model> animation ranges.txt` (Psionic's
    /// "FIRST-LAST NAME" lines).
    #[arg(long, value_name = "FILE")]
    pub(crate) ranges: Option<PathBuf>,
    /// Clips compressed to about ACL's size, decoded by the palette pass (on), or the files' keys
    /// as they are (off). docs/compression.md.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) clip_compression: Switch,
    /// Travelling clips (CMU capture, Mixamo clips not made "in place") played in place, the
    /// instance moved by the motion taken out of them, across loops (on), or as the file has
    /// them, jumping back at each loop (off). docs/animation.md.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) root_motion: Switch,
    /// The joint whose motion on the ground is taken out (default: the root, or the hips where
    /// the root stays put).
    #[arg(long, value_name = "JOINT")]
    pub(crate) root_joint: Option<String>,
    /// The culling cells, levels of detail and compressed clips read from the derived-data cache
    /// (the user's cache folder, or VKSKIN_CACHE_DIR), keyed by the model's content, where it holds
    /// them; stored there where not (on), or made every time (off). docs/load-times.md.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) cache: Switch,
    /// A crowd: instance i plays the i-th clip that moves (round and round) instead of one clip for
    /// all; with many `--anim` files, every clip they give.
    #[arg(long, conflicts_with = "clip")]
    pub(crate) crowd: bool,
    /// Several instances vary in phase, speed, size and colours (on), or are copies of the model
    /// a fixed step apart in their clip (off). docs/crowds.md.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) variety: Switch,
    /// Play a second clip over one joint's subtree on every instance: CLIP@JOINT or
    /// CLIP@JOINT:WEIGHT (default weight 1), e.g. wave@upper_arm_left:0.8.
    #[arg(long)]
    pub(crate) layer: Option<String>,
    /// How vertices are skinned: compute (skin once, draw twice), vertex (skin in each pass's vertex
    /// shader, as the tutorials do) or cpu (software skinning on all cores).
    #[arg(long, default_value = "compute", value_parser = parse_strategy)]
    pub(crate) strategy: Strategy,
    /// Levels of detail: on (each instance drawn at the coarsest level within a pixel of the full
    /// mesh) or off (full detail).
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) lod: Switch,
    /// The triangle pass's light run (`compute`): the shadow pass draws only the triangles that can
    /// reach a shadow texel. Off by default: on lavapipe it costs the triangle pass more than it
    /// saves the shadow pass (docs/results.md).
    #[arg(long, value_enum, default_value_t = Switch::Off)]
    pub(crate) light_culling: Switch,
    /// Animation LOD: on computes the palette of an instance under 48 pixels on screen (or seen
    /// only by the light) every 2nd frame, under 8 every 4th and under 2 every 8th, skinning it
    /// from its last palette between. On by default: at 10,000 figures it changes 0.7 % of pixels
    /// (docs/results.md).
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) animation_lod: Switch,
    /// How every instance blends its joints: linear (blend skinning) or dual-quaternion (twists
    /// keep their volume; a joint that stretches unevenly falls back to linear).
    #[arg(long, default_value = "linear", value_parser = parse_skinning)]
    pub(crate) skinning: Skinning,
    /// Motion blur: on smears each pixel along its motion since last frame (the velocity target
    /// the forward pass writes, from this and last frame's skinned positions and camera). `render`
    /// then draws the frame before the last too, so that it has a frame to move from.
    #[arg(long, value_enum, default_value_t = Switch::Off)]
    pub(crate) motion_blur: Switch,
    /// Shadows: map (a 2048² shadow map from the light) or ray (a ray towards the light from every
    /// sample, by ray query through acceleration structures built from the skinned buffer each
    /// frame: a device with VK_KHR_ray_query, and the compute or cpu strategy). docs/ray-tracing.md.
    #[arg(long, default_value = "map", value_parser = parse_shadows)]
    pub(crate) shadows: Shadows,
    /// Which rasterizer draws the model's triangles (the `compute` strategy; the others draw with
    /// the hardware's): hardware, compute (every triangle it can take rasterized in a compute pass
    /// from the skinned buffer), or auto (triangles under a few pixels in compute, the rest by the
    /// hardware). docs/compute-raster.md.
    #[arg(long, default_value = "auto", value_parser = parse_raster)]
    pub(crate) raster: Raster,
    /// Turn on the Khronos validation layer with synchronization validation (also VKSKIN_VALIDATION=1).
    #[arg(long)]
    pub(crate) validate: bool,
}

/// An instance count: 1 or more.
pub(crate) fn parse_instances(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err("expected at least 1 instance, got 0".to_string()),
        Ok(count) => u32::try_from(count).map_err(|_| format!("expected at most {} instances, got {count}", u32::MAX)),
        Err(_) => Err(format!("expected a whole number of instances, got '{text}'")),
    }
}

pub(crate) fn parse_skinning(text: &str) -> Result<Skinning, String> {
    Skinning::parse(text).ok_or_else(|| format!("expected linear or dual-quaternion, got '{text}'"))
}

pub(crate) fn parse_shadows(text: &str) -> Result<Shadows, String> {
    Shadows::parse(text).ok_or_else(|| format!("expected map or ray, got '{text}'"))
}

pub(crate) fn parse_raster(text: &str) -> Result<Raster, String> {
    Raster::parse(text).ok_or_else(|| format!("expected hardware, compute or auto, got '{text}'"))
}

pub(crate) fn parse_strategy(text: &str) -> Result<Strategy, String> {
    Strategy::parse(text).ok_or_else(|| format!("expected compute, vertex or cpu, got '{text}'"))
}

/// A finite number of seconds (NaN and infinities have no frame).
pub(crate) fn parse_seconds(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| seconds.is_finite())
        .ok_or_else(|| format!("expected a finite number of seconds, got '{text}'"))
}

/// A crossfade's length: finite, not negative.
pub(crate) fn parse_fade(text: &str) -> Result<f32, String> {
    parse_seconds(text)
        .map(|seconds| seconds as f32)
        .ok()
        .filter(|seconds| *seconds >= 0.0 && seconds.is_finite())
        .ok_or_else(|| format!("expected a crossfade of 0 or more seconds, got '{text}'"))
}

/// `--drive`'s steps, in frame order (one value to clap, not a list of them).
#[derive(Clone)]
pub(crate) struct Drive(pub(crate) Vec<(u64, vkskin::app::panel::Action)>);

pub(crate) fn parse_drive(text: &str) -> Result<Drive, String> {
    let mut steps = Vec::new();
    for step in text.split(';').map(str::trim).filter(|step| !step.is_empty()) {
        let (frame, action) = step.split_once(':').ok_or(format!("'{step}': expected FRAME:ACTION"))?;
        let frame = frame.trim().parse::<u64>().map_err(|_| format!("'{step}': expected a frame number before ':'"))?;
        steps.push((frame, vkskin::app::panel::Action::parse(action.trim())?));
    }
    steps.sort_by_key(|&(frame, _)| frame);
    Ok(Drive(steps))
}

pub(crate) fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let (width, height) =
        text.split_once(['x', 'X']).ok_or_else(|| format!("expected WxH, for example 1280x720, got '{text}'"))?;
    let parse = |side: &str| side.trim().parse::<u32>().ok().filter(|&value| (1..=16384).contains(&value));
    match (parse(width), parse(height)) {
        (Some(width), Some(height)) => Ok((width, height)),
        _ => Err(format!("expected WxH with sides from 1 to 16384, got '{text}'")),
    }
}
