//! The executable specification of Rialto's matching: a naive reference matcher, an auditor
//! that checks any matcher's book against its event stream, and a runner for scenario files.
//!
//! Role: test oracle. The fast `engine` must emit exactly the events [`Reference`] emits for
//! every command stream within the engine's capacity limits (scenario tests, the property test
//! and the engine fuzz target all compare them).
//!
//! Never: used on a hot path; reads clocks, randomness or files (the scenario runner gets text
//! from its caller); panics on any command.
//!
//! # The event contract
//! Events of one command are emitted in the order they happen.
//!
//! **Validation.** New: symbol id in range, else `Invalid(Symbol)`; quantity positive and a
//! multiple of the lot, else `Invalid(Qty)`; for a limit order, price positive and a multiple of
//! the tick, else `Invalid(Price)` (a market order's price is ignored); then the id must never
//! have been used (`DuplicateId`; an id is used once a new order with it was *accepted*, so a
//! rejected new order does not use its id); then a post-only order that would trade on arrival
//! is rejected (`PostOnlyWouldCross`). Cancel: symbol id in range (else `Invalid(Symbol)`), then
//! the order must rest on that symbol and belong to that account, else `UnknownOrder`. Replace:
//! symbol in range (`Invalid(Symbol)`), quantity (`Invalid(Qty)`), price (`Invalid(Price)`),
//! then the order as for cancel (`UnknownOrder`), then the post-only rule. Mass cancel and end
//! of day with a symbol out of range: `Rejected { id: 0, Invalid(Symbol) }`. A rejected command
//! changes nothing.
//!
//! **New.** `Accepted` (price 0 for a market order), then the trades, then the remainder:
//! a market order's remainder is canceled `NoLiquidity` (whatever its time in force), an IOC's
//! `Ioc`, a GTC/DAY limit order rests. A FOK is checked on arrival: if its whole quantity cannot
//! trade within its limit it is canceled `Fok` with its full quantity and nothing else happens.
//! Under STP `CancelNewest` or `CancelBoth` only the quantity ahead of the first resting order of
//! its own account counts; under `CancelOldest` its own orders do not count (they would be
//! canceled); under `None` they count.
//!
//! **Matching.** The aggressor meets the best opposite order while the prices cross. Each
//! `Trade` is at the maker's price, best price first and FIFO within a price; a partial fill
//! leaves the maker where it was. Trade ids count from 1 across all symbols.
//!
//! **Self-trade prevention** (the aggressor's mode decides), when the next maker has the
//! aggressor's account: `CancelNewest` cancels the aggressor's remainder (`Stp`) and stops;
//! `CancelOldest` cancels the maker (`Stp`) and goes on; `CancelBoth` cancels the maker, then
//! the aggressor's remainder, and stops; `None` trades.
//!
//! **Replace** sets price and remaining quantity. Same price and quantity at most the remaining
//! keeps priority: `Replaced { lost_priority: false }`, `Level`. Otherwise the order loses
//! priority: a post-only order that would cross is rejected (unchanged); else `Replaced {
//! lost_priority: true }`, `Level` of the old price (order removed), then it aggresses like a
//! new order (its trades, STP), then, if any quantity is left, it rests at the back of the new
//! price's queue with a `Level`.
//!
//! **Mass cancel**: one `Canceled { User }` (each followed by its `Level`) per resting order of
//! the account (filtered by symbol and side), in order of symbol id, side (buy first), priority;
//! then `MassCanceled { count }`. **End of day**: `Canceled { Expired }` (+ `Level`) for each
//! resting DAY order in the same order; nothing else (no events if there is none).
//!
//! **Level events** (aggregate resting quantity and order count at one price *after* the
//! change; quantity 0 = level gone): each `Trade` is immediately followed by the `Level` of the
//! maker's side and price; a resting order's `Canceled` is immediately followed by its `Level`
//! (an aggressor's `Canceled` has none: it never rested); an order coming to rest emits its
//! `Level` right after the event that made it rest (the `Accepted`/`Replaced`, or the command's
//! last `Trade`/`Canceled` with their `Level`s); a replace that keeps priority emits `Replaced`
//! then `Level`; one that loses priority emits `Replaced`, `Level` (old price), the trades, then
//! `Level` (new price) if it rests. A `Level` is emitted even if the aggregate did not change.
//!
//! **Limits.** The issue sets no maximum quantity. The reference reports a level whose
//! aggregate would exceed `u64::MAX` as `u64::MAX` (saturating) rather than panic; that case is
//! outside the engine contract until a maximum order quantity exists. The reference has no
//! capacity limits, so it never emits `CapacityExceeded`; compare with the engine only while
//! the engine does not emit it either.
//!
//! Invariants checked after every command in tests: see [`Reference::check_invariants`] and
//! [`audit::Auditor`].
#![forbid(unsafe_code)]

pub mod audit;
pub mod lockstep;
pub mod reference;
pub mod scenario;

pub use audit::Auditor;
pub use lockstep::{Lockstep, LockstepError};
pub use reference::{OrderLedger, Reference, ReferenceBook, RestingOrder};
pub use scenario::{render_event, Inspect};
