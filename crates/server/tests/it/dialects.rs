//! The three FIX dialects over real sockets on 127.0.0.1: what a FIX 4.2 and a FIXT.1.1/FIX
//! 5.0SP2 session receive where their dictionaries differ from FIX 4.4's. Each case here was
//! found by QuickFIX/J validating our messages against its standard dictionaries
//! (`java/interop`, `--fix-version 4.2|5.0sp2`), which refused them before the fix:
//! - FIX 4.2 has OrdRejReason (103) 0..6 only: a reject for any other reason says 0 (broker
//!   option), never 99 (FIX 4.3+);
//! - FIX 4.2 has no OrderMassCancelRequest: `35=q` gets a BusinessMessageReject with
//!   BusinessRejectReason 3 (unsupported message type), and the session lives on;
//! - a FIXT.1.1 OrderMassCancelReport carries MassActionReportID (1369, required in FIX 5.0SP2);
//!   FIX 4.4 has no such field and does not get it.

use fix::client::{FixClient, Msg};
use fix::FixVersion;
use server::{Config, Server};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const T: Duration = Duration::from_secs(10);

fn start(dir: &Path) -> Server {
    let toml = "[[instruments]]\nsymbol = \"ACME\"\ntick = \"0.01\"\nlot = 1\n\n\
        [[firms]]\nname = \"A\"\naccounts = [1]\n\n\
        [[firms]]\nname = \"B\"\naccounts = [2]\n\n\
        [[firms]]\nname = \"C\"\naccounts = [3]\n\n\
        [[sessions]]\nsender_comp_id = \"OLD\"\nfirm = \"A\"\nfix_version = \"FIX.4.2\"\n\n\
        [[sessions]]\nsender_comp_id = \"NEXT\"\nfirm = \"B\"\nfix_version = \"FIXT.1.1\"\n\n\
        [[sessions]]\nsender_comp_id = \"MID\"\nfirm = \"C\"\n";
    let mut cfg = Config::from_toml(toml).expect("config");
    cfg.listen = "127.0.0.1:0".parse().unwrap();
    cfg.data_dir = dir.to_path_buf();
    cfg.journal_segment_bytes = 1 << 20;
    cfg.orders_max = 1 << 16;
    Server::start(cfg, Arc::new(|_: &str| {})).expect("server starts")
}

fn logon(server: &Server, who: &str, version: FixVersion) -> (FixClient, Msg) {
    let mut c = FixClient::connect(server.addr, who, "RIALTO", 1)
        .unwrap()
        .with_version(version);
    c.logon(30, true).unwrap();
    let (m, _) = c.expect("A", T).unwrap();
    (c, m)
}

fn order(c: &mut FixClient, cl: &str, px: &str) {
    c.send(
        "D",
        &[
            (11, cl),
            (21, "1"),
            (55, "ACME"),
            (54, "1"),
            (38, "5"),
            (40, "2"),
            (44, px),
            (59, "0"),
            (60, "20260101-00:00:00.000"),
        ],
    )
    .unwrap();
}

fn check(m: &Msg, pairs: &[(u32, &str)]) {
    for (tag, v) in pairs {
        assert_eq!(m.get(*tag), Some(*v), "tag {tag} in {}", m.text());
    }
}

#[test]
fn fix42_rejects_use_fix42_reasons_and_mass_cancel_is_an_unsupported_message() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (mut c, _) = logon(&server, "OLD", FixVersion::Fix42);

    // A price off the tick: rejected, OrdRejReason 0 (FIX 4.2 has no 99).
    order(&mut c, "bad-px", "10.005");
    let (r, _) = c.expect("8", T).unwrap();
    assert!(r.raw.starts_with(b"8=FIX.4.2\x01"), "{}", r.text());
    check(
        &r,
        &[(20, "0"), (150, "8"), (39, "8"), (11, "bad-px"), (103, "0")],
    );
    assert!(
        !r.get(58).unwrap_or("").is_empty(),
        "a reason: {}",
        r.text()
    );

    // Accepted, then the same ClOrdID again: OrdRejReason 6 (duplicate order), in FIX 4.2 too.
    order(&mut c, "o1", "10.00");
    check(
        &c.expect("8", T).unwrap().0,
        &[(20, "0"), (150, "0"), (39, "0")],
    );
    order(&mut c, "o1", "10.00");
    check(
        &c.expect("8", T).unwrap().0,
        &[(150, "8"), (39, "8"), (103, "6")],
    );

    // OrderMassCancelRequest does not exist in FIX 4.2.
    let q_seq = c.send("q", &[(11, "mc1"), (530, "7")]).unwrap();
    let (j, skipped) = c.expect("j", T).unwrap();
    assert!(
        skipped.iter().all(|m| m.msg_type() != "8"),
        "nothing was canceled: {skipped:?}"
    );
    check(&j, &[(372, "q"), (380, "3")]);
    assert_eq!(j.u64(45), Some(q_seq), "RefSeqNum: {}", j.text());
    assert!(j.get(58).is_some_and(|t| t.contains('q')), "{}", j.text());

    // The session lives on and the order is still there.
    c.send("H", &[(11, "o1"), (55, "ACME"), (54, "1")]).unwrap();
    check(
        &c.expect("8", T).unwrap().0,
        &[(20, "3"), (11, "o1"), (39, "0"), (151, "5")],
    );
    server.shutdown().unwrap();
}

#[test]
fn fixt_mass_cancel_reports_carry_mass_action_report_id_and_fix44_ones_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (mut next, ack) = logon(&server, "NEXT", FixVersion::Fix50Sp2);
    assert!(ack.raw.starts_with(b"8=FIXT.1.1\x01"), "{}", ack.text());
    check(&ack, &[(1137, "9")]);
    let (mut mid, _) = logon(&server, "MID", FixVersion::Fix44);

    let mut report_ids = Vec::new();
    for round in 0..2 {
        order(&mut next, &format!("n{round}"), "10.00");
        check(&next.expect("8", T).unwrap().0, &[(150, "0")]);
        next.send("q", &[(11, &format!("mc{round}")), (530, "7")])
            .unwrap();
        let (r, skipped) = next.expect("r", T).unwrap();
        assert!(r.raw.starts_with(b"8=FIXT.1.1\x01"), "{}", r.text());
        check(
            &r,
            &[
                (11, &format!("mc{round}")),
                (530, "7"),
                (531, "7"),
                (533, "1"),
            ],
        );
        assert_eq!(skipped.len(), 1, "the canceled order's report");
        check(&skipped[0], &[(150, "4"), (11, &format!("n{round}"))]);
        report_ids.push(r.get(1369).expect("MassActionReportID").to_string());
    }
    assert_ne!(report_ids[0], report_ids[1], "each report has its own id");

    order(&mut mid, "m0", "10.00");
    check(&mid.expect("8", T).unwrap().0, &[(150, "0")]);
    mid.send("q", &[(11, "mc"), (530, "7")]).unwrap();
    let (r, _) = mid.expect("r", T).unwrap();
    assert!(r.raw.starts_with(b"8=FIX.4.4\x01"), "{}", r.text());
    check(&r, &[(531, "7"), (533, "1")]);
    assert_eq!(r.get(1369), None, "FIX 4.4 has no MassActionReportID");
    server.shutdown().unwrap();
}
