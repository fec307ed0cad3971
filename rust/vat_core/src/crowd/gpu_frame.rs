//! The GPU-driven crowd frame's side of the crowd frame: what the compute pass reads (one
//! parameter block per crowd and frame, [`pack_gpu_params`]), the layout of that block and of the
//! counters it writes, and the GLSL definitions that carry every constant to the compute shader
//! ([`glsl_defines`]), so the shader holds no number of its own.
//!
//! The compute pass (`shaders/vat_crowd_frame.glsl`) runs the exact tests of
//! `frame_classify` per actor (there is no fast path on the GPU: every actor costs the same
//! there) and then sorts each model's instances into its slots as [`gpu_slot_levels`] says.
//! One difference from the CPU frame, which decides after counting: when the crowd casts
//! shadows, the shadow slots always carry every shadow (the view slots cast none), since the
//! GPU frame cannot know before drawing whether some actor in the view casts none. Both draw
//! the same picture.

use crate::crowd::frame::{CULLED, LEVEL_BITS, MAX_LEVELS, NO_CAST, SHADOW_ONLY};
use crate::crowd::frame_classify::bounds_radius;
use crate::crowd::frame_input::{CrowdShape, FrameSettings, Projection, View};
use crate::layout::{
    BLEND_BIAS, CLIP_CODE_BASE, DATA_TEXTURE_WIDTH, PLACEMENT_TEXELS, PLACEMENT_TEXELS_FULL,
    RECENT_SLOT_BIAS, STATE_TEXELS, YAW_BITS, YAW_STEPS,
};
use crate::lod_distance::{HYSTERESIS, REFERENCE_IMAGE_HEIGHT};

/// Frustum planes the parameter block holds (Godot's cameras give six).
pub const GPU_MAX_PLANES: usize = 8;
/// Shadowed directional lights the block holds (Godot draws at most eight directional lights).
pub const GPU_MAX_SWEEPS: usize = 8;
/// Shadowed omni and spot lights the block lists; with more, every actor outside the view is
/// kept for its shadow (the same picture, more shadow casters drawn).
pub const GPU_MAX_SPHERES: usize = 16;

/// Word offsets (4-byte words) in the parameter block. `P_CAMERA`: camera x, y, z, and 1 with a
/// view (0: nothing culled, every actor at level 0 unless forced).
pub const P_CAMERA: usize = 0;
/// 0 perspective or 1 orthographic, the screen constant or the view height, actors, instances.
pub const P_PROJECTION: usize = 4;
/// LOD curve slope and offset, the LOD diameter at scale 1, and 1 when the crowd has levels.
pub const P_LOD: usize = 8;
/// culling (0/1), lod_bias, the highest level (`top`), force_lod (-1: none).
pub const P_SETTINGS: usize = 12;
/// shadow_lod (-1: none), cast_shadows (0/1), any_yaw (0/1), the crowd clock.
pub const P_SHADOWS: usize = 16;
/// Planes, sweeps, spheres, and shadow reaches (0: every actor in the view casts).
pub const P_COUNTS: usize = 20;
/// Clips, full transforms (0/1), levels, and 1 when every actor outside the view casts (more
/// shadowed omni and spot lights than the block lists).
pub const P_SHAPE: usize = 24;
/// Planes: `(normal, d)` each.
pub const P_PLANES: usize = 28;
/// Sweeps: `(direction of travel times shadow distance, 0)` each.
pub const P_SWEEPS: usize = P_PLANES + 4 * GPU_MAX_PLANES;
/// Shadow spheres that reach the view: `(centre, radius)` each.
pub const P_SPHERES: usize = P_SWEEPS + 4 * GPU_MAX_SWEEPS;
/// Shadow reaches: `(unit direction of travel, reach)` each.
pub const P_REACH: usize = P_SPHERES + 4 * GPU_MAX_SPHERES;
/// Clip bounds, [`CLIP_WORDS`] each: `(min, radius about the origin)`, `(max, 0)`; one more entry
/// after the last clip holds the union of all (for clip numbers past the table).
pub const P_CLIPS: usize = P_REACH + 4 * GPU_MAX_SWEEPS;
/// Words per clip entry.
pub const CLIP_WORDS: usize = 8;

/// Counters the pass writes (u32 each): actors in the view per level from `COUNTER_LEVELS`,
/// then the shadow-only and not-casting counts, then one per slot (instances it asked to draw,
/// which may pass its capacity: the draw takes the smaller).
pub const COUNTER_LEVELS: usize = 0;
/// Actors outside the view kept for their shadows.
pub const COUNTER_SHADOW_ONLY: usize = MAX_LEVELS;
/// Actors in the view that cast no shadow.
pub const COUNTER_NO_CAST: usize = MAX_LEVELS + 1;
/// The first slot's counter.
pub const COUNTER_SLOTS: usize = MAX_LEVELS + 2;

/// Floats per instance in an indirect MultiMesh's buffer: a 3x4 transform and the custom data.
pub const GPU_INSTANCE_FLOATS: usize = 16;
/// u32 words per surface in a MultiMesh's indirect command buffer (Godot's
/// `INDIRECT_MULTIMESH_COMMAND_STRIDE`: index or vertex count, instance count, then offsets).
pub const GPU_COMMAND_WORDS: usize = 5;
/// Threads per work group of the compute pass.
pub const GPU_GROUP_SIZE: u32 = 64;

/// The pass's modes (push constant `mode`).
pub const MODE_CLASSIFY: u32 = 0;
/// Sorts one model's instances into one slot.
pub const MODE_FILL: u32 = 1;
/// Writes one slot's instance count into every surface's indirect command.
pub const MODE_COMMANDS: u32 = 2;

/// Why a view cannot go to the GPU frame (the node then runs the CPU frame).
#[derive(Debug, Clone, PartialEq)]
pub enum GpuParamsError {
    /// More frustum planes than `GPU_MAX_PLANES`.
    TooManyPlanes(usize),
    /// More shadowed directional lights than `GPU_MAX_SWEEPS`.
    TooManySweeps(usize),
}

impl std::fmt::Display for GpuParamsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooManyPlanes(n) => write!(
                f,
                "the culling camera has {n} frustum planes; the GPU frame takes {GPU_MAX_PLANES}"
            ),
            Self::TooManySweeps(n) => write!(
                f,
                "{n} shadowed directional lights; the GPU frame takes {GPU_MAX_SWEEPS}"
            ),
        }
    }
}

/// The parameter block for one frame of a crowd: `actors` actor records (with full transforms
/// when `full`) and `instances` model instances in all, seen by `view`, with `settings` and
/// `shape`. Words are f32 bits (the shader reads integers as floats; all are small).
pub fn pack_gpu_params(
    view: Option<&View>,
    settings: &FrameSettings,
    shape: &CrowdShape,
    actors: usize,
    instances: usize,
    full: bool,
) -> Result<Vec<f32>, GpuParamsError> {
    let clips = shape.clip_bounds.len();
    let mut p = vec![0.0f32; P_CLIPS + CLIP_WORDS * (clips + 1)];
    let levels = shape.levels().min(MAX_LEVELS);
    let top = (levels - 1).min(usize::from(settings.max_lod));
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    p[P_PROJECTION + 2] = actors as f32;
    p[P_PROJECTION + 3] = instances as f32;
    if let Some(v) = view {
        if v.planes.len() > GPU_MAX_PLANES {
            return Err(GpuParamsError::TooManyPlanes(v.planes.len()));
        }
        if v.shadow_sweeps.len() > GPU_MAX_SWEEPS {
            return Err(GpuParamsError::TooManySweeps(v.shadow_sweeps.len()));
        }
        p[P_CAMERA..P_CAMERA + 3].copy_from_slice(&v.camera.to_array());
        p[P_CAMERA + 3] = 1.0;
        (p[P_PROJECTION], p[P_PROJECTION + 1]) = match v.projection {
            Projection::Perspective { screen_constant } => (0.0, screen_constant),
            Projection::Orthographic { height } => (1.0, height),
        };
        for (k, pl) in v.planes.iter().enumerate() {
            let at = P_PLANES + 4 * k;
            p[at..at + 3].copy_from_slice(&pl.normal.to_array());
            p[at + 3] = pl.d;
        }
        for (k, s) in v.shadow_sweeps.iter().enumerate() {
            let at = P_SWEEPS + 4 * k;
            p[at..at + 3].copy_from_slice(&s.to_array());
        }
        let spheres = v.spheres_in_view();
        let listed = spheres.len().min(GPU_MAX_SPHERES);
        for (k, (c, r)) in spheres.iter().take(listed).enumerate() {
            let at = P_SPHERES + 4 * k;
            p[at..at + 3].copy_from_slice(&c.to_array());
            p[at + 3] = *r;
        }
        let reach = settings
            .culling
            .then_some(())
            .filter(|_| settings.cast_shadows)
            .and_then(|_| v.reach_limits())
            .unwrap_or_default();
        for (k, (travel, limit)) in reach.iter().enumerate() {
            let at = P_REACH + 4 * k;
            p[at..at + 3].copy_from_slice(&travel.to_array());
            p[at + 3] = *limit;
        }
        p[P_COUNTS] = v.planes.len() as f32;
        p[P_COUNTS + 1] = v.shadow_sweeps.len() as f32;
        p[P_COUNTS + 2] = listed as f32;
        p[P_COUNTS + 3] = reach.len() as f32;
        p[P_SHAPE + 3] = flag(spheres.len() > listed);
    }
    if let Some((curve, diameter)) = shape.lod {
        p[P_LOD..P_LOD + 4].copy_from_slice(&[curve.slope, curve.offset, diameter, 1.0]);
    }
    p[P_SETTINGS] = flag(settings.culling);
    p[P_SETTINGS + 1] = settings.lod_bias;
    p[P_SETTINGS + 2] = top as f32;
    p[P_SETTINGS + 3] = settings.force_lod.map_or(-1.0, f32::from);
    p[P_SHADOWS] = settings
        .shadow_lod
        .filter(|_| settings.cast_shadows)
        .map_or(-1.0, f32::from);
    p[P_SHADOWS + 1] = flag(settings.cast_shadows);
    p[P_SHADOWS + 2] = flag(settings.any_yaw);
    p[P_SHADOWS + 3] = settings.time;
    p[P_SHAPE] = clips as f32;
    p[P_SHAPE + 1] = flag(full);
    p[P_SHAPE + 2] = levels as f32;
    let union = shape
        .clip_bounds
        .iter()
        .fold(crate::bounds::Bounds::empty(), |a, b| a.union(b));
    for (k, b) in shape.clip_bounds.iter().chain([&union]).enumerate() {
        let at = P_CLIPS + CLIP_WORDS * k;
        p[at..at + 3].copy_from_slice(&b.min.to_array());
        p[at + 3] = bounds_radius(b);
        p[at + 4..at + 7].copy_from_slice(&b.max.to_array());
    }
    Ok(p)
}

/// The levels of the view slot and the shadow slot that draw an instance whose actor has class
/// `class`, for a model whose last level is `last`, in a frame that casts shadows when `cast`
/// (with `shadow_lod`'s level as the shadows' floor). The compute pass's `MODE_FILL` applies
/// exactly this; the CPU frame agrees whenever it splits its shadows.
pub fn gpu_slot_levels(
    class: u8,
    last: u8,
    cast: bool,
    shadow_lod: Option<u8>,
) -> (Option<u8>, Option<u8>) {
    if class == CULLED {
        return (None, None);
    }
    let level = (class & LEVEL_BITS).min(last);
    let view = (class & SHADOW_ONLY == 0).then_some(level);
    let floor = shadow_lod.unwrap_or(0).min(last);
    let shadow = (cast && class & NO_CAST == 0).then_some(level.max(floor));
    (view, shadow)
}

/// `#define` lines for every constant the compute pass uses, generated from this crate's
/// constants: the shader source starts with them.
pub fn glsl_defines() -> String {
    let ints: [(&str, u64); 34] = [
        ("GPU_MAX_PLANES", GPU_MAX_PLANES as u64),
        ("GPU_MAX_SWEEPS", GPU_MAX_SWEEPS as u64),
        ("GPU_MAX_SPHERES", GPU_MAX_SPHERES as u64),
        ("P_CAMERA", P_CAMERA as u64),
        ("P_PROJECTION", P_PROJECTION as u64),
        ("P_LOD", P_LOD as u64),
        ("P_SETTINGS", P_SETTINGS as u64),
        ("P_SHADOWS", P_SHADOWS as u64),
        ("P_COUNTS", P_COUNTS as u64),
        ("P_SHAPE", P_SHAPE as u64),
        ("P_PLANES", P_PLANES as u64),
        ("P_SWEEPS", P_SWEEPS as u64),
        ("P_SPHERES", P_SPHERES as u64),
        ("P_REACH", P_REACH as u64),
        ("P_CLIPS", P_CLIPS as u64),
        ("CLIP_WORDS", CLIP_WORDS as u64),
        ("COUNTER_LEVELS", COUNTER_LEVELS as u64),
        ("COUNTER_SHADOW_ONLY", COUNTER_SHADOW_ONLY as u64),
        ("COUNTER_NO_CAST", COUNTER_NO_CAST as u64),
        ("COUNTER_SLOTS", COUNTER_SLOTS as u64),
        ("GPU_INSTANCE_FLOATS", GPU_INSTANCE_FLOATS as u64),
        ("GPU_COMMAND_WORDS", GPU_COMMAND_WORDS as u64),
        ("GPU_GROUP_SIZE", u64::from(GPU_GROUP_SIZE)),
        ("MODE_CLASSIFY", u64::from(MODE_CLASSIFY)),
        ("MODE_FILL", u64::from(MODE_FILL)),
        ("MODE_COMMANDS", u64::from(MODE_COMMANDS)),
        ("CLASS_CULLED", u64::from(CULLED)),
        ("CLASS_SHADOW_ONLY", u64::from(SHADOW_ONLY)),
        ("CLASS_NO_CAST", u64::from(NO_CAST)),
        ("CLASS_LEVEL_BITS", u64::from(LEVEL_BITS)),
        ("DATA_TEXTURE_WIDTH", u64::from(DATA_TEXTURE_WIDTH)),
        ("PLACEMENT_TEXELS", u64::from(PLACEMENT_TEXELS)),
        ("PLACEMENT_TEXELS_FULL", u64::from(PLACEMENT_TEXELS_FULL)),
        ("STATE_TEXELS", u64::from(STATE_TEXELS)),
    ];
    let more: [(&str, u64); 5] = [
        ("RECENT_SLOT_BIAS", u64::from(RECENT_SLOT_BIAS)),
        ("YAW_BITS", u64::from(YAW_BITS)),
        ("YAW_STEPS", u64::from(YAW_STEPS)),
        ("CLIP_CODE_BASE", u64::from(CLIP_CODE_BASE)),
        ("MAX_LEVELS", MAX_LEVELS as u64),
    ];
    let mut s = String::new();
    for (name, v) in ints.iter().chain(more.iter()) {
        s.push_str(&format!("#define {name} {v}\n"));
    }
    for (name, v) in [
        ("BLEND_BIAS", BLEND_BIAS),
        ("HYSTERESIS", HYSTERESIS),
        ("REFERENCE_IMAGE_HEIGHT", REFERENCE_IMAGE_HEIGHT),
    ] {
        s.push_str(&format!("#define {name} {v:?}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::Bounds;
    use crate::crowd::frame_input::Plane;
    use crate::lod_distance::LodCurve;
    use glam::Vec3;

    fn shape() -> CrowdShape {
        CrowdShape {
            clip_bounds: vec![
                Bounds {
                    min: Vec3::new(-1.0, 0.0, -1.0),
                    max: Vec3::new(1.0, 2.0, 1.0),
                },
                Bounds {
                    min: Vec3::new(-3.0, 0.0, -1.0),
                    max: Vec3::new(1.0, 1.0, 4.0),
                },
            ],
            lod: Some((
                LodCurve {
                    slope: 1.5,
                    offset: -2.0,
                },
                2.4,
            )),
            model_levels: vec![3, 2],
        }
    }

    fn view() -> View {
        View {
            planes: vec![Plane {
                normal: Vec3::X,
                d: 5.0,
            }],
            camera: Vec3::new(1.0, 2.0, 3.0),
            projection: Projection::Perspective {
                screen_constant: 0.25,
            },
            shadow_sweeps: vec![Vec3::new(0.0, -10.0, 0.0)],
            shadow_spheres: vec![],
            shadow_reach: vec![40.0],
        }
    }

    #[test]
    fn the_block_holds_each_input_where_the_shader_reads_it() {
        let settings = FrameSettings {
            lod_bias: 0.5,
            max_lod: 1,
            shadow_lod: Some(2),
            time: 7.5,
            ..FrameSettings::default()
        };
        let p = pack_gpu_params(Some(&view()), &settings, &shape(), 10, 25, false).unwrap();
        assert_eq!(&p[P_CAMERA..P_CAMERA + 4], &[1.0, 2.0, 3.0, 1.0]);
        assert_eq!(&p[P_PROJECTION..P_PROJECTION + 4], &[0.0, 0.25, 10.0, 25.0]);
        assert_eq!(&p[P_LOD..P_LOD + 4], &[1.5, -2.0, 2.4, 1.0]);
        // Three levels, max_lod 1: the top is 1.
        assert_eq!(&p[P_SETTINGS..P_SETTINGS + 4], &[1.0, 0.5, 1.0, -1.0]);
        assert_eq!(&p[P_SHADOWS..P_SHADOWS + 4], &[2.0, 1.0, 0.0, 7.5]);
        assert_eq!(&p[P_COUNTS..P_COUNTS + 4], &[1.0, 1.0, 0.0, 1.0]);
        assert_eq!(&p[P_PLANES..P_PLANES + 4], &[1.0, 0.0, 0.0, 5.0]);
        assert_eq!(&p[P_SWEEPS..P_SWEEPS + 3], &[0.0, -10.0, 0.0]);
        assert_eq!(&p[P_REACH..P_REACH + 4], &[0.0, -1.0, 0.0, 40.0]);
        assert_eq!(&p[P_SHAPE..P_SHAPE + 4], &[2.0, 0.0, 3.0, 0.0]);
        let second = P_CLIPS + CLIP_WORDS;
        assert_eq!(&p[second..second + 3], &[-3.0, 0.0, -1.0]);
        assert!((p[second + 3] - Vec3::new(3.0, 1.0, 4.0).length()).abs() < 1e-6);
        let union = P_CLIPS + 2 * CLIP_WORDS;
        assert_eq!(&p[union..union + 3], &[-3.0, 0.0, -1.0]);
        assert_eq!(&p[union + 4..union + 7], &[1.0, 2.0, 4.0]);
        assert_eq!(p.len(), P_CLIPS + 3 * CLIP_WORDS);
    }

    #[test]
    fn no_view_no_lod_and_too_many_lights() {
        let mut s = shape();
        s.lod = None;
        let p = pack_gpu_params(None, &FrameSettings::default(), &s, 0, 0, true).unwrap();
        assert_eq!(p[P_CAMERA + 3], 0.0);
        assert_eq!(p[P_LOD + 3], 0.0);
        assert_eq!(p[P_SHAPE + 1], 1.0);
        let mut v = view();
        v.planes = vec![v.planes[0]; GPU_MAX_PLANES + 1];
        assert_eq!(
            pack_gpu_params(Some(&v), &FrameSettings::default(), &s, 0, 0, false),
            Err(GpuParamsError::TooManyPlanes(GPU_MAX_PLANES + 1))
        );
        let mut v = view();
        // Spheres within the view: listed up to the limit, then every outside actor casts.
        v.shadow_spheres = vec![(Vec3::ZERO, 1.0); GPU_MAX_SPHERES + 1];
        let p = pack_gpu_params(Some(&v), &FrameSettings::default(), &s, 0, 0, false).unwrap();
        assert_eq!(p[P_COUNTS + 2], GPU_MAX_SPHERES as f32);
        assert_eq!(p[P_SHAPE + 3], 1.0);
        // An omni light's shadow makes every actor in the view cast: no reach limits.
        assert_eq!(p[P_COUNTS + 3], 0.0);
    }

    #[test]
    fn slot_levels_follow_the_class() {
        assert_eq!(gpu_slot_levels(CULLED, 2, true, None), (None, None));
        assert_eq!(gpu_slot_levels(1, 2, true, None), (Some(1), Some(1)));
        // A model with fewer levels draws its last.
        assert_eq!(gpu_slot_levels(3, 1, true, None), (Some(1), Some(1)));
        assert_eq!(gpu_slot_levels(1 | NO_CAST, 2, true, None), (Some(1), None));
        assert_eq!(
            gpu_slot_levels(2 | SHADOW_ONLY, 2, true, None),
            (None, Some(2))
        );
        assert_eq!(gpu_slot_levels(0, 2, true, Some(1)), (Some(0), Some(1)));
        assert_eq!(gpu_slot_levels(0, 2, true, Some(5)), (Some(0), Some(2)));
        assert_eq!(gpu_slot_levels(0, 2, false, None), (Some(0), None));
    }

    #[test]
    fn every_define_is_an_integer_or_a_float_literal() {
        let d = glsl_defines();
        assert!(d.contains("#define CLASS_CULLED 255\n"));
        assert!(d.contains("#define HYSTERESIS 0.1\n"));
        assert!(d.contains(&format!("#define P_CLIPS {P_CLIPS}\n")));
        for line in d.lines() {
            let value = line.split_whitespace().nth(2).unwrap();
            // GLSL converts these ints to uint where an expression needs it.
            let ok = value.parse::<u32>().is_ok()
                || value.parse::<f32>().is_ok_and(|_| value.contains('.'));
            assert!(ok, "{line}");
        }
    }
}
