//! The demo's REST traders: two API keys that quote passively over the REST API, beside the
//! FIX makers and takers, on a thread of their own.
//!
//! Role: show the REST edge trading on the same exchange. Each trader keeps one GTC limit
//! order per instrument and side; at each turn it reads the instrument's ticker and places,
//! moves (PATCH) or now and then cancels (DELETE) its order there, `AWAY_MIN_TICKS` or more
//! beyond the touch (below the best bid for a buy, above the best ask for a sell). Its
//! orders never cross: they rest behind the makers' quotes, which the takers' small orders
//! never exhaust, and move with the touch at every turn, so they never trade either and the
//! FIX traders' view of their own fills (`floor`) stays exact. A trader quotes an instrument
//! only once its ticker shows both sides (the makers have quoted).
//!
//! They send only requests the exchange accepts (a replace asks for more than is filled, a
//! cancel or replace names an order that is open); any refusal is counted and described in
//! the demo's summary as a reject, which the demo's test asserts never happens.
//!
//! Never: binds anything, or talks to anything but the REST address it is given.

use crate::http::{Answer, HttpConn};
use crate::mix::Market;
use bytes::Bytes;
use hyper::Method;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use types::SplitMix64;

/// The nearest a quote comes to the touch, in ticks, and the spread of distances beyond.
const AWAY_MIN_TICKS: i64 = 15;
const AWAY_SPREAD_TICKS: u64 = 10;
/// Every this many turns at one order, it is canceled instead of moved.
const CANCEL_EVERY: u64 = 5;
/// Problems (rejects, errors) described in the summary at most.
const PROBLEMS_MAX: usize = 8;

/// Where the REST traders trade and how much.
#[derive(Clone, Debug)]
pub struct RestConfig {
    /// The REST API's address.
    pub addr: SocketAddr,
    /// One API token per trader.
    pub tokens: Vec<String>,
    /// Order requests (new, replace, cancel) per second over all of them; each also reads a
    /// ticker per turn.
    pub rate: u64,
    pub seed: u64,
}

/// What the REST traders did, counted as they go (read by the live display).
#[derive(Debug, Default)]
pub struct RestCounts {
    pub new: AtomicU64,
    pub replace: AtomicU64,
    pub cancel: AtomicU64,
    pub ticker: AtomicU64,
    pub rejects: AtomicU64,
    pub shed: AtomicU64,
    pub errors: AtomicU64,
    problems: Mutex<Vec<String>>,
}

impl RestCounts {
    /// Order requests sent.
    pub fn orders(&self) -> u64 {
        self.new.load(Relaxed) + self.replace.load(Relaxed) + self.cancel.load(Relaxed)
    }

    fn problem(&self, p: String) {
        let mut v = self.problems.lock().unwrap_or_else(|e| e.into_inner());
        if v.len() < PROBLEMS_MAX {
            v.push(p);
        }
    }

    /// The first few rejects and errors, described.
    pub fn problems(&self) -> Vec<String> {
        self.problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The summary line: `REST traders (N API keys): orders sent N (new N, replace N, cancel
    /// N), ticker reads N, rejects N, shed N, errors N`.
    pub fn summary(&self, keys: usize) -> String {
        format!(
            "REST traders ({keys} API keys): orders sent {} (new {}, replace {}, cancel {}), ticker reads {}, rejects {}, shed {}, errors {}",
            self.orders(),
            self.new.load(Relaxed),
            self.replace.load(Relaxed),
            self.cancel.load(Relaxed),
            self.ticker.load(Relaxed),
            self.rejects.load(Relaxed),
            self.shed.load(Relaxed),
            self.errors.load(Relaxed)
        )
    }
}

/// The running traders.
pub struct RestTraders {
    thread: Option<std::thread::JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    pub counts: Arc<RestCounts>,
    pub keys: usize,
}

impl RestTraders {
    /// Starts the traders' thread (one current-thread runtime, a task per trader).
    pub fn start(cfg: RestConfig, market: Market) -> Result<RestTraders, String> {
        if cfg.tokens.is_empty() || cfg.rate == 0 {
            return Err("the REST traders need an API token each and a rate".into());
        }
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(RestCounts::default());
        let keys = cfg.tokens.len();
        let (s, c) = (stop.clone(), counts.clone());
        let thread = std::thread::Builder::new()
            .name("rest-traders".into())
            .spawn(move || run(cfg, market, s, c))
            .map_err(|e| format!("cannot start the REST traders: {e}"))?;
        Ok(RestTraders {
            thread: Some(thread),
            stop,
            counts,
            keys,
        })
    }

    /// Stops the traders (each cancels its orders) and waits for them.
    pub fn stop(mut self) -> Arc<RestCounts> {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                self.counts.errors.fetch_add(1, Relaxed);
                self.counts
                    .problem("the REST traders' thread panicked".into());
            }
        }
        self.counts.clone()
    }
}

impl Drop for RestTraders {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(cfg: RestConfig, market: Market, stop: Arc<AtomicBool>, counts: Arc<RestCounts>) {
    let rt = match crate::http::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            counts.errors.fetch_add(1, Relaxed);
            return counts.problem(e);
        }
    };
    let n = cfg.tokens.len() as u64;
    // Each trader's turns: its share of the rate.
    let period = Duration::from_nanos((n * 1_000_000_000 / cfg.rate.max(1)).max(1_000_000));
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let mut set = tokio::task::JoinSet::new();
        for (i, token) in cfg.tokens.iter().enumerate() {
            let trader = Trader {
                rng: SplitMix64::new(cfg.seed.wrapping_mul(7919).wrapping_add(i as u64)),
                market: market.clone(),
                quotes: vec![None; market.symbols.len() * 2],
                turns: vec![0; market.symbols.len() * 2],
                cursor: i,
                counts: counts.clone(),
            };
            let (addr, token, stop) = (cfg.addr, token.clone(), stop.clone());
            set.spawn_local(async move { trader.trade(addr, token, period, stop).await });
        }
        while set.join_next().await.is_some() {}
    });
}

/// One of this trader's orders.
#[derive(Clone, Copy, Debug)]
struct Quote {
    id: u64,
    filled: u64,
}

struct Trader {
    rng: SplitMix64,
    market: Market,
    /// Per (instrument, side): its open order there.
    quotes: Vec<Option<Quote>>,
    turns: Vec<u64>,
    cursor: usize,
    counts: Arc<RestCounts>,
}

#[derive(serde::Deserialize)]
struct Level {
    price: String,
}

#[derive(serde::Deserialize)]
struct Ticker {
    best_bid: Option<Level>,
    best_ask: Option<Level>,
}

#[derive(serde::Deserialize)]
struct OrderAnswer {
    order_id: u64,
    status: String,
    filled_quantity: String,
}

impl Trader {
    async fn trade(
        mut self,
        addr: SocketAddr,
        token: String,
        period: Duration,
        stop: Arc<AtomicBool>,
    ) {
        let mut conn = match HttpConn::connect(addr, Some(&token)).await {
            Ok(c) => c,
            Err(e) => {
                self.counts.errors.fetch_add(1, Relaxed);
                return self.counts.problem(e);
            }
        };
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        while !stop.load(Relaxed) {
            tick.tick().await;
            if let Err(e) = self.turn(&mut conn).await {
                self.counts.errors.fetch_add(1, Relaxed);
                self.counts.problem(e);
                return;
            }
        }
        // Leave nothing in the book.
        let _ = conn
            .request(
                Method::POST,
                "/api/v1/orders/cancel-all",
                Some(Bytes::from_static(b"{}")),
            )
            .await;
    }

    /// One turn: the ticker of the next (instrument, side), then a new order, a move or a
    /// cancel there.
    async fn turn(&mut self, conn: &mut HttpConn) -> Result<(), String> {
        let p = self.cursor % self.quotes.len();
        self.cursor += 1;
        let sym = &self.market.symbols[p / 2];
        let (name, decimals) = (sym.name.clone(), u32::from(sym.price_decimals));
        let buy = p.is_multiple_of(2);
        let a = conn
            .request(Method::GET, &format!("/api/v1/ticker/{name}"), None)
            .await?;
        self.counts.ticker.fetch_add(1, Relaxed);
        if a.status != 200 {
            self.refused("ticker", &a);
            return Ok(());
        }
        let t: Ticker =
            serde_json::from_slice(&a.body).map_err(|e| format!("ticker {name}: {e}"))?;
        let ticks = |l: &Option<Level>| {
            l.as_ref()
                .and_then(|l| types::decimal::parse_price(l.price.as_bytes(), decimals, 1).ok())
        };
        let (Some(bid), Some(ask)) = (ticks(&t.best_bid), ticks(&t.best_ask)) else {
            return Ok(());
        };
        let away = AWAY_MIN_TICKS + self.rng.below(AWAY_SPREAD_TICKS) as i64;
        let price = if buy { bid - away } else { ask + away };
        if price < 1 {
            return Ok(());
        }
        let price = crate::http_bench::price_text(price, decimals as u8);
        let leaves = 1 + self.rng.below(50);
        self.turns[p] += 1;
        let (what, a) = match self.quotes[p] {
            None => {
                self.counts.new.fetch_add(1, Relaxed);
                let side = if buy { "buy" } else { "sell" };
                let body = format!(
                    r#"{{"symbol":"{name}","side":"{side}","type":"limit","time_in_force":"gtc","price":"{price}","quantity":"{leaves}"}}"#
                );
                let a = conn
                    .request(Method::POST, "/api/v1/orders", Some(body.into()))
                    .await?;
                ("new order", a)
            }
            Some(q) if self.turns[p].is_multiple_of(CANCEL_EVERY) => {
                self.counts.cancel.fetch_add(1, Relaxed);
                let a = conn
                    .request(Method::DELETE, &format!("/api/v1/orders/{}", q.id), None)
                    .await?;
                if a.status == 200 {
                    self.quotes[p] = None;
                    return Ok(());
                }
                ("cancel", a)
            }
            Some(q) => {
                self.counts.replace.fetch_add(1, Relaxed);
                // The new total: what is filled plus the new remainder.
                let body = format!(
                    r#"{{"symbol":"{name}","price":"{price}","quantity":"{}"}}"#,
                    q.filled + leaves
                );
                let a = conn
                    .request(
                        Method::PATCH,
                        &format!("/api/v1/orders/{}", q.id),
                        Some(body.into()),
                    )
                    .await?;
                ("replace", a)
            }
        };
        if !(200..300).contains(&a.status) {
            if matches!(a.status, 404 | 409) {
                self.quotes[p] = None;
            }
            self.refused(what, &a);
            return Ok(());
        }
        let o: OrderAnswer =
            serde_json::from_slice(&a.body).map_err(|e| format!("{what} answer: {e}"))?;
        self.quotes[p] = matches!(o.status.as_str(), "new" | "partially_filled").then(|| Quote {
            id: o.order_id,
            filled: o.filled_quantity.parse().unwrap_or(0),
        });
        Ok(())
    }

    /// Counts a refused request: shed (429, 503), a reject (other 4xx) or an error.
    fn refused(&self, what: &str, a: &Answer) {
        let counter = match a.status {
            429 | 503 => &self.counts.shed,
            400..=499 => &self.counts.rejects,
            _ => &self.counts.errors,
        };
        counter.fetch_add(1, Relaxed);
        self.counts
            .problem(format!("{what}: {} {}", a.status, a.text()));
    }
}
