//! Rialto's journal: a durable, append-only log of opaque records, plus snapshots.
//!
//! Role: make every sequenced command durable before its effects are released, and give it
//! back, in order and verified, at start-up and to followers. The server's event loop appends
//! many records and commits once per batch (group commit); replay reads them back with
//! [`JournalReader`]. The server uses it through [`Log`] and [`LogSource`], the seam a
//! replicated log can implement later.
//!
//! Layout on disk (`DIR` is the server's data directory):
//! - `DIR/journal/<first seq, 20 digits>.seg`: segment files, preallocated to
//!   [`JournalConfig::segment_size_bytes`], each a header then records back to back, each
//!   commit's records followed by a commit marker ([`mod@format`] has the byte layouts).
//!   Sequence numbers are global and strictly consecutive, starting at 1.
//! - `DIR/journal/spare.seg.tmp`: the next segment, preallocated by the writer's background
//!   thread ahead of a roll (no header, never read; see [`writer`]). `*.seg.tmp` files never
//!   hold records: recovery removes them.
//! - `DIR/journal/LOCK`: flock'ed by the one writer.
//! - `DIR/snapshots/<seq, 20 digits>.snap`: see [`snapshot`].
//!
//! Durability modes ([`Durability`]): `Process` releases a record once its write returned
//! (survives kill -9), `Fsync` once fdatasync returned (survives power loss).
//!
//! Recovery ([`JournalWriter::open`]) truncates a torn tail (bytes after the last commit
//! marker that are not a whole record) and refuses corruption, including a damaged record
//! that a commit marker covers (it was acknowledged), with an error naming the segment file
//! and byte offset; the exact rule and why it is safe are in [`reader`].
//!
//! Never: interprets payloads, reads a clock (timestamps come from the caller, i.e. the
//! sequencer), skips or repairs a bad record in the middle, or allocates per record.
//!
//! Invariants: record `n + 1` follows record `n` with no gap; every record returned by a reader
//! passed its CRC32C; bytes after the last frame of the active segment are zero; every commit
//! that appended records wrote a commit marker for its last record in the same write; the
//! writer writes only to segments of the current format ([`format::FORMAT_VERSION`]).
//!
//! Unsafe: denied everywhere but two calls: in `crc` (the record checksum's SSE4.2 path, made
//! only after run-time detection of the instruction) and `sync_file_range` in
//! `writer::background` (the background write-back, which neither std nor rustix wraps).
#![deny(unsafe_code)]

mod crc;
mod error;
pub mod format;
mod fuzz;
mod log;
pub mod reader;
pub mod snapshot;
pub mod tools;
pub mod writer;

pub use error::{Corruption, JournalError};
pub use format::RecordFault;
pub use fuzz::fuzz_recover;
pub use log::{JournalDir, Log, LogReader, LogSource};
pub use reader::{
    list_segments, JournalReader, ReadPosition, Record, SegmentFile, SegmentSummary, TornTail,
};
pub use tools::{
    dump, lock_offline, truncate_after, verify, DumpSummary, TruncateReport, VerifyReport,
};
pub use writer::{Durability, JournalConfig, JournalWriter, RecoveryReport, RollStats};
