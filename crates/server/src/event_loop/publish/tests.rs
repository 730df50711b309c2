use super::*;

fn heartbeat(seq: u64) -> Vec<u8> {
    let mut enc = fix::Encoder::default();
    enc.begin(b"0");
    enc.header(&fix::Header {
        sender_comp_id: b"RIALTO",
        target_comp_id: b"CLIENT1",
        msg_seq_num: seq,
        sending_time_ns: 0,
        poss_dup: false,
        orig_sending_time: None,
        time_precision: fix::TimePrecision::Millis,
    });
    enc.finish(fix::FixVersion::Fix44).to_vec()
}

#[test]
fn held_messages_a_newer_resend_covers_are_taken_out() {
    let held_of = |seqs: &[u64]| -> Vec<u8> { seqs.iter().flat_map(|&s| heartbeat(s)).collect() };
    let mut held = held_of(&[7, 8, 9]);
    assert_eq!(drop_held_through(&mut held, 6), None);
    assert_eq!(held, held_of(&[7, 8, 9]));
    assert_eq!(drop_held_through(&mut held, 8), Some(7));
    assert_eq!(held, held_of(&[9]));
    assert_eq!(drop_held_through(&mut held, 100), Some(9));
    assert!(held.is_empty());
    assert_eq!(drop_held_through(&mut held, 100), None);
    // Anything unreadable stays, with what follows it.
    let mut odd = b"garbage".to_vec();
    odd.extend(heartbeat(3));
    assert_eq!(drop_held_through(&mut odd, 100), None);
    assert_eq!(odd.len(), 7 + heartbeat(3).len());
}
