//! `rialto bench fix`: N FIX bot sessions, each open loop at its rate with a realistic order
//! mix (Ember's throughput test), latency from each request's intended send time to its first
//! ExecutionReport (or reject) in an HdrHistogram. Prints the seeds' percentile table, the
//! counters (acks, fills, rejects, shed, errors) and, last, one parseable summary line:
//! `rate_offered=.. rate_achieved=.. p50_us=.. ... rejects=.. shed=.. errors=..`.
//!
//! Glue only: the work is `loadgen::bench::run_fix`. With `--spawn-server` the run gets its own
//! `rialto serve` child on a free port with a fresh temporary data directory.

use super::CmdResult;
use loadgen::bench::{run_fix, FixBench};
use loadgen::spawn::{SpawnSpec, SpawnedServer};
use loadgen::{Market, MixConfig};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Options shared by `bench fix` and `bench sweep`.
#[derive(clap::Args, Debug, Clone)]
pub struct BotArgs {
    /// Exchange host (loopback only on shared machines).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// Exchange FIX port (Rialto 9878, the QuickFIX/J reference exchange 9877).
    #[arg(long, default_value_t = 9878)]
    pub port: u16,
    /// Number of bot sessions (SenderCompIDs BOT1..BOTn; the default contract has 64).
    /// `bench sweep` takes a list (`1,10,50`) and runs every rate with each count.
    #[arg(long, default_value = "10", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub bots: Vec<u64>,
    /// Measured period, seconds.
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Unmeasured warm-up before it, seconds.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    /// Active-orders window: resting orders each bot keeps at most.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub window: u64,
    /// Seed of the bots' order generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Standard deviation of limit prices around the mid, in ticks.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(i64).range(1..=100_000))]
    pub sd_ticks: i64,
    /// The instruments the bots trade, comma-separated (the server must list them, tick 0.01):
    /// ACME, BOLT and CRNK keep their mids of 100.00, 50.00 and 25.00, others trade around
    /// 100.00. Default: the default contract's three.
    #[arg(long, value_delimiter = ',')]
    pub symbols: Vec<String>,
    /// TargetCompID of the exchange.
    #[arg(long, default_value = "RIALTO")]
    pub target_comp_id: String,
    /// Bots' SenderCompIDs are this prefix and 1..n.
    #[arg(long, default_value = "BOT")]
    pub sender_prefix: String,
    /// Start `rialto serve` for each run (fresh temporary data dir, free port; --host/--port
    /// are ignored).
    #[arg(long)]
    pub spawn_server: bool,
    /// Durability of the spawned server: process or fsync.
    #[arg(long, default_value = "process", requires = "spawn_server")]
    pub durability: String,
    /// Idle mode of the spawned server: park (sleep in epoll_wait) or spin (busy-poll one
    /// core: lower latency, and the generator gets the other core to itself).
    #[arg(long, default_value = "park", requires = "spawn_server")]
    pub server_idle: String,
    /// Pin the spawned server's event loop to this CPU (its other threads stay off it); put
    /// the generator elsewhere with --cpu.
    #[arg(long, requires = "spawn_server")]
    pub server_cpu: Option<usize>,
    /// Append the spawned server's output (start-up, snapshots, its event loop's account of
    /// slow iterations and time off CPU) to this file after each run.
    #[arg(long, requires = "spawn_server")]
    pub server_log: Option<std::path::PathBuf>,
    /// Pin the generator (one thread drives every bot) to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Run the generator at this nice value (0-19), below the exchange: sharing a CPU with
    /// the exchange's loop (--server-cpu N --cpu N), it then does not preempt the loop in the
    /// middle of an iteration.
    #[arg(long, value_parser = clap::value_parser!(i32).range(0..=19))]
    pub nice: Option<i32>,
    /// Shortest timer tick, µs: up to one request per tick is sent exactly on time; above
    /// that rate, requests go out in small batches at each tick (measured from the tick).
    /// Each tick costs the generator about 40 µs of CPU on this VM (a wake-up and a write that
    /// wakes the exchange), so 100 µs keeps it under half a core up to 200K req/s; 150 takes
    /// it to about 40% there with 1.5x larger batches; 50 halves the batches and costs 60-75%.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub tick_us: u64,
    /// Busy-poll (instead of parking) when the next request is due within this many µs, at
    /// the cost of a busy core. 0 (the default): arm the timer early by its learnt wake-up
    /// latency and spin on the clock for the rest, which puts sends within a few µs of their
    /// due time for a few % of a core.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub spin_us: u64,
    /// With --spin-us 0: the share of timer wake-ups the generator arms its timer early enough
    /// for (0.5-0.999). Higher spins longer before each tick (at most half a tick and 200
    /// µs) and sends late less often.
    #[arg(long, default_value_t = 0.95)]
    pub wake_quantile: f64,
    /// Start this command for each run instead (e.g. "java -Xms1g -Xmx1g -XX:+AlwaysPreTouch
    /// -jar java/refexchange/target/refexchange.jar --port {port} --data-dir {dir}"); {port} and
    /// {dir} are replaced.
    #[arg(long, conflicts_with = "spawn_server")]
    pub spawn_cmd: Option<String>,
}

fn seconds(name: &str, v: f64) -> Result<Duration, String> {
    if !(0.0..=86_400.0).contains(&v) {
        return Err(format!("--{name} {v}: give seconds between 0 and 86400"));
    }
    Ok(Duration::from_secs_f64(v))
}

impl BotArgs {
    /// The spawn spec, if a server is to be started per run.
    pub fn spawn_spec(&self) -> Result<Option<SpawnSpec>, String> {
        if self.spawn_server {
            if !matches!(self.durability.as_str(), "process" | "fsync") {
                return Err(format!(
                    "--durability {:?}: use process or fsync",
                    self.durability
                ));
            }
            if !matches!(self.server_idle.as_str(), "park" | "spin") {
                return Err(format!(
                    "--server-idle {:?}: use park or spin",
                    self.server_idle
                ));
            }
            let exe = std::env::current_exe()
                .map_err(|e| format!("cannot find the rialto executable: {e}"))?;
            let mut spec =
                SpawnSpec::rialto(exe, &self.durability, &self.server_idle, self.server_cpu);
            spec.keep_log = self.server_log.clone();
            return Ok(Some(spec));
        }
        match &self.spawn_cmd {
            Some(c) => {
                let mut spec = SpawnSpec::from_command_line(c)?;
                spec.keep_log = self.server_log.clone();
                Ok(Some(spec))
            }
            None => Ok(None),
        }
    }

    /// The one bots count of `bench fix`.
    pub fn single_bots(&self) -> Result<u64, String> {
        match self.bots.as_slice() {
            [n] => Ok(*n),
            _ => Err(format!(
                "--bots {:?}: bench fix takes one count (bench sweep takes a list)",
                self.bots
            )),
        }
    }

    /// The bench settings for one run of `bots` bots at `rate_per_bot` against `addr`; `stop`
    /// is the Ctrl-C flag (`loadgen::bench::stop_on_ctrl_c`).
    pub fn bench(
        &self,
        addr: SocketAddr,
        bots: u64,
        rate_per_bot: u64,
        stop: Arc<AtomicBool>,
    ) -> Result<FixBench, String> {
        let mut b = FixBench::new(addr);
        b.bots = bots as usize;
        b.rate_per_bot = rate_per_bot;
        b.warmup = seconds("warmup", self.warmup)?;
        b.duration = seconds("duration", self.duration)?;
        if b.duration.is_zero() {
            return Err("--duration must be more than 0".into());
        }
        b.window = self.window as usize;
        b.seed = self.seed;
        b.target_comp_id = self.target_comp_id.clone();
        b.sender_prefix = self.sender_prefix.clone();
        if !self.symbols.is_empty() {
            b.market = Market::with_symbols(&self.symbols)?;
        }
        b.mix = MixConfig {
            sd_ticks: self.sd_ticks,
            ..MixConfig::default()
        };
        b.stop = stop;
        b.tick_min = Duration::from_micros(self.tick_us);
        b.spin = Duration::from_micros(self.spin_us);
        b.cpu = self.cpu;
        b.nice = self.nice;
        if !(0.5..=0.999).contains(&self.wake_quantile) {
            return Err(format!(
                "--wake-quantile {}: give 0.5 to 0.999",
                self.wake_quantile
            ));
        }
        b.wake_quantile = self.wake_quantile;
        Ok(b)
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::new(self.host, self.port)
    }
}

/// Runs `f` against a spawned server (when `spec` is given) or against `addr`.
pub fn with_server<T>(
    spec: Option<&SpawnSpec>,
    addr: SocketAddr,
    f: impl FnOnce(SocketAddr) -> Result<T, String>,
) -> Result<T, String> {
    match spec {
        None => f(addr),
        Some(spec) => {
            let server = SpawnedServer::start(spec)?;
            eprintln!(
                "started {} on {} (data in {})",
                spec.program.display(),
                server.addr,
                server.data_dir.path().display()
            );
            let r = f(server.addr);
            let stopped = server.stop();
            let out = r?;
            if let Err(e) = stopped {
                eprintln!("warning: {e}");
            }
            Ok(out)
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bots: BotArgs,
    /// Requests per second of each bot (open loop).
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    rate: u64,
}

pub fn run(args: Args) -> CmdResult {
    let spec = args.bots.spawn_spec()?;
    let bots = args.bots.single_bots()?;
    let stop = loadgen::bench::stop_on_ctrl_c()?;
    let result = with_server(spec.as_ref(), args.bots.addr(), |addr| {
        let b = args.bots.bench(addr, bots, args.rate, stop)?;
        eprintln!(
            "bench fix: {} bots x {} req/s = {} req/s offered to {addr}, warm-up {:?}, measured {:?}, window {}",
            b.bots,
            b.rate_per_bot,
            b.bots as u64 * b.rate_per_bot,
            b.warmup,
            b.duration,
            b.window
        );
        run_fix(&b, &mut std::io::stderr())
    })?;
    print!("{}", result.report());
    Ok(())
}
