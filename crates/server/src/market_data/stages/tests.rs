use super::*;

#[test]
fn the_summary_gives_each_stage_its_median_and_tail() {
    let mut s = Stages::new();
    for i in 1..=100u64 {
        s.record(&BatchTimes {
            wait: i * 1_000,
            apply: 2_000,
            encode: 3_000,
            write: 40_000,
            records: 2,
        });
    }
    // A batch whose wait is unknown counts everywhere else.
    s.record(&BatchTimes {
        wait: 0,
        apply: 2_000,
        encode: 3_000,
        write: 40_000,
        records: 1,
    });
    let line = s.summary();
    assert!(
        line.starts_with("market data: 101 batches, 1.99 records each;"),
        "{line}"
    );
    assert!(
        line.contains("wait for the publisher 50.0 / 99.0"),
        "{line}"
    );
    assert!(line.contains("apply 2.0 / 2.0"), "{line}");
    assert!(line.contains("encode 3.0 / 3.0"), "{line}");
    assert!(line.contains("write 40.0 / 40.0"), "{line}");
}
