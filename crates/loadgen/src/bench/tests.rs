use super::{on_placed_thread, place_generator};

/// The nice value of the calling thread (field 19 of /proc/thread-self/stat).
fn my_nice() -> i32 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    // Fields after the command name (which ends with the last ')').
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    rest.split_whitespace().nth(16).unwrap().parse().unwrap()
}

#[test]
fn placement_changes_only_the_generator_thread() {
    let before = my_nice();
    let cpus = crate::noise::allowed_cpus().unwrap();
    let last = *cpus.last().unwrap();
    let (nice, mask) = std::thread::spawn(move || {
        place_generator(Some(last), Some(7)).unwrap();
        (my_nice(), crate::noise::allowed_cpus().unwrap())
    })
    .join()
    .unwrap();
    assert_eq!((nice, mask), (7, vec![last]));
    assert_eq!(my_nice(), before, "other threads keep theirs");
    assert_eq!(crate::noise::allowed_cpus().unwrap(), cpus);
    let e = place_generator(None, Some(-1)).unwrap_err();
    assert!(e.contains("0 to 19"), "{e}");
    let e = std::thread::spawn(|| place_generator(Some(100_000), None))
        .join()
        .unwrap()
        .unwrap_err();
    assert!(e.contains("may only run on CPUs"), "{e}");
    place_generator(None, None).unwrap();
}

#[test]
fn a_placed_run_leaves_the_caller_as_it_was() {
    let before = (my_nice(), crate::noise::allowed_cpus().unwrap());
    let last = *before.1.last().unwrap();
    let seen = on_placed_thread(Some(last), Some(9), || {
        Ok((my_nice(), crate::noise::allowed_cpus().unwrap()))
    })
    .unwrap();
    assert_eq!(seen, (9, vec![last]), "the run itself is placed");
    // What a sweep's next spawned server would inherit.
    assert_eq!((my_nice(), crate::noise::allowed_cpus().unwrap()), before);
    let e = on_placed_thread(None, Some(20), || Ok(())).unwrap_err();
    assert!(e.contains("0 to 19"), "{e}");
    let e = on_placed_thread::<()>(Some(last), None, || Err("from the run".into()));
    assert_eq!(e.unwrap_err(), "from the run");
    let unplaced = on_placed_thread(None, None, || Ok(std::thread::current().id())).unwrap();
    assert_eq!(
        unplaced,
        std::thread::current().id(),
        "no thread without placement"
    );
}
