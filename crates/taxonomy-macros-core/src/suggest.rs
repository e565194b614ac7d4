//! What to suggest for an unknown id or path.
//!
//! Nothing here scans a whole tree per call. An unknown id is answered by looking up every id
//! one edit away in the perfect hash (about a hundred lookups). An unknown path is walked from
//! the top level as far as it exists, and only the children of the deepest match are compared
//! with the next name; when that finds nothing, the last name is looked up among every
//! category's name in an index built once per process and site, and the leaves under the
//! deepest match are compared with it word by word (a near miss such as "Graphics Cards" for
//! "Graphics/Video Cards"). Names are compared without regard to case or runs of white
//! space.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use taxonomy_data::{Category, Site};

/// The ids one edit away from `id` (a digit inserted, removed, replaced, or two neighbours
/// swapped) that are categories of `site`: leaves first, then by id.
pub(crate) fn close_ids(site: Site, id: u32) -> Vec<Category> {
    let digits = id.to_string().into_bytes();
    let mut found = BTreeSet::new();
    let mut consider = |candidate: &[u8]| {
        // Ids are written without leading zeros, so such a string is no category's id.
        if candidate.first().is_none_or(|&b| b == b'0') {
            return;
        }
        let Ok(text) = std::str::from_utf8(candidate) else {
            return;
        };
        if let Some(category) = text.parse::<u32>().ok().and_then(|n| site.category(n)) {
            found.insert((!category.is_leaf(), category.id()));
        }
    };
    let mut buffer = Vec::with_capacity(digits.len() + 1);
    for i in 0..digits.len() {
        buffer.clear();
        buffer.extend_from_slice(&digits[..i]);
        buffer.extend_from_slice(&digits[i + 1..]);
        consider(&buffer);
        for digit in b'0'..=b'9' {
            if digit != digits[i] {
                buffer.clear();
                buffer.extend_from_slice(&digits);
                buffer[i] = digit;
                consider(&buffer);
            }
        }
        if i + 1 < digits.len() && digits[i] != digits[i + 1] {
            buffer.clear();
            buffer.extend_from_slice(&digits);
            buffer.swap(i, i + 1);
            consider(&buffer);
        }
    }
    for i in 0..=digits.len() {
        for digit in b'0'..=b'9' {
            buffer.clear();
            buffer.extend_from_slice(&digits[..i]);
            buffer.push(digit);
            buffer.extend_from_slice(&digits[i..]);
            consider(&buffer);
        }
    }
    found
        .into_iter()
        .filter_map(|(_, id)| site.category(id))
        .collect()
}

/// The categories to suggest for a path that `site` does not have, best first.
pub(crate) fn path_suggestions(site: Site, path: &str) -> Vec<Category> {
    let wanted: Vec<Name> = path.split('>').map(Name::new).collect();
    // The longest prefix that exists.
    let mut at: Option<Category> = None;
    let mut matched = 0;
    while let Some(name) = wanted.get(matched) {
        match children_of(site, at).find(|c| name.is(c.name())) {
            Some(child) => {
                at = Some(child);
                matched += 1;
            }
            None => break,
        }
    }
    if matched == wanted.len() {
        // Every name exists, spelt in another case.
        return at.into_iter().collect();
    }

    // The next name among the children of the deepest match, each followed down as far as the
    // rest of the path leads.
    let mut found: Vec<(usize, usize, Category)> = children_of(site, at)
        .filter_map(|child| {
            let score = wanted[matched].closeness(&Name::new(child.name()))?;
            let (end, unresolved) = follow(child, &wanted[matched + 1..]);
            Some((score, unresolved, end))
        })
        .collect();
    if !found.is_empty() {
        found.sort_by_key(|&(score, unresolved, c)| (score, unresolved, !c.is_leaf(), c.id()));
        let mut seen = BTreeSet::new();
        return found
            .into_iter()
            .map(|(_, _, c)| c)
            .filter(|c| seen.insert(c.id()))
            .collect();
    }

    // Categories anywhere with the same last name (or, failing that, a close one); those below
    // the deepest match first.
    let last = wanted.last().unwrap_or(&wanted[matched]);
    let mut found: Vec<(bool, usize, bool, u32, Category)> = index(site)
        .named_like(last)
        .into_iter()
        .map(|(score, c)| (!descends_from(c, at), score, !c.is_leaf(), c.id(), c))
        .collect();
    found.sort_by_key(|&(below, score, not_leaf, id, _)| (below, score, not_leaf, id));
    let elsewhere: Vec<Category> = found.into_iter().map(|(.., c)| c).collect();

    // A near miss ("Graphics Cards" for "Graphics/Video Cards"): no name is close enough, but
    // leaves under the deepest match share its words. They come before categories named
    // alike elsewhere in the tree, unless one of those is below the deepest match.
    match at {
        Some(at)
            if !elsewhere
                .first()
                .is_some_and(|&c| descends_from(c, Some(at))) =>
        {
            let mut leaves = leaves_sharing_words(at, last);
            let mut seen: BTreeSet<u32> = leaves.iter().map(|c| c.id()).collect();
            leaves.extend(elsewhere.into_iter().filter(|c| seen.insert(c.id())));
            leaves
        }
        _ => elsewhere,
    }
}

/// The leaves under `at` whose names share at least half of `wanted`'s words (case ignored,
/// names cut at anything but letters and digits, so "Graphics/Video Cards" has the words
/// graphics, video and cards; a word matches another with a plural ending or a typo): most
/// shared words first, then fewest words of their own besides, then by id. Only the leaves of
/// the deepest category the path matched are read, and only when nothing closer was found.
fn leaves_sharing_words(at: Category, wanted: &Name) -> Vec<Category> {
    let mine = significant_words(&wanted.text);
    if mine.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<(std::cmp::Reverse<usize>, usize, u32, Category)> = at
        .leaves()
        .filter_map(|leaf| {
            let name = Name::new(leaf.name());
            let theirs = significant_words(&name.text);
            let shared = mine
                .iter()
                .filter(|w| theirs.iter().any(|t| same_word(w, t)))
                .count();
            (shared > 0 && shared * 2 >= mine.len()).then(|| {
                let own = theirs.len().saturating_sub(shared);
                (std::cmp::Reverse(shared), own, leaf.id(), leaf.category())
            })
        })
        .collect();
    found.sort_by_key(|&(shared, own, id, _)| (shared, own, id));
    found.into_iter().map(|(.., c)| c).collect()
}

/// The words of a lower-cased name that say something: cut at anything but letters and
/// digits, without one-letter words and the joining words of the marketplaces' languages.
fn significant_words(text: &str) -> Vec<&str> {
    const JOINING: [&str; 12] = [
        "and", "the", "for", "with", "und", "mit", "für", "et", "de", "des", "les", "per",
    ];
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1 && !JOINING.contains(w))
        .collect()
}

/// Whether two lower-cased words are the same word: equal, one the other with a plural or
/// inflected ending of up to two letters ("card", "cards"; "karte", "karten"), or a typo
/// apart (one edit per four letters of the shorter, words of five letters or more: "hard" is
/// not "card").
fn same_word(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let shorter = short.chars().count();
    if shorter >= 3 && long.starts_with(short) && long.chars().count() - shorter <= 2 {
        return true;
    }
    shorter >= 5 && strsim::osa_distance(a, b) <= shorter / 4
}

/// Follows `rest` down from `at`, each name to its exact or closest child; returns where it
/// stopped and how many names were left.
fn follow(mut at: Category, rest: &[Name]) -> (Category, usize) {
    for (i, name) in rest.iter().enumerate() {
        let best = at
            .children()
            .filter_map(|c| Some((name.closeness(&Name::new(c.name()))?, c.id(), c)))
            .min_by_key(|&(score, id, _)| (score, id));
        match best {
            Some((.., child)) => at = child,
            None => return (at, rest.len() - i),
        }
    }
    (at, 0)
}

fn children_of(site: Site, parent: Option<Category>) -> taxonomy_data::Children {
    match parent {
        Some(c) => c.children(),
        None => site.top_level(),
    }
}

fn descends_from(category: Category, ancestor: Option<Category>) -> bool {
    let Some(ancestor) = ancestor else {
        return true;
    };
    let mut at = Some(category);
    while let Some(c) = at {
        if c == ancestor {
            return true;
        }
        at = c.parent();
    }
    false
}

/// A cheap summary of a name for ruling out candidates before computing an edit distance:
/// its length as compared (lower case, single spaces), which of 32 buckets its characters
/// fall in, and how many in each. Characters are taken by their first UTF-8 byte, ASCII
/// letters lower-cased (the first byte of a Latin letter is the same in both cases), white
/// space skipped. One edit (insertion, deletion, substitution, swap) changes the length by at
/// most one, the buckets present by at most two and the histograms' L1 distance by at most
/// two, so each gives a lower bound of the edit distance, from the cheapest up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    chars: u16,
    present: u32,
    histogram: [u8; 32],
}

impl Key {
    fn of(raw: &str) -> Key {
        let mut key = Key {
            chars: 0,
            present: 0,
            histogram: [0; 32],
        };
        let mut in_word = false;
        for &b in raw.as_bytes() {
            if b.is_ascii_whitespace() {
                in_word = false;
                continue;
            }
            if !in_word && key.chars > 0 {
                key.chars = key.chars.saturating_add(1); // the single space before this word
            }
            in_word = true;
            // UTF-8 continuation bytes belong to the character already counted.
            if b & 0xC0 == 0x80 {
                continue;
            }
            let bucket = usize::from(b.to_ascii_lowercase() & 31);
            key.histogram[bucket] = key.histogram[bucket].saturating_add(1);
            key.present |= 1 << bucket;
            key.chars = key.chars.saturating_add(1);
        }
        key
    }

    /// Whether the names of `self` and `other` may be at most `limit` edits apart (`false`
    /// means they certainly are not).
    fn within(&self, other: &Key, limit: usize) -> bool {
        if usize::from(self.chars.abs_diff(other.chars)) > limit {
            return false;
        }
        if ((self.present ^ other.present).count_ones() as usize).div_ceil(2) > limit {
            return false;
        }
        let mut l1 = 0usize;
        for (a, b) in self.histogram.iter().zip(&other.histogram) {
            l1 += usize::from(a.abs_diff(*b));
        }
        l1.div_ceil(2) <= limit
    }
}

/// A name as compared: lower case, single spaces, with its length and [`Key`].
#[derive(Debug)]
struct Name {
    text: String,
    chars: usize,
    key: Key,
}

impl Name {
    fn new(raw: &str) -> Name {
        let mut text = String::with_capacity(raw.len());
        for word in raw.split_whitespace() {
            if !text.is_empty() {
                text.push(' ');
            }
            if word.is_ascii() {
                text.extend(word.bytes().map(|b| char::from(b.to_ascii_lowercase())));
            } else {
                text.extend(word.chars().flat_map(char::to_lowercase));
            }
        }
        Name {
            chars: text.chars().count(),
            text,
            key: Key::of(raw),
        }
    }

    /// Whether `raw` is this name, ignoring case and runs of white space.
    fn is(&self, raw: &str) -> bool {
        let mut mine = self.text.split(' ');
        let mut theirs = raw.split_whitespace();
        loop {
            match (mine.next(), theirs.next()) {
                (None, None) => return true,
                (Some(a), Some(b))
                    if a == b || a.chars().eq(b.chars().flat_map(char::to_lowercase)) => {}
                _ => return false,
            }
        }
    }

    /// How many edits a typo may have: one per four characters of the shorter name, at least
    /// one.
    fn budget(&self, other: &Name) -> usize {
        (self.chars.min(other.chars) / 4).max(1)
    }

    /// The edit distance (optimal string alignment) to `other`, when within the budget.
    fn typo_distance(&self, other: &Name) -> Option<usize> {
        if self.text == other.text {
            return Some(0);
        }
        let budget = self.budget(other);
        if !self.key.within(&other.key, budget) {
            return None;
        }
        let distance = strsim::osa_distance(&self.text, &other.text);
        (distance <= budget).then_some(distance)
    }

    /// How close `other` is to this name (lower is closer), or `None` when it is not close: a
    /// typo within the budget, or every word of one name among the other's words ("Action
    /// Figures" and "Action Figures & Accessories"), ranked after the typos.
    fn closeness(&self, other: &Name) -> Option<usize> {
        if let Some(distance) = self.typo_distance(other) {
            return Some(distance);
        }
        let mine: Vec<&str> = self.text.split(' ').collect();
        let theirs: Vec<&str> = other.text.split(' ').collect();
        let (short, long) = if mine.len() <= theirs.len() {
            (mine, theirs)
        } else {
            (theirs, mine)
        };
        let contained =
            short.iter().any(|w| w.chars().count() >= 3) && short.iter().all(|w| long.contains(w));
        contained.then(|| self.budget(other) + 1 + (long.len() - short.len()))
    }
}

/// The [`Key`] of every category of a site, built once per process: a few milliseconds
/// without optimisation, no string copied.
struct SiteIndex {
    keys: Vec<(Key, Category)>,
}

impl SiteIndex {
    fn build(site: Site) -> SiteIndex {
        SiteIndex {
            keys: site.categories().map(|c| (Key::of(c.name()), c)).collect(),
        }
    }

    /// The categories named `wanted`, or when there are none, those with a name a typo away,
    /// with the distance.
    fn named_like(&self, wanted: &Name) -> Vec<(usize, Category)> {
        let mut same = Vec::new();
        let mut close = Vec::new();
        for (key, category) in &self.keys {
            // The budget of the shorter name (`Name::budget`), from the key alone.
            let limit = (usize::from(key.chars).min(wanted.chars) / 4).max(1);
            if !wanted.key.within(key, limit) {
                continue;
            }
            if *key == wanted.key && wanted.is(category.name()) {
                same.push((0, *category));
            } else if same.is_empty()
                && let Some(distance) = wanted.typo_distance(&Name::new(category.name()))
            {
                close.push((distance, *category));
            }
        }
        if same.is_empty() { close } else { same }
    }
}
fn index(site: Site) -> &'static SiteIndex {
    const SITES: usize = Site::ALL.len();
    static INDEXES: [OnceLock<SiteIndex>; SITES] = [const { OnceLock::new() }; SITES];
    // `Site::ALL` lists every variant once, so the position is the index.
    let slot = Site::ALL
        .iter()
        .position(|&s| s == site)
        .map_or(&INDEXES[0], |i| &INDEXES[i]);
    slot.get_or_init(|| SiteIndex::build(site))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(categories: &[Category]) -> Vec<u32> {
        categories.iter().map(|c| c.id()).collect()
    }

    #[test]
    fn close_ids_are_one_edit_away_leaves_first() {
        // 93555: delete a 5 -> 9355 (leaf); replace the 9 -> 13555 (leaf).
        assert_eq!(ids(&close_ids(Site::Us, 93555)), [9355, 13555]);
        // A swap of two digits: 9535 -> 9355.
        assert!(ids(&close_ids(Site::Us, 9535)).contains(&9355));
        // An insertion: 935 -> 9355.
        assert!(ids(&close_ids(Site::Us, 935)).contains(&9355));
        // Every suggestion exists and is one edit away.
        for c in close_ids(Site::Us, 15033) {
            assert_eq!(strsim::damerau_levenshtein("15033", &c.id().to_string()), 1);
        }
    }

    #[test]
    fn close_ids_match_a_full_scan() {
        for id in [93555, 157119, 1, 12, 99999, 261_999] {
            for site in [Site::Us, Site::Au] {
                let wanted = id.to_string();
                let mut scan: Vec<(bool, u32)> = site
                    .categories()
                    .filter(|c| strsim::damerau_levenshtein(&wanted, &c.id().to_string()) == 1)
                    .map(|c| (!c.is_leaf(), c.id()))
                    .collect();
                scan.sort();
                let fast: Vec<(bool, u32)> = close_ids(site, id)
                    .iter()
                    .map(|c| (!c.is_leaf(), c.id()))
                    .collect();
                assert_eq!(fast, scan, "{site} {id}");
            }
        }
    }

    #[test]
    fn a_typo_in_the_last_name_is_found_among_the_siblings() {
        let s = path_suggestions(
            Site::Us,
            "Cell Phones & Accessories > Cell Phone & Smartphones",
        );
        assert_eq!(ids(&s), [9355, 43304]);
    }

    #[test]
    fn a_shortened_name_is_completed_and_followed_down() {
        // "Action Figures" is the start of "Action Figures & Accessories"; there is no
        // "Fantasy Figure" below it, so the walk stops there.
        let s = path_suggestions(Site::Us, "Toys & Hobbies > Action Figures > Fantasy Figure");
        assert_eq!(ids(&s)[0], 246);
        let s = path_suggestions(Site::Us, "Toys & Hobbies > Action Figures > Action Figure");
        assert_eq!(ids(&s)[0], 261068);
    }

    #[test]
    fn a_typo_high_up_is_followed_by_the_rest_of_the_path() {
        let s = path_suggestions(
            Site::Us,
            "Cellphones & Accesories > Cell Phones & Smartphones",
        );
        assert_eq!(ids(&s)[0], 9355);
        let s = path_suggestions(Site::Us, "Collectibles > Advertsing > Soda > Fountain");
        assert_eq!(ids(&s)[0], 852);
    }

    #[test]
    fn case_and_white_space_do_not_matter() {
        let s = path_suggestions(
            Site::Us,
            "cell phones &  ACCESSORIES>cell phones & smartphones",
        );
        assert_eq!(ids(&s), [9355]);
        let s = path_suggestions(Site::De, "handys & kommunikation > handys & smartphones");
        assert_eq!(ids(&s), [9355]);
    }

    #[test]
    fn a_leaf_name_alone_gives_the_categories_of_that_name() {
        let s = path_suggestions(Site::Us, "Cell Phones & Smartphones");
        assert_eq!(ids(&s), [9355]);
        // With a typo, still found (anywhere in the tree).
        let s = path_suggestions(Site::Us, "Cell Phones & Smartphons");
        assert_eq!(ids(&s)[0], 9355);
    }

    #[test]
    fn a_missing_level_is_found_by_the_last_name_below_the_deepest_match() {
        let s = path_suggestions(
            Site::Us,
            "Cell Phones & Accessories > Cases, Covers & Skins",
        );
        assert_eq!(ids(&s)[0], 20349);
        assert!(s[0].path().to_string().contains("Cell Phone Accessories"));
    }

    #[test]
    fn a_near_miss_leaf_is_found_among_the_leaves_under_the_deepest_match() {
        // The leaf is "Graphics/Video Cards" (27386): neither a typo of "Graphics Cards" nor
        // does it hold each of its words, yet it is the leaf meant.
        let s = path_suggestions(
            Site::Gb,
            "Computers/Tablets & Networking > Computer Components & Parts > Graphics Cards",
        );
        assert_eq!(ids(&s).first(), Some(&27386), "{:?}", ids(&s));
        // One level too high: the leaves below the deepest match, not only its children.
        let s = path_suggestions(Site::Gb, "Computers/Tablets & Networking > Graphics Cards");
        assert_eq!(ids(&s).first(), Some(&27386), "{:?}", ids(&s));
    }

    #[test]
    fn nothing_close_gives_nothing() {
        assert!(path_suggestions(Site::Us, "Qwxz > Zzyzx Plorp").is_empty());
        assert!(path_suggestions(Site::Us, "Cell Phones & Accessories > Qwxzv").is_empty());
    }

    #[test]
    fn names_compare_by_words_and_case() {
        let name = Name::new("  Cell   Phones & SMARTPHONES ");
        assert_eq!(name.text, "cell phones & smartphones");
        assert!(name.is("Cell Phones &  Smartphones"));
        assert!(!name.is("Cell Phones & Smartphone"));
        assert!(Name::new("Handys & Kommunikation").is("HANDYS & kommunikation"));
        assert_eq!(
            name.typo_distance(&Name::new("Cell Phone & Smartphones")),
            Some(1)
        );
        assert_eq!(name.typo_distance(&Name::new("Video Games")), None);
        let short = Name::new("Action Figures");
        assert!(
            short
                .closeness(&Name::new("Action Figures & Accessories"))
                .is_some()
        );
        assert!(short.closeness(&Name::new("Fantasy")).is_none());
    }

    #[test]
    fn the_index_holds_every_category_once() {
        let index = index(Site::Au);
        assert_eq!(index.keys.len(), Site::Au.category_count());
        let ids: BTreeSet<u32> = index.keys.iter().map(|(_, c)| c.id()).collect();
        assert_eq!(ids.len(), Site::Au.category_count());
    }

    #[test]
    fn keys_bound_the_edit_distance_from_below() {
        let names = [
            "Cell Phones & Smartphones",
            "cell  phone & SMARTPHONES",
            "Handys & Kommunikation",
            "HANDYS & KOMMUNIKATIÖN",
            "Smartwatch-Zubehör",
            "Action Figures & Accessories",
            "",
        ];
        for a in names {
            for b in names {
                let (a, b) = (Name::new(a), Name::new(b));
                let distance = strsim::osa_distance(&a.text, &b.text);
                assert!(a.key.within(&b.key, distance), "{a:?} {b:?}");
                assert_eq!(usize::from(a.key.chars), a.text.chars().count(), "{a:?}");
            }
        }
        // Case and white space do not change the key.
        assert_eq!(Key::of("Smartwatch-Zubehör"), Key::of("SMARTWATCH-ZUBEHÖR"));
        assert_eq!(Key::of("A  b"), Key::of("a b"));
    }
}
