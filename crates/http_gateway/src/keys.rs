//! API keys: a random token shown once, and the SHA-256 the configuration keeps.

use sha2::{Digest, Sha256};

/// A new token (`rk_` and 64 hex digits of 32 random bytes) and its SHA-256.
pub fn new_token() -> Result<(String, [u8; 32]), String> {
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).map_err(|e| format!("no random bytes: {e}"))?;
    let token = format!("rk_{}", hex(&raw));
    Ok((token.clone(), sha256(&token)))
}

/// The SHA-256 of a token.
pub fn sha256(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Lowercase hex of `b`.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The 32 bytes of a 64-digit hex string.
pub fn parse_sha256(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_their_hashes_parse_back() {
        let (a, ha) = new_token().unwrap();
        let (b, _) = new_token().unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with("rk_") && a.len() == 67);
        assert_eq!(parse_sha256(&hex(&ha)), Some(ha));
        assert_eq!(sha256(&a), ha);
        assert_eq!(parse_sha256("zz"), None);
    }
}
