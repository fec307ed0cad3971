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
//! Its level is [`LodCurve::value`] of its distance to the camera and `D` (the first model's
//! diameter at scale 1 times the actor's scale), plus a bias, through [`pick_level`] with the
//! level it had last frame (hysteresis, kept per actor index). Every model draws
//! `min(level, its last level)`. An orthographic camera has no distance: its view height plays the
//! role of `d * 2 tan(fov / 2)` (see [`Projection`]), so every actor of one size gets one level.
//!
//! Nothing allocates once the lists have grown to a crowd's size. From
//! [`FRAME_PARALLEL_MIN`] actors the actor pass splits
//! into rayon tasks, and the model lists are written in parallel.

use glam::Vec3;
use rayon::prelude::*;

use crate::bounds::Bounds;
use crate::crowd::frame_fast::{simple_actor, Cull, FastFrame};
use crate::half::unpack_half2;
use crate::layout::{BLEND_BIAS, CLIP_CODE_BASE};
use crate::lod_distance::{pick_level, LodCurve, REFERENCE_IMAGE_HEIGHT};

/// Actors per rayon task in the actor pass.
const FRAME_CHUNK: usize = 1 << 14;
/// Actors (or model instances, for the list pass) from which a pass splits into rayon tasks:
/// lower than the bulk calls' [`PARALLEL_MIN_ITEMS`], as the frame does more work per actor
/// (about 14 ns where a bulk call copies 32 bytes).
pub const FRAME_PARALLEL_MIN: usize = 1 << 15;
/// An actor's class when it is neither drawn nor casts a shadow into the view.
const CULLED: u8 = u8::MAX;
/// Set in an actor's class when it only casts a shadow (the low bits hold its level).
const SHADOW_ONLY: u8 = 0x80;
/// Set in an actor's class when it is drawn in the view but casts no shadow into it (beyond the
/// reach of every shadowed directional light).
const NO_CAST: u8 = 0x40;
/// The level bits of an actor's class.
const LEVEL_BITS: u8 = 0x3f;
/// Most levels a crowd frame tells apart (the class byte keeps 6 bits of level).
pub const MAX_LEVELS: usize = 64;

/// A plane in Godot's convention: a point `p` is outside (over the plane) where
/// `normal.dot(p) > d`. `Camera3D.get_frustum()` returns six of these, normals pointing out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plane {
    /// Outward normal (any length: the tests scale consistently).
    pub normal: Vec3,
    /// Offset along the normal.
    pub d: f32,
}

/// How the camera maps distance to size on screen, for LOD.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Projection {
    /// A perspective camera with the screen constant
    /// [`screen_constant`](crate::lod_distance::screen_constant) of its vertical field of view.
    Perspective {
        /// `C` of the LOD formula.
        screen_constant: f32,
    },
    /// An orthographic camera showing `height` metres vertically: an actor of diameter `D` covers
    /// the fraction `D / height` of the image wherever it stands, as a perspective actor does at
    /// the distance where `d * 2 tan(fov / 2) = height`.
    Orthographic {
        /// Visible height in metres (`Camera3D.size` with the default keep-height aspect).
        height: f32,
    },
}

/// The camera, in the crowd node's space.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// The frustum planes (any number; Godot gives six).
    pub planes: Vec<Plane>,
    /// The camera's position (for LOD distances).
    pub camera: Vec3,
    /// Perspective or orthographic.
    pub projection: Projection,
    /// Per shadowed directional light: its direction of travel times its shadow distance (the
    /// sweep that decides whether an actor's shadow can fall into the view).
    pub shadow_sweeps: Vec<Vec3>,
    /// Per shadowed omni or spot light: the sphere its light reaches (centre, radius). An actor
    /// outside the view inside such a sphere may cast a shadow into the view if the sphere
    /// reaches the view.
    pub shadow_spheres: Vec<(Vec3, f32)>,
    /// Per entry of `shadow_sweeps`: how far from the camera that light's shadow maps reach (the
    /// farthest point of the view within its shadow distance). Missing entries mean no limit.
    pub shadow_reach: Vec<f32>,
}

impl View {
    /// The lights whose shadow reach limits which actors in the view cast: `(unit direction of
    /// travel, reach)` per shadowed directional light, or `None` when any light's reach is
    /// unknown or an omni or spot light casts shadows (then every actor in the view casts).
    fn reach_limits(&self) -> Option<Vec<(Vec3, f32)>> {
        if !self.shadow_spheres.is_empty() || self.shadow_sweeps.is_empty() {
            return None;
        }
        self.shadow_sweeps
            .iter()
            .enumerate()
            .map(|(k, sweep)| {
                let reach = *self.shadow_reach.get(k)?;
                let travel = sweep.normalize_or_zero();
                (reach.is_finite() && travel != Vec3::ZERO).then_some((travel, reach))
            })
            .collect()
    }

    /// The shadow spheres that reach the view (a sphere beyond a plane lights nothing in it).
    fn spheres_in_view(&self) -> Vec<(Vec3, f32)> {
        self.shadow_spheres
            .iter()
            .copied()
            .filter(|&(c, r)| {
                r >= 0.0
                    && c.is_finite()
                    && self
                        .planes
                        .iter()
                        .all(|pl| pl.normal.dot(c) - pl.d <= r * pl.normal.length())
            })
            .collect()
    }
}

/// What the crowd node's properties ask of the frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameSettings {
    /// Leave out actors outside the view (and their shadows' reach).
    pub culling: bool,
    /// Added to every actor's LOD value (positive: coarser sooner).
    pub lod_bias: f32,
    /// The highest level any actor gets (`u8::MAX`: no limit).
    pub max_lod: u8,
    /// Every actor at this level (clamped to each model's last), instead of by distance.
    pub force_lod: Option<u8>,
    /// Shadows drawn from this level, or the actor's own where that is coarser, through the
    /// shadow lists (the view lists then cast none).
    pub shadow_lod: Option<u8>,
    /// The crowd casts shadows at all (else no shadow lists are written and nothing is kept for
    /// its shadow).
    pub cast_shadows: bool,
    /// Actors turn about +Y toward the camera (billboard): bound them for any yaw.
    pub any_yaw: bool,
    /// The crowd clock as the shader sees it (which actors are cross-fading).
    pub time: f32,
}

impl Default for FrameSettings {
    fn default() -> Self {
        Self {
            culling: true,
            lod_bias: 0.0,
            max_lod: u8::MAX,
            force_lod: None,
            shadow_lod: None,
            cast_shadows: true,
            any_yaw: false,
            time: 0.0,
        }
    }
}

/// What the frame knows of a crowd's character (all models share the clip table).
#[derive(Debug, Clone, PartialEq)]
pub struct CrowdShape {
    /// Per clip, the union over the crowd's models of the clip's bounds in the character's space.
    pub clip_bounds: Vec<Bounds>,
    /// The first model's calibrated LOD curve and its LOD diameter at scale 1
    /// ([`actor_diameter`](crate::lod_distance::actor_diameter)); `None` keeps every actor at
    /// level 0 unless forced.
    pub lod: Option<(LodCurve, f32)>,
    /// Per model, its number of levels (at least 1).
    pub model_levels: Vec<u8>,
}

impl CrowdShape {
    /// Levels of the model with the most.
    pub fn levels(&self) -> usize {
        self.model_levels
            .iter()
            .map(|&l| l.max(1) as usize)
            .max()
            .unwrap_or(1)
    }
}

/// Where the frame reads each actor's placement and animation state: `placements` holds
/// `placement_stride` floats per actor, `(x, y, z, yaw)` first (a full-transform record's fourth
/// float is `basis.z.z`, and `basis_at` the offset of its other eight basis floats); `states`
/// holds `state_stride` floats per actor, `(start_time, clip code, packHalf2(speed, scale),
/// packHalf2(prev_elapsed, blend_time + BLEND_BIAS))` first. See [`crate::crowd`] for the formats.
#[derive(Debug, Clone, Copy)]
pub struct Actors<'a> {
    /// Placement records.
    pub placements: &'a [f32],
    /// Floats per placement record.
    pub placement_stride: usize,
    /// Offset of a full-transform record's eight basis floats, or `None` for yaw and scale.
    pub basis_at: Option<usize>,
    /// State records.
    pub states: &'a [f32],
    /// Floats per state record.
    pub state_stride: usize,
    /// Number of actors.
    pub count: usize,
}

impl<'a> Actors<'a> {
    /// Actors stored as today's interleaved records (`stride` floats each: 8, or 16 with full
    /// transforms; placement at 0, state at 4, basis at 8).
    pub fn interleaved(records: &'a [f32], stride: usize, count: usize) -> Self {
        Actors {
            placements: records,
            placement_stride: stride,
            basis_at: (stride > 8).then_some(8),
            states: records.get(4..).unwrap_or(&[]),
            state_stride: stride,
            count,
        }
    }

    /// Actor `i`'s scale as the LOD formula takes it: its uniform scale, or its basis' longest
    /// column.
    fn size(&self, i: usize) -> Option<f32> {
        match self.basis_at {
            Some(at) => {
                let p = i * self.placement_stride;
                let t = self.placements.get(p + at..p + at + 8)?;
                let zz = *self.placements.get(p + 3)?;
                let cols = [
                    Vec3::new(t[0], t[1], t[2]),
                    Vec3::new(t[3], t[4], t[5]),
                    Vec3::new(t[6], t[7], zz),
                ];
                Some(cols.iter().map(|c| c.length()).fold(0.0, f32::max))
            }
            None => Some(unpack_half2(*self.states.get(i * self.state_stride + 2)?).1),
        }
    }

    /// The placed box (centre, half extents) of character-space bounds `b` on actor `i`, for
    /// any yaw when `any_yaw`. Returns `None` when the record is missing or not finite.
    fn placed_box(&self, i: usize, b: &Bounds, any_yaw: bool) -> Option<(Vec3, Vec3, f32)> {
        let p = self
            .placements
            .get(i * self.placement_stride..i * self.placement_stride + 4)?;
        let s = self.states.get(i * self.state_stride + 2)?;
        let position = Vec3::new(p[0], p[1], p[2]);
        let (cols, size) = match self.basis_at {
            Some(at) => {
                let at = i * self.placement_stride + at;
                let t = self.placements.get(at..at + 8)?;
                let cols = [
                    Vec3::new(t[0], t[1], t[2]),
                    Vec3::new(t[3], t[4], t[5]),
                    Vec3::new(t[6], t[7], p[3]),
                ];
                let size = cols.iter().map(|c| c.length()).fold(0.0, f32::max);
                (cols, size)
            }
            None => {
                let scale = unpack_half2(*s).1;
                let (sin, cos) = p[3].sin_cos();
                let cols = [
                    Vec3::new(cos, 0.0, -sin) * scale,
                    Vec3::new(0.0, scale, 0.0),
                    Vec3::new(sin, 0.0, cos) * scale,
                ];
                (cols, scale)
            }
        };
        let (c, e) = (b.center(), b.size() * 0.5);
        let mut center = cols[0] * c.x + cols[1] * c.y + cols[2] * c.z;
        let mut half = cols[0].abs() * e.x + cols[1].abs() * e.y + cols[2].abs() * e.z;
        if any_yaw {
            // Any turn about +Y: the box's farthest horizontal corner sweeps a circle.
            let r = (Vec3::new(center.x.abs() + half.x, 0.0, center.z.abs() + half.z)).length();
            center = Vec3::new(0.0, center.y, 0.0);
            half = Vec3::new(r, half.y, r);
        }
        let center = center + position;
        (center.is_finite() && half.is_finite()).then_some((center, half, size))
    }
}

/// Character-space bounds of actor `i` this frame: its clip's, and its previous clip's while the
/// shader still blends from it (`blend_time > 0` and `time - start < blend_time`, as the shader
/// decides). Clips past the table use the union of all clips.
fn actor_bounds(actors: &Actors, i: usize, shape: &CrowdShape, time: f32) -> Option<Bounds> {
    let s = actors
        .states
        .get(i * actors.state_stride..i * actors.state_stride + 4)?;
    let code = s[1] as u32;
    let clip_bounds = |clip: u32| {
        shape
            .clip_bounds
            .get(clip as usize)
            .copied()
            .unwrap_or_else(|| {
                shape
                    .clip_bounds
                    .iter()
                    .fold(Bounds::empty(), |a, b| a.union(b))
            })
    };
    let mut b = clip_bounds(code % CLIP_CODE_BASE);
    if cross_fading(s, time) {
        b = b.union(&clip_bounds(code / CLIP_CODE_BASE));
    }
    Some(b)
}

/// Whether the actor whose state record starts `state` still blends from its previous clip at
/// `time`, as the shader decides: `blend_time > 0` and `time - start < blend_time`.
#[inline]
pub(crate) fn cross_fading(state: &[f32], time: f32) -> bool {
    let blend = unpack_half2(state[3]).1 - BLEND_BIAS;
    blend > 0.0 && time - state[0] < blend
}

/// True if the box (centre `c`, half extents `e`), moved by each of `0` and `sweep`, stays
/// outside one plane at both ends (then the swept box misses the frustum).
fn outside(planes: &[Plane], c: Vec3, e: Vec3, sweep: Vec3) -> bool {
    planes.iter().any(|pl| {
        let dist = pl.normal.dot(c) - pl.d;
        let r = pl.normal.abs().dot(e);
        dist > r && dist + pl.normal.dot(sweep) > r
    })
}

/// True if the box (centre `c`, half extents `e`) meets the sphere (centre `s`, radius `r`).
fn box_meets_sphere(c: Vec3, e: Vec3, s: Vec3, r: f32) -> bool {
    let nearest = s.clamp(c - e, c + e);
    nearest.distance_squared(s) <= r * r
}

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
}

impl CrowdFrame {
    /// An empty frame.
    pub fn new() -> Self {
        Self::default()
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
        let radii: Vec<f32> = shape.clip_bounds.iter().map(bounds_radius).collect();
        let classify = Classifier {
            actors,
            shape,
            view,
            settings,
            top,
            fast,
            spheres: &spheres,
            reach: reach.as_deref(),
            radii: &radii,
        };
        let n = actors.count;
        let counts = if n >= FRAME_PARALLEL_MIN {
            self.classes
                .par_chunks_mut(FRAME_CHUNK)
                .enumerate()
                .map(|(c, out)| classify.range(c * FRAME_CHUNK, out, levels))
                .reduce(|| vec![0; levels + 2], add_counts)
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
            self.lists.par_iter_mut().enumerate().for_each(fill);
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

/// The radius of the sphere about the character's origin that holds `b`.
fn bounds_radius(b: &Bounds) -> f32 {
    let far = b.min.abs().max(b.max.abs());
    far.length()
}

/// True if the shadow of a sphere at `centre` of `radius`, carried along any light's direction
/// of travel, can come within that light's reach of `camera`.
fn casts_within(reach: &[(Vec3, f32)], camera: Vec3, centre: Vec3, radius: f32) -> bool {
    reach.iter().any(|&(travel, limit)| {
        let to_camera = camera - centre;
        let along = to_camera.dot(travel).max(0.0);
        (to_camera - travel * along).length_squared() <= (limit + radius) * (limit + radius)
    })
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

/// The actor pass, shared by its tasks.
struct Classifier<'a> {
    actors: &'a Actors<'a>,
    shape: &'a CrowdShape,
    view: Option<&'a View>,
    settings: &'a FrameSettings,
    /// The highest level an actor may get.
    top: u8,
    /// The fast path's tables, when it applies to this run.
    fast: Option<&'a FastFrame>,
    /// The view's shadow spheres that reach it.
    spheres: &'a [(Vec3, f32)],
    /// Per shadowed directional light, (direction of travel, reach): actors in the view whose
    /// shadow cannot come within reach of the camera cast none. `None`: every one casts.
    reach: Option<&'a [(Vec3, f32)]>,
    /// Per clip, the radius about the character's origin that holds its bounds.
    radii: &'a [f32],
}

impl Classifier<'_> {
    /// Classifies actors `start..start + out.len()` into `out` (which holds last frame's classes)
    /// and returns the actors per level in view, then the shadow-only count.
    fn range(&self, start: usize, out: &mut [u8], levels: usize) -> Vec<u32> {
        let mut counts = vec![0u32; levels + 2];
        for (k, class) in out.iter_mut().enumerate() {
            *class = self.classify(start + k, *class);
            match *class {
                CULLED => {}
                c if c & SHADOW_ONLY != 0 => counts[levels] += 1,
                c => {
                    counts[usize::from(c & LEVEL_BITS)] += 1;
                    counts[levels + 1] += u32::from(c & NO_CAST != 0);
                }
            }
        }
        counts
    }

    fn classify(&self, i: usize, previous: u8) -> u8 {
        self.classify_fast(i, previous)
            .unwrap_or_else(|| self.classify_exact(i, previous))
    }

    /// The fast path (see `frame_fast`), or `None` where it cannot tell.
    #[inline]
    fn classify_fast(&self, i: usize, previous: u8) -> Option<u8> {
        let fast = self.fast?;
        let a = self.actors;
        let p = a
            .placements
            .get(i * a.placement_stride..i * a.placement_stride + 4)?;
        let st = a.states.get(i * a.state_stride..i * a.state_stride + 4)?;
        let s = self.settings;
        let (position, scale, clip) = simple_actor(p, st, s.time)?;
        let mut flag = 0;
        if s.culling {
            match fast.cull(position, scale, clip, s.cast_shadows) {
                Cull::Inside => {}
                // Whether an omni or spot light's shadow brings it back, only the exact test
                // tells.
                Cull::Gone if s.cast_shadows && !self.spheres.is_empty() => return None,
                Cull::Gone => return Some(CULLED),
                Cull::Unsure => return None,
            }
            if let (Some(reach), Some(view)) = (self.reach, self.view) {
                let radius = self.radii.get(clip).copied()? * scale.abs();
                if !casts_within(reach, view.camera, position, radius) {
                    flag = NO_CAST;
                }
            }
        }
        if !fast.has_lod() {
            return self.shape.lod.is_none().then_some(flag);
        }
        let prev = (previous != CULLED).then_some(previous & LEVEL_BITS);
        fast.level(position, scale, prev).map(|l| l | flag)
    }

    fn classify_exact(&self, i: usize, previous: u8) -> u8 {
        let s = self.settings;
        let Some(view) = self.view else {
            return s.force_lod.unwrap_or(0).min(self.top);
        };
        let mut flag = 0;
        let mut size = 1.0;
        if s.culling {
            let Some(bounds) = actor_bounds(self.actors, i, self.shape, s.time) else {
                return CULLED;
            };
            let Some((c, e, placed_size)) = self.actors.placed_box(i, &bounds, s.any_yaw) else {
                return CULLED;
            };
            size = placed_size;
            let inside = !outside(&view.planes, c, e, Vec3::ZERO);
            if let (true, Some(reach)) = (inside, self.reach) {
                // The sphere about the placement that holds the bounds at any turn (as the fast
                // path tests it).
                let p = &self.actors.placements[i * self.actors.placement_stride..];
                let position = Vec3::new(p[0], p[1], p[2]);
                let radius = bounds_radius(&bounds) * placed_size;
                if !casts_within(reach, view.camera, position, radius) {
                    flag = NO_CAST;
                }
            }
            if !inside {
                let casts = s.cast_shadows
                    && (view
                        .shadow_sweeps
                        .iter()
                        .any(|&sweep| !outside(&view.planes, c, e, sweep))
                        || self
                            .spheres
                            .iter()
                            .any(|&(centre, r)| box_meets_sphere(c, e, centre, r)));
                if !casts {
                    return CULLED;
                }
                flag = SHADOW_ONLY;
            }
        } else if self.shape.lod.is_some() && s.force_lod.is_none() {
            // Not culled: only the scale is needed, for the level.
            size = self.actors.size(i).unwrap_or(1.0);
        }
        let level = match (s.force_lod, self.shape.lod) {
            (Some(forced), _) => forced.min(self.top),
            (None, None) => 0,
            (None, Some((curve, diameter))) => {
                let p = &self.actors.placements[i * self.actors.placement_stride..];
                let position = Vec3::new(p[0], p[1], p[2]);
                let d = diameter * size;
                let value = match view.projection {
                    Projection::Perspective { screen_constant } => {
                        curve.value(position.distance(view.camera), d, screen_constant)
                    }
                    Projection::Orthographic { height } => {
                        curve.value(height, d, 1.0 / REFERENCE_IMAGE_HEIGHT)
                    }
                };
                let prev = (previous != CULLED).then_some(previous & LEVEL_BITS);
                pick_level(value + s.lod_bias, prev, self.top)
            }
        };
        level | flag
    }
}

#[cfg(test)]
mod tests;
