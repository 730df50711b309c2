//! The journal as the server uses it, behind a small interface: append records, commit them
//! durably, read them back from a sequence number on any thread.
//!
//! Role: the seam between the server and where its journal lives. [`JournalWriter`] and a
//! [`JournalDir`] (local segment files) implement it; a replicated log (a Kafka topic) can
//! implement the same traits later without the event loop or the followers changing.
//!
//! Invariants of every implementation: sequence numbers are consecutive from 1; `commit`
//! returns only once every record appended before it is durable in the mode asked; a reader
//! returns committed records in order, each exactly once, verified.

use crate::{Durability, JournalError, JournalReader, JournalWriter, ReadPosition, Record};
use std::path::{Path, PathBuf};

/// The writing side: the event loop appends a batch and commits it once.
pub trait Log {
    type Source: LogSource;
    /// Appends one record (not durable before `commit`); returns its sequence number.
    fn append(&mut self, kind: u16, timestamp_ns: u64, payload: &[u8])
        -> Result<u64, JournalError>;
    /// Makes every appended record durable in `mode`; returns the last durable sequence
    /// number.
    fn commit(&mut self, mode: Durability) -> Result<u64, JournalError>;
    /// The sequence number the next `append` gets.
    fn next_seq(&self) -> u64;
    /// Where readers of this log's committed records come from (on any thread).
    fn source(&self) -> Self::Source;
}

/// Opens readers of a log's committed records.
pub trait LogSource: Clone + Send + Sync + 'static {
    type Reader: LogReader<Position = Self::Position>;
    type Position: Clone + Send;
    /// A reader of the records from `from_seq` on.
    fn open(&self, from_seq: u64) -> Result<Self::Reader, JournalError>;
    /// A reader from where an earlier one stopped (cheaper than `open`: no search).
    fn resume(&self, at: &Self::Position) -> Result<Self::Reader, JournalError>;
}

/// Reads records in order.
pub trait LogReader {
    type Position;
    /// The next record, or `None` at the end of what is committed.
    fn next_record(&mut self) -> Result<Option<Record<'_>>, JournalError>;
    /// Where a reader resumes after the records read so far, and the sequence number it would
    /// read next.
    fn position(&self) -> Option<(Self::Position, u64)>;
    /// Before reading on from where it stopped, once more has been committed: drops what it
    /// read ahead (possibly before it was written). See `JournalReader::forget_unread`.
    fn forget_unread(&mut self);
}

/// A local journal's directory (the data directory that holds `journal/`), as a source of
/// readers.
#[derive(Clone, Debug)]
pub struct JournalDir(pub PathBuf);

impl JournalDir {
    pub fn new(data_dir: &Path) -> JournalDir {
        JournalDir(data_dir.to_path_buf())
    }
}

impl LogSource for JournalDir {
    type Reader = JournalReader;
    type Position = ReadPosition;
    fn open(&self, from_seq: u64) -> Result<JournalReader, JournalError> {
        JournalReader::open(&self.0, from_seq)
    }
    fn resume(&self, at: &ReadPosition) -> Result<JournalReader, JournalError> {
        JournalReader::resume(&self.0, at)
    }
}

impl LogReader for JournalReader {
    type Position = ReadPosition;
    fn next_record(&mut self) -> Result<Option<Record<'_>>, JournalError> {
        JournalReader::next_record(self)
    }
    fn forget_unread(&mut self) {
        JournalReader::forget_unread(self)
    }
    fn position(&self) -> Option<(ReadPosition, u64)> {
        JournalReader::position(self).map(|p| {
            let next = p.next_seq;
            (p, next)
        })
    }
}

impl Log for JournalWriter {
    type Source = JournalDir;
    #[inline]
    fn append(
        &mut self,
        kind: u16,
        timestamp_ns: u64,
        payload: &[u8],
    ) -> Result<u64, JournalError> {
        JournalWriter::append(self, kind, timestamp_ns, payload)
    }
    #[inline]
    fn commit(&mut self, mode: Durability) -> Result<u64, JournalError> {
        JournalWriter::commit(self, mode)
    }
    fn next_seq(&self) -> u64 {
        JournalWriter::next_seq(self)
    }
    fn source(&self) -> JournalDir {
        JournalDir(
            self.journal_dir()
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        )
    }
}
