use super::*;

fn cfg(percent: u32, limits: Vec<FirmLimits>) -> Config {
    let mut c = Config::new(Vec::new(), vec![vec![1, 2], vec![3]], 1000);
    c.firm_capacity_percent = percent;
    c.firm_limits = limits;
    c
}

#[test]
fn the_smaller_of_a_firms_own_limit_and_its_share_applies() {
    let own = FirmLimits {
        max_open_orders: Some(300),
        max_open_orders_per_account: Some(2),
        ..FirmLimits::default()
    };
    let mut o = OpenOrders::new(&cfg(25, vec![own]));
    assert_eq!(o.firm_max, vec![250, 250]);
    assert_eq!(o.account_max, vec![2, 2, u64::MAX]);
    o.add(1, 1);
    o.add(1, 2);
    assert_eq!(
        o.check(1),
        Some(Reject::AccountOpenOrderLimit {
            account: 1,
            limit: 2
        })
    );
    assert_eq!(o.check(2), None, "the other account has room");
    for id in 3..251 {
        o.add(3, id);
    }
    assert_eq!(o.firm(1), 248);
    let o2 = OpenOrders::new(&cfg(100, vec![own]));
    assert_eq!(o2.firm_max, vec![300, 1000]);
    o.remove(1);
    assert_eq!((o.firm(0), o.account(1), o.account(2)), (1, 1, 0));
    assert_eq!(o.check(99), None, "an unknown account is refused elsewhere");
}

/// `first_live` is the id that took an account from no live order to one, and mass
/// cancels start at the smallest of their accounts'.
#[test]
fn first_live_order_ids() {
    let mut o = OpenOrders::new(&cfg(100, Vec::new()));
    assert_eq!(o.first_live_of(&[1, 2, 3]), None);
    o.add(2, 10);
    o.add(2, 11);
    o.add(1, 12);
    assert_eq!(o.first_live_of(&[1, 2]), Some(10));
    assert_eq!(o.first_live_of(&[1]), Some(12));
    o.remove(2);
    o.remove(2);
    assert_eq!(
        o.first_live_of(&[1, 2]),
        Some(12),
        "account 2 has none left"
    );
    o.add(2, 20);
    assert_eq!(o.first_live_of(&[2, 3, 99]), Some(20));
    o.raise_first_live(&[1], 15);
    assert_eq!(o.first_live_of(&[1]), Some(15));
    o.raise_first_live(&[1], 13);
    assert_eq!(o.first_live_of(&[1]), Some(15), "never lowered");
    o.raise_first_live(&[1], 12);
    assert_eq!(o.first_live_hints().collect::<Vec<_>>(), vec![15, 20, 0]);
    assert!(o.restore_first_live(&[16, 20, 0], &[15, 20, 0]).is_err());
    assert!(o.restore_first_live(&[5, 20], &[12, 20]).is_err());
    assert_eq!(o.restore_first_live(&[5, 20, 7], &[12, 20, 0]), Ok(()));
    assert_eq!(o.first_live_hints().collect::<Vec<_>>(), vec![5, 20, 0]);
}
