//! Client order ids: chosen by clients, unique per originator, stored inline.

use std::fmt;

/// Longest client order id accepted.
pub const CL_ORD_ID_LEN_MAX: usize = 64;

/// A client order id (a FIX ClOrdID, an API client's own order id) of at most
/// [`CL_ORD_ID_LEN_MAX`] bytes of UTF-8, stored inline: an input that carries one owns no heap
/// memory, so decoding a journal record or a request allocates nothing. Bytes after `len` are
/// always zero, so the derived equality and hash are those of the string.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClOrdId {
    len: u8,
    bytes: [u8; CL_ORD_ID_LEN_MAX],
}

const _: () = assert!(CL_ORD_ID_LEN_MAX <= u8::MAX as usize);

impl ClOrdId {
    /// The empty ClOrdID (an absent OrigClOrdID).
    pub const EMPTY: ClOrdId = ClOrdId {
        len: 0,
        bytes: [0; CL_ORD_ID_LEN_MAX],
    };

    /// `s` if it fits, `None` if it is longer than [`CL_ORD_ID_LEN_MAX`] bytes.
    pub fn new(s: &str) -> Option<ClOrdId> {
        (s.len() <= CL_ORD_ID_LEN_MAX).then(|| {
            let mut c = ClOrdId::EMPTY;
            c.bytes[..s.len()].copy_from_slice(s.as_bytes());
            c.len = s.len() as u8;
            c
        })
    }

    /// `s`, cut at the last character boundary within [`CL_ORD_ID_LEN_MAX`] bytes.
    pub fn truncated(s: &str) -> ClOrdId {
        let mut end = s.len().min(CL_ORD_ID_LEN_MAX);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        ClOrdId::new(&s[..end]).expect("cut to fit")
    }

    /// UTF-8 `b` if it fits. Copies 8 bytes at a time (no `memcpy` call for a short string)
    /// and runs the full UTF-8 check only when a byte is not ASCII (replay decodes one or
    /// two ClOrdIDs per record).
    #[inline]
    pub fn from_bytes(b: &[u8]) -> Option<ClOrdId> {
        let mut c = ClOrdId::EMPTY;
        c.set_from_bytes(b).then_some(c)
    }

    /// Sets `self` to UTF-8 `b` in place, as [`ClOrdId::from_bytes`] would make it, writing
    /// only the words `b` covers and zeroing those the old value used beyond them (replay
    /// decodes into recycled slots; no 64-byte construct-and-move). Returns false, and leaves
    /// `self` empty, if `b` does not fit or is not UTF-8.
    #[inline(always)]
    pub fn set_from_bytes(&mut self, b: &[u8]) -> bool {
        let n = b.len();
        if n > CL_ORD_ID_LEN_MAX {
            *self = ClOrdId::EMPTY;
            return false;
        }
        let old_words = (self.len as usize).div_ceil(8);
        let full = n / 8;
        let mut any = 0u64;
        for k in 0..full {
            let w = u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().expect("8 bytes"));
            any |= w;
            self.bytes[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
        }
        let rem = n % 8;
        let mut words = full;
        if rem != 0 {
            let w = if n >= 8 {
                // The last 8 bytes, shifted down to the `rem` not copied yet.
                u64::from_le_bytes(b[n - 8..].try_into().expect("8 bytes")) >> (8 * (8 - rem))
            } else {
                let mut w = 0u64;
                for (i, &x) in b.iter().enumerate() {
                    w |= (x as u64) << (8 * i);
                }
                w
            };
            any |= w;
            self.bytes[8 * full..8 * full + 8].copy_from_slice(&w.to_le_bytes());
            words += 1;
        }
        for k in words..old_words {
            self.bytes[8 * k..8 * k + 8].copy_from_slice(&[0; 8]);
        }
        self.len = n as u8;
        if any & 0x8080_8080_8080_8080 != 0 && std::str::from_utf8(b).is_err() {
            *self = ClOrdId::EMPTY;
            return false;
        }
        true
    }

    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).expect("a ClOrdId holds UTF-8 by construction")
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Default for ClOrdId {
    fn default() -> ClOrdId {
        ClOrdId::EMPTY
    }
}

/// Truncating (see [`ClOrdId::truncated`]): for tests and tools; edges check lengths.
impl From<&str> for ClOrdId {
    fn from(s: &str) -> ClOrdId {
        ClOrdId::truncated(s)
    }
}

impl fmt::Debug for ClOrdId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ClOrdId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests;
