//! fetchItemAspects's download: the answer, a gzipped JSON file that can pass 100 MB, streams
//! to disk (a temporary file beside the destination, named and cleaned up as the snapshot
//! writer's are, renamed into place only once every gzip member arrived whole and the JSON
//! inside ended, within its limits). The file is read with `taxonomy-model`'s
//! [`ItemAspectsReader`](crate::model::ItemAspectsReader).

use std::io::{self, Read, Write};
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;
use taxonomy_model::ItemAspectsFile;
use taxonomy_tree::atomic::{self, Staging};

use super::ApiError;

/// Follows the decompressed JSON as it streams by without keeping it: counts it against the
/// limit, and tells whether the top-level object ended, with only white space after it.
/// Only a file whose JSON ended is put in place: a cut-off answer (even one whose
/// `Content-Length` matched, or whose gzip stream was whole) never replaces a good file.
struct JsonCheck {
    bytes: u64,
    limit: u64,
    state: JsonState,
    /// Open objects and arrays.
    depth: u64,
    /// Why the check stopped the stream (the limit, or JSON that cannot be this file).
    failure: Option<CheckFailure>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonState {
    /// Before the top-level object: white space only.
    Before,
    /// Inside it, outside any string.
    Value,
    /// Inside a string; `escaped` after a backslash.
    Text { escaped: bool },
    /// After the top-level object: white space only.
    After,
}

#[derive(Debug, Clone)]
enum CheckFailure {
    TooLarge,
    NotThisJson(String),
}

impl JsonCheck {
    fn new(limit: u64) -> Self {
        Self {
            bytes: 0,
            limit,
            state: JsonState::Before,
            depth: 0,
            failure: None,
        }
    }

    fn fail(&mut self, failure: CheckFailure) -> io::Error {
        self.failure = Some(failure);
        io::Error::other("the item aspects file was refused")
    }

    /// Why the JSON, complete as it is, is not a whole file.
    fn unfinished(&self) -> Option<String> {
        match self.state {
            JsonState::After => None,
            JsonState::Before => Some("it holds no JSON".into()),
            JsonState::Value | JsonState::Text { .. } => Some(format!(
                "its JSON ends before its end, after {} bytes, {} levels deep{}",
                self.bytes,
                self.depth,
                if matches!(self.state, JsonState::Text { .. }) {
                    " inside a string"
                } else {
                    ""
                }
            )),
        }
    }
}

impl Write for JsonCheck {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes += buf.len() as u64;
        if self.bytes > self.limit {
            return Err(self.fail(CheckFailure::TooLarge));
        }
        for (i, &b) in buf.iter().enumerate() {
            self.state = match (self.state, b) {
                (JsonState::Text { escaped: false }, b'\\') => JsonState::Text { escaped: true },
                (JsonState::Text { escaped: false }, b'"') => JsonState::Value,
                (JsonState::Text { .. }, _) => JsonState::Text { escaped: false },
                (JsonState::Before | JsonState::After, b' ' | b'\n' | b'\r' | b'\t') => self.state,
                (JsonState::Before, b'{') => {
                    self.depth = 1;
                    JsonState::Value
                }
                (JsonState::Before, _) => {
                    let reason = "its JSON is not an object".to_owned();
                    return Err(self.fail(CheckFailure::NotThisJson(reason)));
                }
                (JsonState::After, _) => {
                    let at = self.bytes - (buf.len() - i) as u64;
                    let reason = format!("there is data after its JSON object, at byte {at}");
                    return Err(self.fail(CheckFailure::NotThisJson(reason)));
                }
                (JsonState::Value, b'"') => JsonState::Text { escaped: false },
                (JsonState::Value, b'{' | b'[') => {
                    self.depth += 1;
                    JsonState::Value
                }
                (JsonState::Value, b'}' | b']') => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        JsonState::After
                    } else {
                        JsonState::Value
                    }
                }
                (JsonState::Value, _) => JsonState::Value,
            };
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where the answer goes, once its first bytes told what it is.
enum Sink {
    /// Fewer than two bytes so far: not decided yet.
    Undecided(Staging, Vec<u8>),
    /// A gzip file (as eBay sends it): stored as is, checked by decompressing every member on
    /// the fly.
    Gzip(Staging, flate2::write::MultiGzDecoder<JsonCheck>),
    /// JSON that the transport already decompressed: compressed again while stored.
    Json(GzEncoder<Staging>, JsonCheck),
}

/// Streams a successful fetchItemAspects answer into `dest`.
pub(crate) struct Download<'a> {
    pub(crate) dest: &'a Path,
    pub(crate) url: &'a str,
    /// The most bytes received.
    pub(crate) limit: u64,
    /// The most bytes of JSON inside.
    pub(crate) json_limit: u64,
    /// Called as bytes arrive: bytes received so far (as sent: compressed), and the
    /// announced size (`Content-Length`), if any.
    pub(crate) on_progress: &'a mut dyn FnMut(u64, Option<u64>),
}

fn file_error(path: &Path, e: &io::Error) -> ApiError {
    ApiError::File {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

impl Download<'_> {
    /// A failed read of the body: its time-out (`TimedOut`), else a cut-off body (retried).
    fn read_error(&self, e: io::Error, received: u64) -> ApiError {
        let (url, message) = (self.url.to_owned(), e.to_string());
        match e.kind() {
            io::ErrorKind::TimedOut => ApiError::Timeout { url, message },
            _ => ApiError::Truncated {
                url,
                received,
                message,
            },
        }
    }

    /// Reads `body` to its end into a temporary file beside `dest` (named and cleaned up as
    /// [`taxonomy_tree::atomic`] names its own), checks that it is a whole gzip stream (every
    /// member) holding one whole JSON object within the limit, and renames it over `dest`. On
    /// any failure the temporary file is removed and `dest` is left as it was.
    pub(crate) fn run(
        &mut self,
        body: &mut dyn Read,
        total: Option<u64>,
        tree_id: u32,
    ) -> Result<ItemAspectsFile, ApiError> {
        if total.is_some_and(|n| n > self.limit) {
            return Err(self.too_large(self.limit));
        }
        // From here on the temporary file is removed on any error (when the sink drops).
        let staging = atomic::stage_file(self.dest, None).map_err(|e| file_error(self.dest, &e))?;
        let mut sink = Sink::Undecided(staging, Vec::new());
        let mut received = 0u64;
        let mut chunk = vec![0u8; 64 * 1024];
        (self.on_progress)(received, total);
        loop {
            let n = match body.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.read_error(e, received)),
            };
            received += n as u64;
            if received > self.limit {
                return Err(self.too_large(self.limit));
            }
            sink = self.feed(sink, &chunk[..n])?;
            (self.on_progress)(received, total);
        }
        let (staging, json) = match sink {
            Sink::Undecided(..) => {
                return Err(self.unexpected(format!("the answer holds no JSON ({received} bytes)")));
            }
            Sink::Gzip(staging, mut check) => {
                check.try_finish().map_err(|e| {
                    self.refused(check.get_ref(), || {
                        format!(
                            "the gzip file ends before its end or is corrupt ({e}) after \
                             {received} bytes"
                        )
                    })
                })?;
                let json = check.get_ref();
                if let Some(reason) = json.unfinished() {
                    return Err(self.unexpected(format!("the gzip file is whole but {reason}")));
                }
                (staging, json.bytes)
            }
            Sink::Json(gz, json) => {
                if let Some(reason) = json.unfinished() {
                    return Err(
                        self.unexpected(format!("the answer is not a whole file: {reason}"))
                    );
                }
                let staging = gz.finish().map_err(|e| file_error(self.dest, &e))?;
                (staging, json.bytes)
            }
        };
        let compressed_bytes = staging
            .bytes_written()
            .map_err(|e| file_error(self.dest, &e))?;
        let staged = staging.finish().map_err(|e| file_error(self.dest, &e))?;
        staged.commit().map_err(|e| file_error(self.dest, &e))?;
        Ok(ItemAspectsFile {
            path: self.dest.to_owned(),
            tree_id,
            compressed_bytes,
            json_bytes: json,
        })
    }

    /// Writes `bytes` to the temporary file through the sink's check; the first two bytes
    /// decide the sink: gzip by its magic bytes, else JSON.
    fn feed(&self, sink: Sink, bytes: &[u8]) -> Result<Sink, ApiError> {
        match sink {
            Sink::Undecided(staging, mut head) => {
                head.extend_from_slice(bytes);
                if head.len() < 2 {
                    return Ok(Sink::Undecided(staging, head));
                }
                let check = JsonCheck::new(self.json_limit);
                let decided = if head.starts_with(&[0x1f, 0x8b]) {
                    Sink::Gzip(staging, flate2::write::MultiGzDecoder::new(check))
                } else {
                    Sink::Json(GzEncoder::new(staging, Compression::default()), check)
                };
                self.feed(decided, &head)
            }
            Sink::Gzip(mut staging, mut check) => {
                staging
                    .write_all(bytes)
                    .map_err(|e| file_error(self.dest, &e))?;
                check.write_all(bytes).map_err(|e| {
                    self.refused(check.get_ref(), || format!("the gzip file is corrupt: {e}"))
                })?;
                Ok(Sink::Gzip(staging, check))
            }
            Sink::Json(mut gz, mut check) => {
                check
                    .write_all(bytes)
                    .map_err(|_| self.refused(&check, String::new))?;
                gz.write_all(bytes).map_err(|e| file_error(self.dest, &e))?;
                Ok(Sink::Json(gz, check))
            }
        }
    }

    /// The error for a stream the check (or the gzip decoder, `otherwise`) refused.
    fn refused(&self, check: &JsonCheck, otherwise: impl FnOnce() -> String) -> ApiError {
        match &check.failure {
            Some(CheckFailure::TooLarge) => self.too_large(self.json_limit),
            Some(CheckFailure::NotThisJson(reason)) => {
                self.unexpected(format!("the answer is not an item aspects file: {reason}"))
            }
            None => self.unexpected(otherwise()),
        }
    }

    fn too_large(&self, limit: u64) -> ApiError {
        ApiError::BodyTooLarge {
            url: self.url.to_owned(),
            limit,
        }
    }

    fn unexpected(&self, reason: String) -> ApiError {
        ApiError::UnexpectedBody {
            url: self.url.to_owned(),
            status: 200,
            reason,
            body: String::new(),
        }
    }
}
