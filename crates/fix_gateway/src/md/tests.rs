use super::*;
use crate::config::{InstrumentDef, SessionDef};
use fix::md::read_entries;
use market_data::Book;
use types::{Event, Symbol};

const T0: u64 = 1_800_000_000_000_000_000;

fn session(sender: &str, version: FixVersion, access: MarketDataAccess) -> SessionDef {
    SessionDef {
        sender_comp_id: sender.into(),
        target_comp_id: "RIALTO".into(),
        version,
        password_hash: None,
        username: None,
        firm: 0,
        market_data: access,
        market_data_extensions: false,
        allow_reset_seq_num: true,
        validate: true,
        drop_copy: false,
    }
}

fn edge() -> MdEdge {
    let cfg = FixConfig {
        sessions: vec![
            session("M44", FixVersion::Fix44, MarketDataAccess::On),
            session("M42", FixVersion::Fix42, MarketDataAccess::Only),
            session("M50", FixVersion::Fix50Sp2, MarketDataAccess::On),
            session("OFF", FixVersion::Fix44, MarketDataAccess::Off),
        ],
        instruments: ["AAA", "BBB"]
            .iter()
            .map(|s| InstrumentDef {
                symbol: Symbol::new(s).unwrap(),
                tick: 1,
                lot: 10,
                price_decimals: 2,
            })
            .collect(),
        resend_store_max: 100,
        heartbeat_min_s: 1,
        heartbeat_max_s: 3600,
        sending_time_window_ns: None,
    };
    MdEdge::new(
        Arc::new(cfg),
        MdLimits {
            subscriptions_max: 2,
            depth_max: 10,
            resend_store_max: 100,
        },
    )
}

/// A client connection: sends raw messages with its own numbers, reads what comes back.
struct Client {
    conn: ConnId,
    sender: &'static str,
    version: FixVersion,
    seq: u64,
}

/// One message received: its MsgType and fields (`tag=value|...`).
#[derive(Debug)]
struct Got {
    msg_type: String,
    text: String,
    bytes: Vec<u8>,
}

impl Got {
    fn field(&self, tag: u32) -> Option<String> {
        let mut d = Decoder::default();
        let m = d.decode(&self.bytes).unwrap();
        m.get(tag).map(|v| String::from_utf8_lossy(v).into_owned())
    }
}

fn received(out: &mut Outbox, conn: ConnId) -> Vec<Got> {
    let mut got = Vec::new();
    for item in &out.items {
        if item.conn != conn || item.close {
            continue;
        }
        let bytes = out.buf[item.start..item.end].to_vec();
        let mut d = Decoder::default();
        let m = d.decode(&bytes).expect("well formed");
        got.push(Got {
            msg_type: String::from_utf8_lossy(m.msg_type()).into_owned(),
            text: String::from_utf8_lossy(&bytes).replace('\x01', "|"),
            bytes: bytes.clone(),
        });
    }
    out.clear();
    got
}

fn closed(out: &Outbox, conn: ConnId) -> bool {
    out.items.iter().any(|i| i.conn == conn && i.close)
}

impl Client {
    fn new(conn: ConnId, sender: &'static str, version: FixVersion) -> Client {
        Client {
            conn,
            sender,
            version,
            seq: 0,
        }
    }

    fn send(
        &mut self,
        edge: &mut MdEdge,
        feed: &Feed,
        out: &mut Outbox,
        msg_type: &str,
        body: &str,
    ) {
        self.seq += 1;
        let b = format!(
            "35={msg_type}|49={}|56=RIALTO|34={}|52=20261127-10:00:00.000|{body}",
            self.sender, self.seq
        )
        .replace('|', "\x01");
        let mut bytes = Vec::new();
        fix::wrap_body(self.version, b.as_bytes(), &mut bytes);
        let n = edge.on_bytes(self.conn, &bytes, T0 + self.seq, feed, out);
        assert_eq!(n, bytes.len());
    }

    fn logon(&mut self, edge: &mut MdEdge, feed: &Feed, out: &mut Outbox) -> Vec<Got> {
        let extra = if self.version == FixVersion::Fix50Sp2 {
            "1137=9|"
        } else {
            ""
        };
        self.send(edge, feed, out, "A", &format!("98=0|108=30|141=Y|{extra}"));
        received(out, self.conn)
    }
}

/// Feeds `events` to the feed and the edge, then flushes.
fn publish(edge: &mut MdEdge, feed: &mut Feed, out: &mut Outbox, events: &[Event]) {
    for e in events {
        feed.on_event(e);
        let n = feed.entries().len();
        let entry = feed.entries()[n - 1];
        edge.on_entry(feed, &entry);
    }
    feed.clear_entries();
    edge.flush(T0 + 1000, feed, out);
}

fn level(symbol: u32, side: Side, price: i64, qty: u64, orders: u32) -> Event {
    Event::Level {
        symbol,
        side,
        price,
        qty,
        orders,
    }
}

fn trade(symbol: u32, price: i64, qty: u64, id: u64) -> Event {
    Event::Trade {
        trade_id: id,
        symbol,
        price,
        qty,
        maker_id: 1,
        taker_id: 2,
        maker_account: 1,
        taker_account: 2,
        taker_side: Side::Buy,
        maker_leaves: 0,
        taker_leaves: 0,
    }
}

/// A subscriber's book rebuilt from the W and X it got.
fn rebuild(book: &mut Book, rpt: &mut u64, got: &[Got]) {
    for g in got {
        let mut d = Decoder::default();
        let m = d.decode(&g.bytes).unwrap();
        match g.msg_type.as_str() {
            "W" => {
                *book = Book::default();
                read_entries(&m, |_, e| {
                    let side = if e.entry_type == b'0' {
                        Side::Buy
                    } else {
                        Side::Sell
                    };
                    if e.entry_type == b'J' || e.entry_type == b'2' {
                        *rpt = e.rpt_seq.unwrap_or(*rpt);
                        return;
                    }
                    let price = fix::parse_price(e.price, 2, 1).unwrap();
                    book.set(side, price, e.size, e.orders.unwrap() as u32);
                    *rpt = e.rpt_seq.unwrap_or(*rpt);
                })
                .unwrap();
            }
            "X" => {
                read_entries(&m, |_, e| {
                    if let Some(r) = e.rpt_seq {
                        assert_eq!(r, *rpt + 1, "RptSeq gap in {}", g.text);
                        *rpt = r;
                    }
                    if e.entry_type == b'2' {
                        return;
                    }
                    let side = if e.entry_type == b'0' {
                        Side::Buy
                    } else {
                        Side::Sell
                    };
                    let price = fix::parse_price(e.price, 2, 1).unwrap();
                    let action = match e.action {
                        Some(b'0') => Action::New,
                        Some(b'1') => Action::Change,
                        _ => Action::Delete,
                    };
                    assert!(book.apply(&LevelEntry {
                        side,
                        action,
                        price,
                        qty: e.size,
                        orders: e.orders.unwrap_or(0) as u32,
                    }));
                })
                .unwrap();
            }
            _ => {}
        }
    }
}

const SUB_ALL: &str = "262=r1|263=1|264=0|265=1|267=3|269=0|269=1|269=2|146=1|55=AAA|";

#[test]
fn a_subscriber_gets_a_snapshot_then_every_entry_in_order() {
    let (mut edge, mut feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    publish(
        &mut edge,
        &mut feed,
        &mut out,
        &[level(0, Side::Buy, 100, 10, 1)],
    );
    let mut c = Client::new(7, "M50", FixVersion::Fix50Sp2);
    let got = c.logon(&mut edge, &feed, &mut out);
    assert_eq!(got[0].msg_type, "A");
    c.send(&mut edge, &feed, &mut out, "V", SUB_ALL);
    let got = received(&mut out, 7);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].msg_type, "W");
    assert!(
        got[0].text.contains("|269=0|270=1|271=10|346=1|83=1|"),
        "{}",
        got[0].text
    );
    let (mut book, mut rpt) = (Book::default(), 0);
    rebuild(&mut book, &mut rpt, &got);
    publish(
        &mut edge,
        &mut feed,
        &mut out,
        &[
            level(0, Side::Sell, 101, 5, 1),
            trade(0, 100, 4, 1),
            level(0, Side::Buy, 100, 6, 1),
            level(1, Side::Buy, 50, 1, 1),
        ],
    );
    let got = received(&mut out, 7);
    assert_eq!(got.len(), 1, "one X per flush");
    assert_eq!(got[0].msg_type, "X");
    assert!(
        got[0]
            .text
            .contains("|279=0|269=2|278=1|55=AAA|270=1|271=4|1003=1|83=3|"),
        "{}",
        got[0].text
    );
    assert!(
        !got[0].text.contains("55=BBB"),
        "another symbol leaked: {}",
        got[0].text
    );
    rebuild(&mut book, &mut rpt, &got);
    assert_eq!(book, *feed.book(0));
    assert_eq!(rpt, feed.rpt_seq(0));
    assert_eq!(edge.subscriptions(), 1);
    // Unsubscribed: nothing more.
    c.send(&mut edge, &feed, &mut out, "V", "262=r1|263=2|");
    publish(
        &mut edge,
        &mut feed,
        &mut out,
        &[level(0, Side::Buy, 99, 1, 1)],
    );
    assert!(received(&mut out, 7).is_empty());
    assert_eq!(edge.subscriptions(), 0);
}

#[test]
fn top_of_book_subscribers_see_only_the_best_level() {
    let (mut edge, mut feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    let mut c = Client::new(7, "M44", FixVersion::Fix44);
    c.logon(&mut edge, &feed, &mut out);
    c.send(
        &mut edge,
        &feed,
        &mut out,
        "V",
        "262=t|263=1|264=1|267=2|269=0|269=1|146=1|55=AAA|",
    );
    let got = received(&mut out, 7);
    assert_eq!(got[0].msg_type, "W");
    assert!(
        got[0].text.contains("|268=0|"),
        "an empty book in FIX 4.4: {}",
        got[0].text
    );
    assert!(
        !got[0].text.contains("|83="),
        "no RptSeq in FIX 4.4: {}",
        got[0].text
    );
    let mut book = Book::default();
    let mut rpt = 0;
    for (p, q) in [(100, 5), (101, 6), (99, 7)] {
        publish(
            &mut edge,
            &mut feed,
            &mut out,
            &[level(0, Side::Buy, p, q, 1)],
        );
        rebuild(&mut book, &mut rpt, &received(&mut out, 7));
    }
    publish(
        &mut edge,
        &mut feed,
        &mut out,
        &[level(0, Side::Buy, 101, 0, 0)],
    );
    rebuild(&mut book, &mut rpt, &received(&mut out, 7));
    assert_eq!(book.best(Side::Buy), feed.book(0).best(Side::Buy));
    assert_eq!(book.len(Side::Buy), 1);
}

#[test]
fn full_refresh_subscribers_get_w_for_updates() {
    let (mut edge, mut feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    let mut c = Client::new(7, "M44", FixVersion::Fix44);
    c.logon(&mut edge, &feed, &mut out);
    c.send(
        &mut edge,
        &feed,
        &mut out,
        "V",
        "262=f|263=1|264=0|265=0|267=3|269=0|269=1|269=2|146=1|55=AAA|",
    );
    received(&mut out, 7);
    publish(
        &mut edge,
        &mut feed,
        &mut out,
        &[level(0, Side::Buy, 100, 5, 1), trade(0, 100, 1, 9)],
    );
    let got = received(&mut out, 7);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].msg_type, "W");
    assert!(
        got[0]
            .text
            .contains("|269=0|270=1|271=5|346=1|269=2|270=1|271=1|"),
        "{}",
        got[0].text
    );
}

#[test]
fn bad_requests_get_the_reject_their_reason_calls_for() {
    let (mut edge, mut feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    publish(
        &mut edge,
        &mut feed,
        &mut out,
        &[level(0, Side::Buy, 100, 10, 1)],
    );
    let mut c = Client::new(7, "M44", FixVersion::Fix44);
    c.logon(&mut edge, &feed, &mut out);
    let cases = [
        ("262=a|263=1|264=0|267=1|269=0|146=1|55=ZZZ|", "Y", "281=0"),
        ("262=b|263=1|264=50|267=1|269=0|146=1|55=AAA|", "Y", "281=5"),
        ("262=c|263=1|264=0|267=1|269=7|146=1|55=AAA|", "Y", "281=8"),
        ("262=d|263=1|264=0|267=1|269=0|146=2|55=AAA|", "3", "373=16"),
        ("263=1|264=0|267=1|269=0|146=1|55=AAA|", "3", "371=262"),
        ("262=e|263=2|", "j", "380=1"),
    ];
    for (body, want_type, want_field) in cases {
        c.send(&mut edge, &feed, &mut out, "V", body);
        let got = received(&mut out, 7);
        assert_eq!(got.len(), 1, "{body}");
        assert_eq!(got[0].msg_type, want_type, "{body}: {}", got[0].text);
        assert!(got[0].text.contains(want_field), "{body}: {}", got[0].text);
        assert!(
            got[0].field(58).is_some_and(|t| !t.is_empty()),
            "a reason: {}",
            got[0].text
        );
    }
    // Duplicate MDReqID, then the session's limit (2).
    c.send(&mut edge, &feed, &mut out, "V", SUB_ALL);
    c.send(&mut edge, &feed, &mut out, "V", SUB_ALL);
    let got = received(&mut out, 7);
    assert_eq!(got.last().unwrap().msg_type, "Y");
    assert!(got.last().unwrap().text.contains("281=1"));
    c.send(
        &mut edge,
        &feed,
        &mut out,
        "V",
        &SUB_ALL.replace("r1", "r2"),
    );
    c.send(
        &mut edge,
        &feed,
        &mut out,
        "V",
        &SUB_ALL.replace("r1", "r3"),
    );
    let got = received(&mut out, 7);
    assert_eq!(got.last().unwrap().msg_type, "Y");
    assert!(
        got.last().unwrap().text.contains("281=2"),
        "{}",
        got.last().unwrap().text
    );
    // Orders on the market-data port: a clear business reject, the session goes on.
    c.send(
        &mut edge,
        &feed,
        &mut out,
        "D",
        "11=x|55=AAA|54=1|38=10|40=2|44=1|59=0|",
    );
    let got = received(&mut out, 7);
    assert_eq!(got[0].msg_type, "j");
    assert!(got[0].text.contains("order-entry port"));
    assert_eq!(edge.sessions_logged_on(), 1);
}

#[test]
fn security_list_and_status() {
    let (mut edge, feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    let mut c = Client::new(7, "M50", FixVersion::Fix50Sp2);
    c.logon(&mut edge, &feed, &mut out);
    c.send(&mut edge, &feed, &mut out, "x", "320=s|559=4|");
    let got = received(&mut out, 7);
    assert_eq!(got[0].msg_type, "y");
    assert!(
        got[0]
            .text
            .contains("|146=2|55=AAA|969=0.01|561=10|55=BBB|"),
        "{}",
        got[0].text
    );
    c.send(&mut edge, &feed, &mut out, "e", "324=q|55=BBB|263=0|");
    let got = received(&mut out, 7);
    assert_eq!(got[0].msg_type, "f");
    assert!(got[0].text.contains("|326=17|"));
    c.send(&mut edge, &feed, &mut out, "e", "324=q|55=ZZZ|263=0|");
    let got = received(&mut out, 7);
    assert_eq!(got[0].msg_type, "j");
    assert!(got[0].text.contains("380=2"));
    // FIX 4.2 has no SecurityList.
    let mut c42 = Client::new(8, "M42", FixVersion::Fix42);
    c42.logon(&mut edge, &feed, &mut out);
    c42.send(&mut edge, &feed, &mut out, "x", "320=s|559=4|");
    let got = received(&mut out, 8);
    assert_eq!(got[0].msg_type, "j");
    assert!(got[0].text.contains("380=3"));
}

#[test]
fn who_may_log_on() {
    let (mut edge, feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    let mut off = Client::new(9, "OFF", FixVersion::Fix44);
    let got = off.logon(&mut edge, &feed, &mut out);
    assert_eq!(got[0].msg_type, "5");
    assert!(got[0].text.contains("no market data for this session"));
    let mut a = Client::new(10, "M44", FixVersion::Fix44);
    assert_eq!(a.logon(&mut edge, &feed, &mut out)[0].msg_type, "A");
    let mut b = Client::new(11, "M44", FixVersion::Fix44);
    let got = b.logon(&mut edge, &feed, &mut out);
    assert_eq!(got[0].msg_type, "5");
    assert!(got[0].text.contains("already logged on"));
    // The first connection is undisturbed; after it closes the session may log on again.
    edge.on_closed(10);
    b.seq = 0;
    let got = b.logon(&mut edge, &feed, &mut out);
    assert_eq!(got[0].msg_type, "A", "{}", got[0].text);
}

#[test]
fn a_session_behind_is_conflated_then_logged_out() {
    let (mut edge, mut feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    let mut c = Client::new(7, "M50", FixVersion::Fix50Sp2);
    c.logon(&mut edge, &feed, &mut out);
    c.send(&mut edge, &feed, &mut out, "V", SUB_ALL);
    let (mut book, mut rpt) = (Book::default(), 0);
    rebuild(&mut book, &mut rpt, &received(&mut out, 7));
    edge.set_behind(7, true, T0, &feed, &mut out);
    publish(
        &mut edge,
        &mut feed,
        &mut out,
        &[
            level(0, Side::Buy, 100, 5, 1),
            level(0, Side::Buy, 101, 5, 1),
        ],
    );
    assert!(received(&mut out, 7).is_empty(), "nothing while behind");
    edge.set_behind(7, false, T0, &feed, &mut out);
    let got = received(&mut out, 7);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].msg_type, "W", "a fresh snapshot");
    rebuild(&mut book, &mut rpt, &got);
    assert_eq!((book.clone(), rpt), (feed.book(0).clone(), 2));
    publish(
        &mut edge,
        &mut feed,
        &mut out,
        &[level(0, Side::Buy, 100, 0, 0)],
    );
    rebuild(&mut book, &mut rpt, &received(&mut out, 7));
    assert_eq!(book, *feed.book(0));
    assert_eq!(edge.stats.conflations, 1);
    edge.slow_logout(7, "slow consumer", T0, &mut out);
    assert!(closed(&out, 7));
    let got = received(&mut out, 7);
    assert_eq!(got[0].msg_type, "5");
    assert!(got[0].text.contains("slow consumer"));
    assert_eq!(edge.subscriptions(), 0);
}

#[test]
fn a_large_flush_is_split_into_x_messages_a_client_accepts() {
    let (mut edge, mut feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    let mut c = Client::new(7, "M50", FixVersion::Fix50Sp2);
    c.logon(&mut edge, &feed, &mut out);
    c.send(&mut edge, &feed, &mut out, "V", SUB_ALL);
    let (mut book, mut rpt) = (Book::default(), 0);
    rebuild(&mut book, &mut rpt, &received(&mut out, 7));
    let events: Vec<Event> = (0..60)
        .map(|i| level(0, Side::Buy, 100 + i, 5, 1))
        .collect();
    publish(&mut edge, &mut feed, &mut out, &events);
    let got = received(&mut out, 7);
    assert_eq!(got.len(), 3, "60 entries in X of at most {X_ENTRIES_MAX}");
    for g in &got {
        let mut d = Decoder::default();
        assert!(d.decode(&g.bytes).is_ok(), "within the default limits");
    }
    rebuild(&mut book, &mut rpt, &got);
    assert_eq!((book, rpt), (feed.book(0).clone(), 60));
}

/// A session that authenticates binds only when its owner's check accepts the Logon; the
/// check sees the address and the Password, and every refusal says the same.
#[test]
fn market_data_logons_need_the_owners_check() {
    let mut e = edge();
    let mut cfg = (*e.cfg).clone();
    cfg.sessions[0].password_hash = Some("$argon2id$checked-by-the-owner".into());
    e = MdEdge::new(Arc::new(cfg), e.limits);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    e.set_logon_check(Box::new(move |peer, session, l| {
        let pw = l.password.map(|p| p.to_str_lossy().into_owned());
        s.lock().unwrap().push((peer, session, pw.clone()));
        match pw.as_deref() {
            Some("right") => Credentials::Accepted,
            _ => Credentials::Refused,
        }
    }));
    let (feed, mut out) = (Feed::new(2), Outbox::default());
    let peer: IpAddr = [10, 0, 0, 9].into();
    for (conn, sender, body, bound) in [
        (1, "M44", "554=wrong|", false),
        (2, "M44", "", false),
        (3, "NOBODY", "554=right|", false),
        (4, "M44", "554=right|", true),
    ] {
        e.on_accepted(conn, peer);
        let b = format!(
            "35=A|49={sender}|56=RIALTO|34=1|52=20261127-10:00:00.000|98=0|108=30|141=Y|{body}"
        )
        .replace('|', "\x01");
        let mut bytes = Vec::new();
        fix::wrap_body(FixVersion::Fix44, b.as_bytes(), &mut bytes);
        e.on_bytes(conn, &bytes, T0, &feed, &mut out);
        let got = received(&mut out, conn);
        assert_eq!(e.session_of(conn).is_some(), bound, "{sender} {body}");
        if bound {
            assert_eq!(got[0].msg_type, "A");
        } else {
            assert_eq!(got[0].msg_type, "5");
            assert_eq!(got[0].field(58).as_deref(), Some("logon refused"));
        }
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 4);
    assert_eq!(seen[0], (Some(peer), Some(0), Some("wrong".to_string())));
    assert_eq!(seen[1].2, None);
    assert_eq!(
        seen[2].1, None,
        "unknown CompIDs are checked too (throttle)"
    );
}

#[test]
fn security_status_follows_the_instruments_status_for_those_who_subscribed() {
    use exchange::InstrumentStatus as S;
    let (mut edge, feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    let mut sub = Client::new(7, "M50", FixVersion::Fix50Sp2);
    sub.logon(&mut edge, &feed, &mut out);
    let mut once = Client::new(8, "M44", FixVersion::Fix44);
    once.logon(&mut edge, &feed, &mut out);
    sub.send(&mut edge, &feed, &mut out, "e", "324=w|55=BBB|263=1|");
    assert!(received(&mut out, 7)[0].text.contains("|326=17|"));
    once.send(&mut edge, &feed, &mut out, "e", "324=o|55=BBB|263=0|");
    assert!(received(&mut out, 8)[0].text.contains("|326=17|"));
    // A halt: the subscriber is told (its request's id), the snapshot requester is not.
    edge.set_instrument_status(1, S::Halted, 1, &mut out);
    let got = received(&mut out, 7);
    assert_eq!(got.len(), 1);
    assert!(
        got[0].text.contains("|324=w|55=BBB|325=Y|326=2|"),
        "{}",
        got[0].text
    );
    assert!(received(&mut out, 8).is_empty());
    // No change, no message; AAA's status is its own.
    edge.set_instrument_status(1, S::Halted, 2, &mut out);
    edge.set_instrument_status(0, S::Closed, 2, &mut out);
    assert!(received(&mut out, 7).is_empty());
    once.send(&mut edge, &feed, &mut out, "e", "324=o2|55=AAA|263=0|");
    assert!(received(&mut out, 8)[0].text.contains("|326=18|"));
    // Unsubscribed: no more.
    sub.send(&mut edge, &feed, &mut out, "e", "324=w|55=BBB|263=2|");
    edge.set_instrument_status(1, S::Open, 3, &mut out);
    assert!(received(&mut out, 7).is_empty());
}

/// A call auction's status in each version: SecurityTradingStatus 21 (pre-open) with
/// TradingSessionSubID 2 (opening) or 4 (closing) in FIX 4.4 and 5.0SP2; FIX 4.2, which has
/// neither, 14. Every message validates against its version's dictionary.
#[test]
fn call_auctions_are_told_in_each_versions_values() {
    use exchange::InstrumentStatus as S;
    let (mut edge, feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    let mut clients = [
        Client::new(1, "M42", FixVersion::Fix42),
        Client::new(2, "M44", FixVersion::Fix44),
        Client::new(3, "M50", FixVersion::Fix50Sp2),
    ];
    for c in &mut clients {
        c.logon(&mut edge, &feed, &mut out);
        c.send(&mut edge, &feed, &mut out, "e", "324=w|55=AAA|263=1|");
        assert!(received(&mut out, c.conn)[0].text.contains("|326=17|"));
    }
    let check = |got: &Got, version: FixVersion| {
        let mut d = Decoder::default();
        let m = d.decode(&got.bytes).unwrap();
        let valid = fix::dict::dictionary(version).validate(&m);
        assert!(valid.is_ok(), "{version:?}: {valid:?} {}", got.text);
    };
    // What each client got (`received` empties the outbox: one outbox per client's view).
    let conns = clients.each_ref().map(|c| c.conn);
    let each = |out: &mut Outbox| {
        let got: Vec<Vec<Got>> = conns
            .iter()
            .map(|&conn| {
                let mut mine = Outbox::default();
                for it in out.items.iter().filter(|it| it.conn == conn) {
                    mine.push(conn, &out.buf[it.start..it.end]);
                }
                received(&mut mine, conn)
            })
            .collect();
        out.clear();
        got
    };
    for (status, sub) in [(S::PreOpen, "2"), (S::PreClose, "4")] {
        edge.set_instrument_status(0, status, T0, &mut out);
        let all = each(&mut out);
        for (c, got) in clients.iter().zip(all) {
            assert_eq!(got.len(), 1, "{:?}", c.version);
            check(&got[0], c.version);
            let (code, sub_id) = match c.version {
                FixVersion::Fix42 => ("14", None),
                _ => ("21", Some(sub.to_string())),
            };
            assert_eq!(got[0].field(326).as_deref(), Some(code), "{}", got[0].text);
            assert_eq!(got[0].field(625), sub_id, "{}", got[0].text);
            assert_eq!(got[0].field(325).as_deref(), Some("Y"));
        }
    }
    // A request during the call is answered with the same values.
    clients[1].send(&mut edge, &feed, &mut out, "e", "324=n|55=AAA|263=0|");
    let got = received(&mut out, 2);
    assert!(
        got[0].text.contains("|625=4|325=N|326=21|"),
        "{}",
        got[0].text
    );
    edge.set_instrument_status(0, S::Open, T0, &mut out);
    for got in each(&mut out) {
        assert_eq!(got[0].field(326).as_deref(), Some("17"));
        assert_eq!(got[0].field(625), None);
    }
}

const SUB_Q: &str = "262=q1|263=1|264=0|265=1|267=3|269=0|269=1|269=Q|146=1|55=AAA|";

/// The indicative uncross (MDEntryType Q) in FIX 5.0SP2: in the snapshot while there is one,
/// then as X entries that appear (279=0), change (1) and are withdrawn (2), none with RptSeq,
/// only to subscriptions that asked for Q; FIX 4.2 and 4.4 have no Q and refuse it.
#[test]
fn the_indicative_uncross_is_published_to_fix50_subscribers_that_ask_for_it() {
    let (mut edge, mut feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    publish(
        &mut edge,
        &mut feed,
        &mut out,
        &[level(0, Side::Buy, 100, 10, 1)],
    );
    edge.set_indicative(0, 100, 10);
    let mut q = Client::new(7, "M50", FixVersion::Fix50Sp2);
    q.logon(&mut edge, &feed, &mut out);
    q.send(&mut edge, &feed, &mut out, "V", SUB_Q);
    let got = received(&mut out, 7);
    assert_eq!(got[0].msg_type, "W");
    assert!(
        got[0]
            .text
            .contains("|268=2|269=0|270=1|271=10|346=1|83=1|269=Q|270=1|271=10|10="),
        "{}",
        got[0].text
    );
    // Another subscription of the same session asks for the book only: no Q for it.
    q.send(
        &mut edge,
        &feed,
        &mut out,
        "V",
        &SUB_ALL.replace("r1", "r2"),
    );
    assert!(!received(&mut out, 7)[0].text.contains("269=Q"));

    // A change, the same again (nothing), a level, then the uncross withdrawn.
    edge.set_indicative(0, 101, 25);
    edge.set_indicative(0, 101, 25);
    edge.flush(T0 + 2000, &feed, &mut out);
    let got = received(&mut out, 7);
    assert_eq!(got.len(), 1);
    assert!(
        got[0]
            .text
            .contains("|262=q1|268=1|279=1|269=Q|55=AAA|270=1.01|271=25|10="),
        "{}",
        got[0].text
    );
    publish(
        &mut edge,
        &mut feed,
        &mut out,
        &[level(0, Side::Sell, 102, 5, 1)],
    );
    let got = received(&mut out, 7);
    assert_eq!(got.len(), 2, "one X per subscription");
    edge.set_indicative(0, 0, 0);
    edge.flush(T0 + 3000, &feed, &mut out);
    let got = received(&mut out, 7);
    assert!(
        got[0]
            .text
            .contains("|279=2|269=Q|55=AAA|270=1.01|271=0|10="),
        "{}",
        got[0].text
    );
    assert_eq!(edge.indicative(0), (0, 0));
    // Then a new one appears; BBB's is not AAA's subscribers' business.
    edge.set_indicative(0, 99, 3);
    edge.set_indicative(1, 50, 1);
    edge.flush(T0 + 4000, &feed, &mut out);
    let got = received(&mut out, 7);
    assert_eq!(got.len(), 1);
    assert!(got[0]
        .text
        .contains("|279=0|269=Q|55=AAA|270=0.99|271=3|10="));
    for g in &got {
        let mut d = Decoder::default();
        let m = d.decode(&g.bytes).unwrap();
        assert!(fix::dict::dictionary(FixVersion::Fix50Sp2)
            .validate(&m)
            .is_ok());
    }

    // FIX 4.4 and 4.2 have no MDEntryType Q.
    for (conn, sender, version) in [(8, "M44", FixVersion::Fix44), (9, "M42", FixVersion::Fix42)] {
        let mut c = Client::new(conn, sender, version);
        c.logon(&mut edge, &feed, &mut out);
        c.send(&mut edge, &feed, &mut out, "V", SUB_Q);
        let got = received(&mut out, conn);
        assert_eq!(got[0].msg_type, "Y", "{}", got[0].text);
        assert_eq!(got[0].field(281).as_deref(), Some("8"));
        assert_eq!(
            got[0].field(58).as_deref(),
            Some("MDEntryType(269) Q (auction clearing price) is published in FIX 5.0SP2 only")
        );
    }
}

/// An indicative uncross alone in a snapshot: the W still says its RptSeq, on an EmptyBook
/// entry (269=J), since the Q entry carries none.
#[test]
fn a_snapshot_with_only_an_indicative_uncross_keeps_its_rpt_seq() {
    let (mut edge, feed, mut out) = (edge(), Feed::new(2), Outbox::default());
    edge.set_indicative(1, 100, 10);
    let mut q = Client::new(7, "M50", FixVersion::Fix50Sp2);
    q.logon(&mut edge, &feed, &mut out);
    q.send(
        &mut edge,
        &feed,
        &mut out,
        "V",
        &SUB_Q.replace("AAA", "BBB"),
    );
    let got = received(&mut out, 7);
    assert!(
        got[0]
            .text
            .contains("|268=2|269=J|83=0|269=Q|270=1|271=10|10="),
        "{}",
        got[0].text
    );
}
