//! Encoder: writes one message (header, body, trailer) into a reusable buffer, computing
//! BodyLength and CheckSum, plus integer, decimal and timestamp field formatting.
//!
//! Role: the only place outbound FIX bytes are produced. The buffer keeps a gap in front of
//! MsgType; `finish` writes `8=..|9=len|` right-aligned into that gap, so nothing is moved or
//! copied and BodyLength needs no padding.
//!
//! Never: allocates once the buffer has grown to the largest message (reuse one `Encoder`),
//! uses floats, or writes a field the caller did not ask for (except 8, 9, 10).
//!
//! Invariants: `finish` returns exactly one complete message whose BodyLength and CheckSum are
//! correct; the decoder accepts everything the encoder writes.

use crate::decimal::Decimal;
use crate::decimal::DECIMAL_LEN_MAX;
use crate::decode::{checksum, SOH};
use crate::tags;
use crate::time::{
    format_date, format_time_of_day, TimePrecision, DATE_LEN, NS_PER_DAY, UTC_TIMESTAMP_LEN_MAX,
};
use crate::FixVersion;

/// Room in front of the body for `8=<BeginString>|9=<len>|`.
const GAP: usize = 32;

/// The standard header fields after MsgType, all as inputs (time is never read here).
#[derive(Clone, Copy, Debug)]
pub struct Header<'a> {
    pub sender_comp_id: &'a [u8],
    pub target_comp_id: &'a [u8],
    pub msg_seq_num: u64,
    pub sending_time_ns: u64,
    /// PossDupFlag(43)=Y, for a resent message.
    pub poss_dup: bool,
    /// OrigSendingTime(122), for a resent message.
    pub orig_sending_time: Option<&'a [u8]>,
    pub time_precision: TimePrecision,
}

/// Builds one message at a time in a buffer that is reused across messages.
///
/// The buffer is a zero-filled area of fixed size with a write cursor, so fixed-size pieces
/// (timestamps, numbers) are written in place without a `memcpy` call; it doubles only when a
/// message does not fit (never in steady state).
#[derive(Debug)]
pub struct Encoder {
    buf: Vec<u8>,
    len: usize,
    start: usize,
    /// `YYYYMMDD-` of `cached_day` (days since the epoch): the date changes once a day.
    cached_day: u64,
    cached_date: [u8; DATE_LEN],
}

impl Default for Encoder {
    fn default() -> Encoder {
        Encoder::with_capacity(1024)
    }
}

impl Encoder {
    pub fn with_capacity(capacity: usize) -> Encoder {
        let mut cached_date = [0u8; DATE_LEN];
        format_date(0, &mut cached_date);
        Encoder {
            buf: vec![0; capacity.max(GAP + 128)],
            len: GAP,
            start: 0,
            cached_day: 0,
            cached_date,
        }
    }

    /// Makes room for `n` more bytes (plus slack for fixed-size writes).
    #[inline]
    fn reserve(&mut self, n: usize) {
        let need = self.len + n + SLACK;
        if need > self.buf.len() {
            self.grow(need);
        }
    }

    #[cold]
    fn grow(&mut self, need: usize) {
        let size = need.max(self.buf.len() * 2);
        self.buf.resize(size, 0);
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.reserve(bytes.len());
        let end = self.len + bytes.len();
        self.buf[self.len..end].copy_from_slice(bytes);
        self.len = end;
    }

    #[inline]
    fn put_byte(&mut self, b: u8) {
        self.reserve(1);
        self.buf[self.len] = b;
        self.len += 1;
    }

    /// Decimal digits of `v`, written in place two at a time.
    #[inline]
    fn put_u64(&mut self, mut v: u64) {
        let n = v.checked_ilog10().unwrap_or(0) as usize + 1;
        self.reserve(n);
        let out = &mut self.buf[self.len..self.len + n];
        let mut i = n;
        while v >= 100 {
            let r = (v % 100) as usize * 2;
            v /= 100;
            i -= 2;
            out[i] = DIGIT_PAIRS[r];
            out[i + 1] = DIGIT_PAIRS[r + 1];
        }
        if v >= 10 {
            let r = v as usize * 2;
            out[0] = DIGIT_PAIRS[r];
            out[1] = DIGIT_PAIRS[r + 1];
        } else {
            out[0] = b'0' + v as u8;
        }
        self.len += n;
    }

    /// Starts a new message of `msg_type`, discarding the previous one.
    pub fn begin(&mut self, msg_type: &[u8]) {
        self.len = GAP;
        self.start = 0;
        self.field(tags::MSG_TYPE, msg_type);
    }

    /// Writes the standard header fields that follow MsgType: 49, 56, 34, 43?, 52, 122?.
    pub fn header(&mut self, h: &Header<'_>) {
        self.field(tags::SENDER_COMP_ID, h.sender_comp_id);
        self.field(tags::TARGET_COMP_ID, h.target_comp_id);
        self.field_u64(tags::MSG_SEQ_NUM, h.msg_seq_num);
        if h.poss_dup {
            self.field(tags::POSS_DUP_FLAG, b"Y");
        }
        self.field_timestamp(tags::SENDING_TIME, h.sending_time_ns, h.time_precision);
        if let Some(orig) = h.orig_sending_time {
            self.field(tags::ORIG_SENDING_TIME, orig);
        }
    }

    /// `tag=`; tags below 1000 (nearly all) without a division loop.
    #[inline]
    fn tag(&mut self, tag: u32) {
        if tag >= 1000 {
            self.put_u64(tag as u64);
            self.put_byte(b'=');
            return;
        }
        self.reserve(4);
        let t = tag as usize;
        let out = &mut self.buf[self.len..self.len + 4];
        let n = if t < 10 {
            out[0] = b'0' + t as u8;
            1
        } else if t < 100 {
            out[0] = DIGIT_PAIRS[t * 2];
            out[1] = DIGIT_PAIRS[t * 2 + 1];
            2
        } else {
            let r = (t % 100) * 2;
            out[0] = b'0' + (t / 100) as u8;
            out[1] = DIGIT_PAIRS[r];
            out[2] = DIGIT_PAIRS[r + 1];
            3
        };
        out[n] = b'=';
        self.len += n + 1;
    }

    /// A field with a raw value. The value must not contain SOH (except in `data` fields).
    #[inline]
    pub fn field(&mut self, tag: u32, value: &[u8]) {
        self.tag(tag);
        self.put(value);
        self.put_byte(SOH);
    }

    #[inline]
    pub fn field_u64(&mut self, tag: u32, value: u64) {
        self.tag(tag);
        self.put_u64(value);
        self.put_byte(SOH);
    }

    #[inline]
    pub fn field_i64(&mut self, tag: u32, value: i64) {
        self.tag(tag);
        if value < 0 {
            self.put_byte(b'-');
        }
        self.put_u64(value.unsigned_abs());
        self.put_byte(SOH);
    }

    #[inline]
    pub fn field_char(&mut self, tag: u32, value: u8) {
        self.tag(tag);
        self.reserve(2);
        self.buf[self.len] = value;
        self.buf[self.len + 1] = SOH;
        self.len += 2;
    }

    #[inline]
    pub fn field_bool(&mut self, tag: u32, value: bool) {
        self.field_char(tag, if value { b'Y' } else { b'N' });
    }

    /// A price or quantity with exactly `value.scale` fractional digits.
    #[inline]
    pub fn field_decimal(&mut self, tag: u32, value: Decimal) {
        self.tag(tag);
        let mut text = [0u8; DECIMAL_LEN_MAX];
        let n = value.format(&mut text);
        self.reserve(DECIMAL_LEN_MAX);
        // Fixed-size copy (no memcpy call); only `n` bytes count.
        self.buf[self.len..self.len + DECIMAL_LEN_MAX].copy_from_slice(&text);
        self.len += n;
        self.put_byte(SOH);
    }

    /// A `UTCTimestamp` from nanoseconds since the epoch.
    #[inline]
    pub fn field_timestamp(&mut self, tag: u32, epoch_ns: u64, precision: TimePrecision) {
        self.tag(tag);
        let day = epoch_ns / NS_PER_DAY;
        if day != self.cached_day {
            format_date(day, &mut self.cached_date);
            self.cached_day = day;
        }
        let mut text = [0u8; UTC_TIMESTAMP_LEN_MAX];
        text[..DATE_LEN].copy_from_slice(&self.cached_date);
        let n = format_time_of_day(epoch_ns, precision, &mut text);
        self.reserve(UTC_TIMESTAMP_LEN_MAX);
        self.buf[self.len..self.len + UTC_TIMESTAMP_LEN_MAX].copy_from_slice(&text);
        self.len += n;
        self.put_byte(SOH);
    }

    /// Writes BeginString, BodyLength and CheckSum and returns the complete message.
    pub fn finish(&mut self, version: FixVersion) -> &[u8] {
        let body_len = self.len - GAP;
        let mut prefix = [0u8; GAP];
        let mut n = 0;
        for part in [b"8=".as_slice(), version.begin_string(), b"\x019="] {
            prefix[n..n + part.len()].copy_from_slice(part);
            n += part.len();
        }
        let mut digits = [0u8; 20];
        let d = format_u64(&mut digits, body_len as u64);
        prefix[n..n + d.len()].copy_from_slice(d);
        n += d.len();
        prefix[n] = SOH;
        n += 1;
        self.start = GAP - n;
        self.buf[self.start..GAP].copy_from_slice(&prefix[..n]);
        let sum = checksum(&self.buf[self.start..self.len]);
        self.reserve(7);
        let t = &mut self.buf[self.len..self.len + 7];
        t.copy_from_slice(&[
            b'1',
            b'0',
            b'=',
            b'0' + sum / 100,
            b'0' + sum / 10 % 10,
            b'0' + sum % 10,
            SOH,
        ]);
        self.len += 7;
        &self.buf[self.start..self.len]
    }

    /// The message produced by the last `finish`.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.start..self.len]
    }
}

/// "00" to "99".
const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Room kept after the cursor so that fixed-size pieces can be copied whole.
const SLACK: usize = 64;

/// Formats `v` in decimal into the end of `buf`, returning the digits.
#[inline]
fn format_u64(buf: &mut [u8; 20], mut v: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Appends `v` in decimal.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 20];
    out.extend_from_slice(format_u64(&mut buf, v));
}
