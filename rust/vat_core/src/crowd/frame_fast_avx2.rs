//! The crowd frame's fast path (`frame_fast`) written with AVX2, FMA and F16C instructions, for
//! whole blocks of interleaved records: the block's span first (`BlockSpan`, one pass of vector
//! minimums and maximums), then eight actors per step, their records turned into one vector per
//! field by two 4x4 transposes, every test kept in registers, and the classes written back eight
//! bytes at a time.
//!
//! Each lane computes what `fast_block_lanes` computes, in the same order, except that the plane
//! distances use fused multiply-adds (one rounding instead of two): the two paths can differ only
//! where a box touches a plane to the last bit. The frame's tests hold both to the exact tests and
//! to each other on random crowds.

use std::arch::x86_64::*;

use crate::half::f32_to_f16;
use crate::layout::{BLEND_BIAS, CLIP_CODE_BASE};

use super::frame::{CULLED, LEVEL_BITS, NO_CAST, SHADOW_ONLY};
use super::frame_classify::Classifier;
use super::frame_fast::{
    BlockPlanes, BlockSpan, FastFrame, LodThresholds, SweepPolicy, BLOCK, MAX_CODE,
};
use super::frame_fast_lanes::fast_block_f16c;
use super::frame_input::{block_records, interleaved_block};

mod ops;
use ops::*;

/// Blocks ahead whose records are fetched into the cache while a block is tested.
const AHEAD: usize = 2;

/// `fast_blocks` over `classes` (actors from `first`): whole blocks of interleaved records
/// through [`block`], others through the portable loops; `finish(at, chunk, undecided)` takes
/// each block's undecided lanes.
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn blocks(
    c: &Classifier,
    fast: &FastFrame,
    first: usize,
    classes: &mut [u8],
    finish: &mut impl FnMut(usize, &mut [u8], u64),
) {
    let frame = Frame::new(c, fast);
    let mut buf = [0.0f32; BLOCK * 8];
    for (b, chunk) in classes.chunks_mut(BLOCK).enumerate() {
        let at = first + b * BLOCK;
        // The records stream from memory at about 1.2 ns per actor: ask for the block after
        // next while this one is tested, so its span pass finds it in the cache.
        prefetch_block(c.actors, at + AHEAD * BLOCK);
        let records = block_records(c.actors, at, chunk.len(), &mut buf);
        let undecided = match (records, <&mut [u8; BLOCK]>::try_from(&mut *chunk)) {
            (Some(records), Ok(block)) => self::block(&frame, records, block),
            _ => fast_block_f16c(c, fast, at, chunk),
        };
        finish(at, chunk, undecided);
    }
}

/// Asks for the placements and states of the block from `first` (as stored: interleaved records,
/// or the two arrays apart), where they are whole.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn prefetch_block(a: &super::frame_input::Actors, first: usize) {
    let fetch = |floats: &[f32], stride: usize| {
        if let Some(block) = floats.get(first * stride..(first + BLOCK) * stride) {
            for line in block.chunks(16) {
                _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast());
            }
        }
    };
    if interleaved_block(a, first, BLOCK).is_some() {
        fetch(a.placements, 8);
    } else {
        fetch(a.placements, a.placement_stride);
        fetch(a.states, a.state_stride);
    }
}

/// Classifies the whole block of interleaved `records` (8 floats per actor) in place over last
/// frame's `classes`, as `fast_blocks` does, and returns the lanes left to the exact test.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn block(frame: &Frame, records: &[f32; BLOCK * 8], classes: &mut [u8; BLOCK]) -> u64 {
    let fast = frame.fast;
    let planes = fast.planes_of_block(&frame.policy, frame.culling, Some(records), |r| span(r));
    let BlockPlanes::Test { planes, count } = planes else {
        // Every actor of the block is culled (each has whole, valid records: see `BlockSpan`).
        *classes = [CULLED; BLOCK];
        return 0;
    };
    let mut undecided = 0u64;
    for g in 0..BLOCK / 8 {
        let recs: &[f32; 64] = records[g * 64..g * 64 + 64].try_into().unwrap();
        let bytes: &mut [u8; 8] = (&mut classes[g * 8..g * 8 + 8]).try_into().unwrap();
        undecided |= u64::from(group(frame, &planes[..count], recs, bytes)) << (g * 8);
    }
    undecided
}

/// `BlockSpan::of` in one pass of vector minimums and maximums over the records as they lie.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn span(records: &[f32; BLOCK * 8]) -> Option<BlockSpan> {
    let p = records.as_ptr();
    let zero = _mm256_setzero_ps();
    // Four chains of each, so the loop waits on no single chain's latency.
    let mut lo = [splat(f32::INFINITY); 4];
    let mut hi = [splat(f32::NEG_INFINITY); 4];
    let mut nonfinite = [zero; 4];
    for k in (0..BLOCK).step_by(4) {
        for c in 0..4 {
            let r = _mm256_loadu_ps(p.add((k + c) * 8));
            lo[c] = _mm256_min_ps(r, lo[c]);
            hi[c] = _mm256_max_ps(r, hi[c]);
            nonfinite[c] = _mm256_fmadd_ps(r, zero, nonfinite[c]);
        }
    }
    let lo = _mm256_min_ps(_mm256_min_ps(lo[0], lo[1]), _mm256_min_ps(lo[2], lo[3]));
    let hi = _mm256_max_ps(_mm256_max_ps(hi[0], hi[1]), _mm256_max_ps(hi[2], hi[3]));
    let nonfinite = add(
        add(nonfinite[0], nonfinite[1]),
        add(nonfinite[2], nonfinite[3]),
    );
    let (mut low, mut high, mut sums) = ([0.0f32; 8], [0.0f32; 8], [0.0f32; 8]);
    _mm256_storeu_ps(low.as_mut_ptr(), lo);
    _mm256_storeu_ps(high.as_mut_ptr(), hi);
    _mm256_storeu_ps(sums.as_mut_ptr(), nonfinite);
    BlockSpan::from_fields(low, high, sums)
}

/// What every group of a block reads: the settings' switches and the view's tables.
struct Frame<'a> {
    fast: &'a FastFrame,
    culling: bool,
    /// How the culling step uses the shadow sweeps.
    policy: SweepPolicy<'a>,
    /// `FastFrame::clips` and `FastFrame::extents`.
    clips: Table<'a>,
    extents: Table<'a>,
    /// (unit direction of travel, reach) per shadowed directional light, and the camera, when the
    /// shadow reach is tested.
    reach: Option<(&'a [(glam::Vec3, f32)], glam::Vec3)>,
    /// Levels come from distance (else all 0, or the exact test decides).
    level_known: bool,
    time: f32,
    /// The largest float whose high half holds a blend time of at most 0 (the half of
    /// `BLEND_BIAS`, any low half): floats above it may hold a positive one.
    fade_floor: f32,
}

impl<'a> Frame<'a> {
    fn new(c: &'a Classifier, fast: &'a FastFrame) -> Self {
        let s = c.settings;
        let reach = match (s.culling, c.reach, c.view) {
            (true, Some(lights), Some(view)) => Some((lights, view.camera)),
            _ => None,
        };
        Frame {
            fast,
            culling: s.culling,
            policy: fast.sweep_policy(c),
            clips: Table {
                rows: &fast.clips,
                lanes: &fast.clip_lanes,
            },
            extents: Table {
                rows: &fast.extents,
                lanes: &fast.extent_lanes,
            },
            reach,
            level_known: fast.lod.is_some() || c.shape.lod.is_none(),
            time: s.time,
            fade_floor: f32::from_bits(u32::from(f32_to_f16(BLEND_BIAS)) << 16 | 0xffff),
        }
    }
}

/// One group of eight actors: their new classes over `bytes` (last frame's) where decided, and
/// the undecided lanes' bits.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn group(f: &Frame, planes: &[u8], recs: &[f32; 64], bytes: &mut [u8; 8]) -> u8 {
    let fast = f.fast;
    let r = transpose(recs);
    let zero = _mm256_setzero_ps();
    let all = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    let scale = high_half(r.scale_half);

    // Which lanes the path may decide, and their clips.
    let valid = and(ge(r.code, zero), lt(r.code, splat(MAX_CODE)));
    let finite_all = and(
        and(finite(r.x), finite(r.y)),
        and(finite(r.z), finite(r.yaw)),
    );
    let scale_ok = and(gt(scale, zero), lt(scale, splat(f32::INFINITY)));
    let ok = and(and(valid, finite_all), scale_ok);
    // A blend time can be positive only where the float holding it is past `fade_floor`; most
    // groups have none, and skip reading it.
    let fading = if _mm256_movemask_ps(gt(r.blend_half, splat(f.fade_floor))) == 0 {
        zero
    } else {
        let stored_blend = sub(high_half(r.blend_half), splat(BLEND_BIAS));
        and(
            valid,
            and(
                gt(stored_blend, zero),
                lt(sub(splat(f.time), r.start), stored_blend),
            ),
        )
    };
    let table = _mm256_set1_epi32((fast.clips.len() - 1) as i32);
    let code = _mm256_cvttps_epi32(r.code);
    let index = _mm256_min_epu32(
        _mm256_and_si256(code, _mm256_set1_epi32(CLIP_CODE_BASE as i32 - 1)),
        table,
    );
    let mut row = f.clips.lookup(index);
    if _mm256_movemask_ps(fading) != 0 {
        // 2^12 clips: the previous clip is the code's bits from 12 up.
        const _: () = assert!(CLIP_CODE_BASE == 1 << 12);
        let from = _mm256_min_epu32(_mm256_srli_epi32::<12>(code), table);
        let union = union_any_yaw(f.extents.lookup(index), f.extents.lookup(from));
        for (lane, u) in row.iter_mut().zip(union) {
            *lane = _mm256_blendv_ps(*lane, u, fading);
        }
    }
    let [cy, rad_h, ey, rad] = row;
    let centre_y = add(r.y, mul(scale, cy));
    let across = mul(scale, rad_h);
    let up = mul(scale, ey);
    let radius = mul(rad, scale);

    // The frustum.
    let (mut inside, mut culled, mut shadow_only) = (all, zero, zero);
    if f.culling {
        let policy = &f.policy;
        let used = policy.sweeps.len();
        let mut beyond = zero;
        let mut swept_out = [zero; 4];
        let mut lit = [all; 4];
        for k in planes.iter().map(|&k| usize::from(k)) {
            let dk = _mm256_fmadd_ps(
                splat(fast.nx[k]),
                r.x,
                _mm256_fmadd_ps(
                    splat(fast.ny[k]),
                    centre_y,
                    _mm256_fmsub_ps(splat(fast.nz[k]), r.z, splat(fast.d[k])),
                ),
            );
            let ck = mul(splat(fast.vertical[k]), up);
            let rk = _mm256_fmadd_ps(splat(fast.horizontal[k]), across, ck);
            beyond = or(beyond, gt(dk, rk));
            inside = and(inside, lt(add(dk, rk), zero));
            for ((sweep, o), l) in policy.sweeps.iter().zip(&mut swept_out).zip(&mut lit) {
                let margin = splat(sweep[k]);
                *o = or(*o, gt(dk, add(rk, margin)));
                *l = and(*l, le(dk, add(ck, margin)));
            }
            // A group whose every lane is already gone skips the other planes.
            let gone = match (policy.gone_any, policy.gone_swept) {
                (true, _) => beyond,
                (false, true) => swept_out[..used].iter().fold(all, |a, &o| and(a, o)),
                (false, false) => zero,
            };
            if _mm256_movemask_ps(_mm256_andnot_ps(gone, ok)) == 0 {
                culled = gone;
                inside = zero;
                break;
            }
            culled = gone;
        }
        culled = _mm256_andnot_ps(inside, culled);
        if policy.lit_casts {
            let casts = lit[..used].iter().fold(zero, |a, &l| or(a, l));
            shadow_only = and(beyond, casts);
        }
    }
    let shown = if f.culling { inside } else { all };

    // The shadow reach and the level, unless every lane the path decides is culled.
    let last = _mm256_cvtepu8_epi32(_mm_loadl_epi64(bytes.as_ptr().cast()));
    let (mut flag, mut level) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    if _mm256_movemask_ps(_mm256_andnot_ps(culled, ok)) != 0 {
        if let Some((lights, camera)) = f.reach {
            flag = no_cast(lights, camera, &r, radius);
        }
        if let Some(t) = &fast.lod {
            level = levels(t, &r, scale, last);
        }
    }

    // The answers.
    let known = if f.level_known { all } else { zero };
    let decided = and(ok, or(culled, and(or(shown, shadow_only), known)));
    let flag = _mm256_blendv_epi8(
        flag,
        _mm256_set1_epi32(i32::from(SHADOW_ONLY)),
        _mm256_castps_si256(shadow_only),
    );
    let class = _mm256_blendv_epi8(
        _mm256_or_si256(level, flag),
        _mm256_set1_epi32(i32::from(CULLED)),
        _mm256_castps_si256(culled),
    );
    let class = _mm256_blendv_epi8(last, class, _mm256_castps_si256(decided));
    // The low byte of each lane, in order, into the first 8 bytes.
    let low_bytes = _mm256_setr_epi8(
        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, //
        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    );
    let packed = _mm256_permutevar8x32_epi32(
        _mm256_shuffle_epi8(class, low_bytes),
        _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0),
    );
    _mm_storel_epi64(bytes.as_mut_ptr().cast(), _mm256_castsi256_si128(packed));
    !(_mm256_movemask_ps(decided) as u8)
}

/// [`NO_CAST`] in the lanes whose shadow cannot come within any light's reach of the camera
/// (`shadow_near` of each light), else 0.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn no_cast(
    lights: &[(glam::Vec3, f32)],
    camera: glam::Vec3,
    r: &Fields,
    radius: __m256,
) -> __m256i {
    let zero = _mm256_setzero_ps();
    let mut near = zero;
    let (tcx, tcy, tcz) = (
        sub(splat(camera.x), r.x),
        sub(splat(camera.y), r.y),
        sub(splat(camera.z), r.z),
    );
    for &(travel, limit) in lights {
        let (tx, ty, tz) = (splat(travel.x), splat(travel.y), splat(travel.z));
        let along = _mm256_max_ps(add(add(mul(tcx, tx), mul(tcy, ty)), mul(tcz, tz)), zero);
        let (ex, ey, ez) = (
            sub(tcx, mul(tx, along)),
            sub(tcy, mul(ty, along)),
            sub(tcz, mul(tz, along)),
        );
        let off = add(add(mul(ex, ex), mul(ey, ey)), mul(ez, ez));
        let lim = add(splat(limit), radius);
        near = or(near, le(off, mul(lim, lim)));
    }
    _mm256_andnot_si256(
        _mm256_castps_si256(near),
        _mm256_set1_epi32(i32::from(NO_CAST)),
    )
}

/// Each lane's level (`level_lanes`): from the thresholds, or last frame's (`last`, the class
/// bytes widened) while inside its band.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn levels(t: &LodThresholds, r: &Fields, scale: __m256, last: __m256i) -> __m256i {
    let q = match t.fixed {
        Some(fixed) => splat(fixed),
        None => {
            let dx = sub(r.x, splat(t.camera.x));
            let dy = sub(r.y, splat(t.camera.y));
            let dz = sub(r.z, splat(t.camera.z));
            add(add(mul(dx, dx), mul(dy, dy)), mul(dz, dz))
        }
    };
    let s2 = mul(scale, scale);
    let all = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    // The thresholds increase with the level, so the count of those passed is the level.
    let mut plain = _mm256_setzero_si256();
    for &tk in &t.plain[1..] {
        let passed = ge(q, mul(splat(tk), s2));
        plain = _mm256_sub_epi32(plain, _mm256_castps_si256(passed));
    }
    let had_level = _mm256_and_si256(last, _mm256_set1_epi32(i32::from(LEVEL_BITS)));
    let was_culled = _mm256_cmpeq_epi32(last, _mm256_set1_epi32(i32::from(CULLED)));
    let table_top = t.plain.len() - 1;
    let top = _mm256_set1_epi32(table_top as i32);
    let kept = match &t.keep_lanes {
        Some([lo, hi]) => {
            // Each lane's own band, read by its last level.
            let lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(lo.as_ptr()), had_level);
            let hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(hi.as_ptr()), had_level);
            let in_table =
                _mm256_cmpgt_epi32(_mm256_add_epi32(top, _mm256_set1_epi32(1)), had_level);
            let at_top = _mm256_castsi256_ps(_mm256_cmpeq_epi32(had_level, top));
            let had = _mm256_castsi256_ps(_mm256_andnot_si256(was_culled, in_table));
            let band = and(ge(q, mul(lo, s2)), or(lt(q, mul(hi, s2)), at_top));
            and(had, band)
        }
        None => {
            let mut kept = _mm256_setzero_ps();
            for (p, &[lo, hi]) in t.keep.iter().enumerate() {
                let had = _mm256_andnot_si256(
                    was_culled,
                    _mm256_cmpeq_epi32(had_level, _mm256_set1_epi32(p as i32)),
                );
                let below = if p == table_top {
                    all
                } else {
                    lt(q, mul(splat(hi), s2))
                };
                let band = and(ge(q, mul(splat(lo), s2)), below);
                kept = or(kept, and(_mm256_castsi256_ps(had), band));
            }
            kept
        }
    };
    _mm256_blendv_epi8(plain, had_level, _mm256_castps_si256(kept))
}
