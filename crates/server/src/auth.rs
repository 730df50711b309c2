//! Authentication of Logons: Username (553) and Password (554) checked against the salted
//! hashes of the config (argon2, PHC strings `$argon2id$...` made by `rialto passwd`), and the
//! throttle of failed logons.
//!
//! Role: the event loop hands every Logon that needs a check ([`Auth::route`]) to the `auth`
//! thread and holds that connection's further input; the thread verifies (tens of ms, never on
//! the loop), writes the verdict into the Logon (`fix::Credentials`), wipes the password and
//! hands it back ([`Auth::take_verdict`], after waking the loop), which journals it like any
//! other input. Replay reads the journaled verdict and hashes nothing. The market-data thread
//! checks its own Logons inline ([`AuthCheck::check_now`]) against the same hashes and the
//! same throttle.
//!
//! Throttle (the policy): each failed logon (unknown CompIDs, wrong Username or Password)
//! counts against its source address, and against the CompID when it names a configured
//! session. The next check of that address or CompID waits `failed_logon_delay_ms` (100 ms)
//! after the first failure, doubling with each further one up to `failed_logon_delay_max_ms`
//! (3.2 s); counts are forgotten after [`FORGET_AFTER`] without a failure, and a successful
//! logon clears its address's and its CompID's. At the order-entry port a Logon arriving
//! during a delay waits its turn (it is not refused), and waiting Logons are checked in the
//! order they arrived: an owner who logs on while an impostor guesses at the same CompID
//! from another address waits at most a few delays, never forever (the impostor's address may
//! hold at most [`PENDING_PER_ADDR`] waiting Logons, a CompID [`PENDING_PER_SESSION`]). Beyond
//! those bounds, or [`PENDING_MAX`] in all, a Logon is refused at once without its password
//! being checked. At the market-data port a Logon during a delay is refused without a check.
//! Every refusal says the same (`fix::LOGON_REFUSED`); the real reason goes to the log.
//!
//! Never: runs a hash on the event loop; keeps a password after its check (the bytes are
//! wiped); lets the throttle's tables grow past their bounds (CompIDs: one entry per
//! configured session; addresses: [`ADDRS_MAX`], the stalest forgotten first). A connection
//! has at most one Logon with the thread (its input is not read meanwhile), so the channels
//! hold at most one per connection.
//!
//! Known cost: a Logon naming no session is verified against a dummy hash (so that its
//! refusal takes as long as a wrong password's); many addresses probing at once keep the
//! `auth` thread busy and delay genuine logons, never the order path.

use crate::error::ServerError;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use fix::{Credentials, Inbound, Logon};
use fix_gateway::{ConnId, FixConfig, FixInput};
use mio::Waker;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use zeroize::Zeroize;

/// Failure counts are forgotten after this long without a failure.
pub const FORGET_AFTER: Duration = Duration::from_secs(600);
/// Source addresses the throttle remembers at most.
pub const ADDRS_MAX: usize = 4096;
/// Logons waiting for their check, at most: in all, per source address, per session.
pub const PENDING_MAX: usize = 1024;
pub const PENDING_PER_ADDR: usize = 4;
pub const PENDING_PER_SESSION: usize = 16;

/// The throttle's delays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrottleConfig {
    /// After the first failure.
    pub delay: Duration,
    /// The most it grows to.
    pub delay_max: Duration,
}

impl Default for ThrottleConfig {
    fn default() -> ThrottleConfig {
        ThrottleConfig {
            delay: Duration::from_millis(100),
            delay_max: Duration::from_millis(3200),
        }
    }
}

/// Hashes `password` with a fresh random salt: the PHC string (`$argon2id$v=19$...`) for a
/// session's `password_hash`. Argon2id with the crate's default cost (19 MiB, 2 passes).
pub fn hash_password(password: &[u8]) -> Result<String, String> {
    hash_with(&Argon2::default(), password)
}

/// [`hash_password`] with a chosen argon2 (tests use cheap parameters).
pub fn hash_with(argon2: &Argon2<'_>, password: &[u8]) -> Result<String, String> {
    let salt = SaltString::generate(&mut OsRng);
    argon2
        .hash_password(password, &salt)
        .map(|h| h.to_string())
        .map_err(|e| format!("cannot hash the password: {e}"))
}

/// Checks that `phc` is a password hash this server can verify (an argon2 PHC string); the
/// error says what is wrong.
pub fn check_hash(phc: &str) -> Result<(), String> {
    let h = PasswordHash::new(phc).map_err(|e| {
        format!("not a PHC string ($argon2id$v=19$m=...,t=...,p=...$salt$hash): {e}")
    })?;
    if !matches!(h.algorithm.as_str(), "argon2id" | "argon2i" | "argon2d") {
        return Err(format!(
            "algorithm {} is not argon2 (make one with `rialto passwd`)",
            h.algorithm
        ));
    }
    if h.hash.is_none() {
        return Err("the PHC string has no hash".into());
    }
    argon2::Params::try_from(&h).map_err(|e| format!("argon2 parameters: {e}"))?;
    Ok(())
}

/// Whether `password` matches the PHC string `phc`.
pub fn verify(phc: &str, password: &[u8]) -> bool {
    PasswordHash::new(phc)
        .map(|h| Argon2::default().verify_password(password, &h).is_ok())
        .unwrap_or(false)
}

/// What the throttle knows of one CompID or address.
#[derive(Clone, Copy, Debug)]
struct Failures {
    count: u32,
    last: Instant,
}

/// Failed logons by session and by source address, and the delays they impose.
pub struct Throttle {
    cfg: ThrottleConfig,
    by_session: Vec<Option<Failures>>,
    by_addr: HashMap<IpAddr, Failures>,
    addrs_max: usize,
}

impl Throttle {
    pub fn new(cfg: ThrottleConfig, sessions: usize) -> Throttle {
        Throttle::with_cap(cfg, sessions, ADDRS_MAX)
    }

    /// With room for `addrs_max` addresses.
    pub fn with_cap(cfg: ThrottleConfig, sessions: usize, addrs_max: usize) -> Throttle {
        Throttle {
            cfg,
            by_session: vec![None; sessions],
            by_addr: HashMap::new(),
            addrs_max: addrs_max.max(1),
        }
    }

    /// The delay after `count` consecutive failures.
    pub fn delay(&self, count: u32) -> Duration {
        if count == 0 {
            return Duration::ZERO;
        }
        let shift = (count - 1).min(30);
        self.cfg
            .delay
            .saturating_mul(1u32 << shift)
            .min(self.cfg.delay_max)
    }

    fn until(&self, f: Option<&Failures>, now: Instant) -> Option<Instant> {
        let f = f?;
        if now.saturating_duration_since(f.last) >= FORGET_AFTER {
            return None;
        }
        Some(f.last + self.delay(f.count))
    }

    /// When a Logon for `session` from `addr` may be checked (at or before `now`: at once).
    pub fn not_before(&self, session: Option<usize>, addr: IpAddr, now: Instant) -> Instant {
        let s = session.and_then(|ix| self.by_session.get(ix).and_then(Option::as_ref));
        let a = self.by_addr.get(&addr);
        [self.until(s, now), self.until(a, now)]
            .into_iter()
            .flatten()
            .fold(now, Instant::max)
    }

    /// A Logon for `session` from `addr` failed at `now`.
    pub fn failed(&mut self, session: Option<usize>, addr: IpAddr, now: Instant) {
        let bump = |f: Option<Failures>| {
            let count = match f {
                Some(f) if now.saturating_duration_since(f.last) < FORGET_AFTER => f.count,
                _ => 0,
            };
            Failures {
                count: count.saturating_add(1),
                last: now,
            }
        };
        if let Some(slot) = session.and_then(|ix| self.by_session.get_mut(ix)) {
            *slot = Some(bump(*slot));
        }
        if !self.by_addr.contains_key(&addr) && self.by_addr.len() >= self.addrs_max {
            self.by_addr
                .retain(|_, f| now.saturating_duration_since(f.last) < FORGET_AFTER);
            if self.by_addr.len() >= self.addrs_max {
                // Full of live entries: the one whose last failure is oldest goes.
                if let Some(oldest) = self.by_addr.iter().min_by_key(|(_, f)| f.last) {
                    let oldest = *oldest.0;
                    self.by_addr.remove(&oldest);
                }
            }
        }
        let f = bump(self.by_addr.get(&addr).copied());
        self.by_addr.insert(addr, f);
    }

    /// A Logon for `session` from `addr` succeeded: both start afresh.
    pub fn succeeded(&mut self, session: usize, addr: IpAddr) {
        if let Some(slot) = self.by_session.get_mut(session) {
            *slot = None;
        }
        self.by_addr.remove(&addr);
    }

    /// Addresses remembered now.
    pub fn addrs(&self) -> usize {
        self.by_addr.len()
    }
}

/// The checks both ports share: the hashes (from the config) and the throttle.
pub struct AuthCheck {
    fix: Arc<FixConfig>,
    throttle: Mutex<Throttle>,
    /// Verified for a Logon naming no session, so that its refusal takes as long as a wrong
    /// password's (the answer's time says nothing of whether the CompID exists).
    dummy: String,
}

/// Why a check refused a Logon (for the log; the client is told only `fix::LOGON_REFUSED`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    UnknownCompIds,
    Username,
    Password,
    /// Too many Logons wait for their check (from its address, for its session, or in all).
    Busy,
    /// During a delay, at the market-data port.
    Throttled,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::UnknownCompIds => "unknown SenderCompID/TargetCompID",
            Refusal::Username => "wrong Username",
            Refusal::Password => "wrong or missing Password",
            Refusal::Busy => "too many logons waiting for their check",
            Refusal::Throttled => "during the delay after failed logons",
        }
    }
}

impl AuthCheck {
    pub fn new(fix: Arc<FixConfig>, throttle: ThrottleConfig) -> Result<AuthCheck, ServerError> {
        let dummy = hash_password(b"no session has this password")
            .map_err(|e| ServerError(format!("auth: {e}")))?;
        Ok(AuthCheck {
            throttle: Mutex::new(Throttle::new(throttle, fix.sessions.len())),
            fix,
            dummy,
        })
    }

    /// The session `l` names, if configured.
    pub fn session_of(&self, l: &Logon) -> Option<usize> {
        self.fix
            .find_session(l.sender_comp_id.as_bytes(), l.target_comp_id.as_bytes())
    }

    /// Whether `l` must be checked: it names a session that authenticates, or none (whose
    /// refusal is throttled like a wrong password's).
    pub fn needs_check(&self, l: &Logon) -> bool {
        self.session_of(l)
            .is_none_or(|ix| self.fix.sessions[ix].authenticates())
    }

    /// Verifies `l`'s credentials for `session` (the hash runs here: tens of ms).
    fn verify(&self, session: Option<usize>, l: &Logon) -> Result<(), Refusal> {
        let password = l.password.as_ref().map_or(&b""[..], |p| p.as_bytes());
        let Some(ix) = session else {
            verify(&self.dummy, password);
            return Err(Refusal::UnknownCompIds);
        };
        let d = &self.fix.sessions[ix];
        let password_ok = match &d.password_hash {
            Some(phc) => l.password.is_some() && verify(phc, password),
            None => true,
        };
        let username_ok = match &d.username {
            Some(u) => l.username.as_ref().map(|t| t.as_bytes()) == Some(u.as_bytes()),
            None => true,
        };
        match (username_ok, password_ok) {
            (false, _) => Err(Refusal::Username),
            (true, false) => Err(Refusal::Password),
            (true, true) => Ok(()),
        }
    }

    /// Checks `l` now and records the outcome in the throttle; `Err`: refused, and why.
    fn decide(&self, session: Option<usize>, addr: IpAddr, l: &Logon) -> Result<(), Refusal> {
        let r = self.verify(session, l);
        let now = Instant::now();
        let mut t = self.throttle.lock().unwrap_or_else(|e| e.into_inner());
        match (r, session) {
            (Ok(()), Some(ix)) => t.succeeded(ix, addr),
            _ => t.failed(session, addr, now),
        }
        r
    }

    fn not_before(&self, session: Option<usize>, addr: IpAddr, now: Instant) -> Instant {
        self.throttle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .not_before(session, addr, now)
    }

    /// The market-data port's check, on its own thread: during a delay the Logon is refused
    /// without its password being checked; else it is verified. Logged when refused.
    pub fn check_now(
        &self,
        addr: Option<IpAddr>,
        session: Option<usize>,
        l: &Logon,
    ) -> Credentials {
        if session.is_some_and(|ix| !self.fix.sessions[ix].authenticates()) {
            return Credentials::Unchecked;
        }
        let addr = addr.unwrap_or(IpAddr::from([0, 0, 0, 0]));
        let now = Instant::now();
        let r = if self.not_before(session, addr, now) > now {
            Err(Refusal::Throttled)
        } else {
            self.decide(session, addr, l)
        };
        match r {
            Ok(()) => Credentials::Accepted,
            Err(why) => {
                log_refused("market-data", None, addr, l, why);
                Credentials::Refused
            }
        }
    }
}

fn log_refused(port: &str, conn: Option<ConnId>, addr: IpAddr, l: &Logon, why: Refusal) {
    tracing::warn!(
        port,
        conn,
        peer = %addr,
        sender_comp_id = %l.sender_comp_id.to_str_lossy(),
        target_comp_id = %l.target_comp_id.to_str_lossy(),
        reason = why.as_str(),
        "logon credentials refused"
    );
}

/// A Logon waiting for its check on the `auth` thread.
struct Pending {
    conn: ConnId,
    addr: IpAddr,
    session: Option<usize>,
    input: FixInput,
}

/// The `auth` thread's handle, owned by the event loop.
pub struct Auth {
    check: Arc<AuthCheck>,
    tx: Option<Sender<Pending>>,
    verdicts: Receiver<(ConnId, FixInput)>,
    thread: Option<JoinHandle<()>>,
}

impl Auth {
    /// Starts the `auth` thread; it wakes the event loop with `waker` after each verdict.
    pub fn start(check: Arc<AuthCheck>, waker: Arc<Waker>) -> Result<Auth, ServerError> {
        let (tx, rx) = crossbeam_channel::unbounded::<Pending>();
        let (vtx, verdicts) = crossbeam_channel::unbounded();
        let c = check.clone();
        let thread = std::thread::Builder::new()
            .name("auth".into())
            .spawn(move || run(&c, &rx, &vtx, &waker))
            .map_err(|e| ServerError(format!("auth thread: {e}")))?;
        Ok(Auth {
            check,
            tx: Some(tx),
            verdicts,
            thread: Some(thread),
        })
    }

    /// A message read from connection `conn` (from `addr`): `Some` to journal now (a Logon
    /// that needs no check comes back with its password wiped), `None` if it is a Logon gone
    /// to the `auth` thread: the connection's further input waits for its verdict.
    #[inline]
    pub fn route(&self, conn: ConnId, addr: IpAddr, input: FixInput) -> Option<FixInput> {
        if !matches!(input.msg, Inbound::Logon(_)) {
            return Some(input);
        }
        self.route_logon(conn, addr, input)
    }

    #[cold]
    fn route_logon(&self, conn: ConnId, addr: IpAddr, mut input: FixInput) -> Option<FixInput> {
        let Inbound::Logon(l) = &mut input.msg else {
            return Some(input);
        };
        if !self.check.needs_check(l) {
            l.wipe_password();
            l.username = None;
            return Some(input);
        }
        let session = self.check.session_of(l);
        let tx = self.tx.as_ref()?;
        if tx
            .send(Pending {
                conn,
                addr,
                session,
                input,
            })
            .is_err()
        {
            tracing::error!(conn, "auth thread is gone: logon dropped");
        }
        None
    }

    /// A verdict: the connection and its Logon, to journal (credentials set, password wiped).
    pub fn take_verdict(&self) -> Option<(ConnId, FixInput)> {
        self.verdicts.try_recv().ok()
    }
}

impl Drop for Auth {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The `auth` thread: takes Logons, checks each when its throttle allows (in arrival order),
/// hands back the verdicts.
fn run(
    check: &AuthCheck,
    rx: &Receiver<Pending>,
    verdicts: &Sender<(ConnId, FixInput)>,
    waker: &Waker,
) {
    let mut pending: Vec<Pending> = Vec::new();
    loop {
        let now = Instant::now();
        // The first (oldest) Logon whose delays are over.
        let mut next_due: Option<Instant> = None;
        let mut ready = None;
        for (i, p) in pending.iter().enumerate() {
            let due = check.not_before(p.session, p.addr, now);
            if due <= now {
                ready = Some(i);
                break;
            }
            next_due = Some(next_due.map_or(due, |d: Instant| d.min(due)));
        }
        if let Some(i) = ready {
            let mut p = pending.remove(i);
            let r = match &p.input.msg {
                Inbound::Logon(l) => check.decide(p.session, p.addr, l),
                _ => Ok(()),
            };
            give(p.conn, p.addr, &mut p.input, r, "order-entry");
            if verdicts.send((p.conn, p.input)).is_err() {
                return;
            }
            let _ = waker.wake();
            continue;
        }
        let got = match next_due {
            Some(due) => rx.recv_timeout(due.saturating_duration_since(now)),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match got {
            Ok(mut p) => {
                let by_addr = pending.iter().filter(|q| q.addr == p.addr).count();
                let by_session = p.session.map_or(0, |ix| {
                    pending.iter().filter(|q| q.session == Some(ix)).count()
                });
                if pending.len() >= PENDING_MAX
                    || by_addr >= PENDING_PER_ADDR
                    || by_session >= PENDING_PER_SESSION
                {
                    // Refused without a check: it says nothing, and costs no hash.
                    give(
                        p.conn,
                        p.addr,
                        &mut p.input,
                        Err(Refusal::Busy),
                        "order-entry",
                    );
                    if verdicts.send((p.conn, p.input)).is_err() {
                        return;
                    }
                    let _ = waker.wake();
                } else {
                    pending.push(p);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            // The loop stopped: nobody waits for the rest.
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Writes the verdict into the Logon, wipes its password and username, logs a refusal.
fn give(conn: ConnId, addr: IpAddr, input: &mut FixInput, r: Result<(), Refusal>, port: &str) {
    if let Inbound::Logon(l) = &mut input.msg {
        if let Err(why) = r {
            log_refused(port, Some(conn), addr, l, why);
        }
        l.credentials = if r.is_ok() {
            Credentials::Accepted
        } else {
            Credentials::Refused
        };
        l.wipe_password();
        l.username = None;
    }
}

/// `msg` as the message log may keep it: a Password (554) value replaced by `*`s.
pub fn redacted(msg: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    const TAG: &[u8] = b"\x01554=";
    let Some(at) = msg.windows(TAG.len()).position(|w| w == TAG) else {
        return std::borrow::Cow::Borrowed(msg);
    };
    let start = at + TAG.len();
    let end = msg[start..]
        .iter()
        .position(|&b| b == 1)
        .map_or(msg.len(), |n| start + n);
    let mut v = msg.to_vec();
    v[start..end].fill(b'*');
    std::borrow::Cow::Owned(v)
}

/// Reads a password for `rialto passwd`: one line of `input`, without its line end; the
/// buffer it was read into is wiped.
pub fn read_password(input: &mut impl std::io::BufRead) -> Result<Vec<u8>, String> {
    let mut line = String::new();
    input
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the password: {e}"))?;
    let pw = line.trim_end_matches(['\n', '\r']).as_bytes().to_vec();
    line.zeroize();
    if pw.is_empty() {
        return Err("empty password".into());
    }
    Ok(pw)
}

#[cfg(test)]
mod tests;
