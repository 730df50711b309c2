use super::*;

fn r(i: u64) -> Report {
    Report {
        report_type: (i % 6) as u8,
        side: (i % 2) as u8,
        sequence_number: i,
        order_id: i * 3,
        price_ticks: -(i as i64),
        quantity: i as u32,
        maker_order_id: i + 7,
        taker_order_id: i + 9,
        ..Report::default()
    }
}

#[test]
fn reports_become_visible_in_batches_and_on_publish() {
    let ring = Ring::new(1);
    assert_eq!(ring.capacity(), 1024);
    let mut out = vec![Report::default(); 2048];
    for i in 0..(PUBLISH_EVERY as u64 - 1) {
        assert!(ring.push(&r(i), false));
    }
    assert_eq!(ring.drain(&mut out), 0, "not published before a full batch");
    assert!(ring.push(&r(PUBLISH_EVERY as u64 - 1), false));
    assert_eq!(ring.drain(&mut out), PUBLISH_EVERY);
    assert!(out[..PUBLISH_EVERY]
        .iter()
        .zip(0..)
        .all(|(o, i)| *o == r(i)));
    assert!(ring.push(&r(1000), false));
    assert_eq!(ring.drain(&mut out), 0);
    ring.publish();
    assert_eq!(ring.drain(&mut out), 1);
    assert_eq!(out[0], r(1000));
}

#[test]
fn a_full_ring_refuses_then_accepts_after_draining() {
    let ring = Ring::new(1024);
    for i in 0..1024 {
        assert!(ring.push(&r(i), false));
    }
    assert!(!ring.push(&r(5000), false), "full");
    let mut out = vec![Report::default(); 100];
    assert_eq!(ring.drain(&mut out), 100);
    assert!(ring.push(&r(5000), false));
    ring.publish();
    let mut all = vec![Report::default(); 2000];
    assert_eq!(ring.drain(&mut all), 925);
    assert_eq!(all[0], r(100));
    assert_eq!(all[924], r(5000));
}

#[test]
fn two_threads_move_every_report_in_order() {
    let ring = std::sync::Arc::new(Ring::new(1024));
    let n = 20_000u64;
    let consumer = {
        let ring = ring.clone();
        std::thread::spawn(move || {
            let mut got = 0u64;
            let mut out = vec![Report::default(); 256];
            while got < n {
                let k = ring.drain(&mut out);
                for o in &out[..k] {
                    assert_eq!(*o, r(got));
                    got += 1;
                }
                if k == 0 {
                    std::thread::yield_now();
                }
            }
        })
    };
    for i in 0..n {
        ring.push(&r(i), true);
    }
    ring.publish();
    consumer.join().unwrap();
}
