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
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Bytes written to the active segment between two background fdatasyncs (see the module docs).
pub const BACKGROUND_SYNC_BYTES: u64 = 4 << 20;

/// The last part of a segment in which background fdatasyncs are asked for every
/// [`NEAR_END_SYNC_STEP`] bytes, so that a roll's own fdatasync has little left to flush.
pub const NEAR_END_SYNC_BYTES: u64 = 512 << 10;

/// Bytes written between two background fdatasyncs near the end of a segment.
pub const NEAR_END_SYNC_STEP: u64 = 64 << 10;

/// Background write-back ends on a multiple of this (at least the page size of any Linux
/// system, so the page being appended to is never in the range).
const WRITEBACK_ALIGN: u64 = 64 << 10;

/// Where the background write-back of a segment whose next write goes to `write_off` ends:
/// the last `WRITEBACK_ALIGN` boundary at or below it. Every byte below it is written and will
/// never be written again (the segment is append-only); the page holding `write_off` is not in
/// `0..writeback_end(write_off)`.
fn writeback_end(write_off: u64) -> u64 {
    write_off & !(WRITEBACK_ALIGN - 1)
}

use crate::error::JournalError;
use crate::format::{
    encode_segment_header, seal_commit_marker, seal_record, segment_file_name, COMMIT_MARKER_LEN,
    FORMAT_VERSION, JOURNAL_SUBDIR, LOCK_FILE, PAYLOAD_LEN_MAX, RECORD_HEADER_LEN,
    SEGMENT_HEADER_LEN, SPARE_FILE_NAME, TEMP_SUFFIX,
};
use crate::reader::{list_segments, JournalReader, Record, SegmentSummary, TornTail};

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

/// The `journal-sync` helper thread: background fdatasyncs of the active segment, directory
/// fsyncs after a roll, and preparation of the spare segment (see the module docs). Requests
/// never block on the work; each kind coalesces (a request made while one of its kind runs is
/// run after it).
struct Background {
    shared: Arc<BgShared>,
    thread: Option<JoinHandle<()>>,
}

struct BgShared {
    state: Mutex<BgState>,
    /// Signalled when work is queued (the thread waits on it).
    work: Condvar,
    /// Signalled when a job finished (the writer waits on it).
    done: Condvar,
    /// A background fdatasync or directory fsync failed.
    failed: AtomicBool,
}

/// What the helper does to the active segment next.
enum SyncJob {
    /// fdatasync (a new segment's header).
    Full(File),
    /// Write back `0..end` of it and wait for that (`writeback_end`: never the page being
    /// appended to).
    Below(File, u64),
}

impl SyncJob {
    /// One job for a queued one and a newer request: the newer descriptor (the active
    /// segment's), an fdatasync if either asked for one.
    fn merge(queued: Option<SyncJob>, newer: SyncJob) -> SyncJob {
        match (queued, newer) {
            (Some(SyncJob::Full(_)), SyncJob::Below(f, _)) => SyncJob::Full(f),
            (_, newer) => newer,
        }
    }

    fn run(&self) -> std::io::Result<()> {
        match self {
            SyncJob::Full(f) => f.sync_data(),
            SyncJob::Below(f, end) => sync_range(f, *end),
        }
    }
}

/// `sync_file_range` of `0..end`: waits for write-back under way there, starts it for every
/// dirty page and waits for it (no metadata, no device cache flush: a hint, never durability).
fn sync_range(f: &File, end: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let Ok(len) = libc::off64_t::try_from(end) else {
        return f.sync_data();
    };
    if len == 0 {
        return Ok(());
    }
    // SAFETY: a plain syscall on a descriptor `f` keeps open; no memory is passed. (Neither
    // std nor rustix wraps `sync_file_range`.)
    #[allow(unsafe_code)]
    let r = unsafe {
        libc::sync_file_range(
            f.as_raw_fd(),
            0,
            len,
            libc::SYNC_FILE_RANGE_WAIT_BEFORE
                | libc::SYNC_FILE_RANGE_WRITE
                | libc::SYNC_FILE_RANGE_WAIT_AFTER,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[derive(Default)]
struct BgState {
    /// What to do to the active segment next (on a duplicate descriptor).
    sync: Option<SyncJob>,
    /// A sync job is running.
    syncing: bool,
    /// Directory fsyncs asked for and done, as generations.
    dir_requested: u64,
    dir_done: u64,
    /// Size of a spare segment to prepare.
    prepare: Option<u64>,
    preparing: bool,
    /// A finished preparation, until a roll takes it.
    spare: Option<Result<File, JournalError>>,
    stop: bool,
}

impl BgShared {
    fn lock(&self) -> MutexGuard<'_, BgState> {
        // The thread never panics while holding the lock; if it did, the state is still
        // consistent (plain fields), so carry on with it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait_done<'a>(&self, guard: MutexGuard<'a, BgState>) -> MutexGuard<'a, BgState> {
        self.done.wait(guard).unwrap_or_else(|e| e.into_inner())
    }

    /// The thread's loop: one job at a time, fdatasync first (it bounds the next roll's wait),
    /// then the directory, then the spare.
    fn run(&self, journal_dir: &Path) {
        let mut st = self.lock();
        loop {
            if let Some(job) = st.sync.take() {
                st.syncing = true;
                drop(st);
                if job.run().is_err() {
                    self.failed.store(true, Ordering::Release);
                }
                drop(job);
                st = self.lock();
                st.syncing = false;
            } else if st.dir_done < st.dir_requested {
                let generation = st.dir_requested;
                drop(st);
                if sync_dir(journal_dir).is_err() {
                    self.failed.store(true, Ordering::Release);
                }
                st = self.lock();
                st.dir_done = generation;
            } else if let Some(size) = st.prepare.take() {
                st.preparing = true;
                drop(st);
                let spare = prepare_spare(journal_dir, size);
                st = self.lock();
                st.preparing = false;
                st.spare = Some(spare);
            } else if st.stop {
                return;
            } else {
                st = self.work.wait(st).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            self.done.notify_all();
        }
    }
}

impl Background {
    fn start(journal_dir: &Path) -> Background {
        let shared = Arc::new(BgShared {
            state: Mutex::new(BgState::default()),
            work: Condvar::new(),
            done: Condvar::new(),
            failed: AtomicBool::new(false),
        });
        let (s, dir) = (shared.clone(), journal_dir.to_path_buf());
        let thread = std::thread::Builder::new()
            .name("journal-sync".into())
            .spawn(move || s.run(&dir))
            .ok();
        // Without the thread (spawn failed), rolls create segments and sync everything
        // themselves.
        Background { shared, thread }
    }

    fn failed(&self) -> bool {
        self.shared.failed.load(Ordering::Acquire)
    }

    /// Asks for an fdatasync of `file` (replacing a job queued and not yet started).
    fn request_sync(&self, file: &File) {
        self.request(file, SyncJob::Full);
    }

    /// Asks for the write-back of `file` below `end` (merged with a job queued and not yet
    /// started: an fdatasync queued stays one).
    fn request_writeback(&self, file: &File, end: u64) {
        self.request(file, |f| SyncJob::Below(f, end));
    }

    fn request(&self, file: &File, job: impl FnOnce(File) -> SyncJob) {
        if self.thread.is_none() {
            return;
        }
        let Ok(dup) = file.try_clone() else { return };
        let mut st = self.shared.lock();
        let queued = st.sync.take();
        st.sync = Some(SyncJob::merge(queued, job(dup)));
        drop(st);
        self.shared.work.notify_one();
    }

    /// Asks for a directory fsync; returns its generation (`None` without the thread).
    fn request_dir_sync(&self) -> Option<u64> {
        self.thread.as_ref()?;
        let mut st = self.shared.lock();
        st.dir_requested += 1;
        let generation = st.dir_requested;
        drop(st);
        self.shared.work.notify_one();
        Some(generation)
    }

    /// Waits until directory fsync `generation` has run and no fdatasync is running (one that
    /// runs now may have consumed a write-back error of the shared descriptor).
    fn wait_dir_and_sync(&self, generation: u64) {
        let mut st = self.shared.lock();
        while st.dir_done < generation || st.syncing {
            st = self.shared.wait_done(st);
        }
    }

    /// Asks for a spare segment of `size` bytes; false without the thread.
    fn request_prepare(&self, size: u64) -> bool {
        if self.thread.is_none() {
            return false;
        }
        self.shared.lock().prepare = Some(size);
        self.shared.work.notify_one();
        true
    }

    /// The finished spare (or why its preparation failed), if there is one. Never waits.
    fn take_spare(&self) -> Option<Result<File, JournalError>> {
        self.shared.lock().spare.take()
    }

    /// Waits until no spare preparation is queued or running.
    fn wait_prepared(&self) {
        let mut st = self.shared.lock();
        while st.prepare.is_some() || st.preparing {
            st = self.shared.wait_done(st);
        }
    }

    /// Lets the thread finish its queued work, then stops it.
    fn shutdown(&mut self) {
        if let Some(t) = self.thread.take() {
            self.shared.lock().stop = true;
            self.shared.work.notify_one();
            let _ = t.join();
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl JournalWriter {
    /// Opens (creating if needed) the journal in `data_dir/journal`, runs recovery and returns
    /// the writer positioned after the last valid record.
    ///
    /// Recovery reads and verifies every segment (see [`crate::reader`] for the end rule),
    /// removes leftover temporary segment files, and zero-fills a torn tail of the last
    /// segment (fdatasynced before returning). Corruption before the tail is an error naming
    /// the segment file and byte offset; nothing is modified in that case.
    pub fn open(
        data_dir: &Path,
        config: JournalConfig,
    ) -> Result<(JournalWriter, RecoveryReport), JournalError> {
        Self::open_replaying(data_dir, config, u64::MAX, |_| Ok(()))
    }

    /// [`JournalWriter::open`] that also hands every valid record with `seq >= from_seq` to
    /// `on_record` during the recovery scan, so start-up reads the journal once: load the
    /// snapshot at `S`, then `open_replaying(dir, config, S + 1, apply)`.
    ///
    /// Records are delivered in order as they are verified; a torn tail is never delivered.
    /// If corruption is found after some records were delivered, the error is returned and the
    /// caller must discard the state it built. An error from `on_record` stops the scan and
    /// is returned unchanged; the journal is then not modified.
    pub fn open_replaying<E: From<JournalError>>(
        data_dir: &Path,
        config: JournalConfig,
        from_seq: u64,
        mut on_record: impl FnMut(&Record<'_>) -> Result<(), E>,
    ) -> Result<(JournalWriter, RecoveryReport), E> {
        config.validate()?;
        let journal_dir = data_dir.join(JOURNAL_SUBDIR);
        std::fs::create_dir_all(&journal_dir)
            .map_err(|e| JournalError::io("create directory", &journal_dir, e))?;
        let lock = lock_journal(&journal_dir)?;

        let mut report = RecoveryReport::default();
        let (_, temps) = list_segments(data_dir)?;
        let mut reader = JournalReader::open(data_dir, 0)?;
        // The lock is held: no writer fills the zero rest of a segment while it is checked.
        reader.drop_zero_tail = true;
        while let Some(rec) = reader.next_record()? {
            if report.first_seq.is_none() {
                report.first_seq = Some(rec.seq);
            }
            report.last_seq = Some(rec.seq);
            report.records += 1;
            if rec.seq >= from_seq {
                on_record(&rec)?;
            }
        }
        report.segments = reader.summaries().to_vec();
        report.truncated = reader.torn_tail().cloned();

        for t in temps {
            std::fs::remove_file(&t).map_err(|e| JournalError::io("remove", &t, e))?;
            report.removed_temp_files.push(t);
        }

        let buf = vec![0u8; config.batch_buffer_bytes].into_boxed_slice();
        let (file, seg_path, seg_capacity, write_off, next_seq) = match report.segments.last() {
            None => {
                report.created = true;
                let (file, path) = create_segment(&journal_dir, 1, config.segment_size_bytes)?;
                (
                    file,
                    path,
                    config.segment_size_bytes,
                    SEGMENT_HEADER_LEN as u64,
                    1,
                )
            }
            Some(last) => {
                let path = last.path.clone();
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&path)
                    .map_err(|e| JournalError::io("open", &path, e))?;
                let capacity = last.file_len.max(config.segment_size_bytes);
                if report.truncated.is_some() {
                    // Zero-fill everything after the last valid record, so the invariant "bytes
                    // past the write position are zero" holds again.
                    file.set_len(last.end_offset)
                        .map_err(|e| JournalError::io("truncate", &path, e))?;
                }
                preallocate(&file, &path, capacity)?;
                // An older format's segment without records gets the current header (it holds
                // nothing a newer frame could be confused with).
                let older = last.format_version != FORMAT_VERSION;
                if last.header_unwritten || (older && last.records == 0) {
                    file.write_all_at(&encode_segment_header(last.first_seq), 0)
                        .map_err(|e| JournalError::io("write", &path, e))?;
                    if last.header_unwritten {
                        report.header_rewritten = Some(path.clone());
                    }
                }
                file.sync_all()
                    .map_err(|e| JournalError::io("fsync", &path, e))?;
                let next_seq = last.last_seq.map_or(last.first_seq, |s| s + 1);
                if older && last.records > 0 {
                    // Never add commit markers to an older format's segment: continue in a
                    // new one (the old one is synced above, so it is sealed).
                    let (file, new_path) =
                        create_segment(&journal_dir, next_seq, config.segment_size_bytes)?;
                    report.new_format_segment = Some(new_path.clone());
                    (
                        file,
                        new_path,
                        config.segment_size_bytes,
                        SEGMENT_HEADER_LEN as u64,
                        next_seq,
                    )
                } else {
                    (file, path, capacity, last.end_offset, next_seq)
                }
            }
        };
        let last_seq = next_seq - 1;
        let bg = Background::start(&journal_dir);
        let prepare_at = if bg.thread.is_some() {
            spare_threshold(seg_capacity)
        } else {
            u64::MAX
        };
        Ok((
            JournalWriter {
                journal_dir,
                config,
                _lock: lock,
                file,
                seg_path,
                seg_capacity,
                write_off,
                buf,
                buf_len: 0,
                next_seq,
                written_seq: last_seq,
                synced_seq: last_seq,
                marked_seq: last_seq,
                last_crc: 0,
                poisoned: false,
                bg_requested_off: write_off,
                seg_dir_gen: 0,
                prepare_at,
                spare_pending: false,
                stats: RollStats::default(),
                bg,
                #[cfg(test)]
                crash_at: None,
                #[cfg(test)]
                crashed: false,
            },
            report,
        ))
    }

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

    /// Seals the active segment (write + fdatasync, see `sync`) and switches to the next one:
    /// the prepared spare if it is ready, else one created inline.
    fn roll(&mut self) -> Result<(), JournalError> {
        self.flush()?;
        self.sync()?;
        crash_point!(self, CrashPoint::OldSynced);
        let first_seq = self.next_seq;
        let spare = if self.spare_pending {
            self.bg.take_spare()
        } else {
            None
        };
        match spare {
            Some(Ok(file)) => {
                self.spare_pending = false;
                self.install_spare(file, first_seq)?;
                self.stats.prepared += 1;
            }
            Some(Err(_)) => {
                // The inline creation below reports the problem if it persists.
                self.spare_pending = false;
                self.stats.prepare_failures += 1;
                self.create_inline(first_seq)?;
            }
            // Not asked for, or still being prepared (it serves the next roll then).
            None => self.create_inline(first_seq)?,
        }
        self.stats.rolls += 1;
        self.seg_capacity = self.config.segment_size_bytes;
        self.write_off = SEGMENT_HEADER_LEN as u64;
        self.bg_requested_off = self.write_off;
        if self.bg.thread.is_some() {
            self.prepare_at = spare_threshold(self.seg_capacity);
        }
        Ok(())
    }

    /// Makes the prepared spare segment `first_seq`: header, rename, then the background
    /// fdatasync (header) and directory fsync (name) that `sync` and the next roll wait for.
    fn install_spare(&mut self, file: File, first_seq: u64) -> Result<(), JournalError> {
        let spare_path = self.journal_dir.join(SPARE_FILE_NAME);
        let path = self.journal_dir.join(segment_file_name(first_seq));
        if let Err(e) = file.write_all_at(&encode_segment_header(first_seq), 0) {
            self.poisoned = true;
            return Err(JournalError::io("write", &spare_path, e));
        }
        crash_point!(self, CrashPoint::SpareHeaderWritten);
        if let Err(e) = std::fs::rename(&spare_path, &path) {
            self.poisoned = true;
            return Err(JournalError::io("rename", &spare_path, e));
        }
        crash_point!(self, CrashPoint::SpareRenamed);
        self.file = file;
        self.seg_path = path;
        self.bg.request_sync(&self.file);
        match self.bg.request_dir_sync() {
            Some(generation) => self.seg_dir_gen = generation,
            None => {
                // Unreachable in practice (a spare exists only with the thread); stay correct.
                if let Err(e) = sync_dir(&self.journal_dir) {
                    self.poisoned = true;
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Creates segment `first_seq` on the appending thread (header and name durable).
    fn create_inline(&mut self, first_seq: u64) -> Result<(), JournalError> {
        match create_segment(&self.journal_dir, first_seq, self.config.segment_size_bytes) {
            Ok((file, path)) => {
                self.file = file;
                self.seg_path = path;
                self.seg_dir_gen = 0;
                self.stats.inline_created += 1;
                Ok(())
            }
            Err(e) => {
                self.poisoned = true;
                Err(e)
            }
        }
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

/// Offset of a segment of `capacity` bytes from which its successor is prepared: half full.
fn spare_threshold(capacity: u64) -> u64 {
    let header = SEGMENT_HEADER_LEN as u64;
    header + capacity.saturating_sub(header) / 2
}

/// Takes the journal's exclusive lock (flock on `LOCK`), held until the returned file closes.
pub(crate) fn lock_journal(journal_dir: &Path) -> Result<File, JournalError> {
    let path = journal_dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| JournalError::io("open", &path, e))?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(file),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(JournalError::Locked { path }),
        Err(e) => Err(JournalError::io("flock", &path, e.into())),
    }
}

/// Creates segment `first_seq`: preallocated `<name>.tmp` with its header, fsynced, renamed to
/// its final name, directory fsynced. A crash at any point leaves either no segment or a
/// complete empty one (plus perhaps a `.tmp` that recovery removes).
fn create_segment(
    journal_dir: &Path,
    first_seq: u64,
    size: u64,
) -> Result<(File, PathBuf), JournalError> {
    let name = segment_file_name(first_seq);
    let path = journal_dir.join(&name);
    let tmp = journal_dir.join(format!("{name}{TEMP_SUFFIX}"));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .map_err(|e| JournalError::io("create", &tmp, e))?;
    preallocate(&file, &tmp, size)?;
    file.write_all_at(&encode_segment_header(first_seq), 0)
        .map_err(|e| JournalError::io("write", &tmp, e))?;
    file.sync_all()
        .map_err(|e| JournalError::io("fsync", &tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| JournalError::io("rename", &tmp, e))?;
    sync_dir(journal_dir)?;
    Ok((file, path))
}

/// Prepares the spare segment (background thread): `spare.seg.tmp`, preallocated to `size`,
/// fsynced (so its length is durable before it can be renamed into place), no header.
fn prepare_spare(journal_dir: &Path, size: u64) -> Result<File, JournalError> {
    let path = journal_dir.join(SPARE_FILE_NAME);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .map_err(|e| JournalError::io("create", &path, e))?;
    preallocate(&file, &path, size)?;
    file.sync_all()
        .map_err(|e| JournalError::io("fsync", &path, e))?;
    Ok(file)
}

/// Allocates blocks for `0..size` (zero-filled, file length `size`), so later writes need no
/// block allocation and fdatasync no size update. Falls back to a sparse `set_len` where the
/// filesystem has no fallocate.
fn preallocate(file: &File, path: &Path, size: u64) -> Result<(), JournalError> {
    match rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), 0, size) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::OPNOTSUPP) | Err(rustix::io::Errno::NOSYS) => {
            let len = file
                .metadata()
                .map_err(|e| JournalError::io("stat", path, e))?
                .len();
            if len < size {
                file.set_len(size)
                    .map_err(|e| JournalError::io("extend", path, e))?;
            }
            Ok(())
        }
        Err(e) => Err(JournalError::io("fallocate", path, e.into())),
    }
}

/// fsyncs a directory so that entries created or renamed in it survive power loss.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), JournalError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| JournalError::io("fsync directory", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> JournalConfig {
        JournalConfig {
            segment_size_bytes: 4096,
            batch_buffer_bytes: 2048,
            payload_len_max: 512,
        }
    }

    /// Payload of record `seq`: 60..=160 bytes derived from `seq`.
    fn payload(seq: u64) -> Vec<u8> {
        let len = 60 + (seq * 37 % 101) as usize;
        (0..len).map(|i| (seq as u8) ^ (i as u8) | 1).collect()
    }

    fn append(w: &mut JournalWriter) -> Result<u64, JournalError> {
        let seq = w.next_seq();
        w.append(1, seq, &payload(seq))
    }

    /// Every record of the journal in `dir` is `1..=last` with the expected payloads.
    fn check_records(dir: &Path, last: u64) {
        let mut r = JournalReader::open(dir, 1).unwrap();
        let mut n = 0;
        while let Some(rec) = r.next_record().unwrap() {
            n += 1;
            assert_eq!((rec.seq, rec.timestamp_ns), (n, n));
            assert_eq!(rec.payload, payload(n).as_slice(), "record {n}");
        }
        assert_eq!(n, last);
        assert!(r.torn_tail().is_none());
    }

    fn spare(dir: &Path) -> PathBuf {
        dir.join(JOURNAL_SUBDIR).join(SPARE_FILE_NAME)
    }

    #[test]
    fn a_crash_at_every_step_of_a_roll_recovers_every_written_record() {
        let points = [
            CrashPoint::OldSynced,
            CrashPoint::SpareHeaderWritten,
            CrashPoint::SpareRenamed,
        ];
        for mode in [Durability::Process, Durability::Fsync] {
            for point in points {
                let what = format!("{mode:?} crash at {point:?}");
                let dir = tempfile::tempdir().unwrap();
                let (mut w, _) = JournalWriter::open(dir.path(), config()).unwrap();
                // Two rolls through prepared spares first, then fill past half and wait for
                // the third spare.
                while w.roll_stats().rolls < 2 || w.write_off < w.prepare_at {
                    append(&mut w).unwrap();
                    w.commit(mode).unwrap();
                    w.wait_for_spare();
                }
                assert_eq!(w.roll_stats().prepared, 2, "{what}");
                assert!(spare(dir.path()).exists(), "{what}");
                w.crash_at = Some(point);
                // No commit from here: the roll's own flush writes what is pending.
                let err = loop {
                    if let Err(e) = append(&mut w) {
                        break e;
                    }
                };
                assert!(
                    matches!(
                        err,
                        JournalError::Io {
                            op: "simulated crash",
                            ..
                        }
                    ),
                    "{what}: {err}"
                );
                let last = w.next_seq() - 1;
                assert_eq!(w.written_seq(), last, "{what}: the roll wrote every record");
                let old_segment = w.segment_path().to_path_buf();
                drop(w);

                let renamed = dir
                    .path()
                    .join(JOURNAL_SUBDIR)
                    .join(segment_file_name(last + 1));
                assert_eq!(
                    spare(dir.path()).exists(),
                    point != CrashPoint::SpareRenamed,
                    "{what}"
                );
                assert_eq!(
                    renamed.exists(),
                    point == CrashPoint::SpareRenamed,
                    "{what}"
                );
                if point == CrashPoint::SpareHeaderWritten {
                    // The spare holds a valid header and is still never read as a segment.
                    let bytes = std::fs::read(spare(dir.path())).unwrap();
                    let header = crate::format::decode_segment_header(&bytes[..32]);
                    assert_eq!(header, Ok(last + 1), "{what}");
                }
                check_records(dir.path(), last);

                let (mut w, report) = JournalWriter::open(dir.path(), config()).unwrap();
                assert_eq!(report.last_seq, Some(last), "{what}");
                assert!(report.truncated.is_none(), "{what}");
                assert!(report.header_rewritten.is_none(), "{what}");
                if point == CrashPoint::SpareRenamed {
                    // An empty complete segment after the last record: writing goes on in it.
                    assert!(report.removed_temp_files.is_empty(), "{what}");
                    let s = report.segments.last().unwrap();
                    assert_eq!((s.first_seq, s.records), (last + 1, 0), "{what}");
                    assert_eq!(w.segment_path(), renamed, "{what}");
                } else {
                    assert_eq!(report.removed_temp_files, vec![spare(dir.path())], "{what}");
                    assert_eq!(w.segment_path(), old_segment, "{what}");
                }
                // Appending continues across more rolls, prepared and inline.
                for i in 0..120 {
                    append(&mut w).unwrap();
                    w.commit(mode).unwrap();
                    if i % 2 == 0 {
                        w.wait_for_spare();
                    }
                }
                let total = w.next_seq() - 1;
                let stats = w.roll_stats();
                assert!(stats.rolls >= 4 && stats.prepared >= 1, "{what}: {stats:?}");
                drop(w);
                assert!(
                    !spare(dir.path()).exists(),
                    "{what}: close removes the spare"
                );
                check_records(dir.path(), total);
            }
        }
    }

    #[test]
    fn background_writeback_stops_short_of_the_page_being_appended_to() {
        for off in [
            0,
            32,
            4095,
            4096,
            65_535,
            65_536,
            65_537,
            5 << 20,
            (64 << 20) - 1,
        ] {
            let end = writeback_end(off);
            assert_eq!(end % WRITEBACK_ALIGN, 0, "{off}");
            assert!(end <= off && off - end < WRITEBACK_ALIGN, "{off} -> {end}");
            // The 4 KiB page holding `off` (the next write's) is wholly above the range.
            assert!(off / 4096 * 4096 >= end, "{off} -> {end}");
        }
    }

    #[test]
    fn a_queued_fdatasync_is_never_weakened_to_a_writeback() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str| File::create(dir.path().join(name)).unwrap();
        let full = SyncJob::merge(None, SyncJob::Full(file("a")));
        let kept = SyncJob::merge(Some(full), SyncJob::Below(file("b"), 8192));
        assert!(matches!(kept, SyncJob::Full(_)));
        let later = SyncJob::merge(
            Some(SyncJob::Below(file("c"), 4096)),
            SyncJob::Below(file("d"), 65_536),
        );
        assert!(matches!(later, SyncJob::Below(_, 65_536)));
        let stronger = SyncJob::merge(Some(later), SyncJob::Full(file("e")));
        assert!(matches!(stronger, SyncJob::Full(_)));
        for job in [kept, stronger, SyncJob::Below(file("f"), 0)] {
            job.run().unwrap();
        }
        // A range past the end of the file is no error either.
        let f = file("g");
        f.write_all_at(&[1; 10_000], 0).unwrap();
        sync_range(&f, writeback_end(1 << 20)).unwrap();
    }

    #[test]
    fn process_commits_past_several_background_writebacks_keep_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let config = JournalConfig {
            segment_size_bytes: 16 << 20,
            batch_buffer_bytes: 64 << 10,
            payload_len_max: 512,
        };
        let (mut w, _) = JournalWriter::open(dir.path(), config).unwrap();
        // About 3.5 segments of 16 MiB: background write-backs every 4 MiB and every 64 KiB near
        // each segment's end, rolls in between.
        while w.roll_stats().rolls < 3 || w.write_off < 8 << 20 {
            for _ in 0..64 {
                append(&mut w).unwrap();
            }
            w.commit(Durability::Process).unwrap();
        }
        assert!(!w.bg.failed());
        let last = w.next_seq() - 1;
        drop(w);
        check_records(dir.path(), last);
    }

    #[test]
    fn a_failed_preparation_falls_back_to_inline_creation() {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, _) = JournalWriter::open(dir.path(), config()).unwrap();
        // A directory in the spare's place makes the preparation fail.
        std::fs::create_dir(spare(dir.path())).unwrap();
        while w.roll_stats().rolls < 3 {
            append(&mut w).unwrap();
            w.commit(Durability::Process).unwrap();
            w.wait_for_spare();
        }
        let stats = w.roll_stats();
        assert_eq!(stats.prepared, 0);
        assert_eq!(stats.inline_created, 3);
        assert!(stats.prepare_failures >= 2, "{stats:?}");
        let last = w.next_seq() - 1;
        drop(w);
        std::fs::remove_dir(spare(dir.path())).unwrap();
        check_records(dir.path(), last);
    }

    #[test]
    fn a_roll_without_a_ready_spare_creates_inline_and_the_spare_serves_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, _) = JournalWriter::open(dir.path(), config()).unwrap();
        // A preparation that is still running at the roll (a slow disk): pending, not ready.
        w.prepare_at = u64::MAX;
        w.spare_pending = true;
        while w.roll_stats().rolls < 1 {
            append(&mut w).unwrap();
            w.commit(Durability::Fsync).unwrap();
        }
        assert_eq!(w.roll_stats().inline_created, 1);
        assert!(w.spare_pending, "the spare still serves the next roll");
        // ... which it does once it is finished.
        assert!(w.bg.request_prepare(w.config.segment_size_bytes));
        w.wait_for_spare();
        while w.roll_stats().rolls < 2 {
            append(&mut w).unwrap();
            w.commit(Durability::Fsync).unwrap();
        }
        assert_eq!(w.roll_stats().prepared, 1, "{:?}", w.roll_stats());
        let last = w.synced_seq();
        assert_eq!(last, w.next_seq() - 1);
        drop(w);
        check_records(dir.path(), last);
    }
}
