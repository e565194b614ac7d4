//! fetchItemAspects: the aspects of every leaf category of a marketplace, as one gzipped JSON
//! file that can pass 100 MB compressed. The download streams it to disk (a temporary file
//! beside the destination, renamed into place only once the whole gzip stream arrived and
//! checked out), and [`ItemAspectsReader`] walks the file's `categoryAspects` entries one at a
//! time without ever holding the file in memory.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::{GzDecoder, GzEncoder};

use super::error::TaxonomyError;
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

/// A temporary file beside the destination; removed on drop unless it was put in place.
struct Partial {
    tmp: PathBuf,
    done: bool,
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Counts what the gzip check decompresses, and drops it.
#[derive(Default)]
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Sink {
    /// Not decided yet: the first bytes tell.
    Undecided,
    /// A gzip file (as eBay sends it): stored as is, checked by decompressing on the fly.
    Gzip(File, GzDecoder<Count>),
    /// JSON that the transport already decompressed: compressed again while stored.
    Json(GzEncoder<File>, u64),
}

/// Streams a successful fetchItemAspects answer into `dest`.
pub(crate) struct Download<'a> {
    pub(crate) dest: &'a Path,
    pub(crate) url: &'a str,
    pub(crate) limit: u64,
    pub(crate) on_progress: &'a mut dyn FnMut(DownloadProgress),
}

fn file_error(path: &Path, e: &io::Error) -> TaxonomyError {
    TaxonomyError::File {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

impl Download<'_> {
    /// Reads `body` to its end into a temporary file beside `dest`, checks that it is a whole
    /// gzip stream, and renames it over `dest`. On any failure the temporary file is removed
    /// and `dest` is left as it was.
    pub(crate) fn run(
        &mut self,
        body: &mut dyn Read,
        total: Option<u64>,
        tree_id: u32,
        map_read_error: &dyn Fn(io::Error, u64) -> TaxonomyError,
    ) -> Result<ItemAspectsFile, TaxonomyError> {
        if total.is_some_and(|n| n > self.limit) {
            return Err(TaxonomyError::BodyTooLarge {
                url: self.url.to_owned(),
                limit: self.limit,
            });
        }
        let dir = match self.dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = self.dest.file_name().ok_or_else(|| TaxonomyError::File {
            path: self.dest.to_owned(),
            message: "the destination has no file name".into(),
        })?;
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".part.{}.{call}", std::process::id()));
        let mut partial = Partial {
            tmp: dir.join(tmp_name),
            done: false,
        };
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&partial.tmp)
            .map_err(|e| file_error(&partial.tmp, &e))?;
        let mut file = Some(file);
        let mut sink = Sink::Undecided;
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
                return Err(TaxonomyError::BodyTooLarge {
                    url: self.url.to_owned(),
                    limit: self.limit,
                });
            }
            let bytes = &chunk[..n];
            if let Sink::Undecided = sink {
                let f = file.take().expect("the file is taken once");
                sink = if bytes.starts_with(&[0x1f, 0x8b]) {
                    Sink::Gzip(f, GzDecoder::new(Count::default()))
                } else if bytes.trim_ascii_start().first() == Some(&b'{') {
                    Sink::Json(GzEncoder::new(f, Compression::default()), 0)
                } else {
                    return Err(
                        self.unexpected("the answer is neither a gzip file nor JSON".into())
                    );
                };
            }
            let tmp = &partial.tmp;
            match &mut sink {
                Sink::Gzip(f, check) => {
                    f.write_all(bytes).map_err(|e| file_error(tmp, &e))?;
                    check
                        .write_all(bytes)
                        .map_err(|e| self.unexpected(format!("the gzip file is corrupt: {e}")))?;
                }
                Sink::Json(gz, json) => {
                    gz.write_all(bytes).map_err(|e| file_error(tmp, &e))?;
                    *json += n as u64;
                }
                Sink::Undecided => unreachable!("decided above"),
            }
            (self.on_progress)(DownloadProgress { received, total });
        }
        let tmp = partial.tmp.clone();
        let (file, json_bytes) = match sink {
            Sink::Undecided => return Err(self.unexpected("the answer is empty".into())),
            Sink::Gzip(f, mut check) => {
                check.try_finish().map_err(|e| {
                    self.unexpected(format!(
                        "the gzip file ends before its end or is corrupt ({e}) after {received} bytes"
                    ))
                })?;
                let json = check.get_ref().0;
                (f, json)
            }
            Sink::Json(gz, json) => (gz.finish().map_err(|e| file_error(&tmp, &e))?, json),
        };
        file.sync_all().map_err(|e| file_error(&tmp, &e))?;
        let compressed_bytes = file.metadata().map_err(|e| file_error(&tmp, &e))?.len();
        drop(file);
        std::fs::rename(&tmp, self.dest).map_err(|e| file_error(self.dest, &e))?;
        partial.done = true;
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(ItemAspectsFile {
            path: self.dest.to_owned(),
            tree_id,
            compressed_bytes,
            json_bytes,
        })
    }

    fn unexpected(&self, reason: String) -> TaxonomyError {
        TaxonomyError::UnexpectedBody {
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

    /// Copies one string (its opening quote already read) into `out`, quotes included.
    fn string(&mut self, out: &mut Vec<u8>) -> Result<(), AspectsFileError> {
        out.push(b'"');
        loop {
            match self.next()? {
                Some(b'"') => {
                    out.push(b'"');
                    return Ok(());
                }
                Some(b'\\') => {
                    out.push(b'\\');
                    match self.next()? {
                        Some(b) => out.push(b),
                        None => return Err(self.syntax("the JSON ends inside a string")),
                    }
                }
                Some(b) => out.push(b),
                None => return Err(self.syntax("the JSON ends inside a string")),
            }
        }
    }

    /// Copies one JSON value (its first byte `first` already read) into `out`.
    fn value(&mut self, first: u8, out: &mut Vec<u8>) -> Result<(), AspectsFileError> {
        match first {
            b'"' => self.string(out),
            b'{' | b'[' => {
                out.push(first);
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
                            out.push(b);
                        }
                        None => return Err(self.syntax("the JSON ends inside a value")),
                    }
                }
                Ok(())
            }
            _ => {
                out.push(first);
                while let Some(b) = self.peek()? {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    out.push(b);
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
/// from the gzip stream: only the entry being decoded is in memory, never the file.
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

impl<R: Read> ItemAspectsReader<MultiGzDecoder<R>> {
    /// Reads a gzip stream of a fetchItemAspects file.
    pub fn from_gzip(gzip: R) -> Self {
        Self::new(MultiGzDecoder::new(gzip))
    }
}

impl<R: Read> ItemAspectsReader<R> {
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
