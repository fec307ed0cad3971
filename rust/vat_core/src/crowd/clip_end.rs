//! Game-facing playback queries from the crowd clock and the clip table, with no per-actor timer
//! and no GPU read-back: where in its clip an actor is ([`clip_time`]), when a non-looped clip
//! ends ([`end_time`]) and which actors' clips ended between two submits ([`FinishTracker`]).
//!
//! Times here are absolute crowd seconds in f64 (never rebased), so a clock rebase changes
//! nothing. An actor's playback is `t = (now - start) * speed` clip-local seconds, the shader's
//! formula (`vat_instance` / `vat_clip_frames`), with the speed rounded to the f16 the actor record
//! stores ([`stored_speed`]).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::clip::Clip;
use crate::crowd::moves::ClipChange;
use crate::crowd::prefetch::{prefetch, AHEAD};
use crate::half::{f16_to_f32, f32_to_f16};

/// The speed the shader plays: `speed` rounded to the f16 an actor record stores.
pub fn stored_speed(speed: f32) -> f32 {
    f16_to_f32(f32_to_f16(speed))
}

/// Clip-local seconds of `clip` after `elapsed` crowd seconds at `speed`, as the shader samples
/// it ([`crate::clip::sample`]): wrapped into `[0, duration)` for a looped clip (negative times
/// play backwards into it), clamped to `[0, duration]` for a non-looped one, 0 for a pose. A
/// non-finite product counts as 0, as in `sample`.
pub fn clip_time(clip: &Clip, elapsed: f64, speed: f32) -> f64 {
    let t = elapsed * f64::from(speed);
    let t = if t.is_finite() { t } else { 0.0 };
    let d = f64::from(clip.duration);
    if clip.is_pose() {
        0.0
    } else if clip.looped {
        // rem_euclid can round up to `d` for tiny negative t; the shader clamps that to the
        // last frame, which is the same pose as just below `d`.
        t.rem_euclid(d).min(d)
    } else {
        t.clamp(0.0, d)
    }
}

/// The crowd time at which `clip`, started at `start` and played at `speed`, reaches its end and
/// holds there, or `None` if it never does. A looped clip never ends; a pose ends at once (at
/// `start`); at a negative speed a non-looped clip plays backwards and ends when it reaches its
/// first frame, at `start` (before that its clip time is above 0); at speed 0 it stands still and
/// never ends.
pub fn end_time(clip: &Clip, start: f64, speed: f32) -> Option<f64> {
    if clip.looped {
        return None;
    }
    if clip.is_pose() || speed < 0.0 {
        return Some(start);
    }
    if speed == 0.0 || speed.is_nan() {
        return None;
    }
    Some(start + f64::from(clip.duration) / f64::from(speed))
}

/// What an actor plays, as the tracker last saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Playback {
    clip: u32,
    start: f64,
    speed: f32,
}

/// Per actor: its playback (`None`: no actor there), the generation that tells its heap entry
/// from stale ones, and whether an entry of this generation is still waiting in the heap.
#[derive(Debug, Clone, Copy, Default)]
struct Tracked {
    playback: Option<Playback>,
    generation: u32,
    pending: bool,
}

/// A heap entry: actor `actor` (in generation `generation`) reaches its clip's end at `end`.
#[derive(Debug, Clone, Copy)]
struct Due {
    end: f64,
    actor: u32,
    generation: u32,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Due {
    fn cmp(&self, other: &Self) -> Ordering {
        self.end
            .total_cmp(&other.end)
            .then(self.actor.cmp(&other.actor))
            .then(self.generation.cmp(&other.generation))
    }
}

/// Which actors' non-looped clips ended between two submits, from the clip table and each
/// actor's (clip, start time, speed): a min-heap of end times, so a submit costs only the actors
/// whose end came due, and an actor whose playback did not change costs one comparison when it is
/// written again.
///
/// The rule: an actor is listed by [`FinishTracker::finish`] when its clip's end falls after the
/// previous `finish`'s time and at or before this one's (the first `finish` lists every end up to
/// its time). Each playback is listed at most once: writing the same playback again, pausing the
/// clock or moving it back never lists it again. A new clip, start time or speed replaces the old
/// end (an actor given a new clip before its old one ended is not listed for the old one), and an
/// actor dropped by `finish(n, ..)` (index `n` or above) is forgotten.
#[derive(Debug, Clone)]
pub struct FinishTracker {
    /// The clip table the actors' clip indices point into.
    clips: Vec<Clip>,
    actors: Vec<Tracked>,
    heap: BinaryHeap<Reverse<Due>>,
    /// Heap entries whose actor still has that generation and has not been listed.
    live_entries: usize,
    /// The time of the previous `finish` (negative infinity before the first).
    last: f64,
    finished: Vec<i32>,
    /// The last [`FinishTracker::set_bulk`] input, compared a chunk at a time so a bulk frame
    /// whose states did not change costs about a memcmp; `None` once anything else set an actor.
    bulk: Option<(Vec<i32>, Vec<f32>)>,
}

/// Actors per chunk that [`FinishTracker::set_bulk`] compares with the last bulk input at once.
const BULK_CHUNK: usize = 256;

impl Default for FinishTracker {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

impl FinishTracker {
    /// A tracker for the clip table `clips` with no actors.
    pub fn new(clips: Vec<Clip>) -> Self {
        Self {
            clips,
            actors: Vec::new(),
            heap: BinaryHeap::new(),
            live_entries: 0,
            last: f64::NEG_INFINITY,
            finished: Vec::new(),
            bulk: None,
        }
    }

    /// Forgets every actor and takes a new clip table (after the crowd's models changed).
    pub fn reset(&mut self, clips: Vec<Clip>) {
        *self = Self::new(clips);
    }

    /// Records that actor `actor` plays clip `clip` since `start` (absolute crowd seconds) at
    /// `speed` (rounded to the stored f16 here). A clip outside the table never ends.
    pub fn set(&mut self, actor: usize, clip: u32, start: f64, speed: f32) {
        self.bulk = None;
        self.set_one(actor, clip, start, speed);
    }

    /// Records each of `changes` as [`FinishTracker::set`] does, in order: the actors a bulk
    /// call (`set_clips_bulk`) switched, scattered over the crowd.
    pub fn set_changes(&mut self, changes: &[ClipChange]) {
        self.bulk = None;
        for (i, c) in changes.iter().enumerate() {
            if let Some(ahead) = changes.get(i + AHEAD) {
                prefetch(&self.actors, ahead.actor);
            }
            self.set_one(c.actor, c.clip, f64::from(c.start_time), c.speed);
        }
    }

    /// Records actors `0..n` from a bulk call: clip `clips[i]` (none: 0) since `starts[i]` (none:
    /// 0) at speed 1, as [`FinishTracker::set`] does one by one; chunks equal to the last bulk
    /// input are skipped after one comparison. Slices shorter than `n` panic.
    pub fn set_bulk(&mut self, n: usize, clips: Option<&[i32]>, starts: Option<&[f32]>) {
        let (mut old_clips, mut old_starts) = match self.bulk.take() {
            Some((c, s)) if c.len() == n => (c, s),
            _ => (vec![-1; n], vec![f32::NAN; n]),
        };
        for first in (0..n).step_by(BULK_CHUNK) {
            let end = (first + BULK_CHUNK).min(n);
            let same_clips = match clips {
                Some(c) => c[first..end] == old_clips[first..end],
                None => old_clips[first..end].iter().all(|&c| c == 0),
            };
            // Bit equality, so a NaN never matches and -0.0 is a change the packer sees too.
            let same_starts = match starts {
                Some(s) => s[first..end]
                    .iter()
                    .zip(&old_starts[first..end])
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                None => old_starts[first..end].iter().all(|b| b.to_bits() == 0),
            };
            if same_clips && same_starts {
                continue;
            }
            for i in first..end {
                let clip = clips.map_or(0, |c| c[i]);
                let start = starts.map_or(0.0, |s| s[i]);
                if clip == old_clips[i] && start.to_bits() == old_starts[i].to_bits() {
                    continue;
                }
                (old_clips[i], old_starts[i]) = (clip, start);
                self.set_one(i, clip as u32, f64::from(start), 1.0);
            }
        }
        self.bulk = Some((old_clips, old_starts));
    }

    fn set_one(&mut self, actor: usize, clip: u32, start: f64, speed: f32) {
        let playback = Playback {
            clip,
            start,
            speed: stored_speed(speed),
        };
        if actor >= self.actors.len() {
            self.actors.resize(actor + 1, Tracked::default());
        }
        if self.actors[actor].playback == Some(playback) {
            return;
        }
        self.invalidate(actor);
        let tracked = &mut self.actors[actor];
        tracked.playback = Some(playback);
        let end = self
            .clips
            .get(clip as usize)
            .and_then(|c| end_time(c, start, playback.speed));
        // An end at or before the previous finish was not "since" it: never listed.
        if let Some(end) = end.filter(|&e| e > self.last) {
            tracked.pending = true;
            self.heap.push(Reverse(Due {
                end,
                actor: actor as u32,
                generation: tracked.generation,
            }));
            self.live_entries += 1;
        }
        self.compact_if_stale();
    }

    /// Clip-local seconds of actor `actor` at crowd time `now` ([`clip_time`]), or `None` if no
    /// actor with a clip in the table is recorded there.
    pub fn clip_time(&self, actor: usize, now: f64) -> Option<f64> {
        let p = self.actors.get(actor)?.playback?;
        let clip = self.clips.get(p.clip as usize)?;
        Some(clip_time(clip, now - p.start, p.speed))
    }

    /// Ends a frame of `n` actors at crowd time `now`: forgets actors `n` and above, then returns
    /// the actors (ascending) whose clip ended since the previous `finish` (see the type's rule).
    /// Costs the entries that came due, not the crowd size.
    pub fn finish(&mut self, n: usize, now: f64) -> &[i32] {
        if n < self.actors.len() {
            self.bulk = None;
        }
        for actor in n..self.actors.len() {
            self.invalidate(actor);
            self.actors[actor].playback = None;
        }
        self.actors.truncate(n);
        self.finished.clear();
        while let Some(Reverse(due)) = self.heap.peek().copied() {
            if due.end > now {
                break;
            }
            self.heap.pop();
            let Some(tracked) = self.actors.get_mut(due.actor as usize) else {
                continue;
            };
            if tracked.pending && tracked.generation == due.generation {
                tracked.pending = false;
                self.live_entries -= 1;
                self.finished.push(due.actor as i32);
            }
        }
        self.finished.sort_unstable();
        // After the clock moved back, ends between the new time and the old one count again
        // (those already listed left the heap, so they are not listed twice).
        self.last = now;
        &self.finished
    }

    /// The list the last [`FinishTracker::finish`] returned.
    pub fn finished(&self) -> &[i32] {
        &self.finished
    }

    /// Entries waiting in the heap, stale ones included (for tests of the heap's growth).
    pub fn heap_len(&self) -> usize {
        self.heap.len()
    }

    /// Makes actor `actor`'s waiting entry stale (its playback is about to change or go).
    fn invalidate(&mut self, actor: usize) {
        let tracked = &mut self.actors[actor];
        if tracked.pending {
            tracked.pending = false;
            self.live_entries -= 1;
        }
        tracked.generation = tracked.generation.wrapping_add(1);
    }

    /// Drops stale entries once they outnumber the live ones (a caller restarting non-looped
    /// clips every frame would otherwise grow the heap by a crowd per frame); amortised O(1) per
    /// change.
    fn compact_if_stale(&mut self) {
        if self.heap.len() <= 2 * self.live_entries + 1024 {
            return;
        }
        let actors = &self.actors;
        self.heap.retain(|Reverse(d)| {
            actors
                .get(d.actor as usize)
                .is_some_and(|t| t.pending && t.generation == d.generation)
        });
    }
}

#[cfg(test)]
mod tests;
