//! The skinning math of one frame, per mesh: the steps listed in `skin` (blend shapes, bone
//! skinning, root space) for every vertex, with the buffers reused across frames ([`Scratch`])
//! and the influences listed once per bake ([`Influences`]).
//! [`skin_frames`](crate::bake::skin_frames) drives it over all frames.
//!
//! The hot loop computes the same thing in fewer operations: `pre` is folded into each frame's
//! bone matrices (`P = pre p + sum w_j (pre B_j p - pre p)`, the same sum moved through the
//! linear map) and the normal matrix into each orthonormalized basis (one normalization instead
//! of two, which does not change the direction); the used influences of each vertex are listed
//! once per bake. Results differ from the step-by-step formulas only by f32 rounding.

use glam::{Affine3A, Mat3A, Vec3, Vec3A};

use crate::bake::skin::{BlendMode, MeshFrame, MeshSource, SkinBinding};

/// Blend shapes below this absolute weight are skipped, as Godot does.
pub(super) const BLEND_WEIGHT_EPSILON: f32 = 1e-4;

/// A skin's influences that skinning reads (weight >= `f32::EPSILON`), listed once per bake so
/// the per-frame loop neither tests weights nor reads unused slots: vertex `v` has `counts[v]`
/// consecutive entries of `slots`, after those of the vertices before it.
pub(crate) struct Influences {
    counts: Vec<u8>,
    slots: Vec<(u32, f32)>,
}

impl Influences {
    /// Those of each mesh, `None` for a rigid one.
    pub(crate) fn of_meshes(meshes: &[MeshSource]) -> Vec<Option<Self>> {
        meshes
            .iter()
            .map(|m| m.skin.as_ref().map(Self::new))
            .collect()
    }

    fn new(skin: &SkinBinding) -> Self {
        let mut counts = Vec::with_capacity(skin.bones.len() / skin.influences.max(1));
        let mut slots = Vec::with_capacity(skin.bones.len());
        let vertex_slots = skin
            .bones
            .chunks_exact(skin.influences)
            .zip(skin.weights.chunks_exact(skin.influences));
        for (bones, weights) in vertex_slots {
            let before = slots.len();
            let used = bones
                .iter()
                .zip(weights)
                .filter(|(_, &w)| w >= f32::EPSILON);
            slots.extend(used.map(|(&b, &w)| (b, w)));
            counts.push((slots.len() - before) as u8);
        }
        Self { counts, slots }
    }
}

/// Per-thread buffers reused across frames so the hot loop never allocates.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Per bind: `pre * bone` and the normal matrix times the orthonormalized bone basis.
    bones: Vec<(Affine3A, Mat3A)>,
    /// Active blend shapes: (index, weight).
    shapes: Vec<(usize, f32)>,
    /// The mesh's blended positions and normals, when a blend shape is active.
    blended: Vec<(Vec3A, Vec3A)>,
}

/// Skins all meshes of one frame into `ps`/`ns`; returns the first (mesh, vertex) whose result
/// is not finite. Without `normals`, every normal is +Y (the positions are the same).
pub(crate) fn skin_frame(
    meshes: &[MeshSource],
    influences: &[Option<Influences>],
    frame: &[MeshFrame],
    normals: bool,
    ps: &mut [Vec3],
    ns: &mut [Vec3],
    scratch: &mut Scratch,
) -> Option<(usize, usize)> {
    let mut start = 0;
    for (m, ((mesh, infl), mf)) in meshes.iter().zip(influences).zip(frame).enumerate() {
        let end = start + mesh.positions.len();
        let (ps, ns) = (&mut ps[start..end], &mut ns[start..end]);
        if skin_mesh(mesh, infl.as_ref(), mf, normals, ps, ns, scratch) {
            // Rare: find which vertex, for the error message.
            return Some((m, ps.iter().position(|p| !p.is_finite()).unwrap_or(0)));
        }
        start = end;
    }
    None
}

/// Skins one mesh at one frame; true if some position is not finite.
fn skin_mesh(
    mesh: &MeshSource,
    influences: Option<&Influences>,
    mf: &MeshFrame,
    normals: bool,
    ps: &mut [Vec3],
    ns: &mut [Vec3],
    scratch: &mut Scratch,
) -> bool {
    let normal_matrix = normal_matrix(mf.pre.matrix3);
    scratch.bones.clear();
    if influences.is_some() {
        let bones = mf.bones.iter().map(|b| {
            let basis = normal_matrix * orthonormalized(b.matrix3);
            (mf.pre * *b, basis)
        });
        scratch.bones.extend(bones);
    }
    scratch.shapes.clear();
    let active = mf
        .blend_weights
        .iter()
        .enumerate()
        .filter(|(_, w)| w.abs() > BLEND_WEIGHT_EPSILON);
    scratch.shapes.extend(active.map(|(i, &w)| (i, w)));
    let pose = Pose {
        pre: mf.pre,
        normal_matrix,
        bones: &scratch.bones,
    };
    let has_normals = normals && !mesh.normals.is_empty();
    if scratch.shapes.is_empty() {
        let src = |v: usize| {
            let n = mesh.normals.get(v).map_or(Vec3A::Y, |&n| n.into());
            (Vec3A::from(mesh.positions[v]), n)
        };
        pose.skin(influences, has_normals, src, ps, ns)
    } else {
        blend(mesh, &scratch.shapes, &mut scratch.blended);
        let blended = &scratch.blended;
        pose.skin(influences, has_normals, |v| blended[v], ps, ns)
    }
}

/// One mesh's transforms at one frame, folded for the vertex loop.
struct Pose<'a> {
    pre: Affine3A,
    normal_matrix: Mat3A,
    bones: &'a [(Affine3A, Mat3A)],
}

impl Pose<'_> {
    /// Skins every vertex that `src` gives (position, normal); true if a position is not finite.
    #[inline(always)]
    fn skin(
        &self,
        influences: Option<&Influences>,
        has_normals: bool,
        src: impl Fn(usize) -> (Vec3A, Vec3A),
        ps: &mut [Vec3],
        ns: &mut [Vec3],
    ) -> bool {
        match (influences, has_normals) {
            (Some(infl), true) => self.skinned::<true>(infl, src, ps, ns),
            (Some(infl), false) => self.skinned::<false>(infl, src, ps, ns),
            (None, true) => self.rigid::<true>(src, ps, ns),
            (None, false) => self.rigid::<false>(src, ps, ns),
        }
    }

    #[inline(always)]
    fn rigid<const NORMALS: bool>(
        &self,
        src: impl Fn(usize) -> (Vec3A, Vec3A),
        ps: &mut [Vec3],
        ns: &mut [Vec3],
    ) -> bool {
        let mut finite = true;
        for (v, (p_out, n_out)) in ps.iter_mut().zip(ns.iter_mut()).enumerate() {
            let (p, n) = src(v);
            let world = self.pre.transform_point3a(p);
            finite &= world.is_finite();
            *p_out = world.into();
            // Normalized afterwards, many at a time (see normalize_or_up).
            *n_out = if NORMALS {
                (self.normal_matrix * n).into()
            } else {
                Vec3::Y
            };
        }
        if NORMALS {
            normalize_or_up(ns);
        }
        !finite
    }

    /// `P = P0 + sum w_j (C_j p - P0)` with `P0 = pre p`, `C_j = pre B_j`; the normal likewise
    /// with the normal matrix, normalized once (+Y when it vanishes).
    #[inline(always)]
    fn skinned<const NORMALS: bool>(
        &self,
        influences: &Influences,
        src: impl Fn(usize) -> (Vec3A, Vec3A),
        ps: &mut [Vec3],
        ns: &mut [Vec3],
    ) -> bool {
        let mut finite = true;
        let mut at = 0;
        let outputs = ps.iter_mut().zip(ns.iter_mut()).zip(&influences.counts);
        for (v, ((p_out, n_out), &count)) in outputs.enumerate() {
            let (p, n) = src(v);
            let p0 = self.pre.transform_point3a(p);
            let n0 = self.normal_matrix * n;
            let (mut dp, mut dn) = (Vec3A::ZERO, Vec3A::ZERO);
            let end = at + usize::from(count);
            for &(bone, w) in &influences.slots[at..end] {
                let (transform, basis) = &self.bones[bone as usize];
                dp += w * (transform.transform_point3a(p) - p0);
                if NORMALS {
                    dn += w * (*basis * n - n0);
                }
            }
            at = end;
            let world = p0 + dp;
            finite &= world.is_finite();
            *p_out = world.into();
            *n_out = if NORMALS { (n0 + dn).into() } else { Vec3::Y };
        }
        if NORMALS {
            normalize_or_up(ns);
        }
        !finite
    }
}

/// `n.normalize_or(Vec3::Y)` for every vector, eight at a time: one vertex at a time, the square
/// root and division of each normalization sat on the loop's critical path.
fn normalize_or_up(ns: &mut [Vec3]) {
    let mut blocks = ns.chunks_exact_mut(NORMALIZE_LANES);
    for block in &mut blocks {
        normalize_block(block.try_into().expect("a whole block"));
    }
    let rest = blocks.into_remainder();
    let mut padded = [Vec3::Y; NORMALIZE_LANES];
    padded[..rest.len()].copy_from_slice(rest);
    normalize_block(&mut padded);
    rest.copy_from_slice(&padded[..rest.len()]);
}

const NORMALIZE_LANES: usize = 8;

/// [`normalize_or_up`] of one block, as a structure of arrays so each operation runs on every
/// lane at once; `Vec3::normalize_or`'s operations in its order.
#[inline(always)]
fn normalize_block(block: &mut [Vec3; NORMALIZE_LANES]) {
    let x: [f32; NORMALIZE_LANES] = std::array::from_fn(|k| block[k].x);
    let y: [f32; NORMALIZE_LANES] = std::array::from_fn(|k| block[k].y);
    let z: [f32; NORMALIZE_LANES] = std::array::from_fn(|k| block[k].z);
    for (k, n) in block.iter_mut().enumerate() {
        let rcp = 1.0 / ((x[k] * x[k] + y[k] * y[k]) + z[k] * z[k]).sqrt();
        let ok = (rcp > 0.0) & (rcp < f32::INFINITY);
        let pick = |v: f32, fallback: f32| if ok { v } else { fallback };
        *n = Vec3::new(
            pick(x[k] * rcp, 0.0),
            pick(y[k] * rcp, 1.0),
            pick(z[k] * rcp, 0.0),
        );
    }
}

/// Source vertices plus the active blend shape deltas (step 1), shape by shape so each vertex
/// sums its deltas in shape order.
fn blend(mesh: &MeshSource, shapes: &[(usize, f32)], out: &mut Vec<(Vec3A, Vec3A)>) {
    out.clear();
    let normal = |v: usize| mesh.normals.get(v).map_or(Vec3A::Y, |&n| Vec3A::from(n));
    out.extend((0..mesh.positions.len()).map(|v| (Vec3A::from(mesh.positions[v]), normal(v))));
    for &(i, w) in shapes {
        let shape = &mesh.blend_shapes[i];
        let has_normals = !shape.normals.is_empty();
        for (v, (p, n)) in out.iter_mut().enumerate() {
            let (p_src, n_src) = (Vec3A::from(mesh.positions[v]), normal(v));
            let sp = Vec3A::from(shape.positions[v]);
            match mesh.blend_mode {
                BlendMode::Normalized => *p += w * (sp - p_src),
                BlendMode::Relative => *p += w * sp,
            }
            if has_normals {
                let sn = Vec3A::from(shape.normals[v]);
                match mesh.blend_mode {
                    BlendMode::Normalized => *n += w * (sn - n_src),
                    BlendMode::Relative => *n += w * sn,
                }
            }
        }
    }
}

/// Godot's `Basis::orthonormalize`: Gram-Schmidt on the columns x, y, z in that order.
pub(super) fn orthonormalized(m: Mat3A) -> Mat3A {
    let x = m.x_axis.normalize_or_zero();
    let y = (m.y_axis - x * x.dot(m.y_axis)).normalize_or_zero();
    let z = (m.z_axis - x * x.dot(m.z_axis) - y * y.dot(m.z_axis)).normalize_or_zero();
    Mat3A::from_cols(x, y, z)
}

/// A matrix proportional to `m^-T` with a positive factor, so normalizing its products gives
/// `normalize(m^-T n)`. Built from the cofactors (`cof(m) = det(m) m^-T`), which stay defined
/// for a singular `m`, flipped when `det < 0` to keep the direction of mirrored normals.
pub(super) fn normal_matrix(m: Mat3A) -> Mat3A {
    let (a, b, c) = (m.x_axis, m.y_axis, m.z_axis);
    let cofactors = Mat3A::from_cols(b.cross(c), c.cross(a), a.cross(b));
    if m.determinant() < 0.0 {
        cofactors * -1.0
    } else {
        cofactors
    }
}
