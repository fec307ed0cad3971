//! A parallel loop the calling thread runs itself, with pool threads helping while they are free.
//!
//! A crowd node calls the crowd frame from Godot's main thread each frame. Handing the whole
//! loop to a pool (`ThreadPool::install`) makes the main thread wait until the pool's threads
//! have run every task, and a pool thread the system has not scheduled yet (its cores busy with
//! the renderer's threads, Godot's own workers, another program) holds the frame up for as long
//! as it stays off a core: up to several milliseconds measured under Xvfb + lavapipe, where the
//! "GPU" is the same cores. [`for_each_helped`] instead takes tasks from one counter on the
//! calling thread and on every helper that starts in time. When the counter runs out the caller
//! waits only for tasks already running. A helper that starts later finds the loop closed and
//! touches nothing of it, so the worst case is the loop run on the caller alone.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

/// Threads that may help the caller with a loop.
pub trait Helpers: Send + Sync {
    /// How many helpers to start for one loop (0: the caller runs it alone).
    fn threads(&self) -> usize;
    /// Starts `job` on a helper thread (it may start at any time, or never).
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>);
}

/// The threads of the current rayon pool (the global pool outside any pool): what tests, tools
/// and benchmarks get; the crowd nodes hand in the extension's own pool.
#[derive(Debug, Clone, Copy, Default)]
pub struct RayonHelpers;

impl Helpers for RayonHelpers {
    fn threads(&self) -> usize {
        rayon::current_num_threads()
    }

    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) {
        rayon::spawn(job);
    }
}

/// A task as the helpers see it, its borrow's lifetime erased (see [`Shared::run`]).
type TaskPtr = *const (dyn Fn(usize) + Sync + 'static);

/// What the caller and its helpers share for one loop. Owned by every helper's job, so a helper
/// that starts after the loop ended still finds it.
struct Shared {
    /// The next task to take.
    next: AtomicUsize,
    /// Tasks in the loop.
    count: usize,
    /// Helpers that have entered the loop and not left it.
    active: AtomicUsize,
    /// Set by the caller when the loop ends: a helper entering later takes no task.
    closed: AtomicBool,
    /// The first panic a helper's task raised, for the caller to raise again.
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    /// The caller's task. Valid while `closed` is false, and for as long as any helper that
    /// entered before it was set is still active (the caller waits for those).
    task: TaskPtr,
}

// SAFETY: `task` points to a `Sync` closure, and is only dereferenced under the protocol of
// `Shared::run` (while the caller keeps it alive).
unsafe impl Send for Shared {}
// SAFETY: as for Send; every other field is Sync.
unsafe impl Sync for Shared {}

impl Shared {
    /// Takes and runs tasks until none is left.
    fn drain(&self, task: &(dyn Fn(usize) + Sync)) {
        loop {
            let i = self.next.fetch_add(1, SeqCst);
            if i >= self.count {
                return;
            }
            task(i);
        }
    }

    /// A helper's part: enter, and take tasks unless the caller has closed the loop. The
    /// protocol (sequentially consistent): a helper counts itself active before it reads
    /// `closed`, the caller sets `closed` before it reads `active`. So either the caller sees
    /// the helper and waits for it, or the helper sees the loop closed and never reads `task`.
    fn run(&self) {
        self.active.fetch_add(1, SeqCst);
        if !self.closed.load(SeqCst) {
            // SAFETY: not closed when this helper counted itself active, so the caller waits
            // for it to leave before the task goes out of scope (see above).
            let task = unsafe { &*self.task };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| self.drain(task))) {
                // Leave no task to the others, and hand the panic to the caller.
                self.next.store(self.count, SeqCst);
                let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(p);
            }
        }
        self.active.fetch_sub(1, SeqCst);
    }

    /// The caller's end of the loop: close it and wait for the helpers inside it.
    fn close(&self) {
        self.closed.store(true, SeqCst);
        while self.active.load(SeqCst) != 0 {
            std::thread::yield_now();
        }
    }
}

/// Closes the loop when the caller leaves it, by return or by a panic of its own task.
struct CloseOnDrop<'a>(&'a Shared);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        // After a panic of the caller's task, the helpers take no more tasks either.
        self.0.next.store(self.0.count, SeqCst);
        self.0.close();
    }
}

/// Runs `task(i)` once for every `i` in `0..count`: on the calling thread, and on up to
/// `helpers.threads()` helper threads (never more than `count - 1`) that start while tasks are
/// left. Returns when every task has run. Tasks run in no fixed order and may run at once, so
/// each must touch only its own part of any shared output. A panic in any task is raised again
/// on the caller once no task is running.
pub fn for_each_helped(helpers: &dyn Helpers, count: usize, task: &(dyn Fn(usize) + Sync)) {
    let extra = helpers.threads().min(count.saturating_sub(1));
    if extra == 0 {
        (0..count).for_each(task);
        return;
    }
    // SAFETY: only the lifetime is erased; see `Shared::task` and `Shared::run`: no helper reads
    // the pointer after `close` returns, and `close` runs before this function returns or
    // unwinds (`CloseOnDrop`).
    let erased: TaskPtr = unsafe {
        std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), TaskPtr>(
            task as *const (dyn Fn(usize) + Sync),
        )
    };
    let shared = Arc::new(Shared {
        next: AtomicUsize::new(0),
        count,
        active: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
        panic: Mutex::new(None),
        task: erased,
    });
    for _ in 0..extra {
        let mine = shared.clone();
        helpers.spawn(Box::new(move || mine.run()));
    }
    {
        let _close = CloseOnDrop(&shared);
        shared.drain(task);
    }
    let panic = shared
        .panic
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

#[cfg(test)]
mod tests;
