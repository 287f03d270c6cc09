//! The target URL, split the way wrk exposes it to scripts (`wrk.scheme`,
//! `wrk.host`, `wrk.port` (nil when absent), `wrk.path` with the query).

#[derive(Clone, Debug, PartialEq)]
pub struct Url {
    pub scheme: String,
    pub host: String,
    pub port: Option<String>,
    /// Path and query, `/` when the URL has none.
    pub path: String,
}

impl Url {
    pub fn parse(s: &str) -> Result<Url, String> {
        let bad = |why: &str| format!("invalid URL '{s}': {why}");
        let (scheme, rest) = s.split_once("://").ok_or_else(|| bad("expected http://host[:port][/path]"))?;
        let scheme = scheme.to_ascii_lowercase();
        match scheme.as_str() {
            "http" => {}
            "https" => return Err(bad("https is not supported, only plain http")),
            _ => return Err(bad(&format!("unsupported scheme '{scheme}', only http"))),
        }
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        if authority.contains('@') {
            return Err(bad("user info in URLs is not supported"));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '[' in the host"))?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(|| bad("garbage after the IPv6 address"))?.to_string()),
            };
            (h.to_string(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p.to_string())),
                None => (authority.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(bad("missing host"));
        }
        if let Some(p) = &port {
            match p.parse::<u16>() {
                Ok(n) if n > 0 => {}
                _ => return Err(bad(&format!("port '{p}' is not a number between 1 and 65535"))),
            }
        }
        if path.contains(char::is_whitespace) {
            return Err(bad("the path contains whitespace"));
        }
        Ok(Url { scheme, host, port, path })
    }

    /// The port to connect to (80 when the URL has none).
    pub fn service(&self) -> String {
        self.port.clone().unwrap_or_else(|| "80".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_wrk() {
        let u = Url::parse("http://127.0.0.1:8081").unwrap();
        assert_eq!((u.host.as_str(), u.port.as_deref(), u.path.as_str()), ("127.0.0.1", Some("8081"), "/"));
        let u = Url::parse("http://localhost/v0/entity?id=1").unwrap();
        assert_eq!((u.port.as_deref(), u.path.as_str(), u.service().as_str()), (None, "/v0/entity?id=1", "80"));
        let u = Url::parse("http://[::1]:9000/x").unwrap();
        assert_eq!((u.host.as_str(), u.port.as_deref()), ("::1", Some("9000")));
        let u = Url::parse("http://h?q=1").unwrap();
        assert_eq!(u.path, "/?q=1");
    }

    #[test]
    fn rejects_bad_urls() {
        for bad in
            ["127.0.0.1:8080", "https://h/", "ftp://h/", "http://", "http://h:0/", "http://h:99999/", "http://h:x/"]
        {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }
}
