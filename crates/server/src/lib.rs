//! Rialto's exchange server (`rialto serve`): FIX order entry over TCP, a sequencer that
//! journals every input before its effects are released, the matching engine, execution
//! reports, snapshots and recovery.
//!
//! Role: glue the pieces into one process that loses nothing. Data flow, all on one event-loop
//! thread, one batch per loop iteration: socket bytes -> `wire` (framing, checksum) ->
//! `adapter::FixAdapter` (fields -> `record::Input`, exact decimal -> tick conversion, static
//! checks) -> sequencer (seq + timestamp) -> `journal` (group commit) -> `exchange::Exchange`
//! (FIX session layer, ClOrdID mapping, engine) -> `Outbox` -> sockets. A snapshot thread keeps
//! a replica (restored at start, brought forward from the journal) and writes snapshots. See
//! `server` for the threads.
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
//! mode (`process`: write(2) returned; `fsync`: fdatasync returned); drops an input silently
//! (over the per-iteration budget, orders are rejected with "exchange busy" and counted); lets
//! a malformed message stop a session or the process; lets anyone but an order's own session
//! (hence firm) cancel or replace it.
//!
//! Limits (each bounded, each rejecting or forgetting explicitly): application messages per
//! loop iteration `min(batch_budget, inbound_queue_capacity / 2)` (beyond it "exchange busy"),
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
pub mod recovery;
pub mod server;
pub mod tools;
pub mod wire;

pub use config::{Config, Durability, Idle};
pub use server::{recover, serve_until_signal, Server, ServerError};

/// Fuzz body (`fuzz/fuzz_targets/gateway_resolve.rs`): arbitrary bytes as a flow of journal
/// records, replayed with and without the ClOrdID answers of `exchange::resolve`; every
/// record's output and the final state must be the same.
pub fn fuzz_resolve(bytes: &[u8]) {
    exchange::fuzz_resolve(bytes);
}

/// Fuzz body (`fuzz/fuzz_targets/journal_input.rs`): arbitrary bytes as a journal record's
/// payload. Decoding never panics; what decodes re-encodes to an equal value, decodes in place
/// over any other input to the same value, and applies to an exchange (after a logon, so that
/// session messages reach a session) without a panic.
pub fn fuzz_input(bytes: &[u8]) {
    use record::Input;
    use std::sync::{Arc, OnceLock};
    static CFG: OnceLock<Arc<Config>> = OnceLock::new();
    let cfg = CFG.get_or_init(|| Arc::new(Config::defaults()));
    let Ok(input) = Input::decode(bytes) else {
        return;
    };
    // (The bytes need not be the canonical encoding: e.g. a price field a message kind
    // ignores; the value must round-trip.)
    let mut enc = Vec::new();
    input.encode(&mut enc);
    assert_eq!(
        Input::decode(&enc).as_ref(),
        Ok(&input),
        "journal encoding round-trips"
    );
    for prev in [
        Input::Tick,
        Input::Checkpoint(record::Checkpoint::default()),
        Input::Fix {
            conn: 1,
            seq: 1,
            poss_dup: false,
            msg: record::FixMsg::Cancel {
                cl_ord_id: "a".into(),
                orig_cl_ord_id: "b".into(),
            },
        },
    ] {
        let mut slot = prev;
        slot.decode_into(bytes)
            .expect("decodes in place as it decodes");
        assert_eq!(slot, input);
    }
    // Lazy: a resident exchange faults its 106 MB of tables in when made, which held each
    // fuzz input to tens of milliseconds (about 70 inputs a second).
    let mut x = exchange::Exchange::with_backing(cfg.clone(), exchange::Backing::Lazy);
    let mut out = exchange::Outbox::default();
    let logon = Input::Fix {
        conn: 1,
        seq: 1,
        poss_dup: false,
        msg: record::FixMsg::Logon {
            sender: "CLIENT1".into(),
            target: "RIALTO".into(),
            begin_string: "FIX.4.4".into(),
            heartbeat_secs: 30,
            reset: false,
            password: String::new(),
        },
    };
    x.apply(1, 1_700_000_000_000_000_000, &logon, &mut out);
    x.apply(2, 1_700_000_000_000_000_001, &input, &mut out);
}

/// Fuzz entry for the parsing path of the network thread: `bytes` are framed (`wire`), parsed
/// into fields and converted by `adapter::FixAdapter`, raw and also as the body of one correctly
/// framed FIX 4.4 message, on a connection logged on as `CLIENT1`. Every `Input` must survive
/// its journal encoding unchanged, is applied to a fresh `exchange::Exchange`, and everything
/// the exchange sends back must be one well-framed message (or a bare close). Panics only on a
/// broken invariant.
pub fn fuzz_adapt(bytes: &[u8]) {
    use std::sync::{Arc, OnceLock};
    use wire::{next_frame, Fields, Frame, MsgWriter};
    static SHARED: OnceLock<(Arc<Config>, adapter::FixAdapter)> = OnceLock::new();
    let (cfg, adapter) = SHARED.get_or_init(|| {
        let cfg = Arc::new(Config::defaults());
        (cfg.clone(), adapter::FixAdapter::new(cfg))
    });
    struct Harness<'a> {
        adapter: &'a adapter::FixAdapter,
        x: exchange::Exchange,
        out: exchange::Outbox,
        fields: Fields,
        ids: Option<adapter::ConnIds>,
        seq: u64,
    }
    impl Harness<'_> {
        fn feed(&mut self, buf: &[u8]) {
            let mut pos = 0;
            while let Some(frame) = next_frame(&buf[pos..]) {
                let len = match frame {
                    Frame::Garbled { len, .. } => len.max(1),
                    Frame::Message { len } => {
                        self.message(&buf[pos..pos + len]);
                        len
                    }
                };
                pos += len;
                if pos >= buf.len() {
                    break;
                }
            }
        }
        fn message(&mut self, msg: &[u8]) {
            self.out.clear();
            if self.fields.parse(msg).is_err() {
                return;
            }
            let input = self.adapter.to_input(1, &mut self.ids, msg, &self.fields);
            let mut enc = Vec::new();
            input.encode(&mut enc);
            let back = record::Input::decode(&enc).expect("journal encoding decodes");
            let mut again = Vec::new();
            back.encode(&mut again);
            assert_eq!(enc, again, "journal encoding round-trips");
            self.seq += 1;
            let ts = 1_700_000_000_000_000_000 + self.seq;
            self.x.apply(self.seq, ts, &back, &mut self.out);
            for item in &self.out.items {
                let sent = &self.out.buf[item.start..item.end];
                match next_frame(sent) {
                    _ if sent.is_empty() && item.close => {}
                    Some(Frame::Message { len }) if len == sent.len() => {}
                    other => panic!("exchange sent a bad frame ({other:?}): {sent:?}"),
                }
            }
        }
    }
    let mut h = Harness {
        adapter,
        // Lazy, as in `fuzz_input`: a fresh exchange per input that faults in only what it
        // touches.
        x: exchange::Exchange::with_backing(cfg.clone(), exchange::Backing::Lazy),
        out: exchange::Outbox::default(),
        fields: Fields::new(),
        ids: None,
        seq: 0,
    };
    let mut logon = Vec::new();
    MsgWriter::new()
        .str(35, "A")
        .str(49, "CLIENT1")
        .str(56, "RIALTO")
        .u64(34, 1)
        .str(52, "20231114-22:13:20.000")
        .str(98, "0")
        .str(108, "30")
        .finish("FIX.4.4", &mut logon);
    h.feed(&logon);
    assert!(
        h.out
            .items
            .first()
            .is_some_and(|i| !i.close && i.end > i.start),
        "the harness's Logon is answered"
    );
    h.feed(bytes);
    let mut framed = Vec::new();
    MsgWriter::new().raw(bytes).finish("FIX.4.4", &mut framed);
    h.feed(&framed);
}
