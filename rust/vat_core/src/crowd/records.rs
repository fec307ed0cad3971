//! Per-instance data the crowd shader reads: actor records, model instances and looks (the texel
//! formats are in the room's docs, [`crate::crowd`]).

use std::collections::HashMap;

use glam::{Vec2, Vec3};

use crate::bounds::Bounds;
use crate::error::{Result, VatError};
use crate::half::{pack_half2, unpack_half2};
use crate::layout::{
    ACTOR_TEXELS, ACTOR_TEXELS_FULL, BLEND_BIAS, CLIP_CODE_BASE, DATA_TEXTURE_WIDTH, LOOK_TEXELS,
    MAX_CLIPS, MAX_LOOKS,
};

/// Floats per actor record.
pub const ACTOR_FLOATS: usize = ACTOR_TEXELS as usize * 4;
/// Floats per actor record with a full transform.
pub const ACTOR_FLOATS_FULL: usize = ACTOR_TEXELS_FULL as usize * 4;
/// Floats per look in [`LookTable::pack`].
pub const LOOK_FLOATS: usize = LOOK_TEXELS as usize * 4;
/// Smallest capacity [`grow_capacity`] returns, so small crowds do not reallocate every add.
pub const MIN_CAPACITY: usize = 1024;
/// Smallest / largest stored actor scale (keeps the packed f16 normal and in range).
pub const SCALE_RANGE: (f32, f32) = (1.0 / 1024.0, 1024.0);
/// Largest stored blend time in seconds (`+ BLEND_BIAS` stays below the f16 maximum 65504).
pub const MAX_BLEND_TIME: f32 = 60000.0;

/// Everything the shader needs to place and animate one actor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActorState {
    /// Root position in crowd space.
    pub position: Vec3,
    /// Rotation about +Y in radians.
    pub yaw: f32,
    /// Uniform scale (stored clamped to [`SCALE_RANGE`], as an f16).
    pub scale: f32,
    /// Current clip index (stored clamped below [`MAX_CLIPS`]).
    pub clip: u32,
    /// Clip crossfaded from.
    pub prev_clip: u32,
    /// Crowd-local time at which `clip` started.
    pub start_time: f32,
    /// Playback rate multiplier (stored as an f16).
    pub speed: f32,
    /// Clip-local time the previous clip had reached at `start_time` (stored as an f16).
    pub prev_elapsed: f32,
    /// Crossfade length in seconds; 0 disables blending (stored as an f16).
    pub blend_time: f32,
}

impl Default for ActorState {
    fn default() -> Self {
        Self {
            position: Vec3::ZERO,
            yaw: 0.0,
            scale: 1.0,
            clip: 0,
            prev_clip: 0,
            start_time: 0.0,
            speed: 1.0,
            prev_elapsed: 0.0,
            blend_time: 0.0,
        }
    }
}

/// The scale the shader will see: clamped to [`SCALE_RANGE`]; NaN becomes 1.
fn stored_scale(scale: f32) -> f32 {
    if scale.is_nan() {
        1.0
    } else {
        scale.clamp(SCALE_RANGE.0, SCALE_RANGE.1)
    }
}

/// The T1.y clip code; both clips clamped below [`MAX_CLIPS`] so neither corrupts the other.
pub(crate) fn clip_code(clip: u32, prev_clip: u32) -> f32 {
    let max = MAX_CLIPS - 1;
    (clip.min(max) + CLIP_CODE_BASE * prev_clip.min(max)) as f32
}

/// `T1.w` of an actor with no cross-fade: no previous clip time, a blend time of 0.
pub fn no_blend_tail() -> f32 {
    pack_half2(0.0, BLEND_BIAS)
}

/// Writes `a` as one actor record (format in the module docs) into `out`.
/// Panics unless `out.len() == 8`.
pub fn pack_actor(a: &ActorState, out: &mut [f32]) {
    let blend = if a.blend_time.is_nan() {
        0.0
    } else {
        a.blend_time.clamp(0.0, MAX_BLEND_TIME)
    };
    let record = [
        a.position.x,
        a.position.y,
        a.position.z,
        a.yaw,
        a.start_time,
        clip_code(a.clip, a.prev_clip),
        pack_half2(a.speed, stored_scale(a.scale)),
        pack_half2(a.prev_elapsed, blend + BLEND_BIAS),
    ];
    out.copy_from_slice(&record);
}

/// Texels per actor record: [`ACTOR_TEXELS`], or [`ACTOR_TEXELS_FULL`] with full transforms.
pub fn record_texels(full_transform: bool) -> u32 {
    if full_transform {
        ACTOR_TEXELS_FULL
    } else {
        ACTOR_TEXELS
    }
}

/// Floats per actor record (see [`record_texels`]).
pub fn record_floats(full_transform: bool) -> usize {
    record_texels(full_transform) as usize * 4
}

/// Writes one actor record into `out` (`record_floats(basis.is_some())` floats): `a` as
/// [`pack_actor`] does, or with `basis` a full-transform record (whose stored scale is 1, the
/// basis carrying it).
pub fn pack_actor_record(a: &ActorState, basis: Option<[Vec3; 3]>, out: &mut [f32]) {
    match basis {
        Some(cols) => {
            let a = ActorState { scale: 1.0, ..*a };
            pack_actor(&a, &mut out[..ACTOR_FLOATS]);
            pack_basis(cols, out);
        }
        None => pack_actor(a, out),
    }
}

/// Writes the basis columns `cols` of a full-transform record (format in the module docs) into
/// `out`, which already holds the record's first 8 floats from [`pack_actor`].
/// Panics unless `out.len() == 16`.
pub fn pack_basis(cols: [Vec3; 3], out: &mut [f32]) {
    let [x, y, z] = cols;
    out[3] = z.z;
    out[8..16].copy_from_slice(&[x.x, x.y, x.z, y.x, y.y, y.z, z.x, z.y]);
}

/// Reads the basis columns back from a full-transform record (exactly as stored).
pub fn unpack_basis(t: &[f32]) -> [Vec3; 3] {
    [
        Vec3::new(t[8], t[9], t[10]),
        Vec3::new(t[11], t[12], t[13]),
        Vec3::new(t[14], t[15], t[3]),
    ]
}

/// The basis columns of a turn by `yaw` about +Y (as the shader's default transform).
pub fn yaw_basis(yaw: f32) -> [Vec3; 3] {
    let (s, c) = yaw.sin_cos();
    [Vec3::new(c, 0.0, -s), Vec3::Y, Vec3::new(s, 0.0, c)]
}

/// A bound on how far `cols` can move a point from the origin, relative to its distance (the
/// Frobenius norm, never below the largest singular value).
pub fn basis_stretch(cols: [Vec3; 3]) -> f32 {
    (cols[0].length_squared() + cols[1].length_squared() + cols[2].length_squared()).sqrt()
}

/// Reads an actor record back. Speed, scale, prev_elapsed and blend_time come back as the f16
/// values stored (relative error <= 2^-11); the rest exactly. Panics if `t.len() < 8`.
pub fn unpack_actor(t: &[f32]) -> ActorState {
    let code = t[5] as u32;
    let (speed, scale) = unpack_half2(t[6]);
    let (prev_elapsed, biased_blend) = unpack_half2(t[7]);
    ActorState {
        position: Vec3::new(t[0], t[1], t[2]),
        yaw: t[3],
        scale,
        clip: code % CLIP_CODE_BASE,
        prev_clip: code / CLIP_CODE_BASE,
        start_time: t[4],
        speed,
        prev_elapsed,
        blend_time: biased_blend - BLEND_BIAS,
    }
}

/// One model instance (format in the module docs). `actor` must be below
/// [`MAX_ACTORS`](crate::layout::MAX_ACTORS); its
/// bits above 24 are dropped.
pub fn pack_model_instance(actor: u32, look: u8) -> [u8; 4] {
    let [r, g, b, _] = actor.to_le_bytes();
    [r, g, b, look]
}

/// Distinct (tint, variation) looks of one model for one submit, each given a byte index in
/// first-use order. Tints are keyed on their exact bits (so `0.0` and `-0.0` are distinct).
#[derive(Debug, Clone, Default)]
pub struct LookTable {
    index: HashMap<([u32; 4], u32), u8>,
    looks: Vec<([f32; 4], u32)>,
    /// The last look asked for and its index.
    last: Option<(([u32; 4], u32), u8)>,
}

impl LookTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets all looks (keeps the allocations).
    pub fn clear(&mut self) {
        self.index.clear();
        self.looks.clear();
        self.last = None;
    }

    /// The index of the look, adding it if new; [`VatError::TooManyLooks`] once
    /// [`MAX_LOOKS`] distinct looks exist.
    pub fn index_of(&mut self, tint: [f32; 4], variation: u32) -> Result<u8> {
        let key = (tint.map(f32::to_bits), variation);
        // Immediate mode asks for the same look model after model: skip the hash then.
        if let Some((last, i)) = self.last {
            if last == key {
                return Ok(i);
            }
        }
        if let Some(&i) = self.index.get(&key) {
            self.last = Some((key, i));
            return Ok(i);
        }
        if self.looks.len() >= MAX_LOOKS as usize {
            return Err(VatError::TooManyLooks { max: MAX_LOOKS });
        }
        let i = self.looks.len() as u8;
        self.index.insert(key, i);
        self.looks.push((tint, variation));
        self.last = Some((key, i));
        Ok(i)
    }

    /// Number of distinct looks.
    pub fn len(&self) -> usize {
        self.looks.len()
    }

    /// True if no look was added.
    pub fn is_empty(&self) -> bool {
        self.looks.is_empty()
    }

    /// Replaces `out` with the look texture: `MAX_LOOKS * LOOK_TEXELS` RGBA32F texels (one row) (format in the module
    /// docs), unused looks zero. Variations are exact as f32 up to 2^24.
    pub fn pack(&self, out: &mut Vec<f32>) {
        out.clear();
        out.resize(MAX_LOOKS as usize * LOOK_FLOATS, 0.0);
        for (dst, (tint, variation)) in out.chunks_exact_mut(LOOK_FLOATS).zip(&self.looks) {
            dst[..4].copy_from_slice(tint);
            dst[4] = *variation as f32;
        }
    }
}

/// Capacity for a buffer that must hold `needed` items: `current` if enough, else `current`
/// (at least [`MIN_CAPACITY`]) doubled until it fits.
pub fn grow_capacity(current: usize, needed: usize) -> usize {
    if needed <= current {
        return current;
    }
    let mut cap = current.max(MIN_CAPACITY);
    while cap < needed {
        cap = cap.checked_mul(2).unwrap_or(needed);
    }
    cap
}

/// Rows of a [`DATA_TEXTURE_WIDTH`]-wide texture holding `items * texels_per_item` texels;
/// at least 1 so the texture is never empty.
pub fn data_rows(items: usize, texels_per_item: u32) -> u32 {
    let texels = items as u64 * u64::from(texels_per_item);
    let rows = texels.div_ceil(u64::from(DATA_TEXTURE_WIDTH)).max(1);
    rows.min(u64::from(u32::MAX)) as u32
}

/// The most items (actors, or model instances) of `texels_per_item` texels one crowd can hold
/// when the renderer's textures are at most `max_texture_size` texels high: the 24-bit actor
/// index ([`MAX_ACTORS`](crate::layout::MAX_ACTORS)), and the rows of a
/// [`DATA_TEXTURE_WIDTH`]-wide data texture (capped at
/// [`MAX_TEXTURE_SIZE`](crate::layout::MAX_TEXTURE_SIZE), which is what we create).
pub fn item_limit(texels_per_item: u32, max_texture_size: u32) -> usize {
    let rows = u64::from(max_texture_size.min(crate::layout::MAX_TEXTURE_SIZE));
    let per_row = u64::from(DATA_TEXTURE_WIDTH / texels_per_item.max(1));
    (rows * per_row).min(u64::from(crate::layout::MAX_ACTORS)) as usize
}

/// Checks that `wanted` items of `texels_per_item` texels fit one crowd (see [`item_limit`]);
/// [`VatError::TooManyItems`] names the limit that stops them.
pub fn check_item_count(
    what: &'static str,
    wanted: usize,
    texels_per_item: u32,
    max_texture_size: u32,
) -> Result<()> {
    let max = item_limit(texels_per_item, max_texture_size);
    if wanted <= max {
        return Ok(());
    }
    let rows = max_texture_size.min(crate::layout::MAX_TEXTURE_SIZE);
    let by_texture = u64::from(rows) * u64::from(DATA_TEXTURE_WIDTH / texels_per_item.max(1));
    let limit = if by_texture < u64::from(crate::layout::MAX_ACTORS) {
        format!(
            "a data texture of {DATA_TEXTURE_WIDTH} x {rows} texels (the renderer's largest) at \
             {texels_per_item} texels each"
        )
    } else {
        "an instance names its actor with a 24-bit index".to_string()
    };
    Err(VatError::TooManyItems {
        what,
        wanted: wanted as u64,
        max: max as u64,
        limit,
    })
}

/// True if position, yaw and scale are all finite.
pub fn check_transform(position: Vec3, yaw: f32, scale: f32) -> bool {
    position.is_finite() && yaw.is_finite() && scale.is_finite()
}

/// Conservative bounds of a crowd: every actor's model `bounds` under any yaw (the model's
/// horizontal extent becomes a circle of its farthest corner's radius), scaled as stored,
/// around its position. Empty if there are no actors or the model bounds are empty.
pub fn crowd_bounds(positions: impl Iterator<Item = (Vec3, f32)>, model: &Bounds) -> Bounds {
    if model.is_empty() {
        return Bounds::empty();
    }
    let radius = Vec2::new(
        model.min.x.abs().max(model.max.x.abs()),
        model.min.z.abs().max(model.max.z.abs()),
    )
    .length();
    let mut out = Bounds::empty();
    for (p, scale) in positions {
        let s = stored_scale(scale);
        let r = radius * s;
        out.extend(p + Vec3::new(-r, model.min.y * s, -r));
        out.extend(p + Vec3::new(r, model.max.y * s, r));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests;
