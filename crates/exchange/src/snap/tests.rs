use super::*;

#[test]
fn snapshot_integers_round_trip_and_overlong_ones_are_refused() {
    let vals = [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX];
    let mut buf = Vec::new();
    let mut w = SnapWriter(&mut buf);
    for v in vals {
        w.u64(v);
    }
    assert_eq!(buf.len(), 1 + 1 + 1 + 2 + 2 + 6 + 10 + 10);
    let mut r = SnapReader(&buf);
    for v in vals {
        assert_eq!(r.u64(), Ok(v));
    }
    assert!(r.u64().is_err(), "nothing left");
    // 11 continuation bytes, a 10th byte above bit 63, and a number cut short.
    assert!(SnapReader(&[0x80; 11]).u64().is_err());
    let mut over = vec![0xff; 9];
    over.push(0x02);
    assert!(SnapReader(&over).u64().is_err());
    assert!(SnapReader(&[0x80, 0x80]).u64().is_err());
}
