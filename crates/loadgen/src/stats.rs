//! What a run counted and measured, and how it is printed: the seeds' percentile table
//! (`Percentile : Microseconds : Event count`, MIN through 99.999999% to `MAX, TOTAL`), the
//! counters, and the one summary line scripts parse.
//!
//! Role: keep formatting in one place so `bench fix`, `bench echo`, `bench sweep` and the demo
//! print the same thing.
//!
//! Never: floats in what is measured (latencies are integer nanoseconds in an HdrHistogram;
//! floats only appear when printing microseconds and rates).

use hdrhistogram::Histogram;
use std::fmt::Write as _;

/// Highest latency the histograms hold: one hour in ns (larger values are clamped).
pub const LATENCY_NS_MAX: u64 = 3_600_000_000_000;

/// A latency histogram in nanoseconds, 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LATENCY_NS_MAX, 3).expect("constant bounds are valid")
}

/// What happened to the requests of a run (or of one second of it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Requests written: new orders, cancels, replaces.
    pub sent: u64,
    pub sent_new: u64,
    pub sent_cancel: u64,
    pub sent_replace: u64,
    /// Requests whose first answer arrived.
    pub answered: u64,
    /// First answers that accepted the request: ExecType New, Replaced, or Canceled for a cancel.
    pub acks: u64,
    /// ExecutionReports with ExecType Trade (one per side of each trade that involves a bot),
    /// received after the warm-up.
    pub fills: u64,
    /// Measured orders canceled by the exchange, not on request: IOC and market remainders,
    /// self-trade prevention (counted per order placed in the measured period).
    pub exchange_cancels: u64,
    /// First answers that refused the request for a business reason (order reject, cancel
    /// reject: too late to cancel, unknown order, ...).
    pub rejects: u64,
    /// Requests refused because the exchange was overloaded ("exchange busy"): load shed.
    pub shed: u64,
    /// Protocol problems: session rejects, unexpected logouts or disconnects, garbled frames,
    /// sequence gaps, unanswered requests at the end of the run.
    pub errors: u64,
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        self.sent += o.sent;
        self.sent_new += o.sent_new;
        self.sent_cancel += o.sent_cancel;
        self.sent_replace += o.sent_replace;
        self.answered += o.answered;
        self.acks += o.acks;
        self.fills += o.fills;
        self.exchange_cancels += o.exchange_cancels;
        self.rejects += o.rejects;
        self.shed += o.shed;
        self.errors += o.errors;
    }
}

/// The result of one measured run.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Offered request rate over all bots, per second.
    pub rate_offered: u64,
    /// Measured requests written per second of the measured period (lower than offered when the
    /// generator fell behind, e.g. under TCP back-pressure).
    pub rate_achieved: f64,
    pub bots: usize,
    /// Length of the measured period in seconds.
    pub measured_secs: f64,
    pub counters: Counters,
    /// Request -> first answer latency (ns) of measured requests, shed ones excluded.
    pub latency: Histogram<u64>,
    /// The same for shed requests.
    pub shed_latency: Histogram<u64>,
    /// How late the generator wrote measured requests after their intended time (ns): its own
    /// precision, included in `latency`.
    pub send_lag: Histogram<u64>,
    /// Latency of the same requests counted from when the generator actually wrote them
    /// (`latency` less each request's own send lag): the exchange's and the network's share.
    /// Its tail beside `latency`'s says whether late sends or late answers make the tail.
    pub after_send: Histogram<u64>,
    /// Measured requests answered later than [`TAIL_NS`] after their intended time, split by
    /// what made most of the delay: a late send (`send lag > after-send`) or a late answer.
    pub tail: TailSplit,
    /// The first few error descriptions (at most `ERROR_NOTES_MAX`).
    pub error_notes: Vec<String>,
    /// CPU time the generator process used during the run, seconds (it shares the machine's
    /// cores with the exchange).
    pub generator_cpu_secs: f64,
    /// Wall time of the whole run (warm-up, measured period, drain), seconds.
    pub wall_secs: f64,
    /// Socket reads that came without the kernel's receive time (timed by the generator's
    /// clock instead, which may be later): 0 in a normal run.
    pub unstamped_reads: u64,
    /// Steal time of the machine's CPUs over the whole run, ms (`noise::steal_ms`): the
    /// hypervisor running someone else while a vCPU was ready. A run with a lot of it measured
    /// the host as much as the exchange. `None` where the kernel does not report it.
    pub host_steal_ms: Option<u64>,
}

pub const ERROR_NOTES_MAX: usize = 10;

/// The latency target's P99 bound (issue 4): requests slower than this make the tail.
pub const TAIL_NS: u64 = 200_000;

/// The requests over [`TAIL_NS`], by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TailSplit {
    /// Mostly late in leaving the generator (its send lag is the larger part).
    pub late_send: u64,
    /// Mostly late after the send (exchange, network, the kernel's delivery).
    pub late_answer: u64,
    /// Not split (the send time was no longer kept).
    pub unknown: u64,
}

impl TailSplit {
    /// Counts one request of `latency` ns whose answer came `after_send` ns after the send.
    pub fn record(&mut self, latency: u64, after_send: Option<u64>) {
        if latency <= TAIL_NS {
            return;
        }
        match after_send {
            Some(a) if latency.saturating_sub(a) > a => self.late_send += 1,
            Some(_) => self.late_answer += 1,
            None => self.unknown += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.late_send + self.late_answer + self.unknown
    }
}

/// The percentiles of the seeds' tables.
const PERCENTILES: [(&str, f64); 9] = [
    ("50.0%", 50.0),
    ("90.0%", 90.0),
    ("99.0%", 99.0),
    ("99.9%", 99.9),
    ("99.99%", 99.99),
    ("99.999%", 99.999),
    ("99.9999%", 99.9999),
    ("99.99999%", 99.99999),
    ("99.999999%", 99.999999),
];

/// Nanoseconds as microseconds with one decimal.
pub fn us(ns: u64) -> String {
    format!("{}.{}", ns / 1000, ns % 1000 / 100)
}

/// Latency at `pct` percent in ns (0 for an empty histogram).
pub fn at(h: &Histogram<u64>, pct: f64) -> u64 {
    if h.is_empty() {
        0
    } else {
        h.value_at_percentile(pct)
    }
}

/// The seeds' table: `Percentile : Microseconds : Event count`, one line per percentile, the
/// count being the number of samples at or below that latency.
pub fn percentile_table(h: &Histogram<u64>) -> String {
    let mut out = String::from("Percentile : Microseconds : Event count\n");
    if h.is_empty() {
        out.push_str("(no samples)\n");
        return out;
    }
    let below = |v: u64| h.count_between(0, v);
    let _ = writeln!(out, "MIN : {} : {}", us(h.min()), below(h.min()));
    for (name, p) in PERCENTILES {
        let v = h.value_at_percentile(p);
        let _ = writeln!(out, "{name} : {} : {}", us(v), below(v));
    }
    let _ = writeln!(out, "MAX, TOTAL : {} : {}", us(h.max()), h.len());
    out
}

impl RunResult {
    /// The counters block printed after the table.
    pub fn counters_text(&self) -> String {
        let c = &self.counters;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "offered {} req/s, achieved {:.0} req/s over {:.1} s ({} bots)",
            self.rate_offered, self.rate_achieved, self.measured_secs, self.bots
        );
        let _ = writeln!(
            s,
            "sent {} (new {}, cancel {}, replace {}), answered {}",
            c.sent, c.sent_new, c.sent_cancel, c.sent_replace, c.answered
        );
        let _ = writeln!(
            s,
            "acks {}, fills {}, exchange cancels {}, rejects {}, shed {} (exchange busy), errors {}",
            c.acks, c.fills, c.exchange_cancels, c.rejects, c.shed, c.errors
        );
        send_lines(
            &mut s,
            c.shed,
            &self.shed_latency,
            (&self.send_lag, "the generator"),
            &self.after_send,
        );
        let t = &self.tail;
        if t.total() > 0 {
            let _ = writeln!(
                s,
                "over {} us: {} requests ({:.2}%): {} mostly a late send, {} mostly a late answer{}",
                TAIL_NS / 1000,
                t.total(),
                t.total() as f64 * 100.0 / self.latency.len().max(1) as f64,
                t.late_send,
                t.late_answer,
                if t.unknown > 0 {
                    format!(", {} not split", t.unknown)
                } else {
                    String::new()
                }
            );
        }
        if self.wall_secs > 0.0 {
            let _ = writeln!(
                s,
                "generator CPU {:.2} s over {:.1} s ({:.0}% of one core)",
                self.generator_cpu_secs,
                self.wall_secs,
                self.generator_cpu_secs * 100.0 / self.wall_secs
            );
        }
        if let Some(steal) = self.host_steal_ms {
            let _ = writeln!(
                s,
                "host steal {steal} ms over the run (the hypervisor ran someone else while a vCPU of this machine was ready)"
            );
        }
        if self.unstamped_reads > 0 {
            let _ = writeln!(
                s,
                "{} socket reads without a kernel receive time (timed on reading)",
                self.unstamped_reads
            );
        }
        for e in &self.error_notes {
            let _ = writeln!(s, "error: {e}");
        }
        s
    }

    /// The last line of every run, for scripts (`host_steal_ms` only where the kernel
    /// reports steal time).
    pub fn summary_line(&self) -> String {
        let h = &self.latency;
        let c = &self.counters;
        let steal = self
            .host_steal_ms
            .map(|ms| format!(" host_steal_ms={ms}"))
            .unwrap_or_default();
        format!(
            "rate_offered={} rate_achieved={:.0} {} acks={} fills={} rejects={} shed={} errors={} send_lag_p99_us={} after_send_p50_us={} after_send_p99_us={} over200_late_send={} over200_late_answer={}{}",
            self.rate_offered,
            self.rate_achieved,
            latency_fields(h),
            c.acks,
            c.fills,
            c.rejects,
            c.shed,
            c.errors,
            us(at(&self.send_lag, 99.0)),
            us(at(&self.after_send, 50.0)),
            us(at(&self.after_send, 99.0)),
            self.tail.late_send,
            self.tail.late_answer,
            steal
        )
    }

    /// Table, counters and summary line: what `bench fix` prints.
    pub fn report(&self) -> String {
        format!(
            "{}{}{}\n",
            percentile_table(&self.latency),
            self.counters_text(),
            self.summary_line()
        )
    }
}

/// Parses a `key=value key=value` summary line into pairs (for scripts and tests).
pub fn parse_summary_line(line: &str) -> Result<Vec<(String, f64)>, String> {
    line.split_whitespace()
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("{kv:?} is not key=value"))?;
            let v: f64 = v
                .parse()
                .map_err(|_| format!("{k}: {v:?} is not a number"))?;
            Ok((k.to_string(), v))
        })
        .collect()
}

/// The latency fields of a summary line: `p50_us=.. p90_us=.. p99_us=.. p999_us=.. p9999_us=..
/// max_us=..`.
pub(crate) fn latency_fields(h: &Histogram<u64>) -> String {
    format!(
        "p50_us={} p90_us={} p99_us={} p999_us={} p9999_us={} max_us={}",
        us(at(h, 50.0)),
        us(at(h, 90.0)),
        us(at(h, 99.0)),
        us(at(h, 99.9)),
        us(at(h, 99.99)),
        us(if h.is_empty() { 0 } else { h.max() })
    )
}

/// The lines a benchmark's report prints after its counts: the latency of shed answers (if
/// any), how far sends lagged behind their schedule (`lag.1`: what makes them lag), and the
/// latency from the actual send (without the lag).
pub(crate) fn send_lines(
    s: &mut String,
    shed: u64,
    shed_latency: &Histogram<u64>,
    lag: (&Histogram<u64>, &str),
    after_send: &Histogram<u64>,
) {
    if shed > 0 {
        let _ = writeln!(
            s,
            "shed latency: p50 {} us, p99 {} us",
            us(at(shed_latency, 50.0)),
            us(at(shed_latency, 99.0))
        );
    }
    let (send_lag, what) = lag;
    if !send_lag.is_empty() {
        let _ = writeln!(
            s,
            "send lag behind schedule ({what}): p50 {} us, p99 {} us, max {} us",
            us(at(send_lag, 50.0)),
            us(at(send_lag, 99.0)),
            us(send_lag.max())
        );
    }
    if !after_send.is_empty() {
        let a = after_send;
        let _ = writeln!(
            s,
            "latency from the actual send (without the send lag): p50 {} us, p90 {} us, p99 {} us, p99.9 {} us",
            us(at(a, 50.0)),
            us(at(a, 90.0)),
            us(at(a, 99.0)),
            us(at(a, 99.9))
        );
    }
}

#[cfg(test)]
mod tests;
