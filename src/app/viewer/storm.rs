//! `--storm N`: the viewer drives window events at its own window, one a frame, to test the
//! swapchain's life cycle.

use super::Viewer;

impl Viewer {
    /// One event of `--storm`, at the window itself.
    pub(super) fn storm_step(&mut self) {
        let Some(graphics) = &self.graphics else { return };
        let step = self.report.storm_events;
        self.report.storm_events += 1;
        let window = &graphics.window;
        const SIZES: [(u32, u32); 6] = [(1, 1), (37, 19), (640, 480), (123, 457), (2, 300), (301, 2)];
        match step % 10 {
            0 | 5 => {
                let (width, height) = SIZES[(step as usize / 5) % SIZES.len()];
                let _ = window.request_inner_size(winit::dpi::PhysicalSize::new(width, height));
            }
            1 => window.set_minimized(true),
            2 => window.set_minimized(false),
            3 => window.focus_window(),
            // What a minimized window reports on some platforms: a 0×0 size, for a few frames.
            4 => {
                self.zero_size_frames = 3;
                self.swapchain_dirty = true;
            }
            6 => window.set_visible(false),
            7 => window.set_visible(true),
            8 => self.swapchain_dirty = true,
            _ => {
                let (width, height) = self.options.size;
                let _ = window.request_inner_size(winit::dpi::PhysicalSize::new(width, height));
            }
        }
        if self.report.storm_events == self.options.storm {
            let (width, height) = self.options.size;
            let _ = window.request_inner_size(winit::dpi::PhysicalSize::new(width, height));
            window.focus_window();
        }
    }
}
