//! Abuse of the connection lifecycle, over real sockets on 127.0.0.1: thousands of
//! connections that never log on, past the connection limit, while a logged-on session trades;
//! and a Logon whose FIN arrives in the same segment.

mod abuse_common;

use abuse_common::{config, logon, start, T};
use fix::client::FixClient;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Raises this process's open-file limit (it holds both ends of every connection) towards
/// `want`; returns the limit it has.
fn raise_fd_limit(want: u64) -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let lim = getrlimit(Resource::Nofile);
    let max = lim.maximum.unwrap_or(u64::MAX);
    let _ = setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(want.min(max)),
            maximum: lim.maximum,
        },
    );
    getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
}

/// Whether the server closed `s`: a read sees end of stream or a reset (waits up to `wait`).
fn closed_by_server(s: &mut TcpStream, wait: Duration) -> bool {
    s.set_read_timeout(Some(wait)).unwrap();
    let mut b = [0u8; 64];
    match s.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}

fn order(c: &mut FixClient, cl: &str) {
    c.send(
        "D",
        &[
            (11, cl),
            (55, "ACME"),
            (54, "1"),
            (38, "1"),
            (40, "2"),
            (44, "1.00"),
            (59, "1"),
            (60, "20260101-00:00:00.000"),
        ],
    )
    .unwrap();
    let (m, _) = c.expect("8", T).unwrap();
    assert_eq!(m.get(11), Some(cl));
    assert_eq!(m.get(150), Some("0"), "{}", m.text());
}

#[test]
fn connections_that_never_log_on_are_closed_and_the_limit_refuses_cleanly() {
    // 2,500 connections past a limit of 1,024; fewer, past a lower limit, where this
    // machine's hard open-file limit is too low for both ends of them all.
    let fds = raise_fd_limit(2 * 2_500 + 1024) as usize;
    let n = 2_500.min(fds.saturating_sub(512) / 2);
    let limit = 1024.min(n / 2);
    assert!(limit >= 128, "open-file limit {fds} too low for this test");
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.max_connections = limit;
    cfg.logon_timeout_secs = 3;
    let server = start(cfg);
    let mut trader = logon(&server, "CLIENT2");
    order(&mut trader, "before");
    let t0 = Instant::now();
    let mut idle = Vec::with_capacity(n);
    for i in 0..n {
        idle.push(TcpStream::connect(server.addr).expect("connect"));
        if i % 250 == 0 {
            // The logged-on session trades throughout.
            order(&mut trader, &format!("during{i}"));
        }
    }
    let opened = t0.elapsed();
    let refused = server.counters.refused_connections.load(Ordering::Relaxed);
    // One connection per configured order-entry session is kept for Logons: at most
    // max_connections less that headroom wait without a Logon; the rest were closed at once
    // (fewer if the logon timeout freed places while they were being opened).
    assert!(refused > 0, "none of {n} refused past a limit of {limit}");
    // A refused connection ends at once, cleanly (end of stream or reset, never a hang).
    let mut ended_at_once = 0;
    for s in idle.iter_mut().rev().take(100) {
        ended_at_once += usize::from(closed_by_server(s, Duration::from_millis(200)));
    }
    assert!(ended_at_once > 0, "the last connections were refused");
    order(&mut trader, "while-held");
    // After the logon timeout every one of them is closed by the server.
    std::thread::sleep(Duration::from_secs(3));
    let t1 = Instant::now();
    let still_open = idle
        .iter_mut()
        .filter(|s| !closed_by_server(&mut s.try_clone().unwrap(), Duration::from_secs(5)))
        .count();
    assert_eq!(
        still_open, 0,
        "connections left open after the logon timeout"
    );
    let refused = server.counters.refused_connections.load(Ordering::Relaxed);
    println!(
        "abuse: {n} connections without Logon (max_connections {limit}) opened in {:.2} s: {refused} refused at once, \
         the rest closed by the logon timeout (3 s; all seen closed {:.2} s after the check began)",
        opened.as_secs_f64(),
        t1.elapsed().as_secs_f64()
    );
    drop(idle);
    order(&mut trader, "after");
    // Room again: a new session logs on.
    let mut late = logon(&server, "CLIENT3");
    order(&mut late, "late");
    server.shutdown().unwrap();
}

/// A FIX 4.4 Logon of `who` (sequence number 1, reset) as raw bytes.
fn logon_bytes(who: &str) -> Vec<u8> {
    let mut enc = fix::Encoder::default();
    enc.begin(b"A");
    enc.header(&fix::Header {
        sender_comp_id: who.as_bytes(),
        target_comp_id: b"RIALTO",
        msg_seq_num: 1,
        sending_time_ns: abuse_common::now_ns(),
        poss_dup: false,
        orig_sending_time: None,
        time_precision: fix::TimePrecision::Millis,
    });
    enc.field(98, b"0");
    enc.field(108, b"30");
    enc.field(141, b"Y");
    enc.finish(fix::FixVersion::Fix44).to_vec()
}

#[test]
fn a_logon_with_its_fin_in_one_segment_frees_the_session_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    for round in 0..3 {
        // The Logon and the FIN leave together: write, then shut the sending side at once.
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_nodelay(false).unwrap();
        s.write_all(&logon_bytes("CLIENT4")).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let gone = Instant::now();
        // The server answers the Logon, sees the end and ends the session: the owner can log
        // on again right away.
        let mut owner = None;
        while gone.elapsed() < Duration::from_secs(10) {
            let mut c = FixClient::connect(server.addr, "CLIENT4", "RIALTO", 1).unwrap();
            c.logon(30, true).unwrap();
            if let Ok((m, _)) = c.expect("A", Duration::from_secs(2)) {
                assert_eq!(m.get(56), Some("CLIENT4"));
                owner = Some(c);
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let freed = gone.elapsed();
        let mut owner = owner.expect("the owner logs on again");
        println!(
            "abuse: logon + FIN in one segment (round {round}): session free again after {:.0} ms",
            freed.as_secs_f64() * 1e3
        );
        assert!(
            freed < Duration::from_secs(3),
            "the session stayed bound to a dead connection for {freed:?}"
        );
        order(&mut owner, &format!("owner{round}"));
        owner.send("5", &[]).unwrap();
        let _ = owner.expect("5", T);
    }
    server.shutdown().unwrap();
}

/// Reads messages until the connection ends; returns them (the server closed it if this
/// returns at all before `T`).
fn read_to_end(c: &mut FixClient) -> Vec<fix::client::Msg> {
    let mut all = Vec::new();
    let deadline = Instant::now() + T;
    while Instant::now() < deadline {
        match c.recv(Duration::from_secs(5)) {
            Ok(Some(m)) => all.push(m),
            Ok(None) => {}
            Err(_) => return all,
        }
    }
    panic!("the connection was not closed");
}

#[test]
fn a_reader_too_slow_is_logged_out_with_the_reason() {
    const ORDERS: u64 = 50_000;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    abuse_common::unthrottled(&mut cfg);
    cfg.outbound_queue_bytes = 64 << 10;
    let server = start(cfg);
    let mut c = logon(&server, "CLIENT5");
    for from in (0..ORDERS).step_by(1000) {
        abuse_common::send_orders(&mut c, "s", "ACME", from, from + 1000);
        abuse_common::reports(&mut c, 1000);
    }
    // A mass cancel of them all, its reports left unread: far more than the kernel's buffers
    // and `outbound_queue_bytes` hold.
    c.send(
        "q",
        &[(11, "all"), (530, "7"), (60, "20260101-00:00:00.000")],
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let got = read_to_end(&mut c);
    let logout = got.iter().position(|m| m.msg_type() == "5");
    let logout = logout.unwrap_or_else(|| panic!("no Logout in {} messages", got.len()));
    let text = got[logout].get(58).unwrap_or_default();
    assert!(text.starts_with("slow consumer: "), "{text}");
    assert_eq!(logout + 1, got.len(), "nothing follows the Logout");
    let cancels = got.iter().filter(|m| m.get(150) == Some("4")).count();
    assert!(
        cancels < ORDERS as usize,
        "logged out before its reports were all sent"
    );
    println!("abuse: slow reader logged out after {cancels} unread cancel reports: {text}");
    // The session is free again, and its orders are canceled.
    let mut again = FixClient::connect(server.addr, "CLIENT5", "RIALTO", 1).unwrap();
    again.logon(30, true).unwrap();
    again.expect("A", T).unwrap();
    server.shutdown().unwrap();
}

#[test]
fn over_the_logout_throttle_the_session_is_logged_out_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    let ix = cfg
        .sessions
        .iter()
        .position(|s| s.sender_comp_id == "CLIENT6")
        .unwrap();
    cfg.sessions[ix].throttle.logout_messages_per_sec = 100;
    let server = start(cfg);
    let mut c = logon(&server, "CLIENT6");
    // A second's worth passes; the next message is over the limit.
    for _ in 0..300 {
        if c.send("0", &[]).is_err() {
            break;
        }
    }
    let got = read_to_end(&mut c);
    let last = got.last().expect("a Logout");
    assert_eq!(last.msg_type(), "5", "{}", last.text());
    assert_eq!(
        last.get(58),
        Some("throttled: over 100 messages a second (logout limit)")
    );
    // Another session was never affected.
    let mut other = logon(&server, "CLIENT7");
    order(&mut other, "unaffected");
    server.shutdown().unwrap();
}
