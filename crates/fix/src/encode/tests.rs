use super::*;

/// `write_u64` against `to_string`, around every length's edges.
#[test]
fn integers_format_as_std_does() {
    let mut v = vec![0u64, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 99_999_999];
    v.extend([100_000_000, 123_456_789_012, u64::MAX, u64::MAX - 1]);
    for p in 0..20 {
        let x = 10u64.pow(p);
        v.extend([x - 1, x, x + 1]);
    }
    for x in v {
        let mut out = b"x".to_vec();
        write_u64(&mut out, x);
        assert_eq!(&out[1..], x.to_string().as_bytes());
    }
}

#[test]
fn units_and_ratios_format_exactly() {
    let units = |u: i64, d: u32| {
        let mut o = Vec::new();
        write_units(&mut o, u, d);
        String::from_utf8(o).unwrap()
    };
    assert_eq!(units(1234, 2), "12.34");
    assert_eq!(units(1230, 2), "12.3");
    assert_eq!(units(1200, 2), "12");
    assert_eq!(units(5, 2), "0.05");
    assert_eq!(units(-5, 2), "-0.05");
    assert_eq!(units(12345, 3), "12.345");
    assert_eq!(units(12000, 3), "12");
    assert_eq!(units(7, 0), "7");
    let ratio = |n: i128, d: u64, dec: u32| {
        let mut o = Vec::new();
        write_ratio(&mut o, n, d, dec);
        String::from_utf8(o).unwrap()
    };
    assert_eq!(ratio(1025 * 3, 3, 2), "10.25");
    assert_eq!(ratio(1000 * 100 + 1001 * 200, 300, 2), "10.0066666667");
    assert_eq!(ratio(2, 3, 2), "0.0066666667");
    assert_eq!(ratio(1, 8, 2), "0.00125");
    assert_eq!(ratio(-1, 8, 2), "-0.00125");
    assert_eq!(ratio(500, 1, 2), "5");
}
