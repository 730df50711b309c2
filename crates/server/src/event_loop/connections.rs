//! The FIX connections: accept, read, frame and admit, write, close.
//!
//! Role: accepts connections within `max_connections` and the room kept for logons; reads each
//! readable one (at most `READ_CHUNK` a turn), frames its messages and turns them into
//! `FixInput`s (`FixAdapter::to_input`), checks each against its session's throttle and its
//! session's and firm's waiting bounds, and queues it (`queues`); writes each connection's
//! output as far as its socket takes it; logs out a slow consumer; closes connections that did
//! not log on in time, that were logged out and did not read it, or whose peer left.
//!
//! Never: reads a connection that is closing, logged out, waiting for its Logon's verdict, or
//! whose queue holds twice `session_queue_max` records; journals anything itself (records go
//! to the queues); blocks on a socket.
//!
//! Invariants: a connection whose close is not the edge's own yields exactly one
//! `Disconnected` record, after its last message; garbled input is skipped, never queued.

use super::{EventLoop, KEEP_BUF, READ_CHUNK};
use crate::counters::Logger;
use crate::record::{Evict, Record};
use crate::throttle::{Class, Verdict};
use crate::transport::{write_until_blocked, Transport};
use fix::{frame, resync, Inbound, Limits};
use fix_gateway::{AppMsg, BusyWhy, ConnId, ConnIds};
use journal::Log;
use mio::{Events, Interest, Token};
use std::io::{self, Read, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long a connection the loop logged out (slow reader, logout throttle) has to read its
/// Logout before it is closed anyway.
const EVICT_GRACE: Duration = Duration::from_secs(2);

/// Largest unparsed input kept per connection.
const READ_BUF_MAX: usize = 1 << 20;

/// How long a clean stop waits for the Logouts to leave before closing the sockets anyway.
const SHUTDOWN_FLUSH: Duration = Duration::from_secs(5);

pub(crate) struct Conn {
    /// Plain TCP, or TLS with `[tls]` (`transport`): the same calls as a `TcpStream`.
    pub(crate) stream: Transport,
    /// Unparsed input (a partial message); empty in the common case, where a read ends on a
    /// message boundary and the messages are parsed straight from the loop's scratch buffer.
    pub(crate) rbuf: Vec<u8>,
    /// Output the socket has not taken yet.
    pub(crate) wbuf: Vec<u8>,
    pub(crate) ids: Option<ConnIds>,
    /// The edge asked to close it once `wbuf` is flushed.
    pub(crate) closing: bool,
    /// Readable data may be left in the socket (an event came, or a read was cut at
    /// READ_CHUNK).
    pub(crate) more: bool,
    /// Registered with WRITABLE interest (output is pending).
    pub(crate) want_write: bool,
    /// The session whose messages it carries, if that session's messages are logged
    /// (`message_log`); known from its first Logon.
    pub(crate) msglog: Option<u32>,
    /// Garbled input logged this second (rate limit).
    pub(crate) garbled: GarbledLog,
    /// When it was accepted (the logon timeout runs from then).
    pub(crate) accepted: Instant,
    /// The configured session its Logon named, and that session's firm.
    pub(crate) session: Option<(u32, u32)>,
    /// A record of it was queued: its close is journaled (`Disconnected`).
    pub(crate) journaled: bool,
    /// The loop logged it out (`Record::Evict`) at this time: nothing more is read from it,
    /// and it is closed `EVICT_GRACE` after.
    pub(crate) evicted: Option<Instant>,
    // -- auth (`crate::auth`) --
    /// The address it came from (the failed-logon throttle counts by it).
    pub(crate) peer: std::net::IpAddr,
    /// Its Logon is with the `auth` thread: nothing more is read until the verdict.
    pub(crate) auth_wait: bool,
    /// The verdict came: parse what waited in `rbuf` even if the socket has nothing new.
    pub(crate) auth_resume: bool,
    /// A ResendRequest being served in pieces: the next sequence number and the last.
    pub(crate) resend: Option<(u64, u64)>,
    /// Output that waits behind that resend (never interleaved with it).
    pub(crate) held: Vec<u8>,
}

/// Raises the process's open-file limit to what `max_connections` needs (plus journal,
/// snapshot and market-data descriptors), within the hard limit; logs if it cannot.
pub(crate) fn raise_fd_limit(max_connections: usize, log: &Logger) {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let want = max_connections as u64 + 256;
    let lim = getrlimit(Resource::Nofile);
    let cur = lim.current.unwrap_or(u64::MAX);
    if cur >= want {
        return;
    }
    let max = lim.maximum.unwrap_or(u64::MAX);
    let new = want.min(max);
    let set = rustix::process::Rlimit {
        current: Some(new),
        maximum: lim.maximum,
    };
    if setrlimit(Resource::Nofile, set).is_err() || new < want {
        log(&format!(
            "open-file limit {new} is below max_connections + 256 = {want}: connections past it are refused by the kernel"
        ));
    }
}

/// At most `GARBLED_PER_SECOND` garbled messages of a connection are logged a second; the
/// rest are counted and the count logged with the next one.
#[derive(Default)]
pub(crate) struct GarbledLog {
    second: u64,
    logged: u32,
    left_out: u64,
}

const GARBLED_PER_SECOND: u32 = 5;

impl GarbledLog {
    fn note(&mut self, conn: ConnId, ids: Option<&ConnIds>, reason: &str, len: usize) {
        let second = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if second != self.second {
            self.second = second;
            self.logged = 0;
        }
        if self.logged == GARBLED_PER_SECOND {
            self.left_out += 1;
            return;
        }
        self.logged += 1;
        let left_out = std::mem::take(&mut self.left_out);
        let client = ids.map(|i| i.sender.to_str_lossy().into_owned());
        tracing::warn!(
            conn,
            client = client.as_deref().unwrap_or("-"),
            reason,
            bytes = len,
            left_out,
            "garbled input dropped"
        );
    }
}

impl<L: Log> EventLoop<L> {
    pub(super) fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    if let Some(why) = self.refusal() {
                        // Closed at once: the client sees the connection end, not a hang.
                        let _ = stream.shutdown(std::net::Shutdown::Both);
                        drop(stream);
                        self.counters
                            .refused_connections
                            .fetch_add(1, Ordering::Relaxed);
                        self.refused_log += 1;
                        if self.refused_log == 1 {
                            tracing::warn!(reason = why, "connection refused");
                        }
                        continue;
                    }
                    let id = self.next_conn;
                    self.next_conn += 1;
                    let _ = stream.set_nodelay(true);
                    let Ok(mut stream) = Transport::new(stream, self.tls.as_ref()) else {
                        continue;
                    };
                    if self
                        .poll
                        .registry()
                        .register(&mut stream, Token(id as usize), Interest::READABLE)
                        .is_err()
                    {
                        continue;
                    }
                    self.counters.connections.fetch_add(1, Ordering::Relaxed);
                    self.pending_logons += 1;
                    self.conns.insert(
                        id,
                        Conn {
                            stream,
                            rbuf: Vec::new(),
                            wbuf: Vec::with_capacity(4096),
                            ids: None,
                            closing: false,
                            more: true,
                            want_write: false,
                            msglog: None,
                            garbled: GarbledLog::default(),
                            accepted: Instant::now(),
                            session: None,
                            journaled: false,
                            evicted: None,
                            resend: None,
                            held: Vec::new(),
                            peer: peer.ip(),
                            auth_wait: false,
                            auth_resume: false,
                        },
                    );
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Out of descriptors and the like: try again on the next event.
                Err(_) => return,
            }
        }
    }

    /// Why a new connection is refused now, if it is: too many open, or too many that have
    /// not logged on (one connection per configured order-entry session is kept free for
    /// sessions to log on, up to half of `max_connections`).
    fn refusal(&self) -> Option<&'static str> {
        let max = self.cfg.max_connections;
        if self.conns.len() >= max {
            return Some("max_connections reached");
        }
        let headroom = self.order_sessions().min(max / 2);
        if self.pending_logons >= max - headroom {
            return Some("too many connections that have not logged on");
        }
        None
    }

    fn order_sessions(&self) -> usize {
        self.cfg
            .sessions
            .iter()
            .filter(|s| s.market_data != crate::config::MarketDataAccess::Only)
            .count()
    }

    /// Reads every connection with data waiting (in connection order), until its socket would
    /// block or `READ_CHUNK` bytes, and queues the complete messages.
    pub(super) fn read_ready(&mut self) {
        self.ready.clear();
        self.ready
            .extend(self.conns.iter().filter(|(_, c)| c.more).map(|(id, _)| *id));
        if self.ready.is_empty() {
            return;
        }
        self.ready.sort_unstable();
        for i in 0..self.ready.len() {
            let id = self.ready[i];
            self.read(id);
        }
    }

    fn read(&mut self, id: ConnId) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        c.more = false;
        if c.closing || c.evicted.is_some() || c.auth_wait {
            return;
        }
        let resume = std::mem::take(&mut c.auth_resume) && !c.rbuf.is_empty();
        if resume && self.parse(id, 0) {
            // What waited behind the Logon is not FIX.
            self.drop_conn(id, true);
            return;
        }
        // A queue this long is not read until it drains: what is unread waits in the kernel.
        let hard = 2 * self.cfg.session_queue_max + 64;
        if self.inq.get(&id).is_some_and(|q| q.recs.len() >= hard) {
            if let Some(c) = self.conns.get_mut(&id) {
                c.more = true;
            }
            return;
        }
        let mut closed = false;
        let mut total = 0;
        // Until the socket would block, so that a FIN that came with the data is seen now;
        // at most READ_CHUNK bytes an iteration, so that others get their turn.
        while total < READ_CHUNK {
            let Some(c) = self.conns.get_mut(&id) else {
                return;
            };
            if c.evicted.is_some() || c.auth_wait {
                break;
            }
            let room = READ_CHUNK - total;
            let n = match c.stream.read(&mut self.scratch[..room]) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    closed = true;
                    break;
                }
            };
            total += n;
            if total == READ_CHUNK {
                // More may be waiting: come back next iteration.
                c.more = true;
            }
            if self.parse(id, n) {
                closed = true;
                break;
            }
        }
        if closed {
            self.drop_conn(id, true);
        }
    }

    /// Frames and queues the messages in `scratch[..n]` just read from connection `id`
    /// (after any partial message it had). True: the input is not FIX and the connection must
    /// be closed.
    fn parse(&mut self, id: ConnId, n: usize) -> bool {
        let Some(c) = self.conns.get_mut(&id) else {
            return false;
        };
        // Parse from the scratch buffer unless a partial message is pending.
        let from_rbuf = !c.rbuf.is_empty();
        if from_rbuf {
            c.rbuf.extend_from_slice(&self.scratch[..n]);
        }
        let data: &[u8] = if from_rbuf {
            &c.rbuf
        } else {
            &self.scratch[..n]
        };
        let mut pos = 0;
        while pos < data.len() {
            let rest = &data[pos..];
            let len = match frame(rest, Limits::default().msg_len_max) {
                Ok(None) => break,
                // Garbled (not FIX, or a wrong BodyLength or CheckSum): skipped, as the
                // session layer requires.
                Err(e) => {
                    let skip = resync(rest).max(1);
                    c.garbled.note(id, c.ids.as_ref(), e.as_str(), skip);
                    pos += skip;
                    continue;
                }
                Ok(Some(len)) => len,
            };
            let msg = &rest[..len];
            pos += len;
            if c.evicted.is_some() {
                // Logged out: what follows is not read.
                continue;
            }
            let first = c.ids.is_none();
            let input = self
                .adapter
                .to_input(id, &mut c.ids, &mut self.decoder, msg);
            if let (true, Some(ids)) = (first, &c.ids) {
                // A Logon: with client certificates, its SenderCompID must be one the
                // connection's certificate names; if not, it is not journaled and the
                // connection closes without a Logout, as for a failed authentication.
                if let Err(why) =
                    c.stream
                        .authorize(&self.cfg, ids.sender.as_bytes(), ids.target.as_bytes())
                {
                    tracing::warn!(conn = id, reason = %why, "TLS: Logon refused, connection closed");
                    return true;
                }
            }
            if first {
                if let Some(ids) = &c.ids {
                    let ix = self
                        .adapter
                        .config()
                        .find_session(ids.sender.as_bytes(), ids.target.as_bytes());
                    if let Some(ix) = ix {
                        let firm = self.adapter.config().sessions[ix].firm;
                        c.session = Some((ix as u32, u32::from(firm)));
                    }
                    self.pending_logons = self.pending_logons.saturating_sub(1);
                    if let Some(log) = self.msglog.as_ref() {
                        c.msglog = ix.filter(|&ix| log.logs(ix)).map(|ix| ix as u32);
                    }
                }
            }
            if let (Some(log), Some(ix)) = (self.msglog.as_mut(), c.msglog) {
                log.push(ix, true, self.last_ts, &crate::auth::redacted(msg));
            }
            let Some(input) = input else {
                c.garbled
                    .note(id, c.ids.as_ref(), "fields do not decode", msg.len());
                continue;
            };
            c.journaled = true;
            // A Logon to check goes to the `auth` thread; the rest waits in `rbuf`.
            let Some(mut input) = self.auth.route(id, c.peer, input) else {
                c.auth_wait = true;
                break;
            };
            // The session's throttle (once it has named one: a Logon is never throttled).
            if let (Some((ix, firm)), false) = (c.session, first) {
                let why = match self.guards[ix as usize].check(class_of(&input.msg), self.now) {
                    Verdict::Pass => None,
                    Verdict::Orders(n) => Some(BusyWhy::Orders(n)),
                    Verdict::Cancels(n) => Some(BusyWhy::Cancels(n)),
                    Verdict::Messages(n) => Some(BusyWhy::Messages(n)),
                    Verdict::Logout(per_sec) => {
                        c.evicted = Some(Instant::now());
                        tracing::warn!(
                            conn = id,
                            client = %ids_name(c.ids.as_ref()),
                            per_sec,
                            "over the logout throttle: logged out"
                        );
                        let why = Evict::Throttle { per_sec };
                        let r = Record::Evict { conn: id, why };
                        Self::enqueue(&mut self.inq, &mut self.rr, id, r);
                        continue;
                    }
                };
                if let Some(why) = why {
                    if input.is_application() {
                        self.throttled_unlogged += 1;
                        input = self.adapter.refuse(input, why);
                    }
                } else if input.is_application() {
                    // Per-session and per-firm waiting bounds: beyond them, shed.
                    let q = self.inq.entry(id).or_default();
                    if q.apps >= self.cfg.session_queue_max
                        || self.firm_waiting[firm as usize] >= self.cfg.firm_queue_max
                    {
                        input = self.adapter.shed(input);
                        self.shed_unlogged += 1;
                    } else {
                        q.apps += 1;
                        q.firm = Some(firm);
                        self.firm_waiting[firm as usize] += 1;
                    }
                }
            }
            Self::enqueue(&mut self.inq, &mut self.rr, id, Record::Fix(input));
        }
        if from_rbuf {
            c.rbuf.drain(..pos);
        } else if pos < n {
            c.rbuf.extend_from_slice(&self.scratch[pos..n]);
        }
        if c.rbuf.is_empty() && c.rbuf.capacity() > KEEP_BUF {
            c.rbuf = Vec::new();
        }
        if c.rbuf.len() >= READ_BUF_MAX {
            // A "message" longer than any valid one: not FIX.
            tracing::warn!(
                conn = id,
                bytes = c.rbuf.len(),
                "input is not FIX: connection closed"
            );
            return true;
        }
        false
    }

    /// The `auth` thread's verdicts: each Logon joins its connection's queue, and the
    /// connection is read again.
    pub(super) fn take_verdicts(&mut self) {
        while let Some((id, input)) = self.auth.take_verdict() {
            let Some(c) = self.conns.get_mut(&id) else {
                continue;
            };
            c.auth_wait = false;
            c.auth_resume = true;
            c.more = true;
            Self::enqueue(&mut self.inq, &mut self.rr, id, Record::Fix(input));
        }
    }

    /// Writes as much of a connection's pending output as the socket takes (one write in the
    /// common case); keeps the rest with WRITABLE interest.
    pub(super) fn flush(&mut self, id: ConnId) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        let (written, mut failed) = write_until_blocked(&mut c.stream, &c.wbuf);
        // TLS: ciphertext of earlier writes (or the handshake) the socket did not take.
        if !failed {
            if let Err(e) = c.stream.flush() {
                failed = e.kind() != io::ErrorKind::WouldBlock;
            }
        }
        if written == c.wbuf.len() {
            c.wbuf.clear();
            if c.wbuf.capacity() > KEEP_BUF {
                // A burst is over: its memory goes back.
                c.wbuf = Vec::with_capacity(4096);
            }
        } else {
            c.wbuf.drain(..written);
        }
        let limit = self.cfg.outbound_queue_bytes;
        if c.wbuf.len() > limit && c.evicted.is_none() && !c.closing {
            // Logged out with a reason; closed if it does not read that in time.
            let unread = c.wbuf.len() as u64;
            tracing::warn!(conn = id, unread, "slow consumer: logged out");
            c.evicted = Some(Instant::now());
            Self::enqueue(
                &mut self.inq,
                &mut self.rr,
                id,
                Record::Evict {
                    conn: id,
                    why: Evict::SlowConsumer { unread },
                },
            );
        }
        // An evicted connection gets no output once its Evict is applied (the session is
        // unbound), and what comes before is bounded by its queue: it keeps its buffer until
        // it reads its Logout or `EVICT_GRACE` ends.
        if failed {
            self.drop_conn(id, true);
            return;
        }
        if c.closing && c.wbuf.is_empty() && !c.stream.wants_write() {
            // The edge already unbound it: no Disconnected record.
            self.drop_conn(id, false);
            return;
        }
        let want = !c.wbuf.is_empty();
        if want != c.want_write {
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            if self
                .poll
                .registry()
                .reregister(&mut c.stream, Token(id as usize), interest)
                .is_ok()
            {
                c.want_write = want;
            } else {
                self.drop_conn(id, true);
            }
        }
    }

    /// Once a second: closes the connections that did not log on in time, and the ones
    /// logged out by the loop that did not read their Logout in time; logs refused
    /// connections.
    pub(super) fn close_overdue(&mut self, now: Instant) {
        let timeout = Duration::from_secs(self.cfg.logon_timeout_secs);
        self.ready.clear();
        for (id, c) in &self.conns {
            let late_logon = c.ids.is_none() && now.duration_since(c.accepted) >= timeout;
            let late_evict = c
                .evicted
                .is_some_and(|t| now.duration_since(t) >= EVICT_GRACE);
            if late_logon || late_evict {
                self.ready.push(*id);
            }
        }
        let n = self.ready.len();
        for i in 0..n {
            let id = self.ready[i];
            let journaled = self.conns.get(&id).is_some_and(|c| c.journaled);
            self.drop_conn(id, journaled);
        }
        if n > 0 {
            tracing::info!(
                closed = n,
                "connections closed: no Logon in time, or output unread"
            );
        }
        if self.refused_log > 1 {
            tracing::warn!(
                refused = self.refused_log - 1,
                "more connections refused in the last second"
            );
        }
        self.refused_log = 0;
    }

    /// Closes a connection. With `notify` (the peer or the server's I/O ended it, not the
    /// edge), a `Disconnected` record follows the connection's last message.
    fn drop_conn(&mut self, id: ConnId, notify: bool) {
        if let Some(mut c) = self.conns.remove(&id) {
            let _ = self.poll.registry().deregister(&mut c.stream);
            let _ = c.stream.shutdown(std::net::Shutdown::Both);
            if c.ids.is_none() {
                self.pending_logons = self.pending_logons.saturating_sub(1);
            }
            let waiting = self.inq.get(&id).is_some_and(|q| !q.recs.is_empty());
            if notify && !c.closing {
                Self::enqueue(
                    &mut self.inq,
                    &mut self.rr,
                    id,
                    Record::Disconnected { conn: id },
                );
                if let Some(q) = self.inq.get_mut(&id) {
                    q.closed = true;
                }
            } else if waiting {
                if let Some(q) = self.inq.get_mut(&id) {
                    q.closed = true;
                }
            } else {
                self.inq.remove(&id);
            }
        }
    }

    /// After the Shutdown input: lets the Logouts leave (up to `SHUTDOWN_FLUSH`), then closes
    /// every connection.
    pub(super) fn close_all(&mut self) {
        let deadline = Instant::now() + SHUTDOWN_FLUSH;
        let mut events = Events::with_capacity(256);
        while self
            .conns
            .values()
            .any(|c| !c.wbuf.is_empty() || c.stream.wants_write())
            && Instant::now() < deadline
        {
            let _ = self.poll.poll(&mut events, Some(Duration::from_millis(10)));
            let ids: Vec<ConnId> = self.conns.keys().copied().collect();
            for id in ids {
                self.flush(id);
            }
        }
        let ids: Vec<ConnId> = self.conns.keys().copied().collect();
        for id in ids {
            self.drop_conn(id, false);
        }
        self.batch.clear();
    }
}

/// A connection's SenderCompID for a log line ("-" before its Logon).
fn ids_name(ids: Option<&ConnIds>) -> String {
    ids.map_or_else(|| "-".to_string(), |i| i.sender.to_str_lossy().into_owned())
}

/// What limit a message counts against besides its session's message limit.
#[inline]
fn class_of(m: &Inbound<AppMsg>) -> Class {
    match m {
        Inbound::App(AppMsg::New(_) | AppMsg::Replace(_)) => Class::Order,
        Inbound::App(AppMsg::Cancel { .. } | AppMsg::MassCancel { .. }) => Class::Cancel,
        Inbound::App(_) => Class::OtherApp,
        _ => Class::Session,
    }
}
