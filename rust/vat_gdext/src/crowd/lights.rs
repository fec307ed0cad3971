//! The Light3Ds a crowd frame reads shadows from, found without searching the scene each frame.
//!
//! Searching a viewport's tree for lights costs about 0.2 microseconds per node (measured with
//! `find_children` here: 1.1 ms at 5,000 nodes, 3.3 ms at 20,000), which a game with a large
//! scene would pay every frame. Instead each viewport's lights are searched once and again only
//! after a Light3D entered or left the tree: the SceneTree's `node_added` and `node_removed`
//! signals (connected on first use, disconnected before the library unloads) count such changes.
//! What a light does (visible, casting, where) is read from the kept list every frame.

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

/// A viewport's lights: the viewport, the light changes counted when it was searched, and what
/// was found.
type Found = (InstanceId, u64, Vec<Gd<Light3D>>);

thread_local! {
    static WATCH: RefCell<Option<Watch>> = const { RefCell::new(None) };
    static FOUND: RefCell<Vec<Found>> = const { RefCell::new(Vec::new()) };
}

const SIGNALS: [&str; 2] = ["node_added", "node_removed"];

/// The Light3Ds (directional, omni, spot) under `viewport`, as of now.
pub fn lights(viewport: &Gd<Node>) -> Vec<Gd<Light3D>> {
    watch();
    let changes = CHANGES.load(Ordering::Relaxed);
    let id = viewport.instance_id();
    FOUND.with(|found| {
        let mut found = found.borrow_mut();
        // Entries from before a change are stale, whichever viewport they are for.
        found.retain(|(_, seen, _)| *seen == changes);
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
        found.push((id, changes, lights.clone()));
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
