//! ClOrdIDs that carry what the load generator needs to account for a reply.
//!
//! Layout: `<kind><run><k>.<slot>`: `kind` is one letter (`N` new order, `C` cancel, `R`
//! replace, `M` mass cancel), `run` six base-36 characters unique per run (so runs against the
//! same exchange never reuse a ClOrdID), `k` the request's index in the run's schedule (its
//! intended send time is a function of `k`) and `slot` the bot's order slot (0 for orders that
//! never rest).
//!
//! Role: no table from ClOrdID to send time is kept; a reply says which request it answers.
//!
//! Never: allocates (ids are formatted into a fixed array).

/// Longest ClOrdID produced: 1 + 6 + 20 + 1 + 10.
pub const CL_ORD_ID_LEN_MAX: usize = 38;
pub const RUN_LEN: usize = 6;

pub const KIND_NEW: u8 = b'N';
pub const KIND_CANCEL: u8 = b'C';
pub const KIND_REPLACE: u8 = b'R';
pub const KIND_MASS_CANCEL: u8 = b'M';

/// The run tag: six base-36 characters of `seed` (e.g. the start time in ms).
pub fn run_tag(seed: u64) -> [u8; RUN_LEN] {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = [b'0'; RUN_LEN];
    let mut v = seed;
    for c in out.iter_mut().rev() {
        *c = DIGITS[(v % 36) as usize];
        v /= 36;
    }
    out
}

/// A formatted ClOrdID.
#[derive(Clone, Copy)]
pub struct ClOrdId {
    buf: [u8; CL_ORD_ID_LEN_MAX],
    len: u8,
}

impl ClOrdId {
    pub fn new(kind: u8, run: &[u8; RUN_LEN], k: u64, slot: u32) -> ClOrdId {
        let mut buf = [0u8; CL_ORD_ID_LEN_MAX];
        buf[0] = kind;
        buf[1..1 + RUN_LEN].copy_from_slice(run);
        let mut n = 1 + RUN_LEN;
        n += write_decimal(&mut buf[n..], k);
        buf[n] = b'.';
        n += 1;
        n += write_decimal(&mut buf[n..], u64::from(slot));
        ClOrdId { buf, len: n as u8 }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
}

fn write_decimal(out: &mut [u8], mut v: u64) -> usize {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let n = tmp.len() - i;
    out[..n].copy_from_slice(&tmp[i..]);
    n
}

/// What a ClOrdID of this run says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub kind: u8,
    pub k: u64,
    pub slot: u32,
}

/// Reads a ClOrdID of run `run`; `None` for anything else (another run's, a foreign client's,
/// `NONE`).
pub fn parse(run: &[u8; RUN_LEN], b: &[u8]) -> Option<Parsed> {
    if b.len() < 1 + RUN_LEN + 3 || &b[1..1 + RUN_LEN] != run {
        return None;
    }
    let kind = b[0];
    if !matches!(
        kind,
        KIND_NEW | KIND_CANCEL | KIND_REPLACE | KIND_MASS_CANCEL
    ) {
        return None;
    }
    let rest = &b[1 + RUN_LEN..];
    let dot = rest.iter().position(|&c| c == b'.')?;
    let k = parse_decimal(&rest[..dot])?;
    let slot = u32::try_from(parse_decimal(&rest[dot + 1..])?).ok()?;
    Some(Parsed { kind, k, slot })
}

fn parse_decimal(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(v)
}

#[cfg(test)]
mod tests;
