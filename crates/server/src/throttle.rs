//! Per-session message rate limits, checked by the event loop as it reads a message, before
//! the message is sequenced (`Config` `[throttle]`, `config::Throttle`).
//!
//! Role: decide, per inbound message of a logged-on session, whether it passes, is refused
//! (an application message over its kind's limit or the session's message limit: the loop
//! queues a small "throttled" answer in its place, which never reaches the exchange), or ends
//! the session (over the logout limit).
//!
//! Each limit is a GCRA (generic cell rate algorithm) over integer nanoseconds: a message is
//! allowed when the limit's theoretical arrival time is at most one second ahead of now, so a
//! session may send a second's worth at once, then the rate. A refused message does not
//! count against the limit it failed; every message counts against the logout limit.
//!
//! Never: reads a clock (the loop passes its time), allocates, or touches the journal.

use crate::config::Throttle;

const SECOND_NS: u64 = 1_000_000_000;

/// One rate limit (0 per second: none).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rate {
    per_sec: u32,
    interval_ns: u64,
    /// Theoretical arrival time of the next message.
    tat: u64,
}

impl Rate {
    pub(crate) fn new(per_sec: u32) -> Rate {
        Rate {
            per_sec,
            interval_ns: if per_sec == 0 {
                0
            } else {
                (SECOND_NS / u64::from(per_sec)).max(1)
            },
            tat: 0,
        }
    }

    /// Counts one message at `now` if the limit allows it; false: over the limit (not counted).
    #[inline]
    pub(crate) fn allow(&mut self, now: u64) -> bool {
        if self.interval_ns == 0 {
            return true;
        }
        let tat = self.tat.max(now);
        if tat + self.interval_ns > now + SECOND_NS {
            return false;
        }
        self.tat = tat + self.interval_ns;
        true
    }
}

/// What kind of limit a message counts against besides the session's message limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// NewOrderSingle, OrderCancelReplaceRequest.
    Order,
    /// OrderCancelRequest, OrderMassCancelRequest.
    Cancel,
    /// Any other application message (status requests, ...).
    OtherApp,
    /// A session-level message: never refused (the session layer needs it), but counted.
    Session,
}

/// What the loop does with a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Pass,
    /// Refused: over the limit of new orders (`Orders`), cancels or messages, with its value.
    Orders(u32),
    Cancels(u32),
    Messages(u32),
    /// Over the logout limit (its value): the session is logged out.
    Logout(u32),
}

/// One session's limits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Guard {
    orders: Rate,
    cancels: Rate,
    messages: Rate,
    logout: Rate,
}

impl Guard {
    pub(crate) fn new(t: &Throttle) -> Guard {
        Guard {
            orders: Rate::new(t.orders_per_sec),
            cancels: Rate::new(t.cancels_per_sec),
            messages: Rate::new(t.messages_per_sec),
            logout: Rate::new(t.logout_messages_per_sec),
        }
    }

    /// The verdict on one message of class `c` read at `now` (ns).
    #[inline]
    pub(crate) fn check(&mut self, c: Class, now: u64) -> Verdict {
        if !self.logout.allow(now) {
            return Verdict::Logout(self.logout.per_sec);
        }
        if c == Class::Session {
            self.messages.allow(now);
            return Verdict::Pass;
        }
        // Both the kind's limit and the message limit must have room; only then is either
        // counted.
        let kind = match c {
            Class::Order => Some(&mut self.orders),
            Class::Cancel => Some(&mut self.cancels),
            _ => None,
        };
        if let Some(k) = kind {
            let probe = *k;
            if !k.allow(now) {
                return match c {
                    Class::Order => Verdict::Orders(probe.per_sec),
                    _ => Verdict::Cancels(probe.per_sec),
                };
            }
            if !self.messages.allow(now) {
                *k = probe;
                return Verdict::Messages(self.messages.per_sec);
            }
            return Verdict::Pass;
        }
        if !self.messages.allow(now) {
            return Verdict::Messages(self.messages.per_sec);
        }
        Verdict::Pass
    }
}

#[cfg(test)]
mod tests;
