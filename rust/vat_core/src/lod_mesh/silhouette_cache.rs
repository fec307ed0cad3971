//! The source's half of the hole check, rendered once per chain.
//!
//! Building a chain checks many candidates (LOD1 and its retries, every LOD2 candidate at up to
//! three targets) against the same poses, and the source's masks do not depend on the candidate:
//! [`SourceSilhouettes`] keeps them, with their framing and the band within
//! [`LOSS_DISTANCE_PX`] of them, so each check renders only the candidate. A candidate that is
//! only being ruled out can stop at the first pose where it fails
//! ([`SourceSilhouettes::check_until_failed`]).
//!
//! A pose bit for bit equal to an earlier one is checked once, in its first place: the source
//! draws the same there, and so does every level bound to it, so no figure of the report
//! changes. Baked clips repeat poses often (a looping clip's last frame is its first, many clips
//! start from the same idle pose): KayKit's knight's 214 checked poses hold 109 distinct ones,
//! Kenney's figure's 96 hold 39.

use std::borrow::Cow;

use glam::Vec3;
use rayon::prelude::*;

use super::silhouette::{
    compare_rows, holes_of, level_mask, percent, rows, source_mask, Framing, Rows,
    LOSS_DISTANCE_PX, SILHOUETTE_VIEWS,
};
use super::{level_positions, LodChain, LodSource, SilhouetteReport};

/// Poses checked together between two looks at whether a candidate already failed.
const POSES_PER_ROUND: usize = 8;

/// One view of one pose of the source.
#[derive(Clone)]
struct SourceView {
    framing: Framing,
    /// The source's mask.
    covered: Rows,
    /// The pixels within [`LOSS_DISTANCE_PX`] of it.
    near: Rows,
}

/// The source's silhouettes in every view of every distinct pose, for checking many levels.
pub(crate) struct SourceSilhouettes<'a> {
    source: &'a LodSource,
    poses: Cow<'a, [Vec<Vec3>]>,
    /// Which of `poses` are checked, and for how many each stands.
    distinct: Cow<'a, Distinct>,
    /// Distinct-pose-major: view `v` of distinct pose `d` at `d * SILHOUETTE_VIEWS + v`.
    views: Cow<'a, [SourceView]>,
}

/// The distinct poses of a list: the first of each set of bit-identical poses.
#[derive(Clone)]
struct Distinct {
    /// Index into the list of each distinct pose, ascending.
    first: Vec<usize>,
    /// How many poses of the list each distinct pose stands for.
    copies: Vec<u32>,
    /// For each pose of the list, its distinct pose (an index into `first`).
    of_pose: Vec<usize>,
}

impl Distinct {
    /// The distinct poses of `poses`, compared bit for bit.
    fn new(poses: &[Vec<Vec3>]) -> Self {
        use std::collections::HashMap;
        use std::hash::{Hash, Hasher};
        fn bits(pose: &[Vec3]) -> impl Iterator<Item = u32> + '_ {
            pose.iter().flat_map(|p| p.to_array().map(f32::to_bits))
        }
        // Poses by hash of their bits, each hash with the distinct poses that have it.
        let mut by_hash: HashMap<u64, Vec<usize>> = HashMap::new();
        let mut out = Self {
            first: Vec::new(),
            copies: Vec::new(),
            of_pose: Vec::with_capacity(poses.len()),
        };
        for (p, pose) in poses.iter().enumerate() {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            pose.len().hash(&mut h);
            bits(pose).for_each(|b| b.hash(&mut h));
            let same = by_hash.entry(h.finish()).or_default();
            let found = same
                .iter()
                .copied()
                .find(|&d| bits(&poses[out.first[d]]).eq(bits(pose)));
            let d = found.unwrap_or_else(|| {
                same.push(out.first.len());
                out.first.push(p);
                out.copies.push(0);
                out.first.len() - 1
            });
            out.copies[d] += 1;
            out.of_pose.push(d);
        }
        out
    }
}

/// The source's silhouettes that a chain was checked against, kept after the chain was built
/// ([`super::build_checked_chain_keeping_masks`]) so a level drawn another way can be checked
/// again without rendering the source once more
/// ([`super::check_placed_silhouettes_against`]). About 4 KiB per view of each distinct pose.
pub struct SourceMasks {
    views: Vec<SourceView>,
    /// The distinct poses the views are of.
    distinct: Distinct,
    /// [`fingerprint`] of the source and poses they were rendered from.
    from: u64,
}

/// Source positions sampled per pose by [`fingerprint`]: enough that other poses of the same
/// character differ, few enough to cost nothing beside a render.
const FINGERPRINT_SAMPLES: usize = 64;

/// A hash of `source`'s size and triangles' count and of the pose count and a sample of every
/// pose's positions: masks are used again only for the source and poses they were rendered from
/// (so also only with as many views).
fn fingerprint(source: &LodSource, poses: &[Vec<Vec3>]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    source.positions.len().hash(&mut h);
    source
        .surfaces
        .iter()
        .map(|s| s.indices.len())
        .sum::<usize>()
        .hash(&mut h);
    poses.len().hash(&mut h);
    for pose in poses {
        let step = (pose.len() / FINGERPRINT_SAMPLES).max(1);
        for p in pose.iter().step_by(step).chain(pose.last()) {
            p.to_array().map(f32::to_bits).hash(&mut h);
        }
    }
    h.finish()
}

/// The poses the source is rendered in: `poses`, or its reference positions when there are none.
pub(super) fn poses_or_reference<'a>(
    source: &LodSource,
    poses: &'a [Vec<Vec3>],
) -> Cow<'a, [Vec<Vec3>]> {
    if poses.is_empty() {
        Cow::Owned(vec![source.positions.clone()])
    } else {
        Cow::Borrowed(poses)
    }
}

impl SourceMasks {
    /// Views held (distinct poses times [`SILHOUETTE_VIEWS`]).
    pub fn view_count(&self) -> usize {
        self.views.len()
    }
}

impl<'a> SourceSilhouettes<'a> {
    /// Renders `source` in every view of every distinct pose (the reference positions if
    /// `poses` is empty). Panics if a pose is shorter than the source.
    pub(crate) fn new(source: &'a LodSource, poses: &'a [Vec<Vec3>]) -> Self {
        let poses = poses_or_reference(source, poses);
        let distinct = Distinct::new(&poses);
        let views: Vec<SourceView> = (0..distinct.first.len() * SILHOUETTE_VIEWS as usize)
            .into_par_iter()
            .map(|i| {
                let pose = &poses[distinct.first[i / SILHOUETTE_VIEWS as usize]];
                let framing = Framing::new(source, pose, (i % SILHOUETTE_VIEWS as usize) as u32);
                let covered = source_mask(source, pose, framing);
                let near = rows::dilated(&covered, LOSS_DISTANCE_PX);
                SourceView {
                    framing,
                    covered,
                    near,
                }
            })
            .collect();
        Self {
            source,
            poses,
            distinct: Cow::Owned(distinct),
            views: Cow::Owned(views),
        }
    }

    /// The silhouettes of `source` in `poses` from `masks`, rendered before for the same source
    /// and poses; `None` if `masks` came from another source or other poses (then render them
    /// anew).
    pub(crate) fn from_masks(
        source: &'a LodSource,
        poses: &'a [Vec<Vec3>],
        masks: &'a SourceMasks,
    ) -> Option<Self> {
        let poses = poses_or_reference(source, poses);
        if masks.from != fingerprint(source, &poses) {
            return None;
        }
        Some(Self {
            source,
            poses,
            distinct: Cow::Borrowed(&masks.distinct),
            views: Cow::Borrowed(&masks.views),
        })
    }

    /// The rendered silhouettes, kept for a later check.
    pub(crate) fn into_masks(self) -> SourceMasks {
        SourceMasks {
            from: fingerprint(self.source, &self.poses),
            views: self.views.into_owned(),
            distinct: self.distinct.into_owned(),
        }
    }

    /// [`super::check_silhouettes`] of `chain`'s level `level` over these poses.
    pub(crate) fn check(&self, chain: &LodChain, level: usize) -> SilhouetteReport {
        self.check_unless(chain, level, |_| false)
    }

    /// [`Self::check`], with the poses where `drawn_as_source(pose)` (an index in the whole
    /// list) holds taken as drawing the source's own masks: no holes and no loss in any view
    /// there, as their render would find, and no render.
    pub(crate) fn check_unless(
        &self,
        chain: &LodChain,
        level: usize,
        drawn_as_source: impl Fn(usize) -> bool,
    ) -> SilhouetteReport {
        let (same, render): (Vec<usize>, Vec<usize>) =
            (0..self.distinct.first.len()).partition(|&d| drawn_as_source(self.distinct.first[d]));
        let mut per_view = self.measure(chain, level, &render);
        per_view.extend(same.iter().flat_map(|&d| {
            let pose = self.distinct.first[d] as u32;
            (0..SILHOUETTE_VIEWS).map(move |view| (0.0, 0.0, view, pose))
        }));
        fold(per_view)
    }

    /// Like [`Self::check`], but starting at pose `first` and stopping after the round of poses
    /// in which the level stops passing ([`SilhouetteReport::passes`]). Returns the report and
    /// whether every pose was checked; a report cut short holes and loss of the poses seen, so
    /// at most the whole check's (its score is a lower bound).
    pub(crate) fn check_until_failed(
        &self,
        chain: &LodChain,
        level: usize,
        first: u32,
    ) -> (SilhouetteReport, bool) {
        let n = self.distinct.first.len();
        let first = self.distinct.of_pose[first as usize % self.poses.len()];
        let order: Vec<usize> = (first..n).chain(0..first).collect();
        let mut seen = Vec::new();
        let mut worst = SilhouetteReport::default();
        for round in order.chunks(POSES_PER_ROUND) {
            for &(holes, loss, ..) in self.measure_into(chain, level, round, &mut seen) {
                worst.holes_pct = worst.holes_pct.max(holes);
                worst.loss_pct = worst.loss_pct.max(loss);
            }
            if !worst.passes() {
                return (fold(seen), round.last() == order.last());
            }
        }
        (fold(seen), true)
    }

    /// [`Self::measure`] of `poses`, appended to `seen`; returns the new entries.
    fn measure_into<'s>(
        &self,
        chain: &LodChain,
        level: usize,
        poses: &[usize],
        seen: &'s mut Vec<(f32, f32, u32, u32)>,
    ) -> &'s [(f32, f32, u32, u32)] {
        let start = seen.len();
        seen.extend(self.measure(chain, level, poses));
        &seen[start..]
    }

    /// In how many views the points `points` places in a pose (LOD0's vertices, say) land on
    /// or next to a hole pixel of level `level` of `chain`, over the views of every pose where
    /// that level shows more than `min_holes_pct` holes: the points whose loss most often
    /// opened them.
    pub(crate) fn points_in_holes(
        &self,
        chain: &LodChain,
        level: usize,
        min_holes_pct: f32,
        points: impl Fn(&[Vec3]) -> Vec<Vec3> + Sync,
    ) -> Vec<u32> {
        let flags = (0..self.distinct.first.len())
            .into_par_iter()
            .map(|d| {
                let pose = &self.poses[self.distinct.first[d]];
                let copies = self.distinct.copies[d];
                let lod = level_positions(chain, level, pose);
                let at = points(pose);
                let mut hit = vec![0u32; at.len()];
                for view in 0..SILHOUETTE_VIEWS as usize {
                    let v = &self.views[d * SILHOUETTE_VIEWS as usize + view];
                    let mask = level_mask(self.source, chain, level, &lod, v.framing);
                    let holes = holes_of(&v.covered, &mask);
                    let (count, original) = (rows::count(&holes), rows::count(&v.covered));
                    if percent(count, original) <= min_holes_pct {
                        continue;
                    }
                    for (k, &q) in at.iter().enumerate() {
                        hit[k] += copies * u32::from(near_a_hole(&holes, v.framing.pixel(q)));
                    }
                }
                hit
            })
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            });
        flags.unwrap_or_default()
    }

    /// (holes, loss, view, pose) of every view of the distinct poses `poses`, each named by its
    /// index in the whole list.
    fn measure(
        &self,
        chain: &LodChain,
        level: usize,
        poses: &[usize],
    ) -> Vec<(f32, f32, u32, u32)> {
        self.measure_placed(chain, level, poses, |p| {
            level_positions(chain, level, &self.poses[p])
        })
    }

    /// [`Self::check`] of level `level` with its vertices where `placed` puts them in each pose
    /// (one array per pose, the level's vertices in order) rather than bound to the pose's source
    /// positions: a level drawn another way (skinned from bone textures, say) against the same
    /// source silhouettes. Panics if `placed` has fewer poses than the check or a pose fewer
    /// positions than the level has vertices.
    pub(crate) fn check_placed(
        &self,
        chain: &LodChain,
        level: usize,
        placed: &[Vec<Vec3>],
    ) -> SilhouetteReport {
        let all: Vec<usize> = (0..self.distinct.first.len()).collect();
        fold(self.measure_placed(chain, level, &all, |p| placed[p].clone()))
    }

    /// (holes, loss, view, pose) of every view of the distinct poses `poses`, with the level's
    /// vertices at `place(pose)`; poses here and in the result are indices in the whole list.
    fn measure_placed(
        &self,
        chain: &LodChain,
        level: usize,
        poses: &[usize],
        place: impl Fn(usize) -> Vec<Vec3> + Sync,
    ) -> Vec<(f32, f32, u32, u32)> {
        poses
            .par_iter()
            .flat_map_iter(|&d| {
                let p = self.distinct.first[d];
                let lod = place(p);
                (0..SILHOUETTE_VIEWS).map(move |view| {
                    let v = &self.views[d * SILHOUETTE_VIEWS as usize + view as usize];
                    let mask = level_mask(self.source, chain, level, &lod, v.framing);
                    let (holes, loss) = compare_rows(&v.covered, &v.near, &mask);
                    (holes, loss, view, p as u32)
                })
            })
            .collect()
    }
}

/// Whether a hole pixel lies within one pixel (8-connected) of the pixel holding `at`.
fn near_a_hole(holes: &Rows, at: glam::Vec2) -> bool {
    let (x, y) = (at.x.floor() as i64, at.y.floor() as i64);
    (y - 1..=y + 1).any(|v| (x - 1..=x + 1).any(|u| rows::get(holes, u, v)))
}

/// The report of per-view figures: the largest holes and loss, and the view and pose where
/// their sum is largest (the first in pose, then view order, on a tie).
fn fold(mut per_view: Vec<(f32, f32, u32, u32)>) -> SilhouetteReport {
    per_view.sort_by_key(|&(_, _, view, pose)| (pose, view));
    let mut report = SilhouetteReport::default();
    let mut worst = -1.0;
    for (holes, loss, view, pose) in per_view {
        report.holes_pct = report.holes_pct.max(holes);
        report.loss_pct = report.loss_pct.max(loss);
        if holes + loss > worst {
            worst = holes + loss;
            (report.worst_view, report.worst_pose) = (view, pose);
        }
    }
    report
}

#[cfg(test)]
mod tests;
