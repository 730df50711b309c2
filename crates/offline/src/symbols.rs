//! The symbol table of an offline run: symbol names to dense engine symbol ids and back.
//!
//! Role: every adapter that reads symbols by name (the order CSV, the instruments file) interns
//! them here, and the engine is built from `instruments()`.
//!
//! Never: reorders or forgets an entry. Invariants: ids are dense (`0..len`), assigned in order
//! of first appearance; `instruments()[id].symbol` is the name of `id`; at most
//! `SYMBOLS_MAX` entries.

use std::collections::HashMap;
use types::{Instrument, PriceTicks, QtyLots, Symbol, SymbolId};

/// Most distinct symbols one run may name (the engine preallocates per instrument).
pub const SYMBOLS_MAX: usize = 1024;

#[derive(Clone, Debug, Default)]
pub struct SymbolTable {
    instruments: Vec<Instrument>,
    ids: HashMap<Symbol, SymbolId>,
}

impl SymbolTable {
    pub fn new() -> SymbolTable {
        SymbolTable::default()
    }

    /// The id of `symbol`, adding it with tick 1 and lot 1 if it is new. Errors if the table is
    /// full.
    pub fn intern(&mut self, symbol: Symbol) -> Result<SymbolId, String> {
        if let Some(&id) = self.ids.get(&symbol) {
            return Ok(id);
        }
        self.insert(Instrument {
            symbol,
            tick: 1,
            lot: 1,
        })
    }

    /// Adds a new instrument. Errors if its symbol is already present or the table is full.
    pub fn insert(&mut self, instrument: Instrument) -> Result<SymbolId, String> {
        if self.ids.contains_key(&instrument.symbol) {
            return Err(format!("symbol {} appears twice", instrument.symbol));
        }
        if self.instruments.len() >= SYMBOLS_MAX {
            return Err(format!("more than {SYMBOLS_MAX} distinct symbols"));
        }
        let id = self.instruments.len() as SymbolId;
        self.ids.insert(instrument.symbol, id);
        self.instruments.push(instrument);
        Ok(id)
    }

    /// Adds an instrument with the given grid (used by generators).
    pub fn insert_with_grid(
        &mut self,
        symbol: Symbol,
        tick: PriceTicks,
        lot: QtyLots,
    ) -> Result<SymbolId, String> {
        self.insert(Instrument { symbol, tick, lot })
    }

    pub fn get(&self, symbol: &Symbol) -> Option<SymbolId> {
        self.ids.get(symbol).copied()
    }

    /// The name of `id`, or `"?"` for an id this table never issued.
    pub fn name(&self, id: SymbolId) -> &str {
        self.instruments
            .get(id as usize)
            .map_or("?", |i| i.symbol.as_str())
    }

    pub fn instruments(&self) -> &[Instrument] {
        &self.instruments
    }

    pub fn len(&self) -> usize {
        self.instruments.len()
    }

    pub fn is_empty(&self) -> bool {
        self.instruments.is_empty()
    }

    /// Every id, sorted by symbol name (the order of the `book` lines).
    pub fn ids_by_name(&self) -> Vec<SymbolId> {
        let mut ids: Vec<SymbolId> = (0..self.instruments.len() as SymbolId).collect();
        ids.sort_by_key(|&id| self.instruments[id as usize].symbol.as_str().to_owned());
        ids
    }
}

#[cfg(test)]
mod tests;
