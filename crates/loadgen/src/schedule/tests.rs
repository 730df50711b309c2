use super::*;

#[test]
fn schedule_is_one_request_per_tick_until_the_minimum_tick() {
    let s = Schedule::new(2_000, 20_000);
    assert_eq!(
        s,
        Schedule {
            batch: 1,
            tick_ns: 500_000
        }
    );
    assert_eq!(s.intended_ns(3), 1_500_000);
    assert_eq!(s.bot(3, 2), 1);
    assert_eq!(s.first_at_or_after(1_000_000_000), 2_000);
    assert_eq!(s.rate(), 2_000.0);
    let s = Schedule::new(50_000, 20_000);
    assert_eq!(
        s,
        Schedule {
            batch: 1,
            tick_ns: 20_000
        }
    );
}

#[test]
fn high_rates_go_out_in_batches_to_one_bot() {
    let s = Schedule::new(300_000, 20_000);
    assert_eq!(
        s,
        Schedule {
            batch: 6,
            tick_ns: 20_000
        }
    );
    assert_eq!(s.intended_ns(5), 0);
    assert_eq!(s.intended_ns(6), 20_000);
    assert_eq!((s.bot(5, 10), s.bot(6, 10), s.bot(60, 10)), (0, 1, 0));
    assert_eq!(s.first_at_or_after(1), 6);
    // A rate that does not divide a second stays within 10 ppm.
    let s = Schedule::new(7 * 13_333, 20_000);
    assert!((s.rate() / 93_331.0 - 1.0).abs() < 1e-5, "{}", s.rate());
    assert!((Schedule::new(1, 20_000).rate() - 1.0).abs() < 1e-9);
}

#[test]
fn intended_times_never_go_backwards() {
    for rate in [1, 3, 999, 20_001, 333_333] {
        let s = Schedule::new(rate, 20_000);
        let mut last = 0;
        for k in 0..10_000 {
            let t = s.intended_ns(k);
            assert!(t >= last);
            last = t;
        }
    }
}

#[test]
fn the_wake_up_lead_settles_at_its_quantile() {
    // Wake-up latencies spread evenly over 0-100 µs (a fixed shuffle of 101 values).
    let sample = |i: u64| (i * 37 % 101) * 1_000;
    for (q, want) in [(0.7, 70_000i64), (0.95, 95_000)] {
        let mut w = WakeEarly::with_quantile(200_000, q);
        let mut rearms = 0;
        for i in 0..200_000 {
            rearms += u32::from(w.sample(sample(i)));
        }
        let got = w.armed_ns as i64;
        assert!(
            (got - want).abs() <= 4_000,
            "q {q}: lead {got} ns, want ~{want}"
        );
        assert!(
            rearms < 2_000,
            "re-armed only when the lead moved: {rearms}"
        );
    }
    // Capped.
    let mut w = WakeEarly::with_quantile(10_000, 0.99);
    for _ in 0..1_000 {
        w.sample(1_000_000);
    }
    assert!((8_000..=10_000).contains(&w.armed_ns), "{}", w.armed_ns);
}
