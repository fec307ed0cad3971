//! The vector path's building blocks: eight records turned into one vector per field, the high
//! half of a float as a float, lane-wise arithmetic and compares named as the portable loops write
//! them, and table lookups by permute or gather. Every function needs AVX2, FMA and F16C.

use std::arch::x86_64::*;

/// The records of eight actors as one vector per field.
pub(super) struct Fields {
    pub(super) x: __m256,
    pub(super) y: __m256,
    pub(super) z: __m256,
    pub(super) yaw: __m256,
    pub(super) start: __m256,
    pub(super) code: __m256,
    pub(super) scale_half: __m256,
    pub(super) blend_half: __m256,
}

/// Eight records of 8 floats, transposed: each half record of actor `k` and of actor `k + 4`
/// loaded into one vector's two halves, then two 4x4 transposes within the halves (16 shuffles
/// rather than the 24 of an 8x8 transpose; the loads into the upper halves need no shuffle unit).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn transpose(recs: &[f32; 64]) -> Fields {
    let p = recs.as_ptr();
    let pair = |k: usize, half: usize| {
        // SAFETY: records `k` and `k + 4` lie within the 64 floats (k < 4, half < 2).
        unsafe { _mm256_loadu2_m128(p.add((k + 4) * 8 + half * 4), p.add(k * 8 + half * 4)) }
    };
    let four = |a: __m256, b: __m256, c: __m256, d: __m256| {
        let (t0, t1) = (_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
        let (t2, t3) = (_mm256_unpacklo_ps(c, d), _mm256_unpackhi_ps(c, d));
        [
            _mm256_shuffle_ps::<0x44>(t0, t2),
            _mm256_shuffle_ps::<0xEE>(t0, t2),
            _mm256_shuffle_ps::<0x44>(t1, t3),
            _mm256_shuffle_ps::<0xEE>(t1, t3),
        ]
    };
    let [x, y, z, yaw] = four(pair(0, 0), pair(1, 0), pair(2, 0), pair(3, 0));
    let [start, code, scale_half, blend_half] =
        four(pair(0, 1), pair(1, 1), pair(2, 1), pair(3, 1));
    Fields {
        x,
        y,
        z,
        yaw,
        start,
        code,
        scale_half,
        blend_half,
    }
}

/// The high halves of eight floats, as floats (`unpack_half2(x).1`).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn high_half(x: __m256) -> __m256 {
    let bits = _mm256_srli_epi32::<16>(_mm256_castps_si256(x));
    let halves = _mm_packus_epi32(
        _mm256_castsi256_si128(bits),
        _mm256_extracti128_si256::<1>(bits),
    );
    _mm256_cvtph_ps(halves)
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn splat(x: f32) -> __m256 {
    _mm256_set1_ps(x)
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn and(a: __m256, b: __m256) -> __m256 {
    _mm256_and_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn or(a: __m256, b: __m256) -> __m256 {
    _mm256_or_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn gt(a: __m256, b: __m256) -> __m256 {
    _mm256_cmp_ps::<_CMP_GT_OQ>(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn lt(a: __m256, b: __m256) -> __m256 {
    _mm256_cmp_ps::<_CMP_LT_OQ>(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn le(a: __m256, b: __m256) -> __m256 {
    _mm256_cmp_ps::<_CMP_LE_OQ>(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn ge(a: __m256, b: __m256) -> __m256 {
    _mm256_cmp_ps::<_CMP_GE_OQ>(a, b)
}

/// All ones in the lanes where `x` is finite (`x - x` is 0 there, NaN elsewhere).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn finite(x: __m256) -> __m256 {
    _mm256_cmp_ps::<_CMP_EQ_OQ>(_mm256_sub_ps(x, x), _mm256_setzero_ps())
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn add(a: __m256, b: __m256) -> __m256 {
    _mm256_add_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn sub(a: __m256, b: __m256) -> __m256 {
    _mm256_sub_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn mul(a: __m256, b: __m256) -> __m256 {
    _mm256_mul_ps(a, b)
}

/// A table of four-float rows read at each lane's index: by permutes from its fields eight rows
/// at a time (`FastFrame::lanes_of`) where it has at most 16 rows, else by a gather per field.
#[derive(Clone, Copy)]
pub(super) struct Table<'a> {
    pub(super) rows: &'a [[f32; 4]],
    /// Per 8 rows, each field's 8 values; empty where the rows are gathered.
    pub(super) lanes: &'a [[[f32; 8]; 4]],
}

impl Table<'_> {
    /// Each field of the rows at `index` (every lane below the row count).
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) unsafe fn lookup(&self, index: __m256i) -> [__m256; 4] {
        let field = |chunk: &[[f32; 8]; 4], k: usize| {
            // SAFETY: the caller has AVX2 (this function's own features).
            unsafe { _mm256_permutevar8x32_ps(_mm256_loadu_ps(chunk[k].as_ptr()), index) }
        };
        match self.lanes {
            [low] => std::array::from_fn(|k| field(low, k)),
            [low, high] => {
                let upper = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(index));
                std::array::from_fn(|k| _mm256_blendv_ps(field(low, k), field(high, k), upper))
            }
            _ => {
                let base = self.rows.as_ptr().cast::<f32>();
                let at = _mm256_slli_epi32::<2>(index);
                [
                    _mm256_i32gather_ps::<4>(base, at),
                    _mm256_i32gather_ps::<4>(base.add(1), at),
                    _mm256_i32gather_ps::<4>(base.add(2), at),
                    _mm256_i32gather_ps::<4>(base.add(3), at),
                ]
            }
        }
    }
}

/// `any_yaw_row` of `union_row` of two lanes of extents.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn union_any_yaw(a: [__m256; 4], b: [__m256; 4]) -> [__m256; 4] {
    let lo = _mm256_min_ps(a[0], b[0]);
    let hi = _mm256_max_ps(a[1], b[1]);
    let ax = _mm256_max_ps(a[2], b[2]);
    let az = _mm256_max_ps(a[3], b[3]);
    let sign = splat(-0.0);
    let ay = _mm256_max_ps(_mm256_andnot_ps(sign, lo), _mm256_andnot_ps(sign, hi));
    let (ax2, az2) = (mul(ax, ax), mul(az, az));
    [
        mul(add(lo, hi), splat(0.5)),
        _mm256_sqrt_ps(add(ax2, az2)),
        mul(sub(hi, lo), splat(0.5)),
        _mm256_sqrt_ps(add(add(ax2, mul(ay, ay)), az2)),
    ]
}
