//! The crowd frame's fast path (`frame_fast`) written as plain loops over a block of actors,
//! each step one loop over every lane so the compiler vectorises it, with the answers chosen by
//! selects rather than branches: the path on CPUs without AVX2, FMA and F16C, for records not
//! interleaved and for the last, partial block; and the reference the vector path
//! (`frame_fast_avx2`) is tested against.

use glam::Vec3;

#[cfg(target_arch = "x86_64")]
use crate::half::F16c;
use crate::half::HalfLanes;
use crate::layout::CLIP_CODE_BASE;

use super::frame::{CULLED, LEVEL_BITS, NO_CAST, SHADOW_ONLY};
use super::frame_classify::{shadow_near, still_fading, Classifier};
use super::frame_fast::{
    any_yaw_row, union_row, BlockPlanes, BlockSpan, FastFrame, LodThresholds, BLOCK, MAX_CODE,
    MAX_SWEEPS,
};
use super::frame_input::block_records;

/// [`fast_block_lanes`] compiled for 8-lane vectors with the F16C conversions (the same bits as
/// the software's), so the same answers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
pub(super) fn fast_block_f16c(
    c: &Classifier,
    fast: &FastFrame,
    first: usize,
    classes: &mut [u8],
) -> u64 {
    fast_block_lanes::<F16c>(c, fast, first, classes)
}

/// The fast path over one block of `classes.len()` (at most [`BLOCK`]) actors from `first`, in
/// place over their classes of last frame: returns the lanes it leaves undecided (bit `j` for
/// `classes[j]`), which keep last frame's class. It runs in steps that each run over every lane:
/// read the records, test the frustum's planes (and the shadow sweeps where some actor lies
/// beyond a plane), the shadow reach and the level thresholds, then choose each lane's answer
/// with selects.
#[inline(always)]
pub(super) fn fast_block_lanes<H: HalfLanes>(
    c: &Classifier,
    fast: &FastFrame,
    first: usize,
    classes: &mut [u8],
) -> u64 {
    let n = classes.len().min(BLOCK);
    let a = c.actors;
    let s = c.settings;
    let mut buf = [0.0f32; BLOCK * 8];
    let records = block_records(a, first, n, &mut buf);
    let policy = fast.sweep_policy(c);
    let BlockPlanes::Test { planes, count } =
        fast.planes_of_block(&policy, s.culling, records, BlockSpan::of)
    else {
        // Every actor of the block is culled (each has whole, valid records: see `BlockSpan`).
        classes.fill(CULLED);
        return 0;
    };
    let planes = &planes[..count];
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
    if let Some(block) = records {
        // Whole records (placement then state, 8 floats) of a whole block, as stored or
        // gathered, so the reads go without per-actor bounds checks.
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
    last[..n].copy_from_slice(&classes[..n]);
    let scale = H::to_f32(&scale_bits);
    let blend = H::to_f32(&blend_bits);

    // What the lanes' clips say: the any-yaw box (placed and scaled) and its radius.
    let table = fast.clips.len() - 1;
    let mut ok = [false; BLOCK];
    let mut fading = [false; BLOCK];
    let mut centre_y = [0.0f32; BLOCK];
    let mut across = [0.0f32; BLOCK];
    let mut up = [0.0f32; BLOCK];
    let mut radius = [0.0f32; BLOCK];
    let mut index = [0u32; BLOCK];
    let mut from = [0u32; BLOCK];
    for j in 0..BLOCK {
        // Codes are below 2^24 (`MAX_CODE`); others take the exact test.
        let valid = (code[j] >= 0.0) & (code[j] < MAX_CODE);
        let code = code[j] as i32 as u32;
        index[j] = (code % CLIP_CODE_BASE).min(table as u32);
        from[j] = (code / CLIP_CODE_BASE).min(table as u32);
        fading[j] = valid & still_fading(blend[j], start[j], s.time);
        let sc = scale[j];
        ok[j] = (j < n) & valid & finite[j] & (sc > 0.0) & sc.is_finite();
    }
    // The table lookups alone, so the steps around them vectorise.
    let mut row = [[0.0f32; 4]; BLOCK];
    for j in 0..BLOCK {
        row[j] = fast.clips[index[j] as usize];
    }
    // A cross-fade's bounds are the union of both clips' (rare: a lane at a time).
    for j in (0..n).filter(|&j| fading[j]) {
        let e = &fast.extents;
        row[j] = any_yaw_row(union_row(e[index[j] as usize], e[from[j] as usize]));
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
    let mut shadow_only = [false; BLOCK];
    if s.culling {
        // Beyond a plane: gone, unless a light's sweep may bring the box back into the view
        // (or an omni or spot light's shadow may: only the exact test tells). Per sweep, whether
        // the box stays beyond one plane at both ends of it, and whether the clip's vertical
        // core reaches back over every plane at one end at least (then the actor casts).
        let sweeps = policy.sweeps;
        let mut swept_out = [[false; BLOCK]; MAX_SWEEPS];
        let mut lit = [[true; BLOCK]; MAX_SWEEPS];
        for k in planes.iter().map(|&k| usize::from(k)) {
            let (nx, ny, nz, d) = (fast.nx[k], fast.ny[k], fast.nz[k], fast.d[k]);
            let (h, v) = (fast.horizontal[k], fast.vertical[k]);
            let mut dist = [0.0f32; BLOCK];
            let mut reach = [0.0f32; BLOCK];
            let mut core = [0.0f32; BLOCK];
            for j in 0..BLOCK {
                let dk = nx * x[j] + ny * centre_y[j] + nz * z[j] - d;
                let ck = v * up[j];
                let rk = h * across[j] + ck;
                dist[j] = dk;
                reach[j] = rk;
                core[j] = ck;
                beyond[j] |= dk > rk;
                inside[j] &= dk < -rk;
            }
            for ((sweep, out), lit) in sweeps.iter().zip(&mut swept_out).zip(&mut lit) {
                let margin = sweep[k];
                for j in 0..BLOCK {
                    out[j] |= dist[j] > reach[j] + margin;
                    lit[j] &= dist[j] <= core[j] + margin;
                }
            }
        }
        let mut all_out = [true; BLOCK];
        let mut casts = [false; BLOCK];
        for (out, lit) in swept_out.iter().zip(&lit).take(sweeps.len()) {
            for j in 0..BLOCK {
                all_out[j] &= out[j];
                casts[j] |= lit[j];
            }
        }
        for j in 0..BLOCK {
            let gone = policy.gone_any | (policy.gone_swept & all_out[j]);
            culled[j] = !inside[j] & beyond[j] & gone;
            shadow_only[j] = beyond[j] & casts[j] & policy.lit_casts;
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

    let mut undecided = 0u64;
    for j in 0..n {
        let shown = in_view(j);
        if ok[j] & (culled[j] | ((shown | shadow_only[j]) & level_known)) {
            classes[j] = if culled[j] {
                CULLED
            } else if shadow_only[j] {
                level[j] | SHADOW_ONLY
            } else {
                level[j] | flag[j]
            };
        } else {
            undecided |= 1 << j;
        }
    }
    undecided
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
