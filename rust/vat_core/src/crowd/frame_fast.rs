//! The crowd frame's fast path: per-frame tables that decide most actors without trigonometry or
//! logarithms, with the same answers as the exact tests in `frame_classify`.
//!
//! **Culling.** An actor turned by any yaw stays inside its clip's *any-yaw box*: the clip's box
//! swept about +Y (half width `r`, the farthest horizontal corner's distance from the axis),
//! centred on the axis at height `c_y` and of half height `e_y`. An actor at `p` with scale `s`
//! has that box's centre `n·(p + s·c_y·Y) - d` from a plane, and the box reaches
//! `s·((|n_x| + |n_z|)·r + |n_y|·e_y)` toward it. A box that lies wholly beyond one plane contains
//! the turned box, which lies beyond it too: culled. A box wholly inside every plane: drawn. Only
//! the actors near a plane (and cross-fading ones, whose bounds are a union) take the exact,
//! turned test.
//!
//! The path runs over blocks of [`BLOCK`] actors, each step one loop over the block (so the
//! compiler vectorises it), and the answers are chosen with selects rather than branches.
//!
//! **Levels.** `LodCurve::value` is `log2(r) * slope + offset` of `r = distance * C / (D * s)`,
//! increasing in `distance / s` (the slope is positive). So `value + bias >= v` exactly when
//! `distance² >= (T_v · s)²` with `T_v = exp2((v - offset - bias) / slope) * D / C`: the table
//! holds `T_v²` for the integer boundaries and the hysteresis edges of each level.

use glam::Vec3;

use crate::bounds::Bounds;
#[cfg(target_arch = "x86_64")]
use crate::half::F16c;
use crate::half::{HalfLanes, SoftHalf};
use crate::layout::CLIP_CODE_BASE;
use crate::lod_distance::{LodCurve, HYSTERESIS, REFERENCE_IMAGE_HEIGHT};

use super::frame::{CULLED, LEVEL_BITS, NO_CAST};
use super::frame_classify::{bounds_radius, shadow_near, still_fading, Classifier};
use super::frame_input::{Projection, View};

/// Planes the fast path takes (Godot's frustum has six).
const LANES: usize = 8;
/// Shadowed directional lights the fast path takes; more send actors beyond a plane to the
/// exact test.
const MAX_SWEEPS: usize = 4;
/// Actors per block: the fast path runs each of its steps over a whole block, so the compiler
/// turns the steps into vector instructions.
pub(super) const BLOCK: usize = 64;
/// Clip codes the fast path reads (`clip + CLIP_CODE_BASE * prev_clip` of two clip indices below
/// `CLIP_CODE_BASE`); a float past it is no code, and goes to the exact test.
const MAX_CODE: f32 = (CLIP_CODE_BASE * CLIP_CODE_BASE) as f32;

/// Per-frame tables of the fast path.
#[derive(Debug, Default)]
pub(crate) struct FastFrame {
    /// The view's planes: normals, offsets, and `|n.x| + |n.z|` and `|n.y|` (the reach factors
    /// of an any-yaw box).
    nx: [f32; LANES],
    ny: [f32; LANES],
    nz: [f32; LANES],
    d: [f32; LANES],
    horizontal: [f32; LANES],
    vertical: [f32; LANES],
    /// How many of the lanes hold planes.
    planes: usize,
    /// Per clip (then one more for clip indices past the table, the union of all clips): the
    /// any-yaw box's centre height, horizontal radius and half height, and the radius about the
    /// origin that holds the clip's bounds (NaN for the union: such actors take the exact test
    /// where the radius matters), all at scale 1.
    clips: Vec<[f32; 4]>,
    /// Per shadow sweep, per plane: `normal · sweep`.
    sweeps: Vec<[f32; LANES]>,
    /// Squared distance thresholds, when levels come from distance.
    lod: Option<LodThresholds>,
}

/// Squared `T_v` of the module docs (see [`FastFrame`]).
#[derive(Debug, Default)]
struct LodThresholds {
    /// `T²` at value `k`, for `k` in `0..=top` (index 0 unused).
    plain: Vec<f32>,
    /// `T²` at `p - HYSTERESIS` and at `p + 1 + HYSTERESIS`, for each level `p` in `0..=top`.
    keep: Vec<[f32; 2]>,
    /// Squared distance used for every actor instead of its own (orthographic cameras).
    fixed: Option<f32>,
    camera: Vec3,
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
                .map(|&sweep| normals.map(|n| n.dot(sweep))),
        );
        let all = clip_bounds.iter().fold(Bounds::empty(), |a, b| a.union(b));
        self.clips.clear();
        for (k, b) in clip_bounds.iter().chain(std::iter::once(&all)).enumerate() {
            let (c, e) = (b.center(), b.size() * 0.5);
            let r = Vec3::new(c.x.abs() + e.x, 0.0, c.z.abs() + e.z).length();
            let radius = if k < clip_bounds.len() {
                bounds_radius(b)
            } else {
                f32::NAN
            };
            self.clips.push([c.y, r, e.y, radius]);
        }
        self.lod =
            lod.and_then(|(curve, diameter)| LodThresholds::new(curve, diameter, bias, top, view));
        true
    }
}

/// Classifies the block of `prev.len()` (at most [`BLOCK`]) actors from `first` through the
/// fast path: `out[j]` gets actor `first + j`'s class where `decided[j]` comes back true; the
/// others need the exact test. `prev` holds their classes of last frame. Every actor of the block
/// must have whole records.
pub(super) fn fast_block(
    c: &Classifier,
    fast: &FastFrame,
    first: usize,
    prev: &[u8],
    out: &mut [u8; BLOCK],
    decided: &mut [bool; BLOCK],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c") {
        // SAFETY: the CPU has AVX2 and F16C (checked just above).
        unsafe { fast_block_f16c(c, fast, first, prev, out, decided) };
        return;
    }
    fast_block_lanes::<SoftHalf>(c, fast, first, prev, out, decided);
}

/// [`fast_block_lanes`] compiled for 8-lane vectors with the F16C conversions (the same bits as
/// the software's), so the same answers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
fn fast_block_f16c(
    c: &Classifier,
    fast: &FastFrame,
    first: usize,
    prev: &[u8],
    out: &mut [u8; BLOCK],
    decided: &mut [bool; BLOCK],
) {
    fast_block_lanes::<F16c>(c, fast, first, prev, out, decided);
}

/// The fast path over one block, in steps that each run over every lane: read the records,
/// test the frustum's planes (and the shadow sweeps where some actor lies beyond a plane), the
/// shadow reach and the level thresholds, then choose each lane's answer with selects.
#[inline(always)]
pub(super) fn fast_block_lanes<H: HalfLanes>(
    c: &Classifier,
    fast: &FastFrame,
    first: usize,
    prev: &[u8],
    out: &mut [u8; BLOCK],
    decided: &mut [bool; BLOCK],
) {
    let n = prev.len().min(BLOCK);
    let a = c.actors;
    let s = c.settings;
    let mut x = [0.0f32; BLOCK];
    let mut y = [0.0f32; BLOCK];
    let mut z = [0.0f32; BLOCK];
    let mut finite = [false; BLOCK];
    let mut start = [0.0f32; BLOCK];
    let mut code = [0.0f32; BLOCK];
    let mut scale_bits = [0u16; BLOCK];
    let mut blend_bits = [0u16; BLOCK];
    let mut last = [CULLED; BLOCK];
    let (ps, ss) = (a.placement_stride, a.state_stride);
    let mut read = |j: usize, p: &[f32; 4], st: &[f32; 4]| {
        (x[j], y[j], z[j]) = (p[0], p[1], p[2]);
        finite[j] = p[0].is_finite() & p[1].is_finite() & p[2].is_finite() & p[3].is_finite();
        (start[j], code[j]) = (st[0], st[1]);
        scale_bits[j] = (st[2].to_bits() >> 16) as u16;
        blend_bits[j] = (st[3].to_bits() >> 16) as u16;
    };
    let interleaved = ps == 8
        && ss == 8
        && a.placements
            .get(4..)
            .is_some_and(|rest| std::ptr::eq(a.states.as_ptr(), rest.as_ptr()));
    if interleaved && n == BLOCK {
        // Today's records (placement then state, 8 floats): whole records of a whole block, so
        // the reads go without per-actor bounds checks.
        let block: &[f32; BLOCK * 8] = a.placements[first * 8..(first + BLOCK) * 8]
            .try_into()
            .expect("a whole block of records");
        for j in 0..BLOCK {
            let r = &block[j * 8..j * 8 + 8];
            read(j, r[..4].try_into().unwrap(), r[4..].try_into().unwrap());
        }
    } else {
        let placements = a.placements[first * ps..].chunks(ps);
        let states = a.states[first * ss..].chunks(ss);
        for (j, (p, st)) in placements.zip(states).take(n).enumerate() {
            read(j, p[..4].try_into().unwrap(), st[..4].try_into().unwrap());
        }
    }
    last[..n].copy_from_slice(&prev[..n]);
    let scale = H::to_f32(&scale_bits);
    let blend = H::to_f32(&blend_bits);

    // What the lanes' clips say: the any-yaw box (placed and scaled) and its radius.
    let table = fast.clips.len() - 1;
    let mut ok = [false; BLOCK];
    let mut centre_y = [0.0f32; BLOCK];
    let mut across = [0.0f32; BLOCK];
    let mut up = [0.0f32; BLOCK];
    let mut radius = [0.0f32; BLOCK];
    let mut index = [0u32; BLOCK];
    for j in 0..BLOCK {
        // Codes are below 2^24 (`MAX_CODE`); others take the exact test.
        let valid = (code[j] >= 0.0) & (code[j] < MAX_CODE);
        index[j] = (code[j] as i32 as u32 % CLIP_CODE_BASE).min(table as u32);
        let fading = still_fading(blend[j], start[j], s.time);
        let sc = scale[j];
        ok[j] = (j < n) & valid & finite[j] & !fading & (sc > 0.0) & sc.is_finite();
    }
    // The table lookups alone, so the steps around them vectorise.
    let mut row = [[0.0f32; 4]; BLOCK];
    for j in 0..BLOCK {
        row[j] = fast.clips[index[j] as usize];
    }
    for j in 0..BLOCK {
        let [cy, r, ey, rad] = row[j];
        let sc = scale[j];
        centre_y[j] = y[j] + sc * cy;
        across[j] = sc * r;
        up[j] = sc * ey;
        radius[j] = rad * sc;
    }

    // The frustum: wholly inside every plane, or wholly beyond one.
    let mut inside = [true; BLOCK];
    let mut beyond = [false; BLOCK];
    let mut culled = [false; BLOCK];
    if s.culling {
        // Beyond a plane: gone, unless a light's sweep may bring the box back into the view
        // (or an omni or spot light's shadow may: only the exact test tells). Per sweep, whether
        // the box stays beyond one plane at both ends of it.
        let casts = s.cast_shadows;
        let gone_any = !casts || fast.sweeps.is_empty();
        let sweeps_ok = fast.sweeps.len() <= MAX_SWEEPS;
        let sweeps = if gone_any || !sweeps_ok {
            &[][..]
        } else {
            &fast.sweeps[..]
        };
        let mut swept_out = [[false; BLOCK]; MAX_SWEEPS];
        for k in 0..fast.planes {
            let (nx, ny, nz, d) = (fast.nx[k], fast.ny[k], fast.nz[k], fast.d[k]);
            let (h, v) = (fast.horizontal[k], fast.vertical[k]);
            let mut dist = [0.0f32; BLOCK];
            let mut reach = [0.0f32; BLOCK];
            for j in 0..BLOCK {
                let dk = nx * x[j] + ny * centre_y[j] + nz * z[j] - d;
                let rk = h * across[j] + v * up[j];
                dist[j] = dk;
                reach[j] = rk;
                beyond[j] |= dk > rk;
                inside[j] &= dk < -rk;
            }
            for (sweep, out) in sweeps.iter().zip(&mut swept_out) {
                let along = sweep[k];
                for j in 0..BLOCK {
                    out[j] |= (dist[j] > reach[j]) & (dist[j] + along > reach[j]);
                }
            }
        }
        let mut all_out = [true; BLOCK];
        for out in &swept_out[..sweeps.len()] {
            for j in 0..BLOCK {
                all_out[j] &= out[j];
            }
        }
        let spheres = casts && !c.spheres.is_empty();
        for j in 0..BLOCK {
            let gone = gone_any | (sweeps_ok & all_out[j]);
            culled[j] = !inside[j] & beyond[j] & gone & !spheres;
        }
    }
    let in_view = |j: usize| !s.culling | inside[j];

    // The shadow reach: an actor in the view whose shadow cannot come near the camera casts
    // none (the exact test's own `shadow_near`).
    let mut flag = [0u8; BLOCK];
    if let (true, Some(lights), Some(view)) = (s.culling, c.reach, c.view) {
        let mut near = [false; BLOCK];
        for &(travel, limit) in lights {
            for j in 0..BLOCK {
                let centre = Vec3::new(x[j], y[j], z[j]);
                near[j] |= shadow_near(travel, limit, view.camera, centre, radius[j]);
            }
        }
        for j in 0..BLOCK {
            // A clip past the table has no radius: the exact test decides.
            ok[j] &= !radius[j].is_nan();
            flag[j] = if near[j] { 0 } else { NO_CAST };
        }
    }

    // The level.
    let mut level = [0u8; BLOCK];
    let level_known = match &fast.lod {
        Some(t) => {
            level_lanes(t, &x, &y, &z, &scale, &last, c.top, &mut level);
            true
        }
        None => c.shape.lod.is_none(),
    };

    for j in 0..BLOCK {
        let shown = in_view(j);
        decided[j] = ok[j] & (culled[j] | (shown & level_known));
        out[j] = if culled[j] {
            CULLED
        } else {
            level[j] | flag[j]
        };
    }
}

/// The levels of a block (see [`LodThresholds`]): the plain level from the thresholds, kept at
/// last frame's while within its hysteresis band, exactly as `pick_level` up to float rounding at
/// the boundaries.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn level_lanes(
    t: &LodThresholds,
    x: &[f32; BLOCK],
    y: &[f32; BLOCK],
    z: &[f32; BLOCK],
    scale: &[f32; BLOCK],
    last: &[u8; BLOCK],
    top: u8,
    level: &mut [u8; BLOCK],
) {
    let mut q = [0.0f32; BLOCK];
    let mut s2 = [0.0f32; BLOCK];
    for j in 0..BLOCK {
        let (dx, dy, dz) = (x[j] - t.camera.x, y[j] - t.camera.y, z[j] - t.camera.z);
        q[j] = t.fixed.unwrap_or(dx * dx + dy * dy + dz * dz);
        s2[j] = scale[j] * scale[j];
    }
    let mut plain = [0u8; BLOCK];
    let mut run = [true; BLOCK];
    for &tk in &t.plain[1..] {
        for j in 0..BLOCK {
            run[j] &= q[j] >= tk * s2[j];
            plain[j] += u8::from(run[j]);
        }
    }
    let table_top = (t.plain.len() - 1) as u8;
    debug_assert_eq!(table_top, top);
    // Last frame's level where it is still inside its band (one pass per level, with selects,
    // rather than a table lookup per lane).
    let mut kept = [false; BLOCK];
    for (p, &[lo, hi]) in (0u8..).zip(&t.keep) {
        let open_top = p == table_top;
        for j in 0..BLOCK {
            let had = last[j] != CULLED && last[j] & LEVEL_BITS == p;
            kept[j] |= had & (q[j] >= lo * s2[j]) & ((q[j] < hi * s2[j]) | open_top);
        }
    }
    for j in 0..BLOCK {
        level[j] = if kept[j] {
            last[j] & LEVEL_BITS
        } else {
            plain[j]
        };
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
        Some(Self {
            plain,
            keep,
            fixed,
            camera: view.camera,
        })
    }
}
