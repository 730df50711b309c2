//! `/metrics`: the server's counters in the Prometheus text format (version 0.0.4), written
//! by `prometheus-client` at each scrape.
//!
//! Two sources. The HTTP side's own (`HttpMetrics`: requests by route and status,
//! requests shed and throttled), updated by the handlers on the HTTP thread. The
//! server's (`Source`: the event loop's and the market-data follower's atomics), read only
//! when scraped: nothing here runs on the event loop, which keeps its atomics as before.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::fmt;

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

/// The HTTP side's counters (each `Counter` is an `Arc` of an atomic).
#[derive(Debug, Default)]
pub struct HttpMetrics {
    pub requests: Family<RequestLabels, Counter>,
    /// Requests answered 503 because the event loop's queue was full.
    pub shed: Counter,
    /// Requests answered 429 (over their key's `requests_per_sec`).
    pub throttled: Counter,
}

/// What the server exposes beside the HTTP side's counters, read at each scrape.
pub trait Source: Send + Sync + 'static {
    fn read(&self, r: &mut Readings<'_>) -> fmt::Result;
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

/// The registry `/metrics` writes: the HTTP side's counters and `source`'s, under `rialto_`.
pub fn registry(http: &HttpMetrics, source: Option<Box<dyn Source>>) -> Registry {
    let mut reg = Registry::with_prefix("rialto");
    reg.register(
        "http_requests",
        "HTTP requests answered, by route, method and status",
        http.requests.clone(),
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
