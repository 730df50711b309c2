//! Runs the session scenarios in `tests/scenarios/*.txt`: one step per line with what the
//! session must answer right below it, so a reader sees FIX behaviour without reading code.
//!
//! Format (`|` separates fields; 8, 9 and 10 are computed; 49, 56 and 52 default to
//! CLIENT1 -> RIALTO at the current time unless given):
//! ```text
//! # comment
//! config password=secret queue_max=2 version=FIX.4.2   (before anything else; with a
//!                             password the runner is the owner that checks a Logon's 554)
//! restore next_in=50 next_out=70
//! connect | disconnect
//! logout shutting down         we start the Logout handshake (with this Text)
//! > 35=D|34=2|11=A|...        an inbound message
//! send 35=8|11=A|...          the gateway sends an application message
//! @ +36s                      advance the clock and tick
//! < 35=2|7=2|16=0             next outbound message has these fields (`tag=*`: present, `tag=-`: absent)
//! app 11=A                    next delivered application message has these fields
//! ! LoggedOn { reset: false } next session event, as Debug text
//! = next_in=3 next_out=2 state=Active queued=0
//! ```
//! After each step, every output must be matched by the lines that follow it.

mod common;
use common::{pipes, SEC, T0};

use std::collections::VecDeque;
use std::path::Path;

use fix::app::AppMessage;
use fix::{
    Decoder, Encoder, FixVersion, Limits, MemoryStore, Session, SessionConfig, SessionEvent,
    SessionHandler,
};

#[derive(Default)]
struct Rec {
    out: VecDeque<Vec<u8>>,
    app: VecDeque<Vec<u8>>,
    events: VecDeque<SessionEvent>,
}

impl SessionHandler for Rec {
    fn send(&mut self, bytes: &[u8]) {
        self.out.push_back(bytes.to_vec());
    }
    fn on_event(&mut self, event: SessionEvent) {
        self.events.push_back(event);
    }
}

/// An application message given as raw fields (for `send`).
struct Raw {
    msg_type: Vec<u8>,
    fields: Vec<(u32, String)>,
}

impl AppMessage for Raw {
    fn msg_type(&self) -> &[u8] {
        &self.msg_type
    }
    fn encode_body(&self, _version: FixVersion, enc: &mut Encoder) {
        for (t, v) in &self.fields {
            enc.field(*t, v.as_bytes());
        }
    }
}

fn fields(text: &str) -> Vec<(u32, String)> {
    text.split('|')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .unwrap_or_else(|| panic!("not tag=value: {kv}"));
            (
                k.parse().unwrap_or_else(|_| panic!("bad tag {k}")),
                v.to_string(),
            )
        })
        .collect()
}

fn inbound(text: &str, version: FixVersion, now: u64) -> Vec<u8> {
    let given = fields(text);
    let get = |t: u32| given.iter().find(|(k, _)| *k == t).map(|(_, v)| v.clone());
    let mut ts = Vec::new();
    fix::write_utc_timestamp(&mut ts, now, fix::TimePrecision::Millis);
    let mut body = String::new();
    let mut push = |t: u32, v: &str| body.push_str(&format!("{t}={v}\x01"));
    push(35, &get(35).expect("35= is required"));
    push(49, &get(49).unwrap_or_else(|| "CLIENT1".into()));
    push(56, &get(56).unwrap_or_else(|| "RIALTO".into()));
    for t in [34, 43] {
        if let Some(v) = get(t) {
            push(t, &v);
        }
    }
    push(
        52,
        &get(52).unwrap_or_else(|| String::from_utf8(ts).unwrap()),
    );
    if let Some(v) = get(122) {
        push(122, &v);
    }
    for (t, v) in &given {
        if ![8, 35, 49, 56, 34, 43, 52, 122].contains(t) {
            push(*t, v);
        }
    }
    let version = match get(8).as_deref() {
        Some(b) => FixVersion::from_begin_string(b.as_bytes()).expect("known BeginString"),
        None => version,
    };
    let mut out = Vec::new();
    fix::wrap_body(version, body.as_bytes(), &mut out);
    out
}

fn check_fields(what: &str, bytes: &[u8], want: &str, at: &str) {
    let mut d = Decoder::new(Limits::default());
    let m = d
        .decode(bytes)
        .unwrap_or_else(|e| panic!("{at}: {what} does not decode ({e:?}): {}", pipes(bytes)));
    for (tag, v) in fields(want) {
        let got = m.get(tag).map(|x| String::from_utf8_lossy(x).into_owned());
        let ok = match v.as_str() {
            "*" => got.is_some(),
            "-" => got.is_none(),
            _ => got.as_deref() == Some(v.as_str()),
        };
        assert!(
            ok,
            "{at}: {what} {tag}={v} expected, got {got:?} in {}",
            pipes(bytes)
        );
    }
}

fn run(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut cfg = SessionConfig::new(FixVersion::Fix44, "RIALTO", "CLIENT1");
    let mut session: Option<Session<MemoryStore, Vec<u8>>> = None;
    // The password the runner, as the session's owner, checks a Logon's 554 against.
    let mut password: Option<String> = None;
    let mut h = Rec::default();
    let mut now = T0;
    for (n, raw) in text.lines().enumerate() {
        let at = format!("{name}:{}", n + 1);
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        let is_expectation = matches!(word, "<" | "app" | "!" | "=");
        if !is_expectation {
            assert!(
                h.out.is_empty() && h.app.is_empty() && h.events.is_empty(),
                "{at}: unmatched output before this step: out {:?} app {:?} events {:?}",
                h.out.iter().map(|b| pipes(b)).collect::<Vec<_>>(),
                h.app.iter().map(|b| pipes(b)).collect::<Vec<_>>(),
                h.events
            );
        }
        if word == "config" {
            assert!(session.is_none(), "{at}: config must come first");
            for kv in rest.split_whitespace() {
                let (k, v) = kv.split_once('=').unwrap();
                match k {
                    "password" => {
                        cfg.authenticate = true;
                        password = Some(v.to_string());
                    }
                    "queue_max" => cfg.queue_max = v.parse().unwrap(),
                    "version" => cfg.version = FixVersion::from_begin_string(v.as_bytes()).unwrap(),
                    _ => panic!("{at}: unknown config {k}"),
                }
            }
            continue;
        }
        let s = session.get_or_insert_with(|| Session::new(cfg.clone(), MemoryStore::new(1000)));
        match word {
            "restore" => {
                for kv in rest.split_whitespace() {
                    let (k, v) = kv.split_once('=').unwrap();
                    let v: u64 = v.parse().unwrap();
                    match k {
                        "next_in" => s.set_next_in(v),
                        "next_out" => s.set_next_out(v),
                        _ => panic!("{at}: unknown {k}"),
                    }
                }
            }
            "connect" => s.on_connected(now),
            "logout" => s.logout(rest.as_bytes(), now, &mut h),
            "disconnect" => s.on_disconnected(),
            ">" if password.is_some() && rest.starts_with("35=A|") => {
                // The owner's part: check the Password, hand the session the verdict.
                let bytes = inbound(rest, cfg.version, now);
                let mut d = Decoder::new(Limits::default());
                let m = d.decode(&bytes).unwrap();
                let (header, msg) = fix::read_inbound(&m, None, |m| {
                    Ok::<_, Box<fix::Malformed>>(m.as_bytes().to_vec())
                });
                let fix::Inbound::Logon(mut l) = msg else {
                    panic!("{at}: not a Logon");
                };
                let right = l.password.map(|p| p.as_bytes().to_vec())
                    == password.as_ref().map(|p| p.as_bytes().to_vec());
                l.credentials = if right {
                    fix::Credentials::Accepted
                } else {
                    fix::Credentials::Refused
                };
                l.wipe_password();
                if let Some(a) = s.on_message(&header, &fix::Inbound::Logon(l), now, &mut h) {
                    h.app.push_back(a.to_vec());
                }
            }
            ">" => {
                let bytes = inbound(rest, cfg.version, now);
                let mut app = Vec::new();
                let used = s.on_bytes(&bytes, now, &mut h, &mut |m| app.push(m.to_vec()));
                assert_eq!(used, bytes.len(), "{at}");
                h.app.extend(app);
            }
            "send" => {
                let mut f = fields(rest);
                assert_eq!(f[0].0, 35, "{at}: send starts with 35=");
                let msg_type = f.remove(0).1.into_bytes();
                s.send_app(
                    &Raw {
                        msg_type,
                        fields: f,
                    },
                    now,
                    &mut h,
                );
            }
            "@" => {
                let secs: u64 = rest
                    .strip_prefix('+')
                    .and_then(|r| r.strip_suffix('s'))
                    .and_then(|r| r.parse().ok())
                    .unwrap_or_else(|| panic!("{at}: expected @ +Ns"));
                now += secs * SEC;
                s.on_tick(now, &mut h);
            }
            "<" => {
                let msg = h
                    .out
                    .pop_front()
                    .unwrap_or_else(|| panic!("{at}: nothing sent"));
                check_fields("sent message", &msg, rest, &at);
            }
            "app" => {
                let msg = h
                    .app
                    .pop_front()
                    .unwrap_or_else(|| panic!("{at}: nothing delivered"));
                check_fields("delivered message", &msg, rest, &at);
            }
            "!" => {
                let e = h
                    .events
                    .pop_front()
                    .unwrap_or_else(|| panic!("{at}: no event"));
                assert_eq!(format!("{e:?}"), rest, "{at}");
            }
            "=" => {
                for kv in rest.split_whitespace() {
                    let (k, v) = kv.split_once('=').unwrap();
                    let got = match k {
                        "next_in" => s.next_in().to_string(),
                        "next_out" => s.next_out().to_string(),
                        "state" => format!("{:?}", s.state()),
                        "queued" => s.queued().count().to_string(),
                        _ => panic!("{at}: unknown {k}"),
                    };
                    assert_eq!(got, v, "{at}: {k}");
                }
            }
            _ => panic!("{at}: unknown step {word}"),
        }
    }
    assert!(
        h.out.is_empty() && h.app.is_empty() && h.events.is_empty(),
        "{name}: unmatched output at the end: out {:?} app {:?} events {:?}",
        h.out.iter().map(|b| pipes(b)).collect::<Vec<_>>(),
        h.app.iter().map(|b| pipes(b)).collect::<Vec<_>>(),
        h.events
    );
}

#[test]
fn session_scenarios() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "scenarios missing in {}", dir.display());
    for f in &files {
        run(f);
    }
}
