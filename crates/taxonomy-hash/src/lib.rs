//! The perfect-hash functions of the category-id tables, shared by the generator
//! (`taxonomy-codegen`, which builds the tables) and the lookups (`taxonomy-data`, which reads
//! them), so the two cannot disagree. Only `const fn`s over integers; `no_std`, no
//! dependencies. The [`words`] module is the other thing the two share: how a category name
//! or a search query is cut into folded words, and a word's hash, for the keyword index.
//!
//! Scheme: a 64-bit mixer (two multiply-xorshift rounds) hashes the key with the table's
//! seed; the top bits of the hash pick a bucket, and the low bits XORed with the bucket's
//! pilot pick a slot in a power-of-two table. The slot holds the key (plus one, so that 0
//! means empty) and its position, so a lookup is the mixer, two loads and a comparison.
//! Indexes are masked with the table length minus one (tables are powers of two), which also
//! lets the compiler drop the bounds checks.
//!
//! Why a full mixer: with one multiplication, bit i of the hash depends only on bits 0..=i of
//! the key, so ids that agree in their low bits (1, 1 + 2^22, 1 + 2^23) got the same slot
//! bits for every seed and no pilot could separate them. The mixer is a bijection of
//! `key ^ seed` whose every output bit depends on every input bit, so which keys share a
//! bucket or a slot changes with the hash seed, whatever the ids.
//!
//! # Quick start
//!
//! A lookup in a table of one key (the generator, `taxonomy-codegen`, finds the hash seed, the
//! bucket shift and the pilots that give every key a slot of its own):
//!
//! ```
//! use taxonomy_hash::{bucket_of, entry_position, key_hash, slot_entry, slot_of};
//!
//! let (seed, bucket_shift, pilots) = (7_u64, 63_u32, [0_u16; 2]);
//! let mut slots = [0_u64; 4];
//! let hash = key_hash(9355, seed);
//! let slot = slot_of(hash, pilots[bucket_of(hash, bucket_shift, pilots.len())], slots.len());
//! slots[slot] = slot_entry(9355, 17); // category 9355 is at position 17
//!
//! // What taxonomy-data's lookup does: the mixer, two loads and a comparison.
//! let lookup = |key: u32| {
//!     let hash = key_hash(key, seed);
//!     let pilot = pilots[bucket_of(hash, bucket_shift, pilots.len())];
//!     entry_position(slots[slot_of(hash, pilot, slots.len())], key)
//! };
//! assert_eq!(lookup(9355), Some(17));
//! assert_eq!(lookup(9356), None);
//! ```

#![no_std]

pub mod words;

/// The multiplier of both mixing rounds (from the "moremur" variant of SplitMix64's finaliser).
const MIX: u64 = 0x3C79_AC49_2BA7_B653;

/// Hashes a category id with the table's seed: two multiply-xorshift rounds over 64 bits.
#[inline(always)]
pub const fn key_hash(key: u32, seed: u64) -> u64 {
    key_hash_u64(key as u64 ^ seed)
}

/// The bucket of a key hash among `buckets` buckets (a power of two, `1 << (64 -
/// bucket_shift)`): the hash's top bits.
#[inline(always)]
pub const fn bucket_of(hash: u64, bucket_shift: u32, buckets: usize) -> usize {
    (hash >> bucket_shift) as usize & buckets.wrapping_sub(1)
}

/// The slot of a key hash displaced by its bucket's pilot, among `slots` slots (a power of
/// two): the hash's low bits XOR the pilot.
#[inline(always)]
pub const fn slot_of(hash: u64, pilot: u16, slots: usize) -> usize {
    (hash as usize ^ pilot as usize) & slots.wrapping_sub(1)
}

/// A slot's content: the key plus one in the high half, its position in the low half; 0 is
/// an empty slot. Used by the generator.
#[inline(always)]
pub const fn slot_entry(key: u32, position: u32) -> u64 {
    ((key as u64 + 1) << 32) | position as u64
}

/// Hashes a text with the table's seed (the compiled-in aspect names and values,
/// `taxonomy-aspects`): the table's seed and the length start the state, each 8 bytes (little-endian,
/// the last ones padded with zeros) go through a multiply-xorshift round, and the result
/// through [`key_hash`]'s mixer.
///
/// The seed is in the state before the first byte and every round mixes it in (a bijection of
/// the state, not linear in it), so whether two distinct texts' hashes meet is a matter of the
/// seed, by chance, never for good: FNV-1a's 32-bit key gave "brand 539599" and "brand 722382"
/// the same key, and no table seed could then tell them apart. For any set of distinct texts,
/// the generator's search for a seed succeeds, as it does for category ids (two texts of one
/// bucket on the same slot bits fail a seed, and the next one is tried). A lookup still
/// compares the text it finds.
///
/// ```
/// use taxonomy_hash::text_hash;
/// assert_eq!(text_hash("brand", 7), text_hash("brand", 7));
/// assert_ne!(text_hash("brand", 7), text_hash("brand", 8));
/// // FNV-1a (32 bits) gave these two the same key whatever the table's seed.
/// assert_ne!(text_hash("brand 539599", 7), text_hash("brand 722382", 7));
/// ```
#[inline]
pub const fn text_hash(text: &str, seed: u64) -> u64 {
    let bytes = text.as_bytes();
    let mut x = seed ^ (bytes.len() as u64).wrapping_mul(MIX);
    let mut i = 0;
    while i < bytes.len() {
        let mut word = 0_u64;
        let mut k = 0;
        while k < 8 && i + k < bytes.len() {
            word |= (bytes[i + k] as u64) << (8 * k);
            k += 1;
        }
        x = (x ^ word).wrapping_mul(MIX);
        x ^= x >> 29;
        i += 8;
    }
    key_hash_u64(x)
}

/// The tag a slot of a text table holds beside the text's position, from its
/// [`text_hash`]: 32 bits of the hash, never `u32::MAX` (which a slot cannot hold). A lookup
/// whose tag differs misses without comparing texts; one whose tag matches compares them.
#[inline(always)]
pub const fn text_tag(hash: u64) -> u32 {
    let tag = (hash >> 16) as u32;
    if tag == u32::MAX { tag - 1 } else { tag }
}

/// [`key_hash`]'s mixer over a whole 64-bit word (its seed already in).
#[inline(always)]
const fn key_hash_u64(mut x: u64) -> u64 {
    x ^= x >> 27;
    x = x.wrapping_mul(MIX);
    x ^= x >> 33;
    x = x.wrapping_mul(MIX);
    x ^ (x >> 27)
}

/// The position stored in `entry` when it holds `key`.
#[inline(always)]
pub const fn entry_position(entry: u64, key: u32) -> Option<u32> {
    if entry >> 32 == key as u64 + 1 {
        Some(entry as u32)
    } else {
        None
    }
}
