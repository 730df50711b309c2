//! The fast path against the general per-field loop (differential): NewOrderSingle,
//! OrderCancelRequest, OrderCancelReplaceRequest, OrderStatusRequest and ExecutionReport
//! (`FAST_MSG_TYPES`) generated from each version's own tables (required fields, a random
//! share of the optional ones, repeating groups with nested entries, data fields with their
//! lengths), then mutated (fields removed, repeated, swapped, moved; undefined tags, tags of
//! other messages, group members outside their group, header and trailer tags in the wrong
//! place; bad enumerated values, bad formats, empty values, wrong group counts). Every message
//! that decodes gets the same verdict from `validate` as from `validate_general` (the same
//! Violation: reason, RefTagID, text); the fast path accepts only what the general loop
//! accepts; and it does accept every unmutated message within its reach, so the comparison
//! is not vacuous.

use std::collections::BTreeMap;

use super::fast::FastSlot;
use super::*;
use crate::{tags, wrap_body, Decoder, FixVersion};
use types::XorShift64;

const VERSIONS: [FixVersion; 3] = [FixVersion::Fix42, FixVersion::Fix44, FixVersion::Fix50Sp2];

/// Messages per version and MsgType.
const MESSAGES: u32 = 4_000;

/// Every value a field enumerates.
fn enumerated(f: &FieldDef) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = (0u8..128)
        .filter(|&c| f.chars[(c / 64) as usize] >> (c % 64) & 1 == 1)
        .map(|c| vec![c])
        .collect();
    for &k in f.keys {
        let b = k.to_be_bytes();
        let len = b.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
        out.push(b[..len].to_vec());
    }
    out.extend(f.values.iter().map(|v| v.to_vec()));
    out
}

fn pick<'a, T>(rng: &mut XorShift64, items: &'a [T]) -> &'a T {
    &items[rng.below(items.len() as u64) as usize]
}

fn digits(rng: &mut XorShift64, max_len: u64) -> Vec<u8> {
    let len = 1 + rng.below(max_len);
    let mut v: Vec<u8> = (0..len).map(|_| b'0' + rng.below(10) as u8).collect();
    if v.len() > 1 && v[0] == b'0' {
        v[0] = b'1';
    }
    v
}

/// Printable text without SOH (and sometimes a space or an `=`).
fn text(rng: &mut XorShift64, max_len: u64) -> Vec<u8> {
    (0..1 + rng.below(max_len))
        .map(|_| 0x20 + rng.below(0x5f) as u8)
        .collect()
}

/// A value `f` accepts.
fn good_value(rng: &mut XorShift64, f: &FieldDef) -> Vec<u8> {
    use FieldType as T;
    if f.is_enumerated() {
        let all = enumerated(f);
        let mut v = pick(rng, &all).clone();
        if f.ty.is_multiple() && rng.below(3) == 0 {
            v.push(b' ');
            let w: &Vec<u8> = pick(rng, &all);
            v.extend_from_slice(w);
        }
        return v;
    }
    let s: &[&str] = match f.ty {
        T::Int => &["0", "42", "-7", "123456", "0012"],
        T::Length | T::NumInGroup | T::SeqNum => return digits(rng, 6),
        T::DayOfMonth => &["1", "09", "17", "31"],
        T::Float | T::Qty | T::Price | T::PriceOffset | T::Amt | T::Percentage => {
            &["10.25", "-3", ".5", "7.", "100", "0.000001", "-0.5"]
        }
        T::Char => return vec![0x21 + rng.below(0x5e) as u8],
        T::Boolean => &["Y", "N"],
        T::MultipleCharValue => &["A", "A B", "1 2 3"],
        T::MonthYear => &["202311", "20231114", "202311w2", "199912"],
        T::UtcTimestamp => &[
            "20231114-22:13:20",
            "20231114-22:13:20.123",
            "20231231-23:59:60.123456",
            "19700101-00:00:00.000000001",
        ],
        T::UtcTimeOnly => &["22:13:20", "22:13:20.1", "00:00:00.123456789"],
        T::UtcDateOnly | T::LocalMktDate => &["20231114", "19991231"],
        T::String
        | T::MultipleStringValue
        | T::Country
        | T::Currency
        | T::Exchange
        | T::Language
        | T::TzTimeOnly
        | T::TzTimestamp
        | T::Data
        | T::XmlData => return text(rng, 12),
    };
    pick(rng, s).as_bytes().to_vec()
}

/// Values that are wrong for many types or enumerations (the empty one never decodes).
const BAD: &[&str] = &[
    "",
    "Z",
    "ZZ",
    "-",
    "-1",
    "1.2.3",
    "1e5",
    "abc",
    " ",
    "1 ",
    "A  B",
    "YN",
    "32",
    "0",
    "20231301-00:00:00",
    "20231114-24:00:00",
    "20231114-22:13:20.12",
    "20231114T22:13:20",
    "20231114-22:13:20.1234567890",
    "2023111",
    "202313",
    "202311w6",
    "22:60:00",
    "99999999999999999999",
];

/// The fields of one message being built: (tag, value).
type Fields = Vec<(u32, Vec<u8>)>;

struct Gen<'d> {
    d: &'d Dictionary,
    rng: XorShift64,
    /// Percent of optional members included.
    optional_pct: u64,
    /// Optional members only below `FAST_TAGS` (groups included): within the fast path's
    /// reach but for the groups.
    low_tags_only: bool,
}

impl Gen<'_> {
    /// The members of `layout` in definition order: required ones, a share of the optional
    /// ones, groups with 0 to 2 entries (nested up to depth 2).
    fn layout(&mut self, layout: &Layout, out: &mut Fields, depth: u32) {
        let mut entries: Vec<&Entry> = layout.entries.iter().collect();
        entries.sort_by_key(|e| e.ordinal);
        let mut done_data = Vec::new();
        for (k, e) in entries.iter().enumerate() {
            if matches!(e.tag, 8 | 9 | 35 | 10) || done_data.contains(&e.tag) {
                continue;
            }
            let first_of_entry = depth > 0 && k == 0;
            let optional = self.rng.below(100) < self.optional_pct
                && (!self.low_tags_only || (e.tag as usize) < FAST_TAGS);
            if !(e.required || first_of_entry || optional) {
                continue;
            }
            let f = &self.d.fields[e.field as usize];
            if e.group != 0 {
                let g = &self.d.groups[e.group as usize - 1];
                let n = if depth >= 2 { 0 } else { self.rng.below(3) };
                out.push((e.tag, n.to_string().into_bytes()));
                for _ in 0..n {
                    self.layout(&g.layout, out, depth + 1);
                }
                continue;
            }
            if let Some(data) = tags::data_tag_for_length(e.tag) {
                let v = text(&mut self.rng, 10);
                out.push((e.tag, v.len().to_string().into_bytes()));
                out.push((data, v));
                done_data.push(data);
                continue;
            }
            let v = good_value(&mut self.rng, f);
            out.push((e.tag, v));
        }
    }

    /// A conforming message of type `def`: header, body, trailer (without 8, 9, 10).
    fn message(&mut self, def: &MessageDef) -> Fields {
        let mut out = vec![(35, def.msg_type.to_vec())];
        let d = self.d;
        self.layout(&d.header, &mut out, 0);
        self.layout(&def.layout, &mut out, 0);
        if self.rng.below(20) == 0 {
            self.layout(&d.trailer, &mut out, 0);
        }
        out
    }

    /// A tag to insert: defined anywhere in the dictionary, undefined, or already present.
    fn any_tag(&mut self, fields: &Fields) -> u32 {
        match self.rng.below(4) {
            0 => self.d.fields[self.rng.below(self.d.fields.len() as u64) as usize].tag,
            1 => self.rng.below(FAST_TAGS as u64 + 10) as u32 + 1,
            2 => 1 + self.rng.below(6_000) as u32,
            _ => pick(&mut self.rng, fields).0,
        }
    }

    /// A value for `tag`: a good one for its field, a bad one, or random text.
    fn any_value(&mut self, tag: u32) -> Vec<u8> {
        match (self.rng.below(3), self.d.field(tag)) {
            (0, Some(f)) => good_value(&mut self.rng, f),
            (1, _) => pick(&mut self.rng, BAD).as_bytes().to_vec(),
            _ => text(&mut self.rng, 6),
        }
    }

    /// One random change to `fields` (the MsgType at index 0 stays).
    fn mutate(&mut self, fields: &mut Fields) {
        let n = fields.len() as u64;
        let at = 1 + self.rng.below(n) as usize;
        let i = 1 + self.rng.below(n - 1).min(n - 2) as usize;
        match self.rng.below(8) {
            0 if n > 1 => {
                fields.remove(i);
            }
            1 => {
                let tag = self.any_tag(fields);
                let v = self.any_value(tag);
                fields.insert(at.min(fields.len()), (tag, v));
            }
            2 if n > 1 => {
                let f = fields[i].clone();
                fields.insert(at.min(fields.len()), f);
            }
            3 if n > 2 && i + 1 < fields.len() => fields.swap(i, i + 1),
            4 if n > 1 => {
                let tag = fields[i].0;
                fields[i].1 = self.any_value(tag);
            }
            5 => {
                let counts: Vec<usize> = (1..fields.len())
                    .filter(|&k| is_count(self.d, fields[k].0))
                    .collect();
                if !counts.is_empty() {
                    let k = *pick(&mut self.rng, &counts);
                    let c = parse_u64(&fields[k].1).unwrap_or(0);
                    let c = if self.rng.below(2) == 0 {
                        c + 1
                    } else {
                        c.saturating_sub(1)
                    };
                    fields[k].1 = c.to_string().into_bytes();
                }
            }
            6 if n > 1 => {
                let f = fields.remove(i);
                let to = 1 + self.rng.below(fields.len() as u64) as usize;
                fields.insert(to.min(fields.len()), f);
            }
            _ => {
                // A header or trailer tag, anywhere.
                let tag = *pick(&mut self.rng, &[43, 97, 50, 57, 115, 122, 93, 89, 34, 52]);
                let v = self.any_value(tag);
                fields.insert(at.min(fields.len()), (tag, v));
            }
        }
    }
}

fn frame(v: FixVersion, fields: &Fields) -> Vec<u8> {
    let mut body = Vec::new();
    for (tag, value) in fields {
        body.extend_from_slice(tag.to_string().as_bytes());
        body.push(b'=');
        body.extend_from_slice(value);
        body.push(0x01);
    }
    let mut out = Vec::new();
    wrap_body(v, &body, &mut out);
    out
}

fn shown(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace('\x01', "|")
}

/// Whether every field of `fields` is within the fast path's reach (tags below `FAST_TAGS`,
/// no repeating group).
fn within_reach(d: &Dictionary, fields: &Fields) -> bool {
    fields
        .iter()
        .all(|&(tag, _)| (tag as usize) < FAST_TAGS && !is_count(d, tag))
}

/// Whether a group of `layout` (at any depth) has a required member besides its delimiter.
fn requires_in_group(d: &Dictionary, layout: &Layout, in_group: bool) -> bool {
    layout.entries.iter().any(|e| {
        (in_group && e.required && e.ordinal > 0)
            || (e.group != 0 && requires_in_group(d, &d.groups[e.group as usize - 1].layout, true))
    })
}

/// Whether `tag` counts the entries of a repeating group somewhere in `d`.
fn is_count(d: &Dictionary, tag: u32) -> bool {
    d.groups.iter().any(|g| g.count_tag == tag)
}

#[test]
fn fast_path_and_general_loop_agree_on_generated_and_mutated_messages() {
    let mut decoder = Decoder::default();
    for v in VERSIONS {
        let d = dictionary(v);
        let mut kinds: BTreeMap<String, u32> = BTreeMap::new();
        for &t in &FAST_MSG_TYPES {
            let def = d.message(&[t]).expect("a fast-path message is defined");
            let mut g = Gen {
                d,
                rng: XorShift64::new(0xD1C7_0000 + u64::from(t) * 7 + v as u64),
                optional_pct: 0,
                low_tags_only: false,
            };
            let (mut fast_accepted, mut in_reach, mut undecodable) = (0u32, 0u32, 0u32);
            for i in 0..MESSAGES {
                g.optional_pct = *pick(&mut g.rng, &[0, 0, 5, 20, 60]);
                g.low_tags_only = g.rng.below(2) == 0;
                let mut fields = g.message(def);
                let mutations = *pick(&mut g.rng, &[0, 1, 1, 2, 3]);
                for _ in 0..mutations {
                    g.mutate(&mut fields);
                }
                let bytes = frame(v, &fields);
                let Ok(m) = decoder.decode(&bytes) else {
                    undecodable += 1;
                    continue;
                };
                let at = || format!("{v:?} message {i}: {}", shown(&bytes));
                let general = d.validate_general(&m);
                let full = d.validate(&m);
                assert_eq!(full, general, "{}", at());
                if let (Err(a), Err(b)) = (full, general) {
                    assert_eq!(a.text(&m), b.text(&m), "{}", at());
                    *kinds.entry(format!("{:?}", b.kind)).or_default() += 1;
                }
                let fast = d.fast_accepts(&m);
                assert!(!fast || general.is_ok(), "fast path accepted: {}", at());
                fast_accepted += fast as u32;
                if mutations == 0 {
                    assert_eq!(general, Ok(()), "generated: {}", at());
                    if within_reach(d, &fields) {
                        assert!(fast, "fast path declined: {}", at());
                        in_reach += 1;
                    }
                }
            }
            let t = char::from(t);
            assert!(in_reach >= MESSAGES / 20, "{v:?} {t}: {in_reach} in reach");
            assert!(fast_accepted >= in_reach, "{v:?} {t}");
            assert!(
                undecodable < MESSAGES / 4,
                "{v:?} {t}: {undecodable} undecodable"
            );
        }
        // Every verdict the general loop can give a well-framed message of these types in this
        // version was compared (MissingInGroup only where one of their groups has a required
        // member besides its delimiter).
        let required_in_groups = FAST_MSG_TYPES.iter().any(|&t| {
            let def = d.message(&[t]).expect("defined");
            requires_in_group(d, &def.layout, false)
        });
        for kind in [
            Kind::Undefined,
            Kind::NotInMessage,
            Kind::Missing,
            Kind::MissingInGroup,
            Kind::Format,
            Kind::Value,
            Kind::Repeated,
            Kind::HeaderAfterBody,
            Kind::AfterTrailer,
            Kind::GroupStart,
            Kind::GroupOrder,
            Kind::GroupCount,
        ] {
            if kind == Kind::MissingInGroup && !required_in_groups {
                continue;
            }
            let n = kinds.get(&format!("{kind:?}")).copied().unwrap_or(0);
            assert!(n > 0, "{v:?}: no {kind:?} among {kinds:?}");
        }
    }
}

/// Empty values never reach the validator: the decoder refuses them (reason 4 is the
/// session's), in the fast path's messages as in any other.
#[test]
fn empty_values_stop_at_the_decoder() {
    for v in VERSIONS {
        for t in FAST_MSG_TYPES {
            let fields: Fields = vec![(35, vec![t]), (49, b"C".to_vec()), (11, Vec::new())];
            let bytes = frame(v, &fields);
            assert!(Decoder::default().decode(&bytes).is_err());
        }
    }
}

/// A field's `Check` (the general loop's `check_value` tries it first, a fast-path slot holds
/// a copy) passes exactly the values the value rule (`value_violation`) finds nothing wrong
/// with, for every field of every version, on good values of each field and on bad ones.
#[test]
fn value_checks_are_the_value_rule() {
    let mut rng = XorShift64::new(0xC4EC_1234);
    for v in VERSIONS {
        let d = dictionary(v);
        for (i, f) in d.fields.iter().enumerate() {
            let slot = FastSlot::of(f, i as u16, f.segment, 0);
            let mut samples: Vec<Vec<u8>> =
                BAD[1..].iter().map(|s| s.as_bytes().to_vec()).collect();
            samples.extend([
                b"\xff".to_vec(),
                b"A B".to_vec(),
                b"y".to_vec(),
                b"1 1".to_vec(),
            ]);
            samples.extend((0..8).map(|_| good_value(&mut rng, f)));
            for s in &samples {
                let rule = d.value_violation(f, s, 0).is_ok();
                let at = || format!("{v:?} {} {:?}", f.name, shown(s));
                assert_eq!(f.check.passes(f, s), rule, "{}", at());
                assert_eq!(slot.value_ok(d, s), rule, "{}", at());
                assert_eq!(
                    d.check_value(f, s, 0),
                    d.value_violation(f, s, 0),
                    "{}",
                    at()
                );
            }
        }
    }
}

/// The definition `is_utc_timestamp` is held to: the validator's byte-by-byte helpers.
fn reference_utc_timestamp(v: &[u8]) -> bool {
    v.len() >= 17
        && v[8] == b'-'
        && is_date(&v[..8])
        && matches!(v.len(), 17 | 21 | 24 | 27)
        && is_time_only(&v[9..])
}

/// `is_utc_timestamp` (eight bytes at a time) against the reference: every byte of valid
/// timestamps of each length replaced by every byte value, every length from 0 to 30, and
/// every boundary of each part.
#[test]
fn utc_timestamp_check_is_the_reference() {
    let bases: [&[u8]; 5] = [
        b"20231114-22:13:20",
        b"20231114-22:13:20.123",
        b"19991231-23:59:60.123456",
        b"20000101-00:00:00.000000001",
        b"20231114-22:13:20.1234567890",
    ];
    let mut checked = 0u32;
    let mut same = |v: &[u8]| {
        assert_eq!(
            is_utc_timestamp(v),
            reference_utc_timestamp(v),
            "{:?}",
            shown(v)
        );
        checked += 1;
    };
    for base in bases {
        same(base);
        for at in 0..base.len() {
            for c in 0..=255u8 {
                let mut v = base.to_vec();
                v[at] = c;
                same(&v);
            }
        }
        for len in 0..=base.len() {
            same(&base[..len]);
        }
        for extra in [&b"0"[..], b".", b"00", b"-"] {
            same(&[base, extra].concat());
        }
        // Each two-digit part at every value 00 to 99.
        for at in [4, 6, 9, 12, 15] {
            for n in 0..100u8 {
                let mut v = base.to_vec();
                v[at] = b'0' + n / 10;
                v[at + 1] = b'0' + n % 10;
                same(&v);
            }
        }
    }
    assert!(checked > 5 * 17 * 256);
}
