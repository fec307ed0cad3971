//! The crowd frame's actor pass: each actor's class (culled, a level, shadow-only or not
//! casting) from its records, the view and the settings ([`Classifier`]), through the fast path
//! (`frame_fast`) where it decides and the exact tests otherwise: the actor's placed bounds
//! against the frustum and the shadowed lights' sweeps and spheres, the shadow reach, and the
//! LOD formula with hysteresis.

use glam::Vec3;

use crate::bounds::Bounds;
use crate::crowd::frame::{CULLED, LEVEL_BITS, NO_CAST, SHADOW_ONLY};
use crate::crowd::frame_fast::{fast_blocks, FastFrame};
use crate::crowd::frame_input::{Actors, CrowdShape, FrameSettings, Plane, Projection, View};
use crate::half::unpack_half2;
use crate::layout::{BLEND_BIAS, CLIP_CODE_BASE};
use crate::lod_distance::{pick_level, REFERENCE_IMAGE_HEIGHT};

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
    still_fading(unpack_half2(state[3]).1, state[0], time)
}

/// [`cross_fading`] of an actor whose stored blend time (its state's high half, with
/// [`BLEND_BIAS`]) is `stored_blend` and start time `start`; branch-free, for the fast path's
/// lanes.
#[inline(always)]
pub(crate) fn still_fading(stored_blend: f32, start: f32, time: f32) -> bool {
    let blend = stored_blend - BLEND_BIAS;
    (blend > 0.0) & (time - start < blend)
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

/// The radius of the sphere about the character's origin that holds `b`.
pub(super) fn bounds_radius(b: &Bounds) -> f32 {
    let far = b.min.abs().max(b.max.abs());
    far.length()
}

/// True if the shadow of a sphere at `centre` of `radius`, carried along any light's direction
/// of travel, can come within that light's reach of `camera`.
fn casts_within(reach: &[(Vec3, f32)], camera: Vec3, centre: Vec3, radius: f32) -> bool {
    reach
        .iter()
        .any(|&(travel, limit)| shadow_near(travel, limit, camera, centre, radius))
}

/// Whether the shadow of a sphere at `centre` of `radius`, carried along `travel` (a unit
/// direction), can come within `limit` of `camera` (see [`casts_within`]); branch-free, for the
/// fast path's lanes.
#[inline(always)]
pub(crate) fn shadow_near(
    travel: Vec3,
    limit: f32,
    camera: Vec3,
    centre: Vec3,
    radius: f32,
) -> bool {
    let to_camera = camera - centre;
    let along = to_camera.dot(travel).max(0.0);
    (to_camera - travel * along).length_squared() <= (limit + radius) * (limit + radius)
}

/// The actor pass, shared by its tasks.
pub(super) struct Classifier<'a> {
    pub(super) actors: &'a Actors<'a>,
    pub(super) shape: &'a CrowdShape,
    pub(super) view: Option<&'a View>,
    pub(super) settings: &'a FrameSettings,
    /// The highest level an actor may get.
    pub(super) top: u8,
    /// The fast path's tables, when it applies to this run.
    pub(super) fast: Option<&'a FastFrame>,
    /// The view's shadow spheres that reach it.
    pub(super) spheres: &'a [(Vec3, f32)],
    /// Per shadowed directional light, (direction of travel, reach): actors in the view whose
    /// shadow cannot come within reach of the camera cast none. `None`: every one casts.
    pub(super) reach: Option<&'a [(Vec3, f32)]>,
}

impl Classifier<'_> {
    /// Classifies actors `start..start + out.len()` into `out` (which holds last frame's classes)
    /// and returns the actors per level in view, then the shadow-only count, then the count of
    /// those in view that cast no shadow.
    pub(super) fn range(&self, start: usize, out: &mut [u8], levels: usize) -> Vec<u32> {
        let whole = self.actors.whole().saturating_sub(start).min(out.len());
        let (blocks, rest) = out.split_at_mut(if self.fast.is_some() { whole } else { 0 });
        if let Some(fast) = self.fast {
            fast_blocks(self, fast, start, blocks, |i, last| {
                self.classify_exact(i, last)
            });
        }
        let rest_start = start + blocks.len();
        for (k, class) in rest.iter_mut().enumerate() {
            *class = self.classify_exact(rest_start + k, *class);
        }
        count_classes(out, levels)
    }

    pub(super) fn classify_exact(&self, i: usize, previous: u8) -> u8 {
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

/// Actors per level in view, then shadow-only actors, then actors in view casting no shadow, of
/// a run of classes: with at most [`COUNTED_LEVELS`] levels by comparing 32 bytes at a time
/// ([`count_few_levels`]), else by a histogram.
fn count_classes(classes: &[u8], levels: usize) -> Vec<u32> {
    if levels <= COUNTED_LEVELS {
        count_few_levels(classes, levels)
    } else {
        class_histogram(classes, levels)
    }
}

/// Levels up to which [`count_classes`] compares bytes (one compare per level per byte) rather
/// than building a histogram (a load and a store per byte).
const COUNTED_LEVELS: usize = 8;

/// [`count_classes`] by comparisons: per 32 bytes, one byte counter per level (the class with
/// [`NO_CAST`] cleared equals the level: in view), one for shadow-only and one for no-cast,
/// summed before a counter can wrap. Loops the compiler turns into byte vectors.
fn count_few_levels(classes: &[u8], levels: usize) -> Vec<u32> {
    const LANES: usize = 32;
    let mut counts = vec![0u32; levels + 2];
    for run in classes.chunks(LANES * usize::from(u8::MAX)) {
        let mut level = [[0u8; LANES]; COUNTED_LEVELS];
        let (mut shadow, mut no_cast) = ([0u8; LANES], [0u8; LANES]);
        let mut bytes = run.chunks_exact(LANES);
        for b in &mut bytes {
            for (l, acc) in level.iter_mut().enumerate().take(levels) {
                for (a, &c) in acc.iter_mut().zip(b) {
                    *a += u8::from(c & !NO_CAST == l as u8);
                }
            }
            for ((s, n), &c) in shadow.iter_mut().zip(&mut no_cast).zip(b) {
                *s += u8::from(c & SHADOW_ONLY != 0 && c != CULLED);
                *n += u8::from(c & (SHADOW_ONLY | NO_CAST) == NO_CAST);
            }
        }
        let sum = |acc: &[u8; LANES]| acc.iter().map(|&a| u32::from(a)).sum::<u32>();
        for (count, acc) in counts.iter_mut().zip(&level[..levels]) {
            *count += sum(acc);
        }
        counts[levels] += sum(&shadow);
        counts[levels + 1] += sum(&no_cast);
        let rest = class_histogram(bytes.remainder(), levels);
        counts.iter_mut().zip(rest).for_each(|(c, r)| *c += r);
    }
    counts
}

/// [`count_classes`] by a histogram of the class bytes (four interleaved, so repeated classes do
/// not wait on each other's counts), folded.
fn class_histogram(classes: &[u8], levels: usize) -> Vec<u32> {
    let mut hist = [[0u32; 256]; 4];
    let mut quads = classes.chunks_exact(4);
    for q in &mut quads {
        for (h, &c) in hist.iter_mut().zip(q) {
            h[usize::from(c)] += 1;
        }
    }
    for &c in quads.remainder() {
        hist[0][usize::from(c)] += 1;
    }
    let mut counts = vec![0u32; levels + 2];
    for c in 0..=255u8 {
        let n: u32 = hist.iter().map(|h| h[usize::from(c)]).sum();
        if n == 0 || c == CULLED {
            continue;
        }
        if c & SHADOW_ONLY != 0 {
            counts[levels] += n;
        } else {
            counts[usize::from(c & LEVEL_BITS)] += n;
            counts[levels + 1] += if c & NO_CAST != 0 { n } else { 0 };
        }
    }
    counts
}

#[cfg(test)]
mod count_tests {
    use super::*;

    #[test]
    fn counting_by_comparisons_gives_the_histograms_counts() {
        let mut rng = crate::bake::skin_tests::Lcg(9);
        for levels in [1, 3, 8] {
            // Every kind of class, in runs longer and shorter than a counter's 255 x 32 bytes.
            for n in [0, 31, 33, 8160, 8161, 20_000] {
                let classes: Vec<u8> = (0..n)
                    .map(|_| {
                        let level = (rng.next() * levels as f32) as u8;
                        match (rng.next() * 4.0) as u32 {
                            0 => CULLED,
                            1 => SHADOW_ONLY | level,
                            2 => NO_CAST | level,
                            _ => level,
                        }
                    })
                    .collect();
                let want = class_histogram(&classes, levels);
                assert_eq!(
                    count_few_levels(&classes, levels),
                    want,
                    "{levels} levels, {n}"
                );
                assert_eq!(want.iter().sum::<u32>() as usize, {
                    let culled = classes.iter().filter(|&&c| c == CULLED).count();
                    let no_cast = classes.iter().filter(|&&c| c & 0xc0 == NO_CAST).count();
                    n - culled + no_cast
                });
            }
        }
    }
}
