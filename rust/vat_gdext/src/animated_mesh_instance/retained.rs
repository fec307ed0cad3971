//! Packing `AnimatedMeshInstance`'s retained instances into its data textures: every slot, or
//! only the slots written since the last submit.

use godot::prelude::*;
use vat_core::bounds::Bounds;
use vat_core::clock::CrowdClock;
use vat_core::crowd::{self, ActorState, LookTable};
use vat_core::crowd::{IdSlots, SlotChanges};

use crate::crowd::gpu::CrowdGpu;
use crate::crowd::looks::PlacedBounds;

/// One instance as the node remembers it between frames.
#[derive(Clone)]
pub struct Instance {
    pub position: glam::Vec3,
    pub yaw: f32,
    pub scale: f32,
    /// The whole basis, drawn only with `full_transform` (else yaw and scale are).
    pub basis: [glam::Vec3; 3],
    pub clip: u32,
    pub prev_clip: u32,
    pub start: f64,
    pub speed: f32,
    pub prev_elapsed: f32,
    pub blend_time: f32,
    pub tint: [f32; 4],
    pub variation: u32,
}

/// What a retained crowd keeps between submits so that it can re-pack only changed slots: the
/// look table its texels index, and bounds that only grow until the next full pack.
#[derive(Default)]
pub struct RetainedPacker {
    looks: LookTable,
    placed: PlacedBounds,
}

/// How a submit writes one crowd's textures.
struct Target<'a> {
    records: &'a mut [f32],
    texels: &'a mut [u8],
    stride: usize,
    clock: &'a CrowdClock,
    full_transform: bool,
}

impl<'a> Target<'a> {
    /// The first `n` records and texels of `gpu`'s actor and model textures. Each texture's
    /// bytes are borrowed once: each borrow is a call into Godot.
    fn new(gpu: &'a mut CrowdGpu, n: usize, clock: &'a CrowdClock, full_transform: bool) -> Self {
        let stride = crowd::record_floats(full_transform);
        gpu.catch_up();
        Target {
            records: &mut gpu.actors.floats_mut()[..n * stride],
            texels: &mut gpu.models[0].indices.bytes_mut()[..n * 4],
            stride,
            clock,
            full_transform,
        }
    }

    /// Writes `inst`'s record and model texel (with `look`) into `slot`.
    fn write(&mut self, slot: usize, inst: &Instance, look: u8) {
        let state = ActorState {
            position: inst.position,
            yaw: inst.yaw,
            scale: inst.scale,
            clip: inst.clip,
            prev_clip: inst.prev_clip,
            start_time: self.clock.local(inst.start),
            speed: inst.speed,
            prev_elapsed: inst.prev_elapsed,
            blend_time: inst.blend_time,
        };
        let rec = &mut self.records[slot * self.stride..(slot + 1) * self.stride];
        crowd::pack_actor_record(&state, self.full_transform.then_some(inst.basis), rec);
        self.texels[slot * 4..slot * 4 + 4]
            .copy_from_slice(&crowd::pack_model_instance(slot as u32, look));
    }
}

impl RetainedPacker {
    /// Writes what `changes` names of `instances` into `gpu`'s textures (every slot for
    /// [`SlotChanges::All`], or when the changed slots are half the crowd or more), then the look
    /// table. Returns the bounds to cull the model with.
    pub fn pack(
        &mut self,
        instances: &IdSlots<Instance>,
        changes: SlotChanges,
        clock: &CrowdClock,
        full_transform: bool,
        gpu: &mut CrowdGpu,
    ) -> Bounds {
        let n = instances.len();
        gpu.actors.reserve(n);
        gpu.models[0].indices.reserve(n);
        let slots = match changes {
            SlotChanges::Slots(slots) if slots.len() * 2 < n.max(1) => Some(slots),
            _ => None,
        };
        let done = match slots {
            Some(slots) if slots.is_empty() => true,
            Some(slots) => self.pack_slots(instances, &slots, clock, full_transform, gpu),
            None => false,
        };
        if !done {
            self.pack_all(instances, clock, full_transform, gpu);
        }
        gpu.models[0].set_looks(&self.looks);
        self.placed.for_model(&gpu.models[0].bounds)
    }

    /// Re-packs `slots` only, with the kept look table and growing bounds. False (nothing
    /// useful written) if a new look does not fit the table: the caller packs everything.
    fn pack_slots(
        &mut self,
        instances: &IdSlots<Instance>,
        slots: &[u32],
        clock: &CrowdClock,
        full_transform: bool,
        gpu: &mut CrowdGpu,
    ) -> bool {
        let mut target = Target::new(gpu, instances.len(), clock, full_transform);
        for &slot in slots {
            let inst = &instances.items()[slot as usize];
            let Ok(look) = self.looks.index_of(inst.tint, inst.variation) else {
                return false;
            };
            target.write(slot as usize, inst, look);
            let basis = full_transform.then_some(inst.basis);
            self.placed.add_actor(inst.position, inst.scale, basis);
        }
        true
    }

    /// Packs every slot with a fresh look table and bounds.
    fn pack_all(
        &mut self,
        instances: &IdSlots<Instance>,
        clock: &CrowdClock,
        full_transform: bool,
        gpu: &mut CrowdGpu,
    ) {
        self.looks = LookTable::new();
        self.placed = PlacedBounds::default();
        let mut target = Target::new(gpu, instances.len(), clock, full_transform);
        // Neighbours usually share a look: one hash lookup per run of equal looks, keyed on the
        // tint's bits as the look table is.
        let mut last_look: Option<(([u32; 4], u32), u8)> = None;
        let mut look_error = None;
        for (slot, inst) in instances.items().iter().enumerate() {
            let key = (inst.tint.map(f32::to_bits), inst.variation);
            let look = match last_look {
                Some((k, look)) if k == key => look,
                _ => {
                    let look = self
                        .looks
                        .index_of(inst.tint, inst.variation)
                        .unwrap_or_else(|e| {
                            look_error.get_or_insert((instances.id_at(slot), e));
                            0
                        });
                    last_look = Some((key, look));
                    look
                }
            };
            target.write(slot, inst, look);
            let basis = full_transform.then_some(inst.basis);
            self.placed.add_actor(inst.position, inst.scale, basis);
        }
        if let Some((id, e)) = look_error {
            godot_error!(
                "vat_crowd: instance {id} (and any later ones with new looks): {e}; drawn with the \
                 first look"
            );
        }
    }
}
