use super::*;

/// Plays `n` actions against an instant exchange: resting orders are acknowledged at once,
/// cancels succeed, replaces succeed; returns the actions.
fn simulate(g: &mut MixGenerator, window: usize, n: usize) -> Vec<Action> {
    let market = Market::default_contract();
    let mut orders = BotOrders::new(window);
    let mut out = Vec::with_capacity(n);
    for k in 0..n as u64 {
        let a = g.next(&mut orders, &market);
        match a {
            Action::New {
                slot,
                symbol,
                side,
                price_ticks,
                qty,
                ..
            } if slot != 0 => {
                orders.on_new_sent(slot, k, symbol, side, price_ticks, qty);
                orders.on_new_ack(slot, k);
            }
            Action::Cancel { slot } => {
                orders.on_request_sent(slot, k, None);
                orders.on_gone(slot, k);
            }
            Action::Replace {
                slot,
                price_ticks,
                qty,
            } => {
                orders.on_request_sent(slot, k, Some((price_ticks, qty)));
                orders.on_replaced(slot, k, Some(qty));
            }
            _ => {}
        }
        assert!(orders.live_count() <= window);
        out.push(a);
    }
    out
}

#[test]
fn same_seed_same_stream_other_seed_other_stream() {
    let a = simulate(&mut MixGenerator::new(MixConfig::default(), 9), 50, 5_000);
    let b = simulate(&mut MixGenerator::new(MixConfig::default(), 9), 50, 5_000);
    let c = simulate(&mut MixGenerator::new(MixConfig::default(), 10), 50, 5_000);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn mix_proportions_follow_the_config() {
    let cfg = MixConfig::default();
    let acts = simulate(&mut MixGenerator::new(cfg.clone(), 1), 100_000, 100_000);
    let count = |f: &dyn Fn(&Action) -> bool| acts.iter().filter(|a| f(a)).count() as f64;
    let n = acts.len() as f64;
    let cancels = count(&|a| matches!(a, Action::Cancel { .. })) / n;
    let replaces = count(&|a| matches!(a, Action::Replace { .. })) / n;
    let news = count(&|a| matches!(a, Action::New { .. }));
    let market = count(&|a| {
        matches!(
            a,
            Action::New {
                ord_type: OrdType::Market,
                ..
            }
        )
    }) / news;
    let limits = news * (1.0 - market);
    let ioc = count(&|a| {
        matches!(
            a,
            Action::New {
                ord_type: OrdType::Limit,
                tif: TimeInForce::Ioc,
                ..
            }
        )
    }) / limits;
    let buys = count(&|a| {
        matches!(
            a,
            Action::New {
                side: Side::Buy,
                ..
            }
        )
    }) / news;
    // The window never fills here, so cancels/replaces only miss when nothing is live (at
    // the very start).
    assert!((cancels - 0.20).abs() < 0.01, "cancels {cancels}");
    assert!((replaces - 0.10).abs() < 0.01, "replaces {replaces}");
    assert!((market - 0.10).abs() < 0.01, "market {market}");
    assert!((ioc - 0.15).abs() < 0.01, "ioc {ioc}");
    assert!((buys - 0.5).abs() < 0.01, "buys {buys}");
}

#[test]
fn prices_spread_around_the_mid_on_the_tick_grid() {
    let acts = simulate(&mut MixGenerator::new(MixConfig::default(), 3), 100, 20_000);
    let mut buys = Vec::new();
    for a in &acts {
        if let Action::New {
            symbol: 0,
            side: Side::Buy,
            ord_type: OrdType::Limit,
            price_ticks,
            ..
        } = a
        {
            buys.push(*price_ticks);
        }
    }
    let mean = buys.iter().sum::<i64>() / buys.len() as i64;
    assert!((mean - (10_000 - 3)).abs() <= 1, "mean {mean}");
    assert!(buys.iter().any(|&p| p > 10_000) && buys.iter().any(|&p| p < 9_990));
}

#[test]
fn a_full_window_cancels_instead_of_adding() {
    let acts = simulate(&mut MixGenerator::new(MixConfig::default(), 5), 4, 2_000);
    let resting_news = acts
        .iter()
        .filter(|a| matches!(a, Action::New { slot, .. } if *slot != 0))
        .count();
    let cancels = acts
        .iter()
        .filter(|a| matches!(a, Action::Cancel { .. }))
        .count();
    assert!(
        cancels * 2 > resting_news,
        "{cancels} cancels for {resting_news} news"
    );
}

#[test]
fn echo_orders_never_cross_and_never_rest() {
    let market = Market::default_contract();
    let mut g = EchoGenerator::new(1);
    let mut orders = BotOrders::new(1);
    for _ in 0..1_000 {
        match g.next(&mut orders, &market) {
            Action::New {
                symbol,
                side,
                tif,
                price_ticks,
                slot,
                ..
            } => {
                let mid = market.symbols[symbol as usize].mid_ticks;
                assert_eq!((tif, slot), (TimeInForce::Ioc, 0));
                match side {
                    Side::Buy => assert!(price_ticks < mid),
                    Side::Sell => assert!(price_ticks > mid),
                }
            }
            other => panic!("echo sent {other:?}"),
        }
    }
}

#[test]
fn config_validation_names_the_problem() {
    let bad = MixConfig {
        cancel_pct: 80,
        replace_pct: 30,
        ..MixConfig::default()
    };
    assert!(bad.validate().unwrap_err().contains("cancel_pct"));
    assert!(MixConfig::default().validate().is_ok());
}

#[test]
fn a_market_of_named_symbols_keeps_known_mids_and_refuses_bad_names() {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let m = Market::with_symbols(&names(&["BOLT", "DUNE"])).unwrap();
    let got: Vec<(&str, i64)> = m
        .symbols
        .iter()
        .map(|s| (s.name.as_str(), s.mid_ticks))
        .collect();
    assert_eq!(got, [("BOLT", 5_000), ("DUNE", 10_000)]);
    for (bad, why) in [
        (names(&[]), "at least one"),
        (names(&["ACME", "ACME"]), "given twice"),
        (names(&["A-B"]), "letters or digits"),
        (names(&["TOOLONGSYM"]), "letters or digits"),
    ] {
        let e = Market::with_symbols(&bad).unwrap_err();
        assert!(e.contains(why), "{bad:?}: {e}");
    }
}

#[test]
fn the_mix_trades_every_symbol_of_its_market() {
    let names: Vec<String> = ["ACME", "BOLT", "CRNK", "DUNE"].map(String::from).to_vec();
    let market = Market::with_symbols(&names).unwrap();
    let mut g = MixGenerator::new(MixConfig::default(), 7);
    let mut orders = BotOrders::new(100);
    let mut seen = [false; 4];
    for k in 0..2_000u64 {
        match g.next(&mut orders, &market) {
            Action::New {
                symbol,
                side,
                price_ticks,
                qty,
                slot,
                ..
            } => {
                seen[symbol as usize] = true;
                if slot != 0 {
                    orders.on_new_sent(slot, k, symbol, side, price_ticks, qty);
                    orders.on_new_ack(slot, k);
                }
            }
            Action::Cancel { slot } => {
                orders.on_request_sent(slot, k, None);
                orders.on_gone(slot, k);
            }
            _ => {}
        }
    }
    assert_eq!(seen, [true; 4]);
}
