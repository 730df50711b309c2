//! TLS on the FIX listener, end to end over 127.0.0.1: the test makes its own CA, server and
//! client certificates (rcgen), starts a server with `[tls]` and client certificates required,
//! and talks to it with a rustls client in TLS 1.2 and in TLS 1.3: Logon, an order, its
//! ExecutionReport, Logout. A certificate that does not name the Logon's SenderCompID, no
//! certificate at all, and a plain-TCP client are refused, and the server goes on serving; a
//! client's close_notify ends its connection. The journal shows that refused Logons are never
//! recorded and that each connection that ends without Logout yields one Disconnected record.

use crate::common;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, ProtocolVersion, RootCertStore, StreamOwned};
use server::{Config, Server, TlsConfig};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(10);

/// The test's PKI: a CA, the server's certificate (localhost, 127.0.0.1) and client
/// certificates it issues on demand.
struct Pki {
    ca: rcgen::Certificate,
    ca_key: KeyPair,
}

/// A client certificate and its key, as rustls takes them.
struct Identity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivatePkcs8KeyDer<'static>,
}

impl Pki {
    fn new() -> Pki {
        let ca_key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name
            .push(DnType::CommonName, "Rialto test CA");
        p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = p.self_signed(&ca_key).unwrap();
        Pki { ca, ca_key }
    }

    /// A certificate with this CommonName and these DNS SubjectAltNames, issued by the CA.
    fn issue(&self, cn: &str, dns: &[&str], server: bool) -> (rcgen::Certificate, KeyPair) {
        let key = KeyPair::generate().unwrap();
        let mut p =
            CertificateParams::new(dns.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        p.distinguished_name.push(DnType::CommonName, cn);
        if server {
            p.subject_alt_names
                .push(SanType::IpAddress([127, 0, 0, 1].into()));
        }
        p.extended_key_usages = vec![if server {
            ExtendedKeyUsagePurpose::ServerAuth
        } else {
            ExtendedKeyUsagePurpose::ClientAuth
        }];
        let cert = p.signed_by(&key, &self.ca, &self.ca_key).unwrap();
        (cert, key)
    }

    fn client(&self, cn: &str, dns: &[&str]) -> Identity {
        let (cert, key) = self.issue(cn, dns, false);
        Identity {
            chain: vec![cert.der().clone()],
            key: PrivatePkcs8KeyDer::from(key.serialize_der()),
        }
    }

    /// Writes the server's files and returns its `[tls]`.
    fn server_files(&self, dir: &Path) -> TlsConfig {
        let (cert, key) = self.issue("localhost", &["localhost"], true);
        let files = TlsConfig {
            cert_file: dir.join("server.pem"),
            key_file: dir.join("server.key"),
            client_ca_file: Some(dir.join("ca.pem")),
        };
        std::fs::write(&files.cert_file, cert.pem()).unwrap();
        std::fs::write(&files.key_file, key.serialize_pem()).unwrap();
        std::fs::write(dir.join("ca.pem"), self.ca.pem()).unwrap();
        files
    }
}

/// A blocking FIX 4.4 client over rustls.
struct Client {
    s: StreamOwned<ClientConnection, TcpStream>,
    who: String,
    seq: u64,
    buf: Vec<u8>,
}

impl Client {
    fn connect(
        addr: SocketAddr,
        pki: &Pki,
        id: Option<&Identity>,
        version: &'static rustls::SupportedProtocolVersion,
        who: &str,
    ) -> Client {
        let mut roots = RootCertStore::empty();
        roots.add(pki.ca.der().clone()).unwrap();
        let b =
            ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_protocol_versions(&[version])
                .unwrap()
                .with_root_certificates(roots);
        let cfg = match id {
            Some(id) => b
                .with_client_auth_cert(id.chain.clone(), PrivateKeyDer::Pkcs8(id.key.clone_key()))
                .unwrap(),
            None => b.with_no_client_auth(),
        };
        let conn = ClientConnection::new(Arc::new(cfg), ServerName::try_from("localhost").unwrap())
            .unwrap();
        let sock = TcpStream::connect(addr).unwrap();
        sock.set_read_timeout(Some(T)).unwrap();
        Client {
            s: StreamOwned::new(conn, sock),
            who: who.to_string(),
            seq: 1,
            buf: Vec::new(),
        }
    }

    fn send(&mut self, body: &[(u32, &str)]) -> io::Result<()> {
        let m = common::message(&self.who, self.seq, body);
        self.seq += 1;
        self.s.write_all(&m)?;
        self.s.flush()
    }

    fn logon(&mut self) -> io::Result<()> {
        self.send(&[(35, "A"), (98, "0"), (108, "30"), (141, "Y")])
    }

    /// The next message as text (fields joined by '|'); `None` once the server closed.
    fn recv(&mut self) -> io::Result<Option<String>> {
        let deadline = Instant::now() + T;
        loop {
            if let Some(len) = fix::frame(&self.buf, fix::Limits::default().msg_len_max)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.as_str()))?
            {
                let m: Vec<u8> = self.buf.drain(..len).collect();
                return Ok(Some(String::from_utf8_lossy(&m).replace('\x01', "|")));
            }
            if Instant::now() > deadline {
                return Err(io::ErrorKind::TimedOut.into());
            }
            let mut chunk = [0u8; 4096];
            match self.s.read(&mut chunk) {
                Ok(0) => return Ok(None),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                // A read that hit the socket's timeout (WouldBlock on Linux): nothing came.
                Err(e) if is_timeout(&e) => return Err(io::ErrorKind::TimedOut.into()),
                Err(e) => return Err(e),
            }
        }
    }

    /// The next message of this MsgType, skipping others (heartbeats).
    fn expect(&mut self, msg_type: &str) -> String {
        let want = format!("|35={msg_type}|");
        loop {
            let m = self
                .recv()
                .unwrap()
                .unwrap_or_else(|| panic!("closed while waiting for 35={msg_type}"));
            if m.contains(&want) {
                return m;
            }
        }
    }

    /// The server ends the connection without a FIX answer (EOF, or a TLS alert as an error)
    /// within `T`; a server that answers nothing and keeps the connection fails this.
    fn expect_refused(&mut self) {
        match self.recv() {
            Ok(None) => {}
            Ok(Some(m)) => panic!("expected the connection to close, got {m}"),
            Err(e) => assert_ne!(
                e.kind(),
                io::ErrorKind::TimedOut,
                "no answer at all, and the connection still open after {T:?}"
            ),
        }
    }
}

/// Whether a socket read failed only because its timeout passed (`WouldBlock` on Linux,
/// `TimedOut` elsewhere).
fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

fn start(dir: &Path, pki: &Pki) -> Server {
    let mut c = Config::defaults();
    c.listen = "127.0.0.1:0".parse().unwrap();
    c.data_dir = dir.join("data");
    c.journal_segment_bytes = 1 << 20;
    c.orders_max = 1 << 16;
    c.tls = Some(pki.server_files(dir));
    // CLIENT3's certificate is bound by name, not by its SenderCompID.
    let s3 = c
        .sessions
        .iter_mut()
        .find(|s| s.sender_comp_id == "CLIENT3")
        .unwrap();
    s3.client_cert_name = Some("trader-3.example".into());
    Server::start(c, Arc::new(|_: &str| {})).expect("server starts")
}

/// Logon, an order, its ExecutionReport (New), Logout: the whole path over TLS.
fn trade(c: &mut Client, cl: &str) {
    c.logon().unwrap();
    let logon = c.expect("A");
    assert!(logon.contains(&format!("|56={}|", c.who)), "{logon}");
    c.send(&[
        (35, "D"),
        (11, cl),
        (55, "ACME"),
        (54, "1"),
        (38, "10"),
        (40, "2"),
        (44, "100.00"),
        (59, "1"),
        (60, "20260101-00:00:00.000"),
    ])
    .unwrap();
    let er = c.expect("8");
    for want in [format!("|11={cl}|"), "|150=0|".into(), "|39=0|".into()] {
        assert!(er.contains(&want), "{want} in {er}");
    }
    c.send(&[(35, "5")]).unwrap();
    c.expect("5");
}

#[test]
fn fix_over_tls_12_and_13_with_client_certificates_bound_to_sender_comp_ids() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new();
    let server = start(dir.path(), &pki);
    let addr = server.addr;
    let client1 = pki.client("CLIENT1", &[]);
    let tls12 = &rustls::version::TLS12;
    let tls13 = &rustls::version::TLS13;

    for (version, want, cl) in [
        (tls12, ProtocolVersion::TLSv1_2, "o12"),
        (tls13, ProtocolVersion::TLSv1_3, "o13"),
    ] {
        let mut c = Client::connect(addr, &pki, Some(&client1), version, "CLIENT1");
        trade(&mut c, cl);
        assert_eq!(c.s.conn.protocol_version(), Some(want));
    }

    // A plain-TCP FIX client at the TLS port: no FIX answer, the connection closes.
    let mut plain = TcpStream::connect(addr).unwrap();
    plain.set_read_timeout(Some(T)).unwrap();
    plain
        .write_all(&common::message(
            "CLIENT2",
            1,
            &[(35, "A"), (98, "0"), (108, "30"), (141, "Y")],
        ))
        .unwrap();
    let mut answer = Vec::new();
    match plain.read_to_end(&mut answer) {
        // Closed, or reset because the server closed with our Logon unread.
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!(
            "the server neither closed the plain connection within {T:?} nor reset it: {e} \
             (read so far: {:?})",
            String::from_utf8_lossy(&answer)
        ),
    }
    assert!(
        answer.is_empty() || answer[0] == 0x15,
        "at most a TLS alert, got {:?}",
        String::from_utf8_lossy(&answer)
    );

    for version in [tls12, tls13] {
        // CLIENT2's certificate, CLIENT1's Logon: refused, nothing journaled for CLIENT1.
        let client2 = pki.client("CLIENT2", &[]);
        let mut c = Client::connect(addr, &pki, Some(&client2), version, "CLIENT1");
        c.logon().unwrap();
        c.expect_refused();
        // No certificate while one is required: the handshake fails.
        let mut c = Client::connect(addr, &pki, None, version, "CLIENT1");
        if c.logon().is_ok() {
            c.expect_refused();
        }
        // A certificate from another CA: refused in the handshake too.
        let rogue = Pki::new().client("CLIENT1", &[]);
        let mut c = Client::connect(addr, &pki, Some(&rogue), version, "CLIENT1");
        if c.logon().is_ok() {
            c.expect_refused();
        }
    }

    // CLIENT3 is bound to the name "trader-3.example" (a SubjectAltName here): a certificate
    // whose CommonName is CLIENT3 does not do, one with that DNS name does.
    let mut c = Client::connect(
        addr,
        &pki,
        Some(&pki.client("CLIENT3", &[])),
        tls13,
        "CLIENT3",
    );
    c.logon().unwrap();
    c.expect_refused();
    let bound = pki.client("desk 3", &["trader-3.example"]);
    let mut c = Client::connect(addr, &pki, Some(&bound), tls12, "CLIENT3");
    trade(&mut c, "o3");

    // After all the refusals the server still serves.
    let mut c = Client::connect(addr, &pki, Some(&client1), tls13, "CLIENT1");
    trade(&mut c, "o-after");

    // A client's close_notify (TCP still open) ends its connection: the server closes too.
    let client4 = pki.client("CLIENT4", &[]);
    let mut c = Client::connect(addr, &pki, Some(&client4), tls12, "CLIENT4");
    c.logon().unwrap();
    c.expect("A");
    c.s.conn.send_close_notify();
    c.s.flush().unwrap();
    assert_eq!(c.recv().unwrap(), None);
    server.shutdown().unwrap();

    // The journal: only the accepted Logons (two CLIENT1, CLIENT3, CLIENT1 again, CLIENT4),
    // none of the refused ones; one Disconnected record for each connection that ended
    // without a Logout exchange (the plain client, the 2 x 3 refused certificates, CLIENT3's
    // wrong one, CLIENT4's close_notify), and never two for one connection.
    let mut text = Vec::new();
    server::tools::dump(&dir.path().join("data"), Config::defaults(), 1, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    let logons = text.lines().filter(|l| l.contains("msg: Logon(")).count();
    assert_eq!(logons, 5, "{text}");
    let mut closed: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split("Disconnected { conn: ").nth(1))
        .collect();
    assert_eq!(closed.len(), 9, "{text}");
    closed.sort_unstable();
    closed.dedup();
    assert_eq!(closed.len(), 9, "{text}");
}

/// Many messages in both directions, larger than a TLS record and than the loop's read
/// chunk: nothing is lost or reordered through partial records and edge-triggered reads.
#[test]
fn a_burst_over_tls_arrives_whole_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new();
    let server = start(dir.path(), &pki);
    let id = pki.client("CLIENT4", &[]);
    let mut c = Client::connect(
        server.addr,
        &pki,
        Some(&id),
        &rustls::version::TLS13,
        "CLIENT4",
    );
    c.logon().unwrap();
    c.expect("A");
    let n = 2000;
    let mut burst = Vec::new();
    for i in 0..n {
        let cl = format!("b{i}");
        burst.extend_from_slice(&common::message(
            "CLIENT4",
            c.seq,
            &[
                (35, "D"),
                (11, &cl),
                (55, "BOLT"),
                (54, "2"),
                (38, "1"),
                (40, "2"),
                (44, "500.00"),
                (59, "1"),
                (60, "20260101-00:00:00.000"),
            ],
        ));
        c.seq += 1;
    }
    assert!(burst.len() > 128 << 10);
    c.s.write_all(&burst).unwrap();
    c.s.flush().unwrap();
    for i in 0..n {
        let er = c.expect("8");
        assert!(er.contains(&format!("|11=b{i}|")), "report {i}: {er}");
    }
    server.shutdown().unwrap();
}

#[test]
fn the_rest_api_speaks_tls_with_the_same_certificate_and_client_ca() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new();
    let server = start(dir.path(), &pki);
    let http = server.http_addr().expect("HTTP is on");
    let id = pki.client("someone", &[]);
    let mut roots = RootCertStore::empty();
    roots.add(pki.ca.der().clone()).unwrap();
    let mut cfg =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_client_auth_cert(id.chain.clone(), PrivateKeyDer::Pkcs8(id.key.clone_key()))
            .unwrap();
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    let conn =
        ClientConnection::new(Arc::new(cfg), ServerName::try_from("localhost").unwrap()).unwrap();
    let sock = TcpStream::connect(http).unwrap();
    sock.set_read_timeout(Some(T)).unwrap();
    let mut s = StreamOwned::new(conn, sock);
    s.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    match s.read_to_end(&mut answer) {
        Ok(_) => {}
        // A peer that closes without close_notify after its answer: what was read counts.
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {}
        Err(e) => panic!("reading the HTTPS answer: {e}"),
    }
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("\"status\":\"ok\""), "{text}");
    // Plain HTTP on the TLS port gets no HTTP answer.
    let mut plain = TcpStream::connect(http).unwrap();
    plain.set_read_timeout(Some(T)).unwrap();
    plain
        .write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    let _ = plain.read_to_end(&mut got);
    assert!(
        !got.starts_with(b"HTTP/"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    server.shutdown().unwrap();
}
