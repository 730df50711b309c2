//! `fix::dict`: the generated dictionaries and the validator. Per version: valid messages of
//! every kind Rialto receives pass, one violation of each SessionRejectReason the validator
//! gives (with its RefTagID and a text naming the tag and the value), lookups, and the
//! decoder's share (empty value, header order). The outbound conformance test is in
//! `dict_outbound.rs`.

use fix::dict::{dictionary, FieldType};
use fix::{malformed_reason, wrap_body, Decoder, FixVersion, SessionRejectReason as R};

const VERSIONS: [FixVersion; 3] = [FixVersion::Fix42, FixVersion::Fix44, FixVersion::Fix50Sp2];
const HEADER: &str = "49=CLIENT1|56=RIALTO|34=2|52=20231114-22:13:20.000|";
const NOW: &str = "20231114-22:13:20.123";

/// Frames `35=<msg_type>|<header><body>` (`|` for SOH) in `v` and validates it: `Ok` or
/// (reason, RefTagID, text).
fn check(v: FixVersion, msg_type: &str, body: &str) -> Result<(), (R, Option<u32>, String)> {
    check_raw(v, &format!("35={msg_type}|{HEADER}{body}"))
}

fn check_raw(v: FixVersion, all: &str) -> Result<(), (R, Option<u32>, String)> {
    let mut buf = Vec::new();
    wrap_body(v, all.replace('|', "\x01").as_bytes(), &mut buf);
    let mut d = Decoder::default();
    let msg = d.decode(&buf).expect("test message decodes");
    dictionary(v)
        .validate(&msg)
        .map_err(|e| (e.reason, e.ref_tag, e.text(&msg)))
}

fn ok(v: FixVersion, msg_type: &str, body: &str) {
    if let Err(e) = check(v, msg_type, body) {
        panic!("{v:?} 35={msg_type} {body}: {e:?}");
    }
}

/// Asserts the violation's reason and RefTagID, and that its text contains `words`.
fn bad(v: FixVersion, msg_type: &str, body: &str, reason: R, tag: u32, words: &str) {
    match check(v, msg_type, body) {
        Ok(()) => panic!("{v:?} 35={msg_type} {body}: accepted, wanted {reason:?}"),
        Err((r, t, text)) => {
            assert_eq!((r, t), (reason, Some(tag)), "{v:?} {body}: {text}");
            assert!(
                text.contains(words),
                "{v:?} {body}: {text:?} lacks {words:?}"
            );
        }
    }
}

fn logon(v: FixVersion) -> &'static str {
    match v {
        FixVersion::Fix50Sp2 => "98=0|108=30|1137=9|",
        _ => "98=0|108=30|",
    }
}

/// A NewOrderSingle with every field Rialto reads; FIX 4.2 also requires HandlInst (21).
fn nos(v: FixVersion) -> String {
    let handl = if v == FixVersion::Fix42 { "21=1|" } else { "" };
    format!("11=C1|1=ACC|{handl}55=ACME|54=1|60={NOW}|38=100|40=2|44=10.25|59=0|18=6|")
}

#[test]
fn valid_messages_of_every_kind_pass() {
    for v in VERSIONS {
        ok(v, "0", "");
        ok(v, "0", "112=T1|");
        ok(v, "1", "112=T1|");
        ok(v, "2", "7=1|16=0|");
        ok(v, "3", "45=2|371=44|372=D|373=5|58=Price(44) has no value|");
        ok(v, "4", "123=Y|36=5|");
        ok(v, "5", "58=bye|");
        ok(v, "A", logon(v));
        ok(v, "D", &nos(v));
        ok(
            v,
            "F",
            &format!("41=C1|11=C2|55=ACME|54=1|60={NOW}|38=100|"),
        );
        let handl = if v == FixVersion::Fix42 { "21=1|" } else { "" };
        ok(
            v,
            "G",
            &format!("41=C1|11=C2|{handl}55=ACME|54=1|60={NOW}|38=50|40=2|44=10.5|"),
        );
        ok(v, "H", "11=C1|55=ACME|54=1|");
        ok(
            v,
            "V",
            "262=r1|263=1|264=0|265=1|267=2|269=0|269=1|146=2|55=AAA|55=BBB|",
        );
        ok(v, "e", "324=s1|55=ACME|263=0|");
        ok(v, "j", "45=3|372=Z|380=3|58=unsupported|");
        if v != FixVersion::Fix42 {
            ok(v, "q", &format!("11=M1|530=7|60={NOW}|"));
            ok(v, "q", &format!("11=M1|530=1|55=ACME|54=2|60={NOW}|"));
            ok(v, "x", "320=s1|559=4|");
            ok(
                v,
                "D",
                &format!("{}453=2|448=P1|447=D|452=3|448=P2|452=11|", nos(v)),
            );
        }
        // Header fields in any order before the body; an optional trailer.
        ok(v, "0", "115=ON|");
        ok(v, "1", "112=T|93=3|89=a\x01b|");
    }
    // Values of every format-checked type.
    ok(FixVersion::Fix44, "8", &er44("|"));
}

/// A FIX 4.4 ExecutionReport with a field of each checked type in its own place.
fn er44(extra: &str) -> String {
    format!(
        "37=1|11=C1|17=1.0|150=0|39=0|1=0|55=ACME|200=202312|541=20231215|54=1|38=100|40=2|\
         44=-0.5|59=6|432=20231231|32=0|31=0|151=100|14=0|6=0|60={NOW}|75=20231114|\
         18=6 G|{}",
        extra.trim_start_matches('|')
    )
}

#[test]
fn every_reason_with_its_ref_tag_in_every_version() {
    for v in VERSIONS {
        let nos = nos(v);
        // 0: a tag no version defines.
        bad(
            v,
            "D",
            &format!("{nos}9999=x|"),
            R::InvalidTagNumber,
            9999,
            "tag 9999",
        );
        // 2: a defined tag that NewOrderSingle does not have.
        bad(
            v,
            "D",
            &format!("{nos}112=T|"),
            R::TagNotDefinedForMessageType,
            112,
            "TestReqID(112) is not defined for NewOrderSingle",
        );
        // 1: body, header.
        bad(
            v,
            "D",
            &nos.replace("11=C1|", ""),
            R::RequiredTagMissing,
            11,
            "ClOrdID(11)",
        );
        bad(
            v,
            "1",
            "",
            R::RequiredTagMissing,
            112,
            "required tag TestReqID(112) missing",
        );
        match check_raw(v, "35=0|49=C|56=R|34=2|") {
            Err((R::RequiredTagMissing, Some(52), t)) => assert!(t.contains("SendingTime(52)")),
            other => panic!("{v:?}: {other:?}"),
        }
        // 1: a required group.
        bad(
            v,
            "V",
            "262=r1|263=1|264=0|146=1|55=AAA|",
            R::RequiredTagMissing,
            267,
            "NoMDEntryTypes(267)",
        );
        // 5: enumerated values, single and multiple.
        bad(
            v,
            "D",
            &nos.replace("40=2|", "40=Z|"),
            R::ValueIncorrect,
            40,
            "OrdType(40) has no value 'Z'",
        );
        bad(
            v,
            "D",
            &nos.replace("18=6|", "18=6 ~|"),
            R::ValueIncorrect,
            18,
            "ExecInst(18) has no value '~'",
        );
        // 6: data formats.
        for (field, tag, words) in [
            ("38=1x0", 38, "OrderQty(38) '1x0' is not a valid QTY"),
            ("44=1.2.3", 44, "Price(44) '1.2.3'"),
            ("44=1e5", 44, "Price(44) '1e5'"),
            (
                "60=20231114-25:00:00",
                60,
                "TransactTime(60) '20231114-25:00:00'",
            ),
            ("54=12", 54, "Side(54) '12' is not a valid CHAR"),
        ] {
            let base = field.split('=').next().unwrap();
            let body = nos
                .split('|')
                .map(|kv| {
                    if kv.split('=').next() == Some(base) {
                        field
                    } else {
                        kv
                    }
                })
                .collect::<Vec<_>>()
                .join("|");
            bad(v, "D", &body, R::IncorrectDataFormat, tag, words);
        }
        bad(
            v,
            "2",
            "7=1.5|16=0|",
            R::IncorrectDataFormat,
            7,
            "BeginSeqNo(7) '1.5'",
        );
        bad(
            v,
            "4",
            "123=X|36=5|",
            R::IncorrectDataFormat,
            123,
            "GapFillFlag(123) 'X' is not a valid BOOLEAN",
        );
        // 13: a repeated tag outside a group.
        bad(
            v,
            "D",
            &format!("{nos}54=2|"),
            R::TagAppearsMoreThanOnce,
            54,
            "Side(54) appears more than once",
        );
        bad(
            v,
            "0",
            "34=3|",
            R::TagAppearsMoreThanOnce,
            34,
            "MsgSeqNum(34)",
        );
        // 14: a header tag after the body, a body tag after the trailer.
        bad(
            v,
            "D",
            &format!("{nos}115=ON|"),
            R::TagSpecifiedOutOfRequiredOrder,
            115,
            "header tag OnBehalfOfCompID(115) after the body",
        );
        bad(
            v,
            "D",
            &format!("{nos}93=2|89=ab|58=late|"),
            R::TagSpecifiedOutOfRequiredOrder,
            58,
            "Text(58) after the trailer",
        );
        // 16 and 15: V's NoMDEntryTypes and NoRelatedSym.
        let v_req = |types: &str, syms: &str| format!("262=r1|263=1|264=0|{types}{syms}");
        bad(
            v,
            "V",
            &v_req("267=3|269=0|269=1|", "146=1|55=A|"),
            R::IncorrectNumInGroupCount,
            267,
            "NoMDEntryTypes(267)=3 but 2 entries follow",
        );
        bad(
            v,
            "V",
            &v_req("267=1|269=0|269=1|", "146=1|55=A|"),
            R::IncorrectNumInGroupCount,
            267,
            "=1 but 2",
        );
        bad(
            v,
            "V",
            &v_req("267=1|269=0|", "146=1|65=X|55=A|"),
            R::RepeatingGroupFieldsOutOfOrder,
            65,
            "NoRelatedSym(146) entry starts with SymbolSfx(65)",
        );
        bad(
            v,
            "V",
            &v_req("267=1|269=0|", "146=1|55=A|48=ID|65=X|"),
            R::RepeatingGroupFieldsOutOfOrder,
            65,
            "SymbolSfx(65) out of order",
        );
        // A group member outside its group is not defined for the message.
        bad(
            v,
            "V",
            &format!("{}269=1|", v_req("267=1|269=0|", "146=1|55=A|")),
            R::TagNotDefinedForMessageType,
            269,
            "MDEntryType(269) is not defined for MarketDataRequest (35=V)",
        );
        // 11: a MsgType the dictionary does not define.
        match check(v, "ZZ", "") {
            Err((R::InvalidMsgType, Some(35), t)) => assert!(t.contains("'ZZ'"), "{t}"),
            other => panic!("{v:?}: {other:?}"),
        }
        assert!(dictionary(v).message(b"ZZ").is_none());
    }
}

#[test]
fn required_group_members_and_entry_order_in_fix42() {
    let v = FixVersion::Fix42;
    // W's NoMDEntries: MDEntryPx (270) is required in each entry.
    ok(
        v,
        "W",
        "262=r|55=ACME|268=2|269=0|270=10|271=5|269=1|270=11|",
    );
    bad(
        v,
        "W",
        "262=r|55=ACME|268=2|269=0|270=10|269=1|271=5|",
        R::RequiredTagMissing,
        270,
        "required tag MDEntryPx(270) missing in a NoMDEntries(268) entry",
    );
    bad(
        v,
        "W",
        "262=r|55=ACME|268=1|269=0|",
        R::RequiredTagMissing,
        270,
        "MDEntryPx(270)",
    );
    // A member repeated inside one entry.
    bad(
        v,
        "W",
        "262=r|55=ACME|268=1|269=0|270=10|270=11|",
        R::RepeatingGroupFieldsOutOfOrder,
        270,
        "MDEntryPx(270) out of order",
    );
}

#[test]
fn nested_groups_in_fix44_and_fix50sp2() {
    for v in [FixVersion::Fix44, FixVersion::Fix50Sp2] {
        let nos = nos(v);
        let parties = "453=1|448=P1|447=D|452=3|802=2|523=S1|803=1|523=S2|";
        ok(v, "D", &format!("{nos}{parties}"));
        bad(
            v,
            "D",
            &format!("{nos}{}", parties.replace("802=2", "802=3")),
            R::IncorrectNumInGroupCount,
            802,
            "NoPartySubIDs(802)=3 but 2",
        );
        bad(
            v,
            "D",
            &format!("{nos}453=1|447=D|448=P1|"),
            R::RepeatingGroupFieldsOutOfOrder,
            447,
            "NoPartyIDs(453) entry starts with PartyIDSource(447)",
        );
        bad(
            v,
            "D",
            &format!("{nos}453=1|448=P1|452=3|447=D|"),
            R::RepeatingGroupFieldsOutOfOrder,
            447,
            "PartyIDSource(447) out of order",
        );
        bad(
            v,
            "D",
            &format!("{nos}453=0|448=P1|"),
            R::IncorrectNumInGroupCount,
            453,
            "NoPartyIDs(453)=0 but 1",
        );
        bad(
            v,
            "D",
            &format!("{nos}453=x|"),
            R::IncorrectDataFormat,
            453,
            "NoPartyIDs(453) 'x' is not a valid NUMINGROUP",
        );
    }
}

/// Reason 4 and the place of 8, 9, 35 are the decoder's: such messages never reach the
/// validator; `malformed_reason` gives the Reject's reason and RefTagID of an empty value,
/// and none for MsgType out of place (garbled: ignored, no MsgSeqNum taken).
#[test]
fn empty_values_and_header_order_are_the_decoders() {
    for v in VERSIONS {
        let mut buf = Vec::new();
        let body = format!("35=D|{HEADER}{}", nos(v).replace("55=ACME|", "55=|"));
        wrap_body(v, body.replace('|', "\x01").as_bytes(), &mut buf);
        let e = Decoder::default().decode(&buf).unwrap_err();
        assert_eq!(
            malformed_reason(e),
            Some((R::TagSpecifiedWithoutValue, Some(55)))
        );
        let body = format!("{HEADER}35=0|");
        wrap_body(v, body.replace('|', "\x01").as_bytes(), &mut buf);
        let e = Decoder::default().decode(&buf).unwrap_err();
        assert_eq!(e, fix::DecodeError::Frame(fix::FrameError::MsgTypeNotThird));
        assert_eq!(malformed_reason(e), None);
    }
}

/// `check_repeats` (for sessions that do not validate): a tag below 128 repeated in the
/// header or outside its MsgType's groups is 13 with RefTagID; repeats inside groups (at any
/// depth) and body repeats of a MsgType the dictionary lacks are left alone.
#[test]
fn repeats_outside_groups_are_rejected_without_validation() {
    let repeats = |v: FixVersion, all: &str| {
        let mut buf = Vec::new();
        wrap_body(v, all.replace('|', "\x01").as_bytes(), &mut buf);
        let mut d = Decoder::default();
        let msg = d.decode(&buf).expect("test message decodes");
        dictionary(v)
            .check_repeats(&msg)
            .map_err(|e| (e.reason, e.ref_tag, e.text(&msg)))
    };
    for v in VERSIONS {
        let nos = nos(v);
        let (r, t, text) = repeats(v, &format!("35=D|{HEADER}{nos}55=BOLT|")).unwrap_err();
        assert_eq!((r, t), (R::TagAppearsMoreThanOnce, Some(55)), "{v:?}");
        assert_eq!(text, "Symbol(55) appears more than once");
        let (r, t, _) = repeats(v, &format!("35=0|{HEADER}34=3|112=t|")).unwrap_err();
        assert_eq!((r, t), (R::TagAppearsMoreThanOnce, Some(34)), "{v:?}");
        // A header tag repeated in a MsgType the dictionary lacks; its body is not checked.
        let (r, t, _) = repeats(v, &format!("35=ZZ|{HEADER}56=X|")).unwrap_err();
        assert_eq!((r, t), (R::TagAppearsMoreThanOnce, Some(56)), "{v:?}");
        repeats(v, &format!("35=ZZ|{HEADER}55=A|55=B|")).unwrap();
        // NoAllocs (78): AllocAccount (79) and AllocShares/AllocQty (80) in each entry.
        repeats(v, &format!("35=D|{HEADER}{nos}78=2|79=A1|80=1|79=A2|80=2|")).unwrap();
        // MarketDataRequest: Symbol (55) in each NoRelatedSym (146) entry, MDEntryType (269)
        // in each NoMDEntryTypes (267) entry.
        let md = "262=r1|263=1|264=0|267=2|269=0|269=1|146=2|55=ACME|55=BOLT|";
        repeats(v, &format!("35=V|{HEADER}{md}")).unwrap();
        // A message without any repeat.
        repeats(v, &format!("35=D|{HEADER}{nos}")).unwrap();
    }
}

#[test]
fn lookups() {
    for v in VERSIONS {
        let d = dictionary(v);
        assert_eq!(d.version(), v);
        let ord_type = d.field(40).unwrap();
        assert_eq!((ord_type.name, ord_type.ty), ("OrdType", FieldType::Char));
        assert!(ord_type.allows(b"2") && !ord_type.allows(b"Z") && !ord_type.allows(b"22"));
        assert_eq!(d.field(38).unwrap().ty, FieldType::Qty);
        assert!(d.field(0).is_none() && d.field(9999).is_none() && d.field(u32::MAX).is_none());
        let m = d.message(b"D").unwrap();
        assert_eq!((m.name, m.admin), ("NewOrderSingle", false));
        assert!(m.allows(11) && m.requires(11) && m.allows(44) && !m.requires(44));
        assert!(!m.allows(112) && !m.allows(49));
        assert!(d.message(b"A").unwrap().admin);
        assert!(d.message(b"").is_none() && d.message(b"DDDD").is_none());
        assert!(d.is_header_tag(49) && d.is_header_tag(52) && !d.is_header_tag(11));
        assert!(d.is_trailer_tag(10) && d.is_trailer_tag(93) && !d.is_trailer_tag(58));
        // Fields sorted by tag, messages findable by their own type.
        assert!(d.fields().windows(2).all(|w| w[0].tag < w[1].tag));
        for m in d.messages() {
            assert!(std::ptr::eq(d.message(m.msg_type).unwrap(), m));
        }
        // Every message Rialto receives or sends.
        let common = [
            "0", "1", "2", "3", "4", "5", "A", "D", "F", "G", "H", "8", "9", "j",
        ];
        let md = ["V", "W", "X", "Y", "e", "f", "g", "h"];
        for t in common.iter().chain(md.iter()) {
            assert!(d.message(t.as_bytes()).is_some(), "{v:?} lacks {t}");
        }
        if v != FixVersion::Fix42 {
            for t in ["q", "r", "x", "y", "AF"] {
                assert!(d.message(t.as_bytes()).is_some(), "{v:?} lacks {t}");
            }
        }
    }
    // Versions differ where the standards do.
    assert_eq!(
        dictionary(FixVersion::Fix42).field(38).unwrap().ty,
        FieldType::Qty
    );
    assert!(dictionary(FixVersion::Fix42).field(1128).is_none());
    let fixt = dictionary(FixVersion::Fix50Sp2);
    assert!(fixt.is_header_tag(1128) && fixt.field(1137).is_some());
    assert!(fixt.message(b"A").unwrap().allows(1137));
    assert!(dictionary(FixVersion::Fix44)
        .message(b"D")
        .unwrap()
        .allows(453));
    assert!(!dictionary(FixVersion::Fix42)
        .message(b"D")
        .unwrap()
        .allows(453));
}

/// A value the dictionary enumerates is accepted even where the field's own type disagrees
/// (FIX 4.4 MassCancelRejectReason 532 is a CHAR whose Other is 99); any other value is
/// judged by the type first.
#[test]
fn enumerated_values_win_over_the_type() {
    let v = FixVersion::Fix44;
    let r = "11=M1|37=1|530=1|531=0|532=99|";
    ok(v, "r", r);
    bad(
        v,
        "r",
        &r.replace("532=99", "532=98"),
        R::IncorrectDataFormat,
        532,
        "'98'",
    );
    bad(
        v,
        "r",
        &r.replace("532=99", "532=9"),
        R::ValueIncorrect,
        532,
        "no value '9'",
    );
}

/// The `fix_dict` fuzz body on its seeds (fuzz/seeds/fix_dict) and on random mutations of
/// them: no panic, and its own assertions hold.
#[test]
fn fuzz_body_on_seeds_and_mutations() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/fix_dict");
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .expect("fuzz/seeds/fix_dict")
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert!(seeds.len() >= 5);
    seeds.sort();
    let mut rng = types::XorShift64::new(0x5EED_D1C7);
    let alphabet = b"0123456789=\x01|.-YN DZ";
    for seed in &seeds {
        fix::dict::fuzz_validate(seed);
        for _ in 0..300 {
            let mut m = seed.clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(m.len() as u64 + 1) as usize;
                let c = alphabet[rng.below(alphabet.len() as u64) as usize];
                match rng.below(3) {
                    0 if at < m.len() => m[at] = c,
                    1 if at < m.len() => {
                        m.remove(at);
                    }
                    _ => m.insert(at.min(m.len()), c),
                }
            }
            fix::dict::fuzz_validate(&m);
        }
    }
}
