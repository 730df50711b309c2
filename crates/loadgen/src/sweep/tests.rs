use super::*;

fn row(offered: u64, achieved: f64, p99_us: u64, shed: u64) -> SweepRow {
    SweepRow {
        rate_offered: offered,
        rate_achieved: achieved,
        p50_ns: p99_us * 300,
        p90_ns: p99_us * 600,
        p99_ns: p99_us * 1000,
        p999_ns: p99_us * 2000,
        p9999_ns: p99_us * 4000,
        max_ns: p99_us * 9000,
        sent: 100_000,
        acks: 90_000,
        fills: 10_000,
        rejects: 10,
        shed,
        errors: 0,
        bots: 10,
        runs: 1,
        steal_ms: Some(offered / 1000),
    }
}

#[test]
fn knee_is_the_first_overloaded_run() {
    let rows = vec![
        row(10_000, 10_000.0, 40, 0),
        row(20_000, 19_990.0, 80, 0),
        row(50_000, 49_000.0, 1_500, 0),
        row(100_000, 60_000.0, 90_000, 5_000),
    ];
    assert_eq!(knee(&rows), Some(2));
    assert_eq!(knee(&rows[..2]), None);
    assert!(rows[3].overload().unwrap().contains("shed"));
    assert!(row(10_000, 9_000.0, 10, 0)
        .overload()
        .unwrap()
        .contains("achieved 90%"));
    let t = table(&rows);
    assert!(
        t.starts_with("| Load (K rps) | P50 (µs) | P90 (µs) | P99 (µs) | P999 (µs) | P9999 (µs) |")
    );
    assert!(
        t.contains("| 49 ⚠️ knee | 450 | 900 | 1500 | 3000 | 6000 |"),
        "{t}"
    );
    assert!(t.contains("| 60 ⚠️ |"));
    assert!(t.contains("| 10 | 12 | 24 | 40 | 80 | 160 |"));
    assert!(t.contains("knee: 50 K rps offered"));
    assert!(t.contains("highest rate below the knee: 20 K rps offered"));
}

#[test]
fn csv_has_a_line_per_run() {
    let rows = vec![
        row(10_000, 10_000.0, 40, 0),
        row(50_000, 49_000.0, 1_500, 0),
    ];
    let c = csv(&rows);
    let lines: Vec<&str> = c.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("rate_offered,rate_achieved,p50_us"));
    assert_eq!(
        lines[1],
        "10000,10000,12.0,24.0,40.0,80.0,160.0,360.0,100000,90000,10000,10,0,0,no,10,1,10"
    );
    assert!(lines[2].ends_with(",knee,10,1,50"));
}

#[test]
fn chart_has_five_percentiles_and_the_knee() {
    let rows = vec![
        row(10_000, 10_000.0, 40, 0),
        row(50_000, 49_000.0, 1_500, 0),
    ];
    let svg = chart(&rows, "Rialto");
    for name in ["P50", "P90", "P99", "P99.9", "P99.99"] {
        assert!(svg.contains(&format!("data-name=\"{name}\"")), "{name}");
    }
    assert!(svg.contains("knee (50 K rps offered)"));
}

#[test]
fn csv_reads_back_and_charts_compare() {
    let rows = vec![
        row(10_000, 10_000.0, 40, 0),
        row(50_000, 49_000.0, 1_500, 7),
    ];
    let back = parse_csv(&csv(&rows)).unwrap();
    assert_eq!(back, rows);
    // A run that did not know its steal time: an empty cell, read back as unknown.
    let mut unknown = rows.clone();
    unknown[1].steal_ms = None;
    let c = csv(&unknown);
    assert!(c.lines().nth(2).unwrap().ends_with(",1,"), "{c}");
    assert_eq!(parse_csv(&c).unwrap(), unknown);
    let bad_steal = csv(&rows).replace(",knee,10,1,50", ",knee,10,1,lots");
    assert!(parse_csv(&bad_steal).unwrap_err().contains("steal_ms"));
    assert!(parse_csv("a,b\n1,2\n")
        .unwrap_err()
        .contains("rate_offered"));
    let bad = csv(&rows).replace("10000,10000,", "10000,x,");
    assert!(parse_csv(&bad).unwrap_err().contains("line 2"));
    let sets = vec![
        ("Rialto".to_string(), rows.clone()),
        ("QFJ".to_string(), rows),
    ];
    let svg = compare_chart(&sets, &["p50".into(), "p99".into()], "t").unwrap();
    for name in ["Rialto P50", "Rialto P99", "QFJ P50", "QFJ P99"] {
        assert!(svg.contains(&format!("data-name=\"{name}\"")), "{name}");
    }
    assert!(compare_chart(&sets, &["p42".into()], "t").is_err());
}

#[test]
fn medians_merge_repeated_runs() {
    let mut a = row(10_000, 9_990.0, 40, 0);
    let mut b = row(10_000, 10_000.0, 2_000, 0);
    let mut c = row(10_000, 9_995.0, 50, 3);
    a.p50_ns = 30_000;
    a.steal_ms = Some(400);
    b.steal_ms = None;
    c.steal_ms = Some(20);
    b.p50_ns = 10_000;
    b.errors = 1;
    let m = median(&[a, b, c]).unwrap();
    assert_eq!(m.runs, 3);
    assert_eq!(m.p50_ns, 15_000);
    assert_eq!(m.p99_ns, 50_000, "one noisy run does not move P99");
    assert_eq!(m.rate_achieved, 9_995.0);
    assert_eq!(m.shed, 0);
    assert_eq!(m.errors, 1, "errors are never averaged away");
    assert_eq!(m.steal_ms, Some(210), "the median of the runs that know it");
    assert!(median(&[]).is_none());
    let two = median(&[row(1, 1.0, 40, 0), row(1, 2.0, 81, 0)]).unwrap();
    assert_eq!((two.p99_ns, two.rate_achieved), (60_500, 1.5));
    let t = table(&[m]);
    assert!(t.starts_with("Each row: median over 3 runs"), "{t}");
    assert!(t.contains("| Load (K rps) | P50 (µs) |"));
}

#[test]
fn a_grid_has_a_table_and_a_knee_per_bots_count() {
    let mut rows = vec![
        row(10_000, 10_000.0, 40, 0),
        row(50_000, 49_000.0, 1_500, 0),
    ];
    for (off, ach, p99) in [(10_000, 10_000.0, 30), (50_000, 50_000.0, 90)] {
        let mut r = row(off, ach, p99, 0);
        r.bots = 50;
        rows.push(r);
    }
    let t = tables(&rows);
    assert!(t.starts_with("### 10 bots\n"), "{t}");
    assert!(t.contains("### 50 bots\n"), "{t}");
    assert_eq!(t.matches("| Load (K rps) |").count(), 2);
    assert!(t.contains("knee: 50 K rps offered"));
    assert!(t.contains("knee: not reached"));
    let c = csv(&rows);
    assert!(c
        .lines()
        .next()
        .unwrap()
        .ends_with(",overloaded,bots,runs,steal_ms"));
    assert_eq!(c.lines().filter(|l| l.contains(",knee,10,1,")).count(), 1);
    assert_eq!(c.lines().filter(|l| l.contains(",no,50,1,")).count(), 2);
    assert_eq!(parse_csv(&c).unwrap(), rows);
    let svg = grid_chart(&rows, "grid");
    for name in ["10 bots P50", "10 bots P99", "50 bots P50", "50 bots P99"] {
        assert!(svg.contains(&format!("data-name=\"{name}\"")), "{name}");
    }
    // One bots count: the single-sweep chart with five percentiles and the knee.
    assert!(grid_chart(&rows[..2], "one").contains("knee (50 K rps offered)"));
    // A CSV written before the bots, runs and steal_ms columns still reads.
    let old: String = csv(&rows[..2])
        .lines()
        .map(|l| l.rsplitn(4, ',').nth(3).unwrap().to_string() + "\n")
        .collect();
    let back = parse_csv(&old).unwrap();
    assert_eq!((back[0].bots, back[0].runs, back[0].steal_ms), (0, 1, None));
}

#[test]
fn rates_parse_with_k_suffix() {
    assert_eq!(
        parse_rates("10000, 20k,1.5k").unwrap(),
        vec![10_000, 20_000, 1_500]
    );
    assert!(parse_rates("").is_err());
    assert!(parse_rates("ten").unwrap_err().contains("ten"));
    assert!(parse_rates("0").is_err());
}
