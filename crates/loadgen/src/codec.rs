//! `rialto bench codec`: Rialto's FIX codec timed the way FIX Antenna's performance lab times an
//! engine (seed 002: send latency, receive latency, receive-and-send, throughput), without
//! sockets, over the `fix` crate's public API; `java/codecbench` is the QuickFIX/J side with the
//! same message contents and the same output lines.
//!
//! Figures (FIX 4.4; NewOrderSingle: limit buy of 100 ACME at 101.25, day; ExecutionReport: that
//! order filled in one trade):
//! - `send`: the message built from values (header, `fix::app::NewOrder` (with TransactTime), or
//!   `fix::app::ExecutionReport`) and serialized by `Encoder::finish` into the bytes a socket
//!   write would take;
//! - `receive`: the frame checked (BodyLength, CheckSum) and split by `Decoder::decode`, the
//!   header read (`read_header`, CompIDs checked), and every field an order path reads: a
//!   NewOrderSingle through `fix::app::NewOrderSingle::read` (as the gateway's adapter), an
//!   ExecutionReport field by field (as a client);
//! - `receive_send`: a NewOrderSingle received and the ExecutionReport answering it built from
//!   what was read and serialized;
//! - `throughput`: `receive_send` back to back for N seconds on one thread, messages/s.
//!
//! Latencies are taken between two clock reads per message (the `clock` line is what two reads
//! cost); inputs cycle through 1,024 ClOrdIDs and prebuilt frames. Validation on runs a
//! [`Validator`] on each decoded message before it is read (on each sent message's bytes,
//! decoded again, after it is built); [`validators`] says which modes Rialto's side runs.
//!
//! Never: allocates per message once warm (the encoder and decoder are reused; errors format a
//! string only when the run stops on them); panics on a message that does not read back (the
//! run stops with an error naming the figure).
//!
//! Invariants: every line is `codec impl=<rialto|quickfixj> figure=<f> msg=<m>
//! validation=<off|on>` followed by numeric `key=value` pairs ([`parse_line`] reads both sides').

use std::fmt::Write as _;
use std::hint::black_box;

use fix::app::{
    AppMessage, ExecType, ExecutionReport, InstrumentRef, Instruments, NewOrder, NewOrderSingle,
    OrdStatus,
};
use fix::{
    read_header, tags, Decimal, Decoder, Encoder, FixVersion, Header, HeaderProblem, Message,
    TimePrecision,
};
use types::{OrdType, Side, TimeInForce};

use crate::clock::mono_ns;
use crate::stats::{at, new_histogram};

/// A dictionary check run on a decoded message: `Err` with the reason stops the run.
pub type Validator = fn(&Message<'_>) -> Result<(), String>;

/// The validation modes Rialto's side runs, in order: `None` is validation off, then the
/// FIX 4.4 dictionary's validator (`fix::dict`), as a session with `validate = true` runs it.
pub fn validators() -> Vec<Option<Validator>> {
    vec![None, Some(validate_fix44)]
}

fn validate_fix44(m: &Message<'_>) -> Result<(), String> {
    fix::dict::dictionary(FixVersion::Fix44)
        .validate(m)
        .map_err(|e| e.text(m))
}

/// What one run measures.
#[derive(Clone, Copy, Debug)]
pub struct CodecBench {
    /// Timed messages per latency figure.
    pub messages: u64,
    /// Untimed messages before each figure.
    pub warmup: u64,
    /// Length of the throughput figure, seconds.
    pub seconds: f64,
}

impl Default for CodecBench {
    fn default() -> CodecBench {
        CodecBench {
            messages: 500_000,
            warmup: 200_000,
            seconds: 5.0,
        }
    }
}

const CLIENT: &[u8] = b"CLIENT1";
const EXCHANGE: &[u8] = b"RIALTO";
const BEGIN: &[u8] = b"FIX.4.4";
/// 2023-11-14 22:13:20 UTC; message i is i µs later.
const T0_NS: u64 = 1_700_000_000_000_000_000;
/// Distinct ClOrdIDs and inbound frames cycled through.
const RING: usize = 1024;
/// ClOrdID `ORD-0000001` ..: 11 bytes.
const CL_LEN: usize = 11;

/// The one instrument: ACME, prices in cents.
struct Table;

impl Table {
    fn name(&self, id: u32) -> &'static [u8] {
        match id {
            1 => b"ACME",
            _ => b"",
        }
    }
}

impl Instruments for Table {
    fn find(&self, symbol: &[u8]) -> Option<InstrumentRef> {
        (symbol == b"ACME").then_some(InstrumentRef {
            id: 1,
            decimals: 2,
            tick: 1,
        })
    }
}

fn header(sender: &'static [u8], target: &'static [u8], i: u64) -> Header<'static> {
    Header {
        sender_comp_id: sender,
        target_comp_id: target,
        msg_seq_num: i + 2,
        sending_time_ns: T0_NS + i * 1000,
        poss_dup: false,
        orig_sending_time: None,
        time_precision: TimePrecision::Millis,
    }
}

/// The fields of an order an ExecutionReport repeats.
#[derive(Clone, Copy)]
struct Fill<'a> {
    cl_ord_id: &'a [u8],
    symbol: &'a [u8],
    side: Side,
    ord_type: OrdType,
    time_in_force: TimeInForce,
    account: u32,
    /// Cents.
    price: i64,
    qty: u64,
    price_decimals: u32,
}

/// The report of `f` filled in one trade at its price.
fn write_report(enc: &mut Encoder, f: &Fill<'_>, i: u64) -> usize {
    let er = ExecutionReport {
        order_id: 1_000_000 + i,
        cl_ord_id: f.cl_ord_id,
        orig_cl_ord_id: None,
        exec_id: (5_000_000 + i, 1),
        exec_type: ExecType::Trade,
        ord_status: OrdStatus::Filled,
        account: f.account,
        symbol: f.symbol,
        side: f.side,
        ord_type: f.ord_type,
        price: f.price,
        time_in_force: f.time_in_force,
        order_qty: f.qty,
        ext: Default::default(),
        last: Some((f.price, f.qty)),
        leaves_qty: 0,
        cum_qty: f.qty,
        notional: f.price as i128 * f.qty as i128,
        price_decimals: f.price_decimals,
        text: None,
        transact_time_ns: T0_NS + i * 1000,
    };
    enc.begin(er.msg_type());
    enc.header(&header(EXCHANGE, CLIENT, i));
    er.encode_body(FixVersion::Fix44, enc);
    enc.finish(FixVersion::Fix44).len()
}

fn need<T>(v: Option<T>, tag: u32) -> Result<T, String> {
    v.ok_or_else(|| format!("tag {tag} missing or not readable"))
}

/// The codec's state across messages: one encoder, one decoder, the inputs.
struct Codec {
    enc: Encoder,
    dec: Decoder,
    /// Decodes what was sent, for validation on.
    dec_out: Decoder,
    cl_ord_ids: Vec<[u8; CL_LEN]>,
    nos_frames: Vec<Vec<u8>>,
    er_frames: Vec<Vec<u8>>,
    validator: Option<Validator>,
}

impl Codec {
    fn new() -> Result<Codec, String> {
        let mut c = Codec {
            enc: Encoder::default(),
            dec: Decoder::default(),
            dec_out: Decoder::default(),
            cl_ord_ids: (1..=RING)
                .map(|n| {
                    let mut id = *b"ORD-0000000";
                    let mut v = n;
                    for b in id[4..].iter_mut().rev() {
                        *b = b'0' + (v % 10) as u8;
                        v /= 10;
                    }
                    id
                })
                .collect(),
            nos_frames: Vec::with_capacity(RING),
            er_frames: Vec::with_capacity(RING),
            validator: None,
        };
        for i in 0..RING as u64 {
            c.send_new_order(i)?;
            c.nos_frames.push(c.enc.bytes().to_vec());
            c.send_report(i)?;
            c.er_frames.push(c.enc.bytes().to_vec());
        }
        Ok(c)
    }

    /// Runs the validator on the message just built.
    fn check_sent(&mut self) -> Result<(), String> {
        if let Some(validate) = self.validator {
            let m = self
                .dec_out
                .decode(self.enc.bytes())
                .map_err(|e| format!("sent message does not decode: {e:?}"))?;
            validate(&m)?;
        }
        Ok(())
    }

    fn send_new_order(&mut self, i: u64) -> Result<u64, String> {
        let order = NewOrder {
            cl_ord_id: &self.cl_ord_ids[i as usize % RING],
            symbol: b"ACME",
            side: Side::Buy,
            order_qty: 100,
            ord_type: OrdType::Limit,
            price: Some(Decimal::new(10125, 2)),
            time_in_force: TimeInForce::Day,
            post_only: false,
            transact_time_ns: T0_NS + i * 1000,
        };
        self.enc.begin(order.msg_type());
        self.enc.header(&header(CLIENT, EXCHANGE, i));
        order.encode_body(FixVersion::Fix44, &mut self.enc);
        let len = self.enc.finish(FixVersion::Fix44).len();
        self.check_sent()?;
        Ok(len as u64)
    }

    fn send_report(&mut self, i: u64) -> Result<u64, String> {
        let fill = Fill {
            cl_ord_id: &self.cl_ord_ids[i as usize % RING],
            symbol: b"ACME",
            side: Side::Buy,
            ord_type: OrdType::Limit,
            time_in_force: TimeInForce::Day,
            account: 1,
            price: 10125,
            qty: 100,
            price_decimals: 2,
        };
        let len = write_report(&mut self.enc, &fill, i);
        self.check_sent()?;
        Ok(len as u64)
    }

    /// A client reading its report: every field it acts on.
    fn receive_report(&mut self, i: u64) -> Result<u64, String> {
        let frame = &self.er_frames[i as usize % RING];
        let m = self
            .dec
            .decode(frame)
            .map_err(|e| format!("ExecutionReport does not decode: {e:?}"))?;
        if let Some(validate) = self.validator {
            validate(&m)?;
        }
        let h = read_header(&m, Some((BEGIN, EXCHANGE, CLIENT)));
        if h.problem != HeaderProblem::None || m.msg_type() != b"8" {
            return Err(format!("ExecutionReport header: {:?}", h.problem));
        }
        let len = |tag| need(m.get(tag), tag).map(|v| v.len() as u64);
        let char_of = |tag| need(m.get_char(tag).ok().flatten(), tag).map(u64::from);
        let u64_of = |tag| need(m.get_u64(tag).ok().flatten(), tag);
        let dec_of = |tag| need(m.get_decimal(tag).ok().flatten(), tag).map(|d| d.mantissa as u64);
        Ok(h.msg_seq_num
            + h.sending_time_ns
            + len(tags::ORDER_ID)?
            + len(tags::CL_ORD_ID)?
            + len(tags::EXEC_ID)?
            + char_of(tags::EXEC_TYPE)?
            + char_of(tags::ORD_STATUS)?
            + len(tags::SYMBOL)?
            + char_of(tags::SIDE)?
            + dec_of(tags::LAST_PX)?
            + u64_of(tags::LAST_QTY)?
            + u64_of(tags::LEAVES_QTY)?
            + u64_of(tags::CUM_QTY)?
            + dec_of(tags::AVG_PX)?
            + need(
                m.get_timestamp(tags::TRANSACT_TIME).ok().flatten(),
                tags::TRANSACT_TIME,
            )?)
    }

    /// The exchange reading an order, as the gateway's adapter does; with `answer`, the
    /// ExecutionReport filling it is built and serialized.
    fn receive_order(&mut self, i: u64, answer: bool) -> Result<u64, String> {
        let frame = &self.nos_frames[i as usize % RING];
        let m = self
            .dec
            .decode(frame)
            .map_err(|e| format!("NewOrderSingle does not decode: {e:?}"))?;
        if let Some(validate) = self.validator {
            validate(&m)?;
        }
        let h = read_header(&m, Some((BEGIN, CLIENT, EXCHANGE)));
        if h.problem != HeaderProblem::None || m.msg_type() != b"D" {
            return Err(format!("NewOrderSingle header: {:?}", h.problem));
        }
        let o = NewOrderSingle::read(&m, &Table).map_err(|r| r.text)?;
        if !answer {
            return Ok(h.msg_seq_num
                + o.cl_ord_id.len() as u64
                + o.price as u64
                + o.order_qty
                + o.time_in_force as u64
                + o.post_only as u64);
        }
        let fill = Fill {
            cl_ord_id: o.cl_ord_id,
            symbol: Table.name(o.symbol.id),
            side: o.side,
            ord_type: o.ord_type,
            time_in_force: o.time_in_force,
            account: o.account.unwrap_or(1),
            price: o.price,
            qty: o.order_qty,
            price_decimals: o.symbol.decimals,
        };
        let len = write_report(&mut self.enc, &fill, i);
        self.check_sent()?;
        Ok(len as u64)
    }
}

/// What one figure measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Measure {
    Latency {
        count: u64,
        p50_ns: u64,
        p99_ns: u64,
        p999_ns: u64,
        max_ns: u64,
        mean_ns: f64,
    },
    Throughput {
        count: u64,
        seconds: f64,
        mean_ns: f64,
        msgs_per_s: f64,
    },
}

/// One output line of Rialto's side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figure {
    pub figure: &'static str,
    pub msg: &'static str,
    pub validation: bool,
    pub measure: Measure,
}

impl Figure {
    /// The line as both sides print it.
    pub fn line(&self) -> String {
        let mut s = format!(
            "codec impl=rialto figure={} msg={} validation={}",
            self.figure,
            self.msg,
            if self.validation { "on" } else { "off" }
        );
        match self.measure {
            Measure::Latency {
                count,
                p50_ns,
                p99_ns,
                p999_ns,
                max_ns,
                mean_ns,
            } => write!(
                s,
                " count={count} p50_ns={p50_ns} p99_ns={p99_ns} p999_ns={p999_ns} max_ns={max_ns} mean_ns={mean_ns:.1}"
            ),
            Measure::Throughput {
                count,
                seconds,
                mean_ns,
                msgs_per_s,
            } => write!(
                s,
                " count={count} seconds={seconds:.3} mean_ns={mean_ns:.1} msgs_per_s={msgs_per_s:.0}"
            ),
        }
        .expect("writing to a String");
        s
    }
}

/// `warmup` + `n` calls of `f`, each between two clock reads; the last `n` recorded.
fn latency(
    c: &mut Codec,
    cfg: &CodecBench,
    check: &mut u64,
    mut f: impl FnMut(&mut Codec, u64) -> Result<u64, String>,
) -> Result<Measure, String> {
    let mut h = new_histogram();
    let mut total = 0u64;
    for i in 0..cfg.warmup + cfg.messages {
        let t0 = mono_ns();
        let v = f(c, black_box(i))?;
        let dt = mono_ns().saturating_sub(t0);
        *check = check.wrapping_add(black_box(v));
        if i >= cfg.warmup {
            h.saturating_record(dt.max(1));
            total += dt;
        }
    }
    Ok(Measure::Latency {
        count: cfg.messages,
        p50_ns: at(&h, 50.0),
        p99_ns: at(&h, 99.0),
        p999_ns: at(&h, 99.9),
        max_ns: h.max(),
        mean_ns: total as f64 / cfg.messages as f64,
    })
}

/// `receive_send` back to back for `seconds` after the warm-up; the clock read every 256.
fn throughput(c: &mut Codec, cfg: &CodecBench, check: &mut u64) -> Result<Measure, String> {
    for i in 0..cfg.warmup {
        *check = check.wrapping_add(c.receive_order(i, true)?);
    }
    let limit = (cfg.seconds * 1e9) as u64;
    let t0 = mono_ns();
    let mut n = 0u64;
    let elapsed = loop {
        for _ in 0..256 {
            *check = check.wrapping_add(c.receive_order(black_box(n), true)?);
            n += 1;
        }
        let e = mono_ns().saturating_sub(t0);
        if e >= limit {
            break e.max(1);
        }
    };
    Ok(Measure::Throughput {
        count: n,
        seconds: elapsed as f64 / 1e9,
        mean_ns: elapsed as f64 / n as f64,
        msgs_per_s: n as f64 * 1e9 / elapsed as f64,
    })
}

/// Runs every figure: the clock, then each mode of `modes` (`None`: validation off) in turn.
/// `on_line` gets each figure as it is measured. Returns the check sum of the values read.
pub fn run_codec(
    cfg: &CodecBench,
    modes: &[Option<Validator>],
    mut on_line: impl FnMut(&Figure),
) -> Result<u64, String> {
    if cfg.messages == 0 || !(cfg.seconds > 0.0 && cfg.seconds <= 3600.0) {
        return Err("messages must be at least 1 and seconds in (0, 3600]".into());
    }
    let mut c = Codec::new()?;
    let mut check = 0u64;
    let measure = latency(&mut c, cfg, &mut check, |_, i| Ok(i))?;
    on_line(&Figure {
        figure: "clock",
        msg: "none",
        validation: false,
        measure,
    });
    for &mode in modes {
        c.validator = mode;
        let validation = mode.is_some();
        let mut emit = |figure, msg, measure| {
            on_line(&Figure {
                figure,
                msg,
                validation,
                measure,
            })
        };
        let at = |figure: &str, e: String| format!("{figure}: {e}");
        let m =
            latency(&mut c, cfg, &mut check, Codec::send_new_order).map_err(|e| at("send", e))?;
        emit("send", "NewOrderSingle", m);
        let m = latency(&mut c, cfg, &mut check, Codec::send_report).map_err(|e| at("send", e))?;
        emit("send", "ExecutionReport", m);
        let m = latency(&mut c, cfg, &mut check, Codec::receive_report)
            .map_err(|e| at("receive", e))?;
        emit("receive", "ExecutionReport", m);
        let m = latency(&mut c, cfg, &mut check, |c, i| c.receive_order(i, false))
            .map_err(|e| at("receive", e))?;
        emit("receive", "NewOrderSingle", m);
        let m = latency(&mut c, cfg, &mut check, |c, i| c.receive_order(i, true))
            .map_err(|e| at("receive_send", e))?;
        emit("receive_send", "NewOrderSingle>ExecutionReport", m);
        let m = throughput(&mut c, cfg, &mut check).map_err(|e| at("throughput", e))?;
        emit("throughput", "NewOrderSingle>ExecutionReport", m);
    }
    Ok(check)
}

/// The NewOrderSingle and the ExecutionReport of message 0, SOH shown as `|`.
pub fn sample_messages() -> Result<[String; 2], String> {
    let c = Codec::new()?;
    let show = |b: &[u8]| String::from_utf8_lossy(b).replace('\x01', "|");
    Ok([show(&c.nos_frames[0]), show(&c.er_frames[0])])
}

/// One line of either side, read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub implementation: String,
    pub figure: String,
    pub msg: String,
    pub validation: String,
    pub values: Vec<(String, f64)>,
}

impl Line {
    /// The figure's identity across implementations.
    pub fn key(&self) -> (String, String, String) {
        (
            self.figure.clone(),
            self.msg.clone(),
            self.validation.clone(),
        )
    }
    pub fn get(&self, key: &str) -> Option<f64> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// Reads a `codec impl=...` line; `None` for any other line.
pub fn parse_line(line: &str) -> Option<Result<Line, String>> {
    let rest = line.trim().strip_prefix("codec ")?;
    let mut words = rest.split_whitespace();
    let mut named = |name: &str| -> Result<String, String> {
        let w = words.next().unwrap_or_default();
        w.strip_prefix(name)
            .and_then(|v| v.strip_prefix('='))
            .map(str::to_string)
            .ok_or_else(|| format!("{line:?}: {name}= expected, found {w:?}"))
    };
    let head = (|| {
        Ok::<_, String>((
            named("impl")?,
            named("figure")?,
            named("msg")?,
            named("validation")?,
        ))
    })();
    let (implementation, figure, msg, validation) = match head {
        Ok(h) => h,
        Err(e) => return Some(Err(e)),
    };
    let values = match crate::stats::parse_summary_line(&words.collect::<Vec<_>>().join(" ")) {
        Ok(v) => v,
        Err(e) => return Some(Err(format!("{line:?}: {e}"))),
    };
    Some(Ok(Line {
        implementation,
        figure,
        msg,
        validation,
        values,
    }))
}

/// The median of each key over the lines of one figure of one implementation (the upper middle
/// of an even count).
pub fn median_line(lines: &[&Line]) -> Option<Line> {
    let first = lines.first()?;
    let values = first
        .values
        .iter()
        .map(|(k, _)| {
            let mut vs: Vec<f64> = lines.iter().filter_map(|l| l.get(k)).collect();
            vs.sort_by(|a, b| a.total_cmp(b));
            (k.clone(), vs[vs.len() / 2])
        })
        .collect();
    Some(Line {
        values,
        ..(*first).clone()
    })
}

/// Medians per figure and implementation, and for each figure both measured (the clock aside)
/// the ratio QuickFIX/J over Rialto (latencies: how many times longer; throughput: how many
/// times fewer messages/s), one `codec-ratio` line each, in the order the figures first appear.
pub fn compare(lines: &[Line]) -> Vec<String> {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for l in lines {
        if !keys.contains(&l.key()) {
            keys.push(l.key());
        }
    }
    let median = |implementation: &str, key: &(String, String, String)| {
        let of: Vec<&Line> = lines
            .iter()
            .filter(|l| l.implementation == implementation && &l.key() == key)
            .collect();
        median_line(&of)
    };
    let mut out = Vec::new();
    for key in keys.iter().filter(|k| k.0 != "clock") {
        let (Some(r), Some(q)) = (median("rialto", key), median("quickfixj", key)) else {
            continue;
        };
        let mut s = format!(
            "codec-ratio figure={} msg={} validation={}",
            key.0, key.1, key.2
        );
        let pairs: &[(&str, bool)] = if key.0 == "throughput" {
            &[("msgs_per_s", false), ("mean_ns", true)]
        } else {
            &[("p50_ns", true), ("p99_ns", true), ("mean_ns", true)]
        };
        for &(k, lower_is_better) in pairs {
            if let (Some(rv), Some(qv)) = (r.get(k), q.get(k)) {
                let ratio = if lower_is_better { qv / rv } else { rv / qv };
                let _ = write!(
                    s,
                    " rialto_{k}={rv} quickfixj_{k}={qv} ratio_{k}={ratio:.1}"
                );
            }
        }
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests;
