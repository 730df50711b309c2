#[test]
fn equals_the_crc32c_crate_at_every_length_and_offset() {
    let data: Vec<u8> = (0..2000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for start in 0..8 {
        // Well past the short path's limit (512 bytes on x86-64).
        for len in 0..1100.min(data.len() - start) {
            let b = &data[start..start + len];
            assert_eq!(
                super::crc32c(b),
                crc32c::crc32c(b),
                "start {start} len {len}"
            );
        }
    }
    assert_eq!(super::crc32c(b"123456789"), 0xE306_9283);
}
