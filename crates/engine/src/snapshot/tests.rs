use super::*;
use types::{Matcher, NullSink};

fn config() -> EngineConfig {
    EngineConfig {
        orders_max: 64,
        levels_initial: 64,
        levels_max: 1024,
        ids_direct: 64,
        ids_hashed_initial: 16,
    }
}

fn instruments() -> Vec<Instrument> {
    vec![Instrument {
        symbol: Symbol::new("ABC").unwrap(),
        tick: 1,
        lot: 1,
    }]
}

fn fixture_commands() -> Vec<types::Command> {
    use types::{Command, NewOrder, OrdType, Side, StpMode, TimeInForce};
    let new = |id: u64, side, tif, price, qty| {
        Command::New(NewOrder {
            id,
            account: (id % 3) as u32,
            symbol: 0,
            side,
            ord_type: OrdType::Limit,
            tif,
            price,
            qty,
            post_only: false,
            stp: StpMode::None,
            ..Default::default()
        })
    };
    let mut c = vec![
        new(3, Side::Buy, TimeInForce::Gtc, 100, 5),
        new(70, Side::Buy, TimeInForce::Gtc, 99, 2),
        new(1 << 40, Side::Buy, TimeInForce::Gtc, 100, 7),
        new(5000, Side::Sell, TimeInForce::Gtc, 200, 4),
        new(9, Side::Sell, TimeInForce::Ioc, 100, 1),
    ];
    let chunk = 1u64 << 20;
    for id in [
        0,
        1,
        2,
        63,
        64,
        65,
        127,
        128,
        64 + chunk - 1,
        64 + chunk,
        64 + chunk + 1,
        u64::MAX,
        u64::MAX - 1,
        1 << 50,
        12_345_678_901_234,
    ] {
        c.push(new(id, Side::Sell, TimeInForce::Ioc, 300, 1));
    }
    c
}

/// A v1 snapshot written by the build before v2 (commit 06d4201) of `fixture_commands`.
const V1_FIXTURE: &str = concat!(
    "5249414c544f534e01000000a801000000000000400000000000000040000000000000000004000000000000",
    "4000000000000000100000000000000001000000034142430100000000000000010000000000000002000000",
    "0000000014000000000000000000000000000000010000000000000002000000000000000300000000000000",
    "09000000000000003f000000000000004000000000000000410000000000000046000000000000007f000000",
    "00000000800000000000000088130000000000003f0010000000000040001000000000004100100000000000",
    "0000000000010000f22fce733a0b00000000000000000400feffffffffffffffffffffffffffffff04000000",
    "0000000003000000000000000000000000000000006400000000000000040000000000000005000000000000",
    "0000000300000000000100000100000000000000006400000000000000070000000000000007000000000000",
    "0000000346000000000000000100000000000000006300000000000000020000000000000002000000000000",
    "000000038813000000000000020000000000000001c800000000000000040000000000000004000000000000",
    "000000031dc28e47f5cdf2f2",
);
/// Its state hash, printed by that build.
const V1_FIXTURE_HASH: u64 = 0xee04_a77e_0064_7562;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Where the used-id section of a snapshot starts and ends (byte offsets in `snap`).
fn used_section(snap: &[u8]) -> (usize, usize) {
    let version = u32::from_le_bytes(snap[8..12].try_into().unwrap());
    let mut r = Reader { b: &snap[20..] };
    r.take(40, "config").unwrap();
    for _ in 0..r.u32("instruments").unwrap() {
        let n = r.u8("symbol").unwrap() as usize;
        r.take(n + 16, "instrument").unwrap();
    }
    r.u64("trade id").unwrap();
    let start = snap.len() - r.b.len();
    if version == 1 {
        let n = r.u64("used").unwrap() as usize;
        r.take(n * 8, "used").unwrap();
    } else {
        r.u64("chunks").unwrap();
        for _ in 0..r.u64("runs").unwrap() * 2 {
            r.varint("run").unwrap();
        }
        for _ in 0..r.u64("sparse").unwrap() {
            r.varint("sparse").unwrap();
        }
    }
    (start, snap.len() - r.b.len())
}

/// `snap` with its used-id section replaced by `section`, as version `version`, with a
/// correct length and checksum.
fn with_used_section(snap: &[u8], section: &[u8], version: u32) -> Vec<u8> {
    let (a, b) = used_section(snap);
    let mut out = snap[..a].to_vec();
    out.extend_from_slice(section);
    out.extend_from_slice(&snap[b..snap.len() - 8]);
    out[8..12].copy_from_slice(&version.to_le_bytes());
    let len = (out.len() - 20) as u64;
    out[12..20].copy_from_slice(&len.to_le_bytes());
    let sum = checksum(&out[20..]);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// The v1 image of `e` (the old encoder's used-id section: every id as a `u64`).
fn v1_of(e: &Engine) -> Vec<u8> {
    let mut snap = Vec::new();
    e.snapshot_as(&mut snap, 2);
    let used = e.ids.all_used();
    let mut section = (used.len() as u64).to_le_bytes().to_vec();
    for id in used {
        section.extend_from_slice(&id.to_le_bytes());
    }
    with_used_section(&snap, &section, 1)
}

fn snapshot_of(e: &Engine) -> Vec<u8> {
    let mut s = Vec::new();
    e.snapshot(&mut s);
    s
}

#[test]
fn v1_written_by_the_old_build_restores_with_the_same_hash() {
    let v1 = unhex(V1_FIXTURE);
    let old = Engine::restore(&v1).unwrap();
    assert_eq!(old.state_hash(), V1_FIXTURE_HASH);
    // The same commands on this build: the same state hash (the used-id digest kept its
    // value), and the v2 snapshot of either is the same bytes.
    let mut e = Engine::new(&instruments(), config());
    for c in fixture_commands() {
        e.apply(&c, &mut NullSink);
    }
    assert_eq!(e.state_hash(), V1_FIXTURE_HASH);
    assert_eq!(e.resting_count(), 4);
    let v2 = snapshot_of(&e);
    assert_eq!(snapshot_of(&old), v2);
    assert!(v2.len() < v1.len(), "{} vs {}", v2.len(), v1.len());
    assert_eq!(Engine::restore(&v2).unwrap().state_hash(), V1_FIXTURE_HASH);
    assert_eq!(v1_of(&e), v1, "the test's v1 encoder is the old one");
}

#[test]
fn v2_round_trip_with_chunks_and_sparse_ids() {
    let mut e = Engine::new(&instruments(), config());
    let mut rng = types::XorShift64::new(0x9e37_79b9_7f4a_7c15);
    // Sequential ids with a few gaps, through the direct bits and into a second chunk.
    for id in (0..64 + crate::ids::CHUNK_IDS + 70_000).filter(|i| i % 89 != 3) {
        e.ids.mark_used(id);
    }
    // Sparse ids, some inside the chunks' range before it covers them.
    for _ in 0..3000 {
        e.ids.mark_used(rng.next_u64());
    }
    for c in fixture_commands() {
        e.apply(&c, &mut NullSink);
    }
    e.check_invariants().unwrap();
    let v2 = snapshot_of(&e);
    let r = Engine::restore(&v2).unwrap();
    assert_eq!(r.state_hash(), e.state_hash());
    assert_eq!(r.ids.chunk_count(), e.ids.chunk_count());
    assert_eq!(r.ids.all_used(), e.ids.all_used());
    assert_eq!(
        snapshot_of(&r),
        v2,
        "a restored engine snapshots to the same bytes"
    );
    let v1 = v1_of(&e);
    let from_v1 = Engine::restore(&v1).unwrap();
    assert_eq!(from_v1.state_hash(), e.state_hash());
    assert_eq!(from_v1.ids.all_used(), e.ids.all_used());
    // About 1.1 M used ids: 8 bytes each in v1, a few bytes per run in v2.
    assert!(v1.len() > 8_000_000, "{}", v1.len());
    assert!(v2.len() < 100_000, "{}", v2.len());
}

fn expect_corrupt(snap: &[u8], section: &[u8], why: &str) {
    let bad = with_used_section(snap, section, VERSION);
    match Engine::restore(&bad) {
        Err(SnapshotError::Corrupt(w)) => assert!(w.contains(why), "{w:?} lacks {why:?}"),
        other => panic!("expected Corrupt({why:?}), got {:?}", other.map(|_| ())),
    }
}

#[test]
fn corrupt_used_id_sections_are_refused_with_a_reason() {
    let e = Engine::new(&instruments(), config());
    let snap = snapshot_of(&e);
    let sec = |chunks: u64, runs: &[u8], n_runs: u64, sparse: &[u8], n_sparse: u64| {
        let mut s = chunks.to_le_bytes().to_vec();
        s.extend_from_slice(&n_runs.to_le_bytes());
        s.extend_from_slice(runs);
        s.extend_from_slice(&n_sparse.to_le_bytes());
        s.extend_from_slice(sparse);
        s
    };
    // A valid one first: ids 1..=3 and 100 (in the one chunk), sparse 1 << 40.
    let ok = sec(
        1,
        &[1, 2, 96, 0],
        2,
        &[0x80, 0x80, 0x80, 0x80, 0x80, 0x20],
        1,
    );
    let good = with_used_section(&snap, &ok, VERSION);
    let r = Engine::restore(&good).unwrap();
    assert!([1, 2, 3, 100, 1 << 40].iter().all(|&i| r.id_used(i)));
    assert!(![0, 4, 99, 101, (1 << 40) + 1].iter().any(|&i| r.id_used(i)));
    let cases: &[(Vec<u8>, &str)] = &[
        (sec(1, &[0x81, 0x00, 0], 1, &[], 0), "varint not minimal"),
        (sec(1, &[0xff; 11], 1, &[], 0), "varint"),
        (
            sec(
                1,
                &[
                    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0,
                ],
                1,
                &[],
                0,
            ),
            "beyond 64 bits",
        ),
        (sec(0, &[64, 0], 1, &[], 0), "run beyond the bitmap"),
        (
            sec(1, &[0xc0, 0x80, 0x40, 0], 1, &[], 0),
            "run beyond the bitmap",
        ),
        (sec(1, &[1, 2, 0, 0], 2, &[], 0), "runs not maximal"),
        (sec(1, &[], 0, &[], 0), "last id chunk empty"),
        (sec(3, &[64, 0], 1, &[], 0), "sparser than 1/8"),
        (
            sec(1 << 20, &[], 0, &[], 0),
            "more id chunks than the limit",
        ),
        (sec(0, &[], 0, &[5], 1), "sparse id below ids_direct"),
        (sec(1, &[70, 0], 1, &[70], 1), "sparse id used twice"),
        (
            sec(0, &[], 0, &[70, 0], 2),
            "sparse ids not strictly ascending",
        ),
        (
            sec(
                0,
                &[],
                0,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 1],
                2,
            ),
            "sparse id beyond u64",
        ),
    ];
    for (s, why) in cases {
        expect_corrupt(&snap, s, why);
    }
    // Counts beyond the bytes present are truncations, found before any allocation.
    let bad = with_used_section(&snap, &sec(0, &[], u64::MAX, &[], 0), VERSION);
    assert_eq!(
        Engine::restore(&bad).unwrap_err(),
        SnapshotError::Truncated("used-id runs")
    );
    let bad = with_used_section(&snap, &sec(0, &[], 0, &[], u64::MAX), VERSION);
    assert_eq!(
        Engine::restore(&bad).unwrap_err(),
        SnapshotError::Truncated("sparse ids")
    );
    let v1 = with_used_section(
        &snap,
        &[
            2, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0,
        ],
        1,
    );
    assert_eq!(
        Engine::restore(&v1).unwrap_err(),
        SnapshotError::Corrupt("used ids not strictly ascending".into())
    );
}

#[test]
fn mutated_used_id_sections_never_panic() {
    let mut e = Engine::new(&instruments(), config());
    for c in fixture_commands() {
        e.apply(&c, &mut NullSink);
    }
    let snap = snapshot_of(&e);
    let (a, b) = used_section(&snap);
    let section = snap[a..b].to_vec();
    let mut rng = types::XorShift64::new(0x2545_f491_4f6c_dd1d);
    // The last output (at first the seed) picks how many edits the next snapshot gets.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut ok = 0;
    for _ in 0..3000 {
        let mut s = section.clone();
        for _ in 0..1 + (x % 3) {
            x = rng.next_u64();
            let i = (x >> 8) as usize % s.len();
            match x % 4 {
                0 => s[i] ^= 1 << ((x >> 40) % 8),
                1 => s[i] = (x >> 32) as u8,
                2 => {
                    s.remove(i);
                }
                _ => s.insert(i, (x >> 24) as u8),
            }
        }
        let bad = with_used_section(&snap, &s, VERSION);
        if let Ok(r) = Engine::restore(&bad) {
            // Accepted only if it is a consistent engine that snapshots to the same bytes.
            assert_eq!(snapshot_of(&r), bad);
            ok += 1;
        }
    }
    assert!(ok < 3000);
}
