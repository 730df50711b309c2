//! Exact decimals for prices and quantities: a signed integer mantissa and a decimal scale.
//!
//! Role: turn decimal text (FIX `Price`/`Qty`, JSON's decimal strings) into integers (and back)
//! without ever touching a float:
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
    /// One pass over the bytes, 64-bit arithmetic only (an order's price is parsed on the
    /// event loop).
    pub fn parse(text: &[u8]) -> Result<Decimal, DecimalError> {
        let (neg, body) = match text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, text),
        };
        let mut mantissa: i64 = 0;
        let mut at = 0;
        while let Some(&c) = body.get(at) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(i64::from(d)))
                .ok_or(DecimalError::Overflow)?;
            at += 1;
        }
        let int_len = at;
        let mut scale = 0;
        match body.get(at) {
            None if int_len == 0 => return Err(DecimalError::Format),
            None => {}
            Some(b'.') => {
                let frac = &body[at + 1..];
                if !frac.iter().all(u8::is_ascii_digit) || (int_len == 0 && frac.is_empty()) {
                    return Err(DecimalError::Format);
                }
                let mut n = frac.len();
                while n > 0 && frac[n - 1] == b'0' {
                    n -= 1;
                }
                if n > SCALE_MAX as usize {
                    return Err(DecimalError::TooManyDecimals);
                }
                for &c in &frac[..n] {
                    mantissa = mantissa
                        .checked_mul(10)
                        .and_then(|m| m.checked_add(i64::from(c - b'0')))
                        .ok_or(DecimalError::Overflow)?;
                }
                scale = n as u8;
            }
            Some(_) => return Err(DecimalError::Format),
        }
        Ok(Decimal {
            mantissa: if neg { -mantissa } else { mantissa },
            scale,
        })
    }

    /// The value in units of `10^-decimals` (`12.34` with 2 decimals is 1234, with 3 is
    /// 12340): `TooManyDecimals` if it has more fractional digits than that, `Overflow` if
    /// the units do not fit.
    #[inline]
    pub fn to_units(self, decimals: u32) -> Result<i64, DecimalError> {
        let v = if u32::from(self.scale) > decimals {
            self.normalize()
        } else {
            self
        };
        let scale = u32::from(v.scale);
        if scale > decimals {
            return Err(DecimalError::TooManyDecimals);
        }
        let mul = *POW10_I64
            .get((decimals - scale) as usize)
            .ok_or(DecimalError::Overflow)?;
        v.mantissa.checked_mul(mul).ok_or(DecimalError::Overflow)
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

/// 10^0 to 10^18.
const POW10_I64: [i64; 19] = {
    let mut t = [1i64; 19];
    let mut k = 1;
    while k < 19 {
        t[k] = t[k - 1] * 10;
        k += 1;
    }
    t
};

/// Why a FIX price is not a valid price of an instrument ([`parse_price`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PriceError {
    /// Not `-?digits[.digits]`.
    NotDecimal,
    /// Its price units do not fit in 64 bits.
    OutOfRange,
    /// More decimals than the instrument's, or not a multiple of its tick.
    OffTick,
    /// Zero or negative.
    NotPositive,
}

impl PriceError {
    /// The reason as a reject's Text says it.
    pub fn as_str(self) -> &'static str {
        match self {
            PriceError::NotDecimal => "price is not a decimal",
            PriceError::OutOfRange => "price out of range",
            PriceError::OffTick => "price is off the tick",
            PriceError::NotPositive => "price must be positive",
        }
    }
}

/// A FIX price as integer price units of an instrument whose prices have `decimals` decimals
/// and whose tick is `tick` units: [`Decimal::parse`] then [`Decimal::to_units`], positive and
/// a multiple of the tick. The one price parser of order entry.
#[inline]
pub fn parse_price(text: &[u8], decimals: u32, tick: i64) -> Result<i64, PriceError> {
    let units = match short_price(text, decimals) {
        Some(u) => u,
        None => general_price(text, decimals)?,
    };
    if units <= 0 {
        return Err(PriceError::NotPositive);
    }
    if tick > 1 && units % tick != 0 {
        return Err(PriceError::OffTick);
    }
    Ok(units)
}

/// The usual price in one pass: 1 to 9 whole digits, then optionally `.` and 1 to `decimals`
/// (at most 9) digits. `None` for anything else, which `general_price` reads (with the same
/// result for these).
#[inline]
fn short_price(text: &[u8], decimals: u32) -> Option<i64> {
    const POW10: [i64; 10] = [
        1,
        10,
        100,
        1_000,
        10_000,
        100_000,
        1_000_000,
        10_000_000,
        100_000_000,
        1_000_000_000,
    ];
    if decimals > 9 || text.len() > 19 {
        return None;
    }
    let mut n: i64 = 0;
    let mut i = 0;
    while let Some(&c) = text.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if i == 9 {
            return None;
        }
        n = n * 10 + d as i64;
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let whole = n * POW10[decimals as usize];
    match text.get(i) {
        None => Some(whole),
        Some(b'.') => {
            let frac = &text[i + 1..];
            if frac.is_empty() || frac.len() > decimals as usize {
                return None;
            }
            let mut f: i64 = 0;
            for &c in frac {
                let d = c.wrapping_sub(b'0');
                if d > 9 {
                    return None;
                }
                f = f * 10 + d as i64;
            }
            Some(whole + f * POW10[decimals as usize - frac.len()])
        }
        Some(_) => None,
    }
}

/// `parse_price`'s units for any text: through `Decimal`, with the reasons in order.
#[cold]
fn general_price(text: &[u8], decimals: u32) -> Result<i64, PriceError> {
    Decimal::parse(text)
        .and_then(|d| d.to_units(decimals))
        .map_err(|e| match e {
            DecimalError::Format => PriceError::NotDecimal,
            DecimalError::TooManyDecimals | DecimalError::OffTick => PriceError::OffTick,
            _ => overflow_reason(text, decimals),
        })
}

/// Why `parse_price` overflowed: `Decimal::parse` stops at the first digit that does not fit,
/// before it has seen the rest of the text or counted its decimals. The same order as
/// without overflow: not a decimal, then more decimals than the instrument's, then range.
#[cold]
fn overflow_reason(text: &[u8], decimals: u32) -> PriceError {
    let body = text.strip_prefix(b"-").unwrap_or(text);
    let (int, frac) = match body.iter().position(|&b| b == b'.') {
        Some(p) => (&body[..p], &body[p + 1..]),
        None => (body, &[][..]),
    };
    if !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return PriceError::NotDecimal;
    }
    let frac_len = frac.iter().rposition(|&b| b != b'0').map_or(0, |p| p + 1);
    if frac_len > decimals as usize {
        return PriceError::OffTick;
    }
    PriceError::OutOfRange
}

/// Appends `units` * 10^-`decimals` (`decimals` at most 19) without trailing zeros: `1234`
/// with 2 decimals is "12.34", `1230` "12.3", `1200` "12", `5` "0.05". Two decimals (a tick
/// of 0.01, the usual) are split off by a constant (a multiply, not a division) and written
/// as one digit pair; other counts take a digit loop.
#[inline]
pub fn write_units(out: &mut Vec<u8>, units: i64, decimals: u32) {
    if units < 0 {
        out.push(b'-');
    }
    let units = units.unsigned_abs();
    if decimals == 2 {
        let (int, frac) = (units / 100, (units % 100) as usize);
        write_u64(out, int);
        if frac != 0 {
            let (a, b) = (DIGIT_PAIRS[frac * 2], DIGIT_PAIRS[frac * 2 + 1]);
            if b == b'0' {
                out.extend_from_slice(&[b'.', a]);
            } else {
                out.extend_from_slice(&[b'.', a, b]);
            }
        }
        return;
    }
    let decimals = decimals.min(19);
    let p = 10u64.pow(decimals);
    let (int, mut frac) = (units / p, units % p);
    write_u64(out, int);
    if frac == 0 {
        return;
    }
    let mut digits = decimals as usize;
    while frac % 10 == 0 {
        frac /= 10;
        digits -= 1;
    }
    let mut tmp = [b'0'; 20];
    tmp[0] = b'.';
    let mut i = digits + 1;
    while frac > 0 {
        i -= 1;
        tmp[i] = b'0' + (frac % 10) as u8;
        frac /= 10;
    }
    out.extend_from_slice(&tmp[..digits + 1]);
}

/// Appends `num / den` price units (`decimals` decimals, as [`write_units`]) exactly when the
/// quotient terminates within 8 more digits, rounded half away from zero beyond that: an
/// AvgPx, the notional of the fills over their quantity. A quotient that falls on a unit (fills
/// at one price) takes no 128-bit division.
pub fn write_ratio(out: &mut Vec<u8>, num: i128, den: u64, decimals: u32) {
    if num >= 0 && num <= u64::MAX as i128 {
        let n = num as u64;
        if den <= 1 && n <= i64::MAX as u64 {
            return write_units(out, n as i64, decimals);
        }
        if den > 1 && n.is_multiple_of(den) {
            return write_units(out, (n / den) as i64, decimals);
        }
    }
    const EXTRA: u32 = 8;
    let den = den.max(1) as i128;
    let scaled = num * 10i128.pow(EXTRA);
    let q = if scaled >= 0 {
        (scaled + den / 2) / den
    } else {
        (scaled - den / 2) / den
    };
    let decimals = decimals + EXTRA;
    let neg = q < 0;
    let q = q.unsigned_abs();
    let p = 10u128.pow(decimals);
    let (int, mut frac) = (q / p, q % p);
    if neg {
        out.push(b'-');
    }
    write_u64(out, int as u64);
    if frac == 0 {
        return;
    }
    let mut digits = decimals;
    while frac % 10 == 0 {
        frac /= 10;
        digits -= 1;
    }
    out.push(b'.');
    // On the stack, zero-padded to `digits` (at most 27: a price has at most 19 decimals,
    // plus `EXTRA`).
    let mut tmp = [b'0'; 40];
    let n = digits as usize;
    let mut i = n;
    while frac > 0 {
        i -= 1;
        tmp[i] = b'0' + (frac % 10) as u8;
        frac /= 10;
    }
    out.extend_from_slice(&tmp[..n]);
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

/// "00" to "99": two digits per division when formatting an integer.
pub const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends `v` in decimal: the one integer formatter of outbound messages (FIX, JSON). Numbers below
/// 10,000 (most of a message's: lengths, quantities, a session's first sequence numbers)
/// take a short form of one to four bytes; below 10^8 (order ids, ExecIDs and sequence
/// numbers of a busy day) a short form and four digits split by one division; longer ones
/// two digits per division into an array appended whole and cut back. Of the ways measured
/// with callgrind on the order path this took the fewest instructions.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, mut v: u64) {
    if v < 10 {
        out.push(b'0' + v as u8);
        return;
    }
    #[inline(always)]
    fn pair(p: u64) -> [u8; 2] {
        let d = p as usize * 2;
        [DIGIT_PAIRS[d], DIGIT_PAIRS[d + 1]]
    }
    #[inline(always)]
    fn short(out: &mut Vec<u8>, v: u64) {
        if v >= 1_000 {
            let (hi, lo) = (pair(v / 100), pair(v % 100));
            out.extend_from_slice(&[hi[0], hi[1], lo[0], lo[1]]);
        } else if v >= 100 {
            let lo = pair(v % 100);
            out.extend_from_slice(&[b'0' + (v / 100) as u8, lo[0], lo[1]]);
        } else if v >= 10 {
            out.extend_from_slice(&pair(v));
        } else {
            out.push(b'0' + v as u8);
        }
    }
    if v < 10_000 {
        short(out, v);
        return;
    }
    if v < 100_000_000 {
        let (hi, lo) = (v / 10_000, v % 10_000);
        short(out, hi);
        let (a, b) = (pair(lo / 100), pair(lo % 100));
        out.extend_from_slice(&[a[0], a[1], b[0], b[1]]);
        return;
    }
    let n = v.ilog10() as usize + 1;
    let mut tmp = [0u8; 20];
    let mut i = n;
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        tmp[i] = DIGIT_PAIRS[d];
        tmp[i + 1] = DIGIT_PAIRS[d + 1];
    }
    if v >= 10 {
        let d = v as usize * 2;
        tmp[0] = DIGIT_PAIRS[d];
        tmp[1] = DIGIT_PAIRS[d + 1];
    } else {
        tmp[0] = b'0' + v as u8;
    }
    let len = out.len();
    out.extend_from_slice(&tmp);
    out.truncate(len + n);
}

#[cfg(test)]
mod tests;
