//! The crowd frame's fast path: per-frame tables that decide most actors without trigonometry or
//! logarithms, with the same answers as the exact tests in `frame_classify`.
//!
//! **Culling.** An actor turned by any yaw stays inside its clip's *any-yaw box*: the clip's box
//! swept about +Y (half width `r`, the farthest horizontal corner's distance from the axis),
//! centred on the axis. For each (clip, plane) the table holds the plane distance of that box's
//! centre per unit of scale (`a`) and its reach toward the plane per unit of scale (`b`), so an
//! actor at `p` with scale `s` is `n·p - d + s·a` from the plane and reaches `s·b`. A box that
//! lies wholly beyond one plane contains the turned box, which lies beyond it too: culled. A box
//! wholly inside every plane: drawn. Only the actors near a plane (and cross-fading ones, whose
//! bounds are a union) take the exact, turned test.
//!
//! **Levels.** `LodCurve::value` is `log2(r) * slope + offset` of `r = distance * C / (D * s)`,
//! increasing in `distance / s` (the slope is positive). So `value + bias >= v` exactly when
//! `distance² >= (T_v · s)²` with `T_v = exp2((v - offset - bias) / slope) * D / C`: the table
//! holds `T_v²` for the integer boundaries and the hysteresis edges of each level.

use glam::Vec3;

use crate::bounds::Bounds;
use crate::half::unpack_half2;
use crate::layout::CLIP_CODE_BASE;
use crate::lod_distance::{LodCurve, HYSTERESIS, REFERENCE_IMAGE_HEIGHT};

use super::frame_classify::cross_fading;
use super::frame_input::{Projection, View};

/// What the fast test says of an actor's placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cull {
    /// Wholly inside the view.
    Inside,
    /// Wholly beyond a plane, even swept along every shadow direction: neither drawn nor casting.
    Gone,
    /// Near a plane, or beyond one but maybe casting a shadow in: take the exact test.
    Unsure,
}

/// Planes the fast path takes (Godot's frustum has six); padding planes never cull.
const LANES: usize = 8;
/// Shadowed directional lights the fast path takes; more send actors beyond a plane to the
/// exact test.
const MAX_SWEEPS: usize = 4;

/// Per-frame tables of the fast path.
#[derive(Debug, Default)]
pub(crate) struct FastFrame {
    /// Plane normals and offsets by lane (padding: zero normal, offset `f32::MAX`).
    nx: [f32; LANES],
    ny: [f32; LANES],
    nz: [f32; LANES],
    d: [f32; LANES],
    /// Per clip (then one more for clip indices past the table): per plane `a`, then `b`.
    clip_planes: Vec<[[f32; LANES]; 2]>,
    /// Per shadow sweep, per plane: `normal · sweep`.
    sweeps: Vec<[f32; LANES]>,
    /// The tables apply (at most [`LANES`] planes).
    usable: bool,
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
        self.usable = view.planes.len() <= LANES;
        if !self.usable {
            return false;
        }
        let mut normals = [Vec3::ZERO; LANES];
        self.d = [f32::MAX; LANES];
        for (k, pl) in view.planes.iter().enumerate() {
            normals[k] = pl.normal;
            self.d[k] = pl.d;
        }
        self.nx = normals.map(|n| n.x);
        self.ny = normals.map(|n| n.y);
        self.nz = normals.map(|n| n.z);
        self.sweeps.clear();
        self.sweeps.extend(
            view.shadow_sweeps
                .iter()
                .map(|&sweep| normals.map(|n| n.dot(sweep))),
        );
        let all = clip_bounds.iter().fold(Bounds::empty(), |a, b| a.union(b));
        self.clip_planes.clear();
        for b in clip_bounds.iter().chain(std::iter::once(&all)) {
            let (c, e) = (b.center(), b.size() * 0.5);
            let r = Vec3::new(c.x.abs() + e.x, 0.0, c.z.abs() + e.z).length();
            self.clip_planes.push([
                normals.map(|n| n.y * c.y),
                normals.map(|n| (n.x.abs() + n.z.abs()) * r + n.y.abs() * e.y),
            ]);
        }
        self.lod =
            lod.and_then(|(curve, diameter)| LodThresholds::new(curve, diameter, bias, top, view));
        true
    }

    /// The fast culling answer for an actor at `position` with scale `scale` playing clip `clip`
    /// (not cross-fading), in a crowd that casts shadows or not. `scale` must be positive and
    /// finite.
    #[inline]
    pub(crate) fn cull(&self, position: Vec3, scale: f32, clip: usize, casts: bool) -> Cull {
        let [a, b] = &self.clip_planes[clip.min(self.clip_planes.len() - 1)];
        let mut dist = [0.0f32; LANES];
        let mut reach = [0.0f32; LANES];
        let mut beyond = false;
        let mut inside = true;
        for k in 0..LANES {
            dist[k] = self.nx[k] * position.x + self.ny[k] * position.y + self.nz[k] * position.z
                - self.d[k]
                + scale * a[k];
            reach[k] = scale * b[k];
            beyond |= dist[k] > reach[k];
            inside &= dist[k] < -reach[k];
        }
        if inside {
            return Cull::Inside;
        }
        if !beyond {
            return Cull::Unsure;
        }
        // Beyond a plane. Gone unless some light's sweep may bring the box back into the view.
        if !casts || self.sweeps.is_empty() {
            return Cull::Gone;
        }
        if self.sweeps.len() > MAX_SWEEPS {
            return Cull::Unsure;
        }
        let swept_out = |sweep: &[f32; LANES]| {
            (0..LANES).any(|k| dist[k] > reach[k] && dist[k] + sweep[k] > reach[k])
        };
        if self.sweeps.iter().all(swept_out) {
            Cull::Gone
        } else {
            Cull::Unsure
        }
    }

    /// The level of an actor at `position` with scale `scale` (positive and finite) that had
    /// `previous` last frame, exactly as `pick_level(curve.value(..) + bias, previous, top)`
    /// decides up to float rounding at the boundaries; `None` without distance-based levels.
    #[inline]
    pub(crate) fn level(&self, position: Vec3, scale: f32, previous: Option<u8>) -> Option<u8> {
        let t = self.lod.as_ref()?;
        let q = t
            .fixed
            .unwrap_or_else(|| position.distance_squared(t.camera));
        let s2 = scale * scale;
        let top = (t.plain.len() - 1) as u8;
        let plain = (1..t.plain.len())
            .take_while(|&k| q >= t.plain[k] * s2)
            .count() as u8;
        Some(match previous {
            Some(p) if p <= top => {
                let [lo, hi] = t.keep[usize::from(p)];
                if q >= lo * s2 && (q < hi * s2 || p == top) {
                    p
                } else {
                    plain
                }
            }
            _ => plain,
        })
    }

    /// Whether levels come from the tables.
    pub(crate) fn has_lod(&self) -> bool {
        self.lod.is_some()
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

/// An actor's placement and state as the fast path reads them, from a yaw record: position,
/// scale and clip, or `None` when it needs the exact path (cross-fading, a scale that is not
/// positive and finite, a position that is not finite).
#[inline]
pub(crate) fn simple_actor(
    placement: &[f32],
    state: &[f32],
    time: f32,
) -> Option<(Vec3, f32, usize)> {
    let position = Vec3::new(placement[0], placement[1], placement[2]);
    let scale = unpack_half2(state[2]).1;
    let ok = !cross_fading(state, time)
        && scale > 0.0
        && scale.is_finite()
        && position.is_finite()
        && placement[3].is_finite();
    ok.then_some((position, scale, (state[1] as u32 % CLIP_CODE_BASE) as usize))
}
