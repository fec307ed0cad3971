use glam::Vec3;

use super::*;
use crate::bake::encode::{decode_frame, decode_frame_normals, encode, EncodedVat, Precision};
use crate::bake::SkinnedFrames;
use crate::clip::{plan_clips, ClipSpec};
use crate::lod_mesh::{LodLevel, LodVertex};

/// `vertices` vertices over `frames` frames (one looped clip), pseudo-random positions in a box
/// away from the origin and unit normals, encoded at `precision` with normals.
fn bake(vertices: usize, frames: usize, precision: Precision) -> EncodedVat {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let texels = vertices * frames;
    let positions = (0..texels)
        .map(|_| Vec3::new(next() * 3.0 - 1.0, next() * 1.8, next() + 5.0))
        .collect();
    let normals = (0..texels)
        .map(|_| Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize_or(Vec3::Y))
        .collect();
    let skinned = SkinnedFrames {
        vertex_count: vertices,
        frame_count: frames,
        positions,
        normals,
    };
    let clips = plan_clips(&[ClipSpec {
        name: "walk".into(),
        duration: frames as f32,
        fps: 1.0,
        looped: true,
    }])
    .unwrap();
    encode(&skinned, &clips, precision, true).unwrap()
}

fn columns() -> Vec<ColumnSource> {
    vec![
        ColumnSource::Vertex(7),
        ColumnSource::Bound {
            vertices: [1, 4, 9],
            weights: [0.2, 0.3, 0.5],
        },
        ColumnSource::Vertex(0),
        ColumnSource::Bound {
            vertices: [3, 3, 8],
            weights: [0.0, 0.25, 0.75],
        },
        ColumnSource::Bound {
            vertices: [2, 5, 6],
            weights: [1.0, 0.0, 0.0],
        },
    ]
}

#[test]
fn pruned_columns_decode_to_their_sources_at_every_frame() {
    for precision in [Precision::Half, Precision::Float] {
        let vat = bake(10, 6, precision);
        let cols = columns();
        let pruned = apply_columns(&vat, &cols).unwrap();
        assert_eq!(pruned.params, vat.params);
        assert_eq!(pruned.layout.vertex_count, 5);
        assert_eq!(pruned.layout.frame_count, 6);
        // Half: 2^-12 of the extent per axis, plus f32 rounding of the sum.
        let step = match precision {
            Precision::Half => vat.params.scale * (0.5f32).powi(12) + Vec3::splat(1e-5),
            Precision::Float => Vec3::splat(1e-5),
        };
        for f in 0..6 {
            let ps = decode_frame(&vat, f);
            let ns = decode_frame_normals(&vat, f);
            let got_p = decode_frame(&pruned, f);
            let got_n = decode_frame_normals(&pruned, f);
            for (c, col) in cols.iter().enumerate() {
                let (want_p, want_n) = match *col {
                    ColumnSource::Vertex(v) => (ps[v as usize], ns[v as usize]),
                    ColumnSource::Bound { vertices, weights } => (
                        (0..3).map(|k| ps[vertices[k] as usize] * weights[k]).sum(),
                        bound_normal(&ns, vertices, weights),
                    ),
                };
                let err = (got_p[c] - want_p).abs();
                assert!(
                    err.cmple(step).all(),
                    "frame {f} column {c}: {err} > {step}"
                );
                if matches!(col, ColumnSource::Vertex(_)) {
                    assert_eq!(got_p[c], want_p, "a copied column keeps its bits");
                    assert_eq!(got_n[c], want_n);
                }
                let angle = got_n[c].dot(want_n).clamp(-1.0, 1.0).acos().to_degrees();
                assert!(
                    angle < 0.05,
                    "frame {f} column {c}: normal off by {angle} degrees"
                );
            }
        }
    }
}

#[test]
fn a_bound_column_is_the_weighted_sum_not_a_copy() {
    let vat = bake(10, 3, Precision::Float);
    let cols = [ColumnSource::Bound {
        vertices: [0, 1, 2],
        weights: [0.5, 0.5, 0.0],
    }];
    let pruned = apply_columns(&vat, &cols).unwrap();
    for f in 0..3 {
        let mid = (decode_position(&vat, f, 0) + decode_position(&vat, f, 1)) * 0.5;
        assert!((decode_position(&pruned, f, 0) - mid).length() < 1e-6);
    }
}

#[test]
fn pruning_shrinks_the_textures() {
    let vat = bake(100, 8, Precision::Half);
    let pruned = apply_columns(&vat, &columns()).unwrap();
    assert_eq!(vat.positions.len(), 100 * 8 * 8);
    assert_eq!(pruned.positions.len(), 5 * 8 * 8);
    assert_eq!(pruned.normals.len(), 5 * 8 * 4);
}

#[test]
fn applied_into_buffers_each_texture_is_what_apply_columns_writes() {
    let vat = bake(100, 8, Precision::Half);
    let mut cols = columns();
    cols.push(ColumnSource::Bound {
        vertices: [3, 40, 99],
        weights: [0.25, 0.5, 0.25],
    });
    let whole = apply_columns(&vat, &cols).unwrap();
    // Buffers of other bytes, in a layout with no padding texels: every byte is written.
    assert_eq!(whole.layout.texel_count(), whole.layout.used_texels());
    let both = apply_columns_in(&vat, &cols, true, |n| vec![0xAAu8; n]).unwrap();
    assert_eq!(both.layout, whole.layout);
    assert_eq!(both.positions, whole.positions);
    assert_eq!(both.normals, whole.normals);
    // Normals only (a tangent bake): the same normal bytes, and an empty position buffer.
    let tangents = apply_columns_in(&vat, &cols, false, |n| vec![0xAAu8; n]).unwrap();
    assert_eq!(tangents.normals, whole.normals);
    assert!(tangents.positions.is_empty());
    // The errors come before any buffer exists.
    let no_buffer = |_| -> Vec<u8> { unreachable!("no buffer is made for bad columns") };
    assert_eq!(
        apply_columns_in(&vat, &[], true, no_buffer),
        Err(VatError::NoMeshes)
    );
}

#[test]
fn bad_columns_are_refused() {
    let vat = bake(10, 2, Precision::Half);
    assert_eq!(apply_columns(&vat, &[]), Err(VatError::NoMeshes));
    let e = apply_columns(&vat, &[ColumnSource::Vertex(10)]).unwrap_err();
    assert!(
        matches!(
            e,
            VatError::IndexOutOfRange {
                index: 10,
                len: 10,
                ..
            }
        ),
        "{e}"
    );
    for weights in [[0.5, 0.6, 0.0], [-0.5, 1.0, 0.5], [f32::NAN, 0.5, 0.5]] {
        let e = apply_columns(
            &vat,
            &[ColumnSource::Bound {
                vertices: [0, 1, 2],
                weights,
            }],
        )
        .unwrap_err();
        assert!(e.to_string().contains("column 0 has weights"), "{e}");
    }
}

#[test]
fn level_positions_follow_each_vertex_column() {
    let source = [Vec3::X, Vec3::Y, Vec3::Z, Vec3::ONE];
    let vertex = |column| LodVertex {
        sources: [0; 3],
        weights: [1.0, 0.0, 0.0],
        column,
    };
    let chain = LodChain {
        levels: vec![LodLevel {
            vertices: vec![vertex(1), vertex(0), vertex(1)],
            surfaces: Vec::new(),
        }],
        columns: vec![
            ColumnSource::Vertex(3),
            ColumnSource::Bound {
                vertices: [0, 1, 2],
                weights: [0.5, 0.25, 0.25],
            },
        ],
    };
    let mid = Vec3::new(0.5, 0.25, 0.25);
    assert_eq!(
        level_positions(&chain, 0, &source),
        vec![mid, Vec3::ONE, mid]
    );
}
