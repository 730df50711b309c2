//! The edge's part of checkpoints and snapshots: each session's numbers, its queue, its
//! resend store (kept as recipes, rebuilt byte for byte on resend) and its trading-status
//! subscription.

use super::{EdgeCheckpoint, FixEdge, SessionMark};
use crate::config::FixConfig;
use crate::record::FixInput;
use crate::store::{Body, ExecRecipe};
use exchange::snap::{SnapReader, SnapWriter};
use fix::app::{ExecType, OrdStatus, OrderExt};
use fix::{Encoder, FixVersion, SessionVars};
use types::CancelReason;

impl FixEdge {
    /// The checkpoint of the current state: each session that has sent anything, with its
    /// next outbound MsgSeqNum and the MsgSeqNum of the oldest message it still stores.
    pub fn checkpoint(&self) -> EdgeCheckpoint {
        EdgeCheckpoint {
            store_max: self.cfg.resend_store_max as u64,
            sessions: self
                .sessions
                .iter()
                .enumerate()
                .filter(|(_, s)| s.next_out() > 1)
                .map(|(ix, s)| {
                    let def = &self.cfg.sessions[ix];
                    SessionMark {
                        session: ix as u32,
                        comp_ids: FixConfig::comp_ids_hash(
                            &def.sender_comp_id,
                            &def.target_comp_id,
                        ),
                        out_seq: s.next_out(),
                        oldest_stored: s.store().live().next().map_or(0, |m| m.seq),
                    }
                })
                .collect(),
        }
    }

    /// The index of the session a checkpoint's mark names, if this configuration has it.
    fn marked_session(&self, m: &SessionMark) -> Option<usize> {
        let hash = |def: &crate::SessionDef| {
            FixConfig::comp_ids_hash(&def.sender_comp_id, &def.target_comp_id)
        };
        let at = m.session as usize;
        if self
            .cfg
            .sessions
            .get(at)
            .is_some_and(|d| hash(d) == m.comp_ids)
        {
            return Some(at);
        }
        self.cfg.sessions.iter().position(|d| hash(d) == m.comp_ids)
    }

    /// Checks checkpoint record `seq` against the state: every session it names must have the
    /// same next outbound MsgSeqNum.
    pub fn on_checkpoint(&mut self, seq: u64, cp: &EdgeCheckpoint) {
        self.enter(seq);
        if self.divergence.is_some() {
            return;
        }
        for m in &cp.sessions {
            let Some(ix) = self.marked_session(m) else {
                continue;
            };
            let now = self.sessions[ix].next_out();
            if now != m.out_seq {
                let def = &self.cfg.sessions[ix];
                self.divergence = Some(format!(
                    "journal record {seq}: session {}->{} would send its next message as \
                     MsgSeqNum {now}, but the run that wrote the journal sent it as {}: this \
                     replay diverged from that run (another version or configuration)",
                    def.sender_comp_id, def.target_comp_id, m.out_seq
                ));
                return;
            }
        }
    }

    /// The first checkpoint this edge's state disagreed with.
    pub fn divergence(&self) -> Option<&str> {
        self.divergence.as_deref()
    }

    /// Replay only: skip storing the application messages that checkpoint `cp` (journal
    /// record `seq`) shows the resend stores will have forgotten by the end of the journal.
    /// Each store keeps its session's newest `resend_store_max` messages, so a message older
    /// than the oldest one stored at the checkpoint can never be among them later, provided
    /// the store is no larger now than when the checkpoint was written (otherwise nothing is
    /// skipped). Until a session's numbers are reset after the checkpoint (Logon with
    /// ResetSeqNumFlag), its messages numbered below that oldest one are numbered and hashed
    /// as ever but not stored; the final state is the same as without bounds. The replay must
    /// apply record `seq`; `unbound_stores` at its end. Returns whether any bound was set.
    pub fn bound_stores(&mut self, seq: u64, cp: &EdgeCheckpoint) -> bool {
        if self.cfg.resend_store_max as u64 > cp.store_max {
            return false;
        }
        let mut any = false;
        for m in &cp.sessions {
            if let Some(ix) = self.marked_session(m) {
                self.sessions[ix].store_mut().skip_below = m.oldest_stored;
                any |= m.oldest_stored > 1;
            }
        }
        if any {
            self.bound_seq = seq;
        }
        any
    }

    /// Whether `bound_stores` set bounds (and `unbound_stores` has not cleared them).
    pub fn bounded(&self) -> bool {
        self.bound_seq != 0
    }

    /// Stores every message from now on (the end of a replay with `bound_stores`).
    pub fn unbound_stores(&mut self) {
        for s in &mut self.sessions {
            s.store_mut().skip_below = 0;
        }
        self.bound_seq = 0;
    }

    /// Appends the edge's state (every session's numbers, timers, queue and stored messages,
    /// and its connection) to `out`.
    pub fn snapshot(&self, out: &mut Vec<u8>) {
        let stored: usize = self.sessions.iter().map(|s| s.store().live_len()).sum();
        out.reserve(64 + stored * 96);
        let mut rec = Vec::new();
        let mut scratch = Encoder::default();
        let mut e = SnapWriter(out);
        e.u64(self.last_seq);
        e.u64(self.sessions.len() as u64);
        for (ix, s) in self.sessions.iter().enumerate() {
            let v = s.vars();
            for x in [
                v.state as u64,
                v.next_in,
                v.next_out,
                v.heart_bt_int_s,
                v.connected_at_ns,
                v.last_recv_ns,
                v.last_sent_ns,
                v.test_request_sent_ns,
                v.test_request_count,
                v.logout_sent_ns,
                v.resend_trigger,
            ] {
                e.u64(x);
            }
            e.u64(self.conn_of[ix].unwrap_or(0));
            e.u64(self.conn_of[ix].is_some() as u64);
            let queued: Vec<_> = s.queued().collect();
            e.u64(queued.len() as u64);
            for q in queued {
                rec.clear();
                FixInput {
                    conn: 0,
                    header: q.header.clone(),
                    msg: q.msg.clone(),
                }
                .encode(&mut exchange::codec::Enc(&mut rec));
                e.bytes(&rec);
            }
            let store = s.store();
            e.u64(store.live_len() as u64);
            for m in store.live() {
                e.u64(m.seq);
                e.u64(m.msg_type as u64);
                e.u64(m.sending_ts);
                match store.parts(m) {
                    (Body::Bytes, body, _) => {
                        e.u64(0);
                        e.bytes(body);
                    }
                    // Stored as the bytes it stands for (a reject's body is the same in
                    // every version).
                    (Body::CancelReject(_), _, _) => {
                        e.u64(0);
                        scratch.begin_body();
                        store.body_into(m, FixVersion::Fix44, &mut scratch);
                        e.bytes(scratch.body());
                    }
                    // 1 a report, 2 a drop copy (the session whose report it copies, then
                    // the recipe); 3 and 4 the same of a stop, iceberg or GTD order, its
                    // StopPx, MaxFloor and ExpireTime after the recipe.
                    (Body::Exec(r), cl, orig) => {
                        let ext = r.ext != OrderExt::default();
                        match r.copy_of {
                            None => e.u64(if ext { 3 } else { 1 }),
                            Some(owner) => {
                                e.u64(if ext { 4 } else { 2 });
                                e.u64(owner as u64);
                            }
                        }
                        write_exec_recipe(&mut e, r, cl, orig);
                        if ext {
                            e.u64(r.ext.stop_px as u64);
                            e.u64(r.ext.max_floor);
                            e.u64(r.ext.expire_time_ns);
                        }
                    }
                }
            }
        }
        for sub in &self.trading_subs {
            match sub {
                Some(id) => {
                    e.u64(1);
                    e.bytes(id.as_bytes());
                }
                None => e.u64(0),
            }
        }
    }

    /// Restores what `snapshot` wrote (with the same configuration); returns the bytes after
    /// its part.
    pub fn restore<'a>(&mut self, bytes: &'a [u8]) -> Result<&'a [u8], String> {
        let mut r = SnapReader(bytes);
        self.last_seq = r.u64()?;
        let n = r.u64()? as usize;
        if n != self.sessions.len() {
            return Err(format!(
                "snapshot: {n} sessions but the config has {}",
                self.sessions.len()
            ));
        }
        for ix in 0..n {
            let mut f = [0u64; 11];
            for x in &mut f {
                *x = r.u64()?;
            }
            let v = SessionVars {
                state: u8::try_from(f[0]).map_err(|_| "snapshot: bad session state")?,
                next_in: f[1],
                next_out: f[2],
                heart_bt_int_s: f[3],
                connected_at_ns: f[4],
                last_recv_ns: f[5],
                last_sent_ns: f[6],
                test_request_sent_ns: f[7],
                test_request_count: f[8],
                logout_sent_ns: f[9],
                resend_trigger: f[10],
            };
            let conn = r.u64()?;
            if r.u64()? == 1 {
                self.conn_of[ix] = Some(conn);
                self.conns.put(conn, ix as u32);
            }
            let mut queue = Vec::new();
            for _ in 0..r.count()? {
                let mut d = exchange::codec::Dec(r.bytes()?);
                let fi = FixInput::decode(&mut d).map_err(|e| format!("snapshot: {e}"))?;
                d.end().map_err(|e| format!("snapshot: {e}"))?;
                queue.push(fix::Queued {
                    header: fi.header,
                    msg: fi.msg,
                });
            }
            let s = &mut self.sessions[ix];
            s.restore(&v, queue).map_err(|e| format!("snapshot: {e}"))?;
            for _ in 0..r.count()? {
                let seq = r.u64()?;
                let msg_type = r.u64()? as u8;
                let sending_ts = r.u64()?;
                match r.u64()? {
                    0 => {
                        let body = r.bytes()?;
                        s.store_mut().restore_entry(
                            seq,
                            msg_type,
                            sending_ts,
                            Body::Bytes,
                            body,
                            None,
                        );
                    }
                    kind @ 1..=4 => {
                        let copy_of = match kind {
                            2 | 4 => {
                                let owner = r.u64()?;
                                if owner >= n as u64 {
                                    return Err(format!(
                                        "snapshot: drop copy of session {owner} of {n}"
                                    ));
                                }
                                Some(owner as u16)
                            }
                            _ => None,
                        };
                        let (mut recipe, cl, orig) =
                            read_exec_recipe(&mut r, self.cfg.instruments.len())?;
                        recipe.copy_of = copy_of;
                        if kind >= 3 {
                            recipe.ext = OrderExt {
                                stop_px: r.u64()? as i64,
                                max_floor: r.u64()?,
                                expire_time_ns: r.u64()?,
                            };
                        }
                        s.store_mut().restore_entry(
                            seq,
                            b'8',
                            sending_ts,
                            Body::Exec(recipe),
                            cl,
                            orig,
                        );
                    }
                    k => return Err(format!("snapshot: stored message kind {k}")),
                }
            }
        }
        for ix in 0..n {
            self.trading_subs[ix] = match r.u64()? {
                0 => None,
                1 if self.conn_of[ix].is_some() => Some(
                    fix::Text::exact(r.bytes()?)
                        .filter(|t| !t.as_bytes().is_empty())
                        .ok_or("snapshot: bad TradSesReqID")?,
                ),
                1 => return Err("snapshot: a trading-status subscription of no connection".into()),
                _ => return Err("snapshot: bad trading-status subscription flag".into()),
            };
        }
        Ok(r.0)
    }
}

/// Cancel reasons by snapshot code (code = index + 1; 0 = no text).
const CANCEL_REASONS: [CancelReason; 9] = [
    CancelReason::User,
    CancelReason::Ioc,
    CancelReason::Fok,
    CancelReason::Stp,
    CancelReason::NoLiquidity,
    CancelReason::Expired,
    CancelReason::Disconnect,
    CancelReason::Collar,
    CancelReason::Operator,
];

const EXEC_TYPES: [ExecType; 8] = [
    ExecType::New,
    ExecType::Trade,
    ExecType::Canceled,
    ExecType::Replaced,
    ExecType::Rejected,
    ExecType::Expired,
    ExecType::OrderStatus,
    ExecType::Triggered,
];

const ORD_STATUSES: [OrdStatus; 6] = [
    OrdStatus::New,
    OrdStatus::PartiallyFilled,
    OrdStatus::Filled,
    OrdStatus::Canceled,
    OrdStatus::Rejected,
    OrdStatus::Expired,
];

fn code_of<T: PartialEq>(all: &[T], x: &T) -> u64 {
    all.iter().position(|a| a == x).unwrap_or(0) as u64
}

fn write_exec_recipe(e: &mut SnapWriter<'_>, r: &ExecRecipe, cl: &[u8], orig: Option<&[u8]>) {
    e.u64(r.order_id);
    e.bytes(cl);
    match orig {
        Some(o) => {
            e.u64(1);
            e.bytes(o);
        }
        None => e.u64(0),
    }
    e.u64(r.exec_seq);
    e.u64(r.exec_n as u64);
    e.u64(code_of(&EXEC_TYPES, &r.exec_type));
    e.u64(code_of(&ORD_STATUSES, &r.ord_status));
    e.u64(exchange::codec::side_code(r.side) as u64);
    e.u64(exchange::codec::ord_type_code(r.ord_type) as u64);
    e.u64(exchange::codec::tif_code(r.tif) as u64);
    e.u64(r.account as u64);
    e.u64(r.symbol as u64);
    e.u64(r.price as u64);
    e.u64(r.order_qty);
    match r.last {
        Some((px, qty)) => {
            e.u64(1);
            e.u64(px as u64);
            e.u64(qty);
        }
        None => e.u64(0),
    }
    e.u64(r.leaves_qty);
    e.u64(r.cum_qty);
    e.bytes(&r.notional.to_le_bytes());
    e.u64(r.text.map_or(0, |t| code_of(&CANCEL_REASONS, &t) + 1));
}

/// One ExecutionReport recipe of a snapshot (see `write_exec_recipe` for the layout).
#[allow(clippy::type_complexity)]
fn read_exec_recipe<'a>(
    r: &mut SnapReader<'a>,
    instruments: usize,
) -> Result<(ExecRecipe, &'a [u8], Option<&'a [u8]>), String> {
    let id = |b: &'a [u8]| -> Result<&'a [u8], String> {
        if b.len() > exchange::CL_ORD_ID_LEN_MAX {
            return Err("snapshot: stored ClOrdID too long".into());
        }
        std::str::from_utf8(b)
            .map(|_| b)
            .map_err(|_| "snapshot: stored ClOrdID not UTF-8".to_string())
    };
    let order_id = r.u64()?;
    let cl_ord_id = id(r.bytes()?)?;
    let orig_cl_ord_id = match r.u64()? {
        0 => None,
        1 => Some(id(r.bytes()?)?),
        _ => return Err("snapshot: bad OrigClOrdID flag".into()),
    };
    let exec_seq = r.u64()?;
    let exec_n = u32::try_from(r.u64()?).map_err(|_| "snapshot: bad exec number")?;
    let exec_type = *EXEC_TYPES
        .get(r.u64()? as usize)
        .ok_or("snapshot: bad ExecType")?;
    let ord_status = *ORD_STATUSES
        .get(r.u64()? as usize)
        .ok_or("snapshot: bad OrdStatus")?;
    let code = |v: u64| u8::try_from(v).map_err(|_| "snapshot: bad code".to_string());
    let side = exchange::codec::side_from(code(r.u64()?)?).map_err(|e| e.0.to_string())?;
    let ord_type = exchange::codec::ord_type_from(code(r.u64()?)?).map_err(|e| e.0.to_string())?;
    let tif = exchange::codec::tif_from(code(r.u64()?)?).map_err(|e| e.0.to_string())?;
    let account = u32::try_from(r.u64()?).map_err(|_| "snapshot: bad account")?;
    let symbol = u32::try_from(r.u64()?).map_err(|_| "snapshot: bad symbol")?;
    if symbol as usize >= instruments {
        return Err("snapshot: stored report for an unknown symbol".into());
    }
    let price = r.u64()? as i64;
    let order_qty = r.u64()?;
    let last = match r.u64()? {
        0 => None,
        1 => Some((r.u64()? as i64, r.u64()?)),
        _ => return Err("snapshot: bad last fill flag".into()),
    };
    let leaves_qty = r.u64()?;
    let cum_qty = r.u64()?;
    let notional = i128::from_le_bytes(
        r.bytes()?
            .try_into()
            .map_err(|_| "snapshot: bad notional".to_string())?,
    );
    let text = match r.u64()? {
        0 => None,
        k => Some(
            *CANCEL_REASONS
                .get(k as usize - 1)
                .ok_or("snapshot: bad cancel reason")?,
        ),
    };
    let recipe = ExecRecipe {
        order_id,
        exec_seq,
        exec_n,
        exec_type,
        ord_status,
        side,
        ord_type,
        tif,
        account,
        symbol,
        price,
        order_qty,
        last,
        leaves_qty,
        cum_qty,
        notional,
        text,
        ext: OrderExt::default(),
        copy_of: None,
    };
    Ok((recipe, cl_ord_id, orig_cl_ord_id))
}
