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
mod tests {
    use super::*;

    fn read(text: &str) -> Result<SymbolTable, String> {
        let mut t = SymbolTable::new();
        read_instruments(text.as_bytes(), &mut t)
            .map(|()| t)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn reads_instruments_in_order() {
        let t = read("symbol,tick,lot\nZED,5,100\n# c\n\nACME,1,1\n").unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.instruments()[0].tick, 5);
        assert_eq!(t.instruments()[0].lot, 100);
        assert_eq!(t.name(1), "ACME");
    }

    #[test]
    fn errors_name_line_and_field() {
        assert_eq!(
            read("symbol,tick,lot\nA,0,1\n").unwrap_err(),
            "line 2: field 'tick': must be at least 1, got \"0\""
        );
        assert_eq!(
            read("symbol,tick,lot\nA,1,x\n").unwrap_err(),
            "line 2: field 'lot': expected an integer, got \"x\""
        );
        assert_eq!(
            read("symbol,tick,lot\nA,1,1\nA,2,2\n").unwrap_err(),
            "line 3: field 'symbol': symbol A appears twice"
        );
        assert_eq!(
            read("symbol,tick,lot\nA,1\n").unwrap_err(),
            "line 2: expected 3 fields (symbol,tick,lot), got 2"
        );
        assert_eq!(
            read("sym,tick,lot\n").unwrap_err(),
            "line 1: expected the header \"symbol,tick,lot\", got \"sym,tick,lot\""
        );
    }
}
