//! `AnimatedMeshInstance`'s helpers that Godot does not see: GPU setup, limits, id and value
//! checks.

use super::*;

/// A validated `play_animation` request.
#[derive(Clone, Copy)]
pub(super) struct Playing {
    pub(super) clip: u32,
    pub(super) blend_time: f32,
    pub(super) speed: f32,
}

pub(super) fn play(inst: &mut Instance, now: f64, p: Playing) {
    let elapsed = ((now - inst.start) * f64::from(inst.speed)) as f32;
    inst.prev_clip = inst.clip;
    inst.prev_elapsed = elapsed.max(0.0);
    inst.blend_time = p.blend_time;
    inst.clip = p.clip;
    inst.start = now;
    inst.speed = p.speed;
}

impl CrowdNode for AnimatedMeshInstance {
    fn gpu_ref(&self, _what: &str) -> Option<impl std::ops::Deref<Target = CrowdGpu> + '_> {
        self.gpu.as_ref()
    }

    fn gpu_mut(&mut self) -> Option<&mut CrowdGpu> {
        self.gpu.as_mut()
    }

    fn reset_gpu(&mut self) {
        if let Some(gpu) = self.gpu.take() {
            gpu.free();
        }
        self.gpu_error = None;
        // New textures hold nothing yet.
        self.instances.mark_all();
        self.dirty = true;
    }

    fn refresh_frame(&mut self) {
        // Written but not submitted: the records do not hold every instance yet, and the next
        // submit runs the frame anyway.
        if self.gpu.is_none() || self.dirty {
            return;
        }
        let n = self.instances.len();
        let request = self.frame_request(n, crowd::record_floats(self.core.full_transform));
        if let Some(gpu) = &mut self.gpu {
            gpu.refresh(&request);
        }
    }

    fn clock_rebased(&mut self, _old_origin: f64) {
        // Stored start times are relative to the origin: re-pack them all.
        self.instances.mark_all();
        self.dirty = true;
    }

    fn time_set(&mut self) {
        self.dirty = true;
    }

    fn full_transform_fits(&self, full: bool) -> Result<(), String> {
        match &self.gpu {
            Some(gpu) if full => {
                let texels = crowd::record_texels(true);
                let n = self.instances.len();
                crowd::check_item_count("instances", n, texels, gpu.max_texture_size)
                    .map_err(|e| e.to_string())
            }
            _ => Ok(()),
        }
    }
}

impl AnimatedMeshInstance {
    pub(super) fn push(&mut self, inst: Instance) -> i32 {
        match self.instances.insert(inst) {
            Some(id) => {
                self.dirty = true;
                id as i32
            }
            None => {
                godot_error!(
                    "vat_crowd: add_instance: no id is left (2^24 ids, each reused up to 127 \
                     times); clear() starts them afresh; not added"
                );
                -1
            }
        }
    }

    /// Checks a clip, blend time and speed for `play_animation(s)`, reporting the first bad one.
    pub(super) fn playing(
        &mut self,
        clip: i32,
        blend_time: f64,
        speed: f64,
        what: &str,
    ) -> Option<Playing> {
        if !self.clip_ok(clip, what) {
            return None;
        }
        let checked = vat_core::crowd::blend_time(blend_time, "blend time")
            .and_then(|b| Ok((b, vat_core::crowd::speed(speed, "speed")?)));
        match checked {
            Ok((blend_time, speed)) => Some(Playing {
                clip: clip as u32,
                blend_time,
                speed,
            }),
            Err(e) => {
                godot_error!("vat_crowd: {what}: {e}; nothing changed");
                None
            }
        }
    }

    /// True if `more` instances fit beside the live ones (the 24-bit actor index and the
    /// renderer's texture size); else reports the limit. Needs the GPU objects.
    pub(super) fn room_for(&self, more: usize, what: &str) -> bool {
        let Some(gpu) = &self.gpu else {
            return false;
        };
        let wanted = self.instances.len() + more;
        let texels = crowd::record_texels(self.core.full_transform);
        match crowd::check_item_count("instances", wanted, texels, gpu.max_texture_size) {
            Ok(()) => true,
            Err(e) => {
                godot_error!("vat_crowd: {what}: {e}; nothing added");
                false
            }
        }
    }

    /// The slots of ids `first_id..first_id + n`, or `None` after reporting the first entry whose
    /// id is unknown or that `valid(entry)` rejects as not finite.
    pub(super) fn slots_for(
        &self,
        first_id: i32,
        n: usize,
        valid: impl Fn(usize) -> bool,
        what: &str,
    ) -> Option<std::vec::IntoIter<usize>> {
        let mut slots = Vec::with_capacity(n);
        for i in 0..n {
            let id = first_id.saturating_add(i as i32);
            let slot = self.slot_of(id, what)?;
            if !valid(i) {
                godot_error!(
                    "vat_crowd: {what}: entry {i} (id {id}) is not finite; nothing changed"
                );
                return None;
            }
            slots.push(slot);
        }
        Some(slots.into_iter())
    }

    pub(super) fn slot_of(&self, id: i32, what: &str) -> Option<usize> {
        let slot = self.instances.slot(i64::from(id));
        if slot.is_none() {
            godot_error!(
                "vat_crowd: {what}: no instance with id {id} (removed, cleared or never added); \
                 nothing changed"
            );
        }
        slot
    }

    pub(super) fn clip_ok(&mut self, clip: i32, what: &str) -> bool {
        if !self.ensure_gpu() {
            return false;
        }
        if clip < 0 || clip as u32 >= self.clip_count {
            godot_error!(
                "vat_crowd: {what}: clip {clip} out of range ({} clips)",
                self.clip_count
            );
            return false;
        }
        true
    }

    pub(super) fn variation_ok(&self, variation: i32, what: &str) -> bool {
        if variation < 0 || variation as u32 >= self.variation_count {
            godot_error!(
                "vat_crowd: {what}: variation {variation} out of range ({} variations)",
                self.variation_count
            );
            return false;
        }
        true
    }

    pub(super) fn ensure_gpu(&mut self) -> bool {
        if self.gpu.is_some() {
            return true;
        }
        let result = (|| {
            let animation = self
                .animation
                .clone()
                .ok_or_else(|| "no animation is set".to_string())?;
            if !animation.bind().is_baked() {
                return Err(format!("animation '{}' is not baked", animation.get_path()));
            }
            let mut owner = self.to_gd().upcast::<Node3D>();
            let gpu = CrowdGpu::new(
                &mut owner,
                std::slice::from_ref(&animation),
                std::slice::from_ref(&self.material_override),
                self.core.cast(),
                self.core.full_transform,
                self.core.gpu_driven,
            )?;
            self.clip_count = animation.bind().get_clip_count() as u32;
            self.variation_count = animation
                .bind()
                .get_variations()
                .map_or(1, |v| v.get_layers().max(1) as u32);
            Ok(gpu)
        })();
        match result {
            Ok(gpu) => {
                self.gpu = Some(gpu);
                true
            }
            Err(e) => {
                let name = self.base().get_name().to_string();
                report_once(&mut self.gpu_error, &name, e);
                false
            }
        }
    }
}
