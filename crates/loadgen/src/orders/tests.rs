use super::*;

#[test]
fn lifecycle_new_replace_cancel() {
    let mut o = BotOrders::new(2);
    let a = o.alloc().unwrap();
    o.on_new_sent(a, 10, 0, Side::Buy, 100, 5);
    assert_eq!(o.live_count(), 0);
    o.on_new_ack(a, 10);
    assert_eq!(o.live_count(), 1);
    o.on_request_sent(a, 11, Some((101, 4)));
    o.on_replaced(a, 11, Some(4));
    let s = *o.slot(a).unwrap();
    assert_eq!(
        (s.state, s.price_ticks, s.leaves_qty, s.cur_k),
        (SlotState::Live, 101, 4, 11)
    );
    // A stale report of the first ClOrdID no longer matches.
    o.on_gone(a, 10);
    assert_eq!(o.live_count(), 1);
    o.on_request_sent(a, 12, None);
    o.on_gone(a, 12);
    assert_eq!((o.live_count(), o.free_count()), (0, 2));
}

#[test]
fn late_cancel_reject_of_a_reused_slot_is_ignored() {
    let mut o = BotOrders::new(1);
    let a = o.alloc().unwrap();
    o.on_new_sent(a, 1, 0, Side::Sell, 100, 5);
    o.on_new_ack(a, 1);
    o.on_request_sent(a, 2, None);
    o.on_leaves(a, 1, 0); // filled before the cancel arrived
    let b = o.alloc().unwrap();
    assert_eq!(a, b);
    o.on_new_sent(b, 3, 0, Side::Sell, 100, 5);
    o.on_cancel_rejected(b, 2);
    assert_eq!(o.slot(b).unwrap().state, SlotState::PendingNew);
    assert!(o.alloc().is_none());
    o.clear();
    assert_eq!(o.free_count(), 1);
}
