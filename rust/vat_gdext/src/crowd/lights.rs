//! The Light3Ds a crowd frame reads shadows from, found without searching the scene each frame.
//!
//! Searching a viewport's tree for lights every frame costs time that grows with the game's scene
//! rather than its crowd (in `cargo xtask bench update --scene-nodes 20000`, 0.03-0.05 ms a
//! frame). Instead each viewport's lights are searched once and again only after a Light3D entered
//! or left the tree: the SceneTree's `node_added` and `node_removed` signals (connected on first
//! use, disconnected before the library unloads) count such changes. What a light does (visible,
//! casting, where) is read from the kept list every frame.
//!
//! In the editor the search runs once per frame instead: godot-rust disconnects a Rust callable's
//! connections itself before a hot reload, and warns that it did.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use godot::classes::{Engine, Light3D, Node, SceneTree};
use godot::prelude::*;

/// Light3Ds that entered or left the tree since the watch began (bumped on every (re)connection
/// too, so nothing found before it is trusted).
static CHANGES: AtomicU64 = AtomicU64::new(0);

/// The tree whose signals are connected, and the callable they call.
struct Watch {
    tree: InstanceId,
    callable: Callable,
}

/// A viewport's lights: the viewport, what the search stays good for (see `lights`), and what
/// was found.
type Found = (InstanceId, u64, Vec<Gd<Light3D>>);

thread_local! {
    static WATCH: RefCell<Option<Watch>> = const { RefCell::new(None) };
    static FOUND: RefCell<Vec<Found>> = const { RefCell::new(Vec::new()) };
}

const SIGNALS: [&str; 2] = ["node_added", "node_removed"];

/// The Light3Ds (directional, omni, spot) under `viewport`, as of now.
pub fn lights(viewport: &Gd<Node>) -> Vec<Gd<Light3D>> {
    let engine = Engine::singleton();
    // What a search stays good for: until a light changes, or in the editor this frame (the high
    // bit keeps the two apart).
    let stamp = if engine.is_editor_hint() {
        engine.get_process_frames() | (1 << 63)
    } else {
        watch();
        CHANGES.load(Ordering::Relaxed) & !(1 << 63)
    };
    let id = viewport.instance_id();
    FOUND.with(|found| {
        let mut found = found.borrow_mut();
        // Entries from before a change (or frame) are stale, whichever viewport they are for.
        found.retain(|(_, seen, _)| *seen == stamp);
        if let Some((_, _, lights)) = found.iter().find(|(v, _, _)| *v == id) {
            return lights.clone();
        }
        let lights: Vec<Gd<Light3D>> = viewport
            .find_children_ex("*")
            .type_("Light3D")
            .recursive(true)
            .owned(false)
            .done()
            .iter_shared()
            .filter_map(|n| n.try_cast::<Light3D>().ok())
            .collect();
        found.push((id, stamp, lights.clone()));
        lights
    })
}

/// Connects the current SceneTree's signals, unless they are.
fn watch() {
    let Some(tree) = Engine::singleton()
        .get_main_loop()
        .and_then(|l| l.try_cast::<SceneTree>().ok())
    else {
        // No tree to watch: count a change, so every call searches.
        CHANGES.fetch_add(1, Ordering::Relaxed);
        return;
    };
    WATCH.with(|watch| {
        let mut watch = watch.borrow_mut();
        if watch.as_ref().is_some_and(|w| w.tree == tree.instance_id()) {
            return;
        }
        let callable = Callable::from_sync_fn("vat_crowd_light_changed", |args: &[&Variant]| {
            if args
                .first()
                .is_some_and(|node| node.try_to::<Gd<Light3D>>().is_ok())
            {
                CHANGES.fetch_add(1, Ordering::Relaxed);
            }
            Variant::nil()
        });
        let mut tree = tree;
        for signal in SIGNALS {
            tree.connect(signal, &callable);
        }
        CHANGES.fetch_add(1, Ordering::Relaxed);
        *watch = Some(Watch {
            tree: tree.instance_id(),
            callable,
        });
    });
}

/// Disconnects the signals (the library is about to be unloaded: a hot reload keeps the tree).
pub fn unwatch() {
    let Some(w) = WATCH.with(|watch| watch.borrow_mut().take()) else {
        return;
    };
    if let Ok(mut tree) = Gd::<SceneTree>::try_from_instance_id(w.tree) {
        for signal in SIGNALS {
            if tree.is_connected(signal, &w.callable) {
                tree.disconnect(signal, &w.callable);
            }
        }
    }
    FOUND.with(|found| found.borrow_mut().clear());
}
