use super::*;
use engine::hint::Populate;
use std::collections::{HashMap, HashSet};
use types::XorShift64;

/// The position index with long probe runs that wrap around the end of the table and
/// many equal tags, against a plain list, through insertions and removals; then a run too
/// long to code is refused without a change, and so is an entry past 5/8 full.
#[test]
fn position_index_with_colliding_hashes() {
    let mut t = PosTable::new(1000, 12);
    let cap = t.slots.len() as u64;
    let mut model: Vec<(u64, u64)> = Vec::new();
    let mut rng = XorShift64::new(0x9E37_79B9_7F4A_7C15);
    for pos in 0..20_000u64 {
        let r = rng.next_u64();
        // Homes among 16 slots astride the end of the table; half the hashes share
        // their tag bits, the other half differ only there.
        let home = (cap - 8 + (r >> 40) % 16) % cap;
        let high = if r.is_multiple_of(2) {
            0
        } else {
            (r >> 8) << 38
        };
        let hash = home | high;
        if model.len() < 40 {
            t.insert(hash, pos).expect("room and short runs");
            model.push((hash, pos));
        }
        if r % 5 < 2 || model.len() >= 40 {
            let k = (r >> 20) as usize % model.len();
            let (h, p) = model.swap_remove(k);
            let slot = t.find(h, |q| q == p as u32 & 0xFFF).expect("present");
            t.remove_at(slot);
        }
        for &(h, p) in &model {
            assert!(
                t.find(h, |q| q == p as u32 & 0xFFF).is_some(),
                "lost {p} at {pos}"
            );
        }
        assert_eq!(t.len, model.len());
        assert_eq!(t.slots.iter().filter(|&&s| s != 0).count(), model.len());
    }
    // One home for all: the entry after `DISP_MAX + 1` of them would sit `DISP_MAX + 1`
    // slots from it, one more than a slot can code.
    let mut t = PosTable::new(1000, 12);
    for pos in 0..=PosTable::DISP_MAX as u64 {
        t.insert(5, pos).expect("codable");
    }
    let before = t.slots.clone();
    assert_eq!(t.insert(5, 99), Err(()));
    assert_eq!(t.slots, before);
    assert_eq!(t.len, PosTable::DISP_MAX + 1);
    for pos in 0..=PosTable::DISP_MAX as u32 {
        assert!(t.find(5, |q| q == pos).is_some());
    }
    // Full at 5/8.
    let mut t = PosTable::new(10, 12);
    let room = t.capacity();
    for pos in 0..room as u64 {
        t.insert(pos.wrapping_mul(0x9E37_79B9_7F4A_7C15), pos)
            .expect("room");
    }
    let before = t.slots.clone();
    assert_eq!(t.insert(12345, 999), Err(()));
    assert_eq!(t.slots, before);
}

/// At the production size, a FIFO of a million random hashes turned over three times (as
/// the ClOrdID window is) never meets a displacement the slots cannot code: no rebuild, a
/// stall on a live loop, in the steady state.
#[test]
fn a_full_window_turned_over_needs_no_rebuild() {
    let n = CL_ORD_IDS_MAX;
    let mut t = PosTable::new(n + 1, ClIndex::pbits_for(n + 1));
    let mut rng = XorShift64::new(0x2545_F491_4F6C_DD1D);
    let mut fifo = VecDeque::with_capacity(n + 1);
    let mut worst = 0;
    let mask = t.pos_mask();
    for pos in 0..4 * n as u64 {
        let h = rng.next_u64();
        t.insert(h, pos).expect("codable");
        let slot = t.find(h, |q| q == pos as u32 & mask).expect("present");
        worst = worst.max(slot.wrapping_sub(t.home(h)) & t.mask);
        fifo.push_back((h, pos));
        if fifo.len() > n {
            let (h, p) = fifo.pop_front().expect("full");
            let slot = t.find(h, |q| q == p as u32 & mask).expect("present");
            t.remove_at(slot);
        }
    }
    assert_eq!(t.len, n);
    assert!(worst < PosTable::DISP_MAX, "displacement {worst}");
}

/// The ClOrdID index against a plain map, through growth, rotation and forgetting, with
/// ClOrdIDs of 2 to 63 bytes (so the byte ring wraps, pads at its end and grows while
/// wrapped: the ring is kept short first, then longer).
#[test]
fn clordid_index_matches_a_map() {
    // Room for 64 entries: the index is rebuilt as it grows past that and as the ring
    // outgrows its position bits.
    let mut ix = ClIndex::with_capacity(64);
    let mut model: HashMap<(u16, String), OrderId> = HashMap::new();
    let mut order: VecDeque<(u16, String)> = VecDeque::new();
    let mut live = HashSet::new();
    let mut rng = XorShift64::new(0x1234_5678_9abc_def0);
    for step in 0..20_000u64 {
        let r = rng.next_u64();
        let originator = (r % 3) as u16;
        let n = (r >> 8) % 5000;
        let cl = format!("c{n}{}", "x".repeat((n % 59) as usize));
        let key = (originator, cl.clone());
        assert_eq!(
            ix.get(originator, cl.as_bytes()),
            model.get(&key).copied(),
            "step {step}"
        );
        if !model.contains_key(&key) {
            ix.push(originator, cl.as_bytes(), step);
            model.insert(key.clone(), step);
            order.push_back(key);
            if r.is_multiple_of(4) {
                live.insert(step);
            }
        }
        while ix.len() > if step < 8_000 { 150 } else { 700 } {
            let keep = |o: OrderId, _: &[u8]| live.contains(&o);
            let front = order.pop_front().expect("as long as the ring");
            let id = model[&front];
            ix.rotate_or_forget(keep);
            if keep(id, b"") {
                order.push_back(front);
            } else {
                model.remove(&front);
            }
            if rng.next_u64().is_multiple_of(3) {
                live.remove(&id);
            }
        }
        assert_eq!(ix.table.len, model.len());
    }
    for ((s, cl), id) in &model {
        assert_eq!(ix.get(*s, cl.as_bytes()), Some(*id));
    }
    let ring: Vec<(u16, String)> = ix
        .iter()
        .map(|(s, cl, _)| (s, String::from_utf8(cl.to_vec()).expect("UTF-8")))
        .collect();
    assert_eq!(ring, Vec::from(order));
    // The ring outgrew both the first table's room and its position bits.
    assert!(
        ix.table.pbits > ClIndex::pbits_for(64),
        "{}",
        ix.table.pbits
    );
    assert!(ix.table.capacity() > 64);
}

/// `eq_short` against `==` for every length up to the longest ClOrdID, with one byte
/// differing at each position, and for unequal lengths.
#[test]
fn short_comparison_matches_slice_equality() {
    let a: Vec<u8> = (0..crate::CL_ORD_ID_LEN_MAX as u8)
        .map(|i| b'A' + i % 50)
        .collect();
    for n in 0..=a.len() {
        let x = &a[..n];
        assert!(eq_short(x, x));
        for at in 0..n {
            let mut y = x.to_vec();
            y[at] ^= 1;
            assert!(!eq_short(x, &y), "length {n}, byte {at}");
        }
        if n > 0 {
            assert!(!eq_short(x, &a[..n - 1]));
            assert!(!eq_short(&a[..n - 1], x));
        }
    }
}

/// `copy_short` writes exactly the bytes of its source, for every length up to the longest
/// ClOrdID, into a destination as long.
#[test]
fn short_copy_matches_copy_from_slice() {
    let a: Vec<u8> = (0..crate::CL_ORD_ID_LEN_MAX as u8).map(|i| i + 1).collect();
    for n in 0..=a.len() {
        let mut dst = vec![0xEE; n + 8];
        copy_short(&mut dst[..n], &a[..n]);
        assert_eq!(&dst[..n], &a[..n], "length {n}");
        assert!(
            dst[n..].iter().all(|&b| b == 0xEE),
            "length {n}: past the end"
        );
    }
}

/// The exchange's own index faults in exactly `CL_BYTES_RESIDENT_PER_ID` bytes per ClOrdID
/// of its window (64 MiB: the longest ClOrdID's 64 bytes), not twice that (the window's
/// `n` counts one entry more than the window); a lazy one starts small.
#[test]
fn the_window_byte_ring_is_resident_for_a_window_of_the_longest_cl_ord_ids() {
    let resident = ClIndex::new(Backing::Resident, &mut Populate::default());
    assert_eq!(
        resident.bytes.cap,
        CL_ORD_IDS_MAX * CL_BYTES_RESIDENT_PER_ID
    );
    assert_eq!(resident.bytes.cap, 64 << 20);
    drop(resident);
    assert_eq!(
        ClIndex::new(Backing::Lazy, &mut Populate::default())
            .bytes
            .cap,
        ClBytes::INITIAL
    );
}

/// A resident ClOrdID byte ring starts with the capacity it was asked for (a power of two,
/// within its address space), keeps ClOrdIDs through turns of it without growing, and
/// grows as before past it; a lazy one starts small.
#[test]
fn a_resident_byte_ring_starts_at_its_expected_capacity() {
    let lazy = ClBytes::with_backing(1 << 20, 100_000, Backing::Lazy, &mut Populate::default());
    assert_eq!(lazy.cap, ClBytes::INITIAL);
    assert_eq!(
        ClBytes::with_backing(
            1 << 16,
            1 << 20,
            Backing::Resident,
            &mut Populate::default()
        )
        .cap,
        1 << 16,
        "no larger than its address space"
    );
    assert_eq!(
        ClBytes::with_backing(1 << 16, 10, Backing::Resident, &mut Populate::default()).cap,
        ClBytes::INITIAL
    );
    let mut b = ClBytes::with_backing(
        1 << 20,
        100_000,
        Backing::Resident,
        &mut Populate::default(),
    );
    assert_eq!(b.cap, 1 << 17);
    let id = |i: u32| format!("N{i:07}.{}", i % 13).into_bytes();
    let mut live = VecDeque::new();
    for i in 0..40_000u32 {
        let cl = id(i);
        live.push_back((b.push(&cl), cl));
        // Keep the newest 8,000 (about 100 KB of the 128 KB).
        if live.len() > 8_000 {
            live.pop_front();
            b.set_head(live[0].0);
        }
    }
    assert_eq!(b.cap, 1 << 17, "no growth within the resident capacity");
    for (start, cl) in &live {
        assert_eq!(b.get(*start, cl.len()), &cl[..]);
    }
    for i in 40_000..60_000u32 {
        let cl = id(i);
        live.push_back((b.push(&cl), cl));
    }
    assert_eq!(b.cap, 1 << 19, "grows past it, keeping every live ClOrdID");
    for (start, cl) in &live {
        assert_eq!(b.get(*start, cl.len()), &cl[..]);
    }
}
