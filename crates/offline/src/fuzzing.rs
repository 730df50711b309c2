//! The bodies of the fuzz targets (`fuzz/fuzz_targets/*.rs` are one-line wrappers), so that
//! the regression tests run exactly what the fuzzer ran.
//!
//! - `check_csv`: arbitrary bytes into the order and instruments readers: never panics, every
//!   error names a line that exists, every command read is written back by `push_command` to a
//!   line that reads as the same command.
//! - `check_engine`: arbitrary bytes decoded into commands, applied to the engine and to the
//!   naive reference model: identical events after every command, invariants of both after
//!   every command, identical books at the end.
//!
//! Role: maps every byte string to a valid-typed `Command` sequence that stays in a small space
//! (few ids, accounts, symbols and prices) so collisions, crosses, STP and replaces are common.
//! Some fields deliberately go out of range (zero quantity, non-positive price, off-grid values)
//! so validation is exercised too.
//!
//! Never: panics; reads past the input (missing bytes read as zero).
//!
//! Encoding: each command takes 8 bytes `[op, id, acct, sym_side, kind, price, qty, extra]`.
//! A new order's `extra` bits 1-2 make it a stop (price `extra >> 3` ticks from 90), an iceberg
//! (peak `extra >> 3` lots) or GTD (expiring at `extra >> 3` ns); the last op makes, besides
//! mass cancels and end-of-day expiries, `Expire`, `CallStart` and `Uncross` commands.

use crate::instruments_csv::read_instruments;
use crate::orders_csv::{parse_record, push_command, quote, CsvError, OrderReader};
use crate::symbols::SymbolTable;
use types::{
    Command, Event, Instrument, Matcher, NewOrder, OrdType, Side, StpMode, Symbol, SymbolId,
    TimeInForce,
};

/// Most commands one input may decode to (keeps each fuzz iteration short).
pub const COMMANDS_MAX: usize = 512;

/// Feeds `data` to the order reader and to the instruments reader. Errs if an error names a
/// line outside the input; panics only if a reader panics.
pub fn check_csv(data: &[u8]) -> Result<(), String> {
    let lines = data.split(|&b| b == b'\n').count() as u64;
    let check_line = |e: &CsvError| -> Result<(), String> {
        if e.line == 0 || e.line > lines.max(1) {
            return Err(format!("error names line {} of {lines}: {e}", e.line));
        }
        if !e.to_string().starts_with(&format!("line {}: ", e.line)) {
            return Err(format!("error does not start with its line: {e}"));
        }
        Ok(())
    };
    let mut symbols = SymbolTable::new();
    let mut line = Vec::new();
    match OrderReader::new(data) {
        Ok(mut reader) => loop {
            match reader.next_command(&mut symbols) {
                Ok(Some(cmd)) => {
                    // Every command read writes back to a line that reads as the same command.
                    line.clear();
                    if push_command(&mut line, &cmd, &symbols) {
                        line.pop();
                        let again = parse_record(&line, 2, 10, &mut symbols)
                            .map_err(|e| format!("{cmd:?} wrote {:?}: {e}", quote(&line)))?;
                        if again != cmd {
                            return Err(format!("{cmd:?} read back as {again:?}"));
                        }
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    check_line(&e)?;
                    break;
                }
            }
        },
        Err(e) => check_line(&e)?,
    }
    let mut symbols = SymbolTable::new();
    if let Err(e) = read_instruments(data, &mut symbols) {
        check_line(&e)?;
    }
    Ok(())
}

/// An engine configuration small enough to build once per fuzz input, and large enough that the
/// decoded commands (at most 48 live ids, prices within 20 ticks) never hit a capacity limit.
// The struct update keeps this compiling when the engine grows a configuration field.
#[allow(clippy::needless_update)]
pub fn small_engine_config() -> engine::EngineConfig {
    engine::EngineConfig {
        orders_max: 256,
        levels_initial: 64,
        levels_max: 1 << 12,
        ids_direct: 64,
        ids_hashed_initial: 16,
        ..engine::EngineConfig::default()
    }
}

/// Decodes `data` and runs it through the engine and the reference model in lockstep.
pub fn check_engine(data: &[u8]) -> Result<(), String> {
    let instruments = instruments();
    let mut fast = engine::Engine::try_new(&instruments, small_engine_config())
        .map_err(|e| format!("engine config: {e}"))?;
    let mut naive = model::Reference::new(&instruments);
    let mut fast_events: Vec<Event> = Vec::with_capacity(64);
    let mut naive_events: Vec<Event> = Vec::with_capacity(64);
    let commands = decode(data);
    for (n, cmd) in commands.iter().take(COMMANDS_MAX).enumerate() {
        fast_events.clear();
        naive_events.clear();
        fast.apply(cmd, &mut fast_events);
        naive.apply(cmd, &mut naive_events);
        if fast_events != naive_events {
            return Err(format!(
                "command {n} {cmd:?}:\n engine    {fast_events:?}\n reference {naive_events:?}"
            ));
        }
        fast.check_invariants()
            .map_err(|e| format!("command {n} {cmd:?}: engine invariant: {e}"))?;
        naive
            .check_invariants()
            .map_err(|e| format!("command {n} {cmd:?}: reference invariant: {e}"))?;
    }
    for symbol in 0..instruments.len() as SymbolId {
        for side in [Side::Buy, Side::Sell] {
            let a: Vec<(u64, i64, u64)> = fast
                .resting(symbol, side)
                .map(|o| (o.id, o.price, o.qty))
                .collect();
            let b: Vec<(u64, i64, u64)> = naive
                .resting(symbol, side)
                .iter()
                .map(|o| (o.id, o.price, o.qty))
                .collect();
            if a != b {
                return Err(format!(
                    "books differ on symbol {symbol} {side:?}: engine {a:?}, reference {b:?}"
                ));
            }
        }
        let a: Vec<(u64, u64)> = fast
            .pending_stops(symbol)
            .iter()
            .map(|o| (o.id, o.qty))
            .collect();
        let b: Vec<(u64, u64)> = naive
            .pending_stops(symbol)
            .iter()
            .map(|o| (o.id, o.qty))
            .collect();
        if a != b {
            return Err(format!(
                "pending stops differ on symbol {symbol}: engine {a:?}, reference {b:?}"
            ));
        }
    }
    Ok(())
}

/// The instruments the decoded commands refer to: `A` (tick 1, lot 1) and `B` (tick 5, lot 10).
pub fn instruments() -> Vec<Instrument> {
    vec![
        Instrument {
            symbol: Symbol::new("A").expect("valid symbol"),
            tick: 1,
            lot: 1,
        },
        Instrument {
            symbol: Symbol::new("B").expect("valid symbol"),
            tick: 5,
            lot: 10,
        },
    ]
}

/// Decodes `data` into commands (8 bytes each; a short tail is zero-padded). Callers cap the
/// count at `COMMANDS_MAX`. Callers cap the
/// count at `COMMANDS_MAX`.
pub fn decode(data: &[u8]) -> Vec<Command> {
    data.chunks(8)
        .map(|chunk| {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            decode_one(b)
        })
        .collect()
}

fn decode_one(b: [u8; 8]) -> Command {
    let [op, id, acct, sym_side, kind, price, qty, extra] = b;
    let id = u64::from(id % 48);
    let account = u32::from(acct % 4) + 1;
    // Symbol 2 does not exist: exercises the invalid-symbol path now and then.
    let symbol: SymbolId = match sym_side % 16 {
        15 => 2,
        n => u32::from(n & 1),
    };
    let side = if sym_side & 0x10 == 0 {
        Side::Buy
    } else {
        Side::Sell
    };
    let (tick, lot): (i64, u64) = if symbol == 1 { (5, 10) } else { (1, 1) };
    // Prices around 100 ticks; 0 and negative values now and then.
    let price = match price {
        0 => 0,
        1 => -tick,
        255 => 3, // off the tick grid for symbol B
        p => (90 + i64::from(p % 20)) * tick,
    };
    let qty = match qty {
        0 => 0,
        255 => 7, // off the lot grid for symbol B
        q => u64::from(q % 12 + 1) * lot,
    };
    match op % 16 {
        0..=8 => {
            let (ord_type, tif) = match kind % 12 {
                0 => (OrdType::Market, TimeInForce::Ioc),
                1 => (OrdType::Market, TimeInForce::Fok),
                2 | 3 => (OrdType::Limit, TimeInForce::Ioc),
                4 => (OrdType::Limit, TimeInForce::Fok),
                5 => (OrdType::Limit, TimeInForce::Day),
                _ => (OrdType::Limit, TimeInForce::Gtc),
            };
            let stp = match (kind >> 4) % 4 {
                0 => StpMode::CancelNewest,
                1 => StpMode::CancelOldest,
                2 => StpMode::CancelBoth,
                _ => StpMode::None,
            };
            let v = extra >> 3;
            let (stop_price, display_qty, tif, expire_ns) = match (extra >> 1) % 4 {
                1 => ((90 + i64::from(v % 20)) * tick, 0, tif, 0),
                2 => (0, u64::from(v % 4) * lot, tif, 0),
                3 => (0, 0, TimeInForce::Gtd, u64::from(v)),
                _ => (0, 0, tif, 0),
            };
            Command::New(NewOrder {
                id,
                account,
                symbol,
                side,
                ord_type,
                tif,
                price: if ord_type == OrdType::Market && extra % 2 == 0 {
                    0
                } else {
                    price
                },
                qty,
                post_only: kind >> 6 == 3,
                stp,
                stop_price,
                display_qty,
                expire_ns,
            })
        }
        9..=11 => Command::Cancel {
            id,
            account,
            symbol,
        },
        12..=14 => Command::Replace {
            id,
            account,
            symbol,
            price,
            qty,
        },
        _ => match extra % 8 {
            3 | 7 => Command::ExpireDay {
                symbol: (extra & 4 != 0).then_some(symbol),
            },
            4 => Command::CallStart { symbol },
            5 => Command::Uncross {
                symbol,
                reference: price.max(0),
            },
            6 => Command::Expire {
                now_ns: u64::from(extra >> 3),
            },
            _ => Command::MassCancel {
                account,
                symbol: (extra & 1 != 0).then_some(symbol),
                side: (extra & 2 != 0).then_some(side),
            },
        },
    }
}

#[cfg(test)]
mod tests;
