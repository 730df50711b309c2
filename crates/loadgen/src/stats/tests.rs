use super::*;

fn result_with(samples_ns: &[u64]) -> RunResult {
    let mut h = new_histogram();
    for &s in samples_ns {
        h.record(s).unwrap();
    }
    RunResult {
        rate_offered: 10_000,
        rate_achieved: 9_998.4,
        bots: 2,
        measured_secs: 2.0,
        counters: Counters {
            sent: 20_000,
            acks: 19_000,
            fills: 3_000,
            rejects: 12,
            ..Counters::default()
        },
        latency: h,
        shed_latency: new_histogram(),
        send_lag: new_histogram(),
        after_send: new_histogram(),
        tail: TailSplit::default(),
        error_notes: vec![],
        generator_cpu_secs: 0.5,
        wall_secs: 2.5,
        unstamped_reads: 0,
        host_steal_ms: Some(7),
    }
}

#[test]
fn table_has_the_seed_format() {
    let samples: Vec<u64> = (1..=1000).map(|i| i * 1_000).collect();
    let h = result_with(&samples).latency;
    let t = percentile_table(&h);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 12);
    assert_eq!(lines[0], "Percentile : Microseconds : Event count");
    assert_eq!(lines[1], "MIN : 1.0 : 1");
    let names = [
        "50.0%",
        "90.0%",
        "99.0%",
        "99.9%",
        "99.99%",
        "99.999%",
        "99.9999%",
        "99.99999%",
        "99.999999%",
    ];
    let wanted_us = [
        500.0, 900.0, 990.0, 999.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0,
    ];
    let wanted_count = [500, 900, 990, 999, 1000, 1000, 1000, 1000, 1000];
    for (i, name) in names.iter().enumerate() {
        let parts: Vec<&str> = lines[2 + i].split(" : ").collect();
        assert_eq!(parts[0], *name);
        let v: f64 = parts[1].parse().unwrap();
        // 3 significant digits and percentile rounding: within 0.2%.
        assert!(
            (v - wanted_us[i]).abs() <= wanted_us[i] * 0.002,
            "{}",
            lines[2 + i]
        );
        let count: u64 = parts[2].parse().unwrap();
        assert!(count.abs_diff(wanted_count[i]) <= 1, "{}", lines[2 + i]);
    }
    assert!(lines[11].starts_with("MAX, TOTAL : 1000."), "{}", lines[11]);
    assert!(lines[11].ends_with(" : 1000"));
}

#[test]
fn empty_table_says_so() {
    assert!(percentile_table(&new_histogram()).contains("(no samples)"));
}

#[test]
fn summary_line_parses_back() {
    let r = result_with(&[20_000, 30_000, 40_000]);
    let line = r.summary_line();
    assert!(line.starts_with("rate_offered=10000 rate_achieved=9998 p50_us=30.0 "));
    let kv = parse_summary_line(&line).unwrap();
    let get = |k: &str| kv.iter().find(|(x, _)| x == k).unwrap().1;
    assert_eq!(get("rejects"), 12.0);
    assert_eq!(get("errors"), 0.0);
    assert_eq!(get("shed"), 0.0);
    assert_eq!(get("p99_us"), 40.0);
    assert_eq!(get("host_steal_ms"), 7.0);
    let mut unknown = r.clone();
    unknown.host_steal_ms = None;
    assert!(!unknown.summary_line().contains("steal"));
    for key in ["p999_us", "acks", "fills", "rate_achieved"] {
        assert!(kv.iter().any(|(k, _)| k == key), "{key} missing");
    }
    assert!(parse_summary_line("a=1 b").is_err());
    assert!(parse_summary_line("a=x").is_err());
}

#[test]
fn report_ends_with_the_summary_line() {
    let r = result_with(&[5_000]);
    let text = r.report();
    assert_eq!(text.lines().last().unwrap(), r.summary_line());
    assert!(text.contains("acks 19000, fills 3000"));
    assert!(text.contains("shed 0 (exchange busy)"));
    assert!(text.contains("generator CPU 0.50 s over 2.5 s (20% of one core)"));
    assert!(text.contains("host steal 7 ms over the run"));
}

#[test]
fn the_tail_is_split_by_its_larger_part() {
    let mut t = TailSplit::default();
    t.record(TAIL_NS, Some(1_000)); // at the bound: not in the tail
    t.record(500_000, Some(100_000)); // 400 us late leaving
    t.record(500_000, Some(400_000)); // 400 us late answering
    t.record(300_000, None);
    assert_eq!(
        t,
        TailSplit {
            late_send: 1,
            late_answer: 1,
            unknown: 1
        }
    );
    let mut r = result_with(&[100_000, 300_000, 500_000, 500_000]);
    r.tail = t;
    let text = r.report();
    assert!(
        text.contains("over 200 us: 3 requests (75.00%): 1 mostly a late send, 1 mostly a late answer, 1 not split"),
        "{text}"
    );
    let kv = parse_summary_line(&r.summary_line()).unwrap();
    assert!(kv.contains(&("over200_late_send".to_string(), 1.0)));
    assert!(kv.contains(&("over200_late_answer".to_string(), 1.0)));
}

#[test]
fn microseconds_have_one_decimal() {
    assert_eq!(us(0), "0.0");
    assert_eq!(us(1_234), "1.2");
    assert_eq!(us(1_299_999), "1299.9");
}
