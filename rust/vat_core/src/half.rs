//! IEEE 754 binary16 ("half") conversion and the two-halves-in-one-f32 packing the shader uses.
//!
//! Conversion from f32 rounds to nearest, ties to even, exactly like GPU `packHalf2x16` on
//! conforming hardware: values beyond the largest half (65504) round to infinity, values below
//! half the smallest subnormal (2^-25) round to signed zero, and NaN stays NaN (quiet).

/// Sign bit of an f16.
const SIGN: u16 = 0x8000;
/// Exponent bits of an f16 (all set: infinity or NaN).
const EXP_MASK: u16 = 0x7c00;
/// Bit pattern of the f32 2^-14, the smallest normal f16: below it the f16 is subnormal.
const F32_MIN_NORMAL_F16: u32 = 113 << 23;
/// Bit pattern of the f32 2^16: from here on (or rounding up to it) the f16 is infinite.
const F32_F16_OVERFLOW: u32 = 143 << 23;
/// Bit pattern of f32 infinity; larger magnitudes are NaN.
const F32_INFINITY: u32 = 0x7f80_0000;
/// 0.5, whose f32 spacing is 2^-24, the f16 subnormal step: adding it rounds a small magnitude
/// to a whole number of subnormal steps, ties to even, by the FPU's own rounding.
const SUBNORMAL_MAGIC: u32 = 126 << 23;

/// Converts `x` to the nearest f16 bit pattern (ties to even).
///
/// Branch-free (every case is computed and one selected), so loops over many values vectorise;
/// the rounding trick is Fabian Giesen's `float_to_half_fast3_rtne`, with NaN payloads kept.
#[inline]
pub fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = (bits >> 16) & u32::from(SIGN);
    let abs = bits & 0x7fff_ffff;
    // Normal range: re-bias the exponent (f32 127 -> f16 15) and round the 13 dropped bits to
    // nearest even; a carry out of the mantissa bumps the exponent, up to infinity.
    let odd = (abs >> 13) & 1;
    let normal = abs.wrapping_sub((127 - 15) << 23).wrapping_add(0xfff + odd) >> 13;
    let magic = f32::from_bits(SUBNORMAL_MAGIC);
    let subnormal = (f32::from_bits(abs) + magic)
        .to_bits()
        .wrapping_sub(SUBNORMAL_MAGIC);
    // Keep NaN a NaN (quiet) even when its payload lies only in the dropped low bits.
    let nan = 0x7e00 | ((abs >> 13) & 0x03ff);
    // One select after another (not an if-else chain), which compiles to vector blends.
    let mut h = normal;
    h = if abs < F32_MIN_NORMAL_F16 {
        subnormal
    } else {
        h
    };
    h = if abs >= F32_F16_OVERFLOW {
        u32::from(EXP_MASK)
    } else {
        h
    };
    h = if abs > F32_INFINITY { nan } else { h };
    (h | sign) as u16
}

/// Converts an f16 bit pattern to f32; exact for every value (f32 is a superset). Branch-free.
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    let h = u32::from(h);
    let magnitude = (h & 0x7fff) << 13;
    let exp = magnitude & (u32::from(EXP_MASK) << 13);
    let rebiased = magnitude + ((127 - 15) << 23);
    let infinite_or_nan = rebiased + ((128 - 16) << 23);
    // Subnormal or zero: give it the implicit bit of 2^-14, then subtract 2^-14 exactly.
    let min_normal = f32::from_bits(F32_MIN_NORMAL_F16);
    let subnormal = (f32::from_bits(rebiased + (1 << 23)) - min_normal).to_bits();
    let mut bits = rebiased;
    bits = if exp == 0 { subnormal } else { bits };
    bits = if exp == u32::from(EXP_MASK) << 13 {
        infinite_or_nan
    } else {
        bits
    };
    f32::from_bits(bits | ((h & u32::from(SIGN)) << 16))
}

/// f16 conversions of a whole block of lanes (a multiple of 8), for kernels that run with or
/// without the F16C instructions and must give the same bits either way.
pub(crate) trait HalfLanes {
    /// [`f32_to_f16`] of every lane.
    fn to_f16<const N: usize>(x: &[f32; N]) -> [u16; N];
    /// [`f16_to_f32`] of every lane.
    fn to_f32<const N: usize>(h: &[u16; N]) -> [f32; N];
}

/// [`f32_to_f16`] and [`f16_to_f32`] lane by lane (branch-free, so they vectorise).
pub(crate) struct SoftHalf;

impl HalfLanes for SoftHalf {
    #[inline(always)]
    fn to_f16<const N: usize>(x: &[f32; N]) -> [u16; N] {
        std::array::from_fn(|k| f32_to_f16(x[k]))
    }

    #[inline(always)]
    fn to_f32<const N: usize>(h: &[u16; N]) -> [f32; N] {
        std::array::from_fn(|k| f16_to_f32(h[k]))
    }
}

/// The F16C instructions (exact, round to nearest even: the same bits as the software); only
/// for code compiled with `target_feature(enable = "f16c")` on a CPU that has it.
#[cfg(target_arch = "x86_64")]
pub(crate) struct F16c;

#[cfg(target_arch = "x86_64")]
impl HalfLanes for F16c {
    #[inline(always)]
    fn to_f16<const N: usize>(x: &[f32; N]) -> [u16; N] {
        use std::arch::x86_64::{_mm256_cvtps_ph, _mm256_loadu_ps, _mm_storeu_si128};
        let mut h = [0u16; N];
        debug_assert!(N.is_multiple_of(8));
        for (src, dst) in x.chunks_exact(8).zip(h.chunks_exact_mut(8)) {
            // SAFETY: only inlined into functions compiled for F16C and called where the CPU has
            // it; 8 lanes are read from and written to chunks of exactly 8. Rounding 0: to
            // nearest, ties to even.
            unsafe {
                let v = _mm256_cvtps_ph::<0>(_mm256_loadu_ps(src.as_ptr()));
                _mm_storeu_si128(dst.as_mut_ptr().cast(), v);
            }
        }
        h
    }

    #[inline(always)]
    fn to_f32<const N: usize>(h: &[u16; N]) -> [f32; N] {
        use std::arch::x86_64::{_mm256_cvtph_ps, _mm256_storeu_ps, _mm_loadu_si128};
        let mut x = [0.0f32; N];
        for (src, dst) in h.chunks_exact(8).zip(x.chunks_exact_mut(8)) {
            // SAFETY: as in to_f16.
            unsafe {
                let v = _mm256_cvtph_ps(_mm_loadu_si128(src.as_ptr().cast()));
                _mm256_storeu_ps(dst.as_mut_ptr(), v);
            }
        }
        x
    }
}

/// Packs two floats as halves into one f32's bits: `lo` in bits 0..16, `hi` in bits 16..32.
/// Identical to GLSL `uintBitsToFloat(packHalf2x16(vec2(lo, hi)))`. The result is a normal f32
/// only if `hi` is a normal f16 (callers that need that keep `hi` in range).
pub fn pack_half2(lo: f32, hi: f32) -> f32 {
    let bits = u32::from(f32_to_f16(lo)) | (u32::from(f32_to_f16(hi)) << 16);
    f32::from_bits(bits)
}

/// Inverse of [`pack_half2`]: `(lo, hi)`, each the exact f16 value that was stored.
pub fn unpack_half2(x: f32) -> (f32, f32) {
    let bits = x.to_bits();
    (f16_to_f32(bits as u16), f16_to_f32((bits >> 16) as u16))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The straightforward branchy conversion the fast one replaced: the reference.
    fn reference_f32_to_f16(x: f32) -> u16 {
        let bits = x.to_bits();
        let sign = ((bits >> 16) as u16) & SIGN;
        let exp = ((bits >> 23) & 0xff) as i32;
        let man = bits & 0x007f_ffff;
        if exp == 0xff {
            let nan = if man != 0 {
                0x0200 | (man >> 13) as u16
            } else {
                0
            };
            return sign | EXP_MASK | nan;
        }
        let e = exp - 112;
        if e >= 0x1f {
            return sign | EXP_MASK;
        }
        if e <= 0 {
            if e < -10 {
                return sign;
            }
            let full = man | 0x0080_0000;
            let shift = (14 - e) as u32;
            return sign | round_shifted(full >> shift, full & ((1 << shift) - 1), shift) as u16;
        }
        let h = ((e as u32) << 10) | (man >> 13);
        sign | round_shifted(h, man & 0x1fff, 13) as u16
    }

    fn round_shifted(kept: u32, dropped: u32, shift: u32) -> u32 {
        let halfway = 1 << (shift - 1);
        if dropped > halfway || (dropped == halfway && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    }

    fn reference_f16_to_f32(h: u16) -> f32 {
        let sign = u32::from(h & SIGN) << 16;
        let exp = u32::from((h & EXP_MASK) >> 10);
        let man = u32::from(h & 0x03ff);
        match exp {
            0 => {
                let v = man as f32 * f32::from_bits(0x3380_0000);
                if sign != 0 {
                    -v
                } else {
                    v
                }
            }
            0x1f => f32::from_bits(sign | 0x7f80_0000 | (man << 13)),
            _ => f32::from_bits(sign | ((exp + 112) << 23) | (man << 13)),
        }
    }

    #[test]
    fn fast_conversions_match_the_reference() {
        for h in 0..=u16::MAX {
            assert_eq!(
                f16_to_f32(h).to_bits(),
                reference_f16_to_f32(h).to_bits(),
                "{h:#06x}"
            );
            // Every f16, the halfway points to its neighbour and one f32 ulp either side of
            // them: all the places where rounding decides.
            let here = reference_f16_to_f32(h);
            let next = reference_f16_to_f32(h.wrapping_add(1));
            let mid = ((f64::from(here) + f64::from(next)) / 2.0) as f32;
            for x in [
                here,
                mid,
                f32::from_bits(mid.to_bits().wrapping_sub(1)),
                f32::from_bits(mid.to_bits() + 1),
            ] {
                assert_eq!(
                    f32_to_f16(x),
                    reference_f32_to_f16(x),
                    "{x} ({:#010x})",
                    x.to_bits()
                );
            }
        }
        // A sparse sweep over every f32 exponent, sign and mantissa region (NaNs included).
        for bits in (0..=u32::MAX).step_by(257) {
            let x = f32::from_bits(bits);
            assert_eq!(f32_to_f16(x), reference_f32_to_f16(x), "{bits:#010x}");
        }
    }

    fn is_nan_f16(h: u16) -> bool {
        h & EXP_MASK == EXP_MASK && h & 0x03ff != 0
    }

    #[test]
    fn exhaustive_round_trip() {
        for h in 0..=u16::MAX {
            let f = f16_to_f32(h);
            if is_nan_f16(h) {
                assert!(f.is_nan(), "{h:#06x}");
                assert!(is_nan_f16(f32_to_f16(f)), "{h:#06x}");
            } else {
                assert_eq!(f32_to_f16(f), h, "{h:#06x} -> {f}");
            }
        }
    }

    #[test]
    fn known_values() {
        let cases: [(f32, u16); 18] = [
            (0.0, 0x0000),
            (-0.0, 0x8000),
            (1.0, 0x3c00),
            (-2.0, 0xc000),
            (0.5, 0x3800),
            (0.1, 0x2e66),
            (1.0 / 3.0, 0x3555),
            (65504.0, 0x7bff),
            (65519.0, 0x7bff),
            (65520.0, 0x7c00), // halfway to the next step rounds to even: infinity
            (1.0e10, 0x7c00),
            (f32::NEG_INFINITY, 0xfc00),
            (6.103_515_6e-5, 0x0400), // 2^-14, smallest normal
            (5.960_464_5e-8, 0x0001), // 2^-24, smallest subnormal
            (2.980_232_2e-8, 0x0000), // 2^-25, tie -> even (zero)
            (4.470_348_4e-8, 0x0001), // 1.5 * 2^-25 -> 2^-24
            (8.940_697e-8, 0x0002),   // 1.5 * 2^-24, tie -> even (2)
            (1.0e-30, 0x0000),
        ];
        for (x, h) in cases {
            assert_eq!(f32_to_f16(x), h, "{x}");
        }
        // Ties in the normal range: 1 + 2^-11 -> 1.0 (even), 1 + 3 * 2^-11 -> 1 + 2^-9 (even).
        assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        // Just below the normal boundary rounds up into it.
        assert_eq!(f32_to_f16(2f32.powi(-14) - 2f32.powi(-25)), 0x0400);
        assert!(is_nan_f16(f32_to_f16(f32::NAN)));
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x83ff), -(1023.0 * 2f32.powi(-24)));
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
    }

    /// The chosen f16 is never farther from `x` than its two neighbours (nearest rounding).
    #[test]
    fn rounds_to_nearest_for_pseudo_random_inputs() {
        let mut state: u32 = 0x1234_5678;
        for _ in 0..200_000 {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            // Spread the f32s over the half range (exponents about 2^-26 .. 2^17).
            let x = f32::from_bits((state & 0x807f_ffff) | ((96 + (state >> 23) % 48) << 23));
            let h = f32_to_f16(x);
            let err = (f64::from(f16_to_f32(h)) - f64::from(x)).abs();
            if h & 0x7fff >= 0x7c00 {
                assert!(x.abs() >= 65520.0, "{x}");
                continue;
            }
            for n in [h.wrapping_sub(1), h.wrapping_add(1)] {
                if n & 0x7fff < 0x7c00 && (n ^ h) & SIGN == 0 {
                    let other = (f64::from(f16_to_f32(n)) - f64::from(x)).abs();
                    assert!(
                        err <= other,
                        "{x}: {h:#06x} err {err} vs {n:#06x} err {other}"
                    );
                }
            }
        }
    }

    #[test]
    fn half2_packing_matches_bit_layout() {
        let p = pack_half2(1.0, -2.0);
        assert_eq!(p.to_bits(), 0xc000_3c00);
        assert_eq!(unpack_half2(p), (1.0, -2.0));
        let (lo, hi) = unpack_half2(pack_half2(0.1, 300.0));
        assert_eq!(lo, f16_to_f32(0x2e66));
        assert_eq!(hi, 300.0);
    }
}
