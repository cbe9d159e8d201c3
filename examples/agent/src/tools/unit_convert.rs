use hermes_macros::hermes_tool;
use serde::{Deserialize, Serialize};

/// A unit `unit_convert` knows.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Meter,
    Kilometer,
    Mile,
    Foot,
    Kilogram,
    Pound,
    Celsius,
    Fahrenheit,
}

impl Unit {
    /// (dimension, factor to the base unit, offset), base = meter, kilogram, celsius.
    fn scale(self) -> (&'static str, f64, f64) {
        match self {
            Unit::Meter => ("length", 1.0, 0.0),
            Unit::Kilometer => ("length", 1000.0, 0.0),
            Unit::Mile => ("length", 1609.344, 0.0),
            Unit::Foot => ("length", 0.3048, 0.0),
            Unit::Kilogram => ("mass", 1.0, 0.0),
            Unit::Pound => ("mass", 0.453_592_37, 0.0),
            Unit::Celsius => ("temperature", 1.0, 0.0),
            Unit::Fahrenheit => ("temperature", 5.0 / 9.0, -32.0),
        }
    }
}

/// Converts a value between units of the same kind (length, mass or
/// temperature).
///
/// # Arguments
/// * `value` - The value to convert.
/// * `from` - Its unit.
/// * `to` - The unit wanted.
/// * `digits` - Decimal places of the answer.
#[hermes_tool(toolset = "units", emoji = "📏")]
pub async fn unit_convert(
    value: f64,
    from: Unit,
    to: Unit,
    #[schemars(range(min = 0, max = 12))]
    #[serde(default = "default_digits")]
    digits: u32,
) -> Result<serde_json::Value, String> {
    let (kind_from, f_from, o_from) = from.scale();
    let (kind_to, f_to, o_to) = to.scale();
    if kind_from != kind_to {
        return Err(format!("cannot convert {kind_from} to {kind_to}"));
    }
    let base = (value + o_from) * f_from;
    let out = base / f_to - o_to;
    let p = 10f64.powi(i32::try_from(digits).unwrap_or(12));
    Ok(serde_json::json!({ "value": (out * p).round() / p, "unit": to }))
}

fn default_digits() -> u32 {
    3
}
