//! The headless commands: `vkskin render` (frames to a PNG) and `vkskin soak` (many frames, memory
//! logged).

use std::path::Path;

use vkskin::app::capture::FrameCapture;
use vkskin::app::{headless_device, HeadlessRenderer};
use vkskin::render::offscreen::{image_format, save_image};

use super::check_messages;
use crate::cli::{RenderArgs, SceneArgs, SoakArgs};

/// Renders `frames` frames a 60th of a second apart ending at `time` (at least up to the one
/// `--capture-frame` asks for) and writes the last.
pub(crate) fn render(arguments: RenderArgs) -> Result<(), String> {
    let RenderArgs { scene, time, size: (width, height), out, frames } = arguments;
    let (scene_args, out) = (&scene, out.as_path());
    let validation = scene_args.validation();
    // Before any work: an output that cannot be written fails now, not after the frames. Opened
    // without truncating (an existing image stays until the new one replaces it), and removed again
    // if this run created it and then fails, so a failed render leaves no empty file behind.
    let format = image_format(out)?;
    let existed = out.exists();
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(out)
        .map_err(|error| format!("cannot write {}: {error}", out.display()))?;
    let result = render_into(scene_args, time, (width, height), (out, format), frames, validation);
    if result.is_err() && !existed {
        let _ = std::fs::remove_file(out);
    }
    result
}

fn render_into(
    scene_args: &SceneArgs,
    time: f64,
    (width, height): (u32, u32),
    (out, format): (&Path, image::ImageFormat),
    frames: u64,
    validation: bool,
) -> Result<(), String> {
    // RenderDoc first: its layer must see the Vulkan instance being created.
    let mut capture = scene_args.capture_frame.map(FrameCapture::attach).transpose()?;
    let device = headless_device(validation).map_err(|error| error.to_string())?;
    let setup = scene_args.setup_within(Some(&device), true)?;
    let mut first_frame = 0.0;
    let image = {
        let mut headless =
            HeadlessRenderer::with_settings(&device, &setup, (width, height), scene_args.strategy, scene_args.settings())
                .map_err(|error| error.to_string())?;
        if let Some(missing) = headless.renderer.set_debug(scene_args.debug)? {
            log::warn!("{missing}");
        }
        // Motion shows from the second frame on: the motion pass gets a frame to move from.
        let shows_motion = scene_args.motion_blur.on() || scene_args.debug.motion;
        let last = scene_args.capture_frame.unwrap_or(0).max(frames - 1).max(u64::from(shows_motion));
        for frame in 0..=last {
            let scene = setup.frame(time - (last - frame) as f64 / 60.0, headless.aspect());
            vkskin::app::capture::around_frame(capture.as_mut(), frame, || headless.submit(&scene))?;
            if frame == 0 {
                first_frame = vkskin::app::launched().elapsed().as_secs_f64();
            }
        }
        headless.renderer.wait_all().map_err(|error| error.to_string())?;
        headless.target.read_image().map_err(|error| error.to_string())?
    };
    save_image(&image, out, format)?;
    println!(
        "wrote {} ({width}x{height}, t = {time} s, {}: {}, on {})",
        out.display(),
        setup.mix(),
        setup.playing(time),
        device.name()
    );
    println!("first frame {first_frame:.3} s after launch");
    check_messages(validation, device.instance.message_counts())
}

/// Resident set size of this process and its anonymous part (heap, stacks, driver memory), KiB
/// (Linux /proc; Windows below; 0 elsewhere). The rest is file pages (libraries), which the kernel
/// drops and faults back in under memory pressure: a leak shows in the anonymous part.
#[cfg(not(windows))]
fn rss_kib() -> (u64, u64) {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let field = |index: usize| -> u64 { statm.split_whitespace().nth(index).and_then(|field| field.parse().ok()).unwrap_or(0) };
    let (resident, shared) = (field(1), field(2));
    (resident * 4, resident.saturating_sub(shared) * 4)
}

/// On Windows: the working set and the commit charge (`PagefileUsage`: memory committed to this
/// process alone, the same figure as its private bytes, and the counterpart of Linux's anonymous
/// pages), KiB.
#[cfg(windows)]
fn rss_kib() -> (u64, u64) {
    use windows_sys::Win32::System::ProcessStatus::{K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
    use windows_sys::Win32::System::Threading::GetCurrentProcess;
    // SAFETY: plain old data, filled by the call below with its size stated.
    let mut counters: PROCESS_MEMORY_COUNTERS = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
    counters.cb = size;
    // SAFETY: the pseudo-handle of this process needs no closing; `counters` is as large as `size`.
    let read = unsafe { K32GetProcessMemoryInfo(GetCurrentProcess(), std::ptr::addr_of_mut!(counters).cast(), size) };
    if read == 0 {
        return (0, 0);
    }
    ((counters.WorkingSetSize / 1024) as u64, (counters.PagefileUsage / 1024) as u64)
}

pub(crate) fn soak(arguments: SoakArgs) -> Result<(), String> {
    let SoakArgs { scene, frames, switch_every, fade, every, size, out } = arguments;
    let (scene_args, report, switch_every, every) = (&scene, out.as_path(), switch_every.max(1), every.max(1));
    let validation = scene_args.validation();
    let mut log = std::fs::File::create(report).map_err(|error| format!("cannot write {}: {error}", report.display()))?;
    let device = headless_device(validation).map_err(|error| error.to_string())?;
    let mut setup = scene_args.setup_within(Some(&device), true)?;
    let mut headless = HeadlessRenderer::with_settings(&device, &setup, size, scene_args.strategy, scene_args.settings())
        .map_err(|error| error.to_string())?;
    if let Some(missing) = headless.renderer.set_debug(scene_args.debug)? {
        log::warn!("{missing}");
    }
    use std::io::Write as _;
    let write_error = |error: std::io::Error| format!("cannot write {}: {error}", report.display());
    writeln!(log, "frame,seconds,rss_kib,gpu_allocated_bytes,gpu_capacity_bytes,rss_anon_kib").map_err(write_error)?;
    let clips = setup.model.clips.len().max(1);
    let started = std::time::Instant::now();
    for frame in 0..frames {
        let time = frame as f64 / 60.0;
        if frame > 0 && frame % switch_every == 0 {
            setup.play((frame / switch_every) as usize % clips, time, fade);
        }
        headless.submit(&setup.frame(time, headless.aspect())).map_err(|error| error.to_string())?;
        if frame % every == 0 || frame + 1 == frames {
            let (allocated, capacity) = device.allocated_bytes();
            let seconds = started.elapsed().as_secs_f64();
            let (rss, anonymous) = rss_kib();
            writeln!(log, "{frame},{seconds:.2},{rss},{allocated},{capacity},{anonymous}").map_err(write_error)?;
            log.flush().map_err(write_error)?;
        }
    }
    headless.renderer.wait_all().map_err(|error| error.to_string())?;
    println!("soaked {frames} frames of {} instances; log in {}", setup.instances.len(), report.display());
    check_messages(validation, device.instance.message_counts())
}
