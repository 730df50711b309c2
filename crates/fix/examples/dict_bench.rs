//! Validation cost: a typical NewOrderSingle (FIX 4.4, 17 fields, one party) decoded N times,
//! and decoded and validated against the FIX 4.4 dictionary N times.
//!
//! Run: `cargo run --release -p fix --example dict_bench [-- decode|validate [N]]`
//! (default: both, N = 1,000,000): prints ns per message for each. For instruction counts,
//! run each mode under callgrind and divide by N:
//! `valgrind --tool=callgrind target/release/examples/dict_bench decode 100000` (and
//! `validate`); validate minus decode is the validator's share.

use std::hint::black_box;
use std::time::Instant;

use fix::dict::dictionary;
use fix::{wrap_body, Decoder, FixVersion};

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "both".into());
    let n: u64 = args
        .next()
        .map_or(1_000_000, |s| s.parse().expect("N: a number"));
    let body = b"35=D\x0149=CLIENT1\x0156=RIALTO\x0134=1234\x0152=20231114-22:13:20.123\x01\
11=ORD-000123\x011=ACC1\x0155=ACME\x0154=1\x0160=20231114-22:13:20.120\x0138=100\x0140=2\x01\
44=101.25\x0159=0\x01453=1\x01448=TRADER1\x01447=D\x01452=11\x01";
    let mut msg = Vec::new();
    wrap_body(FixVersion::Fix44, body, &mut msg);
    let dict = dictionary(FixVersion::Fix44);
    let mut d = Decoder::default();
    assert!(dict.validate(&d.decode(&msg).unwrap()).is_ok());
    let run = |validate: bool, d: &mut Decoder| {
        let t = Instant::now();
        let mut sum = 0u64;
        for _ in 0..n {
            let m = d.decode(black_box(&msg)).unwrap();
            sum += m.field_count() as u64;
            if validate {
                sum += dict.validate(black_box(&m)).is_ok() as u64;
            }
        }
        (t.elapsed().as_nanos() as f64 / n as f64, sum)
    };
    if mode == "decode" || mode == "both" {
        let (ns, sum) = run(false, &mut d);
        println!("decode           {ns:7.1} ns/msg  (sum {sum})");
    }
    if mode == "validate" || mode == "both" {
        let (ns, sum) = run(true, &mut d);
        println!("decode+validate  {ns:7.1} ns/msg  (sum {sum})");
    }
}
