use super::*;

#[test]
fn ids_follow_first_appearance_and_sort_by_name() {
    let mut t = SymbolTable::new();
    let z = t.intern(Symbol::new("ZED").unwrap()).unwrap();
    let a = t.intern(Symbol::new("ACME").unwrap()).unwrap();
    assert_eq!((z, a), (0, 1));
    assert_eq!(t.intern(Symbol::new("ZED").unwrap()).unwrap(), 0);
    assert_eq!(t.ids_by_name(), vec![1, 0]);
    assert_eq!(t.name(1), "ACME");
    assert_eq!(t.name(7), "?");
    assert!(t
        .insert_with_grid(Symbol::new("ACME").unwrap(), 1, 1)
        .is_err());
}
