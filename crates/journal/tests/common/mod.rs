//! Helpers shared by the journal's integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use journal::{Durability, JournalConfig, JournalReader, JournalWriter};

/// One record as written by a test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    pub seq: u64,
    pub timestamp_ns: u64,
    pub kind: u16,
    pub payload: Vec<u8>,
}

/// Small segments so tests roll often.
pub fn small_config() -> JournalConfig {
    JournalConfig {
        segment_size_bytes: 4096,
        batch_buffer_bytes: 2048,
        payload_len_max: 512,
    }
}

/// Deterministic payload for record `i`: length 1..=200, never starting with a zero byte.
pub fn payload(i: u64) -> Vec<u8> {
    let len = 1 + (i.wrapping_mul(2654435761) % 200) as usize;
    (0..len)
        .map(|j| (i as u8).wrapping_mul(31).wrapping_add(j as u8) | 1)
        .collect()
}

/// Appends `n` records in batches of `batch` and commits each batch.
pub fn append_records(writer: &mut JournalWriter, n: u64, batch: u64) -> Vec<Written> {
    let mut out = Vec::new();
    let mut in_batch = 0;
    for _ in 0..n {
        let i = writer.next_seq();
        let rec = Written {
            seq: i,
            timestamp_ns: 1_000_000 + i * 7,
            kind: (i % 5) as u16,
            payload: payload(i),
        };
        let seq = writer
            .append(rec.kind, rec.timestamp_ns, &rec.payload)
            .expect("append");
        assert_eq!(seq, rec.seq);
        out.push(rec);
        in_batch += 1;
        if in_batch == batch {
            assert_eq!(writer.commit(Durability::Process).expect("commit"), seq);
            in_batch = 0;
        }
    }
    writer.commit(Durability::Process).expect("commit");
    out
}

/// Creates a journal with `n` records in `dir`.
pub fn write_journal(dir: &Path, n: u64, config: JournalConfig) -> Vec<Written> {
    let (mut writer, report) = JournalWriter::open(dir, config).expect("open");
    assert!(report.created);
    append_records(&mut writer, n, 7)
}

/// Every record of the journal with its (segment, offset).
pub fn read_all(dir: &Path) -> Result<Vec<(Written, PathBuf, u64)>, journal::JournalError> {
    let mut reader = JournalReader::open(dir, 0)?;
    let mut out = Vec::new();
    while let Some(r) = reader.next_record()? {
        out.push((
            Written {
                seq: r.seq,
                timestamp_ns: r.timestamp_ns,
                kind: r.kind,
                payload: r.payload.to_vec(),
            },
            r.segment.to_path_buf(),
            r.offset,
        ));
    }
    Ok(out)
}

/// Copies every file of `from` (recursively) into a fresh directory `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Flips bit `bit` of byte `offset` in `path`.
pub fn flip_bit(path: &Path, offset: u64, bit: u8) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[offset as usize] ^= 1 << bit;
    std::fs::write(path, bytes).unwrap();
}

/// A write that reached the disk only up to `from`: zeroes every byte of `path` from `from` on
/// (the rest of the last record, and the commit marker written with it).
pub fn tear_last_write(path: &Path, from: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[from as usize..].fill(0);
    std::fs::write(path, bytes).unwrap();
}
