use super::*;

#[test]
fn hash_is_fixed_and_order_sensitive() {
    let a = Event::Rejected {
        id: 1,
        reason: RejectReason::UnknownOrder,
    };
    let b = Event::MassCanceled {
        account: 1,
        count: 0,
    };
    let mut h1 = EventHasher::new();
    h1.on_event(&a);
    h1.on_event(&b);
    let mut h2 = EventHasher::new();
    h2.on_event(&b);
    h2.on_event(&a);
    assert_ne!(h1.finish(), h2.finish());
    assert_eq!(h1.events(), 2);
    // Pinned: the definition in the module header must not drift silently.
    assert_eq!(EventHasher::new().finish(), {
        let mut z: u64 = 0x5269_616c_746f;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    });
}
