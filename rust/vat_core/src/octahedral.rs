//! Octahedral normal encoding (unit vector <-> point of `[-1, 1]^2`) and its f16 quantisation.
//!
//! The shader's `vat_oct_decode` is [`oct_decode`] line for line.

use glam::{Vec2, Vec3};

#[cfg(target_arch = "x86_64")]
use crate::half::F16c;
use crate::half::{f16_to_f32, f32_to_f16, HalfLanes, SoftHalf};

/// Octahedral encoding of a direction into `[-1, 1]^2`: project onto the L1 unit octahedron and
/// fold the lower hemisphere over the diagonals. A zero or non-finite vector encodes +Y.
pub fn oct_encode(n: Vec3) -> Vec2 {
    let l1 = n.x.abs() + n.y.abs() + n.z.abs();
    if !(l1 > 0.0 && l1.is_finite()) {
        return Vec2::new(0.0, 1.0);
    }
    let p = n / l1;
    if p.z >= 0.0 {
        Vec2::new(p.x, p.y)
    } else {
        Vec2::new(
            (1.0 - p.y.abs()) * sign_not_zero(p.x),
            (1.0 - p.x.abs()) * sign_not_zero(p.y),
        )
    }
}

/// [`oct_encode`] quantised to f16 bit patterns the way the normal texture stores it: of the
/// (up to) four f16 pairs bracketing the exact encoding, the one whose decoded direction is
/// closest to `n` ("precise" octahedral quantisation). Angular error: below 0.05 degrees over a
/// 200k-direction Fibonacci lattice (tested); an adversarial search finds at most about 0.0554
/// degrees, the format's limit. Plain rounding reaches 0.058 on the same lattice.
pub fn oct_encode_f16(n: Vec3) -> [u16; 2] {
    let e = oct_encode(n);
    let n = n.normalize_or(Vec3::Y);
    let (hx, hy) = (f32_to_f16(e.x), f32_to_f16(e.y));
    let xs = [hx, f16_neighbor_toward(hx, e.x)];
    let ys = [hy, f16_neighbor_toward(hy, e.y)];
    let mut best = [hx, hy];
    let mut best_dot = f32::NEG_INFINITY;
    for x in xs {
        for y in ys {
            let d = oct_decode(Vec2::new(f16_to_f32(x), f16_to_f32(y))).dot(n);
            if d > best_dot {
                (best, best_dot) = ([x, y], d);
            }
        }
    }
    best
}

/// Normals per block of [`oct_encode_f16_into`]: enough lanes for the compiler to vectorise.
const BLOCK: usize = 16;

/// [`oct_encode_f16`] of every normal, stored as the normal texture holds it: per normal 4 bytes,
/// x then y as f16 little-endian. `out` must hold `4 * normals.len()` bytes.
///
/// Same bits as calling [`oct_encode_f16`] one by one (the same operations in the same order, so
/// the same f32 roundings), but branch-free over blocks of normals so it runs several at once.
pub fn oct_encode_f16_into(normals: &[Vec3], out: &mut [u8]) {
    assert_eq!(out.len(), normals.len() * 4, "4 bytes per normal");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        if std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU has AVX2 and F16C (checked just above).
            unsafe { oct_encode_blocks_f16c(normals, out) };
        } else {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { oct_encode_blocks_avx2(normals, out) };
        }
        return;
    }
    oct_encode_blocks::<SoftHalf>(normals, out);
}

/// [`oct_encode_blocks`] compiled for 8-lane vectors: the same IEEE operations (Rust never fuses
/// a multiply and an add), so the same bits, about twice as fast where divisions dominate.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn oct_encode_blocks_avx2(normals: &[Vec3], out: &mut [u8]) {
    oct_encode_blocks::<SoftHalf>(normals, out);
}

/// [`oct_encode_blocks_avx2`] with the f16 conversions done by the F16C instructions, which
/// round to nearest even exactly as [`f32_to_f16`] and convert back exactly as [`f16_to_f32`]
/// (the values here are finite and within `[-1, 1]`), so the bits are the same again.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
fn oct_encode_blocks_f16c(normals: &[Vec3], out: &mut [u8]) {
    oct_encode_blocks::<F16c>(normals, out);
}

/// [`oct_encode_f16`] of a block of normals at a time, written with selects instead of branches
/// and in phases around the f16 conversions so those run on whole blocks.
#[inline(always)]
fn oct_encode_blocks<H: HalfLanes>(normals: &[Vec3], out: &mut [u8]) {
    for (ns, bytes) in normals.chunks(BLOCK).zip(out.chunks_mut(BLOCK * 4)) {
        let mut lanes = [[0.0, 1.0, 0.0]; BLOCK];
        for (lane, n) in lanes.iter_mut().zip(ns) {
            *lane = n.to_array();
        }
        let (mut ex, mut ey) = ([0.0; BLOCK], [0.0; BLOCK]);
        let mut unit = [[0.0; 3]; BLOCK];
        for (k, &[x, y, z]) in lanes.iter().enumerate() {
            (ex[k], ey[k]) = oct_encode_lane(x, y, z);
            unit[k] = normalize_or_up_lane(x, y, z);
        }
        let (hx, hy) = (H::to_f16(&ex), H::to_f16(&ey));
        let (vx, vy) = (H::to_f32(&hx), H::to_f32(&hy));
        let hx1: [u16; BLOCK] = std::array::from_fn(|k| neighbor_toward_lane(hx[k], vx[k], ex[k]));
        let hy1: [u16; BLOCK] = std::array::from_fn(|k| neighbor_toward_lane(hy[k], vy[k], ey[k]));
        let (vx1, vy1) = (H::to_f32(&hx1), H::to_f32(&hy1));
        let mut packed = [0u32; BLOCK];
        for (k, p) in packed.iter_mut().enumerate() {
            let [ux, uy, uz] = unit[k];
            let score = |x: f32, y: f32| decode_dot_lane(x, y, ux, uy, uz);
            // The candidates in oct_encode_f16's order; a later one wins only if strictly closer.
            let mut best = (hx[k], hy[k]);
            let first = score(vx[k], vy[k]);
            let mut best_dot = select(first > f32::NEG_INFINITY, first, f32::NEG_INFINITY);
            let candidates = [
                (hx[k], hy1[k], vx[k], vy1[k]),
                (hx1[k], hy[k], vx1[k], vy[k]),
                (hx1[k], hy1[k], vx1[k], vy1[k]),
            ];
            for (cx, cy, fx, fy) in candidates {
                let d = score(fx, fy);
                let closer = d > best_dot;
                best = (
                    select_u16(closer, cx, best.0),
                    select_u16(closer, cy, best.1),
                );
                best_dot = select(closer, d, best_dot);
            }
            *p = u32::from(best.0) | (u32::from(best.1) << 16);
        }
        for (dst, p) in bytes.chunks_exact_mut(4).zip(packed) {
            dst.copy_from_slice(&p.to_le_bytes());
        }
    }
}

/// [`oct_encode`] of `(x, y, z)` with selects instead of branches.
#[inline(always)]
fn oct_encode_lane(x: f32, y: f32, z: f32) -> (f32, f32) {
    let l1 = x.abs() + y.abs() + z.abs();
    let valid = (l1 > 0.0) & (l1 < f32::INFINITY);
    let (px, py, pz) = (x / l1, y / l1, z / l1);
    let fold_x = (1.0 - py.abs()) * sign_not_zero(px);
    let fold_y = (1.0 - px.abs()) * sign_not_zero(py);
    // Not `z >= 0`: a tiny negative z over l1 > 2 rounds to -0, which counts as upper.
    let upper = pz >= 0.0;
    (
        select(valid, select(upper, px, fold_x), 0.0),
        select(valid, select(upper, py, fold_y), 1.0),
    )
}

/// `Vec3::normalize_or(Vec3::Y)` of `(x, y, z)` with its operations, branch-free.
#[inline(always)]
fn normalize_or_up_lane(x: f32, y: f32, z: f32) -> [f32; 3] {
    let rcp = 1.0 / ((x * x + y * y) + z * z).sqrt();
    let unit = (rcp > 0.0) & (rcp < f32::INFINITY);
    [
        select(unit, x * rcp, 0.0),
        select(unit, y * rcp, 1.0),
        select(unit, z * rcp, 0.0),
    ]
}

/// `oct_decode(e).dot(u)` with the operations of [`oct_decode`], `Vec3::normalize` and
/// `Vec3::dot` in their order.
#[inline(always)]
fn decode_dot_lane(ex: f32, ey: f32, ux: f32, uy: f32, uz: f32) -> f32 {
    let z = 1.0 - ex.abs() - ey.abs();
    let t = (-z).max(0.0);
    let x = ex - t * sign_not_zero(ex);
    let y = ey - t * sign_not_zero(ey);
    let rcp = 1.0 / ((x * x + y * y) + z * z).sqrt();
    (x * rcp) * ux + (y * rcp) * uy + (z * rcp) * uz
}

/// [`f16_neighbor_toward`] with selects, given `v`, the value of `h`.
#[inline(always)]
fn neighbor_toward_lane(h: u16, v: f32, x: f32) -> u16 {
    let up = x > v;
    let from_zero = select_u16(up, 0x0001, 0x8001);
    let negative = h & 0x8000 != 0;
    let step = select_u16(up != negative, h.wrapping_add(1), h.wrapping_sub(1));
    select_u16(v == x, h, select_u16(h & 0x7fff == 0, from_zero, step))
}

#[inline(always)]
fn select(c: bool, a: f32, b: f32) -> f32 {
    if c {
        a
    } else {
        b
    }
}

#[inline(always)]
fn select_u16(c: bool, a: u16, b: u16) -> u16 {
    if c {
        a
    } else {
        b
    }
}

/// The f16 adjacent to `h` on the side of `x` (so `h` and the result bracket `x`); `h` itself if
/// it equals `x`. Only used for values in `[-1, 1]`, far from infinity.
fn f16_neighbor_toward(h: u16, x: f32) -> u16 {
    let v = f16_to_f32(h);
    if v == x {
        return h;
    }
    let up = x > v;
    if h & 0x7fff == 0 {
        return if up { 0x0001 } else { 0x8001 };
    }
    // Bit patterns grow with magnitude, so moving up is +1 for positive and -1 for negative.
    let negative = h & 0x8000 != 0;
    if up != negative {
        h + 1
    } else {
        h - 1
    }
}

/// Inverse of [`oct_encode`]: the unit direction for a point of `[-1, 1]^2`.
pub fn oct_decode(e: Vec2) -> Vec3 {
    let z = 1.0 - e.x.abs() - e.y.abs();
    // Unfold the lower hemisphere: shift x and y toward zero by the depth below the equator.
    let t = (-z).max(0.0);
    let x = e.x - t * sign_not_zero(e.x);
    let y = e.y - t * sign_not_zero(e.y);
    Vec3::new(x, y, z).normalize()
}

/// `1.0` for `v >= 0`, else `-1.0` (GLSL `sign` would give 0 at 0 and break the fold).
fn sign_not_zero(v: f32) -> f32 {
    if v >= 0.0 {
        1.0
    } else {
        -1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The batch encoder gives exactly the bits of the one-by-one encoder, on the sphere, on
    /// random (not unit) vectors, on zero, tiny, huge and non-finite ones, and on a length that
    /// leaves a partial block: the build this CPU runs (F16C where it has it) and the portable
    /// one.
    #[test]
    fn batch_encoding_matches_one_by_one() {
        let mut dirs = sphere_directions(50_000);
        let mut state: u32 = 0x9e37_79b9;
        for _ in 0..50_000 {
            let mut next = || {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (state >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
            };
            dirs.push(Vec3::new(next(), next(), next()) * 3.0);
            // On the equator with l1 > 2, where a tiny negative z over l1 rounds to -0.
            dirs.push(Vec3::new(next() * 4.0, next() * 4.0, -1e-45));
        }
        dirs.extend([
            Vec3::ZERO,
            Vec3::splat(1e-30),
            Vec3::new(1e-45, 0.0, -1e-45),
            Vec3::splat(1e30),
            Vec3::new(f32::NAN, 0.0, 1.0),
            Vec3::new(0.0, f32::INFINITY, 1.0),
            Vec3::new(-0.0, -0.0, -1.0),
            Vec3::new(1.0, -0.0, 0.0),
            Vec3::new(3.0, 0.0, -1e-45),
        ]);
        dirs.push(Vec3::new(0.3, -0.2, -0.9)); // 50,000 + 100,000 + 10: a partial last block
        let mut bytes = vec![0u8; dirs.len() * 4];
        oct_encode_f16_into(&dirs, &mut bytes);
        let mut portable = vec![0u8; dirs.len() * 4];
        oct_encode_blocks::<SoftHalf>(&dirs, &mut portable);
        assert!(bytes == portable);
        for (n, b) in dirs.iter().zip(bytes.chunks_exact(4)) {
            let [x, y] = oct_encode_f16(*n);
            let got = [
                u16::from_le_bytes([b[0], b[1]]),
                u16::from_le_bytes([b[2], b[3]]),
            ];
            assert_eq!(got, [x, y], "{n}");
        }
    }

    #[test]
    fn oct_known_values() {
        assert_eq!(oct_encode(Vec3::Z), Vec2::ZERO);
        assert_eq!(oct_encode(Vec3::X), Vec2::X);
        assert_eq!(oct_encode(Vec3::NEG_Z), Vec2::ONE);
        assert_eq!(oct_encode(Vec3::ZERO), Vec2::Y);
        assert_eq!(oct_decode(Vec2::ONE), Vec3::NEG_Z);
        assert_eq!(oct_decode(Vec2::Y), Vec3::Y);
        assert_eq!(oct_decode(Vec2::new(0.0, -1.0)), Vec3::NEG_Y);
        let d = oct_decode(oct_encode(Vec3::new(1.0, -2.0, -3.0)));
        assert!((d - Vec3::new(1.0, -2.0, -3.0).normalize()).length() < 1e-6);
    }

    /// Unit directions covering the sphere evenly (Fibonacci lattice) plus the axes and diagonals.
    fn sphere_directions(count: usize) -> Vec<Vec3> {
        let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
        let mut dirs: Vec<Vec3> = (0..count)
            .map(|i| {
                let y = 1.0 - 2.0 * (i as f64 + 0.5) / count as f64;
                let r = (1.0 - y * y).sqrt();
                let a = golden * i as f64;
                Vec3::new((r * a.cos()) as f32, y as f32, (r * a.sin()) as f32)
            })
            .collect();
        for x in [-1.0, 0.0, 1.0] {
            for y in [-1.0, 0.0, 1.0] {
                for z in [-1.0, 0.0, 1.0] {
                    dirs.extend(Vec3::new(x, y, z).try_normalize());
                }
            }
        }
        dirs
    }

    fn angle_degrees(a: Vec3, b: Vec3) -> f64 {
        f64::from(a.cross(b).length())
            .atan2(f64::from(a.dot(b)))
            .to_degrees()
    }

    /// Worst angular error over `dirs` after storing each as two f16 with `quantise`.
    fn worst_oct_error(dirs: &[Vec3], quantise: impl Fn(Vec3) -> [u16; 2]) -> f64 {
        dirs.iter()
            .map(|&n| {
                let [x, y] = quantise(n);
                angle_degrees(oct_decode(Vec2::new(f16_to_f32(x), f16_to_f32(y))), n)
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn oct_f16_angular_error_below_005_degrees() {
        let dirs = sphere_directions(200_000);
        let precise = worst_oct_error(&dirs, oct_encode_f16);
        assert!(precise < 0.05, "worst angular error {precise} degrees");
        // Plain per-component rounding is measurably worse on the same directions (about 0.058).
        let rounded = worst_oct_error(&dirs, |n| {
            let e = oct_encode(n);
            [f32_to_f16(e.x), f32_to_f16(e.y)]
        });
        assert!(
            rounded > 0.055 && precise < rounded,
            "{precise} vs {rounded}"
        );
    }
}
