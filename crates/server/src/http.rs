//! Starts and stops the REST API (`http_gateway`) for `Server`: binds its address, runs its
//! routes on a tokio runtime on a thread of its own (`http`), and hands the event loop the
//! other end of the request queue. The routes, parsing and answers are `http_gateway`'s; the
//! WebSocket endpoint's updates come from the market-data thread (`market_data`).

use crate::config::{Config, HTTP_PORT_DEFAULT};
use crate::counters::{Counters, Log2Histogram, Logger};
use crate::error::ServerError;
use crate::market_data::MdCounters;
use http_gateway::http::{HttpConfig, Shared};
use http_gateway::link::ApiQueue;
use http_gateway::market::MarketView;
use http_gateway::metrics::{Readings, Source};
use http_gateway::stats::{Buckets, Reading, StatsSource};
use mio::Waker;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The running HTTP side.
pub(crate) struct HttpServer {
    pub(crate) addr: SocketAddr,
    /// The accept loop's counts (open, accepted, refused connections).
    pub(crate) conns: Arc<http_gateway::serve::ConnCounters>,
    pub(crate) shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Binds the configured address (the default one falls back to an ephemeral port when
    /// taken) and starts serving; `waker` wakes the event loop for each request; `/metrics`
    /// reads `metrics`.
    pub(crate) fn start(
        cfg: &Config,
        market: Arc<MarketView>,
        waker: Arc<Waker>,
        metrics: ServerMetrics,
        log: &Logger,
    ) -> Result<Option<(HttpServer, ApiQueue)>, ServerError> {
        let (Some(settings), Some(addr)) = (cfg.http.as_ref(), cfg.http_listen()) else {
            return Ok(None);
        };
        let listener = match std::net::TcpListener::bind(addr) {
            Ok(l) => l,
            Err(e) if settings.listen.is_none() && addr.port() == HTTP_PORT_DEFAULT => {
                let mut any = addr;
                any.set_port(0);
                let l = std::net::TcpListener::bind(any)
                    .map_err(|e| ServerError(format!("cannot listen for HTTP on {any}: {e}")))?;
                log(&format!(
                    "HTTP: {addr} is taken ({e}); serving on an ephemeral port (set http_listen)"
                ));
                l
            }
            Err(e) => {
                return Err(ServerError(format!(
                    "cannot listen for HTTP on {addr}: {e} (http_listen, or --http-listen off)"
                )))
            }
        };
        listener
            .set_nonblocking(true)
            .map_err(|e| ServerError(e.to_string()))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServerError(e.to_string()))?;
        // `[tls]`: the REST API speaks TLS too, with the same certificate (and client CA).
        let tls = match &cfg.tls {
            Some(t) => {
                let mut c = (*crate::transport::server_config(t)?).clone();
                c.alpn_protocols = vec![b"http/1.1".to_vec()];
                Some(Arc::new(c))
            }
            None => None,
        };
        let http = HttpConfig {
            body_max: settings.body_max,
            queue_max: settings.queue_max,
            ws_connections_max: settings.ws_connections_max,
            bench_dir: settings.bench_dir.clone(),
        };
        let wake: Box<dyn Fn() + Send + Sync> = Box::new(move || {
            let _ = waker.wake();
        });
        let (shared, queue) = Shared::new(Arc::new(cfg.api_config()), &http, market, wake);
        let conns = Arc::new(http_gateway::serve::ConnCounters::default());
        let metrics = Arc::new(ServerMetrics {
            http_conns: Some(conns.clone()),
            ..metrics
        });
        let router =
            http_gateway::http::router(shared.clone(), &http, Some(Box::new(metrics.clone())));
        let stats: Arc<dyn StatsSource> = metrics;
        let sampled = shared.clone();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let limits = settings.limits;
        let counters = conns.clone();
        let log = log.clone();
        let thread = std::thread::Builder::new()
            .name("http".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => return log(&format!("HTTP stops: no runtime: {e}")),
                };
                let r: std::io::Result<()> = rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener)?;
                    tokio::spawn(http_gateway::stats::run(sampled, stats));
                    let stop = async move {
                        let _ = stop_rx.await;
                    };
                    http_gateway::serve::serve(listener, router, limits, counters, tls, stop).await;
                    Ok(())
                });
                if let Err(e) = r {
                    log(&format!("HTTP stops: {e}"));
                }
            })
            .map_err(|e| ServerError(e.to_string()))?;
        Ok(Some((
            HttpServer {
                addr,
                conns,
                shared,
                stop: Some(stop_tx),
                thread: Some(thread),
            },
            queue,
        )))
    }

    /// Stops taking requests (`/ready` answers 503) before the event loop's last batch.
    pub(crate) fn stopping(&self) {
        self.shared.ready.store(false, Ordering::Relaxed);
    }

    /// Stops serving and waits for the thread (requests in flight get their answers or 503).
    pub(crate) fn join(mut self) {
        self.stopping();
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `h` as a Prometheus histogram in seconds.
fn log2_histogram(
    r: &mut Readings<'_>,
    name: &str,
    help: &str,
    h: &Log2Histogram,
) -> std::fmt::Result {
    let buckets: Vec<(f64, u64)> = h
        .counts()
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let le = h.upper_us(i).map_or(f64::INFINITY, |us| us as f64 / 1e6);
            (le, n)
        })
        .collect();
    r.histogram(name, help, h.sum_ns() as f64 / 1e9, &buckets)
}

/// The server's counters that `/metrics` shows beside the HTTP side's: atomics the event loop
/// and the market-data publisher already keep, read at each scrape.
pub(crate) struct ServerMetrics {
    pub(crate) counters: Arc<Counters>,
    pub(crate) md: Option<Arc<MdCounters>>,
    /// The HTTP accept loop's counts (set by `HttpServer::start`).
    pub(crate) http_conns: Option<Arc<http_gateway::serve::ConnCounters>>,
    /// The snapshot replica follows the journal (periodic snapshots): its lag is shown.
    pub(crate) snapshot_follows: bool,
    /// The trade store's follower, if it runs.
    #[cfg(feature = "store")]
    pub(crate) store: Option<Arc<crate::store::StoreCounters>>,
}

impl Source for ServerMetrics {
    fn read(&self, r: &mut Readings<'_>) -> std::fmt::Result {
        let c = &self.counters;
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let (orders, api_orders) = (get(&c.orders), get(&c.api_orders));
        r.counters(
            "orders",
            "New orders the exchange took in since start (recovery's replay included), by edge",
            "edge",
            &[
                ("fix", orders.saturating_sub(api_orders)),
                ("rest", api_orders),
            ],
        )?;
        r.counter(
            "execution_reports",
            "Execution reports the exchange made since start (replay included)",
            get(&c.reports),
        )?;
        r.counter(
            "trades",
            "Trades since start (replay included)",
            get(&c.trades),
        )?;
        r.counter(
            "loop_inputs",
            "Records the event loop sequenced and journaled",
            get(&c.inputs),
        )?;
        r.counter(
            "loop_batches",
            "Journal batches (group commits) of the event loop",
            get(&c.batches),
        )?;
        r.counter(
            "loop_slow_iterations",
            "Event-loop iterations with work that took over 1 ms",
            get(&c.slow_iterations),
        )?;
        r.gauge(
            "loop_max_iteration_ns",
            "The longest event-loop iteration with work, ns",
            get(&c.max_iteration_ns),
        )?;
        let journaled = c.last_seq.load(Ordering::Acquire);
        r.gauge(
            "journal_last_seq",
            "The sequence number of the last journaled and applied record",
            journaled,
        )?;
        if let Some(h) = &self.http_conns {
            r.counter(
                "http_connections",
                "HTTP connections accepted",
                get(&h.accepted),
            )?;
            r.gauge(
                "http_connections_open",
                "HTTP connections open",
                get(&h.open),
            )?;
            r.counter(
                "http_refused_connections",
                "HTTP connections closed at once (connections_max, or one address's share)",
                get(&h.refused),
            )?;
        }
        r.counter(
            "fix_connections",
            "FIX order-entry connections accepted",
            get(&c.connections),
        )?;
        r.counter(
            "fix_refused_connections",
            "FIX connections closed at once (max_connections, too many not logged on)",
            get(&c.refused_connections),
        )?;
        r.counter(
            "fix_shed",
            "FIX application messages answered \"exchange busy\" (too many waiting)",
            get(&c.busy_rejects),
        )?;
        r.counter(
            "fix_throttled",
            "FIX application messages answered \"throttled\" (over their session's limits)",
            get(&c.throttled),
        )?;
        r.gauge(
            "fix_connections_open",
            "FIX order-entry connections open (updated each second)",
            get(&c.fix_connections_open),
        )?;
        r.gauge(
            "fix_sessions_logged_on",
            "FIX order-entry sessions logged on (updated each second)",
            get(&c.fix_sessions_logged_on),
        )?;
        log2_histogram(
            r,
            "loop_iteration_seconds",
            "Busy event-loop iterations by duration: read, journal, apply and write of a batch, \
             the exchange's part of an order's round trip",
            &c.iterations,
        )?;
        log2_histogram(
            r,
            "journal_commit_seconds",
            "The event loop's journal steps (a batch's appends and commit) by duration",
            &c.commits,
        )?;
        r.counter("snapshots", "Snapshots written", get(&c.snapshots))?;
        if self.snapshot_follows {
            r.gauge(
                "snapshot_replica_lag_records",
                "Records journaled that the snapshot replica has not applied yet",
                journaled.saturating_sub(get(&c.replica_seq)),
            )?;
        }
        #[cfg(feature = "store")]
        if let Some(st) = &self.store {
            r.gauge(
                "store_applied_seq",
                "The last journal record the trade store holds",
                get(&st.applied_seq),
            )?;
            r.gauge(
                "store_lag_records",
                "Records journaled that the trade store does not hold yet",
                st.lag_records(journaled),
            )?;
            r.gauge(
                "store_lag_milliseconds",
                "How long ago the oldest record the trade store lacks was journaled, at most \
                 (0: caught up)",
                (st.lag_seconds(journaled) * 1e3) as u64,
            )?;
            r.counter(
                "store_write_failures",
                "Writes the trade store's database refused (each retried)",
                get(&st.failures),
            )?;
            log2_histogram(
                r,
                "store_commit_lag_seconds",
                "Journal records by the time from their journaling to the trade store's commit \
                 of their rows",
                &st.commit_lag,
            )?;
        }
        if let Some(md) = &self.md {
            let applied = get(&md.applied_seq);
            r.gauge(
                "market_data_applied_seq",
                "The last record the market-data follower applied",
                applied,
            )?;
            r.gauge(
                "market_data_lag_records",
                "Records journaled that the market-data follower has not applied yet",
                journaled.saturating_sub(applied),
            )?;
            r.gauge(
                "market_data_sessions",
                "FIX market-data sessions logged on",
                get(&md.sessions),
            )?;
            r.gauge(
                "market_data_subscriptions",
                "Market-data subscriptions",
                get(&md.subscriptions),
            )?;
            r.counter(
                "market_data_messages",
                "Market-data messages sent (snapshots and incrementals)",
                get(&md.messages),
            )?;
            r.counter(
                "market_data_conflations",
                "Times a slow market-data subscriber was conflated",
                get(&md.conflations),
            )?;
        }
        Ok(())
    }
}

/// `h`'s buckets as the `stats` channel reads them.
fn buckets(h: &Log2Histogram) -> Buckets {
    let counts = h.counts();
    Buckets {
        upper_us: (0..counts.len()).map(|i| h.upper_us(i)).collect(),
        counts: counts.to_vec(),
    }
}

impl StatsSource for ServerMetrics {
    /// The same atomics `/metrics` reads.
    fn read(&self) -> Reading {
        let c = &self.counters;
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let journaled = c.last_seq.load(Ordering::Acquire);
        let mut r = Reading {
            orders: get(&c.orders),
            reports: get(&c.reports),
            trades: get(&c.trades),
            shed: get(&c.busy_rejects),
            throttled: get(&c.throttled),
            ack_latency: buckets(&c.iterations),
            fix_sessions: get(&c.fix_sessions_logged_on),
            fix_connections: get(&c.fix_connections_open),
            http_connections: self.http_conns.as_ref().map_or(0, |h| get(&h.open)),
            journal_seq: journaled,
            snapshot_lag_records: self
                .snapshot_follows
                .then(|| journaled.saturating_sub(get(&c.replica_seq))),
            ..Reading::default()
        };
        if let Some(md) = &self.md {
            r.md_messages = get(&md.messages);
            r.md_sessions = get(&md.sessions);
            r.market_data_lag_records = journaled.saturating_sub(get(&md.applied_seq));
        }
        #[cfg(feature = "store")]
        if let Some(st) = &self.store {
            r.store_lag_records = Some(st.lag_records(journaled));
            r.store_lag_ms = Some((st.lag_seconds(journaled) * 1e3) as u64);
        }
        r
    }
}
