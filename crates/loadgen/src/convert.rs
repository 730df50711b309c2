//! `rialto bench echo --scenario convert`: FIXEdge's two-session conversion scenario. A FIX
//! 4.2 order-entry session sends NewOrderSingle at a fixed rate (default 2,000/s, 200,000 measured);
//! a FIX 4.4 drop-copy session of the same firm reads the exchange's copies of their
//! ExecutionReports. Each order is timed from its intended send time to the arrival of its
//! ExecType 0 copy on the drop-copy session, so the figure holds the order path, the report,
//! its copy in the other version and the other connection's delivery.
//!
//! Role: the same orders as the single-session echo (`EchoGenerator`: IOC limits far from the
//! mid, which never trade nor rest), on three threads because the two sessions are read
//! independently: the caller sends (sleeps, then spins the last `spin` before each due time),
//! one thread reads the order session's reports, one the copies. Reads carry the kernel's
//! receive time (`rx`); send times are CLOCK_REALTIME to match them.
//!
//! Never: measures from the actual send only (latency is from the intended time; the time
//! from the write is reported beside it); counts a copy twice (a second one is an error); hides
//! loss (orders whose copy did not arrive by the end of the drain are errors, with a note).

use crate::bench::on_placed_thread;
use crate::mix::{Action, EchoGenerator, Market, Strategy};
use crate::orders::BotOrders;
use crate::stats::{new_histogram, Counters, RunResult, TailSplit};
use fix::client::FixClient;
use fix::{Decimal, Encoder, FixVersion, Header, TimePrecision};
use hdrhistogram::Histogram;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// `rialto bench echo --scenario convert` settings.
#[derive(Clone, Debug)]
pub struct ConvertBench {
    pub addr: SocketAddr,
    pub target_comp_id: String,
    /// The FIX 4.2 session that sends the orders.
    pub order_sender: String,
    /// The FIX 4.4 drop-copy session of the same firm that reads the copies.
    pub copy_sender: String,
    pub rate: u64,
    /// Measured round trips.
    pub count: u64,
    /// Unmeasured orders before them, as a duration at `rate`.
    pub warmup: Duration,
    pub seed: u64,
    pub stop: Arc<AtomicBool>,
    /// Spin on the clock for this long before each due time (after sleeping until then).
    pub spin: Duration,
    /// How long to wait for the last copies after the last order.
    pub drain_timeout: Duration,
    pub cpu: Option<usize>,
    pub nice: Option<i32>,
}

impl ConvertBench {
    pub fn new(addr: SocketAddr) -> ConvertBench {
        ConvertBench {
            addr,
            target_comp_id: "RIALTO".into(),
            order_sender: "CLIENT1_42".into(),
            copy_sender: "DROPCOPY1".into(),
            rate: 2_000,
            count: 200_000,
            warmup: Duration::ZERO,
            seed: 1,
            stop: Arc::new(AtomicBool::new(false)),
            spin: Duration::from_micros(50),
            drain_timeout: Duration::from_secs(5),
            cpu: None,
            nice: None,
        }
    }
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Logs on as `sender` in `version` (ResetSeqNumFlag=Y); a refusal is an error with its text.
fn logon(b: &ConvertBench, sender: &str, version: FixVersion) -> Result<FixClient, String> {
    let fail = |e: io::Error| format!("{sender}: {e}");
    let mut c = FixClient::connect(b.addr, sender, &b.target_comp_id, 1)
        .map_err(fail)?
        .with_version(version);
    c.logon(30, true).map_err(fail)?;
    loop {
        let m = c
            .next_app(Duration::from_secs(5))
            .map_err(|e| format!("{sender}: no Logon answer: {e}"))?;
        match m.msg_type() {
            "A" => return Ok(c),
            "5" => {
                return Err(format!(
                    "{sender} refused: {} (the exchange needs a FIX 4.2 session and a drop-copy session of its firm: see `rialto serve`'s defaults)",
                    m.get(58).unwrap_or("")
                ))
            }
            _ => {}
        }
    }
}

/// Reads one session's messages with their receive times; `each(frame, stamp_ns)`, until
/// `until()` is true (looked at between reads, at least every 50 ms).
fn read_session(
    stream: TcpStream,
    mut until: impl FnMut() -> bool,
    mut each: impl FnMut(&[u8], u64),
) -> Result<u64, String> {
    let fd = stream.as_raw_fd();
    crate::rx::enable(fd).map_err(|e| format!("SO_TIMESTAMPNS: {e}"))?;
    stream
        .set_nonblocking(true)
        .map_err(|e| format!("non-blocking: {e}"))?;
    let mut stream = mio::net::TcpStream::from_std(stream);
    let mut poll = mio::Poll::new().map_err(|e| format!("poll: {e}"))?;
    poll.registry()
        .register(&mut stream, mio::Token(0), mio::Interest::READABLE)
        .map_err(|e| format!("poll: {e}"))?;
    let mut events = mio::Events::with_capacity(4);
    let mut buf = vec![0u8; 256 << 10];
    let (mut have, mut unstamped) = (0usize, 0u64);
    let max = fix::Limits::default().msg_len_max;
    while !until() {
        if have == buf.len() {
            return Err("a message larger than the read buffer".into());
        }
        let (n, stamp) = match crate::rx::recv(fd, &mut buf[have..]) {
            Ok((0, _)) => return Err("the exchange closed the connection".into()),
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                // Edge-triggered: wait only once the socket is drained.
                match poll.poll(&mut events, Some(Duration::from_millis(50))) {
                    Err(e) if e.kind() != io::ErrorKind::Interrupted => {
                        return Err(format!("poll: {e}"))
                    }
                    _ => continue,
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("read: {e}")),
        };
        let at = stamp.unwrap_or_else(|| {
            unstamped += 1;
            now_ns()
        });
        have += n;
        let mut pos = 0;
        while let Ok(Some(len)) = fix::frame(&buf[pos..have], max) {
            each(&buf[pos..pos + len], at);
            pos += len;
        }
        if fix::frame(&buf[pos..have], max).is_err() {
            return Err("an undecodable frame".into());
        }
        buf.copy_within(pos..have, 0);
        have -= pos;
    }
    Ok(unstamped)
}

/// The number of the order a ClOrdID of this run names (`<tag>-<n>`).
fn order_index(cl: &[u8], tag: &[u8]) -> Option<usize> {
    let rest = cl.strip_prefix(tag)?.strip_prefix(b"-")?;
    std::str::from_utf8(rest).ok()?.parse().ok()
}

/// What the copy reader measured.
struct Copies {
    latency: Histogram<u64>,
    after_send: Histogram<u64>,
    send_lag: Histogram<u64>,
    tail: TailSplit,
    received: u64,
    duplicates: u64,
    unstamped: u64,
    next_out: u64,
}

/// Runs the scenario; returns the measured result (placed like `bench::run_fix`).
pub fn run_convert(
    b: &ConvertBench,
    progress: &mut (dyn Write + Send),
) -> Result<RunResult, String> {
    if b.rate == 0 || b.count == 0 {
        return Err("--rate and --count must be at least 1".into());
    }
    on_placed_thread(b.cpu, b.nice, || run_here(b, progress))
}

fn run_here(b: &ConvertBench, progress: &mut dyn Write) -> Result<RunResult, String> {
    let started = Instant::now();
    let cpu0 = crate::clock::process_cpu_ns();
    let steal0 = crate::noise::steal_ms();
    let mut order = logon(b, &b.order_sender, FixVersion::Fix42)?;
    let mut copy = logon(b, &b.copy_sender, FixVersion::Fix44)?;
    let io = |e: io::Error| e.to_string();
    let mut order_w = order.try_clone_stream().map_err(io)?;
    let order_r = order.try_clone_stream().map_err(io)?;
    let copy_r = copy.try_clone_stream().map_err(io)?;
    let copy_w = copy.try_clone_stream().map_err(io)?;

    let warm = (b.warmup.as_secs_f64() * b.rate as f64) as u64;
    let total = (warm + b.count) as usize;
    let intended: Vec<AtomicU64> = (0..total).map(|_| AtomicU64::new(0)).collect();
    let written: Vec<AtomicU64> = (0..total).map(|_| AtomicU64::new(0)).collect();
    let sent = AtomicU64::new(0);
    let sending = AtomicBool::new(true);
    let done = AtomicBool::new(false);
    let tag = format!("{:x}", now_ns() / 1_000_000 % (1 << 40));
    let interval_ns = 1_000_000_000 / b.rate;

    let (copies, order_counts, send_result) = std::thread::scope(|s| {
        // The order session's own reports: acknowledgements, IOC cancels, refusals. It reads
        // on after the copies are all in until each order's first answer is (they come on
        // another connection, in no set order against the copies), or the drain time ends.
        let order_reader = s.spawn(|| {
            let mut c = Counters::default();
            let mut notes = Vec::new();
            let answered = std::cell::Cell::new(0u64);
            let mut deadline: Option<Instant> = None;
            let r = read_session(
                order_r,
                || {
                    if !done.load(Ordering::Acquire) {
                        return false;
                    }
                    if answered.get() >= sent.load(Ordering::Relaxed) {
                        return true;
                    }
                    let d = *deadline.get_or_insert_with(|| Instant::now() + b.drain_timeout);
                    Instant::now() >= d
                },
                |frame, _| match fix::scan::scan(frame) {
                    Ok(m) => match m.report.msg_type {
                        b'8' => {
                            match m.report.exec_type {
                                b'0' => c.acks += 1,
                                b'4' => c.exchange_cancels += 1,
                                _ if m.report.is_busy() => c.shed += 1,
                                _ => c.rejects += 1,
                            }
                            // Each order's first answer: acknowledged, shed or refused.
                            answered.set(c.acks + c.shed + c.rejects);
                        }
                        b'0' | b'1' => {}
                        t => {
                            c.errors += 1;
                            notes.push(format!(
                                "{}: MsgType {} ({})",
                                b.order_sender,
                                t as char,
                                String::from_utf8_lossy(m.report.text.unwrap_or_default())
                            ));
                        }
                    },
                    Err(e) => {
                        c.errors += 1;
                        notes.push(format!("{}: {e:?}", b.order_sender));
                    }
                },
            );
            if let Err(e) = r {
                c.errors += 1;
                notes.push(format!("{}: {e}", b.order_sender));
            }
            (c, notes)
        });
        // The copies: each order's ExecType 0 copy stops its clock.
        let copy_reader = s.spawn(|| {
            let mut got = vec![false; total];
            let mut k = Copies {
                latency: new_histogram(),
                after_send: new_histogram(),
                send_lag: new_histogram(),
                tail: TailSplit::default(),
                received: 0,
                duplicates: 0,
                unstamped: 0,
                next_out: copy.out_seq,
            };
            let mut notes = Vec::new();
            let mut deadline: Option<Instant> = None;
            let mut w = &copy_w;
            let mut enc = Encoder::default();
            let received = std::cell::Cell::new(0u64);
            let r = read_session(
                copy_r,
                || {
                    if b.stop.load(Ordering::Relaxed) && !sending.load(Ordering::Acquire) {
                        return true;
                    }
                    if received.get() as usize == total {
                        return true;
                    }
                    if sending.load(Ordering::Acquire) {
                        return false;
                    }
                    let d = *deadline.get_or_insert_with(|| Instant::now() + b.drain_timeout);
                    Instant::now() >= d
                },
                |frame, at| {
                    let Ok(m) = fix::scan::scan(frame) else {
                        notes.push(format!("{}: an unreadable message", b.copy_sender));
                        return;
                    };
                    match m.msg_type {
                        b"8" if m.report.exec_type == b'0' => {
                            let Some(i) = order_index(m.report.cl_ord_id, tag.as_bytes()) else {
                                return;
                            };
                            if i >= total || got[i] {
                                k.duplicates += 1;
                                return;
                            }
                            got[i] = true;
                            received.set(received.get() + 1);
                            if (i as u64) < warm {
                                return;
                            }
                            let due = intended[i].load(Ordering::Acquire);
                            let wrote = written[i].load(Ordering::Acquire);
                            let lat = at.saturating_sub(due);
                            let after = at.saturating_sub(wrote);
                            let _ = k.latency.record(lat.max(1));
                            let _ = k.after_send.record(after.max(1));
                            let _ = k.send_lag.record(wrote.saturating_sub(due).max(1));
                            k.tail.record(lat, Some(after));
                        }
                        b"1" => {
                            // A TestRequest: this session sends nothing else.
                            enc.begin(b"0");
                            enc.header(&Header {
                                sender_comp_id: b.copy_sender.as_bytes(),
                                target_comp_id: b.target_comp_id.as_bytes(),
                                msg_seq_num: k.next_out,
                                sending_time_ns: now_ns(),
                                poss_dup: false,
                                orig_sending_time: None,
                                time_precision: TimePrecision::Millis,
                            });
                            enc.field(112, m.test_req_id);
                            k.next_out += 1;
                            let _ = w.write_all(enc.finish(FixVersion::Fix44));
                        }
                        b"8" | b"0" => {}
                        t => notes.push(format!(
                            "{}: MsgType {}",
                            b.copy_sender,
                            String::from_utf8_lossy(t)
                        )),
                    }
                },
            );
            match r {
                Ok(n) => k.unstamped = n,
                Err(e) => notes.push(format!("{}: {e}", b.copy_sender)),
            }
            k.received = received.get();
            (k, notes)
        });

        // The sender: EchoGenerator's orders as FIX 4.2, each at its due time.
        let mut send = || -> Result<(u64, u64, u64), String> {
            let market = Market::default_contract();
            let mut gen = EchoGenerator::new(b.seed);
            let mut window = BotOrders::new(1);
            let mut enc = Encoder::default();
            let mut seq = order.out_seq;
            let mut cl = Vec::with_capacity(32);
            let start = now_ns() + 10_000_000;
            let (mut last_second, mut last) = (start, start);
            for i in 0..total {
                if b.stop.load(Ordering::Relaxed) {
                    break;
                }
                let due = start + i as u64 * interval_ns;
                let now = now_ns();
                let spin = b.spin.as_nanos() as u64;
                if due > now + spin {
                    std::thread::sleep(Duration::from_nanos(due - now - spin));
                }
                while now_ns() < due {
                    std::hint::spin_loop();
                }
                let Action::New {
                    symbol,
                    side,
                    price_ticks,
                    qty,
                    ..
                } = gen.next(&mut window, &market)
                else {
                    return Err("the echo generator sent something else than an order".into());
                };
                let spec = &market.symbols[symbol as usize];
                cl.clear();
                let _ = write!(cl, "{tag}-{i}");
                let t1 = now_ns();
                enc.begin(b"D");
                enc.header(&Header {
                    sender_comp_id: b.order_sender.as_bytes(),
                    target_comp_id: b.target_comp_id.as_bytes(),
                    msg_seq_num: seq,
                    sending_time_ns: t1,
                    poss_dup: false,
                    orig_sending_time: None,
                    time_precision: TimePrecision::Millis,
                });
                enc.field(11, &cl);
                enc.field(21, b"1");
                enc.field(55, spec.name.as_bytes());
                enc.field_char(54, if side == types::Side::Buy { b'1' } else { b'2' });
                enc.field_u64(38, qty);
                enc.field(40, b"2");
                enc.field_decimal(44, Decimal::new(price_ticks, spec.price_decimals));
                enc.field(59, b"3");
                enc.field_timestamp(60, t1, TimePrecision::Millis);
                intended[i].store(due, Ordering::Release);
                written[i].store(t1, Ordering::Release);
                order_w
                    .write_all(enc.finish(FixVersion::Fix42))
                    .map_err(|e| format!("{}: write: {e}", b.order_sender))?;
                seq += 1;
                last = t1;
                sent.fetch_add(1, Ordering::Relaxed);
                if t1 >= last_second + 1_000_000_000 {
                    last_second = t1;
                    let _ = writeln!(
                        progress,
                        "[{:>4} s] sent {i} of {total} FIX 4.2 orders",
                        (t1 - start) / 1_000_000_000
                    );
                }
            }
            Ok((seq, start, last))
        };
        let send_result = send();
        sending.store(false, Ordering::Release);
        let copies = copy_reader.join();
        done.store(true, Ordering::Release);
        let order_counts = order_reader.join();
        (copies, order_counts, send_result)
    });
    let (copies, mut notes) = copies.map_err(|_| "the copy reader panicked".to_string())?;
    let (mut counters, order_notes) =
        order_counts.map_err(|_| "the order reader panicked".to_string())?;
    let (next_seq, start, last) = send_result?;
    // From the first due time to one interval after the last write.
    let measured_secs = (last.saturating_sub(start) + interval_ns) as f64 / 1e9;
    // Log out of both sessions.
    order.out_seq = next_seq;
    copy.out_seq = copies.next_out;
    let _ = order.send("5", &[]);
    let _ = copy.send("5", &[]);

    let sent = sent.load(Ordering::Relaxed);
    let measured_sent = sent.saturating_sub(warm);
    let lost = sent.saturating_sub(copies.received);
    notes.extend(order_notes);
    if lost > 0 {
        notes.push(format!(
            "{lost} of {sent} orders got no copy on {} within {:?} of the last order",
            b.copy_sender, b.drain_timeout
        ));
    }
    if copies.duplicates > 0 {
        notes.push(format!("{} copies came twice", copies.duplicates));
    }
    counters.sent = measured_sent;
    counters.sent_new = measured_sent;
    counters.answered = copies.latency.len();
    counters.errors += lost + copies.duplicates;
    notes.truncate(crate::stats::ERROR_NOTES_MAX);
    Ok(RunResult {
        rate_offered: b.rate,
        rate_achieved: sent as f64 / measured_secs.max(1e-9),
        bots: 2,
        measured_secs,
        counters,
        latency: copies.latency,
        shed_latency: new_histogram(),
        send_lag: copies.send_lag,
        after_send: copies.after_send,
        tail: copies.tail,
        error_notes: notes,
        generator_cpu_secs: crate::clock::process_cpu_ns().saturating_sub(cpu0) as f64 / 1e9,
        wall_secs: started.elapsed().as_secs_f64(),
        unstamped_reads: copies.unstamped,
        host_steal_ms: match (steal0, crate::noise::steal_ms()) {
            (Some(a), Some(z)) => Some(z.saturating_sub(a)),
            _ => None,
        },
    })
}

#[cfg(test)]
mod tests;
