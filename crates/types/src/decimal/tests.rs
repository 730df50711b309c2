use super::*;

fn text(d: Decimal) -> String {
    let mut v = Vec::new();
    d.write(&mut v);
    String::from_utf8(v).unwrap()
}

#[test]
fn parse_forms() {
    assert_eq!(Decimal::parse(b"12.34"), Ok(Decimal::new(1234, 2)));
    assert_eq!(Decimal::parse(b"12.3400"), Ok(Decimal::new(1234, 2)));
    assert_eq!(Decimal::parse(b"-0.05"), Ok(Decimal::new(-5, 2)));
    assert_eq!(Decimal::parse(b"100"), Ok(Decimal::new(100, 0)));
    assert_eq!(Decimal::parse(b"100."), Ok(Decimal::new(100, 0)));
    assert_eq!(Decimal::parse(b".5"), Ok(Decimal::new(5, 1)));
    assert_eq!(
        Decimal::parse(b"1.0000000000000000000000000"),
        Ok(Decimal::new(1, 0))
    );
    assert_eq!(
        Decimal::parse(b"9223372036854775807"),
        Ok(Decimal::new(i64::MAX, 0))
    );
    for bad in [
        &b""[..],
        b"-",
        b".",
        b"1.2.3",
        b"1e5",
        b"+1",
        b" 1",
        b"1,5",
        b"--1",
    ] {
        assert_eq!(Decimal::parse(bad), Err(DecimalError::Format), "{bad:?}");
    }
    assert_eq!(
        Decimal::parse(b"9223372036854775808"),
        Err(DecimalError::Overflow)
    );
    assert_eq!(
        Decimal::parse(b"0.0000000000000000001"),
        Err(DecimalError::TooManyDecimals)
    );
}

#[test]
fn ticks_exact_off_tick_and_too_many_decimals() {
    let cent = Decimal::new(1, 2);
    let nickel = Decimal::new(5, 2);
    assert_eq!(Decimal::parse(b"12.34").unwrap().to_ticks(cent), Ok(1234));
    assert_eq!(Decimal::parse(b"12").unwrap().to_ticks(cent), Ok(1200));
    assert_eq!(Decimal::parse(b"12.340").unwrap().to_ticks(cent), Ok(1234));
    assert_eq!(
        Decimal::parse(b"12.345").unwrap().to_ticks(cent),
        Err(DecimalError::TooManyDecimals)
    );
    assert_eq!(Decimal::parse(b"1.25").unwrap().to_ticks(nickel), Ok(25));
    assert_eq!(
        Decimal::parse(b"1.03").unwrap().to_ticks(nickel),
        Err(DecimalError::OffTick)
    );
    assert_eq!(
        Decimal::new(1, 0).to_ticks(Decimal::ZERO),
        Err(DecimalError::BadTick)
    );
    assert_eq!(
        Decimal::new(i64::MAX, 0).to_ticks(cent),
        Err(DecimalError::Overflow)
    );
    // Tick sizes above one unit.
    assert_eq!(Decimal::new(250, 0).to_ticks(Decimal::new(25, 0)), Ok(10));
    assert_eq!(
        Decimal::new(260, 0).to_ticks(Decimal::new(25, 0)),
        Err(DecimalError::OffTick)
    );
}

#[test]
fn format_round_trip() {
    let cent = Decimal::new(1, 2);
    assert_eq!(text(Decimal::from_ticks(1234, cent).unwrap()), "12.34");
    assert_eq!(text(Decimal::from_ticks(5, cent).unwrap()), "0.05");
    assert_eq!(text(Decimal::from_ticks(-5, cent).unwrap()), "-0.05");
    assert_eq!(text(Decimal::from_ticks(1200, cent).unwrap()), "12.00");
    assert_eq!(text(Decimal::new(0, 0)), "0");
    assert_eq!(text(Decimal::new(0, 3)), "0.000");
    assert_eq!(text(Decimal::new(i64::MIN, 0)), "-9223372036854775808");
    for s in ["1", "0.5", "123.456", "-7.25", "0.000000000000000001"] {
        assert_eq!(text(Decimal::parse(s.as_bytes()).unwrap()), s);
    }
}

#[test]
fn ratio_rounds_half_away_from_zero() {
    assert_eq!(text(Decimal::from_ratio(1, 3, 4).unwrap()), "0.3333");
    assert_eq!(text(Decimal::from_ratio(2, 3, 4).unwrap()), "0.6667");
    assert_eq!(text(Decimal::from_ratio(1, 8, 2).unwrap()), "0.13");
    assert_eq!(text(Decimal::from_ratio(-1, 8, 2).unwrap()), "-0.13");
    assert_eq!(text(Decimal::from_ratio(10, 4, 0).unwrap()), "3");
    assert_eq!(Decimal::from_ratio(1, 0, 2), Err(DecimalError::BadTick));
}

#[test]
fn avg_px_of_fills() {
    let cent = Decimal::new(1, 2);
    // 100 @ 10.00 and 200 @ 10.01: (1000*100 + 1001*200) / 300 = 1000.666.. ticks = 10.00667
    let notional = 1000i128 * 100 + 1001 * 200;
    assert_eq!(text(avg_px(notional, 300, cent, 5).unwrap()), "10.00667");
    assert_eq!(text(avg_px(notional, 300, cent, 2).unwrap()), "10.01");
    assert_eq!(text(avg_px(0, 0, cent, 2).unwrap()), "0.00");
    assert_eq!(text(avg_px(1234 * 7, 7, cent, 2).unwrap()), "12.34");
}

#[test]
fn integer_quantities() {
    assert_eq!(Decimal::parse(b"100.00").unwrap().to_integer(), Ok(100));
    assert_eq!(
        Decimal::parse(b"100.5").unwrap().to_integer(),
        Err(DecimalError::NotInteger)
    );
}
