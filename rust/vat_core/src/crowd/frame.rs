//! The crowd frame: per-actor culling and level-of-detail (LOD) selection, in one pass over a
//! crowd's actors and one over its model instance lists, writing the instance list of every
//! (model, level) MultiMesh. Both crowd nodes run it every frame the view or the data changed.
//!
//! An actor is drawn when its placed volume meets the view frustum: the bounds of its current
//! clip (and of the previous clip while it cross-fades) in the character's space, turned, scaled
//! and moved by its placement, as an axis-aligned box in the crowd's space. An actor outside the
//! view still casts its shadow when that box, swept along a shadowed directional light's
//! direction by the light's shadow distance, meets the frustum: it goes into a shadow-only list.
//!
//! An actor in the view casts no shadow when no shadowed directional light can carry its shadow
//! into the part of the view that light's shadow maps cover: the ray from the actor along the
//! light's direction of travel passes farther from the camera than that light's shadow reach
//! ([`View::shadow_reach`]) plus the actor's radius. Such actors go to the view lists only,
//! and the casting ones (in view or not) to the shadow lists, whose MultiMeshes draw shadows
//! alone while the view MultiMeshes then cast none; where every actor casts (or an omni or spot
//! light casts shadows) the view lists cast their own, as without this test.
//!
//! Its level is [`LodCurve::value`](crate::lod_distance::LodCurve::value) of its distance to the
//! camera and `D` (the first model's diameter at scale 1 times the actor's scale), plus a bias,
//! through [`pick_level`](crate::lod_distance::pick_level) with the level it had last frame
//! (hysteresis, kept per actor index). Every model draws `min(level, its last level)`. An
//! orthographic camera has no distance: its view height plays the role of `d * 2 tan(fov / 2)`
//! (see [`Projection`](crate::crowd::Projection)), so every actor of one size gets one level.
//!
//! Nothing allocates once the lists have grown to a crowd's size, but for a few task handles per
//! run. From [`FRAME_PARALLEL_MIN`] actors the actor pass splits into tasks, and the model lists
//! are written in parallel, both with [`for_each_helped`]: the calling thread runs the tasks
//! itself, and the helpers ([`CrowdFrame::set_helpers`]) take some while they are free.
//!
//! This file holds the frame's state and its passes ([`CrowdFrame`]), the class byte each actor
//! gets and the list pass that reads it; the frame's inputs (camera, settings, shape, actor
//! records) are in `frame_input`, the per-actor classification (the exact culling, shadow and
//! level tests) in `frame_classify`, its fast path in `frame_fast`.

use std::sync::{Arc, Mutex};

use crate::crowd::frame_classify::Classifier;
use crate::crowd::frame_fast::FastFrame;
use crate::crowd::frame_input::{Actors, CrowdShape, FrameSettings, View};
use crate::helped::{for_each_helped, Helpers, RayonHelpers};

/// Actors per task in the actor pass (about 0.1 ms of work: a helper that is late or slow holds
/// the caller up no longer than that).
const FRAME_CHUNK: usize = 1 << 13;
/// Actors (or model instances, for the list pass) from which a pass splits into tasks:
/// lower than the bulk calls' `PARALLEL_MIN_ITEMS`, as the frame does more work per actor
/// (about 3 ns where a bulk call copies 32 bytes).
pub const FRAME_PARALLEL_MIN: usize = 1 << 15;
/// An actor's class when it is neither drawn nor casts a shadow into the view.
pub(super) const CULLED: u8 = u8::MAX;
/// Set in an actor's class when it only casts a shadow (the low bits hold its level).
pub(super) const SHADOW_ONLY: u8 = 0x80;
/// Set in an actor's class when it is drawn in the view but casts no shadow into it (beyond the
/// reach of every shadowed directional light).
pub(super) const NO_CAST: u8 = 0x40;
/// The level bits of an actor's class.
pub(super) const LEVEL_BITS: u8 = 0x3f;
/// Most levels a crowd frame tells apart (the class byte keeps 6 bits of level).
pub const MAX_LEVELS: usize = 64;

/// The crowd frame's state: the per-actor classes of the last run (kept for hysteresis) and the
/// instance lists it wrote.
#[derive(Debug, Default)]
pub struct CrowdFrame {
    /// Per actor: [`CULLED`], a level, or [`SHADOW_ONLY`] | level.
    classes: Vec<u8>,
    /// Per model, `2 * levels` lists: the view lists of each level, then the shadow-only lists.
    lists: Vec<Vec<Vec<u32>>>,
    /// Actors in view per level.
    lod_counts: Vec<u32>,
    /// Actors outside the view kept for their shadows.
    shadow_only: u32,
    /// Actors in the view that cast no shadow.
    no_cast: u32,
    /// The shadow lists carry every shadow (see [`CrowdFrame::splits_shadows`]).
    split_shadows: bool,
    /// The fast path's tables for this run's view (see `frame_fast`).
    fast: FastFrame,
    /// The threads that help with large runs.
    helpers: FrameHelpers,
}

/// The threads that help a [`CrowdFrame`] (rayon's current pool unless set).
#[derive(Clone)]
struct FrameHelpers(Arc<dyn Helpers>);

impl Default for FrameHelpers {
    fn default() -> Self {
        FrameHelpers(Arc::new(RayonHelpers))
    }
}

impl std::fmt::Debug for FrameHelpers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not `threads()`: asking a pool its size may create it.
        f.write_str("FrameHelpers")
    }
}

impl CrowdFrame {
    /// An empty frame.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs the large passes with `helpers`' threads helping the caller (the default: rayon's
    /// current pool).
    pub fn set_helpers(&mut self, helpers: Arc<dyn Helpers>) {
        self.helpers = FrameHelpers(helpers);
    }

    /// Forgets every actor's last level (after the crowd was rebuilt).
    pub fn reset(&mut self) {
        self.classes.clear();
    }

    /// Culls and picks levels for `actors` seen by `view` (`None`: no camera, so nothing is
    /// culled and every actor draws level 0 unless forced), then writes each model's instances
    /// (`models[m]`, texels as `u32::from_le_bytes` of [`crate::crowd::records::pack_model_instance`]) into
    /// the lists of its level. Instances naming an actor past `actors.count` are dropped.
    pub fn run(
        &mut self,
        actors: &Actors,
        models: &[&[u32]],
        shape: &CrowdShape,
        view: Option<&View>,
        settings: &FrameSettings,
    ) {
        let levels = shape.levels().min(MAX_LEVELS);
        let top = (levels - 1).min(usize::from(settings.max_lod)) as u8;
        self.classes.resize(actors.count, CULLED);
        // The fast path reads yaw records; full transforms always take the exact tests.
        let fast = match view {
            Some(v) if actors.basis_at.is_none() && settings.force_lod.is_none() => {
                let fast = &mut self.fast;
                fast.prepare(v, &shape.clip_bounds, shape.lod, settings.lod_bias, top)
                    .then_some(&*fast)
            }
            _ => None,
        };
        let spheres = view.map(View::spheres_in_view).unwrap_or_default();
        let reach = view
            .filter(|_| settings.culling && settings.cast_shadows)
            .and_then(View::reach_limits);
        let classify = Classifier {
            actors,
            shape,
            view,
            settings,
            top,
            fast,
            spheres: &spheres,
            reach: reach.as_deref(),
        };
        let n = actors.count;
        let helpers = &*self.helpers.0;
        let counts = if n >= FRAME_PARALLEL_MIN {
            let chunks: Vec<Mutex<(&mut [u8], Vec<u32>)>> = self
                .classes
                .chunks_mut(FRAME_CHUNK)
                .map(|out| Mutex::new((out, Vec::new())))
                .collect();
            for_each_helped(helpers, chunks.len(), &|c| {
                let mut chunk = chunks[c].lock().unwrap_or_else(|e| e.into_inner());
                let (out, counts) = &mut *chunk;
                *counts = classify.range(c * FRAME_CHUNK, out, levels);
            });
            chunks
                .into_iter()
                .map(|c| c.into_inner().unwrap_or_else(|e| e.into_inner()).1)
                .fold(vec![0; levels + 2], add_counts)
        } else {
            classify.range(0, &mut self.classes, levels)
        };
        self.shadow_only = counts[levels];
        self.no_cast = counts[levels + 1];
        self.lod_counts.clear();
        self.lod_counts.extend_from_slice(&counts[..levels]);

        self.lists.resize_with(models.len(), Vec::new);
        let shadow_lod = settings.shadow_lod.filter(|_| settings.cast_shadows);
        // Shadows go through the shadow lists alone when they come from another level, or when
        // some actors in the view cast none.
        self.split_shadows = settings.cast_shadows && (shadow_lod.is_some() || self.no_cast > 0);
        let split = self.split_shadows;
        let classes = &self.classes;
        let fill = |(m, lists): (usize, &mut Vec<Vec<u32>>)| {
            let last = shape.model_levels.get(m).map_or(1, |&l| l.max(1)) - 1;
            lists.resize_with(2 * levels, Vec::new);
            lists.iter_mut().for_each(Vec::clear);
            fill_model(models[m], classes, last, levels, split, shadow_lod, lists);
        };
        let total: usize = models.iter().map(|m| m.len()).sum();
        if total >= FRAME_PARALLEL_MIN {
            let lists: Vec<Mutex<&mut Vec<Vec<u32>>>> =
                self.lists.iter_mut().map(Mutex::new).collect();
            for_each_helped(helpers, lists.len(), &|m| {
                fill((m, &mut *lists[m].lock().unwrap_or_else(|e| e.into_inner())));
            });
        } else {
            self.lists.iter_mut().enumerate().for_each(fill);
        }
    }

    /// Model `model`'s instances drawn at `level` in the view this frame.
    pub fn view_list(&self, model: usize, level: usize) -> &[u32] {
        self.list(model, level)
    }

    /// Model `model`'s instances that only cast shadows, from the mesh of `level`.
    pub fn shadow_list(&self, model: usize, level: usize) -> &[u32] {
        let levels = self.lists.get(model).map_or(0, |l| l.len() / 2);
        self.list(model, levels + level)
    }

    fn list(&self, model: usize, slot: usize) -> &[u32] {
        self.lists
            .get(model)
            .and_then(|l| l.get(slot))
            .map_or(&[], |l| l.as_slice())
    }

    /// Actors drawn in the view at each level, from level 0.
    pub fn lod_counts(&self) -> &[u32] {
        &self.lod_counts
    }

    /// Actors outside the view kept for the shadows they cast into it.
    pub fn shadow_only_count(&self) -> u32 {
        self.shadow_only
    }

    /// Actors in the view that cast no shadow (beyond every shadowed light's reach).
    pub fn no_cast_count(&self) -> u32 {
        self.no_cast
    }

    /// True when the shadow lists carry every shadow of this frame (from `shadow_lod`'s level,
    /// or because some actors in the view cast none): the view lists' MultiMeshes must then cast
    /// no shadow. False: the view lists cast their own, and the shadow lists hold only actors
    /// outside the view.
    pub fn splits_shadows(&self) -> bool {
        self.split_shadows
    }
}

fn add_counts(mut a: Vec<u32>, b: Vec<u32>) -> Vec<u32> {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
    a
}

/// Sorts one model's instances into its lists by their actors' classes. With `split`, every
/// actor that casts goes to a shadow list too (of the coarser of `shadow_lod` and its own level);
/// without, only the actors outside the view do.
fn fill_model(
    instances: &[u32],
    classes: &[u8],
    last: u8,
    levels: usize,
    split: bool,
    shadow_lod: Option<u8>,
    lists: &mut [Vec<u32>],
) {
    let shadow_floor = usize::from(shadow_lod.unwrap_or(0).min(last));
    for &texel in instances {
        let actor = (texel & 0x00ff_ffff) as usize;
        let Some(&class) = classes.get(actor) else {
            continue;
        };
        if class == CULLED {
            continue;
        }
        let level = usize::from((class & LEVEL_BITS).min(last));
        if class & SHADOW_ONLY == 0 {
            lists[level].push(texel);
        }
        if class & NO_CAST != 0 {
            continue;
        }
        if split || class & SHADOW_ONLY != 0 {
            lists[levels + level.max(shadow_floor)].push(texel);
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod texel_tests;
