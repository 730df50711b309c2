//! A gateway's remote exchange and two shards' engines wired in memory: the gateway's
//! commands go through the command log's bytes, each shard applies its log at increasing
//! offsets, and the outcomes come back through the event log's bytes.

use super::*;
use exchange::wire::Command;
use exchange::{
    ClOrdId, NewOrder, OrderState, Principal, RemoteConfig, ReportKind, Routed, TradingStatus,
};
use types::{CancelReason, Event, Side};

/// ACME and CRNK on shard 0, BOLT on shard 1.
const ACME: u32 = 0;
const BOLT: u32 = 1;
const CRNK: u32 = 2;
const SHARD_OF_SYMBOL: [u16; 3] = [0, 1, 0];
const GATEWAY: u16 = 1;

/// CLIENT1 and CLIENT2 of the default configuration (each its own firm).
const C1: Principal = Principal {
    originator: 0,
    firm: 0,
};
const C2: Principal = Principal {
    originator: 1,
    firm: 1,
};

/// What the gateway's edges were given (they take market data).
#[derive(Default)]
struct Sink(Vec<Sent>);

impl Outputs for Sink {
    const MARKET_DATA: bool = true;

    fn output(&mut self, o: &Output<'_>) {
        self.0.push(match o {
            Output::TradingStatus(s) => Sent::TradingStatus(*s),
            Output::Market(e) => Sent::Market(**e),
            o => Sent::Owned(OwnedOutput::of(o).expect("an owned output")),
        });
    }
}

/// One gateway, two shards, and their logs as bytes.
struct Cluster {
    cfg: server::Config,
    gateway: Exchange,
    seq: u64,
    shards: Vec<Shard>,
    /// By shard: the command log (offset = index).
    commands: Vec<Vec<Vec<u8>>>,
    /// By shard: the event log (position = index).
    events: Vec<Vec<Vec<u8>>>,
}

impl Cluster {
    fn new() -> Cluster {
        let cfg = server::Config::defaults();
        let gateway = Exchange::remote(
            Arc::new(cfg.exchange_config()),
            RemoteConfig {
                gateway: GATEWAY,
                originator_base: 0,
                originators: cfg.sessions.len() as u16,
                shard_of_symbol: SHARD_OF_SYMBOL.to_vec(),
                shards: 2,
            },
        );
        Cluster {
            shards: vec![Shard::new(&cfg), Shard::new(&cfg)],
            cfg,
            gateway,
            seq: 0,
            commands: vec![Vec::new(), Vec::new()],
            events: vec![Vec::new(), Vec::new()],
        }
    }

    /// Appends a record to shard `shard`'s command log.
    fn append(&mut self, shard: u16, r: &LogRecord) {
        let mut b = Vec::new();
        r.encode(&mut b);
        self.commands[shard as usize].push(b);
    }

    /// The gateway applies `input` as one record; its commands go to their logs; each shard
    /// applies what it has not yet, and publishes the outcomes, which the gateway applies.
    /// Everything the edges were given, in order.
    fn input(&mut self, input: Input<'_>) -> Vec<Sent> {
        self.seq += 1;
        let ts = 1_800_000_000_000_000_000 + self.seq;
        let mut out = Sink::default();
        self.gateway.apply(self.seq, ts, &input, &mut out);
        let mut routed: Vec<Routed> = Vec::new();
        self.gateway.take_commands(&mut routed);
        for r in &routed {
            self.append(
                r.shard,
                &LogRecord::Command {
                    ts_ns: ts,
                    cause: r.cause,
                    command: r.command,
                },
            );
        }
        out.0.extend(self.pump());
        out.0
    }

    /// Each shard applies the rest of its log (shard 0 first); the gateway applies each
    /// outcome as it is published.
    fn pump(&mut self) -> Vec<Sent> {
        let mut out = Sink::default();
        for s in 0..self.shards.len() {
            let from = self.shards[s].applied.map_or(0, |a| a as usize + 1);
            for offset in from..self.commands[s].len() {
                let r = LogRecord::decode(&self.commands[s][offset]).expect("a log record");
                let o = match self.shards[s].apply(offset as u64, &r) {
                    Applied::Outcome(o) | Applied::Continued(Some(o)) => o,
                    _ => continue,
                };
                let mut b = Vec::new();
                o.encode(&mut b);
                self.events[s].push(b);
                let position = self.events[s].len() as u64 - 1;
                let back = Outcome::decode(&self.events[s][position as usize]).expect("outcome");
                self.seq += 1;
                self.gateway
                    .apply_outcome(self.seq, s as u16, position, &back, &mut out);
            }
        }
        out.0
    }

    fn limit(
        &mut self,
        who: Principal,
        cl: &str,
        symbol: u32,
        side: Side,
        price: i64,
    ) -> Vec<Sent> {
        let order = NewOrder {
            cl_ord_id: ClOrdId::from(cl),
            symbol,
            side,
            price,
            qty: 10,
            ..NewOrder::BLANK
        };
        self.input(Input::New { who, order: &order })
    }

    /// The command log of shard `s` as `replay` takes it.
    fn log(&self, s: usize) -> Vec<(u64, Vec<u8>)> {
        self.commands[s]
            .iter()
            .enumerate()
            .map(|(i, b)| (i as u64, b.clone()))
            .collect()
    }
}

/// (id, owner, ClOrdID, kind, state) of each report.
fn reports(out: &[Sent]) -> Vec<(u64, u16, ClOrdId, ReportKind, OrderState)> {
    out.iter()
        .filter_map(|s| match s {
            Sent::Owned(OwnedOutput::Report {
                id, order, kind, ..
            }) => Some((*id, order.owner, order.cl_ord_id, *kind, order.state)),
            _ => None,
        })
        .collect()
}

fn mass_canceled(out: &[Sent]) -> Vec<(u16, u64, u64)> {
    out.iter()
        .filter_map(|s| match s {
            Sent::Owned(OwnedOutput::MassCanceled {
                to,
                request_seq,
                count,
                ..
            }) => Some((*to, *request_seq, *count)),
            _ => None,
        })
        .collect()
}

fn cl(s: &str) -> ClOrdId {
    ClOrdId::from(s)
}

/// A buy resting on shard 0 and a sell crossing it: both owners get their fills, under the
/// global ids their acceptances gave, and market data sees the trade with the same ids.
#[test]
fn a_cross_on_one_shard_fills_both_owners_with_global_ids() {
    let mut c = Cluster::new();
    // An order on shard 1 first: its engine's id 1 is global 1001.
    let out = c.limit(C1, "B1", BOLT, Side::Buy, 5_000);
    assert_eq!(
        reports(&out),
        vec![(1001, 0, cl("B1"), ReportKind::New, OrderState::Live)]
    );
    let out = c.limit(C1, "A1", ACME, Side::Buy, 10_000);
    assert_eq!(
        reports(&out),
        vec![(1000, 0, cl("A1"), ReportKind::New, OrderState::Live)]
    );
    let out = c.limit(C2, "S1", ACME, Side::Sell, 10_000);
    let fill = ReportKind::Fill {
        price: 10_000,
        qty: 10,
    };
    assert_eq!(
        reports(&out),
        vec![
            (2000, 1, cl("S1"), ReportKind::New, OrderState::Live),
            (1000, 0, cl("A1"), fill, OrderState::Filled),
            (2000, 1, cl("S1"), fill, OrderState::Filled),
        ],
        "{out:?}"
    );
    let trades: Vec<(u64, u64, u64)> = out
        .iter()
        .filter_map(|s| match s {
            Sent::Market(Event::Trade {
                trade_id,
                maker_id,
                taker_id,
                ..
            }) => Some((*trade_id, *maker_id, *taker_id)),
            _ => None,
        })
        .collect();
    assert_eq!(trades, vec![(1000, 1000, 2000)]);
    assert!(c.gateway.unanswered().is_empty());
    assert_eq!(c.gateway.outcome_offsets(), vec![Some(1), Some(0)]);
    // The filled orders are done at the gateway: their ClOrdIDs are not live any more.
    assert_eq!(c.gateway.live_orders_of(0).len(), 1);
    assert!(c.gateway.live_orders_of(1).is_empty());
}

/// A mass cancel of the firm's orders on every symbol reaches both shards and is answered
/// once, with the sum, after both shards' cancels.
#[test]
fn a_mass_cancel_across_shards_is_answered_once() {
    let mut c = Cluster::new();
    c.limit(C1, "A1", ACME, Side::Buy, 9_000);
    c.limit(C1, "A2", CRNK, Side::Sell, 11_000);
    c.limit(C1, "B1", BOLT, Side::Buy, 9_000);
    c.limit(C2, "X1", BOLT, Side::Buy, 9_000);
    let out = c.input(Input::MassCancel {
        who: C1,
        cl_ord_id: &cl("M1"),
        symbol: None,
        side: None,
    });
    let seq = c.seq - 2; // The request's record, before the two outcomes'.
    let canceled = ReportKind::Canceled(CancelReason::User);
    let mut got = reports(&out);
    got.sort_unstable_by_key(|r| r.0);
    assert_eq!(
        got,
        vec![
            (1000, 0, cl("A1"), canceled, OrderState::Canceled),
            (1001, 0, cl("B1"), canceled, OrderState::Canceled),
            (2000, 0, cl("A2"), canceled, OrderState::Canceled),
        ]
    );
    assert_eq!(mass_canceled(&out), vec![(0, seq, 3)]);
    assert!(
        matches!(
            out.last(),
            Some(Sent::Owned(OwnedOutput::MassCanceled { .. }))
        ),
        "the answer comes after every cancel: {out:?}"
    );
    assert_eq!(c.gateway.live_orders_of(1).len(), 1, "C2's order stays");
    assert!(c.gateway.unanswered().is_empty());
    // For one symbol: its shard only.
    let before = c.commands[0].len();
    let out = c.input(Input::MassCancel {
        who: C2,
        cl_ord_id: &cl("M2"),
        symbol: Some(BOLT),
        side: None,
    });
    assert_eq!(c.commands[0].len(), before);
    assert_eq!(mass_canceled(&out), vec![(1, c.seq - 1, 1)]);
}

/// A scenario on both shards: orders, a cross, a replace, cancels, a mass cancel, a status
/// request, a disconnect.
fn scenario(c: &mut Cluster) {
    c.limit(C1, "A1", ACME, Side::Buy, 10_000);
    c.limit(C1, "A2", ACME, Side::Buy, 9_900);
    c.limit(C2, "S1", ACME, Side::Sell, 10_000);
    c.limit(C2, "B1", BOLT, Side::Sell, 20_000);
    c.limit(C1, "B2", BOLT, Side::Buy, 19_000);
    let replace = exchange::Replace {
        cl_ord_id: cl("A3"),
        orig_cl_ord_id: cl("A2"),
        symbol: ACME,
        price: 9_800,
        qty: 20,
        stop_price: 0,
    };
    c.input(Input::Replace {
        who: C1,
        replace: &replace,
    });
    c.input(Input::Status {
        who: C1,
        cl_ord_id: &cl("A3"),
    });
    c.input(Input::Cancel {
        who: C2,
        cl_ord_id: &cl("X"),
        orig_cl_ord_id: &cl("B1"),
    });
    c.input(Input::CancelOwn {
        who: C1,
        cl_ord_id: &cl("M"),
        symbol: None,
        side: Some(Side::Buy),
    });
    c.limit(C2, "B3", BOLT, Side::Sell, 21_000);
    c.limit(C1, "A4", CRNK, Side::Buy, 5_000);
}

/// Two fresh shards fed the same log publish the same outcomes, byte for byte, and end with
/// the same state hash; so does the live replica they were published by.
#[test]
fn the_same_log_gives_the_same_outcomes_and_hash() {
    let mut c = Cluster::new();
    scenario(&mut c);
    for s in 0..2 {
        let log = c.log(s);
        assert!(log.len() >= 5, "shard {s}: {} commands", log.len());
        let (a, ha) = replay(&c.cfg, &log);
        let (b, hb) = replay(&c.cfg, &log);
        assert_eq!(a, b, "shard {s}");
        assert_eq!(ha, hb, "shard {s}");
        let published: Vec<Vec<u8>> = a.into_iter().map(|(_, o)| o).collect();
        assert_eq!(published, c.events[s], "shard {s}: as published");
        assert_eq!(ha, c.shards[s].state_hash(), "shard {s}");
    }
    assert_ne!(c.shards[0].state_hash(), c.shards[1].state_hash());
}

/// A shard restored from its snapshot has the same state hash and publishes the same
/// outcomes for the commands that follow.
#[test]
fn a_restored_snapshot_goes_on_as_the_original() {
    let mut c = Cluster::new();
    scenario(&mut c);
    let (bytes, hash) = c.shards[0].snapshot();
    assert_eq!(hash, c.shards[0].state_hash());
    let mut restored = Shard::restore(&c.cfg, &bytes).expect("restores");
    assert_eq!(restored.state_hash(), hash);
    assert_eq!(restored.applied, c.shards[0].applied);
    assert!(Shard::restore(&c.cfg, &bytes[..bytes.len() / 2]).is_err());
    let from = c.commands[0].len();
    let published = c.events[0].len();
    c.limit(C2, "S9", ACME, Side::Sell, 9_000);
    c.input(Input::Disconnected { who: C1 });
    c.limit(C1, "A9", CRNK, Side::Buy, 5_000);
    assert!(c.commands[0].len() > from);
    let mut again = Vec::new();
    for offset in from..c.commands[0].len() {
        let r = LogRecord::decode(&c.commands[0][offset]).expect("a log record");
        if let Applied::Outcome(o) = restored.apply(offset as u64, &r) {
            let mut b = Vec::new();
            o.encode(&mut b);
            again.push(b);
        }
    }
    assert_eq!(again, c.events[0][published..].to_vec());
    assert_eq!(restored.state_hash(), c.shards[0].state_hash());
}

/// Leadership is in the log: a takeover with the next epoch makes its engine the leader;
/// one with any other epoch changes nothing; only the leader's heartbeats and continuations
/// of the current epoch count; outcomes carry the epoch they were applied under.
#[test]
fn takeovers_need_the_next_epoch() {
    let cfg = server::Config::defaults();
    let mut s = Shard::new(&cfg);
    let takeover = |engine: &str, epoch| LogRecord::Takeover {
        engine: engine.into(),
        epoch,
    };
    assert!(matches!(s.apply(0, &takeover("a", 1)), Applied::Leader));
    assert_eq!((s.epoch, s.leader.as_deref()), (1, Some("a")));
    for (offset, (engine, epoch)) in [("b", 1), ("b", 0), ("b", 3)].into_iter().enumerate() {
        assert!(matches!(
            s.apply(1 + offset as u64, &takeover(engine, epoch)),
            Applied::Nothing
        ));
        assert_eq!((s.epoch, s.leader.as_deref()), (1, Some("a")));
    }
    let heartbeat = |engine: &str, epoch| LogRecord::Heartbeat {
        engine: engine.into(),
        epoch,
        ts_ns: 1_800_000_000_000_000_000,
    };
    assert!(matches!(s.apply(4, &heartbeat("b", 1)), Applied::Nothing));
    assert!(matches!(
        s.apply(5, &heartbeat("a", 1)),
        Applied::Heartbeat { engine, .. } if engine == "a"
    ));
    assert!(matches!(s.apply(6, &takeover("b", 2)), Applied::Leader));
    assert_eq!((s.epoch, s.leader.as_deref()), (2, Some("b")));
    assert!(matches!(s.apply(7, &heartbeat("a", 1)), Applied::Nothing));
    assert!(matches!(
        s.apply(8, &LogRecord::Continue { epoch: 1, ts_ns: 9 }),
        Applied::Continued(None)
    ));
    let status = LogRecord::Command {
        ts_ns: 1_800_000_000_000_000_001,
        cause: Cause {
            gateway: 1,
            record: 1,
            index: 0,
        },
        command: Command::Status {
            who: C1,
            cl_ord_id: cl("Z"),
        },
    };
    let Applied::Outcome(o) = s.apply(9, &status) else {
        panic!("a command has an outcome")
    };
    assert_eq!((o.epoch, o.offset), (2, 9));
    assert_eq!(s.applied, Some(9));
}

/// A command whose cause this shard applied already (its gateway's, at or before the last
/// (record, index)) is skipped: a restarted gateway sends its unanswered commands again.
#[test]
fn commands_sent_again_are_applied_once() {
    let cfg = server::Config::defaults();
    let mut s = Shard::new(&cfg);
    let command = |gateway, record, index| LogRecord::Command {
        ts_ns: 1_800_000_000_000_000_000,
        cause: Cause {
            gateway,
            record,
            index,
        },
        command: Command::Status {
            who: C1,
            cl_ord_id: cl("Z"),
        },
    };
    let mut offset = 0;
    let mut apply = |s: &mut Shard, r: LogRecord| {
        offset += 1;
        s.apply(offset, &r)
    };
    assert!(matches!(
        apply(&mut s, command(1, 5, 1)),
        Applied::Outcome(_)
    ));
    for (record, index) in [(5, 1), (5, 0), (4, 9)] {
        assert!(
            matches!(apply(&mut s, command(1, record, index)), Applied::Nothing),
            "({record}, {index})"
        );
    }
    assert!(matches!(
        apply(&mut s, command(1, 5, 2)),
        Applied::Outcome(_)
    ));
    assert!(matches!(
        apply(&mut s, command(1, 6, 0)),
        Applied::Outcome(_)
    ));
    // Another gateway's numbers are its own.
    assert!(matches!(
        apply(&mut s, command(2, 1, 0)),
        Applied::Outcome(_)
    ));
    // The engine's own commands (gateway 0) are never taken for copies.
    assert!(matches!(
        apply(&mut s, command(0, 0, 0)),
        Applied::Outcome(_)
    ));
    assert!(matches!(
        apply(&mut s, command(0, 0, 0)),
        Applied::Outcome(_)
    ));
    // The marks survive a snapshot.
    let (bytes, _) = s.snapshot();
    let mut r = Shard::restore(&cfg, &bytes).expect("restores");
    assert!(matches!(r.apply(20, &command(1, 6, 0)), Applied::Nothing));
    assert!(matches!(
        r.apply(21, &command(2, 1, 1)),
        Applied::Outcome(_)
    ));
}

/// The end of the trading day, which every shard reaches on its own, reaches the gateway's
/// edges once: DAY orders expire on each shard, the market closes and (the next day starting
/// at once) opens again.
#[test]
fn the_end_of_the_day_is_told_once() {
    let mut c = Cluster::new();
    c.limit(C1, "A1", ACME, Side::Buy, 10_000);
    c.limit(C2, "B1", BOLT, Side::Sell, 20_000);
    // Time passes by the leader's heartbeats.
    for s in 0..2 {
        c.append(
            s,
            &LogRecord::Takeover {
                engine: "a".into(),
                epoch: 1,
            },
        );
    }
    assert!(c.pump().is_empty());
    // The default end of the day, 21:00:00 UTC, of the day of the orders (stamped 08:00).
    let hour = 3_600 * 1_000_000_000u64;
    let start = 1_800_000_000_000_000_000u64;
    let end = start - start % (24 * hour) + 21 * hour;
    assert!(end > c.seq + start);
    for s in 0..2 {
        c.append(
            s,
            &LogRecord::Heartbeat {
                engine: "a".into(),
                epoch: 1,
                ts_ns: end + s as u64,
            },
        );
    }
    let out = c.pump();
    let statuses: Vec<TradingStatus> = out
        .iter()
        .filter_map(|s| match s {
            Sent::TradingStatus(s) => Some(*s),
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        vec![TradingStatus::Closed, TradingStatus::Open],
        "{out:?}"
    );
    assert_eq!(c.gateway.trading_status(), TradingStatus::Open);
    let expired = ReportKind::Canceled(CancelReason::Expired);
    assert_eq!(
        reports(&out),
        vec![
            (1000, 0, cl("A1"), expired, OrderState::Expired),
            (1001, 1, cl("B1"), expired, OrderState::Expired),
        ]
    );
}

/// A replace the engine refuses leaves its ClOrdID to a new order; one it accepts moves the
/// order to its ClOrdID, which a cancel then names.
#[test]
fn replaces_refused_and_accepted() {
    let mut c = Cluster::new();
    c.limit(C1, "A1", ACME, Side::Buy, 10_000);
    let sell = NewOrder {
        cl_ord_id: cl("S1"),
        symbol: ACME,
        side: Side::Sell,
        price: 10_000,
        qty: 4,
        ..NewOrder::BLANK
    };
    c.input(Input::New {
        who: C2,
        order: &sell,
    });
    let replace = |new: &str, qty| exchange::Replace {
        cl_ord_id: cl(new),
        orig_cl_ord_id: cl("A1"),
        symbol: ACME,
        price: 9_900,
        qty,
        stop_price: 0,
    };
    let out = c.input(Input::Replace {
        who: C1,
        replace: &replace("A2", 4),
    });
    assert!(
        matches!(
            &out[..],
            [Sent::Owned(OwnedOutput::CancelRejected {
                to: 0,
                replace: true,
                reason: exchange::Reject::ReplaceQtyAtOrBelowFilled,
                order: Some((1000, exchange::OrderStatus::PartiallyFilled)),
                ..
            })]
        ),
        "{out:?}"
    );
    let out = c.limit(C1, "A2", ACME, Side::Buy, 9_000);
    assert_eq!(
        reports(&out),
        vec![(3000, 0, cl("A2"), ReportKind::New, OrderState::Live)]
    );
    let out = c.input(Input::Replace {
        who: C1,
        replace: &replace("A3", 8),
    });
    assert_eq!(
        reports(&out),
        vec![(1000, 0, cl("A3"), ReportKind::Replaced, OrderState::Live)]
    );
    let out = c.input(Input::Cancel {
        who: C1,
        cl_ord_id: &cl("X1"),
        orig_cl_ord_id: &cl("A3"),
    });
    assert_eq!(
        reports(&out),
        vec![(
            1000,
            0,
            cl("A3"),
            ReportKind::Canceled(CancelReason::User),
            OrderState::Canceled
        )]
    );
    assert_eq!(c.gateway.live_orders_of(0).len(), 1);
    assert!(c.gateway.unanswered().is_empty());
}
