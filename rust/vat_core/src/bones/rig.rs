//! From the bake's inputs to a bone rig: the palette of distinct root-space transforms per frame
//! and each vertex's rest data and influences.

use std::collections::HashMap;

use glam::{Affine3A, Vec3};

use crate::bake::{check_frame, skin_frames, tangent_sources, validate, MeshFrame, MeshSource};
use crate::error::Result;

/// Most influences a vertex keeps (Godot's skins hold 4 or 8).
pub const MAX_INFLUENCES: usize = 8;
/// Influences below this weight are skipped, as the vertex bake skips them.
pub const WEIGHT_EPSILON: f32 = f32::EPSILON;
/// How far a vertex's weights may sum from 1 before the rest of the weight stays with the mesh
/// node (the vertex bake's `p + sum w (B p - p)`).
pub const REMAINDER_TOLERANCE: f32 = 1e-4;
/// A blend shape whose weight moves by more than this between two frames is animated.
const ANIMATED_WEIGHT: f32 = 1e-6;

/// Why a character cannot be drawn from a bone texture.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Blend shapes whose weight changes over the frames: only a vertex bake plays them.
    AnimatedBlendShapes {
        /// The mesh (index into the bake's meshes).
        mesh: usize,
        /// Its animated shapes (indices into its blend shapes).
        shapes: Vec<usize>,
    },
    /// A vertex whose weights a bone texture cannot store: one outside [0, 1], or a sum above 1.
    UnusualWeights {
        /// The mesh (index into the bake's meshes).
        mesh: usize,
        /// The vertex (index into that mesh).
        vertex: usize,
        /// The sum of its weights.
        sum: f32,
    },
    /// More distinct transforms than a packed influence can name.
    TooManyBones {
        /// Transforms the character needs.
        count: usize,
    },
    /// A vertex of mesh `mesh` needs more than [`MAX_INFLUENCES`] transforms.
    TooManyInfluences {
        /// The mesh (index into the bake's meshes).
        mesh: usize,
        /// The vertex (index into that mesh).
        vertex: usize,
        /// Transforms it needs.
        count: usize,
    },
}

impl Refusal {
    /// One sentence naming what is refused: mesh names from `meshes`, blend shape names from
    /// `shape_name(mesh, shape)`.
    pub fn message(
        &self,
        meshes: &[MeshSource],
        shape_name: &dyn Fn(usize, usize) -> String,
    ) -> String {
        let mesh_name = |m: usize| meshes.get(m).map_or("?", |s| s.name.as_str()).to_string();
        match self {
            Self::AnimatedBlendShapes { mesh, shapes } => {
                let names: Vec<String> = shapes
                    .iter()
                    .map(|&s| format!("'{}'", shape_name(*mesh, s)))
                    .collect();
                format!(
                    "mesh '{}' animates blend shapes {}: a bone texture holds bone transforms only, so only a vertex bake (STORAGE_VERTICES) plays them",
                    mesh_name(*mesh),
                    names.join(", ")
                )
            }
            Self::UnusualWeights { mesh, vertex, sum } => format!(
                "vertex {vertex} of mesh '{}' has bone weights summing to {sum} or outside [0, 1]; a bone texture stores weights in [0, 1] summing to 1",
                mesh_name(*mesh)
            ),
            Self::TooManyBones { count } => format!(
                "it needs {count} distinct bone transforms; a bone texture holds at most {}",
                super::texture::MAX_PALETTE
            ),
            Self::TooManyInfluences {
                mesh,
                vertex,
                count,
            } => format!(
                "vertex {vertex} of mesh '{}' needs {count} bone transforms; a bone texture holds at most {MAX_INFLUENCES} per vertex",
                mesh_name(*mesh)
            ),
        }
    }
}

/// One vertex of the rig: where it rests and what moves it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigVertex {
    /// Rest position in its mesh's space (constant blend shapes applied).
    pub rest: Vec3,
    /// Rest normal (unit; +Y for a mesh without normals).
    pub normal: Vec3,
    /// Rest tangent (unit; +X for a mesh without tangents).
    pub tangent: Vec3,
    /// (palette entry, weight), heaviest first; unused slots have weight 0.
    pub influences: [(u32, f32); MAX_INFLUENCES],
}

/// A character as a bone texture draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct BoneRig {
    /// Distinct transforms per frame.
    pub palette: usize,
    /// Frames (as the vertex bake's).
    pub frames: usize,
    /// `frames * palette` root-space transforms, frame-major: a vertex at rest position `p` with
    /// influences `(e, w)` lies at `sum w * matrices[f * palette + e] * p` at frame `f`.
    pub matrices: Vec<Affine3A>,
    /// Influences per vertex the textures store: 4, or 8 where some vertex needs more than 4.
    pub influences: usize,
    /// Every vertex, the meshes' vertices concatenated in input order (the vertex bake's order).
    pub vertices: Vec<RigVertex>,
}

/// The rig of `meshes` posed by `frames` (`frames[f][m]` as for
/// [`skin_frames`](crate::bake::skin_frames)), with `tangents[m]` one unit tangent per vertex of
/// mesh `m` (or empty).
///
/// Palette entries: for a skinned mesh, `pre * bind` for every skin bind a vertex uses (weight at
/// least `f32::EPSILON`) and `pre` itself for vertices whose weights do not sum to 1 (the rest of
/// the weight stays with the mesh node, as in the vertex bake); for a rigid mesh, `pre`. Entries
/// whose transforms are bit-equal at every frame are one entry (meshes sharing a skeleton share
/// its bones). Blend shapes whose weight never changes are applied to the rest data.
///
/// `Err` for what the vertex bake refuses too ([`skin_frames`](crate::bake::skin_frames)'s
/// errors); `Ok(Err(refusal))` for what only a bone texture cannot draw.
pub fn build_rig(
    meshes: &[MeshSource],
    frames: &[Vec<MeshFrame>],
    tangents: &[Vec<Vec3>],
) -> Result<std::result::Result<BoneRig, Refusal>> {
    let rest_frame = match rest_frame(meshes, frames) {
        Ok(f) => f,
        Err(refusal) => return Ok(Err(refusal)),
    };
    // Checks every frame as the vertex bake does; skinning the rest frame gives the rest data
    // with the vertex bake's semantics.
    validate(meshes)?;
    for (f, frame) in frames.iter().enumerate() {
        check_frame(meshes, frame, f, &|f| format!("frame {f}"))?;
    }
    let rest = skin_frames(meshes, std::slice::from_ref(&rest_frame), &|_| {
        "rest".into()
    })?;
    let rest_tangents = skin_frames(
        &tangent_sources(meshes, tangents),
        std::slice::from_ref(&rest_frame),
        &|_| "rest".into(),
    )?;
    let mut palette = Palette::default();
    let mut vertices = Vec::with_capacity(rest.vertex_count);
    let mut widest = 0;
    for (m, mesh) in meshes.iter().enumerate() {
        let mut node = None;
        let mut binds: HashMap<u32, u32> = HashMap::new();
        for v in 0..mesh.positions.len() {
            let mut influences = Vec::with_capacity(MAX_INFLUENCES);
            match &mesh.skin {
                None => {
                    let entry = palette.node(&mut node, frames, m);
                    influences.push((entry, 1.0));
                }
                Some(skin) => {
                    let slots = v * skin.influences..(v + 1) * skin.influences;
                    let mut total = 0.0;
                    for (&b, &w) in skin.bones[slots.clone()].iter().zip(&skin.weights[slots]) {
                        if w < WEIGHT_EPSILON {
                            continue;
                        }
                        let entry = *binds.entry(b).or_insert_with(|| {
                            palette.intern(frames.iter().map(|f| f[m].pre * f[m].bones[b as usize]))
                        });
                        add(&mut influences, entry, w);
                        total += w;
                    }
                    let unusual = skin.weights[v * skin.influences..(v + 1) * skin.influences]
                        .iter()
                        .any(|w| !(0.0..=1.0).contains(w));
                    if unusual || total > 1.0 + REMAINDER_TOLERANCE {
                        return Ok(Err(Refusal::UnusualWeights {
                            mesh: m,
                            vertex: v,
                            sum: total,
                        }));
                    }
                    if (1.0 - total).abs() > REMAINDER_TOLERANCE {
                        let entry = palette.node(&mut node, frames, m);
                        add(&mut influences, entry, 1.0 - total);
                    }
                }
            }
            if influences.len() > MAX_INFLUENCES {
                return Ok(Err(Refusal::TooManyInfluences {
                    mesh: m,
                    vertex: v,
                    count: influences.len(),
                }));
            }
            widest = widest.max(influences.len());
            influences.sort_by(|a, b| b.1.total_cmp(&a.1));
            let mut slots = [(0u32, 0.0f32); MAX_INFLUENCES];
            slots[..influences.len()].copy_from_slice(&influences);
            let i = vertices.len();
            vertices.push(RigVertex {
                rest: rest.positions[i],
                normal: rest.normals[i],
                tangent: rest_tangents.normals[i],
                influences: slots,
            });
        }
    }
    let palette_len = palette.sequences.len();
    if palette_len > super::texture::MAX_PALETTE {
        return Ok(Err(Refusal::TooManyBones { count: palette_len }));
    }
    let mut matrices = Vec::with_capacity(frames.len() * palette_len);
    for f in 0..frames.len() {
        matrices.extend(palette.sequences.iter().map(|s| s[f]));
    }
    Ok(Ok(BoneRig {
        palette: palette_len,
        frames: frames.len(),
        matrices,
        influences: if widest > 4 { 8 } else { 4 },
        vertices,
    }))
}

/// Adds weight `w` to `entry` in `influences`, or lists it.
fn add(influences: &mut Vec<(u32, f32)>, entry: u32, w: f32) {
    match influences.iter_mut().find(|(e, _)| *e == entry) {
        Some(slot) => slot.1 += w,
        None => influences.push((entry, w)),
    }
}

/// The frame whose skinning gives the rest data: identity transforms and each mesh's constant
/// blend weights; `Err` naming the blend shapes that change.
fn rest_frame(
    meshes: &[MeshSource],
    frames: &[Vec<MeshFrame>],
) -> std::result::Result<Vec<MeshFrame>, Refusal> {
    let mut rest = Vec::with_capacity(meshes.len());
    for (m, mesh) in meshes.iter().enumerate() {
        let first = frames
            .first()
            .and_then(|f| f.get(m))
            .map(|f| f.blend_weights.clone())
            .unwrap_or_default();
        let animated: Vec<usize> = (0..first.len())
            .filter(|&s| {
                frames.iter().any(|f| {
                    f.get(m)
                        .and_then(|mf| mf.blend_weights.get(s))
                        .is_some_and(|w| (w - first[s]).abs() > ANIMATED_WEIGHT)
                })
            })
            .collect();
        if !animated.is_empty() {
            return Err(Refusal::AnimatedBlendShapes {
                mesh: m,
                shapes: animated,
            });
        }
        let binds = mesh.skin.as_ref().map_or(0, |s| s.bind_count);
        rest.push(MeshFrame {
            pre: Affine3A::IDENTITY,
            bones: vec![Affine3A::IDENTITY; binds],
            blend_weights: first,
        });
    }
    Ok(rest)
}

/// Distinct transform sequences (one transform per frame), each listed once.
#[derive(Default)]
struct Palette {
    sequences: Vec<Vec<Affine3A>>,
    index: HashMap<Vec<u32>, u32>,
}

impl Palette {
    /// The entry of mesh `m`'s node transform, listed on first use.
    fn node(&mut self, entry: &mut Option<u32>, frames: &[Vec<MeshFrame>], m: usize) -> u32 {
        *entry.get_or_insert_with(|| self.intern(frames.iter().map(|f| f[m].pre)))
    }

    /// The entry of this sequence, listed if new.
    fn intern(&mut self, sequence: impl Iterator<Item = Affine3A>) -> u32 {
        let sequence: Vec<Affine3A> = sequence.collect();
        let key: Vec<u32> = sequence
            .iter()
            .flat_map(|a| a.to_cols_array())
            .map(f32::to_bits)
            .collect();
        let next = self.sequences.len() as u32;
        *self.index.entry(key).or_insert_with(|| {
            self.sequences.push(sequence);
            next
        })
    }
}
