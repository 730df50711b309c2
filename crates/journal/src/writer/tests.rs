use super::background::{sync_range, writeback_end, SyncJob, WRITEBACK_ALIGN};
use super::*;
use crate::format::{segment_file_name, JOURNAL_SUBDIR};
use crate::reader::JournalReader;

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
