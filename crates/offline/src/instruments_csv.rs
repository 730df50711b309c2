//! Instruments file reader: `symbol,tick,lot` CSV that sets the price and quantity grid of
//! symbols.
//!
//! Role: fills a `SymbolTable` before an order file is read, so the listed symbols get the
//! first ids in file order and their own tick and lot. Symbols not listed keep tick 1 and lot 1.
//!
//! Never: panics on any input. Invariants: every listed instrument has `tick >= 1`,
//! `lot >= 1` and a symbol listed once; every error names the line and the field.
//!
//! Format: the header `symbol,tick,lot`, then one instrument per line. Empty lines and lines
//! starting with `#` are skipped; `\r\n` line ends and a UTF-8 byte order mark are accepted.

use crate::orders_csv::{
    is_blank_or_comment, parse_symbol, parse_unsigned, quote, read_line, split_fields, CsvError,
};
use crate::symbols::SymbolTable;
use std::io::BufRead;
use types::Instrument;

pub const HEADER: &str = "symbol,tick,lot";

/// Reads every instrument of `src` into `symbols`.
pub fn read_instruments<R: BufRead>(mut src: R, symbols: &mut SymbolTable) -> Result<(), CsvError> {
    let mut buf = Vec::with_capacity(64);
    if !read_line(&mut src, &mut buf, 1)? {
        return Err(CsvError {
            line: 1,
            field: None,
            message: format!("empty input: expected the header \"{HEADER}\""),
        });
    }
    let header = buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&buf);
    if header != HEADER.as_bytes() {
        return Err(CsvError {
            line: 1,
            field: None,
            message: format!("expected the header \"{HEADER}\", got {}", quote(header)),
        });
    }
    let mut line_no = 1;
    loop {
        line_no += 1;
        if !read_line(&mut src, &mut buf, line_no)? {
            return Ok(());
        }
        if is_blank_or_comment(&buf) {
            continue;
        }
        let mut f: [&[u8]; 3] = [b""; 3];
        let count = split_fields(&buf, &mut f);
        if count != 3 {
            return Err(CsvError {
                line: line_no,
                field: None,
                message: format!("expected 3 fields (symbol,tick,lot), got {count}"),
            });
        }
        let err = |field: &'static str, message: String| CsvError {
            line: line_no,
            field: Some(field),
            message,
        };
        let symbol = parse_symbol(f[0]).map_err(|m| err("symbol", m))?;
        let tick = parse_unsigned(f[1], i64::MAX as u64).map_err(|m| err("tick", m))?;
        if tick == 0 {
            return Err(err("tick", "must be at least 1, got \"0\"".to_owned()));
        }
        let lot = parse_unsigned(f[2], u64::MAX).map_err(|m| err("lot", m))?;
        if lot == 0 {
            return Err(err("lot", "must be at least 1, got \"0\"".to_owned()));
        }
        symbols
            .insert(Instrument {
                symbol,
                tick: tick as i64,
                lot,
            })
            .map_err(|m| err("symbol", m))?;
    }
}

#[cfg(test)]
mod tests;
