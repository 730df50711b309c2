//! Seeded pseudo-random generators for tests, benchmarks and simulated traders: one copy of
//! each, so every seeded stream in the workspace comes from here.
//!
//! Role: make a random stream a pure function of its seed. Three generators, because three
//! different sequences are pinned by what depends on them:
//! - [`XorShift64`] (Marsaglia's 13/7/17 xorshift): the tests' data (engine, loadgen, the crash
//!   loop), where a seed printed by a failure must replay the same stream.
//! - [`XorShift64Star`] (12/25/27 and a multiply): the engine example's mixed stream
//!   (`crates/engine/tests/common/mixed.rs`), whose event hash compares builds.
//! - [`SplitMix64`]: the order streams of `rialto bench engine` (the published event hash
//!   `7f9b98299f3152d3` for seed 1), of the load generator's bots and of the fuzz regressions;
//!   also the only one here with a normal distribution.
//!
//! Never: reads OS randomness or a clock, allocates, or uses floats. Not for anything that
//! must be unpredictable.

/// Marsaglia's xorshift64 (shifts 13, 7, 17): each call steps the state and returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XorShift64(u64);

impl XorShift64 {
    /// The state a seed of 0 is replaced by (0 is the one state xorshift never leaves).
    pub const ZERO_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

    /// A generator whose first output is the xorshift step of `seed` (0 counts as
    /// [`Self::ZERO_SEED`]).
    pub const fn new(seed: u64) -> XorShift64 {
        XorShift64(if seed == 0 { Self::ZERO_SEED } else { seed })
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// `next_u64() % n` (slightly biased for large `n`; the tests' streams are pinned to it);
    /// 0 when `n == 0`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64().checked_rem(n).unwrap_or(0)
    }
}

/// xorshift64* (shifts 12, 25, 27, then a multiply by `0x2545_F491_4F6C_DD1D`): the state
/// steps, the output is the state times the constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XorShift64Star(u64);

impl XorShift64Star {
    /// A generator from `seed` (0 counts as [`XorShift64::ZERO_SEED`]).
    pub const fn new(seed: u64) -> XorShift64Star {
        XorShift64Star(if seed == 0 {
            XorShift64::ZERO_SEED
        } else {
            seed
        })
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// SplitMix64: a Weyl sequence through a mixing function; any seed, 0 included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (the high half of a 128-bit product); 0 when `n == 0`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// True with probability `pct`/100.
    pub fn percent(&mut self, pct: u32) -> bool {
        self.below(100) < u64::from(pct)
    }

    /// Approximately normal with mean 0 and standard deviation `sd`, rounded to an integer:
    /// the Irwin-Hall sum of twelve 16-bit uniforms (mean 393,210, standard deviation about
    /// 65,536), integer arithmetic only.
    pub fn normal(&mut self, sd: i64) -> i64 {
        let mut sum: i64 = 0;
        for _ in 0..3 {
            let r = self.next_u64();
            for k in 0..4 {
                sum += ((r >> (16 * k)) & 0xffff) as i64;
            }
        }
        let scaled = i128::from(sum - 393_210) * i128::from(sd);
        let half = if scaled >= 0 { 32_768 } else { -32_768 };
        ((scaled + half) / 65_536) as i64
    }
}

#[cfg(test)]
mod tests;
