//! Measures the longest single input of a large mass cancel and of a cancel on disconnect:
//! the request (or the `Disconnected`) and each `Continue` that follows, on the exchange
//! alone (no journal, no sockets).
//!
//! Run: `cargo run -p exchange --example mass_cancel_steps --profile ci -- [orders]`
//! (default 1,000,000). Scenarios: a firm's `orders` resting orders mass canceled (after
//! 100,000 of another firm's); a firm with one old order, then `orders` of another firm, mass
//! canceled (each step looks at ids and cancels almost nothing); a session with `orders`
//! resting orders that disconnects with cancel on disconnect.

use exchange::{ClOrdId, Config, Exchange, Input, NewOrder, NoOutputs, Principal};
use std::sync::Arc;
use std::time::{Duration, Instant};

use types::{Instrument, Symbol, TimeInForce};

struct Run {
    x: Exchange,
    seq: u64,
}

impl Run {
    fn new() -> Run {
        let inst = |s: &str| Instrument {
            symbol: Symbol::new(s).expect("a symbol"),
            tick: 1,
            lot: 1,
        };
        let mut cfg = Config::new(
            vec![inst("ACME"), inst("BOLT")],
            vec![vec![1], vec![2]],
            1 << 22,
        );
        cfg.cancel_on_disconnect = vec![true, true];
        Run {
            x: Exchange::new(Arc::new(cfg)),
            seq: 0,
        }
    }

    fn apply(&mut self, input: &Input<'_>) -> Duration {
        self.seq += 1;
        let t = Instant::now();
        self.x.apply(self.seq, self.seq, input, &mut NoOutputs);
        t.elapsed()
    }

    /// `n` resting GTC buys of originator (and firm) `firm`, on both symbols.
    fn rest(&mut self, firm: u16, n: u64) {
        for i in 0..n {
            let cl = format!("{firm}-{}-{i}", self.seq);
            let order = NewOrder {
                cl_ord_id: ClOrdId::from_bytes(cl.as_bytes()).expect("a ClOrdID"),
                symbol: (i % 2) as u32,
                tif: TimeInForce::Gtc,
                price: 1_000 + (i % 500) as i64,
                qty: 1,
                ..NewOrder::BLANK
            };
            let who = Principal {
                originator: firm,
                firm,
            };
            self.apply(&Input::New { who, order: &order });
        }
    }

    /// Applies `first`, then `Continue`s until nothing is pending.
    fn steps(&mut self, first: &Input<'_>) -> Steps {
        let first = self.apply(first);
        let mut all = vec![first];
        while self.x.has_pending_work() {
            all.push(self.apply(&Input::Continue));
        }
        let total = all.iter().sum();
        all.sort_unstable();
        let at = |q: usize| all[(all.len() - 1) * q / 100];
        Steps {
            n: all.len(),
            first,
            p50: at(50),
            p99: at(99),
            longest: at(100),
            total,
        }
    }
}

/// A mass cancel's inputs: how many, the first (the request), the median, the 99th
/// percentile and the longest (on a shared machine, a preemption), all together.
struct Steps {
    n: usize,
    first: Duration,
    p50: Duration,
    p99: Duration,
    longest: Duration,
    total: Duration,
}

fn report(what: &str, s: Steps) {
    let Steps {
        n,
        first,
        p50,
        p99,
        longest,
        total,
    } = s;
    println!(
        "{what}: {n} inputs, the first {first:.2?}, median {p50:.2?}, p99 {p99:.2?}, \
         longest {longest:.2?}; {total:.2?} in all"
    );
}

fn main() {
    let orders: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("a number of orders"))
        .unwrap_or(1_000_000);
    let mass = |firm: u16| Input::MassCancel {
        who: Principal {
            originator: firm,
            firm,
        },
        cl_ord_id: &ClOrdId::EMPTY,
        symbol: None,
        side: None,
    };
    let mut r = Run::new();
    r.rest(1, 100_000);
    r.rest(0, orders);
    let s = r.steps(&mass(0));
    assert_eq!(r.x.live_orders(), 100_000);
    report(&format!("mass cancel of {orders} orders"), s);

    let mut r = Run::new();
    r.rest(0, 1);
    r.rest(1, orders);
    let s = r.steps(&mass(0));
    assert_eq!(r.x.live_orders(), orders as usize);
    report(
        &format!("mass cancel of 1 order before {orders} of another firm"),
        s,
    );

    let mut r = Run::new();
    r.rest(0, orders);
    let s = r.steps(&Input::Disconnected {
        who: Principal {
            originator: 0,
            firm: 0,
        },
    });
    assert_eq!(r.x.live_orders(), 0);
    report(&format!("cancel on disconnect of {orders} orders"), s);
}
