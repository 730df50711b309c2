//! Exact decimals for FIX prices and quantities: a signed integer mantissa and a decimal scale.
//!
//! Role: turn FIX `Price`/`Qty` text into integers (and back) without ever touching a float:
//! parse, convert to ticks of a given tick size (refusing values off the tick or with too many
//! decimals), format ticks back to text, and format a ratio (AvgPx = notional / CumQty) with a
//! fixed number of digits.
//!
//! Never: floats, allocation, panics on any input.
//!
//! Invariants: `Decimal::parse` returns a normalized value (no trailing fractional zeros);
//! every arithmetic step is checked and overflow is an error, not a wrap.

/// Largest number of fractional digits a `Decimal` may carry.
pub const SCALE_MAX: u8 = 18;

const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// `mantissa * 10^-scale`, e.g. `12.34` is `Decimal { mantissa: 1234, scale: 2 }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Decimal {
    pub mantissa: i64,
    pub scale: u8,
}

/// Why a decimal could not be parsed or converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecimalError {
    /// Not `-?digits[.digits]` (FIX `float` syntax).
    Format,
    /// The value does not fit in the integer type.
    Overflow,
    /// More fractional digits than allowed (more than the tick size has, or than `SCALE_MAX`).
    TooManyDecimals,
    /// Not a whole multiple of the tick size.
    OffTick,
    /// A quantity that must be whole has a fraction.
    NotInteger,
    /// The tick size (or a divisor) is zero or negative.
    BadTick,
}

impl DecimalError {
    pub fn as_str(self) -> &'static str {
        match self {
            DecimalError::Format => "not a decimal number",
            DecimalError::Overflow => "number out of range",
            DecimalError::TooManyDecimals => "too many decimals",
            DecimalError::OffTick => "price not a multiple of the tick size",
            DecimalError::NotInteger => "quantity must be a whole number",
            DecimalError::BadTick => "tick size must be positive",
        }
    }
}

impl Decimal {
    pub const ZERO: Decimal = Decimal {
        mantissa: 0,
        scale: 0,
    };

    pub const fn new(mantissa: i64, scale: u8) -> Decimal {
        Decimal { mantissa, scale }
    }

    /// Parses FIX `float` text: an optional `-`, digits, an optional `.` and digits, at least
    /// one digit in all. Trailing fractional zeros are dropped (so `1.500` has scale 1), which
    /// also lets `1.0000000000000000000000` parse although it has more than `SCALE_MAX` digits.
    pub fn parse(text: &[u8]) -> Result<Decimal, DecimalError> {
        let (neg, digits) = match text.first() {
            Some(b'-') => (true, &text[1..]),
            _ => (false, text),
        };
        let mut mantissa: i64 = 0;
        let mut scale: u32 = 0;
        let mut pending_zeros: u32 = 0;
        let mut seen_digit = false;
        let mut in_fraction = false;
        for &c in digits {
            match c {
                b'0'..=b'9' => {
                    seen_digit = true;
                    let d = (c - b'0') as i64;
                    if in_fraction {
                        if d == 0 {
                            pending_zeros += 1;
                            continue;
                        }
                        scale += pending_zeros + 1;
                        if scale > SCALE_MAX as u32 {
                            return Err(DecimalError::TooManyDecimals);
                        }
                        let mul = POW10[(pending_zeros + 1) as usize];
                        pending_zeros = 0;
                        let m = (mantissa as i128) * mul + d as i128;
                        mantissa = i64::try_from(m).map_err(|_| DecimalError::Overflow)?;
                    } else {
                        mantissa = mantissa
                            .checked_mul(10)
                            .and_then(|m| m.checked_add(d))
                            .ok_or(DecimalError::Overflow)?;
                    }
                }
                b'.' if !in_fraction => in_fraction = true,
                _ => return Err(DecimalError::Format),
            }
        }
        if !seen_digit {
            return Err(DecimalError::Format);
        }
        Ok(Decimal {
            mantissa: if neg { -mantissa } else { mantissa },
            scale: scale as u8,
        })
    }

    /// Drops trailing fractional zeros: `1.50` becomes `1.5`.
    pub fn normalize(self) -> Decimal {
        let mut d = self;
        while d.scale > 0 && d.mantissa % 10 == 0 {
            d.mantissa /= 10;
            d.scale -= 1;
        }
        d
    }

    /// This value as a whole number of ticks of size `tick` (e.g. `12.34` with tick `0.01` is
    /// 1234). Refuses a value with more decimals than the tick has (`TooManyDecimals`) or one
    /// that is not a multiple of the tick (`OffTick`, e.g. `1.03` with tick `0.05`).
    pub fn to_ticks(self, tick: Decimal) -> Result<i64, DecimalError> {
        let tick = tick.normalize();
        if tick.mantissa <= 0 || tick.scale > SCALE_MAX {
            return Err(DecimalError::BadTick);
        }
        let v = self.normalize();
        if v.scale > SCALE_MAX {
            return Err(DecimalError::TooManyDecimals);
        }
        if v.scale > tick.scale {
            return Err(DecimalError::TooManyDecimals);
        }
        let num = (v.mantissa as i128) * POW10[(tick.scale - v.scale) as usize];
        let den = tick.mantissa as i128;
        if num % den != 0 {
            return Err(DecimalError::OffTick);
        }
        i64::try_from(num / den).map_err(|_| DecimalError::Overflow)
    }

    /// `ticks` ticks of size `tick` as a decimal with the tick's scale (`1234` ticks of `0.01`
    /// is `12.34`).
    pub fn from_ticks(ticks: i64, tick: Decimal) -> Result<Decimal, DecimalError> {
        if tick.mantissa <= 0 {
            return Err(DecimalError::BadTick);
        }
        let mantissa = ticks
            .checked_mul(tick.mantissa)
            .ok_or(DecimalError::Overflow)?;
        Ok(Decimal {
            mantissa,
            scale: tick.scale,
        })
    }

    /// The value as a whole number; `NotInteger` if it has a non-zero fraction.
    pub fn to_integer(self) -> Result<i64, DecimalError> {
        let v = self.normalize();
        if v.scale != 0 {
            return Err(DecimalError::NotInteger);
        }
        Ok(v.mantissa)
    }

    /// `num / den` rounded half away from zero to exactly `scale` fractional digits.
    pub fn from_ratio(num: i128, den: i128, scale: u8) -> Result<Decimal, DecimalError> {
        if den <= 0 {
            return Err(DecimalError::BadTick);
        }
        if scale > SCALE_MAX {
            return Err(DecimalError::TooManyDecimals);
        }
        let scaled = num
            .checked_mul(POW10[scale as usize])
            .ok_or(DecimalError::Overflow)?;
        let q = scaled / den;
        let r = scaled % den;
        // |r| * 2 >= den rounds away from zero; r has the sign of num.
        let q = if r.unsigned_abs() * 2 >= den as u128 {
            if scaled < 0 {
                q - 1
            } else {
                q + 1
            }
        } else {
            q
        };
        let mantissa = i64::try_from(q).map_err(|_| DecimalError::Overflow)?;
        Ok(Decimal { mantissa, scale })
    }

    /// Appends the value as FIX text with exactly `scale` fractional digits (`12.30`, `-0.05`,
    /// `7`).
    pub fn write(self, out: &mut Vec<u8>) {
        let mut buf = [0u8; DECIMAL_LEN_MAX];
        let n = self.format(&mut buf);
        out.extend_from_slice(&buf[..n]);
    }

    /// Writes the value as FIX text into `out`; returns its length.
    #[inline]
    pub fn format(self, out: &mut [u8; DECIMAL_LEN_MAX]) -> usize {
        let mut v = self.mantissa.unsigned_abs();
        let scale = (self.scale as usize).min(SCALE_MAX as usize);
        let digits = (v.checked_ilog10().unwrap_or(0) as usize + 1).max(scale + 1);
        let sign = usize::from(self.mantissa < 0);
        let len = sign + digits + usize::from(scale > 0);
        out[0] = b'-';
        let mut i = len;
        for k in 0..digits {
            if k == scale && scale > 0 {
                i -= 1;
                out[i] = b'.';
            }
            i -= 1;
            out[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        len
    }
}

/// Longest text `Decimal::format` writes: sign, 19 digits, point, and up to `SCALE_MAX` leading
/// fractional zeros.
pub const DECIMAL_LEN_MAX: usize = 1 + 19 + 1 + SCALE_MAX as usize + 1;

/// AvgPx of fills: `notional_ticks` (the sum of `price_ticks * qty` over the fills) divided by
/// `cum_qty`, in price units of `tick`, rounded half away from zero to `digits` decimals. Zero
/// when nothing has filled.
pub fn avg_px(
    notional_ticks: i128,
    cum_qty: u64,
    tick: Decimal,
    digits: u8,
) -> Result<Decimal, DecimalError> {
    if cum_qty == 0 {
        return Ok(Decimal::new(0, digits));
    }
    if tick.mantissa <= 0 || tick.scale > SCALE_MAX {
        return Err(DecimalError::BadTick);
    }
    let num = notional_ticks
        .checked_mul(tick.mantissa as i128)
        .ok_or(DecimalError::Overflow)?;
    let den = (cum_qty as i128) * POW10[tick.scale as usize];
    Decimal::from_ratio(num, den, digits)
}

#[cfg(test)]
mod tests {
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
}
