//! Reading the journal: records in sequence order across segments, every one checksum-verified,
//! and the end-of-journal rule that separates a torn tail from corruption.
//!
//! Role: the only code that walks segment bytes. Recovery ([`crate::JournalWriter::open`]),
//! replay, `verify` and `dump` all use [`JournalReader`], so they can never disagree about what
//! is valid.
//!
//! Never: modifies a file, skips a bad record, or returns a record whose checksum or sequence
//! number is wrong. It allocates only when it opens a segment or examines an invalid tail,
//! never per record.
//!
//! # Segment files
//! Segments are the files named `<first seq, 20 digits>.seg`, read in name order; each must
//! start where the previous one ended, and its header must name the same first sequence number
//! as its file name. Files ending in `.seg.tmp` are never read: an interrupted inline segment
//! creation (`<name>.seg.tmp`) or the writer's prepared spare (`spare.seg.tmp`, see
//! [`crate::writer`]); neither ever holds a record, and recovery removes them.
//!
//! One exception to "the header must be valid": the LAST segment may have an all-zero header.
//! The writer renames a prepared spare to its segment name right after writing its header into
//! the page cache, without waiting for the disk; a power loss in that window can keep the
//! rename but not the header. Nothing in such a segment was ever synced (every fdatasync of the
//! segment carries its header), so its first sequence number is taken from the file name (it
//! must still continue the previous segment), its records are read and verified as usual, and
//! recovery writes the header again. A zero header in any other segment, or a header that is
//! neither valid nor all zero, is corruption.
//!
//! # Commit markers
//! In a segment of format 2 or later, the writer follows the last record of every commit with
//! a commit marker (layout in [`crate::format`]) in the same write. The reader checks that a
//! marker commits the record right before it (sequence number and CRC, else
//! [`Corruption::CommitMarkerMismatch`]), returns no marker to its caller, and records the last
//! one per segment ([`SegmentSummary::last_commit_seq`]). Format 1 segments have no markers
//! (a frame that looks like one is invalid there).
//!
//! # The end rule (torn tail vs corruption)
//! The reader decodes frames back to back until the bytes at offset `P` are not a valid record
//! with the next sequence number (or the marker of the record before). Then:
//! 1. A record with a valid checksum but the wrong sequence number is corruption
//!    ([`Corruption::SeqDiscontinuity`]): a torn write cannot produce a matching CRC, and the
//!    writer zero-fills every byte it has not written, so stale records cannot exist.
//! 2. If every byte from `P` to the end of the file is zero, the segment ends cleanly at `P`.
//!    For a sealed segment the next segment must start at the next sequence number.
//! 3. Otherwise, in a sealed (not last) segment it is corruption: the writer fdatasyncs a
//!    segment before it writes any record to the next, so a sealed segment is never torn.
//!    (An empty segment after the last record, created or renamed into place just before a
//!    crash, is simply the last segment and ends cleanly at its header.)
//! 4. Otherwise, in the last segment, the reader searches every byte offset after `P` for a
//!    valid frame whose sequence number shows that `P` is not the end of what was written (at
//!    least the expected one, and at most as many more as records could fit):
//!    - a valid record: corruption ([`Corruption::InvalidRecordBeforeValid`]);
//!    - a valid commit marker: the bad bytes at `P` belong to a record that a commit wrote in
//!      full and acknowledged (or, in `fsync` mode, handed to the fdatasync it waited for):
//!      damage to committed data, not a torn write ([`Corruption::CommittedRecordDamaged`]).
//!      Not in a segment whose header is unwritten (see above): that state means a power loss
//!      before any fdatasync of the segment returned, so nothing in it was synced and a marker
//!      there proves nothing.
//!
//!    If neither exists, everything from `P` on is an incomplete write after the last commit
//!    marker: a torn tail ([`TornTail`]), which recovery truncates (zero-fills). Before
//!    deciding, the reader re-reads the rest (a few times): if the frame at `P` has become
//!    valid meanwhile, a live writer was mid-write and reading simply goes on.
//!
//! What a damaged last record means therefore depends on the marker after it. With its marker
//! intact, it was committed: start-up stops with an error naming the segment and offset
//! (`journal verify` shows it; [`crate::truncate_after`] is the operator's way to give the
//! record up). With no marker after it, its commit never completed (a crash during the write,
//! or a power loss before the fdatasync returned): a torn tail. Damage that destroys a record
//! and its marker alike reads as a torn tail too; the bytes cannot tell it apart. In a format 1
//! segment (no markers) a checksum-bad final record with nothing valid after it is always a
//! torn tail.
//!
//! The rule can refuse a journal that is in fact only torn: after a power loss, pages of the
//! last, never-acknowledged batch may reach the disk out of order, leaving a valid record or
//! the batch's marker after a missing record (one write(2) is not atomic on disk). That case
//! stops start-up with an error (safe, never silent) for an operator to inspect with `verify`.
//! In `process` mode a power loss is outside what the mode promises, so the same holds for all
//! of its unsynced batches.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{Corruption, JournalError};
use crate::format::{
    self, decode_frame, decode_segment_header_version, Frame, RecordFault,
    FORMAT_VERSION_COMMIT_MARKERS, JOURNAL_SUBDIR, PAYLOAD_LEN_MAX, RECORD_HEADER_LEN,
    SEGMENT_HEADER_LEN, SEGMENT_SUFFIX, TEMP_SUFFIX,
};

/// Bytes read per refill. Larger than the largest record so one refill always completes one.
const READ_CHUNK: usize = 4 << 20;
/// Bytes read per refill by a reader that follows the end of a journal being written
/// (`forget_unread`): what a few batches take, not the segment's preallocated zeros; a larger
/// record completes over several refills.
const TAIL_READ_CHUNK: usize = 64 << 10;
const _: () = assert!(READ_CHUNK >= RECORD_HEADER_LEN + PAYLOAD_LEN_MAX as usize);

/// Zeros read at the end of a segment are dropped from the page cache if at least this long
/// (see `JournalReader::nonzero_end`).
const DROP_ZEROS_MIN: u64 = 1 << 20;

/// How often the end check reads an apparently corrupt tail of the last segment.
const LIVE_REREADS: u32 = 3;

/// One record as read from the journal. `payload` borrows the reader's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    pub seq: u64,
    pub timestamp_ns: u64,
    pub kind: u16,
    pub payload: &'a [u8],
    /// The segment file holding the record.
    pub segment: &'a Path,
    /// Byte offset of the record's header in `segment`.
    pub offset: u64,
}

/// A segment file found in the journal directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentFile {
    pub path: PathBuf,
    /// The first sequence number from the file name.
    pub first_seq: u64,
}

/// What one segment contained, as far as the reader got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentSummary {
    pub path: PathBuf,
    /// First sequence number from the segment header.
    pub first_seq: u64,
    /// Last valid record's sequence number (`None` if the segment holds no record yet).
    pub last_seq: Option<u64>,
    /// Valid records read from this segment (all of them unless the reader started mid-segment).
    pub records: u64,
    /// Offset just after the last valid record: where the next record goes.
    pub end_offset: u64,
    /// File length (preallocated size).
    pub file_len: u64,
    /// The header was all zero (allowed in the last segment only: see the module docs), so
    /// `first_seq` is the one in the file name.
    pub header_unwritten: bool,
    /// Format version from the header ([`format::FORMAT_VERSION`] for an unwritten header).
    /// Below [`FORMAT_VERSION_COMMIT_MARKERS`] the segment has no commit markers, so a damaged
    /// last record in it reads as a torn tail (module docs).
    pub format_version: u32,
    /// Sequence number of the last commit marker read in this segment (`None`: none yet).
    pub last_commit_seq: Option<u64>,
}

/// An incomplete write at the end of the last segment (see the end rule in the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    pub segment: PathBuf,
    /// Offset of the first byte that is not part of a valid record.
    pub offset: u64,
    /// Non-zero bytes from `offset` to the last non-zero byte of the file: what is dropped.
    pub bytes_dropped: u64,
    /// Why the bytes at `offset` are not a record.
    pub fault: RecordFault,
}

impl std::fmt::Display for TornTail {
    /// `torn tail in SEGMENT at offset N (M bytes, FAULT)`: what start-up and the tools report.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "torn tail in {} at offset {} ({} bytes, {})",
            self.segment.display(),
            self.offset,
            self.bytes_dropped,
            self.fault.as_str()
        )
    }
}

/// Where a reader stands between two records: see [`JournalReader::position`] and
/// [`JournalReader::resume`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadPosition {
    /// First sequence number of the segment (as in its file name).
    pub segment_first_seq: u64,
    /// Byte offset in that segment where the next record starts.
    pub offset: u64,
    /// Sequence number the next record must have.
    pub next_seq: u64,
}

/// Lists the segment files (`<20 digits>.seg`) of `data_dir/journal`, sorted by first sequence
/// number, and the leftover temporary files (`*.tmp`) of an interrupted segment creation.
/// A missing directory is an empty journal.
pub fn list_segments(data_dir: &Path) -> Result<(Vec<SegmentFile>, Vec<PathBuf>), JournalError> {
    let dir = data_dir.join(JOURNAL_SUBDIR);
    let mut segments = Vec::new();
    let mut temps = Vec::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((segments, temps)),
        Err(e) => return Err(JournalError::io("read directory", &dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| JournalError::io("read directory", &dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(first_seq) = format::parse_segment_file_name(name) {
            segments.push(SegmentFile {
                path: entry.path(),
                first_seq,
            });
        } else if name.ends_with(TEMP_SUFFIX)
            && name
                .strip_suffix(TEMP_SUFFIX)
                .is_some_and(|n| n.ends_with(SEGMENT_SUFFIX))
        {
            temps.push(entry.path());
        }
    }
    segments.sort_by_key(|s| s.first_seq);
    temps.sort();
    Ok((segments, temps))
}

/// Reads records in sequence order across all segments, verifying each (see module docs).
///
/// It is a lending iterator: [`JournalReader::next_record`] returns a [`Record`] borrowing the
/// reader, valid until the next call.
///
/// ```no_run
/// # fn main() -> Result<(), journal::JournalError> {
/// let mut reader = journal::JournalReader::open(std::path::Path::new("data"), 1)?;
/// while let Some(rec) = reader.next_record()? {
///     println!("{} kind={} {} bytes", rec.seq, rec.kind, rec.payload.len());
/// }
/// # Ok(()) }
/// ```
pub struct JournalReader {
    segments: Vec<SegmentFile>,
    /// Index in `segments` of the open segment (or of the next one to open).
    seg_idx: usize,
    file: Option<File>,
    file_len: u64,
    buf: Vec<u8>,
    /// Bytes read per refill at most (`READ_CHUNK`, or `TAIL_READ_CHUNK` once following).
    read_chunk: usize,
    /// Valid bytes of `buf` are `pos..end`; `buf[0]` is at file offset `buf_file_off`.
    pos: usize,
    end: usize,
    buf_file_off: u64,
    /// Sequence number the next record must have (0 = take it from the first segment header).
    expected_seq: u64,
    from_seq: u64,
    summaries: Vec<SegmentSummary>,
    torn_tail: Option<TornTail>,
    /// The open segment's format has commit markers.
    markers: bool,
    /// The open segment's commit markers make a damaged record before them corruption: it
    /// has markers and its header is written (module docs, "the end rule").
    markers_bind: bool,
    /// CRC of the last record read in the open segment (`None` at its start or after a
    /// resume): a commit marker must carry it.
    prev_crc: Option<u32>,
    done: bool,
    /// Drop verified zero runs from the page cache (`nonzero_end`): only for the journal
    /// writer's open scan, which holds the journal lock, so no writer can be filling those
    /// pages meanwhile.
    pub(crate) drop_zero_tail: bool,
}

impl JournalReader {
    /// Opens the journal in `data_dir` for reading records with `seq >= from_seq` (0 or 1 read
    /// everything). Records before `from_seq` in the starting segment are still verified.
    /// Fails with [`JournalError::SeqNotInJournal`] if older segments were removed and
    /// `from_seq` precedes the first one.
    pub fn open(data_dir: &Path, from_seq: u64) -> Result<JournalReader, JournalError> {
        let (segments, _temps) = list_segments(data_dir)?;
        let mut seg_idx = 0;
        if let Some(first) = segments.first() {
            if from_seq > 1 && from_seq < first.first_seq {
                return Err(JournalError::SeqNotInJournal {
                    requested: from_seq,
                    first_available: first.first_seq,
                });
            }
            // The last segment whose first record is at or before `from_seq`.
            seg_idx = segments
                .iter()
                .rposition(|s| s.first_seq <= from_seq)
                .unwrap_or(0);
        }
        Ok(JournalReader {
            segments,
            seg_idx,
            file: None,
            file_len: 0,
            buf: vec![0u8; READ_CHUNK],
            read_chunk: READ_CHUNK,
            pos: 0,
            end: 0,
            buf_file_off: 0,
            expected_seq: 0,
            from_seq,
            summaries: Vec::new(),
            torn_tail: None,
            markers: false,
            markers_bind: false,
            prev_crc: None,
            done: false,
            drop_zero_tail: false,
        })
    }

    /// The segments found when the reader was opened.
    pub fn segments(&self) -> &[SegmentFile] {
        &self.segments
    }

    /// Summaries of the segments visited so far (complete once `next_record` returned `None`).
    pub fn summaries(&self) -> &[SegmentSummary] {
        &self.summaries
    }

    /// The torn tail found at the end of the last segment, if any (known once `next_record`
    /// returned `None`).
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.torn_tail.as_ref()
    }

    /// The sequence number the next record would have (after the end: the next one to append).
    /// 0 until the first segment has been opened; for an empty journal it stays 0.
    pub fn next_seq(&self) -> u64 {
        self.expected_seq
    }

    /// The position just after the last record read, while the reader is inside a segment
    /// (`None` before the first record, at the end of the journal, or after an error).
    pub fn position(&self) -> Option<ReadPosition> {
        if self.done || self.file.is_none() {
            return None;
        }
        Some(ReadPosition {
            segment_first_seq: self.segments[self.seg_idx].first_seq,
            offset: self.offset_of(self.pos),
            next_seq: self.expected_seq,
        })
    }

    /// Opens a reader at `pos`, which an earlier reader of the same journal returned, without
    /// reading the records before it again (the segments are listed afresh, so it also finds
    /// segments created since). A follower of a journal being appended to keeps its reader
    /// instead (`forget_unread`) and opens a new one only at a segment its reader's list
    /// lacks. The segment header is checked again, and every record
    /// read from there is verified as always. A position that does not fit the journal is an
    /// error, never a guess.
    pub fn resume(data_dir: &Path, pos: &ReadPosition) -> Result<JournalReader, JournalError> {
        let mut r = JournalReader::open(data_dir, pos.next_seq)?;
        let Some(idx) = r
            .segments
            .iter()
            .position(|s| s.first_seq == pos.segment_first_seq)
        else {
            return Err(JournalError::SeqNotInJournal {
                requested: pos.next_seq,
                first_available: r.segments.first().map_or(0, |s| s.first_seq),
            });
        };
        r.seg_idx = idx;
        r.open_segment()?;
        let header_end = SEGMENT_HEADER_LEN as u64;
        if pos.offset < header_end || pos.offset > r.file_len || pos.next_seq < r.expected_seq {
            return Err(JournalError::InvalidPosition(format!(
                "record {} at offset {} of {} ({} bytes, first record {})",
                pos.next_seq,
                pos.offset,
                r.seg_path().display(),
                r.file_len,
                r.expected_seq
            )));
        }
        r.expected_seq = pos.next_seq;
        r.buf_file_off = pos.offset;
        if let Some(s) = r.summaries.last_mut() {
            s.end_offset = pos.offset;
        }
        Ok(r)
    }

    /// For a reader that follows a journal being appended to, kept between stretches: forgets
    /// the bytes read past the last record returned (they may have been read before they were
    /// written), so the next record is read from the file again, and from now on reads a
    /// little at a time (`TAIL_READ_CHUNK`) rather than the segment's unwritten rest.
    pub fn forget_unread(&mut self) {
        self.end = self.pos;
        self.read_chunk = TAIL_READ_CHUNK;
    }

    /// The next record with `seq >= from_seq`, `Ok(None)` at the clean or torn end of the
    /// journal, or the corruption that stops reading. After an error the reader is finished.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, JournalError> {
        // Find the next record's position first, then build the borrow (keeps the borrow
        // checker happy with the loop).
        let (start, header) = loop {
            if self.done {
                return Ok(None);
            }
            if self.file.is_none() {
                if self.seg_idx >= self.segments.len() {
                    self.done = true;
                    return Ok(None);
                }
                self.open_segment()?;
                continue;
            }
            let avail = &self.buf[self.pos..self.end];
            match decode_frame(avail, self.markers) {
                Ok(Frame::Commit(m)) => self.commit_marker(m)?,
                Ok(Frame::Record(h)) => {
                    if h.seq != self.expected_seq {
                        let offset = self.offset_of(self.pos);
                        return Err(self.fail(
                            offset,
                            Corruption::SeqDiscontinuity {
                                expected: self.expected_seq,
                                found: h.seq,
                            },
                        ));
                    }
                    let Some(next) = h.seq.checked_add(1) else {
                        let offset = self.offset_of(self.pos);
                        return Err(self.fail(offset, Corruption::SeqOutOfRange { found: h.seq }));
                    };
                    let start = self.pos;
                    self.prev_crc = Some(format::u32_at(avail, 0));
                    self.pos += h.total_len();
                    self.expected_seq = next;
                    let end_offset = self.offset_of(self.pos);
                    let summary = self.summaries.last_mut().expect("segment summary exists");
                    summary.last_seq = Some(h.seq);
                    summary.records += 1;
                    summary.end_offset = end_offset;
                    if h.seq >= self.from_seq {
                        break (start, h);
                    }
                }
                Err(RecordFault::Truncated) if self.refill()? => {}
                Err(fault) => self.end_of_segment(fault)?,
            }
        };
        let payload_start = start + RECORD_HEADER_LEN;
        Ok(Some(Record {
            seq: header.seq,
            timestamp_ns: header.timestamp_ns,
            kind: header.kind,
            payload: &self.buf[payload_start..payload_start + header.payload_len as usize],
            segment: &self.segments[self.seg_idx].path,
            offset: self.buf_file_off + start as u64,
        }))
    }

    /// Takes the commit marker at the current position: it must commit the record right
    /// before it (its sequence number and CRC), else the journal is corrupt.
    fn commit_marker(&mut self, m: format::CommitMarker) -> Result<(), JournalError> {
        let offset = self.offset_of(self.pos);
        let last = self.expected_seq.wrapping_sub(1);
        if m.seq != last || self.prev_crc.is_some_and(|crc| crc != m.record_crc) {
            return Err(self.fail(
                offset,
                Corruption::CommitMarkerMismatch {
                    marker_seq: m.seq,
                    last_seq: last,
                },
            ));
        }
        self.pos += format::COMMIT_MARKER_LEN;
        let end_offset = self.offset_of(self.pos);
        let summary = self.summaries.last_mut().expect("segment summary exists");
        summary.last_commit_seq = Some(m.seq);
        summary.end_offset = end_offset;
        Ok(())
    }

    #[inline]
    fn offset_of(&self, buf_pos: usize) -> u64 {
        self.buf_file_off + buf_pos as u64
    }

    fn seg_path(&self) -> &Path {
        &self.segments[self.seg_idx].path
    }

    fn fail(&mut self, offset: u64, problem: Corruption) -> JournalError {
        self.done = true;
        self.file = None;
        JournalError::Corrupt {
            segment: self.seg_path().to_path_buf(),
            offset,
            last_valid_seq: self.expected_seq.saturating_sub(1),
            problem,
        }
    }

    /// Opens `segments[seg_idx]`, checks its header against its name and the previous segment,
    /// and positions the buffer at its first record.
    fn open_segment(&mut self) -> Result<(), JournalError> {
        let seg = &self.segments[self.seg_idx];
        let file = File::open(&seg.path).map_err(|e| JournalError::io("open", &seg.path, e))?;
        let file_len = file
            .metadata()
            .map_err(|e| JournalError::io("stat", &seg.path, e))?
            .len();
        let mut header = [0u8; SEGMENT_HEADER_LEN];
        let header_len = read_up_to(&file, &mut header, 0)
            .map_err(|e| JournalError::io("read", &self.segments[self.seg_idx].path, e))?;
        let name_seq = seg.first_seq;
        let is_last = self.seg_idx + 1 == self.segments.len();
        let header_unwritten = is_last && header_len == SEGMENT_HEADER_LEN && header == [0; 32];
        let (header_seq, format_version) = if header_unwritten {
            // A prepared segment renamed into place whose header had not reached the disk
            // (module docs): the name is all there is, and only the current writer renames
            // prepared segments.
            (name_seq, format::FORMAT_VERSION)
        } else {
            match decode_segment_header_version(&header[..header_len]) {
                Ok(s) => s,
                Err(why) => return Err(self.fail(0, Corruption::BadSegmentHeader(why))),
            }
        };
        if header_seq != name_seq {
            return Err(self.fail(
                0,
                Corruption::SegmentNameMismatch {
                    name_seq,
                    header_seq,
                },
            ));
        }
        if self.expected_seq != 0 && header_seq != self.expected_seq {
            return Err(self.fail(
                0,
                Corruption::SegmentGap {
                    expected_first_seq: self.expected_seq,
                    found_first_seq: header_seq,
                },
            ));
        }
        self.expected_seq = header_seq;
        self.markers = format_version >= FORMAT_VERSION_COMMIT_MARKERS;
        self.markers_bind = self.markers && !header_unwritten;
        self.prev_crc = None;
        self.file = Some(file);
        self.file_len = file_len;
        self.pos = 0;
        self.end = 0;
        self.buf_file_off = SEGMENT_HEADER_LEN as u64;
        self.summaries.push(SegmentSummary {
            path: self.segments[self.seg_idx].path.clone(),
            first_seq: header_seq,
            last_seq: None,
            records: 0,
            end_offset: SEGMENT_HEADER_LEN as u64,
            file_len,
            header_unwritten,
            format_version,
            last_commit_seq: None,
        });
        Ok(())
    }

    /// Moves the unread bytes to the front of the buffer and reads more. Returns false if the
    /// file has no more bytes.
    fn refill(&mut self) -> Result<bool, JournalError> {
        let file_off = self.buf_file_off + self.end as u64;
        if file_off >= self.file_len {
            return Ok(false);
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.buf_file_off += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        let want = ((self.file_len - file_off) as usize)
            .min(self.buf.len() - self.end)
            .min(self.read_chunk);
        let file = self.file.as_ref().expect("segment open");
        let n = read_up_to(file, &mut self.buf[self.end..self.end + want], file_off)
            .map_err(|e| JournalError::io("read", &self.segments[self.seg_idx].path, e))?;
        self.end += n;
        Ok(n > 0)
    }

    /// Applies the end rule (module docs) at the current position.
    fn end_of_segment(&mut self, fault: RecordFault) -> Result<(), JournalError> {
        let offset = self.offset_of(self.pos);
        let is_last = self.seg_idx + 1 == self.segments.len();
        let Some(nonzero_end) = self.nonzero_end(offset)? else {
            // Clean end of this segment.
            self.file = None;
            self.seg_idx += 1;
            if is_last {
                self.done = true;
            }
            return Ok(());
        };
        // Rare path from here on: the rest of the segment is not zero.
        // Next to a live writer (verify or dump while a server runs) a read can race a write:
        // the record at `offset` may be completed since it was read, or even be read before
        // later pages of the same write. So look again (a few times, error path only) before
        // calling a valid record after an invalid one corruption.
        let mut rest = self.read_rest(offset)?;
        let mut attempt = 1;
        loop {
            let next_ok = match decode_frame(&rest, self.markers) {
                Ok(Frame::Record(h)) => h.seq == self.expected_seq,
                Ok(Frame::Commit(m)) => m.seq.wrapping_add(1) == self.expected_seq,
                Err(_) => false,
            };
            if next_ok {
                self.buf_file_off = offset;
                return Ok(());
            }
            if attempt == LIVE_REREADS
                || !is_last
                || find_valid_frame(&rest, self.expected_seq, self.markers).is_none()
            {
                break;
            }
            attempt += 1;
            std::thread::yield_now();
            rest = self.read_rest(offset)?;
        }
        let fault = if rest.len() >= RECORD_HEADER_LEN && rest[..RECORD_HEADER_LEN] == [0; 28] {
            RecordFault::Zeroed
        } else {
            fault
        };
        if !is_last {
            return Err(self.fail(offset, Corruption::InvalidRecordInSealedSegment { fault }));
        }
        match find_valid_frame(&rest, self.expected_seq, self.markers_bind) {
            Some((at, Frame::Record(h))) => {
                return Err(self.fail(
                    offset,
                    Corruption::InvalidRecordBeforeValid {
                        fault,
                        next_valid_offset: offset + at as u64,
                        next_valid_seq: h.seq,
                    },
                ));
            }
            Some((at, Frame::Commit(m))) => {
                return Err(self.fail(
                    offset,
                    Corruption::CommittedRecordDamaged {
                        fault,
                        marker_offset: offset + at as u64,
                        committed_seq: m.seq,
                        fsync: m.fsync,
                    },
                ));
            }
            None => {}
        }
        self.torn_tail = Some(TornTail {
            segment: self.seg_path().to_path_buf(),
            offset,
            bytes_dropped: nonzero_end - offset,
            fault,
        });
        self.file = None;
        self.done = true;
        Ok(())
    }

    /// File offset just after the last non-zero byte of the open segment at or after
    /// `offset`, or `None` if all are zero. Reads in chunks through the record buffer (its
    /// contents are discarded), only the data regions: holes and unwritten (preallocated)
    /// extents read as zeros and are skipped where the file system says where they are
    /// (`SEEK_DATA`/`SEEK_HOLE`; elsewhere everything is read).
    ///
    /// For the journal writer's open scan (`drop_zero_tail`: it holds the journal lock, no
    /// writer is appending), a long run of zeros that had to be read (cached pages of a
    /// preallocated extent count as data for `SEEK_DATA`) is then dropped from the page
    /// cache: it is verified zero and nobody needs those pages, and uncached they are skipped
    /// again at the next start instead of read and checked once more (the unused rest of the
    /// last segment, tens of MB). Only a cache hint. Readers next to a live writer (verify,
    /// dump, the snapshot replica) leave the cache alone: a page the writer has just written
    /// and synced would otherwise have to be read back from disk for its next append.
    fn nonzero_end(&mut self, offset: u64) -> Result<Option<u64>, JournalError> {
        self.pos = 0;
        self.end = 0;
        let mut last = None;
        let mut at = offset;
        let mut read_end = offset;
        let file = self.file.as_ref().expect("segment open");
        while at < self.file_len {
            let mut data_end = self.file_len;
            match rustix::fs::seek(file, rustix::fs::SeekFrom::Data(at)) {
                Ok(data) => {
                    at = at.max(data);
                    // The data region ends at the next hole (a racing writer may have moved
                    // it: an answer that does not fit means read to the end).
                    match rustix::fs::seek(file, rustix::fs::SeekFrom::Hole(at)) {
                        Ok(hole) if hole > at => data_end = hole.min(self.file_len),
                        _ => {}
                    }
                }
                Err(rustix::io::Errno::NXIO) => break,
                Err(_) => {}
            }
            if at >= data_end {
                break;
            }
            let want = ((data_end - at) as usize).min(self.buf.len());
            let n = read_up_to(file, &mut self.buf[..want], at)
                .map_err(|e| JournalError::io("read", &self.segments[self.seg_idx].path, e))?;
            if n == 0 {
                break;
            }
            if let Some(i) = last_nonzero(&self.buf[..n]) {
                last = Some(at + i as u64 + 1);
            }
            at += n as u64;
            read_end = at;
        }
        // The whole pages after the last non-zero byte, if zeros were read there.
        let zero_from = last.unwrap_or(offset).next_multiple_of(4096);
        let zero_len = self.file_len.saturating_sub(zero_from);
        if self.drop_zero_tail && read_end > zero_from && zero_len >= DROP_ZEROS_MIN {
            // Best effort: a failure only leaves the pages cached.
            let _ = rustix::fs::fadvise(
                file,
                zero_from,
                std::num::NonZeroU64::new(zero_len),
                rustix::fs::Advice::DontNeed,
            );
        }
        Ok(last)
    }

    /// All bytes of the open segment from `offset` to its end.
    fn read_rest(&self, offset: u64) -> Result<Vec<u8>, JournalError> {
        let len = self.file_len.saturating_sub(offset) as usize;
        let mut rest = vec![0u8; len];
        let file = self.file.as_ref().expect("segment open");
        let n = read_up_to(file, &mut rest, offset)
            .map_err(|e| JournalError::io("read", self.seg_path(), e))?;
        rest.truncate(n);
        Ok(rest)
    }
}

/// Finds, at the first offset >= 1 of `rest` where there is one, a valid record or (if
/// `markers`) commit marker whose sequence number shows that the bytes at offset 0, where a
/// record with `expected_seq` should be, are not the end of what was written: at least
/// `expected_seq` and at most as many more as records fit before that offset (a marker carries
/// the sequence number of the record it commits, so a marker for `expected_seq` or later
/// commits the record expected at offset 0). Returns its offset in `rest` and the frame.
fn find_valid_frame(rest: &[u8], expected_seq: u64, markers: bool) -> Option<(usize, Frame)> {
    if rest.len() < RECORD_HEADER_LEN {
        return None;
    }
    for at in 1..=rest.len() - RECORD_HEADER_LEN {
        let seq = format::peek_seq(&rest[at..]);
        let seq_max = expected_seq.saturating_add((at / RECORD_HEADER_LEN) as u64);
        if seq < expected_seq || seq > seq_max {
            continue;
        }
        if let Ok(frame) = decode_frame(&rest[at..], markers) {
            return Some((at, frame));
        }
    }
    None
}

/// Index of the last non-zero byte of `b`: 64 bytes at a time (vectorized) over the zero
/// part, which is usually all of it.
fn last_nonzero(b: &[u8]) -> Option<usize> {
    let mut end = b.len();
    while end >= 64 {
        let chunk = &b[end - 64..end];
        if chunk.iter().fold(0u8, |acc, &x| acc | x) != 0 {
            break;
        }
        end -= 64;
    }
    b[..end].iter().rposition(|&x| x != 0)
}

/// Reads as many bytes as available into `buf` from `offset` (short only at end of file).
fn read_up_to(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests;
