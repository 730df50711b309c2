use super::*;
use fix::Text;

fn cheap() -> Argon2<'static> {
    let params = argon2::Params::new(8, 1, 1, None).unwrap();
    Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params)
}

const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2));

#[test]
fn hashes_verify_the_password_and_nothing_else() {
    let h = hash_with(&cheap(), b"s3cret").unwrap();
    assert!(h.starts_with("$argon2id$v=19$m=8,t=1,p=1$"), "{h}");
    assert_eq!(check_hash(&h), Ok(()));
    assert!(verify(&h, b"s3cret"));
    for wrong in [&b"s3cret "[..], b"S3cret", b"", b"s3cre"] {
        assert!(!verify(&h, wrong));
    }
    // Salted: the same password hashes differently each time.
    assert_ne!(h, hash_with(&cheap(), b"s3cret").unwrap());
    // The default cost, as `rialto passwd` makes them.
    let d = hash_password(b"pw").unwrap();
    assert!(d.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{d}");
    assert!(verify(&d, b"pw"));
    // Not a hash: never verifies, and the config check says why.
    assert!(!verify("pw", b"pw"));
    assert!(check_hash("pw").unwrap_err().contains("PHC"));
}

#[test]
fn the_delay_doubles_up_to_its_maximum_and_is_forgotten() {
    let cfg = ThrottleConfig::default();
    let mut t = Throttle::new(cfg, 2);
    let t0 = Instant::now();
    assert_eq!(t.not_before(Some(0), A, t0), t0);
    let mut want = Vec::new();
    for n in 1..=8u32 {
        t.failed(Some(0), A, t0);
        want.push(t.delay(n).as_millis());
        // Both the CompID and the address wait.
        assert_eq!(t.not_before(Some(0), B, t0), t0 + t.delay(n));
        assert_eq!(t.not_before(Some(1), A, t0), t0 + t.delay(n));
        assert_eq!(t.not_before(Some(1), B, t0), t0);
    }
    assert_eq!(want, [100, 200, 400, 800, 1600, 3200, 3200, 3200]);
    // Forgotten after a quiet period: the next failure starts again at the first delay.
    let later = t0 + FORGET_AFTER;
    assert_eq!(t.not_before(Some(0), A, later), later);
    t.failed(Some(0), A, later);
    assert_eq!(t.not_before(Some(0), A, later), later + cfg.delay);
    // A success clears its CompID and address.
    t.succeeded(0, A);
    assert_eq!(t.not_before(Some(0), A, later), later);
    // An unknown CompID counts against its address only.
    t.failed(None, B, later);
    assert_eq!(t.not_before(Some(0), B, later), later + cfg.delay);
    assert_eq!(t.not_before(Some(0), A, later), later);
}

#[test]
fn the_address_table_is_capped_and_forgets_the_stalest() {
    let mut t = Throttle::with_cap(ThrottleConfig::default(), 1, 3);
    let t0 = Instant::now();
    let ip = |n: u8| IpAddr::V4(std::net::Ipv4Addr::new(10, 1, 0, n));
    for n in 0..10u8 {
        t.failed(None, ip(n), t0 + Duration::from_millis(n as u64));
        assert!(t.addrs() <= 3);
    }
    let now = t0 + Duration::from_millis(10);
    // The three latest remain; the oldest were dropped.
    assert!(t.not_before(None, ip(9), now) > now);
    assert!(t.not_before(None, ip(7), now) > now);
    assert_eq!(t.not_before(None, ip(0), now), now);
    // Stale entries make room before live ones are evicted.
    let far = t0 + FORGET_AFTER + Duration::from_secs(1);
    t.failed(None, ip(50), far);
    assert_eq!(t.addrs(), 1);
    // The CompID table is one slot per session: an unknown index is ignored.
    t.failed(Some(7), ip(51), far);
    assert_eq!(t.not_before(Some(7), ip(52), far), far);
}

fn logon(sender: &str, username: Option<&str>, password: Option<&str>) -> Logon {
    Logon {
        sender_comp_id: Text::from(sender),
        target_comp_id: Text::from("RIALTO"),
        username: username.map(Text::from),
        password: password.map(Text::from),
        ..Logon::default()
    }
}

fn fix_config() -> Arc<FixConfig> {
    let mut cfg = crate::Config::defaults();
    cfg.sessions[0].password_hash = Some(hash_with(&cheap(), b"pw").unwrap());
    cfg.sessions[0].username = Some("u".into());
    Arc::new(cfg.fix_config())
}

#[test]
fn username_and_password_are_both_checked() {
    let check = AuthCheck::new(fix_config(), ThrottleConfig::default()).unwrap();
    let s = Some(0);
    assert_eq!(
        check.verify(s, &logon("CLIENT1", Some("u"), Some("pw"))),
        Ok(())
    );
    for (u, p, why) in [
        (Some("u"), Some("nope"), Refusal::Password),
        (Some("u"), None, Refusal::Password),
        (Some("x"), Some("pw"), Refusal::Username),
        (None, Some("pw"), Refusal::Username),
    ] {
        assert_eq!(check.verify(s, &logon("CLIENT1", u, p)), Err(why));
    }
    assert_eq!(
        check.verify(None, &logon("NOBODY", None, Some("pw"))),
        Err(Refusal::UnknownCompIds)
    );
    assert!(check.needs_check(&logon("CLIENT1", None, None)));
    assert!(check.needs_check(&logon("NOBODY", None, None)));
    assert!(!check.needs_check(&logon("CLIENT2", None, None)));
    // The market-data check: refused during a delay without a hash, then verified.
    let l = logon("CLIENT1", Some("u"), Some("bad"));
    assert_eq!(check.check_now(Some(A), s, &l), Credentials::Refused);
    let good = logon("CLIENT1", Some("u"), Some("pw"));
    assert_eq!(check.check_now(Some(A), s, &good), Credentials::Refused);
    std::thread::sleep(Duration::from_millis(110));
    assert_eq!(check.check_now(Some(A), s, &good), Credentials::Accepted);
    assert_eq!(
        check.check_now(Some(A), Some(1), &logon("CLIENT2", None, None)),
        Credentials::Unchecked
    );
}

/// The `auth` thread: a Logon that needs no check passes at once without its password;
/// one that does comes back with the verdict and without its password.
#[test]
fn the_auth_thread_returns_verdicts_without_passwords() {
    let check = Arc::new(AuthCheck::new(fix_config(), ThrottleConfig::default()).unwrap());
    let poll = mio::Poll::new().unwrap();
    let waker = Arc::new(Waker::new(poll.registry(), mio::Token(1)).unwrap());
    let auth = Auth::start(check, waker).unwrap();
    let input = |l: Logon| FixInput {
        conn: 9,
        header: fix::InHeader::default(),
        msg: Inbound::Logon(Box::new(l)),
    };
    let open = auth
        .route(9, A, input(logon("CLIENT2", Some("u"), Some("whatever"))))
        .expect("an open session's Logon is not held");
    let Inbound::Logon(l) = &open.msg else {
        panic!()
    };
    assert_eq!(
        (l.password, l.username, l.credentials),
        (None, None, Credentials::Unchecked)
    );
    for (pw, want) in [("pw", Credentials::Accepted), ("no", Credentials::Refused)] {
        assert!(auth
            .route(9, A, input(logon("CLIENT1", Some("u"), Some(pw))))
            .is_none());
        let deadline = Instant::now() + Duration::from_secs(10);
        let (conn, fi) = loop {
            if let Some(v) = auth.take_verdict() {
                break v;
            }
            assert!(Instant::now() < deadline, "no verdict");
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(conn, 9);
        let Inbound::Logon(l) = &fi.msg else { panic!() };
        assert_eq!((l.password, l.username, l.credentials), (None, None, want));
    }
}

#[test]
fn the_message_log_never_sees_a_password() {
    let m = b"8=FIX.4.4\x019=5\x0135=A\x01554=hunter2\x01108=30\x0110=000\x01";
    let r = redacted(m);
    assert_eq!(
        &r[..],
        &b"8=FIX.4.4\x019=5\x0135=A\x01554=*******\x01108=30\x0110=000\x01"[..]
    );
    let plain = b"8=FIX.4.4\x0135=0\x01";
    assert!(matches!(redacted(plain), std::borrow::Cow::Borrowed(_)));
    assert_eq!(
        read_password(&mut &b"abc\r\nrest"[..]).unwrap(),
        b"abc".to_vec()
    );
    assert!(read_password(&mut &b"\n"[..]).is_err());
}
