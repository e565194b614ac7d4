//! [`Site::search`]: the leaf categories whose names and paths match the words of a query,
//! offline, over a keyword index the build script generates with the other tables.
//!
//! The index maps every word of every category name (folded by `taxonomy_hash::words`: case,
//! accents and English plurals do not matter) to the positions of the categories whose name
//! has it (`taxonomy_codegen::codegen::SearchIndex` describes the layout). A query is cut into
//! words the same way; the categories of each word's list are merged by position, and the
//! candidates are the leaves whose own name has a query word, and the leaf children of a
//! category whose name has one. Each candidate is ranked by, in order:
//!
//! 1. how many of the query's words its path has (its own name, its parent's or an
//!    ancestor's);
//! 2. how much of its own name the query covers (so "Cases" comes before "Cases & Covers"
//!    for "cases");
//! 3. how many words of its path the query does not have, and of the query the path does
//!    not have, each word counted as many times as it repeats (so the full path of a leaf
//!    finds that leaf first);
//! 4. where the words were found, weighted by how rare each word is: in the leaf's own name
//!    counts most, then its parent's, then a higher ancestor's;
//! 5. then the shallower leaf, then the lower position (id order).
//!
//! Criterion 3 reads the names of the whole path, so it is computed only for the best
//! candidates by the others (a pool of 32).
//!
//! No allocation: the work space (about 20 KiB) is on the stack.

use core::iter::FusedIterator;

use taxonomy_hash::words::{INDEX_STEP, Word, Words, word_count};

use crate::{LeafCategory, Site, SiteTables};

/// The most leaves a search returns.
pub const SEARCH_RESULTS: usize = 20;

/// The distinct words of a query that count; later ones are ignored.
const MAX_QUERY_WORDS: usize = 16;

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

/// Whether the category at `pos` has `word` in its name.
fn name_has(t: &SiteTables, pos: u32, word: &Word) -> bool {
    Words::new(crate::name_at(t, pos)).any(|w| w == *word)
}

/// The byte range in `t.search` of the list of the categories whose name has `word`.
fn lookup(t: &SiteTables, word: &Word) -> Option<(usize, usize)> {
    if t.search_keys.is_empty() {
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
    let stream = t.search;
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
            if name_has(t, pos, word) {
                return Some(list);
            }
        }
    }
    None
}

/// One query word: the word, how many times the query has it, and its list.
#[derive(Clone, Copy)]
struct QueryWord {
    word: Word,
    repeats: u8,
    list: (usize, usize),
    /// How many categories have it (0: none, or left out).
    count: u32,
    weight: u32,
}

/// The categories that have at least one query word: positions, sorted, and which words.
struct Hits {
    pos: [u32; MAX_HITS],
    mask: [u16; MAX_HITS],
    len: usize,
}

impl Hits {
    fn mask_of(&self, pos: u32) -> u16 {
        match self.pos[..self.len].binary_search(&pos) {
            Ok(i) => self.mask[i],
            Err(_) => 0,
        }
    }
}

/// A candidate's rank (greater is better) and position.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Ranked {
    key: u64,
    /// Criterion 3, as `u16::MAX - extra words` (filled in for the pool only).
    fit: u16,
    /// Shallower, then lower position, first.
    tie: u32,
    pos: u32,
}

pub(crate) fn search(site: Site, query: &str) -> Search {
    let t = site.tables();
    let mut result = Search {
        site,
        found: [0; SEARCH_RESULTS],
        len: 0,
        next: 0,
    };
    // The query's distinct words and their lists.
    let mut words = [const { None::<QueryWord> }; MAX_QUERY_WORDS];
    let mut n = 0;
    for word in Words::new(query) {
        if let Some(q) = words[..n].iter_mut().flatten().find(|q| q.word == word) {
            q.repeats = q.repeats.saturating_add(1);
        } else if n < MAX_QUERY_WORDS {
            let list = lookup(t, &word).unwrap_or((0, 0));
            let count = t.search[list.0..list.1]
                .iter()
                .filter(|&&b| b < 0x80)
                .count() as u32;
            words[n] = Some(QueryWord {
                word,
                repeats: 1,
                list,
                count,
                weight: 0,
            });
            n += 1;
        }
    }
    let words = &mut words[..n];
    if words.is_empty() {
        return result;
    }
    // Leave the most common words out until the lists fit.
    loop {
        let total: u32 = words.iter().flatten().map(|q| q.count).sum();
        if total as usize <= MAX_HITS {
            break;
        }
        if let Some(q) = words.iter_mut().flatten().max_by_key(|q| q.count) {
            q.count = 0;
            q.list = (0, 0);
        }
    }
    let categories = site.category_count().max(1) as u32;
    for q in words.iter_mut().flatten() {
        // A rare word weighs more: 4 plus log2 of how many times rarer than one category in
        // all it is.
        q.weight = 4 + (categories / q.count.max(1)).max(1).ilog2();
    }
    let hits = merge(t, words);
    if hits.len == 0 {
        return result;
    }
    // The query words that some category with subcategories has: what a leaf's ancestors can
    // add to its own words, at most.
    let inner = (0..hits.len)
        .filter(|&i| !t.is_leaf(hits.pos[i]))
        .fold(0_u16, |m, i| m | hits.mask[i]);
    let has_inner = inner != 0;
    let empty = Ranked {
        key: 0,
        fit: 0,
        tie: 0,
        pos: 0,
    };
    let mut pool = Pool {
        items: [empty; POOL],
        len: 0,
        worst: 0,
    };
    let mut candidates = 0;
    let consider = |pos: u32, own: u16, pool: &mut Pool| {
        if let Some(ranked) = rank(t, words, &hits, inner, pos, own, pool.floor()) {
            pool.insert(ranked);
        }
    };
    for i in 0..hits.len {
        let (pos, mask) = (hits.pos[i], hits.mask[i]);
        if t.is_leaf(pos) {
            candidates += 1;
            consider(pos, mask, &mut pool);
        }
    }
    // The leaf children of a category whose name has a query word, when their own names have
    // none (those were considered above).
    if has_inner {
        'outer: for i in 0..hits.len {
            let parent = hits.pos[i];
            if t.is_leaf(parent) {
                continue;
            }
            let range = t.child_offsets[parent as usize]..t.child_offsets[parent as usize + 1];
            for &child in &t.children[range.start as usize..range.end as usize] {
                if candidates >= MAX_CANDIDATES {
                    break 'outer;
                }
                if t.is_leaf(child) && hits.mask_of(child) == 0 {
                    candidates += 1;
                    consider(child, 0, &mut pool);
                }
            }
        }
    }
    // Criterion 3 for the pool, then the final order.
    let len = pool.len;
    let mut ranked = pool.items;
    for r in &mut ranked[..len] {
        r.fit = u16::MAX.saturating_sub(extra_words(t, words, r.pos));
    }
    let ranked = &mut ranked[..len];
    // Criteria 1 and 2, then 4, then 3 and 5.
    ranked.sort_unstable_by_key(|r| core::cmp::Reverse((r.key >> 48, r.fit, r.key, r.tie)));
    for r in ranked.iter().take(SEARCH_RESULTS) {
        result.found[result.len] = r.pos;
        result.len += 1;
    }
    result
}

/// Merges the query words' lists into the positions that have at least one word.
fn merge(t: &SiteTables, words: &[Option<QueryWord>]) -> Hits {
    let mut hits = Hits {
        pos: [0; MAX_HITS],
        mask: [0; MAX_HITS],
        len: 0,
    };
    // One cursor a word: where it is in its list, and its current position.
    let mut at = [0_usize; MAX_QUERY_WORDS];
    let mut current = [u32::MAX; MAX_QUERY_WORDS];
    for (i, q) in words.iter().enumerate() {
        if let Some(q) = q
            && q.list.0 < q.list.1
        {
            at[i] = q.list.0;
            current[i] = read_varint(&t.search[..q.list.1], &mut at[i]);
        }
    }
    while let Some(&min) = current[..words.len()].iter().min() {
        if min == u32::MAX || hits.len == MAX_HITS {
            break;
        }
        let mut mask = 0_u16;
        for (i, q) in words.iter().enumerate() {
            if current[i] != min {
                continue;
            }
            mask |= 1 << i;
            let end = q.as_ref().map_or(0, |q| q.list.1);
            current[i] = if at[i] < end {
                min + read_varint(&t.search[..end], &mut at[i])
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

/// Criteria 1, 2, 4 and 5 of the leaf at `pos`, whose own name has the words of `own`.
fn rank(
    t: &SiteTables,
    words: &[Option<QueryWord>],
    hits: &Hits,
    inner: u16,
    pos: u32,
    own: u16,
    floor: Option<(u64, u32)>,
) -> Option<Ranked> {
    // The best this leaf could rank (all of `inner` in its ancestors, its whole name covered):
    // when even that cannot enter the pool, skip the walk up its ancestors.
    let best = u64::from((own | inner).count_ones()) << 56
        | u64::from(if own != 0 { 255_u8 } else { 0 }) << 48
        | 0xFFFF_FFFF_FFFF;
    if floor.is_some_and(|f| (best, u32::MAX) <= f) {
        return None;
    }
    let (mut parent, mut higher) = (0_u16, 0_u16);
    if inner != 0 {
        let mut at = t.parents[pos as usize];
        let mut first = true;
        while at != 0 {
            let mask = hits.mask_of(at);
            if first {
                parent = mask;
                first = false;
            } else {
                higher |= mask;
            }
            at = t.parents[at as usize];
        }
    }
    let matched = (own | parent | higher).count_ones() as u64;
    let mut score = 0_u64;
    for (i, q) in words.iter().enumerate() {
        let Some(q) = q else { continue };
        let bit = 1 << i;
        let w = u64::from(q.weight);
        score += if own & bit != 0 {
            4 * w
        } else if parent & bit != 0 {
            3 * w
        } else if higher & bit != 0 {
            2 * w
        } else {
            0
        };
    }
    let level = u32::from(t.levels[pos as usize]);
    let tie = (255 - level.min(255)) << 24 | (0xFF_FFFF - pos.min(0xFF_FFFF));
    let key = |coverage: u64| matched << 56 | coverage << 48 | score.min(0xFFFF_FFFF_FFFF);
    if floor.is_some_and(|f| (key(255), tie) <= f) {
        return None;
    }
    let name = crate::name_at(t, pos);
    let name_words = word_count(name).max(1) as u64;
    let own_words = u64::from(own.count_ones());
    let coverage = if own_words >= name_words {
        255
    } else if own_words == 0 {
        0
    } else {
        // The name has words the query lacks, or repeats one: count them one by one.
        let covered = Words::new(name)
            .filter(|w| {
                words
                    .iter()
                    .enumerate()
                    .any(|(i, q)| own & (1 << i) != 0 && q.is_some_and(|q| q.word == *w))
            })
            .count() as u64;
        covered * 255 / name_words
    };
    Some(Ranked {
        key: key(coverage.min(255)),
        fit: 0,
        tie,
        pos,
    })
}

/// The best [`POOL`] candidates so far (by criteria 1, 2, 4 and 5).
struct Pool {
    items: [Ranked; POOL],
    len: usize,
    /// When full, the index of the worst.
    worst: usize,
}

impl Pool {
    /// What a candidate must beat to enter, once the pool is full.
    fn floor(&self) -> Option<(u64, u32)> {
        (self.len == POOL).then(|| (self.items[self.worst].key, self.items[self.worst].tie))
    }

    fn insert(&mut self, ranked: Ranked) {
        if self.len < POOL {
            self.items[self.len] = ranked;
            self.len += 1;
        } else if self.floor().is_some_and(|f| (ranked.key, ranked.tie) > f) {
            self.items[self.worst] = ranked;
        } else {
            return;
        }
        if self.len == POOL {
            self.worst = (0..POOL)
                .min_by_key(|&i| (self.items[i].key, self.items[i].tie))
                .unwrap_or(0);
        }
    }
}

/// Criterion 3: the words of the path from the top level to `pos` that the query does not
/// have, each query word matching as many path words as the query repeats it, plus the
/// query's words (counted with their repeats) that the path does not match.
fn extra_words(t: &SiteTables, words: &[Option<QueryWord>], pos: u32) -> u16 {
    let mut used = [0_u8; MAX_QUERY_WORDS];
    let mut extra = 0_u16;
    let mut at = pos;
    while at != 0 {
        for word in Words::new(crate::name_at(t, at)) {
            match words
                .iter()
                .enumerate()
                .find(|(_, q)| q.is_some_and(|q| q.word == word))
            {
                Some((i, Some(q))) if used[i] < q.repeats => used[i] += 1,
                _ => extra = extra.saturating_add(1),
            }
        }
        at = t.parents[at as usize];
    }
    for (i, q) in words.iter().enumerate() {
        if let Some(q) = q {
            extra = extra.saturating_add(u16::from(q.repeats - used[i]));
        }
    }
    extra
}
