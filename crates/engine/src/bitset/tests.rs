use super::*;

fn naive_next(v: &[bool], i: usize) -> Option<usize> {
    (i..v.len()).find(|&j| v[j])
}
fn naive_prev(v: &[bool], i: usize) -> Option<usize> {
    (0..=i.min(v.len() - 1)).rev().find(|&j| v[j])
}

#[test]
fn matches_naive_on_pseudo_random_ops() {
    for len in [1usize, 63, 64, 65, 4096, 5000, 300_000] {
        let mut b = BitSet::new(len);
        let mut v = vec![false; len];
        let mut rng = types::XorShift64::new(0x1234_5678 ^ len as u64);
        for step in 0..3000 {
            let x = rng.next_u64();
            let i = (x as usize) % len;
            if step % 3 == 2 {
                b.clear(i);
                v[i] = false;
            } else {
                b.set(i);
                v[i] = true;
            }
            let q = (x >> 32) as usize % len;
            assert_eq!(b.next_ge(q), naive_next(&v, q), "len {len} q {q}");
            assert_eq!(b.prev_le(q), naive_prev(&v, q), "len {len} q {q}");
            assert_eq!(b.get(q), v[q]);
            assert_eq!(b.next_ge(len + q), None);
            assert_eq!(b.prev_le(len + q), naive_prev(&v, len - 1));
        }
        for i in 0..len {
            b.clear(i);
        }
        assert_eq!(b.next_ge(0), None);
        assert_eq!(b.prev_le(len - 1), None);
    }
}
