//! A sweep: one measured run per offered rate, summarised as the seeds' latency-vs-load table,
//! a CSV file and an SVG chart, with the knee marked.
//!
//! Role: turn `RunResult`s into the rows of Ember's table
//! (`Load (K rps) | P50 | P90 | P99 | P999 | P9999`, µs) and decide where the exchange stops
//! keeping up. The knee is the first run that is overloaded by any of these measures: P99 at or
//! above 1 ms, achieved rate below 95% of offered, more than 1% of requests shed, or errors.
//!
//! A sweep may cover several bots counts (Ember's experiment varies both the number of bots and
//! their rate): rows carry their `bots`, and `tables`, `csv` and `grid_chart` group by it, with
//! a knee per bots count. A point may be run several times (`runs`): `median` merges the runs
//! of a point into one row whose every percentile, rate and count is the median over the runs
//! (errors: the largest), so one noisy run does not move the knee.
//!
//! Never: runs anything itself (the caller runs the bench per rate and hands results in).

use crate::stats::{at, RunResult};
use crate::svg::{self, Chart, Series};
use std::fmt::Write as _;

/// P99 at or above this is overload (ns).
pub const KNEE_P99_NS: u64 = 1_000_000;
/// Achieved below this share of offered is overload (percent).
pub const KNEE_ACHIEVED_PCT: f64 = 95.0;
/// Shed above this share of requests is overload (percent).
pub const KNEE_SHED_PCT: f64 = 1.0;

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRow {
    pub rate_offered: u64,
    pub rate_achieved: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub p9999_ns: u64,
    pub max_ns: u64,
    pub sent: u64,
    pub acks: u64,
    pub fills: u64,
    pub rejects: u64,
    pub shed: u64,
    pub errors: u64,
    /// Bot sessions of the run (0 when read from a CSV without that column).
    pub bots: usize,
    /// Runs merged into this row by `median` (1 for a single run).
    pub runs: usize,
    /// Host steal time over the run, ms (`RunResult::host_steal_ms`; the median of the runs
    /// that report it): a row measured in a noisy minute says so. `None` where unknown.
    pub steal_ms: Option<u64>,
}

/// The median of `v` (the mean of the two middle values for an even count); 0 for none.
fn median_u64(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    match v.len() {
        0 => 0,
        n if n % 2 == 1 => v[n / 2],
        n => v[n / 2 - 1] / 2 + v[n / 2] / 2 + (v[n / 2 - 1] % 2 + v[n / 2] % 2) / 2,
    }
}

fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// `N bots` (`1 bot`).
pub fn bots_label(bots: usize) -> String {
    if bots == 1 {
        "1 bot".into()
    } else {
        format!("{bots} bots")
    }
}

/// One row for the runs of a point: the median of each percentile, of the achieved rate and of
/// each count; errors are the largest of any run (an error is never noise). `None` for no runs.
pub fn median(runs: &[SweepRow]) -> Option<SweepRow> {
    let first = runs.first()?;
    let m = |f: fn(&SweepRow) -> u64| median_u64(runs.iter().map(f).collect());
    Some(SweepRow {
        rate_offered: first.rate_offered,
        rate_achieved: median_f64(runs.iter().map(|r| r.rate_achieved).collect()),
        p50_ns: m(|r| r.p50_ns),
        p90_ns: m(|r| r.p90_ns),
        p99_ns: m(|r| r.p99_ns),
        p999_ns: m(|r| r.p999_ns),
        p9999_ns: m(|r| r.p9999_ns),
        max_ns: m(|r| r.max_ns),
        sent: m(|r| r.sent),
        acks: m(|r| r.acks),
        fills: m(|r| r.fills),
        rejects: m(|r| r.rejects),
        shed: m(|r| r.shed),
        errors: runs.iter().map(|r| r.errors).max().unwrap_or(0),
        bots: first.bots,
        runs: runs.iter().map(|r| r.runs).sum(),
        steal_ms: {
            let known: Vec<u64> = runs.iter().filter_map(|r| r.steal_ms).collect();
            (!known.is_empty()).then(|| median_u64(known))
        },
    })
}

/// The rows grouped by bots count, in order of first appearance.
pub fn by_bots(rows: &[SweepRow]) -> Vec<(usize, Vec<SweepRow>)> {
    let mut groups: Vec<(usize, Vec<SweepRow>)> = Vec::new();
    for r in rows {
        match groups.iter_mut().find(|(b, _)| *b == r.bots) {
            Some((_, g)) => g.push(r.clone()),
            None => groups.push((r.bots, vec![r.clone()])),
        }
    }
    groups
}

impl SweepRow {
    pub fn from_result(r: &RunResult) -> SweepRow {
        let h = &r.latency;
        SweepRow {
            rate_offered: r.rate_offered,
            rate_achieved: r.rate_achieved,
            p50_ns: at(h, 50.0),
            p90_ns: at(h, 90.0),
            p99_ns: at(h, 99.0),
            p999_ns: at(h, 99.9),
            p9999_ns: at(h, 99.99),
            max_ns: if h.is_empty() { 0 } else { h.max() },
            sent: r.counters.sent,
            acks: r.counters.acks,
            fills: r.counters.fills,
            rejects: r.counters.rejects,
            shed: r.counters.shed,
            errors: r.counters.errors,
            bots: r.bots,
            runs: 1,
            steal_ms: r.host_steal_ms,
        }
    }

    /// Why this run counts as overloaded, or `None`.
    pub fn overload(&self) -> Option<String> {
        let mut why = Vec::new();
        if self.p99_ns >= KNEE_P99_NS {
            why.push(format!("P99 {} us >= 1 ms", self.p99_ns / 1000));
        }
        let offered = self.rate_offered as f64;
        if offered > 0.0 && self.rate_achieved * 100.0 < offered * KNEE_ACHIEVED_PCT {
            why.push(format!(
                "achieved {:.0}% of offered",
                self.rate_achieved * 100.0 / offered
            ));
        }
        if self.sent > 0 && self.shed as f64 * 100.0 > self.sent as f64 * KNEE_SHED_PCT {
            why.push(format!(
                "{:.1}% shed",
                self.shed as f64 * 100.0 / self.sent as f64
            ));
        }
        if self.errors > 0 {
            why.push(format!("{} errors", self.errors));
        }
        if why.is_empty() {
            None
        } else {
            Some(why.join(", "))
        }
    }
}

/// Index of the first overloaded row.
pub fn knee(rows: &[SweepRow]) -> Option<usize> {
    rows.iter().position(|r| r.overload().is_some())
}

fn k_rps(rate: f64) -> String {
    if rate < 10_000.0 {
        format!("{:.1}", rate / 1000.0)
    } else {
        format!("{:.0}", rate / 1000.0)
    }
}

fn us0(ns: u64) -> String {
    format!("{}", (ns + 500) / 1000)
}

/// The seeds' markdown table; the load is the achieved rate, overloaded rows carry ⚠️ and the
/// knee row says so. A line after the table names the knee. When the rows merge several runs,
/// a line above the header says the figures are medians.
pub fn table(rows: &[SweepRow]) -> String {
    let mut s = String::new();
    let runs = rows.iter().map(|r| r.runs).max().unwrap_or(1);
    if runs > 1 {
        let _ = writeln!(
            s,
            "Each row: median over {runs} runs of each percentile and of the achieved rate."
        );
    }
    s.push_str(
        "| Load (K rps) | P50 (µs) | P90 (µs) | P99 (µs) | P999 (µs) | P9999 (µs) |\n|---|---|---|---|---|---|\n",
    );
    let knee_at = knee(rows);
    for (i, r) in rows.iter().enumerate() {
        let mark = match (knee_at, r.overload()) {
            (Some(k), Some(_)) if k == i => " ⚠️ knee",
            (_, Some(_)) => " ⚠️",
            _ => "",
        };
        let _ = writeln!(
            s,
            "| {}{mark} | {} | {} | {} | {} | {} |",
            k_rps(r.rate_achieved),
            us0(r.p50_ns),
            us0(r.p90_ns),
            us0(r.p99_ns),
            us0(r.p999_ns),
            us0(r.p9999_ns)
        );
    }
    match knee_at {
        Some(k) => {
            let r = &rows[k];
            let _ = writeln!(
                s,
                "knee: {} K rps offered ({} K achieved): {}",
                k_rps(r.rate_offered as f64),
                k_rps(r.rate_achieved),
                r.overload().unwrap_or_default()
            );
            if k > 0 {
                let _ = writeln!(
                    s,
                    "highest rate below the knee: {} K rps offered",
                    k_rps(rows[k - 1].rate_offered as f64)
                );
            }
        }
        None => {
            let _ = writeln!(s, "knee: not reached (no run overloaded)");
        }
    }
    s
}

/// One table per bots count (each with its knee), under a `### N bots` heading when there is
/// more than one.
pub fn tables(rows: &[SweepRow]) -> String {
    let groups = by_bots(rows);
    if groups.len() <= 1 {
        return table(rows);
    }
    let mut s = String::new();
    for (i, (bots, g)) in groups.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        let _ = writeln!(s, "### {}\n", bots_label(*bots));
        s.push_str(&table(g));
    }
    s
}

/// The rows as CSV with a header; `overloaded` is judged per bots count (`knee` marks the
/// first overloaded run of each).
pub fn csv(rows: &[SweepRow]) -> String {
    let mut s = String::from(
        "rate_offered,rate_achieved,p50_us,p90_us,p99_us,p999_us,p9999_us,max_us,sent,acks,fills,rejects,shed,errors,overloaded,bots,runs,steal_ms\n",
    );
    for (_, g) in by_bots(rows) {
        csv_rows(&mut s, &g);
    }
    s
}

fn csv_rows(s: &mut String, rows: &[SweepRow]) {
    let k = knee(rows);
    for (i, r) in rows.iter().enumerate() {
        let _ = writeln!(
            s,
            "{},{:.0},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{},{},{},{},{},{},{},{},{},{}",
            r.rate_offered,
            r.rate_achieved,
            r.p50_ns as f64 / 1e3,
            r.p90_ns as f64 / 1e3,
            r.p99_ns as f64 / 1e3,
            r.p999_ns as f64 / 1e3,
            r.p9999_ns as f64 / 1e3,
            r.max_ns as f64 / 1e3,
            r.sent,
            r.acks,
            r.fills,
            r.rejects,
            r.shed,
            r.errors,
            match (k, r.overload()) {
                (Some(k), Some(_)) if k == i => "knee",
                (_, Some(_)) => "yes",
                _ => "no",
            },
            r.bots,
            r.runs,
            r.steal_ms.map(|ms| ms.to_string()).unwrap_or_default()
        );
    }
}

/// The chart of a sweep: `chart` for one bots count; for several, P50 and P99 against load
/// with one line per bots count and percentile.
pub fn grid_chart(rows: &[SweepRow], title: &str) -> String {
    let groups = by_bots(rows);
    if groups.len() <= 1 {
        return chart(rows, title);
    }
    let sets: Vec<(String, Vec<SweepRow>)> = groups
        .into_iter()
        .map(|(b, g)| (bots_label(b), g))
        .collect();
    compare_chart(&sets, &["p50".into(), "p99".into()], title)
        .expect("p50 and p99 are known percentiles")
}

/// Latency percentiles (µs, log scale) against achieved load (K rps), knee marked.
pub fn chart(rows: &[SweepRow], title: &str) -> String {
    let series = |name: &str, f: fn(&SweepRow) -> u64| Series {
        name: name.to_string(),
        points: rows
            .iter()
            .map(|r| (r.rate_achieved / 1000.0, f(r) as f64 / 1000.0))
            .collect(),
    };
    let marker = knee(rows).map(|k| {
        (
            rows[k].rate_achieved / 1000.0,
            format!(
                "knee ({} K rps offered)",
                k_rps(rows[k].rate_offered as f64)
            ),
        )
    });
    svg::render(&Chart {
        title: title.to_string(),
        x_label: "Load (K requests/s, achieved)".into(),
        y_label: "Latency (µs, log scale)".into(),
        series: vec![
            series("P50", |r| r.p50_ns),
            series("P90", |r| r.p90_ns),
            series("P99", |r| r.p99_ns),
            series("P99.9", |r| r.p999_ns),
            series("P99.99", |r| r.p9999_ns),
        ],
        marker,
        threshold: Some((KNEE_P99_NS as f64 / 1000.0, "1 ms (knee: P99)".into())),
        log_x: false,
    })
}

/// Reads a CSV written by `csv` back into rows (for `rialto bench chart`).
pub fn parse_csv(text: &str) -> Result<Vec<SweepRow>, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().ok_or("empty CSV")?.split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h.trim() == name)
            .ok_or_else(|| format!("CSV has no {name} column"))
    };
    let names = [
        "rate_offered",
        "rate_achieved",
        "p50_us",
        "p90_us",
        "p99_us",
        "p999_us",
        "p9999_us",
        "max_us",
        "sent",
        "acks",
        "fills",
        "rejects",
        "shed",
        "errors",
    ];
    let idx: Vec<usize> = names.iter().map(|n| col(n)).collect::<Result<_, _>>()?;
    // Columns added later; older files lack them.
    let bots_col = col("bots").ok();
    let runs_col = col("runs").ok();
    let steal_col = col("steal_ms").ok();
    let mut rows = Vec::new();
    for (n, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        let num = |i: usize| -> Result<f64, String> {
            cells
                .get(idx[i])
                .and_then(|c| c.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("CSV line {}: bad {}", n + 2, names[i]))
        };
        let ns = |i: usize| num(i).map(|v| (v * 1000.0).round() as u64);
        let opt = |c: Option<usize>, default: usize| -> Result<usize, String> {
            match c.and_then(|c| cells.get(c)) {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse()
                    .map_err(|_| format!("CSV line {}: bad bots or runs", n + 2)),
            }
        };
        rows.push(SweepRow {
            rate_offered: num(0)? as u64,
            rate_achieved: num(1)?,
            p50_ns: ns(2)?,
            p90_ns: ns(3)?,
            p99_ns: ns(4)?,
            p999_ns: ns(5)?,
            p9999_ns: ns(6)?,
            max_ns: ns(7)?,
            sent: num(8)? as u64,
            acks: num(9)? as u64,
            fills: num(10)? as u64,
            rejects: num(11)? as u64,
            shed: num(12)? as u64,
            errors: num(13)? as u64,
            bots: opt(bots_col, 0)?,
            runs: opt(runs_col, 1)?,
            // Empty where the run did not know it.
            steal_ms: match steal_col.and_then(|c| cells.get(c)).map(|v| v.trim()) {
                None | Some("") => None,
                Some(v) => Some(
                    v.parse()
                        .map_err(|_| format!("CSV line {}: bad steal_ms", n + 2))?,
                ),
            },
        });
    }
    Ok(rows)
}

/// One percentile of a row, by name (`p50`, `p90`, `p99`, `p999`, `p9999`), in ns.
pub fn percentile_ns(r: &SweepRow, name: &str) -> Option<u64> {
    match name {
        "p50" => Some(r.p50_ns),
        "p90" => Some(r.p90_ns),
        "p99" => Some(r.p99_ns),
        "p999" => Some(r.p999_ns),
        "p9999" => Some(r.p9999_ns),
        _ => None,
    }
}

/// Several sweeps on one chart (e.g. Rialto and the reference exchange): one line per sweep and
/// percentile, latency against achieved load.
pub fn compare_chart(
    sets: &[(String, Vec<SweepRow>)],
    percentiles: &[String],
    title: &str,
) -> Result<String, String> {
    let rates = sets
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|r| r.rate_achieved));
    let (lo, hi) = rates.fold((f64::MAX, 0.0f64), |(lo, hi), r| (lo.min(r), hi.max(r)));
    // Rates an order of magnitude apart read better on a log axis.
    let log_x = lo > 0.0 && hi / lo > 20.0;
    let mut series = Vec::new();
    for (label, rows) in sets {
        for p in percentiles {
            let mut points = Vec::new();
            for r in rows {
                let v = percentile_ns(r, p)
                    .ok_or_else(|| format!("unknown percentile {p:?} (p50 p90 p99 p999 p9999)"))?;
                points.push((r.rate_achieved / 1000.0, v as f64 / 1000.0));
            }
            series.push(Series {
                name: format!("{label} {}", p.to_uppercase()),
                points,
            });
        }
    }
    Ok(svg::render(&Chart {
        title: title.to_string(),
        x_label: "Load (K requests/s, achieved)".into(),
        y_label: "Latency (µs, log scale)".into(),
        series,
        marker: None,
        threshold: Some((KNEE_P99_NS as f64 / 1000.0, "1 ms".into())),
        log_x,
    }))
}

/// Parses `10000,20000,50k,1.5k` into rates per second.
pub fn parse_rates(s: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (num, mult) = match part.strip_suffix(['k', 'K']) {
            Some(n) => (n, 1000.0),
            None => (part, 1.0),
        };
        let v: f64 = num
            .parse()
            .map_err(|_| format!("rate {part:?} is not a number (e.g. 20000 or 20k)"))?;
        let r = (v * mult).round();
        if !(1.0..=1e8).contains(&r) {
            return Err(format!("rate {part:?} is out of range 1..100000000"));
        }
        out.push(r as u64);
    }
    if out.is_empty() {
        return Err("no rates given".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
