//! The C structs of flash1's `api/matching_engine_api.h`, mirrored field for field.
//!
//! Role: the byte layout the harness and this library share. Sizes are checked at compile time
//! against the header's `static_assert`s.
//!
//! Never: holds logic; every type is plain old data.
#![forbid(unsafe_code)]

use std::ffi::c_void;

/// `new_order_t`: one new order (`side` 0 = buy, 1 = sell; `ioc` 1 = immediate-or-cancel).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewOrderMsg {
    pub order_id: u64,
    pub sequence_number: u64,
    pub price_ticks: i64,
    pub quantity: u32,
    pub side: u8,
    pub ioc: u8,
    pub reserved: [u8; 2],
}

/// `cancel_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CancelMsg {
    pub order_id: u64,
    pub sequence_number: u64,
}

/// `modify_t`: cancel plus reinsert at a new price and absolute quantity.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModifyMsg {
    pub order_id: u64,
    pub sequence_number: u64,
    pub new_price_ticks: i64,
    pub new_quantity: u32,
    pub side: u8,
    pub reserved: [u8; 3],
}

/// The union inside `me_msg_t`; `MeMsg::msg_type` says which arm is live.
#[repr(C)]
#[derive(Clone, Copy)]
pub union MsgPayload {
    pub new_order: NewOrderMsg,
    pub cancel: CancelMsg,
    pub modify: ModifyMsg,
}

/// `me_msg_t`: one tagged message of an `engine_on_batch` run.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MeMsg {
    /// 0 = new order, 1 = cancel, 2 = modify.
    pub msg_type: u8,
    pub reserved: [u8; 7],
    pub payload: MsgPayload,
}

pub const MSG_NEW: u8 = 0;
pub const MSG_CANCEL: u8 = 1;
pub const MSG_MODIFY: u8 = 2;

/// `me_report_type_t`.
pub const ORDER_ACK: u8 = 0;
pub const TRADE: u8 = 1;
pub const CANCEL_ACK: u8 = 2;
pub const MODIFY_ACK: u8 = 3;
pub const CANCEL_REJECT: u8 = 4;
pub const MODIFY_REJECT: u8 = 5;

/// `me_report_t`: one report, a 64-byte cache line.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub report_type: u8,
    pub side: u8,
    pub reserved: [u8; 6],
    pub sequence_number: u64,
    pub order_id: u64,
    pub price_ticks: i64,
    pub quantity: u32,
    pub reserved2: u32,
    pub maker_order_id: u64,
    pub taker_order_id: u64,
    pub reserved3: u64,
}

/// `me_transport_t`: the report queue's vtable. Any entry may be NULL in an engine-supplied
/// transport that does not use it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Transport {
    pub create: Option<unsafe extern "C" fn(capacity: u32) -> *mut c_void>,
    pub push: Option<unsafe extern "C" fn(handle: *mut c_void, report: *const Report) -> i32>,
    pub drain: Option<unsafe extern "C" fn(handle: *mut c_void, out: *mut Report, max: u32) -> u32>,
    pub flush: Option<unsafe extern "C" fn(handle: *mut c_void)>,
    pub destroy: Option<unsafe extern "C" fn(handle: *mut c_void)>,
}

const _: () = assert!(std::mem::size_of::<NewOrderMsg>() == 32);
const _: () = assert!(std::mem::size_of::<CancelMsg>() == 16);
const _: () = assert!(std::mem::size_of::<ModifyMsg>() == 32);
const _: () = assert!(std::mem::size_of::<MeMsg>() == 40);
const _: () = assert!(std::mem::size_of::<Report>() == 64);
const _: () = assert!(std::mem::size_of::<Transport>() == 5 * std::mem::size_of::<usize>());
