use super::*;

#[test]
fn roundtrip() {
    let run = run_tag(1_763_790_000_123);
    for (kind, k, slot) in [
        (KIND_NEW, 0, 0),
        (KIND_CANCEL, 12_345, 7),
        (KIND_REPLACE, u64::MAX, u32::MAX),
    ] {
        let id = ClOrdId::new(kind, &run, k, slot);
        assert_eq!(parse(&run, id.as_bytes()), Some(Parsed { kind, k, slot }));
    }
}

#[test]
fn foreign_ids_are_not_ours() {
    let run = run_tag(42);
    let other = run_tag(43);
    let id = ClOrdId::new(KIND_NEW, &other, 5, 1);
    assert_eq!(parse(&run, id.as_bytes()), None);
    assert_eq!(parse(&run, b"NONE"), None);
    assert_eq!(parse(&run, b""), None);
    let mut bad = ClOrdId::new(KIND_NEW, &run, 5, 1).as_bytes().to_vec();
    bad.push(b'x');
    assert_eq!(parse(&run, &bad), None);
}

#[test]
fn run_tags_are_six_base36_chars() {
    assert_eq!(&run_tag(0), b"000000");
    assert_eq!(&run_tag(35), b"00000z");
    assert_eq!(&run_tag(36), b"000010");
}
