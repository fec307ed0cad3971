//! The chain's VAT: only the columns some level uses, bound columns baked as weighted sums.

use glam::Vec3;
use rayon::prelude::*;

use super::{ColumnSource, LodChain};
use crate::bake::encode::{
    decode_normal, decode_position, encode_position_texels, layout_for, position_texel_bytes,
    EncodedVat, NORMAL_TEXEL_BYTES,
};
use crate::error::{Result, VatError};
use crate::octahedral::oct_encode_f16_into;

/// Largest distance of a bound column's weights from summing to 1.
const WEIGHT_SUM_TOLERANCE: f32 = 1e-4;

/// A VAT over `columns` (in their order) from the full bake `vat`, with the same
/// [`EncodingParams`](crate::bake::encode::EncodingParams), bounds and clip bounds.
///
/// A [`ColumnSource::Vertex`] column copies that vertex's texels bit for bit. A
/// [`ColumnSource::Bound`] column is, at every frame, the weighted sum of the three vertices'
/// decoded positions, encoded again (so within the encoding's quantisation step of the exact sum),
/// and the normalized weighted sum of their decoded normals.
///
/// Errors: [`VatError::NoMeshes`] for no columns, [`VatError::IndexOutOfRange`] for a column
/// naming a vertex the bake does not have, [`VatError::InvalidValue`] for weights that are negative,
/// not finite or do not sum to 1, [`VatError::TooLarge`] as for any bake.
pub fn apply_columns<B: AsRef<[u8]>>(
    vat: &EncodedVat<B>,
    columns: &[ColumnSource],
) -> Result<EncodedVat<Vec<u8>>> {
    apply_columns_in(vat, columns, true, |bytes| vec![0u8; bytes])
}

/// [`apply_columns`] into buffers that `buffer(bytes)` makes, `bytes` long and zeroed (Godot
/// arrays, say, so the textures are not copied after). Without `with_positions` the position
/// texture is `buffer(0)` and nothing is written to it: a tangent bake needs only its normals.
/// The same errors as [`apply_columns`], found before any buffer is made.
pub fn apply_columns_in<B: AsRef<[u8]>, O: AsMut<[u8]>>(
    vat: &EncodedVat<B>,
    columns: &[ColumnSource],
    with_positions: bool,
    mut buffer: impl FnMut(usize) -> O,
) -> Result<EncodedVat<O>> {
    check_columns(columns, vat.layout.vertex_count)?;
    let frames = vat.layout.frame_count as usize;
    let layout = layout_for(columns.len(), frames)?;
    let bpt = position_texel_bytes(vat.params.precision);
    let has_normals = !vat.normals.as_ref().is_empty();
    let mut positions = buffer(if with_positions {
        layout.texel_count() * bpt
    } else {
        0
    });
    let mut normals = buffer(if has_normals {
        layout.texel_count() * NORMAL_TEXEL_BYTES
    } else {
        0
    });
    let (fp, fnb) = (columns.len() * bpt, columns.len() * NORMAL_TEXEL_BYTES);
    // Borrowed bytes are shared across threads whatever `B` is.
    let source = &vat.borrowed();
    per_frame(with_positions.then(|| positions.as_mut()), frames, fp)
        .into_par_iter()
        .zip(per_frame(
            has_normals.then(|| normals.as_mut()),
            frames,
            fnb,
        ))
        .enumerate()
        .for_each(|(f, (p, n))| write_frame(source, columns, f as u32, p, n));
    Ok(EncodedVat {
        layout,
        params: vat.params,
        positions,
        normals,
        bounds: vat.bounds,
        clip_bounds: vat.clip_bounds.clone(),
    })
}

/// `frames` slices of `bytes` from the start of `buffer`, or `frames` nones without one.
fn per_frame(buffer: Option<&mut [u8]>, frames: usize, bytes: usize) -> Vec<Option<&mut [u8]>> {
    match buffer {
        Some(b) => b[..frames * bytes].chunks_mut(bytes).map(Some).collect(),
        None => (0..frames).map(|_| None).collect(),
    }
}

/// One frame of the pruned VAT into its position texels and normal texels, each if given.
fn write_frame(
    vat: &EncodedVat<&[u8]>,
    columns: &[ColumnSource],
    f: u32,
    out_p: Option<&mut [u8]>,
    out_n: Option<&mut [u8]>,
) {
    let bpt = position_texel_bytes(vat.params.precision);
    let src = vat.positions;
    // A bound column decodes only its own three vertices, not the frame: LOD2's few hundred
    // columns read a fraction of it (the knight's 473, at most 1,419 of 7,024 vertices).
    if let Some(out_p) = out_p {
        for (c, out) in columns.iter().zip(out_p.chunks_exact_mut(bpt)) {
            match *c {
                ColumnSource::Vertex(v) => {
                    let at = vat.layout.index(f, v) * bpt;
                    out.copy_from_slice(&src[at..at + bpt]);
                }
                ColumnSource::Bound { vertices, weights } => {
                    let ps = vertices.map(|v| decode_position(vat, f, v));
                    let p = weighted(&ps, [0, 1, 2], weights);
                    encode_position_texels(&[p], &vat.params, out);
                }
            }
        }
    }
    let Some(out_n) = out_n else { return };
    let src = vat.normals;
    for (c, out) in columns
        .iter()
        .zip(out_n.chunks_exact_mut(NORMAL_TEXEL_BYTES))
    {
        match *c {
            ColumnSource::Vertex(v) => {
                let at = vat.layout.index(f, v) * NORMAL_TEXEL_BYTES;
                out.copy_from_slice(&src[at..at + NORMAL_TEXEL_BYTES]);
            }
            ColumnSource::Bound { vertices, weights } => {
                let ns = vertices.map(|v| decode_normal(vat, f, v));
                let n = bound_normal(&ns, [0, 1, 2], weights);
                oct_encode_f16_into(&[n], out);
            }
        }
    }
}

/// `w0 * p[a] + w1 * p[b] + w2 * p[c]`.
pub(crate) fn weighted(ps: &[Vec3], vertices: [u32; 3], weights: [f32; 3]) -> Vec3 {
    ps[vertices[0] as usize] * weights[0]
        + ps[vertices[1] as usize] * weights[1]
        + ps[vertices[2] as usize] * weights[2]
}

/// The normalized weighted sum of three normals; the heaviest one's if the sum vanishes.
pub(crate) fn bound_normal(ns: &[Vec3], vertices: [u32; 3], weights: [f32; 3]) -> Vec3 {
    let heaviest = (0..3).fold(
        0,
        |best, k| if weights[k] > weights[best] { k } else { best },
    );
    weighted(ns, vertices, weights)
        .try_normalize()
        .unwrap_or(ns[vertices[heaviest] as usize])
}

/// Every column's vertices below `vertex_count` and its weights valid.
fn check_columns(columns: &[ColumnSource], vertex_count: u32) -> Result<()> {
    if columns.is_empty() {
        return Err(VatError::NoMeshes);
    }
    for (i, c) in columns.iter().enumerate() {
        let (vertices, weights) = match *c {
            ColumnSource::Vertex(v) => ([v; 3], [1.0, 0.0, 0.0]),
            ColumnSource::Bound { vertices, weights } => (vertices, weights),
        };
        if let Some(&v) = vertices.iter().find(|&&v| v >= vertex_count) {
            return Err(VatError::IndexOutOfRange {
                what: "source vertex of a VAT column",
                index: i64::from(v),
                len: vertex_count as usize,
            });
        }
        let sum: f32 = weights.iter().sum();
        let valid = weights.iter().all(|w| w.is_finite() && *w >= 0.0)
            && (sum - 1.0).abs() <= WEIGHT_SUM_TOLERANCE;
        if !valid {
            return Err(VatError::InvalidValue {
                what: "bound VAT column",
                detail: format!(
                    "column {i} has weights {weights:?}; they must be >= 0 and sum to 1"
                ),
            });
        }
    }
    Ok(())
}

/// The reference positions of `level`'s vertices (one per vertex, in order) for source-vertex
/// positions `source_positions` (a pose): each vertex's column, a source vertex's position or a
/// bound column's weighted sum. Panics if `level` or a column's vertex is out of range.
pub fn level_positions(chain: &LodChain, level: usize, source_positions: &[Vec3]) -> Vec<Vec3> {
    chain.levels[level]
        .vertices
        .iter()
        .map(|v| match chain.columns[v.column as usize] {
            ColumnSource::Vertex(s) => source_positions[s as usize],
            ColumnSource::Bound { vertices, weights } => {
                weighted(source_positions, vertices, weights)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
