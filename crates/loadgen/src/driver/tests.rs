use super::*;

#[test]
fn config_errors_are_specific() {
    let addr = "127.0.0.1:1".parse().unwrap();
    let mut c = DriverConfig::new(addr, 2, 0);
    assert!(c.validate().unwrap_err().contains("rate per bot"));
    c.rate_per_bot = u64::MAX;
    assert!(c.validate().unwrap_err().contains("total rate"));
    c.rate_per_bot = 10;
    c.tick_min = Duration::ZERO;
    assert!(c.validate().unwrap_err().contains("tick"));
    c.tick_min = Duration::from_micros(20);
    c.wake_quantile = 1.0;
    assert!(c.validate().unwrap_err().contains("quantile"));
    c.wake_quantile = 0.9;
    c.sender_comp_ids.clear();
    assert!(c.validate().unwrap_err().contains("bot"));
}
