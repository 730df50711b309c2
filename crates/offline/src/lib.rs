//! The reusable pieces behind `rialto match` and the benchmarks: adapters between files and the
//! engine, kept apart from the server so that the fuzz targets build without it.
//!
//! Role: reading order streams (`orders_csv`) and instruments (`instruments_csv`) into
//! `types::Command`s, writing events as JSON lines (`json`), hashing event streams
//! (`event_hash`), generating seeded benchmark streams (`stream_gen`), and decoding fuzz bytes
//! into commands and checking them (`fuzzing`, shared by `fuzz/` and the regression tests). The `rialto` binary is glue over these.
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
