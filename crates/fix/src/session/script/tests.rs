use super::*;
use types::XorShift64;

#[test]
fn random_scripts_keep_the_invariants() {
    let mut rng = XorShift64::new(29);
    for len in [0usize, 3, 30, 300, 3000] {
        for _ in 0..50 {
            let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            fuzz_session_script(&data);
        }
    }
}
