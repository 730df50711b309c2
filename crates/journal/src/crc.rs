//! CRC32C (Castagnoli) of a record: the journal's checksum, tuned for its small records.
//!
//! Role: every record is checksummed once when it is sealed and once per start when it is
//! read back, and records are small (tens to a few hundred bytes). The `crc32c` crate's
//! hardware path aligns its input byte by byte and prepares a 3-way interleave meant for long
//! buffers, which costs more than the checksum itself at these sizes. Here inputs shorter than
//! 512 bytes (`SHORT_MAX`) run one `crc32` instruction per 8 bytes and at most three for the rest
//! (unaligned 8-byte loads are free on x86-64); longer ones (snapshots, big records) go to the
//! crate's interleaved path.
//!
//! Never: gives a different value from `crc32c::crc32c` for any input (tested over every
//! length up to well past that limit); uses the hardware instruction without the CPU
//! having it (run-time detection, else the crate's portable path).
//!
//! Unsafe: one call of a `#[target_feature(enable = "sse4.2")]` function, made only after
//! `is_x86_feature_detected!("sse4.2")` returned true (see the SAFETY comment).

/// Inputs shorter than this take the one-instruction-per-word loop.
#[cfg(target_arch = "x86_64")]
const SHORT_MAX: usize = 512;

/// CRC32C of `data`; equal to `crc32c::crc32c(data)`.
#[inline]
pub fn crc32c(data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if data.len() < SHORT_MAX && std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: `short_sse42` only needs the SSE4.2 `crc32` instruction, which the
            // run-time check just above found on this CPU.
            #[allow(unsafe_code)]
            return unsafe { short_sse42(data) };
        }
    }
    crc32c::crc32c(data)
}

/// CRC32C of `data` with the SSE4.2 `crc32` instruction: one per 8 bytes, then one each for
/// a remaining 4, 2 and 1 bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
fn short_sse42(data: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u16, _mm_crc32_u32, _mm_crc32_u64, _mm_crc32_u8};
    let mut words = data.chunks_exact(8);
    let mut crc = u64::from(u32::MAX);
    for w in &mut words {
        crc = _mm_crc32_u64(crc, u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let mut crc = crc as u32;
    let mut rest = words.remainder();
    if let Some((w, r)) = rest.split_first_chunk::<4>() {
        crc = _mm_crc32_u32(crc, u32::from_le_bytes(*w));
        rest = r;
    }
    if let Some((w, r)) = rest.split_first_chunk::<2>() {
        crc = _mm_crc32_u16(crc, u16::from_le_bytes(*w));
        rest = r;
    }
    if let Some(&b) = rest.first() {
        crc = _mm_crc32_u8(crc, b);
    }
    !crc
}

#[cfg(test)]
mod tests;
