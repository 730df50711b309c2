use super::*;

#[test]
fn symbol_roundtrip_and_limits() {
    assert_eq!(Symbol::new("ACME").unwrap().as_str(), "ACME");
    assert!(Symbol::new("").is_none());
    assert!(Symbol::new("A,B").is_none());
    assert!(Symbol::new("A B").is_none());
    assert!(Symbol::new(&"X".repeat(SYMBOL_LEN_MAX + 1)).is_none());
    assert_eq!(
        Symbol::new(&"X".repeat(SYMBOL_LEN_MAX))
            .unwrap()
            .as_str()
            .len(),
        SYMBOL_LEN_MAX
    );
}

#[test]
fn side_opposite() {
    assert_eq!(Side::Buy.opposite(), Side::Sell);
    assert_eq!(Side::Sell.opposite(), Side::Buy);
}
