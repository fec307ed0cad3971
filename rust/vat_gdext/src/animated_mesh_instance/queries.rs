//! `AnimatedMeshInstance`'s playback query: an instance's clip time from the crowd clock and the
//! clip table (`vat_core::crowd`).

use super::*;

#[godot_api(secondary)]
impl AnimatedMeshInstance {
    /// Where instance `id` is in its clip now, in clip-local seconds, as the shader samples it:
    /// `(time - start) * speed`, wrapped into the clip for a looped clip, clamped to
    /// `[0, duration]` for a non-looped one, 0 for a pose. Returns -1 with an error for an
    /// unknown id.
    #[func]
    fn get_instance_clip_time(&self, id: i32) -> f64 {
        main_thread_only!("AnimatedMeshInstance", "get_instance_clip_time", -1.0);
        let Some(slot) = self.slot_of(id, "get_instance_clip_time") else {
            return -1.0;
        };
        let inst = &self.instances.items()[slot];
        let clips = self
            .animation
            .as_ref()
            .map(|a| a.bind().clips())
            .unwrap_or_default();
        let Some(clip) = clips.get(inst.clip as usize) else {
            godot_error!(
                "vat_crowd: get_instance_clip_time({id}): the animation has no clip {} any more; \
                 returns -1",
                inst.clip
            );
            return -1.0;
        };
        let speed = vat_core::crowd::stored_speed(inst.speed);
        vat_core::crowd::clip_time(clip, self.core.clock.time() - inst.start, speed)
    }
}
