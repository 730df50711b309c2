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
use crate::decode::{checksum, SOH};
use crate::tags;
use crate::time::{write_utc_timestamp, TimePrecision};
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
#[derive(Debug)]
pub struct Encoder {
    buf: Vec<u8>,
    start: usize,
}

impl Default for Encoder {
    fn default() -> Encoder {
        Encoder::with_capacity(512)
    }
}

impl Encoder {
    pub fn with_capacity(capacity: usize) -> Encoder {
        Encoder {
            buf: Vec::with_capacity(capacity.max(GAP + 64)),
            start: 0,
        }
    }

    /// Starts a new message of `msg_type`, discarding the previous one.
    pub fn begin(&mut self, msg_type: &[u8]) {
        self.buf.clear();
        self.buf.resize(GAP, 0);
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

    #[inline]
    fn tag(&mut self, tag: u32) {
        write_u64(&mut self.buf, tag as u64);
        self.buf.push(b'=');
    }

    /// A field with a raw value. The value must not contain SOH (except in `data` fields).
    #[inline]
    pub fn field(&mut self, tag: u32, value: &[u8]) {
        self.tag(tag);
        self.buf.extend_from_slice(value);
        self.buf.push(SOH);
    }

    #[inline]
    pub fn field_u64(&mut self, tag: u32, value: u64) {
        self.tag(tag);
        write_u64(&mut self.buf, value);
        self.buf.push(SOH);
    }

    #[inline]
    pub fn field_i64(&mut self, tag: u32, value: i64) {
        self.tag(tag);
        if value < 0 {
            self.buf.push(b'-');
        }
        write_u64(&mut self.buf, value.unsigned_abs());
        self.buf.push(SOH);
    }

    #[inline]
    pub fn field_char(&mut self, tag: u32, value: u8) {
        self.tag(tag);
        self.buf.push(value);
        self.buf.push(SOH);
    }

    #[inline]
    pub fn field_bool(&mut self, tag: u32, value: bool) {
        self.field_char(tag, if value { b'Y' } else { b'N' });
    }

    /// A price or quantity with exactly `value.scale` fractional digits.
    #[inline]
    pub fn field_decimal(&mut self, tag: u32, value: Decimal) {
        self.tag(tag);
        value.write(&mut self.buf);
        self.buf.push(SOH);
    }

    /// A `UTCTimestamp` from nanoseconds since the epoch.
    #[inline]
    pub fn field_timestamp(&mut self, tag: u32, epoch_ns: u64, precision: TimePrecision) {
        self.tag(tag);
        write_utc_timestamp(&mut self.buf, epoch_ns, precision);
        self.buf.push(SOH);
    }

    /// Writes BeginString, BodyLength and CheckSum and returns the complete message.
    pub fn finish(&mut self, version: FixVersion) -> &[u8] {
        let body_len = self.buf.len() - GAP;
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
        let sum = checksum(&self.buf[self.start..]);
        self.buf.extend_from_slice(b"10=");
        self.buf.push(b'0' + sum / 100);
        self.buf.push(b'0' + sum / 10 % 10);
        self.buf.push(b'0' + sum % 10);
        self.buf.push(SOH);
        &self.buf[self.start..]
    }

    /// The message produced by the last `finish`.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

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
