//! The executable specification of Rialto's matching: a naive reference matcher, an auditor
//! that checks any matcher's book against its command and event streams, and a runner for
//! scenario files.
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
//! **Validation.** New, in this order (the first failure is the reject): symbol id in range,
//! else `Invalid(Symbol)`; quantity positive and a multiple of the lot, else `Invalid(Qty)`; for
//! a limit order, price positive and a multiple of the tick, else `Invalid(Price)` (a market
//! order's price is ignored); `stop_price` negative, off the tick, or set (> 0) on a post-only
//! order: `Invalid(StopPrice)`; `display_qty` set and off the lot, or set on a market, IOC or
//! FOK order: `Invalid(DisplayQty)`; `expire_ns` 0 with GTD or set without GTD:
//! `Invalid(ExpireTime)`; then the id must never have been used (`DuplicateId`; an id is used
//! once a new order with it was *accepted*, so a rejected new order does not use its id); then a
//! market, IOC or FOK order that is not a stop, on a book in a call: `AuctionCall`; then a
//! post-only order that would trade on arrival is rejected (`PostOnlyWouldCross`; never in a
//! call). Cancel: symbol id in range (else `Invalid(Symbol)`), then the order must rest (or be a
//! pending stop) on that symbol and belong to that account, else `UnknownOrder`. Replace: symbol
//! in range (`Invalid(Symbol)`), quantity (`Invalid(Qty)`), price (negative or off the tick:
//! `Invalid(Price)`; 0: `Invalid(Price)` unless the command names a pending stop market order
//! of that account *on that symbol*), then the order as for cancel (`UnknownOrder`), then the
//! post-only rule (not in a call). Mass cancel, end of day, call start and uncross with a symbol
//! out of range: `Rejected { id: 0, Invalid(Symbol) }`. A rejected command changes nothing.
//!
//! **New.** `Accepted` (price 0 for a market order), then the trades, then the remainder:
//! a market order's remainder is canceled `NoLiquidity` (whatever its time in force), an IOC's
//! `Ioc`, a GTC/DAY/GTD limit order rests. A FOK is checked on arrival: if its whole quantity
//! cannot trade within its limit it is canceled `Fok` with its full quantity and nothing else
//! happens. Resting icebergs count whole (shown and hidden). Under STP `CancelNewest` or
//! `CancelBoth` only the quantity ahead of the first resting order of its own account counts:
//! whole at better prices, and only the *shown* part of the orders ahead of it in its level (an
//! iceberg's refill would queue behind it); under `CancelOldest` its own orders do not count
//! (they would be canceled); under `None` they count. Then stops trigger (below).
//!
//! **Matching.** The aggressor meets the best opposite order while the prices cross. Each
//! `Trade` is at the maker's price, best price first and FIFO within a price; a partial fill
//! leaves the maker where it was. Trade ids count from 1 across all symbols. An iceberg maker
//! trades at most its shown part per trade (`min(display_qty, remaining)` when it came to
//! rest); when that reaches 0 with some hidden, it is refilled with `min(display_qty, hidden)`
//! and goes to the back of its level (a new time priority), and the walk goes on (the same
//! aggressor may meet it again). `maker_leaves` is the maker's whole remaining quantity; the
//! `Level` after the trade shows the refill.
//!
//! **Self-trade prevention** (the aggressor's mode decides), when the next maker has the
//! aggressor's account: `CancelNewest` cancels the aggressor's remainder (`Stp`) and stops;
//! `CancelOldest` cancels the maker (`Stp`) and goes on; `CancelBoth` cancels the maker, then
//! the aggressor's remainder, and stops; `None` trades.
//!
//! **Replace** sets price and remaining quantity. Same price and quantity at most the remaining
//! (shown and hidden) keeps priority: `Replaced { lost_priority: false }`, `Level`; an iceberg's
//! shown part becomes `min(shown, qty)`. Otherwise the order loses priority: a post-only order
//! that would cross is rejected (unchanged; never in a call); else `Replaced { lost_priority:
//! true }`, `Level` of the old price (order removed), then it aggresses like a new order (its
//! trades, STP; not in a call), then, if any quantity is left, it rests at the back of the new
//! price's queue (an iceberg showing `min(display_qty, remaining)`) with a `Level`; then stops
//! trigger. A pending stop is replaced in place: quantity and limit (a stop market order ignores
//! the price, reported as 0), same stop price, same place in the trigger order, `Replaced {
//! lost_priority: false }` and no `Level`.
//!
//! **Mass cancel**: one `Canceled { User }` per live order of the account (filtered by symbol
//! and side), each resting one followed by its `Level`, then `MassCanceled { count }`. The walk:
//! symbols ascending; in each, resting buys in priority order, resting sells in priority order,
//! then the symbol's pending stops in acceptance order. **End of day**: `Canceled { Expired }`
//! (+ `Level` if it rested) for each live DAY order in the same order; **`Expire { now_ns }`**:
//! the same for each live GTD order with `expire_ns <= now_ns`; nothing else (no events if there
//! is none). Canceled quantities are whole remaining quantities (an iceberg's hidden part too).
//!
//! **Stops** (`stop_price > 0`): `Accepted` (price: the limit, or 0) and held off the book, in
//! no `Level`. After each command's trades, trigger rounds: a round takes the highest and lowest
//! price traded in the symbol since the previous round and removes every pending stop of that
//! symbol it triggers (a buy: highest `>= stop_price`; a sell: lowest `<= stop_price`); they
//! run one after the other in acceptance order, each as `Triggered { price: limit or 0, qty }`
//! then what a new order with its fields emits after `Accepted` (FOK check, trades, rest or
//! cancel of the remainder); their trades feed the next round, until a round triggers nothing.
//! Trades made before a stop was accepted never trigger it.
//!
//! **Call auctions.** `CallStart` (silent; nothing on a book already in a call) stops matching
//! on one book: limit orders rest where they cross, replaces that lose priority rest without
//! trading, stops stay pending. `Uncross { reference }` ends the call. The auction price is,
//! among every price at which an order rests on either side, the one with the largest
//! executable volume (`min` of the buy quantity at or above it and the sell quantity at or below
//! it, whole iceberg quantities), then the smallest imbalance, then nearest to `reference` (0:
//! none), then the lowest. With a positive volume: `Uncrossed`, then trades at that price
//! pairing the best buy with the best sell, each of `min(buy shown, sell shown, volume left)`
//! (the sell is the maker, the buy the taker, `taker_side` Buy; no STP), each followed by the
//! `Level` of the sell's price then that of the buy's price, icebergs of either side refilling
//! to the back of their level as in matching; then a trigger round on the auction price. With
//! volume 0: no event. On a book not in a call: no event.
//!
//! **Readings** where the `types` docs leave a choice (the engine must make the same):
//! a replace at price 0 is allowed only when its (id, account, symbol) names a pending stop
//! market order (a pending stop market order named with another symbol: `Invalid(Price)`), and
//! a pending stop market order ignores any valid price (reported 0); a pending stop keeps its
//! place and `lost_priority: false` even when its quantity grows; a stop may be IOC, FOK, DAY,
//! GTD or an iceberg limit, and runs as such once triggered; `Triggered` carries the current
//! (possibly replaced) quantity and limit; a mass cancel's side filter applies to pending stops
//! by their side; an uncross trade takes `min` of *both* orders' shown parts (icebergs of either
//! side refill and requeue); an uncross without volume emits nothing, ends the call and runs no
//! trigger round (nothing traded); `Uncross` with an unknown symbol is rejected like `CallStart`;
//! its `reference` is not validated (any value but 0 is a price to be near); pending stops are
//! no auction candidates; a GTD market order is valid and never rests.
//!
//! **Level events** (aggregate *shown* resting quantity and order count at one price *after*
//! the change; quantity 0 = level gone): each `Trade` is immediately followed by the `Level` of
//! the maker's side and price (in an uncross, the sell's then the buy's); a resting order's
//! `Canceled` is immediately followed by its `Level` (an aggressor's `Canceled` has none: it
//! never rested; nor has a pending stop's); an order coming to rest emits its `Level` right
//! after the event that made it rest (the `Accepted`/`Replaced`/`Triggered`, or its last
//! `Trade`/`Canceled` with their `Level`s); a replace that keeps priority emits `Replaced` then
//! `Level`; one that loses priority emits `Replaced`, `Level` (old price), the trades, then
//! `Level` (new price) if it rests. A `Level` is emitted even if the aggregate did not change.
//!
//! **Limits.** The issue sets no maximum quantity. The reference reports a level whose
//! aggregate (or an auction volume) would exceed `u64::MAX` as `u64::MAX` (saturating) rather
//! than panic; that case is outside the engine contract until a maximum order quantity exists.
//! The reference has no capacity limits, so it never emits `CapacityExceeded`; compare with the
//! engine only while the engine does not emit it either.
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
