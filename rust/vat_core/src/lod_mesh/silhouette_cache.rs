//! The source's half of the hole check, rendered once per chain.
//!
//! Building a chain checks many candidates (LOD1 and its retries, every LOD2 candidate at up to
//! three targets) against the same poses, and the source's masks do not depend on the candidate:
//! [`SourceSilhouettes`] keeps them, with their framing and the band within
//! [`LOSS_DISTANCE_PX`] of them, so each check renders only the candidate. A candidate that is
//! only being ruled out can stop at the first pose where it fails
//! ([`SourceSilhouettes::check_until_failed`]).

use std::borrow::Cow;

use glam::Vec3;
use rayon::prelude::*;

use super::silhouette::{
    compare_near, dilated, hole_test, level_mask, percent, source_mask, Framing, LOSS_DISTANCE_PX,
    SILHOUETTE_SIZE, SILHOUETTE_VIEWS,
};
use super::{level_positions, LodChain, LodSource, SilhouetteReport};

/// A pixel of the source's mask is covered.
const COVERED: u8 = 1;
/// A pixel lies within [`LOSS_DISTANCE_PX`] of a covered one.
const NEAR: u8 = 2;

/// Poses checked together between two looks at whether a candidate already failed.
const POSES_PER_ROUND: usize = 8;

/// One view of one pose of the source.
struct SourceView {
    framing: Framing,
    /// Per pixel, [`COVERED`] and [`NEAR`] bits.
    pixels: Vec<u8>,
}

/// The source's silhouettes in every view of every pose, for checking many levels.
pub(crate) struct SourceSilhouettes<'a> {
    source: &'a LodSource,
    poses: Cow<'a, [Vec<Vec3>]>,
    /// Pose-major: view `v` of pose `p` at `p * SILHOUETTE_VIEWS + v`.
    views: Vec<SourceView>,
}

impl<'a> SourceSilhouettes<'a> {
    /// Renders `source` in every view of every pose (the reference positions if `poses` is
    /// empty). Panics if a pose is shorter than the source.
    pub(crate) fn new(source: &'a LodSource, poses: &'a [Vec<Vec3>]) -> Self {
        let poses: Cow<'a, [Vec<Vec3>]> = if poses.is_empty() {
            Cow::Owned(vec![source.positions.clone()])
        } else {
            Cow::Borrowed(poses)
        };
        let size = SILHOUETTE_SIZE as usize;
        let views = (0..poses.len() * SILHOUETTE_VIEWS as usize)
            .into_par_iter()
            .map(|i| {
                let pose = &poses[i / SILHOUETTE_VIEWS as usize];
                let framing = Framing::new(source, pose, (i % SILHOUETTE_VIEWS as usize) as u32);
                let mask = source_mask(source, pose, framing);
                let near = dilated(&mask, size, LOSS_DISTANCE_PX);
                let pixels = mask
                    .iter()
                    .zip(near)
                    .map(|(&m, n)| (u8::from(m != 0) * COVERED) | (u8::from(n) * NEAR))
                    .collect();
                SourceView { framing, pixels }
            })
            .collect();
        Self {
            source,
            poses,
            views,
        }
    }

    /// [`super::check_silhouettes`] of `chain`'s level `level` over these poses.
    pub(crate) fn check(&self, chain: &LodChain, level: usize) -> SilhouetteReport {
        let all: Vec<usize> = (0..self.poses.len()).collect();
        fold(self.measure(chain, level, &all))
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
        let n = self.poses.len();
        let first = first as usize % n;
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
        let size = SILHOUETTE_SIZE as usize;
        let flags = (0..self.poses.len())
            .into_par_iter()
            .map(|p| {
                let pose = &self.poses[p];
                let lod = level_positions(chain, level, pose);
                let at = points(pose);
                let mut hit = vec![0u32; at.len()];
                for view in 0..SILHOUETTE_VIEWS as usize {
                    let v = &self.views[p * SILHOUETTE_VIEWS as usize + view];
                    let mask = level_mask(self.source, chain, level, &lod, v.framing);
                    let hole = hole_test(&mask, size);
                    let holes: Vec<bool> = (0..size * size)
                        .map(|i| v.pixels[i] & COVERED != 0 && hole(i))
                        .collect();
                    let original = v.pixels.iter().filter(|&&b| b & COVERED != 0).count();
                    let count = holes.iter().filter(|&&h| h).count();
                    if percent(count as u32, original as u32) <= min_holes_pct {
                        continue;
                    }
                    for (k, &q) in at.iter().enumerate() {
                        hit[k] += u32::from(near_a_hole(&holes, size, v.framing.pixel(q)));
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

    /// (holes, loss, view, pose) of every view of `poses`.
    fn measure(
        &self,
        chain: &LodChain,
        level: usize,
        poses: &[usize],
    ) -> Vec<(f32, f32, u32, u32)> {
        let size = SILHOUETTE_SIZE as usize;
        poses
            .par_iter()
            .flat_map_iter(|&p| {
                let lod = level_positions(chain, level, &self.poses[p]);
                (0..SILHOUETTE_VIEWS).map(move |view| {
                    let v = &self.views[p * SILHOUETTE_VIEWS as usize + view as usize];
                    let mask = level_mask(self.source, chain, level, &lod, v.framing);
                    let source = |i: usize| (v.pixels[i] & COVERED != 0, v.pixels[i] & NEAR != 0);
                    let (holes, loss) = compare_near(source, &mask, size);
                    (holes, loss, view, p as u32)
                })
            })
            .collect()
    }
}

/// Whether a hole pixel lies within one pixel (8-connected) of the pixel holding `at`.
fn near_a_hole(holes: &[bool], size: usize, at: glam::Vec2) -> bool {
    let (x, y) = (at.x.floor() as i64, at.y.floor() as i64);
    let n = size as i64;
    (y - 1..=y + 1).any(|v| {
        (x - 1..=x + 1)
            .any(|u| (0..n).contains(&u) && (0..n).contains(&v) && holes[(v * n + u) as usize])
    })
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
