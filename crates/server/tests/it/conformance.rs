//! The FIX session conformance suite: every `conformance/*.fixcase` file at the repository's
//! root is one case, run over TCP against a real server (`server::Server`, its event loop,
//! journal and sockets on 127.0.0.1) once per FIX version it applies to: FIX.4.2, FIX.4.4 and
//! FIXT.1.1 with FIX 5.0SP2. The language is in `conformance/README.md`.
//!
//! Each (case, version) run has sessions of its own, so the runs share one server and go in
//! parallel. A failure names the file, the version and the line.

use fix::{frame, Decoder};
use server::{Config, Server};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Header tags a send line may give besides the ones always added (PossDupFlag,
/// OrigSendingTime, PossResend, OnBehalfOf/DeliverTo CompIDs, ApplVerID, sub and location ids).
const HEADER_TAGS: [u32; 10] = [43, 122, 97, 115, 128, 1128, 50, 57, 142, 143];

/// How long an expectation waits by default.
const WAIT: Duration = Duration::from_secs(5);
/// Runs at once (most of a run is waiting on the server's timers).
const PARALLEL: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ver {
    V42,
    V44,
    V50,
}

impl Ver {
    const ALL: [Ver; 3] = [Ver::V42, Ver::V44, Ver::V50];
    fn begin_string(self) -> &'static str {
        match self {
            Ver::V42 => "FIX.4.2",
            Ver::V44 => "FIX.4.4",
            Ver::V50 => "FIXT.1.1",
        }
    }
    fn code(self) -> &'static str {
        match self {
            Ver::V42 => "42",
            Ver::V44 => "44",
            Ver::V50 => "50",
        }
    }
    fn parse(s: &str) -> Option<Ver> {
        Ver::ALL.into_iter().find(|v| v.code() == s)
    }
}

/// One field of a line: `tag=value`, `tag=*` (expect: present), `tag~text` (expect:
/// contains), `-tag` (send: leave out; expect: absent).
#[derive(Clone, Debug)]
enum Field {
    Is(u32, String),
    Any(u32),
    Contains(u32, String),
    Absent(u32),
    /// `^bytes`: a field written as given, for a malformed one (`^abc` no '=', `^=x` an
    /// empty tag, `^x1=5` a tag that is not a number); send lines only.
    Raw(String),
}

/// The tag of a `Field::Raw` in a message being built (no FIX tag is 0).
const RAW: u32 = 0;

impl Field {
    fn tag(&self) -> u32 {
        match self {
            Field::Is(t, _) | Field::Any(t) | Field::Contains(t, _) | Field::Absent(t) => *t,
            Field::Raw(_) => RAW,
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// A new connection; `session` names which of the run's sessions the client speaks for
    /// (`main`, `other`, or a literal SenderCompID).
    Connect {
        conn: String,
        as_comp_id: String,
    },
    Send {
        conn: String,
        msg_type: String,
        fields: Vec<Field>,
        /// `!9=`, `!10=`: BodyLength or CheckSum as given instead of computed; `!8=`: the
        /// BeginString; `!swap=9` (BodyLength before BeginString).
        overrides: Vec<(String, String)>,
    },
    Expect {
        conn: String,
        msg_type: String,
        fields: Vec<Field>,
        within: Duration,
        /// `skip-heartbeats`: the server's own Heartbeats (no TestReqID) before it are passed.
        skip_heartbeats: bool,
    },
    Closed {
        conn: String,
        within: Duration,
    },
    Silent {
        conn: String,
        secs: Duration,
    },
    Sleep(Duration),
    Disconnect {
        conn: String,
    },
}

/// `password`'s salted hash, at argon2's least cost (the server verifies it at the cost it
/// names).
fn cheap_hash(password: &str) -> String {
    let params = argon2::Params::new(8, 1, 1, None).unwrap();
    let a = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
    server::auth::hash_with(&a, password.as_bytes()).unwrap()
}

#[derive(Clone, Debug, Default)]
struct Opts {
    password: Option<String>,
    reset_refused: bool,
    validate_off: bool,
}

#[derive(Clone, Debug)]
struct Case {
    name: String,
    versions: Vec<Ver>,
    opts: Opts,
    /// (line number, versions it applies to (empty: all), op).
    ops: Vec<(usize, Vec<Ver>, Op)>,
}

fn secs(s: &str, line: usize) -> Duration {
    Duration::from_secs_f64(
        s.parse::<f64>()
            .unwrap_or_else(|_| panic!("line {line}: {s:?} is not a number of seconds")),
    )
}

/// `tag=value` tokens; a token that is not one continues the value before it (a Text with
/// spaces).
fn fields(words: &[&str], line: usize) -> (Vec<Field>, Vec<(String, String)>, Option<Duration>) {
    let mut out: Vec<Field> = Vec::new();
    let mut overrides = Vec::new();
    let mut within = None;
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        i += 1;
        if w == "skip-heartbeats" {
            overrides.push((w.to_string(), String::new()));
            continue;
        }
        if w == "within" {
            within = Some(secs(words.get(i).expect("within N"), line));
            i += 1;
            continue;
        }
        if let Some(r) = w.strip_prefix('^') {
            out.push(Field::Raw(r.to_string()));
            continue;
        }
        if let Some(o) = w.strip_prefix('!') {
            let (k, v) = o.split_once('=').unwrap_or((o, ""));
            overrides.push((k.to_string(), v.to_string()));
            continue;
        }
        // `-N` leaves tag N out, except inside a Text (58), where it is a word ("got -5").
        let in_text = matches!(out.last(), Some(Field::Is(58, _) | Field::Contains(58, _)));
        if let Some(t) = w
            .strip_prefix('-')
            .and_then(|t| t.parse().ok())
            .filter(|_| !in_text)
        {
            out.push(Field::Absent(t));
            continue;
        }
        let eq = w.find(['=', '~']);
        let parsed = eq.and_then(|p| Some((w[..p].parse::<u32>().ok()?, p)));
        match parsed {
            Some((tag, p)) => {
                let v = w[p + 1..].to_string();
                out.push(if &w[p..p + 1] == "~" {
                    Field::Contains(tag, v)
                } else if v == "*" {
                    Field::Any(tag)
                } else {
                    Field::Is(tag, v)
                });
            }
            None => match out.last_mut() {
                Some(Field::Is(_, v)) | Some(Field::Contains(_, v)) => {
                    v.push(' ');
                    v.push_str(w);
                }
                _ => panic!("line {line}: {w:?} is not tag=value"),
            },
        }
    }
    (out, overrides, within)
}

fn parse_case(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap();
    let mut c = Case {
        name: path.file_stem().unwrap().to_string_lossy().into_owned(),
        versions: Ver::ALL.to_vec(),
        opts: Opts::default(),
        ops: Vec::new(),
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let l = raw.split(" #").next().unwrap().trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut words: Vec<&str> = l.split_whitespace().collect();
        let mut only = Vec::new();
        if words[0].starts_with('[') {
            // `[42 44]` at the start: the line applies to these versions only.
            while let Some(w) = words.first() {
                let v = w.trim_matches(['[', ']']);
                only.push(Ver::parse(v).unwrap_or_else(|| panic!("line {n}: version {v:?}")));
                let end = w.ends_with(']');
                words.remove(0);
                if end {
                    break;
                }
            }
        }
        let op = match words[0] {
            "versions" => {
                c.versions = words[1..]
                    .iter()
                    .map(|v| Ver::parse(v).unwrap_or_else(|| panic!("line {n}: version {v:?}")))
                    .collect();
                continue;
            }
            "session" => {
                for w in &words[1..] {
                    match w.split_once('=') {
                        Some(("password", p)) => c.opts.password = Some(p.to_string()),
                        Some(("reset", "refuse")) => c.opts.reset_refused = true,
                        Some(("validate", "off")) => c.opts.validate_off = true,
                        _ => panic!("line {n}: session option {w:?}"),
                    }
                }
                continue;
            }
            "sleep" => Op::Sleep(secs(words[1], n)),
            "connect" => Op::Connect {
                conn: words[1].to_string(),
                as_comp_id: words.get(2).unwrap_or(&"main").to_string(),
            },
            "disconnect" => Op::Disconnect {
                conn: words[1].to_string(),
            },
            conn => {
                let conn = conn.to_string();
                match words.get(1).copied() {
                    Some(">") => {
                        let (fields, overrides, _) = fields(&words[3..], n);
                        Op::Send {
                            conn,
                            msg_type: words[2].to_string(),
                            fields,
                            overrides,
                        }
                    }
                    Some("<") => {
                        let (fields, flags, within) = fields(&words[3..], n);
                        assert!(
                            !fields.iter().any(|f| matches!(f, Field::Raw(_))),
                            "line {n}: ^raw is for send lines"
                        );
                        Op::Expect {
                            conn,
                            msg_type: words[2].to_string(),
                            fields,
                            within: within.unwrap_or(WAIT),
                            skip_heartbeats: flags.iter().any(|(f, _)| f == "skip-heartbeats"),
                        }
                    }
                    Some("closed") => Op::Closed {
                        conn,
                        within: words
                            .get(3)
                            .map(|s| secs(s, n))
                            .filter(|_| words.get(2) == Some(&"within"))
                            .unwrap_or(WAIT),
                    },
                    Some("silent") => Op::Silent {
                        conn,
                        secs: secs(words.get(2).unwrap_or(&"0.5"), n),
                    },
                    _ => panic!("line {n}: cannot read {l:?}"),
                }
            }
        };
        c.ops.push((n, only, op));
    }
    c
}

/// The sessions of one run: `main` and `other`, with this case's options.
fn comp_ids(case_index: usize, v: Ver) -> (String, String) {
    (
        format!("K{case_index}V{}", v.code()),
        format!("L{case_index}V{}", v.code()),
    )
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// `now`, `now-N`, `now+N` (seconds) as a UTCTimestamp with milliseconds.
fn time_value(v: &str) -> Option<String> {
    let rest = v.strip_prefix("now")?;
    let off: f64 = if rest.is_empty() {
        0.0
    } else {
        rest.parse().ok()?
    };
    let ns = (now_ns() as i128 + (off * 1e9) as i128) as u64;
    let mut out = Vec::new();
    fix::write_utc_timestamp(&mut out, ns, fix::TimePrecision::Millis);
    Some(String::from_utf8(out).unwrap())
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    closed: bool,
}

impl Conn {
    /// The next message within `d`: `Ok(None)` on timeout, `Err` when the peer closed.
    fn next(&mut self, d: Duration) -> Result<Option<Vec<u8>>, String> {
        let end = Instant::now() + d;
        loop {
            match frame(&self.buf, 1 << 20) {
                Ok(Some(n)) => return Ok(Some(self.buf.drain(..n).collect())),
                Ok(None) => {}
                Err(e) => return Err(format!("the server sent a garbled frame: {e:?}")),
            }
            if self.closed {
                return Err("closed".into());
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.stream.set_read_timeout(Some(left)).unwrap();
            let mut b = [0u8; 8192];
            match self.stream.read(&mut b) {
                Ok(0) => self.closed = true,
                Ok(k) => self.buf.extend_from_slice(&b[..k]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => self.closed = true,
            }
        }
    }
}

struct Run<'a> {
    v: Ver,
    main: String,
    other: String,
    addr: SocketAddr,
    conns: HashMap<String, (Conn, String)>,
    /// Each client session's next MsgSeqNum, by SenderCompID.
    next_seqs: HashMap<String, u64>,
    case: &'a Case,
    log: String,
    /// Values kept by `tag=$name` in an expectation, used as `$name` in a later send.
    vars: HashMap<String, String>,
}

fn show(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).replace('\x01', "|")
}

impl Run<'_> {
    fn comp_id(&self, who: &str) -> String {
        match who {
            "main" => self.main.clone(),
            "other" => self.other.clone(),
            s => s.to_string(),
        }
    }

    fn send(
        &mut self,
        conn: &str,
        msg_type: &str,
        given: &[Field],
        overrides: &[(String, String)],
    ) -> Result<(), String> {
        let v = self.v;
        let (_, sender) = self.conns.get(conn).ok_or("no such connection")?;
        let sender = sender.clone();
        let next_seq = *self.next_seqs.entry(sender.clone()).or_insert(1);
        // Macros: `logon` and `order <ClOrdID>` are a Logon and a NewOrderSingle with the
        // version's usual fields; given fields replace them.
        let (msg_type, mut body): (&str, Vec<(u32, String)>) = match msg_type {
            "logon" => {
                let mut b = vec![(98, "0".to_string()), (108, "30".to_string())];
                if v == Ver::V50 {
                    b.push((1137, "9".into()));
                }
                ("A", b)
            }
            "order" => {
                let mut b = vec![
                    (11, "o1".to_string()),
                    (55, "ACME".into()),
                    (54, "1".into()),
                    (38, "1".into()),
                    (40, "2".into()),
                    (44, "1".into()),
                    (59, "0".into()),
                    (60, "now".into()),
                ];
                if v == Ver::V42 {
                    b.insert(1, (21, "1".into()));
                }
                ("D", b)
            }
            t => (t, Vec::new()),
        };
        let mut header: Vec<(u32, String)> = vec![
            (49, sender.clone()),
            (56, "RIALTO".into()),
            (34, next_seq.to_string()),
            (52, "now".into()),
        ];
        // A given field replaces the added header field or the macro's field of its tag (once);
        // any other goes where it is written, except that a header tag given to a macro joins
        // the header.
        let macro_fields = body.len();
        let mut replaced = vec![false; macro_fields];
        for f in given {
            match f {
                Field::Is(t, val) => {
                    let in_macro = body[..macro_fields]
                        .iter()
                        .zip(&replaced)
                        .position(|((bt, _), r)| bt == t && !r);
                    if let Some(h) = header.iter_mut().find(|(ht, _)| ht == t) {
                        h.1 = val.clone();
                    } else if let Some(i) = in_macro {
                        body[i].1 = val.clone();
                        replaced[i] = true;
                    } else if macro_fields > 0 && HEADER_TAGS.contains(t) {
                        header.push((*t, val.clone()));
                    } else {
                        body.push((*t, val.clone()));
                    }
                }
                Field::Raw(r) => body.push((RAW, r.clone())),
                Field::Absent(_) => {}
                _ => return Err("a send line takes tag=value, ^raw and -tag only".into()),
            }
        }
        for f in given {
            if let Field::Absent(t) = f {
                header.retain(|(ht, _)| ht != t);
                body.retain(|(bt, _)| bt != t);
            }
        }
        let seq = header
            .iter()
            .find(|(t, _)| *t == 34)
            .and_then(|(_, s)| s.parse::<u64>().ok());
        let reset = msg_type == "A" && body.iter().any(|(t, val)| *t == 141 && val == "Y");
        let mut b = String::new();
        write!(b, "35={msg_type}\x01").unwrap();
        for (t, val) in header.iter().chain(&body) {
            if *t == RAW {
                write!(b, "{val}\x01").unwrap();
                continue;
            }
            let val = match val.strip_prefix('$') {
                Some(name) => self.vars.get(name).cloned().ok_or(format!("no ${name}"))?,
                None => time_value(val).unwrap_or_else(|| val.clone()),
            };
            write!(b, "{t}={val}\x01").unwrap();
        }
        let get = |k: &str| {
            overrides
                .iter()
                .find(|(o, _)| o == k)
                .map(|(_, x)| x.clone())
        };
        let begin = get("8").unwrap_or_else(|| v.begin_string().to_string());
        let len = get("9").unwrap_or_else(|| b.len().to_string());
        let mut m = match get("swap").as_deref() {
            // BodyLength first, or MsgType before BodyLength: a garbled frame.
            Some("9") => format!("9={len}\x018={begin}\x01{b}"),
            Some("35") => {
                let rest = b.split_once('\x01').map_or("", |(_, r)| r);
                format!("8={begin}\x0135={msg_type}\x019={len}\x01{rest}")
            }
            // MsgType after MsgSeqNum (its fourth field): well framed, but garbled.
            Some("34") => {
                let rest = b.split_once('\x01').map_or("", |(_, r)| r);
                let seq_field = format!("34={}\x01", seq.unwrap_or(0));
                let rest = rest.replacen(&seq_field, &format!("{seq_field}35={msg_type}\x01"), 1);
                format!("8={begin}\x019={len}\x01{rest}")
            }
            Some(x) => return Err(format!("!swap={x}: use 9, 35 or 34")),
            None => format!("8={begin}\x019={len}\x01{b}"),
        };
        let sum =
            get("10").unwrap_or_else(|| format!("{:03}", fix::decode::checksum(m.as_bytes())));
        write!(m, "10={sum}\x01").unwrap();
        // The client's next number follows the highest it sent; a reset starts again at 2; a
        // SequenceReset-Reset sets it. A garbled message (any `!` override) takes no number.
        let next = self.next_seqs.get_mut(&sender).unwrap();
        if overrides.is_empty() {
            if let Some(s) = seq {
                *next = if reset { s + 1 } else { (*next).max(s + 1) };
            }
            let gap_fill = body.iter().any(|(t, val)| *t == 123 && val == "Y");
            if msg_type == "4" && !gap_fill {
                if let Some((_, n)) = body.iter().find(|(t, _)| *t == 36) {
                    *next = n.parse().unwrap_or(*next);
                }
            }
        }
        writeln!(self.log, "  {conn} > {}", show(m.as_bytes())).unwrap();
        let (c, _) = self.conns.get_mut(conn).unwrap();
        c.stream
            .write_all(m.as_bytes())
            .map_err(|e| format!("write: {e}"))
    }

    fn expect(
        &mut self,
        conn: &str,
        msg_type: &str,
        want: &[Field],
        within: Duration,
        skip_heartbeats: bool,
    ) -> Result<(), String> {
        let (c, _) = self.conns.get_mut(conn).ok_or("no such connection")?;
        let end = Instant::now() + within;
        let mut d = Decoder::default();
        let raw = loop {
            let raw = match c.next(end.saturating_duration_since(Instant::now())) {
                Ok(Some(raw)) => raw,
                Ok(None) => return Err(format!("nothing arrived within {within:?}")),
                Err(e) => return Err(format!("the connection ended: {e}")),
            };
            writeln!(self.log, "  {conn} < {}", show(&raw)).unwrap();
            let m = d
                .decode(&raw)
                .map_err(|e| format!("cannot decode: {e:?}"))?;
            if !(skip_heartbeats && m.msg_type() == b"0" && m.get(112).is_none()) {
                break raw;
            }
        };
        let m = d
            .decode(&raw)
            .map_err(|e| format!("cannot decode: {e:?}"))?;
        if m.msg_type() != msg_type.as_bytes() {
            return Err(format!(
                "expected MsgType {msg_type}, got {}",
                String::from_utf8_lossy(m.msg_type())
            ));
        }
        for f in want {
            let got = m
                .get(f.tag())
                .map(|b| String::from_utf8_lossy(b).into_owned());
            // `tag=$name` keeps the value for later lines.
            if let (Field::Is(_, w), Some(g)) = (f, &got) {
                if let Some(name) = w.strip_prefix('$') {
                    self.vars.insert(name.to_string(), g.clone());
                    continue;
                }
            }
            let ok = match (f, &got) {
                (Field::Is(_, w), Some(g)) => w == g,
                (Field::Any(_), Some(_)) => true,
                (Field::Contains(_, w), Some(g)) => g.contains(w.as_str()),
                (Field::Absent(_), None) => true,
                _ => false,
            };
            if !ok {
                return Err(format!("{f:?}: got {got:?}"));
            }
        }
        Ok(())
    }

    fn step(&mut self, op: &Op) -> Result<(), String> {
        match op {
            Op::Connect { conn, as_comp_id } => {
                let s = TcpStream::connect(self.addr).map_err(|e| e.to_string())?;
                s.set_nodelay(true).unwrap();
                let comp_id = self.comp_id(as_comp_id);
                self.conns.insert(
                    conn.clone(),
                    (
                        Conn {
                            stream: s,
                            buf: Vec::new(),
                            closed: false,
                        },
                        comp_id,
                    ),
                );
                Ok(())
            }
            Op::Send {
                conn,
                msg_type,
                fields,
                overrides,
            } => self.send(conn, msg_type, fields, overrides),
            Op::Expect {
                conn,
                msg_type,
                fields,
                within,
                skip_heartbeats,
            } => self.expect(conn, msg_type, fields, *within, *skip_heartbeats),
            Op::Closed { conn, within } => {
                let (c, _) = self.conns.get_mut(conn).ok_or("no such connection")?;
                match c.next(*within) {
                    Err(e) if e == "closed" => Ok(()),
                    Err(e) => Err(e),
                    Ok(None) => Err(format!("still open after {within:?}")),
                    Ok(Some(m)) => Err(format!("got {} instead of a close", show(&m))),
                }
            }
            Op::Silent { conn, secs } => {
                let (c, _) = self.conns.get_mut(conn).ok_or("no such connection")?;
                match c.next(*secs) {
                    Ok(None) => Ok(()),
                    Ok(Some(m)) => Err(format!("expected silence, got {}", show(&m))),
                    Err(e) => Err(format!("expected silence, the connection ended: {e}")),
                }
            }
            Op::Sleep(d) => {
                std::thread::sleep(*d);
                Ok(())
            }
            Op::Disconnect { conn } => {
                let (mut c, _) = self.conns.remove(conn).ok_or("no such connection")?;
                // The client's FIN; then whatever is in flight is read until the server closes
                // too. It closes once it has read the end, after the record that unbinds the
                // session is queued: a Logon on a new connection comes after it.
                let _ = c.stream.shutdown(std::net::Shutdown::Write);
                let end = Instant::now() + WAIT;
                loop {
                    match c.next(end.saturating_duration_since(Instant::now())) {
                        Err(e) if e == "closed" => return Ok(()),
                        Err(e) => return Err(e),
                        Ok(None) => {
                            return Err(format!("the server did not close within {WAIT:?}"))
                        }
                        Ok(Some(m)) => {
                            writeln!(self.log, "  {conn} < {} (after disconnect)", show(&m))
                                .unwrap()
                        }
                    }
                }
            }
        }
    }
}

fn run_case(addr: SocketAddr, index: usize, case: &Case, v: Ver) -> Result<(), String> {
    let (main, other) = comp_ids(index, v);
    let mut run = Run {
        v,
        main,
        other,
        addr,
        conns: HashMap::new(),
        next_seqs: HashMap::new(),
        case,
        log: String::new(),
        vars: HashMap::new(),
    };
    for (line, only, op) in &run.case.ops {
        if !only.is_empty() && !only.contains(&v) {
            continue;
        }
        if let Err(e) = run.step(op) {
            return Err(format!(
                "{}.fixcase, FIX {}, line {line}: {e}\n{}",
                case.name,
                v.code(),
                run.log
            ));
        }
    }
    Ok(())
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

fn load_cases() -> Vec<Case> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fixcase"))
        .collect();
    paths.sort();
    paths.iter().map(|p| parse_case(p)).collect()
}

fn config(dir: &Path, cases: &[Case]) -> Config {
    let mut c = Config::defaults();
    c.listen = "127.0.0.1:0".parse().unwrap();
    c.data_dir = dir.to_path_buf();
    c.journal_segment_bytes = 1 << 20;
    c.orders_max = 1 << 16;
    c.market_data = None;
    // Runs share the server and its address: failed logons of one case must not hold up the
    // next (the throttle has tests of its own).
    c.failed_logon_delay = Duration::from_millis(1);
    c.failed_logon_delay_max = Duration::from_millis(10);
    let template = c.sessions[0].clone();
    for (i, case) in cases.iter().enumerate() {
        for &v in &case.versions {
            let (main, other) = comp_ids(i, v);
            for id in [main, other] {
                let mut s = template.clone();
                s.sender_comp_id = id;
                s.begin_string = v.begin_string().to_string();
                s.password_hash = case.opts.password.as_deref().map(cheap_hash);
                s.allow_reset_seq_num = !case.opts.reset_refused;
                s.validate = !case.opts.validate_off;
                c.sessions.push(s);
            }
        }
    }
    c
}

#[test]
fn every_conformance_case_passes_in_every_version_it_applies_to() {
    let cases = load_cases();
    let runs: usize = cases.iter().map(|c| c.versions.len()).sum();
    assert!(cases.len() >= 50, "{} cases", cases.len());
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(config(dir.path(), &cases), Arc::new(|_: &str| {})).unwrap();
    let addr = server.addr;
    let work: Vec<(usize, Ver)> = cases
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.versions.iter().map(move |&v| (i, v)))
        .collect();
    let next = Mutex::new(0usize);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| loop {
                let k = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(&(i, v)) = work.get(k) else { break };
                if let Err(e) = run_case(addr, i, &cases[i], v) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    server.shutdown().unwrap();
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {runs} runs failed:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{} cases, {runs} runs, all passed", cases.len());
}
