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
//! zero-filled by recovery), so the reader's end rule holds; a segment is fdatasynced before the
//! next one is created; a segment file only gets its final name after its header is on disk.
//!
//! Background write-back: in `Process` mode nothing syncs the active segment until it rolls, so
//! the roll's fdatasync would have to flush the whole segment (64 MiB: tens of ms on a virtio
//! disk) on the appending thread. So every [`BACKGROUND_SYNC_BYTES`] written, a helper thread
//! (`journal-sync`, parked otherwise) fdatasyncs the segment on a duplicate of its descriptor,
//! and a roll only waits for the last few MiB. The background sync never marks anything durable
//! (`synced_seq` moves only on the writer's own fdatasync); if it fails, the writer is poisoned
//! (the shared descriptor has consumed the error, so a later fdatasync could not be trusted).
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
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Bytes written to the active segment between two background fdatasyncs (see the module docs).
pub const BACKGROUND_SYNC_BYTES: u64 = 4 << 20;

use crate::error::JournalError;
use crate::format::{
    encode_segment_header, seal_record, segment_file_name, JOURNAL_SUBDIR, LOCK_FILE,
    PAYLOAD_LEN_MAX, RECORD_HEADER_LEN, SEGMENT_HEADER_LEN, TEMP_SUFFIX,
};
use crate::reader::{list_segments, JournalReader, Record, SegmentSummary, TornTail};

/// When `commit` may report records as durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Durability {
    /// After the write syscall returned: the bytes are in the kernel's page cache, so they
    /// survive a crash or kill -9 of the process, but not a power loss or kernel crash.
    Process,
    /// After fdatasync returned: the bytes are on stable storage and survive power loss.
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
    /// empty segment hold at least one record of `payload_len_max` bytes.
    pub fn validate(&self) -> Result<(), JournalError> {
        let record_max = RECORD_HEADER_LEN + self.payload_len_max as usize;
        if self.payload_len_max > PAYLOAD_LEN_MAX {
            return Err(JournalError::InvalidConfig(format!(
                "payload_len_max {} exceeds the format maximum {PAYLOAD_LEN_MAX}",
                self.payload_len_max
            )));
        }
        if self.batch_buffer_bytes < record_max {
            return Err(JournalError::InvalidConfig(format!(
                "batch_buffer_bytes {} is smaller than one maximal record ({record_max})",
                self.batch_buffer_bytes
            )));
        }
        if self.segment_size_bytes < (SEGMENT_HEADER_LEN + record_max) as u64 {
            return Err(JournalError::InvalidConfig(format!(
                "segment_size_bytes {} cannot hold one maximal record ({} with the header)",
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
    poisoned: bool,
    /// Segment offset up to which a background fdatasync was last requested.
    bg_requested_off: u64,
    bg: BackgroundSync,
}

/// The `journal-sync` helper thread: fdatasyncs the segments it is handed, one at a time.
struct BackgroundSync {
    tx: Option<SyncSender<File>>,
    /// A sync is queued or running (at most one).
    busy: Arc<AtomicBool>,
    /// A background fdatasync failed.
    failed: Arc<AtomicBool>,
    /// Held by the thread while it syncs.
    running: Arc<Mutex<()>>,
    thread: Option<JoinHandle<()>>,
}

impl BackgroundSync {
    fn start() -> BackgroundSync {
        let (tx, rx) = sync_channel::<File>(1);
        let busy = Arc::new(AtomicBool::new(false));
        let failed = Arc::new(AtomicBool::new(false));
        let running = Arc::new(Mutex::new(()));
        let (b, f, r) = (busy.clone(), failed.clone(), running.clone());
        let thread = std::thread::Builder::new()
            .name("journal-sync".into())
            .spawn(move || {
                for file in rx {
                    let guard = r.lock();
                    if file.sync_data().is_err() {
                        f.store(true, Ordering::Release);
                    }
                    drop(guard);
                    b.store(false, Ordering::Release);
                }
            })
            .ok();
        BackgroundSync {
            // Without the thread (spawn failed), rolls simply sync everything themselves.
            tx: thread.as_ref().map(|_| tx),
            busy,
            failed,
            running,
            thread,
        }
    }

    /// Asks for an fdatasync of `file` unless one is already queued or running.
    fn request(&self, file: &File) {
        let Some(tx) = &self.tx else { return };
        if self.busy.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(dup) = file.try_clone() else {
            self.busy.store(false, Ordering::Release);
            return;
        };
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = tx.try_send(dup) {
            self.busy.store(false, Ordering::Release);
        }
    }
}

impl Drop for BackgroundSync {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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
                file.sync_all()
                    .map_err(|e| JournalError::io("fsync", &path, e))?;
                let next_seq = last.last_seq.map_or(last.first_seq, |s| s + 1);
                (file, path, capacity, last.end_offset, next_seq)
            }
        };
        let last_seq = next_seq - 1;
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
                poisoned: false,
                bg_requested_off: write_off,
                bg: BackgroundSync::start(),
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
        if self.write_off + (self.buf_len + total) as u64 > self.seg_capacity {
            self.roll()?;
        }
        if self.buf_len + total > self.buf.len() {
            self.flush()?;
        }
        let seq = self.next_seq;
        let rec = &mut self.buf[self.buf_len..self.buf_len + total];
        encode(&mut rec[RECORD_HEADER_LEN..]);
        seal_record(rec, seq, timestamp_ns, kind);
        self.buf_len += total;
        self.next_seq += 1;
        Ok(seq)
    }

    /// Writes every buffered record with one write syscall and, for [`Durability::Fsync`],
    /// fdatasyncs the segment. Returns the last sequence number durable in that sense (0 if the
    /// journal is empty). With nothing buffered it makes no syscall, except that `Fsync` after
    /// earlier `Process` commits syncs what they wrote.
    pub fn commit(&mut self, mode: Durability) -> Result<u64, JournalError> {
        if self.poisoned {
            return Err(JournalError::Poisoned);
        }
        self.flush()?;
        assert!(
            self.synced_seq <= self.written_seq && self.written_seq < self.next_seq,
            "journal sequence bookkeeping broken"
        );
        match mode {
            Durability::Process => {
                if self.write_off >= self.bg_requested_off + BACKGROUND_SYNC_BYTES {
                    self.bg.request(&self.file);
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
        if self.bg.failed.load(Ordering::Acquire) {
            self.poisoned = true;
            return Err(JournalError::io(
                "background fdatasync",
                &self.seg_path,
                std::io::Error::other("a background fdatasync of the segment failed"),
            ));
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), JournalError> {
        if self.synced_seq == self.written_seq {
            return Ok(());
        }
        if let Err(e) = self.file.sync_data().and_then(|()| {
            // A background sync running now may have consumed a write-back error of the shared
            // descriptor: wait for it to finish, then look.
            drop(self.bg.running.lock());
            if self.bg.failed.load(Ordering::Acquire) {
                Err(std::io::Error::other(
                    "a background fdatasync of the segment failed",
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
        self.synced_seq = self.written_seq;
        Ok(())
    }

    /// Seals the active segment (write + fdatasync) and creates the next one.
    fn roll(&mut self) -> Result<(), JournalError> {
        self.flush()?;
        self.sync()?;
        let (file, path) = match create_segment(
            &self.journal_dir,
            self.next_seq,
            self.config.segment_size_bytes,
        ) {
            Ok(x) => x,
            Err(e) => {
                self.poisoned = true;
                return Err(e);
            }
        };
        self.file = file;
        self.seg_path = path;
        self.seg_capacity = self.config.segment_size_bytes;
        self.write_off = SEGMENT_HEADER_LEN as u64;
        self.bg_requested_off = self.write_off;
        Ok(())
    }
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
