//! A perfect hash for category ids (and for the texts of pinned aspects): a pilot
//! (displacement) table over a 64-bit integer mixer.
//!
//! phf's SipHash costs more per lookup than std's `HashMap`; category ids are small integers
//! that need no cryptographic mixing. Each key is mixed with a seed (two multiply-xorshift
//! rounds); the top bits of the hash pick a bucket, and each bucket has a 16-bit pilot,
//! chosen at build time, that is XORed into the key's slot bits so that all its keys land in
//! free slots of a power-of-two table (the search places the largest buckets first, as
//! PTHash does). A slot stores the key and its position, so a lookup is the mixer, two loads
//! and one comparison, all in a `const fn`.
//!
//! Building succeeds for every set of distinct ids below `u32::MAX`: the mixer makes which
//! keys collide a matter of the hash seed, not of the ids, so a seed fails only by chance (two
//! keys of one bucket on the same slot bits, which no pilot can separate; about one seed in
//! two for large sets) and the search tries the next one, growing the table after every
//! [`SEEDS_PER_SIZE`] seeds. Failure is still a typed error, never a panic.
//!
//! Texts ([`PerfectHash::build_texts`]) take the same search over a seeded hash of their bytes
//! (`taxonomy_hash::text_hash`), so it succeeds for every set of distinct texts; a slot holds
//! 32 bits of the text's hash (a tag) and its position, and the lookup compares the text.
//!
//! The hash functions live in the `taxonomy-hash` crate, which both this generator and the
//! run-time lookups depend on, so the two cannot disagree.

pub use taxonomy_hash::{bucket_of, entry_position, key_hash, slot_entry, slot_of};
use taxonomy_hash::{text_hash, text_tag};

/// The seed the search starts from; fixed, so the same keys always give the same tables.
pub const INITIAL_SEED: u64 = 0x7A11_0C47_E6A1_D5E9;

/// How many seeds are tried at one table size before the table doubles.
pub const SEEDS_PER_SIZE: u64 = 64;

/// How many table sizes are tried (each twice the previous).
const TABLE_GROWTHS: u32 = 4;

/// A perfect hash over a set of distinct non-zero `u32` keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfectHash {
    /// The seed mixed into every key hash.
    pub seed: u64,
    /// 64 minus log2 of the number of buckets.
    pub bucket_shift: u32,
    /// One pilot per bucket.
    pub pilots: Vec<u16>,
    /// The slots (a power of two of them): [`slot_entry`]`(key, position)`, or 0 when empty.
    pub slots: Vec<u64>,
}

/// Why no perfect hash could be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PerfectHashError {
    /// The same key was given twice.
    #[error("key {0} appears twice")]
    DuplicateKey(u32),
    /// `u32::MAX` cannot be stored (slots hold the key plus one).
    #[error("key {} cannot be stored", u32::MAX)]
    KeyTooLarge,
    /// No seed worked (for distinct keys, a run of improbable failures: each seed fails by
    /// chance, independently).
    #[error("no perfect hash found for {0} keys")]
    NotFound(usize),
    /// The same text was given twice ([`PerfectHash::build_texts`]).
    #[error("text {0:?} appears twice")]
    DuplicateText(String),
    /// A pinned category's rules cannot be compiled in (an answer without a name, more
    /// aspects than a pinned category holds): what is wrong, naming the category and what
    /// to do.
    #[error("pinned aspects: {0}")]
    Pinned(String),
}

impl PerfectHash {
    /// Builds the tables for `(key, position)` pairs: keys distinct and below `u32::MAX`.
    ///
    /// ```
    /// use taxonomy_codegen::phash::PerfectHash;
    /// let entries = [(9355_u32, 1_u32), (15032, 2), (1, 3), (463_773, 4)];
    /// let ph = PerfectHash::build(&entries).unwrap();
    /// for (key, position) in entries {
    ///     assert_eq!(ph.get(key), Some(position));
    /// }
    /// assert_eq!(ph.get(42), None);
    /// ```
    pub fn build(entries: &[(u32, u32)]) -> Result<PerfectHash, PerfectHashError> {
        let mut keys: Vec<u32> = entries.iter().map(|e| e.0).collect();
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(PerfectHashError::DuplicateKey(w[0]));
        }
        if keys.last() == Some(&u32::MAX) {
            return Err(PerfectHashError::KeyTooLarge);
        }
        search(
            entries.len(),
            |i, seed| key_hash(entries[i].0, seed),
            |i, _| slot_entry(entries[i].0, entries[i].1),
        )
    }

    /// Builds the tables for `(text, position)` pairs, texts distinct (any texts: the search
    /// is over a seeded hash of their bytes, [`text_hash`]). A slot holds
    /// [`slot_entry`]`(`[`text_tag`]`(hash), position)`; a lookup computes the text's hash
    /// with the table's seed, finds its slot as for an id, checks the tag, then compares the
    /// text at the position.
    ///
    /// ```
    /// use taxonomy_codegen::phash::{PerfectHash, bucket_of, entry_position, slot_of};
    /// use taxonomy_hash::{text_hash, text_tag};
    /// // FNV-1a's 32-bit key of these two was the same: a table could not hold both.
    /// let texts = ["brand 539599", "brand 722382", "model"];
    /// let entries: Vec<(&str, u32)> = texts.iter().zip(0..).map(|(t, i)| (*t, i)).collect();
    /// let ph = PerfectHash::build_texts(&entries).unwrap();
    /// let find = |text: &str| {
    ///     let h = text_hash(text, ph.seed);
    ///     let pilot = ph.pilots[bucket_of(h, ph.bucket_shift, ph.pilots.len())];
    ///     let position = entry_position(ph.slots[slot_of(h, pilot, ph.slots.len())], text_tag(h))?;
    ///     (texts[position as usize] == text).then_some(position)
    /// };
    /// assert_eq!((find("brand 539599"), find("brand 722382")), (Some(0), Some(1)));
    /// assert_eq!(find("brand"), None);
    /// ```
    pub fn build_texts(entries: &[(&str, u32)]) -> Result<PerfectHash, PerfectHashError> {
        let mut texts: Vec<&str> = entries.iter().map(|e| e.0).collect();
        texts.sort_unstable();
        if let Some(w) = texts.windows(2).find(|w| w[0] == w[1]) {
            return Err(PerfectHashError::DuplicateText(w[0].to_owned()));
        }
        search(
            entries.len(),
            |i, seed| text_hash(entries[i].0, seed),
            |i, hash| slot_entry(text_tag(hash), entries[i].1),
        )
    }

    /// The position stored for `key`, or `None` when `key` is not in the set.
    pub fn get(&self, key: u32) -> Option<u32> {
        let h = key_hash(key, self.seed);
        let pilot = self.pilots[bucket_of(h, self.bucket_shift, self.pilots.len())];
        entry_position(self.slots[slot_of(h, pilot, self.slots.len())], key)
    }
}

/// The search: seeds from [`INITIAL_SEED`], [`SEEDS_PER_SIZE`] at each table size, until one
/// places every one of `n` keys; `hash(i, seed)` is key `i`'s hash, `entry(i, hash)` its
/// slot's content.
fn search(
    n: usize,
    hash: impl Fn(usize, u64) -> u64,
    entry: impl Fn(usize, u64) -> u64,
) -> Result<PerfectHash, PerfectHashError> {
    let size = n.max(1);
    // About two keys per bucket, and slots at a load factor of at most 8/9.
    let bucket_bits = size.div_ceil(2).next_power_of_two().trailing_zeros().max(1);
    let first_slot_bits = (size + size / 8)
        .next_power_of_two()
        .trailing_zeros()
        .max(1);
    let mut attempt = 0_u64;
    for slot_bits in first_slot_bits..first_slot_bits + TABLE_GROWTHS {
        for _ in 0..SEEDS_PER_SIZE {
            let seed = INITIAL_SEED.wrapping_add(attempt.wrapping_mul(0xD1B5_4A32_D192_ED03));
            attempt += 1;
            let hashes: Vec<u64> = (0..n).map(|i| hash(i, seed)).collect();
            if let Some(ph) = try_seed(&hashes, &entry, seed, bucket_bits, slot_bits) {
                return Ok(ph);
            }
        }
    }
    Err(PerfectHashError::NotFound(n))
}

/// One seed of the [`search`]: the pilots and slots if it places every key.
fn try_seed(
    hashes: &[u64],
    entry: impl Fn(usize, u64) -> u64,
    seed: u64,
    bucket_bits: u32,
    slot_bits: u32,
) -> Option<PerfectHash> {
    let bucket_shift = 64 - bucket_bits;
    let slot_count = 1_usize << slot_bits;
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); 1 << bucket_bits];
    for (i, &h) in hashes.iter().enumerate() {
        members[bucket_of(h, bucket_shift, 1 << bucket_bits)].push(i);
    }
    let mut order: Vec<usize> = (0..members.len()).collect();
    // Largest buckets first; ties by bucket number, so the result is deterministic.
    order.sort_by(|&a, &b| members[b].len().cmp(&members[a].len()).then(a.cmp(&b)));
    let mask = slot_count - 1;
    // Keys of one bucket that agree on their slot bits collide under every pilot (the
    // pilot moves them together): this seed cannot work.
    for m in members.iter().filter(|m| m.len() > 1) {
        for (j, &a) in m.iter().enumerate() {
            if m[j + 1..]
                .iter()
                .any(|&b| (hashes[a] ^ hashes[b]) as usize & mask == 0)
            {
                return None;
            }
        }
    }
    let mut pilots = vec![0_u16; members.len()];
    let mut slots = vec![0_u64; slot_count];
    let mut taken: Vec<usize> = Vec::with_capacity(16);
    for &b in &order {
        if members[b].is_empty() {
            break;
        }
        // XOR with every pilot below the table size tries every displacement once.
        let placed = (0..slot_count.min(1 << 16)).find(|&pilot| {
            taken.clear();
            members[b].iter().all(|&i| {
                let s = slot_of(hashes[i], pilot as u16, slot_count);
                if slots[s] != 0 || taken.contains(&s) {
                    return false;
                }
                taken.push(s);
                true
            })
        });
        let pilot = placed? as u16;
        for (&i, &s) in members[b].iter().zip(&taken) {
            slots[s] = entry(i, hashes[i]);
        }
        pilots[b] = pilot;
    }
    Some(PerfectHash {
        seed,
        bucket_shift,
        pilots,
        slots,
    })
}
