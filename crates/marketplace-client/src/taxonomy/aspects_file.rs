//! fetchItemAspects: the aspects of every leaf category of a marketplace, as one gzipped JSON
//! file that can pass 100 MB compressed. The download streams it to disk (a temporary file
//! beside the destination, named and cleaned up as the snapshot writer's are, renamed into
//! place only once every gzip member arrived whole and the JSON inside ended, within its
//! limits), and [`ItemAspectsReader`] walks the file's `categoryAspects` entries one at a time
//! without ever holding the file, or more than a bounded part of one entry, in memory.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use taxonomy_tree::atomic::{self, Staging};

use super::ApiError;
use super::types::{CategoryAspects, WireCategoryAspect, category_aspects_from_wire, parse_id};

/// How far a download is, for a progress display (e.g. an `indicatif` bar: `set_length` from
/// `total`, `set_position` from `received`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DownloadProgress {
    /// Bytes received so far (as sent: compressed).
    pub received: u64,
    /// The announced size (`Content-Length`), if any.
    pub total: Option<u64>,
}

/// A completed fetchItemAspects download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemAspectsFile {
    /// The gzipped JSON file, in place.
    pub path: PathBuf,
    /// The tree it belongs to.
    pub tree_id: u32,
    /// Its size on disk (compressed).
    pub compressed_bytes: u64,
    /// The size of the JSON inside.
    pub json_bytes: u64,
}

impl ItemAspectsFile {
    /// A reader over the file's entries (see [`ItemAspectsReader::open`]).
    pub fn reader(&self) -> Result<ItemAspectsReader<MultiGzDecoder<File>>, AspectsFileError> {
        ItemAspectsReader::open(&self.path)
    }
}

/// Why a fetchItemAspects file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AspectsFileError {
    /// Reading failed: the file is missing, or its gzip stream is cut off or corrupt.
    #[error("cannot read the item aspects file {path}: {message}")]
    Io {
        /// The file (empty when reading from a stream).
        path: PathBuf,
        /// The I/O error (for a cut-off gzip stream: unexpected end of file).
        message: String,
    },
    /// The JSON is not the fetchItemAspects shape.
    #[error("the item aspects file is not valid at byte {offset} of its JSON: {message}")]
    Syntax {
        /// Offset in the decompressed JSON.
        offset: u64,
        /// What was expected.
        message: String,
    },
    /// One value of the file (an entry, a key, a top-level value) is larger than the reader
    /// holds ([`ItemAspectsReader::with_max_value_bytes`]).
    #[error(
        "the item aspects file has a value of over {limit} bytes at byte {offset} of its JSON; \
         a real file has none this large (raise the reader's limit if this one is genuine)"
    )]
    ValueTooLarge {
        /// Offset in the decompressed JSON where the limit was passed.
        offset: u64,
        /// The limit.
        limit: usize,
    },
    /// One `categoryAspects` entry does not decode.
    #[error("categoryAspects[{index}] cannot be used: {message}")]
    Entry {
        /// Its position in the array.
        index: usize,
        /// Why.
        message: String,
    },
}

// ---- the download ----

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
    pub(crate) on_progress: &'a mut dyn FnMut(DownloadProgress),
}

fn file_error(path: &Path, e: &io::Error) -> ApiError {
    ApiError::File {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

impl Download<'_> {
    /// Reads `body` to its end into a temporary file beside `dest` (named and cleaned up as
    /// [`taxonomy_tree::atomic`] names its own), checks that it is a whole gzip stream (every
    /// member) holding one whole JSON object within the limit, and renames it over `dest`. On
    /// any failure the temporary file is removed and `dest` is left as it was.
    pub(crate) fn run(
        &mut self,
        body: &mut dyn Read,
        total: Option<u64>,
        tree_id: u32,
        map_read_error: &dyn Fn(io::Error, u64) -> ApiError,
    ) -> Result<ItemAspectsFile, ApiError> {
        if total.is_some_and(|n| n > self.limit) {
            return Err(self.too_large(self.limit));
        }
        // From here on the temporary file is removed on any error (when the sink drops).
        let staging = atomic::stage_file(self.dest, None).map_err(|e| file_error(self.dest, &e))?;
        let mut sink = Sink::Undecided(staging, Vec::new());
        let mut received = 0u64;
        let mut chunk = vec![0u8; 64 * 1024];
        (self.on_progress)(DownloadProgress { received, total });
        loop {
            let n = match body.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(map_read_error(e, received)),
            };
            received += n as u64;
            if received > self.limit {
                return Err(self.too_large(self.limit));
            }
            sink = self.feed(sink, &chunk[..n])?;
            (self.on_progress)(DownloadProgress { received, total });
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

// ---- the streaming reader ----

/// Bytes of the decompressed JSON, with one byte of look-ahead and the offset for errors.
struct Bytes<R> {
    inner: R,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    offset: u64,
    path: PathBuf,
    /// The most bytes of one value held at a time.
    max_value: usize,
}

impl<R: Read> Bytes<R> {
    fn peek(&mut self) -> Result<Option<u8>, AspectsFileError> {
        if self.pos == self.len {
            self.pos = 0;
            self.len = loop {
                match self.inner.read(&mut self.buf) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let message = match e.kind() {
                            io::ErrorKind::UnexpectedEof
                            | io::ErrorKind::InvalidData
                            | io::ErrorKind::InvalidInput => format!(
                                "the gzip stream is cut off or corrupt after {} bytes of JSON ({e})",
                                self.offset
                            ),
                            _ => e.to_string(),
                        };
                        return Err(AspectsFileError::Io {
                            path: self.path.clone(),
                            message,
                        });
                    }
                }
            };
            if self.len == 0 {
                return Ok(None);
            }
        }
        Ok(Some(self.buf[self.pos]))
    }

    fn next(&mut self) -> Result<Option<u8>, AspectsFileError> {
        let b = self.peek()?;
        if b.is_some() {
            self.pos += 1;
            self.offset += 1;
        }
        Ok(b)
    }

    fn syntax(&self, message: impl Into<String>) -> AspectsFileError {
        AspectsFileError::Syntax {
            offset: self.offset,
            message: message.into(),
        }
    }

    /// The next byte that is not JSON white space (consumed).
    fn token(&mut self) -> Result<u8, AspectsFileError> {
        loop {
            match self.next()? {
                Some(b' ' | b'\n' | b'\r' | b'\t') => {}
                Some(b) => return Ok(b),
                None => return Err(self.syntax("the JSON ends early")),
            }
        }
    }

    /// Appends `b` to the value being read, which may hold at most `max_value` bytes.
    fn keep(&self, out: &mut Vec<u8>, b: u8) -> Result<(), AspectsFileError> {
        if out.len() >= self.max_value {
            return Err(AspectsFileError::ValueTooLarge {
                offset: self.offset,
                limit: self.max_value,
            });
        }
        out.push(b);
        Ok(())
    }

    /// Copies one string (its opening quote already read) into `out`, quotes included.
    fn string(&mut self, out: &mut Vec<u8>) -> Result<(), AspectsFileError> {
        self.keep(out, b'"')?;
        loop {
            match self.next()? {
                Some(b'"') => {
                    self.keep(out, b'"')?;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.keep(out, b'\\')?;
                    match self.next()? {
                        Some(b) => self.keep(out, b)?,
                        None => return Err(self.syntax("the JSON ends inside a string")),
                    }
                }
                Some(b) => self.keep(out, b)?,
                None => return Err(self.syntax("the JSON ends inside a string")),
            }
        }
    }

    /// Copies one JSON value (its first byte `first` already read) into `out`.
    fn value(&mut self, first: u8, out: &mut Vec<u8>) -> Result<(), AspectsFileError> {
        match first {
            b'"' => self.string(out),
            b'{' | b'[' => {
                self.keep(out, first)?;
                let mut depth = 1usize;
                while depth > 0 {
                    match self.next()? {
                        Some(b'"') => self.string(out)?,
                        Some(b) => {
                            match b {
                                b'{' | b'[' => depth += 1,
                                b'}' | b']' => depth -= 1,
                                _ => {}
                            }
                            self.keep(out, b)?;
                        }
                        None => return Err(self.syntax("the JSON ends inside a value")),
                    }
                }
                Ok(())
            }
            _ => {
                self.keep(out, first)?;
                while let Some(b) = self.peek()? {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.keep(out, b)?;
                    self.next()?;
                }
                Ok(())
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the opening `{`.
    Start,
    /// Inside the top-level object, before a key (or its end).
    Keys { first: bool },
    /// Inside `categoryAspects`, before an entry (or its end).
    Entries { first: bool },
    /// After the top-level object, or after an error.
    Done,
}

/// Iterates the `categoryAspects` entries of a fetchItemAspects file one at a time, straight
/// from the gzip stream: only the entry being decoded is in memory, never the file, and no
/// more than [`with_max_value_bytes`](Self::with_max_value_bytes) of it.
///
/// `categoryTreeId` and `categoryTreeVersion` are available from
/// [`tree_id`](Self::tree_id) / [`tree_version`](Self::tree_version) once the reader has
/// passed them (eBay sends them before the entries). Errors name the byte offset in the JSON
/// or the entry's index; after an error the iterator ends.
///
/// ```
/// use std::io::Write;
/// use marketplace_client::taxonomy::ItemAspectsReader;
/// let json = br#"{"categoryTreeId":"0","categoryTreeVersion":"134","categoryAspects":[
///   {"category":{"categoryId":"9355","categoryName":"Cell Phones & Smartphones"},
///    "aspects":[{"localizedAspectName":"Brand","aspectConstraint":{"aspectRequired":true}}]},
///   {"category":{"categoryId":"20349","categoryName":"Cases"},"aspects":[]}]}"#;
/// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
/// gz.write_all(json).unwrap();
/// let file = gz.finish().unwrap();
///
/// let mut reader = ItemAspectsReader::from_gzip(&file[..]);
/// let first = reader.next().unwrap().unwrap();
/// assert_eq!(first.category.id, 9355);
/// assert!(first.aspects[0].required);
/// assert_eq!(reader.tree_version(), Some("134"));
/// assert_eq!(reader.next().unwrap().unwrap().category.id, 20349);
/// assert!(reader.next().is_none());
/// ```
pub struct ItemAspectsReader<R> {
    bytes: Bytes<R>,
    state: State,
    index: usize,
    tree_id: Option<u32>,
    tree_version: Option<String>,
    scratch: Vec<u8>,
}

impl<R> std::fmt::Debug for ItemAspectsReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemAspectsReader")
            .field("offset", &self.bytes.offset)
            .field("entries_read", &self.index)
            .field("tree_id", &self.tree_id)
            .finish_non_exhaustive()
    }
}

impl ItemAspectsReader<MultiGzDecoder<File>> {
    /// Opens a gzipped fetchItemAspects file (as [`TaxonomyClient::fetch_item_aspects`]
    /// stores it).
    ///
    /// [`TaxonomyClient::fetch_item_aspects`]: super::TaxonomyClient::fetch_item_aspects
    pub fn open(path: &Path) -> Result<Self, AspectsFileError> {
        let file = File::open(path).map_err(|e| AspectsFileError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let mut reader = Self::new(MultiGzDecoder::new(file));
        reader.bytes.path = path.to_owned();
        Ok(reader)
    }
}

impl ItemAspectsReader<Box<dyn Read>> {
    /// Like [`open`](ItemAspectsReader::open), for a file gzipped (as downloaded) or plain
    /// JSON, told apart by the gzip magic bytes (`aspects check --offline`, `aspects diff`).
    pub(crate) fn open_gzipped_or_plain(path: &Path) -> Result<Self, AspectsFileError> {
        use std::io::{BufRead as _, BufReader};
        let io = |e: io::Error| AspectsFileError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        };
        let mut file = BufReader::new(File::open(path).map_err(io)?);
        let gzip = file.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
        let json: Box<dyn Read> = if gzip {
            Box::new(flate2::bufread::MultiGzDecoder::new(file))
        } else {
            Box::new(file)
        };
        let mut reader = Self::new(json);
        reader.bytes.path = path.to_owned();
        Ok(reader)
    }
}

impl<R: Read> ItemAspectsReader<MultiGzDecoder<R>> {
    /// Reads a gzip stream of a fetchItemAspects file.
    pub fn from_gzip(gzip: R) -> Self {
        Self::new(MultiGzDecoder::new(gzip))
    }
}

impl<R: Read> ItemAspectsReader<R> {
    /// The default of [`with_max_value_bytes`](Self::with_max_value_bytes): 64 MiB, far
    /// above the largest entry of a real file.
    pub const DEFAULT_MAX_VALUE_BYTES: usize = 64 * 1024 * 1024;

    /// Holds at most `limit` bytes of one value of the file (an entry of `categoryAspects`,
    /// or a top-level value): a larger one is [`AspectsFileError::ValueTooLarge`], found as
    /// soon as the limit is passed, and ends the iteration.
    pub fn with_max_value_bytes(mut self, limit: usize) -> Self {
        self.bytes.max_value = limit;
        self
    }

    /// Reads the decompressed JSON of a fetchItemAspects file.
    pub fn new(json: R) -> Self {
        Self {
            bytes: Bytes {
                inner: json,
                buf: vec![0u8; 64 * 1024].into_boxed_slice(),
                pos: 0,
                len: 0,
                offset: 0,
                path: PathBuf::new(),
                max_value: Self::DEFAULT_MAX_VALUE_BYTES,
            },
            state: State::Start,
            index: 0,
            tree_id: None,
            tree_version: None,
            scratch: Vec::new(),
        }
    }

    /// `categoryTreeId`, once read.
    pub fn tree_id(&self) -> Option<u32> {
        self.tree_id
    }

    /// `categoryTreeVersion`, once read.
    pub fn tree_version(&self) -> Option<&str> {
        self.tree_version.as_deref()
    }

    /// How many entries were returned so far.
    pub fn entries_read(&self) -> usize {
        self.index
    }

    fn step(&mut self) -> Result<Option<CategoryAspects>, AspectsFileError> {
        loop {
            match self.state {
                State::Done => return Ok(None),
                State::Start => {
                    if self.bytes.token()? != b'{' {
                        return Err(self.bytes.syntax("expected `{` (a JSON object)"));
                    }
                    self.state = State::Keys { first: true };
                }
                State::Keys { first } => {
                    let mut b = self.bytes.token()?;
                    if b == b'}' {
                        self.state = State::Done;
                        // Only white space may follow.
                        loop {
                            match self.bytes.next()? {
                                None => return Ok(None),
                                Some(b' ' | b'\n' | b'\r' | b'\t') => {}
                                Some(_) => {
                                    return Err(self
                                        .bytes
                                        .syntax("there is data after the top-level object"));
                                }
                            }
                        }
                    }
                    if !first {
                        if b != b',' {
                            return Err(self.bytes.syntax("expected `,` or `}` in the object"));
                        }
                        b = self.bytes.token()?;
                    }
                    if b != b'"' {
                        return Err(self.bytes.syntax("expected a key"));
                    }
                    let mut key = Vec::new();
                    self.bytes.string(&mut key)?;
                    if self.bytes.token()? != b':' {
                        return Err(self.bytes.syntax("expected `:` after a key"));
                    }
                    let first_byte = self.bytes.token()?;
                    if key == b"\"categoryAspects\"" {
                        if first_byte != b'[' {
                            return Err(self.bytes.syntax("categoryAspects is not an array"));
                        }
                        self.state = State::Entries { first: true };
                        continue;
                    }
                    let mut value = Vec::new();
                    self.bytes.value(first_byte, &mut value)?;
                    self.state = State::Keys { first: false };
                    let parsed: serde_json::Value = serde_json::from_slice(&value)
                        .map_err(|e| self.bytes.syntax(format!("a value is not JSON ({e})")))?;
                    match key.as_slice() {
                        b"\"categoryTreeId\"" => {
                            self.tree_id = Some(
                                parse_id("categoryTreeId", &parsed)
                                    .map_err(|m| self.bytes.syntax(m))?,
                            );
                        }
                        b"\"categoryTreeVersion\"" => {
                            self.tree_version = parsed.as_str().map(str::to_owned);
                        }
                        _ => {}
                    }
                }
                State::Entries { first } => {
                    let mut b = self.bytes.token()?;
                    if b == b']' {
                        self.state = State::Keys { first: false };
                        continue;
                    }
                    if !first {
                        if b != b',' {
                            return Err(self
                                .bytes
                                .syntax("expected `,` or `]` in categoryAspects"));
                        }
                        b = self.bytes.token()?;
                    }
                    self.scratch.clear();
                    let mut entry = std::mem::take(&mut self.scratch);
                    self.bytes.value(b, &mut entry)?;
                    self.state = State::Entries { first: false };
                    let index = self.index;
                    let wire: Result<WireCategoryAspect, _> = serde_json::from_slice(&entry);
                    self.scratch = entry;
                    let wire = wire.map_err(|e| AspectsFileError::Entry {
                        index,
                        message: format!("not the CategoryAspect shape ({e})"),
                    })?;
                    self.index += 1;
                    return category_aspects_from_wire(index, wire)
                        .map(Some)
                        .map_err(|message| AspectsFileError::Entry { index, message });
                }
            }
        }
    }
}

impl<R: Read> Iterator for ItemAspectsReader<R> {
    type Item = Result<CategoryAspects, AspectsFileError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.step() {
            Ok(Some(entry)) => Some(Ok(entry)),
            Ok(None) => None,
            Err(e) => {
                self.state = State::Done;
                Some(Err(e))
            }
        }
    }
}
