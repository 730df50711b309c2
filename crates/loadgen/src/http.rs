//! An HTTP/1.1 client for the REST API: keep-alive connections with one request in flight
//! each, on hyper's client connection API over a current-thread tokio runtime; the API keys'
//! tokens and the `[[api_keys]]` entries a server is configured with.
//!
//! Role: what `bench http` and the demo's REST traders send their requests with. A
//! connection is a TCP stream (`TCP_NODELAY`) handed to `hyper::client::conn::http1`; its
//! driver runs as a task of the runtime, and `request` waits for the whole answer (status and
//! body). `clock::Timer` wakes its tasks on time.
//!
//! Never: follows redirects, retries, or opens a second connection behind the caller's back
//! (a broken connection is an error; the caller decides to reconnect); keeps a token beyond
//! the connection that uses it.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use sha2::{Digest, Sha256};
use std::net::SocketAddr;

/// An answer: its HTTP status and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub body: Bytes,
}

impl Answer {
    /// The body as text (lossy), for messages.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The `code` of an error body (`{"code": "...", "message": "..."}`), if it has one.
    pub fn error_code(&self) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct ErrorBody {
            code: String,
        }
        serde_json::from_slice::<ErrorBody>(&self.body)
            .ok()
            .map(|e| e.code)
    }
}

/// One keep-alive connection, authenticated with one API key.
pub struct HttpConn {
    send: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    host: HeaderValue,
    auth: Option<HeaderValue>,
    pub addr: SocketAddr,
}

impl HttpConn {
    /// Connects to `addr`; requests carry `Authorization: Bearer <token>` when a token is
    /// given. Must run inside a tokio runtime (the connection's driver is spawned on it).
    pub async fn connect(addr: SocketAddr, token: Option<&str>) -> Result<HttpConn, String> {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
        tcp.set_nodelay(true).map_err(|e| format!("{addr}: {e}"))?;
        let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| format!("{addr}: HTTP handshake: {e}"))?;
        // The connection's I/O; it ends when `send` is dropped or the peer closes.
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let auth = match token {
            Some(t) => Some(
                HeaderValue::from_str(&format!("Bearer {t}"))
                    .map_err(|_| "the API token is not a valid header value".to_string())?,
            ),
            None => None,
        };
        Ok(HttpConn {
            send,
            host: HeaderValue::from_str(&addr.to_string()).expect("an address is a header value"),
            auth,
            addr,
        })
    }

    /// Sends one request (`path` with its query, e.g. `/api/v1/orders`), with a JSON body if
    /// given, and waits for the whole answer.
    pub async fn request(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<Answer, String> {
        self.send
            .ready()
            .await
            .map_err(|e| format!("{}: connection lost: {e}", self.addr))?;
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, self.host.clone());
        if let Some(a) = &self.auth {
            req = req.header(AUTHORIZATION, a.clone());
        }
        if body.is_some() {
            req = req.header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        let req = req
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|e| format!("request {path}: {e}"))?;
        let resp = self
            .send
            .send_request(req)
            .await
            .map_err(|e| format!("{}: {path}: {e}", self.addr))?;
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("{}: {path}: reading the answer: {e}", self.addr))?
            .to_bytes();
        Ok(Answer { status, body })
    }
}

/// A current-thread runtime with I/O and timers (the client's tasks run on the calling
/// thread, inside `tokio::task::LocalSet::block_on` when they are not `Send`).
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start the HTTP client's runtime: {e}"))
}

/// A new API token (`rk_` and 64 hex digits of 32 random bytes, as `rialto apikey new`
/// makes them) and the lowercase hex of its SHA-256.
pub fn new_token() -> Result<(String, String), String> {
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).map_err(|e| format!("no random bytes: {e}"))?;
    let token = format!("rk_{}", hex(&raw));
    let sha = sha256_hex(&token);
    Ok((token, sha))
}

/// The lowercase hex of a token's SHA-256 (what `[[api_keys]] sha256` holds).
pub fn sha256_hex(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One `[[api_keys]]` entry of a server's TOML configuration for `token`.
pub fn api_key_entry(name: &str, account: u32, token: &str, requests_per_sec: u32) -> String {
    format!(
        "[[api_keys]]\nname = \"{name}\"\naccount = {account}\nsha256 = \"{}\"\nrequests_per_sec = {requests_per_sec}\n",
        sha256_hex(token)
    )
}

#[cfg(test)]
mod tests;
