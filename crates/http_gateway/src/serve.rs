//! The accept loop of the HTTP side: hyper connections over tokio with the limits a public
//! endpoint needs against slow or hostile clients.
//!
//! Role: accept connections up to `Limits::connections_max` in total and
//! `Limits::per_address_max` from one address (beyond either, the connection is closed at
//! once, counted); serve each with hyper's HTTP/1.1 (upgrades allowed, for WebSocket), whose
//! header read timeout closes a client that sends its request head too slowly (a slowloris)
//! or stays idle between requests longer than `Limits::header_timeout`. With a TLS
//! configuration every connection speaks TLS (rustls, through tokio-rustls), its handshake
//! bounded by the same timeout.
//!
//! Never: lets one address take every connection; keeps a connection that sends nothing.

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;

pub use crate::config::Limits;

/// What the accept loop counts (read by `/metrics` and the tests).
#[derive(Debug, Default)]
pub struct ConnCounters {
    pub open: AtomicU64,
    pub accepted: AtomicU64,
    /// Closed at once: over the total or the per-address bound.
    pub refused: AtomicU64,
}

/// One address's open connections; the count goes down when the connection ends.
struct Slot {
    addr: IpAddr,
    per: Arc<Mutex<HashMap<IpAddr, usize>>>,
    counters: Arc<ConnCounters>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut per = self.per.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = per.get_mut(&self.addr) {
            *n -= 1;
            if *n == 0 {
                per.remove(&self.addr);
            }
        }
        self.counters.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Serves `router` on `listener` (over TLS with `tls`) until `stop` resolves (then stops
/// accepting; connections in flight end on their own).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    counters: Arc<ConnCounters>,
    tls: Option<Arc<rustls::ServerConfig>>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    let per: Arc<Mutex<HashMap<IpAddr, usize>>> = Arc::default();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let builder = Arc::new(builder.http1_only());
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut stop => return,
            r = listener.accept() => match r {
                Ok(c) => c,
                // Out of descriptors or a connection reset before accept: go on.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        counters.accepted.fetch_add(1, Ordering::Relaxed);
        let addr = peer.ip();
        let admitted = {
            let mut p = per.lock().unwrap_or_else(|e| e.into_inner());
            let mine = p.get(&addr).copied().unwrap_or(0);
            let total = counters.open.load(Ordering::Relaxed) as usize;
            if total >= limits.connections_max || mine >= limits.per_address_max {
                false
            } else {
                *p.entry(addr).or_default() += 1;
                counters.open.fetch_add(1, Ordering::Relaxed);
                true
            }
        };
        if !admitted {
            counters.refused.fetch_add(1, Ordering::Relaxed);
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let slot = Slot {
            addr,
            per: per.clone(),
            counters: counters.clone(),
        };
        let service = TowerToHyperService::new(router.clone());
        let builder = builder.clone();
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let _slot = slot;
            match acceptor {
                None => {
                    let _ = builder
                        .serve_connection_with_upgrades(TokioIo::new(stream), service)
                        .await;
                }
                Some(a) => {
                    let Ok(Ok(tls)) =
                        tokio::time::timeout(limits.header_timeout, a.accept(stream)).await
                    else {
                        return;
                    };
                    let _ = builder
                        .serve_connection_with_upgrades(TokioIo::new(tls), service)
                        .await;
                }
            }
        });
    }
}
