//! Numbers with units: parsing command-line values (`10k`, `2m`, `500ms`) and
//! formatting them the way wrk2 prints them (`1.03ms`, `5.27k`, `7.99MB`).

struct Units {
    scale: f64,
    base: &'static str,
    units: &'static [&'static str],
}

const TIME_US: Units = Units { scale: 1000.0, base: "us", units: &["ms", "s"] };
const TIME_S: Units = Units { scale: 60.0, base: "s", units: &["m", "h"] };
const BINARY: Units = Units { scale: 1024.0, base: "", units: &["K", "M", "G", "T", "P"] };
const METRIC: Units = Units { scale: 1000.0, base: "", units: &["k", "M", "G", "T", "P"] };

/// wrk's unit selection: step up while the amount is at least 85% of the next unit,
/// never onto the last unit of the list.
fn format_units(n: f64, m: &Units, precision: usize) -> String {
    let mut amount = n;
    let mut unit = m.base;
    let threshold = m.scale * 0.85;
    let mut i = 0;
    while i + 1 < m.units.len() && amount >= threshold {
        amount /= m.scale;
        unit = m.units[i];
        i += 1;
    }
    format!("{amount:.precision$}{unit}")
}

/// Microseconds as wrk prints latencies: `25.00us`, `1.03ms`, `1.00s`, `2.50m`.
pub fn format_time_us(n: f64) -> String {
    if n >= 1_000_000.0 { format_units(n / 1_000_000.0, &TIME_S, 2) } else { format_units(n, &TIME_US, 2) }
}

/// Seconds as in "Running 12s test": `12s`, `5m`.
pub fn format_time_s(n: f64) -> String {
    format_units(n, &TIME_S, 0)
}

/// Counts: `5.27k`, `490.60`.
pub fn format_metric(n: f64) -> String {
    format_units(n, &METRIC, 2)
}

/// Byte counts (without the trailing `B`): `7.99M`, `681.62K`.
pub fn format_binary(n: f64) -> String {
    format_units(n, &BINARY, 2)
}

/// wrk's column padding: a formatted value right-aligned in `width`, where a value
/// without a (full two-letter) unit is followed by the spaces the unit would take.
pub fn pad_units(msg: &str, width: usize) -> String {
    let bytes = msg.as_bytes();
    let mut pad = 2usize;
    if bytes.last().is_some_and(|c| c.is_ascii_alphabetic()) {
        pad -= 1;
    }
    if bytes.len() >= 2 && bytes[bytes.len() - 2].is_ascii_alphabetic() {
        pad -= 1;
    }
    let width = width.saturating_sub(pad);
    // C's "%*.*s" also truncates to the width.
    let shown: String = msg.chars().take(width).collect();
    format!("{shown:>width$}{}", &"  "[..pad])
}

/// Parses a duration: a number with an optional unit `us`, `ms`, `s`, `m`, `h`
/// (a bare number is seconds, as in wrk). Returns microseconds.
pub fn parse_duration_us(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!("'{s}' is not a duration (expected e.g. 10s, 500ms, 2m, 1h)"));
    }
    let value: f64 = num.parse().map_err(|_| format!("'{s}' is not a duration (expected e.g. 10s, 500ms, 2m, 1h)"))?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "us" => 1.0,
        "ms" => 1e3,
        "" | "s" => 1e6,
        "m" => 60e6,
        "h" => 3600e6,
        _ => return Err(format!("'{s}' has an unknown time unit '{unit}' (use us, ms, s, m or h)")),
    };
    let us = value * scale;
    if !us.is_finite() || us > 1e15 {
        return Err(format!("'{s}' is too long"));
    }
    Ok(us.round() as u64)
}

/// Parses a count or rate with an optional SI suffix `k`, `M`, `G` (case-insensitive,
/// like wrk): `10k` → 10000, `1.5M` → 1500000.
pub fn parse_metric(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
    let v: f64 = num.parse().map_err(|_| format!("'{s}' is not a number (expected e.g. 100, 10k, 1.5M)"))?;
    if !v.is_finite() {
        return Err(format!("'{s}' is not a finite number"));
    }
    Ok(v * mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_formats_match_wrk2_fixtures() {
        assert_eq!(format_time_us(752.68), "752.68us");
        assert_eq!(format_time_us(1031.0), "1.03ms");
        assert_eq!(format_time_us(1_002_495.0), "1.00s");
        assert_eq!(format_time_us(2_873_344.0), "2.87s");
        assert_eq!(format_time_us(12_000_000.0), "12.00s");
        assert_eq!(format_time_us(300_000_000.0), "5.00m");
        assert_eq!(format_time_s(12.0), "12s");
        assert_eq!(format_time_s(300.0), "5m");
    }

    #[test]
    fn metric_and_binary() {
        assert_eq!(format_metric(5270.0), "5.27k");
        assert_eq!(format_metric(490.6), "490.60");
        assert_eq!(format_binary(7.99 * 1024.0 * 1024.0), "7.99M");
        assert_eq!(format_binary(681.62 * 1024.0), "681.62K");
    }

    #[test]
    fn padding_like_print_units() {
        assert_eq!(pad_units("1.03ms", 8), "  1.03ms");
        assert_eq!(pad_units("606.04us", 10), "  606.04us");
        assert_eq!(pad_units("1.00s", 10), "    1.00s ");
        assert_eq!(pad_units("490.60", 10), "  490.60  ");
        assert_eq!(pad_units("5.27k", 8), "  5.27k ");
    }

    #[test]
    fn parse_durations_and_rates() {
        assert_eq!(parse_duration_us("12s").unwrap(), 12_000_000);
        assert_eq!(parse_duration_us("12").unwrap(), 12_000_000);
        assert_eq!(parse_duration_us("5m").unwrap(), 300_000_000);
        assert_eq!(parse_duration_us("500ms").unwrap(), 500_000);
        assert_eq!(parse_duration_us("1.5s").unwrap(), 1_500_000);
        assert!(parse_duration_us("ten").is_err());
        assert!(parse_duration_us("10x").is_err());
        assert!(parse_duration_us("").is_err());
        assert_eq!(parse_metric("10k").unwrap(), 10_000.0);
        assert_eq!(parse_metric("2000").unwrap(), 2000.0);
        assert_eq!(parse_metric("1.5M").unwrap(), 1_500_000.0);
        assert!(parse_metric("fast").is_err());
    }
}
