//! Abuse suite: one firm fills its share of the engine's capacity (or its own open-order
//! limit) and is refused from then on, while another firm's orders are all accepted; over real
//! sockets, against `rialto serve`'s server.

use crate::abuse_common;

use abuse_common::*;

/// Orders 0..n of `got`: the first `ok` accepted, the rest refused as over the limit with
/// `text`.
fn check_limit(got: &[fix::client::Msg], prefix: &str, from: u64, ok: usize, text: &str) {
    for (k, m) in got.iter().enumerate() {
        let cl = format!("{prefix}{}", from + k as u64);
        assert_eq!(m.get(11), Some(cl.as_str()), "{}", m.text());
        if k < ok {
            assert_eq!(m.get(150), Some("0"), "{}", m.text());
        } else {
            assert_eq!(m.get(150), Some("8"), "{}", m.text());
            assert_eq!(m.get(39), Some("8"), "{}", m.text());
            assert_eq!(m.get(103), Some("3"), "order exceeds limit: {}", m.text());
            assert_eq!(m.get(58), Some(text), "{}", m.text());
        }
    }
}

#[test]
fn a_firm_at_its_share_of_the_capacity_is_refused_and_another_firm_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    unthrottled(&mut cfg);
    cfg.orders_max = 4096;
    // The default share: a quarter of the capacity, 1024 orders a firm.
    assert_eq!(cfg.firm_capacity_percent, 25);
    let server = start(cfg.clone());
    let mut a = logon(&server, "CLIENT1");
    let mut b = logon(&server, "CLIENT2");
    send_orders(&mut a, "a", "ACME", 0, 1100);
    let got = reports(&mut a, 1100);
    check_limit(&got, "a", 0, 1024, "firm has 1024 open orders, its limit");
    // Another firm is not affected: every one of its orders is accepted.
    send_orders(&mut b, "b", "ACME", 0, 1000);
    let got = reports(&mut b, 1000);
    check_limit(&got, "b", 0, 1000, "");
    // A cancel gives the firm one place back, and only one.
    a.send("F", &[(11, "k0"), (41, "a0"), (55, "ACME"), (54, "1")])
        .unwrap();
    let m = a.expect("8", T).unwrap().0;
    assert_eq!(m.get(150), Some("4"), "{}", m.text());
    send_orders(&mut a, "a", "ACME", 2000, 2002);
    let got = reports(&mut a, 2);
    check_limit(&got, "a", 2000, 1, "firm has 1024 open orders, its limit");
    // The counts are state: a replay of the journal reaches the same hash.
    let hash = server.shutdown().unwrap();
    let v = server::tools::verify(dir.path(), cfg).unwrap();
    assert_eq!(v.full_replay_hash, hash);
    assert!(v.hashes_agree());
}

#[test]
fn a_firms_own_limit_below_its_share_applies() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    unthrottled(&mut cfg);
    cfg.orders_max = 1 << 16;
    let firm = cfg
        .sessions
        .iter()
        .find(|s| s.sender_comp_id == "CLIENT1")
        .unwrap()
        .firm;
    cfg.firms[firm].limits = exchange::FirmLimits {
        max_open_orders: Some(50),
        max_open_orders_per_account: None,
        ..exchange::FirmLimits::default()
    };
    let server = start(cfg);
    let mut a = logon(&server, "CLIENT1");
    let mut b = logon(&server, "CLIENT2");
    send_orders(&mut a, "a", "BOLT", 0, 60);
    let got = reports(&mut a, 60);
    check_limit(&got, "a", 0, 50, "firm has 50 open orders, its limit");
    send_orders(&mut b, "b", "BOLT", 0, 200);
    let got = reports(&mut b, 200);
    check_limit(&got, "b", 0, 200, "");
    server.shutdown().unwrap();
}
