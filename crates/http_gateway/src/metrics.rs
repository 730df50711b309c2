//! `/metrics`: the server's counters in the Prometheus text format (version 0.0.4), written
//! by `prometheus-client` at each scrape.
//!
//! Three sources. The HTTP side's own (`HttpMetrics`: requests by route and status, their
//! durations, requests shed and throttled), updated by the handlers on the HTTP thread. The
//! WebSocket side's (`WsStats`: connections, conflations, closes), atomics of the connections'
//! tasks. The server's (`Source`: the event loop's and the market-data follower's atomics,
//! its latency histograms among them), read only when scraped: nothing here runs on the event
//! loop, which keeps its atomics as before.

use crate::market::MarketView;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet,
};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The `Content-Type` of `/metrics`.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// The labels of an HTTP request: its route (the path pattern, `unmatched` for none), method
/// and answer's status.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub route: String,
    pub method: String,
    pub status: u16,
}

/// The labels of a request's duration: its route and method.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub route: String,
    pub method: String,
}

/// The HTTP side's counters (each `Counter` is an `Arc` of an atomic).
#[derive(Debug)]
pub struct HttpMetrics {
    pub requests: Family<RequestLabels, Counter>,
    /// Seconds from a request's head read to its answer, by route and method.
    pub durations: Family<RouteLabels, Histogram>,
    /// Requests answered 503 because the event loop's queue was full.
    pub shed: Counter,
    /// Requests answered 429 (over their key's `requests_per_sec`).
    pub throttled: Counter,
}

impl Default for HttpMetrics {
    fn default() -> HttpMetrics {
        HttpMetrics {
            requests: Family::default(),
            durations: Family::new_with_constructor(duration_histogram),
            shed: Counter::default(),
            throttled: Counter::default(),
        }
    }
}

/// Buckets from 25 µs to about 0.8 s, doubling.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(25e-6, 2.0, 16))
}

/// What the server exposes beside the HTTP side's counters, read at each scrape.
pub trait Source: Send + Sync + 'static {
    fn read(&self, r: &mut Readings<'_>) -> fmt::Result;
}

impl<T: Source> Source for Arc<T> {
    fn read(&self, r: &mut Readings<'_>) -> fmt::Result {
        T::read(self, r)
    }
}

/// Where a `Source` writes its values.
pub struct Readings<'a> {
    enc: DescriptorEncoder<'a>,
}

impl Readings<'_> {
    fn describe<'s>(
        &'s mut self,
        name: &'s str,
        help: &str,
        t: MetricType,
    ) -> Result<MetricEncoder<'s>, fmt::Error> {
        // Ended with a period like the registered metrics' help (the registry adds one).
        self.enc
            .encode_descriptor(name, &format!("{help}."), None, t)
    }

    /// A counter (its name gets `_total`).
    pub fn counter(&mut self, name: &str, help: &str, v: u64) -> fmt::Result {
        let m = self.describe(name, help, MetricType::Counter)?;
        ConstCounter::new(v).encode(m)
    }

    /// A counter with one label, a value per label value.
    pub fn counters(
        &mut self,
        name: &str,
        help: &str,
        label: &str,
        values: &[(&str, u64)],
    ) -> fmt::Result {
        let mut m = self.describe(name, help, MetricType::Counter)?;
        for &(l, v) in values {
            let labels = [(label, l)];
            ConstCounter::new(v).encode(m.encode_family(&labels)?)?;
        }
        Ok(())
    }

    /// A histogram of `buckets`: (upper bound, count of that bucket alone), the last one's
    /// bound `f64::INFINITY`; `sum` is of the observed values.
    pub fn histogram(
        &mut self,
        name: &str,
        help: &str,
        sum: f64,
        buckets: &[(f64, u64)],
    ) -> fmt::Result {
        let mut m = self.describe(name, help, MetricType::Histogram)?;
        let count = buckets.iter().map(|b| b.1).sum();
        m.encode_histogram::<NoLabelSet>(sum, count, buckets, None)
    }

    /// A gauge (values above `i64::MAX` are written as `i64::MAX`).
    pub fn gauge(&mut self, name: &str, help: &str, v: u64) -> fmt::Result {
        let m = self.describe(name, help, MetricType::Gauge)?;
        ConstGauge::new(i64::try_from(v).unwrap_or(i64::MAX)).encode(m)
    }
}

struct SourceCollector(Box<dyn Source>);

impl fmt::Debug for SourceCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SourceCollector")
    }
}

impl Collector for SourceCollector {
    fn encode(&self, enc: DescriptorEncoder) -> fmt::Result {
        self.0.read(&mut Readings { enc })
    }
}

/// The WebSocket side's counts (`WsStats`).
struct WsSource(Arc<MarketView>);

impl Source for WsSource {
    fn read(&self, r: &mut Readings<'_>) -> fmt::Result {
        let s = &self.0.ws().stats;
        r.gauge(
            "ws_connections_open",
            "WebSocket connections open",
            s.connections.load(Ordering::Relaxed) as u64,
        )?;
        r.counter(
            "ws_connections",
            "WebSocket connections upgraded",
            s.accepted.load(Ordering::Relaxed),
        )?;
        r.counter(
            "ws_refused_connections",
            "WebSocket upgrades answered 503 (ws_connections_max open already)",
            s.refused.load(Ordering::Relaxed),
        )?;
        r.counter(
            "ws_conflations",
            "Fresh book snapshots sent to WebSocket connections that fell behind",
            s.conflations.load(Ordering::Relaxed),
        )?;
        r.counter(
            "ws_slow_closes",
            "WebSocket connections closed as too slow (code 1008)",
            s.slow_closes.load(Ordering::Relaxed),
        )
    }
}

/// The registry `/metrics` writes: the HTTP side's counters, the WebSocket side's (of
/// `market`'s rings) and `source`'s, under `rialto_`.
pub fn registry(
    http: &HttpMetrics,
    market: Option<Arc<MarketView>>,
    source: Option<Box<dyn Source>>,
) -> Registry {
    let mut reg = Registry::with_prefix("rialto");
    reg.register(
        "http_requests",
        "HTTP requests answered, by route, method and status",
        http.requests.clone(),
    );
    reg.register(
        "http_request_duration_seconds",
        "Seconds from an HTTP request's head to its answer, by route and method",
        http.durations.clone(),
    );
    reg.register(
        "http_shed",
        "HTTP requests answered 503 because the event loop's queue was full",
        http.shed.clone(),
    );
    reg.register(
        "http_throttled",
        "HTTP requests answered 429 (over their API key's requests_per_sec)",
        http.throttled.clone(),
    );
    if let Some(m) = market {
        reg.register_collector(Box::new(SourceCollector(Box::new(WsSource(m)))));
    }
    if let Some(s) = source {
        reg.register_collector(Box::new(SourceCollector(s)));
    }
    reg
}

/// The text of `reg` (Prometheus text format 0.0.4).
pub fn render(reg: &Registry) -> String {
    let mut out = String::with_capacity(4096);
    // Writing to a String fails only if an encoder does, and none of these does.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, reg);
    out
}

#[cfg(test)]
mod tests;
