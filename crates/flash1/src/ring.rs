//! The adapter's own report transport: a single-producer, single-consumer ring of reports that
//! publishes in small batches.
//!
//! Role: flash1 lets an engine supply its report queue (`engine_get_transport`). The harness's
//! default queue publishes every report on its own (one release store, and the drainer core pulls
//! the index line back each time); this ring lets the matcher write a run of reports, then publish
//! them with one store: every `PUBLISH_EVERY` reports and at the end of each `engine_on_*` call,
//! `engine_flush` and the transport's `flush`. Every report still crosses to the drainer thread
//! inside the timed window.
//!
//! Never: drops, reorders or coalesces a report; blocks the consumer; uses `unsafe` (slots are
//! eight `AtomicU64` words, written and read with relaxed stores and loads, ordered by the
//! release/acquire pair on the indices).
//!
//! Invariants: `consumer <= published <= written <= consumer + capacity`; only the producer
//! writes `written`, `published` and `cached_consumer`; only the consumer writes `consumer`.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::abi::Report;

/// Reports written before the producer publishes them without waiting for the call's end.
pub const PUBLISH_EVERY: usize = 64;

/// Keeps producer and consumer indices on separate cache lines.
#[repr(align(128))]
struct Line<T>(T);

/// The producer's indices.
struct Producer {
    /// Reports written (not necessarily visible yet).
    written: AtomicUsize,
    /// The consumer index as last seen, to test for room without touching its line.
    cached_consumer: AtomicUsize,
}

pub struct Ring {
    slots: Box<[[AtomicU64; 8]]>,
    mask: usize,
    producer: Line<Producer>,
    /// Reports visible to the consumer (producer writes, consumer reads).
    published: Line<AtomicUsize>,
    /// Reports consumed (consumer writes, producer reads when the ring looks full).
    consumer: Line<AtomicUsize>,
}

#[inline]
fn encode(r: &Report) -> [u64; 8] {
    [
        u64::from(r.report_type) | u64::from(r.side) << 8,
        r.sequence_number,
        r.order_id,
        r.price_ticks as u64,
        u64::from(r.quantity),
        r.maker_order_id,
        r.taker_order_id,
        0,
    ]
}

#[inline]
fn decode(w: [u64; 8]) -> Report {
    Report {
        report_type: w[0] as u8,
        side: (w[0] >> 8) as u8,
        sequence_number: w[1],
        order_id: w[2],
        price_ticks: w[3] as i64,
        quantity: w[4] as u32,
        maker_order_id: w[5],
        taker_order_id: w[6],
        ..Report::default()
    }
}

impl Ring {
    /// A ring with room for at least `capacity` reports (at least 1024), every page touched now
    /// so that no page fault lands inside the timed window.
    pub fn new(capacity: usize) -> Ring {
        let cap = capacity.clamp(1024, 1 << 26).next_power_of_two();
        let slots: Box<[[AtomicU64; 8]]> = (0..cap)
            .map(|_| std::array::from_fn(|_| AtomicU64::new(0)))
            .collect();
        for s in slots.iter() {
            // A non-zero store, so it is not elided as a write of zero into zeroed memory.
            s[7].store(1, Ordering::Relaxed);
        }
        Ring {
            slots,
            mask: cap - 1,
            producer: Line(Producer {
                written: AtomicUsize::new(0),
                cached_consumer: AtomicUsize::new(0),
            }),
            published: Line(AtomicUsize::new(0)),
            consumer: Line(AtomicUsize::new(0)),
        }
    }

    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// Producer: appends a report, publishing every `PUBLISH_EVERY`. When the ring is full it
    /// publishes and waits for the consumer (`spin` false: returns false instead of waiting).
    #[inline]
    pub fn push(&self, r: &Report, spin: bool) -> bool {
        let p = &self.producer.0;
        let w = p.written.load(Ordering::Relaxed);
        if w - p.cached_consumer.load(Ordering::Relaxed) > self.mask {
            self.publish();
            loop {
                let c = self.consumer.0.load(Ordering::Acquire);
                p.cached_consumer.store(c, Ordering::Relaxed);
                if w - c <= self.mask {
                    break;
                }
                if !spin {
                    return false;
                }
                std::hint::spin_loop();
            }
        }
        let slot = &self.slots[w & self.mask];
        for (dst, v) in slot.iter().zip(encode(r)) {
            dst.store(v, Ordering::Relaxed);
        }
        p.written.store(w + 1, Ordering::Relaxed);
        if (w + 1) & (PUBLISH_EVERY - 1) == 0 {
            self.published.0.store(w + 1, Ordering::Release);
        }
        true
    }

    /// Producer: makes every written report visible to the consumer.
    #[inline]
    pub fn publish(&self) {
        let w = self.producer.0.written.load(Ordering::Relaxed);
        if self.published.0.load(Ordering::Relaxed) != w {
            self.published.0.store(w, Ordering::Release);
        }
    }

    /// Consumer: moves up to `out.len()` published reports into `out`; returns how many.
    pub fn drain(&self, out: &mut [Report]) -> usize {
        let c = self.consumer.0.load(Ordering::Relaxed);
        let p = self.published.0.load(Ordering::Acquire);
        let n = (p - c).min(out.len());
        for (i, o) in out[..n].iter_mut().enumerate() {
            let slot = &self.slots[(c + i) & self.mask];
            *o = decode(std::array::from_fn(|k| slot[k].load(Ordering::Relaxed)));
        }
        if n > 0 {
            self.consumer.0.store(c + n, Ordering::Release);
        }
        n
    }
}

#[cfg(test)]
mod tests;
