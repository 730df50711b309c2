//! Order stream CSV v1 reader: turns the lines of an order file into engine `Command`s.
//!
//! Role: the adapter between the offline order format and the engine. It checks syntax and
//! field ranges only; business rules (tick and lot grid, positive price, duplicate ids) are the
//! engine's, which answers them with `rejected` events, not with CSV errors.
//!
//! Never: panics on any input, holds more than one line, or allocates per line once its line
//! buffer has grown (fields are slices of that buffer). A line longer than `LINE_LEN_MAX` is an
//! error.
//!
//! Format: a header `op,id,account,symbol,side,type,tif,price,qty`, optionally followed by `,stp`;
//! then one command per line, every line with exactly the header's number of fields:
//! - `N` new: id, account, symbol, side `B`|`S`, type `L` (limit) | `M` (market) | `P`
//!   (post-only limit), tif `GTC`|`DAY`|`IOC`|`FOK`, price (integer price units; empty for
//!   market), qty; `stp` is `none`|`cancel_newest`|`cancel_oldest`|`cancel_both`, empty meaning
//!   the default (`cancel_newest`).
//! - `C` cancel: id, account, symbol; every other field empty.
//! - `R` replace: id, account, symbol, price, qty; every other field empty.
//! - `M` mass cancel (extension): id empty, account, symbol optional, side optional; every other
//!   field empty.
//!
//! Also accepted (extensions): a UTF-8 byte order mark before the header, `\r\n` line ends,
//! empty lines and lines starting with `#` (comments), which are skipped. Fields are never
//! quoted and never trimmed: `" 5"` is not an integer.
//!
//! Invariant: every error names its 1-based line number, and the field when there is one.

use crate::symbols::SymbolTable;
use std::fmt;
use std::io::{BufRead, Read};
use types::{
    AccountId, Command, NewOrder, OrdType, OrderId, PriceTicks, QtyLots, Side, StpMode, Symbol,
    SymbolId, TimeInForce,
};

/// The header every order file starts with.
pub const HEADER: &str = "op,id,account,symbol,side,type,tif,price,qty";
/// The same header with the optional self-trade-prevention column.
pub const HEADER_WITH_STP: &str = "op,id,account,symbol,side,type,tif,price,qty,stp";
/// Longest accepted line in bytes, line end excluded.
pub const LINE_LEN_MAX: usize = 1024;

const FIELD_NAMES: [&str; 10] = [
    "op", "id", "account", "symbol", "side", "type", "tif", "price", "qty", "stp",
];
const OP: usize = 0;
const ID: usize = 1;
const ACCOUNT: usize = 2;
const SYMBOL: usize = 3;
const SIDE: usize = 4;
const TYPE: usize = 5;
const TIF: usize = 6;
const PRICE: usize = 7;
const QTY: usize = 8;
const STP: usize = 9;

/// A malformed input line (or an I/O error while reading it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvError {
    /// 1-based line number.
    pub line: u64,
    /// The offending field's header name, if the error is about one field.
    pub field: Option<&'static str>,
    pub message: String,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field {
            Some(field) => write!(f, "line {}: field '{}': {}", self.line, field, self.message),
            None => write!(f, "line {}: {}", self.line, self.message),
        }
    }
}

impl std::error::Error for CsvError {}

/// Quotes a raw field for an error message: lossy UTF-8, escaped, cut after 40 characters.
pub fn quote(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut out = String::with_capacity(raw.len().min(48) + 2);
    out.push('"');
    for (n, c) in text.chars().enumerate() {
        if n == 40 {
            out.push_str("...");
            break;
        }
        out.extend(c.escape_debug());
    }
    out.push('"');
    out
}

/// Reads one line into `buf` (line end removed), at most `LINE_LEN_MAX` bytes. Returns false at
/// end of input.
pub(crate) fn read_line<R: BufRead>(
    src: &mut R,
    buf: &mut Vec<u8>,
    line_no: u64,
) -> Result<bool, CsvError> {
    buf.clear();
    let n = src
        .by_ref()
        .take(LINE_LEN_MAX as u64 + 2)
        .read_until(b'\n', buf)
        .map_err(|e| CsvError {
            line: line_no,
            field: None,
            message: format!("read error: {e}"),
        })?;
    if n == 0 {
        return Ok(false);
    }
    let ended = buf.last() == Some(&b'\n');
    if ended {
        buf.pop();
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    if buf.len() > LINE_LEN_MAX || (!ended && n as u64 == LINE_LEN_MAX as u64 + 2) {
        return Err(CsvError {
            line: line_no,
            field: None,
            message: format!("line longer than {LINE_LEN_MAX} bytes"),
        });
    }
    Ok(true)
}

/// True for lines the readers skip: empty ones and `#` comments.
pub(crate) fn is_blank_or_comment(line: &[u8]) -> bool {
    line.is_empty() || line[0] == b'#'
}

/// Splits `line` at commas into `out` (the first `out.len()` fields); returns how many fields
/// the line has.
pub(crate) fn split_fields<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> usize {
    let mut count = 0;
    for part in line.split(|&b| b == b',') {
        if count < out.len() {
            out[count] = part;
        }
        count += 1;
    }
    count
}

/// Parses an unsigned decimal integer (digits only) no larger than `max`.
pub(crate) fn parse_unsigned(raw: &[u8], max: u64) -> Result<u64, String> {
    if raw.is_empty() || !raw.iter().all(u8::is_ascii_digit) {
        return Err(format!("expected an integer, got {}", quote(raw)));
    }
    let mut value: u64 = 0;
    for &d in raw {
        value = match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
        {
            Some(v) if v <= max => v,
            _ => return Err(format!("integer {} is larger than {max}", quote(raw))),
        };
    }
    Ok(value)
}

/// Parses a signed decimal integer (an optional `-`, then digits) that fits an `i64`.
pub(crate) fn parse_signed(raw: &[u8]) -> Result<i64, String> {
    let (negative, digits) = match raw.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, raw),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(format!("expected an integer, got {}", quote(raw)));
    }
    let limit = if negative {
        i64::MIN.unsigned_abs()
    } else {
        i64::MAX as u64
    };
    let magnitude = parse_unsigned(digits, limit)
        .map_err(|_| format!("integer {} is out of the 64-bit range", quote(raw)))?;
    Ok(if negative {
        0i64.wrapping_sub_unsigned(magnitude)
    } else {
        magnitude as i64
    })
}

/// Parses a symbol name as the `Symbol` type accepts it.
pub(crate) fn parse_symbol(raw: &[u8]) -> Result<Symbol, String> {
    std::str::from_utf8(raw)
        .ok()
        .and_then(Symbol::new)
        .ok_or_else(|| {
            format!(
                "expected a symbol of 1 to {} printable ASCII characters without commas, got {}",
                types::SYMBOL_LEN_MAX,
                quote(raw)
            )
        })
}

/// A streaming reader of an order file. Owns one reusable line buffer.
pub struct OrderReader<R> {
    src: R,
    buf: Vec<u8>,
    line_no: u64,
    fields_expected: usize,
}

impl<R: BufRead> OrderReader<R> {
    /// Reads and checks the header line.
    pub fn new(mut src: R) -> Result<OrderReader<R>, CsvError> {
        let mut buf = Vec::with_capacity(128);
        if !read_line(&mut src, &mut buf, 1)? {
            return Err(CsvError {
                line: 1,
                field: None,
                message: format!("empty input: expected the header \"{HEADER}\""),
            });
        }
        let header = buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&buf);
        let fields_expected = if header == HEADER.as_bytes() {
            9
        } else if header == HEADER_WITH_STP.as_bytes() {
            10
        } else {
            return Err(CsvError {
                line: 1,
                field: None,
                message: format!(
                    "expected the header \"{HEADER}\" (optionally followed by \",stp\"), got {}",
                    quote(header)
                ),
            });
        };
        Ok(OrderReader {
            src,
            buf,
            line_no: 1,
            fields_expected,
        })
    }

    /// Line number of the last line read (the header is line 1).
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    /// Whether the header has the `stp` column.
    pub fn has_stp_column(&self) -> bool {
        self.fields_expected == 10
    }

    /// The next command, or `None` at the end of the input. Symbols are interned into
    /// `symbols` (new ones get tick 1 and lot 1). After an error the reader should not be used.
    pub fn next_command(&mut self, symbols: &mut SymbolTable) -> Result<Option<Command>, CsvError> {
        loop {
            self.line_no += 1;
            if !read_line(&mut self.src, &mut self.buf, self.line_no)? {
                self.line_no -= 1;
                return Ok(None);
            }
            if is_blank_or_comment(&self.buf) {
                continue;
            }
            return parse_record(&self.buf, self.line_no, self.fields_expected, symbols).map(Some);
        }
    }
}

/// Parses one data line (without its line end) that must have `fields_expected` (9 or 10)
/// fields.
pub fn parse_record(
    line: &[u8],
    line_no: u64,
    fields_expected: usize,
    symbols: &mut SymbolTable,
) -> Result<Command, CsvError> {
    let mut f: [&[u8]; 10] = [b""; 10];
    let count = split_fields(line, &mut f[..fields_expected]);
    if count != fields_expected {
        return Err(CsvError {
            line: line_no,
            field: None,
            message: format!(
                "expected {} fields ({}), got {}",
                fields_expected,
                FIELD_NAMES[..fields_expected].join(","),
                count
            ),
        });
    }
    let err = |field: usize, message: String| CsvError {
        line: line_no,
        field: Some(FIELD_NAMES[field]),
        message,
    };
    let must_be_empty = |fields: &[usize], what: &str| -> Result<(), CsvError> {
        for &i in fields {
            if !f[i].is_empty() {
                return Err(err(
                    i,
                    format!("must be empty for {what}, got {}", quote(f[i])),
                ));
            }
        }
        Ok(())
    };
    let id = |i: usize| -> Result<OrderId, CsvError> {
        parse_unsigned(f[i], u64::MAX).map_err(|m| err(i, m))
    };
    let account = |i: usize| -> Result<AccountId, CsvError> {
        parse_unsigned(f[i], u64::from(u32::MAX))
            .map(|v| v as AccountId)
            .map_err(|m| err(i, m))
    };
    let price =
        |i: usize| -> Result<PriceTicks, CsvError> { parse_signed(f[i]).map_err(|m| err(i, m)) };
    let qty = |i: usize| -> Result<QtyLots, CsvError> {
        parse_unsigned(f[i], u64::MAX).map_err(|m| err(i, m))
    };
    let mut symbol = |i: usize| -> Result<SymbolId, CsvError> {
        let s = parse_symbol(f[i]).map_err(|m| err(i, m))?;
        symbols.intern(s).map_err(|m| err(i, m))
    };
    let side = |i: usize| -> Result<Side, CsvError> {
        match f[i] {
            b"B" => Ok(Side::Buy),
            b"S" => Ok(Side::Sell),
            other => Err(err(i, format!("expected B or S, got {}", quote(other)))),
        }
    };
    let stp_columns: &[usize] = if fields_expected == 10 { &[STP] } else { &[] };

    match f[OP] {
        b"N" => {
            let id = id(ID)?;
            let account = account(ACCOUNT)?;
            let symbol = symbol(SYMBOL)?;
            let side = side(SIDE)?;
            let (ord_type, post_only) = match f[TYPE] {
                b"L" => (OrdType::Limit, false),
                b"M" => (OrdType::Market, false),
                b"P" => (OrdType::Limit, true),
                other => {
                    return Err(err(
                        TYPE,
                        format!("expected L, M or P, got {}", quote(other)),
                    ))
                }
            };
            let tif = match f[TIF] {
                b"GTC" => TimeInForce::Gtc,
                b"DAY" => TimeInForce::Day,
                b"IOC" => TimeInForce::Ioc,
                b"FOK" => TimeInForce::Fok,
                other => {
                    return Err(err(
                        TIF,
                        format!("expected GTC, DAY, IOC or FOK, got {}", quote(other)),
                    ))
                }
            };
            let price = match ord_type {
                OrdType::Market => {
                    must_be_empty(&[PRICE], "a market order")?;
                    0
                }
                OrdType::Limit => price(PRICE)?,
            };
            let qty = qty(QTY)?;
            let stp = if fields_expected == 10 {
                match f[STP] {
                    b"" => StpMode::default(),
                    b"none" => StpMode::None,
                    b"cancel_newest" => StpMode::CancelNewest,
                    b"cancel_oldest" => StpMode::CancelOldest,
                    b"cancel_both" => StpMode::CancelBoth,
                    other => {
                        return Err(err(
                            STP,
                            format!(
                                "expected none, cancel_newest, cancel_oldest, cancel_both or \
                                 nothing, got {}",
                                quote(other)
                            ),
                        ))
                    }
                }
            } else {
                StpMode::default()
            };
            Ok(Command::New(NewOrder {
                id,
                account,
                symbol,
                side,
                ord_type,
                tif,
                price,
                qty,
                post_only,
                stp,
                ..NewOrder::default()
            }))
        }
        b"C" => {
            let id = id(ID)?;
            let account = account(ACCOUNT)?;
            let symbol = symbol(SYMBOL)?;
            must_be_empty(&[SIDE, TYPE, TIF, PRICE, QTY], "a cancel")?;
            must_be_empty(stp_columns, "a cancel")?;
            Ok(Command::Cancel {
                id,
                account,
                symbol,
            })
        }
        b"R" => {
            let id = id(ID)?;
            let account = account(ACCOUNT)?;
            let symbol = symbol(SYMBOL)?;
            must_be_empty(&[SIDE, TYPE, TIF], "a replace")?;
            let price = price(PRICE)?;
            let qty = qty(QTY)?;
            must_be_empty(stp_columns, "a replace")?;
            Ok(Command::Replace {
                id,
                account,
                symbol,
                price,
                qty,
            })
        }
        b"M" => {
            must_be_empty(&[ID], "a mass cancel")?;
            let account = account(ACCOUNT)?;
            let symbol = if f[SYMBOL].is_empty() {
                None
            } else {
                Some(symbol(SYMBOL)?)
            };
            let side = if f[SIDE].is_empty() {
                None
            } else {
                Some(side(SIDE)?)
            };
            must_be_empty(&[TYPE, TIF, PRICE, QTY], "a mass cancel")?;
            must_be_empty(stp_columns, "a mass cancel")?;
            Ok(Command::MassCancel {
                account,
                symbol,
                side,
            })
        }
        other => Err(err(
            OP,
            format!("expected N, C, R or M, got {}", quote(other)),
        )),
    }
}

/// Appends `cmd` as one order-file line (with the `stp` column, i.e. for `HEADER_WITH_STP`).
/// Returns false, appending nothing, for a command the format cannot express (`ExpireDay`,
/// `Expire`, `CallStart`, `Uncross`, and orders with a stop, an iceberg peak or GTD).
/// Reading the line back gives the same command (market orders read back with price 0).
pub fn push_command(out: &mut Vec<u8>, cmd: &Command, symbols: &SymbolTable) -> bool {
    use crate::json::{push_i64, push_u64};
    let side_byte = |side: Side| match side {
        Side::Buy => b'B',
        Side::Sell => b'S',
    };
    match *cmd {
        Command::New(o) if o.stop_price != 0 || o.display_qty != 0 || o.tif == TimeInForce::Gtd => {
            return false
        }
        Command::New(o) => {
            out.extend_from_slice(b"N,");
            push_u64(out, o.id);
            out.push(b',');
            push_u64(out, u64::from(o.account));
            out.push(b',');
            out.extend_from_slice(symbols.name(o.symbol).as_bytes());
            out.push(b',');
            out.push(side_byte(o.side));
            out.push(b',');
            out.push(match (o.ord_type, o.post_only) {
                (OrdType::Market, _) => b'M',
                (OrdType::Limit, false) => b'L',
                (OrdType::Limit, true) => b'P',
            });
            out.push(b',');
            out.extend_from_slice(match o.tif {
                TimeInForce::Gtc => b"GTC",
                TimeInForce::Day => b"DAY",
                TimeInForce::Ioc => b"IOC",
                TimeInForce::Fok => b"FOK",
                TimeInForce::Gtd => b"GTD",
            });
            out.push(b',');
            if o.ord_type == OrdType::Limit {
                push_i64(out, o.price);
            }
            out.push(b',');
            push_u64(out, o.qty);
            out.push(b',');
            if o.stp != StpMode::default() {
                out.extend_from_slice(o.stp.as_str().as_bytes());
            }
        }
        Command::Cancel {
            id,
            account,
            symbol,
        } => {
            out.extend_from_slice(b"C,");
            push_u64(out, id);
            out.push(b',');
            push_u64(out, u64::from(account));
            out.push(b',');
            out.extend_from_slice(symbols.name(symbol).as_bytes());
            out.extend_from_slice(b",,,,,,");
        }
        Command::Replace {
            id,
            account,
            symbol,
            price,
            qty,
        } => {
            out.extend_from_slice(b"R,");
            push_u64(out, id);
            out.push(b',');
            push_u64(out, u64::from(account));
            out.push(b',');
            out.extend_from_slice(symbols.name(symbol).as_bytes());
            out.extend_from_slice(b",,,,");
            push_i64(out, price);
            out.push(b',');
            push_u64(out, qty);
            out.push(b',');
        }
        Command::MassCancel {
            account,
            symbol,
            side,
        } => {
            out.extend_from_slice(b"M,,");
            push_u64(out, u64::from(account));
            out.push(b',');
            if let Some(symbol) = symbol {
                out.extend_from_slice(symbols.name(symbol).as_bytes());
            }
            out.push(b',');
            if let Some(side) = side {
                out.push(side_byte(side));
            }
            out.extend_from_slice(b",,,,,");
        }
        Command::ExpireDay { .. }
        | Command::Expire { .. }
        | Command::CallStart { .. }
        | Command::Uncross { .. } => return false,
    }
    out.push(b'\n');
    true
}

/// Reads a whole order file into memory (for benchmarks, which must not time the parser).
pub fn read_all<R: BufRead>(src: R, symbols: &mut SymbolTable) -> Result<Vec<Command>, CsvError> {
    let mut reader = OrderReader::new(src)?;
    let mut commands = Vec::new();
    while let Some(cmd) = reader.next_command(symbols)? {
        commands.push(cmd);
    }
    Ok(commands)
}

#[cfg(test)]
mod tests;
