//! What a front does with one request, and the one rule for reading an answer's body.
//!
//! A front sends the core's `http::Request`, then feeds the answer's body to a
//! [`Collector`] chunk by chunk, and hands the core an [`Answer`] or a [`Failure`]. The
//! collector holds the limits: a success body larger than its limit ends the call as soon as
//! it passes it (without reading the rest); an error body is only kept up to its limit (its
//! start is all an error shows), and a broken error body is no reason to fail differently.

use zeroize::Zeroizing;

/// The largest body read of each kind of answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// A 2xx answer: past this the call fails ([`FailureKind::TooLarge`]).
    pub(crate) success: u64,
    /// Any other answer: past this the rest is not read.
    pub(crate) error: u64,
}

/// An answer, read whole (within its limit).
pub(crate) struct Answer {
    /// The status code.
    pub(crate) status: u16,
    /// The headers.
    pub(crate) headers: http::HeaderMap,
    /// The body (zeroed when dropped: a token answer holds secrets).
    pub(crate) body: Zeroizing<Vec<u8>>,
}

impl Answer {
    /// A 2xx status.
    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// What went wrong before an answer was read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureKind {
    /// No connection (refused, unreachable, DNS, TLS).
    Connect,
    /// The time-out ran out.
    TimedOut,
    /// A success body passed its limit.
    TooLarge,
    /// The body ended early (the connection broke) after `received` bytes.
    Cut {
        /// Bytes received before the break.
        received: u64,
    },
    /// Any other failure to send or receive.
    Other,
}

/// A failed exchange.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    /// What kind of failure.
    pub(crate) kind: FailureKind,
    /// The transport's message, its sources on one line.
    pub(crate) message: String,
    /// Whether the status line had arrived (a time-out while reading the body).
    pub(crate) answered: bool,
}

impl Failure {
    /// A failure to send (no answer yet), as the HTTP client reports it.
    pub(crate) fn sending(timed_out: bool, connect: bool, message: String) -> Self {
        let kind = if timed_out {
            FailureKind::TimedOut
        } else if connect {
            FailureKind::Connect
        } else {
            FailureKind::Other
        };
        Self {
            kind,
            message,
            answered: false,
        }
    }
}

/// Whether to go on reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Read the next chunk.
    More,
    /// Stop: what is kept is complete (an error body at its limit).
    Enough,
}

/// Collects one answer's body within its limit: the one bounded read of both fronts.
pub(crate) struct Collector {
    status: u16,
    headers: http::HeaderMap,
    limit: u64,
    bytes: Zeroizing<Vec<u8>>,
}

impl Collector {
    /// Starts reading an answer of `status` whose announced length is `content_length`. A
    /// success announced larger than its limit fails at once.
    pub(crate) fn start(
        status: u16,
        headers: http::HeaderMap,
        content_length: Option<u64>,
        limits: Limits,
    ) -> Result<Self, Failure> {
        let success = (200..300).contains(&status);
        let limit = if success {
            limits.success
        } else {
            limits.error
        };
        if success && content_length.is_some_and(|n| n > limit) {
            return Err(too_large());
        }
        Ok(Self {
            status,
            headers,
            limit,
            bytes: Zeroizing::new(Vec::new()),
        })
    }

    /// Bytes kept so far.
    pub(crate) fn received(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Takes the next chunk of the body.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<Flow, Failure> {
        let room = self.limit.saturating_sub(self.received());
        if (chunk.len() as u64) <= room {
            self.bytes.extend_from_slice(chunk);
            return Ok(Flow::More);
        }
        if (200..300).contains(&self.status) {
            return Err(too_large());
        }
        self.bytes.extend_from_slice(&chunk[..room as usize]);
        Ok(Flow::Enough)
    }

    /// The body ended: the answer.
    pub(crate) fn finish(self) -> Answer {
        Answer {
            status: self.status,
            headers: self.headers,
            body: self.bytes,
        }
    }

    /// Reading the body failed (`timed_out`: the time-out ran out). An error answer keeps
    /// what arrived; a success fails, as a time-out or a cut-off body.
    pub(crate) fn broken(self, timed_out: bool, message: String) -> Result<Answer, Failure> {
        if !(200..300).contains(&self.status) {
            return Ok(self.finish());
        }
        let kind = if timed_out {
            FailureKind::TimedOut
        } else {
            FailureKind::Cut {
                received: self.received(),
            }
        };
        Err(Failure {
            kind,
            message,
            answered: true,
        })
    }
}

fn too_large() -> Failure {
    Failure {
        kind: FailureKind::TooLarge,
        message: String::new(),
        answered: true,
    }
}

/// An error and its sources on one line, without repeating a source its parent already quotes.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = s.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        success: 10,
        error: 4,
    };

    #[test]
    fn a_success_past_its_limit_fails_and_an_error_body_is_cut() {
        let announced = Collector::start(200, http::HeaderMap::new(), Some(11), LIMITS);
        assert_eq!(announced.err().map(|f| f.kind), Some(FailureKind::TooLarge));
        let mut ok = Collector::start(200, http::HeaderMap::new(), None, LIMITS).unwrap();
        assert_eq!(ok.push(b"0123456789").unwrap(), Flow::More);
        assert_eq!(
            ok.push(b"x").err().map(|f| f.kind),
            Some(FailureKind::TooLarge)
        );
        let mut error = Collector::start(500, http::HeaderMap::new(), Some(99), LIMITS).unwrap();
        assert_eq!(error.push(b"abcdef").unwrap(), Flow::Enough);
        assert_eq!(&error.finish().body[..], b"abcd");
    }

    #[test]
    fn a_broken_error_body_keeps_what_came_and_a_broken_success_fails() {
        let mut error = Collector::start(503, http::HeaderMap::new(), None, LIMITS).unwrap();
        error.push(b"ab").unwrap();
        assert_eq!(
            &error.broken(false, "reset".into()).ok().unwrap().body[..],
            b"ab"
        );
        let mut ok = Collector::start(200, http::HeaderMap::new(), None, LIMITS).unwrap();
        ok.push(b"abc").unwrap();
        let failure = ok.broken(false, "reset".into()).err().unwrap();
        assert_eq!(failure.kind, FailureKind::Cut { received: 3 });
    }
}
