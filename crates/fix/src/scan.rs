//! A client's fast read of what an exchange sends, in place: one pass over a framed FIX message
//! that picks out the dozen fields a trading client acts on (session fields and the
//! ExecutionReport's), with no field table and no copy.
//!
//! Role: the load generator's bots read two or three reports per request they send, so this
//! is their hottest code after the kernel's; `Decoder` is the general reader. `frame` has
//! already checked the frame (BeginString, BodyLength, CheckSum); this only splits
//! `tag=value` fields.
//!
//! Never: allocates; looks past the frame it is given; accepts a field without `=` or with a
//! tag that is not a number (that is an error, reported by the driver as an undecodable
//! message). Data fields (a length tag followed by raw bytes that may hold SOH) are skipped by
//! their declared length, as the FIX decoder does.

use crate::Decimal;

/// The fields of one inbound message that the driver acts on.
#[derive(Clone, Copy, Debug)]
pub struct Inbound<'a> {
    /// MsgType (35).
    pub msg_type: &'a [u8],
    /// MsgSeqNum (34), 0 if absent or not a number.
    pub seq: u64,
    /// PossDupFlag (43) is `Y`.
    pub poss_dup: bool,
    /// TestReqID (112), empty if absent.
    pub test_req_id: &'a [u8],
    /// BeginSeqNo (7) of a ResendRequest.
    pub begin_seq_no: Option<u64>,
    /// NewSeqNo (36) of a SequenceReset.
    pub new_seq_no: Option<u64>,
    /// The application fields.
    pub report: Report<'a>,
}

/// One inbound application message, as far as the driver reads it.
#[derive(Clone, Copy, Debug)]
pub struct Report<'a> {
    /// MsgType (first byte): `8`, `9`, `r`, `j`, `3`.
    pub msg_type: u8,
    pub cl_ord_id: &'a [u8],
    pub orig_cl_ord_id: Option<&'a [u8]>,
    /// ExecType (150), 0 if absent.
    pub exec_type: u8,
    pub symbol: &'a [u8],
    /// Side (54): `1` buy, `2` sell, 0 if absent.
    pub side: u8,
    pub leaves_qty: Option<u64>,
    pub last_qty: Option<u64>,
    pub last_px: Option<Decimal>,
    pub text: Option<&'a [u8]>,
    /// ExecID (17), empty if absent: Rialto's is `<journal record>.<n>`, so a client orders
    /// fills as the exchange made them.
    pub exec_id: &'a [u8],
}

impl Report<'_> {
    /// True for the exchange's load-shedding answer ("exchange busy").
    pub fn is_busy(&self) -> bool {
        self.text
            .is_some_and(|t| t.windows(4).any(|w| w.eq_ignore_ascii_case(b"busy")))
    }

    /// True for an ExecutionReport of a trade (FIX 4.4 `F`, FIX 4.2 `1`/`2`).
    pub fn is_fill(&self) -> bool {
        self.msg_type == b'8' && matches!(self.exec_type, b'F' | b'1' | b'2')
    }
}

/// Why a frame could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanError {
    /// A field whose tag is not 1 to 9 digits followed by `=`, at this offset.
    BadTag(usize),
    /// A value that runs past the end of the frame (no SOH), at this offset.
    Unterminated(usize),
    /// No MsgType (35) field.
    NoMsgType,
}

fn digits_u64(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 {
        return None;
    }
    let mut n: u64 = 0;
    for &c in v {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n * 10 + u64::from(d);
    }
    Some(n)
}

/// A whole quantity (`100` or `100.0`).
fn qty(v: &[u8]) -> Option<u64> {
    digits_u64(v).or_else(|| {
        Decimal::parse(v)
            .ok()
            .and_then(|d| d.to_integer().ok())
            .and_then(|n| u64::try_from(n).ok())
    })
}

/// Reads the fields of one frame (as returned by [`frame`](crate::frame)).
pub fn scan(frame: &[u8]) -> Result<Inbound<'_>, ScanError> {
    let mut m = Inbound {
        msg_type: b"",
        seq: 0,
        poss_dup: false,
        test_req_id: b"",
        begin_seq_no: None,
        new_seq_no: None,
        report: Report {
            msg_type: 0,
            cl_ord_id: b"",
            orig_cl_ord_id: None,
            exec_type: 0,
            symbol: b"",
            side: 0,
            leaves_qty: None,
            last_qty: None,
            last_px: None,
            text: None,
            exec_id: b"",
        },
    };
    let mut ref_id: &[u8] = b"";
    let mut data_len: Option<(u32, usize)> = None;
    let len = frame.len();
    let mut i = 0;
    while i < len {
        let tag_start = i;
        let mut tag: u32 = 0;
        while let Some(&c) = frame.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 || i - tag_start == 9 {
                break;
            }
            tag = tag * 10 + u32::from(d);
            i += 1;
        }
        if i == tag_start || frame.get(i) != Some(&b'=') {
            return Err(ScanError::BadTag(tag_start));
        }
        let start = i + 1;
        let end = match data_len.take() {
            Some((t, n)) if t == tag && frame.get(start + n) == Some(&crate::SOH) => start + n,
            _ => match crate::find_soh(frame, start) {
                Some(e) => e,
                None => return Err(ScanError::Unterminated(start)),
            },
        };
        let v = &frame[start..end];
        i = end + 1;
        match tag {
            35 => m.msg_type = v,
            34 => m.seq = digits_u64(v).unwrap_or(0),
            43 => m.poss_dup = v == b"Y",
            11 => m.report.cl_ord_id = v,
            41 => m.report.orig_cl_ord_id = Some(v),
            150 => m.report.exec_type = v.first().copied().unwrap_or(0),
            55 => m.report.symbol = v,
            54 => m.report.side = v.first().copied().unwrap_or(0),
            151 => m.report.leaves_qty = qty(v),
            32 => m.report.last_qty = qty(v),
            31 => m.report.last_px = Decimal::parse(v).ok(),
            58 => m.report.text = Some(v),
            17 => m.report.exec_id = v,
            379 => ref_id = v,
            112 => m.test_req_id = v,
            7 => m.begin_seq_no = digits_u64(v),
            36 => m.new_seq_no = digits_u64(v),
            t if t >= 90 => {
                if let Some(data_tag) = crate::tags::data_tag_for_length(t) {
                    if let Some(n) = digits_u64(v) {
                        data_len = Some((data_tag, n as usize));
                    }
                }
            }
            _ => {}
        }
    }
    if m.msg_type.is_empty() {
        return Err(ScanError::NoMsgType);
    }
    m.report.msg_type = m.msg_type[0];
    if m.report.cl_ord_id.is_empty() {
        m.report.cl_ord_id = ref_id;
    }
    Ok(m)
}

/// Fuzz body (`fuzz/fuzz_targets/fix_scan.rs`): arbitrary bytes as one inbound
/// message. `scan` never panics, an error's offset lies within the input, and every value it
/// returns is a slice of the input.
pub fn fuzz_scan(data: &[u8]) {
    match scan(data) {
        Err(ScanError::BadTag(at)) | Err(ScanError::Unterminated(at)) => {
            assert!(at <= data.len(), "offset {at} past {} bytes", data.len())
        }
        Err(ScanError::NoMsgType) => {}
        Ok(m) => {
            let (lo, hi) = (data.as_ptr() as usize, data.as_ptr() as usize + data.len());
            let within = |v: &[u8]| {
                let p = v.as_ptr() as usize;
                v.is_empty() || (p >= lo && p + v.len() <= hi)
            };
            assert!(!m.msg_type.is_empty() && within(m.msg_type));
            assert_eq!(m.report.msg_type, m.msg_type[0]);
            for v in [
                m.report.cl_ord_id,
                m.report.symbol,
                m.test_req_id,
                m.report.exec_id,
            ] {
                assert!(within(v));
            }
            for v in [m.report.orig_cl_ord_id, m.report.text]
                .into_iter()
                .flatten()
            {
                assert!(within(v));
            }
        }
    }
}

#[cfg(test)]
mod tests;
