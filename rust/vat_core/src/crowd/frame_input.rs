//! The crowd frame's inputs: the camera ([`View`], its frustum [`Plane`]s and [`Projection`]),
//! what the crowd node's properties ask ([`FrameSettings`]), what the frame knows of the
//! character ([`CrowdShape`]) and where it reads each actor's records ([`Actors`]), with the
//! queries the classification asks of them (which lights limit the shadows, an actor's size and
//! placed box).

use glam::Vec3;

use crate::bounds::Bounds;
use crate::crowd::recent::unpack_yaw_slot;
use crate::half::unpack_half2;
use crate::lod_distance::LodCurve;

use super::frame_fast::BLOCK;

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
    pub(super) fn reach_limits(&self) -> Option<Vec<(Vec3, f32)>> {
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
    pub(super) fn spheres_in_view(&self) -> Vec<(Vec3, f32)> {
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
    /// The placements' fourth float is the placement texture's packed yaw and recent-state slot
    /// ([`crate::crowd::pack_yaw_slot`]), not radians.
    pub packed_yaw: bool,
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
            packed_yaw: false,
            count,
        }
    }

    /// Actors whose placements are the placement texture's texels (4 floats each, the yaw packed
    /// with the recent-state slot: see [`crate::crowd::RecentStates::move_actors`]) and whose
    /// states are those of the yaw-and-scale `records` (8 floats each, state at 4; their
    /// placements are not read, so they may be behind the texture's). The frame sees the yaw the
    /// texture quantised, which is what is drawn.
    pub fn texels_and_records(texels: &'a [f32], records: &'a [f32], count: usize) -> Self {
        Actors {
            placements: texels,
            placement_stride: 4,
            basis_at: None,
            states: records.get(4..).unwrap_or(&[]),
            state_stride: 8,
            packed_yaw: true,
            count,
        }
    }

    /// An actor's yaw in radians from its placement's fourth float `w`.
    fn yaw(&self, w: f32) -> f32 {
        if self.packed_yaw {
            unpack_yaw_slot(w).0
        } else {
            w
        }
    }

    /// How many actors from the first have whole placement and state records.
    pub(super) fn whole(&self) -> usize {
        let records = |floats: &[f32], stride: usize| {
            if floats.len() < 4 || stride == 0 {
                0
            } else {
                (floats.len() - 4) / stride + 1
            }
        };
        self.count
            .min(records(self.placements, self.placement_stride))
            .min(records(self.states, self.state_stride))
    }

    /// Actor `i`'s scale as the LOD formula takes it: its uniform scale, or its basis' longest
    /// column.
    pub(super) fn size(&self, i: usize) -> Option<f32> {
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
    pub(super) fn placed_box(
        &self,
        i: usize,
        b: &Bounds,
        any_yaw: bool,
    ) -> Option<(Vec3, Vec3, f32)> {
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
                let (sin, cos) = self.yaw(p[3]).sin_cos();
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

/// The records of the whole block of interleaved records (placement then state, 8 floats each)
/// from `first`, when the actors are stored that way and the block is whole.
pub(super) fn interleaved_block<'a>(
    a: &Actors<'a>,
    first: usize,
    n: usize,
) -> Option<&'a [f32; BLOCK * 8]> {
    let interleaved = a.placement_stride == 8
        && a.state_stride == 8
        && a.placements
            .get(4..)
            .is_some_and(|rest| std::ptr::eq(a.states.as_ptr(), rest.as_ptr()));
    if !interleaved || n != BLOCK {
        return None;
    }
    a.placements
        .get(first * 8..(first + BLOCK) * 8)?
        .try_into()
        .ok()
}

/// The whole block from `first` as interleaved records: the records themselves
/// ([`interleaved_block`]), or for placements and states kept apart (yaw and scale, such as the
/// placement texture's texels with the records' states) both copied into `buf`, one record per
/// actor as the fast path reads them. A packed yaw is a finite float as a yaw is, and the fast
/// path reads nothing else of it. `None` for a block that is not whole or full transforms.
pub(super) fn block_records<'b>(
    a: &Actors<'b>,
    first: usize,
    n: usize,
    buf: &'b mut [f32; BLOCK * 8],
) -> Option<&'b [f32; BLOCK * 8]> {
    if let Some(records) = interleaved_block(a, first, n) {
        return Some(records);
    }
    let (ps, ss) = (a.placement_stride, a.state_stride);
    if n != BLOCK || a.basis_at.is_some() || ps < 4 || ss < 4 {
        return None;
    }
    let placements = a.placements.get(first * ps..(first + BLOCK - 1) * ps + 4)?;
    let states = a.states.get(first * ss..(first + BLOCK - 1) * ss + 4)?;
    for (j, r) in buf.chunks_exact_mut(8).enumerate() {
        r[..4].copy_from_slice(&placements[j * ps..j * ps + 4]);
        r[4..].copy_from_slice(&states[j * ss..j * ss + 4]);
    }
    Some(buf)
}
