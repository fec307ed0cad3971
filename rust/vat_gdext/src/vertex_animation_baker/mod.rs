//! `VertexAnimationBaker`: an editor node that bakes a character placed under it.

use godot::classes::notify::Node3DNotification;
use godot::classes::{AnimationPlayer, INode3D, Node, Node3D, Skeleton3D};
use godot::global::Error;
use godot::prelude::*;

use crate::bake::scene::find_player;
use crate::editor;
use crate::vertex_animation::bake_job::{BakeRun, VertexAnimationBakeJob};
use crate::vertex_animation::steps::BakeSource;
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
    /// Equipment on the body's bones: each target after the first that bakes in bone storage
    /// and has no `bone_source` draws with the first target's bone texture where it can (a sword
    /// under a BoneAttachment3D, armour skinned to the same skeleton), storing only its skin
    /// table, and gets the first target as its `bone_source`; one that cannot keeps a bone
    /// texture of its own (its summary says why). List the body first. Off: every target stores
    /// its own.
    #[export]
    #[init(val = true)]
    share_bone_textures: bool,
    /// Where to save targets that have no file yet: a `.res` path for a single target, or a folder
    /// (targets are then saved as `<folder>/<character>_<index>.res`).
    #[export(file = "*.res")]
    output_path: GString,
    /// Bakes every target now. With the vat_crowd plugin enabled the inspector shows its own Bake
    /// panel here instead (the bake in steps, with progress, Cancel and undo).
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
    /// Emitted after each target is baked (by `bake()` or a `start_bake()` job).
    #[signal]
    fn bake_progress(done: i32, total: i32);
    /// Emitted when a bake ends, with its result (ERR_SKIP for a cancelled job) and a one-line
    /// summary per target (or the error).
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

    /// Bakes every target and saves those that have (or get, from `output_path`) a file. The
    /// targets change only once all are baked: a failure leaves every one as it was.
    #[func]
    pub fn bake(&mut self) -> Error {
        if !godot::init::is_main_thread() {
            godot_error!(
                "vat_crowd: VertexAnimationBaker.bake() was called off the main thread and did nothing: a bake poses the character in the running scene tree, which only the main thread may touch"
            );
            return Error::ERR_UNAVAILABLE;
        }
        let (err, summary) = match self.run() {
            Ok(mut run) => {
                let mut told = 0;
                while run.step() {
                    told = self.tell_built(&run, told);
                }
                self.tell_built(&run, told);
                run.result().cloned().expect("a finished run has a result")
            }
            Err(e) => (Error::FAILED, e),
        };
        if err != Error::OK {
            godot_error!(
                "vat_crowd: VertexAnimationBaker '{}': {summary}",
                self.base().get_name()
            );
        }
        self.signals()
            .bake_finished()
            .emit(err.ord(), &GString::from(summary.as_str()));
        err
    }

    /// Starts a bake of every target that runs in steps (see VertexAnimationBakeJob): call the
    /// job's `step()` once per frame until it returns false, or `cancel()` it. It emits this node's
    /// `bake_progress` and `bake_finished`, and saves like `bake()`. Returns null (with one error)
    /// when the baker is not set up to bake.
    #[func]
    pub fn start_bake(&mut self) -> Option<Gd<VertexAnimationBakeJob>> {
        match self.run() {
            Ok(run) => {
                let resources = self.targets.iter_shared().flatten().collect();
                let prefix = format!("VertexAnimationBaker '{}': ", self.base().get_name());
                let me = self.to_gd().upcast::<Object>();
                Some(VertexAnimationBakeJob::create(
                    run,
                    resources,
                    prefix,
                    Some(me),
                ))
            }
            Err(e) => {
                godot_error!(
                    "vat_crowd: VertexAnimationBaker '{}': {e}",
                    self.base().get_name()
                );
                None
            }
        }
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

    /// The bake of every target (not started): from its own `source_scene`, else from the
    /// character under the baker.
    fn run(&self) -> Result<BakeRun, String> {
        let targets: Vec<Gd<VertexAnimation>> = self
            .targets
            .iter_shared()
            .enumerate()
            .map(|(i, t)| t.ok_or_else(|| format!("targets[{i}] is empty")))
            .collect::<Result<_, _>>()?;
        if targets.is_empty() {
            return Err("no targets: add a VertexAnimation to bake into".into());
        }
        let mut run = BakeRun::default();
        if self.share_bone_textures {
            run.share_bones();
        }
        for (i, target) in targets.into_iter().enumerate() {
            let source = if target.bind().has_source_scene() {
                BakeSource::Scene
            } else {
                let (root, player) = self.character()?;
                let scene_name = root.get_name().to_string();
                BakeSource::Root {
                    root,
                    player,
                    scene_name,
                }
            };
            let path = self.target_path(&target, i);
            run.add(target, source, path, format!("targets[{i}]: "));
        }
        Ok(run)
    }

    /// Emits `bake_progress` for the targets `run` built since `told` of them; returns the count.
    fn tell_built(&mut self, run: &BakeRun, told: usize) -> usize {
        let built = run.built_count();
        let total = self.targets.len() as i32;
        for done in told..built {
            self.signals().bake_progress().emit(done as i32 + 1, total);
        }
        built
    }

    /// Where target `index` is saved: its own file, else one from `output_path`, else nowhere.
    fn target_path(&self, target: &Gd<VertexAnimation>, index: usize) -> Option<String> {
        let own = target.get_path().to_string();
        if !own.is_empty() && !own.contains("::") {
            Some(own)
        } else if self.output_path.is_empty() {
            None
        } else if self.output_path.to_string().ends_with(".res") && self.targets.len() == 1 {
            Some(self.output_path.to_string())
        } else {
            let name = self
                .base()
                .get_child(0)
                .map(|c| c.get_name().to_string())
                .unwrap_or_default();
            Some(format!(
                "{}/{}_{index}.res",
                self.output_path.to_string().trim_end_matches('/'),
                name
            ))
        }
    }
}
