//! Rialto's HTTP edge: REST order entry and order queries for API keys, and public market
//! data, in JSON; beside the FIX edge (`fix_gateway`), on the same sequencer, journal and
//! exchange. No FIX here, and no exchange rule: the exchange decides, this edge translates.
//!
//! Two halves. The deterministic one runs in the event loop and in every replay: `record`
//! (`ApiInput`, a journaled request, and its encoding) and `edge` (`ApiEdge`: a request into
//! the exchange's inputs with the key's principal, the exchange's outputs into the JSON
//! answer, the answers kept by Idempotency-Key, order events). The live one runs on its own
//! thread: `http` (axum routes: authentication by API key, throttles, parsing with precise
//! errors, the bounded queue to the loop and the wait for the answer), `serve` (the accept
//! loop: connection bounds in total and per address, the header and idle timeouts),
//! `openapi` (the OpenAPI document of the routes), `metrics` (`/metrics`), `market` (the
//! public book and ticker, as the market-data replica last wrote them) and `history` (the
//! trades, fills and closed orders of the trade store, paged by keyset) and `ws` (the
//! WebSocket endpoint `/ws`: public `book`, `trades` and `ticker` channels per symbol, and a
//! key's private `orders` channel after `auth`, and the exchange's vital signs once a second
//! on `stats` (`stats`); updates published by the market-data replica
//! on bounded broadcast rings, book snapshots and deltas in the FIX feed's RptSeq space, slow
//! readers conflated or closed with 1008); `link` is the queue between the halves. The live
//! half is the `server` feature (default): a replay without it (the fuzz targets) needs no
//! HTTP stack. `keys` makes API keys. `admin` is the operator's endpoint (`/admin/v1/...`:
//! kill switches, instrument statuses and limits) and its answers. `web` serves the dashboard (`dashboard`'s embedded
//! files) at `/` and the benchmark runs it draws.
//!
//! Never: a float (prices and quantities are decimal strings, exact to the instrument's
//! units: `json`), a 500 for any input, a token kept anywhere (only its SHA-256).

pub mod admin;
pub mod config;
pub mod edge;
#[cfg(feature = "server")]
pub mod history;
#[cfg(feature = "server")]
pub mod http;
pub mod json;
pub mod keys;
pub mod link;
pub mod market;
#[cfg(feature = "server")]
pub mod metrics;
#[cfg(feature = "server")]
pub mod openapi;
pub mod record;
#[cfg(feature = "server")]
pub mod serve;
pub mod stats;
#[cfg(feature = "server")]
pub mod web;
pub mod ws;

pub use config::{ApiConfig, FirmRef, InstrumentDef, KeyDef, OperatorDef};
pub use edge::{ApiEdge, ApiOutbox};
pub use json::Answer;
pub use record::{ApiInput, ApiOp, Idem, OrderRef, ReqId};
