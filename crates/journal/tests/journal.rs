//! Round trips, group commit, segment rolls, and recovery's torn-tail vs corruption rule.

mod common;

use std::path::Path;

use common::*;
use journal::{
    Corruption, Durability, JournalConfig, JournalError, JournalReader, JournalWriter, RecordFault,
};

/// Bytes of a commit marker.
const MARKER: u64 = journal::format::COMMIT_MARKER_LEN as u64;

fn reopen(dir: &Path) -> Result<(JournalWriter, journal::RecoveryReport), JournalError> {
    JournalWriter::open(dir, small_config())
}

#[test]
fn round_trip_many_records_across_segment_rolls() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_journal(dir.path(), 3000, small_config());
    let read = read_all(dir.path()).unwrap();
    assert_eq!(read.len(), 3000);
    for (w, (r, _, _)) in written.iter().zip(&read) {
        assert_eq!(w, r);
    }
    let (segments, temps) = journal::list_segments(dir.path()).unwrap();
    assert!(
        segments.len() > 50,
        "rolled into {} segments",
        segments.len()
    );
    assert!(temps.is_empty());
    // Segment names are their first sequence numbers and continue each other.
    let (_, report) = reopen(dir.path()).unwrap();
    assert_eq!(report.records, 3000);
    assert_eq!((report.first_seq, report.last_seq), (Some(1), Some(3000)));
    assert!(report.truncated.is_none());
    for pair in report.segments.windows(2) {
        assert_eq!(pair[0].last_seq.unwrap() + 1, pair[1].first_seq);
    }
    for s in &report.segments {
        assert_eq!(s.file_len, 4096, "segments are preallocated");
    }
}

#[test]
fn reader_starts_at_from_seq_in_any_segment() {
    let dir = tempfile::tempdir().unwrap();
    write_journal(dir.path(), 500, small_config());
    for from in [0, 1, 2, 37, 250, 499, 500, 501, 900] {
        let mut reader = JournalReader::open(dir.path(), from).unwrap();
        let mut expect = from.max(1);
        while let Some(r) = reader.next_record().unwrap() {
            assert_eq!(r.seq, expect);
            assert_eq!(r.payload, payload(r.seq).as_slice());
            expect += 1;
        }
        assert_eq!(expect, 501.max(from.max(1)));
        assert_eq!(reader.next_seq(), 501);
    }
}

#[test]
fn reopen_continues_the_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = write_journal(dir.path(), 100, small_config());
    for round in 0..5 {
        let (mut writer, report) = reopen(dir.path()).unwrap();
        assert_eq!(report.last_seq, Some(all.len() as u64), "round {round}");
        assert_eq!(writer.next_seq(), all.len() as u64 + 1);
        all.extend(append_records(&mut writer, 33, 4));
    }
    let read = read_all(dir.path()).unwrap();
    assert_eq!(read.len(), all.len());
    assert!(all.iter().zip(&read).all(|(w, (r, _, _))| w == r));
}

#[test]
fn group_commit_reports_durable_sequence_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = JournalWriter::open(dir.path(), JournalConfig::default()).unwrap();
    assert_eq!(w.commit(Durability::Process).unwrap(), 0);
    assert_eq!(w.commit(Durability::Fsync).unwrap(), 0);
    for i in 1..=10u64 {
        assert_eq!(w.append(1, i, &[i as u8; 64]).unwrap(), i);
    }
    assert_eq!(w.pending_records(), 10);
    assert_eq!(w.written_seq(), 0);
    assert_eq!(w.commit(Durability::Process).unwrap(), 10);
    assert_eq!(w.synced_seq(), 0);
    assert_eq!(w.commit(Durability::Fsync).unwrap(), 10);
    assert_eq!(w.synced_seq(), 10);
    w.append_with(2, 11, 3, |b| b.copy_from_slice(b"abc"))
        .unwrap();
    assert_eq!(w.commit(Durability::Fsync).unwrap(), 11);
    drop(w);
    let read = read_all(dir.path()).unwrap();
    assert_eq!(read.len(), 11);
    assert_eq!(read[10].0.payload, b"abc");
    assert_eq!(read[10].0.kind, 2);
}

#[test]
fn limits_are_enforced_with_specific_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = JournalConfig {
        payload_len_max: 1 << 21,
        ..JournalConfig::default()
    };
    assert!(matches!(
        JournalWriter::open(dir.path(), bad),
        Err(JournalError::InvalidConfig(_))
    ));
    let bad = JournalConfig {
        segment_size_bytes: 100,
        ..small_config()
    };
    assert!(matches!(
        JournalWriter::open(dir.path(), bad),
        Err(JournalError::InvalidConfig(_))
    ));
    let (mut w, _) = reopen(dir.path()).unwrap();
    assert!(matches!(
        w.append(0, 0, &[0u8; 513]),
        Err(JournalError::PayloadTooLarge { len: 513, max: 512 })
    ));
    // A second writer on the same journal is refused.
    assert!(matches!(
        reopen(dir.path()),
        Err(JournalError::Locked { .. })
    ));
    drop(w);
    assert!(reopen(dir.path()).is_ok());
}

/// Writes 40 records (the last commit is records 36..=40, then its commit marker) and returns
/// them with the location and length of the last one.
fn journal_with_last_record(dir: &Path) -> (Vec<Written>, std::path::PathBuf, u64, u64) {
    let written = write_journal(dir, 40, small_config());
    let read = read_all(dir).unwrap();
    let (last, seg, off) = read.last().unwrap().clone();
    let len = 28 + last.payload.len() as u64;
    (written, seg, off, len)
}

#[test]
fn torn_tail_at_every_byte_of_the_last_record_is_truncated_and_reported() {
    let base = tempfile::tempdir().unwrap();
    let (written, seg, off, len) = journal_with_last_record(base.path());
    let seg_name = seg.file_name().unwrap().to_owned();
    for keep in 0..len {
        // A partial write: the first `keep` bytes of the last record reached the file, the
        // rest of it and the commit marker after it did not.
        let dir = tempfile::tempdir().unwrap();
        copy_dir(base.path(), dir.path());
        let seg = dir.path().join("journal").join(&seg_name);
        let mut bytes = std::fs::read(&seg).unwrap();
        bytes[(off + keep) as usize..(off + len + MARKER) as usize].fill(0);
        std::fs::write(&seg, &bytes).unwrap();

        let (mut w, report) = reopen(dir.path()).unwrap();
        let torn = report.truncated.clone();
        if bytes[off as usize..(off + keep) as usize]
            .iter()
            .all(|&b| b == 0)
        {
            assert!(torn.is_none(), "keep {keep}");
        } else {
            let torn = torn.unwrap_or_else(|| panic!("keep {keep}: no torn tail reported"));
            assert_eq!(torn.segment, seg);
            assert_eq!(torn.offset, off);
            let nonzero = bytes[off as usize..(off + keep) as usize]
                .iter()
                .rposition(|&b| b != 0)
                .unwrap() as u64
                + 1;
            assert_eq!(torn.bytes_dropped, nonzero, "keep {keep}");
        }
        assert_eq!(report.last_seq, Some(39), "keep {keep}");
        // The earlier records are intact and appending reuses the dropped sequence number.
        let seq = w.append(9, 9, b"again").unwrap();
        assert_eq!(seq, 40);
        w.commit(Durability::Process).unwrap();
        drop(w);
        let read = read_all(dir.path()).unwrap();
        assert_eq!(read.len(), 40);
        assert!(written[..39].iter().zip(&read).all(|(w, (r, _, _))| w == r));
        assert_eq!(read[39].0.payload, b"again");
        let (_, again) = reopen(dir.path()).unwrap();
        assert!(again.truncated.is_none());
    }
}

#[test]
fn file_truncated_mid_record_is_a_torn_tail() {
    let base = tempfile::tempdir().unwrap();
    let (_, seg, off, len) = journal_with_last_record(base.path());
    for cut in [off + 1, off + 5, off + 28, off + len - 1] {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(base.path(), dir.path());
        let seg = dir.path().join("journal").join(seg.file_name().unwrap());
        let f = std::fs::OpenOptions::new().write(true).open(&seg).unwrap();
        f.set_len(cut).unwrap();
        drop(f);
        let (_, report) = reopen(dir.path()).unwrap();
        let torn = report.truncated.unwrap();
        assert_eq!((torn.offset, torn.fault), (off, RecordFault::Truncated));
        assert_eq!(report.last_seq, Some(39));
        // Recovery preallocates the segment again.
        assert_eq!(std::fs::metadata(&seg).unwrap().len(), 4096);
    }
}

#[test]
fn bit_flip_in_the_last_committed_record_is_refused_not_taken_for_a_torn_tail() {
    let base = tempfile::tempdir().unwrap();
    let (_, seg, off, len) = journal_with_last_record(base.path());
    for byte in 0..len {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(base.path(), dir.path());
        let seg = dir.path().join("journal").join(seg.file_name().unwrap());
        flip_bit(&seg, off + byte, (byte % 8) as u8);
        let before = std::fs::read(&seg).unwrap();
        match reopen(dir.path()) {
            Err(JournalError::Corrupt {
                segment,
                offset,
                last_valid_seq: 39,
                problem:
                    Corruption::CommittedRecordDamaged {
                        marker_offset,
                        committed_seq: 40,
                        fsync: false,
                        ..
                    },
            }) => {
                assert_eq!((segment, offset), (seg.clone(), off), "byte {byte}");
                assert_eq!(marker_offset, off + len, "byte {byte}");
            }
            other => panic!("byte {byte}: {:?}", other.map(|x| x.1)),
        }
        assert_eq!(
            std::fs::read(&seg).unwrap(),
            before,
            "refusal modifies nothing"
        );
    }
    // A damaged commit marker after intact records is a torn tail that loses no record.
    for byte in 0..MARKER {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(base.path(), dir.path());
        let seg = dir.path().join("journal").join(seg.file_name().unwrap());
        flip_bit(&seg, off + len + byte, (byte % 8) as u8);
        let (_, report) = reopen(dir.path()).unwrap();
        let torn = report.truncated.unwrap();
        assert_eq!(torn.offset, off + len, "byte {byte}");
        assert_eq!(report.last_seq, Some(40));
    }
}

#[test]
fn bit_flips_before_the_tail_are_refused_with_segment_and_offset() {
    let base = tempfile::tempdir().unwrap();
    write_journal(base.path(), 300, small_config());
    let read = read_all(base.path()).unwrap();
    let last_seg = read.last().unwrap().1.clone();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for (rec, seg, off) in read.iter().take(read.len() - 1).step_by(3) {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = 28 + rec.payload.len() as u64;
        let at = off + (state >> 33) % len;
        let dir = tempfile::tempdir().unwrap();
        copy_dir(base.path(), dir.path());
        let seg_copy = dir.path().join("journal").join(seg.file_name().unwrap());
        flip_bit(&seg_copy, at, (state % 8) as u8);
        let before = std::fs::read(&seg_copy).unwrap();
        match reopen(dir.path()) {
            Err(JournalError::Corrupt {
                segment,
                offset,
                last_valid_seq,
                problem,
            }) => {
                assert_eq!(last_valid_seq, rec.seq - 1);
                assert_eq!(segment, seg_copy, "seq {}", rec.seq);
                assert_eq!(offset, *off, "seq {}", rec.seq);
                if *seg == last_seg {
                    // A valid record after it, or the commit marker of its batch.
                    assert!(
                        matches!(
                            problem,
                            Corruption::InvalidRecordBeforeValid { .. }
                                | Corruption::CommittedRecordDamaged { .. }
                        ),
                        "{problem:?}"
                    );
                } else {
                    assert!(matches!(
                        problem,
                        Corruption::InvalidRecordInSealedSegment { .. }
                    ));
                }
                let msg = JournalError::Corrupt {
                    segment,
                    offset,
                    last_valid_seq,
                    problem,
                }
                .to_string();
                assert!(msg.contains(seg.file_name().unwrap().to_str().unwrap()));
                assert!(msg.contains(&format!("offset {off}")));
            }
            other => panic!(
                "seq {}: flip at {at} gave {:?}",
                rec.seq,
                other.map(|x| x.1)
            ),
        }
        // Refusal modifies nothing.
        assert_eq!(std::fs::read(&seg_copy).unwrap(), before);
    }
}

#[test]
fn zeroed_record_before_valid_ones_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let (_, seg, off, _) = journal_with_last_record(base.path());
    // Zero the second-to-last record entirely: a valid record follows it.
    let read = read_all(base.path()).unwrap();
    let (prev, prev_seg, prev_off) = &read[read.len() - 2];
    assert_eq!(*prev_seg, seg);
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes[*prev_off as usize..off as usize].fill(0);
    assert_eq!(off - prev_off, 28 + prev.payload.len() as u64);
    std::fs::write(&seg, bytes).unwrap();
    match reopen(base.path()) {
        Err(JournalError::Corrupt {
            offset,
            problem:
                Corruption::InvalidRecordBeforeValid {
                    fault,
                    next_valid_offset,
                    next_valid_seq,
                },
            ..
        }) => {
            assert_eq!(offset, *prev_off);
            assert_eq!(fault, RecordFault::Zeroed);
            assert_eq!((next_valid_offset, next_valid_seq), (off, 40));
        }
        other => panic!("{:?}", other.map(|x| x.1)),
    }
}

#[test]
fn missing_or_inconsistent_segments_are_refused() {
    let base = tempfile::tempdir().unwrap();
    write_journal(base.path(), 300, small_config());
    let (segments, _) = journal::list_segments(base.path()).unwrap();
    assert!(segments.len() >= 4);

    // A missing middle segment is a gap.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    std::fs::remove_file(
        dir.path()
            .join("journal")
            .join(segments[2].path.file_name().unwrap()),
    )
    .unwrap();
    match reopen(dir.path()) {
        Err(JournalError::Corrupt {
            segment,
            offset: 0,
            problem: Corruption::SegmentGap { .. },
            ..
        }) => assert!(segment.ends_with(segments[3].path.file_name().unwrap())),
        other => panic!("{:?}", other.map(|x| x.1)),
    }

    // A renamed segment disagrees with its header.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    let j = dir.path().join("journal");
    std::fs::rename(
        j.join(segments[1].path.file_name().unwrap()),
        j.join(journal::format::segment_file_name(
            segments[1].first_seq + 1,
        )),
    )
    .unwrap();
    assert!(matches!(
        reopen(dir.path()),
        Err(JournalError::Corrupt {
            problem: Corruption::SegmentNameMismatch { .. },
            ..
        })
    ));

    // A damaged segment header.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    flip_bit(
        &dir.path()
            .join("journal")
            .join(segments[0].path.file_name().unwrap()),
        3,
        0,
    );
    assert!(matches!(
        reopen(dir.path()),
        Err(JournalError::Corrupt {
            offset: 0,
            problem: Corruption::BadSegmentHeader(_),
            ..
        })
    ));

    // Garbage in the unused end of a sealed segment.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base.path(), dir.path());
    flip_bit(
        &dir.path()
            .join("journal")
            .join(segments[0].path.file_name().unwrap()),
        4095,
        0,
    );
    assert!(matches!(
        reopen(dir.path()),
        Err(JournalError::Corrupt {
            problem: Corruption::InvalidRecordInSealedSegment {
                fault: RecordFault::Zeroed
            },
            ..
        })
    ));
}

#[test]
fn interrupted_segment_creation_is_cleaned_up() {
    let dir = tempfile::tempdir().unwrap();
    write_journal(dir.path(), 10, small_config());
    let tmp = dir
        .path()
        .join("journal")
        .join(format!("{}.tmp", journal::format::segment_file_name(11)));
    std::fs::write(&tmp, [0u8; 10]).unwrap();
    let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
    assert_eq!(report.temp_files, vec![tmp.clone()]);
    let (_, report) = reopen(dir.path()).unwrap();
    assert_eq!(report.removed_temp_files, vec![tmp.clone()]);
    assert!(!tmp.exists());
    assert_eq!(report.last_seq, Some(10));
}

#[test]
fn verify_and_dump_report_structure_without_modifying() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_journal(dir.path(), 200, small_config());
    let mut kinds = [0u64; 5];
    let report = journal::verify::<JournalError>(dir.path(), |r| {
        kinds[r.kind as usize] += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(report.records, 200);
    assert_eq!((report.first_seq, report.last_seq), (Some(1), Some(200)));
    assert_eq!(kinds.iter().sum::<u64>(), 200);
    assert_eq!(
        report.payload_bytes,
        written.iter().map(|w| w.payload.len() as u64).sum::<u64>()
    );
    assert_eq!(report.segments.iter().map(|s| s.records).sum::<u64>(), 200);

    let mut seen = Vec::new();
    let summary = journal::dump(dir.path(), 150, |r| {
        seen.push(r.seq);
        if r.seq == 160 {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    })
    .unwrap();
    assert_eq!(seen, (150..=160).collect::<Vec<_>>());
    assert!(summary.stopped);

    // The callback's error stops verify.
    let err = journal::verify::<Wrapped>(dir.path(), |r| {
        if r.seq == 3 {
            Err(Wrapped("engine said no".to_string()))
        } else {
            Ok(())
        }
    });
    assert_eq!(err.unwrap_err().0, "engine said no");

    // A torn tail is reported by verify but left in place.
    let read = read_all(dir.path()).unwrap();
    let (_, seg, off) = read.last().unwrap();
    tear_last_write(seg, *off + 28);
    let before = std::fs::read(seg).unwrap();
    let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
    assert_eq!(report.last_seq, Some(199));
    assert_eq!(report.torn_tail.unwrap().offset, *off);
    assert_eq!(std::fs::read(seg).unwrap(), before);
}

impl From<JournalError> for Wrapped {
    fn from(e: JournalError) -> Self {
        Wrapped(e.to_string())
    }
}
#[derive(Debug)]
struct Wrapped(String);

#[test]
fn verify_converts_corruption_into_the_callers_error() {
    let dir = tempfile::tempdir().unwrap();
    write_journal(dir.path(), 100, small_config());
    let read = read_all(dir.path()).unwrap();
    let (_, seg, off) = &read[10];
    flip_bit(seg, off + 29, 0);
    let err = journal::verify::<Wrapped>(dir.path(), |_| Ok(())).unwrap_err();
    assert!(
        err.0.contains(&format!("at byte offset {off}")),
        "{}",
        err.0
    );
}

#[test]
fn fuzz_entry_point_handles_odd_inputs() {
    journal::fuzz_recover(&[]);
    journal::fuzz_recover(&[0xff; 100]);
    journal::fuzz_recover(b"RIALTOJ\0garbage");
    // A real segment, whole and damaged.
    let dir = tempfile::tempdir().unwrap();
    write_journal(dir.path(), 30, small_config());
    let (segments, _) = journal::list_segments(dir.path()).unwrap();
    let bytes = std::fs::read(&segments[0].path).unwrap();
    journal::fuzz_recover(&bytes);
    journal::fuzz_recover(&bytes[32..]);
    for i in (0..bytes.len()).step_by(97) {
        let mut b = bytes.clone();
        b[i] ^= 0x40;
        journal::fuzz_recover(&b);
        journal::fuzz_recover(&b[..i]);
    }
}

#[test]
fn open_replaying_delivers_records_from_seq_once_and_never_the_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_journal(dir.path(), 300, small_config());
    let read = read_all(dir.path()).unwrap();
    let (_, seg, off) = read.last().unwrap();
    tear_last_write(seg, off + 3); // torn last record
    let mut got = Vec::new();
    let (w, report) =
        JournalWriter::open_replaying::<JournalError>(dir.path(), small_config(), 250, |r| {
            got.push((r.seq, r.payload.to_vec()));
            Ok(())
        })
        .unwrap();
    assert_eq!(report.last_seq, Some(299));
    assert!(report.truncated.is_some());
    let expect: Vec<_> = written[249..299]
        .iter()
        .map(|w| (w.seq, w.payload.clone()))
        .collect();
    assert_eq!(got, expect);
    drop(w);

    // The caller's error stops recovery before anything is modified.
    let err = JournalWriter::open_replaying::<Wrapped>(dir.path(), small_config(), 1, |r| {
        if r.seq == 5 {
            Err(Wrapped("apply failed".into()))
        } else {
            Ok(())
        }
    });
    assert_eq!(err.err().unwrap().0, "apply failed");
}

#[test]
fn sequence_numbers_end_before_u64_max() {
    // A journal whose segment starts at u64::MAX - 1: one record fits, then appends are refused.
    let dir = tempfile::tempdir().unwrap();
    let jdir = dir.path().join("journal");
    std::fs::create_dir_all(&jdir).unwrap();
    let first = u64::MAX - 1;
    std::fs::write(
        jdir.join(journal::format::segment_file_name(first)),
        journal::format::encode_segment_header(first),
    )
    .unwrap();
    let (mut w, _) = reopen(dir.path()).unwrap();
    assert_eq!(w.append(0, 0, b"last").unwrap(), first);
    assert!(matches!(
        w.append(0, 0, b"x"),
        Err(JournalError::SeqExhausted)
    ));
    w.commit(Durability::Fsync).unwrap();
    drop(w);
    let (_, report) = reopen(dir.path()).unwrap();
    assert_eq!(report.last_seq, Some(first));
}

#[test]
fn operator_truncation_after_corruption_lets_the_journal_open() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_journal(dir.path(), 300, small_config());
    let read = read_all(dir.path()).unwrap();
    let (rec, seg, off) = &read[100];
    flip_bit(seg, off + 30, 3);
    let last_valid_seq = match reopen(dir.path()) {
        Err(JournalError::Corrupt { last_valid_seq, .. }) => last_valid_seq,
        other => panic!("{:?}", other.map(|x| x.1)),
    };
    assert_eq!(last_valid_seq, rec.seq - 1);
    // Asking to keep the corrupt record itself is refused, nothing changes.
    assert!(matches!(
        journal::truncate_after(dir.path(), rec.seq),
        Err(JournalError::Corrupt { .. })
    ));
    let report = journal::truncate_after(dir.path(), last_valid_seq).unwrap();
    assert_eq!((&report.segment, report.offset), (seg, *off));
    assert!(!report.removed_segments.is_empty());
    let (mut w, rec_report) = reopen(dir.path()).unwrap();
    assert_eq!(rec_report.last_seq, Some(last_valid_seq));
    assert!(rec_report.truncated.is_none());
    assert_eq!(w.append(0, 0, b"resumed").unwrap(), last_valid_seq + 1);
    w.commit(Durability::Process).unwrap();
    drop(w);
    let read = read_all(dir.path()).unwrap();
    assert_eq!(read.len() as u64, last_valid_seq + 1);
    assert!(written
        .iter()
        .zip(&read[..read.len() - 1])
        .all(|(w, (r, _, _))| w == r));

    // Keeping nothing, and a point past the end.
    assert!(matches!(
        journal::truncate_after(dir.path(), 10_000),
        Err(JournalError::TruncatePointMissing { .. })
    ));
    journal::truncate_after(dir.path(), 0).unwrap();
    let (w, report) = reopen(dir.path()).unwrap();
    assert_eq!((report.records, w.next_seq()), (0, 1));
}

#[test]
fn verify_next_to_a_live_writer_never_reports_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = reopen(dir.path()).unwrap();
    let path = dir.path().to_path_buf();
    let writer = std::thread::spawn(move || {
        for round in 0..400u64 {
            for i in 0..5 {
                w.append(1, round, &payload(round * 5 + i)).unwrap();
            }
            w.commit(Durability::Process).unwrap();
        }
        w.next_seq() - 1
    });
    let mut last = 0;
    while !writer.is_finished() {
        let report = journal::verify::<JournalError>(&path, |_| Ok(()))
            .unwrap_or_else(|e| panic!("live verify: {e}"));
        let seen = report.last_seq.unwrap_or(0);
        assert!(seen >= last, "verify went backwards: {seen} < {last}");
        last = seen;
    }
    let total = writer.join().unwrap();
    let report = journal::verify::<JournalError>(&path, |_| Ok(())).unwrap();
    assert_eq!(report.last_seq, Some(total));
    assert!(report.torn_tail.is_none());
}

#[test]
fn a_reader_resumes_where_another_stopped_and_follows_a_growing_journal() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = JournalWriter::open(dir.path(), small_config()).unwrap();
    let payload = |seq: u64| format!("record {seq}").repeat(1 + seq as usize % 7);
    let append = |w: &mut JournalWriter, upto: u64| {
        while w.next_seq() <= upto {
            let seq = w.next_seq();
            w.append(1, seq, payload(seq).as_bytes()).unwrap();
        }
        w.commit(journal::Durability::Process).unwrap();
    };
    append(&mut w, 40);
    // Follow: read what is committed, keep the position, resume after more appends (across
    // segment rolls: the small config holds a few dozen records per segment).
    let mut pos = None;
    let mut before_697 = None;
    let mut next = 1;
    for upto in [40, 41, 90, 300, 301, 700] {
        append(&mut w, upto);
        let mut r = match &pos {
            None => JournalReader::open(dir.path(), 1).unwrap(),
            Some(p) => JournalReader::resume(dir.path(), p).unwrap(),
        };
        while next <= upto {
            if next == 697 {
                before_697 = r.position();
            }
            let rec = r.next_record().unwrap().unwrap();
            assert_eq!((rec.seq, rec.payload), (next, payload(next).as_bytes()));
            next += 1;
        }
        pos = r.position();
        assert_eq!(pos.as_ref().unwrap().next_seq, upto + 1);
    }
    let segments = journal::list_segments(dir.path()).unwrap().0.len();
    assert!(segments > 3, "followed across {segments} segments");
    // At the end, a resumed reader ends cleanly.
    let mut r = JournalReader::resume(dir.path(), pos.as_ref().unwrap()).unwrap();
    assert!(r.next_record().unwrap().is_none());
    assert!(r.position().is_none());

    // Positions that do not fit are refused, not guessed around.
    let p = pos.unwrap();
    let bad = [
        journal::ReadPosition {
            segment_first_seq: p.segment_first_seq + 1,
            ..p.clone()
        },
        journal::ReadPosition {
            offset: 3,
            ..p.clone()
        },
        journal::ReadPosition {
            offset: 1 << 40,
            ..p.clone()
        },
        journal::ReadPosition {
            next_seq: p.segment_first_seq - 1,
            ..p.clone()
        },
    ];
    for b in bad {
        assert!(JournalReader::resume(dir.path(), &b).is_err(), "{b:?}");
    }
    // A position in the middle of a record, with valid records after it: corruption.
    let p = before_697.unwrap();
    let mid = journal::ReadPosition {
        offset: p.offset + 3,
        ..p
    };
    let mut r = JournalReader::resume(dir.path(), &mid).unwrap();
    assert!(matches!(r.next_record(), Err(JournalError::Corrupt { .. })));
}
