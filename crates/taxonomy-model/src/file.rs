//! fetchItemAspects files: the aspects of every leaf category of a marketplace, as one gzipped
//! JSON file that can pass 100 MB compressed. [`ItemAspectsReader`] walks the file's
//! `categoryAspects` entries one at a time without ever holding the file, or more than a
//! bounded part of one entry, in memory.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use crate::answers::{
    CategoryAspects, MAX_ANSWER_ELEMENTS, WireCategoryAspect, category_aspects_from_wire, parse_id,
};

/// A fetchItemAspects file on disk, as marketplace-client's `fetch_item_aspects` leaves it
/// once the download is complete.
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
                // A buffer's worth at a time (an entry can be tens of megabytes): where the
                // value ends, tracking strings (and their escapes) and nesting.
                let (mut depth, mut in_string, mut escaped) = (1usize, false, false);
                while depth > 0 {
                    if self.peek()?.is_none() {
                        return Err(self.syntax("the JSON ends inside a value"));
                    }
                    let chunk = &self.buf[self.pos..self.len];
                    let mut used = 0;
                    for &b in chunk {
                        used += 1;
                        if in_string {
                            if escaped {
                                escaped = false;
                            } else if b == b'\\' {
                                escaped = true;
                            } else if b == b'"' {
                                in_string = false;
                            }
                        } else {
                            match b {
                                b'"' => in_string = true,
                                b'{' | b'[' => depth += 1,
                                b'}' | b']' => {
                                    depth -= 1;
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    let room = self.max_value.saturating_sub(out.len());
                    if used > room {
                        // As a byte at a time: the offset just past the first byte too many.
                        return Err(AspectsFileError::ValueTooLarge {
                            offset: self.offset + room as u64 + 1,
                            limit: self.max_value,
                        });
                    }
                    out.extend_from_slice(&chunk[..used]);
                    self.pos += used;
                    self.offset += used as u64;
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
/// use taxonomy_model::ItemAspectsReader;
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
    /// Opens a gzipped fetchItemAspects file (as eBay sends it, and marketplace-client's
    /// `fetch_item_aspects` stores it).
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
                    // Only a scalar is kept: any other top-level value is read past without
                    // holding what it contains.
                    let parsed = taxonomy_tree::bounded::skipped(
                        &mut serde_json::Deserializer::from_slice(&value),
                    )
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
                    let wire: Result<WireCategoryAspect, _> =
                        taxonomy_tree::bounded::with_element_limit(
                            MAX_ANSWER_ELEMENTS,
                            "one categoryAspects entry",
                            || serde_json::from_slice(&entry),
                        );
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
