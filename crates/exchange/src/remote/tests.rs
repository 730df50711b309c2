use super::*;
use crate::{Config, NewOrder, OrderState, Replace, ReportKind};
use std::sync::Arc;
use types::{CancelReason, Event, Instrument, Side, Symbol};

/// This gateway: number 2, originators 1024..1028 in the cluster (local 0..4).
const GATEWAY: u16 = 2;
const BASE: u16 = 1024;
const ORIGINATORS: u16 = 4;
/// ACME and CRNK on shard 0, BOLT on shard 1; symbol 3 is in no shard.
const SHARDS: [u16; 3] = [0, 1, 0];
const UNKNOWN_SYMBOL: u32 = 3;

const ALICE: Principal = Principal {
    originator: 1,
    firm: 0,
};
const BOB: Principal = Principal {
    originator: 2,
    firm: 1,
};

fn config() -> Arc<Config> {
    let inst = |s: &str| Instrument {
        symbol: Symbol::new(s).expect("a symbol"),
        tick: 1,
        lot: 1,
    };
    let mut c = Config::new(
        vec![inst("ACME"), inst("BOLT"), inst("CRNK")],
        vec![vec![1], vec![2]],
        1 << 10,
    );
    // Alice (local 1) asked for her orders to be canceled when she disconnects; Bob and
    // local 3 (past the end) did not.
    c.cancel_on_disconnect = vec![false, true, false];
    Arc::new(c)
}

/// Everything an edge was given: outputs, and the copies it was `tee`d.
#[derive(Default)]
struct Sink<const MD: bool> {
    out: Vec<Sent>,
    tee: Vec<OwnedOutput>,
}

impl<const MD: bool> Outputs for Sink<MD> {
    const MARKET_DATA: bool = MD;

    fn output(&mut self, o: &Output<'_>) {
        self.out.push(match o {
            Output::TradingStatus(s) => Sent::TradingStatus(*s),
            Output::Market(e) => Sent::Market(**e),
            o => Sent::Owned(OwnedOutput::of(o).expect("an owned output")),
        });
    }

    fn tee(&mut self, o: &Output<'_>) {
        self.tee.push(OwnedOutput::of(o).expect("an owned output"));
    }
}

/// A gateway's exchange, one input (or outcome) a record.
struct Gateway {
    x: Exchange,
    seq: u64,
}

impl Gateway {
    fn new() -> Gateway {
        Gateway {
            x: Exchange::remote(
                config(),
                RemoteConfig {
                    gateway: GATEWAY,
                    originator_base: BASE,
                    originators: ORIGINATORS,
                    shard_of_symbol: SHARDS.to_vec(),
                    shards: 2,
                },
            ),
            seq: 0,
        }
    }

    /// Applies `inputs` as one record; what was answered here.
    fn record(&mut self, inputs: &[Input<'_>]) -> Vec<Sent> {
        self.seq += 1;
        let mut s = Sink::<false>::default();
        for i in inputs {
            self.x.apply(self.seq, 1_000 + self.seq, i, &mut s);
        }
        assert!(s.tee.is_empty());
        s.out
    }

    fn input(&mut self, i: Input<'_>) -> Vec<Sent> {
        self.record(&[i])
    }

    fn take(&mut self) -> Vec<Routed> {
        let mut v = Vec::new();
        self.x.take_commands(&mut v);
        v
    }

    fn outcome_to<const MD: bool>(&mut self, shard: u16, position: u64, o: &Outcome) -> Sink<MD> {
        self.seq += 1;
        let mut s = Sink::<MD>::default();
        self.x.apply_outcome(self.seq, shard, position, o, &mut s);
        s
    }

    /// Applies an outcome (an edge without market data); its outputs.
    fn outcome(&mut self, shard: u16, position: u64, o: &Outcome) -> Vec<Sent> {
        let s = self.outcome_to::<false>(shard, position, o);
        assert!(s.tee.is_empty(), "{:?}", s.tee);
        s.out
    }
}

fn limit(cl: &str, symbol: u32, side: Side, price: i64, qty: u64) -> NewOrder {
    NewOrder {
        cl_ord_id: ClOrdId::from(cl),
        symbol,
        side,
        price,
        qty,
        ..NewOrder::BLANK
    }
}

fn cl(s: &str) -> ClOrdId {
    ClOrdId::from(s)
}

fn cause(record: u64, index: u16) -> Cause {
    Cause {
        gateway: GATEWAY,
        record,
        index,
    }
}

fn outcome(offset: u64, cause: Cause, outputs: Vec<Sent>) -> Outcome {
    Outcome {
        epoch: 1,
        offset,
        ts_ns: 5,
        part: 0,
        last: true,
        cause,
        outputs,
    }
}

/// An engine's record of `order` for cluster originator `owner`.
fn record_of(owner: u16, order: &NewOrder, cum: u64, state: OrderState) -> OrderRecord {
    OrderRecord {
        owner,
        account: 1,
        symbol: order.symbol,
        side: order.side,
        ord_type: order.ord_type,
        tif: order.tif,
        price: order.price,
        cl_ord_id: order.cl_ord_id,
        order_qty: order.qty,
        cum_qty: cum,
        leaves_qty: if state == OrderState::Live {
            order.qty - cum
        } else {
            0
        },
        notional: (cum as i128) * order.price as i128,
        state,
    }
}

fn report(id: u64, order: OrderRecord, kind: ReportKind) -> Sent {
    Sent::Owned(OwnedOutput::Report {
        id,
        cl_ord_id: order.cl_ord_id,
        order,
        n: 0,
        kind,
        orig_cl_ord_id: None,
        ext: Default::default(),
    })
}

fn mass_canceled(to: u16, cl_ord_id: &str, symbol: Option<u32>, count: u64) -> Sent {
    Sent::Owned(OwnedOutput::MassCanceled {
        to,
        cl_ord_id: cl(cl_ord_id),
        symbol,
        side: None,
        request_seq: 77,
        count,
    })
}

/// The (id, local owner, ClOrdID, kind, state) of a report, or a panic.
fn report_parts(s: &Sent) -> (u64, u16, ClOrdId, ReportKind, OrderState) {
    match s {
        Sent::Owned(OwnedOutput::Report {
            id, order, kind, ..
        }) => (*id, order.owner, order.cl_ord_id, *kind, order.state),
        s => panic!("not a report: {s:?}"),
    }
}

/// A new order goes to its symbol's shard as the cluster's originator, numbered by its record
/// and its place in it; nothing is answered here.
#[test]
fn new_orders_go_to_their_symbols_shard() {
    let mut g = Gateway::new();
    let (a, b, c) = (
        limit("A", 1, Side::Buy, 100, 5),
        limit("B", 0, Side::Sell, 90, 5),
        limit("C", 2, Side::Buy, 80, 5),
    );
    assert!(g
        .input(Input::New {
            who: ALICE,
            order: &a
        })
        .is_empty());
    // Two inputs in one record: numbered 0 and 1 in it.
    assert!(g
        .record(&[
            Input::New {
                who: BOB,
                order: &b
            },
            Input::New {
                who: ALICE,
                order: &c
            },
        ])
        .is_empty());
    let global = |p: Principal| Principal {
        originator: p.originator + BASE,
        firm: p.firm,
    };
    let want = vec![
        Routed {
            shard: 1,
            cause: cause(1, 0),
            command: Command::New {
                who: global(ALICE),
                order: a,
            },
        },
        Routed {
            shard: 0,
            cause: cause(2, 0),
            command: Command::New {
                who: global(BOB),
                order: b,
            },
        },
        Routed {
            shard: 0,
            cause: cause(2, 1),
            command: Command::New {
                who: global(ALICE),
                order: c,
            },
        },
    ];
    assert_eq!(g.take(), want);
    assert!(g.take().is_empty(), "taken once");
    assert_eq!(g.x.unanswered(), want, "in cause order");
    assert!(g.x.is_remote());
}

/// A cancel, replace or status request goes to the shard of the order its ClOrdID names,
/// before the engine has answered the order and after.
#[test]
fn requests_about_an_order_go_to_its_shard() {
    let mut g = Gateway::new();
    let a = limit("A", 1, Side::Buy, 100, 5);
    g.input(Input::New {
        who: ALICE,
        order: &a,
    });
    let replace = Replace {
        cl_ord_id: cl("A2"),
        orig_cl_ord_id: cl("A"),
        symbol: 1,
        price: 101,
        qty: 5,
        stop_price: 0,
    };
    let requests = |g: &mut Gateway| {
        g.input(Input::Status {
            who: ALICE,
            cl_ord_id: &cl("A"),
        });
        g.input(Input::Replace {
            who: ALICE,
            replace: &replace,
        });
        g.input(Input::Cancel {
            who: ALICE,
            cl_ord_id: &cl("X"),
            orig_cl_ord_id: &cl("A"),
        });
    };
    requests(&mut g);
    let sent = g.take();
    assert_eq!(sent.len(), 4);
    assert!(sent.iter().all(|r| r.shard == 1), "{sent:?}");
    assert!(matches!(sent[1].command, Command::Status { .. }));
    assert!(matches!(sent[2].command, Command::Replace { .. }));
    assert!(matches!(sent[3].command, Command::Cancel { .. }));
    // The engine accepts it: the same routes, and the order is known by its global id.
    let rec = record_of(BASE + 1, &a, 0, OrderState::Live);
    let out = g.outcome(
        1,
        0,
        &outcome(0, cause(1, 0), vec![report(4, rec, ReportKind::New)]),
    );
    assert_eq!(out.len(), 1);
    assert_eq!(
        report_parts(&out[0]),
        (
            4 * ORDER_ID_STRIDE + 1,
            1,
            cl("A"),
            ReportKind::New,
            OrderState::Live
        )
    );
    assert_eq!(g.x.order_of(1, b"A"), Some(4001));
    assert_eq!(g.x.order(4001).map(|o| o.owner), Some(1));
    assert_eq!(g.x.live_orders_of(1).len(), 1);
    assert!(g.x.live_orders_of(2).is_empty());
    requests(&mut g);
    let sent = g.take();
    assert_eq!(sent.len(), 3);
    assert!(sent.iter().all(|r| r.shard == 1), "{sent:?}");
}

/// What this gateway knows it can answer: another originator's order, an order never sent,
/// an unknown symbol, a ClOrdID of a live order. Nothing goes to an engine.
#[test]
fn what_the_gateway_knows_is_answered_here() {
    let mut g = Gateway::new();
    let a = limit("A", 1, Side::Buy, 100, 5);
    g.input(Input::New {
        who: ALICE,
        order: &a,
    });
    g.take();
    // Bob cannot name Alice's order; nobody can name one never sent.
    for (who, orig) in [(BOB, "A"), (ALICE, "Z")] {
        let out = g.input(Input::Cancel {
            who,
            cl_ord_id: &cl("X"),
            orig_cl_ord_id: &cl(orig),
        });
        assert!(
            matches!(
                &out[..],
                [Sent::Owned(OwnedOutput::CancelRejected {
                    to,
                    replace: false,
                    reason: Reject::UnknownOrder,
                    order: None,
                    ..
                })] if *to == who.originator
            ),
            "{out:?}"
        );
        let replace = Replace {
            cl_ord_id: cl("Y"),
            orig_cl_ord_id: cl(orig),
            symbol: 1,
            price: 100,
            qty: 5,
            stop_price: 0,
        };
        let out = g.input(Input::Replace {
            who,
            replace: &replace,
        });
        assert!(
            matches!(
                &out[..],
                [Sent::Owned(OwnedOutput::CancelRejected {
                    replace: true,
                    reason: Reject::UnknownOrder,
                    ..
                })]
            ),
            "{out:?}"
        );
        let out = g.input(Input::Status {
            who,
            cl_ord_id: &cl(orig),
        });
        assert!(
            matches!(
                &out[..],
                [Sent::Owned(OwnedOutput::StatusUnknown { to, cl_ord_id, .. })]
                    if *to == who.originator && *cl_ord_id == cl(orig)
            ),
            "{out:?}"
        );
    }
    let out = g.input(Input::New {
        who: ALICE,
        order: &limit("U", UNKNOWN_SYMBOL, Side::Buy, 1, 1),
    });
    assert!(
        matches!(
            &out[..],
            [Sent::Owned(OwnedOutput::NewRejected {
                to: 1,
                reason: Reject::UnknownSymbol,
                ..
            })]
        ),
        "{out:?}"
    );
    // "A" is live (sent, not answered yet) for Alice, not for Bob.
    let out = g.input(Input::New {
        who: ALICE,
        order: &limit("A", 0, Side::Sell, 100, 5),
    });
    assert!(
        matches!(
            &out[..],
            [Sent::Owned(OwnedOutput::NewRejected {
                to: 1,
                reason: Reject::DuplicateClOrdId,
                ..
            })]
        ),
        "{out:?}"
    );
    assert!(g.take().is_empty(), "nothing was sent");
    assert!(g
        .input(Input::New {
            who: BOB,
            order: &limit("A", 0, Side::Sell, 100, 5),
        })
        .is_empty());
    assert_eq!(g.take().len(), 1);
    // Once Alice's order is done, its ClOrdID goes to the engine again (which remembers).
    let rec = record_of(BASE + 1, &a, 0, OrderState::Canceled);
    g.outcome(
        1,
        0,
        &outcome(
            0,
            cause(1, 0),
            vec![report(1, rec, ReportKind::Canceled(CancelReason::Ioc))],
        ),
    );
    assert!(g
        .input(Input::New {
            who: ALICE,
            order: &a
        })
        .is_empty());
    assert_eq!(g.take().len(), 1);
}

/// A mass cancel for every symbol goes to every shard and is answered once, with the sum,
/// after the last shard's end; one for a symbol goes to its shard only; one for a symbol in
/// no shard goes to every shard (each answers "none").
#[test]
fn mass_cancels_are_answered_once_with_the_sum() {
    let mut g = Gateway::new();
    let out = g.input(Input::MassCancel {
        who: ALICE,
        cl_ord_id: &cl("M"),
        symbol: None,
        side: None,
    });
    assert!(out.is_empty());
    let sent = g.take();
    assert_eq!(
        sent.iter().map(|r| (r.shard, r.cause)).collect::<Vec<_>>(),
        vec![(0, cause(1, 0)), (1, cause(1, 1))]
    );
    let canceled = |id, symbol| {
        let rec = record_of(
            BASE + 1,
            &limit("O", symbol, Side::Buy, 10, 5),
            0,
            OrderState::Canceled,
        );
        report(id, rec, ReportKind::Canceled(CancelReason::User))
    };
    // Shard 1 ends first: its reports pass, its end waits for shard 0's.
    let out = g.outcome(
        1,
        0,
        &outcome(
            0,
            cause(1, 1),
            vec![canceled(1, 1), mass_canceled(BASE + 1, "M", None, 1)],
        ),
    );
    assert_eq!(out.len(), 1);
    assert_eq!(report_parts(&out[0]).0, 1001);
    assert_eq!(g.x.unanswered().len(), 1);
    let out = g.outcome(
        0,
        0,
        &outcome(
            0,
            cause(1, 0),
            vec![
                canceled(1, 0),
                canceled(2, 2),
                mass_canceled(BASE + 1, "M", None, 2),
            ],
        ),
    );
    assert_eq!(out.len(), 3, "{out:?}");
    assert!(
        matches!(
            &out[2],
            Sent::Owned(OwnedOutput::MassCanceled {
                to: 1,
                symbol: None,
                request_seq: 1,
                count: 3,
                ..
            })
        ),
        "{out:?}"
    );
    assert!(g.x.unanswered().is_empty());
    // For one symbol: its shard only, answered as the engine says (the gateway's record).
    g.input(Input::CancelOwn {
        who: ALICE,
        cl_ord_id: &cl("M2"),
        symbol: Some(1),
        side: Some(Side::Buy),
    });
    let sent = g.take();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].shard, 1);
    assert!(matches!(
        sent[0].command,
        Command::MassCancel {
            own: true,
            symbol: Some(1),
            side: Some(Side::Buy),
            ..
        }
    ));
    let out = g.outcome(
        1,
        1,
        &outcome(
            1,
            sent[0].cause,
            vec![mass_canceled(BASE + 1, "M2", Some(1), 0)],
        ),
    );
    assert!(
        matches!(
            &out[..],
            [Sent::Owned(OwnedOutput::MassCanceled {
                to: 1,
                request_seq,
                count: 0,
                ..
            })] if *request_seq == sent[0].cause.record
        ),
        "{out:?}"
    );
    g.input(Input::MassCancel {
        who: ALICE,
        cl_ord_id: &cl("M3"),
        symbol: Some(UNKNOWN_SYMBOL),
        side: None,
    });
    assert_eq!(
        g.take().iter().map(|r| r.shard).collect::<Vec<_>>(),
        vec![0, 1]
    );
}

/// A disconnect goes to every shard for an originator with cancel on disconnect only.
#[test]
fn disconnects_go_to_every_shard_only_with_cancel_on_disconnect() {
    let mut g = Gateway::new();
    for who in [
        BOB,
        Principal {
            originator: 3,
            firm: 0,
        },
    ] {
        assert!(g.input(Input::Disconnected { who }).is_empty());
    }
    assert!(g.take().is_empty());
    g.input(Input::Disconnected { who: ALICE });
    let sent = g.take();
    assert_eq!(
        sent.iter().map(|r| (r.shard, r.cause)).collect::<Vec<_>>(),
        vec![(0, cause(3, 0)), (1, cause(3, 1))]
    );
    assert!(sent.iter().all(|r| r.command
        == Command::Disconnected {
            who: Principal {
                originator: BASE + 1,
                firm: 0
            }
        }));
    // Time and continuations are each engine's own.
    g.record(&[Input::Tick, Input::Continue]);
    assert!(g.take().is_empty());
}

/// This gateway's outputs come out for its local originators with global ids; another
/// gateway's reports are only `tee`d (under an owner none of ours has), its other outputs
/// dropped.
#[test]
fn outcomes_are_translated_and_other_gateways_outputs_kept_out() {
    let mut g = Gateway::new();
    let a = limit("A", 1, Side::Buy, 100, 5);
    let mine = record_of(BASE + 1, &a, 2, OrderState::Live);
    let theirs = |owner| {
        record_of(
            owner,
            &limit("T", 1, Side::Sell, 100, 5),
            2,
            OrderState::Live,
        )
    };
    let fill = ReportKind::Fill { price: 100, qty: 2 };
    let o = outcome(
        0,
        Cause {
            gateway: 1,
            record: 9,
            index: 0,
        },
        vec![
            report(7, theirs(BASE - 1), fill),
            report(8, mine, fill),
            report(9, theirs(BASE + ORIGINATORS), fill),
            Sent::Owned(OwnedOutput::NewRejected {
                to: 5,
                order: a,
                reason: Reject::InvalidPrice,
                n: 0,
            }),
            Sent::Owned(OwnedOutput::CancelRejected {
                to: BASE + 2,
                cl_ord_id: cl("X"),
                orig_cl_ord_id: cl("B"),
                replace: false,
                reason: Reject::UnknownOrder,
                order: Some((6, crate::OrderStatus::New)),
            }),
            Sent::Owned(OwnedOutput::StatusUnknown {
                to: BASE + 3,
                cl_ord_id: cl("S"),
                n: 1,
            }),
            Sent::Owned(OwnedOutput::StatusUnknown {
                to: BASE + ORIGINATORS,
                cl_ord_id: cl("S"),
                n: 1,
            }),
        ],
    );
    let s = g.outcome_to::<false>(1, 0, &o);
    assert_eq!(s.out.len(), 3, "{:?}", s.out);
    assert_eq!(
        report_parts(&s.out[0]),
        (8001, 1, cl("A"), fill, OrderState::Live)
    );
    assert!(
        matches!(
            &s.out[1],
            Sent::Owned(OwnedOutput::CancelRejected {
                to: 2,
                order: Some((6001, crate::OrderStatus::New)),
                ..
            })
        ),
        "{:?}",
        s.out
    );
    assert!(
        matches!(
            &s.out[2],
            Sent::Owned(OwnedOutput::StatusUnknown { to: 3, n: 1, .. })
        ),
        "{:?}",
        s.out
    );
    let teed: Vec<(u64, u16)> = s
        .tee
        .iter()
        .map(|t| match t {
            OwnedOutput::Report { id, order, .. } => (*id, order.owner),
            t => panic!("only reports are teed: {t:?}"),
        })
        .collect();
    assert_eq!(teed, vec![(7001, u16::MAX), (9001, u16::MAX)]);
    // Another gateway's orders are not this gateway's to route.
    assert!(g.x.order(7001).is_none());
    assert_eq!(g.x.order(8001).map(|r| r.owner), Some(1));
}

/// An outcome at or before the last one applied from its shard, or of an older epoch, is a
/// copy (a new active publishing again): ignored. Offsets are per shard.
#[test]
fn stale_outcomes_are_ignored() {
    let mut g = Gateway::new();
    let status = |to| {
        vec![Sent::Owned(OwnedOutput::StatusUnknown {
            to,
            cl_ord_id: cl("S"),
            n: 0,
        })]
    };
    let other = Cause {
        gateway: 1,
        record: 1,
        index: 0,
    };
    let at = |epoch, offset| Outcome {
        epoch,
        ..outcome(offset, other, status(BASE))
    };
    assert_eq!(g.outcome(0, 10, &at(1, 10)).len(), 1);
    assert!(g.outcome(0, 11, &at(1, 10)).is_empty(), "the same offset");
    assert!(g.outcome(0, 12, &at(1, 9)).is_empty(), "an earlier offset");
    assert_eq!(g.outcome(1, 0, &at(1, 3)).len(), 1, "another shard's");
    assert_eq!(g.outcome(0, 13, &at(2, 11)).len(), 1, "a new epoch");
    assert!(
        g.outcome(0, 14, &at(1, 12)).is_empty(),
        "an older epoch, even at a later offset"
    );
    assert_eq!(g.outcome(0, 15, &at(2, 12)).len(), 1);
    // Positions follow what was read, ignored or not, and never go back.
    assert_eq!(g.x.outcome_offsets(), vec![Some(15), Some(0)]);
    assert!(g.outcome(0, 3, &at(2, 12)).is_empty());
    assert_eq!(g.x.outcome_offsets(), vec![Some(15), Some(0)]);
}

/// Commands stay unanswered until their own outcome arrives (from their shard, of this
/// gateway); the positions read are what a restarted reader resumes after.
#[test]
fn unanswered_commands_empty_as_their_outcomes_arrive() {
    let mut g = Gateway::new();
    assert!(g.x.unanswered().is_empty());
    assert_eq!(g.x.outcome_offsets(), vec![None, None]);
    g.input(Input::New {
        who: ALICE,
        order: &limit("A", 0, Side::Buy, 100, 5),
    });
    g.input(Input::New {
        who: ALICE,
        order: &limit("B", 1, Side::Buy, 100, 5),
    });
    g.input(Input::MassCancel {
        who: BOB,
        cl_ord_id: &cl("M"),
        symbol: None,
        side: None,
    });
    let sent = g.take();
    assert_eq!(sent.len(), 4);
    assert_eq!(g.x.unanswered(), sent);
    // Another gateway's cause with the same numbers answers nothing of ours; nor does our
    // cause from another shard.
    let theirs = Cause {
        gateway: 1,
        ..cause(1, 0)
    };
    g.outcome(0, 0, &outcome(0, theirs, Vec::new()));
    g.outcome(1, 0, &outcome(0, cause(1, 0), Vec::new()));
    assert_eq!(g.x.unanswered(), sent);
    g.outcome(0, 1, &outcome(1, cause(1, 0), Vec::new()));
    assert_eq!(g.x.unanswered(), sent[1..].to_vec());
    g.outcome(1, 5, &outcome(2, cause(3, 1), Vec::new()));
    assert_eq!(g.x.unanswered(), vec![sent[1], sent[2]]);
    assert_eq!(g.x.outcome_offsets(), vec![Some(1), Some(5)]);
    g.outcome(1, 6, &outcome(3, cause(2, 0), Vec::new()));
    g.outcome(0, 7, &outcome(4, cause(3, 0), Vec::new()));
    assert!(g.x.unanswered().is_empty());
    assert_eq!(g.x.outcome_offsets(), vec![Some(7), Some(6)]);
}

/// Trades and level changes reach only an edge that takes market data, with the trade's and
/// the orders' ids made global.
#[test]
fn market_data_reaches_only_market_data_sinks_with_global_ids() {
    let mut g = Gateway::new();
    let trade = Event::Trade {
        trade_id: 3,
        symbol: 1,
        price: 100,
        qty: 2,
        maker_id: 4,
        taker_id: 5,
        maker_account: 1,
        taker_account: 2,
        taker_side: Side::Sell,
        maker_leaves: 3,
        taker_leaves: 0,
    };
    let level = Event::Level {
        symbol: 1,
        side: Side::Buy,
        price: 100,
        qty: 3,
        orders: 1,
    };
    let o = |offset| {
        outcome(
            offset,
            Cause::default(),
            vec![Sent::Market(trade), Sent::Market(level)],
        )
    };
    let s = g.outcome_to::<false>(1, 0, &o(0));
    assert!(s.out.is_empty() && s.tee.is_empty());
    let s = g.outcome_to::<true>(1, 1, &o(1));
    let got: Vec<Event> = s
        .out
        .iter()
        .map(|x| match x {
            Sent::Market(e) => *e,
            x => panic!("{x:?}"),
        })
        .collect();
    let global_trade = Event::Trade {
        trade_id: 3001,
        symbol: 1,
        price: 100,
        qty: 2,
        maker_id: 4001,
        taker_id: 5001,
        maker_account: 1,
        taker_account: 2,
        taker_side: Side::Sell,
        maker_leaves: 3,
        taker_leaves: 0,
    };
    assert_eq!(got, vec![global_trade, level]);
}

/// Each change of the market's status is output once, though every shard says it: a close
/// until the next day's start, and a day whose next one starts at once (a close and an open in
/// one outcome of each shard).
#[test]
fn trading_status_changes_are_output_once() {
    let mut g = Gateway::new();
    assert_eq!(g.x.trading_status(), TradingStatus::Open);
    let o = |offset, s: &[TradingStatus]| {
        outcome(
            offset,
            Cause::default(),
            s.iter().map(|s| Sent::TradingStatus(*s)).collect(),
        )
    };
    let (closed, open) = (TradingStatus::Closed, TradingStatus::Open);
    let statuses = |out: Vec<Sent>| -> Vec<TradingStatus> {
        out.iter()
            .map(|s| match s {
                Sent::TradingStatus(s) => *s,
                s => panic!("{s:?}"),
            })
            .collect()
    };
    assert_eq!(statuses(g.outcome(0, 0, &o(0, &[closed]))), vec![closed]);
    assert_eq!(g.x.trading_status(), closed);
    assert!(g.outcome(1, 0, &o(0, &[closed])).is_empty());
    assert_eq!(statuses(g.outcome(1, 1, &o(1, &[open]))), vec![open]);
    assert!(g.outcome(0, 1, &o(1, &[open])).is_empty());
    assert_eq!(g.x.trading_status(), open);
    // The next day's end, the day after starting at once.
    assert_eq!(
        statuses(g.outcome(1, 2, &o(2, &[closed, open]))),
        vec![closed, open]
    );
    assert!(g.outcome(0, 2, &o(2, &[closed, open])).is_empty());
    assert_eq!(g.x.trading_status(), open);
    // A copy of an outcome (the same offset) is no new change.
    assert!(g.outcome(0, 3, &o(2, &[closed, open])).is_empty());
    assert_eq!(
        statuses(g.outcome(0, 4, &o(3, &[closed, open]))),
        vec![closed, open]
    );
}

/// A replace the engine refused leaves its ClOrdID free (the engine did not take it), while
/// the order keeps its own; one it accepted moves the order to the new ClOrdID.
#[test]
fn a_refused_replace_frees_its_clordid() {
    let mut g = Gateway::new();
    let a = limit("A", 1, Side::Buy, 100, 5);
    g.input(Input::New {
        who: ALICE,
        order: &a,
    });
    let rec = record_of(BASE + 1, &a, 0, OrderState::Live);
    g.outcome(
        1,
        0,
        &outcome(
            0,
            cause(1, 0),
            vec![report(4, rec.clone(), ReportKind::New)],
        ),
    );
    let replace = |new: &str, orig: &str| Replace {
        cl_ord_id: cl(new),
        orig_cl_ord_id: cl(orig),
        symbol: 1,
        price: 100,
        qty: 1,
        stop_price: 0,
    };
    let r = replace("A2", "A");
    g.input(Input::Replace {
        who: ALICE,
        replace: &r,
    });
    let sent = g.take();
    assert_eq!(sent.len(), 2);
    let out = g.outcome(
        1,
        1,
        &outcome(
            1,
            sent[1].cause,
            vec![Sent::Owned(OwnedOutput::CancelRejected {
                to: BASE + 1,
                cl_ord_id: cl("A2"),
                orig_cl_ord_id: cl("A"),
                replace: true,
                reason: Reject::ReplaceQtyAtOrBelowFilled,
                order: Some((4, crate::OrderStatus::New)),
            })],
        ),
    );
    assert!(
        matches!(
            &out[..],
            [Sent::Owned(OwnedOutput::CancelRejected {
                to: 1,
                order: Some((4001, crate::OrderStatus::New)),
                ..
            })]
        ),
        "{out:?}"
    );
    // "A2" names nothing: a new order may take it (the engine decides), a cancel of it is
    // unknown here; "A" still names the order.
    assert_eq!(g.x.order_of(1, b"A2"), None);
    let out = g.input(Input::Cancel {
        who: ALICE,
        cl_ord_id: &cl("X"),
        orig_cl_ord_id: &cl("A2"),
    });
    assert!(
        matches!(
            &out[..],
            [Sent::Owned(OwnedOutput::CancelRejected {
                reason: Reject::UnknownOrder,
                ..
            })]
        ),
        "{out:?}"
    );
    assert!(g
        .input(Input::New {
            who: ALICE,
            order: &limit("A2", 0, Side::Sell, 100, 5),
        })
        .is_empty());
    assert_eq!(g.take().len(), 1);
    assert_eq!(g.x.order_of(1, b"A"), Some(4001));
    // Accepted: the order is "A3" now, "A" names nothing.
    let r = replace("A3", "A");
    g.input(Input::Replace {
        who: ALICE,
        replace: &r,
    });
    let sent = g.take();
    let mut replaced = rec;
    replaced.cl_ord_id = cl("A3");
    g.outcome(
        1,
        2,
        &outcome(
            2,
            sent[0].cause,
            vec![Sent::Owned(OwnedOutput::Report {
                id: 4,
                order: replaced,
                n: 0,
                kind: ReportKind::Replaced,
                cl_ord_id: cl("A3"),
                orig_cl_ord_id: Some(cl("A")),
                ext: Default::default(),
            })],
        ),
    );
    assert_eq!(g.x.order_of(1, b"A3"), Some(4001));
    assert_eq!(g.x.order_of(1, b"A"), None);
    assert_eq!(g.x.order(4001).map(|o| o.cl_ord_id), Some(cl("A3")));
}

/// An outcome in parts: each part's outputs are delivered once, in order; the command is
/// answered with the last part.
#[test]
fn outcomes_in_parts_are_taken_part_by_part() {
    let mut g = Gateway::new();
    g.input(Input::New {
        who: ALICE,
        order: &limit("A", 0, Side::Buy, 100, 5),
    });
    let sent = g.take();
    let unknown = vec![Sent::Owned(OwnedOutput::StatusUnknown {
        to: BASE,
        cl_ord_id: cl("S"),
        n: 0,
    })];
    let part = |k: u32, last: bool| Outcome {
        part: k,
        last,
        ..outcome(0, cause(1, 0), unknown.clone())
    };
    assert_eq!(g.outcome(0, 0, &part(0, false)).len(), 1);
    assert_eq!(g.x.unanswered(), sent, "answered only with its last part");
    assert!(g.outcome(0, 1, &part(0, false)).is_empty(), "a part again");
    assert_eq!(g.outcome(0, 2, &part(1, true)).len(), 1);
    assert!(g.x.unanswered().is_empty());
    assert!(
        g.outcome(0, 3, &part(1, true)).is_empty(),
        "the last part again"
    );
    assert_eq!(g.x.outcome_offsets(), vec![Some(3), None]);
}
