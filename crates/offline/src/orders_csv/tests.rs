use super::*;

fn parse(text: &str) -> Result<(Vec<Command>, SymbolTable), String> {
    let mut symbols = SymbolTable::new();
    read_all(text.as_bytes(), &mut symbols)
        .map(|c| (c, symbols))
        .map_err(|e| e.to_string())
}

fn err(text: &str) -> String {
    parse(text).unwrap_err()
}

const H: &str = "op,id,account,symbol,side,type,tif,price,qty\n";
const HS: &str = "op,id,account,symbol,side,type,tif,price,qty,stp\n";

#[test]
fn parses_every_op() {
    let text = format!(
        "{HS}N,1,7,ACME,B,L,GTC,100,5,\nN,2,8,ZED,S,M,IOC,,3,cancel_both\n\
         N,3,7,ACME,S,P,DAY,-4,0,none\nC,1,7,ACME,,,,,,\nR,3,7,ACME,,,,101,2,\n\
         M,,7,,,,,,,\nM,,7,ZED,S,,,,,\n"
    );
    let (cmds, symbols) = parse(&text).unwrap();
    assert_eq!(symbols.name(0), "ACME");
    assert_eq!(symbols.name(1), "ZED");
    assert_eq!(
        cmds[0],
        Command::New(NewOrder {
            id: 1,
            account: 7,
            symbol: 0,
            side: Side::Buy,
            ord_type: OrdType::Limit,
            tif: TimeInForce::Gtc,
            price: 100,
            qty: 5,
            post_only: false,
            stp: StpMode::CancelNewest,
            ..Default::default()
        })
    );
    match cmds[1] {
        Command::New(o) => {
            assert_eq!(o.ord_type, OrdType::Market);
            assert_eq!(o.tif, TimeInForce::Ioc);
            assert_eq!(o.price, 0);
            assert_eq!(o.stp, StpMode::CancelBoth);
            assert_eq!(o.symbol, 1);
        }
        other => panic!("{other:?}"),
    }
    match cmds[2] {
        Command::New(o) => {
            assert!(o.post_only);
            assert_eq!((o.price, o.qty, o.stp), (-4, 0, StpMode::None));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        cmds[3],
        Command::Cancel {
            id: 1,
            account: 7,
            symbol: 0
        }
    );
    assert_eq!(
        cmds[4],
        Command::Replace {
            id: 3,
            account: 7,
            symbol: 0,
            price: 101,
            qty: 2
        }
    );
    assert_eq!(
        cmds[5],
        Command::MassCancel {
            account: 7,
            symbol: None,
            side: None
        }
    );
    assert_eq!(
        cmds[6],
        Command::MassCancel {
            account: 7,
            symbol: Some(1),
            side: Some(Side::Sell)
        }
    );
}

#[test]
fn skips_blank_lines_comments_bom_and_crlf() {
    let text = format!(
        "\u{feff}{}\r\n\r\n# comment\r\nC,1,2,X,,,,,\r\n",
        H.trim_end()
    );
    let (cmds, _) = parse(&text).unwrap();
    assert_eq!(cmds.len(), 1);
}

#[test]
fn errors_name_line_and_field() {
    assert_eq!(
        err(&format!(
            "{H}N,1,7,ACME,B,L,GTC,100,5\nN,2,7,ACME,B,L,GTC,10.5,5\n"
        )),
        "line 3: field 'price': expected an integer, got \"10.5\""
    );
    assert_eq!(
        err(&format!("{H}N,1,7,ACME,X,L,GTC,100,5\n")),
        "line 2: field 'side': expected B or S, got \"X\""
    );
    assert_eq!(
        err(&format!("{H}N,1,7,ACME,B,L,GTC,,5\n")),
        "line 2: field 'price': expected an integer, got \"\""
    );
    assert_eq!(
        err(&format!("{H}N,1,7,ACME,B,M,IOC,5,5\n")),
        "line 2: field 'price': must be empty for a market order, got \"5\""
    );
    assert_eq!(
        err(&format!("{H}N,1,4294967296,ACME,B,L,GTC,1,5\n")),
        "line 2: field 'account': integer \"4294967296\" is larger than 4294967295"
    );
    assert_eq!(
        err(&format!("{H}N,1,1,ACME,B,L,GTC,99999999999999999999,5\n")),
        "line 2: field 'price': integer \"99999999999999999999\" is out of the 64-bit range"
    );
    assert_eq!(
        err(&format!("{H}X,1,1,ACME,B,L,GTC,1,5\n")),
        "line 2: field 'op': expected N, C, R or M, got \"X\""
    );
    assert_eq!(
        err(&format!("{H}C,1,1,ACME,B,,,,\n")),
        "line 2: field 'side': must be empty for a cancel, got \"B\""
    );
    assert_eq!(
        err(&format!("{H}N,1,1,ACME,B,L,GTC,1\n")),
        "line 2: expected 9 fields (op,id,account,symbol,side,type,tif,price,qty), got 8"
    );
    assert_eq!(
        err(&format!("{H}N,1,1,ACME,B,L,GTC,1,1,1,1\n")),
        "line 2: expected 9 fields (op,id,account,symbol,side,type,tif,price,qty), got 11"
    );
    assert_eq!(
        err(&format!("{HS}N,1,1,ACME,B,L,GTC,1,1,newest\n")),
        "line 2: field 'stp': expected none, cancel_newest, cancel_oldest, cancel_both or \
         nothing, got \"newest\""
    );
    assert_eq!(
        err(&format!("{H}N,1,1,A B,B,L,GTC,1,1\n")),
        "line 2: field 'symbol': expected a symbol of 1 to 16 printable ASCII characters \
         without commas, got \"A B\""
    );
    assert_eq!(
        err(&format!("{H}N,1,1,ACME,B,L,gtc,1,1\n")),
        "line 2: field 'tif': expected GTC, DAY, IOC or FOK, got \"gtc\""
    );
    assert_eq!(
        err(&format!("{H}M,3,1,,,,,,\n")),
        "line 2: field 'id': must be empty for a mass cancel, got \"3\""
    );
    assert_eq!(
        err("op,id\n"),
        "line 1: expected the header \"op,id,account,symbol,side,type,tif,price,qty\" \
         (optionally followed by \",stp\"), got \"op,id\""
    );
    assert_eq!(
        err(""),
        "line 1: empty input: expected the header \"op,id,account,symbol,side,type,tif,price,qty\""
    );
    let long = format!("{H}{}\n", "9".repeat(LINE_LEN_MAX + 1));
    assert_eq!(err(&long), "line 2: line longer than 1024 bytes");
}

#[test]
fn written_commands_read_back_identically() {
    let text = format!(
        "{HS}N,1,7,ACME,B,L,GTC,100,5,\nN,2,8,ZED,S,M,IOC,,3,cancel_both\n\
         N,3,7,ACME,S,P,DAY,-4,0,none\nN,4,7,ACME,S,L,FOK,4,1,cancel_oldest\n\
         C,1,7,ACME,,,,,,\nR,3,7,ACME,,,,101,2,\nM,,7,,,,,,,\nM,,7,ZED,S,,,,,\n"
    );
    let (cmds, symbols) = parse(&text).unwrap();
    let mut out = HS.as_bytes().to_vec();
    for c in &cmds {
        assert!(push_command(&mut out, c, &symbols));
    }
    assert_eq!(String::from_utf8(out).unwrap(), text);
    assert!(!push_command(
        &mut Vec::new(),
        &Command::ExpireDay { symbol: None },
        &symbols
    ));
}

#[test]
fn integers_are_exact() {
    assert_eq!(parse_signed(b"-9223372036854775808"), Ok(i64::MIN));
    assert_eq!(parse_signed(b"9223372036854775807"), Ok(i64::MAX));
    assert!(parse_signed(b"9223372036854775808").is_err());
    assert!(parse_signed(b"-").is_err());
    assert!(parse_signed(b"+5").is_err());
    assert_eq!(
        parse_unsigned(b"18446744073709551615", u64::MAX),
        Ok(u64::MAX)
    );
    assert!(parse_unsigned(b"18446744073709551616", u64::MAX).is_err());
}
