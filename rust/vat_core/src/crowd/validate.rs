//! The one rule for each value a crowd call takes (speeds, times, blend times), shared by the
//! single and the bulk calls, so the same number is accepted or refused whichever call carries it.

use crate::error::{Result, VatError};

/// Largest speed (and `speed_scale`) magnitude: the f16 maximum, as an actor record stores the
/// speed in an f16 (from 65520 on it would round to infinity and the actor would vanish).
pub const MAX_SPEED: f64 = 65504.0;
/// Largest crowd time magnitude in seconds (clock and start times): 2^32 s, about 136 years,
/// where the f64 clock still resolves a microsecond and a start time relative to the clock's
/// origin stays a finite f32.
pub const MAX_CROWD_TIME: f64 = 4_294_967_296.0;

const SPEED_RULE: &str = "finite and within +-65504 (an actor stores its speed as an f16)";
const TIME_RULE: &str = "finite and within +-2^32 seconds (4294967296)";
const BLEND_RULE: &str = "finite and at most 60000 seconds (0 or less: no cross-fade)";

fn bad(what: String, value: f64, allowed: &'static str) -> VatError {
    VatError::BadValue {
        what,
        value,
        allowed,
    }
}

/// A playback speed or speed scale: [`VatError::BadValue`] unless finite and within
/// [`MAX_SPEED`]; returns it as stored (f32).
pub fn speed(value: f64, what: &str) -> Result<f32> {
    if value.is_finite() && value.abs() <= MAX_SPEED {
        Ok(value as f32)
    } else {
        Err(bad(what.to_string(), value, SPEED_RULE))
    }
}

/// A crowd time (the clock, a start time): [`VatError::BadValue`] unless finite and within
/// [`MAX_CROWD_TIME`].
pub fn crowd_time(value: f64, what: &str) -> Result<f64> {
    crowd_time_named(value, || what.to_string())
}

/// [`crowd_time`], naming the value only if it is refused: bulk calls name the entry, and
/// formatting that name for every accepted entry cost more than the rest of the check.
pub fn crowd_time_named(value: f64, what: impl FnOnce() -> String) -> Result<f64> {
    if time_ok(value) {
        Ok(value)
    } else {
        Err(bad(what(), value, TIME_RULE))
    }
}

/// True if [`crowd_time`] accepts `value` (NaN fails the compare); branch-free for bulk passes.
#[inline]
pub fn time_ok(value: f64) -> bool {
    value.abs() <= MAX_CROWD_TIME
}

/// A cross-fade length: [`VatError::BadValue`] unless finite and at most
/// [`MAX_BLEND_TIME`](crate::crowd::records::MAX_BLEND_TIME); returns it as stored, negative as 0.
pub fn blend_time(value: f64, what: &str) -> Result<f32> {
    blend_time_named(value, || what.to_string())
}

/// [`blend_time`], naming the value only if it is refused (see [`crowd_time_named`]).
pub fn blend_time_named(value: f64, what: impl FnOnce() -> String) -> Result<f32> {
    if value.is_finite() && value <= f64::from(crate::crowd::records::MAX_BLEND_TIME) {
        Ok(value.max(0.0) as f32)
    } else {
        Err(bad(what(), value, BLEND_RULE))
    }
}

#[cfg(test)]
mod crowd_value_tests {
    use super::*;

    #[test]
    fn speeds_that_an_f16_cannot_hold_are_refused() {
        assert_eq!(speed(-2.5, "speed"), Ok(-2.5));
        assert_eq!(speed(MAX_SPEED, "speed"), Ok(65504.0));
        // 65520 is the first value an f16 rounds to infinity; the rule stops at its maximum.
        assert!(crate::half::f32_to_f16(65520.0) == 0x7c00);
        for v in [65505.0, 65520.0, 1e30, f64::INFINITY, f64::NAN] {
            let e = speed(v, "speed").unwrap_err();
            assert!(e.to_string().starts_with("speed "), "{e}");
        }
    }

    #[test]
    fn times_and_blends() {
        assert_eq!(crowd_time(86_400.25, "time"), Ok(86_400.25));
        for v in [
            f64::INFINITY,
            -f64::INFINITY,
            f64::NAN,
            1e300,
            MAX_CROWD_TIME * 2.0,
        ] {
            assert!(crowd_time(v, "start time").is_err(), "{v}");
        }
        assert_eq!(blend_time(-1.0, "blend"), Ok(0.0));
        assert_eq!(blend_time(0.25, "blend"), Ok(0.25));
        assert!(blend_time(f64::NAN, "blend").is_err());
        assert!(blend_time(1e9, "blend").is_err());
        let e = blend_time(f64::INFINITY, "blend time of entry 2").unwrap_err();
        assert_eq!(
            e.to_string(),
            "blend time of entry 2 inf is not allowed; it must be finite and at most 60000 \
             seconds (0 or less: no cross-fade)"
        );
    }
}
