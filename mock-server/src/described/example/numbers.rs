//! Numbers within a schema's bounds: `minimum`/`maximum` (3.0's exclusive flags and 3.1's
//! exclusive bounds) and `multipleOf` (below 1 too), in exact decimal arithmetic.

use serde_json::{Number, Value};

use super::leaf::describe;

/// The largest integer a double holds exactly: made-up integers stay within it.
pub(super) const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// The bounds of a number: 3.0's `exclusiveMinimum: true` beside `minimum`, and 3.1's
/// numeric `exclusiveMinimum` (the stricter of it and `minimum`), with the range of the
/// integer formats.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    low: Option<(f64, bool)>,
    high: Option<(f64, bool)>,
}

impl Bounds {
    pub(super) fn of(schema: &Value, integer: bool) -> Bounds {
        let number = |key: &str| {
            schema
                .get(key)
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite())
        };
        let flag = |key: &str| schema.get(key) == Some(&Value::Bool(true));
        // 3.1: both may be given; the stricter one counts.
        let stricter = |inclusive: Option<f64>, exclusive: Option<f64>, lower: bool| match (
            inclusive, exclusive,
        ) {
            (Some(i), Some(e)) if (lower && e >= i) || (!lower && e <= i) => Some((e, true)),
            (Some(i), _) => Some((i, false)),
            (None, Some(e)) => Some((e, true)),
            (None, None) => None,
        };
        let mut low = match number("minimum") {
            Some(minimum) if flag("exclusiveMinimum") => Some((minimum, true)),
            minimum => stricter(minimum, number("exclusiveMinimum"), true),
        };
        let mut high = match number("maximum") {
            Some(maximum) if flag("exclusiveMaximum") => Some((maximum, true)),
            maximum => stricter(maximum, number("exclusiveMaximum"), false),
        };
        if integer {
            // JSON integers a double holds exactly, or the format's range.
            let (format_low, format_high) = match schema.get("format").and_then(Value::as_str) {
                Some("int32") => (f64::from(i32::MIN), f64::from(i32::MAX)),
                _ => (-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
            };
            low = low.map(|(value, exclusive)| {
                if value < format_low {
                    (format_low, false)
                } else {
                    (value, exclusive)
                }
            });
            high = Some(match high {
                Some((value, exclusive)) if value <= format_high => (value, exclusive),
                _ => (format_high, false),
            });
        }
        Bounds { low, high }
    }

    pub(super) fn contains(&self, value: f64) -> bool {
        value.is_finite()
            && self.low.is_none_or(
                |(low, exclusive)| {
                    if exclusive { value > low } else { value >= low }
                },
            )
            && self.high.is_none_or(|(high, exclusive)| {
                if exclusive {
                    value < high
                } else {
                    value <= high
                }
            })
    }

    /// The smallest integer allowed, when bounded below (within the safe range).
    pub(super) fn lowest_integer(&self) -> Option<i128> {
        let (low, exclusive) = self.low?;
        let value = if exclusive {
            low.floor() + 1.0
        } else {
            low.ceil()
        };
        to_i128(value.max(-MAX_SAFE_INTEGER))
    }

    /// The largest integer allowed, when bounded above.
    pub(super) fn highest_integer(&self) -> Option<i128> {
        let (high, exclusive) = self.high?;
        let value = if exclusive {
            high.ceil() - 1.0
        } else {
            high.floor()
        };
        to_i128(value.min(MAX_SAFE_INTEGER))
    }

    /// Where a number is looked for: the bounds, or near zero on an open side (a thousand
    /// wide).
    pub(super) fn window(&self) -> (f64, f64) {
        match (self.low, self.high) {
            (Some((low, _)), Some((high, _))) => (low, high),
            (Some((low, _)), None) => (low, low + 1000.0),
            (None, Some((high, _))) if high > 0.0 => (0.0, high),
            (None, Some((high, _))) => (high - 1000.0, high),
            (None, None) => (0.0, 1000.0),
        }
    }
}

pub(super) fn to_i128(value: f64) -> Option<i128> {
    (value.is_finite() && value.abs() < 1e30).then_some(value as i128)
}

pub(super) fn div_floor(a: i128, b: i128) -> i128 {
    let quotient = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        quotient - 1
    } else {
        quotient
    }
}

pub(super) fn div_ceil(a: i128, b: i128) -> i128 {
    let quotient = a / b;
    if (a % b != 0) && ((a < 0) == (b < 0)) {
        quotient + 1
    } else {
        quotient
    }
}

/// `value` as `mantissa / 10^decimals`, read from its shortest decimal form (`0.01` is
/// `(1, 2)`), as jsonschema reads `multipleOf`; `None` when that does not fit.
pub(super) fn decimal_parts(value: f64) -> Option<(i128, u32)> {
    if !value.is_finite() {
        return None;
    }
    let text = value.to_string();
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let decimals = u32::try_from(fraction.len()).ok()?;
    if decimals > 30 {
        return None;
    }
    let digits: String = whole.chars().chain(fraction.chars()).collect();
    let mantissa: i128 = digits.parse().ok()?;
    Some((mantissa, decimals))
}

/// `mantissa / 10^decimals` as a double.
pub(super) fn mantissa_value(mantissa: i128, decimals: u32) -> Option<f64> {
    decimal(mantissa, decimals)?.as_f64()
}

/// The JSON number `mantissa / 10^decimals`, written as that decimal (so `7 × 0.01` is `0.07`,
/// not `0.07000000000000001`).
pub(super) fn decimal(mantissa: i128, decimals: u32) -> Option<Number> {
    let negative = mantissa < 0;
    let digits = mantissa.unsigned_abs().to_string();
    let decimals = decimals as usize;
    let text = if decimals == 0 {
        digits
    } else if digits.len() > decimals {
        let (whole, fraction) = digits.split_at(digits.len() - decimals);
        format!("{whole}.{fraction}")
    } else {
        format!("0.{}{digits}", "0".repeat(decimals - digits.len()))
    };
    let value: f64 = text.parse().ok()?;
    let value = if negative { -value } else { value };
    Number::from_f64(value)
}

/// The integers that are multiples of `multiple`: those of this step (`0.3` → 3, `0.5` → 1,
/// `4` → 4); `None` when it cannot be read exactly.
pub(super) fn integer_step(multiple: f64) -> Option<i128> {
    let (mantissa, decimals) = decimal_parts(multiple)?;
    if mantissa <= 0 {
        return None;
    }
    let scale = 10i128.checked_pow(decimals)?;
    Some(mantissa / gcd(mantissa, scale))
}

pub(super) fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs().max(1)
}

/// `between 0 and 1 (multipleOf 0.01)`, from the schema's own keywords.
pub(super) fn describe_number(schema: &Value) -> String {
    describe(
        schema,
        &[
            "minimum",
            "exclusiveMinimum",
            "maximum",
            "exclusiveMaximum",
            "multipleOf",
            "format",
        ],
    )
}
