//! Segment files: the roll from one segment to the next, and creating, preallocating and
//! syncing segment files.
//!
//! Role: seals the active segment (write and fdatasync) and switches to the prepared spare
//! (header, rename, background syncs) or, if none is ready, to a segment created inline; creates
//! segments and spares; fsyncs the directory.
//!
//! Never: writes a record to a segment before its rename returned; gives a segment its final name
//! before its header is written; leaves a half-created segment under a segment name (a crash
//! leaves at most a `*.seg.tmp`, which recovery removes).
//!
//! Invariants: a segment is fdatasynced (and its directory entry fsynced) before any record is
//! written to the next one; a failed step poisons the writer.

#[cfg(test)]
use super::CrashPoint;
use super::JournalWriter;
use crate::error::JournalError;
use crate::format::{
    encode_segment_header, segment_file_name, SEGMENT_HEADER_LEN, SPARE_FILE_NAME, TEMP_SUFFIX,
};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

impl JournalWriter {
    /// Seals the active segment (write + fdatasync, see `sync`) and switches to the next one:
    /// the prepared spare if it is ready, else one created inline.
    pub(super) fn roll(&mut self) -> Result<(), JournalError> {
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

/// Offset of a segment of `capacity` bytes from which its successor is prepared: half full.
pub(super) fn spare_threshold(capacity: u64) -> u64 {
    let header = SEGMENT_HEADER_LEN as u64;
    header + capacity.saturating_sub(header) / 2
}

/// Creates segment `first_seq`: preallocated `<name>.tmp` with its header, fsynced, renamed to
/// its final name, directory fsynced. A crash at any point leaves either no segment or a
/// complete empty one (plus perhaps a `.tmp` that recovery removes).
pub(super) fn create_segment(
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
pub(super) fn prepare_spare(journal_dir: &Path, size: u64) -> Result<File, JournalError> {
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
pub(super) fn preallocate(file: &File, path: &Path, size: u64) -> Result<(), JournalError> {
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
