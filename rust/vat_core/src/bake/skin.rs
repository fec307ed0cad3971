//! CPU skinning of every sampled frame with Godot's semantics, into root-space positions/normals.
//!
//! Per vertex, matching `MeshInstance3D::bake_mesh_from_current_blend_shape_mix` followed by
//! `bake_mesh_from_current_skeleton_pose`:
//! 1. Blend shapes with `|w| > 1e-4`: [`BlendMode::Normalized`] accumulates `w * (shape - source)`,
//!    [`BlendMode::Relative`] accumulates `w * shape` (shapes are deltas).
//! 2. Skinning: `p' = p + sum w_j (B_j p - p)` over influences with `w_j >= f32::EPSILON`;
//!    normals use the Gram-Schmidt orthonormalized bone basis and are renormalized.
//! 3. Root space: `P = pre * p'`, `N = normalize(pre^-T * n')`; a zero normal becomes +Y.
//!
//! Frames are independent, so they are skinned in parallel (rayon); the result does not depend
//! on the thread count.
//!
//! This file holds the bake's inputs (meshes, skins, blend shapes, per-frame poses), their
//! per-frame checks and the parallel driver [`skin_frames`]; the per-vertex math, which computes
//! these steps in fewer operations (the same results up to f32 rounding), is in `skin_math`.

use glam::{Affine3A, Vec3};
use rayon::prelude::*;

use crate::bake::skin_math::{skin_frame, Influences, Scratch};
use crate::bake::validate::validate;
use crate::bounds::Bounds;
use crate::error::{Result, VatError};

/// How a mesh's blend shape arrays are interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlendMode {
    /// Shapes are full target positions; the delta is `shape - source`.
    Normalized,
    /// Shapes are deltas added to the source.
    Relative,
}

/// One blend shape (morph target) of a mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct BlendShape {
    /// One per mesh vertex.
    pub positions: Vec<Vec3>,
    /// One per mesh vertex, or empty when the shape does not change normals.
    pub normals: Vec<Vec3>,
}

/// A mesh's skin: per-vertex bone indices and weights.
#[derive(Debug, Clone, PartialEq)]
pub struct SkinBinding {
    /// `influences` bone indices per vertex, each `< bind_count` where its weight is used.
    pub bones: Vec<u32>,
    /// `influences` weights per vertex.
    pub weights: Vec<f32>,
    /// Influences per vertex: 4 or 8.
    pub influences: usize,
    /// Binds (bones) of the skin; each frame supplies this many bone transforms.
    pub bind_count: usize,
}

/// A mesh to bake, as extracted from the source scene.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshSource {
    /// Name used in error messages.
    pub name: String,
    /// Rest positions in mesh space.
    pub positions: Vec<Vec3>,
    /// One per vertex, or empty: then every baked normal is +Y.
    pub normals: Vec<Vec3>,
    /// `None` for a rigid mesh (moved only by its node transform).
    pub skin: Option<SkinBinding>,
    /// Morph targets; each frame supplies one weight per shape.
    pub blend_shapes: Vec<BlendShape>,
    /// Interpretation of `blend_shapes`.
    pub blend_mode: BlendMode,
}

/// The pose of one mesh at one sampled frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeshFrame {
    /// The mesh node's transform relative to the character root.
    pub pre: Affine3A,
    /// Skinned mesh: one per skin bind, `bone_global_pose * bind_pose` (skeleton space).
    /// Rigid mesh: empty (ignored).
    pub bones: Vec<Affine3A>,
    /// One weight per blend shape.
    pub blend_weights: Vec<f32>,
}

/// Root-space vertices of every frame, frame-major: index `frame * vertex_count + vertex`, with
/// the meshes' vertices concatenated in input order.
#[derive(Debug, Clone, PartialEq)]
pub struct SkinnedFrames {
    /// Vertices per frame over all meshes.
    pub vertex_count: usize,
    /// Frames baked.
    pub frame_count: usize,
    /// `frame_count * vertex_count` positions.
    pub positions: Vec<Vec3>,
    /// `frame_count * vertex_count` unit normals.
    pub normals: Vec<Vec3>,
}

impl SkinnedFrames {
    /// Positions of one frame. Panics if `frame >= frame_count`.
    pub fn frame_positions(&self, frame: usize) -> &[Vec3] {
        &self.positions[frame * self.vertex_count..(frame + 1) * self.vertex_count]
    }

    /// Normals of one frame. Panics if `frame >= frame_count`.
    pub fn frame_normals(&self, frame: usize) -> &[Vec3] {
        &self.normals[frame * self.vertex_count..(frame + 1) * self.vertex_count]
    }
}

/// The bounds of `points` (empty for none).
pub fn bounds_of(points: &[Vec3]) -> Bounds {
    Bounds::from_points(points)
}

/// `meshes` with `tangents[m]` (one unit vector per vertex of mesh `m`) in place of their normals,
/// and blend shapes that leave them unchanged: skinning these as normals gives the skinned
/// tangents, since Godot skins a vertex's tangent with the same matrix as its normal. Meshes
/// whose tangent list does not match their vertex count keep +X.
pub fn tangent_sources(meshes: &[MeshSource], tangents: &[Vec<Vec3>]) -> Vec<MeshSource> {
    meshes
        .iter()
        .enumerate()
        .map(|(m, mesh)| {
            let mut t = mesh.clone();
            t.normals = match tangents.get(m) {
                Some(list) if list.len() == mesh.positions.len() => list.clone(),
                _ => vec![Vec3::X; mesh.positions.len()],
            };
            for shape in &mut t.blend_shapes {
                shape.normals.clear();
            }
            t
        })
        .collect()
}

/// Skins every frame: `frames[f][m]` is mesh `m`'s pose at frame `f`; `labels(f)` names frame
/// `f` in errors (e.g. "clip 'walk' frame 3").
///
/// Errors: those of [`validate`]; [`VatError::FrameMismatch`] if a frame lacks one entry per
/// mesh; [`VatError::MismatchedArray`] if a frame's bone count differs from `bind_count` or its
/// blend weight count from the shape count; [`VatError::NonFinite`] for a non-finite transform,
/// weight or result. Errors are reported for the lowest offending frame, deterministically.
pub fn skin_frames(
    meshes: &[MeshSource],
    frames: &[Vec<MeshFrame>],
    labels: &dyn Fn(usize) -> String,
) -> Result<SkinnedFrames> {
    validate(meshes)?;
    for (f, frame) in frames.iter().enumerate() {
        check_frame(meshes, frame, f, labels)?;
    }
    let vertex_count: usize = meshes.iter().map(|m| m.positions.len()).sum();
    let texels = vertex_count * frames.len();
    let influences = Influences::of_meshes(meshes);
    let mut positions = zeroed_vec3s(texels);
    let mut normals = zeroed_vec3s(texels);
    let bad = positions
        .par_chunks_mut(vertex_count)
        .zip(normals.par_chunks_mut(vertex_count))
        .zip(frames.par_iter())
        .enumerate()
        .map_init(Scratch::default, |scratch, (f, ((ps, ns), frame))| {
            skin_frame(meshes, &influences, frame, true, ps, ns, scratch).map(|(m, v)| (f, m, v))
        })
        .flatten()
        .min();
    if let Some((f, m, v)) = bad {
        let what = format!(
            "skinned vertex {v} of mesh '{}' at {}",
            meshes[m].name,
            labels(f)
        );
        return Err(VatError::NonFinite { what });
    }
    Ok(SkinnedFrames {
        vertex_count,
        frame_count: frames.len(),
        positions,
        normals,
    })
}

/// `len` zero vectors from one zeroed allocation. `vec![Vec3::ZERO; len]` writes every element
/// (Vec3 is not a type the standard library knows to be zero), a whole pass over memory that is
/// overwritten anyway; an allocation of f32 zeros comes from `calloc`, which skips that pass for
/// fresh pages.
fn zeroed_vec3s(len: usize) -> Vec<Vec3> {
    let floats = vec![0.0f32; len * 3];
    if floats.capacity() != len * 3 {
        return vec![Vec3::ZERO; len];
    }
    let mut floats = std::mem::ManuallyDrop::new(floats);
    // SAFETY: Vec3 is `repr(C)` of three f32 (size 12, align 4), so an allocation of exactly
    // `3 * len` f32 (checked above) has the layout of one of `len` Vec3, and zero bits are
    // Vec3::ZERO. Ownership moves to the new Vec; the old one is never dropped.
    unsafe { Vec::from_raw_parts(floats.as_mut_ptr().cast::<Vec3>(), len, len) }
}

pub(crate) fn check_frame(
    meshes: &[MeshSource],
    frame: &[MeshFrame],
    f: usize,
    labels: &dyn Fn(usize) -> String,
) -> Result<()> {
    if frame.len() != meshes.len() {
        return Err(VatError::FrameMismatch {
            frame: f,
            expected_meshes: meshes.len(),
            got: frame.len(),
        });
    }
    for (mesh, mf) in meshes.iter().zip(frame) {
        let mismatch = |what, expected, got| VatError::MismatchedArray {
            mesh: mesh.name.clone(),
            what,
            expected,
            got,
        };
        let bones: &[Affine3A] = match &mesh.skin {
            Some(skin) if mf.bones.len() != skin.bind_count => {
                return Err(mismatch("bone transforms", skin.bind_count, mf.bones.len()));
            }
            Some(_) => &mf.bones,
            None => &[],
        };
        if mf.blend_weights.len() != mesh.blend_shapes.len() {
            return Err(mismatch(
                "blend shape weights",
                mesh.blend_shapes.len(),
                mf.blend_weights.len(),
            ));
        }
        let finite = mf.pre.is_finite()
            && bones.iter().all(Affine3A::is_finite)
            && mf.blend_weights.iter().all(|w| w.is_finite());
        if !finite {
            let what = format!("transform of mesh '{}' at {}", mesh.name, labels(f));
            return Err(VatError::NonFinite { what });
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
