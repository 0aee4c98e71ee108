//! The application over the library: a scene set up around a model and headless rendering (here,
//! what the binary and the tests share), the viewer and its panel, the benchmark, `inspect`,
//! frame captures for RenderDoc, plots and image comparisons.

pub mod bench;
pub mod capture;
pub mod crowd;
pub mod imagediff;
pub mod inspect;
pub mod panel;
pub mod plot;
pub mod pose;
mod scene;
pub mod staging;
pub mod viewer;

pub use crowd::{crowd_model, crowd_sizes, crowd_variety, grid_instances, CROWD_SCALE};
pub use scene::SceneSetup;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::gpu::device::DeviceRequest;
use crate::gpu::{self, Device, Instance, InstanceOptions};
use crate::model::Model;
use crate::render::offscreen::{OffscreenTarget, OFFSCREEN_FORMAT};
use crate::render::{FrameScene, Output, RenderSettings, Renderer, Strategy};

/// The bundled default model, made by `vkskin generate` (src/generate/). Found where an installed
/// binary's files go (`assets/` beside the executable, or `../share/vkskin/` from it), then in the
/// source tree it was built from; where neither holds it (a `cargo install`ed binary whose build
/// tree is gone), the generator writes it once into the user's cache folder. Whatever the path,
/// it is the same figure: the generator is deterministic and the committed assets are its output.
/// When the program started (its first call, which `main` makes first thing): what the time to
/// the first frame is counted from.
pub fn launched() -> std::time::Instant {
    static LAUNCHED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *LAUNCHED.get_or_init(std::time::Instant::now)
}

pub fn default_model_path() -> PathBuf {
    let source_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let beside_binary = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf));
    let mut folders: Vec<PathBuf> =
        beside_binary.iter().flat_map(|folder| [folder.join("assets"), folder.join("../share/vkskin")]).collect();
    folders.push(source_tree);
    default_model_in(&folders, &user_cache_folder())
}

/// This version's folder in the user's cache folder: Windows' local application data, else XDG's
/// (`~/.cache`), else the temporary folder.
pub fn user_cache_folder() -> PathBuf {
    let variable = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
    let windows = if cfg!(windows) { variable("LOCALAPPDATA") } else { None };
    windows
        .or_else(|| variable("XDG_CACHE_HOME"))
        .or_else(|| variable("HOME").map(|home| home.join(".cache")))
        .or_else(|| variable("LOCALAPPDATA"))
        .unwrap_or_else(std::env::temp_dir)
        .join(concat!("vkskin-", env!("CARGO_PKG_VERSION")))
}

/// Where the derived-data cache keeps what opening a model derives from it
/// (`model::derived`): `VKSKIN_CACHE_DIR`, else `derived` in [`user_cache_folder`].
pub fn derived_cache_folder() -> PathBuf {
    std::env::var_os("VKSKIN_CACHE_DIR")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| user_cache_folder().join("derived"))
}

/// The figure in the first of `folders` that holds it, else generated into `cache` (once).
fn default_model_in(folders: &[PathBuf], cache: &Path) -> PathBuf {
    const FILE: &str = "figure.md5mesh";
    if let Some(found) = folders.iter().map(|folder| folder.join(FILE)).find(|path| path.is_file()) {
        return found;
    }
    let generated = cache.join(FILE);
    if generated.is_file() {
        return generated;
    }
    // Written whole into a folder of its own, then renamed: an interrupted run leaves no half figure.
    let partial = cache.with_extension(format!("partial-{}", std::process::id()));
    let written = crate::generate::write_assets(&partial).and_then(|_| std::fs::rename(&partial, cache));
    let _ = std::fs::remove_dir_all(&partial);
    match written {
        Ok(()) => generated,
        Err(_) if generated.is_file() => generated, // another process got there first
        Err(error) => {
            // Loading this path then fails with an error that names it.
            log::warn!("the bundled figure is not installed and cannot be generated into {}: {error}", cache.display());
            generated
        }
    }
}

/// The animations that go with a .md5mesh when none are given: every .md5anim beside it whose
/// joints are the mesh's (names in order, as the format requires), sorted by name: the mesh's own
/// `<stem>_*.md5anim` and the others a game put there (the Doom 3 hellknight's `idle2`, `walk7`).
/// Other formats carry their clips inside.
pub fn default_animations(model: &Path, given: &[PathBuf]) -> Vec<PathBuf> {
    if !given.is_empty() || !model.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("md5mesh")) {
        return given.to_vec();
    }
    let Some(joints) = crate::formats::md5::joint_names(model) else { return Vec::new() };
    let folder = model.parent().filter(|folder| !folder.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|path| path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("md5anim")))
                .filter(|path| crate::formats::md5::joint_names(path).is_some_and(|names| names == joints))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// What the loader noticed, as log lines: its warnings as warnings (each once, with a count where
/// it was given more than once), its notes as information. In a crowd of several models (`file`),
/// each line names the file it is about.
pub fn log_load_report(model: &Model, file: Option<&Path>) {
    let about = file.and_then(|file| file.file_name()).map_or_else(String::new, |name| format!("{}: ", name.to_string_lossy()));
    for warning in model.stats.warnings_counted() {
        log::warn!("{about}{}", crate::formats::files::one_line(&warning));
    }
    for note in &model.stats.notes {
        log::info!("{about}{}", crate::formats::files::one_line(note));
    }
}

/// A clip by name (exact, then ignoring case) or by index; the error lists what there is.
pub fn find_clip(model: &Model, selector: &str) -> Result<usize, String> {
    let by_name = model.clips.iter().position(|clip| clip.name == selector);
    let by_loose_name = || model.clips.iter().position(|clip| clip.name.eq_ignore_ascii_case(selector));
    let by_index = || selector.parse::<usize>().ok().filter(|&index| index < model.clips.len());
    by_name.or_else(by_loose_name).or_else(by_index).ok_or_else(|| {
        let names: Vec<String> = model.clips.iter().enumerate().map(|(index, clip)| format!("[{index}] {}", clip.name)).collect();
        if names.is_empty() {
            format!("{} has no clips, so there is no clip '{selector}'", model.name)
        } else if selector.trim().parse::<usize>().is_ok() {
            let last = names.len() - 1;
            format!("{} has no clip {selector}: clips are numbered 0 to {last} ({})", model.name, names.join(", "))
        } else {
            format!("{} has no clip '{selector}'; it has {}", model.name, names.join(", "))
        }
    })
}

/// Instance and device without a window.
pub fn headless_device(validation: bool) -> gpu::Result<Arc<Device>> {
    let instance = Instance::new(&InstanceOptions { validation, surface_extensions: Vec::new() })?;
    Ok(Arc::new(Device::new(instance, DeviceRequest { surface: None, needs: crate::render::device_needs() })?))
}

/// A renderer drawing into an offscreen image that is read back after each frame.
pub struct HeadlessRenderer {
    // The target's image is used by the renderer's frames; both hold the device.
    pub target: OffscreenTarget,
    pub renderer: Renderer,
}

impl HeadlessRenderer {
    pub fn new(device: &Arc<Device>, setup: &SceneSetup, width: u32, height: u32) -> gpu::Result<HeadlessRenderer> {
        HeadlessRenderer::with_strategy(device, setup, (width, height), Strategy::Compute)
    }

    pub fn with_strategy(
        device: &Arc<Device>,
        setup: &SceneSetup,
        size: (u32, u32),
        strategy: Strategy,
    ) -> gpu::Result<HeadlessRenderer> {
        HeadlessRenderer::with_settings(device, setup, size, strategy, RenderSettings::default())
    }

    /// `with_strategy`, with the application's `settings` (`RenderSettings`); in tests, the
    /// device's limits lowered (storage-buffer bindings held below `settings.binding` bytes, so the
    /// skinned vertices and palettes split into chunks at small counts; the heap held to
    /// `settings.heap`).
    pub fn with_settings(
        device: &Arc<Device>,
        setup: &SceneSetup,
        (width, height): (u32, u32),
        strategy: Strategy,
        settings: RenderSettings,
    ) -> gpu::Result<HeadlessRenderer> {
        if width == 0 || height == 0 {
            return Err(gpu::Error::Other(format!("image size {width}x{height}: both sides must be at least 1")));
        }
        let renderer =
            Renderer::for_models(device, &setup.models(), &setup.model_indices(), OFFSCREEN_FORMAT, strategy, settings)?;
        let target = OffscreenTarget::new(device, width, height)?;
        Ok(HeadlessRenderer { target, renderer })
    }

    pub fn aspect(&self) -> f32 {
        let extent = self.target.color.extent();
        extent.width as f32 / extent.height as f32
    }

    /// Submits one frame without waiting for it (soak runs and frame counts).
    pub fn submit(&mut self, scene: &FrameScene) -> gpu::Result<()> {
        self.renderer.render(scene, Output::Offscreen(&self.target))
    }

    /// Renders one frame and returns its pixels.
    pub fn render(&mut self, scene: &FrameScene) -> gpu::Result<image::RgbaImage> {
        self.submit(scene)?;
        self.renderer.wait_all()?;
        self.target.read_image()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_without_its_assets_generates_the_figure_once_and_loads_it() {
        let scratch = std::env::temp_dir().join(format!("vkskin-default-model-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        let cache = scratch.join("cache").join("vkskin");
        let missing = [scratch.join("no-assets"), scratch.join("no-share")];
        let path = default_model_in(&missing, &cache);
        assert_eq!(path, cache.join("figure.md5mesh"));
        let model = crate::formats::load_model(&path, &default_animations(&path, &[])).expect("the generated figure loads");
        let bundled = default_model_path();
        let committed =
            crate::formats::load_model(&bundled, &default_animations(&bundled, &[])).expect("the bundled figure loads");
        assert_eq!((model.vertices.len(), model.clips.len()), (committed.vertices.len(), committed.clips.len()));
        // The second time it is found, not written again.
        let written = std::fs::metadata(&path).and_then(|metadata| metadata.modified()).expect("the figure's time");
        assert_eq!(default_model_in(&missing, &cache), path);
        assert_eq!(std::fs::metadata(&path).and_then(|metadata| metadata.modified()).ok(), Some(written));
        // An installed copy comes first.
        assert_eq!(default_model_in(std::slice::from_ref(&cache), &scratch.join("unused")), path);
    }
}
