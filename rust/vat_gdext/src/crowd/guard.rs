//! The crowd nodes' rule for threads: every call runs on the main thread, and a call from any
//! other thread is refused with one error before it touches the node.
//!
//! Why not more: a crowd call writes Godot objects (packed arrays, textures, materials, child
//! nodes) that only the main thread may touch. The library is built with gdext's thread-safe
//! instance storage (`experimental-threads`, for the editor's own threads), so
//! gdext's glue hands every call to the node, whatever its arguments; the refusal then uses only
//! what is safe on any thread: gdext's own thread check and Godot's error print.

use godot::prelude::*;

/// True on the main thread; elsewhere prints one error naming `class.what` and returns false,
/// so the caller returns at once (with its "nothing done" value).
pub fn on_main_thread(class: &str, what: &str) -> bool {
    if is_main_thread_cached() {
        return true;
    }
    godot_error!(
        "vat_crowd: {class}.{what}() was called off the main thread and did nothing; crowd \
         nodes are main-thread only (fill packed arrays in the worker, then hand them to the bulk \
         calls on the main thread, e.g. with call_deferred)"
    );
    false
}

/// Returns from the enclosing `#[func]` (with `Default::default()`, or the given value) unless
/// it runs on the main thread; see [`on_main_thread`].
macro_rules! main_thread_only {
    ($class:literal, $what:literal) => {
        if !$crate::crowd::guard::on_main_thread($class, $what) {
            return Default::default();
        }
    };
    ($class:literal, $what:literal, $refused:expr) => {
        if !$crate::crowd::guard::on_main_thread($class, $what) {
            return $refused;
        }
    };
}
pub(crate) use main_thread_only;

thread_local! {
    /// Whether this thread is Godot's main thread, once asked (0: not yet, 1: yes, 2: no).
    static MAIN: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

/// gdext's main-thread test, remembered per thread: it calls `std::thread::current()`, which
/// measured about a fifth of an immediate-mode call's own time, and no thread becomes or stops
/// being the main thread.
fn is_main_thread_cached() -> bool {
    MAIN.with(|m| {
        if m.get() == 0 {
            m.set(if godot::init::is_main_thread() { 1 } else { 2 });
        }
        m.get() == 1
    })
}
