//! FIX `UTCTimestamp` text (`YYYYMMDD-HH:MM:SS[.sss|.ssssss|.sssssssss]`) to and from
//! nanoseconds since the Unix epoch.
//!
//! Role: the only place that knows the calendar. Time is always an input (`epoch_ns`), never read
//! from a clock here.
//!
//! Never: reads a clock, allocates, uses floats, panics on any input.
//!
//! Invariants: `parse_utc_timestamp(write_utc_timestamp(t, p)) == t` truncated to precision `p`,
//! for every `t` from 1970 to 2554 (the `u64` nanosecond range).

/// Fractional-second digits written in a `UTCTimestamp`. FIX 4.2 and 4.4 define seconds and
/// milliseconds; FIX 5.0 adds micro and nanoseconds (most engines accept them on any version).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TimePrecision {
    Seconds,
    #[default]
    Millis,
    Micros,
    Nanos,
}

const NS_PER_SEC: u64 = 1_000_000_000;
const SECS_PER_DAY: u64 = 86_400;

/// (year, month 1..=12, day 1..=31) of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Days since 1970-01-01 of a civil date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Longest `UTCTimestamp` text: `YYYYMMDD-HH:MM:SS.sssssssss`.
pub const UTC_TIMESTAMP_LEN_MAX: usize = 27;
/// Length of the date part `YYYYMMDD-`.
pub const DATE_LEN: usize = 9;
pub(crate) const NS_PER_DAY: u64 = NS_PER_SEC * SECS_PER_DAY;

#[inline]
fn put2(out: &mut [u8], at: usize, v: u32) {
    out[at] = b'0' + (v / 10 % 10) as u8;
    out[at + 1] = b'0' + (v % 10) as u8;
}

/// `YYYYMMDD-` of day `days` since the epoch.
pub(crate) fn format_date(days: u64, out: &mut [u8; DATE_LEN]) {
    let (y, mo, d) = civil_from_days(days as i64);
    let y = y as u32;
    put2(out, 0, y / 100);
    put2(out, 2, y % 100);
    put2(out, 4, mo);
    put2(out, 6, d);
    out[8] = b'-';
}

/// `HH:MM:SS[.fff...]` of the time of day of `epoch_ns`, written at `out[DATE_LEN..]`.
/// Returns the total length (date part included).
#[inline]
pub(crate) fn format_time_of_day(
    epoch_ns: u64,
    precision: TimePrecision,
    out: &mut [u8; UTC_TIMESTAMP_LEN_MAX],
) -> usize {
    let ns_of_day = epoch_ns % NS_PER_DAY;
    let sod = (ns_of_day / NS_PER_SEC) as u32;
    let frac_ns = (ns_of_day % NS_PER_SEC) as u32;
    put2(out, 9, sod / 3600);
    out[11] = b':';
    put2(out, 12, sod / 60 % 60);
    out[14] = b':';
    put2(out, 15, sod % 60);
    let (digits, mut v) = match precision {
        TimePrecision::Seconds => return 17,
        TimePrecision::Millis => (3, frac_ns / 1_000_000),
        TimePrecision::Micros => (6, frac_ns / 1_000),
        TimePrecision::Nanos => (9, frac_ns),
    };
    out[17] = b'.';
    for i in (18..18 + digits).rev() {
        out[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    18 + digits
}

/// Writes `epoch_ns` as a `UTCTimestamp` into `out`; returns its length.
pub fn format_utc_timestamp(
    epoch_ns: u64,
    precision: TimePrecision,
    out: &mut [u8; UTC_TIMESTAMP_LEN_MAX],
) -> usize {
    let mut date = [0u8; DATE_LEN];
    format_date(epoch_ns / NS_PER_DAY, &mut date);
    out[..DATE_LEN].copy_from_slice(&date);
    format_time_of_day(epoch_ns, precision, out)
}

/// Appends `epoch_ns` as a `UTCTimestamp` with the given precision (truncated, not rounded).
pub fn write_utc_timestamp(out: &mut Vec<u8>, epoch_ns: u64, precision: TimePrecision) {
    let mut buf = [0u8; UTC_TIMESTAMP_LEN_MAX];
    let n = format_utc_timestamp(epoch_ns, precision, &mut buf);
    out.extend_from_slice(&buf[..n]);
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |a, c| a * 10 + (c - b'0') as u32))
}

/// Parses a `UTCTimestamp` with 0, 3, 6 or 9 fractional digits into nanoseconds since the
/// epoch. `None` if malformed, out of range (before 1970) or not a real date.
pub fn parse_utc_timestamp(b: &[u8]) -> Option<u64> {
    if b.len() < 17 || b[8] != b'-' || b[11] != b':' || b[14] != b':' {
        return None;
    }
    let y = digits(&b[0..4])?;
    let mo = digits(&b[4..6])?;
    let d = digits(&b[6..8])?;
    let h = digits(&b[9..11])?;
    let mi = digits(&b[12..14])?;
    let s = digits(&b[15..17])?;
    if !(1..=12).contains(&mo) || d == 0 || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(y as i64, mo, d);
    // Reject 31 February and friends: the day must map back to the same civil date.
    if civil_from_days(days) != (y as i64, mo, d) || days < 0 {
        return None;
    }
    let frac_ns = match b.len() {
        17 => 0,
        21 | 24 | 27 if b[17] == b'.' => {
            let f = &b[18..];
            digits(f)? * 10u32.pow(9 - f.len() as u32)
        }
        _ => return None,
    };
    let secs = days as u64 * SECS_PER_DAY + (h * 3600 + mi * 60 + s) as u64;
    secs.checked_mul(NS_PER_SEC)?.checked_add(frac_ns as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(ns: u64, p: TimePrecision) -> String {
        let mut v = Vec::new();
        write_utc_timestamp(&mut v, ns, p);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn known_instants() {
        assert_eq!(fmt(0, TimePrecision::Millis), "19700101-00:00:00.000");
        // 2000-08-09 20:20:50 UTC, the FIXEdge sample's SendingTime.
        let t = 965_852_450 * NS_PER_SEC + 123_456_789;
        assert_eq!(fmt(t, TimePrecision::Seconds), "20000809-20:20:50");
        assert_eq!(fmt(t, TimePrecision::Millis), "20000809-20:20:50.123");
        assert_eq!(fmt(t, TimePrecision::Micros), "20000809-20:20:50.123456");
        assert_eq!(fmt(t, TimePrecision::Nanos), "20000809-20:20:50.123456789");
        // A leap day.
        let leap = days_from_civil(2024, 2, 29) as u64 * SECS_PER_DAY * NS_PER_SEC;
        assert_eq!(fmt(leap, TimePrecision::Seconds), "20240229-00:00:00");
    }

    #[test]
    fn parse_round_trip() {
        let mut t: u64 = 1;
        for _ in 0..2000 {
            t = t
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407)
                >> 2;
            let t = t % (i64::MAX as u64);
            for (p, unit) in [
                (TimePrecision::Seconds, NS_PER_SEC),
                (TimePrecision::Millis, 1_000_000),
                (TimePrecision::Micros, 1_000),
                (TimePrecision::Nanos, 1),
            ] {
                let s = fmt(t, p);
                assert_eq!(
                    parse_utc_timestamp(s.as_bytes()),
                    Some(t / unit * unit),
                    "{s}"
                );
            }
        }
    }

    #[test]
    fn parse_rejects_garbage() {
        for bad in [
            "",
            "20000809-20:20",
            "20000809 20:20:50",
            "20001309-20:20:50",
            "20000230-20:20:50",
            "20000809-24:00:00",
            "20000809-20:20:50.12",
            "20000809-20:20:50.1234",
            "2000080a-20:20:50",
            "19691231-23:59:59",
        ] {
            assert_eq!(parse_utc_timestamp(bad.as_bytes()), None, "{bad}");
        }
    }
}
