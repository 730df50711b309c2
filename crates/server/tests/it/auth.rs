//! Authentication over real sockets: Username and Password checked against salted hashes off
//! the event loop, the one Logout text of every refused Logon, and the throttle of failed
//! logons (its figures are printed: `cargo test -p server --test it auth:: -- --nocapture`).

use fix::client::{FixClient, Msg};
use server::{Config, Server};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);
const PASSWORD: &str = "correct horse battery staple";
const USERNAME: &str = "trader-1";

/// Sessions `SECRET` (password and username) and `OPEN` (neither); failed logons delay by
/// `delay_ms` doubling up to `max_ms`.
fn config(dir: &Path, delay_ms: u64, max_ms: u64) -> Config {
    let hash = server::auth::hash_password(PASSWORD.as_bytes()).unwrap();
    let mut c = Config::from_toml(&format!(
        r#"
listen = "127.0.0.1:0"
failed_logon_delay_ms = {delay_ms}
failed_logon_delay_max_ms = {max_ms}
journal_segment_bytes = 1048576
orders_max = 65536
[[firms]]
name = "F"
accounts = [1]
[[sessions]]
sender_comp_id = "SECRET"
firm = "F"
password_hash = "{hash}"
username = "{USERNAME}"
[[sessions]]
sender_comp_id = "OPEN"
firm = "F"
"#
    ))
    .unwrap();
    c.data_dir = dir.to_path_buf();
    c
}

fn start(cfg: Config) -> Server {
    Server::start(cfg, Arc::new(|_: &str| {})).expect("server starts")
}

/// Sends a Logon as `who` (MsgSeqNum `seq`, ResetSeqNumFlag if `reset`) with `username` and
/// `password` if given; returns the client and the answer (Logon or Logout).
fn try_logon(
    addr: std::net::SocketAddr,
    who: &str,
    seq: u64,
    reset: bool,
    username: Option<&str>,
    password: Option<&str>,
) -> (FixClient, Msg) {
    let mut c = FixClient::connect(addr, who, "RIALTO", seq).unwrap();
    let mut body = vec![(98, "0"), (108, "30")];
    if reset {
        body.push((141, "Y"));
    }
    if let Some(u) = username {
        body.push((553, u));
    }
    if let Some(p) = password {
        body.push((554, p));
    }
    c.send("A", &body).unwrap();
    loop {
        let m = c.recv(T).unwrap().expect("an answer to the Logon in time");
        if matches!(m.msg_type(), "A" | "5") {
            return (c, m);
        }
    }
}

fn refused(m: &Msg) {
    assert_eq!(m.msg_type(), "5", "{}", m.text());
    assert_eq!(m.get(58), Some("logon refused"), "{}", m.text());
    assert_eq!(m.seq(), 1, "a refusal is unnumbered: {}", m.text());
}

/// A good password logs on; a wrong password, a wrong or missing username, unknown CompIDs
/// all get the same Logout, which never says the expected MsgSeqNum (an impostor learns it
/// only with the password); the owner's session is not disturbed by an impostor.
#[test]
fn passwords_are_checked_and_refusals_say_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // Short delays: this test is about answers, not the throttle.
    let server = start(config(dir.path(), 1, 2));
    let a = server.addr;
    let (mut owner, m) = try_logon(a, "SECRET", 1, true, Some(USERNAME), Some(PASSWORD));
    assert_eq!(m.msg_type(), "A", "{}", m.text());
    // An impostor while the owner is logged on: refused, the owner's session goes on.
    let (_, m) = try_logon(a, "SECRET", 1, false, Some(USERNAME), Some("guess"));
    refused(&m);
    owner.send("1", &[(112, "still-there")]).unwrap();
    let hb = loop {
        let m = owner
            .recv(T)
            .unwrap()
            .expect("the owner's Heartbeat in time");
        if m.msg_type() == "0" {
            break m;
        }
    };
    assert_eq!(hb.get(112), Some("still-there"));
    owner.send("5", &[]).unwrap();
    owner.expect("5", T).unwrap();
    drop(owner);
    // The owner has sent 3 messages: the session expects 4. An impostor at MsgSeqNum 1 is
    // not told so, whatever else is wrong.
    for (username, password) in [
        (Some(USERNAME), Some("guess")),
        (Some(USERNAME), None),
        (Some("someone"), Some(PASSWORD)),
        (None, Some(PASSWORD)),
    ] {
        let (_, m) = try_logon(a, "SECRET", 1, false, username, password);
        refused(&m);
    }
    let (_, m) = try_logon(a, "NOBODY", 1, false, Some(USERNAME), Some(PASSWORD));
    refused(&m);
    // The owner is told (authenticated, it may know its own numbers).
    let (_, m) = try_logon(a, "SECRET", 1, false, Some(USERNAME), Some(PASSWORD));
    assert_eq!(m.msg_type(), "5");
    assert!(m.get(58).unwrap().contains("expecting 4"), "{}", m.text());
    let (_, m) = try_logon(a, "SECRET", 4, false, Some(USERNAME), Some(PASSWORD));
    assert_eq!(m.msg_type(), "A", "{}", m.text());
    // A session without a password needs none.
    let (_, m) = try_logon(a, "OPEN", 1, true, None, None);
    assert_eq!(m.msg_type(), "A", "{}", m.text());
    server.shutdown().unwrap();
}

/// The market-data port checks the same hashes.
#[test]
fn market_data_logons_check_the_same_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path(), 1, 2));
    let md = server.market_data_addr().expect("market data is on");
    let (_, m) = try_logon(md, "SECRET", 1, true, Some(USERNAME), Some("guess"));
    refused(&m);
    let (_, m) = try_logon(md, "NOBODY", 1, true, None, None);
    refused(&m);
    // After the delay of the failures above: at most 2 ms from the last refusal, which was
    // recorded before it was sent (the market-data port refuses a Logon during a delay).
    std::thread::sleep(Duration::from_millis(20));
    let (_, m) = try_logon(md, "SECRET", 1, true, Some(USERNAME), Some(PASSWORD));
    assert_eq!(m.msg_type(), "A", "{}", m.text());
    server.shutdown().unwrap();
}

/// 100 wrong guesses in a row at one CompID take at least 10 s with the mildest throttle
/// that promises it (100 ms after each failure, not growing; the defaults double up to
/// 3.2 s, so they take longer still), and the owner logs on after them.
#[test]
fn a_hundred_wrong_guesses_take_at_least_ten_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path(), 100, 100));
    let t0 = Instant::now();
    for i in 0..100 {
        let guess = format!("guess-{i}");
        let (_, m) = try_logon(server.addr, "SECRET", 1, true, Some(USERNAME), Some(&guess));
        refused(&m);
    }
    let took = t0.elapsed();
    let t1 = Instant::now();
    let (_, m) = try_logon(
        server.addr,
        "SECRET",
        1,
        true,
        Some(USERNAME),
        Some(PASSWORD),
    );
    let owner = t1.elapsed();
    println!(
        "100 wrong guesses took {:.2} s; the owner's logon after them {:.0} ms",
        took.as_secs_f64(),
        owner.as_secs_f64() * 1e3
    );
    assert!(took >= Duration::from_secs(10), "{took:?}");
    assert_eq!(m.msg_type(), "A", "{}", m.text());
    server.shutdown().unwrap();
}

/// While an impostor guesses without pause at the owner's CompID (from the same address,
/// the worse case: both delays apply to the owner), the owner's Logon waits its turn and
/// succeeds: the throttle never locks it out.
#[test]
fn an_impostor_guessing_does_not_lock_the_owner_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path(), 100, 800));
    let addr = server.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let guesses = Arc::new(AtomicU64::new(0));
    let impostor = {
        let (stop, guesses) = (stop.clone(), guesses.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let (_, m) = try_logon(addr, "SECRET", 1, true, Some(USERNAME), Some("guess"));
                refused(&m);
                guesses.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // Until the delay is at its maximum: 100, 200, 400, then 800 ms after the fourth failure.
    let deadline = Instant::now() + T;
    while guesses.load(Ordering::Relaxed) < 4 {
        assert!(
            Instant::now() < deadline,
            "the impostor's guesses are not answered"
        );
        std::thread::park_timeout(Duration::from_millis(10));
    }
    let t0 = Instant::now();
    let (_, m) = try_logon(addr, "SECRET", 1, true, Some(USERNAME), Some(PASSWORD));
    let waited = t0.elapsed();
    stop.store(true, Ordering::Relaxed);
    impostor.join().unwrap();
    println!(
        "the owner logged on after {:.0} ms while an impostor guessed ({} guesses in all)",
        waited.as_secs_f64() * 1e3,
        guesses.load(Ordering::Relaxed)
    );
    assert_eq!(m.msg_type(), "A", "{}", m.text());
    // Its turn comes after the impostor's waiting Logons (at most `PENDING_PER_ADDR`) and its
    // own delay: a few maximum delays of 0.8 s. A generous bound, far below the 20 s a
    // lock-out would take to fail `try_logon`.
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    server.shutdown().unwrap();
}
