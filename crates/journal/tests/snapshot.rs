//! Snapshot atomic write, newest-valid selection, and retention.

use journal::snapshot;

#[test]
fn newest_valid_snapshot_is_loaded() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        snapshot::load_latest(dir.path()).unwrap(),
        Default::default()
    );
    snapshot::write(dir.path(), 10, b"state at 10").unwrap();
    snapshot::write(dir.path(), 200, b"state at 200").unwrap();
    let p = snapshot::write(dir.path(), 30, b"").unwrap();
    assert_eq!(p, snapshot::snapshot_path(dir.path(), 30));
    let load = snapshot::load_latest(dir.path()).unwrap();
    let s = load.latest.unwrap();
    assert_eq!((s.seq, s.bytes.as_slice()), (200, &b"state at 200"[..]));
    assert!(load.skipped.is_empty());
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path().join("snapshots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.iter().all(|n| n.ends_with(".snap")));
}

#[test]
fn corrupt_newest_snapshot_is_reported_and_the_previous_used() {
    let dir = tempfile::tempdir().unwrap();
    snapshot::write(dir.path(), 5, b"five").unwrap();
    snapshot::write(dir.path(), 9, b"nine").unwrap();
    let newest = snapshot::write(dir.path(), 12, b"twelve").unwrap();
    let good = std::fs::read(&newest).unwrap();
    // Every single-bit flip and every truncation of the newest file is detected.
    for bit in 0..good.len() * 8 {
        let mut bad = good.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        std::fs::write(&newest, &bad).unwrap();
        let load = snapshot::load_latest(dir.path()).unwrap();
        assert_eq!(load.latest.as_ref().unwrap().seq, 9, "bit {bit}");
        assert_eq!(load.skipped.len(), 1);
        assert_eq!(load.skipped[0].path, newest);
    }
    for len in 0..good.len() {
        std::fs::write(&newest, &good[..len]).unwrap();
        let load = snapshot::load_latest(dir.path()).unwrap();
        assert_eq!(load.latest.unwrap().bytes, b"nine", "len {len}");
    }
    // A file whose name disagrees with its header is not trusted.
    std::fs::write(&newest, &good).unwrap();
    std::fs::rename(&newest, snapshot::snapshot_path(dir.path(), 13)).unwrap();
    let load = snapshot::load_latest(dir.path()).unwrap();
    assert_eq!(load.latest.unwrap().seq, 9);
    assert!(
        load.skipped[0].reason.contains("name"),
        "{}",
        load.skipped[0].reason
    );
    // All damaged: nothing to load, everything reported.
    for (_, p) in snapshot::list(dir.path()).unwrap() {
        std::fs::write(&p, b"junk").unwrap();
    }
    let load = snapshot::load_latest(dir.path()).unwrap();
    assert!(load.latest.is_none());
    assert_eq!(load.skipped.len(), 3);
}

#[test]
fn prune_keeps_the_newest_and_removes_leftovers() {
    let dir = tempfile::tempdir().unwrap();
    for seq in [1, 2, 3, 4, 5] {
        snapshot::write(dir.path(), seq, &seq.to_le_bytes()).unwrap();
    }
    let leftover = dir
        .path()
        .join("snapshots")
        .join("00000000000000000006.snap.tmp");
    std::fs::write(&leftover, b"partial").unwrap();
    let removed = snapshot::prune(dir.path(), snapshot::SNAPSHOTS_KEPT_DEFAULT).unwrap();
    assert_eq!(removed.len(), 3);
    assert!(!leftover.exists());
    let kept: Vec<u64> = snapshot::list(dir.path())
        .unwrap()
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    assert_eq!(kept, vec![3, 4, 5]);
    snapshot::prune(dir.path(), 0).unwrap();
    assert_eq!(
        snapshot::list(dir.path()).unwrap().len(),
        1,
        "at least one is kept"
    );
    assert!(snapshot::write(dir.path(), 0, b"x").is_err());
}
