//! A tiny seedable random number generator for the order generators.
//!
//! Role: make every generated order stream a pure function of its seed (and of the replies the
//! bot has seen), so a run can be repeated and a test can pin the mix down.
//!
//! Never: reads OS randomness or a clock; uses floats (the normal distribution is the
//! Irwin-Hall sum of twelve 16-bit uniforms, integer arithmetic only).

/// SplitMix64: small, fast, well mixed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`; 0 when `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// True with probability `pct`/100.
    pub fn percent(&mut self, pct: u32) -> bool {
        self.below(100) < u64::from(pct)
    }

    /// Approximately normal with mean 0 and standard deviation `sd`, rounded to an integer.
    /// The sum of twelve uniforms on [0, 65536) has mean 393_210 and standard deviation
    /// ~65_536.
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
mod tests {
    use super::*;

    #[test]
    fn normal_has_the_asked_spread() {
        let mut r = Rng::new(7);
        let n = 100_000i64;
        let (mut sum, mut sq) = (0i64, 0i64);
        for _ in 0..n {
            let x = r.normal(10);
            sum += x;
            sq += x * x;
        }
        let mean_x100 = sum * 100 / n;
        let var = sq / n;
        assert!(mean_x100.abs() < 10, "mean {mean_x100}/100");
        assert!((90..=110).contains(&var), "variance {var}");
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = Rng::new(1);
        for n in 1..50 {
            assert!(r.below(n) < n);
        }
        assert_eq!(r.below(0), 0);
    }
}
