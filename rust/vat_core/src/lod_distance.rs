//! Which level of detail (LOD) an actor gets at a distance: the one formula the bake (switch
//! distances shown to the user) and the crowd nodes (per-actor selection) share.
//!
//! `LOD = log2(d * C / D) * slope + offset`, with
//! * `d` the distance from the camera to the actor,
//! * `D` the diameter of the actor's bounds including its scale ([`actor_diameter`]),
//! * `C = threshold * 2 * tan(fov / 2) / image_height` ([`screen_constant`]) and
//!   `threshold = image_height / REFERENCE_IMAGE_HEIGHT`, so `C` depends on the field of view
//!   only: switch distances are the same at 720, 1440 or 2160 pixels.
//!
//! `slope` and `offset` are calibrated per character ([`LodCurve::calibrate`]) so that at scale 1,
//! [`REFERENCE_FOV_DEGREES`] and [`REFERENCE_IMAGE_HEIGHT`] level 1 starts at the first switch
//! distance and level 2 at the second (by default [`DEFAULT_SWITCH_DISTANCES`]). An actor twice
//! as large switches twice as far away; a narrower field of view pushes every switch out.

use crate::bounds::Bounds;
use crate::error::{Result, VatError};

/// Image height at which `threshold = 1`.
pub const REFERENCE_IMAGE_HEIGHT: f32 = 1440.0;
/// Vertical field of view at which the switch distances are given.
pub const REFERENCE_FOV_DEGREES: f32 = 30.0;
/// Where level 1 and level 2 start, in metres, at scale 1, [`REFERENCE_FOV_DEGREES`] and
/// [`REFERENCE_IMAGE_HEIGHT`].
pub const DEFAULT_SWITCH_DISTANCES: [f32; 2] = [93.3, 167.9];
/// Growth of an axis-aligned box's extent under an arbitrary rotation, folded into `D`.
pub const ROTATION_GROWTH: f32 = 1.22;
/// Levels an actor's LOD value must move past a boundary before its level changes, so actors
/// walking along a boundary do not flicker between two meshes.
pub const HYSTERESIS: f32 = 0.1;

/// `C` of the formula for a vertical field of view in radians (the image height cancels out; see
/// the module docs). Returns 0 for a field of view outside (0, pi).
pub fn screen_constant(fov_y_radians: f32) -> f32 {
    if !(fov_y_radians > 0.0 && fov_y_radians < std::f32::consts::PI) {
        return 0.0;
    }
    2.0 * (fov_y_radians * 0.5).tan() / REFERENCE_IMAGE_HEIGHT
}

/// `D` of the formula: the largest extent of `bounds` (the character's, at scale 1) times
/// `scale` and [`ROTATION_GROWTH`]. Zero for empty bounds.
pub fn actor_diameter(bounds: &Bounds, scale: f32) -> f32 {
    bounds.size().max_element() * scale.abs() * ROTATION_GROWTH
}

/// The calibrated `slope` and `offset` of one character.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LodCurve {
    /// Levels per doubling of `d * C / D`.
    pub slope: f32,
    /// Level at `d * C / D = 1`.
    pub offset: f32,
}

impl LodCurve {
    /// The curve on which a character of diameter `diameter` ([`actor_diameter`] at scale 1)
    /// reaches level 1 at `switch[0]` metres and level 2 at `switch[1]` metres, at
    /// [`REFERENCE_FOV_DEGREES`].
    ///
    /// Errors unless `0 < switch[0] < switch[1]`, both finite, and `diameter` is positive and
    /// finite.
    pub fn calibrate(diameter: f32, switch: [f32; 2]) -> Result<Self> {
        let [d1, d2] = switch;
        let ok = d1.is_finite() && d2.is_finite() && d1 > 0.0 && d2 > d1;
        if !(ok && diameter.is_finite() && diameter > 0.0) {
            return Err(VatError::InvalidValue {
                what: "LOD switch distances",
                detail: format!(
                    "need 0 < first < second (got {d1} m and {d2} m) and a character with a \
                     positive size (diameter {diameter} m)"
                ),
            });
        }
        let c = screen_constant(REFERENCE_FOV_DEGREES.to_radians());
        let slope = 1.0 / (d2 / d1).log2();
        let offset = 1.0 - slope * (d1 * c / diameter).log2();
        Ok(Self { slope, offset })
    }

    /// The continuous LOD value of an actor of diameter `diameter` at `distance` metres, for a
    /// camera with screen constant `c` ([`screen_constant`]). Very near (or degenerate input)
    /// gives a large negative value, which selects level 0.
    pub fn value(&self, distance: f32, diameter: f32, c: f32) -> f32 {
        let ratio = distance * c / diameter;
        if ratio > 0.0 && ratio.is_finite() {
            ratio.log2() * self.slope + self.offset
        } else if ratio.is_infinite() {
            f32::MAX
        } else {
            f32::MIN
        }
    }

    /// The distance at which the LOD value of an actor of diameter `diameter` reaches `level`
    /// (the inverse of [`LodCurve::value`]).
    pub fn switch_distance(&self, level: f32, diameter: f32, c: f32) -> f32 {
        ((level - self.offset) / self.slope).exp2() * diameter / c
    }
}

/// The level for LOD value `value` (bias already added), given the level the actor had last frame
/// (`None` for a new actor) and the highest level the model has. A new level is taken only once
/// the value is [`HYSTERESIS`] past the boundary.
pub fn pick_level(value: f32, previous: Option<u8>, max_level: u8) -> u8 {
    let plain = if value <= 0.0 {
        0
    } else {
        (value.min(255.0) as u32).min(u32::from(max_level)) as u8
    };
    match previous {
        Some(p) if p <= max_level => {
            let lo = f32::from(p) - HYSTERESIS;
            let hi = f32::from(p) + 1.0 + HYSTERESIS;
            if value >= lo && (value < hi || p == max_level) {
                p
            } else {
                plain
            }
        }
        _ => plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn soldier() -> Bounds {
        Bounds {
            min: Vec3::new(-0.4, 0.0, -0.3),
            max: Vec3::new(0.4, 1.8, 0.3),
        }
    }

    #[test]
    fn calibrated_curve_switches_at_the_given_distances() {
        let d = actor_diameter(&soldier(), 1.0);
        assert!((d - 1.8 * 1.22).abs() < 1e-5);
        let curve = LodCurve::calibrate(d, DEFAULT_SWITCH_DISTANCES).unwrap();
        let c = screen_constant(30f32.to_radians());
        assert!((curve.switch_distance(1.0, d, c) - 93.3).abs() < 0.01);
        assert!((curve.switch_distance(2.0, d, c) - 167.9).abs() < 0.01);
        assert!((curve.value(93.3, d, c) - 1.0).abs() < 1e-4);
        assert!((curve.value(167.9, d, c) - 2.0).abs() < 1e-4);
        assert!(curve.value(10.0, d, c) < 0.0);
    }

    #[test]
    fn twice_the_scale_switches_twice_as_far_and_fov_matters() {
        let d = actor_diameter(&soldier(), 1.0);
        let curve = LodCurve::calibrate(d, DEFAULT_SWITCH_DISTANCES).unwrap();
        let c = screen_constant(30f32.to_radians());
        let d2 = actor_diameter(&soldier(), 2.0);
        assert!((curve.switch_distance(1.0, d2, c) - 186.6).abs() < 0.02);
        // A narrower view magnifies: the same level is reached farther away.
        let narrow = screen_constant(15f32.to_radians());
        assert!(curve.switch_distance(1.0, d, narrow) > 180.0);
    }

    #[test]
    fn bad_calibration_is_refused() {
        assert!(LodCurve::calibrate(1.0, [100.0, 50.0]).is_err());
        assert!(LodCurve::calibrate(0.0, [93.3, 167.9]).is_err());
        assert!(LodCurve::calibrate(1.0, [f32::NAN, 167.9]).is_err());
        assert_eq!(screen_constant(0.0), 0.0);
        assert_eq!(screen_constant(f32::NAN), 0.0);
    }

    #[test]
    fn degenerate_inputs_pick_a_level_without_panicking() {
        let curve = LodCurve::calibrate(2.0, DEFAULT_SWITCH_DISTANCES).unwrap();
        assert_eq!(pick_level(curve.value(0.0, 2.0, 1e-3), None, 2), 0);
        assert_eq!(pick_level(curve.value(1e30, 0.0, 1e-3), None, 2), 2);
        assert_eq!(pick_level(curve.value(f32::NAN, 2.0, 1e-3), None, 2), 0);
    }

    #[test]
    fn hysteresis_keeps_the_level_near_a_boundary() {
        assert_eq!(pick_level(1.05, None, 2), 1);
        assert_eq!(pick_level(0.95, Some(1), 2), 1);
        assert_eq!(pick_level(0.85, Some(1), 2), 0);
        assert_eq!(pick_level(1.05, Some(0), 2), 0);
        assert_eq!(pick_level(1.15, Some(0), 2), 1);
        assert_eq!(pick_level(7.0, Some(2), 2), 2);
        assert_eq!(pick_level(7.0, Some(0), 2), 2);
        // A previous level past the model's last (the model lost LODs) is not kept.
        assert_eq!(pick_level(1.0, Some(5), 2), 1);
    }
}
