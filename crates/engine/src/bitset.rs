//! A hierarchical bitset over price-ladder indices: which price levels are non-empty.
//!
//! Role: "next non-empty level at or above / at or below i" in a few word operations (one per
//! layer of 64-way fan-out), so the best price is found again quickly after the best level
//! empties, however far away the next one is.
//!
//! Never: allocates after construction.
//!
//! Invariants: a bit in layer k+1 is set iff the corresponding 64-bit word of layer k is
//! non-zero; layer 0 holds one bit per index. All layers live in one `Vec` (layer 0 first).

#[derive(Clone, Debug)]
pub(crate) struct BitSet {
    words: Vec<u64>,
    /// Start of each layer in `words`, and the number of words in it.
    starts: [usize; 8],
    lens: [usize; 8],
    layers: usize,
    len: usize,
}

impl BitSet {
    /// A bitset for indices `0..len`, all clear.
    pub(crate) fn new(len: usize) -> BitSet {
        let mut starts = [0; 8];
        let mut lens = [0; 8];
        let mut layers = 0;
        let mut total = 0;
        let mut bits = len.max(1);
        loop {
            let words = bits.div_ceil(64);
            starts[layers] = total;
            lens[layers] = words;
            total += words;
            layers += 1;
            if words == 1 {
                break;
            }
            bits = words;
        }
        BitSet {
            words: vec![0; total],
            starts,
            lens,
            layers,
            len,
        }
    }

    /// Clears every bit.
    pub(crate) fn clear_all(&mut self) {
        self.words.fill(0);
    }

    #[inline]
    pub(crate) fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i >> 6] & (1u64 << (i & 63)) != 0
    }

    #[inline]
    pub(crate) fn set(&mut self, i: usize) {
        let w = &mut self.words[i >> 6];
        let was = *w;
        *w = was | (1u64 << (i & 63));
        if was == 0 {
            self.set_upper(i >> 6);
        }
    }

    /// Sets the summary bits above leaf word `i` (layer 0 word `i` just became non-empty).
    #[inline]
    fn set_upper(&mut self, mut i: usize) {
        for k in 1..self.layers {
            let w = &mut self.words[self.starts[k] + (i >> 6)];
            let was = *w;
            *w = was | (1u64 << (i & 63));
            if was != 0 {
                return;
            }
            i >>= 6;
        }
    }

    #[inline]
    pub(crate) fn clear(&mut self, i: usize) {
        let w = &mut self.words[i >> 6];
        *w &= !(1u64 << (i & 63));
        if *w == 0 {
            self.clear_upper(i >> 6);
        }
    }

    /// Clears the summary bits above leaf word `i` (layer 0 word `i` just became empty).
    #[inline]
    fn clear_upper(&mut self, mut i: usize) {
        for k in 1..self.layers {
            let w = &mut self.words[self.starts[k] + (i >> 6)];
            *w &= !(1u64 << (i & 63));
            if *w != 0 {
                return;
            }
            i >>= 6;
        }
    }

    /// The smallest set index `>= i`.
    #[inline]
    pub(crate) fn next_ge(&self, i: usize) -> Option<usize> {
        // Fast path: within the same leaf word.
        if let Some(&word) = self.words[..self.lens[0]].get(i >> 6) {
            let m = word & (!0u64 << (i & 63));
            if m != 0 {
                return Some((i & !63) | m.trailing_zeros() as usize);
            }
        }
        self.next_ge_slow(i)
    }

    /// `next_ge` after leaf word `i >> 6` (masked from `i`) turned out empty.
    #[inline]
    fn next_ge_slow(&self, i: usize) -> Option<usize> {
        let w = i >> 6;
        // The next leaf word: the common case in a sparse book.
        if w + 1 >= self.lens[0] {
            return None;
        }
        let m = self.words[w + 1];
        if m != 0 {
            return Some(((w + 1) << 6) | m.trailing_zeros() as usize);
        }
        // Climb: look for a non-empty leaf word after `w + 1`.
        let mut layer = 1;
        let mut idx = w + 2;
        loop {
            if layer == self.layers {
                return None;
            }
            let w = idx >> 6;
            if w >= self.lens[layer] {
                return None;
            }
            let m = self.words[self.starts[layer] + w] & (!0u64 << (idx & 63));
            if m != 0 {
                idx = (w << 6) | m.trailing_zeros() as usize;
                break;
            }
            layer += 1;
            idx = w + 1;
        }
        while layer > 0 {
            layer -= 1;
            idx = (idx << 6) | self.words[self.starts[layer] + idx].trailing_zeros() as usize;
        }
        Some(idx)
    }

    /// The largest set index `<= i`.
    #[inline]
    pub(crate) fn prev_le(&self, i: usize) -> Option<usize> {
        let i = i.min(self.len.saturating_sub(1));
        // Fast path: within the same leaf word.
        let m = self.words[i >> 6] & (!0u64 >> (63 - (i & 63)));
        if m != 0 {
            return Some((i & !63) | (63 - m.leading_zeros() as usize));
        }
        self.prev_le_slow(i)
    }

    /// `prev_le` after leaf word `i >> 6` (masked from `i`, `i < len`) turned out empty.
    #[inline]
    fn prev_le_slow(&self, i: usize) -> Option<usize> {
        let w = i >> 6;
        // The previous leaf word: the common case in a sparse book.
        if w == 0 {
            return None;
        }
        let m = self.words[w - 1];
        if m != 0 {
            return Some(((w - 1) << 6) | (63 - m.leading_zeros() as usize));
        }
        if w == 1 {
            return None;
        }
        // Climb: look for a non-empty leaf word before `w - 1`.
        let mut layer = 1;
        let mut idx = w - 2;
        loop {
            if layer == self.layers {
                return None;
            }
            let w = idx >> 6;
            let m = self.words[self.starts[layer] + w] & (!0u64 >> (63 - (idx & 63)));
            if m != 0 {
                idx = (w << 6) | (63 - m.leading_zeros() as usize);
                break;
            }
            layer += 1;
            if w == 0 {
                return None;
            }
            idx = w - 1;
        }
        while layer > 0 {
            layer -= 1;
            let word = self.words[self.starts[layer] + idx];
            idx = (idx << 6) | (63 - word.leading_zeros() as usize);
        }
        Some(idx)
    }
}

#[cfg(test)]
mod tests;
