//! Equipment on a body's bone texture: a rig re-expressed over another bake's palette, so a sword
//! under a bone attachment, or armour skinned to the same skeleton, reads the body's bone texture
//! instead of storing one of its own.

use glam::{Affine3A, Vec3};

use super::rig::{BoneRig, RigVertex};
use super::texture::{bone_rows, EncodedBones};

/// Every transform of a bone texture, decoded: `frames * palette`, frame-major (as
/// [`BoneRig::matrices`]).
pub fn decode_matrices(b: &EncodedBones) -> Vec<Affine3A> {
    let palette = b.palette as usize;
    (0..b.frames() as usize * palette)
        .map(|i| {
            let rows = bone_rows(b, i / palette, i % palette);
            let basis = glam::Mat3::from_cols(
                Vec3::new(rows[0].x, rows[1].x, rows[2].x),
                Vec3::new(rows[0].y, rows[1].y, rows[2].y),
                Vec3::new(rows[0].z, rows[1].z, rows[2].z),
            );
            Affine3A::from_mat3_translation(basis, Vec3::new(rows[0].w, rows[1].w, rows[2].w))
        })
        .collect()
}

/// `rig` over the palette `source` (`frames * palette` transforms, frame-major, the same frames as
/// the rig's): each of the rig's entries becomes a source entry `j` with a constant offset `C`
/// (its transform is `source_j * C` at every frame, within `tolerance` at every rest point that
/// follows it), and each vertex rests at `C * rest`. A mesh skinned to the same skeleton finds its
/// binds with `C` the identity; a mesh under a bone attachment finds the bone with `C` its offset.
///
/// `Err` naming what does not fit: a frame count that differs, an entry no source entry moves
/// like, a vertex whose influences need different offsets.
pub fn share_palette(
    rig: &BoneRig,
    source: &[Affine3A],
    palette: usize,
    tolerance: f32,
) -> Result<BoneRig, String> {
    if palette == 0 || source.len() != rig.frames * palette {
        return Err(format!(
            "the bone source has {} transforms, not {} bones x the {} frames baked here (bake both from the same scene and clips)",
            source.len(),
            palette.max(1),
            rig.frames
        ));
    }
    // How far from its transform's origin each entry's rest points lie.
    let mut reach = vec![0.0f32; rig.palette];
    for v in &rig.vertices {
        for &(e, w) in &v.influences {
            if w != 0.0 {
                reach[e as usize] = reach[e as usize].max(v.rest.length());
            }
        }
    }
    let mut mapped = Vec::with_capacity(rig.palette);
    for (e, &r) in reach.iter().enumerate() {
        let own = |f: usize| rig.matrices[f * rig.palette + e];
        let found = (0..palette).find_map(|j| {
            let theirs = |f: usize| source[f * palette + j];
            let det = theirs(0).matrix3.determinant();
            if !det.is_finite() || det.abs() < 1e-12 {
                return None;
            }
            let offset = theirs(0).inverse() * own(0);
            let fits = (0..rig.frames).all(|f| {
                let want = own(f);
                let got = theirs(f) * offset;
                let basis = (want.matrix3 - got.matrix3).to_cols_array();
                let worst = basis.iter().fold(0.0f32, |m, x| m.max(x.abs()));
                worst * 3.0 * r + (want.translation - got.translation).length() <= tolerance
            });
            fits.then_some((j as u32, offset))
        });
        match found {
            Some(m) => mapped.push(m),
            None => {
                return Err(format!(
                    "transform {e} of this bake moves like none of the bone source's {palette} (is it baked from the same scene, clips and fps?)"
                ))
            }
        }
    }
    let mut vertices = Vec::with_capacity(rig.vertices.len());
    for (i, v) in rig.vertices.iter().enumerate() {
        let used: Vec<(usize, f32)> = v
            .influences
            .iter()
            .filter(|(_, w)| *w != 0.0)
            .map(|&(e, w)| (e as usize, w))
            .collect();
        let offset = used
            .first()
            .map_or(Affine3A::IDENTITY, |&(e, _)| mapped[e].1);
        let same = used.iter().all(|&(e, _)| {
            let o = mapped[e].1;
            let d = (o.matrix3 - offset.matrix3).to_cols_array();
            d.iter().all(|x| x.abs() <= 1e-4)
                && (o.translation - offset.translation).length() <= tolerance
        });
        if !same {
            return Err(format!(
                "vertex {i} follows transforms that sit differently on the bone source's bones; bake it with its own bone texture"
            ));
        }
        let mut out: RigVertex = *v;
        out.rest = offset.transform_point3(v.rest);
        let normal_matrix = offset.matrix3.inverse().transpose();
        out.normal = (normal_matrix * glam::Vec3A::from(v.normal))
            .normalize_or(glam::Vec3A::Y)
            .into();
        out.tangent = (offset.matrix3 * glam::Vec3A::from(v.tangent))
            .normalize_or(glam::Vec3A::X)
            .into();
        for slot in &mut out.influences {
            if slot.1 != 0.0 {
                slot.0 = mapped[slot.0 as usize].0;
            }
        }
        vertices.push(out);
    }
    Ok(BoneRig {
        palette,
        frames: rig.frames,
        matrices: source.to_vec(),
        influences: rig.influences,
        vertices,
    })
}
