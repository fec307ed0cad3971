//! LOD1 checked against the silhouettes of the poses it will be drawn in.
//!
//! LOD1 aims at `lod1_ratio` first. A character whose outline has more detail than that keeps
//! (a small blocky figure) may still show holes; LOD1 is then rebuilt aiming higher inside the
//! same window (`lod1_ratio * 45/52 ..= lod1_ratio * 60/52`) until it passes. LOD1 uses only
//! LOD0's vertices and columns, so nothing else in the chain changes.

use super::silhouette::SourceSilhouettes;
use super::simplify::{simplify_lod1, simplify_lod1_to, WINDOW};
use super::weld::Welded;
use super::{LodChain, LodLevel, LodSettings, LodSource, SilhouetteReport};
use crate::error::Result;

/// Where the retries aim, as fractions of the way from `lod1_ratio` to the window's top (the
/// last stays a little below it, so a search that lands just over its target is still inside).
const RETRY_STEPS: [f32; 3] = [1.0 / 3.0, 2.0 / 3.0, 0.95];

/// LOD1 of `lod0` that passes the silhouette check ([`SilhouetteReport::passes`]) against
/// `masks`: the first build, else the first retry that passes,
/// else the attempt with the best [`SilhouetteReport::score`] (the bake's own check then drops
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
    // LOD1 alone over LOD0's columns: all the check needs.
    let mut alone = LodChain {
        levels: vec![simplify_lod1(source, lod0, settings)?],
        columns: lod0.columns.clone(),
    };
    // The report of the level `alone` holds, and whether it saw every pose.
    let (mut best, mut complete) = masks.check_until_failed(&alone, 0, 0);
    if complete && pass(&best) {
        return Ok((alone.levels.remove(0), best));
    }
    let top = settings.lod1_ratio * WINDOW.1;
    for step in RETRY_STEPS {
        let share = settings.lod1_ratio + step * (top - settings.lod1_ratio);
        let Ok(lod1) = simplify_lod1_to(source, lod0, settings, share) else {
            break;
        };
        let previous = std::mem::replace(&mut alone.levels[0], lod1);
        let (report, seen_all) = masks.check_until_failed(&alone, 0, best.worst_pose);
        if seen_all && pass(&report) {
            return Ok((alone.levels.remove(0), report));
        }
        if report.score() < best.score() {
            (best, complete) = (report, seen_all);
        } else {
            alone.levels[0] = previous;
        }
    }
    if !complete {
        best = masks.check(&alone, 0);
    }
    Ok((alone.levels.remove(0), best))
}

#[cfg(test)]
#[path = "checked_tests.rs"]
mod tests;
