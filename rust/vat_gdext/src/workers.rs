//! The worker threads that `vat_core`'s parallel loops (skinning, encoding, bulk packing) run on.
//!
//! Godot unloads the extension library at exit. Rayon's global pool never ends its threads, and a
//! thread still parked in the library's code when it is unmapped crashes the process (a SIGSEGV
//! at exit, seen from headless `bake.gd` runs). So every parallel call goes through [`install`],
//! into a pool this module owns, and [`shutdown`] ends that pool and waits for its threads when
//! the extension is deinitialised.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Live worker threads, and the signal that one ended.
type Alive = Arc<(Mutex<usize>, Condvar)>;

static POOL: Mutex<Option<(Arc<rayon::ThreadPool>, Alive)>> = Mutex::new(None);

/// How long [`shutdown`] waits for the workers to end before giving up.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// Runs `f` with rayon's parallel iterators on the extension's own pool (created on first use).
/// Falls back to running `f` on the calling thread's current pool if the pool cannot be made.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let pool = {
        let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            let alive: Alive = Arc::new((Mutex::new(0), Condvar::new()));
            let (start, exit) = (alive.clone(), alive.clone());
            let built = rayon::ThreadPoolBuilder::new()
                .thread_name(|i| format!("vat_crowd worker {i}"))
                .start_handler(move |_| *start.0.lock().unwrap_or_else(|e| e.into_inner()) += 1)
                .exit_handler(move |_| {
                    *exit.0.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
                    exit.1.notify_all();
                })
                .build();
            if let Ok(p) = built {
                *slot = Some((Arc::new(p), alive));
            }
        }
        slot.as_ref().map(|(p, _)| p.clone())
    };
    match pool {
        Some(p) => p.install(f),
        None => f(),
    }
}

/// [`install`] for a crowd bulk call over `items` items: below
/// `vat_core::crowd::PARALLEL_MIN_ITEMS` the call runs on the calling thread anyway, so `f`
/// runs right here. Handing it to a pool thread and waiting for it costs a wake-up and a context
/// switch each time, which on a machine whose cores are busy rendering measured milliseconds per
/// call.
pub fn install_for<R: Send>(items: usize, f: impl FnOnce() -> R + Send) -> R {
    if items < vat_core::crowd::PARALLEL_MIN_ITEMS {
        f()
    } else {
        install(f)
    }
}

/// Ends the pool and waits (at most [`SHUTDOWN_WAIT`]) until its threads have left the library.
pub fn shutdown() {
    let Some((pool, alive)) = POOL.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return;
    };
    drop(pool);
    let (count, ended) = &*alive;
    let guard = count.lock().unwrap_or_else(|e| e.into_inner());
    let _ = ended
        .wait_timeout_while(guard, SHUTDOWN_WAIT, |n| *n > 0)
        .map_err(|e| e.into_inner());
}
