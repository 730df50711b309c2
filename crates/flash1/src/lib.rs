//! flash1: Rialto's matching engine behind the C ABI of the public flash1 matching-engine
//! benchmark (github.com/flash1-dev/matching-engine-benchmark, `api/matching_engine_api.h`).
//!
//! Role: a cdylib the flash1 harness loads with `dlopen`. It exports `engine_init`,
//! `engine_shutdown`, `engine_on_new_order`, `engine_on_cancel`, `engine_on_modify`,
//! `engine_on_batch`, `engine_flush` and the three `engine_query_*` audit queries. The book is
//! `engine::Engine` itself; `adapter` translates messages into commands and events into flash1
//! reports, which go into the report transport the harness hands to `engine_init`.
//!
//! Transport: by default the library exports `engine_get_transport`, offering `ring::Ring`, which
//! publishes reports to the drainer in batches (the header allows an engine its own queue; it
//! changes only how reports travel, never which). `RIALTO_FLASH1_TRANSPORT=harness` in the
//! environment declines it, so the harness's default queue is used; any transport the harness
//! passes to `engine_init` other than the ring is driven through its `push`.
//!
//! Never: matches outside the engine, answers a query from a shadow book, looks ahead across a
//! batch (each message is fully matched and reported before the next is read), or defers work
//! past `engine_flush` (matching is synchronous on the calling thread).
//!
//! Invariants: the harness calls every function from one thread at a time (the contract); the
//! state lives behind a `Mutex` anyway, so any other use is serialized rather than undefined.
//! This module holds the crate's only `unsafe` code: reading the harness's message pointers and
//! calling the transport's C function pointer, each with a `// SAFETY:` comment.

pub mod abi;
pub mod adapter;
pub mod ring;

use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

use abi::{CancelMsg, MeMsg, ModifyMsg, NewOrderMsg, Report, Transport, MSG_CANCEL, MSG_NEW};
use adapter::{Adapter, ReportOut};
use ring::Ring;

/// Reports into the harness-supplied transport (`transport->push(report_sink, &report)`).
struct HarnessOut {
    push: Option<unsafe extern "C" fn(*mut c_void, *const Report) -> i32>,
    handle: *mut c_void,
    /// Reports that could not be delivered because the transport has no `push`.
    dropped: u64,
}

// SAFETY: the handle is only used under the `STATE` mutex, i.e. by one thread at a time, which
// is exactly the single-producer use the harness's transport is built for.
unsafe impl Send for HarnessOut {}

impl ReportOut for HarnessOut {
    #[inline]
    fn push(&mut self, report: &Report) {
        let Some(push) = self.push else {
            self.dropped += 1;
            return;
        };
        // SAFETY: `push` and `handle` came together from the harness in `engine_init` and stay
        // valid until `engine_shutdown`; `report` is a valid `me_report_t` for the call. A full
        // queue returns 0 and is retried until the drainer thread makes room.
        while unsafe { push(self.handle, report) } == 0 {
            std::hint::spin_loop();
        }
    }
}

/// Where this run's reports go.
enum Out {
    Harness(HarnessOut),
    /// The ring `ring_create` made; it outlives the engine (the harness destroys the transport
    /// after `engine_shutdown`).
    Ring(&'static Ring),
}

impl ReportOut for Out {
    #[inline]
    fn push(&mut self, report: &Report) {
        match self {
            Out::Ring(r) => {
                r.push(report, true);
            }
            Out::Harness(h) => h.push(report),
        }
    }
}

impl Out {
    /// Makes every report pushed so far visible to the drainer.
    #[inline]
    fn publish(&self) {
        if let Out::Ring(r) = self {
            r.publish();
        }
    }
}

struct State {
    adapter: Adapter,
    out: Out,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn state() -> MutexGuard<'static, Option<State>> {
    // A poisoned lock means a panic mid-message; the book may be half-updated, but the only
    // panics the engine has are its own invariant checks, so carry on and let the hash judge.
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// `engine_init`: builds an empty book that reports into `transport->push(report_sink, ..)`.
///
/// # Safety
/// `transport` is NULL or points to a valid `me_transport_t` whose `push` accepts `report_sink`
/// until `engine_shutdown`.
#[no_mangle]
pub unsafe extern "C" fn engine_init(
    _seed: u64,
    transport: *const Transport,
    report_sink: *mut c_void,
) {
    let out = if std::ptr::eq(transport, &RING_TRANSPORT) && !report_sink.is_null() {
        // SAFETY: with our own vtable the handle is the `Ring` that `ring_create` leaked; the
        // harness destroys it only after `engine_shutdown`, which drops this reference.
        Out::Ring(unsafe { &*(report_sink as *const Ring) })
    } else {
        // SAFETY: the caller passes NULL or a valid vtable (see above); `as_ref` handles NULL.
        let push = unsafe { transport.as_ref() }.and_then(|t| t.push);
        if push.is_none() {
            eprintln!(
                "flash1: engine_init got no transport push function; reports will be dropped"
            );
        }
        Out::Harness(HarnessOut {
            push,
            handle: report_sink,
            dropped: 0,
        })
    };
    *state() = Some(State {
        adapter: Adapter::new(),
        out,
    });
}

/// `engine_shutdown`: frees the book, saying on stderr if any message had no report.
#[no_mangle]
pub extern "C" fn engine_shutdown() {
    if let Some(s) = state().take() {
        let u = s.adapter.unrepresentable();
        let dropped = match &s.out {
            Out::Harness(h) => h.dropped,
            Out::Ring(r) => {
                r.publish();
                0
            }
        };
        if u != adapter::Unrepresentable::default() || dropped != 0 {
            eprintln!(
                "flash1: messages without a flash1 report: {} new, {} cancel, {} modify; \
                 reports dropped: {}",
                u.new_orders, u.cancels, u.modifies, dropped
            );
        }
    }
}

/// `engine_on_new_order`.
///
/// # Safety
/// `order` is NULL (ignored) or points to a valid `new_order_t`.
#[no_mangle]
pub unsafe extern "C" fn engine_on_new_order(order: *const NewOrderMsg) {
    // SAFETY: the caller passes NULL or a valid, aligned `new_order_t`.
    let Some(m) = (unsafe { order.as_ref() }) else {
        return;
    };
    if let Some(s) = state().as_mut() {
        s.adapter.on_new_order(m, &mut s.out);
        s.out.publish();
    }
}

/// `engine_on_cancel`.
///
/// # Safety
/// `cancel` is NULL (ignored) or points to a valid `cancel_t`.
#[no_mangle]
pub unsafe extern "C" fn engine_on_cancel(cancel: *const CancelMsg) {
    // SAFETY: the caller passes NULL or a valid, aligned `cancel_t`.
    let Some(m) = (unsafe { cancel.as_ref() }) else {
        return;
    };
    if let Some(s) = state().as_mut() {
        s.adapter.on_cancel(m, &mut s.out);
        s.out.publish();
    }
}

/// `engine_on_modify`.
///
/// # Safety
/// `modify` is NULL (ignored) or points to a valid `modify_t`.
#[no_mangle]
pub unsafe extern "C" fn engine_on_modify(modify: *const ModifyMsg) {
    // SAFETY: the caller passes NULL or a valid, aligned `modify_t`.
    let Some(m) = (unsafe { modify.as_ref() }) else {
        return;
    };
    if let Some(s) = state().as_mut() {
        s.adapter.on_modify(m, &mut s.out);
        s.out.publish();
    }
}

/// `engine_on_batch`: `n` messages, each matched and reported in array order exactly as if it
/// had come alone (no lookahead).
///
/// # Safety
/// `msgs` points to `n` valid, aligned `me_msg_t` whose `type` names the live union arm (or is
/// NULL, or `n` is 0).
#[no_mangle]
pub unsafe extern "C" fn engine_on_batch(msgs: *const MeMsg, n: u32) {
    if msgs.is_null() || n == 0 {
        return;
    }
    // SAFETY: the caller passes `n` valid, aligned, initialized `me_msg_t` (checked non-NULL).
    let msgs = unsafe { std::slice::from_raw_parts(msgs, n as usize) };
    let mut guard = state();
    let Some(s) = guard.as_mut() else {
        return;
    };
    for msg in msgs {
        // SAFETY: `msg_type` selects the union arm the harness wrote (header contract); an
        // unknown type is skipped, never read.
        match msg.msg_type {
            MSG_NEW => s
                .adapter
                .on_new_order(unsafe { &msg.payload.new_order }, &mut s.out),
            MSG_CANCEL => s
                .adapter
                .on_cancel(unsafe { &msg.payload.cancel }, &mut s.out),
            abi::MSG_MODIFY => s
                .adapter
                .on_modify(unsafe { &msg.payload.modify }, &mut s.out),
            _ => {}
        }
    }
    s.out.publish();
}

/// `engine_flush`: matching is synchronous and every report is pushed (and published) before
/// the message's call returns; this publishes once more for good measure.
#[no_mangle]
pub extern "C" fn engine_flush() {
    if let Some(s) = state().as_ref() {
        s.out.publish();
    }
}

/// The ring transport's vtable (see the crate docs).
static RING_TRANSPORT: Transport = Transport {
    create: Some(ring_create),
    push: Some(ring_push),
    drain: Some(ring_drain),
    flush: Some(ring_flush),
    destroy: Some(ring_destroy),
};

/// `engine_get_transport`: the ring, unless `RIALTO_FLASH1_TRANSPORT=harness` (then NULL, which
/// the harness takes as "use the default queue").
#[no_mangle]
pub extern "C" fn engine_get_transport() -> *const Transport {
    match std::env::var("RIALTO_FLASH1_TRANSPORT") {
        Ok(v) if v == "harness" => std::ptr::null(),
        _ => &RING_TRANSPORT,
    }
}

unsafe extern "C" fn ring_create(capacity: u32) -> *mut c_void {
    Box::into_raw(Box::new(Ring::new(capacity as usize))) as *mut c_void
}

/// # Safety
/// `handle` came from `ring_create` and is not destroyed; only the producer thread pushes.
unsafe extern "C" fn ring_push(handle: *mut c_void, report: *const Report) -> i32 {
    // SAFETY: see above; `report` is NULL or a valid report for the call.
    match unsafe { ((handle as *const Ring).as_ref(), report.as_ref()) } {
        (Some(ring), Some(r)) => i32::from(ring.push(r, false)),
        _ => 0,
    }
}

/// # Safety
/// `handle` came from `ring_create`; `out` has room for `max` reports; one consumer thread.
unsafe extern "C" fn ring_drain(handle: *mut c_void, out: *mut Report, max: u32) -> u32 {
    if out.is_null() || max == 0 {
        return 0;
    }
    // SAFETY: see above: a live ring, and `max` writable reports at `out`.
    let (ring, out) = unsafe {
        (
            (handle as *const Ring).as_ref(),
            std::slice::from_raw_parts_mut(out, max as usize),
        )
    };
    ring.map_or(0, |r| r.drain(out) as u32)
}

/// # Safety
/// `handle` came from `ring_create`; called on the producer thread.
unsafe extern "C" fn ring_flush(handle: *mut c_void) {
    // SAFETY: see above.
    if let Some(r) = unsafe { (handle as *const Ring).as_ref() } {
        r.publish();
    }
}

/// # Safety
/// `handle` came from `ring_create`, is destroyed once, and nothing uses it afterwards.
unsafe extern "C" fn ring_destroy(handle: *mut c_void) {
    if !handle.is_null() {
        // SAFETY: see above; this is the `Box` `ring_create` leaked.
        drop(unsafe { Box::from_raw(handle as *mut Ring) });
    }
}

/// `engine_query_best_bid`: the engine's best bid, or `INT64_MIN` if there is none.
#[no_mangle]
pub extern "C" fn engine_query_best_bid() -> i64 {
    state().as_ref().map_or(i64::MIN, |s| s.adapter.best_bid())
}

/// `engine_query_best_ask`: the engine's best ask, or `INT64_MAX` if there is none.
#[no_mangle]
pub extern "C" fn engine_query_best_ask() -> i64 {
    state().as_ref().map_or(i64::MAX, |s| s.adapter.best_ask())
}

/// `engine_query_depth_at`: resting quantity at exactly `price_ticks` (`side` 0 buy, 1 sell).
#[no_mangle]
pub extern "C" fn engine_query_depth_at(price_ticks: i64, side: u8) -> u64 {
    state()
        .as_ref()
        .map_or(0, |s| s.adapter.depth_at(price_ticks, side))
}
