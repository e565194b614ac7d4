//! # taxonomy-codegen
//!
//! The generator behind `taxonomy-data`, as a plain library (the way chrono-tz-build is) so
//! that it is tested like any code and the build script is three lines:
//!
//! - [`build_script`]: what `taxonomy-data`'s build script does: pick the sites, obtain each
//!   tree (the committed snapshots, or with the `live` feature the service's trees, cached in
//!   the target directory), generate, tell cargo when to run again;
//! - [`codegen`]: trees to the Rust source of the tables (deterministic);
//! - [`phash`]: the perfect-hash builder over the functions of `taxonomy-hash`.
//!
//! Without `live` it compiles no HTTP, TLS or command-line crate.

pub mod build_script;
pub mod codegen;
pub mod phash;
