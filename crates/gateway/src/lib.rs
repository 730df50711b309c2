//! Rialto's exchange server (`rialto serve`): FIX order entry over TCP, a sequencer that
//! journals every input before its effects are released, the matching engine, execution
//! reports, snapshots and recovery.
//!
//! Role: glue the pieces into one process that loses nothing. Data flow:
//! socket bytes -> `wire` (framing, checksum) -> `adapter::FixAdapter` (fields -> `record::Input`,
//! exact decimal -> tick conversion, static checks) -> bounded queue -> core thread:
//! sequencer (seq + timestamp) -> `journal` (group commit) -> `exchange::Exchange` (FIX session
//! layer, ClOrdID mapping, engine) -> `Outbox` -> network thread -> sockets. See `server` for
//! the threads and queues.
//!
//! What the journal holds, and why that is enough: every input of the `Exchange` state machine
//! (each FIX message as parsed, connection closes, timer ticks, start and clean stop), and
//! nothing else. The exchange is deterministic in its inputs and their timestamps, so replay
//! rebuilds the engine, the ClOrdID <-> order id mapping, ClOrdID uniqueness per session, each
//! session's inbound and outbound MsgSeqNum and the outbound message store that serves
//! ResendRequest: outbound messages are **regenerated** by replay, byte for byte (SendingTime
//! comes from the record's timestamp, ExecID from its sequence number), not journaled.
//! Engine order ids are assigned in journal order (monotonic), so no FIX input can create a
//! duplicate id. A snapshot is the complete state after record `n` (gateway state + engine
//! snapshot); start = newest valid snapshot + replay of the tail, and its state hash equals
//! that of a full replay from record 1.
//!
//! Never: releases a message caused by an input before that input is durable in the configured
//! mode (`process`: write(2) returned; `fsync`: fdatasync returned); blocks the network thread
//! on the core; drops an input silently (over the queue limit, orders are rejected with
//! "exchange busy" and counted); lets a malformed message stop a session or the process; lets
//! anyone but an order's own session (hence firm) cancel or replace it.
//!
//! Limits (each bounded, each rejecting or forgetting explicitly): inbound queue
//! `inbound_queue_capacity` (half for application messages; beyond it "exchange busy"),
//! message size 8 KiB, 256 fields, ClOrdID/Text 64 bytes, `resend_store_max` stored outbound
//! application messages per session (older ones are gap-filled on ResendRequest), ClOrdIDs of
//! live orders plus the last 1M others remembered for uniqueness, the last 64K finished orders
//! answer OrderStatusRequest, 64 MiB unsent output per connection (then it is closed as a slow
//! consumer), `orders_max` resting orders in the engine.
//!
//! Sessions: the default config has `CLIENT1`..`CLIENT9` (accounts 1..9) for people and tests,
//! and `BOT1`..`BOT64` (accounts 101..164) for `rialto bench` and `rialto demo`, each its own
//! firm, no password, TargetCompID `RIALTO`, FIX 4.4.
#![forbid(unsafe_code)]

pub mod adapter;
pub mod client;
pub mod config;
pub mod exchange;
pub mod record;
pub mod server;
pub mod tools;
pub mod wire;

pub use config::{Config, Durability};
pub use server::{recover, serve_until_signal, Server, ServerError};
