//! Market-data and reference-data messages: typed readers of what subscribers send
//! (MarketDataRequest V, SecurityListRequest x, SecurityStatusRequest e), builders of what
//! Rialto answers (MarketDataSnapshotFullRefresh W, MarketDataIncrementalRefresh X,
//! MarketDataRequestReject Y, SecurityList y, SecurityStatus f), and a subscriber's reader of
//! W and X ([`read_entries`]), in FIX 4.2, 4.4 and 5.0SP2.
//!
//! Role: say exactly what the wire said and write each answer with the fields its version's
//! dictionary defines, so that a strict client (QuickFIX/J with validation on) accepts it:
//! RptSeq (83) on W and X entries only in FIX 5.0SP2 (or when the caller asks for it), an
//! empty book as an EmptyBook entry (269=J) only in FIX 5.0SP2, MinPriceIncrement (969) only
//! in FIX 5.0SP2, no SecurityList in FIX 4.2 (the caller refuses x there).
//!
//! Never: decides which symbols exist or what a subscriber may see (the caller's), uses
//! floats.
//!
//! Invariants: a reader checks fields in a fixed order and reports the first problem; every
//! builder writes the fields in one fixed order per version, group fields in the dictionary's
//! order.

use types::Side;

use crate::decode::{parse_u64, Message};
use crate::encode::Encoder;
use crate::tags;
use crate::{FixVersion, SessionRejectReason};

/// MsgTypes of this module.
pub mod msg_type {
    pub const MARKET_DATA_REQUEST: &[u8] = b"V";
    pub const MARKET_DATA_SNAPSHOT: &[u8] = b"W";
    pub const MARKET_DATA_INCREMENTAL: &[u8] = b"X";
    pub const MARKET_DATA_REQUEST_REJECT: &[u8] = b"Y";
    pub const SECURITY_LIST_REQUEST: &[u8] = b"x";
    pub const SECURITY_LIST: &[u8] = b"y";
    pub const SECURITY_STATUS_REQUEST: &[u8] = b"e";
    pub const SECURITY_STATUS: &[u8] = b"f";
}

/// Symbols one MarketDataRequest may name.
pub const SYMBOLS_MAX: usize = 64;
/// Longest MDReqID, SecurityReqID or SecurityStatusReqID accepted.
pub const REQ_ID_LEN_MAX: usize = 64;

/// SubscriptionRequestType (263).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubscriptionType {
    /// 0: one snapshot.
    Snapshot,
    /// 1: a snapshot, then updates.
    Subscribe,
    /// 2: stop the updates of the MDReqID.
    Unsubscribe,
}

/// MDEntryType (269) values Rialto publishes, as a set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EntryTypes {
    pub bids: bool,
    pub offers: bool,
    pub trades: bool,
    /// Q: the indicative uncross of a call auction (auction clearing price; FIX 5.0SP2).
    pub indicative: bool,
}

/// MDReqRejReason (281) values Rialto sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MdRejectReason {
    UnknownSymbol,
    DuplicateMdReqId,
    InsufficientBandwidth,
    InsufficientPermissions,
    UnsupportedSubscriptionRequestType,
    UnsupportedMarketDepth,
    UnsupportedMdUpdateType,
    UnsupportedAggregatedBook,
    UnsupportedMdEntryType,
}

impl MdRejectReason {
    /// Every reason (tests drive each one through every version).
    pub const ALL: [MdRejectReason; 9] = [
        MdRejectReason::UnknownSymbol,
        MdRejectReason::DuplicateMdReqId,
        MdRejectReason::InsufficientBandwidth,
        MdRejectReason::InsufficientPermissions,
        MdRejectReason::UnsupportedSubscriptionRequestType,
        MdRejectReason::UnsupportedMarketDepth,
        MdRejectReason::UnsupportedMdUpdateType,
        MdRejectReason::UnsupportedAggregatedBook,
        MdRejectReason::UnsupportedMdEntryType,
    ];

    pub fn code(self) -> u8 {
        match self {
            MdRejectReason::UnknownSymbol => b'0',
            MdRejectReason::DuplicateMdReqId => b'1',
            MdRejectReason::InsufficientBandwidth => b'2',
            MdRejectReason::InsufficientPermissions => b'3',
            MdRejectReason::UnsupportedSubscriptionRequestType => b'4',
            MdRejectReason::UnsupportedMarketDepth => b'5',
            MdRejectReason::UnsupportedMdUpdateType => b'6',
            MdRejectReason::UnsupportedAggregatedBook => b'7',
            MdRejectReason::UnsupportedMdEntryType => b'8',
        }
    }
}

/// Why a request was refused, and which message carries the refusal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MdRefusal {
    /// The request cannot be answered by its own reject message (its id is missing or
    /// unusable, a group count is wrong): a session-level Reject (35=3).
    Session {
        reason: SessionRejectReason,
        tag: u32,
        text: String,
    },
    /// A MarketDataRequestReject (Y) for `md_req_id`.
    Reject {
        reason: MdRejectReason,
        text: String,
    },
}

impl MdRefusal {
    fn session(reason: SessionRejectReason, tag: u32, text: impl Into<String>) -> MdRefusal {
        MdRefusal::Session {
            reason,
            tag,
            text: text.into(),
        }
    }
    fn reject(reason: MdRejectReason, text: impl Into<String>) -> MdRefusal {
        MdRefusal::Reject {
            reason,
            text: text.into(),
        }
    }
}

fn req_id<'a>(msg: &Message<'a>, tag: u32, name: &str) -> Result<&'a [u8], MdRefusal> {
    let id = msg.get(tag).ok_or_else(|| {
        MdRefusal::session(
            SessionRejectReason::RequiredTagMissing,
            tag,
            format!("{name}({tag}) missing"),
        )
    })?;
    if id.is_empty() || id.len() > REQ_ID_LEN_MAX {
        return Err(MdRefusal::session(
            SessionRejectReason::ValueIncorrect,
            tag,
            format!("{name}({tag}) empty or longer than {REQ_ID_LEN_MAX}"),
        ));
    }
    Ok(id)
}

fn subscription(msg: &Message<'_>) -> Result<SubscriptionType, MdRefusal> {
    match msg.get(tags::SUBSCRIPTION_REQUEST_TYPE) {
        None => Err(MdRefusal::session(
            SessionRejectReason::RequiredTagMissing,
            tags::SUBSCRIPTION_REQUEST_TYPE,
            "SubscriptionRequestType(263) missing",
        )),
        Some(b"0") => Ok(SubscriptionType::Snapshot),
        Some(b"1") => Ok(SubscriptionType::Subscribe),
        Some(b"2") => Ok(SubscriptionType::Unsubscribe),
        Some(_) => Err(MdRefusal::reject(
            MdRejectReason::UnsupportedSubscriptionRequestType,
            "unsupported SubscriptionRequestType(263): use 0, 1 or 2",
        )),
    }
}

/// A MarketDataRequest (35=V).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarketDataRequest<'a> {
    pub md_req_id: &'a [u8],
    pub subscription: SubscriptionType,
    /// MarketDepth (264): 0 the full book, N the best N levels (1: top of book).
    pub depth: u32,
    /// MDUpdateType (265) 1, incremental (the default); false: full refresh (W for updates).
    pub incremental: bool,
    pub entry_types: EntryTypes,
    /// Symbol (55) of each NoRelatedSym (146) entry, in order.
    pub symbols: Vec<&'a [u8]>,
}

impl<'a> MarketDataRequest<'a> {
    /// Reads a MarketDataRequest. An unsubscribe (263=2) needs only MDReqID.
    pub fn read(msg: &Message<'a>) -> Result<MarketDataRequest<'a>, MdRefusal> {
        let md_req_id = req_id(msg, tags::MD_REQ_ID, "MDReqID")?;
        let subscription = subscription(msg)?;
        let mut r = MarketDataRequest {
            md_req_id,
            subscription,
            depth: 0,
            incremental: true,
            entry_types: EntryTypes::default(),
            symbols: Vec::new(),
        };
        if subscription == SubscriptionType::Unsubscribe {
            return Ok(r);
        }
        r.depth = match msg.get(tags::MARKET_DEPTH) {
            None => {
                return Err(MdRefusal::session(
                    SessionRejectReason::RequiredTagMissing,
                    tags::MARKET_DEPTH,
                    "MarketDepth(264) missing",
                ))
            }
            Some(v) => match parse_u64(v) {
                Some(d) if d <= u32::MAX as u64 => d as u32,
                _ => {
                    return Err(MdRefusal::reject(
                        MdRejectReason::UnsupportedMarketDepth,
                        "MarketDepth(264) must be 0 (full book) or a number of levels",
                    ))
                }
            },
        };
        r.incremental = match msg.get(tags::MD_UPDATE_TYPE) {
            None | Some(b"1") => true,
            Some(b"0") => false,
            Some(_) => {
                return Err(MdRefusal::reject(
                    MdRejectReason::UnsupportedMdUpdateType,
                    "unsupported MDUpdateType(265): use 0 (full refresh) or 1 (incremental)",
                ))
            }
        };
        if let Some(v) = msg.get(tags::AGGREGATED_BOOK) {
            if v != b"Y" {
                return Err(MdRefusal::reject(
                    MdRejectReason::UnsupportedAggregatedBook,
                    "only an aggregated book (AggregatedBook 266=Y) is published",
                ));
            }
        }
        let (mut n_types, mut n_syms) = (0u64, 0u64);
        let mut counted_types = None;
        let mut counted_syms = None;
        for (tag, v) in msg.body() {
            match tag {
                tags::NO_MD_ENTRY_TYPES => counted_types = parse_u64(v),
                tags::NO_RELATED_SYM => counted_syms = parse_u64(v),
                tags::MD_ENTRY_TYPE => {
                    n_types += 1;
                    match v {
                        b"0" => r.entry_types.bids = true,
                        b"1" => r.entry_types.offers = true,
                        b"2" => r.entry_types.trades = true,
                        b"Q" => r.entry_types.indicative = true,
                        _ => {
                            return Err(MdRefusal::reject(
                                MdRejectReason::UnsupportedMdEntryType,
                                format!(
                                    "unsupported MDEntryType(269) {}: use 0 (bid), 1 (offer), 2 (trade) or, in FIX 5.0SP2, Q (auction clearing price)",
                                    String::from_utf8_lossy(v)
                                ),
                            ))
                        }
                    }
                }
                tags::SYMBOL => {
                    n_syms += 1;
                    if r.symbols.len() == SYMBOLS_MAX {
                        return Err(MdRefusal::reject(
                            MdRejectReason::UnknownSymbol,
                            format!("more than {SYMBOLS_MAX} symbols in one request"),
                        ));
                    }
                    r.symbols.push(v);
                }
                _ => {}
            }
        }
        let group = |counted: Option<u64>, n: u64, tag: u32, name: &str| match counted {
            None => Err(MdRefusal::session(
                SessionRejectReason::RequiredTagMissing,
                tag,
                format!("{name}({tag}) missing"),
            )),
            Some(c) if c != n || c == 0 => Err(MdRefusal::session(
                SessionRejectReason::IncorrectNumInGroupCount,
                tag,
                format!("{name}({tag}) says {c}, the message has {n}"),
            )),
            Some(_) => Ok(()),
        };
        group(
            counted_types,
            n_types,
            tags::NO_MD_ENTRY_TYPES,
            "NoMDEntryTypes",
        )?;
        group(counted_syms, n_syms, tags::NO_RELATED_SYM, "NoRelatedSym")?;
        Ok(r)
    }
}

/// SecurityListRequestType (559) values Rialto serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SecurityListScope<'a> {
    /// 0: the instrument Symbol (55) names.
    Symbol(&'a [u8]),
    /// 4: every instrument.
    All,
}

/// A SecurityListRequest (35=x).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SecurityListRequest<'a> {
    pub security_req_id: &'a [u8],
    /// `Err(text)`: a type Rialto does not serve, answered with SecurityRequestResult 1.
    pub scope: Result<SecurityListScope<'a>, &'static str>,
}

impl<'a> SecurityListRequest<'a> {
    pub fn read(msg: &Message<'a>) -> Result<SecurityListRequest<'a>, MdRefusal> {
        let security_req_id = req_id(msg, tags::SECURITY_REQ_ID, "SecurityReqID")?;
        let scope = match msg.get(tags::SECURITY_LIST_REQUEST_TYPE) {
            None => {
                return Err(MdRefusal::session(
                    SessionRejectReason::RequiredTagMissing,
                    tags::SECURITY_LIST_REQUEST_TYPE,
                    "SecurityListRequestType(559) missing",
                ))
            }
            Some(b"4") => Ok(SecurityListScope::All),
            Some(b"0") => match msg.get(tags::SYMBOL) {
                Some(s) => Ok(SecurityListScope::Symbol(s)),
                None => Err("SecurityListRequestType 0 needs Symbol(55)"),
            },
            Some(_) => Err("unsupported SecurityListRequestType(559): use 0 (symbol) or 4 (all)"),
        };
        Ok(SecurityListRequest {
            security_req_id,
            scope,
        })
    }
}

/// A SecurityStatusRequest (35=e).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SecurityStatusRequest<'a> {
    pub security_status_req_id: &'a [u8],
    pub symbol: &'a [u8],
    pub subscription: SubscriptionType,
}

impl<'a> SecurityStatusRequest<'a> {
    pub fn read(msg: &Message<'a>) -> Result<SecurityStatusRequest<'a>, MdRefusal> {
        let security_status_req_id =
            req_id(msg, tags::SECURITY_STATUS_REQ_ID, "SecurityStatusReqID")?;
        let symbol = msg.get(tags::SYMBOL).ok_or_else(|| {
            MdRefusal::session(
                SessionRejectReason::RequiredTagMissing,
                tags::SYMBOL,
                "Symbol(55) missing",
            )
        })?;
        let subscription = subscription(msg).map_err(|e| match e {
            MdRefusal::Reject { text, .. } => MdRefusal::session(
                SessionRejectReason::ValueIncorrect,
                tags::SUBSCRIPTION_REQUEST_TYPE,
                text,
            ),
            s => s,
        })?;
        Ok(SecurityStatusRequest {
            security_status_req_id,
            symbol,
            subscription,
        })
    }
}

/// MDEntryType (269) of a book, trade or auction entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MdEntryType {
    Bid,
    Offer,
    Trade,
    /// Q, auction clearing price (FIX 5.0SP2 only): a call auction's indicative uncross,
    /// MDEntryPx the price and MDEntrySize the volume it would trade now. Not a book change:
    /// it carries no RptSeq (83).
    AuctionClearingPrice,
}

impl MdEntryType {
    /// The entry types of every version (bids, offers, trades).
    pub const ALL: [MdEntryType; 3] = [MdEntryType::Bid, MdEntryType::Offer, MdEntryType::Trade];

    pub fn code(self) -> u8 {
        match self {
            MdEntryType::Bid => b'0',
            MdEntryType::Offer => b'1',
            MdEntryType::Trade => b'2',
            MdEntryType::AuctionClearingPrice => b'Q',
        }
    }

    /// Whether an entry of this type carries RptSeq (83) where the version has it: book and
    /// trade entries do, an indicative uncross (Q) does not.
    fn sequenced(self) -> bool {
        self != MdEntryType::AuctionClearingPrice
    }
    pub fn of_side(side: Side) -> MdEntryType {
        match side {
            Side::Buy => MdEntryType::Bid,
            Side::Sell => MdEntryType::Offer,
        }
    }
}

/// One entry of a W or X: a price level or a trade, its price in units of
/// `10^-price_decimals`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MdEntry<'a> {
    pub symbol: &'a [u8],
    pub price_decimals: u32,
    /// MDUpdateAction (279) in an X: 0 new, 1 change, 2 delete.
    pub action: u8,
    pub entry_type: MdEntryType,
    pub price: i64,
    /// MDEntrySize (271): a level's total, a trade's quantity.
    pub size: u64,
    /// NumberOfOrders (346) of a level.
    pub orders: Option<u32>,
    /// A trade's id: MDEntryID (278), and TradeID (1003) in FIX 5.0SP2.
    pub trade_id: Option<u64>,
    /// A trade's aggressor (AggressorSide 2446, only with `extensions`).
    pub aggressor: Option<Side>,
    pub rpt_seq: u64,
}

/// Whether to write RptSeq (83) on entries: FIX 5.0SP2 defines it; FIX 4.2 and 4.4 do not,
/// unless the session's `market_data_extensions` asks for it (with AggressorSide 2446).
fn rpt_seq_on(version: FixVersion, extensions: bool) -> bool {
    extensions || version == FixVersion::Fix50Sp2
}

fn side_code(side: Side) -> u8 {
    match side {
        Side::Buy => b'1',
        Side::Sell => b'2',
    }
}

/// MarketDataSnapshotFullRefresh (35=W) of one symbol: its levels (and, for a full-refresh
/// subscription, the trades since the last one), at the instrument's RptSeq `rpt_seq`.
pub struct MarketDataSnapshot<'a> {
    pub md_req_id: &'a [u8],
    pub symbol: &'a [u8],
    pub extensions: bool,
    pub entries: &'a [MdEntry<'a>],
    /// Written on each entry where RptSeq exists; an empty book there is one EmptyBook
    /// (269=J) entry carrying it.
    pub rpt_seq: u64,
}

impl MarketDataSnapshot<'_> {
    pub fn msg_type(&self) -> &'static [u8] {
        msg_type::MARKET_DATA_SNAPSHOT
    }

    pub fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::MD_REQ_ID, self.md_req_id);
        enc.field(tags::SYMBOL, self.symbol);
        let rpt = rpt_seq_on(version, self.extensions);
        // An empty book still says its RptSeq: as an EmptyBook entry (269=J), which FIX 5.0SP2
        // defines and an extensions session accepts (also beside an indicative uncross alone,
        // which carries none).
        let empty = !self.entries.iter().any(|e| e.entry_type.sequenced());
        let n = self.entries.len() + (empty && rpt) as usize;
        enc.field_u64(tags::NO_MD_ENTRIES, n as u64);
        if empty && rpt {
            enc.field_char(tags::MD_ENTRY_TYPE, b'J');
            enc.field_u64(tags::RPT_SEQ, self.rpt_seq);
        }
        for e in self.entries {
            enc.field_char(tags::MD_ENTRY_TYPE, e.entry_type.code());
            if let (Some(id), FixVersion::Fix50Sp2) = (e.trade_id, version) {
                enc.field_u64(tags::MD_ENTRY_ID, id);
            }
            enc.field_units(tags::MD_ENTRY_PX, e.price, e.price_decimals);
            enc.field_u64(tags::MD_ENTRY_SIZE, e.size);
            if let Some(n) = e.orders {
                enc.field_u64(tags::NUMBER_OF_ORDERS, n as u64);
            }
            if rpt && e.entry_type.sequenced() {
                enc.field_u64(tags::RPT_SEQ, self.rpt_seq);
            }
        }
    }
}

/// MarketDataIncrementalRefresh (35=X): entries, each with its Symbol.
pub struct MarketDataIncremental<'a> {
    pub md_req_id: &'a [u8],
    pub extensions: bool,
    pub entries: &'a [MdEntry<'a>],
}

impl MarketDataIncremental<'_> {
    pub fn msg_type(&self) -> &'static [u8] {
        msg_type::MARKET_DATA_INCREMENTAL
    }

    pub fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::MD_REQ_ID, self.md_req_id);
        enc.field_u64(tags::NO_MD_ENTRIES, self.entries.len() as u64);
        let rpt = rpt_seq_on(version, self.extensions);
        for e in self.entries {
            enc.field_char(tags::MD_UPDATE_ACTION, e.action);
            enc.field_char(tags::MD_ENTRY_TYPE, e.entry_type.code());
            if let Some(id) = e.trade_id {
                enc.field_u64(tags::MD_ENTRY_ID, id);
            }
            enc.field(tags::SYMBOL, e.symbol);
            enc.field_units(tags::MD_ENTRY_PX, e.price, e.price_decimals);
            enc.field_u64(tags::MD_ENTRY_SIZE, e.size);
            if let (Some(id), FixVersion::Fix50Sp2) = (e.trade_id, version) {
                enc.field_u64(tags::TRADE_ID, id);
            }
            if let Some(n) = e.orders {
                enc.field_u64(tags::NUMBER_OF_ORDERS, n as u64);
            }
            if rpt && e.entry_type.sequenced() {
                enc.field_u64(tags::RPT_SEQ, e.rpt_seq);
            }
            if let (Some(side), true) = (e.aggressor, self.extensions) {
                enc.field_char(tags::AGGRESSOR_SIDE, side_code(side));
            }
        }
    }
}

/// MarketDataRequestReject (35=Y).
pub struct MarketDataRequestReject<'a> {
    pub md_req_id: &'a [u8],
    pub reason: MdRejectReason,
    pub text: &'a [u8],
}

impl MarketDataRequestReject<'_> {
    pub fn msg_type(&self) -> &'static [u8] {
        msg_type::MARKET_DATA_REQUEST_REJECT
    }
    pub fn encode_body(&self, _version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::MD_REQ_ID, self.md_req_id);
        enc.field_char(tags::MD_REQ_REJ_REASON, self.reason.code());
        enc.field(tags::TEXT, self.text);
    }
}

/// One instrument of a SecurityList.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListedInstrument<'a> {
    pub symbol: &'a [u8],
    /// RoundLot (561).
    pub lot: u64,
    /// MinPriceIncrement (969), in units of `10^-price_decimals` (FIX 5.0SP2 only).
    pub tick: i64,
    pub price_decimals: u32,
}

/// SecurityList (35=y), FIX 4.4 and 5.0SP2 (neither has a Text: a refused request says
/// only its SecurityRequestResult).
pub struct SecurityList<'a> {
    pub security_req_id: &'a [u8],
    pub security_response_id: u64,
    /// SecurityRequestResult (560): 0 valid, 1 invalid or unsupported request, 2 no
    /// instruments found.
    pub result: u8,
    pub instruments: &'a [ListedInstrument<'a>],
}

impl SecurityList<'_> {
    pub fn msg_type(&self) -> &'static [u8] {
        msg_type::SECURITY_LIST
    }
    pub fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::SECURITY_REQ_ID, self.security_req_id);
        enc.field_u64(tags::SECURITY_RESPONSE_ID, self.security_response_id);
        enc.field_char(tags::SECURITY_REQUEST_RESULT, self.result);
        if self.result == b'0' {
            enc.field_u64(tags::TOT_NO_RELATED_SYM, self.instruments.len() as u64);
            enc.field_u64(tags::NO_RELATED_SYM, self.instruments.len() as u64);
            for i in self.instruments {
                enc.field(tags::SYMBOL, i.symbol);
                if version == FixVersion::Fix50Sp2 {
                    enc.field_units(tags::MIN_PRICE_INCREMENT, i.tick, i.price_decimals);
                }
                enc.field_u64(tags::ROUND_LOT, i.lot);
            }
        }
    }
}

/// SecurityStatus (35=f).
pub struct SecurityStatus<'a> {
    pub security_status_req_id: &'a [u8],
    pub symbol: &'a [u8],
    /// SecurityTradingStatus (326): 17 ready to trade, 2 halted, 18 not available, 21
    /// pre-open (a call auction; FIX 4.2, which lacks it, 14).
    pub trading_status: u32,
    /// TradingSessionSubID (625) of a call auction: 2 opening (or reopening) auction, 4
    /// closing auction (written in FIX 4.4 and 5.0SP2; FIX 4.2 has no such field).
    pub trading_session_sub_id: Option<u8>,
    /// UnsolicitedIndicator (325): a change told to a subscriber (Y), not an answer (N).
    pub unsolicited: bool,
}

impl SecurityStatus<'_> {
    pub fn msg_type(&self) -> &'static [u8] {
        msg_type::SECURITY_STATUS
    }
    pub fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::SECURITY_STATUS_REQ_ID, self.security_status_req_id);
        enc.field(tags::SYMBOL, self.symbol);
        if let (Some(sub), false) = (self.trading_session_sub_id, version == FixVersion::Fix42) {
            enc.field_u64(tags::TRADING_SESSION_SUB_ID, sub as u64);
        }
        enc.field_char(
            tags::UNSOLICITED_INDICATOR,
            if self.unsolicited { b'Y' } else { b'N' },
        );
        enc.field_u64(tags::SECURITY_TRADING_STATUS, self.trading_status as u64);
    }
}

macro_rules! app_message {
    ($($t:ident),*) => {$(
        impl crate::app::AppMessage for $t<'_> {
            fn msg_type(&self) -> &[u8] {
                $t::msg_type(self)
            }
            fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
                $t::encode_body(self, version, enc)
            }
        }
    )*};
}
app_message!(
    MarketDataSnapshot,
    MarketDataIncremental,
    MarketDataRequestReject,
    SecurityList,
    SecurityStatus
);

/// A subscriber's view of one W or X entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntryView<'a> {
    /// MDUpdateAction (279); `None` in a W.
    pub action: Option<u8>,
    /// MDEntryType (269).
    pub entry_type: u8,
    /// Symbol (55) of the entry, or of the W.
    pub symbol: &'a [u8],
    /// MDEntryPx (270) as sent.
    pub price: &'a [u8],
    pub size: u64,
    pub orders: Option<u64>,
    pub rpt_seq: Option<u64>,
    /// MDEntryID (278).
    pub id: Option<u64>,
    /// AggressorSide (2446).
    pub aggressor: Option<u8>,
}

/// Reads the entries of a W or X in order, each given to `each` with the message's MDReqID
/// (empty if none). Returns the number of entries, or the tag of the first field that did
/// not read.
pub fn read_entries<'a>(
    msg: &Message<'a>,
    mut each: impl FnMut(&'a [u8], &EntryView<'a>),
) -> Result<usize, u32> {
    let snapshot = msg.msg_type() == msg_type::MARKET_DATA_SNAPSHOT;
    let req = msg.get(tags::MD_REQ_ID).unwrap_or(b"");
    let mut top_symbol: &[u8] = b"";
    let mut cur: Option<EntryView<'a>> = None;
    let mut n = 0;
    let starts = if snapshot {
        tags::MD_ENTRY_TYPE
    } else {
        tags::MD_UPDATE_ACTION
    };
    let num = |v: &[u8], tag| parse_u64(v).ok_or(tag);
    for (tag, v) in msg.body() {
        if tag == starts {
            if let Some(e) = cur.take() {
                each(req, &e);
                n += 1;
            }
            cur = Some(EntryView {
                symbol: top_symbol,
                ..EntryView::default()
            });
        }
        let Some(e) = cur.as_mut() else {
            if tag == tags::SYMBOL {
                top_symbol = v;
            }
            continue;
        };
        match tag {
            tags::MD_UPDATE_ACTION => e.action = v.first().copied(),
            tags::MD_ENTRY_TYPE => e.entry_type = v.first().copied().unwrap_or(0),
            tags::SYMBOL => e.symbol = v,
            tags::MD_ENTRY_PX => e.price = v,
            tags::MD_ENTRY_SIZE => e.size = num(v, tag)?,
            tags::NUMBER_OF_ORDERS => e.orders = Some(num(v, tag)?),
            tags::RPT_SEQ => e.rpt_seq = Some(num(v, tag)?),
            tags::MD_ENTRY_ID => e.id = Some(num(v, tag)?),
            tags::AGGRESSOR_SIDE => e.aggressor = v.first().copied(),
            _ => {}
        }
    }
    if let Some(e) = cur.take() {
        each(req, &e);
        n += 1;
    }
    Ok(n)
}

/// Decimals a subscriber's prices are kept in: MDEntryPx (270) in units of 10^-9.
pub const VIEW_PRICE_DECIMALS: u32 = 9;

/// One price level as a subscriber sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ViewLevel {
    pub size: u64,
    pub orders: u64,
}

/// One trade as a subscriber sees it (price in units of 10^-9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewTrade {
    pub price: i64,
    pub size: u64,
    pub id: Option<u64>,
    /// AggressorSide (2446): b'1' buy, b'2' sell.
    pub aggressor: Option<u8>,
}

/// One symbol's market as a subscriber rebuilds it from W and X alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolView {
    /// Price (units of 10^-9) -> level.
    pub bids: std::collections::BTreeMap<i64, ViewLevel>,
    pub asks: std::collections::BTreeMap<i64, ViewLevel>,
    /// The RptSeq of the last entry or snapshot (where the session's version carries it).
    pub rpt_seq: Option<u64>,
    /// Trades seen, oldest first (at most `MdView::trades_max`).
    pub trades: std::collections::VecDeque<ViewTrade>,
    /// RptSeq values skipped between two incremental entries (0 for a full-depth view).
    pub rpt_seq_gaps: u64,
    /// Entries that did not fit the book (a change of a missing level, ...).
    pub misfits: u64,
    /// The indicative uncross last published (MDEntryType Q: price in units of 10^-9, size),
    /// `None` once withdrawn (MDUpdateAction 2) or before any.
    pub indicative: Option<(i64, u64)>,
}

/// A subscriber's rebuilt market: every symbol it has seen, from W and X messages.
#[derive(Clone, Debug, Default)]
pub struct MdView {
    pub symbols: std::collections::BTreeMap<Vec<u8>, SymbolView>,
    /// Trades kept per symbol (0: all).
    pub trades_max: usize,
    pub snapshots: u64,
    pub incrementals: u64,
}

impl MdView {
    pub fn new(trades_max: usize) -> MdView {
        MdView {
            trades_max,
            ..MdView::default()
        }
    }

    /// Applies a W or X (anything else is ignored). Returns the number of entries, or what
    /// did not read.
    pub fn apply(&mut self, msg: &Message<'_>) -> Result<usize, String> {
        let snapshot = match msg.msg_type() {
            b"W" => true,
            b"X" => false,
            _ => return Ok(0),
        };
        if snapshot {
            self.snapshots += 1;
            let sym = msg.get(tags::SYMBOL).unwrap_or(b"");
            let v = self.symbols.entry(sym.to_vec()).or_default();
            v.bids.clear();
            v.asks.clear();
        } else {
            self.incrementals += 1;
        }
        let trades_max = self.trades_max;
        let mut bad = None;
        let n = read_entries(msg, |_, e| {
            let v = self.symbols.entry(e.symbol.to_vec()).or_default();
            if let Some(r) = e.rpt_seq {
                if let (false, Some(prev)) = (snapshot, v.rpt_seq) {
                    if r > prev + 1 {
                        v.rpt_seq_gaps += r - prev - 1;
                    }
                }
                v.rpt_seq = Some(r);
            }
            let price = match e.entry_type {
                b'0' | b'1' | b'2' | b'Q' => {
                    match crate::decimal::parse_price(e.price, VIEW_PRICE_DECIMALS, 1) {
                        Ok(p) => p,
                        Err(_) => {
                            bad = Some(format!(
                                "MDEntryPx {:?} does not read",
                                String::from_utf8_lossy(e.price)
                            ));
                            return;
                        }
                    }
                }
                _ => return,
            };
            if e.entry_type == b'Q' {
                v.indicative = (e.action != Some(b'2')).then_some((price, e.size));
                return;
            }
            if e.entry_type == b'2' {
                v.trades.push_back(ViewTrade {
                    price,
                    size: e.size,
                    id: e.id,
                    aggressor: e.aggressor,
                });
                if trades_max > 0 && v.trades.len() > trades_max {
                    v.trades.pop_front();
                }
                return;
            }
            let side = if e.entry_type == b'0' {
                &mut v.bids
            } else {
                &mut v.asks
            };
            let level = ViewLevel {
                size: e.size,
                orders: e.orders.unwrap_or(0),
            };
            match e.action {
                None => {
                    side.insert(price, level);
                }
                Some(b'0') => {
                    if side.insert(price, level).is_some() {
                        v.misfits += 1;
                    }
                }
                Some(b'1') => {
                    if side.insert(price, level).is_none() {
                        v.misfits += 1;
                    }
                }
                Some(b'2') => {
                    if side.remove(&price).is_none() {
                        v.misfits += 1;
                    }
                }
                Some(_) => v.misfits += 1,
            }
        })
        .map_err(|tag| format!("field {tag} does not read"))?;
        match bad {
            Some(b) => Err(b),
            None => Ok(n),
        }
    }
}

/// Fuzz body (`fuzz/fuzz_targets/fix_md.rs`): arbitrary bytes as the body of one message of
/// each market-data type (V, x, e as the exchange reads them; W and X as a subscriber reads
/// them): no reader panics, a refusal names a tag, and a subscriber's view stays consistent
/// (no level of size 0 outside a snapshot's own entries).
pub fn fuzz_md(data: &[u8]) {
    use crate::decode::Decoder;
    let mut view = MdView::new(8);
    let mut decoder = Decoder::default();
    let mut buf = Vec::new();
    for msg_type in [b"V", b"x", b"e", b"W", b"X"] {
        let mut body = b"35=".to_vec();
        body.extend_from_slice(msg_type);
        body.extend_from_slice(b"\x0149=C\x0156=R\x0134=2\x0152=20260101-00:00:00\x01");
        body.extend_from_slice(data);
        crate::wrap_body(FixVersion::Fix44, &body, &mut buf);
        let Ok(msg) = decoder.decode(&buf) else {
            continue;
        };
        match msg_type {
            b"V" => match MarketDataRequest::read(&msg) {
                Ok(r) => assert!(r.symbols.len() <= SYMBOLS_MAX),
                Err(MdRefusal::Session { tag, .. }) => assert!(tag > 0),
                Err(MdRefusal::Reject { text, .. }) => assert!(!text.is_empty()),
            },
            b"x" => {
                let _ = SecurityListRequest::read(&msg);
            }
            b"e" => {
                let _ = SecurityStatusRequest::read(&msg);
            }
            _ => {
                let before = view.snapshots + view.incrementals;
                if view.apply(&msg).is_ok() {
                    assert_eq!(view.snapshots + view.incrementals, before + 1);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
