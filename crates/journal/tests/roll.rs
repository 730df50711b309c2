//! Segment rolls through spare segments prepared in the background: many rolls in both
//! durability modes, and the files a crash can leave around a roll (a spare in any state, an
//! empty next segment, a segment whose header never reached the disk), read by the reader,
//! `verify` and recovery.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::*;
use journal::format::{
    decode_segment_header, encode_segment_header, segment_file_name, SPARE_FILE_NAME,
};
use journal::{Corruption, Durability, JournalConfig, JournalError, JournalWriter};

fn reopen(dir: &Path) -> Result<(JournalWriter, journal::RecoveryReport), JournalError> {
    JournalWriter::open(dir, small_config())
}

fn spare(dir: &Path) -> PathBuf {
    dir.join("journal").join(SPARE_FILE_NAME)
}

fn segment(dir: &Path, first_seq: u64) -> PathBuf {
    dir.join("journal").join(segment_file_name(first_seq))
}

/// Appends `n` records (payloads from `common::payload`), committing every 3 in `mode`, and
/// waiting for the background spare after each commit if `wait`.
fn append_in_mode(w: &mut JournalWriter, n: u64, mode: Durability, wait: bool) {
    for i in 0..n {
        let seq = w.next_seq();
        w.append((seq % 5) as u16, 1_000_000 + seq * 7, &payload(seq))
            .unwrap();
        if i % 3 == 2 {
            let durable = w.commit(mode).unwrap();
            assert_eq!(durable, seq);
            if wait {
                w.wait_for_spare();
            }
        }
    }
    w.commit(mode).unwrap();
}

/// Every record is `1..=n` as `append_in_mode` / `write_journal` wrote it.
fn check_all(dir: &Path, n: u64) {
    let read = read_all(dir).unwrap();
    assert_eq!(read.len() as u64, n);
    for (i, (r, _, _)) in read.iter().enumerate() {
        let seq = i as u64 + 1;
        assert_eq!(r.seq, seq);
        assert_eq!(r.payload, payload(seq), "record {seq}");
    }
}

#[test]
fn many_rolls_with_tiny_segments_in_both_modes() {
    for mode in [Durability::Process, Durability::Fsync] {
        for wait in [false, true] {
            let what = format!("{mode:?}, waiting for spares: {wait}");
            let dir = tempfile::tempdir().unwrap();
            let (mut w, _) = reopen(dir.path()).unwrap();
            append_in_mode(&mut w, 1500, mode, wait);
            let stats = w.roll_stats();
            assert_eq!(stats.prepared + stats.inline_created, stats.rolls, "{what}");
            assert_eq!(stats.prepare_failures, 0, "{what}");
            if wait {
                assert_eq!(stats.prepared, stats.rolls, "{what}: {stats:?}");
            }
            if mode == Durability::Fsync {
                assert_eq!(w.synced_seq(), 1500, "{what}");
            }
            drop(w);
            let (segments, temps) = journal::list_segments(dir.path()).unwrap();
            assert_eq!(segments.len() as u64, stats.rolls + 1, "{what}");
            assert!(stats.rolls > 40, "{what}: {stats:?}");
            assert!(temps.is_empty(), "{what}: a closed writer leaves no spare");
            check_all(dir.path(), 1500);
            let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
            assert_eq!(report.last_seq, Some(1500), "{what}");
            for s in &report.segments {
                assert_eq!(s.file_len, 4096, "{what}: spares are preallocated too");
                assert!(!s.header_unwritten, "{what}");
            }
            let (_, again) = reopen(dir.path()).unwrap();
            assert_eq!(again.last_seq, Some(1500), "{what}");
            assert!(again.truncated.is_none() && again.removed_temp_files.is_empty());
        }
    }
}

#[test]
fn reader_and_verify_ignore_a_prepared_spare_next_to_a_live_writer() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = reopen(dir.path()).unwrap();
    append_in_mode(&mut w, 30, Durability::Process, true);
    // Past half of the active segment: the spare is there.
    while !spare(dir.path()).exists() {
        append_in_mode(&mut w, 3, Durability::Process, true);
    }
    let n = w.next_seq() - 1;
    let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
    assert_eq!(report.last_seq, Some(n));
    assert_eq!(report.temp_files, vec![spare(dir.path())]);
    assert!(report.torn_tail.is_none());
    check_all(dir.path(), n);
    let mut dumped = 0;
    let summary = journal::dump(dir.path(), 1, |_| {
        dumped += 1;
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!((dumped, summary.last_seq), (n, Some(n)));
    // The roll takes the spare; closing removes the next one.
    append_in_mode(&mut w, 200, Durability::Process, true);
    assert!(w.roll_stats().prepared >= 3, "{:?}", w.roll_stats());
    drop(w);
    assert!(!spare(dir.path()).exists());
    check_all(dir.path(), n + 200);
}

#[test]
fn verify_next_to_a_writer_rolling_through_spares_never_reports_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = reopen(dir.path()).unwrap();
    let path = dir.path().to_path_buf();
    // The writer goes on (past its 300 rounds) until verify, beside it, has seen records this
    // many times.
    const VERIFIES: u64 = 5;
    let verifies = Arc::new(AtomicU64::new(0));
    let writer = std::thread::spawn({
        let verifies = verifies.clone();
        move || {
            let mut round = 0u64;
            while round < 300 || verifies.load(Ordering::SeqCst) < VERIFIES {
                append_in_mode(&mut w, 4, Durability::Process, round.is_multiple_of(2));
                round += 1;
            }
            (w.next_seq() - 1, w.roll_stats())
        }
    });
    let mut last = 0;
    while !writer.is_finished() {
        let report = journal::verify::<JournalError>(&path, |_| Ok(()))
            .unwrap_or_else(|e| panic!("live verify: {e}"));
        let seen = report.last_seq.unwrap_or(0);
        assert!(seen >= last, "verify went backwards: {seen} < {last}");
        assert!(report.segments.iter().all(|s| !s.header_unwritten));
        last = seen;
        if seen > 0 {
            verifies.fetch_add(1, Ordering::SeqCst);
        }
    }
    let (total, stats) = writer.join().unwrap();
    let ran = verifies.load(Ordering::SeqCst);
    assert!(
        ran >= VERIFIES,
        "verify saw records {ran} times beside the writer"
    );
    assert!(stats.prepared > 10, "{stats:?}");
    check_all(&path, total);
}

#[test]
fn a_leftover_spare_in_any_state_is_removed_and_never_read() {
    let base = tempfile::tempdir().unwrap();
    write_journal(base.path(), 100, small_config());
    let next = 101;
    let with_header = |seq: u64| {
        let mut b = vec![0u8; 4096];
        b[..32].copy_from_slice(&encode_segment_header(seq));
        b
    };
    let states: [(&str, Vec<u8>); 5] = [
        ("created, empty", Vec::new()),
        ("preallocated", vec![0u8; 4096]),
        ("header of the next seq written", with_header(next)),
        ("header of another seq", with_header(5)),
        ("header of a seq after a gap", with_header(next + 9)),
    ];
    for (what, bytes) in states {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(base.path(), dir.path());
        std::fs::write(spare(dir.path()), &bytes).unwrap();
        let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
        assert_eq!(report.last_seq, Some(100), "{what}");
        assert_eq!(report.temp_files, vec![spare(dir.path())], "{what}");
        check_all(dir.path(), 100);
        let (mut w, report) = reopen(dir.path()).unwrap();
        assert_eq!(report.last_seq, Some(100), "{what}");
        assert_eq!(report.removed_temp_files, vec![spare(dir.path())], "{what}");
        assert!(
            report.to_string().contains("spare.seg.tmp"),
            "{what}: {report}"
        );
        assert_eq!(w.next_seq(), next, "{what}");
        append_in_mode(&mut w, 150, Durability::Process, true);
        drop(w);
        check_all(dir.path(), 250);
    }
}

#[test]
fn an_empty_segment_after_the_last_record_continues_the_journal_only_if_it_fits() {
    let base = tempfile::tempdir().unwrap();
    write_journal(base.path(), 100, small_config());
    let empty = |seq: u64| {
        let mut b = vec![0u8; 4096];
        b[..32].copy_from_slice(&encode_segment_header(seq));
        b
    };

    // A complete empty segment with the next sequence number (a crash right after a roll).
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    std::fs::write(segment(dir.path(), 101), empty(101)).unwrap();
    let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
    assert_eq!(report.last_seq, Some(100));
    let s = report.segments.last().unwrap();
    assert_eq!((s.first_seq, s.records, s.last_seq), (101, 0, None));
    let (mut w, report) = reopen(dir.path()).unwrap();
    assert_eq!(report.last_seq, Some(100));
    assert_eq!(w.segment_path(), segment(dir.path(), 101));
    append_in_mode(&mut w, 50, Durability::Fsync, false);
    drop(w);
    check_all(dir.path(), 150);

    // One that does not continue the journal is refused, by verify and by recovery.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    std::fs::write(segment(dir.path(), 105), empty(105)).unwrap();
    let gap = |r: Result<(), JournalError>| match r {
        Err(JournalError::Corrupt {
            problem:
                Corruption::SegmentGap {
                    expected_first_seq: 101,
                    found_first_seq: 105,
                },
            offset: 0,
            ..
        }) => {}
        other => panic!("expected a segment gap, got {other:?}"),
    };
    gap(journal::verify::<JournalError>(dir.path(), |_| Ok(())).map(|_| ()));
    gap(reopen(dir.path()).map(|_| ()));
}

#[test]
fn a_last_segment_whose_header_never_reached_the_disk_is_read_by_its_name() {
    let base = tempfile::tempdir().unwrap();
    write_journal(base.path(), 300, small_config());
    let (segments, _) = journal::list_segments(base.path()).unwrap();
    assert!(segments.len() >= 4);
    let last = segments.last().unwrap().clone();
    let zero_header = |path: &Path| {
        let mut b = std::fs::read(path).unwrap();
        b[..32].fill(0);
        std::fs::write(path, b).unwrap();
    };
    let name_of = |p: &PathBuf| p.file_name().unwrap().to_owned();

    // Records after the zero header are kept; verify reports, recovery rewrites the header.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    let seg = dir.path().join("journal").join(name_of(&last.path));
    zero_header(&seg);
    let before = std::fs::read(&seg).unwrap();
    let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
    assert_eq!(report.last_seq, Some(300));
    let s = report.segments.last().unwrap();
    assert!(s.header_unwritten);
    assert_eq!(s.first_seq, last.first_seq);
    assert!(report.segments[..report.segments.len() - 1]
        .iter()
        .all(|s| !s.header_unwritten));
    assert_eq!(
        std::fs::read(&seg).unwrap(),
        before,
        "verify modifies nothing"
    );
    let (mut w, report) = reopen(dir.path()).unwrap();
    assert_eq!(report.last_seq, Some(300));
    assert_eq!(report.header_rewritten.as_ref(), Some(&seg));
    assert!(report.to_string().contains("rewritten"), "{report}");
    let bytes = std::fs::read(&seg).unwrap();
    assert_eq!(decode_segment_header(&bytes[..32]), Ok(last.first_seq));
    append_in_mode(&mut w, 20, Durability::Process, false);
    drop(w);
    check_all(dir.path(), 320);
    let (_, again) = reopen(dir.path()).unwrap();
    assert!(again.header_rewritten.is_none());

    // A renamed spare with nothing in it: an empty segment, header rewritten.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    std::fs::write(segment(dir.path(), 301), vec![0u8; 4096]).unwrap();
    let (mut w, report) = reopen(dir.path()).unwrap();
    assert_eq!(report.last_seq, Some(300));
    assert_eq!(report.header_rewritten, Some(segment(dir.path(), 301)));
    assert_eq!(w.segment_path(), segment(dir.path(), 301));
    append_in_mode(&mut w, 5, Durability::Fsync, false);
    drop(w);
    check_all(dir.path(), 305);

    // With a damaged last record as well: both repaired. A commit marker after the record
    // proves nothing here: the zero header means a power loss before any fdatasync of this
    // segment returned, so no record in it was synced, and the damage is a torn tail.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    let seg = dir.path().join("journal").join(name_of(&last.path));
    let read = read_all(dir.path()).unwrap();
    let (_, _, off) = read.last().unwrap();
    flip_bit(&seg, off + 30, 2);
    zero_header(&seg);
    let (_, report) = reopen(dir.path()).unwrap();
    assert_eq!(report.last_seq, Some(299));
    assert!(report.truncated.is_some() && report.header_rewritten.is_some());
    check_all(dir.path(), 299);

    // Zero header whose name does not continue the previous segment: a gap.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    std::fs::write(segment(dir.path(), 310), vec![0u8; 4096]).unwrap();
    assert!(matches!(
        reopen(dir.path()),
        Err(JournalError::Corrupt {
            problem: Corruption::SegmentGap { .. },
            ..
        })
    ));

    // Zero header in a segment that is not the last: corruption, as before.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    let middle = dir.path().join("journal").join(name_of(&segments[1].path));
    zero_header(&middle);
    for result in [
        reopen(dir.path()).map(|_| ()),
        journal::verify::<JournalError>(dir.path(), |_| Ok(())).map(|_| ()),
    ] {
        match result {
            Err(JournalError::Corrupt {
                segment,
                offset: 0,
                problem: Corruption::BadSegmentHeader(_),
                ..
            }) => assert_eq!(segment, middle),
            other => panic!("expected a bad header, got {other:?}"),
        }
    }

    // A header that is partly zero is damage, even in the last segment.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    let seg = dir.path().join("journal").join(name_of(&last.path));
    let mut b = std::fs::read(&seg).unwrap();
    b[..31].fill(0);
    std::fs::write(&seg, b).unwrap();
    assert!(matches!(
        reopen(dir.path()),
        Err(JournalError::Corrupt {
            problem: Corruption::BadSegmentHeader(_),
            ..
        })
    ));
}

#[test]
fn large_segments_roll_through_prepared_spares() {
    // Real preallocation sizes (a few MiB) so the background work takes measurable time.
    let config = JournalConfig {
        segment_size_bytes: 2 << 20,
        ..JournalConfig::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = JournalWriter::open(dir.path(), config).unwrap();
    let body = [0x42u8; 1000];
    let mut n = 0u64;
    while w.roll_stats().rolls < 4 {
        for _ in 0..64 {
            w.append(1, n, &body).unwrap();
            n += 1;
        }
        w.commit(Durability::Process).unwrap();
    }
    let stats = w.roll_stats();
    assert_eq!(stats.prepared + stats.inline_created, 4);
    assert_eq!(w.written_seq(), n);
    drop(w);
    let (_, report) = JournalWriter::open(dir.path(), config).unwrap();
    assert_eq!(report.last_seq, Some(n));
    assert_eq!(report.segments.len(), 5);
    assert!(report.segments.iter().all(|s| s.file_len == 2 << 20));
}
