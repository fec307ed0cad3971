//! `VatCrowdBench`: measurement helpers the benchmarks compare against.

use std::time::Instant;

use godot::prelude::*;

/// The largest copy `memcpy_usec` measures (1 GiB: the benchmarks use at most tens of MB).
const MAX_BYTES: i64 = 1 << 30;
/// The most copies `memcpy_usec` times.
const MAX_ITERATIONS: i64 = 10_000;

/// Helpers for `cargo xtask bench`: baselines that need native code.
#[derive(GodotClass)]
#[class(init, base = RefCounted)]
pub struct VatCrowdBench {
    base: Base<RefCounted>,
}

#[godot_api]
impl VatCrowdBench {
    /// Median time in microseconds of a plain memcpy of `bytes` bytes (0 to 1 GiB), over
    /// `iterations` copies (1 to 10,000): the floor for pushing that much per-instance data. -1 and
    /// an error for values out of range.
    #[func]
    fn memcpy_usec(bytes: i64, iterations: i64) -> f64 {
        if !(0..=MAX_BYTES).contains(&bytes) || !(1..=MAX_ITERATIONS).contains(&iterations) {
            godot_error!(
                "vat_crowd: VatCrowdBench.memcpy_usec({bytes}, {iterations}): bytes must be 0 to {MAX_BYTES} and iterations 1 to {MAX_ITERATIONS}"
            );
            return -1.0;
        }
        let n = bytes as usize;
        let src = vec![7u8; n];
        let mut dst = vec![0u8; n];
        let mut times: Vec<f64> = (0..iterations.max(1))
            .map(|_| {
                let t = Instant::now();
                dst.copy_from_slice(std::hint::black_box(&src));
                std::hint::black_box(&mut dst);
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    }
}

#[godot_api(secondary)]
impl VatCrowdBench {
    /// Microseconds of CPU time the calling thread and the extension's worker threads have run so
    /// far (Linux's per-thread CPU clocks), or -1 where the system does not say. The
    /// update benchmark brackets a push with it: a push's wall time also counts the time other
    /// threads held the cores, and on lavapipe those include the rasteriser running the
    /// previous frame's GPU work.
    #[func]
    fn cpu_usec() -> i64 {
        crate::workers::threads_cpu_usec().map_or(-1, |us| us as i64)
    }
}

/// Empty methods that isolate what a GDScript call into the extension costs (`cargo xtask bench
/// calls`): each does nothing but what its name says, so timing a loop of calls from GDScript
/// measures Godot's dispatch, gdext's per-call wrapper and the argument conversion alone.
#[godot_api(secondary)]
impl VatCrowdBench {
    /// Does nothing; a static method (no instance to look up or borrow).
    #[func]
    fn noop_static() {}

    /// Does nothing; borrows the instance shared (`&self`).
    #[func]
    fn noop_ref(&self) {}

    /// Does nothing; borrows the instance exclusively (`&mut self`, gdext's `bind_mut` guard).
    #[func]
    fn noop_mut(&mut self) {}

    /// Does nothing but the crowd nodes' main-thread check (`crowd::guard`).
    #[func]
    fn noop_guarded(&mut self) {
        crate::crowd::guard::main_thread_only!("VatCrowdBench", "noop_guarded");
    }

    /// Takes `add_actor`'s four arguments (a Transform3D, an int, two floats) and returns an int.
    #[func]
    fn noop_args(&mut self, transform: Transform3D, clip: i32, start: f64, speed: f64) -> i32 {
        std::hint::black_box((transform, start, speed));
        clip
    }

    /// Takes `add_model`'s arguments, two of them optional with defaults, as `add_model` does.
    #[func]
    fn noop_opt(
        &mut self,
        model: i32,
        #[opt(default = 0)] variation: i32,
        #[opt(default = Color::WHITE)] tint: Color,
    ) {
        std::hint::black_box((model, variation, tint));
    }
}
