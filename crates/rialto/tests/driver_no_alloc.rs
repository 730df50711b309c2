//! The driver allocates nothing per message in steady state: once its buffers have grown, a
//! run of 4,000 requests allocates no more than a run of 400 (the fixed per-run setup:
//! histograms). The exchange runs in this process on other threads; the count is per thread,
//! so only the driver's thread is counted.

use loadgen::{Driver, DriverConfig, Market, MixConfig, MixGenerator, Quiet};
use std::sync::Arc;
use std::time::Duration;

#[global_allocator]
static GLOBAL: alloc_count::Counting = alloc_count::Counting;

use alloc_count::allocs;

#[test]
fn steady_state_runs_do_not_allocate_per_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = server::Config::defaults();
    cfg.data_dir = dir.path().join("data");
    cfg.listen = "127.0.0.1:0".parse().unwrap();
    let server = server::Server::start(cfg, Arc::new(|_m: &str| {})).unwrap();
    let mut dcfg = DriverConfig::new(server.addr, 4, 2_000);
    dcfg.warmup = Duration::ZERO;
    dcfg.window = 20;
    let mut driver = Driver::connect(dcfg).unwrap();
    let mut bots: Vec<MixGenerator> = (0..4)
        .map(|i| MixGenerator::new(MixConfig::default(), i))
        .collect();
    let mut market = Market::default_contract();
    let mut run = |driver: &mut Driver, ms: u64| {
        driver.set_duration(Some(Duration::from_millis(ms)));
        let before = allocs();
        let r = driver.run(&mut bots, &mut market, &mut Quiet).unwrap();
        assert_eq!(r.counters.errors, 0, "{:?}", r.error_notes);
        assert!(r.counters.fills > 0);
        (allocs() - before, r.counters.sent)
    };
    let _warm = run(&mut driver, 300);
    let (small, n_small) = run(&mut driver, 50);
    let (large, n_large) = run(&mut driver, 500);
    assert!(n_large >= 9 * n_small, "{n_small} then {n_large} requests");
    assert!(
        large <= small + 8,
        "allocations grow with messages: {small} for {n_small} requests, {large} for {n_large}"
    );
    driver.finish();
    server.shutdown().unwrap();
}
