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

#[inline]
fn digits(b: &[u8]) -> Option<u32> {
    let mut n = 0u32;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n * 10 + d as u32;
    }
    (!b.is_empty()).then_some(n)
}

/// Days in month `m` (1-12) of year `y` (proleptic Gregorian).
#[inline]
fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        2 if y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The eight bytes at `b[at..]` as a little-endian word (`b` has them).
#[inline(always)]
fn word(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Whether every byte of `w` selected by `mask` (0xFF per byte) is an ASCII digit.
#[inline(always)]
fn all_digits(w: u64, mask: u64) -> bool {
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // A byte below '0' borrows into its high bit; one above '9' carries into it.
    let x = w.wrapping_sub(0x3030_3030_3030_3030 & mask) & mask;
    let y = (w & mask).wrapping_add(0x4646_4646_4646_4646 & mask);
    (x | y | w) & HIGHS & mask == 0
}

/// The four two-digit numbers of eight ASCII digits, in order, as 16-bit lanes.
#[inline(always)]
fn pairs(w: u64) -> u64 {
    ((w & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(10 * 256 + 1) >> 8) & 0x00FF_00FF_00FF_00FF
}

/// Parses a `UTCTimestamp` with 0, 3, 6 or 9 fractional digits into nanoseconds since the
/// epoch. `None` if malformed, out of range (before 1970) or not a real date. Every inbound
/// message has one (SendingTime), so it reads `YYYYMMDD` and `HH:MM:SS` a word at a time.
pub fn parse_utc_timestamp(b: &[u8]) -> Option<u64> {
    if b.len() < 17 || b[8] != b'-' {
        return None;
    }
    let (date, time) = (word(b, 0), word(b, 9));
    // `HH:MM:SS`: colons at bytes 2 and 5, digits elsewhere.
    const COLONS: u64 = 0x0000_3A00_003A_0000;
    const TIME_DIGITS: u64 = 0xFFFF_00FF_FF00_FFFF;
    if time & !TIME_DIGITS != COLONS
        || !all_digits(date, u64::MAX)
        || !all_digits(time, TIME_DIGITS)
    {
        return None;
    }
    let lane = |w: u64, i: u32| ((w >> (16 * i)) & 0xFF) as u32;
    let dp = pairs(date);
    let (y, mo, d) = (lane(dp, 0) * 100 + lane(dp, 1), lane(dp, 2), lane(dp, 3));
    // `HH:MM:SS` with the colons as zeros: pairs at bytes 0, 3 (straddling) and 6.
    let digit = |i: u32| ((time >> (8 * i)) & 0x0F) as u32;
    let (h, mi, s) = (
        digit(0) * 10 + digit(1),
        digit(3) * 10 + digit(4),
        digit(6) * 10 + digit(7),
    );
    // No 31 February and friends; 1970 at the earliest.
    if !(1..=12).contains(&mo)
        || d == 0
        || d > days_in_month(y, mo)
        || h > 23
        || mi > 59
        || s > 60
        || y < 1970
    {
        return None;
    }
    let frac_ns = match b.len() {
        17 => 0,
        21 | 24 | 27 if b[17] == b'.' => {
            const SCALE: [u32; 4] = [1_000_000, 1_000, 1, 0];
            let f = &b[18..];
            digits(f)? * SCALE[f.len() / 3 - 1]
        }
        _ => return None,
    };
    let days = days_from_civil(y as i64, mo, d) as u64;
    let secs = days * SECS_PER_DAY + (h * 3600 + mi * 60 + s) as u64;
    // Past 2554 the nanoseconds overflow: out of range.
    secs.checked_mul(NS_PER_SEC)?.checked_add(frac_ns as u64)
}

#[cfg(test)]
mod tests;
