//! A small blocking FIX initiator (FIX 4.4 by default; FIX 4.2 or FIXT.1.1 with
//! [`FixClient::with_version`]) for tests, the crash loop and tools: connect, send with
//! the `fix` crate's `Encoder`, read framed messages with bounded timeouts.
//!
//! Role: drive a server from outside exactly as a client would (real sockets). It keeps its
//! own sequence numbers so a test can reconnect without a reset, and answers nothing on its
//! own: the caller sees every message (helpers skip heartbeats when asked). It adds what a
//! FIX engine adds: TransactTime on D, F, G and q, and HandlInst on FIX 4.2 D and G, when the
//! caller gave none.
//!
//! What it cannot read (a garbled frame, skipped up to the next `8=`, or a framed message
//! that does not decode) is counted ([`FixClient::garbled`]), and dropping a client that
//! counted any panics (unless its thread is already panicking): every test built on it fails
//! on a garbled answer without asking.
//!
//! Never: used by the server; sleeps as synchronisation (every wait is a socket read with a
//! deadline); skips input silently. The one part of this crate with a socket: the rest is
//! sans-I/O.

use crate::{frame, resync, Decoder, Encoder, FixVersion, Header, Limits, TimePrecision};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// One received message with its fields as text.
#[derive(Clone, Debug)]
pub struct Msg {
    pub raw: Vec<u8>,
    pub fields: Vec<(u32, String)>,
}

impl Msg {
    pub fn get(&self, tag: u32) -> Option<&str> {
        self.fields
            .iter()
            .find(|(t, _)| *t == tag)
            .map(|(_, v)| v.as_str())
    }
    pub fn msg_type(&self) -> &str {
        self.get(35).unwrap_or("")
    }
    pub fn seq(&self) -> u64 {
        self.get(34).and_then(|s| s.parse().ok()).unwrap_or(0)
    }
    pub fn u64(&self, tag: u32) -> Option<u64> {
        self.get(tag).and_then(|s| s.parse().ok())
    }
    pub fn poss_dup(&self) -> bool {
        self.get(43) == Some("Y")
    }
    /// `35=8|11=..` style text, for assertion messages.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.raw).replace('\x01', "|")
    }
}

pub struct FixClient {
    stream: TcpStream,
    pub sender: String,
    pub target: String,
    /// MsgSeqNum of our next message.
    pub out_seq: u64,
    rbuf: Vec<u8>,
    /// Bytes of `rbuf` already consumed.
    rpos: usize,
    enc: Encoder,
    /// The dialect of what it sends (BeginString; FIXT.1.1 Logons carry DefaultApplVerID).
    version: FixVersion,
    decoder: Decoder,
    /// Garbled frames and undecodable messages skipped so far.
    garbled: u64,
    /// The first of them (up to 200 bytes), for the panic's message.
    first_garbled: Vec<u8>,
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl FixClient {
    /// Connects (no Logon yet). `out_seq` is the first MsgSeqNum to send.
    pub fn connect(
        addr: SocketAddr,
        sender: &str,
        target: &str,
        out_seq: u64,
    ) -> io::Result<FixClient> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_nodelay(true)?;
        Ok(FixClient {
            stream,
            sender: sender.to_string(),
            target: target.to_string(),
            out_seq,
            rbuf: Vec::with_capacity(1 << 16),
            rpos: 0,
            enc: Encoder::default(),
            decoder: Decoder::default(),
            version: FixVersion::Fix44,
            garbled: 0,
            first_garbled: Vec::new(),
        })
    }

    /// Speaks `version` from now on (BeginString of every message; a FIXT.1.1 Logon adds
    /// DefaultApplVerID 1137=9, FIX 5.0SP2).
    pub fn with_version(mut self, version: FixVersion) -> FixClient {
        self.version = version;
        self
    }

    /// Encodes and sends one message with the standard header; returns its MsgSeqNum.
    pub fn send(&mut self, msg_type: &str, body: &[(u32, &str)]) -> io::Result<u64> {
        self.send_with(msg_type, body, false)
    }

    /// Like `send`, optionally with PossDupFlag=Y (a resent message).
    pub fn send_with(
        &mut self,
        msg_type: &str,
        body: &[(u32, &str)],
        poss_dup: bool,
    ) -> io::Result<u64> {
        let seq = self.out_seq;
        self.out_seq += 1;
        self.send_seq(msg_type, seq, body, poss_dup)?;
        Ok(seq)
    }

    /// Sends with an explicit MsgSeqNum (does not change `out_seq`).
    pub fn send_seq(
        &mut self,
        msg_type: &str,
        seq: u64,
        body: &[(u32, &str)],
        poss_dup: bool,
    ) -> io::Result<()> {
        let now = now_ns();
        let mut orig = Vec::new();
        crate::write_utc_timestamp(&mut orig, now, TimePrecision::Millis);
        self.enc.begin(msg_type.as_bytes());
        self.enc.header(&Header {
            sender_comp_id: self.sender.as_bytes(),
            target_comp_id: self.target.as_bytes(),
            msg_seq_num: seq,
            sending_time_ns: now,
            poss_dup,
            orig_sending_time: poss_dup.then_some(orig.as_slice()),
            time_precision: TimePrecision::Millis,
        });
        let has = |t: u32| body.iter().any(|(tag, _)| *tag == t);
        let order = matches!(msg_type, "D" | "G");
        if order && self.version == FixVersion::Fix42 && !has(crate::tags::HANDL_INST) {
            self.enc.field(crate::tags::HANDL_INST, b"1");
        }
        for (tag, value) in body {
            self.enc.field(*tag, value.as_bytes());
        }
        // Like a FIX engine, the client stamps TransactTime on the messages whose dictionaries
        // require it when the caller gave none.
        if matches!(msg_type, "D" | "F" | "G" | "q") && !has(crate::tags::TRANSACT_TIME) {
            self.enc
                .field_timestamp(crate::tags::TRANSACT_TIME, now, TimePrecision::Millis);
        }
        let bytes = self.enc.finish(self.version);
        self.stream.write_all(bytes)
    }

    /// Sends raw bytes (for malformed-input tests).
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Sends Logon (35=A) with HeartBtInt `hb_secs`.
    pub fn logon(&mut self, hb_secs: u32, reset: bool) -> io::Result<u64> {
        let hb = hb_secs.to_string();
        let mut body: Vec<(u32, &str)> = vec![(98, "0"), (108, &hb)];
        if reset {
            body.push((141, "Y"));
        }
        if self.version == FixVersion::Fix50Sp2 {
            body.push((1137, "9"));
        }
        self.send("A", &body)
    }

    /// Next message, or `Ok(None)` at the deadline. `Err` on EOF or a socket error.
    pub fn recv(&mut self, timeout: Duration) -> io::Result<Option<Msg>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(m) = self.parse_one() {
                return Ok(Some(m));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.stream.set_read_timeout(Some(left))?;
            let mut tmp = [0u8; 65536];
            match self.stream.read(&mut tmp) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "connection closed by the server",
                    ))
                }
                Ok(n) => {
                    // Compact what was consumed, then append.
                    self.rbuf.drain(..self.rpos);
                    self.rpos = 0;
                    self.rbuf.extend_from_slice(&tmp[..n]);
                }
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || e.kind() == io::ErrorKind::TimedOut =>
                {
                    return Ok(None)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Garbled frames and undecodable messages skipped so far (each garbled stretch up to the
    /// next `8=` counts once). A client dropped with any panics.
    pub fn garbled(&self) -> u64 {
        self.garbled
    }

    fn count_garbled(&mut self, bytes: &[u8]) {
        if self.garbled == 0 {
            self.first_garbled = bytes[..bytes.len().min(200)].to_vec();
        }
        self.garbled += 1;
    }

    fn parse_one(&mut self) -> Option<Msg> {
        loop {
            let rest = &self.rbuf[self.rpos..];
            match frame(rest, Limits::default().msg_len_max) {
                Ok(None) => return None,
                Err(_) => {
                    let skip = resync(rest).max(1);
                    let skipped = rest[..skip].to_vec();
                    self.count_garbled(&skipped);
                    self.rpos += skip;
                }
                Ok(Some(len)) => {
                    let raw: Vec<u8> = rest[..len].to_vec();
                    self.rpos += len;
                    let Ok(m) = self.decoder.decode_framed(&raw) else {
                        self.count_garbled(&raw);
                        continue;
                    };
                    let fields = m
                        .fields()
                        .map(|(t, v)| (t, String::from_utf8_lossy(v).into_owned()))
                        .collect();
                    return Some(Msg { raw, fields });
                }
            }
        }
    }

    /// Next message that is not a Heartbeat (TestRequests are answered), within `timeout`.
    pub fn next_app(&mut self, timeout: Duration) -> io::Result<Msg> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv(left)? {
                None => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no message before the deadline",
                    ))
                }
                Some(m) if m.msg_type() == "0" => continue,
                Some(m) if m.msg_type() == "1" => {
                    let id = m.get(112).unwrap_or("").to_string();
                    self.send("0", &[(112, &id)])?;
                }
                Some(m) => return Ok(m),
            }
        }
    }

    /// Reads until a message of `msg_type` arrives; returns it and everything skipped.
    pub fn expect(&mut self, msg_type: &str, timeout: Duration) -> io::Result<(Msg, Vec<Msg>)> {
        let deadline = Instant::now() + timeout;
        let mut skipped = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self.next_app(left).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "waiting for 35={msg_type}: {e}; got {:?}",
                        skipped.iter().map(Msg::text).collect::<Vec<_>>()
                    ),
                )
            })?;
            if m.msg_type() == msg_type {
                return Ok((m, skipped));
            }
            skipped.push(m);
        }
    }

    /// A second handle on the socket, e.g. to send from another thread while this one reads.
    pub fn try_clone_stream(&self) -> io::Result<TcpStream> {
        self.stream.try_clone()
    }

    pub fn shutdown(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

impl Drop for FixClient {
    fn drop(&mut self) {
        if self.garbled > 0 && !std::thread::panicking() {
            panic!(
                "{} -> {}: {} garbled frame(s) or undecodable message(s) skipped; the first: {}",
                self.sender,
                self.target,
                self.garbled,
                String::from_utf8_lossy(&self.first_garbled).replace('\x01', "|")
            );
        }
    }
}
