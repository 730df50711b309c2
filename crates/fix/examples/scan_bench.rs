//! Cost of reading one inbound ExecutionReport (`fix::scan::scan`): the load generator reads
//! one or two per request it sends, on the CPU the exchange's loop shares in the sweeps, so
//! this is part of what a sweep's tail at 150-200 K req/s queues behind.
//!
//! `cargo run --release -p fix --example scan_bench [N]` prints ns per scan (median of 5
//! passes of N scans, default 2,000,000) of an ack and of a fill laid out as Rialto writes them,
//! each read over and over, then of 256 acks, fills and cancels read in turn (closer to a bot's
//! reading: the branch predictor cannot learn one frame).
//! Under `valgrind --tool=callgrind --toggle-collect='fix::scan::scan*'` with a small N
//! (e.g. 1000: 10 passes in all) it gives instructions per scan. BENCHMARKS.md has the figures.

use std::time::Instant;

/// A frame as the exchange writes it: BeginString, BodyLength, `fields`, CheckSum (`scan`
/// does not check the CheckSum, so it is a fixed one).
fn frame(fields: &[(&str, &str)]) -> Vec<u8> {
    let body: String = fields.iter().map(|(t, v)| format!("{t}={v}\x01")).collect();
    format!("8=FIX.4.4\x019={}\x01{body}10=123\x01", body.len()).into_bytes()
}

fn main() {
    let n: usize = match std::env::args().nth(1) {
        Some(a) => match a.parse() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("scan_bench: N must be a count of at least 1, not {a:?}");
                std::process::exit(2);
            }
        },
        None => 2_000_000,
    };
    // The header and the fields before ExecType, then each report's own (an ack of a limit
    // order, and a partial fill of it), in `encode_exec`'s order.
    let head: &[(&str, &str)] = &[
        ("35", "8"),
        ("34", "1234567"),
        ("49", "RIALTO"),
        ("56", "BOT7"),
        ("52", "20261123-22:01:11.123"),
        ("37", "4812345"),
        ("11", "Nk2x9ab1234567.17"),
        ("17", "9876543.1"),
    ];
    let order: &[(&str, &str)] = &[
        ("1", "7"),
        ("55", "ACME"),
        ("54", "1"),
        ("40", "2"),
        ("44", "100.25"),
        ("59", "0"),
        ("38", "100"),
    ];
    let ack = frame(
        &[
            head,
            &[("150", "0"), ("39", "0")],
            order,
            &[("151", "100"), ("14", "0"), ("6", "0")],
            &[("60", "20261123-22:01:11.123")],
        ]
        .concat(),
    );
    let fill = frame(
        &[
            head,
            &[("150", "F"), ("39", "1")],
            order,
            &[("31", "100.25"), ("32", "30"), ("151", "70"), ("14", "30")],
            &[("6", "100.25"), ("60", "20261123-22:01:11.123")],
        ]
        .concat(),
    );
    for (name, f, leaves) in [("ack", &ack, 100), ("fill", &fill, 70)] {
        // Checked once, so the loop below times a scan that reads what it should.
        let m = fix::scan::scan(f).expect("the report scans");
        assert_eq!(m.report.leaves_qty, Some(leaves), "{name}: LeavesQty read");
        let (median, fastest) = time_scans(&[f], n);
        println!(
            "{name}: {} bytes, {median:.1} ns per scan (median of 5 passes of {n}; fastest {fastest:.1})",
            f.len()
        );
    }
    // As a bot reads them: acks, fills and cancels in a random order, with ClOrdIDs, order
    // ids and sequence numbers of varying lengths, so the branch predictor cannot learn one
    // frame's fields (the two above are each read over and over).
    let mut rng = types::XorShift64::new(0x9E37_79B9_7F4A_7C15);
    let mixed: Vec<Vec<u8>> = (0..256)
        .map(|_| {
            let x = rng.next_u64();
            let seq = (x % 10_000_000).to_string();
            let id = ((x >> 24) % 100_000_000).to_string();
            let cl = format!("Nk{}.{}", (x >> 8) % 100_000, (x >> 30) % 1000);
            let head: Vec<(&str, &str)> = vec![
                ("35", "8"),
                ("34", &seq),
                ("49", "RIALTO"),
                ("56", "BOT7"),
                ("52", "20261123-22:01:11.123"),
                ("37", &id),
                ("11", &cl),
                ("17", "9876543.1"),
            ];
            let own: &[(&str, &str)] = match (x >> 50) % 5 {
                0 | 1 => &[("150", "0"), ("39", "0")],
                2 | 3 => &[("150", "F"), ("39", "1"), ("31", "100.25"), ("32", "30")],
                _ => &[("41", "Nk77.1"), ("150", "4"), ("39", "4")],
            };
            frame(
                &[
                    &head[..],
                    own,
                    order,
                    &[("151", "70"), ("14", "30"), ("6", "100.25")],
                ]
                .concat(),
            )
        })
        .collect();
    let frames: Vec<&[u8]> = mixed.iter().map(Vec::as_slice).collect();
    // Checked once, as above: every mixed frame reads its LeavesQty.
    for f in &frames {
        let m = fix::scan::scan(f).expect("the report scans");
        assert_eq!(m.report.leaves_qty, Some(70), "mixed: LeavesQty read");
    }
    let (median, fastest) = time_scans(&frames, n);
    println!(
        "mixed: 256 frames of {}-{} bytes, {median:.1} ns per scan (median of 5 passes of {n}; fastest {fastest:.1})",
        mixed.iter().map(Vec::len).min().unwrap_or(0),
        mixed.iter().map(Vec::len).max().unwrap_or(0),
    );
}

/// ns per scan of `n` scans going round `frames`: the median of 5 passes and the fastest.
fn time_scans(frames: &[&[u8]], n: usize) -> (f64, f64) {
    let mut passes = Vec::with_capacity(5);
    for _ in 0..5 {
        let t = Instant::now();
        let mut sum = 0u64;
        let mut i = 0;
        for _ in 0..n {
            let m = fix::scan::scan(std::hint::black_box(frames[i])).expect("scans");
            sum = sum.wrapping_add(m.seq + m.report.leaves_qty.unwrap_or(0));
            i += 1;
            if i == frames.len() {
                i = 0;
            }
        }
        std::hint::black_box(sum);
        passes.push(t.elapsed().as_nanos() as f64 / n as f64);
    }
    passes.sort_by(f64::total_cmp);
    (passes[2], passes[0])
}
