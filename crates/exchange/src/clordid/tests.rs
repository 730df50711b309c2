use super::*;

/// `from_bytes` takes every UTF-8 string of up to 64 bytes (ASCII and not) as `new` does,
/// and refuses bad UTF-8 and anything longer; `truncated` cuts at a character boundary.
#[test]
fn client_order_ids_are_utf8_of_at_most_64_bytes() {
    let text = "héllo wörld, ClOrdID-0123456789-abcdefghijklmnopqrstuvwxyzABCDEF";
    assert!(text.len() > CL_ORD_ID_LEN_MAX);
    for end in (0..=text.len()).filter(|&e| text.is_char_boundary(e)) {
        let s = &text[..end];
        let c = ClOrdId::from_bytes(s.as_bytes());
        assert_eq!(c, ClOrdId::new(s), "{s:?}");
        assert_eq!(c.is_some(), end <= CL_ORD_ID_LEN_MAX, "{s:?}");
        if let Some(c) = c {
            assert_eq!(c.as_str(), s);
            assert_eq!(c.len(), end);
        }
    }
    assert_eq!(
        ClOrdId::from_bytes(&[b'a', 0xC3]),
        None,
        "cut inside a character"
    );
    assert_eq!(ClOrdId::from_bytes(&[0xFF; 9]), None);
    assert_eq!(ClOrdId::from_bytes(&[b'z'; 65]), None);
    assert!(ClOrdId::new(&"y".repeat(65)).is_none());
    assert_eq!(ClOrdId::truncated(&"é".repeat(40)).len(), 64);
    assert_eq!(
        ClOrdId::truncated(&"x€".repeat(30)).as_str(),
        "x€".repeat(16)
    );
    assert_eq!(ClOrdId::from("abc").as_str(), "abc");
}

/// `set_from_bytes` over any earlier value, longer or shorter, gives exactly what a fresh
/// `from_bytes` gives (the bytes after the new length are zero again: the derived equality
/// compares all 64); a refused input leaves it empty.
#[test]
fn setting_in_place_equals_a_fresh_value() {
    let mut values: Vec<String> = Vec::new();
    for len in [64usize, 63, 17, 16, 9, 8, 7, 1, 0] {
        values.push("x".repeat(len));
        values.push("é".repeat(len / 2));
        values.push(format!("{}€", "y".repeat(len.saturating_sub(3))));
    }
    for before in &values {
        for after in &values {
            let mut c = ClOrdId::truncated(before);
            assert!(c.set_from_bytes(after.as_bytes()), "{after:?}");
            assert_eq!(Some(c), ClOrdId::new(after), "{before:?} then {after:?}");
        }
        for bad in [&[b'q'; 65][..], &[b'a', 0xC3], &[0xFF; 12]] {
            let mut c = ClOrdId::truncated(before);
            assert!(!c.set_from_bytes(bad));
            assert_eq!(c, ClOrdId::EMPTY);
        }
    }
}
