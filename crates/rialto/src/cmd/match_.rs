//! `rialto match`: the offline matcher. Replays an order stream CSV through the engine and
//! writes every event as a JSON line to stdout, then one `book` line per symbol.
//!
//! The file is read twice, streaming both times: the first pass checks every line and collects
//! the symbols (so the engine is built with all its instruments, and a malformed line stops the
//! run before any event is printed); the second pass applies the commands. Output goes through
//! one `BufWriter`; events are encoded into a reused buffer.
//!
//! Never: holds the whole file, or prints anything after a malformed line.

use super::{open, read_instruments, CmdResult};
use offline::json;
use offline::orders_csv::{CsvError, OrderReader};
use offline::symbols::SymbolTable;
use std::io::Write;
use std::path::{Path, PathBuf};
use types::{Event, EventSink, Matcher, Side};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Order stream CSV v1 (header `op,id,account,symbol,side,type,tif,price,qty[,stp]`).
    #[arg(long, value_name = "FILE")]
    orders: PathBuf,
    /// Instruments CSV (header `symbol,tick,lot`). Symbols not listed have tick 1 and lot 1.
    #[arg(long, value_name = "FILE")]
    instruments: Option<PathBuf>,
    /// Also print the market-data `level` events.
    #[arg(long)]
    levels: bool,
    /// Run the naive reference model (crates/model) instead of the engine, to compare outputs.
    #[arg(long)]
    reference: bool,
}

/// Collects the JSON lines of one command's events.
struct JsonSink<'a> {
    out: Vec<u8>,
    symbols: &'a SymbolTable,
    levels: bool,
}

impl EventSink for JsonSink<'_> {
    fn on_event(&mut self, event: &Event) {
        json::push_event(&mut self.out, event, self.symbols, self.levels);
    }
}

fn csv_error(path: &Path, e: CsvError) -> String {
    format!("{}: {e}", path.display())
}

/// Pass one: checks every line, interning symbols. Returns the number of commands.
fn validate(path: &Path, symbols: &mut SymbolTable) -> Result<u64, String> {
    let mut reader = OrderReader::new(open(path)?).map_err(|e| csv_error(path, e))?;
    let mut count = 0;
    while reader
        .next_command(symbols)
        .map_err(|e| csv_error(path, e))?
        .is_some()
    {
        count += 1;
    }
    Ok(count)
}

/// A matcher that can also list its resting orders for the final `book` lines.
trait BookView: Matcher {
    fn resting_orders(&self, symbol: u32, side: Side) -> Vec<(u64, i64, u64)>;
}

impl BookView for engine::Engine {
    fn resting_orders(&self, symbol: u32, side: Side) -> Vec<(u64, i64, u64)> {
        self.resting(symbol, side)
            .map(|o| (o.id, o.price, o.qty))
            .collect()
    }
}

impl BookView for model::Reference {
    fn resting_orders(&self, symbol: u32, side: Side) -> Vec<(u64, i64, u64)> {
        self.resting(symbol, side)
            .iter()
            .map(|o| (o.id, o.price, o.qty))
            .collect()
    }
}

fn replay<M: BookView>(
    matcher: &mut M,
    path: &Path,
    symbols: &SymbolTable,
    levels: bool,
) -> CmdResult {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut sink = JsonSink {
        out: Vec::with_capacity(1 << 12),
        symbols,
        levels,
    };
    // Every symbol is already interned by pass one; a private copy keeps `symbols` shared.
    let mut table = symbols.clone();
    let mut reader = OrderReader::new(open(path)?).map_err(|e| csv_error(path, e))?;
    while let Some(cmd) = reader
        .next_command(&mut table)
        .map_err(|e| csv_error(path, e))?
    {
        matcher.apply(&cmd, &mut sink);
        out.write_all(&sink.out)?;
        sink.out.clear();
    }
    if table.len() != symbols.len() {
        return Err(format!("{}: the file changed while it was read", path.display()).into());
    }
    for id in symbols.ids_by_name() {
        json::push_book(
            &mut sink.out,
            symbols.name(id),
            matcher.resting_orders(id, Side::Buy),
            matcher.resting_orders(id, Side::Sell),
        );
        out.write_all(&sink.out)?;
        sink.out.clear();
    }
    out.flush()?;
    Ok(())
}

pub fn run(args: Args) -> CmdResult {
    let mut symbols = read_instruments(args.instruments.as_deref())?;
    validate(&args.orders, &mut symbols)?;
    if args.reference {
        let mut m = model::Reference::new(symbols.instruments());
        replay(&mut m, &args.orders, &symbols, args.levels)
    } else {
        let mut m = engine::Engine::try_new(symbols.instruments(), engine::EngineConfig::default())
            .map_err(|e| format!("building the engine: {e}"))?;
        replay(&mut m, &args.orders, &symbols, args.levels)
    }
}
