use super::*;

/// Buckets as the server's: under 1, 2, 4, ... µs, the last unbounded.
fn log2(counts: &[u64]) -> Buckets {
    let n = counts.len();
    Buckets {
        counts: counts.to_vec(),
        upper_us: (0..n).map(|i| (i + 1 < n).then(|| 1u64 << i)).collect(),
    }
}

#[test]
fn quantiles_interpolate_within_their_bucket() {
    // 100 values in [8, 16) µs: the median is halfway through the bucket.
    let b = log2(&[0, 0, 0, 0, 100, 0]);
    assert_eq!(b.quantile_us(500_000), Some(12));
    assert_eq!(b.quantile_us(990_000), Some(15));
    assert_eq!(b.quantile_us(1_000_000), Some(16));
    // 90 fast, 10 slow: P50 among the fast, P99 among the slow.
    let b = log2(&[0, 90, 0, 0, 0, 10, 0]);
    // The 50th of 90 values in [1, 2) µs: 1 + 50/90 µs, in whole µs.
    assert_eq!(b.quantile_us(500_000), Some(1));
    assert_eq!(b.quantile_us(990_000), Some(16 + 16 * 9 / 10));
    // The unbounded bucket answers its lower bound.
    let b = log2(&[1, 0, 0, 5]);
    assert_eq!(b.quantile_us(999_000), Some(4));
    assert_eq!(log2(&[0, 0, 0]).quantile_us(500_000), None);
    // One value: every quantile is in its bucket.
    let b = log2(&[0, 0, 1, 0]);
    assert_eq!(b.quantile_us(1), Some(4));
}

fn reading(orders: u64, latency: &[u64]) -> Reading {
    Reading {
        orders,
        reports: orders * 2,
        trades: orders / 2,
        md_messages: orders * 3,
        shed: 1,
        throttled: 2,
        ack_latency: log2(latency),
        fix_sessions: 4,
        fix_connections: 5,
        md_sessions: 1,
        http_connections: 3,
        journal_seq: orders + 10,
        market_data_lag_records: 7,
        snapshot_lag_records: None,
        store_lag_records: Some(9),
        store_lag_ms: Some(12),
    }
}

#[test]
fn a_sample_is_the_difference_per_second() {
    let edge = |ws_messages, shed| EdgeReading {
        ws_messages,
        ws_connections: 6,
        shed,
        throttled: 0,
    };
    let b = reading(1000, &[0, 10, 0, 0]);
    let n = reading(3000, &[0, 10, 100, 0]);
    // Two seconds: rates are halved.
    let s = sample((&b, edge(10, 0)), (&n, edge(410, 4)), 2000, 99);
    assert_eq!(
        s.rates,
        Rates {
            orders: 1000,
            reports: 2000,
            trades: 500,
            md_messages: 3000,
            ws_messages: 200,
            shed: 2,
            throttled: 0,
        }
    );
    // Only the interval's 100 iterations, all in [2, 4) µs.
    assert_eq!(s.ack_latency_us.count, 100);
    assert_eq!(s.ack_latency_us.p50, Some(3));
    assert_eq!(
        s.totals,
        Totals {
            orders: 3000,
            reports: 6000,
            trades: 1500,
            shed: 5,
            throttled: 2
        }
    );
    assert_eq!(s.connections.ws, 6);
    assert_eq!(s.journal.last_seq, 3010);
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["type"], "stats");
    assert_eq!(v["time_ns"], 99);
    assert_eq!(v["lag"]["snapshot_records"], serde_json::Value::Null);
    assert_eq!(v["lag"]["store_ms"], 12);
    // A quiet second: no latency.
    let q = sample((&n, edge(0, 0)), (&n, edge(0, 0)), 1000, 100);
    assert_eq!(q.ack_latency_us.p50, None);
    assert_eq!(q.rates.orders, 0);
}

#[test]
fn the_history_keeps_the_latest_samples_in_order() {
    let hub = StatsHub::default();
    assert_eq!(
        &hub.history_json()[..],
        br#"{"type":"stats_history","samples":[]}"#
    );
    for i in 0..HISTORY + 5 {
        hub.publish(crate::ws::Text::from(format!("{{\"n\":{i}}}")));
    }
    let v: serde_json::Value = serde_json::from_slice(&hub.history_json()).unwrap();
    let samples = v["samples"].as_array().unwrap();
    assert_eq!(samples.len(), HISTORY);
    assert_eq!(samples[0]["n"], 5);
    assert_eq!(samples[HISTORY - 1]["n"], HISTORY + 4);
}
