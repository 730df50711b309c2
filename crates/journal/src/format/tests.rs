use super::*;

#[test]
fn segment_header_roundtrip_and_rejects_damage() {
    let h = encode_segment_header(42);
    assert_eq!(decode_segment_header(&h), Ok(42));
    for i in 0..SEGMENT_HEADER_LEN {
        let mut d = h;
        d[i] ^= 0x10;
        assert!(decode_segment_header(&d).is_err(), "flip at {i} accepted");
    }
    assert!(decode_segment_header(&h[..31]).is_err());
    assert!(decode_segment_header(&[0u8; 32]).is_err());
}

#[test]
fn record_roundtrip_and_every_bit_flip_rejected() {
    let payload = b"hello journal";
    let mut buf = vec![0u8; RECORD_HEADER_LEN + payload.len()];
    buf[RECORD_HEADER_LEN..].copy_from_slice(payload);
    seal_record(&mut buf, 7, 1_000, 3);
    let h = decode_record(&buf).unwrap();
    assert_eq!(
        h,
        RecordHeader {
            payload_len: payload.len() as u32,
            seq: 7,
            timestamp_ns: 1_000,
            kind: 3
        }
    );
    for bit in 0..buf.len() * 8 {
        let mut d = buf.clone();
        d[bit / 8] ^= 1 << (bit % 8);
        assert!(decode_record(&d).is_err(), "bit flip {bit} accepted");
    }
    assert_eq!(
        decode_record(&buf[..buf.len() - 1]),
        Err(RecordFault::Truncated)
    );
    assert_eq!(
        decode_record(&[0u8; RECORD_HEADER_LEN]),
        Err(RecordFault::ChecksumMismatch)
    );
}

#[test]
fn commit_marker_roundtrip_and_every_bit_flip_rejected() {
    for fsync in [false, true] {
        let mut m = [0u8; COMMIT_MARKER_LEN];
        seal_commit_marker(&mut m, 41, 0xdead_beef, fsync);
        let expect = CommitMarker {
            seq: 41,
            record_crc: 0xdead_beef,
            fsync,
        };
        assert_eq!(decode_frame(&m, true), Ok(Frame::Commit(expect)));
        // Not a record, and not a frame of a format without markers.
        assert_eq!(decode_record(&m), Err(RecordFault::ReservedNotZero));
        assert_eq!(decode_frame(&m, false), Err(RecordFault::ReservedNotZero));
        for bit in 0..COMMIT_MARKER_LEN * 8 {
            let mut d = m;
            d[bit / 8] ^= 1 << (bit % 8);
            assert!(decode_frame(&d, true).is_err(), "bit flip {bit} accepted");
        }
        assert_eq!(decode_frame(&m[..27], true), Err(RecordFault::Truncated));
    }
    // A marker whose CRC matches but whose fixed fields are wrong is refused.
    let mut m = [0u8; COMMIT_MARKER_LEN];
    seal_commit_marker(&mut m, 5, 7, true);
    m[24] = 3; // mode
    let crc = crate::crc::crc32c(&m[4..]);
    m[0..4].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(decode_frame(&m, true), Err(RecordFault::BadCommitMarker));
    // Zeros are never a frame.
    assert!(decode_frame(&[0u8; 64], true).is_err());
}

#[test]
fn both_readable_format_versions_decode_and_others_are_refused() {
    for v in FORMAT_VERSION_OLDEST..=FORMAT_VERSION {
        let h = encode_segment_header_version(9, v);
        assert_eq!(decode_segment_header_version(&h), Ok((9, v)));
    }
    assert_eq!(decode_segment_header(&encode_segment_header(9)), Ok(9));
    for v in [0, FORMAT_VERSION + 1] {
        let h = encode_segment_header_version(9, v);
        assert!(decode_segment_header(&h).is_err(), "version {v}");
    }
}

#[test]
fn segment_names() {
    assert_eq!(segment_file_name(1), "00000000000000000001.seg");
    assert_eq!(parse_segment_file_name("00000000000000000001.seg"), Some(1));
    assert_eq!(parse_segment_file_name("1.seg"), None);
    assert_eq!(parse_segment_file_name("0000000000000000000x.seg"), None);
    assert_eq!(
        parse_segment_file_name("00000000000000000001.seg.tmp"),
        None
    );
}
