//! Exact decimals: `parse_price` (the one price parser of order entry) at its edges,
//! `Decimal::parse` and `to_units`, and the formatting of units and ratios.

use fix::{parse_price, write_ratio, write_units, Decimal, DecimalError, PriceError};

/// `parse_price` with two decimals and a tick of one unit (0.01).
fn cents(text: &str) -> Result<i64, PriceError> {
    parse_price(text.as_bytes(), 2, 1)
}

#[test]
fn price_forms() {
    assert_eq!(cents("12.34"), Ok(1234));
    assert_eq!(cents("12"), Ok(1200));
    assert_eq!(cents("12.3"), Ok(1230));
    assert_eq!(cents("0.01"), Ok(1));
    // Leading zeros, in the whole part and beyond 19 digits of them.
    assert_eq!(cents("007.50"), Ok(750));
    assert_eq!(cents("0000000000000000000000012.5"), Ok(1250));
    assert_eq!(cents("00.05"), Ok(5));
    // A point with nothing after it, or nothing before it.
    assert_eq!(cents("1."), Ok(100));
    assert_eq!(cents(".5"), Ok(50));
    assert_eq!(cents(".05"), Ok(5));
    // Trailing zeros past the instrument's decimals are no extra precision.
    assert_eq!(cents("1.000"), Ok(100));
    assert_eq!(cents("1.00000000000000000000000"), Ok(100));
}

#[test]
fn price_not_a_decimal() {
    for bad in [
        "", "-", ".", "-.", "+1", " 1", "1 ", "1e5", "1E5", "1,5", "1.2.3", "--1", "0x10", "1_000",
        "١",
    ] {
        assert_eq!(cents(bad), Err(PriceError::NotDecimal), "{bad:?}");
    }
}

#[test]
fn price_must_be_positive() {
    for bad in [
        "0", "-0", "-0.00", "0.000", ".0", "0.", "-1", "-0.01", "-.5",
    ] {
        assert_eq!(cents(bad), Err(PriceError::NotPositive), "{bad:?}");
    }
}

/// The largest price is `i64::MAX` units; a whole part past it, in digits or in units, is out
/// of range (not wrapped, not rounded).
#[test]
fn price_out_of_range() {
    assert_eq!(cents("92233720368547758.07"), Ok(i64::MAX));
    assert_eq!(cents("92233720368547758.08"), Err(PriceError::OutOfRange));
    assert_eq!(cents("92233720368547759"), Err(PriceError::OutOfRange));
    assert_eq!(cents("9223372036854775807"), Err(PriceError::OutOfRange));
    assert_eq!(cents("99999999999999999999"), Err(PriceError::OutOfRange));
    assert_eq!(
        cents("123456789012345678901234567890"),
        Err(PriceError::OutOfRange)
    );
    assert_eq!(parse_price(b"9223372036854775807", 0, 1), Ok(i64::MAX));
    assert_eq!(
        parse_price(b"9223372036854775808", 0, 1),
        Err(PriceError::OutOfRange)
    );
    // The magnitude is judged before the sign.
    assert_eq!(
        parse_price(b"-9223372036854775808", 0, 1),
        Err(PriceError::OutOfRange)
    );
}

/// Digits past what 64 bits hold do not hide what else is wrong with the text: a price in
/// range with too many decimals is off the tick, and a text that is not a decimal says so.
#[test]
fn price_with_too_many_digits_keeps_its_reason() {
    assert_eq!(cents("1000.1234567890123456"), Err(PriceError::OffTick));
    assert_eq!(cents("99999999999999999999.123"), Err(PriceError::OffTick));
    assert_eq!(cents("99999999999999999999x"), Err(PriceError::NotDecimal));
    assert_eq!(
        cents("99999999999999999999.1.2"),
        Err(PriceError::NotDecimal)
    );
    assert_eq!(cents("-99999999999999999999-"), Err(PriceError::NotDecimal));
    assert_eq!(
        cents("99999999999999999999.00"),
        Err(PriceError::OutOfRange)
    );
}

#[test]
fn price_with_more_decimals_than_the_instrument_is_off_the_tick() {
    assert_eq!(cents("1.001"), Err(PriceError::OffTick));
    assert_eq!(cents("1.0010"), Err(PriceError::OffTick));
    assert_eq!(cents("0.005"), Err(PriceError::OffTick));
    assert_eq!(
        cents("1.0000000000000000000000000001"),
        Err(PriceError::OffTick)
    );
    assert_eq!(parse_price(b"100.5", 0, 1), Err(PriceError::OffTick));
    assert_eq!(parse_price(b"100.0", 0, 1), Ok(100));
    assert_eq!(parse_price(b"1.2345", 4, 1), Ok(12345));
    assert_eq!(parse_price(b"1.23456", 4, 1), Err(PriceError::OffTick));
}

/// A tick of 5 units (0.05 with two decimals): only multiples of it.
#[test]
fn price_off_a_tick_of_five_units() {
    let nickels = |t: &str| parse_price(t.as_bytes(), 2, 5);
    assert_eq!(nickels("0.05"), Ok(5));
    assert_eq!(nickels("0.1"), Ok(10));
    assert_eq!(nickels("1.25"), Ok(125));
    assert_eq!(nickels("100"), Ok(10_000));
    for off in ["0.01", "0.04", "0.06", "1.03", "1.26", "99.99"] {
        assert_eq!(nickels(off), Err(PriceError::OffTick), "{off}");
    }
    // Too many decimals is off the tick before it is anything else.
    assert_eq!(nickels("1.051"), Err(PriceError::OffTick));
    // Not positive is said before off the tick.
    assert_eq!(nickels("0"), Err(PriceError::NotPositive));
    assert_eq!(nickels("-0.03"), Err(PriceError::NotPositive));
    // A tick of 25 whole units.
    assert_eq!(parse_price(b"250", 0, 25), Ok(250));
    assert_eq!(parse_price(b"260", 0, 25), Err(PriceError::OffTick));
}

#[test]
fn price_error_texts() {
    assert_eq!(PriceError::NotDecimal.as_str(), "price is not a decimal");
    assert_eq!(PriceError::OutOfRange.as_str(), "price out of range");
    assert_eq!(PriceError::OffTick.as_str(), "price is off the tick");
    assert_eq!(PriceError::NotPositive.as_str(), "price must be positive");
}

/// `parse_price` agrees with a reference built on `i128` and `str::parse`, on random texts.
#[test]
fn price_agrees_with_a_reference() {
    fn reference(t: &str, decimals: u32, tick: i64) -> Result<i64, PriceError> {
        let (neg, body) = match t.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, t),
        };
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if !digits(int) || !digits(frac) || int.len() + frac.len() == 0 {
            return Err(PriceError::NotDecimal);
        }
        let frac = frac.trim_end_matches('0');
        if frac.len() > decimals as usize {
            return Err(PriceError::OffTick);
        }
        let int = int.trim_start_matches('0');
        if int.len() > 20 {
            return Err(PriceError::OutOfRange);
        }
        let whole: i128 = if int.is_empty() {
            0
        } else {
            int.parse().unwrap()
        };
        let f: i128 = if frac.is_empty() {
            0
        } else {
            frac.parse::<i128>().unwrap() * 10i128.pow(decimals - frac.len() as u32)
        };
        // Magnitude, then sign.
        let units =
            i64::try_from(whole * 10i128.pow(decimals) + f).map_err(|_| PriceError::OutOfRange)?;
        let units = if neg { -units } else { units };
        if units <= 0 {
            return Err(PriceError::NotPositive);
        }
        if units % tick != 0 {
            return Err(PriceError::OffTick);
        }
        Ok(units)
    }
    let alphabet = b"0123456789.-";
    let mut rng = types::XorShift64::new(0x2545_F491_4F6C_DD1D);
    let mut next = || rng.next_u64();
    for _ in 0..50_000 {
        let len = (next() % 24) as usize;
        let text: String = (0..len)
            .map(|_| {
                let r = next();
                // Mostly digits, a few points and signs.
                let i = if r % 8 == 0 {
                    10 + (r >> 8) % 2
                } else {
                    (r >> 8) % 10
                };
                alphabet[i as usize] as char
            })
            .collect();
        let decimals = (next() % 5) as u32;
        let tick = [1, 1, 5, 25][(next() % 4) as usize];
        assert_eq!(
            parse_price(text.as_bytes(), decimals, tick),
            reference(&text, decimals, tick),
            "{text:?} decimals {decimals} tick {tick}"
        );
    }
}

#[test]
fn decimal_parse_is_normalized_and_exact() {
    assert_eq!(Decimal::parse(b"12.3400"), Ok(Decimal::new(1234, 2)));
    assert_eq!(Decimal::parse(b"-0.05"), Ok(Decimal::new(-5, 2)));
    assert_eq!(Decimal::parse(b"-0"), Ok(Decimal::new(0, 0)));
    assert_eq!(Decimal::parse(b"100."), Ok(Decimal::new(100, 0)));
    assert_eq!(Decimal::parse(b".5"), Ok(Decimal::new(5, 1)));
    assert_eq!(
        Decimal::parse(b"0.000000000000000001"),
        Ok(Decimal::new(1, 18))
    );
    assert_eq!(
        Decimal::parse(b"0.0000000000000000001"),
        Err(DecimalError::TooManyDecimals)
    );
    assert_eq!(
        Decimal::parse(b"9223372036854775808"),
        Err(DecimalError::Overflow)
    );
    assert_eq!(Decimal::parse(b"1.5x"), Err(DecimalError::Format));
}

#[test]
fn to_units_scales_up_and_refuses_to_round() {
    let d = |t: &str| Decimal::parse(t.as_bytes()).unwrap();
    assert_eq!(d("12.34").to_units(2), Ok(1234));
    assert_eq!(d("12.34").to_units(3), Ok(12_340));
    assert_eq!(d("12.34").to_units(1), Err(DecimalError::TooManyDecimals));
    assert_eq!(d("12").to_units(0), Ok(12));
    assert_eq!(d("-1.5").to_units(2), Ok(-150));
    // Not normalized (built by hand): trailing zeros still fit.
    assert_eq!(Decimal::new(1200, 3).to_units(1), Ok(12));
    assert_eq!(d("1").to_units(18), Ok(1_000_000_000_000_000_000));
    assert_eq!(d("10").to_units(18), Err(DecimalError::Overflow));
    assert_eq!(d("1").to_units(19), Err(DecimalError::Overflow));
}

fn units(u: i64, d: u32) -> String {
    let mut o = Vec::new();
    write_units(&mut o, u, d);
    String::from_utf8(o).unwrap()
}

fn ratio(n: i128, den: u64, d: u32) -> String {
    let mut o = Vec::new();
    write_ratio(&mut o, n, den, d);
    String::from_utf8(o).unwrap()
}

/// Units are written without trailing zeros, and read back as the same units.
#[test]
fn write_units_round_trips_through_parse_price() {
    assert_eq!(units(0, 2), "0");
    assert_eq!(units(1, 2), "0.01");
    assert_eq!(units(10, 2), "0.1");
    assert_eq!(units(100, 2), "1");
    assert_eq!(units(-1234, 2), "-12.34");
    assert_eq!(units(1, 4), "0.0001");
    assert_eq!(units(1_000, 4), "0.1");
    assert_eq!(units(i64::MAX, 2), "92233720368547758.07");
    assert_eq!(units(i64::MIN, 2), "-92233720368547758.08");
    assert_eq!(units(i64::MAX, 18), "9.223372036854775807");
    for d in 0..=6 {
        for u in [1i64, 5, 10, 99, 100, 101, 12_345, 1_000_000, 987_654_321] {
            assert_eq!(
                parse_price(units(u, d).as_bytes(), d, 1),
                Ok(u),
                "{u} units, {d} decimals"
            );
        }
    }
}

#[test]
fn write_ratio_exact_then_rounded() {
    assert_eq!(ratio(300, 3, 2), "1");
    assert_eq!(ratio(0, 0, 2), "0");
    assert_eq!(ratio(1234, 1, 2), "12.34");
    assert_eq!(ratio(1234, 0, 2), "12.34", "a zero quantity divides by one");
    assert_eq!(ratio(1, 8, 2), "0.00125");
    assert_eq!(ratio(-1, 8, 2), "-0.00125");
    assert_eq!(ratio(-2461, 2, 2), "-12.305");
    // Eight digits past the price's, rounded half away from zero.
    assert_eq!(ratio(1, 3, 0), "0.33333333");
    assert_eq!(ratio(2, 3, 0), "0.66666667");
    assert_eq!(ratio(-2, 3, 0), "-0.66666667");
    assert_eq!(ratio(1, 7, 2), "0.0014285714");
    assert_eq!(ratio(1, 300_000_000, 0), "0");
    // A notional past 64 bits.
    assert_eq!(ratio(u64::MAX as i128 + 1, 2, 2), "92233720368547758.08");
}
