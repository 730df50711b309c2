//! Scenario files: matching behaviour written as one command per line with its expected events
//! inline, runnable against any [`Inspect`] matcher (the reference and the engine).
//!
//! Role: the readable specification. A reader sees what each rule does without reading code.
//!
//! Never: panics on a malformed file (every error names the file, the line and the problem).
//!
//! # Format (`crates/model/scenarios/*.scn`)
//! ```text
//! # a comment (whole lines only)
//! instruments ACME, BETA tick=5 lot=10     symbol id 0 = ACME, 1 = BETA; default tick 1 lot 1
//! scenario partial fill keeps priority     starts a fresh matcher; Level events off
//! N 1 a1 ACME B L GTC 10@100   -> accepted 1
//! N 2 a2 ACME S L IOC 4@100    -> accepted 2; trade 4@100 maker=1 taker=2
//! book ACME bids 1:6@100 asks              resting orders, priority order, id:qty@price
//! ```
//! Commands (a symbol is a name from `instruments` or `#N`, a raw symbol id):
//! - `N id aACCT SYM B|S L|M|P GTC|DAY|IOC|FOK|GTD QTY[@PRICE] [OPTION...]` new order; `L`
//!   limit, `M` market (price optional, default 0), `P` post-only limit. Options, in any order:
//!   `stp=none|cancel_newest|cancel_oldest|cancel_both`, `stop=PRICE` (a stop or stop-limit
//!   order), `display=QTY` (an iceberg's peak), `expire=NS` (a GTD order's expire time).
//! - `C id aACCT SYM` cancel. `R id aACCT SYM QTY@PRICE` replace.
//! - `MC aACCT [SYM|*] [B|S]` mass cancel. `EXPIRE [SYM]` end of day. `CLOCK NS` the journaled
//!   clock reached NS (expires GTD orders). `CALL SYM` starts a call auction;
//!   `UNCROSS SYM [REF]` ends it (reference price REF, default 0: none).
//!
//! After `->` come the expected events, separated by `;` (`-> none` for no events). An
//! indented line continues the previous command's events. Events are written as:
//! `accepted ID`, `rejected ID REASON` (`invalid(qty)`, `duplicate_id`, `unknown_order`,
//! `post_only_would_cross`, `auction_call`, ...), `trade QTY@PRICE maker=ID taker=ID`,
//! `canceled ID REASON QTY`, `replaced ID QTY@PRICE kept|lost`, `mass_canceled aACCT COUNT`,
//! `triggered ID QTY@PRICE` (price 0 for a stop market order), `uncrossed SYM QTY@PRICE`,
//! `level SYM B|S QTY@PRICE n=ORDERS`. `Level` events are left out of the comparison unless the
//! scenario says `levels on` (until `levels off`).

use std::fmt::Write as _;

use types::{
    Command, Event, Instrument, Matcher, NewOrder, OrdType, RejectReason, Side, StpMode, Symbol,
    SymbolId, TimeInForce,
};

use crate::audit::{Auditor, RestingView};
use crate::reference::Reference;

/// A matcher whose book the scenario runner can look at.
pub trait Inspect: Matcher {
    /// One side's resting orders in priority order: `(id, price, qty)`.
    fn resting_view(&self, symbol: SymbolId, side: Side) -> Vec<RestingView>;
    /// The matcher's own invariant check.
    fn check(&self) -> Result<(), String>;
}

impl Inspect for Reference {
    fn resting_view(&self, symbol: SymbolId, side: Side) -> Vec<RestingView> {
        self.resting(symbol, side)
            .iter()
            .map(|o| (o.id, o.price, o.qty))
            .collect()
    }
    fn check(&self) -> Result<(), String> {
        self.check_invariants()
    }
}

/// One checked line of a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Apply `cmd` and compare the events (rendered) with `expect`.
    Command {
        line: usize,
        cmd: Command,
        expect: Vec<String>,
        levels: bool,
    },
    /// Compare one book with the listed resting orders.
    Book {
        line: usize,
        symbol: SymbolId,
        bids: Vec<RestingView>,
        asks: Vec<RestingView>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    pub name: String,
    pub line: usize,
    pub instruments: Vec<Instrument>,
    pub steps: Vec<Step>,
}

/// Renders one event the way scenario files write it.
pub fn render_event(event: &Event, instruments: &[Instrument]) -> String {
    let sym = |s: SymbolId| match instruments.get(s as usize) {
        Some(i) => i.symbol.to_string(),
        None => format!("#{s}"),
    };
    match *event {
        Event::Accepted { id, .. } => format!("accepted {id}"),
        Event::Rejected { id, reason } => match reason {
            RejectReason::Invalid(f) => format!("rejected {id} invalid({})", f.as_str()),
            r => format!("rejected {id} {}", r.as_str()),
        },
        Event::Trade {
            price,
            qty,
            maker_id,
            taker_id,
            ..
        } => format!("trade {qty}@{price} maker={maker_id} taker={taker_id}"),
        Event::Canceled {
            id, reason, qty, ..
        } => format!("canceled {id} {} {qty}", reason.as_str()),
        Event::Replaced {
            id,
            price,
            qty,
            lost_priority,
            ..
        } => format!(
            "replaced {id} {qty}@{price} {}",
            if lost_priority { "lost" } else { "kept" }
        ),
        Event::MassCanceled { account, count } => format!("mass_canceled a{account} {count}"),
        Event::Triggered { id, price, qty, .. } => format!("triggered {id} {qty}@{price}"),
        Event::Uncrossed { symbol, price, qty } => {
            format!("uncrossed {} {qty}@{price}", sym(symbol))
        }
        Event::Level {
            symbol,
            side,
            price,
            qty,
            orders,
        } => format!(
            "level {} {} {qty}@{price} n={orders}",
            sym(symbol),
            side.as_char()
        ),
    }
}

fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn parse_expect(text: &str) -> Vec<String> {
    let t = normalize(text);
    if t == "none" || t.is_empty() {
        return Vec::new();
    }
    t.split(';')
        .map(normalize)
        .filter(|s| !s.is_empty())
        .collect()
}

struct Parser<'a> {
    path: &'a str,
    line: usize,
    instruments: Vec<Instrument>,
}

impl Parser<'_> {
    fn err(&self, msg: impl std::fmt::Display) -> String {
        format!("{}:{}: {msg}", self.path, self.line)
    }

    fn num<T: std::str::FromStr>(&self, tok: &str, what: &str) -> Result<T, String> {
        tok.parse()
            .map_err(|_| self.err(format!("{what}: expected a number, got `{tok}`")))
    }

    fn symbol(&self, tok: &str) -> Result<SymbolId, String> {
        if let Some(raw) = tok.strip_prefix('#') {
            return self.num(raw, "symbol id");
        }
        self.instruments
            .iter()
            .position(|i| i.symbol.as_str() == tok)
            .map(|p| p as SymbolId)
            .ok_or_else(|| {
                self.err(format!(
                    "unknown symbol `{tok}` (declare it with `instruments`)"
                ))
            })
    }

    fn account(&self, tok: &str) -> Result<u32, String> {
        match tok.strip_prefix('a') {
            Some(n) => self.num(n, "account"),
            None => Err(self.err(format!("account: expected aN, got `{tok}`"))),
        }
    }

    fn side(&self, tok: &str) -> Result<Side, String> {
        match tok {
            "B" => Ok(Side::Buy),
            "S" => Ok(Side::Sell),
            _ => Err(self.err(format!("side: expected B or S, got `{tok}`"))),
        }
    }

    /// `QTY@PRICE` (price optional when `price_required` is false).
    fn qty_price(&self, tok: &str, price_required: bool) -> Result<(u64, i64), String> {
        match tok.split_once('@') {
            Some((q, p)) => Ok((self.num(q, "qty")?, self.num(p, "price")?)),
            None if !price_required => Ok((self.num(tok, "qty")?, 0)),
            None => Err(self.err(format!("expected QTY@PRICE, got `{tok}`"))),
        }
    }

    fn instruments(&self, rest: &str) -> Result<Vec<Instrument>, String> {
        let mut out = Vec::new();
        for part in rest.split(',') {
            let mut toks = part.split_whitespace();
            let name = toks
                .next()
                .ok_or_else(|| self.err("instruments: empty entry"))?;
            let symbol = Symbol::new(name)
                .ok_or_else(|| self.err(format!("instruments: bad symbol `{name}`")))?;
            let mut inst = Instrument {
                symbol,
                tick: 1,
                lot: 1,
            };
            for t in toks {
                match t.split_once('=') {
                    Some(("tick", v)) => inst.tick = self.num(v, "tick")?,
                    Some(("lot", v)) => inst.lot = self.num(v, "lot")?,
                    _ => {
                        return Err(
                            self.err(format!("instruments: expected tick=N or lot=N, got `{t}`"))
                        )
                    }
                }
            }
            if inst.tick < 1 || inst.lot < 1 {
                return Err(self.err("instruments: tick and lot must be >= 1"));
            }
            out.push(inst);
        }
        Ok(out)
    }

    fn command(&self, toks: &[&str]) -> Result<Command, String> {
        let arity = |n: std::ops::RangeInclusive<usize>| {
            if n.contains(&toks.len()) {
                Ok(())
            } else {
                Err(self.err(format!(
                    "`{}` takes {} to {} words, got {}",
                    toks[0],
                    n.start(),
                    n.end(),
                    toks.len()
                )))
            }
        };
        match toks[0] {
            "N" => {
                arity(8..=12)?;
                let (ord_type, post_only) = match toks[5] {
                    "L" => (OrdType::Limit, false),
                    "M" => (OrdType::Market, false),
                    "P" => (OrdType::Limit, true),
                    t => return Err(self.err(format!("type: expected L, M or P, got `{t}`"))),
                };
                let tif = match toks[6] {
                    "GTC" => TimeInForce::Gtc,
                    "DAY" => TimeInForce::Day,
                    "IOC" => TimeInForce::Ioc,
                    "FOK" => TimeInForce::Fok,
                    "GTD" => TimeInForce::Gtd,
                    t => {
                        return Err(self.err(format!(
                            "tif: expected GTC, DAY, IOC, FOK or GTD, got `{t}`"
                        )))
                    }
                };
                let (qty, price) = self.qty_price(toks[7], ord_type == OrdType::Limit)?;
                let mut order = NewOrder {
                    id: self.num(toks[1], "id")?,
                    account: self.account(toks[2])?,
                    symbol: self.symbol(toks[3])?,
                    side: self.side(toks[4])?,
                    ord_type,
                    tif,
                    price,
                    qty,
                    post_only,
                    ..Default::default()
                };
                for t in &toks[8..] {
                    match t.split_once('=') {
                        Some(("stp", mode)) => {
                            order.stp = match mode {
                                "none" => StpMode::None,
                                "cancel_newest" => StpMode::CancelNewest,
                                "cancel_oldest" => StpMode::CancelOldest,
                                "cancel_both" => StpMode::CancelBoth,
                                _ => return Err(self.err(format!("expected stp=MODE, got `{t}`"))),
                            }
                        }
                        Some(("stop", v)) => order.stop_price = self.num(v, "stop")?,
                        Some(("display", v)) => order.display_qty = self.num(v, "display")?,
                        Some(("expire", v)) => order.expire_ns = self.num(v, "expire")?,
                        _ => {
                            return Err(self.err(format!(
                                "expected stp=MODE, stop=PRICE, display=QTY or expire=NS, got `{t}`"
                            )))
                        }
                    }
                }
                Ok(Command::New(order))
            }
            "C" => {
                arity(4..=4)?;
                Ok(Command::Cancel {
                    id: self.num(toks[1], "id")?,
                    account: self.account(toks[2])?,
                    symbol: self.symbol(toks[3])?,
                })
            }
            "R" => {
                arity(5..=5)?;
                let (qty, price) = self.qty_price(toks[4], true)?;
                Ok(Command::Replace {
                    id: self.num(toks[1], "id")?,
                    account: self.account(toks[2])?,
                    symbol: self.symbol(toks[3])?,
                    price,
                    qty,
                })
            }
            "MC" => {
                arity(2..=4)?;
                let symbol = match toks.get(2) {
                    None | Some(&"*") => None,
                    Some(t) => Some(self.symbol(t)?),
                };
                let side = toks.get(3).map(|t| self.side(t)).transpose()?;
                Ok(Command::MassCancel {
                    account: self.account(toks[1])?,
                    symbol,
                    side,
                })
            }
            "EXPIRE" => {
                arity(1..=2)?;
                let symbol = toks.get(1).map(|t| self.symbol(t)).transpose()?;
                Ok(Command::ExpireDay { symbol })
            }
            "CLOCK" => {
                arity(2..=2)?;
                Ok(Command::Expire {
                    now_ns: self.num(toks[1], "clock")?,
                })
            }
            "CALL" => {
                arity(2..=2)?;
                Ok(Command::CallStart {
                    symbol: self.symbol(toks[1])?,
                })
            }
            "UNCROSS" => {
                arity(2..=3)?;
                let reference = match toks.get(2) {
                    Some(t) => self.num(t, "reference")?,
                    None => 0,
                };
                Ok(Command::Uncross {
                    symbol: self.symbol(toks[1])?,
                    reference,
                })
            }
            w => Err(self.err(format!("unknown command or directive `{w}`"))),
        }
    }

    fn book_entries(&self, toks: &[&str]) -> Result<Vec<RestingView>, String> {
        toks.iter()
            .map(|t| {
                let (id, rest) = t
                    .split_once(':')
                    .ok_or_else(|| self.err(format!("book: expected ID:QTY@PRICE, got `{t}`")))?;
                let (qty, price) = self.qty_price(rest, true)?;
                Ok((self.num(id, "id")?, price, qty))
            })
            .collect()
    }
}

/// Parses a scenario file; `path` is only used in error messages.
pub fn parse(path: &str, text: &str) -> Result<Vec<Scenario>, String> {
    let mut p = Parser {
        path,
        line: 0,
        instruments: Vec::new(),
    };
    let mut scenarios: Vec<Scenario> = Vec::new();
    let mut levels = false;
    for (i, raw) in text.lines().enumerate() {
        p.line = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if raw.starts_with(char::is_whitespace) {
            match scenarios.last_mut().and_then(|s| s.steps.last_mut()) {
                Some(Step::Command { expect, .. }) => {
                    expect.extend(parse_expect(line.trim_start_matches(';')));
                    continue;
                }
                _ => return Err(p.err("indented line does not follow a command")),
            }
        }
        let (head, expect) = match line.split_once("->") {
            Some((h, e)) => (h, Some(e)),
            None => (line, None),
        };
        let toks: Vec<&str> = head.split_whitespace().collect();
        let Some(&first) = toks.first() else {
            return Err(p.err("events without a command"));
        };
        match first {
            "instruments" => {
                if !scenarios.is_empty() {
                    return Err(p.err("`instruments` must come before the first scenario"));
                }
                p.instruments = p.instruments(head["instruments".len()..].trim())?;
            }
            "scenario" => {
                if p.instruments.is_empty() {
                    return Err(p.err("declare `instruments` before the first scenario"));
                }
                let name = head["scenario".len()..].trim();
                if name.is_empty() {
                    return Err(p.err("a scenario needs a name"));
                }
                levels = false;
                scenarios.push(Scenario {
                    name: name.to_string(),
                    line: p.line,
                    instruments: p.instruments.clone(),
                    steps: Vec::new(),
                });
            }
            word => {
                let Some(current) = scenarios.last_mut() else {
                    return Err(p.err(format!("`{word}` before the first `scenario` line")));
                };
                match word {
                    "levels" => {
                        levels = match toks.get(1) {
                            Some(&"on") if toks.len() == 2 => true,
                            Some(&"off") if toks.len() == 2 => false,
                            _ => return Err(p.err("expected `levels on` or `levels off`")),
                        }
                    }
                    "book" => {
                        let bids_at = toks.iter().position(|t| *t == "bids");
                        let asks_at = toks.iter().position(|t| *t == "asks");
                        let (Some(b), Some(a)) = (bids_at, asks_at) else {
                            return Err(p.err("book: expected `book SYM bids ... asks ...`"));
                        };
                        if toks.len() < 2 || b != 2 || a < b {
                            return Err(p.err("book: expected `book SYM bids ... asks ...`"));
                        }
                        let step = Step::Book {
                            line: p.line,
                            symbol: p.symbol(toks[1])?,
                            bids: p.book_entries(&toks[b + 1..a])?,
                            asks: p.book_entries(&toks[a + 1..])?,
                        };
                        current.steps.push(step);
                    }
                    _ => {
                        let Some(expect) = expect else {
                            return Err(p.err("a command needs `-> events` (or `-> none`)"));
                        };
                        let step = Step::Command {
                            line: p.line,
                            cmd: p.command(&toks)?,
                            expect: parse_expect(expect),
                            levels,
                        };
                        current.steps.push(step);
                    }
                }
            }
        }
    }
    if scenarios.is_empty() {
        return Err(format!("{path}: no scenarios"));
    }
    Ok(scenarios)
}

/// What a run checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub scenarios: usize,
    pub commands: usize,
    pub books: usize,
}

fn show(list: &[String]) -> String {
    if list.is_empty() {
        "none".to_string()
    } else {
        list.join("; ")
    }
}

fn show_book(v: &[RestingView]) -> String {
    v.iter()
        .map(|(id, price, qty)| format!("{id}:{qty}@{price}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs scenarios against matchers made by `make`. After every command it also checks the
/// matcher's own invariants and the [`Auditor`]'s view of its book.
pub fn run<M: Inspect>(
    path: &str,
    scenarios: &[Scenario],
    make: impl Fn(&[Instrument]) -> M,
) -> Result<Outcome, String> {
    let mut out = Outcome::default();
    for sc in scenarios {
        out.scenarios += 1;
        let mut m = make(&sc.instruments);
        let mut audit = Auditor::new();
        let symbols = sc.instruments.len() as SymbolId;
        let ctx = |line: usize| format!("{path}:{line}: scenario `{}`", sc.name);
        for step in &sc.steps {
            match step {
                Step::Command {
                    line,
                    cmd,
                    expect,
                    levels,
                } => {
                    out.commands += 1;
                    let mut events: Vec<Event> = Vec::new();
                    m.apply(cmd, &mut events);
                    audit
                        .on_command(cmd, &events)
                        .and_then(|()| audit.check_book(symbols, |s, d| m.resting_view(s, d)))
                        .and_then(|()| m.check())
                        .map_err(|e| format!("{}: invariant broken: {e}", ctx(*line)))?;
                    let got: Vec<String> = events
                        .iter()
                        .filter(|e| *levels || !matches!(e, Event::Level { .. }))
                        .map(|e| render_event(e, &sc.instruments))
                        .collect();
                    if got != *expect {
                        let mut msg = format!(
                            "{}: events differ\n  expected: {}\n  got:      {}",
                            ctx(*line),
                            show(expect),
                            show(&got)
                        );
                        let _ = write!(msg, "\n  (all events: {:?})", events);
                        return Err(msg);
                    }
                }
                Step::Book {
                    line,
                    symbol,
                    bids,
                    asks,
                } => {
                    out.books += 1;
                    for (side, want) in [(Side::Buy, bids), (Side::Sell, asks)] {
                        let got = m.resting_view(*symbol, side);
                        if got != *want {
                            return Err(format!(
                                "{}: {side:?} side differs\n  expected: {}\n  got:      {}",
                                ctx(*line),
                                show_book(want),
                                show_book(&got)
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
