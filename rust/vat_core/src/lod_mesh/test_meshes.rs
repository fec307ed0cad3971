//! Synthetic sources for the LOD tests, in Godot's winding (clockwise front faces).

use glam::{Vec2, Vec3};

use super::{LodSource, SourceSurface, SurfaceTexture};

/// Side of one palette cell in pixels; the palette is 4 x 4 cells.
pub const CELL: u32 = 4;

/// A 16 x 16 palette of 16 solid 4 x 4 cells, cell `k` at column `k % 4`, row `k / 4`.
pub fn palette() -> SurfaceTexture {
    let size = 4 * CELL;
    let mut rgba8 = Vec::with_capacity((size * size * 4) as usize);
    for y in 0..size {
        for x in 0..size {
            let k = (y / CELL) * 4 + x / CELL;
            rgba8.extend_from_slice(&[(k * 16) as u8, (255 - k * 15) as u8, (k * 7) as u8, 255]);
        }
    }
    SurfaceTexture {
        width: size,
        height: size,
        rgba8,
    }
}

/// A UV inside palette cell `k`, `t` in [0, 1] across its pure-colour middle.
pub fn cell_uv(k: u32, t: f32) -> Vec2 {
    let size = (4 * CELL) as f32;
    let (cx, cy) = ((k % 4) * CELL, (k / 4) * CELL);
    Vec2::new(
        (cx as f32 + 0.75 + t * (CELL as f32 - 1.5)) / size,
        (cy as f32 + 0.75 + 0.5 * (CELL as f32 - 1.5)) / size,
    )
}

/// A 16 x 1 horizontal gradient (every texel a different red).
pub fn gradient() -> SurfaceTexture {
    let rgba8 = (0..16u8).flat_map(|x| [x * 16, 0, 0, 255]).collect();
    SurfaceTexture {
        width: 16,
        height: 1,
        rgba8,
    }
}

/// Builds a source from outward counter-clockwise triangles, flipping them to Godot's winding.
#[derive(Default)]
pub struct Builder {
    /// The source being built.
    pub source: LodSource,
}

impl Builder {
    /// Adds a vertex and returns its index.
    pub fn vertex(&mut self, p: Vec3, n: Vec3, uv: Vec2, bone: u32) -> u32 {
        let s = &mut self.source;
        s.positions.push(p);
        s.normals.push(n.normalize_or_zero());
        s.uvs.push(uv);
        s.bones.push(bone);
        s.positions.len() as u32 - 1
    }

    /// Adds a triangle, counter-clockwise seen from its front, to surface `surface`.
    pub fn triangle(&mut self, surface: usize, a: u32, b: u32, c: u32) {
        while self.source.surfaces.len() <= surface {
            self.source.surfaces.push(SourceSurface::default());
        }
        self.source.surfaces[surface]
            .indices
            .extend_from_slice(&[a, c, b]);
    }

    /// Adds the quads of a grid of `columns` x `rows` cells whose corners are `grid` (row by
    /// row, `columns + 1` per row), each counter-clockwise from its front as `quad` takes them.
    pub fn grid(&mut self, surface: usize, grid: &[u32], columns: u32, rows: u32) {
        let at = |i: u32, j: u32| grid[(j * (columns + 1) + i) as usize];
        for j in 0..rows {
            for i in 0..columns {
                self.quad(
                    surface,
                    [at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)],
                );
            }
        }
    }

    /// Adds quad `a b c d` (counter-clockwise from its front) as two triangles.
    pub fn quad(&mut self, surface: usize, q: [u32; 4]) {
        self.triangle(surface, q[0], q[1], q[2]);
        self.triangle(surface, q[0], q[2], q[3]);
    }
}

/// A smooth open cylinder along +Y (radius 0.5, height 2) with `segments` around and `rings`
/// rows of quads, plus a UV seam: the first column is repeated at the end with its own UV.
/// `uv(i, j)` gives the UV of column `i` in `0..=segments` and row `j` in `0..=rings`;
/// `bone(y)` the dominant bone by height.
pub fn seamed_cylinder(
    segments: u32,
    rings: u32,
    uv: impl Fn(u32, u32) -> Vec2,
    bone: impl Fn(f32) -> u32,
) -> LodSource {
    let mut b = Builder::default();
    let mut grid = Vec::new();
    for j in 0..=rings {
        for i in 0..=segments {
            let a = std::f32::consts::TAU * (i % segments) as f32 / segments as f32;
            let n = Vec3::new(a.cos(), 0.0, -a.sin());
            let y = 2.0 * j as f32 / rings as f32;
            let p = n * 0.5 + Vec3::Y * y;
            grid.push(b.vertex(p, n, uv(i, j), bone(y)));
        }
    }
    b.grid(0, &grid, segments, rings);
    b.source.bone_names = vec!["upper".into(), "lower".into()];
    b.source
}

/// A unit cube centred at the origin with hard edges: 4 vertices per face, face normals,
/// each face's UVs in palette cell `face`.
pub fn hard_cube() -> LodSource {
    let mut b = Builder::default();
    for (face, n) in [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z]
        .into_iter()
        .enumerate()
    {
        let u = n.any_orthonormal_vector();
        let v = n.cross(u);
        let q = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)].map(|(x, y)| {
            let p = (n + u * x + v * y) * 0.5;
            b.vertex(p, n, cell_uv(face as u32, (x + 1.0) * 0.5), 0)
        });
        b.quad(0, q);
    }
    b.source.bone_names = vec!["root".into()];
    b.source
}

/// A unit box centred at the origin with hard edges, each face a grid of `n` x `n` quads with
/// the face's normal (vertices shared within a face, split between faces), its UVs in palette
/// cell `face`; bone 0 below y = 0, bone 1 above, so its edges join two bones as well.
pub fn hard_box(n: u32) -> LodSource {
    let mut b = Builder::default();
    for (face, normal) in [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z]
        .into_iter()
        .enumerate()
    {
        let u = normal.any_orthonormal_vector();
        let v = normal.cross(u);
        let mut grid = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                let (x, y) = (
                    i as f32 / n as f32 * 2.0 - 1.0,
                    j as f32 / n as f32 * 2.0 - 1.0,
                );
                let p = (normal + u * x + v * y) * 0.5;
                let uv = cell_uv(face as u32, (x + 1.0) * 0.5);
                grid.push(b.vertex(p, normal, uv, u32::from(p.y > 0.0)));
            }
        }
        b.grid(0, &grid, n, n);
    }
    b.source.bone_names = vec!["lower".into(), "upper".into()];
    b.source
}

/// A closed capsule "limb" along +Y: a cylinder of radius 0.25 from y = 0 to 2 with
/// hemispherical caps, smooth normals, one vertex per point (no seams). Bone 0 below y = 1,
/// bone 1 above.
pub fn capsule_limb(segments: u32, rings: u32, cap_rings: u32) -> LodSource {
    let mut b = Builder::default();
    let r = 0.25;
    // Profile: (radius factor, y, normal y) from bottom pole to top pole.
    let mut profile = Vec::new();
    for k in 0..cap_rings {
        let a = -std::f32::consts::FRAC_PI_2 * (1.0 - k as f32 / cap_rings as f32);
        profile.push((a.cos(), r * a.sin(), a.sin()));
    }
    for j in 0..=rings {
        profile.push((1.0, 2.0 * j as f32 / rings as f32, 0.0));
    }
    for k in 1..cap_rings {
        let a = std::f32::consts::FRAC_PI_2 * k as f32 / cap_rings as f32;
        profile.push((a.cos(), 2.0 + r * a.sin(), a.sin()));
    }
    let bottom = b.vertex(Vec3::new(0.0, -r, 0.0), -Vec3::Y, Vec2::ZERO, 0);
    let mut rows = Vec::new();
    for &(f, y, ny) in &profile[1..] {
        let row: Vec<u32> = (0..segments)
            .map(|i| {
                let a = std::f32::consts::TAU * i as f32 / segments as f32;
                let dir = Vec3::new(a.cos(), 0.0, -a.sin());
                let n = dir * (1.0 - ny * ny).sqrt() + Vec3::Y * ny;
                b.vertex(dir * r * f + Vec3::Y * y, n, Vec2::ZERO, u32::from(y > 1.0))
            })
            .collect();
        rows.push(row);
    }
    let top = b.vertex(Vec3::new(0.0, 2.0 + r, 0.0), Vec3::Y, Vec2::ZERO, 1);
    let s = segments as usize;
    for i in 0..s {
        b.triangle(0, bottom, rows[0][(i + 1) % s], rows[0][i]);
    }
    for w in rows.windows(2) {
        for i in 0..s {
            let q = [w[0][i], w[0][(i + 1) % s], w[1][(i + 1) % s], w[1][i]];
            b.quad(0, q);
        }
    }
    let last = rows.last().unwrap();
    for i in 0..s {
        b.triangle(0, top, last[i], last[(i + 1) % s]);
    }
    b.source.bone_names = vec!["thigh".into(), "shin".into()];
    b.source
}

/// A flat `n` x `n` grid in the XY plane (1 x 1, centred at the origin), front face towards +Z,
/// one surface, single-sided unless `double_sided`.
pub fn plane(n: u32, double_sided: bool) -> LodSource {
    let mut b = Builder::default();
    let mut grid = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let p = Vec3::new(i as f32 / n as f32 - 0.5, j as f32 / n as f32 - 0.5, 0.0);
            grid.push(b.vertex(p, Vec3::Z, Vec2::new(p.x + 0.5, p.y + 0.5), 0));
        }
    }
    let at = |i: u32, j: u32| grid[(j * (n + 1) + i) as usize];
    for j in 0..n {
        for i in 0..n {
            b.quad(0, [at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    b.source.surfaces[0].double_sided = double_sided;
    b.source.bone_names = vec!["root".into()];
    b.source
}

/// A chain whose one level is `source` itself: a vertex and a column per source vertex.
pub fn identity_chain(source: &LodSource) -> super::LodChain {
    let n = source.positions.len() as u32;
    super::LodChain {
        levels: vec![super::LodLevel {
            vertices: (0..n)
                .map(|v| super::LodVertex {
                    sources: [v; 3],
                    weights: [1.0, 0.0, 0.0],
                    column: v,
                })
                .collect(),
            surfaces: source
                .surfaces
                .iter()
                .enumerate()
                .map(|(s, surface)| super::LodSurface {
                    source_surface: s as u32,
                    indices: surface.indices.clone(),
                })
                .collect(),
        }],
        columns: (0..n).map(super::ColumnSource::Vertex).collect(),
    }
}

/// `source` flat-shaded: every triangle gets three vertices of its own with its face normal
/// (the source's UV and bone), as a faceted low-poly character is exported.
pub fn faceted(source: &LodSource) -> LodSource {
    let mut b = Builder::default();
    for (s, surface) in source.surfaces.iter().enumerate() {
        for t in surface.indices.chunks_exact(3) {
            let [p0, p1, p2] = [t[0], t[1], t[2]].map(|v| source.positions[v as usize]);
            // Godot's winding: clockwise fronts, so the outward normal is (p2 - p0) x (p1 - p0).
            let n = (p2 - p0).cross(p1 - p0);
            let [a, c, bb] = [t[0], t[1], t[2]].map(|v| {
                let v = v as usize;
                b.vertex(source.positions[v], n, source.uvs[v], source.bones[v])
            });
            // `triangle` takes counter-clockwise corners and stores them as (a, c, b).
            b.triangle(s, a, bb, c);
        }
    }
    b.source.bone_names = source.bone_names.clone();
    b.source
}
