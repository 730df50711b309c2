//! The server's deterministic state machine: the exchange, its FIX edge and its API edge,
//! driven by journal records.
//!
//! Role: apply the next journal record (with its sequence number and timestamp) to the edge
//! it belongs to, which hands the exchange the inputs the record makes and turns its outputs
//! into messages in an `Outbox`. The event loop calls it after the record is durable; recovery
//! and every journal follower call it on the journal and throw the outbox away. Because it is
//! a pure function of the records, everything a restart must restore (every session's
//! numbers, queue and resend store, client order ids, order records, the books) is rebuilt by
//! replay: outbound messages are regenerated, never journaled.
//!
//! Never: reads a clock (time is the record's timestamp), touches a socket or a file.
//!
//! Invariants: records are applied in journal order, each exactly once; snapshot + replay of
//! the tail gives the same state hash as a replay from record 1.

use crate::config::Config;
use crate::record::{Checkpoint, Record};
use exchange::snap::hash_bytes;
use exchange::{
    Backing, ClHasher, ClHashes, ClHint, ClResolver, Exchange, Input, NoOutputs, Resolvable,
};
use fix::Inbound;
use fix_gateway::{AppMsg, FixConfig, FixEdge, Outbox, ToExchange};
use http_gateway::{ApiConfig, ApiEdge};
use std::sync::Arc;

/// Magic of a snapshot of this version.
const SNAP_MAGIC: &[u8; 8] = b"RIALTON4";

pub struct Node {
    pub exchange: Exchange,
    pub fix: FixEdge,
    /// The API keys' edge; its answers and order events are in `api.out` (when turned on:
    /// `ApiEdge::answers_on`, `events_on`).
    pub api: ApiEdge,
    last_seq: u64,
}

impl Node {
    /// An empty state, its large tables backed as `backing` says.
    pub fn new(cfg: &Config, backing: Backing) -> Node {
        let mut n = Node::with_configs(
            Arc::new(cfg.exchange_config()),
            Arc::new(cfg.fix_config()),
            Arc::new(cfg.api_config()),
            backing,
        );
        if let Some(r) = &cfg.remote {
            n.exchange = Exchange::remote(n.exchange.config().clone(), r.clone());
        }
        n
    }

    pub fn with_configs(
        xcfg: Arc<exchange::Config>,
        fcfg: Arc<FixConfig>,
        acfg: Arc<ApiConfig>,
        backing: Backing,
    ) -> Node {
        Node {
            exchange: Exchange::with_backing(xcfg, backing),
            fix: FixEdge::new(fcfg),
            api: ApiEdge::new(acfg),
            last_seq: 0,
        }
    }

    /// Sequence number of the last applied record (0 = none).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Recovery and followers: messages are numbered and stored exactly as live but never
    /// formatted (output only; never part of the state).
    pub fn set_replaying(&mut self, replaying: bool) {
        self.fix.replaying = replaying;
    }

    /// Applies journal record `seq` (stamped `ts_ns`). Records must come in sequence order.
    pub fn apply(&mut self, seq: u64, ts_ns: u64, r: &Record, out: &mut Outbox) {
        self.apply_hinted::<false>(seq, ts_ns, r, ClHashes::default(), None, out);
    }

    /// `apply` for a market-data replica: the engine also builds its level events, and the
    /// record's trades and level changes are left in `out.market`, in the engine's order.
    pub fn apply_market(&mut self, seq: u64, ts_ns: u64, r: &Record, out: &mut Outbox) {
        self.apply_hinted::<true>(seq, ts_ns, r, ClHashes::default(), None, out);
    }

    /// `apply` with the record's ClOrdID hashes computed ahead ([`record_hashes`] with
    /// `self.cl_hasher()`, or zeros). The outcome is exactly that of `apply`.
    #[inline]
    pub fn apply_prehashed(
        &mut self,
        seq: u64,
        ts_ns: u64,
        r: &Record,
        hashes: ClHashes,
        out: &mut Outbox,
    ) {
        self.apply_hinted::<false>(seq, ts_ns, r, hashes, None, out);
    }

    /// `apply_prehashed` with the resolver's hint for this record (`begin_resolving`). The
    /// outcome is exactly that of `apply`.
    #[inline]
    pub fn apply_resolved(
        &mut self,
        seq: u64,
        ts_ns: u64,
        r: &Record,
        hashes: ClHashes,
        hint: &ClHint,
        out: &mut Outbox,
    ) {
        self.apply_hinted::<false>(seq, ts_ns, r, hashes, Some(hint), out);
    }

    #[inline]
    fn apply_hinted<const MD: bool>(
        &mut self,
        seq: u64,
        ts: u64,
        r: &Record,
        hashes: ClHashes,
        hint: Option<&ClHint>,
        out: &mut Outbox,
    ) {
        assert!(
            seq > self.last_seq,
            "journal record {seq} applied after {}",
            self.last_seq
        );
        self.last_seq = seq;
        match r {
            Record::Fix(f) => {
                let x = ToExchange::new(&mut self.exchange, hashes, hint);
                self.fix.on_fix::<MD>(seq, ts, f, x, out);
            }
            Record::Startup => self.fix.on_startup::<MD>(seq, ts, &mut self.exchange, out),
            Record::Tick => self.fix.on_tick::<MD>(seq, ts, &mut self.exchange, out),
            Record::Shutdown => self.fix.on_shutdown::<MD>(seq, ts, &mut self.exchange, out),
            Record::Disconnected { conn } => {
                self.fix
                    .on_disconnected::<MD>(seq, ts, *conn, &mut self.exchange, out)
            }
            Record::Evict { conn, why } => {
                let text = why.text();
                self.fix
                    .on_evict::<MD>(seq, ts, *conn, text.as_bytes(), &mut self.exchange, out)
            }
            Record::Checkpoint(cp) => {
                self.exchange
                    .apply(seq, ts, &Input::Checkpoint(&cp.exchange), &mut NoOutputs);
                self.fix.on_checkpoint(seq, &cp.fix);
            }
            Record::Continue => self.fix.on_continue::<MD>(seq, ts, &mut self.exchange, out),
            Record::Outcome {
                shard,
                offset,
                payload,
            } => {
                // Checked when it was taken from the event log (`Outcome::decode`).
                if let Ok(o) = exchange::wire::Outcome::decode(payload) {
                    out.engine_ts_ns = Some(o.ts_ns);
                    let mut fix = self.fix.outputs::<MD>(seq, ts, out);
                    self.exchange
                        .apply_outcome(seq, *shard, *offset, &o, &mut fix);
                }
            }
            Record::Api(a) => {
                // The resolver of a full replay numbers only the FIX edge's requests.
                self.exchange.stop_resolving_here();
                let mut fix = self.fix.outputs::<MD>(seq, ts, out);
                self.api.on_api(seq, ts, a, &mut self.exchange, &mut fix);
            }
        }
        // What the FIX edge's inputs (or the end of the day, or a mass cancel's next step)
        // caused for API keys' orders.
        if !out.others.is_empty() {
            self.api.on_others(seq, ts, &out.others);
            out.others.clear();
        }
    }

    /// Whether the exchange has work left that `Record::Continue`s carry on (a mass cancel
    /// applied in chunks): the event loop journals one per iteration until this is false.
    pub fn has_pending_work(&self) -> bool {
        self.exchange.has_pending_work()
    }

    /// The FIX session whose pending work the next `Record::Continue` serves first (the
    /// requester of the oldest pending mass cancel), if any.
    pub fn pending_work_session(&self) -> Option<u16> {
        self.exchange.pending_work_originator()
    }

    /// The connection of `pending_work_session`, if it is connected: the event loop may hold
    /// back the next `Record::Continue` while that connection has much unsent output.
    pub fn pending_work_conn(&self) -> Option<fix_gateway::ConnId> {
        self.fix.conn_of_session(self.pending_work_session()?)
    }

    /// The hasher whose hashes `apply_prehashed` takes.
    pub fn cl_hasher(&self) -> ClHasher {
        self.exchange.cl_hasher()
    }

    /// A hint for a caller that knows the records ahead (the event loop, before the journal
    /// stage; recovery, a few records ahead): starts loading the ClOrdID index slots record
    /// `r` will look up. Changes nothing.
    #[inline]
    pub fn prefetch(&self, r: &Record, hashes: &ClHashes) {
        if let Some((who, cl, orig)) = self.order_ids(r) {
            self.exchange.prefetch(who, cl, orig, hashes);
        }
    }

    /// The second step of `prefetch`, a little later (after the journal commit): starts
    /// loading the remembered ClOrdID a cancel or replace will compare. Changes nothing.
    #[inline]
    pub fn prefetch_entries(&self, r: &Record, hashes: &ClHashes) {
        if let Some((who, _, Some(orig))) = self.order_ids(r) {
            self.exchange.prefetch_entries(who, orig, hashes);
        }
    }

    /// The originator and client order ids of a new order, cancel or replace on a bound
    /// connection.
    #[inline]
    fn order_ids<'r>(
        &self,
        r: &'r Record,
    ) -> Option<(u16, &'r exchange::ClOrdId, Option<&'r exchange::ClOrdId>)> {
        let Record::Fix(f) = r else {
            return None;
        };
        let Inbound::App(app) = &f.msg else {
            return None;
        };
        let (cl, orig) = app.order_cl_ord_ids()?;
        let who = self.fix.session_of(f.conn)?;
        Some((who, cl, orig))
    }

    /// For a full replay into this node while it is empty: the resolver that answers its
    /// ClOrdID lookups ahead (`exchange::resolve`).
    pub fn begin_resolving(&mut self) -> Option<ClResolver> {
        if self.last_seq != 0 {
            return None;
        }
        self.exchange.begin_resolving()
    }

    /// See `Exchange::end_resolving`.
    pub fn end_resolving(&mut self) -> Option<String> {
        self.exchange.end_resolving()
    }

    /// Starts loading what `apply_resolved` will read for `hint`'s record (a few ahead).
    #[inline]
    pub fn prefetch_hinted(&self, hint: &ClHint) {
        self.exchange.prefetch_hinted(hint);
    }

    /// The plan that faults in the pages of the exchange's large tables (`Backing::Background`).
    pub fn take_populate(&mut self) -> engine::hint::Populate {
        self.exchange.take_populate()
    }

    /// The checkpoint of the current state (the event loop journals one every so many
    /// records).
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            exchange: self.exchange.checkpoint(),
            fix: self.fix.checkpoint(),
        }
    }

    /// Replay only: bound the resend stores with checkpoint `cp` of record `seq`
    /// (`FixEdge::bound_stores`).
    pub fn bound_stores(&mut self, seq: u64, cp: &Checkpoint) -> bool {
        self.fix.bound_stores(seq, &cp.fix)
    }

    pub fn bounded(&self) -> bool {
        self.fix.bounded()
    }

    pub fn unbound_stores(&mut self) {
        self.fix.unbound_stores();
    }

    /// The first checkpoint this state disagreed with when it was applied: the replay diverged
    /// from the run that wrote the journal.
    pub fn divergence(&self) -> Option<&str> {
        self.exchange.divergence().or(self.fix.divergence())
    }

    /// Number of live orders.
    pub fn live_orders(&self) -> usize {
        self.exchange.live_orders()
    }

    /// (inbound expected, outbound next) MsgSeqNum of the FIX session of `sender_comp_id`.
    pub fn session_seqs(&self, sender_comp_id: &str) -> Option<(u64, u64)> {
        self.fix.session_seqs(sender_comp_id)
    }

    /// The hash of the whole state: equal exactly when the exchange (engine, ClOrdIDs, order
    /// records) and every session (numbers, queue, store) are equal.
    pub fn state_hash(&self) -> u64 {
        let mut buf = Vec::new();
        self.snapshot_and_hash(&mut buf)
    }

    /// Appends the full state to `out` and returns its hash (one pass over the state: a
    /// snapshot's stall matters).
    pub fn snapshot_and_hash(&self, out: &mut Vec<u8>) -> u64 {
        out.extend_from_slice(SNAP_MAGIC);
        out.extend_from_slice(&self.last_seq.to_le_bytes());
        let x = self.exchange.snapshot_and_hash(out);
        let at = out.len();
        self.fix.snapshot(out);
        self.api.snapshot(out);
        let f = hash_bytes(&out[at..]);
        x ^ f.rotate_left(29).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
    }

    /// True if `bytes` starts with this version's snapshot magic (older layouts have another).
    pub fn snapshot_format_matches(bytes: &[u8]) -> bool {
        bytes.starts_with(SNAP_MAGIC)
    }

    /// Rebuilds the state from `snapshot_and_hash`'s bytes, taken with the same configuration.
    pub fn restore(cfg: &Config, bytes: &[u8], backing: Backing) -> Result<Node, String> {
        let rest = bytes
            .strip_prefix(SNAP_MAGIC.as_slice())
            .ok_or("snapshot: bad magic")?;
        let (seq, rest) = rest.split_first_chunk::<8>().ok_or("snapshot: truncated")?;
        let (exchange, rest) = Exchange::restore(Arc::new(cfg.exchange_config()), rest, backing)?;
        let mut fix = FixEdge::new(Arc::new(cfg.fix_config()));
        let rest = fix.restore(rest)?;
        let mut api = ApiEdge::new(Arc::new(cfg.api_config()));
        let rest = api.restore(rest)?;
        if !rest.is_empty() {
            return Err("snapshot: trailing bytes".into());
        }
        Ok(Node {
            exchange,
            fix,
            api,
            last_seq: u64::from_le_bytes(*seq),
        })
    }
}

/// The `ClHasher` hashes of record `r`'s ClOrdID and OrigClOrdID (a new order's, cancel's or
/// replace's; 0 otherwise): what `Node::apply_prehashed` takes, computed where there is time
/// to spare (the event loop before its journal stage, recovery's decoding thread).
#[inline]
pub fn record_hashes(hasher: &ClHasher, r: &Record) -> ClHashes {
    let Record::Fix(f) = r else {
        return ClHashes::default();
    };
    let Inbound::App(app) = &f.msg else {
        return ClHashes::default();
    };
    match app.order_cl_ord_ids() {
        Some((cl, orig)) => ClHashes {
            cl: hasher.hash(cl.as_bytes()),
            orig: orig.map_or(0, |o| hasher.hash(o.as_bytes())),
        },
        None => ClHashes::default(),
    }
}

/// What record `r` means to a full replay's ClOrdID resolver (`exchange::Resolvable`): a
/// Logon binds its connection to the session its CompIDs name, a restart or a closed
/// connection unbinds, new orders, cancels and replaces are candidates, status requests
/// lookups.
#[inline]
pub fn resolvable<'r>(cfg: &FixConfig, r: &'r Record) -> Resolvable<'r> {
    match r {
        Record::Startup => Resolvable::Restart,
        Record::Disconnected { conn } | Record::Evict { conn, .. } => {
            Resolvable::Unbind { conn: *conn }
        }
        Record::Fix(f) => match &f.msg {
            Inbound::Logon(l) => {
                match cfg.find_session(l.sender_comp_id.as_bytes(), l.target_comp_id.as_bytes()) {
                    Some(ix) => Resolvable::Bind {
                        conn: f.conn,
                        originator: ix as u16,
                    },
                    None => Resolvable::Nothing,
                }
            }
            Inbound::App(AppMsg::Status { cl_ord_id, .. }) => Resolvable::Lookup {
                conn: f.conn,
                cl: cl_ord_id.as_bytes(),
            },
            Inbound::App(app) => match app.order_cl_ord_ids() {
                Some((cl, orig)) => Resolvable::Candidate {
                    conn: f.conn,
                    cl: cl.as_bytes(),
                    orig: orig.map(|o| o.as_bytes()),
                },
                None => Resolvable::Nothing,
            },
            _ => Resolvable::Nothing,
        },
        _ => Resolvable::Nothing,
    }
}
