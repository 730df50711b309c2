use super::*;

const MAKERS: usize = 2;
const TAKERS: usize = 1;
/// Bot index of the taker (after the makers).
const TAKER_BOT: usize = MAKERS;

fn report<'a>(cl: &'a [u8], exec_type: u8, leaves: u64, last_qty: Option<u64>) -> Report<'a> {
    Report {
        msg_type: b'8',
        cl_ord_id: cl,
        orig_cl_ord_id: None,
        exec_type,
        symbol: b"ACME",
        side: b'1',
        leaves_qty: Some(leaves),
        last_qty,
        last_px: None,
        text: None,
        exec_id: b"",
    }
}

#[test]
fn an_instrument_settles_when_the_taker_is_done_and_both_halves_are_read() {
    let mut f = Floor::new(2, MAKERS, TAKERS);
    assert!(f.settled(0) && f.settled(1));
    f.taker_sent(0, 0);
    assert!(!f.settled(0) && f.settled(1));
    // Ack, a partial fill, then the IOC's remainder canceled: done, but the maker's half of
    // the fill is not read yet.
    f.on_report(TAKER_BOT, Some(0), &report(b"Nrun0001.0", b'0', 30, None));
    f.on_report(
        TAKER_BOT,
        Some(0),
        &report(b"Nrun0001.0", b'F', 20, Some(10)),
    );
    assert!(!f.settled(0));
    f.on_report(TAKER_BOT, Some(0), &report(b"Nrun0001.0", b'4', 0, None));
    assert!(!f.settled(0));
    f.on_report(1, Some(0), &report(b"Nrun0007.3", b'F', 90, Some(10)));
    assert!(f.settled(0));
}

#[test]
fn a_maker_half_read_first_also_waits_for_the_taker() {
    let mut f = Floor::new(1, MAKERS, TAKERS);
    f.taker_sent(0, 0);
    f.on_report(0, Some(0), &report(b"Nrun0007.3", b'F', 90, Some(25)));
    assert!(!f.settled(0));
    // Filled to the end: the fill is the final report; a later one of the same order is
    // not taken for the next order's.
    f.on_report(
        TAKER_BOT,
        Some(0),
        &report(b"Nrun0001.0", b'F', 0, Some(25)),
    );
    assert!(f.settled(0));
    f.taker_sent(0, 0);
    f.on_report(TAKER_BOT, Some(0), &report(b"Nrun0001.0", b'4', 0, None));
    assert!(
        !f.settled(0),
        "a repeated final report finished another order"
    );
    // A rejected order is done too.
    f.on_report(TAKER_BOT, Some(0), &report(b"Nrun0002.0", b'8', 0, None));
    assert!(f.settled(0));
}

#[test]
fn the_taker_queue_pairs_final_reports_with_instruments_in_order() {
    let mut f = Floor::new(2, MAKERS, TAKERS);
    f.taker_sent(0, 1);
    f.taker_sent(0, 0);
    f.on_report(TAKER_BOT, Some(1), &report(b"Nrun0001.0", b'4', 0, None));
    assert!(f.settled(1) && !f.settled(0));
    // A final report without its instrument still finishes the next order in line.
    f.on_report(TAKER_BOT, None, &report(b"Nrun0002.0", b'8', 0, None));
    assert!(f.settled(0));
}

#[test]
fn makers_never_cross_one_another_or_themselves() {
    let mut f = Floor::new(1, MAKERS, TAKERS);
    assert_eq!(f.uncrossed(0, Side::Buy, 97), Some(97));
    f.add_quote(1, 0, Side::Sell, 100);
    f.add_quote(1, 0, Side::Sell, 102);
    assert_eq!(f.uncrossed(0, Side::Buy, 101), Some(99));
    assert_eq!(f.uncrossed(0, Side::Buy, 98), Some(98));
    f.add_quote(0, 0, Side::Buy, 99);
    f.add_quote(0, 0, Side::Buy, 95);
    assert_eq!(f.uncrossed(0, Side::Sell, 97), Some(100));
    assert_eq!(f.uncrossed(0, Side::Sell, 103), Some(103));
    // Asks at one tick: no bid is possible.
    f.add_quote(0, 0, Side::Sell, 1);
    assert_eq!(f.uncrossed(0, Side::Buy, 5), None);
}

#[test]
fn maker_quotes_cover_orders_resting_and_on_their_way() {
    let mut f = Floor::new(1, MAKERS, TAKERS);
    let mut o = BotOrders::new(4);
    o.alloc_at(1);
    o.on_new_sent(1, 1, 0, Side::Sell, 105, 50);
    o.alloc_at(2);
    o.on_new_sent(2, 2, 0, Side::Sell, 110, 50);
    o.on_new_ack(2, 2);
    o.on_request_sent(2, 3, Some((103, 60)));
    f.add_quote(0, 0, Side::Sell, 90);
    f.maker_quotes(0, &o);
    // The ask at 90 is gone; the lowest of 105 (new), 110 and 103 (a replace on its way) stays.
    assert_eq!(f.uncrossed(0, Side::Buy, 104), Some(102));
    o.on_gone(1, 1);
    o.on_replaced(2, 3, Some(60));
    f.maker_quotes(0, &o);
    assert_eq!(f.uncrossed(0, Side::Buy, 104), Some(102));
    o.on_leaves(2, 3, 0);
    f.maker_quotes(0, &o);
    assert_eq!(f.uncrossed(0, Side::Buy, 104), Some(104));
}

#[test]
fn an_imbalance_that_stays_a_second_is_a_trade_with_an_outside_party() {
    let mut f = Floor::new(1, MAKERS, TAKERS);
    // An outside client's order hits a maker: the maker's half has no taker half.
    f.on_report(0, Some(0), &report(b"Nrun0007.3", b'F', 90, Some(10)));
    assert!(!f.settled(0));
    f.once_a_second();
    assert!(!f.settled(0), "balanced at the first look");
    f.once_a_second();
    assert!(f.settled(0));
    assert_eq!(f.outside_trades, 1);
    // An imbalance that moves, or one with a taker order on its way, is left alone.
    f.taker_sent(0, 0);
    f.on_report(TAKER_BOT, Some(0), &report(b"Nrun0001.0", b'F', 5, Some(5)));
    f.once_a_second();
    f.once_a_second();
    assert!(!f.settled(0));
    assert_eq!(f.outside_trades, 1);
}
