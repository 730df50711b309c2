//! The benchmark programs as library calls: `run_fix` (N bots with the order mix, Ember's
//! throughput test), `run_echo` (one session, NewOrderSingle -> ExecutionReport round trip,
//! FIXEdge's single-session scenario) and the once-a-second progress line.
//!
//! Role: the `rialto bench fix|echo|sweep` subcommands are thin wrappers over these, so tests
//! and the sweep call exactly what users run.
//!
//! Never: prints to stdout (results are returned; progress goes to the writer given, stderr in
//! the binary).

use crate::driver::{Driver, DriverConfig, Observer, View};
use crate::mix::{EchoGenerator, Market, MixConfig, MixGenerator};
use crate::stats::{at, us, RunResult};
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// `rialto bench fix` settings.
#[derive(Clone, Debug)]
pub struct FixBench {
    pub addr: SocketAddr,
    pub target_comp_id: String,
    /// Bots are `<prefix>1..<prefix>N` (default `BOT`).
    pub sender_prefix: String,
    pub bots: usize,
    pub rate_per_bot: u64,
    pub warmup: Duration,
    pub duration: Duration,
    pub window: usize,
    pub seed: u64,
    pub mix: MixConfig,
    /// The instruments the bots trade (default: `Market::default_contract`).
    pub market: Market,
    pub stop: Arc<AtomicBool>,
    /// Shortest timer tick (see `schedule::Schedule`).
    pub tick_min: Duration,
    /// See `DriverConfig::spin`.
    pub spin: Duration,
    /// Pin the generator's thread to this CPU (`None`: unpinned).
    pub cpu: Option<usize>,
    /// The generator thread's nice value (0-19; `None`: unchanged). See [`place_generator`].
    pub nice: Option<i32>,
    /// See `DriverConfig::wake_quantile`.
    pub wake_quantile: f64,
}

impl FixBench {
    pub fn new(addr: SocketAddr) -> FixBench {
        FixBench {
            addr,
            target_comp_id: "RIALTO".into(),
            sender_prefix: "BOT".into(),
            bots: 10,
            rate_per_bot: 1_000,
            warmup: Duration::from_secs(2),
            duration: Duration::from_secs(10),
            window: 100,
            seed: 1,
            mix: MixConfig::default(),
            market: Market::default_contract(),
            stop: Arc::new(AtomicBool::new(false)),
            tick_min: Duration::from_micros(100),
            spin: Duration::ZERO,
            cpu: None,
            nice: None,
            wake_quantile: crate::schedule::WakeEarly::QUANTILE,
        }
    }
}

/// Places the calling thread (the generator: one thread drives every bot): pinned to `cpu`
/// and at nice `nice` (0-19: only ever lowered), each if given. Sharing a CPU with the
/// exchange's event loop, a generator at a lower priority does not preempt the loop in the
/// middle of an iteration when its timer fires; it sends once the loop has written its
/// answers and waits again (on this 2-vCPU VM at 50K req/s: P99 about 170 µs instead of 250).
pub fn place_generator(cpu: Option<usize>, nice: Option<i32>) -> Result<(), String> {
    if let Some(n) = nice {
        if !(0..=19).contains(&n) {
            return Err(format!(
                "--nice {n}: give 0 to 19 (the generator only lowers its priority)"
            ));
        }
        // On Linux a nice value is per thread: `None` is the calling thread.
        rustix::process::setpriority_process(None, n)
            .map_err(|e| format!("cannot set the generator's nice value to {n}: {e}"))?;
    }
    let Some(cpu) = cpu else {
        return Ok(());
    };
    let allowed = crate::noise::allowed_cpus()?;
    if !allowed.contains(&cpu) {
        return Err(format!(
            "--cpu {cpu}: this process may only run on CPUs {allowed:?}"
        ));
    }
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set)
        .map_err(|e| format!("cannot pin the generator to CPU {cpu}: {e}"))
}

/// Runs `f` on the calling thread when neither `cpu` nor `nice` is given; otherwise on a new
/// thread placed by [`place_generator`], and waits for it. A thread passes its nice value and
/// CPU mask on to the threads and processes it creates, and a nice value once raised cannot be
/// lowered again without privilege: placing the caller itself made every server a sweep
/// spawned after its first run share the generator's CPU at nice 10 (P99 at 5-10K req/s went
/// from about 100 µs to 500-700 µs from the second run on).
pub fn on_placed_thread<T: Send>(
    cpu: Option<usize>,
    nice: Option<i32>,
    f: impl FnOnce() -> Result<T, String> + Send,
) -> Result<T, String> {
    if cpu.is_none() && nice.is_none() {
        return f();
    }
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("generator".into())
            .spawn_scoped(s, || {
                place_generator(cpu, nice)?;
                f()
            })
            .map_err(|e| format!("cannot start the generator thread: {e}"))?
            .join()
            .map_err(|_| "the generator thread panicked".to_string())?
    })
}

/// Prints one progress line per second.
pub struct Progress<'w> {
    pub out: &'w mut dyn Write,
}

impl Observer for Progress<'_> {
    fn on_second(&mut self, v: &View<'_>, _market: &mut Market) {
        let s = v.last_second;
        let _ = writeln!(
            self.out,
            "[{:>4} s] {:<9} sent {:>7}/s  acks {:>7}/s  fills {:>7}/s  rejects {:>5}/s  shed {:>6}/s  errors {}  p50 {} µs  p99 {} µs  in flight {}{}",
            v.elapsed_s,
            v.phase.as_str(),
            s.sent,
            s.acks,
            s.fills,
            s.rejects,
            s.shed,
            v.totals.errors,
            us(at(v.last_second_latency, 50.0)),
            us(at(v.last_second_latency, 99.0)),
            v.in_flight,
            if v.behind_ns > 1_000_000 {
                format!("  behind schedule {} ms", v.behind_ns / 1_000_000)
            } else {
                String::new()
            }
        );
        let _ = self.out.flush();
    }
}

/// N bots at `rate_per_bot` each with the order mix; returns the measured result.
/// With `cpu` or `nice` set the run happens on a thread of its own placed there
/// ([`on_placed_thread`]): the calling thread, and every server a sweep spawns from it later,
/// keeps its own CPUs and priority.
pub fn run_fix(b: &FixBench, progress: &mut (dyn Write + Send)) -> Result<RunResult, String> {
    b.mix.validate()?;
    if b.bots == 0 {
        return Err("--bots must be at least 1".into());
    }
    on_placed_thread(b.cpu, b.nice, || run_fix_here(b, progress))
}

fn run_fix_here(b: &FixBench, progress: &mut dyn Write) -> Result<RunResult, String> {
    let (mut result, notes) = run_fix_observed(
        b,
        &mut Progress {
            out: &mut *progress,
        },
    )?;
    for n in notes {
        let _ = writeln!(progress, "note: {n}");
    }
    result.error_notes.truncate(crate::stats::ERROR_NOTES_MAX);
    Ok(result)
}

/// The bots of `b` on the calling thread, their reports to `obs`; the result and the notes of
/// the end of the run (mass cancel, logout).
pub(crate) fn run_fix_observed(
    b: &FixBench,
    obs: &mut impl Observer,
) -> Result<(RunResult, Vec<String>), String> {
    let mut cfg = DriverConfig::new(b.addr, b.bots, b.rate_per_bot);
    cfg.target_comp_id = b.target_comp_id.clone();
    cfg.sender_comp_ids = (1..=b.bots)
        .map(|i| format!("{}{i}", b.sender_prefix))
        .collect();
    cfg.warmup = b.warmup;
    cfg.duration = Some(b.duration);
    cfg.window = b.window;
    cfg.stop = b.stop.clone();
    cfg.tick_min = b.tick_min;
    cfg.spin = b.spin;
    cfg.wake_quantile = b.wake_quantile;
    let mut driver = Driver::connect(cfg)?;
    let mut gens: Vec<MixGenerator> = (0..b.bots as u64)
        .map(|i| {
            MixGenerator::new(
                b.mix.clone(),
                b.seed.wrapping_mul(1_000_003).wrapping_add(i),
            )
        })
        .collect();
    let mut market = b.market.clone();
    let result = driver.run(&mut gens, &mut market, obs)?;
    Ok((result, driver.finish()))
}

/// A flag set by Ctrl-C (SIGINT) or SIGTERM: a run stops sending, drains and reports.
pub fn stop_on_ctrl_c() -> Result<Arc<AtomicBool>, String> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, flag.clone())
            .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))?;
    }
    Ok(flag)
}

/// `rialto bench echo` settings.
#[derive(Clone, Debug)]
pub struct EchoBench {
    pub addr: SocketAddr,
    pub target_comp_id: String,
    pub sender_comp_id: String,
    pub rate: u64,
    /// Measured round trips.
    pub count: u64,
    pub warmup: Duration,
    pub seed: u64,
    pub stop: Arc<AtomicBool>,
    pub tick_min: Duration,
    /// See `DriverConfig::spin`.
    pub spin: Duration,
    /// Pin the generator's thread to this CPU (`None`: unpinned).
    pub cpu: Option<usize>,
    /// The generator thread's nice value (see [`place_generator`]).
    pub nice: Option<i32>,
    /// See `DriverConfig::wake_quantile`.
    pub wake_quantile: f64,
}

impl EchoBench {
    pub fn new(addr: SocketAddr) -> EchoBench {
        EchoBench {
            addr,
            target_comp_id: "RIALTO".into(),
            sender_comp_id: "CLIENT1".into(),
            rate: 2_000,
            count: 200_000,
            warmup: Duration::ZERO,
            seed: 1,
            stop: Arc::new(AtomicBool::new(false)),
            tick_min: Duration::from_micros(100),
            spin: Duration::ZERO,
            cpu: None,
            nice: None,
            wake_quantile: crate::schedule::WakeEarly::QUANTILE,
        }
    }
}

/// One session at a fixed rate: NewOrderSingle (IOC, far from the mid, so it never trades and
/// never rests) -> its first ExecutionReport.
/// Placed like [`run_fix`].
pub fn run_echo(b: &EchoBench, progress: &mut (dyn Write + Send)) -> Result<RunResult, String> {
    if b.rate == 0 || b.count == 0 {
        return Err("--rate and --count must be at least 1".into());
    }
    on_placed_thread(b.cpu, b.nice, || run_echo_here(b, progress))
}

fn run_echo_here(b: &EchoBench, progress: &mut dyn Write) -> Result<RunResult, String> {
    let mut cfg = DriverConfig::new(b.addr, 1, b.rate);
    cfg.target_comp_id = b.target_comp_id.clone();
    cfg.sender_comp_ids = vec![b.sender_comp_id.clone()];
    cfg.warmup = b.warmup;
    cfg.requests = Some(b.count);
    cfg.window = 1;
    cfg.stop = b.stop.clone();
    cfg.tick_min = b.tick_min;
    cfg.spin = b.spin;
    cfg.wake_quantile = b.wake_quantile;
    let mut driver = Driver::connect(cfg)?;
    let mut gens = vec![EchoGenerator::new(b.seed)];
    let result = driver.run(
        &mut gens,
        &mut Market::default_contract(),
        &mut Progress { out: progress },
    )?;
    for n in driver.finish() {
        let _ = writeln!(progress, "note: {n}");
    }
    Ok(result)
}

#[cfg(test)]
mod tests;
