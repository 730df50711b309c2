/// The hint changes no contents, on a buffer large enough to cover 2 MiB pages and on
/// one too small for a page; an empty `Vec` is left usable.
#[test]
fn huge_and_populated_changes_nothing() {
    for n in [100usize, 5 << 20] {
        let mut v: Vec<u8> = Vec::with_capacity(n + 12_345);
        v.extend((0..n).map(|i| (i * 7) as u8));
        super::huge_and_populated(&v);
        assert!(v.iter().enumerate().all(|(i, &b)| b == (i * 7) as u8));
        v.extend(std::iter::repeat_n(9u8, 12_345));
        assert!(v[n..].iter().all(|&b| b == 9));
    }
    let zeroed = vec![0u64; 1 << 20];
    super::huge_and_populated(&zeroed);
    assert!(zeroed.iter().all(|&x| x == 0));
    let mut empty: Vec<u64> = Vec::new();
    super::huge_and_populated(&empty);
    empty.push(1);
    assert_eq!(empty, [1]);
}

/// A plan gathered for a table and run on another thread later changes no contents,
/// covers whole pages inside the allocation only, and one for nothing does nothing.
#[test]
fn a_populate_plan_run_elsewhere_changes_nothing() {
    let v: Vec<u8> = (0..(5usize << 20) + 777).map(|i| (i * 11) as u8).collect();
    let mut plan = super::Populate::default();
    super::huge_prefix(&v, v.capacity());
    plan.add_prefix(&v, v.capacity());
    let empty: Vec<u64> = Vec::new();
    plan.add_prefix(&empty, 10);
    assert!(plan.bytes() <= v.capacity());
    assert!(plan.bytes() + 2 * 4096 > v.capacity());
    std::thread::scope(|s| {
        s.spawn(move || plan.run());
    });
    assert!(v.iter().enumerate().all(|(i, &b)| b == (i * 11) as u8));
    super::Populate::default().run();
}

/// Running a plan makes every page of an untouched table resident (the page-table state
/// `mincore` reports), which it was not before: the plan does what recovery relies on it
/// for, not only nothing harmful.
#[cfg(target_os = "linux")]
#[test]
#[allow(unsafe_code)]
fn a_populate_plan_makes_an_untouched_table_resident() {
    const PAGE: usize = 4096;
    // 64 MiB: above glibc's largest mmap threshold, so a fresh mapping nobody has touched.
    let v: Vec<u8> = Vec::with_capacity(64 << 20);
    let start = (v.as_ptr() as usize + PAGE - 1) & !(PAGE - 1);
    let end = (v.as_ptr() as usize + v.capacity()) & !(PAGE - 1);
    let pages = (end - start) / PAGE;
    let resident = || {
        let mut map = vec![0u8; pages];
        // SAFETY: mincore only reads the page tables of `start..end`, a page-aligned range
        // inside the allocation `v` owns, and writes one byte per page into `map`, which
        // has exactly that many.
        let rc =
            unsafe { libc::mincore(start as *mut libc::c_void, end - start, map.as_mut_ptr()) };
        assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
        map.iter().filter(|&&b| b & 1 == 1).count()
    };
    let before = resident();
    let mut plan = super::Populate::default();
    plan.add_prefix(&v, v.capacity());
    assert_eq!(plan.bytes(), end - start);
    std::thread::scope(|s| {
        s.spawn(move || plan.run());
    });
    let after = resident();
    assert!(before < pages, "{before} of {pages} pages resident before");
    assert_eq!(after, pages, "{after} of {pages} pages resident after");
}

/// Populating a prefix changes no contents, and a prefix longer than the allocation is
/// cut to it (a hint beyond the capacity would touch memory `v` does not own).
#[test]
fn huge_and_populated_prefix_changes_nothing_and_stays_inside() {
    let v: Vec<u8> = (0..(6usize << 20)).map(|i| (i * 13) as u8).collect();
    for n in [0, 1, 4096, 3 << 20, v.capacity(), usize::MAX / 2] {
        super::huge_and_populated_prefix(&v, n);
        assert!(v.iter().enumerate().all(|(i, &b)| b == (i * 13) as u8));
    }
    let zeroed = vec![0u32; 3 << 20];
    super::huge_and_populated_prefix(&zeroed, 1 << 20);
    assert!(zeroed.iter().all(|&x| x == 0));
}
