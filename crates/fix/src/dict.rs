//! FIX data dictionaries (FIX 4.2, FIX 4.4, FIX 5.0SP2 over FIXT.1.1) and a message validator.
//!
//! Role: says whether a decoded message conforms to its version's dictionary and, if not, the
//! session Reject (35=3) that answers it: SessionRejectReason (373), RefTagID (371) and a
//! specific Text (58). The tables are static, generated at build time by `build.rs` from
//! `crates/fix/dictionary/fix.dict`, the repository's one dictionary source (itself generated
//! by `scripts/fix-dictionary.py` from QuickFIX/J's dictionaries). Nothing here is written by
//! hand per version.
//!
//! API:
//! - `dictionary(version)` -> `&'static Dictionary`; a FIX 5.0SP2 dictionary has the FIXT.1.1
//!   header, trailer and admin messages and the FIX 5.0SP2 application messages.
//! - `Dictionary::field(tag)`, `message(msg_type)` (`None` for a MsgType it does not define:
//!   the caller answers BusinessMessageReject or Reject 11 as it sees fit), `is_header_tag`.
//! - `Dictionary::validate(&msg)` -> `Result<(), Violation>`; `Violation::{reason, ref_tag}`
//!   go into the Reject, `Violation::text(&msg)` (or `write_text`) says what was wrong, e.g.
//!   "OrdType(40) has no value 'Z'". Only a caller that answers pays for the text.
//!
//! What `validate` checks, in wire order, stopping at the first problem:
//! - 0 a tag the dictionary does not define; 2 a tag not defined for this message type (nor
//!   the header and trailer); 13 a tag repeated outside a repeating group;
//! - 14 a header tag after a body tag, or a header or body tag after a trailer tag;
//! - 6 a value that is not of the field's type (INT, SEQNUM, NUMINGROUP, LENGTH, DAYOFMONTH;
//!   PRICE, QTY, AMT, FLOAT, PERCENTAGE, PRICEOFFSET decimals; CHAR; BOOLEAN Y/N;
//!   UTCTIMESTAMP; UTCDATEONLY and LOCALMKTDATE; UTCTIMEONLY; MONTHYEAR; MULTIPLECHARVALUE;
//!   strings, currencies, exchanges, countries and data are free text); 5 a value outside the
//!   field's enumeration (each space-separated value of a MULTIPLE* field);
//! - groups: 15 an entry that does not start with the delimiter or whose members are out of
//!   the dictionary's order (a member repeated in one entry included); 16 a NumInGroup that
//!   differs from the entries present; a group ends at the first tag that is not a member;
//! - 1 a required field missing: header, body, trailer, and in each group entry.
//!
//! `check_repeats` is the repeat check alone (13), for a session that does not validate.
//!
//! Reason 4 (tag without a value) is the decoder's (`DecodeError::EmptyValue`, which
//! `session::malformed_reason` maps to 4), and so is the place of BeginString, BodyLength,
//! MsgType and CheckSum (a message with one out of place is garbled: ignored, no MsgSeqNum
//! taken); such a message never reaches `validate`.
//!
//! Never: allocates, hashes, or panics while validating (the seen-sets are bitsets on the
//! stack, lookups are a dense array by tag and binary searches over sorted static tables);
//! `Violation::text` allocates, once, for a message that is answered with a Reject.
//!
//! Invariants: every table is sorted where it is searched (the build checks the source and
//! sorts); `validate` accepts a message only if every field is defined, allowed where it is,
//! well formed and in range, and every required field and group entry is present.

use crate::decode::{parse_u64, Message};
use crate::{FixVersion, SessionRejectReason};

/// A field's FIX data type, as the dictionary names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldType {
    Int,
    Length,
    NumInGroup,
    SeqNum,
    DayOfMonth,
    Float,
    Qty,
    Price,
    PriceOffset,
    Amt,
    Percentage,
    Char,
    Boolean,
    String,
    MultipleCharValue,
    /// MULTIPLEVALUESTRING (FIX 4.x) or MULTIPLESTRINGVALUE (FIX 5.0).
    MultipleStringValue,
    Country,
    Currency,
    Exchange,
    Language,
    MonthYear,
    UtcTimestamp,
    UtcTimeOnly,
    /// UTCDATEONLY (UTCDATE in FIX 4.2).
    UtcDateOnly,
    LocalMktDate,
    TzTimeOnly,
    TzTimestamp,
    Data,
    XmlData,
}

impl FieldType {
    /// The type's name in the FIX specification.
    pub fn name(self) -> &'static str {
        use FieldType as T;
        match self {
            T::Int => "INT",
            T::Length => "LENGTH",
            T::NumInGroup => "NUMINGROUP",
            T::SeqNum => "SEQNUM",
            T::DayOfMonth => "DAYOFMONTH",
            T::Float => "FLOAT",
            T::Qty => "QTY",
            T::Price => "PRICE",
            T::PriceOffset => "PRICEOFFSET",
            T::Amt => "AMT",
            T::Percentage => "PERCENTAGE",
            T::Char => "CHAR",
            T::Boolean => "BOOLEAN",
            T::String => "STRING",
            T::MultipleCharValue => "MULTIPLECHARVALUE",
            T::MultipleStringValue => "MULTIPLESTRINGVALUE",
            T::Country => "COUNTRY",
            T::Currency => "CURRENCY",
            T::Exchange => "EXCHANGE",
            T::Language => "LANGUAGE",
            T::MonthYear => "MONTHYEAR",
            T::UtcTimestamp => "UTCTIMESTAMP",
            T::UtcTimeOnly => "UTCTIMEONLY",
            T::UtcDateOnly => "UTCDATEONLY",
            T::LocalMktDate => "LOCALMKTDATE",
            T::TzTimeOnly => "TZTIMEONLY",
            T::TzTimestamp => "TZTIMESTAMP",
            T::Data => "DATA",
            T::XmlData => "XMLDATA",
        }
    }

    /// Whether `v` (non-empty) is well formed for this type.
    pub fn accepts(self, v: &[u8]) -> bool {
        use FieldType as T;
        match self {
            T::Int => is_digits(v.strip_prefix(b"-").unwrap_or(v)),
            T::Length | T::NumInGroup | T::SeqNum => parse_u64(v).is_some(),
            T::DayOfMonth => matches!(parse_u64(v), Some(1..=31)) && v.len() <= 2,
            T::Float | T::Qty | T::Price | T::PriceOffset | T::Amt | T::Percentage => is_decimal(v),
            T::Char => v.len() == 1,
            T::Boolean => v == b"Y" || v == b"N",
            T::MultipleCharValue => {
                v.len() % 2 == 1
                    && v.iter()
                        .enumerate()
                        .all(|(i, &c)| (c == b' ') == (i % 2 == 1))
            }
            T::MonthYear => is_month_year(v),
            T::UtcTimestamp => is_utc_timestamp(v),
            T::UtcTimeOnly => is_time_only(v),
            T::UtcDateOnly | T::LocalMktDate => is_date(v),
            T::String
            | T::MultipleStringValue
            | T::Country
            | T::Currency
            | T::Exchange
            | T::Language
            | T::TzTimeOnly
            | T::TzTimestamp
            | T::Data
            | T::XmlData => true,
        }
    }

    fn is_multiple(self) -> bool {
        matches!(
            self,
            FieldType::MultipleCharValue | FieldType::MultipleStringValue
        )
    }
}

/// Where a field belongs in a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Segment {
    Header,
    Body,
    Trailer,
}

/// One field of a dictionary.
#[derive(Debug)]
pub struct FieldDef {
    pub tag: u32,
    pub name: &'static str,
    pub ty: FieldType,
    segment: Segment,
    /// The allowed values when they are all single ASCII bytes: bit c set for byte c.
    chars: [u64; 2],
    /// The allowed values otherwise when all have at most 8 bytes, as sorted `key64`s.
    keys: &'static [u64],
    /// The allowed values otherwise, sorted (all three empty: any value).
    values: &'static [&'static [u8]],
}

/// Up to 8 bytes (no NUL) as a big-endian u64, left-aligned: one integer comparison per
/// enumerated value instead of a byte-string comparison. `None` for a longer value.
#[inline]
fn key64(v: &[u8]) -> Option<u64> {
    if v.len() > 8 || v.contains(&0) {
        return None;
    }
    let mut k = [0u8; 8];
    k[..v.len()].copy_from_slice(v);
    Some(u64::from_be_bytes(k))
}

impl FieldDef {
    /// Whether the field's values are enumerated.
    pub fn is_enumerated(&self) -> bool {
        self.chars != [0, 0] || !self.keys.is_empty() || !self.values.is_empty()
    }

    /// Whether `v` is one of the enumerated values (or any value if there are none). A
    /// MULTIPLE* value is one value here; `validate` checks each of its parts.
    pub fn allows(&self, v: &[u8]) -> bool {
        if self.chars != [0, 0] {
            return match v {
                [c] if *c < 128 => self.chars[(*c / 64) as usize] >> (*c % 64) & 1 == 1,
                _ => false,
            };
        }
        if !self.keys.is_empty() {
            return key64(v).is_some_and(|k| self.keys.binary_search(&k).is_ok());
        }
        self.values.is_empty() || self.values.binary_search(&v).is_ok()
    }

    /// The first part of `v` the field does not allow (`v` itself for a single-valued field).
    fn first_disallowed<'v>(&self, v: &'v [u8]) -> Option<&'v [u8]> {
        if !self.is_enumerated() {
            return None;
        }
        if self.ty.is_multiple() {
            v.split(|&c| c == b' ').find(|p| !self.allows(p))
        } else {
            (!self.allows(v)).then_some(v)
        }
    }
}

/// A member of a layout (message body, header, trailer or group entry), sorted by tag.
#[derive(Debug)]
struct Entry {
    tag: u32,
    /// Index in the dictionary's fields.
    field: u16,
    /// Position in the dictionary's definition order.
    ordinal: u16,
    /// 1 + index in the dictionary's groups if this is a NumInGroup field, else 0.
    group: u16,
    required: bool,
}

#[derive(Debug)]
struct Layout {
    entries: &'static [Entry],
    /// Indices in `entries` of the required members, in definition order.
    required: &'static [u16],
    /// Messages, header and trailer: for each tag below `DIRECT_TAGS` up to the layout's
    /// largest such tag, 1 + its index in `entries` (0: not a member). Empty for groups.
    direct: &'static [u16],
}

/// Tags below this are found in a message layout with one load (the order path's tags).
const DIRECT_TAGS: u32 = 128;

impl Layout {
    #[inline]
    fn find(&self, tag: u32) -> Option<usize> {
        if !self.direct.is_empty() && tag < DIRECT_TAGS {
            return match self.direct.get(tag as usize) {
                Some(&k) if k != 0 => Some(k as usize - 1),
                _ => None,
            };
        }
        self.entries.binary_search_by_key(&tag, |e| e.tag).ok()
    }
}

#[derive(Debug)]
struct GroupDef {
    count_tag: u32,
    delimiter: u32,
    layout: Layout,
}

/// One message type of a dictionary.
#[derive(Debug)]
pub struct MessageDef {
    key: u32,
    pub msg_type: &'static [u8],
    pub name: &'static str,
    /// A session-level message (Heartbeat, Logon, ...).
    pub admin: bool,
    layout: Layout,
}

impl MessageDef {
    /// Whether `tag` may appear in this message's body (outside repeating groups).
    pub fn allows(&self, tag: u32) -> bool {
        self.layout.find(tag).is_some()
    }
    /// Whether `tag` must appear in this message's body.
    pub fn requires(&self, tag: u32) -> bool {
        self.layout
            .find(tag)
            .is_some_and(|k| self.layout.entries[k].required)
    }
}

/// The fields and messages of one FIX version.
#[derive(Debug)]
pub struct Dictionary {
    version: FixVersion,
    /// Sorted by tag.
    fields: &'static [FieldDef],
    /// For each tag up to the largest defined: 1 + its index in `fields`, or 0.
    index: &'static [u16],
    header: Layout,
    trailer: Layout,
    /// Sorted by `key`.
    messages: &'static [MessageDef],
    groups: &'static [GroupDef],
}

include!(concat!(env!("OUT_DIR"), "/dict_tables.rs"));

const SEEN_WORDS: usize = TOP_ENTRIES_MAX.div_ceil(64);

/// The dictionary of a FIX version (5.0SP2: FIXT.1.1 session layer + 5.0SP2 application).
pub fn dictionary(version: FixVersion) -> &'static Dictionary {
    match version {
        FixVersion::Fix42 => &FIX42,
        FixVersion::Fix44 => &FIX44,
        FixVersion::Fix50Sp2 => &FIX50SP2,
    }
}

fn msg_key(msg_type: &[u8]) -> Option<u32> {
    if msg_type.is_empty() || msg_type.len() > 3 {
        return None;
    }
    Some(msg_type.iter().fold(0, |k, &c| (k << 8) | c as u32))
}

impl Dictionary {
    pub fn version(&self) -> FixVersion {
        self.version
    }

    /// The field with `tag`, if the version defines it.
    #[inline]
    pub fn field(&self, tag: u32) -> Option<&'static FieldDef> {
        match self.index.get(tag as usize) {
            Some(&i) if i != 0 => Some(&self.fields[i as usize - 1]),
            _ => None,
        }
    }

    /// Every field of the version, sorted by tag.
    pub fn fields(&self) -> &'static [FieldDef] {
        self.fields
    }

    /// The message with this MsgType, if the dictionary defines it.
    pub fn message(&self, msg_type: &[u8]) -> Option<&'static MessageDef> {
        let key = msg_key(msg_type)?;
        let i = self.messages.binary_search_by_key(&key, |m| m.key).ok()?;
        Some(&self.messages[i])
    }

    /// Every message of the dictionary, sorted by MsgType (shorter first).
    pub fn messages(&self) -> &'static [MessageDef] {
        self.messages
    }

    /// Whether `tag` belongs to the standard header (a header group's members included).
    pub fn is_header_tag(&self, tag: u32) -> bool {
        self.field(tag)
            .is_some_and(|f| f.segment == Segment::Header)
    }

    /// Whether `tag` belongs to the standard trailer.
    pub fn is_trailer_tag(&self, tag: u32) -> bool {
        self.field(tag)
            .is_some_and(|f| f.segment == Segment::Trailer)
    }

    /// Checks `msg` against this dictionary (see the module's header for what is checked).
    /// A MsgType the dictionary does not define is `InvalidMsgType` (11) with RefTagID 35;
    /// call `message` first to answer it otherwise. Allocates nothing.
    pub fn validate(&self, msg: &Message<'_>) -> Result<(), Violation> {
        let Some(def) = self.message(msg.msg_type()) else {
            return Err(self.violation(Kind::UnknownMsgType, Some(35), 2, 0));
        };
        // The decoder guarantees 8, 9, 35 first and CheckSum last.
        let n = msg.field_count() - 1;
        let mut phase = Segment::Header;
        let mut head = [0u64; 1];
        let mut tail = [0u64; 1];
        let mut body = [0u64; SEEN_WORDS];
        let mut i = 3;
        while i < n {
            let (tag, v) = msg.field(i);
            let Some(f) = self.field(tag) else {
                return Err(self.violation(Kind::Undefined, Some(tag), i, 0));
            };
            let (layout, seen): (&Layout, &mut [u64]) = match f.segment {
                Segment::Header => {
                    if phase != Segment::Header {
                        return Err(self.violation(Kind::HeaderAfterBody, Some(tag), i, 0));
                    }
                    (&self.header, &mut head)
                }
                Segment::Body => {
                    if phase == Segment::Trailer {
                        return Err(self.violation(Kind::AfterTrailer, Some(tag), i, 0));
                    }
                    phase = Segment::Body;
                    (&def.layout, &mut body)
                }
                Segment::Trailer => {
                    phase = Segment::Trailer;
                    (&self.trailer, &mut tail)
                }
            };
            let Some(k) = layout.find(tag) else {
                return Err(self.violation(Kind::NotInMessage, Some(tag), i, 0));
            };
            let (word, bit) = (k / 64, 1u64 << (k % 64));
            if seen[word] & bit != 0 || matches!(tag, 8 | 9 | 35 | 10) {
                return Err(self.violation(Kind::Repeated, Some(tag), i, 0));
            }
            seen[word] |= bit;
            self.check_value(f, v, i)?;
            i += 1;
            let e = &layout.entries[k];
            if e.group != 0 {
                i = self.check_group(&self.groups[e.group as usize - 1], v, msg, i, n)?;
            }
        }
        for (layout, seen) in [
            (&self.header, &head[..]),
            (&def.layout, &body[..]),
            (&self.trailer, &tail[..]),
        ] {
            for &k in layout.required {
                let k = k as usize;
                if seen[k / 64] >> (k % 64) & 1 == 0 {
                    let tag = layout.entries[k].tag;
                    return Err(self.violation(Kind::Missing, Some(tag), NONE, 0));
                }
            }
        }
        Ok(())
    }

    /// The one check a session that does not validate still makes: a tag below 128 (the
    /// header's and the order path's) repeated where its MsgType has no repeating group
    /// holding it is `TagAppearsMoreThanOnce` (13). A header tag or BeginString, BodyLength,
    /// MsgType or CheckSum never repeats; a body tag of a MsgType the dictionary does not
    /// define is left to whoever answers that MsgType. One pass over the fields for a
    /// message without such a repeat (`Message::repeated_tags`). Allocates nothing.
    pub fn check_repeats(&self, msg: &Message<'_>) -> Result<(), Violation> {
        let mut def = None;
        for (i, tag) in msg.repeated_tags() {
            let def = *def.get_or_insert_with(|| self.message(msg.msg_type()));
            let grouped = !matches!(tag, 8 | 9 | 35 | 10)
                && !self.is_header_tag(tag)
                && def.is_none_or(|d| self.in_group(&d.layout, tag));
            if !grouped {
                return Err(self.violation(Kind::Repeated, Some(tag), i, 0));
            }
        }
        Ok(())
    }

    /// Whether `tag` is a member of a repeating group of `layout`, at any depth.
    fn in_group(&self, layout: &Layout, tag: u32) -> bool {
        layout.entries.iter().filter(|e| e.group != 0).any(|e| {
            let g = &self.groups[e.group as usize - 1];
            g.layout.find(tag).is_some() || self.in_group(&g.layout, tag)
        })
    }

    /// A value the field enumerates is well formed even where the standard's own type says
    /// otherwise (FIX 4.4 MassCancelRejectReason 532 is a CHAR whose "Other" is 99).
    #[inline]
    fn check_value(&self, f: &FieldDef, v: &[u8], i: usize) -> Result<(), Violation> {
        let enumerated = f.is_enumerated();
        if enumerated && f.first_disallowed(v).is_none() {
            return Ok(());
        }
        if !f.ty.accepts(v) {
            return Err(self.violation(Kind::Format, Some(f.tag), i, 0));
        }
        if enumerated {
            return Err(self.violation(Kind::Value, Some(f.tag), i, 0));
        }
        Ok(())
    }

    /// The entries of group `g` from field `i` on, its count field's value being `count`;
    /// returns the index of the first field after the group.
    fn check_group(
        &self,
        g: &GroupDef,
        count: &[u8],
        msg: &Message<'_>,
        mut i: usize,
        n: usize,
    ) -> Result<usize, Violation> {
        let count_at = i - 1;
        let mut entries: u32 = 0;
        while i < n {
            let tag = msg.field(i).0;
            if tag != g.delimiter {
                if entries == 0 && g.layout.find(tag).is_some() {
                    return Err(self.violation(Kind::GroupStart, Some(tag), i, g.count_tag));
                }
                break;
            }
            entries += 1;
            i = self.check_entry(g, msg, i, n)?;
        }
        if parse_u64(count) != Some(entries as u64) {
            return Err(self.violation(Kind::GroupCount, Some(g.count_tag), count_at, entries));
        }
        Ok(i)
    }

    /// One entry of group `g` starting with its delimiter at field `i`; returns the index of
    /// the first field after it.
    fn check_entry(
        &self,
        g: &GroupDef,
        msg: &Message<'_>,
        mut i: usize,
        n: usize,
    ) -> Result<usize, Violation> {
        let layout = &g.layout;
        let mut last: i32 = -1;
        let mut next_required = 0;
        while i < n {
            let (tag, v) = msg.field(i);
            let Some(k) = layout.find(tag) else { break };
            if tag == g.delimiter && last >= 0 {
                break;
            }
            let e = &layout.entries[k];
            let ordinal = e.ordinal as i32;
            if ordinal <= last {
                return Err(self.violation(Kind::GroupOrder, Some(tag), i, g.count_tag));
            }
            if let Some(&r) = layout.required.get(next_required) {
                let r = &layout.entries[r as usize];
                if (r.ordinal as i32) < ordinal {
                    return Err(self.violation(Kind::MissingInGroup, Some(r.tag), i, g.count_tag));
                }
                if r.ordinal as i32 == ordinal {
                    next_required += 1;
                }
            }
            self.check_value(&self.fields[e.field as usize], v, i)?;
            last = ordinal;
            i += 1;
            if e.group != 0 {
                i = self.check_group(&self.groups[e.group as usize - 1], v, msg, i, n)?;
            }
        }
        if let Some(&r) = layout.required.get(next_required) {
            let tag = layout.entries[r as usize].tag;
            return Err(self.violation(Kind::MissingInGroup, Some(tag), i, g.count_tag));
        }
        Ok(i)
    }

    #[cold]
    fn violation(&self, kind: Kind, ref_tag: Option<u32>, at: usize, extra: u32) -> Violation {
        use SessionRejectReason as R;
        let reason = match kind {
            Kind::UnknownMsgType => R::InvalidMsgType,
            Kind::Undefined => R::InvalidTagNumber,
            Kind::NotInMessage => R::TagNotDefinedForMessageType,
            Kind::Missing | Kind::MissingInGroup => R::RequiredTagMissing,
            Kind::Format => R::IncorrectDataFormat,
            Kind::Value => R::ValueIncorrect,
            Kind::Repeated => R::TagAppearsMoreThanOnce,
            Kind::HeaderAfterBody | Kind::AfterTrailer => R::TagSpecifiedOutOfRequiredOrder,
            Kind::GroupStart | Kind::GroupOrder => R::RepeatingGroupFieldsOutOfOrder,
            Kind::GroupCount => R::IncorrectNumInGroupCount,
        };
        Violation {
            reason,
            ref_tag,
            version: self.version,
            kind,
            at: u32::try_from(at).unwrap_or(u32::MAX),
            extra,
        }
    }
}

const NONE: usize = u32::MAX as usize;

/// What exactly was wrong (the text's template).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    UnknownMsgType,
    Undefined,
    NotInMessage,
    Missing,
    MissingInGroup,
    Format,
    Value,
    Repeated,
    HeaderAfterBody,
    AfterTrailer,
    GroupStart,
    GroupOrder,
    GroupCount,
}

/// Why a message does not conform: the Reject's SessionRejectReason (373) and RefTagID (371),
/// and where, to say it in words (`text`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Violation {
    pub reason: SessionRejectReason,
    pub ref_tag: Option<u32>,
    version: FixVersion,
    kind: Kind,
    /// Index in the message of the field concerned (`u32::MAX`: none).
    at: u32,
    /// The group's count tag (group problems), or the entries found (count mismatch).
    extra: u32,
}

impl Violation {
    /// The Reject's Text (58): names the tag by number and name and quotes the bad value.
    /// `msg` must be the message that was validated.
    pub fn text(&self, msg: &Message<'_>) -> String {
        let d = dictionary(self.version);
        let name = |tag: u32| match d.field(tag) {
            Some(f) => format!("{}({tag})", f.name),
            None => format!("tag {tag}"),
        };
        let value = || {
            let at = self.at as usize;
            let v = if at < msg.field_count() {
                msg.field(at).1
            } else {
                b""
            };
            String::from_utf8_lossy(v).into_owned()
        };
        let tag = self.ref_tag.unwrap_or(0);
        let version = String::from_utf8_lossy(self.version.begin_string()).into_owned();
        let version = if self.version == FixVersion::Fix50Sp2 {
            "FIXT.1.1/FIX.5.0SP2".to_string()
        } else {
            version
        };
        let msg_name = || match d.message(msg.msg_type()) {
            Some(m) => format!("{} (35={})", m.name, String::from_utf8_lossy(m.msg_type)),
            None => format!("35={}", String::from_utf8_lossy(msg.msg_type())),
        };
        match self.kind {
            Kind::UnknownMsgType => {
                format!("MsgType(35) '{}' is not defined in {version}", value())
            }
            Kind::Undefined => format!("tag {tag} is not defined in {version}"),
            Kind::NotInMessage => format!("{} is not defined for {}", name(tag), msg_name()),
            Kind::Missing => format!("required tag {} missing", name(tag)),
            Kind::MissingInGroup => format!(
                "required tag {} missing in a {} entry",
                name(tag),
                name(self.extra)
            ),
            Kind::Format => {
                let ty = d.field(tag).map_or("", |f| f.ty.name());
                format!("{} '{}' is not a valid {ty}", name(tag), value())
            }
            Kind::Value => {
                let v = value();
                let bad = d
                    .field(tag)
                    .and_then(|f| f.first_disallowed(v.as_bytes()))
                    .map_or(v.clone(), |b| String::from_utf8_lossy(b).into_owned());
                format!("{} has no value '{bad}'", name(tag))
            }
            Kind::Repeated => format!("{} appears more than once", name(tag)),
            Kind::HeaderAfterBody => format!("header tag {} after the body", name(tag)),
            Kind::AfterTrailer => format!("{} after the trailer", name(tag)),
            Kind::GroupStart => format!(
                "{} entry starts with {}, not its delimiter",
                name(self.extra),
                name(tag)
            ),
            Kind::GroupOrder => format!(
                "{} out of order (or repeated) in a {} entry",
                name(tag),
                name(self.extra)
            ),
            Kind::GroupCount => format!(
                "{}={} but {} entries follow",
                name(tag),
                value(),
                self.extra
            ),
        }
    }

    /// `text` appended to `out`.
    pub fn write_text(&self, msg: &Message<'_>, out: &mut Vec<u8>) {
        out.extend_from_slice(self.text(msg).as_bytes());
    }
}

fn is_digits(v: &[u8]) -> bool {
    !v.is_empty() && v.iter().all(u8::is_ascii_digit)
}

/// `-?digits[.digits]`, `-?.digits` or `-?digits.`: at least one digit, no exponent.
fn is_decimal(v: &[u8]) -> bool {
    let v = v.strip_prefix(b"-").unwrap_or(v);
    let mut digits = 0;
    let mut dots = 0;
    for &c in v {
        match c {
            b'0'..=b'9' => digits += 1,
            b'.' => dots += 1,
            _ => return false,
        }
    }
    digits > 0 && dots <= 1
}

fn two(v: &[u8], at: usize) -> Option<u32> {
    match v.get(at..at + 2)? {
        [a @ b'0'..=b'9', b @ b'0'..=b'9'] => Some(((a - b'0') * 10 + (b - b'0')) as u32),
        _ => None,
    }
}

/// YYYYMMDD.
fn is_date(v: &[u8]) -> bool {
    v.len() == 8
        && is_digits(&v[..4])
        && matches!(two(v, 4), Some(1..=12))
        && matches!(two(v, 6), Some(1..=31))
}

/// HH:MM:SS with an optional fraction of 1 to 9 digits.
fn is_time_only(v: &[u8]) -> bool {
    if v.len() < 8 || v[2] != b':' || v[5] != b':' {
        return false;
    }
    let hms = matches!(two(v, 0), Some(0..=23))
        && matches!(two(v, 3), Some(0..=59))
        && matches!(two(v, 6), Some(0..=60));
    hms && match &v[8..] {
        [] => true,
        [b'.', frac @ ..] => frac.len() <= 9 && is_digits(frac),
        _ => false,
    }
}

/// YYYYMMDD-HH:MM:SS with no fraction or one of 3, 6 or 9 digits: the forms
/// `time::parse_utc_timestamp` reads (which also wants a real day and a year from 1970).
fn is_utc_timestamp(v: &[u8]) -> bool {
    v.len() >= 17
        && v[8] == b'-'
        && is_date(&v[..8])
        && matches!(v.len(), 17 | 21 | 24 | 27)
        && is_time_only(&v[9..])
}

/// YYYYMM, YYYYMMDD or YYYYMMwN (week 1 to 5).
fn is_month_year(v: &[u8]) -> bool {
    if v.len() < 6 || !is_digits(&v[..4]) || !matches!(two(v, 4), Some(1..=12)) {
        return false;
    }
    match &v[6..] {
        [] => true,
        [b'w', b'1'..=b'5'] => true,
        [_, _] => matches!(two(v, 6), Some(1..=31)),
        _ => false,
    }
}

/// Fuzz entry: frames and decodes `bytes` as a stream (resyncing after garbage) and as one
/// message body in each version, and validates every decoded message against every
/// dictionary. Never panics; a violation's RefTagID names a field of the message unless a
/// field is missing, and its text is never empty.
pub fn fuzz_validate(bytes: &[u8]) {
    use crate::decode::{frame, resync, Decoder, Limits};
    let mut decoder = Decoder::new(Limits::default());
    let check = |msg: &Message<'_>| {
        for v in [FixVersion::Fix42, FixVersion::Fix44, FixVersion::Fix50Sp2] {
            // The repeat check alone is never stricter than the whole validation, and names
            // a tag the message repeats.
            let repeats = dictionary(v).check_repeats(msg);
            if let Err(e) = repeats {
                let tag = e.ref_tag.expect("a repeat names its tag");
                assert_eq!(e.reason, SessionRejectReason::TagAppearsMoreThanOnce);
                assert!(msg.fields().filter(|&(t, _)| t == tag).count() > 1, "{e:?}");
            }
            let validated = dictionary(v).validate(msg);
            assert!(repeats.is_ok() || validated.is_err(), "{repeats:?}");
            if let Err(e) = validated {
                assert!(!e.text(msg).is_empty());
                if e.reason != SessionRejectReason::RequiredTagMissing {
                    let tag = e
                        .ref_tag
                        .expect("a violation other than a missing tag names one");
                    assert!(msg.fields().any(|(t, _)| t == tag), "{e:?}");
                }
            }
        }
    };
    let mut rest = bytes;
    while !rest.is_empty() {
        match frame(rest, decoder.limits().msg_len_max) {
            Ok(None) => break,
            Ok(Some(len)) => {
                if let Ok(msg) = decoder.decode(rest) {
                    check(&msg);
                }
                rest = &rest[len..];
            }
            Err(_) => rest = &rest[resync(rest).max(1)..],
        }
    }
    let mut framed = Vec::with_capacity(bytes.len() + 32);
    for v in [FixVersion::Fix42, FixVersion::Fix44, FixVersion::Fix50Sp2] {
        crate::wrap_body(v, bytes, &mut framed);
        if let Ok(msg) = decoder.decode(&framed) {
            check(&msg);
        }
    }
}
