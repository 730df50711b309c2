use super::*;

#[test]
fn a_budget_allows_per_second_then_counts_what_it_left_out() {
    let mut b = Budget::default();
    let t0 = 5 * NS_PER_SEC;
    for _ in 0..PER_SECOND {
        assert_eq!(b.allow(t0), (true, 0));
    }
    assert_eq!(b.allow(t0 + 1), (false, 0));
    assert_eq!(b.allow(t0 + 2), (false, 0));
    // The next second reports the two left out, once.
    assert_eq!(b.allow(t0 + NS_PER_SEC), (true, 2));
    assert_eq!(b.allow(t0 + NS_PER_SEC), (true, 0));
}

#[test]
fn noted_keeps_the_first_four_events() {
    let mut n = Noted::default();
    assert!(n.is_empty());
    for seq in 1..=6 {
        n.push(SessionEvent::DuplicateIgnored { seq });
    }
    assert_eq!(n.n, 4);
    assert_eq!(n.ev[3], Some(SessionEvent::DuplicateIgnored { seq: 4 }));
}
