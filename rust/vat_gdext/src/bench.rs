//! `VatCrowdBench`: measurement helpers the benchmarks compare against.

use std::time::Instant;

use godot::prelude::*;

/// Helpers for `cargo xtask bench`: baselines that need native code.
#[derive(GodotClass)]
#[class(init, base = RefCounted)]
pub struct VatCrowdBench {
    base: Base<RefCounted>,
}

#[godot_api]
impl VatCrowdBench {
    /// Median time in microseconds of a plain memcpy of `bytes` bytes, over `iterations` copies:
    /// the floor for pushing that much per-instance data.
    #[func]
    fn memcpy_usec(bytes: i64, iterations: i64) -> f64 {
        let n = bytes.max(0) as usize;
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
