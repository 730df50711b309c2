//! Starts and stops the REST API (`http_gateway`) for `Server`: binds its address, runs its
//! routes on a tokio runtime on a thread of its own (`http`), and hands the event loop the
//! other end of the request queue. The routes, parsing and answers are `http_gateway`'s; the
//! WebSocket endpoint's updates come from the market-data thread (`market_data`).

use crate::config::{Config, HTTP_PORT_DEFAULT};
use crate::counters::Logger;
use crate::error::ServerError;
use http_gateway::http::{ApiQueue, HttpConfig, Shared};
use http_gateway::market::MarketView;
use mio::Waker;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The running HTTP side.
pub(crate) struct HttpServer {
    pub(crate) addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Binds the configured address (the default one falls back to an ephemeral port when
    /// taken) and starts serving; `waker` wakes the event loop for each request.
    pub(crate) fn start(
        cfg: &Config,
        market: Arc<MarketView>,
        waker: Arc<Waker>,
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
        let http = HttpConfig {
            body_max: settings.body_max,
            queue_max: settings.queue_max,
            ..HttpConfig::default()
        };
        let wake: Box<dyn Fn() + Send + Sync> = Box::new(move || {
            let _ = waker.wake();
        });
        let (shared, queue) = Shared::new(Arc::new(cfg.api_config()), &http, market, wake);
        let router = http_gateway::http::router(shared.clone(), &http);
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
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
                let r = rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener)?;
                    http_gateway::http::serve(listener, router, async move {
                        let _ = stop_rx.await;
                    })
                    .await
                });
                if let Err(e) = r {
                    log(&format!("HTTP stops: {e}"));
                }
            })
            .map_err(|e| ServerError(e.to_string()))?;
        Ok(Some((
            HttpServer {
                addr,
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
