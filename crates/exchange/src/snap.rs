//! The snapshot encoding shared by the exchange and its edges: LEB128 integers (most values
//! in a snapshot are small, so this keeps it a fraction of fixed 8-byte integers), length-
//! prefixed byte strings, and the hash that compares replicas.
//!
//! Never: panics on any input (a reader error says what was wrong).

/// Writes a snapshot: LEB128 integers and length-prefixed byte strings.
pub struct SnapWriter<'a>(pub &'a mut Vec<u8>);
impl SnapWriter<'_> {
    /// LEB128: 7 bits per byte, low first; most values in the snapshot are small, so this
    /// keeps it (and the time to write it) a fraction of fixed 8-byte integers.
    pub fn u64(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
}

/// Reads what [`SnapWriter`] wrote; every error names what was wrong.
pub struct SnapReader<'a>(pub &'a [u8]);
impl<'a> SnapReader<'a> {
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("snapshot: truncated".into());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    pub fn fixed_u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    /// LEB128 (see `SnapWriter::u64`); more than 64 bits or an unterminated number is an error.
    pub fn u64(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            let part = (b & 0x7f) as u64;
            if shift == 63 && part > 1 {
                return Err("snapshot: integer overflows 64 bits".into());
            }
            v |= part << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("snapshot: integer longer than 10 bytes".into())
    }
    pub fn count(&mut self) -> Result<u64, String> {
        let n = self.u64()?;
        if n > self.0.len() as u64 {
            return Err("snapshot: count larger than the data".into());
        }
        Ok(n)
    }
    pub fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u64()?;
        if n > self.0.len() as u64 {
            return Err("snapshot: truncated".into());
        }
        self.take(n as usize)
    }
}

/// 64-bit hash of a byte string, 8 bytes per step (a multiply-xorshift mix; not
/// cryptographic: it detects divergence between replicas of our own state, nothing more).
pub fn hash_bytes(b: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ (b.len() as u64).wrapping_mul(K);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ v).wrapping_mul(K);
        h ^= h >> 29;
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ (h >> 32)
}

#[cfg(test)]
mod tests;
