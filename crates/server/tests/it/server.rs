//! End-to-end tests of the server over real sockets on 127.0.0.1 (ephemeral ports, temp data
//! directories), driven by a raw FIX client built on the `fix` crate's encoder.

use crate::common::new_order;
use fix::client::{FixClient, Msg};
use server::{Config, Server};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const T: Duration = Duration::from_secs(10);

fn config(dir: &Path) -> Config {
    let mut c = Config::defaults();
    c.listen = "127.0.0.1:0".parse().unwrap();
    c.data_dir = dir.to_path_buf();
    // Small segments and engine: fast start-up in debug builds.
    c.journal_segment_bytes = 1 << 20;
    c.orders_max = 1 << 16;
    c
}

fn start(cfg: Config) -> Server {
    Server::start(cfg, Arc::new(|_: &str| {})).expect("server starts")
}

fn logon(server: &Server, who: &str) -> FixClient {
    logon_at(server, who, 1, true)
}

fn logon_at(server: &Server, who: &str, seq: u64, reset: bool) -> FixClient {
    let mut c = FixClient::connect(server.addr, who, "RIALTO", seq).unwrap();
    c.logon(30, reset).unwrap();
    let (m, _) = c.expect("A", T).unwrap();
    assert_eq!(m.get(49), Some("RIALTO"));
    assert_eq!(m.get(56), Some(who));
    c
}

/// Now, in ns since the epoch (SendingTime and TransactTime of hand-built messages).
fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

fn er(c: &mut FixClient) -> Msg {
    c.expect("8", T).unwrap().0
}

fn check(m: &Msg, pairs: &[(u32, &str)]) {
    for (tag, v) in pairs {
        assert_eq!(m.get(*tag), Some(*v), "tag {tag} in {}", m.text());
    }
}

#[test]
fn orders_fill_on_both_sides_with_exact_quantities_and_prices() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let mut a = logon(&server, "CLIENT1");
    let mut b = logon(&server, "CLIENT2");

    new_order(&mut a, "a1", "ACME", "1", "10.01", "10");
    let ack = er(&mut a);
    check(
        &ack,
        &[
            (11, "a1"),
            (150, "0"),
            (39, "0"),
            (151, "10"),
            (14, "0"),
            (44, "10.01"),
            (55, "ACME"),
        ],
    );
    new_order(&mut a, "a2", "ACME", "1", "10.02", "5");
    check(&er(&mut a), &[(11, "a2"), (150, "0")]);

    // Sell 8 at 10: fills 5 @ 10.02 then 3 @ 10.01.
    new_order(&mut b, "b1", "ACME", "2", "10", "8");
    let b_ack = er(&mut b);
    check(&b_ack, &[(11, "b1"), (150, "0"), (39, "0")]);
    let f1 = er(&mut b);
    check(
        &f1,
        &[
            (150, "F"),
            (39, "1"),
            (31, "10.02"),
            (32, "5"),
            (14, "5"),
            (151, "3"),
            (6, "10.02"),
        ],
    );
    let f2 = er(&mut b);
    check(
        &f2,
        &[
            (150, "F"),
            (39, "2"),
            (31, "10.01"),
            (32, "3"),
            (14, "8"),
            (151, "0"),
        ],
    );
    // (5 * 10.02 + 3 * 10.01) / 8 = 10.01625, exactly.
    check(&f2, &[(6, "10.01625")]);

    let m1 = er(&mut a);
    check(
        &m1,
        &[
            (11, "a2"),
            (150, "F"),
            (39, "2"),
            (32, "5"),
            (14, "5"),
            (151, "0"),
        ],
    );
    let m2 = er(&mut a);
    check(
        &m2,
        &[
            (11, "a1"),
            (150, "F"),
            (39, "1"),
            (31, "10.01"),
            (32, "3"),
            (14, "3"),
            (151, "7"),
            (6, "10.01"),
        ],
    );
    assert_ne!(m1.get(17), m2.get(17), "ExecIDs are unique");
    server.shutdown().unwrap();
}

#[test]
fn cancel_replace_and_only_the_owner_may_touch_an_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let mut a = logon(&server, "CLIENT1");
    let mut b = logon(&server, "CLIENT2");
    new_order(&mut a, "o1", "BOLT", "1", "5.00", "100");
    let ack = er(&mut a);
    let order_id = ack.get(37).unwrap().to_string();

    // Another firm names the same ClOrdID: unknown order, nothing changes.
    b.send("F", &[(11, "x1"), (41, "o1"), (55, "BOLT"), (54, "1")])
        .unwrap();
    let (rej, _) = b.expect("9", T).unwrap();
    check(&rej, &[(434, "1"), (102, "1"), (58, "unknown order")]);
    b.send(
        "G",
        &[
            (11, "x2"),
            (41, "o1"),
            (55, "BOLT"),
            (54, "1"),
            (38, "1"),
            (40, "2"),
            (44, "1"),
        ],
    )
    .unwrap();
    let (rej, _) = b.expect("9", T).unwrap();
    check(&rej, &[(434, "2"), (58, "unknown order")]);

    // The owner replaces: new price and quantity, new ClOrdID.
    a.send(
        "G",
        &[
            (11, "o2"),
            (41, "o1"),
            (55, "BOLT"),
            (54, "1"),
            (38, "60"),
            (40, "2"),
            (44, "5.05"),
        ],
    )
    .unwrap();
    let rep = er(&mut a);
    check(
        &rep,
        &[
            (150, "5"),
            (39, "0"),
            (11, "o2"),
            (41, "o1"),
            (38, "60"),
            (151, "60"),
            (44, "5.05"),
        ],
    );
    assert_eq!(rep.get(37), Some(order_id.as_str()));
    // Status by the new ClOrdID.
    a.send("H", &[(11, "o2"), (55, "BOLT"), (54, "1")]).unwrap();
    check(&er(&mut a), &[(150, "I"), (39, "0"), (151, "60")]);
    // Off-tick replace is refused with a reason and changes nothing.
    a.send(
        "G",
        &[
            (11, "o3"),
            (41, "o2"),
            (55, "BOLT"),
            (54, "1"),
            (38, "60"),
            (40, "2"),
            (44, "5.055"),
        ],
    )
    .unwrap();
    let (rej, _) = a.expect("9", T).unwrap();
    check(
        &rej,
        &[
            (434, "2"),
            (58, "Price 5.055 is not a multiple of BOLT's tick 0.01"),
        ],
    );
    // Cancel.
    a.send("F", &[(11, "o4"), (41, "o2"), (55, "BOLT"), (54, "1")])
        .unwrap();
    let c = er(&mut a);
    check(
        &c,
        &[(150, "4"), (39, "4"), (11, "o4"), (41, "o2"), (151, "0")],
    );
    // Cancel again: no longer live.
    a.send("F", &[(11, "o5"), (41, "o2"), (55, "BOLT"), (54, "1")])
        .unwrap();
    let (rej, _) = a.expect("9", T).unwrap();
    check(&rej, &[(58, "unknown order")]);
    server.shutdown().unwrap();
}

#[test]
fn bad_input_is_rejected_with_a_reason_and_the_session_lives_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let mut a = logon(&server, "CLIENT1");
    new_order(&mut a, "r1", "NOPE", "1", "1.00", "1");
    check(
        &er(&mut a),
        &[(150, "8"), (39, "8"), (58, "unknown symbol NOPE")],
    );
    new_order(&mut a, "r2", "ACME", "1", "1.005", "1");
    check(
        &er(&mut a),
        &[
            (150, "8"),
            (58, "Price 1.005 is not a multiple of ACME's tick 0.01"),
        ],
    );
    new_order(&mut a, "r3", "ACME", "1", "1.00", "0");
    check(
        &er(&mut a),
        &[(150, "8"), (58, "OrderQty(38) must be positive, got 0")],
    );
    new_order(&mut a, "r4", "ACME", "1", "1.00", "1");
    check(&er(&mut a), &[(150, "0")]);
    new_order(&mut a, "r4", "ACME", "1", "1.00", "1");
    check(&er(&mut a), &[(150, "8"), (58, "duplicate ClOrdID")]);
    // A well-formed message of a type Rialto does not serve: BusinessMessageReject.
    a.send("AF", &[(584, "m1"), (585, "7")]).unwrap();
    let (j, _) = a.expect("j", T).unwrap();
    check(&j, &[(372, "AF"), (380, "3")]);
    // Garbage bytes and a message with a bad checksum are skipped.
    a.send_raw(b"this is not fix\x01").unwrap();
    a.send_raw(b"8=FIX.4.4\x019=5\x0135=0\x0110=000\x01")
        .unwrap();
    // Missing ClOrdID: session-level Reject.
    a.send(
        "D",
        &[(55, "ACME"), (54, "1"), (38, "1"), (40, "2"), (44, "1")],
    )
    .unwrap();
    let (r, _) = a.expect("3", T).unwrap();
    check(&r, &[(371, "11")]);
    // Still alive: TestRequest is answered.
    a.send("1", &[(112, "ping")]).unwrap();
    let m = loop {
        let m = a.recv(T).unwrap().expect("heartbeat");
        if m.msg_type() == "0" {
            break m;
        }
    };
    check(&m, &[(112, "ping")]);
    server.shutdown().unwrap();
}

#[test]
fn mass_cancel_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let mut a = logon(&server, "CLIENT3");
    for (i, sym) in ["ACME", "BOLT", "CRNK"].iter().enumerate() {
        new_order(&mut a, &format!("m{i}"), sym, "2", "20.00", "7");
        check(&er(&mut a), &[(150, "0")]);
    }
    a.send("H", &[(11, "m1"), (55, "BOLT"), (54, "2")]).unwrap();
    check(
        &er(&mut a),
        &[(150, "I"), (39, "0"), (11, "m1"), (151, "7")],
    );
    a.send("H", &[(11, "nope"), (55, "BOLT"), (54, "2")])
        .unwrap();
    check(&er(&mut a), &[(150, "I"), (58, "unknown order")]);
    // Mass cancel one symbol, then everything.
    a.send("q", &[(11, "mc1"), (530, "1"), (55, "ACME")])
        .unwrap();
    let (r, skipped) = a.expect("r", T).unwrap();
    check(&r, &[(530, "1"), (531, "1"), (533, "1")]);
    assert_eq!(skipped.len(), 1);
    check(&skipped[0], &[(150, "4"), (11, "m0")]);
    a.send("q", &[(11, "mc2"), (530, "7")]).unwrap();
    let (r, skipped) = a.expect("r", T).unwrap();
    check(&r, &[(531, "7"), (533, "2")]);
    assert_eq!(skipped.len(), 2);
    a.send("H", &[(11, "m2"), (55, "CRNK"), (54, "2")]).unwrap();
    check(&er(&mut a), &[(150, "I"), (39, "4"), (151, "0")]);
    server.shutdown().unwrap();
}

#[test]
fn resend_request_replays_reports_with_possdup_and_gap_fills_admin() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let mut a = logon(&server, "CLIENT4");
    new_order(&mut a, "s1", "ACME", "1", "3.00", "1");
    let first = er(&mut a);
    new_order(&mut a, "s2", "ACME", "1", "3.00", "2");
    let second = er(&mut a);
    a.send("2", &[(7, "1"), (16, "0")]).unwrap();
    // Seq 1 was the Logon: gap fill 1 -> 2. Then both reports, PossDup, same bodies.
    let (gf, _) = a.expect("4", T).unwrap();
    check(&gf, &[(34, "1"), (123, "Y"), (36, "2"), (43, "Y")]);
    for orig in [&first, &second] {
        let m = er(&mut a);
        assert!(m.poss_dup(), "{}", m.text());
        assert!(m.get(122).is_some());
        assert_eq!(m.seq(), orig.seq());
        assert_eq!(m.get(17), orig.get(17));
        assert_eq!(m.get(11), orig.get(11));
    }
    server.shutdown().unwrap();
}

#[test]
fn logon_checks_compids_password_and_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let hash = server::auth::hash_password(b"pw").unwrap();
    let mut cfg = Config::from_toml(&format!(
        r#"
listen = "127.0.0.1:0"
[[firms]]
name = "F"
accounts = [1]
[[sessions]]
sender_comp_id = "SECRET"
password_hash = "{hash}"
firm = "F"
"#
    ))
    .unwrap();
    cfg.data_dir = dir.path().to_path_buf();
    let server = start(cfg);
    let mut x = FixClient::connect(server.addr, "WHO", "RIALTO", 1).unwrap();
    x.logon(30, true).unwrap();
    let (lo, _) = x.expect("5", T).unwrap();
    check(&lo, &[(58, "logon refused")]);
    let mut y = FixClient::connect(server.addr, "SECRET", "RIALTO", 1).unwrap();
    y.send("A", &[(98, "0"), (108, "30"), (554, "bad")])
        .unwrap();
    let (lo, _) = y.expect("5", T).unwrap();
    check(&lo, &[(58, "logon refused")]);
    let mut z = FixClient::connect(server.addr, "SECRET", "RIALTO", 1).unwrap();
    z.send("A", &[(98, "0"), (108, "30"), (554, "pw")]).unwrap();
    z.expect("A", T).unwrap();
    server.shutdown().unwrap();
}

#[test]
fn restart_resumes_sequence_numbers_and_clordid_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let mut a = logon(&server, "CLIENT5");
    new_order(&mut a, "k1", "CRNK", "1", "7.00", "9");
    let ack = er(&mut a);
    let order_id = ack.get(37).unwrap().to_string();
    let server_seq = ack.seq();
    let client_next = a.out_seq;
    let hash = server.shutdown().unwrap();
    // The clean stop sent a Logout.
    let (lo, _) = a.expect("5", T).unwrap();
    assert_eq!(lo.seq(), server_seq + 1);
    drop(a);

    let server = start(config(dir.path()));
    assert_eq!(
        server.recovered.state_hash, hash,
        "restart restores the exact state"
    );
    // No reset: the client continues its numbers, the server continues its own.
    let mut a = logon_at(&server, "CLIENT5", client_next + 1, false);
    // Our Logout's seq (client_next) was consumed by the old run; the server had no Logout
    // from us, so it asks for it: expect a ResendRequest or a plain continuation.
    let logon_seq = a.out_seq - 1;
    assert_eq!(logon_seq, client_next + 1);
    let mut got_resend = false;
    while let Some(m) = a.recv(Duration::from_millis(300)).unwrap() {
        if m.msg_type() == "2" {
            got_resend = true;
            check(&m, &[(7, &client_next.to_string())]);
        }
    }
    assert!(got_resend, "gap in our numbers is detected without a reset");
    // Fill the gap (our seq client_next and the Logon itself).
    let upto = (a.out_seq).to_string();
    a.send_seq("4", client_next, &[(123, "Y"), (36, &upto)], true)
        .unwrap();
    // The old order is still known by its ClOrdID.
    a.send("H", &[(11, "k1"), (55, "CRNK"), (54, "1")]).unwrap();
    let st = er(&mut a);
    check(&st, &[(150, "I"), (39, "0"), (151, "9")]);
    assert_eq!(st.get(37), Some(order_id.as_str()));
    assert!(
        st.seq() > server_seq + 2,
        "server numbers continue: {}",
        st.text()
    );
    new_order(&mut a, "k1", "CRNK", "1", "7.00", "1");
    check(&er(&mut a), &[(150, "8"), (58, "duplicate ClOrdID")]);
    a.send("F", &[(11, "k2"), (41, "k1"), (55, "CRNK"), (54, "1")])
        .unwrap();
    check(&er(&mut a), &[(150, "4"), (11, "k2"), (41, "k1")]);
    let hash2 = server.shutdown().unwrap();
    let v = server::tools::verify(dir.path(), config(dir.path())).unwrap();
    assert_eq!(v.full_replay_hash, hash2);
    assert!(v.hashes_agree());
}

#[test]
fn overload_is_shed_explicitly_with_exchange_busy_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.session_queue_max = 8;
    let server = start(cfg);
    let mut a = logon(&server, "CLIENT6");
    // Pre-encode a burst and write it at once: the network thread parses it in one go, far
    // faster than the journal can take it through a 16-slot queue.
    const N: usize = 2000;
    let mut enc = fix::Encoder::default();
    let mut burst = Vec::new();
    for i in 0..N {
        enc.begin(b"D");
        enc.header(&fix::Header {
            sender_comp_id: b"CLIENT6",
            target_comp_id: b"RIALTO",
            msg_seq_num: a.out_seq + i as u64,
            sending_time_ns: now_ns(),
            poss_dup: false,
            orig_sending_time: None,
            time_precision: fix::TimePrecision::Millis,
        });
        let cl = format!("b{i}");
        for (t, v) in [
            (11, cl.as_str()),
            (55, "ACME"),
            (54, if i % 2 == 0 { "1" } else { "2" }),
            (38, "1"),
            (40, "2"),
            (44, if i % 2 == 0 { "9.00" } else { "11.00" }),
            (59, "1"),
        ] {
            enc.field(t, v.as_bytes());
        }
        enc.field_timestamp(60, now_ns(), fix::TimePrecision::Millis);
        burst.extend_from_slice(enc.finish(fix::FixVersion::Fix44));
    }
    a.out_seq += N as u64;
    a.send_raw(&burst).unwrap();
    let (mut acked, mut busy) = (0, 0);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..N {
        let m = er(&mut a);
        assert!(
            seen.insert(m.get(11).unwrap().to_string()),
            "one report per order"
        );
        match m.get(150) {
            Some("0") => acked += 1,
            Some("8") => {
                check(&m, &[(58, "exchange busy"), (39, "8"), (55, "ACME")]);
                busy += 1;
            }
            _ => panic!("{}", m.text()),
        }
    }
    assert_eq!(acked + busy, N);
    assert!(busy > 0, "the burst overflowed the queue");
    assert!(acked > 0, "some orders got through");
    assert_eq!(
        server
            .counters
            .busy_rejects
            .load(std::sync::atomic::Ordering::Relaxed),
        busy as u64
    );
    // Load gone: the next order is accepted again.
    new_order(&mut a, "after", "ACME", "1", "9.00", "1");
    check(&er(&mut a), &[(11, "after"), (150, "0")]);
    server.shutdown().unwrap();
}

#[test]
fn damaged_journal_tail_is_truncated_and_middle_corruption_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let mut a = logon(&server, "CLIENT7");
    for i in 0..20 {
        new_order(&mut a, &format!("d{i}"), "BOLT", "1", "1.00", "1");
        er(&mut a);
    }
    drop(a);
    let hash = server.shutdown().unwrap();
    // Without snapshots, recovery must replay the journal itself.
    std::fs::remove_dir_all(dir.path().join("snapshots")).unwrap();
    let seg = std::fs::read_dir(dir.path().join("journal"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "seg"))
        .unwrap();
    let bytes = std::fs::read(&seg).unwrap();
    let end = bytes.iter().rposition(|&b| b != 0).unwrap() + 1;

    // A torn tail (the last write cut short: the end of the last record and the commit marker
    // after it) is truncated; the state is that before it.
    let torn = tempfile::tempdir().unwrap();
    copy_data(dir.path(), torn.path());
    let tseg = torn.path().join("journal").join(seg.file_name().unwrap());
    let mut t = bytes.clone();
    for b in &mut t[end - journal::format::COMMIT_MARKER_LEN - 3..end] {
        *b = 0;
    }
    std::fs::write(&tseg, &t).unwrap();
    let s = start(config(torn.path()));
    assert_ne!(
        s.recovered.state_hash, hash,
        "the last record (Shutdown) was dropped"
    );
    s.shutdown().unwrap();

    // A flipped bit in the middle stops start-up with an error naming segment and offset.
    let bad = tempfile::tempdir().unwrap();
    copy_data(dir.path(), bad.path());
    let bseg = bad.path().join("journal").join(seg.file_name().unwrap());
    let mut b = bytes.clone();
    b[end / 2] ^= 0x10;
    std::fs::write(&bseg, &b).unwrap();
    let err = Server::start(config(bad.path()), Arc::new(|_: &str| {}))
        .err()
        .expect("corruption is refused");
    let text = err.to_string();
    assert!(text.contains(".seg"), "names the segment: {text}");
    assert!(text.contains("offset"), "names the offset: {text}");

    // A flipped bit in the last record, which its commit marker covers (it was acknowledged),
    // stops start-up too: it is not a torn tail.
    let last = tempfile::tempdir().unwrap();
    copy_data(dir.path(), last.path());
    let lseg = last.path().join("journal").join(seg.file_name().unwrap());
    let mut l = bytes.clone();
    l[end - journal::format::COMMIT_MARKER_LEN - 1] ^= 0x10;
    std::fs::write(&lseg, &l).unwrap();
    let err = Server::start(config(last.path()), Arc::new(|_: &str| {}))
        .err()
        .expect("a damaged committed record is refused");
    let text = err.to_string();
    assert!(text.contains("committed record"), "{text}");
    assert!(text.contains(".seg") && text.contains("offset"), "{text}");

    // The undamaged copy replays to the hash the server stopped with.
    let v = server::tools::verify(dir.path(), config(dir.path())).unwrap();
    assert_eq!(v.full_replay_hash, hash);
}

fn copy_data(from: &Path, to: &Path) {
    for sub in ["journal", "snapshots"] {
        let src = from.join(sub);
        if !src.is_dir() {
            continue;
        }
        std::fs::create_dir_all(to.join(sub)).unwrap();
        for e in std::fs::read_dir(&src).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().unwrap() == "LOCK" {
                continue;
            }
            std::fs::copy(&p, to.join(sub).join(p.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn heartbeats_test_requests_and_a_silent_client_is_logged_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let mut a = FixClient::connect(server.addr, "CLIENT8", "RIALTO", 1).unwrap();
    a.send("A", &[(98, "0"), (108, "1"), (141, "Y")]).unwrap();
    a.expect("A", T).unwrap();
    // Silent client: the server sends Heartbeats, then a TestRequest, then gives up.
    let mut seen = Vec::new();
    let outcome = loop {
        match a.recv(Duration::from_secs(6)) {
            Ok(Some(m)) => {
                seen.push(m.msg_type().to_string());
                if m.msg_type() == "5" {
                    break m;
                }
            }
            other => panic!("expected a Logout, got {other:?} after {seen:?}"),
        }
    };
    assert!(
        seen.iter().any(|t| t == "1"),
        "a TestRequest came first: {seen:?}"
    );
    check(&outcome, &[(58, "heartbeat timeout")]);
    server.shutdown().unwrap();
}

#[test]
fn the_loop_journals_checkpoints_that_bound_a_restart_which_still_resends_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let small = |d: &Path| {
        let mut c = config(d);
        c.checkpoint_every_records = 10;
        c.resend_store_max = 5;
        // No periodic snapshot: the restart replays the whole journal.
        c.snapshot_every_commands = 0;
        c.snapshot_every_secs = 0;
        c
    };
    let server = start(small(dir.path()));
    let mut a = logon(&server, "CLIENT6");
    let mut reports = Vec::new();
    for i in 0..40 {
        // Resting bids: one report each.
        new_order(
            &mut a,
            &format!("q{i}"),
            "ACME",
            "1",
            &format!("5.{i:02}"),
            "1",
        );
        reports.push(er(&mut a));
    }
    // A crash image (kill -9): no final snapshot.
    let copy = tempfile::tempdir().unwrap();
    copy_data(dir.path(), copy.path());
    let client_next = a.out_seq;
    drop(a);
    server.shutdown().unwrap();
    let bound = server::recovery::store_bound(copy.path());
    let (cp_seq, cp) = bound.expect("the event loop journaled checkpoints");
    assert!(
        cp.fix.sessions.iter().any(|m| m.oldest_stored > 1),
        "{cp:?}"
    );
    let v = server::tools::verify(copy.path(), small(copy.path())).unwrap();
    assert!(v.hashes_agree(), "{v:?}");
    let server = start(small(copy.path()));
    assert_eq!(server.recovered.phases.store_bound, Some(cp_seq));
    assert_eq!(server.recovered.state_hash, v.full_replay_hash);
    let mut a = logon_at(&server, "CLIENT6", client_next, false);
    a.send("2", &[(7, "1"), (16, "0")]).unwrap();
    // The newest 5 reports, as first sent, with gap fills over everything before them.
    let mut resent = Vec::new();
    while let Some(m) = a.recv(Duration::from_millis(500)).unwrap() {
        if m.msg_type() == "8" {
            assert!(m.poss_dup(), "{}", m.text());
            resent.push(m);
        }
    }
    let newest = &reports[reports.len() - 5..];
    assert_eq!(
        resent.len(),
        5,
        "{:?}",
        resent.iter().map(|m| m.text()).collect::<Vec<_>>()
    );
    for (m, orig) in resent.iter().zip(newest) {
        assert_eq!(m.seq(), orig.seq());
        for tag in [11, 17, 37, 39, 150, 151, 14] {
            assert_eq!(m.get(tag), orig.get(tag), "tag {tag}: {}", m.text());
        }
    }
    server.shutdown().unwrap();
}

/// The snapshot replica follows the journal while snapshots are periodic, and does no work at
/// all when they are not (only the final snapshot of a clean stop is taken, by the loop).
#[test]
fn the_snapshot_replica_follows_the_journal_only_when_snapshots_are_periodic() {
    use std::sync::atomic::Ordering;
    for periodic in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(dir.path());
        cfg.snapshot_every_commands = 0;
        // Periodic by time, but not due within the test.
        cfg.snapshot_every_secs = if periodic { 3600 } else { 0 };
        let server = start(cfg);
        let mut a = logon(&server, "CLIENT5");
        for i in 0..30 {
            new_order(&mut a, &format!("f{i}"), "CRNK", "1", "3.00", "1");
            er(&mut a);
        }
        let last = server.counters.last_seq.load(Ordering::Relaxed);
        assert!(last > 30, "{last}");
        let t0 = std::time::Instant::now();
        let mut seen = 0;
        while t0.elapsed()
            < if periodic {
                T
            } else {
                Duration::from_millis(500)
            }
        {
            seen = server.counters.replica_seq.load(Ordering::Relaxed);
            if seen >= last {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if periodic {
            assert!(seen >= last, "the replica reached {seen} of {last}");
        } else {
            assert_eq!(
                seen, 0,
                "a replica with nothing to snapshot applied records"
            );
        }
        drop(a);
        server.shutdown().unwrap();
        // Either way a clean stop leaves a snapshot of the final state.
        let snaps = std::fs::read_dir(dir.path().join("snapshots"))
            .unwrap()
            .count();
        assert!(snaps >= 1, "no final snapshot");
    }
}

#[test]
fn periodic_snapshots_come_from_the_replica_without_stalling_and_match_a_full_replay() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.snapshot_every_commands = 15;
    let lines = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    let server = Server::start(
        cfg,
        Arc::new(move |m: &str| sink.lock().unwrap().push(m.to_string())),
    )
    .unwrap();
    let mut a = logon(&server, "CLIENT7");
    for i in 0..60 {
        let side = if i % 2 == 0 { "1" } else { "2" };
        new_order(&mut a, &format!("s{i}"), "BOLT", side, "10.00", "1");
        er(&mut a);
    }
    let snaps = || {
        server
            .counters
            .snapshots
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    let t0 = std::time::Instant::now();
    while snaps() < 2 && t0.elapsed() < T {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(snaps() >= 2, "periodic snapshots were taken");
    // Crash now (a copy of the files as they are): the replica's newest snapshot plus the
    // journal after it rebuild exactly the state of a full replay.
    let copy = tempfile::tempdir().unwrap();
    copy_data(dir.path(), copy.path());
    let v = server::tools::verify(copy.path(), config(copy.path())).unwrap();
    assert!(v.snapshot_seq.is_some());
    assert!(v.hashes_agree(), "{v:?}");
    let hash = server.shutdown().unwrap();
    let log = lines.lock().unwrap().join("\n");
    assert!(log.contains("engine stall 0 ms (replica"), "{log}");
    let s = start(config(dir.path()));
    assert_eq!(s.recovered.state_hash, hash);
    s.shutdown().unwrap();
}

#[test]
fn an_iteration_applies_at_most_its_budget_and_sheds_over_the_backlog_then_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    // 4 applied per iteration, at most 8 of each session waiting: the rest is shed.
    cfg.batch_budget = 4;
    cfg.session_queue_max = 8;
    let server = start(cfg);
    let mut a = logon(&server, "CLIENT4");
    let mut b = logon(&server, "CLIENT3");
    // Two clients each write a burst of 300 orders at once: the loop reads them in a few
    // iterations, applies at most 4 orders per iteration, keeps 8 waiting and answers the rest
    // "exchange busy".
    let burst = |c: &mut FixClient, tag: &str| {
        let mut enc = fix::Encoder::default();
        let mut bytes = Vec::new();
        for i in 0..300u64 {
            enc.begin(b"D");
            enc.header(&fix::Header {
                sender_comp_id: c.sender.as_bytes(),
                target_comp_id: b"RIALTO",
                msg_seq_num: c.out_seq + i,
                sending_time_ns: now_ns(),
                poss_dup: false,
                orig_sending_time: None,
                time_precision: fix::TimePrecision::Millis,
            });
            let cl = format!("{tag}{i}");
            for (t, v) in [
                (11, cl.as_str()),
                (55, "BOLT"),
                (54, "1"),
                (38, "1"),
                (40, "2"),
                (44, "5.00"),
                (59, "1"),
            ] {
                enc.field(t, v.as_bytes());
            }
            enc.field_timestamp(60, now_ns(), fix::TimePrecision::Millis);
            bytes.extend_from_slice(enc.finish(fix::FixVersion::Fix44));
        }
        c.out_seq += 300;
        c.send_raw(&bytes).unwrap();
    };
    burst(&mut a, "a");
    burst(&mut b, "b");
    let (mut busy, mut total_acked) = (0, 0);
    for c in [&mut a, &mut b] {
        let (mut acked, mut shed) = (0, 0);
        for _ in 0..300 {
            let m = er(c);
            match m.get(150) {
                Some("0") => acked += 1,
                Some("8") => {
                    check(&m, &[(58, "exchange busy")]);
                    shed += 1;
                }
                _ => panic!("{}", m.text()),
            }
        }
        busy += shed;
        total_acked += acked;
    }
    assert!(total_acked > 0, "some orders got in");
    assert!(busy > 0, "the bursts exceeded the budget");
    let batches = server
        .counters
        .batches
        .load(std::sync::atomic::Ordering::Relaxed);
    let accepted = 600 - busy;
    assert!(
        accepted as u64 <= 4 * batches,
        "at most 4 accepted per iteration: {accepted} in {batches}"
    );
    // The burst is over: orders are accepted again.
    for i in 0..3 {
        new_order(&mut a, &format!("after{i}"), "BOLT", "1", "5.00", "1");
        check(&er(&mut a), &[(150, "0")]);
    }
    server.shutdown().unwrap();
}

#[test]
fn a_burst_within_the_backlog_is_answered_in_full_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    // 8 applied per iteration, up to 1000 of the session waiting: a 1000-order burst waits,
    // none is shed.
    cfg.batch_budget = 8;
    cfg.session_queue_max = 1000;
    let server = start(cfg);
    let mut a = logon(&server, "CLIENT2");
    let mut bytes = Vec::new();
    let mut enc = fix::Encoder::default();
    for i in 0..1000u64 {
        enc.begin(b"D");
        enc.header(&fix::Header {
            sender_comp_id: b"CLIENT2",
            target_comp_id: b"RIALTO",
            msg_seq_num: a.out_seq + i,
            sending_time_ns: now_ns(),
            poss_dup: false,
            orig_sending_time: None,
            time_precision: fix::TimePrecision::Millis,
        });
        let cl = format!("w{i}");
        for (t, v) in [
            (11, cl.as_str()),
            (55, "CRNK"),
            (54, "2"),
            (38, "1"),
            (40, "2"),
            (44, "50.00"),
            (59, "1"),
        ] {
            enc.field(t, v.as_bytes());
        }
        enc.field_timestamp(60, now_ns(), fix::TimePrecision::Millis);
        bytes.extend_from_slice(enc.finish(fix::FixVersion::Fix44));
    }
    a.out_seq += 1000;
    a.send_raw(&bytes).unwrap();
    for i in 0..1000 {
        let m = er(&mut a);
        check(&m, &[(11, &format!("w{i}")), (150, "0")]);
    }
    assert_eq!(
        server
            .counters
            .busy_rejects
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );
    new_order(&mut a, "next", "CRNK", "2", "50.00", "1");
    check(&er(&mut a), &[(11, "next"), (150, "0")]);
    server.shutdown().unwrap();
}

/// Now, in ns after midnight UTC.
fn time_of_day() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    now % (86_400 * 1_000_000_000)
}

/// `ns` after midnight as HH:MM:SS.
fn hms(ns: u64) -> String {
    let s = ns / 1_000_000_000 % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn day_order(c: &mut FixClient, cl: &str) {
    c.send(
        "D",
        &[
            (11, cl),
            (55, "ACME"),
            (54, "1"),
            (38, "5"),
            (40, "2"),
            (44, "9.00"),
            (59, "0"),
            (60, "20260101-00:00:00.000"),
        ],
    )
    .unwrap();
}

/// The end of the trading day two seconds from now, the market closed for an hour after it: a
/// subscribed session hears its DAY order expire, then TradingSessionStatus closed; a new
/// order is refused until the start; the journal replays to the same state.
#[test]
fn day_orders_expire_at_the_end_of_the_day_and_subscribers_hear_the_market_close() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    let tod = time_of_day();
    let end = (tod + 2_000_000_000) % (86_400 * 1_000_000_000);
    let opens = (end + 3600 * 1_000_000_000) % (86_400 * 1_000_000_000);
    cfg.trading_day_end_ns = Some(end);
    cfg.trading_day_start_ns = Some(opens);
    let server = start(cfg.clone());
    let mut a = logon(&server, "CLIENT1");
    a.send("g", &[(335, "day"), (263, "1")]).unwrap();
    let (h, _) = a.expect("h", T).unwrap();
    check(&h, &[(335, "day"), (336, "1"), (325, "N"), (340, "2")]);
    day_order(&mut a, "d1");
    check(&er(&mut a), &[(150, "0"), (59, "0")]);
    new_order(&mut a, "g1", "ACME", "1", "9.00", "5");
    check(&er(&mut a), &[(150, "0"), (59, "1")]);
    // Nothing else is sent: the loop's own Tick ends the day.
    let expired = er(&mut a);
    check(&expired, &[(11, "d1"), (150, "C"), (39, "C"), (151, "0")]);
    let (h, _) = a.expect("h", T).unwrap();
    check(&h, &[(335, "day"), (325, "Y"), (340, "3")]);
    day_order(&mut a, "d2");
    let text = format!("market closed until {} UTC", hms(opens));
    check(&er(&mut a), &[(11, "d2"), (150, "8"), (58, text.as_str())]);
    a.send("g", &[(335, "now"), (263, "0")]).unwrap();
    let (h, _) = a.expect("h", T).unwrap();
    check(&h, &[(335, "now"), (325, "N"), (340, "3")]);
    let hash = server.shutdown().unwrap();
    let v = server::tools::verify(dir.path(), cfg.clone()).unwrap();
    assert_eq!(
        v.full_replay_hash, hash,
        "a full replay gives the same state"
    );
    assert!(v.hashes_agree());
    let server = start(cfg);
    assert_eq!(server.recovered.state_hash, hash);
    let mut b = logon(&server, "CLIENT1");
    b.send("H", &[(11, "g1"), (55, "ACME"), (54, "1")]).unwrap();
    check(&er(&mut b), &[(150, "I"), (39, "0"), (151, "5")]);
    b.send("H", &[(11, "d1"), (55, "ACME"), (54, "1")]).unwrap();
    check(&er(&mut b), &[(150, "I"), (151, "0")]);
    server.shutdown().unwrap();
}

/// With no connection open the loop still journals a Tick at the end of the day: the DAY order
/// expires then (its report waits in the session's store, stamped at the end of the day), and
/// a restart rebuilds the same state.
#[test]
fn day_orders_expire_at_the_end_of_the_day_with_no_one_connected() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    let tod = time_of_day();
    let end = (tod + 2_000_000_000) % (86_400 * 1_000_000_000);
    cfg.trading_day_end_ns = Some(end);
    let server = start(cfg.clone());
    let mut a = logon(&server, "CLIENT2");
    day_order(&mut a, "d1");
    check(&er(&mut a), &[(150, "0")]);
    a.send("5", &[]).unwrap();
    a.expect("5", T).unwrap();
    let next_in = a.out_seq;
    drop(a);
    // Until the journal (read beside the running server) shows the order expired.
    let deadline = std::time::Instant::now() + Duration::from_secs(2) + T;
    loop {
        let mut text = Vec::new();
        // A record being written as it is read can end the dump early: read again.
        let _ = server::tools::dump(dir.path(), cfg.clone(), 1, &mut text);
        if String::from_utf8_lossy(&text).contains("Expired") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the DAY order did not expire with no one connected"
        );
        std::thread::park_timeout(Duration::from_millis(50));
    }
    let hash = server.shutdown().unwrap();
    let v = server::tools::verify(dir.path(), cfg.clone()).unwrap();
    assert_eq!(v.full_replay_hash, hash);
    assert!(v.hashes_agree());
    let server = start(cfg);
    assert_eq!(server.recovered.state_hash, hash);
    let mut b = logon_at(&server, "CLIENT2", next_in, false);
    b.send("2", &[(7, "1"), (16, "0")]).unwrap();
    let (m, _) = b.expect("8", T).unwrap();
    check(&m, &[(11, "d1"), (150, "0"), (43, "Y")]);
    let (m, _) = b.expect("8", T).unwrap();
    check(&m, &[(11, "d1"), (150, "C"), (39, "C"), (43, "Y")]);
    // Stamped by the Tick the loop journaled at the end (within a second of it; 10 s is a
    // generous bound).
    let sent = m.get(122).expect("OrigSendingTime");
    let at = &sent[9..17];
    let in_time = (0..=10).any(|k| hms(end + k * 1_000_000_000) == at);
    assert!(in_time, "expired at {at}, the day ended at {}", hms(end));
    server.shutdown().unwrap();
}

/// Index of `tag=` as a field in a message's raw bytes (to check where a field was written).
fn field_at(m: &Msg, tag: u32) -> usize {
    let needle = format!("\x01{tag}=");
    m.raw
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .unwrap_or_else(|| panic!("no {tag} in {}", m.text()))
}

/// The default drop-copy session of CLIENT1's firm gets every ExecutionReport of the firm's
/// orders as FIX 4.4, whichever session and version entered them, with the original's fields,
/// DeliverToCompID naming that session (in the header) and CopyMsgIndicator; another firm's
/// reports are not copied; it may not enter orders.
#[test]
fn a_drop_copy_session_gets_its_firms_reports_in_its_own_version() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let mut dc = logon(&server, "DROPCOPY1");
    let mut old = FixClient::connect(server.addr, "CLIENT1_42", "RIALTO", 1)
        .unwrap()
        .with_version(fix::FixVersion::Fix42);
    old.logon(30, true).unwrap();
    old.expect("A", T).unwrap();
    let mut other = logon(&server, "CLIENT2");

    old.send(
        "D",
        &[
            (11, "d1"),
            (21, "1"),
            (55, "ACME"),
            (54, "2"),
            (38, "7"),
            (40, "2"),
            (44, "10.50"),
            (59, "0"),
            (60, "20260101-00:00:00.000"),
        ],
    )
    .unwrap();
    let ack = er(&mut old);
    check(&ack, &[(8, "FIX.4.2"), (20, "0"), (150, "0"), (11, "d1")]);
    let copy = er(&mut dc);
    check(
        &copy,
        &[
            (8, "FIX.4.4"),
            (56, "DROPCOPY1"),
            (128, "CLIENT1_42"),
            (797, "Y"),
            (150, "0"),
            (39, "0"),
        ],
    );
    assert_eq!(copy.get(20), None, "no FIX 4.2 field in a FIX 4.4 copy");
    for tag in [11, 17, 37, 1, 55, 54, 38, 44, 151, 14, 6, 60] {
        assert_eq!(copy.get(tag), ack.get(tag), "tag {tag}: {}", copy.text());
    }
    assert!(
        field_at(&copy, 52) < field_at(&copy, 128) && field_at(&copy, 128) < field_at(&copy, 37),
        "DeliverToCompID ends the header: {}",
        copy.text()
    );

    // CLIENT2 (another firm) takes 3: its reports are not copied, CLIENT1_42's fill is.
    new_order(&mut other, "b1", "ACME", "1", "10.50", "3");
    check(&er(&mut other), &[(150, "0"), (11, "b1")]);
    check(&er(&mut other), &[(150, "F"), (32, "3")]);
    let fill = er(&mut old);
    check(&fill, &[(150, "1"), (32, "3"), (151, "4")]);
    let copy = er(&mut dc);
    check(
        &copy,
        &[
            (128, "CLIENT1_42"),
            (150, "F"),
            (39, "1"),
            (32, "3"),
            (31, "10.5"),
        ],
    );
    assert_eq!(copy.get(17), fill.get(17));

    // The drop-copy session may not enter orders; nothing reaches the exchange.
    new_order(&mut dc, "x1", "ACME", "1", "10.50", "4");
    let (rej, skipped) = dc.expect("j", T).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    check(&rej, &[(372, "D"), (379, "x1"), (380, "0")]);
    assert!(rej.get(58).unwrap().contains("drop-copy"), "{}", rej.text());
    // The rest of d1 is still there for CLIENT2 to take.
    new_order(&mut other, "b2", "ACME", "1", "10.50", "4");
    check(&er(&mut other), &[(150, "0"), (11, "b2")]);
    check(&er(&mut other), &[(150, "F"), (32, "4")]);
    check(&er(&mut old), &[(150, "2"), (151, "0")]);
    check(&er(&mut dc), &[(150, "F"), (39, "2"), (128, "CLIENT1_42")]);
    assert!(
        dc.recv(Duration::from_millis(300)).unwrap().is_none(),
        "nothing else for the drop copy"
    );
    server.shutdown().unwrap();
}

/// Copies made while the drop-copy session is away are stored; after a crash and a full
/// replay of the journal they are resent exactly (PossDupFlag, the originals' ExecIDs), and
/// the copies made after recovery continue its numbers.
#[test]
fn drop_copies_survive_a_restart_and_continue_their_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = |d: &Path| {
        let mut c = config(d);
        c.snapshot_every_commands = 0;
        c.snapshot_every_secs = 0;
        c
    };
    let server = start(cfg(dir.path()));
    let mut dc = logon(&server, "DROPCOPY3");
    // A refused order of the drop-copy session is journaled too (and must replay as refused).
    new_order(&mut dc, "x1", "BOLT", "1", "1.00", "1");
    check(&dc.expect("j", T).unwrap().0, &[(34, "2"), (372, "D")]);
    let dc_next = dc.out_seq;
    drop(dc);
    let mut a = logon(&server, "CLIENT3");
    let mut acks = Vec::new();
    for i in 0..3 {
        new_order(
            &mut a,
            &format!("o{i}"),
            "BOLT",
            "1",
            &format!("1.0{i}"),
            "1",
        );
        acks.push(er(&mut a));
    }
    let a_next = a.out_seq;
    drop(a);
    // The crash image (no final snapshot: the restart replays the whole journal). Every ack
    // was sent after its record was durable.
    let copy = tempfile::tempdir().unwrap();
    copy_data(dir.path(), copy.path());
    server.shutdown().unwrap();

    let server = start(cfg(copy.path()));
    let mut dc = logon_at(&server, "DROPCOPY3", dc_next, false);
    dc.send("2", &[(7, "3"), (16, "0")]).unwrap();
    let mut resent = Vec::new();
    while let Some(m) = dc.recv(Duration::from_millis(500)).unwrap() {
        if m.msg_type() == "8" {
            resent.push(m);
        }
    }
    assert_eq!(
        resent.len(),
        3,
        "{:?}",
        resent.iter().map(Msg::text).collect::<Vec<_>>()
    );
    for (k, (m, orig)) in resent.iter().zip(&acks).enumerate() {
        assert!(m.poss_dup(), "{}", m.text());
        assert_eq!(m.seq(), 3 + k as u64);
        check(m, &[(128, "CLIENT3"), (797, "Y")]);
        for tag in [11, 17, 37, 150, 39, 44, 151] {
            assert_eq!(m.get(tag), orig.get(tag), "tag {tag}: {}", m.text());
        }
    }
    // The Logon answer took 6; the next copy is 7.
    let mut a = logon_at(&server, "CLIENT3", a_next, false);
    new_order(&mut a, "o9", "BOLT", "1", "1.09", "1");
    let ack = er(&mut a);
    let live = er(&mut dc);
    assert!(!live.poss_dup());
    assert_eq!(live.seq(), 7, "{}", live.text());
    assert_eq!(live.get(17), ack.get(17));
    let hash = server.shutdown().unwrap();
    let v = server::tools::verify(copy.path(), cfg(copy.path())).unwrap();
    assert_eq!(v.full_replay_hash, hash);
}
