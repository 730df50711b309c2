use super::*;
use types::XorShift64;

/// A random order-entry flow over `sessions` sessions: logons (and an unknown CompID's),
/// disconnects and reconnects, restarts, NewOrderSingles that rest or trade, cancels and
/// replaces of live, finished and unknown orders, status requests; ClOrdIDs drawn from a
/// pool of `pool` per session, so some repeat (duplicates, reuse of forgotten ones) unless
/// `unique`.
fn flow(seed: u64, n: usize, sessions: usize, pool: u64, unique: bool) -> Vec<Record> {
    let mut rng = XorShift64::new(seed | 1);
    let mut out = Vec::with_capacity(n);
    let mut conn_of: Vec<Option<u64>> = vec![None; sessions];
    let mut seq = vec![0u64; sessions];
    let mut next_conn = 1u64;
    let mut fresh = 0u64;
    let mut sent: Vec<Vec<String>> = vec![Vec::new(); sessions];
    out.push(Record::Startup);
    while out.len() < n {
        let s = rng.below(sessions as u64) as usize;
        let Some(conn) = conn_of[s] else {
            let conn = next_conn;
            next_conn += 1;
            conn_of[s] = Some(conn);
            seq[s] = 1;
            out.push(Record::fix44_logon(
                conn,
                1,
                &format!("CLIENT{}", s + 1),
                true,
            ));
            continue;
        };
        let r = rng.below(1000);
        if r < 3 {
            out.push(Record::Disconnected { conn });
            conn_of[s] = None;
            continue;
        }
        if r < 4 {
            // A Logon nobody is configured for, on a connection of its own.
            out.push(Record::fix44_logon(next_conn, 1, "NOBODY", true));
            next_conn += 1;
            continue;
        }
        if r < 5 {
            out.push(Record::Startup);
            conn_of.iter_mut().for_each(|c| *c = None);
            continue;
        }
        let mut cl = || {
            if unique {
                fresh += 1;
                format!("u{fresh}")
            } else {
                format!("c{}", rng.below(pool))
            }
        };
        let new_cl = cl();
        let old_cl = if sent[s].is_empty() || rng.below(10) == 0 {
            format!("x{}", rng.below(pool.max(50)))
        } else {
            let k = sent[s].len() - 1 - (rng.below(sent[s].len().min(40) as u64) as usize);
            sent[s][k].clone()
        };
        let price = 1000 + rng.below(11) as i64 - 5;
        let msg = match rng.below(10) {
            0..=4 => AppMsg::New(NewOrder {
                cl_ord_id: ClOrdId::from(new_cl.as_str()),
                symbol: rng.below(2) as u32,
                side: if rng.below(2) == 0 {
                    Side::Buy
                } else {
                    Side::Sell
                },
                ord_type: OrdType::Limit,
                tif: if rng.below(3) == 0 {
                    TimeInForce::Ioc
                } else {
                    TimeInForce::Day
                },
                price,
                qty: 1 + rng.below(5),
                account: None,
                post_only: false,
                ..Default::default()
            }),
            5..=6 => AppMsg::Cancel {
                cl_ord_id: ClOrdId::from(new_cl.as_str()),
                orig_cl_ord_id: ClOrdId::from(old_cl.as_str()),
            },
            7..=8 => AppMsg::Replace(Replace {
                cl_ord_id: ClOrdId::from(new_cl.as_str()),
                orig_cl_ord_id: ClOrdId::from(old_cl.as_str()),
                symbol: rng.below(2) as u32,
                price,
                qty: 1 + rng.below(8),
                stop_price: 0,
            }),
            _ => AppMsg::Status {
                cl_ord_id: ClOrdId::from(old_cl.as_str()),
                echo: Echo::EMPTY,
            },
        };
        sent[s].push(new_cl);
        seq[s] += 1;
        out.push(app(conn, seq[s], msg));
    }
    out
}

#[test]
fn a_flow_without_repeated_clordids_is_answered_ahead_to_the_end() {
    for seed in 1..=6 {
        let records = flow(seed, 6_000, 3, 0, true);
        let how = compare(&records, 64, 8, 256, 1 + (seed as usize * 7) % 40);
        assert!(
            how.ends_with("lookups answered on the decoding thread"),
            "seed {seed}: {how}"
        );
    }
}

#[test]
fn repeated_duplicate_and_forgotten_clordids_give_the_same_outcome() {
    for seed in 1..=24 {
        let pool = [20, 200, 2_000][seed as usize % 3];
        let records = flow(seed * 7919, 5_000, 1 + seed as usize % 3, pool, false);
        let per_gen = [128, 256, 1 << 21][seed as usize % 3];
        let how = compare(
            &records,
            16 + seed as usize % 50,
            1 + seed % 9,
            per_gen,
            1 + seed as usize % 33,
        );
        eprintln!("seed {seed}: {how}");
    }
}
