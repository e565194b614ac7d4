//! [`Site::search`]: the leaf categories whose names and paths match the words of a query,
//! offline, over a keyword index the build script generates with the other tables.
//!
//! The index maps every word of every category name (folded by `taxonomy_hash::words` by
//! the tree's language: case, accents and plural or inflection endings do not matter) to the
//! positions of the categories whose name has it (`taxonomy_codegen::codegen::SearchIndex`
//! describes the layout); a German tree's index also files a compound made of its words under
//! its last part ("Schutzhüllen" under "hull"), in a list of its own. A query is cut into words
//! the same way; a word the index does not have is cut into parts it has ("grafikkarte":
//! "grafik" and "kart"; `taxonomy_hash::words::compound_parts`). Each query word has two
//! slots: its own list, and the list of the compounds that end with it. The categories of
//! the lists are merged by position, and the candidates are the leaves whose own name has a
//! query word, and the leaf children of a category whose name has one. Each candidate is
//! ranked by, in order:
//!
//! 1. how many of the query's words its path has (its own name, its parent's or an
//!    ancestor's; whole or as the end of a compound);
//! 2. how much of its own name the query covers (so "Cases" comes before "Cases & Covers"
//!    for "cases"; a word found as the end of a compound covers half a word); then (2b),
//!    among leaves whose whole name the query covers, the fewer words of it that are the
//!    query's only once their endings are folded (so "auto" finds "Auto" before "Autos");
//! 3. whether the query is, word for word, its whole path, else its own name, else its own
//!    name and its parent's (so "Ersatzteile Teile & Zubehör" finds "Ersatzteile" under
//!    "Teile & Zubehör" before "Zubehör & Ersatzteile" under "Solarien", and "Lamps &
//!    Lighting" the leaf of that name before "Lamps" under "Lighting"); then how many words of
//!    its path the query does not have, and of the query the path does not have, each word
//!    counted as many times as it repeats (so the full path of a leaf finds that leaf first);
//! 4. where the words were found, weighted by how rare each word is: in the leaf's own name
//!    counts most, then its parent's, then a higher ancestor's (a compound's end weighs half
//!    its word);
//! 5. then the shallower leaf, then the lower position (id order).
//!
//! Criteria 2b and 3 are computed only for the best candidates by the others (a pool of 32,
//! a heap). When nothing matches, [`Site::nearest_words`] gives the words of the names
//! nearest to the query's (edit distance; it reads every name).
//!
//! Names are not read again at query time: the index has each name's word count (and
//! whether a word repeats in it: only then is the name read and folded), so criteria 2 and 3
//! come from the counts and from which hits have which query words. A candidate's best
//! possible rank (its ancestors having every query word that some category with
//! subcategories has) is checked against the pool before its ancestors are walked, and the
//! leaf children of a matching category share their parent's rank but for criterion 5. The
//! walks look up the matching categories with subcategories (usually few) behind a 4096-bit
//! filter.
//!
//! No allocation: the work space (about 31 KiB) is on the stack.

use core::iter::FusedIterator;

use taxonomy_hash::words::{INDEX_STEP, Language, Word, Words, compound_parts, word_count};

use crate::{LeafCategory, Site, SiteTables};

/// The most leaves a search returns.
pub const SEARCH_RESULTS: usize = 20;

/// The distinct words of a query that count; later ones are ignored.
const MAX_QUERY_WORDS: usize = 16;

/// A query word's slots: its own list (bit `i`) and, in a German tree, the list of the
/// compounds that end with it (bit `i + MAX_QUERY_WORDS`: "hull" for "Schutzhüllen").
const SLOTS: usize = 2 * MAX_QUERY_WORDS;

/// Which slots ([`SLOTS`]) a category has.
type Mask = u32;

/// The slots of the query words' own lists.
const WHOLE: Mask = (1 << MAX_QUERY_WORDS) - 1;

/// The query words of `mask`, whether by their own list or by a compound's (criterion 1
/// counts a word once).
#[inline]
fn words_of(mask: Mask) -> Mask {
    (mask | mask >> MAX_QUERY_WORDS) & WHOLE
}

/// The most look-ups a query spends on cutting words the index lacks into parts (about
/// 0.2 µs each): a long query of made-up words stays within the time of a normal one.
const MAX_CUT_LOOKUPS: u32 = 48;

/// The most category positions (over all the query's words) a search merges; when the
/// query's words have more, the most common words are left out until they fit.
const MAX_HITS: usize = 3072;

/// Candidates scored at most (leaf children of matching categories included).
const MAX_CANDIDATES: usize = 8192;

/// How many candidates are kept for the final ranking (criterion 3 is computed for these).
const POOL: usize = 32;

/// The leaves a [`Site::search`] found, best first.
#[derive(Debug, Clone)]
pub struct Search {
    site: Site,
    found: [u32; SEARCH_RESULTS],
    len: usize,
    next: usize,
}

impl Iterator for Search {
    type Item = LeafCategory;

    fn next(&mut self) -> Option<LeafCategory> {
        if self.next >= self.len {
            return None;
        }
        let pos = self.found[self.next];
        self.next += 1;
        Some(LeafCategory {
            site: self.site,
            pos,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.len - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Search {}
impl FusedIterator for Search {}

/// LEB128, as the generator writes it.
fn read_varint(bytes: &[u8], at: &mut usize) -> u32 {
    let mut n = 0_u32;
    let mut shift = 0;
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        n |= u32::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    n
}

/// Whether `name_word`, a word of a name, ends with `ending` and is longer (a compound the
/// index files under `ending`'s [`Word::ending_key`]).
fn ends_with(name_word: &Word, ending: &[u8]) -> bool {
    let w = name_word.as_bytes();
    w.len() > ending.len() && w.ends_with(ending)
}

/// Whether the category at `pos` has `word` in its name (for an ending key: a word that
/// ends with it).
fn name_has(t: &SiteTables, language: Language, pos: u32, word: &Word) -> bool {
    let mut words = Words::with_language(crate::name_at(t, pos), language);
    match word.ending_of() {
        Some(ending) => words.any(|w| ends_with(&w, ending)),
        None => words.any(|w| w == *word),
    }
}

/// The keyword index of a site: the words' lists, and three bits a category (its name's
/// word count, or 7 when a word repeats in it or it has more than 6); empty when the site
/// has none.
#[derive(Clone, Copy)]
struct Index {
    stream: &'static [u8],
    name_words: &'static [u8],
    /// The rules the names' words were folded by.
    language: Language,
}

impl Index {
    fn of(t: &SiteTables) -> Index {
        let table = (3 * t.parents.len()).div_ceil(8);
        let language = Language::of(t.language);
        match t.search.len().checked_sub(table) {
            Some(at) if !t.search_keys.is_empty() => {
                let (stream, name_words) = t.search.split_at(at);
                Index {
                    stream,
                    name_words,
                    language,
                }
            }
            _ => Index {
                stream: &[],
                name_words: &[],
                language,
            },
        }
    }

    /// How many words the name at `pos` has, if that is known without reading it (no word
    /// repeats in it, and it has at most 6).
    fn name_words(&self, pos: u32) -> Option<u32> {
        let bit = 3 * pos as usize;
        let byte = |i: usize| u32::from(self.name_words.get(i).copied().unwrap_or(0xff));
        let n = (byte(bit / 8) | byte(bit / 8 + 1) << 8) >> (bit % 8) & 7;
        (n < 7).then_some(n)
    }
}

/// The byte range in `index.stream` of the list of the categories whose name has `word`.
fn lookup(t: &SiteTables, index: &Index, word: &Word) -> Option<(usize, usize)> {
    if index.stream.is_empty() {
        return None;
    }
    let key = match t.search_bits {
        0 => 0,
        bits => word.hash() >> (32 - bits),
    };
    // Words that share a key may straddle a sample: start at the last sample below the key.
    let group = t
        .search_keys
        .partition_point(|&k| k < key)
        .saturating_sub(1);
    let stream = index.stream;
    let mut at = t.search_offsets[group] as usize;
    let mut entry = group * INDEX_STEP;
    let mut current = 0;
    while at < stream.len() {
        if entry.is_multiple_of(INDEX_STEP) {
            current = t.search_keys[entry / INDEX_STEP];
        }
        current += read_varint(stream, &mut at);
        let len = read_varint(stream, &mut at) as usize;
        let list = (at, (at + len).min(stream.len()));
        at = list.1;
        entry += 1;
        if current > key {
            return None;
        }
        if current == key {
            let mut first = list.0;
            let pos = read_varint(stream, &mut first);
            if name_has(t, index.language, pos, word) {
                return Some(list);
            }
        }
    }
    None
}

/// One query word: the word, how many times the query has it, and its list (or, in the slot
/// of its ending, the list of the compounds that end with it).
#[derive(Clone, Copy)]
struct QueryWord {
    word: Word,
    /// The slot of the compounds that end with the word.
    ending: bool,
    repeats: u8,
    list: (usize, usize),
    /// How many categories have it (0: none, or left out).
    count: u32,
    weight: u32,
}

impl QueryWord {
    /// Whether `name_word`, a word of a name, is this one (or a compound that ends with it).
    fn matches(&self, name_word: &Word) -> bool {
        if self.ending {
            ends_with(name_word, self.word.as_bytes())
        } else {
            *name_word == self.word
        }
    }
}

/// The categories that have at least one query word: positions, sorted, and which words.
struct Hits {
    pos: [u32; MAX_HITS],
    mask: [Mask; MAX_HITS],
    len: usize,
}

impl Hits {
    fn mask_of(&self, pos: u32) -> Mask {
        match self.pos[..self.len].binary_search(&pos) {
            Ok(i) => self.mask[i],
            Err(_) => 0,
        }
    }
}

/// The most categories with subcategories among the hits kept apart for the walks up a
/// leaf's ancestors; with more, the walks look them up among all the hits.
const MAX_INNER: usize = 256;

/// The hits that have subcategories (the only ones a leaf's ancestors can be): positions,
/// sorted, and which words.
struct Inner {
    pos: [u32; MAX_INNER],
    mask: [Mask; MAX_INNER],
    len: usize,
    /// There were more than [`MAX_INNER`]: look in the hits instead.
    overflow: bool,
    /// The query words any of them has.
    any: Mask,
    /// Bit `pos % 4096` set for each of them: most categories are not, and are told so by
    /// one load.
    filter: [u64; 64],
    /// The query words of each one's ancestors' names (unless `overflow`).
    above: [Mask; MAX_INNER],
    /// A hash table of them: 1 + their index, by position (linear probing; 0 is empty).
    table: [u16; INNER_SLOTS],
}

/// Slots of [`Inner::table`]: four times [`MAX_INNER`], so that a look-up seldom probes more
/// than one.
const INNER_SLOTS: usize = 4 * MAX_INNER;

impl Inner {
    fn may_have(&self, pos: u32) -> bool {
        let bit = pos as usize % 4096;
        self.filter[bit / 64] >> (bit % 64) & 1 != 0
    }

    fn slot(pos: u32) -> usize {
        (pos.wrapping_mul(0x9E37_79B1) >> 22) as usize % INNER_SLOTS
    }

    /// Where `pos` is in `pos`, `mask` and `above` (not when `overflow`).
    #[inline]
    fn find(&self, pos: u32) -> Option<usize> {
        let mut slot = Inner::slot(pos);
        loop {
            match self.table[slot] {
                0 => return None,
                i if self.pos[usize::from(i - 1) % MAX_INNER] == pos => {
                    return Some(usize::from(i - 1));
                }
                _ => slot = (slot + 1) % INNER_SLOTS,
            }
        }
    }
}

/// What ranking a candidate reads: the tables, the index, the query's words and the hits.
struct Context<'a> {
    t: &'a SiteTables,
    index: Index,
    words: &'a [Option<QueryWord>],
    /// How many distinct words the query has (the first slots of `words`).
    query_words: usize,
    hits: &'a Hits,
    inner: &'a Inner,
    /// Some query word's list was left out (criterion 3 then reads the names).
    left_out: bool,
}

impl Context<'_> {
    /// The query words of the name of the category with subcategories at `pos`.
    #[inline]
    fn inner_mask(&self, pos: u32) -> Mask {
        let inner = self.inner;
        if !inner.may_have(pos) {
            return 0;
        }
        if inner.overflow {
            return self.hits.mask_of(pos);
        }
        inner.find(pos).map_or(0, |i| inner.mask[i])
    }

    /// The query words of the names of `pos` and all its ancestors (`pos` is not a leaf).
    fn path_mask(&self, mut pos: u32) -> Mask {
        let mut mask = 0;
        while pos != 0 && mask != self.inner.any {
            mask |= self.inner_mask(pos);
            pos = self.t.parents[pos as usize];
        }
        mask
    }

    /// Criterion 2 of the leaf at `pos`, whose own name has the words of `own`: a word
    /// found only as the end of a compound ("hull" in "Schutzhüllen") covers half a word.
    fn coverage(&self, pos: u32, own: Mask) -> u64 {
        if own == 0 {
            return 0;
        }
        let whole = own & WHOLE;
        let halves = 2 * whole.count_ones() + (own >> MAX_QUERY_WORDS & !whole).count_ones();
        if let Some(name_words) = self.index.name_words(pos) {
            return if halves >= 2 * name_words.max(1) {
                255
            } else {
                u64::from(halves * 255 / (2 * name_words))
            };
        }
        // The name repeats a word (or is very long): count its words one by one.
        let name = crate::name_at(self.t, pos);
        let name_words = word_count(name).max(1) as u64;
        if u64::from(halves) >= 2 * name_words {
            return 255;
        }
        let language = self.index.language;
        let covered: u64 = Words::with_language(name, language)
            .map(|w| {
                let has = |(i, q): (usize, &Option<QueryWord>)| {
                    own & (1 << i) != 0 && q.as_ref().is_some_and(|q| q.matches(&w))
                };
                let mut slots = self.words.iter().enumerate();
                if slots.clone().take(MAX_QUERY_WORDS).any(has) {
                    2
                } else if slots.any(has) {
                    1
                } else {
                    0
                }
            })
            .sum();
        (covered * 255 / (2 * name_words)).min(255)
    }
}

/// The query words a leaf's ancestors have, by its parent: the recent ones kept (siblings
/// share them).
struct Above {
    /// `(parent, its words, the words of its ancestors)`, by `parent % 64`.
    cache: [(u32, Mask, Mask); 64],
}

impl Above {
    /// The query words of `parent`'s name, and of the names of its ancestors.
    fn of(&mut self, cx: &Context, parent: u32) -> (Mask, Mask) {
        let inner = cx.inner;
        if !inner.overflow {
            // Up to the nearest ancestor with a query word, whose ancestors' words are known.
            let mut at = parent;
            while at != 0 {
                if inner.may_have(at)
                    && let Some(i) = inner.find(at)
                {
                    return if at == parent {
                        (inner.mask[i], inner.above[i])
                    } else {
                        (0, inner.mask[i] | inner.above[i])
                    };
                }
                at = cx.t.parents[at as usize];
            }
            return (0, 0);
        }
        let slot = &mut self.cache[parent as usize % 64];
        if slot.0 != parent {
            *slot = (
                parent,
                cx.inner_mask(parent),
                cx.path_mask(cx.t.parents[parent as usize]),
            );
        }
        (slot.1, slot.2)
    }
}

/// A candidate's rank (greater is better) and position.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Ranked {
    /// Criteria 1, 2, 4 and 5, as [`packed`] (the pool's order).
    order: u64,
    key: u64,
    /// Criterion 3, as [`Extra::fit`] (filled in for the pool only).
    fit: u16,
    /// Criterion 2b, as `u8::MAX - ` the words of its own name that are the query's only
    /// once their endings are folded ("Autos" for "auto"), when the query covers its whole
    /// name (filled in for the pool only).
    written: u8,
    /// Shallower, then lower position, first.
    tie: u32,
    pos: u32,
    /// The query words of its own name (after `pos`: it never decides the order).
    own: Mask,
}

/// The rank key: criteria 1, 2 and 4.
fn key(matched: u32, coverage: u64, score: u64) -> u64 {
    u64::from(matched) << 56 | coverage << 48 | score.min(0xFFFF_FFFF_FFFF)
}

/// Criterion 5 of the leaf at `pos`.
fn tie(t: &SiteTables, pos: u32) -> u32 {
    let level = u32::from(t.levels[pos as usize]);
    (255 - level.min(255)) << 24 | (0xFF_FFFF - pos.min(0xFF_FFFF))
}

/// The query words' weights (criterion 4), by bit.
struct Weights([u64; SLOTS]);

impl Weights {
    fn of(words: &[Option<QueryWord>]) -> Weights {
        let mut w = [0; SLOTS];
        for (w, q) in w.iter_mut().zip(words) {
            *w = q.as_ref().map_or(0, |q| u64::from(q.weight));
        }
        Weights(w)
    }

    /// The sum of the weights of the words of `mask`.
    fn sum(&self, mut mask: Mask) -> u64 {
        let mut sum = 0;
        while mask != 0 {
            sum += self.0[mask.trailing_zeros() as usize % SLOTS];
            mask &= mask - 1;
        }
        sum
    }

    /// Criterion 4: the words of `own`, `parent` and `higher`, by where they were found (in
    /// the leaf's name 4 times their weight, its parent's 3, a higher ancestor's 2).
    fn score(&self, own: Mask, parent: Mask, higher: Mask) -> u64 {
        let parent = parent & !own;
        let higher = higher & !(own | parent);
        4 * self.sum(own) + 3 * self.sum(parent) + 2 * self.sum(higher)
    }
}

pub(crate) fn search(site: Site, query: &str) -> Search {
    let t = site.tables();
    let index = Index::of(t);
    let mut result = Search {
        site,
        found: [0; SEARCH_RESULTS],
        len: 0,
        next: 0,
    };
    // The query's distinct words and their lists.
    let mut words = [const { None::<QueryWord> }; SLOTS];
    let mut n = 0;
    let language = index.language;
    let mut cut_lookups = MAX_CUT_LOOKUPS;
    for word in Words::with_language(query, language) {
        if let Some(q) = words[..n].iter_mut().flatten().find(|q| q.word == word) {
            q.repeats = q.repeats.saturating_add(1);
        } else if n < MAX_QUERY_WORDS {
            match lookup(t, &index, &word) {
                Some(list) => add_word(&mut words, &mut n, &index, word, list),
                None => {
                    // A word the index does not have: its parts that it has ("grafikkarte":
                    // "grafik" and "kart"), or the word itself, found nowhere.
                    let mut cut = false;
                    let parts = (cut_lookups > 0).then(|| {
                        compound_parts(&word, language, |p: &Word| {
                            cut_lookups = cut_lookups.saturating_sub(1);
                            cut_lookups > 0 && lookup(t, &index, p).is_some()
                        })
                    });
                    for part in parts.into_iter().flatten() {
                        if let Some(list) = lookup(t, &index, &part) {
                            cut = true;
                            add_word(&mut words, &mut n, &index, part, list);
                        }
                    }
                    if !cut {
                        add_word(&mut words, &mut n, &index, word, (0, 0));
                    }
                }
            }
        }
    }
    if n == 0 {
        return result;
    }
    // The compounds that end with each word (a German tree's index has them).
    let mut endings = false;
    for i in 0..n {
        if let Some(q) = words[i]
            && let Some(list) = lookup(t, &index, &q.word.ending_key())
        {
            words[MAX_QUERY_WORDS + i] = Some(query_word(&index, q.word, list, true));
            endings = true;
        }
    }
    let words = &mut words[..if endings { MAX_QUERY_WORDS + n } else { n }];
    // Leave the most common words out until the lists fit.
    let mut left_out = false;
    loop {
        let total: u32 = words.iter().flatten().map(|q| q.count).sum();
        if total as usize <= MAX_HITS {
            break;
        }
        if let Some(q) = words.iter_mut().flatten().max_by_key(|q| q.count) {
            q.count = 0;
            q.list = (0, 0);
            left_out = true;
        }
    }
    let categories = site.category_count().max(1) as u32;
    for q in words.iter_mut().flatten() {
        // A rare word weighs more: 4 plus log2 of how many times rarer than one category in
        // all it is; found as the end of a compound, half that.
        q.weight = 4 + (categories / q.count.max(1)).max(1).ilog2();
        if q.ending {
            q.weight /= 2;
        }
    }
    let words = &*words;
    let weights = Weights::of(words);
    let hits = merge(&index, words);
    if hits.len == 0 {
        return result;
    }
    // The hits with subcategories; the query words they have are what a leaf's ancestors can
    // add to its own words, at most.
    let mut inner = Inner {
        pos: [0; MAX_INNER],
        mask: [0; MAX_INNER],
        len: 0,
        overflow: false,
        any: 0,
        filter: [0; 64],
        above: [0; MAX_INNER],
        table: [0; INNER_SLOTS],
    };
    // How many children they have, in all.
    let mut children = 0;
    for i in 0..hits.len {
        let pos = hits.pos[i];
        if t.is_leaf(pos) {
            continue;
        }
        inner.any |= hits.mask[i];
        children += (t.child_offsets[pos as usize + 1] - t.child_offsets[pos as usize]) as usize;
        let bit = pos as usize % 4096;
        inner.filter[bit / 64] |= 1 << (bit % 64);
        if inner.len < MAX_INNER {
            let mut slot = Inner::slot(pos);
            while inner.table[slot] != 0 {
                slot = (slot + 1) % INNER_SLOTS;
            }
            inner.table[slot] = inner.len as u16 + 1;
            inner.pos[inner.len] = pos;
            inner.mask[inner.len] = hits.mask[i];
            inner.len += 1;
        } else {
            inner.overflow = true;
        }
    }
    if !inner.overflow {
        let mut above = [0; MAX_INNER];
        let cx = Context {
            t,
            index,
            words,
            query_words: n,
            hits: &hits,
            inner: &inner,
            left_out,
        };
        for (a, &pos) in above.iter_mut().zip(&inner.pos[..inner.len]) {
            *a = cx.path_mask(t.parents[pos as usize]);
        }
        inner.above = above;
    }
    let cx = Context {
        t,
        index,
        words,
        query_words: n,
        hits: &hits,
        inner: &inner,
        left_out,
    };
    let mut pool = Pool {
        items: [Ranked::new(0, 0, 0, 0); POOL],
        len: 0,
        floor: 0,
    };
    let mut ancestors = Above {
        cache: [(u32::MAX, 0, 0); 64],
    };
    let mut candidates = 0;
    // The words of the last leaf's own name, and its best criteria 1 and 4.
    let mut best_of = (0 as Mask, 0_u32, 0_u64);
    for i in 0..hits.len {
        let (pos, own) = (hits.pos[i], hits.mask[i]);
        if !t.is_leaf(pos) {
            continue;
        }
        candidates += 1;
        // The best this leaf can rank: all of `inner` in its parent, its whole name covered
        // (criterion 5 is exact), then with its coverage; when even that cannot enter the
        // pool, skip the walk up its ancestors. Consecutive hits often have the same words.
        if own != best_of.0 {
            best_of = (
                own,
                words_of(own | inner.any).count_ones(),
                weights.score(own, inner.any & !own, 0),
            );
        }
        let tie = tie(t, pos);
        if !pool.admits(key(best_of.1, 255, best_of.2), tie) {
            continue;
        }
        let coverage = cx.coverage(pos, own);
        if !pool.admits(key(best_of.1, coverage, best_of.2), tie) {
            continue;
        }
        let (parent, higher) = if inner.any == 0 {
            (0, 0)
        } else {
            ancestors.of(&cx, t.parents[pos as usize])
        };
        let matched = words_of(own | parent | higher).count_ones();
        let exact = key(matched, coverage, weights.score(own, parent, higher));
        if !pool.admits(exact, tie) {
            continue;
        }
        pool.insert(Ranked::new(exact, tie, pos, own));
    }
    // The leaf children of a category whose name has a query word, when their own names have
    // none (those were considered above): their rank is their parent's but for criterion 5.
    if inner.any != 0 {
        // Whether the limit on candidates can be reached (then they are counted one by one).
        let most = candidates + children;
        let counted = most >= MAX_CANDIDATES;
        'outer: for i in 0..hits.len {
            let parent = hits.pos[i];
            if t.is_leaf(parent) {
                continue;
            }
            let (mask, higher) = ancestors.of(&cx, parent);
            let exact = key(
                words_of(mask | higher).count_ones(),
                0,
                weights.score(0, mask, higher),
            );
            let prefix = packed(exact, 0);
            if !counted && !pool.admits_order(prefix | u64::from(u32::MAX)) {
                continue;
            }
            let range = t.child_offsets[parent as usize]..t.child_offsets[parent as usize + 1];
            for &child in &t.children[range.start as usize..range.end as usize] {
                if counted && candidates >= MAX_CANDIDATES {
                    break 'outer;
                }
                if !t.is_leaf(child) {
                    continue;
                }
                let tie = tie(t, child);
                if !counted && !pool.admits_order(prefix | u64::from(tie)) {
                    continue;
                }
                if hits.mask_of(child) == 0 {
                    candidates += 1;
                    pool.insert(Ranked::new(exact, tie, child, 0));
                }
            }
        }
    }
    // Criteria 2b and 3 for the pool, then the final order.
    let len = pool.len;
    let mut ranked = pool.items;
    let mut written = [Word::from_folded(&[]); MAX_QUERY_WORDS];
    let mut written_len = 0;
    for word in Words::as_written(query) {
        if written_len < MAX_QUERY_WORDS && !written[..written_len].contains(&word) {
            written[written_len] = word;
            written_len += 1;
        }
    }
    let written = &written[..written_len];
    for r in &mut ranked[..len] {
        r.fit = extra_words(&cx, r.pos, r.own).fit();
        let mut folded_only = 0_u8;
        // Only among leaves whose whole name the query covers: "auto" finds "Auto" before
        // "Autos", but "laptop" still finds "PC Laptops & Netbooks" as before.
        if r.own & WHOLE != 0 && (r.key >> 48) & 0xFF == 255 {
            let name = crate::name_at(t, r.pos);
            for (as_written, folded) in
                Words::as_written(name).zip(Words::with_language(name, language))
            {
                if !written.contains(&as_written)
                    && words[..MAX_QUERY_WORDS.min(words.len())]
                        .iter()
                        .flatten()
                        .any(|q| q.word == folded)
                {
                    folded_only = folded_only.saturating_add(1);
                }
            }
        }
        r.written = u8::MAX - folded_only;
    }
    let ranked = &mut ranked[..len];
    // Criteria 1 and 2, then 2b, 3, 4 and 5.
    ranked.sort_unstable_by_key(|r| {
        core::cmp::Reverse((r.key >> 48, r.written, r.fit, r.key, r.tie))
    });
    for r in ranked.iter().take(SEARCH_RESULTS) {
        result.found[result.len] = r.pos;
        result.len += 1;
    }
    result
}

/// Adds `word`, whose list is `list`, to the query's words (or counts it once more).
fn add_word(
    words: &mut [Option<QueryWord>; SLOTS],
    n: &mut usize,
    index: &Index,
    word: Word,
    list: (usize, usize),
) {
    if let Some(q) = words[..*n].iter_mut().flatten().find(|q| q.word == word) {
        q.repeats = q.repeats.saturating_add(1);
        return;
    }
    if *n == MAX_QUERY_WORDS {
        return;
    }
    words[*n] = Some(query_word(index, word, list, false));
    *n += 1;
}

/// The query word `word` whose list (or, if `ending`, the list of the compounds that end with
/// it) is `list`.
fn query_word(index: &Index, word: Word, list: (usize, usize), ending: bool) -> QueryWord {
    let count = index.stream[list.0..list.1]
        .iter()
        .filter(|&&b| b < 0x80)
        .count() as u32;
    QueryWord {
        word,
        ending,
        // An ending's slot counts no repeats of its own (criterion 3 reads the word's).
        repeats: u8::from(!ending),
        list,
        count,
        weight: 0,
    }
}

/// Merges the query words' lists into the positions that have at least one word.
fn merge(index: &Index, words: &[Option<QueryWord>]) -> Hits {
    let stream = index.stream;
    let mut hits = Hits {
        pos: [0; MAX_HITS],
        mask: [0; MAX_HITS],
        len: 0,
    };
    // One cursor a list: where it is in its list, where the list ends, its current position
    // (`u32::MAX` once the list is done), and its slot's bit.
    let mut at = [0_usize; SLOTS];
    let mut end = [0_usize; SLOTS];
    let mut current = [u32::MAX; SLOTS];
    let mut bit: [Mask; SLOTS] = [0; SLOTS];
    let mut k = 0;
    for (i, q) in words.iter().enumerate() {
        if let Some(q) = q
            && q.list.0 < q.list.1
        {
            (at[k], end[k]) = q.list;
            current[k] = read_varint(&stream[..end[k]], &mut at[k]);
            bit[k] = 1 << i;
            k += 1;
        }
    }
    if k == 1 {
        // One list: its positions, as they are.
        let list = &stream[..end[0]];
        let mut pos = current[0];
        loop {
            hits.pos[hits.len] = pos;
            hits.mask[hits.len] = bit[0];
            hits.len += 1;
            if at[0] >= list.len() || hits.len == MAX_HITS {
                break;
            }
            pos += read_varint(list, &mut at[0]);
        }
        return hits;
    }
    while hits.len < MAX_HITS {
        // The least current position, and the cursors at it.
        let (mut min, mut cursors) = (u32::MAX, 0_u32);
        for (c, &p) in current[..k].iter().enumerate() {
            if p < min {
                (min, cursors) = (p, 1 << c);
            } else if p == min {
                cursors |= 1 << c;
            }
        }
        if min == u32::MAX {
            break;
        }
        let mut mask = 0;
        while cursors != 0 {
            let c = cursors.trailing_zeros() as usize % SLOTS;
            cursors &= cursors - 1;
            mask |= bit[c];
            current[c] = if at[c] < end[c] {
                min + read_varint(&stream[..end[c]], &mut at[c])
            } else {
                u32::MAX
            };
        }
        hits.pos[hits.len] = min;
        hits.mask[hits.len] = mask;
        hits.len += 1;
    }
    hits
}

/// The best [`POOL`] candidates so far (by criteria 1, 2, 4 and 5): a binary heap, the worst
/// first.
struct Pool {
    items: [Ranked; POOL],
    len: usize,
    /// The order of the worst, once full.
    floor: u64,
}

/// The order of the pool: criteria 1, 2 and 4, then 5, in one word (a score is under 2^16:
/// at most 16 words of weight at most 4 + 31 and their endings of half that, times 4).
fn packed(key: u64, tie: u32) -> u64 {
    (key >> 48) << 48 | (key & 0xFFFF) << 32 | u64::from(tie)
}

fn order(r: &Ranked) -> u64 {
    r.order
}

impl Ranked {
    fn new(key: u64, tie: u32, pos: u32, own: Mask) -> Ranked {
        Ranked {
            order: packed(key, tie),
            key,
            fit: 0,
            written: 0,
            tie,
            pos,
            own,
        }
    }
}

impl Pool {
    /// Whether a candidate ranked `(key, tie)` would enter.
    #[inline]
    fn admits(&self, key: u64, tie: u32) -> bool {
        self.admits_order(packed(key, tie))
    }

    /// Whether a candidate of order `order` ([`packed`]) would enter.
    #[inline]
    fn admits_order(&self, order: u64) -> bool {
        self.len < POOL || order > self.floor
    }

    fn insert(&mut self, ranked: Ranked) {
        let items = &mut self.items;
        if self.len < POOL {
            // Up from the end.
            let mut i = self.len;
            items[i] = ranked;
            self.len += 1;
            while i > 0 && order(&items[(i - 1) / 2]) > order(&items[i]) {
                items.swap(i, (i - 1) / 2);
                i = (i - 1) / 2;
            }
        } else if order(&ranked) > order(&items[0]) {
            // Down from the top.
            items[0] = ranked;
            let mut i = 0;
            loop {
                let (l, r) = (2 * i + 1, 2 * i + 2);
                let mut least = i;
                if l < POOL && order(&items[l]) < order(&items[least]) {
                    least = l;
                }
                if r < POOL && order(&items[r]) < order(&items[least]) {
                    least = r;
                }
                if least == i {
                    break;
                }
                items.swap(i, least);
                i = least;
            }
        }
        if self.len == POOL {
            self.floor = order(&self.items[0]);
        }
    }
}

/// Criterion 3: how far the query is from the path of a leaf, cut after the leaf's own name,
/// after its parent's, and whole. At each cut, the words of the names up to it that the
/// query does not have (each query word matching as many of them as the query repeats it,
/// the nearest first), plus the query's words (counted with their repeats) that they do not
/// match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Extra {
    /// The leaf's own name against the query.
    own: u16,
    /// Its own name and its parent's.
    near: u16,
    /// The whole path.
    all: u16,
}

impl Extra {
    /// The order of criterion 3 (greater is better): first whether the query is, word for
    /// word, the whole path (so a full path still finds its leaf first), else the leaf's own
    /// name, else its own name and its parent's; then the fewer extra words in the whole
    /// path (at most 2^14 - 1 counted, so that it fits in 16 bits with the first).
    fn fit(self) -> u16 {
        let exact = match self {
            Extra { all: 0, .. } => 3,
            Extra { own: 0, .. } => 2,
            Extra { near: 0, .. } => 1,
            _ => 0,
        };
        const MOST: u16 = (1 << 14) - 1;
        exact << 14 | (MOST - self.all.min(MOST))
    }
}

/// Criterion 3 of the leaf at `pos` ([`Extra`]), whose own name has the words of `own`. Read
/// from the index (word counts, and which names have which query word) unless a name of the
/// path repeats a word or a query word's list was left out.
fn extra_words(cx: &Context, pos: u32, own: Mask) -> Extra {
    let t = cx.t;
    // The query's own words (an ending's slot counts as its word).
    let words = &cx.words[..cx.query_words];
    let parent = t.parents[pos as usize];
    let cap = |n: u32| n.min(u32::from(u16::MAX)) as u16;
    if !cx.left_out {
        let mut path_words = 0_u32;
        let mut found = [0_u8; MAX_QUERY_WORDS];
        // The path's words so far, less those the query has, plus the query's words they do
        // not have.
        let extra_so_far = |path_words: u32, found: &[u8; MAX_QUERY_WORDS]| {
            let mut extra = path_words;
            for (i, q) in words.iter().enumerate() {
                if let Some(q) = q {
                    let used = found[i].min(q.repeats);
                    extra = extra.saturating_sub(u32::from(used)) + u32::from(q.repeats - used);
                }
            }
            extra
        };
        let mut extra = [0_u32; 3];
        let mut at = pos;
        let mut plain = true;
        while at != 0 && plain {
            let n = cx.index.name_words(at);
            plain = n.is_some();
            path_words += n.unwrap_or(0);
            // A word of the path is the query's when the query has it whole.
            let mut mask = (if at == pos { own } else { cx.inner_mask(at) }) & WHOLE;
            while mask != 0 {
                let i = mask.trailing_zeros() as usize % MAX_QUERY_WORDS;
                found[i] = found[i].saturating_add(1);
                mask &= mask - 1;
            }
            // At the leaf's and its parent's cuts (the higher ones the same until more names
            // are read).
            if at == pos || at == parent {
                extra[usize::from(at == parent)..].fill(extra_so_far(path_words, &found));
            }
            at = t.parents[at as usize];
        }
        if plain {
            extra[2] = extra_so_far(path_words, &found);
            return Extra {
                own: cap(extra[0]),
                near: cap(extra[1]),
                all: cap(extra[2]),
            };
        }
    }
    // Which cut a name is in: the leaf's own (0), its parent's (1), a higher ancestor's (2).
    let cut_of = |at: u32| match at {
        _ if at == pos => 0,
        _ if at == parent => 1,
        _ => 2,
    };
    let language = cx.index.language;
    let mut used = [0_u8; MAX_QUERY_WORDS];
    // The path's words the query does not have so far, and the result up to each cut.
    let mut unused = 0_u32;
    let mut extra = [0_u32; 3];
    let mut at = pos;
    while at != 0 {
        for word in Words::with_language(crate::name_at(t, at), language) {
            match words
                .iter()
                .enumerate()
                .find(|(_, q)| q.as_ref().is_some_and(|q| q.matches(&word)))
            {
                Some((i, Some(q))) if used[i] < q.repeats => used[i] += 1,
                _ => unused += 1,
            }
        }
        let unmatched: u32 = words
            .iter()
            .zip(used)
            .filter_map(|(q, used)| q.as_ref().map(|q| u32::from(q.repeats - used)))
            .sum();
        // This name's cut, and the ones above it until their names are read.
        extra[cut_of(at)..].fill(unused + unmatched);
        at = t.parents[at as usize];
    }
    Extra {
        own: cap(extra[0]),
        near: cap(extra[1]),
        all: cap(extra[2]),
    }
}

/// The most words [`Site::nearest_words`] gives.
const NEAREST_WORDS: usize = 5;

/// The words of a site's category names nearest to the words of a query that match nothing
/// ([`Site::nearest_words`]), nearest first, as the names write them; its `Display` lists
/// them ("Smartphones, Smartwatches").
#[derive(Debug, Clone)]
pub struct NearestWords {
    words: [&'static str; NEAREST_WORDS],
    len: usize,
    next: usize,
}

impl Iterator for NearestWords {
    type Item = &'static str;

    fn next(&mut self) -> Option<&'static str> {
        let word = self.words[..self.len].get(self.next).copied();
        self.next += usize::from(word.is_some());
        word
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.len - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for NearestWords {}
impl FusedIterator for NearestWords {}

impl core::fmt::Display for NearestWords {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, word) in self.clone().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(word)?;
        }
        Ok(())
    }
}

/// The words of `name` as it writes them (the runs [`Words`] folds, apostrophes kept).
fn written_words(name: &str) -> impl Iterator<Item = &str> {
    name.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}')
        .map(|w| w.trim_matches(['\'', '\u{2019}']))
        .filter(|w| !w.is_empty())
}

/// The optimal string alignment distance between `a` and `b` (insertions, deletions,
/// substitutions and swaps of neighbours, one each), or `None` when it is over `limit`.
fn distance(a: &[u8], b: &[u8], limit: usize) -> Option<usize> {
    const N: usize = taxonomy_hash::words::MAX_WORD + 1;
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    // Three rows: two back (for swaps), one back, this one.
    let mut rows = [[0_usize; N]; 3];
    for (j, cell) in rows[1].iter_mut().enumerate().take(b.len() + 1) {
        *cell = j;
    }
    for i in 1..=a.len() {
        let [back2, back, this] = &mut rows;
        this[0] = i;
        let mut best = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (back[j] + 1).min(this[j - 1] + 1).min(back[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(back2[j - 2] + 1);
            }
            this[j] = d;
            best = best.min(d);
        }
        if best > limit {
            return None;
        }
        // This row becomes the one back, the one back two back.
        rows.rotate_left(1);
    }
    let d = rows[1][b.len()];
    (d <= limit).then_some(d)
}

pub(crate) fn nearest_words(site: Site, query: &str) -> NearestWords {
    let t = site.tables();
    let index = Index::of(t);
    let language = index.language;
    let mut result = NearestWords {
        words: [""; NEAREST_WORDS],
        len: 0,
        next: 0,
    };
    // The query's words that match nothing, not even by their parts.
    let mut unknown = [Word::from_folded(&[]); MAX_QUERY_WORDS];
    let mut n = 0;
    for word in Words::with_language(query, language) {
        let known = |w: &Word| lookup(t, &index, w).is_some();
        if n == MAX_QUERY_WORDS
            || unknown[..n].contains(&word)
            || known(&word)
            || compound_parts(&word, language, known).next().is_some()
        {
            continue;
        }
        unknown[n] = word;
        n += 1;
    }
    let unknown = &unknown[..n];
    if unknown.is_empty() {
        return result;
    }
    // The nearest, by distance then by the position of the first name that has them.
    let mut best: [(usize, Word); NEAREST_WORDS] = [(0, Word::from_folded(&[])); NEAREST_WORDS];
    for pos in 1..t.parents.len() as u32 {
        let name = crate::name_at(t, pos);
        for written in written_words(name) {
            let Some(folded) = Words::with_language(written, language).next() else {
                continue;
            };
            if best[..result.len].iter().any(|(_, w)| *w == folded) {
                continue;
            }
            // Within a third of the word's length (at least 2), and better than the worst
            // kept once there are enough.
            let Some(d) = unknown
                .iter()
                .filter_map(|q| {
                    let limit = (q.as_bytes().len() / 3).max(2);
                    let limit = match result.len {
                        NEAREST_WORDS => limit.min(best[NEAREST_WORDS - 1].0.saturating_sub(1)),
                        _ => limit,
                    };
                    distance(q.as_bytes(), folded.as_bytes(), limit)
                })
                .min()
            else {
                continue;
            };
            let at = best[..result.len].partition_point(|&(e, _)| e <= d);
            if at == NEAREST_WORDS {
                continue;
            }
            let end = result.len.min(NEAREST_WORDS - 1);
            best.copy_within(at..end, at + 1);
            result.words.copy_within(at..end, at + 1);
            best[at] = (d, folded);
            result.words[at] = written;
            result.len = (result.len + 1).min(NEAREST_WORDS);
        }
    }
    result
}
