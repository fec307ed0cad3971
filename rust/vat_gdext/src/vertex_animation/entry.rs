//! The ways a script bakes a `VertexAnimation` and saves it: `start_bake` (the stepped job the
//! Bake panel runs), `bake` (in one go), the last bake's stats, and `save_to`.

use godot::global::Error;
use godot::prelude::*;

use super::bake_job::{BakeRun, VertexAnimationBakeJob};
use super::{steps, VertexAnimation};
use crate::save::save_atomic;

#[godot_api(secondary)]
impl VertexAnimation {
    /// Starts a bake of `source_scene` that runs in steps: call the job's `step()` once per frame
    /// until it returns false, or `cancel()` it. This resource changes only in the job's last
    /// step, all at once (a failed or cancelled job changes nothing); it is not saved. The
    /// inspector's Bake panel runs this.
    #[func]
    pub fn start_bake(&self) -> Gd<VertexAnimationBakeJob> {
        let mut run = BakeRun::default();
        run.add(self.to_gd(), steps::BakeSource::Scene, None, String::new());
        let mut resources = Array::new();
        resources.push(&self.to_gd());
        VertexAnimationBakeJob::create(run, resources, "bake failed: ".into(), None)
    }

    /// Bakes `source_scene` into this resource. Needs a running SceneTree (editor, game, or
    /// `bake.gd`). On failure prints one error saying what and where, and keeps the previous bake.
    #[func]
    pub fn bake(&mut self) -> Error {
        if !godot::init::is_main_thread() {
            godot_error!(
                "vat_crowd: VertexAnimation.bake() was called off the main thread and did nothing: a bake poses the character in the running scene tree, which only the main thread may touch; call it on the main thread (e.g. with call_deferred)"
            );
            return Error::ERR_UNAVAILABLE;
        }
        match self.bake_impl() {
            Ok(summary) => {
                godot_print!("vat_crowd: {summary}");
                Error::OK
            }
            Err(message) => {
                godot_error!("vat_crowd: bake failed: {message}");
                Error::FAILED
            }
        }
    }

    /// The last bake's summary and timings: vertices (VAT columns), frames, clips, texture sizes,
    /// bytes (the vertex storage's textures), texture_bytes (the animation textures stored, in
    /// either storage), storage ("vertices" or "bones"), storage_reason, bone_count, bone_error
    /// (bone storage: the largest distance from the vertex bake, share of the diagonal),
    /// clip_sag (per clip, how far half-way playback between two baked frames strays from the
    /// motion at most, share of the diagonal; the summary names clips past 1% and the clip_fps that
    /// fixes them), sample_ms (Godot posing), skin_ms (vat_core skinning), encode_ms, build_ms (the LOD
    /// chain included), total_ms; and the LOD chain's figures: `lods` (per kept level: level,
    /// built_level, vertices, triangles, vat_columns, holes_pct, loss_pct, worst_view, worst_pose,
    /// silhouette: an Image of the source's and the level's masks side by side; for LOD2 in
    /// bone storage also bone_holes_pct and bone_loss_pct, the check with LOD2 skinned from the
    /// bone textures),
    /// source_vertices, vat_bytes_before, vat_bytes_after, lod_ms, lod_notes (why a level or the
    /// chain was left out, or why LOD2 has more triangles than asked) and lod_column_sources (6
    /// floats per column: three source vertices, their weights).
    #[func]
    pub fn get_bake_stats(&self) -> VarDictionary {
        self.stats.clone()
    }

    /// Saves this resource to `path` atomically: it is written to a temporary file beside it and
    /// renamed over the old one, so a failed save leaves the old file untouched.
    #[func]
    pub fn save_to(&mut self, path: GString) -> Error {
        if !godot::init::is_main_thread() {
            godot_error!(
                "vat_crowd: VertexAnimation.save_to() was called off the main thread and did nothing; save on the main thread"
            );
            return Error::ERR_UNAVAILABLE;
        }
        // The saver reads this resource's properties back through Godot: hold the base guard so
        // those re-entrant calls are allowed while `self` is borrowed.
        let mut base = self.base_mut();
        match save_atomic(&base, &path.to_string()) {
            Ok(()) => {
                base.take_over_path(&path);
                Error::OK
            }
            Err((err, message)) => {
                godot_error!("vat_crowd: {message}");
                err
            }
        }
    }
}
