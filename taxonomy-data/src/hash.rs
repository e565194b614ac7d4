// The perfect-hash functions, shared word for word by the generator and the lookups:
// `marketplace-toolkit` (src/phash.rs) `include!`s this file to build the tables, and
// `taxonomy-data` compiles it as a module to read them. Keep it free of `use` items and of
// anything but `const fn`s over integers.
//
// Scheme: one multiplication hashes the key; its top bits pick a bucket, and bits 20.. XORed
// with the bucket's pilot pick a slot in a power-of-two table. The slot holds the key and its
// position, so a lookup is one multiplication, two loads and a comparison.

/// Hashes a category id with the table's seed: one multiplication.
#[inline(always)]
pub const fn key_hash(key: u32, seed: u64) -> u64 {
    (key as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The bucket of a key hash; `bucket_shift` is 64 minus log2 of the number of buckets.
#[inline(always)]
pub const fn bucket_of(hash: u64, bucket_shift: u32) -> usize {
    (hash >> bucket_shift) as usize
}

/// The slot of a key hash displaced by its bucket's pilot; `slot_mask` is the table size
/// (a power of two) minus one.
#[inline(always)]
pub const fn slot_of(hash: u64, pilot: u16, slot_mask: u32) -> usize {
    (((hash >> 20) as u32 ^ pilot as u32) & slot_mask) as usize
}

/// A slot's content: the key in the high half, its position in the low half; 0 is empty
/// (position 0 is the tree's root, never a key). Used by the generator.
#[allow(dead_code)]
#[inline(always)]
pub const fn slot_entry(key: u32, position: u32) -> u64 {
    ((key as u64) << 32) | position as u64
}
