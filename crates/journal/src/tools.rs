//! Library side of `rialto journal verify` and `rialto journal dump`.
//!
//! Role: read-only walks of a journal directory that return structured results for a CLI to
//! print. Payloads are opaque here: callers decode them in the callback (the server adds the
//! state hash to `verify` by replaying each record through the engine in `on_record`).
//!
//! Never: `verify` and `dump` modify or lock nothing (safe next to a stopped or running
//! server; on a running one the tail may be reported as torn while a write is in flight).
//! [`truncate_after`] is the one operator repair: it modifies the journal only on an explicit
//! request, under the writer lock.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::error::JournalError;
use crate::reader::{list_segments, JournalReader, Record, SegmentSummary, TornTail};

/// Result of [`verify`]: the journal is readable from the first to the last record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Every segment in order, with its sequence range and record count.
    pub segments: Vec<SegmentSummary>,
    pub records: u64,
    pub first_seq: Option<u64>,
    pub last_seq: Option<u64>,
    /// Sum of payload lengths.
    pub payload_bytes: u64,
    /// A torn tail that recovery would truncate (not an error).
    pub torn_tail: Option<TornTail>,
    /// Leftover temporary segment files that recovery would remove.
    pub temp_files: Vec<PathBuf>,
}

impl VerifyReport {
    /// Segments of a format older than [`crate::format::FORMAT_VERSION`]: written before
    /// commit markers existed, so a damaged last record there reads as a torn tail.
    pub fn older_format_segments(&self) -> impl Iterator<Item = &SegmentSummary> {
        self.segments
            .iter()
            .filter(|s| s.format_version < crate::format::FORMAT_VERSION)
    }

    /// The sequence number the last commit marker of the journal commits (`None`: no marker,
    /// e.g. an empty journal or one of an older format only).
    pub fn last_commit_seq(&self) -> Option<u64> {
        self.segments.iter().rev().find_map(|s| s.last_commit_seq)
    }
}

/// Reads every record of the journal in `data_dir`, checking checksums, sequence continuity
/// within and across segments, and segment headers, calling `on_record` for each record.
///
/// Returns the summary, or the first corruption ([`JournalError::Corrupt`] with segment and
/// offset) or the first error returned by `on_record` (converted by the caller's `E: From`).
pub fn verify<E: From<JournalError>>(
    data_dir: &Path,
    mut on_record: impl FnMut(&Record<'_>) -> Result<(), E>,
) -> Result<VerifyReport, E> {
    let (_, temp_files) = list_segments(data_dir)?;
    let mut reader = JournalReader::open(data_dir, 0)?;
    let mut report = VerifyReport {
        temp_files,
        ..VerifyReport::default()
    };
    while let Some(rec) = reader.next_record()? {
        if report.first_seq.is_none() {
            report.first_seq = Some(rec.seq);
        }
        report.last_seq = Some(rec.seq);
        report.records += 1;
        report.payload_bytes += rec.payload.len() as u64;
        on_record(&rec)?;
    }
    report.segments = reader.summaries().to_vec();
    report.torn_tail = reader.torn_tail().cloned();
    Ok(report)
}

/// [`crate::format::COMMIT_MARKER_LEN`] if a valid commit marker for record `seq` (at
/// `record_at`) is at `offset` of `segment` (the reader's current segment), else 0.
fn kept_marker_len(
    reader: &JournalReader,
    segment: &Path,
    record_at: u64,
    offset: u64,
    seq: u64,
) -> Result<u64, JournalError> {
    use crate::format::{decode_frame, Frame, COMMIT_MARKER_LEN, FORMAT_VERSION_COMMIT_MARKERS};
    use std::os::unix::fs::FileExt;
    let markers = reader
        .summaries()
        .last()
        .is_some_and(|s| s.format_version >= FORMAT_VERSION_COMMIT_MARKERS);
    if !markers {
        return Ok(0);
    }
    let file = std::fs::File::open(segment).map_err(|e| JournalError::io("open", segment, e))?;
    let (mut m, mut crc) = ([0u8; COMMIT_MARKER_LEN], [0u8; 4]);
    let read = file
        .read_exact_at(&mut crc, record_at)
        .and_then(|()| file.read_exact_at(&mut m, offset));
    match read {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(0),
        Err(e) => return Err(JournalError::io("read", segment, e)),
    }
    Ok(match decode_frame(&m, true) {
        Ok(Frame::Commit(c)) if c.seq == seq && c.record_crc == u32::from_le_bytes(crc) => {
            COMMIT_MARKER_LEN as u64
        }
        _ => 0,
    })
}

/// Result of [`dump`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DumpSummary {
    /// Records passed to the callback.
    pub records: u64,
    /// Last sequence number passed to the callback.
    pub last_seq: Option<u64>,
    /// True if the callback stopped the walk early.
    pub stopped: bool,
    /// A torn tail at the end (reported, not an error).
    pub torn_tail: Option<TornTail>,
}

/// Calls `on_record` for each record with `seq >= from_seq`, in order, until the end of the
/// journal or until it returns `ControlFlow::Break`. Corruption stops the walk with an error
/// after the records before it were delivered.
pub fn dump(
    data_dir: &Path,
    from_seq: u64,
    mut on_record: impl FnMut(&Record<'_>) -> ControlFlow<()>,
) -> Result<DumpSummary, JournalError> {
    let mut reader = JournalReader::open(data_dir, from_seq)?;
    let mut summary = DumpSummary::default();
    while let Some(rec) = reader.next_record()? {
        summary.records += 1;
        summary.last_seq = Some(rec.seq);
        if on_record(&rec).is_break() {
            summary.stopped = true;
            return Ok(summary);
        }
    }
    summary.torn_tail = reader.torn_tail().cloned();
    Ok(summary)
}

/// What [`truncate_after`] removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TruncateReport {
    /// The segment that now ends the journal, and the offset from which it was zero-filled.
    pub segment: PathBuf,
    pub offset: u64,
    /// Whole segments deleted because they start after the kept record.
    pub removed_segments: Vec<PathBuf>,
}

/// Takes the journal's writer lock for an offline tool (`rialto store rebuild`): fails while a
/// server runs on `data_dir`. Held until the returned file is dropped.
pub fn lock_offline(data_dir: &Path) -> Result<std::fs::File, JournalError> {
    crate::writer::lock_journal(&data_dir.join(crate::format::JOURNAL_SUBDIR))
}

/// Operator repair: drops every record after `last_kept_seq`, whatever state it is in, so the
/// journal ends at `last_kept_seq` and a writer continues at `last_kept_seq + 1`.
///
/// This is the explicit decision recovery never takes by itself (it refuses corruption before
/// the tail): use it after inspecting a [`JournalError::Corrupt`], typically with its
/// `last_valid_seq`. Every record up to `last_kept_seq` must read back valid, else that error
/// is returned and nothing changes. Takes the writer lock, so it fails while a server runs.
/// Records dropped here may have been acknowledged to clients: the caller owns that decision.
/// If the commit marker of `last_kept_seq` follows it, the marker is kept too, so the kept last
/// record stays covered (a later damage to it is still refused, not truncated as a tail).
pub fn truncate_after(data_dir: &Path, last_kept_seq: u64) -> Result<TruncateReport, JournalError> {
    let journal_dir = data_dir.join(crate::format::JOURNAL_SUBDIR);
    let _lock = crate::writer::lock_journal(&journal_dir)?;
    let mut reader = JournalReader::open(data_dir, 0)?;
    let mut cut = None;
    let mut last_seq = 0;
    // Offset of the kept last record, when the cut follows one.
    let mut kept_at = None;
    if reader.segments().first().map(|s| s.first_seq) == Some(last_kept_seq + 1) {
        // Keep nothing: the first segment is cut right after its header.
        let first = &reader.segments()[0];
        cut = Some((first.path.clone(), crate::format::SEGMENT_HEADER_LEN as u64));
    }
    while cut.is_none() {
        match reader.next_record()? {
            Some(rec) => {
                last_seq = rec.seq;
                if rec.seq == last_kept_seq {
                    let end =
                        rec.offset + (crate::format::RECORD_HEADER_LEN + rec.payload.len()) as u64;
                    cut = Some((rec.segment.to_path_buf(), end));
                    kept_at = Some(rec.offset);
                }
            }
            None => {
                return Err(JournalError::TruncatePointMissing {
                    last_kept_seq,
                    last_seq,
                })
            }
        }
    }
    let (segment, mut offset) = cut.expect("cut point found");
    if let Some(record_at) = kept_at {
        offset += kept_marker_len(&reader, &segment, record_at, offset, last_kept_seq)?;
    }
    let mut report = TruncateReport {
        segment,
        offset,
        removed_segments: Vec::new(),
    };
    // Delete later segments newest first, so a crash part-way leaves a journal that still
    // ends in one contiguous run.
    for seg in reader.segments().iter().rev() {
        if seg.first_seq > last_kept_seq && seg.path != report.segment {
            std::fs::remove_file(&seg.path)
                .map_err(|e| JournalError::io("remove", &seg.path, e))?;
            report.removed_segments.push(seg.path.clone());
        }
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&report.segment)
        .map_err(|e| JournalError::io("open", &report.segment, e))?;
    let len = file
        .metadata()
        .map_err(|e| JournalError::io("stat", &report.segment, e))?
        .len();
    file.set_len(offset)
        .and_then(|()| file.set_len(len))
        .and_then(|()| file.sync_all())
        .map_err(|e| JournalError::io("truncate", &report.segment, e))?;
    crate::writer::sync_dir(&journal_dir)?;
    Ok(report)
}
