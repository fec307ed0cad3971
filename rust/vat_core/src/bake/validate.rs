//! Validation of the static mesh data handed to [`skin_frames`](super::skin_frames).

use crate::bake::skin::{MeshSource, SkinBinding};
use crate::error::{Result, VatError};

/// Checks the static mesh data: [`VatError::NoMeshes`] if there is no vertex at all;
/// [`VatError::MismatchedArray`] for normals, skin or blend shape arrays of the wrong length or
/// influences other than 4/8; [`VatError::BoneOutOfRange`] for a used (weight >= `f32::EPSILON`)
/// bone index `>= bind_count`; [`VatError::NonFinite`] for NaN/infinite positions or weights.
pub fn validate(meshes: &[MeshSource]) -> Result<()> {
    if meshes.iter().all(|m| m.positions.is_empty()) {
        return Err(VatError::NoMeshes);
    }
    meshes.iter().try_for_each(validate_mesh)
}

fn validate_mesh(mesh: &MeshSource) -> Result<()> {
    let n = mesh.positions.len();
    let check = |what, expected: usize, got: usize| {
        if got == expected {
            Ok(())
        } else {
            Err(VatError::MismatchedArray {
                mesh: mesh.name.clone(),
                what,
                expected,
                got,
            })
        }
    };
    if !mesh.normals.is_empty() {
        check("normals", n, mesh.normals.len())?;
    }
    for shape in &mesh.blend_shapes {
        check("blend shape positions", n, shape.positions.len())?;
        if !shape.normals.is_empty() {
            check("blend shape normals", n, shape.normals.len())?;
        }
    }
    if let Some(v) = mesh.positions.iter().position(|p| !p.is_finite()) {
        let what = format!("position of vertex {v} of mesh '{}'", mesh.name);
        return Err(VatError::NonFinite { what });
    }
    let Some(skin) = &mesh.skin else {
        return Ok(());
    };
    if skin.influences != 4 && skin.influences != 8 {
        let expected = if skin.influences > 4 { 8 } else { 4 };
        check(
            "bone influences per vertex (4 or 8)",
            expected,
            skin.influences,
        )?;
    }
    check("bone indices", n * skin.influences, skin.bones.len())?;
    check("bone weights", n * skin.influences, skin.weights.len())?;
    validate_influences(mesh, skin)
}

fn validate_influences(mesh: &MeshSource, skin: &SkinBinding) -> Result<()> {
    for (i, (&bone, &w)) in skin.bones.iter().zip(&skin.weights).enumerate() {
        let vertex = i / skin.influences;
        if !w.is_finite() {
            let what = format!("bone weight of vertex {vertex} of mesh '{}'", mesh.name);
            return Err(VatError::NonFinite { what });
        }
        // Unused slots often hold garbage indices; only weights that skinning reads matter.
        if w >= f32::EPSILON && bone as usize >= skin.bind_count {
            return Err(VatError::BoneOutOfRange {
                mesh: mesh.name.clone(),
                vertex,
                bone,
                bind_count: skin.bind_count,
            });
        }
    }
    Ok(())
}
