//! LOD1 checked against the silhouettes of the poses it will be drawn in.
//!
//! LOD1 aims at `lod1_ratio` first. A character whose outline has more detail than that keeps
//! (a small blocky figure) may still show holes; LOD1 is then rebuilt aiming higher inside the
//! same window (`lod1_ratio * 45/52 ..= lod1_ratio * 60/52`) until it passes. If none passes,
//! repair rounds follow: LOD0's points that land in the holes (the tip of a shoe cut off, in the
//! view and pose that show it) are locked, and LOD1 is built again at the best attempt's share,
//! so the triangles go where the outline needs them. LOD1 uses only LOD0's vertices and
//! columns, so nothing else in the chain changes.

use super::level_positions;
use super::silhouette::{SourceSilhouettes, MAX_HOLES_PCT};
use super::simplify::{simplify_lod1, simplify_lod1_to, WINDOW};
use super::weld::Welded;
use super::{LodChain, LodLevel, LodSettings, LodSource, SilhouetteReport};
use crate::error::Result;

/// Where the retries aim, as fractions of the way from `lod1_ratio` to the window's top (the
/// last stays a little below it, so a search that lands just over its target is still inside).
const RETRY_STEPS: [f32; 3] = [1.0 / 3.0, 2.0 / 3.0, 0.95];
/// Repair rounds after the retries, each locking the points found in the last attempt's holes.
const REPAIR_ROUNDS: usize = 6;
/// Views whose holes pass this share of [`MAX_HOLES_PCT`] send their points to the repair.
const REPAIR_FROM: f32 = 0.5;
/// A repair round pins at most one LOD0 point in this many.
const PIN_SHARE: usize = 40;

/// LOD1 of `lod0` that passes the silhouette check ([`SilhouetteReport::passes`]) against
/// `masks`: the first build, else the first retry that passes, else the first repair (see the
/// module docs) that passes, else the attempt with the best [`SilhouetteReport::score`] (the bake's own check then drops
/// it), with its report. A retry that misses the window ends the retries. Errors: those of the
/// first build.
pub(crate) fn checked_lod1(
    source: &LodSource,
    lod0: &Welded,
    settings: &LodSettings,
    masks: &SourceSilhouettes,
) -> Result<(LodLevel, SilhouetteReport)> {
    checked_lod1_with(source, lod0, settings, masks, SilhouetteReport::passes)
}

/// [`checked_lod1`] with `pass` deciding which reports pass. Attempts are checked only until
/// they fail ([`SourceSilhouettes::check_until_failed`], from the previous attempt's worst
/// pose); a report cut short never passes, and the attempt kept after all failed is checked
/// in full.
fn checked_lod1_with(
    source: &LodSource,
    lod0: &Welded,
    settings: &LodSettings,
    masks: &SourceSilhouettes,
    pass: impl Fn(&SilhouetteReport) -> bool,
) -> Result<(LodLevel, SilhouetteReport)> {
    let first = simplify_lod1(source, lod0, settings)?;
    let (report, complete) = masks.check_until_failed(&alone(lod0, first.clone()), 0, 0);
    let mut best = Best {
        level: first,
        report,
        complete,
        share: settings.lod1_ratio,
        version: 0,
    };
    if complete && pass(&best.report) {
        return Ok((best.level, best.report));
    }
    let top = settings.lod1_ratio * WINDOW.1;
    for step in RETRY_STEPS {
        let share = settings.lod1_ratio + step * (top - settings.lod1_ratio);
        let Ok(lod1) = simplify_lod1_to(source, lod0, settings, share, &[]) else {
            break;
        };
        if best.offer(lod0, lod1, share, masks, &pass) {
            return Ok((best.level, best.report));
        }
    }
    let lod0_alone = alone(lod0, lod0.level.clone());
    let groups = lod0
        .position_group
        .iter()
        .max()
        .map_or(0, |g| *g as usize + 1);
    let mut pinned = vec![false; groups];
    let min_holes = REPAIR_FROM * MAX_HOLES_PCT;
    // The hits of the best attempt, kept while it stays the best: a repair that does not beat
    // it sends the next round to the same points.
    let mut known: Option<(u32, Vec<u32>)> = None;
    for _ in 0..REPAIR_ROUNDS {
        let hits = match known.take() {
            Some((version, hits)) if version == best.version => hits,
            _ => masks.points_in_holes(&alone(lod0, best.level.clone()), 0, min_holes, |pose| {
                level_positions(&lod0_alone, 0, pose)
            }),
        };
        let found = points_to_pin(lod0, &best.level, &hits, &pinned);
        known = Some((best.version, hits));
        if found.is_empty() {
            break;
        }
        for g in found {
            pinned[g] = true;
        }
        let share = best.share;
        let Ok(lod1) = simplify_lod1_to(source, lod0, settings, share, &pinned) else {
            break;
        };
        if best.offer(lod0, lod1, share, masks, &pass) {
            return Ok((best.level, best.report));
        }
    }
    if !best.complete {
        best.report = masks.check(&alone(lod0, best.level.clone()), 0);
    }
    Ok((best.level, best.report))
}

/// The next points to pin (position groups of `lod0`), from `hits` (per LOD0 vertex, the views
/// where it lies in a hole of `lod1`): those `lod1` removed and not yet `pinned`, found in holes
/// most often, at most one in [`PIN_SHARE`], so the budget they take stays small and the next
/// round sees what they fixed.
fn points_to_pin(lod0: &Welded, lod1: &LodLevel, hits: &[u32], pinned: &[bool]) -> Vec<usize> {
    let kept: std::collections::HashSet<u32> = lod1.vertices.iter().map(|v| v.column).collect();
    let mut per_group = vec![0u32; pinned.len()];
    for (v, &n) in hits.iter().enumerate() {
        let g = lod0.position_group[v] as usize;
        if !pinned[g] && !kept.contains(&lod0.level.vertices[v].column) {
            per_group[g] += n;
        }
    }
    let mut found: Vec<(u32, usize)> = per_group
        .into_iter()
        .enumerate()
        .filter(|&(_, n)| n > 0)
        .map(|(g, n)| (n, g))
        .collect();
    found.sort_unstable_by(|a, b| b.cmp(a));
    found.truncate((pinned.len() / PIN_SHARE).max(1));
    found.into_iter().map(|(_, g)| g).collect()
}

/// `level` alone over LOD0's columns: all the check needs.
fn alone(lod0: &Welded, level: LodLevel) -> LodChain {
    LodChain {
        levels: vec![level],
        columns: lod0.columns.clone(),
    }
}

/// The best attempt so far, with its report (and whether that saw every pose) and the share it
/// aimed at.
struct Best {
    level: LodLevel,
    report: SilhouetteReport,
    complete: bool,
    share: f32,
    /// Counts the attempts that took the place of the best.
    version: u32,
}

impl Best {
    /// Checks `lod1` (built aiming at `share`) until it fails, from the best attempt's worst
    /// pose, and keeps it if it scores better. True if it passes.
    fn offer(
        &mut self,
        lod0: &Welded,
        lod1: LodLevel,
        share: f32,
        masks: &SourceSilhouettes,
        pass: &impl Fn(&SilhouetteReport) -> bool,
    ) -> bool {
        let chain = alone(lod0, lod1);
        let (report, seen_all) = masks.check_until_failed(&chain, 0, self.report.worst_pose);
        let passed = seen_all && pass(&report);
        if passed || report.score() < self.report.score() {
            let LodChain { mut levels, .. } = chain;
            (self.level, self.report, self.complete, self.share) =
                (levels.remove(0), report, seen_all, share);
            self.version += 1;
        }
        passed
    }
}

#[cfg(test)]
mod tests;
