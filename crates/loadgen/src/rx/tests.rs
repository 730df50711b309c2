use super::*;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn wall() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// Blocks (up to the socket's read timeout) until `s` has data or its end to read.
fn wait_readable(s: &TcpStream) {
    s.peek(&mut [0u8; 1])
        .expect("data arrives within the read timeout");
}

/// A read is stamped with when its data arrived (before the reader knew it was there),
/// not when it was read. How long after the write and before the read the stamp falls is
/// a figure of `examples/clock_bench.rs`, not asserted.
#[test]
fn a_read_carries_the_time_the_data_arrived() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (s, _) = l.accept().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    enable(s.as_raw_fd()).unwrap();
    let mut buf = [0u8; 64];
    assert_eq!(
        recv(s.as_raw_fd(), &mut buf).unwrap_err().kind(),
        io::ErrorKind::WouldBlock
    );
    // The kernel turns stamping on globally in deferred work the first time a socket asks:
    // until then data may arrive unstamped. Probe until a read comes stamped.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        c.write_all(b"p").unwrap();
        wait_readable(&s);
        let (n, stamp) = recv(s.as_raw_fd(), &mut buf).unwrap();
        assert!(n >= 1 && buf[..n].iter().all(|&b| b == b'p'));
        if stamp.is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "no stamped read within 10 s");
    }
    let before = wall();
    c.write_all(b"hello").unwrap();
    wait_readable(&s);
    // The data is queued by now; the read comes after.
    let queued = wall();
    let (n, stamp) = recv(s.as_raw_fd(), &mut buf).unwrap();
    assert_eq!(&buf[..n], b"hello");
    let stamp = stamp.expect("the kernel stamps loopback TCP");
    assert!(
        before <= stamp,
        "stamped {stamp} before the write at {before}"
    );
    assert!(
        stamp <= queued,
        "stamped {stamp} after the data was seen at {queued}"
    );
    drop(c);
    wait_readable(&s);
    assert_eq!(recv(s.as_raw_fd(), &mut buf).unwrap().0, 0);
}
