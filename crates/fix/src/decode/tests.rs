use super::*;

/// `find_soh` against a byte-by-byte search, from every start, in messages of every
/// length up to 40 whose bytes include the ones next to SOH (0x00, 0x02) and high ones,
/// where a word-at-a-time search could be misled by a borrow.
#[test]
fn find_soh_matches_a_byte_search() {
    let alphabet = [0x00u8, 0x01, 0x02, b'=', b'9', 0x7f, 0x80, 0x81, 0xfe, 0xff];
    let mut rng = types::XorShift64::new(0x2545_F491_4F6C_DD1D);
    for len in 0..=40usize {
        for _ in 0..200 {
            let msg: Vec<u8> = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                .collect();
            for at in 0..=len + 1 {
                let want = msg
                    .get(at..)
                    .and_then(|t| t.iter().position(|&b| b == SOH))
                    .map(|p| at + p);
                assert_eq!(find_soh(&msg, at), want, "{msg:?} from {at}");
            }
        }
    }
}
