//! Limits and throttles: `[throttle]` (and a session's own `throttle = { ... }`), and the
//! defaults of the capacity settings.
//!
//! Role: a session's message rate limits, from the defaults, the global keys and its own keys,
//! in that order of precedence; the defaults of `batch_budget` and `firm_capacity_percent`.
//!
//! Never: leaves a session without rate limits unless a key sets one to 0.
//!
//! Invariants: every configured session has a `Throttle` (`SessionDef::throttle`).

use serde::Deserialize;

/// Default of [`Config::batch_budget`](super::Config::batch_budget): application messages one
/// event-loop iteration applies before the rest of what it read waits for the next iteration.
pub const BATCH_BUDGET_DEFAULT: usize = 1024;

/// `[throttle]` of `rialto.toml`, or a session's own `throttle = { ... }` (every key optional;
/// a session's keys override the global ones, which override the defaults).
#[derive(Clone, Copy, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ThrottleFile {
    pub orders_per_sec: Option<u32>,
    pub cancels_per_sec: Option<u32>,
    pub messages_per_sec: Option<u32>,
    pub logout_messages_per_sec: Option<u32>,
}

/// A session's message rate limits, each over any one second (a burst of a second's worth is
/// allowed, then the rate); 0: no limit. Over `orders_per_sec` (NewOrderSingle and
/// OrderCancelReplaceRequest), `cancels_per_sec` (OrderCancelRequest and
/// OrderMassCancelRequest) or `messages_per_sec` (every inbound message, session-level ones
/// included), an application message is answered with a reject naming the limit and never
/// reaches the exchange; over `logout_messages_per_sec` the session is logged out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttle {
    pub orders_per_sec: u32,
    pub cancels_per_sec: u32,
    pub messages_per_sec: u32,
    pub logout_messages_per_sec: u32,
}

impl Throttle {
    /// The defaults of a session: a fast algorithmic client's rates, far below what the
    /// exchange absorbs, so that one session cannot take the others' share.
    pub const DEFAULT: Throttle = Throttle {
        orders_per_sec: 5_000,
        cancels_per_sec: 5_000,
        messages_per_sec: 10_000,
        logout_messages_per_sec: 50_000,
    };

    /// `base` with the keys `f` gives.
    pub(super) fn with(self, f: &ThrottleFile) -> Throttle {
        Throttle {
            orders_per_sec: f.orders_per_sec.unwrap_or(self.orders_per_sec),
            cancels_per_sec: f.cancels_per_sec.unwrap_or(self.cancels_per_sec),
            messages_per_sec: f.messages_per_sec.unwrap_or(self.messages_per_sec),
            logout_messages_per_sec: f
                .logout_messages_per_sec
                .unwrap_or(self.logout_messages_per_sec),
        }
    }
}

/// The throttle of the default contract's `BOT*` sessions (`rialto bench`, `rialto demo`):
/// high enough for the benchmarks' sweeps.
pub(super) const BOT_THROTTLE: ThrottleFile = ThrottleFile {
    orders_per_sec: Some(200_000),
    cancels_per_sec: Some(200_000),
    messages_per_sec: Some(400_000),
    logout_messages_per_sec: Some(2_000_000),
};

/// Default of [`Config::firm_capacity_percent`](super::Config::firm_capacity_percent): one firm
/// may rest at most a quarter of `orders_max` (262,144 orders of the default 1,048,576: far more
/// than one participant rests in normal trading), so a runaway firm leaves three quarters of the
/// book to the others, and filling it takes four firms at their caps at once. A firm's own
/// `max_open_orders` may only lower it; a venue with few firms that need more raises the
/// percentage.
pub const FIRM_CAPACITY_PERCENT_DEFAULT: u32 = 25;
