//! The hole check: orthographic silhouettes of the source and a LOD level, compared.
//!
//! Each of [`SILHOUETTE_VIEWS`] fixed directions (a Fibonacci spiral over the sphere) renders a
//! [`SILHOUETTE_SIZE`]-pixel square framed on the source's projected bounds in that pose (plus
//! [`MARGIN_PX`] pixels each side), one sample per pixel centre. Single-sided surfaces draw front
//! faces only: Godot's, which wind clockwise on screen (see [`front_facing`]).
//!
//! * holes: source pixels the candidate leaves uncovered inside its outline (its silhouette with
//!   enclosed gaps filled), or more than [`LOSS_DISTANCE_PX`] pixels from it (a part the
//!   candidate lacks: outside its outline, yet not the rim a coarser surface leaves), in % of
//!   the source's pixels;
//! * loss: candidate pixels more than [`LOSS_DISTANCE_PX`] pixels from the source's silhouette,
//!   in % of the candidate's pixels.

use glam::{Vec2, Vec3};

pub use super::silhouette_cache::SourceMasks;
pub(crate) use super::silhouette_cache::SourceSilhouettes;
use super::{level_positions, LodChain, LodSource};
pub(crate) use rows::Rows;

pub(crate) mod rows;

/// View directions of the check.
pub const SILHOUETTE_VIEWS: u32 = 11;
/// Width and height of a silhouette in pixels.
pub const SILHOUETTE_SIZE: u32 = 120;
/// Empty pixels around the source's projected bounds.
pub const MARGIN_PX: f32 = 4.0;
/// Candidate pixels farther than this (Euclidean, in pixels) from the source's silhouette count
/// as loss.
pub const LOSS_DISTANCE_PX: i32 = 2;

/// Largest share of the source's silhouette a kept level may leave uncovered, in %.
pub const MAX_HOLES_PCT: f32 = 1.0;
/// Largest share of a kept level's silhouette that may lie outside the source's, in %.
pub const MAX_LOSS_PCT: f32 = 6.0;

/// The worst silhouette differences of one level over every view and pose.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SilhouetteReport {
    /// Largest hole share over all views and poses, in %.
    pub holes_pct: f32,
    /// Largest loss share over all views and poses, in %.
    pub loss_pct: f32,
    /// The view (`0..SILHOUETTE_VIEWS`) where holes plus loss is largest.
    pub worst_view: u32,
    /// The pose (index into the poses given) where holes plus loss is largest.
    pub worst_pose: u32,
}

impl SilhouetteReport {
    /// True if holes and loss are both within [`MAX_HOLES_PCT`] and [`MAX_LOSS_PCT`].
    pub fn passes(&self) -> bool {
        self.holes_pct <= MAX_HOLES_PCT && self.loss_pct <= MAX_LOSS_PCT
    }

    /// The worse of holes and loss as a share of its limit: at most 1 when the level passes.
    pub fn score(&self) -> f32 {
        (self.holes_pct / MAX_HOLES_PCT).max(self.loss_pct / MAX_LOSS_PCT)
    }
}

/// One view of one pose: the two masks, for a picture of the check.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SilhouetteImage {
    /// Width and height in pixels ([`SILHOUETTE_SIZE`]).
    pub size: u32,
    /// The source's mask, row by row from the top: 255 covered, 0 empty.
    pub original: Vec<u8>,
    /// The level's mask, framed the same way.
    pub candidate: Vec<u8>,
}

/// Compares `chain`'s level `level` with `source` over every view of every pose (source-vertex
/// positions, one array per pose; the reference positions if `poses` is empty). A pose bit for
/// bit equal to an earlier one is checked once, in its first place (the report is the same).
/// Panics if `level` is out of range or a pose is shorter than the source.
pub fn check_silhouettes(
    source: &LodSource,
    chain: &LodChain,
    level: usize,
    poses: &[Vec<Vec3>],
) -> SilhouetteReport {
    SourceSilhouettes::new(source, poses).check(chain, level)
}

/// [`check_silhouettes`] of a level whose vertices are drawn elsewhere than bound to each pose:
/// `placed[p]` holds the level's vertex positions in pose `p` (skinned from bone textures, say),
/// checked against the source's silhouettes in `poses`. Of poses bit for bit equal in `poses`,
/// only the first is checked, with its own `placed` array.
/// Panics if `level` is out of range, `placed` has fewer poses than `poses` (one when `poses` is
/// empty), or a placed pose is shorter than the level.
pub fn check_placed_silhouettes(
    source: &LodSource,
    chain: &LodChain,
    level: usize,
    poses: &[Vec<Vec3>],
    placed: &[Vec<Vec3>],
) -> SilhouetteReport {
    SourceSilhouettes::new(source, poses).check_placed(chain, level, placed)
}

/// [`check_placed_silhouettes`] against the source silhouettes `masks` kept from building
/// `chain` over the same `source` and `poses` ([`super::build_checked_chain_keeping_masks`]),
/// instead of rendering them again; the same report. Masks rendered from another source or
/// other poses (told by their count and a hash of sampled positions) are not used: the source
/// is rendered anew.
pub fn check_placed_silhouettes_against(
    masks: &SourceMasks,
    source: &LodSource,
    chain: &LodChain,
    level: usize,
    poses: &[Vec<Vec3>],
    placed: &[Vec<Vec3>],
) -> SilhouetteReport {
    match SourceSilhouettes::from_masks(source, poses, masks) {
        Some(kept) => kept.check_placed(chain, level, placed),
        None => check_placed_silhouettes(source, chain, level, poses, placed),
    }
}

/// The masks of `source` and `chain`'s level `level` in `pose` seen from view `view`.
/// Panics if `level` or `view` is out of range.
pub fn silhouette_image(
    source: &LodSource,
    chain: &LodChain,
    level: usize,
    pose: &[Vec3],
    view: u32,
) -> SilhouetteImage {
    assert!(view < SILHOUETTE_VIEWS, "view {view} of {SILHOUETTE_VIEWS}");
    let lod = level_positions(chain, level, pose);
    render_pair(source, chain, level, pose, &lod, view)
}

/// Holes and loss in % for one pair of masks.
#[cfg(test)]
pub(crate) fn compare(image: &SilhouetteImage) -> (f32, f32) {
    let size = image.size as usize;
    let original = rows::from_bytes(&image.original, size);
    let near = rows::dilated(&original, LOSS_DISTANCE_PX);
    compare_rows(&original, &near, &rows::from_bytes(&image.candidate, size))
}

/// Holes and loss in % of `candidate` against the source's mask `original` and the pixels
/// `near` it (within [`LOSS_DISTANCE_PX`] of a covered pixel).
pub(crate) fn compare_rows(original: &Rows, near: &Rows, candidate: &Rows) -> (f32, f32) {
    let holes = holes_of(original, candidate);
    let loss: Rows = std::array::from_fn(|y| candidate[y] & !near[y]);
    (
        percent(rows::count(&holes), rows::count(original)),
        percent(rows::count(&loss), rows::count(candidate)),
    )
}

/// `n` in % of `of` (0 when `of` is 0).
pub(crate) fn percent(n: u32, of: u32) -> f32 {
    if of == 0 {
        0.0
    } else {
        100.0 * n as f32 / of as f32
    }
}

/// The pixels of `original` (the source's mask) that are holes of `candidate`: not covered by
/// it, and inside its outline or farther than [`LOSS_DISTANCE_PX`] from it (a rim closer than
/// that is tolerated).
pub(crate) fn holes_of(original: &Rows, candidate: &Rows) -> Rows {
    let inside = rows::filled(candidate);
    let covered = rows::dilated(candidate, LOSS_DISTANCE_PX);
    std::array::from_fn(|y| original[y] & !candidate[y] & (inside[y] | !covered[y]))
}

/// View `view`'s direction (where the camera looks), a Fibonacci spiral over the sphere.
pub(crate) fn view_direction(view: u32) -> Vec3 {
    let n = SILHOUETTE_VIEWS as f32;
    let y = 1.0 - 2.0 * (view as f32 + 0.5) / n;
    let r = (1.0 - y * y).max(0.0).sqrt();
    let golden = std::f32::consts::PI * (3.0 - 5f32.sqrt());
    let a = golden * view as f32;
    Vec3::new(r * a.cos(), y, r * a.sin())
}

/// Screen axes (right, up) of a camera looking along `dir`: right x up points at the camera.
fn screen_axes(dir: Vec3) -> (Vec3, Vec3) {
    let reference = if dir.y.abs() > 0.99 { Vec3::Z } else { Vec3::Y };
    let toward = -dir;
    let right = reference.cross(toward).normalize();
    (right, toward.cross(right))
}

/// Whether a triangle whose corners land at `a b c` on screen (y up) faces the camera in
/// Godot's convention: front faces wind clockwise as seen (Godot's `ArrayMesh` rule, which its
/// glTF importer meets by reversing glTF's counter-clockwise order).
pub(crate) fn front_facing(a: Vec2, b: Vec2, c: Vec2) -> bool {
    (b - a).perp_dot(c - a) < 0.0
}

/// Where one view of one pose lands on the masks: the view's screen axes and the source's
/// projected bounds, framed with [`MARGIN_PX`] each side.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Framing {
    right: Vec3,
    up: Vec3,
    centre: Vec2,
    scale: f32,
}

impl Framing {
    /// The framing of view `view` of `source` in `pose`.
    pub(crate) fn new(source: &LodSource, pose: &[Vec3], view: u32) -> Self {
        let (right, up) = screen_axes(view_direction(view));
        let (mut lo, mut hi) = (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN));
        for s in &source.surfaces {
            for &v in &s.indices {
                let p = pose[v as usize];
                let q = Vec2::new(p.dot(right), p.dot(up));
                lo = lo.min(q);
                hi = hi.max(q);
            }
        }
        let size = SILHOUETTE_SIZE as f32;
        let extent = (hi - lo).max_element().max(f32::MIN_POSITIVE);
        Self {
            right,
            up,
            centre: (lo + hi) * 0.5,
            scale: (size - 2.0 * MARGIN_PX) / extent,
        }
    }

    /// Where `p` lands on the mask, in pixel coordinates (y down).
    pub(crate) fn pixel(self, p: Vec3) -> Vec2 {
        self.to_pixels(self.project(p))
    }

    /// `p` on the view's screen plane (y up), where [`front_facing`] applies.
    fn project(self, p: Vec3) -> Vec2 {
        Vec2::new(p.dot(self.right), p.dot(self.up))
    }

    /// A point of the screen plane in pixel coordinates (y down).
    fn to_pixels(self, p: Vec2) -> Vec2 {
        let size = SILHOUETTE_SIZE as f32;
        let q = (p - self.centre) * self.scale;
        Vec2::new(size * 0.5 + q.x, size * 0.5 - q.y)
    }
}

/// Points on the screen plane of `framing` and in its pixels, one pair per point.
struct Projected {
    screen: Vec<Vec2>,
    pixels: Vec<Vec2>,
}

impl Projected {
    fn new(points: &[Vec3], framing: Framing) -> Self {
        let screen: Vec<Vec2> = points.iter().map(|&p| framing.project(p)).collect();
        let pixels = screen.iter().map(|&q| framing.to_pixels(q)).collect();
        Self { screen, pixels }
    }
}

/// Fills the triangles `triangles` of the points `at` whose faces show: all if
/// `double_sided`, else the front faces (as seen on the screen plane).
fn fill_shown(mask: &mut Rows, at: &Projected, triangles: &[u32], double_sided: bool) {
    for t in triangles.chunks_exact(3) {
        let (a, b, c) = (t[0] as usize, t[1] as usize, t[2] as usize);
        if double_sided || front_facing(at.screen[a], at.screen[b], at.screen[c]) {
            rows::fill_triangle(mask, [at.pixels[a], at.pixels[b], at.pixels[c]]);
        }
    }
}

/// The source's mask in `pose`.
pub(crate) fn source_mask(source: &LodSource, pose: &[Vec3], framing: Framing) -> Rows {
    let at = Projected::new(pose, framing);
    let mut mask = rows::EMPTY;
    for s in &source.surfaces {
        fill_shown(&mut mask, &at, &s.indices, s.double_sided);
    }
    mask
}

/// `chain`'s level `level` masked at its vertex positions `lod` (single-sided where its source
/// surface is).
pub(crate) fn level_mask(
    source: &LodSource,
    chain: &LodChain,
    level: usize,
    lod: &[Vec3],
    framing: Framing,
) -> Rows {
    let at = Projected::new(lod, framing);
    let mut mask = rows::EMPTY;
    for s in &chain.levels[level].surfaces {
        let double_sided = source
            .surfaces
            .get(s.source_surface as usize)
            .is_some_and(|s| s.double_sided);
        fill_shown(&mut mask, &at, &s.indices, double_sided);
    }
    mask
}

/// Both masks of one view; the frame comes from the source's projected bounds.
fn render_pair(
    source: &LodSource,
    chain: &LodChain,
    level: usize,
    pose: &[Vec3],
    lod: &[Vec3],
    view: u32,
) -> SilhouetteImage {
    let framing = Framing::new(source, pose, view);
    SilhouetteImage {
        size: SILHOUETTE_SIZE,
        original: rows::to_bytes(&source_mask(source, pose, framing)),
        candidate: rows::to_bytes(&level_mask(source, chain, level, lod, framing)),
    }
}

#[cfg(test)]
mod tests;
