//! The crowd clock: f64 time with a rebasing origin so the shader's f32 times stay small.
//!
//! An f32 holding seconds since start loses precision fast (at one day its spacing is 7.8 ms,
//! enough to make animation stutter). The clock keeps the true time in f64 and hands the shader
//! times relative to an `origin` that snaps down to a multiple of [`REBASE_INTERVAL`], so shader
//! times stay in `[0, REBASE_INTERVAL)` where f32 spacing is at most 2^-14 s (61 us).
//!
//! Actor start times are stored crowd-local ([`CrowdClock::local`]); when the origin moves
//! ([`CrowdClock::set_time`] / [`CrowdClock::advance`] return `true`) every stored start time
//! must be re-packed against the new origin.

/// The origin is always a multiple of this many seconds; shader times stay below it.
pub const REBASE_INTERVAL: f64 = 1024.0;

/// An f64 clock with a rebasing origin; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CrowdClock {
    time: f64,
    origin: f64,
}

impl CrowdClock {
    /// A clock at time 0 with origin 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Absolute time in seconds.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The current origin: `floor(time / REBASE_INTERVAL) * REBASE_INTERVAL`.
    pub fn origin(&self) -> f64 {
        self.origin
    }

    /// Sets the absolute time and rebases; returns whether the origin changed (then stored
    /// crowd-local times must be re-packed). A non-finite `t` is ignored and returns `false`.
    pub fn set_time(&mut self, t: f64) -> bool {
        if !t.is_finite() {
            return false;
        }
        self.time = t;
        let origin = (t / REBASE_INTERVAL).floor() * REBASE_INTERVAL;
        let changed = origin != self.origin;
        self.origin = origin;
        changed
    }

    /// Moves the time by `dt` seconds (may be negative); returns whether the origin changed.
    pub fn advance(&mut self, dt: f64) -> bool {
        self.set_time(self.time + dt)
    }

    /// The time the shader sees: `time - origin`, in `[0, REBASE_INTERVAL)`.
    pub fn shader_time(&self) -> f32 {
        self.local(self.time)
    }

    /// An absolute time expressed crowd-local (`abs - origin`) as the shader compares it.
    /// Error is f32 rounding of the result: <= 2^-15 s for times within the current interval.
    pub fn local(&self, abs: f64) -> f32 {
        (abs - self.origin) as f32
    }
}

/// Whether a crowd clock moves this frame. `in_editor` is true while the node lives in the
/// editor (Godot's `Engine.is_editor_hint()`): there the clock stands still, so an open scene does
/// not play by itself, unless `preview` asks for it (an explicit editor preview). `paused` stops it
/// everywhere.
pub fn clock_runs(paused: bool, in_editor: bool, preview: bool) -> bool {
    !paused && (!in_editor || preview)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebases_on_interval_boundaries() {
        let mut c = CrowdClock::new();
        assert!(!c.set_time(1000.0));
        assert_eq!(c.origin(), 0.0);
        assert!(c.advance(30.0));
        assert_eq!((c.time(), c.origin()), (1030.0, 1024.0));
        assert_eq!(c.shader_time(), 6.0);
        assert!(!c.advance(1.0));
        assert!(c.set_time(-0.5));
        assert_eq!(c.origin(), -1024.0);
        assert_eq!(c.shader_time(), 1023.5);
        assert!(!c.set_time(f64::NAN));
        assert_eq!(c.time(), -0.5);
    }

    #[test]
    fn elapsed_stays_precise_after_a_day() {
        let mut c = CrowdClock::new();
        let start = 86_400.0;
        c.set_time(86_400.25);
        assert_eq!(c.origin(), 84.0 * 1024.0);
        let elapsed = c.shader_time() - c.local(start);
        assert!((elapsed - 0.25).abs() < 1e-5, "{elapsed}");
        assert!(c.shader_time() < REBASE_INTERVAL as f32);
    }

    #[test]
    fn rebased_time_beats_naive_f32_over_frame_steps() {
        // Fifteen 60 Hz frames (0.25 s) after one day of running.
        let dt = 1.0 / 60.0;
        let mut c = CrowdClock::new();
        c.set_time(86_400.0);
        let start = c.time();
        let mut naive = 86_400.0_f32;
        for _ in 0..15 {
            c.advance(dt);
            naive += dt as f32;
        }
        let rebased_err = (c.shader_time() - c.local(start) - 0.25).abs();
        let naive_err = (naive - 86_400.0 - 0.25).abs();
        assert!(rebased_err < 1e-4, "{rebased_err}");
        // Each naive step rounds 1/60 to the f32 spacing 2^-7 at 86400 s.
        assert!(naive_err > 0.01, "{naive_err}");
    }

    #[test]
    fn clock_stands_still_in_the_editor_unless_previewing() {
        // (paused, in_editor, preview) -> runs
        let cases = [
            (false, false, false, true),
            (false, false, true, true),
            (false, true, false, false),
            (false, true, true, true),
            (true, false, false, false),
            (true, false, true, false),
            (true, true, false, false),
            (true, true, true, false),
        ];
        for (paused, in_editor, preview, runs) in cases {
            assert_eq!(
                clock_runs(paused, in_editor, preview),
                runs,
                "paused {paused}, in_editor {in_editor}, preview {preview}"
            );
        }
    }
}
