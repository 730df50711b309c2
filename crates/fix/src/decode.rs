//! Zero-copy tag=value decoder: frame detection, BodyLength and CheckSum validation, and a
//! message view whose fields are `(tag, &[u8])` slices of the caller's buffer.
//!
//! Role: the first thing every inbound byte meets. `frame` says whether a buffer starts with a
//! complete, intact message (and how long it is); `Decoder::decode` splits it into fields.
//!
//! Never: allocates per message (the field array is preallocated once, `Limits::fields_max`),
//! copies values, uses floats, or panics on any input.
//!
//! Invariants: a `Message` always has BeginString, BodyLength and MsgType as its first three
//! fields and CheckSum as its last, and its BodyLength and CheckSum were verified. Errors say
//! exactly what was wrong so the session can choose between ignoring a garbled frame and
//! answering with the right Reject.

use crate::decimal::{Decimal, DecimalError};
use crate::tags;
use crate::time::parse_utc_timestamp;

/// Field delimiter.
pub const SOH: u8 = 0x01;

/// Size limits enforced by the decoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest whole message accepted, header and trailer included.
    pub msg_len_max: usize,
    /// Most fields accepted in one message, header and trailer included.
    pub fields_max: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            msg_len_max: 8192,
            fields_max: 256,
        }
    }
}

/// Why the start of a buffer is not an intact frame. The FIX rule for all of these is the
/// same: the message is garbled, ignore it (no Reject, no sequence number consumed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameError {
    /// The buffer does not start with `8=` and a short BeginString value.
    BadBeginString,
    /// The second field is not `9=` followed by digits.
    BadBodyLength,
    /// The trailer `10=NNN<SOH>` is not where BodyLength says it is.
    BodyLengthMismatch,
    /// The declared CheckSum differs from the sum of the bytes.
    BadCheckSum { declared: u8, computed: u8 },
    /// The declared size exceeds `Limits::msg_len_max`.
    TooLong { len: usize, max: usize },
    /// MsgType (35) is not the third field (found by the decoder, past `frame`).
    MsgTypeNotThird,
}

impl FrameError {
    pub fn as_str(self) -> &'static str {
        match self {
            FrameError::BadBeginString => "garbled: no BeginString(8)",
            FrameError::BadBodyLength => "garbled: no valid BodyLength(9)",
            FrameError::BodyLengthMismatch => "garbled: BodyLength(9) does not match the trailer",
            FrameError::BadCheckSum { .. } => "garbled: wrong CheckSum(10)",
            FrameError::TooLong { .. } => "garbled: message longer than the limit",
            FrameError::MsgTypeNotThird => "garbled: MsgType(35) is not the third field",
        }
    }
}

const BEGIN_STRING_MAX: usize = 16;
const BODY_LENGTH_DIGITS_MAX: usize = 7;
const TRAILER_LEN: usize = 7; // "10=NNN\x01"

/// Looks at the start of `buf`: `Ok(Some(len))` if it holds a complete intact message of `len`
/// bytes, `Ok(None)` if more bytes are needed, or why the bytes can never become a message.
pub fn frame(buf: &[u8], msg_len_max: usize) -> Result<Option<usize>, FrameError> {
    // "8=" BeginString SOH
    for (i, &want) in b"8=".iter().enumerate() {
        match buf.get(i) {
            None => return Ok(None),
            Some(&c) if c != want => return Err(FrameError::BadBeginString),
            Some(_) => {}
        }
    }
    // The BeginStrings Rialto speaks are compared whole; any other is read byte by byte.
    let mut i = 2;
    if buf.starts_with(b"8=FIX.4.4\x01") || buf.starts_with(b"8=FIX.4.2\x01") {
        i = 9;
    } else if buf.starts_with(b"8=FIXT.1.1\x01") {
        i = 10;
    } else {
        loop {
            match buf.get(i) {
                None if i - 2 <= BEGIN_STRING_MAX => return Ok(None),
                Some(&SOH) if i > 2 => break,
                Some(c) if i - 2 < BEGIN_STRING_MAX && c.is_ascii_graphic() => i += 1,
                _ => return Err(FrameError::BadBeginString),
            }
        }
    }
    i += 1;
    // "9=" digits SOH
    for want in b"9=" {
        match buf.get(i) {
            None => return Ok(None),
            Some(c) if c != want => return Err(FrameError::BadBodyLength),
            Some(_) => i += 1,
        }
    }
    let digits_start = i;
    let mut body_len: usize = 0;
    loop {
        match buf.get(i) {
            None if i - digits_start <= BODY_LENGTH_DIGITS_MAX => return Ok(None),
            Some(&SOH) if i > digits_start => break,
            Some(c) if c.is_ascii_digit() && i - digits_start < BODY_LENGTH_DIGITS_MAX => {
                body_len = body_len * 10 + (c - b'0') as usize;
                i += 1;
            }
            _ => return Err(FrameError::BadBodyLength),
        }
    }
    let body_start = i + 1;
    let body_end = body_start + body_len;
    let total = body_end + TRAILER_LEN;
    if total > msg_len_max {
        return Err(FrameError::TooLong {
            len: total,
            max: msg_len_max,
        });
    }
    if buf.len() < total {
        return Ok(None);
    }
    let trailer = &buf[body_end..total];
    if body_len == 0
        || buf[body_end - 1] != SOH
        || &trailer[..3] != b"10="
        || trailer[6] != SOH
        || !trailer[3..6].iter().all(u8::is_ascii_digit)
    {
        return Err(FrameError::BodyLengthMismatch);
    }
    let declared = trailer[3..6]
        .iter()
        .fold(0u32, |a, c| a * 10 + (c - b'0') as u32);
    let computed = checksum(&buf[..body_end]);
    if declared != computed as u32 {
        return Err(FrameError::BadCheckSum {
            declared: declared as u8,
            computed,
        });
    }
    Ok(Some(total))
}

/// Sum of the bytes modulo 256 (the FIX CheckSum).
#[inline]
pub fn checksum(bytes: &[u8]) -> u8 {
    // Sum in u32 chunks: the compiler vectorizes this well, and a message never overflows it.
    let mut sum: u32 = 0;
    for &b in bytes {
        sum = sum.wrapping_add(b as u32);
    }
    sum as u8
}

/// After a garbled frame at the start of `buf`: how many bytes to drop so that `buf` starts at
/// the next plausible message (`8=FIX`). Always at least 1 for a non-empty buffer; keeps a
/// short tail that might be the start of the next message.
pub fn resync(buf: &[u8]) -> usize {
    const START: &[u8] = b"8=FIX";
    (1..buf.len())
        .find(|&i| {
            let rest = &buf[i..];
            if rest.len() >= START.len() {
                rest.starts_with(START)
            } else {
                START.starts_with(rest)
            }
        })
        .unwrap_or(buf.len())
}

/// A field's position in the decoded buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldPos {
    pub tag: u32,
    start: u32,
    end: u32,
}

/// Why a framed message could not be split into fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecodeError {
    /// The buffer does not start with a complete message.
    Incomplete,
    /// The frame itself is garbled (see `FrameError`).
    Frame(FrameError),
    /// More than `Limits::fields_max` fields.
    TooManyFields { max: usize },
    /// A field without a valid tag number (no `=`, empty, not digits, zero, leading zero), at
    /// this byte offset of the message (answered 373=0, Invalid tag number);
    /// `TagProblem::classify` says which.
    InvalidTag { offset: usize },
    /// `tag=` with nothing before the SOH.
    EmptyValue { tag: u32 },
}

/// What is wrong with the tag of a field that does not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TagProblem {
    /// The field has no `=` before its SOH.
    NoEquals,
    /// Nothing before the `=`.
    Empty,
    /// The tag holds a byte that is not a digit.
    NotNumeric,
    /// More than 9 digits.
    TooLong,
    /// The tag is zero (`0=`, `00=`).
    Zero,
    /// A minus sign and digits (`-1=`): `tag` is their number.
    Negative { tag: u32 },
    /// Digits with a leading zero (`055=`): `tag` is their number.
    LeadingZero { tag: u32 },
}

impl TagProblem {
    /// The tag number to name in RefTagID (371), when the field has one: what the client
    /// wrote, read as a number (0, a negative number, digits with a leading zero).
    pub fn ref_tag(self) -> Option<i64> {
        match self {
            TagProblem::LeadingZero { tag } => Some(tag as i64),
            TagProblem::Zero => Some(0),
            TagProblem::Negative { tag } => Some(-(tag as i64)),
            _ => None,
        }
    }

    /// What is wrong, in words ("has no '='").
    pub fn as_str(self) -> &'static str {
        match self {
            TagProblem::NoEquals => "has no '='",
            TagProblem::Empty => "has an empty tag",
            TagProblem::NotNumeric => "has a tag that is not a number",
            TagProblem::TooLong => "has a tag of more than 9 digits",
            TagProblem::Zero => "has tag 0",
            TagProblem::Negative { .. } => "has a negative tag",
            TagProblem::LeadingZero { .. } => "has a tag with a leading zero",
        }
    }

    /// What is wrong with the field at `offset` of `buf`, whose tag the decoder refused
    /// (`DecodeError::InvalidTag`). Worked out here, after the fact, so that the decoder's
    /// loop carries no more than the offset.
    pub fn classify(buf: &[u8], offset: usize) -> TagProblem {
        let field = buf.get(offset..).unwrap_or(b"");
        let field = &field[..field.iter().position(|&c| c == SOH).unwrap_or(field.len())];
        let Some(eq) = field.iter().position(|&c| c == b'=') else {
            return TagProblem::NoEquals;
        };
        let digits = &field[..eq];
        if digits.is_empty() {
            return TagProblem::Empty;
        }
        if let [b'-', rest @ ..] = digits {
            if !rest.is_empty() && rest.len() <= 9 && rest.iter().all(u8::is_ascii_digit) {
                if let Some(tag) = parse_u64(rest).filter(|&t| t > 0) {
                    return TagProblem::Negative { tag: tag as u32 };
                }
            }
        }
        if !digits.iter().all(u8::is_ascii_digit) {
            return TagProblem::NotNumeric;
        }
        if digits.len() > 9 {
            return TagProblem::TooLong;
        }
        match parse_u64(digits) {
            Some(0) | None => TagProblem::Zero,
            Some(tag) => TagProblem::LeadingZero { tag: tag as u32 },
        }
    }
}

/// A field-level problem found while reading a decoded message: which tag and what kind, so
/// the session can answer with `SessionRejectReason` and `RefTagID`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldError {
    pub tag: u32,
    pub kind: FieldErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldErrorKind {
    /// A required tag is absent (373=1).
    Missing,
    /// The value does not parse as the tag's type (373=6).
    BadFormat,
    /// The value parses but is not allowed (373=5), e.g. Side=7 or a price off the tick.
    BadValue,
    /// NoXxx count differs from the entries present (373=16).
    GroupCount,
}

impl FieldError {
    pub fn missing(tag: u32) -> FieldError {
        FieldError {
            tag,
            kind: FieldErrorKind::Missing,
        }
    }
    pub fn bad_format(tag: u32) -> FieldError {
        FieldError {
            tag,
            kind: FieldErrorKind::BadFormat,
        }
    }
    pub fn bad_value(tag: u32) -> FieldError {
        FieldError {
            tag,
            kind: FieldErrorKind::BadValue,
        }
    }
    /// The matching SessionRejectReason (373) value.
    pub fn session_reject_reason(self) -> crate::SessionRejectReason {
        use crate::SessionRejectReason as R;
        match self.kind {
            FieldErrorKind::Missing => R::RequiredTagMissing,
            FieldErrorKind::BadFormat => R::IncorrectDataFormat,
            FieldErrorKind::BadValue => R::ValueIncorrect,
            FieldErrorKind::GroupCount => R::IncorrectNumInGroupCount,
        }
    }
}

/// Tags below this are found with one load (`Message::get`): every field an order-entry
/// message and the standard header are read by has such a tag.
const DIRECT: usize = 128;

/// Splits framed messages into fields. Holds the preallocated field array; reuse one per
/// connection.
#[derive(Debug)]
pub struct Decoder {
    fields: Vec<FieldPos>,
    /// For each tag below `DIRECT`: 1 + the index in `fields` of its first occurrence (0: not
    /// in the message), filled as the message is split.
    first: [u16; DIRECT],
    limits: Limits,
}

impl Default for Decoder {
    fn default() -> Decoder {
        Decoder::new(Limits::default())
    }
}

impl Decoder {
    pub fn new(limits: Limits) -> Decoder {
        Decoder {
            fields: Vec::with_capacity(limits.fields_max),
            first: [0; DIRECT],
            limits,
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Decodes the message at the start of `buf` (which may hold more bytes after it).
    pub fn decode<'a>(&'a mut self, buf: &'a [u8]) -> Result<Message<'a>, DecodeError> {
        let len = match frame(buf, self.limits.msg_len_max) {
            Ok(Some(len)) => len,
            Ok(None) => return Err(DecodeError::Incomplete),
            Err(e) => return Err(DecodeError::Frame(e)),
        };
        self.decode_framed(&buf[..len])
    }

    /// Splits `buf`, which `frame` has already accepted as one whole message, into fields
    /// without summing it again. Safe on any input (errors, never panics), but BodyLength and
    /// CheckSum are only verified by `frame`/`decode`.
    pub fn decode_framed<'a>(&'a mut self, buf: &'a [u8]) -> Result<Message<'a>, DecodeError> {
        let len = buf.len();
        self.fields.clear();
        self.first = [0; DIRECT];
        if self.fields.capacity() < self.limits.fields_max {
            self.fields.reserve(self.limits.fields_max);
        }
        let fields_max = self.limits.fields_max;
        let mut i = 0;
        let mut data_len: Option<(u32, usize)> = None;
        while i < len {
            // Tag: 1 to 9 digits, no leading zero, then '='. Digits are read first and the
            // rules checked once after (the tag wraps harmlessly if there are too many).
            let tag_start = i;
            let mut tag: u32 = 0;
            while let Some(&c) = buf.get(i) {
                let d = c.wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                tag = tag.wrapping_mul(10).wrapping_add(d as u32);
                i += 1;
            }
            let digits = i - tag_start;
            if digits == 0 || digits > 9 || buf[tag_start] == b'0' || buf.get(i) != Some(&b'=') {
                return Err(DecodeError::InvalidTag { offset: tag_start });
            }
            i += 1;
            let start = i;
            let end = match data_len.take() {
                Some((data_tag, n)) if data_tag == tag => {
                    if buf.get(start + n) != Some(&SOH) {
                        return Err(DecodeError::Frame(FrameError::BodyLengthMismatch));
                    }
                    start + n
                }
                _ => match find_soh(buf, start) {
                    Some(p) => p,
                    None => return Err(DecodeError::Frame(FrameError::BodyLengthMismatch)),
                },
            };
            if end == start {
                return Err(DecodeError::EmptyValue { tag });
            }
            // Every data-length tag is >= 90; most tags are not.
            if tag >= 90 {
                if let Some(data_tag) = tags::data_tag_for_length(tag) {
                    if let Some(n) = parse_u64(&buf[start..end]) {
                        data_len = Some((data_tag, n as usize));
                    }
                }
            }
            let n = self.fields.len();
            if n == fields_max {
                return Err(DecodeError::TooManyFields { max: fields_max });
            }
            if let Some(f) = self.first.get_mut(tag as usize) {
                if *f == 0 {
                    *f = n as u16 + 1;
                }
            }
            self.fields.push(FieldPos {
                tag,
                start: start as u32,
                end: end as u32,
            });
            i = end + 1;
        }
        // frame() checked the 8, 9 prefix and the 10 trailer bytes; a data field must not have
        // swallowed the trailer, and MsgType must be third.
        match self.fields.last() {
            Some(f) if f.tag == tags::CHECK_SUM && f.start as usize == len - 4 => {}
            _ => return Err(DecodeError::Frame(FrameError::BodyLengthMismatch)),
        }
        match self.fields.get(..3) {
            Some([b, l, t])
                if b.tag == tags::BEGIN_STRING
                    && l.tag == tags::BODY_LENGTH
                    && t.tag == tags::MSG_TYPE => {}
            _ => return Err(DecodeError::Frame(FrameError::MsgTypeNotThird)),
        }
        Ok(Message {
            buf,
            fields: &self.fields,
            first: &self.first,
        })
    }
}

/// A decoded message: a view over the caller's buffer. Cheap to copy.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    buf: &'a [u8],
    fields: &'a [FieldPos],
    first: &'a [u16; DIRECT],
}

impl<'a> Message<'a> {
    /// The whole message, header to trailer.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.buf
    }
    /// Length of the message in bytes (how much to consume from the input).
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    pub fn begin_string(&self) -> &'a [u8] {
        self.value_at(0)
    }
    pub fn msg_type(&self) -> &'a [u8] {
        self.value_at(2)
    }
    pub fn field_count(&self) -> usize {
        self.fields.len()
    }
    /// The `i`-th field (0 = BeginString). Panics if `i >= field_count()`.
    pub fn field(&self, i: usize) -> (u32, &'a [u8]) {
        (self.fields[i].tag, self.value_at(i))
    }
    fn value_at(&self, i: usize) -> &'a [u8] {
        let f = self.fields[i];
        &self.buf[f.start as usize..f.end as usize]
    }
    /// All fields in wire order, trailer included.
    pub fn fields(&self) -> Fields<'a> {
        Fields {
            buf: self.buf,
            fields: self.fields,
        }
    }
    /// The tags of every field, in order.
    #[inline]
    pub fn tags(&self) -> impl Iterator<Item = u32> + 'a {
        self.fields.iter().map(|f| f.tag)
    }
    /// Fields after the standard header up to (not including) the CheckSum, i.e. the ones an
    /// application reads. The header is everything up to the last of the header tags that
    /// follow MsgType.
    pub fn body(&self) -> Fields<'a> {
        let n = self.fields.len();
        let mut start = 3;
        while start < n - 1 && is_header_tag(self.fields[start].tag) {
            start += 1;
        }
        Fields {
            buf: self.buf,
            fields: &self.fields[start..n - 1],
        }
    }
    /// The fields (index, tag) whose tag is below 128 and appeared before in the message, in
    /// wire order: a repeat, legal only inside a repeating group (`fix::dict` knows the
    /// groups). One pass over the fields, a load and a compare each, against the index of
    /// first occurrences the decoder filled (the decoder's own loop pays nothing for it).
    pub fn repeated_tags(&self) -> impl Iterator<Item = (usize, u32)> + 'a {
        let first = self.first;
        self.fields.iter().enumerate().filter_map(move |(i, f)| {
            let at = *first.get(f.tag as usize)?;
            (at as usize != i + 1).then_some((i, f.tag))
        })
    }
    /// Index of the first field with `tag`.
    pub fn position(&self, tag: u32) -> Option<usize> {
        self.fields.iter().position(|f| f.tag == tag)
    }
    /// The value of the first field with `tag` (one load for a tag below 64).
    #[inline]
    pub fn get(&self, tag: u32) -> Option<&'a [u8]> {
        match self.first.get(tag as usize) {
            Some(0) => None,
            Some(&f) => Some(self.value_at(f as usize - 1)),
            None => self.fields().get(tag),
        }
    }
    /// `get` as UTF-8 text (`None` if absent or not UTF-8).
    pub fn get_str(&self, tag: u32) -> Option<&'a str> {
        self.get(tag).and_then(|v| std::str::from_utf8(v).ok())
    }
    pub fn require(&self, tag: u32) -> Result<&'a [u8], FieldError> {
        self.get(tag).ok_or(FieldError::missing(tag))
    }
    pub fn get_u64(&self, tag: u32) -> Result<Option<u64>, FieldError> {
        typed_u64(tag, self.get(tag))
    }
    pub fn require_u64(&self, tag: u32) -> Result<u64, FieldError> {
        self.get_u64(tag)?.ok_or(FieldError::missing(tag))
    }
    pub fn get_char(&self, tag: u32) -> Result<Option<u8>, FieldError> {
        typed_char(tag, self.get(tag))
    }
    pub fn get_bool(&self, tag: u32) -> Result<Option<bool>, FieldError> {
        typed_bool(tag, self.get(tag))
    }
    pub fn get_decimal(&self, tag: u32) -> Result<Option<Decimal>, FieldError> {
        typed_decimal(tag, self.get(tag))
    }
    pub fn get_timestamp(&self, tag: u32) -> Result<Option<u64>, FieldError> {
        typed_timestamp(tag, self.get(tag))
    }
    /// The repeating group counted by `count_tag`; see `Fields::group`.
    pub fn group(&self, count_tag: u32, member_tags: &'a [u32]) -> Result<Group<'a>, FieldError> {
        self.fields().group(count_tag, member_tags)
    }
}

/// Header tags that may follow MsgType (FIX 4.4 / FIXT.1.1 standard header).
pub fn is_header_tag(tag: u32) -> bool {
    matches!(
        tag,
        34 | 43
            | 49
            | 50
            | 52
            | 56
            | 57
            | 90
            | 91
            | 97
            | 115
            | 116
            | 122
            | 128
            | 129
            | 142
            | 143
            | 144
            | 145
            | 212
            | 213
            | 347
            | 369
            | 627
            | 628
            | 629
            | 630
            | 1128
            | 1129
            | 1156
    )
}

/// A run of fields (a whole message, its body, or one repeating-group entry) with typed getters.
#[derive(Clone, Copy, Debug)]
pub struct Fields<'a> {
    buf: &'a [u8],
    fields: &'a [FieldPos],
}

impl<'a> Iterator for Fields<'a> {
    type Item = (u32, &'a [u8]);
    fn next(&mut self) -> Option<(u32, &'a [u8])> {
        let (first, rest) = self.fields.split_first()?;
        self.fields = rest;
        Some((
            first.tag,
            &self.buf[first.start as usize..first.end as usize],
        ))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.fields.len(), Some(self.fields.len()))
    }
}

impl<'a> Fields<'a> {
    pub fn get(&self, tag: u32) -> Option<&'a [u8]> {
        self.fields
            .iter()
            .find(|f| f.tag == tag)
            .map(|f| &self.buf[f.start as usize..f.end as usize])
    }
    pub fn require(&self, tag: u32) -> Result<&'a [u8], FieldError> {
        self.get(tag).ok_or(FieldError::missing(tag))
    }
    pub fn get_u64(&self, tag: u32) -> Result<Option<u64>, FieldError> {
        typed_u64(tag, self.get(tag))
    }
    pub fn require_u64(&self, tag: u32) -> Result<u64, FieldError> {
        self.get_u64(tag)?.ok_or(FieldError::missing(tag))
    }
    /// A single-character field.
    pub fn get_char(&self, tag: u32) -> Result<Option<u8>, FieldError> {
        typed_char(tag, self.get(tag))
    }
    /// A `Boolean` field (`Y` or `N`).
    pub fn get_bool(&self, tag: u32) -> Result<Option<bool>, FieldError> {
        typed_bool(tag, self.get(tag))
    }
    pub fn get_decimal(&self, tag: u32) -> Result<Option<Decimal>, FieldError> {
        typed_decimal(tag, self.get(tag))
    }
    /// A `UTCTimestamp` as nanoseconds since the epoch.
    pub fn get_timestamp(&self, tag: u32) -> Result<Option<u64>, FieldError> {
        typed_timestamp(tag, self.get(tag))
    }

    /// The repeating group whose count field is `count_tag`. `member_tags` lists the tags an
    /// entry may hold, its first element being the delimiter that starts every entry; the
    /// group ends at the first field that is not a member. A missing count field is an empty
    /// group; a count that differs from the entries found is a `GroupCount` error.
    pub fn group(&self, count_tag: u32, member_tags: &'a [u32]) -> Result<Group<'a>, FieldError> {
        let empty = Group {
            buf: self.buf,
            fields: &[],
            members: member_tags,
        };
        let Some(pos) = self.fields.iter().position(|f| f.tag == count_tag) else {
            return Ok(empty);
        };
        let count = self.get_u64(count_tag)?.unwrap_or(0);
        let rest = &self.fields[pos + 1..];
        let Some(&delimiter) = member_tags.first() else {
            return Err(FieldError {
                tag: count_tag,
                kind: FieldErrorKind::GroupCount,
            });
        };
        let len = rest
            .iter()
            .position(|f| !member_tags.contains(&f.tag))
            .unwrap_or(rest.len());
        let fields = &rest[..len];
        let entries = fields.iter().filter(|f| f.tag == delimiter).count() as u64;
        if entries != count || fields.first().is_some_and(|f| f.tag != delimiter) {
            return Err(FieldError {
                tag: count_tag,
                kind: FieldErrorKind::GroupCount,
            });
        }
        Ok(Group {
            buf: self.buf,
            fields,
            members: member_tags,
        })
    }
}

/// A repeating group: iterate to get one `Fields` per entry.
#[derive(Clone, Copy, Debug)]
pub struct Group<'a> {
    buf: &'a [u8],
    fields: &'a [FieldPos],
    members: &'a [u32],
}

impl<'a> Iterator for Group<'a> {
    type Item = Fields<'a>;
    fn next(&mut self) -> Option<Fields<'a>> {
        let delimiter = *self.members.first()?;
        if self.fields.is_empty() {
            return None;
        }
        let len = self.fields[1..]
            .iter()
            .position(|f| f.tag == delimiter)
            .map_or(self.fields.len(), |p| p + 1);
        let (entry, rest) = self.fields.split_at(len);
        self.fields = rest;
        Some(Fields {
            buf: self.buf,
            fields: entry,
        })
    }
}

fn typed_u64(tag: u32, v: Option<&[u8]>) -> Result<Option<u64>, FieldError> {
    v.map(|v| parse_u64(v).ok_or(FieldError::bad_format(tag)))
        .transpose()
}

fn typed_char(tag: u32, v: Option<&[u8]>) -> Result<Option<u8>, FieldError> {
    v.map(|v| match v {
        [c] => Ok(*c),
        _ => Err(FieldError::bad_format(tag)),
    })
    .transpose()
}

fn typed_bool(tag: u32, v: Option<&[u8]>) -> Result<Option<bool>, FieldError> {
    v.map(|v| match v {
        b"Y" => Ok(true),
        b"N" => Ok(false),
        _ => Err(FieldError::bad_format(tag)),
    })
    .transpose()
}

fn typed_decimal(tag: u32, v: Option<&[u8]>) -> Result<Option<Decimal>, FieldError> {
    v.map(|v| Decimal::parse(v).map_err(|e| decimal_error(tag, e)))
        .transpose()
}

fn typed_timestamp(tag: u32, v: Option<&[u8]>) -> Result<Option<u64>, FieldError> {
    v.map(|v| parse_utc_timestamp(v).ok_or(FieldError::bad_format(tag)))
        .transpose()
}

fn decimal_error(tag: u32, e: DecimalError) -> FieldError {
    match e {
        DecimalError::Format | DecimalError::Overflow => FieldError::bad_format(tag),
        _ => FieldError::bad_value(tag),
    }
}

/// Index of the first SOH at or after `from`, eight bytes at a time (a value is usually
/// shorter than that: one load and a few operations instead of a loop over bytes). The FIX
/// parsers of the workspace (this decoder, the gateway's `wire::Fields`, the load generator's
/// `inbound::scan`) all find a value's end with it.
#[inline]
pub fn find_soh(buf: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while let Some(chunk) = buf.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        // Bytes equal to SOH become zero; the lowest set high bit marks the first of them
        // (borrows only create false hits above a true one).
        let x = u64::from_le_bytes(word) ^ ONES;
        let hits = x.wrapping_sub(ONES) & !x & HIGHS;
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    buf.get(i..)?.iter().position(|&c| c == SOH).map(|p| i + p)
}

/// Digits only, at most 19 of them (no sign, no spaces): `None` otherwise.
#[inline]
pub fn parse_u64(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 {
        return None;
    }
    let mut n: u64 = 0;
    for &c in v {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + (c - b'0') as u64;
    }
    Some(n)
}

/// Scans a possibly malformed frame for `<SOH>34=digits<SOH>`: the MsgSeqNum of a message the
/// decoder refused, so the session can still account for it.
pub fn scan_msg_seq_num(buf: &[u8]) -> Option<u64> {
    let pat = b"\x0134=";
    let p = buf.windows(pat.len()).position(|w| w == pat)? + pat.len();
    let end = buf[p..].iter().position(|&c| c == SOH)? + p;
    parse_u64(&buf[p..end])
}

/// The MsgType of a frame the decoder refused, if its third field is `35=value` (for a
/// Reject's RefMsgType). `frame` has checked the first two fields.
pub fn scan_msg_type(buf: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    for _ in 0..2 {
        at += buf.get(at..)?.iter().position(|&c| c == SOH)? + 1;
    }
    let rest = buf.get(at..)?.strip_prefix(b"35=")?;
    let v = &rest[..rest.iter().position(|&c| c == SOH)?];
    (!v.is_empty() && !v.contains(&b'=')).then_some(v)
}

#[cfg(test)]
mod tests;
