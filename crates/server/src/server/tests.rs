use super::*;

/// CPUs in a `Cpus_allowed_list` line ("0-2,5").
fn cpu_list(s: &str) -> Vec<usize> {
    s.split(',')
        .flat_map(|r| match r.split_once('-') {
            Some((a, b)) => (a.trim().parse().unwrap()..=b.trim().parse().unwrap()).collect(),
            None => vec![r.trim().parse::<usize>().unwrap()],
        })
        .collect()
}

/// (thread name, allowed CPUs) of every thread of this process.
fn thread_masks() -> Vec<(String, Vec<usize>)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let (Ok(comm), Ok(status)) = (
            std::fs::read_to_string(t.path().join("comm")),
            std::fs::read_to_string(t.path().join("status")),
        ) else {
            continue;
        };
        if let Some(l) = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")) {
            let list = l.trim_start_matches("Cpus_allowed_list:").trim();
            out.push((comm.trim().to_string(), cpu_list(list)));
        }
    }
    out
}

#[test]
fn a_pinned_loop_owns_its_cpu_and_the_caller_gets_its_mask_back() {
    let allowed = sched_idle::allowed_cpus().unwrap();
    let cpu = *allowed.last().unwrap();
    let others = sched_idle::others(&allowed, cpu);
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::defaults();
    cfg.data_dir = dir.path().to_path_buf();
    cfg.listen = "127.0.0.1:0".parse().unwrap();
    cfg.cpu = Some(cpu);
    let lines = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let l2 = lines.clone();
    let log: Logger = Arc::new(move |m: &str| l2.lock().unwrap().push(m.to_string()));
    let server = Server::start(cfg.clone(), log).unwrap();
    assert_eq!(
        sched_idle::allowed_cpus().unwrap(),
        allowed,
        "caller restored"
    );
    // The loop pins itself as it starts, and the helper threads start on their own time
    // (other tests' servers in this process have threads of the same names): wait until
    // every one is there with its mask, or the deadline.
    let placed = |m: &[(String, Vec<usize>)]| {
        m.iter().any(|(n, c)| n == "rialto" && *c == [cpu])
            && ["snapshot", "snapshot-idle", "journal-sync"]
                .iter()
                .all(|name| m.iter().any(|(n, c)| n == name && *c == others))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let masks = loop {
        let m = thread_masks();
        if placed(&m) || Instant::now() > deadline {
            break m;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(
        masks.iter().any(|(n, c)| n == "rialto" && *c == [cpu]),
        "the loop on CPU {cpu}: {masks:?}"
    );
    for name in ["snapshot", "snapshot-idle", "journal-sync"] {
        assert!(
            masks.iter().any(|(n, c)| n == name && *c == others),
            "{name} on {others:?}: {masks:?}"
        );
    }
    server.shutdown().unwrap();
    let lines = lines.lock().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&format!("event loop pinned to CPU {cpu}"))),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("mean busy iteration")),
        "{lines:?}"
    );
    // A CPU this process may not use is refused with a reason.
    cfg.cpu = Some(1023);
    let e = Server::start(cfg, Arc::new(|_: &str| {})).err().unwrap();
    assert!(e.0.contains("may only run on CPUs"), "{e}");
    assert_eq!(sched_idle::allowed_cpus().unwrap(), allowed);
}
