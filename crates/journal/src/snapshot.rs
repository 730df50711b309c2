//! Snapshots: opaque state bytes tagged with the sequence number of the last command they
//! include, stored atomically as `DIR/snapshots/<seq, 20 digits>.snap`.
//!
//! Role: a shortcut for replay. State after a snapshot at `seq` plus replay of records
//! `seq + 1..` must equal replay of the whole journal; this crate only stores the bytes.
//!
//! Never: exposes a half-written snapshot (write to `.tmp`, fsync, rename, fsync directory),
//! returns bytes whose checksum fails, or deletes journal segments.
//!
//! File layout: `magic[8] = "RIALTOS\0" | version u32 | crc32c u32 | seq u64 | len u64 |
//! payload[len]`, the CRC covering every byte except the CRC field.
//!
//! Selection rule: [`load_latest`] returns the valid snapshot with the highest sequence number.
//! A newer snapshot that is damaged (bad header, checksum, or name/header mismatch) is skipped
//! and listed in [`SnapshotLoad::skipped`] so start-up can report it; recovery then replays more
//! of the journal from the older snapshot, which is correct as long as the journal segments
//! after the oldest kept snapshot are kept (this crate never deletes segments).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::error::JournalError;
use crate::format::{parse_seq_name, u32_at, u64_at};
use crate::writer::sync_dir;

/// Snapshot file magic.
pub const SNAPSHOT_MAGIC: [u8; 8] = *b"RIALTOS\0";
/// Snapshot layout version.
pub const SNAPSHOT_VERSION: u32 = 1;
/// Header bytes before the payload.
pub const SNAPSHOT_HEADER_LEN: usize = 32;
/// Sub-directory of the data directory that holds snapshots.
pub const SNAPSHOT_SUBDIR: &str = "snapshots";
/// File name suffix of a snapshot.
pub const SNAPSHOT_SUFFIX: &str = ".snap";
/// How many snapshots [`prune`] keeps by default.
pub const SNAPSHOTS_KEPT_DEFAULT: usize = 3;

/// A loaded, verified snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Sequence number of the last journal record included in the state.
    pub seq: u64,
    pub bytes: Vec<u8>,
    pub path: PathBuf,
}

/// A snapshot file that was not used, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedSnapshot {
    pub path: PathBuf,
    pub reason: String,
}

/// Result of [`load_latest`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotLoad {
    /// The newest valid snapshot, if any.
    pub latest: Option<Snapshot>,
    /// Newer snapshot files that were damaged and skipped, newest first.
    pub skipped: Vec<SkippedSnapshot>,
}

/// Path of the snapshot for `seq` in `data_dir`.
pub fn snapshot_path(data_dir: &Path, seq: u64) -> PathBuf {
    data_dir
        .join(SNAPSHOT_SUBDIR)
        .join(format!("{seq:020}{SNAPSHOT_SUFFIX}"))
}

/// Writes the snapshot of the state after record `seq` atomically and durably, replacing an
/// existing snapshot with the same `seq`. Returns its path.
pub fn write(data_dir: &Path, seq: u64, bytes: &[u8]) -> Result<PathBuf, JournalError> {
    if seq == 0 {
        return Err(JournalError::InvalidSnapshot(
            "sequence number 0 (no record) cannot be snapshotted".into(),
        ));
    }
    let dir = data_dir.join(SNAPSHOT_SUBDIR);
    std::fs::create_dir_all(&dir).map_err(|e| JournalError::io("create directory", &dir, e))?;
    let path = snapshot_path(data_dir, seq);
    let tmp = path.with_extension("snap.tmp");
    let header = encode_header(seq, bytes);
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .map_err(|e| JournalError::io("create", &tmp, e))?;
    file.write_all(&header)
        .and_then(|()| file.write_all(bytes))
        .map_err(|e| JournalError::io("write", &tmp, e))?;
    file.sync_all()
        .map_err(|e| JournalError::io("fsync", &tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, &path).map_err(|e| JournalError::io("rename", &tmp, e))?;
    sync_dir(&dir)?;
    Ok(path)
}

/// Lists snapshot files (`<20 digits>.snap`) as `(seq, path)`, oldest first.
pub fn list(data_dir: &Path) -> Result<Vec<(u64, PathBuf)>, JournalError> {
    let dir = data_dir.join(SNAPSHOT_SUBDIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(JournalError::io("read directory", &dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| JournalError::io("read directory", &dir, e))?;
        if let Some(seq) = entry
            .file_name()
            .to_str()
            .and_then(|n| parse_seq_name(n, SNAPSHOT_SUFFIX))
        {
            out.push((seq, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Loads the newest valid snapshot (see the selection rule in the module docs). I/O errors
/// other than damaged contents are returned as errors, never skipped.
pub fn load_latest(data_dir: &Path) -> Result<SnapshotLoad, JournalError> {
    let mut load = SnapshotLoad::default();
    for (seq, path) in list(data_dir)?.into_iter().rev() {
        // Header and payload into separate buffers: the payload is returned as read, not
        // moved down by the header's length (tens of ms for a snapshot of 90 MB).
        let mut header = Vec::with_capacity(SNAPSHOT_HEADER_LEN);
        let mut bytes = Vec::new();
        File::open(&path)
            .and_then(|mut f| {
                let len = f.metadata()?.len() as usize;
                (&mut f)
                    .take(SNAPSHOT_HEADER_LEN as u64)
                    .read_to_end(&mut header)?;
                bytes.reserve_exact(len.saturating_sub(SNAPSHOT_HEADER_LEN));
                f.read_to_end(&mut bytes)
            })
            .map_err(|e| JournalError::io("read", &path, e))?;
        match decode(&header, &bytes, seq) {
            Ok(()) => {
                load.latest = Some(Snapshot { seq, bytes, path });
                return Ok(load);
            }
            Err(reason) => load.skipped.push(SkippedSnapshot { path, reason }),
        }
    }
    Ok(load)
}

/// Deletes all but the `keep` newest snapshots (at least one is always kept) and leftover
/// `.snap.tmp` files. Call it after a successful [`write()`], so the newest is known valid.
/// Returns the removed paths.
pub fn prune(data_dir: &Path, keep: usize) -> Result<Vec<PathBuf>, JournalError> {
    let keep = keep.max(1);
    let dir = data_dir.join(SNAPSHOT_SUBDIR);
    let mut removed = Vec::new();
    let snaps = list(data_dir)?;
    let old = snaps.len().saturating_sub(keep);
    for (_, path) in snaps.into_iter().take(old) {
        std::fs::remove_file(&path).map_err(|e| JournalError::io("remove", &path, e))?;
        removed.push(path);
    }
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_str().is_some_and(|n| n.ends_with(".snap.tmp")) {
                let path = entry.path();
                std::fs::remove_file(&path).map_err(|e| JournalError::io("remove", &path, e))?;
                removed.push(path);
            }
        }
    }
    if !removed.is_empty() {
        sync_dir(&dir)?;
    }
    Ok(removed)
}

fn encode_header(seq: u64, payload: &[u8]) -> [u8; SNAPSHOT_HEADER_LEN] {
    let mut h = [0u8; SNAPSHOT_HEADER_LEN];
    h[0..8].copy_from_slice(&SNAPSHOT_MAGIC);
    h[8..12].copy_from_slice(&SNAPSHOT_VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&seq.to_le_bytes());
    h[24..32].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    let crc = crc(&h, payload);
    h[12..16].copy_from_slice(&crc.to_le_bytes());
    h
}

fn crc(header: &[u8], payload: &[u8]) -> u32 {
    let c = crc32c::crc32c(&header[0..12]);
    let c = crc32c::crc32c_append(c, &header[16..SNAPSHOT_HEADER_LEN]);
    crc32c::crc32c_append(c, payload)
}

/// Checks a snapshot file (its header, then the rest) against the sequence number in its name.
fn decode(header: &[u8], payload: &[u8], name_seq: u64) -> Result<(), String> {
    if header.len() < SNAPSHOT_HEADER_LEN {
        return Err(format!(
            "file of {} bytes is shorter than the header",
            header.len() + payload.len()
        ));
    }
    if header[0..8] != SNAPSHOT_MAGIC {
        return Err("bad magic".into());
    }
    let version = u32_at(header, 8);
    if version != SNAPSHOT_VERSION {
        return Err(format!("unsupported version {version}"));
    }
    let seq = u64_at(header, 16);
    let len = u64_at(header, 24);
    if len != payload.len() as u64 {
        return Err(format!(
            "header says {len} payload bytes, file has {}",
            payload.len()
        ));
    }
    if u32_at(header, 12) != crc(header, payload) {
        return Err("checksum mismatch".into());
    }
    if seq != name_seq {
        return Err(format!("file name says seq {name_seq}, header says {seq}"));
    }
    Ok(())
}
