//! `--capture-frame N`: an in-application RenderDoc capture of one frame, through RenderDoc's API
//! (the `renderdoc` crate).
//!
//! RenderDoc must be in the process before the Vulkan instance exists, so its layer hooks the
//! instance. Either the process was launched by RenderDoc (`renderdoccmd capture`, the GUI) and
//! `librenderdoc.so` is already loaded, or [`FrameCapture::attach`] loads it (the library's start-up
//! turns its implicit Vulkan layer on for this process). A headless frame never presents, so the
//! frame is bracketed explicitly: [`FrameCapture::begin`] before its commands are recorded,
//! [`FrameCapture::finish`] after its submit, which returns the path of the `.rdc` written.

use std::path::PathBuf;

use renderdoc::{RenderDoc, V141};

/// The library by name, then where RenderDoc's installer (Windows) or Debian's `renderdoc` package
/// puts it.
#[cfg(windows)]
const LIBRARY_PATHS: [&str; 2] = ["renderdoc.dll", r"C:\Program Files\RenderDoc\renderdoc.dll"];
#[cfg(not(windows))]
const LIBRARY_PATHS: [&str; 2] = ["librenderdoc.so", "/usr/lib/librenderdoc.so"];

/// How to get RenderDoc, on this system.
#[cfg(windows)]
const INSTALL: &str = "install RenderDoc (https://renderdoc.org) or start vkskin from it";
#[cfg(not(windows))]
const INSTALL: &str = "install the Debian package 'renderdoc' or run under 'renderdoccmd capture'";

pub struct FrameCapture {
    api: RenderDoc<V141>,
    /// The frame (counted from 0 in the order the mode renders them) to capture.
    pub frame: u64,
    /// Kept loaded for the process's life when we loaded it ourselves.
    _library: Option<libloading::Library>,
}

impl FrameCapture {
    /// Finds RenderDoc in the process or loads it. Call before creating the Vulkan instance.
    /// The error says plainly why there is no capture (no RenderDoc installed).
    pub fn attach(frame: u64) -> Result<FrameCapture, String> {
        if let Ok(api) = RenderDoc::<V141>::new() {
            return Ok(FrameCapture { api, frame, _library: None });
        }
        let mut failures = Vec::new();
        // VKSKIN_RENDERDOC_LIBRARY: another librenderdoc.so to try instead (tests point it at nothing).
        let custom = std::env::var("VKSKIN_RENDERDOC_LIBRARY").ok();
        let paths: Vec<&str> = custom.as_deref().map_or(LIBRARY_PATHS.to_vec(), |path| vec![path]);
        for path in paths {
            // SAFETY: librenderdoc.so's initialisers only install RenderDoc's hooks.
            match unsafe { libloading::Library::new(path) } {
                Ok(library) => {
                    let api = RenderDoc::<V141>::new()
                        .map_err(|error| format!("loaded {path}, but its RenderDoc API 1.4.1 is unavailable: {error}"))?;
                    return Ok(FrameCapture { api, frame, _library: Some(library) });
                }
                Err(error) => failures.push(format!("{path}: {error}")),
            }
        }
        Err(format!(
            "--capture-frame needs RenderDoc: the process was not started by RenderDoc and its library could not be \
             loaded ({}); {INSTALL}",
            failures.join("; ")
        ))
    }

    /// RenderDoc when it is already in the process (the viewer was started from RenderDoc), for
    /// the panel's capture button; never loads it. `frame` starts past every frame: no capture
    /// until the button asks for one.
    pub fn in_process() -> Option<FrameCapture> {
        RenderDoc::<V141>::new().ok().map(|api| FrameCapture { api, frame: u64::MAX, _library: None })
    }

    /// Captures go to `template` + `_frameN.rdc` (RenderDoc's path template).
    pub fn set_path_template(&mut self, template: PathBuf) {
        self.api.set_capture_file_path_template(template);
    }

    /// Opens the capture: call before frame `frame`'s commands are recorded.
    pub fn begin(&mut self) {
        // Null device and window: RenderDoc's wildcard, whichever Vulkan device does the work.
        self.api.start_frame_capture(std::ptr::null(), std::ptr::null());
    }

    /// Closes the capture after the frame's submit; the path of the capture file.
    pub fn finish(&mut self) -> Result<PathBuf, String> {
        self.api.end_frame_capture(std::ptr::null(), std::ptr::null());
        let count = self.api.get_num_captures();
        count
            .checked_sub(1)
            .and_then(|newest| self.api.get_capture(newest))
            .map(|(path, _)| path)
            .ok_or_else(|| "RenderDoc wrote no capture for the frame (is its Vulkan layer active?)".to_string())
    }
}

/// Runs `submit` (record and submit one frame); when `capture` wants frame `frame`, inside a
/// capture, and prints where it went.
pub fn around_frame(
    capture: Option<&mut FrameCapture>,
    frame: u64,
    submit: impl FnOnce() -> crate::gpu::Result<()>,
) -> Result<Option<PathBuf>, String> {
    match capture.filter(|capture| capture.frame == frame) {
        Some(capture) => {
            capture.begin();
            submit().map_err(|error| error.to_string())?;
            let path = capture.finish()?;
            println!("captured frame {frame}: {}", path.display());
            Ok(Some(path))
        }
        None => submit().map(|()| None).map_err(|error| error.to_string()),
    }
}
