//! A minimal incremental HTTP/1.x response parser (status line, headers,
//! Content-Length / chunked / until-close bodies, keep-alive), plus the request
//! check wrk does on the script's first request.
//!
//! It is fed whatever each read returned and keeps only a small carry-over for a
//! line split across reads, so the fast path allocates nothing. Headers and body are
//! collected only when a Lua `response` hook wants them.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    StatusLine,
    Headers,
    Body { remaining: u64 },
    ChunkSize,
    ChunkData { remaining: u64 },
    ChunkDataEnd,
    Trailers,
    UntilClose,
}

const MAX_LINE: usize = 64 * 1024;

#[derive(Debug)]
pub struct ResponseParser {
    state: State,
    status: u16,
    content_length: Option<u64>,
    chunked: bool,
    keep_alive: bool,
    /// The request was HEAD: the response has headers only, whatever its length says.
    head: bool,
    /// Part of a line split across reads.
    carry: Vec<u8>,
    collect: bool,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// What `feed` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Feed {
    /// All input consumed, the response is not complete yet.
    NeedMore,
    /// A response completed after `consumed` bytes of the input.
    Complete { consumed: usize },
}

#[derive(Debug, PartialEq, Eq)]
pub struct ParseError(pub String);

fn trim(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !c.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &b[start..end.max(start)]
}

fn contains_ignore_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

fn parse_u64(b: &[u8], radix: u32) -> Option<u64> {
    if b.is_empty() {
        return None;
    }
    let s = std::str::from_utf8(b).ok()?;
    u64::from_str_radix(s, radix).ok()
}

impl ResponseParser {
    pub fn new(collect: bool) -> Self {
        ResponseParser {
            state: State::StatusLine,
            status: 0,
            content_length: None,
            chunked: false,
            keep_alive: true,
            head: false,
            carry: Vec::new(),
            collect,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn status(&self) -> u16 {
        self.status
    }

    /// Tells the parser the request was a HEAD (kept until changed).
    pub fn set_head(&mut self, head: bool) {
        self.head = head;
    }

    /// Whether the connection may carry another request after this response.
    pub fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// Prepares for the next response on the same connection.
    pub fn reset(&mut self) {
        self.state = State::StatusLine;
        self.status = 0;
        self.content_length = None;
        self.chunked = false;
        self.keep_alive = true;
        self.carry.clear();
        if self.collect {
            self.headers.clear();
            self.body.clear();
        }
    }

    /// Part of a response has been read, not all of it.
    pub fn in_progress(&self) -> bool {
        self.state != State::StatusLine || !self.carry.is_empty()
    }

    /// The peer closed the connection: completes a read-until-close body.
    pub fn finish_on_eof(&mut self) -> bool {
        self.state == State::UntilClose
    }

    /// Feeds bytes; stops at the end of one response (the caller resets and feeds
    /// the rest, if any).
    pub fn feed(&mut self, input: &[u8]) -> Result<Feed, ParseError> {
        let mut pos = 0;
        while pos < input.len() {
            match self.state {
                State::Body { remaining } => {
                    let take = remaining.min((input.len() - pos) as u64) as usize;
                    if self.collect {
                        self.body.extend_from_slice(&input[pos..pos + take]);
                    }
                    pos += take;
                    let remaining = remaining - take as u64;
                    if remaining == 0 {
                        return Ok(Feed::Complete { consumed: pos });
                    }
                    self.state = State::Body { remaining };
                }
                State::ChunkData { remaining } => {
                    let take = remaining.min((input.len() - pos) as u64) as usize;
                    if self.collect {
                        self.body.extend_from_slice(&input[pos..pos + take]);
                    }
                    pos += take;
                    let remaining = remaining - take as u64;
                    self.state = if remaining == 0 { State::ChunkDataEnd } else { State::ChunkData { remaining } };
                }
                State::UntilClose => {
                    if self.collect {
                        self.body.extend_from_slice(&input[pos..]);
                    }
                    pos = input.len();
                }
                _ => {
                    let (used, done) = self.feed_line(&input[pos..])?;
                    pos += used;
                    if done {
                        return Ok(Feed::Complete { consumed: pos });
                    }
                }
            }
        }
        Ok(Feed::NeedMore)
    }

    /// In a line-oriented state: takes `rest` up to and including its first '\n' (or
    /// all of it, kept until the line is complete). Returns the bytes taken and
    /// whether the response is complete.
    fn feed_line(&mut self, rest: &[u8]) -> Result<(usize, bool), ParseError> {
        let Some(nl) = rest.iter().position(|&c| c == b'\n') else {
            if self.carry.len() + rest.len() > MAX_LINE {
                return Err(ParseError("response line longer than 64 KiB".into()));
            }
            self.carry.extend_from_slice(rest);
            return Ok((rest.len(), false));
        };
        if self.carry.is_empty() {
            return Ok((nl + 1, self.on_line(&rest[..nl])?));
        }
        let mut line = std::mem::take(&mut self.carry);
        line.extend_from_slice(&rest[..nl]);
        let done = self.on_line(&line);
        // The buffer is kept for the next partial line (no allocation per response).
        line.clear();
        self.carry = line;
        Ok((nl + 1, done?))
    }

    /// Handles one line (without its '\n'); returns true when the response is complete.
    fn on_line(&mut self, line: &[u8]) -> Result<bool, ParseError> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match self.state {
            State::StatusLine => {
                if line.is_empty() {
                    return Ok(false); // tolerate stray CRLF between responses
                }
                // "HTTP/1.1 200 OK"
                if line.len() < 12 || !line.starts_with(b"HTTP/1.") || line[8] != b' ' {
                    return Err(ParseError(format!(
                        "bad status line '{}'",
                        String::from_utf8_lossy(&line[..line.len().min(80)])
                    )));
                }
                let status = parse_u64(&line[9..12], 10).ok_or_else(|| ParseError("bad status code".into()))?;
                self.status = status as u16;
                self.keep_alive = line[7] != b'0'; // HTTP/1.0 closes by default
                self.state = State::Headers;
                Ok(false)
            }
            State::Headers => {
                if line.is_empty() {
                    return Ok(self.headers_done());
                }
                self.on_header(line)?;
                Ok(false)
            }
            State::ChunkSize => {
                let size = line.split(|&c| c == b';').next().map(trim).unwrap_or(b"");
                let n = parse_u64(size, 16).ok_or_else(|| ParseError("bad chunk size".into()))?;
                self.state = if n == 0 { State::Trailers } else { State::ChunkData { remaining: n } };
                Ok(false)
            }
            State::ChunkDataEnd => {
                if !line.is_empty() {
                    return Err(ParseError("chunk data longer than its size".into()));
                }
                self.state = State::ChunkSize;
                Ok(false)
            }
            State::Trailers => Ok(line.is_empty()),
            State::Body { .. } | State::ChunkData { .. } | State::UntilClose => unreachable!("not a line state"),
        }
    }

    fn on_header(&mut self, line: &[u8]) -> Result<(), ParseError> {
        let colon = line.iter().position(|&c| c == b':').ok_or_else(|| {
            ParseError(format!("bad header line '{}'", String::from_utf8_lossy(&line[..line.len().min(80)])))
        })?;
        let (name, value) = (trim(&line[..colon]), trim(&line[colon + 1..]));
        // Only three headers matter; compare lengths first (no allocation).
        match name.len() {
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                self.content_length =
                    Some(parse_u64(value, 10).ok_or_else(|| ParseError("bad Content-Length".into()))?);
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                self.chunked = contains_ignore_case(value, b"chunked");
            }
            10 if name.eq_ignore_ascii_case(b"connection") => {
                if contains_ignore_case(value, b"close") {
                    self.keep_alive = false;
                } else if contains_ignore_case(value, b"keep-alive") {
                    self.keep_alive = true;
                }
            }
            _ => {}
        }
        if self.collect {
            self.headers
                .push((String::from_utf8_lossy(name).into_owned(), String::from_utf8_lossy(value).into_owned()));
        }
        Ok(())
    }

    fn headers_done(&mut self) -> bool {
        if (100..200).contains(&self.status) {
            // Interim response (100 Continue): the real one follows.
            self.state = State::StatusLine;
            if self.collect {
                self.headers.clear();
            }
            return false;
        }
        if self.head || self.status == 204 || self.status == 304 {
            return true;
        }
        if self.chunked {
            self.state = State::ChunkSize;
            false
        } else if let Some(n) = self.content_length {
            if n == 0 {
                return true;
            }
            self.state = State::Body { remaining: n };
            false
        } else {
            self.keep_alive = false;
            self.state = State::UntilClose;
            false
        }
    }
}

/// Counts the requests in a request buffer (several when a script pipelines) and
/// checks each is complete, like wrk's check of the first `request()` result.
/// Errors name the line and column where parsing stopped.
pub fn count_requests(buf: &[u8]) -> Result<usize, String> {
    let mut pos = 0;
    let mut count = 0;
    let where_ = |at: usize| {
        let before = &buf[..at.min(buf.len())];
        let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
        let col = at - before.iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1) + 1;
        format!("at {line}:{col}")
    };
    while pos < buf.len() {
        let head_end = buf[pos..]
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| format!("incomplete request {}", where_(buf.len())))?;
        let head = &buf[pos..pos + head_end];
        let mut lines = head.split(|&c| c == b'\n');
        let request_line = lines.next().unwrap_or(b"");
        let parts: Vec<&[u8]> = trim(request_line).split(|&c| c == b' ').collect();
        if parts.len() != 3 || parts[0].is_empty() || !parts[2].starts_with(b"HTTP/1.") {
            return Err(format!(
                "invalid request line '{}' {}",
                String::from_utf8_lossy(trim(request_line)),
                where_(pos)
            ));
        }
        let mut length = 0u64;
        for l in lines {
            if let Some(c) = l.iter().position(|&c| c == b':') {
                if trim(&l[..c]).eq_ignore_ascii_case(b"content-length") {
                    length = parse_u64(trim(&l[c + 1..]), 10)
                        .ok_or_else(|| format!("invalid Content-Length {}", where_(pos)))?;
                }
            } else {
                return Err(format!("invalid header line {}", where_(pos)));
            }
        }
        pos += head_end + 4 + length as usize;
        if pos > buf.len() {
            return Err(format!("incomplete request body {}", where_(buf.len())));
        }
        count += 1;
    }
    if count == 0 {
        return Err("empty request".into());
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(p: &mut ResponseParser, chunks: &[&[u8]]) -> Vec<u16> {
        let mut done = Vec::new();
        for c in chunks {
            let mut off = 0;
            while off < c.len() {
                match p.feed(&c[off..]).unwrap() {
                    Feed::Complete { consumed } => {
                        done.push(p.status());
                        off += consumed;
                        p.reset();
                    }
                    Feed::NeedMore => break,
                }
            }
        }
        done
    }

    #[test]
    fn content_length_in_one_read_and_split_anywhere() {
        let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: y\r\n\r\nhello";
        for split in 0..resp.len() {
            let mut p = ResponseParser::new(true);
            let got = parse_all(&mut p, &[&resp[..split], &resp[split..]]);
            assert_eq!(got, vec![200], "split at {split}");
        }
        let mut p = ResponseParser::new(true);
        assert_eq!(p.feed(resp).unwrap(), Feed::Complete { consumed: resp.len() });
        assert_eq!(p.body, b"hello");
        assert_eq!(p.headers[1], ("X".to_string(), "y".to_string()));
    }

    #[test]
    fn chunked_with_trailers_and_pipelined() {
        let resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nkey1\n\r\n3;ext=1\r\nabc\r\n0\r\nT: 1\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        for split in 0..resp.len() {
            let mut p = ResponseParser::new(false);
            assert_eq!(parse_all(&mut p, &[&resp[..split], &resp[split..]]), vec![200, 404], "split {split}");
        }
        let mut p = ResponseParser::new(true);
        assert!(matches!(p.feed(resp).unwrap(), Feed::Complete { .. }));
        assert_eq!(p.body, b"key1\nabc");
    }

    #[test]
    fn keep_alive_rules() {
        let mut p = ResponseParser::new(false);
        p.feed(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").unwrap();
        assert!(!p.keep_alive());
        p.reset();
        p.feed(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").unwrap();
        assert!(!p.keep_alive());
        p.reset();
        p.feed(b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n").unwrap();
        assert!(p.keep_alive());
        p.reset();
        assert_eq!(p.feed(b"HTTP/1.1 200 OK\r\n\r\nbody until close").unwrap(), Feed::NeedMore);
        assert!(p.finish_on_eof());
    }

    #[test]
    fn interim_and_empty_statuses() {
        let mut p = ResponseParser::new(false);
        let r = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(p.feed(r).unwrap(), Feed::Complete { consumed: r.len() });
        assert_eq!(p.status(), 204);
    }

    #[test]
    fn head_responses_have_no_body() {
        let mut p = ResponseParser::new(false);
        p.set_head(true);
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
        assert_eq!(p.feed(r).unwrap(), Feed::Complete { consumed: r.len() });
    }

    #[test]
    fn garbage_is_an_error() {
        let mut p = ResponseParser::new(false);
        assert!(p.feed(b"SSH-2.0-OpenSSH\r\n").is_err());
        let mut p = ResponseParser::new(false);
        assert!(p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n").is_err());
    }

    #[test]
    fn request_counting() {
        assert_eq!(count_requests(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"), Ok(1));
        assert_eq!(count_requests(b"PUT /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\n\r\n"), Ok(2));
        assert!(count_requests(b"GET / HTTP/1.1\r\nHost: h\r\n").unwrap_err().contains("incomplete"));
        assert!(count_requests(b"hello\r\n\r\n").unwrap_err().contains("invalid request line"));
        assert!(count_requests(b"").is_err());
    }
}
