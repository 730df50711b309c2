//! The server's integration tests over real sockets on 127.0.0.1.
//!
//! One test binary for the crate's integration tests (each file a module; `nextest` runs
//! each test in a process of its own): one link instead of one per file.

mod abuse;
mod abuse_common;
mod abuse_connections;
mod abuse_firm_limit;
mod abuse_mass_cancel;
mod api_common;
mod api_doc;
mod auth;
mod common;
mod conformance;
mod dashboard;
mod dashboard_browser;
mod dialects;
mod http_abuse;
mod http_api;
mod http_history;
mod http_model;
mod malformed;
mod market_data;
mod orders2_fix;
mod orders2_http;
mod replay;
mod risk_admin;
mod server;
mod store;
mod tls;
mod ws_api;
