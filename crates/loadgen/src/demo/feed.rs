//! The demo's own market-data subscriber (`MD64`), read on a thread of its own.
//!
//! Role: the top of book and last trade the demo shows come from the exchange's feed. The
//! feed brings about half a message per order; read on the traders' thread once a second, it
//! would be a burst of 1-2 ms in which no trader sends, a tail of the demo's latency that no
//! client of the exchange would see. Here a thread at `SCHED_IDLE` (it runs only when nothing
//! else wants the core, so it never delays the traders or the exchange) reads the feed every
//! `PUMP_EVERY` and keeps the rows the display prints; the display takes the latest.
//!
//! Never: blocks the display beyond copying a few lines under the lock; outlives `stop`.

use crate::md::{px, MdClient};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the thread reads the feed: 50 times a second keeps each read small.
const PUMP_EVERY: Duration = Duration::from_millis(20);

/// What the feed shows so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum FeedRows {
    /// Before the first snapshots.
    #[default]
    Waiting,
    /// One line per instrument: name, best bid, best ask, last trade.
    Rows(Vec<String>),
    /// The subscriber stopped: why.
    Lost(String),
}

/// The subscriber's thread and what it shares.
pub struct FeedWatch {
    rows: Arc<Mutex<FeedRows>>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl FeedWatch {
    /// Reads `client` (logged on and subscribed to `symbols`) on a thread of its own.
    pub fn start(mut client: MdClient, symbols: Vec<String>) -> Result<FeedWatch, String> {
        let rows = Arc::new(Mutex::new(FeedRows::Waiting));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (rows.clone(), stop.clone());
        let handle = std::thread::Builder::new()
            .name("demo-feed".into())
            .spawn(move || {
                // Best effort: at the normal priority it still works, only less politely.
                let _ = sched_idle::enter();
                while !s.load(Ordering::Relaxed) {
                    std::thread::sleep(PUMP_EVERY);
                    let now = match client.pump() {
                        Err(e) => FeedRows::Lost(e.to_string()),
                        Ok(_) if !client.synced() => continue,
                        Ok(_) => FeedRows::Rows(rows_of(&client, &symbols)),
                    };
                    let lost = matches!(now, FeedRows::Lost(_));
                    if let Ok(mut shared) = r.lock() {
                        *shared = now;
                    }
                    if lost {
                        return;
                    }
                }
            })
            .map_err(|e| format!("cannot start the market-data reader: {e}"))?;
        Ok(FeedWatch {
            rows,
            stop,
            handle: Some(handle),
        })
    }

    /// The latest rows.
    pub fn rows(&self) -> FeedRows {
        self.rows.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for FeedWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Top of book and last trade per instrument as `c`'s view has them.
fn rows_of(c: &MdClient, symbols: &[String]) -> Vec<String> {
    symbols
        .iter()
        .map(|name| {
            let v = c.view.symbols.get(name.as_bytes());
            let best = |bid: bool| {
                let l = v.and_then(|v| {
                    if bid {
                        v.bids.iter().next_back()
                    } else {
                        v.asks.iter().next()
                    }
                });
                match (l, bid) {
                    (None, _) => "-".to_string(),
                    (Some((p, l)), true) => format!("{} @ {}", l.size, px(*p)),
                    (Some((p, l)), false) => format!("{} @ {}", px(*p), l.size),
                }
            };
            let last = v
                .and_then(|v| v.trades.back())
                .map_or("-".to_string(), |t| format!("{} x {}", px(t.price), t.size));
            format!("{name:<6} {:>16} | {:<16} {last}", best(true), best(false))
        })
        .collect()
}
