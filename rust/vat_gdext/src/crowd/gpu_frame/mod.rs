//! The GPU-driven crowd frame (Forward+ and Mobile): a compute pass on the main rendering device
//! culls every actor, picks its level and writes each slot's MultiMesh instances and indirect
//! draw counts, reading the actor records the CPU already uploads. Per frame the CPU sends the
//! parameter block (camera, lights, settings: a few hundred bytes), each model's instance list
//! when it changed, and one compute list; nothing is read back on the frame's path. The counters
//! (actors per level, instances per slot) come back asynchronously a frame or two later, for the
//! statistics and to grow a slot whose MultiMesh was too small.
//!
//! The main thread's side is here ([`GpuFrame`]); the render thread's, in `render`.

mod pipeline;
mod render;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use godot::classes::image::Format;
use godot::classes::{Image, ImageTexture, RenderingServer, Texture2DArray};
use godot::prelude::*;

pub use render::SlotPlan;
use render::{FramePlan, ListPlan, Readback, RenderSide};

/// Ids for the timestamps of each crowd's pass.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Why this renderer cannot run the GPU frame, if it cannot: the Compatibility renderer and the
/// headless dummy have no rendering device.
pub fn unsupported_reason() -> Option<String> {
    let rs = RenderingServer::singleton();
    let method = rs.get_current_rendering_method().to_string();
    if method == "gl_compatibility" {
        return Some("the Compatibility renderer has no compute passes".into());
    }
    if rs.get_rendering_device().is_none() {
        return Some(format!("the {method} renderer has no rendering device"));
    }
    None
}

/// Whether `VAT_CROWD_GPU_TIMESTAMPS` asks for rendering-device timestamps around every pass
/// (the benchmark reads them; off by default, as a frame holds a limited number).
fn timestamps_wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| std::env::var_os("VAT_CROWD_GPU_TIMESTAMPS").is_some())
}

/// One crowd's GPU frame, on the main thread.
pub struct GpuFrame {
    side: Arc<Mutex<RenderSide>>,
    readback: Arc<Mutex<Readback>>,
    /// What each model's list buffer holds.
    sent_lists: Vec<Vec<u32>>,
    /// Bytes of each model's list buffer.
    list_capacity: Vec<u32>,
    /// Stand-ins bound before the first upload of a texture (the pass reads none of them then).
    stand_in: Gd<ImageTexture>,
    stand_in_array: Gd<Texture2DArray>,
    /// Rendering-device RIDs to free with the next frame.
    pending_free: Vec<Rid>,
    /// The slots' indirect command buffers, which Godot does not free with their MultiMeshes:
    /// freed with this frame.
    commands: Vec<Rid>,
    /// Bytes handed to the rendering device (lists, parameters).
    sent: u64,
    /// Runs queued so far (the last one's number).
    runs: u64,
    id: u64,
    /// The drawn frame (`Engine.get_frames_drawn`) of the last run with timestamps: the device
    /// holds a fixed number of them per frame, and a game that steps its crowds several times
    /// between two drawn frames (a benchmark's warm-up) would run past it.
    timestamped_frame: Option<u64>,
}

impl GpuFrame {
    /// A GPU frame with nothing on the device yet (made at the first run).
    pub fn new() -> Self {
        let image = Image::create_empty(1, 1, false, Format::RGBAF).expect("a 1x1 image");
        let stand_in = ImageTexture::create_from_image(&image).expect("a 1x1 texture");
        let mut stand_in_array = Texture2DArray::new_gd();
        let images: Array<Gd<Image>> = [image].into_iter().collect();
        stand_in_array.create_from_images(&images);
        Self {
            side: Arc::new(Mutex::new(RenderSide::default())),
            readback: Arc::new(Mutex::new(Readback::default())),
            sent_lists: Vec::new(),
            list_capacity: Vec::new(),
            stand_in,
            stand_in_array,
            pending_free: Vec::new(),
            commands: Vec::new(),
            sent: 0,
            runs: 0,
            timestamped_frame: None,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Queues one frame: `params` (the parameter block), `actors` records in the textures
    /// `textures` (placements, states, recent states; `None` before their first upload), each
    /// model's instance list (`written[m]`: list `m` was written since the last run, so it may
    /// differ from what was sent even at the same length), and the slots to fill.
    pub fn run(
        &mut self,
        params: Vec<f32>,
        actors: usize,
        textures: [Option<Rid>; 3],
        lists: &[&[u32]],
        written: &[bool],
        slots: Vec<SlotPlan>,
    ) {
        self.sent_lists.resize_with(lists.len(), Vec::new);
        self.list_capacity.resize(lists.len(), 0);
        let mut list_plans = Vec::with_capacity(lists.len());
        for (m, list) in lists.iter().enumerate() {
            let bytes = (list.len() * 4) as u32;
            let mut grown = false;
            if bytes > self.list_capacity[m] {
                let cap =
                    vat_core::crowd::grow_capacity(self.list_capacity[m] as usize / 4, list.len());
                self.list_capacity[m] = (cap * 4) as u32;
                grown = true;
            }
            // Compared only when it may have changed: a steady crowd's lists cost nothing.
            let sent = self.sent_lists[m].as_slice();
            let maybe = written.get(m).copied().unwrap_or(true) || sent.len() != list.len();
            let changed = grown || (maybe && sent != *list);
            let upload = changed.then(|| {
                self.sent_lists[m].clear();
                self.sent_lists[m].extend_from_slice(list);
                self.sent += u64::from(bytes);
                list.iter()
                    .flat_map(|t| t.to_le_bytes())
                    .collect::<Vec<u8>>()
            });
            list_plans.push(ListPlan {
                count: list.len() as u32,
                capacity_bytes: self.list_capacity[m],
                upload,
            });
        }
        self.sent += (params.len() * 4) as u64;
        let stand_ins = [
            self.stand_in.get_rid(),
            self.stand_in.get_rid(),
            self.stand_in_array.get_rid(),
        ];
        let mut textures = textures;
        self.runs += 1;
        let plan = FramePlan {
            run: self.runs,
            params,
            actors: actors as u32,
            textures: std::array::from_fn(|k| textures[k].take().unwrap_or(stand_ins[k])),
            lists: list_plans,
            slots,
            free: std::mem::take(&mut self.pending_free),
            timestamps: self.timestamps_now(),
        };
        let side = Arc::clone(&self.side);
        let readback = Arc::clone(&self.readback);
        let plan = Mutex::new(Some(plan));
        let job = Callable::from_sync_fn("vat_crowd_frame", move |_: &[&Variant]| {
            let plan = plan.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let (Some(plan), Some(mut rd)) =
                (plan, RenderingServer::singleton().get_rendering_device())
            {
                side.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .run(&mut rd, plan, &readback);
            }
            Variant::nil()
        });
        RenderingServer::singleton().call_on_render_thread(&job);
    }

    /// The counters read back since the last call (see `vat_core::crowd::COUNTER_SLOTS`), if new
    /// ones arrived: the newest run's that came back.
    pub fn poll(&mut self) -> Option<Vec<u32>> {
        let mut r = self.readback.lock().unwrap_or_else(|e| e.into_inner());
        let out = r.fresh.then(|| r.counters.clone()).flatten();
        r.fresh = false;
        out
    }

    /// Why the pass cannot run (the shader did not compile), once the render thread knows.
    pub fn error(&self) -> Option<String> {
        self.readback
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .error
            .clone()
    }

    /// The slots' indirect command buffers now (after they were made or one grew): freed when
    /// this frame drops.
    pub fn set_commands(&mut self, commands: Vec<Rid>) {
        self.commands = commands;
    }

    /// This crowd's timestamp id where timestamps are wanted and none were taken in this drawn
    /// frame yet.
    fn timestamps_now(&mut self) -> Option<u64> {
        let frame = godot::classes::Engine::singleton().get_frames_drawn() as u64;
        if !timestamps_wanted() || self.timestamped_frame == Some(frame) {
            return None;
        }
        self.timestamped_frame = Some(frame);
        Some(self.id)
    }

    /// Frees `rid` (a rendering-device RID) with the next frame.
    pub fn free_later(&mut self, rid: Rid) {
        self.pending_free.push(rid);
    }

    /// Bytes handed to the rendering device so far (instance lists and parameter blocks).
    pub fn sent_bytes(&self) -> u64 {
        self.sent
    }
}

impl Drop for GpuFrame {
    /// Frees everything it made on the device, and the slots' command buffers.
    fn drop(&mut self) {
        let side = Arc::clone(&self.side);
        let mut also = std::mem::take(&mut self.pending_free);
        also.append(&mut self.commands);
        also.sort_unstable_by_key(|r| r.to_u64());
        also.dedup();
        let also = Mutex::new(also);
        let job = Callable::from_sync_fn("vat_crowd_frame_free", move |_: &[&Variant]| {
            if let Some(mut rd) = RenderingServer::singleton().get_rendering_device() {
                let also = std::mem::take(&mut *also.lock().unwrap_or_else(|e| e.into_inner()));
                side.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .free(&mut rd, &also);
            }
            Variant::nil()
        });
        RenderingServer::singleton().call_on_render_thread(&job);
    }
}
