//! The on-disk format: segment headers, record headers, commit markers, checksums and file
//! names.
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
//! A segment holds frames back to back after its header; the unused rest of a segment is zero
//! (preallocated). Every frame starts with the same 28-byte header, whose last `u16` says what
//! the frame is:
//!
//! Record, [`RECORD_HEADER_LEN`] = 28 bytes of header followed by `length` payload bytes:
//! `crc32c u32 | length u32 | seq u64 | timestamp_ns u64 | kind u16 | frame u16 (0) | payload`
//! where the CRC covers everything after itself: the rest of the header and the payload (one
//! contiguous range, so one CRC call per record).
//!
//! Commit marker (format 2 on), [`COMMIT_MARKER_LEN`] = 28 bytes, no payload:
//! `crc32c u32 | length u32 (0) | seq u64 | record_crc u32 | reserved u32 (0) | mode u16 |
//! frame u16 (`FRAME_COMMIT`)`: `seq` is the last record of the commit that wrote it (the
//! record right before the marker), `record_crc` that record's CRC, `mode` the commit's
//! durability ([`MARKER_MODE_PROCESS`] or [`MARKER_MODE_FSYNC`]). The writer puts one after the
//! last record of every commit, in the same write, so a marker on disk says that every record
//! up to `seq` was written in full by a commit (see [`crate::reader`] for what the reader
//! concludes).
//!
//! Versions: [`FORMAT_VERSION`] (2) is written. Format 1 segments (before commit markers: a
//! frame value other than 0 is invalid there) are still read; [`FORMAT_VERSION_OLDEST`] is the
//! oldest readable one.
//!
//! Invariants: a record is valid only if its length is at most [`PAYLOAD_LEN_MAX`], its frame
//! field is zero and its CRC matches; a marker only if its CRC matches and its fixed fields
//! hold the values above. Because `seq >= 1` and the frame field of a marker is not zero, an
//! all-zero region never decodes as a valid frame.

/// Segment file magic.
pub const SEGMENT_MAGIC: [u8; 8] = *b"RIALTOJ\0";
/// Version of the segment and frame layout the writer writes (2: records and commit markers).
pub const FORMAT_VERSION: u32 = 2;
/// Oldest format version the reader accepts (1: records only, no commit markers).
pub const FORMAT_VERSION_OLDEST: u32 = 1;
/// First format version with commit markers.
pub const FORMAT_VERSION_COMMIT_MARKERS: u32 = 2;
/// Bytes of the segment header at the start of every segment file.
pub const SEGMENT_HEADER_LEN: usize = 32;
/// Bytes of a record header.
pub const RECORD_HEADER_LEN: usize = 28;
/// Bytes of a commit marker (a frame header without payload).
pub const COMMIT_MARKER_LEN: usize = 28;
/// Frame field (bytes 26..28 of a frame header) of a commit marker: `"CM"`.
pub const FRAME_COMMIT: u16 = u16::from_le_bytes(*b"CM");
/// `mode` of a commit marker written by a `Process` commit (after the write returned).
pub const MARKER_MODE_PROCESS: u16 = 1;
/// `mode` of a commit marker written by an `Fsync` commit (before the fdatasync it waits for).
pub const MARKER_MODE_FSYNC: u16 = 2;
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

/// Encodes a segment header of the current format for a segment starting at `first_seq`.
pub fn encode_segment_header(first_seq: u64) -> [u8; SEGMENT_HEADER_LEN] {
    encode_segment_header_version(first_seq, FORMAT_VERSION)
}

/// Encodes a segment header of format `version` (tests and tools that build journals of an
/// older format; the writer only writes [`FORMAT_VERSION`]).
pub fn encode_segment_header_version(first_seq: u64, version: u32) -> [u8; SEGMENT_HEADER_LEN] {
    let mut h = [0u8; SEGMENT_HEADER_LEN];
    h[0..8].copy_from_slice(&SEGMENT_MAGIC);
    h[8..12].copy_from_slice(&version.to_le_bytes());
    h[16..24].copy_from_slice(&first_seq.to_le_bytes());
    let crc = crate::crc::crc32c(&h[0..28]);
    h[28..32].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Decodes a segment header, returning its first sequence number or what is wrong with it.
pub fn decode_segment_header(h: &[u8]) -> Result<u64, &'static str> {
    decode_segment_header_version(h).map(|(first_seq, _)| first_seq)
}

/// Decodes a segment header, returning its first sequence number and format version (any
/// readable one, [`FORMAT_VERSION_OLDEST`]`..=`[`FORMAT_VERSION`]).
pub fn decode_segment_header_version(h: &[u8]) -> Result<(u64, u32), &'static str> {
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
    let version = u32_at(h, 8);
    if !(FORMAT_VERSION_OLDEST..=FORMAT_VERSION).contains(&version) {
        return Err("unsupported format version (written by a newer release?)");
    }
    if u32_at(h, 12) != 0 || u32_at(h, 24) != 0 {
        return Err("reserved header field is not zero");
    }
    let first_seq = u64_at(h, 16);
    if first_seq == 0 {
        return Err("first sequence number is 0");
    }
    Ok((first_seq, version))
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
    /// The frame field is neither a record's (0) nor, where the segment's format has them, a
    /// commit marker's.
    ReservedNotZero,
    /// A commit marker whose CRC matches but whose fixed fields are wrong (never written).
    BadCommitMarker,
    /// The stored CRC32C does not match the record's bytes.
    ChecksumMismatch,
}

impl RecordFault {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordFault::Zeroed => "zeroed record header",
            RecordFault::Truncated => "record truncated by end of segment",
            RecordFault::LengthTooLarge => "record length exceeds the format maximum",
            RecordFault::ReservedNotZero => "unknown frame type (reserved field is not zero)",
            RecordFault::BadCommitMarker => "malformed commit marker",
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

/// A commit marker that passed every check (see [`decode_frame`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitMarker {
    /// The last record of the commit (the record right before the marker).
    pub seq: u64,
    /// That record's CRC.
    pub record_crc: u32,
    /// Written by an `Fsync` commit (else a `Process` one).
    pub fsync: bool,
}

/// One valid frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    Record(RecordHeader),
    Commit(CommitMarker),
}

/// Writes a record (header and CRC) for `payload`, which the caller has already placed at
/// `buf[RECORD_HEADER_LEN..]`, and returns the record's CRC. `buf` must be exactly
/// `RECORD_HEADER_LEN + payload length` long.
#[inline]
pub fn seal_record(buf: &mut [u8], seq: u64, timestamp_ns: u64, kind: u16) -> u32 {
    let payload_len = (buf.len() - RECORD_HEADER_LEN) as u32;
    buf[4..8].copy_from_slice(&payload_len.to_le_bytes());
    buf[8..16].copy_from_slice(&seq.to_le_bytes());
    buf[16..24].copy_from_slice(&timestamp_ns.to_le_bytes());
    buf[24..26].copy_from_slice(&kind.to_le_bytes());
    buf[26..28].copy_from_slice(&0u16.to_le_bytes());
    let crc = crate::crc::crc32c(&buf[4..]);
    buf[0..4].copy_from_slice(&crc.to_le_bytes());
    crc
}

/// Writes a commit marker for record `seq`, whose CRC is `record_crc`, into `buf`.
#[inline]
pub fn seal_commit_marker(
    buf: &mut [u8; COMMIT_MARKER_LEN],
    seq: u64,
    record_crc: u32,
    fsync: bool,
) {
    let mode = if fsync {
        MARKER_MODE_FSYNC
    } else {
        MARKER_MODE_PROCESS
    };
    buf[4..8].copy_from_slice(&0u32.to_le_bytes());
    buf[8..16].copy_from_slice(&seq.to_le_bytes());
    buf[16..20].copy_from_slice(&record_crc.to_le_bytes());
    buf[20..24].copy_from_slice(&0u32.to_le_bytes());
    buf[24..26].copy_from_slice(&mode.to_le_bytes());
    buf[26..28].copy_from_slice(&FRAME_COMMIT.to_le_bytes());
    let crc = crate::crc::crc32c(&buf[4..]);
    buf[0..4].copy_from_slice(&crc.to_le_bytes());
}

/// Decodes the record at the start of `buf` (a commit marker there is
/// [`RecordFault::ReservedNotZero`]: see [`decode_frame`]).
///
/// Returns `Ok(header)` only if the whole record (header and payload) lies in `buf`, its length
/// and frame field are legal and its CRC matches. `Err(Truncated)` means `buf` is too short
/// for the header or for the payload it announces; the caller decides whether more bytes exist.
/// The sequence number is NOT checked here (continuity is the reader's job).
#[inline(always)]
pub fn decode_record(buf: &[u8]) -> Result<RecordHeader, RecordFault> {
    match decode_frame(buf, false)? {
        Frame::Record(h) => Ok(h),
        Frame::Commit(_) => Err(RecordFault::ReservedNotZero),
    }
}

/// Decodes the frame at the start of `buf`: a record, or a commit marker if `markers` (the
/// segment's format has them; otherwise a marker is [`RecordFault::ReservedNotZero`]). Same
/// checks and `Truncated` contract as [`decode_record`].
#[inline(always)]
pub fn decode_frame(buf: &[u8], markers: bool) -> Result<Frame, RecordFault> {
    if buf.len() < RECORD_HEADER_LEN {
        return Err(RecordFault::Truncated);
    }
    let payload_len = u32_at(buf, 4);
    if payload_len > PAYLOAD_LEN_MAX {
        return Err(RecordFault::LengthTooLarge);
    }
    let frame = u16::from_le_bytes([buf[26], buf[27]]);
    let commit = frame == FRAME_COMMIT && markers;
    if frame != 0 && !commit {
        return Err(RecordFault::ReservedNotZero);
    }
    let total = RECORD_HEADER_LEN + payload_len as usize;
    if buf.len() < total {
        return Err(RecordFault::Truncated);
    }
    if u32_at(buf, 0) != crate::crc::crc32c(&buf[4..total]) {
        return Err(RecordFault::ChecksumMismatch);
    }
    if commit {
        let mode = u16::from_le_bytes([buf[24], buf[25]]);
        if payload_len != 0
            || u32_at(buf, 20) != 0
            || (mode != MARKER_MODE_PROCESS && mode != MARKER_MODE_FSYNC)
        {
            return Err(RecordFault::BadCommitMarker);
        }
        return Ok(Frame::Commit(CommitMarker {
            seq: u64_at(buf, 8),
            record_crc: u32_at(buf, 16),
            fsync: mode == MARKER_MODE_FSYNC,
        }));
    }
    Ok(Frame::Record(RecordHeader {
        payload_len,
        seq: u64_at(buf, 8),
        timestamp_ns: u64_at(buf, 16),
        kind: u16::from_le_bytes([buf[24], buf[25]]),
    }))
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
mod tests;
