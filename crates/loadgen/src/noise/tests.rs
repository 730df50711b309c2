use super::*;

#[test]
fn gaps_fall_in_their_bands() {
    let mut n = CpuNoise::default();
    for g in [
        100, 20_000, 20_001, 50_000, 50_001, 200_000, 999_999, 1_000_000, 1_000_001, 8_000_000,
    ] {
        n.record(g);
    }
    // 100 and 20_000 are not gaps; each band's upper bound belongs to it.
    assert_eq!(n.gaps, [2, 2, 2, 2]);
    assert_eq!(n.max_gap_ns, 8_000_000);
    assert_eq!(
        n.lost_ns,
        20_001 + 50_000 + 50_001 + 200_000 + 999_999 + 1_000_000 + 1_000_001 + 8_000_000
    );
    n.measured_ns = 1_000_000_000;
    assert!(
        (n.lost_pct() - 1.132_000_2).abs() < 1e-6,
        "{}",
        n.lost_pct()
    );
}

#[test]
fn a_short_measurement_reports_every_allowed_cpu() {
    let cpus = allowed_cpus().unwrap();
    let rows = measure(&cpus, Duration::from_millis(30)).unwrap();
    assert_eq!(rows.iter().map(|r| r.cpu).collect::<Vec<_>>(), cpus);
    for r in &rows {
        assert!(r.measured_ns >= 30_000_000, "{r:?}");
        assert!(r.lost_ns <= r.measured_ns, "{r:?}");
    }
    let text = render(&rows, Some(5));
    assert!(
        text.contains(&format!("noise_cpus={}", cpus.len())),
        "{text}"
    );
    assert!(text.contains("steal_ms=5"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("| ")).count(),
        cpus.len() + 1
    );
}
