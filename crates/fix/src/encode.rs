//! Encoder: writes one message (header, body, trailer) into a reusable buffer, computing
//! BodyLength and CheckSum, plus integer, decimal and timestamp field formatting.
//!
//! Role: the only place outbound FIX bytes are produced. The buffer keeps a gap in front of
//! MsgType; `finish` writes `8=..|9=len|` right-aligned into that gap, so nothing is moved and
//! BodyLength needs no padding.
//!
//! Never: allocates once the buffer has grown to the largest message (reuse one `Encoder`),
//! uses floats, or writes a field the caller did not ask for (except 8, 9, 10).
//!
//! Invariants: `finish` returns exactly one complete message whose BodyLength and CheckSum are
//! correct; the decoder accepts everything the encoder writes.

use crate::decimal::{write_ratio, write_units, Decimal, DECIMAL_LEN_MAX};
use crate::decode::{checksum, SOH};
use crate::tags;
use crate::time::{format_utc_timestamp, TimePrecision, UTC_TIMESTAMP_LEN_MAX};
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
    /// OrigSendingTime(122) as text, for a resent message.
    pub orig_sending_time: Option<&'a [u8]>,
    pub time_precision: TimePrecision,
}

/// Builds one message at a time in a buffer that is reused across messages.
#[derive(Clone, Debug)]
pub struct Encoder {
    buf: Vec<u8>,
    start: usize,
    /// The millisecond whose `UTCTimestamp` text is in `ms_text` (`u64::MAX`: none): every
    /// message of an event-loop iteration carries the batch's one timestamp, twice
    /// (SendingTime and TransactTime), so nearly every timestamp repeats the one before.
    ms: u64,
    ms_text: [u8; MILLIS_LEN],
}

/// Length of a `UTCTimestamp` with milliseconds.
const MILLIS_LEN: usize = 21;

impl Default for Encoder {
    fn default() -> Encoder {
        Encoder::with_capacity(1024)
    }
}

impl Encoder {
    pub fn with_capacity(capacity: usize) -> Encoder {
        let mut buf = Vec::with_capacity(capacity.max(GAP + 128));
        buf.resize(GAP, 0);
        Encoder {
            buf,
            start: 0,
            ms: u64::MAX,
            ms_text: [0; MILLIS_LEN],
        }
    }

    /// Starts a new message of `msg_type`, discarding the previous one.
    #[inline]
    pub fn begin(&mut self, msg_type: &[u8]) {
        self.buf.truncate(GAP);
        self.start = 0;
        self.field(tags::MSG_TYPE, msg_type);
    }

    /// Writes the standard header fields that follow MsgType: 34, 49, 56, 43?, 52, 122?.
    #[inline]
    pub fn header(&mut self, h: &Header<'_>) {
        self.field_u64(tags::MSG_SEQ_NUM, h.msg_seq_num);
        self.field(tags::SENDER_COMP_ID, h.sender_comp_id);
        self.field(tags::TARGET_COMP_ID, h.target_comp_id);
        if h.poss_dup {
            self.field(tags::POSS_DUP_FLAG, b"Y");
        }
        self.field_timestamp(tags::SENDING_TIME, h.sending_time_ns, h.time_precision);
        if let Some(orig) = h.orig_sending_time {
            self.field(tags::ORIG_SENDING_TIME, orig);
        }
    }

    /// Starts a body without a MsgType: the fields written next are `body()` (a message's
    /// fields after the standard header, e.g. for a store).
    #[inline]
    pub fn begin_body(&mut self) {
        self.buf.truncate(GAP);
        self.start = 0;
    }

    /// The fields written since `begin_body`.
    #[inline]
    pub fn body(&self) -> &[u8] {
        &self.buf[GAP..]
    }

    /// `v` in decimal, appended as it is (part of a value).
    #[inline]
    pub fn raw_u64(&mut self, v: u64) {
        write_u64(&mut self.buf, v);
    }

    /// `tag=`; tags below 1000 (nearly all) without a division loop.
    #[inline]
    fn tag(&mut self, tag: u32) {
        let t = tag as usize;
        if t < 10 {
            self.buf.extend_from_slice(&[b'0' + t as u8, b'=']);
        } else if t < 100 {
            self.buf
                .extend_from_slice(&[DIGIT_PAIRS[t * 2], DIGIT_PAIRS[t * 2 + 1], b'=']);
        } else if t < 1000 {
            let r = (t % 100) * 2;
            self.buf.extend_from_slice(&[
                b'0' + (t / 100) as u8,
                DIGIT_PAIRS[r],
                DIGIT_PAIRS[r + 1],
                b'=',
            ]);
        } else {
            write_u64(&mut self.buf, tag as u64);
            self.buf.push(b'=');
        }
    }

    /// A field with a raw value. The value must not contain SOH (except in `data` fields).
    #[inline]
    pub fn field(&mut self, tag: u32, value: &[u8]) {
        self.tag(tag);
        self.buf.extend_from_slice(value);
        self.buf.push(SOH);
    }

    /// Already-encoded fields (`tag=value<SOH>`...), appended as they are.
    #[inline]
    pub fn raw(&mut self, fields: &[u8]) {
        self.buf.extend_from_slice(fields);
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
        self.buf.extend_from_slice(&[value, SOH]);
    }

    #[inline]
    pub fn field_bool(&mut self, tag: u32, value: bool) {
        self.field_char(tag, if value { b'Y' } else { b'N' });
    }

    /// A value with exactly `value.scale` fractional digits.
    #[inline]
    pub fn field_decimal(&mut self, tag: u32, value: Decimal) {
        self.tag(tag);
        let mut text = [0u8; DECIMAL_LEN_MAX];
        let n = value.format(&mut text);
        self.buf.extend_from_slice(&text[..n]);
        self.buf.push(SOH);
    }

    /// A price of `units` * 10^-`decimals`, without trailing zeros (`decimal::write_units`).
    #[inline]
    pub fn field_units(&mut self, tag: u32, units: i64, decimals: u32) {
        self.tag(tag);
        write_units(&mut self.buf, units, decimals);
        self.buf.push(SOH);
    }

    /// A price of `num / den` units (`decimal::write_ratio`): an AvgPx.
    #[inline]
    pub fn field_ratio(&mut self, tag: u32, num: i128, den: u64, decimals: u32) {
        self.tag(tag);
        write_ratio(&mut self.buf, num, den, decimals);
        self.buf.push(SOH);
    }

    /// A `UTCTimestamp` from nanoseconds since the epoch.
    #[inline]
    pub fn field_timestamp(&mut self, tag: u32, epoch_ns: u64, precision: TimePrecision) {
        self.tag(tag);
        if precision == TimePrecision::Millis {
            let ms = epoch_ns / 1_000_000;
            if ms != self.ms {
                self.fill_ms(epoch_ns);
            }
            self.buf.extend_from_slice(&self.ms_text);
        } else {
            let mut text = [0u8; UTC_TIMESTAMP_LEN_MAX];
            let n = format_utc_timestamp(epoch_ns, precision, &mut text);
            self.buf.extend_from_slice(&text[..n]);
        }
        self.buf.push(SOH);
    }

    #[cold]
    fn fill_ms(&mut self, epoch_ns: u64) {
        let mut text = [0u8; UTC_TIMESTAMP_LEN_MAX];
        let n = format_utc_timestamp(epoch_ns, TimePrecision::Millis, &mut text);
        debug_assert_eq!(n, MILLIS_LEN);
        self.ms_text.copy_from_slice(&text[..MILLIS_LEN]);
        self.ms = epoch_ns / 1_000_000;
    }

    /// Writes BeginString, BodyLength and CheckSum and returns the complete message.
    #[inline]
    pub fn finish(&mut self, version: FixVersion) -> &[u8] {
        self.finish_begin_string(version.begin_string())
    }

    /// `finish` with any BeginString (a counterparty's, e.g. in a refused Logon's answer).
    pub fn finish_begin_string(&mut self, begin_string: &[u8]) -> &[u8] {
        let body_len = self.buf.len() - GAP;
        let mut prefix = [0u8; GAP];
        let bs = &begin_string[..begin_string.len().min(16)];
        let mut n = 0;
        for part in [b"8=".as_slice(), bs, b"\x019="] {
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
        self.buf.extend_from_slice(&[
            b'1',
            b'0',
            b'=',
            b'0' + sum / 100,
            b'0' + sum / 10 % 10,
            b'0' + sum % 10,
            SOH,
        ]);
        &self.buf[self.start..]
    }

    /// The message produced by the last `finish`.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

/// Formats `v` in decimal into the end of `buf`, returning the digits (BodyLength).
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

pub use types::decimal::write_u64;
use types::decimal::DIGIT_PAIRS;

#[cfg(test)]
mod tests;
