//! The crowd frame's fast path: per-frame tables that decide most actors without trigonometry or
//! logarithms, with the same answers as the exact tests in `frame_classify`.
//!
//! **Culling.** An actor turned by any yaw stays inside its clip's *any-yaw box*: the clip's box
//! swept about +Y (half width `r`, the farthest horizontal corner's distance from the axis),
//! centred on the axis at height `c_y` and of half height `e_y`. An actor at `p` with scale `s`
//! has that box's centre `n·(p + s·c_y·Y) - d` from a plane, and the box reaches
//! `s·((|n_x| + |n_z|)·r + |n_y|·e_y)` toward it. A box that lies wholly beyond one plane contains
//! the turned box, which lies beyond it too: culled. A box wholly inside every plane: drawn. Only
//! the actors near a plane take the exact, turned test. A cross-fading actor's bounds are the
//! union of both clips' boxes: its any-yaw box comes from the union of their extents.
//!
//! **Shadows.** A box beyond a plane stays beyond it along a light's sweep (the exact test's
//! sweep: the box at both ends) when it is beyond by more than `max(0, -n·sweep)`: then, beyond
//! one plane for every sweep, it is culled. Where every clip's bounds hold the vertical axis
//! through the character's origin, an actor at any yaw holds its *core*: the segment on that axis
//! from its lowest to its highest point. If the core, at one end of a sweep, reaches back over
//! every plane, so does the turned box, and an actor beyond a plane casts into the view: it is
//! shadow-only. Between the two, the exact test decides.
//!
//! **Blocks.** The path runs over blocks of [`BLOCK`] actors. A block is first tested as one box,
//! the one that holds every actor's any-yaw box (of the union of all clips, at the block's
//! largest scale; [`BlockSpan`]): beyond a plane (and along each sweep) culls every actor of it,
//! and a plane it lies inside is one none of its actors need test. Both hold for each actor's own
//! box, which lies inside the block's.
//!
//! Each step of the path is one loop over the block (so the compiler vectorises it), and the
//! answers are chosen with selects rather than branches. On x86-64 with AVX2, FMA and F16C, whole
//! blocks of interleaved records take the same steps written with vector instructions
//! (`frame_fast_avx2`); its fused multiply-adds round differently, so the two may differ only
//! where a box touches a plane to the last bit.
//!
//! **Levels.** `LodCurve::value` is `log2(r) * slope + offset` of `r = distance * C / (D * s)`,
//! increasing in `distance / s` (the slope is positive). So `value + bias >= v` exactly when
//! `distance² >= (T_v · s)²` with `T_v = exp2((v - offset - bias) / slope) * D / C`: the table
//! holds `T_v²` for the integer boundaries and the hysteresis edges of each level.

use glam::Vec3;

use crate::bounds::Bounds;
use crate::half::{f16_to_f32, SoftHalf};
use crate::layout::CLIP_CODE_BASE;
use crate::lod_distance::{LodCurve, HYSTERESIS, REFERENCE_IMAGE_HEIGHT};

use super::frame_classify::Classifier;
#[cfg(target_arch = "x86_64")]
use super::frame_fast_lanes::fast_block_f16c;
use super::frame_fast_lanes::fast_block_lanes;
use super::frame_input::{Projection, View};

/// Planes the fast path takes (Godot's frustum has six).
pub(super) const LANES: usize = 8;
/// Shadowed directional lights the fast path takes; more send actors beyond a plane to the
/// exact test.
pub(super) const MAX_SWEEPS: usize = 4;
/// Actors per block: the fast path runs each of its steps over a whole block, so the compiler
/// turns the steps into vector instructions.
pub(super) const BLOCK: usize = 64;
/// Clip codes the fast path reads (`clip + CLIP_CODE_BASE * prev_clip` of two clip indices below
/// `CLIP_CODE_BASE`); a float past it is no code, and goes to the exact test.
pub(super) const MAX_CODE: f32 = (CLIP_CODE_BASE * CLIP_CODE_BASE) as f32;

/// Per-frame tables of the fast path.
#[derive(Debug, Default)]
pub(crate) struct FastFrame {
    /// The view's planes: normals, offsets, and `|n.x| + |n.z|` and `|n.y|` (the reach factors
    /// of an any-yaw box).
    pub(super) nx: [f32; LANES],
    pub(super) ny: [f32; LANES],
    pub(super) nz: [f32; LANES],
    pub(super) d: [f32; LANES],
    pub(super) horizontal: [f32; LANES],
    pub(super) vertical: [f32; LANES],
    /// How many of the lanes hold planes.
    pub(super) planes: usize,
    /// Per clip (then one more for clip indices past the table, the union of all clips): the
    /// any-yaw box's centre height, horizontal radius and half height, and the radius about the
    /// origin that holds the clip's bounds, all at scale 1 ([`any_yaw_row`] of `extents`).
    pub(super) clips: Vec<[f32; 4]>,
    /// The same clips' extents ([`extent_row`]), from which a cross-fade's union is made.
    pub(super) extents: Vec<[f32; 4]>,
    /// `clips` and `extents` eight rows at a time, one array per field ([`lanes_of`]), where
    /// they have at most 16 rows: the vector path reads them with permutes.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(super) clip_lanes: Vec<[[f32; 8]; 4]>,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(super) extent_lanes: Vec<[[f32; 8]; 4]>,
    /// Every clip's bounds hold the vertical axis through the character's origin, so an actor
    /// at any yaw holds the segment from its lowest to its highest point on that axis: its
    /// *core*, whose shadow proves the actor's (see [`SweepPolicy::lit_casts`]).
    axis_inside: bool,
    /// Per shadow sweep, per plane: `max(0, -normal · sweep)`. A box `dist` from the plane
    /// (reaching `reach` toward it) stays beyond it at both ends of the sweep exactly when
    /// `dist > reach + margin`, and some point of it reaches back over it at one end when
    /// `dist - reach <= margin`.
    pub(super) sweeps: Vec<[f32; LANES]>,
    /// Squared distance thresholds, when levels come from distance.
    pub(super) lod: Option<LodThresholds>,
}

/// Squared `T_v` of the module docs (see [`FastFrame`]).
#[derive(Debug, Default)]
pub(super) struct LodThresholds {
    /// `T²` at value `k`, for `k` in `0..=top` (index 0 unused).
    pub(super) plain: Vec<f32>,
    /// `T²` at `p - HYSTERESIS` and at `p + 1 + HYSTERESIS`, for each level `p` in `0..=top`.
    pub(super) keep: Vec<[f32; 2]>,
    /// `keep` as two arrays of 8 (the low edges, then the high), where there are at most 8
    /// levels: the vector path reads each lane's band with a permute.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(super) keep_lanes: Option<[[f32; 8]; 2]>,
    /// Squared distance used for every actor instead of its own (orthographic cameras).
    pub(super) fixed: Option<f32>,
    pub(super) camera: Vec3,
}

impl FastFrame {
    /// Prepares the tables for `view` over `clip_bounds`, with levels from `lod` (curve, diameter
    /// at scale 1) biased by `bias` up to `top`, unless `lod` is `None`. Returns whether the fast
    /// path applies (a view of at most eight planes).
    pub(crate) fn prepare(
        &mut self,
        view: &View,
        clip_bounds: &[Bounds],
        lod: Option<(LodCurve, f32)>,
        bias: f32,
        top: u8,
    ) -> bool {
        if view.planes.len() > LANES {
            return false;
        }
        self.planes = view.planes.len();
        let mut normals = [Vec3::ZERO; LANES];
        self.d = [0.0; LANES];
        for (k, pl) in view.planes.iter().enumerate() {
            normals[k] = pl.normal;
            self.d[k] = pl.d;
        }
        self.nx = normals.map(|n| n.x);
        self.ny = normals.map(|n| n.y);
        self.nz = normals.map(|n| n.z);
        self.horizontal = normals.map(|n| n.x.abs() + n.z.abs());
        self.vertical = normals.map(|n| n.y.abs());
        self.sweeps.clear();
        self.sweeps.extend(
            view.shadow_sweeps
                .iter()
                .map(|&sweep| normals.map(|n| (-n.dot(sweep)).max(0.0))),
        );
        let all = clip_bounds.iter().fold(Bounds::empty(), |a, b| a.union(b));
        self.extents.clear();
        self.extents.extend(
            clip_bounds
                .iter()
                .chain(std::iter::once(&all))
                .map(extent_row),
        );
        self.clips.clear();
        self.clips
            .extend(self.extents.iter().map(|&row| any_yaw_row(row)));
        lanes_of(&self.clips, &mut self.clip_lanes);
        lanes_of(&self.extents, &mut self.extent_lanes);
        self.axis_inside = clip_bounds.iter().chain(std::iter::once(&all)).all(|b| {
            b.min.x <= 0.0
                && b.max.x >= 0.0
                && b.min.z <= 0.0
                && b.max.z >= 0.0
                && b.min.y <= b.max.y
        });
        self.lod =
            lod.and_then(|(curve, diameter)| LodThresholds::new(curve, diameter, bias, top, view));
        true
    }
}

/// A clip's extents as the fast path keeps them: lowest and highest `y`, and the largest `|x|`
/// and `|z|` of its bounds. The union of two clips' bounds has the lane-wise min, max, max, max
/// of their rows ([`union_row`]).
fn extent_row(b: &Bounds) -> [f32; 4] {
    [
        b.min.y,
        b.max.y,
        b.min.x.abs().max(b.max.x.abs()),
        b.min.z.abs().max(b.max.z.abs()),
    ]
}

/// Fills `lanes` with `rows` eight at a time, one array per field (missing rows 0), when there are
/// at most 16 rows; else leaves it empty.
fn lanes_of(rows: &[[f32; 4]], lanes: &mut Vec<[[f32; 8]; 4]>) {
    lanes.clear();
    if rows.len() <= 16 {
        lanes.extend(rows.chunks(8).map(|chunk| {
            std::array::from_fn(|k| std::array::from_fn(|j| chunk.get(j).map_or(0.0, |r| r[k])))
        }));
    }
}

/// The extents of the union of two clips' bounds (see [`extent_row`]).
#[inline(always)]
pub(super) fn union_row(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    [
        a[0].min(b[0]),
        a[1].max(b[1]),
        a[2].max(b[2]),
        a[3].max(b[3]),
    ]
}

/// The any-yaw box of extents (see the module docs), at scale 1: centre height, horizontal
/// radius, half height, and the radius about the origin that holds the bounds (as
/// `bounds_radius` computes it: `|(max |x|, max |y|, max |z|)|`).
#[inline(always)]
pub(super) fn any_yaw_row([lo, hi, ax, az]: [f32; 4]) -> [f32; 4] {
    let ay = lo.abs().max(hi.abs());
    [
        (lo + hi) * 0.5,
        (ax * ax + az * az).sqrt(),
        (hi - lo) * 0.5,
        (ax * ax + ay * ay + az * az).sqrt(),
    ]
}

/// Classifies the actors from `first` (one per byte of `classes`, all with whole records)
/// through the fast path, block by block ([`BLOCK`] actors, the last one maybe fewer), in place
/// over their classes of last frame. `exact(i, last)` gives the class of each actor `i` the path
/// leaves undecided (its class of last frame `last`).
pub(super) fn fast_blocks(
    c: &Classifier,
    fast: &FastFrame,
    first: usize,
    classes: &mut [u8],
    mut exact: impl FnMut(usize, u8) -> u8,
) {
    let mut finish = |at: usize, chunk: &mut [u8], mut undecided: u64| {
        while undecided != 0 {
            let j = undecided.trailing_zeros() as usize;
            chunk[j] = exact(at + j, chunk[j]);
            undecided &= undecided - 1;
        }
    };
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("f16c")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the CPU has AVX2, FMA and F16C (checked just above).
        unsafe { super::frame_fast_avx2::blocks(c, fast, first, classes, &mut finish) };
        return;
    }
    for (b, chunk) in classes.chunks_mut(BLOCK).enumerate() {
        let at = first + b * BLOCK;
        let undecided = portable_block(c, fast, at, chunk);
        finish(at, chunk, undecided);
    }
}

/// One block through the portable loops, compiled for AVX2 and F16C where the CPU has them.
fn portable_block(c: &Classifier, fast: &FastFrame, first: usize, classes: &mut [u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c") {
        // SAFETY: the CPU has AVX2 and F16C (checked just above).
        return unsafe { fast_block_f16c(c, fast, first, classes) };
    }
    fast_block_lanes::<SoftHalf>(c, fast, first, classes)
}

/// What one block's actors span: the lowest and highest position, and the lowest and highest
/// scale, over actors that all have finite placements, a clip code and a positive finite scale.
#[derive(Debug, Clone, Copy)]
pub(super) struct BlockSpan {
    pub(super) min: Vec3,
    pub(super) max: Vec3,
    pub(super) scale: [f32; 2],
}

impl BlockSpan {
    /// The span of a block of interleaved records (8 floats per actor), or `None`.
    pub(super) fn of(records: &[f32; BLOCK * 8]) -> Option<Self> {
        let (mut low, mut high) = ([f32::INFINITY; 8], [f32::NEG_INFINITY; 8]);
        let mut sums = [0.0f32; 8];
        for r in records.chunks_exact(8) {
            for f in 0..8 {
                low[f] = low[f].min(r[f]);
                high[f] = high[f].max(r[f]);
                sums[f] += r[f] * 0.0;
            }
        }
        Self::from_fields(low, high, sums)
    }

    /// The span from each record field's lowest and highest value over the block and the sum of
    /// `field * 0` (0 exactly when every value is finite), or `None` where some actor would
    /// take the exact test: a placement or clip code that is not finite, a code out of range,
    /// a scale that is not positive and finite.
    pub(super) fn from_fields(low: [f32; 8], high: [f32; 8], sums: [f32; 8]) -> Option<Self> {
        // Placement x, y, z, yaw; the clip code; the float whose high half is the scale (its bits
        // order as the scale's, and it is finite while the scale is).
        let finite = [0, 1, 2, 3, 5, 6].iter().all(|&f| sums[f] == 0.0);
        let code = low[5] >= 0.0 && high[5] < MAX_CODE;
        let scale = low[6] >= f32::from_bits(1 << 16) && high[6] < f32::from_bits(0x7c00 << 16);
        (finite && code && scale).then(|| BlockSpan {
            min: Vec3::new(low[0], low[1], low[2]),
            max: Vec3::new(high[0], high[1], high[2]),
            scale: [low[6], high[6]].map(|s| f16_to_f32((s.to_bits() >> 16) as u16)),
        })
    }
}

/// The planes each actor of a block must be tested against (the others hold the whole block
/// inside them), or that every actor of it is culled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum BlockPlanes {
    Culled,
    Test { planes: [u8; LANES], count: usize },
}

impl FastFrame {
    /// The planes of a block of interleaved `records` (see [`FastFrame::block_planes`]) under
    /// this frame's `policy`, or every plane where the block cannot be tested as one (or nothing
    /// is culled).
    pub(super) fn planes_of_block(
        &self,
        policy: &SweepPolicy,
        culling: bool,
        records: Option<&[f32; BLOCK * 8]>,
        span: impl FnOnce(&[f32; BLOCK * 8]) -> Option<BlockSpan>,
    ) -> BlockPlanes {
        let every = BlockPlanes::Test {
            planes: std::array::from_fn(|k| k as u8),
            count: self.planes,
        };
        match records.filter(|_| culling).and_then(span) {
            Some(span) => self.block_planes(policy, &span),
            None => every,
        }
    }
}

impl FastFrame {
    /// Tests the box that holds every actor of a block (its span, each actor's any-yaw box of
    /// the union of all clips at the largest scale) against the view: wholly beyond a plane (and
    /// along each shadow sweep, as an actor's own test) culls them all, wholly inside a plane
    /// spares each actor that plane's test. Either holds for each actor's own box, which lies
    /// inside the block's.
    pub(super) fn block_planes(&self, policy: &SweepPolicy, span: &BlockSpan) -> BlockPlanes {
        let table = self.extents.len() - 1;
        let [lo, hi, _, _] = self.extents[table];
        let across = self.clips[table][1] * span.scale[1];
        let [s0, s1] = span.scale;
        let y_lo = span.min.y + (s0 * lo).min(s1 * lo);
        let y_hi = span.max.y + (s0 * hi).max(s1 * hi);
        let centre = Vec3::new(
            (span.min.x + span.max.x) * 0.5,
            (y_lo + y_hi) * 0.5,
            (span.min.z + span.max.z) * 0.5,
        );
        let half = Vec3::new(
            (span.max.x - span.min.x) * 0.5 + across,
            (y_hi - y_lo) * 0.5,
            (span.max.z - span.min.z) * 0.5 + across,
        );
        let (mut planes, mut count) = ([0u8; LANES], 0);
        let mut beyond = false;
        let mut swept_out = [false; MAX_SWEEPS];
        for k in 0..self.planes {
            let n = Vec3::new(self.nx[k], self.ny[k], self.nz[k]);
            let dist = n.dot(centre) - self.d[k];
            let reach = n.abs().dot(half);
            if dist < -reach {
                continue;
            }
            planes[count] = k as u8;
            count += 1;
            beyond |= dist > reach;
            for (sweep, out) in policy.sweeps.iter().zip(&mut swept_out) {
                *out |= dist > reach + sweep[k];
            }
        }
        let gone = policy.gone_any
            || (policy.gone_swept && swept_out[..policy.sweeps.len()].iter().all(|&o| o));
        if beyond && gone {
            BlockPlanes::Culled
        } else {
            BlockPlanes::Test { planes, count }
        }
    }
}

/// How the culling step uses the shadowed directional lights' sweeps this frame.
pub(super) struct SweepPolicy<'a> {
    /// The sweeps it tests (none where being beyond a plane is enough, or where there are more
    /// than the path takes).
    pub(super) sweeps: &'a [[f32; LANES]],
    /// An actor whose box lies wholly beyond a plane is gone (no shadows, or no shadowed light).
    pub(super) gone_any: bool,
    /// ... is gone when it stays beyond one plane along each sweep (no omni or spot light's
    /// shadow reaches the view, which only the exact test tells).
    pub(super) gone_swept: bool,
    /// ... casts a shadow into the view (shadow-only) when its clip's vertical core, swept by
    /// one light, reaches back over every plane (every clip's bounds hold the vertical axis).
    pub(super) lit_casts: bool,
}

impl FastFrame {
    /// This frame's [`SweepPolicy`].
    pub(super) fn sweep_policy(&self, c: &Classifier) -> SweepPolicy<'_> {
        if !c.settings.cast_shadows {
            return SweepPolicy {
                sweeps: &[],
                gone_any: true,
                gone_swept: false,
                lit_casts: false,
            };
        }
        let no_spheres = c.spheres.is_empty();
        let fits = !self.sweeps.is_empty() && self.sweeps.len() <= MAX_SWEEPS;
        SweepPolicy {
            sweeps: if fits { &self.sweeps } else { &[] },
            gone_any: self.sweeps.is_empty() && no_spheres,
            gone_swept: fits && no_spheres,
            lit_casts: fits && self.axis_inside,
        }
    }
}

impl LodThresholds {
    fn new(curve: LodCurve, diameter: f32, bias: f32, top: u8, view: &View) -> Option<Self> {
        if !(curve.slope > 0.0 && curve.slope.is_finite() && diameter > 0.0 && bias.is_finite()) {
            return None;
        }
        let (c, fixed) = match view.projection {
            Projection::Perspective { screen_constant } => (screen_constant, None),
            Projection::Orthographic { height } => {
                (1.0 / REFERENCE_IMAGE_HEIGHT, Some(height * height))
            }
        };
        if !(c > 0.0 && c.is_finite()) || fixed.is_some_and(|f| !f.is_finite()) {
            return None;
        }
        let t2 = |v: f32| {
            let t = ((v - curve.offset - bias) / curve.slope).exp2() * diameter / c;
            t * t
        };
        let plain = (0..=top).map(|k| t2(f32::from(k))).collect();
        let keep = (0..=top)
            .map(|p| {
                let p = f32::from(p);
                [t2(p - HYSTERESIS), t2(p + 1.0 + HYSTERESIS)]
            })
            .collect();
        let keep: Vec<[f32; 2]> = keep;
        let keep_lanes = (keep.len() <= 8).then(|| {
            std::array::from_fn(|e| std::array::from_fn(|p| keep.get(p).map_or(0.0, |b| b[e])))
        });
        Some(Self {
            plain,
            keep,
            keep_lanes,
            fixed,
            camera: view.camera,
        })
    }
}
