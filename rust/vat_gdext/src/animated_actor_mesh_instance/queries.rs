//! `AnimatedActorMeshInstance`'s playback queries: clip times and finished clips, computed from
//! the crowd clock and the clip table by `vat_core::crowd` (no per-actor timer, no GPU
//! read-back).
//!
//! The node feeds its tracker from `add_actor`, `set_actors` and `set_actor_transforms` (one
//! call each) and ends its frame in `submit()`.

use super::immediate::read_frame;
use super::*;

const NODE: &str = "AnimatedActorMeshInstance";

#[godot_api(secondary)]
impl AnimatedActorMeshInstance {
    /// Where actor `actor` (an index of this frame's actors) is in its clip now, in clip-local
    /// seconds, as the shader samples it: `(time - start_time) * speed`, wrapped into the clip
    /// for a looped clip, clamped to `[0, duration]` for a non-looped one, 0 for a pose. Equals
    /// the drawn pose's time up to the f32 rounding of the shader's clock. Returns -1 with an
    /// error if `actor` is not one of this frame's actors.
    #[func]
    fn get_actor_clip_time(&self, actor: i32) -> f64 {
        main_thread_only!("AnimatedActorMeshInstance", "get_actor_clip_time", -1.0);
        let Some(frame) = read_frame(&self.frame, NODE, "get_actor_clip_time") else {
            return -1.0;
        };
        let n = frame.actor_count;
        let time = (actor >= 0 && (actor as usize) < n)
            .then(|| frame.ends.clip_time(actor as usize, self.core.clock.time()))
            .flatten();
        time.unwrap_or_else(|| {
            godot_error!(
                "vat_crowd: get_actor_clip_time: actor {actor} out of range ({n} actors this \
                 frame); returns -1"
            );
            -1.0
        })
    }

    /// The actors (indices of the frame last submitted, ascending) whose non-looped clip reached
    /// its end between the previous `submit()` and the last one, by the crowd clock: the death
    /// clip ended, remove the body. Each clip start is listed once: submitting the same actor
    /// state again, pausing or moving the clock back does not list it again, and an actor given
    /// another clip (or start time, or speed) before the end is not listed for the old one. A
    /// pose ends at its start; a clip played backwards ends at its start time; at speed 0 it never
    /// ends. The first submit lists every clip already over. Costs the actors whose end came due,
    /// not the crowd size.
    #[func]
    fn get_finished_actors(&self) -> PackedInt32Array {
        main_thread_only!("AnimatedActorMeshInstance", "get_finished_actors");
        read_frame(&self.frame, NODE, "get_finished_actors")
            .map_or_else(PackedInt32Array::new, |f| {
                PackedInt32Array::from(f.ends.finished())
            })
    }
}
