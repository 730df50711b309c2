//! What the FIX edge is configured with: the sessions it accepts and what it needs of the
//! instruments to read and write prices.

use fix::FixVersion;
use types::Symbol;

/// One FIX session the edge accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionDef {
    /// The counterparty's SenderCompID (49).
    pub sender_comp_id: String,
    /// Ours (the counterparty's TargetCompID, 56).
    pub target_comp_id: String,
    pub version: FixVersion,
    /// If set, its Logon's Password (554) must match this salted hash (a PHC string,
    /// `$argon2id$...`, made by `rialto passwd`). The server verifies it before the Logon
    /// is journaled; the edge reads only the verdict (`fix::Logon::credentials`).
    pub password_hash: Option<String>,
    /// If set, its Logon must carry this Username (553).
    pub username: Option<String>,
    /// The firm it trades for (an index into the exchange's firms).
    pub firm: u16,
    /// Where it may log on: order entry, market data, or both.
    pub market_data: MarketDataAccess,
    /// Market data with RptSeq (83) in FIX 4.2 and 4.4 and AggressorSide (2446) on trades,
    /// for clients whose dictionaries allow them.
    pub market_data_extensions: bool,
    /// A Logon with ResetSeqNumFlag (141=Y) may reset the sequence numbers.
    pub allow_reset_seq_num: bool,
    /// Inbound messages are checked against the version's dictionary (`fix::dict`).
    pub validate: bool,
    /// A drop-copy session of `firm`: it enters no orders (each order message gets a
    /// BusinessMessageReject) and gets a copy of every ExecutionReport about the firm's
    /// orders, whichever session entered them, in its own version and sequence.
    pub drop_copy: bool,
}

impl SessionDef {
    /// Its Logon must have credentials the server accepted (a password or a username is
    /// configured).
    pub fn authenticates(&self) -> bool {
        self.password_hash.is_some() || self.username.is_some()
    }
}

/// What a session may do: enter orders at the order-entry port, subscribe at the
/// market-data port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MarketDataAccess {
    /// Both (the default).
    #[default]
    On,
    /// Orders only: its Logon at the market-data port is refused.
    Off,
    /// Market data only: its Logon at the order-entry port is refused.
    Only,
}

/// An instrument as FIX shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstrumentDef {
    pub symbol: Symbol,
    /// Tick in price units.
    pub tick: i64,
    /// Lot: the quantity increment (RoundLot).
    pub lot: u64,
    /// Decimals of a price unit (a tick of 0.01 and price units of 0.01: 2).
    pub price_decimals: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixConfig {
    pub sessions: Vec<SessionDef>,
    pub instruments: Vec<InstrumentDef>,
    /// Application messages each session keeps for ResendRequest (older ones are
    /// gap-filled).
    pub resend_store_max: usize,
    /// The accepted HeartBtInt (108) range, in seconds.
    pub heartbeat_min_s: u64,
    pub heartbeat_max_s: u64,
    /// Inbound SendingTime (52) further than this from the record's time is refused (Reject
    /// 373=10, then Logout); `None`: not checked.
    pub sending_time_window_ns: Option<u64>,
}

impl FixConfig {
    /// The session `(sender, target)` names, if configured.
    pub fn find_session(&self, sender: &[u8], target: &[u8]) -> Option<usize> {
        self.sessions.iter().position(|d| {
            d.sender_comp_id.as_bytes() == sender && d.target_comp_id.as_bytes() == target
        })
    }

    /// A stable 64-bit hash (FNV-1a) of a session's SenderCompID and TargetCompID, as the
    /// client sends them: how a checkpoint names a session.
    pub fn comp_ids_hash(sender: &str, target: &str) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for &b in sender
            .as_bytes()
            .iter()
            .chain(&[1u8])
            .chain(target.as_bytes())
        {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }
}
