//! Property: random truncation, bit flips and zeroed ranges anywhere in a journal are either
//! refused (an error) or recovered to a prefix of what was written. Never silently accepted:
//! every record recovery keeps is byte-for-byte the record written with that sequence number.

mod common;

use common::*;
use journal::{JournalError, JournalWriter};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Damage {
    /// Flip bit `bit` of the byte at fraction `at` of the file of segment `seg`.
    Flip { seg: usize, at: f64, bit: u8 },
    /// Cut segment `seg` at fraction `at` of its length.
    Truncate { seg: usize, at: f64 },
    /// Zero `len` bytes from fraction `at` of segment `seg`.
    Zero { seg: usize, at: f64, len: usize },
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 0.0..1.0f64, 0u8..8).prop_map(|(seg, at, bit)| Damage::Flip {
            seg,
            at,
            bit
        }),
        (any::<usize>(), 0.0..1.0f64).prop_map(|(seg, at)| Damage::Truncate { seg, at }),
        (any::<usize>(), 0.0..1.0f64, 1usize..64).prop_map(|(seg, at, len)| Damage::Zero {
            seg,
            at,
            len
        }),
    ]
}

/// Applies `d`, preferring the last segment half of the time (where the tail rule matters).
fn apply(dir: &std::path::Path, d: &Damage) {
    let (segments, _) = journal::list_segments(dir).unwrap();
    let pick = |seg: usize| {
        let i = if seg.is_multiple_of(2) {
            segments.len() - 1
        } else {
            seg % segments.len()
        };
        segments[i].path.clone()
    };
    match *d {
        Damage::Flip { seg, at, bit } => {
            let path = pick(seg);
            // Aim at the used part of the file (records), not the zero preallocation.
            let used = used_len(&path);
            let offset = (at * used as f64) as u64;
            // An earlier truncation may have left no byte at that offset to flip.
            if offset < std::fs::metadata(&path).unwrap().len() {
                flip_bit(&path, offset, bit);
            }
        }
        Damage::Truncate { seg, at } => {
            let path = pick(seg);
            let used = used_len(&path);
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len((at * used as f64) as u64).unwrap();
        }
        Damage::Zero { seg, at, len } => {
            let path = pick(seg);
            let mut bytes = std::fs::read(&path).unwrap();
            let used = used_len(&path);
            let from = (at * used as f64) as usize;
            let to = (from + len).min(bytes.len());
            bytes[from..to].fill(0);
            std::fs::write(&path, bytes).unwrap();
        }
    }
}

/// Bytes up to the last non-zero byte (at least 1).
fn used_len(path: &std::path::Path) -> usize {
    let bytes = std::fs::read(path).unwrap();
    bytes.iter().rposition(|&b| b != 0).map_or(1, |i| i + 1)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn damage_is_never_silently_accepted(
        n in 1u64..120,
        damages in proptest::collection::vec(damage(), 1..4),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let written = write_journal(dir.path(), n, small_config());
        for d in &damages {
            apply(dir.path(), d);
        }
        match JournalWriter::open(dir.path(), small_config()) {
            Ok((mut writer, report)) => {
                let kept = report.records as usize;
                prop_assert!(kept <= written.len());
                let read = read_all(dir.path()).unwrap();
                prop_assert_eq!(read.len(), kept);
                for (w, (r, _, _)) in written.iter().zip(&read) {
                    prop_assert_eq!(w, r);
                }
                // Appending continues right after the kept prefix.
                let seq = writer.append(0, 0, b"next").unwrap();
                prop_assert_eq!(seq, kept as u64 + 1);
            }
            Err(JournalError::Corrupt { .. }) => {}
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The fuzz entry point holds its invariants on arbitrary bytes.
    #[test]
    fn fuzz_recover_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        journal::fuzz_recover(&bytes);
    }

    /// ... and on real segments with random damage (where it reaches the deeper paths).
    #[test]
    fn fuzz_recover_on_damaged_segments(
        n in 1u64..60,
        flips in proptest::collection::vec((any::<usize>(), 0u8..8), 0..4),
        cut in proptest::option::of(any::<usize>()),
    ) {
        let dir = tempfile::tempdir().unwrap();
        write_journal(dir.path(), n, small_config());
        let (segments, _) = journal::list_segments(dir.path()).unwrap();
        let mut bytes = std::fs::read(&segments[segments.len() - 1].path).unwrap();
        let used = bytes.iter().rposition(|&b| b != 0).map_or(1, |i| i + 1);
        for (at, bit) in flips {
            bytes[at % used] ^= 1 << bit;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut % (used + 1));
        }
        journal::fuzz_recover(&bytes);
    }
}
