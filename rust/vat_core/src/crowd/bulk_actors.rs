//! Bulk packers that place actors: from a position and a yaw each ([`pack_actors_bulk`]) or from
//! a 3x4 transform each in `MultiMesh.buffer`'s layout ([`pack_actor_transforms_bulk`]), with
//! their shared validation, the record heads they write and the bounds (and basis stretch) they
//! report. They split their work as every bulk call does (see `bulk`).

use glam::Vec3;

use crate::bounds::Bounds;
use crate::crowd::bulk::{all_finite, Split, PARALLEL_MIN_ITEMS};
use crate::crowd::records::{
    clip_code, pack_basis, record_floats, yaw_basis, ACTOR_FLOATS, ACTOR_FLOATS_FULL,
};
use crate::crowd::validate;
use crate::error::{check_len, Result, VatError};
use crate::half::pack_half2;
use crate::layout::MAX_CLIPS;

/// How [`pack_actors_bulk`] checks and stores its actors.
#[derive(Debug, Clone, Copy, Default)]
pub struct BulkOptions {
    /// Clips of the crowd's models: clip indices must be below it.
    pub n_clips: u32,
    /// The crowd clock's rebased origin, subtracted from every start time.
    pub time_origin: f32,
    /// Write full-transform records (16 floats, the yaw as a basis) instead of 8 floats.
    pub full_transform: bool,
}

/// Packs `positions.len()` actors into `out` (8 floats each, or 16 with `full_transform`: the yaw
/// as a basis) with speed 1, scale 1, no blend,
/// `prev_clip = clip`; `clips` / `start_times` default to 0. Start times are stored less
/// `options.time_origin` (the crowd clock's rebased origin, see [`crate::clock`]). Returns the bounds of
/// the positions. Parallel from [`PARALLEL_MIN_ITEMS`] actors.
///
/// Errors: [`VatError::BadLength`] if `out` or an array does not match the actor count;
/// [`VatError::IndexOutOfRange`] for a clip outside `0..options.n_clips`; [`VatError::NonFinite`] for a
/// position or yaw; [`VatError::BadValue`] for a start time outside [`validate::crowd_time`]'s rule. The lowest offending actor is reported, and `out` is untouched.
pub fn pack_actors_bulk(
    out: &mut [f32],
    positions: &[Vec3],
    yaws: &[f32],
    clips: Option<&[i32]>,
    start_times: Option<&[f32]>,
    options: BulkOptions,
) -> Result<Bounds> {
    let BulkOptions {
        n_clips,
        time_origin,
        full_transform,
    } = options;
    pack_actors_split(
        out,
        &BulkActors {
            placement: Placement::Yaw { positions, yaws },
            clips,
            start_times,
            n_clips: n_clips.min(MAX_CLIPS),
            time_origin,
            stride: record_floats(full_transform),
        },
        PARALLEL_MIN_ITEMS,
    )
    .map(|spread| spread.origins())
}

/// Where [`pack_actor_transforms_bulk`] placed its actors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlacedTransforms {
    /// Bounds of the origins.
    pub origins: Bounds,
    /// The largest [`basis_stretch`](crate::crowd::records::basis_stretch) of any actor's basis (0 for
    /// no actors).
    pub max_stretch: f32,
}

/// Floats per transform in [`pack_actor_transforms_bulk`]'s input.
pub const TRANSFORM_FLOATS: usize = 12;

/// The basis columns and origin of a 3x4 transform stored row by row, as Godot's
/// `MultiMesh.buffer` stores 3D transforms.
#[inline]
pub fn transform_from_rows(m: &[f32; TRANSFORM_FLOATS]) -> ([Vec3; 3], Vec3) {
    let cols = [
        Vec3::new(m[0], m[4], m[8]),
        Vec3::new(m[1], m[5], m[9]),
        Vec3::new(m[2], m[6], m[10]),
    ];
    (cols, Vec3::new(m[3], m[7], m[11]))
}

/// Packs `transforms.len() / 12` actors into `out` as full-transform records (16 floats each),
/// otherwise as [`pack_actors_bulk`] does. Each transform is 12 floats in the layout of Godot's
/// `MultiMesh.buffer` for 3D transforms: the 3x4 matrix row by row, `[x.x, y.x, z.x, origin.x,
/// x.y, y.y, z.y, origin.y, x.z, y.z, z.z, origin.z]` where x, y, z are the basis columns.
///
/// Errors: [`VatError::BadLength`] if `transforms` is not a whole number of transforms or `out`
/// or an array does not match the actor count; [`VatError::IndexOutOfRange`] for a clip outside
/// `0..n_clips`; [`VatError::NonFinite`] for a transform or start time. The lowest offending actor
/// is reported, and `out` is untouched.
pub fn pack_actor_transforms_bulk(
    out: &mut [f32],
    transforms: &[f32],
    clips: Option<&[i32]>,
    start_times: Option<&[f32]>,
    n_clips: u32,
    time_origin: f32,
) -> Result<PlacedTransforms> {
    let input = BulkActors {
        placement: Placement::Matrix(transforms),
        clips,
        start_times,
        n_clips: n_clips.min(MAX_CLIPS),
        time_origin,
        stride: ACTOR_FLOATS_FULL,
    };
    check_len(
        "transform floats (12 per actor)",
        transforms.len().next_multiple_of(TRANSFORM_FLOATS),
        transforms.len(),
    )?;
    let spread = pack_actors_split(out, &input, PARALLEL_MIN_ITEMS)?;
    Ok(PlacedTransforms {
        origins: spread.origins(),
        max_stretch: spread.stretch2.sqrt(),
    })
}

/// Validates `input` whole, then packs it into `out`.
pub(super) fn pack_actors_split(
    out: &mut [f32],
    input: &BulkActors,
    parallel_min: usize,
) -> Result<Spread> {
    let n = input.placement.len();
    check_len("actor data floats", n * input.stride, out.len())?;
    if let Placement::Yaw { yaws, .. } = input.placement {
        check_len("yaws", n, yaws.len())?;
    }
    if let Some(c) = input.clips {
        check_len("clips", n, c.len())?;
    }
    if let Some(s) = input.start_times {
        check_len("start times", n, s.len())?;
    }
    let split = Split::for_items(n, parallel_min);
    // A fast pass over the whole input; the per-item search only runs if it found something.
    if !input.all_valid() {
        split.check(n, |start, end| {
            (start..end).find_map(|i| input.check(i).err().map(|e| (i, e)))
        })?;
    }
    let spread = split.write(
        out,
        input.stride,
        |start, out| input.pack_range(start, out),
        Spread::merge,
    );
    Ok(spread)
}

/// What a packing pass saw of its actors' placement: the bounds of their origins and the largest
/// squared Frobenius norm of their bases (full transforms only).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Spread {
    lo: Vec3,
    hi: Vec3,
    stretch2: f32,
}

impl Spread {
    const EMPTY: Spread = Spread {
        lo: Vec3::INFINITY,
        hi: Vec3::NEG_INFINITY,
        stretch2: 0.0,
    };

    /// Adds an origin. Inputs are validated finite, so plain compares (one instruction each,
    /// unlike NaN-aware `f32::min`) give the same answer.
    #[inline]
    fn add(&mut self, p: Vec3) {
        let pick = |a: f32, b: f32, less: bool| if less { a } else { b };
        self.lo = Vec3::new(
            pick(p.x, self.lo.x, p.x < self.lo.x),
            pick(p.y, self.lo.y, p.y < self.lo.y),
            pick(p.z, self.lo.z, p.z < self.lo.z),
        );
        self.hi = Vec3::new(
            pick(p.x, self.hi.x, p.x > self.hi.x),
            pick(p.y, self.hi.y, p.y > self.hi.y),
            pick(p.z, self.hi.z, p.z > self.hi.z),
        );
    }

    /// Adds a basis' squared Frobenius norm (finite, as for [`Spread::add`]).
    #[inline]
    fn add_stretch2(&mut self, s2: f32) {
        if s2 > self.stretch2 {
            self.stretch2 = s2;
        }
    }

    fn merge(self, o: Spread) -> Spread {
        Spread {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
            stretch2: self.stretch2.max(o.stretch2),
        }
    }

    pub(super) fn origins(&self) -> Bounds {
        Bounds {
            min: self.lo,
            max: self.hi,
        }
    }
}

/// How bulk actors are placed.
#[derive(Clone, Copy)]
pub(super) enum Placement<'a> {
    /// A position and a yaw about +Y per actor.
    Yaw {
        positions: &'a [Vec3],
        yaws: &'a [f32],
    },
    /// A 3x4 transform per actor, [`TRANSFORM_FLOATS`] floats in `MultiMesh.buffer`'s layout.
    Matrix(&'a [f32]),
}

impl Placement<'_> {
    fn len(&self) -> usize {
        match self {
            Placement::Yaw { positions, .. } => positions.len(),
            Placement::Matrix(m) => m.len() / TRANSFORM_FLOATS,
        }
    }
}

/// Borrowed inputs of the actor bulk packers, shared by their chunk tasks.
pub(super) struct BulkActors<'a> {
    pub(super) placement: Placement<'a>,
    pub(super) clips: Option<&'a [i32]>,
    pub(super) start_times: Option<&'a [f32]>,
    pub(super) n_clips: u32,
    pub(super) time_origin: f32,
    /// Floats per record: [`ACTOR_FLOATS`] or [`ACTOR_FLOATS_FULL`].
    pub(super) stride: usize,
}

impl BulkActors<'_> {
    /// True if no actor fails [`BulkActors::check`].
    fn all_valid(&self) -> bool {
        let placed = match self.placement {
            Placement::Yaw { positions, yaws } => {
                // SAFETY: glam's Vec3 is `repr(C)` of three f32.
                let coords = unsafe {
                    std::slice::from_raw_parts(
                        positions.as_ptr().cast::<f32>(),
                        positions.len() * 3,
                    )
                };
                all_finite(coords) && all_finite(yaws)
            }
            Placement::Matrix(m) => all_finite(m),
        };
        let n_clips = self.n_clips;
        placed
            && self.start_times.is_none_or(|s| {
                s.iter()
                    .fold(true, |ok, &t| ok & validate::time_ok(f64::from(t)))
            })
            && self
                .clips
                .is_none_or(|c| c.iter().fold(true, |ok, &c| ok & ((c as u32) < n_clips)))
    }

    /// Writes the (validated) actors from `start` on into `out`.
    fn pack_range(&self, start: usize, out: &mut [f32]) -> Spread {
        let end = start + out.len() / self.stride;
        let clips = self.clips.map(|c| &c[start..end]);
        let starts = self.start_times.map(|s| &s[start..end]);
        let zero_clips = std::iter::repeat(0);
        let zero_starts = std::iter::repeat(0.0);
        // One monomorphic loop per combination of given arrays, so the hot loop has no branches.
        match (clips, starts) {
            (Some(c), Some(s)) => self.write(start, out, c.iter().copied(), s.iter().copied()),
            (Some(c), None) => self.write(start, out, c.iter().copied(), zero_starts),
            (None, Some(s)) => self.write(start, out, zero_clips, s.iter().copied()),
            (None, None) => self.write(start, out, zero_clips, zero_starts),
        }
    }

    fn write(
        &self,
        start: usize,
        out: &mut [f32],
        clips: impl Iterator<Item = i32>,
        starts: impl Iterator<Item = f32>,
    ) -> Spread {
        let head = BulkHead::new(self.time_origin);
        match self.placement {
            Placement::Matrix(m) => write_matrix_records(out, m, clips, starts, start, &head),
            // A constant record size per loop, so the compiler sees whole records (no bounds
            // checks).
            Placement::Yaw { positions, yaws } if self.stride == ACTOR_FLOATS_FULL => {
                write_yaw_records::<ACTOR_FLOATS_FULL>(
                    out, positions, yaws, clips, starts, start, &head,
                )
            }
            Placement::Yaw { positions, yaws } => {
                write_yaw_records::<ACTOR_FLOATS>(out, positions, yaws, clips, starts, start, &head)
            }
        }
    }

    fn check(&self, i: usize) -> Result<()> {
        let non_finite = |what: &str| {
            Err(VatError::NonFinite {
                what: format!("{what} of actor {i}"),
            })
        };
        match self.placement {
            Placement::Yaw { positions, yaws } => {
                if !positions[i].is_finite() {
                    return non_finite("position");
                }
                if !yaws[i].is_finite() {
                    return non_finite("yaw");
                }
            }
            Placement::Matrix(m) => {
                let t = &m[i * TRANSFORM_FLOATS..(i + 1) * TRANSFORM_FLOATS];
                if !t.iter().all(|v| v.is_finite()) {
                    return non_finite("transform");
                }
            }
        }
        if let Some(s) = self.start_times {
            validate::crowd_time_named(f64::from(s[i]), || format!("start time of actor {i}"))?;
        }
        match self.clips.map(|c| c[i]) {
            Some(c) if c < 0 || c as u32 >= self.n_clips => Err(VatError::IndexOutOfRange {
                what: "clip index",
                index: i64::from(c),
                len: self.n_clips as usize,
            }),
            _ => Ok(()),
        }
    }
}

/// The first [`ACTOR_FLOATS`] of a bulk record: what the bulk calls do not set is constant
/// (speed 1, scale 1, no blend, the clip also as the previous clip).
struct BulkHead {
    time_origin: f32,
    tail: [f32; 2],
}

impl BulkHead {
    fn new(time_origin: f32) -> Self {
        Self {
            time_origin,
            tail: [pack_half2(1.0, 1.0), crate::crowd::records::no_blend_tail()],
        }
    }

    /// The record's first floats for an actor at `p` with T0.w = `w` (the yaw), playing `clip`
    /// since crowd time `t`.
    #[inline]
    fn record(&self, p: Vec3, w: f32, clip: i32, t: f32) -> [f32; ACTOR_FLOATS] {
        let code = clip_code(clip as u32, clip as u32);
        let [speed_scale, blend] = self.tail;
        [
            p.x,
            p.y,
            p.z,
            w,
            t - self.time_origin,
            code,
            speed_scale,
            blend,
        ]
    }
}

/// Writes yaw-placed records of `S` floats (a basis from the yaw when `S` is
/// [`ACTOR_FLOATS_FULL`]) for the actors from `start` on; returns what they span.
fn write_yaw_records<const S: usize>(
    out: &mut [f32],
    positions: &[Vec3],
    yaws: &[f32],
    clips: impl Iterator<Item = i32>,
    starts: impl Iterator<Item = f32>,
    start: usize,
    head: &BulkHead,
) -> Spread {
    let items = out
        .chunks_exact_mut(S)
        .zip(&positions[start..])
        .zip(&yaws[start..])
        .zip(clips.zip(starts));
    let mut spread = Spread::EMPTY;
    for (((rec, p), &yaw), (clip, t)) in items {
        let rec: &mut [f32; S] = rec.try_into().expect("whole records");
        spread.add(*p);
        rec[..ACTOR_FLOATS].copy_from_slice(&head.record(*p, yaw, clip, t));
        if S == ACTOR_FLOATS_FULL {
            pack_basis(yaw_basis(yaw), rec);
        }
    }
    spread
}

/// Writes full-transform records for the actors from `start` on, from [`TRANSFORM_FLOATS`]-float
/// rows of 3x4 matrices; returns what they span, basis stretch included.
fn write_matrix_records(
    out: &mut [f32],
    matrices: &[f32],
    clips: impl Iterator<Item = i32>,
    starts: impl Iterator<Item = f32>,
    start: usize,
    head: &BulkHead,
) -> Spread {
    let items = out
        .chunks_exact_mut(ACTOR_FLOATS_FULL)
        .zip(matrices[start * TRANSFORM_FLOATS..].chunks_exact(TRANSFORM_FLOATS))
        .zip(clips.zip(starts));
    let mut spread = Spread::EMPTY;
    for ((rec, m), (clip, t)) in items {
        let rec: &mut [f32; ACTOR_FLOATS_FULL] = rec.try_into().expect("whole records");
        let (cols, p) = transform_from_rows(m.try_into().expect("whole transforms"));
        spread.add(p);
        spread.add_stretch2(cols.iter().map(|c| c.length_squared()).sum());
        // T0.w is the basis' z.z, which pack_basis writes.
        rec[..ACTOR_FLOATS].copy_from_slice(&head.record(p, 0.0, clip, t));
        pack_basis(cols, rec);
    }
    spread
}
