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

/// Writes `buf` to a non-blocking stream until it is all taken or the socket would block:
/// how many bytes were taken, and whether the connection failed (an error other than
/// `WouldBlock`, or a write that took nothing).
pub(crate) fn write_until_blocked(w: &mut impl Write, buf: &[u8]) -> (usize, bool) {
    let mut written = 0;
    while written < buf.len() {
        match w.write(&buf[written..]) {
            Ok(0) => return (written, true),
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return (written, true),
        }
    }
    (written, false)
}

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
mod tests;
