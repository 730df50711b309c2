//! The reusable pieces behind the `rialto` binary: adapters between files and the engine.
//!
//! Role: reading order streams (`orders_csv`) and instruments (`instruments_csv`) into
//! `types::Command`s, writing events as JSON lines (`json`), hashing event streams
//! (`event_hash`), generating seeded benchmark streams (`stream_gen`), and decoding fuzz bytes
//! into commands and checking them (`fuzzing`, shared by `fuzz/` and the regression tests). `main.rs` and `src/cmd/` are only glue over these.
//!
//! Never: matching logic (that is the engine's), panics on bad input (every reader returns an
//! error naming the line and field), floats in anything the engine sees.
#![forbid(unsafe_code)]

pub mod event_hash;
pub mod fuzzing;
pub mod instruments_csv;
pub mod json;
pub mod orders_csv;
pub mod stream_gen;
pub mod symbols;
