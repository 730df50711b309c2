//! Codec tests: golden messages from the FIX literature, round trips, and every frame and
//! field error the decoder reports.

mod common;
use common::pipes;

use fix::decode::{
    checksum, frame, resync, scan_msg_seq_num, scan_msg_type, DecodeError, Decoder, FrameError,
};
use fix::{write_u64, Decimal, Encoder, FieldErrorKind, FixVersion, Header, Limits, TimePrecision};

fn soh(s: &str) -> Vec<u8> {
    s.replace('|', "\x01").into_bytes()
}

/// The Logon example from the FIX 4.2 literature (Wikipedia's "FIX protocol" article).
const GOLDEN_LOGON: &str =
    "8=FIX.4.2|9=65|35=A|49=SERVER|56=CLIENT|34=177|52=20090107-18:15:16|98=0|108=30|10=062|";

/// The ExecutionReport example from the same source.
const GOLDEN_EXEC: &str = "8=FIX.4.2|9=178|35=8|49=PHLX|56=PERS|52=20071123-05:30:00.000|\
11=ATOMNOCCC9990900|20=3|150=E|39=E|55=MSFT|167=CS|54=1|38=15|40=2|44=15|\
58=PHLX EQUITY TESTING|59=0|47=C|32=0|31=0|151=15|14=0|6=0|10=128|";

#[test]
fn golden_logon_decodes() {
    let bytes = soh(GOLDEN_LOGON);
    assert_eq!(frame(&bytes, 8192), Ok(Some(bytes.len())));
    let mut d = Decoder::new(Limits::default());
    let m = d.decode(&bytes).unwrap();
    assert_eq!(m.begin_string(), b"FIX.4.2");
    assert_eq!(m.msg_type(), b"A");
    assert_eq!(m.get(49), Some(&b"SERVER"[..]));
    assert_eq!(m.get_u64(34), Ok(Some(177)));
    assert_eq!(m.get_u64(108), Ok(Some(30)));
    assert_eq!(
        m.get_timestamp(52),
        Ok(fix::parse_utc_timestamp(b"20090107-18:15:16"))
    );
    let tags: Vec<u32> = m.fields().map(|(t, _)| t).collect();
    assert_eq!(tags, [8, 9, 35, 49, 56, 34, 52, 98, 108, 10]);
    let body: Vec<u32> = m.body().map(|(t, _)| t).collect();
    assert_eq!(body, [98, 108]);
}

#[test]
fn golden_execution_report_decodes() {
    let bytes = soh(GOLDEN_EXEC);
    let mut d = Decoder::new(Limits::default());
    let m = d.decode(&bytes).unwrap();
    assert_eq!(m.msg_type(), b"8");
    assert_eq!(m.get(58), Some(&b"PHLX EQUITY TESTING"[..]));
    assert_eq!(m.get_decimal(44), Ok(Some(Decimal::new(15, 0))));
    assert_eq!(m.get_char(150), Ok(Some(b'E')));
    assert_eq!(m.len(), bytes.len());
}

#[test]
fn fixedge_sample_has_placeholder_length_and_is_garbled() {
    // The FIXEdge benchmark prints its order with 9=1 and 10=000 placeholders.
    let bytes = soh("8=FIX.4.2|9=1|35=D|49=BLP|56=SCHB|34=01|50=30737|52=20000809-20:20:50|\
11=90001008|1=10030003|21=2|55=TESTA|54=1|38=4000|40=2|59=0|44=30|47=I|60=20000809-18:20:32|10=000|");
    assert_eq!(frame(&bytes, 8192), Err(FrameError::BodyLengthMismatch));
}

fn encode_nos(enc: &mut Encoder, version: FixVersion) -> Vec<u8> {
    enc.begin(b"D");
    enc.header(&Header {
        sender_comp_id: b"CLIENT1",
        target_comp_id: b"RIALTO",
        msg_seq_num: 42,
        sending_time_ns: 1_700_000_000_123_456_789,
        poss_dup: false,
        orig_sending_time: None,
        time_precision: TimePrecision::Micros,
    });
    enc.field(11, b"ORD-1");
    enc.field(1, b"ACC");
    enc.field(55, b"ACME");
    enc.field_char(54, b'1');
    enc.field_u64(38, 100);
    enc.field_char(40, b'2');
    enc.field_decimal(44, Decimal::new(1234, 2));
    enc.field_char(59, b'0');
    enc.field_i64(9999, -5);
    enc.field_bool(43, true);
    enc.finish(version).to_vec()
}

#[test]
fn encode_decode_round_trip() {
    let mut enc = Encoder::default();
    for version in [FixVersion::Fix42, FixVersion::Fix44, FixVersion::Fix50Sp2] {
        let bytes = encode_nos(&mut enc, version);
        assert_eq!(enc.bytes(), &bytes[..]);
        let mut d = Decoder::new(Limits::default());
        let m = d.decode(&bytes).unwrap();
        assert_eq!(m.begin_string(), version.begin_string());
        assert_eq!(m.msg_type(), b"D");
        assert_eq!(m.get_u64(34), Ok(Some(42)));
        assert_eq!(m.get(52), Some(&b"20231114-22:13:20.123456"[..]));
        assert_eq!(m.get_decimal(44), Ok(Some(Decimal::new(1234, 2))));
        assert_eq!(m.get(9999), Some(&b"-5"[..]));
        // BodyLength counts from after "9=..|" to before "10=".
        let declared: usize = std::str::from_utf8(m.get(9).unwrap())
            .unwrap()
            .parse()
            .unwrap();
        let body_start = bytes.windows(4).position(|w| w == b"\x0135=").unwrap() + 1;
        assert_eq!(declared, bytes.len() - 7 - body_start);
        let cs = checksum(&bytes[..bytes.len() - 7]);
        assert_eq!(m.get(10), Some(format!("{cs:03}").as_bytes()));
    }
}

#[test]
fn encoder_reuse_gives_identical_bytes() {
    let mut enc = Encoder::with_capacity(64);
    let a = encode_nos(&mut enc, FixVersion::Fix44);
    let b = encode_nos(&mut enc, FixVersion::Fix44);
    assert_eq!(a, b);
    assert_eq!(
        pipes(&a),
        "8=FIX.4.4|9=127|35=D|34=42|49=CLIENT1|56=RIALTO|52=20231114-22:13:20.123456|11=ORD-1|\
1=ACC|55=ACME|54=1|38=100|40=2|44=12.34|59=0|9999=-5|43=Y|10=080|"
    );
}

#[test]
fn every_prefix_is_incomplete_never_an_error() {
    let bytes = soh(GOLDEN_EXEC);
    let mut d = Decoder::new(Limits::default());
    for n in 0..bytes.len() {
        assert_eq!(frame(&bytes[..n], 8192), Ok(None), "prefix {n}");
        assert!(matches!(
            d.decode(&bytes[..n]),
            Err(DecodeError::Incomplete)
        ));
    }
    // Two messages back to back: the first is framed alone.
    let mut two = bytes.clone();
    two.extend_from_slice(&soh(GOLDEN_LOGON));
    assert_eq!(frame(&two, 8192), Ok(Some(bytes.len())));
    assert_eq!(
        frame(&two[bytes.len()..], 8192),
        Ok(Some(two.len() - bytes.len()))
    );
}

#[test]
fn bad_checksum_is_reported_with_both_values() {
    let mut bytes = soh(GOLDEN_LOGON);
    let n = bytes.len();
    bytes[n - 2] = b'3'; // 10=063
    assert_eq!(
        frame(&bytes, 8192),
        Err(FrameError::BadCheckSum {
            declared: 63,
            computed: 62
        })
    );
    // A flipped body byte also breaks the sum.
    let mut bytes = soh(GOLDEN_LOGON);
    bytes[30] ^= 1;
    assert!(matches!(
        frame(&bytes, 8192),
        Err(FrameError::BadCheckSum { .. })
    ));
}

#[test]
fn body_length_errors() {
    for (text, err) in [
        // Too short: trailer expected earlier.
        (
            GOLDEN_LOGON.replace("9=65", "9=60"),
            FrameError::BodyLengthMismatch,
        ),
        // Too long: trailer expected later (same total length as given here).
        (
            GOLDEN_LOGON.replace("9=65", "9=58"),
            FrameError::BodyLengthMismatch,
        ),
        (
            GOLDEN_LOGON.replace("9=65", "9=6x"),
            FrameError::BadBodyLength,
        ),
        (
            GOLDEN_LOGON.replace("9=65", "9="),
            FrameError::BadBodyLength,
        ),
        (
            GOLDEN_LOGON.replace("9=65", "99=65"),
            FrameError::BadBodyLength,
        ),
        (
            GOLDEN_LOGON.replace("8=FIX", "X=FIX"),
            FrameError::BadBeginString,
        ),
        (
            GOLDEN_LOGON.replace("10=062", "10=62x"),
            FrameError::BodyLengthMismatch,
        ),
    ] {
        let bytes = soh(&text);
        assert_eq!(frame(&bytes, 8192), Err(err), "{text}");
    }
    assert_eq!(
        frame(&soh("8=FIX.4.4|9=99999|35=0|"), 1024),
        Err(FrameError::TooLong {
            len: 18 + 99999 + 7,
            max: 1024
        })
    );
    assert_eq!(
        frame(&soh("8=FIX.4.4|9=12345678|"), 1 << 30),
        Err(FrameError::BadBodyLength)
    );
    assert_eq!(
        frame(b"8=FIX.4.4.FIX.4.4.FIX.4.4", 8192),
        Err(FrameError::BadBeginString)
    );
}

/// Builds a frame with correct BodyLength and CheckSum around an arbitrary body.
fn framed(body: &str) -> Vec<u8> {
    let body = soh(body);
    let mut m = format!("8=FIX.4.4\x019={}\x01", body.len()).into_bytes();
    m.extend_from_slice(&body);
    let cs = checksum(&m);
    m.extend_from_slice(format!("10={cs:03}\x01").as_bytes());
    m
}

#[test]
fn field_level_errors_after_a_valid_frame() {
    use fix::TagProblem as P;
    let mut d = Decoder::new(Limits::default());
    // The bad field starts after "8=FIX.4.4|9=NN|35=D|34=2|" (25 bytes: every body here
    // is 10 to 99 bytes long).
    let invalid = |problem| (DecodeError::InvalidTag { offset: 25 }, Some(problem));
    let cases: [(&str, (DecodeError, Option<P>)); 13] = [
        ("35=D|34=2|abc=1|", invalid(P::NotNumeric)),
        ("35=D|34=2|x1=5|", invalid(P::NotNumeric)),
        ("35=D|34=2|55|", invalid(P::NoEquals)),
        ("35=D|34=2|abc|", invalid(P::NoEquals)),
        ("35=D|34=2|=5|", invalid(P::Empty)),
        ("35=D|34=2|055=X|", invalid(P::LeadingZero { tag: 55 })),
        ("35=D|34=2|0=X|", invalid(P::Zero)),
        ("35=D|34=2|00=X|", invalid(P::Zero)),
        ("35=D|34=2|1234567890=X|", invalid(P::TooLong)),
        ("35=D|34=2|-1=X|", invalid(P::Negative { tag: 1 })),
        ("35=D|34=2|-0=X|", invalid(P::NotNumeric)),
        (
            "35=D|34=2|55=|",
            (DecodeError::EmptyValue { tag: 55 }, None),
        ),
        (
            "34=2|35=D|",
            (DecodeError::Frame(FrameError::MsgTypeNotThird), None),
        ),
    ];
    for (body, (want, problem)) in cases {
        let m = framed(body);
        let got = d.decode(&m).map(|_| ()).unwrap_err();
        assert_eq!(got, want, "{body}");
        if let DecodeError::InvalidTag { offset } = got {
            assert_eq!(Some(P::classify(&m, offset)), problem, "{body}");
        }
        // The session can still find the sequence number of what it refuses.
        assert_eq!(scan_msg_seq_num(&m), Some(2), "{body}");
    }
    assert_eq!(P::LeadingZero { tag: 55 }.ref_tag(), Some(55));
    assert_eq!(P::Zero.ref_tag(), Some(0));
    assert_eq!(P::Negative { tag: 1 }.ref_tag(), Some(-1));
    assert_eq!(P::NotNumeric.ref_tag(), None);
}

/// The MsgType of a refused frame is read from its third field, if that is `35=`.
#[test]
fn msg_type_of_a_refused_frame() {
    assert_eq!(scan_msg_type(&framed("35=D|34=2|abc|")), Some(&b"D"[..]));
    assert_eq!(scan_msg_type(&framed("35=AE|34=2|=5|")), Some(&b"AE"[..]));
    assert_eq!(scan_msg_type(&framed("34=2|35=D|")), None);
    assert_eq!(scan_msg_type(&framed("35=|34=2|")), None);
    assert_eq!(scan_msg_type(b"8=FIX.4.4\x019=5\x01"), None);
    assert_eq!(scan_msg_type(b""), None);
}

/// `repeated_tags` lists every field (index, tag) below 128 seen before in the message, and
/// nothing for a message without a repeat.
#[test]
fn repeated_tags_are_listed_in_wire_order() {
    let mut d = Decoder::new(Limits::default());
    let m = framed("35=D|34=2|55=A|54=1|55=B|200=x|200=y|54=2|");
    let msg = d.decode(&m).unwrap();
    let got: Vec<(usize, u32)> = msg.repeated_tags().collect();
    // 200 is above the tracked range: not listed (the dictionary validator checks it).
    assert_eq!(got, vec![(6, 55), (9, 54)]);
    let m = framed("35=D|34=2|55=A|54=1|");
    assert_eq!(d.decode(&m).unwrap().repeated_tags().count(), 0);
    // A repeated header tag.
    let m = framed("35=0|34=2|34=3|");
    let got: Vec<(usize, u32)> = d.decode(&m).unwrap().repeated_tags().collect();
    assert_eq!(got, vec![(4, 34)]);
}

#[test]
fn limits_on_fields() {
    let mut d = Decoder::new(Limits {
        msg_len_max: 8192,
        fields_max: 8,
    });
    // 8, 9, 35, 1, 2, 3, 4, 10: exactly the limit.
    assert!(d.decode(&framed("35=0|1=a|2=b|3=c|4=d|")).is_ok());
    assert_eq!(
        d.decode(&framed("35=0|1=a|2=b|3=c|4=d|5=e|")).map(|_| ()),
        Err(DecodeError::TooManyFields { max: 8 })
    );
}

#[test]
fn typed_getter_errors_name_the_tag() {
    let m = framed("35=D|34=x|38=1.5|44=1e3|54=12|43=T|");
    let mut d = Decoder::new(Limits::default());
    let m = d.decode(&m).unwrap();
    let e = m.get_u64(34).unwrap_err();
    assert_eq!((e.tag, e.kind), (34, FieldErrorKind::BadFormat));
    assert_eq!(m.get_decimal(38), Ok(Some(Decimal::new(15, 1))));
    assert_eq!(m.get_decimal(44).unwrap_err().tag, 44);
    assert_eq!(m.get_char(54).unwrap_err().kind, FieldErrorKind::BadFormat);
    assert_eq!(m.get_bool(43).unwrap_err().tag, 43);
    assert_eq!(m.require(11).unwrap_err().kind, FieldErrorKind::Missing);
    assert_eq!(m.get_u64(11), Ok(None));
}

#[test]
fn repeating_groups() {
    // NoPartyIDs(453)=2 with PartyID 448, PartyIDSource 447, PartyRole 452.
    let bytes = framed("35=D|11=A|453=2|448=P1|447=D|452=1|448=P2|452=3|55=ACME|");
    let mut d = Decoder::new(Limits::default());
    let m = d.decode(&bytes).unwrap();
    const PARTY: &[u32] = &[448, 447, 452];
    let entries: Vec<Vec<(u32, String)>> = m
        .group(453, PARTY)
        .unwrap()
        .map(|e| e.map(|(t, v)| (t, pipes(v))).collect())
        .collect();
    assert_eq!(
        entries,
        vec![
            vec![(448, "P1".into()), (447, "D".into()), (452, "1".into())],
            vec![(448, "P2".into()), (452, "3".into())],
        ]
    );
    // Entry getters work per entry.
    let second = m.group(453, PARTY).unwrap().nth(1).unwrap();
    assert_eq!(second.get(452), Some(&b"3"[..]));
    // An absent group is empty; a wrong count is an error on the count tag.
    assert_eq!(m.group(78, &[79]).unwrap().count(), 0);
    let bad = framed("35=D|453=3|448=P1|448=P2|55=X|");
    let mut d2 = Decoder::new(Limits::default());
    let m2 = d2.decode(&bad).unwrap();
    let e = m2.group(453, PARTY).unwrap_err();
    assert_eq!((e.tag, e.kind), (453, FieldErrorKind::GroupCount));
}

#[test]
fn data_fields_may_contain_soh() {
    // RawDataLength(95)=5, RawData(96) holds an SOH.
    let bytes = framed("35=A|95=5|96=ab|cd|108=30|");
    let mut d = Decoder::new(Limits::default());
    let m = d.decode(&bytes).unwrap();
    assert_eq!(m.get(96), Some(&b"ab\x01cd"[..]));
    assert_eq!(m.get_u64(108), Ok(Some(30)));
}

#[test]
fn resync_finds_the_next_message() {
    let mut buf = b"garbage\x01".to_vec();
    buf.extend_from_slice(&soh(GOLDEN_LOGON));
    assert_eq!(frame(&buf, 8192), Err(FrameError::BadBeginString));
    let skip = resync(&buf);
    assert_eq!(skip, 8);
    assert_eq!(frame(&buf[skip..], 8192), Ok(Some(buf.len() - 8)));
    assert_eq!(resync(b"xyz"), 3);
    assert_eq!(resync(b"xy\x018=F"), 3, "keeps a partial start");
    assert_eq!(resync(b""), 0);
}

#[test]
fn fuzz_decode_survives_mutations() {
    // FIX_FUZZ_ITERS=1000000 cargo test -p fix --test codec fuzz  for a longer run.
    let iters: usize = std::env::var("FIX_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let seeds = [
        soh(GOLDEN_LOGON),
        soh(GOLDEN_EXEC),
        framed("35=D|95=200|96=x|"),
        // Session traffic from CLIENT1 to RIALTO: order, gap fill, resend request, reset.
        framed("35=D|49=CLIENT1|56=RIALTO|34=2|52=20231114-22:13:20|11=A|55=X|54=1|38=1|40=2|44=1|"),
        framed("35=4|49=CLIENT1|56=RIALTO|34=2|43=Y|52=20231114-22:13:20|122=20231114-22:13:20|123=Y|36=9|"),
        framed("35=2|49=CLIENT1|56=RIALTO|34=2|52=20231114-22:13:20|7=1|16=0|"),
        framed("35=4|49=CLIENT1|56=RIALTO|34=7|52=20231114-22:13:20|36=3|"),
        framed("35=1|49=CLIENT1|56=RIALTO|34=5|52=20231114-22:13:20|112=T|"),
    ];
    let mut rng = types::XorShift64::new(0x9E3779B97F4A7C15);
    let mut x: u64 = rng.next_u64();
    for seed in &seeds {
        for _ in 0..iters / seeds.len() + 1 {
            let mut b = seed.clone();
            for _ in 0..(x % 4 + 1) {
                x = rng.next_u64();
                let i = (x as usize) % b.len();
                match x % 3 {
                    0 => b[i] = (x >> 8) as u8,
                    1 => {
                        b.remove(i);
                        if b.is_empty() {
                            b.push(b'8');
                        }
                    }
                    _ => b.insert(i, (x >> 16) as u8),
                }
            }
            fix::fuzz_decode(&b);
            fix::fuzz_session(&b);
        }
    }
}

/// The standard header in its one order: 35, 34, 49, 56, 43 (if a resend), 52, 122 (if a
/// resend).
#[test]
fn header_fields_in_their_fixed_order() {
    let mut enc = Encoder::default();
    enc.begin(b"8");
    enc.header(&Header {
        sender_comp_id: b"RIALTO",
        target_comp_id: b"CLIENT1",
        msg_seq_num: 7,
        sending_time_ns: 1_700_000_000_000_000_000,
        poss_dup: true,
        orig_sending_time: Some(b"20231114-22:13:19.000"),
        time_precision: TimePrecision::Millis,
    });
    enc.field(11, b"A");
    assert_eq!(
        pipes(enc.finish(FixVersion::Fix44)),
        "8=FIX.4.4|9=92|35=8|34=7|49=RIALTO|56=CLIENT1|43=Y|52=20231114-22:13:20.000|\
122=20231114-22:13:19.000|11=A|10=089|"
    );
    // Seconds precision, no resend fields.
    enc.begin(b"0");
    enc.header(&Header {
        sender_comp_id: b"S",
        target_comp_id: b"T",
        msg_seq_num: 1,
        sending_time_ns: 1_700_000_000_999_000_000,
        poss_dup: false,
        orig_sending_time: None,
        time_precision: TimePrecision::Seconds,
    });
    let text = pipes(enc.finish(FixVersion::Fix42));
    assert!(
        text.starts_with("8=FIX.4.2|9=41|35=0|34=1|49=S|56=T|52=20231114-22:13:20|10="),
        "{text}"
    );
}

/// A body written alone (`begin_body`/`body`, as a store keeps it) and appended with `raw`
/// gives the same message as the fields written directly.
#[test]
fn body_alone_then_raw_gives_the_same_message() {
    let write_fields = |e: &mut Encoder| {
        e.field(11, b"ORD-1");
        e.field_units(44, 1250, 2);
        e.field_ratio(6, 300_200, 300, 2);
        e.raw(b"17=");
        e.raw_u64(12_345_678_901);
        e.raw(b".3\x01");
    };
    let header = Header {
        sender_comp_id: b"RIALTO",
        target_comp_id: b"CLIENT1",
        msg_seq_num: 3,
        sending_time_ns: 1_700_000_000_000_000_000,
        poss_dup: false,
        orig_sending_time: None,
        time_precision: TimePrecision::Millis,
    };
    let mut body_enc = Encoder::default();
    body_enc.begin_body();
    write_fields(&mut body_enc);
    assert_eq!(
        pipes(body_enc.body()),
        "11=ORD-1|44=12.5|6=10.0066666667|17=12345678901.3|"
    );
    let mut a = Encoder::default();
    a.begin(b"8");
    a.header(&header);
    write_fields(&mut a);
    let direct = a.finish(FixVersion::Fix44).to_vec();
    let mut b = Encoder::default();
    b.begin(b"8");
    b.header(&header);
    b.raw(body_enc.body());
    assert_eq!(b.finish(FixVersion::Fix44), &direct[..]);
    // A new body starts empty.
    body_enc.begin_body();
    assert!(body_enc.body().is_empty());
}

#[test]
fn units_and_ratios_are_written_without_trailing_zeros() {
    let mut enc = Encoder::default();
    enc.begin_body();
    enc.field_units(44, 1200, 2);
    enc.field_units(44, 5, 2);
    enc.field_units(44, -5, 2);
    enc.field_units(44, 12_340, 3);
    enc.field_units(44, 7, 0);
    enc.field_ratio(6, 0, 5, 2);
    enc.field_ratio(6, 1001 * 3, 3, 2);
    enc.field_ratio(6, 2, 3, 2);
    assert_eq!(
        pipes(enc.body()),
        "44=12|44=0.05|44=-0.05|44=12.34|44=7|6=0|6=10.01|6=0.0066666667|"
    );
}

/// `finish_begin_string` writes any BeginString (a refused Logon is answered in the
/// counterparty's), with BodyLength and CheckSum right.
#[test]
fn finish_with_any_begin_string() {
    let mut enc = Encoder::default();
    enc.begin(b"5");
    enc.field(58, b"bye");
    let bytes = enc.finish_begin_string(b"FIX.4.1").to_vec();
    assert_eq!(
        pipes(&bytes),
        format!(
            "8=FIX.4.1|9=12|35=5|58=bye|10={:03}|",
            checksum(&bytes[..bytes.len() - 7])
        )
    );
    assert_eq!(frame(&bytes, 8192), Ok(Some(bytes.len())));
    assert_eq!(enc.bytes(), &bytes[..]);
}

#[test]
fn write_u64_matches_std() {
    let mut rng = types::XorShift64::new(0x2545_F491_4F6C_DD1D);
    let mut cases: Vec<u64> = (0..20)
        .flat_map(|p| {
            let t = 10u64.pow(p);
            [t - 1, t, t + 1]
        })
        .collect();
    cases.extend([u64::MAX, u64::MAX - 1]);
    for _ in 0..10_000 {
        let x = rng.next_u64();
        cases.push(x >> (x % 64));
    }
    let mut out = Vec::new();
    for v in cases {
        out.clear();
        out.push(b'=');
        write_u64(&mut out, v);
        assert_eq!(&out[1..], v.to_string().as_bytes());
    }
}

/// `Message::get` finds a tag below 64 with one load and any other tag by a scan: both give
/// the first occurrence, and a reused decoder forgets the previous message's tags.
#[test]
fn get_finds_the_first_occurrence_below_and_above_64() {
    let mut d = Decoder::new(Limits::default());
    let bytes = framed("35=D|55=A|63=x|64=y|55=B|448=P1|448=P2|1=ACC|");
    let m = d.decode(&bytes).unwrap();
    assert_eq!(m.get(55), Some(&b"A"[..]));
    assert_eq!(m.get(63), Some(&b"x"[..]));
    assert_eq!(m.get(64), Some(&b"y"[..]));
    assert_eq!(m.get(448), Some(&b"P1"[..]));
    assert_eq!(m.get(1), Some(&b"ACC"[..]));
    assert_eq!(m.get(8), Some(&b"FIX.4.4"[..]));
    assert_eq!(m.get(10).map(|v| v.len()), Some(3));
    assert_eq!(m.get(0), None);
    assert_eq!(m.get(54), None);
    assert_eq!(m.get(u32::MAX), None);
    let bytes = framed("35=0|112=T|");
    let m = d.decode(&bytes).unwrap();
    assert_eq!(m.get(55), None, "the previous message's 55 is forgotten");
    assert_eq!(m.get(1), None);
    assert_eq!(m.get(112), Some(&b"T"[..]));
}

/// `get` agrees with a scan of the fields, for every tag, on random messages.
#[test]
fn get_agrees_with_a_scan() {
    let mut rng = types::XorShift64::new(0x9E37_79B9_7F4A_7C15);
    let mut x: u64 = rng.next_u64();
    let mut d = Decoder::new(Limits::default());
    for _ in 0..500 {
        let mut body = String::from("35=D|");
        for _ in 0..(x % 30) {
            x = rng.next_u64();
            let tag = 1 + x % 80;
            if [8, 9, 10, 35].contains(&tag) || tags_with_data(tag) {
                continue;
            }
            body.push_str(&format!("{tag}={}|", x % 1000));
        }
        let bytes = framed(&body);
        let m = d.decode(&bytes).unwrap();
        for tag in 0..100 {
            let scan = m.fields().find(|&(t, _)| t == tag).map(|(_, v)| v);
            assert_eq!(m.get(tag), scan, "tag {tag} in {body}");
        }
    }
}

/// Length tags whose next field is binary data (the decoder reads it by length).
fn tags_with_data(tag: u64) -> bool {
    fix::tags::data_tag_for_length(tag as u32).is_some()
}

/// Inputs on which `fuzz_decode` or `fuzz_session` once failed.
#[test]
fn fuzz_regressions() {
    // A Logon whose SOH before TargetCompID was lost (so it has no 56): its refusal wrote an
    // empty SenderCompID, which no decoder accepts.
    let inputs: [&[u8]; 1] = [
        b"8=FIX.4.2\x019=65\x0135=A\x0149=SER~VER\xc856=CLINT\x0134=177\x01\
52=20090107-18:15:16\x0198=0\x01108=30\x0110=062\x01",
    ];
    for input in inputs {
        fix::fuzz_decode(input);
        fix::fuzz_session(input);
    }
}
