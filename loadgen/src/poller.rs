//! epoll with nanosecond timeouts (`epoll_pwait2`, Linux ≥ 5.11), so a worker can
//! sleep exactly until its next request is due instead of rounding to milliseconds.
//! On older kernels it falls back to `epoll_wait` with millisecond timeouts.

use std::io;
use std::os::fd::RawFd;

pub const READABLE: u32 = libc::EPOLLIN as u32;
pub const WRITABLE: u32 = libc::EPOLLOUT as u32;

pub struct Poller {
    epfd: RawFd,
    has_pwait2: bool,
}

impl Poller {
    pub fn new() -> io::Result<Poller> {
        // SAFETY: plain syscall; the fd is owned by the Poller and closed in Drop.
        let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epfd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut p = Poller { epfd, has_pwait2: true };
        let mut ev = [libc::epoll_event { events: 0, u64: 0 }; 1];
        if p.wait_pwait2(&mut ev, 0).is_err() {
            p.has_pwait2 = false;
        }
        Ok(p)
    }

    fn ctl(&self, op: i32, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: ev is a valid epoll_event for the duration of the call.
        if unsafe { libc::epoll_ctl(self.epfd, op, fd, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn add(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, events, token)
    }

    pub fn modify(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, events, token)
    }

    fn wait_pwait2(&self, events: &mut [libc::epoll_event], timeout_ns: u64) -> io::Result<usize> {
        let ts = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: events points to a writable array of the given length; ts lives
        // across the call; a null sigmask means "do not change it".
        let n = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.epfd,
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }

    /// Waits for events for at most `timeout_ns`. Returns how many were stored.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ns: u64) -> io::Result<usize> {
        let r = if self.has_pwait2 {
            self.wait_pwait2(events, timeout_ns)
        } else {
            let ms = timeout_ns.div_ceil(1_000_000).min(i32::MAX as u64) as i32;
            // SAFETY: as above.
            let n = unsafe { libc::epoll_wait(self.epfd, events.as_mut_ptr(), events.len() as i32, ms) };
            if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
        };
        match r {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
            other => other,
        }
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        // SAFETY: epfd is owned by this Poller.
        unsafe { libc::close(self.epfd) };
    }
}
