//! Helpers shared by the integration tests.

pub mod fleet;
pub mod pg;
