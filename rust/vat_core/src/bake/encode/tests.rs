use glam::Vec3;

use super::*;
use crate::clip::{plan_clips, ClipSpec};
use crate::octahedral::oct_encode_f16;

/// Deterministic pseudo-random floats in [0, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn clips(frames: &[(u32, bool)]) -> Vec<Clip> {
    // duration * fps = intervals; looped clips store n frames, others n + 1.
    let specs: Vec<ClipSpec> = frames
        .iter()
        .enumerate()
        .map(|(i, &(count, looped))| ClipSpec {
            name: format!("c{i}"),
            duration: if looped {
                count as f32
            } else {
                (count - 1) as f32
            },
            fps: 1.0,
            looped,
        })
        .collect();
    plan_clips(&specs).unwrap()
}

/// `vertex_count` vertices per frame with pseudo-random positions in a box, unit normals.
fn random_frames(vertex_count: usize, frame_count: usize, seed: u64) -> SkinnedFrames {
    let mut rng = Lcg(seed);
    let texels = vertex_count * frame_count;
    let positions = (0..texels)
        .map(|_| {
            Vec3::new(
                rng.next() * 4.0 - 2.0,
                rng.next() * 1.8,
                rng.next() * 0.5 + 10.0,
            )
        })
        .collect();
    let normals = (0..texels)
        .map(|_| {
            Vec3::new(rng.next() - 0.5, rng.next() - 0.5, rng.next() - 0.5).normalize_or(Vec3::Y)
        })
        .collect();
    SkinnedFrames {
        vertex_count,
        frame_count,
        positions,
        normals,
    }
}

#[test]
fn layout_sizes() {
    let l = VatLayout::new(100, 10).unwrap();
    assert_eq!((l.width, l.height, l.texel_count()), (1000, 1, 1000));
    let l = VatLayout::new(10_000, 3).unwrap();
    assert_eq!((l.width, l.height), (16384, 2));
    // i = 2 * 10000 + 5000 = 25000 = 16384 + 8616.
    assert_eq!(l.texel(2, 5000), (8616, 1));
    assert_eq!(l.used_texels(), 30_000);
    let l = VatLayout::new(0, 0).unwrap();
    assert_eq!((l.width, l.height), (1, 1));
    assert_eq!(VatLayout::new(16384, 16384).unwrap().height, 16384);
    assert_eq!(
        VatLayout::new(16384, 16385),
        Err(VatError::TooLarge {
            vertices: 16384,
            frames: 16385,
            texels: 16384 * 16385,
            max_texels: 16384 * 16384
        })
    );
}

#[test]
fn bytes_per_texel() {
    assert_eq!(bytes_per_vertex_frame(Precision::Half, false), 8);
    assert_eq!(bytes_per_vertex_frame(Precision::Half, true), 12);
    assert_eq!(bytes_per_vertex_frame(Precision::Float, false), 16);
    assert_eq!(bytes_per_vertex_frame(Precision::Float, true), 20);
}

#[test]
fn float_encoding_is_exact_and_laid_out_linearly() {
    let skinned = random_frames(7, 5, 1);
    let vat = encode(&skinned, &clips(&[(5, true)]), Precision::Float, false).unwrap();
    assert_eq!((vat.layout.width, vat.layout.height), (35, 1));
    assert_eq!(vat.positions.len(), 35 * 16);
    assert!(vat.normals.is_empty());
    assert_eq!(
        (vat.params.offset, vat.params.scale),
        (Vec3::ZERO, Vec3::ONE)
    );
    for f in 0..5 {
        assert_eq!(decode_frame(&vat, f), skinned.frame_positions(f as usize));
    }
    let p = skinned.positions[8]; // frame 1, vertex 1 -> texel 8
    let texel = &vat.positions[8 * 16..9 * 16];
    assert_eq!(&texel[..4], &p.x.to_le_bytes());
    assert_eq!(&texel[8..12], &p.z.to_le_bytes());
    assert_eq!(&texel[12..], &1.0f32.to_le_bytes());
}

#[test]
fn half_encoding_meets_its_error_bound() {
    let skinned = random_frames(3000, 12, 2);
    let vat = encode(&skinned, &clips(&[(12, false)]), Precision::Half, false).unwrap();
    assert_eq!((vat.layout.width, vat.layout.height), (16384, 3));
    let extent = vat.bounds.size();
    // 2^-12 of the extent from f16, plus f32 rounding of coordinates up to ~10.5 in magnitude.
    let bound = extent * 2f32.powi(-12) + Vec3::splat(4.0 * f32::EPSILON * 10.5);
    let mut worst = Vec3::ZERO;
    for f in 0..12 {
        for (d, p) in decode_frame(&vat, f)
            .iter()
            .zip(skinned.frame_positions(f as usize))
        {
            worst = worst.max((*d - *p).abs());
        }
    }
    assert!(worst.cmple(bound).all(), "worst {worst} bound {bound}");
    // The bound is not vacuous: half precision does lose something.
    assert!(worst.max_element() > 1e-6);
    // Alpha is f16 1.0 and padding after the last used texel is zero.
    assert_eq!(&vat.positions[6..8], &[0x00, 0x3c]);
    let used = 3000 * 12 * 8;
    assert!(vat.positions[used..].iter().all(|&b| b == 0));
    assert_eq!(vat.positions.len(), vat.layout.texel_count() * 8);
}

#[test]
fn half_encoding_of_a_flat_axis_is_exact() {
    let positions = vec![Vec3::new(0.0, 5.0, 1.0), Vec3::new(2.0, 5.0, 3.0)];
    let skinned = SkinnedFrames {
        vertex_count: 1,
        frame_count: 2,
        positions,
        normals: vec![],
    };
    let vat = encode(&skinned, &clips(&[(2, false)]), Precision::Half, false).unwrap();
    assert_eq!(vat.params.offset, Vec3::new(0.0, 5.0, 1.0));
    assert_eq!(vat.params.scale, Vec3::new(2.0, 1.0, 2.0));
    // Corners of the bounds map to s = 0 and s = 1, both exact in f16.
    assert_eq!(decode_position(&vat, 0, 0), Vec3::new(0.0, 5.0, 1.0));
    assert_eq!(decode_position(&vat, 1, 0), Vec3::new(2.0, 5.0, 3.0));
}

#[test]
fn bounds_per_clip() {
    // One vertex; frame f sits at (f, -f, 0).
    let positions = (0..5)
        .map(|f| Vec3::new(f as f32, -(f as f32), 0.0))
        .collect();
    let skinned = SkinnedFrames {
        vertex_count: 1,
        frame_count: 5,
        positions,
        normals: vec![],
    };
    let vat = encode(
        &skinned,
        &clips(&[(2, true), (3, false)]),
        Precision::Half,
        false,
    )
    .unwrap();
    assert_eq!(
        (vat.bounds.min, vat.bounds.max),
        (Vec3::new(0.0, -4.0, 0.0), Vec3::new(4.0, 0.0, 0.0))
    );
    let [a, b] = [vat.clip_bounds[0], vat.clip_bounds[1]];
    assert_eq!(
        (a.min, a.max),
        (Vec3::new(0.0, -1.0, 0.0), Vec3::new(1.0, 0.0, 0.0))
    );
    assert_eq!(
        (b.min, b.max),
        (Vec3::new(2.0, -4.0, 0.0), Vec3::new(4.0, -2.0, 0.0))
    );
}

#[test]
fn encoding_is_deterministic() {
    let skinned = random_frames(5000, 9, 3);
    let c = clips(&[(4, true), (5, false)]);
    let a = encode(&skinned, &c, Precision::Half, true).unwrap();
    let b = encode(&skinned, &c, Precision::Half, true).unwrap();
    assert_eq!(a, b);
}

#[test]
fn encode_rejects_inconsistent_input() {
    let skinned = random_frames(4, 3, 4);
    assert_eq!(
        encode(&skinned, &[], Precision::Half, false),
        Err(VatError::NoClips)
    );
    assert_eq!(
        encode(&skinned, &clips(&[(4, true)]), Precision::Half, false),
        Err(VatError::BadLength {
            what: "baked frames (sum of clip frame counts)",
            expected: 4,
            got: 3
        })
    );
    let mut nan = skinned.clone();
    nan.positions[6].y = f32::NAN;
    assert_eq!(
        encode(&nan, &clips(&[(3, true)]), Precision::Float, false),
        Err(VatError::NonFinite {
            what: "baked position of vertex 2 at frame 1".into()
        })
    );
    let mut no_normals = skinned;
    no_normals.normals.clear();
    assert!(matches!(
        encode(&no_normals, &clips(&[(3, true)]), Precision::Half, true),
        Err(VatError::BadLength {
            what: "baked normals",
            ..
        })
    ));
}

#[test]
fn normals_round_trip_through_the_texture() {
    let skinned = random_frames(50, 2, 5);
    let vat = encode(&skinned, &clips(&[(2, true)]), Precision::Float, true).unwrap();
    assert_eq!(vat.normals.len(), vat.layout.texel_count() * 4);
    let decoded = decode_frame_normals(&vat, 1);
    for (d, n) in decoded.iter().zip(skinned.frame_normals(1)) {
        assert!(d.dot(*n) > 0.999_999, "{d} vs {n}");
    }
    let plain = encode(&skinned, &clips(&[(2, true)]), Precision::Float, false).unwrap();
    assert!(decode_frame_normals(&plain, 0).is_empty());
}

/// Every texel of the vectorised encoders equals the per-texel formula of the module docs, for
/// lengths that leave every possible partial block.
#[test]
fn texels_match_the_per_texel_formula() {
    for (vertices, frames) in [(1, 1), (3, 5), (7, 3), (13, 2), (37, 3), (1000, 2)] {
        let skinned = random_frames(vertices, frames, vertices as u64);
        let c = clips(&[(frames as u32, true)]);
        let vat = encode(&skinned, &c, Precision::Half, true).unwrap();
        let (offset, scale) = (vat.params.offset, vat.params.scale);
        for (i, (p, n)) in skinned.positions.iter().zip(&skinned.normals).enumerate() {
            let s = (*p - offset) / scale;
            let half = |v: f32| f32_to_f16(v.clamp(0.0, 1.0));
            let expect = [half(s.x), half(s.y), half(s.z), HALF_ONE];
            let texel = &vat.positions[i * 8..i * 8 + 8];
            let got: Vec<u16> = texel
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect();
            assert_eq!(got, expect, "position texel {i} of {vertices} x {frames}");
            let [x, y] = oct_encode_f16(*n);
            let texel = &vat.normals[i * 4..i * 4 + 4];
            assert_eq!(texel[..2], x.to_le_bytes(), "normal texel {i}");
            assert_eq!(texel[2..], y.to_le_bytes(), "normal texel {i}");
        }
    }
}

/// The half-position kernel this CPU runs (F16C where it has it) and the portable one give the
/// bits of the per-coordinate formula, on values inside, outside and at the edges of [0, 1] and
/// ones that round to f16 subnormals, with a partial last block.
#[test]
fn half_position_kernels_agree() {
    let mut rng = Lcg(99);
    let mut ps: Vec<Vec3> = (0..4099)
        .map(|_| Vec3::new(rng.next() * 2.0 - 0.5, rng.next(), rng.next() * 1e-4))
        .collect();
    ps.extend([
        Vec3::ZERO,
        Vec3::ONE,
        Vec3::new(3e-8, 6e-8, 1e-38),
        Vec3::new(-1e-30, 1.0 + 1e-7, 0.5 + 2f32.powi(-12)),
    ]);
    let (offset, scale) = (Vec3::new(0.0, -0.25, 0.0), Vec3::new(1.0, 1.5, 1.0));
    let mut fast = vec![0u8; ps.len() * 8];
    encode_half(&ps, offset, scale, &mut fast);
    let mut portable = vec![0u8; ps.len() * 8];
    encode_half_positions::<SoftHalf>(&ps, offset, scale, &mut portable);
    assert!(fast == portable);
    for (p, texel) in ps.iter().zip(fast.chunks_exact(8)) {
        let expect = [0, 1, 2].map(|k| half_coordinate(p[k], offset[k], scale[k]));
        let got = [0, 2, 4].map(|at| u16::from_le_bytes([texel[at], texel[at + 1]]));
        assert_eq!(got, expect, "{p}");
    }
}
