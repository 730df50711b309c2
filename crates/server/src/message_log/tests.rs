use super::*;

#[test]
fn messages_of_logged_sessions_land_in_their_files_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let names = vec![
        ("A-RIALTO".to_string(), true),
        ("B-RIALTO".to_string(), false),
    ];
    let mut sink = start(dir.path(), names).unwrap().unwrap();
    assert!(sink.logs(0) && !sink.logs(1));
    sink.push(0, true, 1_700_000_000_000_000_000, b"8=FIX.4.4\x0135=A\x01");
    sink.push(
        0,
        false,
        1_700_000_000_000_001_000,
        b"8=FIX.4.4\x0135=A\x01",
    );
    sink.flush();
    drop(sink);
    // The thread ends when the sink is gone; wait for the file.
    let path = dir.path().join("A-RIALTO.messages.log");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut text = String::new();
    while std::time::Instant::now() < deadline {
        text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.lines().count() == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "20231114-22:13:20.000000 in  8=FIX.4.4\x0135=A\x01",
            "20231114-22:13:20.000001 out 8=FIX.4.4\x0135=A\x01"
        ]
    );
    assert!(!dir.path().join("B-RIALTO.messages.log").exists());
}

#[test]
fn count_reads_the_entries_of_a_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = start(dir.path(), vec![("X".into(), true)])
        .unwrap()
        .unwrap();
    sink.push(0, true, 0, b"abc");
    sink.push(0, false, 0, b"");
    assert_eq!(count(&sink.buf), 2);
}
