//! Constants shared by the Rust packer and the shader library.
//!
//! The shader declares the same numbers; a test outside this crate checks that the two agree, so
//! change a value here and in the shader together.

/// Largest texture dimension (width or height) we create; Godot and common GPUs accept 16384.
pub const MAX_TEXTURE_SIZE: u32 = 16384;
/// Width cap of the linear vertex animation texture layout.
pub const VAT_MAX_WIDTH: u32 = 16384;
/// Width of the per-instance data textures (actor records, model instances, looks).
pub const DATA_TEXTURE_WIDTH: u32 = 4096;
/// RGBA32F texels per actor record (2 texels = 8 floats = 32 bytes).
pub const ACTOR_TEXELS: u32 = 2;
/// RGBA32F texels per actor record when the crowd stores full 3x4 transforms (64 bytes): the
/// default two, with the last basis entry in place of the yaw, plus two texels of basis.
pub const ACTOR_TEXELS_FULL: u32 = 4;
/// RGBA32F texels per actor in the placement texture: `(x, y, z, yaw)`, 16 bytes.
pub const PLACEMENT_TEXELS: u32 = 1;
/// RGBA32F texels per actor in the placement texture with full transforms: `(x, y, z, basis.z.z)`
/// and the other eight basis floats, 48 bytes.
pub const PLACEMENT_TEXELS_FULL: u32 = 3;
/// RGBA32F texels per actor in the state texture: start time, clip code, speed and scale, blend.
pub const STATE_TEXELS: u32 = 1;
/// Layers of the recent-state texture (RGBA32F, `DATA_TEXTURE_WIDTH` x 1 each): states that
/// changed since the state texture was last sent whole (see `crate::crowd::RecentStates`).
pub const RECENT_STATE_LAYERS: u32 = (RECENT_STATE_SLOTS + 1).div_ceil(DATA_TEXTURE_WIDTH);
/// Highest recent-state slot; slot 0 means "read the state texture". The slot is stored above the
/// yaw in the placement's packed `w`, biased by [`RECENT_SLOT_BIAS`], and the biased slot must
/// keep that f32's exponent below 255 (finite).
pub const RECENT_STATE_SLOTS: u32 = (255 << (23 - YAW_BITS)) - 1 - RECENT_SLOT_BIAS;
/// Added to the slot above the yaw, so that f32 always has an exponent of at least 1: a normal
/// number (GPUs may flush denormals and canonicalise NaNs).
pub const RECENT_SLOT_BIAS: u32 = 1 << (23 - YAW_BITS);
/// Bits of the yaw in the placement's packed `w` (the low bits; the slot sits above them).
pub const YAW_BITS: u32 = 14;
/// Steps of a full turn in the packed yaw (0.022 degrees each).
pub const YAW_STEPS: u32 = 1 << YAW_BITS;
/// Multiplier of the previous clip in a clip code `clip + CLIP_CODE_BASE * prev_clip`.
pub const CLIP_CODE_BASE: u32 = 4096;
/// Clips one model may bake; keeps every clip code below 2^24, so it is exact in an f32.
pub const MAX_CLIPS: u32 = 4095;
/// RGBA32F texels per look: tint, then (variation, 0, 0, 0).
pub const LOOK_TEXELS: u32 = 2;
/// Distinct (tint, variation) looks per model per submit; the look index is one byte.
pub const MAX_LOOKS: u32 = 256;
/// Bytes per model instance (RGBA8): actor index in r,g,b (24 bit, little-endian) and look in a.
pub const MODEL_INSTANCE_BYTES: u32 = 4;
/// Actors one crowd may hold; the actor index of a model instance is 24 bits.
pub const MAX_ACTORS: u32 = 1 << 24;
/// Added to the stored blend time so the high half of its packed float is >= 1, which keeps
/// that f32 a normal number (GPUs may flush denormals to zero).
pub const BLEND_BIAS: f32 = 1.0;

// The largest clip code must be an exact integer in f32 (mantissa 24 bits).
const _: () = assert!((MAX_CLIPS - 1) as u64 * (CLIP_CODE_BASE as u64 + 1) < 1 << 24);
const _: () = assert!(MAX_CLIPS < CLIP_CODE_BASE);
// A full crowd's actor texture must fit the texture size limit.
const _: () = assert!(
    MAX_ACTORS as u64 * ACTOR_TEXELS as u64 / DATA_TEXTURE_WIDTH as u64 <= MAX_TEXTURE_SIZE as u64
);
const _: () = assert!(
    MAX_ACTORS as u64 * ACTOR_TEXELS_FULL as u64 / DATA_TEXTURE_WIDTH as u64
        <= MAX_TEXTURE_SIZE as u64
);
// A record is its placement and its state, split over two textures.
const _: () = assert!(PLACEMENT_TEXELS + STATE_TEXELS == ACTOR_TEXELS);
const _: () = assert!(PLACEMENT_TEXELS_FULL + STATE_TEXELS == ACTOR_TEXELS_FULL);
// Every recent-state slot has a texel, and a layer mask fits a u32.
const _: () = assert!(RECENT_STATE_SLOTS < RECENT_STATE_LAYERS * DATA_TEXTURE_WIDTH);
const _: () = assert!(RECENT_STATE_LAYERS <= 32);
// The biased slot's top bit is the f32's sign bit's neighbour: it stays clear (positive).
const _: () = assert!((RECENT_STATE_SLOTS + RECENT_SLOT_BIAS) << YAW_BITS < 0x7F80_0000);
// The look index is a u8, and the look texture is one row.
const _: () = assert!(MAX_LOOKS <= 256);
const _: () = assert!(MAX_LOOKS * LOOK_TEXELS <= MAX_TEXTURE_SIZE);
