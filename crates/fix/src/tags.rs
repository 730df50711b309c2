//! FIX tag numbers and MsgType values used by Rialto, named as in the FIX specification.
//!
//! Role: one table so that no other module writes a bare tag number. Never: logic.

pub const ACCOUNT: u32 = 1;
pub const AVG_PX: u32 = 6;
pub const BEGIN_SEQ_NO: u32 = 7;
pub const BEGIN_STRING: u32 = 8;
pub const BODY_LENGTH: u32 = 9;
pub const CHECK_SUM: u32 = 10;
pub const CL_ORD_ID: u32 = 11;
pub const CUM_QTY: u32 = 14;
pub const END_SEQ_NO: u32 = 16;
pub const EXEC_ID: u32 = 17;
pub const EXEC_INST: u32 = 18;
pub const EXEC_TRANS_TYPE: u32 = 20;
pub const LAST_PX: u32 = 31;
pub const LAST_QTY: u32 = 32;
pub const MSG_SEQ_NUM: u32 = 34;
pub const MSG_TYPE: u32 = 35;
pub const NEW_SEQ_NO: u32 = 36;
pub const ORDER_ID: u32 = 37;
pub const ORDER_QTY: u32 = 38;
pub const ORD_STATUS: u32 = 39;
pub const ORD_TYPE: u32 = 40;
pub const ORIG_CL_ORD_ID: u32 = 41;
pub const POSS_DUP_FLAG: u32 = 43;
pub const PRICE: u32 = 44;
pub const REF_SEQ_NUM: u32 = 45;
pub const SENDER_COMP_ID: u32 = 49;
pub const SENDING_TIME: u32 = 52;
pub const SIDE: u32 = 54;
pub const SYMBOL: u32 = 55;
pub const TARGET_COMP_ID: u32 = 56;
pub const TEXT: u32 = 58;
pub const TIME_IN_FORCE: u32 = 59;
pub const TRANSACT_TIME: u32 = 60;
pub const HANDL_INST: u32 = 21;
pub const POSS_RESEND: u32 = 97;
pub const STOP_PX: u32 = 99;
pub const MAX_FLOOR: u32 = 111;
pub const EXPIRE_TIME: u32 = 126;
pub const EXPIRE_DATE: u32 = 432;
pub const ENCRYPT_METHOD: u32 = 98;
pub const CXL_REJ_REASON: u32 = 102;
pub const ORD_REJ_REASON: u32 = 103;
pub const HEART_BT_INT: u32 = 108;
pub const TEST_REQ_ID: u32 = 112;
pub const ORIG_SENDING_TIME: u32 = 122;
/// DeliverToCompID: a standard-header field (every version).
pub const DELIVER_TO_COMP_ID: u32 = 128;
pub const DELIVER_TO_SUB_ID: u32 = 129;
pub const DELIVER_TO_LOCATION_ID: u32 = 145;
pub const ON_BEHALF_OF_COMP_ID: u32 = 115;
pub const ON_BEHALF_OF_SUB_ID: u32 = 116;
pub const ON_BEHALF_OF_LOCATION_ID: u32 = 144;
/// CopyMsgIndicator: FIX 4.4 and later.
pub const COPY_MSG_INDICATOR: u32 = 797;
pub const GAP_FILL_FLAG: u32 = 123;
pub const RESET_SEQ_NUM_FLAG: u32 = 141;
pub const EXEC_TYPE: u32 = 150;
pub const LEAVES_QTY: u32 = 151;
pub const REF_TAG_ID: u32 = 371;
pub const REF_MSG_TYPE: u32 = 372;
pub const SESSION_REJECT_REASON: u32 = 373;
pub const BUSINESS_REJECT_REF_ID: u32 = 379;
pub const BUSINESS_REJECT_REASON: u32 = 380;
pub const CXL_REJ_RESPONSE_TO: u32 = 434;
pub const MASS_CANCEL_REQUEST_TYPE: u32 = 530;
pub const MASS_CANCEL_RESPONSE: u32 = 531;
pub const MASS_CANCEL_REJECT_REASON: u32 = 532;
pub const TOTAL_AFFECTED_ORDERS: u32 = 533;
pub const TRAD_SES_REQ_ID: u32 = 335;
pub const TRADING_SESSION_ID: u32 = 336;
pub const TRAD_SES_STATUS: u32 = 340;
/// TradingSessionSubID: FIX 4.4 and later.
pub const TRADING_SESSION_SUB_ID: u32 = 625;
pub const RPT_SEQ: u32 = 83;
pub const NO_RELATED_SYM: u32 = 146;
pub const MD_REQ_ID: u32 = 262;
pub const SUBSCRIPTION_REQUEST_TYPE: u32 = 263;
pub const MARKET_DEPTH: u32 = 264;
pub const MD_UPDATE_TYPE: u32 = 265;
pub const AGGREGATED_BOOK: u32 = 266;
pub const NO_MD_ENTRY_TYPES: u32 = 267;
pub const NO_MD_ENTRIES: u32 = 268;
pub const MD_ENTRY_TYPE: u32 = 269;
pub const MD_ENTRY_PX: u32 = 270;
pub const MD_ENTRY_SIZE: u32 = 271;
pub const MD_ENTRY_ID: u32 = 278;
pub const MD_UPDATE_ACTION: u32 = 279;
pub const MD_REQ_REJ_REASON: u32 = 281;
pub const SECURITY_REQ_ID: u32 = 320;
pub const SECURITY_RESPONSE_ID: u32 = 322;
pub const SECURITY_STATUS_REQ_ID: u32 = 324;
pub const UNSOLICITED_INDICATOR: u32 = 325;
pub const SECURITY_TRADING_STATUS: u32 = 326;
pub const NUMBER_OF_ORDERS: u32 = 346;
pub const TOT_NO_RELATED_SYM: u32 = 393;
pub const SECURITY_LIST_REQUEST_TYPE: u32 = 559;
pub const SECURITY_REQUEST_RESULT: u32 = 560;
pub const ROUND_LOT: u32 = 561;
pub const MIN_PRICE_INCREMENT: u32 = 969;
pub const TRADE_ID: u32 = 1003;
pub const AGGRESSOR_SIDE: u32 = 2446;
pub const USERNAME: u32 = 553;
pub const PASSWORD: u32 = 554;
pub const APPL_VER_ID: u32 = 1128;
pub const DEFAULT_APPL_VER_ID: u32 = 1137;
pub const MASS_ACTION_REPORT_ID: u32 = 1369;

/// MsgType (35) values.
pub mod msg_type {
    pub const HEARTBEAT: &[u8] = b"0";
    pub const TEST_REQUEST: &[u8] = b"1";
    pub const RESEND_REQUEST: &[u8] = b"2";
    pub const REJECT: &[u8] = b"3";
    pub const SEQUENCE_RESET: &[u8] = b"4";
    pub const LOGOUT: &[u8] = b"5";
    pub const EXECUTION_REPORT: &[u8] = b"8";
    pub const ORDER_CANCEL_REJECT: &[u8] = b"9";
    pub const LOGON: &[u8] = b"A";
    pub const NEW_ORDER_SINGLE: &[u8] = b"D";
    pub const ORDER_CANCEL_REQUEST: &[u8] = b"F";
    pub const ORDER_CANCEL_REPLACE_REQUEST: &[u8] = b"G";
    pub const ORDER_STATUS_REQUEST: &[u8] = b"H";
    pub const BUSINESS_MESSAGE_REJECT: &[u8] = b"j";
    pub const ORDER_MASS_CANCEL_REQUEST: &[u8] = b"q";
    pub const ORDER_MASS_CANCEL_REPORT: &[u8] = b"r";
    pub const TRADING_SESSION_STATUS_REQUEST: &[u8] = b"g";
    pub const TRADING_SESSION_STATUS: &[u8] = b"h";

    /// Session-level (admin) message types: never resent, replaced by a gap fill.
    pub fn is_admin(msg_type: &[u8]) -> bool {
        matches!(msg_type, b"0" | b"1" | b"2" | b"3" | b"4" | b"5" | b"A")
    }
}

/// For a length field of a `data` field pair (e.g. RawDataLength 95), the tag of the data field
/// it announces (RawData 96). Data fields may contain SOH, so the decoder must use the length.
pub fn data_tag_for_length(tag: u32) -> Option<u32> {
    Some(match tag {
        90 => 91,
        93 => 89,
        95 => 96,
        212 => 213,
        348 => 349,
        350 => 351,
        352 => 353,
        354 => 355,
        356 => 357,
        358 => 359,
        360 => 361,
        362 => 363,
        364 => 365,
        445 => 446,
        618 => 619,
        621 => 622,
        _ => return None,
    })
}
