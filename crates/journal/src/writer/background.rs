//! The `journal-sync` helper thread: background write-back and fdatasyncs of the active
//! segment, directory fsyncs after a roll, and preparation of the spare segment (the writer's
//! module docs say when each is asked for and why).
//!
//! Role: does the slow file work the appending thread must not, on duplicates of the writer's
//! descriptors; requests never block on the work, and each kind coalesces (a request made while
//! one of its kind runs is run after it).
//!
//! Never: marks anything durable (only the writer's own fdatasync moves `synced_seq`); writes
//! back the page the appender is writing into (`writeback_end`); hides a failure (it sets
//! `failed`, and the writer is poisoned).
//!
//! Invariants: one job at a time, fdatasync first (it bounds the next roll's wait), then the
//! directory, then the spare; without the thread (spawn failed) every request is a no-op and the
//! writer does the work itself.

use super::segments::{prepare_spare, sync_dir};
use crate::error::JournalError;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Background write-back ends on a multiple of this (at least the page size of any Linux
/// system, so the page being appended to is never in the range).
pub(super) const WRITEBACK_ALIGN: u64 = 64 << 10;

/// Where the background write-back of a segment whose next write goes to `write_off` ends:
/// the last `WRITEBACK_ALIGN` boundary at or below it. Every byte below it is written and will
/// never be written again (the segment is append-only); the page holding `write_off` is not in
/// `0..writeback_end(write_off)`.
pub(super) fn writeback_end(write_off: u64) -> u64 {
    write_off & !(WRITEBACK_ALIGN - 1)
}

/// The `journal-sync` helper thread: background fdatasyncs of the active segment, directory
/// fsyncs after a roll, and preparation of the spare segment (see the module docs). Requests
/// never block on the work; each kind coalesces (a request made while one of its kind runs is
/// run after it).
pub(super) struct Background {
    shared: Arc<BgShared>,
    pub(super) thread: Option<JoinHandle<()>>,
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
pub(super) enum SyncJob {
    /// fdatasync (a new segment's header).
    Full(File),
    /// Write back `0..end` of it and wait for that (`writeback_end`: never the page being
    /// appended to).
    Below(File, u64),
}

impl SyncJob {
    /// One job for a queued one and a newer request: the newer descriptor (the active
    /// segment's), an fdatasync if either asked for one.
    pub(super) fn merge(queued: Option<SyncJob>, newer: SyncJob) -> SyncJob {
        match (queued, newer) {
            (Some(SyncJob::Full(_)), SyncJob::Below(f, _)) => SyncJob::Full(f),
            (_, newer) => newer,
        }
    }

    pub(super) fn run(&self) -> std::io::Result<()> {
        match self {
            SyncJob::Full(f) => f.sync_data(),
            SyncJob::Below(f, end) => sync_range(f, *end),
        }
    }
}

/// `sync_file_range` of `0..end`: waits for write-back under way there, starts it for every
/// dirty page and waits for it (no metadata, no device cache flush: a hint, never durability).
pub(super) fn sync_range(f: &File, end: u64) -> std::io::Result<()> {
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
    pub(super) fn start(journal_dir: &Path) -> Background {
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

    pub(super) fn failed(&self) -> bool {
        self.shared.failed.load(Ordering::Acquire)
    }

    /// Asks for an fdatasync of `file` (replacing a job queued and not yet started).
    pub(super) fn request_sync(&self, file: &File) {
        self.request(file, SyncJob::Full);
    }

    /// Asks for the write-back of `file` below `end` (merged with a job queued and not yet
    /// started: an fdatasync queued stays one).
    pub(super) fn request_writeback(&self, file: &File, end: u64) {
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
    pub(super) fn request_dir_sync(&self) -> Option<u64> {
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
    pub(super) fn wait_dir_and_sync(&self, generation: u64) {
        let mut st = self.shared.lock();
        while st.dir_done < generation || st.syncing {
            st = self.shared.wait_done(st);
        }
    }

    /// Asks for a spare segment of `size` bytes; false without the thread.
    pub(super) fn request_prepare(&self, size: u64) -> bool {
        if self.thread.is_none() {
            return false;
        }
        self.shared.lock().prepare = Some(size);
        self.shared.work.notify_one();
        true
    }

    /// The finished spare (or why its preparation failed), if there is one. Never waits.
    pub(super) fn take_spare(&self) -> Option<Result<File, JournalError>> {
        self.shared.lock().spare.take()
    }

    /// Waits until no spare preparation is queued or running.
    pub(super) fn wait_prepared(&self) {
        let mut st = self.shared.lock();
        while st.prepare.is_some() || st.preparing {
            st = self.shared.wait_done(st);
        }
    }

    /// Lets the thread finish its queued work, then stops it.
    pub(super) fn shutdown(&mut self) {
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
