//! Abuse of the connection lifecycle, over real sockets on 127.0.0.1: thousands of
//! connections that never log on, past the connection limit, while a logged-on session trades;
//! and a Logon whose FIN arrives in the same segment.

use crate::abuse_common;

use abuse_common::{config, logon, start, T};
use fix::client::FixClient;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
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

/// The server's warnings (`tracing` events at WARN and above, from any thread of this test
/// process) since the first call: each its message, then ` field=value` for every other field.
fn warnings() -> Arc<Mutex<Vec<String>>> {
    static LINES: OnceLock<Arc<Mutex<Vec<String>>>> = OnceLock::new();
    LINES
        .get_or_init(|| {
            let lines = Arc::new(Mutex::new(Vec::new()));
            tracing::subscriber::set_global_default(Warnings(lines.clone()))
                .expect("no other tracing subscriber in this test");
            lines
        })
        .clone()
}

/// A `tracing` subscriber that keeps warnings as text lines.
struct Warnings(Arc<Mutex<Vec<String>>>);

impl tracing::Subscriber for Warnings {
    fn enabled(&self, m: &tracing::Metadata<'_>) -> bool {
        *m.level() <= tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, e: &tracing::Event<'_>) {
        #[derive(Default)]
        struct Line {
            message: String,
            fields: String,
        }
        impl tracing::field::Visit for Line {
            fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                use std::fmt::Write as _;
                let _ = if f.name() == "message" {
                    write!(self.message, "{v:?}")
                } else {
                    write!(self.fields, " {}={v:?}", f.name())
                };
            }
        }
        let mut line = Line::default();
        e.record(&mut line);
        self.0.lock().unwrap().push(line.message + &line.fields);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Whether the server closed non-blocking `s` (end of stream or reset), without waiting.
fn ended(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 64];
    match s.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != ErrorKind::WouldBlock,
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
    // Until the server has accepted or refused every connection (it closes a refused one
    // before counting it).
    let deadline = Instant::now() + T;
    let dealt_with = || {
        server.counters.connections.load(Ordering::Relaxed)
            + server.counters.refused_connections.load(Ordering::Relaxed)
    };
    while dealt_with() < n as u64 + 1 {
        assert!(
            Instant::now() < deadline,
            "the server took {} of {n} connections",
            dealt_with()
        );
        std::thread::park_timeout(Duration::from_millis(10));
    }
    let refused = server.counters.refused_connections.load(Ordering::Relaxed);
    // One connection per configured order-entry session is kept for Logons: at most
    // max_connections less that headroom wait without a Logon; the rest were closed at once
    // (fewer if the logon timeout freed places while they were being opened).
    assert!(refused > 0, "none of {n} refused past a limit of {limit}");
    // A refused connection ends cleanly (end of stream or reset, never a hang): as many as
    // were refused are seen closed, normally before a logon timeout closes any other (which
    // could only add to the count; one left open fails the check after the timeout below).
    let mut closed = vec![false; n];
    for s in &idle {
        s.set_nonblocking(true).unwrap();
    }
    loop {
        for (s, seen) in idle.iter_mut().zip(&mut closed) {
            *seen = *seen || ended(s);
        }
        let seen = closed.iter().filter(|c| **c).count() as u64;
        if seen >= refused {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{seen} connections seen closed, {refused} refused"
        );
        std::thread::park_timeout(Duration::from_millis(10));
    }
    for s in &idle {
        s.set_nonblocking(false).unwrap();
    }
    order(&mut trader, "while-held");
    // After the logon timeout every one of them is closed by the server: each is read until
    // its end, all within a deadline far past the timeout.
    let deadline = Instant::now() + Duration::from_secs(3) + T;
    let still_open = idle
        .iter_mut()
        .filter(|s| {
            let left = deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1));
            !closed_by_server(&mut s.try_clone().unwrap(), left)
        })
        .count();
    assert_eq!(
        still_open, 0,
        "connections left open after the logon timeout"
    );
    let refused = server.counters.refused_connections.load(Ordering::Relaxed);
    println!(
        "abuse: {n} connections without Logon (max_connections {limit}) opened in {:.2} s: {refused} refused at once, \
         the rest closed by the logon timeout (3 s)",
        opened.as_secs_f64(),
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
        // The server answers the Logon, sees the end and ends the session: it closes the
        // connection (read to its end here), and the owner can log on again at once, long
        // before a heartbeat timeout (30 s) could have freed the session.
        let mut answer = Vec::new();
        s.set_read_timeout(Some(T)).unwrap();
        match s.read_to_end(&mut answer) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
            Err(e) => panic!("round {round}: the server did not close the connection: {e}"),
        }
        let mut owner = FixClient::connect(server.addr, "CLIENT4", "RIALTO", 1).unwrap();
        owner.logon(30, true).unwrap();
        let (m, _) = owner
            .expect("A", T)
            .unwrap_or_else(|e| panic!("round {round}: the owner logs on again: {e}"));
        assert_eq!(m.get(56), Some("CLIENT4"));
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
    let warned = warnings();
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
    // Unread until the server has logged it out (it warns as it does), then read in time.
    let deadline = Instant::now() + T;
    while !warned
        .lock()
        .unwrap()
        .iter()
        .any(|w| w.starts_with("slow consumer: logged out"))
    {
        assert!(
            Instant::now() < deadline,
            "never logged out as a slow consumer"
        );
        std::thread::park_timeout(Duration::from_millis(5));
    }
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
