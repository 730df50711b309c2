use super::*;

fn store(max: usize) -> Store {
    Store::new(Arc::new(FixConfig {
        sessions: Vec::new(),
        instruments: Vec::new(),
        resend_store_max: max,
        heartbeat_min_s: 1,
        heartbeat_max_s: 3600,
        sending_time_window_ns: None,
    }))
}

fn body(i: u64) -> Vec<u8> {
    format!("58=message {i} {}\x01", "x".repeat((i % 50) as usize)).into_bytes()
}

/// (MsgSeqNum, bytes) of every message `st` can still resend, oldest first.
fn live(st: &Store) -> Vec<(u64, Vec<u8>)> {
    st.live()
        .map(|m| (m.seq, st.bytes_of(m).to_vec()))
        .collect()
}

/// Checks that `st` holds exactly messages `from..=to` and that their bytes still fit the
/// byte ring's first buffer.
fn holds(st: &Store, from: u64, to: u64) {
    let want: Vec<(u64, Vec<u8>)> = (from..=to).map(|k| (k, body(k))).collect();
    assert_eq!(live(st), want, "after push {to}");
    assert_eq!(st.live_len(), want.len());
    assert_eq!(
        st.bytes.mask(),
        ClBytes::new(0).mask(),
        "the live bytes fit the first buffer"
    );
}

/// The resend store keeps exactly the newest `max` messages with their bytes through
/// many turns of its circular byte buffer, also for a `max` that changes (a snapshot of a
/// larger store restored into a smaller one), and resends those bodies as stored.
#[test]
fn resend_store_keeps_the_newest_bodies_through_wraparound() {
    let mut st = store(7);
    for i in 0..10_000u64 {
        st.push_body(i, b'j', i, &body(i));
        holds(&st, i.saturating_sub(6), i);
    }
    // Restored as `FixEdge::restore` does, into a store of 3.
    let mut small = store(3);
    for m in st.live() {
        let (kind, bytes, orig) = st.parts(m);
        small.restore_entry(m.seq, m.msg_type, m.sending_ts, *kind, bytes, orig);
    }
    holds(&small, 9_997, 9_999);
    for i in 10_000..20_000u64 {
        small.push_body(i, b'j', i, &body(i));
        holds(&small, i - 2, i);
    }
    let mut resent = Vec::new();
    small.resend(19_998, 20_000, FixVersion::Fix44, &mut |s| {
        assert_eq!((s.msg_type, s.sending_time_ns), (&b"j"[..], s.seq));
        resent.push((s.seq, s.body.to_vec()));
    });
    assert_eq!(resent, [(19_998, body(19_998)), (19_999, body(19_999))]);
}
