//! The on-disk format: segment headers, record headers, checksums and file names.
//!
//! Role: the single place that knows byte layouts. Everything is little-endian and decoded with
//! `from_le_bytes` from byte slices (no casts of structs, no unsafe).
//!
//! Never: I/O. These functions take and fill byte slices only.
//!
//! Layouts (offsets in bytes):
//!
//! Segment header, [`SEGMENT_HEADER_LEN`] = 32 bytes, at offset 0 of every segment file:
//! `magic[8] = "RIALTOJ\0" | version u32 | reserved u32 (0) | first_seq u64 | reserved u32 (0) |
//! crc32c u32` where the CRC covers bytes `0..28`.
//!
//! Record, [`RECORD_HEADER_LEN`] = 28 bytes of header followed by `length` payload bytes:
//! `crc32c u32 | length u32 | seq u64 | timestamp_ns u64 | kind u16 | reserved u16 (0) | payload`
//! where the CRC covers everything after itself: the rest of the header and the payload (one
//! contiguous range, so one CRC call per record).
//! Records are packed back to back after the segment header; the unused rest of a segment is
//! zero (preallocated).
//!
//! Invariants: a record is valid only if its length is at most [`PAYLOAD_LEN_MAX`], its reserved
//! field is zero and its CRC matches. Because `seq >= 1`, an all-zero region never decodes as a
//! valid record.

/// Segment file magic.
pub const SEGMENT_MAGIC: [u8; 8] = *b"RIALTOJ\0";
/// Version of the segment and record layout described in this module.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes of the segment header at the start of every segment file.
pub const SEGMENT_HEADER_LEN: usize = 32;
/// Bytes of a record header.
pub const RECORD_HEADER_LEN: usize = 28;
/// Largest payload the format accepts (1 MiB). Any header claiming more is invalid.
pub const PAYLOAD_LEN_MAX: u32 = 1 << 20;
/// File name suffix of a segment.
pub const SEGMENT_SUFFIX: &str = ".seg";
/// Suffix of a segment being created (removed by recovery if a crash left one behind).
pub const TEMP_SUFFIX: &str = ".tmp";
/// Name of the spare segment the writer's background thread prepares (created, preallocated,
/// fsynced, no header) for the next roll, which writes its header and renames it to its
/// segment name. Like every `*.seg.tmp` file it is never read as a segment: recovery removes
/// it.
pub const SPARE_FILE_NAME: &str = "spare.seg.tmp";
/// Sub-directory of the data directory that holds the segments.
pub const JOURNAL_SUBDIR: &str = "journal";
/// Lock file inside [`JOURNAL_SUBDIR`] held (flock) by the one writer.
pub const LOCK_FILE: &str = "LOCK";

/// Name of the segment whose first record has sequence number `first_seq`: 20 zero-padded
/// decimal digits so that names sort like numbers.
pub fn segment_file_name(first_seq: u64) -> String {
    format!("{first_seq:020}{SEGMENT_SUFFIX}")
}

/// The first sequence number encoded in a segment file name, or `None` if `name` is not a
/// segment name (exactly 20 digits followed by `.seg`).
pub fn parse_segment_file_name(name: &str) -> Option<u64> {
    parse_seq_name(name, SEGMENT_SUFFIX)
}

/// Parses `<20 digits><suffix>`.
pub(crate) fn parse_seq_name(name: &str, suffix: &str) -> Option<u64> {
    let digits = name.strip_suffix(suffix)?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Encodes a segment header for a segment starting at `first_seq`.
pub fn encode_segment_header(first_seq: u64) -> [u8; SEGMENT_HEADER_LEN] {
    let mut h = [0u8; SEGMENT_HEADER_LEN];
    h[0..8].copy_from_slice(&SEGMENT_MAGIC);
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&first_seq.to_le_bytes());
    let crc = crate::crc::crc32c(&h[0..28]);
    h[28..32].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Decodes a segment header, returning its first sequence number or what is wrong with it.
pub fn decode_segment_header(h: &[u8]) -> Result<u64, &'static str> {
    if h.len() < SEGMENT_HEADER_LEN {
        return Err("file shorter than the segment header");
    }
    if h[0..8] != SEGMENT_MAGIC {
        return Err("bad magic");
    }
    let crc = u32_at(h, 28);
    if crc != crate::crc::crc32c(&h[0..28]) {
        return Err("segment header checksum mismatch");
    }
    if u32_at(h, 8) != FORMAT_VERSION {
        return Err("unsupported format version");
    }
    if u32_at(h, 12) != 0 || u32_at(h, 24) != 0 {
        return Err("reserved header field is not zero");
    }
    let first_seq = u64_at(h, 16);
    if first_seq == 0 {
        return Err("first sequence number is 0");
    }
    Ok(first_seq)
}

/// Why the bytes at a position are not a valid record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordFault {
    /// The header and everything after it in the segment are zero (the unused preallocation).
    /// Reported only by the reader, which looks past the header; [`decode_record`] calls an
    /// all-zero header a checksum mismatch.
    Zeroed,
    /// The segment ends before the header or the payload it announces.
    Truncated,
    /// The length field exceeds [`PAYLOAD_LEN_MAX`].
    LengthTooLarge,
    /// The reserved header field is not zero.
    ReservedNotZero,
    /// The stored CRC32C does not match the record's bytes.
    ChecksumMismatch,
}

impl RecordFault {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordFault::Zeroed => "zeroed record header",
            RecordFault::Truncated => "record truncated by end of segment",
            RecordFault::LengthTooLarge => "record length exceeds the format maximum",
            RecordFault::ReservedNotZero => "reserved record field is not zero",
            RecordFault::ChecksumMismatch => "record checksum mismatch",
        }
    }
}

/// A record header that passed every check (see [`decode_record`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    pub payload_len: u32,
    pub seq: u64,
    pub timestamp_ns: u64,
    pub kind: u16,
}

impl RecordHeader {
    /// Header plus payload bytes.
    #[inline]
    pub fn total_len(&self) -> usize {
        RECORD_HEADER_LEN + self.payload_len as usize
    }
}

/// Writes a record (header and CRC) for `payload`, which the caller has already placed at
/// `buf[RECORD_HEADER_LEN..]`. `buf` must be exactly `RECORD_HEADER_LEN + payload length` long.
#[inline]
pub fn seal_record(buf: &mut [u8], seq: u64, timestamp_ns: u64, kind: u16) {
    let payload_len = (buf.len() - RECORD_HEADER_LEN) as u32;
    buf[4..8].copy_from_slice(&payload_len.to_le_bytes());
    buf[8..16].copy_from_slice(&seq.to_le_bytes());
    buf[16..24].copy_from_slice(&timestamp_ns.to_le_bytes());
    buf[24..26].copy_from_slice(&kind.to_le_bytes());
    buf[26..28].copy_from_slice(&0u16.to_le_bytes());
    let crc = crate::crc::crc32c(&buf[4..]);
    buf[0..4].copy_from_slice(&crc.to_le_bytes());
}

/// Decodes the record at the start of `buf`.
///
/// Returns `Ok(header)` only if the whole record (header and payload) lies in `buf`, its length
/// and reserved field are legal and its CRC matches. `Err(Truncated)` means `buf` is too short
/// for the header or for the payload it announces; the caller decides whether more bytes exist.
/// The sequence number is NOT checked here (continuity is the reader's job).
#[inline(always)]
pub fn decode_record(buf: &[u8]) -> Result<RecordHeader, RecordFault> {
    if buf.len() < RECORD_HEADER_LEN {
        return Err(RecordFault::Truncated);
    }
    let payload_len = u32_at(buf, 4);
    if payload_len > PAYLOAD_LEN_MAX {
        return Err(RecordFault::LengthTooLarge);
    }
    if u16::from_le_bytes([buf[26], buf[27]]) != 0 {
        return Err(RecordFault::ReservedNotZero);
    }
    let total = RECORD_HEADER_LEN + payload_len as usize;
    if buf.len() < total {
        return Err(RecordFault::Truncated);
    }
    if u32_at(buf, 0) != crate::crc::crc32c(&buf[4..total]) {
        return Err(RecordFault::ChecksumMismatch);
    }
    Ok(RecordHeader {
        payload_len,
        seq: u64_at(buf, 8),
        timestamp_ns: u64_at(buf, 16),
        kind: u16::from_le_bytes([buf[24], buf[25]]),
    })
}

/// The sequence number field of a record header (unchecked); `buf` holds at least a header.
#[inline]
pub(crate) fn peek_seq(buf: &[u8]) -> u64 {
    u64_at(buf, 8)
}

#[inline]
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline]
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_header_roundtrip_and_rejects_damage() {
        let h = encode_segment_header(42);
        assert_eq!(decode_segment_header(&h), Ok(42));
        for i in 0..SEGMENT_HEADER_LEN {
            let mut d = h;
            d[i] ^= 0x10;
            assert!(decode_segment_header(&d).is_err(), "flip at {i} accepted");
        }
        assert!(decode_segment_header(&h[..31]).is_err());
        assert!(decode_segment_header(&[0u8; 32]).is_err());
    }

    #[test]
    fn record_roundtrip_and_every_bit_flip_rejected() {
        let payload = b"hello journal";
        let mut buf = vec![0u8; RECORD_HEADER_LEN + payload.len()];
        buf[RECORD_HEADER_LEN..].copy_from_slice(payload);
        seal_record(&mut buf, 7, 1_000, 3);
        let h = decode_record(&buf).unwrap();
        assert_eq!(
            h,
            RecordHeader {
                payload_len: payload.len() as u32,
                seq: 7,
                timestamp_ns: 1_000,
                kind: 3
            }
        );
        for bit in 0..buf.len() * 8 {
            let mut d = buf.clone();
            d[bit / 8] ^= 1 << (bit % 8);
            assert!(decode_record(&d).is_err(), "bit flip {bit} accepted");
        }
        assert_eq!(
            decode_record(&buf[..buf.len() - 1]),
            Err(RecordFault::Truncated)
        );
        assert_eq!(
            decode_record(&[0u8; RECORD_HEADER_LEN]),
            Err(RecordFault::ChecksumMismatch)
        );
    }

    #[test]
    fn segment_names() {
        assert_eq!(segment_file_name(1), "00000000000000000001.seg");
        assert_eq!(parse_segment_file_name("00000000000000000001.seg"), Some(1));
        assert_eq!(parse_segment_file_name("1.seg"), None);
        assert_eq!(parse_segment_file_name("0000000000000000000x.seg"), None);
        assert_eq!(
            parse_segment_file_name("00000000000000000001.seg.tmp"),
            None
        );
    }
}
