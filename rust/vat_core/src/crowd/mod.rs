//! The crowd room: everything between a crowd node's actors and the data textures its shader
//! reads, and the game-facing queries on them, with no Godot dependency.
//!
//! * records: actor records, model instances and looks in the texel formats below
//!   ([`ActorState`], [`pack_actor_record`], [`pack_model_instance`], [`LookTable`]),
//!   capacities ([`grow_capacity`], [`item_limit`]) and transforms ([`pack_basis`],
//!   [`yaw_basis`]);
//! * bulk packing: the GDScript-facing bulk calls ([`pack_actors_bulk`],
//!   [`pack_actor_transforms_bulk`], [`pack_actor_states_bulk`], [`apply_blends_bulk`],
//!   [`pack_model_instances_bulk`]), the calls that change part of a crowd ([`move_actors_bulk`],
//!   [`set_clips_bulk`]) and per-actor custom data ([`write_custom_bulk`]);
//! * the value rules every crowd call applies ([`speed`], [`crowd_time`], [`blend_time`]);
//! * the frame: culling and LOD selection into the per-(model, level) instance lists
//!   ([`CrowdFrame`], [`View`], [`FrameSettings`]), the records split into placement and state
//!   uploads ([`split_records`]) and the recent-state layers that spare whole-texture uploads
//!   ([`RecentStates`]);
//! * the GPU-driven frame's parameter block, counters and shader constants
//!   ([`pack_gpu_params`], [`gpu_slot_levels`], [`glsl_defines`]);
//! * game queries: clip times and finished clips from the clock and the clip table
//!   ([`clip_time`], [`end_time`], [`FinishTracker`]);
//! * retained crowds' stable ids ([`IdSlots`]) and the editor preview's clip and grid
//!   ([`preview_grid`]).
//!
//! The files are private; every public item has its one path here (`vat_core::crowd::...`).
//! Where a file's item name would be unclear among the room's, the room names it: the slot
//! table's `Changes` is [`SlotChanges`] (beside [`RecentChanges`] and [`SplitChanges`]), and the
//! preview's `check_count`, `clip_index`, `grid` and `spacing` are [`check_preview_count`],
//! [`preview_clip_index`], [`preview_grid`] and [`preview_spacing`].
//!
//! # Texel formats
//!
//! **Actor record**: [`ACTOR_TEXELS`](crate::layout::ACTOR_TEXELS) RGBA32F texels (8 f32, 32 bytes) per actor, in an actor
//! texture [`DATA_TEXTURE_WIDTH`](crate::layout::DATA_TEXTURE_WIDTH) texels wide:
//! * `T0 = (pos.x, pos.y, pos.z, yaw)` (yaw in radians about +Y).
//! * `T1.x = start_time` (crowd-local seconds, see [`crate::clock`]).
//! * `T1.y = clip + CLIP_CODE_BASE * prev_clip`, an exact integer in f32.
//! * `T1.z = pack_half2(speed, scale)`, scale clamped to `[1/1024, 1024]`.
//! * `T1.w = pack_half2(prev_elapsed, blend_time + BLEND_BIAS)`, blend time clamped to `[0, 60000]`.
//!
//! The high halves are normal f16 values >= 2^-10, so both packed floats are normal f32 numbers
//! that survive denormal flushing and NaN canonicalisation on the way to the GPU.
//!
//! Crossfade (done by the shader): `clip_time = (t - start_time) * speed`; while
//! `blend_time > 0 && t - start_time < blend_time`, the previous clip plays at
//! `prev_elapsed + (t - start_time) * speed` and the pose is
//! `mix(prev_pose, pose, (t - start_time) / blend_time)`.
//!
//! **Full transform** (a crowd option): [`ACTOR_TEXELS_FULL`](crate::layout::ACTOR_TEXELS_FULL) texels (16 f32, 64 bytes) per
//! actor. T0 and T1 as above, except that `T0.w` holds `basis.z.z` instead of the yaw and the
//! scale half of `T1.z` is 1; then `T2 = (x.x, x.y, x.z, y.x)`, `T3 = (y.y, y.z, z.x, z.y)` for
//! the basis columns x, y, z (any rotation, non-uniform scale or shear). See [`pack_basis`].
//!
//! **Model instance**: [`MODEL_INSTANCE_BYTES`](crate::layout::MODEL_INSTANCE_BYTES) RGBA8 bytes per drawn instance: the actor index
//! as 24-bit little-endian in r, g, b (the shader reads `r + 256 g + 65536 b` from
//! `round(texel * 255)`), the look index in a.
//!
//! **Look**: [`LOOK_TEXELS`](crate::layout::LOOK_TEXELS) RGBA32F texels per look, `(r, g, b, a)` tint and `(variation, 0, 0, 0)`,
//! [`MAX_LOOKS`](crate::layout::MAX_LOOKS) looks per table.

mod bulk;
mod bulk_actors;
mod clip_end;
mod custom;
mod frame;
mod frame_classify;
mod frame_fast;
#[cfg(target_arch = "x86_64")]
mod frame_fast_avx2;
mod frame_fast_lanes;
mod frame_input;
mod gpu_frame;
mod moves;
mod prefetch;
mod preview;
mod recent;
mod records;
mod slots;
mod split;
mod validate;

pub use bulk::{
    apply_blends_bulk, pack_actor_states_bulk, pack_model_instances_bulk, BulkBlends, PackedModels,
    PARALLEL_MIN_ITEMS,
};
pub use bulk_actors::{
    pack_actor_transforms_bulk, pack_actors_bulk, transform_from_rows, BulkOptions,
    PlacedTransforms, TRANSFORM_FLOATS,
};
pub use clip_end::{clip_time, end_time, stored_speed, FinishTracker};
pub use custom::{write_custom_bulk, CUSTOM_FLOATS};
pub use frame::{CrowdFrame, FRAME_PARALLEL_MIN, MAX_LEVELS};
pub use frame_input::{Actors, CrowdShape, FrameSettings, Plane, Projection, View};
pub use gpu_frame::{
    glsl_defines, gpu_slot_levels, pack_gpu_params, GpuParamsError, COUNTER_LEVELS,
    COUNTER_NO_CAST, COUNTER_SHADOW_ONLY, COUNTER_SLOTS, GPU_COMMAND_WORDS, GPU_GROUP_SIZE,
    GPU_INSTANCE_FLOATS, MODE_CLASSIFY, MODE_COMMANDS, MODE_FILL,
};
pub use moves::{move_actors_bulk, set_clips_bulk, ClipChange};
pub use preview::{
    check_count as check_preview_count, clip_index as preview_clip_index, grid as preview_grid,
    spacing as preview_spacing, MAX_PREVIEW_COUNT,
};
pub use recent::{
    catch_up_placements, layers_for, pack_yaw_slot, unpack_yaw_slot, RecentChanges, RecentStates,
    LAYER_BYTES, LAYER_TEXELS,
};
pub use records::{
    basis_stretch, check_item_count, check_transform, crowd_bounds, data_rows, grow_capacity,
    item_limit, no_blend_tail, pack_actor, pack_actor_record, pack_basis, pack_model_instance,
    record_floats, record_texels, unpack_actor, unpack_basis, yaw_basis, ActorState, LookTable,
    ACTOR_FLOATS, ACTOR_FLOATS_FULL, LOOK_FLOATS, MAX_BLEND_TIME, MIN_CAPACITY, SCALE_RANGE,
};
pub use slots::{
    Changes as SlotChanges, IdSlots, GENERATION_BITS, INDEX_BITS, MAX_GENERATION, MAX_INDICES,
};
pub use split::{placement_floats, split_records, SplitChanges, STATE_FLOATS};
pub use validate::{blend_time, crowd_time, speed, time_ok, MAX_CROWD_TIME, MAX_SPEED};
