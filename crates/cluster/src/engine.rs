//! `rialto engine --shard N --id NAME`: one engine of a shard. Every engine of the shard
//! applies the shard's command partition in order ([`Shard::apply`], deterministic); the
//! active one publishes each command's outcome to the events partition, the standbys keep
//! theirs until they see them published.
//!
//! Leadership is in the log: a standby that has seen no heartbeat of the active for
//! `takeover_ms` (and has applied the whole partition) appends `Takeover{epoch + 1}`; the first
//! such record wins, in every engine's replay alike. An active publishes only while its lease
//! holds: its own heartbeat came back through the log less than `takeover_ms / 2` ago, so an
//! active that was paused (or cut off) stops publishing before any standby may take over, and
//! learns from the log that it was deposed. Readers keep each (partition, command offset) once
//! (`Exchange::apply_outcome`): outcomes are a function of the log, so a late one is a copy.
//!
//! Snapshots: at every `snapshot_every_commands`-th offset every engine computes its state
//! hash (the same offsets in all of them), writes a snapshot (`<data_dir>/shard-N-ID/`) and
//! reports the hash on the status topic; a restart loads the newest and reads on after it.

use crate::kafka::{self, KafkaProducer};
use crate::{now_ns, LogRecord};
use exchange::snap::hash_bytes;
use exchange::wire::{Cause, Outcome, Sent, PART_BYTES_MAX};
use exchange::{Backing, Exchange, Input, Output, Outputs, OwnedOutput};
use rdkafka::consumer::BaseConsumer;
use rdkafka::message::Message;
use rdkafka::Offset;
use server::config::ClusterConfig;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A shard's replica: a function of its command log.
pub struct Shard {
    pub exchange: Exchange,
    pub epoch: u32,
    pub leader: Option<String>,
    /// By gateway: the last cause applied (a gateway's commands come in cause order).
    last_cause: HashMap<u16, (u64, u16)>,
    last_ts: u64,
    /// The last offset applied.
    pub applied: Option<u64>,
}

/// What applying one record did.
#[derive(Debug)]
pub enum Applied {
    /// An outcome to publish (every gateway command has one, even with no output).
    Outcome(Outcome),
    /// Nothing to publish.
    Nothing,
    /// A heartbeat of the active engine.
    Heartbeat { engine: String, ts_ns: u64 },
    /// A new active engine.
    Leader,
    /// A continuation applied.
    Continued(Option<Outcome>),
}

/// The outputs of one input, owned.
#[derive(Default)]
struct Collect(Vec<Sent>);

impl Outputs for Collect {
    /// Trades and level changes go to the gateways' market-data replicas.
    const MARKET_DATA: bool = true;

    fn output(&mut self, o: &Output<'_>) {
        match o {
            Output::TradingStatus(s) => self.0.push(Sent::TradingStatus(*s)),
            // Operator actions are not routed to engines (`Input::Admin`); a breaker's halt and
            // a call's indicative stay with the engine: its gateways have no feed for them.
            Output::InstrumentStatus { .. } | Output::Indicative { .. } => {}
            Output::Market(e) => {
                // An uncross's trades and levels follow its `Uncrossed`, which has no wire form.
                if matches!(e, types::Event::Trade { .. } | types::Event::Level { .. }) {
                    self.0.push(Sent::Market(**e))
                }
            }
            o => {
                if let Some(x) = OwnedOutput::of(o) {
                    self.0.push(Sent::Owned(x));
                }
            }
        }
    }
}

const SNAP_MAGIC: &[u8; 8] = b"RIALTOK1";

impl Shard {
    pub fn new(cfg: &server::Config) -> Shard {
        Shard {
            exchange: Exchange::with_backing(
                Arc::new(cfg.engine_exchange_config()),
                Backing::Resident,
            ),
            epoch: 0,
            leader: None,
            last_cause: HashMap::new(),
            last_ts: 0,
            applied: None,
        }
    }

    /// Applies the record at `offset` (offsets increase).
    pub fn apply(&mut self, offset: u64, r: &LogRecord) -> Applied {
        self.applied = Some(offset);
        let seq = offset + 1;
        let mut out = Collect::default();
        match r {
            LogRecord::Command {
                ts_ns,
                cause,
                command,
            } => {
                let key = (cause.record, cause.index);
                if cause.gateway != 0 {
                    if self
                        .last_cause
                        .get(&cause.gateway)
                        .is_some_and(|l| *l >= key)
                    {
                        // Sent again by a restarted gateway: applied already.
                        return Applied::Nothing;
                    }
                    self.last_cause.insert(cause.gateway, key);
                }
                self.last_ts = self.last_ts.max(*ts_ns);
                command.with(|i| self.exchange.apply(seq, self.last_ts, i, &mut out));
                Applied::Outcome(self.outcome(offset, *cause, out))
            }
            LogRecord::Heartbeat {
                engine,
                epoch,
                ts_ns,
            } => {
                if *epoch != self.epoch || self.leader.as_deref() != Some(engine.as_str()) {
                    return Applied::Nothing;
                }
                self.last_ts = self.last_ts.max(*ts_ns);
                self.exchange
                    .apply(seq, self.last_ts, &Input::Tick, &mut out);
                if out.0.is_empty() {
                    Applied::Heartbeat {
                        engine: engine.clone(),
                        ts_ns: *ts_ns,
                    }
                } else {
                    // The end (or start) of the trading day: an outcome of the engine's own.
                    Applied::Outcome(self.outcome(offset, Cause::default(), out))
                }
            }
            LogRecord::Takeover { engine, epoch } => {
                if *epoch != self.epoch + 1 {
                    return Applied::Nothing;
                }
                self.epoch = *epoch;
                self.leader = Some(engine.clone());
                Applied::Leader
            }
            LogRecord::Continue { epoch, ts_ns } => {
                if *epoch != self.epoch {
                    return Applied::Continued(None);
                }
                self.last_ts = self.last_ts.max(*ts_ns);
                self.exchange
                    .apply(seq, self.last_ts, &Input::Continue, &mut out);
                Applied::Continued(
                    (!out.0.is_empty()).then(|| self.outcome(offset, Cause::default(), out)),
                )
            }
        }
    }

    fn outcome(&self, offset: u64, cause: Cause, out: Collect) -> Outcome {
        Outcome {
            epoch: self.epoch,
            offset,
            ts_ns: self.last_ts,
            part: 0,
            last: true,
            cause,
            outputs: out.0,
        }
    }

    fn own_state(&self, out: &mut Vec<u8>) {
        let mut e = exchange::codec::Enc(out);
        e.u64(self.applied.map_or(u64::MAX, |a| a));
        e.u32(self.epoch);
        e.bytes(self.leader.as_deref().unwrap_or("").as_bytes());
        e.u64(self.last_ts);
        let mut causes: Vec<_> = self.last_cause.iter().collect();
        causes.sort_unstable();
        e.u32(causes.len() as u32);
        for (g, (r, i)) in causes {
            e.u32(u32::from(*g));
            e.u64(*r);
            e.u32(u32::from(*i));
        }
    }

    /// The state hash: the exchange's and the shard's own (epoch, leader, dedup marks).
    pub fn state_hash(&self) -> u64 {
        let mut own = Vec::new();
        self.own_state(&mut own);
        self.exchange.state_hash() ^ hash_bytes(&own).rotate_left(29)
    }

    /// The snapshot's bytes and the state hash.
    pub fn snapshot(&self) -> (Vec<u8>, u64) {
        let mut out = SNAP_MAGIC.to_vec();
        let mut own = Vec::new();
        self.own_state(&mut own);
        out.extend_from_slice(&(own.len() as u64).to_le_bytes());
        out.extend_from_slice(&own);
        let xh = self.exchange.snapshot_and_hash(&mut out);
        (out, xh ^ hash_bytes(&own).rotate_left(29))
    }

    pub fn restore(cfg: &server::Config, bytes: &[u8]) -> Result<Shard, String> {
        let bad = |w: &str| format!("engine snapshot: {w}");
        if bytes.len() < 16 || &bytes[..8] != SNAP_MAGIC {
            return Err(bad("not a snapshot of this version"));
        }
        let n = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes")) as usize;
        let own = bytes.get(16..16 + n).ok_or_else(|| bad("truncated"))?;
        let mut d = exchange::codec::Dec(own);
        let e = |x: exchange::codec::DecodeError| bad(&x.to_string());
        let applied = match d.u64().map_err(e)? {
            u64::MAX => None,
            a => Some(a),
        };
        let epoch = d.u32().map_err(e)?;
        let leader = d.str().map_err(e)?.to_string();
        let last_ts = d.u64().map_err(e)?;
        let mut last_cause = HashMap::new();
        for _ in 0..d.u32().map_err(e)? {
            let g = u16::try_from(d.u32().map_err(e)?).map_err(|_| bad("gateway"))?;
            let r = d.u64().map_err(e)?;
            let i = u16::try_from(d.u32().map_err(e)?).map_err(|_| bad("index"))?;
            last_cause.insert(g, (r, i));
        }
        d.end().map_err(e)?;
        let (exchange, rest) = Exchange::restore(
            Arc::new(cfg.engine_exchange_config()),
            &bytes[16 + n..],
            Backing::Resident,
        )?;
        if !rest.is_empty() {
            return Err(bad("trailing bytes"));
        }
        Ok(Shard {
            exchange,
            epoch,
            leader: (!leader.is_empty()).then_some(leader),
            last_cause,
            last_ts,
            applied,
        })
    }
}

/// A fresh replica's replay of a whole command log (`(offset, record)` in order): the
/// outcomes it publishes (each part, with its command's offset), and its state hash at the
/// end. The same log always
/// gives the same outcomes, byte for byte, and the same hash.
pub fn replay(cfg: &server::Config, log: &[(u64, Vec<u8>)]) -> (Vec<(u64, Vec<u8>)>, u64) {
    let mut shard = Shard::new(cfg);
    let mut out = Vec::new();
    for (offset, bytes) in log {
        let Ok(r) = LogRecord::decode(bytes) else {
            continue;
        };
        let o = match shard.apply(*offset, &r) {
            Applied::Outcome(o) | Applied::Continued(Some(o)) => o,
            _ => continue,
        };
        for part in o.encode_parts(PART_BYTES_MAX) {
            out.push((*offset, part));
        }
    }
    (out, shard.state_hash())
}

/// How an engine runs.
pub struct EngineOptions {
    pub shard: u16,
    /// Its name among the shard's engines (`a`, `b`, ...).
    pub id: String,
    /// Where its snapshots go (`<data_dir>/shard-N-ID/`).
    pub data_dir: PathBuf,
    pub log: server::Logger,
    /// Set to stop.
    pub stop: Arc<AtomicBool>,
}

fn snapshot_dir(o: &EngineOptions) -> PathBuf {
    o.data_dir.join(format!("shard-{}-{}", o.shard, o.id))
}

/// The newest snapshot in `dir` that loads, if any.
fn load_newest(cfg: &server::Config, dir: &Path) -> Result<Option<Shard>, String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    let mut snaps: Vec<(u64, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let off = name.strip_suffix(".snap")?.parse().ok()?;
            Some((off, e.path()))
        })
        .collect();
    snaps.sort_unstable();
    match snaps.last() {
        None => Ok(None),
        Some((_, p)) => {
            let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
            Shard::restore(cfg, &bytes).map(Some)
        }
    }
}

fn write_snapshot(dir: &Path, offset: u64, bytes: &[u8], hash: u64) -> Result<(), String> {
    let e = |e: std::io::Error| format!("snapshot in {}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(e)?;
    let tmp = dir.join("snap.tmp");
    std::fs::write(&tmp, bytes).map_err(e)?;
    std::fs::rename(&tmp, dir.join(format!("{offset:020}.snap"))).map_err(e)?;
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("hashes.txt"))
        .map_err(e)?;
    writeln!(f, "{offset} {hash:016x}").map_err(e)?;
    // Keep the two newest.
    let mut snaps: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(e)?
        .filter_map(|x| x.ok().map(|x| x.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "snap"))
        .collect();
    snaps.sort();
    for p in snaps.iter().rev().skip(2) {
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

/// The engine's live state around its replica.
struct Runner<'a> {
    cfg: &'a ClusterConfig,
    opts: &'a EngineOptions,
    shard: Shard,
    producer: KafkaProducer,
    commands: String,
    events: String,
    /// Outcomes not yet seen in the events partition (a standby's, or an active's without
    /// its lease), oldest first.
    pending: VecDeque<Outcome>,
    /// The last outcome seen whole in the events partition (its last part): its command
    /// offset.
    published: Option<u64>,
    /// Heartbeats this engine sent: their timestamp and when.
    sent_heartbeats: VecDeque<(u64, Instant)>,
    /// When the last heartbeat of ours that came back through the log was sent.
    lease_from: Option<Instant>,
    last_leader_heartbeat: Instant,
    last_heartbeat_sent: Instant,
    takeover_sent: Option<Instant>,
    continue_in_flight: bool,
    last_status: Instant,
    last_hash: Option<(u64, u64)>,
    /// Since the last status report: commands read, and the sum and most of their delay
    /// from the gateway's send (the record's CreateTime) to this engine's read, ms.
    delays: (u64, u64, u64),
    buf: Vec<u8>,
}

impl Runner<'_> {
    fn active(&self) -> bool {
        self.shard.leader.as_deref() == Some(self.opts.id.as_str())
    }

    fn lease_ok(&self) -> bool {
        self.lease_from
            .is_some_and(|t| t.elapsed() < Duration::from_millis(self.cfg.takeover_ms / 2))
    }

    fn append(&mut self, r: &LogRecord) -> Result<(), String> {
        self.buf.clear();
        r.encode(&mut self.buf);
        kafka::send(
            &self.producer,
            &self.commands,
            i32::from(self.opts.shard),
            &self.buf,
        )
    }

    fn on_record(&mut self, offset: u64, r: &LogRecord) -> Result<(), String> {
        let before = self.shard.applied;
        match self.shard.apply(offset, r) {
            Applied::Outcome(o) => self.pending.push_back(o),
            Applied::Continued(o) => {
                self.continue_in_flight = false;
                self.pending.extend(o);
            }
            Applied::Nothing => {}
            Applied::Heartbeat { engine, ts_ns } => {
                self.last_leader_heartbeat = Instant::now();
                if engine == self.opts.id {
                    while let Some((ts, at)) = self.sent_heartbeats.front().copied() {
                        if ts > ts_ns {
                            break;
                        }
                        self.sent_heartbeats.pop_front();
                        if ts == ts_ns {
                            self.lease_from = Some(at);
                        }
                    }
                }
            }
            Applied::Leader => {
                self.last_leader_heartbeat = Instant::now();
                self.takeover_sent = None;
                self.lease_from = None;
                self.sent_heartbeats.clear();
                self.continue_in_flight = false;
                (self.opts.log)(&format!(
                    "shard {}: engine {} is active (epoch {}) from offset {offset}",
                    self.opts.shard,
                    self.shard.leader.as_deref().unwrap_or("?"),
                    self.shard.epoch
                ));
                if self.active() {
                    self.heartbeat()?;
                }
            }
        }
        let every = self.cfg.snapshot_every_commands;
        if every > 0 && before.is_none_or(|b| b / every != offset / every) {
            let (bytes, hash) = self.shard.snapshot();
            write_snapshot(&snapshot_dir(self.opts), offset, &bytes, hash)?;
            self.last_hash = Some((offset, hash));
        }
        Ok(())
    }

    fn heartbeat(&mut self) -> Result<(), String> {
        let ts = now_ns();
        self.sent_heartbeats.push_back((ts, Instant::now()));
        if self.sent_heartbeats.len() > 1024 {
            self.sent_heartbeats.pop_front();
        }
        self.last_heartbeat_sent = Instant::now();
        self.append(&LogRecord::Heartbeat {
            engine: self.opts.id.clone(),
            epoch: self.shard.epoch,
            ts_ns: ts,
        })
    }

    /// Publishes what the active owes, while its lease holds.
    fn publish(&mut self) -> Result<(), String> {
        if !self.active() || !self.lease_ok() {
            return Ok(());
        }
        while let Some(o) = self.pending.pop_front() {
            if self.published.is_some_and(|p| o.offset <= p) {
                continue;
            }
            // Parts a reader has already are kept once (by offset and part).
            for part in o.encode_parts(PART_BYTES_MAX) {
                kafka::send(
                    &self.producer,
                    &self.events,
                    i32::from(self.opts.shard),
                    &part,
                )?;
            }
            self.published = Some(o.offset);
        }
        Ok(())
    }

    fn timers(&mut self, cmds: &BaseConsumer) -> Result<(), String> {
        let hb = Duration::from_millis(self.cfg.heartbeat_ms);
        let takeover = Duration::from_millis(self.cfg.takeover_ms);
        if self.active() {
            if self.last_heartbeat_sent.elapsed() >= hb {
                self.heartbeat()?;
            }
            if self.shard.exchange.has_pending_work() && !self.continue_in_flight {
                self.continue_in_flight = true;
                self.append(&LogRecord::Continue {
                    epoch: self.shard.epoch,
                    ts_ns: now_ns(),
                })?;
            }
        } else if self.last_leader_heartbeat.elapsed() >= takeover
            && self.takeover_sent.is_none_or(|t| t.elapsed() >= takeover)
        {
            // Only with the whole partition applied: a standby behind must not mistake the
            // heartbeats it has not read yet for silence.
            // Unknown (a broker gone): not caught up, asked again at the next turn.
            let high = kafka::watermarks(
                cmds,
                &self.commands,
                i32::from(self.opts.shard),
                Duration::from_secs(1),
            )
            .map_or(i64::MAX, |w| w.1);
            let caught_up = high == 0 || self.shard.applied.is_some_and(|a| a + 1 >= high as u64);
            if caught_up {
                (self.opts.log)(&format!(
                    "shard {}: no heartbeat of the active for {} ms: engine {} takes over (epoch {})",
                    self.opts.shard,
                    self.last_leader_heartbeat.elapsed().as_millis(),
                    self.opts.id,
                    self.shard.epoch + 1
                ));
                self.takeover_sent = Some(Instant::now());
                self.append(&LogRecord::Takeover {
                    engine: self.opts.id.clone(),
                    epoch: self.shard.epoch + 1,
                })?;
            }
        }
        if self.last_status.elapsed() >= Duration::from_millis(500) {
            self.last_status = Instant::now();
            let role = match (self.active(), self.lease_ok()) {
                (true, true) => "active",
                (true, false) => "active-no-lease",
                (false, _) => "standby",
            };
            let (hash_at, hash) = self.last_hash.unwrap_or((0, 0));
            let (n, sum, max) = std::mem::take(&mut self.delays);
            let line = format!(
                "shard={} engine={} role={role} epoch={} applied={} published={} pending={} hash_at={hash_at} hash={hash:016x} read_delay_mean_ms={} read_delay_max_ms={max} ts_ns={}",
                self.opts.shard,
                self.opts.id,
                self.shard.epoch,
                self.shard.applied.map_or(-1, |a| a as i64),
                self.published.map_or(-1, |a| a as i64),
                self.pending.len(),
                sum.checked_div(n).unwrap_or(0),
                now_ns()
            );
            let status = self.cfg.status_topic();
            kafka::send(&self.producer, &status, 0, line.as_bytes())?;
        }
        Ok(())
    }
}

/// Runs the engine until `opts.stop` is set.
pub fn run(cfg: &server::Config, opts: EngineOptions) -> Result<(), String> {
    let c = cfg
        .cluster
        .as_ref()
        .ok_or("an engine needs [cluster] in its configuration")?;
    if usize::from(opts.shard) >= c.shards.len() {
        return Err(format!(
            "shard {} is not configured: [cluster] has {} shards",
            opts.shard,
            c.shards.len()
        ));
    }
    if opts.id.is_empty() || opts.id.len() > 32 {
        return Err("an engine's id is 1 to 32 characters".into());
    }
    kafka::ensure_topics(c)?;
    let shard = match load_newest(cfg, &snapshot_dir(&opts))? {
        Some(s) => {
            (opts.log)(&format!(
                "shard {}: snapshot at offset {} loaded",
                opts.shard,
                s.applied.map_or(-1, |a| a as i64)
            ));
            s
        }
        None => Shard::new(cfg),
    };
    let from = shard
        .applied
        .map_or(Offset::Beginning, |a| Offset::Offset(a as i64 + 1));
    let name = format!("engine-{}-{}", opts.shard, opts.id);
    let producer = kafka::producer(c, &name)?;
    let cmds = kafka::reader(c, &format!("{name}-commands"))?;
    let part = i32::from(opts.shard);
    kafka::assign(&cmds, &c.commands_topic(), &[(part, from)])?;
    // A broker may be down while the partition's leader moves: ask again, for a while, with a
    // fresh client each time (one whose first broker died can wait on it for minutes).
    let deadline = Instant::now() + Duration::from_secs(120);
    let (evs, low, high) = loop {
        let evs = kafka::reader(c, &format!("{name}-events"))?;
        match kafka::watermarks(&evs, &c.events_topic(), part, Duration::from_secs(5)) {
            Ok((low, high)) => break (evs, low, high),
            Err(e) if Instant::now() < deadline => {
                (opts.log)(&format!("shard {}: {e}; asking again", opts.shard));
            }
            Err(e) => return Err(e),
        }
    };
    kafka::assign(
        &evs,
        &c.events_topic(),
        &[(part, Offset::Offset((high - 1).max(low)))],
    )?;
    let now = Instant::now();
    let mut r = Runner {
        cfg: c,
        opts: &opts,
        shard,
        producer,
        commands: c.commands_topic(),
        events: c.events_topic(),
        pending: VecDeque::new(),
        published: None,
        sent_heartbeats: VecDeque::new(),
        lease_from: None,
        last_leader_heartbeat: now,
        last_heartbeat_sent: now,
        takeover_sent: None,
        continue_in_flight: false,
        last_status: now - Duration::from_secs(1),
        last_hash: None,
        delays: (0, 0, 0),
        buf: Vec::with_capacity(4096),
    };
    (opts.log)(&format!(
        "shard {}: engine {} reading the command log from {from:?}",
        opts.shard, opts.id
    ));
    while !opts.stop.load(Ordering::Relaxed) {
        let mut n = 0;
        // A command wakes the poll at once; the wait only bounds how late the timers run.
        let mut wait = Duration::from_millis(10);
        while n < 4096 {
            let Some(m) = cmds.poll(wait) else {
                break;
            };
            wait = Duration::ZERO;
            // Errors here are the client's news (a broker gone, a leader moved): it retries
            // on its own.
            let m = match m {
                Ok(m) => m,
                Err(e) => {
                    (opts.log)(&format!("shard {}: command log: {e}", opts.shard));
                    break;
                }
            };
            let offset = m.offset() as u64;
            if let rdkafka::message::Timestamp::CreateTime(t) = m.timestamp() {
                let d = (now_ns() / 1_000_000).saturating_sub(t.max(0) as u64);
                r.delays = (r.delays.0 + 1, r.delays.1 + d, r.delays.2.max(d));
            }
            match LogRecord::decode(m.payload().unwrap_or(&[])) {
                Ok(rec) => r.on_record(offset, &rec)?,
                Err(e) => (opts.log)(&format!(
                    "shard {}: command log offset {offset}: {e}: skipped",
                    opts.shard
                )),
            }
            n += 1;
        }
        while let Some(m) = evs.poll(Duration::ZERO) {
            let Ok(m) = m else {
                break;
            };
            // An outcome is published once its last part is.
            if let Some((_, off, _, true)) = m.payload().and_then(Outcome::position) {
                r.published = Some(r.published.map_or(off, |p| p.max(off)));
            }
        }
        if let Some(p) = r.published {
            while r.pending.front().is_some_and(|o| o.offset <= p) {
                r.pending.pop_front();
            }
        }
        r.publish()?;
        r.timers(&cmds)?;
    }
    kafka::flush(&r.producer, Duration::from_secs(10))?;
    Ok(())
}

#[cfg(test)]
mod tests;
