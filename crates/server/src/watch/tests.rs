use super::*;

#[test]
fn the_loop_watch_bands_gaps_and_reports_only_slow_seconds() {
    let mut g = Gaps::default();
    for ns in [1_000, 20_000, 30_000, 60_000, 500_000, 2_000_000] {
        g.record(ns);
    }
    assert_eq!(g.bands, [1, 1, 1, 1]);
    assert_eq!((g.lost_ns, g.max_ns), (2_590_000, 2_000_000));
    let mut w = LoopWatch::default();
    let quick = IterTimes {
        total: 30_000,
        read: 5_000,
        journal: 5_000,
        engine: 10_000,
        write: 10_000,
        inputs: 3,
        tick: false,
        what: ["new", "cancel", "new", ""],
    };
    w.busy(quick, 100_000);
    assert_eq!(w.second(100_000), None, "nothing over 100 us");
    w.busy(
        IterTimes {
            total: 250_000,
            journal: 200_000,
            tick: true,
            ..quick
        },
        100_000,
    );
    w.busy(quick, 100_000);
    let line = w.second(100_000).expect("a slow second is reported");
    assert!(
        line.contains("second 2: slowest iteration 250 us"),
        "{line}"
    );
    assert!(
        line.contains("journal 200") && line.contains("timer tick"),
        "{line}"
    );
    assert!(line.contains("1 over 100 us"), "{line}");
    assert!(
        line.contains("3 inputs, timer tick: new cancel new)"),
        "{line}"
    );
    assert!(!line.contains("off CPU"), "{line}");
    w.gaps_second.record(300_000);
    let line = w.second(100_000).expect("a long gap is reported");
    assert!(
        line.contains("off CPU between iterations: 1 gaps"),
        "{line}"
    );
    assert_eq!(w.second(100_000), None, "each second starts afresh");
    w.busy(
        IterTimes {
            total: 5_000_000,
            ..quick
        },
        0,
    );
    assert_eq!(w.second(0), None, "0: never");
    assert_eq!(w.sum.inputs, 12);
}

#[test]
fn a_slow_second_says_how_much_the_host_stole() {
    assert_eq!(
        steal_note(Some(0), 15, Duration::from_millis(3_000)),
        "; host steal on CPU 0: 15 ms in the last 3.0 s"
    );
    assert_eq!(
        steal_note(None, 0, Duration::from_millis(1_040)),
        "; host steal on all CPUs: 0 ms in the last 1.0 s"
    );
}
