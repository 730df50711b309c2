//! Library side of `rialto journal verify` and `rialto journal dump`.
//!
//! Role: read-only walks of a journal directory that return structured results for a CLI to
//! print. Payloads are opaque here: callers decode them in the callback (the server adds the
//! state hash to `verify` by replaying each record through the engine in `on_record`).
//!
//! Never: modifies, truncates or locks the journal (safe to run next to a stopped or running
//! server; on a running one the tail may be reported as torn while a write is in flight).

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
