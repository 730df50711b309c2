use super::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;

/// A one-connection HTTP/1.1 server on 127.0.0.1: answers each request with its status
/// (201 for POST, 404 for GET) and a body naming the request's number; sends the request
/// heads it read (and how many connections it accepted: always 1 here) back on `heads`.
fn one_connection_server(requests: usize) -> (SocketAddr, mpsc::Receiver<String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        let mut w = s;
        for n in 0..requests {
            let mut head = String::new();
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let mut body = vec![0u8; len];
            r.read_exact(&mut body).unwrap();
            let status = if head.starts_with("POST") {
                "201 Created"
            } else {
                "404 Not Found"
            };
            let answer = format!("{{\"n\":{n}}}");
            write!(
                w,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                answer.len()
            )
            .unwrap();
            tx.send(format!("{head}{}", String::from_utf8_lossy(&body)))
                .unwrap();
        }
    });
    (addr, rx)
}

#[test]
fn a_connection_keeps_alive_and_carries_the_key_and_the_body() {
    let (addr, heads) = one_connection_server(3);
    let rt = runtime().unwrap();
    let answers = rt.block_on(async {
        let mut c = HttpConn::connect(addr, Some("rk_test")).await.unwrap();
        let mut out = Vec::new();
        for i in 0..3 {
            let a = if i == 1 {
                c.request(Method::GET, "/api/v1/ticker/ACME", None).await
            } else {
                c.request(
                    Method::POST,
                    "/api/v1/orders",
                    Some(Bytes::from_static(b"{\"symbol\":\"ACME\"}")),
                )
                .await
            };
            out.push(a.unwrap());
        }
        out
    });
    // Three requests, one connection (the server accepts only one).
    assert_eq!(
        answers.iter().map(|a| a.status).collect::<Vec<_>>(),
        [201, 404, 201]
    );
    assert_eq!(answers[2].text(), "{\"n\":2}");
    let first = heads.recv().unwrap();
    assert!(
        first.starts_with("POST /api/v1/orders HTTP/1.1\r\n"),
        "{first}"
    );
    assert!(
        first.contains("authorization: Bearer rk_test\r\n"),
        "{first}"
    );
    assert!(
        first.contains("content-type: application/json\r\n"),
        "{first}"
    );
    assert!(first.ends_with("{\"symbol\":\"ACME\"}"), "{first}");
    let second = heads.recv().unwrap();
    assert!(
        second.starts_with("GET /api/v1/ticker/ACME HTTP/1.1\r\n"),
        "{second}"
    );
    assert!(!second.contains("content-type"), "{second}");
}

#[test]
fn a_closed_server_is_an_error_not_a_hang() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        drop(s);
    });
    let rt = runtime().unwrap();
    let r = rt.block_on(async {
        let mut c = HttpConn::connect(addr, None).await.unwrap();
        c.request(Method::GET, "/health", None).await
    });
    t.join().unwrap();
    assert!(r.is_err(), "{r:?}");
}

#[test]
fn error_codes_and_key_entries() {
    let a = Answer {
        status: 409,
        body: Bytes::from_static(br#"{"code":"order_not_open","message":"order 7 is filled"}"#),
    };
    assert_eq!(a.error_code().as_deref(), Some("order_not_open"));
    let b = Answer {
        status: 502,
        body: Bytes::from_static(b"<html>"),
    };
    assert_eq!(b.error_code(), None);
    // SHA-256 of "abc" (FIPS 180-2's example).
    assert_eq!(
        sha256_hex("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let (t1, h1) = new_token().unwrap();
    let (t2, _) = new_token().unwrap();
    assert!(t1.starts_with("rk_") && t1.len() == 67 && t1 != t2);
    assert_eq!(h1, sha256_hex(&t1));
    let e = api_key_entry("bench1", 101, &t1, 5000);
    assert_eq!(
        e,
        format!("[[api_keys]]\nname = \"bench1\"\naccount = 101\nsha256 = \"{h1}\"\nrequests_per_sec = 5000\n")
    );
}
