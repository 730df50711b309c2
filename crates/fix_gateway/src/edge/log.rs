//! What the edge tells the operator: logons, refused logons, logouts and disconnects with
//! their reason, session Rejects sent and received, gaps, resets and resends, as `tracing`
//! events with the session's CompIDs.
//!
//! Never: logs while replaying (recovery and journal followers apply the same records, and
//! the live loop already said it), or lets a client flood the log: the events a client can
//! cause at will (rejects, garbled or duplicate messages, refused logons) are limited to
//! `PER_SECOND` a second per session (and for refused logons, overall), and the number left
//! out is logged when the next second begins. Timing comes from the record's timestamp.

use crate::config::FixConfig;
use crate::record::ConnId;
use fix::{DisconnectReason, Logon, SessionEvent};

/// Events of one kind a client can cause at will, logged per session per second.
const PER_SECOND: u32 = 10;
const NS_PER_SEC: u64 = 1_000_000_000;

/// The session events one call into a session reported (at most four are kept: a call
/// reports one or two).
#[derive(Clone, Copy, Default)]
pub(super) struct Noted {
    n: u8,
    ev: [Option<SessionEvent>; 4],
}

impl Noted {
    #[inline]
    pub(super) fn push(&mut self, e: SessionEvent) {
        if let Some(slot) = self.ev.get_mut(self.n as usize) {
            *slot = Some(e);
            self.n += 1;
        }
    }
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.n == 0
    }
}

/// A per-second budget: `allow` says whether to log one more; `left_out` counts the rest.
#[derive(Clone, Copy, Debug, Default)]
struct Budget {
    second: u64,
    used: u32,
    left_out: u64,
}

impl Budget {
    /// Whether to log an event at `ts`; the count left out in the second that ended, if any.
    fn allow(&mut self, ts: u64) -> (bool, u64) {
        let second = ts / NS_PER_SEC;
        let mut ended = 0;
        if second != self.second {
            ended = std::mem::take(&mut self.left_out);
            self.second = second;
            self.used = 0;
        }
        if self.used < PER_SECOND {
            self.used += 1;
            (true, ended)
        } else {
            self.left_out += 1;
            (false, ended)
        }
    }
}

/// The edge's log state: one budget per session and one for refused logons.
#[derive(Debug, Default)]
pub(super) struct EdgeLog {
    budgets: Vec<Budget>,
    refused: Budget,
}

impl EdgeLog {
    pub(super) fn new(sessions: usize) -> EdgeLog {
        EdgeLog {
            budgets: vec![Budget::default(); sessions],
            refused: Budget::default(),
        }
    }

    /// Logs what session `ix` reported at `ts` (nothing while `replaying`).
    pub(super) fn events(
        &mut self,
        cfg: &FixConfig,
        ix: usize,
        ts: u64,
        noted: Noted,
        replaying: bool,
    ) {
        if replaying || noted.is_empty() {
            return;
        }
        let Some(d) = cfg.sessions.get(ix) else {
            return;
        };
        let (client, us) = (d.sender_comp_id.as_str(), d.target_comp_id.as_str());
        for e in noted.ev.iter().take(noted.n as usize).flatten() {
            match *e {
                SessionEvent::LoggedOn { reset } => {
                    tracing::info!(client, us, reset, "logon")
                }
                SessionEvent::Disconnect(reason) => {
                    let why = disconnect_text(reason);
                    match reason {
                        DisconnectReason::LogoutComplete | DisconnectReason::Shutdown => {
                            tracing::info!(client, us, reason = why, "logout")
                        }
                        _ => tracing::warn!(client, us, reason = why, "disconnect"),
                    }
                }
                SessionEvent::GapDetected { expected, received } => {
                    tracing::info!(client, us, expected, received, "inbound gap: ResendRequest")
                }
                SessionEvent::SequenceReset { next_in, gap_fill } => {
                    tracing::info!(client, us, next_in, gap_fill, "SequenceReset received")
                }
                SessionEvent::ResendServed { begin, end, resent } => {
                    tracing::info!(client, us, begin, end, resent, "ResendRequest served")
                }
                SessionEvent::Rejected {
                    ref_seq_num,
                    reason,
                    ref_tag,
                } => {
                    if let Some(left_out) = self.limited(ix, ts, client, us) {
                        let ref_tag = ref_tag.unwrap_or(0);
                        tracing::warn!(
                            client,
                            us,
                            ref_seq_num,
                            reason = reason.code(),
                            ref_tag,
                            left_out,
                            "session Reject sent"
                        )
                    }
                }
                SessionEvent::RejectReceived { ref_seq_num } => {
                    if self.limited(ix, ts, client, us).is_some() {
                        tracing::warn!(client, us, ref_seq_num, "session Reject received")
                    }
                }
                SessionEvent::DuplicateIgnored { seq } => {
                    if self.limited(ix, ts, client, us).is_some() {
                        tracing::info!(client, us, seq, "possible duplicate ignored")
                    }
                }
                SessionEvent::Garbled(e) => {
                    if self.limited(ix, ts, client, us).is_some() {
                        tracing::warn!(client, us, reason = e.as_str(), "garbled message dropped")
                    }
                }
            }
        }
    }

    /// `Some` if an event of session `ix` may be logged now; logs how many the last second
    /// left out.
    fn limited(&mut self, ix: usize, ts: u64, client: &str, us: &str) -> Option<u64> {
        let b = self.budgets.get_mut(ix)?;
        let (ok, ended) = b.allow(ts);
        if ended > 0 {
            tracing::warn!(
                client,
                us,
                left_out = ended,
                "log events left out (rate limit)"
            );
        }
        ok.then_some(ended)
    }

    /// Session `ix`'s connection `conn` closed under it (the client went away, or the server
    /// dropped a connection it could not read or write).
    pub(super) fn connection_lost(
        &mut self,
        cfg: &FixConfig,
        ix: usize,
        conn: ConnId,
        replaying: bool,
    ) {
        if let (false, Some(d)) = (replaying, cfg.sessions.get(ix)) {
            tracing::warn!(
                client = d.sender_comp_id.as_str(),
                us = d.target_comp_id.as_str(),
                conn,
                "connection lost without Logout"
            );
        }
    }

    /// A Logon refused before it reached a session (unknown CompIDs, credentials not
    /// accepted, wrong port, logged on elsewhere): `text` is the real reason, for the operator
    /// (the Logout may have said less).
    pub(super) fn logon_refused(&mut self, conn: ConnId, l: &Logon, ts: u64, text: &str) {
        let (ok, ended) = self.refused.allow(ts);
        if ended > 0 {
            tracing::warn!(
                left_out = ended,
                "refused logons left out of the log (rate limit)"
            );
        }
        if ok {
            tracing::warn!(
                conn,
                sender_comp_id = %l.sender_comp_id.to_str_lossy(),
                target_comp_id = %l.target_comp_id.to_str_lossy(),
                begin_string = %l.begin_string.to_str_lossy(),
                reason = text,
                "logon refused"
            );
        }
    }
}

/// Why a session ended, as the log says it.
pub(super) fn disconnect_text(r: DisconnectReason) -> &'static str {
    use DisconnectReason as D;
    match r {
        D::FirstMessageNotLogon => "first message not a Logon",
        D::UnsupportedVersion => "wrong BeginString at Logon",
        D::BadCompId => "unknown SenderCompID/TargetCompID",
        D::BadCredentials => "credentials not accepted (Username or Password)",
        D::BadLogon => "Logon refused (HeartBtInt, ResetSeqNumFlag or a second Logon)",
        D::LogonTimeout => "no Logon in time",
        D::HeartbeatTimeout => "TestRequest unanswered",
        D::SeqTooLow { .. } => "MsgSeqNum too low",
        D::MissingMsgSeqNum => "MsgSeqNum missing",
        D::BeginStringMismatch => "wrong BeginString",
        D::CompIdProblem => "CompID problem",
        D::SendingTimeAccuracy => "SendingTime accuracy problem",
        D::LogoutComplete => "Logout",
        D::LogoutTimeout => "Logout unanswered",
        D::Shutdown => "exchange shutting down",
        D::Evicted => "logged out by the exchange (throttle or slow reader)",
    }
}

#[cfg(test)]
mod tests;
