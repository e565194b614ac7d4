//! Words of category names and search queries, as the keyword index sees them: shared by the
//! generator (which indexes every category name) and `Site::search` (which cuts the query the
//! same way), so the two cannot disagree.
//!
//! A word is a run of letters and digits (an apostrophe inside it is dropped: "Men's" is
//! "mens"), lower-cased, with accents folded ("Zubehör" is "zubehor", "ß" is "ss"), and with
//! its ending removed by the rules of the tree's [`Language`]: in English a plural ending
//! ("Accessories" is "accessory", "Cases" is "case", "Watches" is "watch"); in German the
//! endings of the Snowball German stemmer's first two steps, after the umlauts are folded, so
//! that umlaut plurals meet their singular ("Fahrräder" and "Fahrrad" are "fahrrad",
//! "Maschinen" and "Maschine" are "maschin"). Case, accents and plurals do not matter.
//!
//! [`compound_parts`] cuts a word the index does not know into words it knows
//! ("grafikkarte" into "grafik" and "kart"), with the index's own vocabulary: the generator
//! uses it to file a German compound under its last part too ("Schutzhüllen" under "hull"),
//! the search to cut a query's compound ("handyhülle" into "handy" and "hull").
//!
//! ```
//! use taxonomy_hash::words::{Words, word_count};
//! let words: Vec<String> = Words::new("Men's Watches & Zubehör, Cases")
//!     .map(|w| String::from_utf8(w.as_bytes().to_vec()).unwrap())
//!     .collect();
//! assert_eq!(words, ["men", "watch", "zubehor", "case"]);
//! assert_eq!(word_count("Men's Watches & Zubehör, Cases"), 4);
//!
//! use taxonomy_hash::words::Language;
//! let de = |t| Words::with_language(t, Language::German).next().unwrap();
//! assert_eq!(de("Fahrräder"), de("fahrrad"));
//! assert_eq!(de("Armbanduhren"), de("armbanduhr"));
//! ```

/// How many words of the keyword index one sample (a key and an offset, for the binary
/// search) covers.
pub const INDEX_STEP: usize = 32;

/// The longest word kept, in bytes of its folded form; a longer word is cut (the same way
/// for a name and a query).
pub const MAX_WORD: usize = 40;

/// The first byte of [`Word::ending_key`]: no folded word has it.
pub const ENDING_MARK: u8 = 0x01;

/// The shortest part [`compound_parts`] cuts off, in bytes (3).
const MIN_PART: usize = 3;

/// The most parts [`compound_parts`] cuts a word into.
const MAX_PARTS: usize = 4;

/// Whose rules fold a word's ending (and whether compounds are filed under their parts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// English plural endings (every language but German, as before languages were told
    /// apart).
    English,
    /// The Snowball German stemmer's steps 1 and 2 (inflection and plural endings), and
    /// compounds filed under their last part.
    German,
}

impl Language {
    /// The rules for a tree whose names are in `tag` (a BCP 47 tag such as `de-DE`, as the
    /// marketplace table and the snapshots give it): German for `de` and `de-…`, English for
    /// every other.
    pub fn of(tag: &str) -> Language {
        let primary = tag.split(['-', '_']).next().unwrap_or("");
        if primary.eq_ignore_ascii_case("de") {
            Language::German
        } else {
            Language::English
        }
    }
}

/// One folded word: at most [`MAX_WORD`] bytes of UTF-8.
#[derive(Clone, Copy, Eq)]
pub struct Word {
    bytes: [u8; MAX_WORD],
    len: u8,
}

impl Word {
    /// The word made of `bytes` (cut at [`MAX_WORD`]), taken as already folded.
    pub fn from_folded(bytes: &[u8]) -> Word {
        let mut word = Word {
            bytes: [0; MAX_WORD],
            len: 0,
        };
        word.push(bytes);
        word
    }

    /// The bytes `range` of this word, as a word of their own, their ending folded again by
    /// `language`'s rules (the front part of a compound is a word with an ending of its
    /// own: "damen" of "damentasch" is "dam").
    fn part(&self, range: core::ops::Range<usize>, language: Language) -> Word {
        let mut word = Word::from_folded(self.as_bytes().get(range).unwrap_or(&[]));
        word.stem(language);
        word
    }

    /// The key under which the keyword index files the compounds that end with this word
    /// ("schutzhull" under "hull"'s): [`ENDING_MARK`], then the word (cut at [`MAX_WORD`]).
    pub fn ending_key(&self) -> Word {
        let mut key = Word::from_folded(&[ENDING_MARK]);
        key.push(self.as_bytes());
        key
    }

    /// The word that [`Word::ending_key`] made this key of, if it is one.
    pub fn ending_of(&self) -> Option<&[u8]> {
        self.as_bytes().strip_prefix(&[ENDING_MARK])
    }

    /// The folded word.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The word's 32-bit hash (FNV-1a), whose top bits key the index.
    pub const fn hash(&self) -> u32 {
        let mut h: u32 = 0x811c_9dc5;
        let mut i = 0;
        while i < self.len as usize {
            h ^= self.bytes[i] as u32;
            h = h.wrapping_mul(0x0100_0193);
            i += 1;
        }
        h
    }

    fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if (self.len as usize) < MAX_WORD {
                self.bytes[self.len as usize] = b;
                self.len += 1;
            }
        }
    }

    fn stem(&mut self, language: Language) {
        match language {
            Language::English => self.stem_english(),
            Language::German => self.stem_german(),
        }
    }

    /// Removes an English plural ending: "-ies" to "-y", "-ches", "-shes", "-sses", "-xes",
    /// "-zes" to their stem, and a final "s" (not "ss", "us", "is") on a word of four letters
    /// or more.
    fn stem_english(&mut self) {
        let w = self.as_bytes();
        let n = w.len();
        let cut = if n > 4 && w.ends_with(b"ies") {
            self.bytes[n - 3] = b'y';
            2
        } else if n > 4
            && (w.ends_with(b"ches")
                || w.ends_with(b"shes")
                || w.ends_with(b"sses")
                || w.ends_with(b"xes")
                || w.ends_with(b"zes"))
        {
            2
        } else if n > 3
            && w.ends_with(b"s")
            && !w.ends_with(b"ss")
            && !w.ends_with(b"us")
            && !w.ends_with(b"is")
        {
            1
        } else {
            0
        };
        self.len -= cut;
    }

    /// The Snowball German stemmer's steps 1 and 2 on the folded word (umlauts are folded
    /// before, so "fahrrader" meets "fahrrad"): in the region R1 (after the first consonant
    /// that follows a vowel, and at least three letters in), step 1 removes "ern", "em" or
    /// "er", else "en", "es" or "e", else an "s" after a consonant other than "s" or after
    /// "y" or a vowel (loanword plurals: "handys", "autos"); step 2 then removes "en", "er"
    /// or "est", else "st" after a consonant other than "r" (three letters kept). Snowball's
    /// step 3 (derivational endings such as "-ung", "-lich") is left out: it would merge
    /// words a seller tells apart.
    fn stem_german(&mut self) {
        let n = self.len as usize;
        let w = &self.bytes[..n];
        let vowel = |b: u8| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y');
        let mut r1 = n;
        for i in 1..n {
            if vowel(w[i - 1]) && !vowel(w[i]) {
                r1 = i + 1;
                break;
            }
        }
        let r1 = r1.max(3);
        let in_r1 =
            |len: usize, suffix: &[u8]| len >= r1 + suffix.len() && w[..len].ends_with(suffix);
        // Step 1.
        let mut len = n;
        if let Some(s) = [&b"ern"[..], b"em", b"er"]
            .into_iter()
            .find(|s| w.ends_with(s))
        {
            if in_r1(len, s) {
                len -= s.len();
            }
        } else if let Some(s) = [&b"en"[..], b"es", b"e"]
            .into_iter()
            .find(|s| w.ends_with(s))
        {
            if in_r1(len, s) {
                len -= s.len();
            }
        } else if in_r1(len, b"s")
            && len >= 2
            && w[len - 2] != b's'
            && w[len - 2].is_ascii_alphabetic()
        {
            len -= 1;
        }
        // Step 2.
        let w = &self.bytes[..len];
        if let Some(s) = [&b"en"[..], b"er", b"est"]
            .into_iter()
            .find(|s| w.ends_with(s))
        {
            if in_r1(len, s) {
                len -= s.len();
            }
        } else if in_r1(len, b"st")
            && len >= 6
            && matches!(
                w[len - 3],
                b'b' | b'd' | b'f' | b'g' | b'h' | b'k' | b'l' | b'm' | b'n' | b't'
            )
        {
            len -= 2;
        }
        self.len = len as u8;
    }
}

/// The parts of `word`, a word the index does not have, that are words `known` says it has:
/// the longest known ending of at least three bytes that leaves at least one byte in
/// front, then the same again on the front (its own ending folded by `language`'s rules,
/// and a linking "s" dropped when only that makes it known: "arbeits" of "arbeitsschuh" is
/// "arbeit"), until the front is known or no ending of it is. Last part first; a front
/// that has no known ending is dropped ("iphone": "phone"); nothing when no ending is known.
///
/// ```
/// use taxonomy_hash::words::{compound_parts, Language, Word, Words};
/// let de = |t| Words::with_language(t, Language::German).next().unwrap();
/// let known = [de("Grafik"), de("Karten"), de("Handy"), de("Hüllen")];
/// let parts = |t| {
///     compound_parts(&de(t), Language::German, |w| known.contains(w))
///         .map(|w| String::from_utf8(w.as_bytes().to_vec()).unwrap())
///         .collect::<Vec<_>>()
/// };
/// assert_eq!(parts("grafikkarte"), ["kart", "grafik"]);
/// assert_eq!(parts("handyhülle"), ["hull", "handy"]);
/// assert_eq!(parts("xyzhülle"), ["hull"]);
/// assert!(compound_parts(&de("handyhülle"), Language::German, |w| known.contains(w)).is_complete());
/// assert!(!compound_parts(&de("xyzhülle"), Language::German, |w| known.contains(w)).is_complete());
/// assert!(parts("fahrrad").is_empty());
/// ```
pub fn compound_parts(
    word: &Word,
    language: Language,
    mut known: impl FnMut(&Word) -> bool,
) -> Parts {
    let mut parts = Parts {
        parts: [Word::from_folded(&[]); MAX_PARTS],
        len: 0,
        next: 0,
        complete: false,
    };
    // `front` is the not yet known front part, as it stands in the word (unstemmed).
    let mut front = word.as_bytes().len();
    let whole = *word;
    while parts.len < MAX_PARTS && front > MIN_PART {
        let Some(start) = (1..=front - MIN_PART).find(|&i| {
            let ending = if front == whole.as_bytes().len() {
                Word::from_folded(&whole.as_bytes()[i..front])
            } else {
                whole.part(i..front, language)
            };
            known(&ending)
        }) else {
            break;
        };
        let ending = if front == whole.as_bytes().len() {
            Word::from_folded(&whole.as_bytes()[start..front])
        } else {
            whole.part(start..front, language)
        };
        parts.parts[parts.len] = ending;
        parts.len += 1;
        front = start;
        if front < MIN_PART || parts.len == MAX_PARTS {
            break;
        }
        let rest = whole.part(0..front, language);
        if known(&rest) {
            parts.parts[parts.len] = rest;
            parts.len += 1;
            parts.complete = true;
            break;
        }
        if whole.as_bytes()[front - 1] == b's' && front > MIN_PART {
            let linked = whole.part(0..front - 1, language);
            if known(&linked) {
                parts.parts[parts.len] = linked;
                parts.len += 1;
                parts.complete = true;
                break;
            }
        }
    }
    parts
}

/// The parts [`compound_parts`] found, last part first.
#[derive(Debug, Clone)]
pub struct Parts {
    parts: [Word; MAX_PARTS],
    len: usize,
    next: usize,
    complete: bool,
}

impl Parts {
    /// Whether the parts make up the whole word: no front part was dropped (it is known, or
    /// known without a linking "s"), and there are at least two.
    pub fn is_complete(&self) -> bool {
        self.complete
    }
}

impl Iterator for Parts {
    type Item = Word;

    fn next(&mut self) -> Option<Word> {
        let part = self.parts[..self.len].get(self.next).copied();
        self.next += usize::from(part.is_some());
        part
    }
}

/// Two words are equal when their folded bytes are (what the stem cut off does not count).
impl PartialEq for Word {
    fn eq(&self, other: &Word) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl core::fmt::Debug for Word {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match core::str::from_utf8(self.as_bytes()) {
            Ok(s) => write!(f, "Word({s:?})"),
            Err(_) => write!(f, "Word({:?})", self.as_bytes()),
        }
    }
}

/// The words of a text, in order (repeats included).
#[derive(Debug, Clone)]
pub struct Words<'a> {
    rest: core::str::Chars<'a>,
    /// Whose rules fold the endings (none: kept as written).
    language: Option<Language>,
}

impl<'a> Words<'a> {
    /// The words of `text`, their endings folded by the English rules.
    pub fn new(text: &'a str) -> Words<'a> {
        Words::with_language(text, Language::English)
    }

    /// The words of `text`, their endings folded by `language`'s rules.
    pub fn with_language(text: &'a str, language: Language) -> Words<'a> {
        Words {
            rest: text.chars(),
            language: Some(language),
        }
    }

    /// The words of `text` with their endings as written (case and accents folded only):
    /// what tells "Auto" from "Autos" once both are "auto".
    pub fn as_written(text: &'a str) -> Words<'a> {
        Words {
            rest: text.chars(),
            language: None,
        }
    }
}

const fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}')
}

impl Iterator for Words<'_> {
    type Item = Word;

    fn next(&mut self) -> Option<Word> {
        let mut word = Word {
            bytes: [0; MAX_WORD],
            len: 0,
        };
        for c in self.rest.by_ref() {
            if c.is_alphanumeric() {
                fold(c, &mut word);
            } else if is_apostrophe(c) {
                // Dropped inside a word; between words it separates nothing.
            } else if word.len > 0 {
                break;
            }
        }
        if word.len == 0 {
            return None;
        }
        if let Some(language) = self.language {
            word.stem(language);
        }
        Some(word)
    }
}

/// How many words `text` has (what [`Words`] yields), counted without folding.
pub fn word_count(text: &str) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if !in_word {
                count += 1;
                in_word = true;
            }
        } else if !is_apostrophe(c) {
            in_word = false;
        }
    }
    count
}

/// Appends `c` lower-cased, its accents removed.
fn fold(c: char, word: &mut Word) {
    if c.is_ascii() {
        word.push(&[c.to_ascii_lowercase() as u8]);
        return;
    }
    let plain: &str = match c {
        'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' | 'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'Ā' | 'ā' | 'Ă'
        | 'ă' | 'Ą' | 'ą' => "a",
        'Æ' | 'æ' => "ae",
        'Ç' | 'ç' | 'Ć' | 'ć' | 'Č' | 'č' => "c",
        'Ď' | 'ď' | 'Đ' | 'đ' | 'Ð' | 'ð' => "d",
        'È' | 'É' | 'Ê' | 'Ë' | 'è' | 'é' | 'ê' | 'ë' | 'Ē' | 'ē' | 'Ė' | 'ė' | 'Ę' | 'ę' | 'Ě'
        | 'ě' => "e",
        'Ğ' | 'ğ' => "g",
        'Ì' | 'Í' | 'Î' | 'Ï' | 'ì' | 'í' | 'î' | 'ï' | 'Ī' | 'ī' | 'Į' | 'į' | 'İ' | 'ı' => {
            "i"
        }
        'Ł' | 'ł' | 'Ľ' | 'ľ' => "l",
        'Ñ' | 'ñ' | 'Ń' | 'ń' | 'Ň' | 'ň' => "n",
        'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' | 'Ø' | 'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'Ō' | 'ō' | 'Ő'
        | 'ő' => "o",
        'Œ' | 'œ' => "oe",
        'Ř' | 'ř' => "r",
        'Ś' | 'ś' | 'Š' | 'š' | 'Ş' | 'ş' => "s",
        'ß' | 'ẞ' => "ss",
        'Ť' | 'ť' | 'Ţ' | 'ţ' => "t",
        'Þ' | 'þ' => "th",
        'Ù' | 'Ú' | 'Û' | 'Ü' | 'ù' | 'ú' | 'û' | 'ü' | 'Ū' | 'ū' | 'Ů' | 'ů' | 'Ű' | 'ű' => {
            "u"
        }
        'Ý' | 'ý' | 'ÿ' | 'Ÿ' => "y",
        'Ź' | 'ź' | 'Ż' | 'ż' | 'Ž' | 'ž' => "z",
        _ => {
            for lower in c.to_lowercase() {
                let mut buf = [0_u8; 4];
                word.push(lower.encode_utf8(&mut buf).as_bytes());
            }
            return;
        }
    };
    word.push(plain.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_case_accents_and_plurals() {
        let w = |t: &str| Words::new(t).next().unwrap();
        assert_eq!(w("Smartphones"), w("smartphone"));
        assert_eq!(w("ACCESSORIES"), w("accessory"));
        assert_eq!(w("Zubehör"), w("zubehor"));
        assert_eq!(w("Straße"), w("strasse"));
        assert_eq!(w("Boxes"), w("box"));
        assert_eq!(w("Helmets"), w("helmet"));
        assert_eq!(w("Glasses"), w("glass"));
        assert_eq!(w("bus").as_bytes(), b"bus");
        assert_eq!(w("Men’s").as_bytes(), b"men");
        assert_eq!(Words::new(" & , ").count(), 0);
        assert_eq!(word_count("Cell Phones & Smartphones"), 3);
        assert_eq!(word_count("Men's ' Watches"), 2);
        let long = "x".repeat(100);
        assert_eq!(w(&long).as_bytes().len(), MAX_WORD);
    }

    #[test]
    fn german_folds_inflections_and_umlaut_plurals() {
        let de = |t: &str| Words::with_language(t, Language::German).next().unwrap();
        let same = [
            ("Fahrräder", "fahrrad"),
            ("Armbanduhren", "armbanduhr"),
            ("Bohrmaschinen", "bohrmaschine"),
            ("Schutzhüllen", "schutzhülle"),
            ("Grafikkarten", "grafikkarte"),
            ("Handys", "handy"),
            ("Bücher", "buch"),
            ("Kindern", "kinder"),
        ];
        for (a, b) in same {
            assert_eq!(de(a), de(b), "{a} {b}");
        }
        // Short words keep their endings (R1 starts at the fourth letter at the earliest).
        assert_eq!(de("Uhr").as_bytes(), b"uhr");
        assert_eq!(de("See").as_bytes(), b"see");
        assert_eq!(Language::of("de-DE"), Language::German);
        assert_eq!(Language::of("de_AT"), Language::German);
        assert_eq!(Language::of("en-GB"), Language::English);
        assert_eq!(Language::of("fr-CA"), Language::English);
        // As written: only case and accents folded.
        let mut written = Words::as_written("Autos Fahrräder");
        assert_eq!(written.next().unwrap().as_bytes(), b"autos");
        assert_eq!(written.next().unwrap().as_bytes(), b"fahrrader");
    }
}
