//! Words of category names and search queries, as the keyword index sees them: shared by the
//! generator (which indexes every category name) and `Site::search` (which cuts the query the
//! same way), so the two cannot disagree.
//!
//! A word is a run of letters and digits (an apostrophe inside it is dropped: "Men's" is
//! "mens"), lower-cased, with accents folded ("Zubehör" is "zubehor", "ß" is "ss"), and with
//! an English plural ending removed ("Accessories" is "accessory", "Cases" is "case",
//! "Watches" is "watch"), so that case, accents and plurals do not matter.
//!
//! ```
//! use taxonomy_hash::words::{Words, word_count};
//! let words: Vec<String> = Words::new("Men's Watches & Zubehör, Cases")
//!     .map(|w| String::from_utf8(w.as_bytes().to_vec()).unwrap())
//!     .collect();
//! assert_eq!(words, ["men", "watch", "zubehor", "case"]);
//! assert_eq!(word_count("Men's Watches & Zubehör, Cases"), 4);
//! ```

/// How many words of the keyword index one sample (a key and an offset, for the binary
/// search) covers.
pub const INDEX_STEP: usize = 16;

/// The longest word kept, in bytes of its folded form; a longer word is cut (the same way
/// for a name and a query).
pub const MAX_WORD: usize = 40;

/// One folded word: at most [`MAX_WORD`] bytes of UTF-8.
#[derive(Clone, Copy, Eq)]
pub struct Word {
    bytes: [u8; MAX_WORD],
    len: u8,
}

impl Word {
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

    /// Removes an English plural ending: "-ies" to "-y", "-ches", "-shes", "-sses", "-xes",
    /// "-zes" to their stem, and a final "s" (not "ss", "us", "is") on a word of four letters
    /// or more.
    fn stem(&mut self) {
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
}

impl<'a> Words<'a> {
    /// The words of `text`.
    pub fn new(text: &'a str) -> Words<'a> {
        Words { rest: text.chars() }
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
        word.stem();
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
}
