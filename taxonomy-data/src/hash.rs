// The perfect-hash functions, shared word for word by the generator and the lookups:
// `marketplace-toolkit` (src/phash.rs) `include!`s this file to build the tables, and
// `taxonomy-data` compiles it as a module to read them. Keep it free of `use` items and of
// anything but `const fn`s over integers.

/// Mixes a category id with the table's seed. One multiplication and one shift.
#[inline(always)]
pub const fn key_hash(key: u32, seed: u64) -> u64 {
    let x = (key as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 29)
}

/// Maps `x` uniformly onto `0..n` without a division (Lemire's fast range reduction).
#[inline(always)]
pub const fn fast_range(x: u32, n: usize) -> usize {
    ((x as u64 * n as u64) >> 32) as usize
}

/// The bucket of a key hash, among `buckets` buckets.
#[inline(always)]
pub const fn bucket_of(hash: u64, buckets: usize) -> usize {
    fast_range((hash >> 32) as u32, buckets)
}

/// The slot of a key hash displaced by its bucket's pilot, among `slots` slots.
#[inline(always)]
pub const fn slot_of(hash: u64, pilot: u16, slots: usize) -> usize {
    let y = (hash ^ (pilot as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    fast_range((y >> 32) as u32, slots)
}
