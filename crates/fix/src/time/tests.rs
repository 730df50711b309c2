use super::*;

fn fmt(ns: u64, p: TimePrecision) -> String {
    let mut v = Vec::new();
    write_utc_timestamp(&mut v, ns, p);
    String::from_utf8(v).unwrap()
}

#[test]
fn known_instants() {
    assert_eq!(fmt(0, TimePrecision::Millis), "19700101-00:00:00.000");
    // 2000-08-09 20:20:50 UTC, the FIXEdge sample's SendingTime.
    let t = 965_852_450 * NS_PER_SEC + 123_456_789;
    assert_eq!(fmt(t, TimePrecision::Seconds), "20000809-20:20:50");
    assert_eq!(fmt(t, TimePrecision::Millis), "20000809-20:20:50.123");
    assert_eq!(fmt(t, TimePrecision::Micros), "20000809-20:20:50.123456");
    assert_eq!(fmt(t, TimePrecision::Nanos), "20000809-20:20:50.123456789");
    // A leap day.
    let leap = days_from_civil(2024, 2, 29) as u64 * SECS_PER_DAY * NS_PER_SEC;
    assert_eq!(fmt(leap, TimePrecision::Seconds), "20240229-00:00:00");
}

#[test]
fn only_real_dates_from_1970_parse() {
    let ok = |s: &str| parse_utc_timestamp(s.as_bytes()).is_some();
    assert!(ok("20240229-00:00:00") && ok("20000229-12:00:00") && ok("19700101-00:00:00"));
    assert!(ok("20231231-23:59:60.999"), "a leap second");
    for bad in [
        "20230229-00:00:00",
        "19000229-00:00:00",
        "20230431-00:00:00",
        "20230132-00:00:00",
        "20230001-00:00:00",
        "20231301-00:00:00",
        "20230100-00:00:00",
        "19691231-23:59:59",
        "20230101-24:00:00",
        "20230101-00:60:00",
        "2023010a-00:00:00",
        "20230101-00:00:00.12",
        "20230101-00:00:00.1x3",
        "99991231-23:59:59",
        "20230101-0a:00:00",
        "20230101-00:0/:00",
        "20230101-00:00:0:",
        "20230101-00-00:00",
        "20230101-00:00-00",
        "2023/101-00:00:00",
        "20230101-00:00:0\u{80}",
        "20230101 00:00:00",
    ] {
        assert!(!ok(bad), "{bad}");
    }
}

#[test]
fn parse_round_trip() {
    let mut t: u64 = 1;
    for _ in 0..2000 {
        t = t
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
            >> 2;
        let t = t % (i64::MAX as u64);
        for (p, unit) in [
            (TimePrecision::Seconds, NS_PER_SEC),
            (TimePrecision::Millis, 1_000_000),
            (TimePrecision::Micros, 1_000),
            (TimePrecision::Nanos, 1),
        ] {
            let s = fmt(t, p);
            assert_eq!(
                parse_utc_timestamp(s.as_bytes()),
                Some(t / unit * unit),
                "{s}"
            );
        }
    }
}

#[test]
fn parse_rejects_garbage() {
    for bad in [
        "",
        "20000809-20:20",
        "20000809 20:20:50",
        "20001309-20:20:50",
        "20000230-20:20:50",
        "20000809-24:00:00",
        "20000809-20:20:50.12",
        "20000809-20:20:50.1234",
        "2000080a-20:20:50",
        "19691231-23:59:59",
    ] {
        assert_eq!(parse_utc_timestamp(bad.as_bytes()), None, "{bad}");
    }
}
