use super::{last_nonzero, JournalReader};
use crate::format::PAYLOAD_LEN_MAX;
use crate::{Durability, JournalConfig, JournalWriter};

#[test]
fn records_up_to_the_largest_payload_are_read_whole_across_refills() {
    let dir = tempfile::tempdir().unwrap();
    // Five of the largest records do not fit one read buffer: refills complete them.
    let max = PAYLOAD_LEN_MAX as usize;
    let sizes = [10, max - 30, max, 0, max, max, max - 1, 7];
    {
        let config = JournalConfig {
            payload_len_max: PAYLOAD_LEN_MAX,
            batch_buffer_bytes: 2 << 20,
            ..JournalConfig::default()
        };
        let (mut w, _) = JournalWriter::open(dir.path(), config).unwrap();
        for (i, &n) in sizes.iter().enumerate() {
            let payload: Vec<u8> = (0..n).map(|k| (k * 31 + i) as u8).collect();
            w.append(1, i as u64, &payload).unwrap();
            w.commit(Durability::Process).unwrap();
        }
    }
    let mut r = JournalReader::open(dir.path(), 1).unwrap();
    for (i, &n) in sizes.iter().enumerate() {
        let rec = r.next_record().unwrap().expect("record");
        assert_eq!((rec.seq, rec.timestamp_ns), (i as u64 + 1, i as u64));
        assert_eq!(rec.payload.len(), n);
        assert!(rec
            .payload
            .iter()
            .enumerate()
            .all(|(k, &b)| b == (k * 31 + i) as u8));
    }
    assert!(r.next_record().unwrap().is_none());
    assert!(r.torn_tail().is_none());
}

#[test]
fn last_nonzero_finds_the_last_set_byte_anywhere() {
    assert_eq!(last_nonzero(&[]), None);
    assert_eq!(last_nonzero(&[0; 300]), None);
    for at in [0, 1, 63, 64, 65, 127, 128, 250, 299] {
        let mut b = vec![0u8; 300];
        b[at] = 7;
        if at > 3 {
            b[at - 3] = 1;
        }
        assert_eq!(last_nonzero(&b), Some(at), "at {at}");
    }
}
