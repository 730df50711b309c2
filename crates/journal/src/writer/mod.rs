//! The journal writer: recovery on open, then appends with group commit.
//!
//! Role: the single writer of `DIR/journal`. It owns the sequence numbers: record `n + 1` is
//! always appended right after record `n`, with no gap, across segment rolls and restarts.
//!
//! Never: allocates or makes a syscall per record on the hot path (`append` copies into a
//! preallocated batch buffer; a write happens only when the buffer or the segment is full, or
//! at `commit`); reports a sequence number as durable before the write (or fdatasync) that makes
//! it so has returned; continues after a failed write or fdatasync (the writer is poisoned).
//!
//! Invariants: bytes past the write position of the active segment are zero (preallocated or
//! zero-filled by recovery), so the reader's end rule holds; a segment is fdatasynced (and its
//! directory entry fsynced) before any record is written to the next one, so a power loss can
//! never keep a later segment's records and lose an earlier one's; a record is reported synced
//! only after fdatasync of its segment and the directory fsync that made the segment's name
//! durable; the header of a segment is written before the segment gets its final name; every
//! commit that appended records ends them with a commit marker in the same write (see below);
//! only segments of the current format are written to.
//!
//! Commit markers: `commit` seals a 28-byte marker ([`crate::format`]) for the last record
//! appended into the batch buffer after the batch, so it costs no syscall and no allocation,
//! just one small CRC. `append` keeps room for it both in the buffer and in the segment, so a
//! marker is always in the same write as its batch's last record and never crosses a roll (a
//! batch may: the roll seals its first part without a marker in the old segment, which is then
//! synced, and the marker follows the rest in the new one). A full buffer written by `append`
//! carries no marker: those records are not committed yet. With a marker the reader tells a
//! damaged committed record (corruption) from a torn, never-acknowledged write (a tail to
//! truncate); see [`crate::reader`]. Opening a journal whose last segment is of an older
//! format (no markers) continues in a new segment.
//!
//! Rolling without stalling the appender: a roll happens on the appending thread (the server's
//! event loop), so it must not create a file there. A helper thread (`journal-sync`, parked
//! otherwise) does the slow work ahead of time:
//! - Spare segment: once the active segment is half full, it creates `journal/`
//!   [`SPARE_FILE_NAME`], preallocates it to the segment size and fsyncs it (no header: the first
//!   sequence number is not known yet). The roll then only writes the 32-byte header into the
//!   spare (page cache), renames it to `<first seq>.seg` and switches descriptors, and asks the
//!   helper to fdatasync the new segment and fsync the directory (both done long before the
//!   next roll; the first `Fsync` commit in the segment waits for the directory fsync).
//!   If no spare is ready at a roll (slow disk, failed preparation), the roll creates the
//!   segment inline as before (`.tmp`, preallocate, header, fsync, rename, fsync directory):
//!   correct, just slower, and counted in [`RollStats`].
//! - Background write-back: in `Process` mode nothing syncs the active segment until it rolls,
//!   so the roll's fdatasync would have to flush the whole segment on the appending thread.
//!   So every [`BACKGROUND_SYNC_BYTES`] written, and every [`NEAR_END_SYNC_STEP`] bytes in the
//!   last [`NEAR_END_SYNC_BYTES`] of the segment, the helper writes the segment back on a
//!   duplicate of its descriptor, and a roll only waits for the last few KiB. That write-back
//!   (`sync_file_range`) stops short of the page the appender is writing into
//!   (`writeback_end`): while write-back holds a page locked (waiting for the device's
//!   queue, milliseconds on a busy disk), a `pwrite` into that page waits for it, and that
//!   wait was the event loop's. Pages wholly below the write position are never written
//!   again, so the appender never meets a page under write-back. The background write-back
//!   never marks anything durable (`synced_seq` moves only on the writer's own fdatasync); if
//!   it (or the directory fsync) fails, the writer is poisoned (the shared descriptor has
//!   consumed the error, so a later fdatasync could not be trusted).
//!
//! Crash safety of a roll, step by step (kill -9 keeps the page cache; a power loss keeps only
//! what was synced):
//! - During preparation: a partial or complete `spare.seg.tmp` is left; recovery removes it
//!   like any `*.seg.tmp` (a spare never holds a record: records go to a segment only after its
//!   rename returned). A clean close of the writer removes a prepared spare.
//! - After the old segment's fdatasync, after the header write, after the rename: the journal
//!   ends at the old segment's last record, or continues in an empty (or partly written) new
//!   segment with the next sequence number; both recover to the last record written.
//! - Power loss after the rename reached the disk but before the header did: the last segment
//!   has an all-zero header. Nothing in it was ever synced (every fdatasync of the segment
//!   carries the header), and the reader takes its first sequence number from the file name
//!   (see [`crate::reader`]); recovery writes the header again.
//!
//! Layout: this module holds the writer's state, `append` and `commit`; `recovery` opens the
//! journal (`JournalWriter::open`), `segments` rolls and creates segment files, `background` is
//! the `journal-sync` helper thread.
//!
//! The server's journal thread loop:
//! ```no_run
//! # use journal::{Durability, JournalConfig, JournalWriter};
//! # fn main() -> Result<(), journal::JournalError> {
//! let (mut writer, report) = JournalWriter::open("data".as_ref(), JournalConfig::default())?;
//! println!("{report}");
//! # let queue: Vec<(u16, u64, Vec<u8>)> = Vec::new();
//! loop {
//!     for (kind, timestamp_ns, payload) in &queue {
//!         // drain the queue: each command gets its sequence number here
//!         let _seq = writer.append(*kind, *timestamp_ns, payload)?;
//!     }
//!     let durable_seq = writer.commit(Durability::Process)?; // one write for the whole batch
//!     // publish "durable up to durable_seq": events of those commands may now be released
//! #   let _ = durable_seq; break;
//! }
//! # Ok(()) }
//! ```

use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Bytes written to the active segment between two background fdatasyncs (see the module docs).
pub const BACKGROUND_SYNC_BYTES: u64 = 4 << 20;

/// The last part of a segment in which background fdatasyncs are asked for every
/// [`NEAR_END_SYNC_STEP`] bytes, so that a roll's own fdatasync has little left to flush.
pub const NEAR_END_SYNC_BYTES: u64 = 512 << 10;

/// Bytes written between two background fdatasyncs near the end of a segment.
pub const NEAR_END_SYNC_STEP: u64 = 64 << 10;

use crate::error::JournalError;
use crate::format::{
    seal_commit_marker, seal_record, COMMIT_MARKER_LEN, FORMAT_VERSION, PAYLOAD_LEN_MAX,
    RECORD_HEADER_LEN, SEGMENT_HEADER_LEN, SPARE_FILE_NAME,
};
use crate::reader::{SegmentSummary, TornTail};

/// When `commit` may report records as durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Durability {
    /// After the write syscall returned: the bytes are in the kernel's page cache, so they
    /// survive a crash or kill -9 of the process, but not a power loss or kernel crash. After
    /// kill -9 only the batch whose write was in flight can be torn (never acknowledged); after
    /// a power loss any batch since the last fdatasync may be lost or partial, and start-up
    /// either truncates a torn tail or stops with an error.
    Process,
    /// After fdatasync returned: the bytes are on stable storage and survive power loss. Only
    /// the batch in flight at the loss can be torn (it was never acknowledged); a damaged
    /// record covered by its commit marker is corruption and stops start-up.
    Fsync,
}

impl Durability {
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Process => "process",
            Durability::Fsync => "fsync",
        }
    }
}

/// Sizes of the writer. All buffers are allocated once, at open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JournalConfig {
    /// Size a new segment is preallocated to; a segment rolls when the next record does not
    /// fit. Default 64 MiB.
    pub segment_size_bytes: u64,
    /// Batch buffer: `append` copies records here; it is written when full or at `commit`.
    /// Default 1 MiB.
    pub batch_buffer_bytes: usize,
    /// Largest payload `append` accepts (at most [`PAYLOAD_LEN_MAX`]). Default 64 KiB.
    pub payload_len_max: u32,
}

impl Default for JournalConfig {
    fn default() -> Self {
        JournalConfig {
            segment_size_bytes: 64 << 20,
            batch_buffer_bytes: 1 << 20,
            payload_len_max: 64 << 10,
        }
    }
}

impl JournalConfig {
    /// Checks the limits: `payload_len_max <= PAYLOAD_LEN_MAX`, and both the batch buffer and an
    /// empty segment hold at least one record of `payload_len_max` bytes and its commit marker.
    pub fn validate(&self) -> Result<(), JournalError> {
        let record_max = RECORD_HEADER_LEN + self.payload_len_max as usize + COMMIT_MARKER_LEN;
        if self.payload_len_max > PAYLOAD_LEN_MAX {
            return Err(JournalError::InvalidConfig(format!(
                "payload_len_max {} exceeds the format maximum {PAYLOAD_LEN_MAX}",
                self.payload_len_max
            )));
        }
        if self.batch_buffer_bytes < record_max {
            return Err(JournalError::InvalidConfig(format!(
                "batch_buffer_bytes {} is smaller than one maximal record and its commit \
                 marker ({record_max})",
                self.batch_buffer_bytes
            )));
        }
        if self.segment_size_bytes < (SEGMENT_HEADER_LEN + record_max) as u64 {
            return Err(JournalError::InvalidConfig(format!(
                "segment_size_bytes {} cannot hold one maximal record and its commit marker \
                 ({} with the header)",
                self.segment_size_bytes,
                SEGMENT_HEADER_LEN + record_max
            )));
        }
        Ok(())
    }
}

/// What recovery found and did when the journal was opened.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Every segment, in order, as found (before truncation).
    pub segments: Vec<SegmentSummary>,
    /// Valid records in the journal.
    pub records: u64,
    /// First and last valid sequence numbers (`None` for an empty journal).
    pub first_seq: Option<u64>,
    pub last_seq: Option<u64>,
    /// The torn tail that was truncated (zero-filled), if there was one.
    pub truncated: Option<TornTail>,
    /// Leftover `*.seg.tmp` files of an interrupted segment creation, removed.
    pub removed_temp_files: Vec<PathBuf>,
    /// True if no segment existed and the first one was created.
    pub created: bool,
    /// The last segment had an all-zero header (a prepared segment renamed into place whose
    /// header had not reached the disk before a power loss); recovery wrote it again.
    pub header_rewritten: Option<PathBuf>,
    /// The last segment was of an older format (no commit markers) and held records, so
    /// writing continues in this new segment of the current format (an older segment is
    /// never given frames of a newer format).
    pub new_format_segment: Option<PathBuf>,
}

/// Counters of the writer's segment rolls (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RollStats {
    /// Segment rolls since the writer was opened.
    pub rolls: u64,
    /// Rolls that switched to a spare segment prepared by the background thread.
    pub prepared: u64,
    /// Rolls that created the next segment on the appending thread because no spare was ready
    /// (slow disk, or a failed preparation).
    pub inline_created: u64,
    /// Background preparations that failed (each one's roll then created inline).
    pub prepare_failures: u64,
}

impl fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.first_seq, self.last_seq) {
            (Some(a), Some(b)) => write!(
                f,
                "journal: {} records (seq {a}..={b}) in {} segment(s)",
                self.records,
                self.segments.len()
            )?,
            _ => write!(
                f,
                "journal: empty ({} segment(s){})",
                self.segments.len(),
                if self.created { ", created" } else { "" }
            )?,
        }
        if let Some(t) = &self.truncated {
            write!(
                f,
                "; torn tail truncated in {} at offset {}: {} bytes dropped ({})",
                t.segment.display(),
                t.offset,
                t.bytes_dropped,
                t.fault.as_str()
            )?;
        }
        if let Some(p) = &self.header_rewritten {
            write!(
                f,
                "; header of {} rewritten (it had not reached the disk)",
                p.display()
            )?;
        }
        if let Some(p) = &self.new_format_segment {
            write!(
                f,
                "; the last segment was of an older format: writing continues in {} (format {})",
                p.display(),
                FORMAT_VERSION
            )?;
        }
        for p in &self.removed_temp_files {
            write!(f, "; removed leftover {}", p.display())?;
        }
        Ok(())
    }
}

/// Appends records with group commit. See the module docs for the thread loop.
pub struct JournalWriter {
    journal_dir: PathBuf,
    config: JournalConfig,
    /// Holds the flock for the writer's lifetime.
    _lock: File,
    file: File,
    seg_path: PathBuf,
    /// Preallocated length of the active segment: records must end at or before it.
    seg_capacity: u64,
    /// File offset where `buf[0]` goes.
    write_off: u64,
    buf: Box<[u8]>,
    buf_len: usize,
    next_seq: u64,
    /// Last sequence number whose write returned.
    written_seq: u64,
    /// Last sequence number covered by a completed fdatasync.
    synced_seq: u64,
    /// Last sequence number a commit marker (buffered or written) commits.
    marked_seq: u64,
    /// CRC of the last record appended (the next commit marker carries it).
    last_crc: u32,
    poisoned: bool,
    /// Segment offset up to which a background fdatasync was last requested.
    bg_requested_off: u64,
    /// Background directory fsync that makes the active segment's name durable (0: it is).
    seg_dir_gen: u64,
    /// Segment offset from which the next spare segment is asked for.
    prepare_at: u64,
    /// A spare was asked for and not yet taken by a roll (being prepared, or ready).
    spare_pending: bool,
    stats: RollStats,
    bg: Background,
    /// Tests stop a roll at this step as a crash would (see `crash_point!`).
    #[cfg(test)]
    crash_at: Option<CrashPoint>,
    /// A simulated crash happened: drop leaves every file as it is.
    #[cfg(test)]
    crashed: bool,
}

/// Steps of a roll at which unit tests simulate a crash.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CrashPoint {
    /// The old segment is written and fdatasynced.
    OldSynced,
    /// The spare has its header (not yet renamed).
    SpareHeaderWritten,
    /// The spare has its segment name (no record in it yet).
    SpareRenamed,
}

/// In tests, returns a "simulated crash" error at `$point` if the test asked for it, marking
/// the writer so that drop leaves the files as a killed process would. Nothing otherwise.
macro_rules! crash_point {
    ($self:ident, $point:expr) => {
        #[cfg(test)]
        if $self.crash_at == Some($point) {
            $self.crashed = true;
            $self.poisoned = true;
            return Err(JournalError::io(
                "simulated crash",
                &$self.seg_path,
                std::io::Error::other(format!("{:?}", $point)),
            ));
        }
    };
}

mod background;
mod recovery;
mod segments;

pub(crate) use recovery::lock_journal;
pub(crate) use segments::sync_dir;

use background::{writeback_end, Background};

impl JournalWriter {
    /// Appends one record and returns its sequence number. The record is only buffered: it is
    /// durable after a later [`JournalWriter::commit`] returns a sequence number >= it.
    /// Allocation-free; makes a write syscall only if the batch buffer or segment is full.
    #[inline]
    pub fn append(
        &mut self,
        kind: u16,
        timestamp_ns: u64,
        payload: &[u8],
    ) -> Result<u64, JournalError> {
        self.append_with(kind, timestamp_ns, payload.len(), |dst| {
            dst.copy_from_slice(payload)
        })
    }

    /// Like [`JournalWriter::append`], but `encode` writes the `payload_len` payload bytes
    /// straight into the batch buffer (no intermediate copy). `encode` must write every byte
    /// of the slice it is given: the slice still holds bytes of earlier batches.
    #[inline]
    pub fn append_with(
        &mut self,
        kind: u16,
        timestamp_ns: u64,
        payload_len: usize,
        encode: impl FnOnce(&mut [u8]),
    ) -> Result<u64, JournalError> {
        if self.poisoned {
            return Err(JournalError::Poisoned);
        }
        if payload_len > self.config.payload_len_max as usize {
            return Err(JournalError::PayloadTooLarge {
                len: payload_len,
                max: self.config.payload_len_max,
            });
        }
        if self.next_seq == u64::MAX {
            return Err(JournalError::SeqExhausted);
        }
        let total = RECORD_HEADER_LEN + payload_len;
        // Room for the record and the commit marker that may follow it, in the segment and in
        // the buffer, so `commit` never rolls or writes twice.
        let reserve = total + COMMIT_MARKER_LEN;
        if self.write_off + (self.buf_len + reserve) as u64 > self.seg_capacity {
            self.roll()?;
        }
        if self.buf_len + reserve > self.buf.len() {
            self.flush()?;
        }
        let seq = self.next_seq;
        let rec = &mut self.buf[self.buf_len..self.buf_len + total];
        encode(&mut rec[RECORD_HEADER_LEN..]);
        self.last_crc = seal_record(rec, seq, timestamp_ns, kind);
        self.buf_len += total;
        self.next_seq += 1;
        Ok(seq)
    }

    /// Writes every buffered record, followed by a commit marker for the last one (see
    /// [`crate::format`]), with one write syscall and, for [`Durability::Fsync`], fdatasyncs
    /// the segment. Returns the last sequence number durable in that sense (0 if the journal is
    /// empty). With nothing appended since the last commit it writes no marker and makes no
    /// syscall, except that `Fsync` after earlier `Process` commits syncs what they wrote.
    pub fn commit(&mut self, mode: Durability) -> Result<u64, JournalError> {
        if self.poisoned {
            return Err(JournalError::Poisoned);
        }
        let last = self.next_seq - 1;
        if self.marked_seq < last {
            // `append` kept room for it in the buffer and in the segment, so it goes out in
            // the same write as the batch: no extra syscall, and it never crosses a roll.
            let at = self.buf_len;
            let marker: &mut [u8; COMMIT_MARKER_LEN] = (&mut self.buf[at..at + COMMIT_MARKER_LEN])
                .try_into()
                .expect("marker slice has the marker's length");
            seal_commit_marker(marker, last, self.last_crc, mode == Durability::Fsync);
            self.buf_len += COMMIT_MARKER_LEN;
            self.marked_seq = last;
        }
        self.flush()?;
        assert!(
            self.synced_seq <= self.written_seq && self.written_seq < self.next_seq,
            "journal sequence bookkeeping broken"
        );
        match mode {
            Durability::Process => {
                // Near the end of the segment, sync more often: the roll waits for the rest.
                let step = if self.write_off + NEAR_END_SYNC_BYTES >= self.seg_capacity {
                    NEAR_END_SYNC_STEP
                } else {
                    BACKGROUND_SYNC_BYTES
                };
                if self.write_off >= self.bg_requested_off + step {
                    self.bg
                        .request_writeback(&self.file, writeback_end(self.write_off));
                    self.bg_requested_off = self.write_off;
                }
                Ok(self.written_seq)
            }
            Durability::Fsync => {
                self.sync()?;
                Ok(self.synced_seq)
            }
        }
    }

    /// Sequence number the next `append` will return.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Last sequence number whose write returned (durable against a process crash).
    pub fn written_seq(&self) -> u64 {
        self.written_seq
    }

    /// Last sequence number covered by fdatasync (durable against power loss).
    pub fn synced_seq(&self) -> u64 {
        self.synced_seq
    }

    /// Records appended but not yet written.
    pub fn pending_records(&self) -> u64 {
        self.next_seq - 1 - self.written_seq
    }

    /// The active segment file.
    pub fn segment_path(&self) -> &Path {
        &self.seg_path
    }

    /// The journal directory (`data_dir/journal`).
    pub fn journal_dir(&self) -> &Path {
        &self.journal_dir
    }

    /// Counters of the segment rolls so far.
    pub fn roll_stats(&self) -> RollStats {
        self.stats
    }

    /// Blocks until the background preparation of the next segment, if one was asked for, has
    /// finished (for tests and benchmarks that want the next roll to find its spare).
    pub fn wait_for_spare(&self) {
        self.bg.wait_prepared();
    }

    fn flush(&mut self) -> Result<(), JournalError> {
        if self.buf_len == 0 {
            return Ok(());
        }
        // Invariant (kept in release): a batch never crosses the preallocated segment end.
        assert!(
            self.write_off + self.buf_len as u64 <= self.seg_capacity,
            "journal batch would cross the segment end"
        );
        if let Err(e) = self
            .file
            .write_all_at(&self.buf[..self.buf_len], self.write_off)
        {
            self.poisoned = true;
            return Err(JournalError::io("write", &self.seg_path, e));
        }
        self.write_off += self.buf_len as u64;
        self.buf_len = 0;
        self.written_seq = self.next_seq - 1;
        if self.bg.failed() {
            self.poisoned = true;
            return Err(JournalError::io(
                "background fdatasync",
                &self.seg_path,
                std::io::Error::other(
                    "a background fdatasync of the segment or fsync of the directory failed",
                ),
            ));
        }
        if !self.spare_pending && self.write_off >= self.prepare_at {
            self.spare_pending = self.bg.request_prepare(self.config.segment_size_bytes);
        }
        Ok(())
    }

    /// fdatasyncs the active segment and makes sure its name is durable too (the directory
    /// fsync asked for at the roll that renamed it into place), then marks everything written
    /// as synced.
    fn sync(&mut self) -> Result<(), JournalError> {
        if self.synced_seq == self.written_seq {
            return Ok(());
        }
        let generation = self.seg_dir_gen;
        if let Err(e) = self.file.sync_data().and_then(|()| {
            // A background sync running now may have consumed a write-back error of the shared
            // descriptor: wait for it to finish, then look.
            self.bg.wait_dir_and_sync(generation);
            if self.bg.failed() {
                Err(std::io::Error::other(
                    "a background fdatasync of the segment or fsync of the directory failed",
                ))
            } else {
                Ok(())
            }
        }) {
            // After a failed fdatasync the page cache state is unknown (it may have dropped the
            // dirty pages); retrying could report lost data as durable.
            self.poisoned = true;
            return Err(JournalError::io("fdatasync", &self.seg_path, e));
        }
        self.seg_dir_gen = 0;
        self.synced_seq = self.written_seq;
        Ok(())
    }
}

impl Drop for JournalWriter {
    /// Lets the background thread finish, then removes a prepared spare (recovery would
    /// remove it anyway; this keeps a cleanly closed journal free of leftovers).
    fn drop(&mut self) {
        self.bg.shutdown();
        #[cfg(test)]
        if self.crashed {
            return;
        }
        if self.spare_pending {
            let _ = std::fs::remove_file(self.journal_dir.join(SPARE_FILE_NAME));
        }
    }
}

#[cfg(test)]
mod tests;
