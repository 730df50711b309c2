//! A FIX connection's byte stream: plain TCP, or TLS (rustls, TLS 1.2 and 1.3) over TCP, both
//! non-blocking under mio's edge-triggered epoll, behind the interface of a `TcpStream`
//! (`Read`, `Write`, `mio::event::Source`, `shutdown`), so the event loop drives both alike.
//!
//! Role: the TLS records and handshake of a connection; loading `[tls]` (certificate chain,
//! private key, client CA) into a `rustls::ServerConfig`; checking a Logon's SenderCompID
//! against the connection's client certificate (`Transport::authorize`).
//!
//! Never: blocks; hides a TLS failure (a handshake or record error sends the alert, is logged
//! with the peer's address and ends the connection like a reset); lets a Logon through whose
//! SenderCompID its client certificate does not name, when client certificates are required.
//!
//! Invariants, as the event loop relies on them (the semantics of a non-blocking `TcpStream`):
//! - `read` returns plaintext (`Ok(n > 0)`), `Ok(0)` once the peer closed (TLS close_notify, or
//!   TCP end of stream), an error that ends the connection, or `WouldBlock`. A TLS `read`
//!   returns less than the buffer only once the socket said `WouldBlock` (or closed) and no
//!   decrypted byte is left, so under edge-triggered epoll nothing readable is stranded: an
//!   event comes with the next bytes.
//! - `write` takes plaintext and returns how much it took, never `Ok(0)` for a non-empty buffer
//!   (it says `WouldBlock` instead). A TLS `write` takes new plaintext only once the ciphertext
//!   of the previous one has left, so the TLS side buffers at most one write's records
//!   (rustls's 64 KiB limit); `flush` pushes what is left and says `WouldBlock` while some is.
//!   `wants_write` is true while ciphertext waits (the loop keeps the connection until it has
//!   left before closing it).
//! - A TLS connection is always registered with WRITABLE interest besides the loop's: its own
//!   output (handshake records, alerts, the tail of a write) must leave even when the loop has
//!   nothing to write. Edge-triggered, this costs an event only when the send buffer had
//!   filled.
//! - Plain connections are `TcpStream` calls and nothing else: no allocation, no copy. TLS
//!   connections reuse rustls's buffers; the loop's read and write buffers are the same.

use crate::config::{Config, TlsConfig};
use crate::error::ServerError;
use mio::event::Source;
use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection};
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::path::Path;
use std::sync::Arc;

/// One connection's stream.
pub(crate) enum Transport {
    Plain(TcpStream),
    Tls(Box<TlsStream>),
}

pub(crate) struct TlsStream {
    sock: TcpStream,
    tls: ServerConnection,
    /// The handshake's end was logged.
    up: bool,
}

impl Transport {
    /// Wraps an accepted socket: TLS when the listener has a `ServerConfig`.
    pub(crate) fn new(
        sock: TcpStream,
        tls: Option<&Arc<ServerConfig>>,
    ) -> Result<Transport, rustls::Error> {
        Ok(match tls {
            None => Transport::Plain(sock),
            Some(cfg) => Transport::Tls(Box::new(TlsStream {
                sock,
                tls: ServerConnection::new(cfg.clone())?,
                up: false,
            })),
        })
    }

    /// Ciphertext of its own is waiting for the socket (always false for plain TCP).
    pub(crate) fn wants_write(&self) -> bool {
        match self {
            Transport::Plain(_) => false,
            Transport::Tls(t) => t.tls.wants_write(),
        }
    }

    /// Closes the connection: for TLS a close_notify first (best effort, never blocking).
    pub(crate) fn shutdown(&mut self, how: Shutdown) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.shutdown(how),
            Transport::Tls(t) => {
                t.tls.send_close_notify();
                let _ = t.push();
                t.sock.shutdown(how)
            }
        }
    }

    /// Whether the connection may log on as `sender` (to `target`): with client certificates
    /// required (`[tls] client_ca_file`), its certificate must name the session's
    /// `client_cert_name`, or by default the SenderCompID, as its subject's CommonName or as a
    /// DNS name of its SubjectAltName. Plain connections and TLS without client certificates
    /// are not checked here (the session layer checks CompIDs and passwords). `Err` says why,
    /// for the operator's log.
    pub(crate) fn authorize(
        &self,
        cfg: &Config,
        sender: &[u8],
        target: &[u8],
    ) -> Result<(), String> {
        let Transport::Tls(t) = self else {
            return Ok(());
        };
        let Some(cert) = t.tls.peer_certificates().and_then(|c| c.first()) else {
            return Ok(());
        };
        let session = cfg.sessions.iter().find(|s| {
            s.sender_comp_id.as_bytes() == sender && s.target_comp_id.as_bytes() == target
        });
        let expected: &[u8] = match session.and_then(|s| s.client_cert_name.as_deref()) {
            Some(name) => name.as_bytes(),
            None => sender,
        };
        let names = cert_names(cert);
        if names.iter().any(|n| n.as_bytes() == expected) {
            return Ok(());
        }
        Err(format!(
            "SenderCompID {:?} (to {:?}): its client certificate names {:?}, not {:?}",
            String::from_utf8_lossy(sender),
            String::from_utf8_lossy(target),
            names,
            String::from_utf8_lossy(expected)
        ))
    }
}

impl TlsStream {
    /// Writes pending ciphertext until the socket would block. `Ok(true)`: nothing is left.
    fn push(&mut self) -> io::Result<bool> {
        while self.tls.wants_write() {
            match self.tls.write_tls(&mut self.sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Once, when the handshake is done: the operator's log line of who connected and how.
    fn note_up(&mut self) {
        if self.up || self.tls.is_handshaking() {
            return;
        }
        self.up = true;
        let peer = self
            .sock
            .peer_addr()
            .map_or_else(|_| "?".to_string(), |a| a.to_string());
        let version = self.tls.protocol_version().map(|v| format!("{v:?}"));
        let suite = self
            .tls
            .negotiated_cipher_suite()
            .map(|s| format!("{:?}", s.suite()));
        let names = self
            .tls
            .peer_certificates()
            .and_then(|c| c.first())
            .map(cert_names);
        tracing::info!(
            peer,
            version = version.as_deref().unwrap_or("?"),
            suite = suite.as_deref().unwrap_or("?"),
            client_cert = ?names,
            "TLS: connection up"
        );
    }

    /// A TLS failure (bad handshake, not TLS at all, a bad record): the alert rustls queued
    /// goes out, the operator's log says who and why, and the caller closes the connection.
    fn fail(&mut self, e: rustls::Error) -> io::Error {
        let _ = self.push();
        let peer = self
            .sock
            .peer_addr()
            .map_or_else(|_| "?".to_string(), |a| a.to_string());
        tracing::warn!(peer, error = %e, "TLS: connection closed");
        io::Error::new(io::ErrorKind::InvalidData, e)
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let t = match self {
            Transport::Plain(s) => return s.read(buf),
            Transport::Tls(t) => t,
        };
        let mut filled = 0;
        loop {
            // Decrypted bytes first: rustls bounds what it holds decrypted, so it is drained
            // before more ciphertext is read.
            match t.tls.reader().read(&mut buf[filled..]) {
                Ok(0) if filled < buf.len() => {
                    // close_notify: the peer closed.
                    return Ok(filled);
                }
                Ok(n) => {
                    filled += n;
                    if filled == buf.len() {
                        return Ok(filled);
                    }
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // End of stream without close_notify, and the like: what came before it first.
                Err(e) => return if filled > 0 { Ok(filled) } else { Err(e) },
            }
            match t.tls.read_tls(&mut t.sock) {
                Ok(0) => {
                    // TCP end of stream: the reader reports it (after any plaintext).
                }
                Ok(_) => {
                    if let Err(e) = t.tls.process_new_packets() {
                        let err = t.fail(e);
                        return if filled > 0 { Ok(filled) } else { Err(err) };
                    }
                    t.note_up();
                    // Handshake records (and a close_notify's answer) leave at once; what the
                    // socket does not take leaves on the next writable event.
                    t.push()?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return if filled > 0 { Ok(filled) } else { Err(e) };
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return if filled > 0 { Ok(filled) } else { Err(e) },
            }
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let t = match self {
            Transport::Plain(s) => return s.write(buf),
            Transport::Tls(t) => t,
        };
        if !t.push()? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = t.tls.writer().write(buf)?;
        t.push()?;
        if n == 0 && !buf.is_empty() {
            // Before the handshake is done, with its buffer full.
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.flush(),
            Transport::Tls(t) => {
                if t.push()? {
                    Ok(())
                } else {
                    Err(io::ErrorKind::WouldBlock.into())
                }
            }
        }
    }
}

impl Source for Transport {
    fn register(&mut self, r: &Registry, token: Token, interest: Interest) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.register(r, token, interest),
            Transport::Tls(t) => t.sock.register(r, token, interest | Interest::WRITABLE),
        }
    }

    fn reregister(&mut self, r: &Registry, token: Token, interest: Interest) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.reregister(r, token, interest),
            Transport::Tls(t) => t.sock.reregister(r, token, interest | Interest::WRITABLE),
        }
    }

    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.deregister(r),
            Transport::Tls(t) => t.sock.deregister(r),
        }
    }
}

/// Loads `[tls]` into the listener's `ServerConfig`: TLS 1.2 and 1.3 (ring), the certificate
/// chain and key, and with `client_ca_file` a verifier that requires a client certificate
/// issued by one of its CAs. Errors name the file and what is wrong with it.
pub(crate) fn server_config(tls: &TlsConfig) -> Result<Arc<ServerConfig>, ServerError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = read_certs("cert_file", &tls.cert_file)?;
    let key_pem = read("key_file", &tls.key_file)?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
        ServerError(format!(
            "tls.key_file {}: no private key in it (PEM: PKCS#8, PKCS#1 or SEC1): {e}",
            tls.key_file.display()
        ))
    })?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| ServerError(format!("tls: {e}")))?;
    let builder = match &tls.client_ca_file {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = RootCertStore::empty();
            for c in read_certs("client_ca_file", path)? {
                roots.add(c).map_err(|e| {
                    ServerError(format!(
                        "tls.client_ca_file {}: not a usable CA certificate: {e}",
                        path.display()
                    ))
                })?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| ServerError(format!("tls.client_ca_file {}: {e}", path.display())))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let cfg = builder.with_single_cert(certs, key).map_err(|e| {
        ServerError(format!(
            "tls: the key in {} does not fit the certificate in {}: {e}",
            tls.key_file.display(),
            tls.cert_file.display()
        ))
    })?;
    Ok(Arc::new(cfg))
}

fn read(key: &str, path: &Path) -> Result<Vec<u8>, ServerError> {
    std::fs::read(path)
        .map_err(|e| ServerError(format!("tls.{key} {}: cannot read it: {e}", path.display())))
}

/// Every CERTIFICATE of a PEM file, in order; at least one.
fn read_certs(key: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>, ServerError> {
    let pem = read(key, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ServerError(format!("tls.{key} {}: bad PEM: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(ServerError(format!(
            "tls.{key} {}: no PEM CERTIFICATE in it",
            path.display()
        )));
    }
    Ok(certs)
}

/// The names a certificate gives its subject: the CommonNames, then the DNS names of its
/// SubjectAltName. Empty if it does not parse (rustls verified it already).
pub(crate) fn cert_names(cert: &CertificateDer<'_>) -> Vec<String> {
    let Ok(ee) = webpki::EndEntityCert::try_from(cert) else {
        return Vec::new();
    };
    let mut names = common_names(ee.subject());
    names.extend(ee.valid_dns_names().map(str::to_string));
    names
}

/// The CommonName (2.5.4.3) values of an X.509 Name's content (its RDNs: SET OF
/// AttributeTypeAndValue), as UTF8String, PrintableString or IA5String.
fn common_names(mut rdns: &[u8]) -> Vec<String> {
    const CN: [u8; 3] = [0x55, 0x04, 0x03];
    let mut out = Vec::new();
    while let Some((0x31, mut set, rest)) = der(rdns) {
        rdns = rest;
        while let Some((0x30, atv, rest)) = der(set) {
            set = rest;
            if let Some((0x06, oid, value)) = der(atv) {
                if oid == CN {
                    if let Some((0x0c | 0x13 | 0x16, s, _)) = der(value) {
                        if let Ok(s) = std::str::from_utf8(s) {
                            out.push(s.to_string());
                        }
                    }
                }
            }
        }
    }
    out
}

/// One DER element: (tag, content, what follows). `None` if it is cut or its length is not
/// one DER allows here (definite, at most 4 length bytes).
fn der(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |l, &b| l << 8 | b as usize);
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

#[cfg(test)]
mod tests {
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
}
