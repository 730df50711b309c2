//! The running server: recovery at start, then the event loop thread (`event_loop`), the
//! snapshot threads (`snapshots`) and the journal's own; `rialto serve` around it.
//!
//! Threads: **`rialto`**, the event loop: every socket, sequence -> journal -> apply ->
//! publish. **`snapshot`** and **`snapshot-idle`**: a journal follower keeps a replica of the
//! state and periodic snapshots serialize it, so the loop never stalls for one. **`journal-sync`**
//! (inside the journal writer): segments prepared ahead and written back in the background.
//!
//! CPU placement (config `cpu`, `rialto serve --cpu N`): the loop pins itself to CPU N and
//! every other thread of the server (snapshot, snapshot-idle, journal-sync) is started with a
//! mask without N, so with `idle = "spin"` the loop owns that CPU. Unset: nothing is pinned.
//!
//! Start-up (`Server::start`): `recover_and_open` reads the journal once (the writer's open
//! scan feeds the replay after the snapshot) and prints each phase's time.

use crate::config::Config;
use crate::counters::{now_ns, Counters, Logger};
use crate::error::ServerError;
use crate::event_loop::{guards_of, next_checkpoint, EventLoop, READ_CHUNK, WAKER};
use crate::market_data::{MdCounters, MdPublisher};
use crate::record::{Record, KIND_RECORD};
use crate::recovery::{recover_and_open, Opened, Recovered};
use crate::snapshots::{HelperState, SnapshotJob, SnapshotWriter};
use crate::watch::LoopWatch;
use crossbeam_channel::bounded;
use fix::Decoder;
use fix_gateway::{FixAdapter, Outbox};
use journal::{JournalConfig, Log};
use mio::net::TcpListener;
use mio::{Poll, Waker};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A started server. Drop does not stop it: call `shutdown`.
pub struct Server {
    pub addr: SocketAddr,
    pub recovered: Recovered,
    pub counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    main: Option<JoinHandle<Result<u64, ServerError>>>,
    /// The market-data publisher (`None`: `[market_data] enabled = false`).
    md: Option<MdPublisher>,
    /// The REST API (`None`: `http_listen = "off"`).
    #[cfg(feature = "http")]
    http: Option<crate::http::HttpServer>,
    /// The trade store's follower (`None`: `store = "off"`).
    #[cfg(feature = "store")]
    store: Option<crate::store::StoreFollower>,
}

impl Server {
    /// Recovers the state in `cfg.data_dir`, binds `cfg.listen` and starts the threads.
    pub fn start(cfg: Config, log: Logger) -> Result<Server, ServerError> {
        Server::start_with(cfg, log, None)
    }

    /// `start` for a gateway of the cluster (`cfg` from `Config::as_gateway`): `link` starts
    /// the threads that carry its commands to Kafka and the engines' outcomes back.
    pub fn start_gateway(
        cfg: Config,
        log: Logger,
        link: crate::event_loop::StartGateway,
    ) -> Result<Server, ServerError> {
        if cfg.remote.is_none() {
            return Err(ServerError(
                "a gateway's configuration comes from Config::as_gateway".into(),
            ));
        }
        Server::start_with(cfg, log, Some(link))
    }

    fn start_with(
        cfg: Config,
        log: Logger,
        link: Option<crate::event_loop::StartGateway>,
    ) -> Result<Server, ServerError> {
        let cfg = Arc::new(cfg);
        // `[tls]` files first: a bad certificate or key stops the start before anything else.
        let tls = cfg
            .tls
            .as_ref()
            .map(crate::transport::server_config)
            .transpose()?;
        // CPU placement: the threads started below (journal sync, snapshot, snapshot-idle)
        // inherit this thread's mask, so it moves off the loop's CPU until `start` returns; the
        // loop pins itself.
        let placement = cfg.cpu.map(Placement::enter).transpose()?;
        if let Some(p) = &placement {
            log(&format!(
                "event loop pinned to CPU {}; the server's other threads on CPUs {:?}",
                p.cpu, p.others
            ));
        }
        let data_dir = cfg.data_dir.clone();
        std::fs::create_dir_all(&data_dir).map_err(|e| {
            ServerError(format!(
                "cannot create data dir {}: {e}",
                data_dir.display()
            ))
        })?;
        // One pass over the journal: the writer's open scan (checksums, torn tail) feeds the
        // replay after the snapshot (recovery's module docs).
        let Opened {
            node: mut x,
            mut journal,
            report,
            recovered,
            snapshot,
        } = recover_and_open(
            &cfg,
            &data_dir,
            JournalConfig {
                segment_size_bytes: cfg.journal_segment_bytes,
                ..JournalConfig::default()
            },
            |m| log(m),
        )?;
        log(&report.to_string());
        log(&format!(
            "recovered: snapshot at seq {}, replayed {} records, last seq {}, {} live orders, {:.3}s; state hash {:016x}",
            recovered.snapshot_seq.unwrap_or(0),
            recovered.replayed,
            recovered.last_seq,
            x.live_orders(),
            recovered.elapsed.as_secs_f64(),
            recovered.state_hash
        ));
        log(&format!("start-up phases: {}", recovered.phases));
        if journal.next_seq() != x.last_seq() + 1 {
            return Err(ServerError(format!(
                "journal ends at {} but the recovered state is at {}",
                journal.next_seq() - 1,
                x.last_seq()
            )));
        }
        // A new run: every connection of the previous one is gone.
        let ts = now_ns();
        let mut enc = Vec::with_capacity(256);
        Record::Startup.encode(&mut enc);
        let seq = journal.append(KIND_RECORD, ts, &enc)?;
        journal.commit(cfg.durability.journal())?;
        let mut out = Outbox::default();
        x.apply(seq, ts, &Record::Startup, &mut out);
        out.clear();
        // Live: ResendRequests are served in pieces, between other work.
        out.defer_resends = true;

        let listener = TcpListener::bind(cfg.listen)
            .map_err(|e| ServerError(format!("cannot listen on {}: {e}", cfg.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServerError(e.to_string()))?;
        let poll = Poll::new().map_err(|e| ServerError(e.to_string()))?;
        let waker =
            Arc::new(Waker::new(poll.registry(), WAKER).map_err(|e| ServerError(e.to_string()))?);
        let counters = Arc::new(Counters::default());
        counters
            .state_hash
            .store(recovered.state_hash, Ordering::Relaxed);
        counters.last_seq.store(seq, Ordering::Relaxed);
        let stop = Arc::new(AtomicBool::new(false));

        // The snapshot thread keeps a replica of the state, restored from the snapshot recovery
        // started from (or a serialization of the recovered state) and brought forward from
        // the journal, so periodic snapshots never stall the loop.
        let initial = match snapshot {
            Some(s) => s.bytes,
            None => {
                let mut b = Vec::with_capacity(1 << 20);
                x.snapshot_and_hash(&mut b);
                b
            }
        };
        let (snap_tx, snap_rx) = bounded::<SnapshotJob>(1);
        let snap_busy = Arc::new(AtomicBool::new(false));
        let replica_ok = Arc::new(AtomicBool::new(true));
        let snap_writer = {
            let w = SnapshotWriter {
                cfg: cfg.clone(),
                data_dir: cfg.data_dir.clone(),
                busy: snap_busy.clone(),
                replica_ok: replica_ok.clone(),
                stop: stop.clone(),
                counters: counters.clone(),
                log: log.clone(),
                helper: HelperState::default(),
            };
            std::thread::Builder::new()
                .name("snapshot".into())
                .spawn(move || w.run(snap_rx, initial))
                .map_err(|e| ServerError(e.to_string()))?
        };
        // The market-data publisher follows the journal from record 1 (RptSeq is a count
        // since the journal began).
        // Both ports check Logons against the same hashes and throttle.
        let auth_check = Arc::new(crate::auth::AuthCheck::new(
            Arc::new(cfg.fix_config()),
            crate::auth::ThrottleConfig {
                delay: cfg.failed_logon_delay,
                delay_max: cfg.failed_logon_delay_max,
            },
        )?);
        let auth = crate::auth::Auth::start(auth_check.clone(), waker.clone())?;
        let cluster = match link {
            Some(start) => {
                let (otx, orx) = std::sync::mpsc::sync_channel(1 << 16);
                let (ctx, crx) = std::sync::mpsc::channel();
                let w = waker.clone();
                start(crate::event_loop::GatewayPorts {
                    outcomes: otx,
                    wake: Arc::new(move || {
                        let _ = w.wake();
                    }),
                    commands: crx,
                    resume: x.exchange.outcome_offsets(),
                    unanswered: x.exchange.unanswered(),
                })
                .map_err(|e| ServerError(format!("cluster: {e}")))?;
                Some(crate::event_loop::ClusterLink {
                    outcomes: orx,
                    commands: ctx,
                    more: true,
                    gone: false,
                })
            }
            None => None,
        };
        // The public book and ticker of the REST API, as the market-data replica writes them.
        let ws_buffer = cfg
            .http
            .as_ref()
            .map_or(http_gateway::ws::WS_BUFFER_DEFAULT, |h| h.ws_buffer);
        let market = Arc::new(http_gateway::market::MarketView::with_ws_buffer(
            cfg.instruments.len(),
            ws_buffer,
        ));
        let md = match &cfg.market_data {
            Some(m) => Some(MdPublisher::start(
                &cfg,
                m,
                crate::market_data::MdLinks {
                    auth: auth_check,
                    source: journal.source(),
                    watermark: counters.clone(),
                    stop: stop.clone(),
                    log: log.clone(),
                    market: cfg.http.is_some().then(|| market.clone()),
                },
            )?),
            None => None,
        };
        // The trade store follows the journal on its own thread (`store`).
        #[cfg(feature = "store")]
        let store_target = crate::store::store_target(&cfg);
        #[cfg(feature = "store")]
        let store = match &store_target {
            Some(target) => Some(crate::store::StoreFollower::start(
                &cfg,
                target,
                journal.source(),
                counters.clone(),
                log.clone(),
            )?),
            None => None,
        };
        #[cfg(not(feature = "http"))]
        let api = None;
        #[cfg(feature = "http")]
        let metrics = crate::http::ServerMetrics {
            counters: counters.clone(),
            md: md.as_ref().map(|m| m.counters.clone()),
            http_conns: None,
            snapshot_follows: cfg.periodic_snapshots(),
            #[cfg(feature = "store")]
            store: store.as_ref().map(|s| s.counters.clone()),
        };
        #[cfg(feature = "http")]
        let (http, api) =
            match crate::http::HttpServer::start(&cfg, market, waker.clone(), metrics, &log)? {
                Some((h, queue)) => {
                    x.api.answers_on = true;
                    // The history routes read the store the follower writes.
                    #[cfg(feature = "store")]
                    if let Some(target) = &store_target {
                        let journal = counters.clone();
                        h.shared.set_history(http_gateway::history::HistorySource {
                            reader: crate::store::history(target)
                                .map_err(|e| ServerError(e.to_string()))?,
                            journal_seq: Box::new(move || journal.last_seq.load(Ordering::Acquire)),
                        });
                    }
                    (
                        Some(h),
                        Some(crate::event_loop::ApiLink {
                            queue,
                            waiting: HashMap::new(),
                        }),
                    )
                }
                None => (None, None),
            };
        let md_wake = md.as_ref().map(|m| m.wake.clone());
        let budget = cfg.batch_budget.max(1);
        let cfg_firms = cfg.firms.len();
        let cfg_sessions = cfg.sessions.clone();
        let first_checkpoint = next_checkpoint(cfg.checkpoint_every_records, journal.next_seq());
        let msglog = crate::message_log::start(
            &cfg.message_log_dir
                .clone()
                .unwrap_or_else(|| cfg.data_dir.join("messages")),
            cfg.sessions
                .iter()
                .map(|s| {
                    (
                        format!("{}-{}", s.sender_comp_id, s.target_comp_id),
                        s.message_log,
                    )
                })
                .collect(),
        )
        .map_err(|e| ServerError(format!("message log: {e}")))?;
        crate::event_loop::raise_fd_limit(cfg.max_connections, &log);
        let mut ev = EventLoop {
            adapter: FixAdapter::new(Arc::new(cfg.fix_config())),
            durability: cfg.durability.journal(),
            idle: cfg.idle,
            cfg,
            poll,
            listener,
            tls,
            conns: HashMap::default(),
            // Tokens 0 and 1 are the listener and the waker.
            next_conn: 2,
            journal,
            node: x,
            counters: counters.clone(),
            stop: stop.clone(),
            decoder: Decoder::default(),
            scratch: vec![0u8; READ_CHUNK].into_boxed_slice(),
            batch: Vec::with_capacity(4 * budget + 64),
            seqs: Vec::with_capacity(4 * budget + 64),
            hashes: Vec::with_capacity(4 * budget + 64),
            enc,
            out,
            last_ts: ts,
            ready: Vec::with_capacity(64),
            touched: Vec::with_capacity(64),
            budget,
            apps: 0,
            inq: HashMap::default(),
            rr: VecDeque::with_capacity(64),
            firm_waiting: vec![0; cfg_firms],
            guards: guards_of(&cfg_sessions),
            now: 0,
            refused_log: 0,
            pending_logons: 0,
            since_snapshot: 0,
            next_checkpoint: first_checkpoint,
            last_snapshot: Instant::now(),
            snap_tx,
            snap_busy,
            replica_ok,
            log: log.clone(),
            commit_max_ns: 0,
            commits_slow: 0,
            watch: LoopWatch::default(),
            steal_cpu: placement.as_ref().map(|p| p.cpu),
            md_wake,
            api,
            cluster,
            msglog,
            shed_unlogged: 0,
            throttled_unlogged: 0,
            resending: Vec::new(),
            piece: Outbox::default(),
            auth,
            steal_mark: sched_idle::steal_ms(placement.as_ref().map(|p| p.cpu))
                .map(|ms| (ms, Instant::now())),
        };
        let main = {
            let guard = StopOnExit(stop.clone(), waker.clone());
            let loop_cpu = placement.as_ref().map(|p| p.cpu);
            std::thread::Builder::new()
                .name("rialto".into())
                .spawn(move || {
                    let _guard = guard;
                    if let Some(cpu) = loop_cpu {
                        if let Err(e) = sched_idle::pin(&[cpu]) {
                            (ev.log)(&format!("cannot pin the event loop to CPU {cpu}: {e}"));
                        }
                    }
                    let r = ev.run();
                    // Closing the snapshot channel lets the writer finish the final snapshot.
                    drop(ev);
                    let w = snap_writer.join();
                    match (r, w) {
                        (Err(e), _) => Err(e),
                        (Ok(_), Err(_)) => Err(ServerError("snapshot writer panicked".into())),
                        (Ok(_), Ok(Err(e))) => Err(e),
                        (Ok(h), Ok(Ok(()))) => Ok(h),
                    }
                })
                .map_err(|e| ServerError(e.to_string()))?
        };
        Ok(Server {
            addr,
            recovered,
            counters,
            stop,
            waker,
            main: Some(main),
            md,
            #[cfg(feature = "http")]
            http,
            #[cfg(feature = "store")]
            store,
        })
    }

    /// Where the REST API is served, if it is.
    #[cfg(feature = "http")]
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().map(|h| h.addr)
    }

    /// The REST API's connection counts (open, accepted, refused), if it is served.
    #[cfg(feature = "http")]
    pub fn http_connections(&self) -> Option<Arc<http_gateway::serve::ConnCounters>> {
        self.http.as_ref().map(|h| h.conns.clone())
    }

    /// Where market data is served, if it is.
    pub fn market_data_addr(&self) -> Option<SocketAddr> {
        self.md.as_ref().map(|m| m.addr)
    }

    /// The market-data publisher's counters, if it runs.
    pub fn market_data_counters(&self) -> Option<Arc<MdCounters>> {
        self.md.as_ref().map(|m| m.counters.clone())
    }

    /// The trade store's counters, if it runs.
    #[cfg(feature = "store")]
    pub fn store_counters(&self) -> Option<Arc<crate::store::StoreCounters>> {
        self.store.as_ref().map(|s| s.counters.clone())
    }

    /// True once the server is stopping (a signal, `shutdown`, or a fatal journal error).
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Clean stop: a Shutdown record (Logout to every session), drain, final snapshot. Returns
    /// the final state hash.
    pub fn shutdown(mut self) -> Result<u64, ServerError> {
        #[cfg(feature = "http")]
        if let Some(h) = &self.http {
            h.stopping();
        }
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
        let r = match self.main.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            _ => Err(ServerError("event loop thread panicked".into())),
        };
        #[cfg(feature = "http")]
        if let Some(h) = self.http.take() {
            h.join();
        }
        let m = self.md.take().map_or(Ok(()), MdPublisher::join);
        // After the loop: the store writes up to its last record, then ends.
        #[cfg(feature = "store")]
        if let Some(s) = self.store.take() {
            s.join();
        }
        let h = r?;
        m?;
        Ok(h)
    }
}

/// The start-up side of config `cpu`: the calling thread runs on the other CPUs while the
/// server starts its threads (they inherit its mask); dropping it gives the caller its own
/// mask back.
pub(crate) struct Placement {
    cpu: usize,
    others: Vec<usize>,
    restore: Vec<usize>,
}

impl Placement {
    fn enter(cpu: usize) -> Result<Placement, ServerError> {
        let allowed = sched_idle::allowed_cpus()
            .map_err(|e| ServerError(format!("cpu = {cpu}: cannot read the CPU affinity: {e}")))?;
        if !allowed.contains(&cpu) {
            return Err(ServerError(format!(
                "cpu = {cpu}: this process may only run on CPUs {allowed:?}"
            )));
        }
        let others = sched_idle::others(&allowed, cpu);
        sched_idle::pin(&others)
            .map_err(|e| ServerError(format!("cannot move threads to CPUs {others:?}: {e}")))?;
        Ok(Placement {
            cpu,
            others,
            restore: allowed,
        })
    }
}

impl Drop for Placement {
    fn drop(&mut self) {
        let _ = sched_idle::pin(&self.restore);
    }
}

/// Sets the stop flag when the loop ends, however it ends (return, error or panic), so
/// `serve_until_signal` notices and winds down instead of waiting forever.
struct StopOnExit(Arc<AtomicBool>, Arc<Waker>);

impl Drop for StopOnExit {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
        let _ = self.1.wake();
    }
}

/// Where `rialto serve` keeps the configuration text a data directory was last served with,
/// so `journal verify`/`dump` replay with the same instruments and sessions.
pub fn config_copy_path(data_dir: &Path) -> PathBuf {
    data_dir.join("rialto.toml")
}

/// `rialto serve`: starts the server, prints where it listens, runs until SIGINT or SIGTERM,
/// then stops cleanly (Logout to every session, drain, final snapshot). `config_text` is the
/// TOML the config was read from (kept next to the journal for `journal verify`/`dump`).
pub fn serve_until_signal(cfg: Config, config_text: Option<&str>) -> Result<u64, ServerError> {
    serve_with_until_signal(cfg, config_text, None)
}

/// `serve_until_signal` for a gateway of the cluster (`Server::start_gateway`).
pub fn serve_gateway_until_signal(
    cfg: Config,
    config_text: Option<&str>,
    link: crate::event_loop::StartGateway,
) -> Result<u64, ServerError> {
    serve_with_until_signal(cfg, config_text, Some(link))
}

fn serve_with_until_signal(
    cfg: Config,
    config_text: Option<&str>,
    link: Option<crate::event_loop::StartGateway>,
) -> Result<u64, ServerError> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let signalled = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register(sig, signalled.clone())
            .map_err(|e| ServerError(format!("cannot install signal handler: {e}")))?;
    }
    std::fs::create_dir_all(&cfg.data_dir).map_err(|e| {
        ServerError(format!(
            "cannot create data dir {}: {e}",
            cfg.data_dir.display()
        ))
    })?;
    let copy = config_copy_path(&cfg.data_dir);
    match config_text {
        Some(text) => std::fs::write(&copy, text)
            .map_err(|e| ServerError(format!("{}: {e}", copy.display())))?,
        None => {
            let _ = std::fs::remove_file(&copy);
        }
    }
    // Never panic on a closed stdout (a parent that stopped reading): the log is advisory.
    let log: Logger = Arc::new(|m: &str| {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "rialto: {m}");
        let _ = out.flush();
    });
    let summary = describe(&cfg);
    #[cfg(feature = "http")]
    let keys = cfg.api_keys.len();
    let durability = cfg.durability;
    let data_dir = cfg.data_dir.clone();
    let loop_cpu = cfg.cpu;
    let server = Server::start_with(cfg, log.clone(), link)?;
    if let Some(cpu) = loop_cpu {
        // This thread only waits for the signal; it too stays off the loop's CPU.
        if let Ok(allowed) = sched_idle::allowed_cpus() {
            let _ = sched_idle::pin(&sched_idle::others(&allowed, cpu));
        }
    }
    log(&format!(
        "listening for FIX on {} ({summary}); data in {}, durability {}; Ctrl-C to stop",
        server.addr,
        data_dir.display(),
        durability.as_str()
    ));
    if let Some(md) = server.market_data_addr() {
        log(&format!("listening for market data on {md} (FIX; the same sessions, a session of their own here)"));
    }
    #[cfg(feature = "http")]
    if let Some(h) = server.http_addr() {
        log(&format!(
            "listening for HTTP on {h} (REST: http://{h}/api/v1/; {} API key(s))",
            keys
        ));
    }
    while !signalled.load(Ordering::SeqCst) && !server.stopping() {
        std::thread::park_timeout(Duration::from_millis(100));
    }
    log("stopping: Logout to sessions, draining, final snapshot");
    let hash = server.shutdown()?;
    log(&format!(
        "stopped; state hash {hash:016x}; journal in {}",
        data_dir.join("journal").display()
    ));
    Ok(hash)
}

/// One line naming the CompIDs and instruments of a config.
pub fn describe(cfg: &Config) -> String {
    let targets: std::collections::BTreeSet<&str> = cfg
        .sessions
        .iter()
        .map(|s| s.target_comp_id.as_str())
        .collect();
    let names: Vec<&str> = cfg
        .sessions
        .iter()
        .map(|s| s.sender_comp_id.as_str())
        .collect();
    let shown = if names.len() > 12 {
        format!(
            "{} .. {} ({} sessions)",
            names[..9].join(" "),
            names[names.len() - 1],
            names.len()
        )
    } else {
        names.join(" ")
    };
    let symbols: Vec<&str> = cfg
        .instruments
        .iter()
        .map(|i| i.instrument.symbol.as_str())
        .collect();
    let tls = match &cfg.tls {
        None => "",
        Some(t) if t.client_ca_file.is_some() => "; TLS only, client certificates required",
        Some(_) => "; TLS only",
    };
    format!(
        "TargetCompID {}; SenderCompIDs {shown}; instruments {}{tls}",
        targets.into_iter().collect::<Vec<_>>().join(","),
        symbols.join(" ")
    )
}

#[cfg(test)]
mod tests;
