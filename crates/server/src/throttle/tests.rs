use super::*;

fn throttle(orders: u32, cancels: u32, messages: u32, logout: u32) -> Throttle {
    Throttle {
        orders_per_sec: orders,
        cancels_per_sec: cancels,
        messages_per_sec: messages,
        logout_messages_per_sec: logout,
    }
}

#[test]
fn a_rate_allows_a_seconds_burst_then_the_rate() {
    let mut r = Rate::new(100);
    let t0 = 5 * SECOND_NS;
    let burst = (0..1000).filter(|_| r.allow(t0)).count();
    assert_eq!(burst, 100);
    // 10 ms later: one more (100 a second is one per 10 ms).
    assert!(r.allow(t0 + 10_000_000));
    assert!(!r.allow(t0 + 10_000_000));
    // After a quiet second the full burst is back.
    let later = t0 + 3 * SECOND_NS;
    assert_eq!((0..1000).filter(|_| r.allow(later)).count(), 100);
}

#[test]
fn zero_means_no_limit() {
    let mut r = Rate::new(0);
    assert!((0..1_000_000).all(|_| r.allow(7)));
}

#[test]
fn each_kind_has_its_own_limit_and_all_share_the_message_limit() {
    let mut g = Guard::new(&throttle(3, 2, 10, 1000));
    let now = SECOND_NS;
    let v: Vec<Verdict> = (0..5).map(|_| g.check(Class::Order, now)).collect();
    assert_eq!(v[..3], [Verdict::Pass; 3]);
    assert_eq!(v[3..], [Verdict::Orders(3); 2]);
    assert_eq!(g.check(Class::Cancel, now), Verdict::Pass);
    assert_eq!(g.check(Class::Cancel, now), Verdict::Pass);
    assert_eq!(g.check(Class::Cancel, now), Verdict::Cancels(2));
    // 5 counted against the message limit of 10 so far: 5 more status requests pass.
    let other: Vec<Verdict> = (0..6).map(|_| g.check(Class::OtherApp, now)).collect();
    assert_eq!(other[..5], [Verdict::Pass; 5]);
    assert_eq!(other[5], Verdict::Messages(10));
    // Session-level messages always pass.
    assert_eq!(g.check(Class::Session, now), Verdict::Pass);
}

#[test]
fn a_refused_order_leaves_room_for_later_ones() {
    // Message limit reached by status requests: an order is refused without using the
    // order limit.
    let mut g = Guard::new(&throttle(2, 2, 2, 1000));
    let now = SECOND_NS;
    assert_eq!(g.check(Class::OtherApp, now), Verdict::Pass);
    assert_eq!(g.check(Class::OtherApp, now), Verdict::Pass);
    assert_eq!(g.check(Class::Order, now), Verdict::Messages(2));
    let next = now + SECOND_NS;
    assert_eq!(g.check(Class::Order, next), Verdict::Pass);
    assert_eq!(g.check(Class::Order, next), Verdict::Pass);
}

#[test]
fn over_the_logout_limit_every_message_says_logout() {
    let mut g = Guard::new(&throttle(0, 0, 0, 5));
    let now = SECOND_NS;
    for _ in 0..5 {
        assert_eq!(g.check(Class::Session, now), Verdict::Pass);
    }
    assert_eq!(g.check(Class::Order, now), Verdict::Logout(5));
}
