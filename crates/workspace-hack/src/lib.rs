//! Empty: this crate only turns on third-party crates' features (its Cargo.toml says which
//! and why), so that the repository's commands and example server build with the
//! dependencies the workspace's test build already compiled.
#![no_std]
