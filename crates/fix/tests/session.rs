//! Session rules, one test per rule: Logon (and its refusals), heartbeats, sequence gaps and
//! resends, sequence resets, serving ResendRequest, Logout, Reject for malformed messages, a
//! muted session (journal replay), the typed `on_message`/`next_queued` path, and snapshots
//! (`vars`/`restore`).

mod common;
use common::{pipes, SEC, T0};

use fix::app::{ExecType, ExecutionReport, InstrumentRef, Instruments, NewOrderSingle, OrdStatus};
use fix::{
    Credentials, Decoder, DisconnectReason, Encoder, FixVersion, Header, InHeader, Inbound, Limits,
    Logon, MemoryStore, MessageStore, Session, SessionConfig, SessionEvent, SessionHandler,
    SessionRejectReason, SessionState, SessionVars, Stored, Text, TimePrecision,
};

/// The application message a typed session holds here: a NewOrderSingle, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Order(&'static str);

impl fix::InboundApp for Order {
    fn msg_type(&self) -> &[u8] {
        b"D"
    }
}

#[derive(Default)]
struct Rec {
    out: Vec<Vec<u8>>,
    app: Vec<Vec<u8>>,
    events: Vec<SessionEvent>,
    /// Replaying a journal: the session must format nothing.
    muted: bool,
}

impl SessionHandler for Rec {
    fn send(&mut self, bytes: &[u8]) {
        assert!(!self.muted, "a muted session sent {}", pipes(bytes));
        self.out.push(bytes.to_vec());
    }
    fn on_event(&mut self, event: SessionEvent) {
        self.events.push(event);
    }
    fn muted(&self) -> bool {
        self.muted
    }
}

impl Rec {
    fn take(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.out)
    }
    fn disconnected(&self) -> Option<DisconnectReason> {
        self.events.iter().find_map(|e| match e {
            SessionEvent::Disconnect(r) => Some(*r),
            _ => None,
        })
    }
}

/// Value of `tag` in an encoded message, as a string.
fn f(bytes: &[u8], tag: u32) -> Option<String> {
    let mut d = Decoder::new(Limits::default());
    let m = d.decode(bytes).expect("session output decodes");
    m.get(tag).map(|v| String::from_utf8_lossy(v).into_owned())
}

fn mt(bytes: &[u8]) -> String {
    f(bytes, 35).unwrap()
}

/// An inbound message from CLIENT1 to RIALTO. `body` uses `|` for SOH.
struct In<'a> {
    version: FixVersion,
    msg_type: &'a str,
    seq: u64,
    body: &'a str,
    poss_dup: bool,
    orig_sending_time: Option<&'a str>,
    sender: &'a str,
    sending_time_ns: u64,
}

impl<'a> In<'a> {
    fn new(msg_type: &'a str, seq: u64, body: &'a str) -> In<'a> {
        In {
            version: FixVersion::Fix44,
            msg_type,
            seq,
            body,
            poss_dup: false,
            orig_sending_time: None,
            sender: "CLIENT1",
            sending_time_ns: T0,
        }
    }
    fn dup(mut self) -> In<'a> {
        self.poss_dup = true;
        self.orig_sending_time = Some("20231114-22:13:19.000");
        self
    }
    fn bytes(&self) -> Vec<u8> {
        let mut e = Encoder::default();
        e.begin(self.msg_type.as_bytes());
        e.header(&Header {
            sender_comp_id: self.sender.as_bytes(),
            target_comp_id: b"RIALTO",
            msg_seq_num: self.seq,
            sending_time_ns: self.sending_time_ns,
            poss_dup: self.poss_dup,
            orig_sending_time: self.orig_sending_time.map(str::as_bytes),
            time_precision: TimePrecision::Millis,
        });
        for kv in self.body.split('|').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap();
            e.field(k.parse().unwrap(), v.as_bytes());
        }
        e.finish(self.version).to_vec()
    }
}

fn cfg() -> SessionConfig {
    SessionConfig::new(FixVersion::Fix44, "RIALTO", "CLIENT1")
}

type Sess = Session<MemoryStore, Vec<u8>>;

/// Feeds raw bytes; delivered application messages go to `h.app`. Returns bytes consumed.
fn feed_bytes(s: &mut Sess, bytes: &[u8], now: u64, h: &mut Rec) -> usize {
    let mut app = Vec::new();
    let used = s.on_bytes(bytes, now, h, &mut |m| app.push(m.to_vec()));
    h.app.extend(app);
    used
}

fn feed(s: &mut Sess, msg: In<'_>, now: u64, h: &mut Rec) {
    let b = msg.bytes();
    assert_eq!(feed_bytes(s, &b, now, h), b.len());
}

/// A session that has accepted CLIENT1's Logon (seq 1) at T0; output cleared.
fn logged_on() -> (Sess, Rec) {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(1000));
    let mut h = Rec::default();
    s.on_connected(T0);
    feed(&mut s, In::new("A", 1, "98=0|108=30|"), T0, &mut h);
    assert_eq!(s.state(), SessionState::Active);
    h.out.clear();
    h.events.clear();
    (s, h)
}

fn nos(cl: &str) -> String {
    format!("11={cl}|55=ACME|54=1|38=100|40=2|44=10.00|59=0|60=20231114-22:13:20.000|")
}

fn exec_report(cl: &[u8]) -> ExecutionReport<'_> {
    ExecutionReport {
        order_id: 7,
        cl_ord_id: cl,
        orig_cl_ord_id: None,
        exec_id: (7, 0),
        exec_type: ExecType::New,
        ord_status: OrdStatus::New,
        account: 0,
        symbol: b"ACME",
        side: types::Side::Buy,
        ord_type: types::OrdType::Limit,
        price: 1000,
        time_in_force: types::TimeInForce::Day,
        order_qty: 100,
        ext: Default::default(),
        last: None,
        leaves_qty: 100,
        cum_qty: 0,
        notional: 0,
        price_decimals: 2,
        text: None,
        transact_time_ns: T0,
    }
}

#[test]
fn logon_accepted_and_answered() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    feed(&mut s, In::new("A", 1, "98=0|108=30|"), T0, &mut h);
    assert_eq!(h.events, [SessionEvent::LoggedOn { reset: false }]);
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "A");
    assert_eq!(f(&out[0], 108).as_deref(), Some("30"));
    assert_eq!(f(&out[0], 98).as_deref(), Some("0"));
    assert_eq!(f(&out[0], 34).as_deref(), Some("1"));
    assert_eq!(f(&out[0], 49).as_deref(), Some("RIALTO"));
    assert_eq!(f(&out[0], 56).as_deref(), Some("CLIENT1"));
    assert_eq!((s.next_in(), s.next_out()), (2, 2));
    assert_eq!(s.heart_bt_int_s(), 30);
}

#[test]
fn logon_with_unknown_comp_ids_is_refused_with_an_unnumbered_logout() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    let mut m = In::new("A", 1, "98=0|108=30|");
    m.sender = "INTRUDER";
    feed(&mut s, m, T0, &mut h);
    assert_eq!(h.out.len(), 1);
    assert_eq!(
        pipes(&h.out[0]),
        "8=FIX.4.4|9=74|35=5|34=1|49=RIALTO|56=INTRUDER|52=20231114-22:13:20.000|\
58=logon refused|10=212|"
    );
    assert_eq!(h.disconnected(), Some(DisconnectReason::BadCompId));
    assert_eq!(s.state(), SessionState::Disconnected);
    assert_eq!(
        (s.next_in(), s.next_out()),
        (1, 1),
        "a refused Logon consumes nothing"
    );
}

/// A session that requires authentication accepts only a Logon whose owner accepted its
/// credentials; it never compares a password itself (one read from bytes is unchecked), and
/// every refusal says the same generic text.
#[test]
fn logon_credentials_checked() {
    let mut c = cfg();
    c.authenticate = true;
    for (credentials, ok) in [
        (Credentials::Accepted, true),
        (Credentials::Refused, false),
        (Credentials::Unchecked, false),
    ] {
        let mut s: Session<MemoryStore, Order> = Session::new(c.clone(), MemoryStore::new(10));
        let mut h = Rec::default();
        s.on_connected(T0);
        let l = Logon {
            credentials,
            ..logon_fields()
        };
        s.on_message(&hdr(1), &Inbound::Logon(Box::new(l)), T0, &mut h);
        if ok {
            assert_eq!(s.state(), SessionState::Active);
        } else {
            assert_eq!(h.disconnected(), Some(DisconnectReason::BadCredentials));
            assert_eq!(h.out.len(), 1);
            assert_eq!(mt(&h.out[0]), "5");
            assert_eq!(f(&h.out[0], 58).as_deref(), Some("logon refused"));
            assert_eq!(f(&h.out[0], 34).as_deref(), Some("1"));
            assert_eq!((s.next_in(), s.next_out()), (1, 1));
        }
    }
    // From bytes: the Password is read, but nobody accepted it.
    let mut s: Sess = Session::new(c.clone(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    feed(
        &mut s,
        In::new("A", 1, "98=0|108=30|554=secret|"),
        T0,
        &mut h,
    );
    assert_eq!(h.disconnected(), Some(DisconnectReason::BadCredentials));
    assert_eq!(f(&h.out[0], 58).as_deref(), Some("logon refused"));
}

#[test]
fn logon_heartbeat_interval_negotiated_within_bounds() {
    for (hb, ok) in [
        ("0", false),
        ("1", true),
        ("300", true),
        ("301", false),
        ("x", false),
    ] {
        let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
        let mut h = Rec::default();
        s.on_connected(T0);
        let body = format!("98=0|108={hb}|");
        feed(&mut s, In::new("A", 1, &body), T0, &mut h);
        assert_eq!(s.state() == SessionState::Active, ok, "108={hb}");
        if !ok {
            assert_eq!(h.disconnected(), Some(DisconnectReason::BadLogon));
            assert_eq!(mt(&h.out[0]), "5");
            assert_eq!(
                f(&h.out[0], 58).as_deref(),
                Some("HeartBtInt(108) must be 1..300")
            );
        }
    }
}

#[test]
fn first_message_must_be_logon() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    feed(&mut s, In::new("D", 1, &nos("A1")), T0, &mut h);
    assert!(h.out.is_empty() && h.app.is_empty());
    assert_eq!(
        h.disconnected(),
        Some(DisconnectReason::FirstMessageNotLogon)
    );
}

#[test]
fn logon_timeout() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    s.on_tick(T0 + 9 * SEC, &mut h);
    assert_eq!(s.state(), SessionState::AwaitingLogon);
    s.on_tick(T0 + 10 * SEC, &mut h);
    assert_eq!(h.disconnected(), Some(DisconnectReason::LogonTimeout));
}

#[test]
fn heartbeat_sent_when_idle() {
    let (mut s, mut h) = logged_on();
    s.on_tick(T0 + 29 * SEC, &mut h);
    assert!(h.out.is_empty());
    // Keep the inbound side alive so only our heartbeat is due.
    feed(&mut s, In::new("0", 2, ""), T0 + 29 * SEC, &mut h);
    s.on_tick(T0 + 30 * SEC, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "0");
    assert_eq!(f(&out[0], 112), None);
}

/// Silence for HeartBtInt + 20 % brings a TestRequest; no answer within HeartBtInt after it
/// brings a Logout ("heartbeat timeout") and the end of the connection.
#[test]
fn test_request_then_timeout_when_counterparty_is_silent() {
    let (mut s, mut h) = logged_on();
    s.on_tick(T0 + 35 * SEC, &mut h); // 30 s + 20 % not yet reached
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "0", "only our own Heartbeat is due");
    s.on_tick(T0 + 36 * SEC, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1, "the TestRequest alone");
    assert_eq!(mt(&out[0]), "1");
    assert_eq!(f(&out[0], 112).as_deref(), Some("1"));
    s.on_tick(T0 + 65 * SEC, &mut h);
    assert_eq!(h.disconnected(), None);
    assert!(h.out.is_empty());
    s.on_tick(T0 + 66 * SEC, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "5");
    assert_eq!(f(&out[0], 34).as_deref(), Some("4"));
    assert_eq!(f(&out[0], 58).as_deref(), Some("heartbeat timeout"));
    assert_eq!(h.disconnected(), Some(DisconnectReason::HeartbeatTimeout));
    assert_eq!(s.state(), SessionState::Disconnected);
}

#[test]
fn answered_test_request_keeps_the_session() {
    let (mut s, mut h) = logged_on();
    s.on_tick(T0 + 36 * SEC, &mut h);
    let id = f(h.out.iter().find(|m| mt(m) == "1").unwrap(), 112).unwrap();
    let body = format!("112={id}|");
    let mut hb = In::new("0", 2, &body);
    hb.sending_time_ns = T0 + 37 * SEC;
    feed(&mut s, hb, T0 + 37 * SEC, &mut h);
    s.on_tick(T0 + 72 * SEC, &mut h);
    assert_eq!(h.disconnected(), None);
    assert_eq!(s.state(), SessionState::Active);
}

#[test]
fn test_request_answered_with_heartbeat() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("1", 2, "112=PING-7|"), T0, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "0");
    assert_eq!(f(&out[0], 112).as_deref(), Some("PING-7"));
}

#[test]
fn application_messages_delivered_in_order() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("D", 2, &nos("A1")), T0, &mut h);
    feed(&mut s, In::new("D", 3, &nos("A2")), T0, &mut h);
    assert_eq!(h.app.len(), 2);
    assert_eq!(f(&h.app[1], 11).as_deref(), Some("A2"));
    assert!(h.out.is_empty());
    assert_eq!(s.next_in(), 4);
}

#[test]
fn gap_triggers_one_resend_request_and_queued_messages_follow_the_fill() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("D", 5, &nos("A5")), T0, &mut h);
    feed(&mut s, In::new("D", 6, &nos("A6")), T0, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1, "one ResendRequest for the whole gap");
    assert_eq!(mt(&out[0]), "2");
    assert_eq!(f(&out[0], 7).as_deref(), Some("2"));
    assert_eq!(f(&out[0], 16).as_deref(), Some("0"));
    assert!(h.app.is_empty());
    assert_eq!(s.queued().count(), 2);
    assert!(h.events.contains(&SessionEvent::GapDetected {
        expected: 2,
        received: 5
    }));
    // The counterparty resends 2..=6 (5 and 6 again, as PossDup).
    for (seq, cl) in [(2, "A2"), (3, "A3"), (4, "A4"), (5, "A5"), (6, "A6")] {
        feed(&mut s, In::new("D", seq, &nos(cl)).dup(), T0, &mut h);
    }
    let cls: Vec<String> = h.app.iter().map(|m| f(m, 11).unwrap()).collect();
    assert_eq!(cls, ["A2", "A3", "A4", "A5", "A6"]);
    assert_eq!(s.next_in(), 7);
    assert_eq!(s.queued().count(), 0);
    assert!(h.out.is_empty());
}

#[test]
fn gap_filled_by_sequence_reset_gap_fill() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("D", 5, &nos("A5")), T0, &mut h);
    h.take();
    feed(&mut s, In::new("4", 2, "123=Y|36=5|").dup(), T0, &mut h);
    assert_eq!(h.app.len(), 1, "queued 5 delivered after the fill");
    assert_eq!(f(&h.app[0], 11).as_deref(), Some("A5"));
    assert_eq!(s.next_in(), 6);
    assert!(h.events.contains(&SessionEvent::SequenceReset {
        next_in: 5,
        gap_fill: true
    }));
}

#[test]
fn seq_too_low_without_poss_dup_logs_out() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("D", 2, &nos("A2")), T0, &mut h);
    feed(&mut s, In::new("D", 2, &nos("A2")), T0, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "5");
    assert_eq!(
        f(&out[0], 58).as_deref(),
        Some("MsgSeqNum too low, expecting 3 but received 2")
    );
    assert_eq!(
        h.disconnected(),
        Some(DisconnectReason::SeqTooLow {
            expected: 3,
            received: 2
        })
    );
    assert_eq!(h.app.len(), 1);
}

#[test]
fn poss_dup_duplicate_is_ignored() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("D", 2, &nos("A2")), T0, &mut h);
    feed(&mut s, In::new("D", 2, &nos("A2")).dup(), T0, &mut h);
    assert_eq!(h.app.len(), 1);
    assert!(h.out.is_empty());
    assert!(h
        .events
        .contains(&SessionEvent::DuplicateIgnored { seq: 2 }));
    feed(&mut s, In::new("D", 3, &nos("A3")), T0, &mut h);
    assert_eq!(h.app.len(), 2);
}

#[test]
fn sequence_reset_reset_mode_ignores_seq_and_moves_forward_only() {
    let (mut s, mut h) = logged_on();
    // MsgSeqNum is ignored in Reset mode (here it is even "too high").
    feed(&mut s, In::new("4", 99, "36=10|"), T0, &mut h);
    assert_eq!(s.next_in(), 10);
    assert!(h.out.is_empty());
    feed(&mut s, In::new("4", 10, "36=5|"), T0, &mut h);
    assert_eq!(s.next_in(), 10);
    let out = h.take();
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 373).as_deref(), Some("5"));
    assert_eq!(f(&out[0], 371).as_deref(), Some("36"));
    feed(&mut s, In::new("D", 10, &nos("A10")), T0, &mut h);
    assert_eq!(h.app.len(), 1);
}

#[test]
fn resend_request_served_with_poss_dup_and_gap_fills_for_admin() {
    let (mut s, mut h) = logged_on(); // our Logon was seq 1
    let t1 = T0 + SEC;
    s.send_app(&exec_report(b"C2"), t1, &mut h); // 2
    s.send_app(&exec_report(b"C3"), t1, &mut h); // 3
    feed(&mut s, In::new("1", 2, "112=X|"), t1, &mut h); // our Heartbeat is 4
    s.send_app(&exec_report(b"C5"), t1, &mut h); // 5
    let originals = h.take();
    assert_eq!(originals.len(), 4);
    let now = T0 + 5 * SEC;
    let mut rr = In::new("2", 3, "7=1|16=0|");
    rr.sending_time_ns = now;
    feed(&mut s, rr, now, &mut h);
    let out = h.take();
    let summary: Vec<(String, String)> = out.iter().map(|m| (mt(m), f(m, 34).unwrap())).collect();
    assert_eq!(
        summary,
        [
            ("4".into(), "1".into()),
            ("8".into(), "2".into()),
            ("8".into(), "3".into()),
            ("4".into(), "4".into()),
            ("8".into(), "5".into()),
        ]
    );
    // Gap fills: PossDup, GapFillFlag, NewSeqNo of the next message.
    assert_eq!(f(&out[0], 123).as_deref(), Some("Y"));
    assert_eq!(f(&out[0], 36).as_deref(), Some("2"));
    assert_eq!(f(&out[3], 36).as_deref(), Some("5"));
    assert_eq!(f(&out[3], 43).as_deref(), Some("Y"));
    // Resent application messages: PossDup, OrigSendingTime = original SendingTime, new
    // SendingTime, same body.
    for (resent, original) in [(&out[1], &originals[0]), (&out[4], &originals[3])] {
        assert_eq!(f(resent, 43).as_deref(), Some("Y"));
        assert_eq!(f(resent, 122), f(original, 52));
        assert_eq!(f(resent, 52).as_deref(), Some("20231114-22:13:25.000"));
        assert_eq!(f(resent, 11), f(original, 11));
        assert_eq!(f(resent, 37), f(original, 37));
    }
    assert_eq!(s.next_out(), 6, "resends reuse old numbers");
    assert!(h.events.contains(&SessionEvent::ResendServed {
        begin: 1,
        end: 5,
        resent: 3
    }));
}

#[test]
fn resend_request_with_explicit_end_and_store_gaps() {
    let (mut s, mut h) = logged_on();
    for _ in 0..4 {
        s.send_app(&exec_report(b"C"), T0, &mut h); // 2..=5
    }
    h.take();
    feed(&mut s, In::new("2", 2, "7=3|16=4|"), T0, &mut h);
    let out = h.take();
    let seqs: Vec<String> = out.iter().map(|m| f(m, 34).unwrap()).collect();
    assert_eq!(seqs, ["3", "4"]);
    assert!(out.iter().all(|m| mt(m) == "8"));
    // A message the store lost is gap-filled.
    let mut s2: Sess = Session::new(cfg(), MemoryStore::new(1));
    let mut h2 = Rec::default();
    s2.on_connected(T0);
    feed(&mut s2, In::new("A", 1, "98=0|108=30|"), T0, &mut h2);
    s2.send_app(&exec_report(b"C"), T0, &mut h2); // 2, evicted
    s2.send_app(&exec_report(b"C"), T0, &mut h2); // 3, kept
    h2.take();
    feed(&mut s2, In::new("2", 2, "7=2|16=0|"), T0, &mut h2);
    let out = h2.take();
    assert_eq!(mt(&out[0]), "4");
    assert_eq!(f(&out[0], 36).as_deref(), Some("3"));
    assert_eq!(mt(&out[1]), "8");
}

#[test]
fn logout_initiated_by_counterparty() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("5", 2, ""), T0, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "5");
    assert_eq!(h.disconnected(), Some(DisconnectReason::LogoutComplete));
    assert_eq!(s.state(), SessionState::Disconnected);
}

#[test]
fn logout_initiated_by_us_waits_for_the_answer() {
    let (mut s, mut h) = logged_on();
    s.logout(b"shutting down", T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "5");
    assert_eq!(f(&out[0], 58).as_deref(), Some("shutting down"));
    assert_eq!(s.state(), SessionState::LogoutSent);
    feed(&mut s, In::new("5", 2, ""), T0 + SEC, &mut h);
    assert!(h.out.is_empty(), "no second Logout");
    assert_eq!(h.disconnected(), Some(DisconnectReason::LogoutComplete));
    // Without an answer, the timeout ends it.
    let (mut s, mut h) = logged_on();
    s.logout(b"", T0, &mut h);
    s.on_tick(T0 + 4 * SEC, &mut h);
    assert_eq!(h.disconnected(), None);
    s.on_tick(T0 + 5 * SEC, &mut h);
    assert_eq!(h.disconnected(), Some(DisconnectReason::LogoutTimeout));
}

#[test]
fn malformed_message_gets_reject_and_session_continues() {
    let (mut s, mut h) = logged_on();
    // Empty value: the decoder refuses the field; the session still finds MsgSeqNum.
    let mut bad = In::new("D", 2, "11=A|55=X|").bytes();
    let body = String::from_utf8(bad.clone())
        .unwrap()
        .replace("55=X\x01", "55=\x01");
    bad = reframe(&body);
    feed_bytes(&mut s, &bad, T0, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 45).as_deref(), Some("2"));
    assert_eq!(f(&out[0], 373).as_deref(), Some("4"));
    assert_eq!(f(&out[0], 371).as_deref(), Some("55"));
    assert_eq!(s.next_in(), 3);
    // Missing required field in a session message.
    feed(&mut s, In::new("1", 3, ""), T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 373).as_deref(), Some("1"));
    assert_eq!(f(&out[0], 371).as_deref(), Some("112"));
    assert_eq!(f(&out[0], 372).as_deref(), Some("1"));
    // And the session goes on.
    feed(&mut s, In::new("D", 4, &nos("A4")), T0, &mut h);
    assert_eq!(h.app.len(), 1);
    assert_eq!(s.state(), SessionState::Active);
}

/// A well-framed message with a field whose tag does not parse (no '=', empty, not a
/// number): Reject 373=0 with RefSeqNum, RefMsgType and a Text quoting the field, its
/// MsgSeqNum taken (no ResendRequest after it); without a MsgSeqNum: Logout and disconnect.
#[test]
fn malformed_tags_get_reject_and_session_continues() {
    let (mut s, mut h) = logged_on();
    let mut seq = 2;
    for (field, text) in [
        ("abc", "field 'abc' has no '='"),
        ("=5", "field '=5' has an empty tag"),
        ("x1=5", "field 'x1=5' has a tag that is not a number"),
    ] {
        let good = String::from_utf8(In::new("D", seq, "11=A|55=X|").bytes()).unwrap();
        let bad = reframe(&good.replace("55=X\x01", &format!("{field}\x01")));
        feed_bytes(&mut s, &bad, T0, &mut h);
        let out = h.take();
        assert_eq!(out.len(), 1, "{field}");
        assert_eq!(mt(&out[0]), "3");
        assert_eq!(f(&out[0], 45), Some(seq.to_string()));
        assert_eq!(f(&out[0], 373).as_deref(), Some("0"));
        assert_eq!(f(&out[0], 371), None);
        assert_eq!(f(&out[0], 372).as_deref(), Some("D"));
        assert_eq!(f(&out[0], 58).as_deref(), Some(text));
        seq += 1;
        assert_eq!(s.next_in(), seq);
    }
    feed(&mut s, In::new("D", seq, &nos("A4")), T0, &mut h);
    assert_eq!(h.app.len(), 1);
    assert!(h.take().is_empty(), "no ResendRequest");
    // No MsgSeqNum to account for the message by: Logout, as for any message without one.
    let good = String::from_utf8(In::new("1", 1, "112=t|").bytes()).unwrap();
    let bad = reframe(
        &good
            .replace("34=1\x01", "")
            .replace("112=t", "112=t\x01abc"),
    );
    feed_bytes(&mut s, &bad, T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "5");
    assert!(f(&out[0], 58).unwrap().contains("MsgSeqNum"));
    assert_eq!(h.disconnected(), Some(DisconnectReason::MissingMsgSeqNum));
}

/// An admin message's number or flag that is not of its type is a Reject 373=6 naming it,
/// not a "missing" one; the session goes on.
#[test]
fn admin_numbers_of_the_wrong_type_get_reject_6() {
    let (mut s, mut h) = logged_on();
    for (seq, (msg_type, body, tag)) in [
        ("2", "7=abc|16=0|", 7),
        ("2", "7=1|16=-1|", 16),
        ("4", "36=x|", 36),
        ("4", "123=maybe|36=9|", 123),
        ("3", "45=x|", 45),
    ]
    .into_iter()
    .enumerate()
    {
        let seq = seq as u64 + 2;
        feed(&mut s, In::new(msg_type, seq, body), T0, &mut h);
        let out = h.take();
        assert_eq!(out.len(), 1, "{body}");
        assert_eq!(mt(&out[0]), "3", "{body}");
        assert_eq!(f(&out[0], 373).as_deref(), Some("6"), "{body}");
        assert_eq!(f(&out[0], 371), Some(tag.to_string()), "{body}");
        assert_eq!(f(&out[0], 372).as_deref(), Some(msg_type), "{body}");
        assert_eq!(s.next_in(), seq + 1, "{body}");
    }
}

/// Recomputes BodyLength and CheckSum of a hand-edited message.
fn reframe(msg: &str) -> Vec<u8> {
    let start = msg.find("\x0135=").unwrap() + 1;
    let end = msg.rfind("10=").unwrap();
    let body = &msg[start..end];
    let mut out = Vec::new();
    fix::wrap_body(FixVersion::Fix44, body.as_bytes(), &mut out);
    out
}

#[test]
fn garbled_frames_are_ignored_without_consuming_a_seq() {
    let (mut s, mut h) = logged_on();
    let mut b = In::new("D", 2, &nos("A2")).bytes();
    let n = b.len();
    b[n - 3] = if b[n - 3] == b'9' { b'0' } else { b'9' }; // wrong checksum
    let good = In::new("D", 2, &nos("A2")).bytes();
    let mut stream = b"junk".to_vec();
    stream.extend_from_slice(&b);
    stream.extend_from_slice(&good);
    assert_eq!(feed_bytes(&mut s, &stream, T0, &mut h), stream.len());
    assert!(h.events.iter().any(|e| matches!(
        e,
        SessionEvent::Garbled(fix::FrameError::BadCheckSum { .. })
    )));
    assert_eq!(h.app.len(), 1);
    assert_eq!(s.next_in(), 3);
    assert!(h.out.is_empty());
}

#[test]
fn partial_input_is_kept_until_complete() {
    let (mut s, mut h) = logged_on();
    let b = In::new("D", 2, &nos("A2")).bytes();
    assert_eq!(feed_bytes(&mut s, &b[..10], T0, &mut h), 0);
    assert_eq!(feed_bytes(&mut s, &b, T0, &mut h), b.len());
    assert_eq!(h.app.len(), 1);
}

#[test]
fn logon_with_reset_seq_num_flag_resets_both_sides() {
    let (mut s, mut h) = logged_on();
    s.send_app(&exec_report(b"C"), T0, &mut h);
    feed(&mut s, In::new("D", 2, &nos("A2")), T0, &mut h);
    s.on_disconnected();
    assert_eq!((s.next_in(), s.next_out()), (3, 3));
    s.on_connected(T0);
    let mut h = Rec::default();
    feed(&mut s, In::new("A", 1, "98=0|108=30|141=Y|"), T0, &mut h);
    assert_eq!(h.events, [SessionEvent::LoggedOn { reset: true }]);
    assert_eq!(f(&h.out[0], 141).as_deref(), Some("Y"));
    assert_eq!(f(&h.out[0], 34).as_deref(), Some("1"));
    assert_eq!((s.next_in(), s.next_out()), (2, 2));
    assert!(s.store().is_empty());
}

#[test]
fn reconnect_resumes_from_persisted_sequence_numbers() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    s.set_next_in(50);
    s.set_next_out(70);
    let mut h = Rec::default();
    s.on_connected(T0);
    feed(&mut s, In::new("A", 50, "98=0|108=30|"), T0, &mut h);
    assert_eq!(f(&h.out[0], 34).as_deref(), Some("70"));
    assert_eq!((s.next_in(), s.next_out()), (51, 71));
    // A Logon below the expected number ends the session.
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    s.set_next_in(50);
    let mut h = Rec::default();
    s.on_connected(T0);
    feed(&mut s, In::new("A", 49, "98=0|108=30|"), T0, &mut h);
    assert_eq!(
        f(&h.out[0], 58).as_deref(),
        Some("MsgSeqNum too low, expecting 50 but received 49")
    );
    assert_eq!(f(&h.out[0], 34).as_deref(), Some("1"), "unnumbered");
    assert_eq!((s.next_in(), s.next_out()), (50, 1));
    assert_eq!(
        h.disconnected(),
        Some(DisconnectReason::SeqTooLow {
            expected: 50,
            received: 49
        })
    );
}

#[test]
fn logon_with_seq_too_high_is_accepted_then_resend_requested() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    feed(&mut s, In::new("A", 5, "98=0|108=30|"), T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "A");
    assert_eq!(mt(&out[1]), "2");
    assert_eq!(f(&out[1], 7).as_deref(), Some("1"));
    // Counterparty gap-fills 1..=5 (its Logon included) and goes on at 6.
    feed(&mut s, In::new("4", 1, "123=Y|36=6|").dup(), T0, &mut h);
    feed(&mut s, In::new("D", 6, &nos("A6")), T0, &mut h);
    assert_eq!(h.app.len(), 1);
    assert!(h.out.is_empty());
}

#[test]
fn messages_sent_while_disconnected_are_sequenced_and_resent() {
    let (mut s, mut h) = logged_on();
    s.on_disconnected();
    let seq = s.send_app(&exec_report(b"FILL"), T0, &mut h);
    assert_eq!(seq, 2);
    assert!(h.out.is_empty(), "nothing goes out without a connection");
    s.on_connected(T0);
    feed(&mut s, In::new("A", 2, "98=0|108=30|"), T0, &mut h);
    feed(&mut s, In::new("2", 3, "7=2|16=0|"), T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "A");
    assert_eq!(f(&out[0], 34).as_deref(), Some("3"));
    assert_eq!(mt(&out[1]), "8");
    assert_eq!(f(&out[1], 11).as_deref(), Some("FILL"));
    assert_eq!(f(&out[1], 43).as_deref(), Some("Y"));
    assert_eq!(mt(&out[2]), "4", "our Logon (3) is gap-filled");
}

#[test]
fn wrong_comp_id_after_logon_rejects_and_logs_out() {
    let (mut s, mut h) = logged_on();
    let body = nos("A2");
    let mut m = In::new("D", 2, &body);
    m.sender = "OTHER";
    feed(&mut s, m, T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 373).as_deref(), Some("9"));
    assert_eq!(mt(&out[1]), "5");
    assert_eq!(h.disconnected(), Some(DisconnectReason::CompIdProblem));
    assert!(h.app.is_empty());
}

#[test]
fn sending_time_accuracy_checked() {
    let (mut s, mut h) = logged_on();
    let body = nos("A2");
    let mut m = In::new("D", 2, &body);
    m.sending_time_ns = T0 - 121 * SEC;
    feed(&mut s, m, T0, &mut h);
    let out = h.take();
    assert_eq!(f(&out[0], 373).as_deref(), Some("10"));
    assert_eq!(mt(&out[1]), "5");
    assert_eq!(
        h.disconnected(),
        Some(DisconnectReason::SendingTimeAccuracy)
    );
}

#[test]
fn poss_dup_without_orig_sending_time_is_rejected() {
    let (mut s, mut h) = logged_on();
    let body = nos("A2");
    let mut m = In::new("D", 2, &body);
    m.poss_dup = true;
    feed(&mut s, m, T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 373).as_deref(), Some("1"));
    assert_eq!(f(&out[0], 371).as_deref(), Some("122"));
    assert!(h.app.is_empty());
    assert_eq!(s.next_in(), 3);
    assert_eq!(s.state(), SessionState::Active);
}

#[test]
fn gateway_rejects_an_app_message_through_the_session() {
    let (mut s, mut h) = logged_on();
    feed(
        &mut s,
        In::new("D", 2, "11=A|55=ACME|54=9|38=1|40=2|44=1|"),
        T0,
        &mut h,
    );
    let bytes = h.app.pop().unwrap();
    let mut d = Decoder::new(Limits::default());
    let m = d.decode(&bytes).unwrap();
    let e = NewOrderSingle::read(&m, &Acme).unwrap_err();
    assert_eq!(e.tag, 54);
    assert!(!e.is_session_level());
    s.send_reject(
        &fix::session::RejectOf {
            ref_seq_num: 2,
            ref_msg_type: Some(m.msg_type()),
            ref_tag: Some(e.tag as i64),
            reason: SessionRejectReason::ValueIncorrect,
            text: e.text.as_bytes(),
        },
        T0,
        &mut h,
    );
    let out = h.take();
    assert_eq!(f(&out[0], 45).as_deref(), Some("2"));
    assert_eq!(f(&out[0], 371).as_deref(), Some("54"));
    assert_eq!(f(&out[0], 372).as_deref(), Some("D"));
    assert_eq!(
        f(&out[0], 373),
        Some((SessionRejectReason::ValueIncorrect as u32).to_string())
    );
    assert_eq!(
        f(&out[0], 58).as_deref(),
        Some("unsupported Side(54) (use 1 or 2)")
    );
    assert_eq!(
        h.events.last(),
        Some(&SessionEvent::Rejected {
            ref_seq_num: 2,
            reason: SessionRejectReason::ValueIncorrect,
            ref_tag: Some(54)
        })
    );
}

#[test]
fn fixt_logon_requires_and_echoes_default_appl_ver_id() {
    let c = SessionConfig::new(FixVersion::Fix50Sp2, "RIALTO", "CLIENT1");
    let mut s: Sess = Session::new(c.clone(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    let mut m = In::new("A", 1, "98=0|108=30|1137=9|");
    m.version = FixVersion::Fix50Sp2;
    feed(&mut s, m, T0, &mut h);
    assert_eq!(s.state(), SessionState::Active);
    assert_eq!(f(&h.out[0], 8).as_deref(), Some("FIXT.1.1"));
    assert_eq!(f(&h.out[0], 1137).as_deref(), Some("9"));
    let mut s: Sess = Session::new(c.clone(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    let mut m = In::new("A", 1, "98=0|108=30|");
    m.version = FixVersion::Fix50Sp2;
    feed(&mut s, m, T0, &mut h);
    assert_eq!(h.disconnected(), Some(DisconnectReason::BadLogon));
    assert_eq!(f(&h.out[0], 8).as_deref(), Some("FIXT.1.1"));
    assert_eq!(
        f(&h.out[0], 58).as_deref(),
        Some("DefaultApplVerID(1137) required")
    );
    // Unless the configuration does not ask for it.
    let mut c = c;
    c.require_default_appl_ver_id = false;
    let mut s: Sess = Session::new(c, MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    let mut m = In::new("A", 1, "98=0|108=30|");
    m.version = FixVersion::Fix50Sp2;
    feed(&mut s, m, T0, &mut h);
    assert_eq!(s.state(), SessionState::Active);
    assert_eq!(f(&h.out[0], 1137).as_deref(), Some("9"));
}

#[test]
fn wrong_begin_string_on_logon_is_refused_in_the_logons_begin_string() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    let mut m = In::new("A", 1, "98=0|108=30|");
    m.version = FixVersion::Fix42;
    feed(&mut s, m, T0, &mut h);
    assert_eq!(h.disconnected(), Some(DisconnectReason::UnsupportedVersion));
    assert_eq!(h.out.len(), 1);
    assert_eq!(f(&h.out[0], 8).as_deref(), Some("FIX.4.2"));
    assert_eq!(f(&h.out[0], 35).as_deref(), Some("5"));
    assert_eq!(f(&h.out[0], 58).as_deref(), Some("wrong BeginString"));
}

#[test]
fn fix42_session_works_end_to_end() {
    let c = SessionConfig::new(FixVersion::Fix42, "RIALTO", "CLIENT1");
    let mut s: Sess = Session::new(c, MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    let mut m = In::new("A", 1, "98=0|108=30|");
    m.version = FixVersion::Fix42;
    feed(&mut s, m, T0, &mut h);
    assert_eq!(f(&h.out[0], 8).as_deref(), Some("FIX.4.2"));
    let mut m = In::new("D", 2, "11=A|21=1|55=ACME|54=1|38=100|40=2|44=10|");
    m.version = FixVersion::Fix42;
    feed(&mut s, m, T0, &mut h);
    assert_eq!(h.app.len(), 1);
    s.send_app(&exec_report(b"A"), T0, &mut h);
    let er = h.out.last().unwrap();
    assert_eq!(f(er, 20).as_deref(), Some("0"));
    assert_eq!(f(er, 150).as_deref(), Some("0"));
}

/// What `MemoryStore::resend` hands back for `begin..=end`: (seq, type, time, body).
fn stored(st: &mut MemoryStore, begin: u64, end: u64) -> Vec<(u64, String, u64, String)> {
    let mut v = Vec::new();
    st.resend(begin, end, FixVersion::Fix44, &mut |m: Stored<'_>| {
        v.push((m.seq, pipes(m.msg_type), m.sending_time_ns, pipes(m.body)))
    });
    v
}

#[test]
fn memory_store_keeps_the_last_messages() {
    let mut st = MemoryStore::new(2);
    st.put(1, b"8", T0, b"11=a|");
    st.put(2, b"8", T0 + 1, b"11=b|");
    st.put(3, b"9", T0 + 2, b"11=c|");
    assert_eq!(st.len(), 2);
    assert_eq!(
        stored(&mut st, 1, 3),
        [
            (2, "8".into(), T0 + 1, "11=b|".into()),
            (3, "9".into(), T0 + 2, "11=c|".into())
        ]
    );
    assert_eq!(stored(&mut st, 3, 3).len(), 1);
    assert!(stored(&mut st, 4, 9).is_empty());
    // Numbering again from an earlier number (a replay) forgets what followed it.
    st.put(2, b"8", T0 + 5, b"11=B|");
    assert_eq!(
        stored(&mut st, 1, 9),
        [(2, "8".into(), T0 + 5, "11=B|".into())]
    );
    st.reset();
    assert!(st.is_empty());
    assert!(stored(&mut st, 1, 9).is_empty());
    // A store of capacity 0 keeps nothing.
    let mut none = MemoryStore::new(0);
    none.put(1, b"8", T0, b"x");
    assert!(none.is_empty());
}

#[test]
fn queue_overflow_drops_and_asks_again() {
    let mut c = cfg();
    c.queue_max = 2;
    let mut s: Sess = Session::new(c, MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    feed(&mut s, In::new("A", 1, "98=0|108=30|"), T0, &mut h);
    h.take();
    for seq in 3..=6 {
        let cl = format!("A{seq}");
        feed(&mut s, In::new("D", seq, &nos(&cl)), T0, &mut h);
    }
    assert_eq!(s.queued().count(), 2);
    assert_eq!(h.take().len(), 1, "one ResendRequest");
    // The counterparty only resends 2 (its resend raced with 5 and 6).
    feed(&mut s, In::new("D", 2, &nos("A2")).dup(), T0, &mut h);
    assert_eq!(h.app.len(), 3, "2, then queued 3 and 4");
    assert_eq!(s.next_in(), 5);
    // 7 arrives: 5 and 6 were dropped, so a new ResendRequest from 5.
    feed(&mut s, In::new("D", 7, &nos("A7")), T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "2");
    assert_eq!(f(&out[0], 7).as_deref(), Some("5"));
}

#[test]
fn resend_request_ahead_of_a_gap_is_served_once() {
    let (mut s, mut h) = logged_on();
    s.send_app(&exec_report(b"C2"), T0, &mut h); // our 2
    h.take();
    // Their 2 is missing; their 3 asks us to resend from 2.
    feed(&mut s, In::new("2", 3, "7=2|16=0|"), T0, &mut h);
    let out = h.take();
    let types: Vec<String> = out.iter().map(|m| mt(m)).collect();
    assert_eq!(
        types,
        ["8", "2"],
        "served at once, then our own ResendRequest"
    );
    // They gap-fill 2..=3 (the ResendRequest is admin): nothing is served twice.
    feed(&mut s, In::new("4", 2, "123=Y|36=4|").dup(), T0, &mut h);
    assert!(h.out.is_empty());
    assert_eq!(s.next_in(), 4);
    assert_eq!(s.queued().count(), 0);
}

#[test]
fn orig_sending_time_after_sending_time_rejects_and_logs_out() {
    let (mut s, mut h) = logged_on();
    let body = nos("A2");
    let mut m = In::new("D", 2, &body);
    m.poss_dup = true;
    m.orig_sending_time = Some("20231114-22:13:21.000"); // one second after SendingTime
    feed(&mut s, m, T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 373).as_deref(), Some("10"));
    assert_eq!(mt(&out[1]), "5");
    assert_eq!(
        h.disconnected(),
        Some(DisconnectReason::SendingTimeAccuracy)
    );
    assert!(h.app.is_empty());
}

#[test]
fn wrong_begin_string_after_logon_logs_out() {
    let (mut s, mut h) = logged_on();
    let body = nos("A2");
    let mut m = In::new("D", 2, &body);
    m.version = FixVersion::Fix42;
    feed(&mut s, m, T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "5");
    assert_eq!(f(&out[0], 58).as_deref(), Some("Incorrect BeginString"));
    assert_eq!(
        h.disconnected(),
        Some(DisconnectReason::BeginStringMismatch)
    );
}

#[test]
fn missing_msg_seq_num_logs_out() {
    let (mut s, mut h) = logged_on();
    let mut b = Vec::new();
    fix::wrap_body(
        FixVersion::Fix44,
        b"35=0\x0149=CLIENT1\x0156=RIALTO\x0152=20231114-22:13:20.000\x01",
        &mut b,
    );
    feed_bytes(&mut s, &b, T0, &mut h);
    assert_eq!(mt(&h.out[0]), "5");
    assert_eq!(h.disconnected(), Some(DisconnectReason::MissingMsgSeqNum));
}

#[test]
fn gap_fill_that_does_not_move_forward_is_rejected() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("4", 2, "123=Y|36=2|").dup(), T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 373).as_deref(), Some("5"));
    assert_eq!(f(&out[0], 371).as_deref(), Some("36"));
    assert_eq!(s.next_in(), 3, "the rejected message's number is consumed");
}

#[test]
fn reject_from_counterparty_is_reported_and_session_goes_on() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("3", 2, "45=7|373=5|58=bad|"), T0, &mut h);
    assert!(h
        .events
        .contains(&SessionEvent::RejectReceived { ref_seq_num: 7 }));
    assert!(h.out.is_empty());
    assert_eq!(s.state(), SessionState::Active);
    assert_eq!(s.next_in(), 3);
}

#[test]
fn bytes_while_disconnected_are_discarded() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    let b = In::new("A", 1, "98=0|108=30|").bytes();
    assert_eq!(feed_bytes(&mut s, &b, T0, &mut h), b.len());
    assert!(h.out.is_empty() && h.events.is_empty());
    assert_eq!(s.next_in(), 1);
}

/// A second Logon on a logged-on session is a protocol error: Logout, then disconnect.
#[test]
fn second_logon_in_session_logs_out() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("A", 2, "98=0|108=30|"), T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "5");
    assert_eq!(
        f(&out[0], 58).as_deref(),
        Some("Logon received while already logged on")
    );
    assert_eq!(s.state(), SessionState::Disconnected);
}

/// One instrument, ACME, with prices in cents.
struct Acme;

impl Instruments for Acme {
    fn find(&self, symbol: &[u8]) -> Option<InstrumentRef> {
        (symbol == b"ACME").then_some(InstrumentRef {
            id: 1,
            decimals: 2,
            tick: 1,
        })
    }
}

/// Every reason a Logon is refused: one unnumbered Logout (MsgSeqNum 1, the Logon's
/// BeginString, its CompIDs swapped, the reason as Text), the connection closed, and none of
/// the session's numbers or stored messages changed (an impostor cannot move them).
#[test]
fn refused_logon_changes_no_numbers() {
    let fixt = SessionConfig::new(FixVersion::Fix50Sp2, "RIALTO", "CLIENT1");
    let mut with_password = cfg();
    with_password.authenticate = true;
    struct Case {
        cfg: SessionConfig,
        version: FixVersion,
        sender: &'static str,
        seq: u64,
        body: &'static str,
        text: &'static str,
        reason: DisconnectReason,
    }
    let case = |cfg: &SessionConfig, seq, body, text, reason| Case {
        cfg: cfg.clone(),
        version: cfg.version,
        sender: "CLIENT1",
        seq,
        body,
        text,
        reason,
    };
    let cases = [
        Case {
            sender: "INTRUDER",
            ..case(
                &cfg(),
                50,
                "98=0|108=30|",
                "logon refused",
                DisconnectReason::BadCompId,
            )
        },
        Case {
            version: FixVersion::Fix42,
            ..case(
                &cfg(),
                50,
                "98=0|108=30|",
                "wrong BeginString",
                DisconnectReason::UnsupportedVersion,
            )
        },
        case(
            &with_password,
            50,
            "98=0|108=30|554=guess|",
            "logon refused",
            DisconnectReason::BadCredentials,
        ),
        case(
            &cfg(),
            50,
            "98=0|108=301|",
            "HeartBtInt(108) must be 1..300",
            DisconnectReason::BadLogon,
        ),
        case(
            &cfg(),
            49,
            "98=0|108=30|",
            "MsgSeqNum too low, expecting 50 but received 49",
            DisconnectReason::SeqTooLow {
                expected: 50,
                received: 49,
            },
        ),
        case(
            &cfg(),
            50,
            "98=0|108=30|141=Y|",
            "ResetSeqNumFlag(141)=Y requires MsgSeqNum(34)=1",
            DisconnectReason::BadLogon,
        ),
        case(
            &fixt,
            50,
            "98=0|108=30|",
            "DefaultApplVerID(1137) required",
            DisconnectReason::BadLogon,
        ),
    ];
    for c in cases {
        let mut s: Sess = Session::new(c.cfg.clone(), MemoryStore::new(10));
        s.set_next_in(50);
        s.set_next_out(70);
        let mut h = Rec::default();
        s.send_app(&exec_report(b"KEPT"), T0, &mut h); // 70, stored while away
        assert!(h.out.is_empty());
        s.on_connected(T0);
        let before = s.vars();
        let mut m = In::new("A", c.seq, c.body);
        m.version = c.version;
        m.sender = c.sender;
        feed(&mut s, m, T0, &mut h);
        let out = h.take();
        assert_eq!(out.len(), 1, "{}", c.text);
        let l = &out[0];
        assert_eq!(mt(l), "5", "{}", c.text);
        assert_eq!(f(l, 58).as_deref(), Some(c.text));
        assert_eq!(f(l, 34).as_deref(), Some("1"), "{}", c.text);
        assert_eq!(
            f(l, 8).as_deref(),
            std::str::from_utf8(c.version.begin_string()).ok()
        );
        assert_eq!(f(l, 49).as_deref(), Some("RIALTO"));
        assert_eq!(f(l, 56).as_deref(), Some(c.sender));
        assert_eq!(h.events, [SessionEvent::Disconnect(c.reason)], "{}", c.text);
        assert_eq!(s.state(), SessionState::Disconnected);
        assert_eq!((s.next_in(), s.next_out()), (50, 71), "{}", c.text);
        let after = s.vars();
        assert_eq!(
            (after.next_in, after.next_out, after.heart_bt_int_s),
            (before.next_in, before.next_out, before.heart_bt_int_s)
        );
        assert_eq!(s.store().len(), 1, "{}: the store is kept", c.text);
    }
}

#[test]
fn logon_with_reset_flag_must_carry_msg_seq_num_one() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    s.set_next_in(5);
    let mut h = Rec::default();
    s.on_connected(T0);
    feed(&mut s, In::new("A", 1, "98=0|108=30|141=Y|"), T0, &mut h);
    assert_eq!(s.state(), SessionState::Active);
    assert_eq!(h.events, [SessionEvent::LoggedOn { reset: true }]);
    assert_eq!((s.next_in(), s.next_out()), (2, 2));
}

/// Replaying a journal: the handler is muted, the session numbers and stores every message
/// as it did live, but formats and sends nothing. Unmuted, it serves the stored messages.
#[test]
fn muted_session_numbers_and_stores_without_sending() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(100));
    let mut h = Rec {
        muted: true,
        ..Rec::default()
    };
    s.on_connected(T0);
    feed(&mut s, In::new("A", 1, "98=0|108=30|"), T0, &mut h); // our Logon: 1
    assert_eq!(s.state(), SessionState::Active);
    assert_eq!(h.events, [SessionEvent::LoggedOn { reset: false }]);
    assert_eq!(s.send_app(&exec_report(b"C2"), T0, &mut h), 2);
    feed(&mut s, In::new("1", 2, "112=T|"), T0, &mut h); // our Heartbeat: 3
    feed(&mut s, In::new("D", 3, &nos("A3")), T0, &mut h);
    assert_eq!(h.app.len(), 1, "delivery is not muted");
    s.on_tick(T0 + 30 * SEC, &mut h); // our Heartbeat: 4
    assert_eq!(s.send_app(&exec_report(b"C5"), T0 + 30 * SEC, &mut h), 5);
    // A gap: the ResendRequest is numbered (6) but not sent.
    feed(&mut s, In::new("D", 9, &nos("A9")), T0 + 30 * SEC, &mut h);
    // A ResendRequest from them is not served while muted.
    h.events.clear();
    feed(&mut s, In::new("4", 4, "36=10|"), T0 + 30 * SEC, &mut h);
    feed(&mut s, In::new("2", 10, "7=1|16=0|"), T0 + 30 * SEC, &mut h);
    assert!(h.events.contains(&SessionEvent::ResendServed {
        begin: 1,
        end: 6,
        resent: 0
    }));
    assert!(h.out.is_empty());
    assert_eq!((s.next_in(), s.next_out()), (11, 7));
    assert_eq!(s.store().len(), 2, "application messages are stored");
    // Live again: the stored reports are served; everything else is gap-filled.
    h.muted = false;
    let now = T0 + 31 * SEC;
    let mut rr = In::new("2", 11, "7=1|16=0|");
    rr.sending_time_ns = now;
    feed(&mut s, rr, now, &mut h);
    let out = h.take();
    let summary: Vec<(String, String, Option<String>)> = out
        .iter()
        .map(|m| (mt(m), f(m, 34).unwrap(), f(m, 11).or(f(m, 36))))
        .collect();
    let row = |t: &str, seq: &str, v: &str| (t.to_string(), seq.to_string(), Some(v.to_string()));
    assert_eq!(
        summary,
        [
            row("4", "1", "2"),
            row("8", "2", "C2"),
            row("4", "3", "5"),
            row("8", "5", "C5"),
            row("4", "6", "7"),
        ]
    );
    assert_eq!(f(&out[1], 122).as_deref(), Some("20231114-22:13:20.000"));
    assert_eq!(f(&out[3], 122).as_deref(), Some("20231114-22:13:50.000"));
}

/// A refused Logon during a replay is not formatted either.
#[test]
fn muted_refusal_sends_nothing() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec {
        muted: true,
        ..Rec::default()
    };
    s.on_connected(T0);
    let mut m = In::new("A", 1, "98=0|108=30|");
    m.sender = "INTRUDER";
    feed(&mut s, m, T0, &mut h);
    assert_eq!(h.disconnected(), Some(DisconnectReason::BadCompId));
    assert_eq!((s.next_in(), s.next_out()), (1, 1));
}

/// The header of a typed inbound message from CLIENT1.
fn hdr(seq: u64) -> InHeader {
    InHeader {
        msg_seq_num: seq,
        sending_time_ns: T0,
        ..InHeader::default()
    }
}

/// The header of a resent (PossDup) typed inbound message.
fn dup_hdr(seq: u64) -> InHeader {
    InHeader {
        poss_dup: true,
        orig_sending_time_ns: T0 - SEC,
        ..hdr(seq)
    }
}

fn logon_fields() -> Logon {
    Logon {
        begin_string: Text::from("FIX.4.4"),
        sender_comp_id: Text::from("CLIENT1"),
        target_comp_id: Text::from("RIALTO"),
        heart_bt_int: Some(30),
        reset: false,
        username: None,
        password: None,
        credentials: Credentials::Unchecked,
        has_default_appl_ver_id: false,
    }
}

fn typed_logon() -> Inbound<Order> {
    Inbound::Logon(Box::new(logon_fields()))
}

/// The typed path: `on_message` returns the in-sequence application message; messages that
/// arrived ahead of a gap wait in the queue and `next_queued` hands them out (with their
/// MsgSeqNum) in order once a gap fill closes the gap, admin messages among them handled on
/// the way.
#[test]
fn next_queued_delivers_messages_kept_behind_a_gap_in_order_after_a_gap_fill() {
    let mut s: Session<MemoryStore, Order> = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    assert_eq!(s.on_message(&hdr(1), &typed_logon(), T0, &mut h), None);
    assert_eq!(s.next_queued(T0, &mut h), None);
    assert_eq!(
        s.on_message(&hdr(2), &Inbound::App(Order("order 2")), T0, &mut h),
        Some(&Order("order 2"))
    );
    assert_eq!(s.next_queued(T0, &mut h), None);
    h.take();
    // 3 and 4 are lost; 7, 5 and 6 (a TestRequest) arrive out of order.
    for (seq, m) in [
        (7, Inbound::App(Order("order 7"))),
        (5, Inbound::App(Order("order 5"))),
        (
            6,
            Inbound::TestRequest {
                test_req_id: Some(Text::from("T6")),
            },
        ),
    ] {
        assert_eq!(s.on_message(&hdr(seq), &m, T0, &mut h), None);
        assert_eq!(s.next_queued(T0, &mut h), None);
    }
    let queued: Vec<u64> = s.queued().map(|q| q.header.msg_seq_num).collect();
    assert_eq!(queued, [5, 6, 7]);
    let out = h.take();
    assert_eq!(out.len(), 1, "one ResendRequest");
    assert_eq!((mt(&out[0]), f(&out[0], 7)), ("2".into(), Some("3".into())));
    // They gap-fill 3..=4.
    let fill = Inbound::SequenceReset {
        new_seq: Some(5),
        gap_fill: true,
    };
    assert_eq!(s.on_message(&dup_hdr(3), &fill, T0, &mut h), None);
    assert_eq!(s.next_in(), 5);
    assert_eq!(
        s.next_queued(T0, &mut h).map(|(h, a)| (h.msg_seq_num, a)),
        Some((5, Order("order 5")))
    );
    assert!(h.out.is_empty(), "6 is not processed before 5 is handled");
    assert_eq!(
        s.next_queued(T0, &mut h).map(|(h, a)| (h.msg_seq_num, a)),
        Some((7, Order("order 7")))
    );
    let out = h.take();
    assert_eq!(
        out.len(),
        1,
        "the queued TestRequest was answered on the way"
    );
    assert_eq!(
        (mt(&out[0]), f(&out[0], 112)),
        ("0".into(), Some("T6".into()))
    );
    assert_eq!(s.next_queued(T0, &mut h), None);
    assert_eq!(s.next_in(), 8);
    assert_eq!(s.queued().count(), 0);
    // The next gap asks again: the first ResendRequest is no longer outstanding.
    assert_eq!(
        s.on_message(&hdr(9), &Inbound::App(Order("order 9")), T0, &mut h),
        None
    );
    let out = h.take();
    assert_eq!((mt(&out[0]), f(&out[0], 7)), ("2".into(), Some("8".into())));
}

/// A gap fill past queued messages drops them: the counterparty says those numbers were
/// admin messages. A queued duplicate is kept once.
#[test]
fn gap_fill_past_queued_messages_drops_them() {
    let mut s: Session<MemoryStore, Order> = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    s.on_message(&hdr(1), &typed_logon(), T0, &mut h);
    for seq in [4, 3, 4] {
        assert_eq!(
            s.on_message(&hdr(seq), &Inbound::App(Order("x")), T0, &mut h),
            None
        );
    }
    assert_eq!(s.queued().count(), 2);
    let fill = Inbound::SequenceReset {
        new_seq: Some(4),
        gap_fill: true,
    };
    s.on_message(&dup_hdr(2), &fill, T0, &mut h);
    assert_eq!(
        s.next_queued(T0, &mut h).map(|(h, a)| (h.msg_seq_num, a)),
        Some((4, Order("x")))
    );
    assert_eq!(s.next_queued(T0, &mut h), None);
    assert_eq!((s.next_in(), s.queued().count()), (5, 0));
}

/// A snapshot (`vars` and the queue) restored into a fresh session gives a session that
/// behaves exactly as the original from then on.
#[test]
fn vars_and_restore_round_trip() {
    let mut a: Session<MemoryStore, Order> = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    a.on_connected(T0);
    a.on_message(&hdr(1), &typed_logon(), T0, &mut h);
    // A gap outstanding (resend trigger 4, 4 queued) and a TestRequest outstanding.
    a.on_message(&hdr(4), &Inbound::App(Order("order 4")), T0, &mut h);
    a.on_tick(T0 + 36 * SEC, &mut h);
    h.take();
    h.events.clear();
    let vars = a.vars();
    assert_eq!(
        vars,
        SessionVars {
            state: SessionState::Active.code(),
            next_in: 2,
            next_out: 4,
            heart_bt_int_s: 30,
            connected_at_ns: T0,
            last_recv_ns: T0,
            last_sent_ns: T0 + 36 * SEC,
            test_request_sent_ns: T0 + 36 * SEC,
            test_request_count: 1,
            logout_sent_ns: 0,
            resend_trigger: 4,
        }
    );
    let queue: Vec<_> = a.queued().cloned().collect();
    let mut b: Session<MemoryStore, Order> = Session::new(cfg(), MemoryStore::new(10));
    b.restore(&vars, queue.clone()).unwrap();
    assert_eq!(b.vars(), vars);
    assert_eq!(b.queued().cloned().collect::<Vec<_>>(), queue);
    assert_eq!(b.state(), SessionState::Active);
    // Same inputs, same outputs.
    let mut hb = Rec::default();
    let fill = Inbound::SequenceReset {
        new_seq: Some(4),
        gap_fill: true,
    };
    for (s, h) in [(&mut a, &mut h), (&mut b, &mut hb)] {
        assert_eq!(s.on_message(&dup_hdr(2), &fill, T0 + 40 * SEC, h), None);
        assert_eq!(
            s.next_queued(T0 + 40 * SEC, h)
                .map(|(h, a)| (h.msg_seq_num, a)),
            Some((4, Order("order 4")))
        );
        assert_eq!(s.next_queued(T0 + 40 * SEC, h), None);
        s.on_tick(T0 + 70 * SEC, h);
        s.on_tick(T0 + 80 * SEC, h);
    }
    assert_eq!(h.out, hb.out);
    assert_eq!(h.events, hb.events);
    assert_eq!(a.vars(), b.vars());
    // A state code that does not exist is refused.
    let bad = SessionVars { state: 9, ..vars };
    assert!(b.restore(&bad, Vec::new()).is_err());
}

#[test]
fn sending_time_required_unless_configured_otherwise() {
    let no_52 = |seq: u64| {
        let mut b = Vec::new();
        let body = format!("35=0\x0134={seq}\x0149=CLIENT1\x0156=RIALTO\x01");
        fix::wrap_body(FixVersion::Fix44, body.as_bytes(), &mut b);
        b
    };
    let (mut s, mut h) = logged_on();
    feed_bytes(&mut s, &no_52(2), T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 373).as_deref(), Some("1"));
    assert_eq!(f(&out[0], 371).as_deref(), Some("52"));
    assert_eq!(s.next_in(), 3, "the rejected message's number is consumed");
    let mut c = cfg();
    c.require_sending_time = false;
    let mut s: Sess = Session::new(c, MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    feed(&mut s, In::new("A", 1, "98=0|108=30|"), T0, &mut h);
    h.take();
    feed_bytes(&mut s, &no_52(2), T0, &mut h);
    assert!(h.out.is_empty());
    assert_eq!(s.next_in(), 3);
}

/// `logon_refusal` says what a Logon would get without changing the session: the owner asks
/// it for a second connection naming a session that is logged on elsewhere.
#[test]
fn logon_refusal_changes_nothing() {
    let mut c = cfg();
    c.authenticate = true;
    let mut s: Session<MemoryStore, Order> = Session::new(c, MemoryStore::new(10));
    let mut h = Rec::default();
    let right = Logon {
        credentials: Credentials::Accepted,
        ..logon_fields()
    };
    s.on_connected(T0);
    s.on_message(
        &hdr(1),
        &Inbound::Logon(Box::new(right.clone())),
        T0,
        &mut h,
    );
    assert_eq!(s.state(), SessionState::Active);
    h.take();
    h.events.clear();
    let before = s.vars();
    let wrong = Logon {
        credentials: Credentials::Refused,
        ..logon_fields()
    };
    // Refused credentials: the generic text, whatever else is wrong (no sequence numbers).
    assert_eq!(
        s.logon_refusal(&hdr(1), &wrong, T0),
        Some((
            "logon refused".to_string(),
            DisconnectReason::BadCredentials
        ))
    );
    assert_eq!(
        s.logon_refusal(&hdr(1), &right, T0),
        Some((
            "MsgSeqNum too low, expecting 2 but received 1".to_string(),
            DisconnectReason::SeqTooLow {
                expected: 2,
                received: 1
            }
        ))
    );
    let reset_late = Logon {
        reset: true,
        ..right.clone()
    };
    assert_eq!(
        s.logon_refusal(&hdr(2), &reset_late, T0).map(|r| r.1),
        Some(DisconnectReason::BadLogon)
    );
    assert_eq!(s.logon_refusal(&hdr(2), &right, T0), None);
    assert_eq!(s.logon_refusal(&hdr(1), &reset_late, T0).map(|r| r.1), None);
    assert_eq!(s.vars(), before);
    assert!(h.out.is_empty() && h.events.is_empty());
}

/// The refusal of a Logon without a TargetCompID (56) leaves out the SenderCompID it would
/// have echoed: an empty field is not FIX.
#[test]
fn refusal_of_a_logon_without_comp_ids_leaves_them_out() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    let mut logon = Vec::new();
    fix::wrap_body(
        FixVersion::Fix44,
        b"35=A\x0134=1\x0149=CLIENT1\x0152=20231114-22:13:20.000\x0198=0\x01108=30\x01",
        &mut logon,
    );
    assert_eq!(feed_bytes(&mut s, &logon, T0, &mut h), logon.len());
    assert_eq!(h.disconnected(), Some(DisconnectReason::BadCompId));
    assert_eq!(h.out.len(), 1);
    assert_eq!(
        pipes(&h.out[0]),
        "8=FIX.4.4|9=63|35=5|34=1|56=CLIENT1|52=20231114-22:13:20.000|\
58=logon refused|10=223|"
    );
    Decoder::new(Limits::default()).decode(&h.out[0]).unwrap();
    // Typed, with neither CompID.
    let mut s: Session<MemoryStore, Order> = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    let bare = Logon {
        sender_comp_id: Text::EMPTY,
        target_comp_id: Text::EMPTY,
        ..logon_fields()
    };
    s.on_message(&hdr(1), &Inbound::Logon(Box::new(bare)), T0, &mut h);
    assert_eq!(
        pipes(&h.out[0]),
        "8=FIX.4.4|9=52|35=5|34=1|52=20231114-22:13:20.000|\
58=logon refused|10=068|"
    );
}

/// A Logon whose SendingTime is outside the accepted window is refused like any later message
/// would be: an unnumbered Logout naming SendingTime, and nothing of the session changes.
#[test]
fn logon_with_sending_time_far_off_is_refused() {
    let mut s: Sess = Session::new(cfg(), MemoryStore::new(10));
    let mut h = Rec::default();
    s.on_connected(T0);
    let mut m = In::new("A", 1, "98=0|108=30|");
    m.sending_time_ns = T0 - 121 * SEC;
    feed(&mut s, m, T0, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "5");
    assert_eq!(f(&out[0], 34).as_deref(), Some("1"));
    assert_eq!(
        f(&out[0], 58).as_deref(),
        Some("Invalid Logon message: SendingTime accuracy problem, field=52")
    );
    assert_eq!(
        h.disconnected(),
        Some(DisconnectReason::SendingTimeAccuracy)
    );
    assert_eq!((s.next_in(), s.next_out()), (1, 1));
}

/// A possible duplicate below the expected MsgSeqNum is checked before it is dropped: without
/// OrigSendingTime it gets Reject 373=1 naming 122 (its number not consumed); with an
/// OrigSendingTime after its SendingTime, Reject 373=10 naming 122, then Logout.
#[test]
fn poss_dup_below_expected_checks_orig_sending_time_first() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("D", 2, &nos("A2")), T0, &mut h);
    feed(&mut s, In::new("D", 3, &nos("A3")), T0, &mut h);
    let a2 = nos("A2");
    let mut m = In::new("D", 2, &a2).dup();
    m.orig_sending_time = None;
    feed(&mut s, m, T0, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 45).as_deref(), Some("2"));
    assert_eq!(f(&out[0], 373).as_deref(), Some("1"));
    assert_eq!(f(&out[0], 371).as_deref(), Some("122"));
    assert_eq!(f(&out[0], 372).as_deref(), Some("D"));
    assert_eq!(s.next_in(), 4, "nothing consumed");
    assert_eq!(h.app.len(), 2);
    // A well-formed duplicate is dropped silently.
    feed(&mut s, In::new("D", 2, &nos("A2")).dup(), T0, &mut h);
    assert!(h.take().is_empty());
    let mut m = In::new("D", 2, &a2).dup();
    m.orig_sending_time = Some("20231114-22:13:30.000"); // ten seconds after SendingTime
    feed(&mut s, m, T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 373).as_deref(), Some("10"));
    assert_eq!(f(&out[0], 371).as_deref(), Some("122"));
    assert_eq!(f(&out[0], 372).as_deref(), Some("D"));
    assert_eq!(mt(&out[1]), "5");
    assert_eq!(
        f(&out[1], 58).as_deref(),
        Some("SendingTime accuracy problem, field=122")
    );
    assert_eq!(
        h.disconnected(),
        Some(DisconnectReason::SendingTimeAccuracy)
    );
    assert_eq!(h.app.len(), 2);
}

/// At the expected MsgSeqNum, an OrigSendingTime after SendingTime is named as 122 with the
/// message's MsgType.
#[test]
fn orig_sending_time_problem_names_122_and_the_msg_type() {
    let (mut s, mut h) = logged_on();
    let body = nos("A2");
    let mut m = In::new("D", 2, &body).dup();
    m.orig_sending_time = Some("20231114-22:13:21.000");
    feed(&mut s, m, T0, &mut h);
    let out = h.take();
    assert_eq!(f(&out[0], 371).as_deref(), Some("122"));
    assert_eq!(f(&out[0], 372).as_deref(), Some("D"));
}

/// A Logon with ResetSeqNumFlag=Y and MsgSeqNum 1 on a logged-on session resets both sides:
/// answered with our Logon (141=Y, MsgSeqNum 1); the next message expected is 2, ours is 2.
#[test]
fn reset_logon_in_a_live_session_resets_both_sides() {
    let (mut s, mut h) = logged_on();
    for seq in 2..10 {
        feed(&mut s, In::new("0", seq, ""), T0, &mut h);
    }
    s.send_app(&exec_report(b"C"), T0, &mut h);
    h.take();
    feed(&mut s, In::new("A", 1, "98=0|108=30|141=Y|"), T0, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "A");
    assert_eq!(f(&out[0], 34).as_deref(), Some("1"));
    assert_eq!(f(&out[0], 141).as_deref(), Some("Y"));
    assert!(h.events.contains(&SessionEvent::LoggedOn { reset: true }));
    assert_eq!((s.next_in(), s.next_out()), (2, 2));
    assert!(s.store().is_empty());
    feed(&mut s, In::new("1", 2, "112=t|"), T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "0");
    assert_eq!(f(&out[0], 34).as_deref(), Some("2"));
    // Without the flag, a second Logon still ends the session.
    feed(&mut s, In::new("A", 3, "98=0|108=30|"), T0, &mut h);
    assert_eq!(s.state(), SessionState::Disconnected);
}

/// SequenceReset-Reset ignores its MsgSeqNum, even 0: NewSeqNo above the expected number moves
/// it; below, Reject 373=5 naming NewSeqNo (RefSeqNum 0) and nothing moves; the session goes on.
#[test]
fn sequence_reset_reset_with_msg_seq_num_zero() {
    let (mut s, mut h) = logged_on();
    feed(&mut s, In::new("4", 0, "36=25|"), T0, &mut h);
    assert!(h.take().is_empty());
    assert_eq!(s.next_in(), 25);
    feed(&mut s, In::new("4", 0, "36=5|123=N|"), T0, &mut h);
    let out = h.take();
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 45).as_deref(), Some("0"));
    assert_eq!(f(&out[0], 373).as_deref(), Some("5"));
    assert_eq!(f(&out[0], 371).as_deref(), Some("36"));
    assert_eq!(f(&out[0], 372).as_deref(), Some("4"));
    assert_eq!(s.next_in(), 25);
    assert_eq!(s.state(), SessionState::Active);
}

/// A message without TargetCompID (or SenderCompID) after Logon lacks a required header field:
/// Reject 373=1 naming it, its MsgSeqNum consumed, the session goes on.
#[test]
fn missing_comp_id_is_a_missing_required_field() {
    let (mut s, mut h) = logged_on();
    for (seq, drop, tag) in [(2, "56=RIALTO\x01", "56"), (3, "49=CLIENT1\x01", "49")] {
        let good = String::from_utf8(In::new("0", seq, "").bytes()).unwrap();
        feed_bytes(&mut s, &reframe(&good.replace(drop, "")), T0, &mut h);
        let out = h.take();
        assert_eq!(out.len(), 1);
        assert_eq!(mt(&out[0]), "3");
        assert_eq!(f(&out[0], 373).as_deref(), Some("1"));
        assert_eq!(f(&out[0], 371).as_deref(), Some(tag));
        assert_eq!(f(&out[0], 372).as_deref(), Some("0"));
        assert_eq!(s.next_in(), seq + 1);
        assert_eq!(s.state(), SessionState::Active);
    }
}

/// A field whose tag is 0 or negative is named in RefTagID as written.
#[test]
fn reject_of_tag_zero_or_negative_names_it() {
    let (mut s, mut h) = logged_on();
    for (seq, field, tag) in [(2, "0=HI", "0"), (3, "-1=HI", "-1")] {
        let good = String::from_utf8(In::new("0", seq, "").bytes()).unwrap();
        let bad = reframe(&good.replace("10=", &format!("{field}\x0110=")));
        feed_bytes(&mut s, &bad, T0, &mut h);
        let out = h.take();
        assert_eq!(mt(&out[0]), "3", "{field}");
        assert_eq!(f(&out[0], 373).as_deref(), Some("0"), "{field}");
        assert_eq!(f(&out[0], 371).as_deref(), Some(tag), "{field}");
        assert_eq!(f(&out[0], 372).as_deref(), Some("0"), "{field}");
    }
}

/// MsgType out of its place (not the third field) makes the message garbled: ignored, no
/// Reject, its MsgSeqNum not consumed.
#[test]
fn msg_type_not_third_is_garbled() {
    let (mut s, mut h) = logged_on();
    let mut bad = Vec::new();
    fix::wrap_body(
        FixVersion::Fix44,
        b"34=2\x0135=0\x0149=CLIENT1\x0156=RIALTO\x0152=20231114-22:13:20.000\x01",
        &mut bad,
    );
    feed_bytes(&mut s, &bad, T0, &mut h);
    assert!(h.take().is_empty());
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, SessionEvent::Garbled(fix::FrameError::MsgTypeNotThird))));
    assert_eq!(s.next_in(), 2);
    feed(&mut s, In::new("1", 2, "112=t|"), T0, &mut h);
    assert_eq!(mt(&h.take()[0]), "0");
}

/// A CompID problem's Reject names the message's MsgType, an application message's too, and
/// no RefTagID (its Text says which CompID).
#[test]
fn comp_id_reject_names_the_msg_type() {
    let (mut s, mut h) = logged_on();
    let body = nos("A2");
    let mut m = In::new("D", 2, &body);
    m.sender = "OTHER";
    feed(&mut s, m, T0, &mut h);
    let out = h.take();
    assert_eq!(f(&out[0], 373).as_deref(), Some("9"));
    assert_eq!(f(&out[0], 372).as_deref(), Some("D"));
    assert_eq!(f(&out[0], 371), None);
    assert_eq!(
        f(&out[0], 58).as_deref(),
        Some("CompID problem: SenderCompID(49) is not this session's")
    );
}

/// Every Reject carries a SessionRejectReason its session's version defines: FIX 4.2 defines
/// 0 to 11, so a repeated tag, a field out of order, a group's problems and "other" go without
/// 373 (the Text says what is wrong); FIX 4.4 and 5.0SP2 send each code.
#[test]
fn reject_reasons_are_those_the_version_defines() {
    for v in [FixVersion::Fix42, FixVersion::Fix44, FixVersion::Fix50Sp2] {
        let mut s: Sess = Session::new(
            SessionConfig::new(v, "RIALTO", "CLIENT1"),
            MemoryStore::new(10),
        );
        let mut h = Rec::default();
        s.on_connected(T0);
        let body = if v == FixVersion::Fix50Sp2 {
            "98=0|108=30|1137=9|"
        } else {
            "98=0|108=30|"
        };
        let mut logon = In::new("A", 1, body);
        logon.version = v;
        feed(&mut s, logon, T0, &mut h);
        h.take();
        for r in SessionRejectReason::ALL {
            let text = format!("{r:?}");
            s.send_reject(
                &fix::session::RejectOf {
                    ref_seq_num: 2,
                    ref_msg_type: Some(b"D"),
                    ref_tag: Some(55),
                    reason: r,
                    text: text.as_bytes(),
                },
                T0,
                &mut h,
            );
            let out = h.take();
            let sent = f(&out[0], 373);
            let defined = v != FixVersion::Fix42 || r.code() <= 11;
            assert_eq!(sent, defined.then(|| r.code().to_string()), "{v:?} {r:?}");
            assert_eq!(f(&out[0], 58), Some(text), "{v:?} {r:?}");
        }
    }
}

/// A ResendRequest whose EndSeqNo is below its BeginSeqNo (and not 0, "infinity") is refused:
/// Reject 373=5 naming EndSeqNo; nothing is resent and the session goes on.
#[test]
fn resend_request_ending_before_it_begins_is_rejected() {
    let (mut s, mut h) = logged_on();
    s.send_app(&exec_report(b"C2"), T0, &mut h);
    h.take();
    feed(&mut s, In::new("2", 2, "7=2|16=1|"), T0, &mut h);
    let out = h.take();
    assert_eq!(out.len(), 1);
    assert_eq!(mt(&out[0]), "3");
    assert_eq!(f(&out[0], 373).as_deref(), Some("5"));
    assert_eq!(f(&out[0], 371).as_deref(), Some("16"));
    assert_eq!(f(&out[0], 372).as_deref(), Some("2"));
    assert_eq!(s.next_in(), 3);
    assert_eq!(s.state(), SessionState::Active);
}
