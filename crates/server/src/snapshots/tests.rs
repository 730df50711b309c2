use super::*;
use crate::record::{Record, KIND_RECORD};
use journal::{JournalConfig, JournalWriter};
use std::path::Path;

/// A journal of `n` timer ticks in `dir`, and a replica job over it.
fn job(dir: &Path, n: u64) -> Leg {
    let (mut j, _) = JournalWriter::open(dir, JournalConfig::default()).unwrap();
    let mut enc = Vec::new();
    Record::Tick.encode(&mut enc);
    for seq in 1..=n {
        assert_eq!(j.append(KIND_RECORD, seq, &enc).unwrap(), seq);
    }
    j.commit(journal::Durability::Process).unwrap();
    let node = Node::new(&Config::defaults(), Backing::Lazy);
    Leg {
        follower: Follower::new(node, journal::JournalDir::new(dir)),
        upto: n,
        job: Some(n),
        bytes: Vec::new(),
    }
}

#[test]
fn the_replica_follows_in_stretches_publishes_its_cpu_and_paces_itself_when_boosted() {
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let state = HelperState::default();
    let mut leg = job(dir.path(), 3000);
    // Stretches of a growing target, each resuming where the last one stopped.
    for upto in [1000, 1001, 2500] {
        leg.upto = upto;
        assert_eq!(forward(&mut leg, &stop, &state).unwrap(), FollowEnd::Done);
        assert_eq!(leg.follower.last_seq(), upto);
    }
    assert!(
        state.cpu_ns.load(Ordering::Relaxed) > 0,
        "CPU time published"
    );
    assert_eq!(state.progress.load(Ordering::Relaxed), 2500);
    assert_eq!(
        state.paced.load(Ordering::Relaxed),
        0,
        "not boosted: no pacing"
    );
    // Boosted: it paces itself after every slice, and still gets there.
    state.boosted.store(true, Ordering::Relaxed);
    leg.upto = 3000;
    assert_eq!(forward(&mut leg, &stop, &state).unwrap(), FollowEnd::Done);
    assert_eq!(leg.follower.last_seq(), 3000);
    assert!(state.paced.load(Ordering::Relaxed) >= 1, "paced");
    // Nothing left to do.
    assert_eq!(forward(&mut leg, &stop, &state).unwrap(), FollowEnd::Done);
}

#[test]
fn a_stop_interrupts_the_replay_and_the_replica_stays_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(true);
    let mut leg = job(dir.path(), 2000);
    let end = forward(&mut leg, &stop, &HelperState::default()).unwrap();
    assert_eq!(end, FollowEnd::Stopped);
    assert_eq!(leg.follower.last_seq(), crate::follower::FOLLOW_SLICE - 1);
    stop.store(false, Ordering::Relaxed);
    let end = forward(&mut leg, &stop, &HelperState::default()).unwrap();
    assert_eq!((end, leg.follower.last_seq()), (FollowEnd::Done, 2000));
}
