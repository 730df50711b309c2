//! One bot's FIX initiator session: its socket and buffers, the messages it writes (Logon,
//! requests, heartbeats, mass cancel, Logout) and what it does with each message it reads
//! (sequence numbers, session-level answers, the accounting of a request's first answer, the
//! bot's view of its orders).
//!
//! Role: the FIX half of the driver: `driver` decides when to write and read, this decides
//! what. Messages are encoded into the bot's write buffer and written by `flush` with one
//! `write` for whatever accumulated.
//!
//! Never: blocks (the socket is non-blocking: what it does not take stays in `wbuf` for the
//! next `flush`); reads a clock except to stamp a session-level answer; allocates per message
//! once the buffers have grown (a ResendRequest's gap fill, which ends the measurement's
//! validity anyway, aside); lets a bot cancel or replace an order it does not believe live
//! (`BotOrders`).
//!
//! Invariants: MsgSeqNum goes up by one per message written (a gap fill reuses the numbers it
//! skips); an inbound MsgSeqNum gap is an error; only a request's first answer is timed (its
//! kind is in the ClOrdID).

use crate::clock::mono_ns;
use crate::clordid::{self, ClOrdId, KIND_CANCEL, KIND_MASS_CANCEL, KIND_NEW, KIND_REPLACE};
use crate::mix::{Action, Market};
use crate::orders::BotOrders;
use crate::stats::ERROR_NOTES_MAX;
use crate::tally::{Outcome, Tally};
use fix::scan::{Inbound, Report};
use fix::{Decimal, Encoder, FixVersion, Header, TimePrecision};
use mio::net::TcpStream;
use std::io::{self, Write};
use types::{OrdType, Side, TimeInForce};

/// What writing a message takes besides the bot: the encoder (one, reused), the exchange's
/// CompID (our TargetCompID) and a monotonic and a wall-clock reading of the same instant, to
/// stamp SendingTime without a system call.
pub struct Outbound {
    pub enc: Encoder,
    pub target: String,
    pub mono0: u64,
    pub wall0: u64,
}

impl Outbound {
    /// Wall-clock ns since the Unix epoch at monotonic `mono`.
    pub fn wall_at(&self, mono: u64) -> u64 {
        self.wall0 + mono.saturating_sub(self.mono0)
    }
}

/// One request of the schedule, as the bot's strategy chose it.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// Its index in the run's schedule (its intended time is a function of it).
    pub k: u64,
    pub action: Action,
    /// When it is written: monotonic ns.
    pub mono: u64,
}

pub struct Bot {
    pub name: String,
    pub stream: TcpStream,
    pub out_seq: u64,
    pub in_seq: u64,
    pub rbuf: Vec<u8>,
    pub rlen: usize,
    pub wbuf: Vec<u8>,
    pub wpos: usize,
    /// Something was encoded into `wbuf` since the last `flush`.
    pub dirty: bool,
    pub logged_on: bool,
    pub closed: bool,
    pub logout_sent: bool,
    pub logout_received: bool,
    pub mass_cancel_done: bool,
    /// Monotonic ns of the last message written (for heartbeats).
    pub last_send_ns: u64,
    pub orders: BotOrders,
}

impl Bot {
    pub fn new(name: String, stream: TcpStream, rbuf_size: usize, window: usize) -> Bot {
        Bot {
            name,
            stream,
            out_seq: 1,
            in_seq: 1,
            rbuf: vec![0; rbuf_size],
            rlen: 0,
            wbuf: Vec::with_capacity(64 << 10),
            wpos: 0,
            dirty: false,
            logged_on: false,
            closed: false,
            logout_sent: false,
            logout_received: false,
            mass_cancel_done: false,
            last_send_ns: 0,
            orders: BotOrders::new(window),
        }
    }

    pub fn unsent(&self) -> usize {
        self.wbuf.len() - self.wpos
    }

    /// Starts a message with the standard header and takes the bot's next MsgSeqNum.
    fn begin(&mut self, out: &mut Outbound, msg_type: &[u8], mono: u64) {
        let wall = out.wall_at(mono);
        out.enc.begin(msg_type);
        out.enc.header(&Header {
            sender_comp_id: self.name.as_bytes(),
            target_comp_id: out.target.as_bytes(),
            msg_seq_num: self.out_seq,
            sending_time_ns: wall,
            poss_dup: false,
            orig_sending_time: None,
            time_precision: TimePrecision::Millis,
        });
        self.out_seq += 1;
        self.last_send_ns = mono;
    }

    /// Ends the message being encoded and appends it to the write buffer.
    fn end(&mut self, out: &mut Outbound) {
        self.wbuf
            .extend_from_slice(out.enc.finish(FixVersion::Fix44));
    }

    /// Writes as much of the write buffer as the socket takes. False if the connection is gone.
    pub fn flush(&mut self) -> bool {
        while self.wpos < self.wbuf.len() {
            match self.stream.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return false,
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        } else if self.wpos > (1 << 20) && self.wpos * 2 > self.wbuf.len() {
            self.wbuf.drain(..self.wpos);
            self.wpos = 0;
        }
        true
    }

    /// Logon with ResetSeqNumFlag=Y, written now.
    pub fn logon(&mut self, out: &mut Outbound, heartbeat_secs: u32, mono: u64) {
        self.begin(out, b"A", mono);
        out.enc.field(98, b"0");
        out.enc.field_u64(108, u64::from(heartbeat_secs));
        out.enc.field(141, b"Y");
        self.end(out);
        self.flush();
    }

    /// A Heartbeat, written now.
    pub fn heartbeat(&mut self, out: &mut Outbound, mono: u64) {
        self.begin(out, b"0", mono);
        self.end(out);
        self.flush();
    }

    /// An OrderMassCancelRequest for all of the bot's orders (530=7), written now; `index`
    /// makes its ClOrdID unique in the run.
    pub fn mass_cancel(
        &mut self,
        out: &mut Outbound,
        run: &[u8; clordid::RUN_LEN],
        index: u64,
        mono: u64,
    ) {
        let wall = out.wall_at(mono);
        let id = ClOrdId::new(KIND_MASS_CANCEL, run, index, 0);
        self.begin(out, b"q", mono);
        out.enc.field(11, id.as_bytes());
        out.enc.field(530, b"7");
        out.enc.field_timestamp(60, wall, TimePrecision::Millis);
        self.end(out);
        self.flush();
    }

    /// A Logout, written now.
    pub fn logout(&mut self, out: &mut Outbound, mono: u64) {
        self.begin(out, b"5", mono);
        self.end(out);
        self.logout_sent = true;
        self.flush();
    }

    /// Encodes `req` into the write buffer (written by the next `flush`) and counts it; an
    /// `Idle` action, or one about an unknown symbol or slot, writes nothing.
    pub fn send(&mut self, out: &mut Outbound, req: Request, market: &Market, tally: &mut Tally) {
        let Request { k, action, mono } = req;
        let wall = out.wall_at(mono);
        let measured = k >= tally.k_measure;
        let sym = |i: u16| market.symbols.get(i as usize);
        match action {
            Action::Idle => return,
            Action::New {
                symbol,
                side,
                ord_type,
                tif,
                price_ticks,
                qty,
                slot,
            } => {
                let Some(spec) = sym(symbol) else {
                    if slot != 0 {
                        self.orders.release(slot);
                    }
                    return;
                };
                let id = ClOrdId::new(KIND_NEW, &tally.run, k, slot);
                self.begin(out, b"D", mono);
                let enc = &mut out.enc;
                enc.field(11, id.as_bytes());
                enc.field(55, spec.name.as_bytes());
                enc.field_char(54, side_code(side));
                enc.field_u64(38, qty);
                match ord_type {
                    OrdType::Market => enc.field_char(40, b'1'),
                    OrdType::Limit => {
                        enc.field_char(40, b'2');
                        enc.field_decimal(44, Decimal::new(price_ticks, spec.price_decimals));
                    }
                }
                enc.field_char(59, tif_code(tif));
                enc.field_timestamp(60, wall, TimePrecision::Millis);
                if slot != 0 {
                    self.orders
                        .on_new_sent(slot, k, symbol, side, price_ticks, qty);
                }
                tally.count_sent(measured, |c| c.sent_new += 1);
            }
            Action::Cancel { slot } | Action::Replace { slot, .. } => {
                let Some(s) = self.orders.slot(slot).copied() else {
                    return;
                };
                let Some(spec) = sym(s.symbol) else { return };
                let replace = match action {
                    Action::Replace {
                        price_ticks, qty, ..
                    } => Some((price_ticks, qty)),
                    _ => None,
                };
                let kind = if replace.is_some() {
                    KIND_REPLACE
                } else {
                    KIND_CANCEL
                };
                let orig = ClOrdId::new(s.cur_kind, &tally.run, s.cur_k, slot);
                let id = ClOrdId::new(kind, &tally.run, k, slot);
                self.begin(out, if replace.is_some() { b"G" } else { b"F" }, mono);
                let enc = &mut out.enc;
                enc.field(41, orig.as_bytes());
                enc.field(11, id.as_bytes());
                enc.field(55, spec.name.as_bytes());
                enc.field_char(54, side_code(s.side));
                match replace {
                    Some((price, qty)) => {
                        enc.field_u64(38, qty);
                        enc.field_char(40, b'2');
                        enc.field_decimal(44, Decimal::new(price, spec.price_decimals));
                        enc.field_char(59, b'0');
                    }
                    None => enc.field_u64(38, s.leaves_qty.max(1)),
                }
                enc.field_timestamp(60, wall, TimePrecision::Millis);
                self.orders.on_request_sent(slot, k, replace);
                if replace.is_some() {
                    tally.count_sent(measured, |c| c.sent_replace += 1);
                } else {
                    tally.count_sent(measured, |c| c.sent_cancel += 1);
                }
            }
        }
        self.end(out);
        self.dirty = true;
        tally.sent_all += 1;
    }

    /// Handles one inbound message that arrived at `recv` (ns after the run's start): session
    /// messages are answered here (into the write buffer, `dirty` set), application messages
    /// are accounted for. True for an application message an observer should see.
    pub fn on_message(
        &mut self,
        out: &mut Outbound,
        msg: &Inbound<'_>,
        tally: &mut Tally,
        recv: u64,
    ) -> bool {
        let seq = msg.seq;
        let mt = msg.msg_type;
        let poss_dup = msg.poss_dup;
        let is_reset = mt == b"4";
        if !is_reset && seq != 0 {
            if seq > self.in_seq && self.logged_on {
                let name = self.name.clone();
                tally.error(format!(
                    "{name}: inbound sequence gap, expected {} got {seq}",
                    self.in_seq
                ));
            }
            if seq < self.in_seq && poss_dup {
                return false;
            }
            self.in_seq = seq + 1;
        }
        // The clock is read only for the session messages that answer (not per report).
        match mt {
            b"A" => {
                self.logged_on = true;
                return false;
            }
            b"0" => return false,
            b"1" => {
                let id = msg.test_req_id;
                self.begin(out, b"0", mono_ns());
                out.enc.field(112, id);
                self.end(out);
                self.dirty = true;
                return false;
            }
            b"2" => {
                // We keep no store: answer with a gap fill up to our next number.
                let begin_no = msg.begin_seq_no.unwrap_or(1);
                let next = self.out_seq;
                // The exchange missed some of our messages: the gap fill skips them and the
                // requests among them go unanswered. Say so (the unanswered count alone does
                // not).
                if tally.notes.len() < ERROR_NOTES_MAX {
                    tally.notes.push(format!(
                        "{}: the exchange asked to resend MsgSeqNum {begin_no}..{}; requests in \
                         that range are skipped by our gap fill and go unanswered",
                        self.name,
                        next.saturating_sub(1)
                    ));
                }
                let wall = out.wall_at(mono_ns());
                let enc = &mut out.enc;
                enc.begin(b"4");
                let mut ts = Vec::new();
                fix::write_utc_timestamp(&mut ts, wall, TimePrecision::Millis);
                enc.header(&Header {
                    sender_comp_id: self.name.as_bytes(),
                    target_comp_id: out.target.as_bytes(),
                    msg_seq_num: begin_no,
                    sending_time_ns: wall,
                    poss_dup: true,
                    orig_sending_time: Some(&ts),
                    time_precision: TimePrecision::Millis,
                });
                enc.field(123, b"Y");
                enc.field_u64(36, next);
                self.end(out);
                self.dirty = true;
                return false;
            }
            b"4" => {
                if let Some(n) = msg.new_seq_no {
                    self.in_seq = n;
                }
                return false;
            }
            b"5" => {
                self.logout_received = true;
                if !self.logout_sent {
                    let text = String::from_utf8_lossy(msg.report.text.unwrap_or(b"")).into_owned();
                    let name = self.name.clone();
                    tally.error(format!("{name}: logged out by the exchange: {text}"));
                    self.begin(out, b"5", mono_ns());
                    self.end(out);
                    self.logout_sent = true;
                    self.dirty = true;
                }
                return false;
            }
            _ => {}
        }
        let r = msg.report;
        let parsed = clordid::parse(&tally.run, r.cl_ord_id);
        match r.msg_type {
            b'8' => {
                if let Some(p) = parsed {
                    self.on_execution_report(tally, &r, p, recv);
                }
            }
            b'9' => {
                if let Some(p) = parsed {
                    if matches!(p.kind, KIND_CANCEL | KIND_REPLACE) {
                        let outcome = if r.is_busy() {
                            Outcome::Shed
                        } else {
                            Outcome::Reject
                        };
                        tally.answer(p.k, outcome, recv);
                        self.orders.on_cancel_rejected(p.slot, p.k);
                    }
                }
            }
            b'r' => self.mass_cancel_done = true,
            b'j' => match parsed {
                Some(p) if r.is_busy() && p.kind != KIND_MASS_CANCEL => {
                    tally.answer(p.k, Outcome::Shed, recv);
                    if p.kind == KIND_NEW {
                        self.orders.on_gone(p.slot, p.k);
                    } else {
                        self.orders.on_cancel_rejected(p.slot, p.k);
                    }
                }
                _ => {
                    let text = String::from_utf8_lossy(r.text.unwrap_or(b"")).into_owned();
                    let name = self.name.clone();
                    tally.error(format!("{name}: business reject: {text}"));
                }
            },
            b'3' => {
                let text = String::from_utf8_lossy(r.text.unwrap_or(b"")).into_owned();
                let name = self.name.clone();
                tally.error(format!("{name}: session reject: {text}"));
            }
            _ => {}
        }
        true
    }

    fn on_execution_report(
        &mut self,
        tally: &mut Tally,
        r: &Report<'_>,
        p: clordid::Parsed,
        recv: u64,
    ) {
        let slot = p.slot;
        match r.exec_type {
            b'0' if p.kind == KIND_NEW => {
                tally.answer(p.k, Outcome::Ack, recv);
                self.orders.on_new_ack(slot, p.k);
            }
            b'8' => {
                let outcome = if r.is_busy() {
                    Outcome::Shed
                } else {
                    Outcome::Reject
                };
                if p.kind == KIND_NEW {
                    tally.answer(p.k, outcome, recv);
                    self.orders.on_gone(slot, p.k);
                } else {
                    tally.answer(p.k, outcome, recv);
                    self.orders.on_cancel_rejected(slot, p.k);
                }
            }
            b'F' | b'1' | b'2' => {
                if tally.count_fills {
                    tally.totals.fills += 1;
                }
                tally.second.fills += 1;
                if let Some(leaves) = r.leaves_qty {
                    self.orders.on_leaves(slot, p.k, leaves);
                }
            }
            b'4' => {
                if p.kind == KIND_CANCEL {
                    tally.answer(p.k, Outcome::Ack, recv);
                } else {
                    if p.k >= tally.k_measure && p.k < tally.k_end {
                        tally.totals.exchange_cancels += 1;
                    }
                    tally.second.exchange_cancels += 1;
                }
                self.orders.on_gone(slot, p.k);
            }
            b'5' if p.kind == KIND_REPLACE => {
                tally.answer(p.k, Outcome::Ack, recv);
                self.orders.on_replaced(slot, p.k, r.leaves_qty);
            }
            b'C' => self.orders.on_gone(slot, p.k),
            _ => {}
        }
    }
}

fn side_code(side: Side) -> u8 {
    match side {
        Side::Buy => b'1',
        Side::Sell => b'2',
    }
}

fn tif_code(tif: TimeInForce) -> u8 {
    match tif {
        TimeInForce::Day => b'0',
        TimeInForce::Gtc => b'1',
        TimeInForce::Ioc => b'3',
        TimeInForce::Fok => b'4',
        TimeInForce::Gtd => b'6',
    }
}
