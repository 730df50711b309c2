//! Reads that come with the kernel's receive time (`SO_TIMESTAMPNS`), so a report is timed when
//! it reached the generator's socket, not when the generator got round to reading it.
//!
//! Role: with these stamps the driver needs no wake-up per report: it reads the sockets once
//! per tick (one wake-up instead of two on a VM, where each costs ~30 µs of CPU) and its
//! latency figures do not grow when it is busy. On TCP the stamp a `recvmsg` returns is that of
//! the last segment it copied (segments merged in the receive queue keep the later stamp), so
//! messages from earlier segments of the same read are stamped a little late, never early.
//! The stamp is CLOCK_REALTIME, taken on loopback when the peer's segment is queued to us.
//!
//! Never: blocks (MSG_DONTWAIT); trusts a missing stamp (then the caller uses its own clock).
//!
//! Invariants: the unsafe code here is `setsockopt` on a descriptor the
//! caller owns, and `recvmsg` into the caller's buffer with a control buffer on the stack,
//! whose headers are walked with the libc CMSG macros within `msg_controllen`.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::RawFd;

/// `SO_TIMESTAMPNS` (= `SCM_TIMESTAMPNS`) on Linux x86-64 and AArch64 (the asm-generic value):
/// a `struct timespec` with 64-bit fields.
const SO_TIMESTAMPNS: libc::c_int = 35;

/// Asks the kernel to stamp what this socket receives.
pub fn enable(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `fd` is an open socket owned by the caller; the option value is a live c_int
    // whose size is passed with it.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// One non-blocking read into `buf`: the byte count (0 at end of stream) and the kernel's
/// receive time of the data in ns since the Unix epoch, if it gave one.
pub fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // u64s keep the control buffer aligned for cmsghdr.
    let mut control = [0u64; 8];
    // SAFETY: an all-zero msghdr is a valid "no name, no iovecs, no control" value.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: `msg` points at one iovec over `buf` (valid for `buf.len()` bytes) and at
    // `control` (valid for its size); all outlive the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: `msg` was filled by recvmsg; CMSG_FIRSTHDR/NXTHDR stay within msg_controllen and
    // return null past the end.
    let mut c = unsafe { libc::CMSG_FIRSTHDR(&msg) };
    while !c.is_null() {
        // SAFETY: `c` is non-null and points at a header inside `control`.
        let h = unsafe { &*c };
        // SAFETY: computes a length, touches no memory.
        let want = unsafe { libc::CMSG_LEN(std::mem::size_of::<libc::timespec>() as u32) };
        if h.cmsg_level == libc::SOL_SOCKET
            && h.cmsg_type == SO_TIMESTAMPNS
            && h.cmsg_len as usize >= want as usize
        {
            // SAFETY: the header says its data holds a timespec; read_unaligned copes with
            // the data's alignment.
            let t = unsafe { libc::CMSG_DATA(c).cast::<libc::timespec>().read_unaligned() };
            if t.tv_sec >= 0 && t.tv_nsec >= 0 {
                stamp = Some(t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64);
            }
        }
        // SAFETY: as above.
        c = unsafe { libc::CMSG_NXTHDR(&msg, c) };
    }
    Ok((n as usize, stamp))
}

#[cfg(test)]
mod tests;
