//! `FixEdge` driven with `FixInput`s and an `exchange::Exchange`, as the server's node drives
//! them: the FIX messages it sends, byte for byte. Stored ExecutionReports and
//! OrderCancelRejects resend exactly as first sent, also from a snapshot; a FIX 4.2 session
//! gets FIX 4.2's codes; AvgPx is exact.

use exchange::{Backing, ClHashes, ClOrdId, Exchange, NewOrder, Reject, Replace};
use fix::app::Echo;
use fix::{Credentials, FixVersion, InHeader, Inbound, Logon, Text};
use fix_gateway::{
    AppMsg, Busy, FixConfig, FixEdge, FixInput, InstrumentDef, Invalid, InvalidKind, Outbox,
    SessionDef, ToExchange,
};
use std::sync::Arc;
use types::{Instrument, OrdType, Side, Symbol, TimeInForce};

const T0: u64 = 1_800_000_000_000_000_000;

/// One FIX message as sent: its fields in order.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Sent {
    conn: u64,
    fields: Vec<(u32, String)>,
}

impl Sent {
    fn get(&self, tag: u32) -> Option<&str> {
        self.fields
            .iter()
            .find(|(t, _)| *t == tag)
            .map(|(_, v)| v.as_str())
    }

    fn msg_type(&self) -> &str {
        self.get(35).expect("MsgType")
    }

    /// An application message (not a session-level one).
    fn is_app(&self) -> bool {
        !matches!(self.msg_type(), "0" | "1" | "2" | "3" | "4" | "5" | "A")
    }

    /// The fields a resend repeats exactly: all but BeginString, BodyLength, SendingTime,
    /// PossDupFlag, OrigSendingTime and CheckSum.
    fn as_sent(&self) -> Vec<(u32, String)> {
        self.fields
            .iter()
            .filter(|(t, _)| !matches!(t, 8 | 9 | 10 | 43 | 52 | 122))
            .cloned()
            .collect()
    }
}

fn sent(out: &Outbox) -> Vec<Sent> {
    out.items
        .iter()
        .filter(|it| !it.close)
        .map(|it| {
            let m = &out.buf[it.start..it.end];
            assert_eq!(m.last(), Some(&1), "ends with SOH");
            let fields = m[..m.len() - 1]
                .split(|&b| b == 1)
                .map(|f| {
                    let eq = f.iter().position(|&b| b == b'=').expect("tag=value");
                    let tag = std::str::from_utf8(&f[..eq]).unwrap().parse().unwrap();
                    (tag, String::from_utf8_lossy(&f[eq + 1..]).into_owned())
                })
                .collect();
            Sent {
                conn: it.conn,
                fields,
            }
        })
        .collect()
}

/// A session per (SenderCompID, FIX version), each for a firm of its own with account
/// `index + 1`; instruments ACME, BOLT and CRNK in cents.
fn configs(sessions: &[(&str, FixVersion)]) -> (Arc<exchange::Config>, Arc<FixConfig>) {
    let symbols = ["ACME", "BOLT", "CRNK"].map(|s| Symbol::new(s).expect("a symbol"));
    let x = exchange::Config::new(
        symbols
            .iter()
            .map(|&symbol| Instrument {
                symbol,
                tick: 1,
                lot: 1,
            })
            .collect(),
        (1..=sessions.len() as u32).map(|a| vec![a]).collect(),
        1 << 12,
    );
    let f = FixConfig {
        sessions: sessions
            .iter()
            .enumerate()
            .map(|(k, (sender, version))| SessionDef {
                sender_comp_id: sender.to_string(),
                target_comp_id: "RIALTO".into(),
                version: *version,
                password_hash: None,
                username: None,
                firm: k as u16,
                market_data: Default::default(),
                market_data_extensions: false,
                allow_reset_seq_num: true,
                validate: true,
                drop_copy: false,
            })
            .collect(),
        instruments: symbols
            .iter()
            .map(|&symbol| InstrumentDef {
                symbol,
                tick: 1,
                lot: 1,
                price_decimals: 2,
            })
            .collect(),
        resend_store_max: 100,
        heartbeat_min_s: 1,
        heartbeat_max_s: 3600,
        sending_time_window_ns: None,
    };
    (Arc::new(x), Arc::new(f))
}

/// The exchange and its FIX edge, one journal record per message (as `server::Node`).
struct Node {
    xcfg: Arc<exchange::Config>,
    fcfg: Arc<FixConfig>,
    x: Exchange,
    edge: FixEdge,
    seq: u64,
}

impl Node {
    fn new(sessions: &[(&str, FixVersion)]) -> Node {
        Node::with(sessions, |_| {})
    }

    /// A node whose exchange configuration `f` changes first.
    fn with(sessions: &[(&str, FixVersion)], f: impl FnOnce(&mut exchange::Config)) -> Node {
        Node::with_fix(sessions, f, |_| {})
    }

    /// A node whose exchange configuration `f` and FIX configuration `g` change first.
    fn with_fix(
        sessions: &[(&str, FixVersion)],
        f: impl FnOnce(&mut exchange::Config),
        g: impl FnOnce(&mut FixConfig),
    ) -> Node {
        let (xcfg, fcfg) = configs(sessions);
        let mut x = (*xcfg).clone();
        f(&mut x);
        let xcfg = Arc::new(x);
        let mut fx = (*fcfg).clone();
        g(&mut fx);
        let fcfg = Arc::new(fx);
        Node {
            x: Exchange::with_backing(xcfg.clone(), Backing::Lazy),
            edge: FixEdge::new(fcfg.clone()),
            xcfg,
            fcfg,
            seq: 0,
        }
    }

    /// Applies `fi` as the next journal record; returns what was sent.
    fn apply(&mut self, fi: &FixInput) -> Vec<Sent> {
        self.seq += 1;
        let mut out = Outbox::default();
        let x = ToExchange::new(&mut self.x, ClHashes::default(), None);
        self.edge
            .on_fix::<false>(self.seq, T0 + self.seq, fi, x, &mut out);
        sent(&out)
    }

    /// Applies a `Continue` record (the next chunk of each pending mass cancel).
    fn cont(&mut self) -> Vec<Sent> {
        self.seq += 1;
        let mut out = Outbox::default();
        self.edge
            .on_continue::<false>(self.seq, T0 + self.seq, &mut self.x, &mut out);
        sent(&out)
    }

    /// The exchange's snapshot and the edge's.
    fn snapshot(&self) -> (Vec<u8>, Vec<u8>) {
        let mut xs = Vec::new();
        self.x.snapshot_and_hash(&mut xs);
        let mut es = Vec::new();
        self.edge.snapshot(&mut es);
        (xs, es)
    }

    /// A node restored from `snapshot`'s parts.
    fn restore(&self, (xs, es): &(Vec<u8>, Vec<u8>)) -> Node {
        let (x, rest) = Exchange::restore(self.xcfg.clone(), xs, Backing::Lazy).expect("restores");
        assert!(rest.is_empty());
        let mut edge = FixEdge::new(self.fcfg.clone());
        let rest = edge.restore(es).expect("restores");
        assert!(rest.is_empty());
        Node {
            x,
            edge,
            xcfg: self.xcfg.clone(),
            fcfg: self.fcfg.clone(),
            seq: self.seq,
        }
    }
}

fn header(seq: u64) -> InHeader {
    InHeader {
        msg_seq_num: seq,
        sending_time_ns: T0,
        ..InHeader::default()
    }
}

/// A Logon from `sender` to RIALTO on `conn` in `version`, resetting sequence numbers.
fn logon(conn: u64, sender: &str, version: FixVersion) -> FixInput {
    FixInput {
        conn,
        header: header(1),
        msg: Inbound::Logon(Box::new(Logon {
            begin_string: Text::new(version.begin_string()),
            sender_comp_id: Text::from(sender),
            target_comp_id: Text::from("RIALTO"),
            heart_bt_int: Some(30),
            reset: true,
            has_default_appl_ver_id: false,
            ..Logon::default()
        })),
    }
}

fn app(conn: u64, seq: u64, msg: AppMsg) -> FixInput {
    FixInput {
        conn,
        header: header(seq),
        msg: Inbound::App(msg),
    }
}

fn resend_request(conn: u64, seq: u64) -> FixInput {
    FixInput {
        conn,
        header: header(seq),
        msg: Inbound::ResendRequest {
            begin: Some(1),
            end: Some(0),
        },
    }
}

fn cl(s: &str) -> ClOrdId {
    ClOrdId::from(s)
}

/// A DAY limit order on ACME.
fn limit(id: &str, side: Side, price: i64, qty: u64) -> AppMsg {
    AppMsg::New(NewOrder {
        cl_ord_id: cl(id),
        symbol: 0,
        side,
        ord_type: OrdType::Limit,
        tif: TimeInForce::Day,
        price,
        qty,
        account: None,
        post_only: false,
        ..Default::default()
    })
}

fn status(id: &str) -> AppMsg {
    AppMsg::Status {
        cl_ord_id: cl(id),
        echo: Echo::from("55=ACME\x0154=1\x01"),
    }
}

/// The application messages among `sent`.
fn apps(sent: Vec<Sent>) -> Vec<Sent> {
    sent.into_iter().filter(Sent::is_app).collect()
}

/// Checks that `resent` are `live` again, as a resend sends them: the same fields, with
/// PossDupFlag and the first SendingTime as OrigSendingTime.
fn resent_as_sent(resent: &[Sent], live: &[Sent]) {
    let as_sent = |v: &[Sent]| v.iter().map(Sent::as_sent).collect::<Vec<_>>();
    assert_eq!(as_sent(resent), as_sent(live));
    for (r, l) in resent.iter().zip(live) {
        assert_eq!(r.get(43), Some("Y"), "PossDupFlag on {r:?}");
        assert_eq!(r.get(122), l.get(52), "OrigSendingTime on {r:?}");
    }
}

/// Every kind of stored application message (ExecutionReports and OrderCancelRejects kept as
/// recipes, the rest as bytes) is resent exactly as first sent, from the live edge and from
/// one restored from a snapshot taken before the resend.
#[test]
fn stored_reports_and_cancel_rejects_resend_as_sent() {
    let mut n = Node::new(&[("CLIENT1", FixVersion::Fix44)]);
    let c = 7;
    let logged_on = n.apply(&logon(c, "CLIENT1", FixVersion::Fix44));
    assert_eq!(logged_on[0].msg_type(), "A");
    let inputs = [
        app(c, 2, limit("a", Side::Buy, 1234, 5)),
        app(
            c,
            3,
            AppMsg::Cancel {
                cl_ord_id: cl("c1"),
                orig_cl_ord_id: cl("nope"),
            },
        ),
        app(
            c,
            4,
            AppMsg::Replace(Replace {
                cl_ord_id: cl("c2"),
                orig_cl_ord_id: cl("a"),
                symbol: 1,
                price: 1200,
                qty: 5,
                stop_price: 0,
            }),
        ),
        app(
            c,
            5,
            AppMsg::Invalid(Box::new(Invalid {
                kind: InvalidKind::CancelReject { replace: true },
                msg_type: Text::from("G"),
                reject: Reject::InvalidPrice,
                reason: "price is off the tick".into(),
                cl_ord_id: cl("c3"),
                orig_cl_ord_id: cl("a"),
                echo: Echo::EMPTY,
            })),
        ),
        app(
            c,
            6,
            AppMsg::Busy(Box::new(Busy {
                msg_type: b'F',
                cl_ord_id: cl("c4"),
                orig_cl_ord_id: cl("a"),
                echo: Echo::EMPTY,
                why: fix_gateway::BusyWhy::Overload,
            })),
        ),
        app(c, 7, status("a")),
        app(
            c,
            8,
            AppMsg::Cancel {
                cl_ord_id: cl("c5"),
                orig_cl_ord_id: cl("a"),
            },
        ),
        app(c, 9, limit("a", Side::Buy, 1234, 5)),
        app(c, 10, status("nope")),
        app(
            c,
            11,
            AppMsg::MassCancel {
                cl_ord_id: cl("m1"),
                request_type: 7,
                symbol: None,
                side: None,
            },
        ),
    ];
    let mut live = Vec::new();
    for i in &inputs {
        live.extend(apps(n.apply(i)));
    }
    let kinds: Vec<(&str, Option<&str>, Option<&str>)> = live
        .iter()
        .map(|m| (m.msg_type(), m.get(37), m.get(58)))
        .collect();
    assert_eq!(
        kinds,
        [
            ("8", Some("1"), None),
            ("9", Some("NONE"), Some("unknown order")),
            ("9", Some("1"), Some("symbol differs from the order's")),
            ("9", Some("NONE"), Some("price is off the tick")),
            ("9", Some("NONE"), Some("exchange busy")),
            ("8", Some("1"), None),
            ("8", Some("1"), None),
            ("8", Some("NONE"), Some("duplicate ClOrdID")),
            ("8", Some("NONE"), Some("unknown order")),
            ("r", Some("11"), None),
        ],
        "{live:#?}"
    );
    assert!(live.iter().all(|m| m.conn == c));
    let seqs: Vec<&str> = live.iter().map(|m| m.get(34).unwrap()).collect();
    assert_eq!(seqs, ["2", "3", "4", "5", "6", "7", "8", "9", "10", "11"]);

    let snap = n.snapshot();
    let again = apps(n.apply(&resend_request(c, 12)));
    resent_as_sent(&again, &live);

    let mut y = n.restore(&snap);
    assert_eq!(y.snapshot(), snap, "the restored state is the snapshot's");
    let again = apps(y.apply(&resend_request(c, 12)));
    resent_as_sent(&again, &live);
}

/// A FIX 4.2 session gets ExecutionReports in FIX 4.2's codes (ExecTransType 20, fills as
/// ExecType 1/2, status answers as ExecTransType 3 with the OrdStatus as ExecType), live and
/// resent alike; a FIX 4.4 session on the same exchange keeps FIX 4.4's.
#[test]
fn fix42_sessions_get_fix42_execution_reports() {
    let mut n = Node::new(&[("OLD", FixVersion::Fix42), ("NEW", FixVersion::Fix44)]);
    let inputs = [
        logon(1, "OLD", FixVersion::Fix42),
        logon(2, "NEW", FixVersion::Fix44),
        app(1, 2, limit("o1", Side::Buy, 1000, 10)), // rests
        app(2, 2, limit("n1", Side::Sell, 1000, 4)), // partial fill of o1, n1 filled
        app(2, 3, limit("n2", Side::Sell, 1000, 6)), // fills the rest of o1
        app(1, 3, status("o1")),
        app(1, 4, status("nope")),
    ];
    let mut per_conn: [Vec<Sent>; 3] = Default::default();
    for i in &inputs {
        for m in n.apply(i) {
            assert_eq!(
                m.get(8),
                Some(if m.conn == 1 { "FIX.4.2" } else { "FIX.4.4" })
            );
            if m.msg_type() == "8" {
                per_conn[m.conn as usize].push(m);
            }
        }
    }
    let codes = |ms: &[Sent]| -> Vec<(Option<String>, String, String)> {
        ms.iter()
            .map(|m| {
                let s = |t| m.get(t).map(String::from);
                (s(20), s(150).unwrap(), s(39).unwrap())
            })
            .collect()
    };
    let t = |a: Option<&str>, b: &str, c: &str| (a.map(String::from), b.into(), c.into());
    let old = &per_conn[1];
    assert_eq!(
        codes(old),
        [
            t(Some("0"), "0", "0"), // o1 new
            t(Some("0"), "1", "1"), // partial fill
            t(Some("0"), "2", "2"), // fill
            t(Some("3"), "2", "2"), // status of o1: filled
            t(Some("3"), "8", "8"), // status of an unknown order
        ]
    );
    let new = &per_conn[2];
    assert_eq!(
        codes(new),
        [
            t(None, "0", "0"),
            t(None, "F", "2"),
            t(None, "0", "0"),
            t(None, "F", "2"),
        ]
    );
    // Resent to the FIX 4.2 session: the same messages in the same dialect.
    let resent: Vec<Sent> = n
        .apply(&resend_request(1, 5))
        .into_iter()
        .filter(|m| m.msg_type() == "8")
        .collect();
    assert!(resent.iter().all(|m| m.get(8) == Some("FIX.4.2")));
    resent_as_sent(&resent, old);
}

/// AvgPx (6) is the fills' notional over CumQty, exact where it can be and to 8 digits past
/// the price's otherwise.
#[test]
fn average_prices_are_exact() {
    let mut n = Node::new(&[("BUYER", FixVersion::Fix44), ("SELLER", FixVersion::Fix44)]);
    n.apply(&logon(1, "BUYER", FixVersion::Fix44));
    n.apply(&logon(2, "SELLER", FixVersion::Fix44));
    // The next MsgSeqNum of the buyer and of the seller.
    let (mut buyer, mut seller) = (2, 2);
    let mut avg_px = |buy: &str, asks: &[i64]| -> Vec<(String, String)> {
        for (k, &px) in asks.iter().enumerate() {
            let ask = limit(&format!("{buy}-s{k}"), Side::Sell, px, 1);
            n.apply(&app(2, seller, ask));
            seller += 1;
        }
        let top = *asks.iter().max().expect("asks");
        let bid = limit(buy, Side::Buy, top, asks.len() as u64);
        buyer += 1;
        n.apply(&app(1, buyer - 1, bid))
            .into_iter()
            .filter(|m| m.conn == 1 && m.msg_type() == "8")
            .map(|m| (m.get(150).unwrap().into(), m.get(6).unwrap().into()))
            .collect()
    };
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        avg_px("b1", &[1000, 1001]),
        [s("0", "0"), s("F", "10"), s("F", "10.005")]
    );
    assert_eq!(
        avg_px("b2", &[33, 33, 34]),
        [
            s("0", "0"),
            s("F", "0.33"),
            s("F", "0.33"),
            s("F", "0.3333333333")
        ]
    );
    assert_eq!(
        avg_px("b3", &[1025, 1025, 1025]),
        [
            s("0", "0"),
            s("F", "10.25"),
            s("F", "10.25"),
            s("F", "10.25")
        ]
    );
}

/// A trading-status subscription is state: a node restored from a snapshot has it and tells
/// the subscriber of the end of the day exactly as the original does; others hear nothing.
#[test]
fn trading_status_subscriptions_survive_a_snapshot() {
    let mut n = Node::new(&[("S1", FixVersion::Fix44), ("S2", FixVersion::Fix50Sp2)]);
    let mut xcfg = (*n.xcfg).clone();
    xcfg.trading_day_end_ns = Some(21 * 3600 * 1_000_000_000);
    n.xcfg = Arc::new(xcfg);
    n.x = Exchange::with_backing(n.xcfg.clone(), Backing::Lazy);
    n.apply(&logon(1, "S1", FixVersion::Fix44));
    n.apply(&logon(2, "S2", FixVersion::Fix50Sp2));
    let sub = AppMsg::TradingStatus {
        req_id: Text::from("t1"),
        subscription: 1,
    };
    let answer = apps(n.apply(&app(1, 2, sub)));
    assert_eq!(answer.len(), 1);
    assert_eq!(answer[0].msg_type(), "h");
    assert_eq!(
        (answer[0].get(335), answer[0].get(325), answer[0].get(340)),
        (Some("t1"), Some("N"), Some("2"))
    );
    let snap = n.snapshot();
    let mut y = n.restore(&snap);
    assert_eq!(y.snapshot(), snap, "the restored state is the snapshot's");
    assert_eq!(y.edge.trading_subscription(0), Some(&b"t1"[..]));
    assert_eq!(y.edge.trading_subscription(1), None);
    let end = n.x.next_day_end_ns();
    let mut heard = Vec::new();
    for node in [&mut n, &mut y] {
        node.seq += 1;
        let mut out = Outbox::default();
        node.edge
            .on_tick::<false>(node.seq, end, &mut node.x, &mut out);
        let h: Vec<(u64, Option<String>, Option<String>)> = apps(sent(&out))
            .iter()
            .map(|s| {
                assert_eq!(s.msg_type(), "h");
                assert_eq!(s.get(325), Some("Y"));
                (
                    s.conn,
                    s.get(335).map(Into::into),
                    s.get(340).map(Into::into),
                )
            })
            .collect();
        heard.push(h);
    }
    let closed_then_open = vec![
        (1, Some("t1".to_string()), Some("3".to_string())),
        (1, Some("t1".to_string()), Some("2".to_string())),
    ];
    assert_eq!(heard, [closed_then_open.clone(), closed_then_open]);
    assert_eq!(n.snapshot(), y.snapshot());
}

/// A session that authenticates accepts only a Logon the server accepted; replay follows
/// the journal: a Logon journaled while the session needed no password (`Unchecked`) is
/// accepted again after a password was configured, and a refused one stays refused.
#[test]
fn logons_follow_their_journaled_verdict() {
    let mut n = Node::new(&[("PW", FixVersion::Fix44)]);
    let mut f = (*n.fcfg).clone();
    f.sessions[0].password_hash = Some("$argon2id$checked-by-the-server".into());
    let f = Arc::new(f);
    let with = |conn, credentials| {
        let mut fi = logon(conn, "PW", FixVersion::Fix44);
        if let Inbound::Logon(l) = &mut fi.msg {
            l.credentials = credentials;
        }
        fi
    };
    let answer = |sent: &[Sent]| {
        sent.iter()
            .map(|m| (m.msg_type().to_string(), m.get(58).map(String::from)))
            .collect::<Vec<_>>()
    };
    let refused = vec![("5".to_string(), Some("logon refused".to_string()))];
    for (replaying, credentials, accepted) in [
        (false, Credentials::Accepted, true),
        (false, Credentials::Refused, false),
        (false, Credentials::Unchecked, false),
        (true, Credentials::Accepted, true),
        (true, Credentials::Refused, false),
        (true, Credentials::Unchecked, true),
    ] {
        n.edge = FixEdge::new(f.clone());
        n.edge.replaying = replaying;
        let sent = n.apply(&with(1, credentials));
        assert_eq!(
            n.edge.session_of(1).is_some(),
            accepted,
            "replaying {replaying}, {credentials:?}"
        );
        if !replaying {
            if accepted {
                assert_eq!(answer(&sent)[0].0, "A");
            } else {
                assert_eq!(answer(&sent), refused);
            }
        }
    }
}

/// A well-framed message with a malformed field, as the adapter reads it and the journal
/// keeps it: the session answers a Reject (RefSeqNum, RefMsgType, SessionRejectReason 0 and
/// a Text quoting the field), takes the number, and the next order is acknowledged with no
/// ResendRequest; replaying the journaled inputs sends the same bytes. Without a readable
/// MsgSeqNum the session logs out instead.
#[test]
fn malformed_fields_are_rejected_and_the_session_goes_on() {
    use exchange::codec::{Dec, Enc};
    use fix_gateway::{ConnIds, FixAdapter};
    let sessions = [("C1", FixVersion::Fix44)];
    let adapter = FixAdapter::new(configs(&sessions).1);
    let mut ids = Some(ConnIds {
        begin_string: Text::from("FIX.4.4"),
        sender: Text::from("C1"),
        target: Text::from("RIALTO"),
        validate: Some(FixVersion::Fix44),
    });
    let read = |ids: &mut Option<ConnIds>, body: &str| {
        let mut frame = Vec::new();
        fix::wrap_body(
            FixVersion::Fix44,
            body.replace('|', "\x01").as_bytes(),
            &mut frame,
        );
        let fi = adapter
            .to_input(1, ids, &mut fix::Decoder::default(), &frame)
            .expect("not garbled");
        // As journaled and read back.
        let mut b = Vec::new();
        fi.encode(&mut Enc(&mut b));
        let back = FixInput::decode(&mut Dec(&b)).expect("decodes");
        assert_eq!(back, fi);
        back
    };
    let inputs = [
        logon(1, "C1", FixVersion::Fix44),
        read(
            &mut ids,
            "35=D|49=C1|56=RIALTO|34=2|52=20270115-08:00:00.000|11=a|x1=5|",
        ),
        app(1, 3, limit("o2", Side::Buy, 100, 1)),
    ];
    let mut node = Node::new(&sessions);
    let out: Vec<Vec<Sent>> = inputs.iter().map(|fi| node.apply(fi)).collect();
    let reject = &out[1];
    assert_eq!(reject.len(), 1, "{reject:?}");
    let r = &reject[0];
    assert_eq!(r.msg_type(), "3");
    assert_eq!(r.get(45), Some("2"));
    assert_eq!(r.get(372), Some("D"));
    assert_eq!(r.get(373), Some("0"));
    assert_eq!(r.get(371), None);
    assert_eq!(
        r.get(58),
        Some("field 'x1=5' has a tag that is not a number")
    );
    let ack = &out[2];
    assert_eq!(
        ack.len(),
        1,
        "one ExecutionReport, no ResendRequest: {ack:?}"
    );
    assert_eq!(
        (ack[0].msg_type(), ack[0].get(11), ack[0].get(150)),
        ("8", Some("o2"), Some("0"))
    );
    // Replay: the same inputs give the same bytes (SendingTime aside: it is the record's).
    let mut replay = Node::new(&sessions);
    for (fi, first) in inputs.iter().zip(&out) {
        let again = replay.apply(fi);
        let strip = |s: &[Sent]| s.iter().map(Sent::as_sent).collect::<Vec<_>>();
        assert_eq!(strip(&again), strip(first));
    }
    // No MsgSeqNum: Logout saying so.
    let gone = read(
        &mut ids,
        "35=D|49=C1|56=RIALTO|52=20270115-08:00:00.000|11=a|x1=5|",
    );
    assert_eq!(gone.header.msg_seq_num, 0);
    let bye = node.apply(&gone);
    assert_eq!(bye[0].msg_type(), "5", "{bye:?}");
    assert!(bye[0].get(58).is_some_and(|t| t.contains("MsgSeqNum")));
}

/// A new order over its firm's open-order limit is refused with OrdRejReason 3 (order
/// exceeds limit) in every version, and a Text that gives the limit.
#[test]
fn an_order_over_the_firms_limit_is_refused_as_exceeding_the_limit() {
    let sessions = [
        ("CLIENT1", FixVersion::Fix44),
        ("CLIENT2", FixVersion::Fix42),
    ];
    let mut n = Node::with(&sessions, |x| {
        x.firm_limits = vec![
            exchange::FirmLimits {
                max_open_orders: Some(1),
                max_open_orders_per_account: None,
                ..exchange::FirmLimits::default()
            };
            2
        ];
    });
    for (k, (sender, version)) in sessions.iter().enumerate() {
        let c = k as u64 + 1;
        n.apply(&logon(c, sender, *version));
        let ok = apps(n.apply(&app(c, 2, limit("a", Side::Buy, 100, 5))));
        assert_eq!(ok[0].get(150), Some("0"), "{ok:?}");
        let no = apps(n.apply(&app(c, 3, limit("b", Side::Buy, 100, 5))));
        assert_eq!(no.len(), 1, "{no:?}");
        assert_eq!(no[0].get(39), Some("8"), "{sender}");
        assert_eq!(no[0].get(103), Some("3"), "{sender}");
        assert_eq!(
            no[0].get(58),
            Some("firm has 1 open orders, its limit"),
            "{sender}"
        );
    }
}

/// A mass cancel larger than a chunk: each record cancels one chunk, and the
/// OrderMassCancelReport (OrderID: the request's record) follows the last, with the total.
#[test]
fn a_chunked_mass_cancel_reports_once_after_its_last_chunk() {
    let mut n = Node::with(&[("CLIENT1", FixVersion::Fix44)], |x| {
        x.mass_cancel_chunk = 2
    });
    let c = 1;
    n.apply(&logon(c, "CLIENT1", FixVersion::Fix44));
    for i in 0..5 {
        n.apply(&app(c, 2 + i, limit(&format!("o{i}"), Side::Buy, 100, 5)));
    }
    let mass = AppMsg::MassCancel {
        cl_ord_id: cl("m"),
        request_type: 7,
        symbol: None,
        side: None,
    };
    let first = apps(n.apply(&app(c, 7, mass)));
    let request_seq = n.seq.to_string();
    let types = |v: &[Sent]| {
        v.iter()
            .map(|m| m.get(150).unwrap_or("r").to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(types(&first), ["4", "4"]);
    assert_eq!(types(&apps(n.cont())), ["4", "4"]);
    let last = apps(n.cont());
    assert_eq!(types(&last), ["4", "r"]);
    let report = &last[1];
    assert_eq!(report.msg_type(), "r");
    assert_eq!(report.get(11), Some("m"));
    assert_eq!(report.get(37), Some(request_seq.as_str()));
    assert_eq!(report.get(530), Some("7"));
    assert_eq!(report.get(531), Some("7"));
    assert_eq!(report.get(533), Some("5"));
    assert!(apps(n.cont()).is_empty(), "nothing left");
}

/// Reports of stop, iceberg and GTD orders keep OrdType 3/4, StopPx, MaxFloor, TimeInForce 6
/// and ExpireTime on every report (the trigger's ExecType D in FIX 4.4 and 4.2) and on their
/// drop copies, and are resent exactly as first sent, from the live edge and from one
/// restored from a snapshot.
#[test]
fn stop_iceberg_and_gtd_reports_resend_as_sent_also_from_a_snapshot() {
    let sessions = [
        ("A", FixVersion::Fix44),
        ("B", FixVersion::Fix50Sp2),
        ("DC", FixVersion::Fix42),
    ];
    let mut n = Node::with_fix(
        &sessions,
        |_| {},
        |f| {
            f.sessions[2].drop_copy = true;
            f.sessions[2].firm = 0;
        },
    );
    for (conn, (sender, version)) in (1..).zip(sessions) {
        n.apply(&logon(conn, sender, version));
    }
    let order = |id: &str, side, price, qty, x: (i64, u64, u64)| {
        let AppMsg::New(mut o) = limit(id, side, price, qty) else {
            unreachable!("a new order")
        };
        (o.stop_price, o.display_qty, o.expire_ns) = x;
        o.tif = if x.2 != 0 {
            TimeInForce::Gtd
        } else {
            TimeInForce::Gtc
        };
        AppMsg::New(o)
    };
    let inputs = [
        app(1, 2, order("stop", Side::Buy, 1010, 5, (1005, 0, 0))),
        app(1, 3, order("ice", Side::Sell, 1100, 30, (0, 10, 0))),
        app(
            1,
            4,
            order("gtd", Side::Buy, 900, 5, (0, 0, T0 + 3_600_000_000_123)),
        ),
        app(2, 2, limit("b1", Side::Sell, 1005, 2)),
        // A trade at the stop price triggers the stop; it rests at its limit.
        app(1, 5, limit("a1", Side::Buy, 1005, 2)),
        app(1, 6, status("stop")),
    ];
    let (mut live, mut copies) = (Vec::new(), Vec::new());
    for i in &inputs {
        for m in apps(n.apply(i)) {
            match m.conn {
                1 => live.push(m),
                3 => copies.push(m),
                _ => {}
            }
        }
    }
    let of = |v: &[Sent], id: &str, tags: &[u32]| -> Vec<Vec<Option<String>>> {
        v.iter()
            .filter(|m| m.get(11) == Some(id))
            .map(|m| tags.iter().map(|&t| m.get(t).map(str::to_string)).collect())
            .collect()
    };
    let s = |x: &str| Some(x.to_string());
    let stop_tags = [150, 39, 40, 44, 99, 59, 151];
    let stop = vec![
        vec![
            s("0"),
            s("0"),
            s("4"),
            s("10.1"),
            s("10.05"),
            s("1"),
            s("5"),
        ],
        vec![
            s("D"),
            s("0"),
            s("4"),
            s("10.1"),
            s("10.05"),
            s("1"),
            s("5"),
        ],
        vec![
            s("I"),
            s("0"),
            s("4"),
            s("10.1"),
            s("10.05"),
            s("1"),
            s("5"),
        ],
    ];
    assert_eq!(of(&live, "stop", &stop_tags), stop, "{live:#?}");
    // The copies (FIX 4.2): the same, but the status answer, which is not copied.
    assert_eq!(of(&copies, "stop", &stop_tags), stop[..2].to_vec());
    assert_eq!(
        of(&copies, "stop", &[20, 128]),
        vec![vec![s("0"), s("A")]; 2]
    );
    assert_eq!(
        of(&live, "ice", &[150, 40, 111, 38]),
        vec![vec![s("0"), s("2"), s("10"), s("30")]]
    );
    let gtd = vec![vec![s("0"), s("6"), s("20270115-09:00:00.000000123")]];
    assert_eq!(of(&live, "gtd", &[150, 59, 126]), gtd);
    assert_eq!(of(&copies, "gtd", &[150, 59, 126]), gtd);

    let snap = n.snapshot();
    let again = apps(n.apply(&resend_request(1, 7)));
    resent_as_sent(&again, &live);
    let again = apps(n.apply(&resend_request(3, 2)));
    resent_as_sent(&again, &copies);
    let mut y = n.restore(&snap);
    assert_eq!(y.snapshot(), snap, "the restored state is the snapshot's");
    let again = apps(y.apply(&resend_request(1, 7)));
    resent_as_sent(&again, &live);
    let again = apps(y.apply(&resend_request(3, 2)));
    resent_as_sent(&again, &copies);
}
