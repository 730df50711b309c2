//! Errors of the journal and snapshots.
//!
//! Role: one error type for every public function, each variant specific enough for an operator
//! to act on: corruption names the segment file and the byte offset of the first bad byte range.
//!
//! Never: a generic "invalid data" without a location.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::format::RecordFault;

/// What is wrong at a corrupt position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Corruption {
    /// The segment header is missing or damaged.
    BadSegmentHeader(&'static str),
    /// The segment's file name and its header disagree on the first sequence number.
    SegmentNameMismatch { name_seq: u64, header_seq: u64 },
    /// The segment's first sequence number does not continue the previous segment.
    SegmentGap {
        expected_first_seq: u64,
        found_first_seq: u64,
    },
    /// A record with a valid checksum has the wrong sequence number.
    SeqDiscontinuity { expected: u64, found: u64 },
    /// A record has sequence number `u64::MAX`, which the writer never assigns.
    SeqOutOfRange { found: u64 },
    /// An invalid record in a segment that is not the last one (sealed segments are fsynced
    /// before the next one is created, so they cannot have a torn tail).
    InvalidRecordInSealedSegment { fault: RecordFault },
    /// An invalid record in the last segment that a valid record follows, so it is not a tail.
    InvalidRecordBeforeValid {
        fault: RecordFault,
        next_valid_offset: u64,
        next_valid_seq: u64,
    },
    /// An invalid record in the last segment that a valid commit marker after it covers: the
    /// record was written in full by a commit that returned (or, in `fsync` mode, was at least
    /// handed to fdatasync), so this is damage to acknowledged data, not a torn write.
    CommittedRecordDamaged {
        fault: RecordFault,
        /// Offset of the commit marker in the segment.
        marker_offset: u64,
        /// The last sequence number the marker commits.
        committed_seq: u64,
        /// The marker was written by an `fsync` commit (else a `process` one).
        fsync: bool,
    },
    /// A commit marker that does not commit the record right before it (another sequence
    /// number, or another record CRC).
    CommitMarkerMismatch { marker_seq: u64, last_seq: u64 },
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Corruption::BadSegmentHeader(why) => write!(f, "bad segment header: {why}"),
            Corruption::SegmentNameMismatch {
                name_seq,
                header_seq,
            } => write!(
                f,
                "file name says first seq {name_seq} but header says {header_seq}"
            ),
            Corruption::SegmentGap {
                expected_first_seq,
                found_first_seq,
            } => write!(
                f,
                "segment starts at seq {found_first_seq}, expected {expected_first_seq} \
                 (records missing or damaged at the end of the previous segment)"
            ),
            Corruption::SeqDiscontinuity { expected, found } => write!(
                f,
                "sequence discontinuity: expected seq {expected}, found {found}"
            ),
            Corruption::SeqOutOfRange { found } => {
                write!(f, "sequence number {found} is out of range")
            }
            Corruption::InvalidRecordInSealedSegment { fault } => {
                write!(f, "{} in a sealed (not last) segment", fault.as_str())
            }
            Corruption::InvalidRecordBeforeValid {
                fault,
                next_valid_offset,
                next_valid_seq,
            } => write!(
                f,
                "{} followed by a valid record (seq {next_valid_seq} at offset \
                 {next_valid_offset}): corruption before the tail",
                fault.as_str()
            ),
            Corruption::CommittedRecordDamaged {
                fault,
                marker_offset,
                committed_seq,
                fsync,
            } => {
                write!(
                    f,
                    "{} in a committed record: the commit marker at offset {marker_offset} \
                     commits up to seq {committed_seq}, so this record was acknowledged and is \
                     damaged, not torn",
                    fault.as_str()
                )?;
                if *fsync {
                    write!(f, " (fsync-mode commit: the storage altered synced data)")
                } else {
                    write!(
                        f,
                        " (process-mode commit: the storage altered the data, or a power loss \
                         lost unsynced pages, which process mode does not survive)"
                    )
                }
            }
            Corruption::CommitMarkerMismatch {
                marker_seq,
                last_seq,
            } => write!(
                f,
                "commit marker for seq {marker_seq} does not commit the record before it \
                 (seq {last_seq})"
            ),
        }
    }
}

/// Every failure of this crate.
#[derive(Debug)]
pub enum JournalError {
    /// An operating-system call failed.
    Io {
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The journal is damaged at `segment`, byte `offset`. Never skipped or guessed around.
    /// `last_valid_seq` is the last record read intact before it (0 if none): an operator who
    /// decides to give up the rest can pass it to [`crate::tools::truncate_after`].
    Corrupt {
        segment: PathBuf,
        offset: u64,
        last_valid_seq: u64,
        problem: Corruption,
    },
    /// [`crate::tools::truncate_after`] was asked to keep a record the journal does not have.
    TruncatePointMissing { last_kept_seq: u64, last_seq: u64 },
    /// A [`crate::JournalConfig`] value is out of range.
    InvalidConfig(String),
    /// `append` was given a payload larger than the configured maximum.
    PayloadTooLarge { len: usize, max: u32 },
    /// The reader was asked to start before the first record still in the journal.
    SeqNotInJournal {
        requested: u64,
        first_available: u64,
    },
    /// Every sequence number has been used (`u64::MAX` is never assigned).
    SeqExhausted,
    /// Another process (or writer) holds the journal's lock.
    Locked { path: PathBuf },
    /// An earlier write or fdatasync failed; the file state is unknown, so the writer refuses
    /// everything until the journal is reopened (which runs recovery).
    Poisoned,
    /// A snapshot request was refused (e.g. sequence number 0).
    InvalidSnapshot(String),
    /// [`crate::JournalReader::resume`] was given a position that does not fit the journal.
    InvalidPosition(String),
}

impl JournalError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        JournalError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

impl fmt::Display for JournalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JournalError::Io { op, path, source } => {
                write!(f, "{op} {}: {source}", path.display())
            }
            JournalError::Corrupt {
                segment,
                offset,
                last_valid_seq,
                problem,
            } => write!(
                f,
                "journal corrupt in {} at byte offset {offset} (after seq {last_valid_seq}): \
                 {problem}",
                segment.display()
            ),
            JournalError::TruncatePointMissing {
                last_kept_seq,
                last_seq,
            } => write!(
                f,
                "cannot truncate after seq {last_kept_seq}: the journal's last valid seq is \
                 {last_seq}"
            ),
            JournalError::InvalidConfig(why) => write!(f, "invalid journal config: {why}"),
            JournalError::PayloadTooLarge { len, max } => {
                write!(f, "payload of {len} bytes exceeds the maximum of {max}")
            }
            JournalError::SeqNotInJournal {
                requested,
                first_available,
            } => write!(
                f,
                "seq {requested} is before the first record in the journal ({first_available})"
            ),
            JournalError::Locked { path } => {
                write!(f, "journal is locked by another writer: {}", path.display())
            }
            JournalError::SeqExhausted => write!(f, "journal sequence numbers exhausted"),
            JournalError::Poisoned => write!(
                f,
                "an earlier journal write or fdatasync failed; reopen the journal to recover"
            ),
            JournalError::InvalidSnapshot(why) => write!(f, "invalid snapshot: {why}"),
            JournalError::InvalidPosition(why) => write!(f, "invalid reader position: {why}"),
        }
    }
}

impl std::error::Error for JournalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            JournalError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
