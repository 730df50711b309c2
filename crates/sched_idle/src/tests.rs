#[test]
fn steal_is_read_per_cpu_and_in_all() {
    let stat = "cpu  10 0 5 900 1 0 2 37 0 0\ncpu0 5 0 2 450 1 0 1 30 0 0\ncpu1 5 0 3 450 0 0 1 7 0 0\nintr 12345\n";
    assert_eq!(super::parse_steal_ms(stat, None), Some(370));
    assert_eq!(super::parse_steal_ms(stat, Some(0)), Some(300));
    assert_eq!(super::parse_steal_ms(stat, Some(1)), Some(70));
    assert_eq!(super::parse_steal_ms(stat, Some(2)), None, "no such CPU");
    assert_eq!(
        super::parse_steal_ms("cpu  1 2 3\n", None),
        None,
        "an old kernel's line"
    );
    // This machine's own figures read, and only grow.
    if let (Some(a), Some(b)) = (super::steal_ms(None), super::steal_ms(None)) {
        assert!(b >= a);
    }
}
#[test]
fn pinning_changes_only_the_calling_thread() {
    let allowed = super::allowed_cpus().unwrap();
    assert!(!allowed.is_empty());
    let last = *allowed.last().unwrap();
    let a2 = allowed.clone();
    let seen = std::thread::spawn(move || {
        super::pin(&[last]).unwrap();
        let mine = super::allowed_cpus().unwrap();
        // A thread spawned now inherits the mask.
        let child = std::thread::spawn(super::allowed_cpus)
            .join()
            .unwrap()
            .unwrap();
        super::pin(&a2).unwrap();
        (mine, child)
    })
    .join()
    .unwrap();
    assert_eq!(seen, (vec![last], vec![last]));
    assert_eq!(
        super::allowed_cpus().unwrap(),
        allowed,
        "the test thread kept its mask"
    );
    assert!(super::pin(&[]).is_err());
    assert!(super::pin(&[usize::MAX]).is_err());
    assert_eq!(super::others(&[0, 1], 0), vec![1]);
    assert_eq!(super::others(&[0], 0), vec![0]);
    assert_eq!(super::others(&[0, 1, 2], 1), vec![0, 2]);
}

#[test]
fn only_the_named_thread_changes_class() {
    assert!(!super::is_idle());
    let (tx, rx) = std::sync::mpsc::channel();
    let (back_tx, back_rx) = std::sync::mpsc::channel();
    let t = std::thread::spawn(move || {
        super::enter().unwrap();
        tx.send((super::current_tid(), super::is_idle())).unwrap();
        // Wait until the test thread tried to move us back.
        let lifted: bool = back_rx.recv().unwrap();
        (super::is_idle(), lifted)
    });
    let (tid, idle) = rx.recv().unwrap();
    assert!(idle, "the spawned thread entered SCHED_IDLE");
    assert!(!super::is_idle(), "the test thread did not");
    // Leaving SCHED_IDLE needs a privilege: either it works, or it says so.
    let lifted = match super::set_normal(tid) {
        Ok(()) => true,
        Err(e) => {
            assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}");
            false
        }
    };
    back_tx.send(lifted).unwrap();
    let (still_idle, lifted) = t.join().unwrap();
    assert_eq!(still_idle, !lifted);
    assert!(super::set_normal(-5).is_err(), "no such thread");
}
