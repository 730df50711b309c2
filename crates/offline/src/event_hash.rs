//! A fixed, fast, platform-independent hash of an event stream.
//!
//! Role: benchmarks print it so a run that changed semantics (or skipped work) is visible, and
//! two runs of the same seed can be compared. It is an `EventSink`, cheap enough to stay inside
//! the timed loop (a multiply per 64-bit word, no branches per byte).
//!
//! Never: depends on the platform, the build, or memory layout: every field is mixed explicitly
//! as an integer, in declaration order, after a tag naming the event kind. Not cryptographic.
//!
//! Definition: `state = (state.rotl(5) ^ word) * 0x517cc1b727220a95` (FxHash's step) per word,
//! starting from `0x52_69_61_6c_74_6f` ("Rialto"); `finish()` applies the SplitMix64 finalizer
//! to `state ^ events`.

use types::{CancelReason, Event, EventSink, RejectReason, Side};

#[derive(Clone, Debug)]
pub struct EventHasher {
    state: u64,
    events: u64,
}

impl Default for EventHasher {
    fn default() -> Self {
        EventHasher::new()
    }
}

fn side_word(side: Side) -> u64 {
    match side {
        Side::Buy => 1,
        Side::Sell => 2,
    }
}

fn reject_word(reason: RejectReason) -> u64 {
    match reason {
        RejectReason::DuplicateId => 1,
        RejectReason::Invalid(field) => 0x100 + field as u64,
        RejectReason::UnknownOrder => 2,
        RejectReason::PostOnlyWouldCross => 3,
        RejectReason::CapacityExceeded => 4,
        RejectReason::AuctionCall => 5,
    }
}

fn cancel_word(reason: CancelReason) -> u64 {
    match reason {
        CancelReason::User => 1,
        CancelReason::Ioc => 2,
        CancelReason::Fok => 3,
        CancelReason::Stp => 4,
        CancelReason::NoLiquidity => 5,
        CancelReason::Expired => 6,
        CancelReason::Disconnect => 7,
        CancelReason::Collar => 8,
        CancelReason::Operator => 9,
    }
}

impl EventHasher {
    pub fn new() -> EventHasher {
        EventHasher {
            state: 0x5269_616c_746f,
            events: 0,
        }
    }

    #[inline(always)]
    fn word(&mut self, w: u64) {
        self.state = (self.state.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    /// Number of events hashed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The hash of every event so far.
    pub fn finish(&self) -> u64 {
        let mut z = self.state ^ self.events;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl EventSink for EventHasher {
    #[inline]
    fn on_event(&mut self, event: &Event) {
        self.events += 1;
        match *event {
            Event::Accepted {
                id,
                account,
                symbol,
                side,
                price,
                qty,
            } => {
                self.word(1);
                self.word(id);
                self.word(u64::from(account));
                self.word(u64::from(symbol));
                self.word(side_word(side));
                self.word(price as u64);
                self.word(qty);
            }
            Event::Rejected { id, reason } => {
                self.word(2);
                self.word(id);
                self.word(reject_word(reason));
            }
            Event::Trade {
                trade_id,
                symbol,
                price,
                qty,
                maker_id,
                taker_id,
                maker_account,
                taker_account,
                taker_side,
                maker_leaves,
                taker_leaves,
            } => {
                self.word(3);
                self.word(trade_id);
                self.word(u64::from(symbol));
                self.word(price as u64);
                self.word(qty);
                self.word(maker_id);
                self.word(taker_id);
                self.word(u64::from(maker_account));
                self.word(u64::from(taker_account));
                self.word(side_word(taker_side));
                self.word(maker_leaves);
                self.word(taker_leaves);
            }
            Event::Canceled {
                id,
                account,
                symbol,
                reason,
                qty,
            } => {
                self.word(4);
                self.word(id);
                self.word(u64::from(account));
                self.word(u64::from(symbol));
                self.word(cancel_word(reason));
                self.word(qty);
            }
            Event::Replaced {
                id,
                account,
                symbol,
                price,
                qty,
                lost_priority,
            } => {
                self.word(5);
                self.word(id);
                self.word(u64::from(account));
                self.word(u64::from(symbol));
                self.word(price as u64);
                self.word(qty);
                self.word(u64::from(lost_priority));
            }
            Event::MassCanceled { account, count } => {
                self.word(6);
                self.word(u64::from(account));
                self.word(count);
            }
            Event::Level {
                symbol,
                side,
                price,
                qty,
                orders,
            } => {
                self.word(7);
                self.word(u64::from(symbol));
                self.word(side_word(side));
                self.word(price as u64);
                self.word(qty);
                self.word(u64::from(orders));
            }
            Event::Triggered {
                id,
                account,
                symbol,
                side,
                price,
                qty,
            } => {
                self.word(8);
                self.word(id);
                self.word(u64::from(account));
                self.word(u64::from(symbol));
                self.word(side_word(side));
                self.word(price as u64);
                self.word(qty);
            }
            Event::Uncrossed { symbol, price, qty } => {
                self.word(9);
                self.word(u64::from(symbol));
                self.word(price as u64);
                self.word(qty);
            }
        }
    }
}

#[cfg(test)]
mod tests;
