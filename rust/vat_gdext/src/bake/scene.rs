//! Instantiating a character scene inside the running SceneTree for the time of a bake.

use godot::classes::{AnimationPlayer, Engine, Node, Node3D, PackedScene, SceneTree};
use godot::prelude::*;

/// A character instantiated under the tree's root; freed when dropped, whatever happened.
pub struct Instance {
    /// The instantiated root node.
    pub root: Gd<Node>,
}

impl Instance {
    /// Instantiates `scene` and adds it to the running SceneTree, so global transforms,
    /// skeletons and animation players behave as in the game.
    pub fn new(scene: &Gd<PackedScene>, scene_name: &str) -> Result<Self, String> {
        let root = scene.instantiate().ok_or_else(|| {
            format!("'{scene_name}' could not be instantiated (corrupt or empty scene?)")
        })?;
        let tree = Engine::singleton()
            .get_main_loop()
            .and_then(|m| m.try_cast::<SceneTree>().ok())
            .ok_or_else(|| {
                "baking needs a running SceneTree (run from the editor, a game or bake.gd)"
                    .to_string()
            })?;
        let mut tree_root = tree
            .get_root()
            .ok_or_else(|| "the SceneTree has no root window".to_string())?;
        // In a SceneTree script's `_initialize` the root window has not entered the tree yet, and
        // Godot neither animates nor places nodes outside it: every frame would be the rest pose.
        if !tree_root.is_inside_tree() {
            return Err(format!(
                "cannot pose '{scene_name}': the SceneTree is not running yet (bake() was called from a SceneTree script's _initialize, before the root entered the tree, where Godot neither animates nor places nodes); call bake() after `await process_frame`, or from a deferred call"
            ));
        }
        tree_root.add_child(&root);
        if let Ok(mut n3) = root.clone().try_cast::<Node3D>() {
            // Bake in the character's own space, wherever the scene's root was saved.
            n3.set_transform(Transform3D::IDENTITY);
        }
        Ok(Self { root })
    }

    /// The AnimationPlayer at `path` (relative to the root), or the first one in the scene.
    pub fn animation_player(
        &self,
        path: &NodePath,
        scene_name: &str,
    ) -> Result<Gd<AnimationPlayer>, String> {
        if !path.is_empty() {
            return self
                .root
                .get_node_or_null(path)
                .and_then(|n| n.try_cast::<AnimationPlayer>().ok())
                .ok_or_else(|| format!("no AnimationPlayer at '{path}' in '{scene_name}'"));
        }
        find_player(&self.root).ok_or_else(|| {
            format!("'{scene_name}' has no AnimationPlayer: there is nothing to bake")
        })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if self.root.is_instance_valid() {
            if let Some(mut parent) = self.root.get_parent() {
                parent.remove_child(&self.root);
            }
            self.root.clone().free();
        }
    }
}

/// The first AnimationPlayer at or under `node`, depth first.
pub fn find_player(node: &Gd<Node>) -> Option<Gd<AnimationPlayer>> {
    if let Ok(p) = node.clone().try_cast::<AnimationPlayer>() {
        return Some(p);
    }
    node.get_children()
        .iter_shared()
        .find_map(|c| find_player(&c))
}
