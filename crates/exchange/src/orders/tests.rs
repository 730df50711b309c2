use super::*;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use types::XorShift64;

/// The finished-order index (`DoneIndex`) against a `HashMap`: sequential ids that share
/// cells with older ones still indexed (so through the overflow and back), far ids, and
/// ids indexed and removed in an order other than their numbering.
#[test]
fn done_index_matches_a_map() {
    let mut t = DoneIndex::with_capacity(64);
    assert_eq!(t.cells.len(), 64);
    let mut m = HashMap::new();
    let mut rng = XorShift64::new(0x9E37_79B9_7F4A_7C15);
    for step in 0..50_000u64 {
        let x = rng.next_u64();
        // Mostly recent ids of a numbering that moves on by one a step; some that are
        // 64 or 128 ids older (the same cell); some far ones.
        let id = match x % 16 {
            0 => x >> 24,
            1 | 2 => step.saturating_sub(64 * (1 + x % 2)),
            _ => step.saturating_sub(x % 48),
        };
        if (x >> 8).is_multiple_of(3) {
            assert_eq!(t.remove(id), m.remove(&id), "remove {id}");
        } else if let Entry::Vacant(v) = m.entry(id) {
            v.insert(step as u32);
            t.insert(id, step as u32);
        }
        assert_eq!(t.get(id), m.get(&id).copied(), "get {id}");
        let in_cells = t.cells.iter().filter(|c| c.1 != DoneIndex::EMPTY).count();
        assert_eq!(in_cells + t.overflow.len, m.len(), "each id in one place");
    }
    assert!(t.overflow.len > 0, "the test reaches the overflow");
    for (&id, &slot) in &m {
        assert_eq!(t.get(id), Some(slot));
        assert_eq!(t.remove(id), Some(slot));
        assert_eq!(t.get(id), None);
    }
    assert_eq!(t.overflow.len, 0);
    assert!(t.cells.iter().all(|c| c.1 == DoneIndex::EMPTY));
}

/// The order index (`SlotTable`) against a `HashMap`, through growth, removals that shift
/// probe runs back (dense sequential ids and ids that share home buckets), `put` over an
/// existing id and `clear`.
#[test]
fn slot_table_matches_a_map() {
    let mut t = SlotTable::with_capacity(4);
    let start_buckets = t.buckets.len();
    let mut m = HashMap::new();
    let mut rng = XorShift64::new(0x2545_F491_4F6C_DD1D);
    for step in 0..20_000u64 {
        let x = rng.next_u64();
        // Mostly a window of sequential ids (as orders are numbered), some far ones.
        let id = if x.is_multiple_of(8) {
            x >> 20
        } else {
            step.saturating_sub(x % 64)
        };
        match x % 5 {
            0 | 1 => {
                if let Entry::Vacant(v) = m.entry(id) {
                    v.insert(step as u32);
                    t.insert(id, step as u32);
                }
            }
            2 => {
                m.insert(id, step as u32);
                t.put(id, step as u32);
            }
            _ => assert_eq!(t.remove(id), m.remove(&id), "remove {id}"),
        }
        assert_eq!(t.get(id), m.get(&id).copied());
        assert_eq!(t.len, m.len());
    }
    assert!(t.buckets.len() > start_buckets, "the table grew");
    let mut all: Vec<(u64, u32)> = t.iter().collect();
    all.sort_unstable();
    let mut want: Vec<(u64, u32)> = m.iter().map(|(&k, &v)| (k, v)).collect();
    want.sort_unstable();
    assert_eq!(all, want);
    for &(id, slot) in &want {
        assert_eq!(t.get(id), Some(slot));
    }
    t.clear();
    assert_eq!(t.len, 0);
    assert!(want.iter().all(|&(id, _)| t.get(id).is_none()));
}
