//! What the generator's clocks and receive stamps cost and how closely they follow the truth:
//! the timing figures behind `clock` and `rx`, whose unit tests check only order (a stamp falls
//! between the write and the read; a clock read falls between two others).
//!
//! `cargo run --release -p loadgen --example clock_bench [N]` prints:
//! - ns per read of `clock::mono_ns`, `clock::process_cpu_ns` and `std::time::Instant::now`
//!   (median of 5 passes of N reads, default 1,000,000);
//! - how far `mono_ns` and `Instant` disagree over a 5 ms sleep (both read CLOCK_MONOTONIC, so
//!   only by how far apart each pair of reads was taken);
//! - on loopback TCP with `rx` stamps, over 200 writes: how long after the write the kernel
//!   stamped the data, and how long before the read it was stamped when the read comes 2 ms
//!   after the data (about 2 ms: stamped on arrival, not on reading).
//!
//! Binds 127.0.0.1 only.

use loadgen::clock::{mono_ns, process_cpu_ns};
use loadgen::rx;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What to measure.
struct Params {
    reads: usize,
    sleep: Duration,
    writes: usize,
    read_delay: Duration,
}

fn main() {
    let reads = match std::env::args().nth(1) {
        Some(a) => match a.parse() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("clock_bench: N must be a count of at least 1, not {a:?}");
                std::process::exit(2);
            }
        },
        None => 1_000_000,
    };
    let p = Params {
        reads,
        sleep: Duration::from_millis(5),
        writes: 200,
        read_delay: Duration::from_millis(2),
    };
    match run(&p) {
        Ok(lines) => lines.iter().for_each(|l| println!("{l}")),
        Err(e) => {
            eprintln!("clock_bench: {e}");
            std::process::exit(1);
        }
    }
}

fn run(p: &Params) -> std::io::Result<Vec<String>> {
    let mut lines = Vec::new();
    for (name, read) in [
        ("clock::mono_ns", mono_ns as fn() -> u64),
        ("clock::process_cpu_ns", process_cpu_ns),
        ("Instant::now", || {
            std::hint::black_box(Instant::now());
            0
        }),
    ] {
        lines.push(format!(
            "{name}: {:.1} ns per read (median of 5 passes of {})",
            ns_per_read(read, p.reads),
            p.reads
        ));
    }
    let (a, i) = (mono_ns(), Instant::now());
    std::thread::sleep(p.sleep);
    let (b, e) = (mono_ns(), i.elapsed().as_nanos() as u64);
    lines.push(format!(
        "over a {:?} sleep: mono_ns moved {} ns, Instant {e} ns ({} ns apart)",
        p.sleep,
        b - a,
        (b - a).abs_diff(e)
    ));
    let (after_write, before_read) = stamps(p.writes, p.read_delay)?;
    lines.push(format!(
        "receive stamps over {} loopback writes: stamped after the write by {}, before a read \
         {:?} late by {}",
        p.writes,
        spread(after_write),
        p.read_delay,
        spread(before_read)
    ));
    Ok(lines)
}

/// ns per call of `read`: the median of 5 passes of `n` calls.
fn ns_per_read(read: fn() -> u64, n: usize) -> f64 {
    let mut passes: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let mut sum = 0u64;
            for _ in 0..n {
                sum = sum.wrapping_add(read());
            }
            std::hint::black_box(sum);
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    passes.sort_by(f64::total_cmp);
    passes[2]
}

fn wall() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// For each of `writes` writes on loopback: (stamp - write time, read time - stamp) in ns,
/// the read taken `read_delay` after the data was seen queued.
fn stamps(writes: usize, read_delay: Duration) -> std::io::Result<(Vec<u64>, Vec<u64>)> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let mut c = TcpStream::connect(l.local_addr()?)?;
    c.set_nodelay(true)?;
    let (s, _) = l.accept()?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    rx::enable(s.as_raw_fd())?;
    let mut buf = [0u8; 64];
    let (mut after_write, mut before_read) = (Vec::new(), Vec::new());
    while after_write.len() < writes {
        let t_write = wall();
        c.write_all(b"x")?;
        s.peek(&mut [0u8; 1])?;
        std::thread::sleep(read_delay);
        let t_read = wall();
        let (_, stamp) = rx::recv(s.as_raw_fd(), &mut buf)?;
        // Reads before the kernel turned stamping on come unstamped: not counted.
        if let Some(stamp) = stamp {
            after_write.push(stamp.saturating_sub(t_write));
            before_read.push(t_read.saturating_sub(stamp));
        }
    }
    Ok((after_write, before_read))
}

/// `p50 X µs, max Y µs` of `v`.
fn spread(mut v: Vec<u64>) -> String {
    v.sort_unstable();
    let us = |ns: u64| ns as f64 / 1000.0;
    match (v.get(v.len() / 2), v.last()) {
        (Some(&p50), Some(&max)) => format!("p50 {:.1} µs, max {:.1} µs", us(p50), us(max)),
        _ => "no samples".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The benchmark runs with tiny parameters and prints every figure (none is asserted).
    #[test]
    fn runs_with_tiny_parameters() {
        let p = Params {
            reads: 1_000,
            sleep: Duration::from_millis(1),
            writes: 3,
            read_delay: Duration::from_micros(100),
        };
        let lines = run(&p).unwrap();
        assert_eq!(lines.len(), 5, "{lines:?}");
        assert!(lines[4].contains("over 3 loopback writes"), "{lines:?}");
        assert!(!lines[4].contains("no samples"), "{lines:?}");
    }
}
