//! A perfect hash for category ids: a pilot (displacement) table over a cheap integer hash.
//!
//! phf's SipHash costs more per lookup than std's `HashMap`; category ids are small integers
//! that need no cryptographic mixing. Each key hashes (one multiply) to a bucket; each bucket
//! has a 16-bit pilot chosen at build time so that all its keys land in free slots
//! (PTHash-style search, largest buckets first). A lookup is two multiplies, two table reads
//! and one comparison against the stored id, all in a `const fn`.
//!
//! The hash functions live in `taxonomy-data/src/hash.rs`, which both this generator and the
//! run-time lookups compile, so the two can never disagree.

#[allow(missing_docs, dead_code)]
mod functions {
    include!("../taxonomy-data/src/hash.rs");
}
pub use functions::{bucket_of, fast_range, key_hash, slot_of};

/// Marks an empty slot.
pub const EMPTY: u32 = u32::MAX;

/// The seed the search starts from; fixed, so the same keys always give the same tables.
pub const INITIAL_SEED: u64 = 0x7A11_0C47_E6A1_D5E9;

/// Average number of keys per bucket.
const KEYS_PER_BUCKET: usize = 4;

/// A perfect hash over a set of `u32` keys, mapping each to its position in the key list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfectHash {
    /// The seed mixed into every key hash.
    pub seed: u64,
    /// One pilot per bucket.
    pub pilots: Vec<u16>,
    /// For each slot, the position of its key in the key list, or [`EMPTY`].
    pub slots: Vec<u32>,
}

/// Why no perfect hash could be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PerfectHashError {
    /// The same key was given twice.
    #[error("key {0} appears twice")]
    DuplicateKey(u32),
    /// No seed worked (practically impossible for distinct keys).
    #[error("no perfect hash found for {0} keys")]
    NotFound(usize),
}

impl PerfectHash {
    /// Builds the tables for `keys`; `value_of(i)` is what slot lookups of `keys[i]` return.
    ///
    /// ```
    /// use marketplace_toolkit::phash::PerfectHash;
    /// let keys = [9355_u32, 15032, 1, 463773];
    /// let ph = PerfectHash::build(&keys).unwrap();
    /// for (i, &k) in keys.iter().enumerate() {
    ///     assert_eq!(ph.get(k), Some(i as u32));
    /// }
    /// ```
    pub fn build(keys: &[u32]) -> Result<PerfectHash, PerfectHashError> {
        let mut sorted = keys.to_vec();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(PerfectHashError::DuplicateKey(w[0]));
        }
        if keys.is_empty() {
            return Ok(PerfectHash {
                seed: INITIAL_SEED,
                pilots: vec![0],
                slots: vec![EMPTY],
            });
        }
        let buckets = keys.len().div_ceil(KEYS_PER_BUCKET);
        // Load factor about 0.9: a little space buys a much faster search.
        let slot_count = keys.len() + keys.len() / 9 + 1;
        for attempt in 0..64_u64 {
            let seed = INITIAL_SEED.wrapping_add(attempt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            if let Some(ph) = Self::try_seed(keys, seed, buckets, slot_count) {
                return Ok(ph);
            }
        }
        Err(PerfectHashError::NotFound(keys.len()))
    }

    fn try_seed(keys: &[u32], seed: u64, buckets: usize, slot_count: usize) -> Option<PerfectHash> {
        let hashes: Vec<u64> = keys.iter().map(|&k| key_hash(k, seed)).collect();
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); buckets];
        for (i, &h) in hashes.iter().enumerate() {
            members[bucket_of(h, buckets)].push(i as u32);
        }
        let mut order: Vec<usize> = (0..buckets).collect();
        // Largest buckets first; ties by bucket number, so the result is deterministic.
        order.sort_by(|&a, &b| members[b].len().cmp(&members[a].len()).then(a.cmp(&b)));
        let mut pilots = vec![0_u16; buckets];
        let mut slots = vec![EMPTY; slot_count];
        let mut taken: Vec<usize> = Vec::with_capacity(16);
        for &b in &order {
            if members[b].is_empty() {
                break;
            }
            let mut placed = false;
            for pilot in 0..=u16::MAX {
                taken.clear();
                let fits = members[b].iter().all(|&i| {
                    let s = slot_of(hashes[i as usize], pilot, slot_count);
                    if slots[s] != EMPTY || taken.contains(&s) {
                        return false;
                    }
                    taken.push(s);
                    true
                });
                if fits {
                    for (&i, &s) in members[b].iter().zip(&taken) {
                        slots[s] = i;
                    }
                    pilots[b] = pilot;
                    placed = true;
                    break;
                }
            }
            if !placed {
                return None;
            }
        }
        Some(PerfectHash {
            seed,
            pilots,
            slots,
        })
    }

    /// The value stored for `key`'s slot, or `None` for an empty slot. Callers must compare
    /// the key at that position: a key outside the set lands on some slot too.
    pub fn get(&self, key: u32) -> Option<u32> {
        let h = key_hash(key, self.seed);
        let pilot = self.pilots[bucket_of(h, self.pilots.len())];
        let v = self.slots[slot_of(h, pilot, self.slots.len())];
        (v != EMPTY).then_some(v)
    }
}
