//! A crowd drawn by the GPU-driven frame (`gpu_frame`): which crowds can be, and what
//! [`CrowdGpu`] does each frame in its place of the CPU frame: the parameter block, the slots'
//! plans, and the counters read back (statistics, and slots grown where the pass asked for more
//! room than their MultiMesh had).

use godot::classes::geometry_instance_3d::ShadowCastingSetting;
use godot::classes::{Material, ShaderMaterial};
use godot::prelude::*;
use vat_core::crowd::{pack_gpu_params, FrameSettings, View, COUNTER_LEVELS, COUNTER_SLOTS};

use super::gpu::{report_once, CrowdGpu, FrameRequest};
use super::gpu_frame::{self, GpuFrame, SlotPlan};
use super::slot::INDIRECT_START_CAPACITY;

/// The names a shader reads its instances through for the GPU frame to draw it (see
/// `shaders/vat_crowd.gdshaderinc`).
const DRIVEN_LOOKUPS: [&str; 2] = ["VAT_INSTANCE", "vat_instance_at"];

/// Whether a crowd with these override materials can be drawn by the GPU frame on this
/// renderer. A material whose shader reads instances only through `vat_instance(INSTANCE_ID)`
/// cannot (the GPU frame passes the actor in the instance's custom data): warned once.
pub fn can_drive(overrides: &[Option<Gd<Material>>]) -> bool {
    if gpu_frame::unsupported_reason().is_some() {
        return false;
    }
    for m in overrides.iter().flatten() {
        let code = m
            .clone()
            .try_cast::<ShaderMaterial>()
            .ok()
            .and_then(|m| m.get_shader())
            .map(|s| s.get_code().to_string())
            .unwrap_or_default();
        if !DRIVEN_LOOKUPS.iter().any(|name| code.contains(name)) {
            godot_warn!(
                "vat_crowd: a material_override reads its instances without VAT_INSTANCE, so \
                 its crowd keeps the CPU frame; write `VatInstance inst = VAT_INSTANCE;` in its \
                 vertex() to let the GPU frame draw it"
            );
            return false;
        }
    }
    true
}

/// The GPU frame of one crowd and what it read back.
pub struct Driven {
    frame: GpuFrame,
    lod_counts: Vec<u32>,
    error: Option<String>,
}

impl Driven {
    /// Nothing run yet.
    pub fn new() -> Self {
        Self {
            frame: GpuFrame::new(),
            lod_counts: Vec::new(),
            error: None,
        }
    }

    /// Actors in the view per level, as last read back.
    pub fn lod_counts(&self) -> &[u32] {
        &self.lod_counts
    }

    /// Bytes handed to the rendering device so far.
    pub fn sent_bytes(&self) -> u64 {
        self.frame.sent_bytes()
    }
}

impl CrowdGpu {
    /// True when the GPU frame draws this crowd and its pass runs.
    pub fn gpu_driven_active(&self) -> bool {
        self.driven
            .as_ref()
            .is_some_and(|d| d.error.is_none() && d.frame.error().is_none())
    }

    /// Tells the GPU frame the slots' command buffers (to free with it).
    pub(super) fn register_commands(&mut self) {
        let commands = self
            .models
            .iter()
            .flat_map(|m| m.slots.iter())
            .map(|s| s.command_buffer())
            .collect();
        if let Some(d) = self.driven.as_mut() {
            d.frame.set_commands(commands);
        }
    }

    /// Takes the counters read back since the last frame: the per-level counts, each slot's
    /// count, and room for slots that asked for more. True if a slot grew (the frame must run
    /// again to fill it).
    fn apply_readback(&mut self) -> bool {
        let Some(driven) = self.driven.as_mut() else {
            return false;
        };
        if let (None, Some(e)) = (&driven.error, driven.frame.error()) {
            godot_error!("vat_crowd: {e}; this crowd draws nothing");
            driven.error = Some(e);
        }
        let Some(counters) = driven.frame.poll() else {
            return false;
        };
        let levels = self.shape.levels();
        driven.lod_counts = counters[COUNTER_LEVELS..COUNTER_LEVELS + levels].to_vec();
        let mut grown = false;
        let slots = self.models.iter_mut().flat_map(|m| m.slots.iter_mut());
        for (k, slot) in slots.enumerate() {
            let asked = counters.get(COUNTER_SLOTS + k).copied().unwrap_or(0) as usize;
            if asked > slot.capacity() {
                // Half again as much room, so a camera that keeps turning does not outrun it.
                if let Some(old) = slot.grow_indirect(asked + asked / 2) {
                    driven.frame.free_later(old);
                    grown = true;
                }
            }
            slot.count = asked.min(slot.capacity());
        }
        if grown {
            self.register_commands();
        }
        grown
    }

    /// Runs the GPU frame (in place of the CPU frame) when the view, the settings or the data
    /// changed, or a slot grew; sets each slot's culling box and looks.
    pub(super) fn run_driven(
        &mut self,
        request: &FrameRequest,
        key: (Option<View>, FrameSettings),
        settings: FrameSettings,
        data_changed: bool,
    ) {
        let grown = self.apply_readback();
        if !data_changed && !grown && self.last_run.as_ref() == Some(&key) {
            return;
        }
        // Shadow slots carry every shadow (see vat_core::crowd::gpu_slot_levels); with Shadows
        // Only the view slots draw nothing.
        self.set_view_cast(ShadowCastingSetting::OFF);
        let bodies = request.cast != ShadowCastingSetting::SHADOWS_ONLY;
        for slot in self.models.iter_mut().flat_map(|m| m.slots.iter_mut()) {
            slot.show_indirect(slot.shadow || bodies);
        }
        let stride = request.stride.max(1);
        let n = request.actors.min(self.actors.floats().len() / stride);
        let total: usize = self.models.iter().map(|m| m.count).sum();
        let params = match pack_gpu_params(
            key.0.as_ref(),
            &settings,
            &self.shape,
            n,
            total,
            stride > vat_core::crowd::record_floats(false),
        ) {
            Ok(p) => p,
            Err(e) => {
                let driven = self.driven.as_mut().expect("run_driven is called with one");
                report_once(&mut driven.error, "crowd", e.to_string());
                return;
            }
        };
        self.last_run = Some(key);
        // Room for a model's instances (up to INDIRECT_START_CAPACITY) before any read-back.
        let mut grown = false;
        for model in self.models.iter_mut() {
            let start = model.count.min(INDIRECT_START_CAPACITY);
            for slot in model.slots.iter_mut() {
                if let Some(old) = slot.grow_indirect(start) {
                    if let Some(d) = self.driven.as_mut() {
                        d.frame.free_later(old);
                    }
                    grown = true;
                }
            }
        }
        if grown {
            self.register_commands();
        }
        let mut plans = Vec::new();
        for (m, model) in self.models.iter().enumerate() {
            let last = self.shape.model_levels.get(m).map_or(1, |&l| l.max(1)) - 1;
            for slot in &model.slots {
                plans.push(SlotPlan {
                    multimesh: slot.multimesh_rid(),
                    model: m,
                    level: u32::from(slot.level),
                    shadow: slot.shadow,
                    last: u32::from(last),
                    capacity: slot.capacity() as u32,
                    surfaces: slot.surfaces(),
                });
            }
        }
        let written: Vec<bool> = self
            .models
            .iter_mut()
            .map(|m| m.indices.take_changed())
            .collect();
        let lists: Vec<&[u32]> = self
            .models
            .iter()
            .map(|m| m.indices.texels(m.count))
            .collect();
        let textures = self.texture_rids();
        let driven = self.driven.as_mut().expect("run_driven is called with one");
        driven
            .frame
            .run(params, n, textures, &lists, &written, plans);
        for model in self.models.iter_mut() {
            let looks = model.looks.upload();
            let aabb = crate::convert::to_aabb(&model.culling);
            for slot in model.slots.iter_mut() {
                slot.submit(aabb, looks.as_ref());
            }
        }
    }
}
