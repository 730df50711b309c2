//! Opening the journal: the lock, recovery of what the last run left, and the writer positioned
//! after the last valid record.
//!
//! Role: takes the journal's exclusive lock, reads and verifies every segment (handing records to
//! a replay on the way, so start-up reads the journal once), removes leftover temporary segment
//! files, zero-fills a torn tail, rewrites a missing header, and continues in a new segment after
//! an older format's one.
//!
//! Never: modifies anything when it finds corruption (or the replay's callback fails); delivers a
//! torn tail's bytes as a record; adds commit markers to a segment of an older format.
//!
//! Invariants: on return, bytes past the write position of the active segment are zero and the
//! segment is synced; the next sequence number follows the last valid record.

use super::background::Background;
use super::segments::{create_segment, preallocate, spare_threshold};
use super::{JournalConfig, JournalWriter, RecoveryReport, RollStats};
use crate::error::JournalError;
use crate::format::{
    encode_segment_header, FORMAT_VERSION, JOURNAL_SUBDIR, LOCK_FILE, SEGMENT_HEADER_LEN,
};
use crate::reader::{list_segments, JournalReader, Record};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

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
