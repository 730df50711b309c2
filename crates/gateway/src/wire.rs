//! FIX tag=value framing for the gateway's hot path: split a byte stream into checksummed
//! messages, read fields by tag, and write messages with BodyLength and CheckSum.
//!
//! Role: bytes <-> fields only. Session rules and business meaning live in `session` and
//! `exchange`.
//!
//! Never: allocate per field on decode (fields are ranges into the caller's buffer); panic on
//! any input; accept a message whose BodyLength or CheckSum is wrong (such a message is
//! reported as garbled and skipped, as the FIX session layer requires).

pub const SOH: u8 = 0x01;
/// Longest message accepted; a longer BodyLength is treated as garbage.
pub const MSG_LEN_MAX: usize = 8192;
/// Most fields accepted in one message.
pub const FIELDS_MAX: usize = 256;

/// One decoded frame.
#[derive(Debug)]
pub enum Frame {
    /// A complete message with a valid checksum: `len` bytes starting at the buffer's start.
    Message { len: usize },
    /// `len` bytes that are not a valid message (bad checksum, garbage); skip them.
    Garbled { len: usize, reason: &'static str },
}

/// Looks for the next frame at the start of `buf`. `None`: need more bytes.
pub fn next_frame(buf: &[u8]) -> Option<Frame> {
    if buf.is_empty() {
        return None;
    }
    if b"8=".starts_with(buf) {
        // A message cut by the read right after its first byte: not garbage, just incomplete.
        return None;
    }
    if !buf.starts_with(b"8=") {
        return Some(Frame::Garbled {
            len: resync(buf),
            reason: "no BeginString",
        });
    }
    let soh1 = match buf.iter().take(32).position(|&b| b == SOH) {
        Some(p) => p,
        None if buf.len() < 32 => return None,
        None => {
            return Some(Frame::Garbled {
                len: 2,
                reason: "BeginString too long",
            })
        }
    };
    let rest = &buf[soh1 + 1..];
    if rest.len() < 3 {
        return None;
    }
    if !rest.starts_with(b"9=") {
        return Some(Frame::Garbled {
            len: 2,
            reason: "BodyLength is not the second field",
        });
    }
    let soh2 = match rest.iter().take(12).position(|&b| b == SOH) {
        Some(p) => p,
        None if rest.len() < 12 => return None,
        None => {
            return Some(Frame::Garbled {
                len: 2,
                reason: "BodyLength too long",
            })
        }
    };
    let body_len = match parse_u64(&rest[2..soh2]) {
        Some(n) if (n as usize) <= MSG_LEN_MAX => n as usize,
        _ => {
            return Some(Frame::Garbled {
                len: 2,
                reason: "BodyLength is not a number in range",
            })
        }
    };
    let body_start = soh1 + 1 + soh2 + 1;
    let trailer = body_start + body_len;
    let total = trailer + 7; // "10=NNN\x01"
    if buf.len() < total {
        return None;
    }
    let t = &buf[trailer..total];
    if !(t.starts_with(b"10=") && t[6] == SOH) {
        // Resynchronise on the next message.
        return Some(Frame::Garbled {
            len: resync(buf),
            reason: "CheckSum not where BodyLength says",
        });
    }
    let sum = buf[..trailer].iter().fold(0u8, |a, &b| a.wrapping_add(b));
    match parse_u64(&t[3..6]) {
        Some(c) if c == sum as u64 => Some(Frame::Message { len: total }),
        _ => Some(Frame::Garbled {
            len: total,
            reason: "CheckSum mismatch",
        }),
    }
}

/// How much garbage to skip at the start of `buf` (at least 1 byte): up to the next "8=" that
/// follows a SOH, or to the end, but never the "8" of a trailing SOH "8" (the first byte of a
/// message whose rest has not been read yet).
fn resync(buf: &[u8]) -> usize {
    match find(buf, b"\x018=") {
        Some(p) => p + 1,
        None if buf.len() >= 2 && buf.ends_with(b"\x018") => buf.len() - 1,
        None => buf.len(),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

pub fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    let mut n: u64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + (c - b'0') as u64;
    }
    Some(n)
}

/// The fields of one message, as (tag, value range) into the message bytes.
pub struct Fields {
    tags: Vec<(u32, u32, u32)>,
    /// For each tag below `DIRECT`: 1 + the index in `tags` of its first occurrence (0: not
    /// in the message). Every field an order, cancel or replace is read by (and the standard
    /// header's) has such a tag, so `get` is one load instead of a scan of every field.
    first: [u16; Fields::DIRECT],
}

/// Why a message's fields could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum FieldsError {
    BadTag,
    TooMany,
    Empty,
}

impl Default for Fields {
    fn default() -> Self {
        Self::new()
    }
}

impl Fields {
    /// Tags below this are found through `first`.
    const DIRECT: usize = 64;

    pub fn new() -> Fields {
        Fields {
            tags: Vec::with_capacity(64),
            first: [0; Fields::DIRECT],
        }
    }

    /// Splits a complete message (as framed by `next_frame`) into fields.
    pub fn parse(&mut self, msg: &[u8]) -> Result<(), FieldsError> {
        self.tags.clear();
        self.first = [0; Fields::DIRECT];
        let mut i = 0;
        while i < msg.len() {
            // The tag's digits, read as they are scanned for the '=' (one pass; as
            // `parse_u64`: 1 to 19 digits).
            let start = i;
            let mut tag = 0u64;
            let eq = loop {
                match msg.get(i) {
                    Some(b'=') => break i,
                    Some(&c) if c.is_ascii_digit() && i - start < 19 => {
                        tag = tag * 10 + (c - b'0') as u64;
                        i += 1;
                    }
                    _ => return Err(FieldsError::BadTag),
                }
            };
            if eq == start || tag == 0 || tag > u32::MAX as u64 {
                return Err(FieldsError::BadTag);
            }
            let Some(end) = fix::find_soh(msg, eq + 1) else {
                return Err(FieldsError::BadTag);
            };
            if self.tags.len() == FIELDS_MAX {
                return Err(FieldsError::TooMany);
            }
            if let Some(f) = self.first.get_mut(tag as usize) {
                if *f == 0 {
                    *f = self.tags.len() as u16 + 1;
                }
            }
            self.tags.push((tag as u32, (eq + 1) as u32, end as u32));
            i = end + 1;
        }
        if self.tags.is_empty() {
            return Err(FieldsError::Empty);
        }
        Ok(())
    }

    /// First value of `tag`.
    pub fn get<'a>(&self, msg: &'a [u8], tag: u32) -> Option<&'a [u8]> {
        let found = match self.first.get(tag as usize) {
            Some(&0) => None,
            Some(&f) => self.tags.get(f as usize - 1),
            None => self.tags.iter().find(|t| t.0 == tag),
        };
        found.map(|&(_, s, e)| &msg[s as usize..e as usize])
    }

    pub fn get_str<'a>(&self, msg: &'a [u8], tag: u32) -> Option<&'a str> {
        self.get(msg, tag).and_then(|b| std::str::from_utf8(b).ok())
    }

    pub fn get_u64(&self, msg: &[u8], tag: u32) -> Option<u64> {
        self.get(msg, tag).and_then(parse_u64)
    }

    pub fn iter<'a>(&'a self, msg: &'a [u8]) -> impl Iterator<Item = (u32, &'a [u8])> + 'a {
        self.tags
            .iter()
            .map(move |&(t, s, e)| (t, &msg[s as usize..e as usize]))
    }
}

/// Writes one message: call `field`s for the body (from MsgType on), then `finish`.
pub struct MsgWriter {
    body: Vec<u8>,
}

impl Default for MsgWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl MsgWriter {
    pub fn new() -> MsgWriter {
        MsgWriter {
            body: Vec::with_capacity(512),
        }
    }
    pub fn clear(&mut self) {
        self.body.clear();
    }
    pub fn field(&mut self, tag: u32, value: &[u8]) -> &mut Self {
        push_u64(&mut self.body, tag as u64);
        self.body.push(b'=');
        self.body.extend_from_slice(value);
        self.body.push(SOH);
        self
    }
    /// Appends already-encoded fields (`tag=value<SOH>`...).
    pub fn raw(&mut self, fields: &[u8]) -> &mut Self {
        self.body.extend_from_slice(fields);
        self
    }
    pub fn str(&mut self, tag: u32, value: &str) -> &mut Self {
        self.field(tag, value.as_bytes())
    }
    pub fn u64(&mut self, tag: u32, value: u64) -> &mut Self {
        push_u64(&mut self.body, tag as u64);
        self.body.push(b'=');
        push_u64(&mut self.body, value);
        self.body.push(SOH);
        self
    }
    /// Appends `tag_eq` (a tag and its '=', e.g. `b"35="`: no number to format) and `value`.
    #[inline]
    pub fn field_at(&mut self, tag_eq: &[u8], value: &[u8]) -> &mut Self {
        self.body.extend_from_slice(tag_eq);
        self.body.extend_from_slice(value);
        self.body.push(SOH);
        self
    }
    /// `field_at` with a number.
    #[inline]
    pub fn u64_at(&mut self, tag_eq: &[u8], value: u64) -> &mut Self {
        self.body.extend_from_slice(tag_eq);
        push_u64(&mut self.body, value);
        self.body.push(SOH);
        self
    }
    /// Appends the complete message (BeginString, BodyLength, body, CheckSum) to `out`.
    pub fn finish(&self, begin_string: &str, out: &mut Vec<u8>) {
        self.finish_with(begin_string, &[], out)
    }
    /// `finish` of the fields written so far followed by `tail` (already-encoded fields),
    /// copied once, straight into `out`.
    pub fn finish_with(&self, begin_string: &str, tail: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(b"8=");
        out.extend_from_slice(begin_string.as_bytes());
        out.extend_from_slice(b"\x019=");
        push_u64(out, (self.body.len() + tail.len()) as u64);
        out.push(SOH);
        out.extend_from_slice(&self.body);
        out.extend_from_slice(tail);
        let sum = out[start..].iter().fold(0u8, |a, &b| a.wrapping_add(b));
        out.extend_from_slice(b"10=");
        out.push(b'0' + sum / 100);
        out.push(b'0' + (sum / 10) % 10);
        out.push(b'0' + sum % 10);
        out.push(SOH);
    }
}

/// "00" to "99": two digits per division when formatting an integer.
const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends `v` in decimal. The digits are written into a 20-byte array (two per division,
/// its length known first from `ilog10`) that is appended whole and cut back. Of the ways
/// measured (callgrind, a NewOrderSingle's parse, apply and reports: `tests/no_alloc.rs`),
/// this took the fewest instructions: one digit per division pushed byte by byte 3.5% more
/// in all, two per division pushed byte by byte 0.9% more, growing the vector first and
/// writing the digits in place 16% more (a `memset` call), and sharing `fix::encode`'s digit
/// loop (over a slice of the exact length) 1.5% more: hence a copy of that loop here. Numbers
/// below 10,000 (most of a message's) take a short form of one to four bytes without
/// `ilog10` or the array: 3.0% fewer in all (thirteenth session). Numbers below 10^8 (order
/// ids, ExecIDs and sequence numbers of a busy day) are a short form and four digits, split
/// by one division: 0.56% fewer in all on that test, whose numbers have at most five digits
/// (fourteenth session).
pub fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    if v < 10 {
        out.push(b'0' + v as u8);
        return;
    }
    #[inline(always)]
    fn pair(p: u64) -> [u8; 2] {
        let d = p as usize * 2;
        [DIGIT_PAIRS[d], DIGIT_PAIRS[d + 1]]
    }
    // One to four digits (`v` below 10,000) without counting them first. Inlined into both
    // uses (as a closure it was a call per number: 0.46% more instructions on the order path
    // of `tests/no_alloc.rs`, fifteenth session).
    #[inline(always)]
    fn short(out: &mut Vec<u8>, v: u64) {
        if v >= 1_000 {
            let (hi, lo) = (pair(v / 100), pair(v % 100));
            out.extend_from_slice(&[hi[0], hi[1], lo[0], lo[1]]);
        } else if v >= 100 {
            let lo = pair(v % 100);
            out.extend_from_slice(&[b'0' + (v / 100) as u8, lo[0], lo[1]]);
        } else if v >= 10 {
            out.extend_from_slice(&pair(v));
        } else {
            out.push(b'0' + v as u8);
        }
    }
    // Most numbers in a message are short (lengths, quantities, sequence numbers of a
    // session's first thousands).
    if v < 10_000 {
        short(out, v);
        return;
    }
    // Order ids, ExecIDs and sequence numbers of a busy day: five to eight digits, as a short
    // form and four digits, with one division by 10,000 instead of a loop.
    if v < 100_000_000 {
        let (hi, lo) = (v / 10_000, v % 10_000);
        short(out, hi);
        let (a, b) = (pair(lo / 100), pair(lo % 100));
        out.extend_from_slice(&[a[0], a[1], b[0], b[1]]);
        return;
    }
    let n = v.ilog10() as usize + 1;
    let mut tmp = [0u8; 20];
    let mut i = n;
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        tmp[i] = DIGIT_PAIRS[d];
        tmp[i + 1] = DIGIT_PAIRS[d + 1];
    }
    if v >= 10 {
        let d = v as usize * 2;
        tmp[0] = DIGIT_PAIRS[d];
        tmp[1] = DIGIT_PAIRS[d + 1];
    } else {
        tmp[0] = b'0' + v as u8;
    }
    let len = out.len();
    out.extend_from_slice(&tmp);
    out.truncate(len + n);
}

/// Appends `units` * 10^-`decimals` (`decimals` at most 19) without trailing zeros: `1234`
/// with 2 decimals is "12.34", `1230` "12.3", `1200` "12", `5` "0.05". Two decimals (a tick of
/// 0.01, the usual) are split off by a constant (a multiply, not a division) and written as one
/// digit pair; other counts take a digit loop.
pub fn push_scaled(out: &mut Vec<u8>, units: u64, decimals: u32) {
    if decimals == 2 {
        let (int, frac) = (units / 100, (units % 100) as usize);
        push_u64(out, int);
        if frac != 0 {
            let (a, b) = (DIGIT_PAIRS[frac * 2], DIGIT_PAIRS[frac * 2 + 1]);
            if b == b'0' {
                out.extend_from_slice(&[b'.', a]);
            } else {
                out.extend_from_slice(&[b'.', a, b]);
            }
        }
        return;
    }
    let decimals = decimals.min(19);
    let p = 10u64.pow(decimals);
    let (int, mut frac) = (units / p, units % p);
    push_u64(out, int);
    if frac == 0 {
        return;
    }
    let mut digits = decimals as usize;
    while frac % 10 == 0 {
        frac /= 10;
        digits -= 1;
    }
    let mut tmp = [b'0'; 20];
    tmp[0] = b'.';
    let mut i = digits + 1;
    while frac > 0 {
        i -= 1;
        tmp[i] = b'0' + (frac % 10) as u8;
        frac /= 10;
    }
    out.extend_from_slice(&tmp[..digits + 1]);
}

/// UTCTimestamp with milliseconds (`YYYYMMDD-HH:MM:SS.sss`) of `ts_ns` since the Unix epoch.
pub fn push_utc_timestamp(out: &mut Vec<u8>, ts_ns: u64) {
    out.extend_from_slice(&utc_timestamp(ts_ns));
}

/// Length of a UTCTimestamp with milliseconds (the year is clamped to 0..=9999).
pub const UTC_TIMESTAMP_LEN: usize = 21;

/// `push_utc_timestamp` into a fixed array (copied whole: no per-byte capacity checks).
///
/// Remembers the last one per thread, by millisecond (all the text shows): every message of
/// an event-loop iteration carries the batch's one timestamp, twice (SendingTime and
/// TransactTime), and the iterations of one millisecond share it, so nearly every call is a
/// repeat of the one before.
pub fn utc_timestamp(ts_ns: u64) -> [u8; UTC_TIMESTAMP_LEN] {
    use std::cell::Cell;
    thread_local! {
        // The millisecond last formatted (`u64::MAX`: none yet) and its text, in two cells
        // so that a repeat reads one word to compare and copies only the text.
        static LAST_MS: Cell<u64> = const { Cell::new(u64::MAX) };
        static LAST_TEXT: Cell<[u8; UTC_TIMESTAMP_LEN]> =
            const { Cell::new([0; UTC_TIMESTAMP_LEN]) };
    }
    let ms = ts_ns / 1_000_000;
    if LAST_MS.get() == ms {
        return LAST_TEXT.get();
    }
    let text = format_utc_timestamp(ts_ns);
    LAST_MS.set(ms);
    LAST_TEXT.set(text);
    text
}

fn format_utc_timestamp(ts_ns: u64) -> [u8; UTC_TIMESTAMP_LEN] {
    let secs = ts_ns / 1_000_000_000;
    let ms = (ts_ns / 1_000_000) % 1000;
    let days = (secs / 86_400) as i64;
    let sod = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let mut y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    if m <= 2 {
        y += 1;
    }
    let mut t = *b"00000000-00:00:00.000";
    let two = |t: &mut [u8; UTC_TIMESTAMP_LEN], at: usize, v: u64| {
        t[at] = b'0' + (v / 10) as u8;
        t[at + 1] = b'0' + (v % 10) as u8;
    };
    let y = y.clamp(0, 9999) as u64;
    two(&mut t, 0, y / 100);
    two(&mut t, 2, y % 100);
    two(&mut t, 4, m as u64);
    two(&mut t, 6, d as u64);
    two(&mut t, 9, sod / 3600);
    two(&mut t, 12, (sod / 60) % 60);
    two(&mut t, 15, sod % 60);
    t[18] = b'0' + (ms / 100) as u8;
    two(&mut t, 19, ms % 100);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `push_scaled` against the same number written by the standard library (the whole part,
    /// then the fraction zero-padded to `decimals` digits with its trailing zeros cut), for 0
    /// to 19 decimals: every value below 100,000 with 2 decimals (the fast path), and edges and
    /// pseudo-random values with every count.
    #[test]
    fn scaled_units_format_as_the_standard_library_does() {
        fn reference(units: u64, decimals: u32) -> String {
            let p = 10u128.pow(decimals);
            let (int, frac) = (units as u128 / p, units as u128 % p);
            let mut s = int.to_string();
            if frac != 0 {
                let f = format!("{frac:0width$}", width = decimals as usize);
                s.push('.');
                s.push_str(f.trim_end_matches('0'));
            }
            s
        }
        let mut b = b"x".to_vec();
        let mut check = |units: u64, decimals: u32| {
            b.truncate(1);
            push_scaled(&mut b, units, decimals);
            assert_eq!(
                std::str::from_utf8(&b[1..]).unwrap(),
                reference(units, decimals),
                "{units} with {decimals} decimals"
            );
        };
        for units in 0..100_000u64 {
            check(units, 2);
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for decimals in 0..=19 {
            for units in [
                0,
                1,
                9,
                10,
                99,
                100,
                101,
                1_000,
                12_300,
                u64::MAX - 1,
                u64::MAX,
            ] {
                check(units, decimals);
            }
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Short and long numbers, many with trailing zeros.
                let units = ((x >> (x % 60)) / 10u64.pow((x % 5) as u32))
                    .wrapping_mul(10u64.pow((x % 4) as u32));
                check(units, decimals);
            }
        }
    }

    #[test]
    fn integers_and_timestamps_format_exactly() {
        for (v, text) in [
            (0u64, "0"),
            (9, "9"),
            (10, "10"),
            (1234567, "1234567"),
            (u64::MAX, "18446744073709551615"),
        ] {
            let mut b = b"x".to_vec();
            push_u64(&mut b, v);
            assert_eq!(&b[1..], text.as_bytes());
        }
        // Every number of up to five digits (the short forms), against the standard library.
        let mut b = Vec::new();
        for v in 0..100_000u64 {
            b.clear();
            push_u64(&mut b, v);
            assert_eq!(b, v.to_string().as_bytes(), "{v}");
        }
        // Five to eight digits (a short form and four digits): every 10,000 + k * 7 and random
        // values up to 10^8, against the standard library.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for k in 0..300_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for v in [10_000 + k * 7, 10_000 + x % 99_990_000, 99_999_999 - k] {
                b.clear();
                push_u64(&mut b, v);
                assert_eq!(b, v.to_string().as_bytes(), "{v}");
            }
        }
        // Every digit count, and both sides of each power of ten, against the standard library.
        let mut p = 1u64;
        loop {
            for v in [
                p - 1,
                p,
                p + 1,
                p.saturating_mul(7) / 3,
                p.wrapping_mul(10) - 1,
            ] {
                let mut b = b"y".to_vec();
                push_u64(&mut b, v);
                assert_eq!(&b[1..], v.to_string().as_bytes(), "{v}");
            }
            match p.checked_mul(10) {
                Some(q) => p = q,
                None => break,
            }
        }
        for (ns, text) in [
            (0u64, "19700101-00:00:00.000"),
            (1_800_000_000_123_456_789, "20270115-08:00:00.123"),
            (1_709_210_096_789_000_000, "20240229-12:34:56.789"),
            (951_782_400_500_000_000, "20000229-00:00:00.500"),
        ] {
            let mut b = Vec::new();
            push_utc_timestamp(&mut b, ns);
            assert_eq!(b, text.as_bytes());
            assert_eq!(&format_utc_timestamp(ns), text.as_bytes());
        }
    }

    /// The remembered timestamp is only ever the one asked for: the first call of a thread
    /// (0 and `u64::MAX`, each first on a fresh thread), repeats, neighbours a nanosecond
    /// apart, and the two ends of a millisecond.
    #[test]
    fn a_remembered_timestamp_is_the_one_asked_for() {
        for first in [0, u64::MAX] {
            let got = std::thread::spawn(move || utc_timestamp(first))
                .join()
                .unwrap();
            assert_eq!(got, format_utc_timestamp(first));
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut prev = 0u64;
        for i in 0..20_000u64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // It is remembered by millisecond: the last nanosecond of the previous one's
            // millisecond and the first of the next one too.
            let ms_start = prev / 1_000_000 * 1_000_000;
            let ns = match i % 7 {
                0 => prev,
                1 => prev.wrapping_add(1),
                2 => u64::MAX,
                3 => ms_start.saturating_add(999_999),
                4 => ms_start.saturating_add(1_000_000),
                _ => seed % 4_000_000_000_000_000_000,
            };
            assert_eq!(utc_timestamp(ns), format_utc_timestamp(ns), "{ns}");
            prev = ns;
        }
    }

    fn msg(body: &str) -> Vec<u8> {
        let mut w = MsgWriter::new();
        for f in body.split('|').filter(|f| !f.is_empty()) {
            let (t, v) = f.split_once('=').unwrap();
            w.str(t.parse().unwrap(), v);
        }
        let mut out = Vec::new();
        w.finish("FIX.4.4", &mut out);
        out
    }

    #[test]
    fn frames_roundtrip_and_checksum() {
        let m = msg("35=0|34=2|49=A|56=B|");
        match next_frame(&m) {
            Some(Frame::Message { len }) => assert_eq!(len, m.len()),
            other => panic!("{other:?}"),
        }
        assert!(next_frame(&m[..m.len() - 1]).is_none());
        let mut bad = m.clone();
        let n = bad.len();
        bad[n - 3] = if bad[n - 3] == b'9' { b'0' } else { b'9' };
        assert!(matches!(next_frame(&bad), Some(Frame::Garbled { .. })));
        let mut f = Fields::new();
        f.parse(&m).unwrap();
        assert_eq!(f.get_str(&m, 35), Some("0"));
        assert_eq!(f.get_u64(&m, 34), Some(2));
    }

    /// `get` finds the first occurrence of a tag, below and above the directly indexed ones,
    /// says "absent" for a tag the message lacks, and forgets the previous message's fields.
    #[test]
    fn fields_find_the_first_occurrence_of_any_tag() {
        let m = b"35=D\x0111=a\x0163=x\x0164=y\x0111=b\x01448=p\x01448=q\x01".to_vec();
        let mut f = Fields::new();
        f.parse(&m).unwrap();
        assert_eq!(f.get(&m, 11), Some(&b"a"[..]));
        assert_eq!(f.get(&m, 63), Some(&b"x"[..]));
        assert_eq!(f.get(&m, 64), Some(&b"y"[..]));
        assert_eq!(f.get(&m, 448), Some(&b"p"[..]));
        assert_eq!(f.get(&m, 35), Some(&b"D"[..]));
        for absent in [1, 41, 62, 65, 449, u32::MAX] {
            assert_eq!(f.get(&m, absent), None, "{absent}");
        }
        let n = b"35=F\x0141=c\x01".to_vec();
        f.parse(&n).unwrap();
        assert_eq!(f.get(&n, 41), Some(&b"c"[..]));
        assert_eq!(
            f.get(&n, 11),
            None,
            "the previous message's ClOrdID is gone"
        );
        assert_eq!(f.get(&n, 448), None);
        assert!(f.parse(b"35=D\x0111=z\x01x=1\x01").is_err());
        let bad = b"35=D\x0111=z\x01x=1\x01";
        // A message that failed to parse keeps only what was read before the error.
        assert_eq!(f.get(bad, 41), None);
    }

    /// Regression: a read that ended right after a message's first byte ("8") dropped that
    /// byte as garbage, so the message was lost whole (the session then saw a sequence gap and
    /// every request up to the client's gap fill went unanswered).
    #[test]
    fn a_message_cut_anywhere_by_the_reads_is_kept() {
        let mut stream = msg("35=0|34=2|49=A|56=B|");
        let second = msg("35=D|34=3|49=A|56=B|11=X|");
        stream.extend_from_slice(&second);
        let mut garbled = b"junk\x01".to_vec();
        garbled.extend_from_slice(&stream);
        for input in [&stream, &garbled] {
            for cut in 0..=input.len() {
                let mut pending: Vec<u8> = Vec::new();
                let mut messages = Vec::new();
                for chunk in [&input[..cut], &input[cut..]] {
                    pending.extend_from_slice(chunk);
                    let mut pos = 0;
                    while let Some(frame) = next_frame(&pending[pos..]) {
                        match frame {
                            Frame::Message { len } => {
                                messages.push(pending[pos..pos + len].to_vec());
                                pos += len;
                            }
                            Frame::Garbled { len, .. } => pos += len,
                        }
                    }
                    pending.drain(..pos);
                }
                assert_eq!(messages.len(), 2, "cut at {cut} of {}", input.len());
                assert_eq!(messages[1], second, "cut at {cut}");
                assert!(pending.is_empty(), "cut at {cut}");
            }
        }
        assert!(next_frame(b"8").is_none());
        // Garbage that ends with the start of a message keeps that start.
        assert!(matches!(
            next_frame(b"junk\x018"),
            Some(Frame::Garbled { len: 5, .. })
        ));
    }

    #[test]
    fn garbage_is_skipped_not_fatal() {
        let mut buf = b"garbage\x01".to_vec();
        buf.extend_from_slice(&msg("35=0|"));
        let Some(Frame::Garbled { len, .. }) = next_frame(&buf) else {
            panic!()
        };
        assert!(matches!(
            next_frame(&buf[len..]),
            Some(Frame::Message { .. })
        ));
        assert!(matches!(
            next_frame(b"8=FIX.4.4\x019=abc\x01"),
            Some(Frame::Garbled { .. })
        ));
        let mut f = Fields::new();
        assert!(f.parse(b"35=0\x01x=1\x01").is_err());
    }

    #[test]
    fn timestamps() {
        let mut out = Vec::new();
        push_utc_timestamp(&mut out, 1_700_000_000_123_000_000);
        assert_eq!(std::str::from_utf8(&out).unwrap(), "20231114-22:13:20.123");
    }
}
