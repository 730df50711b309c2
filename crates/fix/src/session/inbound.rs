//! What arrives: an inbound message read into its typed form ([`InHeader`] and [`Inbound`]),
//! before any session state is consulted, and the texts a session answers bad input with.

use crate::decode::{scan_msg_seq_num, scan_msg_type, DecodeError, Message, TagProblem, SOH};
use crate::encode::Encoder;
use crate::tags;
use crate::tags::msg_type;
use crate::time::TimePrecision;
use crate::SessionRejectReason;
use std::fmt;

/// The Logout text of every Logon refused before it was authenticated (unknown CompIDs,
/// wrong Username or Password): it says nothing of the session, not even whether it exists.
pub const LOGON_REFUSED: &str = "logon refused";

/// Longest [`Text`]: a TestReqID, a Logout's or Reject's Text, a CompID, a password.
pub const TEXT_LEN_MAX: usize = 64;

/// Up to [`TEXT_LEN_MAX`] bytes stored inline (an inbound message owns no heap memory, so
/// reading or journaling one allocates nothing). Longer values are cut. Bytes after `len`
/// are zero, so equality and hash are those of the bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Text {
    len: u8,
    bytes: [u8; TEXT_LEN_MAX],
}

const _: () = assert!(TEXT_LEN_MAX <= u8::MAX as usize);

impl Text {
    pub const EMPTY: Text = Text {
        len: 0,
        bytes: [0; TEXT_LEN_MAX],
    };
    /// `b`, cut to [`TEXT_LEN_MAX`] bytes.
    pub fn new(b: &[u8]) -> Text {
        let n = b.len().min(TEXT_LEN_MAX);
        let mut t = Text::EMPTY;
        t.bytes[..n].copy_from_slice(&b[..n]);
        t.len = n as u8;
        t
    }
    /// `b` if it fits.
    pub fn exact(b: &[u8]) -> Option<Text> {
        (b.len() <= TEXT_LEN_MAX).then(|| Text::new(b))
    }
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
    /// As text (lossy: the bytes need not be UTF-8).
    pub fn to_str_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.as_bytes())
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Overwrites the bytes with zeros and empties it (`black_box`: the stores are not
    /// optimized away).
    pub fn wipe(&mut self) {
        self.bytes = [0; TEXT_LEN_MAX];
        std::hint::black_box(&mut self.bytes);
        self.len = 0;
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::EMPTY
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::new(s.as_bytes())
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_str_lossy(), f)
    }
}

/// The routing fields of a message's header: OnBehalfOfCompID (115), OnBehalfOfSubID (116),
/// OnBehalfOfLocationID (144) and DeliverToCompID (128), DeliverToSubID (129),
/// DeliverToLocationID (145). An answer to the message carries them reversed (115 as 128,
/// 128 as 115, and so on), so that a hub in between routes it back. Rare: a message without
/// them carries none (no allocation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// 115, 116, 144 as sent (empty: absent).
    pub on_behalf_of: [Text; 3],
    /// 128, 129, 145 as sent (empty: absent).
    pub deliver_to: [Text; 3],
}

/// OnBehalfOf* and DeliverTo* tags, in the order of `Route`'s arrays.
const ON_BEHALF_OF: [u32; 3] = [
    tags::ON_BEHALF_OF_COMP_ID,
    tags::ON_BEHALF_OF_SUB_ID,
    tags::ON_BEHALF_OF_LOCATION_ID,
];
const DELIVER_TO: [u32; 3] = [
    tags::DELIVER_TO_COMP_ID,
    tags::DELIVER_TO_SUB_ID,
    tags::DELIVER_TO_LOCATION_ID,
];

impl Route {
    /// The routing fields of `fields` (tag, value), if any has a value.
    pub fn read<'v>(fields: impl Iterator<Item = (u32, &'v [u8])>) -> Option<Box<Route>> {
        let mut route: Option<Box<Route>> = None;
        for (tag, v) in fields {
            let slot = match tag {
                tags::ON_BEHALF_OF_COMP_ID
                | tags::ON_BEHALF_OF_SUB_ID
                | tags::ON_BEHALF_OF_LOCATION_ID
                | tags::DELIVER_TO_COMP_ID
                | tags::DELIVER_TO_SUB_ID
                | tags::DELIVER_TO_LOCATION_ID => tag,
                _ => continue,
            };
            if v.is_empty() {
                continue;
            }
            let r = route.get_or_insert_with(Box::default);
            for (i, (&b, &d)) in ON_BEHALF_OF.iter().zip(&DELIVER_TO).enumerate() {
                if slot == b && r.on_behalf_of[i].is_empty() {
                    r.on_behalf_of[i] = Text::new(v);
                } else if slot == d && r.deliver_to[i].is_empty() {
                    r.deliver_to[i] = Text::new(v);
                }
            }
        }
        route
    }

    /// The routing fields of a framed message's raw bytes (one whose fields did not decode):
    /// each `tag=value` between SOHs that splits.
    pub fn scan(frame: &[u8]) -> Option<Box<Route>> {
        Route::read(frame.split(|&c| c == SOH).filter_map(|f| {
            let eq = f.iter().position(|&c| c == b'=')?;
            let tag = crate::decode::parse_u64(&f[..eq])?;
            Some((u32::try_from(tag).ok()?, &f[eq + 1..]))
        }))
    }

    /// Writes the fields an answer carries: each OnBehalfOf* as its DeliverTo* and each
    /// DeliverTo* as its OnBehalfOf*, in header order.
    pub fn write_reversed(&self, enc: &mut Encoder) {
        for (i, &tag) in DELIVER_TO.iter().enumerate() {
            if !self.on_behalf_of[i].is_empty() {
                enc.field(tag, self.on_behalf_of[i].as_bytes());
            }
        }
        for (i, &tag) in ON_BEHALF_OF.iter().enumerate() {
            if !self.deliver_to[i].is_empty() {
                enc.field(tag, self.deliver_to[i].as_bytes());
            }
        }
    }
}

/// What the header of an inbound message said, as the session needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InHeader {
    /// MsgSeqNum (34); 0 if missing or not a number.
    pub msg_seq_num: u64,
    /// PossDupFlag (43) = Y.
    pub poss_dup: bool,
    /// PossResend (97) = Y: the application message may have been sent before under another
    /// MsgSeqNum; its owner ignores it if it has it already (the session does not look).
    pub poss_resend: bool,
    /// SendingTime (52) in ns since the epoch; 0 if missing.
    pub sending_time_ns: u64,
    /// OrigSendingTime (122); 0 if missing.
    pub orig_sending_time_ns: u64,
    pub problem: HeaderProblem,
    /// The routing fields, if any: answers to the message carry them reversed.
    pub route: Option<Box<Route>>,
}

/// A header the session must refuse (checked by whoever read it, against the session's
/// BeginString and CompIDs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HeaderProblem {
    #[default]
    None,
    /// BeginString other than the session's: Logout and disconnect.
    BeginString,
    /// SenderCompID (49) or TargetCompID (56) other than the session's: Reject 373=9 with
    /// this RefTagID, then Logout and disconnect.
    CompId { tag: u32 },
    /// SendingTime (52) or OrigSendingTime (122) present but not a UTCTimestamp: Reject 373=6.
    BadTime { tag: u32 },
    /// SenderCompID (49) or TargetCompID (56) missing: Reject 373=1 with this RefTagID (the
    /// session goes on).
    Missing { tag: u32 },
}

/// A Logon's fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Logon {
    pub begin_string: Text,
    pub sender_comp_id: Text,
    pub target_comp_id: Text,
    /// HeartBtInt (108); `None` if missing or not a number.
    pub heart_bt_int: Option<u64>,
    /// ResetSeqNumFlag (141) = Y.
    pub reset: bool,
    /// Username (553), as sent.
    pub username: Option<Text>,
    /// Password (554), as sent: for the owner to verify (into `credentials`) and then wipe
    /// ([`Logon::wipe_password`]) before the Logon is kept anywhere. The session never reads
    /// it.
    pub password: Option<Text>,
    /// What the owner's check of Username and Password found.
    pub credentials: Credentials,
    pub has_default_appl_ver_id: bool,
}

/// The verdict on a Logon's credentials (Username 553, Password 554), given by the session's
/// owner (which holds the salted hashes); a session that requires authentication
/// (`SessionConfig::authenticate`) accepts only [`Credentials::Accepted`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Credentials {
    /// Not checked (the session needs no password).
    #[default]
    Unchecked,
    Accepted,
    Refused,
}

impl Credentials {
    /// A stable code (journal).
    pub fn code(self) -> u8 {
        match self {
            Credentials::Unchecked => 0,
            Credentials::Accepted => 1,
            Credentials::Refused => 2,
        }
    }
    pub fn from_code(c: u8) -> Option<Credentials> {
        Some(match c {
            0 => Credentials::Unchecked,
            1 => Credentials::Accepted,
            2 => Credentials::Refused,
            _ => return None,
        })
    }
}

impl Logon {
    /// Overwrites the Password's bytes and forgets it (after its verification).
    pub fn wipe_password(&mut self) {
        if let Some(p) = self.password.as_mut() {
            p.wipe();
        }
        self.password = None;
    }
}

/// A message whose fields the reader found wrong (the session answers it with a Reject).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    pub reason: SessionRejectReason,
    /// RefTagID (371): a tag, or what the client wrote for one (0, -1).
    pub ref_tag: Option<i64>,
    pub msg_type: Text,
    pub text: Text,
}

/// An inbound message, typed: the admin messages the session handles, or an application
/// message `A` (the owner's type) that it delivers in MsgSeqNum order. Owns its data, so a
/// message that arrives ahead of a gap can wait in the session's queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inbound<A> {
    Logon(Box<Logon>),
    Heartbeat {
        test_req_id: Text,
    },
    TestRequest {
        /// `None`: TestReqID (112) missing.
        test_req_id: Option<Text>,
    },
    ResendRequest {
        /// `None`: missing or not a number.
        begin: Option<u64>,
        end: Option<u64>,
    },
    SequenceReset {
        /// `None`: missing or not a number.
        new_seq: Option<u64>,
        gap_fill: bool,
    },
    Logout {
        text: Text,
    },
    Reject {
        ref_seq_num: u64,
    },
    Malformed(Box<Malformed>),
    App(A),
}

impl<A> Inbound<A> {
    pub fn is_app(&self) -> bool {
        matches!(self, Inbound::App(_))
    }
}

/// Reads the session's view of a decoded message: its header, and the admin message it is,
/// or `app(msg)` for any other MsgType (`Inbound::Malformed` if it says so). `begin_string`
/// and the CompIDs are the session's (`None`: not known yet, e.g. the first message of a
/// connection): a mismatch is a [`HeaderProblem`].
pub fn read_inbound<A>(
    msg: &Message<'_>,
    expect: Option<(&[u8], &[u8], &[u8])>,
    app: impl FnOnce(&Message<'_>) -> Result<A, Box<Malformed>>,
) -> (InHeader, Inbound<A>) {
    let header = read_header(msg, expect);
    let t = msg.msg_type();
    let text = |tag| Text::new(msg.get(tag).unwrap_or(b""));
    let u64_of = |tag| msg.get_u64(tag).ok().flatten();
    if let Some(m) = admin_format(msg) {
        return (header, Inbound::Malformed(m));
    }
    let inbound = match t {
        msg_type::LOGON => Inbound::Logon(Box::new(Logon {
            begin_string: Text::new(msg.begin_string()),
            sender_comp_id: text(tags::SENDER_COMP_ID),
            target_comp_id: text(tags::TARGET_COMP_ID),
            heart_bt_int: u64_of(tags::HEART_BT_INT),
            reset: msg.get(tags::RESET_SEQ_NUM_FLAG) == Some(b"Y"),
            username: msg.get(tags::USERNAME).map(Text::new),
            password: msg.get(tags::PASSWORD).map(Text::new),
            credentials: Credentials::Unchecked,
            has_default_appl_ver_id: msg.get(tags::DEFAULT_APPL_VER_ID).is_some(),
        })),
        msg_type::HEARTBEAT => Inbound::Heartbeat {
            test_req_id: text(tags::TEST_REQ_ID),
        },
        msg_type::TEST_REQUEST => Inbound::TestRequest {
            test_req_id: msg.get(tags::TEST_REQ_ID).map(Text::new),
        },
        msg_type::RESEND_REQUEST => Inbound::ResendRequest {
            begin: u64_of(tags::BEGIN_SEQ_NO),
            end: u64_of(tags::END_SEQ_NO),
        },
        msg_type::SEQUENCE_RESET => Inbound::SequenceReset {
            new_seq: u64_of(tags::NEW_SEQ_NO),
            gap_fill: msg.get(tags::GAP_FILL_FLAG) == Some(b"Y"),
        },
        msg_type::LOGOUT => Inbound::Logout {
            text: text(tags::TEXT),
        },
        msg_type::REJECT => Inbound::Reject {
            ref_seq_num: u64_of(tags::REF_SEQ_NUM).unwrap_or(0),
        },
        _ => match app(msg) {
            Ok(a) => Inbound::App(a),
            Err(m) => Inbound::Malformed(m),
        },
    };
    (header, inbound)
}

/// An admin message's number or flag the session acts on that is present but not of its type
/// (BeginSeqNo, EndSeqNo, NewSeqNo, RefSeqNum not digits; GapFillFlag not Y or N): the Reject
/// 373=6 it deserves. A Logon is left to the session's own checks.
fn admin_format(msg: &Message<'_>) -> Option<Box<Malformed>> {
    let (numbers, flags): (&[u32], &[u32]) = match msg.msg_type() {
        msg_type::RESEND_REQUEST => (&[tags::BEGIN_SEQ_NO, tags::END_SEQ_NO], &[]),
        msg_type::SEQUENCE_RESET => (&[tags::NEW_SEQ_NO], &[tags::GAP_FILL_FLAG]),
        msg_type::REJECT => (&[tags::REF_SEQ_NUM], &[]),
        _ => return None,
    };
    let bad = numbers
        .iter()
        .find(|&&tag| msg.get_u64(tag).is_err())
        .map(|&tag| (tag, "is not a number"))
        .or_else(|| {
            flags
                .iter()
                .find(|&&tag| msg.get_bool(tag).is_err())
                .map(|&tag| (tag, "is not Y or N"))
        });
    let (tag, what) = bad?;
    let v = quote(msg.get(tag).unwrap_or(b""));
    Some(Box::new(Malformed {
        reason: SessionRejectReason::IncorrectDataFormat,
        ref_tag: Some(tag as i64),
        msg_type: Text::new(msg.msg_type()),
        text: Text::new(format!("tag {tag} '{v}' {what}").as_bytes()),
    }))
}

/// At most [`FIELD_SHOWN_MAX`] bytes of a client's bytes for a Reject's Text: printable ASCII
/// as sent, any other byte as '?', and "..." if cut (so the Text stays within its 64 bytes).
fn quote(b: &[u8]) -> String {
    let mut s: String = b[..b.len().min(FIELD_SHOWN_MAX)]
        .iter()
        .map(|&c| {
            if (0x20..0x7f).contains(&c) {
                c as char
            } else {
                '?'
            }
        })
        .collect();
    if b.len() > FIELD_SHOWN_MAX {
        s.push_str("...");
    }
    s
}

/// The header part of [`read_inbound`].
pub fn read_header(msg: &Message<'_>, expect: Option<(&[u8], &[u8], &[u8])>) -> InHeader {
    let mut problem = HeaderProblem::None;
    if let Some((begin_string, sender, target)) = expect {
        if msg.begin_string() != begin_string {
            problem = HeaderProblem::BeginString;
        } else {
            for (tag, want) in [
                (tags::SENDER_COMP_ID, sender),
                (tags::TARGET_COMP_ID, target),
            ] {
                match msg.get(tag) {
                    Some(v) if v == want => continue,
                    Some(_) => problem = HeaderProblem::CompId { tag },
                    None => problem = HeaderProblem::Missing { tag },
                }
                break;
            }
        }
    }
    let mut time = |tag| match msg.get_timestamp(tag) {
        Ok(t) => t.unwrap_or(0),
        Err(_) => {
            if problem == HeaderProblem::None {
                problem = HeaderProblem::BadTime { tag };
            }
            0
        }
    };
    let sending_time_ns = time(tags::SENDING_TIME);
    let orig_sending_time_ns = time(tags::ORIG_SENDING_TIME);
    InHeader {
        msg_seq_num: msg.get_u64(tags::MSG_SEQ_NUM).ok().flatten().unwrap_or(0),
        poss_dup: msg.get(tags::POSS_DUP_FLAG) == Some(b"Y"),
        poss_resend: msg.get(tags::POSS_RESEND) == Some(b"Y"),
        sending_time_ns,
        orig_sending_time_ns,
        problem,
        // Routing fields belong to the header: only its tags are looked at (a few, where
        // a pass over the whole message would cost as much as the rest of the header), and
        // the fields are read only if there is one.
        route: if msg
            .tags()
            .skip(3)
            .take_while(|&t| crate::decode::is_header_tag(t))
            .any(is_route_tag)
        {
            Route::read(msg.fields())
        } else {
            None
        },
    }
}

/// OnBehalfOf* or DeliverTo*.
#[inline(always)]
fn is_route_tag(tag: u32) -> bool {
    matches!(
        tag,
        tags::ON_BEHALF_OF_COMP_ID
            | tags::ON_BEHALF_OF_SUB_ID
            | tags::ON_BEHALF_OF_LOCATION_ID
            | tags::DELIVER_TO_COMP_ID
            | tags::DELIVER_TO_SUB_ID
            | tags::DELIVER_TO_LOCATION_ID
    )
}

/// What to answer a message whose fields do not decode (`DecodeError` past framing): the
/// Reject reason and RefTagID, or `None` for a garbled frame (ignored). An invalid tag has
/// no RefTagID here; [`malformed_input`], which sees the bytes, names one with a number.
pub fn malformed_reason(e: DecodeError) -> Option<(SessionRejectReason, Option<i64>)> {
    Some(match e {
        DecodeError::Incomplete | DecodeError::Frame(_) => return None,
        DecodeError::InvalidTag { .. } => (SessionRejectReason::InvalidTagNumber, None),
        DecodeError::EmptyValue { tag } => (
            SessionRejectReason::TagSpecifiedWithoutValue,
            Some(tag as i64),
        ),
        DecodeError::TooManyFields { .. } => (SessionRejectReason::Other, None),
    })
}

/// The input a framed message whose fields do not decode becomes: its header, holding only
/// its MsgSeqNum (0 when none is readable: the session then logs out, as for any message
/// without MsgSeqNum), and a `Malformed` with the Reject's reason, RefTagID, RefMsgType (when
/// the MsgType is readable) and a Text naming the field. `None` for a garbled frame (ignored,
/// no sequence number taken). Allocates (the box, the text): only for such a message.
pub fn malformed_input(e: DecodeError, frame: &[u8]) -> Option<(InHeader, Box<Malformed>)> {
    let (reason, mut ref_tag) = malformed_reason(e)?;
    let text = match e {
        DecodeError::InvalidTag { offset } => {
            let problem = TagProblem::classify(frame, offset);
            ref_tag = problem.ref_tag();
            let field = frame.get(offset..).unwrap_or(b"");
            let end = field.iter().position(|&c| c == SOH).unwrap_or(field.len());
            format!("field '{}' {}", quote(&field[..end]), problem.as_str())
        }
        DecodeError::EmptyValue { tag } => format!("tag {tag} has an empty value"),
        DecodeError::TooManyFields { max } => format!("more than {max} fields"),
        DecodeError::Incomplete | DecodeError::Frame(_) => return None,
    };
    let header = InHeader {
        msg_seq_num: scan_msg_seq_num(frame).unwrap_or(0),
        route: Route::scan(frame),
        ..InHeader::default()
    };
    let msg_type = scan_msg_type(frame).map_or(Text::EMPTY, Text::new);
    Some((
        header,
        Box::new(Malformed {
            reason,
            ref_tag,
            msg_type,
            text: Text::new(text.as_bytes()),
        }),
    ))
}

/// How much of a malformed field a Reject's Text quotes (the longest text, with "..." and
/// "has a tag that is not a number", is 62 bytes).
const FIELD_SHOWN_MAX: usize = 20;

/// The unnumbered Logout (MsgSeqNum 1) that refuses a Logon: to the Logon's sender, in its
/// BeginString, with `text`. It belongs to no session (an unknown CompID pair) or changes
/// nothing of the session it names. A CompID the Logon lacked is left out (an empty field
/// is not FIX).
pub fn refusal(enc: &mut Encoder, logon: &Logon, now_ns: u64, text: &[u8]) -> Vec<u8> {
    enc.begin(msg_type::LOGOUT);
    enc.field_u64(tags::MSG_SEQ_NUM, 1);
    for (tag, comp_id) in [
        (tags::SENDER_COMP_ID, &logon.target_comp_id),
        (tags::TARGET_COMP_ID, &logon.sender_comp_id),
    ] {
        if !comp_id.is_empty() {
            enc.field(tag, comp_id.as_bytes());
        }
    }
    enc.field_timestamp(tags::SENDING_TIME, now_ns, TimePrecision::Millis);
    enc.field(tags::TEXT, text);
    enc.finish_begin_string(logon.begin_string.as_bytes())
        .to_vec()
}

/// MsgType of an inbound message for a Reject's RefMsgType (372), when it was read.
pub(super) fn msg_type_of<A: super::InboundApp>(msg: &Inbound<A>) -> Option<&[u8]> {
    fn read(t: &[u8]) -> Option<&[u8]> {
        (!t.is_empty()).then_some(t)
    }
    Some(match msg {
        Inbound::Logon(_) => msg_type::LOGON,
        Inbound::Heartbeat { .. } => msg_type::HEARTBEAT,
        Inbound::TestRequest { .. } => msg_type::TEST_REQUEST,
        Inbound::ResendRequest { .. } => msg_type::RESEND_REQUEST,
        Inbound::SequenceReset { .. } => msg_type::SEQUENCE_RESET,
        Inbound::Logout { .. } => msg_type::LOGOUT,
        Inbound::Reject { .. } => msg_type::REJECT,
        Inbound::Malformed(m) => return read(m.msg_type.as_bytes()),
        Inbound::App(a) => return read(a.msg_type()),
    })
}

/// Text (58) sent with a Reject of this reason.
pub fn reason_text(r: SessionRejectReason) -> &'static [u8] {
    use SessionRejectReason as R;
    match r {
        R::InvalidTagNumber => b"Invalid tag number",
        R::RequiredTagMissing => b"Required tag missing",
        R::TagNotDefinedForMessageType => b"Tag not defined for this message type",
        R::UndefinedTag => b"Undefined tag",
        R::TagSpecifiedWithoutValue => b"Tag specified without a value",
        R::ValueIncorrect => b"Value is incorrect (out of range) for this tag",
        R::IncorrectDataFormat => b"Incorrect data format for value",
        R::CompIdProblem => b"CompID problem",
        R::SendingTimeAccuracyProblem => b"SendingTime accuracy problem",
        R::InvalidMsgType => b"Invalid MsgType",
        R::TagAppearsMoreThanOnce => b"Tag appears more than once",
        R::TagSpecifiedOutOfRequiredOrder => b"Tag specified out of required order",
        R::RepeatingGroupFieldsOutOfOrder => b"Repeating group fields out of order",
        R::IncorrectNumInGroupCount => b"Incorrect NumInGroup count for repeating group",
        R::Other => b"Other",
    }
}

/// "MsgSeqNum too low, expecting X but received Y" (the session ends after it; not hot).
pub fn seq_too_low_text(expected: u64, received: u64) -> Vec<u8> {
    format!("MsgSeqNum too low, expecting {expected} but received {received}").into_bytes()
}

/// The BeginString, SenderCompID and TargetCompID of a message (a Logon on a new
/// connection), so the owner can pick the `Session` it belongs to.
pub fn identify<'a>(msg: &Message<'a>) -> Option<(&'a [u8], &'a [u8], &'a [u8])> {
    Some((
        msg.begin_string(),
        msg.get(tags::SENDER_COMP_ID)?,
        msg.get(tags::TARGET_COMP_ID)?,
    ))
}
