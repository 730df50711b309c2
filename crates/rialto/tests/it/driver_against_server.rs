//! The driver against the real exchange server, started in this process on an ephemeral
//! loopback port with a temporary data directory: the order mix produces acks, fills and
//! rejects with no protocol errors; the echo scenario answers every order; and an exchange whose
//! inbound queue is tiny sheds load explicitly, which the bench counts apart.

use loadgen::{
    Driver, DriverConfig, EchoGenerator, Market, MixConfig, MixGenerator, Quiet, Schedule,
};
use std::sync::Arc;
use std::time::Duration;

fn start_server(dir: &std::path::Path, queue: Option<usize>) -> server::Server {
    let mut cfg = server::Config::defaults();
    cfg.data_dir = dir.join("data");
    cfg.listen = "127.0.0.1:0".parse().unwrap();
    if let Some(q) = queue {
        cfg.session_queue_max = q / 2;
    }
    server::Server::start(cfg, Arc::new(|_m: &str| {})).expect("server starts")
}

/// The run's report adds up: the measured period is the scheduled `secs`, longer only by how
/// late the generator's latest send was (a stalled host stretches it), and the achieved rate
/// is what was sent over that period, never above the offered rate. These compare the report's
/// own figures with each other and with the schedule, never with a wall-clock allowance; the
/// pacing itself is a figure of `rialto bench fix` (achieved rate, send lag).
fn paced(r: &loadgen::RunResult, rate: f64, secs: f64, tick_min: Duration) {
    let late_secs = r.send_lag.max() as f64 / 1e9;
    let tick_secs = Schedule::new(rate as u64, tick_min.as_nanos() as u64).tick_ns as f64 / 1e9;
    assert!(
        r.measured_secs > secs * 0.97 && r.measured_secs <= secs + late_secs + 2.0 * tick_secs,
        "measured {} s for a {secs} s schedule, latest send {late_secs} s late",
        r.measured_secs
    );
    let sent = r.counters.sent as f64;
    assert!(
        (r.rate_achieved * r.measured_secs - sent).abs() < 1.0,
        "{} req/s over {} s is not the {sent} sent",
        r.rate_achieved,
        r.measured_secs
    );
    assert!(
        r.rate_achieved < rate * 1.05,
        "{} req/s offered {rate}",
        r.rate_achieved
    );
}

#[test]
fn order_mix_gets_acks_fills_and_no_errors() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_server(dir.path(), None);
    let mut cfg = DriverConfig::new(server.addr, 4, 500);
    cfg.warmup = Duration::from_millis(200);
    cfg.duration = Some(Duration::from_millis(1500));
    cfg.window = 20;
    let tick_min = cfg.tick_min;
    let mut driver = Driver::connect(cfg).expect("bots log on");
    let mut bots: Vec<MixGenerator> = (0..4)
        .map(|i| MixGenerator::new(MixConfig::default(), 100 + i))
        .collect();
    let mut market = Market::default_contract();
    let r = driver.run(&mut bots, &mut market, &mut Quiet).unwrap();
    let notes = driver.finish();
    let c = r.counters;
    assert!(c.sent >= 2_800 && c.sent <= 3_100, "sent {}", c.sent);
    assert_eq!(c.answered, c.sent, "{:?} {:?}", c, r.error_notes);
    assert_eq!(c.errors, 0, "{:?}", r.error_notes);
    assert!(c.acks > c.sent / 2, "{c:?}");
    assert!(c.fills > 0, "{c:?}");
    assert!(c.sent_cancel > 0 && c.sent_replace > 0, "{c:?}");
    assert_eq!(c.shed, 0);
    assert_eq!(r.latency.len(), c.answered);
    assert!(notes.is_empty(), "{notes:?}");
    paced(&r, 2_000.0, 1.5, tick_min);
    server.shutdown().unwrap();
}

#[test]
fn echo_answers_every_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_server(dir.path(), None);
    let mut cfg = DriverConfig::new(server.addr, 1, 1_000);
    cfg.sender_comp_ids = vec!["CLIENT1".into()];
    cfg.warmup = Duration::from_millis(100);
    cfg.requests = Some(500);
    let tick_min = cfg.tick_min;
    let mut driver = Driver::connect(cfg).unwrap();
    let mut gens = vec![EchoGenerator::new(1)];
    let r = driver
        .run(&mut gens, &mut Market::default_contract(), &mut Quiet)
        .unwrap();
    driver.finish();
    assert_eq!(r.counters.sent, 500);
    assert_eq!(r.counters.acks, 500, "{:?}", r.counters);
    assert_eq!(r.counters.fills, 0);
    assert_eq!(r.counters.exchange_cancels, 500, "IOC remainders");
    // Every measured request's send lag is recorded. How late the generator sends (its timer
    // waking it for each request) is a figure, not asserted: `rialto bench echo` prints it
    // ("send lag behind schedule (the generator)").
    assert_eq!(r.send_lag.len(), 500);
    paced(&r, 1_000.0, 0.5, tick_min);
    server.shutdown().unwrap();
}

#[test]
fn overload_is_shed_explicitly_and_the_exchange_recovers() {
    let dir = tempfile::tempdir().unwrap();
    // A tiny inbound queue: 2 orders applied per event-loop iteration, 2 waiting, and the
    // gateway sheds beyond that.
    let server = start_server(dir.path(), Some(4));
    let run = |rate_per_bot: u64, seconds_ms: u64| {
        let mut cfg = DriverConfig::new(server.addr, 8, rate_per_bot);
        cfg.warmup = Duration::ZERO;
        cfg.duration = Some(Duration::from_millis(seconds_ms));
        cfg.window = 50;
        cfg.drain_timeout = Duration::from_secs(60);
        let mut driver = Driver::connect(cfg).unwrap();
        let mut bots: Vec<MixGenerator> = (0..8)
            .map(|i| MixGenerator::new(MixConfig::default(), i))
            .collect();
        let r = driver
            .run(&mut bots, &mut Market::default_contract(), &mut Quiet)
            .unwrap();
        driver.finish();
        r
    };
    // Offered far above what that takes, optimized build or not: 8 bots x 20,000/s write
    // 16 requests per 100 µs tick, so an iteration that reads them finds more than 4.
    let hot = run(20_000, 500);
    let c = hot.counters;
    assert!(c.shed > 0, "no load shed: {c:?}");
    assert_eq!(c.errors, 0, "{:?}", hot.error_notes);
    assert_eq!(c.answered, c.sent, "every request answered, shed or not");
    assert!(c.acks > 0);
    // Shed answers are timed apart; accepted requests keep their own histogram.
    assert_eq!(hot.shed_latency.len(), c.shed);
    assert_eq!(hot.latency.len(), c.answered - c.shed);
    assert!(
        server
            .counters
            .busy_rejects
            .load(std::sync::atomic::Ordering::Relaxed)
            >= c.shed
    );
    // Load drops: (almost) nothing is shed any more. A 4-deep queue can still overflow if
    // the exchange's thread is descheduled for a while on a busy machine, hence "almost".
    let calm = run(10, 1_000);
    assert!(
        calm.counters.shed * 10 <= calm.counters.sent,
        "{:?}",
        calm.counters
    );
    assert!(
        c.shed * calm.counters.sent > calm.counters.shed * c.sent,
        "the hot run shed a larger share: {c:?} {:?}",
        calm.counters
    );
    assert_eq!(calm.counters.errors, 0, "{:?}", calm.error_notes);
    assert!(calm.counters.acks > 0);
    server.shutdown().unwrap();
}
