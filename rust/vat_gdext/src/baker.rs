//! `VertexAnimationBaker`: an editor node that bakes a character placed under it.

use std::time::Instant;

use godot::classes::notify::Node3DNotification;
use godot::classes::{AnimationPlayer, INode3D, Node, Node3D, Skeleton3D};
use godot::global::Error;
use godot::prelude::*;

use crate::bake::scene::find_player;
use crate::editor;
use crate::vertex_animation::VertexAnimation;

/// Put a character (e.g. an instanced .glb) under this node as its first child, add one
/// VertexAnimation per model to `targets` (each may list its own `meshes` subset, e.g. the sword
/// only), and press **Bake**. Targets with their own `source_scene` bake from it instead.
#[derive(GodotClass)]
#[class(tool, init, base = Node3D)]
pub struct VertexAnimationBaker {
    /// The character's Skeleton3D (optional; checked to exist when set).
    #[export]
    skeleton: NodePath,
    /// The AnimationPlayer to sample; empty means the first one under the character.
    #[export]
    animation_player: NodePath,
    /// The resources to bake into, one per model.
    #[export]
    #[var(get = get_targets, set = set_targets)]
    targets: Array<Option<Gd<VertexAnimation>>>,
    /// Where to save targets that have no file yet: a `.res` path for a single target, or a folder
    /// (targets are then saved as `<folder>/<character>_<index>.res`).
    #[export(file = "*.res")]
    output_path: GString,
    /// Bakes every target now.
    #[export_tool_button(fn = Self::bake_from_inspector, name = "Bake", icon = "Bake")]
    bake_button: PhantomVar<Callable>,
    base: Base<Node3D>,
}

#[godot_api]
impl INode3D for VertexAnimationBaker {
    fn on_notification(&mut self, what: Node3DNotification) {
        if what == Node3DNotification::CHILD_ORDER_CHANGED {
            // The character is the first child: adding or removing one changes the warnings.
            self.base_mut().update_configuration_warnings();
        }
    }

    fn get_configuration_warnings(&self) -> PackedStringArray {
        self.configuration_warnings()
    }
}

#[godot_api]
impl VertexAnimationBaker {
    /// Emitted after each target is baked.
    #[signal]
    fn bake_progress(done: i32, total: i32);
    /// Emitted when a bake ends, with its result and a one-line summary per target.
    #[signal]
    fn bake_finished(error: i32, summary: GString);

    /// The configuration warnings the editor shows for this node (empty when it is set up right),
    /// for scripts and tests: Godot does not expose `Node._get_configuration_warnings` to them.
    #[func(rename = get_configuration_warnings)]
    fn configuration_warnings(&self) -> PackedStringArray {
        let has_character = self.base().get_child_count() > 0;
        editor::to_packed(editor::baker_warnings(&self.targets, has_character))
    }

    /// The resources to bake into.
    #[func]
    fn get_targets(&self) -> Array<Option<Gd<VertexAnimation>>> {
        self.targets.clone()
    }

    /// Sets the resources to bake into (and refreshes the editor's warnings).
    #[func]
    fn set_targets(&mut self, targets: Array<Option<Gd<VertexAnimation>>>) {
        self.targets = targets;
        self.base_mut().update_configuration_warnings();
    }

    /// Bakes every target and saves those that have (or get, from `output_path`) a file.
    #[func]
    pub fn bake(&mut self) -> Error {
        if !godot::init::is_main_thread() {
            godot_error!(
                "vat_crowd: VertexAnimationBaker.bake() was called off the main thread and did nothing: a bake poses the character in the running scene tree, which only the main thread may touch"
            );
            return Error::ERR_UNAVAILABLE;
        }
        let (err, summary) = match self.bake_all() {
            Ok(s) => (Error::OK, s),
            Err(e) => {
                godot_error!(
                    "vat_crowd: VertexAnimationBaker '{}': {e}",
                    self.base().get_name()
                );
                (Error::FAILED, e)
            }
        };
        self.signals()
            .bake_finished()
            .emit(err.ord(), &GString::from(summary.as_str()));
        err
    }
}

impl VertexAnimationBaker {
    fn bake_from_inspector(&mut self) {
        self.bake();
    }

    fn character(&self) -> Result<(Gd<Node>, Gd<AnimationPlayer>), String> {
        let base = self.base();
        if !self.skeleton.is_empty() {
            base.get_node_or_null(&self.skeleton)
                .and_then(|n| n.try_cast::<Skeleton3D>().ok())
                .ok_or_else(|| format!("no Skeleton3D at '{}'", self.skeleton))?;
        }
        let root = base
            .get_child(0)
            .ok_or_else(|| "put the character under the baker as its first child".to_string())?;
        let player = if self.animation_player.is_empty() {
            find_player(&root)
                .ok_or_else(|| format!("'{}' has no AnimationPlayer", root.get_name()))?
        } else {
            base.get_node_or_null(&self.animation_player)
                .and_then(|n| n.try_cast::<AnimationPlayer>().ok())
                .ok_or_else(|| format!("no AnimationPlayer at '{}'", self.animation_player))?
        };
        Ok((root, player))
    }

    fn bake_all(&mut self) -> Result<String, String> {
        let targets: Vec<Gd<VertexAnimation>> = self
            .targets
            .iter_shared()
            .enumerate()
            .map(|(i, t)| t.ok_or_else(|| format!("targets[{i}] is empty")))
            .collect::<Result<_, _>>()?;
        if targets.is_empty() {
            return Err("no targets: add a VertexAnimation to bake into".into());
        }
        let total = targets.len() as i32;
        let mut lines = Vec::new();
        for (i, mut target) in targets.into_iter().enumerate() {
            let line = if target.bind().has_source_scene() {
                if target.bind_mut().bake() != Error::OK {
                    return Err(format!("targets[{i}] failed to bake (see the error above)"));
                }
                target
                    .bind()
                    .get_bake_stats()
                    .get("summary")
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            } else {
                let (root, player) = self.character()?;
                let name = root.get_name().to_string();
                target
                    .bind_mut()
                    .bake_from_root(&root, player, &name, Instant::now())?
            };
            self.save_target(&mut target, i)?;
            lines.push(line);
            self.signals().bake_progress().emit(i as i32 + 1, total);
        }
        Ok(lines.join("\n"))
    }

    fn save_target(&self, target: &mut Gd<VertexAnimation>, index: usize) -> Result<(), String> {
        let own = target.get_path().to_string();
        let path = if !own.is_empty() && !own.contains("::") {
            own
        } else if self.output_path.is_empty() {
            return Ok(());
        } else if self.output_path.to_string().ends_with(".res") && self.targets.len() == 1 {
            self.output_path.to_string()
        } else {
            let name = self
                .base()
                .get_child(0)
                .map(|c| c.get_name().to_string())
                .unwrap_or_default();
            format!(
                "{}/{}_{index}.res",
                self.output_path.to_string().trim_end_matches('/'),
                name
            )
        };
        match target.bind_mut().save_to(path.as_str().into()) {
            Error::OK => Ok(()),
            e => Err(format!(
                "could not save targets[{index}] to '{path}' ({e:?})"
            )),
        }
    }
}
