//! Runs the FIX edge's scenario files (`scenarios/*.fixscn`): FIX messages in, FIX messages
//! out, through the adapter, the sessions and the exchange exactly as the server applies
//! journal records. `scenarios/README.md` has the format and the configuration.

use exchange::{ClHashes, Exchange};
use fix::{Decoder, FixVersion, Inbound, Limits, TimePrecision};
use fix_gateway::{
    ConnIds, FixAdapter, FixConfig, FixEdge, FixInput, InstrumentDef, Outbox, SessionDef,
    ToExchange,
};
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;
use types::{Instrument, Symbol};

/// 2026-01-01T00:00:00Z: `at 0`.
/// The sessions with a password, and their passwords (the server keeps salted hashes and
/// verifies them; this runner stands in for it).
const PASSWORDS: [(&str, &str); 1] = [("PW", "secret")];
const BASE_NS: u64 = 1_767_225_600 * 1_000_000_000;

fn configs() -> (Arc<exchange::Config>, Arc<FixConfig>) {
    let sym = |s| Symbol::new(s).unwrap();
    let mut xcfg = exchange::Config::new(
        vec![
            Instrument {
                symbol: sym("ACME"),
                tick: 1,
                lot: 1,
            },
            Instrument {
                symbol: sym("BETA"),
                tick: 5,
                lot: 10,
            },
        ],
        vec![vec![1, 2], vec![3]],
        1_000,
    );
    // By session: PW's orders are canceled when it disconnects.
    xcfg.cancel_on_disconnect = vec![false, false, false, true];
    xcfg.trading_day_end_ns = Some(21 * 3600 * 1_000_000_000);
    let session = |sender: &str, version, password: Option<&str>, firm| SessionDef {
        sender_comp_id: sender.into(),
        target_comp_id: "RIALTO".into(),
        version,
        // The edge reads only the server's verdict; this runner, as the owner, gives it by
        // comparing the Logon's Password with `PASSWORDS`.
        password_hash: password.map(|_| "checked by the runner".into()),
        username: None,
        firm,
        market_data: Default::default(),
        market_data_extensions: false,
        allow_reset_seq_num: true,
        // Dictionary validation is the conformance suite's (conformance/); here the readers'
        // own checks answer bad fields.
        validate: false,
        drop_copy: false,
    };
    let drop_copy = |sender: &str, version, firm| SessionDef {
        drop_copy: true,
        ..session(sender, version, None, firm)
    };
    let fcfg = FixConfig {
        sessions: vec![
            session("C44", FixVersion::Fix44, None, 0),
            session("C42", FixVersion::Fix42, None, 1),
            session("C50", FixVersion::Fix50Sp2, None, 0),
            session("PW", FixVersion::Fix44, Some("secret"), 1),
            drop_copy("DC44", FixVersion::Fix44, 1),
            drop_copy("DC50", FixVersion::Fix50Sp2, 1),
            drop_copy("DC42", FixVersion::Fix42, 0),
        ],
        instruments: vec![
            InstrumentDef {
                symbol: sym("ACME"),
                tick: 1,
                lot: 1,
                price_decimals: 2,
            },
            InstrumentDef {
                symbol: sym("BETA"),
                tick: 5,
                lot: 1,
                price_decimals: 2,
            },
        ],
        resend_store_max: 4,
        heartbeat_min_s: 1,
        heartbeat_max_s: 3600,
        sending_time_window_ns: Some(120_000_000_000),
    };
    (Arc::new(xcfg), Arc::new(fcfg))
}

/// One FIX message as a scenario line writes it: MsgType and `tag=value` fields; `-tag` says
/// the tag is absent (an expectation) or not to be added (an input).
struct Line {
    msg_type: String,
    fields: Vec<(u32, String)>,
    absent: Vec<u32>,
}

fn parse_fields(text: &str) -> Result<Line, String> {
    let mut words = text.split_whitespace();
    let msg_type = words.next().ok_or("a MsgType is missing")?.to_string();
    let mut fields: Vec<(u32, String)> = Vec::new();
    let mut absent = Vec::new();
    for w in words {
        // `-N` leaves tag N out, except inside a Text (58), where it is a word ("got -1").
        let in_text = fields.last().is_some_and(|(t, _)| *t == 58);
        if let Some(t) = w
            .strip_prefix('-')
            .and_then(|t| t.parse().ok())
            .filter(|_| !in_text)
        {
            absent.push(t);
            continue;
        }
        match w.split_once('=').map(|(t, v)| (t.parse::<u32>(), v)) {
            Some((Ok(tag), v)) => fields.push((tag, v.to_string())),
            // A value with spaces (a Text): the word continues the previous value.
            _ => match fields.last_mut() {
                Some((_, v)) => {
                    v.push(' ');
                    v.push_str(w);
                }
                None => return Err(format!("`{w}` is not tag=value")),
            },
        }
    }
    Ok(Line {
        msg_type,
        fields,
        absent,
    })
}

struct Conn {
    id: u64,
    begin_string: String,
    sender: String,
    target: String,
    ids: Option<ConnIds>,
    open: bool,
}

enum Out {
    Msg { conn: u64, bytes: Vec<u8> },
    Close { conn: u64 },
}

struct World {
    adapter: FixAdapter,
    edge: FixEdge,
    exchange: Exchange,
    decoder: Decoder,
    conns: HashMap<String, Conn>,
    next_conn: u64,
    /// Next inbound MsgSeqNum, by SenderCompID.
    next_in: HashMap<String, u64>,
    record: u64,
    now_ns: u64,
    pending: VecDeque<Out>,
}

impl World {
    fn new() -> World {
        let (xcfg, fcfg) = configs();
        let mut w = World {
            adapter: FixAdapter::new(fcfg.clone()),
            edge: FixEdge::new(fcfg),
            exchange: Exchange::new(xcfg),
            decoder: Decoder::new(Limits::default()),
            conns: HashMap::new(),
            next_conn: 1,
            next_in: HashMap::new(),
            record: 0,
            now_ns: BASE_NS,
            pending: VecDeque::new(),
        };
        w.record += 1;
        let mut out = Outbox::default();
        w.edge
            .on_startup::<false>(w.record, w.now_ns, &mut w.exchange, &mut out);
        w.take(out);
        w
    }

    fn take(&mut self, out: Outbox) {
        for it in &out.items {
            self.pending.push_back(if it.close {
                Out::Close { conn: it.conn }
            } else {
                Out::Msg {
                    conn: it.conn,
                    bytes: out.buf[it.start..it.end].to_vec(),
                }
            });
        }
    }

    fn name_of(&self, conn: u64) -> String {
        self.conns
            .iter()
            .find(|(_, c)| c.id == conn)
            .map_or_else(|| format!("#{conn}"), |(n, _)| n.clone())
    }

    fn show(&self, o: &Out) -> String {
        match o {
            Out::Close { conn } => format!("{} closed", self.name_of(*conn)),
            Out::Msg { conn, bytes } => format!(
                "{} < {}",
                self.name_of(*conn),
                String::from_utf8_lossy(bytes).replace('\x01', "|")
            ),
        }
    }

    /// The connection `id` is gone: the server's `Record::Disconnected`.
    fn disconnected(&mut self, id: u64) {
        let mut out = Outbox::default();
        self.record += 1;
        self.edge.on_disconnected::<false>(
            self.record,
            self.now_ns,
            id,
            &mut self.exchange,
            &mut out,
        );
        self.take(out);
    }

    /// Everything the last action sent must have been expected.
    fn settle(&mut self) -> Result<(), String> {
        match self.pending.front() {
            None => Ok(()),
            Some(o) => Err(format!("unexpected output: {}", self.show(o))),
        }
    }

    fn send(&mut self, name: &str, text: &str) -> Result<(), String> {
        let line = parse_fields(text)?;
        let conn = self
            .conns
            .get(name)
            .filter(|c| c.open)
            .ok_or_else(|| format!("no open connection `{name}`"))?;
        let given = |t: u32| line.fields.iter().any(|(g, _)| *g == t) || line.absent.contains(&t);
        let next = self.next_in.entry(conn.sender.clone()).or_insert(1);
        let reset = line.msg_type == "A" && line.fields.iter().any(|(t, v)| *t == 141 && v == "Y");
        if reset {
            *next = 1;
        }
        let mut body = format!("35={}\x01", line.msg_type);
        let mut header = Vec::new();
        if !given(49) {
            header.push((49, conn.sender.clone()));
        }
        if !given(56) {
            header.push((56, conn.target.clone()));
        }
        if !given(34) {
            header.push((34, next.to_string()));
        }
        if !given(52) {
            let mut ts = Vec::new();
            fix::write_utc_timestamp(&mut ts, self.now_ns, TimePrecision::Millis);
            header.push((52, String::from_utf8(ts).unwrap()));
        }
        let mut begin_string = conn.begin_string.clone();
        for (t, v) in header.iter().chain(&line.fields) {
            if *t == 8 {
                begin_string = v.clone();
                continue;
            }
            // A resend (a lower MsgSeqNum) does not move the client's next number back.
            if *t == 34 {
                *next = (*next).max(v.parse::<u64>().unwrap_or(0) + 1);
            }
            // After a SequenceReset-Reset the client numbers from NewSeqNo (a GapFill is a
            // resend: it moves the number on at most).
            if *t == 36 && line.msg_type == "4" {
                let new_seq = v.parse().unwrap_or(*next);
                let gap_fill = line.fields.iter().any(|(t, v)| *t == 123 && v == "Y");
                *next = if gap_fill {
                    (*next).max(new_seq)
                } else {
                    new_seq
                };
            }
            body.push_str(&format!("{t}={v}\x01"));
        }
        let mut msg = format!("8={begin_string}\x019={}\x01{body}", body.len()).into_bytes();
        let sum = msg.iter().map(|&b| b as u32).sum::<u32>() % 256;
        msg.extend_from_slice(format!("10={sum:03}\x01").as_bytes());

        let id = conn.id;
        let mut ids = self.conns.get_mut(name).unwrap().ids.take();
        let mut input = self.adapter.to_input(id, &mut ids, &mut self.decoder, &msg);
        self.conns.get_mut(name).unwrap().ids = ids;
        if let Some(FixInput {
            msg: Inbound::Logon(l),
            ..
        }) = input.as_mut()
        {
            // The server's part: check the Password, journal the verdict only.
            let want = PASSWORDS
                .iter()
                .find(|(s, _)| s.as_bytes() == l.sender_comp_id.as_bytes())
                .map(|(_, p)| p.as_bytes());
            if let Some(want) = want {
                l.credentials = if l.password.map(|p| p.as_bytes() == want) == Some(true) {
                    fix::Credentials::Accepted
                } else {
                    fix::Credentials::Refused
                };
            }
            l.wipe_password();
        }
        if let Some(fi) = input {
            let mut out = Outbox::default();
            self.record += 1;
            let x = ToExchange::new(&mut self.exchange, ClHashes::default(), None);
            self.edge
                .on_fix::<false>(self.record, self.now_ns, &fi, x, &mut out);
            self.take(out);
        }
        Ok(())
    }

    fn expect(&mut self, name: &str, text: &str) -> Result<(), String> {
        let want = parse_fields(text)?;
        let conn = self
            .conns
            .get(name)
            .ok_or_else(|| format!("no connection `{name}`"))?
            .id;
        let got = self
            .pending
            .pop_front()
            .ok_or_else(|| format!("expected {name} < {text}, but nothing was sent"))?;
        let shown = self.show(&got);
        let Out::Msg { conn: c, bytes } = got else {
            return Err(format!("expected {name} < {text}, got {shown}"));
        };
        if c != conn {
            return Err(format!("expected {name} < {text}, got {shown}"));
        }
        let m = self
            .decoder
            .decode(&bytes)
            .map_err(|e| format!("sent an undecodable message ({e:?}): {shown}"))?;
        let mut problems = Vec::new();
        if m.msg_type() != want.msg_type.as_bytes() {
            problems.push(format!(
                "MsgType is {}",
                String::from_utf8_lossy(m.msg_type())
            ));
        }
        for (tag, v) in &want.fields {
            match m.get(*tag) {
                Some(g) if v == "*" || g == v.as_bytes() => {}
                Some(g) => problems.push(format!("{tag}={}", String::from_utf8_lossy(g))),
                None => problems.push(format!("{tag} is absent")),
            }
        }
        for tag in &want.absent {
            if m.get(*tag).is_some() {
                problems.push(format!("{tag} is present"));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "expected {name} < {text}\n  but {}\n  in {shown}",
                problems.join(", ")
            ))
        }
    }

    fn step(&mut self, line: &str) -> Result<(), String> {
        let (head, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        match head {
            "connect" => {
                self.settle()?;
                let w: Vec<&str> = rest.split_whitespace().collect();
                let (&name, &sender) = (
                    w.first().ok_or("connect: a name is missing")?,
                    w.get(1).ok_or("connect: a SenderCompID is missing")?,
                );
                let def = self
                    .adapter
                    .config()
                    .sessions
                    .iter()
                    .find(|d| d.sender_comp_id == sender);
                let target = w.get(2).copied().unwrap_or("RIALTO");
                let begin = w.get(3).map(|s| s.to_string()).unwrap_or_else(|| {
                    let v = def.map_or(FixVersion::Fix44, |d| d.version);
                    String::from_utf8_lossy(v.begin_string()).into_owned()
                });
                let conn = Conn {
                    id: self.next_conn,
                    begin_string: begin,
                    sender: sender.into(),
                    target: target.into(),
                    ids: None,
                    open: true,
                };
                self.next_conn += 1;
                self.conns.insert(name.into(), conn);
                Ok(())
            }
            // The client closed its connection.
            "disconnect" => {
                self.settle()?;
                let c = self
                    .conns
                    .get_mut(rest)
                    .ok_or_else(|| format!("no connection `{rest}`"))?;
                c.open = false;
                let id = c.id;
                self.disconnected(id);
                Ok(())
            }
            "at" => {
                self.settle()?;
                let s: f64 = rest
                    .parse()
                    .map_err(|_| format!("at: `{rest}` is not seconds"))?;
                let ns = BASE_NS + (s * 1e9) as u64;
                if ns < self.now_ns {
                    return Err("at: time goes backwards".into());
                }
                self.now_ns = ns;
                Ok(())
            }
            "tick" => {
                self.settle()?;
                let mut out = Outbox::default();
                self.record += 1;
                self.edge
                    .on_tick::<false>(self.record, self.now_ns, &mut self.exchange, &mut out);
                self.take(out);
                Ok(())
            }
            // The process died and starts again: every connection is gone.
            "restart" => {
                self.settle()?;
                for c in self.conns.values_mut() {
                    c.open = false;
                }
                let mut out = Outbox::default();
                self.record += 1;
                self.edge.on_startup::<false>(
                    self.record,
                    self.now_ns,
                    &mut self.exchange,
                    &mut out,
                );
                self.take(out);
                Ok(())
            }
            "shutdown" => {
                self.settle()?;
                let mut out = Outbox::default();
                self.record += 1;
                self.edge.on_shutdown::<false>(
                    self.record,
                    self.now_ns,
                    &mut self.exchange,
                    &mut out,
                );
                self.take(out);
                Ok(())
            }
            name => {
                let (dir, text) = rest.split_once(' ').unwrap_or((rest, ""));
                match dir {
                    ">" => {
                        self.settle()?;
                        self.send(name, text)
                    }
                    "<" => self.expect(name, text),
                    "closed" => {
                        let conn = self
                            .conns
                            .get_mut(name)
                            .ok_or_else(|| format!("no connection `{name}`"))?;
                        conn.open = false;
                        let id = conn.id;
                        match self.pending.pop_front() {
                            Some(Out::Close { conn }) if conn == id => {
                                // The server tells the edge the connection is gone.
                                self.disconnected(id);
                                Ok(())
                            }
                            Some(o) => {
                                Err(format!("expected {name} closed, got {}", self.show(&o)))
                            }
                            None => Err(format!("expected {name} closed, but nothing was sent")),
                        }
                    }
                    _ => Err(format!("`{line}` is not a scenario line")),
                }
            }
        }
    }
}

/// A scenario being run: its name, its first line, its world and its first failure.
type Current = (String, usize, World, Option<String>);

/// Ends a scenario: counts it as passed or records why it failed.
fn finish(file: &str, cur: Option<Current>, passed: &mut usize, failures: &mut Vec<String>) {
    if let Some((name, at, mut w, failed)) = cur {
        match failed.map_or_else(|| w.settle().err(), Some) {
            None => *passed += 1,
            Some(e) => failures.push(format!("{file}:{at} scenario {name}: {e}")),
        }
    }
}

/// Runs one file; returns how many scenarios passed, and the failures.
fn run_file(path: &Path) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    let (mut passed, mut failures) = (0, Vec::new());
    let mut current: Option<Current> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split(" #").next().unwrap().trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("scenario ") {
            finish(&file, current.take(), &mut passed, &mut failures);
            current = Some((name.to_string(), i + 1, World::new(), None));
            continue;
        }
        match current.as_mut() {
            None => failures.push(format!("{file}:{}: a line before any scenario", i + 1)),
            Some((_, _, _, Some(_))) => {}
            Some((_, _, w, failed)) => {
                if let Err(e) = w.step(line) {
                    *failed = Some(format!("line {}: {e}", i + 1));
                }
            }
        }
    }
    finish(&file, current.take(), &mut passed, &mut failures);
    (passed, failures)
}

#[test]
fn fix_edge_scenarios() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fixscn"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scenario files in {}", dir.display());
    let (mut passed, mut failures) = (0, Vec::new());
    for f in &files {
        let (p, mut fl) = run_file(f);
        passed += p;
        failures.append(&mut fl);
    }
    assert!(
        failures.is_empty(),
        "{} scenario(s) failed, {passed} passed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(passed >= 20, "only {passed} scenarios ran");
}

/// The runner itself must catch a wrong expectation, an unexpected message and a missing one.
#[test]
fn the_runner_fails_what_it_should() {
    let script = |lines: &[&str]| -> Result<(), String> {
        let mut w = World::new();
        for l in lines {
            w.step(l)?;
        }
        w.settle()
    };
    let logon = "c > A 98=0 108=30";
    let ack = "c < A 34=1 108=30";
    assert!(script(&["connect c C44", logon, ack]).is_ok());
    let wrong = script(&["connect c C44", logon, "c < A 108=31"]).unwrap_err();
    assert!(wrong.contains("108=30"), "{wrong}");
    let unexpected = script(&["connect c C44", logon]).unwrap_err();
    assert!(
        unexpected.contains("unexpected output: c < 8=FIX.4.4"),
        "{unexpected}"
    );
    let missing = script(&["connect c C44", logon, ack, "c < 0"]).unwrap_err();
    assert!(missing.contains("nothing was sent"), "{missing}");
    let absent = script(&["connect c C44", logon, "c < A -108"]).unwrap_err();
    assert!(absent.contains("108 is present"), "{absent}");
}
