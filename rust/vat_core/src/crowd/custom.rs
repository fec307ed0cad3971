//! Per-actor custom data for users' shaders (health, selection glow, hit flash): one RGBA32F
//! texel per actor, read by the shader library as `inst.custom`.

use crate::error::{check_len, Result, VatError};

/// Floats per actor in the custom data texture.
pub const CUSTOM_FLOATS: usize = 4;

/// Writes `values[i]` as actor `actor_ids[i]`'s custom data into `out` ([`CUSTOM_FLOATS`] floats
/// per actor, `actor_count` actors), after checking every entry. Returns whether any float
/// changed, so a caller can skip the upload of values equal to those stored (compared as bits).
///
/// Errors, for the first offending entry with `out` untouched: [`VatError::BadLength`] if the
/// arrays differ in length or `out` holds fewer than `actor_count` actors;
/// [`VatError::IndexOutOfRange`] for an id outside `0..actor_count`; [`VatError::NonFinite`] for
/// a value with a NaN or infinite channel.
pub fn write_custom_bulk(
    out: &mut [f32],
    actor_ids: &[i32],
    values: &[[f32; 4]],
    actor_count: usize,
) -> Result<bool> {
    check_len("custom values", actor_ids.len(), values.len())?;
    if out.len() < actor_count * CUSTOM_FLOATS {
        return Err(VatError::BadLength {
            what: "custom data floats",
            expected: actor_count * CUSTOM_FLOATS,
            got: out.len(),
        });
    }
    for (i, (&id, v)) in actor_ids.iter().zip(values).enumerate() {
        if id < 0 || id as usize >= actor_count {
            return Err(VatError::IndexOutOfRange {
                what: "actor id",
                index: i64::from(id),
                len: actor_count,
            });
        }
        if !v.iter().all(|c| c.is_finite()) {
            return Err(VatError::NonFinite {
                what: format!("custom value {i} ({v:?}) of actor {id}"),
            });
        }
    }
    let mut changed = false;
    for (&id, v) in actor_ids.iter().zip(values) {
        let dst = &mut out[id as usize * CUSTOM_FLOATS..(id as usize + 1) * CUSTOM_FLOATS];
        changed |= dst.iter().zip(v).any(|(a, b)| a.to_bits() != b.to_bits());
        dst.copy_from_slice(v);
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_land_at_their_actors_and_report_changes() {
        let mut out = vec![0.0; 3 * CUSTOM_FLOATS];
        let red = [1.0, 0.0, 0.0, 1.0];
        let half = [0.5, 0.5, 0.5, 0.5];
        assert!(write_custom_bulk(&mut out, &[2, 0], &[red, half], 3).unwrap());
        assert_eq!(&out[8..12], &red);
        assert_eq!(&out[0..4], &half);
        assert_eq!(&out[4..8], &[0.0; 4], "actor 1 untouched");
        // The same values again: nothing changed, so nothing needs uploading.
        assert!(!write_custom_bulk(&mut out, &[2, 0], &[red, half], 3).unwrap());
        assert!(write_custom_bulk(&mut out, &[1], &[red], 3).unwrap());
    }

    #[test]
    fn bad_entries_are_refused_and_change_nothing() {
        let mut out = vec![0.0; 2 * CUSTOM_FLOATS];
        let v = [1.0; 4];
        let before = out.clone();
        let bad = [
            write_custom_bulk(&mut out, &[0, 1], &[v], 2),
            write_custom_bulk(&mut out, &[0, 2], &[v, v], 2),
            write_custom_bulk(&mut out, &[0, -1], &[v, v], 2),
            write_custom_bulk(&mut out, &[0, 1], &[v, [f32::NAN, 0.0, 0.0, 0.0]], 2),
            write_custom_bulk(&mut out, &[0], &[v], 3),
        ];
        assert!(matches!(bad[0], Err(VatError::BadLength { .. })));
        assert!(matches!(
            bad[1],
            Err(VatError::IndexOutOfRange { index: 2, .. })
        ));
        assert!(matches!(
            bad[2],
            Err(VatError::IndexOutOfRange { index: -1, .. })
        ));
        assert!(matches!(bad[3], Err(VatError::NonFinite { .. })));
        assert!(matches!(bad[4], Err(VatError::BadLength { .. })));
        assert_eq!(out, before);
    }
}
