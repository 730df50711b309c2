//! A seeded random order stream split between two REST API keys and a FIX session, through the
//! one sequencer, against the naive reference model (`model::Reference`) fed the same commands
//! in the same order: the final book (as the REST API serves it, from the market-data replica)
//! equals the model's, level by level, and every REST order's filled quantity equals the
//! model's ledger. The trade store (SQLite, and PostgreSQL in a throwaway cluster) then holds exactly what the journal
//! says (`store verify`'s comparison) and the model's trades, fills and final order states,
//! and its history routes (trades, fills, closed orders, paged) serve the model's too.

use fix::client::FixClient;
use model::Reference;
use server::{Config, Server};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use types::{Command, Matcher, NewOrder, OrdType, Side, StpMode, TimeInForce, XorShift64};

const T: Duration = Duration::from_secs(10);
const KEYS: [&str; 2] = ["rk_model_a", "rk_model_b"];
/// Accounts of the two keys and of the FIX session CLIENT3 (default contract: account 3).
const ACCOUNTS: [u32; 3] = [1, 2, 3];

/// The server's config; the store in PostgreSQL at `pg` if given, else SQLite.
fn config(dir: &std::path::Path, pg: Option<&str>) -> Config {
    let hex = |t: &str| http_gateway::keys::hex(&http_gateway::keys::sha256(t));
    let text = format!(
        "listen = \"127.0.0.1:0\"\norders_max = 65536\njournal_segment_bytes = 1048576\n\
         trading_day_end = \"off\"\n\
         [[api_keys]]\nname = \"a\"\naccount = 1\nsha256 = \"{}\"\nrequests_per_sec = 1000000\n\
         [[api_keys]]\nname = \"b\"\naccount = 2\nsha256 = \"{}\"\nrequests_per_sec = 1000000\n",
        hex(KEYS[0]),
        hex(KEYS[1])
    );
    let mut c = Config::from_toml(&text).expect("config");
    c.data_dir = dir.to_path_buf();
    if let Some(url) = pg {
        c.store = Some(server::config::StoreConfig::Postgres { url: url.into() });
    }
    c
}

fn now_fix() -> String {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut v = Vec::new();
    fix::write_utc_timestamp(&mut v, ns, fix::TimePrecision::Millis);
    String::from_utf8(v).unwrap()
}

struct Rest {
    agent: ureq::Agent,
    base: String,
}

impl Rest {
    fn call(&self, key: usize, method: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
        let req = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("Authorization", format!("Bearer {}", KEYS[key]))
            .header("Content-Type", "application/json")
            .body(body.to_owned())
            .unwrap();
        let mut r = self.agent.run(req).expect("an answer");
        let st = r.status().as_u16();
        let text = r.body_mut().read_to_string().unwrap();
        (st, serde_json::from_str(&text).unwrap())
    }
}

/// The model's view of one live order: who entered it, where, and its ClOrdID (FIX).
struct Live {
    who: usize,
    id: u64,
    symbol: u32,
    cl: String,
}

#[test]
fn rest_and_fix_orders_match_the_reference_model() {
    run(None);
}

#[test]
fn rest_and_fix_orders_match_the_reference_model_with_postgresql() {
    let pg = test_postgres::TestPostgres::start();
    run(Some(&pg.url()));
}

/// The stream, the model, the history routes and the store (SQLite, or PostgreSQL at `pg`).
fn run(pg: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), pg);
    let instruments: Vec<types::Instrument> =
        cfg.instruments.iter().map(|i| i.instrument).collect();
    let s = Server::start(cfg, Arc::new(|_: &str| {})).unwrap();
    let http: SocketAddr = s.http_addr().unwrap();
    let rest = Rest {
        agent: ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(T))
            .build()
            .into(),
        base: format!("http://{http}"),
    };
    let mut fix = FixClient::connect(s.addr, "CLIENT3", "RIALTO", 1).unwrap();
    fix.logon(30, true).unwrap();
    fix.expect("A", T).unwrap();

    let mut model = Reference::new(&instruments);
    let mut sink = Vec::new();
    let mut rng = XorShift64::new(0xC0FFEE);
    let mut live: Vec<Live> = Vec::new();
    let mut rest_orders: Vec<(usize, u64)> = Vec::new();
    let mut all_orders: Vec<u64> = Vec::new();
    for n in 0..600u64 {
        let who = rng.below(3) as usize;
        if rng.below(4) == 0 && !live.is_empty() {
            // Cancel one of `who`'s live orders, if it has one.
            let Some(ix) = live.iter().position(|l| l.who == who) else {
                continue;
            };
            let l = live.swap_remove(ix);
            let accepted = if who < 2 {
                let (st, v) = rest.call(who, "DELETE", &format!("/api/v1/orders/{}", l.id), "");
                match st {
                    200 => true,
                    409 => false, // filled meanwhile
                    _ => panic!("{st} {v}"),
                }
            } else {
                let cl = format!("x{n}");
                fix.send(
                    "F",
                    &[
                        (11, cl.as_str()),
                        (37, l.id.to_string().as_str()),
                        (41, l.cl.as_str()),
                        (55, instruments[l.symbol as usize].symbol.as_str()),
                        (54, "1"),
                        (60, now_fix().as_str()),
                    ],
                )
                .unwrap();
                let m = loop {
                    let m = fix.next_app(T).unwrap();
                    if m.get(11) == Some(cl.as_str()) && ["8", "9"].contains(&m.msg_type()) {
                        break m;
                    }
                };
                m.msg_type() == "8"
            };
            if accepted {
                model.apply(
                    &Command::Cancel {
                        id: l.id,
                        account: ACCOUNTS[who],
                        symbol: l.symbol,
                    },
                    &mut sink,
                );
            }
            continue;
        }
        let symbol = rng.below(2) as u32;
        let side = if rng.below(2) == 0 {
            Side::Buy
        } else {
            Side::Sell
        };
        let price = 1000 + rng.below(9) as i64 - 4;
        let qty = 1 + rng.below(5);
        let ioc = rng.below(5) == 0;
        let sym = instruments[symbol as usize].symbol.as_str();
        let cl = format!("f{n}");
        let id = if who < 2 {
            let body = format!(
                r#"{{"symbol":"{sym}","side":"{}","price":"{}.{:02}","quantity":"{qty}","time_in_force":"{}"}}"#,
                if side == Side::Buy { "buy" } else { "sell" },
                price / 100,
                price % 100,
                if ioc { "ioc" } else { "gtc" }
            );
            let (st, v) = rest.call(who, "POST", "/api/v1/orders", &body);
            assert_eq!(st, 201, "{v}");
            let id = v["order_id"].as_u64().unwrap();
            rest_orders.push((who, id));
            id
        } else {
            fix.send(
                "D",
                &[
                    (11, cl.as_str()),
                    (55, sym),
                    (54, if side == Side::Buy { "1" } else { "2" }),
                    (38, qty.to_string().as_str()),
                    (40, "2"),
                    (44, format!("{}.{:02}", price / 100, price % 100).as_str()),
                    (59, if ioc { "3" } else { "1" }),
                    (60, now_fix().as_str()),
                ],
            )
            .unwrap();
            let m = loop {
                let m = fix.expect("8", T).unwrap().0;
                if m.get(11) == Some(cl.as_str()) && m.get(150) == Some("0") {
                    break m;
                }
            };
            m.get(37).unwrap().parse().unwrap()
        };
        all_orders.push(id);
        model.apply(
            &Command::New(NewOrder {
                id,
                account: ACCOUNTS[who],
                symbol,
                side,
                ord_type: OrdType::Limit,
                tif: if ioc {
                    TimeInForce::Ioc
                } else {
                    TimeInForce::Gtc
                },
                price,
                qty,
                post_only: false,
                stp: StpMode::CancelNewest,
                ..Default::default()
            }),
            &mut sink,
        );
        if !ioc {
            live.push(Live {
                who,
                id,
                symbol,
                cl,
            });
        }
    }
    model.check_invariants().unwrap();
    // Every REST order's fills, as the API answers them, are the model's.
    for (who, id) in &rest_orders {
        let (st, v) = rest.call(*who, "GET", &format!("/api/v1/orders/{id}"), "");
        assert_eq!(st, 200, "{v}");
        let filled: u128 = v["filled_quantity"].as_str().unwrap().parse().unwrap();
        assert_eq!(filled, model.ledger(*id).unwrap().filled, "order {id}: {v}");
    }
    // The book the REST API serves (the market-data replica's) is the model's.
    for (symbol, inst) in instruments.iter().enumerate().take(2) {
        let def = http_gateway::InstrumentDef {
            symbol: inst.symbol,
            tick: inst.tick,
            lot: inst.lot,
            price_decimals: 2,
        };
        let want = |side| -> Vec<serde_json::Value> {
            model
                .levels(symbol as u32, side)
                .iter()
                .map(|&(p, q, n)| {
                    serde_json::json!([http_gateway::json::price(p, &def), q.to_string(), n])
                })
                .collect()
        };
        let deadline = Instant::now() + T;
        loop {
            let (_, v) = rest.call(
                0,
                "GET",
                &format!("/api/v1/book/{}?depth=1000", inst.symbol.as_str()),
                "",
            );
            let (bids, asks) = (want(Side::Buy), want(Side::Sell));
            if v["bids"].as_array().unwrap() == &bids && v["asks"].as_array().unwrap() == &asks {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{}: served {v}, the model's bids {bids:?} asks {asks:?}",
                inst.symbol.as_str()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    check_history(&rest, &instruments, &model, &sink, &rest_orders);
    s.shutdown().unwrap();

    // The trade store, after the clean stop: everything the journal says, nothing more.
    let cfg = config(dir.path(), pg);
    let journal = server::store::journal_summary(&cfg, dir.path()).unwrap();
    let mut db = Db::open(dir.path(), pg);
    let stored = db.summary();
    assert_eq!(stored.compare(&journal), None, "{stored:?} {journal:?}");
    // And the model's: its trades (count, volume), two fills each, every order's filled
    // quantity and whether it is still live.
    let (trades, volume) = sink.iter().fold((0u64, 0u128), |(n, v), e| match e {
        types::Event::Trade { qty, .. } => (n + 1, v + *qty as u128),
        _ => (n, v),
    });
    assert!(trades > 50, "the stream traded too little: {trades}");
    assert_eq!((stored.trades, stored.volume), (trades, volume));
    assert_eq!(stored.executions, 2 * trades);
    assert_eq!(stored.orders, all_orders.len() as u64);
    // Every fill names its trade, which has one maker fill and one taker fill.
    assert_eq!(
        db.count("SELECT count(*) FROM executions WHERE trade_id IS NULL OR liquidity IS NULL"),
        0
    );
    assert_eq!(
        db.count(
            "SELECT count(*) FROM (SELECT trade_id FROM executions GROUP BY trade_id \
             HAVING count(*) != 2 OR sum(CASE WHEN liquidity = 'maker' THEN 1 ELSE 0 END) != 1) x"
        ),
        0
    );
    for id in &all_orders {
        let (cum, leaves) = (
            db.count(&format!("SELECT cum_qty FROM orders WHERE order_id = {id}")),
            db.count(&format!(
                "SELECT leaves_qty FROM orders WHERE order_id = {id}"
            )),
        );
        let l = model.ledger(*id).unwrap();
        assert_eq!(
            (cum as u128, leaves as u64),
            (l.filled, l.remaining),
            "order {id}"
        );
    }
}

/// The store, read after the server stopped.
enum Db {
    Sqlite(trade_store::Sqlite),
    Postgres(Box<trade_store::Postgres>),
}

impl Db {
    fn open(dir: &std::path::Path, pg: Option<&str>) -> Db {
        match pg {
            None => {
                Db::Sqlite(trade_store::Sqlite::open_read_only(&dir.join("rialto.db")).unwrap())
            }
            Some(url) => Db::Postgres(Box::new(
                trade_store::Postgres::connect_read_only(url).unwrap(),
            )),
        }
    }

    fn summary(&mut self) -> trade_store::Summary {
        match self {
            Db::Sqlite(s) => trade_store::Store::summary(s).unwrap(),
            Db::Postgres(p) => trade_store::Store::summary(p.as_mut()).unwrap(),
        }
    }

    /// The one integer `sql` answers.
    fn count(&mut self, sql: &str) -> i64 {
        match self {
            Db::Sqlite(s) => s.connection().query_row(sql, [], |r| r.get(0)).unwrap(),
            Db::Postgres(p) => p.client().unwrap().query_one(sql, &[]).unwrap().get(0),
        }
    }
}

/// Every page of a history route, `limit` rows at a time (following `next_since`), until the
/// store has caught up with the journal: the rows of all pages.
fn pages(rest: &Rest, key: usize, path: &str, rows: &str, limit: u32) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + T;
    loop {
        let mut all = Vec::new();
        let mut since: Option<String> = None;
        let mut behind = 0;
        loop {
            let sep = if path.contains('?') { '&' } else { '?' };
            let mut url = format!("{path}{sep}limit={limit}");
            if let Some(s) = &since {
                url.push_str(&format!("&since={s}"));
            }
            let (st, v) = rest.call(key, "GET", &url, "");
            assert_eq!(st, 200, "{url}: {v}");
            let page = v[rows].as_array().unwrap();
            assert!(page.len() <= limit as usize, "{url}: {v}");
            all.extend(page.iter().cloned());
            behind = behind.max(v["store"]["behind_records"].as_u64().unwrap());
            match &v["next_since"] {
                serde_json::Value::Null => break,
                n => {
                    assert_eq!(page.len(), limit as usize, "a short page with a next: {v}");
                    since = Some(n.to_string().trim_matches('"').to_owned());
                }
            }
        }
        if behind == 0 {
            return all;
        }
        assert!(
            Instant::now() < deadline,
            "the store is still {behind} records behind"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The history routes against the model: every trade of each symbol, in id order; each key's
/// fills, whose quantities add up to its orders' filled quantities; each key's closed orders,
/// which are its orders with nothing left.
fn check_history(
    rest: &Rest,
    instruments: &[types::Instrument],
    model: &Reference,
    sink: &[types::Event],
    rest_orders: &[(usize, u64)],
) {
    let mut served = 0;
    for inst in instruments.iter().take(2) {
        let sym = inst.symbol.as_str();
        let trades = pages(rest, 0, &format!("/api/v1/trades/{sym}"), "trades", 7);
        let want: Vec<(u64, u64)> = sink
            .iter()
            .filter_map(|e| match *e {
                types::Event::Trade {
                    trade_id,
                    symbol,
                    qty,
                    ..
                } if instruments[symbol as usize].symbol == inst.symbol => Some((trade_id, qty)),
                _ => None,
            })
            .collect();
        let got: Vec<(u64, u64)> = trades
            .iter()
            .map(|t| {
                (
                    t["trade_id"].as_u64().unwrap(),
                    t["quantity"].as_str().unwrap().parse().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, want, "{sym}'s trades");
        served += got.len();
    }
    assert!(served > 50, "too few trades to page: {served}");
    for key in 0..2 {
        let fills = pages(rest, key, "/api/v1/fills", "fills", 13);
        let mut filled: std::collections::HashMap<u64, u128> = Default::default();
        let mut last = (0u64, 0u32);
        for f in &fills {
            let id = trade_store::parse_exec_id(f["fill_id"].as_str().unwrap()).unwrap();
            assert!(id > last, "fills out of order: {fills:?}");
            last = id;
            let q: u128 = f["quantity"].as_str().unwrap().parse().unwrap();
            *filled.entry(f["order_id"].as_u64().unwrap()).or_default() += q;
        }
        let mine: Vec<u64> = rest_orders
            .iter()
            .filter(|(w, _)| *w == key)
            .map(|(_, id)| *id)
            .collect();
        assert!(
            filled.keys().all(|id| mine.contains(id)),
            "another key's fill"
        );
        for id in &mine {
            let l = model.ledger(*id).unwrap();
            assert_eq!(
                filled.get(id).copied().unwrap_or(0),
                l.filled,
                "order {id}'s fills"
            );
        }
        let closed = pages(rest, key, "/api/v1/orders?status=closed", "orders", 11);
        let got: Vec<u64> = closed
            .iter()
            .map(|o| o["order_id"].as_u64().unwrap())
            .collect();
        let want: Vec<u64> = mine
            .iter()
            .copied()
            .filter(|id| model.ledger(*id).unwrap().remaining == 0)
            .collect();
        assert_eq!(got, want, "key {key}'s closed orders");
        for o in &closed {
            let id = o["order_id"].as_u64().unwrap();
            let filled: u128 = o["filled_quantity"].as_str().unwrap().parse().unwrap();
            assert_eq!(filled, model.ledger(id).unwrap().filled, "{o}");
            assert!(
                ["filled", "canceled"].contains(&o["status"].as_str().unwrap()),
                "{o}"
            );
        }
    }
}
