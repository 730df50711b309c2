use super::order_index;

#[test]
fn order_numbers_come_back_from_this_runs_clordids_only() {
    assert_eq!(order_index(b"1f3a-42", b"1f3a"), Some(42));
    assert_eq!(order_index(b"1f3a-0", b"1f3a"), Some(0));
    assert_eq!(order_index(b"1f3b-42", b"1f3a"), None);
    assert_eq!(order_index(b"1f3a42", b"1f3a"), None);
    assert_eq!(order_index(b"1f3a-x", b"1f3a"), None);
}
