//! Commit markers and the end rule: a damaged record that a commit marker covers is corruption
//! (start-up stops, naming segment and offset); what follows the last commit marker may be a
//! torn tail (truncated). Also segment rolls, the writer's own uncommitted flushes, and
//! journals of the format before commit markers.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use journal::format::{
    encode_segment_header_version, seal_commit_marker, seal_record, segment_file_name,
    COMMIT_MARKER_LEN, FORMAT_VERSION, RECORD_HEADER_LEN,
};
use journal::{Corruption, Durability, JournalError, JournalWriter, RecordFault};

const MARKER: u64 = COMMIT_MARKER_LEN as u64;

fn reopen(dir: &Path) -> Result<(JournalWriter, journal::RecoveryReport), JournalError> {
    JournalWriter::open(dir, small_config())
}

/// Appends records `next..=upto` (payloads from `common::payload`) and commits once in `mode`.
fn batch(w: &mut JournalWriter, upto: u64, mode: Durability) {
    while w.next_seq() <= upto {
        let seq = w.next_seq();
        w.append(1, seq, &payload(seq)).unwrap();
    }
    assert_eq!(w.commit(mode).unwrap(), upto);
}

/// Every record `1..=n` reads back as written, with no torn tail.
fn check_prefix(dir: &Path, n: u64) {
    let read = read_all(dir).unwrap();
    assert_eq!(read.len() as u64, n);
    for (i, (r, _, _)) in read.iter().enumerate() {
        assert_eq!((r.seq, &r.payload), (i as u64 + 1, &payload(i as u64 + 1)));
    }
}

/// Location (segment, offset, total length) of record `seq`.
fn locate(dir: &Path, seq: u64) -> (PathBuf, u64, u64) {
    let read = read_all(dir).unwrap();
    let (rec, seg, off) = &read[seq as usize - 1];
    assert_eq!(rec.seq, seq);
    (
        seg.clone(),
        *off,
        (RECORD_HEADER_LEN + rec.payload.len()) as u64,
    )
}

#[test]
fn fsync_flip_inside_the_last_committed_record_names_segment_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = reopen(dir.path()).unwrap();
    batch(&mut w, 4, Durability::Fsync);
    batch(&mut w, 9, Durability::Fsync);
    drop(w);
    let (seg, off, len) = locate(dir.path(), 9);
    flip_bit(&seg, off + len / 2, 5);
    let err = reopen(dir.path()).err().expect("refused");
    let msg = err.to_string();
    match err {
        JournalError::Corrupt {
            segment,
            offset,
            last_valid_seq,
            problem:
                Corruption::CommittedRecordDamaged {
                    fault,
                    marker_offset,
                    committed_seq,
                    fsync,
                },
        } => {
            assert_eq!((segment, offset, last_valid_seq), (seg.clone(), off, 8));
            assert_eq!(fault, RecordFault::ChecksumMismatch);
            assert_eq!((marker_offset, committed_seq, fsync), (off + len, 9, true));
        }
        other => panic!("{other}"),
    }
    assert!(msg.contains(&seg.display().to_string()), "{msg}");
    assert!(msg.contains(&format!("byte offset {off}")), "{msg}");
    assert!(msg.contains("fsync-mode commit"), "{msg}");
    // verify and dump refuse too; the operator repair keeps what is intact.
    assert!(matches!(
        journal::verify::<JournalError>(dir.path(), |_| Ok(())),
        Err(JournalError::Corrupt { .. })
    ));
    journal::truncate_after(dir.path(), 8).unwrap();
    let (_, report) = reopen(dir.path()).unwrap();
    assert_eq!(report.last_seq, Some(8));
    check_prefix(dir.path(), 8);

    // Cutting after the last record of a commit keeps its marker: that record stays covered.
    let report = journal::truncate_after(dir.path(), 4).unwrap();
    let (seg, off, len) = locate(dir.path(), 4);
    assert_eq!(
        (report.segment, report.offset),
        (seg.clone(), off + len + MARKER)
    );
    flip_bit(&seg, off + len - 1, 1);
    assert!(matches!(
        reopen(dir.path()),
        Err(JournalError::Corrupt {
            problem: Corruption::CommittedRecordDamaged {
                committed_seq: 4,
                ..
            },
            ..
        })
    ));
}

#[test]
fn a_damaged_record_inside_the_last_committed_batch_is_refused_in_both_modes() {
    for mode in [Durability::Process, Durability::Fsync] {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, _) = reopen(dir.path()).unwrap();
        batch(&mut w, 3, mode);
        batch(&mut w, 7, mode);
        drop(w);
        // Record 5 lost (zeroed, as a page that never reached the disk), record 6 damaged and
        // 7 zeroed too: only the marker says the batch was committed.
        let (seg, off5, _) = locate(dir.path(), 5);
        let (_, off7, len7) = locate(dir.path(), 7);
        let mut bytes = std::fs::read(&seg).unwrap();
        bytes[off5 as usize..(off7 + len7) as usize].fill(0);
        std::fs::write(&seg, bytes).unwrap();
        match reopen(dir.path()) {
            Err(JournalError::Corrupt {
                segment,
                offset,
                problem:
                    Corruption::CommittedRecordDamaged {
                        fault: RecordFault::Zeroed,
                        marker_offset,
                        committed_seq: 7,
                        fsync,
                    },
                ..
            }) => {
                assert_eq!((segment, offset), (seg.clone(), off5), "{mode:?}");
                assert_eq!(marker_offset, off7 + len7, "{mode:?}");
                assert_eq!(fsync, mode == Durability::Fsync);
            }
            other => panic!("{mode:?}: {:?}", other.map(|x| x.1)),
        }
    }
}

#[test]
fn a_torn_tail_after_the_last_commit_is_truncated() {
    for mode in [Durability::Process, Durability::Fsync] {
        let base = tempfile::tempdir().unwrap();
        let (mut w, _) = reopen(base.path()).unwrap();
        batch(&mut w, 5, mode);
        batch(&mut w, 9, mode);
        drop(w);
        // The last write (records 6..=9 and the marker) reached the disk only up to `cut`.
        let (seg, first, _) = locate(base.path(), 6);
        let (_, last, len) = locate(base.path(), 9);
        let end = last + len + MARKER;
        let seg_name = seg.file_name().unwrap().to_owned();
        for cut in first..end {
            let dir = tempfile::tempdir().unwrap();
            copy_dir(base.path(), dir.path());
            let seg = dir.path().join("journal").join(&seg_name);
            tear_last_write(&seg, cut);
            let (mut w, report) =
                reopen(dir.path()).unwrap_or_else(|e| panic!("{mode:?} cut at {cut}: {e}"));
            let kept = report.last_seq.unwrap();
            // The committed batch always survives; whole records of the torn one are valid.
            assert!((5..=9).contains(&kept), "{mode:?} cut at {cut}: {kept}");
            if let Some(t) = &report.truncated {
                assert_eq!(t.segment, seg);
                assert!(t.offset >= first && t.offset < end, "{t}");
            }
            check_prefix(dir.path(), kept);
            batch(&mut w, kept + 2, mode);
            drop(w);
            check_prefix(dir.path(), kept + 2);
        }
    }
}

#[test]
fn a_committed_batch_then_a_partial_uncommitted_one_recovers_the_committed() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = reopen(dir.path()).unwrap();
    batch(&mut w, 3, Durability::Fsync);
    // More than the 2 KiB batch buffer without a commit: `append` writes full buffers (no
    // marker), then the writer dies before its commit.
    while w.written_seq() < 10 {
        let seq = w.next_seq();
        w.append(1, seq, &payload(seq)).unwrap();
    }
    let written = w.written_seq();
    drop(w);
    let read = read_all(dir.path()).unwrap();
    assert_eq!(
        read.len() as u64,
        written,
        "written records are valid, committed or not"
    );
    // The last record written is damaged: it follows the last commit marker, so it is a tail.
    let (seg, off, len) = locate(dir.path(), written);
    flip_bit(&seg, off + len - 1, 0);
    let (_, report) = reopen(dir.path()).unwrap();
    let t = report.truncated.expect("torn tail");
    assert_eq!((t.segment, t.offset), (seg, off));
    assert_eq!(report.last_seq, Some(written - 1));
    let last = report.segments.last().unwrap();
    assert_eq!(last.last_commit_seq, Some(3));
    check_prefix(dir.path(), written - 1);
}

#[test]
fn markers_never_cross_a_roll_and_a_batch_may_span_one() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = reopen(dir.path()).unwrap();
    // One commit per record, sizes 1..=200: every segment ends with its last record's marker,
    // however full it is.
    for _ in 0..400 {
        let seq = w.next_seq();
        batch(&mut w, seq, Durability::Process);
    }
    drop(w);
    let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
    assert!(report.segments.len() > 10);
    for s in &report.segments {
        assert_eq!(s.last_commit_seq, s.last_seq, "{}", s.path.display());
        assert_eq!(s.format_version, FORMAT_VERSION);
        assert!(s.end_offset <= s.file_len);
    }

    // A batch that spans a roll: the first part seals the old segment without a marker, the
    // marker follows the batch's last record in the new one.
    let (mut w, _) = reopen(dir.path()).unwrap();
    let mut appended_in_segment = false;
    loop {
        let rolls = w.roll_stats().rolls;
        let seq = w.next_seq();
        w.append(1, seq, &payload(seq)).unwrap();
        if w.roll_stats().rolls == rolls {
            appended_in_segment = true;
        } else if appended_in_segment {
            break;
        }
    }
    let last = w.next_seq() + 2;
    batch(&mut w, last, Durability::Fsync);
    drop(w);
    let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
    let n = report.segments.len();
    let (old, new) = (&report.segments[n - 2], &report.segments[n - 1]);
    assert!(old.last_commit_seq < old.last_seq);
    assert_eq!(
        (new.last_seq, new.last_commit_seq),
        (Some(last), Some(last))
    );

    // Damage in the sealed part of the batch: corruption of a sealed segment.
    let base = tempfile::tempdir().unwrap();
    copy_dir(dir.path(), base.path());
    let (seg, off, len) = locate(dir.path(), old.last_seq.unwrap());
    flip_bit(&seg, off + len - 1, 3);
    assert!(matches!(
        reopen(dir.path()),
        Err(JournalError::Corrupt {
            problem: Corruption::InvalidRecordInSealedSegment { .. },
            ..
        })
    ));
    // Damage to the batch's last record, in the new segment: covered by the marker.
    let (seg, off, len) = locate(base.path(), last);
    assert_eq!(seg.file_name(), new.path.file_name());
    flip_bit(&seg, off + 1, 3);
    match reopen(base.path()) {
        Err(JournalError::Corrupt {
            segment,
            offset,
            problem: Corruption::CommittedRecordDamaged { marker_offset, .. },
            ..
        }) => assert_eq!((segment, offset, marker_offset), (seg, off, off + len)),
        other => panic!("{:?}", other.map(|x| x.1)),
    }
}

#[test]
fn a_marker_that_does_not_commit_the_record_before_it_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = reopen(dir.path()).unwrap();
    batch(&mut w, 3, Durability::Fsync);
    batch(&mut w, 6, Durability::Fsync);
    drop(w);
    let (seg, off, len) = locate(dir.path(), 3);
    let at = (off + len) as usize;
    let original = std::fs::read(&seg).unwrap();
    let crc3 = u32::from_le_bytes(original[off as usize..off as usize + 4].try_into().unwrap());
    // A valid marker for another record, or for record 3 with another CRC.
    for (seq, crc) in [(4, crc3), (2, crc3), (3, crc3 ^ 1)] {
        let mut bytes = original.clone();
        let mut m = [0u8; COMMIT_MARKER_LEN];
        seal_commit_marker(&mut m, seq, crc, true);
        bytes[at..at + COMMIT_MARKER_LEN].copy_from_slice(&m);
        std::fs::write(&seg, &bytes).unwrap();
        match reopen(dir.path()) {
            Err(JournalError::Corrupt {
                offset,
                problem:
                    Corruption::CommitMarkerMismatch {
                        marker_seq,
                        last_seq: 3,
                    },
                ..
            }) => assert_eq!((offset, marker_seq), (at as u64, seq)),
            other => panic!("seq {seq}: {:?}", other.map(|x| x.1)),
        }
    }
}

/// Writes a format-1 journal (records only, no markers) of records `1..=n` in one segment.
fn write_format1(dir: &Path, n: u64) -> PathBuf {
    let jdir = dir.join("journal");
    std::fs::create_dir_all(&jdir).unwrap();
    let mut bytes = encode_segment_header_version(1, 1).to_vec();
    for seq in 1..=n {
        let p = payload(seq);
        let at = bytes.len();
        bytes.resize(at + RECORD_HEADER_LEN + p.len(), 0);
        bytes[at + RECORD_HEADER_LEN..].copy_from_slice(&p);
        seal_record(&mut bytes[at..], seq, seq, 1);
    }
    bytes.resize(4096, 0);
    let path = jdir.join(segment_file_name(1));
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn older_format_journals_are_read_and_continued_in_a_new_format_segment() {
    let dir = tempfile::tempdir().unwrap();
    let old = write_format1(dir.path(), 12);
    let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
    assert_eq!(report.last_seq, Some(12));
    assert_eq!(report.segments[0].format_version, 1);
    assert_eq!(report.segments[0].last_commit_seq, None);
    check_prefix(dir.path(), 12);

    // Without markers a damaged last record is a torn tail, as in that format.
    let base = tempfile::tempdir().unwrap();
    copy_dir(dir.path(), base.path());
    let (_, off, _) = locate(base.path(), 12);
    flip_bit(
        &base.path().join("journal").join(segment_file_name(1)),
        off + 30,
        1,
    );
    let (_, report) = reopen(base.path()).unwrap();
    assert_eq!(report.truncated.map(|t| t.offset), Some(off));
    assert_eq!(report.last_seq, Some(11));

    // The writer never adds frames of the new format to the old segment.
    let (mut w, report) = reopen(dir.path()).unwrap();
    let new = dir.path().join("journal").join(segment_file_name(13));
    assert_eq!(report.new_format_segment.as_ref(), Some(&new));
    assert!(report.to_string().contains("older format"), "{report}");
    let before = std::fs::read(&old).unwrap();
    batch(&mut w, 20, Durability::Fsync);
    drop(w);
    assert_eq!(std::fs::read(&old).unwrap(), before);
    let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
    let versions: Vec<_> = report.segments.iter().map(|s| s.format_version).collect();
    assert_eq!(versions, vec![1, FORMAT_VERSION]);
    assert_eq!(report.segments[1].last_commit_seq, Some(20));
    check_prefix(dir.path(), 20);
    let (_, again) = reopen(dir.path()).unwrap();
    assert!(again.new_format_segment.is_none());

    // An empty format-1 segment simply gets the current header.
    let empty = tempfile::tempdir().unwrap();
    write_format1(empty.path(), 0);
    let (mut w, report) = reopen(empty.path()).unwrap();
    assert!(report.new_format_segment.is_none());
    batch(&mut w, 2, Durability::Fsync);
    drop(w);
    let report = journal::verify::<JournalError>(empty.path(), |_| Ok(())).unwrap();
    assert_eq!(report.segments.len(), 1);
    assert_eq!(report.segments[0].format_version, FORMAT_VERSION);
    assert_eq!(report.segments[0].last_commit_seq, Some(2));
}

#[test]
fn a_format1_segment_with_a_marker_frame_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_format1(dir.path(), 4);
    let (_, off, len) = locate(dir.path(), 4);
    let mut bytes = std::fs::read(&path).unwrap();
    let crc4 = u32::from_le_bytes(bytes[off as usize..off as usize + 4].try_into().unwrap());
    let mut m = [0u8; COMMIT_MARKER_LEN];
    seal_commit_marker(&mut m, 4, crc4, true);
    let at = (off + len) as usize;
    bytes[at..at + COMMIT_MARKER_LEN].copy_from_slice(&m);
    std::fs::write(&path, bytes).unwrap();
    // Not a frame of that format: the end of the records (a torn tail), never a marker.
    let report = journal::verify::<JournalError>(dir.path(), |_| Ok(())).unwrap();
    let t = report.torn_tail.unwrap();
    assert_eq!(
        (t.offset, t.fault),
        (at as u64, RecordFault::ReservedNotZero)
    );
    assert_eq!(report.last_seq, Some(4));
}
