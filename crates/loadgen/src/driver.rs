//! The load generator's engine: N FIX initiator sessions driven open-loop from one thread.
//!
//! Role: connect and log on every bot (ResetSeqNumFlag=Y), then send the requests of the run at
//! their **intended** times, whatever happened to earlier requests (open loop: no coordinated
//! omission). The `Schedule` offers `batch` requests every `tick_ns` (one request per tick at
//! rates up to one per `tick_min`, 100 µs by default; above that, small batches, each batch to
//! one bot, bots in turn), so the offered rate is exact and the generator wakes at most once per
//! tick. Each tick costs about 40 µs of CPU on this VM, whatever the batch: the timer wake-up
//! and re-arm, and above all the `write`, in which the kernel delivers the segment to the
//! exchange's socket and wakes its thread. So the generator's CPU follows ticks per second more
//! than requests: against an exchange that only acknowledges (`examples/ack_exchange.rs`),
//! 35-45% of a core at 10K-100K req/s, 46% at 200K, 57% at 300K with the 100 µs tick (a 150 µs
//! tick: about 40% at 200K; 50 µs: 60-75%). The timer is armed early by how late the generator
//! was learnt to be ready to send after an expiry (`WakeEarly`: the timer's wake-up and the look
//! at the sockets that comes before each tick's sends), and the driver spins on the clock for
//! what is left, so requests leave within a few µs of their due time instead of the ~40 µs a VM
//! timer wake-up takes. The first answer to each request (ExecutionReport
//! New/Replaced/Canceled/Rejected, OrderCancelReject) is timed from the request's intended time
//! into an HdrHistogram, so time the request spent waiting in the generator (because it fell
//! behind, or TCP pushed back) counts as latency, as it would for a client.
//! After the measured period: drain the answers, mass cancel every bot's orders, log out.
//!
//! This module is the loop: when to send, wait and read. `schedule` says when requests are due
//! and how early to wake, `session` what each bot writes and what it does with what it reads,
//! `tally` accounts for the answers.
//!
//! How it stays cheap on a 2-core machine shared with the exchange: one thread; a periodic
//! `timerfd` (ns precision, no timer slack, armed once per run rather than once per wait,
//! re-armed when the learnt lead moves by 2 µs; read at each expiry, which re-arms it) in a
//! poll of its own, and the sockets in another. While requests are being sent the driver parks
//! on the timer only and looks at the sockets once per tick, without waiting: reports do not
//! wake it, because each read carries the kernel's receive time (`rx`, SO_TIMESTAMPNS), so they
//! are timed when they arrived, not when they were read (one wake-up per tick instead of two,
//! and a busy generator does not inflate the latency it reports). When not sending (draining,
//! logon, back-pressure) it parks on the sockets. A batch is encoded into its bot's write
//! buffer and written with one `write`; reports are read in place (`fix::scan`, one pass,
//! no field table). The `fix` crate's `Encoder` is reused; ClOrdIDs are formatted on the
//! stack; nothing is allocated per message once the buffers have grown.
//!
//! Never: spins for long (it parks in `epoll_wait` until the timer or a socket wakes it; it
//! spins on the clock only between an early timer wake-up and the due time, at most half a
//! tick and 200 µs; it polls without waiting only while catching up with requests already due,
//! or within `spin` of the next one when a run asks for it); drops a due request silently
//! (when a bot's write buffer is full the schedule waits and the delay is measured); lets a
//! bot cancel or replace an order it does not believe live (`BotOrders`).
//!
//! Invariants: each request is answered at most once in the statistics (the first answer; its
//! kind is in the ClOrdID); only requests whose intended time falls in the measured period are
//! counted and timed; fills are counted when received after the warm-up.

use crate::clock::{mono_ns, process_cpu_ns};
use crate::clordid;
use crate::mix::{Market, Strategy};
use crate::orders::BotOrders;
use crate::schedule::{Schedule, WakeEarly};
use crate::session::{Bot, Outbound, Request};
use crate::stats::{Counters, RunResult, ERROR_NOTES_MAX};
use crate::tally::{Tally, SENT_RING};
use fix::scan::Report;
use fix::{Decoder, Encoder, Limits};
use hdrhistogram::Histogram;
use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use rustix::fd::{AsRawFd, OwnedFd};
use rustix::time::{
    timerfd_create, timerfd_settime, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags,
    Timespec,
};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const TIMER: Token = Token(usize::MAX - 1);
/// Unsent bytes per bot above which the schedule waits for the socket (TCP back-pressure).
const WBUF_MAX: usize = 4 << 20;
const RBUF_SIZE: usize = 256 << 10;
/// Most requests generated between two looks at the sockets.
const BURST_MAX: usize = 1024;
/// Longest single wait, so the stop flag and the once-a-second tick are seen.
const WAIT_MAX: Duration = Duration::from_millis(100);
const NS_PER_S: u64 = 1_000_000_000;

/// Where and how to drive load.
#[derive(Clone, Debug)]
pub struct DriverConfig {
    pub addr: SocketAddr,
    /// The exchange's CompID (our TargetCompID).
    pub target_comp_id: String,
    /// One SenderCompID per bot.
    pub sender_comp_ids: Vec<String>,
    /// Requests per second of each bot.
    pub rate_per_bot: u64,
    /// Unmeasured period at the start.
    pub warmup: Duration,
    /// Measured period; `None` runs until `stop` is set.
    pub duration: Option<Duration>,
    /// Active-orders window (slots) per bot.
    pub window: usize,
    pub heartbeat_secs: u32,
    /// How long to wait for answers after the last request.
    pub drain_timeout: Duration,
    pub connect_timeout: Duration,
    /// Seed of the run tag in ClOrdIDs (e.g. the wall clock in ms).
    pub run_seed: u64,
    /// Set by Ctrl-C handlers (or a test) to end the run early.
    pub stop: Arc<AtomicBool>,
    /// Shortest timer tick; above one request per tick, requests go out in batches.
    pub tick_min: Duration,
    /// Exactly this many measured requests (overrides `duration`).
    pub requests: Option<u64>,
    /// Busy-poll instead of parking when the next request is due within this long (0: always
    /// park). Sharper send times for low-rate latency runs, at the cost of a busy core.
    pub spin: Duration,
    /// With `spin` zero: arm the timer early by how late the generator is typically ready to
    /// send after an expiry (the wake-up and the look at the sockets, learnt during the run)
    /// and spin on the clock, without system calls, for what is left; see `WakeEarly`. Off:
    /// requests go out when the timer's wake-up gets to them.
    pub adaptive_wake: bool,
    /// The share of timer wake-ups `WakeEarly` arms early enough for (0.5-0.999, default
    /// 0.95): higher spins longer before each tick and sends late less often.
    pub wake_quantile: f64,
}

impl DriverConfig {
    /// Defaults for the default contract: TargetCompID `RIALTO`, bots `BOT1..BOTn`.
    pub fn new(addr: SocketAddr, bots: usize, rate_per_bot: u64) -> DriverConfig {
        DriverConfig {
            addr,
            target_comp_id: "RIALTO".to_string(),
            sender_comp_ids: (1..=bots).map(|i| format!("BOT{i}")).collect(),
            rate_per_bot,
            warmup: Duration::from_secs(1),
            duration: Some(Duration::from_secs(10)),
            window: 100,
            heartbeat_secs: 30,
            drain_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(10),
            run_seed: wall_ns() / 1_000_000,
            stop: Arc::new(AtomicBool::new(false)),
            tick_min: Duration::from_micros(100),
            requests: None,
            spin: Duration::ZERO,
            adaptive_wake: true,
            wake_quantile: WakeEarly::QUANTILE,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.sender_comp_ids.is_empty() {
            return Err("at least one bot is needed".into());
        }
        if self.rate_per_bot == 0 {
            return Err("the rate per bot must be at least 1 request/s".into());
        }
        if self
            .rate_per_bot
            .checked_mul(self.sender_comp_ids.len() as u64)
            .is_none_or(|r| r > 100_000_000)
        {
            return Err("the total rate must be at most 100,000,000 requests/s".into());
        }
        if self.tick_min.is_zero() || self.tick_min > Duration::from_secs(1) {
            return Err("the timer tick must be between 1 ns and 1 s".into());
        }
        if self.heartbeat_secs == 0 {
            return Err("the heartbeat interval must be at least 1 s".into());
        }
        if !(0.5..=0.999).contains(&self.wake_quantile) {
            return Err(format!(
                "the wake-up quantile {} must be between 0.5 and 0.999",
                self.wake_quantile
            ));
        }
        Ok(())
    }
}

/// What the run is doing (for progress displays).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Warmup,
    Measuring,
    Draining,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Warmup => "warm-up",
            Phase::Measuring => "measuring",
            Phase::Draining => "draining",
        }
    }
}

/// The live state shown to an `Observer` once a second.
pub struct View<'a> {
    /// Seconds since the schedule started.
    pub elapsed_s: u64,
    pub phase: Phase,
    /// Counters of the measured period so far.
    pub totals: &'a Counters,
    /// Counters of the last second (warm-up included).
    pub last_second: &'a Counters,
    /// Latency of the last second's answers (warm-up included).
    pub last_second_latency: &'a Histogram<u64>,
    /// Requests sent and not answered yet.
    pub in_flight: u64,
    /// How far the generator is behind its schedule, in ns.
    pub behind_ns: u64,
    bots: &'a [Bot],
}

impl View<'_> {
    pub fn bot_count(&self) -> usize {
        self.bots.len()
    }
    pub fn orders(&self, bot: usize) -> &BotOrders {
        &self.bots[bot].orders
    }
}

/// Hooks for displays and simulations; every method has a default that does nothing.
pub trait Observer {
    /// Every application message a bot receives (after the driver has accounted for it).
    fn on_report(&mut self, _bot: usize, _report: &Report<'_>) {}
    /// `on_report` with the kernel's receive time of the read that brought the message (ns
    /// since the Unix epoch, `rx`; `None` without a stamp). The default calls `on_report`.
    fn on_report_at(&mut self, bot: usize, report: &Report<'_>, _arrived_wall_ns: Option<u64>) {
        self.on_report(bot, report);
    }
    /// Once a second; may move the market (the demo's drifting mid).
    fn on_second(&mut self, _view: &View<'_>, _market: &mut Market) {}
}

/// An observer that does nothing.
pub struct Quiet;
impl Observer for Quiet {}

/// How `pump_with` waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// Park on the tick timer (up to `WAIT_MAX`), then look at the sockets without waiting.
    Tick,
    /// Look at the sockets without waiting.
    Look,
    /// Park until a socket is ready (up to `WAIT_MAX`).
    Sockets,
}

/// Wall clock, ns since the Unix epoch.
pub fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Connected, logged-on bots ready to run a schedule.
pub struct Driver {
    cfg: DriverConfig,
    /// The tick timer alone: while requests are being sent the driver parks here, and the
    /// sockets are looked at once per tick (their data carries the kernel's receive time).
    poll: Poll,
    timer_events: Events,
    /// The bots' sockets.
    net: Poll,
    events: Events,
    timer: OwnedFd,
    bots: Vec<Bot>,
    dec: Decoder,
    /// The encoder, the TargetCompID and the monotonic and wall clock at the same instant
    /// (re-paired every second of a run), to stamp SendingTime without a syscall and to map
    /// the kernel's receive stamps to our clock.
    out: Outbound,
    /// Runs started so far: each run has its own ClOrdID run tag.
    runs: u64,
    /// First expiry (monotonic ns) and interval of the armed periodic timer (0: disarmed).
    timer_base: u64,
    timer_interval: u64,
    /// The expiry (monotonic ns) that the last parked wake-up by the timer answered, for
    /// `WakeEarly`: the run measures how late it is ready to send against it.
    woke_for: Option<u64>,
}

impl Driver {
    /// Connects every bot and logs it on (ResetSeqNumFlag=Y). Fails with the first refusal.
    pub fn connect(cfg: DriverConfig) -> Result<Driver, String> {
        cfg.validate()?;
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let net = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let timer = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )
        .map_err(|e| format!("timerfd: {e}"))?;
        poll.registry()
            .register(&mut SourceFd(&timer.as_raw_fd()), TIMER, Interest::READABLE)
            .map_err(|e| format!("timerfd: {e}"))?;
        let mut bots = Vec::with_capacity(cfg.sender_comp_ids.len());
        for (i, name) in cfg.sender_comp_ids.iter().enumerate() {
            let s = std::net::TcpStream::connect_timeout(&cfg.addr, cfg.connect_timeout)
                .map_err(|e| format!("{name}: cannot connect to {}: {e}", cfg.addr))?;
            s.set_nodelay(true)
                .and_then(|_| s.set_nonblocking(true))
                .map_err(|e| format!("{name}: {e}"))?;
            crate::rx::enable(s.as_raw_fd())
                .map_err(|e| format!("{name}: receive timestamps (SO_TIMESTAMPNS): {e}"))?;
            let mut stream = TcpStream::from_std(s);
            net.registry()
                .register(
                    &mut stream,
                    Token(i),
                    Interest::READABLE | Interest::WRITABLE,
                )
                .map_err(|e| format!("{name}: {e}"))?;
            bots.push(Bot::new(name.clone(), stream, RBUF_SIZE, cfg.window));
        }
        let mut d = Driver {
            poll,
            timer_events: Events::with_capacity(4),
            net,
            events: Events::with_capacity(1024),
            timer,
            bots,
            dec: Decoder::new(Limits::default()),
            out: Outbound {
                enc: Encoder::default(),
                target: cfg.target_comp_id.clone(),
                mono0: mono_ns(),
                wall0: wall_ns(),
            },
            runs: 0,
            timer_base: 0,
            timer_interval: 0,
            woke_for: None,
            cfg,
        };
        d.logon()?;
        Ok(d)
    }

    pub fn bot_count(&self) -> usize {
        self.bots.len()
    }

    /// Sets the measured period of the next `run` (`None`: until the stop flag).
    pub fn set_duration(&mut self, duration: Option<Duration>) {
        self.cfg.duration = duration;
    }

    fn logon(&mut self) -> Result<(), String> {
        let hb = self.cfg.heartbeat_secs;
        let now = mono_ns();
        for bot in &mut self.bots {
            bot.logon(&mut self.out, hb, now);
        }
        let mut stats = Tally::idle(self.run_tag());
        let deadline = mono_ns() + self.cfg.connect_timeout.as_nanos() as u64;
        while !self.bots.iter().all(|b| b.logged_on) {
            if mono_ns() > deadline {
                let waiting: Vec<&str> = self
                    .bots
                    .iter()
                    .filter(|b| !b.logged_on)
                    .map(|b| b.name.as_str())
                    .collect();
                return Err(format!(
                    "no Logon answer within {:?} for {}",
                    self.cfg.connect_timeout,
                    waiting.join(", ")
                ));
            }
            self.pump(&mut stats, &mut Quiet)?;
            let refused: Vec<&Bot> = self
                .bots
                .iter()
                .filter(|b| b.closed || b.logout_received)
                .collect();
            if let Some(b) = refused.first() {
                let prefix = format!("{}: ", b.name);
                let why = stats
                    .notes
                    .iter()
                    .find_map(|n| n.strip_prefix(&prefix))
                    .unwrap_or("no reason given");
                let names: Vec<&str> = refused.iter().map(|b| b.name.as_str()).collect();
                return Err(format!(
                    "logon refused for {} ({why}); is each SenderCompID configured on the \
                     exchange (the default contract has BOT1..BOT64)?",
                    names.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// The ClOrdID tag of the current run.
    fn run_tag(&self) -> [u8; clordid::RUN_LEN] {
        clordid::run_tag(self.cfg.run_seed.wrapping_add(self.runs))
    }

    /// Runs the schedule with one strategy per bot, then drains the answers. Call `finish`
    /// afterwards to cancel the bots' orders and log out. May be called again for another run
    /// on the same sessions (orders left by the earlier run stay in the book until `finish`).
    pub fn run<S: Strategy, O: Observer>(
        &mut self,
        strategies: &mut [S],
        market: &mut Market,
        observer: &mut O,
    ) -> Result<RunResult, String> {
        if strategies.len() != self.bots.len() {
            return Err(format!(
                "{} strategies for {} bots",
                strategies.len(),
                self.bots.len()
            ));
        }
        let nbots = self.bots.len() as u64;
        let total_rate = self.cfg.rate_per_bot * nbots;
        let schedule = Schedule::new(total_rate, self.cfg.tick_min.as_nanos() as u64);
        let warmup_ns = self.cfg.warmup.as_nanos() as u64;
        let k_measure = schedule.first_at_or_after(warmup_ns);
        let k_end = match (self.cfg.requests, self.cfg.duration) {
            (Some(n), _) => k_measure.saturating_add(n),
            (None, Some(d)) => schedule.first_at_or_after(warmup_ns + d.as_nanos() as u64),
            (None, None) => u64::MAX,
        };
        // A new run tag: ClOrdIDs never repeat on the session, and reports about orders of an
        // earlier run are not taken for this run's (those orders are forgotten here).
        self.runs += 1;
        for b in &mut self.bots {
            b.orders.clear();
        }
        let mut st = Tally::measuring(self.run_tag(), schedule, k_measure, k_end);
        let cpu0 = process_cpu_ns();
        let steal0 = crate::noise::steal_ms();
        let t0 = mono_ns();
        let mut k_next: u64 = 0;
        let mut next_tick = NS_PER_S;
        let mut phase = if warmup_ns > 0 {
            Phase::Warmup
        } else {
            Phase::Measuring
        };
        st.count_fills = phase == Phase::Measuring;
        let mut drain_deadline: Option<u64> = None;
        let mut timer_on = false;
        let adaptive = self.cfg.adaptive_wake && self.cfg.spin.is_zero();
        let mut early =
            WakeEarly::with_quantile((schedule.tick_ns / 2).min(200_000), self.cfg.wake_quantile);
        let mut rearm = false;
        // The sockets were just looked at (the last wait was a look, not a timer park).
        let mut looked = false;
        let result = loop {
            let mut now = mono_ns() - t0;
            let woke_for = self.woke_for.take();
            // Woken early for the next tick: first read what arrived since the last look (so a
            // report is read before the next request can draw its answer into the same read,
            // where TCP would merge both segments and stamp the earlier report late, with the
            // later one's time), then spin on the clock until the tick is due.
            if timer_on && k_next < st.k_end && !looked {
                if let Err(e) = self.look(&mut st, observer, Duration::ZERO, t0) {
                    break Err(e);
                }
                now = mono_ns() - t0;
            }
            // How late the generator is ready to send after the timer's expiry: the wake-up
            // and the look together, since both stand between the expiry and the first send.
            // Learning the wake-up alone left the look (a read per bot with answers, about a
            // third of a tick's work) after the lead, so more ticks than the quantile's share
            // went out late.
            if let Some(expiry) = woke_for {
                let late = (t0 + now).saturating_sub(expiry);
                if adaptive && late < schedule.tick_ns {
                    rearm |= early.sample(late);
                }
            }
            if adaptive && timer_on && k_next < st.k_end {
                let due = st.intended_ns(k_next);
                if due > now && due - now <= early.armed_ns {
                    while now < due {
                        std::hint::spin_loop();
                        now = mono_ns() - t0;
                    }
                }
            }
            if phase == Phase::Warmup && now >= warmup_ns {
                phase = Phase::Measuring;
                st.count_fills = true;
            }
            if self.cfg.stop.load(Ordering::Relaxed) && st.k_end > k_next {
                st.k_end = k_next;
            }
            // Generate every request that is due.
            let mut blocked = false;
            let mut burst = 0;
            while k_next < st.k_end && burst < BURST_MAX && st.intended_ns(k_next) <= now {
                let b = schedule.bot(k_next, nbots);
                if self.bots[b].closed {
                    k_next += 1;
                    continue;
                }
                if self.bots[b].unsent() > WBUF_MAX {
                    blocked = true;
                    break;
                }
                let bot = &mut self.bots[b];
                let action = strategies[b].next(&mut bot.orders, market);
                let req = Request {
                    k: k_next,
                    action,
                    mono: t0 + now,
                };
                bot.send(&mut self.out, req, market, &mut st);
                st.sent_at[(k_next % SENT_RING) as usize] = (k_next, now);
                if k_next >= st.k_measure {
                    st.last_measured_send_ns = now;
                    let lag = now.saturating_sub(st.intended_ns(k_next));
                    st.send_lag.saturating_record(lag.max(1));
                }
                k_next += 1;
                burst += 1;
            }
            for bot in self.bots.iter_mut().filter(|b| b.dirty) {
                bot.dirty = false;
                if !bot.flush() {
                    bot.closed = true;
                    st.error(format!("{}: write failed, connection lost", bot.name));
                }
            }
            if now >= next_tick {
                next_tick += NS_PER_S;
                // Re-pair the clocks each second: the kernel's receive stamps are wall-clock
                // time, and a slewing wall clock (NTP, up to 500 ppm) must not drift into the
                // latencies over a long run.
                self.out.mono0 = mono_ns();
                self.out.wall0 = wall_ns();
                self.heartbeats(t0 + now);
                let behind = if k_next < st.k_end {
                    now.saturating_sub(st.intended_ns(k_next))
                } else {
                    0
                };
                let view = View {
                    elapsed_s: now / NS_PER_S,
                    phase,
                    totals: &st.totals,
                    last_second: &st.second,
                    last_second_latency: &st.second_latency,
                    in_flight: st.sent_all - st.answered_all,
                    behind_ns: behind,
                    bots: &self.bots,
                };
                observer.on_second(&view, market);
                st.second = Counters::default();
                st.second_latency.reset();
            }
            if k_next >= st.k_end {
                if phase != Phase::Draining {
                    phase = Phase::Draining;
                    drain_deadline = Some(now + self.cfg.drain_timeout.as_nanos() as u64);
                }
                let all_out = self.bots.iter().all(|b| b.closed || b.unsent() == 0);
                if (st.answered_all >= st.sent_all && all_out)
                    || drain_deadline.is_some_and(|d| now >= d)
                    || self.bots.iter().all(|b| b.closed)
                {
                    break Ok(());
                }
            }
            // The periodic timer runs while requests are to be sent and the sockets take them;
            // with a spin window it fires that much before each tick, and the loop busy-polls
            // from there to the due time.
            let spin_ns = self.cfg.spin.as_nanos() as u64;
            let lead_ns = if adaptive { early.armed_ns } else { spin_ns };
            let sending = k_next < st.k_end && !blocked;
            if sending != timer_on || (sending && rearm) {
                rearm = false;
                let first = (t0 + st.intended_ns(k_next)).saturating_sub(lead_ns);
                let armed = if sending {
                    self.arm_timer(first, schedule.tick_ns)
                } else {
                    self.arm_timer(0, 0)
                };
                if let Err(e) = armed {
                    break Err(e);
                }
                timer_on = sending;
            }
            // Requests already due (a burst was cut, or the generator is catching up), or due
            // within the spin window: look at the sockets without waiting. Otherwise park until
            // the tick or a socket.
            let catching_up = sending && st.intended_ns(k_next) <= now + spin_ns;
            let wait = if catching_up {
                Wait::Look
            } else if timer_on {
                Wait::Tick
            } else {
                Wait::Sockets
            };
            if let Err(e) = self.pump_with(&mut st, observer, wait, t0) {
                break Err(e);
            }
            looked = wait != Wait::Tick;
        };
        if timer_on {
            let _ = self.arm_timer(0, 0);
        }
        self.woke_for = None;
        result?;
        let end = mono_ns() - t0;
        // Unanswered measured requests are errors.
        let unanswered = st.totals.sent.saturating_sub(st.totals.answered);
        if unanswered > 0 {
            st.totals.errors += unanswered;
            if st.notes.len() < ERROR_NOTES_MAX {
                st.notes.push(format!(
                    "{unanswered} measured requests unanswered after the drain timeout"
                ));
            }
        }
        // The measured period: what the schedule offered (ticks from the first measured request
        // to the last), or longer if sending fell behind it.
        let measured_ns = if st.k_end == u64::MAX {
            end.saturating_sub(warmup_ns)
        } else {
            let ticks = st.k_end.saturating_sub(k_measure).div_ceil(schedule.batch);
            let offered = ticks.saturating_mul(schedule.tick_ns);
            let actual = st
                .last_measured_send_ns
                .saturating_sub(schedule.intended_ns(k_measure))
                + schedule.tick_ns;
            offered.max(actual)
        }
        .max(1);
        let measured_secs = measured_ns as f64 / 1e9;
        Ok(RunResult {
            rate_offered: schedule.rate().round() as u64,
            rate_achieved: st.totals.sent as f64 / measured_secs,
            bots: self.bots.len(),
            measured_secs,
            counters: st.totals,
            latency: st.latency,
            shed_latency: st.shed_latency,
            send_lag: st.send_lag,
            after_send: st.after_send,
            tail: st.tail,
            error_notes: st.notes,
            generator_cpu_secs: process_cpu_ns().saturating_sub(cpu0) as f64 / 1e9,
            wall_secs: end as f64 / 1e9,
            unstamped_reads: st.unstamped_reads,
            host_steal_ms: steal0
                .zip(crate::noise::steal_ms())
                .map(|(a, b)| b.saturating_sub(a)),
        })
    }

    /// Mass-cancels every bot's orders (waiting for the reports) and logs out. Errors here do
    /// not change the measured result; they are returned as notes.
    pub fn finish(mut self) -> Vec<String> {
        let mut st = Tally::idle(self.run_tag());
        let now = mono_ns();
        for (i, bot) in self.bots.iter_mut().enumerate() {
            if !bot.closed {
                bot.mass_cancel(&mut self.out, &st.run, i as u64, now);
            }
        }
        let deadline = mono_ns() + 5 * NS_PER_S;
        while mono_ns() < deadline && !self.bots.iter().all(|b| b.closed || b.mass_cancel_done) {
            if self.pump(&mut st, &mut Quiet).is_err() {
                break;
            }
        }
        for b in self
            .bots
            .iter()
            .filter(|b| !b.closed && !b.mass_cancel_done)
        {
            st.notes
                .push(format!("{}: no OrderMassCancelReport within 5 s", b.name));
        }
        let now = mono_ns();
        for bot in self.bots.iter_mut().filter(|b| !b.closed) {
            bot.logout(&mut self.out, now);
        }
        let deadline = mono_ns() + 2 * NS_PER_S;
        while mono_ns() < deadline && !self.bots.iter().all(|b| b.closed || b.logout_received) {
            if self.pump(&mut st, &mut Quiet).is_err() {
                break;
            }
        }
        for b in &self.bots {
            let _ = b.stream.shutdown(std::net::Shutdown::Both);
        }
        st.notes
    }

    fn heartbeats(&mut self, mono: u64) {
        let every = u64::from(self.cfg.heartbeat_secs) * NS_PER_S;
        for bot in &mut self.bots {
            if !bot.closed && mono.saturating_sub(bot.last_send_ns) >= every {
                bot.heartbeat(&mut self.out, mono);
            }
        }
    }

    /// Arms the timer to fire at `first_abs_ns` (monotonic) and then every `interval_ns`;
    /// `(0, 0)` disarms it.
    fn arm_timer(&mut self, first_abs_ns: u64, interval_ns: u64) -> Result<(), String> {
        self.timer_base = first_abs_ns;
        self.timer_interval = interval_ns;
        let ts = |ns: u64| Timespec {
            tv_sec: (ns / NS_PER_S) as _,
            tv_nsec: (ns % NS_PER_S) as _,
        };
        let spec = Itimerspec {
            it_interval: ts(interval_ns),
            // A zero value would disarm: the start of the clock stands for "now".
            it_value: ts(if interval_ns > 0 {
                first_abs_ns.max(1)
            } else {
                0
            }),
        };
        timerfd_settime(&self.timer, TimerfdTimerFlags::ABSTIME, &spec)
            .map(|_| ())
            .map_err(|e| format!("timerfd: {e}"))
    }

    /// One wait of at most `WAIT_MAX` and the handling of whatever woke it.
    fn pump<O: Observer>(&mut self, st: &mut Tally, observer: &mut O) -> Result<(), String> {
        self.pump_with(st, observer, Wait::Sockets, 0)
    }

    /// Like `pump`, waiting as `wait` says. Receive times are taken relative to `t0`.
    fn pump_with<O: Observer>(
        &mut self,
        st: &mut Tally,
        observer: &mut O,
        wait: Wait,
        t0: u64,
    ) -> Result<(), String> {
        match wait {
            // The sockets are read when the timer fires, before that tick's requests (the top
            // of `run`): what arrives meanwhile carries its own time, so one look per tick is
            // enough, and it comes before the next request can draw a second answer into it.
            Wait::Tick => self.park_on_timer(),
            Wait::Look => self.look(st, observer, Duration::ZERO, t0),
            Wait::Sockets => self.look(st, observer, WAIT_MAX, t0),
        }
    }

    /// Waits for the tick timer (up to `WAIT_MAX`), notes how late it woke us, and reads it
    /// (which re-arms a periodic timerfd).
    fn park_on_timer(&mut self) -> Result<(), String> {
        match self.poll.poll(&mut self.timer_events, Some(WAIT_MAX)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(format!("poll: {e}")),
        }
        if self.timer_events.is_empty() {
            return Ok(());
        }
        let mut expirations = [0u8; 8];
        let read = rustix::io::read(&self.timer, &mut expirations);
        // The read (a timer re-arm, dear on a VM) is part of getting ready to send, and so is
        // the look that follows (`run`). Only a wake-up for a single expiry says how late the
        // timer is; after several the generator was busy, not the timer late.
        if self.timer_interval > 0
            && read.is_ok_and(|n| n == 8)
            && u64::from_ne_bytes(expirations) == 1
        {
            let now = mono_ns();
            if now >= self.timer_base {
                self.woke_for = Some(now - (now - self.timer_base) % self.timer_interval);
            }
        }
        Ok(())
    }

    /// Handles the ready sockets, waiting up to `timeout` for one.
    fn look<O: Observer>(
        &mut self,
        st: &mut Tally,
        observer: &mut O,
        timeout: Duration,
        t0: u64,
    ) -> Result<(), String> {
        match self.net.poll(&mut self.events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(format!("poll: {e}")),
        }
        let mut ready = [0usize; 64];
        let mut n = 0;
        let mut writable = [0usize; 64];
        let mut nw = 0;
        for ev in self.events.iter() {
            let Token(i) = ev.token();
            if i >= self.bots.len() {
                continue;
            }
            if (ev.is_readable() || ev.is_read_closed() || ev.is_error()) && n < ready.len() {
                ready[n] = i;
                n += 1;
            }
            if ev.is_writable() && nw < writable.len() {
                writable[nw] = i;
                nw += 1;
            }
        }
        for &i in &writable[..nw] {
            let bot = &mut self.bots[i];
            if !bot.closed && bot.unsent() > 0 && !bot.flush() {
                bot.closed = true;
                st.error(format!("{}: write failed, connection lost", bot.name));
            }
        }
        for &i in &ready[..n] {
            self.read_bot(i, st, observer, t0);
        }
        // More than 64 ready sockets: read the rest too (rare; bots are few).
        if self.events.iter().count() > ready.len() {
            for i in 0..self.bots.len() {
                self.read_bot(i, st, observer, t0);
            }
        }
        Ok(())
    }

    fn read_bot<O: Observer>(&mut self, i: usize, st: &mut Tally, observer: &mut O, t0: u64) {
        if self.bots[i].closed {
            return;
        }
        loop {
            let bot = &mut self.bots[i];
            if bot.rlen == bot.rbuf.len() {
                // A message larger than the buffer: grow once (never in steady state).
                let size = bot.rbuf.len() * 2;
                bot.rbuf.resize(size, 0);
            }
            let want = bot.rbuf.len() - bot.rlen;
            let got = match crate::rx::recv(bot.stream.as_raw_fd(), &mut bot.rbuf[bot.rlen..]) {
                Ok((0, _)) => {
                    bot.closed = true;
                    if !(bot.logout_sent && bot.logout_received) {
                        let name = bot.name.clone();
                        st.error(format!("{name}: connection closed by the exchange"));
                    }
                    bot.orders.clear();
                    return;
                }
                Ok((n, stamp)) => (n, stamp),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    bot.closed = true;
                    let name = bot.name.clone();
                    st.error(format!("{name}: read failed: {e}"));
                    return;
                }
            };
            let (got, stamp) = got;
            // The kernel's receive time on our monotonic clock; our own clock if there is no
            // stamp or it is implausible (a wall clock step).
            let now = mono_ns();
            let arrived = stamp
                .and_then(|w| (w + self.out.mono0).checked_sub(self.out.wall0))
                .filter(|&m| m <= now && now - m < 10 * NS_PER_S)
                .unwrap_or_else(|| {
                    st.unstamped_reads += 1;
                    now
                });
            let recv = arrived.saturating_sub(t0);
            bot.rlen += got;
            self.parse_bot(i, st, observer, (recv, stamp));
            if got < want {
                return;
            }
        }
    }

    /// Handles the complete messages in bot `i`'s buffer, read at `recv` (ns after the run's
    /// start) with the kernel's stamp `stamp` (wall ns).
    fn parse_bot<O: Observer>(
        &mut self,
        i: usize,
        st: &mut Tally,
        observer: &mut O,
        (recv, stamp): (u64, Option<u64>),
    ) {
        let mut rbuf = std::mem::take(&mut self.bots[i].rbuf);
        let rlen = self.bots[i].rlen;
        let mut pos = 0;
        while pos < rlen {
            match fix::frame(&rbuf[pos..rlen], self.dec.limits().msg_len_max) {
                Ok(None) => break,
                Ok(Some(len)) => {
                    let frame = &rbuf[pos..pos + len];
                    pos += len;
                    match fix::scan::scan(frame) {
                        Ok(msg) => {
                            if self.bots[i].on_message(&mut self.out, &msg, st, recv) {
                                observer.on_report_at(i, &msg.report, stamp);
                            }
                        }
                        Err(e) => {
                            let name = self.bots[i].name.clone();
                            st.error(format!("{name}: undecodable message: {e:?}"));
                        }
                    }
                }
                Err(e) => {
                    let name = self.bots[i].name.clone();
                    st.error(format!("{name}: garbled input: {}", e.as_str()));
                    pos += fix::resync(&rbuf[pos..rlen]).max(1);
                }
            }
        }
        rbuf.copy_within(pos..rlen, 0);
        let bot = &mut self.bots[i];
        bot.rlen = rlen - pos;
        bot.rbuf = rbuf;
        if bot.dirty {
            bot.dirty = false;
            if !bot.flush() {
                bot.closed = true;
            }
        }
    }
}

#[cfg(test)]
mod tests;
