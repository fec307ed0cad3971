//! The crowd core: the state both crowd nodes hold (their shared properties, the crowd clock,
//! the editor preview, the errors reported once, the submit statistics) and the rules over it,
//! written once. Each node owns one [`CrowdCore`] and implements [`CrowdNode`], the written
//! contract through which the shared API (`crowd_node!`, in `node_api`) reaches the node's own
//! parts: its GPU objects and what a property change means for its data.
//!
//! The GPU objects stay with each node because the nodes reach them differently: the retained
//! node through `&mut self`, the actor node through the `RefCell` of its immediate-mode frame
//! (its per-actor calls take `&self`).

use godot::classes::geometry_instance_3d::ShadowCastingSetting;
use godot::classes::Node3D;
use godot::obj::EngineEnum;
use godot::prelude::*;
use vat_core::clock::{clock_runs, CrowdClock};

use super::gpu::{report_once, CrowdGpu, FrameRequest};
use super::preview::Shown;
use super::view::{self, FrameProps};
use crate::editor;

/// What both crowd nodes hold. The properties are the nodes' shared exported properties, read
/// and written only through the accessors `crowd_node!` generates (which apply the checks here).
pub struct CrowdCore {
    /// `cast_shadow`: GeometryInstance3D.ShadowCastingSetting as an int (invalid values mean On).
    pub cast_shadow: i32,
    /// `paused`: the crowd clock stands still.
    pub paused: bool,
    /// `interpolate`: blend between the two nearest baked frames.
    pub interpolate: bool,
    /// `speed_scale`: multiplies the clock's advance per frame.
    pub speed_scale: f64,
    /// `billboard`: actors turn about their up axis toward the camera.
    pub billboard: bool,
    /// `full_transform`: records hold the whole 3x4 transform.
    pub full_transform: bool,
    /// `gpu_driven`: cull and pick levels in a compute pass where the renderer has one.
    pub gpu_driven: bool,
    /// `culling_camera`: the Camera3D to cull against (empty: the viewport's).
    pub culling_camera: NodePath,
    /// `culling`, `lod_bias`, `max_lod`, `force_lod`, `shadow_lod`, `lod_debug_colors` and
    /// `lod_interpolate`: what the crowd frame reads.
    pub lod: FrameProps,
    /// `preview_count`: instances (actors) the editor preview shows.
    pub preview_count: i32,
    /// `preview_clip`: the clip the editor preview plays (empty: the first).
    pub preview_clip: GString,
    /// The crowd clock.
    pub clock: CrowdClock,
    /// The editor preview shown now, if any.
    pub preview: Option<Shown>,
    /// The last `preview_clip` error reported.
    pub preview_error: Option<String>,
    /// The last culling-camera error reported.
    pub view_error: Option<String>,
    /// CPU time of the last submit that uploaded data, in microseconds.
    pub last_submit_usec: i64,
    /// Bytes the last submit handed to the engine in texture updates.
    pub last_submit_bytes: i64,
}

impl Default for CrowdCore {
    fn default() -> Self {
        Self {
            cast_shadow: ShadowCastingSetting::ON.ord(),
            paused: false,
            interpolate: true,
            speed_scale: 1.0,
            billboard: false,
            full_transform: false,
            gpu_driven: true,
            culling_camera: NodePath::default(),
            lod: FrameProps::default(),
            preview_count: 1,
            preview_clip: GString::new(),
            clock: CrowdClock::default(),
            preview: None,
            preview_error: None,
            view_error: None,
            last_submit_usec: 0,
            last_submit_bytes: 0,
        }
    }
}

/// What a crowd node gives the shared API beside its `core` field: its GPU objects, and what a
/// change of the shared state means for its own data.
pub trait CrowdNode {
    /// The crowd's GPU objects for a `&self` call named `what` (none before they are built).
    fn gpu_ref(&self, what: &str) -> Option<impl std::ops::Deref<Target = CrowdGpu> + '_>;
    /// The crowd's GPU objects, for a `&mut self` call.
    fn gpu_mut(&mut self) -> Option<&mut CrowdGpu>;
    /// Frees the GPU objects (built again on next use): after a change of what they are made of.
    fn reset_gpu(&mut self);
    /// Runs the crowd frame again if its inputs changed (called every process frame and after a
    /// culling, LOD or shadow property changed).
    fn refresh_frame(&mut self);
    /// The clock's origin moved from `old_origin` (a rebase): stored start times follow it.
    fn clock_rebased(&mut self, old_origin: f64);
    /// The clock was set by `time` (after any rebase).
    fn time_set(&mut self) {}
    /// `Ok` if the node's records fit with `full_transform` set to `full`, else why not.
    fn full_transform_fits(&self, _full: bool) -> Result<(), String> {
        Ok(())
    }
}

impl CrowdCore {
    /// Advances the clock by `delta` seconds times `speed_scale` when it runs (see
    /// [`clock_runs`]); returns the old origin if that moved it.
    pub fn advance(&mut self, delta: f64, previewing: bool) -> Option<f64> {
        if !clock_runs(self.paused, editor::in_editor(), previewing) {
            return None;
        }
        let old = self.clock.origin();
        self.clock.advance(delta * self.speed_scale);
        (self.clock.origin() != old).then_some(old)
    }

    /// Sets the clock to `time` (refused with an error naming `node` unless finite and within
    /// +-2^32 s); returns the old origin if that moved it, and whether the time was taken.
    pub fn set_time(&mut self, node: &str, time: f64) -> (bool, Option<f64>) {
        if let Err(e) = vat_core::crowd::crowd_time(time, "time") {
            godot_error!(
                "vat_crowd: {node}.time: {e}; the clock keeps {}",
                self.clock.time()
            );
            return (false, None);
        }
        let old = self.clock.origin();
        self.clock.set_time(time);
        (true, (self.clock.origin() != old).then_some(old))
    }

    /// Sets `speed_scale` unless it is not finite or beyond +-65504 (then an error naming
    /// `node`, and the scale stays).
    pub fn set_speed_scale(&mut self, node: &str, scale: f64) {
        match vat_core::crowd::speed(scale, "speed_scale") {
            Ok(_) => self.speed_scale = scale,
            Err(e) => godot_error!(
                "vat_crowd: {node}.speed_scale: {e}; it stays {}",
                self.speed_scale
            ),
        }
    }

    /// Sets `lod_bias` unless it is not finite (then an error naming `node`).
    pub fn set_lod_bias(&mut self, node: &str, bias: f32) {
        if view::check_bias(node, f64::from(bias), self.lod.lod_bias) {
            self.lod.lod_bias = bias;
        }
    }

    /// A level property (`what`: `max_lod`, `force_lod`, `shadow_lod`) set to `value` if it is
    /// -1 or a level, else an error naming `node` and `keeps` kept.
    pub fn level(node: &str, what: &str, value: i32, keeps: i32) -> i32 {
        if view::check_level(node, what, value, keeps) {
            value
        } else {
            keeps
        }
    }

    /// `cast_shadow` as Godot's enum.
    pub fn cast(&self) -> ShadowCastingSetting {
        shadow_setting(self.cast_shadow)
    }

    /// The current camera's position in `node`'s space for the billboard, if `billboard` is on.
    pub fn billboard_camera(&self, node: &Node3D) -> Option<Vector3> {
        self.billboard
            .then(|| super::gpu::crowd_camera(node))
            .flatten()
    }

    /// The crowd frame's inputs for `actors` actor records of `stride` floats on `node`: the
    /// culling camera's view (none outside the tree or without a camera; a bad
    /// `culling_camera` is reported once), the properties.
    pub fn frame_request(
        &mut self,
        node: &Gd<Node3D>,
        actors: usize,
        stride: usize,
    ) -> FrameRequest {
        let cast = self.cast();
        let mut view = None;
        if node.is_inside_tree() {
            match view::culling_camera(node, &self.culling_camera) {
                Ok(camera) => {
                    self.view_error = None;
                    view = camera.filter(|c| c.is_inside_tree()).map(|c| {
                        let shadows = cast != ShadowCastingSetting::OFF && self.lod.culling;
                        view::view_of(node, &c, shadows)
                    });
                }
                Err(e) => {
                    let name = node.get_name().to_string();
                    report_once(&mut self.view_error, &name, e);
                }
            }
        }
        FrameRequest {
            view,
            props: self.lod,
            cast,
            actors,
            stride,
            billboard: self.billboard,
        }
    }
}

/// Maps the exported int to Godot's enum (invalid values mean On).
pub fn shadow_setting(v: i32) -> ShadowCastingSetting {
    ShadowCastingSetting::try_from_ord(v).unwrap_or(ShadowCastingSetting::ON)
}
