//! A stand-in exchange that only acknowledges: the load generator's own ceiling, measured
//! without a matching engine behind it.
//!
//! Role: accept FIX 4.4 sessions on 127.0.0.1 and answer every Logon with a Logon, every
//! NewOrderSingle with ExecutionReport New, every cancel with Canceled, every replace with
//! Replaced, a mass cancel with its report, a Logout with a Logout. One thread per session,
//! one `write` per `read`. Run it and point `rialto bench fix --port` at it to see what the
//! generator costs (its CPU %, its send lag) at rates the real exchange cannot take yet.
//!
//! Never: matches, keeps orders, checks sequence numbers, or binds anything but loopback.
//!
//! `cargo run --release -p loadgen --example ack_exchange -- [PORT]` (default 9877).

use fix::{Decoder, Encoder, FixVersion, Header, Limits, TimePrecision};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

fn main() {
    let port: u16 = match std::env::args().nth(1).map(|p| p.parse()) {
        None => 9877,
        Some(Ok(p)) => p,
        Some(Err(_)) => {
            eprintln!("usage: ack_exchange [PORT]");
            std::process::exit(2);
        }
    };
    let listener = match TcpListener::bind(("127.0.0.1", port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("cannot listen on 127.0.0.1:{port}: {e}");
            std::process::exit(1);
        }
    };
    eprintln!("ack_exchange listening on 127.0.0.1:{port}");
    for conn in listener.incoming().flatten() {
        std::thread::spawn(move || session(conn));
    }
}

fn session(mut s: TcpStream) {
    let _ = s.set_nodelay(true);
    let mut dec = Decoder::new(Limits::default());
    let mut enc = Encoder::default();
    let mut rbuf = vec![0u8; 1 << 20];
    let mut rlen = 0;
    let mut out: Vec<u8> = Vec::with_capacity(1 << 20);
    let mut seq = 1u64;
    let mut exec_id = 1u64;
    let mut sender: Vec<u8> = Vec::new();
    loop {
        let n = match s.read(&mut rbuf[rlen..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        rlen += n;
        let mut pos = 0;
        while let Ok(Some(len)) = fix::frame(&rbuf[pos..rlen], 1 << 16) {
            let frame = &rbuf[pos..pos + len];
            pos += len;
            let Ok(m) = dec.decode_framed(frame) else {
                continue;
            };
            let mt = m.msg_type().to_vec();
            if sender.is_empty() {
                sender = m.get(49).unwrap_or(b"").to_vec();
            }
            let cl = m.get(11).unwrap_or(b"").to_vec();
            let orig = m.get(41).map(<[u8]>::to_vec);
            let sym = m.get(55).unwrap_or(b"X").to_vec();
            let side = m.get(54).unwrap_or(b"1").to_vec();
            let qty = m.get(38).unwrap_or(b"1").to_vec();
            let test_id = m.get(112).map(<[u8]>::to_vec);
            let reply: Option<(&[u8], u8, u8)> = match mt.as_slice() {
                b"A" => Some((b"A", 0, 0)),
                b"5" => Some((b"5", 0, 0)),
                b"1" => Some((b"0", 0, 0)),
                b"D" => Some((b"8", b'0', b'0')),
                b"F" => Some((b"8", b'4', b'4')),
                b"G" => Some((b"8", b'5', b'0')),
                b"q" => Some((b"r", 0, 0)),
                _ => None,
            };
            let Some((rt, exec_type, ord_status)) = reply else {
                continue;
            };
            enc.begin(rt);
            enc.header(&Header {
                sender_comp_id: b"RIALTO",
                target_comp_id: &sender,
                msg_seq_num: seq,
                sending_time_ns: 0,
                poss_dup: false,
                orig_sending_time: None,
                time_precision: TimePrecision::Millis,
            });
            seq += 1;
            match rt {
                b"A" => {
                    enc.field(98, b"0");
                    enc.field(108, b"30");
                    enc.field(141, b"Y");
                }
                b"0" => {
                    if let Some(id) = &test_id {
                        enc.field(112, id);
                    }
                }
                b"r" => {
                    enc.field(11, &cl);
                    enc.field(530, b"7");
                    enc.field(531, b"7");
                }
                b"8" => {
                    enc.field(37, &cl);
                    enc.field(11, &cl);
                    if let Some(o) = &orig {
                        enc.field(41, o);
                    }
                    enc.field_u64(17, exec_id);
                    exec_id += 1;
                    enc.field_char(150, exec_type);
                    enc.field_char(39, ord_status);
                    enc.field(55, &sym);
                    enc.field(54, &side);
                    enc.field(38, &qty);
                    let leaves: &[u8] = if exec_type == b'4' { b"0" } else { &qty };
                    enc.field(151, leaves);
                    enc.field(14, b"0");
                    enc.field(6, b"0");
                }
                _ => {}
            }
            out.extend_from_slice(enc.finish(FixVersion::Fix44));
        }
        rbuf.copy_within(pos..rlen, 0);
        rlen -= pos;
        if rlen == rbuf.len() {
            return;
        }
        if !out.is_empty() {
            if s.write_all(&out).is_err() {
                return;
            }
            out.clear();
        }
    }
}
