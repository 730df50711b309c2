use super::*;

struct Fixed;

impl Source for Fixed {
    fn read(&self, r: &mut Readings<'_>) -> fmt::Result {
        r.counters("orders", "orders in", "edge", &[("fix", 7), ("rest", 3)])?;
        r.counter("trades", "trades", 2)?;
        r.gauge("lag", "records behind", u64::MAX)
    }
}

#[test]
fn renders_the_http_counters_and_the_source_in_prometheus_text() {
    let http = HttpMetrics::default();
    http.requests
        .get_or_create(&RequestLabels {
            route: "/api/v1/orders".into(),
            method: "POST".into(),
            status: 201,
        })
        .inc();
    http.throttled.inc_by(4);
    let text = render(&registry(&http, Some(Box::new(Fixed))));
    for line in [
        "# TYPE rialto_http_requests_total counter",
        "rialto_http_requests_total{route=\"/api/v1/orders\",method=\"POST\",status=\"201\"} 1",
        "rialto_http_shed_total 0",
        "rialto_http_throttled_total 4",
        "rialto_orders_total{edge=\"fix\"} 7",
        "rialto_orders_total{edge=\"rest\"} 3",
        "# TYPE rialto_trades_total counter",
        "rialto_trades_total 2",
        "# TYPE rialto_lag gauge",
        &format!("rialto_lag {}", i64::MAX),
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "no line {line:?} in:\n{text}"
        );
    }
}

#[test]
fn every_help_line_ends_with_a_period() {
    let text = render(&registry(&HttpMetrics::default(), Some(Box::new(Fixed))));
    for l in text.lines().filter(|l| l.starts_with("# HELP")) {
        assert!(l.ends_with('.'), "{l}");
    }
}
