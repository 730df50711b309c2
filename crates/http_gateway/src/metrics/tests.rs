use super::*;

struct Fixed;

impl Source for Fixed {
    fn read(&self, r: &mut Readings<'_>) -> fmt::Result {
        r.counters("orders", "orders in", "edge", &[("fix", 7), ("rest", 3)])?;
        r.counter("trades", "trades", 2)?;
        r.histogram(
            "iteration_seconds",
            "iterations",
            0.5,
            &[(0.001, 3), (0.002, 0), (f64::INFINITY, 1)],
        )?;
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
    http.durations
        .get_or_create(&RouteLabels {
            route: "/api/v1/orders".into(),
            method: "POST".into(),
        })
        .observe(0.0001);
    let market = Arc::new(MarketView::new(1));
    market
        .ws()
        .stats
        .conflations
        .fetch_add(5, Ordering::Relaxed);
    market
        .ws()
        .stats
        .connections
        .fetch_add(2, Ordering::Relaxed);
    let text = render(&registry(&http, Some(market), Some(Box::new(Fixed))));
    for line in [
        "# TYPE rialto_http_requests_total counter",
        "rialto_http_requests_total{route=\"/api/v1/orders\",method=\"POST\",status=\"201\"} 1",
        "rialto_http_shed_total 0",
        "rialto_http_throttled_total 4",
        "rialto_orders_total{edge=\"fix\"} 7",
        "rialto_orders_total{edge=\"rest\"} 3",
        "# TYPE rialto_trades_total counter",
        "rialto_trades_total 2",
        "# TYPE rialto_http_request_duration_seconds histogram",
        "rialto_http_request_duration_seconds_count{route=\"/api/v1/orders\",method=\"POST\"} 1",
        "rialto_http_request_duration_seconds_bucket{route=\"/api/v1/orders\",method=\"POST\",le=\"0.0002\"} 1",
        "rialto_http_request_duration_seconds_bucket{route=\"/api/v1/orders\",method=\"POST\",le=\"5e-05\"} 0",
        "# TYPE rialto_iteration_seconds histogram",
        "rialto_iteration_seconds_sum 0.5",
        "rialto_iteration_seconds_count 4",
        "rialto_iteration_seconds_bucket{le=\"0.001\"} 3",
        "rialto_iteration_seconds_bucket{le=\"0.002\"} 3",
        "rialto_iteration_seconds_bucket{le=\"+Inf\"} 4",
        "rialto_ws_connections_open 2",
        "rialto_ws_conflations_total 5",
        "rialto_ws_slow_closes_total 0",
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
    let market = Some(Arc::new(MarketView::new(1)));
    let text = render(&registry(
        &HttpMetrics::default(),
        market,
        Some(Box::new(Fixed)),
    ));
    for l in text.lines().filter(|l| l.starts_with("# HELP")) {
        assert!(l.ends_with('.'), "{l}");
    }
}
