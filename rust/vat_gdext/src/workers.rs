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

/// The pool's threads' ids where the system names them (Linux), for [`threads_cpu_usec`].
#[cfg(feature = "bench")]
static THREAD_IDS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// How long [`shutdown`] waits for the workers to end before giving up.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// The extension's pool, created on first use (`None` if it cannot be made).
fn pool() -> Option<Arc<rayon::ThreadPool>> {
    let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if slot.is_none() {
        let alive: Alive = Arc::new((Mutex::new(0), Condvar::new()));
        let (start, exit) = (alive.clone(), alive.clone());
        let built = rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("vat_crowd worker {i}"))
            .start_handler(move |_| {
                *start.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                #[cfg(feature = "bench")]
                if let Some(tid) = this_thread_id() {
                    THREAD_IDS
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(tid);
                }
            })
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
}

/// Runs `f` with rayon's parallel iterators on the extension's own pool (created on first use).
/// Falls back to running `f` on the calling thread's current pool if the pool cannot be made.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match pool() {
        Some(p) => p.install(f),
        None => f(),
    }
}

/// The extension's pool as helpers of a loop the calling thread runs itself
/// ([`vat_core::helped::for_each_helped`]): the crowd frame's. It holds no pool, so
/// [`shutdown`] still ends it; where the pool cannot be made the caller runs the loop alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct PoolHelpers;

impl vat_core::helped::Helpers for PoolHelpers {
    fn threads(&self) -> usize {
        pool().map_or(0, |p| p.current_num_threads())
    }

    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) {
        match pool() {
            Some(p) => p.spawn(job),
            // Never reached (no threads without a pool); running it here is still correct.
            None => job(),
        }
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

/// The calling thread's id in `/proc/self/task` (Linux), if the system has it.
#[cfg(feature = "bench")]
fn this_thread_id() -> Option<String> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

#[cfg(all(feature = "bench", target_os = "linux"))]
/// Microseconds the calling thread and the pool's threads have run on a CPU so far, or `None`
/// where the system does not say (not Linux). What a call costs in CPU time, whatever else held
/// the cores meanwhile.
pub fn threads_cpu_usec() -> Option<u64> {
    let mut ns = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)?;
    for tid in THREAD_IDS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        let Ok(tid) = tid.parse::<libc::pid_t>() else {
            continue;
        };
        // A thread's CPU clock id, as glibc's pthread_getcpuclockid makes it: (~tid << 3) | 6.
        ns += clock_ns((!tid << 3) | 6).unwrap_or(0);
    }
    Some(ns / 1000)
}

#[cfg(all(feature = "bench", not(target_os = "linux")))]
/// None: the thread CPU clocks are read on Linux only.
pub fn threads_cpu_usec() -> Option<u64> {
    None
}

#[cfg(all(feature = "bench", target_os = "linux"))]
/// Nanoseconds on clock `clock` (a CPU-time clock).
fn clock_ns(clock: libc::clockid_t) -> Option<u64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write.
    let ok = unsafe { libc::clock_gettime(clock, &mut t) } == 0;
    ok.then(|| t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64)
}

/// Ends the pool and waits (at most [`SHUTDOWN_WAIT`]) until its threads have left the library.
pub fn shutdown() {
    let Some((pool, alive)) = POOL.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return;
    };
    drop(pool);
    #[cfg(feature = "bench")]
    THREAD_IDS.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let (count, ended) = &*alive;
    let guard = count.lock().unwrap_or_else(|e| e.into_inner());
    let _ = ended
        .wait_timeout_while(guard, SHUTDOWN_WAIT, |n| *n > 0)
        .map_err(|e| e.into_inner());
}
