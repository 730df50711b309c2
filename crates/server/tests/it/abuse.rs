//! Abuse suite: a flood against a quiet session, and a mass cancel of many orders during
//! ResendRequest storms, over real sockets on 127.0.0.1 against an in-process server.
//!
//! What is asserted is functional and deterministic: the quiet session is never shed nor
//! throttled and every order of it is acknowledged, the flooders are throttled and never
//! logged out; the mass cancel's requester gets every cancel and the final report; each
//! resend arrives whole, in order, PossDup, before any new message; the trading session's
//! orders are all acknowledged. The figures (latencies, longest loop iteration, RSS) are
//! printed with an `abuse:` prefix, never asserted: this host is shared and slow.
//!
//! A third test pipelines ResendRequests, each with a new order behind it: a client checking
//! its inbound sequence as a FIX engine does never sees a gap nor a new message below the
//! number it expects.
//!
//! `RIALTO_ABUSE_ORDERS` sets the number of orders the mass cancel cancels (default 200,000;
//! the issue's figure is 1,000,000).

use crate::abuse_common;

use abuse_common::*;
use fix::client::FixClient;
use server::config::Throttle;
use server::Config;
use std::io::Read;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// The tests of this file run one at a time: each measures latencies and this process's RSS,
/// which a server of another test running alongside would distort.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn session_ix(cfg: &Config, who: &str) -> usize {
    cfg.sessions
        .iter()
        .position(|s| s.sender_comp_id == who)
        .unwrap_or_else(|| panic!("no session {who}"))
}

fn set_throttle(cfg: &mut Config, who: &str, t: Throttle) {
    let ix = session_ix(cfg, who);
    cfg.sessions[ix].throttle = t;
}

/// No limit at all (0 per second: none).
const UNLIMITED: Throttle = Throttle {
    orders_per_sec: 0,
    cancels_per_sec: 0,
    messages_per_sec: 0,
    logout_messages_per_sec: 0,
};

/// The `p`th percentile (0..=100) of `v` (sorted here), in µs.
fn pct_us(v: &mut [Duration], p: usize) -> f64 {
    assert!(!v.is_empty());
    v.sort_unstable();
    let i = ((v.len() - 1) * p) / 100;
    v[i].as_nanos() as f64 / 1000.0
}

/// Resident set size of this process (the server runs in it), in KiB.
fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}

/// A value of `tag` in a raw FIX message (every tag but the first is after an SOH).
fn field(raw: &[u8], tag: u32) -> Option<&[u8]> {
    let key = format!("\x01{tag}=");
    let k = key.as_bytes();
    let at = raw.windows(k.len()).position(|w| w == k)? + k.len();
    let len = raw[at..].iter().position(|&b| b == 1)?;
    Some(&raw[at..at + len])
}

fn field_u64(raw: &[u8], tag: u32) -> Option<u64> {
    std::str::from_utf8(field(raw, tag)?).ok()?.parse().ok()
}

fn text(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).replace('\x01', "|")
}

/// Reads framed messages from a socket without decoding them into owned fields (the storms
/// and the mass cancel receive hundreds of thousands; keeping them would swamp the RSS
/// figures).
struct RawReader {
    stream: TcpStream,
    buf: Vec<u8>,
    pos: usize,
}

impl RawReader {
    fn new(c: &FixClient) -> RawReader {
        let stream = c.try_clone_stream().unwrap();
        stream.set_read_timeout(Some(T)).unwrap();
        RawReader {
            stream,
            buf: Vec::with_capacity(1 << 16),
            pos: 0,
        }
    }

    /// The next message; panics on EOF or after `T` without one.
    fn next(&mut self) -> &[u8] {
        loop {
            match fix::frame(&self.buf[self.pos..], 1 << 20) {
                Ok(Some(len)) => {
                    let at = self.pos;
                    self.pos += len;
                    return &self.buf[at..at + len];
                }
                Ok(None) => {}
                Err(e) => panic!("garbled input: {e:?} at {:?}", text(&self.buf[self.pos..])),
            }
            self.buf.drain(..self.pos);
            self.pos = 0;
            let mut tmp = [0u8; 1 << 16];
            match self.stream.read(&mut tmp) {
                Ok(0) => panic!("connection closed by the server"),
                Ok(n) => self.buf.extend_from_slice(&tmp[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => panic!("read: {e}"),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// 1. Flood vs quiet session

const FLOODERS: usize = 5;
const FLOOD_THROTTLE: Throttle = Throttle {
    orders_per_sec: 200,
    cancels_per_sec: 200,
    messages_per_sec: 400,
    logout_messages_per_sec: 50_000,
};
/// Each flooder sends this many orders every `FLOOD_TICK`: 2,000 a second, 10x its limit.
const FLOOD_BURST: u64 = 20;
const FLOOD_TICK: Duration = Duration::from_millis(10);
const QUIET_ORDERS: usize = 300;
const QUIET_EVERY: Duration = Duration::from_millis(10);

#[derive(Default, Debug)]
struct FloodCounts {
    sent: u64,
    accepted: u64,
    throttled: u64,
    busy: u64,
}

/// Answers of a flooder: counts them; a Logout or anything but an ExecutionReport fails.
fn flood_answer(who: &str, m: &fix::client::Msg, n: &mut FloodCounts) {
    assert_eq!(m.msg_type(), "8", "{who} got {}", m.text());
    match (m.get(150), m.get(58)) {
        (Some("0"), _) => n.accepted += 1,
        (Some("8"), Some(t)) if t.starts_with("throttled: over ") => n.throttled += 1,
        (Some("8"), Some("exchange busy")) => n.busy += 1,
        _ => panic!("{who}: unexpected answer {}", m.text()),
    }
}

/// Floods as `who` until `stop`; counts itself in `flooding` at its first "throttled".
fn flooder(
    server_addr: std::net::SocketAddr,
    who: String,
    stop: Arc<AtomicBool>,
    flooding: Arc<AtomicU64>,
) -> FloodCounts {
    let mut c = FixClient::connect(server_addr, &who, "RIALTO", 1).unwrap();
    c.logon(30, true).unwrap();
    c.expect("A", T).unwrap();
    let mut n = FloodCounts::default();
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        send_orders(&mut c, &who, "BOLT", n.sent, n.sent + FLOOD_BURST);
        n.sent += FLOOD_BURST;
        next += FLOOD_TICK;
        // Read the answers until the next burst is due: never a slow consumer.
        loop {
            let left = next.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match c.recv(left).unwrap() {
                Some(m) if m.msg_type() == "0" => {}
                Some(m) => {
                    let was = n.throttled;
                    flood_answer(&who, &m, &mut n);
                    if was == 0 && n.throttled == 1 {
                        flooding.fetch_add(1, Ordering::SeqCst);
                    }
                }
                None => break,
            }
        }
    }
    // Every order is answered, and the session is still logged on.
    while n.accepted + n.throttled + n.busy < n.sent {
        let m = c.next_app(T).unwrap();
        flood_answer(&who, &m, &mut n);
    }
    // Still logged on: a TestRequest is answered (`next_app` skips Heartbeats: read raw).
    c.send("1", &[(112, "still-there")]).unwrap();
    let deadline = Instant::now() + T;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let m = c
            .recv(left)
            .unwrap()
            .expect("the Heartbeat answering the TestRequest");
        assert!(matches!(m.msg_type(), "0" | "1"), "{who}: {}", m.text());
        if m.get(112) == Some("still-there") {
            break;
        }
    }
    n
}

/// `QUIET_ORDERS` orders at 100 a second, each waited for: the round trips.
fn quiet_run(c: &mut FixClient, prefix: &str) -> Vec<Duration> {
    let mut lat = Vec::with_capacity(QUIET_ORDERS);
    let t0 = Instant::now();
    for i in 0..QUIET_ORDERS {
        let due = t0 + QUIET_EVERY * i as u32;
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            thread::sleep(d);
        }
        let cl = format!("{prefix}{i}");
        let sent = Instant::now();
        c.send(
            "D",
            &[
                (11, &cl),
                (55, "ACME"),
                (54, "1"),
                (38, "1"),
                (40, "2"),
                (44, "1.00"),
                (59, "1"),
            ],
        )
        .unwrap();
        let (m, skipped) = c.expect("8", T).unwrap();
        lat.push(sent.elapsed());
        assert!(
            skipped.is_empty(),
            "{prefix}: {:?}",
            skipped.iter().map(|m| m.text()).collect::<Vec<_>>()
        );
        assert_eq!(m.get(11), Some(cl.as_str()), "{}", m.text());
        assert_eq!(
            m.get(150),
            Some("0"),
            "the quiet session is never shed nor throttled: {}",
            m.text()
        );
    }
    lat
}

#[test]
fn five_flooders_at_10x_their_limits_never_shed_a_quiet_session() {
    let _serial = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    let flooders: Vec<String> = (1..=FLOODERS).map(|i| format!("BOT{i}")).collect();
    for who in &flooders {
        set_throttle(&mut cfg, who, FLOOD_THROTTLE);
    }
    let server = start(cfg);
    let counters = server.counters.clone();

    // The quiet session alone.
    let mut q1 = logon(&server, "CLIENT1");
    let mut alone = quiet_run(&mut q1, "q");
    q1.shutdown();

    // Five flooders, then a quiet session that connects last.
    let stop = Arc::new(AtomicBool::new(false));
    let flooding = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = flooders
        .iter()
        .map(|who| {
            let (addr, who, stop) = (server.addr, who.clone(), stop.clone());
            let flooding = flooding.clone();
            thread::spawn(move || flooder(addr, who, stop, flooding))
        })
        .collect();
    // Until every flooder is over its limit.
    let deadline = Instant::now() + T;
    while flooding.load(Ordering::SeqCst) < FLOODERS as u64 {
        assert!(Instant::now() < deadline, "the flooders are not throttled");
        thread::park_timeout(Duration::from_millis(10));
    }
    let throttled_before = counters.throttled.load(Ordering::Relaxed);
    let busy_before = counters.busy_rejects.load(Ordering::Relaxed);
    let mut q2 = logon(&server, "CLIENT2");
    let mut flooded = quiet_run(&mut q2, "f");
    let throttled_during = counters.throttled.load(Ordering::Relaxed) - throttled_before;
    let busy_during = counters.busy_rejects.load(Ordering::Relaxed) - busy_before;
    stop.store(true, Ordering::Relaxed);
    let counts: Vec<FloodCounts> = threads.into_iter().map(|t| t.join().unwrap()).collect();

    let (a50, a99) = (pct_us(&mut alone, 50), pct_us(&mut alone, 99));
    let (f50, f99) = (pct_us(&mut flooded, 50), pct_us(&mut flooded, 99));
    println!(
        "abuse: quiet session, {QUIET_ORDERS} orders at 100/s: alone P50 {a50:.0} us P99 \
         {a99:.0} us; under the flood P50 {f50:.0} us P99 {f99:.0} us; P50 ratio {:.2}x \
         (target <= 1.2x), P99 ratio {:.2}x",
        f50 / a50,
        f99 / a99
    );
    println!(
        "abuse: during the quiet run the server answered {throttled_during} \"throttled\" and \
         {busy_during} \"exchange busy\" (all to the flooders)"
    );
    for (who, n) in flooders.iter().zip(&counts) {
        println!(
            "abuse: flooder {who}: sent {} accepted {} throttled {} busy {}",
            n.sent, n.accepted, n.throttled, n.busy
        );
        assert!(n.throttled > 0, "{who} was throttled: {n:?}");
        assert!(n.accepted > 0, "{who} got its share: {n:?}");
    }
    server.shutdown().unwrap();
}

// ---------------------------------------------------------------------------------------
// 2. Mass cancel of many orders + ResendRequest storms

const STORMERS: usize = 16;
/// Orders each storming session rests first (the messages its resends replay).
const STORM_ORDERS: u64 = 2_000;
/// ResendRequests (1..0) each storming session sends, each with a new order behind it.
const STORM_ROUNDS: usize = 48;
const BURST: u64 = 2_000;
/// The trading session sends an order this often during the storm (200 a second).
const TRADE_EVERY: Duration = Duration::from_millis(5);

fn orders_under_test() -> u64 {
    match std::env::var("RIALTO_ABUSE_ORDERS") {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("RIALTO_ABUSE_ORDERS={v:?} is not a number")),
        Err(_) => 200_000,
    }
}

/// One storming session: `STORM_ROUNDS` times a ResendRequest 1..0 and a new order at once;
/// each time the whole range comes back in order (PossDup, or GapFill over what is not
/// stored), and only then the new order's acknowledgement with the next sequence number.
/// Returns the messages resent.
fn storm(mut c: FixClient, mut last: u64, go: Arc<AtomicBool>) -> u64 {
    let who = c.sender.clone();
    let mut r = RawReader::new(&c);
    while !go.load(Ordering::Relaxed) {
        thread::yield_now();
    }
    let mut resent = 0;
    for round in 0..STORM_ROUNDS {
        c.send("2", &[(7, "1"), (16, "0")]).unwrap();
        let cl = format!("{who}-n{round}");
        c.send(
            "D",
            &[
                (11, &cl),
                (55, "CRNK"),
                (54, "1"),
                (38, "1"),
                (40, "2"),
                (44, "1.00"),
                (59, "1"),
            ],
        )
        .unwrap();
        let mut next = 1;
        while next <= last {
            let m = r.next();
            let seq = field_u64(m, 34).unwrap();
            assert_eq!(
                seq,
                next,
                "{who} round {round}: resent in order: {}",
                text(m)
            );
            assert_eq!(field(m, 43), Some(&b"Y"[..]), "{who}: PossDup {}", text(m));
            if field(m, 35) == Some(b"4") {
                assert_eq!(field(m, 123), Some(&b"Y"[..]), "{who}: GapFill {}", text(m));
                next = field_u64(m, 36).unwrap();
                assert!(next > seq && next <= last + 1, "{who}: {}", text(m));
            } else {
                resent += 1;
                next += 1;
            }
        }
        let m = r.next();
        assert_eq!(
            field(m, 35),
            Some(&b"8"[..]),
            "{who} round {round}: after the resend, the new order's answer: {}",
            text(m)
        );
        assert_eq!(field_u64(m, 34), Some(last + 1), "{who}: {}", text(m));
        assert_eq!(field(m, 43), None, "{who}: a new message: {}", text(m));
        assert_eq!(field(m, 11), Some(cl.as_bytes()), "{who}: {}", text(m));
        assert_eq!(field(m, 150), Some(&b"0"[..]), "{who}: {}", text(m));
        last += 1;
    }
    resent
}

#[test]
fn a_mass_cancel_and_resend_storms_leave_a_trading_session_served() {
    let _serial = one_at_a_time();
    let orders = orders_under_test();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.orders_max = (2 * orders as usize).next_power_of_two().max(1 << 20);
    let need = orders + BURST + STORMERS as u64 * (STORM_ORDERS + STORM_ROUNDS as u64);
    cfg.firm_capacity_percent = ((need * 100 / cfg.orders_max as u64) as u32 + 1).clamp(25, 100);
    set_throttle(&mut cfg, "CLIENT1", UNLIMITED);
    let server = start(cfg);
    let counters = server.counters.clone();

    // The requester rests `orders` orders.
    let mut a = logon(&server, "CLIENT1");
    let t0 = Instant::now();
    for from in (0..orders).step_by(BURST as usize) {
        let to = (from + BURST).min(orders);
        let sym = if (from / BURST).is_multiple_of(2) {
            "ACME"
        } else {
            "BOLT"
        };
        send_orders(&mut a, "a", sym, from, to);
        for m in reports(&mut a, (to - from) as usize) {
            assert_eq!(m.get(150), Some("0"), "{}", m.text());
        }
    }
    let entered = t0.elapsed();

    // Sixteen sessions that each received thousands of messages.
    let go = Arc::new(AtomicBool::new(false));
    let stormers: Vec<_> = (1..=STORMERS)
        .map(|i| {
            let who = format!("BOT{i}");
            let mut c = logon(&server, &who);
            send_orders(&mut c, "s", "CRNK", 0, STORM_ORDERS);
            let got = reports(&mut c, STORM_ORDERS as usize);
            assert!(got.iter().all(|m| m.get(150) == Some("0")));
            let last = got.last().unwrap().seq();
            let go = go.clone();
            thread::spawn(move || storm(c, last, go))
        })
        .collect();
    let mut trader = logon(&server, "CLIENT2");
    thread::sleep(Duration::from_millis(500));
    let rss_before = rss_kib();

    // Peak RSS, sampled until the end.
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(rss_before));
    let sampler = {
        let (done, peak) = (done.clone(), peak.clone());
        thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss_kib(), Ordering::Relaxed);
                thread::sleep(Duration::from_millis(10));
            }
        })
    };
    counters.max_iteration_ns.store(0, Ordering::Relaxed);
    counters.slow_iterations.store(0, Ordering::Relaxed);

    // The requester's reports, read as they come.
    let mut ra = RawReader::new(&a);
    let t1 = Instant::now();
    let requester = thread::spawn(move || {
        let mut canceled = 0u64;
        loop {
            let m = ra.next();
            match field(m, 35) {
                Some(b"8") => {
                    assert_eq!(field(m, 150), Some(&b"4"[..]), "{}", text(m));
                    let want = format!("a{canceled}");
                    assert_eq!(field(m, 11), Some(want.as_bytes()), "{}", text(m));
                    canceled += 1;
                }
                Some(b"r") => {
                    assert_eq!(field(m, 11), Some(&b"mc"[..]), "{}", text(m));
                    assert_eq!(field(m, 531), Some(&b"7"[..]), "{}", text(m));
                    assert_eq!(field_u64(m, 533), Some(canceled), "{}", text(m));
                    return (canceled, t1.elapsed());
                }
                Some(b"0") => {}
                _ => panic!("requester: unexpected {}", text(m)),
            }
        }
    });
    a.send("q", &[(11, "mc"), (530, "7")]).unwrap();
    go.store(true, Ordering::Relaxed);

    // The trading session, until the storms and the mass cancel are over.
    let mut lat = Vec::new();
    let trading_from = Instant::now();
    let mut i = 0u32;
    while !(requester.is_finished() && stormers.iter().all(|s| s.is_finished())) {
        let due = trading_from + TRADE_EVERY * i;
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            thread::sleep(d);
        }
        let cl = format!("t{i}");
        let sent = Instant::now();
        trade_order(&mut trader, &cl);
        let (m, skipped) = trader.expect("8", T).unwrap();
        lat.push(sent.elapsed());
        assert!(skipped.is_empty(), "{:?}", skipped[0].text());
        assert_eq!(m.get(11), Some(cl.as_str()), "{}", m.text());
        assert_eq!(m.get(150), Some("0"), "{}", m.text());
        i += 1;
    }
    let (canceled, mass_cancel_took) = requester.join().unwrap();
    let storm_took = t1.elapsed();
    let resent: u64 = stormers.into_iter().map(|s| s.join().unwrap()).sum();
    assert_eq!(canceled, orders, "one cancel report per order");
    let max_iter = counters.max_iteration_ns.load(Ordering::Relaxed);
    let slow = counters.slow_iterations.load(Ordering::Relaxed);
    let rss_peak = peak.load(Ordering::Relaxed);
    // The buffers are given back once drained.
    thread::sleep(Duration::from_secs(3));
    let rss_after = rss_kib();
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let n = lat.len();
    let (p50, p99) = (pct_us(&mut lat, 50), pct_us(&mut lat, 99));
    println!(
        "abuse: {orders} orders rested in {entered:.2?}; mass cancel of {canceled} with \
         {STORMERS} sessions x {STORM_ROUNDS} ResendRequests 1..0 ({resent} messages resent): \
         the mass cancel's report after {mass_cancel_took:.2?}, all done after {storm_took:.2?}"
    );
    println!(
        "abuse: longest loop iteration during it {:.2} ms (target <= 10 ms), iterations over \
         1 ms: {slow}",
        max_iter as f64 / 1e6
    );
    println!(
        "abuse: trading session meanwhile: {n} orders, all acknowledged, P50 {p50:.0} us P99 \
         {p99:.0} us (target P99 < 10 ms)"
    );
    println!(
        "abuse: RSS before {} MiB, peak {} MiB, 3 s after {} MiB ({:+.1}% of before; target \
         within 10%)",
        rss_before / 1024,
        rss_peak / 1024,
        rss_after / 1024,
        (rss_after as f64 - rss_before as f64) * 100.0 / rss_before as f64
    );
    server.shutdown().unwrap();
}

/// The trading session's order: a sell of 1 CRNK at 99.00 (no storming session's buy at
/// 1.00 crosses it).
fn trade_order(c: &mut FixClient, cl: &str) {
    c.send(
        "D",
        &[
            (11, cl),
            (55, "CRNK"),
            (54, "2"),
            (38, "1"),
            (40, "2"),
            (44, "99.00"),
            (59, "1"),
        ],
    )
    .unwrap();
}

// ---------------------------------------------------------------------------------------
// 3. Pipelined ResendRequests, each with a new order behind it

/// What a FIX engine checks of its inbound sequence: a message at the expected number is
/// taken (a GapFill moves it on), a PossDup below it is a duplicate and ignored; a gap or a
/// new message below it is an error. Returns the new expected number.
fn take(who: &str, exp: u64, m: &[u8]) -> u64 {
    let seq = field_u64(m, 34).unwrap();
    let dup = field(m, 43) == Some(b"Y");
    assert!(seq <= exp, "{who}: a gap, {exp} expected: {}", text(m));
    if seq < exp {
        assert!(dup, "{who}: MsgSeqNum too low, {exp} expected: {}", text(m));
        return exp;
    }
    if field(m, 35) == Some(b"4") {
        return field_u64(m, 36).unwrap();
    }
    exp + 1
}

#[test]
fn pipelined_resend_requests_with_new_orders_keep_the_sequence() {
    let _serial = one_at_a_time();
    const SESSIONS: usize = 4;
    const REQUESTS: usize = 48;
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let threads: Vec<_> = (0..SESSIONS)
        .map(|k| {
            let who = format!("BOT{}", 20 + k);
            let mut c = logon(&server, &who);
            send_orders(&mut c, "s", "CRNK", 0, 1_000);
            let got = reports(&mut c, 1_000);
            let last = got.last().unwrap().seq();
            thread::spawn(move || {
                let mut r = RawReader::new(&c);
                // All at once: each ResendRequest 1..0 followed by a new order.
                let mut bytes = Vec::new();
                for i in 0..REQUESTS as u64 {
                    let seq = c.out_seq;
                    c.out_seq += 2;
                    bytes.extend(message(&who, seq, &[("35", "2"), ("7", "1"), ("16", "0")]));
                    let cl = format!("n{i}");
                    bytes.extend(message(
                        &who,
                        seq + 1,
                        &[
                            ("35", "D"),
                            ("11", &cl),
                            ("55", "CRNK"),
                            ("54", "1"),
                            ("38", "1"),
                            ("40", "2"),
                            ("44", "1.00"),
                            ("59", "1"),
                            ("60", "20260101-00:00:00.000"),
                        ],
                    ));
                }
                c.send_raw(&bytes).unwrap();
                c.send("1", &[(112, "end")]).unwrap();
                // Every new order acknowledged once at its place in the sequence, then the
                // Heartbeat answering the TestRequest, at the next number.
                let mut exp = last + 1;
                let mut acked = 0;
                let mut resent = 0u64;
                loop {
                    let m = r.next();
                    let before = exp;
                    exp = take(&who, exp, m);
                    if field(m, 43) == Some(b"Y") {
                        resent += 1;
                    }
                    if exp == before + 1 && field(m, 35) == Some(b"8") && before > last {
                        let want = format!("n{acked}");
                        assert_eq!(field(m, 11), Some(want.as_bytes()), "{who}: {}", text(m));
                        assert_eq!(field(m, 150), Some(&b"0"[..]), "{who}: {}", text(m));
                        acked += 1;
                    }
                    if field(m, 35) == Some(b"0") && field(m, 112) == Some(b"end") {
                        assert_eq!(field_u64(m, 34), Some(before), "{who}: {}", text(m));
                        break;
                    }
                }
                assert_eq!(acked, REQUESTS, "{who}: every new order acknowledged");
                assert_eq!(exp, last + REQUESTS as u64 + 2, "{who}");
                resent
            })
        })
        .collect();
    let resent: Vec<u64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    println!(
        "abuse: {SESSIONS} sessions x {REQUESTS} pipelined ResendRequests 1..0, each with a new \
         order: messages resent per session {resent:?}"
    );
    server.shutdown().unwrap();
}

/// A FIX 4.4 message to RIALTO: `body[0]` is ("35", MsgType), the rest body fields.
fn message(sender: &str, seq: u64, body: &[(&str, &str)]) -> Vec<u8> {
    let mut enc = fix::Encoder::default();
    enc.begin(body[0].1.as_bytes());
    enc.header(&fix::Header {
        sender_comp_id: sender.as_bytes(),
        target_comp_id: b"RIALTO",
        msg_seq_num: seq,
        sending_time_ns: now_ns(),
        poss_dup: false,
        orig_sending_time: None,
        time_precision: fix::TimePrecision::Millis,
    });
    for (t, v) in &body[1..] {
        enc.field(t.parse().unwrap(), v.as_bytes());
    }
    enc.finish(fix::FixVersion::Fix44).to_vec()
}
