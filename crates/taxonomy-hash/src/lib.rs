//! The perfect-hash functions of the category-id tables, shared by the generator
//! (`taxonomy-codegen`, which builds the tables) and the lookups (`taxonomy-data`, which reads
//! them), so the two cannot disagree. Only `const fn`s over integers; `no_std`, no
//! dependencies.
//!
//! Scheme: one multiplication hashes the key; its top bits pick a bucket, and bits 20.. XORed
//! with the bucket's pilot pick a slot in a power-of-two table. The slot holds the key (plus
//! one, so that 0 means empty) and its position, so a lookup is one multiplication, two loads
//! and a comparison. Indexes are masked with the table length minus one (tables are powers of
//! two), which also lets the compiler drop the bounds checks.

#![no_std]

/// Hashes a category id with the table's seed: one multiplication.
#[inline(always)]
pub const fn key_hash(key: u32, seed: u64) -> u64 {
    (key as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The bucket of a key hash among `buckets` buckets (a power of two, `1 << (64 -
/// bucket_shift)`).
#[inline(always)]
pub const fn bucket_of(hash: u64, bucket_shift: u32, buckets: usize) -> usize {
    (hash >> bucket_shift) as usize & buckets.wrapping_sub(1)
}

/// The slot of a key hash displaced by its bucket's pilot, among `slots` slots (a power of
/// two).
#[inline(always)]
pub const fn slot_of(hash: u64, pilot: u16, slots: usize) -> usize {
    ((hash >> 20) as usize ^ pilot as usize) & slots.wrapping_sub(1)
}

/// A slot's content: the key plus one in the high half, its position in the low half; 0 is
/// an empty slot. Used by the generator.
#[inline(always)]
pub const fn slot_entry(key: u32, position: u32) -> u64 {
    ((key as u64 + 1) << 32) | position as u64
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
