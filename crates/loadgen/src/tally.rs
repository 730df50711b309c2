//! A run's accounting while it runs: the counters of the measured period and of the last
//! second, the latency histograms, when recent requests actually left, and the error notes.
//!
//! Role: kept apart from the sockets, so a bot's messages can be accounted for while its read
//! buffer is borrowed; `driver` turns it into a `RunResult` at the end of the run.
//!
//! Never: counts an answer to a request outside the run (`k >= k_end`); times a shed answer
//! with the accepted ones (it has its own histogram); keeps more than `ERROR_NOTES_MAX` notes.
//!
//! Invariants: only requests whose index falls in `k_measure..k_end` reach `totals` and the
//! run's histograms; the last second's counters take every request.

use crate::clordid;
use crate::schedule::Schedule;
use crate::stats::{new_histogram, Counters, TailSplit, ERROR_NOTES_MAX};
use hdrhistogram::Histogram;

/// Requests whose actual send time is kept for `after_send` (an answer later than this many
/// requests is still timed from its intended time, just not split).
pub const SENT_RING: u64 = 1 << 16;

/// What a first answer said about its request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ack,
    Reject,
    Shed,
}

/// The accounting of one run, or of a phase that measures nothing (logon, the end).
pub struct Tally {
    /// The run's tag in ClOrdIDs: answers to other runs' requests are not this run's.
    pub run: [u8; clordid::RUN_LEN],
    pub schedule: Schedule,
    pub k_measure: u64,
    pub k_end: u64,
    pub totals: Counters,
    pub second: Counters,
    pub latency: Histogram<u64>,
    pub shed_latency: Histogram<u64>,
    pub second_latency: Histogram<u64>,
    /// How late measured requests were written, relative to their intended time (ns).
    pub send_lag: Histogram<u64>,
    /// Latency from the actual send (ns), and when recent requests were actually sent:
    /// `sent_at[k % SENT_RING]` = (k, send time), for `after_send`.
    pub after_send: Histogram<u64>,
    pub sent_at: Vec<(u64, u64)>,
    pub tail: TailSplit,
    pub sent_all: u64,
    pub answered_all: u64,
    pub last_measured_send_ns: u64,
    pub notes: Vec<String>,
    pub count_fills: bool,
    pub unstamped_reads: u64,
}

impl Tally {
    /// For a phase that measures nothing (logon, the mass cancel at the end).
    pub fn idle(run: [u8; clordid::RUN_LEN]) -> Tally {
        Tally {
            run,
            schedule: Schedule::new(1, 1),
            k_measure: u64::MAX,
            k_end: 0,
            totals: Counters::default(),
            second: Counters::default(),
            latency: new_histogram(),
            shed_latency: new_histogram(),
            second_latency: new_histogram(),
            send_lag: new_histogram(),
            after_send: new_histogram(),
            sent_at: Vec::new(),
            tail: Default::default(),
            sent_all: 0,
            answered_all: 0,
            last_measured_send_ns: 0,
            notes: Vec::new(),
            count_fills: false,
            unstamped_reads: 0,
        }
    }

    /// For a run of `schedule` that measures requests `k_measure..k_end`.
    pub fn measuring(
        run: [u8; clordid::RUN_LEN],
        schedule: Schedule,
        k_measure: u64,
        k_end: u64,
    ) -> Tally {
        Tally {
            schedule,
            k_measure,
            k_end,
            sent_at: vec![(u64::MAX, 0); SENT_RING as usize],
            ..Tally::idle(run)
        }
    }

    /// Intended send time of request `k`, ns after the start.
    pub fn intended_ns(&self, k: u64) -> u64 {
        self.schedule.intended_ns(k)
    }

    pub fn error(&mut self, note: String) {
        self.totals.errors += 1;
        self.second.errors += 1;
        if self.notes.len() < ERROR_NOTES_MAX {
            self.notes.push(note);
        }
    }

    /// Counts a request written: in the last second, and in the totals if `measured`; `f`
    /// counts its kind.
    pub fn count_sent(&mut self, measured: bool, f: impl Fn(&mut Counters)) {
        self.second.sent += 1;
        f(&mut self.second);
        if measured {
            self.totals.sent += 1;
            f(&mut self.totals);
        }
    }

    /// Accounts for the first answer to request `k`.
    pub fn answer(&mut self, k: u64, outcome: Outcome, recv_ns: u64) {
        if k >= self.k_end {
            return;
        }
        self.answered_all += 1;
        let latency = recv_ns.saturating_sub(self.intended_ns(k)).max(1);
        let measured = k >= self.k_measure;
        let sent = self.sent_at.get((k % SENT_RING) as usize).copied();
        let after_send = sent
            .filter(|&(sk, _)| sk == k)
            .map(|(_, at)| recv_ns.saturating_sub(at).max(1));
        for (c, on) in [(&mut self.second, true), (&mut self.totals, measured)] {
            if !on {
                continue;
            }
            c.answered += 1;
            match outcome {
                Outcome::Ack => c.acks += 1,
                Outcome::Reject => c.rejects += 1,
                Outcome::Shed => c.shed += 1,
            }
        }
        if outcome == Outcome::Shed {
            if measured {
                self.shed_latency.saturating_record(latency);
            }
            return;
        }
        self.second_latency.saturating_record(latency);
        if measured {
            self.latency.saturating_record(latency);
            if let Some(a) = after_send {
                self.after_send.saturating_record(a);
            }
            self.tail.record(latency, after_send);
        }
    }
}
