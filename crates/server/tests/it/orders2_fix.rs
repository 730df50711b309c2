//! Order types II over FIX end to end, over real sockets on 127.0.0.1, in FIX 4.2, 4.4 and
//! 5.0SP2: stop limit and stop orders acknowledged New with OrdType 4/3 and StopPx, triggered
//! by another firm's trade (ExecType L in 5.0SP2, D in 4.2 and 4.4) and then filled; an
//! iceberg whose MaxFloor is echoed and of which the market-data feed shows only the peak; GTD
//! orders that expire (ExecType C) when the server's clock passes their ExpireTime, with
//! nothing else sent; the refusals with their Text; a call auction set by the operator (orders
//! rest crossed in pre-open, SecurityStatus says so in each version's values, the opening
//! uncrosses them at one price).

use crate::api_common::Api;
use fix::client::{FixClient, Msg};
use fix::md::MdView;
use fix::{Decoder, FixVersion};
use server::{Config, Server};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(10);
const OPS: &str = "op_orders2";

/// Default instruments (ACME, BOLT, CRNK: tick 0.01, lot 1); a firm per trading session:
/// `S42` (FIX 4.2), `S44` (FIX 4.4), `S50` (FIXT.1.1, FIX 5.0SP2), and two counterparties in
/// FIX 4.4, `MAKER` and `TAKER`; `MD50`, market data only in FIX 5.0SP2.
fn config(dir: &Path) -> Config {
    let mut toml = String::from(
        "listen = \"127.0.0.1:0\"\nhttp_listen = \"127.0.0.1:0\"\norders_max = 65536\n\
         journal_segment_bytes = 1048576\n",
    );
    for (i, (name, version)) in [
        ("S42", "FIX.4.2"),
        ("S44", "FIX.4.4"),
        ("S50", "FIXT.1.1"),
        ("MAKER", "FIX.4.4"),
        ("TAKER", "FIX.4.4"),
        ("MD50", "FIXT.1.1"),
        ("MD51", "FIXT.1.1"),
    ]
    .iter()
    .enumerate()
    {
        toml.push_str(&format!(
            "[[firms]]\nname = \"{name}\"\naccounts = [{}]\n\
             [[sessions]]\nsender_comp_id = \"{name}\"\nfirm = \"{name}\"\nfix_version = \"{version}\"\n",
            i + 1
        ));
        if name.starts_with("MD") {
            toml.push_str("market_data = \"only\"\n");
        }
    }
    let mut c = Config::from_toml(&toml).expect("config");
    c.data_dir = dir.to_path_buf();
    c.operators = vec![http_gateway::OperatorDef {
        name: "ops".into(),
        sha256: http_gateway::keys::sha256(OPS),
    }];
    c
}

fn start(dir: &Path) -> Server {
    Server::start(config(dir), Arc::new(|_: &str| {})).expect("server starts")
}

fn version_of(who: &str) -> FixVersion {
    match who {
        "S42" => FixVersion::Fix42,
        "S50" | "MD50" | "MD51" => FixVersion::Fix50Sp2,
        _ => FixVersion::Fix44,
    }
}

fn logon(s: &Server, who: &str) -> FixClient {
    let mut c = FixClient::connect(s.addr, who, "RIALTO", 1)
        .unwrap()
        .with_version(version_of(who));
    c.logon(30, true).unwrap();
    c.expect("A", T).unwrap();
    c
}

/// The market-data session of `who`, logged on.
fn md_logon(s: &Server, who: &str) -> FixClient {
    let addr = s.market_data_addr().expect("market data is on");
    let mut c = FixClient::connect(addr, who, "RIALTO", 1)
        .unwrap()
        .with_version(version_of(who));
    c.logon(30, true).unwrap();
    c.expect("A", T).unwrap();
    c
}

/// Sends a NewOrderSingle of `sym`: `side` 1 buy / 2 sell, then the given fields.
fn order(c: &mut FixClient, cl: &str, sym: &str, side: &str, qty: &str, fields: &[(u32, &str)]) {
    let mut body = vec![(11, cl), (55, sym), (54, side), (38, qty)];
    body.extend_from_slice(fields);
    c.send("D", &body).unwrap();
}

fn limit(c: &mut FixClient, cl: &str, sym: &str, side: &str, qty: &str, px: &str) {
    order(c, cl, sym, side, qty, &[(40, "2"), (44, px), (59, "1")]);
}

/// The next ExecutionReport on `c` (nothing else may come first).
fn er(c: &mut FixClient) -> Msg {
    let (m, skipped) = c.expect("8", T).unwrap();
    assert!(skipped.is_empty(), "before {}: {skipped:?}", m.text());
    m
}

fn check(m: &Msg, pairs: &[(u32, &str)]) {
    for (tag, v) in pairs {
        assert_eq!(m.get(*tag), Some(*v), "tag {tag} in {}", m.text());
    }
}

fn absent(m: &Msg, tags: &[u32]) {
    for tag in tags {
        assert_eq!(m.get(*tag), None, "tag {tag} in {}", m.text());
    }
}

/// ExecType of a trigger in the session's version: L in FIX 5.0SP2, D (Restated) before.
fn triggered(v: FixVersion) -> &'static str {
    match v {
        FixVersion::Fix50Sp2 => "L",
        _ => "D",
    }
}

/// ExecType of the fill that completes an order: 2 in FIX 4.2, F after.
fn filled(v: FixVersion) -> &'static str {
    match v {
        FixVersion::Fix42 => "2",
        _ => "F",
    }
}

/// In each version (one symbol each): a stop limit buy rests unseen, another firm's trade at
/// its StopPx triggers it, and it fills at the maker's price; then a stop (market) sell is
/// triggered by a trade at its StopPx and fills. Every report of either says OrdType 4 or 3
/// and StopPx; OrdStatus stays New until the fill.
#[test]
fn stop_limit_and_stop_orders_trigger_then_fill_in_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path());
    let mut maker = logon(&s, "MAKER");
    let mut taker = logon(&s, "TAKER");
    for (who, sym) in [("S42", "ACME"), ("S44", "BOLT"), ("S50", "CRNK")] {
        let v = version_of(who);
        let mut c = logon(&s, who);
        // A stop limit buy: 5 at 10.10 once the market trades at 10.05 or above.
        order(
            &mut c,
            "sl",
            sym,
            "1",
            "5",
            &[(40, "4"), (44, "10.10"), (99, "10.05"), (59, "1")],
        );
        let new = er(&mut c);
        check(
            &new,
            &[
                (150, "0"),
                (39, "0"),
                (40, "4"),
                (44, "10.1"),
                (99, "10.05"),
            ],
        );
        check(&new, &[(59, "1"), (38, "5"), (151, "5"), (14, "0")]);
        let order_id = new.get(37).unwrap().to_string();
        limit(&mut maker, &format!("m-{who}"), sym, "2", "10", "10.05");
        check(&er(&mut maker), &[(150, "0")]);
        limit(&mut taker, &format!("t-{who}"), sym, "1", "2", "10.05");
        check(&er(&mut taker), &[(150, "0")]);
        check(&er(&mut taker), &[(150, "F"), (39, "2"), (31, "10.05")]);
        check(&er(&mut maker), &[(150, "F"), (39, "1"), (32, "2")]);
        let t = er(&mut c);
        check(
            &t,
            &[(37, &order_id), (11, "sl"), (150, triggered(v)), (39, "0")],
        );
        check(&t, &[(40, "4"), (44, "10.1"), (99, "10.05"), (151, "5")]);
        absent(&t, &[31, 32]);
        let f = er(&mut c);
        check(&f, &[(150, filled(v)), (39, "2"), (31, "10.05"), (32, "5")]);
        check(&f, &[(40, "4"), (99, "10.05"), (151, "0"), (14, "5")]);
        check(&er(&mut maker), &[(150, "F"), (32, "5"), (151, "3")]);

        // A stop sell: 3 at the market once it trades at 9.95 or below.
        order(&mut c, "st", sym, "2", "3", &[(40, "3"), (99, "9.95")]);
        let new = er(&mut c);
        check(&new, &[(150, "0"), (39, "0"), (40, "3"), (99, "9.95")]);
        absent(&new, &[44]);
        limit(&mut maker, &format!("mb-{who}"), sym, "1", "5", "9.95");
        check(&er(&mut maker), &[(150, "0")]);
        limit(&mut taker, &format!("ts-{who}"), sym, "2", "1", "9.95");
        check(&er(&mut taker), &[(150, "0")]);
        check(&er(&mut taker), &[(150, "F"), (39, "2")]);
        check(&er(&mut maker), &[(150, "F"), (32, "1")]);
        check(
            &er(&mut c),
            &[(11, "st"), (150, triggered(v)), (39, "0"), (40, "3")],
        );
        let f = er(&mut c);
        check(&f, &[(150, filled(v)), (39, "2"), (40, "3"), (99, "9.95")]);
        check(&f, &[(31, "9.95"), (32, "3"), (151, "0")]);
        check(&er(&mut maker), &[(150, "F"), (32, "3"), (151, "1")]);
        if v == FixVersion::Fix42 {
            assert!(t.raw.starts_with(b"8=FIX.4.2\x01"));
            check(&t, &[(20, "0")]);
        }
    }
    s.shutdown().unwrap();
}

/// A market-data subscriber's view of `sym` (FIX 5.0SP2), kept up to date by `read`.
struct Watcher {
    c: FixClient,
    view: MdView,
    decoder: Decoder,
    /// The largest offer size any W or X showed.
    max_offer_seen: u64,
}

impl Watcher {
    fn subscribe(s: &Server, sym: &str) -> Watcher {
        let mut c = md_logon(s, "MD50");
        c.send(
            "V",
            &[
                (262, "w1"),
                (263, "1"),
                (264, "0"),
                (265, "1"),
                (267, "3"),
                (269, "0"),
                (269, "1"),
                (269, "2"),
                (146, "1"),
                (55, sym),
            ],
        )
        .unwrap();
        let mut w = Watcher {
            c,
            view: MdView::new(0),
            decoder: Decoder::default(),
            max_offer_seen: 0,
        };
        let (m, _) = w.c.expect("W", T).unwrap();
        w.apply(&m);
        w
    }

    fn apply(&mut self, m: &Msg) {
        let msg = self.decoder.decode(&m.raw).unwrap();
        self.view.apply(&msg).unwrap();
        fix::md::read_entries(&msg, |_, e| {
            if e.entry_type == b'1' {
                self.max_offer_seen = self.max_offer_seen.max(e.size);
            }
        })
        .unwrap();
    }

    /// Reads the feed until `done` holds for the view, within `T`.
    fn until(&mut self, what: &str, done: impl Fn(&MdView) -> bool) {
        let deadline = Instant::now() + T;
        while !done(&self.view) {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .c
                .next_app(left)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(matches!(m.msg_type(), "W" | "X"), "{}", m.text());
            self.apply(&m);
        }
    }
}

/// An iceberg of 100 showing 10: MaxFloor on its reports in every version; the feed shows 10
/// at its price, never more, and after 15 traded (its peak refilled once) 5.
#[test]
fn an_iceberg_shows_only_its_peak_on_the_feed_and_echoes_max_floor() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path());
    let mut w = Watcher::subscribe(&s, "ACME");
    let mut taker = logon(&s, "TAKER");
    let asks = |v: &MdView| -> Vec<(i64, u64)> {
        v.symbols
            .get(&b"ACME"[..])
            .map(|s| s.asks.iter().map(|(p, l)| (*p, l.size)).collect())
            .unwrap_or_default()
    };
    let ten = 10_000_000_000; // 10.00 in the view's units (10^-9)
    for (k, who) in ["S42", "S44", "S50"].into_iter().enumerate() {
        let mut c = logon(&s, who);
        order(
            &mut c,
            "ice",
            "ACME",
            "2",
            "100",
            &[(40, "2"), (44, "10.00"), (111, "10"), (59, "1")],
        );
        let new = er(&mut c);
        check(
            &new,
            &[
                (150, "0"),
                (40, "2"),
                (111, "10"),
                (38, "100"),
                (151, "100"),
            ],
        );
        absent(&new, &[99]);
        w.until("the peak rests", |v| asks(v) == [(ten, 10)]);
        limit(&mut taker, &format!("t{k}"), "ACME", "1", "15", "10.00");
        check(&er(&mut taker), &[(150, "0")]);
        let f = er(&mut c);
        check(&f, &[(39, "1"), (32, "10"), (151, "90"), (111, "10")]);
        let f = er(&mut c);
        check(&f, &[(39, "1"), (32, "5"), (151, "85"), (111, "10")]);
        w.until("what is left of the refilled peak shows", |v| {
            asks(v) == [(ten, 5)]
        });
        // Gone at once when canceled: the hidden 80 never showed.
        c.send(
            "F",
            &[(11, "c"), (41, "ice"), (55, "ACME"), (54, "2"), (38, "100")],
        )
        .unwrap();
        let (x, _) = c.expect("8", T).unwrap();
        check(&x, &[(150, "4"), (111, "10"), (14, "15")]);
        w.until("the iceberg's level is gone", |v| asks(v).is_empty());
        // The taker's remainder is not this test's business.
        taker
            .send("q", &[(11, &format!("mc{k}")), (530, "7")])
            .unwrap();
        taker.expect("r", T).unwrap();
    }
    assert_eq!(
        w.max_offer_seen, 10,
        "the feed never showed the hidden part"
    );
    s.shutdown().unwrap();
}

/// A UTCTimestamp `in_ms` milliseconds from now.
fn from_now(in_ms: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut out = Vec::new();
    fix::write_utc_timestamp(
        &mut out,
        now + in_ms * 1_000_000,
        fix::TimePrecision::Millis,
    );
    String::from_utf8(out).unwrap()
}

/// GTD orders in every version expire by themselves when the server's clock passes their
/// ExpireTime (the loop's own timer: the clients send nothing more), ExecType C with the GTD
/// fields; one whose ExpireTime has passed is refused.
#[test]
fn gtd_orders_expire_when_the_clock_passes_their_expire_time() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path());
    let mut clients: Vec<(FixVersion, FixClient, String)> = Vec::new();
    for who in ["S42", "S44", "S50"] {
        let mut c = logon(&s, who);
        let at = from_now(1_500);
        order(
            &mut c,
            "g1",
            "ACME",
            "1",
            "5",
            &[(40, "2"), (44, "9.00"), (59, "6"), (126, &at)],
        );
        let new = er(&mut c);
        check(&new, &[(150, "0"), (39, "0"), (59, "6"), (126, &at)]);
        order(
            &mut c,
            "g2",
            "ACME",
            "1",
            "5",
            &[
                (40, "2"),
                (44, "9.00"),
                (59, "6"),
                (126, &from_now(0)[..17]),
            ],
        );
        let r = er(&mut c);
        check(
            &r,
            &[
                (11, "g2"),
                (150, "8"),
                (39, "8"),
                (58, "expire time already passed"),
            ],
        );
        clients.push((version_of(who), c, at));
    }
    for (v, c, at) in &mut clients {
        let x = er(c);
        check(
            &x,
            &[(11, "g1"), (150, "C"), (39, "C"), (151, "0"), (59, "6")],
        );
        check(&x, &[(126, at.as_str())]);
        assert!(
            x.get(60).unwrap() >= at.as_str(),
            "{v:?}: expired at {:?}, before {at}",
            x.get(60)
        );
    }
    s.shutdown().unwrap();
}

/// Each refusal of a stop, iceberg or GTD field over FIX, in every version: an order reject
/// (ExecType 8) whose Text names the field; a replace's (OrderCancelReject) likewise.
#[test]
fn refusals_name_the_field_in_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path());
    let cases: &[(&[(u32, &str)], &str)] = &[
        (
            &[(40, "4"), (44, "10")],
            "stop order (OrdType 3 or 4) without StopPx(99)",
        ),
        (
            &[(40, "3"), (99, "10.001")],
            "StopPx 10.001 is not a multiple of ACME's tick 0.01",
        ),
        (
            &[(40, "2"), (44, "10"), (99, "10")],
            "StopPx(99) is only for a stop order (OrdType 3 or 4)",
        ),
        (
            &[(40, "2"), (44, "10"), (59, "6")],
            "GTD order (TimeInForce 6) without ExpireTime(126)",
        ),
        (
            &[(40, "2"), (44, "10"), (59, "6"), (432, "20300101")],
            "ExpireDate(432) is not supported: a GTD order (TimeInForce 6) gives \
             ExpireTime(126), a UTCTimestamp",
        ),
        (
            &[(40, "2"), (44, "10"), (59, "1"), (126, "20300101-00:00:00")],
            "ExpireTime(126) is only for a GTD order (TimeInForce 6)",
        ),
        (
            &[(40, "2"), (44, "10"), (111, "-1")],
            "MaxFloor(111) must not be negative, got -1",
        ),
        (
            &[(40, "1"), (111, "5"), (59, "3")],
            "invalid display quantity (off the lot, or on a market, IOC or FOK order)",
        ),
        (
            &[(40, "4"), (44, "10"), (99, "9"), (18, "6")],
            "invalid stop price (off the tick, not positive, or with post-only)",
        ),
    ];
    for who in ["S42", "S44", "S50"] {
        let mut c = logon(&s, who);
        for (k, (fields, text)) in cases.iter().enumerate() {
            let cl = format!("r{k}");
            order(&mut c, &cl, "ACME", "1", "5", fields);
            let r = er(&mut c);
            check(&r, &[(11, &cl), (150, "8"), (39, "8"), (58, text)]);
        }
        // A stop order cannot be replaced: only limit and stop limit orders.
        order(&mut c, "st", "ACME", "1", "5", &[(40, "3"), (99, "50")]);
        check(&er(&mut c), &[(150, "0"), (40, "3")]);
        c.send(
            "G",
            &[
                (11, "st2"),
                (41, "st"),
                (55, "ACME"),
                (54, "1"),
                (38, "6"),
                (40, "3"),
                (99, "50"),
            ],
        )
        .unwrap();
        let (r, _) = c.expect("9", T).unwrap();
        check(
            &r,
            &[
                (41, "st"),
                (434, "2"),
                (
                    58,
                    "only limit and stop limit orders can be replaced (OrdType 2 or 4)",
                ),
            ],
        );
        // A stop limit's price and quantity are replaced; its StopPx stays on the reports.
        order(
            &mut c,
            "sl",
            "ACME",
            "1",
            "5",
            &[(40, "4"), (44, "49"), (99, "50"), (59, "1")],
        );
        check(&er(&mut c), &[(150, "0")]);
        c.send(
            "G",
            &[
                (11, "sl2"),
                (41, "sl"),
                (55, "ACME"),
                (54, "1"),
                (38, "7"),
                (40, "4"),
                (44, "48"),
                (99, "50"),
            ],
        )
        .unwrap();
        let r = er(&mut c);
        check(
            &r,
            &[
                (150, "5"),
                (39, "0"),
                (40, "4"),
                (44, "48"),
                (99, "50"),
                (38, "7"),
            ],
        );
        c.send("q", &[(11, "mc"), (530, "7")]).ok();
        if version_of(who) == FixVersion::Fix42 {
            // FIX 4.2 has no mass cancel: one cancel each.
            c.expect("j", T).unwrap();
            for id in ["st", "sl2"] {
                c.send(
                    "F",
                    &[
                        (11, &format!("x{id}")),
                        (41, id),
                        (55, "ACME"),
                        (54, "1"),
                        (38, "5"),
                    ],
                )
                .unwrap();
                check(&er(&mut c), &[(150, "4")]);
            }
        } else {
            c.expect("r", T).unwrap();
        }
    }
    s.shutdown().unwrap();
}

/// The operator starts an opening auction on ACME: FIX order entry keeps taking limit orders,
/// which rest crossed without trading (a market order is refused); SecurityStatus says pre-open
/// in each version's values (21 with TradingSessionSubID 2, FIX 4.2 14); opening uncrosses the
/// book at one price, each side filled there, and the feed says ready to trade again.
#[test]
fn an_opening_auction_over_fix_rests_crossed_orders_then_uncrosses_them_at_one_price() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path());
    let api = Api::of(&s);
    let mut watchers: Vec<(FixVersion, FixClient)> = ["S42", "S44", "MD50"]
        .into_iter()
        .map(|who| {
            let mut md = md_logon(&s, who);
            md.send("e", &[(324, "st"), (55, "ACME"), (263, "1")])
                .unwrap();
            let (m, _) = md.expect("f", T).unwrap();
            check(&m, &[(326, "17")]);
            (version_of(who), md)
        })
        .collect();
    let status = |to: &str| {
        let (st, v, _) = api.call(
            "POST",
            "/admin/v1/instruments/ACME/status",
            Some(OPS),
            None,
            &format!(r#"{{"status":"{to}"}}"#),
        );
        assert_eq!(st, 200, "{v}");
    };
    // A 5.0SP2 subscriber of the indicative uncross (MDEntryType Q): none before the call.
    let mut q = md_logon(&s, "MD51");
    q.send(
        "V",
        &[
            (262, "q1"),
            (263, "1"),
            (264, "0"),
            (265, "1"),
            (267, "1"),
            (269, "Q"),
            (146, "1"),
            (55, "ACME"),
        ],
    )
    .unwrap();
    let (w, _) = q.expect("W", T).unwrap();
    assert!(!w.text().contains("|269=Q|"), "{}", w.text());
    status("preopen");
    for (v, md) in &mut watchers {
        let (m, _) = md.expect("f", T).unwrap();
        match v {
            FixVersion::Fix42 => {
                check(&m, &[(326, "14"), (325, "Y")]);
                absent(&m, &[625]);
            }
            _ => check(&m, &[(326, "21"), (625, "2"), (325, "Y")]),
        }
    }
    let mut buyer = logon(&s, "S50");
    let mut seller = logon(&s, "S42");
    limit(&mut buyer, "b1", "ACME", "1", "10", "10.10");
    check(&er(&mut buyer), &[(150, "0"), (39, "0")]);
    limit(&mut seller, "s1", "ACME", "2", "6", "10.00");
    check(&er(&mut seller), &[(150, "0"), (39, "0"), (151, "6")]);
    order(&mut seller, "m1", "ACME", "2", "1", &[(40, "1"), (59, "3")]);
    check(
        &er(&mut seller),
        &[
            (150, "8"),
            (
                58,
                "market, IOC and FOK orders are not taken during an auction call",
            ),
        ],
    );
    // The indicative: 6 at 10.00 (both prices trade 6 with the same imbalance; no reference:
    // the lower), published once the book crosses.
    let (x, _) = q.expect("X", T).unwrap();
    check(&x, &[(279, "0"), (269, "Q"), (271, "6")]);
    let px = x.get(270).expect("MDEntryPx");
    assert!(px == "10" || px == "10.00", "{}", x.text());
    // Nothing traded: both are still there, crossed.
    buyer
        .send("H", &[(11, "b1"), (55, "ACME"), (54, "1")])
        .unwrap();
    check(&er(&mut buyer), &[(39, "0"), (151, "10"), (14, "0")]);

    status("open");
    // Volume 6 at either resting price with the same imbalance, no reference: the lower.
    let s_fill = er(&mut seller);
    check(
        &s_fill,
        &[(11, "s1"), (150, "2"), (39, "2"), (31, "10"), (32, "6")],
    );
    let b_fill = er(&mut buyer);
    check(
        &b_fill,
        &[
            (11, "b1"),
            (150, "F"),
            (39, "1"),
            (31, "10"),
            (32, "6"),
            (151, "4"),
        ],
    );
    for (_, md) in &mut watchers {
        let (m, _) = md.expect("f", T).unwrap();
        check(&m, &[(326, "17")]);
        absent(&m, &[625]);
    }
    // The call is over: the indicative is withdrawn.
    let (x, _) = q.expect("X", T).unwrap();
    check(&x, &[(279, "2"), (269, "Q")]);
    s.shutdown().unwrap();
}
