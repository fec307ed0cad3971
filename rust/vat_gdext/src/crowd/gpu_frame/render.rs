//! The GPU-driven frame's render-thread side: the buffers of one crowd on the main rendering
//! device, the uniform sets over them, and the compute list that runs the frame. The main thread
//! sends it a [`FramePlan`] through `RenderingServer.call_on_render_thread` (run at once when the
//! main thread renders, as it does by default; queued before the frame's draws otherwise) and
//! reads the counters back through [`Readback`], a frame or two later.

use std::sync::{Arc, Mutex};

use godot::classes::rendering_device::UniformType;
use godot::classes::{RdUniform, RenderingDevice, RenderingServer};
use godot::prelude::*;
use vat_core::crowd::{COUNTER_SLOTS, GPU_GROUP_SIZE, MODE_CLASSIFY, MODE_COMMANDS, MODE_FILL};

use super::pipeline::{self, Pipeline};

/// Work groups per dispatch row (Vulkan guarantees 65,535).
const MAX_GROUPS_X: u32 = 65_535;

/// One slot (a MultiMesh of one model, level, view or shadow) as the pass writes it.
#[derive(Clone, Debug)]
pub struct SlotPlan {
    /// The MultiMesh (a RenderingServer RID, allocated with indirect drawing).
    pub multimesh: Rid,
    /// The model whose instance list fills it.
    pub model: usize,
    /// Its level of detail.
    pub level: u32,
    /// Shadows only.
    pub shadow: bool,
    /// The model's last level.
    pub last: u32,
    /// Instances its MultiMesh holds.
    pub capacity: u32,
    /// Surfaces of its mesh (one indirect command each).
    pub surfaces: u32,
}

/// One model's instance list.
#[derive(Clone, Debug)]
pub struct ListPlan {
    /// Instances in it.
    pub count: u32,
    /// Bytes of its buffer.
    pub capacity_bytes: u32,
    /// The list's bytes, when they changed or the buffer is new.
    pub upload: Option<Vec<u8>>,
}

/// What one frame asks of the render thread.
#[derive(Clone, Debug)]
pub struct FramePlan {
    /// The parameter block (`vat_core::crowd::pack_gpu_params`).
    pub params: Vec<f32>,
    /// Actors in the records.
    pub actors: u32,
    /// The placement, state and recent-state textures (RenderingServer RIDs).
    pub textures: [Rid; 3],
    /// Per model.
    pub lists: Vec<ListPlan>,
    /// Every slot, in counter order.
    pub slots: Vec<SlotPlan>,
    /// Rendering-device RIDs to free first (command buffers of MultiMeshes that went).
    pub free: Vec<Rid>,
    /// Capture rendering-device timestamps around the pass, named with this crowd's id.
    pub timestamps: Option<u64>,
    /// This run's number (the read-back says which run its counters are from).
    pub run: u64,
}

/// What comes back from the GPU.
#[derive(Default, Debug)]
pub struct Readback {
    /// The counters of the last frame read back (see `vat_core::crowd::COUNTER_SLOTS`).
    pub counters: Option<Vec<u32>>,
    /// The run they are from (a read-back of an older run that arrives later is dropped).
    pub run: u64,
    /// A new read-back arrived since the main thread last looked.
    pub fresh: bool,
    /// Why the pass cannot run, once known.
    pub error: Option<String>,
}

#[derive(Clone, Copy)]
struct Buffer {
    rid: Rid,
    size: u32,
}

impl Default for Buffer {
    fn default() -> Self {
        Self {
            rid: Rid::Invalid,
            size: 0,
        }
    }
}

/// One crowd's objects on the rendering device.
#[derive(Default)]
pub struct RenderSide {
    pipeline: Option<Result<Pipeline, String>>,
    params: Buffer,
    classes: Buffer,
    counters: Buffer,
    dummy: Buffer,
    lists: Vec<Buffer>,
    classify_set: Option<(Vec<Rid>, Rid)>,
    slot_sets: Vec<Option<(Vec<Rid>, Rid)>>,
    /// The last run's number and counter words.
    last_run: (u64, u32),
}

fn bytes_of_u32(words: &[u32]) -> PackedByteArray {
    let mut out = Vec::with_capacity(words.len() * 4);
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
    PackedByteArray::from(out.as_slice())
}

fn storage(binding: i32, rid: Rid) -> Gd<RdUniform> {
    let mut u = RdUniform::new_gd();
    u.set_uniform_type(UniformType::STORAGE_BUFFER);
    u.set_binding(binding);
    u.add_id(rid);
    u
}

fn sampled(binding: i32, sampler: Rid, texture: Rid) -> Gd<RdUniform> {
    let mut u = RdUniform::new_gd();
    u.set_uniform_type(UniformType::SAMPLER_WITH_TEXTURE);
    u.set_binding(binding);
    u.add_id(sampler);
    u.add_id(texture);
    u
}

/// A buffer of at least `size` bytes (a new one, filled with `fill`, if it was smaller; the old
/// contents copied over when `keep`).
fn ensure(rd: &mut Gd<RenderingDevice>, b: &mut Buffer, size: u32, fill: u8, keep: bool) {
    let size = size.max(16).next_multiple_of(16);
    if b.rid.is_valid() && b.size >= size {
        return;
    }
    let data = PackedByteArray::from(vec![fill; size as usize].as_slice());
    let rid = rd.storage_buffer_create_ex(size).data(&data).done();
    if b.rid.is_valid() {
        if keep {
            rd.buffer_copy(b.rid, rid, 0, 0, b.size);
        }
        rd.free_rid(b.rid);
    }
    *b = Buffer { rid, size };
}

/// A uniform set over `ids` (bindings in order: three textures, then storage buffers), reused
/// while its ids stay the same and the device keeps it.
fn uniform_set(
    rd: &mut Gd<RenderingDevice>,
    cache: &mut Option<(Vec<Rid>, Rid)>,
    p: &Pipeline,
    ids: Vec<Rid>,
) -> Rid {
    if let Some((key, set)) = cache {
        if *key == ids && rd.uniform_set_is_valid(*set) {
            return *set;
        }
        if rd.uniform_set_is_valid(*set) {
            rd.free_rid(*set);
        }
    }
    let mut uniforms: Array<Gd<RdUniform>> = Array::new();
    for (k, id) in ids.iter().enumerate() {
        let u = if k < 3 {
            sampled(k as i32, p.sampler, *id)
        } else {
            storage(k as i32, *id)
        };
        uniforms.push(&u);
    }
    let set = rd.uniform_set_create(&uniforms, p.shader, 0);
    *cache = Some((ids, set));
    set
}

fn push(words: [u32; 8]) -> PackedByteArray {
    bytes_of_u32(&words)
}

fn groups(n: u32) -> (u32, u32) {
    let g = n.div_ceil(GPU_GROUP_SIZE).max(1);
    (g.min(MAX_GROUPS_X), g.div_ceil(MAX_GROUPS_X))
}

impl RenderSide {
    /// Runs one frame on `rd` (the main rendering device, on the render thread); the counters
    /// come back into `readback` later.
    pub fn run(
        &mut self,
        rd: &mut Gd<RenderingDevice>,
        plan: FramePlan,
        readback: &Arc<Mutex<Readback>>,
    ) {
        for rid in &plan.free {
            if rid.is_valid() {
                rd.free_rid(*rid);
            }
        }
        let p = match self.pipeline.get_or_insert_with(|| pipeline::acquire(rd)) {
            Ok(p) => *p,
            Err(e) => {
                readback.lock().unwrap_or_else(|e| e.into_inner()).error = Some(e.clone());
                return;
            }
        };
        let rs = RenderingServer::singleton();
        let params = bytes_of_u32(&plan.params.iter().map(|f| f.to_bits()).collect::<Vec<_>>());
        ensure(rd, &mut self.params, params.len() as u32, 0, false);
        rd.buffer_update(self.params.rid, 0, params.len() as u32, &params);
        ensure(rd, &mut self.classes, plan.actors * 4, 0xff, true);
        let counter_words = COUNTER_SLOTS as u32 + plan.slots.len() as u32;
        ensure(rd, &mut self.counters, counter_words * 4, 0, false);
        rd.buffer_clear(self.counters.rid, 0, self.counters.size);
        ensure(rd, &mut self.dummy, 16, 0, false);
        self.lists.resize_with(plan.lists.len(), Buffer::default);
        for (b, l) in self.lists.iter_mut().zip(&plan.lists) {
            if b.size != l.capacity_bytes.max(16).next_multiple_of(16) && b.rid.is_valid() {
                rd.free_rid(b.rid);
                *b = Buffer::default();
            }
            ensure(rd, b, l.capacity_bytes, 0, false);
            if let Some(bytes) = &l.upload {
                let data = PackedByteArray::from(bytes.as_slice());
                rd.buffer_update(b.rid, 0, bytes.len() as u32, &data);
            }
        }
        let textures = plan.textures.map(|t| rs.texture_get_rd_texture(t));
        if let Some(id) = plan.timestamps {
            rd.capture_timestamp(&format!("vat_crowd frame {id} begin"));
        }
        let list = rd.compute_list_begin();
        rd.compute_list_bind_compute_pipeline(list, p.pipeline);
        // The main thread always names valid textures (stand-ins before the first upload).
        let run = plan.actors > 0;
        if run {
            let mut ids = textures.to_vec();
            ids.extend([
                self.params.rid,
                self.classes.rid,
                self.counters.rid,
                self.dummy.rid,
                self.dummy.rid,
                self.dummy.rid,
            ]);
            let set = uniform_set(rd, &mut self.classify_set, &p, ids);
            rd.compute_list_bind_uniform_set(list, set, 0);
            let pc = push([MODE_CLASSIFY, plan.actors, 0, 0, 0, 0, 0, 0]);
            rd.compute_list_set_push_constant(list, &pc, pc.len() as u32);
            let (x, y) = groups(plan.actors);
            rd.compute_list_dispatch(list, x, y, 1);
            rd.compute_list_add_barrier(list);
        }
        self.slot_sets.resize_with(plan.slots.len(), || None);
        let mut sets = Vec::with_capacity(plan.slots.len());
        for (k, s) in plan.slots.iter().enumerate() {
            let buffer = rs.multimesh_get_buffer_rd_rid(s.multimesh);
            let commands = rs.multimesh_get_command_buffer_rd_rid(s.multimesh);
            if !buffer.is_valid() || !commands.is_valid() {
                sets.push(None);
                continue;
            }
            let list_buffer = self.lists.get(s.model).map_or(self.dummy.rid, |b| b.rid);
            let mut ids = textures.to_vec();
            ids.extend([
                self.params.rid,
                self.classes.rid,
                self.counters.rid,
                list_buffer,
                buffer,
                commands,
            ]);
            sets.push(Some(uniform_set(rd, &mut self.slot_sets[k], &p, ids)));
        }
        if run {
            for (k, s) in plan.slots.iter().enumerate() {
                let (Some(set), Some(l)) = (sets[k], plan.lists.get(s.model)) else {
                    continue;
                };
                if l.count == 0 {
                    continue;
                }
                rd.compute_list_bind_uniform_set(list, set, 0);
                let pc = push([
                    MODE_FILL,
                    l.count,
                    k as u32,
                    s.level,
                    u32::from(s.shadow),
                    s.last,
                    s.capacity,
                    s.surfaces,
                ]);
                rd.compute_list_set_push_constant(list, &pc, pc.len() as u32);
                let (x, y) = groups(l.count);
                rd.compute_list_dispatch(list, x, y, 1);
            }
            rd.compute_list_add_barrier(list);
        }
        for (k, s) in plan.slots.iter().enumerate() {
            let Some(set) = sets[k] else {
                continue;
            };
            rd.compute_list_bind_uniform_set(list, set, 0);
            let pc = push([MODE_COMMANDS, 0, k as u32, 0, 0, 0, s.capacity, s.surfaces]);
            rd.compute_list_set_push_constant(list, &pc, pc.len() as u32);
            rd.compute_list_dispatch(list, 1, 1, 1);
        }
        rd.compute_list_end();
        if let Some(id) = plan.timestamps {
            rd.capture_timestamp(&format!("vat_crowd frame {id} end"));
        }
        self.last_run = (plan.run, counter_words);
        self.read_back(rd, readback);
    }

    /// Asks for this run's counters. Every run asks (the download is recorded in order, after
    /// the pass and before the next run clears them), so they come back as soon as the frames in
    /// flight allow, and a late arrival of an older run is dropped.
    fn read_back(&mut self, rd: &mut Gd<RenderingDevice>, readback: &Arc<Mutex<Readback>>) {
        let (run, words) = self.last_run;
        if !self.counters.rid.is_valid() {
            return;
        }
        let out = Arc::clone(readback);
        let callback = Callable::from_sync_fn("vat_crowd_counters", move |args: &[&Variant]| {
            let mut r = out.lock().unwrap_or_else(|e| e.into_inner());
            if let (true, Some(bytes)) = (
                run > r.run,
                args.first()
                    .and_then(|v| v.try_to::<PackedByteArray>().ok()),
            ) {
                let words: Vec<u32> = bytes
                    .as_slice()
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                r.counters = Some(words);
                r.run = run;
                r.fresh = true;
            }
        });
        let err = rd
            .buffer_get_data_async_ex(self.counters.rid, &callback)
            .offset_bytes(0)
            .size_bytes(words * 4)
            .done();
        if err != godot::global::Error::OK {
            godot_error!("vat_crowd: the crowd frame's counters could not be read back: {err:?}");
        }
    }

    /// Frees every object it made on `rd` and its share of the pipeline.
    pub fn free(&mut self, rd: &mut Gd<RenderingDevice>, also: &[Rid]) {
        for rid in also {
            if rid.is_valid() {
                rd.free_rid(*rid);
            }
        }
        let sets = self
            .slot_sets
            .drain(..)
            .flatten()
            .chain(self.classify_set.take())
            .map(|(_, set)| set);
        let sets: Vec<Rid> = sets.collect();
        for set in sets {
            if rd.uniform_set_is_valid(set) {
                rd.free_rid(set);
            }
        }
        let buffers = [self.params, self.classes, self.counters, self.dummy]
            .into_iter()
            .chain(self.lists.drain(..));
        for b in buffers.collect::<Vec<_>>() {
            if b.rid.is_valid() {
                rd.free_rid(b.rid);
            }
        }
        self.params = Buffer::default();
        self.classes = Buffer::default();
        self.counters = Buffer::default();
        self.dummy = Buffer::default();
        if self.pipeline.take().is_some() {
            pipeline::release(rd);
        }
    }
}
