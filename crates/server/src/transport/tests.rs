use super::*;

#[global_allocator]
static GLOBAL: alloc_count::Counting = alloc_count::Counting;

/// A server-side `Transport` over a real socket pair and a rustls client on a thread that
/// sends `n` messages of `len` bytes, each after the echo of the one before: one TLS record
/// each way per message. Returns the allocations of the server side per message once warm
/// (the count is per thread), and checks every echo.
fn echo_allocs(tls: bool, n: usize, len: usize) -> f64 {
    use rustls::pki_types::ServerName;
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server_cfg = Arc::new(
        ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .unwrap(),
    );
    let mut roots = RootCertStore::empty();
    roots.add(cert.der().clone()).unwrap();
    let client_cfg = Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let client = std::thread::spawn(move || {
        let sock = std::net::TcpStream::connect(addr).unwrap();
        let mut s: Box<dyn ReadWrite> = if tls {
            let conn = rustls::ClientConnection::new(
                client_cfg,
                ServerName::try_from("localhost").unwrap(),
            )
            .unwrap();
            Box::new(rustls::StreamOwned::new(conn, sock))
        } else {
            Box::new(sock)
        };
        let mut back = vec![0u8; len];
        for i in 0..n {
            let msg = vec![(i % 251) as u8; len];
            s.write_all(&msg).unwrap();
            s.flush().unwrap();
            s.read_exact(&mut back).unwrap();
            assert_eq!(back, msg, "echo {i}");
        }
    });
    let (sock, _) = listener.accept().unwrap();
    sock.set_nonblocking(true).unwrap();
    let mut t = Transport::new(TcpStream::from_std(sock), tls.then_some(&server_cfg)).unwrap();
    let mut buf = vec![0u8; 64 << 10];
    let mut pending = Vec::with_capacity(len);
    let warm = n / 4;
    let mut start = 0;
    for i in 0..n {
        if i == warm {
            start = alloc_count::allocs();
        }
        pending.clear();
        while pending.len() < len {
            match t.read(&mut buf) {
                Ok(0) => panic!("closed"),
                Ok(k) => pending.extend_from_slice(&buf[..k]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                Err(e) => panic!("{e}"),
            }
        }
        let mut written = 0;
        while written < len || t.wants_write() {
            if written < len {
                match t.write(&pending[written..]) {
                    Ok(k) => written += k,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => panic!("{e}"),
                }
            } else if let Err(e) = t.flush() {
                assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
            }
        }
    }
    let per = (alloc_count::allocs() - start) as f64 / (n - warm) as f64;
    client.join().unwrap();
    per
}

trait ReadWrite: Read + Write + Send {}
impl<T: Read + Write + Send> ReadWrite for T {}

/// Plain TCP costs no allocation per message; TLS costs rustls's own (a buffer per record
/// each way, in its buffered API), bounded here so that a regression shows.
#[test]
fn allocations_per_message_plain_none_tls_bounded() {
    let plain = echo_allocs(false, 400, 200);
    let tls = echo_allocs(true, 400, 200);
    println!("allocations per message, server side: plain {plain}, TLS {tls}");
    assert_eq!(plain, 0.0);
    assert!(tls <= 2.0, "TLS: {tls} allocations per message");
}

#[test]
fn names_of_a_certificate_are_its_common_name_and_dns_alt_names() {
    let mut p = rcgen::CertificateParams::new(vec!["alt-one".into(), "ALT2".into()]).unwrap();
    p.distinguished_name
        .push(rcgen::DnType::OrganizationName, "Firm");
    p.distinguished_name
        .push(rcgen::DnType::CommonName, "CLIENT1");
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = p.self_signed(&key).unwrap();
    assert_eq!(
        cert_names(cert.der()),
        vec!["CLIENT1".to_string(), "alt-one".into(), "ALT2".into()]
    );
}

#[test]
fn der_refuses_cut_and_overlong_elements() {
    assert_eq!(
        der(&[0x30, 0x02, 1, 2, 9]),
        Some((0x30, &[1u8, 2][..], &[9u8][..]))
    );
    assert_eq!(der(&[0x30, 0x03, 1, 2]), None);
    assert_eq!(
        der(&[0x30, 0x81, 0x01, 7]),
        Some((0x30, &[7u8][..], &[][..]))
    );
    assert_eq!(der(&[0x30, 0x85, 0, 0, 0, 0, 1, 7]), None);
    assert_eq!(der(&[0x30, 0x80]), None);
    assert_eq!(der(&[0x30]), None);
    assert!(common_names(&[0x31, 0x05, 0x30, 0x03, 0x06, 0x01]).is_empty());
}

#[test]
fn unreadable_and_invalid_files_are_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pem");
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").unwrap();
    let cfg = |cert: &Path, key: &Path| TlsConfig {
        cert_file: cert.to_path_buf(),
        key_file: key.to_path_buf(),
        client_ca_file: None,
    };
    let e = server_config(&cfg(&missing, &junk)).unwrap_err().0;
    assert!(
        e.contains("tls.cert_file") && e.contains("missing.pem") && e.contains("cannot read"),
        "{e}"
    );
    let e = server_config(&cfg(&junk, &junk)).unwrap_err().0;
    assert!(
        e.contains("tls.cert_file") && e.contains("no PEM CERTIFICATE"),
        "{e}"
    );
    // A real certificate with someone else's key.
    let key = rcgen::KeyPair::generate().unwrap();
    let other = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["x".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let cert_pem = dir.path().join("cert.pem");
    let key_pem = dir.path().join("key.pem");
    let other_pem = dir.path().join("other.pem");
    std::fs::write(&cert_pem, cert.pem()).unwrap();
    std::fs::write(&key_pem, key.serialize_pem()).unwrap();
    std::fs::write(&other_pem, other.serialize_pem()).unwrap();
    let e = server_config(&cfg(&cert_pem, &junk)).unwrap_err().0;
    assert!(e.contains("tls.key_file") && e.contains("junk.pem"), "{e}");
    let e = server_config(&cfg(&cert_pem, &other_pem)).unwrap_err().0;
    assert!(e.contains("does not fit"), "{e}");
    assert!(server_config(&cfg(&cert_pem, &key_pem)).is_ok());
    let with_ca = TlsConfig {
        client_ca_file: Some(junk.clone()),
        ..cfg(&cert_pem, &key_pem)
    };
    let e = server_config(&with_ca).unwrap_err().0;
    assert!(
        e.contains("tls.client_ca_file") && e.contains("junk.pem"),
        "{e}"
    );
}
