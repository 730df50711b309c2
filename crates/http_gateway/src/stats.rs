//! The WebSocket `stats` channel: the exchange's vital signs once a second, for the dashboard
//! and anyone else (`{"op":"subscribe","channel":"stats"}`).
//!
//! Role: a task on the HTTP thread reads the server's cumulative counters (`StatsSource`: the
//! same atomics `/metrics` shows, kept by the event loop and the followers as before) once a
//! second, turns the difference from the previous reading into a sample (rates per second,
//! the event loop's latency percentiles over the second, connections, lags), keeps the last
//! [`HISTORY`] samples for new subscribers and publishes the sample on a broadcast ring.
//!
//! Never: read from the order path (nothing here runs on the event loop or adds to its work);
//! a float in the JSON (rates per second and microseconds are whole numbers).

#[cfg(feature = "server")]
use crate::http::Shared;
use serde::Serialize;
use std::collections::VecDeque;
#[cfg(feature = "server")]
use std::sync::atomic::Ordering;
#[cfg(feature = "server")]
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
#[cfg(feature = "server")]
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::broadcast;

/// Samples kept for a new subscriber (ten minutes).
pub const HISTORY: usize = 600;
/// How often a sample is made.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// Durations counted by bucket: `counts[i]` of those under `upper_us[i]` µs (and at or over
/// the bucket before's bound); the last bound `None` (unbounded). Cumulative since start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Buckets {
    pub counts: Vec<u64>,
    pub upper_us: Vec<Option<u64>>,
}

impl Buckets {
    /// Each bucket's count since `before` (a reading of the same buckets).
    fn since(&self, before: &Buckets) -> Buckets {
        Buckets {
            counts: self
                .counts
                .iter()
                .enumerate()
                .map(|(i, &n)| n.saturating_sub(before.counts.get(i).copied().unwrap_or(0)))
                .collect(),
            upper_us: self.upper_us.clone(),
        }
    }

    /// The `q`-quantile (per million: 500_000 is the median) in µs, interpolated linearly
    /// within its bucket; the unbounded bucket answers its lower bound. `None` when empty.
    pub fn quantile_us(&self, per_million: u64) -> Option<u64> {
        let total: u64 = self.counts.iter().sum();
        if total == 0 {
            return None;
        }
        // The rank of the value asked for, 1-based: at least 1, at most `total`.
        let rank = (u128::from(total) * u128::from(per_million))
            .div_ceil(1_000_000)
            .clamp(1, u128::from(total)) as u64;
        let mut below = 0u64;
        let mut lower = 0u64;
        for (i, &n) in self.counts.iter().enumerate() {
            let upper = self.upper_us.get(i).copied().flatten();
            if n > 0 && below + n >= rank {
                let Some(upper) = upper else {
                    return Some(lower);
                };
                let into = rank - below;
                return Some(lower + (upper - lower) * into / n);
            }
            below += n;
            if let Some(u) = upper {
                lower = u;
            }
        }
        Some(lower)
    }
}

/// The server's counters at one instant, cumulative since it started (gauges as they are).
#[derive(Clone, Debug, Default)]
pub struct Reading {
    pub orders: u64,
    pub reports: u64,
    pub trades: u64,
    /// FIX market-data messages sent.
    pub md_messages: u64,
    /// FIX messages answered busy, and throttled (the HTTP side's are added here).
    pub shed: u64,
    pub throttled: u64,
    /// The event loop's busy iterations by duration: an order's round trip inside the
    /// exchange (read, journal, apply, write).
    pub ack_latency: Buckets,
    pub fix_sessions: u64,
    pub fix_connections: u64,
    pub md_sessions: u64,
    pub http_connections: u64,
    pub journal_seq: u64,
    pub market_data_lag_records: u64,
    /// `None`: that follower does not run.
    pub snapshot_lag_records: Option<u64>,
    pub store_lag_records: Option<u64>,
    pub store_lag_ms: Option<u64>,
}

/// Where the `stats` channel reads the server's counters.
pub trait StatsSource: Send + Sync + 'static {
    fn read(&self) -> Reading;
}

#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct Rates {
    pub orders: u64,
    pub reports: u64,
    pub trades: u64,
    pub md_messages: u64,
    pub ws_messages: u64,
    pub shed: u64,
    pub throttled: u64,
}

#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct Latency {
    pub p50: Option<u64>,
    pub p99: Option<u64>,
    pub p999: Option<u64>,
    /// Event-loop iterations in the interval.
    pub count: u64,
}

#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct Connections {
    pub fix_sessions: u64,
    pub fix_connections: u64,
    pub md_sessions: u64,
    pub http: u64,
    pub ws: u64,
}

#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct Totals {
    pub orders: u64,
    pub reports: u64,
    pub trades: u64,
    pub shed: u64,
    pub throttled: u64,
}

#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct Journal {
    pub last_seq: u64,
}

#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct Lag {
    pub market_data_records: u64,
    pub snapshot_records: Option<u64>,
    pub store_records: Option<u64>,
    pub store_ms: Option<u64>,
}

/// One `stats` message.
#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct Sample {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub time_ns: u64,
    pub interval_ms: u64,
    /// Per second over the interval.
    pub rates: Rates,
    pub ack_latency_us: Latency,
    pub connections: Connections,
    pub totals: Totals,
    pub journal: Journal,
    pub lag: Lag,
}

/// What a sample reads beside the server's counters: the HTTP side's own.
#[derive(Clone, Copy, Debug, Default)]
pub struct EdgeReading {
    pub ws_messages: u64,
    pub ws_connections: u64,
    pub shed: u64,
    pub throttled: u64,
}

/// The sample of the interval from `before` to `now` (`ms` long).
pub fn sample(
    before: (&Reading, EdgeReading),
    now: (&Reading, EdgeReading),
    ms: u64,
    time_ns: u64,
) -> Sample {
    let ((b, be), (n, ne)) = (before, now);
    let ms = ms.max(1);
    let per_s = |now: u64, before: u64| now.saturating_sub(before) * 1000 / ms;
    let lat = n.ack_latency.since(&b.ack_latency);
    Sample {
        kind: "stats",
        time_ns,
        interval_ms: ms,
        rates: Rates {
            orders: per_s(n.orders, b.orders),
            reports: per_s(n.reports, b.reports),
            trades: per_s(n.trades, b.trades),
            md_messages: per_s(n.md_messages, b.md_messages),
            ws_messages: per_s(ne.ws_messages, be.ws_messages),
            shed: per_s(n.shed + ne.shed, b.shed + be.shed),
            throttled: per_s(n.throttled + ne.throttled, b.throttled + be.throttled),
        },
        ack_latency_us: Latency {
            p50: lat.quantile_us(500_000),
            p99: lat.quantile_us(990_000),
            p999: lat.quantile_us(999_000),
            count: lat.counts.iter().sum(),
        },
        connections: Connections {
            fix_sessions: n.fix_sessions,
            fix_connections: n.fix_connections,
            md_sessions: n.md_sessions,
            http: n.http_connections,
            ws: ne.ws_connections,
        },
        totals: Totals {
            orders: n.orders,
            reports: n.reports,
            trades: n.trades,
            shed: n.shed + ne.shed,
            throttled: n.throttled + ne.throttled,
        },
        journal: Journal {
            last_seq: n.journal_seq,
        },
        lag: Lag {
            market_data_records: n.market_data_lag_records,
            snapshot_records: n.snapshot_lag_records,
            store_records: n.store_lag_records,
            store_ms: n.store_lag_ms,
        },
    }
}

/// The samples' ring and their history, shared by the sampling task and the connections.
#[derive(Debug)]
pub struct StatsHub {
    tx: broadcast::Sender<crate::ws::Text>,
    history: Mutex<VecDeque<crate::ws::Text>>,
}

impl Default for StatsHub {
    fn default() -> StatsHub {
        StatsHub {
            tx: broadcast::channel(16).0,
            history: Mutex::new(VecDeque::with_capacity(HISTORY)),
        }
    }
}

impl StatsHub {
    /// Keeps `text` (a sample's JSON) and sends it to the subscribers (under the history's
    /// lock, so that a subscriber gets each sample once: in its history or from the ring).
    pub fn publish(&self, text: crate::ws::Text) {
        let mut h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        if h.len() == HISTORY {
            h.pop_front();
        }
        h.push_back(text.clone());
        let _ = self.tx.send(text);
    }

    /// A receiver of the samples to come and the `stats_history` of those kept.
    pub fn subscribe(&self) -> (broadcast::Receiver<crate::ws::Text>, crate::ws::Text) {
        let h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        (self.tx.subscribe(), Self::history_of(&h))
    }

    /// `{"type":"stats_history","samples":[...]}`: the samples kept, oldest first.
    pub fn history_json(&self) -> crate::ws::Text {
        let h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        Self::history_of(&h)
    }

    fn history_of(h: &VecDeque<crate::ws::Text>) -> crate::ws::Text {
        let mut out = Vec::with_capacity(64 + h.iter().map(|t| t.len() + 1).sum::<usize>());
        out.extend_from_slice(br#"{"type":"stats_history","samples":["#);
        for (i, t) in h.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(t);
        }
        out.extend_from_slice(b"]}");
        crate::ws::Text::from(out)
    }
}

#[cfg(feature = "server")]
fn edge_reading(s: &Shared) -> EdgeReading {
    let ws = &s.market.ws().stats;
    EdgeReading {
        ws_messages: ws.published.load(Ordering::Relaxed),
        ws_connections: ws.connections.load(Ordering::Relaxed) as u64,
        shed: s.metrics.shed.get(),
        throttled: s.metrics.throttled.get(),
    }
}

#[cfg(feature = "server")]
fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Makes a sample of `source` every [`INTERVAL`] until the runtime stops; run it on the HTTP
/// thread's runtime.
#[cfg(feature = "server")]
pub async fn run(shared: Arc<Shared>, source: Arc<dyn StatsSource>) {
    let mut tick = tokio::time::interval(INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    let mut before = (source.read(), edge_reading(&shared));
    let mut at = tokio::time::Instant::now();
    loop {
        tick.tick().await;
        let now = (source.read(), edge_reading(&shared));
        let t = tokio::time::Instant::now();
        let ms = t.duration_since(at).as_millis() as u64;
        let s = sample((&before.0, before.1), (&now.0, now.1), ms, unix_ns());
        let text = crate::ws::Text::from(serde_json::to_vec(&s).expect("plain data serializes"));
        shared.market.ws().stats_hub.publish(text);
        before = now;
        at = t;
    }
}

#[cfg(test)]
mod tests;
