//! Saying what takes long while a renderer gets going. A driver compiles vkskin's pipelines the
//! first time it sees them and keeps them in its disk cache for later runs: an eager driver while
//! the passes are made, a lazy one (lavapipe, which runs LLVM on each: half a minute on two cores,
//! against a third of a second from the cache) while the first frame runs. Either way the first
//! run would sit silent. Past [`ANNOUNCE_AFTER`], one line says why; then each pass as it is made,
//! and the first frame's wait every [`STILL_EVERY`]; then how long it took. A run from the cache
//! says nothing.
//!
//! The lines go to the log under the target `progress` at info level, which the binary shows
//! (`vkskin: info: ...`) and a library user filters as they like.

use std::time::{Duration, Instant};

/// How long getting going may take before the user is told why...
const ANNOUNCE_AFTER: Duration = Duration::from_secs(1);
/// ...and how often the first frame's wait says it is still waiting.
const STILL_EVERY: Duration = Duration::from_secs(5);
/// The first frame may take this long (its pipelines compiling) before it counts as lost.
pub const FIRST_FRAME_LIMIT: Duration = Duration::from_secs(600);

/// From the renderer's creation to its first frame's end.
pub struct Compiling {
    started: Instant,
    announced: bool,
    last_said: Duration,
    passes: usize,
    made: usize,
}

impl Compiling {
    /// Before `passes` passes are made.
    pub fn new(passes: usize) -> Compiling {
        Compiling { started: Instant::now(), announced: false, last_said: Duration::ZERO, passes, made: 0 }
    }

    /// Says why, once, when it has taken long.
    fn announce(&mut self) -> bool {
        if !self.announced && self.started.elapsed() >= ANNOUNCE_AFTER {
            self.announced = true;
            log::info!(
                target: "progress",
                "compiling the GPU pipelines: the driver's first time on this machine (later runs take them from its cache)"
            );
        }
        self.announced
    }

    /// `pass` is made (an eager driver compiled its pipelines).
    pub fn made(&mut self, pass: &str) {
        self.made += 1;
        if self.announce() {
            let elapsed = self.started.elapsed();
            log::info!(target: "progress", "  {pass} ready ({} of {} passes, {:.1} s)", self.made, self.passes, elapsed.as_secs_f64());
            self.last_said = elapsed;
        }
    }

    /// The first frame is still running (a lazy driver compiles as it goes): whether to wait on.
    pub fn waiting(&mut self) -> bool {
        let elapsed = self.started.elapsed();
        if self.announce() && elapsed >= self.last_said + STILL_EVERY {
            log::info!(target: "progress", "  the first frame is running its new pipelines ({:.0} s)", elapsed.as_secs_f64());
            self.last_said = elapsed;
        }
        elapsed < FIRST_FRAME_LIMIT
    }

    /// The first frame is done.
    pub fn finish(self) {
        if self.announced {
            log::info!(target: "progress", "pipelines ready in {:.1} s", self.started.elapsed().as_secs_f64());
        }
    }
}
