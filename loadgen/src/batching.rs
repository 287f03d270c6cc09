//! When a worker wakes to send: exactly at the earliest due request, or, with send
//! slack, a little later so that one wake-up sends several requests. A wake-up (a
//! timer, a context switch) costs more than a send, so fewer wake-ups are most of
//! the generator's CPU at mid rates; the lateness a batch adds is measured from the
//! due time (corrected latency, schedule lag), never hidden.

/// `--send-slack`: how late a request may go out to share a wake-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slack {
    /// At most this many ns.
    Fixed(u64),
    /// A fraction of the interval between two requests of one connection, at most
    /// `AUTO_MAX_NS`: lateness small against what a connection waits anyway.
    Auto,
}

/// A fixed `--send-slack` is at most this many ns: more would delay requests for little gain.
pub const MAX_FIXED_NS: u64 = 10_000_000;

/// `auto`: this share of one connection's interval between requests...
pub const AUTO_FRACTION: f64 = 1.0 / 8.0;
/// ...and never more than this.
pub const AUTO_MAX_NS: u64 = 100_000;

impl Slack {
    /// The slack (ns) while the whole run offers `rate` requests/s over `conns` connections.
    pub fn at(self, rate: f64, conns: u64) -> u64 {
        match self {
            Slack::Fixed(ns) => ns,
            Slack::Auto if rate > 0.0 => ((conns as f64 / rate * 1e9 * AUTO_FRACTION) as u64).min(AUTO_MAX_NS),
            Slack::Auto => 0,
        }
    }

    /// The largest slack this setting can give (the JSON's `send_slack_us`).
    pub fn max_ns(self) -> u64 {
        match self {
            Slack::Fixed(ns) => ns,
            Slack::Auto => AUTO_MAX_NS,
        }
    }
}

/// The wake-up time for the earliest due request `first`, given the due times of
/// the others (in any order): the latest of them that falls due within `slack` of
/// `first`. Waiting longer than that would only add lateness, so a request with no
/// company within the slack goes out on time.
pub fn wake_for(first: u64, others: impl Iterator<Item = u64>, slack: u64) -> u64 {
    if slack == 0 {
        return first;
    }
    let limit = first.saturating_add(slack);
    others.filter(|&t| t <= limit).fold(first, u64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_request_is_not_delayed() {
        assert_eq!(wake_for(1000, [5000u64, 9000].into_iter(), 2000), 1000);
        assert_eq!(wake_for(1000, [1500u64, 2500, 3500].into_iter(), 2000), 2500);
        assert_eq!(wake_for(1000, [1500u64].into_iter(), 0), 1000);
    }

    #[test]
    fn auto_slack_follows_the_per_connection_interval() {
        // 20,000/s over 16 connections: 800 µs per connection, 1/8 of it.
        assert_eq!(Slack::Auto.at(20_000.0, 16), 100_000);
        assert_eq!(Slack::Auto.at(200_000.0, 16), 10_000);
        assert_eq!(Slack::Auto.at(10.0, 1), AUTO_MAX_NS);
        assert_eq!(Slack::Fixed(5).at(1.0, 1), 5);
    }
}
