//! `VertexAnimationBakeJob`: a bake of one or more VertexAnimations that runs in steps, so the
//! editor can draw, show progress and offer Cancel between them.

use godot::global::Error;
use godot::prelude::*;

use super::steps::{BakeSource, Built, Prepared};
use super::VertexAnimation;
use crate::bake::bones;

/// One resource of a job and how far its bake is.
struct Target {
    resource: Gd<VertexAnimation>,
    /// Where it bakes from, until it is prepared.
    source: Option<BakeSource>,
    prepared: Option<Prepared>,
    built: Option<Built>,
    /// Saved there after the commit, when set.
    save_path: Option<String>,
    /// Put before its error messages (e.g. "targets[1]: "), empty for a lone resource.
    label: String,
}

/// The steps of a bake of several resources: prepare them all, sample one clip per step, build
/// each (one step each), then commit all at once and save those that have a path. The resources
/// change only in the last step: a failure or a cancel before it leaves every one as it was.
#[derive(Default)]
pub(crate) struct BakeRun {
    targets: Vec<Target>,
    /// Offer the first target's bone texture to the others (`VertexAnimationBaker`'s
    /// `share_bone_textures`).
    share_bones: bool,
    started: bool,
    /// `Some` once finished: the result and the summary (or the error).
    result: Option<(Error, String)>,
    done: i32,
    total: i32,
}

impl BakeRun {
    /// Adds a resource to bake from `source`; `label` prefixes its errors.
    pub fn add(
        &mut self,
        resource: Gd<VertexAnimation>,
        source: BakeSource,
        save_path: Option<String>,
        label: String,
    ) {
        self.targets.push(Target {
            resource,
            source: Some(source),
            prepared: None,
            built: None,
            save_path,
            label,
        });
    }

    /// Offers the first target's bone texture to the targets after it that have no
    /// `bone_source`: each draws with it where it can, and gets it as its `bone_source`.
    pub fn share_bones(&mut self) {
        self.share_bones = true;
    }

    /// Index of the target that is target `i`'s `bone_source`, when it is baked in this run.
    fn source_in_run(&self, i: usize) -> Option<usize> {
        let source = self.targets[i].resource.bind().get_bone_source()?;
        let id = source.instance_id();
        self.targets
            .iter()
            .position(|t| t.resource.instance_id() == id)
            .filter(|&j| j != i)
    }

    /// The bone texture target `i` draws with when another target of this run provides it: its
    /// `bone_source` (built first), or the first target's, offered (`share_bones`). `Err` when
    /// its `bone_source` is baked here but stores no bone texture.
    fn body_for(&self, i: usize) -> Result<Option<bones::SourceBones>, String> {
        let t = &self.targets[i];
        if let Some(j) = self.source_in_run(i) {
            let body = &self.targets[j];
            let name = body.resource.bind().name_for_messages();
            let built = body.built.as_ref().expect("a bone_source is built first");
            return built.as_body(name.clone(), false).map(Some).ok_or_else(|| {
                format!(
                    "{}its bone_source '{name}' (baked with it) stores no bone texture of its own; bake it in bone storage",
                    t.label
                )
            });
        }
        if !self.share_bones || i == 0 || t.resource.bind().get_bone_source().is_some() {
            return Ok(None);
        }
        let first = &self.targets[0];
        let name = first.resource.bind().name_for_messages();
        Ok(first.built.as_ref().and_then(|b| b.as_body(name, true)))
    }

    /// Resources that are built (waiting for the commit, or committed).
    pub fn built_count(&self) -> usize {
        let built = self.targets.iter().filter(|t| t.built.is_some()).count();
        if self.result.as_ref().is_some_and(|(e, _)| *e == Error::OK) {
            self.targets.len()
        } else {
            built
        }
    }

    /// Runs the next step; false once the bake has finished (see `result`).
    pub fn step(&mut self) -> bool {
        if self.result.is_some() {
            return false;
        }
        if let Err(message) = self.try_step() {
            self.finish(Error::FAILED, message);
        }
        self.result.is_none()
    }

    /// The result once finished: OK, FAILED, or ERR_SKIP when cancelled; and the summary lines or
    /// the error.
    pub fn result(&self) -> Option<&(Error, String)> {
        self.result.as_ref()
    }

    /// Steps done and steps in all (known after the first step; 1 before it).
    pub fn progress(&self) -> (i32, i32) {
        (self.done, self.total.max(1))
    }

    /// Stops the bake and frees what it instantiated; the resources stay as they were.
    pub fn cancel(&mut self) {
        if self.result.is_none() {
            self.finish(Error::ERR_SKIP, "cancelled; nothing was changed".into());
        }
    }

    fn finish(&mut self, error: Error, message: String) {
        // Frees the instantiated scenes and the unused bakes.
        for t in &mut self.targets {
            t.prepared = None;
            t.built = None;
        }
        self.result = Some((error, message));
    }

    fn try_step(&mut self) -> Result<(), String> {
        if self.targets.is_empty() {
            return Err("nothing to bake".into());
        }
        if !self.started {
            self.started = true;
            // A target that another names as its bone_source is built (and saved) first.
            let sources: Vec<bool> = (0..self.targets.len())
                .map(|j| (0..self.targets.len()).any(|i| self.source_in_run(i) == Some(j)))
                .collect();
            let mut order: Vec<usize> = (0..self.targets.len()).collect();
            order.sort_by_key(|&j| !sources[j]);
            let mut targets: Vec<Option<Target>> = std::mem::take(&mut self.targets)
                .into_iter()
                .map(Some)
                .collect();
            self.targets = order
                .iter()
                .map(|&j| targets[j].take().expect("once"))
                .collect();
            for t in &mut self.targets {
                let source = t.source.take().expect("prepared once");
                let prepared = t
                    .resource
                    .bind()
                    .prepare(source)
                    .map_err(|e| format!("{}{e}", t.label))?;
                t.prepared = Some(prepared);
            }
            let clips: usize = self
                .targets
                .iter()
                .filter_map(|t| t.prepared.as_ref())
                .map(Prepared::clip_count)
                .sum();
            // Preparing, one step per clip, one build per resource.
            self.total = (1 + clips + self.targets.len()) as i32;
            self.done = 1;
            return Ok(());
        }
        let Some(i) = self.targets.iter().position(|t| t.built.is_none()) else {
            return self.commit();
        };
        let t = &mut self.targets[i];
        let prepared = t.prepared.as_mut().expect("prepared before built");
        if let Some((done, total)) = prepared.sample_next() {
            t.resource
                .emit_signal("bake_progress", &[done.to_variant(), total.to_variant()]);
        } else {
            let body = self.body_for(i)?;
            let t = &mut self.targets[i];
            let prepared = t.prepared.as_ref().expect("prepared before built");
            let built = t
                .resource
                .bind()
                .build(prepared, body.as_ref())
                .map_err(|e| format!("{}{e}", t.label))?;
            t.built = Some(built);
            t.prepared = None;
        }
        self.done += 1;
        if self.targets.iter().all(|t| t.built.is_some()) {
            self.commit()?;
        }
        Ok(())
    }

    /// Stores every built bake in its resource, then saves those with a path.
    fn commit(&mut self) -> Result<(), String> {
        let mut lines = Vec::new();
        let first = self.targets[0].resource.clone();
        for (i, t) in self.targets.iter_mut().enumerate() {
            let built = t.built.take().expect("all built");
            let adopted = i > 0
                && built.draws_shared_bones()
                && t.resource.bind().get_bone_source().is_none();
            let mut resource = t.resource.bind_mut();
            if adopted {
                // It drew with the first target's bone texture, offered (`share_bones`).
                resource.set_bone_source(Some(first.clone()));
            }
            lines.push(resource.commit(built));
        }
        for t in &mut self.targets {
            if let Some(path) = &t.save_path {
                let err = t.resource.bind_mut().save_to(path.as_str().into());
                if err != Error::OK {
                    return Err(format!(
                        "{}baked, but could not be saved to '{path}' ({err:?})",
                        t.label
                    ));
                }
            }
        }
        self.finish(Error::OK, lines.join("\n"));
        // `finish` cleared `built`; the count stays "all" for a finished bake.
        Ok(())
    }
}

/// A bake that runs in steps, made by `VertexAnimation.start_bake()` or
/// `VertexAnimationBaker.start_bake()`. Call `step()` once per frame until it returns false (the
/// editor stays responsive; the VertexAnimation's `bake_progress` is emitted after each clip), or
/// `cancel()` to stop: the resources change only in the last step, all at once, so a cancelled or
/// failed bake leaves them as they were. Needs the main thread and a running SceneTree, like
/// `bake()`.
#[derive(GodotClass)]
#[class(no_init, base = RefCounted)]
pub struct VertexAnimationBakeJob {
    run: BakeRun,
    resources: Array<Gd<VertexAnimation>>,
    /// Prefix of the one error printed when the bake fails.
    error_prefix: String,
    /// Also told of each built resource (`bake_progress(done, total)`) and of the end
    /// (`bake_finished(error, summary)`): the VertexAnimationBaker that made the job.
    notify: Option<Gd<Object>>,
    base: Base<RefCounted>,
}

#[godot_api]
impl VertexAnimationBakeJob {
    /// Runs the next step of the bake. Returns true while there is more to do, false once it has
    /// finished (done, failed or cancelled; see `get_error`). A failure prints one error.
    #[func]
    pub fn step(&mut self) -> bool {
        if !godot::init::is_main_thread() {
            godot_error!(
                "vat_crowd: VertexAnimationBakeJob.step() was called off the main thread and did nothing: a bake poses the character in the running scene tree, which only the main thread may touch"
            );
            return self.run.result().is_none();
        }
        let before = self.run.built_count();
        let more = self.run.step();
        self.tell(before);
        if let Some((error, message)) = self.run.result() {
            if *error == Error::OK {
                for line in message.lines() {
                    godot_print!("vat_crowd: {line}");
                }
            } else if *error == Error::FAILED && !more {
                godot_error!("vat_crowd: {}{message}", self.error_prefix);
            }
        }
        more
    }

    /// Stops the bake now: what it instantiated is freed and no resource changes. Does nothing
    /// once the bake has finished.
    #[func]
    pub fn cancel(&mut self) {
        let before = self.run.built_count();
        self.run.cancel();
        self.tell(before);
    }

    /// Whether the bake has finished (done, failed or cancelled).
    #[func]
    pub fn is_finished(&self) -> bool {
        self.run.result().is_some()
    }

    /// OK when the bake finished and every resource holds it, FAILED when it failed, ERR_SKIP
    /// when it was cancelled, ERR_BUSY while it runs.
    #[func]
    pub fn get_error(&self) -> Error {
        self.run.result().map_or(Error::ERR_BUSY, |(e, _)| *e)
    }

    /// The finished bake's summary (one line per resource) or its error; empty while it runs.
    #[func]
    pub fn get_message(&self) -> GString {
        self.run
            .result()
            .map_or(GString::new(), |(_, m)| m.as_str().into())
    }

    /// Steps done so far.
    #[func]
    pub fn get_done(&self) -> i32 {
        self.run.progress().0
    }

    /// Steps in all: 1 until the first step has planned the bake, then 1 (preparing) plus one
    /// per clip plus one per resource (building).
    #[func]
    pub fn get_total(&self) -> i32 {
        self.run.progress().1
    }

    /// The resources this job bakes into (for an undo snapshot taken before it commits).
    #[func]
    pub fn get_resources(&self) -> Array<Gd<VertexAnimation>> {
        self.resources.clone()
    }
}

impl VertexAnimationBakeJob {
    /// A job over `run`, which bakes `resources`; `error_prefix` starts its error line.
    pub(crate) fn create(
        run: BakeRun,
        resources: Array<Gd<VertexAnimation>>,
        error_prefix: String,
        notify: Option<Gd<Object>>,
    ) -> Gd<Self> {
        Gd::from_init_fn(|base| Self {
            run,
            resources,
            error_prefix,
            notify,
            base,
        })
    }

    /// Emits `notify`'s signals for what the last step did (`before`: resources built before it).
    fn tell(&mut self, before: usize) {
        let Some(notify) = self.notify.as_mut() else {
            return;
        };
        let total = self.resources.len() as i32;
        let after = self.run.built_count();
        if self.run.result().is_none_or(|(e, _)| *e == Error::OK) {
            for done in before..after {
                notify.emit_signal(
                    "bake_progress",
                    &[(done as i32 + 1).to_variant(), total.to_variant()],
                );
            }
        }
        if let Some((error, message)) = self.run.result() {
            let args = [error.ord().to_variant(), message.to_variant()];
            notify.emit_signal("bake_finished", &args);
            // Told once.
            self.notify = None;
        }
    }
}
