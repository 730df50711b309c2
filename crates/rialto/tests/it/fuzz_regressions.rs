//! Runs the fuzz targets' bodies (`offline::fuzzing`, and `fix::session::fuzz_session_script`)
//! on every saved input under `tests/fuzz_regressions/<target>/` (crashes found by `cargo fuzz`
//! are copied there) and on seeds or a few thousand seeded pseudo-random inputs, so
//! `cargo test` covers them without a fuzzer.

use offline::fuzzing::{check_csv, check_engine};
use std::path::Path;
use types::SplitMix64;

fn saved_inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_regressions")
        .join(target);
    let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("directory entry").path();
            let data = std::fs::read(&path).expect("read saved input");
            (path.display().to_string(), data)
        })
        .collect();
    inputs.sort();
    inputs
}

fn random_bytes(rng: &mut SplitMix64, len_max: u64, alphabet: &[u8]) -> Vec<u8> {
    let len = rng.below(len_max + 1) as usize;
    (0..len)
        .map(|_| {
            if alphabet.is_empty() {
                rng.next_u64() as u8
            } else {
                alphabet[rng.below(alphabet.len() as u64) as usize]
            }
        })
        .collect()
}

#[test]
fn csv_reader_saved_inputs() {
    let inputs = saved_inputs("csv_reader");
    assert!(!inputs.is_empty(), "the seed inputs are missing");
    for (name, data) in inputs {
        check_csv(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn csv_reader_random_inputs() {
    let mut rng = SplitMix64::new(0xc5f);
    let header = b"op,id,account,symbol,side,type,tif,price,qty,stp\n";
    let alphabet = b"NCRMBSLPGTDAYIOFK0123456789-,,,,\n\r#\" xyz";
    for _ in 0..3000 {
        let mut data = if rng.below(2) == 0 {
            header.to_vec()
        } else {
            Vec::new()
        };
        data.extend(random_bytes(&mut rng, 300, alphabet));
        check_csv(&data).unwrap_or_else(|e| panic!("{:?}: {e}", String::from_utf8_lossy(&data)));
    }
}

#[test]
fn engine_saved_inputs() {
    for (name, data) in saved_inputs("engine") {
        check_engine(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn engine_random_inputs() {
    let mut rng = SplitMix64::new(0xe9e);
    for _ in 0..1500 {
        let data = random_bytes(&mut rng, 8 * 120, &[]);
        check_engine(&data).unwrap_or_else(|e| panic!("input {data:?}: {e}"));
    }
}

/// The FIX session script body (`fix::session::fuzz_session_script`) on its saved inputs and
/// its seeds (scripts of Logons, orders, gaps, resends and resets), each whole and cut short.
#[test]
fn fix_session_script_saved_inputs_and_seeds() {
    let mut inputs = saved_inputs("fix_session_script");
    assert!(!inputs.is_empty(), "the saved inputs are missing");
    let seeds_dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/fix_session_script");
    let seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&seeds_dir)
        .unwrap_or_else(|e| panic!("{}: {e}", seeds_dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            (path.display().to_string(), std::fs::read(&path).unwrap())
        })
        .collect();
    assert!(seeds.len() >= 5, "{}: too few seeds", seeds_dir.display());
    inputs.extend(seeds);
    for (name, data) in inputs {
        for len in 0..=data.len() {
            let script = &data[..len];
            std::panic::catch_unwind(|| fix::session::fuzz_session_script(script))
                .unwrap_or_else(|_| panic!("{name}, its first {len} bytes"));
        }
    }
}

/// The market-data fuzz bodies (`fix::md::fuzz_md`, `server::market_data::fuzz_md_edge`) on
/// their seeds and on seeded mutations of them.
#[test]
fn market_data_bodies_on_seeds_and_mutations() {
    let seeds_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let mut rng = SplitMix64::new(0x6d64);
    for (target, body) in [
        ("fix_md", fix::md::fuzz_md as fn(&[u8])),
        ("md_edge", server::market_data::fuzz_md_edge as fn(&[u8])),
    ] {
        let dir = seeds_dir.join(target);
        let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| std::fs::read(e.unwrap().path()).unwrap())
            .collect();
        assert!(!seeds.is_empty(), "{target}: no seeds");
        seeds.sort();
        for seed in &seeds {
            body(seed);
            for _ in 0..300 {
                let mut m = seed.clone();
                for _ in 0..1 + rng.below(4) {
                    if m.is_empty() {
                        break;
                    }
                    let at = rng.below(m.len() as u64) as usize;
                    match rng.below(3) {
                        0 => {
                            m[at] = b"0129=|\x01AVWXY-."
                                .get(rng.below(16) as usize)
                                .copied()
                                .unwrap_or(b'1')
                        }
                        1 => {
                            m.remove(at);
                        }
                        _ => m.insert(at, rng.next_u64() as u8),
                    }
                }
                body(&m);
            }
        }
        for _ in 0..500 {
            body(&random_bytes(&mut rng, 200, b"0123456789=\x01|VWXYxyef.-"));
        }
    }
}
