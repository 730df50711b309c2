use super::*;
use std::time::Duration;

#[test]
fn defaults_match_the_issue() {
    let c = Config::defaults();
    assert_eq!(c.listen.to_string(), "127.0.0.1:9878");
    assert_eq!(c.instruments.len(), 3);
    assert_eq!(c.instruments[0].instrument.tick, 1);
    assert_eq!(c.instruments[0].price_decimals, 2);
    assert_eq!(c.sessions.len(), 73 + 64 + 10);
    assert_eq!(c.sessions[0].sender_comp_id, "CLIENT1");
    assert_eq!(c.sessions[0].target_comp_id, "RIALTO");
    assert_eq!(c.durability, Durability::Process);
    let md1 = &c.sessions[73];
    assert_eq!(md1.sender_comp_id, "MD1");
    assert_eq!(md1.market_data, MarketDataAccess::Only);
    let dc1 = &c.sessions[137];
    assert_eq!(
        (dc1.sender_comp_id.as_str(), dc1.drop_copy),
        ("DROPCOPY1", true)
    );
    assert_eq!(c.firms[dc1.firm].name, "CLIENT1");
    let c42 = &c.sessions[146];
    assert_eq!(
        (c42.sender_comp_id.as_str(), c42.begin_string.as_str()),
        ("CLIENT1_42", "FIX.4.2")
    );
    assert_eq!(c42.firm, dc1.firm);
    assert!(c.fix_config().sessions[137].drop_copy);
    assert_eq!(
        c.market_data_listen().unwrap().to_string(),
        "127.0.0.1:9879"
    );
}

#[test]
fn market_data_keys() {
    let c = Config::from_toml(
        "listen = \"127.0.0.1:0\"\n[market_data]\nsubscriptions_max = 3\nnice = 0\n",
    )
    .unwrap();
    let md = c.market_data.unwrap();
    assert_eq!((md.subscriptions_max, md.nice), (3, 0));
    assert_eq!(
        c.market_data_listen().unwrap().port(),
        0,
        "ephemeral like listen"
    );
    let off = Config::from_toml("[market_data]\nenabled = false\n").unwrap();
    assert!(off.market_data.is_none() && off.market_data_listen().is_none());
    for bad in [
        "[market_data]\nnice = 20\n",
        "[market_data]\nlogout_bytes = 10\nconflate_bytes = 10\n",
        "[market_data]\nlisten = \"nowhere\"\n",
        "[market_data]\nbogus = 1\n",
    ] {
        assert!(Config::from_toml(bad).is_err(), "{bad}");
    }
    let s = Config::from_toml(
        "[[firms]]\nname = \"F\"\naccounts = [1]\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\nmarket_data = \"only\"\nmarket_data_extensions = true\n",
    )
    .unwrap();
    assert_eq!(s.sessions[0].market_data, MarketDataAccess::Only);
    assert!(s.fix_config().sessions[0].market_data_extensions);
    assert!(Config::from_toml(
        "[[firms]]\nname = \"F\"\naccounts = [1]\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\nmarket_data = \"maybe\"\n"
    )
    .is_err());
}

#[test]
fn tls_section_and_client_cert_names() {
    let c = Config::from_toml(
        "[tls]\ncert_file = \"s.pem\"\nkey_file = \"k.pem\"\nclient_ca_file = \"ca.pem\"\n\
         [[firms]]\nname = \"F\"\naccounts = [1]\n\
         [[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\nclient_cert_name = \"a.example\"\n\
         [[sessions]]\nsender_comp_id = \"B\"\nfirm = \"F\"\n",
    )
    .unwrap();
    let tls = c.tls.as_ref().unwrap();
    assert_eq!(
        (tls.cert_file.to_str(), tls.key_file.to_str()),
        (Some("s.pem"), Some("k.pem"))
    );
    assert_eq!(
        tls.client_ca_file.as_deref(),
        Some(std::path::Path::new("ca.pem"))
    );
    assert_eq!(
        (
            c.sessions[0].client_cert_name.as_deref(),
            c.sessions[1].client_cert_name.as_deref()
        ),
        (Some("a.example"), None)
    );
    assert!(Config::defaults().tls.is_none());
    // A certificate name without client certificates could never be checked.
    let e = Config::from_toml(
        "[tls]\ncert_file = \"s.pem\"\nkey_file = \"k.pem\"\n[[firms]]\nname = \"F\"\n\
         accounts = [1]\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\n\
         client_cert_name = \"a\"\n",
    )
    .unwrap_err();
    assert!(
        e.0.contains("session A") && e.0.contains("client_ca_file"),
        "{e}"
    );
    let e = Config::from_toml("[tls]\ncert_file = \"s.pem\"\n").unwrap_err();
    assert!(e.0.contains("key_file"), "{e}");
    let e =
        Config::from_toml("[tls]\ncert_file = \"s\"\nkey_file = \"k\"\nca = \"x\"\n").unwrap_err();
    assert!(e.0.contains("unknown field"), "{e}");
}

#[test]
fn drop_copy_sessions() {
    let base = "[[firms]]\nname = \"F\"\naccounts = [1]\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\n[[sessions]]\nsender_comp_id = \"DC\"\nfirm = \"F\"\nfix_version = \"FIXT.1.1\"\ndrop_copy = true\n";
    let c = Config::from_toml(base).unwrap();
    let f = c.fix_config();
    assert_eq!(
        (f.sessions[0].drop_copy, f.sessions[1].drop_copy),
        (false, true)
    );
    for (extra, why) in [
        ("market_data = \"only\"\n", "order-entry port"),
        ("cancel_on_disconnect = true\n", "no orders"),
    ] {
        let e = Config::from_toml(&format!("{base}{extra}")).unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
    }
}

#[test]
fn the_example_file_is_valid() {
    let c = Config::from_toml(include_str!("../../rialto.example.toml")).unwrap();
    assert_eq!(c.instruments[1].instrument.tick, 5);
    assert_eq!(c.instruments[1].instrument.lot, 10);
    assert_eq!(c.firms[0].accounts, vec![1, 2]);
    let h = c.sessions[0]
        .password_hash
        .as_deref()
        .expect("ALPHA1 has a password");
    assert!(crate::auth::verify(h, b"change-me"));
    assert_eq!(c.sessions[0].username.as_deref(), Some("alpha-trader"));
    assert_eq!(c.sessions[1].target_comp_id, "RIALTO");
    assert_eq!(c.firms[0].limits.max_open_orders, Some(100_000));
    assert_eq!(c.firms[0].limits.max_open_orders_per_account, Some(60_000));
    assert_eq!(c.firms[1].limits, exchange::FirmLimits::default());
    assert_eq!((c.firm_capacity_percent, c.mass_cancel_chunk), (25, 1000));
}

/// By default one firm takes at most a quarter of the capacity and mass cancels go in
/// chunks of 1,000; the limits reach the exchange; out-of-range values are refused.
#[test]
fn open_order_limits_and_mass_cancel_chunks() {
    let d = Config::defaults();
    assert_eq!(d.firm_capacity_percent, FIRM_CAPACITY_PERCENT_DEFAULT);
    assert_eq!(d.mass_cancel_chunk, exchange::MASS_CANCEL_CHUNK_DEFAULT);
    let x = d.exchange_config();
    assert_eq!(x.firm_capacity_percent, 25);
    assert_eq!(x.firm_limits.len(), x.firms.len());
    let base = "[[firms]]\nname = \"F\"\naccounts = [1]\nmax_open_orders = 7\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\n";
    let c = Config::from_toml(&format!(
        "firm_capacity_percent = 100\nmass_cancel_chunk = 5\n{base}"
    ))
    .unwrap();
    let x = c.exchange_config();
    assert_eq!(x.firm_limits[0].max_open_orders, Some(7));
    assert_eq!((x.firm_capacity_percent, x.mass_cancel_chunk), (100, 5));
    for (bad, why) in [
        ("firm_capacity_percent = 0\n", "firm_capacity_percent"),
        ("firm_capacity_percent = 101\n", "firm_capacity_percent"),
        ("mass_cancel_chunk = 0\n", "mass_cancel_chunk"),
    ] {
        let e = Config::from_toml(&format!("{bad}{base}")).unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
    }
    let zero = base.replace("max_open_orders = 7", "max_open_orders_per_account = 0");
    let e = Config::from_toml(&zero).unwrap_err();
    assert!(e.to_string().contains("must be >= 1"), "{e}");
}

/// Price bands, reference prices and order limits per instrument, order and account limits
/// per firm: notionals are scaled to the most decimals any instrument's prices have; values
/// out of range are refused by name.
#[test]
fn pre_trade_risk_limits() {
    let toml = |acme: &str, firm: &str| {
        format!(
            "[[instruments]]\nsymbol = \"ACME\"\ntick = \"0.01\"\n{acme}\n\
             [[instruments]]\nsymbol = \"BIG\"\ntick = \"5\"\n\
             [[firms]]\nname = \"F\"\naccounts = [1]\n{firm}\n\
             [[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\n"
        )
    };
    let c = Config::from_toml(&toml(
        "band_bps = 500\nreference_price = \"100.05\"\nmax_order_qty = 1000\nmax_order_notional = \"50000.5\"",
        "max_order_qty = 10\nmax_order_notional = \"2000\"\nmax_open_notional_per_account = \"1e3\"",
    ));
    let e = c.unwrap_err().to_string();
    assert!(
        e.contains("max_open_notional_per_account") && e.contains("\"1e3\""),
        "{e}"
    );
    let c = Config::from_toml(&toml(
        "band_bps = 500\nreference_price = \"100.05\"\nmax_order_qty = 1000\nmax_order_notional = \"50000.5\"\n\
         breaker_bps = 700\nbreaker_window_secs = 30\nbreaker_halt_secs = 120\nbreaker_auction_secs = 15",
        "max_order_qty = 10\nmax_order_notional = \"2000\"\nmax_open_notional_per_account = \"1000.25\"\nmax_net_position_per_account = 300",
    ))
    .unwrap();
    let x = c.exchange_config();
    assert_eq!(x.price_decimals, [2, 0]);
    assert_eq!(x.notional_decimals(), 2);
    assert_eq!(
        x.instrument_risk[0],
        exchange::InstrumentRisk {
            band_bps: Some(500),
            reference_price: Some(10_005),
            max_order_qty: Some(1000),
            max_order_notional: Some(5_000_050),
            breaker: Some(exchange::Breaker {
                bps: 700,
                window_ns: 30_000_000_000,
                halt_ns: 120_000_000_000,
                auction_ns: 15_000_000_000,
            }),
        }
    );
    assert_eq!(x.instrument_risk[1], exchange::InstrumentRisk::default());
    let f = x.firm_limits[0];
    assert_eq!(
        (
            f.max_order_qty,
            f.max_order_notional,
            f.max_open_notional_per_account,
            f.max_net_position_per_account
        ),
        (Some(10), Some(200_000), Some(100_025), Some(300))
    );
    for (acme, firm, why) in [
        ("band_bps = 0", "", "band_bps of ACME must be 1 to 10000"),
        (
            "band_bps = 10001",
            "",
            "band_bps of ACME must be 1 to 10000",
        ),
        (
            "reference_price = \"100.001\"",
            "",
            "reference_price \"100.001\" of ACME",
        ),
        (
            "reference_price = \"-1\"",
            "",
            "reference_price \"-1\" of ACME",
        ),
        (
            "max_order_qty = 0",
            "",
            "max_order_qty of ACME must be >= 1",
        ),
        ("breaker_bps = 500", "", "the breaker of ACME"),
        (
            "breaker_auction_secs = 10",
            "",
            "breaker_auction_secs of ACME: 0 to 86400, with a breaker",
        ),
        (
            "breaker_bps = 500\nbreaker_window_secs = 5\nbreaker_halt_secs = 60\n\
             breaker_auction_secs = 86401",
            "",
            "breaker_auction_secs of ACME",
        ),
        (
            "breaker_bps = 500\nbreaker_window_secs = 0\nbreaker_halt_secs = 60",
            "",
            "the breaker of ACME",
        ),
        (
            "max_order_notional = \"0\"",
            "",
            "max_order_notional of ACME",
        ),
        ("", "max_order_qty = 0", "firm F: max_order_qty"),
        (
            "",
            "max_net_position_per_account = 0",
            "max_net_position_per_account must be >= 1",
        ),
        (
            "",
            "max_order_notional = \"1.001\"",
            "firm F: max_order_notional",
        ),
    ] {
        let e = Config::from_toml(&toml(acme, firm))
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{acme} {firm}: {e}");
    }
}

/// A password in plain text is refused, naming `rialto passwd`; a hash that is not an
/// argon2 PHC string is refused with what is wrong; so are bad throttle delays.
#[test]
fn passwords_are_salted_hashes() {
    let session = |line: &str| {
        format!(
            "[[firms]]\nname = \"F\"\naccounts = [1]\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\n{line}\n"
        )
    };
    let e = Config::from_toml(&session("password = \"pw\"")).unwrap_err();
    assert!(e.to_string().contains("rialto passwd"), "{e}");
    assert!(e.to_string().contains("password_hash"), "{e}");
    for (hash, why) in [
        ("pw", "not a PHC string"),
        (
            "$scrypt$ln=4,r=8,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo",
            "not argon2",
        ),
        ("$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ", "no hash"),
    ] {
        let e = Config::from_toml(&session(&format!("password_hash = \"{hash}\""))).unwrap_err();
        assert!(e.to_string().contains(why), "{hash}: {e}");
    }
    let e = Config::from_toml(&session("username = \"\"")).unwrap_err();
    assert!(e.to_string().contains("username"), "{e}");
    for bad in [
        "failed_logon_delay_ms = 0",
        "failed_logon_delay_ms = 500\nfailed_logon_delay_max_ms = 100",
    ] {
        assert!(Config::from_toml(bad).is_err(), "{bad}");
    }
    let c =
        Config::from_toml("failed_logon_delay_ms = 50\nfailed_logon_delay_max_ms = 60").unwrap();
    assert_eq!(c.failed_logon_delay_max, Duration::from_millis(60));
    // The defaults: no session needs a password.
    assert!(Config::defaults()
        .sessions
        .iter()
        .all(|s| s.password_hash.is_none()));
}

#[test]
fn ticks_parse_exactly() {
    assert_eq!(parse_tick("0.01").unwrap(), (1, 2));
    assert_eq!(parse_tick("0.05").unwrap(), (5, 2));
    assert_eq!(parse_tick("0.50").unwrap(), (5, 1));
    assert_eq!(parse_tick("1").unwrap(), (1, 0));
    assert!(parse_tick("0").is_err());
    assert!(parse_tick("-1").is_err());
    assert!(parse_tick("abc").is_err());
}

#[test]
fn toml_file_overrides() {
    let c = Config::from_toml(
        r#"
listen = "127.0.0.1:0"
durability = "fsync"
[[instruments]]
symbol = "XYZ"
tick = "0.5"
lot = 10
[[firms]]
name = "F"
accounts = [7, 8]
[[sessions]]
sender_comp_id = "A"
password_hash = "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$9PL7aoCNdPwgjbvvsWsnkVN2NN8d9g5gSqaSRWlsBjE"
username = "u"
firm = "F"
"#,
    )
    .unwrap();
    assert_eq!(c.durability, Durability::Fsync);
    assert_eq!(c.instruments[0].instrument.tick, 5);
    assert!(c.sessions[0].password_hash.is_some());
    assert_eq!(c.fix_config().sessions[0].username.as_deref(), Some("u"));
    assert!(c.fix_config().sessions[0].authenticates());
    assert_eq!(
        (c.failed_logon_delay, c.failed_logon_delay_max),
        (Duration::from_millis(100), Duration::from_millis(3200))
    );
    assert!(Config::from_toml("[[sessions]]\nsender_comp_id='A'\nfirm='nope'\n").is_err());
    assert!(Config::from_toml("bogus = 1").is_err());
    assert_eq!(c.batch_budget, BATCH_BUDGET_DEFAULT);
    assert_eq!(c.idle, Idle::Park);
    let t =
        Config::from_toml("batch_budget = 64\nidle = \"spin\"\nsession_queue_max = 16\n").unwrap();
    assert_eq!((t.batch_budget, t.idle), (64, Idle::Spin));
    assert!(Config::from_toml("batch_budget = 0").is_err());
    assert!(Config::from_toml("idle = \"yield\"").is_err());
    assert_eq!(c.cpu, None);
    assert_eq!(c.stall_log_us, 1_000);
    assert_eq!(
        Config::from_toml("stall_log_us = 0").unwrap().stall_log_us,
        0
    );
    assert_eq!(
        Config::from_toml("orders_max = 16777216")
            .unwrap()
            .orders_max,
        1 << 24
    );
    let e = Config::from_toml("orders_max = 16777217").unwrap_err();
    assert!(e.to_string().contains("16..=16777216"), "{e}");
    assert!(Config::from_toml("orders_max = 15").is_err());
    assert_eq!(Config::from_toml("cpu = 1").unwrap().cpu, Some(1));
    assert!(Config::from_toml("cpu = 5000").is_err());
    assert!(Config::from_toml("cpu = -1").is_err());
}

#[test]
fn session_layer_settings_and_their_defaults() {
    let c = Config::defaults();
    assert_eq!(c.sending_time_window_secs, 120);
    assert!(c
        .sessions
        .iter()
        .all(|s| s.validate && s.allow_reset_seq_num && !s.message_log));
    assert_eq!(c.fix_config().sending_time_window_ns, Some(120_000_000_000));
    let c = Config::from_toml(
        r#"
sending_time_window_secs = 0
message_log_dir = "/tmp/fixlog"
[[firms]]
name = "F"
accounts = [1]
[[sessions]]
sender_comp_id = "S"
firm = "F"
allow_reset_seq_num = false
validate = false
message_log = true
"#,
    )
    .unwrap();
    assert_eq!(c.fix_config().sending_time_window_ns, None);
    assert_eq!(
        c.message_log_dir.as_deref(),
        Some(std::path::Path::new("/tmp/fixlog"))
    );
    let s = &c.sessions[0];
    assert!(!s.allow_reset_seq_num && !s.validate && s.message_log);
    let f = &c.fix_config().sessions[0];
    assert!(!f.allow_reset_seq_num && !f.validate);
    let lenient = Config::defaults().lenient();
    assert_eq!(lenient.sending_time_window_secs, 0);
    assert!(lenient.sessions.iter().all(|s| !s.validate));
}

#[test]
fn trading_day_end_and_cancel_on_disconnect() {
    let c = Config::from_toml("").unwrap();
    assert_eq!(c.trading_day_end_ns, Some(21 * 3600 * 1_000_000_000));
    assert_eq!(c.trading_day_start_ns, None);
    assert_eq!(
        Config::from_toml("trading_day_end = \"off\"")
            .unwrap()
            .trading_day_end_ns,
        None
    );
    let c = Config::from_toml("trading_day_start = \"08:00:00\"").unwrap();
    assert_eq!(c.trading_day_start_ns, Some(8 * 3600 * 1_000_000_000));
    assert_eq!(
        c.exchange_config().trading_day_start_ns,
        c.trading_day_start_ns
    );
    for (toml, want) in [
        (
            "trading_day_start = \"8:00\"",
            "trading_day_start \"8:00\" is not a time of day HH:MM:SS (UTC)",
        ),
        (
            "trading_day_end = \"off\"\ntrading_day_start = \"08:00:00\"",
            "trading_day_start needs an end of the day",
        ),
        (
            "trading_day_end = \"08:00:00\"\ntrading_day_start = \"08:00:00\"",
            "equals trading_day_end",
        ),
    ] {
        let e = Config::from_toml(toml).unwrap_err().to_string();
        assert!(e.contains(want), "{toml}: {e}");
    }
    assert!(c.exchange_config().cancel_on_disconnect.iter().all(|&x| !x));
    let c = Config::from_toml("trading_day_end = \"21:30:05\"").unwrap();
    assert_eq!(
        c.trading_day_end_ns,
        Some((21 * 3600 + 30 * 60 + 5) * 1_000_000_000)
    );
    for bad in [
        "24:00:00",
        "9:00:00",
        "21:00",
        "21:60:00",
        "noon",
        "21:00:00Z",
    ] {
        let e = Config::from_toml(&format!("trading_day_end = {bad:?}")).unwrap_err();
        assert!(e.to_string().contains("HH:MM:SS"), "{bad}: {e}");
    }
    let c = Config::from_toml(
        r#"
        [[firms]]
        name = "A"
        accounts = [1]
        [[sessions]]
        sender_comp_id = "S1"
        firm = "A"
        [[sessions]]
        sender_comp_id = "S2"
        firm = "A"
        cancel_on_disconnect = true
        "#,
    )
    .unwrap();
    assert_eq!(c.exchange_config().cancel_on_disconnect, vec![false, true]);
}

/// `[http]`'s limits: each out of its range is refused naming it.
#[test]
fn http_limits_out_of_range_are_refused_by_name() {
    for (bad, why) in [
        ("body_max_bytes = 10", "http.body_max_bytes"),
        ("queue_max = 0", "http.queue_max"),
        ("idempotency_keys_max = 0", "http.idempotency_keys_max"),
        ("idempotency_secs = 0", "http.idempotency_secs"),
        ("connections_max = 0", "http.connections_max"),
        ("header_timeout_secs = 0", "http.header_timeout_secs"),
        ("ws_connections_max = 0", "http.ws_connections_max"),
        ("ws_buffer = 8", "http.ws_buffer"),
        ("ws_buffer = 2000000", "http.ws_buffer"),
    ] {
        let e = Config::from_toml(&format!("[http]\n{bad}\n")).unwrap_err();
        assert!(e.to_string().contains(why), "{bad}: {e}");
    }
    let c = Config::from_toml("[http]\nws_buffer = 16\nws_connections_max = 1\n").unwrap();
    let h = c.http.expect("HTTP on by default");
    assert_eq!((h.ws_buffer, h.ws_connections_max), (16, 1));
}

#[test]
fn the_store_is_sqlite_by_default_off_by_word_postgres_by_url() {
    let dir = std::path::Path::new("/d");
    let c = Config::defaults();
    assert_eq!(
        c.store.as_ref().unwrap().target(dir),
        StoreTarget::Sqlite(dir.join("rialto.db"))
    );
    assert!(Config::from_toml("store = \"off\"\n")
        .unwrap()
        .store
        .is_none());
    let c = Config::from_toml("[store]\npath = \"/x/y.db\"\n").unwrap();
    assert_eq!(
        c.store.unwrap().target(dir),
        StoreTarget::Sqlite(std::path::PathBuf::from("/x/y.db"))
    );
    let url = "postgres://rialto:secret@db:5432/rialto";
    let c = Config::from_toml(&format!("[store]\nurl = \"{url}\"\n")).unwrap();
    let t = c.store.unwrap().target(dir);
    assert_eq!(t, StoreTarget::Postgres(url.into()));
    #[cfg(feature = "store")]
    assert_eq!(t.describe(), "postgres://rialto:***@db:5432/rialto");
    let e = Config::from_toml("[store]\nurl = \"mysql://u@h/db\"\n").unwrap_err();
    assert!(e.to_string().contains("must be a PostgreSQL URL"), "{e}");
    let e =
        Config::from_toml("[store]\nurl = \"postgres://h/db\"\npath = \"/x.db\"\n").unwrap_err();
    assert!(e.to_string().contains("give one"), "{e}");
    let e = Config::from_toml("store = \"on\"\n").unwrap_err();
    assert!(e.to_string().contains("store = \"on\""), "{e}");
}

#[test]
fn cluster_section() {
    let base = "[cluster]\nbrokers = \"127.0.0.1:9092\"\n";
    let c = Config::from_toml(&format!(
        "{base}shards = [[\"CRNK\"], [\"ACME\", \"BOLT\"]]\n"
    ))
    .unwrap();
    let k = c.cluster.as_ref().unwrap();
    assert_eq!(k.shards, vec![vec![2], vec![0, 1]]);
    assert_eq!(k.shard_of_symbol, vec![1, 1, 0]);
    assert_eq!((k.replication_factor, k.min_insync_replicas), (3, 2));
    assert_eq!(k.commands_topic(), "rialto.commands");
    assert!(Config::defaults().cluster.is_none());
    // A gateway: its originators after those of the gateways before it; no snapshots.
    let g = Config::from_toml(&format!(
        "{base}gateway = 2\nshards = [[\"ACME\", \"BOLT\", \"CRNK\"]]\n"
    ))
    .unwrap()
    .as_gateway()
    .unwrap();
    let r = g.remote.as_ref().unwrap();
    assert_eq!((r.gateway, r.originator_base, r.shards), (2, 1024, 1));
    assert_eq!(g.snapshot_every_commands + g.snapshot_every_secs, 0);
    for (shards, why) in [
        ("shards = [[\"ACME\", \"BOLT\"]]", "\"CRNK\" is in no shard"),
        ("shards = [[\"ACME\", \"BOLT\", \"CRNK\", \"ZZZ\"]]", "\"ZZZ\" is not a configured instrument"),
        ("shards = [[\"ACME\", \"BOLT\"], [\"CRNK\", \"ACME\"]]", "\"ACME\" is in shard 0 and shard 1"),
        ("shards = [[\"ACME\", \"BOLT\", \"CRNK\"], []]", "shard 1 has no symbol"),
        ("shards = []", "needs shards"),
        ("gateway = 64\nshards = [[\"ACME\", \"BOLT\", \"CRNK\"]]", "gateway must be 1 to 63"),
        ("heartbeat_ms = 600\nshards = [[\"ACME\", \"BOLT\", \"CRNK\"]]", "takeover_ms at least three"),
        ("replication_factor = 1\nmin_insync_replicas = 2\nshards = [[\"ACME\", \"BOLT\", \"CRNK\"]]", "min_insync_replicas must be 1 to replication_factor"),
        ("topic_prefix = \"a b\"\nshards = [[\"ACME\", \"BOLT\", \"CRNK\"]]", "topic_prefix"),
    ] {
        let e = Config::from_toml(&format!("{base}{shards}\n")).unwrap_err();
        assert!(e.to_string().contains(why), "{shards}: {e}");
    }
    let e = Config::from_toml("[cluster]\nshards = [[\"ACME\"]]\n").unwrap_err();
    assert!(e.to_string().contains("needs brokers"), "{e}");
    let no_gateway = Config::from_toml(&format!(
        "{base}shards = [[\"ACME\", \"BOLT\", \"CRNK\"]]\n"
    ))
    .unwrap()
    .as_gateway()
    .unwrap_err();
    assert!(
        no_gateway.to_string().contains("gateway = N"),
        "{no_gateway}"
    );
    assert!(Config::defaults().as_gateway().is_err());
}
