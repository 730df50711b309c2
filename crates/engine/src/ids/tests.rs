use super::*;
use std::collections::BTreeSet;
use types::XorShift64;

impl IdIndex {
    /// Every used id, ascending (expands the bitmap's runs, merges the sparse ids).
    pub(crate) fn all_used(&self) -> Vec<u64> {
        let mut out = Vec::new();
        self.bitmap_runs(|s, n| out.extend(s..s + n));
        out.extend(self.sparse_sorted());
        out.sort_unstable();
        out
    }
}

/// The digest computed from the set alone, as the module comment defines it.
fn reference_digest(set: &BTreeSet<u64>, direct_len: u64) -> (u64, u64) {
    let mut words = std::collections::BTreeMap::<u64, u64>::new();
    let mut digest = 0u64;
    for &k in set {
        if k < direct_len {
            *words.entry(k / 64).or_default() |= 1 << (k % 64);
        } else {
            digest = digest.wrapping_add(mix64(k ^ SPARSE_SALT));
        }
    }
    for (w, bits) in words {
        digest = digest.wrapping_add(mix64(mix64(w) ^ bits));
    }
    (set.len() as u64, digest)
}

/// Marks `ids` in order (each twice: idempotent), checking membership before and after and
/// some probes along the way, then the whole set, the digest and the runs.
fn check_against_btreeset(direct: usize, hashed: usize, ids: &[u64], seed: u64) -> IdIndex {
    let mut ix = IdIndex::new(direct, hashed, 16);
    let mut set = BTreeSet::new();
    let mut rng = XorShift64::new(seed | 1);
    for (n, &id) in ids.iter().enumerate() {
        assert_eq!(ix.is_used(id), set.contains(&id), "before marking {id}");
        ix.mark_used(id);
        if n % 3 == 0 {
            ix.mark_used(id);
        }
        set.insert(id);
        assert!(ix.is_used(id), "after marking {id}");
        if n % 7 == 0 {
            // A probe near an earlier id, and a random one.
            let near = ids[(rng.next_u64() as usize) % (n + 1)].wrapping_add(rng.next_u64() % 5);
            assert_eq!(ix.is_used(near), set.contains(&near), "probe {near}");
            let far = rng.next_u64();
            assert_eq!(ix.is_used(far), set.contains(&far), "probe {far}");
        }
    }
    let used = ix.used_digest();
    assert_eq!(used, reference_digest(&set, ix.direct_len));
    assert_eq!(ix.all_used(), set.iter().copied().collect::<Vec<_>>());
    let mut runs = Vec::new();
    ix.bitmap_runs(|s, n| runs.push((s, n)));
    for w in runs.windows(2) {
        assert!(
            w[0].0 + w[0].1 < w[1].0,
            "runs maximal and ascending: {w:?}"
        );
    }
    assert!(runs.iter().all(|&(_, n)| n > 0));
    ix.check_chunks().unwrap();
    ix
}

#[test]
fn dense_ids_fill_chunks_across_direct_len_and_chunk_boundaries() {
    let direct = 1000; // rounded up to 1024
    let end = 1024 + CHUNK_IDS + 300;
    // Sequential with a gap of 1 every 97 ids: the exchange's stream with a few rejects.
    let ids: Vec<u64> = (0..end).filter(|i| i % 97 != 5).collect();
    let ix = check_against_btreeset(direct, 16, &ids, 1);
    assert_eq!(ix.chunks.len(), 2);
    assert_eq!(
        ix.sparse.len, 0,
        "sequential ids never reach the sparse set"
    );
}

#[test]
fn sparse_random_ids_grow_incrementally() {
    let mut rng = XorShift64::new(7);
    // Enough to grow from 16 buckets through several multi-segment tables.
    let ids: Vec<u64> = (0..60_000).map(|_| rng.next_u64() | 1 << 40).collect();
    let mut ix = IdIndex::new(64, 16, 16);
    let mut growths = 0;
    for (n, &id) in ids.iter().enumerate() {
        let was_moving = ix.sparse.old.is_some();
        ix.mark_used(id);
        growths += (!was_moving && ix.sparse.old.is_some()) as u32;
        if let Some(o) = &ix.sparse.old {
            // The move ends well before the new table could need to grow.
            assert!(ix.sparse.cur.len * 2 <= ix.sparse.cur.cap, "step {n}");
            assert!(o.cap * 2 == ix.sparse.cur.cap);
        }
        if n % 1000 == 999 {
            for &k in &ids[..=n] {
                assert!(ix.is_used(k), "{k} lost at step {n}");
            }
        }
    }
    assert!(growths >= 12, "{growths}");
    assert!(ix.chunks.is_empty());
    check_against_btreeset(64, 16, &ids, 3);
}

#[test]
fn mixtures_around_the_frontier() {
    let mut rng = XorShift64::new(11);
    for round in 0..6u64 {
        let direct = [64, 100, 4096][round as usize % 3];
        let d = (direct as u64).next_multiple_of(64);
        let mut ids = Vec::new();
        let mut seq = 0u64;
        for _ in 0..40_000 {
            let r = rng.next_u64();
            let id = match r % 10 {
                // Sequential from 0: reaches the chunks.
                0..=4 => {
                    seq += 1 + (r >> 60) % 2;
                    seq
                }
                // Just past the frontier, or in the next chunk: dense or not.
                5 => d + (r >> 8) % (3 * CHUNK_IDS),
                // Around direct_len and chunk boundaries.
                6 => {
                    let edge = d + ((r >> 8) % 4) * CHUNK_IDS;
                    (edge + (r >> 20) % 8).wrapping_sub(4)
                }
                // Far sparse ids, some of them at the very top.
                7 => rng.next_u64() | 1 << 63,
                8 => u64::MAX - (r >> 8) % 4,
                // Repeats.
                _ => *ids.get((r >> 8) as usize % ids.len().max(1)).unwrap_or(&0),
            };
            ids.push(id);
        }
        check_against_btreeset(direct, 16, &ids, round);
    }
}

#[test]
fn sparse_ids_overtaken_by_the_frontier_stay_found_once() {
    // Ids just past the first chunk are sparse when they arrive (the chunks are too empty
    // to grow), then sequential ids fill the chunks up to and beyond them.
    let d = 64u64;
    let mut ids: Vec<u64> = (0..500).map(|i| d + CHUNK_IDS + i * 3).collect();
    ids.extend(0..d + 2 * CHUNK_IDS);
    let ix = check_against_btreeset(64, 16, &ids, 5);
    assert_eq!(ix.sparse.len, 500);
    assert_eq!(ix.chunks.len(), 2);
    assert_eq!(ix.used_digest().0, d + 2 * CHUNK_IDS);
}

#[test]
fn isolated_far_ids_get_no_chunk() {
    // One id at the start of each next chunk: a chunk each would cost 128 KiB per id.
    let d = 64u64;
    let ids: Vec<u64> = (0..64).map(|i| d + i * CHUNK_IDS).collect();
    let ix = check_against_btreeset(64, 16, &ids, 9);
    assert_eq!(
        ix.chunks.len(),
        1,
        "only the first, which the frontier reached"
    );
    assert_eq!(ix.sparse.len, 63);
}

#[test]
fn digest_of_a_fixed_set_is_pinned() {
    // Pinned with the build before the chunked bitmap (direct bits + one hash set): the
    // state hash of every published journal and snapshot depends on this value.
    let mut ix = IdIndex::new(4096, 16, 16);
    let mut rng = XorShift64::new(0x1234_5678);
    for i in 0..3_000_000u64 {
        if i % 13 != 7 {
            ix.mark_used(i);
        }
    }
    for _ in 0..20_000 {
        ix.mark_used(rng.next_u64());
    }
    for i in 0..1000 {
        ix.mark_used(u64::MAX - i * 3);
    }
    assert_eq!(ix.used_digest(), PINNED_DIGEST);
}

#[test]
fn live_map_and_used_set_together() {
    let mut ix = IdIndex::new(100, 16, 16);
    let ids: Vec<u64> = (0..2000u64)
        .map(|i| {
            if i % 2 == 0 {
                i % 100
            } else {
                mix64(i) | 1 << 40
            }
        })
        .collect();
    for (n, &id) in ids.iter().enumerate() {
        assert_eq!(ix.is_used(id), n % 2 == 0 && n >= 100);
        ix.mark_used(id);
        ix.set_live(id, n as u32);
    }
    for (n, &id) in ids.iter().enumerate() {
        if n >= 1900 || n % 2 == 1 {
            assert_eq!(ix.live_slot(id), Some(n as u32), "id {id}");
        }
        assert!(ix.is_used(id));
    }
    assert!(!ix.is_used(1 << 41));
    assert!(!ix.is_used(u64::MAX));
    assert_eq!(ix.live_slot(1 << 41), None);
    ix.set_gone(ids[1]);
    ix.set_gone(ids[2]);
    assert_eq!(ix.live_slot(ids[1]), None);
    assert_eq!(ix.live_slot(ids[2]), None);
    assert!(ix.is_used(ids[1]) && ix.is_used(ids[2]));
    assert_eq!(ix.used_digest().0, 50 + 1000, "50 distinct even direct ids");
    let all = ix.all_used();
    assert_eq!(all.len(), 1050);
    assert!(all.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn restore_parts_rebuild_the_same_set() {
    let mut rng = XorShift64::new(21);
    let mut ids: Vec<u64> = (0..64 + CHUNK_IDS + 5000).filter(|i| i % 11 != 0).collect();
    ids.extend((0..3000).map(|_| rng.next_u64()));
    ids.extend((0..200).map(|i| 64 + 3 * CHUNK_IDS + i));
    let a = check_against_btreeset(64, 16, &ids, 2);
    let mut b = IdIndex::new(64, 16, 16);
    b.restore_chunks(a.chunk_count()).unwrap();
    let mut runs = Vec::new();
    a.bitmap_runs(|s, n| runs.push((s, n)));
    for (s, n) in runs {
        b.restore_run(s, n).unwrap();
    }
    let sparse = a.sparse_sorted();
    b.reserve_sparse(sparse.len());
    for &k in &sparse {
        b.restore_sparse(k).unwrap();
    }
    b.check_chunks().unwrap();
    assert_eq!(b.used_digest(), a.used_digest());
    assert_eq!(b.all_used(), a.all_used());
    assert_eq!(b.restore_sparse(sparse[0]), Err("sparse id used twice"));
    assert_eq!(b.restore_sparse(5), Err("sparse id below ids_direct"));
    let covered = 64 + 2 * CHUNK_IDS;
    assert!(b.restore_run(covered - 1, 2).is_err());
    assert!(b.restore_run(u64::MAX, 2).is_err());
    assert!(b.restore_run(10, 0).is_err());
    assert!(IdIndex::new(64, 16, 16)
        .restore_chunks(CHUNKS_MAX + 1)
        .is_err());
    let mut c = IdIndex::new(64, 16, 16);
    c.restore_chunks(3).unwrap();
    c.restore_run(64, 1).unwrap();
    assert_eq!(c.check_chunks(), Err("id chunks sparser than 1/8"));
    let mut e = IdIndex::new(64, 16, 16);
    e.restore_chunks(1).unwrap();
    assert_eq!(e.check_chunks(), Err("last id chunk empty"));
}

/// `(count, digest)` of the set in `digest_of_a_fixed_set_is_pinned`, from the old build.
const PINNED_DIGEST: (u64, u64) = (2_790_231, 0x7bc8_9af2_0935_5787);

#[test]
fn live_map_matches_a_btreemap_under_churn() {
    let mut m = LiveMap::new(16);
    let mut r = std::collections::BTreeMap::new();
    let mut rng = XorShift64::new(88172645463325252);
    for step in 0..200_000u32 {
        let x = rng.next_u64();
        // A small key space forces collisions, wrap-around and deletions mid-cluster.
        let id = if step % 3 == 0 {
            x % 512
        } else {
            x % 5000 + (1 << 33)
        };
        if x >> 60 < 7 {
            m.put(id, step);
            r.insert(id, step);
        } else {
            m.remove(id);
            r.remove(&id);
        }
        let probe = (x >> 20) % 5000 + if step % 2 == 0 { 0 } else { 1 << 33 };
        assert_eq!(m.get(probe), r.get(&probe).copied());
        assert_eq!(m.len, r.len());
    }
    for (k, v) in &r {
        assert_eq!(m.get(*k), Some(*v));
    }
}
