//! `trading_day_end` and `trading_day_start`: when DAY orders expire and the market closes, and
//! when it opens again.
//!
//! Role: parses the times of day (`HH:MM:SS` UTC, or `off` for the end) into ns after midnight.
//!
//! Never: reads the clock (the exchange compares them with its inputs' timestamps).
//!
//! Invariants: a start only with an end, and never equal to it.

use super::{err, ConfigError};

/// The default end of the trading day: 21:00:00 UTC, in ns after midnight.
pub const TRADING_DAY_END_DEFAULT: u64 = 21 * 3600 * 1_000_000_000;

/// `HH:MM:SS` (UTC) as ns after midnight (`key` names the setting in the error).
fn parse_time_of_day(key: &str, s: &str) -> Result<u64, ConfigError> {
    let bad = || ConfigError(format!("{key} {s:?} is not a time of day HH:MM:SS (UTC)"));
    let parts: Vec<&str> = s.split(':').collect();
    let [h, m, sec] = parts[..] else {
        return Err(bad());
    };
    let num = |p: &str, max: u64| -> Result<u64, ConfigError> {
        match p.parse::<u64>() {
            Ok(v) if p.len() == 2 && v <= max => Ok(v),
            _ => Err(bad()),
        }
    };
    let secs = num(h, 23)? * 3600 + num(m, 59)? * 60 + num(sec, 59)?;
    Ok(secs * 1_000_000_000)
}

/// `trading_day_end` and `trading_day_start` (`HH:MM:SS` UTC, or `off` for the end), checked:
/// the end of the day and the next day's start, in ns after midnight.
pub(super) fn trading_day(
    end: Option<&str>,
    start: Option<&str>,
) -> Result<(Option<u64>, Option<u64>), ConfigError> {
    let trading_day_end_ns = match end {
        None => Some(TRADING_DAY_END_DEFAULT),
        Some("off") => None,
        Some(s) => Some(parse_time_of_day("trading_day_end", s)?),
    };
    let trading_day_start_ns = match start {
        None => None,
        Some(s) => {
            let start = parse_time_of_day("trading_day_start", s)?;
            match trading_day_end_ns {
                None => {
                    return err(
                        "trading_day_start needs an end of the day (trading_day_end is off)",
                    )
                }
                Some(end) if end == start => {
                    return err(format!(
                        "trading_day_start {s:?} equals trading_day_end: the market would \
                         never open; leave trading_day_start out to start the next day at once"
                    ))
                }
                Some(_) => Some(start),
            }
        }
    };
    Ok((trading_day_end_ns, trading_day_start_ns))
}
