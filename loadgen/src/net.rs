//! Thin wrappers over non-blocking TCP sockets (raw fds: the event loop needs
//! nothing more, and no per-call allocation).

use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage.
            unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in, sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage.
            unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in6, sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

/// Starts a non-blocking connect. Returns the fd and whether it connected at once.
pub fn start_connect(addr: &SocketAddr) -> io::Result<(RawFd, bool)> {
    let family = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    // SAFETY: plain syscalls on an fd we own; closed on every error path.
    unsafe {
        let fd = libc::socket(family, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let one: libc::c_int = 1;
        let one_ptr = &one as *const _ as *const libc::c_void;
        let one_len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, one_ptr, one_len);
        // Receive timestamps: when each response reached this host, whenever we read it.
        libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, one_ptr, one_len);
        let (sa, len) = sockaddr(addr);
        if libc::connect(fd, &sa as *const _ as *const libc::sockaddr, len) == 0 {
            return Ok((fd, true));
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EINPROGRESS) {
            return Ok((fd, false));
        }
        libc::close(fd);
        Err(err)
    }
}

/// The outcome of a non-blocking connect once the socket became writable.
pub fn take_connect_error(fd: RawFd) -> Option<io::Error> {
    let mut err: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: err/len are valid out-parameters.
    let r = unsafe {
        libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut err as *mut _ as *mut libc::c_void, &mut len)
    };
    if r < 0 {
        return Some(io::Error::last_os_error());
    }
    (err != 0).then(|| io::Error::from_raw_os_error(err))
}

/// write(2); Ok(0) never means EOF here, WouldBlock is returned as an error kind.
#[inline]
pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: buf is a valid readable slice. MSG_NOSIGNAL: a closed peer gives EPIPE, not SIGPIPE.
    let n = unsafe { libc::send(fd, buf.as_ptr() as *const libc::c_void, buf.len(), libc::MSG_NOSIGNAL) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// recv(2) that also returns the kernel's receive timestamp (CLOCK_REALTIME ns) of
/// the last segment read, or 0 when the kernel gave none.
#[inline]
pub fn read_stamped(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, u64)> {
    // Room for one struct timespec control message (aligned as cmsghdr wants).
    let mut control = [0u64; 8];
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
    // SAFETY: msghdr is plain data; every pointer in it refers to live buffers above.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: as above; the kernel writes at most msg_controllen bytes of control data.
    let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = 0u64;
    // SAFETY: the CMSG_* macros walk the control buffer the kernel filled in.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                stamp = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok((n as usize, stamp))
}

pub fn close(fd: RawFd) {
    // SAFETY: the caller owns fd and forgets it afterwards.
    unsafe { libc::close(fd) };
}
