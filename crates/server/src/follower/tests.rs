use super::*;
use crate::config::Config;
use crate::record::{Record, KIND_RECORD};
use exchange::Backing;
use journal::{JournalConfig, JournalWriter, Log};

/// A follower on its own thread tails a journal that is being appended to, up to the
/// watermark and no further, and stops when asked.
#[test]
fn a_follower_tails_the_journal_up_to_the_watermark_on_its_own_thread() {
    let dir = tempfile::tempdir().unwrap();
    let (mut j, _) = JournalWriter::open(dir.path(), JournalConfig::default()).unwrap();
    let cfg = Config::defaults().lenient();
    let append = |j: &mut JournalWriter, r: &Record| {
        let mut b = Vec::new();
        r.encode(&mut b);
        let seq = j.append(KIND_RECORD, j.next_seq(), &b).unwrap();
        j.commit(journal::Durability::Process).unwrap();
        seq
    };
    append(&mut j, &Record::Startup);
    append(&mut j, &Record::fix44_logon(1, 1, "CLIENT1", true));
    let watermark = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (seen_tx, seen_rx) = std::sync::mpsc::channel::<u64>();
    let f = Follower::new(Node::new(&cfg, Backing::Lazy), j.source());
    let t = f
        .spawn(
            "test-follower",
            watermark.clone(),
            stop.clone(),
            Duration::from_millis(5),
            move |node| {
                let _ = seen_tx.send(node.last_seq());
            },
        )
        .unwrap();
    // Nothing is applied past the watermark, however much is committed.
    let wait_for = |want: u64| loop {
        let s = seen_rx.recv_timeout(Duration::from_secs(30)).unwrap();
        assert!(s <= want, "applied {s} past the watermark {want}");
        if s == want {
            break;
        }
    };
    watermark.store(1, Ordering::Release);
    wait_for(1);
    for i in 0..500 {
        append(&mut j, &Record::Tick);
        if i == 100 {
            watermark.store(50, Ordering::Release);
        }
    }
    wait_for(50);
    watermark.store(502, Ordering::Release);
    wait_for(502);
    stop.store(true, Ordering::Release);
    t.thread().unpark();
    let f = t.join().unwrap().unwrap();
    assert_eq!(f.last_seq(), 502);
    assert_eq!(f.node().session_seqs("CLIENT1"), Some((2, 2)));
}
