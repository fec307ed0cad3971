//! The thickened, filled voxel grid LOD2 is extracted from.
//!
//! Samples sit on a regular lattice. A sample is *solid* when it lies within the shell radius of
//! the source surface (the thickening: thin capes, swords and one-sided planes become volumes),
//! or when the outside cannot reach it (the filled interior). The outside is flooded from the
//! grid's border through non-shell samples along the axes.
//!
//! The shell radius is `sqrt(3) / 2` voxels, half the lattice's cell diagonal: every lattice edge
//! the surface extraction uses (axes, face and cell diagonals, at most `sqrt(3)` voxels long)
//! that crosses the source surface then has a solid end, so no thin part is cut through.

use glam::Vec3;

use super::nearest::closest_on_triangle;
use crate::bounds::Bounds;

/// Cells along the grid's longest axis when the voxel size is automatic.
pub(crate) const AUTO_CELLS: f32 = 40.0;
/// Most samples along any axis, whatever voxel size was asked for (the grid stays a few MB).
pub(crate) const MAX_SAMPLES_PER_AXIS: usize = 192;
/// Shell radius in voxels (see the module docs).
pub(crate) const SHELL_VOXELS: f32 = 0.866_025_4;
/// Empty samples kept between the shell and the grid border, so the flood starts all round.
const BORDER_SAMPLES: f32 = 2.0;

/// A solid/empty sample lattice.
#[derive(Debug, Clone)]
pub(crate) struct Grid {
    /// Position of sample (0, 0, 0).
    pub origin: Vec3,
    /// Distance between neighbouring samples.
    pub voxel: f32,
    /// Samples along x, y, z.
    pub dims: [usize; 3],
    /// One flag per sample, x fastest.
    pub solid: Vec<bool>,
}

impl Grid {
    /// Flat index of sample `(x, y, z)`.
    pub fn index(&self, x: usize, y: usize, z: usize) -> usize {
        x + self.dims[0] * (y + self.dims[1] * z)
    }

    /// Position of sample `(x, y, z)`.
    pub fn position(&self, x: usize, y: usize, z: usize) -> Vec3 {
        self.origin + Vec3::new(x as f32, y as f32, z as f32) * self.voxel
    }
}

/// The voxel size to use: `requested` when positive, else the largest extent over
/// [`AUTO_CELLS`]; in both cases at least what keeps every axis within
/// [`MAX_SAMPLES_PER_AXIS`]. `bounds` must be non-empty with a positive extent.
pub(crate) fn choose_voxel_size(bounds: &Bounds, requested: f32) -> f32 {
    let largest = (bounds.max - bounds.min).max_element();
    let wanted = if requested > 0.0 {
        requested
    } else {
        largest / AUTO_CELLS
    };
    // Samples along the longest axis: extent / voxel + 2 * (shell + border) + 1.
    let spare = 2.0 * (SHELL_VOXELS + BORDER_SAMPLES) + 2.0;
    let smallest = largest / (MAX_SAMPLES_PER_AXIS as f32 - spare);
    wanted.max(smallest)
}

/// Voxelises the triangles (corner positions) at `voxel` spacing: shell, then filled interior.
pub(crate) fn voxelize(triangles: &[[Vec3; 3]], bounds: &Bounds, voxel: f32) -> Grid {
    let pad = (SHELL_VOXELS + BORDER_SAMPLES) * voxel;
    let origin = bounds.min - Vec3::splat(pad);
    let span = bounds.max - bounds.min + Vec3::splat(2.0 * pad);
    let dims = [0, 1, 2].map(|a| (span[a] / voxel).ceil() as usize + 1);
    let mut grid = Grid {
        origin,
        voxel,
        dims,
        solid: vec![false; dims[0] * dims[1] * dims[2]],
    };
    mark_shell(&mut grid, triangles, SHELL_VOXELS * voxel);
    let outside = flood_outside(&grid);
    for (s, o) in grid.solid.iter_mut().zip(outside) {
        *s = !o;
    }
    grid
}

/// Marks every sample within `radius` of a triangle.
fn mark_shell(grid: &mut Grid, triangles: &[[Vec3; 3]], radius: f32) {
    let r2 = radius * radius;
    let inv = 1.0 / grid.voxel;
    for &tri in triangles {
        let lo = tri[0].min(tri[1]).min(tri[2]) - Vec3::splat(radius);
        let hi = tri[0].max(tri[1]).max(tri[2]) + Vec3::splat(radius);
        let first = ((lo - grid.origin) * inv).ceil().max(Vec3::ZERO);
        let last = ((hi - grid.origin) * inv).floor();
        let range = |a: usize| first[a] as usize..=(last[a] as usize).min(grid.dims[a] - 1);
        for z in range(2) {
            for y in range(1) {
                for x in range(0) {
                    let i = grid.index(x, y, z);
                    if grid.solid[i] {
                        continue;
                    }
                    let p = grid.position(x, y, z);
                    if (closest_on_triangle(p, tri).0 - p).length_squared() <= r2 {
                        grid.solid[i] = true;
                    }
                }
            }
        }
    }
}

/// Closes `grid` within `within` (one flag per sample of the same lattice): adds every sample of
/// `within` that a dilation by one sample (all 26 neighbours) followed by an erosion by one
/// sample keeps, then fills whatever the outside no longer reaches. So tunnels and slots at most
/// two samples wide close and cavities fill, but only where `within` is solid: a piece of the
/// character grows into the rest of the character, never into the air around it.
///
/// A part's samples come from which source triangle is nearest to each one, and that labelling
/// is noisy where parts meet: it leaves rings around another part's samples (handles) and pockets
/// inside (cavities). Neither shows from outside, yet each handle is topology the simplifier must
/// keep (KayKit's knight: 39 handles over its pieces, 4 in the whole remesh), and each costs
/// triangles that the silhouette then lacks.
pub(crate) fn close_within(grid: &mut Grid, within: &[bool]) {
    let dilated = grown(grid, &grid.solid, true);
    let closed = grown(grid, &dilated, false);
    for ((s, c), w) in grid.solid.iter_mut().zip(closed).zip(within) {
        *s |= c && *w;
    }
    let outside = flood_outside(grid);
    for (s, o) in grid.solid.iter_mut().zip(outside) {
        *s = !o;
    }
}

/// `flags` (one per sample of `grid`) dilated by one sample along each axis in turn (so over
/// all 26 neighbours) when `grow`, else eroded the same way (a sample stays only if all its
/// neighbours are set; outside the grid counts as unset).
fn grown(grid: &Grid, flags: &[bool], grow: bool) -> Vec<bool> {
    let [nx, ny, _] = grid.dims;
    let strides = [1, nx, nx * ny];
    let mut out = flags.to_vec();
    for (axis, &stride) in strides.iter().enumerate() {
        let src = out.clone();
        let n = grid.dims[axis];
        for (i, o) in out.iter_mut().enumerate() {
            let at = (i / stride) % n;
            let before = at > 0 && src[i - stride];
            let after = at + 1 < n && src[i + stride];
            *o = if grow {
                src[i] || before || after
            } else {
                src[i] && before && after
            };
        }
    }
    out
}

/// Samples the outside reaches from the border through non-solid samples, stepping along axes.
fn flood_outside(grid: &Grid) -> Vec<bool> {
    let [nx, ny, nz] = grid.dims;
    let mut outside = vec![false; grid.solid.len()];
    let mut stack = Vec::new();
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let border =
                    x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1;
                let i = grid.index(x, y, z);
                if border && !grid.solid[i] {
                    outside[i] = true;
                    stack.push((x, y, z));
                }
            }
        }
    }
    while let Some((x, y, z)) = stack.pop() {
        let mut visit = |x: usize, y: usize, z: usize| {
            let i = grid.index(x, y, z);
            if !grid.solid[i] && !outside[i] {
                outside[i] = true;
                stack.push((x, y, z));
            }
        };
        if x > 0 {
            visit(x - 1, y, z);
        }
        if x + 1 < nx {
            visit(x + 1, y, z);
        }
        if y > 0 {
            visit(x, y - 1, z);
        }
        if y + 1 < ny {
            visit(x, y + 1, z);
        }
        if z > 0 {
            visit(x, y, z - 1);
        }
        if z + 1 < nz {
            visit(x, y, z + 1);
        }
    }
    outside
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quad(z: f32) -> Vec<[Vec3; 3]> {
        let p = |x: f32, y: f32| Vec3::new(x, y, z);
        vec![
            [p(0.0, 0.0), p(1.0, 0.0), p(1.0, 1.0)],
            [p(0.0, 0.0), p(1.0, 1.0), p(0.0, 1.0)],
        ]
    }

    #[test]
    fn a_plane_becomes_a_slab_with_no_gap() {
        let tris = quad(0.37);
        let bounds = Bounds::from_points(&[Vec3::new(0.0, 0.0, 0.37), Vec3::new(1.0, 1.0, 0.37)]);
        let voxel = 0.1;
        let grid = voxelize(&tris, &bounds, voxel);
        // Every column of samples over the plane's interior holds at least one solid sample
        // next to the plane, and none farther than the shell radius.
        let r = SHELL_VOXELS * voxel;
        for y in 0..grid.dims[1] {
            for x in 0..grid.dims[0] {
                let p = grid.position(x, y, 0);
                let over = (0.0..=1.0).contains(&p.x) && (0.0..=1.0).contains(&p.y);
                let mut solid = 0;
                for z in 0..grid.dims[2] {
                    if grid.solid[grid.index(x, y, z)] {
                        solid += 1;
                        let q = grid.position(x, y, z);
                        assert!((q.z - 0.37).abs() <= r + 1e-5 || !over);
                    }
                }
                if over {
                    assert!(solid >= 1, "gap at {p}");
                }
            }
        }
    }

    #[test]
    fn a_closed_box_is_filled() {
        // Six faces of a unit cube: its centre is far from every face, yet solid.
        let c = |x: f32, y: f32, z: f32| Vec3::new(x, y, z);
        let corners = [
            c(0., 0., 0.),
            c(1., 0., 0.),
            c(1., 1., 0.),
            c(0., 1., 0.),
            c(0., 0., 1.),
            c(1., 0., 1.),
            c(1., 1., 1.),
            c(0., 1., 1.),
        ];
        let faces = [
            [0, 1, 2, 3],
            [4, 5, 6, 7],
            [0, 1, 5, 4],
            [3, 2, 6, 7],
            [0, 3, 7, 4],
            [1, 2, 6, 5],
        ];
        let mut tris = Vec::new();
        for f in faces {
            tris.push([corners[f[0]], corners[f[1]], corners[f[2]]]);
            tris.push([corners[f[0]], corners[f[2]], corners[f[3]]]);
        }
        let bounds = Bounds::from_points(&corners);
        let grid = voxelize(&tris, &bounds, 0.1);
        let centre = ((c(0.5, 0.5, 0.5) - grid.origin) / grid.voxel).round();
        let i = grid.index(centre.x as usize, centre.y as usize, centre.z as usize);
        assert!(grid.solid[i]);
        assert!(!grid.solid[0]);
    }

    /// A 12 x 12 x 8 grid whose samples `solid` says are set.
    fn grid_where(solid: impl Fn(usize, usize, usize) -> bool) -> Grid {
        let dims = [12, 12, 8];
        let mut grid = Grid {
            origin: Vec3::ZERO,
            voxel: 1.0,
            dims,
            solid: vec![false; dims[0] * dims[1] * dims[2]],
        };
        for z in 0..dims[2] {
            for y in 0..dims[1] {
                for x in 0..dims[0] {
                    let i = grid.index(x, y, z);
                    grid.solid[i] = solid(x, y, z);
                }
            }
        }
        grid
    }

    /// A square ring in z 2..6 around x, y in 2..10 with a hole `hole` samples wide (x and y
    /// from `6 - hole / 2`), or a hollow box when `lid`.
    fn ring(hole: usize, lid: bool) -> impl Fn(usize, usize, usize) -> bool {
        let (lo, hi) = (6 - hole / 2, 6 - hole / 2 + hole);
        move |x, y, z| {
            let outer = (2..10).contains(&x) && (2..10).contains(&y) && (2..6).contains(&z);
            let inner = (lo..hi).contains(&x) && (lo..hi).contains(&y);
            let capped = lid && (z == 2 || z == 5);
            outer && (!inner || capped)
        }
    }

    #[test]
    fn closing_fills_narrow_tunnels_and_cavities_only_within() {
        let everywhere = vec![true; 12 * 12 * 8];
        let solid_count = |g: &Grid| g.solid.iter().filter(|&&s| s).count();
        let box_count = 8 * 8 * 4;
        // Tunnels one and two samples wide close; the ring becomes the full box.
        for hole in [1, 2] {
            let mut g = grid_where(ring(hole, false));
            close_within(&mut g, &everywhere);
            assert_eq!(solid_count(&g), box_count, "hole {hole}");
        }
        // Three samples wide stays open.
        let mut g = grid_where(ring(3, false));
        let before = g.solid.clone();
        close_within(&mut g, &everywhere);
        assert_eq!(g.solid, before);
        // Outside `within`, a narrow tunnel stays open.
        let mut g = grid_where(ring(2, false));
        let before = g.solid.clone();
        let not_the_hole = grid_where(|x, y, _| !((5..7).contains(&x) && (5..7).contains(&y)));
        close_within(&mut g, &not_the_hole.solid);
        assert_eq!(g.solid, before);
        // A cavity fills, even a wide one and outside `within`: nothing outside reaches it.
        let mut g = grid_where(ring(4, true));
        close_within(&mut g, &vec![false; 12 * 12 * 8]);
        assert_eq!(solid_count(&g), box_count);
        // A box's outer corners and edges do not grow.
        let mut g = grid_where(ring(0, false));
        close_within(&mut g, &everywhere);
        assert_eq!(solid_count(&g), box_count);
    }

    #[test]
    fn voxel_size_is_automatic_or_clamped() {
        let b = Bounds::from_points(&[Vec3::ZERO, Vec3::new(2.0, 1.0, 0.5)]);
        assert!((choose_voxel_size(&b, 0.0) - 2.0 / AUTO_CELLS).abs() < 1e-6);
        assert_eq!(choose_voxel_size(&b, 0.3), 0.3);
        let tiny = choose_voxel_size(&b, 1e-6);
        let grid_samples = 2.0 / tiny + 2.0 * (SHELL_VOXELS + BORDER_SAMPLES) + 2.0;
        assert!(grid_samples <= MAX_SAMPLES_PER_AXIS as f32 + 1e-3);
    }
}
