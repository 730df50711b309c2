//! Rialto's FIX edge: FIX messages to exchange inputs, and exchange outputs to FIX messages.
//!
//! Role: everything between the `fix` crate (codec and session layer) and the protocol-neutral
//! `exchange`. On the event loop, before the journal, `FixAdapter` reads each framed message
//! into a `FixInput` (the journaled form: connection, header, typed message). After the
//! journal, `FixEdge` applies each one through the sessions (`fix::Session`: sequence numbers,
//! gaps, resend store, heartbeats, logout), hands the application messages they deliver to the
//! exchange with the session's principal, and turns the exchange's outputs into
//! ExecutionReports, OrderCancelRejects, OrderMassCancelReports and BusinessMessageRejects on
//! the sessions of the orders' owners, in each session's FIX version. Its state is rebuilt
//! exactly by replaying the journal; its snapshot is part of the server's. `md::MdEdge` is the
//! market-data side: sessions of their own (in memory, not journaled), subscriptions, and the
//! feed's entries as W and X, for the server's market-data publisher.
//!
//! Never: a business rule (who owns an order, whether a ClOrdID is fresh, how orders match:
//! the exchange), a socket, a clock, a file.
#![forbid(unsafe_code)]

mod adapter;
mod config;
mod edge;
pub mod md;
mod record;
mod store;

pub use adapter::{echo_of, ConnIds, FixAdapter};
pub use config::{FixConfig, InstrumentDef, MarketDataAccess, SessionDef};
pub use edge::{
    cxl_rej_reason, ord_rej_reason, ord_status, DeferredResend, EdgeCheckpoint, EdgeStats, FixEdge,
    OutItem, Outbox, SessionMark, ToExchange,
};
pub use record::{AppMsg, Busy, BusyWhy, ConnId, FixInput, Invalid, InvalidKind};
pub use store::Store;
