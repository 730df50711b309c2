//! Entry point for a cargo-fuzz target over recovery.
//!
//! Role: turn arbitrary bytes into a journal directory, run recovery, and check recovery's
//! invariants. It panics only if an invariant of this crate is broken (that is the finding).
//!
//! Never: panics on an I/O failure of the temporary directory (it just returns), or leaves the
//! temporary directory behind.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::format::{decode_segment_header, encode_segment_header, segment_file_name};
use crate::format::{JOURNAL_SUBDIR, SEGMENT_MAGIC};
use crate::reader::JournalReader;
use crate::writer::{Durability, JournalConfig, JournalWriter};
use crate::JournalError;

/// Writes `data` as the only segment of a fresh journal in a temporary directory and recovers
/// it. If `data` does not start with the segment magic, a valid header (first seq 1) is put in
/// front, so the fuzzer explores record decoding instead of the header check.
///
/// Checks: recovery either refuses with an error or succeeds; after success the journal reads
/// back cleanly with consecutive sequence numbers, a second recovery truncates nothing and
/// agrees on the last sequence number, and appending continues at the next number.
pub fn fuzz_recover(data: &[u8]) {
    let dir = TempDir::new();
    if dir.run(data).is_err() {
        // I/O trouble with the temporary directory is not a finding.
    }
}

struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        TempDir(std::env::temp_dir().join(format!("journal-fuzz-{}-{n}", std::process::id())))
    }

    fn run(&self, data: &[u8]) -> std::io::Result<()> {
        let journal_dir = self.0.join(JOURNAL_SUBDIR);
        let _ = std::fs::remove_dir_all(&self.0);
        std::fs::create_dir_all(&journal_dir)?;
        let mut bytes = Vec::with_capacity(data.len() + 32);
        let first_seq = if data.starts_with(&SEGMENT_MAGIC) {
            bytes.extend_from_slice(data);
            decode_segment_header(data).unwrap_or(1)
        } else {
            bytes.extend_from_slice(&encode_segment_header(1));
            bytes.extend_from_slice(data);
            1
        };
        std::fs::write(journal_dir.join(segment_file_name(first_seq)), &bytes)?;
        check(&self.0);
        Ok(())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn config() -> JournalConfig {
    JournalConfig {
        segment_size_bytes: 64 << 10,
        batch_buffer_bytes: 8 << 10,
        payload_len_max: 1024,
    }
}

fn check(data_dir: &Path) {
    let first = JournalWriter::open(data_dir, config());
    let (writer, report) = match first {
        Ok(x) => x,
        Err(JournalError::Corrupt { .. }) => {
            // Refused: a read-only walk must refuse too.
            let mut reader = JournalReader::open(data_dir, 0).expect("reader opens");
            loop {
                match reader.next_record() {
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("recovery refused a journal the reader accepts"),
                    Err(_) => return,
                }
            }
        }
        Err(_) => return,
    };
    drop(writer);
    let mut reader = JournalReader::open(data_dir, 0).expect("reader opens");
    let mut count = 0u64;
    let mut prev = None;
    while let Some(rec) = reader
        .next_record()
        .expect("recovered journal reads cleanly")
    {
        if let Some(p) = prev {
            assert_eq!(rec.seq, p + 1, "sequence numbers are consecutive");
        }
        prev = Some(rec.seq);
        count += 1;
    }
    assert!(
        reader.torn_tail().is_none(),
        "recovered journal has no torn tail"
    );
    assert_eq!(count, report.records);
    assert_eq!(prev, report.last_seq);

    let (mut writer, again) = JournalWriter::open(data_dir, config()).expect("second recovery");
    assert!(
        again.truncated.is_none(),
        "second recovery truncates nothing"
    );
    assert_eq!(again.last_seq, report.last_seq);
    let seq = match writer.append(1, 2, b"after recovery") {
        Ok(seq) => seq,
        Err(JournalError::SeqExhausted) => {
            assert_eq!(report.last_seq, Some(u64::MAX - 1));
            return;
        }
        Err(e) => panic!("append after recovery: {e}"),
    };
    if let Some(last) = report.last_seq {
        assert_eq!(seq, last + 1, "appending continues the sequence");
    }
    assert_eq!(writer.commit(Durability::Process).expect("commit"), seq);
    drop(writer);
    let (_, third) = JournalWriter::open(data_dir, config()).expect("third recovery");
    assert_eq!(third.last_seq, Some(seq));
    assert!(third.truncated.is_none());
}
