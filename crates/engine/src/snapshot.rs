//! Snapshot, restore and the state hash's hasher.
//!
//! Role: a versioned, checksummed binary image of the engine's matching state from which an
//! identical engine (same `state_hash`, same future behaviour) can be rebuilt; a shortcut for
//! replaying the journal, never a replacement for it.
//!
//! Format (little-endian): `b"RIALTOSN"`, `u32` version, `u64` payload length, payload, `u64`
//! checksum of the payload. Payload: the config, the instruments, the trade-id counter, the used
//! ids, then each side's resting orders in priority order. The used ids, by version:
//! - v1 (read only): `u64` count, then each id as a `u64`, ascending (8 bytes per id);
//! - v2 (written): `u64` number of id chunks above `ids_direct` (`ids::IdIndex`); `u64` number
//!   of runs of the bitmap (direct and chunks), then per maximal run, ascending, the LEB128
//!   varints `start - end of the previous run` (the first: `start`) and `len - 1`; `u64` number
//!   of sparse ids, then the first and each next one's difference to the previous as LEB128
//!   varints. Sequential ids cost a few bytes per run of accepted ids instead of 8 per id, and a
//!   restore rebuilds the same chunks and sparse set as the live engine had.
//!
//! v3 adds order types II: after each resting order a `u8` (bit 0 iceberg: then `u64` shown,
//! `u64` peak; bit 1 GTD: then `u64` expire time); then the pending stops (`u64` count, each
//! as an order plus `u8` market, `u64` stop price, `u64` peak, `u64` expire time, in
//! acceptance order); then one `u8` per instrument, 1 if its book is in a call.
//!
//! Never: trusts the bytes. Every field is checked (varints minimal and at most 10 bytes, runs
//! inside the bitmap, maximal and ascending, sparse ids ascending and outside the bitmap, at most
//! `ids::CHUNKS_MAX` chunks, as dense as the live path keeps them); the rebuilt engine must pass
//! `check_invariants` before it is returned. A restore's memory is bounded by the config's
//! limits (as for a new engine), the chunks (at most 2 GiB) and a few dozen bytes per byte of
//! sparse ids.

use crate::{Engine, EngineConfig, Ext, RestingOrder, F_ICEBERG, NIL};
use types::{Instrument, NewOrder, OrdType, Side, StpMode, Symbol, TimeInForce, SYMBOL_LEN_MAX};

const MAGIC: &[u8; 8] = b"RIALTOSN";
/// The version written; `restore` reads it and versions 1 and 2.
const VERSION: u32 = 3;

/// Why a snapshot could not be restored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SnapshotError {
    /// The bytes end before the named part.
    Truncated(&'static str),
    BadMagic,
    UnsupportedVersion(u32),
    ChecksumMismatch,
    /// A field holds an impossible value (named), or the rebuilt state breaks an invariant.
    Corrupt(String),
}

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SnapshotError::Truncated(what) => write!(f, "snapshot truncated in {what}"),
            SnapshotError::BadMagic => write!(f, "not a Rialto engine snapshot"),
            SnapshotError::UnsupportedVersion(v) => write!(f, "unsupported snapshot version {v}"),
            SnapshotError::ChecksumMismatch => write!(f, "snapshot checksum mismatch"),
            SnapshotError::Corrupt(why) => write!(f, "corrupt snapshot: {why}"),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// A fixed, platform-independent 64-bit hash (word-wise multiply-rotate with a splitmix
/// finish). Not cryptographic: it detects corruption and divergence, not tampering.
pub(crate) struct Hasher {
    h: u64,
    n: u64,
}

impl Hasher {
    pub(crate) fn new() -> Hasher {
        Hasher {
            h: 0x243f_6a88_85a3_08d3,
            n: 0,
        }
    }
    #[inline]
    pub(crate) fn u64(&mut self, x: u64) {
        self.h = (self.h ^ x)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
        self.n += 1;
    }
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        for c in b.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.u64(u64::from_le_bytes(w));
        }
    }
    pub(crate) fn finish(&self) -> u64 {
        crate::ids::mix64(self.h ^ self.n)
    }
}

fn tif_code(t: TimeInForce) -> u8 {
    match t {
        TimeInForce::Gtc => 0,
        TimeInForce::Day => 1,
        TimeInForce::Ioc => 2,
        TimeInForce::Fok => 3,
        TimeInForce::Gtd => 4,
    }
}

fn stp_code(s: StpMode) -> u8 {
    match s {
        StpMode::CancelNewest => 0,
        StpMode::CancelOldest => 1,
        StpMode::CancelBoth => 2,
        StpMode::None => 3,
    }
}

pub(crate) fn hash_order(h: &mut Hasher, o: &RestingOrder) {
    h.u64(o.id);
    h.u64(o.account as u64 | (o.symbol as u64) << 32);
    h.u64(o.price as u64);
    h.u64(o.qty);
    h.u64(o.orig_qty);
    h.u64(
        crate::side_ix(o.side) as u64
            | (tif_code(o.tif) as u64) << 8
            | (o.post_only as u64) << 16
            | (stp_code(o.stp) as u64) << 24,
    );
    // Order types II, only where set (a plain order hashes as before they existed).
    if o.shown != o.qty || o.display_qty != 0 || o.stop_price != 0 || o.expire_ns != 0 {
        h.u64(o.shown);
        h.u64(o.display_qty);
        h.u64(o.stop_price as u64);
        h.u64(o.expire_ns);
    }
}

struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], SnapshotError> {
        if self.b.len() < n {
            return Err(SnapshotError::Truncated(what));
        }
        let (a, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(a)
    }
    fn u8(&mut self, what: &'static str) -> Result<u8, SnapshotError> {
        Ok(self.take(1, what)?[0])
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, SnapshotError> {
        let mut w = [0u8; 4];
        w.copy_from_slice(self.take(4, what)?);
        Ok(u32::from_le_bytes(w))
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, SnapshotError> {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(w))
    }
    /// An unsigned LEB128 varint: minimal, at most 10 bytes, no bit beyond 64.
    fn varint(&mut self, what: &'static str) -> Result<u64, SnapshotError> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.u8(what)?;
            if i == 9 && b > 1 {
                return Err(corrupt(format!("{what}: varint beyond 64 bits")));
            }
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                if b == 0 && i > 0 {
                    return Err(corrupt(format!("{what}: varint not minimal")));
                }
                return Ok(v);
            }
        }
        Err(corrupt(format!("{what}: varint longer than 10 bytes")))
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn corrupt(why: impl Into<String>) -> SnapshotError {
    SnapshotError::Corrupt(why.into())
}

impl Engine {
    /// Appends a versioned, checksummed snapshot of the whole matching state to `out`.
    pub fn snapshot(&self, out: &mut Vec<u8>) {
        self.snapshot_as(out, VERSION);
    }

    /// The snapshot in format `version` (2 or 3; 2 only of an engine without order types II,
    /// for the tests of older formats).
    pub(crate) fn snapshot_as(&self, out: &mut Vec<u8>, version: u32) {
        let start = out.len();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes()); // payload length, patched below
        let payload = out.len();
        let c = &self.config;
        for v in [
            c.orders_max,
            c.levels_initial,
            c.levels_max,
            c.ids_direct,
            c.ids_hashed_initial,
        ] {
            out.extend_from_slice(&(v as u64).to_le_bytes());
        }
        out.extend_from_slice(&(self.instruments.len() as u32).to_le_bytes());
        for inst in &self.instruments {
            let s = inst.symbol.as_str().as_bytes();
            out.push(s.len() as u8);
            out.extend_from_slice(s);
            out.extend_from_slice(&inst.tick.to_le_bytes());
            out.extend_from_slice(&inst.lot.to_le_bytes());
        }
        out.extend_from_slice(&self.next_trade_id.to_le_bytes());
        self.snapshot_used_ids(out);
        let pending: usize = self.stops.iter().map(|b| b.len()).sum();
        out.extend_from_slice(&((self.live - pending) as u64).to_le_bytes());
        for sym in 0..self.instruments.len() {
            for side in [Side::Buy, Side::Sell] {
                for o in self.resting(sym as u32, side) {
                    out.extend_from_slice(&o.id.to_le_bytes());
                    out.extend_from_slice(&o.account.to_le_bytes());
                    out.extend_from_slice(&o.symbol.to_le_bytes());
                    out.push(crate::side_ix(o.side) as u8);
                    out.extend_from_slice(&o.price.to_le_bytes());
                    out.extend_from_slice(&o.qty.to_le_bytes());
                    out.extend_from_slice(&o.orig_qty.to_le_bytes());
                    out.push(tif_code(o.tif));
                    out.push(o.post_only as u8);
                    out.push(stp_code(o.stp));
                    if version < 3 {
                        continue;
                    }
                    let iceberg = o.display_qty != 0;
                    let gtd = o.tif == TimeInForce::Gtd;
                    out.push(iceberg as u8 | (gtd as u8) << 1);
                    if iceberg {
                        out.extend_from_slice(&o.shown.to_le_bytes());
                        out.extend_from_slice(&o.display_qty.to_le_bytes());
                    }
                    if gtd {
                        out.extend_from_slice(&o.expire_ns.to_le_bytes());
                    }
                }
            }
        }
        if version >= 3 {
            self.snapshot_v3_tail(out);
        }
        let len = (out.len() - payload) as u64;
        out[payload - 8..payload].copy_from_slice(&len.to_le_bytes());
        let sum = checksum(&out[payload..]);
        out.extend_from_slice(&sum.to_le_bytes());
        debug_assert!(out.len() > start);
    }

    /// v3: the pending stops and the call flags.
    fn snapshot_v3_tail(&self, out: &mut Vec<u8>) {
        let stops: Vec<RestingOrder> = (0..self.instruments.len())
            .flat_map(|sym| self.pending_stops(sym as u32))
            .collect();
        out.extend_from_slice(&(stops.len() as u64).to_le_bytes());
        for o in &stops {
            out.extend_from_slice(&o.id.to_le_bytes());
            out.extend_from_slice(&o.account.to_le_bytes());
            out.extend_from_slice(&o.symbol.to_le_bytes());
            out.push(crate::side_ix(o.side) as u8);
            out.extend_from_slice(&o.price.to_le_bytes());
            out.extend_from_slice(&o.qty.to_le_bytes());
            out.push(tif_code(o.tif));
            out.push(stp_code(o.stp));
            out.push((o.price == 0) as u8);
            out.extend_from_slice(&o.stop_price.to_le_bytes());
            out.extend_from_slice(&o.display_qty.to_le_bytes());
            out.extend_from_slice(&o.expire_ns.to_le_bytes());
        }
        for &c in &self.call {
            out.push(c as u8);
        }
    }

    /// Rebuilds an engine from `snapshot`'s bytes. The result has the same `state_hash` and
    /// behaves identically on every future command.
    pub fn restore(bytes: &[u8]) -> Result<Engine, SnapshotError> {
        let mut r = Reader { b: bytes };
        if r.take(8, "magic")? != MAGIC {
            return Err(SnapshotError::BadMagic);
        }
        let version = r.u32("version")?;
        if !(1..=VERSION).contains(&version) {
            return Err(SnapshotError::UnsupportedVersion(version));
        }
        let len = r.u64("length")?;
        let len = usize::try_from(len).map_err(|_| SnapshotError::Truncated("payload"))?;
        let payload = r.take(len, "payload")?;
        let sum = r.u64("checksum")?;
        if !r.b.is_empty() {
            return Err(corrupt("trailing bytes after the checksum"));
        }
        if checksum(payload) != sum {
            return Err(SnapshotError::ChecksumMismatch);
        }
        let mut r = Reader { b: payload };
        let mut cfg = [0usize; 5];
        for v in cfg.iter_mut() {
            *v = usize::try_from(r.u64("config")?).map_err(|_| corrupt("config value"))?;
        }
        let config = EngineConfig {
            orders_max: cfg[0],
            levels_initial: cfg[1],
            levels_max: cfg[2],
            ids_direct: cfg[3],
            ids_hashed_initial: cfg[4],
        };

        let n_inst = r.u32("instruments")? as usize;
        let mut instruments = Vec::with_capacity(n_inst.min(1 << 16));
        for _ in 0..n_inst {
            let n = r.u8("symbol")? as usize;
            if n > SYMBOL_LEN_MAX {
                return Err(corrupt("symbol length"));
            }
            let s = r.take(n, "symbol")?;
            let symbol = std::str::from_utf8(s)
                .ok()
                .and_then(Symbol::new)
                .ok_or_else(|| corrupt("symbol"))?;
            let tick = r.u64("tick")? as i64;
            let lot = r.u64("lot")?;
            instruments.push(Instrument { symbol, tick, lot });
        }
        let mut e = Engine::try_new(&instruments, config).map_err(|e| corrupt(e.to_string()))?;
        e.next_trade_id = r.u64("trade id")?;
        if e.next_trade_id == 0 {
            return Err(corrupt("trade id counter 0"));
        }
        if version == 1 {
            restore_used_ids_v1(&mut r, &mut e)?;
        } else {
            restore_used_ids_v2(&mut r, &mut e)?;
        }
        let n_live = r.u64("orders")?;
        if n_live > config.orders_max as u64 {
            return Err(corrupt("more resting orders than orders_max"));
        }
        for _ in 0..n_live {
            let id = r.u64("order")?;
            let account = r.u32("order")?;
            let symbol = r.u32("order")?;
            let side = read_side(&mut r, "order")?;
            let price = r.u64("order")? as i64;
            let qty = r.u64("order")?;
            let orig_qty = r.u64("order")?;
            let tif = match r.u8("order")? {
                0 => TimeInForce::Gtc,
                1 => TimeInForce::Day,
                4 if version >= 3 => TimeInForce::Gtd,
                _ => return Err(corrupt("resting order tif")),
            };
            let post_only = match r.u8("order")? {
                0 => false,
                1 => true,
                _ => return Err(corrupt("order post_only")),
            };
            let stp = read_stp(&mut r)?;
            let (mut shown, mut display, mut expire_ns) = (qty, 0, 0);
            if version >= 3 {
                let bits = r.u8("order")?;
                if bits > 3 || (bits & 2 != 0) != (tif == TimeInForce::Gtd) {
                    return Err(corrupt(format!(
                        "order {id}: extension bits {bits} with {tif:?}"
                    )));
                }
                if bits & 1 != 0 {
                    shown = r.u64("order")?;
                    display = r.u64("order")?;
                    if shown == 0
                        || shown > qty
                        || shown > display
                        || display % inst_lot(&instruments, symbol)? != 0
                    {
                        return Err(corrupt(format!("order {id}: iceberg quantities")));
                    }
                }
                if bits & 2 != 0 {
                    expire_ns = r.u64("order")?;
                    if expire_ns == 0 {
                        return Err(corrupt(format!("order {id}: expire time 0")));
                    }
                }
            }
            let inst = instruments
                .get(symbol as usize)
                .ok_or_else(|| corrupt("order symbol"))?;
            if qty == 0 || qty % inst.lot != 0 || price <= 0 || price % inst.tick != 0 {
                return Err(corrupt(format!("order {id}: price or qty off grid")));
            }
            if !e.ids.is_used(id) {
                return Err(corrupt(format!("order {id}: id not in the used set")));
            }
            if e.ids.live_slot(id).is_some() {
                return Err(corrupt(format!("order {id}: resting twice")));
            }
            let own = &e.books[symbol as usize][crate::side_ix(side)];
            let fits = match own.idx_of(price) {
                Some(i) => own.level(i).qty.checked_add(qty).is_some(),
                None => own.can_hold(price),
            };
            if !fits {
                return Err(corrupt(format!(
                    "order {id}: beyond the ladder or level limits"
                )));
            }
            if let Some(last) = e.resting(symbol, side).last() {
                let worse_or_equal = match side {
                    Side::Buy => price <= last.price,
                    Side::Sell => price >= last.price,
                };
                if !worse_or_equal {
                    return Err(corrupt(format!("order {id}: out of priority order")));
                }
            }
            let flags = if display != 0 { F_ICEBERG } else { 0 };
            let slot = e.alloc_slot(crate::Order {
                id,
                price,
                qty: shown,
                orig_qty,
                seq: 0,
                prev: NIL,
                next: NIL,
                account,
                symbol,
                side,
                tif,
                post_only,
                stp,
                flags,
            });
            e.ids.set_live(id, slot);
            if flags != 0 || tif == TimeInForce::Gtd {
                e.ext_put(
                    slot,
                    Ext {
                        stop_price: 0,
                        display,
                        hidden: qty - shown,
                        expire_ns,
                    },
                );
            }
            if flags != 0 {
                e.icebergs[symbol as usize][crate::side_ix(side)] += 1;
                e.hidden.add(symbol, side, price, qty - shown);
            }
            if tif == TimeInForce::Gtd {
                e.push_expiry(expire_ns, id);
            }
            e.rest(slot, None, &mut types::NullSink);
        }
        if version >= 3 {
            restore_stops(&mut r, &mut e)?;
            for sym in 0..e.call.len() {
                e.call[sym] = match r.u8("call")? {
                    0 => false,
                    1 => true,
                    _ => return Err(corrupt("call flag")),
                };
            }
        }
        if !r.b.is_empty() {
            return Err(corrupt("trailing bytes in the payload"));
        }
        e.check_invariants().map_err(corrupt)?;
        Ok(e)
    }
}

impl Engine {
    /// Writes the v2 used-id section (see the module comment).
    fn snapshot_used_ids(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.ids.chunk_count() as u64).to_le_bytes());
        let at = out.len();
        out.extend_from_slice(&0u64.to_le_bytes()); // number of runs, patched below
        let mut runs = 0u64;
        let mut prev_end = 0u64;
        self.ids.bitmap_runs(|start, len| {
            put_varint(out, start - prev_end);
            put_varint(out, len - 1);
            prev_end = start + len;
            runs += 1;
        });
        out[at..at + 8].copy_from_slice(&runs.to_le_bytes());
        let sparse = self.ids.sparse_sorted();
        out.extend_from_slice(&(sparse.len() as u64).to_le_bytes());
        let mut prev = 0u64;
        for id in sparse {
            put_varint(out, id - prev);
            prev = id;
        }
    }
}

fn read_side(r: &mut Reader<'_>, what: &'static str) -> Result<Side, SnapshotError> {
    match r.u8(what)? {
        0 => Ok(Side::Buy),
        1 => Ok(Side::Sell),
        _ => Err(corrupt(format!("{what} side"))),
    }
}

fn read_stp(r: &mut Reader<'_>) -> Result<StpMode, SnapshotError> {
    Ok(match r.u8("order")? {
        0 => StpMode::CancelNewest,
        1 => StpMode::CancelOldest,
        2 => StpMode::CancelBoth,
        3 => StpMode::None,
        _ => return Err(corrupt("order stp")),
    })
}

fn inst_lot(instruments: &[Instrument], symbol: u32) -> Result<u64, SnapshotError> {
    instruments
        .get(symbol as usize)
        .map(|i| i.lot)
        .ok_or_else(|| corrupt("order symbol"))
}

/// v3: the pending stops, in acceptance order, through the live path (as new stops).
fn restore_stops(r: &mut Reader<'_>, e: &mut Engine) -> Result<(), SnapshotError> {
    let n = r.u64("stops")?;
    if n > e.config.orders_max as u64 {
        return Err(corrupt("more pending stops than orders_max"));
    }
    for _ in 0..n {
        let id = r.u64("stop")?;
        let account = r.u32("stop")?;
        let symbol = r.u32("stop")?;
        let side = read_side(r, "stop")?;
        let price = r.u64("stop")? as i64;
        let qty = r.u64("stop")?;
        let tif = match r.u8("stop")? {
            0 => TimeInForce::Gtc,
            1 => TimeInForce::Day,
            2 => TimeInForce::Ioc,
            3 => TimeInForce::Fok,
            4 => TimeInForce::Gtd,
            _ => return Err(corrupt("stop tif")),
        };
        let stp = read_stp(r)?;
        let market = match r.u8("stop")? {
            0 => false,
            1 => true,
            _ => return Err(corrupt("stop market flag")),
        };
        let stop_price = r.u64("stop")? as i64;
        let display_qty = r.u64("stop")?;
        let expire_ns = r.u64("stop")?;
        if !e.ids.is_used(id) || e.ids.live_slot(id).is_some() {
            return Err(corrupt(format!("stop {id}: id not used, or live twice")));
        }
        let order = NewOrder {
            id,
            account,
            symbol,
            side,
            ord_type: if market {
                OrdType::Market
            } else {
                OrdType::Limit
            },
            tif,
            price,
            qty,
            post_only: false,
            stp,
            stop_price,
            display_qty,
            expire_ns,
        };
        let inst = e
            .instruments
            .get(symbol as usize)
            .ok_or_else(|| corrupt("stop symbol"))?;
        let on_tick = |p: i64| p > 0 && p % inst.tick == 0;
        if qty == 0
            || qty % inst.lot != 0
            || (!market && !on_tick(price))
            || (market && price != 0)
            || !on_tick(stop_price)
            || display_qty % inst.lot != 0
            || (tif == TimeInForce::Gtd) != (expire_ns != 0)
        {
            return Err(corrupt(format!("stop {id}: a field off its grid")));
        }
        if e.slab_full() {
            return Err(corrupt("more orders than orders_max"));
        }
        e.insert_stop(&order);
    }
    Ok(())
}

/// v1: every used id as a `u64`, ascending; rebuilt through the live path.
fn restore_used_ids_v1(r: &mut Reader<'_>, e: &mut Engine) -> Result<(), SnapshotError> {
    let n_used = r.u64("used ids")?;
    if n_used > (r.b.len() / 8) as u64 {
        return Err(SnapshotError::Truncated("used ids"));
    }
    let mut last: Option<u64> = None;
    for _ in 0..n_used {
        let id = r.u64("used ids")?;
        if last.is_some_and(|l| l >= id) {
            return Err(corrupt("used ids not strictly ascending"));
        }
        last = Some(id);
        e.ids.mark_used(id);
    }
    Ok(())
}

/// v2: the chunk count, the bitmap's runs, the sparse ids (see the module comment).
fn restore_used_ids_v2(r: &mut Reader<'_>, e: &mut Engine) -> Result<(), SnapshotError> {
    let n_chunks = r.u64("id chunks")?;
    let n_chunks = usize::try_from(n_chunks)
        .ok()
        .filter(|&n| n <= crate::ids::CHUNKS_MAX)
        .ok_or_else(|| corrupt("more id chunks than the limit"))?;
    e.ids.restore_chunks(n_chunks).map_err(corrupt)?;
    let n_runs = r.u64("used-id runs")?;
    // Each run takes 2 bytes at least.
    if n_runs > (r.b.len() / 2) as u64 {
        return Err(SnapshotError::Truncated("used-id runs"));
    }
    let mut prev_end = 0u64;
    for i in 0..n_runs {
        let gap = r.varint("used-id run")?;
        if i > 0 && gap == 0 {
            return Err(corrupt("used-id runs not maximal"));
        }
        let len = r.varint("used-id run")?.checked_add(1);
        let start = prev_end.checked_add(gap);
        let (Some(start), Some(len)) = (start, len) else {
            return Err(corrupt("used-id run beyond the bitmap"));
        };
        e.ids.restore_run(start, len).map_err(corrupt)?;
        prev_end = start + len;
    }
    e.ids.check_chunks().map_err(corrupt)?;
    let n_sparse = r.u64("sparse ids")?;
    // Each id takes a byte at least.
    if n_sparse > r.b.len() as u64 {
        return Err(SnapshotError::Truncated("sparse ids"));
    }
    e.ids.reserve_sparse(n_sparse as usize);
    let mut prev = 0u64;
    for i in 0..n_sparse {
        let delta = r.varint("sparse ids")?;
        if i > 0 && delta == 0 {
            return Err(corrupt("sparse ids not strictly ascending"));
        }
        let id = prev
            .checked_add(delta)
            .ok_or_else(|| corrupt("sparse id beyond u64"))?;
        e.ids.restore_sparse(id).map_err(corrupt)?;
        prev = id;
    }
    Ok(())
}

fn checksum(b: &[u8]) -> u64 {
    let mut h = Hasher::new();
    h.bytes(b);
    h.finish()
}

#[cfg(test)]
mod tests;
