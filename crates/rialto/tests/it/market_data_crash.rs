//! Market data across a crash of the real binary: subscribe, trade, `kill -9`, restart on the
//! same data directory, subscribe again: the snapshot equals the book before the kill (nothing
//! acknowledged is lost), RptSeq continues where it was, and the next entry follows it.

use fix::client::{FixClient, Msg};
use fix::md::{MdView, SymbolView};
use fix::Decoder;
use std::ffi::OsStr;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use types::XorShift64;

use crate::common;
use common::{serve, Served};

const T: Duration = Duration::from_secs(15);
/// 1.00 in the view's price units (nine decimals).
const MARKER_PX: i64 = 1_000_000_000;

fn start(dir: &Path, listen: &str) -> Served {
    let args: [&OsStr; 5] = [
        "--data-dir".as_ref(),
        dir.as_os_str(),
        "--listen".as_ref(),
        listen.as_ref(),
        "--market-data-listen=127.0.0.1:0".as_ref(),
    ];
    serve(&args, Stdio::inherit(), true)
}

struct Subscriber {
    c: FixClient,
    view: MdView,
    decoder: Decoder,
    n: u32,
}

impl Subscriber {
    fn subscribe(md: SocketAddr, symbols: &[&str]) -> Subscriber {
        let mut c = FixClient::connect(md, "MD1", "RIALTO", 1).unwrap();
        c.logon(30, true).unwrap();
        c.expect("A", T).unwrap();
        let n = symbols.len().to_string();
        let mut body: Vec<(u32, &str)> = vec![
            (262, "s"),
            (263, "1"),
            (264, "0"),
            (267, "3"),
            (269, "0"),
            (269, "1"),
            (269, "2"),
            (146, &n),
        ];
        for s in symbols {
            body.push((55, s));
        }
        c.send("V", &body).unwrap();
        Subscriber {
            c,
            view: MdView::new(0),
            decoder: Decoder::default(),
            n: 0,
        }
    }

    fn apply(&mut self, m: &Msg) {
        let msg = self.decoder.decode(&m.raw).unwrap();
        self.view.apply(&msg).unwrap();
    }

    /// Reads until the answer to a snapshot-only request sent now: every update queued
    /// before it has been read.
    fn sync(&mut self) {
        self.n += 1;
        let id = format!("sync{}", self.n);
        self.c
            .send(
                "V",
                &[
                    (262, &id),
                    (263, "0"),
                    (264, "1"),
                    (267, "1"),
                    (269, "0"),
                    (146, "1"),
                    (55, "CRNK"),
                ],
            )
            .unwrap();
        loop {
            let m = self.c.next_app(T).unwrap();
            if m.get(262) == Some(id.as_str()) {
                return;
            }
            self.apply(&m);
        }
    }

    /// Reads and applies updates until `done` holds.
    fn until(&mut self, done: impl Fn(&Subscriber) -> bool) {
        while !done(self) {
            let m = self.c.next_app(T).unwrap();
            self.apply(&m);
        }
    }

    fn symbol(&self, s: &str) -> SymbolView {
        self.view
            .symbols
            .get(s.as_bytes())
            .cloned()
            .unwrap_or_default()
    }
}

fn order(c: &mut FixClient, cl: &str, sym: &str, side: &str, px: &str, qty: &str) -> Msg {
    c.send(
        "D",
        &[
            (11, cl),
            (55, sym),
            (54, side),
            (38, qty),
            (40, "2"),
            (44, px),
            (59, "1"),
            (60, "20260101-00:00:00"),
        ],
    )
    .unwrap();
    // Fills of the client's earlier orders may come first.
    loop {
        let m = c.expect("8", T).unwrap().0;
        if m.get(11) == Some(cl) {
            return m;
        }
    }
}

#[test]
fn after_kill_9_the_feed_resumes_from_the_recovered_book() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), "127.0.0.1:0");
    let mut sub = Subscriber::subscribe(s.md.unwrap(), &["ACME", "BOLT"]);
    let mut a = FixClient::connect(s.addr, "CLIENT1", "RIALTO", 1).unwrap();
    a.logon(30, true).unwrap();
    a.expect("A", T).unwrap();
    let mut b = FixClient::connect(s.addr, "CLIENT2", "RIALTO", 1).unwrap();
    b.logon(30, true).unwrap();
    b.expect("A", T).unwrap();
    let mut rng = XorShift64::new(5);
    for i in 0..120 {
        let r = rng.next_u64();
        let (c, side) = if r.is_multiple_of(2) {
            (&mut a, "1")
        } else {
            (&mut b, "2")
        };
        let sym = if (r >> 4).is_multiple_of(3) {
            "BOLT"
        } else {
            "ACME"
        };
        let px = format!("20.{:02}", 40 + (r >> 8) % 20);
        let ack = order(
            c,
            &format!("o{i}"),
            sym,
            side,
            &px,
            &(1 + (r >> 16) % 7).to_string(),
        );
        assert_eq!(ack.get(150), Some("0"), "{}", ack.text());
    }
    // The publisher follows the journal on its own thread and may not have read the last
    // acknowledged order yet: a marker order, last in the journal, tells when it has.
    order(&mut a, "marker", "ACME", "1", "1.00", "1");
    sub.until(|s| s.symbol("ACME").bids.contains_key(&MARKER_PX));
    sub.sync();
    let before: Vec<SymbolView> = ["ACME", "BOLT"].iter().map(|x| sub.symbol(x)).collect();
    assert!(before[0].rpt_seq.unwrap() > 0 && !before[0].trades.is_empty());
    let mut s = s;
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    drop((a, b, sub));
    let listen = s.addr.to_string();
    drop(s);

    let s = start(dir.path(), &listen);
    let mut sub = Subscriber::subscribe(s.md.unwrap(), &["ACME", "BOLT"]);
    sub.sync();
    for (i, sym) in ["ACME", "BOLT"].iter().enumerate() {
        let v = sub.symbol(sym);
        assert_eq!(v.bids, before[i].bids, "{sym} bids");
        assert_eq!(v.asks, before[i].asks, "{sym} asks");
        assert_eq!(v.rpt_seq, before[i].rpt_seq, "{sym}: RptSeq continues");
    }
    let mut c = FixClient::connect(s.addr, "CLIENT3", "RIALTO", 1).unwrap();
    c.logon(30, true).unwrap();
    c.expect("A", T).unwrap();
    order(&mut c, "n1", "ACME", "1", "1.01", "1");
    let (x, _) = sub.c.expect("X", T).unwrap();
    assert_eq!(
        x.u64(83),
        Some(before[0].rpt_seq.unwrap() + 1),
        "the next entry follows: {}",
        x.text()
    );
    drop(s);
}
